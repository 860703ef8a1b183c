/* use_device_ptr and use_device_addr on target data, is_device_ptr and
 * has_device_addr on target: a library that takes device pointers, the
 * device's copies of an array and a scalar. Self-checking; passes host-only
 * and with GPUs. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

static int errors;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        errors++;
    }
}

/* A "library" that works on device memory of device dev. */
static void lib_add_one(double *dev_x, int n, int dev)
{
    #pragma omp target teams distribute parallel for is_device_ptr(dev_x) device(dev)
    for (int i = 0; i < n; i++)
        dev_x[i] += 1;
}

int main(void)
{
    int def = omp_get_default_device(), h = omp_get_initial_device();
    double *x = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++)
        x[i] = i;
    double *orig = x;

    #pragma omp target data map(tofrom: x[0:N]) use_device_ptr(x)
    {
        check(x == omp_get_mapped_ptr(orig, def), "use_device_ptr: the device address");
        check(def == h || x != orig, "use_device_ptr: not the host address on a GPU");
        lib_add_one(x, N, def);
    }
    check(x == orig, "the pointer is itself again after the construct");
    for (int i = 0; i < N; i++)
        if (x[i] != i + 1) {
            check(0, "use_device_ptr: the library's writes are copied back");
            break;
        }
    #pragma omp target data map(to: x[0:N]) use_device_ptr(x) if(0)
    check(x == orig, "use_device_ptr with if(0): the host pointer");

    static double a[64];
    double s = 2;
    for (int i = 0; i < 64; i++)
        a[i] = i;
    #pragma omp target data map(tofrom: a, s)
    {
        double *pa = NULL, *ps = NULL;
        #pragma omp target data use_device_addr(a, s)
        {
            pa = &a[0];
            ps = &s;
        }
        check(pa == omp_get_mapped_ptr(a, def), "use_device_addr: the array's device address");
        check(ps == omp_get_mapped_ptr(&s, def), "use_device_addr: the scalar's device address");
        #pragma omp target data use_device_addr(a)
        #pragma omp target teams distribute parallel for has_device_addr(a)
        for (int i = 0; i < 64; i++)
            a[i] *= 2;
        #pragma omp target data use_device_addr(s)
        #pragma omp target has_device_addr(s)
        s += 1;
        /* a mapped scalar whose address the region takes: the mapped variable
         * itself (on every device), the address use_device_addr gave */
        int same = 0;
        #pragma omp target map(tofrom: same, s) is_device_ptr(ps)
        {
            same = (&s == ps);
            *ps += 1;
        }
        check(same, "a mapped scalar's address in the region is its device address");
        int same2 = 0;
        #pragma omp target data use_device_addr(s)
        #pragma omp target map(tofrom: same2) has_device_addr(s) is_device_ptr(ps)
        same2 = (&s == ps);
        check(same2, "has_device_addr: the scalar's address is its device address");
    }
    for (int i = 0; i < 64; i++)
        if (a[i] != 2.0 * i) {
            check(0, "has_device_addr: the array's device copy");
            break;
        }
    check(s == 4, "has_device_addr: the scalar's device copy");
    free(x);
    if (errors)
        return 1;
    printf("use_device: ok\n");
    return 0;
}
