#!/bin/sh
# share.sh: seed 003's evaluation side by side. Builds samples/nbody.c,
# samples/matmul.c and samples/stream.c with macc and runs each host-only
# (MACC_DEVICES=host), GPU-only (MACC_DEVICES=nvidia) and shared (every
# device), then prints, per program, the throughput of each and
#   shared / max(host, GPU)   (target >= 0.99: sharing never loses)
#   shared / (host + GPU)     (target >= 0.96: the paper's "added peak")
# "gpu" is one GPU (nvidia:0) and "shared" the host with it. With two or more
# GPUs a second table follows from the same run: all GPUs alone against one
# (ratio), and the host with every GPU (shared; sh/max over the better of
# the host and all GPUs).
#
# Every run's throughput is also written to BUILD_DIR/bench/share/values.txt
# ("program round value setting...", in the order they ran): a single slow
# run shows there, where the best of REPS hides it.
#
#   usage: bench/share.sh BUILD_DIR [REPS]      (BENCH_GPUS=n: the first n GPUs only;
#                                               SHARE_TRACE=1: also a traced shared run each;
#                                               PROGRAMS="nbody stream": only those rows;
#                                               HOST_REPS=n: the host alone only in the first
#                                               n rounds: its runs are the long ones)
#
# BUILD_DIR holds macc's build (BUILD_DIR/bin/macc, BUILD_DIR/lib); each
# configuration runs REPS times (default 3) and the best run counts; the
# "pairs" columns are the median over rounds of the ratio of one round's two
# runs side by side (shared over GPU alone, N GPUs over one), which the
# machine's drift between rounds moves less than best-of-REPS. Sizes:
# NBODY="n steps BS", MATMUL="NB BS", STREAM="n ntimes BS" (environment).
# The row "nbody-L" is the same sample at NBODY_L (default "524288 2 8192";
# NBODY_L= leaves it out): the sample gives one thread per body, and each
# thread's loop over all bodies is a chain of dependent operations, so a
# step takes as long as one task's kernel once the GPU runs all of a step's
# tasks at once (65536 bodies: 7 ms on an H100 or H200 with 32 tasks, and
# the same with 16 tasks per GPU on two); two GPUs then cannot shorten it.
# 524288 bodies in blocks of 8192 (64 tasks a step) fill two GPUs.
# The row "matmul-L" is samples/matmul.c at MATMUL_L (default "8 512";
# MATMUL_L= leaves it out): the same matrices (N = 4096) in 512 tasks of 2 MiB
# tiles instead of 4096 of 512 KiB. A 256 x 256 tile product is about 20 us
# of one GPU's time at its throughput, so with 16 x 16 tiles the runtime's
# dispatch (tens of thousands of tasks a second), not the GPUs, bounds one
# GPU and two alike.
# The rows "matmulP" and "streamP" are the same samples built with
# `macc --pinned` (their matrices and arrays page-locked where they are
# allocated: copies at DMA speed, no staging); PINNED="matmul" or PINNED=
# chooses which of them run (default "matmul stream").
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [REPS]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
reps=${2:-3}
host_reps=${HOST_REPS:-$reps}
root=$(cd "$(dirname "$0")/.." && pwd)
nbody_args=${NBODY:-65536 4 2048}
nbodyl_args=${NBODY_L-524288 2 8192}
matmul_args=${MATMUL:-16 256}
matmull_args=${MATMUL_L-8 512}
stream_args=${STREAM:-33554432 10 2097152}
[ -x /usr/local/cuda/bin/nvcc ] && PATH=$PATH:/usr/local/cuda/bin && export PATH

out=$build/bench/share
mkdir -p "$out"
: > "$out/values.txt"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sed 's/^/gpu: /'
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
. "$root/bench/gpus.sh"
for s in nbody matmul stream; do
    "$build/bin/macc" -O3 -march=native "$root/samples/$s.c" -o "$out/$s" -lm
done
pinned=${PINNED-matmul stream}
for s in $pinned; do
    "$build/bin/macc" -O3 -march=native --pinned "$root/samples/$s.c" -o "$out/${s}P" -lm
done

# metric PROGRAM LOGFILE: the throughput the program printed
metric() {
    case $1 in
    nbody | nbodyL | matmul | matmulL | matmulP) sed -n 's/.*GFLOP\/s=\([0-9.]*\).*/\1/p' "$2" | head -n 1 ;;
    stream | streamP) awk '/^Pipelined/ { print $2 }' "$2" ;;
    esac
}

