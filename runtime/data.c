/* data.c: the present tables and the data directives.
 *
 * Each device has a table of mapped host sections (maccrt_mapping), keyed by
 * host address range in a range tree, with OpenACC 2.7 / OpenMP 5 reference
 * counts: structured (data regions, and a task's own maps for the task's
 * duration) and dynamic (enter/exit data). A map that lies inside an entry
 * uses it; the variable's device address is the entry's device start plus the
 * variable's offset from the entry's host start (so a base pointer outside
 * the section translates too). A map that overlaps an entry without lying
 * inside it is "partially present", an error as in libgomp and NVHPC.
 *
 * On the host (a shared-memory device) the device copy is the host memory:
 * alloc and copies are identities, so the table is bookkeeping, but a real
 * one: MACC_is_present answers from it and map(present:) checks it. A task's
 * own maps on a shared-memory device reference an enclosing entry when there
 * is one and otherwise create nothing (tasks on the host may map overlapping
 * sections concurrently, which is harmless there).
 *
 * On a device with its own memory (a GPU), the tasks' own maps of data that
 * no entry holds go through the coherence directory (cache.c), not this
 * table (task.c routes them). maccrt_map_acquire with task != 0 still makes a
 * temporary entry for such a map (copy in, copy out, free), or a private copy
 * when it overlaps other tasks' temporary entries; only direct callers (the
 * unit tests) use that path now.
 *
 * Affinity (data constructs): entries
 * made by data constructs (data_begin, enter data) on a device with its own
 * memory are "pinned" (also kept in the table's pin tree, under its own
 * innermost lock). A task whose maps overlap a pinned entry of GPU g may run
 * only on g when g can run it (maccrt_data_affinity, used by the scheduler),
 * so that it uses the copy the data construct made rather than a stale host
 * copy.
 *
 * Declare target variables (declare.c) have permanent entries on every
 * device with its own memory, naming the device file's copy of the variable
 * (maccrt_mapping.perm): `to`/`enter` ones are always present (maps copy
 * only with `always`), `link` ones count references like any entry but keep
 * their storage when the count drops to zero (absent until mapped again).
 *
 * Copies are made with the table's lock held.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void maccrt_ptable_init(maccrt_device *d)
{
    maccrt_ptable *pt = maccrt_xcalloc(1, sizeof *pt);
    pthread_mutex_init(&pt->lock, NULL);
    pthread_mutex_init(&pt->pin_lock, NULL);
    pt->tree.seed = 0x2545f491u;
    pt->pins.seed = 0x9e3779b9u;
    pt->allocs.seed = 0x85ebca6bu;
    d->ptable = pt;
}

void maccrt_ptable_fini(maccrt_device *d)
{
    maccrt_ptable *pt = d->ptable;
    if (!pt)
        return;
    while (pt->tree.root) {
        maccrt_mapping *e = (maccrt_mapping *)pt->tree.root;
        maccrt_rtree_remove(&pt->tree, &e->node);
        atomic_fetch_sub(&pt->entries, 1);
        free(e);
    }
    pt->pins.root = NULL; /* its nodes were in the entries */
    pt->pins.count = 0;
    while (pt->allocs.root) {
        maccrt_rnode *n = pt->allocs.root;
        maccrt_rtree_remove(&pt->allocs, n);
        free(n);
    }
    pthread_mutex_destroy(&pt->pin_lock);
    pthread_mutex_destroy(&pt->lock);
    free(pt);
    d->ptable = NULL;
}

static const char *data__name(const MACC_Map *m)
{
    return m->name ? m->name : "(unnamed)";
}

/* The entry that contains [a, b), or NULL; *partial set when an entry
 * overlaps without containing. */
static maccrt_mapping *data__lookup(maccrt_ptable *pt, uintptr_t a, uintptr_t b, int *partial)
{
    *partial = 0;
    maccrt_rnode *n = maccrt_rtree_first_overlap(&pt->tree, a, b);
    if (!n)
        return NULL;
    if (n->start <= a && b <= n->end)
        return (maccrt_mapping *)n;
    *partial = 1;
    return (maccrt_mapping *)n;
}

static void *data__translate(const maccrt_mapping *e, const void *hostptr)
{
    return maccrt_translate(e->dev_start, e->node.start, hostptr);
}

