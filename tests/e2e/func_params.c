/* Regions inside functions that take pointer parameters with explicit maps;
 * the functions are called on whole arrays and on pointers into them, and
 * one returns a reduction result. */
#include <stdio.h>
#include <stdlib.h>

static void saxpy(int n, float alpha, const float *restrict x, float *restrict y)
{
    #pragma omp target device(any) map(to: x[0:n]) map(tofrom: y[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for
    #pragma omp if_device(host) parallel for
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + y[i];
}

static double dot(int n, const float *x, const float *y)
{
    double s = 0.0;
    #pragma omp target teams distribute parallel for reduction(+: s) map(to: x[0:n], y[0:n])
    for (int i = 0; i < n; i++)
        s += (double)x[i] * y[i];
    return s;
}

void fill(float *v, int lo, int len, float value)
{
    #pragma omp target teams distribute parallel for map(from: v[lo:len])
    for (int i = lo; i < lo + len; i++)
        v[i] = value;
}

int main(void)
{
    int n = 1000;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 10);
    fill(y, 0, n, 1.0f);
    fill(y, 100, 50, 3.0f);

    saxpy(n, 2.0f, x, y);
    saxpy(n / 2, 1.0f, x + n / 2, y + n / 2);   /* upper half again */

    for (int i = 0; i < n; i++) {
        float want = (i >= 100 && i < 150 ? 3.0f : 1.0f) + 2.0f * (i % 10);
        if (i >= n / 2)
            want += (float)(i % 10);
        if (y[i] != want) {
            printf("FAIL: y[%d] = %g, want %g\n", i, y[i], want);
            return 1;
        }
    }
    double d = dot(n, x, y), want = 0.0;
    for (int i = 0; i < n; i++)
        want += (double)x[i] * y[i];
    if (d != want) {
        printf("FAIL: dot = %.17g, want %.17g\n", d, want);
        return 1;
    }
    free(x);
    free(y);
    printf("PASS\n");
    return 0;
}
