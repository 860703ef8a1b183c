/* target update to(...) and from(...), a whole array and a part. */
void refresh(int n, double *a)
{
    #pragma omp target enter data map(to: a[0:n])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        a[i] *= 2.0;
    #pragma omp target update from(a[0:n])
    a[0] = 1.0;
    #pragma omp target update to(a[0:1])
    #pragma omp target update from(a[n/2:n-n/2])
    #pragma omp target exit data map(release: a[0:n])
}
