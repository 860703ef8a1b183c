/* main.c: a program of three files whose device code links across them
 * (relocatable device code): main's kernels call lib.c's scale, which calls
 * util.c's offset; factor and counter have one device copy that every file's
 * kernels, `target update` and maps reach; weights is util.c's declare target
 * link array, mapped here. Prints PASS or FAIL. */
#include <omp.h>
#include <stdio.h>

#include "multi.h"

extern double weights[4];
#pragma omp declare target link(weights)

int main(void)
{
    int bad = 0;
    double a[N];
    /* another file's device function, which calls a third file's */
    #pragma omp target teams distribute parallel for map(from: a[0:N])
    for (int i = 0; i < N; i++)
        a[i] = scale(i);
    for (int i = 0; i < N; i++)
        if (a[i] != 3.5 * i && bad++ < 3)
            printf("a[%d] = %g, want %g\n", i, a[i], 3.5 * i);
    /* one copy of factor: set here, seen by main's kernels and lib.c's */
    factor = 2.0;
    #pragma omp target update to(factor)
    #pragma omp target teams distribute parallel for map(from: a[0:N])
    for (int i = 0; i < N; i++)
        a[i] = scale(i);
    for (int i = 0; i < N; i++)
        if (a[i] != 2.5 * i && bad++ < 3)
            printf("after update: a[%d] = %g, want %g\n", i, a[i], 2.5 * i);
    double s = lib_sum_scaled(N), want = 2.5 * (N - 1) * N / 2.0;
    if (s != want && bad++ < 3)
        printf("lib.c's region: sum %g, want %g\n", s, want);
    /* one copy of counter: written by main's kernel, read by lib.c's region */
    int on_host = 1;
    #pragma omp target map(from: on_host)
    {
        counter = 42;
        on_host = omp_is_initial_device();
    }
    int c = lib_read_counter();
    if (c != 42 && bad++ < 3)
        printf("lib.c's region read counter %d, want 42\n", c);
    if (!on_host) /* the host's counter is not the device's */
        counter = 0;
    #pragma omp target update from(counter)
    if (counter != 42 && bad++ < 3)
        printf("target update from(counter): %d, want 42\n", counter);
    /* util.c's link array, mapped by main's region */
    double w = 0.0;
    #pragma omp target map(to: weights) map(from: w)
    w = weights[0] + weights[1] + weights[2] + weights[3];
    if (w != 10.0 && bad++ < 3)
        printf("weights sum %g, want 10\n", w);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
