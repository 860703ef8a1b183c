/* cache.c: the coherence directory for the data of tasks' own maps.
 *
 * A task's map on a device with its own memory (a GPU) that no data construct
 * made present goes through a per-device software cache instead of being
 * copied in and out for every task: each GPU keeps a range tree of cached
 * host sections (maccrt_centry) with a device copy. An entry is
 *   valid    its bytes hold the current value of the section (filled from the
 *            host or from another GPU's valid copy, or wholly written by a
 *            task on this device);
 *   dirty    a sorted list of disjoint byte ranges this device wrote and the
 *            host has not seen yet (MSI's Modified, per range);
 *   detached out of the tree (invalid); freed when no running task uses it
 *            and no copy reads it.
 * The current value of a byte is the dirty copy of the one device that holds
 * it dirty, else the host's; a valid entry's clean bytes equal that value
 * (a copy from a GPU whose bytes were dirty there is clean on the receiving
 * GPU: the source stays the one that writes them back). So the directory is
 * distributed: the state of a byte is found by asking every device's tree.
 *
 * The rules (S is a task map's section [a, b) on device d):
 *   - before a GPU task reads S (to): d's entry containing S is used, or made
 *     (exactly S) and filled: from another GPU's valid entry that contains it
 *     (a device-to-device copy that never touches the host), else from the
 *     host after the other devices wrote back their dirty bytes in S; a valid
 *     entry is used without a copy, so data read by many tasks (N-body's x,
 *     y, z) is copied once per device;
 *   - after a GPU task writes S (from): other devices' entries overlapping S
 *     write back their dirty bytes outside S and are detached (invalidated);
 *     d's entry records S as dirty (no copy) unless it was detached meanwhile,
 *     in which case S is written through to the host;
 *   - host tasks read and write the host copy: before, dirty bytes in S come
 *     back from every GPU; after a write, GPU entries overlapping S are
 *     detached as above;
 *   - a section that overlaps entries of d without lying in one merges them
 *     into one entry (their union) when no running task uses them; otherwise
 *     the task gets a private copy (host-current in, written through out);
 *   - synchronisation points (taskwait, the end of an undeferred region, data
 *     directives, program exit: maccrt_cache_flush) write every dirty range
 *     back and detach every entry: the program may then read the host copy
 *     and write it without telling the runtime, as OpenMP allows.
 *
 * Concurrency. One lock (cache__lock) guards the trees and the entries'
 * fields, and is never held across a copy or an allocation. An operation
 * plans its copies under the lock, claims every entry it copies to or from
 * (all at once, or none: it waits on cache__cv and plans again, so no thread
 * waits while holding a claim it could be waited for, except a fill of a new
 * entry, which nobody else's plan contains), drops the lock, copies, takes
 * the lock back to apply the plan's effects (dirty ranges removed only once
 * their bytes are home, entries detached) and gives the claims back. A claim
 * is exclusive (the entry is filled, merged away, invalidated or flushed:
 * tasks wanting it wait, the in-flight state), a write-back (its dirty bytes
 * are on their way home: one write-back at a time, so that two readers of
 * the host copy never write the same bytes twice; its own tasks keep using
 * it) or shared (the source of a device-to-device copy). Copies of unrelated sections and of different GPUs thus run at
 * once, each on the stream of the thread that makes it (a GPU's helper uses
 * its own stream). Taken without present-table locks; maccrt_rt.lock may be
 * held when it is taken (the scheduler's residency estimate), never taken
 * under it.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct cache__ival {
    uintptr_t a, b;
} cache__ival;

typedef struct maccrt_centry {
    maccrt_rnode node; /* first member: host range [start, end) */
    maccrt_device *dev;
    void *dev_start; /* NULL until its allocation is made (the entry is claimed meanwhile) */
    const char *name;
    int users;    /* running tasks using it */
    int valid;    /* holds the section's current value (with its dirty ranges) */
    int detached; /* out of the tree; freed when users, excl and shared reach 0 */
    int excl;     /* claimed exclusively: a copy into it or its removal is in flight */
    int wb;       /* claimed for a write-back of its dirty bytes (one at a time) */
    int shared;   /* claims as the source of a device-to-device copy in flight */
    cache__ival *dirty;
    int ndirty, capdirty;
} maccrt_centry;

