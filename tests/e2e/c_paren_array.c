/* (x[i]) - e, an array element in parentheses (from a macro), which C's
 * grammar reads as a cast when x is a type: x is a variable here, captured
 * and read; (g)(v), a call through a parenthesised name; sizeof (s). */
#include <stdio.h>

#define AT(a, i) (a[(i)])

static double g(double v) { return v + 1; }

int main(void)
{
    double x[64], y[64], z[64], s = 0.5;
    for (int i = 0; i < 64; i++) {
        x[i] = i;
        y[i] = 1;
    }
    #pragma omp target teams distribute parallel for map(to: x[0:64], y[0:64]) map(from: z[0:64])
    for (int i = 0; i < 64; i++)
        AT(z, i) = AT(x, i) - s * AT(y, i) + (g)(AT(y, i)) - sizeof (s);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += z[i] != i - 0.5 + 2 - 8;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
