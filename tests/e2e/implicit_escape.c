/* Implicit maps of arrays and structs whose address a target region hands
 * on: passed to a function, stored in a pointer, &a[i], &s. They may be
 * written through it, so they map tofrom (OpenMP's implicit map of
 * aggregates); a scalar stays firstprivate even when its address is taken
 * (the writes stay in the region, as OpenMP says). Prints PASS or FAIL. */
#include <stdio.h>

#define N 256

typedef struct {
    int count;
    double total;
} Acc;

#pragma omp declare target
static void fill(int *a, int n, int k)
{
    for (int i = 0; i < n; i++)
        a[i] = k * i;
}
static void add(Acc *acc, double v)
{
    acc->count++;
    acc->total += v;
}
static void set(int *x)
{
    *x = 99;
}
#pragma omp end declare target

int main(void)
{
    int A[N], B[N], C[N], x = 1, errors = 0;
    int *p = NULL;
    Acc s = {0, 0.0};
    for (int i = 0; i < N; i++)
        A[i] = B[i] = C[i] = -1;
    #pragma omp target
    {
        fill(A, N, 2);
        p = &B[0];
        for (int i = 0; i < N; i++)
            p[i] = 3 * i;
        int *q = C + 1;
        q[0] = 7;
        add(&s, 1.5);
        add(&s, 2.5);
        set(&x);
    }
    for (int i = 0; i < N; i++) {
        errors += A[i] != 2 * i;
        errors += B[i] != 3 * i;
        errors += C[i] != (i == 1 ? 7 : -1);
    }
    errors += s.count != 2 || s.total != 4.0;
    errors += x != 1;
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
