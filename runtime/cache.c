/* cache.c: the coherence directory for the data of tasks' own maps.
 *
 * A task's map on a device with its own memory (a GPU) that no data construct
 * made present goes through a per-device software cache instead of being
 * copied in and out for every task: each GPU keeps a range tree of cached
 * host sections (maccrt_centry) with a device copy. An entry is
 *   valid    its bytes hold the current value of the section (filled from the
 *            host, or wholly written by a task on this device);
 *   dirty    a sorted list of disjoint byte ranges this device wrote and the
 *            host has not seen yet (MSI's Modified, per range);
 *   detached out of the tree (invalid); freed when no running task uses it.
 * The host copy is current wherever no entry of any device is dirty; a valid
 * entry's clean bytes equal the host's. So the directory is distributed: the
 * state of a byte is found by asking every device's tree.
 *
 * The rules (S is a task map's section [a, b) on device d):
 *   - before a GPU task reads S (to): other devices write back their dirty
 *     bytes in S; d's entry containing S is used, or made (exactly S) and
 *     filled from the host; a valid entry is used without a copy, so data
 *     read by many tasks (N-body's x, y, z) is copied once per device;
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
 * One lock (cache__lock) guards every tree and entry and is held during the
 * copies it makes: copies are serialised, and a task whose data is being
 * filled waits for the fill instead of copying again. It is taken without
 * maccrt_rt.lock and without present-table locks; plugin copy locks nest
 * inside it.
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
    void *dev_start;
    const char *name;
    int users;    /* running tasks using it */
    int valid;    /* holds the section's current value (with its dirty ranges) */
    int detached; /* out of the tree; freed when users reaches 0 */
    cache__ival *dirty;
    int ndirty, capdirty;
} maccrt_centry;

static pthread_mutex_t cache__lock = PTHREAD_MUTEX_INITIALIZER;
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

/* Removes [a, b) from e's dirty ranges; when wb, copies the removed bytes to
 * the host first. */
static void cache__dirty_take(maccrt_centry *e, uintptr_t a, uintptr_t b, int wb,
                              const MACC_SrcLoc *loc)
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
        if (wb)
            maccrt_copy(e->dev, 0, (void *)lo,
                        (char *)e->dev_start + (lo - e->node.start), hi - lo, e->name, loc);
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

/* ---- entries ------------------------------------------------------------------------------ */

static void cache__free(maccrt_centry *e)
{
    if (e->ndirty)
        atomic_fetch_sub(&cache__ndirty, 1);
    e->dev->plugin->free(e->dev, e->dev_start);
    free(e->dirty);
    free(e);
}

/* Takes e out of its tree (invalid from now on); frees it when unused. */
static void cache__detach(maccrt_centry *e)
{
    if (e->detached)
        return;
    maccrt_rtree_remove(&e->dev->ctree, &e->node);
    atomic_fetch_sub(&cache__nentries, 1);
    e->detached = 1;
    if (e->users == 0)
        cache__free(e);
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

/* Makes the host copy of [a, b) current: every device except `except`
 * writes back its dirty bytes there. */
static void cache__host_current(maccrt_device *except, maccrt_device *also, uintptr_t a,
                                uintptr_t b, const MACC_SrcLoc *loc)
{
    if (atomic_load(&cache__ndirty) == 0)
        return;
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    int n = cache__devices(also, devs);
    for (int i = 0; i < n; i++) {
        if (devs[i] == except)
            continue;
        for (maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b); r && r->start < b;
             r = maccrt_rtree_next(&devs[i]->ctree, r))
            cache__dirty_take((maccrt_centry *)r, a, b, 1, loc);
    }
}

/* [a, b) was written on `writer` (NULL: the host): every other copy that
 * overlaps it is stale. Entries of the other devices write back their dirty
 * bytes outside [a, b) (those inside are superseded) and are detached. */
static void cache__invalidate(maccrt_device *writer, maccrt_device *also, uintptr_t a, uintptr_t b,
                              const MACC_SrcLoc *loc)
{
    if (atomic_load(&cache__nentries) == 0)
        return;
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    int n = cache__devices(also, devs);
    for (int i = 0; i < n; i++) {
        if (devs[i] == writer)
            continue;
        maccrt_rnode *r = maccrt_rtree_first_overlap(&devs[i]->ctree, a, b);
        while (r && r->start < b) {
            maccrt_centry *e = (maccrt_centry *)r;
            r = maccrt_rtree_next(&devs[i]->ctree, r);
            cache__dirty_take(e, a, b, 0, loc);
            cache__dirty_take(e, e->node.start, e->node.end, 1, loc);
            cache__detach(e);
        }
    }
}

static maccrt_centry *cache__new(maccrt_device *d, uintptr_t a, uintptr_t b, const char *name,
                                 const MACC_SrcLoc *loc)
{
    maccrt_centry *e = maccrt_xcalloc(1, sizeof *e);
    e->node.start = a;
    e->node.end = b;
    e->dev = d;
    e->name = name;
    e->dev_start = maccrt_device_alloc(d, (void *)a, b - a, name, &cache__lock, loc);
    maccrt_rtree_insert(&d->ctree, &e->node);
    atomic_fetch_add(&cache__nentries, 1);
    return e;
}

