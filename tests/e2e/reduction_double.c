/* Reductions on double: + * - min max, through the combined construct-set on
 * the target line, through if_device lines (each with its own reduction
 * clause), and && / || over double conditions. Values are chosen so that every
 * result is exact in any summation order. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static int fails;
static void check(int ok, const char *what, double got, double want)
{
    if (!ok) {
        printf("FAIL: %s: got %.17g, want %.17g\n", what, got, want);
        fails++;
    }
}

int main(void)
{
    int n = N;
    double *x = malloc(n * sizeof(double));
    double *p = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        x[i] = (double)((i * 53) % 200 - 100) * 0.5;  /* -50.0 .. 49.5, exact */
        p[i] = (i % 512 == 0) ? 2.0 : (i % 512 == 7) ? 0.5 : 1.0;
    }
    p[1000] = 4.0;

    double sum = 0.25, prod = 1.5, diff = 10.0;
    #pragma omp target teams distribute parallel for reduction(+: sum) reduction(*: prod) reduction(-: diff) map(to: x[0:n], p[0:n])
    for (int i = 0; i < n; i++) {
        sum += x[i];
        prod *= p[i];
        diff -= x[i];
    }

    double mn = 1e300, mx = -1e300;
    #pragma omp target device(any) map(to: x[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for reduction(min: mn) reduction(max: mx)
    #pragma omp if_device(host) parallel for reduction(min: mn) reduction(max: mx)
    for (int i = 0; i < n; i++) {
        if (x[i] < mn)
            mn = x[i];
        if (x[i] > mx)
            mx = x[i];
    }

    double sum2 = 0.0;
    #pragma omp target device(any) map(to: x[0:n])
    #pragma omp if_device(nvidia, cc35) teams distribute parallel for reduction(+: sum2) num_teams(8) thread_limit(128)
    #pragma omp if_device(host) parallel for reduction(+: sum2) schedule(static)
    for (int i = 0; i < n; i++)
        sum2 += x[i] * 2.0;

    int all_small = 1, any_neg = 0;
    #pragma omp target teams distribute parallel for reduction(&&: all_small) reduction(||: any_neg) map(to: x[0:n])
    for (int i = 0; i < n; i++) {
        all_small = all_small && (x[i] < 50.0);
        any_neg = any_neg || (x[i] < -49.75);
    }

    double esum = 0.25, eprod = 1.5, ediff = 10.0, emn = 1e300, emx = -1e300;
    for (int i = 0; i < n; i++) {
        esum += x[i];
        eprod *= p[i];
        ediff -= x[i];
        if (x[i] < emn)
            emn = x[i];
        if (x[i] > emx)
            emx = x[i];
    }
    check(sum == esum, "+", sum, esum);
    check(prod == eprod && prod == 1.5 * 4.0, "*", prod, eprod);
    check(diff == ediff, "-", diff, ediff);
    check(mn == emn && mn == -50.0, "min", mn, -50.0);
    check(mx == emx && mx == 49.5, "max", mx, 49.5);
    check(sum2 == 2.0 * (esum - 0.25), "+ (if_device)", sum2, 2.0 * (esum - 0.25));
    check(all_small == 1, "&&", all_small, 1);
    check(any_neg == 1, "||", any_neg, 1);

    free(x);
    free(p);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
