/* host.c: the host plugin.
 *
 * The host device shares memory with the program (alloc and copies are
 * identities) and runs tasks on a pool of worker threads. Each task opens its
 * own OpenMP parallel region (the generated version function does that with
 * num_threads(env->nthreads)); the runtime itself uses no OpenMP.
 *
 * Concurrency is bounded by tokens, not by the pool: the pool grows on demand
 * (a task is submitted and no worker is idle) up to MACCRT_MAX_HOST_WORKERS,
 * the most tasks that 100 tokens can admit at once. Workers are joined at exit.
 *
 * A worker that finds the queue empty spins a while (HOST__SPIN polls of the
 * queue length, yielding the core between them) before it sleeps on the
 * condition variable; submit wakes a sleeping worker only when the spinning
 * workers are fewer than the queued tasks (else one of those takes it), so a steady stream of tasks costs
 * no futex call per task. The spinning count and the queue length are
 * sequentially consistent atomics: a spinner that gives up decrements the
 * first and then reads the second, submit increments the second and then
 * reads the first, so at least one of them sees the other.
 */
#include "internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define HOST__SPIN 2000 /* polls of an empty queue before a worker sleeps */

typedef struct host__pool host__pool;

int maccrt_host_nthreads(int tokens)
{
    long n = (long)maccrt_rt.host_threads * tokens / MACCRT_TOKENS;
    return n < 1 ? 1 : (int)n;
}

static __thread host__pool *host__mine; /* the pool of the calling worker */
/* The calling thread runs host tasks from a pool's queue at its top level
 * (a worker, or a thread in maccrt_host_help): the first host task that its
 * completions place is handed to it (host__next) instead of queued. */
static __thread host__pool *host__running;
static __thread maccrt_task *host__next;

struct host__pool {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    maccrt_task *head, *tail; /* placed tasks waiting for a worker */
    atomic_int queued;        /* tasks in the queue that are not kept: written under lock, polled without it */
    int kept;                 /* kept tasks in the queue (t->keep: for their creating thread) */
    atomic_int spinning;      /* workers polling the queue */
    int nworkers, nidle;      /* nidle: asleep on cv */
    int stop;
    long signals; /* sleeping workers woken by submit (maccrt_host_counts) */
    long helped;  /* tasks run by threads outside the pool (maccrt_host_help) */
    long handed;  /* tasks handed to the thread whose completion placed them */
    long kept_in; /* kept tasks (t->keep) submitted (atomic) */
    long kept_valve; /* kept tasks a worker ran after a whole spin */
    pthread_t threads[MACCRT_MAX_HOST_WORKERS];
};

/* Runs t and then the tasks its completions hand to this thread. */
static void host__run_from(host__pool *pool, maccrt_task *t)
{
    host__pool *outer = host__running;
    host__running = pool;
    while (t) {
        maccrt_up.execute(t);
        t = host__next;
        host__next = NULL;
    }
    host__running = outer;
}

/* Takes the first queued task that creator made (creator set), else the
 * first one not kept, else (kept_ok) the first kept one; NULL if none. */
static maccrt_task *host__take(host__pool *pool, const maccrt_thread *creator, int kept_ok)
{
    maccrt_task *t = pool->head, *prev = NULL, *kt = NULL, *kprev = NULL;
    while (t && (creator ? t->creator != creator : t->keep)) {
        if (!creator && !kt) {
            kt = t;
            kprev = prev;
        }
        prev = t;
        t = t->pnext;
    }
    if (!t && kept_ok && kt) {
        t = kt;
        prev = kprev;
    }
    if (!t)
        return NULL;
    if (prev)
        prev->pnext = t->pnext;
    else
        pool->head = t->pnext;
    if (pool->tail == t)
        pool->tail = prev;
    if (t->keep)
        pool->kept--;
    else
        atomic_fetch_sub(&pool->queued, 1);
    return t;
}

static void *host__worker(void *arg)
{
    host__pool *pool = arg;
    maccrt_thread *self = maccrt_thread_self();
    self->is_worker = 1;
    host__mine = pool;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        maccrt_task *t = host__take(pool, NULL, pool->stop);
        if (!t && !pool->stop) {
            /* spin before sleeping: the next task is usually close */
            pthread_mutex_unlock(&pool->lock);
            atomic_fetch_add(&pool->spinning, 1);
            for (int i = 0; i < HOST__SPIN && !atomic_load(&pool->queued); i++)
                sched_yield();
            atomic_fetch_sub(&pool->spinning, 1);
            pthread_mutex_lock(&pool->lock);
            /* a kept task waits for its creating thread; one that waited
             * through a whole spin is run here (its creator may be blocked
             * outside the runtime), one per spin */
            t = host__take(pool, NULL, 1);
            if (t && t->keep)
                pool->kept_valve++;
        }
        if (!t) {
            if (pool->stop && !pool->head)
                break;
            pool->nidle++;
            pthread_cond_wait(&pool->cv, &pool->lock);
            pool->nidle--;
            continue;
        }
        pthread_mutex_unlock(&pool->lock);
        host__run_from(pool, t);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static int host__discover(void)
{
    return 1;
}

static int host__init_device(maccrt_device *d)
{
    host__pool *pool = maccrt_xcalloc(1, sizeof *pool);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->cv, NULL);
    d->pdata = pool;
    return 0;
}

static void host__fini_device(maccrt_device *d)
{
    host__pool *pool = d->pdata;
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->cv);
    int n = pool->nworkers;
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < n; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_mutex_lock(&pool->lock);
    pool->nworkers = 0; /* joined: a second call joins none */
    pthread_mutex_unlock(&pool->lock);
    /* The pool itself stays: a late submit (a task created by another atexit
     * handler) finds stop set and the scheduler runs such tasks inline. */
}

