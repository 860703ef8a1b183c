// MACC_FLAGS: --managed
/* --managed: the allocation calls go to the runtime's allocator; a pointer
 * used in a region without a map clause is passed as it is (managed memory
 * is valid on every device); function-pointer uses are rewritten too. */
#include <stdlib.h>

typedef void (*release_fn)(void *);

double *grid(int n)
{
    double *g = calloc((size_t)n, sizeof *g);
    void *aligned = NULL;
    if (posix_memalign(&aligned, 64, 128) == 0)
        free(aligned);
    g = realloc(g, (size_t)n * 2 * sizeof *g);
    return g;
}

int main(void)
{
    int n = 1000;
    double *x = malloc((size_t)n * sizeof *x);
    double *y = aligned_alloc(64, (size_t)n * sizeof *y);
    release_fn rel = free; /* a function pointer: MACC_free too */
    #pragma omp target device(any)
    #pragma omp if_device(nvidia) teams distribute parallel for
    #pragma omp if_device(host) parallel for
    for (int i = 0; i < n; i++)
        y[i] = 2.0 * i + (x != 0);
    free(x);
    rel(y);
    double *g = grid(n);
    free(g);
    return 0;
}
