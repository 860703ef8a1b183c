#!/bin/sh
# tasks.sh: what a task costs, macc's runtime beside libgomp, in one run.
#
#   usage: bench/tasks.sh BUILD_DIR [REPS]
#
# Builds bench/tasks.c with BUILD_DIR/bin/macc (`target device(any) nowait`,
# run with MACC_DEVICES=host MACC_HOST_THREADS=2) and with `cc -fopenmp`
# (`omp task` from a single thread of a 2-thread team), runs each for 10k,
# 100k and 1M tasks, chained (64 depend(inout) chains) and independent, REPS
# times (default 3; the best time and the lowest peak memory count), and
# prints microseconds per task and peak resident memory (MiB) of both, with
# the ratios macc / libgomp. SIZES="10000 100000 1000000" changes the sizes;
# MACC_FLAGS adds options to macc's build (--targets=host: no CUDA runtime
# linked, which is most of a small program's resident memory).
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [REPS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
reps=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
sizes=${SIZES:-10000 100000 1000000}
out=$build/bench/tasks
mkdir -p "$out"
cc=${CC:-cc}

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
flags=${MACC_FLAGS:-}
echo "build: $build/bin/macc -O2 $flags bench/tasks.c; $cc -O2 -fopenmp bench/tasks.c"
echo "run: MACC_DEVICES=host MACC_HOST_THREADS=2 tasks N MODE (macc); tasks N MODE (libgomp); best of $reps"
"$build/bin/macc" -O2 $flags "$root/bench/tasks.c" -o "$out/tasks_macc"
$cc -O2 -fopenmp "$root/bench/tasks.c" -o "$out/tasks_gomp"

# best PROGRAM N MODE: "us MiB" (best of REPS; "fail fail" when a run fails)
best() {
    us= kib=
    i=0
    while [ $i -lt "$reps" ]; do
        line=$(MACC_DEVICES=host MACC_HOST_THREADS=2 "$1" "$2" "$3") || { echo "fail fail"; return; }
        case $line in *check=PASS*) ;; *) echo "fail fail"; return ;; esac
        u=$(echo "$line" | sed 's/.*us_per_task=\([0-9.]*\).*/\1/')
        k=$(echo "$line" | sed 's/.*maxrss_kib=\([0-9]*\).*/\1/')
        us=$(awk -v a="${us:-$u}" -v b="$u" 'BEGIN { print (b < a ? b : a) }')
        kib=$(awk -v a="${kib:-$k}" -v b="$k" 'BEGIN { print (b < a ? b : a) }')
        i=$((i + 1))
    done
    awk -v u="$us" -v k="$kib" 'BEGIN { printf "%s %.1f\n", u, k / 1024 }'
}

status=0
printf '%-8s %-6s %12s %12s %7s %10s %10s %7s\n' tasks mode "macc us" "libgomp us" ratio "macc MiB" "gomp MiB" ratio
for mode in chain indep; do
    for n in $sizes; do
        set -- $(best "$out/tasks_macc" "$n" "$mode")
        mu=$1 mm=$2
        set -- $(best "$out/tasks_gomp" "$n" "$mode")
        gu=$1 gm=$2
        [ "$mu" = fail ] && status=1
        awk -v n="$n" -v m="$mode" -v mu="$mu" -v gu="$gu" -v mm="$mm" -v gm="$gm" 'BEGIN {
            r1 = (gu > 0 && mu != "fail") ? sprintf("%.2f", mu / gu) : "-"
            r2 = (gm > 0 && mm != "fail") ? sprintf("%.2f", mm / gm) : "-"
            printf "%-8s %-6s %12s %12s %7s %10s %10s %7s\n", n, m, mu, gu, r1, mm, gm, r2 }'
    done
done
echo "targets: chained us <= libgomp's (ratio <= 1.00); independent us <= 3x; peak memory at 1M <= 2x"
exit $status
