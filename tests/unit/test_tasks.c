/* test_tasks.c: the task path's mechanisms (runtime/task.c, runtime/host.c),
 * host only, counted rather than timed:
 *   - a completion hands its successor to the thread that completed it (no
 *     queue, no wake-up);
 *   - a thread waiting for its tasks (taskwait, the throttle) runs them
 *     itself when no worker does;
 *   - tasks run at once by their creating thread (the deep-queue throttle)
 *     get their arguments and maps;
 *   - the per-thread device choice follows omp_set_default_device.
 * Criterion runs every test in its own process: each starts the runtime
 * afresh with the environment its suite's init sets. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "macc_rt.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void env_init(void)
{
    unsetenv("MACC_DEVICES");
    unsetenv("MACC_STATS");
    unsetenv("MACC_TRACE");
    unsetenv("MACC_PENDING_MAX");
    setenv("MACC_HOST_THREADS", "4", 1);
}

TestSuite(tasks, .init = env_init, .timeout = 60);

#define HOST_REGION(rname, fn)                                                                   \
    static const MACC_Version rname##_v[] = {{MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, (fn)}};     \
    static const MACC_Region rname = {{__FILE__, __LINE__, 1, "test"}, #rname, 1, rname##_v, 0, 0}

typedef struct {
    int id;
    int chain;
} targs;

/* ---- a chain runs on the thread that completes it ------------------------------------------- */

static atomic_int gate_open;
static pthread_t gate_thread;
static int fn_gate(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    __atomic_store_n(&gate_thread, pthread_self(), __ATOMIC_RELEASE);
    for (int i = 0; i < 10000 && !atomic_load(&gate_open); i++)
        sleep_ms(1);
    return 0;
}
HOST_REGION(r_gate, fn_gate);

#define NCHAIN 8
static atomic_long next_in_chain[NCHAIN], order_errors, other_thread, ran;
static pthread_t want_thread;
static int fn_link(void *args, MACC_TaskEnv *env)
{
    (void)env;
    const targs *a = args;
    long want = a->id / NCHAIN;
    if (atomic_load(&next_in_chain[a->chain]) != want)
        atomic_fetch_add(&order_errors, 1);
    atomic_store(&next_in_chain[a->chain], want + 1);
    if (!pthread_equal(pthread_self(), want_thread))
        atomic_fetch_add(&other_thread, 1);
    atomic_fetch_add(&ran, 1);
    return 0;
}
HOST_REGION(r_link, fn_link);

static long cell[NCHAIN];

/* One chain behind a task that holds its worker until every link exists:
 * each completion places the next link and hands it to the same worker, so
 * the whole chain runs there with no queue and no worker woken. */
