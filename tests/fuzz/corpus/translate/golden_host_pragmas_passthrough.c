/* Pragmas that are not macc's pass through: host OpenMP outside any region,
 * GCC pragmas, pragma once-style and unknown namespaces; one region among them. */
#pragma GCC optimize("O3")
#pragma weak helper_weak

void helper_weak(void) {}

double mixed(int n, double *v)
{
    double s = 0.0;
    #pragma omp parallel for reduction(+: s)
    for (int i = 0; i < n; i++)
        s += v[i];

    #pragma GCC ivdep
    for (int i = 0; i < n; i++)
        v[i] /= s;

    #pragma omp target teams distribute parallel for map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] += 1.0;

    #pragma omp critical
    { s = 0.0; }
    return s;
}
