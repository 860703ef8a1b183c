#!/bin/sh
# Copy Clang 16's OpenMP offload runtime into LIBDIR, self-contained, for a
# machine that has an NVIDIA GPU and its driver but no LLVM:
#
#   tools/clang-offload-lib.sh LIBDIR
#
# LIBDIR receives libomp.so.5, libomptarget.so.16, the CUDA plugins under the
# names libomptarget 16 dlopens (libomptarget.rtl.cuda.nextgen.so, which it
# loads by default, and libomptarget.rtl.cuda.so, its fallback), unchanged,
# and libLLVM-16.so.1, which they need. The distribution's libLLVM with its
# dependencies (z3, xml2, icu, ...) is about 40 MB compressed, so a reduced one
# is linked from the same LLVM build's static archives: only the objects that
# the symbols libomptarget and the plugins import pull in (same soname, symbol
# version LLVM_16, -Bsymbolic-functions). FULL_LIBLLVM=1 copies the
# distribution's instead. Every other dependency outside glibc, libgcc_s and
# libstdc++ is copied too, recursively. Programs built with clang-16 -fopenmp
# --offload-arch=... run with LD_LIBRARY_PATH=LIBDIR plus a libcuda.so link to
# the driver's libcuda.so.1 there (the plugin dlopens the unversioned name;
# tests/conformance/clang/run-on-gpu.sh and bench/apps.sh make it).
#
# Environment: LLVM_CONFIG (llvm-config-16). Needs (Debian 12): llvm-16
# llvm-16-dev libomp-16-dev, g++.
set -u
die() { echo "clang-offload-lib: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: clang-offload-lib.sh LIBDIR"
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-16}
libdir=$("$LLVM_CONFIG" --libdir) || die "$LLVM_CONFIG not found"
strip_cmd=$(command -v llvm-strip-16 || command -v strip) || die "no strip"
mkdir -p "$1" || die "cannot create $1"
L=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/clang-offload-lib.XXXXXX") || die "mktemp"
trap 'rm -rf "$work"' EXIT

cp -L "$libdir/libomp.so.5" "$libdir/libomptarget.so.16" "$L/" || die "no libomp/libomptarget in $libdir"
cp -L "$libdir/libomptarget.rtl.cuda.nextgen.so.16" "$L/libomptarget.rtl.cuda.nextgen.so"
cp -L "$libdir/libomptarget.rtl.cuda.so.16" "$L/libomptarget.rtl.cuda.so"
if [ "${FULL_LIBLLVM:-0}" = 1 ]; then
    cp -L "$libdir/libLLVM-16.so.1" "$L/"
else
    for f in libomptarget.so.16 libomptarget.rtl.cuda.nextgen.so libomptarget.rtl.cuda.so; do
        nm -D --undefined-only "$L/$f" | awk '/@LLVM_16$/ { sub(/@LLVM_16$/, "", $2); print $2 }'
    done | LC_ALL=C sort -u > "$work/llvm-syms.txt"
    echo 'LLVM_16 { global: *; };' > "$work/llvm.map"
    syslib() { for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64; do
        [ -e "$d/$1" ] && { echo "$d/$1"; return; }; done; echo "$1"; }
    # shellcheck disable=SC2046
    "$(command -v g++ || command -v clang++-16)" -shared -o "$L/libLLVM-16.so.1" \
        -Wl,-soname,libLLVM-16.so.1 -Wl,--version-script="$work/llvm.map" \
        -Wl,-Bsymbolic-functions -Wl,-z,nodelete -Wl,--no-undefined \
        $(sed 's/^/-Wl,-u,/' "$work/llvm-syms.txt") \
        -Wl,--start-group "$libdir"/libLLVM*.a -Wl,--end-group \
        "$(syslib libz.so.1)" "$(syslib libzstd.so.1)" "$(syslib libtinfo.so.6)" \
        -lpthread -ldl -lrt -lm > "$work/libllvm.log" 2>&1 ||
        { cat "$work/libllvm.log"; die "reduced libLLVM link failed"; }
    "$strip_cmd" --strip-unneeded "$L/libLLVM-16.so.1"
    nm -D --defined-only "$L/libLLVM-16.so.1" | awk '{ print $3 }' | sed -n 's/@@LLVM_16$//p' |
        LC_ALL=C sort -u > "$work/llvm-defined.txt"
    missing=$(LC_ALL=C comm -23 "$work/llvm-syms.txt" "$work/llvm-defined.txt")
    [ -z "$missing" ] || die "reduced libLLVM lacks: $missing"
fi
# every dependency outside glibc/libgcc_s/libstdc++, recursively
base='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libgcc_s|libstdc\+\+)\.so'
i=0
while [ $i -lt 10 ]; do
    for f in "$L"/*.so*; do
        LD_LIBRARY_PATH=$L ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
    done | sort -u | while read -r name path; do
        printf '%s\n' "$name" | grep -Eq "$base" && continue
        [ -e "$L/$name" ] || { cp -L "$path" "$L/$name"; echo "$name"; }
    done > "$work/added.txt"
    [ -s "$work/added.txt" ] || break
    i=$((i + 1))
done
missing=$(for f in "$L"/*.so*; do LD_LIBRARY_PATH=$L ldd "$f" | grep 'not found'; done | sort -u)
[ -z "$missing" ] || die "unresolved: $missing"
exit 0
