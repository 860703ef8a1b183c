#!/bin/sh
# The MPI module on a machine with NVIDIA GPUs, MPI and nvcc:
#   make gpu-check-mpi [MACC=path/to/prebuilt/macc]   (or: sh tests/mpi/gpu.sh BUILD)
# Builds the runtime, its CUDA plugin and libmaccrt_mpi (with its CUDA part)
# from this tree into BUILD-gpu (as make gpu-check does), uses a macc binary
# built elsewhere, builds samples/ring_g4.c with --mpi and runs it with one
# rank per GPU, the slices and ring buffers on the GPUs (MACC_MPI_DEVICE=gpu):
#   P = 1 (the ring degenerate; through staging buffers, and with the GPU
#   buffers given to MPI, MACC_MPI_CUDA_AWARE=1, which sends nothing at P = 1),
#   P = 2, 4, 8... up to the number of GPUs, through pinned staging buffers
#   (MACC_MPI_CUDA_AWARE=0) and, when the MPI is CUDA-aware, with GPU buffers
#   given to MPI; 2 threads per rank; sub-rings of 2 when there are 4 GPUs or
#   more; with one GPU, 2 ranks sharing it (the staging transfers); a G4 of
#   1.1 GB at P = the number of GPUs. Each run must say "slice on a GPU", run
#   its regions on the GPU (MACC_STATS) and print check: PASS (L1, L2 <
#   5e-7; no task on the host: MACC_STATS). Prints "N passed, N failed".
set -u
build=${1:-build}
top=$(pwd)
gbuild=$top/$build-gpu
macc_src=${MACC:-$top/$build/bin/macc}
pass=0
fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
ngpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
if ! command -v mpicc > /dev/null 2>&1 || ! command -v mpirun > /dev/null 2>&1; then
    ko "mpicc or mpirun not found (Debian: apt-get install libopenmpi-dev openmpi-bin)"
    finish
fi
mpirun --version 2>&1 | head -n 1
if ! make --no-print-directory BUILD="$gbuild" runtime > "$top/gpu-mpi-build.log" 2>&1; then
    tail -n 30 "$top/gpu-mpi-build.log"
    ko "make runtime"
    finish
fi
for lib in libmaccrt_cuda.a libmaccrt_mpi.a libmaccrt_mpi_cuda.a; do
    [ -f "$gbuild/lib/$lib" ] || { ko "$lib was not built (CUDA headers? mpicc?)"; finish; }
done
mkdir -p "$gbuild/bin" "$gbuild/progs"
cp "$macc_src" "$gbuild/bin/macc"
macc=$gbuild/bin/macc
if ! "$macc" --mpi -O2 "$top/samples/ring_g4.c" -o "$gbuild/progs/ring_g4" -lm > "$gbuild/progs/ring_g4.build.log" 2>&1; then
    cat "$gbuild/progs/ring_g4.build.log"
    ko "build samples/ring_g4.c"
    finish
fi
[ "$ngpus" -gt 0 ] || { ko "no GPU"; finish; }
MPIRUN="mpirun"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
export MACC_MPI_DEVICE=gpu MACC_MPI_TIMEOUT=${MACC_MPI_TIMEOUT:-300}

# run NAME NP ENV... -- ARGS...
run() {
    name=$1; np=$2; shift 2
    envs=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    [ $# -gt 0 ] && shift
    log=$gbuild/progs/ring_g4.$(echo "$name" | tr ' ,=' '___').log
    # shellcheck disable=SC2086
    if env $envs MACC_STATS=1 timeout 600 $MPIRUN -np "$np" "$gbuild/progs/ring_g4" "$@" > "$log" 2>&1 &&
        grep -q '^check: .*PASS' "$log" && grep -q 'slice on a GPU' "$log" &&
        ! awk '$1 == "macc:" && $2 == "host" && $3 > 0 { f = 1 } END { exit !f }' "$log"; then
        ok
        echo "ok   $name: $(grep -E '^ring_g4:' "$log" | sed 's/^ring_g4: //')"
        grep -E '^(check|time per|memory per rank|ring bandwidth)' "$log" | sed 's/^/       /'
    else
        tail -n 25 "$log"
        ko "$name"
    fi
}

run "P=1, one GPU" 1 -- -k 96 -n 4
run "P=1, one GPU, GPU buffers to MPI" 1 MACC_MPI_CUDA_AWARE=1 -- -k 96 -n 4
np=2
while [ "$np" -le "$ngpus" ]; do
    run "P=$np, staging" "$np" MACC_MPI_CUDA_AWARE=0 -- -k 96 -n 4
    run "P=$np, CUDA-aware if the MPI is" "$np" -- -k 96 -n 4
    run "P=$np, 2 threads per rank" "$np" -- -k 96 -n 4 -t 2
    np=$((np * 2))
done
[ "$ngpus" -ge 4 ] && run "P=4, sub-rings of 2" 4 -- -k 96 -n 4 -s 2
if [ "$ngpus" -eq 1 ]; then
    # one GPU: two ranks share it (node-local rank modulo the GPUs), so that
    # the transfers through the staging buffers run too (memory measured
    # there counts both ranks' slices)
    run "P=2 sharing one GPU, staging" 2 MACC_MPI_CUDA_AWARE=0 -- -k 96 -n 4
    run "P=2 sharing one GPU, 2 threads per rank" 2 MACC_MPI_CUDA_AWARE=0 -- -k 96 -n 4 -t 2
fi
# a larger G4 (1.1 GB whole, 1/P per GPU) with the reference on every rank
run "P=$ngpus, G4 of 1.1 GB" "$ngpus" -- -k 416 -n 3
finish
