/* cuda.c: the CUDA plugin (NVIDIA GPUs), through the CUDA runtime API.
 *
 * Not part of libmaccrt.a: it is built alone into libmaccrt_cuda.a, which the
 * driver links (--whole-archive, then -lcudart) only into programs that have
 * GPU kernels. init.c finds maccrt_cuda_plugin through a weak reference;
 * programs without this archive run host-only.
 *
 * Threads and streams. Each GPU gets MACC_CUDA_HELPERS (default 8) helper
 * threads, each with its own non-blocking stream, MACC_CUDA_STREAMS
 * (default 32) lanes, each a non-blocking stream that one task in flight
 * holds, and a watcher thread. A helper takes the next task placed on its
 * GPU and a free lane and runs it through the shared path
 * (maccrt_task_execute): the maps (allocations and copies in, on the lane's
 * stream, each waited for), the version function (the generated launch
 * function: it launches the kernel on env->stream and returns
 * cudaGetLastError()); then it goes on with other work while the watcher
 * polls the lane's stream. When the kernels have ended, a helper unmaps
 * (copies out, frees, on its own stream) and completes the task
 * (maccrt_task_ran); see "Asynchronous tasks". Several tasks are thus in
 * flight per GPU (one per lane), their copies and kernels overlapping across
 * streams. GPU tasks hold 25 tokens by default, so four run at once
 * (resources(N) lets more be placed; they queue for the helpers, which the
 * scheduler counts). MACC_CUDA_ASYNC=0: MACC_CUDA_STREAMS helpers, each
 * running its task from the maps to completion on its own stream, waiting
 * for the kernels itself.
 *
 * The contexts use cudaDeviceScheduleBlockingSync: a thread waiting for a
 * stream sleeps instead of spinning, so the helpers of one GPU cost about one
 * core, which init.c keeps out of the host workers' share.
 *
 * Calls from other threads (data directives from the program's threads, and
 * tasks run inline after shutdown) use the GPU's data stream, one caller at a
 * time (data_lock), and leave the caller's current CUDA device as it was.
 *
 * Memory of up to MACC_CUDA_SLAB_MAX bytes is a block of a slab (slab.c: a
 * free-list pop, no driver call); slabs and larger allocations come from the
 * device's stream-ordered pool (cudaMallocAsync /
 * cudaFreeAsync on the caller's stream; cudaMalloc / cudaFree where pools are
 * not supported): cudaFree would wait for every stream of the device and
 * serialise the helpers. The pool keeps what it has (release threshold at
 * the maximum); when an allocation fails, the device is synchronised (frees
 * in flight complete), the pool trimmed, and the allocation tried once more
 * before "out of GPU memory" is reported. Copies use cudaMemcpyDefault, so
 * managed or pinned host memory works as well as pageable memory. Copies
 * between GPUs (cache.c's fills from another GPU's copy) use
 * cudaMemcpyPeerAsync on the receiving GPU's stream, with peer access
 * enabled once per pair where cudaDeviceCanAccessPeer allows it.
 *
 * Errors: every CUDA error is returned to the shared code, which reports it
 * with the region's or directive's location and exits (maccrt_fatal). After
 * a fatal error the helpers take no new task and the exit handler neither
 * waits for tasks nor stops the helpers, so a failed kernel never hangs the
 * program.
 */
#define _GNU_SOURCE
#include "internal.h"

/* Built without the CUDA headers (a build that compiles every runtime source
 * into libmaccrt.a without -I.../cuda/include), this file is empty: the weak
 * reference in init.c stays NULL and programs run host-only. The real build
 * of libmaccrt_cuda.a passes the include path. */
#if defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#define CUDA__HAVE_HEADERS 1
#endif
#else
#define CUDA__HAVE_HEADERS 1
#endif

#ifndef CUDA__HAVE_HEADERS
typedef int cuda__no_cuda_headers; /* not an empty translation unit */
#else

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static cudaError_t cuda__wait(cudaStream_t s);
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define CUDA__DEFAULT_STREAMS 32
#define CUDA__MAX_STREAMS 32

typedef struct cuda__gpu cuda__gpu;

#define CUDA__STAGE_CHUNK (512u << 10) /* a staging slot (cuda__copy_staged) */

/* A page-locked staging buffer (two slots) for copies of pageable host
 * memory: see cuda__copy_staged. */
typedef struct cuda__stage {
    char *buf;         /* 2 x chunk bytes (cudaHostAlloc), NULL until first used */
    size_t chunk;      /* bytes per slot: CUDA__STAGE_CHUNK, or CUDA__STAGE_BIG for large copies */
    cudaEvent_t ev[2]; /* the copy out of (h2d) or into (d2h) each slot */
    int h2d_out[2];    /* an h2d DMA out of the slot was queued (ev[i] follows it) */
    unsigned turn;     /* chunks staged to the GPU so far: the next one's slot (turn & 1) */
    int failed;        /* could not be made: pageable copies */
    maccrt_crew_job *job; /* the memcpy of a chunk, shared with the copying crew (crew.c) */
} cuda__stage;

/* Fences of a helper's fills left on their way (cuda__copy_h2d_start): events,
 * each recorded again only once done. */
#define CUDA__FENCES 64

/* One helper thread and its stream. */
typedef struct cuda__helper {
    cuda__stage stage, stage_big;
    cuda__gpu *gpu;
    int slot;
    cudaStream_t stream; /* the stream its calls use now: own, or its task's lane's */
    cudaStream_t own;    /* its own (batches, unmaps) */
    int run_lane;        /* the lane of the task it runs now (asynchronous GPUs), or -1 */
    int launched;        /* the lane its last task was launched on (cuda__launched), or -1 */
    int behind;          /* the task it runs now goes behind run_lane's (cuda__ahead) */
    int in_task;         /* it runs a task's maps and version now (on `stream`) */
    void *relay;         /* device memory for write-backs through this GPU (cuda__copy_d2h_via) */
    cudaEvent_t fence[CUDA__FENCES];
    int nfence, next_fence;
    pthread_t thread;
    int started;
    cudaError_t set_err; /* cudaSetDevice in the helper failed: every call reports it */
} cuda__helper;

/* A stream a task's maps and kernels use, on a GPU whose tasks end
 * asynchronously (see "Asynchronous tasks" below). */
#define CUDA__AHEAD_MAX 16
typedef struct cuda__lane {
    cudaStream_t stream; /* the one its task uses: lo, or hi (cuda__urgent) */
    cudaStream_t lo, hi; /* hi: the GPU's greatest priority (NULL: none, MACC_CUDA_PRIORITY=0) */
    maccrt_task *_Atomic task;  /* in flight on it (its kernels launched), or NULL: q[0] */
    int next_free;
    /* The tasks in flight on it in their order (q[0]: the first, then those
     * launched ahead behind it: task.c's launch-ahead), ev[i] recorded after
     * q[i]'s kernels when q[i + 1] came; under lk (cuda__lane_lock). */
    atomic_int lk;
    int n;
    maccrt_task *q[CUDA__AHEAD_MAX];
    cudaEvent_t ev[CUDA__AHEAD_MAX];
} cuda__lane;

struct cuda__gpu {
    maccrt_device *dev;
    int ordinal; /* CUDA device ordinal (d->index / MACC_CUDA_SPLIT) */
    int pools;   /* stream-ordered allocator available */
    cudaMemPool_t pool;
    maccrt_slabs *slabs; /* the directory's copies, in blocks of slabs (slab.c); NULL: off */

    /* Placed tasks waiting for a helper, and batches of work for the
     * helpers (cuda__helpers_start), taken first. */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    maccrt_task *head, *tail;
    maccrt_batch *batches;
    int stop;
    int idle_spinner;  /* helpers polling `work` (and lanes) instead of sleeping (maccrt_poll) */
    atomic_uint work;  /* bumped under lock with each task, batch and stop: what it polls */
    int nready;             /* helpers done starting (their device set, their staging made) */
    pthread_cond_t ready_cv; /* signalled as each helper is ready (cuda__init_device waits) */

    int nhelpers;
    cuda__helper helpers[CUDA__MAX_STREAMS];

    /* Calls from threads that are not this GPU's helpers. */
    pthread_mutex_t data_lock;
    int pageable;            /* cudaDevAttrPageableMemoryAccess: kernels read any host address */
    cudaStream_t data_stream;
    cuda__stage data_stage, data_stage_big;
    /* the stream-ordered allocations' own stream (cuda__alloc_stream) */
    cudaStream_t alloc_stream;

    atomic_int info_done; /* device-info symbols written on this GPU (cuda__push_info) */

    /* Asynchronous tasks (cuda__async): the lanes, the free ones (under
     * lock), the tasks whose kernels ended, for a helper to finish (under
     * lock), and the watcher. */
    int async;
    int nlanes, free_lane;
    cuda__lane lanes[CUDA__MAX_STREAMS];
    maccrt_task *dhead, *dtail;
    atomic_int inflight;
    atomic_int nqueued;  /* tasks in the queue (head): cuda__queued's hint */
    pthread_t watcher;
    int watcher_started;
    pthread_mutex_t wlock;
    pthread_cond_t wcv;
    atomic_int wsleep;
};

static int cuda__nstreams = CUDA__DEFAULT_STREAMS;
/* MACC_CUDA_AHEAD: the most tasks in flight on a lane, launched ahead behind
 * the first (default 4; 1 or 0: none launched ahead) */
static int cuda__ahead_max = 4;
/* MACC_CUDA_ASYNC (default on) and MACC_CUDA_HELPERS: see "Asynchronous tasks" */
#define CUDA__DEFAULT_HELPERS 8
static int cuda__async = 1, cuda__async_helpers = CUDA__DEFAULT_HELPERS;
static int cuda__idle_max = 4; /* MACC_CUDA_IDLE_SPINNERS (asynchronous GPUs) */
static void cuda__async_start(cuda__gpu *g);
static void cuda__async_stop(cuda__gpu *g);
/* MACC_CUDA_SLAB_MAX: the largest allocation cut from a slab (bytes; 0: every
 * allocation from the driver). */
static size_t cuda__slab_max = (size_t)64 << 20;
/* MACC_CUDA_SPLIT=k: each GPU offered as k devices (development: the
 * directory, placement and copies between devices of a machine with several
 * GPUs, measured on one; see docs/RUNTIME.md for what they share). */
static int cuda__split = 1;
static int cuda__ngpus_up; /* GPUs started (cuda__init_device) */
/* The hardware work queues of a context (CUDA_DEVICE_MAX_CONNECTIONS, CUDA's
 * default 8), read in cuda__discover; lowered by cuda__start_context. */
static int cuda__conn = 8;

static void cuda__enable_peers(cuda__gpu *g);
static void *cuda__slab_get(void *ctx, size_t bytes);
static void cuda__slab_put(void *ctx, void *p);
static void cuda__pool_warm(cuda__gpu *g);
static int cuda__staging(void);
static int cuda__stage_make(cuda__stage *st, size_t chunk);
static __thread cuda__helper *cuda__self;   /* the helper this thread is, if any */
static __thread int cuda__last_alloc_error; /* see cuda__alloc_error */

/* Forgets the calling thread's last CUDA error, so that a handled error is
 * not reported again by the next cudaGetLastError() (the launch functions
 * return cudaGetLastError()). Sticky errors stay in the context anyway. */
static void cuda__clear(void)
{
    (void)cudaGetLastError();
}

/* ---- calls on a GPU from any thread ------------------------------------------------------- */

typedef struct cuda__call {
    cuda__gpu *g;
    cudaStream_t stream;
    int locked;  /* holds g->data_lock */
    int restore; /* the caller's current device to restore, or -1 */
} cuda__call;

/* Makes g current in the calling thread and picks the stream: the helper's
 * own, or the data stream (locked) for any other thread. */
static cudaError_t cuda__enter(cuda__gpu *g, cuda__call *c)
{
    c->g = g;
    c->locked = 0;
    c->restore = -1;
    cuda__helper *h = cuda__self;
    if (h && h->gpu == g) {
        c->stream = h->stream;
        return h->set_err;
    }
    pthread_mutex_lock(&g->data_lock);
    c->locked = 1;
    c->stream = g->data_stream;
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        cuda__clear();
        cur = -1;
    }
    if (cur == g->ordinal)
        return cudaSuccess;
    c->restore = cur;
    return cudaSetDevice(g->ordinal);
}

