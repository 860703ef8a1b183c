/* One loop with many reduction variables of different types and operators
 * (each needs its own block combine: the kernel must still fit in shared
 * memory), and reductions inside a teams region: over an inner loop into a
 * mapped scalar, and over the teams. */
#include <stdio.h>

#define N 20000

static int fails;
static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        fails++;
    }
}

int main(void)
{
    int n = N;
    double dsum = 0.0, dmax = -1.0, dmin = 1e9, dprod = 1.0;
    float fsum = 0.0f, fmax = -1.0f;
    long long lsum = 0, lmin = 1LL << 50;
    unsigned long long uor = 0;
    int imax = -1, iand = -1, ixor = 0, land = 1, lor = 0;
    short smin = 30000;
    char cmax = 0;
    #pragma omp target teams distribute parallel for reduction(+: dsum, fsum, lsum) \
        reduction(max: dmax, fmax, imax, cmax) reduction(min: dmin, lmin, smin) reduction(*: dprod) \
        reduction(|: uor) reduction(&: iand) reduction(^: ixor) reduction(&&: land) reduction(||: lor)
    for (int i = 0; i < n; i++) {
        dsum += 0.5;
        fsum += 1.0f;
        lsum += i;
        dmax = dmax > (double)i ? dmax : (double)i;
        fmax = fmax > (float)(i % 1000) ? fmax : (float)(i % 1000);
        imax = imax > i % 777 ? imax : i % 777;
        cmax = cmax > (char)(i % 100) ? cmax : (char)(i % 100);
        dmin = dmin < (double)(i + 3) ? dmin : (double)(i + 3);
        lmin = lmin < (long long)i - 5 ? lmin : (long long)i - 5;
        smin = smin < (short)(i % 300 + 2) ? smin : (short)(i % 300 + 2);
        dprod *= (i % 5000 == 1) ? 2.0 : 1.0;
        uor |= 1ULL << (i % 64);
        iand &= ~(1 << (i % 16));
        ixor ^= i;
        land = land && i >= 0;
        lor = lor || i == 1234;
    }
    int want_xor = 0;
    for (int i = 0; i < n; i++)
        want_xor ^= i;
    check(dsum == 0.5 * n && fsum == (float)n && lsum == (long long)n * (n - 1) / 2, "sums");
    check(dmax == n - 1 && fmax == 999.0f && imax == 776 && cmax == 99, "max");
    check(dmin == 3.0 && lmin == -5 && smin == 2, "min");
    check(dprod == 16.0, "product");
    check(uor == ~0ULL && iand == (int)0xffff0000 && ixor == want_xor, "bitwise");
    check(land == 1 && lor == 1, "logical");

    /* a region with an inner loop: its reduction goes into a mapped scalar */
    long long total = 10;
    #pragma omp target map(tofrom: total)
    {
        #pragma omp parallel for reduction(+: total)
        for (int i = 0; i < n; i++)
            total += i % 10;
    }
    check(total == 10 + (long long)n / 10 * 45, "inner reduction into a mapped scalar");

    /* teams distribute with a reduction of the teams and inner loops */
    double grand = 1.0;
    int most = 0;
    #pragma omp target teams distribute reduction(+: grand) reduction(max: most)
    for (int r = 0; r < 40; r++) {
        double row = 0.0;
        #pragma omp parallel for reduction(+: row)
        for (int j = 0; j < 100; j++)
            row += j;
        grand += row;
        most = r > most ? r : most;
    }
    check(grand == 1.0 + 40 * 4950.0 && most == 39, "reductions of teams distribute");
    if (fails)
        return 1;
    printf("PASS\n");
    return 0;
}
