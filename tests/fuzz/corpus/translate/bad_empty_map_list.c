// EXPECT: 5: expected
/* An empty list after the map type. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(to:) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
