// EXPECT: 6: resources
/* resources(101): more than the 100 tokens of a device. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for resources(101)
    #pragma omp if_device(host) parallel for resources(40)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
