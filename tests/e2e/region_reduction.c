/* A reduction of the region itself (target teams without a loop, acc serial):
 * each team's private copy starts at the operator's identity and is combined
 * with the original at the end (s = 5; one team computes s = s * 2 + 1 from
 * 0: 1; the result 5 + 1). */
#include <stdio.h>

int main(void)
{
    int fails = 0, s = 5, p = 3;
#pragma omp target teams num_teams(1) reduction(+: s)
    {
        s = s * 2 + 1;
    }
    if (s != 6) {
        printf("FAIL: target teams reduction(+): %d (want 6)\n", s);
        fails++;
    }
#pragma omp target teams num_teams(1) reduction(*: p)
    {
        p = p + 1;
    }
    if (p != 6) {
        printf("FAIL: target teams reduction(*): %d (want 6)\n", p);
        fails++;
    }
    printf("%s\n", fails ? "region_reduction: FAILED" : "region_reduction: ok");
    return fails != 0;
}
