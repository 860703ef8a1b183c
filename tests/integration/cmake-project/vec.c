/* vec.c: one target region, translated by macc (as the C compiler, or by
 * `macc --translate` in an add_custom_command). */
#include "vec.h"

double vec_dot_scaled(double *y, const double *x, int n)
{
    double sum = 0.0;
    #pragma omp target device(any) map(to: x[0:n]) map(tofrom: y[0:n]) parallel for reduction(+: sum)
    for (int i = 0; i < n; i++) {
        y[i] = VEC_SCALE * x[i];
        sum += y[i];
    }
    return sum;
}
