// EXPECT: 5: map
/* A map type that does not exist. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(tofro: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