static pthread_mutex_t cache__lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cache__cv = PTHREAD_COND_INITIALIZER; /* a claim was given back */
static atomic_long cache__nentries; /* entries in trees, all devices (fast path for the host) */
static atomic_long cache__ndirty;   /* entries with dirty ranges, all devices */

/* ---- dirty ranges ------------------------------------------------------------------------ */

static void cache__dirty_add(maccrt_centry *e, uintptr_t a, uintptr_t b)
{
    if (e->ndirty == 0)
        atomic_fetch_add(&cache__ndirty, 1);
    /* merge every range that touches [a, b), keep the list sorted */
    int i = 0, w = 0;
    cache__ival *v = e->dirty;
    while (i < e->ndirty && v[i].b < a)
        v[w++] = v[i++];
    int first = w;
    while (i < e->ndirty && v[i].a <= b) {
        if (v[i].a < a)
            a = v[i].a;
        if (v[i].b > b)
            b = v[i].b;
        i++;
    }
    int rest = e->ndirty - i;
    int n = first + 1 + rest;
    if (n > e->capdirty) {
        e->capdirty = n * 2;
        e->dirty = v = maccrt_xrealloc(v, (size_t)e->capdirty * sizeof *v);
    }
    memmove(&v[first + 1], &v[i], (size_t)rest * sizeof *v);
    v[first].a = a;
    v[first].b = b;
    e->ndirty = n;
}

/* Removes [a, b) from e's dirty ranges (no copy). */
static void cache__dirty_drop(maccrt_centry *e, uintptr_t a, uintptr_t b)
{
    if (e->ndirty == 0 || a >= b)
        return;
    cache__ival *out = maccrt_xmalloc(((size_t)e->ndirty + 1) * sizeof *out);
    int n = 0;
    for (int i = 0; i < e->ndirty; i++) {
        cache__ival r = e->dirty[i];
        uintptr_t lo = r.a > a ? r.a : a, hi = r.b < b ? r.b : b;
        if (lo >= hi) {
            out[n++] = r;
            continue;
        }
        if (r.a < lo)
            out[n++] = (cache__ival){r.a, lo};
        if (hi < r.b)
            out[n++] = (cache__ival){hi, r.b};
    }
    free(e->dirty);
    e->dirty = out;
    e->capdirty = e->ndirty + 1;
    e->ndirty = n;
    if (n == 0)
        atomic_fetch_sub(&cache__ndirty, 1);
}

/* Dirty bytes of e in [a, b). */
static size_t cache__dirty_bytes(const maccrt_centry *e, uintptr_t a, uintptr_t b)
{
    size_t n = 0;
    for (int i = 0; i < e->ndirty; i++) {
        uintptr_t lo = e->dirty[i].a > a ? e->dirty[i].a : a;
        uintptr_t hi = e->dirty[i].b < b ? e->dirty[i].b : b;
        if (lo < hi)
            n += hi - lo;
    }
    return n;
}

/* ---- entries ------------------------------------------------------------------------------ */

static void cache__free(maccrt_centry *e)
{
    if (e->ndirty)
        atomic_fetch_sub(&cache__ndirty, 1);
    if (e->dev_start && e->dev->plugin->host_unpin)
        e->dev->plugin->host_unpin(e->dev, (void *)e->node.start, e->node.end - e->node.start);
    if (e->dev_start)
        e->dev->plugin->free(e->dev, e->dev_start);
    free(e->dirty);
    free(e);
}

static void cache__maybe_free(maccrt_centry *e)
{
    if (e->detached && e->users == 0 && !e->excl && !e->wb && e->shared == 0)
        cache__free(e);
}

