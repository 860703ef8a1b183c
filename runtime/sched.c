/* sched.c: the ready queues, tokens, and the choice of a device.
 *
 * Every function here runs with maccrt_rt.lock held.
 *
 * Ready tasks wait in queues kept in rseq order (their chains': see
 * maccrt_sched_ready), each device's own (tasks whose predecessors wrote
 * their data there, and tasks that chose to wait for that device) and a
 * global one. maccrt_sched_dispatch takes the queues' first
 * tasks oldest first and places each on one of its candidate devices that
 * has the task's tokens free, chosen by the policy. A task that fits nowhere reserves
 * its candidates for the rest of the walk: later, smaller tasks do not
 * overtake it on those devices (no starvation of large-resource tasks, in
 * order per device), and the walk stops as soon as every device is reserved,
 * so a long queue costs O(1) per dispatch when the machine is full.
 *
 * Tokens: each device has MACCRT_TOKENS (100). A task placed on a device holds
 * its tokens until it finishes (maccrt_sched_release). The policy's tokens()
 * hook decides how many: resources(N) from the version, or the defaults
 * (host: 50 deferred / 100 undeferred; GPU: 25), or 0 for data operations and
 * undeferred tasks nested in a running task (their parent holds tokens).
 *
 * Policies (MACC_SCHEDULER): "eft", the default, places a task where it is
 * expected to end first, counting the wait for a busy device and the tasks
 * already waiting for it, from per-region history of run times (maps
 * included) per device kind; a task may therefore wait for a fast busy GPU
 * instead of taking a free slow device (the tail rule). "greedy" considers
 * only the devices with free tokens now (the behaviour before eft; kept for
 * comparison). Both implement resources(auto) (policy__tokens).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The time a dispatch walk decides at: read once when it starts (a walk
 * takes microseconds; the clock was 5% of the walk's time with four fake
 * GPUs on 16 cores); outside a walk, now. */
static double sched__walk_now;

static double sched__now(void)
{
    return maccrt_rt.walk ? sched__walk_now : maccrt_now();
}

/* ---- the ready queue -------------------------------------------------------------------- */

/* The affinity rule (data constructs; see docs/RUNTIME.md): a region task
 * whose maps overlap data that a data construct made present on GPU g runs
 * only on g, when g is one of its candidates; otherwise its candidates stay.
 * Decided when the task becomes ready: its predecessors (e.g. an `enter data`
 * it depends on) have run by then. */
static void sched__affinity(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (!t->region || rt->ngpus == 0 || !(t->cand & ~MACCRT_BIT(rt->host->num)))
        return;
    maccrt_mask aff = maccrt_data_affinity(t);
    if (t->cand & aff)
        t->cand &= aff;
}

/* The GPU among `among` where t's predecessors wrote most of its bytes, or
 * -1 when none wrote on such a GPU. */
static int sched__producer_gpu(const maccrt_task *t, maccrt_mask among)
{
    maccrt_runtime *rt = &maccrt_rt;
    int best = -1;
    size_t bytes = 0;
    for (int k = 0; k < t->nprod; k++) {
        int d = t->prod_dev[k];
        if (d < 0 || d >= rt->ndevices || !(among & MACCRT_BIT(d)) || rt->devices[d]->kind == MACC_DEV_HOST)
            continue;
        if (t->prod_bytes[k] > bytes) {
            bytes = t->prod_bytes[k];
            best = d;
        }
    }
    return best;
}

/* A ready task's home: the GPU among its candidates where its predecessors
 * wrote most of the bytes it reads (task.c's note of producers), when the
 * policy is eft and the task has a choice; -1: none (the global queue). A
 * task with a home waits in that device's own queue. */
static int sched__home(const maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (rt->policy != &maccrt_policy_eft || !t->region || t->op || !(t->cand & (t->cand - 1)))
        return -1;
    return sched__producer_gpu(t, t->cand);
}

/* Links t into device q's own queue (q >= 0) or the global one, in rseq
 * order (maccrt_task_before): behind every task of the queue before it. A
 * new task with no predecessor (the largest rseq) goes to the tail at once;
 * a successor made ready by a completion, older than the tasks created
 * after its chain began, is searched for from the end its number is nearer
 * to, at most SCHED__LINK_SCAN steps (under the runtime lock; queues run to
 * thousands of tasks): past that it is linked where the search stopped, the
 * order then approximate. */
#define SCHED__LINK_SCAN 64

static void sched__link(maccrt_task *t, int q)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task **head = &rt->ready_head, **tail = &rt->ready_tail;
    if (q >= 0) {
        maccrt_device *h = rt->devices[q];
        head = &h->rq_head;
        tail = &h->rq_tail;
        h->rq_len++;
    }
    t->qdev = q;
    maccrt_task *prev = *tail; /* t goes after prev (NULL: at the head) */
    if (prev && maccrt_task_before(t, prev)) {
        int steps = 0;
        /* (rseq is unsigned: a task older than the head, a successor of a
         * task that was placed from the front, goes there at once; the
         * distance to the head was a wrapped difference that sent it to a
         * search from the tail, 64 steps and a place out of order) */
        if (maccrt_task_before(t, *head)) {
            prev = NULL;
        } else if (t->rseq - (*head)->rseq < prev->rseq - t->rseq) {
            prev = NULL;
            for (maccrt_task *n = *head; n && maccrt_task_before(n, t) && steps++ < SCHED__LINK_SCAN; n = n->qnext)
                prev = n;
        } else {
            while (prev && maccrt_task_before(t, prev) && steps++ < SCHED__LINK_SCAN)
                prev = prev->qprev;
        }
    }
    maccrt_task *next = prev ? prev->qnext : *head;
    t->qprev = prev;
    t->qnext = next;
    if (prev)
        prev->qnext = t;
    else
        *head = t;
    if (next)
        next->qprev = t;
    else
        *tail = t;
}

static void sched__unlink(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_task **head = &rt->ready_head, **tail = &rt->ready_tail;
    if (t->qdev >= 0) {
        maccrt_device *h = rt->devices[t->qdev];
        head = &h->rq_head;
        tail = &h->rq_tail;
        h->rq_len--;
    }
    if (t->qprev)
        t->qprev->qnext = t->qnext;
    else
        *head = t->qnext;
    if (t->qnext)
        t->qnext->qprev = t->qprev;
    else
        *tail = t->qprev;
    t->qprev = t->qnext = NULL;
    t->qdev = -1;
}

/* t's place in the walk's order (t->rseq), as it becomes ready or is
 * launched ahead. */
static void sched__order(maccrt_task *t)
{
    static int program_order = -1, chain_order = -1;
    if (maccrt_env_flag(&program_order, "MACC_PROGRAM_ORDER", 1) && t->id)
        t->rseq = maccrt_env_flag(&chain_order, "MACC_CHAIN_ORDER", 1) ? t->rank : t->id;
    else
        t->rseq = ++maccrt_rt.ready_seq;
}

void maccrt_sched_ready(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    sched__affinity(t);
    if (maccrt_trace_on())
        t->t_ready = maccrt_now();
    for (int d = 0; d < rt->ndevices; d++)
        if (t->cand & MACCRT_BIT(d))
            rt->ready_cand[d]++;
    t->state = MACCRT_TASK_READY;
    /* The walk's order: the chains' (t->rank: its first link's number, the
     * ties by number), so a task whose predecessor just ended goes before
     * the tasks created after its chain began (depth first: a chain's next
     * link before the next chain's links, even where the program creates
     * the links across the chains, as STREAM's kernels over the blocks);
     * MACC_CHAIN_ORDER=0: the program's (the order the tasks were created
     * in); MACC_PROGRAM_ORDER=0: the order they became ready. */
    sched__order(t);
    t->wait_walk = 0;
    sched__link(t, sched__home(t));
}

static void sched__unqueue(maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    for (int d = 0; d < rt->ndevices; d++)
        if (t->cand & MACCRT_BIT(d))
            rt->ready_cand[d]--;
    sched__unlink(t);
}

/* ---- versions ------------------------------------------------------------------------------ */

const MACC_Version *maccrt_pick_version(const MACC_Region *r, const maccrt_device *d, int fallback)
{
    const MACC_Version *fb = NULL;
    for (int i = 0; i < r->nversions; i++) {
        const MACC_Version *v = &r->versions[i];
        if (v->kind != d->kind || !v->fn)
            continue;
        if (d->plugin->version_ok && !d->plugin->version_ok(d, v))
            continue;
        if (!(v->flags & MACC_VERSION_FALLBACK))
            return v;
        if (!fb)
            fb = v;
    }
    return fallback ? fb : NULL;
}

const MACC_Version *maccrt_task_version(const maccrt_task *t, const maccrt_device *d)
{
    if (!t->region)
        return NULL;
    return maccrt_pick_version(t->region, d, t->fallback);
}

/* ---- tokens ------------------------------------------------------------------------------ */

static int sched__need(maccrt_task *t, maccrt_device *d, const MACC_Version **vout)
{
    *vout = NULL;
    if (t->op)
        return 0;
    const MACC_Version *v = maccrt_task_version(t, d);
    *vout = v;
    if (!v)
        return MACCRT_TOKENS + 1; /* cannot run there (should not be a candidate) */
    if (t->nested)
        return 0;
    return maccrt_rt.policy->tokens(t, d->kind, v);
}

static double sched__estimate(maccrt_task *t, maccrt_device *d);
static double sched__occupancy(const maccrt_task *t, const maccrt_device *d, int ahead);

/* Whether a kind other than `kind` has run ri's region. */
static int sched__measured_other(const maccrt_region_info *ri, int kind)
{
    for (int k = 0; k < MACC_DEV_NKINDS; k++)
        if (k != kind && ri->runs[k] > 0)
            return 1;
    return 0;
}
/* Whether t could run on some device other than the host. */
static int sched__gpu_candidate(const maccrt_task *t)
{
    return (t->cand & ~MACCRT_BIT(maccrt_rt.host->num)) != 0;
}

