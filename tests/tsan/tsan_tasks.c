/* tsan_tasks.c: the host task path under ThreadSanitizer (make check-tsan):
 * two program threads create tiny tasks on the host alone, chained (64
 * depend(inout) chains) and independent, past MACC_PENDING_MAX, with maps;
 * so the workers, completions handing successors over, the creating
 * threads' help in the throttle and in taskwait, direct runs (deep queue
 * and tiny tasks: MACC_TASK_TINY_US is set high) all run concurrently.
 * Exits 0 when every task ran once and every chain in order; a TSan report
 * makes the process exit 66. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "macc_rt.h"

#define NCHAINS 64
#define NTHREADS 2

typedef struct {
    int chain;
    long pos;
} args_t;

static long chains[NTHREADS][NCHAINS];
static atomic_long order_errors, indep_ran;
static long indep_sum[NTHREADS];

static int fn_chain(void *args, MACC_TaskEnv *env)
{
    const args_t *a = args;
    long *c = env->ptrs[0];
    if (*c != a->pos)
        atomic_fetch_add(&order_errors, 1);
    *c = a->pos + 1;
    return 0;
}

static int fn_indep(void *args, MACC_TaskEnv *env)
{
    const args_t *a = args;
    long *s = env->ptrs[0];
    __atomic_add_fetch(s, a->pos, __ATOMIC_RELAXED);
    atomic_fetch_add(&indep_ran, 1);
    return 0;
}

static const MACC_Version chain_v[] = {{MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_chain}};
static const MACC_Region r_chain = {{"tsan_tasks.c", 1, 1, "chain"}, "chain", 1, chain_v, 0, 0};
static const MACC_Version indep_v[] = {{MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_indep}};
static const MACC_Region r_indep = {{"tsan_tasks.c", 2, 1, "indep"}, "indep", 1, indep_v, 0, 0};

#define N 20000

static void *creator(void *arg)
{
    int me = (int)(long)arg;
    long next[NCHAINS] = {0};
    for (int round = 0; round < 2; round++) {
        for (long i = 0; i < N; i++) {
            int c = (int)(i % NCHAINS);
            args_t a = {c, next[c]++};
            long *p = &chains[me][c];
            MACC_Map m = {"c", p, p, sizeof *p, MACC_MAP_TOFROM};
            MACC_Dep d = {p, sizeof *p, MACC_DEP_INOUT};
            MACC_target(&r_chain, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
        for (long i = 0; i < N; i++) {
            args_t a = {0, i};
            MACC_Map m = {"s", &indep_sum[me], &indep_sum[me], sizeof(long), MACC_MAP_TOFROM};
            MACC_target(&r_indep, &a, sizeof a, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
        MACC_taskwait(NULL);
    }
    return NULL;
}

int main(void)
{
    setenv("MACC_DEVICES", "host", 1);
    setenv("MACC_HOST_THREADS", "2", 1);
    setenv("MACC_PENDING_MAX", "64", 1);
    setenv("MACC_TASK_TINY_US", "1e9", 1);
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, creator, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    int ok = atomic_load(&order_errors) == 0 && atomic_load(&indep_ran) == 2L * NTHREADS * N;
    for (int t = 0; t < NTHREADS; t++) {
        ok &= indep_sum[t] == 2L * ((long)N * (N - 1) / 2);
        for (int c = 0; c < NCHAINS; c++)
            ok &= chains[t][c] == 2L * (N / NCHAINS) + (c < N % NCHAINS ? 2 : 0);
    }
    printf("tsan_tasks: %d threads x 2 rounds of %d chained and %d independent tasks: %s\n", NTHREADS, N,
           N, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
