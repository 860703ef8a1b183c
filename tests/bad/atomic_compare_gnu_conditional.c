// EXPECT: 9: the statement after '#pragma omp atomic compare' must be
/* GNU's conditional with the middle operand left out stores the condition's
 * value: not one of OpenMP's compare forms (it once crashed the translator). */
void f(int n, int *a)
{
    int x = 0;
    #pragma omp target teams distribute parallel for map(tofrom: x) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        #pragma omp atomic compare
        x = x == a[i] ?: x;
    }
}
