#!/bin/sh
# The documentation against the code, where a script can tell:
# - every MACC_* variable the runtime, the MPI module or the driver reads
#   (getenv) has its row in docs/ENVIRONMENT.md, and every MACC_* variable
#   named there is read somewhere;
# - every long option `macc --help` lists is in the man page (docs/macc.1)
#   and in the user's manual (docs/USAGE.md or docs/DRIVER.md);
# - every relative link of README.md and docs/*.md names a file that exists.
#
#   sh tests/docs.sh BUILD        (BUILD holds bin/macc; default build)
#
# Prints a line per problem and "N passed, N failed"; RESULTS=file gets "P F docs".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL docs: $*"; }
cd "$top" || exit 2

# (read by getenv, or by maccrt_env_flag or maccrt_env_flag_read, base.c's readers of boolean settings)
read_vars=$(grep -ohE '(getenv\(|maccrt_env_flag(_read)?\([^,]*, )"MACC_[A-Z0-9_]*"' runtime/*.c runtime/mpi/*.c translator/*.c |
    sed 's/.*"\(MACC_[A-Z0-9_]*\)"/\1/' | sort -u)
doc_vars=$(grep -o 'MACC_[A-Z0-9_]*' docs/ENVIRONMENT.md | sort -u)
for v in $read_vars; do
    if printf '%s\n' "$doc_vars" | grep -qx "$v"; then ok; else ko "$v is read (getenv) but has no row in docs/ENVIRONMENT.md"; fi
done
for v in $doc_vars; do
    if printf '%s\n' "$read_vars" | grep -qx "$v"; then ok; else ko "docs/ENVIRONMENT.md names $v, which nothing reads"; fi
done

if [ -x "$build/bin/macc" ]; then
    opts=$("$build/bin/macc" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
    for o in $opts; do
        esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
        if grep -q -- "$esc" docs/macc.1; then ok; else ko "macc --help lists $o; docs/macc.1 does not"; fi
        if grep -q -- "$o" docs/USAGE.md docs/DRIVER.md; then ok; else ko "macc --help lists $o; docs/USAGE.md and docs/DRIVER.md do not"; fi
    done
else
    ko "$build/bin/macc not built"
fi

for f in README.md docs/*.md; do
    d=$(dirname "$f")
    for l in $(grep -o '](\([^)#]*\))' "$f" | sed 's/^](\(.*\))$/\1/' | grep -v '^[a-z]*://'); do
        if [ -e "$d/$l" ]; then ok; else ko "$f links to $l, which does not exist"; fi
    done
done

[ -n "${RESULTS:-}" ] && echo "$pass $fail docs" >> "$RESULTS"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
