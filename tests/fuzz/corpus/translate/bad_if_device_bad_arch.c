// EXPECT: 6: architecture
/* An if_device architecture that does not exist. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp if_device(amdgpu) teams distribute parallel for resources(10)
    #pragma omp if_device(host) parallel for resources(40)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
