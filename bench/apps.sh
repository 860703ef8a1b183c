#!/usr/bin/env bash
# Real programs against Clang 16: every OpenMP-offload program of the realcodes
# set that Clang 16 builds, built with macc and with Clang 16 from the same
# sources and flags, run on the same GPU in one go; the OpenACC programs against
# macc's build of their OpenMP twin.
#
#   bash bench/apps.sh build [BUILD [OUT]]   # where clang-16 and nvcc are (not the GPU machine)
#   bash bench/apps.sh run [OUT [REPS [NAME...]]]   # on the GPU machine, OUT carried along
#
# build: BUILD is macc's build tree (default build: BUILD/bin/macc); OUT (default
#   build/apps) receives apps.tar.xz: macc/<name> and clang/<name> (stripped),
#   lib/ (Clang's offload runtime, tools/clang-offload-lib.sh), a probe, the SRAD
#   image, and build.tsv (name, compiler, built|BUILD, first error line). APPS_KEEP_CLANG=1
#   rebuilds macc's side only, keeping Clang's from the OUT/apps.tar.xz already there.
#   Clang: clang-16 -fopenmp --offload-arch=$ARCH --cuda-path=$CUDA_PATH; macc:
#   BUILD/bin/macc with the same flags (ARCH sm_90 by default; macc compiles for
#   the GPU nvcc's default or MACC_NVCC_FLAGS say). The programs come from
#   MACC_REALCODES (default ../shared/realcodes).
# run: unpacks, checks that Clang's target regions reach the GPU (a probe run
#   with OMP_TARGET_OFFLOAD=MANDATORY), then runs every program REPS times
#   (default 3) with each compiler at the sizes below and prints, per program,
#   the median of the program's own timer (its kernel or compute time), the
#   median wall time of the whole process, Clang / macc of each (above 1: macc
#   faster), whether the result checked, and the geometric means; Clang runs
#   with OMP_TARGET_OFFLOAD=MANDATORY, macc with its defaults (MACC_STATS=1 says
#   where its tasks ran). Then the OpenACC programs: macc's OpenACC build against
#   macc's build of the OpenMP twin. Results as TSV in $OUT_DIR (env OUT, when
#   set, else OUT) as apps-results.tsv. APPS_ALLOW_HOST=1 lets Clang's regions fall back to the
#   host (to try the script on a machine without a GPU; the numbers then mean nothing).
#
# Programs and sizes (gpu sizes of realcodes' scripts):
#   prk-{nstream,transpose,stencil}-target  100 100000000 | 100 8192 | 100 8000; timer: Avg time (s)
#   xsbench, rsbench   -s small -m event; timer: Runtime; check: (Valid) / checksum valid
#   nr-bfs-p1..p3      generated graph, 2M nodes x 6 edges (-O1, the project's level); timer:
#                      Compute time; check: result.txt equal between the two compilers
#   srad-v1            100 0.5 1024 1024; timer: the COMPUTE stage; check: image_out.pgm of the
#                      two compilers within 1 per pixel
#   pb-omp-*           PolyBench-ACC OpenMP (nctu), POLY1D mode, LARGE_DATASET, POLYBENCH_TIME
#   pbgpu-omp-*        PolybenchOMP, the sources' sizes; timer: OMP Runtime
#   OpenACC: prk-*-openacc against prk-*-target; pb-acc-{gemm,2mm,atax,bicg,convolution-2d,
#   covariance} (LARGE_DATASET) against pb-omp-*.
# Correctness of every program at these sizes is also what `make realcodes` on a GPU checks.
set -u

die() { echo "apps: $*" >&2; exit 2; }

OMP_SET="prk-nstream-target prk-transpose-target prk-stencil-target xsbench rsbench
nr-bfs-p1 nr-bfs-p2 nr-bfs-p3 srad-v1
pb-omp-gemm pb-omp-2mm pb-omp-3mm pb-omp-atax pb-omp-bicg pb-omp-gemver pb-omp-convolution-2d
pb-omp-convolution-3d pb-omp-correlation pb-omp-covariance
pbgpu-omp-gemm pbgpu-omp-2mm pbgpu-omp-atax pbgpu-omp-bicg pbgpu-omp-mvt pbgpu-omp-gesummv
pbgpu-omp-2dconv pbgpu-omp-fdtd-2d pbgpu-omp-corr pbgpu-omp-covar"
ACC_SET="prk-nstream-openacc prk-transpose-openacc prk-stencil-openacc pb-acc-gemm pb-acc-2mm
pb-acc-atax pb-acc-bicg pb-acc-convolution-2d pb-acc-covariance"

