/* test_runtime.c: unit tests of the dispatch runtime (host device).
 *
 * Criterion runs every test in its own process, so each test starts the
 * runtime afresh with the environment its suite's init sets. Regions are
 * defined here by hand the way the translator emits them: a host version
 * function, a MACC_Version array and a MACC_Region.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "../fake_gpu.h"
/* region descriptors written before MACC_Region grew its placement fields (naccess, access) */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "macc_rt.h"

/* ---- helpers --------------------------------------------------------------------- */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits until *v >= n or the timeout passes; returns whether it got there. */
static int wait_at_least(atomic_int *v, int n, double timeout_s)
{
    double end = now_s() + timeout_s;
    while (atomic_load(v) < n) {
        if (now_s() > end)
            return 0;
        sleep_ms(1);
    }
    return 1;
}

static void clean_env(void)
{
    unsetenv("MACC_DEVICES");
    unsetenv("MACC_TARGET_OFFLOAD");
    unsetenv("OMP_TARGET_OFFLOAD");
    unsetenv("MACC_STATS");
    unsetenv("MACC_PENDING_MAX");
    unsetenv("MACC_TEST_FAKE_HMM");
    setenv("MACC_HOST_THREADS", "4", 1);
}

TestSuite(rt, .init = clean_env, .timeout = 60);

#define LOC(name) static const MACC_SrcLoc name = {__FILE__, __LINE__, 1, "test"}

/* A boolean setting: the default when unset, off only at "0", read once. */
Test(rt, env_flags_read_once_off_only_at_zero)
{
    struct {
        const char *v;
        int dflt, want;
    } c[] = {{NULL, 1, 1}, {NULL, 0, 0}, {"0", 1, 0}, {"1", 0, 1}, {"yes", 0, 1}, {"", 0, 1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int memo = -1;
        if (c[i].v)
            setenv("MACC_TEST_FLAG", c[i].v, 1);
        else
            unsetenv("MACC_TEST_FLAG");
        cr_assert_eq(maccrt_env_flag(&memo, "MACC_TEST_FLAG", c[i].dflt), c[i].want, "case %zu", i);
        cr_assert_eq(memo, c[i].want);
        setenv("MACC_TEST_FLAG", c[i].want ? "0" : "1", 1); /* changed after the first read: kept */
        cr_assert_eq(maccrt_env_flag(&memo, "MACC_TEST_FLAG", c[i].dflt), c[i].want, "case %zu", i);
    }
    unsetenv("MACC_TEST_FLAG");
}

/* A region with one host version of fn and the given resources. */
#define HOST_REGION(rname, fn, res)                                                         \
    static const MACC_Version rname##_v[] = {{MACC_DEV_HOST, 0, (res), 0, (fn)}};           \
    static const MACC_Region rname = {{__FILE__, __LINE__, 1, "test"}, #rname, 1, rname##_v}

/* Sequence recorder. */
static atomic_int seq_n;
static int seq[64];
static void record(int v)
{
    int i = atomic_fetch_add(&seq_n, 1);
    if (i < 64)
        seq[i] = v;
}

/* Concurrency meter. */
static atomic_int running, max_running;
static void enter_meter(void)
{
    int r = atomic_fetch_add(&running, 1) + 1;
    int m = atomic_load(&max_running);
    while (r > m && !atomic_compare_exchange_weak(&max_running, &m, r))
        ;
}
static void leave_meter(void)
{
    atomic_fetch_sub(&running, 1);
}

typedef struct {
    int id;
    int ms;
} args_t;

static void target(const MACC_Region *r, int id, int ms, int flags, int ndeps, const MACC_Dep *deps)
{
    args_t a = {id, ms};
    MACC_target(r, &a, sizeof a, 0, NULL, ndeps, deps, flags, MACC_DEVICE_ANY, 1);
}

/* Records its id after sleeping. */
static int fn_record(void *args, MACC_TaskEnv *env)
{
    args_t *a = args;
    (void)env;
    if (a->ms)
        sleep_ms(a->ms);
    record(a->id);
    return 0;
}
HOST_REGION(r_record, fn_record, MACC_RES_DEFAULT);

/* ---- basic execution ---------------------------------------------------------------- */

static atomic_int done_flag;
static int fn_sleep_then_flag(void *args, MACC_TaskEnv *env)
{
    args_t *a = args;
    cr_assert_eq(env->device_kind, MACC_DEV_HOST);
    cr_assert_eq(env->device_index, 0);
    cr_assert_geq(env->nthreads, 1);
    sleep_ms(a->ms);
    atomic_store(&done_flag, a->id);
    return 0;
}
HOST_REGION(r_sleep_flag, fn_sleep_then_flag, MACC_RES_DEFAULT);

Test(rt, sync_target_returns_after_completion)
{
    target(&r_sleep_flag, 7, 50, 0, 0, NULL);
    cr_assert_eq(atomic_load(&done_flag), 7, "the synchronous region returned before it finished");
    cr_assert_eq(macc_device_tasks(macc_num_devices() - 1), 1);
}

static pthread_t runner_thread;
static int fn_note_thread(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    __atomic_store_n(&runner_thread, pthread_self(), __ATOMIC_RELEASE);
    return 0;
}
HOST_REGION(r_note_thread, fn_note_thread, MACC_RES_DEFAULT);

Test(rt, undeferred_host_task_inline)
{
    target(&r_note_thread, 0, 0, 0, 0, NULL);
    cr_assert(pthread_equal(runner_thread, pthread_self()));
    /* a deferred task runs on a worker while its creating thread goes on
     * (a thread waiting in taskwait may run it itself: not waited for here) */
    runner_thread = pthread_self();
    target(&r_note_thread, 0, 0, MACC_NOWAIT, 0, NULL);
    double end = now_s() + 10;
    while (pthread_equal(__atomic_load_n(&runner_thread, __ATOMIC_ACQUIRE), pthread_self()) && now_s() < end)
        sleep_ms(1);
    MACC_taskwait(NULL);
    cr_assert(!pthread_equal(runner_thread, pthread_self()), "a deferred task runs on a worker");
}

typedef struct {
    int a, b;
    double c;
} big_args_t;
static atomic_int args_ok;
static int fn_check_args(void *args, MACC_TaskEnv *env)
{
    big_args_t *a = args;
    (void)env;
    sleep_ms(20);
    if (a->a == 1 && a->b == 2 && a->c == 3.5)
        atomic_fetch_add(&args_ok, 1);
    return 0;
}
HOST_REGION(r_check_args, fn_check_args, MACC_RES_DEFAULT);

Test(rt, nowait_copies_arguments)
{
    big_args_t a = {1, 2, 3.5};
    MACC_target(&r_check_args, &a, sizeof a, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    a.a = 100; /* the task has its own copy */
    a.c = -1;
    MACC_target(&r_check_args, &a, sizeof a, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&args_ok), 1);
}

/* Host pointers: env->ptrs[i] is maps[i].base. */
static void *seen_ptrs[3];
static int fn_ptrs(void *args, MACC_TaskEnv *env)
{
    (void)args;
    for (int i = 0; i < 3; i++)
        seen_ptrs[i] = env->ptrs[i];
    double *x = env->ptrs[0];
    x[5] += 1; /* writes through the mapped pointer */
    return 0;
}
HOST_REGION(r_ptrs, fn_ptrs, MACC_RES_DEFAULT);

Test(rt, maps_give_host_addresses)
{
    double x[10] = {0};
    int y[4];
    double *p = x + 2;
    MACC_Map maps[3] = {
        {"x", x, x, sizeof x, MACC_MAP_TOFROM},
        {"y", y, y + 1, 2 * sizeof(int), MACC_MAP_TO},
        {"p", p, p + 3, 4 * sizeof(double), MACC_MAP_FROM}, /* base outside the section */
    };
    MACC_target(&r_ptrs, NULL, 0, 3, maps, 0, NULL, 0, MACC_DEVICE_ANY, 1);
    cr_assert_eq(seen_ptrs[0], (void *)x);
    cr_assert_eq(seen_ptrs[1], (void *)y);
    cr_assert_eq(seen_ptrs[2], (void *)p);
    cr_assert_eq(x[5], 1.0);
}

/* ---- nowait and taskwait ------------------------------------------------------------ */

static atomic_int counter;
static int fn_count(void *args, MACC_TaskEnv *env)
{
    args_t *a = args;
    (void)env;
    if (a->ms)
        sleep_ms(a->ms);
    atomic_fetch_add(&counter, 1);
    return 0;
}
HOST_REGION(r_count, fn_count, MACC_RES_DEFAULT);
HOST_REGION(r_count5, fn_count, 5);

Test(rt, nowait_then_taskwait)
{
    for (int i = 0; i < 8; i++)
        target(&r_count, i, 10, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&counter), 8);
    MACC_taskwait(NULL); /* nothing left: returns at once */
    cr_assert_eq(macc_device_tasks(macc_num_devices() - 1), 8);
}

Test(rt, nowait_returns_before_the_task_ends)
{
    target(&r_sleep_flag, 3, 200, MACC_NOWAIT, 0, NULL);
    cr_assert_eq(atomic_load(&done_flag), 0);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&done_flag), 3);
}

/* ---- dependences ---------------------------------------------------------------------- */

Test(rt, depend_out_in_inout_chain)
{
    int x;
    MACC_Dep out = {&x, sizeof x, MACC_DEP_OUT};
    MACC_Dep in = {&x, sizeof x, MACC_DEP_IN};
    MACC_Dep inout = {&x, sizeof x, MACC_DEP_INOUT};
    target(&r_record, 1, 60, MACC_NOWAIT, 1, &out);
    target(&r_record, 2, 30, MACC_NOWAIT, 1, &in);
    target(&r_record, 3, 0, MACC_NOWAIT, 1, &inout);
    target(&r_record, 4, 0, MACC_NOWAIT, 1, &in);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&seq_n), 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(seq[i], i + 1, "position %d ran task %d", i, seq[i]);
}

/* A new empty file from the template path (its XXXXXX replaced), named in
 * the environment variable `name` (MACC_TRACE, MACC_SCHED_LOG). */
static void temp_file_in_env(char *path, const char *name)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    setenv(name, path, 1);
}

/* The ready tasks are taken in the order they were created in: a chain's
 * next link, made ready when its predecessor ends, goes before the tasks
 * created after it (one host task at a time: resources(100)); with
 * MACC_PROGRAM_ORDER=0, after them (the order they became ready). */
HOST_REGION(r_record_all, fn_record, 100);
/* Task 1 (100 ms), its successor 2, then `later` independent tasks of
 * `later_ms` each (at most 100). */
static void successor_before_later_tasks_n(int later, int later_ms)
{
    setenv("MACC_DEVICES", "host", 1);
    int x, y[100];
    MACC_Dep out = {&x, sizeof x, MACC_DEP_OUT};
    MACC_Dep inout = {&x, sizeof x, MACC_DEP_INOUT};
    target(&r_record_all, 1, 100, MACC_NOWAIT, 1, &out);
    target(&r_record_all, 2, 0, MACC_NOWAIT, 1, &inout);
    for (int k = 0; k < later; k++) {
        MACC_Dep d = {&y[k], sizeof y[k], MACC_DEP_OUT};
        target(&r_record_all, 3 + k, later_ms, MACC_NOWAIT, 1, &d);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&seq_n), 2 + later);
}

static void successor_before_later_tasks(void)
{
    successor_before_later_tasks_n(4, 1);
}

Test(rt, a_successor_goes_before_later_tasks)
{
    successor_before_later_tasks();
    for (int i = 0; i < 6; i++)
        cr_assert_eq(seq[i], i + 1, "position %d ran task %d", i, seq[i]);
}

/* The same behind more later tasks than the queue's ordered insert searches
 * (SCHED__LINK_SCAN, 64): the successor, older than the queue's head, goes
 * to the head, not 64 tasks from the tail. */
Test(rt, a_successor_goes_before_a_hundred_later_tasks)
{
    successor_before_later_tasks_n(100, 0);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(seq[i], i + 1, "position %d ran task %d", i, seq[i]);
}

Test(rt, ready_order_puts_a_successor_after_later_tasks)
{
    setenv("MACC_PROGRAM_ORDER", "0", 1);
    successor_before_later_tasks();
    cr_assert_eq(seq[0], 1);
    cr_assert_eq(seq[5], 2, "the successor ran before a later task (last: %d)", seq[5]);
    unsetenv("MACC_PROGRAM_ORDER");
}

/* MACC_SCHED_LOG: a line per task the dispatch walk looks at. */
Test(rt, the_scheduling_log_has_a_line_per_placement)
{
    char path[] = "/tmp/macc_sched_log_XXXXXX";
    temp_file_in_env(path, "MACC_SCHED_LOG");
    successor_before_later_tasks();
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[1024];
    int placed = 0, task2 = 0;
    while (fgets(line, sizeof line, f)) {
        cr_assert(strstr(line, " ms task ") && strstr(line, "r_record_all") && strstr(line, "| host free "),
                  "line: %s", line);
        if (strstr(line, ": placed on host"))
            placed++;
        if (strstr(line, " task 2 r_record_all queue global: placed on host"))
            task2++;
    }
    fclose(f);
    unlink(path);
    unsetenv("MACC_SCHED_LOG");
    cr_assert_eq(placed, 6, "%d placements logged", placed);
    cr_assert_eq(task2, 1);
}

Test(rt, depend_write_after_write_and_read)
{
    int x;
    MACC_Dep out = {&x, sizeof x, MACC_DEP_OUT};
    MACC_Dep in = {&x, sizeof x, MACC_DEP_IN};
    target(&r_record, 1, 50, MACC_NOWAIT, 1, &out);
    target(&r_record, 2, 0, MACC_NOWAIT, 1, &out); /* WAW */
    target(&r_record, 3, 50, MACC_NOWAIT, 1, &in);
    target(&r_record, 4, 0, MACC_NOWAIT, 1, &out); /* WAR */
    MACC_taskwait(NULL);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(seq[i], i + 1);
}

/* Two tasks that each wait for the other to start: they prove they ran at once. */
static atomic_int arrived, both_seen;
static int fn_rendezvous(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_fetch_add(&arrived, 1);
    if (wait_at_least(&arrived, 2, 5.0))
        atomic_fetch_add(&both_seen, 1);
    return 0;
}
HOST_REGION(r_rendezvous, fn_rendezvous, MACC_RES_DEFAULT);

Test(rt, in_in_run_concurrently)
{
    int x;
    MACC_Dep in = {&x, sizeof x, MACC_DEP_IN};
    target(&r_rendezvous, 0, 0, MACC_NOWAIT, 1, &in);
    target(&r_rendezvous, 0, 0, MACC_NOWAIT, 1, &in);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&both_seen), 2, "two readers of x did not run concurrently");
}

Test(rt, disjoint_adjacent_ranges_run_concurrently)
{
    int a[100];
    MACC_Dep lo = {a, 50 * sizeof(int), MACC_DEP_OUT};
    MACC_Dep hi = {a + 50, 50 * sizeof(int), MACC_DEP_INOUT};
    target(&r_rendezvous, 0, 0, MACC_NOWAIT, 1, &lo);
    target(&r_rendezvous, 0, 0, MACC_NOWAIT, 1, &hi);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&both_seen), 2);
}

Test(rt, overlapping_ranges_are_ordered)
{
    int a[200];
    MACC_Dep w0 = {a, 100 * sizeof(int), MACC_DEP_OUT};        /* a[0:100]  */
    MACC_Dep r1 = {a + 50, 100 * sizeof(int), MACC_DEP_IN};    /* a[50:100] */
    MACC_Dep w2 = {a + 120, 10 * sizeof(int), MACC_DEP_INOUT}; /* a[120:10] inside r1 */
    MACC_Dep r3 = {a, 200 * sizeof(int), MACC_DEP_IN};         /* everything */
    target(&r_record, 1, 60, MACC_NOWAIT, 1, &w0);
    target(&r_record, 2, 40, MACC_NOWAIT, 1, &r1);
    target(&r_record, 3, 20, MACC_NOWAIT, 1, &w2);
    target(&r_record, 4, 0, MACC_NOWAIT, 1, &r3);
    MACC_taskwait(NULL);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(seq[i], i + 1, "position %d ran task %d", i, seq[i]);
}

Test(rt, several_deps_and_self_overlap)
{
    int x, y;
    MACC_Dep wx = {&x, sizeof x, MACC_DEP_OUT};
    MACC_Dep wy = {&y, sizeof y, MACC_DEP_OUT};
    /* One task that reads and writes the same x, and reads y twice: no self-wait. */
    MACC_Dep both[4] = {{&x, sizeof x, MACC_DEP_IN},
                        {&x, sizeof x, MACC_DEP_INOUT},
                        {&y, sizeof y, MACC_DEP_IN},
                        {&y, sizeof y, MACC_DEP_IN}};
    target(&r_record, 1, 40, MACC_NOWAIT, 1, &wx);
    target(&r_record, 2, 60, MACC_NOWAIT, 1, &wy);
    target(&r_record, 3, 0, MACC_NOWAIT, 4, both);
    target(&r_record, 4, 0, MACC_NOWAIT, 1, &wx);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&seq_n), 4);
    cr_assert_eq(seq[2], 3);
    cr_assert_eq(seq[3], 4);
}

Test(rt, undeferred_task_waits_for_deferred_predecessor)
{
    int x;
    MACC_Dep out = {&x, sizeof x, MACC_DEP_OUT};
    MACC_Dep in = {&x, sizeof x, MACC_DEP_IN};
    target(&r_record, 1, 80, MACC_NOWAIT, 1, &out);
    target(&r_record, 2, 0, 0, 1, &in); /* synchronous, depends on task 1 */
    cr_assert_eq(atomic_load(&seq_n), 2);
    cr_assert_eq(seq[0], 1);
    cr_assert_eq(seq[1], 2);
}

Test(rt, dependence_on_finished_task)
{
    int x;
    MACC_Dep out = {&x, sizeof x, MACC_DEP_OUT};
    target(&r_record, 1, 0, MACC_NOWAIT, 1, &out);
    MACC_taskwait(NULL);
    target(&r_record, 2, 0, 0, 1, &out);
    cr_assert_eq(atomic_load(&seq_n), 2);
}

/* 20000 dependent tasks: 50 chains of inout updates with a fan-in reader of all
 * chains every 40 steps; the result must equal the sequential one. */
#define ST_K 50
#define ST_STEPS 400
#define ST_EVERY 40
static long st_x[ST_K];
static long st_sums[ST_STEPS / ST_EVERY];
typedef struct {
    int k, s;
} st_args;
static int fn_st_update(void *args, MACC_TaskEnv *env)
{
    st_args *a = args;
    long *x = env->ptrs[0];
    x[a->k] = (x[a->k] * 31 + a->s + a->k) % 1000003;
    return 0;
}
static int fn_st_sum(void *args, MACC_TaskEnv *env)
{
    st_args *a = args;
    long *x = env->ptrs[0];
    long s = 0;
    for (int k = 0; k < ST_K; k++)
        s += x[k];
    st_sums[a->s] = s;
    return 0;
}
HOST_REGION(r_st_update, fn_st_update, 10);
HOST_REGION(r_st_sum, fn_st_sum, MACC_RES_DEFAULT);

Test(rt, stress_20000_dependent_tasks, .timeout = 120)
{
    long ref[ST_K] = {0}, refsums[ST_STEPS / ST_EVERY];
    for (int s = 0; s < ST_STEPS; s++) {
        for (int k = 0; k < ST_K; k++)
            ref[k] = (ref[k] * 31 + s + k) % 1000003;
        if ((s + 1) % ST_EVERY == 0) {
            long sum = 0;
            for (int k = 0; k < ST_K; k++)
                sum += ref[k];
            refsums[s / ST_EVERY] = sum;
        }
    }
    double t0 = now_s();
    int ntasks = 0;
    for (int s = 0; s < ST_STEPS; s++) {
        for (int k = 0; k < ST_K; k++) {
            st_args a = {k, s};
            MACC_Map m = {"x", st_x, st_x, sizeof st_x, MACC_MAP_TOFROM};
            MACC_Dep d = {&st_x[k], sizeof st_x[k], MACC_DEP_INOUT};
            MACC_target(&r_st_update, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
            ntasks++;
        }
        if ((s + 1) % ST_EVERY == 0) {
            st_args a = {0, s / ST_EVERY};
            MACC_Map m = {"x", st_x, st_x, sizeof st_x, MACC_MAP_TO};
            MACC_Dep d[2] = {{st_x, sizeof st_x, MACC_DEP_IN},
                             {&st_sums[s / ST_EVERY], sizeof(long), MACC_DEP_OUT}};
            MACC_target(&r_st_sum, &a, sizeof a, 1, &m, 2, d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
            ntasks++;
        }
    }
    MACC_taskwait(NULL);
    double dt = now_s() - t0;
    cr_log_info("stress: %d tasks in %.3f s (%.1f us/task)", ntasks, dt, dt / ntasks * 1e6);
    for (int k = 0; k < ST_K; k++)
        cr_assert_eq(st_x[k], ref[k], "chain %d", k);
    for (int j = 0; j < ST_STEPS / ST_EVERY; j++)
        cr_assert_eq(st_sums[j], refsums[j], "fan-in %d", j);
    cr_assert_eq(macc_device_tasks(macc_num_devices() - 1), ntasks);
}

/* Many readers, then one writer that must see them all finished. */
static atomic_int readers_done;
static atomic_int writer_saw;
static int fn_reader(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_fetch_add(&readers_done, 1);
    return 0;
}
static int fn_writer(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&writer_saw, atomic_load(&readers_done));
    return 0;
}
HOST_REGION(r_reader, fn_reader, 2);
HOST_REGION(r_writer, fn_writer, MACC_RES_DEFAULT);

Test(rt, fan_in_of_many_readers, .timeout = 120)
{
    int x;
    MACC_Dep in = {&x, sizeof x, MACC_DEP_IN};
    MACC_Dep out = {&x, sizeof x, MACC_DEP_OUT};
    for (int i = 0; i < 5000; i++)
        target(&r_reader, i, 0, MACC_NOWAIT, 1, &in);
    target(&r_writer, 0, 0, MACC_NOWAIT, 1, &out);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&writer_saw), 5000);
}

/* ---- tokens --------------------------------------------------------------------------- */

static int fn_metered(void *args, MACC_TaskEnv *env)
{
    args_t *a = args;
    (void)env;
    enter_meter();
    if (a->id > 0) /* wait (bounded) for id tasks to run at once */
        wait_at_least(&running, a->id, 5.0);
    sleep_ms(a->ms);
    leave_meter();
    return 0;
}
HOST_REGION(r_res60, fn_metered, 60);
HOST_REGION(r_res10, fn_metered, 10);
HOST_REGION(r_resdef, fn_metered, MACC_RES_DEFAULT);

Test(rt, resources_60_never_two_at_once)
{
    for (int i = 0; i < 6; i++)
        target(&r_res60, 0, 15, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&max_running), 1);
}

Test(rt, resources_10_allows_several)
{
    for (int i = 0; i < 8; i++)
        target(&r_res10, 8, 5, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&max_running), 8, "max concurrency %d", atomic_load(&max_running));
}

Test(rt, default_resources_deferred_two_at_a_time)
{
    /* Deferred default: 50 tokens, so two at a time, never three. */
    for (int i = 0; i < 6; i++)
        target(&r_resdef, 2, 20, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&max_running), 2);
}

Test(rt, default_resources_undeferred_takes_the_host)
{
    /* An undeferred task with default resources needs all 100 host tokens: it
     * starts only when the deferred one (50) has finished. */
    target(&r_sleep_flag, 5, 100, MACC_NOWAIT, 0, NULL);
    target(&r_record, 1, 0, 0, 0, NULL);
    cr_assert_eq(atomic_load(&done_flag), 5);
    MACC_taskwait(NULL);
}

Test(rt, tokens_are_given_back)
{
    for (int i = 0; i < 30; i++)
        target(&r_res60, 0, 0, i % 2 ? MACC_NOWAIT : 0, 0, NULL);
    MACC_taskwait(NULL);
    maccrt_device *h = maccrt_rt.host;
    pthread_mutex_lock(&maccrt_rt.lock);
    int free_tokens = h->tokens_free, peak = h->tokens_peak_used;
    pthread_mutex_unlock(&maccrt_rt.lock);
    cr_assert_eq(free_tokens, 100);
    cr_assert_eq(peak, 60);
}

static int seen_nthreads[8];
static int fn_nthreads(void *args, MACC_TaskEnv *env)
{
    args_t *a = args;
    seen_nthreads[a->id] = env->nthreads;
    return 0;
}
static const MACC_Version v_nt50[] = {{MACC_DEV_HOST, 0, 50, 0, fn_nthreads}};
static const MACC_Version v_nt100[] = {{MACC_DEV_HOST, 0, 100, 0, fn_nthreads}};
static const MACC_Version v_nt10[] = {{MACC_DEV_HOST, 0, 10, 0, fn_nthreads}};
static const MACC_Version v_nt25[] = {{MACC_DEV_HOST, 0, 25, 0, fn_nthreads}};
static const MACC_Version v_ntdef[] = {{MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_nthreads}};
static const MACC_Version v_ntauto[] = {{MACC_DEV_HOST, 0, MACC_RES_AUTO, 0, fn_nthreads}};
static const MACC_Region r_nt[] = {
    {{__FILE__, __LINE__, 1, "t"}, "nt50", 1, v_nt50},
    {{__FILE__, __LINE__, 1, "t"}, "nt100", 1, v_nt100},
    {{__FILE__, __LINE__, 1, "t"}, "nt10", 1, v_nt10},
    {{__FILE__, __LINE__, 1, "t"}, "nt25", 1, v_nt25},
    {{__FILE__, __LINE__, 1, "t"}, "ntdef", 1, v_ntdef},
    {{__FILE__, __LINE__, 1, "t"}, "ntdef", 1, v_ntdef},
    {{__FILE__, __LINE__, 1, "t"}, "ntauto", 1, v_ntauto},
};

Test(rt, nthreads_from_tokens)
{
    setenv("MACC_HOST_THREADS", "8", 1);
    for (int i = 0; i < 7; i++)
        target(&r_nt[i], i, 0, i == 4 ? 0 : MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(seen_nthreads[0], 4);  /* 8 * 50 / 100 */
    cr_assert_eq(seen_nthreads[1], 8);  /* 100 */
    cr_assert_eq(seen_nthreads[2], 1);  /* 8 * 10 / 100 = 0 -> at least 1 */
    cr_assert_eq(seen_nthreads[3], 2);  /* 25 */
    cr_assert_eq(seen_nthreads[4], 8);  /* default, undeferred: 100 */
    cr_assert_eq(seen_nthreads[5], 4);  /* default, deferred: 50 */
    cr_assert_eq(seen_nthreads[6], 8);  /* auto: its first instance tries 100 */
    cr_assert_eq(maccrt_host_nthreads(0), 1);
}

/* resources(auto): the instances try 100, 50 and 25 tokens, then the level
 * that gives the most throughput per device is kept. */
static atomic_int auto_last_nthreads;
static int fn_auto_flat(void *args, MACC_TaskEnv *env)
{
    (void)args; /* the same time whatever the threads: narrow is best (10 ms: a 3 ms
                 * sleep stretched past 9 ms once under load and 50 tokens won) */
    atomic_store(&auto_last_nthreads, env->nthreads);
    sleep_ms(10);
    return 0;
}
static int fn_auto_steep(void *args, MACC_TaskEnv *env)
{
    (void)args; /* much slower with fewer threads: wide is best (5 ms at 8 threads:
                 * 2 ms took over 4 on average once, the ASan build on a loaded machine
                 * opening its teams, and 50 tokens won) */
    atomic_store(&auto_last_nthreads, env->nthreads);
    int q = 8 / env->nthreads;
    sleep_ms(5 * q * q);
    return 0;
}
static const MACC_Version v_auto_flat[] = {{MACC_DEV_HOST, 0, MACC_RES_AUTO, 0, fn_auto_flat}};
static const MACC_Version v_auto_steep[] = {{MACC_DEV_HOST, 0, MACC_RES_AUTO, 0, fn_auto_steep}};
static const MACC_Region r_auto_flat = {{__FILE__, __LINE__, 1, "t"}, "auto_flat", 1, v_auto_flat};
static const MACC_Region r_auto_steep = {{__FILE__, __LINE__, 1, "t"}, "auto_steep", 1, v_auto_steep};

Test(rt, resources_auto_learns_the_split)
{
    setenv("MACC_HOST_THREADS", "8", 1);
    for (int i = 0; i < 8; i++) /* one at a time: clean measurements */
        target(&r_auto_flat, i, 0, 0, 0, NULL);
    maccrt_region_info *ri = maccrt_region_info_get(&r_auto_flat);
    cr_assert_eq(ri->auto_choice[MACC_DEV_HOST], 25, "flat: %d", ri->auto_choice[MACC_DEV_HOST]);
    cr_assert_eq(atomic_load(&auto_last_nthreads), 2, "25 tokens of 8 threads");
    for (int i = 0; i < 8; i++)
        target(&r_auto_steep, i, 0, 0, 0, NULL);
    ri = maccrt_region_info_get(&r_auto_steep);
    cr_assert_eq(ri->auto_choice[MACC_DEV_HOST], 100, "steep: %d", ri->auto_choice[MACC_DEV_HOST]);
    cr_assert_eq(atomic_load(&auto_last_nthreads), 8);
}

static atomic_int omp_team;
static int fn_omp(void *args, MACC_TaskEnv *env)
{
    (void)args;
#pragma omp parallel num_threads(env->nthreads)
    {
#pragma omp single
        atomic_store(&omp_team, omp_get_num_threads());
    }
    return 0;
}
HOST_REGION(r_omp, fn_omp, 75);

Test(rt, version_opens_openmp_team_of_nthreads)
{
    setenv("MACC_HOST_THREADS", "4", 1);
    target(&r_omp, 0, 0, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&omp_team), 3); /* 4 * 75 / 100 */
    target(&r_omp, 0, 0, 0, 0, NULL);
    cr_assert_eq(atomic_load(&omp_team), 3);
}

/* ---- versions, if, device selection -------------------------------------------------- */

static atomic_int which;
static int fn_gpu_never(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&which, -1);
    return 0;
}
static int fn_host1(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&which, 1);
    return 0;
}
static int fn_host2(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&which, 2);
    return 0;
}
static const MACC_Version v_gpu_host[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_gpu_never},
                                          {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_host1}};
static const MACC_Region r_gpu_host = {{"app.c", 12, 1, "main"}, "macc_k_main_L12", 2, v_gpu_host};
static const MACC_Version v_gpu_fb[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_gpu_never},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, MACC_VERSION_FALLBACK, fn_host2}};
static const MACC_Region r_gpu_fb = {{"app.c", 20, 1, "main"}, "macc_k_main_L20", 2, v_gpu_fb};
static const MACC_Version v_host_fb[] = {
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, MACC_VERSION_FALLBACK, fn_host2},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_host1}};
static const MACC_Region r_host_fb = {{"app.c", 30, 1, "main"}, "macc_k_main_L30", 2, v_host_fb};
static const MACC_Version v_gpu_only[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_gpu_never}};
static const MACC_Region r_gpu_only = {{"app.c", 40, 1, "main"}, "macc_k_main_L40", 1, v_gpu_only};

Test(rt, ifcond_false_runs_host_version)
{
    MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_NVIDIA, 0);
    cr_assert_eq(atomic_load(&which), 1);
    atomic_store(&which, 0);
    MACC_target(&r_gpu_fb, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 0);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&which), 2, "if(false) may use a fallback host version");
}

Test(rt, no_gpu_runs_host_version)
{
    int sels[] = {MACC_DEVICE_ANY, MACC_DEVICE_DEFAULT, MACC_DEVICE_NVIDIA, MACC_DEVICE_HOST, 0, 7};
    for (size_t i = 0; i < sizeof sels / sizeof sels[0]; i++) {
        atomic_store(&which, 0);
        MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, sels[i], 1);
        cr_assert_eq(atomic_load(&which), 1, "selector %d", sels[i]);
    }
}

Test(rt, fallback_version_only_without_other_device)
{
    /* nvidia + host fallback, no GPU: the fallback runs. */
    MACC_target(&r_gpu_fb, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 1);
    cr_assert_eq(atomic_load(&which), 2);
    /* host fallback listed first + a normal host version: the normal one runs. */
    MACC_target(&r_host_fb, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 1);
    cr_assert_eq(atomic_load(&which), 1);
}

Test(rt, gpu_only_region_without_gpu_fails, .exit_code = 1)
{
    MACC_target(&r_gpu_only, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 1);
}

Test(rt, mandatory_without_gpu_fails, .exit_code = 1)
{
    setenv("MACC_TARGET_OFFLOAD", "mandatory", 1);
    MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 1);
}

Test(rt, mandatory_allows_host_regions_and_explicit_host)
{
    setenv("MACC_TARGET_OFFLOAD", "mandatory", 1);
    target(&r_record, 1, 0, 0, 0, NULL); /* host-only region */
    MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_HOST, 1);
    cr_assert_eq(atomic_load(&which), 1);
    atomic_store(&which, 0);
    MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 0); /* if(false) */
    cr_assert_eq(atomic_load(&which), 1);
}

Test(rt, mandatory_bad_device_number_fails, .exit_code = 1)
{
    setenv("MACC_TARGET_OFFLOAD", "mandatory", 1);
    target(&r_record, 1, 0, 0, 0, NULL);
    MACC_target(&r_record, NULL, 0, 0, NULL, 0, NULL, 0, 3, 1);
}

Test(rt, offload_disabled_is_host_only)
{
    setenv("MACC_TARGET_OFFLOAD", "disabled", 1);
    cr_assert_eq(macc_num_devices(), 1);
    cr_assert_eq(macc_device_kind(0), MACC_DEV_HOST);
    MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 1);
    cr_assert_eq(atomic_load(&which), 1);
}

Test(rt, macc_devices_host)
{
    setenv("MACC_DEVICES", "host", 1);
    cr_assert_eq(macc_num_devices(), 1);
    cr_assert_str_eq(macc_device_name(0), "host");
    target(&r_record, 1, 0, 0, 0, NULL);
    cr_assert_eq(macc_device_tasks(0), 1);
}

Test(rt, bad_macc_devices_fails, .exit_code = 1)
{
    setenv("MACC_DEVICES", "tpu", 1);
    macc_num_devices();
}

static int fn_fail(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    return 3;
}
HOST_REGION(r_fail, fn_fail, MACC_RES_DEFAULT);