/* Fatal error for a failed copy ("copying 'x' (N bytes) to nvidia:0 failed:
 * an illegal memory access was encountered"); prep is "to" or "from". */
static void data__copy_failed(maccrt_device *d, const MACC_Map *m, const char *prep, size_t bytes,
                              int err, const MACC_SrcLoc *loc)
{
    const char *es = d->plugin->error_string ? d->plugin->error_string(err) : NULL;
    if (es)
        maccrt_fatal(loc, "copying '%s' (%zu bytes) %s %s failed: %s", data__name(m), bytes, prep,
                     d->name, es);
    maccrt_fatal(loc, "copying '%s' (%zu bytes) %s %s failed (error %d)", data__name(m), bytes,
                 prep, d->name, err);
}

/* One more sample of a link's bandwidth: what the link gives one copy, so a
 * faster sample is taken at once and slower ones (copies that shared the
 * link, or waited behind others) pull it down slowly. Races between copiers
 * only blur it. */
static void data__learn_bw(_Atomic double *bw, size_t bytes, double dt)
{
    if (dt <= 0)
        return;
    double v = (double)bytes / dt, old = atomic_load(bw);
    atomic_store(bw, old <= 0 || v > old ? v : 0.98 * old + 0.02 * v);
}

void maccrt_copy(maccrt_device *d, int to_dev, void *dst, const void *src, size_t bytes,
                 const char *name, const MACC_SrcLoc *loc)
{
    if (!bytes || dst == src)
        return;
    int timed = bytes >= ((size_t)1 << 18) || maccrt_trace_on();
    double t0 = timed ? maccrt_now() : 0.0;
    int err = to_dev ? d->plugin->copy_h2d(d, dst, src, bytes) : d->plugin->copy_d2h(d, dst, src, bytes);
    if (err) {
        MACC_Map m = {.name = name};
        data__copy_failed(d, &m, to_dev ? "to" : "from", bytes, err, loc);
    }
    atomic_fetch_add(to_dev ? &d->bytes_h2d : &d->bytes_d2h, bytes);
    if (timed && bytes >= ((size_t)1 << 18))
        data__learn_bw(to_dev ? &d->bw_h2d : &d->bw_d2h, bytes, maccrt_now() - t0);
    if (maccrt_trace_on() && t0 > 0.0)
        maccrt_trace_event(to_dev ? MACCRT_TRACE_H2D : MACCRT_TRACE_D2H, d,
                           name ? name : to_dev ? "h2d" : "d2h", t0, maccrt_now(), bytes);
}

void maccrt_copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                      size_t bytes, const char *name, const MACC_SrcLoc *loc)
{
    if (!bytes)
        return;
    int timed = bytes >= ((size_t)1 << 18) || maccrt_trace_on();
    double t0 = timed ? maccrt_now() : 0.0;
    int err = d->plugin->copy_peer(d, dst, from, src, bytes);
    if (err) {
        MACC_Map m = {.name = name};
        data__copy_failed(d, &m, "to", bytes, err, loc);
    }
    atomic_fetch_add(&d->bytes_p2p, bytes);
    if (timed && bytes >= ((size_t)1 << 18))
        data__learn_bw(&d->bw_p2p, bytes, maccrt_now() - t0);
    if (maccrt_trace_on() && t0 > 0.0)
        maccrt_trace_event(MACCRT_TRACE_P2P, d, name ? name : "p2p", t0, maccrt_now(), bytes);
}

static void data__h2d(maccrt_device *d, maccrt_mapping *e, uintptr_t a, size_t bytes,
                      const MACC_Map *m, const MACC_SrcLoc *loc)
{
    maccrt_copy(d, 1, data__translate(e, (void *)a), (void *)a, bytes, m ? m->name : NULL, loc);
}

static void data__d2h(maccrt_device *d, maccrt_mapping *e, uintptr_t a, size_t bytes,
                      const MACC_Map *m, const MACC_SrcLoc *loc)
{
    maccrt_copy(d, 0, (void *)a, data__translate(e, (void *)a), bytes, m ? m->name : NULL, loc);
}

static void data__not_present(maccrt_device *d, const MACC_Map *m, const MACC_SrcLoc *loc)
{
    maccrt_fatal(loc, "'%s' is not present on device %s", data__name(m), d->name);
}

