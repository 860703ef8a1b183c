#!/usr/bin/env python3
"""Numbers from a MACC_TRACE file (Chrome trace JSON): where the time went.

    python3 tools/tracestat.py trace.json                 per device and kind of slice
    python3 tools/tracestat.py --by-name hold:lock t.json  one kind, per slice name
    python3 tools/tracestat.py --windows 5 [--cats task,maps,wait:lock] t.json
    python3 tools/tracestat.py --windows auto t.json      20 windows over the run
    python3 tools/tracestat.py --rate MS|auto t.json      tasks ended per window and device
    python3 tools/tracestat.py --threads t.json           each device's threads: how busy
    python3 tools/tracestat.py --per-task t.json          each device's time per task, by kind
    python3 tools/tracestat.py --end t.json               the run's end: copies after the last task
    python3 tools/tracestat.py --chains [N] t.json        the chains: their ends, a link's way

The first form prints, per device and kind (task, h2d, maps, wait:lock, ...), the number of
slices, their summed time, median, 90th percentile and maximum (in microseconds), and the
mean number at once over the run (summed time / span): "maps 12.0" means twelve helpers of
that device were acquiring maps on average. --by-name splits one kind by slice name (the
region, or for hold:lock the function that held the directory's lock). --windows MS prints
that mean number at once per window of MS milliseconds, one column per device and kind
(default kinds: task, maps, unmap, wait:lock, wait:data, wait:queue), to see a run's phases;
the kind "placed" counts the tasks placed on a device whose helper has not finished them
(from a wait:queue slice's start to a finish slice's end: its tokens' tasks, less those its
completion has not given back yet), against task and wait:queue: how many of them run and
how many wait for a helper.
--rate prints, per window, the tasks (task slices) that ended on each device in thousands
per second: the start and the end of a run against its steady state. --threads prints, per
device, how many threads recorded its slices and how busy each was (the union of its slices
over the run, waits for a worker or for readiness left out, as those are recorded for the
task, not the thread's work; so are a GPU's task slices, its kernels' time from launch to the
end seen, which the helper that completes the task records while it waited for none of it
with asynchronous tasks), busiest first: helpers idle while placed tasks wait for one
(wait:queue) are wake-ups, not a shortage of helpers. --per-task prints, per device, the
microseconds per task (a kind's summed time over the device's task slices) that its threads
spent in each part of a task's way: its run, acquiring its maps, giving them back, its
completion, and the waits inside those: for the directory's lock (maps and unmaps; its global
part, or a GPU's own part alone: "directory part" slices of wait:lock), for data
another thread is copying (maps), for the runtime's lock (completions); a helper's time per
task beyond the run is what the runtime costs it (bench/dispatch.sh prints it per number of
fake GPUs). --end prints, per device, its tasks, when its last one ended, and the copies
(h2d, d2h, p2p) still running after the run's last task ended: how many, how many MiB, and
when the last of them ended after it: a program's last wait is often its write-backs, and a
device that holds more of them than another keeps the wait going while the other idles.
--chains [N] (default 3) groups the tasks by chain (the slices of a task's way carry its
number and its chain's, the rank every link of a chain shares) and prints how many chains
there are, when the first of them ended, their ends from the first start of a chain of more
than one link (a phase's start), per device (where a chain's last link ran) its chains,
their links and its last chain's end (the chains' share of the devices: STREAM's two GPUs
with 9 and 7 of 16 chains ended 3.5 ms apart), and for the N chains that ended first the mean
microseconds per link of each part of a link's way (wait:ready, wait:queue, maps, task: the
kernels from launch to the end seen, taken: from the end seen until a thread takes the task,
unmap, finish) and "ready after": from a link's end (its unmaps) to the next link's
readiness, which the completion of the first makes. The parts and "ready after" add up to
the period per link but for the overlaps (the finish runs after the successor is ready). A chain's period per link against its kernels' time says how much
of it is the runtime's round trip (STREAM's chains: bench/RESULTS.md, forty-eighth session).
It also prints the phase those chains make: its submissions (how many, their span, the
median, how many took over 2 us), the first chain's end F, and per device the write-backs'
MiB, how long its link was busy with them from F on (the union of its d2h slices) and at
what rate, its h2d MiB and its last copy: a phase bound by its write-backs lasts F plus
that busy time (STREAM: bench/RESULTS.md, fifty-first session).
"""
import json
import sys


