#!/bin/sh
# dispatch_ab.sh: bench/dispatch (fake GPUs, no GPU needed) of two runtimes,
# run alternately in one call: OLD (a git revision, or a directory holding
# runtime/, include/, bench/ and tests/ of one) against this working tree.
# A machine's own speed moves dispatch's efficiency by 0.02-0.03 between
# machines and calls (bench/RESULTS.md, thirty-first session); alternating
# runs of both builds on one machine separate changes smaller than that.
# Prints each run (efficiency; the wait's end after the last fake kernel, us),
# then per build and number of fake GPUs the means.
#
#   usage: bench/dispatch_ab.sh OLD [REPS] [GPUS]     (REPS 8, GPUS "1 4"; NB=16 KERNEL_US=70 HELPERS=8)
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 OLD [REPS] [GPUS]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${2:-8}
gpus=${3:-1 4}
nb=${NB:-16}
kus=${KERNEL_US:-70}
helpers=${HELPERS:-8}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -d "$1" ]; then
    old=$(cd "$1" && pwd)
else
    mkdir "$tmp/src"
    git -C "$root" archive "$1" runtime include bench tests | tar -x -C "$tmp/src"
    old=$tmp/src
fi
build() { # SRC OUT: the runtime's objects, libmaccrt.a and dispatch, as the Makefile builds them
    mkdir -p "$2"
    for f in "$1"/runtime/*.c; do
        $cc -I"$1/include" -I"$1/runtime" -O2 -std=gnu11 -pthread -DMACC_BUILDING_RUNTIME -fPIC \
            -fvisibility=hidden -c "$f" -o "$2/$(basename "$f" .c).o"
    done
    ar rcs "$2/libmaccrt.a" "$2"/*.o
    $cc -O2 -std=gnu11 -I"$1/runtime" -I"$1/include" -pthread "$1/bench/dispatch.c" "$2/libmaccrt.a" \
        -fopenmp -ldl -lm -o "$2/dispatch"
}
build "$old" "$tmp/old"
build "$root" "$tmp/new"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(nproc) cores; old: $1; new: the working tree; dispatch NGPUS $nb $kus $helpers, $reps runs each"
for n in $gpus; do
    r=0
    while [ "$r" -lt "$reps" ]; do
        for v in old new; do
            out=$("$tmp/$v/dispatch" "$n" "$nb" "$kus" "$helpers")
            case $out in *check=PASS*) ;; *) echo "dispatch_ab.sh: $v failed its check" >&2; exit 1 ;; esac
            e=$(echo "$out" | sed -n 's/.*efficiency=\([0-9.]*\).*/\1/p')
            w=$(echo "$out" | sed -n 's/.*wait returned \([0-9-]*\) us.*/\1/p')
            echo "$v gpus=$n efficiency=$e end_us=${w:-0}"
        done
        r=$((r + 1))
    done
done | awk '{ print; split($2, g, "="); split($3, e, "="); split($4, w, "=");
              k = $1 " " g[2]; se[k] += e[2]; sw[k] += w[2]; c[k]++ }
            END { for (k in c) { split(k, p, " ");
                  printf "mean %s gpus=%s efficiency=%.4f end_us=%.0f (%d runs)\n", p[1], p[2], se[k] / c[k], sw[k] / c[k], c[k] } }'
