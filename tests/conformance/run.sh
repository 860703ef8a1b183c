#!/bin/sh
# Conformance runner: the OpenMP_VV and OpenACCV-V C tests, built and run with
# one compiler command (macc by default, or a reference such as gcc -fopenmp).
#
#   tests/conformance/run.sh [options] [omp] [acc]      (no suite named: both)
#
# Options (--opt VALUE or --opt=VALUE):
#   --cc CMD             compiler command (default $BUILD/bin/macc, BUILD=build);
#                        e.g. --cc 'gcc -fopenmp', --cc 'gcc -fopenacc'
#   --flags FLAGS        extra compiler flags, e.g. --flags=--targets=host
#   --opt FLAGS          optimisation flags (default -O2)
#   --filter GLOB        only tests whose path matches GLOB (repeatable; path as
#                        in results.tsv: openmp_vv/tests/4.5/target/x.c)
#   --list FILE          only the tests listed in FILE (first word of a line, # comments)
#   --known FILE         known failures ("path  reason" lines, # comments): report
#                        new failures and listed tests that pass; exit 1 only on a
#                        failure outside the list
#   -j, --jobs N         parallel tests (default: nproc)
#   --build-timeout S    per-test compile+link limit (default 120)
#   --run-timeout S      per-test run limit (default 60)
#   -o, --results DIR    results directory (default $BUILD/conformance)
#
# The suites: MACC_CONFORMANCE=dir, default ../shared/conformance next to the
# repository; when absent the runner says so and exits 0 with "0 passed, 0 failed".
# Statuses: PASS, FAIL (ran, wrong result), CRASH (killed by a signal), TIMEOUT,
# BUILD (compile or link failed or timed out), SKIP (the test skipped itself).
# Results: DIR/results.tsv (suite, test, status, first relevant error line),
# DIR/summary.txt, DIR/logs/<test path>.build.log and .run.log.
set -u

die() { echo "conformance: $*" >&2; exit 2; }

