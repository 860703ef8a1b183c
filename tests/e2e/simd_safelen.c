/* `target simd safelen(n)` over loops whose iterations n apart depend on each
 * other (A[i-n] += A[i] reads what iteration i+n later writes): at most n
 * iterations at a time, in order. On the GPU the loop runs in steps of n
 * threads with a barrier after each; the result must be the sequential one.
 * Prints PASS or FAIL. */
#include <stdio.h>

#define N 1024

static int A[N], B[N];

static void run_host(int n)
{
    for (int i = n; i < N; i++)
        B[i - n] += B[i];
}

int main(void)
{
    for (int i = 0; i < N; i++)
        A[i] = B[i] = i % 7 + 1;
    #pragma omp target simd safelen(1) map(tofrom: A[0:N])
    for (int i = 1; i < N; i++)
        A[i - 1] += A[i];
    run_host(1);
    #pragma omp target simd safelen(5) map(tofrom: A[0:N])
    for (int i = 5; i < N; i++)
        A[i - 5] += A[i];
    run_host(5);
    #pragma omp target simd safelen(16) map(tofrom: A[0:N])
    for (int i = 16; i < N; i++)
        A[i - 16] += A[i];
    run_host(16);
    #pragma omp target simd safelen(100) map(tofrom: A[0:N])
    for (int i = 100; i < N; i++)
        A[i - 100] += A[i];
    run_host(100);
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (A[i] != B[i] && bad++ < 3)
            printf("A[%d] = %d, want %d\n", i, A[i], B[i]);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
