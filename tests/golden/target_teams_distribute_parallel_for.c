/* target teams distribute parallel for: the combined construct-set on the
 * target line, no device clause (OpenMP's default device). */
void vadd(int n, const float *a, const float *b, float *c)
{
    #pragma omp target teams distribute parallel for map(to: a[0:n], b[0:n]) map(from: c[0:n])
    for (int i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

void vadd_twice(int n, const float *a, float *c)
{
    vadd(n, a, a, c);
}
