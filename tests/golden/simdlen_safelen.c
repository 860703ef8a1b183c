/* simdlen and safelen on simd construct-sets. */
void shift_add(int n, float *x)
{
    #pragma omp target parallel for simd simdlen(8) map(tofrom: x[0:n])
    for (int i = 0; i < n; i++)
        x[i] = x[i] * 2.0f;

    #pragma omp target simd safelen(4) map(tofrom: x[0:n])
    for (int i = 4; i < n; i++)
        x[i] = x[i - 4] + 1.0f;
}
