/* Map sections with non-zero lower bounds: each task maps a[k:len] and
 * indexes it with the user's indices; elements outside every mapped section
 * keep their host values. Also a[:n] (no lower bound) and a section read
 * with map(to:) at an offset. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000
#define LEN 100

int main(void)
{
    int n = N;
    int *a = malloc(n * sizeof(int));
    int *b = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        a[i] = -1;
        b[i] = 3 * i;
    }

    /* Tasks on blocks 0, 2, 4, 6, 8 only; each writes its own block. */
    for (int k = 0; k < n; k += 2 * LEN) {
        int len = LEN;
        #pragma omp target device(any) map(tofrom: a[k:len]) map(to: b[k:len]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for
        #pragma omp if_device(host) parallel for
        for (int i = k; i < k + len; i++)
            a[i] = b[i] + 1;
    }
    #pragma omp taskwait

    for (int i = 0; i < n; i++) {
        int want = (i / LEN) % 2 == 0 ? 3 * i + 1 : -1;
        if (a[i] != want) {
            printf("FAIL: after block tasks a[%d] = %d, want %d\n", i, a[i], want);
            return 1;
        }
    }

    /* An odd offset and length, one task, reading its neighbour below. */
    int lo = 333, len = 77;
    #pragma omp target teams distribute parallel for map(tofrom: a[lo:len]) map(to: b[lo-1:len+1])
    for (int i = lo; i < lo + len; i++)
        a[i] = b[i - 1] * 10;
    for (int i = 0; i < n; i++) {
        int want = (i / LEN) % 2 == 0 ? 3 * i + 1 : -1;
        if (i >= lo && i < lo + len)
            want = 3 * (i - 1) * 10;
        if (a[i] != want) {
            printf("FAIL: after offset task a[%d] = %d, want %d\n", i, a[i], want);
            return 1;
        }
    }

    /* a[:n] */
    #pragma omp target teams distribute parallel for map(tofrom: a[:n])
    for (int i = 0; i < n; i++)
        a[i] += 1000;
    for (int i = 0; i < n; i++) {
        int want = (i / LEN) % 2 == 0 ? 3 * i + 1 : -1;
        if (i >= lo && i < lo + len)
            want = 3 * (i - 1) * 10;
        if (a[i] != want + 1000) {
            printf("FAIL: after a[:n] task a[%d] = %d, want %d\n", i, a[i], want + 1000);
            return 1;
        }
    }

    /* A pointer into the middle of the array, mapped from index 0. */
    int *mid = a + 500;
    #pragma omp target teams distribute parallel for map(tofrom: mid[0:10])
    for (int i = 0; i < 10; i++)
        mid[i] = i;
    for (int i = 0; i < 10; i++)
        if (a[500 + i] != i) {
            printf("FAIL: mid[%d] = %d\n", i, a[500 + i]);
            return 1;
        }

    free(a);
    free(b);
    printf("PASS\n");
    return 0;
}
