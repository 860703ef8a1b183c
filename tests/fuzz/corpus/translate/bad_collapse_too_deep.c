// EXPECT: 5: collapse
/* collapse(3) over a nest of only two loops. */
void f(int n, int m, double *a)
{
    #pragma omp target teams distribute parallel for collapse(3) map(tofrom: a[0:n*m])
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            a[i * m + j] = i + j;
}
