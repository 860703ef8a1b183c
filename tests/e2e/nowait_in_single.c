/* target nowait regions made inside `parallel` + `single`, ordered with host
 * tasks through depend(out: y): the barrier that ends the single waits for
 * them (OpenMP's rule; libgomp's barrier does not know the runtime's deferred
 * regions, so macc waits at the end of the construct), and host tasks and
 * regions with dependences on y are ordered both ways. */
#include <stdio.h>

int main(void)
{
    int y = 0;
#pragma omp parallel shared(y)
#pragma omp single
    for (int i = 0; i < 16; ++i) {
#pragma omp target nowait map(tofrom: y) depend(out: y)
        ++y;
#pragma omp task depend(out: y) shared(y)
        ++y;
#pragma omp target nowait map(tofrom: y) depend(out: y)
        ++y;
    }
    if (y != 48) {
        printf("FAIL: y = %d (want 48)\n", y);
        return 1;
    }
    printf("nowait_in_single: ok\n");
    return 0;
}
