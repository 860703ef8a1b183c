#!/bin/sh
# ab.sh: runtime settings side by side on one sample, interleaved, judged by
# paired ratios. Each round runs the sample once under every setting, in
# turn; a setting's row gives its median, range and the median over rounds of
# its run / the first setting's run of the same round. The machine's drift
# between rounds (+-15% on the GPU machines) then weighs on every setting of a
# round alike, which best-of-N does not give. Round r starts with setting r
# (a rotation), so that each setting takes every place in a round equally
# often when REPS is a multiple of their number: the place itself moves a
# run (STREAM on two H200s, 2026-11-30: one setting run first and fourth of
# each round read 1.000 and 0.940 by pairs, the runs between 0.988 and 0.974).
#
#   usage: bench/ab.sh BUILD_DIR SAMPLE "ARGS" REPS "ENV..." ["ENV..." ...]
#
# SAMPLE: nbody, matmul or stream (samples/SAMPLE.c, built with
# BUILD_DIR/bin/macc); ARGS its arguments; each ENV a setting, a
# space-separated list of VAR=value ("-" for none), the first the reference.
#   bench/ab.sh build-gpu matmul "8 512" 6 "MACC_DEVICES=nvidia" \
#       "MACC_DEVICES=nvidia MACC_PEER_WAIT=1" "MACC_DEVICES=nvidia MACC_CUDA_STREAMS=16"
# A run that fails or does not print `check: PASS` counts 0 (and is named).
# uneven: in how many rounds the setting's GPUs (two or more listed by the
# sample's "device N (nvidia:K): T tasks" lines) ran unequal shares, the
# largest and smallest count apart by more than a fifth of their mean: a
# bimodal outcome (a run's chains ending on one GPU) that a median hides.
# ABFLAGS: more macc options for the build (ABFLAGS=--pinned, then
# "MACC_CUDA_PIN_HEAP=0" as a setting: with and without the registered heap).
set -eu
if [ $# -lt 5 ]; then
    echo "usage: $0 BUILD_DIR SAMPLE \"ARGS\" REPS \"ENV...\" [\"ENV...\" ...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
sample=$2
args=$3
reps=$4
shift 4
root=$(cd "$(dirname "$0")/.." && pwd)
me=ab.sh
. "$root/bench/sample.sh"
sample_check "$sample" "$reps"
out=$build/bench/ab
mkdir -p "$out"
exe=$out/$sample
# shellcheck disable=SC2086
"$build/bin/macc" -O3 -march=native ${ABFLAGS:-} "$root/samples/$sample.c" -o "$exe" -lm

# one ENV LOG: the sample's throughput under ENV (0 when it fails)
one() {
    e=$1
    [ "$e" = - ] && e=
    # shellcheck disable=SC2086
    if env $e timeout 300 "$exe" $args > "$2" 2>&1 && grep -q 'check: PASS' "$2"; then
        sample_rate "$sample" "$2"
    else
        echo "ab.sh: '$1' failed (see $2)" >&2
        echo 0
    fi
}

# uneven LOG: 1 when the run's GPUs ran unequal shares (above), else 0
uneven() {
    awk '/: device [0-9]+ \(nvidia:[0-9]+\): [0-9]+ tasks$/ { t = $(NF - 1); n++; s += t
             if (n == 1 || t < lo) lo = t; if (t > hi) hi = t }
         END { print (n >= 2 && hi - lo > 0.2 * s / n) ? 1 : 0 }' "$1"
}

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=name --format=csv,noheader | sed 's/^/gpu: /'
echo "host: $(nproc) cores; commit: ${MACC_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
echo "run: samples/$sample.c $args${ABFLAGS:+ (built with $ABFLAGS)}, $reps rounds of $# settings"
vals=$out/values.txt
: > "$vals"
r=0
n=$#
while [ "$r" -lt "$reps" ]; do
    r=$((r + 1))
    j=0
    while [ "$j" -lt "$n" ]; do
        k=$(((r - 1 + j) % n + 1))
        j=$((j + 1))
        eval "e=\${$k}"
        v=$(one "$e" "$out/run.$r.$k.log")
        echo "$r $k $v $(uneven "$out/run.$r.$k.log")" >> "$vals"
    done
done
printf '%-4s %10s %10s %10s %8s %7s  %s\n' '' "median" min max pairs uneven setting
k=0
for e in "$@"; do
    k=$((k + 1))
    med=$(awk -v k="$k" '$2 == k { print $3, 1 }' "$vals" | awk -f "$root/bench/median.awk")
    # (setting 1's run of each round read first: a round may run it after setting k)
    pairs=$(awk -v k="$k" 'NR == FNR { if ($2 == 1) ref[$1] = $3; next } $2 == k { print $3, ref[$1] }' \
        "$vals" "$vals" | awk -f "$root/bench/median.awk")
    awk -v k="$k" -v e="$e" -v med="$med" -v pairs="$pairs" '
        $2 == k { if (n++ == 0 || $3 < lo) lo = $3; if ($3 > hi) hi = $3; u += $4 }
        END { printf "%-4s %10.1f %10.1f %10.1f %8.3f %7s  %s\n", k, med, lo, hi, pairs, u "/" n, e }' "$vals"
done
echo "($unit; pairs: the median over rounds of the setting's run / setting 1's run)"
