/* num_teams, thread_limit and num_threads, literal and expression arguments; the host
 * version's threads bounded by thread_limit (of its line, of the target line, with
 * num_threads, for a loop directive inside the region). */
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

    #pragma omp target device(any) thread_limit(64) map(tofrom: v[0:n])
    #pragma omp if_device(host) parallel for num_threads(teams)
    #pragma omp if_device(nvidia) teams distribute parallel for
    for (int i = 0; i < n; i++)
        v[i] += 2.0f;

    #pragma omp target teams thread_limit(teams) map(tofrom: v[0:n])
    {
        #pragma omp distribute parallel for
        for (int i = 0; i < n; i++)
            v[i] -= 2.0f;
    }
}
