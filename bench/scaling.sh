#!/bin/sh
# scaling.sh: what N GPUs give one process, against one GPU and against N
# separate processes, one per GPU, started together: the peer that shares
# nothing of the runtime (no lock, no directory, no helpers), only the
# machine (its cores, memory and PCIe). N-in-one / N-separate below 1 is what
# the runtime's shared state costs; N-separate / 1 below N is what the machine
# costs. Each round runs, in turn, one GPU (nvidia:0), the N GPUs in one
# process and the N processes (their throughputs added), and this per core
# set: CORES="all 16 8" runs the rounds again under `taskset -c 0-15` and
# `0-7` (the host's cores as the variable: two GPUs' tiled matmul on a
# 32-core host was bound by them, bench/RESULTS.md, twentieth session).
#
#   usage: bench/scaling.sh BUILD_DIR SAMPLE "ARGS" REPS
#          (CORES="all 16 8"; BENCH_GPUS=n: the first n GPUs; FLAGS=--pinned:
#           more macc options; SCALING_DEVICE=host: every "GPU" the host,
#           to try the script on a machine without one)
#
# SAMPLE: nbody, matmul or stream (samples/SAMPLE.c); ARGS its arguments (a
# run of at least a few hundred milliseconds, so that the separate processes
# overlap: matmul "32 256"). Prints per core set the medians and the paired
# ratios (median over rounds of one round's ratio, as bench/ab.sh does).
set -eu
if [ $# -lt 4 ]; then
    echo "usage: $0 BUILD_DIR SAMPLE \"ARGS\" REPS" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
sample=$2
args=$3
reps=$4
root=$(cd "$(dirname "$0")/.." && pwd)
me=scaling.sh
. "$root/bench/sample.sh"
sample_check "$sample" "$reps"
dev=${SCALING_DEVICE:-nvidia}
if [ "$dev" = nvidia ]; then
    . "$root/bench/gpus.sh"
    if [ "$ngpus" -lt 2 ]; then
        echo "scaling.sh: needs two GPUs or more ($ngpus seen)" >&2
        exit 1
    fi
    all="nvidia:0-$((ngpus - 1))"
else
    ngpus=${BENCH_GPUS:-2}
    all=$dev
fi
one_dev() { # i -> the device of the i-th separate process
    if [ "$dev" = nvidia ]; then echo "nvidia:$1"; else echo "$dev"; fi
}
ncpu=$(nproc)
out=$build/bench/scaling
mkdir -p "$out"
exe=$out/$sample
# shellcheck disable=SC2086
"$build/bin/macc" -O3 -march=native ${FLAGS:-} "$root/samples/$sample.c" -o "$exe" -lm

# rate LOG: the throughput a run printed (0 when it failed, and said)
rate() {
    grep -q 'check: PASS' "$1" || echo "scaling.sh: a run failed (see $1)" >&2
    sample_rate "$sample" "$1"
}

# run PIN DEVICES LOG: one run on DEVICES under the core set PIN ("" for all)
run() {
    # shellcheck disable=SC2086
    MACC_DEVICES=$2 timeout 300 ${1:+taskset -c $1} "$exe" $args > "$3" 2>&1 || true
}

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=name --format=csv,noheader | sed 's/^/gpu: /'
echo "host: $ncpu cores; commit: ${MACC_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
echo "run: samples/$sample.c $args${FLAGS:+ (built with $FLAGS)}, $reps rounds; N = $ngpus ($all)"
printf '%-6s %10s %10s %10s %9s %9s %9s\n' cores "1 GPU" "N in one" "N apart" "N/1" "apart/1" "in/apart"
for c in ${CORES:-all}; do
    pin=
    label=$ncpu
    if [ "$c" != all ]; then
        case $c in '' | *[!0-9]* | 0)
            echo "scaling.sh: CORES holds 'all' or numbers of cores" >&2
            exit 2
            ;;
        esac
        [ "$c" -le "$ncpu" ] || continue
        pin="0-$((c - 1))"
        label=$c
    fi
    vals=$out/values.$label.txt
    : > "$vals"
    r=0
    while [ "$r" -lt "$reps" ]; do
        r=$((r + 1))
        run "$pin" "$(one_dev 0)" "$out/one.$r.log"
        run "$pin" "$all" "$out/in.$r.log"
        i=0
        while [ "$i" -lt "$ngpus" ]; do
            run "$pin" "$(one_dev "$i")" "$out/apart.$r.$i.log" &
            i=$((i + 1))
        done
        wait
        sum=0
        i=0
        while [ "$i" -lt "$ngpus" ]; do
            sum=$(awk -v a="$sum" -v b="$(rate "$out/apart.$r.$i.log")" 'BEGIN { print a + b }')
            i=$((i + 1))
        done
        echo "$r $(rate "$out/one.$r.log") $(rate "$out/in.$r.log") $sum" >> "$vals"
    done
    med() { awk -v k="$1" '{ print $k, 1 }' "$vals" | awk -f "$root/bench/median.awk"; }
    pair() { awk -v a="$1" -v b="$2" '{ print $a, $b }' "$vals" | awk -f "$root/bench/median.awk"; }
    printf '%-6s %10.1f %10.1f %10.1f %9.3f %9.3f %9.3f\n' "$label" "$(med 2)" "$(med 3)" "$(med 4)" \
        "$(pair 3 2)" "$(pair 4 2)" "$(pair 3 4)"
done
echo "($unit, medians over rounds; ratios: the median over rounds of one round's ratio;"
echo " N apart: the N processes' throughputs added)"
