#!/bin/sh
# tests/fuzz/run.sh BUILD SECONDS
#
# Builds the libFuzzer targets (clang -fsanitize=fuzzer,address,undefined) into
# BUILD/fuzz and runs each for SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/<name>/, never modified). Before fuzzing, every saved
# reproducer in tests/fuzz/crashes/<name>/ is replayed (a regression test).
# Prints one line per target, `fuzz <name>: N runs, 0 crashes`, then
# `N passed, N failed`; exits 1 when a target crashed, leaked, timed out or ran
# out of memory (the reproducer and the report are printed), or when clang or
# libFuzzer is missing.
#
# Run from the repository root after `make` (the C grammar must be in
# $DEPS/tree-sitter-c, default build/deps). Environment:
#   CLANG          the compiler (default: clang, else clang-14)
#   DEPS           where `make` put tree-sitter-c (default build/deps)
#   FUZZ_TARGETS   which targets (default "directive translate")
#   FUZZ_JOBS      libFuzzer workers per target (default 1)
#   FUZZ_KEEP=1    keep the working corpus (its path is printed)
#   FUZZ_ARGS      more libFuzzer options
set -u

if [ $# -ne 2 ]; then
    echo "usage: sh tests/fuzz/run.sh BUILD SECONDS" >&2
    exit 2
fi
BUILD=$1
SECS=$2
case $SECS in '' | *[!0-9]*) echo "run.sh: SECONDS must be a number, not '$SECS'" >&2; exit 2 ;; esac
FUZZ=tests/fuzz
if [ ! -f "$FUZZ/fuzz_directive.c" ]; then
    echo "run.sh: run me from the repository root" >&2
    exit 2
fi
DEPS=${DEPS:-build/deps}
TSC=$DEPS/tree-sitter-c
TARGETS=${FUZZ_TARGETS:-directive translate}
JOBS=${FUZZ_JOBS:-1}
OUTDIR=$BUILD/fuzz
mkdir -p "$OUTDIR" || exit 1

# ---- tools -------------------------------------------------------------------
CC=${CLANG:-}
if [ -z "$CC" ]; then
    for c in clang clang-14; do
        if command -v "$c" >/dev/null 2>&1; then CC=$c; break; fi
    done
fi
if [ -z "$CC" ] || ! command -v "$CC" >/dev/null 2>&1; then
    echo "fuzz: clang not found: install clang (Debian: apt-get install -y clang libclang-rt-14-dev) or set CLANG" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
probe=$OUTDIR/probe
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >"$probe.log" 2>&1; then
    echo "fuzz: $CC cannot link a libFuzzer target (-fsanitize=fuzzer,address,undefined):" >&2
    sed 's/^/  /' "$probe.log" | tail -5 >&2
    echo "fuzz: install libFuzzer (Debian 12: apt-get install -y libclang-rt-14-dev)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
rm -f "$probe" "$probe.c" "$probe.log"
if [ ! -f "$TSC/src/parser.c" ]; then
    echo "fuzz: $TSC/src/parser.c is missing: run 'make' (or 'make deps') first" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

