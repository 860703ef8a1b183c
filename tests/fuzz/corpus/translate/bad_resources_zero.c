// EXPECT: 7: resources
/* resources(0): a device has 100 tokens, a task must hold 1 to 100. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for resources(2)
    #pragma omp if_device(host) parallel for resources(0)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
