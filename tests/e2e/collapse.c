/* collapse(2) and collapse(3), with non-zero lower bounds and a step, a
 * collapsed reduction, and collapse on the if_device lines. */
#include <stdio.h>
#include <stdlib.h>

static int fails;

int main(void)
{
    int n = 37, m = 53, l = 11;
    double *a = malloc((size_t)n * m * sizeof(double));
    double *b = malloc((size_t)n * m * l * sizeof(double));
    for (int i = 0; i < n * m; i++)
        a[i] = -1.0;

    /* collapse(2), full rectangle */
    #pragma omp target teams distribute parallel for collapse(2) map(from: a[0:n*m])
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            a[i * m + j] = i * 1000.0 + j;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (a[i * m + j] != i * 1000.0 + j) {
                printf("FAIL: collapse(2) a[%d][%d] = %g\n", i, j, a[i * m + j]);
                return 1;
            }

    /* collapse(2) with lower bounds 1 and 3, step 2 in the outer loop */
    #pragma omp target teams distribute parallel for collapse(2) map(tofrom: a[0:n*m])
    for (int i = 1; i < n; i += 2)
        for (int j = 3; j < m; j++)
            a[i * m + j] = -a[i * m + j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double want = i * 1000.0 + j;
            if (i % 2 == 1 && j >= 3)
                want = -want;
            if (a[i * m + j] != want) {
                printf("FAIL: collapse(2) strided a[%d][%d] = %g, want %g\n", i, j, a[i * m + j], want);
                return 1;
            }
        }

    /* collapse(3) */
    #pragma omp target device(any) map(from: b[0:n*m*l])
    #pragma omp if_device(nvidia) teams distribute parallel for collapse(3)
    #pragma omp if_device(host) parallel for collapse(2)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < l; k++)
                b[((size_t)i * m + j) * l + k] = i + 0.5 * j + 0.25 * k;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < l; k++)
                if (b[((size_t)i * m + j) * l + k] != i + 0.5 * j + 0.25 * k) {
                    printf("FAIL: collapse(3) b[%d][%d][%d]\n", i, j, k);
                    return 1;
                }

    /* collapse(3) with a reduction */
    double s = 0.0;
    #pragma omp target teams distribute parallel for collapse(3) reduction(+: s) map(to: b[0:n*m*l])
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < l; k++)
                s += b[((size_t)i * m + j) * l + k];
    double es = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < l; k++)
                es += i + 0.5 * j + 0.25 * k;
    if (s != es) {
        printf("FAIL: collapse(3) reduction: %.17g, want %.17g\n", s, es);
        fails++;
    }

    free(a);
    free(b);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
