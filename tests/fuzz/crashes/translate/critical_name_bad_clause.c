void f(int n, int *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++) {
        #pragma omp critical (name) bogus
        a[0] += 1;
    }
}