/* Beside a GPU, a task with depend clauses never explores the host: its
 * successors come after it is placed (matmul's chain heads have none when
 * they are ready), and its chain then waits for the host's run, however
 * slow (matmul-L on two H200s: one 30 ms host task held a chain of eight
 * 0.5 ms links, shared 0.59 of the GPUs alone). A task without depend
 * clauses can never head a chain. Whether t is such a task and its region
 * has not run on the host. maccrt_rt.lock held. */
int maccrt_sched_host_unexplorable(const maccrt_task *t)
{
    return t->ndeps > 0 && t->region && sched__gpu_candidate(t) &&
           !maccrt_region_info_get(t->region)->runs[MACC_DEV_HOST];
}

void maccrt_sched_link_done(maccrt_task *t)
{
    if (t->link_ns) {
        atomic_fetch_sub(&t->dev->link_ns, t->link_ns);
        t->link_ns = 0;
    }
}

/* Tasks placed on d that run or wait for their turn on it, not those
 * launched ahead queued behind their lane's running task (tokens not given
 * yet): eft's slots and occupancy count these. */
static int sched__running(const maccrt_device *d)
{
    int n = __atomic_load_n(&d->nplaced, __ATOMIC_RELAXED) - __atomic_load_n(&d->nahead0, __ATOMIC_RELAXED);
    return n > 0 ? n : 0;
}

/* t's entry of d's pend[] (slock held). */
static void sched__pend_set(maccrt_device *d, maccrt_task *t)
{
    int i = t->pidx;
    /* (nahead0 first: a host task never reads notok's cache line) */
    d->pend[i] = d->nahead0 && t->notok ? -1.0 : t->exp_end;
}

/* eft__first's kept value with t's slot (slock held). */
static void sched__first_add(maccrt_device *d, maccrt_task *t)
{
    if (d->first_ok && (d->first_end == 0 || t->exp_end < d->first_end))
        d->first_end = t->exp_end; /* eft__first: the earliest end, kept */
}

static __thread maccrt_task *sched__sub_head, *sched__sub_tail; /* placed GPU tasks to submit */
static const int sched__auto_tokens[MACCRT_AUTO_LEVELS] = {100, 50, 25};

/* t's place on d counted: its device, version and tokens, its expected end,
 * d's list of placed tasks and its tokens (sched__place, and a task
 * launched ahead: maccrt_sched_place_ahead). */
static void sched__place_on(maccrt_task *t, maccrt_device *d, int need, const MACC_Version *v, int ahead)
{
    t->dev = d;
    t->ver = v;
    t->tokens = need;
    /* the expected end: eft compares it across devices (one device: no choice) */
    t->exp_end = 0.0;
    if (maccrt_rt.ndevices > 1) {
        t->est1 = (float)sched__estimate(t, d);
        t->exp_end = sched__now() + t->est1;
    }
    /* its copies queue on d's link (eft's link term) until its maps are acquired */
    if (t->chose_dev1 == d->num + 1 && t->chose_xfer > 0 && !t->op) {
        t->link_ns = (long long)(t->chose_xfer * 1e9);
        atomic_fetch_add(&d->link_ns, t->link_ns);
    }
    t->chose_dev1 = 0;
    t->released = 0;
    pthread_mutex_lock(&d->slock);
    t->dprev = NULL;
    t->dnext = d->placed;
    if (d->placed)
        d->placed->dprev = t;
    d->placed = t;
    __atomic_store_n(&d->nplaced, d->nplaced + 1, __ATOMIC_RELAXED);
    if (ahead) { /* (else 0: as made, or as its last release left it) */
        t->notok = 1;
        __atomic_store_n(&d->nahead0, d->nahead0 + 1, __ATOMIC_RELAXED);
    }
    t->occ = (float)sched__running(d);
    t->pidx = -1;
    if (d->npend < MACCRT_PEND) {
        t->pidx = d->npend++;
        d->ptask[t->pidx] = t;
        sched__pend_set(d, t);
    }
    if (!ahead)
        sched__first_add(d, t); /* (ahead: its lane's running task holds the slot) */
    /* (read without slock by task.c's direct rule and the walk: atomically) */
    __atomic_store_n(&d->tokens_free, d->tokens_free - need, __ATOMIC_RELAXED);
    if (d->tokens_total - d->tokens_free > d->tokens_peak_used)
        d->tokens_peak_used = d->tokens_total - d->tokens_free;
    pthread_mutex_unlock(&d->slock);
}

static void sched__place(maccrt_task *t, maccrt_device *d, int need, const MACC_Version *v)
{
    sched__unqueue(t);
    sched__place_on(t, d, need, v, 0);
    if (t->region && !t->op) {
        maccrt_region_info *ri = maccrt_region_info_get(t->region);
        if (ri->runs[d->kind] == 0) {
            ri->exploring[d->kind]++;
            /* The host's exploring instance in a shared run (a GPU measured,
             * or one among the task's candidates) runs alone there (the
             * region's other host instances wait for its time): it gets every host thread, and its time is scaled
             * to its tokens' share when learned (sched_release). nbody-L's
             * one exploring task on 6 of 15 threads took 0.86 s against a
             * GPU step of 0.36 s. */
            if (d->kind == MACC_DEV_HOST && t->deferred && !t->nested &&
                (sched__measured_other(ri, MACC_DEV_HOST) || sched__gpu_candidate(t)) &&
                maccrt_host_nthreads(need) < maccrt_rt.host_threads)
                t->explore_threads = maccrt_rt.host_threads;
        }
        /* the tiny-task measure (task.c): host runs with no GPU in use */
        if (d->kind == MACC_DEV_HOST && t->deferred && maccrt_rt.ngpus == 0)
            t->sample = ri->host_placed++ < 8 || (ri->host_placed & 63) == 0;
    }
    if (v && v->resources == MACC_RES_AUTO && !t->nested) {
        maccrt_region_info *ri = maccrt_region_info_get(t->region);
        for (int l = 0; l < MACCRT_AUTO_LEVELS; l++)
            if (sched__auto_tokens[l] == need && !ri->auto_choice[d->kind])
                ri->auto_started[d->kind][l]++;
    }
    maccrt_stats_placed(d, t);
    if (maccrt_trace_on() && t->t_ready > 0.0) {
        t->t_placed = maccrt_now();
        maccrt_trace_task_event(MACCRT_TRACE_WAIT_READY, d, t->region ? t->region->name : "data", t->t_ready,
                                t->t_placed, t->id, t->rank);
    }
    if (t->waiter && (d->kind == MACC_DEV_HOST || maccrt_rt.stopped)) {
        /* Undeferred host task: its encountering thread runs it (no switch).
         * After shutdown (a task created by a later atexit handler) the
         * helpers are gone, so a GPU task is run by its encountering thread
         * too (the plugin's run then uses its data stream). */
        __atomic_store_n(&t->state, MACCRT_TASK_INLINE, __ATOMIC_RELEASE); /* task__spin_wait reads it */
        pthread_cond_signal(&t->waiter->cv);
    } else {
        t->state = MACCRT_TASK_PLACED;
        if (d->kind == MACC_DEV_HOST) {
            d->plugin->submit(d, t); /* (its hand-over to a finishing worker needs it now) */
        } else {
            /* after the lock: the plugin's wake-up of a helper (a futex
             * call) is not part of the runtime's critical section */
            t->sub_next = NULL;
            if (sched__sub_tail)
                sched__sub_tail->sub_next = t;
            else
                sched__sub_head = t;
            sched__sub_tail = t;
        }
    }
}

int maccrt_sched_place_ahead(maccrt_task *t, maccrt_device *d)
{
    const MACC_Version *v = maccrt_task_version(t, d);
    if (!v || v->resources == MACC_RES_AUTO || maccrt_region_info_get(t->region)->runs[d->kind] == 0)
        return 0;
    sched__order(t);
    sched__place_on(t, d, 0, v, 1);
    maccrt_stats_placed(d, t);
    if (maccrt_trace_on())
        t->t_placed = maccrt_now();
    t->state = MACCRT_TASK_RUNNING;
    return 1;
}

void maccrt_sched_unplace_ahead(maccrt_task *t)
{
    maccrt_device *d = t->dev;
    maccrt_sched_release_device(t, 0);
    maccrt_stats_unplaced(d, t);
    t->tokens = 0;
    t->ver = NULL;
    t->dev = NULL;
    t->state = MACCRT_TASK_WAITING;
}

/* The tokens of t, placed ahead on d (its version set by
 * maccrt_sched_place_ahead). */
static int sched__ahead_need(maccrt_task *t, const maccrt_device *d)
{
    return maccrt_rt.policy->tokens(t, d->kind, t->ver);
}

/* A task launched ahead takes its tokens: it runs now, its lane's slot its
 * own (the task before it ended now). slock held. */
static void sched__ahead_take(maccrt_device *d, maccrt_task *t, int need, double now, int counted)
{
    t->tokens = need;
    if (!counted) /* (counted: taken from the release's own, in its one store) */
        __atomic_store_n(&d->tokens_free, d->tokens_free - need, __ATOMIC_RELAXED);
    if (d->tokens_total - d->tokens_free > d->tokens_peak_used)
        d->tokens_peak_used = d->tokens_total - d->tokens_free;
    t->notok = 0;
    __atomic_store_n(&d->nahead0, d->nahead0 - 1, __ATOMIC_RELAXED);
    t->occ = (float)sched__running(d); /* (its start's occupancy: now, with itself) */
    if (now > 0)
        t->exp_end = now + t->est1;
    if (t->pidx >= 0)
        sched__pend_set(d, t);
    sched__first_add(d, t);
}

void maccrt_sched_ahead_tokens(maccrt_task *t)
{
    maccrt_device *d = t->dev;
    int need = sched__ahead_need(t, d);
    double now = maccrt_rt.ndevices > 1 ? sched__now() : 0.0;
    pthread_mutex_lock(&d->slock);
    /* (not given back yet: it has not ended; nor given its tokens by the
     * release of the task before it, maccrt_sched_release_device) */
    if (!t->released && t->notok)
        sched__ahead_take(d, t, need, now, 0);
    pthread_mutex_unlock(&d->slock);
}

