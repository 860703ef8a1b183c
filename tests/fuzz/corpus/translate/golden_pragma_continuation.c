/* Directives continued over several lines with backslash-newline. */
void continued(int n, int bs, double *a, const double *b)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target device(any) \
                map(tofrom: a[k:bs]) \
                map(to: b[k:bs]) nowait
        #pragma omp if_device(nvidia) teams distribute \
                parallel for resources(4)
        #pragma omp if_device(host) parallel for \
                resources(50)
        for (int i = k; i < k + bs; i++)
            a[i] += b[i];
    }
    #pragma omp taskwait
}
