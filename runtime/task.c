/* task.c: task instances, dependences, taskwait, completion.
 *
 * Life of a task (all transitions under maccrt_rt.lock):
 *   MACC_target copies the arguments into one heap block, picks the candidate
 *   devices, adds dependence edges from the live tasks it must follow (with
 *   GPUs under the dependence index's own lock, before it takes the runtime
 *   lock: task__deps_enter), enters the runtime (WAITING), and becomes READY
 *   when it has no unfinished predecessor. The scheduler places it on a
 *   device (tokens taken) and hands it to the device's plugin (PLACED), or,
 *   for an undeferred host task, to its encountering thread (INLINE), which
 *   runs it itself. maccrt_task_execute
 *   maps, runs and unmaps it, then maccrt__finish gives the tokens back,
 *   releases its successors and wakes whoever waits.
 *
 * Dependence index: a range tree of disjoint address segments. Each segment
 * remembers the last writer (out/inout) and the readers (in) since that
 * writer. A new reader depends on the segment's writer; a new writer depends
 * on the readers since the last writer, or on the writer if there are none.
 * Older tasks are ordered before those already, so each new dependence costs
 * O(log segments + edges) however many tasks are live. A dependence whose
 * range covers part of a segment splits it. Finished tasks leave the index;
 * empty segments are freed.
 *
 * With GPUs the index has its own lock (task__deps_lock, taken alone: by a
 * submission, and for finished tasks before their completion; task__deps_apart).
 * A new task's edges are made by its creating thread before it enters the
 * runtime, with one count of its predecessors held for the entry itself (the
 * guard), so a predecessor that completes meanwhile cannot make it ready
 * before it entered; the entry drops the guard. A predecessor found in the
 * index has not left it, and it leaves (under that lock) before its
 * completion reads its successors, so that completion sees every edge made
 * to it. Why: the submissions' edges under
 * the runtime lock were most of its hold while a thread created tasks (four
 * fake GPUs of bench/dispatch: the runtime lock busy for the whole creation
 * phase, half the GPUs' helpers idle then).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- per-thread state --------------------------------------------------------- */

/* Tasks this thread ran directly (the throttle) not yet added to the host's
 * count: one atomic add per 64, at a taskwait, at thread exit and when the
 * counts are read (maccrt_task_flush_counts). */
static __thread long task__direct_runs;

void maccrt_task_flush_counts(void)
{
    if (task__direct_runs && maccrt_rt.host) {
        atomic_fetch_add(&maccrt_rt.host->tasks_direct, task__direct_runs);
        task__direct_runs = 0;
    }
}
static void task__lock_in_wait(void);

/* Thread exit (maccrt_up.thread_exit, from base.c's key destructor): the
 * struct lives on while deferred children still point at it. */
void maccrt_task_thread_exit(maccrt_thread *th)
{
    maccrt_task_flush_counts();
    task__lock_in_wait(); /* (its tasks in the inbox count it first) */
    int last = --th->refs == 0;
    pthread_mutex_unlock(&maccrt_rt.lock);
    if (last)
        maccrt_thread_free(th);
}

/* ---- dependence index ------------------------------------------------------------ */

typedef struct task__seg {
    maccrt_rnode node; /* first member: the tree gives back task__seg pointers */
    maccrt_task *writer;
    maccrt_task **readers;
    int nreaders, capreaders;
} task__seg;

static maccrt_rtree task__deps;
static pthread_mutex_t task__deps_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP; /* (the index; above) */

static task__seg *task__seg_new(uintptr_t a, uintptr_t b)
{
    task__seg *s = maccrt_xcalloc(1, sizeof *s);
    s->node.start = a;
    s->node.end = b;
    maccrt_rtree_insert(&task__deps, &s->node);
    return s;
}

static void task__seg_free(task__seg *s)
{
    maccrt_rtree_remove(&task__deps, &s->node);
    free(s->readers);
    free(s);
}

static void task__seg_add_reader(task__seg *s, maccrt_task *t)
{
    if (s->nreaders == s->capreaders) {
        s->capreaders = s->capreaders ? 2 * s->capreaders : 4;
        s->readers = maccrt_xrealloc(s->readers, (size_t)s->capreaders * sizeof *s->readers);
    }
    s->readers[s->nreaders++] = t;
}

/* Splits s at `at` (s->start < at < s->end); returns the upper part. */
static task__seg *task__seg_split(task__seg *s, uintptr_t at)
{
    uintptr_t end = s->node.end;
    s->node.end = at;
    task__seg *u = task__seg_new(at, end);
    u->writer = s->writer;
    for (int i = 0; i < s->nreaders; i++)
        task__seg_add_reader(u, s->readers[i]);
    return u;
}

/* Edge pred -> t (t waits for pred); duplicates and self-edges are skipped. */
static void task__edge(maccrt_task *pred, maccrt_task *t)
{
    if (pred == t || pred->mark == t->id)
        return;
    pred->mark = t->id;
    if (pred->rank < t->rank)
        t->rank = pred->rank; /* (pred's was made at its entry, before t's) */
    if (pred->nsuccs == pred->capsuccs) {
        /* the first successors fit in the task itself */
        int small = 4;
        if (!pred->capsuccs) {
            pred->succs = pred->succ_small;
            pred->capsuccs = small;
        } else if (pred->succs == pred->succ_small) {
            pred->succs = maccrt_xmalloc((size_t)2 * small * sizeof *pred->succs);
            memcpy(pred->succs, pred->succ_small, (size_t)small * sizeof *pred->succs);
            pred->capsuccs = 2 * small;
        } else {
            pred->capsuccs *= 2;
            pred->succs = maccrt_xrealloc(pred->succs, (size_t)pred->capsuccs * sizeof *pred->succs);
        }
    }
    pred->succs[pred->nsuccs] = t;
    /* (read without the lock by the helper that runs pred: task__early) */
    __atomic_store_n(&pred->nsuccs, pred->nsuccs + 1, __ATOMIC_RELAXED);
    t->npreds++;
}

static void task__seg_visit(task__seg *s, maccrt_task *t, int kind)
{
    if (kind == MACC_DEP_IN) {
        if (s->writer)
            task__edge(s->writer, t);
        if (!(s->nreaders && s->readers[s->nreaders - 1] == t))
            task__seg_add_reader(s, t);
    } else {
        if (s->nreaders) {
            for (int i = 0; i < s->nreaders; i++)
                task__edge(s->readers[i], t);
        } else if (s->writer) {
            task__edge(s->writer, t);
        }
        s->writer = t;
        s->nreaders = 0;
    }
}

static void task__dep_range(const MACC_Dep *d, uintptr_t *a, uintptr_t *b)
{
    *a = (uintptr_t)d->addr;
    size_t n = d->bytes ? d->bytes : 1;
    *b = *a + n < *a ? UINTPTR_MAX : *a + n;
}

/* Adds t's dependences to the index and the edges from its predecessors. */
static void task__deps_add(maccrt_task *t)
{
    for (int i = 0; i < t->ndeps; i++) {
        uintptr_t a, b;
        task__dep_range(&t->deps[i], &a, &b);
        int kind = t->deps[i].kind == MACC_DEP_IN ? MACC_DEP_IN : MACC_DEP_INOUT;
        uintptr_t cur = a;
        while (cur < b) {
            maccrt_rnode *n = maccrt_rtree_first_overlap(&task__deps, cur, b);
            task__seg *s;
            if (!n) {
                s = task__seg_new(cur, b);
            } else if (n->start > cur) {
                s = task__seg_new(cur, n->start);
            } else {
                s = (task__seg *)n;
                if (s->node.start < cur)
                    s = task__seg_split(s, cur);
                if (s->node.end > b)
                    task__seg_split(s, b);
            }
            task__seg_visit(s, t, kind);
            cur = s->node.end;
        }
    }
}

/* Whether the index has its own lock: with GPUs. Without, the edges are
 * made under the runtime lock at the entry and leave it at the completion,
 * as before (the host's tasks alone: two locks per task cost chains of tiny
 * tasks up to a fifth, bench/tasks.sh). */
static int task__deps_apart(void)
{
    return maccrt_rt.ngpus > 0;
}

/* With GPUs (task__deps_apart): t's number and, with dependences, its
 * edges (the index's lock taken here; no other lock held): t->npreds is its
 * predecessors plus one, the guard that task__enter_locked drops. */
static void task__deps_enter(maccrt_task *t)
{
    if (!task__deps_apart())
        return; /* (numbered at the entry, under the runtime lock) */
    t->id = t->rank = __atomic_add_fetch(&maccrt_rt.next_id, 1, __ATOMIC_RELAXED);
    if (!t->ndeps)
        return;
    pthread_mutex_lock(&task__deps_lock);
    t->npreds = 1;
    task__deps_add(t);
    pthread_mutex_unlock(&task__deps_lock);
}

/* t finished: removes it from every segment of its ranges. */
static void task__deps_remove(maccrt_task *t)
{
    for (int i = 0; i < t->ndeps; i++) {
        uintptr_t a, b;
        task__dep_range(&t->deps[i], &a, &b);
        maccrt_rnode *n = maccrt_rtree_first_overlap(&task__deps, a, b);
        while (n && n->start < b) {
            /* (no tree walk when n reaches b: one segment per dependence, mostly) */
            maccrt_rnode *next = maccrt_rtree_next_below(&task__deps, n, b);
            task__seg *s = (task__seg *)n;
            if (s->writer == t)
                s->writer = NULL;
            /* Tasks tend to finish in creation order: search from the front,
             * keep the order (a reader is found early). */
            for (int j = 0; j < s->nreaders; j++) {
                if (s->readers[j] == t) {
                    memmove(&s->readers[j], &s->readers[j + 1],
                            (size_t)(s->nreaders - j - 1) * sizeof *s->readers);
                    s->nreaders--;
                    break;
                }
            }
            if (!s->writer && !s->nreaders)
                task__seg_free(s);
            n = next;
        }
    }
}

/* With GPUs (task__deps_apart): a host task t, which has run, leaves the
 * index in task__finish, in the worker that ran it, before any runtime lock;
 * a GPU task in the batch of the thread that completes it, before that
 * thread takes the runtime lock (task__deps_leave_list: its helper goes on
 * to its next task without the index's lock; one fake GPU of bench/dispatch
 * spent about 0.5 us a task there). After this no edge to t is made, so its
 * successors are all there when its completion reads them. A task made
 * meanwhile that would have waited for t finds nothing to wait for: t's run
 * and its unmaps are over. Nested in the runtime lock's hold, the index's
 * lock was a quarter of that hold by completions with four fake GPUs
 * (bench/RESULTS.md): only tasks pushed while the completing thread waited
 * for that lock leave it there. */
static void task__deps_leave(maccrt_task *t)
{
    if (!t->ndeps || !task__deps_apart())
        return;
    pthread_mutex_lock(&task__deps_lock);
    task__deps_remove(t);
    pthread_mutex_unlock(&task__deps_lock);
}

/* A list of finished GPU tasks (linked by done_next) leaves the index in one
 * hold of its lock: their helpers pushed them on the completions' stack
 * still in it, and the thread that completes them calls this before their
 * completions (task__complete_done; the same order as task__deps_leave's). */
static void task__deps_leave_list(maccrt_task *list)
{
    if (!task__deps_apart())
        return;
    int locked = 0;
    for (maccrt_task *t = list; t; t = t->done_next) {
        if (!t->ndeps)
            continue;
        if (!locked) {
            pthread_mutex_lock(&task__deps_lock);
            locked = 1;
        }
        task__deps_remove(t);
    }
    if (locked)
        pthread_mutex_unlock(&task__deps_lock);
}

/* ---- candidate devices ----------------------------------------------------------------- */