def load(path):
    with open(path) as f:
        trace = json.load(f)
    names = {}
    slices = []
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            slices.append(e)
    for e in slices:
        e["dev"] = names.get(e["pid"], str(e["pid"]))
    return slices


def quantile(v, q):
    return v[min(len(v) - 1, int(q * len(v)))]


def span_of(slices):
    t0 = min(e["ts"] for e in slices)
    t1 = max(e["ts"] + e["dur"] for e in slices)
    return t0, max(t1 - t0, 1e-9)


def summary(slices, key):
    _, span = span_of(slices)
    groups = {}
    for e in slices:
        groups.setdefault(key(e), []).append(e["dur"])
    print(f"span {span / 1000:.1f} ms, {len(slices)} slices")
    print(f"{'device':<10} {'kind':<12} {'name':<28} {'n':>7} {'sum ms':>9} {'med us':>9} "
          f"{'p90 us':>9} {'max us':>10} {'at once':>8}")
    for k in sorted(groups):
        v = sorted(groups[k])
        dev, cat, name = k
        print(f"{dev:<10} {cat:<12} {name[-28:]:<28} {len(v):>7} {sum(v) / 1000:>9.1f} "
              f"{quantile(v, 0.5):>9.1f} {quantile(v, 0.9):>9.1f} {v[-1]:>10.1f} {sum(v) / span:>8.2f}")


def add_span(row, s, end, w, level=1.0):
    """Adds level x the time of [s, end) to each window of row (windows of w) it covers."""
    b = int(s / w)
    while s < end and b < len(row):
        edge = (b + 1) * w
        row[b] += level * (min(end, edge) - s)
        s = edge
        b += 1


def windows(slices, ms, cats):
    t0, span = span_of(slices)
    w = ms * 1000.0
    n = int(span / w) + 1
    acc = {}
    for e in slices:
        if e["cat"] not in cats:
            continue
        row = acc.setdefault((e["dev"], e["cat"]), [0.0] * n)
        add_span(row, e["ts"] - t0, e["ts"] - t0 + e["dur"], w)
    if "placed" in cats:
        # tasks placed on a device and not yet through their helper's finish: +1 at a
        # wait:queue slice's start (the placement), -1 at a finish slice's end
        steps = {}
        for e in slices:
            if e["cat"] == "wait:queue":
                steps.setdefault(e["dev"], []).append((e["ts"] - t0, 1))
            elif e["cat"] == "finish":
                steps.setdefault(e["dev"], []).append((e["ts"] + e["dur"] - t0, -1))
        for dev, ev in steps.items():
            row = acc.setdefault((dev, "placed"), [0.0] * n)
            ev.sort()
            level, at = 0, 0.0
            for t, d in ev:
                add_span(row, at, t, w, level)
                level += d
                at = t
    keys = sorted(acc)
    short = {d: d.replace("nvidia:", "gpu") for d, _ in keys}
    print("ms     " + " ".join(f"{(short[d] + '/' + c)[:12]:>12}" for d, c in keys))
    for b in range(n):
        print(f"{b * ms:<6g} " + " ".join(f"{acc[k][b] / w:>12.2f}" for k in keys))


def rate(slices, ms):
    t0, span = span_of(slices)
    w = ms * 1000.0
    n = int(span / w) + 1
    ends = {}
    for e in slices:
        if e["cat"] == "task":
            row = ends.setdefault(e["dev"], [0] * n)
            row[min(int((e["ts"] + e["dur"] - t0) / w), n - 1)] += 1
    devs = sorted(ends)
    print("tasks ended per window, thousands per second")
    print("ms     " + " ".join(f"{d[:10]:>10}" for d in devs))
    for b in range(n):
        print(f"{b * ms:<6g} " + " ".join(f"{ends[d][b] / w * 1000.0:>10.1f}" for d in devs))