/* Fills e from the host (made current first). */
static void cache__fill(maccrt_centry *e, const MACC_SrcLoc *loc)
{
    uintptr_t a = e->node.start, b = e->node.end;
    /* its own dirty bytes go home first (they are newer than the host's) */
    cache__dirty_take(e, a, b, 1, loc);
    cache__host_current(e->dev, e->dev, a, b, loc);
    maccrt_copy(e->dev, 1, e->dev_start, (void *)a, b - a, e->name, loc);
    e->valid = 1;
}

/* ---- tasks on a device with its own memory ---------------------------------------------- */

void *maccrt_cache_acquire(maccrt_device *d, const MACC_Map *m, void **handle,
                           const MACC_SrcLoc *loc)
{
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int to = (m->kind & MACC_MAP_TO) != 0;
    pthread_mutex_lock(&cache__lock);
    maccrt_rnode *r = maccrt_rtree_first_overlap(&d->ctree, a, b);
    maccrt_centry *e = NULL;
    if (r && r->start <= a && b <= r->end) {
        e = (maccrt_centry *)r;
    } else if (!r) {
        e = cache__new(d, a, b, m->name, loc);
    } else {
        /* Overlaps entries of d without lying in one: merge them when idle. */
        uintptr_t ua = a, ub = b;
        int busy = 0;
        for (maccrt_rnode *n = r; n && n->start < b; n = maccrt_rtree_next(&d->ctree, n)) {
            busy |= ((maccrt_centry *)n)->users > 0;
            if (n->start < ua)
                ua = n->start;
            if (n->end > ub)
                ub = n->end;
        }
        if (busy) {
            /* A private copy, as without a cache. */
            cache__host_current(NULL, d, a, b, loc);
            void *p = maccrt_device_alloc(d, (void *)a, b - a, m->name, &cache__lock, loc);
            if (to)
                maccrt_copy(d, 1, p, (void *)a, b - a, m->name, loc);
            pthread_mutex_unlock(&cache__lock);
            *handle = NULL;
            return maccrt_translate(p, a, m->base);
        }
        while (r && r->start < b) {
            maccrt_centry *old = (maccrt_centry *)r;
            r = maccrt_rtree_next(&d->ctree, r);
            cache__dirty_take(old, old->node.start, old->node.end, 1, loc);
            cache__detach(old);
        }
        e = cache__new(d, ua, ub, m->name, loc);
        if (ua != a || ub != b)
            cache__fill(e, loc); /* the parts outside S must be valid */
    }
    /* A valid entry is current: no other device can hold dirty bytes in it
     * (writing them would have detached it). */
    if (to && !e->valid)
        cache__fill(e, loc);
    e->users++;
    pthread_mutex_unlock(&cache__lock);
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
    pthread_mutex_lock(&cache__lock);
    if (!e) {
        /* private copy: written through */
        void *p = (void *)((uintptr_t)devbase + (a - (uintptr_t)m->base));
        if (from) {
            maccrt_copy(d, 0, (void *)a, p, b - a, m->name, loc);
            cache__invalidate(NULL, d, a, b, loc);
        }
        d->plugin->free(d, p);
        pthread_mutex_unlock(&cache__lock);
        return;
    }
    if (from) {
        cache__invalidate(d, d, a, b, loc);
        if (e->detached) {
            maccrt_copy(d, 0, (void *)a, (char *)e->dev_start + (a - e->node.start), b - a,
                        m->name, loc);
        } else {
            cache__dirty_add(e, a, b);
            if (a == e->node.start && b == e->node.end)
                e->valid = 1;
        }
    }
    if (--e->users == 0 && e->detached)
        cache__free(e);
    pthread_mutex_unlock(&cache__lock);
}

void *maccrt_cache_translate(maccrt_device *d, const void *p, const void *base)
{
    pthread_mutex_lock(&cache__lock);
    maccrt_rnode *r = maccrt_rtree_find(&d->ctree, (uintptr_t)p);
    void *out = r ? maccrt_translate(((maccrt_centry *)r)->dev_start, r->start, base) : NULL;
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

static void cache__flush_device(maccrt_device *d)
{
    while (d->ctree.root) {
        maccrt_centry *e = (maccrt_centry *)d->ctree.root;
        cache__dirty_take(e, e->node.start, e->node.end, 1, NULL);
        cache__detach(e);
    }
}

void maccrt_cache_flush(maccrt_device *also)
{
    if (atomic_load(&cache__nentries) == 0)
        return;
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    pthread_mutex_lock(&cache__lock);
    int n = cache__devices(also, devs);
    for (int i = 0; i < n; i++)
        cache__flush_device(devs[i]);
    pthread_mutex_unlock(&cache__lock);
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
