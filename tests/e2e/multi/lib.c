/* lib.c: declare target definitions that main.c's kernels use, and regions
 * of its own that see the same device copies. */
#include "multi.h"

#pragma omp declare target
double factor = 3.0;
int counter = 0;
double scale(double x) { return factor * x + offset(x); }
#pragma omp end declare target

int lib_read_counter(void)
{
    int v = -1;
    #pragma omp target map(from: v)
    v = counter;
    return v;
}

double lib_sum_scaled(int n)
{
    double s = 0.0;
    #pragma omp target teams distribute parallel for reduction(+: s) map(tofrom: s)
    for (int i = 0; i < n; i++)
        s += scale(i);
    return s;
}