Test(rt, failing_version_exits, .exit_code = 1)
{
    target(&r_fail, 0, 0, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
}

/* Runs fn in a child process with stderr captured; returns the exit status. */
static int run_child(void (*fn)(void), char *out, size_t outlen)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        fn();
        _exit(0);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < outlen && (k = read(fd[0], out + n, outlen - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = 0;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void child_fail(void)
{
    target(&r_fail, 0, 0, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
}

static void child_not_present(void)
{
    static const MACC_SrcLoc loc = {"prog.c", 33, 9, "main"};
    double x[4];
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO | MACC_MAP_PRESENT};
    MACC_data_begin(&loc, 1, &m, MACC_DEVICE_HOST);
}

static void child_mandatory(void)
{
    setenv("MACC_TARGET_OFFLOAD", "mandatory", 1);
    MACC_target(&r_gpu_host, NULL, 0, 0, NULL, 0, NULL, 0, MACC_DEVICE_ANY, 1);
}

static void child_stats(void)
{
    setenv("MACC_STATS", "1", 1);
    target(&r_record, 1, 0, 0, 0, NULL);
    target(&r_record, 2, 0, MACC_NOWAIT, 0, NULL);
    exit(0); /* the exit handler waits for the task, then prints */
}

Test(rt, error_messages_name_the_location)
{
    char buf[4096];
    cr_assert_eq(run_child(child_fail, buf, sizeof buf), 1);
    cr_assert(strstr(buf, "macc: error: " __FILE__) == buf, "got: %s", buf);
    cr_assert(strstr(buf, "'r_fail' failed on host (error 3)"), "got: %s", buf);

    cr_assert_eq(run_child(child_not_present, buf, sizeof buf), 1);
    const char *want = "macc: error: prog.c:33: 'x' is not present on device host\n";
    cr_assert(strncmp(buf, want, strlen(want)) == 0, "got: %s", buf);

    cr_assert_eq(run_child(child_mandatory, buf, sizeof buf), 1);
    cr_assert(strstr(buf, "macc: error: app.c:12: MACC_TARGET_OFFLOAD=mandatory") == buf,
              "got: %s", buf);
}

Test(rt, stats_printed_at_exit)
{
    char buf[4096];
    cr_assert_eq(run_child(child_stats, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "macc: statistics"), "got: %s", buf);
    cr_assert(strstr(buf, "host "), "got: %s", buf);
}

/* ---- taskwait per thread, threads, nesting ----------------------------------------------- */

static atomic_int release_a, a_done, a_started;
static int fn_wait_release(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&a_started, 1);
    wait_at_least(&release_a, 1, 10.0);
    atomic_store(&a_done, 1);
    return 0;
}
HOST_REGION(r_wait_release, fn_wait_release, 30);
HOST_REGION(r_quick, fn_count, 30);

static atomic_int b_ok;
static void *thread_b(void *arg)
{
    (void)arg;
    wait_at_least(&a_started, 1, 10.0);
    for (int i = 0; i < 3; i++)
        target(&r_quick, 0, 5, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL); /* own tasks only: must not wait for thread A's task */
    if (atomic_load(&counter) == 3 && atomic_load(&a_done) == 0)
        atomic_store(&b_ok, 1);
    atomic_store(&release_a, 1);
    return NULL;
}

Test(rt, taskwait_waits_only_for_own_tasks)
{
    target(&r_wait_release, 0, 0, MACC_NOWAIT, 0, NULL);
    pthread_t b;
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(b, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&b_ok), 1);
    cr_assert_eq(atomic_load(&a_done), 1);
}

static void *thread_spawn_and_exit(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        target(&r_count, i, 2, MACC_NOWAIT, 0, NULL);
    return NULL; /* exits without taskwait */
}

Test(rt, thread_exits_before_its_tasks)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_spawn_and_exit, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    maccrt_task_wait_all();
    cr_assert_eq(atomic_load(&counter), 80);
}

Test(rt, concurrent_encountering_threads_with_openmp)
{
    /* Several OpenMP threads launch synchronous and deferred regions at once. */
#pragma omp parallel num_threads(4)
    {
        for (int i = 0; i < 50; i++)
            target(i % 2 ? &r_count : &r_count5, i, 0, i % 3 ? MACC_NOWAIT : 0, 0, NULL);
        MACC_taskwait(NULL);
    }
    cr_assert_eq(atomic_load(&counter), 200);
}

static int fn_outer(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    /* A synchronous region inside a running task: runs inline, no tokens. */
    target(&r_record, 2, 0, 0, 0, NULL);
    record(3);
    return 0;
}
HOST_REGION(r_outer, fn_outer, 100);

Test(rt, nested_synchronous_region_does_not_deadlock)
{
    target(&r_outer, 0, 0, 0, 0, NULL);
    target(&r_outer, 0, 0, MACC_NOWAIT, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&seq_n), 4);
}

/* ---- present table -------------------------------------------------------------------- */

static const MACC_SrcLoc dloc = {"data.c", 5, 1, "main"};

static void counts(const void *p, long *s, long *d)
{
    maccrt_map_counts(maccrt_rt.host, p, s, d);
}

Test(rt, enter_exit_dynamic_counts)
{
    double x[100] = {0};
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_Map mo = {"x", x, x, sizeof x, MACC_MAP_FROM};
    long s, d;
    cr_assert(!MACC_is_present(x, sizeof x, MACC_DEVICE_HOST));
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(MACC_is_present(x, sizeof x, MACC_DEVICE_HOST));
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    counts(x, &s, &d);
    cr_assert_eq(s, 0);
    cr_assert_eq(d, 2);
    MACC_data_exit(&dloc, 1, &mo, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(MACC_is_present(x, sizeof x, MACC_DEVICE_DEFAULT));
    MACC_data_exit(&dloc, 1, &mo, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(!MACC_is_present(x, sizeof x, MACC_DEVICE_DEFAULT));
    MACC_data_exit(&dloc, 1, &mo, MACC_DEVICE_DEFAULT, 0, NULL, 0); /* absent: no-op */
    cr_assert(!MACC_is_present(x, 0, MACC_DEVICE_DEFAULT));
}

Test(rt, structured_and_dynamic_counts)
{
    int a[64];
    MACC_Map m = {"a", a, a, sizeof a, MACC_MAP_TOFROM};
    long s, d;
    MACC_data_begin(&dloc, 1, &m, MACC_DEVICE_DEFAULT);
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    counts(a, &s, &d);
    cr_assert_eq(s, 1);
    cr_assert_eq(d, 1);
    MACC_data_end(&dloc, 1, &m, MACC_DEVICE_DEFAULT);
    cr_assert(MACC_is_present(a, sizeof a, MACC_DEVICE_HOST), "dynamic count keeps it");
    MACC_data_exit(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
    /* The other order. */
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    MACC_data_begin(&dloc, 1, &m, MACC_DEVICE_DEFAULT);
    MACC_data_exit(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(MACC_is_present(a, sizeof a, MACC_DEVICE_HOST), "structured count keeps it");
    MACC_data_end(&dloc, 1, &m, MACC_DEVICE_DEFAULT);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
}

Test(rt, delete_and_finalize_drop_the_dynamic_count)
{
    int a[64];
    MACC_Map m = {"a", a, a, sizeof a, MACC_MAP_TO};
    MACC_Map del = {"a", a, a, sizeof a, MACC_MAP_ALLOC | MACC_MAP_DELETE};
    for (int i = 0; i < 3; i++)
        MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_HOST, 0, NULL, 0);
    MACC_data_exit(&dloc, 1, &del, MACC_DEVICE_HOST, 0, NULL, 0);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
    /* With a structured reference, delete leaves the entry to the region. */
    MACC_data_begin(&dloc, 1, &m, MACC_DEVICE_HOST);
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_HOST, 0, NULL, 0);
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_HOST, 0, NULL, 0);
    MACC_data_exit(&dloc, 1, &del, MACC_DEVICE_HOST, 0, NULL, 0);
    long s, d;
    counts(a, &s, &d);
    cr_assert_eq(s, 1);
    cr_assert_eq(d, 0);
    MACC_data_end(&dloc, 1, &m, MACC_DEVICE_HOST);
    cr_assert(!MACC_is_present(a, 1, MACC_DEVICE_HOST));
    /* OpenMP's map(delete:) sets the one reference count to zero: the entry
     * leaves inside the data region too, whose end then finds nothing */
    MACC_Map odel = {"a", a, a, sizeof a, MACC_MAP_ALLOC | MACC_MAP_DELETE | MACC_MAP_DELETE_ALL};
    MACC_data_begin(&dloc, 1, &m, MACC_DEVICE_HOST);
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_HOST, 0, NULL, 0);
    MACC_data_exit(&dloc, 1, &odel, MACC_DEVICE_HOST, 0, NULL, 0);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
    MACC_data_end(&dloc, 1, &m, MACC_DEVICE_HOST);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
}

Test(rt, containment_and_present_clause)
{
    double a[100];
    MACC_Map whole = {"a", a, a, sizeof a, MACC_MAP_TO};
    MACC_data_enter(&dloc, 1, &whole, MACC_DEVICE_HOST, 0, NULL, 0);
    cr_assert(MACC_is_present(a + 10, 20 * sizeof(double), MACC_DEVICE_HOST));
    cr_assert(!MACC_is_present(a + 90, 20 * sizeof(double), MACC_DEVICE_HOST));
    cr_assert(MACC_is_present(a + 99, 0, MACC_DEVICE_HOST));
    cr_assert(!MACC_is_present(a + 100, 0, MACC_DEVICE_HOST));
    /* A section inside uses the entry (present: is fine), counting on it. */
    MACC_Map part = {"a", a, a + 10, 20 * sizeof(double), MACC_MAP_TO | MACC_MAP_PRESENT};
    MACC_data_begin(&dloc, 1, &part, MACC_DEVICE_HOST);
    long s, d;
    counts(a, &s, &d);
    cr_assert_eq(s, 1);
    cr_assert_eq(d, 1);
    MACC_data_end(&dloc, 1, &part, MACC_DEVICE_HOST);
    MACC_data_exit(&dloc, 1, &whole, MACC_DEVICE_HOST, 0, NULL, 0);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
    cr_assert(!MACC_is_present(a, sizeof a, 5), "no device 5");
}

Test(rt, present_clause_on_absent_data_fails, .exit_code = 1)
{
    double x[4];
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO | MACC_MAP_PRESENT};
    MACC_target(&r_ptrs, NULL, 0, 1, &m, 0, NULL, 0, MACC_DEVICE_ANY, 1);
}

Test(rt, partially_present_data_region_fails, .exit_code = 1)
{
    double x[100];
    MACC_Map lo = {"x", x, x, 50 * sizeof(double), MACC_MAP_TO};
    MACC_Map mid = {"x", x, x + 25, 50 * sizeof(double), MACC_MAP_TO};
    MACC_data_begin(&dloc, 1, &lo, MACC_DEVICE_HOST);
    MACC_data_begin(&dloc, 1, &mid, MACC_DEVICE_HOST);
}

static atomic_int hold_release, holding;
static int fn_hold(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&holding, 1);
    wait_at_least(&hold_release, 1, 10.0);
    return 0;
}
HOST_REGION(r_hold, fn_hold, MACC_RES_DEFAULT);

Test(rt, task_maps_hold_a_reference)
{
    int a[32];
    MACC_Map m = {"a", a, a, sizeof a, MACC_MAP_TOFROM};
    MACC_Map part = {"a", a, a + 4, 8 * sizeof(int), MACC_MAP_TOFROM};
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_HOST, 0, NULL, 0);
    MACC_target(&r_hold, NULL, 0, 1, &part, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    wait_at_least(&holding, 1, 10.0);
    long s, d;
    counts(a, &s, &d);
    cr_assert_eq(s, 1, "the running task holds a structured reference");
    MACC_data_exit(&dloc, 1, &m, MACC_DEVICE_HOST, 0, NULL, 0);
    cr_assert(MACC_is_present(a, sizeof a, MACC_DEVICE_HOST), "still held by the task");
    atomic_store(&hold_release, 1);
    MACC_taskwait(NULL);
    cr_assert(!MACC_is_present(a, sizeof a, MACC_DEVICE_HOST));
}

Test(rt, host_tasks_with_overlapping_unmapped_sections)
{
    /* On the host, task maps of overlapping sections create no entries and
     * never clash (halo exchanges). */
    double a[300];
    for (int i = 0; i < 3; i++) {
        MACC_Map m = {"a", a, a + 100 * i - (i ? 1 : 0), 101 * sizeof(double), MACC_MAP_TOFROM};
        MACC_target(&r_hold, NULL, 0, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    atomic_store(&hold_release, 1);
    MACC_taskwait(NULL);
    cr_assert(!MACC_is_present(a, 0, MACC_DEVICE_HOST));
}

static atomic_int present_during;
static int fn_check_absent(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    sleep_ms(50);
    atomic_store(&present_during, MACC_is_present(st_x, sizeof st_x, MACC_DEVICE_HOST) ? 1 : 2);
    return 0;
}
HOST_REGION(r_check_absent, fn_check_absent, MACC_RES_DEFAULT);

Test(rt, data_directives_with_depend_and_nowait)
{
    MACC_Dep out = {st_x, sizeof st_x, MACC_DEP_OUT};
    MACC_Map m = {"x", st_x, st_x, sizeof st_x, MACC_MAP_TO};
    MACC_Map mu = {"x", st_x, st_x, sizeof st_x, MACC_MAP_FROM};
    MACC_target(&r_check_absent, NULL, 0, 0, NULL, 1, &out, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_HOST, 1, &out, MACC_NOWAIT);
    MACC_data_update(&dloc, 1, &mu, MACC_DEVICE_HOST, 1, &out, MACC_NOWAIT);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&present_during), 2, "enter data ran before the task it depends on");
    cr_assert(MACC_is_present(st_x, sizeof st_x, MACC_DEVICE_HOST));
    MACC_data_exit(&dloc, 1, &m, MACC_DEVICE_HOST, 1, &out, 0); /* undeferred with depend */
    cr_assert(!MACC_is_present(st_x, sizeof st_x, MACC_DEVICE_HOST));
    MACC_data_update(&dloc, 1, &mu, MACC_DEVICE_HOST, 0, NULL, 0); /* absent: no-op */
}

/* A device with its own memory, to test translation and copies the way a GPU
 * plugin will use them. */
static void *fake_alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)d;
    (void)hostptr;
    return calloc(1, bytes);
}
static void fake_free(maccrt_device *d, void *p)
{
    (void)d;
    free(p);
}
static int fake_copy(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    (void)d;
    memcpy(dst, src, bytes);
    return 0;
}
static const maccrt_plugin fake_plugin = {
    .name = "fake",
    .kind = MACC_DEV_NVIDIA,
    .alloc = fake_alloc,
    .free = fake_free,
    .copy_h2d = fake_copy,
    .copy_d2h = fake_copy,
};

Test(rt, separate_memory_translation_and_copies)
{
    maccrt_device dev;
    memset(&dev, 0, sizeof dev);
    dev.plugin = &fake_plugin;
    snprintf(dev.name, sizeof dev.name, "fake:0");
    int a[100];
    for (int i = 0; i < 100; i++)
        a[i] = i;
    int *base = a;
    /* map(tofrom: base[10:50]): the variable `base` lies outside the section. */
    MACC_Map m = {"a", base, a + 10, 50 * sizeof(int), MACC_MAP_TOFROM};
    int *dp = maccrt_map_acquire(&dev, &m, MACCRT_REF_DYNAMIC, &dloc);
    cr_assert_neq(dp, a);
    cr_assert_eq(dp[10], 10, "devptr(base) = dev_start + (base - host_start)");
    cr_assert_eq(dp[59], 59);
    cr_assert_eq(atomic_load(&dev.bytes_h2d), 50 * sizeof(int));
    /* A task's contained section with a pointer into the middle: the entry itself. */
    MACC_Map inner = {"p", a + 20, a + 20, 5 * sizeof(int), MACC_MAP_TOFROM};
    int took;
    void *h;
    int *dq = maccrt_map_task_acquire(&dev, &inner, &took, &h, &dloc);
    cr_assert_eq(took, MACCRT_TOOK_DIR);
    cr_assert_eq(dq, dp + 20);
    cr_assert_eq(atomic_load(&dev.bytes_h2d), 50 * sizeof(int), "present: no copy");
    dq[0] = -20;
    maccrt_map_task_release(&dev, &inner, took, h, &dloc);
    cr_assert_eq(a[20], 20, "no copy back while still mapped");
    maccrt_dir_info info;
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.held, 1);
    cr_assert_eq(info.pinned, 1);
    cr_assert_eq(info.held_dirty, 1, "the task's write is recorded");
    cr_assert_eq(info.cached, 0);
    /* attach-style zero-length map translates a pointer into the section. */
    MACC_Map att = {"q", a + 30, a + 30, 0, MACC_MAP_ATTACH};
    cr_assert_eq(maccrt_map_task_acquire(&dev, &att, &took, &h, &dloc), dp + 30);
    MACC_Map att2 = {"r", a + 90, a + 90, 0, MACC_MAP_ATTACH};
    cr_assert_eq(maccrt_map_task_acquire(&dev, &att2, &took, &h, &dloc), a + 90);
    /* update from */
    dp[11] = -11;
    MACC_Map upd = {"a", a, a + 11, sizeof(int), MACC_MAP_FROM};
    maccrt_map_update(&dev, &upd, &dloc);
    cr_assert_eq(a[11], -11);
    /* exit copies back the whole section */
    maccrt_map_release(&dev, &m, MACCRT_REF_DYNAMIC, 0, &dloc);
    cr_assert_eq(a[20], -20);
    cr_assert(!maccrt_map_is_present(&dev, a + 10, 4));
    cr_assert_eq(atomic_load(&dev.bytes_d2h), sizeof(int) + 50 * sizeof(int));
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.held + info.pinned + info.cached, 0, "the entry went with its last reference");
    /* A task map of absent data on a separate-memory device: a cached copy,
     * not present in the present table's sense, written back at a flush. */
    MACC_Map tm = {"a", a, a, 4 * sizeof(int), MACC_MAP_TOFROM};
    dp = maccrt_map_task_acquire(&dev, &tm, &took, &h, &dloc);
    cr_assert_eq(took, MACCRT_TOOK_DIR);
    cr_assert_eq(dp[3], 3);
    cr_assert(!maccrt_map_is_present(&dev, a, 4 * sizeof(int)));
    dp[3] = -3;
    maccrt_map_task_release(&dev, &tm, took, h, &dloc);
    cr_assert_eq(a[3], 3, "dirty on the device until a synchronisation point");
    cr_assert_eq(maccrt_cache_entries(&dev, NULL), 1);
    maccrt_cache_flush(&dev);
    cr_assert_eq(a[3], -3);
    cr_assert_eq(maccrt_cache_entries(&dev, NULL), 0);
    maccrt_dir_device_fini(&dev);
}

/* Task maps that overlap a cached entry in use without lying inside it
 * (concurrent halo reads) get an entry of their own, detached from the start;
 * a data construct's entry is pinned, and one that lies inside a cached
 * entry takes it over. */
Test(rt, separate_memory_own_entries_and_pins)
{
    maccrt_device dev;
    memset(&dev, 0, sizeof dev);
    dev.plugin = &fake_plugin;
    snprintf(dev.name, sizeof dev.name, "fake:0");
    int a[100];
    for (int i = 0; i < 100; i++)
        a[i] = i;
    /* Task 1 maps a[0:60], task 2 a[40:60] while task 1 runs. */
    MACC_Map m1 = {"a", a, a, 60 * sizeof(int), MACC_MAP_TOFROM};
    MACC_Map m2 = {"a", a, a + 40, 60 * sizeof(int), MACC_MAP_TOFROM};
    int took1, took2;
    void *h1, *h2;
    int *d1 = maccrt_map_task_acquire(&dev, &m1, &took1, &h1, &dloc);
    int *d2 = maccrt_map_task_acquire(&dev, &m2, &took2, &h2, &dloc);
    cr_assert_eq(took1, MACCRT_TOOK_DIR);
    cr_assert_eq(took2, MACCRT_TOOK_DIR);
    cr_assert_eq(d2[40], 40, "own entry indexed with the user's indices");
    cr_assert_eq(d2[99], 99);
    cr_assert_neq(&d2[50], &d1[50], "a copy of its own");
    cr_assert_eq(atomic_load(&dev.bytes_h2d), 120 * sizeof(int));
    cr_assert_eq(maccrt_cache_entries(&dev, NULL), 1, "the own entry is in no tree");
    d2[70] = -70;
    d1[10] = -10;
    maccrt_map_task_release(&dev, &m2, took2, h2, &dloc);
    cr_assert_eq(a[70], -70, "own entry written through (from)");
    cr_assert_eq(maccrt_cache_entries(&dev, NULL), 0, "the stale overlapping copy went");
    maccrt_map_task_release(&dev, &m1, took1, h1, &dloc);
    cr_assert_eq(a[10], -10, "written through: its entry was detached meanwhile");
    /* A data construct pins its entry; a task section overlapping it
     * partially is then an error (tested with fake GPUs below); one inside
     * it uses it and leaves the pin alone. */
    MACC_Map dm = {"a", a, a, 50 * sizeof(int), MACC_MAP_TOFROM};
    int *dd = maccrt_map_acquire(&dev, &dm, MACCRT_REF_STRUCTURED, &dloc);
    maccrt_dir_info info;
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.pinned, 1);
    MACC_Map tin = {"a", a, a + 5, 5 * sizeof(int), MACC_MAP_TO};
    cr_assert_eq(maccrt_map_task_acquire(&dev, &tin, &took2, &h2, &dloc), dd);
    cr_assert_eq(took2, MACCRT_TOOK_DIR);
    maccrt_map_task_release(&dev, &tin, took2, h2, &dloc);
    maccrt_cache_flush(&dev);
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.pinned, 1, "a flush leaves it");
    maccrt_map_release(&dev, &dm, MACCRT_REF_STRUCTURED, 0, &dloc);
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.pinned + info.held, 0, "the pin goes with the entry");
    /* A task's cached entry taken over by a data construct becomes pinned;
     * its dirty bytes go home first. */
    d1 = maccrt_map_task_acquire(&dev, &m1, &took1, &h1, &dloc);
    d1[2] = -2;
    maccrt_map_task_release(&dev, &m1, took1, h1, &dloc);
    cr_assert_eq(a[2], 2);
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.cached_dirty, 1);
    MACC_Map enter = {"a", a, a + 1, sizeof(int), MACC_MAP_TO};
    unsigned long long h2d = atomic_load(&dev.bytes_h2d);
    maccrt_map_acquire(&dev, &enter, MACCRT_REF_DYNAMIC, &dloc);
    cr_assert_eq(a[2], -2, "written back before it was taken over");
    cr_assert_eq(atomic_load(&dev.bytes_h2d), h2d, "valid: no copy in");
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.pinned, 1);
    cr_assert_eq(info.cached, 0);
    cr_assert(maccrt_map_is_present(&dev, a, 60 * sizeof(int)), "the whole entry");
    maccrt_map_release(&dev, &enter, MACCRT_REF_DYNAMIC, 0, &dloc);
    maccrt_dir_info_get(&dev, &info);
    cr_assert_eq(info.held + info.pinned + info.cached, 0);
    maccrt_dir_device_fini(&dev);
}

/* ---- a fake GPU in the CUDA plugin's slot ------------------------------------------------------
 *
 * The runtime finds the CUDA plugin through a weak reference to
 * maccrt_cuda_plugin. This program defines it as a fake GPU whose "device
 * memory" is separate heap memory (filled with garbage, so a missing copy
 * shows) and whose helpers run the GPU version functions as host code, so the
 * whole GPU path of the shared runtime runs: placement, submission to the
 * helpers, maps with copies in and out, the affinity rule, data directives on
 * the default device, errors. MACC_TEST_FAKE_GPUS says how many GPUs it finds
 * (unset: none, so the other suites see a host-only machine);
 * MACC_TEST_FAKE_GPU_MEM bounds one allocation. */

static atomic_long fgpu_live_allocs;
static long fgpu_mem_limit;
static int fgpu_stream_marker;

static int fgpu_discover(void)
{
    const char *s = getenv("MACC_TEST_FAKE_GPUS");
    const char *m = getenv("MACC_TEST_FAKE_GPU_MEM");
    fgpu_mem_limit = m ? atol(m) : 0;
    return s ? atoi(s) : 0;
}

static int fgpu_init(maccrt_device *d)
{
    d->pdata = fake_gpu_start(4);
    d->cc = d->index == 0 ? 80 : 60;
    d->concurrency = 4; /* its helpers */
    d->wave = 1024; /* (threads it holds at once: only versions that say their launch's size ask) */
    d->mem_bytes = (size_t)1 << 30;
    d->shares = getenv("MACC_TEST_FAKE_SHARES") != NULL; /* (eft's occupancy term) */
    return 0;
}

static void *fgpu_alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)d;
    (void)hostptr;
    if (fgpu_mem_limit && bytes > (size_t)fgpu_mem_limit)
        return NULL;
    void *p = malloc(bytes);
    memset(p, 0xa5, bytes); /* garbage: a missing copy in shows */
    atomic_fetch_add(&fgpu_live_allocs, 1);
    return p;
}

static void fgpu_free(maccrt_device *d, void *p)
{
    (void)d;
    if (p) {
        atomic_fetch_sub(&fgpu_live_allocs, 1);
        free(p);
    }
}

static int fgpu_run(maccrt_device *d, maccrt_task *t, MACC_TaskEnv *env)
{
    (void)fake_gpu_version_start(); /* (its task's fills land: tests/fake_gpu.h) */
    env->stream = &fgpu_stream_marker;
    return fake_gpu_ran_async(d, t, t->ver->fn(t->args, env), 0);
}

static const char *fgpu_error_string(int err)
{
    if (err == MACCRT_ERR_NOMEM)
        return "out of memory";
    return err == 700 ? "an illegal memory access was encountered" : NULL;
}

static int fgpu_alloc_error(maccrt_device *d)
{
    (void)d;
    return MACCRT_ERR_NOMEM;
}

/* Managed memory of the fake GPU: host memory (the fake GPU runs host code,
 * so the same address works on both); prefetches are counted. */
static atomic_long fgpu_prefetch_to_dev, fgpu_prefetch_to_host;
static void *fgpu_managed_alloc(maccrt_device *d, size_t bytes)
{
    (void)d;
    void *p = NULL;
    return posix_memalign(&p, 1 << 20, bytes) == 0 ? p : NULL;
}
static void fgpu_managed_free(maccrt_device *d, void *p)
{
    (void)d;
    free(p);
}
static int fgpu_mem_info(maccrt_device *d, size_t *free_b, size_t *total_b)
{
    (void)d;
    *free_b = (size_t)64 << 20; /* 64 MiB free of 1 GiB */
    *total_b = (size_t)1 << 30;
    return 0;
}
static void fgpu_prefetch(maccrt_device *d, const void *p, size_t bytes, int to_host)
{
    (void)d;
    (void)p;
    (void)bytes;
    atomic_fetch_add(to_host ? &fgpu_prefetch_to_host : &fgpu_prefetch_to_dev, 1);
}

static atomic_long fgpu_advise_set, fgpu_advise_unset;
static void fgpu_advise(maccrt_device *d, const void *p, size_t bytes, int set)
{
    (void)d;
    (void)p;
    (void)bytes;
    atomic_fetch_add(set ? &fgpu_advise_set : &fgpu_advise_unset, 1);
}

/* A declare target variable's device copies on the fake GPUs: the "device
 * variable" (what the device file defines, one copy per GPU) is this struct;
 * its address is the symbol the host file registers. */
typedef struct fsym {
    unsigned char copy[2][256];
} fsym;
static int fgpu_symbol_address(maccrt_device *d, const void *symbol, void **devptr)
{
    if (!symbol || d->index > 1)
        return 13; /* cudaErrorInvalidSymbol */
    *devptr = ((fsym *)symbol)->copy[d->index];
    return 0;
}

/* The fake GPUs' copies: fgpu_copy_ms makes every copy of 64 KiB or more
 * take that long, and the most copies in flight at once are counted (copies
 * serialised by a lock show as 1). */
static int fgpu_copy_ms;
static int fgpu_copy_err; /* every copy fails with it (0: none) */
static atomic_int fgpu_copies_now, fgpu_copies_max;
static int fgpu_copy(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    (void)d;
    if (fgpu_copy_err)
        return fgpu_copy_err;
    int slow = fgpu_copy_ms > 0 && bytes >= 65536;
    if (slow) {
        int n = atomic_fetch_add(&fgpu_copies_now, 1) + 1;
        int m = atomic_load(&fgpu_copies_max);
        while (n > m && !atomic_compare_exchange_weak(&fgpu_copies_max, &m, n))
            ;
        sleep_ms(fgpu_copy_ms);
    }
    memcpy(dst, src, bytes);
    if (slow)
        atomic_fetch_sub(&fgpu_copies_now, 1);
    return 0;
}
static int fgpu_copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                          size_t bytes)
{
    (void)from;
    return fgpu_copy(d, dst, src, bytes);
}

/* Write-backs through another fake GPU (plugin->copy_d2h_via): in its own
 * helpers only, as the CUDA plugin's; counted. */
static atomic_long fgpu_via_bytes, fgpu_via_refused;
static int fgpu_copy_d2h_via(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                             size_t bytes)
{
    (void)from;
    if (fake_gpu_self != d->pdata) {
        atomic_fetch_add(&fgpu_via_refused, 1);
        return -1;
    }
    atomic_fetch_add(&fgpu_via_bytes, (long)bytes);
    return fgpu_copy(d, dst, src, bytes);
}

/* A helper's fills of its task's maps land only when ordered after (the
 * garbage of fgpu_alloc shows a user that was not): tests/fake_gpu.h. */
static atomic_long fgpu_fills_started;
static int fgpu_copy_start(maccrt_device *d, void *dst, const void *src, size_t bytes, void **fence)
{
    int err = fake_gpu_copy_start(d, dst, src, bytes, fence, fgpu_copy);
    if (*fence)
        atomic_fetch_add(&fgpu_fills_started, 1);
    return err;
}

/* HMM/ATS on the fake GPU: MACC_TEST_FAKE_HMM set (any host address), else
 * only what the runtime allocated for it. */
static int fgpu_host_reachable(maccrt_device *d, const void *p)
{
    (void)d;
    (void)p;
    return getenv("MACC_TEST_FAKE_HMM") != NULL;
}

/* Tasks a fake GPU reports waiting in its queue beyond its own (a test's
 * say: a completing helper then defers its early write-backs). */
static int fgpu_queued_extra;

static int fgpu_queued(maccrt_device *d)
{
    return fake_gpu_queued(d) + fgpu_queued_extra;
}

const maccrt_plugin maccrt_cuda_plugin = {
    .name = "nvidia",
    .host_reachable = fgpu_host_reachable,
    .kind = MACC_DEV_NVIDIA,
    .discover = fgpu_discover,
    .init_device = fgpu_init,
    .fini_device = fake_gpu_fini,
    .version_ok = fake_gpu_version_ok,
    .alloc = fgpu_alloc,
    .free = fgpu_free,
    .copy_h2d = fgpu_copy,
    .copy_d2h = fgpu_copy,
    .copy_peer = fgpu_copy_peer,
    .copy_d2h_via = fgpu_copy_d2h_via,
    .copy_h2d_start = fgpu_copy_start,
    .fence_order = fake_gpu_fence_order,
    .fence_done = fake_gpu_fence_done,
    .helpers_start = fake_gpu_helpers_start,
    .helpers_wait = fake_gpu_helpers_wait,
    .queued = fgpu_queued,
    .submit = fake_gpu_plugin_submit,
    .run = fgpu_run,
    .error_string = fgpu_error_string,
    .alloc_error = fgpu_alloc_error,
    .managed_alloc = fgpu_managed_alloc,
    .managed_free = fgpu_managed_free,
    .mem_info = fgpu_mem_info,
    .prefetch = fgpu_prefetch,
    .advise_read_mostly = fgpu_advise,
    .symbol_address = fgpu_symbol_address,
};

static void gpu_env(void)
{
    clean_env();
    setenv("MACC_TEST_FAKE_GPUS", "2", 1);
    unsetenv("MACC_TEST_FAKE_GPU_MEM");
}

TestSuite(gpu, .init = gpu_env, .timeout = 60);

/* x[lo:n] *= f, on the GPU or the host; counts where it ran and checks what
 * a GPU version receives (errors counted, asserted by the test's thread). */
typedef struct {
    int lo, n;
    double f;
    int ms;
    const double *host; /* the host array, to check that GPU pointers differ */
} scale_args;

static atomic_int ran_gpu[4], ran_host, env_errors;

static int scale_body(scale_args *a, MACC_TaskEnv *env)
{
    double *x = env->ptrs[0];
    if (a->ms)
        sleep_ms(a->ms);
    for (int i = a->lo; i < a->lo + a->n; i++)
        x[i] *= a->f;
    return 0;
}

static int fn_scale_gpu(void *args, MACC_TaskEnv *env)
{
    scale_args *a = args;
    if (env->device_kind != MACC_DEV_NVIDIA || env->stream != &fgpu_stream_marker ||
        env->device_index < 0 || env->device_index > 3 ||
        (a->host && (double *)env->ptrs[0] == a->host))
        atomic_fetch_add(&env_errors, 1);
    else
        atomic_fetch_add(&ran_gpu[env->device_index], 1);
    return scale_body(a, env);
}

static int fn_scale_host(void *args, MACC_TaskEnv *env)
{
    scale_args *a = args;
    if (env->device_kind != MACC_DEV_HOST || (a->host && (double *)env->ptrs[0] != a->host))
        atomic_fetch_add(&env_errors, 1);
    atomic_fetch_add(&ran_host, 1);
    return scale_body(a, env);
}

static const MACC_Version r_scale_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_scale_gpu},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_scale_host},
};
static const MACC_Region r_scale = {{"gpu.c", 40, 1, "test"}, "r_scale", 2, r_scale_v};

static const MACC_Version r_scale_gpu_only_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_scale_gpu},
};
static const MACC_Region r_scale_gpu_only = {
    {"gpu.c", 50, 1, "test"}, "r_scale_gpu_only", 1, r_scale_gpu_only_v};

static const MACC_Version r_scale_cc70_v[] = {
    {MACC_DEV_NVIDIA, 70, MACC_RES_DEFAULT, 0, fn_scale_gpu},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_scale_host},
};
static const MACC_Region r_scale_cc70 = {{"gpu.c", 60, 1, "test"}, "r_scale_cc70", 2,
                                         r_scale_cc70_v};

/* Launches x[lo:n] *= f with map(kind: x[lo:n]) (base x). */
static void scale(const MACC_Region *r, double *x, int lo, int n, double f, int ms, int kind,
                  int flags, int device)
{
    scale_args a = {lo, n, f, ms, x};
    MACC_Map m = {"x", x, x + lo, (size_t)n * sizeof(double), kind};
    MACC_target(r, &a, sizeof a, 1, &m, 0, NULL, flags, device, 1);
}

static int gpu_tasks(void)
{
    return atomic_load(&ran_gpu[0]) + atomic_load(&ran_gpu[1]);
}

Test(gpu, device_table_and_host_threads)
{
    unsetenv("MACC_HOST_THREADS");
    cr_assert_eq(macc_num_devices(), 3);
    cr_assert_str_eq(macc_device_name(0), "nvidia:0");
    cr_assert_str_eq(macc_device_name(1), "nvidia:1");
    cr_assert_str_eq(macc_device_name(2), "host");
    cr_assert_eq(macc_device_kind(1), MACC_DEV_NVIDIA);
    cr_assert_eq(macc_device_kind(2), MACC_DEV_HOST);
    long cpus = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    cr_assert_eq(maccrt_rt.host_threads, cpus - 2 > 1 ? cpus - 2 : 1,
                 "one core per GPU is left to its helpers");
}

/* A copy the device refuses ends the program with status 1 ("copying 'x'
 * (128 bytes) to nvidia:0 failed (error 700)"), as every device error does. */
Test(gpu, a_failed_copy_exits, .exit_code = 1)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    static double x[16];
    fgpu_copy_err = 700;
    scale(&r_scale_gpu_only, x, 0, 16, 2.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_ANY);
}