def threads(slices):
    _, span = span_of(slices)
    per = {}
    for e in slices:
        if e["cat"] in ("wait:ready", "wait:queue") or (e["cat"] == "task" and e["dev"] != "host"):
            continue
        th = e.get("args", {}).get("thread", -1)
        per.setdefault((e["dev"], th), []).append((e["ts"], e["ts"] + e["dur"]))
    busy = {}
    for (dev, th), iv in per.items():
        iv.sort()
        total, cs, ce = 0.0, None, None
        for a, b in iv:
            if ce is None or a > ce:
                if ce is not None:
                    total += ce - cs
                cs, ce = a, b
            elif b > ce:
                ce = b
        total += ce - cs
        busy.setdefault(dev, []).append(total / span)
    print(f"span {span / 1000:.1f} ms")
    print(f"{'device':<10} {'threads':>7} {'busy sum':>9}  each (busiest first)")
    for dev in sorted(busy):
        v = sorted(busy[dev], reverse=True)
        print(f"{dev:<10} {len(v):>7} {sum(v):>9.2f}  " + " ".join(f"{x:.2f}" for x in v))


PER_TASK = [("task", "task", None), ("maps", "maps", None), ("unmap", "unmap", None), ("finish", "finish", None),
            ("dir wait", "wait:lock", "directory"), ("data wait", "wait:data", None),
            ("rt wait", "wait:lock", "runtime")]


def per_task(slices):
    tasks = {}
    sums = {}
    for e in slices:
        if e["cat"] == "task":
            tasks[e["dev"]] = tasks.get(e["dev"], 0) + 1
        for col, cat, name in PER_TASK:
            if e["cat"] == cat and (name is None or e["name"].startswith(name)):
                sums[(e["dev"], col)] = sums.get((e["dev"], col), 0.0) + e["dur"]
    print("microseconds per task, by the part of its way its device's threads spent them in")
    print(f"{'device':<10} {'tasks':>7} " + " ".join(f"{c:>10}" for c, _, _ in PER_TASK))
    for dev in sorted(tasks):
        n = tasks[dev]
        print(f"{dev:<10} {n:>7} " + " ".join(f"{sums.get((dev, c), 0.0) / n:>10.2f}" for c, _, _ in PER_TASK))


COPIES = ("h2d", "d2h", "p2p")


def end(slices):
    t0, _ = span_of(slices)
    task_end = {}
    tasks = {}
    for e in slices:
        if e["cat"] == "task":
            tasks[e["dev"]] = tasks.get(e["dev"], 0) + 1
            task_end[e["dev"]] = max(task_end.get(e["dev"], 0.0), e["ts"] + e["dur"])
    if not task_end:
        print("no task slices")
        return
    last = max(task_end.values())
    stop = max(e["ts"] + e["dur"] for e in slices)
    after = {}
    for e in slices:
        if e["cat"] in COPIES and e["ts"] + e["dur"] > last:
            a = after.setdefault(e["dev"], [0, 0.0, last])
            a[0] += 1
            a[1] += e.get("args", {}).get("bytes", 0) / 1048576.0
            a[2] = max(a[2], e["ts"] + e["dur"])
    print(f"the last task ended at {(last - t0) / 1000:.2f} ms, the trace {(stop - last) / 1000:.2f} ms later")
    print(f"{'device':<10} {'tasks':>7} {'last task ms':>13} {'copies after':>13} {'MiB after':>10} {'until ms':>9}")
    for dev in sorted(set(tasks) | set(after)):
        a = after.get(dev, [0, 0.0, last])
        le = task_end.get(dev)
        lt = f"{(le - t0) / 1000:.2f}" if le is not None else "-"
        print(f"{dev:<10} {tasks.get(dev, 0):>7} {lt:>13} {a[0]:>13} {a[1]:>10.1f} {(a[2] - last) / 1000:>9.2f}")


WAY = ("wait:ready", "wait:queue", "maps", "task", "unmap", "finish")


def busy(iv):
    """The union of intervals [(start, end)]: its total length."""
    total, cur = 0.0, None
    for a, b in sorted(iv):
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
    return total + (cur[1] - cur[0] if cur else 0.0)


