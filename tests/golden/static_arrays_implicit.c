/* Statically sized global and local arrays are mapped whole without a map
 * clause (direction inferred: table is only read, hist is written). */
#define N 1024

static const double table[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
int hist[N];

double lookup(void)
{
    double local[N];
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < N; i++) {
        local[i] = table[i % 16];
        hist[i] = (int)local[i] * 2;
    }
    return local[N - 1];
}
