// MACC_FLAGS: --managed
/* srad.c: speckle reducing anisotropic diffusion, the Rodinia SRAD v1
 * kernels as `omp target` regions on managed memory (macc --managed): the
 * second sample of the placement study (runtime/placement.c, OTM, seed 004).
 *
 * Per iteration: the image statistics (a reduction over J), then srad1
 * (the four derivatives dN dS dW dE and the diffusion coefficient c of every
 * pixel, from J and the neighbour index arrays iN iS jW jE) and srad2 (J
 * updated from c and the derivatives). Six float arrays of rows x cols: J and
 * c are read most, the derivatives are written by one kernel and read by the
 * next.
 *
 *   usage: srad [rows [cols [iterations [lambda [reps]]]]]  (defaults: 2048 2048 10 0.5 1)
 *
 * The iterations run `reps` times (fewer when the repetitions have taken
 * REPS_MAX_S in all: at least one), each from the same image: every array
 * moved back to the host first (`target update from`, under --managed a
 * prefetch to the host that placement.c notes), J reset there. Prints the
 * bytes the regions use (`data: N bytes`), the best repetition's time
 * (`time: S s`; `times:` every repetition's) and `check: PASS` (exit 0) when J matches a serial run within
 * a relative 1e-3, else `check: FAIL` (exit 1).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS_MAX_S 2.0

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void stats(long n, const float *J, double *sum, double *sum2)
{
    double s = 0, s2 = 0;
#pragma omp target teams distribute parallel for map(to: J[0:n]) reduction(+: s, s2)
    for (long k = 0; k < n; k++) {
        s += J[k];
        s2 += (double)J[k] * J[k];
    }
    *sum = s;
    *sum2 = s2;
}

static void srad1(int rows, int cols, float q0sqr, const float *J, const int *iN, const int *iS, const int *jW,
                  const int *jE, float *dN, float *dS, float *dW, float *dE, float *c)
{
    long n = (long)rows * cols;
#pragma omp target teams distribute parallel for collapse(2) map(to: J[0:n], iN[0:rows], iS[0:rows], jW[0:cols], jE[0:cols]) map(from: dN[0:n], dS[0:n], dW[0:n], dE[0:n], c[0:n])
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            long k = (long)i * cols + j;
            float Jc = J[k];
            float n_ = J[(long)iN[i] * cols + j] - Jc;
            float s_ = J[(long)iS[i] * cols + j] - Jc;
            float w_ = J[(long)i * cols + jW[j]] - Jc;
            float e_ = J[(long)i * cols + jE[j]] - Jc;
            dN[k] = n_;
            dS[k] = s_;
            dW[k] = w_;
            dE[k] = e_;
            float G2 = (n_ * n_ + s_ * s_ + w_ * w_ + e_ * e_) / (Jc * Jc);
            float L = (n_ + s_ + w_ + e_) / Jc;
            float num = (0.5f * G2) - ((1.0f / 16.0f) * (L * L));
            float den = 1 + (.25f * L);
            float qsqr = num / (den * den);
            den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
            float cv = 1.0f / (1.0f + den);
            c[k] = cv < 0 ? 0 : cv > 1 ? 1 : cv;
        }
}

static void srad2(int rows, int cols, float lambda, float *J, const int *iS, const int *jE, const float *dN,
                  const float *dS, const float *dW, const float *dE, const float *c)
{
    long n = (long)rows * cols;
#pragma omp target teams distribute parallel for collapse(2) map(to: iS[0:rows], jE[0:cols], dN[0:n], dS[0:n], dW[0:n], dE[0:n], c[0:n]) map(tofrom: J[0:n])
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            long k = (long)i * cols + j;
            float cN = c[k];
            float cS = c[(long)iS[i] * cols + j];
            float cW = c[k];
            float cE = c[(long)i * cols + jE[j]];
            float D = cN * dN[k] + cS * dS[k] + cW * dW[k] + cE * dE[k];
            J[k] = J[k] + 0.25f * lambda * D;
        }
}

/* the same on the host, serially */
static void serial(int rows, int cols, int niter, float lambda, float *J, const int *iN, const int *iS,
                   const int *jW, const int *jE, float *dN, float *dS, float *dW, float *dE, float *c)
{
    long n = (long)rows * cols;
    for (int it = 0; it < niter; it++) {
        double s = 0, s2 = 0;
        for (long k = 0; k < n; k++) {
            s += J[k];
            s2 += (double)J[k] * J[k];
        }
        double mean = s / n, var = s2 / n - mean * mean;
        float q0sqr = (float)(var / (mean * mean));
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                long k = (long)i * cols + j;
                float Jc = J[k];
                float n_ = J[(long)iN[i] * cols + j] - Jc, s_ = J[(long)iS[i] * cols + j] - Jc;
                float w_ = J[(long)i * cols + jW[j]] - Jc, e_ = J[(long)i * cols + jE[j]] - Jc;
                dN[k] = n_;
                dS[k] = s_;
                dW[k] = w_;
                dE[k] = e_;
                float G2 = (n_ * n_ + s_ * s_ + w_ * w_ + e_ * e_) / (Jc * Jc);
                float L = (n_ + s_ + w_ + e_) / Jc;
                float num = (0.5f * G2) - ((1.0f / 16.0f) * (L * L));
                float den = 1 + (.25f * L);
                float qsqr = num / (den * den);
                den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
                float cv = 1.0f / (1.0f + den);
                c[k] = cv < 0 ? 0 : cv > 1 ? 1 : cv;
            }
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                long k = (long)i * cols + j;
                float D = c[k] * dN[k] + c[(long)iS[i] * cols + j] * dS[k] + c[k] * dW[k] +
                          c[(long)i * cols + jE[j]] * dE[k];
                J[k] = J[k] + 0.25f * lambda * D;
            }
    }
}

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 2048;
    int cols = argc > 2 ? atoi(argv[2]) : 2048;
    int niter = argc > 3 ? atoi(argv[3]) : 10;
    float lambda = argc > 4 ? (float)atof(argv[4]) : 0.5f;
    int reps = argc > 5 ? atoi(argv[5]) : 1;
    if (rows < 2 || cols < 2 || niter < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: srad [rows [cols [iterations [lambda [reps]]]]]\n");
        return 2;
    }
    long n = (long)rows * cols;
    float *J = malloc(n * sizeof *J), *c = malloc(n * sizeof *c);
    float *dN = malloc(n * sizeof *dN), *dS = malloc(n * sizeof *dS);
    float *dW = malloc(n * sizeof *dW), *dE = malloc(n * sizeof *dE);
    int *iN = malloc(rows * sizeof *iN), *iS = malloc(rows * sizeof *iS);
    int *jW = malloc(cols * sizeof *jW), *jE = malloc(cols * sizeof *jE);
    float *Jr = malloc(n * sizeof *Jr);
    if (!J || !c || !dN || !dS || !dW || !dE || !iN || !iS || !jW || !jE || !Jr) {
        fprintf(stderr, "srad: out of memory\n");
        return 2;
    }
    for (int i = 0; i < rows; i++) {
        iN[i] = i > 0 ? i - 1 : 0;
        iS[i] = i < rows - 1 ? i + 1 : rows - 1;
    }
    for (int j = 0; j < cols; j++) {
        jW[j] = j > 0 ? j - 1 : 0;
        jE[j] = j < cols - 1 ? j + 1 : cols - 1;
    }
    unsigned long long r = 12345;
    for (long k = 0; k < n; k++) { /* a speckled image, as exp(image) in Rodinia */
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        float v = (float)((r >> 40) & 0xffff) / 65536.0f;
        Jr[k] = J[k] = expf(v * 0.5f + 0.25f * (float)((k / cols) % 64 < 32));
    }

    double t = 0, all = 0, times[100];
    int done = 0;
    while (done < reps && (done == 0 || all < REPS_MAX_S)) {
        /* everything back on the host (no-ops for the host and at the first) */
#pragma omp target update from(J[0:n], c[0:n], dN[0:n], dS[0:n], dW[0:n], dE[0:n], iN[0:rows], iS[0:rows], jW[0:cols], jE[0:cols])
        for (long k = 0; k < n; k++)
            J[k] = Jr[k];
        double t0 = now();
        for (int it = 0; it < niter; it++) {
            double s, s2;
            stats(n, J, &s, &s2);
            double mean = s / n, var = s2 / n - mean * mean;
            float q0sqr = (float)(var / (mean * mean));
            srad1(rows, cols, q0sqr, J, iN, iS, jW, jE, dN, dS, dW, dE, c);
            srad2(rows, cols, lambda, J, iS, jE, dN, dS, dW, dE, c);
        }
        double ti = now() - t0;
        times[done++] = ti;
        all += ti;
        if (done == 1 || ti < t)
            t = ti;
    }

    serial(rows, cols, niter, lambda, Jr, iN, iS, jW, jE, dN, dS, dW, dE, c);
    double maxd = 0, maxv = 0;
    for (long k = 0; k < n; k++) {
        double d = fabs((double)J[k] - Jr[k]);
        if (d > maxd)
            maxd = d;
        if (fabs(Jr[k]) > maxv)
            maxv = fabs(Jr[k]);
    }
    int ok = maxd <= 1e-3 * maxv;
    printf("srad: %d x %d, %d iterations, max difference %.3g (of %.3g)\n", rows, cols, niter, maxd, maxv);
    printf("data: %zu bytes\n", 6 * (size_t)n * sizeof(float) + 2 * ((size_t)rows + cols) * sizeof(int));
    printf("time: %.6f s\n", t);
    printf("times:");
    for (int i = 0; i < done; i++)
        printf(" %.6f", times[i]);
    printf("\n");
    printf("check: %s\n", ok ? "PASS" : "FAIL");
    free(J);
    free(c);
    free(dN);
    free(dS);
    free(dW);
    free(dE);
    free(iN);
    free(iS);
    free(jW);
    free(jE);
    free(Jr);
    return ok ? 0 : 1;
}
