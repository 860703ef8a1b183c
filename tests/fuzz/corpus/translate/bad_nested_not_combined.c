// EXPECT: 7: is not a combined construct
/* A parallel for directly inside target teams: each team would run the whole
 * loop; teams needs distribute (or braces around the parallel for). */
void f(int n, double *a)
{
    #pragma omp target teams map(tofrom: a[0:n])
    #pragma omp parallel for
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
