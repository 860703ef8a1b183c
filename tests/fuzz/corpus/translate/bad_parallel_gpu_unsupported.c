// EXPECT: 9: is not supported here in the GPU version of a parallel region
/* A task inside target parallel: its GPU version cannot run it. */
void g(double *a);
void f(int n, double *a)
{
    #pragma omp target parallel map(tofrom: a[0:n])
    {
        #pragma omp single
        #pragma omp task
        g(a);
    }
}
