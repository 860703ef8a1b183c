#!/bin/sh
# managed.sh: --managed against explicit data movement, on the GPU alone
# (MACC_DEVICES=nvidia), each row's peers in the same run:
#   jacobi   samples/jacobi.c: acc enter data / update host / exit data;
#            explicit copies, --managed (directives as prefetch hints), and
#            --managed with MACC_MANAGED_HINTS=0 (page faults only)
#   stream   samples/stream.c pipelined rate, the same three ways
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

printf '%-10s %-8s %12s %12s %12s %10s %10s\n' case unit explicit managed no-hints 'm/expl' 'nh/expl'
e=$(best 'GB\/s=' jacobi "4096 100")
m=$(best 'GB\/s=' jacobi_m "4096 100")
n=$(best 'GB\/s=' jacobi_m "4096 100" MACC_MANAGED_HINTS=0)
awk -v e="$e" -v m="$m" -v n="$n" 'BEGIN { printf "%-10s %-8s %12.1f %12.1f %12.1f %10.3f %10.3f\n", "jacobi", "GB/s", e, m, n, (e > 0 ? m / e : 0), (e > 0 ? n / e : 0) }'
e=$(best 'Pipelined *' stream "33554432 10 4194304")
m=$(best 'Pipelined *' stream_m "33554432 10 4194304")
n=$(best 'Pipelined *' stream_m "33554432 10 4194304" MACC_MANAGED_HINTS=0)
awk -v e="$e" -v m="$m" -v n="$n" 'BEGIN { printf "%-10s %-8s %12.1f %12.1f %12.1f %10.3f %10.3f\n", "stream", "GB/s", e, m, n, (e > 0 ? m / e : 0), (e > 0 ? n / e : 0) }'

echo
printf '%-22s %12s %12s %12s %10s %10s\n' 'alloc loop (us/iter)' explicit pool no-pool 'pool/expl' 'nopool/pool'
e=$(LOW=1 best 'us\/iter=' alloc_loop "1048576 200")
p=$(LOW=1 best 'us\/iter=' alloc_loop_m "1048576 200")
r=$(LOW=1 best 'us\/iter=' alloc_loop_m "1048576 200" MACC_POOL=0)
awk -v e="$e" -v p="$p" -v r="$r" 'BEGIN { printf "%-22s %12.1f %12.1f %12.1f %10.3f %10.1f\n", "n=2^20 doubles", e, p, r, (e > 0 ? p / e : 0), (p > 0 ? r / p : 0) }'
p=$(LOW=1 best 'alloc+free us=' alloc_loop_m "1048576 2000 1")
r=$(LOW=1 best 'alloc+free us=' alloc_loop_m "1048576 200 1" MACC_POOL=0)
awk -v p="$p" -v r="$r" 'BEGIN { printf "%-22s %12s %12.2f %12.2f %10s %10.1f\n", "malloc+free only (us)", "-", p, r, "-", (p > 0 ? r / p : 0) }'
