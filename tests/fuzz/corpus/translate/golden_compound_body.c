/* A target region whose body is a compound statement with sequential code and
 * an inner parallel for; another with only a teams construct inside. */
void compound(int n, int *a, int *flag)
{
    #pragma omp target map(tofrom: a[0:n]) map(from: flag[0:1])
    {
        int half = n / 2;
        #pragma omp parallel for
        for (int i = 0; i < half; i++)
            a[i] *= 2;
        flag[0] = a[0] + a[half];
    }

    #pragma omp target device(any) map(tofrom: a[0:n])
    {
        #pragma omp teams distribute parallel for
        for (int i = 0; i < n; i++)
            a[i] -= 1;
    }
}