Test(tasks, chain_is_handed_to_the_thread_that_completes_each_link)
{
    maccrt_init();
    long n = 200;
    MACC_Dep d = {&cell[0], sizeof cell[0], MACC_DEP_INOUT};
    MACC_target(&r_gate, NULL, 0, 0, NULL, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    for (long i = 0; i < n; i++) {
        targs a = {(int)(i * NCHAIN), 0};
        MACC_target(&r_link, &a, sizeof a, 0, NULL, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    /* the gate's worker is known once it runs; every link waits behind it */
    for (int i = 0; i < 10000 && !__atomic_load_n(&gate_thread, __ATOMIC_ACQUIRE); i++)
        sleep_ms(1);
    want_thread = __atomic_load_n(&gate_thread, __ATOMIC_ACQUIRE);
    cr_assert(!pthread_equal(want_thread, pthread_self()), "the gate runs on a worker");
    atomic_store(&gate_open, 1);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran), n);
    cr_assert_eq(atomic_load(&order_errors), 0);
    cr_assert_eq(atomic_load(&other_thread), 0, "every link ran on the gate's worker");
    long signals, helped, handed;
    int workers;
    maccrt_host_counts(maccrt_rt.host, &signals, &helped, &handed, &workers);
    cr_assert_eq(handed, n, "each completion handed its successor over (got %ld)", handed);
    cr_assert_eq(signals, 0, "no sleeping worker was woken (got %ld)", signals);
    cr_assert_eq(helped, 0);
    cr_assert_eq(workers, 1, "one worker ran it all");
    cr_assert_eq(maccrt_rt.live, 0);
}

/* ---- the waiting thread runs its tasks -------------------------------------------------------- */

/* The pool's workers are stopped before any task: a task handed to the host
 * waits in its queue until the thread that created it runs it (in taskwait,
 * or in the throttle's wait). Without that, these tests hang. */
static void stop_workers(void)
{
    maccrt_init();
    maccrt_host_plugin.fini_device(maccrt_rt.host);
}

Test(tasks, taskwait_runs_the_waiting_threads_tasks)
{
    stop_workers();
    want_thread = pthread_self();
    long n = 100;
    for (long i = 0; i < n; i++) {
        targs a = {(int)i, (int)(i % NCHAIN)};
        MACC_Dep d = {&cell[i % NCHAIN], sizeof cell[0], MACC_DEP_INOUT};
        MACC_target(&r_link, &a, sizeof a, 0, NULL, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    cr_assert_eq(atomic_load(&ran), 0, "no worker runs them");
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran), n);
    cr_assert_eq(atomic_load(&order_errors), 0);
    cr_assert_eq(atomic_load(&other_thread), 0);
    long signals, helped, handed;
    int workers;
    maccrt_host_counts(maccrt_rt.host, &signals, &helped, &handed, &workers);
    cr_assert_eq(workers, 0);
    cr_assert_eq(helped + handed, n, "each ran from the queue or handed over (%ld + %ld)", helped, handed);
    cr_assert_geq(helped, 1, "the first ones came from the queue");
    cr_assert_eq(maccrt_rt.live, 0);
}

static atomic_long max_live;
static int fn_link_live(void *args, MACC_TaskEnv *env)
{
    long live = __atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED);
    long m = atomic_load(&max_live);
    while (live > m && !atomic_compare_exchange_weak(&max_live, &m, live))
        ;
    return fn_link(args, env);
}
HOST_REGION(r_link_live, fn_link_live);

Test(tasks, throttled_thread_runs_its_tasks_instead_of_sleeping)
{
    setenv("MACC_PENDING_MAX", "16", 1);
    stop_workers();
    want_thread = pthread_self();
    long n = 1000;
    for (long i = 0; i < n; i++) {
        targs a = {(int)i, (int)(i % NCHAIN)};
        MACC_Dep d = {&cell[i % NCHAIN], sizeof cell[0], MACC_DEP_INOUT};
        MACC_target(&r_link_live, &a, sizeof a, 0, NULL, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        cr_assert_leq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 16);
    }
    /* the throttle ran all but the last pending_max / 2 at most */
    cr_assert_geq(atomic_load(&ran), n - 16);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran), n);
    cr_assert_eq(atomic_load(&order_errors), 0);
    cr_assert_eq(atomic_load(&other_thread), 0);
    cr_assert_leq(atomic_load(&max_live), 16);
    cr_assert_eq(atomic_load(&maccrt_rt.host->tasks_direct), 0, "dependent tasks went through the scheduler");
}

/* ---- tasks run at once by their creating thread --------------------------------------------- */

typedef struct {
    long i;
    char pad[200]; /* a larger argument block, copied */
} bigargs;
static long sums[4];
static atomic_long bad_env;
static int fn_direct(void *args, MACC_TaskEnv *env)
{
    bigargs *a = args;
    long *s = env->ptrs[0];
    if (s != sums || env->ptrs[1] != &sums[2] || a->pad[199] != (char)(a->i & 0x7f) ||
        env->device_kind != MACC_DEV_HOST)
        atomic_fetch_add(&bad_env, 1);
    a->pad[0] = 1; /* the version may write its block: the caller's stays */
    __atomic_add_fetch(&s[a->i % 2], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sums[3], a->i, __ATOMIC_RELAXED);
    return 0;
}
HOST_REGION(r_direct, fn_direct);

/* With no worker the queue fills at once: past MACC_PENDING_MAX the creating
 * thread runs each new dependence-free task itself, until half the live
 * tasks have finished (it runs the queued ones in its taskwait). */
