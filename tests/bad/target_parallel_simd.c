// EXPECT: 5: expected 'for' or 'loop' after 'parallel'
/* parallel simd is not a construct-set. */
void f(int n, double *a)
{
    #pragma omp target parallel simd map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
