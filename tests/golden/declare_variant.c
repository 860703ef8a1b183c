/* declare variant: calls in a region's code resolve to the variant for the
 * region's context: construct={target} in both versions, device={kind(gpu)}
 * (more specific) in the kernel; outside regions the base function. */
#include <stdio.h>
#include <omp.h>

#define N 256

int tgt_fn(int x) { return x + 100; }
int gpu_fn(int x) { return x + 200; }
int par_fn(int x) { return x + 300; }

#pragma omp declare variant(tgt_fn) match(construct = {target})
#pragma omp declare variant(gpu_fn) match(construct = {target}, device = {kind(gpu)})
#pragma omp declare variant(par_fn) match(construct = {target, teams, parallel, for})
int base_fn(int x) { return x; }

int main(void)
{
    int fails = 0;
    int r[N], host[N], s[N];
    if (base_fn(1) != 1) {
        printf("FAIL: base outside regions: %d\n", base_fn(1));
        fails++;
    }
#pragma omp target map(from: r, host)
    {
        for (int i = 0; i < N; i++) {
            r[i] = base_fn(i);
            host[i] = omp_is_initial_device();
        }
    }
    for (int i = 0; i < N; i++)
        if (r[i] != i + (host[i] ? 100 : 200)) {
            printf("FAIL: target variant: r[%d] = %d (host %d)\n", i, r[i], host[i]);
            fails++;
            break;
        }
#pragma omp target teams distribute parallel for map(from: s)
    for (int i = 0; i < N; i++)
        s[i] = base_fn(i);
    for (int i = 0; i < N; i++)
        if (s[i] != i + 300) {
            printf("FAIL: construct variant: s[%d] = %d\n", i, s[i]);
            fails++;
            break;
        }
    printf("%s\n", fails ? "declare_variant: FAILED" : "declare_variant: ok");
    return fails != 0;
}
