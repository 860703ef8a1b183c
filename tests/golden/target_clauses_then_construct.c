/* The construct-set written after the clauses (seed 003, Figure 1 style):
 * `target device(any) map(...) teams distribute parallel for`. */
void axpy(int n, double a, const double *x, double *y)
{
    #pragma omp target device(any) map(to: x[0:n]) map(tofrom: y[0:n]) teams distribute parallel for
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];

    #pragma omp target device(any) map(tofrom: y[0:n]) nowait parallel for
    for (int i = 0; i < n; i++)
        y[i] *= 0.5;
    #pragma omp taskwait
}
