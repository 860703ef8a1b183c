#include <stdio.h>
#define N (1 << 20)
static float x[N], y[N];
int main(void)
{
    for (int i = 0; i < N; i++) { x[i] = i; y[i] = 1; }
    #pragma omp target teams distribute parallel for device(any) map(to: x) map(tofrom: y)
    for (int i = 0; i < N; i++)
        y[i] += 2.0f * x[i];
    printf("y[1] = %g, y[N-1] = %g\n", y[1], y[N - 1]);
    return 0;
}
