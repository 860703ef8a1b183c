// EXPECT: 6: duplicate clause 'thread_limit'
/* thread_limit on target and on the teams nested in it. */
void f(int n, double *a)
{
    #pragma omp target thread_limit(64) map(tofrom: a[0:n])
    #pragma omp teams thread_limit(128)
    #pragma omp distribute parallel for
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
