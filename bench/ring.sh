#!/bin/sh
# ring.sh: seed 001's evaluation (Wei et al., the DCA++ ring) with
# samples/ring_g4.c and libmaccrt_mpi. Three tables:
#   1. memory of G4 per rank vs P (the slice, the ring buffers, and the
#      measured growth of the ring phase: peak resident memory on the host,
#      GPU memory in use (cudaMemGetInfo) with GPU=1; target: <= 1/P of G4 +
#      3 buffers of G_sigma; the ring holds 2), with the time per measurement;
#   2. time per measurement vs the sub-ring size S at the largest P;
#   3. effective ring bandwidth vs the link's peak for the same message size
#      (170 MB by default), measured in the same run by a plain MPI ring of
#      Irecv/Isend/Waitall (ring_g4 --peak); target >= 50%.
#
#   usage: bench/ring.sh BUILD_DIR
#
# BUILD_DIR holds macc's build (BUILD_DIR/bin/macc, BUILD_DIR/lib with
# libmaccrt_mpi.a; MACC=path uses a macc binary built elsewhere). Environment:
#   NPS="1 2 4"         rank counts of tables 1 and 3
#   MEM_ARGS="-k 192 -n 4"      ring_g4 sizes of tables 1-2 (G4 113 MB)
#   BW_ARGS="-k 3260 -k3 1 -n 3" table 3 (G_sigma 170 MB, G4 170 MB, no reference)
#   MPIRUN_ARGS         more mpirun options; on the CPU machine --oversubscribe
#                       is added (and --allow-run-as-root as root)
#   GPU=1               one rank per GPU: NPS defaults to 1..number of GPUs, the
#                       slices and buffers go to the GPUs (MACC_MPI_DEVICE=gpu;
#                       CUDA_MODULE_LOADING=EAGER: code is not counted as data)
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
macc=${MACC:-$build/bin/macc}
[ -x /usr/local/cuda/bin/nvcc ] && PATH=$PATH:/usr/local/cuda/bin && export PATH
gpu=${GPU:-0}
ngpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
if [ "$gpu" = 1 ]; then
    [ "$ngpus" -gt 0 ] || { echo "ring.sh: GPU=1 but nvidia-smi lists no GPU" >&2; exit 1; }
    nps=${NPS:-$(seq -s ' ' 1 "$ngpus")}
    export MACC_MPI_DEVICE=gpu
    # kernels' code loaded when the context starts, not at their first launch
    # in the ring phase (CUDA's lazy loading takes a 2 MiB page of GPU memory
    # then, which the memory table would count as the array's)
    export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
    mpirun_args=${MPIRUN_ARGS:-}
else
    nps=${NPS:-1 2 4}
    mpirun_args="--oversubscribe ${MPIRUN_ARGS:-}"
    export MACC_HOST_THREADS=${MACC_HOST_THREADS:-1}
fi
[ "$(id -u)" = 0 ] && mpirun_args="$mpirun_args --allow-run-as-root"
mem_args=${MEM_ARGS:--k 192 -n 4}
bw_args=${BW_ARGS:--k 3260 -k3 1 -n 3}
out=$build/bench/ring
mkdir -p "$out"

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1e6 }' /proc/meminfo)"
[ "$ngpus" -gt 0 ] && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sed 's/^/gpu: /'
echo "mpi: $(mpirun --version 2>&1 | head -n 1)"
echo "build: $macc --mpi -O3 samples/ring_g4.c -o ring_g4 -lm"
"$macc" --mpi -O3 "$root/samples/ring_g4.c" -o "$out/ring_g4" -lm

# run NP ARGS...: ring_g4's output in $out/last
run() {
    np=$1
    shift
    # shellcheck disable=SC2086
    echo "run: mpirun $mpirun_args -np $np ring_g4 $*" >&2
    # shellcheck disable=SC2086
    if ! mpirun $mpirun_args -np "$np" "$out/ring_g4" "$@" > "$out/last" 2>&1; then
        tail -n 20 "$out/last" >&2
        echo "ring.sh: ring_g4 failed" >&2
        exit 1
    fi
}
# field PATTERN SED: a number from the last output
field() { sed -n "$1" "$out/last" | head -n 1; }