static void cuda__leave(cuda__call *c)
{
    if (c->restore >= 0 && !atomic_load(&maccrt_rt.fatal)) {
        if (cudaSetDevice(c->restore) != cudaSuccess)
            cuda__clear();
    }
    if (c->locked)
        pthread_mutex_unlock(&c->g->data_lock);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static maccrt_batch *cuda__helpers_start(maccrt_device *d, void (*fn)(void *, int), void *arg, int n)
{
    cuda__gpu *g = d->pdata;
    pthread_mutex_lock(&g->lock);
    maccrt_batch *b = maccrt_batch_push(&g->batches, &g->cv, fn, arg, n);
    atomic_fetch_add(&g->work, 1);
    pthread_mutex_unlock(&g->lock);
    return b; /* stopped helpers or a fatal error: the caller runs it in maccrt_batch_wait */
}

static void cuda__helpers_wait(maccrt_device *d, maccrt_batch *b)
{
    cuda__gpu *g = d->pdata;
    maccrt_batch_wait(&g->batches, &g->lock, b);
}

/* MACC_CUDA_IDLE_SPIN_US (default 500): how long one helper of a GPU whose
 * queue is empty polls for the next task before it sleeps on the condition
 * variable. Programs of synchronous regions submit the next one a few
 * microseconds after the last one ends; a sleeping helper's wake-up cost tens
 * of microseconds per region (the trace's wait:queue). On an asynchronous
 * GPU up to MACC_CUDA_IDLE_SPINNERS helpers (default 4) poll so, and they
 * poll the lanes in flight too, finishing a task whose kernels ended
 * themselves: with one, each end of STREAM's tasks (four in flight, a few
 * microseconds each) waited for a sleeping helper's wake-up after the
 * watcher saw it (pipelined rate on two H100s 1060-1160 GB/s, 1570-1600 with
 * four, 1500-1560 with a helper per task as before). */
static long cuda__idle_ns;

typedef struct cuda__idle {
    cuda__gpu *g;
    unsigned seen; /* g->work when the helper found the queue empty */
    maccrt_task *claimed; /* a task whose kernels it saw end (asynchronous tasks) */
} cuda__idle;

/* Appends t to one of g's queues (placed tasks, or ends to finish) for the
 * helpers; g->lock held. A polling helper takes it, and no one is woken;
 * but when work a helper could take was still queued, the pollers did not
 * take it (each busy, or off its core: sched_yield between polls): a
 * sleeper is woken as well. In one run of six of STREAM on one H200 (a
 * machine that ran slow that hour) a chain's next link sat queued 2.9 ms
 * and three finished links 2.8 ms, every helper silent and the link idle;
 * with 16 busy processes beside it on the 16 cores, STREAM ran 1.10x (pairs;
 * 405 -> 511 GB/s) with this wake-up, unchanged without them (1.007). */
static void cuda__enqueue_locked(cuda__gpu *g, maccrt_task **head, maccrt_task **tail, maccrt_task *t)
{
    int waiting = g->dhead || (g->head && (!g->async || g->free_lane >= 0));
    maccrt_taskq_push(head, tail, t);
    atomic_fetch_add(&g->work, 1);
    if (!g->idle_spinner || waiting)
        pthread_cond_signal(&g->cv);
}

/* Lanes of two priorities (MACC_CUDA_PRIORITY=0: one). A task goes on a
 * lane's high-priority stream when no task in flight on the GPU goes before
 * it in the queues' order (maccrt_task_before: the first chain's link), so
 * that the GPU's block scheduler gives that chain's kernels the SMs first
 * and the others the gaps between them: the chains a GPU runs at once then
 * end less together, and their last write-backs begin while the others run.
 * STREAM's four blocks at once per GPU ended together, their bytes' first
 * write-backs 3 ms into a 12-18 ms run on one and two H200s; with the
 * priorities two GPUs ran 5% faster (a chain's next link waits for its
 * predecessor's end to be seen on the host, whatever its priority). Kernels
 * only: copies have no priority. */
static int cuda__prio_on = -1;

static int cuda__urgent(const cuda__gpu *g, const maccrt_task *t)
{
    for (int i = 0; i < g->nlanes; i++) {
        const maccrt_task *u = atomic_load_explicit(&g->lanes[i].task, memory_order_relaxed);
        if (u && maccrt_task_before(u, t))
            return 0;
    }
    return 1;
}

/* Lane i back on g's free list (g->lock held, or g not yet started). */
static void cuda__lane_put(cuda__gpu *g, int i)
{
    g->lanes[i].next_free = g->free_lane;
    g->free_lane = i;
}

static void cuda__lane_lock(cuda__lane *sl)
{
    while (atomic_exchange_explicit(&sl->lk, 1, memory_order_acquire))
        maccrt_pause();
}

static int cuda__lane_trylock(cuda__lane *sl)
{
    return !atomic_load_explicit(&sl->lk, memory_order_relaxed) &&
           !atomic_exchange_explicit(&sl->lk, 1, memory_order_acquire);
}

static void cuda__lane_unlock(cuda__lane *sl)
{
    atomic_store_explicit(&sl->lk, 0, memory_order_release);
}

/* Claims lane i's first task when its kernels have ended (the watcher, or
 * a helper polling for work): the task returned with its error and the
 * time, taken off the lane (which is freed when it held no task launched
 * behind it); NULL when they still run, another thread holds the lane, or
 * the task was launched ahead and the one before it is not finished yet
 * (its unmaps and completion, cuda__finish: they go in the tasks' order).
 * queue (the watcher's): the task is queued for the helpers in the same
 * hold of g's lock as the lane's release. */
static maccrt_task *cuda__lane_claim(cuda__gpu *g, int i, int queue)
{
    cuda__lane *sl = &g->lanes[i];
    if (!atomic_load_explicit(&sl->task, memory_order_relaxed) || !cuda__lane_trylock(sl))
        return NULL;
    maccrt_task *t = atomic_load_explicit(&sl->task, memory_order_relaxed);
    if (!t || t->pfin) {
        cuda__lane_unlock(sl);
        return NULL;
    }
    cudaError_t e = sl->n > 1 ? cudaEventQuery(sl->ev[0]) : cudaStreamQuery(sl->stream);
    if (e == cudaErrorNotReady) {
        cuda__lane_unlock(sl);
        return NULL;
    }
    t->perr = (int)e;
    t->pseen = maccrt_now();
    t->plane = i;
    int n = --sl->n;
    if (n > 0) {
        /* the next one first now; its event (if any) moves with it */
        cudaEvent_t ev0 = sl->ev[0];
        for (int k = 0; k < n; k++)
            sl->q[k] = sl->q[k + 1];
        for (int k = 0; k < n - 1; k++)
            sl->ev[k] = sl->ev[k + 1];
        sl->ev[n - 1] = ev0;
        atomic_store_explicit(&sl->task, sl->q[0], memory_order_relaxed);
    } else {
        atomic_store_explicit(&sl->task, NULL, memory_order_relaxed);
    }
    if (n == 0 || queue) {
        pthread_mutex_lock(&g->lock);
        if (n == 0)
            cuda__lane_put(g, i);
        atomic_fetch_sub(&g->inflight, 1);
        if (queue)
            cuda__enqueue_locked(g, &g->dhead, &g->dtail, t);
        pthread_mutex_unlock(&g->lock);
    } else {
        atomic_fetch_sub(&g->inflight, 1);
    }
    cuda__lane_unlock(sl);
    return t;
}

/* Launch-ahead (task.c): behind lane i's tasks, in their order on its
 * stream, the successors they alone hold back, while the lane has fewer than
 * MACC_CUDA_AHEAD tasks. Each one: its maps taken (any wait for another
 * thread's fill goes on the lane's stream), an event after the lane's last
 * task (its end, cuda__lane_claim), then its kernels on the lane's stream
 * (cuda__run appends it). The lane is held meanwhile: its tasks are not
 * claimed (they cannot end under the try). */
static void cuda__ahead(cuda__gpu *g, cuda__helper *h, int i)
{
    cuda__lane *sl = &g->lanes[i];
    if (cuda__ahead_max < 2 || !atomic_load_explicit(&sl->task, memory_order_relaxed))
        return;
    cuda__lane_lock(sl);
    h->stream = sl->stream;
    while (sl->n > 0 && sl->n < cuda__ahead_max && !atomic_load(&maccrt_rt.fatal)) {
        maccrt_task *s = maccrt_up.ahead_pick(g->dev, sl->q, sl->n);
        if (!s)
            break;
        if (cudaEventRecord(sl->ev[sl->n - 1], sl->stream) != cudaSuccess) {
            cuda__clear();
            (void)maccrt_up.ahead_execute(s, 0); /* (it waits for its predecessors) */
            break;
        }
        h->run_lane = i;
        h->behind = 1;
        (void)maccrt_up.ahead_execute(s, 1);
        h->behind = 0;
        h->run_lane = -1;
    }
    h->stream = h->own;
    cuda__lane_unlock(sl);
}

/* The end of a task claimed off lane t->plane: its unmaps and completion;
 * then the task launched behind it may be claimed (by this helper at once
 * when its kernels ended too, and so on), then more of that lane's
 * successors are launched ahead. */
static void cuda__finish(cuda__gpu *g, cuda__helper *h, maccrt_task *t)
{
    int i = t->plane;
    cuda__lane *sl = &g->lanes[i];
    for (;;) {
        maccrt_task *nx = t->pafter; /* (t may be freed by its completion) */
        maccrt_up.ran(t, t->perr, t->pseen);
        if (!nx)
            break;
        cuda__lane_lock(sl);
        nx->pfin = 0;
        cuda__lane_unlock(sl);
        if (!(t = cuda__lane_claim(g, i, 0)))
            break;
    }
    cuda__ahead(g, h, i);
}

static int cuda__work_came(const void *arg)
{
    cuda__idle *w = (cuda__idle *)arg;
    if (atomic_load(&w->g->work) != w->seen)
        return 1;
    /* kernels that ended: this helper finishes their task at once (the
     * watcher's hand-over costs a wake-up when the helpers sleep) */
    for (int i = 0; atomic_load(&w->g->inflight) > 0 && i < w->g->nlanes; i++)
        if ((w->claimed = cuda__lane_claim(w->g, i, 0)) != NULL)
            return 1;
    return 0;
}

static void *cuda__helper_main(void *arg)
{
    cuda__helper *h = arg;
    cuda__gpu *g = h->gpu;
    maccrt_thread *self = maccrt_thread_self();
    self->is_worker = 1;
    cuda__self = h;
    h->set_err = cudaSetDevice(g->ordinal);
    cuda__clear();
    if (h->set_err == cudaSuccess && cuda__staging())
        (void)cuda__stage_make(&h->stage, CUDA__STAGE_CHUNK);

    pthread_mutex_lock(&g->lock);
    g->nready++;
    pthread_cond_signal(&g->ready_cv);
    int spun = 0; /* this helper polled and found nothing: it sleeps next */
    for (;;) {
        /* After a fatal error the process is exiting: take no new task (its
         * CUDA calls could block on a broken context). */
        int fatal = atomic_load(&maccrt_rt.fatal);
        if (!fatal && maccrt_batch_take(&g->batches, &g->lock))
            continue; /* batches first: their caller waits for them */
        maccrt_task *t = fatal ? NULL : maccrt_taskq_pop(&g->dhead, &g->dtail);
        if (t) {
            /* a task whose kernels ended: its unmaps and completion */
            spun = 0;
            pthread_mutex_unlock(&g->lock);
            cuda__finish(g, h, t);
            pthread_mutex_lock(&g->lock);
            continue;
        }
        t = fatal ? NULL : g->head;
        /* Every lane in flight: the task waits in the queue for one (a
         * claimed lane's task comes to the helpers, which then take it)
         * instead of running here synchronously. A helper that ran a task so
         * waited for its kernel, and the ends of the lanes' kernels waited
         * behind it: nbody-L's first step on an H200 had 50 tasks placed, 32
         * lanes and 8 helpers each waiting 214 ms for a kernel, while the
         * lanes' tasks that ended from 86 ms on were completed only at 214 ms
         * (the GPU unmeasured so long that the host took two tasks and the
         * step lasted 600 ms instead of 380). */
        if (t && g->async && g->free_lane < 0 && atomic_load(&g->inflight) > 0)
            t = NULL;
        if (!t) {
            if (!fatal && maccrt_up.idle && atomic_load_explicit(&g->dev->idle_work, memory_order_relaxed)) {
                /* nothing to take: the runtime's deferred work (a completed
                 * task's early write-backs), one piece at a time; then the
                 * queues are looked at again under the lock (a task queued
                 * meanwhile signalled no one: this helper was not waiting).
                 * A call that found nothing left idle_work 0: no loop. */
                pthread_mutex_unlock(&g->lock);
                if (maccrt_up.idle(g->dev))
                    spun = 0;
                pthread_mutex_lock(&g->lock);
                continue;
            }
            if (g->stop && atomic_load(&g->inflight) == 0) {
                pthread_cond_broadcast(&g->cv); /* (the others wait for the last ends too) */
                break; /* stop, and nothing left */
            }
            if (!fatal && !spun && g->idle_spinner < (g->async ? cuda__idle_max : 1) && cuda__idle_ns > 0) {
                /* a helper per GPU (asynchronous: up to cuda__idle_max) polls a while */
                cuda__idle w = {g, atomic_load(&g->work), NULL};
                g->idle_spinner++;
                pthread_mutex_unlock(&g->lock);
                (void)maccrt_poll(cuda__work_came, &w, cuda__idle_ns);
                pthread_mutex_lock(&g->lock);
                g->idle_spinner--;
                spun = w.claimed == NULL;
                if (w.claimed) {
                    /* no longer polling: its finish (the completion, the
                     * successors' launches, write-backs copied at once) can
                     * take a millisecond, and while it counted as polling
                     * the queues' pushes woke no one (cuda__enqueue_locked):
                     * STREAM's chain ends on one H200, each with 48 MiB
                     * written home by the helper that claimed it, left the
                     * next chain's head queued and a finished head unclaimed
                     * 0.6 ms each, six helpers asleep, the link idle */
                    if (g->idle_spinner == 0 && (g->head || g->dhead))
                        pthread_cond_signal(&g->cv);
                    pthread_mutex_unlock(&g->lock);
                    cuda__finish(g, h, w.claimed);
                    pthread_mutex_lock(&g->lock);
                }
                continue;
            }
            spun = 0;
            pthread_cond_wait(&g->cv, &g->lock);
            continue;
        }
        spun = 0;
        maccrt_taskq_pop(&g->head, &g->tail); /* (t) */
        atomic_fetch_sub_explicit(&g->nqueued, 1, memory_order_relaxed);
        h->run_lane = -1;
        if (g->async && g->free_lane >= 0) {
            /* the task's maps and kernels go on a lane's stream, which stays
             * with the kernels once launched (cuda__run) */
            h->run_lane = g->free_lane;
            cuda__lane *sl = &g->lanes[h->run_lane];
            g->free_lane = sl->next_free;
            if (sl->hi) /* (a free lane's stream is idle: cuda__lane_claim) */
                sl->stream = cuda__urgent(g, t) ? sl->hi : sl->lo;
            h->stream = sl->stream;
        }
        pthread_mutex_unlock(&g->lock);
        h->in_task = 1;
        h->launched = -1;
        maccrt_up.execute(t);
        h->in_task = 0;
        if (h->launched >= 0) /* (t may be finished and freed by now) */
            cuda__ahead(g, h, h->launched);
        pthread_mutex_lock(&g->lock);
        if (h->run_lane >= 0) { /* ran synchronously (or failed): the lane is free again */
            cuda__lane_put(g, h->run_lane);
            h->run_lane = -1;
        }
        h->stream = h->own;
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* ---- the plugin --------------------------------------------------------------------------- */

static void cuda__spin_settings(void);
static void cuda__pin_settings(void);

/* The CUDA settings the plugin puts in the environment for its own contexts
 * (CUDA_MODULE_LOADING, CUDA_DEVICE_MAX_CONNECTIONS) are the process's
 * environment: a program's children (system, popen, exec, MPI's spawns) would
 * inherit them. The user's values are kept here and put back once every GPU's
 * context is made (cuda__all_started): CUDA reads them when a context starts. */
static const char *const cuda__env_names[] = {"CUDA_MODULE_LOADING", "CUDA_DEVICE_MAX_CONNECTIONS"};
enum { CUDA__NENV = sizeof cuda__env_names / sizeof cuda__env_names[0] };
static char *cuda__env_user[CUDA__NENV]; /* a copy of the user's value, NULL: unset */
static int cuda__env_lost[CUDA__NENV];   /* no memory for the copy: left as it is */
static int cuda__env_saved;

static void cuda__env_save(void)
{
    for (int i = 0; i < CUDA__NENV; i++) {
        const char *v = getenv(cuda__env_names[i]);
        cuda__env_user[i] = v ? strdup(v) : NULL;
        cuda__env_lost[i] = v && !cuda__env_user[i];
    }
    cuda__env_saved = 1;
}

static void cuda__heap_start(void);

static void cuda__all_started(void)
{
    cuda__heap_start();
    if (!cuda__env_saved)
        return;
    for (int i = 0; i < CUDA__NENV; i++) {
        const char *now = getenv(cuda__env_names[i]);
        if (cuda__env_lost[i]) {
            continue;
        } else if (!cuda__env_user[i]) {
            if (now)
                unsetenv(cuda__env_names[i]);
        } else if (!now || strcmp(now, cuda__env_user[i]) != 0) {
            setenv(cuda__env_names[i], cuda__env_user[i], 1);
        }
        free(cuda__env_user[i]);
        cuda__env_user[i] = NULL;
    }
    cuda__env_saved = 0;
}

/* The driver's start (cuInit, about 100 ms) and the settings and environment
 * that must precede it, once: at the runtime's start (cuda__discover), or
 * before main when the early start calls it (cuda__prepare). */
static pthread_once_t cuda__prep_once = PTHREAD_ONCE_INIT;
static int cuda__prep_n;
static cudaError_t cuda__prep_err;

static void cuda__prepare_once(void)
{
    /* settings read once, before any helper runs */
    cuda__spin_settings();
    cuda__pin_settings();
    (void)cuda__staging();
    const char *s = getenv("MACC_CUDA_STREAMS");
    if (s && *s) {
        long v = maccrt_parse_positive(s);
        if (v < 1 || v > CUDA__MAX_STREAMS)
            maccrt_fatal(NULL, "MACC_CUDA_STREAMS: invalid value '%s' (expected 1 to %d)", s,
                         CUDA__MAX_STREAMS);
        cuda__nstreams = (int)v;
    }
    const char *sm = getenv("MACC_CUDA_SLAB_MAX");
    if (sm && *sm) {
        char *end = NULL;
        unsigned long long v = strtoull(sm, &end, 10);
        if (!end || *end || v > ((unsigned long long)64 << 20))
            maccrt_fatal(NULL, "MACC_CUDA_SLAB_MAX: invalid value '%s' (expected 0 to %llu bytes)", sm,
                         (unsigned long long)64 << 20);
        cuda__slab_max = (size_t)v;
    }
    const char *sp = getenv("MACC_CUDA_SPLIT");
    if (sp && *sp) {
        long v = maccrt_parse_positive(sp);
        if (v < 1 || v > 8)
            maccrt_fatal(NULL, "MACC_CUDA_SPLIT: invalid value '%s' (expected 1 to 8)", sp);
        cuda__split = (int)v;
    }
    cuda__env_save();
    /* Every kernel loaded when a GPU's context starts, not at its first
     * launch (CUDA's lazy loading, the default since 12.2): a region's first
     * task on each GPU took 37 ms instead of 7 (nbody on two H200s), the
     * scheduler learned that GPU as slow and gave it few tasks. The user's
     * own CUDA_MODULE_LOADING wins. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    /* The GPU's hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS): CUDA's
     * 8, or the user's setting. Each queue costs the process about 17 ms of
     * driver time per GPU at its start and as much again at its exit, one
     * GPU after the other (the driver does not start contexts in parallel),
     * and one of the GPU's channels, which all processes on it share (see
     * cuda__start_context). Programs with deferred regions had one queue per
     * helper stream (32) until 2026-11-27: on four H200s a program then took
     * 4.8-5.1 s where it takes 2.0-2.8 with 8, and on one GPU nbody, matmul
     * and stream ran no faster with 32 (nbody 65536 10 2048: 5.2-5.6
     * TFLOP/s with 32, 5.7-6.1 with 8; docs/RUNTIME.md). */
    const char *conn = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    if (conn && *conn)
        cuda__conn = (int)strtol(conn, NULL, 10);
    cuda__prep_err = cudaGetDeviceCount(&cuda__prep_n);
    if (cuda__prep_err != cudaSuccess)
        cuda__clear();
}

static void cuda__prepare(void)
{
    pthread_once(&cuda__prep_once, cuda__prepare_once);
}

static int cuda__discover(void)
{
    cuda__prepare();
    cudaError_t e = cuda__prep_err;
    int n = cuda__prep_n;
    if (e != cudaSuccess) {
        /* No driver, no device, a driver older than the runtime...: no GPU,
         * and a host-only run. Said only when GPUs are mandatory. */
        if (maccrt_rt.offload == MACCRT_OFFLOAD_MANDATORY && e != cudaErrorNoDevice)
            maccrt_warn(NULL, "CUDA: %s", cudaGetErrorString(e));
        return 0;
    }
    return n > 0 ? n * cuda__split : 0;
}

/* Undoes a partial cuda__init_device (before any helper started). */
static void cuda__discard(cuda__gpu *g)
{
    for (int i = 0; i < g->nhelpers; i++)
        if (g->helpers[i].own)
            (void)cudaStreamDestroy(g->helpers[i].own);
    for (int i = 0; i < g->nlanes; i++) {
        if (g->lanes[i].lo)
            (void)cudaStreamDestroy(g->lanes[i].lo);
        if (g->lanes[i].hi)
            (void)cudaStreamDestroy(g->lanes[i].hi);
        for (int k = 0; k < CUDA__AHEAD_MAX; k++)
            if (g->lanes[i].ev[k])
                (void)cudaEventDestroy(g->lanes[i].ev[k]);
    }
    if (g->data_stream)
        (void)cudaStreamDestroy(g->data_stream);
    if (g->alloc_stream)
        (void)cudaStreamDestroy(g->alloc_stream);
    cuda__clear();
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cv);
    pthread_cond_destroy(&g->ready_cv);
    pthread_mutex_destroy(&g->data_lock);
    free(g);
}

/* Gives the initialising thread its current device back. */
static void cuda__restore(int prev, int ord)
{
    if (prev >= 0 && prev != ord && cudaSetDevice(prev) != cudaSuccess)
        cuda__clear();
}

/* Creates (or takes) ord's primary context and makes it current. Each of a
 * context's hardware work queues takes one of the GPU's channels, which every
 * process on the GPU shares: with many programs on it (MPI ranks sharing a
 * GPU, a test suite's parallel jobs), a new context can find no room, and
 * CUDA says out of memory although the memory is free (an H100: 15 other
 * processes with 32 queues each). The context is then asked for again with
 * 8 queues (when it had more), then 2, then after short waits (other
 * programs end) before the GPU is given up (48 copies of nbody started at
 * once on an H100 all ran on the GPU so; with 32 queues and no fallback 40
 * of 48 gave it up). The process's later GPUs are asked for with what the
 * last one got. */
static cudaError_t cuda__start_context(maccrt_device *d, int ord)
{
    cudaError_t e = cudaSuccess;
    for (int try = 0;; try++) {
        if (cudaInitDevice(ord, cudaDeviceScheduleBlockingSync, cudaInitDeviceFlagsAreValid) !=
            cudaSuccess)
            cuda__clear();
        e = cudaSetDevice(ord);
        if (e == cudaSuccess || e != cudaErrorMemoryAllocation || try >= 6)
            break;
        cuda__clear();
        if (cuda__conn > 2) {
            int fewer = cuda__conn > 8 ? 8 : 2;
            char v[16];
            snprintf(v, sizeof v, "%d", fewer);
            setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 1);
            maccrt_warn(NULL, "%s: no room on the GPU for a context with %d hardware queues; asking for %d",
                        d->name, cuda__conn, fewer);
            cuda__conn = fewer;
        } else {
            struct timespec ts = {0, 100 * 1000 * 1000L * try}; /* 0.1 s, 0.2 s, ... */
            nanosleep(&ts, NULL);
        }
    }
    return e;
}

static int cuda__init_device(maccrt_device *d)
{
    int ord = d->index / cuda__split;
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess)
        prev = -1;
    cuda__clear();

    /* Blocking synchronisation, so that waiting helpers sleep. cudaInitDevice
     * sets the flags when it creates the primary context; if the context was
     * already active (the program used CUDA before), cudaSetDeviceFlags
     * replaces them (older drivers refuse with cudaErrorSetOnActiveProcess,
     * which is harmless: the device then keeps its flags). */
    cudaError_t e = cuda__start_context(d, ord);
    if (e != cudaSuccess) {
        cuda__clear();
        maccrt_warn(NULL, "%s: %s", d->name, cudaGetErrorString(e));
        return (int)e;
    }
    unsigned flags = 0;
    if (cudaGetDeviceFlags(&flags) != cudaSuccess ||
        (flags & cudaDeviceScheduleMask) != cudaDeviceScheduleBlockingSync) {
        cuda__clear();
        if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess)
            cuda__clear();
    }

    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    e = cudaGetDeviceProperties(&prop, ord);
    if (e != cudaSuccess) {
        cuda__clear();
        maccrt_warn(NULL, "%s: %s", d->name, cudaGetErrorString(e));
        cuda__restore(prev, ord);
        return (int)e;
    }
    d->cc = prop.major * 10 + prop.minor;
    d->mem_bytes = prop.totalGlobalMem / (size_t)cuda__split;
    /* the threads its SMs hold at once: the default tokens of regions whose kernels fill it */
    d->wave = (long long)prop.multiProcessorCount * prop.maxThreadsPerMultiProcessor;

    cuda__gpu *g = maccrt_xcalloc(1, sizeof *g);
    g->dev = d;
    g->ordinal = ord;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cv, NULL);
    pthread_cond_init(&g->ready_cv, NULL);
    pthread_mutex_init(&g->data_lock, NULL);

    if (cudaDeviceGetAttribute(&g->pageable, cudaDevAttrPageableMemoryAccess, ord) != cudaSuccess) {
        g->pageable = 0;
        cuda__clear();
    }
    int pools = 0;
    if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, ord) != cudaSuccess)
        pools = 0;
    if (pools && cudaDeviceGetDefaultMemPool(&g->pool, ord) != cudaSuccess)
        pools = 0;
    if (pools) {
        /* Keep freed memory in the pool rather than give it back at every
         * synchronisation; trimmed when an allocation fails. */
        uint64_t threshold = UINT64_MAX;
        if (cudaMemPoolSetAttribute(g->pool, cudaMemPoolAttrReleaseThreshold, &threshold) !=
            cudaSuccess)
            cuda__clear();
    }
    g->pools = pools != 0;
    cuda__clear();
    if (cuda__slab_max)
        g->slabs = maccrt_slabs_new(cuda__slab_get, cuda__slab_put, cuda__slab_max);

    e = cudaStreamCreateWithFlags(&g->data_stream, cudaStreamNonBlocking);
    const char *as = getenv("MACC_CUDA_ALLOC_STREAM");
    if (e == cudaSuccess && g->pools && !(as && !strcmp(as, "0")))
        e = cudaStreamCreateWithFlags(&g->alloc_stream, cudaStreamNonBlocking);
    /* the data stream's staging buffer now: made at its first use, by a
     * program thread's write-back in the middle of the run (a task completed
     * in a taskwait), its cudaHostAlloc held every copy of both GPUs 1.3-1.6
     * ms (matmul 16 256 on two H200s, traced: seven peer copies and the
     * fills of both GPUs waited for it, once per GPU) */
    if (e == cudaSuccess && cuda__staging())
        (void)cuda__stage_make(&g->data_stage, CUDA__STAGE_CHUNK);
    g->async = cuda__async;
    g->free_lane = -1;
    int n = g->async ? (cuda__async_helpers < cuda__nstreams ? cuda__async_helpers : cuda__nstreams)
                     : cuda__nstreams;
    for (int i = 0; i < n && e == cudaSuccess; i++) {
        cuda__helper *h = &g->helpers[i];
        h->gpu = g;
        h->slot = i;
        h->run_lane = -1;
        h->launched = -1;
        e = cudaStreamCreateWithFlags(&h->own, cudaStreamNonBlocking);
        h->stream = h->own;
        g->nhelpers = i + 1;
    }
    int least = 0, greatest = 0;
    if (g->async && maccrt_env_flag(&cuda__prio_on, "MACC_CUDA_PRIORITY", 1) &&
        cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) {
        cuda__clear();
        least = greatest = 0;
    }
    for (int i = 0; g->async && i < cuda__nstreams && e == cudaSuccess; i++) {
        cuda__lane *sl = &g->lanes[i];
        e = cudaStreamCreateWithFlags(&sl->lo, cudaStreamNonBlocking);
        sl->stream = sl->lo;
        if (e == cudaSuccess && greatest < least &&
            cudaStreamCreateWithPriority(&sl->hi, cudaStreamNonBlocking, greatest) != cudaSuccess) {
            cuda__clear(); /* (that lane without: its tasks on lo) */
            sl->hi = NULL;
        }
        for (int k = 0; e == cudaSuccess && k < cuda__ahead_max - 1; k++)
            e = cudaEventCreateWithFlags(&sl->ev[k], cudaEventDisableTiming);
        cuda__lane_put(g, i);
        g->nlanes = i + 1;
    }
    /* tasks that run at once: one per helper, or per lane */
    d->concurrency = g->async ? g->nlanes : g->nhelpers;
    d->shares = 1; /* its kernels at once share its SMs (eft's occupancy term) */
    if (e != cudaSuccess) {
        cuda__clear();
        maccrt_warn(NULL, "%s: cannot create streams: %s", d->name, cudaGetErrorString(e));
        cuda__discard(g);
        cuda__restore(prev, ord);
        return (int)e;
    }

    d->pdata = g;
    int started = 0;
    for (int i = 0; i < g->nhelpers; i++) {
        cuda__helper *h = &g->helpers[i];
        if (pthread_create(&h->thread, NULL, cuda__helper_main, h) != 0)
            continue; /* fewer helpers: fewer tasks in flight, still correct */
        h->started = 1;
        started++;
        char name[32]; /* the kernel keeps 15 characters */
        snprintf(name, sizeof name, "macc-nv%d.%d", d->index % 100, i % 100);
        name[15] = 0;
        (void)pthread_setname_np(h->thread, name);
    }
    if (!started) {
        d->pdata = NULL;
        maccrt_warn(NULL, "%s: cannot start a helper thread", d->name);
        cuda__discard(g);
        cuda__restore(prev, ord);
        return -1;
    }
    /* The GPU is offered once every helper is ready: a helper's start
     * (cudaSetDevice, the cudaHostAlloc of its staging slots) takes 0.3 ms
     * or so, one helper after the other in the driver, and on two H200s the
     * second GPU's first tasks waited up to 9 ms for its helpers (matmul-L
     * ran no kernel on it for its first 10 ms of 34). */
    pthread_mutex_lock(&g->lock);
    while (g->nready < started)
        pthread_cond_wait(&g->ready_cv, &g->lock);
    pthread_mutex_unlock(&g->lock);
    if (g->async)
        cuda__async_start(g); /* (g's device current) */
    /* the copying crew shares the staged copies' memcpy (crew.c): by default
     * half the cores that every GPU's helpers and watcher leave */
    if (cuda__staging())
        (void)maccrt_crew_start(cuda__prep_n * cuda__split * (n + 1));
    cuda__enable_peers(g);
    cuda__pool_warm(g);
    cuda__restore(prev, ord);
    cuda__ngpus_up++;
    return 0;
}

