#!/bin/sh
# flaky.sh: the unit tests again and again on a loaded machine, to find the
# tests whose timing make check's own load can break (CI runs make check on
# 2 cores, where the unit binaries run two tests at a time beside each
# other). Not part of make check.
#
#   usage: sh tests/flaky.sh [BUILD [ROUNDS [LOAD]]]   (defaults build 5 2)
#   make check-flaky [FLAKY_ROUNDS=n FLAKY_LOAD=n]
#
# Each round runs every unit binary in BUILD/tests (and BUILD/asan/tests when
# it exists) with --jobs 2 while LOAD processes spin; prints each failed
# test with its assertion's message, then per test how many rounds it failed
# in, and "N passed, N failed" (rounds of a binary that passed or not).
set -u
build=${1:-build}
rounds=${2:-5}
load=${3:-2}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
bins=
for b in "$build"/tests/test_* "$build"/asan/tests/test_*; do
    case $b in *.d | *'*'*) continue ;; esac
    [ -x "$b" ] && bins="$bins $b"
done
if [ -z "$bins" ]; then
    echo "flaky.sh: no unit binaries in $build/tests (make unit first)" >&2
    exit 2
fi
spinners=
i=0
while [ "$i" -lt "$load" ]; do
    sh -c 'while :; do :; done' &
    spinners="$spinners $!"
    i=$((i + 1))
done
# shellcheck disable=SC2086
trap 'kill $spinners 2>/dev/null' EXIT INT TERM
fails=$(mktemp)
pass=0 fail=0
r=1
while [ "$r" -le "$rounds" ]; do
    for b in $bins; do
        out=$("$b" --jobs 2 2>&1)
        if printf '%s\n' "$out" | grep -q 'Failing: 0 | Crashing: 0'; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            printf '%s\n' "$out" | grep -E '^\[FAIL\]' | sed "s|^|round $r $b: |" | tee -a "$fails"
            printf '%s\n' "$out" | grep -E '^\[----\]   [^ ]' | head -n 4
        fi
    done
    echo "round $r of $rounds done"
    r=$((r + 1))
done
if [ -s "$fails" ]; then
    echo "failed tests (rounds):"
    sed 's/^round [0-9]* \([^ ]*\): \[FAIL\] \(.*\): (.*/\1 \2/' "$fails" | sort | uniq -c
fi
rm -f "$fails"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
