/* All-pairs loops whose inner loop reads read-only arrays as A[j]: on the GPU
 * they are staged through shared memory a block at a time, and two to four
 * arrays of one type share one vector tile (float2, float4 with a padding lane,
 * int4, double2). Sizes that are not a multiple of the block exercise the last,
 * partial tile; a block size given by thread_limit and the default one (the
 * block, and the tile, chosen at launch from the trip count: 32 for 1000
 * iterations, 512 for 70001 on a GPU of up to 136 SMs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

static int close_to(double a, double b) { return fabs(a - b) <= 1e-4 * (fabs(b) + 1.0); }

int main(void)
{
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    float *f3 = malloc(N * sizeof *f3), *f2 = malloc(N * sizeof *f2);
    int *p = malloc(N * sizeof *p), *q = malloc(N * sizeof *q), *r = malloc(N * sizeof *r), *s = malloc(N * sizeof *s);
    long *isum = malloc(N * sizeof *isum);
    double *u = malloc(N * sizeof *u), *v = malloc(N * sizeof *v), *d2 = malloc(N * sizeof *d2);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 17) * 0.25f;
        y[i] = (float)(i % 13) * 0.5f;
        z[i] = (float)(i % 7) - 3.0f;
        p[i] = i % 5; q[i] = i % 3; r[i] = i % 11; s[i] = 1;
        u[i] = 1.0 / (i + 1); v[i] = (double)(i % 9);
    }
    int n = N;
    /* three floats: a float4 tile, its fourth lane padding; block of 128 */
    #pragma omp target teams distribute parallel for thread_limit(128) map(to: x[0:n], y[0:n], z[0:n]) map(from: f3[0:n])
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
            acc += 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + 0.01f);
        }
        f3[i] = acc;
    }
    /* two floats: a float2 tile; the default block */
    #pragma omp target teams distribute parallel for map(to: x[0:n], y[0:n]) map(from: f2[0:n])
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int j = 0; j < n; j++)
            acc += x[j] * y[i] - y[j];
        f2[i] = acc;
    }
    /* four ints: an int4 tile */
    #pragma omp target teams distribute parallel for thread_limit(256) map(to: p[0:n], q[0:n], r[0:n], s[0:n]) map(from: isum[0:n])
    for (int i = 0; i < n; i++) {
        long acc = 0;
        for (int j = 0; j < n; j++)
            acc += (long)p[j] * q[j] - r[j] * s[j] + (p[j] == p[i]);
        isum[i] = acc;
    }
    /* two doubles: a double2 tile, over a part of the range */
    #pragma omp target teams distribute parallel for thread_limit(64) map(to: u[0:n], v[0:n]) map(from: d2[0:n])
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int j = 3; j < n - 2; j++)
            acc += u[j] * v[j];
        d2[i] = acc + u[i];
    }
    /* many outer iterations, a short inner loop of two whole tiles of 512 and a part */
    const int big = 70001, m = 1500;
    float *w = malloc(big * sizeof *w), *g = malloc(big * sizeof *g);
    for (int i = 0; i < big; i++)
        w[i] = (float)((i * 37) % 101) * 0.01f;
    #pragma omp target teams distribute parallel for map(to: w[0:big]) map(from: g[0:big])
    for (int i = 0; i < big; i++) {
        float acc = 0.0f;
        for (int j = 0; j < m; j++)
            acc += w[j] * (float)(j % 7) - w[i];
        g[i] = acc;
    }
    int bad = 0;
    for (int i = 0; i < big; i++) {
        double a = 0;
        for (int j = 0; j < m; j++)
            a += (double)w[j] * (j % 7) - w[i];
        if (!close_to(g[i], a) && bad++ < 5)
            printf("big i=%d: %g/%g\n", i, g[i], a);
    }
    free(w); free(g);
    for (int i = 0; i < N; i++) {
        double a3 = 0, a2 = 0, ad = 0;
        long ai = 0;
        for (int j = 0; j < N; j++) {
            double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
            a3 += 1.0 / sqrt(dx * dx + dy * dy + dz * dz + 0.01);
            a2 += (double)x[j] * y[i] - y[j];
            ai += (long)p[j] * q[j] - r[j] * s[j] + (p[j] == p[i]);
        }
        for (int j = 3; j < N - 2; j++)
            ad += u[j] * v[j];
        ad += u[i];
        if (!close_to(f3[i], a3) || !close_to(f2[i], a2) || isum[i] != ai || !close_to(d2[i], ad)) {
            if (bad++ < 5)
                printf("i=%d: %g/%g %g/%g %ld/%ld %g/%g\n", i, f3[i], a3, f2[i], a2, isum[i], ai, d2[i], ad);
        }
    }
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(x); free(y); free(z); free(f3); free(f2); free(p); free(q); free(r); free(s); free(isum);
    free(u); free(v); free(d2);
    return bad != 0;
}
