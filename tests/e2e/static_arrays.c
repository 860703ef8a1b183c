/* Statically sized arrays are mapped whole without a map clause: a global,
 * a file-static 2-D array, a local array; read-only and written ones. */
#include <stdio.h>

#define N 256
#define R 8
#define C 16

double g[N];
static int grid[R][C];

int main(void)
{
    float loc[N];
    int coef[4] = {1, 10, 100, 1000};
    for (int i = 0; i < N; i++) {
        g[i] = i;
        loc[i] = 0.0f;
    }

    #pragma omp target teams distribute parallel for
    for (int i = 0; i < N; i++) {
        loc[i] = (float)(g[i] * 2.0);
        g[i] = g[i] + coef[i % 4];
    }

    #pragma omp target teams distribute parallel for collapse(2)
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            grid[r][c] = r * C + c + (int)loc[r];

    for (int i = 0; i < N; i++)
        if (g[i] != i + coef[i % 4] || loc[i] != 2.0f * i) {
            printf("FAIL: g[%d] = %g, loc[%d] = %g\n", i, g[i], i, loc[i]);
            return 1;
        }
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            if (grid[r][c] != r * C + c + 2 * r) {
                printf("FAIL: grid[%d][%d] = %d\n", r, c, grid[r][c]);
                return 1;
            }
    printf("PASS\n");
    return 0;
}
