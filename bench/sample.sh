# sample.sh (sourced by ab.sh and scaling.sh): the samples whose throughput
# the benchmarks read. sample_check SAMPLE REPS (the caller's name in $me):
# SAMPLE is nbody, matmul or stream (sets unit) and REPS a positive number,
# or the script exits 2. sample_rate SAMPLE LOG: the throughput a run
# printed in LOG (stream: its pipelined rate), 0 when the run did not print
# `check: PASS`.
sample_check() {
    case $1 in
    nbody | matmul) unit=GFLOP/s ;;
    stream) unit=GB/s ;;
    *)
        echo "$me: SAMPLE is nbody, matmul or stream" >&2
        exit 2
        ;;
    esac
    case $2 in '' | *[!0-9]* | 0)
        echo "$me: REPS must be a positive number" >&2
        exit 2
        ;;
    esac
}

sample_rate() {
    if grep -q 'check: PASS' "$2"; then
        case $1 in
        stream) v=$(awk '/^Pipelined/ { print $2 }' "$2") ;;
        *) v=$(sed -n 's/.*GFLOP\/s=\([0-9.]*\).*/\1/p' "$2" | head -n 1) ;;
        esac
        echo "${v:-0}"
    else
        echo 0
    fi
}
