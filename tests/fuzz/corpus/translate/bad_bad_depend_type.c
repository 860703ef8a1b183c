// EXPECT: 5: depend
/* A dependence type that does not exist. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n]) depend(read: a[0:n]) nowait
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
    #pragma omp taskwait
}