Test(gpu, sections_are_copied_alone_and_indexed_as_the_user_does)
{
    enum { N = 4000, BS = 100 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    for (int k = 0; k < N / BS; k++)
        scale(&r_scale, x, k * BS, BS, 2.0, 2, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 2.0 * i, "x[%d] = %g", i, x[i]);
    cr_assert_eq(atomic_load(&env_errors), 0);
    cr_assert_gt(gpu_tasks(), 0, "the GPUs got tasks");
    cr_assert_eq(gpu_tasks() + atomic_load(&ran_host), N / BS);
    unsigned long long h2d = 0, d2h = 0;
    for (int d = 0; d < 2; d++) {
        h2d += atomic_load(&maccrt_rt.devices[d]->bytes_h2d);
        d2h += atomic_load(&maccrt_rt.devices[d]->bytes_d2h);
        cr_assert_eq(macc_device_tasks(d), atomic_load(&ran_gpu[d]));
    }
    cr_assert_eq(h2d, (unsigned long long)gpu_tasks() * BS * sizeof(double), "only the sections");
    cr_assert_eq(d2h, h2d);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0, "temporary entries freed");
    maccrt_dir_info info;
    maccrt_dir_info_get(maccrt_rt.devices[0], &info);
    cr_assert_eq(info.held + info.cached, 0);
    /* Undeferred, on a GPU: the caller waits for the helper. */
    scale(&r_scale_gpu_only, x, 0, N, 0.5, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_NVIDIA);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], i);
    /* map(to:) is not copied back, map(from:) is not copied in. */
    scale(&r_scale_gpu_only, x, 0, 10, 3.0, 0, MACC_MAP_TO, 0, 1);
    cr_assert_eq(x[5], 5.0);
    cr_assert_eq(macc_device_tasks(1), atomic_load(&ran_gpu[1]));
}

/* Data made present on the default device (nvidia:0) by a data region: the
 * tasks inside run on nvidia:0 and use its copy (the host copy stays as it
 * was until the end of the region). */
Test(gpu, affinity_to_the_gpu_that_holds_a_data_region)
{
    enum { N = 2000, BS = 100 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_data_begin(&dloc, 1, &m, MACC_DEVICE_DEFAULT);
    cr_assert(MACC_is_present(x, sizeof x, 0));
    cr_assert(MACC_is_present(x, sizeof x, MACC_DEVICE_DEFAULT));
    cr_assert(!MACC_is_present(x, sizeof x, 1));
    unsigned long long h2d0 = atomic_load(&maccrt_rt.devices[0]->bytes_h2d);
    cr_assert_eq(h2d0, sizeof x);
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < N / BS; k++)
            scale(&r_scale, x, k * BS, BS, 2.0, 1, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 3 * N / BS, "every task on nvidia:0");
    cr_assert_eq(atomic_load(&ran_gpu[1]) + atomic_load(&ran_host), 0);
    cr_assert_eq(x[7], 7.0, "the host copy is not touched inside the region");
    cr_assert_eq(atomic_load(&maccrt_rt.devices[0]->bytes_h2d), h2d0, "present: no copies");
    /* A zero-length (attach) map of a pointer into the region: translated,
     * and the task goes to nvidia:0 too. */
    scale_args a = {0, 1, 0.5, 0, x + 10};
    MACC_Map att = {"p", x + 10, x + 10, 0, MACC_MAP_ATTACH};
    MACC_target(&r_scale, &a, sizeof a, 1, &att, 0, NULL, 0, MACC_DEVICE_ANY, 1);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 3 * N / BS + 1);
    cr_assert_eq(atomic_load(&env_errors), 0);
    MACC_data_end(&dloc, 1, &m, MACC_DEVICE_DEFAULT);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], i == 10 ? 40.0 : 8.0 * i, "x[%d] = %g", i, x[i]);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    /* After the region, tasks may go anywhere again. */
    for (int k = 0; k < 40; k++)
        scale(&r_scale, x, k * 50, 50, 1.0, 2, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    cr_assert_gt(atomic_load(&ran_gpu[1]) + atomic_load(&ran_host), 0);
}

/* requires unified_shared_memory (MACC_MAP_USM): a pointer no map covers
 * that the GPU cannot read is an error naming the region, not a kernel's
 * illegal access; with HMM it is passed as it is and the region runs. */
Test(gpu, usm_pointer_the_gpu_cannot_read_is_an_error, .exit_code = 1)
{
    static double x[100];
    scale_args a = {0, 1, 0.5, 0, x + 10};
    MACC_Map att = {"p", x + 10, x + 10, 0, MACC_MAP_ATTACH | MACC_MAP_USM};
    MACC_target(&r_scale, &a, sizeof a, 1, &att, 0, NULL, 0, 0, 1);
}

Test(gpu, usm_pointer_with_hmm_runs)
{
    setenv("MACC_TEST_FAKE_HMM", "1", 1);
    static double x[100];
    scale_args a = {0, 1, 0.5, 0, NULL};
    MACC_Map att = {"p", x + 10, x + 10, 0, MACC_MAP_ATTACH | MACC_MAP_USM};
    MACC_target(&r_scale, &a, sizeof a, 1, &att, 0, NULL, 0, 0, 1);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 1);
    /* a pointer a map covers is translated whatever HMM says */
    unsetenv("MACC_TEST_FAKE_HMM");
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_data_begin(&dloc, 1, &m, 0);
    MACC_target(&r_scale, &a, sizeof a, 1, &att, 0, NULL, 0, 0, 1);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 2);
    MACC_data_end(&dloc, 1, &m, 0);
    unsetenv("MACC_TEST_FAKE_HMM");
}

/* A flush (taskwait) ends every cached copy on every GPU. With nothing else
 * there, each GPU's tree and the section index are emptied at once; with a
 * data region's entry on one GPU, that GPU's cached entries leave one by
 * one and the entry stays, and the index keeps its record. Each round maps
 * the same tiles again, the other way round (new records where the old
 * ones were freed), and reads what the last round wrote. */
Test(gpu, a_flush_empties_the_trees_and_keeps_a_data_regions_entry)
{
    enum { N = 1600, BS = 100, NT = N / BS };
    static double x[N], y[BS];
    for (int i = 0; i < N; i++)
        x[i] = i;
    for (int i = 0; i < BS; i++)
        y[i] = -i;
    double f = 1;
    for (int round = 0; round < 4; round++) {
        MACC_Map m = {"y", y, y, sizeof y, MACC_MAP_TOFROM};
        if (round >= 2)
            MACC_data_begin(&dloc, 1, &m, 0);
        for (int k = 0; k < NT; k++) /* dirty tiles, half on each GPU */
            scale(&r_scale_gpu_only, x, k * BS, BS, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, (k + round) % 2);
        for (int k = 0; k < NT; k++) /* clean copies of the same tiles on the other GPU, after */
            scale(&r_scale_gpu_only, x, k * BS, BS, 1.0, 0, MACC_MAP_TO, MACC_NOWAIT, (k + round + 1) % 2);
        MACC_taskwait(NULL);
        f *= 2;
        for (int i = 0; i < N; i++)
            cr_assert_eq(x[i], f * i, "round %d: x[%d] = %g", round, i, x[i]);
        for (int d = 0; d < 2; d++) {
            maccrt_dir_info info;
            maccrt_dir_info_get(maccrt_rt.devices[d], &info);
            cr_assert_eq(info.cached, 0, "round %d, GPU %d: no cached copy left", round, d);
            cr_assert_eq(info.held, round >= 2 && d == 0, "round %d, GPU %d: the data region's entry", round, d);
        }
        if (round >= 2) {
            scale(&r_scale_gpu_only, y, 0, BS, 3.0, 0, MACC_MAP_TOFROM, 0, 0);
            MACC_data_end(&dloc, 1, &m, 0);
            for (int i = 0; i < BS; i++)
                cr_assert_eq(y[i], -i * (round == 2 ? 3.0 : 9.0), "round %d: y[%d]", round, i);
        }
    }
    cr_assert_eq(atomic_load(&env_errors), 0);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0, "every copy freed");
}

/* Data present only on the host (a device(host) data region) pins nothing:
 * the tasks run anywhere, their own maps copying in and out. */
Test(gpu, host_data_region_does_not_restrict)
{
    enum { N = 2000, BS = 50 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_data_begin(&dloc, 1, &m, MACC_DEVICE_HOST);
    for (int k = 0; k < N / BS; k++)
        scale(&r_scale, x, k * BS, BS, 2.0, 2, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    cr_assert_gt(atomic_load(&ran_gpu[0]), 0);
    cr_assert_gt(atomic_load(&ran_gpu[1]), 0);
    MACC_data_end(&dloc, 1, &m, MACC_DEVICE_HOST);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 2.0 * i);
}

/* enter data (deferred, with depend) on the default device; a task that
 * depends on it is placed after it has run, so the affinity sees the data;
 * update from and exit data copy back from that GPU. */
Test(gpu, enter_update_exit_on_the_default_device)
{
    enum { N = 1000 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_Dep dep = {x, sizeof x, MACC_DEP_INOUT};
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 1, &dep, MACC_NOWAIT);
    for (int k = 0; k < 10; k++) {
        scale_args a = {k * 100, 100, 3.0, 0, x};
        MACC_Map tm = {"x", x, x + k * 100, 100 * sizeof(double), MACC_MAP_TOFROM};
        MACC_Dep td = {x + k * 100, 100 * sizeof(double), MACC_DEP_INOUT};
        MACC_target(&r_scale, &a, sizeof a, 1, &tm, 1, &td, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 10, "all on the GPU that holds x");
    cr_assert_eq(x[500], 500.0, "the host copy is stale until update");
    MACC_Map mu = {"x", x, x + 500, 10 * sizeof(double), MACC_MAP_FROM};
    MACC_data_update(&dloc, 1, &mu, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert_eq(x[500], 1500.0);
    cr_assert_eq(x[510], 510.0, "only the section");
    MACC_Map mx = {"x", x, x, sizeof x, MACC_MAP_FROM};
    MACC_data_exit(&dloc, 1, &mx, MACC_DEVICE_ANY, 0, NULL, 0);
    cr_assert_eq(x[510], 1530.0);
    cr_assert(!MACC_is_present(x, 8, 0));
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
}

/* OpenMP's map(delete:) inside a data region that maps the same array: the
 * array leaves the GPU, the next region copies it afresh (the host's new
 * values), and the region's end copies nothing back. */
Test(gpu, openmp_delete_inside_a_data_region_drops_the_copy)
{
    enum { N = 100 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = 1.0;
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_data_begin(&dloc, 1, &m, 0);
    scale_args a = {0, N, 3.0, 0, x};
    MACC_target(&r_scale_gpu_only, &a, sizeof a, 1, &m, 0, NULL, 0, 0, 1);
    cr_assert_eq(x[7], 1.0, "the data region holds it: no copy back yet");
    MACC_Map del = {"x", x, x, sizeof x, MACC_MAP_ALLOC | MACC_MAP_DELETE | MACC_MAP_DELETE_ALL};
    MACC_data_exit(&dloc, 1, &del, 0, 0, NULL, 0);
    cr_assert(!MACC_is_present(x, sizeof x, 0), "delete: gone inside the data region");
    for (int i = 0; i < N; i++)
        x[i] = 2.0;
    MACC_Map to = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_target(&r_scale_gpu_only, &a, sizeof a, 1, &to, 0, NULL, 0, 0, 1);
    cr_assert_eq(x[7], 6.0, "copied afresh and back: 2 * 3");
    x[7] = -1.0;
    MACC_data_end(&dloc, 1, &m, 0);
    cr_assert_eq(x[7], -1.0, "the data region's end finds nothing to copy back");
    cr_assert_eq(atomic_load(&env_errors), 0);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
}

/* Concurrent tasks on one GPU whose sections overlap (halos) without one
 * containing the other: no "partially present" error, right results. */
typedef struct {
    int lo, n;
} halo_args;

static int fn_halo(void *args, MACC_TaskEnv *env)
{
    halo_args *h = args;
    const double *a = env->ptrs[0];
    double *b = env->ptrs[1];
    sleep_ms(5);
    for (int i = h->lo; i < h->lo + h->n; i++)
        b[i] = a[i - 1] + a[i] + a[i + 1];
    return 0;
}
static const MACC_Version r_halo_v[] = {{MACC_DEV_NVIDIA, 0, 10, 0, fn_halo}};
static const MACC_Region r_halo = {{"gpu.c", 70, 1, "test"}, "r_halo", 1, r_halo_v};

Test(gpu, overlapping_sections_of_concurrent_tasks)
{
    setenv("MACC_DEVICES", "nvidia:0", 1);
    enum { N = 1602, BS = 100 };
    static double a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = i;
    for (int lo = 1; lo + BS <= N - 1; lo += BS) {
        halo_args h = {lo, BS};
        MACC_Map m[2] = {{"a", a, a + lo - 1, (BS + 2) * sizeof(double), MACC_MAP_TO},
                         {"b", b, b + lo, BS * sizeof(double), MACC_MAP_FROM}};
        MACC_target(&r_halo, &h, sizeof h, 2, m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    MACC_taskwait(NULL);
    for (int i = 1; i < N - 1; i++)
        cr_assert_eq(b[i], 3.0 * i, "b[%d] = %g", i, b[i]);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    cr_assert_gt(maccrt_rt.devices[0]->tokens_peak_used, 10, "tasks ran concurrently");
}

Test(gpu, macc_devices_nvidia_leaves_the_host_out)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    static double x[1000];
    for (int k = 0; k < 20; k++)
        scale(&r_scale, x, k * 50, 50, 1.0, 1, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_host), 0);
    cr_assert_eq(gpu_tasks(), 20);
    /* device(host) still runs on the host. */
    scale(&r_scale, x, 0, 10, 1.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_HOST);
    cr_assert_eq(atomic_load(&ran_host), 1);
}

Test(gpu, macc_devices_one_gpu_is_renumbered)
{
    setenv("MACC_DEVICES", "nvidia:1,host", 1);
    cr_assert_eq(macc_num_devices(), 2);
    cr_assert_str_eq(macc_device_name(0), "nvidia:1");
    cr_assert_str_eq(macc_device_name(1), "host");
    static double x[100];
    scale(&r_scale_gpu_only, x, 0, 100, 1.0, 0, MACC_MAP_TOFROM, 0, 0);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 1, "device 0 is the CUDA device 1");
}

Test(gpu, min_cc_keeps_tasks_off_older_gpus)
{
    static double x[2000];
    for (int k = 0; k < 40; k++)
        scale(&r_scale_cc70, x, k * 50, 50, 1.0, 1, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 0, "nvidia:1 is cc 6.0");
    cr_assert_gt(atomic_load(&ran_gpu[0]), 0);
}

Test(gpu, mandatory_with_a_gpu)
{
    setenv("MACC_TARGET_OFFLOAD", "mandatory", 1);
    static double x[100];
    scale(&r_scale, x, 0, 100, 1.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_DEFAULT);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 1);
}

Test(gpu, mandatory_with_gpus_left_out_fails, .exit_code = 1)
{
    setenv("MACC_TARGET_OFFLOAD", "mandatory", 1);
    setenv("MACC_DEVICES", "host", 1);
    static double x[100];
    scale(&r_scale, x, 0, 100, 1.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_ANY);
}

static int fn_gpu_fault(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    return 700;
}
static const MACC_Version r_gpu_fault_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_gpu_fault}};
static const MACC_Region r_gpu_fault = {{"kern.c", 21, 5, "main"}, "r_gpu_fault", 1, r_gpu_fault_v};

static void child_gpu_fault(void)
{
    static double x[100];
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    for (int i = 0; i < 8; i++)
        MACC_target(&r_gpu_fault, NULL, 0, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_taskwait(NULL);
}

static void child_gpu_oom(void)
{
    static const MACC_SrcLoc loc = {"big.c", 8, 1, "main"};
    setenv("MACC_TEST_FAKE_GPU_MEM", "1000", 1);
    static double big[1000];
    MACC_Map m = {"big", big, big, sizeof big, MACC_MAP_TO};
    MACC_data_enter(&loc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
}

static void child_gpu_oom_task(void)
{
    setenv("MACC_TEST_FAKE_GPU_MEM", "1000", 1);
    static double big[1000];
    scale(&r_scale_gpu_only, big, 0, 1000, 1.0, 0, MACC_MAP_TO, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
}

static void child_late_gpu_task(void)
{
    static double x[100];
    x[3] = 3;
    scale(&r_scale_gpu_only, x, 0, 100, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    /* exit: the runtime's handler waits, stops the helpers; ours, registered
     * before the runtime started, runs after it. */
}

static double late_x[100];
static void late_handler(void)
{
    late_x[3] = 3;
    scale(&r_scale_gpu_only, late_x, 0, 100, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT,
          MACC_DEVICE_ANY);
    fprintf(stderr, "late: %g\n", late_x[3]);
}

static void child_late(void)
{
    atexit(late_handler);
    child_late_gpu_task();
    exit(0);
}

Test(gpu, errors_name_the_location_and_never_hang)
{
    char buf[4096];
    cr_assert_eq(run_child(child_gpu_fault, buf, sizeof buf), 1);
    const char *want = "macc: error: kern.c:21: region 'r_gpu_fault' failed on nvidia:";
    cr_assert(strncmp(buf, want, strlen(want)) == 0, "got: %s", buf);
    cr_assert(strstr(buf, ": an illegal memory access was encountered\n"), "got: %s", buf);
    cr_assert(!strstr(buf + 1, "macc: error"), "one message: %s", buf);

    cr_assert_eq(run_child(child_gpu_oom, buf, sizeof buf), 1);
    want = "macc: error: big.c:8: out of GPU memory mapping 'big' (8000 bytes) on nvidia:0\n";
    cr_assert(strncmp(buf, want, strlen(want)) == 0, "got: %s", buf);

    cr_assert_eq(run_child(child_gpu_oom_task, buf, sizeof buf), 1);
    want = "macc: error: gpu.c:50: out of GPU memory mapping 'x' (8000 bytes) on nvidia:";
    cr_assert(strncmp(buf, want, strlen(want)) == 0, "got: %s", buf);

    cr_assert_eq(run_child(child_late, buf, sizeof buf), 0);
    cr_assert(strncmp(buf, "late: 6\n", 8) == 0, "a GPU task after shutdown runs inline: %s", buf);
}

/* ---- environment parsing ---------------------------------------------------------------- */

Test(rt, parse_devices)
{
    maccrt_devsel s;
    char err[256];
    cr_assert_eq(maccrt_parse_devices("host", &s, err, sizeof err), 0);
    cr_assert(s.host && !s.nvidia_all && !s.nvidia);
    cr_assert_eq(maccrt_parse_devices("nvidia", &s, err, sizeof err), 0);
    cr_assert(!s.host && s.nvidia_all);
    cr_assert_eq(maccrt_parse_devices("nvidia:0,1", &s, err, sizeof err), 0);
    cr_assert(!s.host && !s.nvidia_all && s.nvidia == 3);
    cr_assert_eq(maccrt_parse_devices("nvidia:0-1", &s, err, sizeof err), 0, "%s", err);
    cr_assert(!s.host && !s.nvidia_all && s.nvidia == 3, "bench/scaling.sh names the GPUs so");
    cr_assert_eq(maccrt_parse_devices("host,nvidia", &s, err, sizeof err), 0);
    cr_assert(s.host && s.nvidia_all);
    cr_assert_eq(maccrt_parse_devices(" CUDA:2 , 4-5 ,smp ", &s, err, sizeof err), 0, "%s", err);
    cr_assert(s.host && !s.nvidia_all && s.nvidia == 0x34);
    cr_assert_eq(maccrt_parse_devices("nvidia:1,host", &s, err, sizeof err), 0);
    cr_assert(s.host && s.nvidia == 2);
    cr_assert_eq(maccrt_parse_devices("", &s, err, sizeof err), 0);
    cr_assert(s.host && s.nvidia_all);
    cr_assert_eq(maccrt_parse_devices(NULL, &s, err, sizeof err), 0);
    cr_assert(s.host && s.nvidia_all);
    cr_assert_eq(maccrt_parse_devices("all", &s, err, sizeof err), 0);
    cr_assert(s.host && s.nvidia_all);
    cr_assert_eq(maccrt_parse_devices("tpu", &s, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown device 'tpu'"), "%s", err);
    cr_assert_eq(maccrt_parse_devices("nvidia:", &s, err, sizeof err), -1);
    cr_assert_eq(maccrt_parse_devices("nvidia:x", &s, err, sizeof err), -1);
    cr_assert_eq(maccrt_parse_devices("nvidia:3-1", &s, err, sizeof err), -1);
    cr_assert_eq(maccrt_parse_devices("host;nvidia", &s, err, sizeof err), -1);
}

Test(rt, parse_offload_and_numbers)
{
    cr_assert_eq(maccrt_parse_offload(NULL), MACCRT_OFFLOAD_DEFAULT);
    cr_assert_eq(maccrt_parse_offload("DEFAULT"), MACCRT_OFFLOAD_DEFAULT);
    cr_assert_eq(maccrt_parse_offload("mandatory"), MACCRT_OFFLOAD_MANDATORY);
    cr_assert_eq(maccrt_parse_offload("Disabled"), MACCRT_OFFLOAD_DISABLED);
    cr_assert_eq(maccrt_parse_offload("sometimes"), -1);
    cr_assert_eq(maccrt_parse_positive("12"), 12);
    cr_assert_eq(maccrt_parse_positive(" 3 "), 3);
    cr_assert_eq(maccrt_parse_positive("0"), -1);
    cr_assert_eq(maccrt_parse_positive("-2"), -1);
    cr_assert_eq(maccrt_parse_positive("4x"), -1);
    cr_assert_eq(maccrt_parse_positive(""), -1);
}

Test(rt, host_threads_from_environment)
{
    setenv("MACC_HOST_THREADS", "6", 1);
    macc_num_devices();
    cr_assert_eq(maccrt_rt.host_threads, 6);
}

Test(rt, bad_host_threads_fails, .exit_code = 1)
{
    setenv("MACC_HOST_THREADS", "lots", 1);
    macc_num_devices();
}

Test(rt, default_host_threads_is_the_cpu_count)
{
    unsetenv("MACC_HOST_THREADS");
    macc_num_devices();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert_geq(maccrt_rt.host_threads, 1);
    cr_assert_leq(maccrt_rt.host_threads, cpus);
}

/* ---- user API and statistics ----------------------------------------------------------- */

Test(rt, device_queries)
{
    int n = macc_num_devices();
    cr_assert_eq(n, 1, "no GPU plugin in this build");
    cr_assert_eq(macc_device_kind(n - 1), MACC_DEV_HOST);
    cr_assert_eq(macc_device_kind(n), -1);
    cr_assert_eq(macc_device_kind(-1), -1);
    cr_assert_str_eq(macc_device_name(n - 1), "host");
    cr_assert_null(macc_device_name(n));
    cr_assert_eq(macc_device_tasks(n - 1), 0);
    cr_assert_eq(macc_device_tasks(n + 3), 0);
}

Test(rt, statistics_table)
{
    /* one device, no MACC_STATS: no time stamps unless asked for */
    maccrt_init();
    cr_assert_eq(maccrt_rt.timed, 0);
    maccrt_rt.timed = 1; /* as MACC_STATS=1 sets it */
    for (int i = 0; i < 3; i++)
        target(&r_count, i, 10, MACC_NOWAIT, 0, NULL);
    target(&r_count, 9, 0, 0, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(macc_device_tasks(0), 4);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    maccrt_stats_print(f);
    fclose(f);
    cr_assert(strstr(buf, "macc: statistics"), "%s", buf);
    cr_assert(strstr(buf, "bytes h2d"), "%s", buf);
    char *row = strstr(buf, "macc: host");
    cr_assert(row, "%s", buf);
    char name[32];
    long tasks;
    double busy, tsum;
    int tokens, peak;
    cr_assert_eq(sscanf(row, "macc: %31s %ld %lf %lf %d %d", name, &tasks, &busy, &tsum, &tokens,
                        &peak),
                 6, "%s", row);
    cr_assert_eq(tasks, 4);
    cr_assert_eq(tokens, 100);
    cr_assert_eq(peak, 100);
    cr_assert_geq(busy, 0.015);
    cr_assert_geq(tsum, 0.025);
    free(buf);
    macc_print_stats(); /* to stderr; must not crash */
}

/* ---- the throttle ------------------------------------------------------------------------------ */

static atomic_long thr_ran, thr_max_live, thr_chain[8];
static int fn_throttle(void *args, MACC_TaskEnv *env)
{
    (void)env;
    const args_t *a = args;
    long live = __atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED);
    long m = atomic_load(&thr_max_live);
    while (live > m && !atomic_compare_exchange_weak(&thr_max_live, &m, live))
        ;
    if (a->ms < 0) {
        /* independent: 20 us of work, so that the workers fall behind the
         * creating thread on any machine and the throttle is reached */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t1);
        while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000);
    }
    if (a->ms >= 0) {
        /* chained: the chain's counter must hold the task's position in it */
        long want = a->id / 8;
        cr_assert_eq(atomic_load(&thr_chain[a->id % 8]), want, "task %d ran out of order", a->id);
        atomic_store(&thr_chain[a->id % 8], want + 1);
    }
    atomic_fetch_add(&thr_ran, 1);
    return 0;
}
HOST_REGION(r_throttle, fn_throttle, MACC_RES_DEFAULT);

Test(rt, throttle_runs_independent_tasks_in_the_creating_thread)
{
    maccrt_init();
    cr_assert_eq(maccrt_rt.pending_max, 64 * 4, "64 x MACC_HOST_THREADS");
    long n = 20000;
    for (long i = 0; i < n; i++) {
        args_t a = {(int)i, -1};
        MACC_target(&r_throttle, &a, sizeof a, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        cr_assert_leq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), maccrt_rt.pending_max);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&thr_ran), n);
    cr_assert_eq(macc_device_tasks(maccrt_rt.host->num), n, "direct runs are counted");
    cr_assert_gt(atomic_load(&maccrt_rt.host->tasks_direct), 0, "some ran in the creating thread");
    cr_assert_eq(maccrt_rt.live, 0);
}

Test(rt, throttle_bounds_pending_dependent_tasks)
{
    setenv("MACC_PENDING_MAX", "32", 1);
    maccrt_init();
    cr_assert_eq(maccrt_rt.pending_max, 32);
    long n = 8000;
    static long cell[8];
    for (long i = 0; i < n; i++) {
        args_t a = {(int)i, 0};
        MACC_Dep d = {&cell[i % 8], sizeof cell[0], MACC_DEP_INOUT};
        MACC_target(&r_throttle, &a, sizeof a, 0, NULL, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        cr_assert_leq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 32);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&thr_ran), n);
    cr_assert_leq(atomic_load(&thr_max_live), 32);
    for (int c = 0; c < 8; c++)
        cr_assert_eq(atomic_load(&thr_chain[c]), n / 8);
    cr_assert_eq(atomic_load(&maccrt_rt.host->tasks_direct), 0, "tasks with dependences go through the scheduler");
}

Test(rt, throttle_bad_value_is_fatal, .exit_code = 1)
{
    setenv("MACC_PENDING_MAX", "-3", 1);
    maccrt_init();
}

/* ---- the range tree ------------------------------------------------------------------------- */

/* The treap's shape: starts in order, each node's priority at least its
 * children's; returns the node count and the depth in *depth. */
static int rtree_shape(const maccrt_rnode *n, uintptr_t lo, uintptr_t hi, int *depth)
{
    if (!n) {
        *depth = 0;
        return 0;
    }
    cr_assert(n->start >= lo && n->start < hi, "start %lu outside [%lu, %lu)", (unsigned long)n->start,
              (unsigned long)lo, (unsigned long)hi);
    if (n->left)
        cr_assert_geq(n->prio, n->left->prio);
    if (n->right)
        cr_assert_geq(n->prio, n->right->prio);
    int dl, dr;
    int c = 1 + rtree_shape(n->left, lo, n->start, &dl) + rtree_shape(n->right, n->start + 1, hi, &dr);
    *depth = 1 + (dl > dr ? dl : dr);
    return c;
}

Test(rt, range_tree)
{
    enum { N = 2000 };
    static maccrt_rnode nodes[N];
    maccrt_rtree t = {0};
    /* Disjoint intervals [10i, 10i+5) inserted in a scrambled order. */
    for (int k = 0; k < N; k++) {
        int i = (int)(((long)k * 7919) % N);
        nodes[i].start = 10 * (uintptr_t)i + 100;
        nodes[i].end = nodes[i].start + 5;
        maccrt_rtree_insert(&t, &nodes[i]);
    }
    cr_assert_eq(t.count, N);
    int depth;
    cr_assert_eq(rtree_shape(t.root, 0, UINTPTR_MAX, &depth), N);
    cr_assert_lt(depth, 60, "depth %d for %d nodes", depth, N); /* expected about 2.9 ln N = 22 */
    cr_assert_eq(maccrt_rtree_find(&t, 100 + 10 * 7 + 3), &nodes[7]);
    cr_assert_null(maccrt_rtree_find(&t, 100 + 10 * 7 + 5));
    cr_assert_null(maccrt_rtree_find(&t, 99));
    cr_assert_eq(maccrt_rtree_first_overlap(&t, 100 + 10 * 7 + 6, 100 + 10 * 9), &nodes[8]);
    cr_assert_null(maccrt_rtree_first_overlap(&t, 100 + 10 * 7 + 6, 100 + 10 * 8));
    cr_assert_eq(maccrt_rtree_first_overlap(&t, 0, 1000000), &nodes[0]);
    int n = 0;
    for (maccrt_rnode *x = maccrt_rtree_first_overlap(&t, 0, UINTPTR_MAX); x;
         x = maccrt_rtree_next(&t, x))
        cr_assert_eq(x, &nodes[n++]);
    cr_assert_eq(n, N);
    for (int i = 0; i < N; i += 2)
        maccrt_rtree_remove(&t, &nodes[i]);
    cr_assert_eq(t.count, N / 2);
    cr_assert_eq(rtree_shape(t.root, 0, UINTPTR_MAX, &depth), N / 2);
    cr_assert_null(maccrt_rtree_find(&t, 100 + 10 * 4));
    cr_assert_eq(maccrt_rtree_find(&t, 100 + 10 * 5), &nodes[5]);
    cr_assert_eq(maccrt_rtree_first_overlap(&t, 100 + 10 * 4, 100 + 10 * 6), &nodes[5]);
    /* first_overlap against a scan of the nodes still in the tree (odd i):
     * queries starting inside a node, in a gap, at a start, before and
     * after everything, of every length up to 40 */
    unsigned x = 12345;
    for (int q = 0; q < 20000; q++) {
        x = x * 1103515245u + 12345u;
        uintptr_t a = 90 + (x >> 8) % (10 * N + 30);
        uintptr_t b = a + 1 + (x >> 3) % 40;
        maccrt_rnode *want = NULL;
        for (int i = 1; i < N && !want; i += 2)
            if (nodes[i].start < b && a < nodes[i].end)
                want = &nodes[i];
        cr_assert_eq(maccrt_rtree_first_overlap(&t, a, b), want, "[%lu, %lu)", (unsigned long)a,
                     (unsigned long)b);
    }
}

/* collect: every node in address order, in one pass; clear: an empty tree
 * at once (no node found, not by the look-ups' hints either), usable again */
Test(rt, range_tree_collect_and_clear)
{
    enum { N = 3000 };
    static maccrt_rnode nodes[N];
    static maccrt_rnode *out[N];
    maccrt_rtree t = {0};
    cr_assert_eq(maccrt_rtree_collect(&t, out), 0);
    for (int k = 0; k < N; k++) {
        int i = (int)(((long)k * 7919) % N);
        nodes[i].start = 16 * (uintptr_t)i + 64;
        nodes[i].end = nodes[i].start + 8;
        maccrt_rtree_insert(&t, &nodes[i]);
    }
    for (int i = 0; i < N; i += 3)
        maccrt_rtree_remove(&t, &nodes[i]);
    size_t n = maccrt_rtree_collect(&t, out);
    cr_assert_eq(n, t.count);
    size_t k = 0;
    for (int i = 0; i < N; i++)
        if (i % 3)
            cr_assert_eq(out[k++], &nodes[i], "node %d in order", i);
    cr_assert_eq(k, n);
    maccrt_rtree_clear(&t);
    cr_assert_eq(t.count, 0);
    cr_assert_null(t.root);
    cr_assert_null(maccrt_rtree_first_overlap(&t, nodes[1].start, nodes[1].end), "the hint went too");
    cr_assert_null(maccrt_rtree_find(&t, nodes[2].start));
    cr_assert_eq(maccrt_rtree_collect(&t, out), 0);
    maccrt_rtree_insert(&t, &nodes[4]);
    cr_assert_eq(maccrt_rtree_first_overlap(&t, 0, UINTPTR_MAX), &nodes[4]);
    cr_assert_eq(maccrt_rtree_collect(&t, out), 1);
}

/* ---- the coherence directory (cache.c) on the fake GPUs ---------------------------------------
 *
 * stencil: y[lo:n] = x[i-1] + 2 x[i] + x[i+1] (x periodic over [0, N)), with
 * map(to: x[xlo:xn]) and map(from|tofrom: y[lo:n]); the body reads x only
 * inside the mapped section. */
typedef struct {
    int lo, n, N, halo;
} sten_args;

static atomic_int ran_kind[MACC_DEV_NKINDS];

static int sten_body(void *args, MACC_TaskEnv *env)
{
    sten_args *a = args;
    const double *x = env->ptrs[0];
    double *y = env->ptrs[1];
    atomic_fetch_add(&ran_kind[env->device_kind], 1);
    for (int i = a->lo; i < a->lo + a->n; i++) {
        int l = i == 0 ? a->N - 1 : i - 1, r = i == a->N - 1 ? 0 : i + 1;
        if (a->halo) { /* x[lo-1:n+2] only: the neighbours are inside */
            l = i - 1;
            r = i + 1;
        }
        y[i] = x[l] + 2 * x[i] + x[r];
    }
    return 0;
}

static const MACC_Version r_sten_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, sten_body},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, sten_body},
};
static const MACC_Region r_sten = {{"cache.c", 10, 1, "test"}, "r_sten", 2, r_sten_v};

/* y[lo:n] from x[xlo:xn], with dependences on both sections. */
static void sten(double *x, double *y, int N, int lo, int n, int xlo, int xn, int ykind, int device)
{
    sten_args a = {lo, n, N, xlo != 0 || xn != N};
    MACC_Map m[2] = {{"x", x, x + xlo, (size_t)xn * sizeof(double), MACC_MAP_TO},
                     {"y", y, y + lo, (size_t)n * sizeof(double), ykind}};
    MACC_Dep d[2] = {{x + xlo, (size_t)xn * sizeof(double), MACC_DEP_IN},
                     {y + lo, (size_t)n * sizeof(double), MACC_DEP_OUT}};
    MACC_target(&r_sten, &a, sizeof a, 2, m, 2, d, MACC_NOWAIT, device, 1);
}

static unsigned long long h2d_of(int d)
{
    return atomic_load(&maccrt_rt.devices[d]->bytes_h2d);
}

static unsigned long long d2h_of(int d)
{
    return atomic_load(&maccrt_rt.devices[d]->bytes_d2h);
}

Test(gpu, data_read_by_many_tasks_is_copied_once_per_device)
{
    enum { N = 4096, BS = 128 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = i % 17;
    /* 32 tasks on nvidia:0, each reading all of x and writing its block of y */
    for (int k = 0; k < N / BS; k++)
        sten(x, y, N, k * BS, BS, 0, N, MACC_MAP_FROM, 0);
    MACC_taskwait(NULL);
    cr_assert_eq(h2d_of(0), sizeof x, "x copied once, not per task (%llu bytes)", h2d_of(0));
    /* (through either GPU: write-backs through another GPU) */
    cr_assert_eq(d2h_of(0) + d2h_of(1), sizeof y, "each block of y copied back once, at the taskwait");
    for (int i = 0; i < N; i++) {
        int l = (i + N - 1) % N, r = (i + 1) % N;
        cr_assert_eq(y[i], x[l] + 2 * x[i] + x[r], "y[%d]", i);
    }
    long dirty;
    cr_assert_eq(maccrt_cache_entries(maccrt_rt.devices[0], &dirty), 0, "the taskwait emptied the cache");
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0, "and freed the device copies");
    /* After the taskwait the program may write x: the next tasks see it. */
    for (int i = 0; i < N; i++)
        x[i] = 1.0;
    for (int k = 0; k < N / BS; k++)
        sten(x, y, N, k * BS, BS, 0, N, MACC_MAP_FROM, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++)
        cr_assert_eq(y[i], 4.0, "y[%d] = %g", i, y[i]);
    cr_assert_leq(h2d_of(0) + h2d_of(1), 3 * sizeof x, "at most once more per GPU");
}

