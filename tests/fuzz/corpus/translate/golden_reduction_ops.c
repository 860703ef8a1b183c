/* reduction with every operator: + * - min max & | ^ && ||. */
#include <limits.h>

int reductions(int n, const int *v, int *out)
{
    int s = 0, p = 1, d = 0, mn = INT_MAX, mx = INT_MIN;
    int band = ~0, bor = 0, bxor = 0, land = 1, lor = 0;
    #pragma omp target teams distribute parallel for map(to: v[0:n]) reduction(+: s) reduction(*: p) reduction(-: d) reduction(min: mn) reduction(max: mx) reduction(&: band) reduction(|: bor) reduction(^: bxor) reduction(&&: land) reduction(||: lor)
    for (int i = 0; i < n; i++) {
        s += v[i];
        p *= v[i] % 3 == 0 ? 1 : 2;
        d -= v[i];
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
        band &= v[i];
        bor |= v[i];
        bxor ^= v[i];
        land = land && v[i];
        lor = lor || v[i];
    }
    out[0] = s; out[1] = p; out[2] = d; out[3] = mn; out[4] = mx;
    out[5] = band; out[6] = bor; out[7] = bxor; out[8] = land; out[9] = lor;
    return s;
}
