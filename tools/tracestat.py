#!/usr/bin/env python3
"""Numbers from a MACC_TRACE file (Chrome trace JSON): where the time went.

    python3 tools/tracestat.py trace.json                 per device and kind of slice
    python3 tools/tracestat.py --by-name hold:lock t.json  one kind, per slice name
    python3 tools/tracestat.py --windows 5 [--cats task,maps,wait:lock] t.json
    python3 tools/tracestat.py --windows auto t.json      20 windows over the run

The first form prints, per device and kind (task, h2d, maps, wait:lock, ...), the number of
slices, their summed time, median, 90th percentile and maximum (in microseconds), and the
mean number at once over the run (summed time / span): "maps 12.0" means twelve helpers of
that device were acquiring maps on average. --by-name splits one kind by slice name (the
region, or for hold:lock the function that held the directory's lock). --windows MS prints
that mean number at once per window of MS milliseconds, one column per device and kind
(default kinds: task, maps, unmap, wait:lock, wait:data, wait:queue), to see a run's phases.
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


def summary(slices, key):
    t0 = min(e["ts"] for e in slices)
    t1 = max(e["ts"] + e["dur"] for e in slices)
    span = max(t1 - t0, 1e-9)
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


def windows(slices, ms, cats):
    t0 = min(e["ts"] for e in slices)
    t1 = max(e["ts"] + e["dur"] for e in slices)
    w = ms * 1000.0
    n = int((t1 - t0) / w) + 1
    acc = {}
    for e in slices:
        if e["cat"] not in cats:
            continue
        row = acc.setdefault((e["dev"], e["cat"]), [0.0] * n)
        s = e["ts"] - t0
        end = s + e["dur"]
        b = int(s / w)
        while s < end and b < n:
            edge = (b + 1) * w
            row[b] += min(end, edge) - s
            s = edge
            b += 1
    keys = sorted(acc)
    short = {d: d.replace("nvidia:", "gpu") for d, _ in keys}
    print("ms     " + " ".join(f"{(short[d] + '/' + c)[:12]:>12}" for d, c in keys))
    for b in range(n):
        print(f"{b * ms:<6g} " + " ".join(f"{acc[k][b] / w:>12.2f}" for k in keys))


def main(argv):
    args = argv[1:]
    by_name = None
    win = None
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
            else:
                raise ValueError(opt)
        if len(args) != 1 or (win is not None and win <= 0 and win != -1.0):
            raise ValueError("arguments")
    except (IndexError, ValueError):
        sys.stderr.write("usage: tracestat.py [--by-name KIND | --windows MS|auto [--cats a,b]] trace.json\n")
        return 2
    slices = load(args[0])
    if not slices:
        sys.stderr.write("tracestat.py: no slices in the trace\n")
        return 1
    if win is not None:
        if win < 0:  # auto: 20 windows over the run, in round milliseconds
            span = (max(e["ts"] + e["dur"] for e in slices) - min(e["ts"] for e in slices)) / 1000.0
            win = max(float(f"{span / 20:.2g}"), 0.001)
        windows(slices, win, set(cats))
    elif by_name:
        summary([e for e in slices if e["cat"] == by_name], lambda e: (e["dev"], e["cat"], e["name"]))
    else:
        summary(slices, lambda e: (e["dev"], e["cat"], ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
