// EXPECT: 6: 'scale' is used in the target region but no data-sharing or map clause names it
/* defaultmap(none): every variable the region uses must be named. */
void f(int n, double *a)
{
    double scale = 2.0;
    #pragma omp target teams distribute parallel for defaultmap(none) map(tofrom: a[0:n]) firstprivate(n)
    for (int i = 0; i < n; i++)
        a[i] *= scale;
}
