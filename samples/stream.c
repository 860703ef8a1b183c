/* stream.c: the four STREAM kernels (McCalpin) as dependent tasks, after the
 * STREAM evaluation of Ozen et al. (seeds/003).
 *
 * Every kernel is split into blocks of BS elements and every block is one
 * `target device(any)` task with the combined construct-set on the target
 * line (so each device kind gets a version: the host one made by the host
 * reducer), `map` sections of just its block, and `depend` clauses on the
 * blocks it reads and writes.
 *
 * Two phases:
 *   timed:     NTIMES repetitions, a taskwait after each kernel, so that each
 *              kernel is timed on its own (best of NTIMES, first one skipped);
 *   pipelined: NTIMES repetitions with no taskwait at all until the end: only
 *              the depend clauses order the tasks.
 *
 *   usage: stream [n [ntimes [BS]]]     (defaults: 8388608 10 1048576)
 *
 * Validation as in McCalpin's checkSTREAMresults: the expected value of each
 * array is computed by running the kernels on scalars. Prints `check: PASS`
 * (exit 0) or `check: FAIL` (exit 1) and the best bandwidth of each kernel.
 * Builds with macc and also with a plain C compiler (pragmas ignored).
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
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
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void stream_copy(long n, long BS, const double *a, double *c)
{
    for (long k = 0; k < n; k += BS) {
        #pragma omp target device(any) teams distribute parallel for map(to: a[k:BS]) map(from: c[k:BS]) depend(in: a[k:BS]) depend(out: c[k:BS]) nowait
        for (long j = k; j < k + BS; j++)
            c[j] = a[j];
    }
}

static void stream_scale(long n, long BS, double scalar, double *b, const double *c)
{
    for (long k = 0; k < n; k += BS) {
        #pragma omp target device(any) teams distribute parallel for map(to: c[k:BS]) map(from: b[k:BS]) depend(in: c[k:BS]) depend(out: b[k:BS]) nowait
        for (long j = k; j < k + BS; j++)
            b[j] = scalar * c[j];
    }
}

static void stream_add(long n, long BS, const double *a, const double *b, double *c)
{
    for (long k = 0; k < n; k += BS) {
        #pragma omp target device(any) teams distribute parallel for map(to: a[k:BS], b[k:BS]) map(from: c[k:BS]) depend(in: a[k:BS], b[k:BS]) depend(out: c[k:BS]) nowait
        for (long j = k; j < k + BS; j++)
            c[j] = a[j] + b[j];
    }
}

static void stream_triad(long n, long BS, double scalar, double *a, const double *b, const double *c)
{
    for (long k = 0; k < n; k += BS) {
        #pragma omp target device(any) teams distribute parallel for map(to: b[k:BS], c[k:BS]) map(from: a[k:BS]) depend(in: b[k:BS], c[k:BS]) depend(out: a[k:BS]) nowait
        for (long j = k; j < k + BS; j++)
            a[j] = b[j] + scalar * c[j];
    }
}

/* McCalpin's checkSTREAMresults: 0 when every array matches its expected value. */
static int check_results(long n, int iterations, double scalar, const double *a, const double *b,
                         const double *c)
{
    double aj = 1.0, bj = 2.0, cj = 0.0;
    for (int k = 0; k < iterations; k++) {
        cj = aj;
        bj = scalar * cj;
        cj = aj + bj;
        aj = bj + scalar * cj;
    }
    double aerr = 0.0, berr = 0.0, cerr = 0.0;
    for (long j = 0; j < n; j++) {
        aerr += fabs(a[j] - aj);
        berr += fabs(b[j] - bj);
        cerr += fabs(c[j] - cj);
    }
    aerr /= n;
    berr /= n;
    cerr /= n;
    const double eps = 1.e-13;
    int bad = 0;
    if (!(fabs(aerr / aj) <= eps)) {
        printf("stream: array a: average relative error %e (expected %e)\n", aerr / fabs(aj), aj);
        bad = 1;
    }
    if (!(fabs(berr / bj) <= eps)) {
        printf("stream: array b: average relative error %e (expected %e)\n", berr / fabs(bj), bj);
        bad = 1;
    }
    if (!(fabs(cerr / cj) <= eps)) {
        printf("stream: array c: average relative error %e (expected %e)\n", cerr / fabs(cj), cj);
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 8388608L;
    int ntimes = argc > 2 ? atoi(argv[2]) : 10;
    long BS = argc > 3 ? atol(argv[3]) : 1048576L;
    const double scalar = 3.0;

    if (n < 1 || ntimes < 2 || BS < 1) {
        fprintf(stderr, "usage: %s [n [ntimes>=2 [BS]]]\n", argv[0]);
        return 2;
    }
    if (BS > n)
        BS = n;
    if (n % BS != 0) {
        n = (n + BS - 1) / BS * BS;
        printf("stream: n rounded up to %ld, a multiple of BS=%ld\n", n, BS);
    }
    double *a = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    double *c = malloc(n * sizeof(double));
    if (!a || !b || !c) {
        fprintf(stderr, "stream: out of memory\n");
        return 2;
    }
    for (long j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
    printf("stream: n=%ld (%.1f MiB per array) ntimes=%d BS=%ld (%ld tasks per kernel)\n", n,
           n * sizeof(double) / 1048576.0, ntimes, BS, n / BS);

    static const char *label[4] = {"Copy", "Scale", "Add", "Triad"};
    const double bytes[4] = {2.0 * sizeof(double) * n, 2.0 * sizeof(double) * n,
                             3.0 * sizeof(double) * n, 3.0 * sizeof(double) * n};
    double mintime[4] = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX};
    double maxtime[4] = {0, 0, 0, 0};
    double avgtime[4] = {0, 0, 0, 0};

    /* Timed phase: one kernel at a time. */
    for (int iter = 0; iter < ntimes; iter++) {
        double t[4];
        t[0] = now();
        stream_copy(n, BS, a, c);
        #pragma omp taskwait
        t[0] = now() - t[0];

        t[1] = now();
        stream_scale(n, BS, scalar, b, c);
        #pragma omp taskwait
        t[1] = now() - t[1];

        t[2] = now();
        stream_add(n, BS, a, b, c);
        #pragma omp taskwait
        t[2] = now() - t[2];

        t[3] = now();
        stream_triad(n, BS, scalar, a, b, c);
        #pragma omp taskwait
        t[3] = now() - t[3];

        if (iter == 0)
            continue; /* the first iteration warms up (and moves data) */
        for (int k = 0; k < 4; k++) {
            avgtime[k] += t[k];
            if (t[k] < mintime[k])
                mintime[k] = t[k];
            if (t[k] > maxtime[k])
                maxtime[k] = t[k];
        }
    }

    /* Pipelined phase: the depend clauses alone order the tasks. */
    double tp = now();
    for (int iter = 0; iter < ntimes; iter++) {
        stream_copy(n, BS, a, c);
        stream_scale(n, BS, scalar, b, c);
        stream_add(n, BS, a, b, c);
        stream_triad(n, BS, scalar, a, b, c);
    }
    #pragma omp taskwait
    tp = now() - tp;

    printf("Function    Best Rate GB/s  Avg time     Min time     Max time\n");
    for (int k = 0; k < 4; k++) {
        avgtime[k] /= (ntimes - 1);
        printf("%-8s  %12.1f  %11.6f  %11.6f  %11.6f\n", label[k], 1e-9 * bytes[k] / mintime[k],
               avgtime[k], mintime[k], maxtime[k]);
    }
    double allbytes = ntimes * (bytes[0] + bytes[1] + bytes[2] + bytes[3]);
    printf("Pipelined %12.1f GB/s  (%d x 4 kernels, %.6f s, taskwait only at the end)\n",
           1e-9 * allbytes / tp, ntimes, tp);
#ifdef __MACC__
    for (int d = 0; d < macc_num_devices(); d++)
        printf("stream: device %d (%s): %ld tasks\n", d, macc_device_name(d), macc_device_tasks(d));
#endif

    int bad = check_results(n, 2 * ntimes, scalar, a, b, c);
    printf("check: %s\n", bad ? "FAIL" : "PASS");
    free(a);
    free(b);
    free(c);
    return bad ? 1 : 0;
}
