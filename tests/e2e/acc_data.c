/* OpenACC data directives around OpenMP target regions: acc data with copy,
 * copyin, copyout, create and (nested) present; acc enter data / exit data;
 * acc update self / device; acc wait. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 1024, bad = 0;
    float *a = malloc(n * sizeof(float));
    float *b = malloc(n * sizeof(float));
    float *c = malloc(n * sizeof(float));
    float *t = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        a[i] = 1.0f;
        b[i] = (float)i;
        c[i] = -1.0f;
        t[i] = 0.0f;
    }

    #pragma acc data copy(a[0:n]) copyin(b[0:n]) copyout(c[0:n]) create(t[0:n])
    {
        #pragma omp target teams distribute parallel for
        for (int i = 0; i < n; i++)
            t[i] = b[i] + 1.0f;

        #pragma acc data present(a[0:n], t[0:n])
        {
            #pragma omp target teams distribute parallel for
            for (int i = 0; i < n; i++)
                a[i] += t[i];
        }

        #pragma omp target teams distribute parallel for
        for (int i = 0; i < n; i++)
            c[i] = a[i] * 2.0f;

        #pragma acc update self(c[0:n])
        #pragma acc wait
        for (int i = 0; i < n; i++)
            if (c[i] != (i + 2.0f) * 2.0f)
                bad = i + 1; /* no return: a data region is a structured block */
    }
    if (bad) {
        printf("FAIL: acc update self: c[%d] = %g\n", bad - 1, c[bad - 1]);
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (a[i] != i + 2.0f || c[i] != (i + 2.0f) * 2.0f) {
            printf("FAIL: after acc data: a[%d] = %g, c[%d] = %g\n", i, a[i], i, c[i]);
            return 1;
        }

    /* unstructured data */
    #pragma acc enter data copyin(b[0:n]) create(t[0:n])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        t[i] = b[i] * 0.5f;
    for (int i = 0; i < n; i++)
        b[i] = 10.0f;
    #pragma acc update device(b[0:n])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        t[i] += b[i];
    #pragma acc update host(t[0:10])
    if (t[3] != 11.5f) {
        printf("FAIL: acc update host: t[3] = %g\n", t[3]);
        return 1;
    }
    #pragma acc exit data copyout(t[0:n]) delete(b[0:n])
    #pragma acc wait
    for (int i = 0; i < n; i++)
        if (t[i] != i * 0.5f + 10.0f) {
            printf("FAIL: after exit data copyout: t[%d] = %g\n", i, t[i]);
            return 1;
        }

    free(a);
    free(b);
    free(c);
    free(t);
    printf("PASS\n");
    return 0;
}