/* The same data written in turn on nvidia:0, nvidia:1 and the host, with
 * sections that change shape from round to round (whole, blocks, halos:
 * entries are reused, merged, privately copied and invalidated), no taskwait
 * in between: the dependences order the tasks and the directory moves the
 * current copy. Compared with the same computation done sequentially. */
Test(gpu, tasks_alternating_between_devices_see_each_others_writes)
{
    enum { N = 1200, ROUNDS = 12 };
    static double x[N], y[N], ex[N], ey[N];
    for (int i = 0; i < N; i++)
        x[i] = ex[i] = (i * 7) % 11;
    static const int bs[] = {N, 100, 300, 40, N, 600};
    for (int r = 0; r < ROUNDS; r++) {
        double *src = r % 2 ? y : x, *dst = r % 2 ? x : y;
        double *esrc = r % 2 ? ey : ex, *edst = r % 2 ? ex : ey;
        int b = bs[r % 6];
        for (int k = 0; k < N / b; k++) {
            int lo = k * b, dev = (r + k) % 3; /* 0, 1: the GPUs; 2: the host */
            int halo = b < N && lo > 0 && lo + b < N;
            if (halo)
                sten(src, dst, N, lo, b, lo - 1, b + 2, MACC_MAP_FROM, dev);
            else
                sten(src, dst, N, lo, b, 0, N, MACC_MAP_FROM, dev);
            for (int i = lo; i < lo + b; i++) {
                int l = (i + N - 1) % N, rr = (i + 1) % N;
                edst[i] = esrc[l] + 2 * esrc[i] + esrc[rr];
            }
        }
        /* keep the values small */
        if (r % 3 == 2) {
            MACC_taskwait(NULL);
            for (int i = 0; i < N; i++) {
                dst[i] = fmod(dst[i], 97.0);
                edst[i] = fmod(edst[i], 97.0);
            }
        }
    }
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(x[i], ex[i], "x[%d] = %g, expected %g", i, x[i], ex[i]);
        cr_assert_eq(y[i], ey[i], "y[%d] = %g, expected %g", i, y[i], ey[i]);
    }
    cr_assert_gt(atomic_load(&ran_kind[MACC_DEV_NVIDIA]), 0);
    cr_assert_gt(atomic_load(&ran_kind[MACC_DEV_HOST]), 0);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
}

/* One GPU, a chain of tasks updating y in place (tofrom) with no taskwait:
 * the device copy stays current and is reused; one copy in, one copy out.
 * Returns the maps of nvidia:0's tasks taken or given back under its own
 * lock alone. */
static long one_gpu_chain(void)
{
    enum { N = 1000 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = 1;
        y[i] = 0;
    }
    for (int r = 0; r < 10; r++) {
        sten_args a = {0, N, N, 0};
        MACC_Map m[2] = {{"x", x, x, sizeof x, MACC_MAP_TO}, {"y", y, y, sizeof y, MACC_MAP_TOFROM}};
        MACC_Dep d = {y, sizeof y, MACC_DEP_INOUT};
        MACC_target(&r_sten, &a, sizeof a, 2, m, 1, &d, MACC_NOWAIT, 0, 1);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(h2d_of(0), sizeof x + sizeof y);
    cr_assert_eq(d2h_of(0), sizeof y);
    cr_assert_eq(y[5], 4.0);
    maccrt_dir_info info;
    maccrt_dir_info_get(maccrt_rt.devices[0], &info);
    return info.fast;
}

Test(gpu, a_chain_on_one_gpu_keeps_its_copy)
{
    (void)one_gpu_chain();
}

/* Launch-ahead (task.c; the fake GPU's helpers launch as the CUDA
 * plugin's lanes do, tests/fake_gpu.h). Chains of two links per block,
 * y = x + 1 then x = 2y, NB blocks, R rounds, no taskwait: each link's only
 * unfinished predecessor is the one before it. */
typedef struct {
    int lo, n, twice;
} ahead_args;

static int ahead_body(void *args, MACC_TaskEnv *env)
{
    const ahead_args *a = args;
    const double *in = env->ptrs[0];
    double *out = env->ptrs[1];
    for (int i = a->lo; i < a->lo + a->n; i++)
        out[i] = a->twice ? 2 * in[i] : in[i] + 1;
    return 0;
}

static const MACC_Version r_ahead_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, ahead_body},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, ahead_body},
};
static const MACC_Region r_ahead = {{"ahead.c", 7, 1, "test"}, "r_ahead", 2, r_ahead_v};

enum { AHEAD_NB = 8, AHEAD_BS = 512, AHEAD_R = 12 };

/* Runs the chains; returns the tasks launched ahead meanwhile. */
static long ahead_chains(void)
{
    enum { N = AHEAD_NB * AHEAD_BS };
    static double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = i % 7;
        y[i] = -1;
    }
    long before = maccrt_task_ahead_count();
    for (int r = 0; r < AHEAD_R; r++)
        for (int t = 0; t < 2; t++)
            for (int b = 0; b < AHEAD_NB; b++) {
                ahead_args a = {b * AHEAD_BS, AHEAD_BS, t};
                double *in = t ? y : x, *out = t ? x : y;
                size_t at = (size_t)b * AHEAD_BS, bytes = AHEAD_BS * sizeof(double);
                MACC_Map m[2] = {{"in", in, in + at, bytes, MACC_MAP_TO}, {"out", out, out + at, bytes, MACC_MAP_FROM}};
                MACC_Dep d[2] = {{in + at, bytes, MACC_DEP_IN}, {out + at, bytes, MACC_DEP_OUT}};
                MACC_target(&r_ahead, &a, sizeof a, 2, m, 2, d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
            }
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++) {
        double ex = i % 7, ey = -1;
        for (int r = 0; r < AHEAD_R; r++) {
            ey = ex + 1;
            ex = 2 * ey;
        }
        cr_assert_eq(x[i], ex, "x[%d] = %g, expected %g", i, x[i], ex);
        cr_assert_eq(y[i], ey, "y[%d] = %g, expected %g", i, y[i], ey);
    }
    /* every placement given back: tokens taken ahead are not lost */
    for (int d = 0; d < maccrt_rt.ndevices; d++) {
        const maccrt_device *dv = maccrt_rt.devices[d];
        cr_assert_eq(dv->tokens_free, dv->tokens_total, "%s: %d of %d tokens free", dv->name, dv->tokens_free,
                     dv->tokens_total);
        cr_assert_eq(dv->nplaced, 0, "%s: %d placed", dv->name, dv->nplaced);
        /* a lane's slot counted once: a task launched ahead takes its
         * tokens from its predecessor's release, in the lane's order (more
         * blocks than slots: a block's first link waits for a free one) */
        cr_assert_leq(dv->tokens_peak_used, dv->tokens_total, "%s: %d of %d tokens used at once", dv->name,
                      dv->tokens_peak_used, dv->tokens_total);
    }
    return maccrt_task_ahead_count() - before;
}

static void ahead_env(const char *devices)
{
    setenv("MACC_TEST_FAKE_ASYNC_US", "300", 1);
    setenv("MACC_TEST_FAKE_AHEAD", "4", 1);
    if (devices)
        setenv("MACC_DEVICES", devices, 1);
}

/* One GPU: the links go behind their predecessors, and the results are the
 * sequential ones. Never the first link of a block (no predecessor) nor its
 * second (it reads y, which the first only allocated on the GPU and writes:
 * a copy valid before the first's kernel is required). */
Test(gpu, links_are_launched_ahead_behind_their_predecessor)
{
    ahead_env("nvidia:0");
    long n = ahead_chains();
    cr_assert_gt(n, 0, "no task launched ahead");
    cr_assert_leq(n, 2 * AHEAD_R * AHEAD_NB - 2 * AHEAD_NB, "%ld launched ahead", n);
}

/* Two GPUs and the host: the chains wherever the scheduler puts them, the
 * results right and every token back. */
Test(gpu, launch_ahead_on_two_gpus_and_the_host_keeps_results_and_tokens)
{
    ahead_env(NULL);
    (void)ahead_chains();
}

/* After the first link (its fills), the chain's maps touch only nvidia:0's
 * entries (x read, y written, no other copy): each of the 9 later links
 * takes and gives back both under that GPU's own lock. */
Test(gpu, maps_only_one_gpu_holds_take_its_own_lock)
{
    long fast = one_gpu_chain();
    cr_assert_geq(fast, 9 * 2 * 2, "%ld maps under the device's own lock", fast);
}

Test(gpu, macc_dir_device_locks_0_takes_the_whole_lock)
{
    setenv("MACC_DIR_DEVICE_LOCKS", "0", 1);
    cr_assert_eq(one_gpu_chain(), 0);
}

/* Scoped holds: a section's first use on nvidia:0 (a new entry, its fill
 * from the host) takes the directory's global part and nvidia:0's part, not
 * nvidia:1's, which the test holds meanwhile (as a helper of that GPU holds
 * it in its own maps). Returns whether the task ran within `ms`. */
static atomic_int mark_ran;
static int fn_mark(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&mark_ran, 1);
    return 0;
}
static const MACC_Version r_mark_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_mark}};
static const MACC_Region r_mark = {{"gpu.c", 60, 1, "test"}, "r_mark", 1, r_mark_v};
static int first_use_beside_a_held_part(int ms)
{
    static double x[512];
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices();
    cr_assert_eq(maccrt_rt.ngpus, 2);
    pthread_mutex_lock(&maccrt_rt.devices[1]->dlock);
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_target(&r_mark, NULL, 0, 1, &m, 0, NULL, MACC_NOWAIT, 0, 1);
    int ran = 0;
    for (int i = 0; i < ms && !(ran = atomic_load(&mark_ran)); i++)
        sleep_ms(1);
    pthread_mutex_unlock(&maccrt_rt.devices[1]->dlock);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&mark_ran), 1, "the task ran once the part was given back");
    return ran;
}

Test(gpu, a_first_use_on_one_gpu_needs_no_other_gpus_part)
{
    cr_assert(first_use_beside_a_held_part(5000), "the task waited for nvidia:1's part");
}

/* MACC_DIR_SCOPED=0: the same first use takes the whole lock, every part. */
Test(gpu, macc_dir_scoped_0_takes_every_part)
{
    setenv("MACC_DIR_SCOPED", "0", 1);
    cr_assert_not(first_use_beside_a_held_part(300), "the task ran while nvidia:1's part was held");
}

/* MACC_WAIT_COMPLETES=1: the thread in taskwait completes the GPU tasks
 * while they run (their helpers push and go back to their device); =0: the
 * helpers do. The tasks' results are the same either way. (Its poll, 1 ms
 * after the last completion by default, 100 ms here: on a loaded machine the
 * first completion may come later than 1 ms.) */
static long gpu_tasks_completed_by_the_waiting_thread(const char *on)
{
    setenv("MACC_WAIT_COMPLETES", on, 1);
    setenv("MACC_WAIT_SPIN_US", "100000", 1);
    setenv("MACC_DEVICES", "nvidia", 1);
    enum { N = 64 };
    static double x[N * 16];
    for (int i = 0; i < N * 16; i++)
        x[i] = 1.0;
    long before = gpu_tasks();
    /* the second scaling of a block depends on the first (without it the
     * two may run at once: a tokens' release in the helper lets the second
     * start before the first is completed, and the result is the program's
     * race, as in OpenMP) */
    for (int k = 0; k < 2 * N; k++) {
        scale_args a = {(k % N) * 16, 16, 2.0, 1, x};
        MACC_Map m = {"x", x, x + a.lo, 16 * sizeof(double), MACC_MAP_TOFROM};
        MACC_Dep dep = {x + a.lo, 16 * sizeof(double), MACC_DEP_INOUT};
        MACC_target(&r_scale_gpu_only, &a, sizeof a, 1, &m, 1, &dep, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    MACC_taskwait(NULL);
    for (int i = 0; i < N * 16; i++)
        cr_assert_eq(x[i], 4.0, "x[%d] = %g", i, x[i]);
    cr_assert_eq(gpu_tasks() - before, 2 * N);
    return maccrt_rt.wait_completed;
}

Test(gpu, the_waiting_thread_completes_gpu_tasks)
{
    setenv("MACC_COMPLETER_THREAD", "0", 1);
    long n = gpu_tasks_completed_by_the_waiting_thread("1");
    cr_assert_gt(n, 64, "the thread in taskwait completed %ld of 128 tasks", n);
}

Test(gpu, macc_wait_completes_0_leaves_completions_to_the_helpers)
{
    setenv("MACC_COMPLETER_THREAD", "0", 1);
    cr_assert_eq(gpu_tasks_completed_by_the_waiting_thread("0"), 0);
}

/* MACC_COMPLETER_THREAD=1 (on by default with two GPUs and 8 cores): a
 * runtime thread completes the GPU tasks from the first completion on,
 * while the program thread still creates them (here: the waiting thread
 * does not poll, MACC_WAIT_COMPLETES=0); =0: the helpers do. */
static long gpu_tasks_completed_by_the_completion_thread(const char *on)
{
    setenv("MACC_COMPLETER_THREAD", on, 1);
    long waiting = gpu_tasks_completed_by_the_waiting_thread("0");
    cr_assert_eq(waiting, 0);
    return maccrt_task_completer_count();
}

Test(gpu, the_completion_thread_completes_gpu_tasks)
{
    /* (up to five rounds of 128 tasks: on a loaded machine, make check's,
     * the thread may wait a whole round for a core while the helpers
     * complete) */
    long n = 0;
    for (int round = 0; round < 5 && n <= 64; round++) {
        long before = maccrt_task_completer_count();
        n = gpu_tasks_completed_by_the_completion_thread("1") - before;
    }
    cr_assert_gt(n, 64, "the completion thread completed %ld of 128 tasks", n);
}

Test(gpu, macc_completer_thread_0_leaves_completions_to_the_helpers)
{
    cr_assert_eq(gpu_tasks_completed_by_the_completion_thread("0"), 0);
}

/* MACC_RELEASE_IN_HELPER=2: each GPU task's helper gives its device's
 * tokens and place back before the completer completes it; every task
 * still runs once and in order (x doubled twice), and every token comes
 * back (a third round fills each GPU again); =0: none; =1 (the default):
 * those pushed while the completer is behind, however many. */
static long released_in_helpers(const char *on)
{
    setenv("MACC_RELEASE_IN_HELPER", on, 1);
    setenv("MACC_COMPLETER_THREAD", "1", 1);
    for (int round = 0; round < 3; round++)
        (void)gpu_tasks_completed_by_the_waiting_thread("1");
    for (int d = 0; d < maccrt_rt.ngpus; d++) {
        maccrt_device *g = maccrt_rt.devices[d];
        cr_assert_eq(__atomic_load_n(&g->tokens_free, __ATOMIC_RELAXED), g->tokens_total, "%s: tokens back", g->name);
        cr_assert_eq(__atomic_load_n(&g->nplaced, __ATOMIC_RELAXED), 0, "%s: nothing placed", g->name);
    }
    return maccrt_task_released_in_helper();
}

Test(gpu, macc_release_in_helper_2_gives_tokens_back_in_the_helper)
{
    cr_assert_eq(released_in_helpers("2"), 3 * 128);
}

Test(gpu, macc_release_in_helper_1_gives_back_some_and_every_token_comes_back)
{
    long n = released_in_helpers("1");
    cr_assert(n >= 0 && n <= 3 * 128, "%ld", n);
}

Test(gpu, macc_release_in_helper_0_leaves_it_to_the_completer)
{
    cr_assert_eq(released_in_helpers("0"), 0);
}

/* Both on: the waiting thread and the completion thread take turns as the
 * completer (one at a time); every task completes once. */
Test(gpu, the_completion_thread_beside_the_waiting_thread)
{
    setenv("MACC_COMPLETER_THREAD", "1", 1);
    long waiting = gpu_tasks_completed_by_the_waiting_thread("1");
    long ct = maccrt_task_completer_count();
    cr_assert_leq(waiting + ct, 128, "%ld + %ld completions", waiting, ct);
}

/* A chain's link: y[0] += 1, then *args milliseconds asleep. */
static int fn_link(void *args, MACC_TaskEnv *env)
{
    double *y = env->ptrs[0];
    y[0] += 1;
    sleep_ms(*(const int *)args);
    return 0;
}

/* Chains on two GPUs: each link updates its chain's section (tofrom) for
 * 2 ms, either GPU can run it, and both end it within microseconds of each
 * other. The links stay on the GPU that holds their chain's data (finishes
 * within half a task's time tie, and locality wins ties): few bytes go from
 * one GPU to the other. */
static const MACC_Version r_sticky_v[] = {{MACC_DEV_NVIDIA, 0, 50, 0, fn_link}};
static const MACC_Region r_sticky = {{"sched.c", 9, 1, "test"}, "r_sticky", 1, r_sticky_v};

/* nc chains of nl links of r on the GPUs, chain c updating y[c * n ..] (n
 * doubles; tofrom, inout), each link given ms; the first links on device
 * `first` (FIRST_ALTERNATE: chain c's on GPU c % 2; the others device(any));
 * then the wait, and every link counted. */
#define FIRST_ALTERNATE (-1000)
static void chains_of_links(const MACC_Region *r, int nc, int nl, double *y, size_t n, int ms, int first)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    for (int k = 0; k < nl; k++)
        for (int c = 0; c < nc; c++) {
            MACC_Map m = {"y", y + c * n, y + c * n, n * sizeof *y, MACC_MAP_TOFROM};
            MACC_Dep d = {y + c * n, n * sizeof *y, MACC_DEP_INOUT};
            int dev = k > 0 ? MACC_DEVICE_ANY : first == FIRST_ALTERNATE ? c % 2 : first;
            MACC_target(r, &ms, sizeof ms, 1, &m, 1, &d, MACC_NOWAIT, dev, 1);
        }
    MACC_taskwait(NULL);
    for (int c = 0; c < nc; c++)
        cr_assert_eq(y[c * n], nl, "chain %d: %g links", c, y[c * n]);
}

Test(gpu, chains_stay_on_the_gpu_that_holds_their_data)
{
    enum { C = 6, L = 48, N = 4096 };
    static double y[C][N];
    chains_of_links(&r_sticky, C, L, &y[0][0], N, 2, MACC_DEVICE_ANY);
    unsigned long long p2p = atomic_load(&maccrt_rt.devices[0]->bytes_p2p) +
                             atomic_load(&maccrt_rt.devices[1]->bytes_p2p);
    cr_assert_gt(macc_device_tasks(0), 0);
    cr_assert_gt(macc_device_tasks(1), 0);
    /* (the old rule: 3.1-6.9 MB; this one 0.1-0.4 MB, 0.85 MB on a loaded host) */
    cr_assert_leq(p2p, (unsigned long long)C * 8 * sizeof y[0], "%llu bytes GPU to GPU", p2p);
}

/* eft's occupancy term. Fake GPUs whose tasks share one processor
 * (MACC_TEST_FAKE_SHARES: d->shares): a link sleeps 1 ms for every task its
 * GPU runs at its start, as kernels at once share a GPU. Four chains start
 * on GPU 0 (their first links there), four links at once, each 4 ms. The
 * other links may run on either GPU: an idle GPU 1 ends one in about a
 * quarter of that, so chains move there, and the work ends shared. Without
 * the term both GPUs look alike (4 ms) and locality kept every link on
 * GPU 0 (MACC_EFT_OCCUPANCY=0: 0 of 40 on GPU 1, checked; with it 20-23). */
static atomic_int shared_running[4];
/* ms for every task running on env's GPU at the start (this one included) */
static void shared_sleep(const MACC_TaskEnv *env, int ms)
{
    int i = env->device_index >= 0 && env->device_index < 4 ? env->device_index : 0;
    int n = atomic_fetch_add(&shared_running[i], 1) + 1;
    sleep_ms(ms * n);
    atomic_fetch_sub(&shared_running[i], 1);
}

static int fn_shared_link(void *args, MACC_TaskEnv *env)
{
    double *y = env->ptrs[0];
    y[0] += 1;
    shared_sleep(env, *(const int *)args);
    return 0;
}
static const MACC_Version r_shared_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_shared_link}};
static const MACC_Region r_shared = {{"sched.c", 10, 1, "test"}, "r_shared", 1, r_shared_v};

Test(gpu, an_idle_gpu_beside_one_that_shares_itself_among_chains_takes_links)
{
    enum { C = 4, L = 11, N = 512 };
    static double y[C][N];
    setenv("MACC_TEST_FAKE_SHARES", "1", 1);
    chains_of_links(&r_shared, C, L, &y[0][0], N, 1, 0);
    long on1 = macc_device_tasks(1);
    cr_assert_eq(macc_device_tasks(0) + on1, C * L);
    cr_assert_geq(on1, C * (L - 1) / 4, "%ld of %d links on the idle GPU", on1, C * (L - 1));
}

/* A GPU whose first runs of a region were slow (its fills shared the host's
 * memory with the other GPU's, on GPUs): eight chains start four on each
 * fake GPU (sharing its processor, as above), and the first link of each
 * chain on GPU 1 takes ten times as long. GPU 1's estimate is its kind's
 * once stale, though its own chains' first links are still placed there,
 * and it takes links again (186-195 of 480 on the 2-vCPU machine); with
 * MACC_EFT_STALE_BUSY=0, 13: every chain moved to GPU 0. */
static int fn_slow_first(void *args, MACC_TaskEnv *env)
{
    double *y = env->ptrs[0];
    int slow = env->device_index == 1 && y[0] == 0;
    y[0] += 1;
    shared_sleep(env, *(const int *)args * (slow ? 10 : 1));
    return 0;
}
static const MACC_Version r_slow_first_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_slow_first}};
static const MACC_Region r_slow_first = {{"sched.c", 13, 1, "test"}, "r_slow_first", 1, r_slow_first_v};

Test(gpu, a_gpu_whose_first_runs_were_slow_takes_links_again_once_its_times_are_stale)
{
    enum { C = 8, L = 60, N = 512 };
    static double y[C][N];
    setenv("MACC_TEST_FAKE_SHARES", "1", 1);
    chains_of_links(&r_slow_first, C, L, &y[0][0], N, 1, FIRST_ALTERNATE);
    long on1 = macc_device_tasks(1);
    cr_assert_eq(macc_device_tasks(0) + on1, C * L);
    cr_assert_geq(on1, C * L / 8, "%ld of %d links on GPU 1", on1, C * L);
}

/* Two program threads create chains at once on two fake GPUs, each link
 * also depending on one shared word (read by every link, written by every
 * 25th of thread 0's): edges between the threads' tasks are made through
 * the dependence index's own lock while the other thread and the helpers
 * complete tasks (the guard keeps a task whose predecessor ends meanwhile
 * from being made ready before it entered). Every link runs once. */
enum { TWO_C = 4, TWO_L = 100, TWO_N = 64 };
static double two_y[2][TWO_C][TWO_N];
static int two_shared;
static void *two_creator(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int k = 0; k < TWO_L; k++)
        for (int c = 0; c < TWO_C; c++) {
            MACC_Map m = {"y", two_y[me][c], two_y[me][c], sizeof two_y[me][c], MACC_MAP_TOFROM};
            int w = me == 0 && c == 0 && k % 25 == 0;
            MACC_Dep d[2] = {{two_y[me][c], sizeof two_y[me][c], MACC_DEP_INOUT},
                             {&two_shared, sizeof two_shared, w ? MACC_DEP_INOUT : MACC_DEP_IN}};
            int ms = 0;
            MACC_target(&r_sticky, &ms, sizeof ms, 1, &m, 2, d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
    MACC_taskwait(NULL);
    return NULL;
}

Test(gpu, two_threads_make_edges_between_their_tasks_while_others_complete)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, two_creator, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < TWO_C; c++)
            cr_assert_eq(two_y[i][c][0], TWO_L, "thread %d chain %d: %g links", i, c, two_y[i][c][0]);
    cr_assert_eq(macc_device_tasks(0) + macc_device_tasks(1), 2 * TWO_C * TWO_L);
}

/* C chains of L links of region r (args: its task arguments) over y (C
 * rows of n doubles), L rounds of one link per chain, before_wait (when
 * given), then a taskwait; checks that every link ran. */
static void run_chains_args(const MACC_Region *r, const void *args, size_t size, int C, int L, size_t n,
                            double (*y)[n], void (*before_wait)(const void *args))
{
    for (int k = 0; k < L; k++)
        for (int c = 0; c < C; c++) {
            MACC_Map m = {"y", y[c], y[c], n * sizeof y[c][0], MACC_MAP_TOFROM};
            MACC_Dep d = {y[c], n * sizeof y[c][0], MACC_DEP_INOUT};
            MACC_target(r, args, size, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
    if (before_wait)
        before_wait(args);
    MACC_taskwait(NULL);
    for (int c = 0; c < C; c++)
        cr_assert_eq(y[c][0], L, "chain %d: %g links", c, y[c][0]);
}

static void run_chains(const MACC_Region *r, int ms, int C, int L, size_t n, double (*y)[n])
{
    run_chains_args(r, &ms, sizeof ms, C, L, n, y, NULL);
}

/* A link that first waits (up to 10 s) for its creator to be in its
 * taskwait, so that the chains end while it waits whatever the load. */
typedef struct gated_args {
    int ms;
    maccrt_thread *creator;
} gated_args;
static int fn_gated_link(void *args, MACC_TaskEnv *env)
{
    const gated_args *g = args;
    for (int i = 0; i < 10000 && !__atomic_load_n(&g->creator->in_wait, __ATOMIC_ACQUIRE); i++)
        sleep_ms(1);
    double *y = env->ptrs[0];
    y[0] += 1;
    sleep_ms(g->ms);
    return 0;
}
static const MACC_Version r_gated_v[] = {{MACC_DEV_NVIDIA, 0, 50, 0, fn_gated_link}};
static const MACC_Region r_gated = {{"sched.c", 13, 1, "test"}, "r_gated", 1, r_gated_v};

/* One more gated task, 200 ms long, that reads a section and writes none:
 * the taskwait (and its flush) ends only well after the chains' last links,
 * whose early write-backs so never meet the flush's. */
static void gated_tail(const void *args)
{
    static double z[64];
    gated_args g = *(const gated_args *)args;
    g.ms = 200;
    MACC_Map m = {"z", z, z, sizeof z, MACC_MAP_TO};
    MACC_target(&r_gated, &g, sizeof g, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
}

/* Early write-backs: chains of links on the two fake GPUs, their creator
 * in its taskwait before they end (the links wait for it: r_gated), and a
 * longer task after them (gated_tail: the flush at the end of the wait
 * would otherwise take the write-backs of links that end last, as it may
 * in a program). Each chain's last link has no successor,
 * so its helper writes the chain's section home as soon as it is complete
 * (maccrt_cache_write_early), before the flush; the other links, whose
 * successors wait, leave theirs on the GPU. Every section goes home exactly
 * once and the host sees every link. */
static long early_chains(int C, int L, size_t n, double (*y)[n], unsigned long long *d2h)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices();
    maccrt_dir_info before, after;
    maccrt_dir_info_get(maccrt_rt.devices[0], &before);
    gated_args g = {1, maccrt_thread_self()};
    run_chains_args(&r_gated, &g, sizeof g, C, L, n, y, gated_tail);
    maccrt_dir_info_get(maccrt_rt.devices[0], &after);
    *d2h = d2h_of(0) + d2h_of(1);
    return after.early - before.early;
}

Test(gpu, outputs_no_task_waits_for_go_home_as_their_task_ends)
{
    enum { C = 4, L = 6, N = 2048 };
    static double y[C][N];
    unsigned long long d2h;
    long early = early_chains(C, L, N, y, &d2h);
    cr_assert_eq(early, C, "%ld early write-backs: one per chain, at its last link", early);
    cr_assert_eq(d2h, (unsigned long long)C * sizeof y[0], "each chain's section home once (%llu bytes)", d2h);
}

/* MACC_WB_VIA_EARLY=1: four sections written on nvidia:0 alone (two tasks
 * at once, each waiting for its creator's taskwait, so that their helpers
 * write them home early; the second of each pair ends 10 ms after the
 * first), copies of 30 ms: a helper whose GPU's link already
 * carries a write-back hands its own to nvidia:1, whose link carries none
 * (over the GPUs' link, then home through its own: cache__early_via). Each
 * section home once, the host sees every task; the flush's own sharing is
 * off (MACC_WB_VIA=0), so any byte through nvidia:1 is an early one. */
static void via_early_run(double (*y)[16384], int C, long *early)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    setenv("MACC_WB_VIA", "0", 1);
    macc_num_devices();
    maccrt_dir_info before, after;
    maccrt_dir_info_get(maccrt_rt.devices[0], &before);
    gated_args g = {1, maccrt_thread_self()};
    fgpu_copy_ms = 30;
    for (int c = 0; c < C; c++) {
        /* (their ends 10 ms apart: a write-back begins while the last one's
         * 30 ms copy still runs) */
        gated_args gc = {1 + 10 * (c % 2), g.creator};
        MACC_Map m = {"y", y[c], y[c], sizeof y[c], MACC_MAP_TOFROM};
        MACC_target(&r_gated, &gc, sizeof gc, 1, &m, 0, NULL, MACC_NOWAIT, 0, 1);
    }
    gated_tail(&g);
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    maccrt_dir_info_get(maccrt_rt.devices[0], &after);
    *early = after.early - before.early;
    for (int c = 0; c < C; c++)
        cr_assert_eq(y[c][0], 1, "section %d: %g", c, y[c][0]);
}

Test(gpu, early_write_backs_of_a_busy_link_go_through_the_gpu_whose_link_is_idle)
{
    enum { C = 4, N = 16384 };
    static double y[C][N];
    setenv("MACC_WB_VIA_EARLY", "1", 1);
    long early;
    via_early_run(y, C, &early);
    long via = atomic_load(&fgpu_via_bytes), each = N * (long)sizeof(double);
    cr_assert_eq(early, C, "%ld early write-backs", early);
    cr_assert_geq(via, each, "nvidia:1 copied %ld bytes home", via);
    cr_assert_eq((long)d2h_of(1), via, "nvidia:1 counts what it copied home");
    cr_assert_eq((long)(d2h_of(0) + d2h_of(1)), C * each, "each section home once");
    cr_assert_eq(atomic_load(&maccrt_rt.devices[0]->wb_load) + atomic_load(&maccrt_rt.devices[1]->wb_load), 0,
                 "the links' loads back to 0");
}

Test(gpu, early_write_backs_go_over_their_own_gpus_link_by_default)
{
    enum { C = 4, N = 16384 };
    static double y[C][N];
    long early;
    via_early_run(y, C, &early);
    cr_assert_eq(early, C, "%ld early write-backs", early);
    cr_assert_eq(atomic_load(&fgpu_via_bytes) + atomic_load(&fgpu_via_refused), 0);
    cr_assert_eq(d2h_of(1), 0);
    cr_assert_eq(d2h_of(0), (unsigned long long)C * N * sizeof(double));
}

/* A helper that completes a chain's last link while tasks wait in its
 * GPU's queue leaves the write-back to the moment a helper has nothing to
 * take (maccrt_task_idle): the write-backs are the same, made before the
 * wait ends, and counted as deferred. */
Test(gpu, early_write_backs_wait_for_an_idle_helper_while_tasks_are_queued)
{
    enum { C = 4, L = 6, N = 2048 };
    static double y[C][N];
    fgpu_queued_extra = 1;
    long before = maccrt_task_deferred();
    unsigned long long d2h;
    long early = early_chains(C, L, N, y, &d2h);
    cr_assert_eq(early, C, "%ld early write-backs: one per chain, at its last link", early);
    cr_assert_eq(maccrt_task_deferred() - before, C, "each deferred to an idle helper");
    cr_assert_eq(d2h, (unsigned long long)C * sizeof y[0], "each chain's section home once (%llu bytes)", d2h);
}

Test(gpu, macc_write_defer_0_makes_early_write_backs_at_once)
{
    enum { C = 4, L = 6, N = 2048 };
    static double y[C][N];
    setenv("MACC_WRITE_DEFER", "0", 1);
    fgpu_queued_extra = 1;
    long before = maccrt_task_deferred();
    unsigned long long d2h;
    long early = early_chains(C, L, N, y, &d2h);
    cr_assert_eq(early, C);
    cr_assert_eq(maccrt_task_deferred() - before, 0, "none deferred");
    cr_assert_eq(d2h, (unsigned long long)C * sizeof y[0]);
}

Test(gpu, macc_write_early_0_leaves_them_to_the_flush)
{
    enum { C = 4, L = 6, N = 2048 };
    static double y[C][N];
    setenv("MACC_WRITE_EARLY", "0", 1);
    unsigned long long d2h;
    long early = early_chains(C, L, N, y, &d2h);
    cr_assert_eq(early, 0);
    cr_assert_eq(d2h, (unsigned long long)C * sizeof y[0]);
}

/* A chain whose last link only reads what the links before it wrote (its
 * map `to`, its dependence `in`, as STREAM's triad reads b and c): the
 * last link has no successor, and the section it read, dirty on its GPU,
 * no live task depends on once it is complete, so its helper writes it home
 * then (task__early_find's read sections), before the flush.
 * MACC_WRITE_EARLY_READ=0: only written sections, so the flush takes them. */
static int fn_gated_read(void *args, MACC_TaskEnv *env)
{
    const gated_args *g = args;
    (void)env;
    for (int i = 0; i < 10000 && !__atomic_load_n(&g->creator->in_wait, __ATOMIC_ACQUIRE); i++)
        sleep_ms(1);
    sleep_ms(g->ms);
    return 0;
}
static const MACC_Version r_gated_read_v[] = {{MACC_DEV_NVIDIA, 0, 50, 0, fn_gated_read}};
static const MACC_Region r_gated_read = {{"sched.c", 17, 1, "test"}, "r_gated_read", 1, r_gated_read_v};
static long early_reads(unsigned long long *d2h)
{
    enum { C = 4, L = 4, N = 2048 };
    static double y[C][N];
    /* one GPU: the reading link runs where the links before it wrote (the
     * section it writes home is its GPU's) */
    setenv("MACC_DEVICES", "nvidia:0", 1);
    macc_num_devices();
    maccrt_dir_info before, after;
    maccrt_dir_info_get(maccrt_rt.devices[0], &before);
    gated_args g = {1, maccrt_thread_self()};
    for (int k = 0; k < L; k++)
        for (int c = 0; c < C; c++) {
            int last = k == L - 1;
            MACC_Map m = {"y", y[c], y[c], sizeof y[c], last ? MACC_MAP_TO : MACC_MAP_TOFROM};
            MACC_Dep d = {y[c], sizeof y[c], last ? MACC_DEP_IN : MACC_DEP_INOUT};
            MACC_target(last ? &r_gated_read : &r_gated, &g, sizeof g, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
    gated_tail(&g);
    MACC_taskwait(NULL);
    for (int c = 0; c < C; c++)
        cr_assert_eq(y[c][0], L - 1, "chain %d: %g links", c, y[c][0]);
    maccrt_dir_info_get(maccrt_rt.devices[0], &after);
    *d2h = d2h_of(0);
    cr_assert_eq(*d2h, (unsigned long long)C * sizeof y[0], "each chain's section home once (%llu bytes)", *d2h);
    return after.early - before.early;
}

Test(gpu, sections_a_chains_last_link_only_read_go_home_as_it_ends)
{
    unsigned long long d2h;
    long early = early_reads(&d2h);
    cr_assert_eq(early, 4, "%ld early write-backs: one per chain, at its reading last link", early);
}

/* The same when another thread completes the links (the completion
 * thread): the last link is still in the dependence index as its helper
 * looks, and its own dependence does not hold the section back. (At once,
 * not deferred: a deferred item waits for an idle helper of its GPU, which
 * the long tail task may hold until the flush.) */
Test(gpu, sections_a_chains_last_link_only_read_go_home_with_the_completion_thread)
{
    setenv("MACC_COMPLETER_THREAD", "1", 1);
    setenv("MACC_WRITE_DEFER", "0", 1);
    unsigned long long d2h;
    long early = early_reads(&d2h);
    cr_assert_eq(early, 4, "%ld early write-backs: one per chain, at its reading last link", early);
}

Test(gpu, macc_write_early_read_0_leaves_read_sections_to_the_flush)
{
    setenv("MACC_WRITE_EARLY_READ", "0", 1);
    unsigned long long d2h;
    long early = early_reads(&d2h);
    cr_assert_eq(early, 0);
}

/* Write-backs ahead of the flush (task.c: task__write_ahead). T tiles are
 * scaled on the fake GPUs and the tasks complete (no thread waits yet: no
 * early write-back); a long task then watches the host's tiles from its
 * GPU while its creator waits in taskwait. Tiles no live task depends on go
 * home while it runs; a tile that a live task still depends on stays on the
 * GPU until that task has run. */
enum { WA_T = 4, WA_N = 1024 };
static double wa_x[WA_T][WA_N], wa_w[16];
static int wa_sentinel;

typedef struct {
    int want;   /* 1: wait (5 s at most) for every tile to read 2i; 0: watch tile 0 stay i for 300 ms */
    int ok;     /* (set by the task) */
    int *okp;
} wa_args;

static int fn_wa_watch(void *args, MACC_TaskEnv *env)
{
    (void)env;
    const wa_args *a = args;
    int ok = 0;
    for (int ms = 0; ms < (a->want ? 5000 : 300); ms++) {
        int home = 1;
        for (int t = 0; t < (a->want ? WA_T : 1); t++)
            for (int i = 0; i < WA_N; i++)
                home &= __atomic_load_n((const long long *)&wa_x[t][i], __ATOMIC_RELAXED) ==
                        *(const long long *)&(double){2.0 * i};
        if (a->want && home) {
            ok = 1;
            break;
        }
        if (!a->want && home) /* tile 0 at 2i: it went home */
            break;
        sleep_ms(1);
        if (!a->want && ms == 299)
            ok = 1;
    }
    __atomic_store_n(a->okp, ok, __ATOMIC_RELEASE);
    return 0;
}
static const MACC_Version r_wa_watch_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_wa_watch}};
static const MACC_Region r_wa_watch = {{"wa.c", 1, 1, "test"}, "r_wa_watch", 1, r_wa_watch_v};

/* The tiles scaled by 2 (each with depend(inout) on its tile), complete. */
static void wa_scaled(void)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    for (int t = 0; t < WA_T; t++)
        for (int i = 0; i < WA_N; i++)
            wa_x[t][i] = i;
    for (int t = 0; t < WA_T; t++) {
        scale_args a = {0, WA_N, 2.0, 0, wa_x[t]};
        MACC_Map m = {"x", wa_x[t], wa_x[t], sizeof wa_x[t], MACC_MAP_TOFROM};
        MACC_Dep dep = {wa_x[t], sizeof wa_x[t], MACC_DEP_INOUT};
        MACC_target(&r_scale_gpu_only, &a, sizeof a, 1, &m, 1, &dep, MACC_NOWAIT, t % 2, 1);
    }
    for (int i = 0; i < 5000 && __atomic_load_n(&maccrt_rt.live, __ATOMIC_ACQUIRE) > 0; i++)
        sleep_ms(1);
    cr_assert_eq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_ACQUIRE), 0);
    cr_assert_eq(wa_x[0][5], 5.0, "on the GPU until a write-back");
}

