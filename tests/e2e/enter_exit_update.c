/* target enter data / exit data and target update: regions use data made
 * present by enter data (no map clauses), the host reads device results only
 * after update from / exit data, and update to sends host changes. */
#include <stdio.h>
#include <stdlib.h>

static int verify(const int *v, int n, int mul, int add, const char *what)
{
    for (int i = 0; i < n; i++)
        if (v[i] != i * mul + add) {
            printf("FAIL: %s: [%d] = %d, want %d\n", what, i, v[i], i * mul + add);
            return 0;
        }
    return 1;
}

int main(void)
{
    int n = 777;
    int *a = malloc(n * sizeof(int));
    int *w = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        a[i] = i;
        w[i] = 0;
    }

    #pragma omp target enter data map(to: a[0:n]) map(alloc: w[0:n])

    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        a[i] = a[i] * 2;

    #pragma omp target update from(a[0:n])
    if (!verify(a, n, 2, 0, "after update from"))
        return 1;

    /* host changes, then update to */
    for (int i = 0; i < n; i++)
        a[i] += 5;
    #pragma omp target update to(a[0:n])

    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        w[i] = a[i] * 3;

    /* update of a part only */
    #pragma omp target update from(w[100:50])
    for (int i = 100; i < 150; i++)
        if (w[i] != (2 * i + 5) * 3) {
            printf("FAIL: partial update w[%d] = %d\n", i, w[i]);
            return 1;
        }

    #pragma omp target exit data map(from: w[0:n]) map(release: a[0:n])
    if (!verify(w, n, 6, 15, "after exit data"))
        return 1;
    if (!verify(a, n, 2, 5, "a on the host"))
        return 1;

    free(a);
    free(w);
    printf("PASS\n");
    return 0;
}
