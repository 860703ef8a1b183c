/* MACC_GOLDEN: info
 * acc kernels over a block of several statements: a data construct of its
 * data clauses, each loop nest a kernels construct (the first with the max
 * reduction found under `loop independent`, the second with a dependence:
 * seq, warned), the other statements one kernels construct of one thread. */
#include <math.h>

void relax(int n, double *a, double *b, double *err)
{
    #pragma acc kernels copy(a[0:n]) create(b[0:n]) async(1)
    {
        double e = 0.0;
        #pragma acc loop independent
        for (int i = 1; i < n - 1; i++) {
            b[i] = 0.5 * (a[i - 1] + a[i + 1]);
            e = fmax(e, fabs(b[i] - a[i]));
        }
        for (int i = 1; i < n - 1; i++)
            a[i] = a[i - 1] + b[i];
        a[0] = 0.0;
        *err = e;
    }
}
