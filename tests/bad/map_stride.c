// EXPECT: 5: strides are supported only in 'target update'
/* A strided array section in a map clause. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n:2])
    for (int i = 0; i < n; i += 2)
        a[i] += 1.0;
}