static void data__partial(maccrt_device *d, const MACC_Map *m, const maccrt_mapping *e,
                          const MACC_SrcLoc *loc)
{
    maccrt_fatal(loc,
                 "'%s' is partially present on device %s (mapped: %zu bytes at %p, "
                 "requested: %zu bytes at %p)",
                 data__name(m), d->name, (size_t)(e->node.end - e->node.start),
                 (void *)e->node.start, m->bytes, m->start);
}

void *maccrt_device_alloc(maccrt_device *d, void *hostptr, size_t bytes, const char *name,
                          pthread_mutex_t *locked, const MACC_SrcLoc *loc)
{
    void *dev = d->plugin->alloc(d, hostptr, bytes);
    if (dev)
        return dev;
    int err = d->plugin->alloc_error ? d->plugin->alloc_error(d) : MACCRT_ERR_NOMEM;
    if (locked)
        pthread_mutex_unlock(locked);
    if (!name)
        name = "(unnamed)";
    if (err == MACCRT_ERR_NOMEM || err == 0)
        maccrt_fatal(loc, "out of %s memory mapping '%s' (%zu bytes) on %s",
                     d->kind == MACC_DEV_NVIDIA ? "GPU" : "device", name, bytes, d->name);
    const char *es = d->plugin->error_string ? d->plugin->error_string(err) : NULL;
    if (es)
        maccrt_fatal(loc, "allocating '%s' (%zu bytes) on %s failed: %s", name, bytes, d->name, es);
    maccrt_fatal(loc, "allocating '%s' (%zu bytes) on %s failed (error %d)", name, bytes, d->name,
                 err);
}

/* Pins e (a data construct made or uses it on a device with its own memory):
 * the scheduler's affinity rule reads the pin tree. pt->lock held. */
static void data__pin(maccrt_ptable *pt, maccrt_mapping *e)
{
    if (e->pinned)
        return;
    e->pinned = 1;
    e->pin.start = e->node.start;
    e->pin.end = e->node.end;
    pthread_mutex_lock(&pt->pin_lock);
    maccrt_rtree_insert(&pt->pins, &e->pin);
    pthread_mutex_unlock(&pt->pin_lock);
}

/* e goes away. pt->lock held. */
static void data__unpin(maccrt_ptable *pt, maccrt_mapping *e)
{
    if (!e->pinned)
        return;
    pthread_mutex_lock(&pt->pin_lock);
    maccrt_rtree_remove(&pt->pins, &e->pin);
    pthread_mutex_unlock(&pt->pin_lock);
    e->pinned = 0;
}

/* Does an entry overlapping [a, b) belong to a data construct? pt->lock held. */
static int data__any_pinned(maccrt_ptable *pt, uintptr_t a, uintptr_t b)
{
    for (maccrt_rnode *n = maccrt_rtree_first_overlap(&pt->tree, a, b); n && n->start < b;
         n = maccrt_rtree_next(&pt->tree, n))
        if (((maccrt_mapping *)n)->pinned)
            return 1;
    return 0;
}

/* A task's private copy of m's section (in no table): allocated, copied in
 * (to), given back by maccrt_map_drop_private. No table lock is held. */
static void *data__private(maccrt_device *d, const MACC_Map *m, int *took, const MACC_SrcLoc *loc)
{
    maccrt_mapping tmp;
    memset(&tmp, 0, sizeof tmp);
    maccrt_section(m, &tmp.node.start, &tmp.node.end);
    tmp.dev_start = maccrt_device_alloc(d, m->start, m->bytes, m->name, NULL, loc);
    if (m->kind & MACC_MAP_TO)
        data__h2d(d, &tmp, tmp.node.start, m->bytes, m, loc);
    *took = MACCRT_TOOK_PRIVATE;
    return data__translate(&tmp, m->base);
}

void maccrt_map_drop_private(maccrt_device *d, const MACC_Map *m, void *devbase,
                             const MACC_SrcLoc *loc)
{
    maccrt_mapping tmp;
    memset(&tmp, 0, sizeof tmp);
    maccrt_section(m, &tmp.node.start, &tmp.node.end);
    /* devbase = dev_start + (base - start), so dev_start = devbase + (start - base). */
    tmp.dev_start = (void *)((uintptr_t)devbase + (tmp.node.start - (uintptr_t)m->base));
    if (m->kind & MACC_MAP_FROM)
        data__d2h(d, &tmp, tmp.node.start, m->bytes, m, loc);
    d->plugin->free(d, tmp.dev_start);
}

