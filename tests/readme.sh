#!/bin/sh
# The README's commands, run as written: every ```sh block's lines (comments
# stripped) that need no GPU, in order; a ```text block right after an sh
# block is the output its last command must print. `make check` itself (what
# runs this) is left out; `make ...` lines run in the repository root, other
# lines in a scratch directory that sees the repository's build/ and samples/
# (so nothing is written into the checkout).
#
#   sh tests/readme.sh BUILD        (BUILD: the build directory, default build)
#
# Prints one line per command and "N passed, N failed"; RESULTS=file gets
# "P F readme".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
w=$(mktemp -d "${TMPDIR:-/tmp}/macc-readme.XXXXXX") || exit 2
trap 'rm -rf "$w"' EXIT
ln -s "$build" "$w/build"
ln -s "$top/samples" "$w/samples"
# blocks: "sh" lines and "text" lines, tagged with their block number
awk '
    /^```sh$/ { inb = "sh"; n++; next }
    /^```text$/ { inb = "text"; n++; next }
    /^```/ { inb = ""; next }
    inb != "" { print n "\t" inb "\t" $0 }
' "$top/README.md" > "$w/blocks.tsv"
pass=0 fail=0
last_blk=0
while IFS="$(printf '\t')" read -r blk kind line; do
    if [ "$kind" = text ]; then
        # the expected output of the sh block just before this one
        [ "$last_blk" -eq $((blk - 1)) ] || continue
        printf '%s\n' "$line" >> "$w/want.$blk"
        continue
    fi
    cmd=$(printf '%s' "$line" | sed 's/[[:space:]]*#.*$//')
    [ -n "$cmd" ] || continue
    case $cmd in
    "make check"*) continue ;;
    make*) dir=$top ;;
    *) dir=$w ;;
    esac
    if (cd "$dir" && eval "$cmd") > "$w/out.$blk" 2>&1; then
        pass=$((pass + 1)); echo "ok      $cmd"
    else
        fail=$((fail + 1)); echo "FAIL    $cmd"; tail -n 5 "$w/out.$blk"
    fi
    last_blk=$blk
done < "$w/blocks.tsv"
# the outputs shown after sh blocks
for want in "$w"/want.*; do
    [ -f "$want" ] || continue
    b=${want##*.}
    got=$w/out.$((b - 1))
    if grep -qxF -f "$want" "$got" && [ "$(grep -cxF -f "$want" "$got")" -ge "$(wc -l < "$want")" ]; then
        pass=$((pass + 1)); echo "ok      output of block $((b - 1)) as shown"
    else
        fail=$((fail + 1)); echo "FAIL    output of block $((b - 1)): want"; cat "$want"; echo "got:"; tail -n 5 "$got"
    fi
done
[ -n "${RESULTS:-}" ] && echo "$pass $fail readme" >> "$RESULTS"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
