/* target enter data / exit data with each map type they accept. */
void lifetime(int n, float *a, float *b, float *w)
{
    #pragma omp target enter data map(to: a[0:n]) map(alloc: w[0:n])

    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        w[i] = a[i] * 2.0f;

    #pragma omp target enter data map(to: b[0:n])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        b[i] += w[i];

    #pragma omp target exit data map(from: b[0:n]) map(release: a[0:n])
    #pragma omp target exit data map(delete: w[0:n])
}
