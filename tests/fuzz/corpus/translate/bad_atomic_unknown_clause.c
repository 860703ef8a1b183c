// EXPECT: 8: unknown clause 'sometimes' on '#pragma omp atomic'
/* An atomic with a clause OpenMP does not have. */
void f(int n, int *a)
{
    int x = 0;
    #pragma omp target teams distribute parallel for map(tofrom: x) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        #pragma omp atomic sometimes
        x += a[i];
    }
}
