// EXPECT: 7: 'distribute' needs a for loop as the next statement
/* The nested loop directive annotates a block, not a for loop. */
void f(int n, double *a)
{
    #pragma omp target map(tofrom: a[0:n])
    #pragma omp teams
    #pragma omp distribute parallel for
    {
        for (int i = 0; i < n; i++)
            a[i] += 1.0;
    }
}