static const char *task__region_name(const MACC_Region *r)
{
    return r->name ? r->name : "(unnamed)";
}

/* A task's name in the trace: its region's, "data" for a data directive. */
static const char *task__trace_name(const maccrt_task *t)
{
    return t->region ? task__region_name(t->region) : "data";
}

/* The calling thread's last choice (a loop creates instances of one region):
 * the devices depend only on the region, the selector, the if clause and the
 * default device (the rest is fixed at initialisation). */
static __thread struct {
    const MACC_Region *region;
    int device, ifcond; /* device: the default device resolved */
    maccrt_mask cand;
    int fallback;
    /* The region's direct runs in this thread, timed (the first few, then one
     * in TASK__SAMPLE): their moving average, seconds (task__direct_ok). */
    unsigned long runs;
    int timed;
    double run_s;
} task__last;

static void task__choose_devices_now(maccrt_task *t, int device, int ifcond);

/* Sets t->cand and t->fallback from the device selector and the if clause. */
static void task__choose_devices(maccrt_task *t, int device, int ifcond)
{
    if (device == MACC_DEVICE_DEFAULT) /* omp_set_default_device, if set */
        device = atomic_load_explicit(&maccrt_rt.default_device, memory_order_relaxed);
    if (task__last.region == t->region && task__last.device == device &&
        task__last.ifcond == (ifcond != 0)) {
        t->cand = task__last.cand;
        t->fallback = task__last.fallback;
        return;
    }
    task__choose_devices_now(t, device, ifcond);
    if (task__last.region != t->region) {
        task__last.runs = 0;
        task__last.timed = 0;
        task__last.run_s = 0;
    }
    task__last.region = t->region;
    task__last.device = device;
    task__last.ifcond = ifcond != 0;
    task__last.cand = t->cand;
    task__last.fallback = t->fallback;
}

static void task__choose_devices_now(maccrt_task *t, int device, int ifcond)
{
    maccrt_runtime *rt = &maccrt_rt;
    const MACC_Region *r = t->region;
    maccrt_device *host = rt->host;
    int has_nvidia = 0;
    for (int i = 0; i < r->nversions; i++)
        if (r->versions[i].kind == MACC_DEV_NVIDIA)
            has_nvidia = 1;

    maccrt_mask sel = 0; /* the devices the selector names */
    int host_asked = 0;  /* the program asked for the host explicitly */
    if (device == MACC_DEVICE_DEFAULT)
        device = atomic_load(&rt->default_device); /* omp_set_default_device, if set */
    if (!ifcond) {
        sel = MACCRT_BIT(host->num);
        host_asked = 1;
    } else if (device == MACC_DEVICE_ANY) {
        sel = rt->selectable;
    } else if (device == MACC_DEVICE_DEFAULT) {
        for (int d = 0; d < rt->ngpus && !sel; d++)
            if ((rt->selectable & MACCRT_BIT(d)) && maccrt_pick_version(r, rt->devices[d], 0))
                sel = MACCRT_BIT(d);
        if (!sel)
            sel = MACCRT_BIT(host->num);
    } else if (device == MACC_DEVICE_HOST) {
        sel = MACCRT_BIT(host->num);
        host_asked = 1;
    } else if (device == MACC_DEVICE_NVIDIA) {
        for (int d = 0; d < rt->ngpus; d++)
            sel |= MACCRT_BIT(d);
    } else if (device >= 0) {
        if (device < rt->ngpus) {
            sel = MACCRT_BIT(device);
        } else if (device == rt->ngpus) {
            sel = MACCRT_BIT(host->num);
            host_asked = 1;
        } else {
            if (rt->offload == MACCRT_OFFLOAD_MANDATORY)
                maccrt_fatal(&r->loc, "device number %d does not exist (region '%s'; %d devices)",
                             device, task__region_name(r), rt->ndevices);
            sel = MACCRT_BIT(host->num); /* OpenMP's host fallback */
        }
    } else if (device == MACC_DEVICE_INVALID) {
        maccrt_fatal(&r->loc, "device number is negative (omp_invalid_device?) for region '%s'",
                     task__region_name(r));
    } else {
        maccrt_fatal(&r->loc, "invalid device selector %d for region '%s'", device,
                     task__region_name(r));
    }

    maccrt_mask cand = 0, gpus = 0;
    for (int d = 0; d < rt->ndevices; d++) {
        if (!(sel & MACCRT_BIT(d)))
            continue;
        if (maccrt_pick_version(r, rt->devices[d], 0)) {
            cand |= MACCRT_BIT(d);
            if (rt->devices[d]->kind != MACC_DEV_HOST)
                gpus |= MACCRT_BIT(d);
        }
    }
    if (rt->offload == MACCRT_OFFLOAD_MANDATORY && has_nvidia && !host_asked && !gpus)
        maccrt_fatal(&r->loc,
                     "MACC_TARGET_OFFLOAD=mandatory but no GPU is available to run region '%s'",
                     task__region_name(r));
    if (!cand) {
        /* No named device can run it: the host, with fallback versions too. */
        if (!maccrt_pick_version(r, host, 1)) {
            if (!ifcond)
                maccrt_fatal(&r->loc, "if(false) but region '%s' has no host version",
                             task__region_name(r));
            maccrt_fatal(&r->loc, "no available device can run region '%s'%s",
                         task__region_name(r),
                         has_nvidia && !rt->ngpus ? " (it has no host version and no GPU was found)"
                                                  : "");
        }
        cand = MACCRT_BIT(host->num);
        t->fallback = 1;
    }
    t->cand = cand;
}

/* ---- creation ---------------------------------------------------------------------- */

static size_t task__align(size_t n)
{
    size_t a = _Alignof(max_align_t);
    return (n + a - 1) & ~(a - 1);
}

/* One allocation: the task, the argument block, the maps, the device
 * pointers, the reference flags and the dependences. */
static maccrt_task *task__alloc(size_t args_size, int nmaps, int ndeps)
{
    size_t off_args = task__align(sizeof(maccrt_task));
    size_t off_maps = off_args + task__align(args_size);
    size_t off_ptrs = off_maps + task__align((size_t)nmaps * sizeof(MACC_Map));
    size_t off_took = off_ptrs + task__align((size_t)nmaps * sizeof(void *));
    size_t off_cache = off_took + task__align((size_t)nmaps * sizeof(int));
    size_t off_deps = off_cache + task__align((size_t)nmaps * sizeof(void *));
    /* eft's residency memo, one per device: for tasks with maps beside a GPU */
    int nmemo = nmaps > 0 && maccrt_rt.ngpus > 0 ? maccrt_rt.ndevices : 0;
    size_t off_memo = off_deps + task__align((size_t)ndeps * sizeof(MACC_Dep));
    size_t total = off_memo + (size_t)nmemo * sizeof(float);
    char *p = maccrt_block_alloc(total);
    maccrt_task *t = (maccrt_task *)p;
    memset(t, 0, sizeof *t);
    t->args = p + off_args;
    t->args_size = args_size;
    t->nmaps = nmaps;
    t->maps = (MACC_Map *)(p + off_maps);
    t->ptrs = (void **)(p + off_ptrs);
    t->took = (int *)(p + off_took);
    t->cache = (void **)(p + off_cache);
    t->ndeps = ndeps;
    t->deps = (MACC_Dep *)(p + off_deps);
    t->xfer_memo = nmemo ? (float *)(p + off_memo) : NULL;
    t->refs = 1;
    return t;
}

static void task__fill(maccrt_task *t, const void *args, const MACC_Map *maps, const MACC_Dep *deps)
{
    if (t->args_size)
        memcpy(t->args, args, t->args_size);
    if (t->nmaps)
        memcpy(t->maps, maps, (size_t)t->nmaps * sizeof *maps);
    memset(t->ptrs, 0, (size_t)t->nmaps * sizeof *t->ptrs);
    memset(t->took, 0, (size_t)t->nmaps * sizeof *t->took);
    memset(t->cache, 0, (size_t)t->nmaps * sizeof *t->cache);
    if (t->ndeps)
        memcpy(t->deps, deps, (size_t)t->ndeps * sizeof *deps);
}

static void task__free_succs(maccrt_task *t)
{
    if (t->succs != t->succ_small)
        free(t->succs);
    t->succs = NULL;
    t->nsuccs = t->capsuccs = 0;
}

static void task__free(maccrt_task *t)
{
    task__free_succs(t);
    maccrt_block_free(t);
}

/* The throttle's wait: a thread (not inside a task) that creates a deferred
 * task while pending_max tasks are live waits until half of them finished,
 * so memory stays flat however far ahead the program would run. A wait
 * that sees no task finish for 100 ms gives up, and that thread is not
 * throttled again: its own OpenMP team may hold the tokens that the live
 * tasks need (a parallel region inside a task creating regions).
 * maccrt_rt.lock held. */
static int task__wait_completing(maccrt_thread *self, int (*done)(const void *), const void *arg);

static int task__below_half(const void *arg)
{
    (void)arg;
    return __atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) <= maccrt_rt.pending_max / 2;
}

static void task__throttle(maccrt_thread *self)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (self->current || self->unthrottled || rt->stopped || __atomic_load_n(&rt->live, __ATOMIC_RELAXED) < rt->pending_max)
        return;
    unsigned long seen = rt->finished;
    double since = maccrt_now();
    rt->throttled++;
    while (__atomic_load_n(&rt->live, __ATOMIC_RELAXED) > rt->pending_max / 2 && !rt->stopped) {
        pthread_mutex_unlock(&rt->lock);
        int ran = maccrt_host_help(rt->host, self);
        pthread_mutex_lock(&rt->lock);
        if (ran || __atomic_load_n(&rt->live, __ATOMIC_RELAXED) <= rt->pending_max / 2 || rt->stopped) {
            seen = rt->finished;
            since = 0;
            continue;
        }
        if (task__wait_completing(self, task__below_half, NULL)) {
            seen = rt->finished;
            since = 0;
            continue;
        }
        if (since == 0)
            since = maccrt_now();
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&rt->throttle_cv, &rt->lock, &ts);
        if (rt->finished != seen) {
            seen = rt->finished;
            since = maccrt_now();
        } else if (maccrt_now() - since > 0.1) {
            self->unthrottled = 1;
            break;
        }
    }
    rt->throttled--;
}

#define TASK__TINY_S 1e-6 /* MACC_TASK_TINY_US changes it */
#define TASK__SAMPLE 64  /* one direct run in 64 is timed, after the first 8 */
static double task__tiny_s = TASK__TINY_S;
static pthread_once_t task__tiny_once = PTHREAD_ONCE_INIT;
static void task__tiny_init(void)
{
    const char *e = getenv("MACC_TASK_TINY_US");
    if (!e || !*e)
        return;
    char *end;
    double v = strtod(e, &end);
    if (*end || !(v >= 0))
        maccrt_fatal(NULL, "MACC_TASK_TINY_US: invalid value '%s' (expected microseconds, >= 0)", e);
    task__tiny_s = v * 1e-6;
}

/* Tiny dependent tasks stay with their creating thread: a deferred task
 * whose only device is the host, with no GPU in use, created by a program
 * thread outside a task, of a region whose sampled host runs (maps
 * included) took less than MACC_TASK_TINY_US on average, is kept (t->keep):
 * the host's workers leave it to that thread, which runs it in its throttle,
 * its taskwait or when it waits for an undeferred task or at exit (a worker
 * whose spin ends with a kept task queued runs one, so that a thread
 * blocked elsewhere never stalls its tasks). Two threads handing tiny tasks
 * back and forth through the runtime lock cost more than one thread running
 * them all. maccrt_rt.lock held. */
