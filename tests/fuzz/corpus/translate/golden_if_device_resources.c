/* if_device lines for nvidia (with a compute capability) and host, each with
 * its own construct-set and resources(N) (seed 003, Figure 2). */
void update(int n, int bs, float *v, const float *f, float dt)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target device(any) map(tofrom: v[k:bs]) map(to: f[k:bs]) nowait
        #pragma omp if_device(nvidia, cc35) teams distribute parallel for resources(2)
        #pragma omp if_device(host) parallel for resources(40)
        for (int i = k; i < k + bs; i++)
            v[i] += dt * f[i];
    }
    #pragma omp taskwait
}
