// MACC_FLAGS: --targets=host
/* linear(x: step) and lastprivate(conditional: x) on target parallel for:
 * the host version passes them to the host construct; the GPU version is not
 * built (macc warns, tests/run.sh driver checks it) and the region runs on
 * the host. */
#include <stdio.h>

#define N 1000

int main(void)
{
    int fails = 0;
    int a[N], val = 0, x = -1;
#pragma omp target parallel for linear(val: 2) map(tofrom: a, val)
    for (int i = 0; i < N; ++i) {
        val += 2;
        a[i] = val;
    }
    for (int i = 0; i < N; ++i)
        if (a[i] != 2 * (i + 1)) {
            printf("FAIL: linear: a[%d] = %d\n", i, a[i]);
            fails++;
            break;
        }
    if (val != 2 * N) {
        printf("FAIL: linear: val = %d after the loop\n", val);
        fails++;
    }
#pragma omp target parallel for lastprivate(conditional: x) map(tofrom: x, a)
    for (int k = 0; k < N; k++) {
        a[k] = k;
        if (k == 24 || k == 123)
            x = a[k];
    }
    if (x != 123) {
        printf("FAIL: lastprivate(conditional:): x = %d\n", x);
        fails++;
    }
    printf("%s\n", fails ? "linear_conditional: FAILED" : "linear_conditional: ok");
    return fails != 0;
}
