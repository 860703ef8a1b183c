// EXPECT: 6: 'dst'
/* A pointer parameter used in a region without a map (src is mapped). */
void copy(int n, const float *src, float *dst)
{
    int m = n / 2;
    #pragma omp target device(any) teams distribute parallel for map(to: src[0:n])
    for (int i = 0; i < m; i++)
        dst[i] = src[2 * i];
}
