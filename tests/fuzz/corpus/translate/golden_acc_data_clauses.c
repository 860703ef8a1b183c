/* acc data with each data clause, OpenMP target regions inside. */
void acc_region(int n, float *a, float *b, float *c, float *t, float *d)
{
    #pragma acc data copy(a[0:n]) copyin(b[0:n]) copyout(c[0:n]) create(t[0:n])
    {
        #pragma acc data present(a[0:n], b[0:n]) no_create(d[0:n])
        {
            #pragma omp target teams distribute parallel for
            for (int i = 0; i < n; i++)
                t[i] = a[i] + b[i];
        }
        #pragma omp target teams distribute parallel for
        for (int i = 0; i < n; i++) {
            c[i] = t[i] * 2.0f;
            a[i] = c[i] - b[i];
        }
    }
}