static void task__keep(maccrt_task *t, const maccrt_thread *self)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (!t->region || rt->ngpus || t->cand != MACCRT_BIT(rt->host->num) || self->current ||
        self->is_worker)
        return;
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (ri->host_samples < 8)
        return;
    pthread_once(&task__tiny_once, task__tiny_init);
    t->keep = ri->host_run_s < task__tiny_s;
}

/* A task with depend clauses never explores the host beside a GPU
 * (maccrt_sched_host_unexplorable): while the host is unmeasured for its
 * region, the host leaves its candidates, so that a dispatch walk does not
 * weigh the host for it. With the host a candidate that eft never chose,
 * every walk asked the policy for up to MACCRT_WALK_WAITING waiting tasks
 * (the GPU full, the host free), residency look-ups included, under the
 * runtime lock: matmul on the host and one H200 ran at 0.81 of the GPU alone
 * with no host task. maccrt_rt.lock held. */
static void task__no_host_exploring(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_mask host = MACCRT_BIT(rt->host->num);
    if (rt->ngpus && (t->cand & host) && maccrt_sched_host_unexplorable(t))
        t->cand &= ~host;
}

/* maccrt_rt.lock at the hot sites (a task's submission and completion).
 * With MACC_TRACE, a wait for it longer than 2 us is a "wait:lock" slice
 * named "runtime", and a hold longer than 2 us a "hold:lock" slice named
 * after the function that took it (task__submit), as the
 * directory's lock is traced (cache.c). */
static __thread double task__held_at;
static __thread const char *task__held_by;

static void task__lock_(const char *fn, const maccrt_device *d)
{
    if (!maccrt_trace_on()) {
        pthread_mutex_lock(&maccrt_rt.lock);
        return;
    }
    if (maccrt_lock_try(&maccrt_rt.lock) != 0) {
        double t0 = maccrt_now();
        pthread_mutex_lock(&maccrt_rt.lock);
        double t1 = maccrt_now();
        if (t1 - t0 > 2e-6)
            maccrt_trace_event(MACCRT_TRACE_WAIT_LOCK, d, "runtime", t0, t1, 0);
    }
    task__held_at = maccrt_now();
    task__held_by = fn;
}
#define task__lock(d) task__lock_(__func__, d)

static void task__unlock(const maccrt_device *d)
{
    if (maccrt_trace_on() && task__held_at > 0.0) {
        double t1 = maccrt_now();
        if (t1 - task__held_at > 2e-6)
            maccrt_trace_event(MACCRT_TRACE_HOLD_LOCK, d, task__held_by, task__held_at, t1, 0);
        task__held_at = 0.0;
    }
    pthread_mutex_unlock(&maccrt_rt.lock);
}

/* t enters the runtime (maccrt_rt.lock held): its number, its creator's or
 * waiter's counts, its dependence edges, and the ready queue when it has no
 * predecessor. Returns 1 when it became ready (a dispatch walk is due). */
static int task__enter_locked(maccrt_task *t, maccrt_thread *self)
{
    task__no_host_exploring(t);
    if (!task__deps_apart())
        t->id = t->rank = ++maccrt_rt.next_id; /* (with GPUs: task__deps_enter) */
    if (t->deferred) {
        t->creator = self;
        /* (read unlocked by task__wait_completing: stored atomically; every
         * write is under the runtime lock, so no read-modify-write) */
        __atomic_store_n(&self->children, self->children + 1, __ATOMIC_RELAXED);
        self->refs++;
        task__keep(t, self);
    } else {
        t->waiter = self;
        t->refs++;
    }
    if (t->ndeps && task__deps_apart())
        __atomic_sub_fetch(&t->npreds, 1, __ATOMIC_RELEASE); /* the guard (task__deps_enter; maccrt_task_ahead_pick reads it) */
    else if (t->ndeps)
        task__deps_add(t);
    if (t->npreds == 0) {
        maccrt_sched_ready(t);
        return 1;
    }
    t->state = MACCRT_TASK_WAITING;
    return 0;
}

/* The submission inbox. A program thread that creates GPU tasks while a
 * helper completes others under maccrt_rt.lock does not wait for the lock:
 * it pushes the task here and goes on, and that helper enters it (and every
 * other task in the inbox) before its dispatch walk. With two GPUs, the
 * thread creating matmul's 4096 tasks spent most of its time waiting for
 * the lock behind the helpers' completions (two H200s: 41.7 ms of
 * submissions for 4096 tasks against 7.9 ms on one GPU; the dispatch
 * proxy: submissions busy 90% of the run), so the GPUs' slots went unfilled.
 *
 * Every holder of the lock in this file enters the inbox's tasks once it
 * has the lock (task__lock_in), so a thread's later taskwait, undeferred
 * task or exit sees its earlier tasks entered, in order. A push is only
 * left to others when a completing helper holds the lock (task__fin_holds):
 * that helper looks at the inbox again after releasing it (task__finish_gpu),
 * and the push and that flag are ordered (sequentially consistent) so that
 * either the pusher sees the flag cleared and enters its task itself, or
 * the helper sees the push. Tasks in the inbox are counted live. */
static maccrt_task *task__inbox;
static int task__fin_holds;
static int task__inbox_on = -1; /* MACC_SUBMIT_INBOX=0 turns it off */

/* Enters the inbox's tasks, oldest first (maccrt_rt.lock held); returns 1
 * when one became ready. */
static int task__inbox_enter_locked(void)
{
    if (!__atomic_load_n(&task__inbox, __ATOMIC_SEQ_CST))
        return 0;
    maccrt_task *s = __atomic_exchange_n(&task__inbox, NULL, __ATOMIC_SEQ_CST);
    maccrt_task *fifo = NULL;
    while (s) {
        maccrt_task *n = s->in_next;
        s->in_next = fifo;
        fifo = s;
        s = n;
    }
    int ready = 0;
    while (fifo) {
        maccrt_task *n = fifo->in_next;
        fifo->in_next = NULL;
        ready |= task__enter_locked(fifo, fifo->creator);
        fifo = n;
    }
    return ready;
}

/* maccrt_rt.lock taken with the inbox entered: its ready tasks placed and
 * handed to their devices (the lock dropped for that, as after any walk). */
static void task__in_locked(const char *fn, const maccrt_device *d)
{
    while (task__inbox_enter_locked()) {
        maccrt_sched_dispatch();
        task__unlock(d);
        maccrt_sched_submit_placed();
        task__lock_(fn, d);
    }
}
#define task__lock_in(d) (task__lock(d), task__in_locked(__func__, d))

/* task__lock_in for a thread that waits under the lock (its hold is not traced). */
static void task__lock_in_wait(void)
{
    task__lock_in(maccrt_rt.host);
    task__held_at = 0.0;
}

/* Pushes deferred t on the inbox, when a completing helper holds the lock
 * and will enter it: returns 1 when so. */