static void wa_watch(int want, int *ok, int ndep, const MACC_Dep *dep)
{
    wa_args a = {want, 0, ok};
    MACC_Map m = {"w", wa_w, wa_w, sizeof wa_w, MACC_MAP_TO};
    MACC_target(&r_wa_watch, &a, sizeof a, 1, &m, ndep, dep, MACC_NOWAIT, 0, 1);
}

Test(gpu, dirty_copies_no_live_task_depends_on_go_home_when_the_wait_begins)
{
    wa_scaled();
    int ok = -1;
    wa_watch(1, &ok, 0, NULL);
    MACC_taskwait(NULL);
    cr_assert_eq(ok, 1, "the tiles went home while a task ran");
    for (int t = 0; t < WA_T; t++)
        for (int i = 0; i < WA_N; i++)
            cr_assert_eq(wa_x[t][i], 2.0 * i);
}

Test(gpu, a_dirty_copy_a_live_task_depends_on_waits_for_it)
{
    wa_scaled();
    int ok = -1;
    MACC_Dep s = {&wa_sentinel, sizeof wa_sentinel, MACC_DEP_INOUT};
    wa_watch(0, &ok, 1, &s); /* tile 0 watched for 300 ms */
    /* tile 0 scaled again after the watcher (it depends on the sentinel) */
    scale_args a = {0, WA_N, 3.0, 0, wa_x[0]};
    MACC_Map m = {"x", wa_x[0], wa_x[0], sizeof wa_x[0], MACC_MAP_TOFROM};
    MACC_Dep dep[2] = {{&wa_sentinel, sizeof wa_sentinel, MACC_DEP_IN}, {wa_x[0], sizeof wa_x[0], MACC_DEP_INOUT}};
    MACC_target(&r_scale_gpu_only, &a, sizeof a, 1, &m, 2, dep, MACC_NOWAIT, 1, 1);
    MACC_taskwait(NULL);
    cr_assert_eq(ok, 1, "tile 0 stayed on its GPU while a live task depended on it");
    for (int i = 0; i < WA_N; i++)
        cr_assert_eq(wa_x[0][i], 6.0 * i);
    for (int t = 1; t < WA_T; t++)
        for (int i = 0; i < WA_N; i++)
            cr_assert_eq(wa_x[t][i], 2.0 * i);
}

Test(gpu, macc_write_early_0_leaves_the_wait_s_write_backs_to_the_flush)
{
    setenv("MACC_WRITE_EARLY", "0", 1);
    wa_scaled();
    int ok = -1;
    MACC_Dep s = {&wa_sentinel, sizeof wa_sentinel, MACC_DEP_INOUT};
    wa_watch(0, &ok, 1, &s);
    MACC_taskwait(NULL);
    cr_assert_eq(ok, 1, "tile 0 stayed on its GPU until the flush");
    for (int i = 0; i < WA_N; i++)
        cr_assert_eq(wa_x[0][i], 2.0 * i);
}

/* The per-device ready queues: a chain's next link waits in the queue of
 * the GPU that ran the previous one and is looked at when it is that
 * queue's first, so the walks ask the policy about fewer than two choices
 * per task, every chain completes, and both GPUs take their share (the gain
 * over one queue, where links waiting for their busy GPU were asked again
 * at every completion, is measured by bench/dispatch: 2.1-2.4 calls per task
 * on two fake GPUs before, 1.3-1.5 after). */
static const MACC_Version r_qlink_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_link}};
static const MACC_Region r_qlink = {{"sched.c", 12, 1, "test"}, "r_qlink", 1, r_qlink_v};
/* The same region once per round of the tests that try up to three times:
 * each round's chain heads are placed on measurements of its own (a first
 * link preempted on a loaded machine made one GPU look slow to every later
 * round of one region, and the rounds failed together) */
static const MACC_Region r_qlink_round[3] = {{{"sched.c", 16, 1, "test"}, "r_qlink_0", 1, r_qlink_v},
                                             {{"sched.c", 17, 1, "test"}, "r_qlink_1", 1, r_qlink_v},
                                             {{"sched.c", 18, 1, "test"}, "r_qlink_2", 1, r_qlink_v}};
/* Runs C chains of L links of r over y (C rows of n doubles) on the
 * two fake GPUs, checks every link ran, and returns the policy calls made. */
static long qlink_chains(const MACC_Region *r, int C, int L, size_t n, double (*y)[n])
{
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices(); /* (the runtime started) */
    cr_assert_eq(maccrt_rt.ngpus, 2);
    pthread_mutex_lock(&maccrt_rt.lock);
    long c0 = maccrt_rt.policy_calls;
    pthread_mutex_unlock(&maccrt_rt.lock);
    run_chains(r, 1, C, L, n, y);
    pthread_mutex_lock(&maccrt_rt.lock);
    long calls = maccrt_rt.policy_calls - c0;
    pthread_mutex_unlock(&maccrt_rt.lock);
    return calls;
}
Test(gpu, chain_links_wait_in_their_gpus_queue)
{
    enum { C = 16, L = 24, N = 512 };
    static double y[C][N];
    long calls = qlink_chains(&r_qlink, C, L, N, y);
    long t0 = macc_device_tasks(0), t1 = macc_device_tasks(1);
    cr_assert_gt(t0, C * L / 4, "GPU 0 ran %ld of %d", t0, C * L);
    cr_assert_gt(t1, C * L / 4, "GPU 1 ran %ld of %d", t1, C * L);
    cr_assert_lt(calls, 2 * C * L, "%ld policy calls for %d tasks", calls, C * L);
}

/* A chain link whose input is valid on its home GPU only, with its home
 * free, goes there without the policy weighing every candidate
 * (eft__stays): with four chains per GPU (25 tokens each), every link after
 * the first ones fits at home, and the policy is asked about the chains'
 * heads and the first links (before the region is measured), not about
 * each link. Every link still ends on its chain's GPU. */
Test(gpu, a_link_whose_data_is_home_stays_home_without_the_policy)
{
    /* Up to three rounds (fresh chains each) until one has both GPUs
     * sharing the chains and few calls: on a loaded 2-core machine a helper
     * preempted while its link runs keeps the home busy, and the next link
     * then asks the policy (a round of 50-580 calls about one time in ten
     * under make check's parallel jobs), and the first links of a round can
     * all go to one GPU (GPU 0 with 26-38 of 192 links in 2 of 20 runs
     * beside a make check; all three rounds at 50 calls in one make check
     * of 2026-11-29, against a bound of a quarter of the links then; 108
     * calls in the last of three rounds beside TSan builds and benchmarks,
     * against half the links). Without eft__stays every link asks, every
     * round (192-196 calls): the bound is three quarters of the links. */
    enum { C = 8, L = 24, N = 512, ROUNDS = 3 };
    static double y[ROUNDS][C][N];
    long calls = 0, t0 = 0, t1 = 0;
    int ok = 0;
    for (int r = 0; r < ROUNDS && !ok; r++) {
        long t00 = macc_device_tasks(0), t10 = macc_device_tasks(1);
        calls = qlink_chains(&r_qlink_round[r], C, L, N, y[r]);
        t0 = macc_device_tasks(0) - t00;
        t1 = macc_device_tasks(1) - t10;
        cr_assert_eq(t0 + t1, C * L);
        ok = t0 > C * L / 4 && t1 > C * L / 4 && calls < 3 * C * L / 4;
    }
    cr_assert(ok, "last of %d rounds: GPU 0 ran %ld, GPU 1 %ld of %d tasks, %ld policy calls", ROUNDS, t0, t1,
              C * L, calls);
}

/* The same with a second input per link that no GPU holds yet (as
 * matmul's A and B tiles on their first use): every candidate has it to
 * move, the home no more than that, so the link still stays home without
 * the policy weighing every candidate (eft__stays compares the moves). */
static const MACC_Version r_qfresh_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_link}};
static const MACC_Region r_qfresh[3] = {{{"sched.c", 15, 1, "test"}, "r_qfresh_0", 1, r_qfresh_v},
                                        {{"sched.c", 19, 1, "test"}, "r_qfresh_1", 1, r_qfresh_v},
                                        {{"sched.c", 20, 1, "test"}, "r_qfresh_2", 1, r_qfresh_v}};
Test(gpu, a_link_with_inputs_no_gpu_holds_stays_home_without_the_policy)
{
    enum { C = 8, L = 24, N = 512, X = 64, ROUNDS = 3 };
    static double y[ROUNDS][C][N], x[ROUNDS][L][C][X];
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices();
    cr_assert_eq(maccrt_rt.ngpus, 2);
    long calls = 0, t0 = 0, t1 = 0;
    int ok = 0, ms = 1;
    for (int r = 0; r < ROUNDS && !ok; r++) {
        long t00 = macc_device_tasks(0), t10 = macc_device_tasks(1);
        pthread_mutex_lock(&maccrt_rt.lock);
        long c0 = maccrt_rt.policy_calls;
        pthread_mutex_unlock(&maccrt_rt.lock);
        for (int k = 0; k < L; k++)
            for (int c = 0; c < C; c++) {
                MACC_Map m[2] = {{"y", y[r][c], y[r][c], sizeof y[r][c], MACC_MAP_TOFROM},
                                 {"x", x[r][k][c], x[r][k][c], sizeof x[r][k][c], MACC_MAP_TO}};
                MACC_Dep d = {y[r][c], sizeof y[r][c], MACC_DEP_INOUT};
                MACC_target(&r_qfresh[r], &ms, sizeof ms, 2, m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
            }
        MACC_taskwait(NULL);
        for (int c = 0; c < C; c++)
            cr_assert_eq(y[r][c][0], L, "chain %d: %g links", c, y[r][c][0]);
        pthread_mutex_lock(&maccrt_rt.lock);
        calls = maccrt_rt.policy_calls - c0;
        pthread_mutex_unlock(&maccrt_rt.lock);
        t0 = macc_device_tasks(0) - t00;
        t1 = macc_device_tasks(1) - t10;
        cr_assert_eq(t0 + t1, C * L);
        ok = t0 > C * L / 4 && t1 > C * L / 4 && calls < 3 * C * L / 4;
    }
    cr_assert(ok, "last of %d rounds: GPU 0 ran %ld, GPU 1 %ld of %d tasks, %ld policy calls", ROUNDS, t0, t1,
              C * L, calls);
}

/* A task that needs every token of a GPU is not starved by a stream of
 * smaller tasks waiting in that GPU's own queue: as the first of the global
 * queue that fits nowhere, its need (big_need) keeps the queued smaller
 * tasks off its candidates' tokens until it fits. It runs long before the
 * chains end. In the program's order (MACC_CHAIN_ORDER=0): in the chains'
 * order their links created before it go first, their later links too (the
 * next test). */
static atomic_int qbig_order, qbig_at;
static int fn_qsmall(void *args, MACC_TaskEnv *env)
{
    (void)args;
    double *y = env->ptrs[0];
    y[0] += 1;
    atomic_fetch_add(&qbig_order, 1);
    sleep_ms(1);
    return 0;
}
static int fn_qbig(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_store(&qbig_at, atomic_load(&qbig_order));
    sleep_ms(1);
    return 0;
}
static const MACC_Version r_qsmall_v[] = {{MACC_DEV_NVIDIA, 0, 20, 0, fn_qsmall}};
static const MACC_Region r_qsmall = {{"sched.c", 13, 1, "test"}, "r_qsmall", 1, r_qsmall_v};
static const MACC_Version r_qbig_v[] = {{MACC_DEV_NVIDIA, 0, 100, 0, fn_qbig}};
static const MACC_Region r_qbig = {{"sched.c", 14, 1, "test"}, "r_qbig", 1, r_qbig_v};
Test(gpu, a_task_needing_every_token_is_not_starved_by_queued_chains)
{
    enum { C = 10, L = 40, N = 512 };
    static double y[C][N], z[N];
    setenv("MACC_DEVICES", "nvidia", 1);
    setenv("MACC_CHAIN_ORDER", "0", 1);
    atomic_store(&qbig_at, -1);
    for (int k = 0; k < L; k++) {
        for (int c = 0; c < C; c++) {
            MACC_Map m = {"y", y[c], y[c], sizeof y[c], MACC_MAP_TOFROM};
            MACC_Dep d = {y[c], sizeof y[c], MACC_DEP_INOUT};
            MACC_target(&r_qsmall, NULL, 0, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
        if (k == 4) {
            MACC_Map m = {"z", z, z, sizeof z, MACC_MAP_TOFROM};
            MACC_target(&r_qbig, NULL, 0, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
    }
    MACC_taskwait(NULL);
    for (int c = 0; c < C; c++)
        cr_assert_eq(y[c][0], L, "chain %d: %g links", c, y[c][0]);
    int at = atomic_load(&qbig_at);
    cr_assert_geq(at, 0, "the big task ran");
    cr_assert_lt(at, C * L / 2, "the big task ran after %d of %d small ones", at, C * L);
}

/* In the chains' order (the default) the same big task, created after the
 * chains began, goes after their links. One that becomes ready while the
 * chains made after it hold most of the GPU (its predecessor, created
 * before them, gives it its rank) is not starved by them: its reservation
 * keeps their links off the GPU's tokens until it fits. */
static int fn_qhold(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    sleep_ms(5);
    return 0;
}
static const MACC_Version r_qhold_v[] = {{MACC_DEV_NVIDIA, 0, 20, 0, fn_qhold}};
static const MACC_Region r_qhold = {{"sched.c", 15, 1, "test"}, "r_qhold", 1, r_qhold_v};
Test(gpu, a_task_needing_every_token_ranked_before_the_chains_is_not_starved_by_them)
{
    enum { C = 10, L = 40, N = 512 };
    static double y[C][N], z[N], h[N];
    setenv("MACC_DEVICES", "nvidia:0", 1);
    atomic_store(&qbig_at, -1);
    MACC_Map mh = {"h", h, h, sizeof h, MACC_MAP_TOFROM};
    MACC_Dep dz = {z, sizeof z, MACC_DEP_INOUT};
    MACC_target(&r_qhold, NULL, 0, 1, &mh, 1, &dz, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_Map mz = {"z", z, z, sizeof z, MACC_MAP_TOFROM};
    MACC_target(&r_qbig, NULL, 0, 1, &mz, 1, &dz, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    run_chains_args(&r_qsmall, NULL, 0, C, L, N, y, NULL);
    int at = atomic_load(&qbig_at);
    cr_assert_geq(at, 0, "the big task ran");
    cr_assert_lt(at, C * L / 2, "the big task ran after %d of %d small ones", at, C * L);
}

/* The chains' order: chains created link by link across them (the k loop
 * outside, as STREAM's kernels over blocks) run one after the other on a
 * GPU that takes one task at a time: a link inherits its chain's rank (its
 * first link's number), so a chain's next link goes before the other
 * chains' links. MACC_CHAIN_ORDER=0: the program's order, the chains in
 * turn. */
enum { CHAIN_C = 3, CHAIN_L = 5 };
static double chain_y[CHAIN_C][64];
static atomic_int chain_n;
static int chain_seq[CHAIN_C * CHAIN_L];
static int fn_chain_link(void *args, MACC_TaskEnv *env)
{
    (void)args;
    double *y = env->ptrs[0];
    y[0] += 1;
    int c = (int)y[1]; /* (y is the GPU's copy) */
    chain_seq[atomic_fetch_add(&chain_n, 1)] = c;
    sleep_ms(2);
    return 0;
}
static const MACC_Version r_chain_link_v[] = {{MACC_DEV_NVIDIA, 0, 100, 0, fn_chain_link}};
static const MACC_Region r_chain_link = {{"sched.c", 16, 1, "test"}, "r_chain_link", 1, r_chain_link_v};
static void chains_across(void)
{
    setenv("MACC_DEVICES", "nvidia:0", 1);
    for (int c = 0; c < CHAIN_C; c++)
        chain_y[c][1] = c;
    run_chains_args(&r_chain_link, NULL, 0, CHAIN_C, CHAIN_L, 64, chain_y, NULL);
    cr_assert_eq(atomic_load(&chain_n), CHAIN_C * CHAIN_L);
}

Test(gpu, a_chains_next_link_goes_before_the_other_chains_links)
{
    chains_across();
    for (int i = 0; i < CHAIN_C * CHAIN_L; i++)
        cr_assert_eq(chain_seq[i], i / CHAIN_L, "position %d ran a link of chain %d", i, chain_seq[i]);
}

Test(gpu, macc_chain_order_0_takes_the_chains_in_turn)
{
    setenv("MACC_CHAIN_ORDER", "0", 1);
    chains_across();
    for (int i = 0; i < CHAIN_C * CHAIN_L; i++)
        cr_assert_eq(chain_seq[i], i % CHAIN_C, "position %d ran a link of chain %d", i, chain_seq[i]);
}

/* Submissions made while a helper completes tasks under the runtime lock
 * go through task.c's inbox: the creating thread does not wait, and the
 * helper enters them. They must be entered in their creation order (each
 * link of a chain sees the previous one's write), all of them (every chain
 * complete), and before the creator's taskwait counts its children. The
 * test repeats until the inbox was used, and fails if it never was. */
typedef struct {
    int k;
} inlink_args;
static atomic_int link_errors;
static int fn_inlink(void *args, MACC_TaskEnv *env)
{
    inlink_args *a = args;
    double *y = env->ptrs[0];
    if (y[0] != a->k)
        atomic_fetch_add(&link_errors, 1);
    y[0] = a->k + 1;
    return 0;
}
static const MACC_Version r_inlink_v[] = {{MACC_DEV_NVIDIA, 0, 10, 0, fn_inlink}};
static const MACC_Region r_inlink = {{"task.c", 11, 1, "test"}, "r_inlink", 1, r_inlink_v};
Test(gpu, submissions_left_to_a_completing_helper_are_entered_in_order)
{
    enum { C = 16, L = 64, ROUNDS = 400 }; /* it stops at the first round past the second that used the inbox: a loaded machine may need many */
    static double y[C][8];
    int round = 0;
    for (; round < ROUNDS; round++) {
        memset(y, 0, sizeof y);
        for (int k = 0; k < L; k++) {
            for (int c = 0; c < C; c++) {
                inlink_args a = {k};
                MACC_Map m = {"y", y[c], y[c], sizeof y[c], MACC_MAP_TOFROM};
                MACC_Dep d = {y[c], sizeof y[c], MACC_DEP_INOUT};
                MACC_target(&r_inlink, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
            }
        }
        MACC_taskwait(NULL);
        for (int c = 0; c < C; c++)
            cr_assert_eq(y[c][0], L, "round %d: chain %d ended at %g", round, c, y[c][0]);
        cr_assert_eq(atomic_load(&link_errors), 0, "round %d: a link ran out of order", round);
        if (round >= 2 && __atomic_load_n(&maccrt_rt.inbox_pushes, __ATOMIC_RELAXED) > 0)
            break;
    }
    cr_assert_gt(__atomic_load_n(&maccrt_rt.inbox_pushes, __ATOMIC_RELAXED), 0,
                 "no submission went through the inbox in %d rounds", ROUNDS);
}

/* A GPU task leaves the dependence index in its completer's batch, after its
 * helper pushed it: a task made as soon as its predecessor's kernel ended (the
 * predecessor still in the index, its completion pending) waits for that
 * completion and sees its write; none hangs. */
static atomic_int afterrun_ran;
static int fn_afterrun(void *args, MACC_TaskEnv *env)
{
    fn_inlink(args, env); /* (a link out of order counts in link_errors) */
    atomic_store(&afterrun_ran, ((inlink_args *)args)->k + 1);
    return 0;
}
static const MACC_Version r_afterrun_v[] = {{MACC_DEV_NVIDIA, 0, 10, 0, fn_afterrun}};
static const MACC_Region r_afterrun = {{"task.c", 12, 1, "test"}, "r_afterrun", 1, r_afterrun_v};
Test(gpu, a_task_made_when_its_predecessor_ran_waits_for_its_completion)
{
    enum { L = 300 };
    static double y[8];
    memset(y, 0, sizeof y);
    atomic_store(&afterrun_ran, 0);
    for (int k = 0; k < L; k++) {
        inlink_args a = {k};
        MACC_Map m = {"y", y, y, sizeof y, MACC_MAP_TOFROM};
        MACC_Dep d = {y, sizeof y, MACC_DEP_INOUT};
        MACC_target(&r_afterrun, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        while (atomic_load(&afterrun_ran) < k + 1) /* its kernel has run: the next one is made now */
            maccrt_pause();
    }
    MACC_taskwait(NULL);
    cr_assert_eq(y[0], L, "the chain ended at %g", y[0]);
    cr_assert_eq(atomic_load(&link_errors), 0, "a link ran before its predecessor's write");
}

/* A section copied to both GPUs, then written on one: the other GPU's copy is
 * invalidated and its next reader sees the new values. */
/* (returns the first uses and the writes making copies stale made beside
 * the directory's global part: nvidia:1's, nvidia:0's; and both GPUs'
 * first uses of sections nothing held yet, made beside it) */
static void both_gpus_hold_x(long *first1, long *stale0, long *made0)
{
    enum { N = 512 };
    static double x[N], y[N], z[N], w[N];
    for (int i = 0; i < N; i++)
        x[i] = i % 5;
    sten(x, y, N, 0, N, 0, N, MACC_MAP_FROM, 0); /* x on nvidia:0 */
    sten(x, z, N, 0, N, 0, N, MACC_MAP_FROM, 1); /* and on nvidia:1 */
    sten(y, x, N, 0, N, 0, N, MACC_MAP_FROM, 0); /* x written on nvidia:0 */
    sten(x, w, N, 0, N, 0, N, MACC_MAP_FROM, 1); /* read again on nvidia:1 */
    MACC_taskwait(NULL);
    static double ey[N], ex[N];
    for (int i = 0; i < N; i++)
        ey[i] = ((i + N - 1) % N) % 5 + 2 * (i % 5) + ((i + 1) % N) % 5;
    for (int i = 0; i < N; i++)
        ex[i] = ey[(i + N - 1) % N] + 2 * ey[i] + ey[(i + 1) % N];
    for (int i = 0; i < N; i++) {
        double want = ex[(i + N - 1) % N] + 2 * ex[i] + ex[(i + 1) % N];
        cr_assert_eq(x[i], ex[i], "x[%d] = %g, expected %g", i, x[i], ex[i]);
        cr_assert_eq(w[i], want, "w[%d] = %g, expected %g", i, w[i], want);
    }
    maccrt_dir_info i0, i1;
    maccrt_dir_info_get(maccrt_rt.devices[0], &i0);
    maccrt_dir_info_get(maccrt_rt.devices[1], &i1);
    *first1 = i1.first;
    *stale0 = i0.stale;
    *made0 = i0.made + i1.made;
}

/* x read on both GPUs, written on nvidia:0, read again on nvidia:1: x's
 * first use on nvidia:1 (its record made by nvidia:0's) is made beside the
 * directory's global part, and so is the write that makes nvidia:1's copy
 * stale (cache__first_part, cache__make_stale), and the first uses of x, y,
 * z and w, which nothing held yet (their records made there; x's by
 * whichever GPU came first). */
Test(gpu, a_write_to_a_section_both_gpus_hold_invalidates_the_other)
{
    /* (a use beside the global part tries other devices' parts, and one whose
     * try fails on a loaded machine takes the global part, correctly: up to
     * five rounds, each counted apart; the values are checked in every one) */
    long first1 = 0, stale0 = 0, made0 = 0, f = 0, st = 0, m = 0;
    for (int round = 0; round < 5 && !(first1 >= 1 && stale0 == 1); round++) {
        long pf = f, ps = st, pm = m;
        both_gpus_hold_x(&f, &st, &m);
        first1 = f - pf;
        stale0 = st - ps;
        made0 = m - pm;
    }
    cr_assert_geq(first1, 1, "nvidia:1's first use of x beside the global part");
    cr_assert_eq(stale0, 1, "nvidia:0's write made nvidia:1's copy stale beside it");
    cr_assert_eq(made0, 4, "the first uses of x, y, z and w made their records beside it");
}

Test(gpu, macc_dir_first_part_0_takes_the_global_part_for_them)
{
    setenv("MACC_DIR_FIRST_PART", "0", 1);
    long first1, stale0, made0;
    both_gpus_hold_x(&first1, &stale0, &made0);
    cr_assert_eq(first1, 0);
    cr_assert_eq(stale0, 0);
    cr_assert_eq(made0, 0);
}

Test(gpu, macc_dir_new_part_0_takes_the_global_part_for_new_sections)
{
    setenv("MACC_DIR_NEW_PART", "0", 1);
    long first1, stale0, made0;
    both_gpus_hold_x(&first1, &stale0, &made0);
    cr_assert_geq(first1, 1, "sections another GPU holds: still beside it");
    cr_assert_eq(made0, 0);
}

/* blocks[k] *= f for each of the task's maps k (block k of BS doubles, base
 * x: env->ptrs[k] is x as the device sees it for that map). */
typedef struct {
    int nblocks, bs;
    double f;
} blocks_args;

static int fn_blocks(void *args, MACC_TaskEnv *env)
{
    blocks_args *a = args;
    for (int k = 0; k < a->nblocks; k++) {
        double *x = env->ptrs[k];
        for (int i = k * a->bs; i < (k + 1) * a->bs; i++)
            x[i] *= a->f;
    }
    return 0;
}

static const MACC_Version r_blocks_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_blocks}};
static const MACC_Region r_blocks = {{"gpu.c", 70, 1, "test"}, "r_blocks", 1, r_blocks_v};

/* Plans of many claims (more than a plan scans for them: CACHE__HIX_MIN):
 * a task of 40 maps whose sections all lie in one dirty entry of the other
 * GPU (40 peer copies from it), the taskwait's write-back of those 40
 * entries, and a task mapping the whole array where 40 dirty blocks of the
 * other GPU are (40 write-backs, then one fill): every block arrives once,
 * scaled once. */
Test(gpu, plans_of_many_claims)
{
    enum { NB = 40, BS = 64, N = NB * BS };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    MACC_Dep d = {x, sizeof x, MACC_DEP_INOUT};
    scale_args s0 = {0, N, 2.0, 0, x};
    MACC_Map m0 = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_target(&r_scale_gpu_only, &s0, sizeof s0, 1, &m0, 1, &d, MACC_NOWAIT, 0, 1); /* x dirty on nvidia:0 */
    MACC_Map m[NB];
    for (int k = 0; k < NB; k++)
        m[k] = (MACC_Map){"x", x, x + k * BS, BS * sizeof(double), MACC_MAP_TOFROM};
    blocks_args a = {NB, BS, 3.0};
    MACC_target(&r_blocks, &a, sizeof a, NB, m, 1, &d, MACC_NOWAIT, 1, 1);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_p2p), sizeof x, "every block once from nvidia:0");
    cr_assert_eq(h2d_of(1), 0, "none from the host");
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 6.0 * i, "x[%d] = %g", i, x[i]);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    MACC_target(&r_blocks, &a, sizeof a, NB, m, 1, &d, MACC_NOWAIT, 0, 1); /* 40 dirty blocks on nvidia:0 */
    s0.f = 5.0;
    MACC_target(&r_scale_gpu_only, &s0, sizeof s0, 1, &m0, 1, &d, MACC_NOWAIT, 1, 1); /* all of x on nvidia:1 */
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 90.0 * i, "x[%d] = %g", i, x[i]);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
}

/* A data construct's entry on nvidia:0 is the copy its tasks use, through the
 * same directory lookup as a cached entry: no second allocation and no copy
 * for the tasks; the taskwait's flush leaves it (with the tasks' writes in
 * it) where it is; update from / to act on the dirtied entry; the end of the
 * region writes it back and frees it. */
Test(gpu, a_data_construct_entry_is_the_tasks_copy)
{
    enum { N = 4096, BS = 256 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
    MACC_data_begin(&dloc, 1, &m, 0);
    cr_assert_eq(h2d_of(0), sizeof x);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 1);
    for (int k = 0; k < N / BS; k++)
        scale(&r_scale_gpu_only, x, k * BS, BS, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_gpu[0]), N / BS);
    cr_assert_eq(h2d_of(0), sizeof x, "the tasks copied nothing in");
    cr_assert_eq(d2h_of(0), 0, "nor out, nor did the taskwait");
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 1, "one device copy");
    maccrt_dir_info info;
    maccrt_dir_info_get(maccrt_rt.devices[0], &info);
    cr_assert_eq(info.held, 1, "the flush left the entry");
    cr_assert_eq(info.pinned, 1);
    cr_assert_eq(info.held_dirty, 1, "with the tasks' writes");
    cr_assert_eq(info.cached, 0, "and no cached copy beside it");
    cr_assert_eq(x[7], 7.0, "the host copy is not touched inside the region");
    /* update from a section the tasks wrote */
    MACC_Map uf = {"x", x, x + 100, 10 * sizeof(double), MACC_MAP_FROM};
    MACC_data_update(&dloc, 1, &uf, 0, 0, NULL, 0);
    cr_assert_eq(x[100], 200.0);
    cr_assert_eq(x[109], 218.0);
    cr_assert_eq(x[110], 110.0, "only the section");
    cr_assert_eq(d2h_of(0), 10 * sizeof(double));
    /* update to over bytes a task wrote: the host's value wins */
    x[200] = -1.0;
    MACC_Map ut = {"x", x, x + 200, sizeof(double), MACC_MAP_TO};
    MACC_data_update(&dloc, 1, &ut, 0, 0, NULL, 0);
    scale(&r_scale_gpu_only, x, 200, 2, 3.0, 0, MACC_MAP_TOFROM, 0, 0);
    cr_assert_eq(x[200], -1.0, "not copied back inside the region");
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 1);
    MACC_data_end(&dloc, 1, &m, 0);
    cr_assert_eq(x[200], -3.0);
    cr_assert_eq(x[201], 1206.0);
    cr_assert_eq(x[7], 14.0);
    cr_assert_eq(d2h_of(0), 10 * sizeof(double) + sizeof x);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0, "freed with its last reference");
    maccrt_dir_info_get(maccrt_rt.devices[0], &info);
    cr_assert_eq(info.held + info.cached, 0);
    cr_assert_eq(atomic_load(&env_errors), 0);
}

/* The last reference of an enter data goes: copied back with `from` (the
 * tasks' writes with it) and freed; without `from` (release) dropped. A task
 * still running then keeps its copy until it ends. */
Test(gpu, the_last_reference_writes_back_and_frees)
{
    enum { N = 1024 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = 1.0;
    MACC_Map to = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_Map from = {"x", x, x, sizeof x, MACC_MAP_FROM};
    MACC_Map rel = {"x", x, x, sizeof x, MACC_MAP_ALLOC};
    MACC_data_enter(&dloc, 1, &to, 1, 0, NULL, 0);
    MACC_data_enter(&dloc, 1, &to, 1, 0, NULL, 0);
    scale(&r_scale_gpu_only, x, 0, N, 5.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, MACC_DEVICE_ANY);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 1, "on the GPU that holds x");
    MACC_data_exit(&dloc, 1, &from, 1, 0, NULL, 0);
    cr_assert_eq(x[3], 1.0, "one reference left: nothing copied");
    cr_assert(MACC_is_present(x, sizeof x, 1));
    MACC_data_exit(&dloc, 1, &from, 1, 0, NULL, 0);
    cr_assert_eq(x[3], 5.0, "the last one copies back");
    cr_assert(!MACC_is_present(x, sizeof x, 1));
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    /* release: the device's bytes are dropped */
    MACC_data_enter(&dloc, 1, &to, 1, 0, NULL, 0);
    scale(&r_scale_gpu_only, x, 0, N, 2.0, 0, MACC_MAP_TOFROM, 0, 1);
    MACC_data_exit(&dloc, 1, &rel, 1, 0, NULL, 0);
    cr_assert_eq(x[3], 5.0);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    /* exit data while a task inside still runs: the task's copy lives until
     * it ends, and its write goes through to the host */
    MACC_data_enter(&dloc, 1, &to, 1, 0, NULL, 0);
    scale(&r_scale_gpu_only, x, 0, N, 3.0, 100, MACC_MAP_TOFROM, MACC_NOWAIT, 1);
    sleep_ms(30);
    MACC_data_exit(&dloc, 1, &rel, 1, 0, NULL, 0);
    cr_assert(!MACC_is_present(x, sizeof x, 1));
    MACC_taskwait(NULL);
    cr_assert_eq(x[3], 15.0);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    cr_assert_eq(atomic_load(&env_errors), 0);
}