# program PROGRAM: sets exe and args (nbodyL and matmulL: the same binaries)
program() {
    case $1 in
    nbody) args=$nbody_args exe=$out/nbody ;;
    nbodyL) args=$nbodyl_args exe=$out/nbody ;;
    matmul) args=$matmul_args exe=$out/matmul ;;
    matmulL) args=$matmull_args exe=$out/matmul ;;
    stream) args=$stream_args exe=$out/stream ;;
    matmulP) args=$matmul_args exe=$out/matmulP ;;
    streamP) args=$stream_args exe=$out/streamP ;;
    esac
}

# unit_of PROGRAM: what metric reports
unit_of() {
    case $1 in stream | streamP) echo GB/s ;; *) echo GFLOP/s ;; esac
}

# tasks_line PROGRAM LOGFILE: "PROGRAM: device tasks  device tasks" from MACC_STATS
tasks_line() {
    echo "$1: $(awk '/^macc: (host|nvidia)/ { printf "%s %s  ", $2, $3 }' "$2" 2>/dev/null)"
}

# one PROGRAM REP ENV...: the throughput of one run (0 when it fails); its log
# is $out/PROGRAM.<ENV>.REP.log
one() {
    prog=$1
    rep=$2
    shift 2
    program "$prog"
    log=$out/$prog.$(echo "$*" | tr ' =:,' '____').$rep.log
    # shellcheck disable=SC2086
    if env "$@" MACC_STATS=1 timeout 300 "$exe" $args > "$log" 2>&1 && grep -q 'check: PASS' "$log"; then
        v=$(metric "$prog" "$log")
        echo "$prog $rep ${v:-0} $*" >> "$out/values.txt"
        echo "${v:-0}"
    else
        echo "share.sh: $prog $* failed (see $log)" >&2
        echo 0
    fi
}

# max A B
max() {
    awk -v a="$1" -v b="$2" 'BEGIN { print (b > a) ? b : a }'
}

# The configurations of one program run in turn, REPS rounds (host, GPU,
# shared, then all GPUs and everything), and the best run of each counts:
# a drift of the machine over the minutes of a program's runs then weighs on
# every configuration alike (run one configuration's REPS runs after the
# other's, and sh/max moved by several percent between calls with the same
# devices doing the same work).
echo "sizes: nbody $nbody_args | nbody-L ${nbodyl_args:-none} | matmul $matmul_args | matmul-L ${matmull_args:-none} | stream $stream_args | --pinned: ${pinned:-none} | best of $reps (host alone: $host_reps)"
echo "commit: ${MACC_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
# host alone, one GPU alone, host + that GPU; with two or more GPUs also all
# GPUs alone and everything (the second table: 1 GPU -> N GPUs, and sharing
# with every device)
rows2=
tasks=
tasks2=
printf '%-8s %-8s %12s %12s %12s %10s %10s %10s\n' program unit host gpu shared 'sh/max' 'sh/sum' 'pairs'
progs=nbody
[ -n "$nbodyl_args" ] && progs="$progs nbodyL"
progs="$progs matmul"
[ -n "$matmull_args" ] && progs="$progs matmulL"
progs="$progs stream"
for s in $pinned; do progs="$progs ${s}P"; done
[ -n "${PROGRAMS:-}" ] && progs=$(for p in $progs; do case " $PROGRAMS " in *" $p "*) echo "$p" ;; esac; done)
# median_pairs "A1 B1 A2 B2 ..." H: the median over rounds of A_i / max(H, B_i), each
# round's runs side by side (best of N takes each column's luckiest run apart)
median_pairs() {
    # shellcheck disable=SC2086
    printf '%s %s\n' $1 | awk -v h="$2" -f "$root/bench/median.awk"
}

