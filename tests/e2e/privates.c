/* firstprivate, private and lastprivate: on the target line, in the
 * construct-set, and on if_device lines; lastprivate of a loop variable
 * declared outside the loop. Only what serial C and OpenMP agree on is checked
 * (a private copy's final value is never read after the region). */
#include <stdio.h>
#include <stdlib.h>

static int fails;
static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        fails++;
    }
}

int main(void)
{
    int n = 1000;
    int *a = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        a[i] = 0;

    int off = 7;
    #pragma omp target teams distribute parallel for firstprivate(off) map(from: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] = i + off;
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= a[i] == i + 7;
    check(ok, "firstprivate in the construct-set");

    int tmp = -5;
    #pragma omp target teams distribute parallel for private(tmp) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++) {
        tmp = a[i] * 2;
        a[i] = tmp + 1;
    }
    ok = 1;
    for (int i = 0; i < n; i++)
        ok &= a[i] == (i + 7) * 2 + 1;
    check(ok, "private in the construct-set");

    int last = -1;
    #pragma omp target parallel for lastprivate(last) map(to: a[0:n])
    for (int i = 0; i < n; i++)
        last = a[i] - 1;
    check(last == (n - 1 + 7) * 2, "lastprivate (target parallel for)");

    int i;
    #pragma omp target teams distribute parallel for lastprivate(i) map(tofrom: a[0:n])
    for (i = 0; i < n; i++)
        a[i] -= 1;
    check(i == n, "lastprivate of the loop variable");

    int lv = 0;
    #pragma omp target device(any) map(to: a[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for lastprivate(lv)
    #pragma omp if_device(host) parallel for lastprivate(lv)
    for (int j = 0; j < n; j++)
        lv = a[j] + j;
    check(lv == (n - 1 + 7) * 2 + n - 1, "lastprivate on if_device lines");

    int scale = 3, scratch = 0;
    #pragma omp target firstprivate(scale) private(scratch) map(tofrom: a[0:n])
    {
        scratch = scale * 10;
        a[0] = scratch + a[0];
        a[n - 1] = scale;
    }
    check(a[0] == 30 + 14 && a[n - 1] == 3, "firstprivate/private on target with a compound body");

    free(a);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
