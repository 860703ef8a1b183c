/* if(expr) and if(target: expr) on target. */
void maybe_offload(int n, double *v)
{
    #pragma omp target teams distribute parallel for if(n > 10000) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] += 1.0;

    #pragma omp target teams distribute parallel for if(target: n > 10000 && n % 2 == 0) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] -= 1.0;

    #pragma omp target if(0) map(tofrom: v[0:1])
    {
        v[0] = 42.0;
    }
}
