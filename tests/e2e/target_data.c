/* A target data region with two (then three) target regions inside: the
 * regions find their data present (one with no map clause at all, one with a
 * map of data already present, one nowait task), and the end of the data
 * region copies a back. t is device scratch (alloc). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 1000;
    double *a = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    double *t = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 0.5 * i;
        t[i] = 0.0;
    }

    #pragma omp target data map(tofrom: a[0:n]) map(to: b[0:n]) map(alloc: t[0:n])
    {
        #pragma omp target teams distribute parallel for
        for (int i = 0; i < n; i++)
            t[i] = 2.0 * b[i];

        #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
        for (int i = 0; i < n; i++)
            a[i] += t[i];

        #pragma omp target device(any) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for
        #pragma omp if_device(host) parallel for
        for (int i = 0; i < n; i++)
            a[i] = a[i] * 3.0 + b[i];
        #pragma omp taskwait
    }

    for (int i = 0; i < n; i++) {
        double want = (i + i) * 3.0 + 0.5 * i;
        if (a[i] != want) {
            printf("FAIL: a[%d] = %g, want %g\n", i, a[i], want);
            return 1;
        }
    }
    free(a);
    free(b);
    free(t);
    printf("PASS\n");
    return 0;
}
