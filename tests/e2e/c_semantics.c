/* C where nvcc's C++ differs, in kernels and the functions they call: an
 * array-typed parameter (double x[]), fmax/fmin on integers, bool (_Bool once
 * preprocessed), a compound literal-free C99 check on __STDC_VERSION__ as PRK
 * does, a statement macro without its ';', and a callee defined after its
 * caller (a prototype in the device file). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L
#error You need a C99+ compiler
#endif

#define ACCUMULATE(dst, v) { dst += (v); }

static double later(double v);

static double first(int i, int j)
{
    bool odd = (i & 1) != 0;
    return odd ? fmax(i, j) : later((double)fmin(i, j));
}

static double later(double v) { return v + 0.5; }

static void kernel(int n, double x[], const int y[])
{
    #pragma omp target teams distribute parallel for map(tofrom: x[0:n]) map(to: y[0:n])
    for (int i = 0; i < n; i++) {
        double t = 0.0;
        ACCUMULATE(t, first(i, y[i]))
        x[i] = t;
    }
}

int main(void)
{
    enum { N = 257 };
    double x[N];
    int y[N];
    for (int i = 0; i < N; i++) {
        x[i] = -1.0;
        y[i] = N - i;
    }
    kernel(N, x, y);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double want = (i & 1) ? (i > N - i ? i : N - i) : (i < N - i ? i : N - i) + 0.5;
        bad += x[i] != want;
    }
    /* NULL is ((void *)0) in C: assigned to and compared with typed pointers in a kernel */
    int *p1 = &y[0], *p2 = NULL, nulls = 0;
#pragma omp target map(tofrom: nulls)
    {
        nulls += p2 == NULL;
        p1 = NULL;
        nulls += p1 == NULL;
    }
    if (nulls != 2) {
        printf("FAIL: NULL in a kernel: %d\n", nulls);
        bad++;
    }
    if (bad) {
        printf("FAIL: %d wrong\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
