// EXPECT: 5: expected
/* Unbalanced parentheses in a directive. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n]
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