static void cuda__fini_device(maccrt_device *d)
{
    cuda__gpu *g = d->pdata;
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    atomic_fetch_add(&g->work, 1);
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lock);
    for (int i = 0; i < g->nhelpers; i++) {
        if (g->helpers[i].started) {
            pthread_join(g->helpers[i].thread, NULL);
            g->helpers[i].started = 0;
        }
    }
    cuda__async_stop(g);
    maccrt_crew_stop(); /* (every task has ended; later copies run alone) */
    /* What kernels printed: the device's printf buffer is written out at a
     * synchronisation, and the helpers learn that kernels ended by polling
     * events, which does not write it; every task has ended here. */
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess)
        cuda__clear();
    if (cudaSetDevice(g->ordinal) == cudaSuccess) {
        if (cudaDeviceSynchronize() != cudaSuccess)
            cuda__clear();
        cuda__restore(prev, g->ordinal);
    } else {
        cuda__clear();
    }
    /* g, its streams and its memory stay: a task created by a later atexit
     * handler runs inline on the data stream, and the CUDA runtime releases
     * everything with the contexts at exit. */
}

static int cuda__version_ok(const maccrt_device *d, const MACC_Version *v)
{
    return v->min_cc <= 0 || d->cc >= v->min_cc;
}

static cudaError_t cuda__malloc(cuda__gpu *g, void **p, size_t bytes, cudaStream_t s)
{
    if (g->pools)
        return cudaMallocAsync(p, bytes, s);
    return cudaMalloc(p, bytes);
}

