/* The construct-sets with simd: teams distribute parallel for simd,
 * teams distribute simd, distribute parallel for simd, parallel for simd. */
void simd_variants(int n, float *x, const float *y)
{
    #pragma omp target teams distribute parallel for simd map(tofrom: x[0:n]) map(to: y[0:n])
    for (int i = 0; i < n; i++)
        x[i] += y[i];

    #pragma omp target teams distribute simd map(tofrom: x[0:n])
    for (int i = 0; i < n; i++)
        x[i] *= 2.0f;

    #pragma omp target device(any) distribute parallel for simd map(tofrom: x[0:n])
    for (int i = 0; i < n; i++)
        x[i] -= 1.0f;

    #pragma omp target parallel for simd map(tofrom: x[0:n]) map(to: y[0:n])
    for (int i = 0; i < n; i++)
        x[i] = x[i] > y[i] ? x[i] : y[i];
}
