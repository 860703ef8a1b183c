// MACC_FLAGS: --managed
/* The managed allocator's cap: a request past MACC_MANAGED_CAP fails like
 * malloc (NULL, errno ENOMEM), and the program and the GPU go on working. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    setenv("MACC_MANAGED_CAP", "64M", 1); /* read at the first allocation */
    errno = 0;
    double *big = malloc((size_t)256 << 20);
    if (big || errno != ENOMEM) {
        printf("FAIL: 256 MiB past a 64 MiB cap: %p, errno %d\n", (void *)big, errno);
        return 1;
    }
    long n = (long)(16 << 20) / (long)sizeof(double);
    double *x = malloc((size_t)n * sizeof(double));
    if (!x) {
        printf("FAIL: 16 MiB under the cap\n");
        return 1;
    }
    #pragma omp target device(any)
    #pragma omp if_device(nvidia) teams distribute parallel for
    #pragma omp if_device(host) parallel for
    for (long i = 0; i < n; i++)
        x[i] = 2.0 * i;
    for (long i = 0; i < n; i += 4099)
        if (x[i] != 2.0 * i) {
            printf("FAIL: x[%ld] = %g\n", i, x[i]);
            return 1;
        }
    free(x);
    printf("PASS\n");
    return 0;
}
