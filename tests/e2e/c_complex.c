/* C's complex types in a region: double and float _Complex arrays and
 * arithmetic with real operands and imaginary constants, creal/cimag/conj/
 * cabs on the device, and sums of both types as reductions. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 1000;
    double _Complex *z = malloc(n * sizeof *z);
    float complex *f = malloc(n * sizeof *f);
    for (int i = 0; i < n; i++) {
        z[i] = i + 2.0 * I;
        f[i] = 1.0f + (i % 7) * I;
    }
    double _Complex dsum = 10 + 10 * I;
    float _Complex fsum = 0;
    #pragma omp target teams distribute parallel for map(tofrom: z[0:n]) map(to: f[0:n]) reduction(+: dsum, fsum)
    for (int i = 0; i < n; i++) {
        z[i] = z[i] * conj(z[i]) / (1.0 + 1.0 * I) + 2.0i - cabs(3.0 + 4.0 * I);
        dsum += z[i];
        fsum += f[i] * 2.0f;
    }
    int bad = 0;
    double re = 10, im = 10;
    for (int i = 0; i < n; i++) {
        double m = (double)i * i + 4; /* z z* = |z|^2; / (1 + i) = m/2 - m/2 i */
        double wr = m / 2 - 5, wi = -m / 2 + 2;
        bad += fabs(creal(z[i]) - wr) > 1e-9 * m || fabs(cimag(z[i]) - wi) > 1e-9 * m;
        re += wr;
        im += wi;
    }
    bad += fabs(creal(dsum) - re) > 1e-9 * fabs(re) || fabs(cimag(dsum) - im) > 1e-9 * fabs(im);
    bad += crealf(fsum) != 2.0f * n;
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(z);
    free(f);
    return bad != 0;
}
