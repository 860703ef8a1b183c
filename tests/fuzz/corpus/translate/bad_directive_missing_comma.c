// EXPECT: 5: expected
/* Malformed directive: two list items without a comma between them. */
void f(int n, double *a, double *b)
{
    #pragma omp target teams distribute parallel for map(to: a[0:n] b[0:n])
    for (int i = 0; i < n; i++)
        a[i] += b[i];
}
