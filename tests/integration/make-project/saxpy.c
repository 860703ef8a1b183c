/* saxpy.c: one target region (host and GPU versions) over arrays from main. */
#include <stdlib.h>

#include "params.h"

int saxpy_n(void)
{
    return SAXPY_N;
}

void saxpy(float *y, const float *x, int n)
{
    #pragma omp target device(any) teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
    for (int i = 0; i < n; i++)
        y[i] = SAXPY_A * x[i] + y[i];
}
