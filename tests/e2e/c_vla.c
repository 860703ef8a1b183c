/* Variably modified types: a pointer to rows of n elements captured by a
 * region (PRK's stencils), an array parameter double a[n][m] of a called
 * function, a local variable-length array, and a designated initialiser out
 * of the struct's order in the region. */
#include <stdio.h>
#include <stdlib.h>

struct pt { int x, y; };

static double corner_sum(int n, int m, const double a[n][m]) { return a[0][0] + a[n - 1][m - 1]; }

static void smooth(int n, const double (*restrict in)[n], double (*restrict out)[n])
{
    #pragma omp target teams distribute parallel for collapse(2) map(to: in[0:n][0:n]) map(from: out[0:n][0:n])
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int k = 3;
            double w[k];
            for (int q = 0; q < k; q++)
                w[q] = q;
            struct pt p = {.y = j, .x = i};
            out[i][j] = in[p.x][p.y] + w[2] + corner_sum(n, n, in);
        }
}

int main(void)
{
    int n = 50;
    double (*in)[n] = malloc(sizeof(double[n][n])), (*out)[n] = malloc(sizeof(double[n][n]));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            in[i][j] = i * n + j;
    smooth(n, (const double (*)[n])in, out);
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            bad += out[i][j] != in[i][j] + 2 + (n * n - 1);
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(in);
    free(out);
    return bad != 0;
}
