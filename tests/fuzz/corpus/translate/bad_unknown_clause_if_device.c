// EXPECT: 6: unknown clause
/* An unknown clause on an if_device line. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp if_device(host) parallel for tokens(40)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
