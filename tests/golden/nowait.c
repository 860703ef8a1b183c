/* nowait tasks, one per block, then taskwait. */
void blocks(int n, int bs, double *v)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target device(any) teams distribute parallel for map(tofrom: v[k:bs]) nowait
        for (int i = k; i < k + bs; i++)
            v[i] += 1.0;
    }
    #pragma omp taskwait
}
