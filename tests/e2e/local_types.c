/* Types declared inside the function that holds a region: a named struct, an
 * anonymous struct and an anonymous enum (the same enum in two functions),
 * hoisted next to the outlined code; and launch clauses whose expressions
 * read an array (num_teams(teams[k])), evaluated where the region is met. */
#include <stdio.h>

static int f1(void)
{
    enum { RED = 1, GREEN, BLUE } colour = GREEN;
    struct point { int x, y; } p = {3, 4};
    struct { double w; int n; } cfg = {0.5, 8};
    int out[8];
    #pragma omp target map(from: out[0:8])
    {
        for (int i = 0; i < cfg.n; i++)
            out[i] = (int)(colour == GREEN ? p.x * i + p.y + cfg.w * 2 : -1);
    }
    int bad = 0;
    for (int i = 0; i < 8; i++)
        bad += out[i] != 3 * i + 4 + 1;
    return bad;
}

static int f2(void)
{
    enum { RED = 1, GREEN, BLUE } colour = BLUE;
    int teams[3] = {1, 4, 16}, sum = 0, n = 1000;
    for (int k = 0; k < 3; k++) {
        int s = 0;
        #pragma omp target teams distribute parallel for num_teams(teams[k]) thread_limit(teams[k] * 32) reduction(+: s)
        for (int i = 0; i < n; i++)
            s += colour == BLUE ? 1 : 0;
        sum += s;
    }
    return sum != 3 * n;
}

int main(void)
{
    int bad = f1() + f2();
    if (bad) {
        printf("FAIL: %d\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
