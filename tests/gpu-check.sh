#!/bin/sh
# GPU check, run on a machine with an NVIDIA GPU and nvcc (the device machine):
#   make gpu-check [MACC=path/to/prebuilt/macc]      (or: sh tests/gpu-check.sh BUILD)
# Builds the runtime and its CUDA plugin from this tree into BUILD-gpu, uses a
# macc binary built elsewhere (the translator needs tree-sitter, which that
# machine lacks), then builds every sample and end-to-end test and runs each
# three ways: on the GPU alone (MACC_DEVICES=nvidia, MACC_TARGET_OFFLOAD=
# mandatory), shared among all devices, and host-only. Prints
# "N passed, N failed". GPU_CHECK_JOBS=n (default 1) runs n programs at once
# (each program's three runs stay in order; the output is printed in program
# order at the end): correctness only, the timings they print then mean less.
set -u
build=${1:-build}
top=$(pwd)
gbuild=$top/$build-gpu
macc_src=${MACC:-$top/$build/bin/macc}
jobs_max=${GPU_CHECK_JOBS:-1}
res=$(mktemp -d)
seq=0
# A check's results go to its own files (it may run in the background):
# $res/NNN.out (what it prints) and $res/NNN.res (one ok or ko per run).
ok() { echo ok >> "$res/$cur.res"; }
ko() { echo ko >> "$res/$cur.res"; echo "FAIL: $*"; }

command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
nvcc --version | tail -n 2
if ! make --no-print-directory BUILD="$gbuild" runtime > "$top/gpu-build.log" 2>&1; then
    tail -n 30 "$top/gpu-build.log"
    echo "0 passed, 1 failed"
    exit 1
fi
if [ ! -f "$gbuild/lib/libmaccrt_cuda.a" ]; then
    echo "gpu-check: the CUDA plugin was not built (no CUDA headers?)"
    echo "0 passed, 1 failed"
    exit 1
fi
mkdir -p "$gbuild/bin" "$gbuild/progs"
cp "$macc_src" "$gbuild/bin/macc"
macc=$gbuild/bin/macc

check_one() { # name, source, args... (output to $res/$cur.out)
    name=$1; src=$2; shift 2
    bin=$gbuild/progs/$name
    flags=$(sed -n '1s|^// MACC_FLAGS: ||p' "$src")
    # shellcheck disable=SC2086
    if ! "$macc" -O2 ${CHECK_FLAGS:-} $flags "$src" -o "$bin" -lm > "$gbuild/progs/$name.build.log" 2>&1; then
        head -n 30 "$gbuild/progs/$name.build.log"
        ko "$name: build failed"
        return
    fi
    for mode in gpu all host; do
        case $mode in
        gpu) env="MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory" ;;
        all) env="" ;;
        host) env="MACC_DEVICES=host" ;;
        esac
        log=$gbuild/progs/$name.$mode.log
        # shellcheck disable=SC2086
        if env $env MACC_STATS=1 timeout --foreground 300 "$bin" "$@" > "$log" 2>&1; then
            ok
            echo "ok   $name ($mode): $(grep -E 'check:|PASS|GB/s|GFLOP' "$log" | head -n 2 | tr '\n' ' ')"
        else
            tail -n 15 "$log"
            ko "$name ($mode)"
        fi
    done
    grep -E '^macc: (device|nvidia|host)' "$gbuild/progs/$name.all.log" | head -n 4
}

# check NAME SOURCE ARGS...: check_one, in the background when GPU_CHECK_JOBS > 1
check() {
    seq=$((seq + 1))
    cur=$(printf '%03d' "$seq")
    : > "$res/$cur.res"
    if [ "$jobs_max" -gt 1 ]; then
        # running: the checks started before this one (seq - 1) less the
        # finished ones, counted by the files they leave (dash's `jobs` in a
        # pipe or $(...) sees no jobs, and every check ran at once)
        while [ $((seq - 1 - $(find "$res" -name '*.done' | wc -l))) -ge "$jobs_max" ]; do
            sleep 0.2
        done
        # a line on stderr as each program ends (its full output comes at
        # the end, in program order): a run cut short still shows which ended
        (t0=$(date +%s)
         check_one "$@" > "$res/$cur.out" 2>&1
         echo "gpu-check: $1: $(grep -c '^ok' "$res/$cur.res") ok, $(grep -c '^ko' "$res/$cur.res") failed ($(($(date +%s) - t0)) s)" >&2
         : > "$res/$cur.done") &
    else
        check_one "$@" > "$res/$cur.out" 2>&1
        cat "$res/$cur.out"
    fi
}

