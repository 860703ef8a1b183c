/* managed_struct.c: seed 000's nested-struct example, built with --managed.
 *
 * An array of structs A, each pointing to a struct B that points to an array
 * z: A[i].B->z[j]. With explicit data directives this needs a deep copy (map
 * A, then every A[i].B, then every A[i].B->z, and attach the pointers). With
 * `macc --managed` every malloc below is managed memory, valid at the same
 * address on the host and the GPU, so the region uses the pointers as they
 * are: no map clause, no deep copy. The blocks of A are device(any) tasks
 * shared by the host and the GPUs.
 *
 *   usage: managed_struct [n [m [BS]]]      (defaults: 4096 512 256)
 *
 * Self-check: every z[j] against the formula; prints "check: PASS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __MACC__
#include "macc_rt.h"
#endif

typedef struct {
    int n;
    double *z;
} Inner;

typedef struct {
    double w;
    Inner *B;
} Outer;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int m = argc > 2 ? atoi(argv[2]) : 512;
    int BS = argc > 3 ? atoi(argv[3]) : 256;
    if (n < 1 || m < 1 || BS < 1) {
        fprintf(stderr, "usage: %s [n [m [BS]]]\n", argv[0]);
        return 2;
    }
    Outer *A = malloc((size_t)n * sizeof *A);
    if (!A)
        return 1;
    for (int i = 0; i < n; i++) {
        A[i].w = 1.0 + (i % 7);
        A[i].B = malloc(sizeof *A[i].B);
        A[i].B->n = m - (i % 3);
        A[i].B->z = malloc((size_t)m * sizeof(double));
        if (!A[i].B || !A[i].B->z)
            return 1;
        for (int j = 0; j < m; j++)
            A[i].B->z[j] = j % 5;
    }

    double t = now();
    for (int rep = 0; rep < 3; rep++) {
        for (int k = 0; k < n; k += BS) {
            int hi = k + BS < n ? k + BS : n;
            #pragma omp target device(any) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for
            #pragma omp if_device(host) parallel for
            for (int i = k; i < hi; i++)
                for (int j = 0; j < A[i].B->n; j++)
                    A[i].B->z[j] = A[i].B->z[j] * 0.5 + A[i].w * j;
        }
        #pragma omp taskwait
    }
    t = now() - t;

    long bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double e = j % 5;
            if (j < m - (i % 3))
                for (int rep = 0; rep < 3; rep++)
                    e = e * 0.5 + A[i].w * j;
            if (A[i].B->z[j] != e)
                bad++;
        }
    printf("managed_struct: n=%d m=%d BS=%d time=%.4f s\n", n, m, BS, t);
#ifdef __MACC__
    for (int d = 0; d < macc_num_devices(); d++)
        printf("managed_struct: device %d (%s): %ld tasks\n", d, macc_device_name(d), macc_device_tasks(d));
#endif
    printf("check: %s (%ld wrong)\n", bad ? "FAIL" : "PASS", bad);
    for (int i = 0; i < n; i++) {
        free(A[i].B->z);
        free(A[i].B);
    }
    free(A);
    return bad != 0;
}
