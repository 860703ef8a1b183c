/* thread_limit bounds num_threads on every device, and omp_get_thread_limit()
 * in the region's code reads the region's limit (host version: the clause's
 * value; GPU: the block size, at most the limit). */
#include <stdio.h>
#include <omp.h>

#define N 1024

int main(void)
{
    int fails = 0;
    int limits[] = {1, 10, 100, 10000}, nths[] = {1, 10, 100, 10000};
    static int nt[N], tl[N];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int lim = limits[a], nth = nths[b];
            for (int i = 0; i < N; i++)
                nt[i] = tl[i] = -1;
#pragma omp target teams distribute parallel for map(tofrom: nt, tl) num_threads(nth) thread_limit(lim)
            for (int i = 0; i < N; i++) {
                nt[i] = omp_get_num_threads();
                tl[i] = omp_get_thread_limit();
            }
            for (int i = 0; i < N; i++)
                if (tl[i] <= 0 || tl[i] > lim || nt[i] > lim || nt[i] > nth || nt[i] < 1) {
                    printf("FAIL: thread_limit(%d) num_threads(%d): i=%d threads %d limit %d\n", lim, nth, i, nt[i],
                           tl[i]);
                    fails++;
                    break;
                }
        }
    printf("%s\n", fails ? "thread_limit_readback: FAILED" : "thread_limit_readback: ok");
    return fails != 0;
}
