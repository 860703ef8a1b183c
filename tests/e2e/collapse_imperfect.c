/* collapse(n) of imperfectly nested loops (OpenMP 5.0): declarations and
 * expressions between the loops run before each iteration of the inner
 * loop (the number of times is unspecified; their values are the same): in
 * a target region, three deep with code at two levels, in host OpenMP the C
 * compiler would reject (GCC 12 wants perfect nests), and OpenACC's
 * collapse(force: 2). Prints PASS or FAIL. */
#include <stdio.h>

#define N 48

static double b[N][N], d[8][N][N], e[N][N], f[N][N], c[N];

int main(void)
{
    int errors = 0;
    for (int j = 0; j < N; j++)
        c[j] = j;
    #pragma omp target teams distribute parallel for collapse(2) map(from: b) map(to: c)
    for (int i = 0; i < N; i++) {
        double t = i * 2.0;
        const int k = i % 3;
        for (int j = 0; j < N; j++) {
            b[i][j] = t + c[j] + k;
        }
    }
    #pragma omp target teams distribute parallel for collapse(3) map(from: d)
    for (int p = 0; p < 8; p++) {
        int base = 1000 * p;
        for (int i = 0; i < N; i++) {
            int row = base + 10 * i;
            for (int j = 0; j < N; j++) {
                d[p][i][j] = row + j;
            }
        }
    }
    #pragma omp parallel for collapse(2)
    for (int i = 0; i < N; i++) {
        double s = 0.5 * i;
        for (int j = 0; j < N; j++) {
            e[i][j] = s * j;
        }
    }
    #pragma acc parallel loop collapse(force: 2) copyout(f)
    for (int i = 0; i < N; i++) {
        int off = -i;
        for (int j = 0; j < N; j++) {
            f[i][j] = off + j;
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            errors += b[i][j] != i * 2.0 + j + i % 3;
            errors += e[i][j] != 0.5 * i * j;
            errors += f[i][j] != j - i;
            for (int p = 0; p < 8; p++)
                errors += d[p][i][j] != 1000 * p + 10 * i + j;
        }
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
