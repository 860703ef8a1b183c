/* main.c: no directives; checks vec_dot_scaled and prints PASS. */
#include <stdio.h>
#include <stdlib.h>

#include "vec.h"

int main(void)
{
    enum { N = 10000 };
    double *x = malloc(N * sizeof *x), *y = calloc(N, sizeof *y);
    if (!x || !y)
        return 2;
    for (int i = 0; i < N; i++)
        x[i] = i % 10;
    double sum = vec_dot_scaled(y, x, N);
    int bad = sum != VEC_SCALE * 45.0 * (N / 10);
    for (int i = 0; i < N; i++)
        bad += y[i] != VEC_SCALE * (i % 10);
    if (bad)
        printf("FAIL: sum %g, %d wrong\n", sum, bad);
    else
        printf("PASS\n");
    free(x);
    free(y);
    return bad != 0;
}