void maccrt_sched_submit_placed(void)
{
    maccrt_task *t = sched__sub_head;
    sched__sub_head = sched__sub_tail = NULL;
    while (t) {
        maccrt_task *n = t->sub_next;
        t->dev->plugin->submit(t->dev, t);
        t = n;
    }
}

/* A walk stops after this many tasks chose to wait for a busy device: the
 * tasks behind them would see an even longer backlog there, and the next
 * dispatch (at the next completion) looks again. Keeps a dispatch O(1) when
 * a long ready queue waits for a fast device that the other devices are not
 * worth sharing with. It must be deep enough for a slower device to see the
 * fast one's backlog (a 12x slower host takes tasks only behind 12 rounds of
 * the GPU's slots); each of those choices costs the policy's estimates,
 * which is why eft remembers a task's residency term (eft__residency). */
#define MACCRT_WALK_WAITING 64

/* One walk's state: devices reserved by tasks that wait for them (no later
 * task takes their tokens), tasks counted as waiting per device, the
 * devices some ready task could use, the tasks that chose to wait, the share
 * rule's answer for the last region asked. */
typedef struct sched__walk_state {
    maccrt_mask reserved, active;
    int backlog[MACCRT_MAX_DEVICES];
    int waiting;
    const MACC_Region *so_region;
    maccrt_mask so_mask, so_cand;
} sched__walk_state;

enum { SCHED__PLACED, SCHED__MOVED, SCHED__WAITS, SCHED__STOP };

/* Whether t, which the policy told to wait for its busy queue's device h
 * in an earlier walk, still waits, without the policy weighing every
 * candidate again: h has ended no task since (its queue and expected ends
 * are as they were), the choice is younger than SCHED__WAIT_TTL (the data
 * may have moved since), and no device free now would end t sooner than h
 * (the policy's still_waits, which weighs only those; without it, none may
 * be free). The busy devices are not weighed again: one of them might
 * have become a better place to wait in (fewer tasks of this walk waiting
 * for it); that is seen within SCHED__WAIT_TTL. With eight fake GPUs the
 * queues' firsts and the tasks behind them, told to wait for their busy
 * home, were asked again at every completion's walk: 2.9 of the 3.8 policy
 * calls per task, each weighing nine devices. */
#define SCHED__WAIT_TTL 200e-6

static int sched__still_waits(maccrt_task *t, maccrt_mask fit, const sched__walk_state *w)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *h = rt->devices[t->qdev];
    if (!t->wait_walk || __atomic_load_n(&h->rel_walk, __ATOMIC_RELAXED) >= t->wait_walk ||
        sched__now() - t->wait_at > SCHED__WAIT_TTL)
        return 0;
    return !fit || (rt->policy->still_waits &&
                    rt->policy->still_waits(t, h, fit,
                                            t->region == w->so_region && t->cand == w->so_cand ? w->so_mask : 0,
                                            w->backlog));
}

static int sched__consider_one(maccrt_task *t, sched__walk_state *w, int last);
static double sched__estimate_hi(maccrt_task *t, maccrt_device *d, double e);

/* MACC_SCHED_LOG=FILE: a line per task the walk looks at (when, which task,
 * the queue it waited in, what became of it, and per device its free
 * tokens, placed tasks, this walk's backlog, the region's runs on its kind
 * and the estimates eft weighs), written under the runtime lock. */
static FILE *sched__log;
static int sched__log_on = -1;
static double sched__log_t0;

static void sched__log_open(void)
{
    const char *path = getenv("MACC_SCHED_LOG");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) /* a large buffer: a write per line under the lock cut dispatch by two thirds */
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    __atomic_store_n(&sched__log, f, __ATOMIC_RELEASE);
    if (path && *path && !f)
        maccrt_warn(NULL, "MACC_SCHED_LOG: cannot write '%s'; no scheduling log", path);
    sched__log_t0 = maccrt_now();
    __atomic_store_n(&sched__log_on, sched__log != NULL, __ATOMIC_RELEASE);
}

void maccrt_sched_log_flush(void)
{
    FILE *f = __atomic_load_n(&sched__log, __ATOMIC_ACQUIRE);
    if (f)
        fflush(f); /* (stdio's own lock orders it with the walks' writes) */
}

static void sched__log_task(maccrt_task *t, const sched__walk_state *w, int q0, int r)
{
    static const char *const what[] = {"placed", "moved", "waits", "stop"};
    maccrt_runtime *rt = &maccrt_rt;
    fprintf(sched__log, "%.3f ms task %lu %s queue %s: %s", (maccrt_now() - sched__log_t0) * 1e3, t->id,
            t->region ? t->region->name : "data", q0 >= 0 ? rt->devices[q0]->name : "global", what[r]);
    if (t->dev && r == SCHED__PLACED)
        fprintf(sched__log, " on %s", t->dev->name);
    else if (t->qdev >= 0)
        fprintf(sched__log, " in %s's queue", rt->devices[t->qdev]->name);
    for (int d = 0; d < rt->ndevices; d++) {
        if (!(t->cand & MACCRT_BIT(d)))
            continue;
        maccrt_device *dv = rt->devices[d];
        fprintf(sched__log, " | %s free %d placed %d backlog %d", dv->name,
                __atomic_load_n(&dv->tokens_free, __ATOMIC_RELAXED), __atomic_load_n(&dv->nplaced, __ATOMIC_RELAXED),
                w->backlog[d]);
        if (t->region) {
            maccrt_region_info *ri = maccrt_region_info_get(t->region);
            double e = sched__estimate(t, dv);
            fprintf(sched__log, " runs %ld est %.6f hi %.6f", ri->runs[dv->kind], e, sched__estimate_hi(t, dv, e));
        }
    }
    fputc('\n', sched__log);
}

/* sched__consider_one (below), and its line of MACC_SCHED_LOG when that is on. */
static int sched__consider(maccrt_task *t, sched__walk_state *w, int last)
{
    if (__builtin_expect(__atomic_load_n(&sched__log_on, __ATOMIC_RELAXED) == 0, 1))
        return sched__consider_one(t, w, last);
    if (sched__log_on < 0)
        sched__log_open();
    int q0 = t->qdev;
    int r = sched__consider_one(t, w, last);
    if (sched__log)
        sched__log_task(t, w, q0, r);
    return r;
}

/* One ready task looked at by the walk: placed (SCHED__PLACED), left waiting
 * (SCHED__WAITS), or left waiting with nothing more to place in this walk
 * (SCHED__STOP). A task of a device's own queue (`home`) already counts in
 * that device's backlog (its queue length). `last`: no task follows (the
 * policy is not asked where a task that fits nowhere waits). */
static int sched__consider_one(maccrt_task *t, sched__walk_state *w, int last)
{
    maccrt_runtime *rt = &maccrt_rt;
    int home = t->qdev >= 0;
    maccrt_mask cand = t->cand & ~w->reserved;
    if (!cand) {
        /* every candidate is reserved: it waits behind the earlier ones */
        if (!home)
            for (int d = 0; d < rt->ndevices; d++)
                if (t->cand & MACCRT_BIT(d)) {
                    w->backlog[d]++;
                    break;
                }
        return SCHED__WAITS;
    }
    maccrt_mask fit = 0;
    for (int d = 0; d < rt->ndevices; d++) {
        if (!(cand & MACCRT_BIT(d)))
            continue;
        maccrt_device *dv = rt->devices[d];
        const MACC_Version *v;
        int need = sched__need(t, dv, &v);
        if (need <= __atomic_load_n(&dv->tokens_free, __ATOMIC_RELAXED))
            fit |= MACCRT_BIT(d);
    }
    if (!fit) {
        /* fits nowhere now: it reserves its candidates (no overtaking).
         * The device it waits for only counts in the backlog that later
         * tasks of this walk see: when reserving its candidates stops
         * the walk (every active device reserved: the GPUs are full) or
         * nothing follows, the policy is not asked (a submission while
         * the machine is full costs O(1), no estimates). */
        w->reserved |= t->cand;
        if ((w->reserved & w->active) == w->active)
            return SCHED__STOP;
        if (last || home)
            return SCHED__WAITS;
        maccrt_device *wd = !(t->cand & (t->cand - 1)) ? rt->devices[__builtin_ctzll(t->cand)]
                                                        : (rt->policy_calls++, rt->policy->choose(t, t->cand, 0, w->backlog));
        if (wd)
            w->backlog[wd->num]++;
        return SCHED__WAITS;
    }
    if (rt->policy->shut_out && t->region && (t->cand & (t->cand - 1))) {
        if (t->region != w->so_region || t->cand != w->so_cand) {
            w->so_region = t->region;
            w->so_cand = t->cand;
            w->so_mask = rt->policy->shut_out(t, t->cand);
        }
        maccrt_mask open = t->cand & ~w->so_mask;
        if (w->so_mask && (fit & ~w->so_mask) == 0 && open) {
            /* its open candidates are all busy: it waits for them (the
             * first one's backlog counts it; with two GPUs open and a
             * shut-out host free, the policy was asked for every task
             * of the walk: matmul on the host and two H200s 0.31 of the
             * GPUs alone) */
            int wd = __builtin_ctzll(open);
            if (!home)
                w->backlog[wd]++;
            w->reserved |= open;
            if (++w->waiting > MACCRT_WALK_WAITING)
                return SCHED__STOP;
            return SCHED__WAITS;
        }
    }
    if (home && !(fit & MACCRT_BIT(t->qdev)) && sched__still_waits(t, fit, w)) {
        /* as told before: it waits for its busy device (below) */
        w->reserved |= MACCRT_BIT(t->qdev);
        if ((w->reserved & w->active) == w->active || ++w->waiting > MACCRT_WALK_WAITING)
            return SCHED__STOP;
        return SCHED__WAITS;
    }
    /* one candidate, free: no choice to make; its home free and no
     * candidate that could end it sooner: no choice either */
    maccrt_device *d = t->cand == fit && !(fit & (fit - 1)) ? rt->devices[__builtin_ctzll(fit)] : NULL;
    if (!d && home && (fit & MACCRT_BIT(t->qdev)) && rt->policy->stays &&
        rt->policy->stays(t, rt->devices[t->qdev], t->cand,
                          t->region == w->so_region && t->cand == w->so_cand ? w->so_mask : 0))
        d = rt->devices[t->qdev];
    if (!d) {
        rt->policy_calls++;
        d = rt->policy->choose(t, t->cand, fit, w->backlog);
    }
    if (!(fit & MACCRT_BIT(d->num))) {
        /* it would finish earlier by waiting for d (the tail rule): it
         * waits in d's own queue (looked at again when it is that queue's
         * first, not at every walk) */
        w->reserved |= MACCRT_BIT(d->num);
        int moved = t->qdev != d->num;
        if (moved) {
            sched__unlink(t);
            sched__link(t, d->num);
            w->backlog[d->num]++;
        }
        t->wait_walk = rt->walk;
        t->wait_at = sched__now();
        if ((w->reserved & w->active) == w->active || ++w->waiting > MACCRT_WALK_WAITING)
            return SCHED__STOP;
        return moved ? SCHED__MOVED : SCHED__WAITS;
    }
    const MACC_Version *v;
    int need = sched__need(t, d, &v);
    sched__place(t, d, need, v);
    return SCHED__PLACED;
}

