/* OpenACC: acc declare in a function (a data region to the end of the
 * block), acc data of a pointer-to-pointer section (rows mapped and
 * attached), async/wait on acc data, acc set, device_type(nvidia|host)
 * clauses (each version its own), an inner-loop reduction of a variable
 * private to the gang loop. */

void scale(double *c, int m)
{
#pragma acc declare copy(c[0:m])
#pragma acc parallel loop
    for (int i = 0; i < m; i++)
        c[i] = 2.0 * c[i];
}

void rows(double **a, double *sum, int n, int m)
{
#pragma acc data copyin(a[0:n][0:m]) copyout(sum[0:n]) async(1) wait(2)
    {
        double t = 0.0;
#pragma acc parallel loop gang private(t)
        for (int i = 0; i < n; i++) {
            t = 0.0;
#pragma acc loop vector reduction(+:t)
            for (int j = 0; j < m; j++)
                t += a[i][j];
            sum[i] = t;
        }
    }
#pragma acc set default_async(2) if(n > 1)
}

void tuned(float *x, int n)
{
#pragma acc parallel loop copy(x[0:n]) num_gangs(8) device_type(nvidia) num_gangs(64) vector_length(128) device_type(host) num_gangs(1)
    for (int i = 0; i < n; i++)
        x[i] = x[i] + 1.0f;
#pragma acc kernels loop copy(x[0:n]) dtype(*) vector_length(64) device_type(host) seq
    for (int i = 0; i < n; i++)
        x[i] = 2.0f * x[i];
}
