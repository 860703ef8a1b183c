#!/bin/sh
# placement.sh: placement of managed data (runtime/placement.c, OTM, seed 004)
# on the GPUs alone (MACC_DEVICES=nvidia: every GPU; one GPU with
# DEVENV="MACC_DEVICES=nvidia:0 MACC_TARGET_OFFLOAD=mandatory"; the budget
# is each GPU's, the byte columns sum the GPUs', peak is the largest GPU's):
# samples/bfs.c and samples/srad.c,
# built with --managed, at GPU budgets (MACC_DEVICE_MEMORY) from one that
# holds all the data to one a third of it, under MACC_PLACEMENT=otm, prefetch
# and demand. The data is never more than the GPU's free memory: a budget
# below the data is how a smaller GPU is studied (the cap is never raised).
# One process per row: the sample repeats its traversal / iterations
# REPS x BATCH times, each from the data on the host (moved back by `target
# update from`, not timed); `time s` is the best of REPS means of BATCH
# consecutive repetitions (one measurement is BATCH repetitions long); the
# samples stop repeating once the repetitions have taken 2 s in all (the
# thrashing rows, several times slower: then the mean of those that ran);
# `reps`: the repetitions run. The byte counters (MACC_STATS) are the
# process's, all repetitions together:
#   pref   bytes prefetched to the GPU
#   fault  bytes faulted in, estimated (density x size per object left to faults)
#   evict  bytes moved back to the host to stay within the budget
#   pin    bytes of objects kept in host memory (read over the link)
#   peak   most bytes charged to the GPU at a launch's decisions (<= budget)
#   n_ev   evictions
#   over   objects a launch could not place within the budget (faulted in
#          by the kernel, evicted after it)
# otm/best: otm's time over the best of prefetch and demand at that budget.
#
# The otm rows' density threshold is measured by the runtime on the GPU at
# the first decision (printed as `threshold:`); counters per repetition: the
# columns divided by the `reps` column.
#
#   usage: bench/placement.sh BUILD_DIR [REPS]     (best of REPS, default 3)
#   BATCH: repetitions per measurement (default 4; 1: best of REPS single ones)
#   BFS_ARGS (default "25165824 8 8 1": vertices degree parts seed),
#   SRAD_ARGS (default "4096 4096 16 0.5": rows cols iterations lambda),
#   RATIOS: data/budget ratios (default "0.5 1 1.5 2 3"; 0.5: everything fits)
#   OTM_ALT: a second otm row with MACC_OTM_DENSITY=OTM_ALT (default none)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [REPS]" >&2; exit 2; }
build=$(cd "$1" && pwd)
reps=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x /usr/local/cuda/bin/nvcc ] && PATH=$PATH:/usr/local/cuda/bin && export PATH
out=$build/bench/placement
mkdir -p "$out"
bfs_args=${BFS_ARGS:-25165824 8 8 1}
srad_args=${SRAD_ARGS:-4096 4096 16 0.5}
ratios=${RATIOS:-0.5 1 1.5 2 3}
alt=${OTM_ALT-}
batch=${BATCH:-4}
nrep=$((reps * batch))
[ "$nrep" -le 100 ] || { echo "placement.sh: REPS x BATCH must be at most 100" >&2; exit 2; }
devenv=${DEVENV:-MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory}
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader | sed 's/^/gpu: /'
for s in bfs srad; do
    "$build/bin/macc" --managed -O3 "$root/samples/$s.c" -o "$out/$s" -lm
done

