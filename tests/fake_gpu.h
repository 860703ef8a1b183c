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
 * and a helper finishes it through maccrt_up.ran.
 *
 * A plugin that offers asynchronous fills (copy_h2d_start, fence_order,
 * fence_done) gets them from fake_gpu_copy_start and its version runs after
 * fake_gpu_version_start (fake_gpu_run calls it): a helper's fill lands in the
 * fake GPU's memory only when ordered after, so a missing order shows. */
#ifndef MACC_TESTS_FAKE_GPU_H
#define MACC_TESTS_FAKE_GPU_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
    maccrt_device *dev; /* the device of the tasks submitted (for maccrt_up.idle) */
    atomic_int nqueued; /* tasks in the queue (fake_gpu_queued) */
    /* idle polling (MACC_TEST_FAKE_IDLE_SPIN_US, as the CUDA plugin's
     * MACC_CUDA_IDLE_SPIN_US): up to idle_max helpers with nothing to take
     * poll `work` that long before they sleep, and a task queued while one
     * polls wakes no one (cuda__enqueue_locked) */
    long idle_ns;       /* 0: off (the default: helpers sleep at once) */
    int idle_max;       /* 1, or 4 with asynchronous ends (cuda__idle_max) */
    int idle_spinner;   /* (lock) helpers polling now */
    atomic_uint work;   /* tasks and ends queued so far */
    /* launch-ahead (MACC_TEST_FAKE_AHEAD=k, asynchronous ends only), as the
     * CUDA plugin's lanes: after a helper's task goes in flight, up to k - 1
     * successors that only it and those after it hold back are launched
     * behind it (maccrt_up.ahead_pick, ahead_execute), each due after the
     * one before it and ended only once that one is finished (pfin);
     * the watcher ends nothing while a helper launches so (holding) */
    int ahead_max;
    int holding;        /* (lock) */
} fake_gpu;

static __thread fake_gpu *fake_gpu_self; /* the fake GPU whose helper this thread is */
/* this helper's last task that went in flight (fake_gpu_ran_async), and the
 * earliest end of the one it launches ahead now (0: none) */
static __thread maccrt_task *fake_gpu_launched;
static __thread double fake_gpu_after;

static double fake_gpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Appends t to one of g's queues (placed tasks, or ends to finish) for the
 * helpers, as cuda__enqueue_locked does: a polling helper takes it and
 * wakes no one (g->lock held). */