twin() { # OpenACC program -> its OpenMP twin
    case $1 in
    prk-*-openacc) echo "${1%-openacc}-target" ;;
    pb-acc-*) echo "pb-omp-${1#pb-acc-}" ;;
    esac
}

pbomp_dir() {
    case $1 in
    correlation|covariance) echo datamining/$1 ;;
    convolution-2d|convolution-3d) echo stencils/$1 ;;
    *) echo linear-algebra/kernels/$1 ;;
    esac
}
pbacc_dir() {
    case $1 in
    covariance) echo datamining/$1 ;;
    jacobi-2d-imper|fdtd-2d|convolution-2d) echo stencils/$1 ;;
    *) echo linear-algebra/kernels/$1 ;;
    esac
}
pbgpu_src() {
    case $1 in
    gemm) echo GEMM/gemm.c ;; 2mm) echo 2MM/2mm.c ;; atax) echo ATAX/atax.c ;; bicg) echo BICG/bicg.c ;;
    mvt) echo MVT/mvt.c ;; gesummv) echo GESUMMV/gesummv.c ;; 2dconv) echo 2DCONV/2DConvolution.c ;;
    fdtd-2d) echo FDTD-2D/fdtd2d.c ;; corr) echo CORR/correlation.c ;; covar) echo COVAR/covariance.c ;;
    esac
}

# build_prog NAME COMPILER-COMMAND... : builds NAME with the command in a copy of its
# sources under $W/src, into $EXE; prints the first error line on failure
build_prog() {
    local n=$1; shift
    local rc=$W/realcodes c=$W/src/$n.$CNAME log=$W/logs/$n.$CNAME.log
    rm -rf "$c"; mkdir -p "$c"
    case $n in
    prk-*)
        local k=${n#prk-}
        cp -r "$rc/clients/prk/C1z" "$rc/clients/prk/common" "$c/"
        local m; case $k in *-openacc) m=-fopenacc ;; *) m=-fopenmp ;; esac
        (cd "$c/C1z" && "$@" -std=c11 -pthread -O3 -DPRKVERSION=2020 "$k.c" $m -o "$EXE" -lm) ;;
    xsbench|rsbench)
        cp "$rc/clients/$n/openmp-offload/"* "$c/"
        (cd "$c" && "$@" -std=gnu99 -Wall -O3 -fopenmp ./*.c -o "$EXE" -lm) ;;
    nr-bfs-p*)
        cp -r "$rc/clients/neorodinia/common" "$rc/clients/neorodinia/bfs" "$c/"
        (cd "$c/bfs" && "$@" -Wall -O1 -I../common ../common/utils.c "bfs_omp_Offloading_P${n#nr-bfs-p}.c" \
            main.c bfs_common.c -fopenmp -o "$EXE" -lm) ;;
    srad-v1)
        cp "$rc/clients/rodinia/srad_v1/"* "$c/"
        (cd "$c" && "$@" -O3 -fopenmp -Wall main.c -o "$EXE" -lm) ;;
    pb-omp-*)
        local k=${n#pb-omp-} d; d=$(pbomp_dir "$k")
        mkdir -p "$c/$d"; cp -r "$rc/more/polybench-acc-nctu/OpenMP/utilities" "$c/"
        cp "$rc/more/polybench-acc-nctu/OpenMP/$d/"* "$c/$d/"
        (cd "$c/$d" && "$@" -O2 -fopenmp -DOMP_OFFLOAD -DPOLYBENCH_OFFLOAD1D -Wno-incompatible-pointer-types \
            -DLARGE_DATASET -DPOLYBENCH_TIME -I"$c/utilities" "$k.c" "$c/utilities/polybench.c" -o "$EXE" -lm) ;;
    pb-acc-*)
        local k=${n#pb-acc-} d; d=$(pbacc_dir "$k")
        mkdir -p "$c/$d"; cp -r "$rc/more/polybench-acc/OpenACC/utilities" "$c/"
        cp "$rc/more/polybench-acc/OpenACC/$d/"* "$c/$d/"
        (cd "$c/$d" && "$@" -O2 -fopenacc -DLARGE_DATASET -DPOLYBENCH_TIME -I"$c/utilities" "$k.c" \
            "$c/utilities/polybench.c" -o "$EXE" -lm) ;;
    pbgpu-omp-*)
        local s; s=$(pbgpu_src "${n#pbgpu-omp-}")
        mkdir -p "$c/OmpGPU/${s%/*}" "$c/common"
        cp "$rc/more/polybench-omp/common/"* "$c/common/"; cp "$rc/more/polybench-omp/OmpGPU/$s" "$c/OmpGPU/$s"
        (cd "$c/OmpGPU/${s%/*}" && "$@" -O2 -fopenmp "${s#*/}" -o "$EXE" -lm) ;;
    *) echo "unknown program $n" > "$log"; false ;;
    esac > "$log" 2>&1 < /dev/null
    local st=$?
    if [ $st -eq 0 ] && [ -x "$EXE" ]; then return 0; fi
    grep -m 1 -E 'error|undefined reference' "$log" | sed -e "s|$W/||g" | cut -c 1-200
    return 1
}

