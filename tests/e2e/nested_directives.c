/* Directives nested on their own lines mean the combined construct:
 * target + teams + distribute parallel for (clauses on each line), the same
 * with braces holding only the nested construct, target + parallel for with a
 * reduction, target + parallel + for simd, target + simd, target + loop,
 * target + teams + loop with collapse, target data around target + teams
 * distribute parallel for, and target teams + distribute parallel for. */
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, long i, double got, double want)
{
    printf("FAIL: %s[%ld] = %g, want %g\n", what, i, got, want);
    return 1;
}

int main(void)
{
    int n = 10000, rows = 64, cols = 50;
    double *a = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    double *m = malloc(rows * cols * sizeof(double));
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 0;
    }

    /* target + teams + distribute parallel for: a[i] = 2 * i */
    double scale = 2.0;
    #pragma omp target map(tofrom: a[0:n])
    #pragma omp teams num_teams(16) thread_limit(128)
    #pragma omp distribute parallel for schedule(static)
    for (int i = 0; i < n; i++)
        a[i] *= scale;

    /* braces holding only the nested construct: a[i] = 2 * i + 1 */
    #pragma omp target map(tofrom: a[0:n])
    {
        #pragma omp teams
        {
            #pragma omp distribute parallel for
            for (int i = 0; i < n; i++)
                a[i] += 1;
        }
    }

    /* target + parallel for with a reduction: sum of (2i + 1) = n * n */
    double sum = 0;
    #pragma omp target map(to: a[0:n]) map(tofrom: sum)
    #pragma omp parallel for reduction(+: sum)
    for (int i = 0; i < n; i++)
        sum += a[i];

    /* target + parallel + for simd: b[i] = a[i] - 1 = 2i */
    #pragma omp target map(to: a[0:n]) map(from: b[0:n])
    #pragma omp parallel
    #pragma omp for simd
    for (int i = 0; i < n; i++)
        b[i] = a[i] - 1;

    /* target + simd: b[i] = 2i + 3 */
    #pragma omp target map(tofrom: b[0:n])
    #pragma omp simd
    for (int i = 0; i < n; i++)
        b[i] += 3;

    /* target + loop with a max reduction */
    double big = -1;
    #pragma omp target map(to: b[0:n]) map(tofrom: big)
    #pragma omp loop reduction(max: big)
    for (int i = 0; i < n; i++)
        big = b[i] > big ? b[i] : big;

    /* target + teams + loop, collapse(2): m[r][c] = r * cols + c */
    #pragma omp target map(from: m[0:rows * cols])
    #pragma omp teams
    #pragma omp loop collapse(2)
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            m[r * cols + c] = r * cols + c;

    /* target data around target + teams + distribute parallel for:
     * a[i] = 2i + 1 + 2i + 3 = 4i + 4 */
    #pragma omp target data map(tofrom: a[0:n]) map(to: b[0:n])
    {
        #pragma omp target
        #pragma omp teams distribute parallel for
        for (int i = 0; i < n; i++)
            a[i] += b[i];
    }

    /* target teams + distribute parallel for simd: b[i] = 4i + 4 - (2i + 3) = 2i + 1 */
    #pragma omp target teams map(to: a[0:n]) map(tofrom: b[0:n])
    #pragma omp distribute parallel for simd
    for (int i = 0; i < n; i++)
        b[i] = a[i] - b[i];

    if (sum != (double)n * n)
        return fail("sum", 0, sum, (double)n * n);
    if (big != 2.0 * (n - 1) + 3)
        return fail("big", 0, big, 2.0 * (n - 1) + 3);
    for (int i = 0; i < n; i++) {
        if (a[i] != 4.0 * i + 4)
            return fail("a", i, a[i], 4.0 * i + 4);
        if (b[i] != 2.0 * i + 1)
            return fail("b", i, b[i], 2.0 * i + 1);
    }
    for (int i = 0; i < rows * cols; i++)
        if (m[i] != i)
            return fail("m", i, m[i], i);
    free(a);
    free(b);
    free(m);
    printf("PASS\n");
    return 0;
}
