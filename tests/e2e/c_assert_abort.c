/* assert and abort in functions that a region calls: C's assert expands to
 * glibc's __assert_fail, which CUDA declares for the device; abort traps. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

static double half(double x)
{
    assert(x >= 0);
    if (x > 1e30)
        abort();
    return x / 2;
}

int main(void)
{
    double a[64];
    #pragma omp target teams distribute parallel for map(from: a[0:64])
    for (int i = 0; i < 64; i++)
        a[i] = half(i);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += a[i] != i / 2.0;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
