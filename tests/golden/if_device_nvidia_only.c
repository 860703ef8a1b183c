/* device(any) with only an nvidia if_device line: exactly the kinds named
 * (a CUDA version only). */
void gpu_only(int n, float *v)
{
    #pragma omp target device(any) map(tofrom: v[0:n]) nowait
    #pragma omp if_device(nvidia) teams distribute parallel for resources(20)
    for (int i = 0; i < n; i++)
        v[i] = v[i] * v[i];
    #pragma omp taskwait
}
