// EXPECT: 8: 'parallel' directive has no statement after it
/* A parallel directive at the end of a region's block. */
void f(int n, double *a)
{
    #pragma omp target map(tofrom: a[0:n])
    {
        a[0] = 1.0;
        #pragma omp parallel
    }
}
