// EXPECT: 6: if_device
/* if_device after a target data line, not a target line. */
void f(int n, double *a)
{
    #pragma omp target data map(tofrom: a[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
}