/* Takes e out of its tree (invalid from now on); frees it when unused. */
static void cache__detach(maccrt_centry *e)
{
    if (e->detached)
        return;
    maccrt_rtree_remove(&e->dev->ctree, &e->node);
    atomic_fetch_sub(&cache__nentries, 1);
    e->detached = 1;
    cache__maybe_free(e);
}

static int cache__has_memory(const maccrt_device *d)
{
    return d && !(d->plugin->caps & MACCRT_CAP_SHARED_MEM);
}

/* The devices with caches: every GPU of the runtime, and `also` (a device
 * outside the runtime's table, in tests) when it has its own memory. */
static int cache__devices(maccrt_device *also, maccrt_device **out)
{
    int n = 0;
    for (int i = 0; i < maccrt_rt.ndevices; i++)
        if (cache__has_memory(maccrt_rt.devices[i]))
            out[n++] = maccrt_rt.devices[i];
    if (cache__has_memory(also)) {
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= out[i] == also;
        if (!seen)
            out[n++] = also;
    }
    return n;
}

/* ---- plans: copies made without the lock -------------------------------------------------- */

enum {
    CACHE__WB,   /* e's dirty bytes [a, b) to the host */
    CACHE__FILL, /* the host's [a, b) into e */
    CACHE__PEER  /* src's [a, b) into e, device to device */
};

typedef struct cache__job {
    int op;
    maccrt_centry *e, *src;
    uintptr_t a, b;
} cache__job;

/* Claim modes, weakest first. A shared claim (a peer copy's source) waits
 * only for an exclusive one; a write-back claim also for another write-back
 * (two would copy the same bytes home at once); an exclusive claim for all. */
enum { CACHE__SHARED = 0, CACHE__WBACK = 1, CACHE__EXCL = 2 };

typedef struct cache__plan {
    cache__job *job;
    int njob, capjob;
    maccrt_centry **cl; /* claimed entries */
    unsigned char *clx; /* their claim modes */
    int ncl, capcl;
    int blocked; /* an entry it needs is claimed by another thread */
} cache__plan;

static void cache__plan_reset(cache__plan *p)
{
    p->njob = p->ncl = p->blocked = 0;
}

static void cache__plan_free(cache__plan *p)
{
    free(p->job);
    free(p->cl);
    free(p->clx);
    memset(p, 0, sizeof *p);
}

static void cache__plan_job(cache__plan *p, int op, maccrt_centry *e, maccrt_centry *src,
                            uintptr_t a, uintptr_t b)
{
    if (p->njob == p->capjob) {
        p->capjob = p->capjob ? 2 * p->capjob : 8;
        p->job = maccrt_xrealloc(p->job, (size_t)p->capjob * sizeof *p->job);
    }
    p->job[p->njob++] = (cache__job){op, e, src, a, b};
}

static int cache__claim_blocked(const maccrt_centry *e, int mode)
{
    return e->excl || (mode >= CACHE__WBACK && e->wb) || (mode == CACHE__EXCL && e->shared);
}

/* The plan needs e in claim mode `mode` (CACHE__*); blocked when another
 * thread's claim is in the way. */
static void cache__plan_claim(cache__plan *p, maccrt_centry *e, int mode)
{
    for (int i = 0; i < p->ncl; i++)
        if (p->cl[i] == e) {
            if (mode > p->clx[i])
                p->clx[i] = (unsigned char)mode;
            p->blocked |= cache__claim_blocked(e, p->clx[i]);
            return;
        }
    if (p->ncl == p->capcl) {
        p->capcl = p->capcl ? 2 * p->capcl : 8;
        p->cl = maccrt_xrealloc(p->cl, (size_t)p->capcl * sizeof *p->cl);
        p->clx = maccrt_xrealloc(p->clx, (size_t)p->capcl);
    }
    p->cl[p->ncl] = e;
    p->clx[p->ncl++] = (unsigned char)mode;
    p->blocked |= cache__claim_blocked(e, mode);
}