/* The stream a stream-ordered allocation for the call c is made on and
 * waited for (usable from every stream once its stream reached it): the
 * GPU's own stream for allocations, on which nothing else is queued, not
 * the caller's. A helper's allocation of a task's tile on the task's stream
 * waited for the fills of the task's earlier tiles queued there (staged
 * copies of 2 MiB tiles, 0.4 ms each while two GPUs shared the host's
 * memory), and every helper of the GPU that needed a block of the same
 * size waited for that slab (slab.c: one growth at a time): allocations of
 * 0.4-1 ms, 5 ms of the helpers' time in the first 2 ms of matmul 8 512 on
 * two H200s (traced). */
static cudaStream_t cuda__alloc_stream(const cuda__call *c)
{
    return c->g->alloc_stream ? c->g->alloc_stream : c->stream;
}

/* A slab for g->slabs (ctx: the cuda__call of the allocation that needs
 * it), usable from every stream once it returns. */
static void *cuda__slab_get(void *ctx, size_t bytes)
{
    cuda__call *c = ctx;
    void *p = NULL;
    cudaStream_t s = cuda__alloc_stream(c);
    cudaError_t e = cuda__malloc(c->g, &p, bytes, s);
    if (e == cudaSuccess && c->g->pools)
        e = cuda__wait(s);
    if (e != cudaSuccess) {
        cuda__clear();
        return NULL;
    }
    return p;
}

static void cuda__slab_put(void *ctx, void *p)
{
    cuda__call *c = ctx;
    if ((c->g->pools ? cudaFreeAsync(p, c->stream) : cudaFree(p)) != cudaSuccess)
        cuda__clear();
}

static void *cuda__alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)hostptr;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    void *p = NULL;
    if (bytes == 0)
        bytes = 1;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess && g->slabs) {
        /* a block of a slab; too large for one, or none to be had: the
         * driver's allocation below (which waits for the device and trims
         * the pool when short) */
        int nomem = 0;
        p = maccrt_slabs_alloc(g->slabs, bytes, &c, &nomem);
        if (p) {
            cuda__leave(&c);
            return p;
        }
    }
    if (e == cudaSuccess) {
        cudaStream_t s = cuda__alloc_stream(&c);
        e = cuda__malloc(g, &p, bytes, s);
        if (e == cudaErrorMemoryAllocation) {
            /* Memory freed on other streams may not be back yet, and the pool
             * keeps what it has: let the device finish its work (no hang
             * unless a kernel never ends), trim the pool, try once more. */
            cuda__clear();
            p = NULL;
            e = cudaDeviceSynchronize();
            if (e == cudaSuccess) {
                if (g->slabs)
                    (void)maccrt_slabs_trim(g->slabs, &c);
                if (g->pools && cudaMemPoolTrimTo(g->pool, 0) != cudaSuccess)
                    cuda__clear();
                e = cuda__malloc(g, &p, bytes, s);
            }
        }
        /* A stream-ordered allocation is usable from other streams once its
         * stream has reached it. */
        if (e == cudaSuccess && g->pools)
            e = cuda__wait(s);
    }
    cuda__leave(&c);
    if (e != cudaSuccess) {
        cuda__clear();
        cuda__last_alloc_error = e == cudaErrorMemoryAllocation ? MACCRT_ERR_NOMEM : (int)e;
        return NULL;
    }
    return p;
}

static int cuda__alloc_error(maccrt_device *d)
{
    (void)d;
    return cuda__last_alloc_error;
}

static void cuda__free(maccrt_device *d, void *p)
{
    if (!p || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__gpu *g = d->pdata;
    if (g->slabs && maccrt_slabs_free(g->slabs, p))
        return; /* back in its class's free list: no call on the GPU */
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess)
        e = g->pools ? cudaFreeAsync(p, c.stream) : cudaFree(p);
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear(); /* a broken context shows at the next copy or kernel */
}

/* ---- page-locked host ranges ----------------------------------------------------------------
 *
 * The directory's entries (cache.c) of MACC_CUDA_PIN_MIN bytes or more
 * (default 4 MiB; MACC_CUDA_PIN=0: none) have the whole pages inside their
 * host range registered (cudaHostRegister, portable to every GPU) while the
 * entry lives, so that their copies run at DMA speed instead of through the
 * driver's pageable staging. A range is registered once (counted: two GPUs
 * caching the same section share it); one that overlaps another registered
 * range stays pageable. Copies touching a registered range are split into
 * the pageable head and tail and the page-locked middle. Unregistered when
 * the last entry goes away (cache__free: synchronisation points and exit),
 * before the program can free the memory. */
typedef struct cuda__pinned {
    maccrt_rnode node;
    int refs; /* entries using it; 0: kept (MACC_CUDA_PIN_KEEP) */
    int heap; /* a heap block of the program's (macc --pinned): no entry counts, ends with the block */
} cuda__pinned;
static pthread_mutex_t cuda__pin_lock = PTHREAD_MUTEX_INITIALIZER;
static maccrt_rtree cuda__pins;
static long cuda__pin_min; /* 0: off (set by cuda__pin_settings, in discover) */
static int cuda__pin_keep;      /* registrations outlive their entries (set with cuda__pin_min) */
static atomic_long cuda__nkept; /* registrations no entry uses, kept */
static __thread int cuda__in_pin; /* this thread holds cuda__pin_lock (frees inside CUDA calls) */

/* The C library's free and realloc when the program was linked with
 * -Wl,--wrap=free,--wrap=realloc,--wrap=munmap (macc's driver links GPU
 * programs so): then every free of the program comes through the wrappers
 * below. */
extern void __real_free(void *p) __attribute__((weak));
extern void *__real_realloc(void *p, size_t n) __attribute__((weak));
extern int __real_munmap(void *p, size_t n) __attribute__((weak));

static void cuda__pin_settings(void)
{
    const char *on = getenv("MACC_CUDA_PIN"), *min = getenv("MACC_CUDA_PIN_MIN"),
               *keep = getenv("MACC_CUDA_PIN_KEEP");
    /* Entries of 4 MiB or more are registered, and the registrations kept
     * until the program frees the memory (MACC_CUDA_PIN_KEEP, the default in
     * a program linked by macc, whose free, realloc and munmap come through
     * the wrappers below): on two H200s STREAM's 16 MiB blocks ran 718-745 /
     * 1015-1102 GB/s staged on one / two GPUs, 951-953 / 1309-1560 kept.
     * Without keeping, a registration lasts only until the next
     * synchronisation point and costs about 1 ms per 16 MiB while holding the
     * driver, so staged copies (cuda__copy_staged) win: matmul's 2 MiB tiles
     * ran 1142 / 914 GFLOP/s registered, 1597 / 1681 staged; STREAM 387 / 348
     * GB/s registered, 477 / 724 staged. Smaller entries stay staged, kept or
     * not: with MACC_CUDA_PIN_MIN=65536 matmul's 512 KiB tiles ran 564-588
     * GFLOP/s on one H200 against 1402-1618 staged (each copy cut into a
     * staged head and tail and a registered middle). */
    long v = min && *min ? maccrt_parse_positive(min) : 0;
    int wrapped = &__real_free && &__real_realloc && &__real_munmap;
    int asked_keep = keep && *keep && strcmp(keep, "0") != 0;
    int want_keep = keep && *keep ? asked_keep : 1;
    if (want_keep && !wrapped) {
        if (asked_keep)
            maccrt_warn(NULL, "MACC_CUDA_PIN_KEEP needs a program linked by macc (its free, realloc and munmap "
                              "wrapped); registrations end at synchronisation points");
        want_keep = 0;
    }
    int want = (on && strcmp(on, "0") != 0) || v > 0 || want_keep;
    if (on && !strcmp(on, "0"))
        want = want_keep = 0;
    cuda__pin_keep = want_keep;
    cuda__pin_min = !want ? 0 : v > 0 ? v : 4L << 20;
}

enum { CUDA__PAGE = 4096 };

/* The whole pages inside [p, p + bytes) in [*a, *b); 0 when there are none. */
static int cuda__pages_in(uintptr_t p, size_t bytes, uintptr_t *a, uintptr_t *b)
{
    *a = (p + CUDA__PAGE - 1) & ~(uintptr_t)(CUDA__PAGE - 1);
    *b = (p + bytes) & ~(uintptr_t)(CUDA__PAGE - 1);
    return *a < *b;
}

static int cuda__pin_range(const void *p, size_t bytes, uintptr_t *a, uintptr_t *b)
{
    if (!cuda__pin_min || bytes < (size_t)cuda__pin_min)
        return 0;
    return cuda__pages_in((uintptr_t)p, bytes, a, b);
}

static void cuda__pin_take(void)
{
    pthread_mutex_lock(&cuda__pin_lock);
    cuda__in_pin = 1;
}

static void cuda__pin_drop(void)
{
    cuda__in_pin = 0;
    pthread_mutex_unlock(&cuda__pin_lock);
}

/* No CUDA call is made under cuda__pin_lock: with the program's free
 * wrapped, the CUDA runtime's own frees come through cuda__forget_host, and
 * a thread inside a CUDA call (holding the runtime's locks) would wait for
 * cuda__pin_lock while its holder waited in cudaHostRegister for them. So
 * ranges leave the tree under the lock and are unregistered after it. */

/* Takes n out of the registered ranges (cuda__pin_lock held); the caller
 * unregisters it (cuda__unregister_all) once the lock is dropped. */
static void cuda__pin_remove(cuda__pinned *n, cuda__pinned **gone, int *ngone)
{
    maccrt_rtree_remove(&cuda__pins, &n->node);
    if (n->refs == 0 && (cuda__pin_keep || n->heap))
        atomic_fetch_sub(&cuda__nkept, 1);
    gone[(*ngone)++] = n;
}

static void cuda__unregister_all(cuda__pinned **gone, int n)
{
    for (int i = 0; i < n; i++) {
        double t0 = maccrt_now();
        if (!atomic_load(&maccrt_rt.fatal) && cudaHostUnregister((void *)gone[i]->node.start) != cudaSuccess)
            cuda__clear();
        maccrt_trace_event(MACCRT_TRACE_PIN, maccrt_rt.host, "unregister", t0, maccrt_now(),
                           gone[i]->node.end - gone[i]->node.start);
        free(gone[i]);
    }
}

/* Takes the kept registrations (no entry uses them) overlapping [a, b) out
 * of the tree, up to 16 (cuda__pin_lock held): their number in *ngone; 1
 * when one in use overlaps [a, b). */
enum { CUDA__GONE_MAX = 16 };
static int cuda__take_kept(uintptr_t a, uintptr_t b, cuda__pinned **gone, int *ngone)
{
    int used = 0;
    *ngone = 0;
    cuda__pinned *found[CUDA__GONE_MAX];
    int n = 0;
    for (maccrt_rnode *r = maccrt_rtree_first_overlap(&cuda__pins, a, b); r && r->start < b && n < CUDA__GONE_MAX;
         r = maccrt_rtree_next_below(&cuda__pins, r, b)) {
        if (((cuda__pinned *)r)->refs == 0)
            found[n++] = (cuda__pinned *)r;
        else
            used = 1;
    }
    for (int i = 0; i < n; i++)
        cuda__pin_remove(found[i], gone, ngone);
    return used;
}

/* The registration of exactly [a, b), if there is one, gets one more entry
 * (cuda__pin_lock held); 0 when there is none. */
static int cuda__pin_ref(uintptr_t a, uintptr_t b)
{
    maccrt_rnode *r = maccrt_rtree_first_overlap(&cuda__pins, a, b);
    if (!r || r->start != a || r->end != b)
        return 0;
    if (((cuda__pinned *)r)->refs++ == 0 && cuda__pin_keep)
        atomic_fetch_sub(&cuda__nkept, 1); /* a kept one: no cost this time */
    return 1;
}

/* [a, b), just registered, goes into the tree: an entry's registration (one
 * entry uses it) or a heap block's (none does; kept until the block goes).
 * When another range was registered over it meanwhile, it is undone (stays
 * pageable). */
static void cuda__pin_insert(uintptr_t a, uintptr_t b, int heap)
{
    cuda__pinned *n = maccrt_xcalloc(1, sizeof *n);
    n->node.start = a;
    n->node.end = b;
    n->refs = !heap;
    n->heap = heap;
    cuda__pin_take();
    int clash = maccrt_rtree_first_overlap(&cuda__pins, a, b) != NULL;
    if (!clash) {
        maccrt_rtree_insert(&cuda__pins, &n->node);
        if (heap)
            atomic_fetch_add(&cuda__nkept, 1); /* ends with the block (cuda__forget_range) */
    }
    cuda__pin_drop();
    if (clash)
        cuda__unregister_all(&n, 1);
}

/* Can d's kernels read p? With HMM/ATS (pageable memory access) any host
 * address; else memory the driver knows (its own, managed, page-locked). */
static int cuda__host_reachable(maccrt_device *d, const void *p)
{
    const cuda__gpu *g = d->pdata;
    if (g && g->pageable)
        return 1;
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cuda__clear();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged || a.type == cudaMemoryTypeHost;
}