for p in $progs; do
    unit=$(unit_of "$p")
    h=0 g=0 s=0 gn=0 sn=0
    pairs= pairs_n= pairs_sn=
    i=0
    while [ "$i" -lt "$reps" ]; do
        i=$((i + 1))
        [ "$i" -le "$host_reps" ] && h=$(max "$h" "$(one "$p" "$i" MACC_DEVICES=host)")
        # The configurations run in turn, in reverse order every second round: a
        # run's place in its round moves it (STREAM on two H200s, 2026-11-30: the
        # same configuration first and fourth of each round, 1.000 and 0.940 by
        # pairs), and in one order the shared runs and N GPUs always came after
        # the one GPU they are compared with.
        order="g1 s1"
        [ "$ngpus" -ge 2 ] && order="$order gn sn"
        [ $((i % 2)) -eq 0 ] && order=$(echo "$order" | awk '{ for (k = NF; k > 0; k--) printf "%s ", $k }')
        for c in $order; do
            case $c in
            g1) gi=$(one "$p" "$i" MACC_DEVICES=nvidia:0 MACC_TARGET_OFFLOAD=mandatory) ;;
            s1) si=$(one "$p" "$i" MACC_DEVICES=host,nvidia:0) ;;
            gn) gni=$(one "$p" "$i" MACC_DEVICES=nvidia:"$gpus_list" MACC_TARGET_OFFLOAD=mandatory) ;;
            sn) sni=$(one "$p" "$i" MACC_DEVICES=host,nvidia:"$gpus_list") ;;
            esac
        done
        g=$(max "$g" "$gi")
        s=$(max "$s" "$si")
        pairs="$pairs $si $gi"
        if [ "$ngpus" -ge 2 ]; then
            gn=$(max "$gn" "$gni")
            sn=$(max "$sn" "$sni")
            pairs_n="$pairs_n $gni $gi"
            pairs_sn="$pairs_sn $sni $gni"
        fi
    done
    med=$(median_pairs "$pairs" "$h")
    # how the last shared run split the tasks (MACC_STATS)
    tasks="$tasks$(tasks_line "$p" "$out/$p.MACC_DEVICES_host_nvidia_0.$reps.log")
"
    awk -v p="$p" -v u="$unit" -v h="$h" -v g="$g" -v s="$s" -v med="$med" 'BEGIN {
        m = h > g ? h : g
        printf "%-8s %-8s %12.1f %12.1f %12.1f %10.3f %10.3f %10.3f\n", p, u, h, g, s,
               (m > 0 ? s / m : 0), (h + g > 0 ? s / (h + g) : 0), med }'
    if [ "$ngpus" -ge 2 ]; then
        tasks2="$tasks2$(tasks_line "$p" "$out/$p.MACC_DEVICES_host_nvidia_$(echo "$gpus_list" | tr ',' '_').$reps.log")
"
        rows2="$rows2$p $unit $g $gn $h $sn $(median_pairs "$pairs_n" 0) $(median_pairs "$pairs_sn" "$h")
"
    fi
done

if [ "$ngpus" -ge 2 ]; then
    echo
    printf '%-8s %-8s %10s %10s %7s %7s %10s %10s %10s %8s %8s\n' program unit '1 GPU' "$ngpus GPUs" ratio pairs \
        host GPUs shared 'sh/max' pairs
    printf '%s' "$rows2" | awk -v n="$ngpus" '{
        m = $5 > $4 ? $5 : $4
        printf "%-8s %-8s %10.1f %10.1f %7.2f %7.2f %10.1f %10.1f %10.1f %8.3f %8.3f\n", $1, $2, $3, $4,
               ($3 > 0 ? $4 / $3 : 0), $7, $5, $4, $6, (m > 0 ? $6 / m : 0), $8 }'
fi

echo
echo "tasks per device, the last shared run (host + nvidia:0):"
printf '%s' "$tasks" | sed 's/^/  /'
if [ -n "$tasks2" ]; then
    echo "tasks per device, the last run with every device:"
    printf '%s' "$tasks2" | sed 's/^/  /'
fi

# SHARE_TRACE=1: each program once more, shared, with MACC_TRACE, and where
# the time went (tools/tracestat.py; the traces stay in BUILD_DIR/bench/share)
if [ -n "${SHARE_TRACE:-}" ]; then
    for p in $progs; do
        program "$p"
        tr=$out/$p.shared.trace.json
        echo
        # shellcheck disable=SC2086
        if MACC_DEVICES=host,nvidia:0 MACC_TRACE="$tr" timeout 300 "$exe" $args > "$out/$p.trace.log" 2>&1; then
            echo "$p, shared, traced: $(metric "$p" "$out/$p.trace.log") $(unit_of "$p")"
            python3 "$root/tools/tracestat.py" "$tr" || true
            python3 "$root/tools/tracestat.py" --windows auto --cats task,wait:lock,wait:data "$tr" || true
        else
            echo "share.sh: $p traced run failed (see $out/$p.trace.log)" >&2
        fi
    done
fi
