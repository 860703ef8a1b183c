// MACC_FLAGS: -DNTD=4 -Wno-unknown-pragmas
/* A pragma that is not OpenMP's inside a region, with a macro argument:
 * NTD from -D, TWICE from this file. The C compiler leaves such pragmas as
 * written and nvcc expands nothing in them, so macc expands them for the
 * device file with the preprocessor's own definitions. */
#include <stdio.h>

#define TWICE(x) (2 * (x))

int main(void)
{
    float a[64] = {0};
    #pragma omp target teams distribute parallel for map(tofrom: a[0:64])
    for (int i = 0; i < 64; i++) {
        #pragma unroll(NTD)
        for (int j = 0; j < NTD; j++)
            a[i] += j;
        #pragma unroll TWICE(NTD)
        for (int j = 0; j < TWICE(NTD); j++)
            a[i] += 1;
    }
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += a[i] != 14.0f;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
