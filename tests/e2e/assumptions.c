/* OpenMP 5.1 assumptions: assume, assumes, begin/end assumes, also inside
 * a target region. They promise, they change nothing: macc keeps them from
 * the host compiler (GCC 12 does not know them). Prints PASS or FAIL. */
#include <stdio.h>

#define N 100

#pragma omp begin assumes no_openmp_routines
static int twice(int x)
{
    return 2 * x;
}
#pragma omp end assumes

#pragma omp assumes contains(target)

int main(void)
{
    int a[N], errors = 0;
    #pragma omp assume holds(N > 0)
    {
        for (int i = 0; i < N; i++)
            a[i] = i;
    }
    #pragma omp target map(tofrom: a)
    {
        #pragma omp assume no_parallelism
        {
            for (int i = 0; i < N; i++)
                a[i] = twice(a[i]);
        }
    }
    for (int i = 0; i < N; i++)
        errors += a[i] != 2 * i;
    printf("%s\n", errors ? "FAIL" : "PASS");
    return errors != 0;
}
