/* alloc_loop.c: seed 000's 356.sp pattern: every iteration allocates a work
 * array, uses it in a region, and frees it. Built with `macc --managed`, the
 * allocations come from the managed pool (a freed block is handed out again,
 * already on the GPU); with MACC_POOL=0 each is a cudaMallocManaged and a
 * cudaFree. Built plainly, the region maps the work array (explicit copies).
 *
 *   usage: alloc_loop [n [iters [alloc_only]]]      (defaults: 1048576 200 0)
 *
 * With alloc_only = 1 the loop only allocates and frees (the cost of one
 * malloc + free pair: "alloc_loop: alloc+free us=...").
 *
 * Prints "alloc_loop: ... time=... s  us/iter=..." and "check: PASS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __MACC__
#include "macc_rt.h"
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1048576L;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    if (n < 1 || iters < 1) {
        fprintf(stderr, "usage: %s [n [iters]]\n", argv[0]);
        return 2;
    }
#ifdef __MACC__
    macc_num_devices(); /* start the runtime before the clock */
#endif
    if (argc > 3 && atoi(argv[3]) == 1) {
        double t0 = now();
        for (int it = 0; it < iters; it++) {
            double *work = malloc((size_t)n * sizeof(double));
            if (!work)
                return 1;
            free(work);
        }
        double us = 1e6 * (now() - t0) / iters;
        printf("alloc_loop: n=%ld iters=%d alloc+free us=%.2f\n", n, iters, us);
        printf("check: PASS\n");
        return 0;
    }
    double total = 0.0;
    double t = now();
    for (int it = 0; it < iters; it++) {
        double *work = malloc((size_t)n * sizeof(double));
        if (!work) {
            fprintf(stderr, "alloc_loop: out of memory at iteration %d\n", it);
            return 1;
        }
        double sum = 0.0;
        #pragma omp target device(any) map(from: work[0:n]) map(tofrom: sum)
        #pragma omp if_device(nvidia) teams distribute parallel for reduction(+: sum)
        #pragma omp if_device(host) parallel for reduction(+: sum)
        for (long i = 0; i < n; i++) {
            work[i] = (double)(i % 8) + it;
            sum += work[i];
        }
        total += sum + work[n - 1];
        free(work);
    }
    t = now() - t;
    /* sum over i of (i % 8 + it), plus the last element */
    double expect = 0.0;
    for (int it = 0; it < iters; it++) {
        double s = 0.0;
        for (long i = 0; i < n; i++)
            s += (double)(i % 8) + it;
        expect += s + (double)((n - 1) % 8) + it;
    }
    printf("alloc_loop: n=%ld iters=%d time=%.4f s  us/iter=%.1f\n", n, iters, t, 1e6 * t / iters);
    int ok = total == expect;
    printf("check: %s (%.17g, expected %.17g)\n", ok ? "PASS" : "FAIL", total, expect);
    return ok ? 0 : 1;
}
