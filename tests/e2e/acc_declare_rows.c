/* OpenACC data forms: acc declare in a function (a data region to the end
 * of the block, left by a return), acc data of a pointer-to-pointer section
 * a[0:n][0:m] (rows mapped and attached), async/wait on acc data, acc set
 * default_async, a reduction on an inner loop of a variable private to the
 * gang loop, device_type(nvidia)/device_type(host) clauses, copyout(zero:)
 * and create(zero:), and a program part that only calls the runtime API. */
#include <math.h>
#include <openacc.h>
#include <stdio.h>
#include <stdlib.h>

static int check(const char *what, double got, double want)
{
    if (fabs(got - want) > 1e-9 * (fabs(want) + 1.0)) {
        printf("FAIL: %s = %.17g, want %.17g\n", what, got, want);
        return 1;
    }
    return 0;
}

/* c[i] += a[i] + b[i]; the declared copy of c goes back at the return */
static int add_rows(const double *a, const double *b, double *c, int m)
{
    #pragma acc declare copy(c[0:m])
    #pragma acc parallel loop present(a[0:m], b[0:m])
    for (int i = 0; i < m; i++)
        c[i] = c[i] + a[i] + b[i];
    if (m > 0)
        return 1;
    return 0;
}

int main(void)
{
    int n = 16, m = 300, bad = 0;
    double **a = malloc(n * sizeof *a), **b = malloc(n * sizeof *b), **c = malloc(n * sizeof *c);
    for (int i = 0; i < n; i++) {
        a[i] = malloc(m * sizeof **a);
        b[i] = malloc(m * sizeof **b);
        c[i] = malloc(m * sizeof **c);
        for (int j = 0; j < m; j++) {
            a[i][j] = i + 0.5 * j;
            b[i][j] = 2.0 * i - j;
            c[i][j] = 1.0;
        }
    }
    /* rows of a and b present: the function's present clauses find them */
    int calls = 0;
    #pragma acc data copyin(a[0:n][0:m], b[0:n][0:m])
    {
        for (int i = 0; i < n; i++)
            calls += add_rows(a[i], b[i], c[i], m);
    }
    bad += check("calls", calls, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            bad += check("c", c[i][j], 1.0 + (i + 0.5 * j) + (2.0 * i - j));

    /* a region that reads the rows through the device copy of a */
    double *rowsum = malloc(n * sizeof *rowsum);
    #pragma acc data copyin(a[0:n][0:m]) copyout(rowsum[0:n])
    {
        #pragma acc parallel loop gang
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int j = 0; j < m; j++)
                s += a[i][j];
            rowsum[i] = s;
        }
    }
    for (int i = 0; i < n; i++)
        bad += check("rowsum", rowsum[i], m * (double)i + 0.5 * m * (m - 1) / 2.0);

    /* an inner-loop reduction of a variable private to each gang iteration */
    double *avg = malloc(n * sizeof *avg), t = 0.0;
    #pragma acc parallel loop gang private(t) copyin(b[0:n][0:m]) copyout(avg[0:n])
    for (int i = 0; i < n; i++) {
        t = 0.0;
        #pragma acc loop vector reduction(+:t)
        for (int j = 0; j < m; j++)
            t += b[i][j];
        avg[i] = t / m;
    }
    for (int i = 0; i < n; i++)
        bad += check("avg", avg[i], 2.0 * i - (m - 1) / 2.0);

    /* async/wait on acc data, acc set default_async */
    double *x = malloc(m * sizeof *x), *y = malloc(m * sizeof *y);
    for (int j = 0; j < m; j++)
        x[j] = j, y[j] = 0.0;
    #pragma acc set default_async(3)
    bad += check("default async", acc_get_default_async(), 3);
    #pragma acc data copyin(x[0:m]) copy(y[0:m]) async(3)
    {
        #pragma acc parallel loop async
        for (int j = 0; j < m; j++)
            y[j] += 2.0 * x[j];
    }
    #pragma acc data copyin(x[0:m]) copy(y[0:m]) wait(3)
    {
        #pragma acc parallel loop
        for (int j = 0; j < m; j++)
            y[j] += x[j];
    }
    #pragma acc set default_async(acc_async_default)
    for (int j = 0; j < m; j++)
        bad += check("y", y[j], 3.0 * j);

    /* per-device clauses: each version its own gang count, the host's loop seq */
    double s = 0.0;
    #pragma acc parallel loop reduction(+:s) copyin(x[0:m]) num_gangs(8) device_type(nvidia) num_gangs(64) \
        vector_length(128) device_type(host) num_gangs(1)
    for (int j = 0; j < m; j++)
        s += x[j];
    bad += check("s", s, 0.5 * m * (m - 1));
    #pragma acc kernels loop copy(y[0:m]) dtype(*) vector_length(64) device_type(host) seq
    for (int j = 1; j < m; j++)
        y[j] = y[j] + 1.0;
    bad += check("y[m-1]", y[m - 1], 3.0 * (m - 1) + 1.0);

    /* zero: the device copy made for the construct starts as zeros */
    for (int j = 0; j < m; j++)
        x[j] = j, y[j] = 7.0;
    double *z = malloc(m * sizeof *z);
    for (int j = 0; j < m; j++)
        z[j] = 9.0;
    #pragma acc enter data create(zero: z[0:m])
    #pragma acc parallel loop copyout(zero: y[0:m]) copyin(x[0:m]) present(z[0:m]) async(1)
    for (int j = 0; j < m; j++) {
        y[j] += x[j];
        z[j] += 1.0;
    }
    #pragma acc exit data copyout(z[0:m])
    for (int j = 0; j < m; j++) {
        bad += check("zero y", y[j], j);
        bad += check("zero z", z[j], 1.0);
    }
    free(z);

    /* the runtime API alone */
    if (acc_get_num_devices(acc_device_host) != 1 || acc_get_device_type() == acc_device_none)
        bad += check("devices", 0, 1);

    for (int i = 0; i < n; i++) {
        free(a[i]);
        free(b[i]);
        free(c[i]);
    }
    free(a);
    free(b);
    free(c);
    free(rowsum);
    free(avg);
    free(x);
    free(y);
    if (bad)
        return 1;
    printf("acc_declare_rows: ok\n");
    return 0;
}
