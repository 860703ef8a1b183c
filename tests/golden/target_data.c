/* target data around two regions that find their data present (no maps). */
void jacobi_step(int n, const double *in, double *out, double *tmp)
{
    #pragma omp target data map(to: in[0:n]) map(from: out[0:n]) map(alloc: tmp[0:n])
    {
        #pragma omp target teams distribute parallel for
        for (int i = 1; i < n - 1; i++)
            tmp[i] = (in[i - 1] + in[i + 1]) * 0.5;

        #pragma omp target teams distribute parallel for
        for (int i = 1; i < n - 1; i++)
            out[i] = tmp[i];
    }
}
