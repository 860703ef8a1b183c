/* #pragma omp allocate (OpenMP 5.0) of local variables: an array with the
 * default allocator, a pointer and a variable-length array from an allocator
 * with a 64-byte alignment trait, align(128) (5.1), an initialised scalar
 * (its value carries over), sizeof of an allocated array, a parallel loop
 * writing one, and a function that returns from inside the scope (the
 * storage is freed as the block is left). Prints PASS or FAIL. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#define N 1000

static int sum_to(int n, int stop)
{
    int acc[N];
    #pragma omp allocate(acc)
    int total = 0;
    for (int i = 0; i < n; i++) {
        acc[i] = i;
        if (i == stop)
            return -1; /* leaves the scope early */
        total += acc[i];
    }
    return total;
}

int main(void)
{
    int errors = 0, n = N;
    omp_alloctrait_t traits[1] = {{omp_atk_alignment, 64}};
    omp_allocator_handle_t al = omp_init_allocator(omp_default_mem_space, 1, traits);
    {
        int *p, v[n];
        double w[16];
        long start = 42;
        #pragma omp allocate(p, v) allocator(al)
        #pragma omp allocate(w) align(128)
        #pragma omp allocate(start)
        errors += ((uintptr_t)&p) % 64 != 0;
        errors += ((uintptr_t)&v) % 64 != 0;
        errors += ((uintptr_t)&w) % 128 != 0;
        errors += start != 42;
        errors += sizeof v != N * sizeof(int) || sizeof w != 16 * sizeof(double);
        p = v;
        #pragma omp parallel for
        for (int i = 0; i < n; i++)
            p[i] = 2 * i;
        for (int i = 0; i < n; i++)
            errors += v[i] != 2 * i;
        for (int i = 0; i < 16; i++)
            w[i] = i + start;
        errors += w[15] != 57.0;
    }
    omp_destroy_allocator(al);
    errors += sum_to(10, -1) != 45;
    errors += sum_to(10, 3) != -1;
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
