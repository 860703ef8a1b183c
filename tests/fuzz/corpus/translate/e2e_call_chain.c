/* A region calling a user function that calls another (both become device
 * functions), a function with pointer parameters called on mapped data, and a
 * non-static function. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double square(double v)
{
    return v * v;
}

static double poly(double v)
{
    return square(v) + 2.0 * v + 1.0; /* (v+1)^2 */
}

static void accumulate(double *dst, const double *src, int i, double w)
{
    dst[i] += w * poly(src[i]);
}

int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int main(void)
{
    int n = 2000;
    double *x = malloc(n * sizeof(double));
    double *y = malloc(n * sizeof(double));
    int *c = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        x[i] = i * 0.5 - 100.0;
        y[i] = 1.0;
    }

    #pragma omp target device(any) teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n]) map(from: c[0:n])
    for (int i = 0; i < n; i++) {
        accumulate(y, x, i, 2.0);
        c[i] = clampi(i - 1000, -10, 10);
    }

    for (int i = 0; i < n; i++) {
        double want = 1.0 + 2.0 * (x[i] + 1.0) * (x[i] + 1.0);
        int cw = i - 1000 < -10 ? -10 : i - 1000 > 10 ? 10 : i - 1000;
        if (fabs(y[i] - want) > 1e-9 * fabs(want) || c[i] != cw) {
            printf("FAIL: i=%d y=%g want %g, c=%d want %d\n", i, y[i], want, c[i], cw);
            return 1;
        }
    }
    free(x);
    free(y);
    free(c);
    printf("PASS\n");
    return 0;
}