/* Write-back jobs for e's dirty bytes in [a, b) (e claimed for the
 * write-back, or exclusively). */
static void cache__plan_wb(cache__plan *p, maccrt_centry *e, uintptr_t a, uintptr_t b, int excl)
{
    int any = 0;
    for (int i = 0; i < e->ndirty; i++) {
        uintptr_t lo = e->dirty[i].a > a ? e->dirty[i].a : a;
        uintptr_t hi = e->dirty[i].b < b ? e->dirty[i].b : b;
        if (lo < hi) {
            cache__plan_job(p, CACHE__WB, e, NULL, lo, hi);
            any = 1;
        }
    }
    if (any || excl)
        cache__plan_claim(p, e, excl ? CACHE__EXCL : CACHE__WBACK);
}

/* Waits for claims to be given back (the plan is then made again). */
static void cache__plan_wait(cache__plan *p)
{
    cache__plan_reset(p);
    pthread_cond_wait(&cache__cv, &cache__lock);
}

static void cache__plan_commit(cache__plan *p)
{
    for (int i = 0; i < p->ncl; i++) {
        if (p->clx[i] == CACHE__EXCL)
            p->cl[i]->excl = 1;
        else if (p->clx[i] == CACHE__WBACK)
            p->cl[i]->wb = 1;
        else
            p->cl[i]->shared++;
    }
}

/* Makes the plan's copies, without the lock (the claims keep the entries). */
static void cache__plan_run(cache__plan *p, const MACC_SrcLoc *loc)
{
    if (p->njob == 0)
        return;
    pthread_mutex_unlock(&cache__lock);
    for (int i = 0; i < p->njob; i++) {
        cache__job *j = &p->job[i];
        maccrt_centry *e = j->e;
        void *dev = (char *)e->dev_start + (j->a - e->node.start);
        switch (j->op) {
        case CACHE__WB:
            maccrt_copy(e->dev, 0, (void *)j->a, dev, j->b - j->a, e->name, loc);
            break;
        case CACHE__FILL:
            maccrt_copy(e->dev, 1, dev, (void *)j->a, j->b - j->a, e->name, loc);
            break;
        case CACHE__PEER:
            maccrt_copy_peer(e->dev, dev, j->src->dev,
                             (char *)j->src->dev_start + (j->a - j->src->node.start), j->b - j->a,
                             e->name, loc);
            break;
        }
    }
    pthread_mutex_lock(&cache__lock);
}

/* After the copies: written-back bytes are no longer dirty. */
static void cache__plan_written_back(cache__plan *p)
{
    for (int i = 0; i < p->njob; i++)
        if (p->job[i].op == CACHE__WB)
            cache__dirty_drop(p->job[i].e, p->job[i].a, p->job[i].b);
}

/* Gives the claims back; detach: the claimed entries also leave their trees
 * (their dirty bytes were written back or superseded). */
static void cache__plan_release(cache__plan *p, int detach)
{
    for (int i = 0; i < p->ncl; i++) {
        maccrt_centry *e = p->cl[i];
        if (p->clx[i] == CACHE__EXCL)
            e->excl = 0;
        else if (p->clx[i] == CACHE__WBACK)
            e->wb = 0;
        else
            e->shared--;
        if (detach) {
            cache__dirty_drop(e, e->node.start, e->node.end);
            cache__detach(e);
        } else {
            cache__maybe_free(e);
        }
    }
    if (p->ncl)
        pthread_cond_broadcast(&cache__cv);
    p->ncl = 0;
}

/* ---- the coherence operations (cache__lock held; dropped during copies) ------------------ */

/* Makes the host copy of [a, b) current: every device except `except`
 * writes back its dirty bytes there. */
