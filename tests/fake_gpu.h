/* fake_gpu.h: the part every fake GPU of the runtime's tests shares: a task
 * queue served by helper threads, as the CUDA plugin's helpers serve a GPU's
 * tasks (tests/unit/test_runtime.c, tests/unit/test_placement.c,
 * tests/tsan/tsan_runtime.c). Each test's plugin keeps its own memory,
 * copies and hooks, and puts a fake_gpu in its device's pdata.
 *
 * With MACC_TEST_FAKE_ASYNC_US=N set when it starts, a fake GPU's tasks end
 * asynchronously, as the CUDA plugin's do (its "Asynchronous tasks"): the
 * version runs in the helper (fake_gpu_run_async), which returns
 * MACCRT_RUN_PENDING; a watcher thread queues the task N microseconds later
 * and a helper finishes it through maccrt_up.ran. */
#ifndef MACC_TESTS_FAKE_GPU_H
#define MACC_TESTS_FAKE_GPU_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define FAKE_GPU_MAX_THREADS 32 /* (a GPU of the CUDA plugin has up to 32 helpers) */

typedef struct fake_gpu {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    maccrt_task *head, *tail;
    maccrt_batch *batches; /* plugin->helpers_start's work, taken before tasks */
    int stop, n;
    pthread_t th[FAKE_GPU_MAX_THREADS];
    /* asynchronous ends (MACC_TEST_FAKE_ASYNC_US): in flight (pseen: when
     * due), ended (for a helper), the watcher */
    long async_ns; /* -1: off */
    maccrt_task *flight, *dhead, *dtail;
    int nflight, wstop;
    int nready; /* helpers up (fake_gpu_start waits for every one) */
    pthread_cond_t wcv;
    pthread_t watcher;
} fake_gpu;

static __thread fake_gpu *fake_gpu_self; /* the fake GPU whose helper this thread is */