# build_one NAME COMPILER MACC CLANG ARCH CUDA STRIP APPS: one binary, its line in build.tsv
build_one() {
    local n=$1 why
    CNAME=$2 EXE=$8/$2/$1
    if [ "$CNAME" = macc ]; then why=$(build_prog "$n" "$3")
    else why=$(build_prog "$n" "$4" --offload-arch="$5" --cuda-path="$6" -Wno-unknown-cuda-version); fi
    if [ $? -eq 0 ]; then
        "$7" --strip-all "$EXE"
        printf '%s\t%s\tbuilt\t\n' "$n" "$CNAME" >> "$8/build.tsv"
        printf 'built  %-6s %s\n' "$CNAME" "$n"
    else
        printf '%s\t%s\tBUILD\t%s\n' "$n" "$CNAME" "$why" >> "$8/build.tsv"
        printf 'BUILD  %-6s %s: %s\n' "$CNAME" "$n" "$why"
    fi
}

do_build() {
    local build=${1:-build} out=${2:-build/apps}
    local macc clang=${CLANG:-clang-16} cuda=${CUDA_PATH:-/usr/local/cuda} arch=${ARCH:-sm_90}
    macc=$(cd "$build/bin" 2> /dev/null && pwd)/macc
    [ -x "$macc" ] || die "$build/bin/macc not found (make first)"
    command -v "$clang" > /dev/null || die "$clang not found (Debian 12: apt-get install clang-16 llvm-16 llvm-16-dev libomp-16-dev clang-tools-16)"
    local rc=${MACC_REALCODES:-../shared/realcodes}
    [ -d "$rc/clients/prk" ] || die "$rc: no realcodes (set MACC_REALCODES)"
    mkdir -p "$out" || die "cannot create $out"
    out=$(cd "$out" && pwd)
    W=$(mktemp -d "${TMPDIR:-/tmp}/macc-apps.XXXXXX") || die mktemp
    trap 'rm -rf "$W"' EXIT
    ln -s "$(cd "$rc" && pwd)" "$W/realcodes"
    local A=$W/apps
    mkdir -p "$A/macc" "$A/clang" "$A/data" "$W/logs" "$W/src"
    local strip_cmd; strip_cmd=$(command -v llvm-strip-16 || command -v strip)
    : > "$A/build.tsv"
    local keep=0
    if [ "${APPS_KEEP_CLANG:-0}" = 1 ] && [ -f "$out/apps.tar.xz" ]; then
        # macc's binaries only: Clang's, its runtime and the probe from the last bundle
        xz -dc "$out/apps.tar.xz" | tar -C "$W" -xf - apps/clang apps/lib apps/probe apps/build.tsv && keep=1
        [ $keep = 1 ] && { grep -P '\tclang\t' "$A/build.tsv" > "$A/build.tsv.clang"; mv "$A/build.tsv.clang" "$A/build.tsv"; }
    fi
    local n jobs=${JOBS:-$(nproc 2> /dev/null || echo 2)}
    for n in $OMP_SET $ACC_SET; do
        for CNAME in macc clang; do
            case $n in *-openacc|pb-acc-*) [ $CNAME = clang ] && continue ;; esac
            [ $keep = 1 ] && [ $CNAME = clang ] && continue
            build_one "$n" $CNAME "$macc" "$clang" "$arch" "$cuda" "$strip_cmd" "$A" &
            while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do wait -n; done
        done
    done
    wait
    [ $keep = 1 ] || build_clang_side "$clang" "$arch" "$cuda" "$strip_cmd" "$A"
    cp "$rc/clients/rodinia/data/srad/image.pgm" "$A/data/"
    { echo "date: $(date -u +%Y-%m-%d)"; echo "clang: $("$clang" --version | head -n 1)"
      echo "macc: $(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2> /dev/null)"
      echo "nvcc: $("$cuda/bin/nvcc" --version | tail -n 1)"; } > "$A/MANIFEST"
    (cd "$W" && tar -cf - apps) | xz -6 -T 2 > "$out/apps.tar.xz" || die "pack failed"
    echo "apps: $out/apps.tar.xz ($(du -h "$out/apps.tar.xz" | cut -f 1)); $(grep -c built "$A/build.tsv") built, $(grep -c BUILD "$A/build.tsv") failed"
}