/* Whether a device other than q has free tokens and is not reserved in this walk. */
static int sched__free_elsewhere(const sched__walk_state *w, int q)
{
    maccrt_runtime *rt = &maccrt_rt;
    for (int d = 0; d < rt->ndevices; d++)
        if (d != q && !(w->reserved & MACCRT_BIT(d)) && __atomic_load_n(&rt->devices[d]->tokens_free, __ATOMIC_RELAXED) > 0 &&
            (w->active & MACCRT_BIT(d)))
            return 1;
    return 0;
}

/* The walk: the queues' firsts, oldest first, a device's queue until its
 * first waits (per device FIFO), the global queue past tasks that wait. A
 * task whose data is on one GPU (its home) is thus looked at when it is
 * that GPU's queue's first, not at every walk: with one queue, tasks
 * waiting for their busy home GPU piled up at the front and every
 * completion's walk asked the policy about each of them again before it
 * reached a task it could place (bench/dispatch, two fake GPUs: 2.5 policy
 * calls per placed task, four: 3.3, most of the runtime lock's hold at each
 * completion). */
void maccrt_sched_dispatch(void)
{
    maccrt_runtime *rt = &maccrt_rt;
    sched__walk_state w; /* (its arrays set for the devices there are only: a walk per task) */
    w.reserved = w.active = 0;
    w.waiting = 0;
    w.so_region = NULL;
    w.so_mask = w.so_cand = 0;
    /* The devices some ready task could use: once all are reserved, nothing
     * later in the queue can be placed, and the walk stops (O(1) per
     * dispatch when the machine is busy, however long the queue). */
    for (int d = 0; d < rt->ndevices; d++) {
        if (rt->ready_cand[d] > 0)
            w.active |= MACCRT_BIT(d);
        w.backlog[d] = rt->devices[d]->rq_len; /* its own queue waits for it */
    }
    /* Devices the policy shuts out of a region (the share rule), asked once
     * per region per walk: a task whose free candidates are all shut out
     * waits for its other candidate without asking the policy. Without this,
     * a device that the share rule shuts out but that is always free (a host
     * beside a much faster GPU) kept every walk going to MACCRT_WALK_WAITING
     * tasks, each costing the policy's estimates (the residency term's
     * directory look-ups) under the runtime lock: matmul shared dispatched
     * slower than its GPU ran. */
    /* per-walk memos of the policy (the share rule's); read by releases
     * beside the runtime lock (rel_walk) */
    rt->walk = __atomic_add_fetch(&rt->walks, 1, __ATOMIC_RELAXED);
    sched__walk_now = maccrt_now();
    /* The queues' firsts, oldest (smallest rseq) first: the order of one
     * queue across the queues. A device's queue whose first waits for
     * its device is left for the rest of the walk (in order per device); the
     * global queue goes on past a task that waits (as the one queue did). */
    int stop = 0;
    maccrt_mask held = 0; /* device queues whose first waits */
    maccrt_task *g = rt->ready_head;
    while (!stop) {
        maccrt_task *t = g;
        int q = -1;
        for (int i = 0; i < rt->ndevices; i++) {
            maccrt_task *h = rt->devices[i]->rq_head;
            if (h && !(held & MACCRT_BIT(i)) && (!t || maccrt_task_before(h, t))) {
                t = h;
                q = i;
            }
        }
        if (!t)
            break;
        int r;
        if (q < 0) {
            g = t->qnext;
            r = sched__consider(t, &w, g == NULL);
        } else {
            /* the queue's first: none of its queue is ahead of it */
            w.backlog[q] = 0;
            r = sched__consider(t, &w, 0);
            w.backlog[q] = rt->devices[q]->rq_len;
            if (r == SCHED__WAITS)
                held |= MACCRT_BIT(q);
        }
        if (r == SCHED__STOP)
            stop = 1;
    }
    /* A device still free: the tasks behind each queue's first, which waits
     * for its device, may rather go there (each counts those ahead of it in
     * its queue); a GPU whose queue ran dry does not idle while another's
     * queue is long. From the queue's tail: the last task has the most
     * ahead of it, so when it waits for its device the ones before it, with
     * fewer ahead, would too, and the look at that queue ends there. From
     * the front, every task behind the first was asked at every walk with a
     * device free: on four fake GPUs 77-81% of all the policy's calls, 12-18
     * tasks looked at per task dispatched, nearly all of them left waiting
     * (bench/dispatch with DISPATCH_ASYNC=1, a count of this loop's calls). */
    for (int i = 0; i < rt->ndevices && !stop; i++) {
        maccrt_device *h = rt->devices[i];
        if (!h->rq_head || !sched__free_elsewhere(&w, i))
            continue;
        int ahead = h->rq_len - 1; /* before the tail */
        maccrt_task *prev;
        for (maccrt_task *t = h->rq_tail; t && t != h->rq_head && !stop; t = prev, ahead--) {
            prev = t->qprev;
            w.backlog[i] = ahead;
            int r = sched__consider(t, &w, 0);
            w.backlog[i] = h->rq_len;
            if (r == SCHED__STOP)
                stop = 1;
            else if (r == SCHED__WAITS)
                break;
            if (!sched__free_elsewhere(&w, i))
                break;
        }
    }
    rt->walk = 0;
}

/* A device's own lock (d->slock) over its placement state: its tokens, its
 * placed tasks' list, count and expected ends (pend, first_end) and
 * rel_walk. Placements take it inside maccrt_rt.lock; a task's release
 * takes it alone (maccrt_sched_release_device), so that the GPU helper
 * that ran a task can give its device's state back before it pushes the
 * task on the completions' stack (while the completer is behind: task.c,
 * MACC_RELEASE_IN_HELPER),
 * and the completion thread (which completes every GPU task, serially,
 * under maccrt_rt.lock: about 1.7 us per task with eight fake GPUs) does
 * only the task's successors, its creator's counts and the policy's
 * history. The walk reads the list and the ends under slock (eft__first)
 * and the counts, tokens_free and rel_walk atomically. */
