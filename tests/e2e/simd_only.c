/* The simd construct-set alone: target simd (with safelen, simdlen and a
 * reduction), and simd on if_device lines of a device(any) region. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 999;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }

    #pragma omp target simd simdlen(8) map(to: x[0:n]) map(tofrom: y[0:n])
    for (int i = 0; i < n; i++)
        y[i] += 2.0f * x[i];

    float s = 0.0f;
    #pragma omp target simd reduction(+: s) safelen(16) map(to: y[0:n])
    for (int i = 0; i < n; i++)
        s += y[i];

    #pragma omp target device(any) map(tofrom: y[0:n])
    #pragma omp if_device(nvidia) simd
    #pragma omp if_device(host) simd
    for (int i = 0; i < n; i++)
        y[i] = -y[i];

    float want = 0.0f;
    for (int i = 0; i < n; i++) {
        if (y[i] != -(1.0f + 2.0f * i)) {
            printf("FAIL: y[%d] = %g\n", i, y[i]);
            return 1;
        }
        want += 1.0f + 2.0f * i;
    }
    /* n*n = 998001 < 2^24: every partial sum is exact in float */
    if (s != want || s != (float)n * n) {
        printf("FAIL: s = %.9g, want %.9g\n", s, want);
        return 1;
    }
    free(x);
    free(y);
    printf("PASS\n");
    return 0;
}