static int host__version_ok(const maccrt_device *d, const MACC_Version *v)
{
    (void)d;
    (void)v;
    return 1;
}

static void *host__alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)d;
    (void)bytes;
    return hostptr;
}

static void host__free(maccrt_device *d, void *devptr)
{
    (void)d;
    (void)devptr;
}

static int host__copy(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    (void)d;
    if (dst != src && bytes)
        memmove(dst, src, bytes);
    return 0;
}

/* Starts one more worker (pool->lock held). */
static void host__start_worker(maccrt_device *d, host__pool *pool, maccrt_task *t)
{
    (void)d;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* Workers run user code with OpenMP; give them the usual main-thread
     * sized stack rather than a small helper stack. */
    pthread_attr_setstacksize(&attr, 8u << 20);
    if (pthread_create(&pool->threads[pool->nworkers], &attr, host__worker, pool) == 0)
        pool->nworkers++;
    else if (pool->nworkers == 0)
        maccrt_fatal(t->loc, "cannot start a host worker thread");
    pthread_attr_destroy(&attr);
}

static void host__submit(maccrt_device *d, maccrt_task *t)
{
    host__pool *pool = d->pdata;
    /* A thread running this pool's tasks that completes one at its top level
     * takes the first task placed meanwhile itself, with no queue, lock or
     * wake-up (its next task is usually its chain's successor). A thread
     * helping (not a worker) takes only the tasks it created. */
    maccrt_thread *self = maccrt_thread_self();
    if (t->keep)
        __atomic_add_fetch(&pool->kept_in, 1, __ATOMIC_RELAXED);
    if (host__running == pool && self->finishing && !self->current && !host__next &&
        ((host__mine == pool && !t->keep) || t->creator == self)) {
        self->finishing = 0;
        host__next = t;
        __atomic_add_fetch(&pool->handed, 1, __ATOMIC_RELAXED);
        return;
    }
    self->finishing = 0;
    pthread_mutex_lock(&pool->lock);
    maccrt_taskq_push(&pool->head, &pool->tail, t);
    if (t->keep) {
        /* for its creating thread (in its throttle or taskwait); a worker
         * only when none would ever look (none spinning, none awake) */
        pool->kept++;
        if (pool->nworkers == 0 && !pool->stop)
            host__start_worker(d, pool, t);
        else if (atomic_load(&pool->spinning) == 0 && pool->nidle == pool->nworkers && pool->nidle > 0) {
            pool->signals++;
            pthread_cond_signal(&pool->cv);
        }
        pthread_mutex_unlock(&pool->lock);
        return;
    }
    int queued = atomic_fetch_add(&pool->queued, 1) + 1;
    int spinning = atomic_load(&pool->spinning);
    /* a new worker when the queue outgrows the workers that will look at
     * it, never more workers than tasks placed here (maccrt_rt.lock is held) */
    if (queued > pool->nidle + spinning && pool->nworkers < __atomic_load_n(&d->nplaced, __ATOMIC_RELAXED) &&
        pool->nworkers < MACCRT_MAX_HOST_WORKERS && !pool->stop)
        host__start_worker(d, pool, t);
    if (pool->nidle > 0 && queued > spinning) {
        pool->signals++;
        pthread_cond_signal(&pool->cv); /* else a spinning worker takes it */
    }
    pthread_mutex_unlock(&pool->lock);
}

int maccrt_host_help(maccrt_device *d, const maccrt_thread *creator)
{
    host__pool *pool = d->pdata;
    if (!pool)
        return 0;
    pthread_mutex_lock(&pool->lock);
    maccrt_task *t = pool->head ? host__take(pool, creator, 0) : NULL;
    if (t)
        pool->helped++;
    pthread_mutex_unlock(&pool->lock);
    if (!t)
        return 0;
    host__run_from(pool, t);
    return 1;
}

void maccrt_host_counts(maccrt_device *d, long *signals, long *helped, long *handed, int *workers)
{
    host__pool *pool = d->pdata;
    *handed = __atomic_load_n(&pool->handed, __ATOMIC_RELAXED);
    pthread_mutex_lock(&pool->lock);
    *signals = pool->signals;
    *helped = pool->helped;
    *workers = pool->nworkers;
    pthread_mutex_unlock(&pool->lock);
}

void maccrt_host_kept(maccrt_device *d, long *kept, long *by_workers)
{
    host__pool *pool = d->pdata;
    *kept = __atomic_load_n(&pool->kept_in, __ATOMIC_RELAXED);
    pthread_mutex_lock(&pool->lock);
    *by_workers = pool->kept_valve;
    pthread_mutex_unlock(&pool->lock);
}

static int host__run(maccrt_device *d, maccrt_task *t, MACC_TaskEnv *env)
{
    (void)d;
    env->nthreads = t->explore_threads > 0 ? t->explore_threads : maccrt_host_nthreads(t->tokens);
    env->stream = NULL;
    return t->ver->fn(t->args, env);
}

static int host__synchronize(maccrt_device *d)
{
    (void)d;
    return 0;
}

const maccrt_plugin maccrt_host_plugin = {
    .name = "host",
    .kind = MACC_DEV_HOST,
    .caps = MACCRT_CAP_SHARED_MEM,
    .discover = host__discover,
    .init_device = host__init_device,
    .fini_device = host__fini_device,
    .version_ok = host__version_ok,
    .alloc = host__alloc,
    .free = host__free,
    .copy_h2d = host__copy,
    .copy_d2h = host__copy,
    .submit = host__submit,
    .run = host__run,
    .synchronize = host__synchronize,
    .error_string = NULL,
};