void *maccrt_map_acquire(maccrt_device *d, const MACC_Map *m, int ref, int task, int *took,
                         const MACC_SrcLoc *loc)
{
    maccrt_ptable *pt = d->ptable;
    int kind = m->kind;
    int shared = (d->plugin->caps & MACCRT_CAP_SHARED_MEM) != 0;
    *took = MACCRT_TOOK_NONE;
    if (kind & MACC_MAP_DEVICEPTR)
        return m->base;
    /* A task on the host with an empty table: nothing to find, nothing to
     * make (the task path's common case, without the table's lock). */
    if (task && shared && !(kind & MACC_MAP_PRESENT) && atomic_load(&pt->entries) == 0)
        return m->base;

    if (m->bytes == 0 || (kind & MACC_MAP_ATTACH)) {
        /* Zero-length section or attach: translate the pointer when it points
         * into a mapped section, else pass it as it is. */
        const void *p = m->bytes ? m->start : m->base;
        pthread_mutex_lock(&pt->lock);
        maccrt_rnode *n = maccrt_rtree_find(&pt->tree, (uintptr_t)p);
        void *r = n ? data__translate((maccrt_mapping *)n, m->base) : m->base;
        pthread_mutex_unlock(&pt->lock);
        if (!n && task && !shared) {
            /* a pointer into a section another map of the task cached */
            void *c = maccrt_cache_translate(d, p, m->base);
            if (c)
                return c;
        }
        if (!n && (kind & MACC_MAP_PRESENT))
            data__not_present(d, m, loc);
        return r;
    }

    if (!shared && maccrt_managed_owns(m->start, m->bytes)) {
        /* Managed memory: present on every device at the same address. The
         * data clause is a hint: copy-in and update-to prefetch to d. */
        if (kind & MACC_MAP_TO) /* a data construct forces it; a task's map only once */
            maccrt_managed_prefetch(d, m->start, m->bytes, 0, !task);
        return m->base;
    }

    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int partial;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = data__lookup(pt, a, b, &partial);
    if (partial) {
        if (task && !(kind & MACC_MAP_PRESENT)) {
            if (shared) {
                pthread_mutex_unlock(&pt->lock);
                return m->base;
            }
            /* Only other tasks' temporary entries overlap: a private copy. */
            if (!data__any_pinned(pt, a, b)) {
                pthread_mutex_unlock(&pt->lock);
                return data__private(d, m, took, loc);
            }
        }
        maccrt_mapping copy = *e;
        pthread_mutex_unlock(&pt->lock);
        if (kind & MACC_MAP_PRESENT)
            data__not_present(d, m, loc);
        data__partial(d, m, &copy, loc);
    }
    if (e && e->perm == MACCRT_PERM_TO) {
        /* a declare target variable: always present, never counted */
        if ((kind & MACC_MAP_ALWAYS) && (kind & MACC_MAP_TO))
            data__h2d(d, e, a, m->bytes, m, loc);
        if ((kind & MACC_MAP_ALWAYS) && (kind & MACC_MAP_FROM))
            *took = MACCRT_TOOK_REF; /* a task's release copies back (no count to give back) */
        void *r = data__translate(e, m->base);
        pthread_mutex_unlock(&pt->lock);
        return r;
    }
    if (e && e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref &&
        (kind & (MACC_MAP_PRESENT | MACC_MAP_NOCREATE))) {
        /* a declare target link variable that is not mapped: absent */
        pthread_mutex_unlock(&pt->lock);
        if (kind & MACC_MAP_PRESENT)
            data__not_present(d, m, loc);
        return m->base;
    }
    if (e) {
        /* a link variable mapped afresh: its device copy is filled as a new entry's */
        int fresh = e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref;
        if (ref == MACCRT_REF_STRUCTURED)
            e->sref++;
        else
            e->dref++;
        if (!task && !shared)
            data__pin(pt, e);
        if ((fresh || (kind & MACC_MAP_ALWAYS)) && (kind & MACC_MAP_TO))
            data__h2d(d, e, a, m->bytes, m, loc);
        *took = MACCRT_TOOK_REF;
        void *r = data__translate(e, m->base);
        pthread_mutex_unlock(&pt->lock);
        return r;
    }
    if (kind & MACC_MAP_PRESENT) {
        pthread_mutex_unlock(&pt->lock);
        data__not_present(d, m, loc);
    }
    if ((kind & MACC_MAP_NOCREATE) || (task && shared)) {
        pthread_mutex_unlock(&pt->lock);
        return m->base;
    }
    void *dev = maccrt_device_alloc(d, m->start, m->bytes, m->name, &pt->lock, loc);
    e = maccrt_xcalloc(1, sizeof *e);
    e->node.start = a;
    e->node.end = b;
    e->dev_start = dev;
    e->name = m->name;
    if (ref == MACCRT_REF_STRUCTURED)
        e->sref = 1;
    else
        e->dref = 1;
    maccrt_rtree_insert(&pt->tree, &e->node);
    atomic_fetch_add(&pt->entries, 1);
    if (!task && !shared)
        data__pin(pt, e);
    if (kind & MACC_MAP_TO)
        data__h2d(d, e, a, m->bytes, m, loc);
    *took = MACCRT_TOOK_REF;
    void *r = data__translate(e, m->base);
    pthread_mutex_unlock(&pt->lock);
    return r;
}