void maccrt_sched_release_device(maccrt_task *t, int by_helper)
{
    maccrt_device *d = t->dev;
    if (!d || t->released)
        return;
    maccrt_sched_link_done(t); /* (its maps were not acquired: an error path) */
    /* The task the plugin launched behind t on its lane (pafter: final once
     * t's end was claimed) runs from now on: it takes its tokens with t's
     * release, in the same hold of slock. Left to the completion of its last
     * predecessor (maccrt_sched_ahead_tokens), the slot looked free between
     * a helper's release and that completion, and a walk then could place a
     * waiting chain's head there: five chains at once on a GPU of four
     * slots. (It is alive: it holds a reference until that completion.) */
    maccrt_task *nx = d->kind != MACC_DEV_HOST ? __atomic_load_n(&t->pafter, __ATOMIC_ACQUIRE) : NULL;
    int nneed = 0;
    double now = 0;
    if (nx && nx->dev == d && nx->ver) {
        nneed = sched__ahead_need(nx, d);
        now = maccrt_rt.ndevices > 1 ? maccrt_now() : 0.0; /* (no runtime lock: not the walk's clock) */
    }
    pthread_mutex_lock(&d->slock);
    t->released = 1; /* (under slock: maccrt_sched_ahead_tokens reads it) */
    /* (the walk reads tokens_free without slock: t's tokens and those nx
     * takes go in one store, never seen free between) */
    int pass = nneed > 0 && nx->notok && !nx->released;
    if (pass && nneed > t->tokens) {
        /* nx asks more than t leaves it (its region's rule grew since t was
         * placed: its kernels were found to fill the GPU, MACC_GPU_FILLS; or
         * another region's resources): no more than t's and the free ones,
         * never more than the device holds. Taking the rule's count put four
         * chains that began at 25 tokens at 50 each for the rest of their
         * links, 200 of 100. */
        int avail = t->tokens + (d->tokens_free > 0 ? d->tokens_free : 0);
        if (nneed > avail)
            nneed = avail;
    }
    /* (sched__still_waits) */
    __atomic_store_n(&d->rel_walk, __atomic_load_n(&maccrt_rt.walks, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&d->tokens_free, d->tokens_free + t->tokens - (pass ? nneed : 0), __ATOMIC_RELAXED);
    if (by_helper)
        __atomic_store_n(&d->released_by_helper, d->released_by_helper + 1, __ATOMIC_RELAXED);
    if (t->dprev)
        t->dprev->dnext = t->dnext;
    else if (d->placed == t)
        d->placed = t->dnext;
    if (t->dnext)
        t->dnext->dprev = t->dprev;
    t->dprev = t->dnext = NULL;
    t->occ = 0.5f * (t->occ + (float)sched__running(d)); /* (the mean of its start's and its end's) */
    __atomic_store_n(&d->nplaced, d->nplaced - 1, __ATOMIC_RELAXED);
    if (d->nahead0 && t->notok) { /* (ended, or taken back, before its last predecessor's completion) */
        t->notok = 0;
        __atomic_store_n(&d->nahead0, d->nahead0 - 1, __ATOMIC_RELAXED);
    }
    if (t->pidx >= 0 && t->pidx < d->npend && d->ptask[t->pidx] == t) {
        int last = --d->npend;
        if (t->pidx != last) {
            d->pend[t->pidx] = d->pend[last];
            d->ptask[t->pidx] = d->ptask[last];
            d->ptask[t->pidx]->pidx = t->pidx;
        }
        t->pidx = -1;
    }
    if (t->exp_end <= d->first_end || d->nplaced == 0)
        d->first_ok = 0; /* eft__first: counted again when asked */
    if (pass)
        sched__ahead_take(d, nx, nneed, now, 1);
    pthread_mutex_unlock(&d->slock);
}

void maccrt_sched_release(maccrt_task *t)
{
    maccrt_device *d = t->dev;
    if (!d)
        return;
    maccrt_sched_release_device(t, 0);
    maccrt_stats_finished(d, t);
    if (t->region && t->timed) {
        /* the run alone: the residency term adds the data's moves; an
         * exploring host instance's time scaled to its tokens' threads */
        double s = t->t_end - t->t_start - t->t_maps;
        if (t->explore_threads > 0)
            s *= (double)t->explore_threads / maccrt_host_nthreads(t->tokens);
        maccrt_rt.policy->observe(t, d, s);
    }
    t->tokens = 0;
}

/* ---- per-region history ------------------------------------------------------------------- */

static maccrt_region_info *sched__regions; /* open addressing, keyed by region pointer */
static size_t sched__nregions, sched__capregions;

static size_t sched__hash(const MACC_Region *r)
{
    uintptr_t x = (uintptr_t)r;
    x ^= x >> 17;
    x *= (uintptr_t)0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    return (size_t)x;
}

/* The last region asked (maccrt_rt.lock): one walk's choice asks for the
 * same region's history a dozen times per candidate device. */
static maccrt_region_info *sched__lastri;

maccrt_region_info *maccrt_region_info_get(const MACC_Region *r)
{
    maccrt_region_info *last = sched__lastri;
    if (last && last->region == r)
        return last;
    if (sched__nregions * 2 >= sched__capregions) {
        size_t cap = sched__capregions ? 2 * sched__capregions : 64;
        maccrt_region_info *tab = maccrt_xcalloc(cap, sizeof *tab);
        for (size_t i = 0; i < sched__capregions; i++) {
            if (!sched__regions[i].region)
                continue;
            size_t j = sched__hash(sched__regions[i].region) & (cap - 1);
            while (tab[j].region)
                j = (j + 1) & (cap - 1);
            tab[j] = sched__regions[i];
        }
        free(sched__regions);
        sched__regions = tab;
        sched__lastri = NULL;
        sched__capregions = cap;
    }
    size_t j = sched__hash(r) & (sched__capregions - 1);
    while (sched__regions[j].region && sched__regions[j].region != r)
        j = (j + 1) & (sched__capregions - 1);
    if (!sched__regions[j].region) {
        sched__regions[j].region = r;
        sched__nregions++;
    }
    sched__lastri = &sched__regions[j];
    return sched__lastri;
}

/* ---- policies ------------------------------------------------------------------------------ */

/* Regions whose kernels fill their GPU four times over (MACC_GPU_FILLS),
 * per GPU kind: a table of fixed size read and written without a lock (a
 * helper's release asks for the tokens of the task launched behind it,
 * maccrt_sched_release_device, while the walk places others). A region that
 * finds no slot among its probes keeps the default. A task launched ahead
 * whose count grew since its predecessor was placed takes at that release
 * no more than the predecessor's and the free ones. */
enum { SCHED__FILLS = 1024, SCHED__FILLS_PROBES = 8 };
static struct {
    const MACC_Region *region;
    unsigned char fills[MACC_DEV_NKINDS];
} sched__fills[SCHED__FILLS];
/* MACC_GPU_FILLS: how many times over a kernel fills its GPU to run two at
 * once (default 4; 0: never) */
static long sched__fills_waves = -1;

static long sched__fills_factor(void)
{
    long w = __atomic_load_n(&sched__fills_waves, __ATOMIC_RELAXED);
    return w >= 0 ? w : maccrt_env_memo(&sched__fills_waves, getenv("MACC_GPU_FILLS"), 4, 0, 1000000, 1);
}

static int sched__fills_slot(const MACC_Region *r, int add)
{
    size_t j = sched__hash(r);
    for (int p = 0; p < SCHED__FILLS_PROBES; p++, j++) {
        size_t i = j & (SCHED__FILLS - 1);
        const MACC_Region *o = __atomic_load_n(&sched__fills[i].region, __ATOMIC_ACQUIRE);
        if (o == r)
            return (int)i;
        if (!o) {
            if (!add)
                return -1;
            if (__atomic_compare_exchange_n(&sched__fills[i].region, &o, r, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE) ||
                o == r)
                return (int)i;
        }
    }
    return -1;
}

void maccrt_sched_note_threads(const MACC_Region *r, const maccrt_device *d, long long threads)
{
    long w = sched__fills_factor();
    if (!r || threads <= 0 || d->wave <= 0 || d->kind == MACC_DEV_HOST || w <= 0)
        return;
    int fills = threads / w >= d->wave;
    int i = sched__fills_slot(r, fills);
    if (i >= 0 && __atomic_load_n(&sched__fills[i].fills[d->kind], __ATOMIC_RELAXED) != fills)
        __atomic_store_n(&sched__fills[i].fills[d->kind], (unsigned char)fills, __ATOMIC_RELAXED);
}

/* (MACC_GPU_FILLS=0: maccrt_sched_note_threads marks none) */
static int sched__fills_gpu(const MACC_Region *r, int kind)
{
    if (!r)
        return 0;
    int i = sched__fills_slot(r, 0);
    return i >= 0 && __atomic_load_n(&sched__fills[i].fills[kind], __ATOMIC_RELAXED);
}

/* Tokens for version v of t on a device of kind `kind`: resources(N), the
 * defaults, or resources(auto): the first instances try 100, 50 and 25
 * tokens (MACCRT_AUTO_TRIES each); then the level with the best throughput
 * per device (tokens x time per instance smallest) is kept. */
static int policy__tokens(maccrt_task *t, int kind, const MACC_Version *v)
{
    int res = v->resources;
    if (res == MACC_RES_AUTO && t->region) {
        maccrt_region_info *ri = maccrt_region_info_get(t->region);
        if (ri->auto_choice[kind])
            return ri->auto_choice[kind];
        int l = 0;
        while (l < MACCRT_AUTO_LEVELS && ri->auto_started[kind][l] >= MACCRT_AUTO_TRIES)
            l++;
        if (l < MACCRT_AUTO_LEVELS)
            return sched__auto_tokens[l];
        /* every level started, not all measured: the default meanwhile */
        res = MACC_RES_DEFAULT;
    }
    if (res == MACC_RES_DEFAULT || res == MACC_RES_AUTO) {
        if (kind == MACC_DEV_HOST)
            res = t->deferred ? MACCRT_RES_HOST_DEFERRED : MACCRT_RES_HOST_UNDEFERRED;
        else /* (a region whose kernels fill the GPU four times over: two at once) */
            res = sched__fills_gpu(t->region, kind) ? MACCRT_RES_GPU_FILLS : MACCRT_RES_GPU;
    }
    if (res < 1)
        res = 1;
    if (res > MACCRT_TOKENS)
        res = MACCRT_TOKENS;
    return res;
}

/* Whether d's own history of the region is the estimate (else its kind's).
 * A device is measured apart from the others of its kind (GPUs of one kind
 * may differ), but an idle device's figures are only renewed by a task it
 * runs: one slow sample (a preempted helper, a first launch) kept a fake GPU
 * of four idle for the rest of a run on the 2-vCPU machine, every task
 * waiting for its busy home instead (bench/dispatch, four fake GPUs: one GPU
 * with `placed 0`, an estimate of 0.75 ms against the others' 0.21, in
 * MACC_SCHED_LOG). So a device with nothing placed whose last sample is
 * older than SCHED__STALE_RUNS of its kind's runs (and SCHED__STALE_MIN_S) is
 * estimated by its kind when that is the shorter: it takes a task again,
 * and that task's time is its history once more. A device that is really
 * slower pays one such task per period, not a run of idleness. */
/* The same for a device that holds placed tasks (MACC_EFT_STALE_BUSY=0:
 * only an idle device, as before). Its first runs of a region
 * slowed by something else (fills that shared the host's memory with the
 * other GPU's) kept its estimate high while its own chains still ran there,
 * and the region's later tasks went to the other GPU: a STREAM trace on two
 * H200s, 571 of the pipelined phase's 640 tasks on one GPU. Two fake GPUs,
 * four chains' first links ten times slower on GPU 1: GPU 1 ran 13 of 480
 * links, 186-195 with it (test_runtime's gpu suite). On two H200s, against
 * it off, pairs of STREAM 1.018 (12 rounds), with the host 0.992 (10),
 * matmul 16 256 1.009 (8), 8 512 0.999 (6), no round uneven in either. */
#define SCHED__STALE_RUNS 4
#define SCHED__STALE_MIN_S 1e-3

static int sched__own(const maccrt_region_info *ri, const maccrt_device *d)
{
    static int busy_stale = -1;
    int k = d->num;
    if (!ri->druns[k])
        return 0;
    if ((__atomic_load_n(&d->nplaced, __ATOMIC_RELAXED) > 0 && !maccrt_env_flag(&busy_stale, "MACC_EFT_STALE_BUSY", 1)) ||
        ri->dlast_at[k] <= 0 ||
        ri->dema_s[k] <= ri->ema_s[d->kind])
        return 1;
    double stale = SCHED__STALE_RUNS * ri->ema_s[d->kind];
    return sched__now() - ri->dlast_at[k] < (stale > SCHED__STALE_MIN_S ? stale : SCHED__STALE_MIN_S);
}

/* Expected run time of t on d (maps included) from the region's history on
 * d's kind. Never measured: 0 on a GPU (explore it first), a nanosecond on
 * the host (next); once another kind is measured, one instance at a time
 * explores a kind (its first measurement decides the rest). */
static double sched__estimate(maccrt_task *t, maccrt_device *d)
{
    if (!t->region)
        return 0;
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (ri->runs[d->kind] == 0) {
        int measured = sched__measured_other(ri, d->kind); /* (d's kind has not) */
        /* One instance explores; the others wait for its time. A task that
         * heads a dependence chain (it has successors; their edges are made
         * under the dependence index's lock, so read atomically) does not
         * explore the host once another kind is measured: a slow host would
         * hold the whole chain behind it (a GPU is explored with any task: a
         * host measured first must not keep it unexplored). */
        if (measured && (ri->exploring[d->kind] ||
                         (__atomic_load_n(&t->nsuccs, __ATOMIC_RELAXED) > 0 && d->kind == MACC_DEV_HOST)))
            return 1e6;
        /* nor, beside a GPU, does a task with depend clauses */
        if (d->kind == MACC_DEV_HOST && maccrt_sched_host_unexplorable(t))
            return 1e6;
        /* The host beside a GPU explores with one instance even before the
         * GPU is measured (the start of a run): two instances of half the
         * threads each held two chains twice as long and measured nothing
         * sooner (bench/dispatch with DISPATCH_HOST_US). */
        if (d->kind == MACC_DEV_HOST && ri->exploring[MACC_DEV_HOST] && sched__gpu_candidate(t))
            return 1e6;
        return d->kind == MACC_DEV_HOST ? 1e-9 : 0;
    }
    return sched__own(ri, d) ? ri->dema_s[d->num] : ri->ema_s[d->kind];
}

/* The same, pessimistic, from e = sched__estimate(t, d): the mean plus twice
 * its typical deviation, so that a device whose times vary (a host shared
 * with GPU helpers) takes a task at the end of a batch only when even a slow
 * run ends in time. */
static double sched__estimate_hi(maccrt_task *t, maccrt_device *d, double e)
{
    if (!t->region || e >= 1e6)
        return e;
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (!ri->runs[d->kind])
        return e;
    return e + 2 * (sched__own(ri, d) ? ri->ddev_s[d->num] : ri->dev_s[d->kind]);
}

/* The occupancy term (devices whose tasks share one processor: a GPU's
 * kernels at once share its SMs, each running longer the more run beside
 * it). A run time is learned with the mean number of the device's tasks in
 * flight over it (docc); with `ahead` tasks placed there and not finished,
 * a task placed now runs about (ahead + 1) / docc of that time, when that
 * is less (fewer in flight than usual). Without it an idle GPU and one
 * running twenty kernels looked alike to eft, and a chain stayed on the
 * busy GPU that held its tile while the other idled: matmul 8 512 on two
 * H200s, one GPU ending 1.1-2.3 ms before the other in a 20 ms run (232
 * tasks against 280). MACC_EFT_OCCUPANCY=0: off. */
static double sched__occupancy(const maccrt_task *t, const maccrt_device *d, int ahead)
{
    static int on = -1;
    if (!d->shares || !t->region || !maccrt_env_flag(&on, "MACC_EFT_OCCUPANCY", 1))
        return 1;
    /* only between devices that all share so (GPUs): beside a host
     * candidate a lightly loaded GPU looked so much sooner that the host
     * took fewer of nbody's tasks, and the shared run lost what it gave
     * (two H200s, host + one GPU: sh/sum 0.955 -> 0.941-0.946) */
    if (t->cand & ~maccrt_rt.shares)
        return 1;
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (!ri->runs[d->kind])
        return 1;
    double c = sched__own(ri, d) ? ri->docc[d->num] : ri->occ_s[d->kind];
    return ahead + 1 < c ? (ahead + 1) / c : 1;
}

/* A moving average's next value after the sample x (weights 0.8 / 0.2);
 * the first sample (first) sets it. */
static double sched__ema(double avg, double x, int first)
{
    return first ? x : 0.8 * avg + 0.2 * x;
}

/* One more sample: the moving average and the moving average of the
 * deviation from it; the first sample sets the mean. */
static void sched__learn(long *runs, double *ema, double *dev, double seconds)
{
    long n = (*runs)++;
    if (n > 0)
        *dev = sched__ema(*dev, seconds > *ema ? seconds - *ema : *ema - seconds, 0);
    *ema = sched__ema(*ema, seconds, n == 0);
}

static void policy__observe(maccrt_task *t, maccrt_device *d, double seconds)
{
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (d->shares) {
        double c = t->occ >= 1 ? t->occ : 1;
        ri->docc[d->num] = sched__ema(ri->docc[d->num], c, ri->druns[d->num] == 0);
        ri->occ_s[d->kind] = sched__ema(ri->occ_s[d->kind], c, ri->runs[d->kind] == 0);
    }
    sched__learn(&ri->runs[d->kind], &ri->ema_s[d->kind], &ri->dev_s[d->kind], seconds);
    sched__learn(&ri->druns[d->num], &ri->dema_s[d->num], &ri->ddev_s[d->num], seconds);
    ri->dlast_at[d->num] = sched__now();
    if (!t->ver || t->ver->resources != MACC_RES_AUTO || t->nested || ri->auto_choice[d->kind])
        return;
    int k = d->kind;
    for (int l = 0; l < MACCRT_AUTO_LEVELS; l++)
        if (sched__auto_tokens[l] == t->tokens) {
            int r = ri->auto_runs[k][l]++;
            ri->auto_s[k][l] = (ri->auto_s[k][l] * r + seconds) / (r + 1);
        }
    int best = -1;
    for (int l = 0; l < MACCRT_AUTO_LEVELS; l++) {
        if (ri->auto_runs[k][l] < MACCRT_AUTO_TRIES)
            return;
        if (best < 0 || ri->auto_s[k][l] * sched__auto_tokens[l] <
                            ri->auto_s[k][best] * sched__auto_tokens[best])
            best = l;
    }
    ri->auto_choice[k] = sched__auto_tokens[best];
}

/* "greedy": the earliest expected finish among the devices with free tokens. */
static maccrt_device *greedy__choose(maccrt_task *t, maccrt_mask cand, maccrt_mask fit,
                                     const int *backlog)
{
    (void)backlog;
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *best = NULL;
    double best_est = 0;
    maccrt_mask from = fit ? fit : cand;
    for (int i = 0; i < rt->ndevices; i++) {
        if (!(from & MACCRT_BIT(i)))
            continue;
        maccrt_device *d = rt->devices[i];
        double est = sched__estimate(t, d);
        if (!best || est < best_est ||
            (est == best_est && __atomic_load_n(&d->tokens_free, __ATOMIC_RELAXED) >
                                    __atomic_load_n(&best->tokens_free, __ATOMIC_RELAXED))) {
            best = d;
            best_est = est;
        }
    }
    return best;
}

const maccrt_policy maccrt_policy_greedy = {
    .name = "greedy",
    .choose = greedy__choose,
    .tokens = policy__tokens,
    .observe = policy__observe,
};

/* "eft" (earliest finish time, as StarPU's dm/dmda and the Nanos++
 * versioning scheduler): for every candidate d, when t would end there:
 *   start + est(d),  start = now                          if ahead < slots
 *                    now + rem + floor((ahead - slots) / slots) * est(d)  else
 * where est is the region's measured time on d's kind (maps included),
 * slots how many such tasks d runs at once (its tokens / t's tokens, at most
 * the plugin's concurrency, e.g. a GPU's helper threads), ahead the tasks
 * that run on d before t (placed there, and those of this dispatch already
 * waiting for d), and rem the time until the first of d's running tasks is
 * expected to end; est grows by the time to move t's inputs that are not
 * valid on d from where their current copies are (the residency term, over
 * each link's measured bandwidth), so data stays where it lives and chains
 * of tasks stay where their data is; on a tie the device that holds the
 * data wins. The task goes where it ends first and waits (queued) when
 * that is a device without its tokens free: a slow device never takes a task
 * that a faster one would finish earlier (no tail effect), while it still
 * takes the tasks that the fast one's backlog would delay. */

/* How many instances of t d runs at once. */
static int eft__slots(maccrt_task *t, maccrt_device *d)
{
    int need = 1;
    if (t->region && !t->op) {
        const MACC_Version *v = maccrt_task_version(t, d);
        need = v && !t->nested ? maccrt_rt.policy->tokens(t, d->kind, v) : 1;
    }
    int slots = need > 0 ? d->tokens_total / need : d->tokens_total;
    if (d->concurrency > 0 && slots > d->concurrency)
        slots = d->concurrency;
    return slots < 1 ? 1 : slots;
}

/* The residency term of t on d, remembered per task for EFT__XFER_TTL: a
 * task that waits in the ready queue is looked at by every walk (one per
 * completion) and asking the directory each time, under the runtime lock and
 * against the helpers' own use of the directory's lock, made the walks the
 * bottleneck with two GPUs (matmul on two H200s: a median 258 us per
 * completion, both GPUs running one task at a time). The directory's lock
 * is only tried, never waited for, under the runtime lock: a walk that waited
 * for it held up every completing helper behind the runtime lock while the
 * helpers holding the directory's lock queued for the runtime lock in turn
 * (bench/dispatch: 48 -> 57 thousand tasks/s on two fake GPUs). When it is
 * busy, the last value is kept, or, with none yet, eft__xfer uses the bytes
 * the task's predecessors wrote elsewhere (the chain's own data). */
#define EFT__XFER_TTL 200e-6

/* Data too small to weigh. The residency term of a task whose mapped bytes,
 * each filled and pulled back over the slowest link known, would take less
 * than EFT__RES_SMALL of its measured run on d is not read: it cannot move
 * d's end by more than that, and the producers' term (eft__prod) still keeps
 * a chain where its own data was written. The look at the directory costs
 * the same whatever the sizes: with four fake GPUs and 512-byte tiles
 * (bench/dispatch) it was 40-45% of the dispatch walks' time, half of the
 * looks finding the directory busy, and its tries took the devices' parts
 * from their helpers' maps (without it, 204 -> 231 thousand tasks/s). */
#define EFT__RES_SMALL 0.01

static int eft__res_small(const maccrt_task *t, const maccrt_device *d)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (!t->region || t->op || !maccrt_region_info_get(t->region)->runs[d->kind])
        return 0;
    double est = sched__estimate((maccrt_task *)t, (maccrt_device *)d);
    if (est <= 0)
        return 0;
    double bytes = 0;
    for (int i = 0; i < t->nmaps; i++)
        if (t->maps[i].kind & (MACC_MAP_TO | MACC_MAP_FROM))
            bytes += (double)t->maps[i].bytes;
    double bw = MACCRT_DEFAULT_BW;
    for (int i = 0; i < rt->ndevices; i++) {
        maccrt_device *x = rt->devices[i];
        if (x->kind == MACC_DEV_HOST)
            continue;
        double in = atomic_load(&x->bw_h2d), out = atomic_load(&x->bw_d2h);
        if (in > 0 && in < bw)
            bw = in;
        if (out > 0 && out < bw)
            bw = out;
    }
    return 2.0 * bytes / bw < EFT__RES_SMALL * est;
}

