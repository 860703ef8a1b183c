/* Directives nested on their own lines: target, teams and distribute parallel
 * for (clauses of each line go to the combined construct), with braces
 * holding only the nested construct, target teams + distribute parallel for
 * simd, and target + teams + loop. */
void nested_teams(int n, float *a, const float *b)
{
    #pragma omp target map(tofrom: a[0:n]) map(to: b[0:n])
    #pragma omp teams num_teams(n / 256 + 1) thread_limit(256)
    #pragma omp distribute parallel for schedule(static, 1)
    for (int i = 0; i < n; i++)
        a[i] += b[i];

    #pragma omp target map(tofrom: a[0:n])
    {
        #pragma omp teams
        {
            #pragma omp distribute parallel for
            for (int i = 0; i < n; i++)
                a[i] *= 2.0f;
        }
    }

    #pragma omp target teams map(tofrom: a[0:n])
    #pragma omp distribute parallel for simd simdlen(8)
    for (int i = 0; i < n; i++)
        a[i] -= 1.0f;

    #pragma omp target map(tofrom: a[0:n])
    #pragma omp teams
    #pragma omp loop
    for (int i = 0; i < n; i++)
        a[i] = -a[i];
}
