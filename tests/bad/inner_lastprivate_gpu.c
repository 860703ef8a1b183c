// EXPECT: 9: lastprivate on a loop directive inside the region
/* lastprivate on a worksharing loop inside target parallel: the GPU version
 * does not support it. */
void f(int n, double *a, int *out)
{
    int last = 0;
    #pragma omp target parallel map(tofrom: a[0:n], out[0:1])
    {
        #pragma omp for lastprivate(last)
        for (int i = 0; i < n; i++)
            last = i;
        out[0] = last;
    }
}
