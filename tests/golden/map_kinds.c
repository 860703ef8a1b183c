/* Every map type: to, from, tofrom, alloc, and a map with no type (tofrom). */
void stencil(int n, const double *in, double *out, double *acc, double *tmp)
{
    #pragma omp target teams distribute parallel for map(to: in[0:n]) map(from: out[0:n]) map(tofrom: acc[0:n]) map(alloc: tmp[0:n])
    for (int i = 1; i < n - 1; i++) {
        tmp[i] = in[i - 1] + in[i + 1];
        out[i] = 0.5 * tmp[i];
        acc[i] += out[i];
    }

    #pragma omp target teams distribute parallel for map(acc[0:n])
    for (int i = 0; i < n; i++)
        acc[i] *= 2.0;
}