# ---- one test (run by xargs; settings come in the environment) --------------
if [ "${1:-}" = --one ]; then
    t=$2
    cd "$CONF_DIR" || exit 1
    case $t in
    openmp_vv/*) suite=omp; inc=openmp_vv/ompvv ;;
    openacc_vv/*) suite=acc; inc=openacc_vv/Tests ;;
    *) exit 1 ;;
    esac
    log=$CONF_RESULTS/logs/${t%.c}
    exe=$log.exe
    mkdir -p "${log%/*}"
    rm -f "$exe" "$log.build.log" "$log.run.log" "$log.tsv" "$log.st"
    # first line that looks like an error in a log; else its last non-blank line
    first_error() {
        l=$(grep -m 1 -E 'error:|sorry, unimplemented|undefined reference|Assertion' "$1")
        [ -z "$l" ] && l=$(grep -m 1 -E '[Ee]rror|ERROR|FAIL|[Ff]ail' "$1")
        [ -z "$l" ] && l=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1)
        printf '%s' "$l" | tr '\t' ' ' | cut -c 1-300
    }
    why=
    # OpenMP_VV's static library tests (*static_lib*): ompvv/libompvv.c, which
    # has a target region, compiled with the same command into libompvv.a and
    # linked as a library, as the suite's Makefile does
    libs=
    rc=0
    case $suite:${t##*/} in
    omp:*static_lib*)
        lib=$log.lib
        rm -rf "$lib" && mkdir -p "$lib"
        # shellcheck disable=SC2086
        timeout -k 5 "$CONF_BUILD_TIMEOUT" $CONF_CC $CONF_OPT $CONF_FLAGS -I "$inc" -c "$inc/libompvv.c" \
            -o "$lib/libompvv.o" > "$log.build.log" 2>&1 < /dev/null && ar rcs "$lib/libompvv.a" "$lib/libompvv.o" \
            >> "$log.build.log" 2>&1
        rc=$?
        libs="-L$lib -lompvv" ;;
    esac
    # shellcheck disable=SC2086
    [ $rc -ne 0 ] || timeout -k 5 "$CONF_BUILD_TIMEOUT" $CONF_CC $CONF_OPT $CONF_FLAGS -I "$inc" "$t" -o "$exe" $libs -lm \
        >> "$log.build.log" 2>&1 < /dev/null
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        status=BUILD; why="build timed out after $CONF_BUILD_TIMEOUT s"
    elif [ $rc -ne 0 ] || [ ! -x "$exe" ]; then
        status=BUILD; why=$(first_error "$log.build.log")
        [ -z "$why" ] && why="compiler exit status $rc, no message"
    else
        # OpenMP_VV's convention: test_omp_<icv>_env_<value>.c runs with OMP_<ICV>=<value>
        base=${t##*/}
        envset=CONF_UNUSED=
        case $suite:$base in
        omp:test_omp_*_env_*.c)
            v=${base##*_env_}; nm=${base%%_env_*}
            envset=$(printf '%s' "${nm#test_}" | tr '[:lower:]' '[:upper:]')=${v%.c} ;;
        esac
        # the exit status, told apart from a signal (perl is in every Debian base)
        (cd "${log%/*}" && export "${envset?}" && if [ -n "$CONF_PERL" ]; then
            perl -e '$f = shift; system { $ARGV[0] } @ARGV; $s = $?;
                open(F, ">", $f) or die; print F ($s == -1 ? "exit 127" : ($s & 127) ? "signal " . ($s & 127) : "exit " . ($s >> 8)), "\n"' \
                "$log.st" timeout -k 5 "$CONF_RUN_TIMEOUT" "$exe"
        else
            timeout -k 5 "$CONF_RUN_TIMEOUT" "$exe"
            r=$?
            if [ $r -gt 128 ] && [ $r -ne 137 ]; then echo "signal $((r - 128))"; else echo "exit $r"; fi > "$log.st"
        fi) > "$log.run.log" 2>&1 < /dev/null
        read -r kind code < "$log.st" 2> /dev/null || { kind="exit"; code=255; }
        rm -f "$log.st"
        if [ "$kind" = signal ] && [ "$code" = 9 ]; then
            status=TIMEOUT; why="run timed out after $CONF_RUN_TIMEOUT s (killed)"
        elif [ "$kind" = signal ]; then
            status=CRASH; l=$(first_error "$log.run.log")
            why="signal $code ($(kill -l "$code" 2> /dev/null || echo ?))${l:+: $l}"
        elif [ "$code" = 124 ]; then
            status=TIMEOUT; why="run timed out after $CONF_RUN_TIMEOUT s"
        elif [ $suite = omp ]; then
            res=$(grep -m 1 '^\[OMPVV_RESULT: ' "$log.run.log" | tr '\t' ' ')
            if grep -q "^\[OMPVV_RESULT: .*\] Test skipped" "$log.run.log" ||
                { [ "$code" = 101 ] && [ -z "$res" ]; }; then
                status=SKIP; why=${res:-exit 101}
            elif [ "$code" = 0 ] && grep -q -E "^\[OMPVV_RESULT: [^]]*\] Test passed(\.| on the (device|host)\.)" "$log.run.log"; then
                status=PASS
            else
                status=FAIL
                case $res in
                *"Test failed"*) why="exit $code: $res" ;;
                "") l=$(first_error "$log.run.log"); why="exit $code, no OMPVV_RESULT line${l:+: $l}" ;;
                *) why="exit $code: $res" ;;
                esac
            fi
        elif [ "$code" = 0 ]; then
            status=PASS
        else
            status=FAIL
            l=$(first_error "$log.run.log")
            why="exit $code${l:+: $l}"
        fi
        case $status in PASS|SKIP) rm -f "$exe" ;; esac
    fi
    printf '%s\t%s\t%s\t%s\n' "$suite" "$t" "$status" "$why" > "$log.tsv"
    printf '%-7s %s %s%s\n' "$status" "$suite" "$t" "${why:+  ($why)}"
    exit 0
fi

# ---- driver ------------------------------------------------------------------
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
cc=$BUILD/bin/macc
flags=
opt=-O2
filters=
list=
known=
jobs=$(nproc 2> /dev/null || echo 2)
bt=120
rt=60
results=$BUILD/conformance
suites=

