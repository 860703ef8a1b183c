/* Target regions whose body is a compound statement: sequential code, loops
 * with an inner `parallel for`, and sequential code after them that reads what
 * the loops wrote; a body holding only a `teams distribute parallel for` loop;
 * a body with sequential code only. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 512;
    int *a = malloc(n * sizeof(int));
    int *b = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 0;
    }

    #pragma omp target map(tofrom: a[0:n]) map(from: b[0:n])
    {
        int half = n / 2;
        #pragma omp parallel for
        for (int i = 0; i < half; i++)
            a[i] *= 2;
        #pragma omp parallel for
        for (int i = half; i < n; i++)
            a[i] += 1;
        for (int i = 0; i < n; i++)
            b[i] = 0;
        b[0] = a[0] + a[n - 1] + 100;
    }

    /* With a teams construct inside, OpenMP allows nothing else in the body. */
    int shift = 3;
    #pragma omp target device(any) map(to: a[0:n]) map(tofrom: b[0:n])
    {
        #pragma omp teams distribute parallel for
        for (int i = 1; i < n; i++)
            b[i] = a[i] - shift;
    }

    #pragma omp target map(tofrom: a[0:n])
    {
        a[0] = -1;
    }

    int half = n / 2;
    if (b[0] != 0 + (n - 1 + 1) + 100) {
        printf("FAIL: b[0] = %d\n", b[0]);
        return 1;
    }
    if (a[0] != -1) {
        printf("FAIL: a[0] = %d\n", a[0]);
        return 1;
    }
    for (int i = 1; i < n; i++) {
        int ai = i < half ? 2 * i : i + 1;
        if (a[i] != ai || b[i] != ai - 3) {
            printf("FAIL: a[%d] = %d (want %d), b[%d] = %d\n", i, a[i], ai, i, b[i]);
            return 1;
        }
    }
    free(a);
    free(b);
    printf("PASS\n");
    return 0;
}
