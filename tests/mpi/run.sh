#!/bin/sh
# The MPI module (libmaccrt_mpi) and the ring sample under mpirun, on the CPU:
#   sh tests/mpi/run.sh BUILD        (make check-mpi; part of make check)
# Builds tests/mpi/api.c and samples/ring_g4.c with `macc --mpi` (and the
# sample once more as `OMPI_CC=macc mpicc ... -lmaccrt_mpi` with Open MPI),
# runs them with mpirun -np 1/2/3/4 --oversubscribe (--allow-run-as-root as
# root): L1/L2 errors < 5e-7, sub-rings of 2 in 4 ranks, 2 threads per rank,
# the memory per rank, and failures: a killed rank and a stalled rank make
# the others exit with a message within the time limit. E2E_CFLAGS (ASan and
# UBSan in make check) go to the builds. Without mpicc or mpirun the tests
# are skipped, not failed. Appends "passed failed mpi" to $RESULTS and prints
# "[mpi] N passed, N failed".
set -u
build=${1:-build}
top=$(pwd)
case $build in /*) ;; *) build=$top/$build ;; esac
RESULTS=${RESULTS:-$build/results.txt}
macc=$build/bin/macc
pass=0
fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() {
    echo "$pass $fail mpi" >> "$RESULTS"
    echo "[mpi] $pass passed, $fail failed${1:-}"
    [ "$fail" -eq 0 ]
    exit $?
}

if ! command -v mpicc > /dev/null 2>&1 || ! command -v mpirun > /dev/null 2>&1; then
    echo "mpi: mpicc or mpirun not found: the MPI tests are skipped (Debian: apt-get install libopenmpi-dev openmpi-bin)"
    [ -n "${SKIPPED:-}" ] && echo "mpi: no mpicc or mpirun" >> "$SKIPPED"
    finish ", 1 skipped"
fi
if [ ! -f "$build/lib/libmaccrt_mpi.a" ]; then
    echo "mpi: $build/lib/libmaccrt_mpi.a not built (mpicc appeared after the build?): the MPI tests are skipped"
    [ -n "${SKIPPED:-}" ] && echo "mpi: libmaccrt_mpi.a not built" >> "$SKIPPED"
    finish ", 1 skipped"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/macc-mpi-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Open MPI's components are loaded with dlopen and unloaded before
# LeakSanitizer looks: their leaks cannot be told apart by name. ASan's other
# checks and UBSan stay on.
case "${E2E_CFLAGS:-}" in *sanitize=address*) export ASAN_OPTIONS="detect_leaks=0" ;; esac
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
# a small host share per rank: the ranks share the machine's cores
export MACC_HOST_THREADS=${MACC_HOST_THREADS:-1}

# shellcheck disable=SC2086
if ! "$macc" --mpi -O2 -Wall -Wextra ${E2E_CFLAGS:-} "$top/samples/ring_g4.c" -o "$tmp/ring_g4" -lm > "$tmp/build.log" 2>&1; then
    cat "$tmp/build.log"
    ko "build samples/ring_g4.c with macc --mpi"
    finish
fi
if grep -v '^macc: note: ' "$tmp/build.log" | grep -q .; then
    cat "$tmp/build.log"
    ko "macc --mpi printed warnings for samples/ring_g4.c"
else
    ok
fi
# shellcheck disable=SC2086
if "$macc" --mpi -O2 -Wall -Wextra ${E2E_CFLAGS:-} "$top/tests/mpi/api.c" -o "$tmp/api" > "$tmp/build.log" 2>&1 &&
    ! grep -v '^macc: note: ' "$tmp/build.log" | grep -q .; then ok
else cat "$tmp/build.log"; ko "build tests/mpi/api.c"; fi

# run NAME NP ARGS...: the sample, its check and errors
run_sample() {
    name=$1; np=$2; shift 2
    # shellcheck disable=SC2086
    if ! timeout 300 $MPIRUN -np "$np" "$tmp/ring_g4" "$@" > "$tmp/out" 2> "$tmp/err"; then
        tail -n 20 "$tmp/out" "$tmp/err"
        ko "ring_g4 $name: exit status"
        return
    fi
    l=$(sed -n 's/^check: L1 = \([^,]*\), L2 = \([^ ]*\) .*/\1 \2/p' "$tmp/out")
    if [ -z "$l" ] || ! echo "$l" | awk '{ exit !($1 < 5e-7 && $2 < 5e-7) }'; then
        cat "$tmp/out"
        ko "ring_g4 $name: errors '$l'"
        return
    fi
    want=$(printf 'P=%s S=%s T=%s' "$np" "${S:-$np}" "${T:-1}")
    if ! grep -q "^ring_g4: $want " "$tmp/out"; then
        head -n 3 "$tmp/out"
        ko "ring_g4 $name: not '$want'"
        return
    fi
    # the memory target (not under ASan, whose shadow memory counts)
    case "${E2E_CFLAGS:-}" in *sanitize=*) ;; *)
        if [ -n "${MEMCHECK:-}" ] && ! grep -q '^memory per rank measured: .*: ok$' "$tmp/out"; then
            grep '^memory' "$tmp/out"
            ko "ring_g4 $name: memory per rank over the target"
            return
        fi ;;
    esac
    echo "ok   ring_g4 $name: $(grep -E '^check:' "$tmp/out")"
    ok
}