Test(tasks, direct_tasks_get_their_arguments_and_maps)
{
    setenv("MACC_PENDING_MAX", "8", 1);
    stop_workers();
    long n = 1000, want = 0;
    for (long i = 0; i < n; i++) {
        bigargs a = {i, {0}};
        a.pad[199] = (char)(i & 0x7f);
        MACC_Map m[2] = {
            {"sums", sums, sums, 2 * sizeof sums[0], MACC_MAP_TOFROM},
            {"s2", &sums[2], &sums[2], sizeof sums[0], MACC_MAP_TO},
        };
        MACC_target(&r_direct, &a, sizeof a, 2, m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        cr_assert_eq(a.pad[0], 0);
        cr_assert_leq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 8);
        want += i;
    }
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&bad_env), 0);
    cr_assert_eq(sums[0] + sums[1], n);
    cr_assert_eq(sums[3], want);
    long direct = atomic_load(&maccrt_rt.host->tasks_direct);
    cr_assert_geq(direct, n - 8, "all but the queued ones ran directly (%ld)", direct);
    cr_assert_eq(macc_device_tasks(maccrt_rt.host->num), n);
}

/* Tiny tasks: once a region's direct runs are measured (here any time
 * counts as tiny: MACC_TASK_TINY_US is huge), a dependence-free task of it
 * runs in the creating thread whenever the host has no tokens free for it,
 * however few tasks are live; while tokens are free it goes to the host's
 * queue (no worker here: taskwait runs them). */
static void make_direct(long n)
{
    for (long i = 0; i < n; i++) {
        bigargs a = {i, {0}};
        a.pad[199] = (char)(i & 0x7f);
        MACC_Map m[2] = {
            {"sums", sums, sums, 2 * sizeof sums[0], MACC_MAP_TOFROM},
            {"s2", &sums[2], &sums[2], sizeof sums[0], MACC_MAP_TO},
        };
        MACC_target(&r_direct, &a, sizeof a, 2, m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
}

Test(tasks, tiny_tasks_run_in_the_creating_thread_when_the_host_is_full)
{
    setenv("MACC_PENDING_MAX", "8", 1);
    setenv("MACC_TASK_TINY_US", "1e9", 1);
    stop_workers();
    make_direct(100); /* 8 queued, the rest direct (deep queue), measured */
    MACC_taskwait(NULL);
    long d0 = atomic_load(&maccrt_rt.host->tasks_direct);
    cr_assert_eq(d0, 92);
    /* tokens free: the next one goes to the scheduler (a queue: no worker) */
    make_direct(1);
    cr_assert_eq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 1);
    make_direct(1); /* 50 tokens left: queued too */
    cr_assert_eq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 2);
    cr_assert_eq(maccrt_rt.host->tokens_free, 0);
    /* the host is full: tiny ones run here, 2 live (< pending_max / 2) */
    make_direct(50);
    cr_assert_eq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 2);
    MACC_taskwait(NULL);
    maccrt_task_flush_counts();
    cr_assert_eq(atomic_load(&maccrt_rt.host->tasks_direct), d0 + 50);
    cr_assert_eq(sums[0] + sums[1], 152);
    cr_assert_eq(atomic_load(&bad_env), 0);
}

Test(tasks, tasks_are_not_tiny_by_default)
{
    setenv("MACC_PENDING_MAX", "8", 1);
    setenv("MACC_TASK_TINY_US", "0", 1); /* nothing is tiny */
    stop_workers();
    make_direct(100);
    MACC_taskwait(NULL);
    long d0 = atomic_load(&maccrt_rt.host->tasks_direct);
    make_direct(6); /* host full after 2, but nothing is tiny: all queued */
    cr_assert_eq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 6);
    MACC_taskwait(NULL);
    maccrt_task_flush_counts();
    cr_assert_eq(atomic_load(&maccrt_rt.host->tasks_direct), d0);
}

Test(tasks, tiny_threshold_bad_value_is_fatal, .exit_code = 1)
{
    setenv("MACC_PENDING_MAX", "8", 1);
    setenv("MACC_TASK_TINY_US", "soon", 1);
    stop_workers();
    make_direct(100);
    MACC_taskwait(NULL);
    make_direct(3); /* the third finds the host full: the threshold is read */
}

/* ---- tiny dependent tasks stay with their creating thread ------------------------------------- */

