#!/bin/sh
# gen_translate.sh LINES: print a generated C file of about LINES lines with
# one `target device(any)` region per ~200 lines, for bench/translate.sh.
#
# The file includes the usual headers (so the preprocessed unit carries
# them, as every real one does). Each block of ~200 lines has a struct
# type, a global table, a helper function that the region calls (so the
# device file needs a copy of it, and of the helper's own callee), and a
# function with ordinary code around a combined-construct region that maps
# two arrays and reads the global and the struct.
set -eu
lines=${1:-10000}
awk -v lines="$lines" 'BEGIN {
    print "#include <math.h>"
    print "#include <stdio.h>"
    print "#include <stdlib.h>"
    print "#include <string.h>"
    print "#include <omp.h>"
    print ""
    print "static double base_scale(double x) { return x * 0.5 + 1.0; }"
    print ""
    n = 8
    b = 0
    while (n < lines) {
        print "typedef struct { double w; int k; } item_" b ";"
        print "static const double table_" b "[4] = { 1.0, 2.0, 3.0, 4.0 };"
        print "static double helper_" b "(double x, item_" b " it)"
        print "{"
        print "    return base_scale(x) * it.w + table_" b "[it.k & 3];"
        print "}"
        print ""
        print "double work_" b "(int n, double *a, double *c)"
        print "{"
        print "    item_" b " it = { 0.25, " b " };"
        print "    double s = 0.0;"
        n += 13
        # ordinary code: ~85 lines before the region, ~85 after
        for (i = 0; i < 28; i++) {
            print "    for (int i = 0; i < n; i++)"
            print "        s += a[i] * " i + 1 ".0 - c[i] / (" i + 2 ".0 + s);"
            print "    if (s > 1e9) s = sqrt(s);"
        }
        n += 84
        print "    #pragma omp target device(any) teams distribute parallel for map(to: a[0:n]) map(from: c[0:n]) nowait"
        print "    for (int j = 0; j < n; j++)"
        print "        c[j] = helper_" b "(a[j], it) + table_" b "[j & 3];"
        print "    #pragma omp taskwait"
        n += 4
        for (i = 0; i < 28; i++) {
            print "    for (int i = 0; i < n; i++)"
            print "        s -= c[i] * " i + 3 ".0 + a[i] / (" i + 4 ".0 + s);"
            print "    if (s < -1e9) s = fabs(s);"
        }
        n += 84
        print "    return s;"
        print "}"
        print ""
        n += 3
        b++
    }
    print "int main(void) { printf(\"%d\\n\", " b "); return 0; }"
}'
