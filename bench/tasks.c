/* tasks.c: the cost of a task, built twice from this one file (bench/tasks.sh):
 *
 *   macc:     `#pragma omp target device(any) nowait [depend(inout: chain[c])]`
 *             (run with MACC_DEVICES=host MACC_HOST_THREADS=2)
 *   libgomp:  `#pragma omp task [depend(inout: chain[c])]` from a `single`
 *             inside a `parallel num_threads(2)` region (gcc -fopenmp)
 *
 *   usage: tasks N chain|indep
 *
 * Creates N near-empty tasks (the body reads one firstprivate int), chained in
 * 64 `depend(inout)` chains (task i in chain i % 64) or independent, waits for
 * them all (taskwait), and prints one line:
 *
 *   us_per_task=X maxrss_kib=Y check=PASS
 *
 * The time is from the first creation to the end of the taskwait (wall
 * clock); maxrss is the process's peak resident set (getrusage). Each task
 * adds its chain's counter (chained: ordered by the dependence; independent: an
 * atomic add) so the check proves every task ran.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NCHAINS 64

static long chain[NCHAINS];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_chained(long n)
{
    long *ch = chain;
#ifdef __MACC__
    for (long i = 0; i < n; i++) {
        int c = (int)(i % NCHAINS);
        #pragma omp target device(any) nowait depend(inout: ch[c]) map(tofrom: ch[c:1])
        { ch[c] += 1; }
    }
    #pragma omp taskwait
#else
    #pragma omp parallel num_threads(2)
    #pragma omp single
    {
        for (long i = 0; i < n; i++) {
            int c = (int)(i % NCHAINS);
            #pragma omp task depend(inout: ch[c]) firstprivate(c)
            { ch[c] += 1; }
        }
        #pragma omp taskwait
    }
#endif
}

static void run_independent(long n)
{
    long *ch = chain;
#ifdef __MACC__
    for (long i = 0; i < n; i++) {
        int c = (int)(i % NCHAINS);
        #pragma omp target device(any) nowait map(tofrom: ch[c:1])
        {
            #pragma omp atomic
            ch[c] += 1;
        }
    }
    #pragma omp taskwait
#else
    #pragma omp parallel num_threads(2)
    #pragma omp single
    {
        for (long i = 0; i < n; i++) {
            int c = (int)(i % NCHAINS);
            #pragma omp task firstprivate(c)
            {
                #pragma omp atomic
                ch[c] += 1;
            }
        }
        #pragma omp taskwait
    }
#endif
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int chained = !(argc > 2 && strcmp(argv[2], "indep") == 0);
    if (n < NCHAINS)
        n = NCHAINS;
    double t0 = now();
    if (chained)
        run_chained(n);
    else
        run_independent(n);
    double t1 = now();
    long sum = 0;
    int ok = 1;
    for (int c = 0; c < NCHAINS; c++) {
        sum += chain[c];
        ok &= chain[c] == n / NCHAINS + (c < n % NCHAINS);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("us_per_task=%.3f maxrss_kib=%ld check=%s\n", 1e6 * (t1 - t0) / (double)n, ru.ru_maxrss,
           ok && sum == n ? "PASS" : "FAIL");
    return ok && sum == n ? 0 : 1;
}