static void cuda__host_pin(maccrt_device *d, const void *p, size_t bytes)
{
    uintptr_t a, b;
    if (!cuda__pin_range(p, bytes, &a, &b) || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__pinned *gone[CUDA__GONE_MAX];
    int ngone = 0, used = 0;
    for (;;) {
        cuda__pin_take();
        maccrt_rnode *h = maccrt_rtree_first_overlap(&cuda__pins, a, b);
        if (h && ((cuda__pinned *)h)->heap) {
            cuda__pin_drop(); /* inside a page-locked heap block (macc --pinned): nothing to do */
            return;
        }
        if (cuda__pin_ref(a, b)) {
            cuda__pin_drop();
            return;
        }
        used = maccrt_rtree_first_overlap(&cuda__pins, a, b) && cuda__take_kept(a, b, gone, &ngone);
        cuda__pin_drop();
        cuda__unregister_all(gone, ngone);
        if (used || ngone < CUDA__GONE_MAX)
            break;
    }
    if (used)
        return; /* a range overlapping one in use stays pageable */
    double t0 = maccrt_now();
    cudaError_t e = cudaHostRegister((void *)a, b - a, cudaHostRegisterPortable);
    maccrt_trace_event(MACCRT_TRACE_PIN, d, "register", t0, maccrt_now(), b - a);
    if (e != cudaSuccess) {
        cuda__clear(); /* stays pageable (or another thread registered it first: counted below) */
        cuda__pin_take();
        (void)cuda__pin_ref(a, b);
        cuda__pin_drop();
        return;
    }
    cuda__pin_insert(a, b, 0);
}

static void cuda__host_unpin(maccrt_device *d, const void *p, size_t bytes)
{
    (void)d;
    uintptr_t a, b;
    if (!cuda__pin_range(p, bytes, &a, &b))
        return;
    cuda__pinned *gone[1];
    int ngone = 0;
    cuda__pin_take();
    maccrt_rnode *r = maccrt_rtree_first_overlap(&cuda__pins, a, b);
    if (r && r->start == a && r->end == b && !((cuda__pinned *)r)->heap && --((cuda__pinned *)r)->refs == 0) {
        if (cuda__pin_keep)
            atomic_fetch_add(&cuda__nkept, 1); /* until the program frees the memory */
        else
            cuda__pin_remove((cuda__pinned *)r, gone, &ngone);
    }
    cuda__pin_drop();
    cuda__unregister_all(gone, ngone);
}

/* MACC_CUDA_PIN_KEEP: a registration outlives its entries, so that the next
 * synchronisation interval's copies of the same data go at DMA speed with
 * no second registration, and ends when the program frees or reallocates
 * the block that holds it (malloc_usable_size gives the block's extent) or
 * unmaps its pages. Memory released where the wrapping does not reach (a
 * free or munmap inside a shared library) must not have been mapped while
 * this is on. */
static void cuda__forget_range(uintptr_t a, uintptr_t b)
{
    if (a >= b || cuda__in_pin || atomic_load(&cuda__nkept) == 0)
        return;
    cuda__pinned *gone[CUDA__GONE_MAX];
    int n;
    do {
        cuda__pin_take();
        (void)cuda__take_kept(a, b, gone, &n);
        cuda__pin_drop();
        cuda__unregister_all(gone, n);
    } while (n == CUDA__GONE_MAX);
}

static void cuda__forget_host(void *p)
{
    if (p && !cuda__in_pin && atomic_load(&cuda__nkept) != 0)
        cuda__forget_range((uintptr_t)p, (uintptr_t)p + malloc_usable_size(p));
}

/* ---- the program's heap, page-locked (macc --pinned) ----------------------------------------
 *
 * `macc --pinned` (NVHPC's -gpu=pinned) also links the program with
 * --wrap=malloc,--wrap=calloc,--wrap=aligned_alloc,--wrap=posix_memalign:
 * every block of MACC_CUDA_PIN_MIN bytes or more (default 4 MiB) that the
 * program allocates is page-aligned and registered (cudaHostRegister,
 * portable) as a whole, once: when it is allocated if the GPUs have started,
 * else when they start (blocks allocated before the runtime starts are
 * noted; the CUDA context is not made inside the program's malloc). It stays
 * registered until the program frees or reallocates it (the wrapped free
 * and realloc below), so every copy of every section inside it, to any GPU,
 * in any synchronisation interval, goes at DMA speed with no staging memcpy
 * and no registration in the middle of the program's run: a matmul tile's
 * fill from the host took 41 us instead of 145 on an H100, and matmul
 * (`16 256`) on one GPU ran 17% faster (bench/RESULTS.md, ninth session).
 * What it costs: registering runs at 16-18 GB/s and holds every thread's
 * GPU work meanwhile (bench/hostreg.cu), paid where the program allocates,
 * and the memory cannot be paged out. MACC_CUDA_PIN_HEAP=0 (or
 * MACC_CUDA_PIN=0) turns it off at run time; no GPU in use: nothing is
 * registered. */
extern void *__real_malloc(size_t n) __attribute__((weak));
extern void *__real_calloc(size_t n, size_t m) __attribute__((weak));
extern void *__real_aligned_alloc(size_t align, size_t n) __attribute__((weak));
extern int __real_posix_memalign(void **out, size_t align, size_t n) __attribute__((weak));

static atomic_long cuda__heap_min = -1;   /* blocks of this many bytes are registered; 0: off; -1: unread */
static atomic_int cuda__heap_state;        /* 0: GPUs not started (noted), 1: started, 2: no GPU (off) */
static pthread_mutex_t cuda__heap_lock = PTHREAD_MUTEX_INITIALIZER;
static maccrt_rtree cuda__heap_noted;      /* blocks allocated before the GPUs started */
static atomic_long cuda__nheap_noted;
static __thread int cuda__in_heap;         /* inside cudaHostRegister (its own allocations pass) */

static size_t cuda__heap_threshold(void)
{
    long v = atomic_load_explicit(&cuda__heap_min, memory_order_relaxed);
    if (v >= 0)
        return v ? (size_t)v : SIZE_MAX;
    const char *on = getenv("MACC_CUDA_PIN_HEAP"), *pin = getenv("MACC_CUDA_PIN"),
               *min = getenv("MACC_CUDA_PIN_MIN");
    long m = min && *min ? maccrt_parse_positive(min) : -1;
    v = (on && !strcmp(on, "0")) || (pin && !strcmp(pin, "0")) ? 0 : m > 0 ? m : 4L << 20;
    atomic_store(&cuda__heap_min, v);
    return v ? (size_t)v : SIZE_MAX;
}

/* Registers the whole pages of [p, p + n), a heap block of the program's. */
static void cuda__heap_register(uintptr_t p, size_t n)
{
    uintptr_t a, b;
    if (!cuda__pages_in(p, n, &a, &b) || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__in_heap = 1;
    cudaError_t e = cudaHostRegister((void *)a, b - a, cudaHostRegisterPortable);
    cuda__in_heap = 0;
    if (e != cudaSuccess) {
        cuda__clear(); /* stays pageable: staged copies */
        return;
    }
    cuda__pin_insert(a, b, 1);
}

/* A new block of the program's, of the threshold or more: registered now, or
 * noted until the GPUs start. */
static void cuda__heap_note(void *p, size_t n)
{
    if (!p || cuda__in_heap)
        return;
    int st = atomic_load(&cuda__heap_state);
    if (st == 0) {
        maccrt_rnode *nd = maccrt_xcalloc(1, sizeof *nd);
        nd->start = (uintptr_t)p;
        nd->end = (uintptr_t)p + n;
        pthread_mutex_lock(&cuda__heap_lock);
        st = atomic_load(&cuda__heap_state);
        if (st == 0) {
            maccrt_rtree_insert(&cuda__heap_noted, nd);
            atomic_fetch_add(&cuda__nheap_noted, 1);
        }
        pthread_mutex_unlock(&cuda__heap_lock);
        if (st == 0)
            return;
        free(nd);
    }
    if (st == 1)
        cuda__heap_register((uintptr_t)p, n);
}

/* The GPUs have started (or none did): the noted blocks are registered. */
static void cuda__heap_start(void)
{
    pthread_mutex_lock(&cuda__heap_lock);
    atomic_store(&cuda__heap_state, cuda__ngpus_up > 0 ? 1 : 2);
    maccrt_rtree noted = cuda__heap_noted;
    memset(&cuda__heap_noted, 0, sizeof cuda__heap_noted);
    atomic_store(&cuda__nheap_noted, 0);
    pthread_mutex_unlock(&cuda__heap_lock);
    while (noted.root) {
        maccrt_rnode *nd = noted.root;
        maccrt_rtree_remove(&noted, nd);
        if (cuda__ngpus_up > 0)
            cuda__heap_register(nd->start, nd->end - nd->start);
        free(nd);
    }
}

/* p is freed or reallocated: no longer noted. */
static void cuda__heap_unnote(void *p)
{
    if (!p || atomic_load(&cuda__nheap_noted) == 0)
        return;
    pthread_mutex_lock(&cuda__heap_lock);
    maccrt_rnode *nd = maccrt_rtree_find(&cuda__heap_noted, (uintptr_t)p);
    if (nd && nd->start == (uintptr_t)p) {
        maccrt_rtree_remove(&cuda__heap_noted, nd);
        atomic_fetch_sub(&cuda__nheap_noted, 1);
    } else {
        nd = NULL;
    }
    pthread_mutex_unlock(&cuda__heap_lock);
    free(nd);
}

/* A page-aligned block of whole pages (n >= the threshold), noted. */
static void *cuda__heap_alloc(size_t align, size_t n, int zero)
{
    size_t len = (n + CUDA__PAGE - 1) & ~(size_t)(CUDA__PAGE - 1);
    if (len < n) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = NULL;
    int e = __real_posix_memalign ? __real_posix_memalign(&p, align > CUDA__PAGE ? align : CUDA__PAGE, len)
                                  : posix_memalign(&p, align > CUDA__PAGE ? align : CUDA__PAGE, len);
    if (e) {
        errno = e;
        return NULL;
    }
    if (zero)
        memset(p, 0, n);
    cuda__heap_note(p, len);
    return p;
}

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **out, size_t align, size_t n);
void __wrap_free(void *p);
void *__wrap_realloc(void *p, size_t n);
int __wrap_munmap(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    if (n < cuda__heap_threshold() || cuda__in_heap)
        return __real_malloc(n);
    return cuda__heap_alloc(CUDA__PAGE, n, 0);
}

void *__wrap_calloc(size_t n, size_t m)
{
    if (m && n > SIZE_MAX / m) {
        errno = ENOMEM;
        return NULL;
    }
    if (n * m < cuda__heap_threshold() || cuda__in_heap)
        return __real_calloc(n, m);
    return cuda__heap_alloc(CUDA__PAGE, n * m, 1);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    if (n < cuda__heap_threshold() || cuda__in_heap || !align || (align & (align - 1)))
        return __real_aligned_alloc(align, n);
    return cuda__heap_alloc(align, n, 0);
}

int __wrap_posix_memalign(void **out, size_t align, size_t n)
{
    if (n < cuda__heap_threshold() || cuda__in_heap || align < sizeof(void *) || (align & (align - 1)))
        return __real_posix_memalign(out, align, n);
    int e0 = errno;
    void *p = cuda__heap_alloc(align, n, 0);
    if (!p) {
        int e = errno;
        errno = e0;
        return e;
    }
    *out = p;
    return 0;
}

void __wrap_free(void *p)
{
    cuda__forget_host(p);
    cuda__heap_unnote(p);
    __real_free(p);
}

void *__wrap_realloc(void *p, size_t n)
{
    cuda__forget_host(p);
    cuda__heap_unnote(p);
    /* (without --pinned, __real_malloc is not linked: the C library's realloc) */
    if (n < cuda__heap_threshold() || cuda__in_heap || !__real_malloc)
        return __real_realloc(p, n);
    /* a block of the threshold or more: a new registered one (the old one's
     * registration ended above, before its pages could go back) */
    void *q = cuda__heap_alloc(CUDA__PAGE, n, 0);
    if (!q || !p)
        return q;
    size_t old = malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    __real_free(p);
    return q;
}

int __wrap_munmap(void *p, size_t n)
{
    cuda__forget_range((uintptr_t)p, (uintptr_t)p + n);
    return __real_munmap(p, n);
}

/* ---- staged copies of pageable host memory ----------------------------------------------
 *
 * cudaMemcpyAsync from or to pageable memory goes through the driver's own
 * staging, which serialises the copies of every thread of the process: a
 * task's 512 KiB tiles copied at 5-7 GB/s in all whatever the number of
 * helpers and GPUs (matmul on two H200s), and registering such a tile
 * (cudaHostRegister) costs more than the copy. So each helper (and each
 * GPU's data stream) has its own page-locked buffer of two slots: a copy of
 * cuda__stage_min bytes or more of pageable memory is cut into chunks, each
 * moved between the program's memory and a slot by the calling thread
 * (memcpy) while the other slot's chunk moves between the slot and the GPU
 * (DMA on the caller's stream): the helpers of every GPU copy at once, at
 * the speed of the host's memory. MACC_CUDA_STAGE=0 turns it off. */
/* Copies of 2 x CUDA__STAGE_BIG bytes or more go through a second buffer of
 * two 2 MiB slots, made at the first such copy of the thread: each chunk
 * costs a DMA launch, an event and a wait beside its bytes, so 512 KiB slots
 * moved 16 MiB copies at 24 GB/s (one H200, 8 threads) and 2 MiB slots at
 * 46 (the link: 54), two H200s 45 -> 82 GB/s (bench/copybw.cu). Small
 * copies keep the small slots (4 MiB of page-locked memory per thread only
 * where large copies happen). MACC_CUDA_STAGE_BIG=0: small slots only. */
#define CUDA__STAGE_BIG (2u << 20)
/* Pageable copies of at least this many bytes are staged (MACC_CUDA_STAGE_MIN). */
static size_t cuda__stage_min; /* (set by cuda__staging) */
static int cuda__stage_big_on = 1; /* (set by cuda__staging) */
static int cuda__stage_nt = 1;     /* MACC_CUDA_STAGE_NT (set by cuda__staging) */

static int cuda__stage_on = -1;

static int cuda__staging(void)
{
    if (cuda__stage_on < 0) {
        const char *v = getenv("MACC_CUDA_STAGE");
        cuda__stage_on = !(v && !strcmp(v, "0"));
        const char *m = getenv("MACC_CUDA_STAGE_MIN");
        long b = m && *m ? strtol(m, NULL, 10) : 0;
        cuda__stage_min = b < 0 ? 0 : (size_t)b;
        const char *big = getenv("MACC_CUDA_STAGE_BIG");
        cuda__stage_big_on = !(big && !strcmp(big, "0"));
        const char *nt = getenv("MACC_CUDA_STAGE_NT");
        cuda__stage_nt = !(nt && !strcmp(nt, "0"));
    }
    return cuda__stage_on;
}

/* Makes st's buffer of two `chunk` slots and its events (its GPU current);
 * 0 when it cannot. */
static int cuda__stage_make(cuda__stage *st, size_t chunk)
{
    if (st->failed)
        return 0;
    if (!st->buf) {
        void *p = NULL;
        st->chunk = chunk;
        if (cudaHostAlloc(&p, 2 * chunk, cudaHostAllocPortable) != cudaSuccess ||
            cudaEventCreateWithFlags(&st->ev[0], cudaEventDisableTiming) != cudaSuccess ||
            cudaEventCreateWithFlags(&st->ev[1], cudaEventDisableTiming) != cudaSuccess) {
            cuda__clear();
            st->failed = 1; /* (a partial buffer stays: at most one per helper) */
            return 0;
        }
        st->buf = p;
        st->job = maccrt_crew_job_new();
    }
    return 1;
}

/* The calling thread's staging buffer for g and a copy of `bytes` (a
 * helper's small one is made when the helper starts: made at its first copy,
 * the 16 helpers of two GPUs took 10-20 ms of cudaHostAlloc, one after the
 * other, inside the program's first step; the data stream's when the GPU
 * starts, cuda__init_device; the large ones at the first large copy), or
 * NULL: pageable copies then. */
static cuda__stage *cuda__stage_get(cuda__gpu *g, const cuda__call *c, size_t bytes)
{
    if (!cuda__staging())
        return NULL;
    cuda__stage *st = NULL, *big = NULL;
    if (cuda__self && cuda__self->gpu == g) {
        st = &cuda__self->stage;
        big = &cuda__self->stage_big;
    } else if (c->locked) {
        st = &g->data_stage;
        big = &g->data_stage_big;
    }
    if (big && cuda__stage_big_on && bytes >= 2 * (size_t)CUDA__STAGE_BIG && cuda__stage_make(big, CUDA__STAGE_BIG))
        return big;
    return st && cuda__stage_make(st, CUDA__STAGE_CHUNK) ? st : NULL;
}

/* Waits for an event: polled first, as cuda__wait polls a stream. */
static cudaError_t cuda__event_wait(cudaEvent_t ev)
{
    for (int i = 0; i < 20000; i++) {
        cudaError_t e = cudaEventQuery(ev);
        if (e != cudaErrorNotReady)
            return e;
    }
    return cudaEventSynchronize(ev);
}

/* A copy of pageable host memory through st's slots on stream s; returns
 * with the last chunk's DMA possibly in flight for h2d (the caller waits
 * for the stream), all bytes home for d2h. */
/* Chunk i of a staged copy of `bytes` through st: its length, and its slot. */
static size_t cuda__chunk_len(const cuda__stage *st, size_t bytes, size_t i)
{
    size_t off = i * st->chunk;
    return bytes - off < st->chunk ? bytes - off : st->chunk;
}

static char *cuda__slot(const cuda__stage *st, size_t i)
{
    return st->buf + (i & 1) * st->chunk;
}

static cudaError_t cuda__copy_staged(cuda__stage *st, cudaStream_t s, char *dst, const char *src,
                                     size_t bytes, int to_dev)
{
    const size_t C = st->chunk;
    size_t nchunks = (bytes + C - 1) / C;
    cudaError_t e = cudaSuccess;
    if (to_dev) {
        for (size_t i = 0; i < nchunks && e == cudaSuccess; i++) {
            /* the slot's last chunk must have left, this copy's or an
             * earlier one's: the head and the tail of a copy around a
             * registered middle are two staged copies, and the head's DMA
             * is queued behind the middle's (a tail written over the head
             * in its slot: wrong data on the GPU, MACC_CUDA_PIN_MIN) */
            /* (the slots taken in turn across copies: a copy of one chunk
             * left on its way, the next one's chunk goes into the other
             * slot meanwhile, cuda__copy_h2d_start) */
            unsigned k = (st->turn + (unsigned)i) & 1;
            if (st->h2d_out[k]) {
                if ((e = cuda__event_wait(st->ev[k])) != cudaSuccess)
                    break;
                st->h2d_out[k] = 0;
            }
            /* A chunk of a copy to the GPU into its staging slot (16-byte aligned). With
             * the C library's memcpy the slot's lines stayed modified in the copying
             * core's cache and the DMA that read them waited for each: on two H100s a
             * 512 KiB chunk's DMA took 45-60 us after its memcpy (65 us), the next
             * chunk's slot waited as long. Non-temporal stores write the slot to memory
             * (the program's bytes are read once, prefetched ahead): memcpy 76-87 us,
             * DMA 21-24 us, a whole staged tile 139 -> 115 us; unpinned matmul 16 256
             * 2481-2639 -> 2664-2945 GFLOP/s on one GPU, 4053-4174 -> 4473-4981 on two,
             * 8 512 3418-3453 -> 3608-3671 on one. MACC_CUDA_STAGE_NT=0: the C
             * library's memcpy. The copy is shared with the copying crew in parts
             * (maccrt_crew_copy), each fenced, and returns once all are in the slot. */
            maccrt_crew_copy(st->job, cuda__slot(st, k), src + i * C, cuda__chunk_len(st, bytes, i), cuda__stage_nt);
            e = cudaMemcpyAsync(dst + i * C, cuda__slot(st, k), cuda__chunk_len(st, bytes, i), cudaMemcpyHostToDevice,
                                s);
            if (e == cudaSuccess && (e = cudaEventRecord(st->ev[k], s)) == cudaSuccess)
                st->h2d_out[k] = 1;
        }
        st->turn += (unsigned)nchunks;
    } else {
        /* chunk i+1 comes into the other slot while chunk i goes out (a
         * slot's fill left on its way goes first: cuda__copy_h2d_start) */
        for (int k = 0; k < 2 && e == cudaSuccess; k++)
            if (st->h2d_out[k] && (e = cuda__event_wait(st->ev[k])) == cudaSuccess)
                st->h2d_out[k] = 0;
        for (size_t i = 0; i <= nchunks && e == cudaSuccess; i++) {
            if (i < nchunks) {
                e = cudaMemcpyAsync(cuda__slot(st, i), src + i * C, cuda__chunk_len(st, bytes, i),
                                    cudaMemcpyDeviceToHost, s);
                if (e == cudaSuccess)
                    e = cudaEventRecord(st->ev[i & 1], s);
            }
            if (i > 0 && e == cudaSuccess && (e = cuda__event_wait(st->ev[(i - 1) & 1])) == cudaSuccess)
                maccrt_crew_copy(st->job, dst + (i - 1) * C, cuda__slot(st, i - 1), cuda__chunk_len(st, bytes, i - 1),
                                 0);
        }
    }
    return e;
}

static cudaEvent_t cuda__fence_take(cuda__helper *h, cudaError_t *err);

/* A copy in either direction (host: the host side), waited for: the parts
 * outside and inside a page-locked range apart, the pageable ones staged
 * when they are large enough. Managed or page-locked memory that the
 * runtime did not register (the program's own cudaMallocHost) is copied
 * directly: cudaPointerGetAttributes says which. fence (host to device):
 * in a helper of d running a task, the copy is left on its way and *fence
 * is an event recorded after it (cuda__copy_h2d_start). */
static int cuda__copy_dir(maccrt_device *d, void *dst, const void *src, size_t bytes, int to_dev, void **fence)
{
    if (!bytes)
        return 0;
    uintptr_t host = (uintptr_t)(to_dev ? src : dst), lo = host, hi = host;
    if (cuda__pins.root) {
        cuda__pin_take();
        maccrt_rnode *r = maccrt_rtree_first_overlap(&cuda__pins, host, host + bytes);
        if (r) {
            lo = r->start > host ? r->start : host;
            hi = r->end < host + bytes ? r->end : host + bytes;
        }
        cuda__pin_drop();
    }
    size_t cut[3] = {lo - host, hi - lo, host + bytes - hi}; /* head, pinned, tail */
    if (hi == lo)
        cut[0] = bytes, cut[2] = 0;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    int stage = 0; /* the pageable parts may be staged */
    if (e == cudaSuccess && cuda__staging() && (cut[0] >= cuda__stage_min || cut[2] >= cuda__stage_min)) {
        struct cudaPointerAttributes pa;
        if (cudaPointerGetAttributes(&pa, (const void *)host) == cudaSuccess &&
            pa.type == cudaMemoryTypeUnregistered)
            stage = 1;
        cuda__clear();
    }
    /* The page-locked middle first, its DMA running while the pageable parts
     * are staged; but to the GPU, a pageable part of one slot or less goes
     * before it. Its slot is given back when its DMA is done (an event,
     * cuda__copy_staged), and a sliver queued behind a middle of 16 MiB made
     * the helper's next staged copy wait for that whole DMA: a fill of
     * STREAM's blocks (malloc'd, so a page's head and a 16-byte tail around
     * each block's registered pages) held its helper 0.3-0.6 ms where the
     * page-locked heap's took 10-15 us; now 22-55 us (one H200; STREAM's
     * rate did not move: 0.991 by pairs, eight rounds). */
    int sliver[3] = {to_dev && cut[0] && cut[0] <= CUDA__STAGE_CHUNK, 0,
                     to_dev && cut[2] && cut[2] <= CUDA__STAGE_CHUNK};
    int order[3], n = 0; /* the slivers, the middle, the other pageable parts */
    for (int i = 0; i < 3; i += 2)
        if (sliver[i])
            order[n++] = i;
    order[n++] = 1;
    for (int i = 0; i < 3; i += 2)
        if (!sliver[i])
            order[n++] = i;
    for (int k = 0; k < 3 && e == cudaSuccess; k++) {
        int i = order[k];
        size_t off = i == 0 ? 0 : i == 1 ? cut[0] : cut[0] + cut[1];
        if (!cut[i])
            continue;
        cuda__stage *st = i != 1 && stage && cut[i] >= cuda__stage_min ? cuda__stage_get(g, &c, cut[i]) : NULL;
        if (st)
            e = cuda__copy_staged(st, c.stream, (char *)dst + off, (const char *)src + off, cut[i], to_dev);
        else
            e = cudaMemcpyAsync((char *)dst + off, (const char *)src + off, cut[i], cudaMemcpyDefault, c.stream);
    }
    cuda__helper *h = cuda__self;
    if (e == cudaSuccess && fence && !c.locked && h && h->in_task) {
        cudaEvent_t ev = cuda__fence_take(h, &e);
        if (e == cudaSuccess && (e = cudaEventRecord(ev, c.stream)) == cudaSuccess)
            *fence = (void *)ev;
    }
    if (e == cudaSuccess && !(fence && *fence))
        e = cuda__wait(c.stream);
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
    return (int)e;
}

static int cuda__copy_h2d(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    return cuda__copy_dir(d, dst, src, bytes, 1, NULL);
}

static int cuda__copy_d2h(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    return cuda__copy_dir(d, dst, src, bytes, 0, NULL);
}

/* ---- asynchronous fills (the directory's "asynchronous fills") -------------------------------
 *
 * A helper filling its task's maps returns once the copy is queued on the
 * task's stream (a staged chunk's memcpy done; the staging slot is
 * reused only after its DMA, cuda__copy_staged), with an event recorded
 * after it as the fence. Its task's kernels follow on the same stream;
 * other users order themselves after the event: a helper of this GPU or
 * another (a peer copy) makes its stream wait (cudaStreamWaitEvent, which
 * takes an event of any device), other threads wait for it. Each helper
 * has up to CUDA__FENCES events, taken in turn and recorded again only once
 * done (queried), so a fence read late waits for later bytes, never for
 * fewer; all taken and none done, the helper waits for the oldest. */
static cudaEvent_t cuda__fence_take(cuda__helper *h, cudaError_t *err)
{
    for (int k = 0; k < h->nfence; k++) {
        int i = (h->next_fence + k) % h->nfence;
        if (cudaEventQuery(h->fence[i]) == cudaSuccess) {
            h->next_fence = (i + 1) % h->nfence;
            return h->fence[i];
        }
    }
    if (h->nfence < CUDA__FENCES) {
        cudaEvent_t ev;
        if ((*err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess)
            return NULL;
        h->fence[h->nfence++] = ev;
        return ev;
    }
    int i = h->next_fence;
    h->next_fence = (i + 1) % h->nfence;
    *err = cudaEventSynchronize(h->fence[i]);
    return h->fence[i];
}

static int cuda__copy_h2d_start(maccrt_device *d, void *dst, const void *src, size_t bytes, void **fence)
{
    *fence = NULL;
    return cuda__copy_dir(d, dst, src, bytes, 1, fence);
}

static void cuda__fence_order(maccrt_device *d, void *fence)
{
    cuda__gpu *g = d->pdata;
    cuda__helper *h = cuda__self;
    cudaEvent_t ev = (cudaEvent_t)fence;
    if (h && h->gpu == g && h->set_err == cudaSuccess && cudaStreamWaitEvent(h->stream, ev, 0) == cudaSuccess)
        return;
    cuda__clear();
    if (cuda__event_wait(ev) != cudaSuccess)
        cuda__clear(); /* (the copy's own error comes with its task's kernels) */
}

static int cuda__fence_done(maccrt_device *d, void *fence)
{
    (void)d;
    cudaError_t e = cudaEventQuery((cudaEvent_t)fence);
    if (e != cudaSuccess && e != cudaErrorNotReady)
        cuda__clear();
    return e == cudaSuccess;
}

/* Peer access from g to the memory of `from`: enabled once per pair where
 * cudaDeviceCanAccessPeer says so (g current). Without it
 * cudaMemcpyPeerAsync still copies (the driver stages it). */
static pthread_mutex_t cuda__peer_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char cuda__peer_state[MACCRT_MAX_DEVICES][MACCRT_MAX_DEVICES]; /* 0 not tried, 1 on, 2 off */

static void cuda__enable_peer(cuda__gpu *g, cuda__gpu *from)
{
    if (g->ordinal >= MACCRT_MAX_DEVICES || from->ordinal >= MACCRT_MAX_DEVICES)
        return;
    pthread_mutex_lock(&cuda__peer_lock);
    unsigned char *st = &cuda__peer_state[g->ordinal][from->ordinal];
    if (*st == 0) {
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, g->ordinal, from->ordinal) != cudaSuccess)
            can = 0;
        cudaError_t e = can ? cudaDeviceEnablePeerAccess(from->ordinal, 0) : cudaErrorPeerAccessUnsupported;
        *st = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled ? 1 : 2;
        cuda__clear();
        if (*st == 1) {
            /* memory from the stream-ordered pools is not covered by peer
             * access: each pool grants the other GPU access itself (else the
             * driver stages the copy through the host) */
            struct cudaMemAccessDesc ad;
            memset(&ad, 0, sizeof ad);
            ad.location.type = cudaMemLocationTypeDevice;
            ad.flags = cudaMemAccessFlagsProtReadWrite;
            ad.location.id = g->ordinal;
            if (from->pools && cudaMemPoolSetAccess(from->pool, &ad, 1) != cudaSuccess)
                cuda__clear();
            ad.location.id = from->ordinal;
            if (g->pools && cudaMemPoolSetAccess(g->pool, &ad, 1) != cudaSuccess)
                cuda__clear();
        }
    }
    pthread_mutex_unlock(&cuda__peer_lock);
}

