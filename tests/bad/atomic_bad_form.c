// EXPECT: 8: the statement after '#pragma omp atomic' must be
/* An atomic update whose statement is not one of OpenMP's forms. */
void f(int n, int *a)
{
    int x = 0;
    #pragma omp target teams distribute parallel for map(tofrom: x) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        #pragma omp atomic
        x = a[i];
    }
}
