/* Many independent nowait tasks with resources(auto) and fixed token counts,
 * a taskwait inside a function (waits for that function's tasks), and
 * device(host) regions. */
#include <stdio.h>
#include <stdlib.h>

#define NT 64
#define BS 256

static void launch(double *v, int ntasks, int bs, double add)
{
    for (int t = 0; t < ntasks; t++) {
        int k = t * bs;
        #pragma omp target device(any) map(tofrom: v[k:bs]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for resources(auto)
        #pragma omp if_device(host) parallel for resources(auto)
        for (int i = k; i < k + bs; i++)
            v[i] = v[i] * 2.0 + add;
    }
    #pragma omp taskwait
}

int main(void)
{
    int n = NT * BS;
    double *v = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        v[i] = i;

    for (int rep = 0; rep < 4; rep++)
        launch(v, NT, BS, 1.0);

    for (int t = 0; t < NT; t++) {
        int k = t * BS;
        #pragma omp target device(host) map(tofrom: v[k:BS]) nowait
        #pragma omp if_device(host) parallel for resources(25)
        for (int i = k; i < k + BS; i++)
            v[i] -= 15.0;
    }
    #pragma omp taskwait

    #pragma omp target device(host) parallel for map(tofrom: v[0:n])
    for (int i = 0; i < n; i++)
        v[i] /= 16.0;

    for (int i = 0; i < n; i++)
        if (v[i] != (double)i) {
            printf("FAIL: v[%d] = %.17g\n", i, v[i]);
            return 1;
        }
    free(v);
    printf("PASS\n");
    return 0;
}