static int task__inbox_push(maccrt_task *t, maccrt_thread *self)
{
    maccrt_runtime *rt = &maccrt_rt;
    int on = maccrt_env_flag(&task__inbox_on, "MACC_SUBMIT_INBOX", 1);
    if (!on || !rt->ngpus || self->current || self->is_worker ||
        __atomic_load_n(&rt->stopped, __ATOMIC_RELAXED) ||
        __atomic_load_n(&rt->live, __ATOMIC_RELAXED) + 1 >= rt->pending_max ||
        !__atomic_load_n(&task__fin_holds, __ATOMIC_RELAXED))
        return 0;
    t->creator = self;
    __atomic_add_fetch(&rt->live, 1, __ATOMIC_SEQ_CST);
    maccrt_task *top = __atomic_load_n(&task__inbox, __ATOMIC_RELAXED);
    do
        t->in_next = top;
    while (!__atomic_compare_exchange_n(&task__inbox, &top, t, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    if (__atomic_load_n(&task__fin_holds, __ATOMIC_SEQ_CST)) {
        __atomic_add_fetch(&rt->inbox_pushes, 1, __ATOMIC_RELAXED);
        return 1; /* that helper looks at the inbox after releasing the lock */
    }
    /* the helper was gone: this thread enters it (and the others) */
    task__lock_in(rt->host);
    maccrt_sched_dispatch();
    task__unlock(rt->host);
    maccrt_sched_submit_placed();
    return 1;
}

/* MACC_WAIT_SPIN_US (default 1000): how long a thread that waits for its
 * undeferred task on a GPU polls the task's state before it sleeps. A
 * synchronous region's kernel of a fraction of a millisecond would otherwise
 * cost the condition variable's wake-up (tens of microseconds on a loaded
 * machine) on top of the helper's; the thread has nothing else to do. */
static long task__spin_ns = -1;

static int task__ended(const void *arg)
{
    int st = __atomic_load_n(&((const maccrt_task *)arg)->state, __ATOMIC_ACQUIRE);
    return st == MACCRT_TASK_DONE || st == MACCRT_TASK_INLINE;
}

static long task__spin_ns_get(void)
{
    long ns = __atomic_load_n(&task__spin_ns, __ATOMIC_RELAXED);
    if (ns < 0) {
        const char *v = getenv("MACC_WAIT_SPIN_US");
        long us = v && *v ? strtol(v, NULL, 10) : 1000;
        ns = us < 0 ? 0 : us > 1000000 ? 1000000000L : us * 1000L;
        __atomic_store_n(&task__spin_ns, ns, __ATOMIC_RELAXED);
    }
    return ns;
}

static void task__spin_wait(maccrt_task *t)
{
    long ns = task__spin_ns_get();
    if (ns > 0 && !maccrt_poll(task__ended, t, ns))
        (void)maccrt_doze(task__ended, t, MACCRT_DOZE_NS);
}

/* Submits t (its candidates set) and, when undeferred, waits for it, running
 * it in this thread if it lands on the host. */
static void task__submit(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_thread *self = maccrt_thread_self();
    task__deps_enter(t);

    if (t->deferred && maccrt_lock_try(&rt->lock) == 0) {
        if (maccrt_trace_on()) {
            task__held_at = maccrt_now();
            task__held_by = __func__;
        }
        task__in_locked(__func__, rt->host);
    } else if (t->deferred && task__inbox_push(t, self)) {
        return;
    } else {
        task__lock_in(rt->host);
    }
    if (rt->stopped)
        t->deferred = 0; /* after shutdown (a late atexit handler): run it here */
    if (t->deferred)
        task__throttle(self);
    __atomic_add_fetch(&rt->live, 1, __ATOMIC_SEQ_CST); /* read without the lock by MACC_target */
    int ready = task__enter_locked(t, self);
    if (ready)
        maccrt_sched_dispatch();
    if (t->deferred) {
        task__unlock(rt->host);
        maccrt_sched_submit_placed();
        return;
    }
    maccrt_sched_submit_placed(); /* before this thread waits for t */
    if (t->state != MACCRT_TASK_DONE && t->state != MACCRT_TASK_INLINE && t->dev && t->dev->kind != MACC_DEV_HOST &&
        !rt->stopped) {
        pthread_mutex_unlock(&rt->lock);
        task__spin_wait(t);
        pthread_mutex_lock(&rt->lock);
    }
    while (t->state != MACCRT_TASK_DONE && t->state != MACCRT_TASK_INLINE) {
        if (!rt->ngpus && !self->current && !self->is_worker && !rt->stopped) {
            /* its predecessors may be tasks kept for this thread (only
             * without GPUs: a GPU task's waiter should not pick up a host
             * task that would delay its return) */
            pthread_mutex_unlock(&rt->lock);
            int ran = maccrt_host_help(rt->host, self);
            pthread_mutex_lock(&rt->lock);
            if (ran || t->state == MACCRT_TASK_DONE || t->state == MACCRT_TASK_INLINE)
                continue;
        }
        pthread_cond_wait(&self->cv, &rt->lock);
    }
    if (t->state == MACCRT_TASK_INLINE) {
        t->state = MACCRT_TASK_RUNNING;
        pthread_mutex_unlock(&rt->lock);
        maccrt_task_execute(t); /* finishes it */
        pthread_mutex_lock(&rt->lock);
    }
    int last = --t->refs == 0;
    int region = t->region != NULL;
    pthread_mutex_unlock(&rt->lock);
    if (last)
        task__free(t);
    if (region)
        maccrt_cache_flush(NULL); /* the program reads the host copy next */
}

/* The throttle's other half, as libgomp runs a task undeferred when its queue
 * is deep: a deferred task without dependences whose only device is the host
 * runs at once in the creating thread, outside the scheduler (no lock, no
 * tokens: that thread's core is the one the program lent the runtime by
 * creating tasks), when
 *   - pending_max tasks are live (the queue is deep); once it was, the
 *     creating thread goes on so until half the live tasks have finished
 *     (task__deep), as its throttle wait would: its submissions through the
 *     scheduler would otherwise alternate with every completion, each taking
 *     the runtime lock against the workers; or
 *   - the host has no tokens free for it (it would wait) and its region's
 *     direct runs in this thread took less than TASK__TINY_S on average
 *     (MACC_TASK_TINY_US; measured on the first runs, then one in 64): a
 *     hand-off to a worker costs more than the task, and submissions that
 *     cost more than the workers' runs keep the queue from ever getting deep.
 * Nothing can depend on such a task and it ends before MACC_target returns,
 * so no taskwait counts it. Sets t up to run on the host (t->direct = 1) and
 * returns 1 when it is to run so. */
static __thread int task__deep;
static int task__direct_ok(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *h = rt->host;
    if (t->cand != MACCRT_BIT(h->num) || __atomic_load_n(&rt->stopped, __ATOMIC_RELAXED))
        return 0;
    const MACC_Version *v = maccrt_pick_version(t->region, h, t->fallback);
    if (!v || v->resources == MACC_RES_AUTO)
        return 0; /* resources(auto) learns from every instance: the scheduler's path */
    int res = v->resources == MACC_RES_DEFAULT ? MACCRT_RES_HOST_DEFERRED : v->resources;
    res = res < 1 ? 1 : res > MACCRT_TOKENS ? MACCRT_TOKENS : res;
    long live = __atomic_load_n(&rt->live, __ATOMIC_RELAXED);
    if (live >= rt->pending_max) {
        task__deep = 1;
    } else if (!task__deep || live <= rt->pending_max / 2) {
        task__deep = 0;
        if (!(task__last.region == t->region && task__last.timed >= 4 &&
              __atomic_load_n(&h->tokens_free, __ATOMIC_RELAXED) < res))
            return 0;
        pthread_once(&task__tiny_once, task__tiny_init);
        if (!(task__last.run_s < task__tiny_s))
            return 0;
    }
    t->direct = 1;
    t->dev = h;
    t->ver = v;
    t->tokens = res; /* its share of threads; none taken */
    t->state = MACCRT_TASK_RUNNING;
    return 1;
}

/* Runs a direct task; times the first runs of its region and then one in
 * TASK__SAMPLE (the tiny-task rule's measure). */
static void task__run_direct(maccrt_task *t)
{
    int sample = task__last.region == t->region &&
                 (task__last.runs++ < 8 || task__last.runs % TASK__SAMPLE == 0);
    double t0 = sample ? maccrt_now() : 0.0;
    maccrt_task_execute(t);
    if (sample && task__last.region == t->region) {
        double dt = maccrt_now() - t0;
        task__last.run_s = task__last.timed++ ? 0.8 * task__last.run_s + 0.2 * dt : dt;
    }
}

/* A direct task lives on the creating thread's stack (no block, no copy of
 * its maps into one) when its arguments are this small. */
#define TASK__STACK_ARGS 1024
#define TASK__STACK_MAPS 32

void maccrt_task_create(const MACC_Region *r, const void *args, size_t args_size, int nmaps,
                        const MACC_Map *maps, int ndeps, const MACC_Dep *deps, int flags, int device,
                        int ifcond)
{
    if (!r)
        maccrt_fatal(NULL, "MACC_target called without a region");
    if (nmaps < 0 || ndeps < 0 || (nmaps && !maps) || (ndeps && !deps) || (args_size && !args))
        maccrt_fatal(&r->loc, "bad arguments for region '%s'", task__region_name(r));
    maccrt_thread *self = maccrt_thread_self();
    int deferred = (flags & MACC_NOWAIT) != 0;
    double s0 = deferred && maccrt_trace_on() ? maccrt_now() : 0.0; /* a "submit" slice */
    long long trip = maccrt_placement_take_trip();
    maccrt_mask cand = 0;
    int fallback = 0;
    if (deferred && !ndeps && args_size <= TASK__STACK_ARGS && nmaps <= TASK__STACK_MAPS &&
        (__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > maccrt_rt.pending_max / 2 ||
         (task__last.region == r && task__last.timed))) {
        /* maybe a direct task (task__direct_ok): decided on the stack */
        maccrt_task st;
        memset(&st, 0, sizeof st);
        st.region = r;
        st.loc = &r->loc;
        st.deferred = 1;
        st.trip = trip;
        task__choose_devices(&st, device, ifcond);
        if (task__direct_ok(&st)) {
            max_align_t abuf[TASK__STACK_ARGS / sizeof(max_align_t)];
            MACC_Map mbuf[TASK__STACK_MAPS];
            void *pbuf[TASK__STACK_MAPS], *cbuf[TASK__STACK_MAPS];
            int tbuf[TASK__STACK_MAPS];
            if (args_size)
                memcpy(abuf, args, args_size); /* the version may write its argument block */
            if (nmaps)
                memcpy(mbuf, maps, (size_t)nmaps * sizeof *maps);
            st.direct = 2; /* on the stack: not freed */
            st.args = abuf;
            st.args_size = args_size;
            st.nmaps = nmaps;
            st.maps = mbuf;
            st.ptrs = pbuf;
            st.took = tbuf;
            st.cache = cbuf; /* the three are set per map before they are read */
            task__run_direct(&st);
            return;
        }
        cand = st.cand;
        fallback = st.fallback;
    }
    maccrt_task *t = task__alloc(args_size, nmaps, ndeps);
    t->region = r;
    t->loc = &r->loc;
    t->deferred = deferred;
    t->nested = !t->deferred && self->current != NULL;
    t->trip = trip;
    task__fill(t, args, maps, deps);
    if (cand) {
        t->cand = cand;
        t->fallback = fallback;
    } else {
        task__choose_devices(t, device, ifcond);
    }
    if (t->deferred && !ndeps && task__direct_ok(t)) {
        task__run_direct(t); /* frees it */
        return;
    }
    task__submit(t);
    if (s0 > 0.0) /* the submitting thread's cost of a deferred task (t may be gone) */
        maccrt_trace_event(MACCRT_TRACE_SUBMIT, maccrt_rt.host, task__region_name(r), s0, maccrt_now(), 0);
}

void maccrt_task_data_op(maccrt_device *d, int op, int nmaps, const MACC_Map *maps, int ndeps,
                         const MACC_Dep *deps, int flags, const MACC_SrcLoc *loc)
{
    maccrt_task *t = task__alloc(0, nmaps, ndeps);
    t->loc = loc;
    t->op = op;
    t->opdev = d;
    t->cand = MACCRT_BIT(d->num);
    t->deferred = (flags & MACC_NOWAIT) != 0;
    t->nested = !t->deferred && maccrt_thread_self()->current != NULL;
    task__fill(t, NULL, maps, deps);
    task__submit(t);
}

/* ---- execution and completion ----------------------------------------------------------- */

/* s depends on t, which ran on t->dev: the bytes of s's maps that t's maps
 * wrote (their overlap) are on t->dev. */
static void task__note_produced(const maccrt_task *t, maccrt_task *s)
{
    if (!t->dev || !t->region || !s->region)
        return;
    size_t bytes = 0;
    for (int i = 0; i < t->nmaps; i++) {
        const MACC_Map *w = &t->maps[i];
        if (!(w->kind & MACC_MAP_FROM) || !w->bytes)
            continue;
        uintptr_t wa = (uintptr_t)w->start, wb = wa + w->bytes;
        for (int j = 0; j < s->nmaps; j++) {
            const MACC_Map *r = &s->maps[j];
            uintptr_t ra = (uintptr_t)r->start, rb = ra + r->bytes;
            uintptr_t lo = wa > ra ? wa : ra, hi = wb < rb ? wb : rb;
            if (lo < hi && (r->kind & MACC_MAP_TO))
                bytes += hi - lo;
        }
    }
    if (!bytes)
        return;
    int k = 0;
    while (k < s->nprod && s->prod_dev[k] != t->dev->num)
        k++;
    if (k == s->nprod) {
        if (s->nprod == MACCRT_PRODUCERS)
            k = MACCRT_PRODUCERS - 1;
        else
            s->prod_bytes[s->nprod++] = 0;
        s->prod_dev[k] = (short)t->dev->num;
    }
    s->prod_bytes[k] += bytes;
}

/* The completion of t under maccrt_rt.lock, without the dispatch walk:
 * returns 1 when the caller is to free t (after unlocking), and adds t's
 * creator to *to_free when t held its last reference, and to *extra (by
 * done_next) a successor launched ahead that completed before it (its last
 * reference was the one t's completion drops). */
static int task__complete_locked(maccrt_task *t, maccrt_thread **to_free, maccrt_task **extra)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (t->sample && t->region) {
        maccrt_region_info *ri = maccrt_region_info_get(t->region);
        ri->host_run_s = ri->host_samples++ ? 0.8 * ri->host_run_s + 0.2 * t->sample_s : t->sample_s;
    }
    maccrt_sched_release(t);
    if (t->ndeps && !task__deps_apart())
        task__deps_remove(t); /* (with GPUs t left the index before its completion) */
    for (int i = 0; i < t->nsuccs; i++) {
        maccrt_task *s = t->succs[i];
        task__note_produced(t, s);
        /* s launched ahead: running (or ended, even completed: it holds a
         * reference for the completion of its last predecessor) */
        int ahead = __atomic_load_n(&s->ahead, __ATOMIC_RELAXED);
        if (ahead && s->npreds == 1)
            maccrt_sched_ahead_tokens(s); /* (when t's release did not hand its own over) */
        /* (atomic: maccrt_task_ahead_pick reads it under the index's lock alone) */
        if (__atomic_sub_fetch(&s->npreds, 1, __ATOMIC_RELAXED) == 0) {
            if (!ahead) {
                maccrt_sched_ready(s);
            } else if (--s->refs == 0) {
                s->done_next = *extra;
                *extra = s;
            }
        }
    }
    task__free_succs(t);
    __atomic_store_n(&t->state, MACCRT_TASK_DONE, __ATOMIC_RELEASE); /* task__spin_wait reads it */
    if (t->creator) {
        maccrt_thread *c = t->creator;
        __atomic_store_n(&c->children, c->children - 1, __ATOMIC_RELAXED); /* (as in task__enter_locked) */
        if (c->children == 0)
            pthread_cond_signal(&c->cv);
        if (--c->refs == 0) {
            c->free_next = *to_free;
            *to_free = c;
        }
        t->creator = NULL;
    }
    if (t->waiter)
        pthread_cond_signal(&t->waiter->cv);
    rt->finished++;
    if (__atomic_sub_fetch(&rt->live, 1, __ATOMIC_RELAXED) == 0)
        pthread_cond_broadcast(&rt->idle_cv);
    if (rt->throttled && __atomic_load_n(&rt->live, __ATOMIC_RELAXED) <= rt->pending_max / 2)
        pthread_cond_broadcast(&rt->throttle_cv);
    return --t->refs == 0;
}

static void task__free_threads(maccrt_thread *c)
{
    while (c) {
        maccrt_thread *n = c->free_next;
        maccrt_thread_free(c);
        c = n;
    }
}

/* GPU completions waiting for maccrt_rt.lock: a stack that the helpers push
 * on and one of them empties. With 32 helpers per GPU, every helper taking
 * the lock to complete its task (and walk the ready queue) made a convoy:
 * matmul on two H200s spent a mean 1.4 ms per completion waiting for the
 * lock, longer than its kernels. Now the helper that pushes on an empty
 * stack takes the lock and completes every task on it with one dispatch
 * walk; a helper that pushes on a non-empty one goes back to its GPU at
 * once (the stack's owner, which has not emptied it yet, will). */
static maccrt_task *task__done_stack;

/* The waiting thread as the completer. A program thread that waits for GPU
 * tasks (taskwait, the wait for all, the throttle) has nothing else to do,
 * while each GPU's helpers, in the plugin's slot, stop their device's work
 * to complete tasks under the runtime lock: on one fake GPU of bench/dispatch
 * (helpers that run their task's kernel) the helpers spent about 5 us per
 * task completing, about a tenth of their time. While such a thread waits,
 * it polls the stack of completions and empties it (task__complete_done),
 * and a helper that pushes on an empty stack goes back to its device at
 * once. task__completer is set while it polls; a helper reads it after its
 * push, the waiting thread clears it before its last look at the stack
 * (both sequentially consistent), so a push is either seen by the waiting
 * thread or completed by its helper. It polls for MACC_WAIT_SPIN_US
 * (default 1000) after the last completion it made, then sleeps as before
 * (kernels of milliseconds leave the completions to the helpers); it does
 * not while the host has tasks (the waiting thread runs those: maccrt_host_help).
 * On by default with 8 cores or more (on two, the polling thread took the
 * core the helpers' wake-ups needed: bench/dispatch 4% slower);
 * MACC_WAIT_COMPLETES=0 turns it off, =1 on. */
static int task__completer;
static int task__completer_on = -1;
#define TASK__COMPLETER_CORES 8

static int task__complete_done(const maccrt_device *dev);

/* MACC_WAIT_COMPLETES, on by default where a polling thread leaves cores to
 * the rest. */
static int task__completer_enabled(void)
{
    int on = __atomic_load_n(&task__completer_on, __ATOMIC_RELAXED);
    if (on < 0)
        on = maccrt_env_flag_read(&task__completer_on, "MACC_WAIT_COMPLETES",
                                  sysconf(_SC_NPROCESSORS_ONLN) >= TASK__COMPLETER_CORES);
    return on;
}

/* The completion thread. Before a program thread waits (while it creates
 * the tasks, or while its taskwait writes finished chains' data home) no
 * thread polls the stack, and every GPU's helpers complete their tasks
 * themselves, each completion's dispatch weighing every GPU under the
 * runtime lock while the other GPU's helpers wait for it. matmul 16 256 on
 * two H200s (MACC_TRACE): the helpers' completions held the lock 13-15 us
 * each (one GPU: 2.5), 11 tasks ran on each GPU against 16 on one, 3 more
 * placed ones waited for a helper; once the waiting thread completed (from
 * 16 ms of a 24 ms run), 13-14 ran and each GPU ended 104-108 tasks a
 * millisecond instead of 97-103. So with two or more GPUs and
 * TASK__COMPLETER_CORES cores, a runtime thread is the completer from the
 * first GPU completion on: it polls the stack as the waiting thread does
 * (task__completer; the waiting thread then sleeps), for MACC_WAIT_SPIN_US
 * after its last completion, then sleeps until a helper pushes on an empty
 * stack with no completer (that helper completes that once itself and
 * wakes it). MACC_COMPLETER_THREAD=0 turns it off, =1 on (one GPU too). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int started; /* (written under lock, atomically) */
    int wake;    /* (lock) */
    int asleep;  /* on cv (atomic; written under lock) */
    long completed; /* its completions (atomic: maccrt_task_completer_count) */
    long held_ns;   /* its holds of the runtime lock to complete them (atomic) */
} task__ct = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0};
static int task__ct_on = -1;
static __thread int task__is_ct; /* this thread is the completion thread */

