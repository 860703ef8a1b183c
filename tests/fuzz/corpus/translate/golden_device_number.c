/* device(N): OpenMP's device number, a literal and an expression, in the
 * standard clause order (construct-set first) and in MACC's. */
void bump(int n, int *v, int dev)
{
    #pragma omp target teams distribute parallel for device(0) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] += 1;

    #pragma omp target device(dev + 1) map(tofrom: v[0:n]) teams distribute parallel for
    for (int i = 0; i < n; i++)
        v[i] += 2;
}
