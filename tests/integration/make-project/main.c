/* main.c: no directives (compiled as is); checks saxpy's result. */
#include <stdio.h>
#include <stdlib.h>

int saxpy_n(void);
void saxpy(float *y, const float *x, int n);

int main(void)
{
    int n = saxpy_n();
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y)
        return 2;
    for (int i = 0; i < n; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    saxpy(y, x, n);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (y[i] != 3.0f * (float)i + 1.0f)
            bad++;
    if (bad)
        printf("FAIL: %d of %d wrong\n", bad, n);
    else
        printf("PASS\n");
    free(x);
    free(y);
    return bad != 0;
}
