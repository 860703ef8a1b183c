/* Directives standing where C wants one statement: `#pragma omp atomic` as
 * the unbraced body of a loop or an if, a region as the body of an if/else,
 * and a host construct (single, critical, masked) directly after a `target
 * parallel` line, the construct's block being the region's statement. */
#include <stdio.h>
#include <omp.h>

#define N 1000

int main(void)
{
    int fails = 0;
    int counts = 0, evens = 0, r = 0, once = 0, hits = 0;

#pragma omp target teams map(tofrom: counts, evens) num_teams(1)
    {
#pragma omp parallel
        {
#pragma omp for
            for (int i = 0; i < N; ++i)
#pragma omp atomic
                counts += 1;
#pragma omp for
            for (int i = 0; i < N; ++i)
                if (i % 2 == 0)
#pragma omp atomic update
                    evens++;
        }
    }
    if (counts != N || evens != N / 2) {
        printf("FAIL: unbraced atomic bodies: %d %d\n", counts, evens);
        fails++;
    }

    int a[N];
    for (int i = 0; i < N; i++)
        a[i] = i;
    if (counts == N)
#pragma omp target teams distribute parallel for map(tofrom: a)
        for (int i = 0; i < N; i++)
            a[i] *= 2;
    else
#pragma omp target teams distribute parallel for map(tofrom: a)
        for (int i = 0; i < N; i++)
            a[i] = -1;
    for (int i = 0; i < N; i++)
        if (a[i] != 2 * i) {
            printf("FAIL: region as an if body: a[%d] = %d\n", i, a[i]);
            fails++;
            break;
        }

#pragma omp target parallel num_threads(8) map(tofrom: r, once)
#pragma omp single
    {
        r = counts + 1;
        once++;
    }
    if (r != N + 1 || once != 1) {
        printf("FAIL: target parallel + single: %d %d\n", r, once);
        fails++;
    }

#pragma omp target parallel num_threads(8) map(tofrom: hits)
#pragma omp critical
    hits++;
    if (hits != 8) {
        printf("FAIL: target parallel + critical: %d\n", hits);
        fails++;
    }

    printf("%s\n", fails ? "directive_bodies: FAILED" : "directive_bodies: ok");
    return fails != 0;
}
