/* The dispatch construct (OpenMP 5.1) with a variant declared for it
 * (declare variant(v) match(construct={dispatch})): the call goes to the
 * variant unless novariants(e) or nocontext(e) is true; calls outside
 * dispatch go to the base function; the return value of a dispatched call;
 * depend (a taskwait first), device (the default device during the call),
 * nowait and is_device_ptr accepted.
 * Prints PASS or FAIL. */
#include <stdio.h>

static int twice(int x);

#pragma omp declare variant(twice) match(construct={dispatch})
static int base(int x)
{
    return x + 1;
}

static int twice(int x)
{
    return 2 * x;
}

static void fill2(int *a, int n);
#pragma omp declare variant(fill2) match(construct={dispatch})
static void fill3(int *a, int n);

static void fill2(int *a, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = 2;
}

static void fill3(int *a, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = 3;
}

int main(void)
{
    int errors = 0, r = 0, a[8];
    int yes = 1, no = 0;
    errors += base(5) != 6;
    #pragma omp dispatch
    r = base(5);
    errors += r != 10;
    #pragma omp dispatch novariants(yes)
    r = base(5);
    errors += r != 6;
    #pragma omp dispatch novariants(no) nocontext(no)
    r = base(7);
    errors += r != 14;
    #pragma omp dispatch nocontext(yes == 1)
    r = base(7);
    errors += r != 8;
    int dep = 0;
    #pragma omp dispatch depend(inout: dep) device(0) nowait is_device_ptr(a)
    r = base(9);
    errors += r != 18 || dep != 0;
    #pragma omp dispatch
    fill3(a, 8);
    for (int i = 0; i < 8; i++)
        errors += a[i] != 2;
    #pragma omp dispatch novariants(1)
    fill3(a, 8);
    for (int i = 0; i < 8; i++)
        errors += a[i] != 3;
    fill3(a, 8);
    errors += a[0] != 3;
    printf("%s\n", errors ? "FAIL" : "PASS");
    return errors != 0;
}
