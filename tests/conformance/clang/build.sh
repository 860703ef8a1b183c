#!/bin/sh
# Build the Clang reference bundle: every OpenMP_VV C test compiled by Clang 16
# for an NVIDIA sm_90 GPU, with the OpenMP offload runtime it needs, for
# run-on-gpu.sh to run on a machine that has the GPU but no LLVM.
#
#   tests/conformance/clang/build.sh [-j N] CONFORMANCE_DIR OUT_DIR
#
# CONFORMANCE_DIR holds openmp_vv/ (tests/ and ompvv/), as for run.sh.
# OUT_DIR (created; an existing one is replaced) receives:
#   clangref.tar.xz   bin/<test path without .c> (stripped), lib/ (runtime), probe
#   tests.tsv         test path, build status (built|BUILD), first error line
#   build-logs.tar.xz one log per test
#   tools/xzdec, tools/liblzma.so.5  a decompressor, for machines without xz
#   MANIFEST          compiler, flags, library list
#
# Environment: CLANG (clang-16), LLVM_CONFIG (llvm-config-16), CUDA_PATH
# (/usr/local/cuda), ARCH (sm_90), OPT (-O2), BUILD_TIMEOUT (120),
# FULL_LIBLLVM=1 to ship the distribution's libLLVM and all its dependencies
# (about twice the size) instead of the reduced one described below.
#
# Needs (Debian 12): clang-16 clang-tools-16 llvm-16 llvm-16-dev libomp-16-dev xz-utils xzdec,
# a CUDA toolkit (ptxas, nvlink) at CUDA_PATH.
#
# The runtime: libomp.so.5, libomptarget.so.16 and the CUDA plugins
# libomptarget.rtl.cuda.nextgen.so (the one libomptarget 16 loads by default)
# and libomptarget.rtl.cuda.so (its fallback when the first one fails to load or
# to initialise), copied unchanged. libomptarget and the plugins need libLLVM-16.so.1, which
# with its dependencies (z3, xml2, icu, ...) is too big to carry; the bundle
# holds instead a libLLVM-16.so.1 linked from the same LLVM build's static
# archives with only the objects that the symbols libomptarget and the plugins
# import pull in (same soname, symbol version LLVM_16, -Bsymbolic-functions).
# Libraries every Linux system has (glibc, libgcc_s, libstdc++) are not copied;
# every other dependency is, recursively.
set -u

die() { echo "clang-bundle: $*" >&2; exit 2; }

CLANG=${CLANG:-clang-16}
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-16}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
ARCH=${ARCH:-sm_90}
OPT=${OPT:-"-O2"}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-120}

# ---- one test (run by xargs) --------------------------------------------------
if [ "${1:-}" = --one ]; then
    t=$2
    cd "$CB_CONF" || exit 1
    rel=${t%.c}
    exe=$CB_STAGE/bin/$rel
    log=$CB_LOGS/$rel.build.log
    mkdir -p "${exe%/*}" "${log%/*}"
    # the compiler's temporary files (some are left behind when a link fails)
    TMPDIR=$CB_TMP; export TMPDIR
    # shellcheck disable=SC2086
    timeout -k 5 "$BUILD_TIMEOUT" "$CLANG" $OPT -fopenmp --offload-arch="$ARCH" \
        --cuda-path="$CUDA_PATH" -Wno-unknown-cuda-version -I openmp_vv/ompvv \
        "$t" -o "$exe" -lm > "$log" 2>&1 < /dev/null
    rc=$?
    if [ $rc -eq 0 ] && [ -x "$exe" ]; then
        st=built; why=
    else
        st=BUILD; rm -f "$exe"
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            why="build timed out after $BUILD_TIMEOUT s"
        else
            why=$(grep -m 1 -E 'error:|sorry, unimplemented|undefined reference|Assertion' "$log")
            [ -z "$why" ] && why=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
            [ -z "$why" ] && why="compiler exit status $rc, no message"
            # the file name as the suite's runner would show it, no build paths
            why=$(printf '%s' "$why" | tr '\t' ' ' | cut -c 1-300)
        fi
    fi
    printf '%s\t%s\t%s\n' "$t" "$st" "$why" > "$CB_LOGS/$rel.st"
    printf '%-6s %s\n' "$st" "$t"
    exit 0
fi

