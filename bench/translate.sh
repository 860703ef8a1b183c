#!/bin/sh
# translate.sh: translation time per line, beside the C compiler, in one run.
#
#   usage: bench/translate.sh BUILD_DIR [REPS]
#
# Generates C files of 10k, 50k and 100k lines with one `target device(any)`
# region per ~200 lines and the usual headers (bench/gen_translate.sh), and
# times, on each, `macc --translate` (its preprocessor step included),
# `cc -fsyntax-only` and `cc -O2 -c` (without -fopenmp, which would reject
# device(any): the pragmas are ignored). CPU time (user + system, children
# included; bench/cputime.c), the best of REPS runs (default 3). Prints the
# seconds, microseconds per line, macc / -fsyntax-only, and macc's time per
# line at each size over that at the first size. LINES="10000 50000 100000"
# changes the sizes.
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [REPS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
reps=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
sizes=${LINES:-10000 50000 100000}
out=$build/bench/translate
mkdir -p "$out"
cc=${CC:-cc}
$cc -O2 "$root/bench/cputime.c" -o "$out/cputime"

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $($cc --version | head -n 1)"
echo "commands: macc --translate F.c -o DIR; $cc -fsyntax-only F.c; $cc -O2 -c F.c; CPU seconds, best of $reps"

# best COMMAND...: the lowest CPU time of REPS runs
best() {
    b=
    i=0
    while [ $i -lt "$reps" ]; do
        t=$("$out/cputime" "$@" 2>&1 >/dev/null | sed -n 's/^cpu=\([0-9.]*\) .*/\1/p' | tail -n 1)
        [ -n "$t" ] || { echo "failed: $*" >&2; exit 1; }
        b=$(awk -v a="${b:-$t}" -v c="$t" 'BEGIN { print (c < a ? c : a) }')
        i=$((i + 1))
    done
    echo "$b"
}

printf '%-8s %9s %9s %9s %10s %10s %10s %8s %8s\n' lines "macc s" "syntax s" "O2 s" "macc us/l" "syn us/l" "O2 us/l" "macc/syn" "per-line"
first=
for n in $sizes; do
    f=$out/gen$n.c
    sh "$root/bench/gen_translate.sh" "$n" > "$f"
    lines=$(wc -l < "$f")
    mkdir -p "$out/out$n"
    m=$(best "$build/bin/macc" --translate "$f" -o "$out/out$n")
    s=$(best $cc -fsyntax-only "$f")
    o=$(best $cc -O2 -c "$f" -o "$out/gen$n.o")
    first=${first:-$(awk -v m="$m" -v l="$lines" 'BEGIN { print m / l }')}
    awk -v n="$lines" -v m="$m" -v s="$s" -v o="$o" -v f="$first" 'BEGIN {
        printf "%-8d %9.3f %9.3f %9.3f %10.2f %10.2f %10.2f %8.2f %8.2f\n", n, m, s, o,
               1e6 * m / n, 1e6 * s / n, 1e6 * o / n, m / s, (m / n) / f }'
done
echo "targets: macc/syn at 100k <= 3.0; per-line (macc's time per line over that at the first size) <= 1.3"
