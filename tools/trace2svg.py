#!/usr/bin/env python3
"""Draws a MACC_TRACE file (Chrome trace JSON) as an SVG timeline.

    python3 tools/trace2svg.py [--phases] trace.json timeline.svg

One row per device lane: tasks (the region's version running) and copies
(h2d, d2h, p2p) and data directives; with --phases also the runtime's phases
of each task (wait:ready, wait:queue, maps, unmap, finish). Prints, per
device, the number of slices of each kind (the test suite compares the task
count with MACC_STATS).
"""
import sys
from html import escape

from tracestat import load  # (the same directory)

COLORS = {"task": "#4c72b0", "h2d": "#dd8452", "d2h": "#c44e52", "p2p": "#55a868", "data": "#8c8c8c"}


def main(argv):
    phases = "--phases" in argv
    argv = [a for a in argv if a != "--phases"]
    if len(argv) != 3:
        sys.stderr.write("usage: trace2svg.py [--phases] trace.json out.svg\n")
        return 2
    slices = load(argv[1])
    counts = {}
    for e in slices:
        key = (e["dev"], e["cat"])
        counts[key] = counts.get(key, 0) + 1
    for (dev, cat), n in sorted(counts.items()):
        print(f"{dev} {cat} {n}")
    if not phases:
        slices = [e for e in slices if e["tid"] < 200]

    rows = sorted({(e["pid"], e["tid"]) for e in slices})
    row_index = {r: i for i, r in enumerate(rows)}
    names = {e["pid"]: e["dev"] for e in slices}
    t_end = max((e["ts"] + e["dur"] for e in slices), default=1.0) or 1.0
    left, width, row_h, top = 150, 1000, 18, 30
    height = top + row_h * len(rows) + 40
    scale = width / t_end
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="16">macc timeline: {len(slices)} slices, {t_end / 1000:.1f} ms</text>']
    for (pid, tid), i in row_index.items():
        y = top + i * row_h
        lane = "phases" if tid >= 200 else "copies" if tid >= 100 else "tasks"
        label = f"{names.get(pid, pid)} {lane} {tid % 100}"
        out.append(f'<text x="4" y="{y + 13}">{escape(label)}</text>')
        out.append(f'<line x1="{left}" y1="{y + row_h}" x2="{left + width}" y2="{y + row_h}" stroke="#eee"/>')
    for e in slices:
        y = top + row_index[(e["pid"], e["tid"])] * row_h + 2
        x = left + e["ts"] * scale
        w = max(e["dur"] * scale, 0.5)
        title = f'{e["name"]} ({e["cat"]}, {e["dur"] / 1000:.3f} ms)'
        out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{row_h - 4}" '
                   f'fill="{COLORS.get(e["cat"], "#999")}"><title>{escape(title)}</title></rect>')
    y = top + row_h * len(rows) + 20
    for k, (cat, color) in enumerate(COLORS.items()):
        out.append(f'<rect x="{left + k * 90}" y="{y - 10}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{left + k * 90 + 16}" y="{y}">{cat}</text>')
    out.append(f'<text x="{left + width - 60}" y="{y}">{t_end / 1000:.1f} ms</text>')
    out.append("</svg>")
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
