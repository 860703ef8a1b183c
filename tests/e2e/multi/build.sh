#!/bin/sh
# build.sh MACC OUT [FLAGS...]: the multi-file program built three ways, as
# OUT/one (one macc command), OUT/objs (macc -c per file, then a link of the
# objects) and OUT/lib (lib.c and util.c in a static library, linked with -L/-l).
set -eu
macc=$1
out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$macc" "$@" "$here/main.c" "$here/lib.c" "$here/util.c" -o "$out/one"
for f in main lib util; do
    "$macc" "$@" -c "$here/$f.c" -o "$out/$f.o"
done
"$macc" "$@" "$out/main.o" "$out/lib.o" "$out/util.o" -o "$out/objs"
rm -f "$out/libmulti.a"
ar rcs "$out/libmulti.a" "$out/lib.o" "$out/util.o"
"$macc" "$@" "$out/main.o" -L"$out" -lmulti -o "$out/lib"
