// EXPECT: 9: '#pragma omp critical' has no statement after it
/* A critical directive at the end of a block: nothing to protect. */
void f(int n, int *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++) {
        a[i] += 1;
        int k = i;
        #pragma omp critical
    }
}
