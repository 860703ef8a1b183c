#!/bin/sh
# kernels.sh: builds bench/kernels with macc and runs it on the GPU.
#
#   usage: bench/kernels.sh BUILD_DIR [kernels arguments...]
#
# BUILD_DIR holds macc's build (BUILD_DIR/bin/macc); the program goes to
# BUILD_DIR/bench/kernels. Extra arguments go to the program:
# [nbodies [triad_n [nbody_reps [triad_reps]]]]. CUDA_ARCH (default sm_90)
# picks the GPU architecture. nvcc is taken from PATH, else /usr/local/cuda/bin.
# Exit status: the program's (0 PASS, 1 FAIL), or 1 if the build fails.
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [nbodies [triad_n [nbody_reps [triad_reps]]]]" >&2
    exit 2
fi
build=$1
shift
if [ ! -d "$build" ]; then
    echo "kernels.sh: $build: no such directory" >&2
    exit 1
fi
build=$(cd "$build" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${CUDA_ARCH:-sm_90}

if ! command -v nvcc >/dev/null 2>&1; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
        PATH=/usr/local/cuda/bin:$PATH
        export PATH
    else
        echo "kernels.sh: nvcc not found in PATH or /usr/local/cuda/bin" >&2
        exit 1
    fi
fi

cd "$root"
mkdir -p "$build/bench"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
if command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | paste -sd ';' -)"
else
    echo "nvidia-smi: not found"
fi
echo "nvcc: $(command -v nvcc)"

set -- "$build/bench/kernels" "$@"
echo "build: $build/bin/macc -O3 --cuda-arch=$arch bench/kernels.c bench/kernels_ref.cu -o $build/bench/kernels -lm"
"$build/bin/macc" -O3 "--cuda-arch=$arch" bench/kernels.c bench/kernels_ref.cu \
    -o "$build/bench/kernels" -lm

echo "run: MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory $*"
echo
status=0
MACC_DEVICES=nvidia MACC_TARGET_OFFLOAD=mandatory "$@" || status=$?
exit $status
