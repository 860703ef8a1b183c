// EXPECT: 9: syntax error
/* A missing parenthesis inside a region's body. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for
    #pragma omp if_device(host) parallel for
    for (int i = 0; i < n; i++) {
        if (a[i] > 0.0 a[i] = 0.0;
    }
}
