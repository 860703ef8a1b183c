/* Combined forms on one line: target teams (a block), target teams
 * distribute simd, target teams loop (collapse), target loop; a parallel
 * region with a for inside a target region's block. */
void teams_forms(int n, int m, double *a, double *flag)
{
    #pragma omp target teams map(tofrom: flag[0:1]) num_teams(1)
    {
        double x = 2.0;
        flag[0] = x * 21.0;
    }

    #pragma omp target teams distribute simd map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1.0;

    #pragma omp target teams loop collapse(2) map(tofrom: a[0:n * m])
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            a[i * m + j] *= 2.0;

    #pragma omp target loop map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] -= 3.0;

    double total = 0.0;
    #pragma omp target map(tofrom: a[0:n], total)
    {
        double base = a[0];
        #pragma omp parallel
        {
            #pragma omp for reduction(+: total)
            for (int i = 0; i < n; i++)
                total += a[i] - base;
        }
        a[0] = total;
    }
    flag[0] += total;
}