static void cache__host_current(maccrt_device *except, maccrt_device *also, uintptr_t a,
                                uintptr_t b, const MACC_SrcLoc *loc)
{
    cache__plan p = {0};
    for (;;) {
        if (atomic_load(&cache__ndirty) == 0)
            break;
        maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
        int n = cache__devices(also, devs);
        for (int i = 0; i < n; i++) {
            if (devs[i] == except)
                continue;
            for (maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b);
                 r && r->start < b; r = maccrt_rtree_next(&devs[i]->ctree, r))
                cache__plan_wb(&p, (maccrt_centry *)r, a, b, 0);
        }
        if (p.blocked) {
            cache__plan_wait(&p);
            continue;
        }
        cache__plan_commit(&p);
        cache__plan_run(&p, loc);
        cache__plan_written_back(&p);
        cache__plan_release(&p, 0);
        break;
    }
    cache__plan_free(&p);
}

/* [a, b) was written on `writer` (NULL: the host): every other copy that
 * overlaps it is stale. Entries of the other devices write back their dirty
 * bytes outside [a, b) (those inside are superseded) and are detached. */
static void cache__invalidate(maccrt_device *writer, maccrt_device *also, uintptr_t a, uintptr_t b,
                              const MACC_SrcLoc *loc)
{
    cache__plan p = {0};
    for (;;) {
        if (atomic_load(&cache__nentries) == 0)
            break;
        maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
        int n = cache__devices(also, devs);
        for (int i = 0; i < n; i++) {
            if (devs[i] == writer)
                continue;
            for (maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b);
                 r && r->start < b; r = maccrt_rtree_next(&devs[i]->ctree, r)) {
                maccrt_centry *e = (maccrt_centry *)r;
                cache__plan_wb(&p, e, e->node.start, a, 1);
                cache__plan_wb(&p, e, b, e->node.end, 1);
            }
        }
        if (p.blocked) {
            cache__plan_wait(&p);
            continue;
        }
        cache__plan_commit(&p);
        cache__plan_run(&p, loc);
        cache__plan_release(&p, 1);
        break;
    }
    cache__plan_free(&p);
}

/* A new entry for [a, b) on d, in the tree and claimed exclusively by the
 * caller; its device memory is allocated without the lock. */
static maccrt_centry *cache__new(maccrt_device *d, uintptr_t a, uintptr_t b, const char *name,
                                 const MACC_SrcLoc *loc)
{
    maccrt_centry *e = maccrt_xcalloc(1, sizeof *e);
    e->node.start = a;
    e->node.end = b;
    e->dev = d;
    e->name = name;
    e->excl = 1;
    maccrt_rtree_insert(&d->ctree, &e->node);
    atomic_fetch_add(&cache__nentries, 1);
    pthread_mutex_unlock(&cache__lock);
    void *p = maccrt_device_alloc(d, (void *)a, b - a, name, NULL, loc);
    if (d->plugin->host_pin)
        d->plugin->host_pin(d, (void *)a, b - a); /* pinned-speed copies while it lives */
    pthread_mutex_lock(&cache__lock);
    e->dev_start = p;
    return e;
}

/* Is a device-to-device copy possible from `from` to `to`? */
static int cache__peer_ok(const maccrt_device *to, const maccrt_device *from)
{
    static int off = -1; /* MACC_NO_PEER=1: through the host, for comparison */
    if (off < 0)
        off = getenv("MACC_NO_PEER") && strcmp(getenv("MACC_NO_PEER"), "0") != 0;
    return !off && to->plugin->copy_peer && to->plugin == from->plugin;
}

/* Plans the fill of e (claimed exclusively by the caller, or `claim_e`: to
 * be claimed with the rest): from another GPU's valid entry that contains
 * it, else from the host after every dirty copy of its bytes went home. */
