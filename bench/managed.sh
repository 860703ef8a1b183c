#!/bin/sh
# managed.sh: --managed against explicit data movement, on the GPUs alone
# (one GPU, MACC_DEVICES=nvidia:0, and with several every GPU the programs
# see, MACC_DEVICES=nvidia:0,1,..., side by side; BENCH_GPUS=n: the first n
# only, bench/gpus.sh), each row's peers in the same run:
#   jacobi   samples/jacobi.c: acc enter data / update host / exit data;
#            explicit copies, --managed (directives as prefetch hints),
#            --managed with MACC_MANAGED_HINTS=0 (page faults only), and
#            --managed with MACC_MANAGED_PREFETCH_ALLOC=1 (at-alloc: large
#            blocks prefetched to the GPU when allocated, seed 002)
#   stream   samples/stream.c pipelined rate, the same four ways
#   alloc    samples/alloc_loop.c: a work array allocated, used on the GPU and
#            freed every iteration: --managed with the pool, with MACC_POOL=0
#            (cudaMallocManaged + cudaFree each time), and explicit maps;
#            plus the cost of one malloc+free pair, pool against no pool
#
#   usage: bench/managed.sh BUILD_DIR [REPS]      (best of REPS, default 3)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [REPS]" >&2; exit 2; }
build=$(cd "$1" && pwd)
reps=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x /usr/local/cuda/bin/nvcc ] && PATH=$PATH:/usr/local/cuda/bin && export PATH
out=$build/bench/managed
mkdir -p "$out"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sed 's/^/gpu: /'
for s in jacobi stream alloc_loop; do
    "$build/bin/macc" -O3 "$root/samples/$s.c" -o "$out/$s" -lm
    "$build/bin/macc" --managed -O3 "$root/samples/$s.c" -o "$out/${s}_m" -lm
done

# best PATTERN(awk field after it) PROG ARGS ENV...: best (max, or min with LOW=1) value
best() {
    pat=$1 prog=$2 args=$3
    shift 3
    b=""
    i=0
    while [ "$i" -lt "$reps" ]; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        v=$(env MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory "$@" timeout 300 "$out/$prog" $args 2>&1 |
            sed -n "s/.*$pat\\([0-9.]*\\).*/\\1/p" | head -n 1)
        [ -n "$v" ] || { echo "managed.sh: $prog $args $* failed" >&2; continue; }
        b=$(awk -v a="$b" -v c="$v" -v low="${LOW:-0}" 'BEGIN { if (a == "") print c; else if (low) print (c < a ? c : a); else print (c > a ? c : a) }')
    done
    echo "${b:-0}"
}

. "$root/bench/gpus.sh"
ngpu=$ngpus
[ "${ngpu:-0}" -ge 1 ] || ngpu=1
# row NAME PATTERN PROG ARGS: one GPU (nvidia:0) and, with several, every GPU
row() {
    name=$1 pat=$2 prog=$3 args=$4
    e=$(best "$pat" "$prog" "$args" MACC_DEVICES=nvidia:0)
    m=$(best "$pat" "${prog}_m" "$args" MACC_DEVICES=nvidia:0)
    n=$(best "$pat" "${prog}_m" "$args" MACC_DEVICES=nvidia:0 MACC_MANAGED_HINTS=0)
    a=$(best "$pat" "${prog}_m" "$args" MACC_DEVICES=nvidia:0 MACC_MANAGED_PREFETCH_ALLOC=1)
    if [ "$ngpu" -gt 1 ]; then
        E=$(best "$pat" "$prog" "$args" MACC_DEVICES=nvidia:"$gpus_list")
        M=$(best "$pat" "${prog}_m" "$args" MACC_DEVICES=nvidia:"$gpus_list")
    else
        E=0 M=0
    fi
    awk -v name="$name" -v e="$e" -v m="$m" -v n="$n" -v a="$a" -v E="$E" -v M="$M" 'BEGIN {
        printf "%-8s %10.1f %10.1f %10.1f %10.1f %7.3f %7.3f %7.3f | %10.1f %10.1f %7.3f %9.2f\n", name, e, m, n, a,
            (e > 0 ? m / e : 0), (e > 0 ? n / e : 0), (e > 0 ? a / e : 0), E, M, (E > 0 ? M / E : 0), (m > 0 ? M / m : 0) }'
}
echo "GB/s, best of $reps; left: one GPU (MACC_DEVICES=nvidia:0), right: $ngpu GPUs (MACC_DEVICES=nvidia:$gpus_list)"
printf '%-8s %10s %10s %10s %10s %7s %7s %7s | %10s %10s %7s %9s\n' case explicit managed no-hints at-alloc m/e nh/e a/e explicit managed m/e 'm all/1'
row jacobi 'GB\/s=' jacobi "4096 100"
row stream 'Pipelined *' stream "33554432 10 4194304"

echo
printf '%-22s %12s %12s %12s %10s %10s\n' 'alloc loop (us/iter)' explicit pool no-pool 'pool/expl' 'nopool/pool'
e=$(LOW=1 best 'us\/iter=' alloc_loop "1048576 200")
p=$(LOW=1 best 'us\/iter=' alloc_loop_m "1048576 200")
r=$(LOW=1 best 'us\/iter=' alloc_loop_m "1048576 200" MACC_POOL=0)
awk -v e="$e" -v p="$p" -v r="$r" 'BEGIN { printf "%-22s %12.1f %12.1f %12.1f %10.3f %10.1f\n", "n=2^20 doubles", e, p, r, (e > 0 ? p / e : 0), (p > 0 ? r / p : 0) }'
p=$(LOW=1 best 'alloc+free us=' alloc_loop_m "1048576 2000 1")
r=$(LOW=1 best 'alloc+free us=' alloc_loop_m "1048576 200 1" MACC_POOL=0)
awk -v p="$p" -v r="$r" 'BEGIN { printf "%-22s %12s %12.2f %12.2f %10s %10.1f\n", "malloc+free only (us)", "-", p, r, "-", (p > 0 ? r / p : 0) }'