/* Peer access between g (current) and every GPU initialised before it,
 * both ways, when g starts: enabling it later, at the first copy between
 * two GPUs, maps every allocation the pools hold by then and stalled both
 * GPUs for 20-40 ms in the middle of a run (matmul on two H200s). */
static cuda__gpu *cuda__started[MACCRT_MAX_DEVICES];

/* The stream-ordered pool's first allocation after it starts or after its
 * access changes costs 15 ms on an H200 (30 ms with two GPUs, whose first
 * allocations wait for each other), and every task that needs the memory,
 * or data being filled into it, waits: matmul's first 30 ms on two H200s
 * ran no kernel. Made at start instead (g current, no helper running a
 * task yet): one small allocation, given back to the pool. */
static void cuda__pool_warm(cuda__gpu *g)
{
    if (!g->pools)
        return;
    void *p = NULL;
    if (cudaMallocAsync(&p, (size_t)2 << 20, g->data_stream) == cudaSuccess)
        (void)cudaFreeAsync(p, g->data_stream);
    (void)cudaStreamSynchronize(g->data_stream);
    cuda__clear();
}

static void cuda__enable_peers(cuda__gpu *g)
{
    const char *no = getenv("MACC_NO_PEER"); /* copies through the host: no peer mappings either */
    if (g->ordinal >= MACCRT_MAX_DEVICES || (no && strcmp(no, "0") != 0))
        return;
    for (int o = 0; o < MACCRT_MAX_DEVICES; o++) {
        cuda__gpu *h = cuda__started[o];
        if (!h || o == g->ordinal)
            continue;
        cuda__enable_peer(g, h);
        if (cudaSetDevice(h->ordinal) == cudaSuccess) {
            cuda__enable_peer(h, g);
            cuda__pool_warm(h); /* (its access changed) */
            if (cudaSetDevice(g->ordinal) != cudaSuccess)
                cuda__clear();
        } else {
            cuda__clear();
        }
    }
    cuda__started[g->ordinal] = g;
}

