// EXPECT: 10: 'log_it' is declare target device_type(host): it cannot be called on the GPU
/* A device_type(host) function has no device version: a region cannot call it. */
int log_it(int v) { return v; }
#pragma omp declare target to(log_it) device_type(host)

void f(int n, int *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] = log_it(i);
}
