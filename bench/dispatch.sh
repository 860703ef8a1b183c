#!/bin/sh
# dispatch.sh: the runtime's dispatch cost per GPU task, on fake GPUs (no GPU
# needed): bench/dispatch.c's matmul-shaped task graph (NB^3 tasks, maps and
# dependences of tiles) on 1, 2 and 4 fake GPUs (GPUS) whose helpers sleep
# KERNEL_US per task, in one run. Prints tasks per second, the efficiency
# (helpers' sleeping time over the wall time: 1 when the runtime costs
# nothing), and N GPUs over 1 (N when dispatch keeps up). The floor column:
# the same number of threads sleeping KERNEL_US back to back without the
# runtime (dispatch's DISPATCH_FLOOR mode), what this machine's timers and
# cores allow at best (a 70 us sleep takes about 78 us on a 2-vCPU VM).
# cpu_us/task: the process's CPU time (user + system, all threads) per task,
# the least of the runs (floor_cpu_us: the floor's, the sleeps' own wake-ups):
# on a shared or small machine, whose other load moves tasks/s by 2x between
# runs, the runtime's cost per task shows there more steadily. end_us: the
# shortest time of any run from the last fake kernel's end to the taskwait's
# return (the wait's end: its flush), "-" with DISPATCH_ASYNC=1.
# With python3, one traced run per number of GPUs: the runtime lock's holds
# by completing helpers, and a helper's microseconds per task by part
# (tracestat --per-task: run, maps, unmaps, completion, and the waits).
#
#   usage: bench/dispatch.sh BUILD_DIR [REPS]   (NB=16 KERNEL_US=70 HELPERS=8 GPUS="1 2 4")
#   DISPATCH_ASYNC=1: the fake GPUs' tasks end asynchronously, as the CUDA plugin's do
#   (a helper launches and goes on; a watcher ends the task KERNEL_US later)
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [REPS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
reps=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
nb=${NB:-16}
kus=${KERNEL_US:-70}
helpers=${HELPERS:-8}
cc=${CC:-cc}
out=$build/bench/dispatch
mkdir -p "$out"
[ -f "$build/lib/libmaccrt.a" ] || { echo "dispatch.sh: $build/lib/libmaccrt.a missing (make first)" >&2; exit 1; }
$cc -O2 -std=gnu11 -I"$root/runtime" -I"$root/include" -pthread "$root/bench/dispatch.c" \
    "$build/lib/libmaccrt.a" -fopenmp -ldl -lm -o "$out/dispatch"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "run: dispatch NGPUS $nb $kus $helpers (best of $reps)"
best() { # NGPUS -> "tasks_per_s efficiency policy_calls_per_task cpu_us_per_task end_us" (DISPATCH_FLOOR=1:
    # the floor); the run with the most tasks/s, and the least CPU time per task and the
    # shortest wait's end of any run
    b=
    c=
    w=
    i=0
    while [ $i -lt "$reps" ]; do
        all=$("$out/dispatch" "$1" "$nb" "$kus" "$helpers")
        line=$(echo "$all" | head -n 1)
        case $line in *check=PASS*) ;; *) echo "0 0 0 0 0"; return ;; esac
        r=$(echo "$line" | sed 's/.*tasks_per_s=\([0-9]*\) efficiency=\([0-9.]*\) policy_calls_per_task=\([0-9.]*\).*/\1 \2 \3/')
        u=$(echo "$line" | sed 's/.*cpu_us_per_task=\([0-9.]*\).*/\1/')
        x=$(echo "$all" | sed -n 's/.*the wait returned \([0-9-]*\) us after the last kernel.*/\1/p')
        b=$(printf '%s\n%s\n' "$b" "$r" | awk 'NF == 3 && $1 > m { m = $1; l = $0 } END { print l }')
        c=$(printf '%s\n%s\n' "$c" "$u" | awk 'NF == 1 && (m == "" || $1 < m) { m = $1 } END { print m }')
        w=$(printf '%s\n%s\n' "$w" "${x:--}" | awk 'NF == 1 && $1 != "-" && (m == "" || $1 < m) { m = $1 } END { print (m == "" ? "-" : m) }')
        i=$((i + 1))
    done
    echo "$b $c $w"
}
gpus=${GPUS:-1 2 4}
# of_floor: tasks/s over the floor's, the runtime's own share of the loss
# (the floor's efficiency is the machine's: its sleeps overshoot, 0.90 on the
# GPU machines' hosts, 0.55-0.6 on a 2-vCPU VM)
printf '%-6s %12s %11s %14s %14s %9s %10s %12s %12s %8s\n' gpus tasks/s efficiency policy/task floor_tasks/s of_floor "N / 1" \
    cpu_us/task floor_cpu_us end_us
t1=
for n in $gpus; do
    set -- $(best "$n")
    t=$1 e=$2 p=$3 u=$4 w=$5
    set -- $(DISPATCH_FLOOR=1 best "$n")
    f=$1 fu=$4
    [ -n "$t1" ] || t1=$t
    r=$(awk -v a="$t1" -v b="$t" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
    of=$(awk -v a="$f" -v b="$t" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')
    printf '%-6s %12s %11s %14s %14s %9s %10s %12s %12s %8s\n' "$n" "$t" "$e" "$p" "$f" "$of" "$r" "$u" "$fu" "$w"
done
# The runtime lock's holds by completing helpers, from one traced run each
# (MACC_TRACE; holds over 2 us): on a busy many-core machine tasks/s moves
# by 2x between calls, while these medians separate changes to the
# completion's critical section.
if command -v python3 >/dev/null 2>&1; then
    for n in $gpus; do
        MACC_TRACE="$out/trace$n.json" "$out/dispatch" "$n" "$nb" "$kus" "$helpers" > /dev/null
        python3 "$root/tools/tracestat.py" --by-name hold:lock "$out/trace$n.json" | awk -v n="$n" '
            /^span/ { span = $2 }
            $2 == "hold:lock" && $3 == "task__finish_gpu" { h += $5; med = med (med == "" ? "" : " / ") $6 }
            END { printf "%d GPU(s): completions held the runtime lock %.1f ms of %.1f ms (median hold per device: %s us)\n", n, h, span, med }'
    done
    # A helper's time per task, the mean over the GPUs (tracestat --per-task,
    # the same traced runs): beyond the run, what the runtime costs it, and
    # which waits make that up.
    for n in $gpus; do
        python3 "$root/tools/tracestat.py" --per-task "$out/trace$n.json" | awk -v n="$n" '
            $1 ~ /^nvidia/ { g++; for (i = 3; i <= NF; i++) s[i] += $i }
            END { if (g) printf "%d GPU(s): us per task: run %.1f, maps %.1f, unmap %.1f, completion %.1f; waits: directory lock %.1f, data %.1f, runtime lock %.1f\n",
                  n, s[3] / g, s[4] / g, s[5] / g, s[6] / g, s[7] / g, s[8] / g, s[9] / g }'
    done
fi