/* A device-to-device copy into d, on the calling helper's stream (or d's
 * data stream), waited for; never through the program's host copy. */
static int cuda__copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                           size_t bytes)
{
    if (!bytes)
        return 0;
    cuda__gpu *g = d->pdata, *s = from->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess) {
        cuda__enable_peer(g, s);
        e = cudaMemcpyPeerAsync(dst, g->ordinal, src, s->ordinal, bytes, c.stream);
    }
    if (e == cudaSuccess)
        e = cuda__wait(c.stream);
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
    return (int)e;
}

/* Write-backs through this GPU (cache.c): from's bytes come over the GPUs'
 * link into the helper's relay buffer, CUDA__RELAY at a time, and go home
 * from there as any d2h copy (staged where the host side is pageable), on
 * the helper's stream. Only in d's helpers (-1 elsewhere: the caller copies
 * from `from`); the buffer is made at the first such copy and kept. */
#define CUDA__RELAY (8u << 20)

static int cuda__copy_d2h_via(maccrt_device *d, void *dst, maccrt_device *from, const void *src, size_t bytes)
{
    cuda__gpu *g = d->pdata, *f = from->pdata;
    cuda__helper *h = cuda__self;
    if (!h || h->gpu != g || h->set_err != cudaSuccess || !f)
        return -1;
    if (!h->relay) {
        void *p = NULL;
        if (cudaMalloc(&p, CUDA__RELAY) != cudaSuccess) {
            cuda__clear();
            return -1;
        }
        h->relay = p;
    }
    cuda__enable_peer(g, f);
    for (size_t off = 0; off < bytes; off += CUDA__RELAY) {
        size_t n = bytes - off < CUDA__RELAY ? bytes - off : CUDA__RELAY;
        /* (the d2h that follows on the same stream waits for it; the next
         * chunk's comes after that d2h returned) */
        cudaError_t e = cudaMemcpyPeerAsync(h->relay, g->ordinal, (const char *)src + off, f->ordinal, n, h->stream);
        if (e != cudaSuccess) {
            cuda__clear();
            return (int)e;
        }
        int err = cuda__copy_dir(d, (char *)dst + off, h->relay, n, 0, NULL);
        if (err)
            return err;
    }
    return 0;
}

/* ---- managed memory (managed.c's backend) ---- */

static void *cuda__managed_alloc(maccrt_device *d, size_t bytes)
{
    cuda__gpu *g = d->pdata;
    cuda__call c;
    void *p = NULL;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess)
        e = cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
    cuda__leave(&c);
    if (e != cudaSuccess) {
        cuda__clear();
        return NULL;
    }
    return p;
}

static void cuda__managed_free(maccrt_device *d, void *p)
{
    if (!p || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess)
        e = cudaFree(p);
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
}

static int cuda__mem_info(maccrt_device *d, size_t *free_b, size_t *total_b)
{
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess)
        e = cudaMemGetInfo(free_b, total_b);
    cuda__leave(&c);
    if (e == cudaSuccess) { /* (MACC_CUDA_SPLIT: the devices of one GPU share it) */
        *free_b /= (size_t)cuda__split;
        *total_b /= (size_t)cuda__split;
    }
    if (e != cudaSuccess)
        cuda__clear();
    return (int)e;
}

/* A hint: errors (e.g. a GPU without concurrent managed access) are ignored. */
static void cuda__prefetch(maccrt_device *d, const void *p, size_t bytes, int to_host)
{
    if (!bytes || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess) {
        struct cudaMemLocation loc;
        memset(&loc, 0, sizeof loc);
        loc.type = to_host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
        loc.id = to_host ? 0 : g->ordinal;
        e = cudaMemPrefetchAsync(p, bytes, loc, 0, c.stream);
        if (e == cudaSuccess && to_host)
            e = cuda__wait(c.stream); /* the host reads it next */
    }
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
}

/* Placement (placement.c): keep managed [p, p + bytes) in host memory, mapped
 * for d (preferred location host, accessed by d), or withdraw both. */
static void cuda__advise_place(maccrt_device *d, const void *p, size_t bytes, int host)
{
    if (!bytes || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess) {
        struct cudaMemLocation hl, dl;
        memset(&hl, 0, sizeof hl);
        memset(&dl, 0, sizeof dl);
        hl.type = cudaMemLocationTypeHost;
        dl.type = cudaMemLocationTypeDevice;
        dl.id = g->ordinal;
        e = cudaMemAdvise(p, bytes, host ? cudaMemAdviseSetPreferredLocation : cudaMemAdviseUnsetPreferredLocation, hl);
        if (e == cudaSuccess)
            e = cudaMemAdvise(p, bytes, host ? cudaMemAdviseSetAccessedBy : cudaMemAdviseUnsetAccessedBy, dl);
    }
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
}

/* ---- migration calibration (placement.c's density threshold) ---- */

/* A kernel in PTX, loaded through the runtime's library API (no nvcc needed
 * to build this file): thread i reads and writes one word of page
 * (i * step) % n of base (4 KiB pages), so that the pages are touched once
 * each in a scattered order, as a sparse object's accesses touch them. */
static const char cuda__touch_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry macc_touch_pages(.param .u64 p_base, .param .u64 p_n, .param .u64 p_step)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<5>;\n"
    "    .reg .b64 %rd<10>;\n"
    "    ld.param.u64 %rd1, [p_base];\n"
    "    ld.param.u64 %rd2, [p_n];\n"
    "    ld.param.u64 %rd3, [p_step];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mul.wide.u32 %rd4, %r1, %r2;\n"
    "    cvt.u64.u32 %rd5, %r3;\n"
    "    add.u64 %rd4, %rd4, %rd5;\n"
    "    setp.ge.u64 %p, %rd4, %rd2;\n"
    "    @%p bra DONE;\n"
    "    mul.lo.u64 %rd6, %rd4, %rd3;\n"
    "    rem.u64 %rd6, %rd6, %rd2;\n"
    "    shl.b64 %rd7, %rd6, 12;\n"
    "    add.u64 %rd8, %rd1, %rd7;\n"
    "    ld.global.u32 %r4, [%rd8];\n"
    "    add.u32 %r4, %r4, 1;\n"
    "    st.global.u32 [%rd8], %r4;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

static cudaError_t cuda__touch(cudaKernel_t k, void *base, unsigned long long npages, cudaStream_t s)
{
    unsigned long long step = 1000003ULL; /* a prime above any page count used here: a permutation */
    void *args[] = {&base, &npages, &step};
    unsigned blocks = (unsigned)((npages + 255) / 256);
    return cudaLaunchKernel((const void *)k, (dim3){blocks ? blocks : 1, 1, 1}, (dim3){256, 1, 1}, args, 0, s);
}

/* Moves `bytes` of managed memory from the host to d twice over, and times
 * each: by page faults (the kernel above touches every 4 KiB page of a
 * buffer resident on the host) and by cudaMemPrefetchAsync; the best of two
 * of each. The buffer is allocated only if the GPU has twice its size free
 * beyond the margin managed.c keeps (MACC_MANAGED_MARGIN's default: 10% of
 * the memory, at least 256 MiB), and freed before returning. 0 on success. */
static int cuda__calibrate_migration(maccrt_device *d, size_t bytes, double *fault_s, double *prefetch_s)
{
    static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
    static cudaLibrary_t lib;
    static cudaKernel_t kern;
    static int lib_state; /* 0 not loaded, 1 loaded, -1 failed */
    if (atomic_load(&maccrt_rt.fatal) || bytes < ((size_t)1 << 20))
        return -1;
    bytes &= ~(size_t)4095;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    void *buf = NULL;
    int ok = 0;
    cudaError_t e = cuda__enter(g, &c);
    size_t free_b = 0, total_b = 0;
    if (e == cudaSuccess)
        e = cudaMemGetInfo(&free_b, &total_b);
    size_t margin = total_b / 10 > ((size_t)256 << 20) ? total_b / 10 : ((size_t)256 << 20);
    if (e == cudaSuccess && free_b > margin && (free_b - margin) / 2 >= bytes) {
        pthread_mutex_lock(&lib_lock);
        if (lib_state == 0) {
            lib_state = -1;
            if (cudaLibraryLoadData(&lib, cuda__touch_ptx, NULL, NULL, 0, NULL, NULL, 0) == cudaSuccess &&
                cudaLibraryGetKernel(&kern, lib, "macc_touch_pages") == cudaSuccess)
                lib_state = 1;
        }
        int have = lib_state == 1;
        pthread_mutex_unlock(&lib_lock);
        e = have ? cudaMallocManaged(&buf, bytes, cudaMemAttachGlobal) : cudaErrorNotSupported;
    } else if (e == cudaSuccess) {
        e = cudaErrorMemoryAllocation; /* not enough free: not measured */
    }
    if (e == cudaSuccess) {
        struct cudaMemLocation host, dev;
        memset(&host, 0, sizeof host);
        memset(&dev, 0, sizeof dev);
        host.type = cudaMemLocationTypeHost;
        dev.type = cudaMemLocationTypeDevice;
        dev.id = g->ordinal;
        unsigned long long npages = bytes / 4096;
        memset(buf, 1, bytes); /* first touch: on the host */
        e = cuda__touch(kern, buf, 0, c.stream); /* loads the kernel; touches nothing */
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(c.stream);
        double best_f = 0.0, best_p = 0.0;
        for (int k = 0; k < 2 && e == cudaSuccess; k++) {
            double t0 = maccrt_now();
            e = cuda__touch(kern, buf, npages, c.stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c.stream);
            double tf = maccrt_now() - t0;
            if (e == cudaSuccess)
                e = cudaMemPrefetchAsync(buf, bytes, host, 0, c.stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c.stream);
            t0 = maccrt_now();
            if (e == cudaSuccess)
                e = cudaMemPrefetchAsync(buf, bytes, dev, 0, c.stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c.stream);
            double tp = maccrt_now() - t0;
            if (e == cudaSuccess)
                e = cudaMemPrefetchAsync(buf, bytes, host, 0, c.stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c.stream);
            if (e == cudaSuccess) {
                best_f = k == 0 || tf < best_f ? tf : best_f;
                best_p = k == 0 || tp < best_p ? tp : best_p;
            }
        }
        if (e == cudaSuccess && best_f > 0.0 && best_p > 0.0) {
            *fault_s = best_f;
            *prefetch_s = best_p;
            ok = 1;
        }
    }
    if (buf && cudaFree(buf) != cudaSuccess)
        cuda__clear();
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
    return ok ? 0 : -1;
}

static void cuda__advise_read_mostly(maccrt_device *d, const void *p, size_t bytes, int set)
{
    if (!bytes || atomic_load(&maccrt_rt.fatal))
        return;
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess) {
        struct cudaMemLocation loc;
        memset(&loc, 0, sizeof loc);
        loc.type = cudaMemLocationTypeDevice; /* ignored for read-mostly */
        loc.id = g->ordinal;
        e = cudaMemAdvise(p, bytes, set ? cudaMemAdviseSetReadMostly : cudaMemAdviseUnsetReadMostly,
                          loc);
    }
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear(); /* a hint */
}

static void cuda__submit(maccrt_device *d, maccrt_task *t)
{
    cuda__gpu *g = d->pdata;
    pthread_mutex_lock(&g->lock);
    cuda__enqueue_locked(g, &g->head, &g->tail, t);
    atomic_fetch_add_explicit(&g->nqueued, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g->lock);
}

static int cuda__queued(maccrt_device *d)
{
    cuda__gpu *g = d->pdata;
    return g ? atomic_load_explicit(&g->nqueued, memory_order_relaxed) : 0;
}

/* Waits for a stream. A short kernel is waited for by polling (the helper's
 * core is reserved for the GPU): the blocking wait's interrupt wake-up costs
 * tens of microseconds per task. Past MACC_CUDA_SPIN_US (default 1000) of
 * polling, the wait blocks. */
static atomic_int cuda__spinners; /* helpers polling now */
static atomic_int cuda__dozers;   /* helpers dozing now (maccrt_doze) */

static long cuda__spin_ns;                   /* MACC_CUDA_SPIN_US, in ns */
static int cuda__spin_max;                   /* MACC_CUDA_SPINNERS */

