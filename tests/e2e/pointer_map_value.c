/* map(from: p) of a pointer variable maps the variable itself: the value the
 * region gives it comes back (here a device address from omp_target_alloc,
 * used again through is_device_ptr and a defaultmap(to) pointer). */
#include <stdio.h>
#include <omp.h>

#define N 64

int main(void)
{
    int dev = omp_get_default_device();
    int *q = (int *)omp_target_alloc(N * sizeof(int), dev);
    int *p2 = NULL;
    if (!q) {
        printf("FAIL: omp_target_alloc\n");
        return 1;
    }
#pragma omp target map(from: p2) is_device_ptr(q)
    {
        for (int i = 0; i < N; i++)
            q[i] = i + 1;
        p2 = q + 5;
    }
    int ok = 0, ok2 = 0;
#pragma omp target map(tofrom: ok) is_device_ptr(p2)
    ok = p2[1] == 7;
    p2 += 4;
#pragma omp target map(tofrom: ok2) defaultmap(to)
    ok2 = p2[-9] == 1 && p2[N - 10] == N;
    omp_target_free(q, dev);
    if (!ok || !ok2 || p2 == NULL) {
        printf("FAIL: pointer value from the region: %d %d\n", ok, ok2);
        return 1;
    }
    printf("pointer_map_value: ok\n");
    return 0;
}
