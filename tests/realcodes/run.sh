#!/bin/sh
# Real programs (../shared/realcodes: 47 third-party C programs with OpenMP
# target or OpenACC compute constructs, built through their own build systems
# with CC=macc, run and checked the way their authors check them), through the
# two scripts that come with them.
#
#   sh tests/realcodes/run.sh BUILD [host|default|both] [NAME...]
#
# host     --targets=host: translated, built and run on the host cores
# default  the default targets: every device file compiled by nvcc (where the
#          driver finds one); run on the GPU where one is present (SIZE=auto)
# both     (default) one after the other
#
# The programs: MACC_REALCODES=dir, default ../shared/realcodes next to the
# repository; when absent it says so and prints "0 passed, 0 failed".
# Known failures: tests/realcodes/known.txt ("mode name reason" lines; mode
# host, default or gpu): reported as such, not counted as failures; a listed
# program that passes is reported so the list can shrink. Exit 1 only on a
# failure outside the list. SIZE, TIMEOUT, WORKDIR as the scripts take them.
set -u
build=${1:-build}
mode=${2:-both}
[ $# -ge 2 ] && shift 2 || shift $#
top=$(pwd)
case $build in /*) ;; *) build=$top/$build ;; esac
macc=$build/bin/macc
rc_dir=${MACC_REALCODES:-$top/../shared/realcodes}
if [ ! -f "$rc_dir/run-clients.sh" ]; then
    echo "realcodes: $rc_dir not found (set MACC_REALCODES): skipped"
    [ -n "${SKIPPED:-}" ] && echo "realcodes: no ../shared/realcodes" >> "$SKIPPED"
    [ -n "${RESULTS:-}" ] && echo "0 0 realcodes (skipped: no ../shared/realcodes)" >> "$RESULTS"
    echo "0 passed, 0 failed"
    exit 0
fi
rc_dir=$(cd "$rc_dir" && pwd)
known=$top/tests/realcodes/known.txt
gpu=0
nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu=1
out=${REALCODES_OUT:-$build/realcodes}
rm -rf "$out" && mkdir -p "$out"
pass=0 fail=0 knownf=0

run_mode() { # mode flags
    m=$1 flags=$2
    label=$m
    [ "$m" = default ] && [ $gpu = 1 ] && label=gpu
    for script in run-clients.sh run-more.sh; do
        names=""
        if [ -n "$NAMES" ]; then # the names this script knows
            list=$(cd "$rc_dir/.." && bash "realcodes/$script" --list | tr -s ' \n' '\n\n')
            for nm in $NAMES; do
                printf '%s\n' "$list" | grep -qx -- "$nm" && names="$names $nm"
            done
            [ -z "$names" ] && continue
        fi
        log=$out/$m.${script%.sh}.log
        # shellcheck disable=SC2086
        (cd "$rc_dir/.." && MACC=$macc MACC_FLAGS=$flags SIZE=${SIZE:-auto} WORKDIR=$out/work-$m-${script%.sh} \
            bash "realcodes/$script" $names > "$log" 2>&1)
        while read -r status name rest; do
            case $status in PASS|BUILD-FAIL|NOT-TRANSLATED|RUN-FAIL|WRONG|TIMEOUT) ;; *) continue ;; esac
            reason=$(awk -v m="$label" -v n="$name" '$1 == m && $2 == n { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$known" 2>/dev/null)
            if [ "$status" = PASS ]; then
                pass=$((pass + 1))
                [ -n "$reason" ] && echo "NOW PASSES ($label): $name (listed in tests/realcodes/known.txt)"
                echo "PASS  $label $name"
            elif [ -n "$reason" ]; then
                knownf=$((knownf + 1))
                echo "KNOWN $label $name: $status $rest ($reason)"
            else
                fail=$((fail + 1))
                echo "FAIL  $label $name: $status $rest"
            fi
        done < "$log"
        # a script that stopped before its summary line is a failure too
        grep -q 'passed, .* failed of' "$log" || { fail=$((fail + 1)); echo "FAIL  $label $script: no summary"; tail -n 5 "$log"; }
    done
}

NAMES="$*"
case $mode in
host) run_mode host --targets=host ;;
default) run_mode default "" ;;
both) run_mode host --targets=host; run_mode default "" ;;
*) echo "realcodes: mode must be host, default or both" >&2; exit 2 ;;
esac
[ $knownf -gt 0 ] && echo "realcodes: $knownf known failures (tests/realcodes/known.txt), not counted"
[ -n "${RESULTS:-}" ] && echo "$pass $fail realcodes" >> "$RESULTS"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
