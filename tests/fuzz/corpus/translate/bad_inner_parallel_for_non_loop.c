// EXPECT: 8: for loop
/* An inner parallel for, inside a compound region body, on a non-loop. */
void f(int n, double *a)
{
    #pragma omp target map(tofrom: a[0:n])
    {
        int half = n / 2;
        #pragma omp parallel for
        a[half] = 0.0;
    }
}
