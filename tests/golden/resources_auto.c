/* resources(auto): the runtime learns each device's throughput. */
void relax(int n, int bs, double *v)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target device(any) map(tofrom: v[k:bs]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for resources(auto)
        #pragma omp if_device(host) parallel for resources(auto)
        for (int i = k; i < k + bs; i++)
            v[i] = 0.5 * (v[i] + 1.0);
    }
    #pragma omp taskwait
}
