/* OpenACC parallel loops whose scalars, declared outside the loop, every
 * iteration writes before it reads them: private to each iteration, as
 * NVHPC finds them (no race warning: the e2e build fails on warnings), on a
 * combined construct and on an acc loop inside acc parallel; right with any
 * number of host threads and on the GPU. */
#include <stdio.h>

int main(void)
{
    int n = 1 << 18;
    double energy = 0, x, y, r2;
    long inside = 0;
    int q;
    #pragma acc parallel loop reduction(+: energy, inside)
    for (int i = 0; i < n; i++) {
        q = i % 101;
        x = (q - 50) / 50.0;
        y = ((i / 101) % 101 - 50) / 50.0;
        r2 = x * x + y * y;
        energy += r2 * q;
        inside += r2 <= 1.0;
    }
    double sum = 0;
    int m;
    #pragma acc parallel
    {
        #pragma acc loop reduction(+: sum)
        for (int i = 0; i < n; i++) {
            m = i & 15;
            sum += m * 0.25;
        }
    }
    double e_ref = 0, s_ref = 0;
    long in_ref = 0;
    for (int i = 0; i < n; i++) {
        int qq = i % 101;
        double xx = (qq - 50) / 50.0, yy = ((i / 101) % 101 - 50) / 50.0, rr = xx * xx + yy * yy;
        e_ref += rr * qq;
        in_ref += rr <= 1.0;
        s_ref += (i & 15) * 0.25;
    }
    int ok = inside == in_ref && sum == s_ref && (energy - e_ref < 1e-6 * e_ref && e_ref - energy < 1e-6 * e_ref);
    printf("%s (%ld %ld, %g %g, %g %g)\n", ok ? "PASS" : "FAIL", inside, in_ref, sum, s_ref, energy, e_ref);
    return !ok;
}