# ---- driver --------------------------------------------------------------------
jobs=$(nproc 2> /dev/null || echo 2)
while [ $# -gt 0 ]; do
    case $1 in
    -j) [ $# -ge 2 ] || die "-j needs a value"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || die "usage: build.sh [-j N] CONFORMANCE_DIR OUT_DIR"
conf=$(cd "$1" && pwd) || die "no directory $1"
[ -d "$conf/openmp_vv/tests" ] || die "$conf/openmp_vv/tests not found"
mkdir -p "$2" || die "cannot create $2"
out=$(cd "$2" && pwd)
command -v "$CLANG" > /dev/null || die "$CLANG not found"
libdir=$("$LLVM_CONFIG" --libdir) || die "$LLVM_CONFIG not found"
[ -x "$CUDA_PATH/bin/ptxas" ] || die "no CUDA toolkit at $CUDA_PATH"
strip_cmd=$(command -v llvm-strip-16 || command -v strip) || die "no strip"

work=$(mktemp -d "${TMPDIR:-/tmp}/clangref-build.XXXXXX") || die "mktemp"
trap 'rm -rf "$work"' EXIT
stage=$work/clangref
mkdir -p "$stage/bin" "$stage/lib" "$work/logs"

# 1. the tests, in run.sh's order
(cd "$conf" && find openmp_vv/tests -name '*.c' -type f) | grep -v '[[:space:]]' |
    LC_ALL=C sort > "$work/tests.txt"
n=$(wc -l < "$work/tests.txt")
echo "clang-bundle: $n tests, $CLANG $OPT -fopenmp --offload-arch=$ARCH, jobs $jobs"
mkdir -p "$work/tmp"
CB_CONF=$conf CB_STAGE=$stage CB_LOGS=$work/logs CB_TMP=$work/tmp
export CB_CONF CB_STAGE CB_LOGS CB_TMP CLANG CUDA_PATH ARCH OPT BUILD_TIMEOUT
xargs -P "$jobs" -n 1 sh "$0" --one < "$work/tests.txt"

while IFS= read -r t; do
    f=$work/logs/${t%.c}.st
    if [ -f "$f" ]; then cat "$f"; rm -f "$f"
    else printf '%s\tBUILD\tno build result recorded\n' "$t"; fi
done < "$work/tests.txt" > "$out/tests.tsv.new"
# build paths out of the messages: the work directory, the conformance directory
sed -e "s|$work/||g" -e "s|$conf/||g" "$out/tests.tsv.new" > "$out/tests.tsv"
rm -f "$out/tests.tsv.new"
built=$(awk -F '\t' '$2 == "built"' "$out/tests.tsv" | wc -l)
echo "clang-bundle: $built of $n built"

find "$stage/bin" -type f -exec "$strip_cmd" --strip-all {} +

# 2. a probe: does a target region run on the GPU?
cat > "$work/probe.c" << 'EOF'
#include <omp.h>
#include <stdio.h>
int main(void)
{
    int on_host = 1, ndev = omp_get_num_devices();
    #pragma omp target map(tofrom: on_host)
    on_host = omp_is_initial_device();
    printf("probe: %d device(s); target region ran on the %s\n", ndev, on_host ? "host" : "device");
    return on_host;
}
EOF
# shellcheck disable=SC2086
"$CLANG" $OPT -fopenmp --offload-arch="$ARCH" --cuda-path="$CUDA_PATH" -Wno-unknown-cuda-version \
    "$work/probe.c" -o "$stage/probe" > "$work/probe.log" 2>&1 || { cat "$work/probe.log"; die "probe build failed"; }
"$strip_cmd" --strip-all "$stage/probe"

# 3. the runtime, under the names libomptarget dlopens
L=$stage/lib
sh "$(dirname "$0")/../../../tools/clang-offload-lib.sh" "$L" || die "runtime copy failed"
missing=$(for f in "$L"/*.so* "$stage/probe"; do LD_LIBRARY_PATH=$L ldd "$f" | grep 'not found'; done | sort -u)
[ -z "$missing" ] || die "unresolved: $missing"

# 4. pack
(cd "$work" && tar -cf - clangref) | xz -9 -T "$jobs" > "$out/clangref.tar.xz" || die "tar failed"
(cd "$work" && tar -cf - logs) | xz -9 > "$out/build-logs.tar.xz"
mkdir -p "$out/tools"
if command -v xzdec > /dev/null; then
    cp -L "$(command -v xzdec)" "$out/tools/xzdec"
    lz=$(ldd "$out/tools/xzdec" | awk '$1 ~ /^liblzma/ { print $3 }')
    [ -z "$lz" ] || cp -L "$lz" "$out/tools/"
fi
cp "$(dirname "$0")/run-on-gpu.sh" "$out/run-on-gpu.sh"
{
    echo "compiler: $("$CLANG" --version | head -n 1)"
    echo "command: $CLANG $OPT -fopenmp --offload-arch=$ARCH --cuda-path=<CUDA> -Wno-unknown-cuda-version -I openmp_vv/ompvv <test> -o <exe> -lm"
    echo "cuda: $("$CUDA_PATH/bin/ptxas" --version | tail -n 1)"
    echo "tests: $n, built: $built"
    echo "libLLVM: $([ "${FULL_LIBLLVM:-0}" = 1 ] && echo distribution || echo reduced)"
    echo "lib:"; for f in "$L"/*; do echo "  ${f##*/} $(wc -c < "$f")"; done
} > "$out/MANIFEST"
echo "clang-bundle: $out: $(du -sh "$out" | cut -f 1) ($built of $n tests built)"
