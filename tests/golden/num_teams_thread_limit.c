/* num_teams, thread_limit and num_threads, literal and expression arguments. */
void launch_shape(int n, float *v, int teams)
{
    #pragma omp target teams distribute parallel for num_teams(teams) thread_limit(256) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] += 1.0f;

    #pragma omp target parallel for num_threads(4) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] *= 3.0f;

    #pragma omp target device(any) map(tofrom: v[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for num_teams(n / 128 + 1) thread_limit(128)
    #pragma omp if_device(host) parallel for num_threads(2)
    for (int i = 0; i < n; i++)
        v[i] -= 1.0f;
}