# build_clang_side CLANG ARCH CUDA STRIP APPS: the probe and Clang's runtime
build_clang_side() {
    local clang=$1 arch=$2 cuda=$3 A=$5
    cat > "$W/probe.c" << 'EOF'
#include <omp.h>
#include <stdio.h>
int main(void)
{
    int on_host = 1;
    #pragma omp target map(tofrom: on_host)
    on_host = omp_is_initial_device();
    printf("probe: %d device(s); target region ran on the %s\n", omp_get_num_devices(), on_host ? "host" : "device");
    return on_host;
}
EOF
    "$clang" -O2 -fopenmp --offload-arch="$arch" --cuda-path="$cuda" -Wno-unknown-cuda-version "$W/probe.c" \
        -o "$A/probe" > "$W/logs/probe.log" 2>&1 || { cat "$W/logs/probe.log"; die "probe build failed"; }
    sh "$(dirname "$0")/../tools/clang-offload-lib.sh" "$A/lib" || die "Clang's runtime could not be copied"
}

# ---- run ------------------------------------------------------------------------------------

args_of() {
    case $1 in
    prk-nstream-*) echo "100 100000000" ;;
    prk-transpose-*) echo "100 8192" ;;
    prk-stencil-*) echo "100 8000" ;;
    xsbench|rsbench) echo "-s small -m event" ;;
    nr-bfs-*) echo "$R/graph.txt" ;;
    srad-v1) echo "100 0.5 1024 1024" ;;
    esac
}
timer_of() { # name log -> seconds by the program's own timer
    case $1 in
    prk-*) sed -n 's/.*Avg time (s): *\([0-9.e+-]*\).*/\1/p' "$2" | head -n 1 ;;
    xsbench|rsbench) sed -n 's/^Runtime: *\([0-9.e+-]*\) seconds.*/\1/p' "$2" | head -n 1 ;;
    nr-bfs-*) sed -n 's/.*Compute time: *\([0-9.e+-]*\).*/\1/p' "$2" | head -n 1 | awk '{ print $1 / 1000 }' ;;
    srad-v1) awk '/: COMPUTE$/ { print $1; exit }' "$2" ;;
    pb-*) grep -E '^[0-9]+\.[0-9]+$' "$2" | tail -n 1 ;;
    pbgpu-*) sed -n 's/^OMP Runtime: *\([0-9.e+-]*\)s.*/\1/p' "$2" | head -n 1 ;;
    esac
}
check_of() { # name log dir -> ok | WRONG | - (no check of its own)
    case $1 in
    prk-*) grep -q 'Solution validates' "$2" && echo ok || echo WRONG ;;
    xsbench|rsbench) grep -q 'Valid' "$2" && ! grep -q 'INVALID' "$2" && echo ok || echo WRONG ;;
    nr-bfs-*) [ -s "$3/result.txt" ] && echo result || echo WRONG ;;
    srad-v1) [ -s "$3/image_out.pgm" ] && echo result || echo WRONG ;;
    *) echo - ;;
    esac
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }

# run_one NAME COMPILER: runs REPS times in $R/run/NAME.COMPILER; prints "timer wall check stats"
run_one() {
    local n=$1 cc=$2
    local d=$R/run/$1.$2 i t0 t1 ts="" ws="" chk=ok st=""
    local exe=$R/apps/$cc/$n
    [ -x "$exe" ] || { echo "- - BUILD -"; return; }
    rm -rf "$d"; mkdir -p "$d/x/y"
    # SRAD reads ../../../data/srad/image.pgm: it runs in x/y/z
    mkdir -p "$d/data/srad" "$d/x/y/z"; cp "$R/apps/data/image.pgm" "$d/data/srad/"
    for i in $(seq "$REPS"); do
        t0=$(now)
        # shellcheck disable=SC2046
        if [ "$cc" = clang ]; then
            (cd "$d/x/y/z" && OMP_TARGET_OFFLOAD=$MANDATORY LD_LIBRARY_PATH=$R/apps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
                timeout -k 5 "$TIMEOUT" "$exe" $(args_of "$n") > "$d/out.$i" 2> "$d/err.$i" < /dev/null)
        else
            (cd "$d/x/y/z" && MACC_STATS=1 timeout -k 5 "$TIMEOUT" "$exe" $(args_of "$n") > "$d/out.$i" 2> "$d/err.$i" < /dev/null)
        fi
        local rc=$?
        t1=$(now)
        [ $rc -eq 0 ] || { chk="exit$rc"; break; }
        ts="$ts $(timer_of "$n" "$d/out.$i")"
        ws="$ws $(echo "$t0 $t1" | awk '{ print $2 - $1 }')"
        [ "$i" = 1 ] && chk=$(check_of "$n" "$d/out.1" "$d/x/y/z")
    done
    [ "$cc" = macc ] && [ -f "$d/err.1" ] &&
        st=$(awk '/^macc: / && $2 != "statistics" && $2 != "device" && $3 ~ /^[0-9]+$/ { printf "%s%s=%s", s, $2, $3; s = "," }' "$d/err.1")
    local tm wm
    tm=$(printf '%s\n' $ts | grep . | median); wm=$(printf '%s\n' $ws | grep . | median)
    echo "${tm:--} ${wm:--} $chk ${st:--}"
}
same_result() { # name: the two compilers' outputs agree (BFS: result.txt equal; SRAD: pixels within 1)
    local a=$R/run/$1.macc/x/y/z b=$R/run/$1.clang/x/y/z
    case $1 in
    nr-bfs-*) cmp -s "$a/result.txt" "$b/result.txt" ;;
    srad-v1)
        paste -d' ' <(tail -n +4 "$a/image_out.pgm" | tr ' ' '\n' | grep .) <(tail -n +4 "$b/image_out.pgm" | tr ' ' '\n' | grep .) |
            awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1) bad++; n++ } END { exit !(n > 0 && bad == 0) }' ;;
    esac
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else printf "-" }'; }