while [ $# -gt 0 ]; do
    case $1 in
    --*=*) o=${1%%=*}; v=${1#*=}; shift ;;
    -j[0-9]*) o=-j; v=${1#-j}; shift ;;
    --cc|--flags|--opt|--filter|--list|--known|-j|--jobs|--build-timeout|--run-timeout|-o|--results)
        [ $# -ge 2 ] || die "$1 needs a value"; o=$1; v=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    omp|acc) suites="$suites $1"; shift; continue ;;
    all) suites="omp acc"; shift; continue ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    case $o in
    --cc) cc=$v ;;
    --flags) flags="$flags $v" ;;
    --opt) opt=$v ;;
    --filter) filters="$filters
$v" ;;
    --list) list=$v ;;
    --known) known=$v ;;
    -j|--jobs) jobs=$v ;;
    --build-timeout) bt=$v ;;
    --run-timeout) rt=$v ;;
    -o|--results) results=$v ;;
    *) die "unknown option '$o' (see --help)" ;;
    esac
done
[ -n "$suites" ] || suites="omp acc"
case $jobs in ''|*[!0-9]*|0) die "--jobs wants a positive number" ;; esac
abspath() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s' "$here/$1" ;; esac; }
[ -z "$list" ] || { [ -r "$list" ] || die "cannot read --list $list"; list=$(abspath "$list"); }
[ -z "$known" ] || { [ -r "$known" ] || die "cannot read --known $known"; known=$(abspath "$known"); }
results=$(abspath "$results")

conf=${MACC_CONFORMANCE:-$top/../shared/conformance}
if [ ! -d "$conf" ]; then
    echo "conformance: no test suites at $conf (set MACC_CONFORMANCE=dir): nothing run"
    [ -n "${SKIPPED:-}" ] && echo "conformance: no ../shared/conformance" >> "$SKIPPED"
    echo "0 passed, 0 failed"
    exit 0
fi
conf=$(cd "$conf" && pwd)

# The compiler's first word: a relative path is taken from here (tests build in $conf).
set -f
# shellcheck disable=SC2086
set -- $cc
set +f
[ $# -gt 0 ] || die "empty --cc"
ccbin=$1
shift
case $ccbin in /*) ;; */*) ccbin=$here/$ccbin ;; esac
command -v "$ccbin" > /dev/null 2>&1 || die "compiler '$ccbin' not found (build it with make, or give --cc)"
cc="$ccbin${*:+ $*}"

# the tests, as paths relative to $conf
mkdir -p "$results" || die "cannot create $results"
rm -rf "$results/logs" "$results/results.tsv" "$results/summary.txt"
mkdir -p "$results/logs"
tests=$results/tests.txt
: > "$tests"
for s in $suites; do
    case $s in
    omp) d=openmp_vv; [ -d "$conf/$d/tests" ] && (cd "$conf" && find "$d/tests" -name '*.c' -type f) ;;
    acc) d=openacc_vv; [ -d "$conf/$d/Tests" ] && (cd "$conf" && find "$d/Tests" -maxdepth 1 -name '*.c' -type f) ;;
    esac
    [ -d "$conf/$d" ] || { echo "conformance: $conf/$d not found: suite $s skipped"; [ -n "${SKIPPED:-}" ] && echo "conformance: suite $s not found" >> "$SKIPPED"; }
done | LC_ALL=C sort > "$tests.all"
grep -v '[[:space:]]' "$tests.all" | while IFS= read -r t; do
    if [ -n "$filters" ]; then
        m=0
        set -f
        for g in $filters; do
            # shellcheck disable=SC2254
            case $t in $g) m=1 ;; esac
        done
        set +f
        [ $m = 1 ] || continue
    fi
    echo "$t"
