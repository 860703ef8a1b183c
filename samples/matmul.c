/* matmul.c: tiled DGEMM C += A*B with one task per block product, after the
 * tiled matrix multiply of Ozen et al. (seeds/003).
 *
 * The N x N matrices (N = NB*BS) are stored block-contiguous: tile (i,j), a
 * BS x BS row-major block, starts at element ((i*NB + j)*BS*BS). Each product
 * C(i,j) += A(i,k) * B(k,j) is one `target device(any) nowait` task that maps
 * exactly its three tiles and depends on them (in: A and B tiles, inout: the C
 * tile), so the products into one C tile run in k order and the others in
 * parallel, on whichever device the runtime picks. The NVIDIA version
 * collapses the two outer tile loops over the GPU threads, the host version
 * runs a `parallel for` over the rows.
 *
 *   usage: matmul [NB [BS]]      (defaults: 8 128, i.e. N = 1024)
 *
 * Checks sampled entries of C against a serial dot product; prints
 * `check: PASS` (exit 0) or `check: FAIL` (exit 1) and the GFLOP/s.
 * Builds with macc and also with a plain C compiler (pragmas ignored).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __MACC__
#include "macc_rt.h"
#endif

#define NSAMPLES 256

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Offset of element (r, c) of an N x N block-contiguous matrix. */
static size_t elem(int NB, int BS, int r, int c)
{
    return ((size_t)(r / BS) * NB + (size_t)(c / BS)) * BS * BS + (size_t)(r % BS) * BS + (c % BS);
}

/* Deterministic values in [-1, 1]. */
static double init_value(int which, int r, int c)
{
    unsigned h = (unsigned)r * 2654435761u ^ (unsigned)c * 40503u ^ (unsigned)which * 97u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (h % 2001) / 1000.0 - 1.0;
}

static void matmul_tiled(int NB, int BS, const double *A, const double *B, double *C)
{
    for (int i = 0; i < NB; i++) {
        for (int j = 0; j < NB; j++) {
            for (int k = 0; k < NB; k++) {
                size_t ta = ((size_t)i * NB + k) * BS * BS;
                size_t tb = ((size_t)k * NB + j) * BS * BS;
                size_t tc = ((size_t)i * NB + j) * BS * BS;
                #pragma omp target device(any) map(to: A[ta:BS*BS], B[tb:BS*BS]) map(tofrom: C[tc:BS*BS]) depend(in: A[ta:BS*BS], B[tb:BS*BS]) depend(inout: C[tc:BS*BS]) nowait
                #pragma omp if_device(nvidia) teams distribute parallel for collapse(2) resources(5)
                #pragma omp if_device(host) parallel for resources(50)
                for (int ii = 0; ii < BS; ii++) {
                    for (int jj = 0; jj < BS; jj++) {
                        double sum = C[tc + (size_t)ii * BS + jj];
                        for (int kk = 0; kk < BS; kk++)
                            sum += A[ta + (size_t)ii * BS + kk] * B[tb + (size_t)kk * BS + jj];
                        C[tc + (size_t)ii * BS + jj] = sum;
                    }
                }
            }
        }
    }
    #pragma omp taskwait
}

int main(int argc, char **argv)
{
    int NB = argc > 1 ? atoi(argv[1]) : 8;
    int BS = argc > 2 ? atoi(argv[2]) : 128;
    if (NB < 1 || BS < 1) {
        fprintf(stderr, "usage: %s [NB [BS]]\n", argv[0]);
        return 2;
    }
    int N = NB * BS;
    size_t nel = (size_t)N * N;
    double *A = malloc(nel * sizeof(double));
    double *B = malloc(nel * sizeof(double));
    double *C = malloc(nel * sizeof(double));
    if (!A || !B || !C) {
        fprintf(stderr, "matmul: out of memory\n");
        return 2;
    }
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            A[elem(NB, BS, r, c)] = init_value(1, r, c);
            B[elem(NB, BS, r, c)] = init_value(2, r, c);
            C[elem(NB, BS, r, c)] = init_value(3, r, c);
        }

#ifdef __MACC__
    macc_num_devices(); /* start the runtime (GPU contexts, helpers) before the clock */
#endif
    double t = now();
    matmul_tiled(NB, BS, A, B, C);
    t = now() - t;

    /* Check sampled entries (corners included) against a serial dot product. */
    double maxerr = 0.0;
    for (int s = 0; s < NSAMPLES; s++) {
        int r = s == 0 ? 0 : s == 1 ? N - 1 : (int)(((long long)s * 7919) % N);
        int c = s == 0 ? 0 : s == 1 ? N - 1 : (int)(((long long)s * 104729 + 13) % N);
        double ref = init_value(3, r, c), mag = fabs(ref);
        for (int k = 0; k < N; k++) {
            double p = A[elem(NB, BS, r, k)] * B[elem(NB, BS, k, c)];
            ref += p;
            mag += fabs(p);
        }
        double e = fabs(C[elem(NB, BS, r, c)] - ref) / (mag > 0 ? mag : 1.0);
        if (!(e <= maxerr))
            maxerr = e;
    }

    double gflops = 2.0 * (double)N * N * N / t * 1e-9;
    printf("matmul: N=%d NB=%d BS=%d tasks=%d time=%.3f s  GFLOP/s=%.2f\n", N, NB, BS,
           NB * NB * NB, t, gflops);
#ifdef __MACC__
    for (int d = 0; d < macc_num_devices(); d++)
        printf("matmul: device %d (%s): %ld tasks\n", d, macc_device_name(d), macc_device_tasks(d));
#endif
    int ok = maxerr < 1e-12;
    printf("check: %s (max relative error %.2e over %d entries)\n", ok ? "PASS" : "FAIL", maxerr,
           NSAMPLES);
    free(A);
    free(B);
    free(C);
    return ok ? 0 : 1;
}