for np in 1 2 3 4; do
    # shellcheck disable=SC2086
    if timeout 300 $MPIRUN -np $np "$tmp/api" > "$tmp/out" 2> "$tmp/err" && grep -q '^api: PASS' "$tmp/out"; then
        ok
    else
        cat "$tmp/out"; tail -n 20 "$tmp/err"; ko "api under mpirun -np $np"
    fi
done

run_sample "np 1 (degenerate ring)" 1 -k 24 -n 3
run_sample "np 2" 2
# memory per rank <= 1/P of G4 + 3 G_sigma (the ring holds 2; MPI and the
# ring's helper thread take ~0.1-0.4 MB more, less than a 1 MB G_sigma)
MEMCHECK=1 run_sample "np 2, G4 of 34 MB, 1 MB messages" 2 -k 256 -k3 32 -n 2
run_sample "np 4" 4
S=2 run_sample "np 4, sub-rings of 2" 4 -s 2
T=2 run_sample "np 4, 2 threads per rank" 4 -t 2
S=2 T=2 run_sample "np 4, sub-rings of 2, 2 threads" 4 -s 2 -t 2 -n 9
run_sample "np 3, uneven slices" 3 -k 9 -k3 5 -n 5
MEMCHECK=1 run_sample "np 4, G4 of 34 MB, 1 MB messages" 4 -k 256 -k3 32 -n 2

# thread level and sub-ring size errors are messages
# shellcheck disable=SC2086
if ! timeout 120 $MPIRUN -np 2 "$tmp/api" single > "$tmp/out" 2> "$tmp/err" &&
    grep -q 'macc: error: rank [01]: a ring per thread (thread 1) needs MPI_THREAD_MULTIPLE' "$tmp/err"; then ok
else cat "$tmp/err"; ko "a ring per thread without MPI_THREAD_MULTIPLE: no message"; fi
# shellcheck disable=SC2086
if ! timeout 120 $MPIRUN -np 4 "$tmp/api" split3 > "$tmp/out" 2> "$tmp/err" &&
    grep -q 'macc: error: sub-rings of 3 ranks do not divide 4 ranks' "$tmp/err"; then ok
else cat "$tmp/err"; ko "sub-rings that do not divide the ranks: no message"; fi

# failures: never a hang. A stalled rank: the others report it (MACC_MPI_TIMEOUT)
# and abort the job.
t0=$(date +%s)
# shellcheck disable=SC2086
MACC_MPI_TIMEOUT=3 timeout 120 $MPIRUN -np 4 "$tmp/ring_g4" --stall 1 > "$tmp/out" 2> "$tmp/err"
rc=$?
t=$(($(date +%s) - t0))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $t -lt 60 ] &&
    grep -q 'macc: error: rank [0-3]: MPI_I\(recv from\|send to\) ring rank [0-3] .*did not complete within 3 s (MACC_MPI_TIMEOUT)' "$tmp/err"; then
    ok
    echo "ok   stalled rank: the others exit in ${t} s: $(grep -m 1 'macc: error' "$tmp/err")"
else
    tail -n 20 "$tmp/err"; ko "stalled rank: exit status $rc after ${t} s"
fi
# A killed rank (SIGKILL): the launcher ends the job with its message...
t0=$(date +%s)
# shellcheck disable=SC2086
MACC_MPI_TIMEOUT=3 timeout 120 $MPIRUN -np 4 "$tmp/ring_g4" --die 2 > "$tmp/out" 2> "$tmp/err"
rc=$?
t=$(($(date +%s) - t0))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $t -lt 60 ] && grep -q -i 'rank 2.*\(signal 9\|killed\)\|macc: error' "$tmp/err"; then
    ok
    echo "ok   killed rank: the job ends in ${t} s"
else
    tail -n 20 "$tmp/err"; ko "killed rank: exit status $rc after ${t} s"
