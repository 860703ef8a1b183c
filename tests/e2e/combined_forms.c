/* Combined constructs on one line: target teams (a block), target teams
 * distribute, target teams distribute simd, target teams distribute parallel
 * for simd, target simd, target parallel for simd, target teams loop,
 * target parallel loop and target loop, with reductions and collapse. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 4096, rows = 40, cols = 30;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    int *g = malloc(rows * cols * sizeof(int));
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 17);
        y[i] = 1.0f;
    }

    /* a block run by one team */
    int flag = 0;
    #pragma omp target teams map(tofrom: flag) map(to: x[0:n])
    {
        int k = 3;
        flag = (int)x[k] + 100;
    }

    #pragma omp target teams distribute map(tofrom: y[0:n]) map(to: x[0:n])
    for (int i = 0; i < n; i++)
        y[i] += x[i];

    #pragma omp target teams distribute simd map(tofrom: y[0:n])
    for (int i = 0; i < n; i++)
        y[i] *= 2.0f;

    double dot = 0;
    #pragma omp target teams distribute parallel for simd map(to: x[0:n], y[0:n]) reduction(+: dot)
    for (int i = 0; i < n; i++)
        dot += (double)x[i] * y[i];

    #pragma omp target simd map(tofrom: y[0:n])
    for (int i = 0; i < n; i++)
        y[i] -= 2.0f;

    int neg = 0;
    #pragma omp target parallel for simd map(to: y[0:n]) reduction(+: neg)
    for (int i = 0; i < n; i++)
        neg += y[i] < 0.0f;

    #pragma omp target teams loop collapse(2) map(from: g[0:rows * cols])
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            g[r * cols + c] = r - c;

    int gmin = 1000;
    #pragma omp target parallel loop map(to: g[0:rows * cols]) reduction(min: gmin)
    for (int i = 0; i < rows * cols; i++)
        gmin = g[i] < gmin ? g[i] : gmin;

    #pragma omp target loop map(tofrom: x[0:n])
    for (int i = 0; i < n; i++)
        x[i] = -x[i];

    int ok = 1;
    double want_dot = 0;
    for (int i = 0; i < n; i++) {
        float xi = (float)(i % 17);
        float yi = 2.0f * (1.0f + xi);
        want_dot += (double)xi * yi;
        if (y[i] != yi - 2.0f || x[i] != -xi) {
            printf("FAIL: y[%d] = %g, x[%d] = %g\n", i, y[i], i, x[i]);
            ok = 0;
            break;
        }
    }
    for (int r = 0; r < rows && ok; r++)
        for (int c = 0; c < cols; c++)
            if (g[r * cols + c] != r - c) {
                printf("FAIL: g[%d][%d] = %d\n", r, c, g[r * cols + c]);
                ok = 0;
                break;
            }
    if (flag != 103 || dot != want_dot || neg != 0 || gmin != 1 - cols) {
        printf("FAIL: flag %d, dot %g (want %g), neg %d, gmin %d\n", flag, dot, want_dot, neg, gmin);
        ok = 0;
    }
    free(x);
    free(y);
    free(g);
    if (!ok)
        return 1;
    printf("PASS\n");
    return 0;
}
