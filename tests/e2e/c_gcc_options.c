// MACC_FLAGS: -Ofast -march=native -mtune=native -funroll-loops -fno-strict-aliasing -std=gnu99 -fPIC -mcmodel=medium -fgnu89-inline -pthread -DSCALE=3
/* The options real Makefiles pass: the C compiler takes them all, nvcc only
 * their meaning (-Ofast as -O3 --use_fast_math, -fPIC and -mcmodel through
 * -Xcompiler, -D as it is; docs/DRIVER.md). */
#include <stdio.h>

int main(void)
{
    int v[256];
    #pragma omp target teams distribute parallel for map(from: v[0:256])
    for (int i = 0; i < 256; i++)
        v[i] = SCALE * i;
    int bad = 0;
    for (int i = 0; i < 256; i++)
        bad += v[i] != 3 * i;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