void maccrt_map_release(maccrt_device *d, const MACC_Map *m, int ref, int del,
                        const MACC_SrcLoc *loc)
{
    maccrt_ptable *pt = d->ptable;
    int kind = m->kind;
    if ((kind & (MACC_MAP_DEVICEPTR | MACC_MAP_ATTACH)) || m->bytes == 0)
        return;
    if (!(d->plugin->caps & MACCRT_CAP_SHARED_MEM) && maccrt_managed_owns(m->start, m->bytes)) {
        /* managed: copy-out prefetches back to the host, the rest is free */
        if (kind & MACC_MAP_FROM)
            maccrt_managed_prefetch(d, m->start, m->bytes, 1, 1);
        return;
    }
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int partial;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = data__lookup(pt, a, b, &partial);
    if (!e || partial || (e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref)) {
        /* Not mapped (exit data of absent data is allowed): nothing to do. */
        pthread_mutex_unlock(&pt->lock);
        return;
    }
    if (e->perm == MACCRT_PERM_TO) {
        if ((kind & MACC_MAP_FROM) && (kind & MACC_MAP_ALWAYS))
            data__d2h(d, e, a, m->bytes, m, loc);
        pthread_mutex_unlock(&pt->lock);
        return;
    }
    if (ref == MACCRT_REF_STRUCTURED) {
        if (e->sref > 0)
            e->sref--;
    } else if (del) {
        e->dref = 0;
    } else if (e->dref > 0) {
        e->dref--;
    }
    if (e->sref == 0 && e->dref == 0 && !e->assoc) {
        if (kind & MACC_MAP_FROM)
            data__d2h(d, e, a, m->bytes, m, loc);
        data__unpin(pt, e);
        if (e->perm == MACCRT_PERM_NONE) { /* a link variable's copy stays where it is */
            maccrt_rtree_remove(&pt->tree, &e->node);
            atomic_fetch_sub(&pt->entries, 1);
            d->plugin->free(d, e->dev_start);
            free(e);
        }
    } else if ((kind & MACC_MAP_FROM) && (kind & MACC_MAP_ALWAYS)) {
        data__d2h(d, e, a, m->bytes, m, loc);
    }
    pthread_mutex_unlock(&pt->lock);
}

void maccrt_map_update(maccrt_device *d, const MACC_Map *m, const MACC_SrcLoc *loc)
{
    maccrt_ptable *pt = d->ptable;
    if (m->bytes == 0 || (m->kind & MACC_MAP_DEVICEPTR))
        return;
    if (!(d->plugin->caps & MACCRT_CAP_SHARED_MEM) && maccrt_managed_owns(m->start, m->bytes)) {
        maccrt_managed_prefetch(d, m->start, m->bytes, (m->kind & MACC_MAP_FROM) != 0, 1);
        return;
    }
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int partial;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = data__lookup(pt, a, b, &partial);
    if (e && e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref)
        e = NULL; /* a link variable that is not mapped */
    if (!e || partial) {
        /* OpenMP: an update of absent data does nothing; acc update without
         * if_present passes MACC_MAP_PRESENT to make it an error. */
        pthread_mutex_unlock(&pt->lock);
        if (m->kind & MACC_MAP_PRESENT)
            data__not_present(d, m, loc);
        return;
    }
    if (m->kind & MACC_MAP_TO)
        data__h2d(d, e, a, m->bytes, m, loc);
    if (m->kind & MACC_MAP_FROM)
        data__d2h(d, e, a, m->bytes, m, loc);
    pthread_mutex_unlock(&pt->lock);
}

