/* device(nvidia): any GPU, a CUDA version only; also with an if_device line
 * naming a compute capability. */
void twice(int n, float *v)
{
    #pragma omp target device(nvidia) teams distribute parallel for map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] *= 2.0f;

    #pragma omp target device(nvidia) map(tofrom: v[0:n])
    #pragma omp if_device(nvidia, cc35) teams distribute parallel for
    for (int i = 0; i < n; i++)
        v[i] += 1.0f;
}
