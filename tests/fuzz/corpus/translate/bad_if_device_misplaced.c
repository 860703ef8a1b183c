// EXPECT: 7: if_device
/* if_device not directly after a target line: a statement comes between. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    a[0] = 1.0;
    #pragma omp if_device(host) parallel for resources(40)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
