// EXPECT: 8: syntax error
/* A C syntax error inside a region's body. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++) {
        double t = a[i];
        a[i] = t * ;
    }
}
