// EXPECT: 5: unknown clause
/* A clause that does not exist. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n]) frobnicate(3)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
