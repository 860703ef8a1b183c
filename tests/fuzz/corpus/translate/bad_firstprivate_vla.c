// EXPECT: 8: firstprivate array 'w' has a variable length
/* A firstprivate array whose size is known only at run time. */
void f(int n, int m, double *a)
{
    double w[m];
    for (int k = 0; k < m; k++)
        w[k] = k;
    #pragma omp target teams distribute parallel for firstprivate(w) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += w[i % m];
}