/* A link of a chain: a predecessor wrote some of t's bytes on a GPU. Its
 * residency term is not read (MACC_EFT_LINK_LOOK=1: it is): the producers'
 * term (eft__prod) keeps the chain where its data was written. */
static int eft__link(const maccrt_task *t)
{
    static int look = -1;
    return !maccrt_env_flag(&look, "MACC_EFT_LINK_LOOK", 0) && sched__producer_gpu(t, ~(maccrt_mask)0) >= 0;
}

static double eft__residency(maccrt_task *t, maccrt_device *d, double now)
{
    int k = d->num;
    if (eft__link(t) || eft__res_small(t, d)) /* (the cheaper test first) */
        return 0;
    maccrt_rt.policy_terms++;
    if (!t->xfer_memo) {
        double r = maccrt_cache_move_time_try(t, d);
        maccrt_rt.policy_blind += r < 0;
        return r;
    }
    int known = (t->xfer_known >> k) & 1;
    if (known && now - t->xfer_at < EFT__XFER_TTL)
        return t->xfer_memo[k];
    /* every candidate at once: a choice between two GPUs asks for both;
     * the directory found busy for t once in a walk is not tried again in
     * it (each of a choice's candidates tried it in turn: with four fake
     * GPUs most tries failed, each taking and giving back the devices'
     * parts that their helpers' maps wait for) */
    maccrt_mask want = t->cand | MACCRT_BIT(k);
    double v[MACCRT_MAX_DEVICES];
    unsigned long walk = maccrt_rt.walk;
    if ((walk && t->xfer_tried == walk) || maccrt_cache_move_times_try(t, want, v) < 0) {
        t->xfer_tried = walk;
        maccrt_rt.policy_blind += !known;
        return known ? t->xfer_memo[k] : -1; /* busy: the last value, or none */
    }
    t->xfer_at = now;
    t->xfer_known = 0;
    for (int i = 0; i < maccrt_rt.ndevices; i++)
        if (want & MACCRT_BIT(i)) {
            t->xfer_memo[i] = (float)v[i];
            t->xfer_known |= MACCRT_BIT(i);
        }
    return v[k];
}