long maccrt_task_completer_count(void)
{
    return __atomic_load_n(&task__ct.completed, __ATOMIC_RELAXED);
}

double maccrt_task_completer_held_s(void)
{
    return 1e-9 * (double)__atomic_load_n(&task__ct.held_ns, __ATOMIC_RELAXED);
}

static int task__ct_enabled(void)
{
    int on = __atomic_load_n(&task__ct_on, __ATOMIC_RELAXED);
    if (on < 0)
        on = maccrt_env_flag_read(&task__ct_on, "MACC_COMPLETER_THREAD",
                                  maccrt_rt.ngpus >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= TASK__COMPLETER_CORES);
    return on && task__spin_ns_get() > 0;
}

static int task__ct_stopped(const void *arg)
{
    (void)arg;
    return __atomic_load_n(&maccrt_rt.stopped, __ATOMIC_RELAXED);
}

/* The completer's role taken (1) when no thread has it (0); task__poll_stack
 * gives it back. */
static int task__completer_claim(void)
{
    int free_ = 0;
    return __atomic_compare_exchange_n(&task__completer, &free_, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* The completer's poll (the caller took task__completer): completes what
 * is pushed on the stack until done(arg), MACC_WAIT_SPIN_US without a
 * completion, or (host_stops) a completion finds the host with tasks; then
 * gives the role back and completes the pushes that counted on it. Returns
 * 1 when it completed tasks. */
static int task__poll_stack(int (*done)(const void *), const void *arg, int host_stops)
{
    double poll_s = (double)task__spin_ns_get() * 1e-9;
    double last = maccrt_now();
    int did = 0;
    for (unsigned i = 1; !done(arg); i++) {
        if (__atomic_load_n(&task__done_stack, __ATOMIC_ACQUIRE)) {
            did = 1;
            last = 0.0;
            if (task__complete_done(maccrt_rt.host) && host_stops)
                break; /* the host has tasks: the caller runs them */
            continue;
        }
        if ((i & 63) == 0) {
            double now = maccrt_now();
            if (last == 0.0)
                last = now;
            else if (now - last > poll_s)
                break;
        }
        maccrt_pause();
    }
    __atomic_store_n(&task__completer, 0, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&task__done_stack, __ATOMIC_SEQ_CST)) {
        task__complete_done(maccrt_rt.host); /* pushes that counted on this thread */
        did = 1;
    }
    return did;
}

static void *task__ct_main(void *arg)
{
    (void)arg;
    maccrt_thread_self()->is_worker = 1; /* (a runtime thread: not counted as the waiting one) */
    task__is_ct = 1;
    for (;;) {
        pthread_mutex_lock(&task__ct.lock);
        while (!task__ct.wake && !task__ct_stopped(NULL)) {
            __atomic_store_n(&task__ct.asleep, 1, __ATOMIC_SEQ_CST);
            pthread_cond_wait(&task__ct.cv, &task__ct.lock);
            __atomic_store_n(&task__ct.asleep, 0, __ATOMIC_SEQ_CST);
        }
        task__ct.wake = 0;
        pthread_mutex_unlock(&task__ct.lock);
        if (task__ct_stopped(NULL))
            break;
        if (task__completer_claim())
            (void)task__poll_stack(task__ct_stopped, NULL, 0);
        /* (else a waiting thread polls: back to sleep) */
    }
    return NULL;
}

/* A helper pushed on an empty stack with no completer: wakes the completion
 * thread (started the first time). */
static void task__ct_wake(void)
{
    if (!task__ct_enabled() || (__atomic_load_n(&task__ct.started, __ATOMIC_RELAXED) &&
                                !__atomic_load_n(&task__ct.asleep, __ATOMIC_SEQ_CST)))
        return;
    pthread_mutex_lock(&task__ct.lock);
    if (!task__ct.started) {
        __atomic_store_n(&task__ct.started, 1, __ATOMIC_RELAXED); /* (read without the lock above) */
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &attr, task__ct_main, NULL) != 0)
            __atomic_store_n(&task__ct_on, 0, __ATOMIC_RELAXED); /* none: the helpers complete */
        pthread_attr_destroy(&attr);
    }
    task__ct.wake = 1;
    pthread_cond_signal(&task__ct.cv);
    pthread_mutex_unlock(&task__ct.lock);
}

/* The helper that ran a GPU task gives its device's placement state back
 * (tokens, its place among the placed tasks: maccrt_sched_release_device,
 * under the device's own lock) before it pushes the task on the
 * completions' stack when that stack already holds tasks, i.e. when the
 * completer is behind: the completer's serial work under the runtime lock
 * is then the task's successors and counts alone, and the device's tokens
 * are free for the next placement before the completer comes to it. On an
 * empty stack the completer (or the helper itself) comes at once, and the
 * release in the helper would only lengthen the helper's own path (one fake
 * GPU, bench/dispatch: 97.1 -> 96.4 thousand tasks/s releasing always).
 * MACC_RELEASE_IN_HELPER: 1 (default) so, 2 always, 0 never (the completer
 * gives them back). */
static long task__rel_mode = -1;

static long task__release_mode(void)
{
    long m = __atomic_load_n(&task__rel_mode, __ATOMIC_RELAXED);
    return m >= 0 ? m : maccrt_env_memo(&task__rel_mode, getenv("MACC_RELEASE_IN_HELPER"), 1, 0, 2, 1);
}

long maccrt_task_released_in_helper(void)
{
    long n = 0;
    for (int i = 0; i < maccrt_rt.ndevices; i++)
        n += __atomic_load_n(&maccrt_rt.devices[i]->released_by_helper, __ATOMIC_RELAXED);
    return n;
}

static void task__finish_gpu(maccrt_task *t)
{
    /* (read before the push: once pushed, a completer may complete and free t) */
    const maccrt_device *dev = t->dev;
    maccrt_task *top = __atomic_load_n(&task__done_stack, __ATOMIC_RELAXED);
    long mode = task__release_mode();
    /* (a task the plugin launched another behind: always here, so that the
     * lane's tasks give their place back in the lane's order, each handing
     * its tokens to the next: maccrt_sched_release_device; a completer that
     * came later released the next one first, and the lane's slot was
     * counted twice meanwhile) */
    if (mode == 2 || (mode == 1 && (top || __atomic_load_n(&t->pafter, __ATOMIC_RELAXED))))
        maccrt_sched_release_device(t, 1);
    do
        t->done_next = top;
    while (!__atomic_compare_exchange_n(&task__done_stack, &top, t, 1, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED));
    if (top)
        return; /* the owner of the non-empty stack completes it */
    if (__atomic_load_n(&task__completer, __ATOMIC_SEQ_CST))
        return; /* the waiting thread (or the completion thread) does */
    task__ct_wake();
    task__complete_done(dev);
}

static int task__host_busy(void);

/* The completions' stack taken whole, oldest first (it is last-in first-out). */
static maccrt_task *task__take_done(void)
{
    maccrt_task *s = __atomic_exchange_n(&task__done_stack, NULL, __ATOMIC_ACQUIRE);
    maccrt_task *fifo = NULL;
    while (s) {
        maccrt_task *n = s->done_next;
        s->done_next = fifo;
        fifo = s;
        s = n;
    }
    return fifo;
}

/* Completes the tasks of fifo (taken from the completions' stack, oldest
 * first, out of the dependence index), maccrt_rt.lock held; those to free
 * after unlocking go on *done, their creators to free on *to_free. */
