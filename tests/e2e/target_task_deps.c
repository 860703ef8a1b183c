/* A deferred target region with a dependence, then a host OpenMP task that
 * depends on it (target nowait depend(out: a); task depend(in: a)): the task
 * sees the region's result; taskwait waits for both kinds of tasks. */
#include <stdio.h>

int main(void)
{
    int bad = 0;
    for (int rep = 0; rep < 20; rep++) {
        int a = 0, sum = 0, seen = -1;
        #pragma omp target map(tofrom: a, sum) depend(out: a) nowait
        {
            for (int i = 0; i < 100000; i++)
                sum += i % 3;
            a = 1;
        }
        #pragma omp task depend(in: a) shared(a, seen)
        seen = a;
        #pragma omp taskwait
        bad += seen != 1 || a != 1 || sum != 99999;
    }
    if (bad) {
        printf("FAIL: %d\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
