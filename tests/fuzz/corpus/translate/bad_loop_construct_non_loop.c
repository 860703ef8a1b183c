// EXPECT: 5: for loop
/* A loop construct-set on a compound statement. */
void f(int n, double *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    {
        for (int i = 0; i < n; i++)
            a[i] += 1.0;
    }
}
