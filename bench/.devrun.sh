set -u
make gpu-check MACC=build/bin/macc > $OUT/gpu-check.log 2>&1; grep -E "FAIL|passed" $OUT/gpu-check.log | tail -8
NBODY="65536 10 2048" sh bench/share.sh build-gpu 2 2>&1 | tee $OUT/share.log
cd build-gpu/bench/share && MACC_TRACE=$OUT/nbody-shared.json MACC_STATS=1 ./nbody 65536 10 2048 > $OUT/nbody-trace.log 2>&1; tail -6 $OUT/nbody-trace.log
MACC_TRACE=$OUT/stream-shared.json MACC_STATS=1 ./stream 33554432 10 2097152 > $OUT/stream-trace.log 2>&1; tail -12 $OUT/stream-trace.log
cd .. && tar czf $OUT/sharelogs.tgz share/*.log