static void fake_gpu_enqueue_locked(fake_gpu *g, maccrt_task **head, maccrt_task **tail, maccrt_task *t)
{
    maccrt_taskq_push(head, tail, t);
    atomic_fetch_add(&g->work, 1);
    if (!g->idle_spinner)
        pthread_cond_signal(&g->cv); /* (one helper per task or end, as the CUDA plugin's) */
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
        while (*pp && !g->holding) {
            maccrt_task *t = *pp;
            if (t->pseen > now || t->pfin) {
                next = next == 0 || t->pseen < next ? t->pseen : next;
                pp = &t->pnext;
                continue;
            }
            *pp = t->pnext;
            t->pseen = now;
            g->nflight--;
            fake_gpu_enqueue_locked(g, &g->dhead, &g->dtail, t);
            moved = 1;
        }
        if (moved)
            continue;
        if (g->holding || next == 0)
            next = now; /* (held, or ends that wait for completions: look again soon) */
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

typedef struct fake_gpu_idle {
    fake_gpu *g;
    unsigned seen; /* g->work when the helper found the queues empty */
} fake_gpu_idle;

static int fake_gpu_work_came(const void *arg)
{
    const fake_gpu_idle *w = arg;
    return atomic_load(&w->g->work) != w->seen;
}

/* Launch-ahead behind t (launched by this helper, in flight, held). */
static void fake_gpu_ahead(fake_gpu *g, maccrt_task *t)
{
    maccrt_task *fifo[16];
    int n = 1;
    fifo[0] = t;
    pthread_mutex_lock(&g->lock);
    maccrt_device *d = g->dev;
    pthread_mutex_unlock(&g->lock);
    while (n < g->ahead_max && n < 16) {
        maccrt_task *s = maccrt_up.ahead_pick(d, fifo, n);
        if (!s)
            break;
        pthread_mutex_lock(&g->lock);
        fake_gpu_after = fifo[n - 1]->pseen + 1e-9 * (double)g->async_ns;
        fifo[n - 1]->pafter = s;
        s->pfin = 1; /* (ended only once the one before it is finished) */
        pthread_mutex_unlock(&g->lock);
        (void)maccrt_up.ahead_execute(s, 1);
        fake_gpu_after = 0;
        fifo[n++] = s;
    }
}

static void *fake_gpu_worker(void *arg)
{
    fake_gpu *g = arg;
    maccrt_thread_self()->is_worker = 1;
    fake_gpu_self = g;
    pthread_mutex_lock(&g->lock);
    g->nready++;
    pthread_cond_broadcast(&g->cv);
    int spun = 0; /* this helper polled and found nothing: it sleeps next */
    for (;;) {
        if (maccrt_batch_take(&g->batches, &g->lock))
            continue;
        maccrt_task *t = maccrt_taskq_pop(&g->dhead, &g->dtail);
        if (t) {
            spun = 0;
            maccrt_task *nx = t->pafter; /* (launched ahead behind it: t may be freed by its completion) */
            pthread_mutex_unlock(&g->lock);
            maccrt_up.ran(t, t->perr, t->pseen);
            pthread_mutex_lock(&g->lock);
            if (nx)
                nx->pfin = 0;
            continue;
        }
        t = g->head;
        if (!t) {
            if (maccrt_up.idle && g->dev && atomic_load_explicit(&g->dev->idle_work, memory_order_relaxed)) {
                /* nothing to take: the runtime's deferred work, as the CUDA
                 * plugin's helpers do it (plugin->queued), then the
                 * queues again under the lock (a task queued meanwhile
                 * signalled no one) */
                maccrt_device *d = g->dev;
                pthread_mutex_unlock(&g->lock);
                (void)maccrt_up.idle(d);
                pthread_mutex_lock(&g->lock);
                continue;
            }
            if (g->stop && !g->nflight) {
                pthread_cond_broadcast(&g->cv);
                break;
            }
            if (!spun && g->idle_ns > 0 && g->idle_spinner < g->idle_max) {
                fake_gpu_idle w = {g, atomic_load(&g->work)};
                g->idle_spinner++;
                pthread_mutex_unlock(&g->lock);
                spun = !maccrt_poll(fake_gpu_work_came, &w, g->idle_ns);
                pthread_mutex_lock(&g->lock);
                g->idle_spinner--;
                continue;
            }
            spun = 0;
            pthread_cond_wait(&g->cv, &g->lock);
            continue;
        }
        spun = 0;
        maccrt_taskq_pop(&g->head, &g->tail); /* (t) */
        atomic_fetch_sub_explicit(&g->nqueued, 1, memory_order_relaxed);
        pthread_mutex_unlock(&g->lock);
        fake_gpu_launched = NULL;
        maccrt_up.execute(t);
        if (fake_gpu_launched) { /* (held since it went in flight) */
            fake_gpu_ahead(g, fake_gpu_launched);
            fake_gpu_launched = NULL;
            pthread_mutex_lock(&g->lock);
            g->holding--;
            pthread_cond_signal(&g->wcv);
            continue;
        }
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
    const char *is = getenv("MACC_TEST_FAKE_IDLE_SPIN_US");
    long ius = is && *is ? atol(is) : 0;
    g->idle_ns = (ius < 0 ? 0 : ius > 1000000 ? 1000000 : ius) * 1000L;
    g->idle_max = g->async_ns >= 0 ? 4 : 1;
    const char *ah = getenv("MACC_TEST_FAKE_AHEAD");
    g->ahead_max = g->async_ns >= 0 && ah && *ah ? atoi(ah) : 0;
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
    atomic_fetch_add(&g->work, 1); /* (a polling helper looks again) */
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
    g->dev = t->dev;
    atomic_fetch_add_explicit(&g->nqueued, 1, memory_order_relaxed);
    fake_gpu_enqueue_locked(g, &g->head, &g->tail, t);
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
    if (fake_gpu_after > t->pseen)
        t->pseen = fake_gpu_after; /* (launched ahead: after the one before it) */
    else if (g->ahead_max > 1 && fake_gpu_after == 0 && !fake_gpu_launched) {
        fake_gpu_launched = t; /* held until its helper's launch-ahead is over */
        g->holding++;
    }
    t->pnext = g->flight;
    g->flight = t;
    g->nflight++;
    pthread_cond_signal(&g->wcv);
    pthread_mutex_unlock(&g->lock);
    return MACCRT_RUN_PENDING;
}

static inline long fake_gpu_version_start(void);

/* plugin->run: the version itself (no stream, no placement), after its
 * task's asynchronous fills (below) */
static inline int fake_gpu_run(maccrt_device *d, maccrt_task *t, MACC_TaskEnv *env)
{
    long after = fake_gpu_version_start();
    return fake_gpu_ran_async(d, t, t->ver->fn(t->args, env), after);
}

static inline void fake_gpu_plugin_submit(maccrt_device *d, maccrt_task *t)
{
    fake_gpu_submit(d->pdata, t);
}

static inline int fake_gpu_queued(maccrt_device *d)
{
    fake_gpu *g = d->pdata;
    return g ? atomic_load_explicit(&g->nqueued, memory_order_relaxed) : 0;
}

static inline maccrt_batch *fake_gpu_helpers_start(maccrt_device *d, void (*fn)(void *, int), void *arg,
                                                   int n)
{
    fake_gpu *g = d->pdata;
    pthread_mutex_lock(&g->lock);
    maccrt_batch *b = maccrt_batch_push(&g->batches, &g->cv, fn, arg, n);
    atomic_fetch_add(&g->work, 1);
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

/* ---- asynchronous fills (plugin->copy_h2d_start, fence_order, fence_done) ----
 *
 * A helper's fill of its task's map is left "on its way": its bytes are
 * taken at once (as a staged copy's) but land in the fake GPU's memory only
 * when someone orders after the fence (another helper's task, a copy out of
 * the entry) or when the helper runs its own task's version (the same
 * stream), so a user of the entry that did not order itself after the fill
 * reads the fake GPU's garbage. fake_fill_dma_ns models the DMA's time (a
 * fence is done that long after the start, and a version ordered after it
 * starts no earlier: fake_gpu_stream_after). Fences are kept for the
 * process and reused once landed and done. Other threads' fills (the
 * program's) are made at once. */
typedef struct fake_fence {
    pthread_mutex_t lock;
    int landed;         /* (lock) the bytes are in dst */
    void *dst, *buf;    /* where they go, and the bytes taken at the start */
    size_t bytes;
    double due;         /* when the modelled DMA ends */
    int on_mine;        /* (lock) on its helper's list (not reused meanwhile) */
    struct fake_fence *next_mine, *next_free;
} fake_fence;

static long fake_fill_dma_ns;                  /* (the model's DMA time) */
static __thread fake_fence *fake_gpu_mine;     /* this helper's fills on their way */
static __thread double fake_gpu_stream_after;  /* its next version starts no earlier */
static pthread_mutex_t fake_fence_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_fence *fake_fence_free;

static atomic_long fake_fences_ordered; /* fills landed by another user's fence_order */

/* The calling thread after f: its bytes land (returns 1 when they land
 * now), its next version starts after the modelled DMA, and (mine: its
 * filler's version) f leaves its helper's list. */
static int fake_fence_after(fake_fence *f, int mine)
{
    pthread_mutex_lock(&f->lock);
    int now = !f->landed;
    if (now) {
        memcpy(f->dst, f->buf, f->bytes);
        free(f->buf);
        f->buf = NULL;
        f->landed = 1;
    }
    if (mine)
        f->on_mine = 0;
    if (f->due > fake_gpu_stream_after)
        fake_gpu_stream_after = f->due;
    pthread_mutex_unlock(&f->lock);
    return now;
}

static inline void fake_gpu_fence_order(maccrt_device *d, void *fence)
{
    (void)d;
    if (fake_fence_after(fence, 0))
        atomic_fetch_add(&fake_fences_ordered, 1);
}

/* Landed and its DMA's time past (reuse: and off its helper's list). */
static int fake_fence_is_done(fake_fence *f, int reuse)
{
    pthread_mutex_lock(&f->lock);
    int done = f->landed && f->due <= fake_gpu_now() && !(reuse && f->on_mine);
    pthread_mutex_unlock(&f->lock);
    return done;
}

static inline int fake_gpu_fence_done(maccrt_device *d, void *fence)
{
    (void)d;
    return fake_fence_is_done(fence, 0);
}

/* Before a helper runs its task's version: its own fills land (its stream).
 * Returns how long after now the version may start (ns; 0: at once). */
static inline long fake_gpu_version_start(void)
{
    while (fake_gpu_mine) {
        fake_fence *f = fake_gpu_mine;
        fake_gpu_mine = f->next_mine;
        (void)fake_fence_after(f, 1);
    }
    double wait = fake_gpu_stream_after - fake_gpu_now();
    fake_gpu_stream_after = 0;
    return wait > 0 ? (long)(wait * 1e9) : 0;
}

/* plugin->copy_h2d_start: copy(d, dst, src, bytes) made at once unless the
 * caller is one of d's helpers; then the bytes are taken by copy(d, buf,
 * src, bytes) into a buffer of the fence's (the plugin's copy, with its
 * time) and left on their way as above. */
static inline int fake_gpu_copy_start(maccrt_device *d, void *dst, const void *src, size_t bytes, void **fence,
                                      int (*copy)(maccrt_device *, void *, const void *, size_t))
{
    *fence = NULL;
    if (fake_gpu_self != d->pdata)
        return copy(d, dst, src, bytes);
    pthread_mutex_lock(&fake_fence_lock);
    fake_fence *f = NULL;
    for (fake_fence **pp = &fake_fence_free; *pp; pp = &(*pp)->next_free)
        if (fake_fence_is_done(*pp, 1)) {
            f = *pp;
            *pp = f->next_free;
            break;
        }
    pthread_mutex_unlock(&fake_fence_lock);
    if (!f) {
        f = calloc(1, sizeof *f);
        pthread_mutex_init(&f->lock, NULL);
    }
    void *buf = malloc(bytes ? bytes : 1);
    int err = copy(d, buf, src, bytes); /* (the bytes taken: a staged copy's memcpy, and its time) */
    pthread_mutex_lock(&f->lock);
    f->landed = 0;
    f->dst = dst;
    f->buf = buf;
    f->bytes = bytes;
    f->due = fake_gpu_now() + 1e-9 * (double)fake_fill_dma_ns;
    f->on_mine = 1;
    pthread_mutex_unlock(&f->lock);
    f->next_mine = fake_gpu_mine;
    fake_gpu_mine = f;
    pthread_mutex_lock(&fake_fence_lock);
    f->next_free = fake_fence_free; /* (taken again only once landed and done) */
    fake_fence_free = f;
    pthread_mutex_unlock(&fake_fence_lock);
    *fence = f;
    return err;
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
