/* device(any) with a combined construct-set: one version per device kind, the
 * host one made by the host reducer (teams distribute parallel for becomes
 * parallel for). */
void init(int n, int *v)
{
    #pragma omp target device(any) teams distribute parallel for map(from: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] = i * i;

    #pragma omp target device(any) teams distribute map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] += 1;
}
