/* OpenACC compute constructs: parallel loop with data clauses and a
 * reduction, parallel with gang loops, serial, kernels loops (a Laplace
 * step whose error is a max reduction found by the analysis, a loop with a
 * dependence kept sequential), async/wait queues, the acc_* runtime
 * routines, and acc atomic. */
#include <math.h>
#include <openacc.h>
#include <stdio.h>
#include <stdlib.h>

#define M 66

static int check(const char *what, double got, double want)
{
    if (fabs(got - want) > 1e-9 * (fabs(want) + 1.0)) {
        printf("FAIL: %s = %.17g, want %.17g\n", what, got, want);
        return 1;
    }
    return 0;
}

static double A[M][M], Anew[M][M];

int main(void)
{
    int n = 4096, bad = 0;
    double *a = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    double sum = 0.0, error = 0.0;
    long count = 0;
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 0.0;
    }
    for (int j = 0; j < M; j++)
        for (int i = 0; i < M; i++)
            A[j][i] = (j == 0) ? 1.0 : 0.0;

    #pragma acc parallel loop gang vector copyin(a[0:n]) copyout(b[0:n])
    for (int i = 0; i < n; i++)
        b[i] = 2.0 * a[i];
    bad |= check("b[n-1]", b[n - 1], 2.0 * (n - 1));

    #pragma acc parallel loop reduction(+:sum) copyin(b[0:n])
    for (int i = 0; i < n; i++)
        sum += b[i];
    bad |= check("sum", sum, (double)n * (n - 1));

    #pragma acc data copy(a[0:n]) copyin(b[0:n])
    {
        #pragma acc parallel num_gangs(8) vector_length(64) present(a[0:n])
        {
            #pragma acc loop gang
            for (int i = 0; i < n; i++)
                a[i] += 1.0;
        }
        #pragma acc serial present(a[0:n])
        {
            for (int i = 1; i < n; i++)
                a[i] = a[i] - a[i - 1] * 0.0; /* one thread: in order */
            a[0] = -1.0;
        }
        #pragma acc kernels present(a[0:n], b[0:n])
        {
            #pragma acc loop independent
            for (int i = 1; i < n; i++)
                a[i] = a[i] + b[i];
        }
    }
    bad |= check("a[0]", a[0], -1.0);
    bad |= check("a[n-1]", a[n - 1], (n - 1) + 1.0 + 2.0 * (n - 1));

    /* the tutorial's Laplace step: error = fmax(...) is a max reduction */
    #pragma acc kernels copyin(A) copyout(Anew)
    for (int j = 1; j < M - 1; j++)
        for (int i = 1; i < M - 1; i++) {
            Anew[j][i] = 0.25 * (A[j][i + 1] + A[j][i - 1] + A[j - 1][i] + A[j + 1][i]);
            error = fmax(error, fabs(Anew[j][i] - A[j][i]));
        }
    bad |= check("error", error, 0.25);
    bad |= check("Anew[1][1]", Anew[1][1], 0.25);

    /* a dependence, said with seq (without it macc finds it, warns and runs
     * the loop sequentially: tests/unit/test_analysis.c) */
    #pragma acc kernels loop seq copy(b[0:n])
    for (int i = 1; i < n; i++)
        b[i] = b[i - 1] + 1.0;
    bad |= check("prefix", b[n - 1], (double)(n - 1));

    /* queues: two regions on queue 1 in order, then wait */
    #pragma acc parallel loop async(1) copy(b[0:n])
    for (int i = 0; i < n; i++)
        b[i] = i;
    #pragma acc parallel loop async(1) wait(1) copy(b[0:n])
    for (int i = 0; i < n; i++)
        b[i] *= 3.0;
    #pragma acc wait(1)
    bad |= check("async b[7]", b[7], 21.0);

    /* an async region on present data, then update ... wait(1) inside the data region */
    #pragma acc data copyin(b[0:n])
    {
        #pragma acc parallel loop present(b[0:n]) async(1)
        for (int i = 0; i < n; i++)
            b[i] = 2.0 * i;
        #pragma acc update self(b[0:n]) wait(1)
    }
    bad |= check("update wait b[5]", b[5], 10.0);

    /* atomics */
    #pragma acc parallel loop copy(count)
    for (int i = 0; i < n; i++) {
        #pragma acc atomic update
        count += 1;
    }
    bad |= check("count", (double)count, (double)n);

    /* runtime routines over the data directory */
    acc_copyin(a, n * sizeof(double));
    if (!acc_is_present(a, n * sizeof(double)) || !acc_deviceptr(a)) {
        printf("FAIL: acc_copyin did not make a present\n");
        bad = 1;
    }
    #pragma acc parallel loop present(a[0:n])
    for (int i = 0; i < n; i++)
        a[i] = 5.0;
    acc_copyout(a, n * sizeof(double));
    if (acc_is_present(a, n * sizeof(double))) {
        printf("FAIL: a still present after acc_copyout\n");
        bad = 1;
    }
    bad |= check("a[3] after acc_copyout", a[3], 5.0);
    if (acc_get_num_devices(acc_device_host) != 1 || acc_get_default_async() < 0) {
        printf("FAIL: device queries\n");
        bad = 1;
    }
    free(a);
    free(b);
    if (bad)
        return 1;
    printf("PASS\n");
    return 0;
}
