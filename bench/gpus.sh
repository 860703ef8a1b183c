# gpus.sh (sourced by share.sh and managed.sh): the GPUs the benchmarks use.
# Sets ngpus and gpus_list ("0,1,..."): the GPUs the programs see (nvidia-smi
# lists every GPU of the machine, CUDA only those CUDA_VISIBLE_DEVICES names),
# or the first BENCH_GPUS of them (on a four-GPU machine, BENCH_GPUS=2 gives
# the two-GPU rows).
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    ngpus=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c . || true)
fi
if [ -n "${BENCH_GPUS:-}" ] && [ "$BENCH_GPUS" -lt "${ngpus:-0}" ]; then
    ngpus=$BENCH_GPUS
fi
ngpus=${ngpus:-0}
gpus_list=$(seq -s, 0 $((ngpus > 0 ? ngpus - 1 : 0)))
echo "GPUs used: $ngpus (nvidia:$gpus_list)"
