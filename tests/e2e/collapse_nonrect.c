/* Non-rectangular collapsed nests (OpenMP 5.0): an inner loop's bounds use
 * an outer loop's variable. The loops before it are collapsed, the rest run
 * inside each of their iterations (on the GPU, one thread per collapsed
 * iteration; gcc 12's own collapse of such a nest crashes on the host).
 * A triangle (j from i), a band (j from i*M) and a three-deep nest whose
 * third loop depends on the second. */
#include <stdio.h>
#include <stdlib.h>

#define N 64
#define M 16

int main(void)
{
    static int tri[N][N], band[N * M], cube[8][8][8];
    int errors = 0;

    #pragma omp target teams distribute parallel for collapse(2) map(tofrom: tri)
    for (int i = 0; i < N; i++)
        for (int j = i; j < N; j++)
            tri[i][j] = i + j + 1;

    #pragma omp target teams loop collapse(2) map(from: band)
    for (int i = 0; i < N; i++)
        for (int j = i * M; j < i * M + M; j++)
            band[j] = 3 * j;

    #pragma omp target parallel for collapse(3) map(tofrom: cube)
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            for (int k = j; k < 8; k++)
                cube[i][j][k] = 100 * i + 10 * j + k + 1;

    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            errors += tri[i][j] != (j >= i ? i + j + 1 : 0);
    for (int j = 0; j < N * M; j++)
        errors += band[j] != 3 * j;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            for (int k = 0; k < 8; k++)
                errors += cube[i][j][k] != (k >= j ? 100 * i + 10 * j + k + 1 : 0);
    printf("check: %s (%d errors)\n", errors ? "FAIL" : "PASS", errors);
    return errors ? 1 : 0;
}