static void task__complete_list_locked(maccrt_thread *self, maccrt_task *fifo, maccrt_thread **to_free,
                                       maccrt_task **done)
{
    while (fifo) {
        maccrt_task *n = fifo->done_next;
        if (!self->is_worker)
            maccrt_rt.wait_completed++;
        else if (task__is_ct)
            __atomic_add_fetch(&task__ct.completed, 1, __ATOMIC_RELAXED);
        if (task__complete_locked(fifo, to_free, done)) {
            fifo->done_next = *done;
            *done = fifo;
        }
        fifo = n;
    }
}

static void task__free_done(maccrt_task *done, maccrt_thread *to_free)
{
    while (done) {
        maccrt_task *n = done->done_next;
        task__free(done);
        done = n;
    }
    task__free_threads(to_free);
}

/* Completes the tasks on the stack (every one pushed before the lock is
 * taken), enters the inbox, and walks once. dev: whose thread this is (the
 * trace's). Returns whether the host had tasks then (task__host_busy). */
static int task__complete_done(const maccrt_device *dev)
{
    maccrt_thread *self = maccrt_thread_self();
    maccrt_thread *to_free = NULL;
    maccrt_task *done = NULL; /* tasks to free after unlocking */
    /* The stack's tasks leave the dependence index before the runtime lock
     * (their helpers left it to this thread: a waiting thread's, the
     * completion thread's or a helper's batch, one hold of the index's lock) */
    maccrt_task *fifo = task__take_done();
    task__deps_leave_list(fifo);
    task__lock_("task__finish_gpu", dev);
    double held0 = task__is_ct ? maccrt_now() : 0.0; /* (the completion thread's hold, counted) */
    __atomic_store_n(&task__fin_holds, 1, __ATOMIC_SEQ_CST);
    self->finishing = 1;
    task__inbox_enter_locked(); /* (before the completions: their successors may be there) */
    task__complete_list_locked(self, fifo, &to_free, &done);
    /* those pushed since: they leave the index here, its lock nested in this one */
    fifo = task__take_done();
    task__deps_leave_list(fifo);
    task__complete_list_locked(self, fifo, &to_free, &done);
    task__inbox_enter_locked();
    maccrt_sched_dispatch();
    int host = task__host_busy();
    self->finishing = 0;
    __atomic_store_n(&task__fin_holds, 0, __ATOMIC_SEQ_CST);
    if (held0 > 0.0)
        __atomic_add_fetch(&task__ct.held_ns, (long)((maccrt_now() - held0) * 1e9), __ATOMIC_RELAXED);
    task__unlock(dev);
    maccrt_sched_submit_placed();
    /* submissions pushed while this thread held the lock (task__inbox_push) */
    while (__atomic_load_n(&task__inbox, __ATOMIC_SEQ_CST)) {
        task__lock_("task__finish_gpu", dev);
        __atomic_store_n(&task__fin_holds, 1, __ATOMIC_SEQ_CST);
        if (task__inbox_enter_locked())
            maccrt_sched_dispatch();
        __atomic_store_n(&task__fin_holds, 0, __ATOMIC_SEQ_CST);
        task__unlock(dev);
        maccrt_sched_submit_placed();
    }
    task__free_done(done, to_free);
    return host;
}

static void task__finish(maccrt_task *t)
{
    if (t->dev && t->dev->kind != MACC_DEV_HOST && !maccrt_rt.stopped) {
        task__finish_gpu(t); /* (it leaves the index in its completer's batch) */
        return;
    }
    task__deps_leave(t);
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_thread *to_free = NULL;
    maccrt_thread *self = maccrt_thread_self();
    maccrt_task *extra = NULL;
    pthread_mutex_lock(&rt->lock);
    self->finishing = 1;
    int last = task__complete_locked(t, &to_free, &extra);
    maccrt_sched_dispatch();
    self->finishing = 0;
    pthread_mutex_unlock(&rt->lock);
    maccrt_sched_submit_placed();
    if (last)
        task__free(t);
    task__free_done(extra, to_free);
}

/* Early write-backs. A GPU task's written sections that no task waits for
 * (it has no successor) while its creator waits for every task it made
 * (taskwait, or the wait for all): the flush at the end of that wait would
 * write them home while no task runs; the helper that ran the task writes
 * them home as soon as the task is complete (maccrt_cache_write_early)
 * instead. Every task of the wait exists by then, and one that maps the
 * section with no dependence on this one races with it as it would
 * without this. MACC_WRITE_EARLY=0 leaves every write-back to the flush. */
#define TASK__EARLY_MAX 8
typedef struct task__early {
    int n;
    uintptr_t a[TASK__EARLY_MAX], b[TASK__EARLY_MAX];
    unsigned char read[TASK__EARLY_MAX]; /* a section it only read (task__early_find) */
    unsigned long id;                    /* the task's (it may be freed when they are made) */
    const MACC_SrcLoc *loc;
} task__early;

static int task__early_on = -1;
static int task__early_read_on = -1;

/* The sections it read count too (MACC_WRITE_EARLY_READ=0: only those it
 * wrote): a chain whose last link only reads what its earlier links wrote
 * (STREAM's triad reads the b and c of the scale and add before it, which
 * have that triad as their successor) left those bytes to the flush: 512 of
 * the 768 MiB STREAM's blocks held at its end, written home after the last
 * kernel (10 ms of a 24 ms run on one H200). Such a section is written home
 * when no live task but t depends on it (the dependence index, which a GPU
 * task leaves in its completer's batch: task__end), like the waiting
 * thread's write-backs ahead of the wait; one that is clean costs a look in
 * the directory. */
static void task__early_find(const maccrt_task *t, task__early *ew)
{
    ew->n = 0;
    ew->id = t->id;
    ew->loc = t->loc;
    if (t->op || !t->dev || t->dev->kind == MACC_DEV_HOST || !t->creator || t->direct)
        return;
    int on = maccrt_env_flag(&task__early_on, "MACC_WRITE_EARLY", 1);
    if (!on || !__atomic_load_n(&t->creator->in_wait, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&t->nsuccs, __ATOMIC_RELAXED) > 0)
        return;
    int reads = maccrt_env_flag(&task__early_read_on, "MACC_WRITE_EARLY_READ", 1) && t->ndeps > 0;
    for (int pass = 0; pass < 1 + reads; pass++)
        for (int i = 0; i < t->nmaps && ew->n < TASK__EARLY_MAX; i++)
            if ((t->maps[i].kind & MACC_MAP_FROM ? 0 : 1) == pass && t->took[i] == MACCRT_TOOK_DIR) {
                maccrt_section(&t->maps[i], &ew->a[ew->n], &ew->b[ew->n]);
                ew->read[ew->n++] = (unsigned char)pass;
            }
}

/* A GPU's helper that completes a task leaves its early write-backs to the
 * moment a helper of that GPU has no task to take (plugin->queued:
 * maccrt_task_idle) instead of making them first: chains of tasks that
 * start together end together, and matmul's 8 x 8 tiles on two H200s had
 * every helper copying C tiles home (2 MiB each, about 0.4 ms, two or three
 * per helper) while the next chains' tasks waited in the queues, both GPUs
 * idle about 1 ms of a 20 ms run. Deferred while tasks wait in the GPU's
 * queue, the next tasks' fills and kernels come first, the write-backs in
 * the helpers' slack, and what is left at the wait's end in its flush. An
 * item waits at most MACC_WRITE_DEFER_US (default 1000): a completing helper
 * makes the oldest item first when it is older, so that a GPU whose queue
 * never empties (helpers that wait for their kernels: four fake GPUs of
 * bench/dispatch on 16 cores, 4-7% slower with every write-back left for the
 * flush) still writes home during the run. An item made before a flush does
 * nothing after it (maccrt_cache_epoch). The waiting thread's own
 * completions write back at once (it waits anyway). MACC_WRITE_DEFER=0: every
 * write-back by the completing thread at once, as before. */
#define TASK__WBQ 128
typedef struct task__wbq {
    pthread_mutex_t lock; /* its items, and its device's idle_work (their count) */
    unsigned head;        /* the oldest item's slot */
    struct task__wbi {
        uintptr_t a, b;
        const MACC_SrcLoc *loc;
        unsigned long epoch;
        double at; /* when it was deferred (maccrt_now) */
    } it[TASK__WBQ];
} task__wbq;

