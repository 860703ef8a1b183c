/* teams distribute with dist_schedule(static, C): chunks of C iterations go
 * to the teams round-robin, as omp_get_team_num() shows (one team on the host,
 * every GPU block a team). */
#include <stdio.h>
#include <omp.h>

#define N 4096
#define CHUNK 64

int main(void)
{
    int team[N], nteams = 0, fails = 0;
#pragma omp target teams distribute map(from: team, nteams) dist_schedule(static, CHUNK)
    for (int i = 0; i < N; i++) {
        if (omp_get_team_num() == 0)
            nteams = omp_get_num_teams();
        team[i] = omp_get_team_num();
    }
    if (nteams < 1) {
        printf("FAIL: num_teams %d\n", nteams);
        fails++;
    }
    for (int i = 0; i < N && !fails; i++)
        if (team[i] != (i / CHUNK) % nteams) {
            printf("FAIL: iteration %d ran on team %d, not %d (%d teams)\n", i, team[i], (i / CHUNK) % nteams, nteams);
            fails++;
        }
    printf("%s\n", fails ? "dist_schedule: FAILED" : "dist_schedule: ok");
    return fails != 0;
}
