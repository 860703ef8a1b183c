#!/usr/bin/env python3
"""layers.py: no runtime file calls a function of a layer above its own.

The layers and their files are the table under "## Layers" in
docs/RUNTIME.md (one row per layer, the top first, files in backquotes), so
the picture and the check cannot disagree. Every function a runtime file
defines at file scope with external linkage (maccrt_*, MACC_*, macc_*, omp_*,
acc_*) belongs to that file's layer; a file that names a function of a higher
layer (a call, or its address taken) is a violation. Calls within a layer go
either way. Every runtime/*.c must be in the table.

    python3 tests/layers.py [ROOT]

Prints one line per violation and "N passed, N failed" (a file with no
violation passes); RESULTS=file gets "P F layers".
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
doc = open(os.path.join(root, "docs", "RUNTIME.md")).read()

# the table: | N | name | `a.c`, `b.c` | what |
m = re.search(r"^## Layers\n(.*?)(?=^## )", doc, re.S | re.M)
if not m:
    sys.exit("layers.py: docs/RUNTIME.md has no '## Layers' section")
layer_of = {}
names = {}
for row in m.group(1).splitlines():
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) < 3 or not cells[0].isdigit():
        continue
    rank = int(cells[0])
    names[rank] = cells[1]
    for f in re.findall(r"`(runtime/[\w/]+\.c)`", cells[2]):
        layer_of[f] = rank
if not layer_of:
    sys.exit("layers.py: the Layers table of docs/RUNTIME.md lists no files")

files = sorted("runtime/" + f for f in os.listdir(os.path.join(root, "runtime")) if f.endswith(".c"))


def strip(src):
    """Comments, strings and character constants blanked (lines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


PUBLIC = r"(?:maccrt_|MACC_|macc_|omp_|acc_)\w+"
# a definition: at the start of a line (file scope), not static, the name
# followed by its parameters and, after the closing parenthesis, a brace
defn = re.compile(r"^(?!static\b)(?![ \t#])[^;{}()=]*?\b(" + PUBLIC + r")\s*\(([^;{}]*?)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{",
                  re.M | re.S)
text = {}
defined = {}
for f in files:
    text[f] = strip(open(os.path.join(root, f)).read())
    for d in defn.finditer(text[f]):
        defined.setdefault(d.group(1), f)

passed = failed = 0
for f in files:
    if f not in layer_of:
        print(f"FAIL layers: {f} is in no layer of docs/RUNTIME.md's table")
        failed += 1
        continue
    mine = layer_of[f]
    bad = []
    for name in sorted(set(re.findall(r"\b(" + PUBLIC + r")\b", text[f]))):
        g = defined.get(name)
        if not g or g == f or g not in layer_of:
            continue
        if layer_of[g] > mine:
            bad.append(f"{name} ({g}, {names[layer_of[g]]})")
    if bad:
        print(f"FAIL layers: {f} ({names[mine]}) calls up: " + ", ".join(bad))
        failed += 1
    else:
        passed += 1
for f in layer_of:
    if f not in files:
        print(f"FAIL layers: docs/RUNTIME.md's table names {f}, which does not exist")
        failed += 1
print(f"{passed} passed, {failed} failed")
res = os.environ.get("RESULTS")
if res:
    with open(res, "a") as out:
        out.write(f"{passed} {failed} layers\n")
sys.exit(1 if failed else 0)
