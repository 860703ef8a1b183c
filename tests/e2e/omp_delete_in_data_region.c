/* OpenMP's `exit data map(delete:)` inside a data region that maps the same
 * arrays (a global and a malloc'd one): the reference count goes to zero, the
 * arrays leave the device, the next region copies the host's new values
 * afresh, and the data region's end copies nothing back. Prints PASS or FAIL. */
#include <stdio.h>
#include <stdlib.h>

#define N 256

int g[N];

int main(void)
{
    int *h = malloc(N * sizeof *h);
    if (!h)
        return 2;
    for (int i = 0; i < N; i++)
        g[i] = h[i] = 1;
    #pragma omp target data map(tofrom: g, h[0:N])
    {
        #pragma omp target teams distribute parallel for
        for (int i = 0; i < N; i++) {
            g[i] += 1;
            h[i] += 1;
        }
        #pragma omp target exit data map(delete: g, h[0:N])
        for (int i = 0; i < N; i++)
            g[i] = h[i] = 10;
        #pragma omp target teams distribute parallel for map(tofrom: g, h[0:N])
        for (int i = 0; i < N; i++) {
            g[i] += 5;
            h[i] += 5;
        }
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        if ((g[i] != 15 || h[i] != 15) && bad++ < 3)
            printf("g[%d] = %d, h[%d] = %d, want 15\n", i, g[i], i, h[i]);
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(h);
    return bad != 0;
}
