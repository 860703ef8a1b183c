/* use_device_ptr, use_device_addr, is_device_ptr, has_device_addr and
 * device(expr) on data constructs. */
#include <omp.h>
#include <stddef.h>

void vendor_scale(double *dev, int n); /* e.g. a CUDA library call */

void scale(double *x, int n, int dev)
{
    #pragma omp target data map(tofrom: x[0:n]) use_device_ptr(x) device(dev)
    {
        vendor_scale(x, n);
        #pragma omp target teams distribute parallel for is_device_ptr(x) device(dev)
        for (int i = 0; i < n; i++)
            x[i] *= 2.0;
    }
}

double addresses(double *out)
{
    double s = 1.5;
    double a[16];
    #pragma omp target enter data map(to: s, a)
    #pragma omp target data use_device_addr(s, a)
    {
        out[0] = (double)(size_t)&s;
        out[1] = (double)(size_t)&a[0];
        #pragma omp target update from(out[0:2])
    }
    #pragma omp target data use_device_addr(s, a)
    #pragma omp target has_device_addr(s, a)
    {
        s += a[0];
    }
    #pragma omp target exit data map(from: s, a) device(omp_get_initial_device())
    return s;
}
