/* C99 and C11 forms that C++ lacks, in a region and the functions it calls:
 * _Generic from a macro, register variables, array parameters with static
 * and restrict in their brackets, a static local in a called function, a
 * hexadecimal floating constant. */
#include <stdio.h>
#include <stdlib.h>

#define KIND(x) _Generic((x), int: 1, double: 2, float: 3, default: 4)

static int ticks(void)
{
    static const int step = 2;
    return step;
}

static double sum4(const double a[static 4])
{
    register double s = 0;
    for (register int i = 0; i < 4; i++)
        s += a[i];
    return s;
}

static double first(double a[restrict], int n) { return n > 0 ? a[0] : 0; }

int main(void)
{
    int n = 64;
    double *out = malloc(n * sizeof *out);
    #pragma omp target teams distribute parallel for map(from: out[0:n])
    for (int i = 0; i < n; i++) {
        double v[4] = {1, 2, 3, i};
        register int r = i;
        float f = 1.0f;
        out[i] = sum4(v) + first(v, 4) + KIND(i) + KIND(1.0) + KIND(f) + KIND('c' + 0L) + ticks() + r + 0x1p-3;
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != 6 + i + 1 + 1 + 2 + 3 + 4 + 2 + i + 0.125;
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(out);
    return bad != 0;
}