fi
# ...and where the launcher does not (Open MPI: orte_abort_on_non_zero_status=0),
# the ranks' deadlines do
if mpirun --version 2>&1 | grep -q 'Open MPI) 4'; then
    t0=$(date +%s)
    # shellcheck disable=SC2086
    OMPI_MCA_orte_abort_on_non_zero_status=0 MACC_MPI_TIMEOUT=3 timeout 120 $MPIRUN -np 4 "$tmp/ring_g4" --die 2 > "$tmp/out" 2> "$tmp/err"
    rc=$?
    t=$(($(date +%s) - t0))
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $t -lt 60 ] && grep -q 'macc: error: rank [0-3]: .*ring rank 2 .*did not complete within 3 s' "$tmp/err"; then
        ok
        echo "ok   killed rank, launcher not aborting: the others exit in ${t} s: $(grep -m 1 'macc: error' "$tmp/err")"
    else
        tail -n 20 "$tmp/err"; ko "killed rank, launcher not aborting: exit status $rc after ${t} s"
    fi
fi
# a bad MACC_MPI_TIMEOUT is a message
# shellcheck disable=SC2086
if ! MACC_MPI_TIMEOUT=soon timeout 120 $MPIRUN -np 2 "$tmp/ring_g4" > "$tmp/out" 2> "$tmp/err" &&
    grep -q "MACC_MPI_TIMEOUT='soon' is not a positive number of seconds" "$tmp/err"; then ok
else tail -n 5 "$tmp/err"; ko "MACC_MPI_TIMEOUT=soon: no message"; fi

# macc as Open MPI's compiler: OMPI_CC=macc mpicc ... -lmaccrt_mpi
if mpicc --showme > /dev/null 2>&1; then
    # shellcheck disable=SC2086
    if OMPI_CC="$macc" mpicc -O2 ${E2E_CFLAGS:-} "$top/samples/ring_g4.c" -o "$tmp/ring_g4_wrap" -lmaccrt_mpi -lm > "$tmp/build.log" 2>&1 &&
        timeout 300 $MPIRUN -np 2 "$tmp/ring_g4_wrap" > "$tmp/out" 2> "$tmp/err" && grep -q '^check: .*PASS' "$tmp/out"; then
        ok
    else
        cat "$tmp/build.log"; tail -n 10 "$tmp/out" "$tmp/err"; ko "OMPI_CC=macc mpicc ... -lmaccrt_mpi"
    fi
fi
# the driver: --mpi compiles and links with the MPI wrapper (MACC_MPICC) and puts the
# module before libmaccrt.a; -lmaccrt_mpi alone adds the module, the compiler stays cc
if "$macc" --mpi -### "$top/samples/ring_g4.c" -o "$tmp/x" 2> "$tmp/err" && grep -q '^mpicc .*-E ' "$tmp/err" &&
    grep -q '^mpicc .*libmaccrt_mpi\.a .*libmaccrt\.a' "$tmp/err" &&
    MACC_MPICC=no-such-mpicc "$macc" --mpi -### "$top/samples/ring_g4.c" -o "$tmp/x" 2>&1 | grep -q '^no-such-mpicc '; then ok
else cat "$tmp/err"; ko "driver: --mpi sub-commands"; fi
printf 'int main(void) { return 0; }\n' > "$tmp/noop.c"
if "$macc" -### "$tmp/noop.c" -o "$tmp/x" -lmaccrt_mpi 2> "$tmp/err" && grep -q '^cc .*libmaccrt_mpi\.a .*libmaccrt\.a' "$tmp/err" &&
    ! grep -q -- '-lmaccrt_mpi' "$tmp/err"; then ok
else cat "$tmp/err"; ko "driver: -lmaccrt_mpi"; fi
# -lmaccrt_mpi where the module is missing: a clear error (a macc copy without it)
mkdir -p "$tmp/inst/bin" "$tmp/inst/lib" "$tmp/inst/include"
cp "$macc" "$tmp/inst/bin/macc"
cp "$build/lib/libmaccrt.a" "$tmp/inst/lib/" && cp "$build/include/"*.h "$tmp/inst/include/"
if ! "$tmp/inst/bin/macc" --mpi --targets=host "$top/tests/mpi/api.c" -o "$tmp/nompi" > "$tmp/out" 2>&1 &&
    grep -q 'libmaccrt_mpi.a not found: macc was built without MPI' "$tmp/out" && [ ! -e "$tmp/nompi" ]; then ok
else cat "$tmp/out"; ko "macc --mpi without the module: no clear error"; fi
finish
