// EXPECT: 6: 'for' needs an enclosing 'parallel'
/* A worksharing for directly inside target, with no parallel region. */
void f(int n, double *a)
{
    #pragma omp target map(tofrom: a[0:n])
    #pragma omp for
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
