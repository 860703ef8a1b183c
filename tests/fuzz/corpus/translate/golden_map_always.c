/* The always modifier, with each direction, inside a data region where the
 * data is already present. */
void refresh(int n, float *a, float *b)
{
    #pragma omp target data map(tofrom: a[0:n], b[0:n])
    {
        #pragma omp target teams distribute parallel for map(always, to: a[0:n]) map(always, from: b[0:n])
        for (int i = 0; i < n; i++)
            b[i] = a[i] + 1.0f;

        #pragma omp target teams distribute parallel for map(always, tofrom: a[0:n])
        for (int i = 0; i < n; i++)
            a[i] = -a[i];
    }
}
