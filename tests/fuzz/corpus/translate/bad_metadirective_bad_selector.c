// EXPECT: 6: metadirective
/* A metadirective with an unknown context selector set. */
void f(int n, double *a)
{
    #pragma omp target device(any) map(tofrom: a[0:n])
    #pragma omp metadirective when(hardware={kind(gpu)}: teams distribute parallel for) default(parallel for)
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
