/* target parallel for, with a long loop variable, a <= bound and a
 * decrementing loop. */
void square(long n, double *v)
{
    #pragma omp target parallel for map(tofrom: v[0:n])
    for (long i = 0; i < n; i++)
        v[i] = v[i] * v[i];

    #pragma omp target parallel for map(tofrom: v[0:n])
    for (long i = 1; i <= n - 1; i += 2)
        v[i] = -v[i];

    #pragma omp target parallel for map(tofrom: v[0:n])
    for (long i = n - 1; i >= 0; i--)
        v[i] += 1.0;
}
