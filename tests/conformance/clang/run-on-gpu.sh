#!/bin/sh
# Run the Clang reference bundle (made by build.sh) on a machine with the GPU:
# every OpenMP_VV test that Clang 16 built, classified exactly as
# tests/conformance/run.sh classifies OpenMP_VV tests.
#
#   sh tests/conformance/clang/run-on-gpu.sh [options] BUNDLE_DIR
#
# Options: -j N (tests at once, 8), --run-timeout S (60), --filter GLOB (only
# tests whose path matches; repeatable), --keep (leave the unpacked bundle).
#
# Results, in $OUT when set, else in the current directory:
#   clangref-results.tsv   suite, test path, status, device|host|-, reason
#   clangref-summary.txt   the summary printed at the end
#   clangref-logs.tar.gz   the run log of every test, and the probe's
# Statuses as run.sh: PASS, FAIL, CRASH, TIMEOUT, BUILD (Clang 16 could not
# build it: counts as failed), SKIP (counted in neither number). The fourth
# column is where the test's [OMPVV_RESULT] line says it ran ("on the device",
# "on the host"); "-" when it says neither or the test did not run.
# Needs: sh, tar, timeout, perl (as run.sh), and xz, or the bundle's tools/xzdec.
set -u

die() { echo "clangref: $*" >&2; exit 2; }

# ---- one test (run by xargs) --------------------------------------------------
if [ "${1:-}" = --one ]; then
    t=$2
    rel=${t%.c}
    exe=$CR_ROOT/bin/$rel
    log=$CR_LOGS/$rel
    mkdir -p "$log.d"
    first_error() {
        l=$(grep -m 1 -E 'error:|sorry, unimplemented|undefined reference|Assertion' "$1")
        [ -z "$l" ] && l=$(grep -m 1 -E '[Ee]rror|ERROR|FAIL|[Ff]ail' "$1")
        [ -z "$l" ] && l=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1)
        printf '%s' "$l" | tr '\t' ' ' | cut -c 1-300
    }
    why=
    where=-
    # OpenMP_VV's convention: test_omp_<icv>_env_<value>.c runs with OMP_<ICV>=<value>
    base=${t##*/}
    envset=CONF_UNUSED=
    case $base in
    test_omp_*_env_*.c)
        v=${base##*_env_}; nm=${base%%_env_*}
        envset=$(printf '%s' "${nm#test_}" | tr '[:lower:]' '[:upper:]')=${v%.c} ;;
    esac
    (cd "$log.d" && export "${envset?}" && env LD_LIBRARY_PATH="$CR_LIBPATH" \
        perl -e '$f = shift; system { $ARGV[0] } @ARGV; $s = $?;
            open(F, ">", $f) or die; print F ($s == -1 ? "exit 127" : ($s & 127) ? "signal " . ($s & 127) : "exit " . ($s >> 8)), "\n"' \
            "$log.st" timeout -k 5 "$CR_RUN_TIMEOUT" "$exe") > "$log.run.log" 2>&1 < /dev/null
    rmdir "$log.d" 2> /dev/null
    read -r kind code < "$log.st" 2> /dev/null || { kind="exit"; code=255; }
    rm -f "$log.st"
    res=$(grep -m 1 '^\[OMPVV_RESULT: ' "$log.run.log" | tr '\t' ' ')
    case $res in
    *" on the device."*) where=device ;;
    *" on the host."*) where=host ;;
    esac
    if [ "$kind" = signal ] && [ "$code" = 9 ]; then
        status=TIMEOUT; why="run timed out after $CR_RUN_TIMEOUT s (killed)"
    elif [ "$kind" = signal ]; then
        status=CRASH; l=$(first_error "$log.run.log")
        why="signal $code ($(kill -l "$code" 2> /dev/null || echo ?))${l:+: $l}"
    elif [ "$code" = 124 ]; then
        status=TIMEOUT; why="run timed out after $CR_RUN_TIMEOUT s"
    elif grep -q "^\[OMPVV_RESULT: .*\] Test skipped" "$log.run.log" ||
        { [ "$code" = 101 ] && [ -z "$res" ]; }; then
        status=SKIP; why=${res:-exit 101}
    elif [ "$code" = 0 ] && grep -q -E "^\[OMPVV_RESULT: [^]]*\] Test passed(\.| on the (device|host)\.)" "$log.run.log"; then
        status=PASS
    else
        status=FAIL
        case $res in
        "") l=$(first_error "$log.run.log"); why="exit $code, no OMPVV_RESULT line${l:+: $l}" ;;
        *) why="exit $code: $res" ;;
        esac
    fi
    printf 'omp\t%s\t%s\t%s\t%s\n' "$t" "$status" "$where" "$why" > "$log.tsv"
    printf '%-7s %-6s %s%s\n' "$status" "$where" "$t" "${why:+  ($why)}"
    exit 0
