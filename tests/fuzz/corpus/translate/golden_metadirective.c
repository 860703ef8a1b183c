/* metadirective after a target line: when(device={kind(gpu)}: ...) with
 * default(...), and with otherwise(...). */
double meta(int n, double *v)
{
    double s = 0.0;
    #pragma omp target device(any) map(tofrom: v[0:n])
    #pragma omp metadirective when(device={kind(gpu)}: teams distribute parallel for) default(parallel for)
    for (int i = 0; i < n; i++)
        v[i] += 1.0;

    #pragma omp target device(any) map(to: v[0:n])
    #pragma omp metadirective when(device={kind(gpu)}: teams distribute parallel for reduction(+: s)) otherwise(parallel for reduction(+: s))
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}
