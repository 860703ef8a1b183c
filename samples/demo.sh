#!/bin/sh
# demo.sh: builds samples/nbody.c with macc and runs it with the runtime's
# per-device statistics.
#   sh samples/demo.sh BUILD_DIR          (BUILD_DIR holds bin/macc)
# Environment: NBODY_N (bodies, default 8192), NBODY_STEPS (default 10),
# NBODY_BS (block size, default 1024); MACC_DEVICES etc. pass to the runtime.
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
case $1 in
    /*) BUILD=$1 ;;
    *) BUILD=$(pwd)/$1 ;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

MACC=$BUILD/bin/macc
if [ ! -x "$MACC" ]; then
    echo "demo: $MACC not found; run make first" >&2
    exit 1
fi

N=${NBODY_N:-8192}
STEPS=${NBODY_STEPS:-10}
BS=${NBODY_BS:-1024}

mkdir -p "$BUILD/samples"
echo "demo: $MACC -O2 samples/nbody.c -o $BUILD/samples/nbody -lm"
"$MACC" -O2 samples/nbody.c -o "$BUILD/samples/nbody" -lm

echo "demo: MACC_STATS=1 $BUILD/samples/nbody $N $STEPS $BS"
status=0
MACC_STATS=1 "$BUILD/samples/nbody" "$N" "$STEPS" "$BS" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    echo "demo: nbody exited with status $status" >&2
fi
exit "$status"