int maccrt_map_lookup(maccrt_device *d, const MACC_Map *m)
{
    maccrt_ptable *pt = d->ptable;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int partial;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = data__lookup(pt, a, b, &partial);
    pthread_mutex_unlock(&pt->lock);
    return !e ? 0 : partial ? 2 : 1;
}

int maccrt_map_is_present(maccrt_device *d, const void *p, size_t bytes)
{
    maccrt_ptable *pt = d->ptable;
    if (!(d->plugin->caps & MACCRT_CAP_SHARED_MEM) && maccrt_managed_owns(p, bytes))
        return 1;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e;
    int partial = 0;
    if (bytes == 0) {
        e = (maccrt_mapping *)maccrt_rtree_find(&pt->tree, (uintptr_t)p);
    } else {
        MACC_Map m = {.start = (void *)p, .bytes = bytes};
        uintptr_t a, b;
        maccrt_section(&m, &a, &b);
        e = data__lookup(pt, a, b, &partial);
    }
    /* a declare target link variable is present only while mapped */
    int r = e && !partial && !(e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref);
    pthread_mutex_unlock(&pt->lock);
    return r;
}

void maccrt_map_counts(maccrt_device *d, const void *p, long *sref, long *dref)
{
    maccrt_ptable *pt = d->ptable;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = (maccrt_mapping *)maccrt_rtree_find(&pt->tree, (uintptr_t)p);
    *sref = e ? e->sref : -1;
    *dref = e ? e->dref : -1;
    pthread_mutex_unlock(&pt->lock);
}

int maccrt_ptable_add_var(maccrt_device *d, void *host, size_t bytes, void *dev, int perm,
                          const char *name)
{
    maccrt_ptable *pt = d->ptable;
    MACC_Map m = {.start = host, .bytes = bytes};
    uintptr_t a, b;
    maccrt_section(&m, &a, &b);
    int partial, r = 0;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = data__lookup(pt, a, b, &partial);
    if (e) {
        r = e->perm != MACCRT_PERM_NONE && e->node.start == a && e->node.end == b ? 1 : -1;
    } else {
        e = maccrt_xcalloc(1, sizeof *e);
        e->node.start = a;
        e->node.end = b;
        e->dev_start = dev;
        e->name = name;
        e->perm = perm;
        maccrt_rtree_insert(&pt->tree, &e->node);
        atomic_fetch_add(&pt->entries, 1);
    }
    pthread_mutex_unlock(&pt->lock);
    return r;
}

void *maccrt_map_device_ptr(maccrt_device *d, const void *p)
{
    maccrt_ptable *pt = d->ptable;
    if (!(d->plugin->caps & MACCRT_CAP_SHARED_MEM) && maccrt_managed_owns(p, 1))
        return (void *)p;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = (maccrt_mapping *)maccrt_rtree_find(&pt->tree, (uintptr_t)p);
    if (e && e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref)
        e = NULL; /* a declare target link variable that is not mapped */
    void *r = e ? data__translate(e, p) : NULL;
    pthread_mutex_unlock(&pt->lock);
    return r;
}

int maccrt_map_associate(maccrt_device *d, const void *host, void *dev, size_t bytes)
{
    maccrt_ptable *pt = d->ptable;
    if (!host || !dev || !bytes)
        return EINVAL;
    MACC_Map m = {.start = (void *)host, .bytes = bytes};
    uintptr_t a, b;
    maccrt_section(&m, &a, &b);
    int partial;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = data__lookup(pt, a, b, &partial);
    if (e) {
        /* the same association again is fine; anything else is not */
        int same = !partial && e->assoc && e->node.start == a && e->node.end == b &&
                   e->dev_start == dev;
        pthread_mutex_unlock(&pt->lock);
        return same ? 0 : EINVAL;
    }
    e = maccrt_xcalloc(1, sizeof *e);
    e->node.start = a;
    e->node.end = b;
    e->dev_start = dev;
    e->name = "(associated)";
    e->assoc = 1;
    maccrt_rtree_insert(&pt->tree, &e->node);
    atomic_fetch_add(&pt->entries, 1);
    if (!(d->plugin->caps & MACCRT_CAP_SHARED_MEM))
        data__pin(pt, e); /* tasks using it run on d (the affinity rule) */
    pthread_mutex_unlock(&pt->lock);
    return 0;
}