static double fake_gpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void *fake_gpu_watch(void *arg)
{
    fake_gpu *g = arg;
    pthread_mutex_lock(&g->lock);
    for (;;) {
        if (!g->flight) {
            if (g->wstop)
                break;
            pthread_cond_wait(&g->wcv, &g->lock);
            continue;
        }
        double now = fake_gpu_now(), next = 0;
        maccrt_task **pp = &g->flight;
        int moved = 0;
        while (*pp) {
            maccrt_task *t = *pp;
            if (t->pseen > now) {
                next = next == 0 || t->pseen < next ? t->pseen : next;
                pp = &t->pnext;
                continue;
            }
            *pp = t->pnext;
            t->pseen = now;
            maccrt_taskq_push(&g->dhead, &g->dtail, t);
            g->nflight--;
            pthread_cond_signal(&g->cv); /* (one helper per end, as the CUDA plugin's watcher) */
            moved = 1;
        }
        if (moved)
            continue;
        /* as the CUDA plugin's watcher polls: ends seen when due, not a
         * timer's slack later (a late end is a longer run for the
         * scheduler's estimates) */
        pthread_mutex_unlock(&g->lock);
        if (next - now > 200e-6) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
        pthread_mutex_lock(&g->lock);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

static void *fake_gpu_worker(void *arg)
{
    fake_gpu *g = arg;
    maccrt_thread_self()->is_worker = 1;
    fake_gpu_self = g;
    pthread_mutex_lock(&g->lock);
    g->nready++;
    pthread_cond_broadcast(&g->cv);
    for (;;) {
        if (maccrt_batch_take(&g->batches, &g->lock))
            continue;
        maccrt_task *t = maccrt_taskq_pop(&g->dhead, &g->dtail);
        if (t) {
            pthread_mutex_unlock(&g->lock);
            maccrt_up.ran(t, t->perr, t->pseen);
            pthread_mutex_lock(&g->lock);
            continue;
        }
        t = g->head;
        if (!t) {
            if (g->stop && !g->nflight) {
                pthread_cond_broadcast(&g->cv);
                break;
            }
            pthread_cond_wait(&g->cv, &g->lock);
            continue;
        }
        maccrt_taskq_pop(&g->head, &g->tail); /* (t) */
        pthread_mutex_unlock(&g->lock);
        maccrt_up.execute(t);
        pthread_mutex_lock(&g->lock);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* A queue with `threads` helpers (at most FAKE_GPU_MAX_THREADS). */
static inline fake_gpu *fake_gpu_start(int threads)
{
    fake_gpu *g = calloc(1, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cv, NULL);
    pthread_cond_init(&g->wcv, NULL);
    const char *a = getenv("MACC_TEST_FAKE_ASYNC_US");
    g->async_ns = a && *a ? atol(a) * 1000L : -1;
    if (g->async_ns >= 0)
        pthread_create(&g->watcher, NULL, fake_gpu_watch, g);
    /* asynchronous: as many helpers again, free to finish ended tasks while
     * `threads` run versions (a fake version's work holds its helper, where
     * a kernel holds none) */
    if (g->async_ns >= 0)
        threads *= 2;
    for (g->n = 0; g->n < threads && g->n < FAKE_GPU_MAX_THREADS; g->n++)
        pthread_create(&g->th[g->n], NULL, fake_gpu_worker, g);
    /* as the CUDA plugin offers a GPU once every helper is ready: a helper's
     * start (its runtime thread record, its first allocation: the C
     * library's arena for that thread, mapped while the others map theirs)
     * is not the work of the first tasks it runs (bench/dispatch: the eight
     * helpers' starts took the first 0.3 ms of the measured time) */
    pthread_mutex_lock(&g->lock);
    while (g->nready < g->n)
        pthread_cond_wait(&g->cv, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return g;
}

/* Stops the helpers once the queue is empty and joins them. */
static inline void fake_gpu_stop(fake_gpu *g)
{
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lock);
    for (int i = 0; i < g->n; i++)
        pthread_join(g->th[i], NULL);
    g->n = 0;
    if (g->async_ns >= 0) {
        pthread_mutex_lock(&g->lock);
        g->wstop = 1;
        pthread_cond_signal(&g->wcv);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->watcher, NULL);
        g->async_ns = -1;
    }
}

static inline void fake_gpu_submit(fake_gpu *g, maccrt_task *t)
{
    pthread_mutex_lock(&g->lock);
    maccrt_taskq_push(&g->head, &g->tail, t);
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->lock);
}

/* The plugin entries every fake GPU shares (d->pdata is its fake_gpu):
 * fini, version_ok, submit, helpers_start / helpers_wait, and the plain
 * heap memory and memcpy copies of those that model nothing more. */
static inline void fake_gpu_fini(maccrt_device *d)
{
    fake_gpu_stop(d->pdata);
}

static inline int fake_gpu_version_ok(const maccrt_device *d, const MACC_Version *v)
{
    return v->min_cc <= d->cc;
}

/* What a plugin's run returns for version result err: with asynchronous
 * ends on (and in one of d's helpers), the task goes in flight, due
 * async_ns + extra_ns from now, and MACCRT_RUN_PENDING; else err. */
static inline int fake_gpu_ran_async(maccrt_device *d, maccrt_task *t, int err, long extra_ns)
{
    fake_gpu *g = d->pdata;
    if (g->async_ns < 0 || fake_gpu_self != g)
        return err;
    pthread_mutex_lock(&g->lock);
    t->perr = err;
    t->pseen = fake_gpu_now() + 1e-9 * (double)(g->async_ns + extra_ns);
    t->pnext = g->flight;
    g->flight = t;
    g->nflight++;
    pthread_cond_signal(&g->wcv);
    pthread_mutex_unlock(&g->lock);
    return MACCRT_RUN_PENDING;
}

/* plugin->run: the version itself (no stream, no placement) */
static inline int fake_gpu_run(maccrt_device *d, maccrt_task *t, MACC_TaskEnv *env)
{
    return fake_gpu_ran_async(d, t, t->ver->fn(t->args, env), 0);
}

static inline void fake_gpu_plugin_submit(maccrt_device *d, maccrt_task *t)
{
    fake_gpu_submit(d->pdata, t);
}

static inline maccrt_batch *fake_gpu_helpers_start(maccrt_device *d, void (*fn)(void *, int), void *arg,
                                                   int n)
{
    fake_gpu *g = d->pdata;
    pthread_mutex_lock(&g->lock);
    maccrt_batch *b = maccrt_batch_push(&g->batches, &g->cv, fn, arg, n);
    pthread_mutex_unlock(&g->lock);
    return b;
}

static inline void fake_gpu_helpers_wait(maccrt_device *d, maccrt_batch *b)
{
    fake_gpu *g = d->pdata;
    maccrt_batch_wait(&g->batches, &g->lock, b);
}

static inline void *fake_gpu_heap_alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)d;
    (void)hostptr;
    return malloc(bytes);
}

static inline void fake_gpu_heap_free(maccrt_device *d, void *p)
{
    (void)d;
    free(p);
}

/* plugin->copy_h2d / copy_d2h: host memory on both sides */
static inline int fake_gpu_copy(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    (void)d;
    memcpy(dst, src, bytes);
    return 0;
}

/* plugin->managed_alloc / managed_free: page-aligned host memory */
static inline void *fake_gpu_managed_alloc(maccrt_device *d, size_t bytes)
{
    (void)d;
    void *p = NULL;
    return posix_memalign(&p, 4096, bytes) == 0 ? p : NULL;
}

static inline void fake_gpu_managed_free(maccrt_device *d, void *p)
{
    (void)d;
    free(p);
}

#endif
