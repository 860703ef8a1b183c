/* target followed by a loop directive on its own line: parallel for with a
 * reduction and an if, parallel + for (collapse), parallel for simd, simd,
 * loop; target data around target + teams distribute parallel for. */
float nested_parallel(int n, int m, float *a, const float *b)
{
    float s = 0.0f;
    #pragma omp target map(to: b[0:n]) map(tofrom: s)
    #pragma omp parallel for reduction(+: s) if(n > 1000)
    for (int i = 0; i < n; i++)
        s += b[i];

    #pragma omp target map(tofrom: a[0:n * m])
    #pragma omp parallel num_threads(32)
    #pragma omp for collapse(2) nowait
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            a[i * m + j] = i + j;

    #pragma omp target map(tofrom: a[0:n])
    #pragma omp parallel for simd
    for (int i = 0; i < n; i++)
        a[i] += s;

    #pragma omp target map(tofrom: a[0:n])
    #pragma omp simd safelen(4)
    for (int i = 4; i < n; i++)
        a[i] += a[i - 4];

    #pragma omp target map(tofrom: a[0:n])
    #pragma omp loop
    for (int i = 0; i < n; i++)
        a[i] *= 0.5f;

    #pragma omp target data map(tofrom: a[0:n]) map(to: b[0:n])
    {
        #pragma omp target
        #pragma omp teams distribute parallel for
        for (int i = 0; i < n; i++)
            a[i] -= b[i];
    }
    return s;
}
