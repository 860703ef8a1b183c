/* Every reduction operator on int through target teams distribute parallel
 * for: + * - min max & | ^ && ||. The original value of each reduction
 * variable takes part in the result. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

static int fails;
static void check(int ok, const char *what, long got, long want)
{
    if (!ok) {
        printf("FAIL: %s: got %ld, want %ld\n", what, got, want);
        fails++;
    }
}

int main(void)
{
    int n = N;
    int *a = malloc(n * sizeof(int));
    int *f = malloc(n * sizeof(int));   /* factors for * */
    int *bits = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        a[i] = (i * 37) % 101 - 50;       /* -50 .. 50 */
        f[i] = (i % 97 == 3) ? 2 : 1;      /* 11 twos */
        bits[i] = 1 << (i % 24);
    }
    f[500] = -1;

    int sum = 5;
    #pragma omp target teams distribute parallel for reduction(+: sum) map(to: a[0:n])
    for (int i = 0; i < n; i++)
        sum += a[i];

    int prod = 3;
    #pragma omp target teams distribute parallel for reduction(*: prod) map(to: f[0:n])
    for (int i = 0; i < n; i++)
        prod *= f[i];

    int diff = 100;
    #pragma omp target teams distribute parallel for reduction(-: diff) map(to: a[0:n])
    for (int i = 0; i < n; i++)
        diff -= a[i];

    int mn = INT_MAX, mx = INT_MIN;
    #pragma omp target teams distribute parallel for reduction(min: mn) reduction(max: mx) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        mn = a[i] < mn ? a[i] : mn;
        mx = a[i] > mx ? a[i] : mx;
    }

    int band = ~0x40000000, bor = 0x40000000, bxor = 0x1;
    #pragma omp target teams distribute parallel for reduction(&: band) reduction(|: bor) reduction(^: bxor) map(to: bits[0:n])
    for (int i = 0; i < n; i++) {
        band &= ~bits[i] | 0x5;
        bor |= bits[i] & 0xfff0;
        bxor ^= bits[i];
    }

    int land_t = 1, land_f = 1, lor_t = 0, lor_f = 0;
    #pragma omp target teams distribute parallel for reduction(&&: land_t, land_f) reduction(||: lor_t, lor_f) map(to: a[0:n])
    for (int i = 0; i < n; i++) {
        land_t = land_t && (a[i] > -51);
        land_f = land_f && (a[i] != 7);
        lor_t = lor_t || (a[i] == 50);
        lor_f = lor_f || (a[i] > 50);
    }

    /* The expected values, computed serially. */
    int esum = 5, eprod = 3, ediff = 100, emn = INT_MAX, emx = INT_MIN;
    int eband = ~0x40000000, ebor = 0x40000000, ebxor = 0x1;
    int eland_t = 1, eland_f = 1, elor_t = 0, elor_f = 0;
    for (int i = 0; i < n; i++) {
        esum += a[i];
        eprod *= f[i];
        ediff -= a[i];
        emn = a[i] < emn ? a[i] : emn;
        emx = a[i] > emx ? a[i] : emx;
        eband &= ~bits[i] | 0x5;
        ebor |= bits[i] & 0xfff0;
        ebxor ^= bits[i];
        eland_t = eland_t && (a[i] > -51);
        eland_f = eland_f && (a[i] != 7);
        elor_t = elor_t || (a[i] == 50);
        elor_f = elor_f || (a[i] > 50);
    }
    check(prod == -3 * 2048 && eprod == prod, "*", prod, -3 * 2048);
    check(sum == esum, "+", sum, esum);
    check(diff == ediff && diff == 105 - sum, "-", diff, ediff);
    check(mn == -50 && mn == emn, "min", mn, -50);
    check(mx == 50 && mx == emx, "max", mx, 50);
    check(band == eband && band == (~0x40000000 & ~0xfffffa), "&", band, eband);
    check(bor == ebor && bor == 0x4000fff0, "|", bor, ebor);
    check(bxor == ebxor, "^", bxor, ebxor);
    check(land_t == 1 && eland_t == 1, "&& (true)", land_t, 1);
    check(land_f == 0 && eland_f == 0, "&& (false)", land_f, 0);
    check(lor_t == 1 && elor_t == 1, "|| (true)", lor_t, 1);
    check(lor_f == 0 && elor_f == 0, "|| (false)", lor_f, 0);

    free(a);
    free(f);
    free(bits);
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