/* Read once, in cuda__discover (before any helper). */
static void cuda__spin_settings(void)
{
    const char *v = getenv("MACC_CUDA_SPIN_US");
    long us = v && *v ? strtol(v, NULL, 10) : 1000;
    const char *m = getenv("MACC_CUDA_SPINNERS");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long mx = m && *m ? strtol(m, NULL, 10) : (ncpu / 2 > 2 ? ncpu / 2 : 2);
    cuda__spin_max = mx < 0 ? 0 : mx > 1024 ? 1024 : (int)mx;
    cuda__spin_ns = (us < 0 ? 0 : us) * 1000L;
    const char *iv = getenv("MACC_CUDA_IDLE_SPIN_US");
    long ius = iv && *iv ? strtol(iv, NULL, 10) : 500;
    cuda__idle_ns = (ius < 0 ? 0 : ius > 1000000 ? 1000000 : ius) * 1000L;
    const char *av = getenv("MACC_CUDA_ASYNC");
    cuda__async = !(av && !strcmp(av, "0"));
    const char *hv = getenv("MACC_CUDA_HELPERS");
    long nh = hv && *hv ? strtol(hv, NULL, 10) : CUDA__DEFAULT_HELPERS;
    cuda__async_helpers = nh < 1 ? 1 : nh > CUDA__MAX_STREAMS ? CUDA__MAX_STREAMS : (int)nh;
    const char *ah = getenv("MACC_CUDA_AHEAD");
    long na = ah && *ah ? strtol(ah, NULL, 10) : 4;
    cuda__ahead_max = na < 1 ? 1 : na > CUDA__AHEAD_MAX ? CUDA__AHEAD_MAX : (int)na;
    const char *xi = getenv("MACC_CUDA_IDLE_SPINNERS");
    long ni = xi && *xi ? strtol(xi, NULL, 10) : 4;
    cuda__idle_max = ni < 1 ? 1 : ni > CUDA__MAX_STREAMS ? CUDA__MAX_STREAMS : (int)ni;
}

struct cuda__query {
    cudaStream_t s;
    cudaError_t e;
};

static int cuda__stream_done(const void *arg)
{
    struct cuda__query *q = (struct cuda__query *)arg;
    q->e = cudaStreamQuery(q->s);
    return q->e != cudaErrorNotReady;
}

static cudaError_t cuda__wait(cudaStream_t s)
{
    long spin_ns = cuda__spin_ns;
    /* At most MACC_CUDA_SPINNERS (default half the cores) poll at once:
     * with 32 helpers per GPU, every helper polling for its kernel took the
     * cores from the host's tasks and from the helpers that had work to do.
     * The others block at once. */
    if (spin_ns > 0) {
        cudaError_t e = cudaErrorNotReady;
        int spun = 0;
        if (atomic_fetch_add(&cuda__spinners, 1) < cuda__spin_max) {
            spun = 1;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            do {
                e = cudaStreamQuery(s);
                clock_gettime(CLOCK_MONOTONIC, &t1);
            } while (e == cudaErrorNotReady &&
                     (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) <= spin_ns);
        }
        atomic_fetch_sub(&cuda__spinners, 1);
        if (e == cudaErrorNotReady && spun) {
            /* a kernel of milliseconds: dozed through (maccrt_doze), its end
             * seen within a step; as many doze at once as may poll */
            if (atomic_fetch_add(&cuda__dozers, 1) < cuda__spin_max) {
                struct cuda__query q = {s, cudaErrorNotReady};
                (void)maccrt_doze(cuda__stream_done, &q, MACCRT_DOZE_NS);
                e = q.e;
            }
            atomic_fetch_sub(&cuda__dozers, 1);
        }
        if (e != cudaErrorNotReady)
            return e;
    }
    return cudaStreamSynchronize(s);
}

/* ---- Asynchronous tasks ------------------------------------------------------------------
 *
 * A GPU's task used to keep its helper from its maps to its completion, the
 * helper polling its stream while the kernels ran: with 20 tasks in flight
 * per GPU, every one a thread, up to half the host's cores polled (perf,
 * matmul on two H200s: 28% of the process's CPU time under cudaStreamQuery)
 * and two GPUs' small tasks were bound by the host's cores (under taskset,
 * 16 cores of 32 took 23% from two GPUs). Now (the default; MACC_CUDA_ASYNC=0
 * goes back) a GPU has MACC_CUDA_HELPERS helpers (default 8) and
 * MACC_CUDA_STREAMS lanes (default 32: the tasks in flight), each a stream.
 * A helper takes a task and a free lane, makes the task's maps on the lane's
 * stream, launches its kernels there and goes on with other work: the lane
 * keeps the kernels. One thread per GPU, the watcher, polls the streams of
 * the lanes in flight (cudaStreamQuery; an error of the kernels shows
 * there), frees a lane whose kernels ended and queues its task for a helper,
 * which unmaps and completes it (maccrt_up.ran), before it takes new tasks.
 * The watcher polls for MACC_CUDA_SPIN_US (default 1000) after the last end
 * it saw, then dozes in steps (maccrt_doze_step) between polls, and sleeps
 * while nothing is in flight. (A word of host memory written by the GPU after
 * the kernels, cuStreamWriteValue32, read with plain loads, was tried in
 * place of the stream queries: nbody's 65536 bodies ran at a third of the
 * speed on an H100.) */
static int cuda__watch_wake(const void *arg)
{
    const cuda__gpu *g = arg;
    return atomic_load((atomic_int *)&g->inflight) > 0 || __atomic_load_n(&g->stop, __ATOMIC_ACQUIRE);
}

static void *cuda__watch_main(void *arg)
{
    cuda__gpu *g = arg;
    if (cudaSetDevice(g->ordinal) != cudaSuccess)
        cuda__clear(); /* (stream queries name their context) */
#ifdef __linux__
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* (the default 50 us would stretch each doze step) */
#endif
    long spin_ns = cuda__spin_ns > 0 ? cuda__spin_ns : 1000;
    double last = maccrt_now();
    for (;;) {
        if (atomic_load(&g->inflight) == 0) {
            if (__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE))
                break;
            /* nothing in flight: sleep until a launch (cuda__run) */
            pthread_mutex_lock(&g->wlock);
            atomic_store(&g->wsleep, 1);
            while (!cuda__watch_wake(g))
                pthread_cond_wait(&g->wcv, &g->wlock);
            atomic_store(&g->wsleep, 0);
            pthread_mutex_unlock(&g->wlock);
            last = maccrt_now();
            continue;
        }
        double now = maccrt_now();
        int found = 0;
        for (int i = 0; i < g->nlanes; i++) {
            if (cuda__lane_claim(g, i, 1))
                found = 1;
        }
        if (found) {
            last = now;
        } else if ((now - last) * 1e9 > (double)spin_ns) {
            /* kernels of milliseconds: a step's sleep between polls */
            long step = maccrt_doze_step();
            struct timespec ts = {0, step > 0 ? step : 20000};
            nanosleep(&ts, NULL);
        } else {
            maccrt_pause();
        }
    }
    return NULL;
}

/* Starts g's watcher and the slots' words (g's device current); without a
 * watcher, g's tasks run as before (a helper each, waiting). */
static void cuda__async_start(cuda__gpu *g)
{
    pthread_mutex_init(&g->wlock, NULL);
    pthread_cond_init(&g->wcv, NULL);
    int ok = pthread_create(&g->watcher, NULL, cuda__watch_main, g) == 0;
    if (ok) {
        char name[32];
        snprintf(name, sizeof name, "macc-nv%d.w", g->dev->index % 100);
        (void)pthread_setname_np(g->watcher, name);
    }
    pthread_mutex_lock(&g->lock);
    g->watcher_started = ok;
    if (!ok) {
        g->async = 0;
        g->dev->concurrency = g->nhelpers;
    }
    pthread_mutex_unlock(&g->lock);
}

/* After the helpers stopped (nothing in flight): the watcher stops. */
static void cuda__async_stop(cuda__gpu *g)
{
    if (!g->watcher_started)
        return;
    pthread_mutex_lock(&g->wlock);
    pthread_cond_signal(&g->wcv);
    pthread_mutex_unlock(&g->wlock);
    pthread_join(g->watcher, NULL);
    g->watcher_started = 0;
}

/* Kernels launched on helper h's lane (cuda__run): the lane keeps them, the
 * watcher sees their end. */
static void cuda__launched(cuda__gpu *g, cuda__helper *h, maccrt_task *t)
{
    cuda__lane *sl = &g->lanes[h->run_lane];
    if (h->behind) {
        /* launched ahead, behind the lane's tasks (cuda__ahead holds it):
         * claimed only once the one before it is finished */
        t->pfin = 1;
        sl->q[sl->n - 1]->pafter = t;
        sl->q[sl->n++] = t;
        atomic_fetch_add(&g->inflight, 1);
        return;
    }
    h->launched = h->run_lane;
    h->run_lane = -1;
    atomic_fetch_add(&g->inflight, 1);
    cuda__lane_lock(sl); /* (a free lane: only a claimer's look at it may hold it) */
    sl->q[0] = t;
    sl->n = 1;
    atomic_store_explicit(&sl->task, t, memory_order_release);
    cuda__lane_unlock(sl);
    if (atomic_load(&g->wsleep)) {
        pthread_mutex_lock(&g->wlock);
        pthread_cond_signal(&g->wcv);
        pthread_mutex_unlock(&g->wlock);
    }
}

/* ---- OpenMP's device queries in kernels ----------------------------------------------------
 *
 * Every generated device file has a __device__ copy of {its GPU's OpenMP
 * device number, the number of GPUs} (macc_device.h: omp_get_device_num,
 * omp_get_num_devices, omp_get_initial_device in kernels) and registers its
 * symbol at start-up through MACC_cuda_device_info. Each GPU writes the
 * registered symbols before its first task (and again when more are
 * registered, a library loaded later). */
#define CUDA__MAX_INFO 1024
static pthread_mutex_t cuda__info_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *cuda__info_syms[CUDA__MAX_INFO];
static atomic_int cuda__ninfo;

/* Every generated device file refers to this: a program linked by plain `cc`
 * instead of macc (no plugin, no device link step) is told so by the linker's
 * "undefined reference to `macc_link_this_program_with_macc'". Hidden: a
 * shared library built by macc has the plugin too, and the reference is
 * resolved within each linked module. */
extern const int macc_link_this_program_with_macc;
const int macc_link_this_program_with_macc = 1;

__attribute__((visibility("default"))) void MACC_cuda_device_info(const void *symbol);
void MACC_cuda_device_info(const void *symbol)
{
    pthread_mutex_lock(&cuda__info_lock);
    int n = atomic_load(&cuda__ninfo);
    if (n < CUDA__MAX_INFO) {
        cuda__info_syms[n] = symbol;
        atomic_store(&cuda__ninfo, n + 1);
    }
    pthread_mutex_unlock(&cuda__info_lock);
}

/* Writes the symbols g has not written yet, on stream s (g current), and
 * waits. A symbol whose module cannot load on this GPU (built for another
 * architecture) is skipped: its kernels cannot run here either. */
static void cuda__push_info(cuda__gpu *g, cudaStream_t s)
{
    pthread_mutex_lock(&cuda__info_lock);
    int n = atomic_load(&cuda__ninfo), from = atomic_load(&g->info_done);
    if (from < n) {
        int info[2] = {g->dev->num, maccrt_rt.ngpus};
        for (int i = from; i < n; i++)
            if (cudaMemcpyToSymbolAsync(cuda__info_syms[i], info, sizeof info, 0,
                                        cudaMemcpyHostToDevice, s) != cudaSuccess)
                cuda__clear();
        if (cudaStreamSynchronize(s) != cudaSuccess)
            cuda__clear(); /* a broken context shows at the launch */
        atomic_store(&g->info_done, n);
    }
    pthread_mutex_unlock(&cuda__info_lock);
}

static int cuda__run(maccrt_device *d, maccrt_task *t, MACC_TaskEnv *env)
{
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e != cudaSuccess) {
        cuda__leave(&c);
        return (int)e;
    }
    if (atomic_load(&g->info_done) != atomic_load(&cuda__ninfo))
        cuda__push_info(g, c.stream);
    env->stream = (void *)c.stream;
    env->nthreads = 1;
    cuda__clear(); /* the launch function returns cudaGetLastError() */
    int err = t->ver->fn(t->args, env);
    /* A launch error is returned as it is, without waiting: the stream may
     * belong to a broken context. Otherwise wait for the kernel; an error
     * while it ran (an illegal address...) is returned by the wait. On a
     * lane (asynchronous tasks), the watcher waits. */
    cuda__helper *h = cuda__self;
    if (err == 0 && !c.locked && h && h->run_lane >= 0 && g->async) {
        cuda__launched(g, h, t);
        err = MACCRT_RUN_PENDING;
    } else if (err == 0) {
        err = (int)cuda__wait(c.stream);
    }
    cuda__leave(&c);
    return err;
}

static int cuda__synchronize(maccrt_device *d)
{
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    cuda__leave(&c);
    return (int)e;
}

/* A declare target variable's device copy on d. */
static int cuda__symbol_address(maccrt_device *d, const void *symbol, void **devptr)
{
    cuda__gpu *g = d->pdata;
    cuda__call c;
    cudaError_t e = cuda__enter(g, &c);
    if (e == cudaSuccess)
        e = cudaGetSymbolAddress(devptr, symbol);
    cuda__leave(&c);
    if (e != cudaSuccess)
        cuda__clear();
    return (int)e;
}

static const char *cuda__error_string(int err)
{
    if (err == MACCRT_ERR_NOMEM)
        return "out of memory";
    return cudaGetErrorString((cudaError_t)err);
}

extern const maccrt_plugin maccrt_cuda_plugin;
const maccrt_plugin maccrt_cuda_plugin = {
    .name = "nvidia",
    .kind = MACC_DEV_NVIDIA,
    .caps = 0,
    .prepare = cuda__prepare,
    .early = 1,
    .discover = cuda__discover,
    .init_device = cuda__init_device,
    .started = cuda__all_started,
    .fini_device = cuda__fini_device,
    .version_ok = cuda__version_ok,
    .alloc = cuda__alloc,
    .free = cuda__free,
    .copy_h2d = cuda__copy_h2d,
    .copy_d2h = cuda__copy_d2h,
    .copy_peer = cuda__copy_peer,
    .copy_d2h_via = cuda__copy_d2h_via,
    .copy_h2d_start = cuda__copy_h2d_start,
    .fence_order = cuda__fence_order,
    .fence_done = cuda__fence_done,
    .helpers_start = cuda__helpers_start,
    .helpers_wait = cuda__helpers_wait,
    .queued = cuda__queued,
    .host_pin = cuda__host_pin,
    .host_reachable = cuda__host_reachable,
    .host_unpin = cuda__host_unpin,
    .submit = cuda__submit,
    .run = cuda__run,
    .synchronize = cuda__synchronize,
    .error_string = cuda__error_string,
    .alloc_error = cuda__alloc_error,
    .managed_alloc = cuda__managed_alloc,
    .managed_free = cuda__managed_free,
    .mem_info = cuda__mem_info,
    .prefetch = cuda__prefetch,
    .advise_read_mostly = cuda__advise_read_mostly,
    .advise_place = cuda__advise_place,
    .calibrate_migration = cuda__calibrate_migration,
    .symbol_address = cuda__symbol_address,
};

#endif /* CUDA__HAVE_HEADERS */
