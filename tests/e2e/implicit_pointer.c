/* Pointers with no map clause in a function whose caller mapped the data
 * (the PRK stencil pattern): OpenMP's implicit zero-length map translates
 * them at run time to the device copies; the layout macro comes from a
 * header-like #define and the constants from the preprocessor. */
#include <stdio.h>
#include <stdlib.h>

#define IDX(i, j) ((i) * n + (j))
#define RADIUS 1

static void stencil(int n, const double *restrict in, double *restrict out)
{
    #pragma omp target teams distribute parallel for collapse(2)
    for (int i = RADIUS; i < n - RADIUS; i++)
        for (int j = RADIUS; j < n - RADIUS; j++)
            out[IDX(i, j)] += 0.25 * (in[IDX(i - 1, j)] + in[IDX(i + 1, j)] + in[IDX(i, j - 1)] + in[IDX(i, j + 1)]);
}

int main(void)
{
    int n = 64, iters = 5;
    double *in = malloc(sizeof(double) * n * n), *out = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n * n; i++) {
        in[i] = i % 7;
        out[i] = 0.0;
    }
    #pragma omp target data map(to: in[0:n*n]) map(tofrom: out[0:n*n])
    {
        for (int k = 0; k < iters; k++)
            stencil(n, in, out);
    }
    int bad = 0;
    for (int i = RADIUS; i < n - RADIUS; i++)
        for (int j = RADIUS; j < n - RADIUS; j++) {
            double want = iters * 0.25 * (in[IDX(i - 1, j)] + in[IDX(i + 1, j)] + in[IDX(i, j - 1)] + in[IDX(i, j + 1)]);
            if (out[IDX(i, j)] != want)
                bad++;
        }
    if (bad) {
        printf("FAIL: %d wrong\n", bad);
        return 1;
    }
    printf("PASS\n");
    free(in);
    free(out);
    return 0;
}