do_run() {
    local bundle=${1:-build/apps}
    REPS=${2:-3}
    [ $# -gt 2 ] && { shift 2; only=" $* "; } || only=""
    TIMEOUT=${TIMEOUT:-300}
    [ -f "$bundle/apps.tar.xz" ] || die "$bundle/apps.tar.xz not found (bench/apps.sh build first)"
    R=$(mktemp -d "${TMPDIR:-/tmp}/macc-apps-run.XXXXXX") || die mktemp
    if command -v xz > /dev/null; then xz -dc "$bundle/apps.tar.xz" | tar -C "$R" -xf - || die "unpack failed"
    else python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$bundle/apps.tar.xz" |
        tar -C "$R" -xf - || die "unpack failed"; fi
    local lib=$R/apps/lib cuda1="" d
    for d in $(ldconfig -p 2> /dev/null | awk '$1 == "libcuda.so.1" && /x86-64/ { sub(/\/[^\/]*$/, "", $NF); print $NF }') \
        /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/compat; do
        [ -e "$d/libcuda.so.1" ] && { cuda1=$d/libcuda.so.1; break; }
    done
    [ -n "$cuda1" ] && ln -sf "$cuda1" "$lib/libcuda.so"
    cat "$R/apps/MANIFEST"
    echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1)"
    MANDATORY=MANDATORY
    if [ "${APPS_ALLOW_HOST:-0}" = 1 ]; then MANDATORY=DEFAULT; LD_LIBRARY_PATH=$lib "$R/apps/probe"
    else OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$lib "$R/apps/probe" || die "Clang's probe did not run on the GPU"; fi
    # the BFS input: Rodinia's format, 2M nodes x 6 edges (as realcodes' run-clients.sh makes it)
    cat > "$R/graphgen.c" << 'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  long n = atol(argv[1]), deg = atol(argv[2]);
  unsigned long long s = 12345;
  printf("%ld\n", n);
  for (long i = 0; i < n; i++) printf("%ld %ld\n", i * deg, deg);
  printf("\n0\n\n%ld\n", n * deg);
  for (long i = 0; i < n; i++) {
    printf("%ld 1\n", (i + 1) % n);
    for (long k = 1; k < deg; k++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      printf("%llu %d\n", (s >> 33) % (unsigned long long)n, 1 + (int)((s >> 20) % 10));
    }
  }
  return 0;
}
EOF
    (unset CC; cc -O2 "$R/graphgen.c" -o "$R/graphgen") && "$R/graphgen" 2000000 6 > "$R/graph.txt" || die "graph generation failed"
    local tsv=${OUT:-$bundle}/apps-results.tsv
    printf 'program\tmacc_s\tclang_s\tclang/macc\tmacc_wall_s\tclang_wall_s\twall clang/macc\tcheck\tmacc tasks\n' > "$tsv"
    printf '%-24s %10s %10s %8s | %8s %8s %8s | %-14s %s\n' program "macc s" "clang s" clang/macc "macc wall" "clang wall" ratio check "macc tasks"
    local n m c r rw chk lg=0 lw=0 k=0 worst="" worstr=9
    for n in $OMP_SET; do
        [ -n "$only" ] && [ "${only#* $n }" = "$only" ] && continue
        set -- $(run_one "$n" macc); m=("$@")
        set -- $(run_one "$n" clang); c=("$@")
        r=$(ratio "${c[0]}" "${m[0]}"); rw=$(ratio "${c[1]}" "${m[1]}")
        chk="${m[2]}/${c[2]}"
        if [ "${m[2]}" = result ] && [ "${c[2]}" = result ]; then
            same_result "$n" && chk="same" || chk="DIFFER"
        fi
        printf '%-24s %10s %10s %8s | %8s %8s %8s | %-14s %s\n' "$n" "${m[0]}" "${c[0]}" "$r" "${m[1]}" "${c[1]}" "$rw" "$chk" "${m[3]}"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "${m[0]}" "${c[0]}" "$r" "${m[1]}" "${c[1]}" "$rw" "$chk" "${m[3]}" >> "$tsv"
        if [ "$r" != - ]; then
            lg=$(awk -v s="$lg" -v x="$r" 'BEGIN { print s + log(x) }'); k=$((k + 1))
            lw=$(awk -v s="$lw" -v x="${rw/-/1}" 'BEGIN { print s + log(x) }')
            awk -v a="$r" -v b="$worstr" 'BEGIN { exit !(a < b) }' && { worstr=$r; worst=$n; }
        fi
    done
    if [ $k -gt 0 ]; then
        echo "geometric mean over $k programs: clang/macc $(awk -v s="$lg" -v k=$k 'BEGIN { printf "%.3f", exp(s / k) }') (own timers), $(awk -v s="$lw" -v k=$k 'BEGIN { printf "%.3f", exp(s / k) }') (wall); lowest $worstr ($worst)"
    fi
    echo
    echo "OpenACC against the OpenMP twin (both macc; above 1: the OpenACC build is faster)"
    printf '%-24s %10s %-24s %10s %8s | %-8s %s\n' program "acc s" twin "omp s" omp/acc check "macc tasks"
    local a t
    for n in $ACC_SET; do
        [ -n "$only" ] && [ "${only#* $n }" = "$only" ] && continue
        t=$(twin "$n")
        set -- $(run_one "$n" macc); a=("$@")
        m=$(awk -F '\t' -v p="$t" '$1 == p { print $2 }' "$tsv")
        r=$(ratio "$m" "${a[0]}")
        printf '%-24s %10s %-24s %10s %8s | %-8s %s\n' "$n" "${a[0]}" "$t" "${m:--}" "$r" "${a[2]}" "${a[3]}"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "${a[0]}" "twin:$t" "$r" "${a[1]}" - - "${a[2]}" "${a[3]}" >> "$tsv"
    done
    rm -rf "$R"
}

case ${1:-} in
build) shift; do_build "$@" ;;
run) shift; do_run "$@" ;;
*) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
