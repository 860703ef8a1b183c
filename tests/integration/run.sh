#!/bin/sh
# Build-system integration tests: macc dropped into other people's builds.
#   sh tests/integration/run.sh BUILD      (BUILD holds bin/macc, lib/, include/)
#
#   make-project/   a Makefile that translates with `macc --translate` in a
#                   pattern rule and compiles with cc -MMD -MP: build, run,
#                   header touched -> only the dependent object rebuilt, no-op.
#   cmake-project/  CMake with CMAKE_C_COMPILER=macc (the compiler checks, the
#                   build, dependencies), and with add_custom_command running
#                   `macc --translate` and the usual C compiler.
#   cmake-multi/    CMake, macc as the compiler: tests/e2e/multi's three files,
#                   two in a static library, device code linked across them
#                   (built with nvcc where there is one).
#   install         make install / uninstall into a temporary prefix and a
#                   DESTDIR; the installed macc, macc.pc and man page work.
#
# Everything is built host-only (MACC_NVCC empty; cmake-multi: with nvcc) in a temporary directory,
# removed at the end. Prints "N passed, N failed" (and appends it to $RESULTS,
# default BUILD/results.txt, for `tests/run.sh summary`); exits 1 on failure.
# Lines starting with "note:" are driver gaps found on the way; they do not fail.
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$1
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
macc=$build/bin/macc
RESULTS=${RESULTS:-$build/results.txt}
if [ ! -x "$macc" ]; then
    echo "integration: $macc not found; run make first" >&2
    exit 2
fi

# Host-only builds; the sub-makes do not inherit the caller's make options or
# command-line variables (make check's BUILD=..., SANITIZE=...).
export MACC_NVCC=
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES 2>/dev/null || true
MAKE=${MAKE_PROG:-make}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/macc-integration-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
log=$tmp/log

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
ko() {
    fail=$((fail + 1))
    echo "FAIL: $*"
    [ -s "$log" ] && tail -n 25 "$log" | sed 's/^/    /'
    return 0
}
# t NAME CMD...: a test step; its output goes to $log.
t() {
    name=$1
    shift
    if "$@" > "$log" 2>&1; then ok "$name"; else ko "$name"; fi
}
note() { echo "note: $*"; }
# touch_later FILE: make FILE newer than everything built so far, also where
# the file system keeps whole seconds.
touch_later() { sleep 1; touch "$1"; }

# ---- make-project --------------------------------------------------------------
mp=$tmp/make-project
cp -R "$here/make-project" "$mp"
m() { "$MAKE" --no-print-directory -C "$mp" MACC="$macc" "$@"; }

t "make: build (translate, cc -MMD -MP, link libmaccrt.a)" m
t "make: the program runs and checks itself" sh -c '"$1" | grep -qx PASS' sh "$mp/out/saxpy-demo"
t "make: the translated host file is kept, with #line back to saxpy.c" \
    grep -q '^#line [0-9]* "saxpy.c"' "$mp/out/saxpy.host.c"
t "make: a second make is a no-op" m -q
# touching the header that saxpy.c includes translates saxpy.c again (macc
# translates what the preprocessor makes of it) and rebuilds its object, not main's
touch_later "$mp/params.h"
if m > "$log" 2>&1 && grep -q 'saxpy.host.o' "$log" && ! grep -q ' main.c' "$log" &&
    grep -q -- '--translate .*saxpy.c' "$log"; then
    ok "make: header touched: only the dependent object rebuilt"
else
    ko "make: header touched: only the dependent object rebuilt"
fi
t "make: no-op again after the rebuild" m -q
# touching the source re-translates it
touch_later "$mp/saxpy.c"
if m > "$log" 2>&1 && grep -q -- '--translate .*saxpy.c' "$log" && "$mp/out/saxpy-demo" | grep -qx PASS; then
    ok "make: source touched: translated again, still PASS"
else
    ko "make: source touched: translated again, still PASS"
fi