def phase(slices, s0, last_end, first_end):
    """The phase of the chains from s0 (their first start) to the last chain's end: the
    submissions made in it (the host's submit slices from 0.1 ms before s0 on), the first
    chain's end F, and per device its copies: the write-backs' MiB, how long the device's
    link was busy with them (the union of its d2h slices) from F to the phase's last copy,
    and at what rate: a phase bound by its write-backs takes F plus that busy time (STREAM,
    bench/RESULTS.md, fifty-first session)."""
    sub = sorted((e["ts"], e["dur"]) for e in slices if e["cat"] == "submit" and e["ts"] >= s0 - 100.0)
    sub = [x for x in sub if x[0] <= last_end]
    if sub:
        d = sorted(x[1] for x in sub)
        slow = [x for x in d if x > 2.0]
        print(f"the phase's submissions: {len(sub)}, span {(sub[-1][0] + sub[-1][1] - sub[0][0]) / 1000:.2f} ms, "
              f"median {quantile(d, 0.5):.2f} us, over 2 us {len(slow)} ({sum(slow) / 1000:.2f} ms)")
    print(f"the first chain ended {(first_end - s0) / 1000:.2f} ms in (F)")
    copies = [e for e in slices if e["cat"] in COPIES and e["ts"] + e["dur"] >= s0]
    stop = max([e["ts"] + e["dur"] for e in copies] + [last_end])
    print(f"{'device':<10} {'d2h MiB':>8} {'busy ms':>8} {'GB/s':>6} {'h2d MiB':>8} {'last copy ms':>13}")
    for dev in sorted({e["dev"] for e in copies}):
        d2h = [e for e in copies if e["dev"] == dev and e["cat"] == "d2h"]
        mib = sum(e.get("args", {}).get("bytes", 0) for e in d2h) / 1048576.0
        b = busy([(max(e["ts"], first_end), e["ts"] + e["dur"]) for e in d2h if e["ts"] + e["dur"] > first_end])
        h2d = sum(e.get("args", {}).get("bytes", 0) for e in copies if e["dev"] == dev and e["cat"] == "h2d")
        last = max(e["ts"] + e["dur"] for e in copies if e["dev"] == dev)
        rate = mib * 1.048576e-3 / (b / 1e6) if b > 0 else 0.0
        print(f"{dev:<10} {mib:>8.1f} {b / 1000:>8.2f} {rate:>6.1f} {h2d / 1048576.0:>8.1f} {(last - s0) / 1000:>13.2f}")
    print(f"the phase ended {(stop - s0) / 1000:.2f} ms in (its last task or copy)")


def chains(slices, first):
    """Tasks grouped by chain (the rank each task slice carries in its args): how many,
    when they ended, and for the `first` chains to end the mean microseconds per link of
    each part of a link's way ("taken": from the end seen to a thread's taking it, its unmaps'
    start), and of the time from a link's end (its unmaps) to the next one's readiness (the
    predecessor's completion up to its successor's)."""
    t0, _ = span_of(slices)
    links = {}  # chain -> task -> {part: (start, end)}, device
    for e in slices:
        a = e.get("args", {})
        if e["cat"] not in WAY or "chain" not in a:
            continue
        t = links.setdefault(a["chain"], {}).setdefault(a["task"], {"dev": e["dev"]})
        s0, s1 = e["ts"], e["ts"] + e["dur"]
        p = t.get(e["cat"])
        t[e["cat"]] = (min(p[0], s0), max(p[1], s1)) if p else (s0, s1)
    if not links:
        print("no task slices with a chain (a trace of an older runtime?)")
        return
    def mean(v):
        return sum(v) / len(v) if v else 0.0
    def parts(t):  # a task's parts: (start, end) of each kind of slice it has
        return [v for k, v in t.items() if k != "dev"]
    end = {c: max(max(v[1] for v in parts(t)) for t in links[c].values()) for c in links}
    order = sorted(links, key=end.get)
    n = sorted(len(links[c]) for c in links)
    print(f"tasks {sum(n)}, chains {len(links)}, of more than one link {sum(1 for x in n if x > 1)}; "
          f"links per chain min {n[0]} median {n[len(n) // 2]} max {n[-1]}")
    long_ = [c for c in order if len(links[c]) > 1]
    print("ends of the chains of more than one link (ms): " +
          " ".join(f"{(end[c] - t0) / 1000:.2f}" for c in long_[:12]) + (" ..." if len(long_) > 12 else ""))
    if long_:
        # from the first start of those chains (a phase's start, when they are its
        # chains): their ends, and per device (its last link's) how many ended there and
        # when the last of them did: the chains' share of the devices
        def last_dev(c):
            return max(links[c].values(), key=lambda t: max(v[1] for v in parts(t)))["dev"]
        s0 = min(min(min(v[0] for v in parts(t)) for t in links[c].values()) for c in long_)
        print(f"from their first start at {(s0 - t0) / 1000:.2f} ms, their ends (ms): " +
              " ".join(f"{(end[c] - s0) / 1000:.2f}" for c in long_[:16]) + (" ..." if len(long_) > 16 else ""))
        per_dev = {}
        for c in long_:
            per_dev.setdefault(last_dev(c), []).append(end[c] - s0)
        print("per device (a chain's last link's): " + "; ".join(
            f"{d} {len(v)} chains, {sum(len(links[c]) for c in long_ if last_dev(c) == d)} links, last end "
            f"{max(v) / 1000:.2f} ms" for d, v in sorted(per_dev.items())))
        phase(slices, s0, max(end[c] for c in long_), min(end[c] for c in long_))
    hdr = " ".join(f"{k:>10}" for k in WAY[:4] + ("taken", ) + WAY[4:] + ("ready after",))
    print(f"{'chain':>8} {'links':>6} {'devices':<16} {'end ms':>8} {'us/link':>8} {hdr}")
    for c in (long_ or order)[:first]:
        ts = [t for _, t in sorted(links[c].items())]
        cols = []
        for k in WAY:
            cols.append(mean([t[k][1] - t[k][0] for t in ts if k in t]))
            if k == "task":  # the end seen, until a thread takes it (its unmaps begin)
                cols.append(mean([t["unmap"][0] - t["task"][1] for t in ts if "task" in t and "unmap" in t]))
        gaps = []
        for a, b in zip(ts, ts[1:]):
            ran = a.get("unmap") or a.get("task")
            if ran and "wait:ready" in b:
                gaps.append(b["wait:ready"][0] - ran[1])
        cols.append(mean(gaps))
        per = (end[c] - min(min(v[0] for v in parts(t)) for t in ts)) / len(ts)
        devs = ",".join(sorted({t["dev"] for t in ts}))
        print(f"{c:>8} {len(ts):>6} {devs:<16} {(end[c] - t0) / 1000:>8.2f} {per:>8.1f} " +
              " ".join(f"{x:>10.1f}" for x in cols))

