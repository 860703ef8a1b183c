#!/bin/sh
# Makes sure the build dependencies are present.
#   tools/deps.sh DEPS_DIR
# System packages (Debian): libtree-sitter-dev, libcriterion-dev. Installed with
# apt-get when missing and we are root; otherwise prints what to install. Open
# MPI (libopenmpi-dev, openmpi-bin) likewise, but optional: without it the MPI
# module's tests are skipped.
# The C grammar: npm package tree-sitter-c at a pinned version, unpacked into
# DEPS_DIR/tree-sitter-c (never committed).
set -eu
deps=${1:-build/deps}
TS_C_VERSION=0.23.6
need=""
[ -f /usr/include/tree_sitter/api.h ] || need="$need libtree-sitter-dev"
[ -f /usr/include/criterion/criterion.h ] || need="$need libcriterion-dev"
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "deps: installing$need"
        apt-get install -y $need >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y $need >/dev/null; }
    else
        echo "deps: missing Debian packages:$need" >&2
        echo "deps: install them with: sudo apt-get install$need" >&2
        exit 1
    fi
fi
# Open MPI (the MPI module and its tests): installed like the others when we
# are root; otherwise a note with the line (the MPI tests are then skipped)
opt=""
command -v mpicc >/dev/null 2>&1 || opt="$opt libopenmpi-dev"
command -v mpirun >/dev/null 2>&1 || opt="$opt openmpi-bin"
if [ -n "$opt" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "deps: installing$opt"
        apt-get install -y --no-install-recommends $opt >/dev/null 2>&1 ||
            { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends $opt >/dev/null 2>&1; } ||
            echo "deps: note: could not install$opt: the MPI tests will be skipped" >&2
    else
        echo "deps: note: for the MPI module's tests: sudo apt-get install$opt" >&2
    fi
fi
dst="$deps/tree-sitter-c"
if [ ! -f "$dst/src/parser.c" ] || [ "$(cat "$dst/VERSION" 2>/dev/null)" != "$TS_C_VERSION" ]; then
    command -v npm >/dev/null 2>&1 || {
        echo "deps: npm is needed to fetch the C grammar (tree-sitter-c $TS_C_VERSION): sudo apt-get install npm" >&2
        exit 1
    }
    echo "deps: fetching tree-sitter-c $TS_C_VERSION from npm"
    rm -rf "$dst" "$deps/tmp"
    mkdir -p "$deps/tmp"
    (cd "$deps/tmp" && npm pack --silent "tree-sitter-c@$TS_C_VERSION" >/dev/null)
    tar -xzf "$deps/tmp/tree-sitter-c-$TS_C_VERSION.tgz" -C "$deps/tmp"
    mkdir -p "$dst"
    cp -r "$deps/tmp/package/src" "$dst/src"
    cp "$deps/tmp/package/LICENSE" "$dst/" 2>/dev/null || true
    echo "$TS_C_VERSION" > "$dst/VERSION"
    rm -rf "$deps/tmp"
fi
