/* schedule and dist_schedule. */
void sched(int n, double *v)
{
    #pragma omp target teams distribute parallel for dist_schedule(static, 1024) schedule(static, 16) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] = v[i] * 0.5;

    #pragma omp target parallel for schedule(dynamic, 64) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] = v[i] + 0.5;

    #pragma omp target device(any) map(tofrom: v[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for dist_schedule(static)
    #pragma omp if_device(host) parallel for schedule(guided)
    for (int i = 0; i < n; i++)
        v[i] = -v[i];
}