echo
echo "## 1. memory of G4 per rank and time per measurement vs P (ring_g4 $mem_args)"
echo
echo "| P | G4 whole MB | slice MB (1/P) | ring buffers MB (2 G_sigma) | target MB (slice + 3 G_sigma) | measured MB | time/meas ms | L1 | L2 |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for np in $nps; do
    # shellcheck disable=SC2086
    run "$np" $mem_args
    whole=$(field 's/^G4: \([0-9.]*\) MB whole.*/\1/p')
    slice=$(field 's/^memory per rank: slice \([0-9.]*\) MB.*/\1/p')
    bufs=$(field 's/.*ring buffers \([0-9.]*\) MB.*/\1/p')
    meas=$(field 's/^memory per rank measured: .* growth of the ring phase \([0-9.]*\) MB.*/\1/p')
    target=$(field 's/.* = \([0-9.]*\) MB[,)].*/\1/p')
    verdict=$(field 's/^memory per rank measured: .*: \(.*\)$/\1/p')
    tm=$(field 's/^time per measurement: \([0-9.]*\) ms.*/\1/p')
    l1=$(field 's/^check: L1 = \([^,]*\),.*/\1/p')
    l2=$(field 's/^check: .* L2 = \([^ ]*\) .*/\1/p')
    [ "$gpu" = 1 ] && meas="$meas (GPU)"
    echo "| $np | $whole | $slice | $bufs | $target | $meas ${verdict:+($verdict)} | $tm | ${l1:--} | ${l2:--} |"
done

last_np=$(echo "$nps" | awk '{ print $NF }')
echo
echo "## 2. time per measurement vs sub-ring size, P = $last_np (ring_g4 $mem_args -s S)"
echo
echo "| S | slice MB | time/meas ms | ring GB/s per rank | L1 |"
echo "| --- | --- | --- | --- | --- |"
s=1
while [ "$s" -le "$last_np" ]; do
    if [ $((last_np % s)) -eq 0 ]; then
        # shellcheck disable=SC2086
        run "$last_np" $mem_args -s "$s"
        echo "| $s | $(field 's/^memory per rank: slice \([0-9.]*\) MB.*/\1/p') | $(field 's/^time per measurement: \([0-9.]*\) ms.*/\1/p') |" \
             "$(field 's/^ring bandwidth: \([0-9.]*\) GB.*/\1/p') | $(field 's/^check: L1 = \([^,]*\),.*/\1/p') |"
    fi
    s=$((s * 2))
done

echo
echo "## 3. effective ring bandwidth vs the link's peak (ring_g4 $bw_args --no-ref --peak)"
echo
echo "ring GB/s: (P-1) x message x N / time in macc_ring_run (communication and the overlapped"
echo "updates; making G_sigma is outside). 'G4 update': the sample's update region on the slice;"
echo "'no update': an empty update, the ring alone. Peak: a plain MPI ring (Irecv, Isend, Waitall)"
echo "of the same messages in the same run, best of 3 rounds."
echo
echo "| P | update | message MB | time/meas ms | ring ms/meas | ring GB/s per rank | plain MPI ring GB/s per rank | ring / peak |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for np in $nps; do
    [ "$np" -gt 1 ] || continue
    for mode in "G4 update" "no update"; do
        extra=""
        [ "$mode" = "no update" ] && extra=--no-update
        # shellcheck disable=SC2086
        run "$np" $bw_args --no-ref --peak $extra
        echo "| $np | $mode | $(field 's/.*G_sigma: \([0-9.]*\) MB per message.*/\1/p') | $(field 's/^time per measurement: \([0-9.]*\) ms.*/\1/p') |" \
             "$(field 's/^time in the ring: \([0-9.]*\) ms.*/\1/p') | $(field 's/^ring bandwidth: \([0-9.]*\) GB.*/\1/p') |" \
             "$(field 's/^peak: plain MPI ring of the same messages \([0-9.]*\) GB.*/\1/p') | $(field 's/.*ring \/ peak = \([0-9]*%\).*/\1/p') |"
    done
done
