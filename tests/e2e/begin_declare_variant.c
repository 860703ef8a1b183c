/* begin declare variant ... end declare variant (OpenMP 5.1): functions
 * defined between the lines are variants of the function of the same name,
 * for the context the match clause says: the base outside, the parallel
 * variant in a parallel region, the target variant in target regions (on
 * the GPU and in the host fallback alike). Prints PASS or FAIL. */
#include <stdio.h>

#define N 64

static int arr[N];

static void add(int *a)
{
    for (int i = 0; i < N; i++)
        a[i] = i + 1;
}

static int scale(int x)
{
    return x;
}

#pragma omp begin declare variant match(construct={parallel}) /* a comment */
static void add(int *a)
{
    #pragma omp for
    for (int i = 0; i < N; i++)
        a[i] = i + 2;
}
#pragma omp end declare variant

#pragma omp begin declare variant match(construct={target})
static void add(int *a)
{
    for (int i = 0; i < N; i++)
        a[i] = i + 3;
}

static int scale(int x)
{
    return 10 * x;
}
#pragma omp end declare variant

int main(void)
{
    int errors = 0, s = 0;
    add(arr);
    for (int i = 0; i < N; i++)
        errors += arr[i] != i + 1;
    #pragma omp parallel
    add(arr);
    for (int i = 0; i < N; i++)
        errors += arr[i] != i + 2;
    #pragma omp target map(tofrom: arr, s)
    {
        add(arr);
        s = scale(4);
    }
    for (int i = 0; i < N; i++)
        errors += arr[i] != i + 3;
    errors += s != 40 || scale(4) != 4;
    printf("%s\n", errors ? "FAIL" : "PASS");
    return errors != 0;
}
