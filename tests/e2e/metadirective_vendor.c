/* metadirective with implementation={vendor(...)} selectors: the NVIDIA
 * version's code is NVIDIA's compiler's, so vendor(nvidia) picks its variant
 * there; no other vendor matches; the host version takes the default. The
 * region records how many teams ran it and where. Prints PASS or FAIL. */
#include <omp.h>
#include <stdio.h>

#define N 4096

int main(void)
{
    int a[N], teams = 0, initial = -1, errors = 0;
    for (int i = 0; i < N; i++)
        a[i] = -1;
    #pragma omp target map(tofrom: a, teams, initial)
    {
        #pragma omp metadirective \
            when(implementation={vendor(amd)}: teams num_teams(2)) \
            when(implementation={vendor(nvidia)}, device={kind(gpu)}: teams num_teams(3)) \
            default(teams num_teams(1))
        #pragma omp distribute parallel for
        for (int i = 0; i < N; i++) {
            a[i] = i;
            if (i == 0) {
                teams = omp_get_num_teams();
                initial = omp_is_initial_device();
            }
        }
    }
    for (int i = 0; i < N; i++)
        errors += a[i] != i;
    if (initial == 0 && (teams < 1 || teams > 3))
        errors++;
    if (initial == 1 && teams != 1)
        errors++;
    if (initial == -1)
        errors++;
    printf("%s\n", errors ? "FAIL" : "PASS");
    return errors != 0;
}
