/* declare target: globals with a device copy (a block, enter, link),
 * functions with device copies that use them, target update between the
 * host variables and their device copies, a map of a declare target
 * variable, a declare target variable written by a region. The checks hold
 * wherever the regions run (the GPU, or the host when there is none). */
#include <math.h>
#include <stdio.h>

#define N 1000

#pragma omp declare target
double table[N];
int counter = 5;
static double scale(double v) { return 2.0 * v + counter; }
#pragma omp end declare target

int lut[16];
int bias = 3;
#pragma omp declare target enter(lut) link(bias)

double accumulate(int i) { return table[i] + lut[i % 16]; }
#pragma omp declare target to(accumulate)

static int add_bias(int k) { return k + bias; }
#pragma omp declare target(add_bias)

int main(void)
{
    static double out[N];
    for (int i = 0; i < N; i++)
        table[i] = i;
    for (int k = 0; k < 16; k++)
        lut[k] = k * k;
    #pragma omp target update to(table, lut)

    #pragma omp target teams distribute parallel for map(from: out)
    for (int i = 0; i < N; i++)
        out[i] = scale(accumulate(i));
    for (int i = 0; i < N; i++) {
        double want = 2.0 * (i + (i % 16) * (i % 16)) + 5;
        if (fabs(out[i] - want) > 1e-12) {
            printf("FAIL: out[%d] = %g, expected %g\n", i, out[i], want);
            return 1;
        }
    }

    /* a region writes declare target variables; update from brings them back */
    #pragma omp target
    {
        counter = 7;
        table[0] = -1.0;
    }
    #pragma omp target update from(counter, table[0:1])
    if (counter != 7 || table[0] != -1.0) {
        printf("FAIL: counter = %d, table[0] = %g after update from\n", counter, table[0]);
        return 1;
    }

    /* the host changes one, update to sends it */
    counter = 10;
    #pragma omp target update to(counter)
    int seen = 0;
    #pragma omp target map(from: seen)
    seen = counter + (int)table[1];
    if (seen != 11) {
        printf("FAIL: seen = %d, expected 11\n", seen);
        return 1;
    }

    /* link: mapped like any data for the region that maps it */
    bias = 4;
    int res[4] = {0};
    #pragma omp target map(to: bias) map(from: res)
    for (int k = 0; k < 4; k++)
        res[k] = add_bias(k);
    for (int k = 0; k < 4; k++)
        if (res[k] != k + 4) {
            printf("FAIL: res[%d] = %d, expected %d\n", k, res[k], k + 4);
            return 1;
        }

    /* a map of a declare target variable uses the device copy: writes there
     * come back with update from */
    #pragma omp target map(tofrom: lut)
    for (int k = 0; k < 16; k++)
        lut[k] = -k;
    #pragma omp target update from(lut)
    for (int k = 0; k < 16; k++)
        if (lut[k] != -k) {
            printf("FAIL: lut[%d] = %d\n", k, lut[k]);
            return 1;
        }
    printf("PASS\n");
    return 0;
}
