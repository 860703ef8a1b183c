/* schedule(static, C) on a GPU loop: each thread runs chunks of C
 * consecutive iterations in order, as OpenMP's threads do, so a firstprivate
 * (or private) variable carries from one iteration of a chunk to the next:
 * reset at a chunk's first iteration, counted up after it. Prints PASS or FAIL. */
#include <stdio.h>

#define N 4096

int main(void)
{
    static int a[N], b[N];
    int fp = 1;
    #pragma omp target teams distribute parallel for firstprivate(fp) schedule(static, 8) map(tofrom: a[0:N])
    for (int j = 0; j < N; j++) {
        if (j % 8 == 0)
            fp = 0;
        fp++;
        a[j] += fp;
    }
    /* a chunk that does not divide the trip count, and a private counter */
    #pragma omp target teams distribute parallel for schedule(static, 3) map(tofrom: b[0:N - 1])
    for (int j = 0; j < N - 1; j++) {
        int k;
        if (j % 3 == 0)
            k = 0;
        else
            k = b[j - 1] + 1; /* the previous iteration of this chunk, same thread */
        b[j] = k;
    }
    int bad = 0;
    for (int j = 0; j < N; j++)
        if (a[j] != j % 8 + 1 && bad++ < 3)
            printf("a[%d] = %d, want %d\n", j, a[j], j % 8 + 1);
    for (int j = 0; j < N - 1; j++)
        if (b[j] != j % 3 && bad++ < 6)
            printf("b[%d] = %d, want %d\n", j, b[j], j % 3);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
