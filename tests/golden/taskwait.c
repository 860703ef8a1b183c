/* taskwait after deferred tasks, twice in one function. */
void two_phases(int n, int bs, float *a, float *b)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target teams distribute parallel for map(from: a[k:bs]) nowait
        for (int i = k; i < k + bs; i++)
            a[i] = 1.0f;
    }
    #pragma omp taskwait

    for (int k = 0; k < n; k += bs) {
        #pragma omp target teams distribute parallel for map(to: a[k:bs]) map(from: b[k:bs]) nowait
        for (int i = k; i < k + bs; i++)
            b[i] = a[i] + 1.0f;
    }
    #pragma omp taskwait
}
