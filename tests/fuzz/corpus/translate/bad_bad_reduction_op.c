// EXPECT: 6: reduction
/* A reduction operator that does not exist. */
double f(int n, const double *a)
{
    double s = 1.0;
    #pragma omp target teams distribute parallel for reduction(/: s) map(to: a[0:n])
    for (int i = 0; i < n; i++)
        s /= a[i];
    return s;
}