/* A task map that overlaps a data construct's entry without lying inside it
 * is "partially present". */
Test(gpu, a_task_map_partially_in_a_data_region_fails, .exit_code = 1)
{
    static double x[100];
    MACC_Map m = {"x", x, x, 50 * sizeof(double), MACC_MAP_TOFROM};
    MACC_data_begin(&dloc, 1, &m, 0);
    scale(&r_scale_gpu_only, x, 40, 20, 2.0, 0, MACC_MAP_TOFROM, 0, 0);
}

/* Two GPUs fill their copies at once: the directory holds no lock across a
 * copy (each copy takes 40 ms; one lock would keep one in flight). */
Test(gpu, copies_of_two_gpus_run_at_once)
{
    enum { N = 1 << 16 };
    static double x0[N], x1[N];
    for (int i = 0; i < N; i++)
        x0[i] = x1[i] = i;
    fgpu_copy_ms = 40;
    scale(&r_scale, x0, 0, N, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);
    scale(&r_scale, x1, 0, N, 3.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 1);
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    cr_assert_geq(atomic_load(&fgpu_copies_max), 2, "copies of the two GPUs were serialised");
    cr_assert_eq(x0[7], 14.0);
    cr_assert_eq(x1[7], 21.0);
}

/* Two GPUs reading the same section at about the same time, with
 * MACC_PEER_WAIT=1: the second waits for the first one's fill from the host,
 * which is in flight, and copies from that GPU; the host's bytes are read
 * once. */
Test(gpu, a_fill_in_flight_on_another_gpu_is_copied_from_not_repeated)
{
    enum { N = 1 << 14 }; /* 128 KiB: slow fake copies (40 ms) */
    static double x[N], y0[N], y1[N];
    setenv("MACC_PEER_WAIT", "1", 1); /* (read at the first fill: this test's own process) */
    for (int i = 0; i < N; i++)
        x[i] = i % 13;
    fgpu_copy_ms = 40;
    sten(x, y0, N, 0, N, 0, N, MACC_MAP_FROM, 0);
    for (int i = 0; i < 5000 && atomic_load(&fgpu_copies_now) == 0; i++)
        sleep_ms(1);
    cr_assert_eq(atomic_load(&fgpu_copies_now), 1, "nvidia:0's fill of x is in flight");
    sten(x, y1, N, 0, N, 0, N, MACC_MAP_FROM, 1);
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    cr_assert_eq(h2d_of(0), sizeof x, "nvidia:0 filled x from the host");
    cr_assert_eq(h2d_of(1), 0, "nvidia:1 did not fill x from the host as well");
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_p2p), sizeof x, "but from nvidia:0");
    for (int i = 0; i < N; i++)
        cr_assert(y0[i] == y1[i] && y0[i] == x[(i + N - 1) % N] + 2 * x[i] + x[(i + 1) % N], "y[%d]", i);
}

/* Asynchronous fills: a helper's fill of its task's map is left on its way
 * (the fake GPU's bytes land only when someone orders after its fence, or
 * when the helper runs its task: tests/fake_gpu.h). Tasks of the same GPU
 * that read the entry meanwhile, and another GPU copying from it, order
 * themselves after the fence: without that they read the fake GPU's
 * garbage. The filler's second map (y, slow) keeps it from its version
 * while they come. */
static void fills_left_on_their_way(int async, int same, int other)
{
    enum { N = 1 << 14 }; /* 128 KiB: slow fake copies (40 ms) */
    static double x[N], y[N], r[4][N];
    if (!async)
        setenv("MACC_FILL_ASYNC", "0", 1); /* (read at the first fill: this test's own process) */
    for (int i = 0; i < N; i++)
        x[i] = i % 13, y[i] = 1.0;
    fgpu_copy_ms = 40;
    sten(x, y, N, 0, N, 0, N, MACC_MAP_TOFROM, 0); /* fills x, then y */
    for (int i = 0; i < 5000 && atomic_load(&fgpu_copies_now) == 0; i++)
        sleep_ms(1);
    sleep_ms(60); /* x's fill started and published, y's under way */
    for (int k = 0; k < 4; k++) /* `same` tasks on nvidia:0, `other` on nvidia:1 */
        if (k < same + other)
            sten(x, r[k], N, 0, N, 0, N, MACC_MAP_FROM, k < same ? 0 : 1);
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    for (int i = 0; i < N; i++) {
        double s = x[(i + N - 1) % N] + 2 * x[i] + x[(i + 1) % N];
        cr_assert(y[i] == s, "y[%d] = %g, not %g", i, y[i], s);
        for (int k = 0; k < same + other; k++)
            cr_assert(r[k][i] == s, "task %d's r[%d] = %g, not %g", k, i, r[k][i], s);
    }
    if (async) {
        cr_assert_geq(atomic_load(&fgpu_fills_started), 2, "x and y were filled asynchronously");
        cr_assert_geq(atomic_load(&fake_fences_ordered), 1, "another task or copy ordered after x's fill");
    } else {
        cr_assert_eq(atomic_load(&fgpu_fills_started), 0, "MACC_FILL_ASYNC=0: every fill waited for");
    }
}

Test(gpu, a_fill_left_on_its_way_is_ordered_after_by_its_gpus_other_tasks)
{
    fills_left_on_their_way(1, 3, 0);
}

Test(gpu, a_fill_left_on_its_way_is_ordered_after_by_a_copy_to_another_gpu)
{
    fills_left_on_their_way(1, 0, 1);
}

Test(gpu, macc_fill_async_0_waits_for_every_fill)
{
    fills_left_on_their_way(0, 3, 1);
}

/* A GPU's copy of x that another GPU is copying from (a peer fill, whose
 * source claim is given back under the source device's part alone) is in
 * the way of a data region over it on its own GPU: the region waits for the
 * copy and is woken when its claim is given back. */
Test(gpu, a_data_region_waits_for_a_peer_copy_out_of_a_tile_in_its_way)
{
    enum { N = 1 << 14 }; /* 128 KiB: slow fake copies (40 ms) */
    static double x[2 * N], y0[N], y1[N];
    for (int i = 0; i < 2 * N; i++)
        x[i] = i % 13;
    sten(x, y0, N, 0, N, 0, N, MACC_MAP_FROM, 0); /* x[0:N] cached on nvidia:0 */
    while (__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > 0)
        sleep_ms(1);
    fgpu_copy_ms = 40;
    sten(x, y1, N, 0, N, 0, N, MACC_MAP_FROM, 1); /* nvidia:1 copies it from nvidia:0 */
    for (int i = 0; i < 5000 && atomic_load(&fgpu_copies_now) == 0; i++)
        sleep_ms(1);
    cr_assert_eq(atomic_load(&fgpu_copies_now), 1, "nvidia:1's copy of x is in flight");
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_data_begin(&dloc, 1, &m, 0); /* x[0:2N] on nvidia:0: the cached x[0:N] goes first */
    /* (the peer copy's bytes are counted once it is done, before its source
     * claim is given back; the y1 task's write-back may be in flight by now,
     * so the copies in flight say nothing) */
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_p2p), N * sizeof(double),
                 "the region waited for the copy out of its way");
    MACC_data_end(&dloc, 1, &m, 0);
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_p2p), N * sizeof(double), "x came from nvidia:0");
    for (int i = 0; i < N; i++) {
        double s = x[(i + N - 1) % N] + 2 * x[i] + x[(i + 1) % N];
        cr_assert(y0[i] == s && y1[i] == s, "y[%d]", i);
    }
}

/* A task whose first map's entry another helper of its GPU is filling fills
 * its other map meanwhile and takes the busy one after it (MACC_MAP_BUSY_LAST,
 * the default): the two fills overlap. With MACC_MAP_BUSY_LAST=0 it waits for
 * x's fill before filling y1. */
static int busy_last_overlap(void)
{
    enum { N = 1 << 14 }; /* 128 KiB: slow fake copies */
    static double x[N], y0[N], y1[N];
    for (int i = 0; i < N; i++)
        x[i] = i % 13, y1[i] = 1.0;
    atomic_store(&fgpu_copies_max, 0);
    fgpu_copy_ms = 60;
    sten(x, y0, N, 0, N, 0, N, MACC_MAP_FROM, 0); /* fills x */
    for (int i = 0; i < 5000 && atomic_load(&fgpu_copies_now) == 0; i++)
        sleep_ms(1);
    cr_assert_eq(atomic_load(&fgpu_copies_now), 1, "nvidia:0's fill of x is in flight");
    sten(x, y1, N, 0, N, 0, N, MACC_MAP_TOFROM, 0); /* needs x (busy) and y1 */
    while (__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > 0) /* done, not yet written back */
        sleep_ms(1);
    int most = atomic_load(&fgpu_copies_max);
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    cr_assert_eq(h2d_of(0), 2 * sizeof x, "x and y1 filled once each");
    for (int i = 0; i < N; i++) {
        double s = x[(i + N - 1) % N] + 2 * x[i] + x[(i + 1) % N];
        cr_assert(y0[i] == s && y1[i] == s, "y[%d]", i);
    }
    return most;
}

Test(gpu, a_map_another_helper_fills_is_taken_after_the_tasks_other_maps)
{
    cr_assert_eq(busy_last_overlap(), 2, "y1's fill waited for x's");
}

Test(gpu, macc_map_busy_last_0_takes_the_maps_in_order)
{
    setenv("MACC_MAP_BUSY_LAST", "0", 1); /* (read at the first task: this test's own process) */
    cr_assert_eq(busy_last_overlap(), 1, "y1's fill did not wait for x's");
}

/* The write-backs of a taskwait run on the GPU's own threads at once (one
 * thread copying them one after the other took 90 ms of STREAM's 100 on two
 * H200s): four dirty sections of 40 ms copies each. */
Test(gpu, write_backs_of_a_taskwait_run_at_once)
{
    enum { N = 1 << 15, K = 4 };
    static double x[K * N];
    for (int i = 0; i < K * N; i++)
        x[i] = i;
    for (int k = 0; k < K; k++)
        scale(&r_scale_gpu_only, x, k * N, N, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);
    MACC_taskwait(NULL); /* (fills, one per task: each from a helper) */
    for (int k = 0; k < K; k++)
        scale(&r_scale_gpu_only, x, k * N, N, 3.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);
    while (__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > 0) /* done, not yet flushed */
        sleep_ms(1);
    atomic_store(&fgpu_copies_max, 0);
    fgpu_copy_ms = 40;
    double t0 = maccrt_now();
    MACC_taskwait(NULL); /* the write-backs alone */
    double t = maccrt_now() - t0;
    fgpu_copy_ms = 0;
    cr_assert_geq(atomic_load(&fgpu_copies_max), 2, "the write-backs were made one after the other");
    cr_assert_lt(t, 3 * 0.040, "%.3f s for %d write-backs of 40 ms", t, K);
    for (int i = 0; i < K * N; i++)
        cr_assert_eq(x[i], 6.0 * i, "x[%d] = %g", i, x[i]);
}

/* Eight sections written on nvidia:0 alone, home at a taskwait: nvidia:1
 * copies half of them (over the GPUs' link, then home through its own), so
 * both links work; each section's bytes once. */
static void via_run(int k_tiles, int n)
{
    static double x[8 * 16384];
    cr_assert_leq(k_tiles * n, 8 * 16384);
    for (int i = 0; i < k_tiles * n; i++)
        x[i] = i;
    for (int k = 0; k < k_tiles; k++)
        scale(&r_scale, x, k * n, n, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);
    while (__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > 0) /* done, not yet flushed */
        sleep_ms(1);
    cr_assert_eq(d2h_of(0) + d2h_of(1), 0, "nothing went home before the taskwait");
    fgpu_copy_ms = 20;
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    for (int i = 0; i < k_tiles * n; i++)
        cr_assert_eq(x[i], 2.0 * i, "x[%d] = %g", i, x[i]);
}

Test(gpu, write_backs_of_the_gpu_holding_more_go_through_the_other)
{
    enum { K = 8, N = 16384 }; /* (128 KiB: copies of 20 ms, fgpu_copy_ms) */
    via_run(K, N);
    long via = atomic_load(&fgpu_via_bytes), each = N * (long)sizeof(double);
    cr_assert_eq(h2d_of(1), 0, "nvidia:1 ran nothing");
    /* (a section nvidia:1's helpers did not take is the waiting thread's:
     * refused, then copied from nvidia:0) */
    cr_assert_eq(via + atomic_load(&fgpu_via_refused) * each, K / 2 * each, "%ld bytes through nvidia:1", via);
    cr_assert_geq(via, each, "nvidia:1 copied none");
    cr_assert_eq((long)d2h_of(1), via, "nvidia:1 counts what it copied home");
    cr_assert_eq((long)(d2h_of(0) + d2h_of(1)), K * each, "each section home once");
}

/* Four GPUs, the eight sections on nvidia:0: each of the others takes two,
 * one at a time by the GPU whose link is the least loaded (the loads end
 * 2, 2, 2, 2; a section no helper of its GPU came for goes back to the
 * waiting thread, which copies it from nvidia:0). */
Test(gpu, write_backs_spread_over_every_gpu_that_holds_less)
{
    setenv("MACC_TEST_FAKE_GPUS", "4", 1);
    enum { K = 8, N = 16384 };
    via_run(K, N);
    unsigned long long each = N * sizeof(double), sum = 0;
    int helped = 0;
    for (int g = 1; g < 4; g++) {
        cr_assert_leq(d2h_of(g), 2 * each, "nvidia:%d copied %llu bytes", g, d2h_of(g));
        helped += d2h_of(g) > 0;
        sum += d2h_of(g);
    }
    cr_assert_geq(helped, 2, "%d GPUs helped", helped);
    cr_assert_geq(d2h_of(0), 2 * each);
    cr_assert_eq(sum + d2h_of(0), K * each, "each section home once");
}

Test(gpu, macc_wb_via_0_leaves_each_gpus_write_backs_to_it)
{
    setenv("MACC_WB_VIA", "0", 1);
    via_run(8, 16384);
    cr_assert_eq(atomic_load(&fgpu_via_bytes) + atomic_load(&fgpu_via_refused), 0);
    cr_assert_eq(d2h_of(1), 0);
    cr_assert_eq(d2h_of(0), 8 * 16384 * sizeof(double));
}

/* x written on nvidia:0, then updated on nvidia:1: the second GPU gets it
 * from the first one's copy (device to device), the host copy is neither
 * read for it nor written until the taskwait. */
Test(gpu, gpu_to_gpu_data_never_touches_the_host)
{
    enum { N = 4096 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    for (int dev = 0; dev < 2; dev++) {
        scale_args a = {0, N, dev ? 3.0 : 2.0, 0, x};
        MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TOFROM};
        MACC_Dep d = {x, sizeof x, MACC_DEP_INOUT};
        MACC_target(&r_scale, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, dev, 1);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(h2d_of(0), sizeof x, "nvidia:0 filled from the host");
    cr_assert_eq(h2d_of(1), 0, "nvidia:1 not filled from the host");
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_p2p), sizeof x, "but from nvidia:0");
    cr_assert_eq(d2h_of(0), 0, "nvidia:0's copy never went to the host");
    cr_assert_eq(d2h_of(1), sizeof x, "nvidia:1's went home at the taskwait");
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 6.0 * i, "x[%d] = %g", i, x[i]);
}

/* The residency term: with equal measured speeds everywhere, a task whose
 * input is current on nvidia:1 (a dirty copy) goes there; once the input is
 * home (after a taskwait), the host wins over a GPU that would copy it in. */
static const MACC_Region r_res = {{"sched.c", 2, 1, "test"}, "r_res", 2, r_scale_v};
/* The residency term of every candidate from one look at the directory
 * equals each device's own: a section dirty on nvidia:1 costs nothing
 * there, a peer copy on nvidia:0, and its pull-back on the host; a section
 * cached nowhere costs a copy from the host on each GPU and nothing on the
 * host. */
Test(gpu, residency_terms_of_all_candidates_at_once_match_each_devices)
{
    enum { N = 1 << 15 };
    static double y[N], z[N];
    scale_args a = {0, N, 1.0, 0, y};
    MACC_Map m = {"y", y, y, sizeof y, MACC_MAP_TOFROM};
    MACC_target(&r_scale, &a, sizeof a, 1, &m, 0, NULL, MACC_NOWAIT, 1, 1);
    long dirty = 0;
    for (int i = 0; i < 5000 && !dirty; i++) {
        maccrt_cache_entries(maccrt_rt.devices[1], &dirty);
        if (!dirty)
            sleep_ms(1);
    }
    cr_assert_eq(dirty, 1, "y is dirty on nvidia:1");
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task t;
    memset(&t, 0, sizeof t);
    MACC_Map in[2] = {{"y", y, y, sizeof y, MACC_MAP_TO}, {"z", z, z, sizeof z, MACC_MAP_TO}};
    t.nmaps = 2;
    t.maps = in;
    maccrt_mask all = MACCRT_BIT(0) | MACCRT_BIT(1) | MACCRT_BIT(rt->host->num);
    double v[MACCRT_MAX_DEVICES];
    cr_assert_eq(maccrt_cache_move_times_try(&t, all, v), 0, "the directory is idle");
    for (int d = 0; d < rt->ndevices; d++) {
        double one = maccrt_cache_move_time(&t, rt->devices[d]);
        cr_assert_float_eq(v[d], one, 1e-12, "%s: %g at once, %g alone", rt->devices[d]->name, v[d], one);
    }
    double bw1 = atomic_load(&rt->devices[1]->bw_h2d);
    double z_in = (double)sizeof z / (bw1 > 0 ? bw1 : MACCRT_DEFAULT_BW);
    cr_assert_float_eq(v[1], z_in, 1e-12, "nvidia:1 holds y: only z comes in (%g)", v[1]);
    double bw0 = atomic_load(&rt->devices[0]->bw_h2d);
    cr_assert_gt(v[0], (double)sizeof z / (bw0 > 0 ? bw0 : MACCRT_DEFAULT_BW), "nvidia:0 needs y too");
    cr_assert_gt(v[rt->host->num], 0, "the host pulls y back");
    MACC_taskwait(NULL);
}

/* The residency terms of a map of x[lo:n] on every device, by the
 * directory's section index and by walking every device's tree: equal. */
static void residency_both_ways(double *x, int lo, int n, const char *what)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task t;
    memset(&t, 0, sizeof t);
    MACC_Map m = {"x", x, x + lo, (size_t)n * sizeof(double), MACC_MAP_TO};
    t.nmaps = 1;
    t.maps = &m;
    maccrt_mask all = MACCRT_BIT(0) | MACCRT_BIT(1) | MACCRT_BIT(rt->host->num);
    double by_index[MACCRT_MAX_DEVICES], by_trees[MACCRT_MAX_DEVICES];
    maccrt_cache_index_use(1);
    cr_assert_eq(maccrt_cache_move_times_try(&t, all, by_index), 0, "the directory is idle");
    maccrt_cache_index_use(0);
    cr_assert_eq(maccrt_cache_move_times_try(&t, all, by_trees), 0, "the directory is idle");
    maccrt_cache_index_use(1);
    for (int d = 0; d < rt->ndevices; d++)
        cr_assert_float_eq(by_index[d], by_trees[d], 1e-15, "%s on %s: %g by the index, %g by the trees", what,
                           rt->devices[d]->name, by_index[d], by_trees[d]);
}

static void wait_no_live_task(void)
{
    for (int i = 0; i < 5000 && __atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > 0; i++)
        sleep_ms(1);
    cr_assert_eq(__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED), 0, "the tasks ended");
}

/* The directory's section index (cache.c) answers what walking every
 * device's tree answers: tiles dirty on each GPU and one cached clean, then
 * sections that are tiles, cached nowhere, or span tiles (which the index
 * leaves to the trees). An entry that partly overlaps another device's
 * turns the index off for good; the answers stay the trees'. */
Test(gpu, the_section_index_answers_as_the_trees_do)
{
    enum { T = 4096 };
    static double x[4 * T];
    for (int i = 0; i < 4 * T; i++)
        x[i] = i;
    scale(&r_scale, x, 0, T, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);  /* tile 0 dirty on nvidia:0 */
    scale(&r_scale, x, T, T, 3.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 1);  /* tile 1 dirty on nvidia:1 */
    scale(&r_scale, x, 2 * T, T, 1.0, 0, MACC_MAP_TO, MACC_NOWAIT, 0); /* tile 2 clean on nvidia:0 */
    wait_no_live_task();
    long dirty0 = 0, dirty1 = 0;
    cr_assert_geq(maccrt_cache_entries(maccrt_rt.devices[0], &dirty0), 2, "tiles 0 and 2 cached on nvidia:0");
    cr_assert_eq(maccrt_cache_entries(maccrt_rt.devices[1], &dirty1), 1, "tile 1 cached on nvidia:1");
    cr_assert_eq(dirty0 + dirty1, 2, "tiles 0 and 1 dirty");
    cr_assert(maccrt_cache_index_on(), "sections of one shape: the index is on");
    residency_both_ways(x, 0, T, "tile 0");
    residency_both_ways(x, T, T, "tile 1");
    residency_both_ways(x, 2 * T, T, "tile 2");
    residency_both_ways(x, 3 * T, T, "tile 3 (cached nowhere)");
    residency_both_ways(x, T / 2, T, "half of tile 0 and half of tile 1");
    residency_both_ways(x, 0, 4 * T, "the whole array");
    /* a section across tiles 2 and 3 on nvidia:1, where tile 2 is cached on nvidia:0 */
    scale(&r_scale, x, 2 * T + T / 2, T, 1.0, 0, MACC_MAP_TO, MACC_NOWAIT, 1);
    wait_no_live_task();
    cr_assert(!maccrt_cache_index_on(), "a partial overlap between devices turns the index off");
    residency_both_ways(x, 2 * T, T, "tile 2, index off");
    residency_both_ways(x, 2 * T + T / 2, T, "the overlapping section, index off");
    MACC_taskwait(NULL);
    for (int i = 0; i < 4 * T; i++)
        cr_assert_eq(x[i], i * (i < T ? 2.0 : i < 2 * T ? 3.0 : 1.0), "x[%d] = %g", i, x[i]);
}

/* The residency term's look through the index takes one holder's part at a
 * time (cache__holds_by_parts): with nvidia:0's part of the directory held
 * by another thread, a look at a section only nvidia:1 holds still answers
 * (nothing to move there, a copy to nvidia:0); MACC_DIR_LOOK_PARTS=0 (every
 * part at once) does not. Returns the try's result. */
static int look_beside_a_held_part(void)
{
    enum { N = 4096 };
    static double y[N];
    for (int i = 0; i < N; i++)
        y[i] = i;
    scale(&r_scale, y, 0, N, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 1); /* y dirty on nvidia:1 */
    wait_no_live_task();
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task t;
    memset(&t, 0, sizeof t);
    MACC_Map in = {"y", y, y, sizeof y, MACC_MAP_TO};
    t.nmaps = 1;
    t.maps = &in;
    maccrt_mask all = MACCRT_BIT(0) | MACCRT_BIT(1) | MACCRT_BIT(rt->host->num);
    double v[MACCRT_MAX_DEVICES];
    pthread_mutex_lock(&rt->devices[0]->dlock);
    int r = maccrt_cache_move_times_try(&t, all, v);
    pthread_mutex_unlock(&rt->devices[0]->dlock);
    if (r == 0) {
        cr_assert_eq(v[1], 0.0, "nvidia:1 holds y: nothing moves");
        cr_assert_gt(v[0], 0.0, "nvidia:0 needs y");
        cr_assert_gt(v[rt->host->num], 0.0, "the host pulls y back");
    }
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++)
        cr_assert_eq(y[i], 2.0 * i, "y[%d] = %g", i, y[i]);
    return r;
}

Test(gpu, the_residency_terms_look_takes_one_holders_part_at_a_time)
{
    cr_assert_eq(look_beside_a_held_part(), 0, "answered with nvidia:0's part busy");
}

Test(gpu, macc_dir_look_parts_0_takes_every_part_at_once)
{
    setenv("MACC_DIR_LOOK_PARTS", "0", 1);
    cr_assert_eq(look_beside_a_held_part(), -1, "every part at once: nvidia:0's is busy");
}

Test(gpu, the_residency_term_chooses_the_device_holding_the_data)
{
    enum { N = 1 << 17 }; /* 1 MiB: 0.1 ms at the default 10 GB/s */
    static double y[N];
    scale_args a = {0, N, 1.0, 0, y};
    MACC_Map m = {"y", y, y, sizeof y, MACC_MAP_TOFROM};
    MACC_target(&r_scale, &a, sizeof a, 1, &m, 0, NULL, MACC_NOWAIT, 1, 1);
    long dirty = 0;
    for (int i = 0; i < 5000 && !dirty; i++) {
        maccrt_cache_entries(maccrt_rt.devices[1], &dirty);
        if (!dirty)
            sleep_ms(1);
    }
    cr_assert_eq(dirty, 1, "y is dirty on nvidia:1");
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task t;
    memset(&t, 0, sizeof t);
    MACC_Map in = {"y", y, y, sizeof y, MACC_MAP_TO};
    t.region = &r_res;
    t.deferred = 1;
    t.nmaps = 1;
    t.maps = &in;
    t.cand = MACCRT_BIT(0) | MACCRT_BIT(1) | MACCRT_BIT(rt->host->num);
    int backlog[MACCRT_MAX_DEVICES] = {0};
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_res);
    ri->runs[MACC_DEV_NVIDIA] = ri->runs[MACC_DEV_HOST] = 1;
    ri->ema_s[MACC_DEV_NVIDIA] = ri->ema_s[MACC_DEV_HOST] = 0.001;
    maccrt_device *held = rt->policy->choose(&t, t.cand, t.cand, backlog);
    pthread_mutex_unlock(&rt->lock);
    MACC_taskwait(NULL);
    pthread_mutex_lock(&rt->lock);
    t.cand = MACCRT_BIT(0) | MACCRT_BIT(rt->host->num);
    maccrt_device *home = rt->policy->choose(&t, t.cand, t.cand, backlog);
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(held, rt->devices[1], "the data's GPU, not %s", held->name);
    cr_assert_eq(home, rt->host, "the host holds it now, not %s", home->name);
}

/* A region whose kernels fill the GPU four times over (env->threads, the
 * launch's size, against d->wave) runs two tasks at once on a GPU by default,
 * not four: they gain little from sharing its multiprocessors, and a chain
 * that has half a GPU ends sooner. Smaller kernels keep four. */
static atomic_int fill_now, fill_max;
static int fn_fill(void *args, MACC_TaskEnv *env)
{
    env->threads = *(const long long *)args;
    int n = atomic_fetch_add(&fill_now, 1) + 1;
    int m = atomic_load(&fill_max);
    while (n > m && !atomic_compare_exchange_weak(&fill_max, &m, n))
        ;
    sleep_ms(20);
    atomic_fetch_sub(&fill_now, 1);
    return 0;
}
static const MACC_Version r_fill_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_fill}};
static const MACC_Region r_fill = {{"gpu.c", 90, 1, "test"}, "r_fill", 1, r_fill_v};
static const MACC_Region r_fill_small = {{"gpu.c", 95, 1, "test"}, "r_fill_small", 1, r_fill_v};

static int fill_at_once(const MACC_Region *r, long long threads)
{
    MACC_target(r, &threads, sizeof threads, 0, NULL, 0, NULL, 0, 0, 1); /* learns its size */
    atomic_store(&fill_max, 0);
    for (int i = 0; i < 8; i++)
        MACC_target(r, &threads, sizeof threads, 0, NULL, 0, NULL, MACC_NOWAIT, 0, 1);
    MACC_taskwait(NULL);
    return atomic_load(&fill_max);
}

Test(gpu, a_region_whose_kernels_fill_the_gpu_runs_two_at_once)
{
    cr_assert_eq(fill_at_once(&r_fill, 4096), 2, "4096 threads on a GPU of 1024: two at once");
    cr_assert_eq(fill_at_once(&r_fill_small, 4095), 4, "4095 threads: four at once (25 tokens)");
    cr_assert_leq(maccrt_rt.devices[0]->tokens_peak_used, maccrt_rt.devices[0]->tokens_total);
}

Test(gpu, macc_gpu_fills_0_keeps_four_at_once)
{
    setenv("MACC_GPU_FILLS", "0", 1);
    cr_assert_eq(fill_at_once(&r_fill, 1L << 20), 4);
}

Test(gpu, macc_gpu_fills_2_runs_kernels_of_twice_the_gpu_two_at_once)
{
    setenv("MACC_GPU_FILLS", "2", 1);
    cr_assert_eq(fill_at_once(&r_fill, 2048), 2);
    cr_assert_eq(fill_at_once(&r_fill_small, 2047), 4);
}

/* The first fake GPU alone (MACC_DEVICES=nvidia), for tests of its placement state. */
static maccrt_device *lane_gpu(void)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices();
    return maccrt_rt.devices[0];
}

/* Every task released: d's tokens all free, none placed, its peak within them. */
static void lane_gpu_all_back(const maccrt_device *d)
{
    cr_assert_eq(d->tokens_free, d->tokens_total);
    cr_assert_eq(d->nplaced, 0);
    cr_assert_eq(d->nahead0, 0);
    cr_assert_leq(d->tokens_peak_used, d->tokens_total);
}

/* A lane's slot passes at the release (sched.c, maccrt_sched_release_device):
 * task a runs on nvidia:0 with its 25 tokens and b was launched behind it
 * (a->pafter, no tokens yet). a's release hands its tokens to b in the same
 * hold of the device's lock: the device never shows them free meanwhile,
 * and b's later turn (its last predecessor's completion) takes none more.
 * Before, the release gave them back and the completion took them again: a
 * walk between placed a waiting chain's head there, five tasks of 25 tokens
 * on a GPU of 100 (peak 125 on an H200 in 2 of 6 STREAM runs). */
static const MACC_Version r_lane_v[] = {{MACC_DEV_NVIDIA, 0, 25, 0, fn_mark}};
static const MACC_Region r_lane = {{"sched.c", 15, 1, "test"}, "r_lane", 1, r_lane_v};
Test(gpu, a_task_launched_ahead_takes_its_predecessors_tokens_at_its_release)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *d = lane_gpu();
    maccrt_task a = {.region = &r_lane, .deferred = 1, .cand = MACCRT_BIT(0), .id = 1, .rank = 1};
    maccrt_task b = {.region = &r_lane, .deferred = 1, .cand = MACCRT_BIT(0), .id = 2, .rank = 1};
    maccrt_task c = {.region = &r_lane, .deferred = 1, .cand = MACCRT_BIT(0), .id = 3, .rank = 2};
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info_get(&r_lane)->runs[MACC_DEV_NVIDIA] = 1;
    cr_assert(maccrt_sched_place_ahead(&a, d));
    maccrt_sched_ahead_tokens(&a); /* (a runs: the lane's first) */
    cr_assert(maccrt_sched_place_ahead(&b, d));
    cr_assert_eq(b.occ, 1.0f, "b placed ahead: a runs, b not yet");
    cr_assert(maccrt_sched_place_ahead(&c, d));
    maccrt_sched_ahead_tokens(&c); /* (c runs: another lane's first) */
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(d->tokens_free, d->tokens_total - 50);
    a.pafter = &b;
    maccrt_sched_release_device(&a, 1);
    cr_assert_eq(b.tokens, 25, "b has %d tokens", b.tokens);
    cr_assert_eq(d->tokens_free, d->tokens_total - 50, "%d tokens free", d->tokens_free);
    cr_assert_eq(b.occ, 2.0f, "b's start's occupancy: b and c run (%g)", b.occ);
    pthread_mutex_lock(&rt->lock);
    maccrt_sched_ahead_tokens(&b); /* (a's completion) */
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(d->tokens_free, d->tokens_total - 50, "%d tokens free", d->tokens_free);
    maccrt_sched_release_device(&b, 1);
    maccrt_sched_release_device(&c, 1);
    lane_gpu_all_back(d);
}

/* A lane's next task whose region's rule grew meanwhile (its kernels found
 * to fill the GPU: 50 tokens by default instead of 25) takes at the handover
 * no more than its predecessor's tokens and the free ones: four chains that
 * began at 25 tokens, each handing to a successor that now asks 50, took
 * 200 of the GPU's 100 for the rest of their links. */
static const MACC_Version r_grow_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_mark}};
static const MACC_Region r_grow = {{"sched.c", 16, 1, "test"}, "r_grow", 1, r_grow_v};
Test(gpu, a_task_launched_ahead_takes_no_more_tokens_than_the_device_has_when_its_rule_grew)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *d = lane_gpu();
    maccrt_task a[4], b[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (maccrt_task){.region = &r_grow, .deferred = 1, .cand = MACCRT_BIT(0), .id = 1 + 2 * i, .rank = 1 + i};
        b[i] = (maccrt_task){.region = &r_grow, .deferred = 1, .cand = MACCRT_BIT(0), .id = 2 + 2 * i, .rank = 1 + i};
    }
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info_get(&r_grow)->runs[MACC_DEV_NVIDIA] = 1;
    for (int i = 0; i < 4; i++) {
        cr_assert(maccrt_sched_place_ahead(&a[i], d));
        maccrt_sched_ahead_tokens(&a[i]); /* (four lanes' first tasks, 25 tokens each) */
        cr_assert_eq(a[i].tokens, 25);
    }
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(d->tokens_free, 0);
    maccrt_sched_note_threads(&r_grow, d, 4L * d->wave); /* (a launch of four waves: 50 from now on) */
    pthread_mutex_lock(&rt->lock);
    for (int i = 0; i < 4; i++)
        cr_assert(maccrt_sched_place_ahead(&b[i], d));
    pthread_mutex_unlock(&rt->lock);
    for (int i = 0; i < 4; i++) {
        a[i].pafter = &b[i];
        maccrt_sched_release_device(&a[i], 1);
        cr_assert_eq(b[i].tokens, 25, "b[%d] has %d tokens", i, b[i].tokens);
        cr_assert_eq(d->tokens_free, 0, "%d tokens free", d->tokens_free);
    }
    cr_assert_leq(d->tokens_peak_used, d->tokens_total, "peak %d of %d", d->tokens_peak_used, d->tokens_total);
    /* with free tokens, the grown rule is met: b[0]'s release frees 25, b[1]'s successor takes 50 */
    maccrt_task c = {.region = &r_grow, .deferred = 1, .cand = MACCRT_BIT(0), .id = 20, .rank = 2};
    maccrt_sched_release_device(&b[0], 1);
    cr_assert_eq(d->tokens_free, 25);
    pthread_mutex_lock(&rt->lock);
    cr_assert(maccrt_sched_place_ahead(&c, d));
    pthread_mutex_unlock(&rt->lock);
    b[1].pafter = &c;
    maccrt_sched_release_device(&b[1], 1);
    cr_assert_eq(c.tokens, 50, "c has %d tokens", c.tokens);
    cr_assert_eq(d->tokens_free, 0);
    maccrt_sched_release_device(&b[2], 1);
    maccrt_sched_release_device(&b[3], 1);
    maccrt_sched_release_device(&c, 1);
    lane_gpu_all_back(d);
}