static void cache__plan_fill(cache__plan *p, maccrt_centry *e, int claim_e)
{
    uintptr_t a = e->node.start, b = e->node.end;
    if (claim_e)
        cache__plan_claim(p, e, CACHE__EXCL);
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    int n = cache__devices(e->dev, devs);
    if (e->ndirty == 0) {
        for (int i = 0; i < n; i++) {
            if (devs[i] == e->dev || !cache__peer_ok(e->dev, devs[i]))
                continue;
            maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b);
            maccrt_centry *g = (maccrt_centry *)r;
            if (g && g->valid && g->dev_start && r->start <= a && b <= r->end) {
                cache__plan_claim(p, g, CACHE__SHARED);
                cache__plan_job(p, CACHE__PEER, e, g, a, b);
                return;
            }
        }
    }
    /* its own dirty bytes go home first (they are newer than the host's; a
     * new entry, already claimed by the caller, has none) */
    if (claim_e)
        cache__plan_wb(p, e, a, b, 1);
    for (int i = 0; i < n; i++) {
        if (devs[i] == e->dev)
            continue;
        for (maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b); r && r->start < b;
             r = maccrt_rtree_next(&devs[i]->ctree, r))
            cache__plan_wb(p, (maccrt_centry *)r, a, b, 0);
    }
    cache__plan_job(p, CACHE__FILL, e, NULL, a, b);
}

/* Fills e, a new entry claimed by the caller; gives the claim back. */
static void cache__fill_new(maccrt_centry *e, int fill, const MACC_SrcLoc *loc)
{
    cache__plan p = {0};
    while (fill) {
        cache__plan_fill(&p, e, 0);
        if (p.blocked) {
            cache__plan_wait(&p);
            continue;
        }
        cache__plan_commit(&p);
        cache__plan_run(&p, loc);
        cache__plan_written_back(&p);
        cache__plan_release(&p, 0);
        e->valid = 1;
        break;
    }
    cache__plan_free(&p);
    e->excl = 0;
    pthread_cond_broadcast(&cache__cv);
}

/* ---- tasks on a device with its own memory ---------------------------------------------- */

void *maccrt_cache_acquire(maccrt_device *d, const MACC_Map *m, void **handle,
                           const MACC_SrcLoc *loc)
{
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int to = (m->kind & MACC_MAP_TO) != 0;
    cache__plan p = {0};
    maccrt_centry *e = NULL;
    pthread_mutex_lock(&cache__lock);
    for (;;) {
        maccrt_rnode *r = maccrt_rtree_first_overlap(&d->ctree, a, b);
        if (r && r->start <= a && b <= r->end) {
            e = (maccrt_centry *)r;
            if (e->excl) {
                cache__plan_wait(&p);
                continue;
            }
            /* A valid entry is current: no other device can hold dirty bytes
             * in it (writing them would have detached it). */
            if (to && !e->valid) {
                cache__plan_fill(&p, e, 1);
                if (p.blocked) {
                    cache__plan_wait(&p);
                    continue;
                }
                cache__plan_commit(&p);
                cache__plan_run(&p, loc);
                cache__plan_written_back(&p);
                e->valid = 1;
                cache__plan_release(&p, 0);
            }
            break;
        }
        if (!r) {
            e = cache__new(d, a, b, m->name, loc);
            cache__fill_new(e, to, loc);
            break;
        }
        /* Overlaps entries of d without lying in one: merge them when idle. */
        uintptr_t ua = a, ub = b;
        int busy = 0;
        for (maccrt_rnode *n = r; n && n->start < b; n = maccrt_rtree_next(&d->ctree, n)) {
            maccrt_centry *o = (maccrt_centry *)n;
            busy |= o->users > 0 || o->excl || o->wb || o->shared;
            if (n->start < ua)
                ua = n->start;
            if (n->end > ub)
                ub = n->end;
        }
        if (busy) {
            /* A private copy, as without a cache. */
            cache__host_current(NULL, d, a, b, loc);
            pthread_mutex_unlock(&cache__lock);
            cache__plan_free(&p);
            void *q = maccrt_device_alloc(d, (void *)a, b - a, m->name, NULL, loc);
            if (to)
                maccrt_copy(d, 1, q, (void *)a, b - a, m->name, loc);
            *handle = NULL;
            return maccrt_translate(q, a, m->base);
        }
        for (maccrt_rnode *n = r; n && n->start < b; n = maccrt_rtree_next(&d->ctree, n)) {
            maccrt_centry *o = (maccrt_centry *)n;
            cache__plan_wb(&p, o, o->node.start, o->node.end, 1);
        }
        cache__plan_commit(&p);
        cache__plan_run(&p, loc);
        cache__plan_release(&p, 1);
        e = cache__new(d, ua, ub, m->name, loc);
        cache__fill_new(e, to || ua != a || ub != b, loc); /* the parts outside S must be valid */
        break;
    }
    e->users++;
    pthread_mutex_unlock(&cache__lock);
    cache__plan_free(&p);
    *handle = e;
    return maccrt_translate(e->dev_start, e->node.start, m->base);
}

