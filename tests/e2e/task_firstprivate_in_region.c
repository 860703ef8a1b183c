// MACC_FLAGS: --targets=host
/* A task inside a target region that privatises data (default(firstprivate),
 * firstprivate(array)): its writes go to its own copies, the mapped originals
 * keep their values. The host version gives the task real arrays to copy;
 * the GPU version would run the task in place, so the region runs on the
 * host (macc warns: tests/run.sh driver checks that). */
#include <stdio.h>

#define N 512

int main(void)
{
    int fails = 0;
    int num = 1, arr[N], sum = 0;
    for (int i = 0; i < N; i++) {
        arr[i] = i;
        sum += i;
    }
#pragma omp target map(tofrom: num, arr)
    {
#pragma omp task default(firstprivate)
        {
            num += 1;
            for (int i = 0; i < N; i++)
                arr[i] = 1;
        }
    }
    int now = 0;
    for (int i = 0; i < N; i++)
        now += arr[i];
    if (num != 1 || now != sum) {
        printf("FAIL: task default(firstprivate): num %d sum %d (want 1 %d)\n", num, now, sum);
        fails++;
    }
    int shared_num = 1;
#pragma omp target map(tofrom: shared_num, arr)
    {
#pragma omp task shared(shared_num, arr)
        {
            shared_num += 1;
            arr[0] = -1;
        }
    }
    if (shared_num != 2 || arr[0] != -1) {
        printf("FAIL: task shared: %d %d\n", shared_num, arr[0]);
        fails++;
    }
    printf("%s\n", fails ? "task_firstprivate_in_region: FAILED" : "task_firstprivate_in_region: ok");
    return fails != 0;
}
