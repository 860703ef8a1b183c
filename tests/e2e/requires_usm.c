/* `omp requires unified_shared_memory`: the file's heap is managed memory
 * (what --managed does), so a region uses malloc'd data with no map clause,
 * on the host and on a GPU alike. */
#include <stdio.h>
#include <stdlib.h>

#pragma omp requires unified_shared_memory

int main(void)
{
    int n = 4096;
    double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) {
        x[i] = i;
        y[i] = 1.0;
    }
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        y[i] += 2.0 * x[i];
    for (int i = 0; i < n; i++)
        if (y[i] != 1.0 + 2.0 * i) {
            printf("FAIL at %d: %g\n", i, y[i]);
            return 1;
        }
    free(x);
    free(y);
    printf("PASS\n");
    return 0;
}
