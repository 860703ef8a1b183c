// MACC_FLAGS: --targets=host
/* reduction(task, ...) on a parallel region (host version) with tasks that
 * say in_reduction: the task modifier is kept in the host version's pragma
 * (without it, libgomp's in_reduction had no task reduction to join and
 * crashed). The GPU version of a parallel region with tasks is not built
 * (a warning, and the region runs on the host: tests/golden/reduction_task.c
 * shows it), so this test builds host-only. */
#include <stdio.h>

int main(void)
{
    int sum = 0;
    int y[100];
    for (int i = 0; i < 100; i++)
        y[i] = i;
    #pragma omp target parallel reduction(task, +: sum) num_threads(4) map(tofrom: sum) map(to: y)
    {
        #pragma omp master
        for (int i = 0; i < 100; i++) {
            #pragma omp task in_reduction(+: sum)
            sum += y[i];
        }
    }
    printf("check: %s (sum %d, expected 4950)\n", sum == 4950 ? "PASS" : "FAIL", sum);
    return sum == 4950 ? 0 : 1;
}
