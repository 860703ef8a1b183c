/* target update of strided array sections (OpenMP 5.0, a[lo:len:stride]):
 * only every stride-th element moves, the others keep their values on each
 * side (with a GPU; on the host there is one copy of each array). Prints
 * PASS or FAIL. */
#include <omp.h>
#include <stdio.h>

#define N 1024

int main(void)
{
    double a[N], b[N];
    int errors = 0, gpu = 0;
    for (int i = 0; i < N; i++) {
        a[i] = 0.0;
        b[i] = i;
    }
    #pragma omp target data map(tofrom: a[0:N]) map(to: b[0:N])
    {
        for (int i = 0; i < N; i++)
            a[i] = i; /* the host's copy only */
        #pragma omp target update to(a[0:N/2:2])
        #pragma omp target map(alloc: a[0:N], b[0:N]) map(from: gpu)
        {
            gpu = !omp_is_initial_device();
            for (int i = 0; i < N; i++) {
                a[i] += 1.0;
                b[i] = -b[i];
            }
        }
        #pragma omp target update from(b[1:N/4:4])
    }
    for (int i = 0; i < N; i++) {
        double wa = gpu ? (i % 2 == 0 ? i + 1.0 : 1.0) : i + 1.0;
        double wb = gpu ? (i % 4 == 1 ? -i : i) : -i;
        errors += a[i] != wa;
        errors += b[i] != wb;
    }
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