fi

# ---- driver --------------------------------------------------------------------
jobs=8
rt=60
filters=
keep=0
while [ $# -gt 0 ]; do
    case $1 in
    -j) [ $# -ge 2 ] || die "-j needs a value"; jobs=$2; shift 2 ;;
    -j[0-9]*) jobs=${1#-j}; shift ;;
    --run-timeout) [ $# -ge 2 ] || die "$1 needs a value"; rt=$2; shift 2 ;;
    --run-timeout=*) rt=${1#*=}; shift ;;
    --filter) [ $# -ge 2 ] || die "$1 needs a value"; filters="$filters
$2"; shift 2 ;;
    --filter=*) filters="$filters
${1#*=}"; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || die "usage: run-on-gpu.sh [options] BUNDLE_DIR"
case $jobs in ''|*[!0-9]*|0) die "-j wants a positive number" ;; esac
bundle=$(cd "$1" 2> /dev/null && pwd) || die "no bundle directory $1"
{ [ -f "$bundle/clangref.tar.xz" ] && [ -f "$bundle/tests.tsv" ]; } || die "$bundle: no clangref.tar.xz or tests.tsv"
command -v perl > /dev/null || die "perl not found"
command -v timeout > /dev/null || die "timeout not found"
out=${OUT:-$(pwd)}
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clangref.XXXXXX") || die "mktemp failed"
[ $keep = 1 ] || trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# unpack: xz, else the bundle's xzdec, else python3's lzma
start=$(date +%s)
if command -v xz > /dev/null; then
    xz -dc "$bundle/clangref.tar.xz" | tar -C "$tmp" -xf - || die "unpack failed"
elif [ -f "$bundle/tools/xzdec" ]; then
    cp "$bundle/tools/xzdec" "$tmp/xzdec" || die "cannot copy xzdec"
    chmod +x "$tmp/xzdec"
    LD_LIBRARY_PATH=$bundle/tools${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/xzdec" "$bundle/clangref.tar.xz" |
        tar -C "$tmp" -xf - || die "unpack failed (xzdec)"
elif command -v python3 > /dev/null; then
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
        "$bundle/clangref.tar.xz" | tar -C "$tmp" -xf - || die "unpack failed (python3)"
else
    die "no xz, no tools/xzdec, no python3: cannot unpack"
fi
root=$tmp/clangref
lib=$root/lib
{ [ -d "$lib" ] && [ -d "$root/bin" ]; } || die "bundle unpacked without lib/ or bin/"
chmod -R u+rwX "$root"
find "$root/bin" -type f -exec chmod +x {} +
chmod +x "$root/probe"

# The CUDA plugin dlopens "libcuda.so" (unversioned), which a driver-only
# install may lack: point one in the bundle's lib/ at the driver's libcuda.so.1.
cuda1=
for d in $(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' ' ') \
    $(ldconfig -p 2> /dev/null | awk '$1 == "libcuda.so.1" && /x86-64/ { sub(/\/[^\/]*$/, "", $NF); print $NF }') \
    /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/wsl/lib; do
    [ -e "$d/libcuda.so.1" ] && { cuda1=$d/libcuda.so.1; break; }
done
if [ -n "$cuda1" ]; then
    ln -sf "$cuda1" "$lib/libcuda.so"
    echo "clangref: libcuda.so -> $cuda1"
else
    echo "clangref: WARNING: no libcuda.so.1 found: target regions will fall back to the host"
fi
libpath=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

logs=$tmp/logs
mkdir -p "$logs"
# the probe: does a target region reach the GPU? and which CUDA plugin did it?
LD_LIBRARY_PATH=$libpath timeout -k 5 60 "$root/probe" > "$logs/probe.log" 2>&1
prc=$?
LD_LIBRARY_PATH=$libpath LD_DEBUG=libs timeout -k 5 60 "$root/probe" > /dev/null 2> "$logs/probe-ld-debug.log"
plugins=" $(sed -n 's|.*calling init: .*/libomptarget\.rtl\.\(cuda[a-z.]*\)\.so$|\1|p' "$logs/probe-ld-debug.log" | tr '\n' ' ')"
# libomptarget 16 tries libomptarget.rtl.cuda.so only when the nextgen plugin fails
case $plugins in
*" cuda "*) plugin="legacy libomptarget.rtl.cuda.so (the nextgen plugin failed to load or initialise)" ;;
*" cuda.nextgen "*) plugin="nextgen libomptarget.rtl.cuda.nextgen.so" ;;
*) plugin="none loaded" ;;
esac
echo "probe: CUDA plugin: $plugin" >> "$logs/probe.log"
cat "$logs/probe.log"
if [ $prc -ne 0 ]; then
    echo "clangref: WARNING: the probe did not offload (exit $prc); tests will say 'on the host'"
    grep -E 'libcuda|rtl\.cuda|error|cannot' "$logs/probe-ld-debug.log" | head -n 40
    LD_LIBRARY_PATH=$libpath LIBOMPTARGET_INFO=-1 timeout -k 5 60 "$root/probe" 2>&1 | head -n 40 |
        tee "$logs/probe-info.log"