/* eft__xfer's producers' term: the bytes t's predecessors wrote on other
 * devices, timed back to the host and into d. */
static double eft__prod(const maccrt_task *t, const maccrt_device *d)
{
    double prod = 0;
    for (int k = 0; k < t->nprod; k++) {
        if (t->prod_dev[k] == d->num)
            continue;
        maccrt_device *src = maccrt_rt.devices[t->prod_dev[k]];
        double b = (double)t->prod_bytes[k];
        double out = atomic_load(&src->bw_d2h), in = atomic_load(&d->bw_h2d);
        if (!(src->plugin->caps & MACCRT_CAP_SHARED_MEM))
            prod += b / (out > 0 ? out : MACCRT_DEFAULT_BW);
        if (!(d->plugin->caps & MACCRT_CAP_SHARED_MEM))
            prod += b / (in > 0 ? in : MACCRT_DEFAULT_BW);
    }
    return prod;
}

/* The moves to d with residency term res (-1: unknown): the larger of it
 * and the producers' term (the directory busy and nothing remembered: the
 * producers' bytes). */
static double eft__moves(const maccrt_task *t, const maccrt_device *d, double res)
{
    double prod = eft__prod(t, d);
    return res > prod ? res : prod;
}

/* The time to move t's data to d before it runs: the residency term (every
 * input not valid on d, from where its current copy is; on the host, the
 * pull-back of GPU-dirty bytes: maccrt_cache_move_time), or the bytes that
 * t's predecessors wrote on another device when that says more (data the
 * directory no longer holds, e.g. after a write-through). */
static double eft__xfer(maccrt_task *t, maccrt_device *d, double now)
{
    return eft__moves(t, d, t->nmaps && maccrt_rt.ngpus ? eft__residency(t, d, now) : 0);
}

/* When the first of the tasks placed on d is expected to end (0: none). The
 * placed tasks are up to 100 / resources and every choice of a walk
 * that finds d full asks, so the value is kept: a placement can only lower
 * it, and only the end of the task that had it makes them be counted
 * again (pend[], or the list past MACCRT_PEND tasks; with two fake GPUs, walking it once per walk and device was 4% of
 * the dispatch proxy's time, under the runtime lock). */
static double eft__first(maccrt_device *d)
{
    pthread_mutex_lock(&d->slock); /* (a release may change them beside the runtime lock) */
    double first = d->first_end;
    if (!d->first_ok) {
        first = 0;
        if (d->npend == d->nplaced) {
            for (int i = 0; i < d->npend; i++)
                if (d->pend[i] >= 0 && (first == 0 || d->pend[i] < first))
                    first = d->pend[i];
        } else {
            for (maccrt_task *p = d->placed; p; p = p->dnext)
                if (!p->notok && (first == 0 || p->exp_end < first))
                    first = p->exp_end;
        }
        d->first_end = first;
        d->first_ok = 1;
    }
    pthread_mutex_unlock(&d->slock);
    return first;
}

/* When t would end on d; mean: sched__estimate(t, d); *occ: the occupancy
 * term applied to the run (1 when d's slots are all taken). */
static double eft__finish(maccrt_task *t, maccrt_device *d, int backlog, double now, double xfer,
                          double mean, double *occ)
{
    double est = sched__estimate_hi(t, d, mean);
    int slots = eft__slots(t, d);
    int ahead = sched__running(d) + backlog;
    *occ = 1;
    if (ahead < slots) {
        *occ = sched__occupancy(t, d, ahead);
        return now + est * *occ + xfer;
    }
    est += xfer;
    double first = eft__first(d);
    double rem = first > now ? first - now : 0;
    return now + rem + (double)((ahead - slots) / slots) * est + est;
}

/* When t would end on d (eft__choose's term for d): *xfer the moves
 * with the link's queue, *own the moves alone, *mean the run alone. An
 * unmeasured device is explored without the data term (it would make a host
 * that looks infinitely fast take every first task). The link term: data
 * to move waits behind the copies of the tasks placed on d before it
 * (STREAM on two H200s: every block's first task chose the GPU whose
 * measured bandwidth was a little higher, 16 copies of 16 MiB on one link
 * while the other stayed idle). */
static double eft__end(maccrt_task *t, maccrt_device *d, int backlog, double now, maccrt_region_info *ri,
                       double *xfer, double *own, double *mean)
{
    double x = !ri || ri->runs[d->kind] ? eft__xfer(t, d, now) : 0;
    *own = x;
    if (x > 0)
        x += (double)atomic_load(&d->link_ns) * 1e-9;
    *xfer = x;
    *mean = sched__estimate(t, d);
    double occ, end = eft__finish(t, d, backlog, now, x, *mean, &occ);
    *mean *= occ; /* (the tie margin's run) */
    return end;
}

/* The margin within which two devices' ends tie (est: the run alone on d,
 * 0 when unmeasured; best_est likewise on b): half the shorter run between
 * devices of one kind, at most a millisecond; else a microsecond. */
static double eft__tol(double est, const maccrt_device *d, double best_est, const maccrt_device *b)
{
    double tol = est > 0 && best_est > 0 && b && b->kind == d->kind ? 0.5 * (est < best_est ? est : best_est) : 0;
    if (tol > 1e-3)
        tol = 1e-3;
    if (tol < 1e-6)
        tol = 1e-6;
    return tol;
}

/* The share rule: the devices of cand that would add less than
 * MACC_SHARE_MIN (default 5%) of the region's measured throughput over the
 * candidates: they take none of its tasks (what they could add is smaller
 * than what their tail, the data they make move and the chains they delay
 * cost). Unmeasured devices are never shut out. */
static maccrt_mask eft__shut_out(maccrt_task *t, maccrt_mask cand)
{
    maccrt_runtime *rt = &maccrt_rt;
    static double share_min = -1;
    if (share_min < 0) {
        const char *e = getenv("MACC_SHARE_MIN");
        char *end;
        double v = e && *e ? strtod(e, &end) : 0.05;
        share_min = e && *e && (*end || v < 0 || v >= 1) ? 0.05 : v;
    }
    double rate[MACCRT_MAX_DEVICES], total = 0;
    for (int i = 0; i < rt->ndevices; i++) {
        rate[i] = -1;
        if (!(cand & MACCRT_BIT(i)) || !t->region)
            continue;
        maccrt_device *d = rt->devices[i];
        maccrt_region_info *ri = maccrt_region_info_get(t->region);
        if (ri->runs[d->kind] == 0)
            continue;
        double e = sched__estimate(t, d);
        rate[i] = eft__slots(t, d) / (e > 1e-9 ? e : 1e-9);
        total += rate[i];
    }
    maccrt_mask skip = 0;
    for (int i = 0; i < rt->ndevices; i++)
        if (rate[i] >= 0 && rate[i] < share_min * total)
            skip |= MACCRT_BIT(i);
    return skip;
}