static void chain_tasks(const MACC_Region *r, long from, long n)
{
    for (long i = from; i < from + n; i++) {
        targs a = {(int)i, (int)(i % NCHAIN)};
        MACC_Dep d = {&cell[i % NCHAIN], sizeof cell[0], MACC_DEP_INOUT};
        MACC_target(r, &a, sizeof a, 0, NULL, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
}

/* Measured tiny (any time is, with MACC_TASK_TINY_US huge) after 8 sampled
 * runs: every later task of the region is kept for the thread that created
 * it, which runs them all in its taskwait. */
Test(tasks, tiny_dependent_tasks_are_kept_for_their_creating_thread)
{
    setenv("MACC_TASK_TINY_US", "1e9", 1);
    stop_workers();
    want_thread = pthread_self();
    chain_tasks(&r_link, 0, 8); /* sampled: the measure */
    MACC_taskwait(NULL);
    long kept, by_workers;
    maccrt_host_kept(maccrt_rt.host, &kept, &by_workers);
    cr_assert_eq(kept, 0, "not yet measured");
    chain_tasks(&r_link, 8, 200);
    MACC_taskwait(NULL);
    maccrt_host_kept(maccrt_rt.host, &kept, &by_workers);
    cr_assert_eq(kept, 200);
    cr_assert_eq(by_workers, 0);
    cr_assert_eq(atomic_load(&ran), 208);
    cr_assert_eq(atomic_load(&order_errors), 0);
    cr_assert_eq(atomic_load(&other_thread), 0);
}

Test(tasks, no_task_is_kept_with_tiny_off)
{
    setenv("MACC_TASK_TINY_US", "0", 1);
    stop_workers();
    want_thread = pthread_self();
    chain_tasks(&r_link, 0, 208);
    MACC_taskwait(NULL);
    long kept, by_workers;
    maccrt_host_kept(maccrt_rt.host, &kept, &by_workers);
    cr_assert_eq(kept, 0);
    cr_assert_eq(atomic_load(&ran), 208);
}

/* A thread that never comes back into the runtime does not stall its kept
 * tasks: a worker whose spin ends with one queued runs it. */
Test(tasks, kept_tasks_of_a_thread_blocked_elsewhere_still_run)
{
    setenv("MACC_TASK_TINY_US", "1e9", 1);
    maccrt_init();
    want_thread = pthread_self(); /* counted as "other": the workers run them */
    chain_tasks(&r_link, 0, 8);
    MACC_taskwait(NULL);
    atomic_store(&other_thread, 0);
    chain_tasks(&r_link, 8, 50);
    for (int i = 0; i < 20000 && atomic_load(&ran) < 58; i++)
        sleep_ms(1); /* no runtime call: this thread never helps */
    cr_assert_eq(atomic_load(&ran), 58);
    cr_assert_eq(atomic_load(&order_errors), 0);
    long kept, by_workers;
    maccrt_host_kept(maccrt_rt.host, &kept, &by_workers);
    cr_assert_eq(kept, 50);
    cr_assert_eq(by_workers, 50);
    cr_assert_eq(atomic_load(&other_thread), 50);
    MACC_taskwait(NULL);
}

/* ---- the creating thread's device choice ------------------------------------------------------ */

static atomic_int on_host;
static int fn_where(void *args, MACC_TaskEnv *env)
{
    (void)args;
    if (env->device_kind == MACC_DEV_HOST)
        atomic_fetch_add(&on_host, 1);
    return 0;
}
HOST_REGION(r_where, fn_where);

static void child_default_device_changes(void)
{
    /* the host is device 0 (no GPU): a default that names no device runs on
     * the host, an invalid one is an error, even for an instance whose
     * earlier siblings ran (the thread's cached choice is keyed by it) */
    MACC_target(&r_where, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
    omp_set_default_device(3);
    MACC_target(&r_where, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
    if (atomic_load(&on_host) != 2)
        exit(3);
    omp_set_default_device(-4); /* omp_invalid_device */
    MACC_target(&r_where, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
    exit(4); /* not reached: the instance is fatal */
}

Test(tasks, cached_device_choice_follows_the_default_device, .exit_code = 1)
{
    child_default_device_changes();
}