# ---- cmake-project -------------------------------------------------------------
if command -v cmake > /dev/null 2>&1; then
    cs=$tmp/cmake-src
    cp -R "$here/cmake-project" "$cs"
    ca=$tmp/cmake-compiler
    cb=$tmp/cmake-translate

    # a. macc as CMAKE_C_COMPILER
    t "cmake: configure with CMAKE_C_COMPILER=macc (compiler checks)" \
        cmake -S "$cs" -B "$ca" -DCMAKE_C_COMPILER="$macc" -DCMAKE_BUILD_TYPE=Release
    cc_file=$(ls "$ca"/CMakeFiles/*/CMakeCCompiler.cmake 2>/dev/null | head -n 1)
    if [ -n "$cc_file" ] && grep -q 'CMAKE_C_COMPILER_ID "GNU"' "$cc_file" &&
        grep -q 'CMAKE_C_ABI_COMPILED TRUE' "$cc_file"; then
        ok "cmake: macc identified as a GNU C compiler, ABI check compiled"
    else
        : > "$log"
        ko "cmake: macc identified as a GNU C compiler, ABI check compiled"
    fi
    if [ -n "$cc_file" ] && grep -q 'CMAKE_C_IMPLICIT_LINK_DIRECTORIES ""' "$cc_file"; then
        note "CMake found no implicit link directories: 'macc -v' prints its sub-commands but does not pass -v to cc, so CMake cannot parse the compiler's search paths"
    fi
    t "cmake: build (macc as the C compiler)" cmake --build "$ca" --verbose
    if grep -q 'macc.* -MD -MT .*vec.c.o -MF ' "$log"; then ok "cmake: macc was given -MD -MT -MF"; else ko "cmake: macc was given -MD -MT -MF"; fi
    t "cmake: the program runs (ctest)" sh -c 'cd "$1" && ctest --output-on-failure' sh "$ca"
    dep=$(ls "$ca"/CMakeFiles/vecdemo.dir/vec.c.o.d 2>/dev/null)
    if [ -n "$dep" ] && tr -d '\\\n' < "$dep" | grep -q 'vec.c.o: .*vec.c' && grep -q 'vec.h' "$dep" && ! grep -q 'host\.c' "$dep"; then
        ok "cmake: vec.c's depfile names vec.c and vec.h, not the temporary"
    else
        [ -n "$dep" ] && cp "$dep" "$log"
        ko "cmake: vec.c's depfile names vec.c and vec.h, not the temporary"
    fi
    touch_later "$cs/vec.h"
    if cmake --build "$ca" > "$log" 2>&1 && grep -q 'Building C object.*vec.c.o' "$log"; then
        ok "cmake: header touched: vec.c rebuilt"
    else
        ko "cmake: header touched: vec.c rebuilt"
    fi
    if cmake --build "$ca" > "$log" 2>&1 && ! grep -q 'Building' "$log"; then
        ok "cmake: a second build is a no-op"
    else
        ko "cmake: a second build is a no-op"
    fi

    # b. the usual C compiler, vec.c translated by add_custom_command
    t "cmake: configure with MACC_TRANSLATE=ON (add_custom_command)" \
        cmake -S "$cs" -B "$cb" -DMACC_TRANSLATE=ON -DMACC="$macc"
    t "cmake: build (macc --translate, then cc)" cmake --build "$cb" --verbose
    if grep -q -- '--translate .*vec.c' "$log" && ! grep -q 'bin/macc .*-c ' "$log"; then
        ok "cmake: macc only translated; cc compiled"
    else
        ko "cmake: macc only translated; cc compiled"
    fi
    t "cmake: the program runs (ctest)" sh -c 'cd "$1" && ctest --output-on-failure' sh "$cb"
    touch_later "$cs/vec.c"
    if cmake --build "$cb" > "$log" 2>&1 && grep -q 'macc --translate vec.c' "$log" &&
        grep -q 'Building C object.*vec.host.c.o' "$log"; then
        ok "cmake: vec.c touched: translated and compiled again"
    else
        ko "cmake: vec.c touched: translated and compiled again"
    fi
    if cmake --build "$cb" > "$log" 2>&1 && ! grep -q 'Building\|--translate' "$log"; then
        ok "cmake: a second build is a no-op"
    else
        ko "cmake: a second build is a no-op"
    fi
    # device code in two files and a static library, with nvcc where there is
    # one (relocatable device code, macc's device link at the link step)
    cm=$tmp/cmake-multi
    nv=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
    t "cmake-multi: configure (a static library of declare target code, macc as compiler)" \
        cmake -S "$here/cmake-multi" -B "$cm" -DCMAKE_C_COMPILER="$macc" -DMULTI_SRC="$top/tests/e2e/multi"
    t "cmake-multi: build${nv:+ (with nvcc: device link)}" env MACC_NVCC="$nv" cmake --build "$cm" --verbose
    if [ -n "$nv" ]; then
        # relocatable device code in the objects: they link only through the
        # device link (__cudaRegisterLinkedBinary_* comes from it)
        mo=$(find "$cm" -name 'main.c.o' | head -n 1)
        if [ -n "$mo" ] && objdump -h "$mo" | grep -q '__nv_relfatbin' && [ -x "$cm/multidemo" ]; then
            ok "cmake-multi: relocatable device code, device-linked"
        else ko "cmake-multi: relocatable device code, device-linked"; fi
    fi
    t "cmake-multi: the program runs (ctest)" sh -c 'cd "$1" && ctest --output-on-failure' sh "$cm"
else
    echo "integration: cmake not found: the CMake project is not tested"
    [ -n "${SKIPPED:-}" ] && echo "integration: no cmake, the CMake project" >> "$SKIPPED"
fi

# ---- install -------------------------------------------------------------------
prefix=$tmp/prefix
inst() { "$MAKE" --no-print-directory -C "$top" BUILD="$build" "$@"; }
files="bin/macc lib/libmaccrt.a lib/libmaccrt.so include/macc_rt.h include/macc_device.h include/openacc.h
lib/pkgconfig/macc.pc share/man/man1/macc.1"
[ -f "$build/lib/libmaccrt_cuda.a" ] && files="$files lib/libmaccrt_cuda.a"
# the MPI module, built where mpicc is
[ -f "$build/lib/libmaccrt_mpi.a" ] && files="$files lib/libmaccrt_mpi.a include/macc_mpi.h"
[ -f "$build/lib/libmaccrt_mpi_cuda.a" ] && files="$files lib/libmaccrt_mpi_cuda.a"
t "install: make install PREFIX=..." inst install PREFIX="$prefix"
missing=
for f in $files; do [ -f "$prefix/$f" ] || missing="$missing $f"; done
extra=$(cd "$prefix" 2>/dev/null && find . -type f | sed 's|^\./||' | while read -r f; do
    case " $(echo $files) " in *" $f "*) ;; *) echo "$f" ;; esac
done)
if [ -z "$missing" ] && [ -z "$extra" ]; then ok "install: exactly the expected files"
else : > "$log"; ko "install: exactly the expected files (missing:$missing; extra: $extra)"; fi
cp "$top/tests/e2e/reduction_int.c" "$tmp/red.c"
t "install: the installed macc builds a program (finds ../lib, ../include)" \
    sh -c 'cd "$1" && "$2/bin/macc" -O2 red.c -o red && ./red | grep -q PASS' sh "$tmp" "$prefix"
if "$prefix/bin/macc" -### -O2 "$tmp/red.c" -o "$tmp/red" 2> "$log" && grep -q "$prefix/bin/../lib/libmaccrt.a" "$log" &&
    ! grep -q "$build" "$log"; then
    ok "install: the installed macc uses the installed runtime"
else
    ko "install: the installed macc uses the installed runtime"
fi
if command -v pkg-config > /dev/null 2>&1; then
    pc() { PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config "$@"; }
    got=$(pc --cflags --libs macc 2> "$log")
    want="-I$prefix/include -L$prefix/lib -lmaccrt -lpthread -ldl"
    if [ "$(echo $got)" = "$want" ]; then ok "install: pkg-config --cflags --libs macc"
    else echo "got '$got', want '$want'" >> "$log"; ko "install: pkg-config --cflags --libs macc"; fi
    # a translated file built with the pkg-config flags (libmaccrt.so)
    mkdir -p "$tmp/pc"
    t "install: translated file + pkg-config flags (libmaccrt.so) build and run" \
        sh -c 'cd "$1/pc" && "$2/bin/macc" --translate ../red.c -o . &&
               cc -fopenmp $3 -iquote .. red.host.c -o red $4 -Wl,-rpath,"$2/lib" && ./red | grep -q PASS' \
        sh "$tmp" "$prefix" "$(pc --cflags macc)" "$(pc --libs macc)"
else
    echo "integration: pkg-config not found: macc.pc is not tested"
    [ -n "${SKIPPED:-}" ] && echo "integration: no pkg-config, macc.pc" >> "$SKIPPED"
fi
if command -v man > /dev/null 2>&1; then
    t "install: man -l share/man/man1/macc.1 renders" \
        sh -c 'MANWIDTH=80 man -l "$1" 2>&1 | grep -q "^SYNOPSIS" && MANWIDTH=80 man -l "$1" 2>&1 | grep -q "MACC_NVCC"' \
        sh "$prefix/share/man/man1/macc.1"
fi
if command -v groff > /dev/null 2>&1; then
    t "install: the man page has no groff warnings" \
        sh -c 'out=$(groff -man -Tutf8 -ww -z "$1" 2>&1); [ -z "$out" ] || { echo "$out"; exit 1; }' \
        sh "$prefix/share/man/man1/macc.1"
fi
t "install: make uninstall PREFIX=..." inst uninstall PREFIX="$prefix"
left=$(find "$prefix" -type f 2>/dev/null)
if [ -z "$left" ]; then ok "install: uninstall removed every file"; else echo "$left" > "$log"; ko "install: uninstall removed every file"; fi
# DESTDIR: files land under it; macc.pc names the prefix, not DESTDIR
stage=$tmp/stage
t "install: make install DESTDIR=... PREFIX=/opt/macc" inst install DESTDIR="$stage" PREFIX=/opt/macc
if [ -x "$stage/opt/macc/bin/macc" ] && grep -qx 'prefix=/opt/macc' "$stage/opt/macc/lib/pkgconfig/macc.pc" &&
    ! grep -q "$stage" "$stage/opt/macc/lib/pkgconfig/macc.pc"; then
    ok "install: DESTDIR honoured, macc.pc names PREFIX"
else
    : > "$log"
    ko "install: DESTDIR honoured, macc.pc names PREFIX"
fi
t "install: make uninstall DESTDIR=... PREFIX=/opt/macc" inst uninstall DESTDIR="$stage" PREFIX=/opt/macc
left=$(find "$stage" -type f 2>/dev/null)
if [ -z "$left" ]; then ok "install: DESTDIR uninstall removed every file"; else echo "$left" > "$log"; ko "install: DESTDIR uninstall removed every file"; fi

echo "$pass $fail integration" >> "$RESULTS" 2>/dev/null || true
echo "[integration] $pass passed, $fail failed"
[ "$fail" -eq 0 ]
