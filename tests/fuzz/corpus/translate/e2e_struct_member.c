/* Struct members inside a region: scalars read through a struct pointer
 * mapped as p[0:1], a struct passed by value (firstprivate), and a typedef'd
 * element type. */
#include <stdio.h>
#include <stdlib.h>

typedef struct Params {
    int n;
    double scale;
    double shift;
} Params;

typedef double real;

static void apply(const Params *p, real *v)
{
    #pragma omp target teams distribute parallel for map(to: p[0:1]) map(tofrom: v[0:p->n])
    for (int i = 0; i < p->n; i++)
        v[i] = v[i] * p->scale + p->shift;
}

int main(void)
{
    Params prm = {1000, 2.0, 0.5};
    real *v = malloc(prm.n * sizeof(real));
    for (int i = 0; i < prm.n; i++)
        v[i] = i;

    apply(&prm, v);

    Params q = prm;
    q.shift = -0.5;
    int n = q.n;
    #pragma omp target teams distribute parallel for firstprivate(q) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] = v[i] + q.shift;

    for (int i = 0; i < prm.n; i++)
        if (v[i] != 2.0 * i) {
            printf("FAIL: v[%d] = %g\n", i, v[i]);
            return 1;
        }
    free(v);
    printf("PASS\n");
    return 0;
}