/* Data too small to weigh: with a measured run of 1 ms, a task of 512 bytes
 * (each byte filled and pulled back at the default 10 GB/s: 0.1 us, under 1%
 * of the run) is placed without a look at the directory, one of 1 MiB
 * (0.2 ms) with one. The small task still goes where its predecessors wrote
 * its data (the producers' term). */
static const MACC_Region r_tiny = {{"sched.c", 4, 1, "test"}, "r_tiny", 2, r_scale_v};
Test(gpu, the_residency_of_data_too_small_to_weigh_is_not_read)
{
    enum { N = 1 << 17 };
    static double big[N], small[64];
    maccrt_runtime *rt = &maccrt_rt;
    /* something cached, so that the directory is asked at all */
    scale_args a = {0, N, 1.0, 0, big};
    MACC_Map m = {"big", big, big, sizeof big, MACC_MAP_TOFROM};
    MACC_target(&r_scale, &a, sizeof a, 1, &m, 0, NULL, 0, 1, 1);
    MACC_Map in = {"small", small, small, sizeof small, MACC_MAP_TO};
    maccrt_task t = {.region = &r_tiny, .deferred = 1, .nmaps = 1, .maps = &in,
                     .cand = MACCRT_BIT(0) | MACCRT_BIT(1),
                     .nprod = 1, .prod_dev = {1}, .prod_bytes = {1 << 20}}; /* written on nvidia:1 */
    int backlog[MACCRT_MAX_DEVICES] = {0};
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_tiny);
    ri->runs[MACC_DEV_NVIDIA] = 1;
    ri->ema_s[MACC_DEV_NVIDIA] = 0.001;
    long r0 = rt->policy_terms;
    maccrt_device *d = rt->policy->choose(&t, t.cand, t.cand, backlog);
    long small_terms = rt->policy_terms - r0;
    in = (MACC_Map){"big", big, big, sizeof big, MACC_MAP_TO};
    t.nprod = 0;
    r0 = rt->policy_terms;
    (void)rt->policy->choose(&t, t.cand, t.cand, backlog);
    long big_terms = rt->policy_terms - r0;
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(small_terms, 0, "%ld residency terms read for 512 bytes", small_terms);
    cr_assert_gt(big_terms, 0, "none read for 1 MiB");
    cr_assert_eq(d, rt->devices[1], "the producer's GPU, not %s", d->name);
}

/* The link term: 4 independent tasks, each reading its own 1 MiB block
 * from the host, of a region of resources(1) (either GPU could run all 4 at
 * once: 4 helpers each), with nvidia:1's measured host link a little faster.
 * Without the term each task saw only its own copy and every one chose
 * nvidia:1 (its 4 copies queued on one link, the other GPU idle: STREAM's 16
 * blocks on two H200s with 32 helpers each); with it the copies already
 * placed on a link count, and the blocks split. */
static const MACC_Version r_link_v[] = {{MACC_DEV_NVIDIA, 0, 1, 0, fn_scale_gpu}};
static const MACC_Region r_link = {{"sched.c", 3, 1, "test"}, "r_link", 1, r_link_v};
Test(gpu, copies_queued_on_a_link_spread_tasks_over_the_gpus)
{
    enum { NB = 4, N = 1 << 17 };
    static double y[NB * N];
    maccrt_runtime *rt = &maccrt_rt;
    macc_num_devices();
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_link);
    ri->runs[MACC_DEV_NVIDIA] = 1;
    ri->ema_s[MACC_DEV_NVIDIA] = 0.001;
    atomic_store(&rt->devices[0]->bw_h2d, 10e9);
    atomic_store(&rt->devices[1]->bw_h2d, 12e9);
    pthread_mutex_unlock(&rt->lock);
    /* the copies still queued while the 4 are placed (20 ms was not always
     * so under ASan on a loaded 2-core machine: the submitting thread,
     * preempted that long, found the first copies made and both links free,
     * and the faster one took three blocks) */
    fgpu_copy_ms = 100;
    for (int k = 0; k < NB; k++) {
        scale_args a = {k * N, N, 2.0, 0, y};
        MACC_Map m = {"y", y, y + (size_t)k * N, N * sizeof(double), MACC_MAP_TO};
        MACC_target(&r_link, &a, sizeof a, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    MACC_taskwait(NULL);
    fgpu_copy_ms = 0;
    int g0 = atomic_load(&ran_gpu[0]), g1 = atomic_load(&ran_gpu[1]);
    cr_assert_eq(g0 + g1, NB);
    cr_assert_eq(g0, NB / 2, "nvidia:0 took %d of %d blocks, nvidia:1 %d", g0, NB, g1);
    cr_assert_eq(atomic_load(&rt->devices[0]->link_ns) + atomic_load(&rt->devices[1]->link_ns), 0,
                 "every task's copy time left its link");
}

/* ---- the scheduler with devices of known speeds ------------------------------------------------
 *
 * A region whose GPU version takes GPU_MS and whose host version takes
 * host_ms (sleeps: the speeds do not depend on this machine's load). One
 * fake GPU (4 tasks at a time with the default 25 tokens), the host (2 at a
 * time with 50). */
enum { GPU_MS = 4 };
static int speed_host_ms;
static atomic_int speed_now[2], speed_max[2]; /* running at once: GPU, host */
static void speed_run(int which, int ms)
{
    int n = atomic_fetch_add(&speed_now[which], 1) + 1;
    int m = atomic_load(&speed_max[which]);
    while (n > m && !atomic_compare_exchange_weak(&speed_max[which], &m, n))
        ;
    sleep_ms(ms);
    atomic_fetch_sub(&speed_now[which], 1);
}
static int fn_speed_gpu(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_fetch_add(&ran_gpu[0], 1);
    speed_run(0, GPU_MS);
    return 0;
}
static int fn_speed_host(void *args, MACC_TaskEnv *env)
{
    (void)args;
    atomic_fetch_add(&ran_host, 1);
    /* speed_host_ms on the threads its tokens give, shorter on more (an
     * exploring instance gets every host thread, and its time is learned
     * scaled back to its tokens' threads) */
    const maccrt_task *t = maccrt_thread_self()->current;
    int base = t ? maccrt_host_nthreads(t->tokens) : env->nthreads;
    speed_run(1, env->nthreads > base ? speed_host_ms * base / env->nthreads : speed_host_ms);
    return 0;
}
static const MACC_Version r_speed_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_speed_gpu},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_speed_host},
};
static const MACC_Region r_speed = {{"sched.c", 1, 1, "test"}, "r_speed", 2, r_speed_v};

/* A warm-up batch (the history), then a measured one: tasks per device and
 * the measured batch's time. */
static double speed_batches(int ntasks, int *on_host)
{
    for (int k = 0; k < ntasks; k++)
        MACC_target(&r_speed, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_taskwait(NULL);
    int h0 = atomic_load(&ran_host);
    double t0 = maccrt_now();
    for (int k = 0; k < ntasks; k++)
        MACC_target(&r_speed, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_taskwait(NULL);
    *on_host = atomic_load(&ran_host) - h0;
    return maccrt_now() - t0;
}

/* Up to three rounds of speed_batches, until one passes ok: a round's waves
 * of GPU_MS stretch when make check's other tests load the machine (a 4 ms
 * sleep woken late makes the learned GPU time, and so the host's turn,
 * twice what it is), so the timing tests assert on the best round. */
static double speed_rounds(int ntasks, int *on_host, int (*ok)(double s, int on_host))
{
    double s = 0;
    for (int round = 0; round < 3; round++) {
        s = speed_batches(ntasks, on_host);
        if (ok(s, *on_host))
            break;
    }
    return s;
}

static void speed_env(void)
{
    gpu_env();
    setenv("MACC_DEVICES", "nvidia:0,host", 1);
}

TestSuite(sched, .init = speed_env, .timeout = 60);

/* The host is 20x slower: a task it took would end long after the GPU
 * finished the rest, so it takes none (the tail rule). 40 tasks on the GPU
 * alone take 10 waves of GPU_MS. */
#define SLOW_MAX_S (10 * GPU_MS * 1e-3 * 1.8)
static int slow_ok(double s, int on_host)
{
    return on_host == 0 && s < SLOW_MAX_S;
}
Test(sched, a_slow_device_takes_no_task_it_would_finish_last)
{
    speed_host_ms = 20 * GPU_MS;
    int on_host;
    double s = speed_rounds(40, &on_host, slow_ok);
    cr_assert_eq(on_host, 0, "the host took %d tasks", on_host);
    cr_assert_lt(s, SLOW_MAX_S, "%.3f s", s);
    cr_assert_str_eq(maccrt_rt.policy->name, "eft");
}

/* The same with MACC_SCHEDULER=greedy: the host takes tasks whenever it has
 * tokens, and the batch lasts at least one slow host task. */
Test(sched, greedy_shows_the_tail_effect)
{
    setenv("MACC_SCHEDULER", "greedy", 1);
    speed_host_ms = 20 * GPU_MS;
    int on_host;
    double s = speed_batches(40, &on_host);
    cr_assert_gt(on_host, 0);
    cr_assert_geq(s, 20 * GPU_MS * 1e-3, "%.3f s", s);
}

/* A host 3x slower than one GPU task adds throughput: it takes some tasks,
 * and the batch ends no later than the GPU alone would. */
#define SLOWER_MAX_S (20 * GPU_MS * 1e-3 * 1.3)
static int slower_ok(double s, int on_host)
{
    return on_host > 0 && on_host < 40 && s < SLOWER_MAX_S;
}
Test(sched, a_slower_device_still_takes_its_share)
{
    speed_host_ms = 3 * GPU_MS;
    int on_host;
    double s = speed_rounds(80, &on_host, slower_ok);
    cr_assert_gt(on_host, 0);
    cr_assert_lt(on_host, 40);
    cr_assert_lt(s, SLOWER_MAX_S, "%.3f s (the GPU alone: %.3f s)", s, 20 * GPU_MS * 1e-3);
}

/* Token limits: 4 GPU tasks (25 tokens each) and 2 host tasks (50) at once,
 * never more (the fake GPU has 4 helpers, the host more than 2 threads), and
 * every token back at the end. */
Test(sched, token_limits_hold)
{
    setenv("MACC_HOST_THREADS", "8", 1);
    speed_host_ms = GPU_MS;
    int on_host;
    speed_batches(60, &on_host);
    cr_assert_eq(atomic_load(&speed_max[0]), 4, "GPU tasks at once: %d", atomic_load(&speed_max[0]));
    cr_assert_eq(atomic_load(&speed_max[1]), 2, "host tasks at once: %d", atomic_load(&speed_max[1]));
    cr_assert_eq(maccrt_rt.devices[0]->tokens_free, 100);
    cr_assert_eq(maccrt_rt.host->tokens_free, 100);
    cr_assert_eq(maccrt_rt.host->tokens_peak_used, 100);
}

/* resources(2) on the GPU lets 50 of its tasks be placed at once, but the
 * GPU runs 4 at a time (its helpers): the estimate counts the queue, so the
 * 3x slower host still takes its share. */
static const MACC_Version r_speed_small_v[] = {
    {MACC_DEV_NVIDIA, 0, 2, 0, fn_speed_gpu},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_speed_host},
};
static const MACC_Region r_speed_small = {{"sched.c", 2, 1, "test"}, "r_speed_small", 2,
                                          r_speed_small_v};

Test(sched, the_gpu_queue_counts_not_only_its_tokens)
{
    speed_host_ms = 3 * GPU_MS;
    for (int b = 0; b < 2; b++) {
        for (int k = 0; k < 80; k++)
            MACC_target(&r_speed_small, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        MACC_taskwait(NULL);
    }
    cr_assert_gt(atomic_load(&ran_host), 4, "the host took %d of 160", atomic_load(&ran_host));
    cr_assert_eq(atomic_load(&speed_max[0]), 4);
}

/* Chains of tasks updating big arrays in place (depend inout) on the GPU
 * and the host at once: whichever device each task lands on, the cache and
 * the dependences give the right sums. */
enum { CHAINS = 6, CHAIN_LEN = 8, CHAIN_N = 1 << 22 }; /* 32 MiB per chain */
typedef struct {
    int c, k;
} chain_args;
static int chain_where[CHAINS][CHAIN_LEN];
static int fn_chain(void *args, MACC_TaskEnv *env)
{
    chain_args *a = args;
    double *x = env->ptrs[0];
    chain_where[a->c][a->k] = env->device_kind == MACC_DEV_HOST ? 2 : 1;
    for (int i = 0; i < CHAIN_N; i += 4096)
        x[i] += 1;
    sleep_ms(2);
    return 0;
}
static const MACC_Version r_chain_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_chain},
    {MACC_DEV_HOST, 0, 25, 0, fn_chain},
};
static const MACC_Region r_chain = {{"sched.c", 3, 1, "test"}, "r_chain", 2, r_chain_v};

Test(sched, chains_of_tasks_on_both_devices)
{
    double *x[CHAINS];
    for (int c = 0; c < CHAINS; c++)
        x[c] = calloc(CHAIN_N, sizeof(double));
    /* the host measured first (a task with depend clauses explores no
     * unmeasured host beside a GPU): the chains may then go anywhere */
    static double probe[CHAIN_N];
    chain_args pa = {0, 0};
    MACC_Map pm = {"probe", probe, probe, sizeof probe, MACC_MAP_TOFROM};
    MACC_target(&r_chain, &pa, sizeof pa, 1, &pm, 0, NULL, 0, macc_num_devices() - 1, 1);
    for (int k = 0; k < CHAIN_LEN; k++)
        for (int c = 0; c < CHAINS; c++) {
            chain_args a = {c, k};
            MACC_Map m = {"x", x[c], x[c], CHAIN_N * sizeof(double), MACC_MAP_TOFROM};
            MACC_Dep d = {x[c], CHAIN_N * sizeof(double), MACC_DEP_INOUT};
            MACC_target(&r_chain, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        }
    MACC_taskwait(NULL);
    int moves = 0, gpu = 0, host = 0;
    for (int c = 0; c < CHAINS; c++) {
        for (int k = 0; k < CHAIN_LEN; k++) {
            gpu += chain_where[c][k] == 1;
            host += chain_where[c][k] == 2;
            moves += k > 0 && chain_where[c][k] != chain_where[c][k - 1];
        }
        for (int i = 0; i < CHAIN_N; i += 4096)
            cr_assert_eq(x[c][i], CHAIN_LEN);
        free(x[c]);
    }
    cr_assert_eq(gpu + host, CHAINS * CHAIN_LEN, "%d moves (gpu %d, host %d)", moves, gpu, host);
}

/* Tasks with depend clauses of a region the host has not run, beside a GPU:
 * the host leaves their candidates (it would never be chosen), so the
 * dispatch asks no policy for them (one GPU: one candidate). With the host
 * kept, each walk weighed it for every waiting task. */
Test(sched, dependent_tasks_do_not_weigh_an_unexplored_host)
{
    enum { N = 64 };
    static double y[8][N];
    for (int k = 0; k < 48; k++) {
        scale_args a = {0, N, 1.0, 0, y[k % 8]};
        MACC_Map m = {"y", y[k % 8], y[k % 8], sizeof y[0], MACC_MAP_TOFROM};
        MACC_Dep d = {y[k % 8], sizeof y[0], MACC_DEP_INOUT};
        MACC_target(&r_scale, &a, sizeof a, 1, &m, 1, &d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    }
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&ran_host), 0, "the host ran %d", atomic_load(&ran_host));
    cr_assert_eq(maccrt_rt.policy_calls, 0, "%ld policy calls", (long)maccrt_rt.policy_calls);
}

/* Tasks without depend clauses keep the host a candidate, but while it has
 * not run their region and the GPU is free, the policy explores it for
 * none of them: its answer is the GPU without a residency term weighed (one
 * task in flight at a time, so the GPU always fits). */
Test(sched, a_free_gpu_beside_an_unexplored_host_needs_no_terms)
{
    enum { N = 64 };
    static double y[N];
    macc_num_devices(); /* (the runtime started) */
    pthread_mutex_lock(&maccrt_rt.lock);
    long c0 = maccrt_rt.policy_calls, r0 = maccrt_rt.policy_terms;
    pthread_mutex_unlock(&maccrt_rt.lock);
    for (int k = 0; k < 24; k++) {
        scale_args a = {0, N, 1.0, 0, y};
        MACC_Map m = {"y", y, y, sizeof y, MACC_MAP_TOFROM};
        MACC_target(&r_scale, &a, sizeof a, 1, &m, 0, NULL, 0, MACC_DEVICE_ANY, 1);
    }
    pthread_mutex_lock(&maccrt_rt.lock);
    long calls = maccrt_rt.policy_calls - c0, terms = maccrt_rt.policy_terms - r0;
    pthread_mutex_unlock(&maccrt_rt.lock);
    cr_assert_eq(atomic_load(&ran_host), 0, "the host ran %d", atomic_load(&ran_host));
    cr_assert_gt(calls, 0, "the host stayed a candidate: the policy was asked");
    cr_assert_eq(terms, 0, "%ld residency terms for %ld policy calls", terms, calls);
}

/* The transfer part of the estimate: a task whose predecessor wrote 1 GB of
 * its input on nvidia:0 goes there (moving it to the host would take 0.1 s
 * at the default 10 GB/s), and one whose input was written on the host stays
 * on the host (the GPU would copy it in first); the same task with no such
 * data goes to the unmeasured GPU first (exploration). */
Test(sched, the_estimate_counts_data_written_elsewhere)
{
    macc_num_devices(); /* initialise */
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task t;
    memset(&t, 0, sizeof t);
    t.region = &r_speed;
    t.deferred = 1;
    t.cand = MACCRT_BIT(0) | MACCRT_BIT(rt->host->num);
    int backlog[MACCRT_MAX_DEVICES] = {0};
    maccrt_mask fit = t.cand;
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_speed);
    ri->runs[MACC_DEV_NVIDIA] = ri->runs[MACC_DEV_HOST] = 1; /* kinds measured; devices not: */
    ri->ema_s[MACC_DEV_NVIDIA] = 0.010; /* the GPU: 10 ms */
    ri->ema_s[MACC_DEV_HOST] = 0.005;   /* the host: 5 ms */
    maccrt_device *none = rt->policy->choose(&t, t.cand, fit, backlog);
    t.nprod = 1;
    t.prod_dev[0] = 0;
    t.prod_bytes[0] = (size_t)1 << 30;
    maccrt_device *on_gpu = rt->policy->choose(&t, t.cand, fit, backlog);
    t.prod_dev[0] = (short)rt->host->num;
    t.prod_bytes[0] = (size_t)1 << 26; /* 64 MiB: 6.7 ms to copy in */
    ri->ema_s[MACC_DEV_NVIDIA] = 0.001; /* a GPU 5x faster still loses */
    maccrt_device *on_host = rt->policy->choose(&t, t.cand, fit, backlog);
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(none, rt->host, "no data elsewhere: the faster device");
    cr_assert_eq(on_gpu, rt->devices[0], "1 GiB written on nvidia:0 keeps it there");
    cr_assert_eq(on_host, rt->host, "64 MiB written on the host keeps it there");
}

/* Exploration never holds a chain: with the GPU measured (10 ms) and the
 * host not, a task with successors stays on the GPU; one that heads no
 * chain explores the host, but only when the GPU cannot start it now (an
 * exploring instance is not bounded: one that the free GPU would have run
 * makes the whole batch wait for the slow host). A task with depend clauses
 * never explores the host beside a GPU: its successors may come later. */
static const MACC_Region r_explore = {{"sched.c", 3, 1, "test"}, "r_explore", 2, r_speed_v};
Test(sched, exploration_does_not_delay_a_measured_chain)
{
    macc_num_devices(); /* initialise */
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task t;
    memset(&t, 0, sizeof t);
    t.region = &r_explore;
    t.deferred = 1;
    t.cand = MACCRT_BIT(0) | MACCRT_BIT(rt->host->num);
    int backlog[MACCRT_MAX_DEVICES] = {0};
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_explore);
    ri->runs[MACC_DEV_NVIDIA] = 1;
    ri->ema_s[MACC_DEV_NVIDIA] = 0.010;
    t.nsuccs = 1;
    maccrt_device *chain = rt->policy->choose(&t, t.cand, t.cand, backlog);
    t.nsuccs = 0;
    maccrt_device *leaf_free = rt->policy->choose(&t, t.cand, t.cand, backlog);
    maccrt_device *leaf = rt->policy->choose(&t, t.cand, MACCRT_BIT(rt->host->num), backlog);
    MACC_Dep dep = {&t, 8, MACC_DEP_INOUT};
    t.ndeps = 1;
    t.deps = &dep;
    maccrt_device *dependent = rt->policy->choose(&t, t.cand, MACCRT_BIT(rt->host->num), backlog);
    ri->runs[MACC_DEV_NVIDIA] = 0; /* nothing measured yet: the same */
    maccrt_device *first = rt->policy->choose(&t, t.cand, MACCRT_BIT(rt->host->num), backlog);
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(dependent, rt->devices[0], "a task with depend clauses (successors may follow) does not explore");
    cr_assert_eq(first, rt->devices[0], "nor before the GPU is measured");
    cr_assert_eq(chain, rt->devices[0], "a chain's task stays on the measured GPU");
    cr_assert_eq(leaf_free, rt->devices[0], "a task the free GPU can start does not explore the host");
    cr_assert_eq(leaf, rt->host, "a task heading no chain, the GPU busy, explores the host");
}

/* The host's exploring instance in a shared run (the GPU measured) runs
 * alone on the host: it gets every host thread (8 here, where its 50
 * tokens give 4), and its time is learned scaled to 4 threads; the host's
 * later instances get 4. */
static atomic_int explore_n, explore_threads_seen[64];
static int fn_threads_host(void *args, MACC_TaskEnv *env)
{
    (void)args;
    int i = atomic_fetch_add(&explore_n, 1);
    if (i < 64)
        atomic_store(&explore_threads_seen[i], env->nthreads);
    sleep_ms(3 * GPU_MS);
    return 0;
}
static const MACC_Version r_threads_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_speed_gpu},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_threads_host},
};
static const MACC_Region r_threads = {{"sched.c", 4, 1, "test"}, "r_threads", 2, r_threads_v};

/* 60 tasks of r_threads (MACC_HOST_THREADS=8): the host explored with its
 * first instance on all 8 threads, the later ones got their tokens' 4; the
 * number of host instances */
static int explore_60_tasks(void)
{
    for (int k = 0; k < 60; k++)
        MACC_target(&r_threads, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    MACC_taskwait(NULL);
    int n = atomic_load(&explore_n);
    cr_assert_geq(n, 1, "the host explored");
    cr_assert_eq(atomic_load(&explore_threads_seen[0]), 8, "exploring with %d threads",
                 atomic_load(&explore_threads_seen[0]));
    for (int i = 1; i < n && i < 64; i++)
        cr_assert_eq(atomic_load(&explore_threads_seen[i]), 4, "instance %d: %d threads", i,
                     atomic_load(&explore_threads_seen[i]));
    return n;
}
Test(sched, the_exploring_host_instance_gets_every_host_thread)
{
    setenv("MACC_HOST_THREADS", "8", 1);
    setenv("MACC_SHARE_MIN", "0", 1);
    macc_num_devices(); /* initialise */
    pthread_mutex_lock(&maccrt_rt.lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_threads);
    ri->runs[MACC_DEV_NVIDIA] = 1; /* the GPU measured: 4 ms */
    ri->ema_s[MACC_DEV_NVIDIA] = GPU_MS * 1e-3;
    pthread_mutex_unlock(&maccrt_rt.lock);
    int n = explore_60_tasks();
    if (n == 1) {
        pthread_mutex_lock(&maccrt_rt.lock);
        double learned = ri->ema_s[MACC_DEV_HOST];
        pthread_mutex_unlock(&maccrt_rt.lock);
        cr_assert_gt(learned, 1.5 * 3 * GPU_MS * 1e-3, "learned %.4f s (ran 0.012 s on 8 threads)", learned);
    }
}

/* The same at the start of a run, before the GPU is measured: the host
 * beside a GPU explores with one instance of every thread (it had two of
 * half the threads each, holding two tasks for twice as long). */
Test(sched, the_host_explores_with_one_instance_before_the_gpu_is_measured)
{
    setenv("MACC_HOST_THREADS", "8", 1);
    setenv("MACC_SHARE_MIN", "0", 1);
    explore_60_tasks();
}

/* The share rule: a host 12x slower than one GPU task, with half the GPU's
 * slots, would add about 4% of the throughput; with MACC_SHARE_MIN=0.2 (a
 * margin that machine load cannot cross) it takes no task after its first
 * measurement, even where the GPU's backlog would let it end one earlier.
 * With MACC_SHARE_MIN=0 it does take some (the rule is what keeps it out). */
Test(sched, a_device_adding_under_share_min_takes_nothing)
{
    setenv("MACC_SHARE_MIN", "0.2", 1);
    speed_host_ms = 12 * GPU_MS;
    int on_host;
    speed_batches(400, &on_host); /* the host's first instances explore */
    speed_batches(400, &on_host);
    cr_assert_eq(on_host, 0, "the host took %d", on_host);
}

/* The same shut-out host, always free: a dispatch walk (one per task
 * creation and completion) asks the share rule once for the region and lets
 * the tasks whose only free candidate is shut out wait for the GPU without
 * the policy's estimates. Before, every walk went on to 64 waiting tasks,
 * each with an eft decision (residency look-ups under the runtime lock):
 * tens of thousands of calls for 400 tasks, slower than the GPU ran. */
Test(sched, a_shut_out_device_does_not_make_walks_long)
{
    setenv("MACC_SHARE_MIN", "0.2", 1);
    speed_host_ms = 12 * GPU_MS;
    int on_host;
    speed_batches(400, &on_host); /* measured both */
    pthread_mutex_lock(&maccrt_rt.lock);
    long c0 = maccrt_rt.policy_calls;
    pthread_mutex_unlock(&maccrt_rt.lock);
    speed_batches(400, &on_host);
    pthread_mutex_lock(&maccrt_rt.lock);
    long calls = maccrt_rt.policy_calls - c0;
    pthread_mutex_unlock(&maccrt_rt.lock);
    cr_assert_eq(on_host, 0, "the host took %d", on_host);
    cr_assert_lt(calls, 4 * 800, "%ld policy calls for 800 tasks", calls);
}

/* The same with two GPUs open: a task whose free candidates (the host) are
 * all shut out waits for its open ones without asking the policy (the walk
 * asked eft for 64 waiting tasks at every completion when more than one
 * candidate was open). */
Test(sched, a_shut_out_device_does_not_make_walks_long_with_two_gpus)
{
    setenv("MACC_DEVICES", "nvidia,host", 1);
    setenv("MACC_SHARE_MIN", "0.2", 1);
    speed_host_ms = 12 * GPU_MS;
    int on_host;
    speed_batches(400, &on_host); /* measured all three */
    pthread_mutex_lock(&maccrt_rt.lock);
    long c0 = maccrt_rt.policy_calls;
    pthread_mutex_unlock(&maccrt_rt.lock);
    speed_batches(400, &on_host);
    pthread_mutex_lock(&maccrt_rt.lock);
    long calls = maccrt_rt.policy_calls - c0;
    pthread_mutex_unlock(&maccrt_rt.lock);
    cr_assert_eq(maccrt_rt.ngpus, 2);
    cr_assert_eq(on_host, 0, "the host took %d", on_host);
    cr_assert_lt(calls, 4 * 800, "%ld policy calls for 800 tasks", calls);
}

Test(sched, share_min_zero_lets_it_take_tasks)
{
    setenv("MACC_SHARE_MIN", "0", 1);
    speed_host_ms = 12 * GPU_MS;
    int on_host;
    speed_batches(400, &on_host);
    cr_assert_gt(on_host, 0);
}

/* ---- managed memory on the fake GPU ------------------------------------------------------------
 *
 * MACC_malloc memory is present on the GPU at the same address: tasks' maps and
 * data directives on it copy nothing; the clauses become prefetches (to the
 * GPU on entry / update to, back on exit with copy-out / update from). */
Test(gpu, managed_memory_is_present_and_directives_are_hints)
{
    enum { N = 4096, BS = 256 };
    setenv("MACC_MANAGED_MARGIN", "16M", 1); /* the fake GPU has 64 MiB free */
    double *x = MACC_malloc(N * sizeof(double));
    cr_assert_not_null(x);
    cr_assert(maccrt_managed_on_gpu());
    for (int i = 0; i < N; i++)
        x[i] = i;
    cr_assert(MACC_is_present(x, N * sizeof(double), 0), "present without any directive");
    MACC_Map whole = {"x", x, x, N * sizeof(double), MACC_MAP_TOFROM};
    MACC_data_enter(&dloc, 1, &whole, 0, 0, NULL, 0);
    cr_assert_eq(atomic_load(&fgpu_prefetch_to_dev), 1, "enter data copyin: a prefetch");
    for (int k = 0; k < N / BS; k++)
        scale(&r_scale_gpu_only, x, k * BS, BS, 2.0, 0, MACC_MAP_TOFROM, MACC_NOWAIT, 0);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&fgpu_prefetch_to_dev), 1, "the tasks' data went there already");
    MACC_Map upd = {"x", x, x, N * sizeof(double), MACC_MAP_FROM};
    MACC_data_update(&dloc, 1, &upd, 0, 0, NULL, 0);
    cr_assert_eq(atomic_load(&fgpu_prefetch_to_host), 1, "update host: a prefetch back");
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 2.0 * i);
    scale(&r_scale_gpu_only, x, 0, BS, 0.5, 0, MACC_MAP_TOFROM, 0, 0);
    scale(&r_scale_gpu_only, x, 0, BS, 2.0, 0, MACC_MAP_TOFROM, 0, 0);
    cr_assert_eq(atomic_load(&fgpu_prefetch_to_dev), 2, "after the trip back, one prefetch again");
    MACC_data_exit(&dloc, 1, &whole, 0, 0, NULL, 0);
    cr_assert_eq(atomic_load(&fgpu_prefetch_to_host), 2, "exit data copyout: a prefetch back");
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 2.0 * i);
    cr_assert_eq(h2d_of(0) + d2h_of(0), 0, "no copies: %llu bytes", h2d_of(0) + d2h_of(0));
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0, "no device copies either");
    /* fn_scale_gpu counts a GPU pointer equal to the host's as an "error":
     * here every task must have got the same address */
    cr_assert_eq(atomic_load(&env_errors), N / BS + 2, "the kernels got the host address");
    MACC_free(x);
}

/* The cap follows the GPU's free memory (64 MiB here) minus the margin: a
 * request past it fails like malloc, and the GPU is still usable after. */
Test(gpu, managed_memory_never_exceeds_the_gpus_free_memory)
{
    setenv("MACC_MANAGED_MARGIN", "16M", 1);
    void *big = MACC_malloc((size_t)100 << 20);
    cr_assert_null(big, "100 MiB with 48 MiB allowed");
    double *ok = MACC_malloc((size_t)8 << 20);
    cr_assert_not_null(ok);
    maccrt_managed_info i;
    maccrt_managed_stats(&i);
    cr_assert_eq(i.cap, (size_t)48 << 20);
    cr_assert_gt(i.cap_refusals, 0);
    enum { N = 1024 };
    for (int k = 0; k < N; k++)
        ok[k] = k;
    scale(&r_scale_gpu_only, ok, 0, N, 3.0, 0, MACC_MAP_TOFROM, 0, 0);
    cr_assert_eq(ok[100], 300.0);
    MACC_free(ok);
}

/* Managed data only read by tasks on two devices gets read-mostly advice
 * (once); a task that writes it withdraws the advice. */
Test(gpu, data_read_on_several_devices_is_advised_read_mostly)
{
    enum { N = 4096 };
    setenv("MACC_MANAGED_MARGIN", "16M", 1);
    double *x = MACC_malloc(N * sizeof(double)), *y = MACC_malloc(N * sizeof(double));
    for (int i = 0; i < N; i++)
        x[i] = i;
    for (int d = 0; d < 2; d++) /* x read on nvidia:0, then on nvidia:1 */
        for (int k = 0; k < 4; k++)
            sten(x, y, N, k * 1024, 1024, 0, N, MACC_MAP_FROM, d);
    MACC_taskwait(NULL);
    cr_assert_eq(atomic_load(&fgpu_advise_set), 1, "x advised once");
    cr_assert_eq(atomic_load(&fgpu_advise_unset), 0);
    scale(&r_scale_gpu_only, x, 0, N, 2.0, 0, MACC_MAP_TOFROM, 0, 0); /* x written */
    cr_assert_eq(atomic_load(&fgpu_advise_unset), 1, "the write withdraws it");
    for (int i = 0; i < N; i++) {
        int l = (i + N - 1) % N, r = (i + 1) % N;
        cr_assert_eq(y[i], (double)l + 2.0 * i + r);
        cr_assert_eq(x[i], 2.0 * i);
    }
    MACC_free(x);
    MACC_free(y);
}

/* Per-device history: two GPUs of one kind with different measured times
 * for a region; the estimate of each is its own (a device not yet measured
 * would use its kind's), so the faster one is chosen even though the kind's
 * average is the same for both. */
Test(sched, gpus_of_one_kind_are_estimated_apart)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices();
    maccrt_runtime *rt = &maccrt_rt;
    cr_assert_eq(rt->ngpus, 2);
    maccrt_task t;
    memset(&t, 0, sizeof t);
    t.region = &r_speed;
    t.deferred = 1;
    t.cand = MACCRT_BIT(0) | MACCRT_BIT(1);
    int backlog[MACCRT_MAX_DEVICES] = {0};
    pthread_mutex_lock(&rt->lock);
    maccrt_region_info *ri = maccrt_region_info_get(&r_speed);
    ri->runs[MACC_DEV_NVIDIA] = 20;
    ri->ema_s[MACC_DEV_NVIDIA] = 0.011; /* the kind's average */
    ri->druns[0] = ri->druns[1] = 10;
    ri->dema_s[0] = 0.020; /* nvidia:0 is the slow one */
    ri->dema_s[1] = 0.002;
    maccrt_device *d = rt->policy->choose(&t, t.cand, t.cand, backlog);
    /* and with a backlog of 8 on nvidia:1 (two waves: 4 ms + 2 ms), it still ends first */
    backlog[1] = 8;
    maccrt_device *d2 = rt->policy->choose(&t, t.cand, t.cand, backlog);
    /* 48 waiting there (11 waves: 22 ms + 2 ms): nvidia:0 (20 ms) ends first */
    backlog[1] = 48;
    maccrt_device *d3 = rt->policy->choose(&t, t.cand, t.cand, backlog);
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(d, rt->devices[1], "the faster GPU by its own history");
    cr_assert_eq(d2, rt->devices[1]);
    cr_assert_eq(d3, rt->devices[0]);
}

/* One slow sample does not keep a GPU idle: nvidia:0's first run of a region
 * takes 60 ms, every other run 2 ms. Waves of 40 tasks end in 20 ms on
 * nvidia:1 alone, so by its own history nvidia:0 (60 ms) would take none of
 * them; idle, with its sample older than a few of its kind's runs, it is
 * estimated by its kind's and takes tasks again (its next sample: 2 ms). */
