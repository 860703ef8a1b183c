/* if(expr) on target: if(0), a false run-time condition, if(target: 1), and
 * a false condition on a deferred device(any) task. A region whose if is
 * false runs on the host; its maps still give the results back. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 500;
    int *a = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        a[i] = i;

    #pragma omp target teams distribute parallel for if(0) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1;

    int big = n > 1000000;
    if (big)
        return 1;
    #pragma omp target teams distribute parallel for if(big) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] *= 2;

    #pragma omp target teams distribute parallel for if(target: n > 10) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 3;

    #pragma omp target device(any) map(tofrom: a[0:n]) if(n < 0) nowait
    #pragma omp if_device(nvidia) teams distribute parallel for
    #pragma omp if_device(host) parallel for
    for (int i = 0; i < n; i++)
        a[i] -= 1;
    #pragma omp taskwait

    for (int i = 0; i < n; i++)
        if (a[i] != (i + 1) * 2 + 3 - 1) {
            printf("FAIL: a[%d] = %d, want %d\n", i, a[i], (i + 1) * 2 + 2);
            return 1;
        }
    free(a);
    printf("PASS\n");
    return 0;
}
