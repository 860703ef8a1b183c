/* firstprivate and lastprivate arrays: each thread (or team, or task) gets
 * its own copy, initialised from the original for firstprivate; lastprivate
 * copies back the sequentially last iteration's array. With one array shared
 * by all threads the per-iteration sums below see other threads' writes, and
 * a lastprivate array that stays a pointer crashes. */
#include <stdio.h>
#include <stdlib.h>

#define N 100000

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
    int n = N;
    int *out = malloc(n * sizeof(int));
    int t[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    /* firstprivate in the construct-set: a copy per thread */
    #pragma omp target teams distribute parallel for firstprivate(t) map(from: out[0:n])
    for (int i = 0; i < n; i++) {
        int s = 0;
        for (int k = 0; k < 8; k++)
            t[k] += i;
        for (int k = 0; k < 8; k++)
            s += t[k] - i;
        for (int k = 0; k < 8; k++)
            t[k] -= i;
        out[i] = s;
        if (i == 0)
            t[0] = 1000; /* a copy's change: never seen by the original */
    }
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= out[i] == 36 || out[i] == 36 + 999; /* after the thread's iteration 0 */
    check(ok, "firstprivate array in the construct-set: private copies");
    check(t[0] == 1 && t[7] == 8, "firstprivate array: the original is unchanged");

    /* firstprivate on if_device lines */
    double w[4] = {0.5, 1.5, 2.5, 3.5};
    #pragma omp target device(any) map(from: out[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for firstprivate(w)
    #pragma omp if_device(host) parallel for firstprivate(w)
    for (int i = 0; i < n; i++) {
        w[i % 4] += 1.0;
        out[i] = (int)(w[0] + w[1] + w[2] + w[3]) >= 8;
        w[i % 4] -= 1.0;
    }
    ok = 1;
    for (int i = 0; i < n; i++)
        ok &= out[i] == 1;
    check(ok && w[0] == 0.5, "firstprivate array on if_device lines");

    /* private arrays on if_device lines: a copy per thread, uninitialised */
    int scratch[4] = {0, 0, 0, 0};
    #pragma omp target device(any) map(from: out[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for private(scratch)
    #pragma omp if_device(host) parallel for private(scratch)
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++)
            scratch[k] = i + k;
        out[i] = scratch[0] + scratch[1] + scratch[2] + scratch[3] - 4 * i;
    }
    ok = 1;
    for (int i = 0; i < n; i++)
        ok &= out[i] == 6;
    check(ok && scratch[3] == 0, "private array on if_device lines");

    /* firstprivate on the target of a block: one copy for the task */
    int base[4] = {10, 20, 30, 40};
    int res[2] = {0, 0};
    #pragma omp target firstprivate(base) map(tofrom: res)
    {
        base[0] += 5;
        res[0] = base[0] + base[3];
        res[1] = base[1];
    }
    check(res[0] == 55 && res[1] == 20 && base[0] == 10, "firstprivate array on a target block");

    /* firstprivate on teams distribute with a loop inside: one copy per team */
    int g[4] = {1, 1, 1, 1};
    int rows[64];
    #pragma omp target teams distribute firstprivate(g) map(from: rows)
    for (int r = 0; r < 64; r++) {
        g[0] = r;
        int s = 0;
        #pragma omp parallel for reduction(+: s)
        for (int j = 0; j < 100; j++)
            s += g[j % 4];
        rows[r] = s;
    }
    ok = 1;
    for (int r = 0; r < 64; r++)
        ok &= rows[r] == 25 * r + 75;
    check(ok && g[0] == 1, "firstprivate array per team");

    /* lastprivate arrays */
    int last[3] = {-1, -1, -1};
    #pragma omp target teams distribute parallel for lastprivate(last)
    for (int i = 0; i < n; i++) {
        last[0] = i;
        last[1] = 2 * i;
        last[2] = i % 7;
    }
    check(last[0] == n - 1 && last[1] == 2 * (n - 1) && last[2] == (n - 1) % 7, "lastprivate array");

    double both[2] = {1.0, 2.0};
    #pragma omp target parallel for firstprivate(both) lastprivate(both)
    for (int i = 0; i < 1000; i++) {
        if (i == 999)
            both[1] += 10.0;
    }
    check(both[0] == 1.0 && both[1] == 12.0, "firstprivate and lastprivate array");

    int lt[2] = {0, 0};
    #pragma omp target teams distribute lastprivate(lt)
    for (int r = 0; r < 50; r++) {
        lt[0] = r;
        #pragma omp parallel for
        for (int j = 0; j < 4; j++)
            if (j == 0)
                lt[1] = r * 3;
    }
    check(lt[0] == 49 && lt[1] == 147, "lastprivate array on teams distribute");

    free(out);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
