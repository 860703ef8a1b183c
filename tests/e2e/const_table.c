/* A constant table read by a function the region calls (not by the region
 * itself): the device file keeps a __device__ copy of the table. */
#include <math.h>
#include <stdio.h>

static const double coef[4] = {1.0, 0.5, 0.25, 0.125};

static double poly(double x)
{
    return coef[0] + x * (coef[1] + x * (coef[2] + x * coef[3]));
}

int main(void)
{
    enum { N = 1000 };
    double a[N];
    int n = N;
    for (int i = 0; i < n; i++)
        a[i] = i * 0.001;
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] = poly(a[i]);
    for (int i = 0; i < n; i++) {
        double x = i * 0.001;
        double want = 1.0 + x * (0.5 + x * (0.25 + x * 0.125));
        if (fabs(a[i] - want) > 1e-12) { /* the GPU may fuse multiply-adds */
            printf("FAIL: a[%d] = %.17g, expected %.17g\n", i, a[i], want);
            return 1;
        }
    }
    printf("PASS\n");
    return 0;
}
