/* target in_reduction (OpenMP 5.0): target regions take part in the task
 * reduction of an enclosing taskgroup, beside host tasks: a region alone, a
 * nowait region, a combined loop construct whose threads reduce too. The
 * sum is the same whatever ran where. Prints PASS or FAIL. */
#include <stdio.h>

#define N 10000

#pragma omp declare target
static void add_twos(long *sum)
{
    for (int i = 0; i < N; i++)
        *sum += 2;
}
#pragma omp end declare target

int main(void)
{
    long sum = 5, prod = 1;
    int errors = 0;
    #pragma omp parallel
    #pragma omp single
    {
        #pragma omp taskgroup task_reduction(+: sum) task_reduction(*: prod)
        {
            #pragma omp target in_reduction(+: sum)
            add_twos(&sum);

            #pragma omp target nowait in_reduction(+: sum) in_reduction(*: prod)
            {
                sum += 100;
                prod *= 3;
            }

            #pragma omp target teams distribute parallel for in_reduction(+: sum) map(to: errors)
            for (int i = 0; i < N; i++)
                sum += i;

            for (int t = 0; t < 4; t++) {
                #pragma omp task in_reduction(+: sum) in_reduction(*: prod)
                {
                    sum += 1;
                    prod *= 2;
                }
            }
        }
    }
    long want = 5 + 2L * N + 100 + (long)N * (N - 1) / 2 + 4;
    errors += sum != want;
    errors += prod != 3 * 16;
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("sum %ld (want %ld), prod %ld\n", sum, want, prod);
    return errors != 0;
}