done > "$tests"
rm -f "$tests.all"
if [ -n "$list" ]; then
    sed 's/#.*//' "$list" | awk 'NF { print $1 }' | LC_ALL=C sort -u > "$tests.want"
    LC_ALL=C comm -12 "$tests" "$tests.want" > "$tests.sel"
    LC_ALL=C comm -13 "$tests" "$tests.want" | while IFS= read -r t; do
        case $t in
        openmp_vv/*) s=omp ;; openacc_vv/*) s=acc ;; *) s= ;;
        esac
        case " $suites " in *" $s "*) echo "conformance: listed test not found: $t" ;; esac
    done
    mv "$tests.sel" "$tests"
    rm -f "$tests.want"
fi
n=$(wc -l < "$tests")

echo "conformance: $n tests, compiler: $cc $opt$flags, jobs $jobs, timeouts build ${bt}s run ${rt}s"
echo "conformance: suites in $conf, results in $results"
CONF_DIR=$conf CONF_RESULTS=$results CONF_CC=$cc CONF_OPT=$opt CONF_FLAGS=$flags \
CONF_BUILD_TIMEOUT=$bt CONF_RUN_TIMEOUT=$rt CONF_PERL=$(command -v perl 2> /dev/null || true)
export CONF_DIR CONF_RESULTS CONF_CC CONF_OPT CONF_FLAGS CONF_BUILD_TIMEOUT CONF_RUN_TIMEOUT CONF_PERL
start=$(date +%s)
[ "$n" -gt 0 ] && xargs -P "$jobs" -n 1 sh "$0" --one < "$tests"
elapsed=$(($(date +%s) - start))

# collect, in test order
while IFS= read -r t; do
    f=$results/logs/${t%.c}.tsv
    if [ -f "$f" ]; then cat "$f"; rm -f "$f"
    else
        case $t in openmp_vv/*) s=omp ;; *) s=acc ;; esac
        printf '%s\t%s\tFAIL\trunner: no result recorded\n' "$s" "$t"
    fi
done < "$tests" > "$results/results.tsv"

{
    echo "== conformance summary: $cc $opt$flags, ${elapsed}s =="
    awk -F '\t' '
        { n[$1]++; c[$1, $3]++ }
        END {
            split("PASS FAIL CRASH TIMEOUT BUILD SKIP", st, " ")
            printf "%-6s %6s", "suite", "total"
            for (i = 1; i <= 6; i++) printf " %7s", st[i]
            printf "\n"
            split("omp acc", su, " ")
            for (j = 1; j <= 2; j++) {
                s = su[j]
                if (!(s in n)) continue
                printf "%-6s %6d", s, n[s]
                for (i = 1; i <= 6; i++) printf " %7d", c[s, st[i]]
                printf "\n"
            }
        }' "$results/results.tsv"
    if [ -n "$known" ]; then
        sed 's/#.*//' "$known" | awk 'NF { print $1 }' > "$results/known.tmp"
        awk -F '\t' -v out="$results/known.txt" '
            FILENAME == ARGV[1] { k[$1] = 1; next }
            { bad = ($3 != "PASS" && $3 != "SKIP") }
            bad && ($2 in k) { kn++ }
            bad && !($2 in k) { nw++; print "NEW FAILURE " $3 " " $2 "  (" $4 ")" > out }
            !bad && $3 == "PASS" && ($2 in k) { fx++; print "NOW PASSES  " $2 > out }
            END {
                close(out)
                printf "known failures: %d still failing; %d new failures; %d listed tests now pass\n", kn, nw, fx
            }' "$results/known.tmp" "$results/results.tsv"
        touch "$results/known.txt"
        cat "$results/known.txt"
        rm -f "$results/known.tmp"
    fi
    awk -F '\t' '
        $3 == "PASS" { p++ } $3 == "SKIP" { s++ } $3 != "PASS" && $3 != "SKIP" { f++ }
        END {
            printf "%d skipped (counted in neither number below)\n", s
            printf "%d passed, %d failed\n", p, f
        }' "$results/results.tsv"
} > "$results/summary.txt"
cat "$results/summary.txt"

if [ -n "$known" ]; then
    ! grep -q '^NEW FAILURE' "$results/known.txt"
else
    ! awk -F '\t' '$3 != "PASS" && $3 != "SKIP" { bad = 1 } END { exit !bad }' "$results/results.tsv"
fi