# ---- build -------------------------------------------------------------------
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -fno-omit-frame-pointer -std=gnu11 -Iinclude -Igrammar -Itranslator -Iruntime"
TRSRC=
for f in translator/*.c; do
    case $f in translator/main.c | translator/driver.c) ;; *) TRSRC="$TRSRC $f" ;; esac
done
TSLIB=-l:libtree-sitter.a
echo 'int main(void){return 0;}' >"$probe.c"
"$CC" "$probe.c" -o "$probe" $TSLIB >/dev/null 2>&1 || TSLIB=-ltree-sitter
rm -f "$probe" "$probe.c"

build_failed=0
# The generated grammar: coverage-instrumented (its lexer), ASan, no warnings.
TSOBJ="$OUTDIR/ts_c_parser.o"
"$CC" -g -O1 -w -fsanitize=fuzzer-no-link,address -I"$TSC/src" -c "$TSC/src/parser.c" -o "$TSOBJ" || build_failed=1
if [ -f "$TSC/src/scanner.c" ]; then
    "$CC" -g -O1 -w -fsanitize=fuzzer-no-link,address -I"$TSC/src" -c "$TSC/src/scanner.c" \
        -o "$OUTDIR/ts_c_scanner.o" || build_failed=1
    TSOBJ="$TSOBJ $OUTDIR/ts_c_scanner.o"
fi
for t in $TARGETS; do
    case $t in
    directive)
        # shellcheck disable=SC2086
        "$CC" $CFLAGS $SAN "$FUZZ/fuzz_directive.c" grammar/directive.c -o "$OUTDIR/fuzz_directive" ||
            build_failed=1 ;;
    translate)
        # shellcheck disable=SC2086
        "$CC" $CFLAGS $SAN "$FUZZ/fuzz_translate.c" $TRSRC grammar/directive.c $TSOBJ $TSLIB \
            -o "$OUTDIR/fuzz_translate" || build_failed=1 ;;
    *)
        echo "fuzz: unknown target '$t' (directive, translate)" >&2
        build_failed=1 ;;
    esac
done
if [ $build_failed -ne 0 ]; then
    echo "fuzz: build failed"
    echo "0 passed, 1 failed"
    exit 1
fi

# ---- run ---------------------------------------------------------------------
ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export ASAN_OPTIONS UBSAN_OPTIONS
WORK=$(mktemp -d "${TMPDIR:-/tmp}/macc-fuzz.XXXXXX") || exit 1
if [ "${FUZZ_KEEP:-0}" != 1 ]; then
    trap 'rm -rf "$WORK"' EXIT
    trap 'rm -rf "$WORK"; exit 130' INT TERM
fi

# Prints the sanitizer / libFuzzer report of a log (the stack).
show_report() {
    awk '/==[0-9]+==ERROR|runtime error:|deadly signal|ALARM: working on the last Unit|out-of-memory|invariant failed/ { on = 1 }
         on { print "  " $0; if (++n >= 80) exit }
         on && /^SUMMARY:/ { exit }' "$1"
}

# Number of executions in a libFuzzer log.
runs_of() {
    n=$(sed -n 's/^Done \([0-9][0-9]*\) runs.*/\1/p' "$1" | tail -1)
    [ -n "$n" ] || n=$(sed -n 's/^#\([0-9][0-9]*\)[^0-9].*/\1/p' "$1" | tail -1)
    echo "${n:-0}"
}

passed=0
failed=0
for t in $TARGETS; do
    bin=$OUTDIR/fuzz_$t
    log=$OUTDIR/$t.log
    art=$OUTDIR/artifacts/$t
    rm -rf "$art"
    mkdir -p "$art" "$WORK/$t"
    : >"$log"
    crashes=0

    # known reproducers first: they must not crash any more
    if [ -d "$FUZZ/crashes/$t" ] && [ -n "$(ls "$FUZZ/crashes/$t" 2>/dev/null)" ]; then
        for r in "$FUZZ/crashes/$t"/*; do
            [ -f "$r" ] || continue
            if ! "$bin" -timeout=10 -rss_limit_mb=2048 "$r" >"$log.replay" 2>&1; then
                crashes=$((crashes + 1))
                echo "fuzz $t: saved reproducer $r still fails:"
                show_report "$log.replay"
            fi
        done
        rm -f "$log.replay"
    fi

    cp "$FUZZ/corpus/$t"/* "$WORK/$t"/ 2>/dev/null
    seeds=$(ls "$WORK/$t" | wc -l | tr -d ' ')
    dict=
    [ -f "$FUZZ/$t.dict" ] && dict="-dict=$FUZZ/$t.dict"
    jobs=
    [ "$JOBS" -gt 1 ] 2>/dev/null && jobs="-fork=$JOBS -ignore_crashes=0"
    # shellcheck disable=SC2086
    "$bin" "$WORK/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$art/" $dict $jobs ${FUZZ_ARGS:-} >>"$log" 2>&1
    rc=$?
    runs=$(runs_of "$log")
    found=$(ls "$art" | wc -l | tr -d ' ')
    if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
        crashes=$((crashes + (found > 0 ? found : 1)))
        echo "fuzz $t: libFuzzer exited with status $rc; log: $log"
        for a in "$art"/*; do
            [ -f "$a" ] && echo "fuzz $t: reproducer: $a (replay: $bin $a)"
        done
        show_report "$log"
    fi
    size=$(ls "$WORK/$t" | wc -l | tr -d ' ')
    echo "fuzz $t: $runs runs, $crashes crashes"
    echo "  corpus: $seeds seeds -> $size inputs; log: $log"
    [ "${FUZZ_KEEP:-0}" = 1 ] && echo "  working corpus kept in $WORK/$t"
    if [ $crashes -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

echo "$passed passed, $failed failed"
if [ $failed -eq 0 ]; then exit 0; fi
exit 1