check nbody "$top/samples/nbody.c" 32768 4 2048
check stream "$top/samples/stream.c" 33554432 10 4194304
check matmul "$top/samples/matmul.c" 8 512
# managed memory (--managed) and the same data directives with explicit copies
CHECK_FLAGS=--managed check managed_struct "$top/samples/managed_struct.c" 4096 512 256
check jacobi "$top/samples/jacobi.c" 1024 100
CHECK_FLAGS=--managed check jacobi_managed "$top/samples/jacobi.c" 1024 100
check alloc_loop "$top/samples/alloc_loop.c" 1048576 50
CHECK_FLAGS=--managed check alloc_loop_managed "$top/samples/alloc_loop.c" 1048576 50
CHECK_FLAGS=--managed check stream_managed "$top/samples/stream.c" 33554432 10 4194304
# placement of managed data (--managed in their first line; MACC_PLACEMENT=otm by default)
check bfs "$top/samples/bfs.c" 1048576 8 8
check srad "$top/samples/srad.c" 1024 1024 5
for src in "$top"/tests/e2e/*.c; do
    check "$(basename "$src" .c)" "$src"
done
wait
if [ "$jobs_max" -gt 1 ]; then
    for f in "$res"/*.out; do
        cat "$f"
    done
fi
# the CUDA plugin's other copy paths: the driver's pageable copies, every
# copy staged, registrations undone at synchronisation points, and every
# section registered and kept past them (pin_reuse frees, reallocates and
# unmaps its buffers); --pinned's heap registration turned off at run time
# (pinned_heap then expects no block page-locked), and with a lower minimum;
# each GPU offered as two, three or four devices (MACC_CUDA_SPLIT: tasks, data
# regions and device-to-device fills between the devices of one GPU); nbody
# with two lanes per GPU (its placed tasks wait in the queue for a free lane)
seq=$((seq + 1))
cur=$(printf '%03d' "$seq")
for pv in "copy_paths MACC_CUDA_STAGE=0" "copy_paths MACC_CUDA_PIN=0" \
    "copy_paths MACC_CUDA_PIN_KEEP=0 MACC_CUDA_PIN_MIN=65536" \
    "copy_paths MACC_CUDA_PIN_MIN=65536" "copy_paths MACC_CUDA_PIN=0 MACC_CUDA_STAGE_NT=0" \
    "pin_reuse MACC_CUDA_PIN_MIN=65536" \
    "pin_reuse MACC_CUDA_PIN_KEEP=0" "pinned_heap MACC_CUDA_PIN_HEAP=0" \
    "pinned_heap MACC_CUDA_PIN_MIN=65536" "matmul MACC_CUDA_SPLIT=2" "jacobi MACC_CUDA_SPLIT=2" \
    "nbody MACC_CUDA_SPLIT=3" "matmul MACC_CUDA_SPLIT=4" "nbody MACC_CUDA_STREAMS=2"; do # (the default registers 4 MiB and more, kept)
    p=${pv%% *}
    v=${pv#* }
    log=$gbuild/progs/$p.$(echo "$v" | tr ' =' '__').log
    # shellcheck disable=SC2086
    if env $v MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory timeout --foreground 120 "$gbuild/progs/$p" > "$log" 2>&1 &&
        # matmul's 512 tasks on every device of the split GPU (two, four)
        { [ "$pv" != "matmul MACC_CUDA_SPLIT=2" ] || [ "$(grep -c '(nvidia:[01]): [1-9]' "$log")" -eq 2 ]; } &&
        { [ "$pv" != "matmul MACC_CUDA_SPLIT=4" ] || [ "$(grep -c '(nvidia:[0-3]): [1-9]' "$log")" -eq 4 ]; }; then
        ok
        echo "ok   $p ($v): $(grep 'check:' "$log")"
    else
        tail -n 5 "$log"
        ko "$p ($v)"
    fi
done
# what kernels print reaches stdout (the helpers poll events, which do not
# write the device's printf buffer; the runtime synchronises each GPU at exit)
cat > "$gbuild/progs/devprintf.c" <<'PEOF'
#include <stdio.h>
int main(void)
{
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < 3; i++)
        printf("device line %d\n", i);
    return 0;
}
PEOF
if "$macc" -O2 "$gbuild/progs/devprintf.c" -o "$gbuild/progs/devprintf" > "$gbuild/progs/devprintf.build.log" 2>&1 &&
    MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory "$gbuild/progs/devprintf" > "$gbuild/progs/devprintf.log" 2>&1 &&
    [ "$(grep -c '^device line [012]$' "$gbuild/progs/devprintf.log")" -eq 3 ]; then
    ok
    echo "ok   devprintf: the kernel's printf lines reached stdout"
else
    cat "$gbuild/progs/devprintf.build.log" "$gbuild/progs/devprintf.log" | tail -n 5
    ko "devprintf: printf in a kernel printed nothing"
fi
# a program of three files whose device code links across them (one command,
# objects, a static library): one device copy of each declare target global
# that every file's kernels reach, another file's device functions called
seq=$((seq + 1))
cur=$(printf '%03d' "$seq")
if sh "$top/tests/e2e/multi/build.sh" "$macc" "$gbuild/progs/multi" -O2 > "$gbuild/progs/multi.build.log" 2>&1; then
    for b in one objs lib; do
        for mode in gpu host; do
            env="MACC_DEVICES=host"
            [ $mode = gpu ] && env="MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory"
            # shellcheck disable=SC2086
            if env $env timeout --foreground 120 "$gbuild/progs/multi/$b" > "$gbuild/progs/multi.$b.$mode.log" 2>&1 &&
                grep -qx PASS "$gbuild/progs/multi.$b.$mode.log"; then
                ok
                echo "ok   multi-file ($b, $mode)"
            else
                tail -n 5 "$gbuild/progs/multi.$b.$mode.log"
                ko "multi-file ($b, $mode)"
            fi
        done
    done
else
    tail -n 15 "$gbuild/progs/multi.build.log"
    ko "multi-file: build failed"
fi
pass=$(cat "$res"/*.res | grep -c '^ok')
fail=$(cat "$res"/*.res | grep -c '^ko')
rm -rf "$res"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
