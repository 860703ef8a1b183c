/* Reductions over every arithmetic type the kernels handle: float, long,
 * unsigned, long long, unsigned long long, short, char; with +, *, min, max,
 * &, |, ^, && and ||. Values are chosen so that every result is exact. */
#include <stdio.h>

#define N 4096

static int failures;

static void check(const char *what, double got, double want)
{
    if (got != want) {
        printf("FAIL: %s = %.17g, expected %.17g\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    int n = N;
    float fsum = 0.0f, fmax = -1.0f;
    long lsum = 0, lmin = 1L << 40;
    unsigned uor = 0u, uand = 0xffffffffu, uxor = 0u;
    long long llprod = 1;
    unsigned long long ullsum = 0;
    short smax = -100;
    char cmin = 100;
    int land = 1, lor = 0;

    #pragma omp target teams distribute parallel for map(tofrom: fsum, fmax, lsum, lmin) \
        reduction(+: fsum, lsum) reduction(max: fmax) reduction(min: lmin)
    for (int i = 0; i < n; i++) {
        fsum += 0.5f;
        if ((float)i > fmax)
            fmax = (float)i;
        lsum += (long)i * 1000000L;
        if ((long)i + 5 < lmin)
            lmin = (long)i + 5;
    }
    #pragma omp target teams distribute parallel for reduction(|: uor) reduction(&: uand) reduction(^: uxor)
    for (int i = 0; i < n; i++) {
        uor |= 1u << (i % 32);
        uand &= ~(1u << (i % 31));
        uxor ^= (unsigned)i;
    }
    #pragma omp target teams distribute parallel for reduction(*: llprod) reduction(+: ullsum)
    for (int i = 0; i < n; i++) {
        llprod *= (i % 1024 == 7) ? 3 : 1;
        ullsum += 1ULL << 33;
    }
    #pragma omp target teams distribute parallel for reduction(max: smax) reduction(min: cmin) \
        reduction(&&: land) reduction(||: lor)
    for (int i = 0; i < n; i++) {
        short v = (short)(i % 300);
        if (v > smax)
            smax = v;
        char c = (char)(i % 90 + 3);
        if (c < cmin)
            cmin = c;
        land = land && (i >= 0);
        lor = lor || (i == n - 1);
    }

    unsigned want_xor = 0;
    for (int i = 0; i < n; i++)
        want_xor ^= (unsigned)i;
    check("fsum", fsum, 0.5 * N);
    check("fmax", fmax, N - 1);
    check("lsum", (double)lsum, (double)((long)N * (N - 1) / 2 * 1000000L));
    check("lmin", (double)lmin, 5);
    check("uor", uor, 0xffffffffu);
    check("uand", uand, 0x80000000u);
    check("uxor", uxor, want_xor);
    check("llprod", (double)llprod, 81); /* 3^4: i % 1024 == 7 four times */
    check("ullsum", (double)ullsum, (double)((unsigned long long)N << 33));
    check("smax", smax, 299);
    check("cmin", cmin, 3);
    check("land", land, 1);
    check("lor", lor, 1);
    if (failures)
        return 1;
    printf("PASS\n");
    return 0;
}
