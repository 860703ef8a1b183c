/* target parallel: every thread runs the block; worksharing loops (for with
 * a reduction, for nowait, loop) split iterations; barrier, single, master,
 * critical and atomic; a time-step loop around the worksharing loops; a
 * reduction on the region; target parallel for simd and target parallel loop. */
#include <omp.h>

int target_parallel(int n, int steps, double *a, int *count)
{
    int last = 0;
    double sum = 0.0;
    #pragma omp target parallel map(tofrom: a[0:n], sum, count[0:1]) num_threads(128)
    {
        int me = omp_get_thread_num();
        for (int s = 0; s < steps; s++) {
            #pragma omp for
            for (int i = 0; i < n; i++)
                a[i] += me;
            #pragma omp for reduction(+: sum) nowait
            for (int i = 0; i < n; i++)
                sum += a[i];
            #pragma omp barrier
            #pragma omp single
            last = s;
        }
        #pragma omp loop
        for (int i = 0; i < n; i++)
            a[i] *= 2.0;
        #pragma omp critical
        count[0] += 1;
        #pragma omp atomic
        count[0] += 1;
        #pragma omp master
        a[0] = last;
    }

    int hits = 0;
    #pragma omp target parallel reduction(+: hits)
    {
        hits += omp_get_thread_num() >= 0;
    }

    #pragma omp target parallel for simd map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1.0;

    #pragma omp target parallel loop map(tofrom: a[0:n]) num_threads(64)
    for (int i = 0; i < n; i++)
        a[i] -= 1.0;
    return hits + (int)sum;
}