static atomic_int stale_first, stale_ran[2];
static int fn_stale(void *args, MACC_TaskEnv *env)
{
    (void)args;
    int g = env->device_index == 0 ? 0 : 1;
    atomic_fetch_add(&stale_ran[g], 1);
    sleep_ms(g == 0 && atomic_exchange(&stale_first, 1) == 0 ? 60 : 2);
    return 0;
}
static const MACC_Version r_stale_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_stale}};
static const MACC_Region r_stale = {{"sched.c", 5, 1, "test"}, "r_stale", 1, r_stale_v};

Test(sched, one_slow_sample_does_not_keep_a_gpu_idle)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    cr_assert_eq(macc_num_devices(), 3);
    cr_assert_eq(maccrt_rt.ngpus, 2);
    for (int k = 0; k < 8; k++) /* both GPUs explored; nvidia:0's first run is the slow one */
        MACC_target(&r_stale, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, 0, 1);
    MACC_taskwait(NULL);
    for (int k = 0; k < 8; k++)
        MACC_target(&r_stale, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, 1, 1);
    MACC_taskwait(NULL);
    int before = atomic_load(&stale_ran[0]);
    for (int w = 0; w < 8; w++) {
        for (int k = 0; k < 40; k++)
            MACC_target(&r_stale, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        MACC_taskwait(NULL);
    }
    int on0 = atomic_load(&stale_ran[0]) - before;
    cr_assert_geq(on0, 320 / 5, "nvidia:0 took %d of 320 tasks", on0);
    cr_log_info("nvidia:0 took %d of 320 tasks", on0);
}

/* Two GPUs full (4 tasks each with the default 25 tokens, held by a gate):
 * a task created then fits nowhere, and reserving its candidates reserves
 * every device a ready task could use, so the walk stops at the queue's
 * front without asking the policy (before: one eft decision per submission,
 * residency look-ups included, under the runtime lock). Once the gate opens,
 * each completion places one task: about one decision per task. */
static atomic_int full_gate, full_running;
static int fn_full(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    atomic_fetch_add(&full_running, 1);
    wait_at_least(&full_gate, 1, 10.0);
    return 0;
}
static const MACC_Version r_full_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_full}};
static const MACC_Region r_full = {{"sched.c", 4, 1, "test"}, "r_full", 1, r_full_v};
Test(sched, submissions_while_the_gpus_are_full_ask_no_policy)
{
    enum { N = 200 };
    setenv("MACC_DEVICES", "nvidia", 1);
    macc_num_devices();
    maccrt_runtime *rt = &maccrt_rt;
    cr_assert_eq(rt->ngpus, 2);
    for (int k = 0; k < 8; k++) /* fill both GPUs */
        MACC_target(&r_full, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    /* full means the eight running: a deferred submission that finds the
     * runtime's lock taken goes to an inbox, placed by the lock's next
     * holder, and a placed task waits for its GPU's helper; on a loaded
     * machine (make check runs two tests at once) both lag */
    cr_assert(wait_at_least(&full_running, 8, 10.0), "the eight filling tasks did not start");
    long c0;
    int free0, free1;
    pthread_mutex_lock(&rt->lock);
    c0 = rt->policy_calls;
    free0 = rt->devices[0]->tokens_free;
    free1 = rt->devices[1]->tokens_free;
    pthread_mutex_unlock(&rt->lock);
    for (int k = 0; k < N; k++)
        MACC_target(&r_full, NULL, 0, 0, NULL, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
    pthread_mutex_lock(&rt->lock);
    long while_full = rt->policy_calls - c0;
    pthread_mutex_unlock(&rt->lock);
    atomic_store(&full_gate, 1);
    MACC_taskwait(NULL);
    pthread_mutex_lock(&rt->lock);
    long total = rt->policy_calls - c0;
    pthread_mutex_unlock(&rt->lock);
    cr_assert_eq(free0, 0, "nvidia:0 full");
    cr_assert_eq(free1, 0, "nvidia:1 full");
    cr_assert_eq(while_full, 0, "%ld policy calls for %d submissions while full", while_full, N);
    /* Once the gate opens, each completion's walk may also ask for the tasks
     * that then choose to wait for the other GPU (the tail rule), when the
     * two fake GPUs' measured times differ, as they do under a sanitizer on a
     * loaded machine (1114 calls seen for 200 tasks): a bound, not a count.
     * A walk that asked for every queued task would make about N * N / 2. */
    cr_assert_lt(total, 10 * N, "%ld policy calls for %d tasks", total, N);
}

/* ---- declare target variables on the fake GPUs ---------------------------------------------- */

static double fsym_get(const fsym *s, int gpu, int i)
{
    double v;
    memcpy(&v, s->copy[gpu] + i * sizeof v, sizeof v);
    return v;
}

static void fsym_fill(fsym *s, double v)
{
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 32; i++)
            memcpy(s->copy[g] + i * sizeof v, &v, sizeof v);
}

/* declare target to(g): registered before the runtime starts (as the host
 * file's constructor does); each GPU has its own copy, present for the whole
 * run; updates copy, task maps use the copy without copying (infinite
 * reference count), only `always` copies; nothing is allocated or freed. */
Test(gpu, declare_target_to_has_a_present_copy_on_every_gpu)
{
    static double g[8];
    static fsym gs;
    for (int i = 0; i < 8; i++)
        g[i] = i;
    fsym_fill(&gs, 7.0); /* the device file's initialiser */
    MACC_DeclareTarget v = {"g", g, sizeof g, 0};
    const void *syms[] = {&gs};
    MACC_declare_target(&dloc, 1, &v, syms);
    cr_assert(MACC_is_present(g, sizeof g, 0), "the runtime starts: g is present on nvidia:0");
    cr_assert(MACC_is_present(g + 2, 8, 1));
    cr_assert(!MACC_is_present(g, sizeof g + 8, 0), "a larger range is not");
    cr_assert_eq(fsym_get(&gs, 0, 3), 7.0, "the device copy keeps its initialiser until an update");
    cr_assert_eq(atomic_load(&maccrt_rt.devices[0]->bytes_h2d), 0);

    MACC_Map to = {"g", g, g, sizeof g, MACC_MAP_TO};
    MACC_data_update(&dloc, 1, &to, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert_eq(fsym_get(&gs, 0, 3), 3.0, "update to: the default device's copy");
    cr_assert_eq(fsym_get(&gs, 1, 3), 7.0, "the other GPU's copy is its own");

    /* a task on nvidia:1 mapping g tofrom: it gets nvidia:1's copy, nothing moves */
    scale(&r_scale_gpu_only, g, 0, 8, 2.0, 0, MACC_MAP_TOFROM, 0, 1);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 1);
    cr_assert_eq(atomic_load(&env_errors), 0);
    cr_assert_eq(fsym_get(&gs, 1, 3), 14.0);
    cr_assert_eq(g[3], 3.0, "no copy back: g is always present");
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_h2d), 0);
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_d2h), 0);
    MACC_Map from = {"g", g, g + 2, 2 * sizeof(double), MACC_MAP_FROM};
    MACC_data_update(&dloc, 1, &from, 1, 0, NULL, 0);
    cr_assert_eq(g[3], 14.0, "update from: a section of nvidia:1's copy");
    cr_assert_eq(g[4], 4.0);

    /* data constructs: enter/exit (even delete) change nothing; always copies */
    MACC_Map all = {"g", g, g, sizeof g, MACC_MAP_TOFROM | MACC_MAP_DELETE};
    MACC_data_enter(&dloc, 1, &all, 0, 0, NULL, 0);
    MACC_data_exit(&dloc, 1, &all, 0, 0, NULL, 0);
    cr_assert(MACC_is_present(g, sizeof g, 0));
    cr_assert_eq(fsym_get(&gs, 0, 3), 3.0);
    MACC_Map always = {"g", g, g, sizeof g, MACC_MAP_TOFROM | MACC_MAP_ALWAYS};
    g[0] = 100.0;
    MACC_data_begin(&dloc, 1, &always, 0);
    cr_assert_eq(fsym_get(&gs, 0, 0), 100.0, "always to");
    memcpy(gs.copy[0] + sizeof(double), &(double){-1.0}, sizeof(double));
    MACC_data_end(&dloc, 1, &always, 0);
    cr_assert_eq(g[1], -1.0, "always from");
    /* a task's map(always, tofrom: g) copies both ways too */
    g[2] = 5.0;
    scale(&r_scale_gpu_only, g, 0, 8, 2.0, 0, MACC_MAP_TOFROM | MACC_MAP_ALWAYS, 0, 1);
    cr_assert_eq(fsym_get(&gs, 1, 2), 10.0, "always to, then the task");
    cr_assert_eq(g[2], 10.0, "always from: the task's copy back");
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0, "the copy is the device variable: nothing allocated");
    long sref, dref;
    maccrt_map_counts(maccrt_rt.devices[0], g, &sref, &dref);
    cr_assert_eq(sref, 0);
    cr_assert_eq(dref, 0);
}

/* declare target link(l): the device copy is the device variable, but l is
 * present only while mapped, and maps copy in and out as for any data. */
Test(gpu, declare_target_link_is_present_only_while_mapped)
{
    static double l[8];
    static fsym ls;
    for (int i = 0; i < 8; i++)
        l[i] = i;
    fsym_fill(&ls, 7.0);
    MACC_DeclareTarget v = {"l", l, sizeof l, MACC_DT_LINK};
    const void *syms[] = {&ls};
    MACC_declare_target(&dloc, 1, &v, syms);
    cr_assert(!MACC_is_present(l, sizeof l, 0));
    MACC_Map to = {"l", l, l, sizeof l, MACC_MAP_TO};
    MACC_data_update(&dloc, 1, &to, 0, 0, NULL, 0);
    cr_assert_eq(fsym_get(&ls, 0, 3), 7.0, "not mapped: update does nothing");
    MACC_data_enter(&dloc, 1, &to, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(MACC_is_present(l, sizeof l, 0));
    cr_assert(!MACC_is_present(l, sizeof l, 1));
    cr_assert_eq(fsym_get(&ls, 0, 3), 3.0, "enter data copies into the device variable");
    /* on nvidia:0, present: the task uses the copy */
    scale(&r_scale_gpu_only, l, 0, 8, 2.0, 0, MACC_MAP_TOFROM, 0, 0);
    cr_assert_eq(fsym_get(&ls, 0, 3), 6.0);
    cr_assert_eq(l[3], 3.0);
    /* on nvidia:1, absent: mapped for the task, in and out of nvidia:1's variable */
    scale(&r_scale_gpu_only, l, 0, 8, 3.0, 0, MACC_MAP_TOFROM, 0, 1);
    cr_assert_eq(fsym_get(&ls, 1, 3), 9.0);
    cr_assert_eq(l[3], 9.0);
    cr_assert(!MACC_is_present(l, sizeof l, 1));
    cr_assert_eq(atomic_load(&env_errors), 0);
    /* exit data from: copied back, absent again, the variable stays */
    MACC_Map from = {"l", l, l, sizeof l, MACC_MAP_FROM};
    MACC_data_exit(&dloc, 1, &from, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert_eq(l[3], 6.0);
    cr_assert(!MACC_is_present(l, sizeof l, 0));
    MACC_data_exit(&dloc, 1, &from, MACC_DEVICE_DEFAULT, 0, NULL, 0); /* absent: nothing */
    cr_assert_eq(l[3], 6.0);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
    maccrt_dir_info info;
    maccrt_dir_info_get(maccrt_rt.devices[0], &info);
    cr_assert_eq(info.held, 1, "the entry stays for the next map");
}

/* map(present:) of a link variable that is not mapped: absent, an error. */
Test(gpu, declare_target_link_absent_is_not_present, .exit_code = 1)
{
    static double l[8];
    static fsym ls;
    MACC_DeclareTarget v = {"l", l, sizeof l, MACC_DT_LINK};
    const void *syms[] = {&ls};
    MACC_declare_target(&dloc, 1, &v, syms);
    MACC_Map m = {"l", l, l, sizeof l, MACC_MAP_TO | MACC_MAP_PRESENT};
    MACC_data_begin(&dloc, 1, &m, 0);
}

/* Registered after the start (a library loaded later): at once. MACC_DT_INIT:
 * the device copy starts as the host's bytes. The same variable registered
 * again (a second file with its own device copy): the first stays. A missing
 * symbol: a warning, no entry. */
Test(gpu, declare_target_after_the_start_twice_and_without_symbol)
{
    static double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    static fsym as, as2;
    cr_assert_eq(macc_num_devices(), 3);
    MACC_DeclareTarget v = {"a", a, sizeof a, MACC_DT_INIT};
    const void *syms[] = {&as};
    MACC_declare_target(&dloc, 1, &v, syms);
    cr_assert(MACC_is_present(a, sizeof a, 0));
    cr_assert_eq(fsym_get(&as, 0, 2), 3.0, "initialised from the host");
    cr_assert_eq(fsym_get(&as, 1, 2), 3.0);
    const void *syms2[] = {&as2};
    MACC_declare_target(&dloc, 1, &v, syms2);
    a[2] = 30.0;
    MACC_Map to = {"a", a, a, sizeof a, MACC_MAP_TO};
    MACC_data_update(&dloc, 1, &to, 0, 0, NULL, 0);
    cr_assert_eq(fsym_get(&as, 0, 2), 30.0, "the first registration's copy");
    cr_assert_eq(fsym_get(&as2, 0, 2), 0.0);
    MACC_DeclareTarget w = {"b", b, sizeof b, 0};
    const void *nosym[] = {NULL};
    MACC_declare_target(&dloc, 1, &w, nosym);
    cr_assert(!MACC_is_present(b, sizeof b, 0));
}

/* Without GPUs the variable is the host's: registration is harmless. */
Test(rt, declare_target_host_only)
{
    static double h[4] = {1, 2, 3, 4};
    static fsym hs;
    MACC_DeclareTarget v = {"h", h, sizeof h, 0};
    const void *syms[] = {&hs};
    MACC_declare_target(&dloc, 1, &v, syms);
    cr_assert_eq(macc_num_devices(), 1);
    MACC_Map to = {"h", h, h, sizeof h, MACC_MAP_TO};
    MACC_data_update(&dloc, 1, &to, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert_eq(fsym_get(&hs, 0, 0), 0.0);
    cr_assert_eq(h[0], 1.0);
}

/* ---- OpenMP's device API (omp.c) ---------------------------------------------------------------
 *
 * The test program links libmaccrt.a before libgomp (as the driver does), so
 * these calls reach the runtime's definitions. */

Test(rt, omp_device_queries_host_only)
{
    cr_assert_eq(omp_get_num_devices(), 0);
    cr_assert_eq(omp_get_initial_device(), 0);
    cr_assert_eq(omp_get_initial_device(), macc_num_devices() - 1, "the host is the last device");
    cr_assert_eq(omp_get_default_device(), 0);
    cr_assert_eq(omp_get_device_num(), 0);
    cr_assert_eq(omp_is_initial_device(), 1);
    omp_set_default_device(3);
    cr_assert_eq(omp_get_default_device(), 3);
    /* a default that names no device: regions run on the host */
    atomic_store(&seq_n, 0);
    args_t a = {7, 0};
    MACC_target(&r_record, &a, sizeof a, 0, NULL, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
    cr_assert_eq(atomic_load(&seq_n), 1);
    cr_assert_eq(macc_device_tasks(0), 1);
    omp_set_default_device(-1); /* omp_initial_device */
    cr_assert_eq(omp_get_default_device(), omp_get_initial_device());
}

static void child_invalid_default_device(void)
{
    omp_set_default_device(-4); /* omp_invalid_device */
    if (omp_get_default_device() != -4)
        exit(3);
    MACC_target(&r_record, &(args_t){1, 0}, sizeof(args_t), 0, NULL, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
}

Test(rt, invalid_default_device_is_an_error)
{
    char buf[4096];
    cr_assert_eq(run_child(child_invalid_default_device, buf, sizeof buf), 1);
    cr_assert(strstr(buf, "device number is negative"), "got: %s", buf);
}

Test(rt, omp_default_device_from_the_environment)
{
    setenv("OMP_DEFAULT_DEVICE", "initial", 1);
    cr_assert_eq(omp_get_default_device(), omp_get_initial_device());
}

Test(rt, omp_target_memory_on_the_host)
{
    int h = omp_get_initial_device();
    cr_assert_null(omp_target_alloc(16, 5), "no device 5");
    cr_assert_null(omp_target_alloc(16, -1));
    cr_assert_null(omp_target_alloc(0, h));
    int *p = omp_target_alloc(100 * sizeof(int), h);
    cr_assert_not_null(p);
    int a[100];
    for (int i = 0; i < 100; i++)
        a[i] = i;
    cr_assert_eq(omp_target_memcpy(p, a, 50 * sizeof(int), 10 * sizeof(int), 20 * sizeof(int), h, h), 0);
    cr_assert_eq(p[10], 20);
    cr_assert_eq(p[59], 69);
    cr_assert_eq(omp_target_memcpy(p, a, 4, 0, 0, h, 9), EINVAL);
    cr_assert_eq(omp_target_memcpy(p, a, 0, 0, 0, h, h), 0);
    cr_assert(omp_target_is_present(a, h), "everything is present on the host device");
    cr_assert(!omp_target_is_present(a, 4));
    cr_assert(omp_target_is_accessible(a, sizeof a, h));
    cr_assert_eq(omp_get_mapped_ptr(a, h), (void *)a);
    cr_assert_null(omp_get_mapped_ptr(a, 2));
    cr_assert_neq(omp_target_associate_ptr(a, p, sizeof a, 0, h), 0, "nothing to associate on the host");
    cr_assert_neq(omp_target_disassociate_ptr(a, h), 0);
    omp_target_free(p, h);
    omp_target_free(a, h); /* not omp_target_alloc's: ignored */
    omp_target_free(NULL, h);
    cr_assert_eq(MACC_device_addr(a, MACC_DEVICE_DEFAULT), (void *)a);
}

Test(rt, omp_target_memcpy_rect)
{
    int h = omp_get_initial_device();
    cr_assert_eq(omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, h, h), INT_MAX);
    /* a 2x3x4 block of a 4x5x6 array into a 3x4x5 one, at offsets */
    static int src[4][5][6], dst[3][4][5];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 6; k++)
                src[i][j][k] = 100 * i + 10 * j + k;
    memset(dst, 0xff, sizeof dst);
    size_t vol[3] = {2, 3, 4}, so[3] = {1, 2, 1}, dof[3] = {0, 1, 1}, sd[3] = {4, 5, 6}, dd[3] = {3, 4, 5};
    cr_assert_eq(omp_target_memcpy_rect(dst, src, sizeof(int), 3, vol, dof, so, dd, sd, h, h), 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) {
                int in = i < 2 && j >= 1 && j < 4 && k >= 1 && k < 5;
                int want = in ? 100 * (i + 1) + 10 * (j - 1 + 2) + (k - 1 + 1) : -1;
                cr_assert_eq(dst[i][j][k], want, "dst[%d][%d][%d] = %d", i, j, k, dst[i][j][k]);
            }
    cr_assert_eq(omp_target_memcpy_rect(dst, src, sizeof(int), 0, vol, dof, so, dd, sd, h, h), EINVAL);
}

Test(rt, device_numbers_of_expressions)
{
    cr_assert_eq(MACC_device_num(0), 0);
    cr_assert_eq(MACC_device_num(5), 5);
    cr_assert_eq(MACC_device_num(-1), MACC_DEVICE_HOST, "omp_initial_device");
    cr_assert_eq(MACC_device_num(-4), MACC_DEVICE_INVALID, "omp_invalid_device");
    cr_assert_eq(MACC_device_num(-2), MACC_DEVICE_INVALID);
    cr_assert(!MACC_is_present(&seq_n, 4, MACC_DEVICE_INVALID));
}

static void child_invalid_device(void)
{
    MACC_target(&r_record, &(args_t){1, 0}, sizeof(args_t), 0, NULL, 0, NULL, 0, MACC_device_num(-4), 1);
}

static void child_invalid_data_device(void)
{
    static const MACC_SrcLoc loc = {"prog.c", 21, 5, "main"};
    double x[4];
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_data_enter(&loc, 1, &m, MACC_device_num(-7), 0, NULL, 0);
}

Test(rt, negative_device_numbers_are_errors)
{
    char buf[4096];
    cr_assert_eq(run_child(child_invalid_device, buf, sizeof buf), 1);
    cr_assert(strstr(buf, "device number is negative"), "got: %s", buf);
    cr_assert_eq(run_child(child_invalid_data_device, buf, sizeof buf), 1);
    cr_assert(strstr(buf, "macc: error: prog.c:21: device number is negative"), "got: %s", buf);
}

Test(gpu, omp_device_queries_with_two_gpus)
{
    cr_assert_eq(omp_get_num_devices(), 2);
    cr_assert_eq(omp_get_initial_device(), 2);
    cr_assert_eq(omp_get_device_num(), 2, "host code runs on the initial device");
    cr_assert_eq(omp_is_initial_device(), 1);
    cr_assert_eq(omp_get_default_device(), 0, "unset: the first GPU");
}

Test(gpu, omp_default_device_with_macc_devices)
{
    setenv("MACC_DEVICES", "nvidia:1", 1);
    setenv("OMP_DEFAULT_DEVICE", "0", 1);
    cr_assert_eq(omp_get_num_devices(), 1, "renumbered as macc numbers them");
    cr_assert_eq(omp_get_initial_device(), 1);
    cr_assert_eq(omp_get_default_device(), 0);
    static double x[10];
    scale(&r_scale, x, 0, 10, 2.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_DEFAULT);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 1, "nvidia:1 of the machine is device 0");
}

Test(gpu, omp_default_device_from_the_environment)
{
    setenv("OMP_DEFAULT_DEVICE", "1", 1);
    cr_assert_eq(omp_get_default_device(), 1);
    static double x[100];
    scale(&r_scale, x, 0, 100, 2.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_DEFAULT);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 1);
}

/* omp_set_default_device moves regions and data directives without a device
 * clause (MACC_DEVICE_DEFAULT) to that device; the initial device's number
 * sends them to the host. */
Test(gpu, omp_set_default_device_moves_regions_and_data)
{
    enum { N = 100 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    omp_set_default_device(1);
    cr_assert_eq(omp_get_default_device(), 1);
    scale(&r_scale, x, 0, N, 2.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_DEFAULT);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 1);
    cr_assert_eq(atomic_load(&ran_gpu[0]) + atomic_load(&ran_host), 0);
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_data_enter(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(omp_target_is_present(x, 1));
    cr_assert(!omp_target_is_present(x, 0));
    cr_assert(omp_target_is_present(x, 2), "the host device");
    MACC_data_exit(&dloc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    cr_assert(!omp_target_is_present(x, 1));
    omp_set_default_device(omp_get_initial_device());
    scale(&r_scale, x, 0, N, 2.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_DEFAULT);
    cr_assert_eq(atomic_load(&ran_host), 1);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], 4.0 * i);
    cr_assert_eq(atomic_load(&env_errors), 0);
}

/* Device memory: allocated on a GPU (not host memory), copied host -> GPU,
 * GPU -> GPU, GPU -> host, counted in the statistics, freed. */
Test(gpu, omp_target_alloc_and_memcpy_between_devices)
{
    enum { N = 1000 };
    int h = omp_get_initial_device();
    static double a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = i;
    double *d0 = omp_target_alloc(sizeof a, 0), *d1 = omp_target_alloc(sizeof a, 1);
    cr_assert_not_null(d0);
    cr_assert_not_null(d1);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 2);
    cr_assert(!omp_target_is_present(d0, 0), "device memory is not mapped host memory");
    cr_assert_eq(omp_target_memcpy(d0, a, sizeof a, 0, 0, 0, h), 0);
    cr_assert_eq(atomic_load(&maccrt_rt.devices[0]->bytes_h2d), sizeof a);
    cr_assert_eq(omp_target_memcpy(d1, d0, sizeof a / 2, 0, sizeof a / 2, 1, 0), 0, "GPU to GPU");
    cr_assert_eq(omp_target_memcpy(b, d1, sizeof a / 2, 0, 0, h, 1), 0);
    cr_assert_eq(atomic_load(&maccrt_rt.devices[1]->bytes_d2h), sizeof a / 2);
    for (int i = 0; i < N / 2; i++)
        cr_assert_eq(b[i], a[N / 2 + i]);
    /* a 10x10 block of a 100x10 array, through a GPU */
    size_t vol[2] = {10, 5}, off[2] = {3, 2}, zero[2] = {0, 0}, dims[2] = {100, 10}, sdims[2] = {10, 5};
    cr_assert_eq(omp_target_memcpy_rect(d0, a, sizeof(double), 2, vol, zero, off, sdims, dims, 0, h), 0);
    memset(b, 0, sizeof b);
    cr_assert_eq(omp_target_memcpy(b, d0, 50 * sizeof(double), 0, 0, h, 0), 0);
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 5; j++)
            cr_assert_eq(b[i * 5 + j], a[(3 + i) * 10 + 2 + j]);
    omp_target_free(d0, 0);
    omp_target_free(d1, 0); /* the wrong device: ignored */
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 1);
    omp_target_free(d1, 1);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 0);
}

/* omp_target_associate_ptr: the host array's device copy is the program's
 * buffer, with an infinite reference count: maps find it present (no copy,
 * nothing freed), exit data and delete leave it, always-maps copy. */
Test(gpu, omp_target_associate_ptr)
{
    enum { N = 100 };
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    double *buf = omp_target_alloc((N + 8) * sizeof(double), 0);
    cr_assert_eq(omp_target_memcpy(buf, x, sizeof x, 8 * sizeof(double), 0, 0, omp_get_initial_device()), 0);
    cr_assert_eq(omp_target_associate_ptr(x, buf, sizeof x, 8 * sizeof(double), 0), 0);
    cr_assert_eq(omp_target_associate_ptr(x, buf, sizeof x, 8 * sizeof(double), 0), 0, "the same again");
    cr_assert_neq(omp_target_associate_ptr(x + 10, buf, 8, 0, 0), 0, "inside another one");
    cr_assert(omp_target_is_present(x + 50, 0));
    cr_assert(!omp_target_is_present(x, 1));
    cr_assert_eq(omp_get_mapped_ptr(x + 3, 0), (void *)(buf + 11));
    unsigned long long h2d = atomic_load(&maccrt_rt.devices[0]->bytes_h2d);
    scale(&r_scale, x, 0, N, 2.0, 0, MACC_MAP_TOFROM, 0, MACC_DEVICE_ANY);
    cr_assert_eq(atomic_load(&ran_gpu[0]), 1, "the affinity rule: the GPU that holds it");
    cr_assert_eq(x[5], 5.0, "present: no copy back");
    cr_assert_eq(buf[8 + 5], 10.0);
    cr_assert_eq(atomic_load(&maccrt_rt.devices[0]->bytes_h2d), h2d, "present: no copy in");
    MACC_Map del = {"x", x, x, sizeof x, MACC_MAP_FROM | MACC_MAP_DELETE};
    MACC_data_exit(&dloc, 1, &del, 0, 0, NULL, 0);
    cr_assert(omp_target_is_present(x, 0), "infinite count: delete leaves it");
    cr_assert_eq(x[5], 5.0);
    MACC_Map up = {"x", x, x, sizeof x, MACC_MAP_FROM};
    MACC_data_update(&dloc, 1, &up, 0, 0, NULL, 0);
    cr_assert_eq(x[5], 10.0);
    cr_assert_eq(omp_target_disassociate_ptr(x + 1, 0), EINVAL, "not where it starts");
    cr_assert_eq(omp_target_disassociate_ptr(x, 0), 0);
    cr_assert(!omp_target_is_present(x, 0));
    cr_assert_eq(omp_target_disassociate_ptr(x, 0), EINVAL);
    cr_assert_eq(atomic_load(&fgpu_live_allocs), 1, "the program's buffer is not freed");
    omp_target_free(buf, 0);
    /* mapped data cannot be associated */
    MACC_Map m = {"x", x, x, sizeof x, MACC_MAP_TO};
    MACC_data_enter(&dloc, 1, &m, 0, 0, NULL, 0);
    double *buf2 = omp_target_alloc(sizeof x, 0);
    cr_assert_eq(omp_target_associate_ptr(x, buf2, sizeof x, 0, 0), EINVAL);
    omp_target_free(buf2, 0);
    MACC_data_exit(&dloc, 1, &m, 0, 0, NULL, 0);
    cr_assert_eq(atomic_load(&env_errors), 0);
}

/* omp_get_mapped_ptr and MACC_device_addr (use_device_ptr/addr) follow the
 * present table: the device address while mapped, then NULL / the host
 * address. */
Test(gpu, mapped_pointers_follow_the_present_table)
{
    static double x[64];
    cr_assert_null(omp_get_mapped_ptr(x, 0));
    cr_assert_eq(MACC_device_addr(x, 0), (void *)x);
    MACC_Map m = {"x", x, x + 8, 32 * sizeof(double), MACC_MAP_TO};
    MACC_data_begin(&dloc, 1, &m, 1);
    double *d = omp_get_mapped_ptr(x + 8, 1);
    cr_assert_not_null(d);
    cr_assert_neq(d, x + 8);
    cr_assert_eq(omp_get_mapped_ptr(x + 10, 1), (void *)(d + 2));
    cr_assert_null(omp_get_mapped_ptr(x + 8, 0));
    cr_assert_null(omp_get_mapped_ptr(x, 1), "outside the section");
    cr_assert_eq(MACC_device_addr(x + 8, 1), (void *)d);
    cr_assert_eq(MACC_device_addr(x + 8, MACC_DEVICE_HOST), (void *)(x + 8));
    cr_assert_eq(omp_get_mapped_ptr(x, omp_get_initial_device()), (void *)x);
    MACC_data_end(&dloc, 1, &m, 1);
    cr_assert_null(omp_get_mapped_ptr(x + 8, 1));
    cr_assert_eq(MACC_device_addr(x + 8, 1), (void *)(x + 8));
}

/* is_device_ptr (a MACC_MAP_DEVICEPTR map) of omp_target_alloc's memory:
 * device(any) tasks run on the device that owns it, the pointer untranslated. */
/* (the tasks have no dependence on each other: two of a device may run at
 * once, as two kernels may, so the count is atomic) */
static int fn_devptr_gpu(void *args, MACC_TaskEnv *env)
{
    long *p = *(long **)args;
    if (env->device_kind != MACC_DEV_NVIDIA || env->ptrs[0] != p)
        atomic_fetch_add(&env_errors, 1);
    else
        atomic_fetch_add(&ran_gpu[env->device_index], 1);
    __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
    return 0;
}
static int fn_devptr_host(void *args, MACC_TaskEnv *env)
{
    long *p = *(long **)args;
    if (env->ptrs[0] != p)
        atomic_fetch_add(&env_errors, 1);
    atomic_fetch_add(&ran_host, 1);
    __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
    return 0;
}
static const MACC_Version r_devptr_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, fn_devptr_gpu},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, fn_devptr_host},
};
static const MACC_Region r_devptr = {{"gpu.c", 90, 1, "test"}, "r_devptr", 2, r_devptr_v};

Test(gpu, device_pointers_keep_tasks_on_their_device)
{
    for (int dev = 0; dev < 3; dev++) {
        long *p = omp_target_alloc(sizeof(long), dev);
        long zero = 0;
        omp_target_memcpy(p, &zero, sizeof zero, 0, 0, dev, omp_get_initial_device());
        MACC_Map m = {"p", p, p, 0, MACC_MAP_DEVICEPTR};
        for (int k = 0; k < 20; k++)
            MACC_target(&r_devptr, &p, sizeof p, 1, &m, 0, NULL, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
        MACC_taskwait(NULL);
        long v = 0;
        omp_target_memcpy(&v, p, sizeof v, 0, 0, omp_get_initial_device(), dev);
        omp_target_free(p, dev);
        cr_assert_eq(v, 20, "device %d: %ld", dev, v);
    }
    cr_assert_eq(atomic_load(&ran_gpu[0]), 20);
    cr_assert_eq(atomic_load(&ran_gpu[1]), 20);
    cr_assert_eq(atomic_load(&ran_host), 20);
    cr_assert_eq(atomic_load(&env_errors), 0);
}

/* MACC_TRACE: events recorded by several threads at once, more per thread
 * than one chunk holds, are all written (each thread appends to its own
 * chunks, without a lock). */
typedef struct {
    int base;
} trace_arg;

static void *trace_recorder(void *p)
{
    trace_arg *a = p;
    for (int i = 0; i < 10000; i++) {
        double t = 1.0 + a->base + i * 1e-6;
        maccrt_trace_event(MACCRT_TRACE_TASK, maccrt_rt.host, "rec", t, t + 5e-7, 0);
    }
    return NULL;
}

Test(rt, trace_events_of_many_threads_are_all_written)
{
    char path[] = "/tmp/macc-trace-XXXXXX";
    temp_file_in_env(path, "MACC_TRACE");
    cr_assert_eq(macc_num_devices(), 1, "the runtime is up (the host)");
    maccrt_trace_init();
    cr_assert(maccrt_trace_on());
    enum { T = 4 };
    pthread_t th[T];
    trace_arg args[T];
    for (int k = 0; k < T; k++) {
        args[k].base = k;
        cr_assert_eq(pthread_create(&th[k], NULL, trace_recorder, &args[k]), 0);
    }
    for (int k = 0; k < T; k++)
        pthread_join(th[k], NULL);
    maccrt_trace_write();
    FILE *f = fopen(path, "r");
    cr_assert(f);
    char line[512];
    int slices = 0, threads_seen[T + 8] = {0};
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"ph\": \"X\"") || !strstr(line, "\"rec\""))
            continue;
        slices++;
        const char *th_at = strstr(line, "\"thread\": ");
        cr_assert(th_at);
        int id = atoi(th_at + 10);
        if (id >= 0 && id < T + 8)
            threads_seen[id] = 1;
    }
    fclose(f);
    unlink(path);
    cr_assert_eq(slices, T * 10000, "%d slices written", slices);
    int n = 0;
    for (int i = 0; i < T + 8; i++)
        n += threads_seen[i];
    cr_assert_eq(n, T, "one thread number per recording thread");
}

/* ---- maccrt_doze: the sleeping poll after a spin ---------------------------------------- */

static int doze_flag_set(const void *arg)
{
    return __atomic_load_n((const int *)arg, __ATOMIC_ACQUIRE);
}

static void *doze_setter(void *arg)
{
    sleep_ms(5);
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
    return NULL;
}

Test(doze, true_at_once_returns_without_sleeping)
{
    int flag = 1;
    double t0 = now_s();
    cr_assert_eq(maccrt_doze(doze_flag_set, &flag, 1000000000L), 1);
    cr_assert_lt(now_s() - t0, 0.05);
}

Test(doze, gives_up_after_its_time)
{
    int flag = 0;
    double t0 = now_s();
    cr_assert_eq(maccrt_doze(doze_flag_set, &flag, 3000000L), 0);
    double dt = now_s() - t0;
    cr_assert_geq(dt, 0.003, "dozed %.6f s of 0.003", dt);
    cr_assert_lt(dt, 1.0);
}

Test(doze, sees_the_change_and_keeps_the_threads_timer_slack)
{
    int flag = 0;
    pthread_t th;
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    cr_assert_eq(pthread_create(&th, NULL, doze_setter, &flag), 0);
    double t0 = now_s();
    cr_assert_eq(maccrt_doze(doze_flag_set, &flag, 10000000000L), 1);
    double dt = now_s() - t0;
    pthread_join(th, NULL);
    cr_assert_geq(dt, 0.004);
    cr_assert_lt(dt, 5.0, "the change took %.3f s to be seen", dt);
    cr_assert_eq(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), slack);
}
