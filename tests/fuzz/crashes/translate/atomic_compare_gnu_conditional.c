void f(int n, int *a)
{
    int x = 0;
    #pragma omp target teams distribute parallel for map(tofrom: x) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        #pragma omp atomic compare
        x = x == a[i] ?: x;
    }
}
