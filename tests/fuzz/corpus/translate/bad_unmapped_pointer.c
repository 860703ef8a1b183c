// EXPECT: 9: 'p'
/* A pointer used in a region with no map, no data region, no enter data. */
#include <stdlib.h>

void f(int n)
{
    double *p = malloc(n * sizeof(double));
    double *q = malloc(n * sizeof(double));
    #pragma omp target teams distribute parallel for map(to: q[0:n])
    for (int i = 0; i < n; i++)
        p[i] = q[i];
    free(p);
    free(q);
}
