/* device(host): a host version only, with the construct-set on the target
 * line and with an if_device(host) line. */
void clear(int n, double *v)
{
    #pragma omp target device(host) parallel for map(from: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] = 0.0;

    #pragma omp target device(host) map(tofrom: v[0:n]) nowait
    #pragma omp if_device(host) parallel for resources(50)
    for (int i = 0; i < n; i++)
        v[i] += 1.0;
    #pragma omp taskwait
}