void maccrt_cache_release(maccrt_device *d, const MACC_Map *m, void *handle, void *devbase,
                          const MACC_SrcLoc *loc)
{
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int from = (m->kind & MACC_MAP_FROM) != 0;
    maccrt_centry *e = handle;
    if (!e) {
        /* private copy: written through */
        void *p = (void *)((uintptr_t)devbase + (a - (uintptr_t)m->base));
        if (from) {
            maccrt_copy(d, 0, (void *)a, p, b - a, m->name, loc);
            pthread_mutex_lock(&cache__lock);
            cache__invalidate(NULL, d, a, b, loc);
            pthread_mutex_unlock(&cache__lock);
        }
        d->plugin->free(d, p);
        return;
    }
    pthread_mutex_lock(&cache__lock);
    if (from) {
        cache__invalidate(d, d, a, b, loc);
        while (e->excl) /* being invalidated by another writer of overlapping bytes */
            pthread_cond_wait(&cache__cv, &cache__lock);
        if (e->detached) {
            pthread_mutex_unlock(&cache__lock);
            maccrt_copy(d, 0, (void *)a, (char *)e->dev_start + (a - e->node.start), b - a,
                        m->name, loc);
            pthread_mutex_lock(&cache__lock);
        } else {
            cache__dirty_add(e, a, b);
            if (a == e->node.start && b == e->node.end)
                e->valid = 1;
        }
    }
    e->users--;
    cache__maybe_free(e);
    pthread_mutex_unlock(&cache__lock);
}

void *maccrt_cache_translate(maccrt_device *d, const void *p, const void *base)
{
    pthread_mutex_lock(&cache__lock);
    maccrt_rnode *r = maccrt_rtree_find(&d->ctree, (uintptr_t)p);
    void *out = r && ((maccrt_centry *)r)->dev_start
                    ? maccrt_translate(((maccrt_centry *)r)->dev_start, r->start, base)
                    : NULL;
    pthread_mutex_unlock(&cache__lock);
    return out;
}

/* ---- tasks on the host ---------------------------------------------------------------------- */

void maccrt_cache_host_acquire(const MACC_Map *m, const MACC_SrcLoc *loc)
{
    if (atomic_load(&cache__ndirty) == 0)
        return;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    pthread_mutex_lock(&cache__lock);
    cache__host_current(NULL, NULL, a, b, loc);
    pthread_mutex_unlock(&cache__lock);
}

void maccrt_cache_host_release(const MACC_Map *m, const MACC_SrcLoc *loc)
{
    if (!(m->kind & MACC_MAP_FROM) || atomic_load(&cache__nentries) == 0)
        return;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    pthread_mutex_lock(&cache__lock);
    cache__invalidate(NULL, NULL, a, b, loc);
    pthread_mutex_unlock(&cache__lock);
}

/* ---- synchronisation points --------------------------------------------------------------- */

