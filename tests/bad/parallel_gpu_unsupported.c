// EXPECT: 10: is not supported here in the GPU version of a parallel region
/* A task inside target parallel: its GPU version cannot run it, and device(nvidia)
 * asks for one (without it, the region runs on the host with a warning). */
void g(double *a);
void f(int n, double *a)
{
    #pragma omp target parallel device(nvidia) map(tofrom: a[0:n])
    {
        #pragma omp single
        #pragma omp task
        g(a);
    }
}