static atomic_long task__ndeferred; /* write-backs deferred so far (maccrt_task_deferred) */
static task__wbq task__wbqs[MACCRT_MAX_DEVICES] = {[0 ... MACCRT_MAX_DEVICES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};
static int task__defer_on = -1;
static long task__defer_ns = -1; /* MACC_WRITE_DEFER_US, in ns */

/* d's oldest deferred item into *out, off the queue, when there is one
 * deferred at or before `before` (any with before < 0); q's lock held. */
static int task__wb_pop_locked(maccrt_device *d, task__wbq *q, double before, struct task__wbi *out)
{
    int n = atomic_load_explicit(&d->idle_work, memory_order_relaxed);
    if (n == 0 || (before >= 0.0 && q->it[q->head].at > before))
        return 0;
    *out = q->it[q->head];
    q->head = (q->head + 1) % TASK__WBQ;
    atomic_store_explicit(&d->idle_work, n - 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&d->wb_load, (long long)(out->b - out->a), memory_order_relaxed);
    return 1;
}

/* Makes a deferred item taken off d's queue (nothing after a flush). */
static void task__wb_make(maccrt_device *d, const struct task__wbi *w)
{
    if (w->epoch == maccrt_cache_epoch())
        (void)maccrt_cache_write_early(d, w->a, w->b, w->loc);
}

/* Takes d's oldest deferred item and makes it; 1 when it took one. */
static int task__wb_take(maccrt_device *d)
{
    task__wbq *q = &task__wbqs[d->num];
    if (atomic_load_explicit(&d->idle_work, memory_order_acquire) == 0)
        return 0;
    struct task__wbi w;
    pthread_mutex_lock(&q->lock);
    int took = task__wb_pop_locked(d, q, -1.0, &w);
    pthread_mutex_unlock(&q->lock);
    if (took)
        task__wb_make(d, &w);
    return took;
}

/* Queues d's write-back of [a, b) for an idle helper; 0 when it is not
 * (a device without `queued`, a thread that is not a worker, a full
 * queue) or need not be: no task waits in d's queue (plugin->queued), and
 * the completing helper copies at once, as its siblings do theirs: STREAM's
 * last step, every helper of a GPU ending a task and nothing left to take,
 * lost 4% with each write-back deferred to the helpers already awake. In
 * the same hold of the queue's lock the oldest item comes off when it
 * waited too long, and is made by this thread. */
static int task__wb_defer(maccrt_device *d, uintptr_t a, uintptr_t b, const MACC_SrcLoc *loc)
{
    if (!d->plugin->queued || d->num < 0 || d->num >= MACCRT_MAX_DEVICES ||
        !maccrt_thread_self()->is_worker || !maccrt_env_flag(&task__defer_on, "MACC_WRITE_DEFER", 1) ||
        d->plugin->queued(d) == 0)
        return 0;
    task__wbq *q = &task__wbqs[d->num];
    double now = maccrt_now();
    long wait_ns = __atomic_load_n(&task__defer_ns, __ATOMIC_RELAXED);
    if (wait_ns < 0)
        wait_ns = maccrt_env_memo(&task__defer_ns, getenv("MACC_WRITE_DEFER_US"), 1000, 0, 1000000000, 1000);
    struct task__wbi old;
    pthread_mutex_lock(&q->lock);
    int took = task__wb_pop_locked(d, q, now - 1e-9 * (double)wait_ns, &old);
    int n = atomic_load_explicit(&d->idle_work, memory_order_relaxed), ok = n < TASK__WBQ;
    if (ok) {
        q->it[(q->head + (unsigned)n) % TASK__WBQ] =
            (struct task__wbi){a, b, loc, maccrt_cache_epoch(), now};
        atomic_fetch_add_explicit(&d->wb_load, (long long)(b - a), memory_order_relaxed); /* (its link's: cache__early_via) */
        atomic_store_explicit(&d->idle_work, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&q->lock);
    if (took)
        task__wb_make(d, &old);
    if (ok)
        atomic_fetch_add_explicit(&task__ndeferred, 1, memory_order_relaxed);
    return ok;
}

long maccrt_task_deferred(void)
{
    return atomic_load_explicit(&task__ndeferred, memory_order_relaxed);
}

int maccrt_task_idle(maccrt_device *d)
{
    if (d->num < 0 || d->num >= MACCRT_MAX_DEVICES)
        return 0;
    return task__wb_take(d);
}

static void task__after_run(maccrt_task *t, int err, double seen_at, maccrt_task *outer);
static void task__end(maccrt_task *t);

/* The start of t's run on its device (maccrt_task_execute, and a task
 * launched ahead): its clocks; returns the trace's start (0: off). */
static double task__begin(maccrt_task *t)
{
    maccrt_device *d = t->dev;
    t->x_s0 = t->sample ? maccrt_now() : 0.0;
    t->timed = maccrt_rt.timed || (t->ver && t->ver->resources == MACC_RES_AUTO);
    t->t_start = t->timed ? maccrt_now() : 0.0;
    double tr0 = maccrt_trace_on() ? maccrt_now() : 0.0; /* the runtime's phases, traced */
    t->x_tr0 = tr0;
    if (tr0 > 0.0 && t->t_placed > 0.0)
        maccrt_trace_task_event(MACCRT_TRACE_WAIT_QUEUE, d, task__trace_name(t), t->t_placed, tr0, t->id, t->rank);
    t->t_maps = 0.0;
    return tr0;
}

static void task__launch(maccrt_task *t, maccrt_thread *self, maccrt_task *outer, double tr0);

void maccrt_task_execute(maccrt_task *t)
{
    maccrt_thread *self = maccrt_thread_self();
    maccrt_task *outer = self->current;
    maccrt_device *d = t->dev;
    self->current = t;
    double tr0 = task__begin(t);
    if (t->op) {
        double d0 = maccrt_trace_on() ? maccrt_now() : 0.0;
        maccrt_data_op(d, t->op, t->nmaps, t->maps, t->loc);
        if (d0 > 0.0)
            maccrt_trace_event(MACCRT_TRACE_DATA, d, "data", d0, maccrt_now(), 0);
        self->current = outer;
        task__end(t);
        return;
    }
    /* every map through the data directory: a present entry, a GPU's
     * coherent copy, or the host copy made current */
    maccrt_map_task_acquire_n(d, t->nmaps, t->maps, t->ptrs, t->took, t->cache, t->loc);
    task__launch(t, self, outer, tr0);
}

/* t's maps taken: its version run (self's current task t, outer before). */
static void task__launch(maccrt_task *t, maccrt_thread *self, maccrt_task *outer, double tr0)
{
    maccrt_device *d = t->dev;
    maccrt_sched_link_done(t); /* its copies are made: off d's link (eft) */
    MACC_TaskEnv env = {
        .device_kind = d->kind,
        .device_index = d->index,
        .nthreads = 1,
        .stream = NULL,
        .ptrs = t->ptrs,
        .loc = t->loc,
    };
    /* managed data a GPU's kernel uses: placed before it, fixed up after
     * (placement.c). Its prefetches (and the first launch's wait for the
     * density measurement) count with the maps, not the run: eft's residency
     * term adds the move of managed pages that are elsewhere, and a first
     * run on a GPU that waited tens of milliseconds for the measurement
     * made that GPU look slow to its next tasks (a moving average). */
    if (d->kind != MACC_DEV_HOST)
        maccrt_placement_launch(d, t->region, t->nmaps, t->maps, t->trip);
    double r0 = maccrt_trace_on() || t->timed ? maccrt_now() : 0.0;
    t->x_r0 = r0;
    t->t_maps = t->timed ? r0 - t->t_start : 0.0;
    if (tr0 > 0.0)
        maccrt_trace_task_event(MACCRT_TRACE_MAPS, d, task__region_name(t->region), tr0, r0, t->id, t->rank);
    int err = d->plugin->run(d, t, &env);
    if (env.threads > 0)
        maccrt_sched_note_threads(t->region, d, env.threads);
    if (err == MACCRT_RUN_PENDING) {
        self->current = outer;
        return; /* the plugin's thread calls maccrt_task_ran at its end */
    }
    task__after_run(t, err, 0.0, outer);
}

/* ---- Launch-ahead ---------------------------------------------------------------------
 *
 * A chain's link on a GPU waited for its predecessor's end to be seen on the
 * host, its unmaps, its completion, its own placement, a helper and its maps
 * before its kernel was launched: STREAM's GPU sat idle 29-31 us between
 * two links of a chain (two H200s; a kernel alone is 8-13 us), and its first
 * chain's 40 links ended 2.5-4.5 ms into the run, the write-backs of every
 * block after them. Now the GPU's helper that launched a task on a stream
 * (maccrt_up.ahead_pick) takes a successor of it whose every unfinished
 * predecessor is on that stream, launched, in order (STREAM's next link),
 * places it on the same GPU and, when each of its maps finds the GPU's copy
 * there, valid where it is read (maccrt_map_task_try_fast_n: no copy, no
 * wait), launches its kernels on the same stream behind its predecessors
 * (maccrt_up.ahead_execute), and then looks at that one's successors in the
 * same way, up to MACC_CUDA_AHEAD tasks on a stream (cuda.c). It holds no
 * tokens until the task before it on the stream is released (it runs after
 * them, on theirs: maccrt_sched_place_ahead; the release hands them over,
 * maccrt_sched_release_device). A map that would copy or wait, a
 * region not yet run on GPUs of that kind (its exploration is the walk's),
 * a resources(auto) version, an undeferred or nested task: it waits for its
 * predecessors as before. The plugin finishes such a task (its unmaps and
 * its completion, maccrt_up.ran) only after its predecessors' (their ran),
 * so the directory sees the tasks end in their order; their completions
 * may come after its own (completions are batched by whichever thread takes
 * them): it holds a reference that its last predecessor's completion drops,
 * which does not make it ready (its `ahead` is set), and gives it tokens
 * only if no release handed them over and it has not ended. A task that
 * reads what a predecessor writes reads it after that kernel, on the same
 * stream, from the copy that kernel writes: which is why such a map must
 * find the copy valid already (a copy from elsewhere would land before, or
 * over, what the predecessor writes). */
static atomic_long task__nahead; /* tasks launched ahead (maccrt_task_ahead_count) */

/* Why picks found no task to launch ahead (MACC_STATS): a successor whose
 * other predecessors run elsewhere (or is being entered), one that may not
 * go ahead (its kind), one whose maps' copies were not valid on the GPU
 * (the fast path), one not placed. */
enum { TASK__AHEAD_PREDS, TASK__AHEAD_KIND, TASK__AHEAD_MAPS, TASK__AHEAD_PLACE, TASK__AHEAD_NWHY };
static atomic_long task__ahead_why[TASK__AHEAD_NWHY];

long maccrt_task_ahead_count(void)
{
    return atomic_load(&task__nahead);
}

void maccrt_task_ahead_refused(long *preds, long *kind, long *maps, long *place)
{
    *preds = atomic_load(&task__ahead_why[TASK__AHEAD_PREDS]);
    *kind = atomic_load(&task__ahead_why[TASK__AHEAD_KIND]);
    *maps = atomic_load(&task__ahead_why[TASK__AHEAD_MAPS]);
    *place = atomic_load(&task__ahead_why[TASK__AHEAD_PLACE]);
}

/* Whether s could be launched on d behind fifo[0..n-1]: a deferred task of
 * a region that d may run, whose every unfinished predecessor is among them
 * (the index's lock held: the edges and npreds' increments are made under
 * it; npreds' decrements are atomic). 1 when it may, else 0 with *why
 * (TASK__AHEAD_PREDS or TASK__AHEAD_KIND). */
static int task__ahead_ok(const maccrt_task *s, const maccrt_device *d, maccrt_task *const *fifo, int n, int *why)
{
    /* s's fields set at its entry (its candidates, its waiter) precede its
     * guard's drop (a release): they are read only once every predecessor
     * counted is among fifo, so that the guard is gone (an acquire). Read
     * before, they raced with the entry (TSan, tsan_runtime's chains). */
    int np = __atomic_load_n(&s->npreds, __ATOMIC_ACQUIRE);
    int k = 0;
    for (int j = 0; j < n && k < np; j++)
        for (int i = 0; i < fifo[j]->nsuccs; i++)
            if (fifo[j]->succs[i] == s) {
                k++;
                break;
            }
    if (k != np) {
        *why = TASK__AHEAD_PREDS;
        return 0;
    }
    *why = TASK__AHEAD_KIND;
    return s->region && !s->op && s->deferred && !s->nested && !s->direct && !s->keep && !s->waiter &&
           !__atomic_load_n(&s->ahead, __ATOMIC_RELAXED) && (s->cand & MACCRT_BIT(d->num));
}

maccrt_task *maccrt_task_ahead_pick(maccrt_device *d, maccrt_task *const *fifo, int n)
{
    maccrt_task *p = fifo[n - 1], *s = NULL;
    if (!__atomic_load_n(&p->nsuccs, __ATOMIC_RELAXED) || maccrt_rt.stopped)
        return NULL;
    /* Under the index's lock alone (with GPUs the edges are made under it:
     * task__deps_enter; a task being entered still has its guard in npreds,
     * so it is not taken). Such a successor is the caller's alone: its
     * predecessors cannot end while the caller holds their stream, and no
     * other stream holds them all. */
    int why = TASK__AHEAD_PREDS;
    pthread_mutex_lock(&task__deps_lock);
    for (int i = 0; i < p->nsuccs && !s; i++)
        if (task__ahead_ok(p->succs[i], d, fifo, n, &why))
            s = p->succs[i];
    pthread_mutex_unlock(&task__deps_lock);
    if (!s) {
        atomic_fetch_add_explicit(&task__ahead_why[why], 1, memory_order_relaxed);
        return NULL;
    }
    /* its maps first (d's part of the directory): a miss costs no runtime lock */
    if (!maccrt_map_task_try_fast_n(d, s->nmaps, s->maps, s->ptrs, s->took, s->cache)) {
        atomic_fetch_add_explicit(&task__ahead_why[TASK__AHEAD_MAPS], 1, memory_order_relaxed);
        return NULL;
    }
    task__lock_("maccrt_task_ahead_pick", d);
    int placed = s->state == MACCRT_TASK_WAITING && maccrt_sched_place_ahead(s, d);
    if (placed) {
        __atomic_store_n(&s->ahead, 1, __ATOMIC_RELAXED);
        s->refs++; /* (dropped by its last predecessor's completion, which may come after its own) */
    }
    task__unlock(d);
    if (!placed) {
        atomic_fetch_add_explicit(&task__ahead_why[TASK__AHEAD_PLACE], 1, memory_order_relaxed);
        maccrt_map_task_untake_n(d, s->nmaps, s->took, s->cache);
        return NULL;
    }
    return s;
}

int maccrt_task_execute_ahead(maccrt_task *t, int go)
{
    maccrt_device *d = t->dev;
    if (!go) {
        /* back to waiting for its predecessors, unplaced (they cannot have
         * ended: the caller holds their stream) */
        task__lock_("maccrt_task_execute_ahead", d);
        maccrt_sched_unplace_ahead(t);
        t->refs--;
        __atomic_store_n(&t->ahead, 0, __ATOMIC_RELAXED);
        task__unlock(d);
        maccrt_map_task_untake_n(d, t->nmaps, t->took, t->cache);
        return 0;
    }
    atomic_fetch_add_explicit(&task__nahead, 1, memory_order_relaxed);
    maccrt_thread *self = maccrt_thread_self();
    maccrt_task *outer = self->current;
    self->current = t;
    task__launch(t, self, outer, task__begin(t));
    return 1;
}

/* The end of a task whose plugin->run returned MACCRT_RUN_PENDING, on a
 * thread of its device (maccrt_up.ran). seen_at: when the end was seen. */
void maccrt_task_ran(maccrt_task *t, int err, double seen_at)
{
    maccrt_thread *self = maccrt_thread_self();
    maccrt_task *outer = self->current;
    self->current = t;
    task__after_run(t, err, seen_at, outer);
}

/* What follows plugin->run (with this thread's current task t): placement's
 * fix-up, a failure's fatal message, the unmaps, the timing; then, with the
 * current task outer again, completion. seen_at > 0: when the plugin saw the
 * version end (it ran asynchronously). */
static void task__after_run(maccrt_task *t, int err, double seen_at, maccrt_task *outer)
{
    maccrt_device *d = t->dev;
    double tr0 = t->x_tr0, r0 = t->x_r0;
    if (d->kind != MACC_DEV_HOST && !err)
        maccrt_placement_done(d, t->region, t->nmaps, t->maps);
    double now = t->timed || tr0 > 0.0 ? maccrt_now() : 0.0;
    double r1 = seen_at > 0.0 && seen_at < now ? seen_at : now;
    if (r0 > 0.0 && !err && maccrt_trace_on())
        maccrt_trace_task_event(MACCRT_TRACE_TASK, d, task__region_name(t->region), r0, r1, t->id, t->rank);
    if (err) {
        /* "region 'NAME' failed on nvidia:0: an illegal memory access was
         * encountered". Fatal at once: after a GPU error the device may
         * be unusable, so nothing more is tried on it (no copy back). */
        const char *es = d->plugin->error_string ? d->plugin->error_string(err) : NULL;
        if (es)
            maccrt_fatal(t->loc, "region '%s' failed on %s: %s", task__region_name(t->region), d->name,
                         es);
        maccrt_fatal(t->loc, "region '%s' failed on %s (error %d)", task__region_name(t->region),
                     d->name, err);
    }
    double u0 = now; /* (the unmaps start here; read only when traced) */
    maccrt_map_task_release_n(d, t->nmaps, t->maps, t->took, t->cache, t->loc);
    if (t->timed) /* (an asynchronous end's wait for a helper counts as the maps', not the run's) */
        t->t_maps += maccrt_now() - r1;
    if (tr0 > 0.0)
        maccrt_trace_task_event(MACCRT_TRACE_UNMAP, d, task__region_name(t->region), u0, maccrt_now(), t->id,
                                t->rank);
    maccrt_thread_self()->current = outer;
    task__end(t);
}

/* Whether a live task other than the one numbered `but` (0: none) depends on
 * some byte of [a, b) (below, "Write-backs ahead of the synchronisation
 * point"): a GPU task leaves the index only in its completer's batch, so
 * its own dependences are still there when its helper looks (task__end). */
static int task__deps_busy(uintptr_t a, uintptr_t b, unsigned long but);

/* t has run (and its maps are released): its times, then completion and
 * early write-backs, or the end of a direct task. */
static void task__end(maccrt_task *t)
{
    maccrt_device *d = t->dev;
    t->t_end = t->timed ? maccrt_now() : 0.0;
    if (t->sample)
        t->sample_s = maccrt_now() - t->x_s0;
    if (t->direct) {
        if (++task__direct_runs == 64)
            maccrt_task_flush_counts();
        if (t->direct == 1)
            task__free(t);
        return;
    }
    double f0 = t->x_tr0 > 0.0 ? maccrt_now() : 0.0;
    const char *fname = f0 > 0.0 ? task__trace_name(t) : NULL; /* (t may be freed by task__finish) */
    unsigned long fid = t->id, frank = t->rank;
    task__early ew;
    task__early_find(t, &ew);
    task__finish(t);
    if (f0 > 0.0)
        maccrt_trace_task_event(MACCRT_TRACE_FINISH, d, fname, f0, maccrt_now(), fid, frank);
    for (int i = 0; i < ew.n; i++)
        if (!(ew.read[i] && task__deps_busy(ew.a[i], ew.b[i], ew.id)) && !task__wb_defer(d, ew.a[i], ew.b[i], ew.loc))
            (void)maccrt_cache_write_early(d, ew.a[i], ew.b[i], ew.loc);
}

/* ---- waiting ---------------------------------------------------------------------------- */

/* Whether the host has tasks: placed on it (queued for its threads or
 * running) or in its own ready queue (maccrt_rt.lock held). Not the ready
 * tasks that merely list the host among their candidates: with the host
 * among the devices every task of a shared region lists it, and while the
 * share rule keeps them for the GPUs the waiting thread would never poll
 * (host + one GPU STREAM: 3-4% below the GPU alone). */
static int task__host_busy(void)
{
    const maccrt_device *h = maccrt_rt.host;
    return h->rq_len > 0 || __atomic_load_n(&h->nplaced, __ATOMIC_RELAXED) > 0;
}

/* The waiting thread completes GPU tasks (task__completer, above) until
 * done(arg), a poll of MACC_WAIT_SPIN_US without a completion, or the host
 * has tasks. Called and returns with maccrt_rt.lock held (dropped while it
 * polls); returns 1 when it completed tasks or done(arg) holds (the caller
 * looks again), 0 when the caller is to sleep as before. */
static int task__wait_completing(maccrt_thread *self, int (*done)(const void *), const void *arg)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (!rt->ngpus || rt->stopped || self->current || self->is_worker || task__host_busy())
        return 0;
    if (!task__completer_enabled() || task__spin_ns_get() <= 0) /* (MACC_WAIT_SPIN_US=0: no thread polls) */
        return 0;
    if (!task__completer_claim())
        return 0; /* another thread is the completer */
    pthread_mutex_unlock(&rt->lock);
    int did = task__poll_stack(done, arg, 1);
    pthread_mutex_lock(&rt->lock);
    return did || done(arg);
}

static int task__no_children(const void *arg)
{
    const maccrt_thread *self = arg;
    return __atomic_load_n(&self->children, __ATOMIC_RELAXED) == 0;
}

static int task__none_live(const void *arg)
{
    (void)arg;
    return __atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) == 0;
}

