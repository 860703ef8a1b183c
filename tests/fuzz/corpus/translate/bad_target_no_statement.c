// EXPECT: 8: no statement
/* A target directive at the end of a block, with no statement after it. */
void f(int n, double *a)
{
    if (n > 0) {
        for (int i = 0; i < n; i++)
            a[i] = 0.0;
        #pragma omp target map(tofrom: a[0:n])
    }
}