fi

# the tests: every line of tests.tsv (path, built|BUILD, reason), filtered
awk -F '\t' 'NF >= 2' "$bundle/tests.tsv" | while IFS="$(printf '\t')" read -r t st why; do
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
    printf '%s\t%s\t%s\n' "$t" "$st" "$why"
done > "$tmp/selected.tsv"
awk -F '\t' '$2 == "built" { print $1 }' "$tmp/selected.tsv" > "$tmp/run.txt"
n=$(wc -l < "$tmp/selected.tsv")
nrun=$(wc -l < "$tmp/run.txt")
echo "clangref: $n tests, $nrun built by Clang, jobs $jobs, run timeout ${rt}s"
CR_ROOT=$root CR_LOGS=$logs CR_LIBPATH=$libpath CR_RUN_TIMEOUT=$rt
export CR_ROOT CR_LOGS CR_LIBPATH CR_RUN_TIMEOUT
[ "$nrun" -gt 0 ] && xargs -P "$jobs" -n 1 sh "$0" --one < "$tmp/run.txt"
elapsed=$(($(date +%s) - start))

res=$out/clangref-results.tsv
while IFS="$(printf '\t')" read -r t st why; do
    if [ "$st" != built ]; then
        printf 'omp\t%s\tBUILD\t-\t%s\n' "$t" "$why"
    elif [ -f "$logs/${t%.c}.tsv" ]; then
        cat "$logs/${t%.c}.tsv"; rm -f "$logs/${t%.c}.tsv"
    else
        printf 'omp\t%s\tFAIL\t-\trunner: no result recorded\n' "$t"
    fi
done < "$tmp/selected.tsv" > "$res"

{
    echo "== Clang 16 reference (OpenMP_VV, $(head -n 1 "$bundle/MANIFEST" 2> /dev/null | sed 's/^compiler: //')), ${elapsed}s =="
    head -n 2 "$logs/probe.log"
    awk -F '\t' '
        { n++; c[$3]++; w[$3, $4]++ }
        END {
            split("PASS FAIL CRASH TIMEOUT BUILD SKIP", st, " ")
            printf "%-6s %6s", "suite", "total"
            for (i = 1; i <= 6; i++) printf " %7s", st[i]
            printf "\n%-6s %6d", "omp", n
            for (i = 1; i <= 6; i++) printf " %7d", c[st[i]]
            printf "\n"
            printf "PASS on the device %d, on the host %d, unsaid %d\n", w["PASS", "device"], w["PASS", "host"], w["PASS", "-"]
            printf "FAIL on the device %d, on the host %d, unsaid %d\n", w["FAIL", "device"], w["FAIL", "host"], w["FAIL", "-"]
        }' "$res"
    awk -F '\t' '
        $3 == "PASS" { p++ } $3 == "SKIP" { s++ } $3 != "PASS" && $3 != "SKIP" { f++ }
        END {
            printf "%d skipped (counted in neither number below)\n", s
            printf "%d passed, %d failed\n", p, f
        }' "$res"
} > "$out/clangref-summary.txt"
(cd "$tmp" && tar -czf "$out/clangref-logs.tar.gz" logs) 2> /dev/null
cat "$out/clangref-summary.txt"
echo "clangref: results in $res"
