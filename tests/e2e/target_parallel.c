/* `target parallel` regions: every thread runs the block; worksharing loops
 * (`for`, `for nowait`, a bare `loop`) split their iterations, a `for` with a
 * reduction, inside a sequential time-step loop; barrier, single, master,
 * critical and atomic; a reduction on the region itself; per-thread work by
 * omp_get_thread_num(); and a parallel region inside a target region's block. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 5000, steps = 4;
    double *a = malloc(n * sizeof(double));
    int *hits = calloc(1024, sizeof(int));
    for (int i = 0; i < n; i++)
        a[i] = 0;

    double total = 0;
    int entered = 0, atomics = 0, singles = 0, nthreads = 0;
    #pragma omp target parallel map(tofrom: a[0:n], total, entered, atomics, singles, nthreads) num_threads(64)
    {
        for (int s = 0; s < steps; s++) {
            #pragma omp for
            for (int i = 0; i < n; i++)
                a[i] += 1;
            #pragma omp for reduction(+: total) nowait
            for (int i = 0; i < n; i++)
                total += a[i];
            #pragma omp barrier
            #pragma omp single
            singles++;
        }
        #pragma omp critical
        {
            entered++;
        }
        #pragma omp atomic
        atomics += 2;
        #pragma omp master
        nthreads = omp_get_num_threads();
    }

    /* per-thread work and a reduction on the region */
    long owned = 0;
    #pragma omp target parallel map(tofrom: hits[0:1024]) reduction(+: owned)
    {
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int i = me; i < 1024; i += nt) {
            hits[i] += 1;
            owned += 1;
        }
    }

    /* a parallel region inside a target region's block, with a bare loop */
    double *b = malloc(n * sizeof(double));
    #pragma omp target map(to: a[0:n]) map(from: b[0:n])
    {
        int half = n / 2;
        #pragma omp parallel
        {
            #pragma omp loop
            for (int i = 0; i < half; i++)
                b[i] = a[i] * 2;
            #pragma omp for
            for (int i = half; i < n; i++)
                b[i] = a[i] * 3;
        }
    }

    int ok = 1;
    double want_total = 0;
    for (int s = 1; s <= steps; s++)
        want_total += (double)s * n;
    for (int i = 0; i < n && ok; i++)
        if (a[i] != steps || b[i] != (i < n / 2 ? 2 : 3) * steps) {
            printf("FAIL: a[%d] = %g, b[%d] = %g\n", i, a[i], i, b[i]);
            ok = 0;
        }
    if (total != want_total) {
        printf("FAIL: total = %g, want %g\n", total, want_total);
        ok = 0;
    }
    if (nthreads < 1 || entered != nthreads || atomics != 2 * nthreads || singles != steps) {
        printf("FAIL: %d threads, critical entered %d times, atomics %d, singles %d\n", nthreads, entered, atomics,
               singles);
        ok = 0;
    }
    for (int i = 0; i < 1024 && ok; i++)
        if (hits[i] != 1) {
            printf("FAIL: hits[%d] = %d\n", i, hits[i]);
            ok = 0;
        }
    if (owned != 1024) {
        printf("FAIL: owned = %ld\n", owned);
        ok = 0;
    }
    free(a);
    free(b);
    free(hits);
    if (!ok)
        return 1;
    printf("PASS\n");
    return 0;
}
