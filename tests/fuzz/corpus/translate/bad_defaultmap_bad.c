// EXPECT: 6: defaultmap(sometimes: scalar): expected defaultmap(
/* An implicit behaviour that defaultmap does not have. */
void f(int n, double *a)
{
    int s = 0;
    #pragma omp target defaultmap(sometimes: scalar) map(tofrom: a[0:n])
    s = (int)a[0];
    (void)s;
}
