/* jacobi.c: a Jacobi solver on an n x n grid with OpenACC data directives:
 * `acc enter data` puts the two grids on the device once, the sweeps run as
 * device(any) regions on the data there, `acc update host` brings the grid
 * back every CHECK sweeps for the convergence test, `acc exit data` ends it.
 *
 * Built plainly (`macc jacobi.c`), the directives move data (explicit
 * copies); built with `macc --managed`, the grids are managed memory and the
 * same directives become prefetch hints (seed 000's "directives as hints").
 *
 *   usage: jacobi [n [iters]]      (defaults: 1024 200)
 *
 * Self-check: the result against the same sweeps run serially; prints
 * "check: PASS" and "jacobi: ... time=... s  GB/s=...".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __MACC__
#include "macc_rt.h"
#endif

#define CHECK 20

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void init(int n, double *g)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            g[(long)i * n + j] = (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1.0 + (i + j) % 3 : 0.0;
}

/* One serial sweep: dst from src. */
static void sweep_ref(int n, const double *src, double *dst)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            dst[(long)i * n + j] = 0.25 * (src[(long)(i - 1) * n + j] + src[(long)(i + 1) * n + j] +
                                           src[(long)i * n + j - 1] + src[(long)i * n + j + 1]);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    if (n < 3 || iters < 2) {
        fprintf(stderr, "usage: %s [n>=3 [iters>=2]]\n", argv[0]);
        return 2;
    }
    long nn = (long)n * n;
    double *a = malloc(nn * sizeof(double)), *b = malloc(nn * sizeof(double));
    double *ra = malloc(nn * sizeof(double)), *rb = malloc(nn * sizeof(double));
    if (!a || !b || !ra || !rb)
        return 1;
    init(n, a);
    init(n, b);
    init(n, ra);
    init(n, rb);
#ifdef __MACC__
    macc_num_devices(); /* start the runtime before the clock */
#endif

    double t = now(), resid = 0.0;
    int done = 0;
    #pragma acc enter data copyin(a[0:nn], b[0:nn])
    for (int it = 0; it < iters; it += 2) {
        #pragma omp target device(any) map(tofrom: a[0:nn], b[0:nn])
        #pragma omp if_device(nvidia) teams distribute parallel for collapse(2)
        #pragma omp if_device(host) parallel for collapse(2)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[(long)i * n + j] = 0.25 * (a[(long)(i - 1) * n + j] + a[(long)(i + 1) * n + j] +
                                             a[(long)i * n + j - 1] + a[(long)i * n + j + 1]);
        #pragma omp target device(any) map(tofrom: a[0:nn], b[0:nn])
        #pragma omp if_device(nvidia) teams distribute parallel for collapse(2)
        #pragma omp if_device(host) parallel for collapse(2)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                a[(long)i * n + j] = 0.25 * (b[(long)(i - 1) * n + j] + b[(long)(i + 1) * n + j] +
                                             b[(long)i * n + j - 1] + b[(long)i * n + j + 1]);
        done = it + 2;
        if (done % CHECK == 0) {
            #pragma acc update host(a[0:nn], b[0:nn])
            resid = 0.0;
            for (long k = 0; k < nn; k++)
                resid = fmax(resid, fabs(a[k] - b[k]));
        }
    }
    #pragma acc exit data copyout(a[0:nn]) delete(b[0:nn])
    t = now() - t;

    for (int it = 0; it < done; it += 2) {
        sweep_ref(n, ra, rb);
        sweep_ref(n, rb, ra);
    }
    double err = 0.0;
    for (long k = 0; k < nn; k++)
        err = fmax(err, fabs(a[k] - ra[k]));
    /* each sweep reads and writes the interior once: 2 arrays x 8 bytes */
    double gbs = 16.0 * (double)(n - 2) * (n - 2) * done / t * 1e-9;
    printf("jacobi: n=%d iters=%d residual=%.3e time=%.4f s  GB/s=%.1f\n", n, done, resid, t, gbs);
#ifdef __MACC__
    for (int d = 0; d < macc_num_devices(); d++)
        printf("jacobi: device %d (%s): %ld tasks\n", d, macc_device_name(d), macc_device_tasks(d));
#endif
    int ok = err <= 1e-12;
    printf("check: %s (max difference %.3e from the serial sweeps)\n", ok ? "PASS" : "FAIL", err);
    free(a);
    free(b);
    free(ra);
    free(rb);
    return ok ? 0 : 1;
}
