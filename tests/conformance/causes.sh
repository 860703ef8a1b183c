#!/bin/sh
# Rank the failure causes of conformance runs (tests/conformance/run.sh):
#
#   tests/conformance/causes.sh [--only LIST] [--top N] RESULTS.tsv...
#
# Each failing test's first error line is reduced to a cause: file:line:col
# prefixes and object offsets dropped, exit codes and quoted names generalised
# ('x' -> '_'). Prints a Markdown table, most frequent cause first: count, the
# cause, its most frequent exact messages, and one example test. --only LIST
# keeps the tests listed in LIST (first word of a line, # comments), e.g. the
# tests GCC passes, so that only failures GCC does not share are ranked.
set -u
only=
top=25
while [ $# -gt 0 ]; do
    case $1 in
    --only) only=$2; shift 2 ;;
    --only=*) only=${1#*=}; shift ;;
    --top) top=$2; shift 2 ;;
    --top=*) top=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: tests/conformance/causes.sh [--only LIST] [--top N] RESULTS.tsv..." >&2; exit 2; }
if [ -n "$only" ]; then sed 's/#.*//' "$only"; else printf '\n'; fi | awk -F '\t' -v top="$top" -v useonly="${only:+1}" '
    FNR == NR { if (NF) { split($0, w, /[ \t]+/); keep[w[1]] = 1 }; next }
    $3 == "PASS" || $3 == "SKIP" { next }
    useonly && !($2 in keep) { next }
    {
        m = $4
        # locations: path.c:12:3:  path.h:4:  x.host.c:(.text+0x1f):
        gsub(/[^ ]*\.(c|h|cu|o):\(\.[a-z.]+\+0x[0-9a-f]+\): /, "", m)
        gsub(/[^ ]*\.(c|h|cu):[0-9]+(:[0-9]+)?:? /, "", m)
        if ($3 == "FAIL" && m ~ /OMPVV_RESULT: .*Test failed/) m = "wrong result: [OMPVV_RESULT] Test failed"
        else if ($3 == "FAIL" && m ~ /^exit [0-9]+$/) m = "wrong result: nonzero exit status"
        else if ($3 == "FAIL" && m ~ /^exit [0-9]+, no OMPVV_RESULT line/) m = "no [OMPVV_RESULT] line"
        gsub(/exit [0-9]+/, "exit N", m)
        if ($3 == "TIMEOUT") m = "run timed out"
        k = m
        if ($3 == "CRASH") sub(/\): .*/, ")", k)
        sub(/; did you mean .*/, "", k)
        gsub(/\047[^\047]*\047/, "\047_\047", k)
        gsub(/`[^\047]*\047/, "`_\047", k)
        gsub(/\342\200\230[^\342]*\342\200\231/, "\342\200\230_\342\200\231", k)
        gsub(/[A-Za-z_][A-Za-z0-9_]*\[0:n\]/, "_[0:n]", k)
        k = $3 ": " k
        if (!(k in n)) ncause++
        n[k]++; total++
        v[k, m]++
        if (v[k, m] == 1) { nv[k]++; var[k, nv[k]] = m }
        if (!(k in ex)) ex[k] = $2
    }
    END {
        printf "| # | tests | status: cause | most frequent exact messages | example |\n"
        printf "| - | -: | - | - | - |\n"
        for (r = 1; r <= top; r++) {
            best = ""
            for (k in n) if (!(k in done) && (best == "" || n[k] > n[best] || (n[k] == n[best] && k < best))) best = k
            if (best == "") break
            done[best] = 1
            # up to three exact messages, most frequent first
            msgs = ""
            for (j = 1; j <= 3; j++) {
                bm = ""
                for (i = 1; i <= nv[best]; i++) {
                    mm = var[best, i]
                    if ((best, mm) in used) continue
                    if (bm == "" || v[best, mm] > v[best, bm]) bm = mm
                }
                if (bm == "") break
                used[best, bm] = 1
                c = bm; gsub(/\|/, "\\|", c)
                c = index(c, "`") ? "`` " c " ``" : "`" c "`"
                msgs = msgs (msgs == "" ? "" : "<br>") c (nv[best] > 1 ? " (" v[best, bm] ")" : "")
            }
            if (nv[best] > 3) msgs = msgs "<br>... " nv[best] - 3 " more"
            c = best; gsub(/\|/, "\\|", c)
            e = ex[best]; sub(/^(openmp_vv\/tests|openacc_vv\/Tests)\//, "", e)
            printf "| %d | %d | %s | %s | %s |\n", r, n[best], c, msgs, e
        }
        printf "\n%d failing tests, %d causes\n", total, ncause
    }' - "$@"