void maccrt_cache_flush(maccrt_device *also)
{
    if (atomic_load(&cache__nentries) == 0)
        return;
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    cache__plan p = {0};
    pthread_mutex_lock(&cache__lock);
    int n = cache__devices(also, devs);
    for (;;) {
        for (int i = 0; i < n; i++)
            for (maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, 0, UINTPTR_MAX); r;
                 r = maccrt_rtree_next(&devs[i]->ctree, r)) {
                maccrt_centry *e = (maccrt_centry *)r;
                cache__plan_wb(&p, e, e->node.start, e->node.end, 1);
            }
        if (p.blocked) {
            cache__plan_wait(&p);
            continue;
        }
        cache__plan_commit(&p);
        cache__plan_run(&p, NULL);
        cache__plan_release(&p, 1);
        break;
    }
    pthread_mutex_unlock(&cache__lock);
    cache__plan_free(&p);
}

long maccrt_cache_entries(const maccrt_device *d, long *dirty)
{
    pthread_mutex_lock(&cache__lock);
    long n = (long)d->ctree.count, nd = 0;
    for (maccrt_rnode *r = maccrt_rtree_first_overlap(&d->ctree, 0, UINTPTR_MAX); r;
         r = maccrt_rtree_next(&d->ctree, r))
        nd += ((maccrt_centry *)r)->ndirty > 0;
    pthread_mutex_unlock(&cache__lock);
    if (dirty)
        *dirty = nd;
    return n;
}

/* ---- residency: what the scheduler's estimate adds ----------------------------------------- */

static double cache__bw(double bw)
{
    return bw > 0 ? bw : MACCRT_DEFAULT_BW;
}

static double cache__move_time(const maccrt_task *t, maccrt_device *d, int try);

double maccrt_cache_move_time(const maccrt_task *t, maccrt_device *d)
{
    return cache__move_time(t, d, 0);
}

double maccrt_cache_move_time_try(const maccrt_task *t, maccrt_device *d)
{
    return cache__move_time(t, d, 1);
}

static double cache__move_time(const maccrt_task *t, maccrt_device *d, int try)
{
    if (atomic_load(&cache__nentries) == 0 && !cache__has_memory(d))
        return 0;
    int gpu = cache__has_memory(d);
    double s = 0;
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    if (try) {
        if (pthread_mutex_trylock(&cache__lock) != 0)
            return -1;
    } else {
        pthread_mutex_lock(&cache__lock);
    }
    int n = cache__devices(NULL, devs);
    for (int k = 0; k < t->nmaps; k++) {
        const MACC_Map *m = &t->maps[k];
        if (!(m->kind & MACC_MAP_TO) || !m->bytes || (m->kind & (MACC_MAP_DEVICEPTR | MACC_MAP_ATTACH)))
            continue;
        uintptr_t a, b;
        maccrt_section(m, &a, &b);
        if (gpu) {
            maccrt_rnode *r = maccrt_rtree_first_overlap(&d->ctree, a, b);
            if (r && r->start <= a && b <= r->end && ((maccrt_centry *)r)->valid)
                continue; /* valid here: nothing moves */
        }
        double pull = 0; /* dirty bytes elsewhere coming back to the host */
        int peer = 0;
        for (int i = 0; i < n; i++) {
            if (devs[i] == d)
                continue;
            for (maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b); r && r->start < b;
                 r = maccrt_rtree_next(&devs[i]->ctree, r)) {
                maccrt_centry *e = (maccrt_centry *)r;
                if (gpu && e->valid && r->start <= a && b <= r->end && cache__peer_ok(d, devs[i]))
                    peer = 1;
                pull += (double)cache__dirty_bytes(e, a, b) / cache__bw(atomic_load(&devs[i]->bw_d2h));
            }
        }
        if (!gpu)
            s += pull;
        else if (peer)
            s += (double)(b - a) / cache__bw(atomic_load(&d->bw_p2p));
        else
            s += pull + (double)(b - a) / cache__bw(atomic_load(&d->bw_h2d));
    }
    pthread_mutex_unlock(&cache__lock);
    return s;
}
