/* defaultmap: scalars written in a region come back with tofrom: scalar (and
 * not without it); arrays follow the aggregate behaviour; thread_limit bounds
 * the threads of the host version too; a mapped scalar written in a region
 * with a loop inside is written once per team, not once per thread. */
#include <omp.h>
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

typedef struct { int hits; double sum; } stats;

int main(void)
{
    int n = 10000;
    int s = 0, keep = 7;
    double d = 1.0;
    #pragma omp target defaultmap(tofrom: scalar)
    {
        s = 42;
        d *= 2.5;
    }
    check(s == 42 && d == 2.5, "defaultmap(tofrom: scalar) on a block");

    #pragma omp target defaultmap(tofrom: scalar) firstprivate(keep)
    {
        keep = 9;
        s += keep;
    }
    check(s == 51 && keep == 7, "firstprivate stays firstprivate under defaultmap(tofrom: scalar)");

    int lastv = -1;
    #pragma omp target teams distribute parallel for defaultmap(tofrom: scalar)
    for (int i = 0; i < n; i++)
        if (i == n - 1)
            lastv = i;
    check(lastv == n - 1, "defaultmap(tofrom: scalar) on a loop");

    int untouched = 3;
    #pragma omp target
    {
        untouched = 4;
    }
    check(untouched == 3, "scalars are firstprivate by default");

    stats st = {0, 0.0};
    #pragma omp target defaultmap(tofrom: aggregate)
    {
        st.hits = 5;
        st.sum = 0.5;
    }
    check(st.hits == 5 && st.sum == 0.5, "defaultmap(tofrom: aggregate): a struct");

    int arr[16];
    for (int i = 0; i < 16; i++)
        arr[i] = i;
    #pragma omp target defaultmap(firstprivate: aggregate)
    {
        arr[0] = 100;
    }
    check(arr[0] == 0, "defaultmap(firstprivate: aggregate): an array");
    #pragma omp target defaultmap(default: aggregate) defaultmap(none: scalar) map(tofrom: s)
    {
        arr[1] = 101;
        s = 1;
    }
    check(arr[1] == 101 && s == 1, "defaultmap(default: aggregate), none: scalar with a map");

    /* thread_limit bounds the threads of the host version (and the GPU's block) */
    int most = 0;
    #pragma omp target teams distribute parallel for thread_limit(2) map(tofrom: most)
    for (int i = 0; i < n; i++) {
        int t = omp_get_num_threads();
        #pragma omp atomic compare
        if (t > most) { most = t; }
    }
    check(most >= 1 && most <= 2, "thread_limit(2)");

    /* mapped scalars in a region with a loop inside: written once */
    int calls = 0, total = 0;
    double *a = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        a[i] = 1.0;
    #pragma omp target map(tofrom: calls, total) map(to: a[0:n])
    {
        calls += 1;
        #pragma omp parallel for reduction(+: total)
        for (int i = 0; i < n; i++)
            total += (int)a[i];
        calls += 1;
    }
    check(calls == 2 && total == n, "mapped scalars in a region with a loop directive");

    int rows = 0;
    double grand = 0.0;
    #pragma omp target teams distribute map(to: a[0:n]) map(tofrom: rows) reduction(+: grand)
    for (int r = 0; r < 10; r++) {
        double part = 0.0;
        #pragma omp parallel for reduction(+: part)
        for (int i = 0; i < n; i++)
            part += a[i];
        grand += part;
        #pragma omp atomic
        rows++;
    }
    check(rows == 10 && grand == 10.0 * n, "teams distribute: reduction and atomic per team");

    /* a struct the region writes, named by no clause: an aggregate, implicitly tofrom
     * (defaultmap(default) says the same); a scalar stays firstprivate */
    struct pair { int s; int v[4]; } pr = {0, {0, 0, 0, 0}};
    int sc = 1;
    #pragma omp target defaultmap(default)
    {
        pr.s = 10;
        pr.v[3] = 7;
        sc = 17;
    }
    check(pr.s == 10 && pr.v[3] == 7 && sc == 1, "implicit struct map is tofrom, scalar firstprivate");
    free(a);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