static maccrt_device *eft__choose(maccrt_task *t, maccrt_mask cand, maccrt_mask fit,
                                  const int *backlog)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *best = NULL;
    double best_end = 0;
    int best_fits = 0;
    double now = sched__now();
    /* The share rule: a device that would add less than MACC_SHARE_MIN
     * (default 5%) of the region's measured throughput over the candidates
     * takes none of its tasks: what it could add is smaller than what its
     * tail, the data it makes move and the chains it delays cost. */
    maccrt_mask skip;
    static unsigned long so_walk; /* (maccrt_rt.lock held) the same walk, region and candidates: */
    static const MACC_Region *so_region; /* the share rule's answer does not change within a walk */
    static maccrt_mask so_cand, so_skip;
    if (rt->walk && so_walk == rt->walk && so_region == t->region && so_cand == cand) {
        skip = so_skip;
    } else {
        skip = eft__shut_out(t, cand);
        so_walk = rt->walk;
        so_region = t->region;
        so_cand = cand;
        so_skip = skip;
    }
    if ((cand & ~skip) != 0)
        cand &= ~skip;
    /* The host is explored only by a task that no other candidate can start
     * now (it would wait anyway): an exploring instance cannot be bounded,
     * and one host task of nbody (30 ms) against a GPU step of 8 ms (all 32
     * tasks at once) made the first step of a shared run four times longer
     * than the GPU's, whatever the share rule decided afterwards. */
    maccrt_region_info *ri = t->region ? maccrt_region_info_get(t->region) : NULL;
    if (ri && !ri->runs[MACC_DEV_HOST] && (cand & MACCRT_BIT(rt->host->num)) &&
        (fit & cand & ~MACCRT_BIT(rt->host->num)))
        cand &= ~MACCRT_BIT(rt->host->num);
    if (cand && !(cand & (cand - 1))) {
        /* one candidate left: no terms to weigh (as for a task of one
         * candidate device) */
        t->chose_dev1 = 0;
        return rt->devices[__builtin_ctzll(cand)];
    }
    double best_xfer = 0, best_own = 0, best_est = 0;
    for (int i = 0; i < rt->ndevices; i++) {
        if (!(cand & MACCRT_BIT(i)))
            continue;
        maccrt_device *d = rt->devices[i];
        int fits = (fit & MACCRT_BIT(i)) != 0;
        double xfer, own, mean;
        double end = eft__end(t, d, backlog[i], now, ri, &xfer, &own, &mean);
        /* ties: locality first, then a free device. Two devices of one kind
         * (two GPUs) tie when they would end the task within half its time
         * (at most a millisecond): GPUs ending a task a few microseconds
         * apart (their learned times differ by noise) took a chain's links in
         * turn, each link moving the chain's data to the other GPU
         * (bench/dispatch, 2 fake GPUs: about 40% of matmul's tasks; GPU to
         * GPU 1.2 MB -> 0.52 MB, 93-95 -> 99-102 thousand tasks/s). A free
         * GPU may so be passed over for one that holds the data and ends the
         * task less than that later; the other ready tasks fill it. Between
         * kinds (the host and a GPU) a microsecond: the tail rule's margin. */
        double est = ri && ri->runs[d->kind] ? mean : 0;
        double tol = eft__tol(est, d, best_est, best);
        int tie = best && end - best_end < tol && best_end - end < tol;
        if (!best || (!tie && end < best_end) ||
            (tie && (xfer < best_xfer ||
                     (xfer == best_xfer &&
                      (fits > best_fits ||
                       (fits == best_fits && __atomic_load_n(&d->tokens_free, __ATOMIC_RELAXED) >
                                                 __atomic_load_n(&best->tokens_free, __ATOMIC_RELAXED))))))) {
            best = d;
            best_end = end;
            best_fits = fits;
            best_xfer = xfer;
            best_own = own;
            best_est = est;
        }
    }
    if (best) {
        t->chose_dev1 = best->num + 1;
        t->chose_xfer = (float)best_own;
    }
    return best;
}

/* eft's answer for a task whose home h is free, when it is h without
 * asking about every candidate: no other candidate needs less moved than h
 * (every input of t valid on h, or, as with the next link of a chain whose
 * data is at home and whose other inputs are nowhere yet, as much to move
 * elsewhere: it ends at now + moves(h) + est_hi(h), and another device at
 * now + moves + its own run or later), and no other candidate's own run
 * shorter than h's by more than choose's tie margin (another device ends
 * it no sooner, whatever its queue). Then choose picks h, or, in a tie,
 * the device with less to move (h, or one that moves as little), then one
 * with more free tokens: the home is taken in such a tie (locality). A
 * chain's links whose other inputs were on no GPU asked choose about every
 * candidate (four fake GPUs: 3810 calls of 2.2 us for 4096 tasks, besides
 * 4001 of this at 1.1 us, under the runtime lock). 0 where choose could
 * answer otherwise: a candidate kind not yet measured (exploration; not
 * the host, which choose explores only when no other candidate is free),
 * h shut out by the share rule, a residency term unknown (directory
 * busy). With no other candidate left (the rest shut out, or an unmeasured
 * host), h is the answer whatever its data, as choose's would be (a task
 * without depend clauses keeps the host as a candidate: with the host not
 * yet measured, this returned 0 for every such task and choose weighed the
 * one GPU left).
 * Saves the estimates and queue terms of every other device (eft__choose
 * was 80% of the completions' dispatch walk with four fake GPUs). */
static int eft__stays(maccrt_task *t, maccrt_device *h, maccrt_mask cand, maccrt_mask skip)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (!t->region || t->op || (skip & MACCRT_BIT(h->num)) || !t->nmaps || !rt->ngpus)
        return 0;
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (!ri->runs[h->kind])
        return 0;
    /* the candidates choose would weigh against h: not shut out, and not
     * the host while it is not yet measured (choose explores it only when
     * no other candidate is free, and h is) */
    maccrt_mask others = 0;
    for (int i = 0; i < rt->ndevices; i++) {
        if (i == h->num || !(cand & MACCRT_BIT(i)) || (skip & MACCRT_BIT(i)))
            continue;
        maccrt_device *e = rt->devices[i];
        if (!ri->runs[e->kind]) {
            if (e == rt->host)
                continue;
            return 0;
        }
        others |= MACCRT_BIT(i);
    }
    if (!others) {
        t->chose_dev1 = 0; /* h alone: choose's answer, whatever its data */
        return 1;
    }
    double now = sched__now();
    double rh = eft__residency(t, h, now);
    if (rh < 0)
        return 0; /* (the directory was busy: choose decides without it) */
    double xh = eft__moves(t, h, rh);
    double eh = sched__estimate_hi(t, h, sched__estimate(t, h)) * sched__occupancy(t, h, sched__running(h));
    for (int i = 0; i < rt->ndevices; i++) {
        if (!(others & MACCRT_BIT(i)))
            continue;
        maccrt_device *e = rt->devices[i];
        /* every other candidate has at least as much to move (the same
         * look at the directory: eft__residency remembers every candidate's) */
        if (xh > 0) {
            double re = eft__residency(t, e, now);
            if (re < 0 || eft__moves(t, e, re) < xh)
                return 0;
        }
        double occ = sched__occupancy(t, e, sched__running(e)), run = sched__estimate(t, e);
        double mean = run * occ, ee = sched__estimate_hi(t, e, run) * occ;
        double tol = 1e-6;
        if (e->kind == h->kind) {
            double m = 0.5 * (mean < eh ? mean : eh);
            tol = m > 1e-3 ? 1e-3 : m < 1e-6 ? 1e-6 : m;
        }
        if (ee < eh - tol)
            return 0;
    }
    t->chose_dev1 = 0; /* (no link term: nothing to move) */
    return 1;
}

/* Whether t, told by eft__choose to wait for h (busy), still waits while
 * the devices of `free` are free: none of them ends it before h does, and
 * none that ties with h needs as little moved as h (a device not yet
 * measured, or h shut out: eft__choose decides again). A tie is the usual
 * case when h's running tasks are overdue (the time to wait for h is then
 * counted as none): asked again at every walk, a unit test's 384 chain
 * links on two fake GPUs made 1864 policy calls on a loaded machine. */
static int eft__still_waits(maccrt_task *t, maccrt_device *h, maccrt_mask free, maccrt_mask skip,
                            const int *backlog)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (!t->region || (skip & MACCRT_BIT(h->num)))
        return 0;
    maccrt_region_info *ri = maccrt_region_info_get(t->region);
    if (!ri->runs[h->kind])
        return 0;
    double now = sched__now(), xh, xfer, own, mean;
    double eh = eft__end(t, h, backlog[h->num], now, ri, &xh, &own, &mean);
    double esth = mean;
    for (int i = 0; i < rt->ndevices; i++) {
        if (!(free & MACCRT_BIT(i)) || (skip & MACCRT_BIT(i)))
            continue;
        maccrt_device *x = rt->devices[i];
        if (!ri->runs[x->kind])
            return 0;
        double ex = eft__end(t, x, backlog[i], now, ri, &xfer, &own, &mean);
        double tol = eft__tol(mean, x, esth, h);
        /* x ends it sooner, or ties with h without more to move (choose's
         * first tie rule: the device that needs the least moved) */
        if (ex <= eh - tol || (ex < eh + tol && !(xfer > xh)))
            return 0;
    }
    return 1;
}

const maccrt_policy maccrt_policy_eft = {
    .name = "eft",
    .choose = eft__choose,
    .tokens = policy__tokens,
    .observe = policy__observe,
    .shut_out = eft__shut_out,
    .stays = eft__stays,
    .still_waits = eft__still_waits,
};