int maccrt_map_disassociate(maccrt_device *d, const void *host)
{
    maccrt_ptable *pt = d->ptable;
    pthread_mutex_lock(&pt->lock);
    maccrt_mapping *e = (maccrt_mapping *)maccrt_rtree_find(&pt->tree, (uintptr_t)host);
    if (!e || !e->assoc || e->node.start != (uintptr_t)host) {
        pthread_mutex_unlock(&pt->lock);
        return EINVAL;
    }
    maccrt_rtree_remove(&pt->tree, &e->node);
    atomic_fetch_sub(&pt->entries, 1);
    data__unpin(pt, e);
    free(e);
    pthread_mutex_unlock(&pt->lock);
    return 0;
}

void maccrt_alloc_note(maccrt_device *d, void *p, size_t bytes)
{
    maccrt_ptable *pt = d->ptable;
    maccrt_rnode *n = maccrt_xcalloc(1, sizeof *n);
    n->start = (uintptr_t)p;
    n->end = n->start + (bytes ? bytes : 1);
    if (n->end < n->start)
        n->end = UINTPTR_MAX;
    pthread_mutex_lock(&pt->pin_lock);
    /* a block the device handed out again after a free we never saw (the
     * program freed it some other way): the old record goes */
    maccrt_rnode *o;
    while ((o = maccrt_rtree_first_overlap(&pt->allocs, n->start, n->end)) != NULL) {
        maccrt_rtree_remove(&pt->allocs, o);
        free(o);
    }
    maccrt_rtree_insert(&pt->allocs, n);
    pthread_mutex_unlock(&pt->pin_lock);
}

int maccrt_alloc_forget(maccrt_device *d, void *p)
{
    maccrt_ptable *pt = d->ptable;
    pthread_mutex_lock(&pt->pin_lock);
    maccrt_rnode *n = maccrt_rtree_find(&pt->allocs, (uintptr_t)p);
    int found = n && n->start == (uintptr_t)p;
    if (found)
        maccrt_rtree_remove(&pt->allocs, n);
    pthread_mutex_unlock(&pt->pin_lock);
    if (found)
        free(n);
    return found;
}

int maccrt_alloc_owner(const void *p)
{
    maccrt_runtime *rt = &maccrt_rt;
    for (int di = 0; di < rt->ndevices; di++) {
        maccrt_ptable *pt = rt->devices[di]->ptable;
        if (!pt)
            continue;
        pthread_mutex_lock(&pt->pin_lock);
        int in = pt->allocs.count && maccrt_rtree_find(&pt->allocs, (uintptr_t)p);
        pthread_mutex_unlock(&pt->pin_lock);
        if (in)
            return di;
    }
    return -1;
}

maccrt_mask maccrt_data_affinity(const maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_mask aff = 0;
    if (t->nmaps == 0)
        return 0;
    /* a device pointer (is_device_ptr, deviceptr) into a block that
     * omp_target_alloc made on some device: the task runs there */
    for (int i = 0; i < t->nmaps; i++) {
        const MACC_Map *m = &t->maps[i];
        if (!(m->kind & MACC_MAP_DEVICEPTR))
            continue;
        int owner = maccrt_alloc_owner(m->base);
        if (owner >= 0)
            aff |= MACCRT_BIT(owner);
    }
    for (int di = 0; di < rt->ndevices; di++) {
        maccrt_device *d = rt->devices[di];
        if ((d->plugin->caps & MACCRT_CAP_SHARED_MEM) || !d->ptable)
            continue;
        maccrt_ptable *pt = d->ptable;
        pthread_mutex_lock(&pt->pin_lock);
        for (int i = 0; i < t->nmaps && pt->pins.count; i++) {
            const MACC_Map *m = &t->maps[i];
            if (m->kind & MACC_MAP_DEVICEPTR)
                continue;
            uintptr_t a, b;
            if (m->bytes == 0 || (m->kind & MACC_MAP_ATTACH)) {
                a = (uintptr_t)(m->bytes ? m->start : m->base);
                b = a + 1;
            } else {
                maccrt_section(m, &a, &b);
            }
            if (a < b && maccrt_rtree_first_overlap(&pt->pins, a, b)) {
                aff |= MACCRT_BIT(di);
                break;
            }
        }
        pthread_mutex_unlock(&pt->pin_lock);
    }
    return aff;
}

