/* if_device architecture spellings: case-insensitive NVIDIA, the aliases cuda
 * and smp, and sm_90 / cc90 subtypes. */
void aliases(int n, double *v)
{
    #pragma omp target device(any) map(tofrom: v[0:n])
    #pragma omp if_device(NVIDIA, sm_90) teams distribute parallel for resources(10)
    #pragma omp if_device(SMP) parallel for resources(50)
    for (int i = 0; i < n; i++)
        v[i] += 1.0;

    #pragma omp target device(any) map(tofrom: v[0:n])
    #pragma omp if_device(cuda, cc90) teams distribute parallel for
    #pragma omp if_device(Host) parallel for
    for (int i = 0; i < n; i++)
        v[i] *= 2.0;
}
