/* A metadirective as the only directive of a target region's block (OpenMP
 * 5.0: `target { metadirective when(device={arch(...)}: ...) default(...)
 * for ... }`): as if it followed the target line, the GPU version takes the
 * arch branch (teams distribute parallel for), the host version the default
 * (parallel for). Prints PASS or FAIL. */
#include <omp.h>
#include <stdio.h>

#define N 1000

int main(void)
{
    int v1[N], v2[N], v3[N], on_host = -1;
    for (int i = 0; i < N; i++) {
        v1[i] = i + 1;
        v2[i] = -(i + 1);
    }
    #pragma omp target map(to: v1, v2) map(from: v3, on_host)
    {
        #pragma omp metadirective \
            when(device={arch("nvptx")}: teams distribute parallel for) \
            default(parallel for)
        for (int i = 0; i < N; i++) {
            #pragma omp atomic write
            on_host = omp_is_initial_device();
            v3[i] = v1[i] * v2[i];
        }
    }
    int bad = on_host < 0;
    for (int i = 0; i < N; i++)
        if (v3[i] != v1[i] * v2[i] && bad++ < 3)
            printf("v3[%d] = %d, want %d\n", i, v3[i], v1[i] * v2[i]);
    printf("%s (%s)\n", bad ? "FAIL" : "PASS", on_host ? "host" : "device");
    return bad != 0;
}
