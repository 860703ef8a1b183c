/* Declare target variables and functions with the newer region forms:
 * parallel regions (for, critical, atomic), loop construct-sets, directives
 * nested on their own lines, types declared inside the function, a declare
 * target function calling OpenMP's device queries. */
#include <omp.h>
#include <stdio.h>

int total;
double acc[64];
int hist[8];
#pragma omp declare target enter(total, acc, hist)

static int where(void) { return omp_is_initial_device() ? -1 : omp_get_num_teams() > 0; }
static double twice(double v) { return 2.0 * v; }
#pragma omp declare target(where, twice)

static int fails;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("FAIL line %d: %s\n", __LINE__, #c);                                            \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

int main(void)
{
    struct cell { int k; double w; };
    struct cell c = {3, 0.5};
    int n = 64, seen = 0, dev = 0;

    #pragma omp target map(from: dev)
    dev = !omp_is_initial_device();

    for (int i = 0; i < n; i++)
        acc[i] = i;
    #pragma omp target update to(acc)

    /* a parallel region: a worksharing loop, then critical and atomic on
     * declare target variables */
    #pragma omp target parallel num_threads(32)
    {
        #pragma omp for
        for (int i = 0; i < 64; i++)
            acc[i] = twice(acc[i]);
        #pragma omp critical
        total += 1;
        #pragma omp atomic
        hist[omp_get_thread_num() % 8] += 1;
    }
    #pragma omp target update from(acc, total, hist)
    CHECK(acc[10] == 20.0);
    int sum = 0;
    for (int k = 0; k < 8; k++)
        sum += hist[k];
    CHECK(total >= 1 && sum == total);

    /* teams + loop nested on their own lines; a local type captured */
    #pragma omp target
    #pragma omp teams loop
    for (int i = 0; i < 64; i++)
        acc[i] = acc[i] * c.w + c.k;
    #pragma omp target update from(acc)
    CHECK(acc[10] == 13.0);

    #pragma omp target map(from: seen)
    seen = where();
    CHECK(seen == (dev ? 1 : -1));

    if (fails)
        return 1;
    printf("PASS (regions on the %s)\n", dev ? "GPU" : "host");
    return 0;
}