void maccrt_data_op(maccrt_device *d, int op, int nmaps, const MACC_Map *maps,
                    const MACC_SrcLoc *loc)
{
    maccrt_cache_flush(d);
    for (int i = 0; i < nmaps; i++) {
        const MACC_Map *m = &maps[i];
        int took;
        switch (op) {
        case MACCRT_OP_ENTER:
            maccrt_map_acquire(d, m, MACCRT_REF_DYNAMIC, 0, &took, loc);
            break;
        case MACCRT_OP_EXIT:
            maccrt_map_release(d, m, MACCRT_REF_DYNAMIC, (m->kind & MACC_MAP_DELETE) != 0, loc);
            break;
        case MACCRT_OP_UPDATE:
            maccrt_map_update(d, m, loc);
            break;
        default:
            break;
        }
    }
}

/* ---- ABI ------------------------------------------------------------------------------------ */

static void data__check(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int ndeps,
                        const MACC_Dep *deps)
{
    if (nmaps < 0 || ndeps < 0 || (nmaps && !maps) || (ndeps && !deps))
        maccrt_fatal(loc, "bad arguments for a data directive");
}

void MACC_data_begin(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device)
{
    maccrt_init();
    data__check(loc, nmaps, maps, 0, NULL);
    maccrt_cache_flush(NULL);
    maccrt_device *d = maccrt_data_device(device, loc);
    for (int i = 0; i < nmaps; i++) {
        int took;
        maccrt_map_acquire(d, &maps[i], MACCRT_REF_STRUCTURED, 0, &took, loc);
    }
}

void MACC_data_end(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device)
{
    maccrt_init();
    data__check(loc, nmaps, maps, 0, NULL);
    maccrt_cache_flush(NULL);
    maccrt_device *d = maccrt_data_device(device, loc);
    for (int i = nmaps - 1; i >= 0; i--)
        maccrt_map_release(d, &maps[i], MACCRT_REF_STRUCTURED, 0, loc);
}

static void data__op(const MACC_SrcLoc *loc, int op, int nmaps, const MACC_Map *maps, int device,
                     int ndeps, const MACC_Dep *deps, int flags)
{
    maccrt_init();
    data__check(loc, nmaps, maps, ndeps, deps);
    maccrt_device *d = maccrt_data_device(device, loc);
    if (ndeps > 0 || (flags & MACC_NOWAIT))
        maccrt_task_data_op(d, op, nmaps, maps, ndeps, deps, flags, loc);
    else
        maccrt_data_op(d, op, nmaps, maps, loc);
}

void MACC_data_enter(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                     int ndeps, const MACC_Dep *deps, int flags)
{
    data__op(loc, MACCRT_OP_ENTER, nmaps, maps, device, ndeps, deps, flags);
}

void MACC_data_exit(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                    int ndeps, const MACC_Dep *deps, int flags)
{
    data__op(loc, MACCRT_OP_EXIT, nmaps, maps, device, ndeps, deps, flags);
}

void MACC_data_update(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                      int ndeps, const MACC_Dep *deps, int flags)
{
    data__op(loc, MACCRT_OP_UPDATE, nmaps, maps, device, ndeps, deps, flags);
}

int MACC_is_present(const void *p, size_t bytes, int device)
{
    maccrt_init();
    maccrt_runtime *rt = &maccrt_rt;
    if (device >= rt->ndevices)
        return 0;
    if (device < 0 && device != MACC_DEVICE_DEFAULT && device != MACC_DEVICE_ANY &&
        device != MACC_DEVICE_HOST && device != MACC_DEVICE_NVIDIA)
        return 0;
    if (device == MACC_DEVICE_NVIDIA && rt->ngpus == 0)
        return 0;
    return maccrt_map_is_present(maccrt_data_device(device, NULL), p, bytes);
}

void *MACC_device_addr(const void *p, int device)
{
    maccrt_init();
    if (!p)
        return NULL;
    maccrt_device *d = maccrt_data_device(device, NULL);
    if (d->plugin->caps & MACCRT_CAP_SHARED_MEM)
        return (void *)p;
    void *r = maccrt_map_device_ptr(d, p);
    return r ? r : (void *)p;
}
