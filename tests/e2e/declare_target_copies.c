/* The device copy of a declare target variable is separate from the host
 * variable: written on one side, it changes on the other only through target
 * update (or a map with always). Where the regions run on the host (no GPU),
 * the copy is the variable itself; the checks follow where they ran. */
#include <omp.h>
#include <stdio.h>

int g = 5;
double arr[100];
int lk[10];
#pragma omp declare target enter(g, arr) link(lk)

static int get_g(void) { return g; }
static void bump(int k) { lk[k] += 100; }
#pragma omp declare target(get_g, bump)

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
    int dev = 0, seen = 0;
    #pragma omp target map(from: dev)
    dev = !omp_is_initial_device();

    g = 6; /* the host's variable: the device copy keeps its initialiser */
    #pragma omp target map(from: seen)
    seen = get_g();
    CHECK(seen == (dev ? 5 : 6));
    #pragma omp target update to(g)
    #pragma omp target map(from: seen)
    seen = g;
    CHECK(seen == 6);
    #pragma omp target
    g = 42;
    CHECK(g == (dev ? 6 : 42));
    #pragma omp target update from(g)
    CHECK(g == 42);

    for (int i = 0; i < 100; i++)
        arr[i] = i;
    #pragma omp target update to(arr)
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < 100; i++)
        arr[i] *= 2;
    CHECK(arr[10] == (dev ? 10 : 20));
    #pragma omp target update from(arr[10:5])
    CHECK(arr[10] == 20 && arr[15] == (dev ? 15 : 30));
    arr[0] = 1000; /* always: copied both ways although present */
    #pragma omp target map(always, tofrom: arr)
    arr[0] += 1;
    CHECK(arr[0] == 1001);

    /* link: mapped where a region or a data construct maps it */
    for (int k = 0; k < 10; k++)
        lk[k] = k;
    #pragma omp target map(tofrom: lk)
    for (int k = 0; k < 10; k++)
        bump(k);
    CHECK(lk[3] == 103);
    #pragma omp target enter data map(to: lk)
    #pragma omp target
    bump(1);
    CHECK(lk[1] == (dev ? 101 : 201));
    #pragma omp target exit data map(from: lk)
    CHECK(lk[1] == 201);

    if (fails) {
        printf("FAILED (%d)\n", fails);
        return 1;
    }
    printf("PASS (regions on the %s)\n", dev ? "GPU" : "host");
    return 0;
}
