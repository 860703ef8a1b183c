// EXPECT: 8: the statement after '#pragma omp atomic capture' must be
/* An atomic capture block that does not read the variable it updates. */
void f(int n, int *a)
{
    int x = 0, y = 0, v;
    #pragma omp target teams distribute parallel for map(tofrom: x, y) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        #pragma omp atomic capture
        { v = y; x += a[i]; }
        (void)v;
    }
}
