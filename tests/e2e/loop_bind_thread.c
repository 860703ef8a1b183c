/* loop bind(thread) inside target regions: each thread that meets the loop
 * runs all of it (a team's private matrix updated by its one initial thread;
 * every thread of a parallel region summing its own row). Prints PASS or FAIL. */
#include <omp.h>
#include <stdio.h>

#define N 64
#define T 8

int main(void)
{
    int errors = 0, y[N], res[T][N];
    long sums[T];
    for (int i = 0; i < N; i++)
        y[i] = i;
    for (int t = 0; t < T; t++) {
        sums[t] = 0;
        for (int i = 0; i < N; i++)
            res[t][i] = 0;
    }
    #pragma omp target teams num_teams(T) map(to: y) map(tofrom: res)
    {
        int x[N];
        for (int i = 0; i < N; i++)
            x[i] = 1;
        #pragma omp loop bind(thread)
        for (int i = 0; i < N; i++)
            x[i] += y[i];
        int t = omp_get_team_num();
        if (t < T)
            for (int i = 0; i < N; i++)
                res[t][i] = x[i];
    }
    #pragma omp target parallel num_threads(T) map(to: y) map(tofrom: sums)
    {
        long s = 0;
        int me = omp_get_thread_num();
        #pragma omp loop bind(thread)
        for (int i = 0; i < N; i++)
            s += y[i] * (me + 1);
        if (me < T)
            sums[me] = s;
    }
    int nt = 0;
    for (int t = 0; t < T; t++)
        nt += res[t][N - 1] == N;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < N; i++)
            errors += res[t][i] != 0 && res[t][i] != 1 + i;
    errors += nt < 1;
    for (int me = 0; me < T; me++)
        errors += sums[me] != 0 && sums[me] != (long)(me + 1) * N * (N - 1) / 2;
    errors += sums[0] != (long)N * (N - 1) / 2;
    printf("%s\n", errors ? "FAIL" : "PASS");
    return errors != 0;
}