def main(argv):
    args = argv[1:]
    by_name = None
    win = None
    per_window = None
    per_thread = False
    per_task_on = False
    end_on = False
    chains_n = None
    cats = ["task", "maps", "unmap", "wait:lock", "wait:data", "wait:queue"]
    try:
        while args and args[0].startswith("--"):
            opt = args.pop(0)
            if opt == "--by-name":
                by_name = args.pop(0)
            elif opt == "--windows":
                v = args.pop(0)
                win = -1.0 if v == "auto" else float(v)
            elif opt == "--cats":
                cats = args.pop(0).split(",")
            elif opt == "--rate":
                v = args.pop(0)
                per_window = -1.0 if v == "auto" else float(v)
            elif opt == "--threads":
                per_thread = True
            elif opt == "--per-task":
                per_task_on = True
            elif opt == "--end":
                end_on = True
            elif opt == "--chains":
                chains_n = int(args.pop(0)) if args and args[0].isdigit() else 3
            else:
                raise ValueError(opt)
        for v in (win, per_window):
            if v is not None and v <= 0 and v != -1.0:
                raise ValueError("arguments")
        if len(args) != 1:
            raise ValueError("arguments")
    except (IndexError, ValueError):
        sys.stderr.write("usage: tracestat.py [--by-name KIND | --windows MS|auto [--cats a,b] | "
                         "--rate MS|auto | --threads | --per-task | --end | --chains [N]] trace.json\n")
        return 2
    slices = load(args[0])
    if not slices:
        sys.stderr.write("tracestat.py: no slices in the trace\n")
        return 1
    def auto(v):  # 20 windows over the run, in round milliseconds
        return max(float(f"{span_of(slices)[1] / 1000.0 / 20:.2g}"), 0.001) if v < 0 else v
    if chains_n is not None:
        chains(slices, chains_n)
    elif end_on:
        end(slices)
    elif per_task_on:
        per_task(slices)
    elif per_thread:
        threads(slices)
    elif per_window is not None:
        rate(slices, auto(per_window))
    elif win is not None:
        windows(slices, auto(win), set(cats))
    elif by_name:
        summary([e for e in slices if e["cat"] == by_name], lambda e: (e["dev"], e["cat"], e["name"]))
    else:
        summary(slices, lambda e: (e["dev"], e["cat"], ""))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:  # (piped into head: the rest is not wanted)
        sys.stderr.close()
        sys.exit(0)
