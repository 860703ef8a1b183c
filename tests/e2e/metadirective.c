/* omp metadirective right after a target line: when(device={kind(gpu)}: ...)
 * with default(...) and with otherwise(...), with and without clauses. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 3000;
    double *a = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        a[i] = i;

    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp metadirective when(device={kind(gpu)}: teams distribute parallel for) default(parallel for)
    for (int i = 0; i < n; i++)
        a[i] = a[i] * 2.0 + 1.0;

    double s = 0.0;
    #pragma omp target device(any) map(to: a[0:n])
    #pragma omp metadirective when(device={kind(gpu)}: teams distribute parallel for reduction(+: s)) otherwise(parallel for reduction(+: s))
    for (int i = 0; i < n; i++)
        s += a[i];

    double want = 0.0;
    for (int i = 0; i < n; i++) {
        if (a[i] != i * 2.0 + 1.0) {
            printf("FAIL: a[%d] = %g\n", i, a[i]);
            return 1;
        }
        want += i * 2.0 + 1.0;
    }
    if (s != want) {
        printf("FAIL: s = %.17g, want %.17g\n", s, want);
        return 1;
    }
    free(a);
    printf("PASS\n");
    return 0;
}