/* Write-backs ahead of the synchronisation point. When a program thread
 * begins to wait for its tasks, every task there is exists, and the dirty
 * GPU copies that no live task depends on (chains that ended before the
 * wait, which the early write-backs of completing tasks did not see) are
 * only waiting for the flush at the end of the wait, when the devices have
 * nothing left to run. The waiting thread copies them home now, one after
 * the other, while the rest of the tasks run (their helpers complete them
 * meanwhile), until its tasks are done: the flush then writes what is left,
 * all at once. The dependence index says what a live task depends on; a
 * task that uses a section without a dependence on it cannot have been
 * ordered after its writer by it, so it finds the same data, written back
 * or not (a copy home that a later task's write makes stale is only a copy
 * made twice). matmul on one H200: the flush was 3.3-3.9 ms of a 47 ms run
 * (bench/RESULTS.md, thirtieth session). MACC_WRITE_EARLY=0 turns this off
 * with the early write-backs. */
static int task__deps_busy(uintptr_t a, uintptr_t b, unsigned long but)
{
    int busy = 0;
    pthread_mutex_lock(&task__deps_lock);
    for (maccrt_rnode *n = maccrt_rtree_first_overlap(&task__deps, a, b); n && n->start < b && !busy;
         n = maccrt_rtree_next_below(&task__deps, n, b)) {
        const task__seg *s = (const task__seg *)n; /* (none is empty: task__deps_remove) */
        busy = s->writer && s->writer->id != but;
        for (int i = 0; i < s->nreaders && !busy; i++)
            busy = s->readers[i]->id != but;
    }
    pthread_mutex_unlock(&task__deps_lock);
    return busy;
}

static void task__write_ahead(maccrt_thread *self, const MACC_SrcLoc *loc)
{
    size_t n;
    maccrt_dirty_range *r = maccrt_cache_dirty_idle(&n);
    for (size_t i = 0; i < n && __atomic_load_n(&self->children, __ATOMIC_RELAXED) > 0; i++)
        if (!task__deps_busy(r[i].a, r[i].b, 0))
            maccrt_cache_write_early(r[i].dev, r[i].a, r[i].b, loc);
    free(r);
}

void maccrt_task_wait_children(const MACC_SrcLoc *loc)
{
    maccrt_thread *self = maccrt_thread_self();
    maccrt_task_flush_counts();
    task__lock_in_wait(); /* (its tasks in the inbox count first) */
    __atomic_store_n(&self->in_wait, 1, __ATOMIC_RELEASE);
    if (self->children > 0 && !self->current && !self->is_worker && task__deps_apart() &&
        maccrt_env_flag(&task__early_on, "MACC_WRITE_EARLY", 1)) {
        pthread_mutex_unlock(&maccrt_rt.lock);
        task__write_ahead(self, loc); /* (a copy's error names the taskwait) */
        pthread_mutex_lock(&maccrt_rt.lock);
    }
    while (self->children > 0) {
        if (!self->current && !self->is_worker && !maccrt_rt.stopped) {
            pthread_mutex_unlock(&maccrt_rt.lock);
            int ran = maccrt_host_help(maccrt_rt.host, self);
            pthread_mutex_lock(&maccrt_rt.lock);
            if (ran || self->children == 0)
                continue;
        }
        if (task__wait_completing(self, task__no_children, self))
            continue;
        pthread_cond_wait(&self->cv, &maccrt_rt.lock);
    }
    __atomic_store_n(&self->in_wait, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&maccrt_rt.lock);
    maccrt_cache_flush(NULL); /* the program reads the host copy next */
}

void maccrt_task_wait_all(void)
{
    maccrt_thread *self = maccrt_thread_self();
    task__lock_in_wait();
    __atomic_store_n(&self->in_wait, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&maccrt_rt.live, __ATOMIC_RELAXED) > 0)
        if (!task__wait_completing(self, task__none_live, NULL))
            pthread_cond_wait(&maccrt_rt.idle_cv, &maccrt_rt.lock);
    __atomic_store_n(&self->in_wait, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&maccrt_rt.lock);
    maccrt_cache_flush(NULL);
}

long maccrt_task_drain(double stall_s)
{
    maccrt_runtime *rt = &maccrt_rt;
    task__lock_in_wait();
    unsigned long seen = rt->finished;
    double since = maccrt_now();
    maccrt_thread *self = maccrt_thread_self();
    while (__atomic_load_n(&rt->live, __ATOMIC_RELAXED) > 0) {
        if (!self->current && !self->is_worker && !rt->stopped) {
            /* the exiting thread's own queued tasks (kept ones among them) */
            pthread_mutex_unlock(&rt->lock);
            int ran = maccrt_host_help(rt->host, self);
            pthread_mutex_lock(&rt->lock);
            if (ran || __atomic_load_n(&rt->live, __ATOMIC_RELAXED) == 0) {
                seen = rt->finished;
                since = maccrt_now();
                continue;
            }
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&rt->idle_cv, &rt->lock, &ts);
        double now = maccrt_now();
        if (rt->finished != seen) {
            seen = rt->finished;
            since = now;
        } else if (now - since > stall_s) {
            break;
        }
    }
    long left = __atomic_load_n(&rt->live, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rt->lock);
    return left;
}