# run PROG ARGS ENV...: "time bytes... reps" of one process (best of its repetitions)
run() {
    prog=$1 args=$2
    shift 2
    # shellcheck disable=SC2086
    if ! env $devenv MACC_STATS=1 "$@" timeout 300 "$out/$prog" $args "$nrep" > "$out/run.log" 2>&1 ||
        ! grep -q 'check: PASS' "$out/run.log"; then
        tail -n 5 "$out/run.log" >&2
        echo "placement.sh: $prog $args $* failed" >&2
        echo "0 0 0 0 0 0 0 0 0"
        return
    fi
    grep -h '^macc: .*: migration' "$out/run.log" | head -n 1 | sed 's/^macc: /threshold: /' >&2
    # the best mean of BATCH consecutive repetitions (all of them when fewer ran)
    t=$(awk -v B="$batch" '/^times:/ { n = NF - 1; best = -1
            for (i = 2; i + B - 1 <= NF; i += B) { s = 0; for (j = i; j < i + B; j++) s += $j; if (best < 0 || s / B < best) best = s / B }
            if (best < 0) { s = 0; for (j = 2; j <= NF; j++) s += $j; best = n ? s / n : 0 }
            printf "%.6f", best }' "$out/run.log")
    n=$(awk '/^times:/ { print NF - 1 }' "$out/run.log")
    # macc: nvidia:N launches prefetched faulted evicted pinned resident peak n_pref n_fault n_host n_evict over
    # (every GPU's line: bytes and counts summed, the peak the largest of the GPUs')
    c=$(awk '/^macc: nvidia:[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+/ {
            g++; p += $4; f += $5; e += $6; n += $7; if ($9 > pk) pk = $9; ev += $13; o += $14 }
            END { if (g) printf "%.0f %.0f %.0f %.0f %.0f %d %d\n", p, f, e, n, pk, ev, o }' "$out/run.log")
    [ -n "$c" ] || c="0 0 0 0 0 0 0"
    echo "$t $c ${n:-0}"
}

printf '%-5s %8s %8s %6s %-9s %9s %4s %8s %8s %8s %8s %8s %6s %5s %9s\n' sample 'data MB' 'bud MB' 'd/b' policy 'time s' \
    reps 'pref MB' 'fault MB' 'evict MB' 'pin MB' 'peak MB' 'n_ev' 'over' 'otm/best'
for s in bfs srad; do
    if [ "$s" = bfs ]; then args=$bfs_args; else args=$srad_args; fi
    # the bytes the regions use, as the samples print them (`data:`)
    # shellcheck disable=SC2086
    set -- $args
    [ $# -eq 4 ] || { echo "placement.sh: BFS_ARGS / SRAD_ARGS take 4 values (the repetitions come last)" >&2; exit 2; }
    if [ "$s" = bfs ]; then
        data=$(awk -v v="$1" -v d="$2" 'BEGIN { printf "%.0f", (v + 1) * 4 + v * d * 4 + 3 * v + v * 4 }')
    else
        data=$(awk -v r="$1" -v c="$2" 'BEGIN { printf "%.0f", 6 * r * c * 4 + 2 * (r + c) * 4 }')
    fi
    for r in $ratios; do
        budget=$(awk -v d="$data" -v r="$r" 'BEGIN { printf "%.0f", d / r }')
        o=$(run "$s" "$args" MACC_PLACEMENT=otm MACC_DEVICE_MEMORY="$budget")
        p=$(run "$s" "$args" MACC_PLACEMENT=prefetch MACC_DEVICE_MEMORY="$budget")
        d=$(run "$s" "$args" MACC_PLACEMENT=demand MACC_DEVICE_MEMORY="$budget")
        a=""
        [ -z "$alt" ] || a=$(run "$s" "$args" MACC_PLACEMENT=otm MACC_OTM_DENSITY="$alt" MACC_DEVICE_MEMORY="$budget")
        for pol in otm prefetch demand ${alt:+otm@$alt}; do
            case $pol in otm) v=$o ;; prefetch) v=$p ;; demand) v=$d ;; *) v=$a ;; esac
            echo "$v" | awk -v s="$s" -v data="$data" -v b="$budget" -v r="$r" -v pol="$pol" -v p="$p" -v d="$d" '
                function mb(x) { return x / 1048576 }
                { split(p, P, " "); split(d, D, " ")
                  best = P[1] < D[1] ? P[1] : D[1]
                  ratio = pol ~ /^otm/ && best > 0 ? sprintf("%9.3f", $1 / best) : sprintf("%9s", "")
                  printf "%-5s %8.1f %8.1f %6.2f %-9s %9.4f %4d %8.1f %8.1f %8.1f %8.1f %8.1f %6d %5d %s\n", s, mb(data), mb(b), r, pol,
                         $1, $9, mb($2), mb($3), mb($4), mb($5), mb($6), $7, $8, ratio }'
        done
    done
done
