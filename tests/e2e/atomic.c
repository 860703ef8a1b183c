/* #pragma omp atomic in every form (update, read, write, capture, compare)
 * and #pragma omp critical inside regions, on int, unsigned, long long,
 * float, double, char and short. Every result depends on the updates being
 * atomic: with the pragma dropped, concurrent increments are lost, and the
 * captured tickets repeat. */
#include <stdio.h>
#include <stdlib.h>

#define N 200000

static int fails;
static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        fails++;
    }
}

/* a device function with an atomic on memory it is given */
static void bump(int *h, int k)
{
    #pragma omp atomic
    h[k]++;
}

int main(void)
{
    int n = N;
    int *seen = calloc(n, sizeof(int));
    int *a = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        a[i] = (int)((i * 7919L) % 1000) - 500; /* -500 .. 499 */

    int count = 0, ticket = 0, hist[16] = {0};
    unsigned ucount = 0;
    long long lsum = 0;
    float fsum = 0.0f;
    double dsum = 0.0, dmax = -1e300;
    char c8 = 0;
    short s16 = 0;
    int imin = 1 << 30, imax = -(1 << 30), flag = 0, last = -1;
    #pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: seen[0:n], count, ticket, hist, \
        ucount, lsum, fsum, dsum, dmax, c8, s16, imin, imax, flag, last)
    for (int i = 0; i < n; i++) {
        int v;
        #pragma omp atomic
        count++;
        #pragma omp atomic update
        ucount += 2u;
        #pragma omp atomic
        lsum = lsum + (long long)a[i] * 1000000LL;
        #pragma omp atomic
        fsum += 0.25f;
        #pragma omp atomic
        dsum -= 0.5;
        #pragma omp atomic
        c8 ^= (char)(1 << (i % 7));
        #pragma omp atomic
        s16 += (short)(i % 3 - 1);
        #pragma omp atomic capture
        v = ticket++;
        if (v >= 0 && v < n) {
            #pragma omp atomic
            seen[v] += 1;
        }
        bump(hist, i % 16);
        #pragma omp atomic compare
        if (a[i] < imin) { imin = a[i]; }
        #pragma omp atomic compare
        imax = imax < a[i] ? a[i] : imax;
        #pragma omp atomic compare
        dmax = dmax < (double)a[i] * 0.5 ? (double)a[i] * 0.5 : dmax;
        #pragma omp atomic compare
        if (flag == 0) { flag = i + 1; }
        if (i == n - 1) {
            #pragma omp atomic write seq_cst
            last = i;
        }
    }
    int dup = 0;
    for (int i = 0; i < n; i++)
        dup += seen[i] != 1;
    int hok = 1;
    for (int k = 0; k < 16; k++)
        hok &= hist[k] == n / 16 + (k < n % 16);
    long long want_l = 0;
    int want_min = 1 << 30, want_max = -(1 << 30);
    char want_c = 0;
    int want_s = 0;
    for (int i = 0; i < n; i++) {
        want_l += (long long)a[i] * 1000000LL;
        want_min = a[i] < want_min ? a[i] : want_min;
        want_max = a[i] > want_max ? a[i] : want_max;
        want_c ^= (char)(1 << (i % 7));
        want_s += i % 3 - 1;
    }
    check(count == n, "count++");
    check(ucount == 2u * (unsigned)n, "unsigned +=");
    check(lsum == want_l, "long long x = x + e");
    check(fsum == 0.25f * (float)n, "float +=");
    check(dsum == -0.5 * n, "double -=");
    check(c8 == want_c, "char ^=");
    check(s16 == (short)want_s, "short +=");
    check(ticket == n && dup == 0, "capture v = x++: every ticket once");
    check(hok, "atomic in a called function");
    check(imin == want_min && imax == want_max, "compare: min and max");
    check(dmax == want_max * 0.5, "compare: double max");
    check(flag >= 1 && flag <= n, "compare: x == e ? d : x");
    check(last == n - 1, "write");

    /* capture of the new value and the structured-block forms */
    int x = 0, y = 100, sum_new = 0, sum_old = 0;
    #pragma omp target teams distribute parallel for map(tofrom: x, y, sum_new, sum_old)
    for (int i = 0; i < 1000; i++) {
        int v, w;
        #pragma omp atomic capture
        { v = x; x += 2; }
        #pragma omp atomic capture
        { y -= 1; w = y; }
        #pragma omp atomic
        sum_old += v;
        #pragma omp atomic
        sum_new += w;
    }
    /* the old values are 0, 2, ..., 1998 in some order; the new ones 99 .. -900 */
    check(x == 2000 && sum_old == 999000, "capture { v = x; x += e; }");
    check(y == -900 && sum_new == (99 + -900) * 1000 / 2, "capture { x -= e; v = x; }");

    /* read and critical in a region that is one team */
    double acc = 0.0;
    int inside = 0, most = 0;
    #pragma omp target map(tofrom: acc, inside, most) map(to: a[0:n])
    {
        #pragma omp parallel for
        for (int i = 0; i < n; i++) {
            #pragma omp critical (acc)
            {
                inside++;
                if (inside > most)
                    most = inside;
                acc += a[i] > 0 ? 1.0 : 0.0;
                inside--;
            }
        }
    }
    int pos = 0;
    for (int i = 0; i < n; i++)
        pos += a[i] > 0;
    check(acc == (double)pos && most == 1 && inside == 0, "critical");

    /* an atomic on a variable of the team, declared in the region */
    int teamcount[8] = {0};
    #pragma omp target teams distribute map(tofrom: teamcount) map(to: a[0:n])
    for (int t = 0; t < 8; t++) {
        int local = 0;
        #pragma omp parallel for
        for (int i = 0; i < n; i++) {
            if (a[i] % 8 == t || a[i] % 8 == t - 8) {
                #pragma omp atomic
                local++;
            }
        }
        teamcount[t] = local;
    }
    int tc_ok = 1;
    for (int t = 0; t < 8; t++) {
        int want = 0;
        for (int i = 0; i < n; i++)
            want += a[i] % 8 == t || a[i] % 8 == t - 8;
        tc_ok &= teamcount[t] == want;
    }
    check(tc_ok, "atomic on a variable of the team");

    free(seen);
    free(a);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
