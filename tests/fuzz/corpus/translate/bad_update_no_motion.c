// EXPECT: 7: update
/* target update with no to/from clause. */
void f(int n, double *a)
{
    #pragma omp target enter data map(to: a[0:n])
    a[0] = 2.0;
    #pragma omp target update
    #pragma omp target exit data map(from: a[0:n])
}
