/* OpenMP memory allocators inside target regions: omp_alloc, omp_calloc,
 * omp_aligned_alloc, omp_realloc and omp_free with the predefined
 * allocators (on the GPU from the device heap), one block per team, and an
 * allocate directive for a region's own variable. Prints PASS or FAIL. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#define N 256
#define T 8

int main(void)
{
    int errors = 0;
    long sums[T];
    for (int t = 0; t < T; t++)
        sums[t] = -1;
    #pragma omp target teams num_teams(T) map(tofrom: sums, errors) uses_allocators(omp_default_mem_alloc)
    {
        int t = omp_get_team_num();
        int *z = (int *)omp_calloc(N, sizeof(int), omp_default_mem_alloc);
        double *a = (double *)omp_aligned_alloc(128, N * sizeof(double), omp_high_bw_mem_alloc);
        int local[4];
        #pragma omp allocate(local) allocator(omp_thread_mem_alloc)
        long s = 0;
        if (!z || !a || ((uintptr_t)a) % 128 != 0) {
            #pragma omp atomic
            errors += 1;
        } else {
            for (int i = 0; i < N; i++) {
                s += z[i]; /* zeros */
                a[i] = i + t;
            }
            for (int k = 0; k < 4; k++)
                local[k] = k;
            z = (int *)omp_realloc(z, 2 * N * sizeof(int), omp_default_mem_alloc, omp_default_mem_alloc);
            for (int i = 0; i < N; i++)
                s += z[i] == 0 ? (long)a[i] : 1000000; /* realloc kept the zeros */
            s += local[3];
            omp_free(z, omp_default_mem_alloc);
            omp_free(a, omp_high_bw_mem_alloc);
        }
        if (t < T)
            sums[t] = s;
    }
    int teams = 0;
    for (int t = 0; t < T; t++) {
        if (sums[t] == -1)
            continue; /* fewer teams */
        teams++;
        errors += sums[t] != (long)N * (N - 1) / 2 + (long)N * t + 3;
    }
    errors += teams < 1;
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
