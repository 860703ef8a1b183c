/* distribute parallel for (no teams) as the construct-set, on the target line
 * (MACC style, seed 003 Figure 1) and on an if_device line. */
void negate(int n, int *v)
{
    #pragma omp target device(any) distribute parallel for map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] = -v[i];

    #pragma omp target device(any) map(tofrom: v[0:n])
    #pragma omp if_device(nvidia) distribute parallel for
    #pragma omp if_device(host) parallel for
    for (int i = 0; i < n; i++)
        v[i] = v[i] * 3;
}
