// MACC_FLAGS: -Wno-maybe-uninitialized
/* linear on GPU loops: in iteration k a linear variable starts as its value
 * before the loop plus k times the step (a literal, an expression of host
 * variables, 5.2's step() modifier), whatever thread runs it; after
 * the loop it holds the last iteration's value (the body steps it, as
 * OpenMP's linear asks). Also firstprivate and
 * lastprivate on one variable: every thread starts from the value before the
 * loop, even while the last iteration's thread writes it back. Prints PASS or
 * FAIL. */
#include <stdio.h>
#include <stdlib.h>

#define N 100000

int main(void)
{
    int errors = 0;
    int *A = malloc(sizeof(int) * N);
    long *B = malloc(sizeof(long) * N);
    double *C = malloc(sizeof(double) * N);
    int val = 0;
    #pragma omp target data map(tofrom: A[0:N], val)
    {
        #pragma omp target parallel for linear(val:2)
        for (int i = 0; i < N; ++i) {
            val += 2;
            A[i] = val;
        }
    }
    for (int i = 0; i < N; i++)
        errors += A[i] != (i + 1) * 2;
    errors += val != 2 * N;

    /* a step computed from host variables, a collapsed nest (GCC's own
     * OpenMP lowering of collapse + linear warns "'.count' may be used
     * uninitialized" on this loop, in the host version as on the source) */
    long j = 7;
    int s = 3, m = 200, n = N / 200;
    #pragma omp target parallel for collapse(2) linear(j: s * 2) map(from: B[0:N])
    for (int a = 0; a < m; a++)
        for (int b = 0; b < n; b++)
        {
            B[a * n + b] = j;
            j += s * 2;
        }
    for (int i = 0; i < N; i++)
        errors += B[i] != 7 + 6L * i;
    errors += j != 7 + 6L * N;

    /* OpenMP 5.2's form, simd */
    long x = 5, y = -1;
    #pragma omp target parallel for simd linear(x: step(3)) linear(y: -2) map(tofrom: C[0:N])
    for (int i = 0; i < N; i++)
    {
        C[i] = x + y;
        x += 3;
        y -= 2;
    }
    for (int i = 0; i < N; i++)
        errors += C[i] != 5 + 3 * i - 1 - 2 * i;
    errors += x != 5 + 3L * N || y != -1 - 2L * N;

    /* firstprivate + lastprivate: threads start from the value before the
     * loop while the last iteration's thread writes its value back */
    int t = 42;
    #pragma omp target parallel for firstprivate(t) lastprivate(t) map(from: A[0:N])
    for (int i = 0; i < N; i++) {
        A[i] = t;
        if (i == N - 1)
            t = -t;
    }
    for (int i = 0; i < N; i++)
        errors += A[i] != 42;
    errors += t != -42;

    free(A);
    free(B);
    free(C);
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
