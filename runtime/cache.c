/* cache.c: the data directory: every device copy of every host section.
 *
 * Each device has one range tree of directory entries (maccrt_dentry): a
 * host section [start, end) and its device copy. The tree holds two kinds of
 * entries, told apart by `held`:
 *
 *   held     the present table of OpenMP / OpenACC: entries made by data
 *            constructs (data regions, enter data; OpenACC 2.7 / OpenMP 5
 *            structured and dynamic reference counts), declare target
 *            variables' permanent entries (perm) and omp_target_associate_ptr
 *            associations (assoc). On a device with its own memory (a GPU)
 *            the device copy is authoritative while the entry lives (as
 *            OpenMP says: the host copy changes only by `update from` and by
 *            the exit that copies back): such an entry is never merged,
 *            invalidated, written back or detached by task traffic or by a
 *            flush; tasks on that GPU whose maps lie inside it use it with no
 *            copy (the affinity rule sends them there), and their writes are
 *            recorded as its dirty ranges until an update or the exit copies
 *            them home or drops them. Entries made by data constructs are
 *            also `pinned` (the affinity rule). On the host (a shared-memory
 *            device) the tree holds only held entries, as bookkeeping:
 *            allocation and copies are identities.
 *   cached   a GPU's coherent copy of a section that tasks' own maps brought
 *            (the coherence directory): valid or not, with dirty ranges; its
 *            bytes follow the MSI rules below, and a flush drops it.
 *
 * A map that lies inside a held entry uses it; the variable's device address
 * is the entry's device start plus the variable's offset from the entry's
 * host start (a base pointer outside the section translates too). A data
 * construct's map that overlaps a held entry without lying inside it is
 * "partially present", an error as in libgomp and NVHPC; cached entries in
 * its way are written back and dropped, or taken over when one contains it.
 *
 * The coherence of cached entries. An entry is
 *   valid    its bytes hold the current value of the section (filled from the
 *            host or from another GPU's valid copy, or wholly written by a
 *            task on this device);
 *   dirty    a sorted list of disjoint byte ranges this device wrote and the
 *            host has not seen yet (MSI's Modified, per range);
 *   detached out of the tree (invalid); freed when no running task uses it
 *            and no copy reads it.
 * The current value of a byte is the dirty copy of the one device that holds
 * it dirty in a cached entry, else the host's; a valid cached entry's clean
 * bytes equal that value. The rules (S is a task map's section [a, b) on d):
 *   - before a GPU task reads S (to): d's entry containing S is used, or made
 *     (exactly S) and filled: from another GPU's valid cached entry that
 *     contains it (device to device, never through the host), else from the
 *     host after the other devices wrote back their dirty bytes in S;
 *   - after a GPU task writes S (from): other devices' cached entries
 *     overlapping S write back their dirty bytes outside S and are detached;
 *     d's entry records S as dirty (no copy) unless it was detached
 *     meanwhile, in which case S is written through to the host;
 *   - host tasks read and write the host copy: before, dirty bytes in S come
 *     back from every GPU; after a write, cached entries overlapping S are
 *     detached as above;
 *   - a section that overlaps cached entries of d without lying in one merges
 *     them into one entry (their union) when no running task uses them;
 *     otherwise the task gets an entry of its own that is detached from the
 *     start (host-current in, written through out);
 *   - synchronisation points (taskwait, the end of an undeferred region, data
 *     directives, program exit: maccrt_cache_flush) write every dirty range
 *     of cached entries back and detach them; held entries stay.
 *
 * Concurrency. One lock (cache__lock with every device's dlock: "the whole
 * lock", below; a GPU task's maps that touch only its device's entries take
 * that device's dlock alone, and those that change the directory take
 * cache__lock with the dlocks of the devices they reach: "scoped holds")
 * guards the trees and the entries' fields, and
 * is never held across a copy or an allocation. An operation
 * plans its copies under the lock, claims every entry it copies to or from
 * (all at once, or none: it waits on cache__cv and plans again, so no thread
 * waits while holding a claim it could be waited for, except a fill of a new
 * entry, which nobody else's plan contains), drops the lock, copies, takes
 * the lock back to apply the plan's effects (dirty ranges removed only once
 * their bytes are home, entries detached) and gives the claims back. A claim
 * is exclusive (the entry is filled, merged away, invalidated, flushed,
 * updated or copied back at its exit: tasks and data constructs wanting it
 * wait, the in-flight state), a write-back (its dirty bytes are on their way
 * home: one write-back at a time; its own tasks keep using it) or shared (the
 * source of a device-to-device copy). Copies of unrelated sections and of
 * different GPUs thus run at once, each on the stream of the thread that
 * makes it. maccrt_rt.lock may be held when cache__lock is taken (the
 * scheduler's residency estimate and affinity rule), never taken under it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

typedef struct cache__ival {
    uintptr_t a, b;
} cache__ival;

typedef struct maccrt_dentry {
    maccrt_rnode node; /* first member: host range [start, end) */
    maccrt_device *dev;
    void *dev_start; /* NULL until its allocation is made (the entry is claimed meanwhile) */
    const char *name;
    /* the present table's side (held entries) */
    int held;   /* a present-table entry: never dropped by task traffic or a flush */
    long sref;  /* structured reference count */
    long dref;  /* dynamic reference count */
    int perm;   /* MACCRT_PERM_*: a declare target variable's device copy (never freed) */
    int assoc;  /* omp_target_associate_ptr: the program's memory, infinite count */
    int pinned; /* made present by a data construct on a GPU: the affinity rule */
    int hpin;   /* its host range was given to plugin->host_pin */
    /* the coherence side */
    int users;    /* running tasks using it */
    int valid;    /* holds the section's current value (with its dirty ranges) */
    int detached; /* out of the tree; freed when users, excl and shared reach 0 */
    int excl;     /* claimed exclusively: a copy into it or its removal is in flight */
    int wb;       /* claimed for a write-back of its dirty bytes (one at a time) */
    int shared;   /* claims as the source of a device-to-device copy in flight */
    int filling;  /* its fill from the host is in flight (claimed exclusively meanwhile) */
    int ndcounted; /* counted in cache__ndirty */
    cache__ival *dirty;
    int ndirty, capdirty;
    struct maccrt_dentry *next_free; /* on its thread's list of entries to free (cache__free) */
    struct cache__sx *sx;            /* its section's record in the index, or NULL */
    /* An asynchronous fill's fence (plugin->copy_h2d_start) while its bytes
     * may still be on their way, else NULL: set by the filler before the
     * entry is valid, read by its users without the lock ("Asynchronous
     * fills" below), cleared by a release that finds it done. */
    void *_Atomic fence;
} maccrt_dentry;
/* (cache__entry_alloc: what a look-up reads fits the first cache line) */
_Static_assert(offsetof(maccrt_dentry, held) <= 64, "a directory entry's first line");

static pthread_mutex_t cache__lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP; /* (spins briefly: short sections, many helpers) */
static pthread_cond_t cache__cv = PTHREAD_COND_INITIALIZER; /* a claim was given back */

/* ---- the section index ----------------------------------------------------------------------
 * Every entry in a device's tree, by section: one record per distinct
 * [a, b), listing the entries (one per device at most) that have exactly
 * that range. While no entry partly overlaps another device's (tiled
 * programs: each tile mapped whole wherever it goes), one look-up here says
 * which devices hold [a, b) (cache__ovl_of), where a fill's search for a
 * source, an invalidation, a write-back and the residency term otherwise
 * descend every device's tree, mostly to find nothing: with four fake GPUs
 * about 60 tree look-ups per task of the dispatch proxy, with eight the
 * proxy ran 12-42% more tasks per second with the index (bench/RESULTS.md,
 * seventeenth session). The first entry that partly overlaps a record turns
 * the index off for good (cache__sx_off) and look-ups walk the trees as
 * before; records already made are still taken apart as their entries
 * leave. Under cache__lock. */
typedef struct cache__sx {
    maccrt_rnode node;   /* the section */
    int n, cap;          /* its entries; slots */
    int lk;              /* (cache__sx_lock) guards on[] for cache__release_fast */
    maccrt_dentry *on[]; /* its entry on device number i, or NULL (i < cap) */
} cache__sx;
static maccrt_rtree cache__sxtree;
static int cache__sx_off;
static int cache__sx_unused; /* (tests: look-ups walk the trees) */

static void cache__need(const maccrt_device *x);
static void cache__whole(void);

/* Entries and index records are kept for reuse (never given back to the C
 * library while the process runs; at most as many as were ever in use at
 * once), on two stacks: a synchronisation point freed every cached entry
 * and its record with free(), blocks that the GPUs' helpers had allocated,
 * each free a few misses on another thread's arena (one fake GPU's 768
 * tiles: 230 us of bench/dispatch's taskwait, a third of the wait's end).
 * Pushes come from any thread, with or without the lock; pops one thread
 * at a time (cache__poplk), so no popped block is pushed back between a
 * pop's read and its exchange.
 * With AddressSanitizer they go back to the C library (a use after the
 * end stays a use after free). */
#if defined(__SANITIZE_ADDRESS__)
#define CACHE__POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE__POOL 0
#endif
#endif
#ifndef CACHE__POOL
#define CACHE__POOL 1
#endif
static void *cache__epool; /* entries, linked through next_free */
static void *cache__xpool; /* records, linked through node.left */

/* Pushes x on the stack at *top, linked through the pointer at x + link
 * (any thread). */
static void cache__pool_push(void **top, void *x, size_t link)
{
    void *t = __atomic_load_n(top, __ATOMIC_RELAXED);
    do
        memcpy((char *)x + link, &t, sizeof t);
    while (!__atomic_compare_exchange_n(top, &t, x, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* A spin lock held for a few loads and stores: cache__pool_pop's, the
 * index's tree's (cache__sxlk), a record's (cache__sx_lock). Its holder
 * takes no other lock but a later one of these. */
static void cache__spin_take(int *lk)
{
    while (__atomic_exchange_n(lk, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(lk, __ATOMIC_RELAXED))
            maccrt_pause();
}

static void cache__spin_drop(int *lk)
{
    __atomic_store_n(lk, 0, __ATOMIC_RELEASE);
}

/* Pops the stack at *top, or NULL when it is empty: one popper at a time
 * (cache__poplk: holders of cache__lock and first uses beside it), so x's
 * link is read before anyone can push x again. */
static int cache__poplk;

static void *cache__pool_pop(void **top, size_t link)
{
    cache__spin_take(&cache__poplk);
    void *x = __atomic_load_n(top, __ATOMIC_ACQUIRE), *next;
    while (x) {
        memcpy(&next, (char *)x + link, sizeof next);
        if (__atomic_compare_exchange_n(top, &x, next, 1, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            break;
    }
    cache__spin_drop(&cache__poplk);
    return x;
}

static void cache__entry_put(maccrt_dentry *e)
{
    if (CACHE__POOL)
        cache__pool_push(&cache__epool, e, offsetof(maccrt_dentry, next_free));
    else
        free(e);
}

static void cache__sx_put(cache__sx *x)
{
    if (CACHE__POOL)
        cache__pool_push(&cache__xpool, x, offsetof(cache__sx, node.left));
    else
        free(x);
}

/* A zeroed record with room for cap devices (any thread: pops are one at a
 * time; not under cache__sxlk, which comes after cache__poplk). */
static cache__sx *cache__sx_get(int cap)
{
    cache__sx *x = cache__pool_pop(&cache__xpool, offsetof(cache__sx, node.left));
    if (x && x->cap < cap) {
        free(x); /* (a table that grew: not in this runtime, where it is set at the start) */
        x = NULL;
    }
    size_t sz = sizeof *x + (size_t)(x ? x->cap : cap) * sizeof x->on[0];
    if (!x)
        return maccrt_xcalloc(1, sz);
    memset(x, 0, sz); /* (cap included: set by the caller) */
    return x;
}

/* A record's own lock, held for a few loads or stores: its entries change
 * under cache__lock with only their own device's part (a scoped hold), while
 * a GPU's fast path reads the record of the entry it releases under that
 * GPU's part alone (cache__release_fast). */
static void cache__sx_lock(cache__sx *x)
{
    cache__spin_take(&x->lk);
}

static void cache__sx_unlock(cache__sx *x)
{
    cache__spin_drop(&x->lk);
}

/* A new record of [a, b), in no tree yet (taken without cache__sxlk). */
static cache__sx *cache__sx_fresh(uintptr_t a, uintptr_t b)
{
    int cap = maccrt_rt.ndevices;
    cache__sx *x = cache__sx_get(cap);
    x->node.start = a;
    x->node.end = b;
    x->cap = cap;
    return x;
}

/* The index's tree changes under cache__lock and cache__sxlk: first uses
 * beside cache__lock (cache__first_part) look records up under cache__sxlk
 * alone. */
static int cache__sxlk;

/* The record of exactly [a, b), or NULL; *other when a record of another
 * shape overlaps it (cache__sxlk or cache__lock held). */
static cache__sx *cache__sx_exact(uintptr_t a, uintptr_t b, int *other)
{
    maccrt_rnode *r = maccrt_rtree_first_overlap(&cache__sxtree, a, b);
    *other = r && (r->start != a || r->end != b);
    return r && !*other ? (cache__sx *)r : NULL;
}

/* Whether the index answers for every section (read without cache__lock:
 * by the paths beside it, cache__first_part and cache__release_fast). */
static int cache__index_serves(void)
{
    return !__atomic_load_n(&cache__sx_off, __ATOMIC_RELAXED) && !__atomic_load_n(&cache__sx_unused, __ATOMIC_RELAXED);
}

/* e entered its device's tree: into its section's record, made when there
 * is none. The look-up and the insertion under cache__sxlk at once (a
 * section's first use anywhere makes its record beside cache__lock too:
 * cache__first_part), the new record taken from the pool without it. */
static void cache__sx_add(maccrt_dentry *e)
{
    e->sx = NULL;
    if (cache__sx_off)
        return;
    uintptr_t a = e->node.start, b = e->node.end;
    int num = e->dev->num, cap = maccrt_rt.ndevices;
    int other, bad;
    cache__sx *x, *fresh = NULL;
    for (;;) {
        cache__spin_take(&cache__sxlk);
        x = cache__sx_exact(a, b, &other);
        bad = other || num < 0 || num >= (x ? x->cap : cap) || (x && x->on[num]);
        if (bad || x || fresh)
            break;
        cache__spin_drop(&cache__sxlk);
        fresh = cache__sx_fresh(a, b);
    }
    if (!bad) {
        if (!x) {
            maccrt_rtree_insert(&cache__sxtree, &fresh->node);
            x = fresh;
            fresh = NULL;
        }
        cache__sx_lock(x);
        x->on[num] = e;
        x->n++;
        cache__sx_unlock(x);
        e->sx = x;
    }
    cache__spin_drop(&cache__sxlk);
    if (fresh)
        cache__sx_put(fresh);
    if (bad) {
        /* sections of different shapes (or a device the table does not
         * number): the trees from now on (read by the fast paths under
         * their own part: changed with every part held) */
        cache__whole();
        __atomic_store_n(&cache__sx_off, 1, __ATOMIC_RELAXED); /* (read by cache__first_part) */
    }
}

/* e left its device's tree. */
static void cache__sx_del(maccrt_dentry *e)
{
    cache__sx *x = e->sx;
    if (!x)
        return;
    cache__sx_lock(x);
    x->on[e->dev->num] = NULL;
    int left = --x->n;
    cache__sx_unlock(x);
    e->sx = NULL;
    if (!left) { /* (no fast path reads it: none of its entries is left) */
        /* unless a first use beside cache__lock filled a slot meanwhile
         * (it does under cache__sxlk) */
        cache__spin_take(&cache__sxlk);
        cache__sx_lock(x);
        left = x->n;
        cache__sx_unlock(x);
        if (!left)
            maccrt_rtree_remove(&cache__sxtree, &x->node);
        cache__spin_drop(&cache__sxlk);
        if (!left)
            cache__sx_put(x);
    }
}

/* Every node of tree t, in address order, into *buf (grown to *cap as
 * needed); returns how many. */
static size_t cache__collect(const maccrt_rtree *t, maccrt_rnode ***buf, size_t *cap)
{
    if (*cap < t->count + 1) {
        *cap = t->count + 1;
        *buf = maccrt_xrealloc(*buf, *cap * sizeof **buf);
    }
    return maccrt_rtree_collect(t, *buf);
}

/* e into / out of its device's tree, and the index with it. */
static void cache__tree_add(maccrt_dentry *e)
{
    cache__need(e->dev);
    maccrt_rtree_insert(&e->dev->dtree, &e->node);
    cache__sx_add(e);
}

static void cache__tree_del(maccrt_dentry *e)
{
    cache__need(e->dev);
    maccrt_rtree_remove(&e->dev->dtree, &e->node);
    cache__sx_del(e);
}

/* The device a trace slice of the calling thread belongs to: the task it runs. */
static const maccrt_device *cache__trace_dev(void)
{
    maccrt_task *t = maccrt_thread_self()->current;
    return t ? t->dev : NULL;
}

static __thread double cache__held_at;     /* (MACC_TRACE) when this thread took the lock */
static __thread const char *cache__held_by; /* and in which function */

/* The directory lock: cache__lock and every device's own dlock, taken in
 * that order (cache__lock, then devices[0], devices[1], ...), so a thread
 * that holds it excludes every other user of the directory. A GPU task's
 * maps whose effects stay on its own device (cache__acquire_fast,
 * cache__release_fast: a tile already valid there, read or written, that no
 * other device holds) take that device's dlock alone, and two GPUs' helpers
 * no longer wait for each other there (matmul on two H200s: 1.1 of each
 * GPU's 8 helpers waiting for the one lock at once, 0.08 with one GPU).
 * Fields such a thread writes (users, dirty, valid, ndcounted) are read by
 * others only under the whole lock; everything else (trees, the index,
 * claims, held, detached) changes only under the whole lock, so one device's
 * dlock is enough to read it, except what the first uses and writes beside
 * cache__lock change (cache__first_part, cache__make_stale: a device's
 * tree and entries under that device's part, a record's slots under the
 * record's lock, the index's tree under cache__sxlk too). A thread holding
 * dlocks without cache__lock waits for nothing: it holds one, or tried the
 * others. MACC_DIR_DEVICE_LOCKS=0: every map takes the whole lock.
 *
 * Scoped holds. A GPU task's maps on d that change the directory (a first use
 * of a section there, a write making other copies stale) take cache__lock
 * and d's part only (cache__scope, cache__parts_first), and another device's
 * part when their work reaches its entries or tree (cache__need: the
 * index's record of the section, a plan's entries, a tree's change): with
 * the global part held a thread may wait for any part in any order, as
 * every thread holding a part without it holds that one alone and waits for
 * nothing (or only tries the rest). The index's tree changes only under
 * cache__lock, which no single-part path reads; a record's slots change
 * under the record's own lock too (cache__sx_lock), as cache__release_fast
 * reads the record of the entry it releases. While the index is off (the
 * trees walked instead) or with MACC_DIR_SCOPED=0 every take is whole, and
 * cache__whole makes a scoped hold whole before what it cannot scope (the
 * index turned off). */
static maccrt_mask cache__parts_held; /* devices whose dlock the holder of cache__lock holds (under cache__lock) */
/* this thread holds cache__lock scoped: the parts it does not hold yet are
 * taken when its work reaches their devices (cache__need; below) */
static __thread int cache__scoped;

static maccrt_mask cache__all_parts(void)
{
    int n = maccrt_rt.ndevices;
    return n >= 64 ? ~(maccrt_mask)0 : MACCRT_BIT(n) - 1;
}

/* Takes the parts of `want` not held yet, in device order (cache__lock held:
 * every other thread holding a part holds that one alone and waits for
 * nothing while it does, or only tries the others, so no order among the
 * parts is needed for a holder of cache__lock). */
static void cache__parts_add(maccrt_mask want)
{
    want &= ~cache__parts_held;
    while (want) {
        int i = __builtin_ctzll(want);
        want &= want - 1;
        maccrt_lock_spin(&maccrt_rt.devices[i]->dlock);
        cache__parts_held |= MACCRT_BIT(i);
    }
}

static void cache__devs_take(void)
{
    cache__parts_add(cache__all_parts());
    cache__scoped = 0;
}

/* Unlocks the parts of devices[0..n-1], last first. */
static void cache__parts_drop(int n)
{
    while (n-- > 0)
        pthread_mutex_unlock(&maccrt_rt.devices[n]->dlock);
}

static void cache__devs_drop(void)
{
    maccrt_mask m = cache__parts_held;
    while (m) {
        int i = 63 - __builtin_clzll(m);
        m &= ~MACCRT_BIT(i);
        pthread_mutex_unlock(&maccrt_rt.devices[i]->dlock);
    }
    cache__parts_held = 0;
    cache__scoped = 0;
}

/* The holder of cache__lock is to read or change device x's entries or tree:
 * x's part, when its hold is scoped and does not have it yet (a device
 * outside the runtime's table has no part: cache__lock guards it). */
static void cache__need(const maccrt_device *x)
{
    if (cache__scoped && x && x->num >= 0 && x->num < maccrt_rt.ndevices && maccrt_rt.devices[x->num] == x)
        cache__parts_add(MACCRT_BIT(x->num));
}

/* The holder of cache__lock: every part (a scoped hold made whole). */
static void cache__whole(void)
{
    if (cache__scoped)
        cache__devs_take();
}

/* This thread's takes are scoped to this device (cache__parts_first): set
 * while a GPU task's maps hold the lock (cache__lock_take_scoped). */
static __thread maccrt_device *cache__scope;

/* The parts a take starts with: every one, or with a scope (and the index
 * on), the scope device's alone (cache__lock held). */
static void cache__parts_first(void)
{
    maccrt_device *d = cache__scope;
    if (d && !cache__sx_off && !cache__sx_unused) {
        cache__parts_add(MACCRT_BIT(d->num));
        cache__scoped = 1;
    } else {
        cache__devs_take();
    }
}

/* The whole lock, taken by spinning a little, then yielding the core between
 * tries, then sleeping (maccrt_lock_spin): holds are a few microseconds, and
 * a sleeping waiter's wake-up (tens of microseconds on a loaded host) was
 * what helpers waited for, one hand-over after another (two H200s, matmul:
 * held 19 ms of an 83 ms run, waited for 1.5 s in all). With MACC_TRACE, a
 * wait for it longer than 2 us is a "wait:lock" slice of the task the
 * thread runs. */
static void cache__lock_take_(const char *fn)
{
    if (!maccrt_trace_on()) {
        maccrt_lock_spin(&cache__lock);
        cache__parts_first();
        return;
    }
    double t0 = maccrt_now();
    maccrt_lock_spin(&cache__lock);
    cache__parts_first();
    double t1 = maccrt_now();
    if (t1 - t0 > 2e-6)
        maccrt_trace_event(MACCRT_TRACE_WAIT_LOCK, cache__trace_dev(), "directory", t0, t1, 0);
    cache__held_at = t1;
    cache__held_by = fn;
}
#define cache__lock_take() cache__lock_take_(__func__)

/* Every device's part of the lock when each is free now (at its first try),
 * else -1 and nothing held: enough to read the whole directory (what changes
 * under the whole lock cannot change, nor what a device's own maps change
 * under its part) but not to change it. The residency term reads so from
 * under the runtime lock: with the global part too, a try failed whenever a
 * thread taking the whole lock held it while it waited for a part (two fake
 * GPUs: 29% of tries failed, 15% with the one lock before the parts). */
static int cache__parts_try(void)
{
    int n = maccrt_rt.ndevices;
    for (int i = 0; i < n; i++)
        if (maccrt_lock_try(&maccrt_rt.devices[i]->dlock) != 0) {
            cache__parts_drop(i);
            return -1;
        }
    return 0;
}

/* (MACC_TRACE) The calling thread's hold of cache__lock ends at t1: a
 * "hold:lock" slice, named after the function that took it, when longer
 * than 2 us. */
static void cache__hold_end(double t1)
{
    if (cache__held_at > 0.0 && t1 - cache__held_at > 2e-6)
        maccrt_trace_event(MACCRT_TRACE_HOLD_LOCK, cache__trace_dev(), cache__held_by, cache__held_at, t1, 0);
    cache__held_at = 0.0;
}

static void cache__free_pending(void);
static __thread maccrt_dentry *cache__tofree; /* entries this thread freed under cache__lock */

static void cache__lock_drop(void)
{
    if (maccrt_trace_on())
        cache__hold_end(maccrt_now());
    cache__devs_drop();
    pthread_mutex_unlock(&cache__lock);
    if (cache__tofree)
        cache__free_pending();
}

/* Whether d's own dlock may serve alone (its maps' fast paths): a device of
 * the runtime's table (those the whole lock takes) with its own memory. */
static int cache__dev_lockable(const maccrt_device *d)
{
    static int on = -1;
    return d->num >= 0 && d->num < maccrt_rt.ndevices && maccrt_rt.devices[d->num] == d &&
           !(d->plugin->caps & MACCRT_CAP_SHARED_MEM) && maccrt_env_flag(&on, "MACC_DIR_DEVICE_LOCKS", 1);
}

/* The scope of a GPU task's maps on d (cache__scope): d when its part may
 * serve alone, MACC_DIR_SCOPED (default on) not 0. */
static maccrt_device *cache__scope_of(maccrt_device *d)
{
    static int on = -1;
    return cache__dev_lockable(d) && maccrt_env_flag(&on, "MACC_DIR_SCOPED", 1) ? d : NULL;
}

/* cache__lock for a GPU task's maps on d, its takes scoped to d while held
 * (scoped holds), and given back with the scope. */
#define cache__lock_take_scoped(d) (cache__scope = cache__scope_of(d), cache__lock_take_(__func__))
#define cache__lock_drop_scoped() (cache__lock_drop(), cache__scope = NULL)

/* d's dlock alone (a "wait:lock" slice named "directory part" when waited for
 * longer than 2 us, as the whole lock's). */
static void cache__dev_take(maccrt_device *d)
{
    if (!maccrt_trace_on()) {
        maccrt_lock_spin(&d->dlock);
        return;
    }
    if (maccrt_lock_try(&d->dlock) == 0)
        return;
    double t0 = maccrt_now();
    maccrt_lock_spin(&d->dlock);
    double t1 = maccrt_now();
    if (t1 - t0 > 2e-6)
        maccrt_trace_event(MACCRT_TRACE_WAIT_LOCK, cache__trace_dev(), "directory part", t0, t1, 0);
}

static void cache__dev_drop(maccrt_device *d)
{
    pthread_mutex_unlock(&d->dlock);
}

/* Waits for one entry's claims, keyed by its address: a thread waiting for
 * a tile being filled is woken when that entry's claim is given back, not
 * at every claim given back anywhere (with 40 helpers of two GPUs, each
 * such broadcast woke all the waiters, and they took the lock one after the
 * other only to wait again). cache__cv is for the other waits. */
#define CACHE__NKEYS 64
static pthread_cond_t cache__kcv[CACHE__NKEYS] = {[0 ... CACHE__NKEYS - 1] = PTHREAD_COND_INITIALIZER};

static unsigned cache__keyof(const maccrt_dentry *e)
{
    uintptr_t x = (uintptr_t)e;
    x ^= x >> 9;
    x *= (uintptr_t)0x9e3779b97f4a7c15ull;
    return (unsigned)((x >> 40) % CACHE__NKEYS);
}

/* Threads waiting on each key, and on cache__cv (the last slot), counted
 * before they let their parts go: a claim given back under a device's part
 * alone (cache__publish_part) wakes them only when some may wait. */
static atomic_int cache__nsleep[CACHE__NKEYS + 1];

/* MACC_DIR_FUTEX=1 (experimental, off until measured on two GPUs): waits
 * for claims on words, not on condition variables of cache__lock. Each key
 * (and cache__cv's slot) has a generation word, bumped at every wake-up of
 * it. A waiter reads its key's word under the part that showed it the claim
 * (with cache__nsleep's count, so a thread giving a claim back under a part
 * alone sees it counted), lets the lock go, spins MACC_DIR_WAIT_SPIN_US
 * (default 50) for the word to change, then sleeps on it (a futex), and
 * takes the lock again as any thread does (maccrt_lock_spin). A wake-up
 * bumps the words and wakes their sleepers without cache__lock: a fill
 * published under its device's part no longer takes the whole lock only to
 * wake its waiters (cache__wake_key), and a waiter no longer takes it back
 * inside pthread_cond_wait, asleep behind every spinning thread. Why: at the
 * start of unpinned matmul 16 256 on two H200s the helpers waited 140 us a
 * wait for tiles another helper filled (60 on one GPU) while 2.2-2.4 of them
 * waited for that lock on average (bench/RESULTS.md, thirty-fifth session). */
static atomic_uint cache__kgen[CACHE__NKEYS + 1];

static int cache__futex_on(void)
{
#if defined(__linux__)
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_DIR_FUTEX", 0);
#else
    return 0;
#endif
}

static long cache__wait_spin_ns(void)
{
    static long ns = -1;
    long v = __atomic_load_n(&ns, __ATOMIC_RELAXED);
    return v >= 0 ? v : maccrt_env_memo(&ns, getenv("MACC_DIR_WAIT_SPIN_US"), 50, 0, 100000, 1000);
}

/* Key k's word changed from g (spun for, then slept on). */
static void cache__word_wait(unsigned k, unsigned g)
{
    atomic_uint *w = &cache__kgen[k];
    long spin = cache__wait_spin_ns();
    if (spin > 0) {
        double end = maccrt_now() + (double)spin * 1e-9;
        for (unsigned i = 1; atomic_load(w) == g; i++) {
            if ((i & 63) == 0 && maccrt_now() > end)
                break;
            maccrt_pause();
        }
    }
#if defined(__linux__)
    while (atomic_load(w) == g)
        (void)syscall(SYS_futex, (unsigned *)w, FUTEX_WAIT_PRIVATE, g, NULL, NULL, 0);
#endif
}

/* Key k's word bumped, its sleepers woken (no lock needed). */
static void cache__word_wake(unsigned k)
{
    atomic_fetch_add(&cache__kgen[k], 1);
#if defined(__linux__)
    (void)syscall(SYS_futex, (unsigned *)&cache__kgen[k], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#endif
}

/* Wakes key k's waiters (k == CACHE__NKEYS: cache__cv's), cache__lock held
 * (or, with MACC_DIR_FUTEX=1, not needed). */
static void cache__signal(unsigned k)
{
    if (cache__futex_on()) {
        if (atomic_load(&cache__nsleep[k]) > 0)
            cache__word_wake(k);
        return;
    }
    pthread_cond_broadcast(k < CACHE__NKEYS ? &cache__kcv[k] : &cache__cv);
}

/* A wait for a claim to be given back ("wait:data" with MACC_TRACE): on e's
 * key, or on cache__cv when e is NULL (what is waited for is not one entry). */
static void cache__wait_on(const maccrt_dentry *e)
{
    double t0 = maccrt_trace_on() ? maccrt_now() : 0.0;
    if (t0 > 0.0)
        cache__hold_end(t0);
    /* (the devices' dlocks are not held while waiting: a claim is given back
     * under cache__lock, which this thread keeps out until the wait has
     * begun, or under a device's part alone by a thread that then takes
     * cache__lock to wake the counted waiters: cache__publish_part) */
    unsigned k = e ? cache__keyof(e) : CACHE__NKEYS;
    atomic_int *ns = &cache__nsleep[k];
    atomic_fetch_add(ns, 1); /* (before the parts go: see cache__publish_part) */
    unsigned g = atomic_load(&cache__kgen[k]); /* (MACC_DIR_FUTEX: read under the parts too) */
    cache__devs_drop();
    if (cache__futex_on()) {
        pthread_mutex_unlock(&cache__lock);
        cache__word_wait(k, g);
        maccrt_lock_spin(&cache__lock);
    } else {
        pthread_cond_wait(k < CACHE__NKEYS ? &cache__kcv[k] : &cache__cv, &cache__lock);
    }
    atomic_fetch_sub(ns, 1);
    cache__parts_first();
    if (t0 > 0.0) {
        cache__held_at = maccrt_now();
        maccrt_trace_event(MACCRT_TRACE_WAIT_DATA, cache__trace_dev(), "directory", t0, cache__held_at, 0);
    }
}

static void cache__cv_wait(void)
{
    cache__wait_on(NULL);
}

/* A claim of an entry of key k was given back (cache__lock held): the
 * key's waiters, and every waiter of cache__cv. */
static void cache__wake_k(unsigned k)
{
    cache__signal(k);
    cache__signal(CACHE__NKEYS);
}

static void cache__wake(const maccrt_dentry *e)
{
    cache__wake_k(cache__keyof(e));
}

/* Whether a thread may wait for a claim on key k's entries (read under the
 * part of the device whose claim was just given back: cache__wait_on counts
 * its waiters before they let their parts go). */
static int cache__may_wait(unsigned k)
{
    return atomic_load(&cache__nsleep[k]) + atomic_load(&cache__nsleep[CACHE__NKEYS]) > 0;
}

/* A claim of an entry of key k was given back under a device's part alone,
 * now dropped: cache__lock taken only to wake the waiters (after the part:
 * the lock order), so none is between its look and its wait; with
 * MACC_DIR_FUTEX=1 their words are bumped without it. */
static void cache__wake_key(unsigned k)
{
    int lock = !cache__futex_on();
    if (lock)
        maccrt_lock_spin(&cache__lock);
    cache__wake_k(k);
    if (lock)
        pthread_mutex_unlock(&cache__lock);
}

static atomic_long cache__ncached; /* cached (not held) entries in trees, all devices */
static atomic_long cache__ndirty;  /* cached entries with dirty ranges, all devices */
static atomic_long cache__npinned; /* pinned entries, all devices (the affinity rule's fast path) */
static atomic_long cache__nearly;  /* early write-backs made (maccrt_cache_write_early) */

static int cache__has_memory(const maccrt_device *d)
{
    return d && !(d->plugin->caps & MACCRT_CAP_SHARED_MEM);
}

/* Is e present in OpenMP's sense (a declare target link variable only while mapped)? */
static int cache__present(const maccrt_dentry *e)
{
    return e->held && (e->assoc || e->perm == MACCRT_PERM_TO || e->sref > 0 || e->dref > 0);
}

/* ---- dirty ranges ------------------------------------------------------------------------ */

static void cache__dirty_add(maccrt_dentry *e, uintptr_t a, uintptr_t b)
{
    if (!e->held && !e->ndcounted) {
        e->ndcounted = 1;
        atomic_fetch_add(&cache__ndirty, 1);
    }
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
static void cache__dirty_drop(maccrt_dentry *e, uintptr_t a, uintptr_t b)
{
    if (a <= e->node.start && e->node.end <= b)
        e->ndirty = 0; /* (all of it: nothing to cut) */
    if (e->ndirty > 0 && a < b) {
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
    }
    if (e->ndirty == 0 && e->ndcounted) {
        e->ndcounted = 0;
        atomic_fetch_sub(&cache__ndirty, 1);
    }
}

/* Dirty bytes of e in [a, b). */
static size_t cache__dirty_bytes(const maccrt_dentry *e, uintptr_t a, uintptr_t b)
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

/* An entry no one can reach any more (out of its tree, unused, unclaimed;
 * cache__lock held) is freed: its count at once, its memory once the thread
 * drops the lock (cache__free_pending). The device's free and the host
 * range's unregistration are driver calls, on another GPU's data stream when
 * a task's write made the other GPU's copy stale: under the lock they held
 * every helper of every GPU (a matmul task's release held it 17 us on
 * average with two devices, 3 with one). */
static void cache__free(maccrt_dentry *e)
{
    if (e->ndcounted)
        atomic_fetch_sub(&cache__ndirty, 1);
    e->ndcounted = 0;
    e->next_free = cache__tofree;
    cache__tofree = e;
}

static void cache__free_pending(void)
{
    while (cache__tofree) {
        maccrt_dentry *e = cache__tofree;
        cache__tofree = e->next_free;
        if (e->hpin && e->dev->plugin->host_unpin)
            e->dev->plugin->host_unpin(e->dev, (void *)e->node.start, e->node.end - e->node.start);
        /* a declare target variable's copy and an association's memory are not the runtime's */
        if (e->dev_start && !e->perm && !e->assoc && cache__has_memory(e->dev))
            e->dev->plugin->free(e->dev, e->dev_start);
        free(e->dirty);
        cache__entry_put(e);
    }
}

static void cache__maybe_free(maccrt_dentry *e)
{
    if (e->detached && e->users == 0 && !e->excl && !e->wb && e->shared == 0)
        cache__free(e);
}

static void cache__unpin(maccrt_dentry *e)
{
    if (e->pinned) {
        e->pinned = 0;
        atomic_fetch_sub(&cache__npinned, 1);
    }
}

/* Takes e out of its tree (invalid from now on); frees it when unused. */
static void cache__detach_rest(maccrt_dentry *e);

static void cache__detach(maccrt_dentry *e)
{
    if (e->detached)
        return;
    cache__tree_del(e);
    cache__detach_rest(e);
}

/* cache__detach once e is out of its tree and the index (maccrt_cache_flush
 * empties a tree at once): invalid, freed when unused. */
static void cache__detach_rest(maccrt_dentry *e)
{
    if (e->held)
        atomic_fetch_sub(&e->dev->dheld, 1);
    else
        atomic_fetch_sub(&cache__ncached, 1);
    cache__unpin(e);
    e->detached = 1;
    e->valid = 0;
    cache__maybe_free(e);
}

/* A cached entry becomes a held one (a data construct took it over; its
 * dirty bytes went home first). */
static void cache__hold(maccrt_dentry *e)
{
    if (e->held)
        return;
    e->held = 1;
    atomic_fetch_sub(&cache__ncached, 1);
    atomic_fetch_add(&e->dev->dheld, 1);
    if (e->ndcounted) {
        e->ndcounted = 0;
        atomic_fetch_sub(&cache__ndirty, 1);
    }
}

/* The devices with coherent copies: every GPU of the runtime, and `also` (a
 * device outside the runtime's table, in tests) when it has its own memory. */
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

/* The entries of a device's tree that overlap [a, b), in address order:
 *   cache__ovl o = cache__ovl_of(a, b);
 *   for (e = cache__ovl_first(&o, d, a, b); e; e = cache__ovl_next(&o, e, b))
 * through the index when it answers for [a, b) (nothing anywhere, or the
 * one record of exactly [a, b): no other record overlaps it, so each device
 * has its entry or none), else by the device's tree. Valid while the trees
 * do not change (cache__lock held throughout). */
typedef struct cache__ovl {
    int ix;             /* the index answers */
    const cache__sx *x; /* (ix) the record, or NULL: nothing anywhere */
} cache__ovl;

/* Record x's entry of device d, or NULL (read under the record's lock: a
 * slot that is set holds a live entry). */
static maccrt_dentry *cache__sx_slot(cache__sx *x, const maccrt_device *d)
{
    maccrt_dentry *e = NULL;
    if (x && d->num >= 0 && d->num < x->cap) {
        cache__sx_lock(x);
        e = x->on[d->num];
        if (e && e->dev != d)
            e = NULL; /* (a device of the tests' own may share a number) */
        cache__sx_unlock(x);
    }
    return e;
}

static cache__ovl cache__ovl_of(uintptr_t a, uintptr_t b)
{
    cache__ovl o = {0, NULL};
    if (cache__sx_off || cache__sx_unused)
        return o;
    /* (under cache__sxlk: a section's first use anywhere inserts its record
     * beside cache__lock, cache__first_part) */
    int other;
    cache__spin_take(&cache__sxlk);
    const cache__sx *x = cache__sx_exact(a, b, &other);
    cache__spin_drop(&cache__sxlk);
    if (other)
        return o;
    o.ix = 1;
    o.x = x;
    return o;
}

static maccrt_dentry *cache__ovl_first(const cache__ovl *o, const maccrt_device *d, uintptr_t a, uintptr_t b)
{
    if (o->ix) {
        cache__sx *x = (cache__sx *)o->x;
        maccrt_dentry *e = cache__sx_slot(x, d);
        if (!e)
            return NULL;
        /* a scoped holder of cache__lock reads d's entry: d's part (the
         * record's slots change under cache__lock, or under their device's
         * part beside it: cache__first_part, cache__make_stale; a device
         * without an entry in it has nothing over [a, b), and its part is
         * not taken); the slot read again once the part is held */
        if (cache__scoped && !(cache__parts_held & MACCRT_BIT(d->num))) {
            cache__need(d);
            e = cache__sx_slot(x, d);
        }
        return e;
    }
    cache__need(d);
    maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b);
    return r && r->start < b ? (maccrt_dentry *)r : NULL;
}

static maccrt_dentry *cache__ovl_next(const cache__ovl *o, const maccrt_dentry *e, uintptr_t b)
{
    if (o->ix)
        return NULL;
    maccrt_rnode *r = maccrt_rtree_next_below(&e->dev->dtree, &e->node, b);
    return r && r->start < b ? (maccrt_dentry *)r : NULL;
}

/* ---- plans: copies made without the lock -------------------------------------------------- */

typedef struct cache__plan cache__plan;
static void cache__plan_need(const cache__plan *p);

enum {
    CACHE__WB,   /* e's bytes [a, b) to the host */
    CACHE__FILL, /* the host's [a, b) into e */
    CACHE__PEER  /* src's [a, b) into e, device to device */
};

typedef struct cache__job {
    int op;
    maccrt_dentry *e, *src;
    uintptr_t a, b;
    void *dst;   /* e's device memory when not yet in e (cache__new_filled), else NULL */
    void *fence; /* (a fill started, not waited for: cache__plan.start) its fence */
} cache__job;

/* Claim modes, weakest first. A shared claim (a peer copy's source) waits
 * only for an exclusive one; a write-back claim also for another write-back
 * (two would copy the same bytes home at once); an exclusive claim for all. */
enum { CACHE__SHARED = 0, CACHE__WBACK = 1, CACHE__EXCL = 2 };

struct cache__plan {
    cache__job *job;
    int njob, capjob;
    maccrt_dentry **cl; /* claimed entries */
    unsigned char *clx; /* their claim modes */
    int ncl, capcl;
    int *hix, caphix, nhix; /* (plans of many claims) index of cl[0, nhix) by entry: open addressing, -1 free */
    int blocked; /* an entry it needs is claimed by another thread */
    const maccrt_dentry *block_on; /* the first such entry */
    int start;   /* a task's maps on a GPU, copied by its own thread: fills may be started only */
    int early;   /* an early write-back by a GPU's helper (maccrt_cache_write_early): cache__early_via */
};

/* A scoped holder of cache__lock about to touch the plan's entries (after
 * the lock was dropped for the copies and taken back): their devices' parts. */
static void cache__plan_need(const cache__plan *p)
{
    if (!cache__scoped)
        return;
    for (int i = 0; i < p->ncl; i++)
        cache__need(p->cl[i]->dev);
    for (int i = 0; i < p->njob; i++) {
        cache__need(p->job[i].e->dev);
        if (p->job[i].src)
            cache__need(p->job[i].src->dev);
    }
}

/* The claims' index emptied (with the claims). */
static void cache__plan_unindex(cache__plan *p)
{
    if (p->nhix) {
        p->nhix = 0;
        memset(p->hix, 0xff, (size_t)p->caphix * sizeof *p->hix);
    }
}

static void cache__plan_reset(cache__plan *p)
{
    p->njob = p->ncl = p->blocked = 0;
    p->block_on = NULL;
    cache__plan_unindex(p);
}

static void cache__plan_free(cache__plan *p)
{
    free(p->job);
    free(p->cl);
    free(p->clx);
    free(p->hix);
    memset(p, 0, sizeof *p);
}

static void cache__plan_job(cache__plan *p, int op, maccrt_dentry *e, maccrt_dentry *src,
                            uintptr_t a, uintptr_t b)
{
    if (p->njob == p->capjob) {
        p->capjob = p->capjob ? 2 * p->capjob : 8;
        p->job = maccrt_xrealloc(p->job, (size_t)p->capjob * sizeof *p->job);
    }
    p->job[p->njob++] = (cache__job){op, e, src, a, b, NULL, NULL};
}

static int cache__claim_blocked(const maccrt_dentry *e, int mode)
{
    return e->excl || (mode >= CACHE__WBACK && e->wb) || (mode == CACHE__EXCL && e->shared);
}

static size_t cache__hix_slot(const cache__plan *p, const maccrt_dentry *e)
{
    uintptr_t x = (uintptr_t)e;
    x ^= x >> 7;
    x *= (uintptr_t)0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 20) & (size_t)(p->caphix - 1);
}

/* Where e is among the plan's claims, or -1: a scan while they are few, an
 * index past CACHE__HIX_MIN (a synchronisation point's plan claims every
 * entry of every GPU: the scan made matmul's 1536 claims 1.6 ms, two H200s). */
#define CACHE__HIX_MIN 16
static int cache__plan_find(cache__plan *p, const maccrt_dentry *e)
{
    if (p->ncl < CACHE__HIX_MIN) {
        for (int i = 0; i < p->ncl; i++)
            if (p->cl[i] == e)
                return i;
        return -1;
    }
    if (p->caphix < 2 * p->ncl + 2) { /* at most half full: a larger one, made again from cl */
        int cap = 64;
        while (cap < 4 * p->ncl)
            cap *= 2;
        free(p->hix);
        p->hix = maccrt_xcalloc((size_t)cap, sizeof *p->hix);
        p->caphix = cap;
        memset(p->hix, 0xff, (size_t)cap * sizeof *p->hix);
        p->nhix = 0;
    }
    for (; p->nhix < p->ncl; p->nhix++) { /* the claims added since */
        size_t j = cache__hix_slot(p, p->cl[p->nhix]);
        while (p->hix[j] >= 0)
            j = (j + 1) & (size_t)(p->caphix - 1);
        p->hix[j] = p->nhix;
    }
    for (size_t j = cache__hix_slot(p, e);; j = (j + 1) & (size_t)(p->caphix - 1)) {
        if (p->hix[j] < 0)
            return -1;
        if (p->cl[p->hix[j]] == e)
            return p->hix[j];
    }
}

/* The plan needs e in claim mode `mode` (CACHE__*); blocked when another
 * thread's claim is in the way. */
static void cache__plan_claim(cache__plan *p, maccrt_dentry *e, int mode)
{
    int i = cache__plan_find(p, e);
    if (i >= 0) {
        if (mode > p->clx[i])
            p->clx[i] = (unsigned char)mode;
        if (cache__claim_blocked(e, p->clx[i]) && !p->blocked) {
            p->blocked = 1;
            p->block_on = e;
        }
        return;
    }
    if (p->ncl == p->capcl) {
        p->capcl = p->capcl ? 2 * p->capcl : 8;
        p->cl = maccrt_xrealloc(p->cl, (size_t)p->capcl * sizeof *p->cl);
        p->clx = maccrt_xrealloc(p->clx, (size_t)p->capcl);
    }
    p->cl[p->ncl] = e;
    p->clx[p->ncl++] = (unsigned char)mode; /* (indexed at the next look-up) */
    if (cache__claim_blocked(e, mode) && !p->blocked) {
        p->blocked = 1;
        p->block_on = e;
    }
}

/* Write-back jobs for e's dirty bytes in [a, b) (e claimed for the
 * write-back, or exclusively). */
static void cache__plan_wb(cache__plan *p, maccrt_dentry *e, uintptr_t a, uintptr_t b, int excl)
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
    const maccrt_dentry *e = p->block_on;
    cache__plan_reset(p);
    cache__wait_on(e);
}

static void cache__plan_commit(cache__plan *p)
{
    cache__plan_need(p);
    for (int i = 0; i < p->ncl; i++) {
        if (p->clx[i] == CACHE__EXCL)
            p->cl[i]->excl = 1;
        else if (p->clx[i] == CACHE__WBACK)
            p->cl[i]->wb = 1;
        else
            p->cl[i]->shared++;
    }
}

/* ---- asynchronous fills ------------------------------------------------------------------
 *
 * A GPU helper filling its task's maps from the host starts each copy and
 * goes on (plugin->copy_h2d_start): its task's kernels come after the copies
 * on its stream, and the entry is published valid with the copy's fence. A
 * staged 512 KiB tile held its helper 117 us of which 20-35 waited for the
 * DMA (matmul 16 256 on two H200s, whose start is every helper filling).
 * Whoever else uses the entry's bytes before the fence is done orders
 * itself after it (plugin->fence_order): another task's kernels on the same
 * GPU (maccrt_map_task_acquire_n, once its maps are taken), a copy out of
 * the entry to another GPU or to the host (cache__job_run), a data construct
 * taking it over. Its memory is not freed before that: the filling task
 * uses the entry until its kernels ended, which is after the copy. The
 * first release that finds the fence done clears it. MACC_FILL_ASYNC=0:
 * every fill waited for. */

/* What the calling thread does next on d comes after e's fill. */
static void cache__fence_order(maccrt_device *d, maccrt_dentry *e)
{
    void *f = atomic_load_explicit(&e->fence, memory_order_acquire);
    if (f)
        d->plugin->fence_order(d, f);
}

/* e's fence cleared when done (a user of e, which keeps it). */
static void cache__fence_check(maccrt_dentry *e)
{
    void *f = atomic_load_explicit(&e->fence, memory_order_acquire);
    if (f && e->dev->plugin->fence_done(e->dev, f))
        atomic_compare_exchange_strong(&e->fence, &f, NULL);
}

/* The entries this thread filled asynchronously in its task's current
 * maccrt_map_task_acquire_n: their fences are on its own stream. */
#define CACHE__MINE 16
static __thread maccrt_dentry *cache__mine[CACHE__MINE];
static __thread int cache__nmine;

/* A fill's fence into its entry (cache__lock held, e claimed exclusively). */
static void cache__plan_fences(cache__plan *p)
{
    for (int i = 0; i < p->njob; i++)
        if (p->job[i].fence) {
            atomic_store_explicit(&p->job[i].e->fence, p->job[i].fence, memory_order_release);
            if (cache__nmine < CACHE__MINE)
                cache__mine[cache__nmine++] = p->job[i].e;
        }
}

/* Where job j's bytes are on its entry's device. */
static void *cache__job_dev(const cache__job *j)
{
    return (char *)(j->dst ? j->dst : j->e->dev_start) + (j->a - j->e->node.start);
}

/* Makes a copy of the plan, without the lock (the claims keep the entries);
 * start: a fill may be started only (its fence returned). */
static void *cache__job_run(const cache__job *j, const MACC_SrcLoc *loc, int start)
{
    maccrt_dentry *e = j->e;
    void *dev = cache__job_dev(j);
    switch (j->op) {
    case CACHE__WB:
        cache__fence_order(e->dev, e);
        atomic_fetch_add_explicit(&e->dev->wb_load, (long long)(j->b - j->a), memory_order_relaxed);
        maccrt_copy(e->dev, 0, (void *)j->a, dev, j->b - j->a, e->name, loc);
        atomic_fetch_sub_explicit(&e->dev->wb_load, (long long)(j->b - j->a), memory_order_relaxed);
        break;
    case CACHE__FILL:
        if (start)
            return maccrt_copy_start(e->dev, dev, (void *)j->a, j->b - j->a, e->name, loc);
        maccrt_copy(e->dev, 1, dev, (void *)j->a, j->b - j->a, e->name, loc);
        break;
    case CACHE__PEER:
        cache__fence_order(e->dev, j->src);
        maccrt_copy_peer(e->dev, dev, j->src->dev, (char *)j->src->dev_start + (j->a - j->src->node.start),
                         j->b - j->a, e->name, loc);
        break;
    }
    return NULL;
}

/* A device's share of a plan, run by its own threads (plugin->helpers_start);
 * via[j]: job j's write-back made through that device (cache__plan_via). */
typedef struct cache__share {
    const cache__plan *p;
    const MACC_SrcLoc *loc;
    int *idx, n;
    maccrt_device **via;
    atomic_int *taken; /* (an early write-back's: set as a thread takes it) */
} cache__share;

static int cache__peer_ok(const maccrt_device *to, const maccrt_device *from);

/* Write-back j through device v's link (the calling thread v's): 1 when made. */
static int cache__job_via(const cache__job *j, maccrt_device *v, const MACC_SrcLoc *loc)
{
    cache__fence_order(v, j->e);
    long long s = (long long)(j->b - j->a);
    atomic_fetch_add_explicit(&v->wb_load, s, memory_order_relaxed);
    int made = maccrt_copy_via(v, (void *)j->a, j->e->dev, cache__job_dev(j), j->b - j->a, j->e->name, loc);
    atomic_fetch_sub_explicit(&v->wb_load, s, memory_order_relaxed);
    return made;
}

static void cache__share_item(void *arg, int i)
{
    cache__share *s = arg;
    int k = s->idx[i];
    if (s->taken)
        atomic_store(s->taken, 1);
    if (s->via[k] && cache__job_via(&s->p->job[k], s->via[k], s->loc))
        return;
    (void)cache__job_run(&s->p->job[k], s->loc, 0);
}

/* MACC_WB_VIA=0: each GPU writes its own bytes home, however many. */
static int cache__via_on(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_WB_VIA", 1);
}

/* Write-backs through another GPU. At a synchronisation point each GPU
 * copies home what it holds, over its own link to the host; a GPU that
 * holds more than another kept the wait going while the other's link idled
 * (STREAM on two H200s: one GPU holding 45 of the 48 16-MiB tiles at the
 * end, 13.4 ms of write-backs after the last kernel, against 7.8 ms when
 * they were shared evenly, each link at about 50 GB/s). Write-backs of the
 * GPU with the most bytes go to the one with the least, which copies each
 * over the GPUs' link and then home through its own (copy_d2h_via), while
 * the two loads differ by at least twice the write-back: they end within
 * one write-back of each other. Only between devices whose
 * plugin offers it and that reach each other (cache__peer_ok). */
/* Whether dev's plugin can take another GPU's write-backs: copy them over
 * the GPUs' link and home through its own, on its helpers, after fences. */
static int cache__via_capable(const maccrt_device *dev)
{
    return dev->plugin->copy_d2h_via && dev->plugin->helpers_start && dev->plugin->fence_order;
}

static void cache__plan_via(const cache__plan *p, maccrt_device **via)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (p->njob < 2 || !cache__via_on())
        return;
    size_t load[MACCRT_MAX_DEVICES] = {0};
    int ok[MACCRT_MAX_DEVICES] = {0}, nok = 0;
    for (int d = 0; d < rt->ndevices && d < MACCRT_MAX_DEVICES; d++) {
        ok[d] = cache__via_capable(rt->devices[d]);
        nok += ok[d];
    }
    if (nok < 2)
        return;
    for (int i = 0; i < p->njob; i++) {
        const cache__job *j = &p->job[i];
        int d = j->e->dev->num;
        if (j->op == CACHE__WB && d >= 0 && d < MACCRT_MAX_DEVICES && ok[d])
            load[d] += j->b - j->a;
    }
    for (int i = p->njob - 1; i >= 0; i--) {
        const cache__job *j = &p->job[i];
        maccrt_device *from = j->e->dev;
        int h = from->num;
        if (j->op != CACHE__WB || h < 0 || h >= MACCRT_MAX_DEVICES || !ok[h])
            continue;
        int l = -1;
        for (int d = 0; d < rt->ndevices && d < MACCRT_MAX_DEVICES; d++)
            if (ok[d] && d != h && (l < 0 || load[d] < load[l]) && cache__peer_ok(rt->devices[d], from))
                l = d;
        size_t s = j->b - j->a;
        if (l < 0 || load[l] + 2 * s > load[h])
            continue;
        via[i] = rt->devices[l];
        load[h] -= s;
        load[l] += s;
    }
}

/* Early write-backs through another GPU (MACC_WB_VIA_EARLY=1; off by
 * default: not yet measured on two GPUs). A flush's write-backs are shared
 * out by cache__plan_via; those made during the run, as chains end
 * (maccrt_cache_write_early, by the GPU's helpers), went over their own GPU's
 * link however busy: STREAM's two H200s ran 9 and 7 of its 16 chains in some
 * runs, and the GPU with 9 wrote home 432 MiB while the other's link idled
 * at the end. The helper about to write j home on its GPU d hands it to the
 * GPU v whose link has the least on its way (wb_load: copies in flight and
 * early write-backs queued) when v's with j stays under d's without it: v's
 * helpers copy it over the GPUs' link and home through v's (as
 * cache__share_item does for a flush), while d's helper waits. One such
 * wait per GPU at a time (via_wait), so that two GPUs' helpers never all
 * wait for each other. */
static int cache__via_early_on(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_WB_VIA_EARLY", 0);
}

static maccrt_device *cache__early_via(const cache__job *j)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_device *d = j->e->dev;
    if (j->op != CACHE__WB || !cache__via_early_on() || !d->plugin->copy_d2h_via || !maccrt_thread_self()->is_worker)
        return NULL;
    long long s = (long long)(j->b - j->a), ld = atomic_load_explicit(&d->wb_load, memory_order_relaxed);
    maccrt_device *v = NULL;
    long long lv = 0;
    for (int i = 0; i < rt->ndevices; i++) {
        maccrt_device *x = rt->devices[i];
        if (x == d || !cache__via_capable(x) || !cache__peer_ok(x, d))
            continue;
        long long lx = atomic_load_explicit(&x->wb_load, memory_order_relaxed);
        if (!v || lx < lv) {
            v = x;
            lv = lx;
        }
    }
    int idle = 0;
    if (!v || lv + s > ld || !atomic_compare_exchange_strong(&d->via_wait, &idle, 1))
        return NULL;
    return v;
}

static int cache__taken(const void *arg)
{
    return atomic_load((atomic_int *)arg);
}

/* Job 0 of p (an early write-back) made by v's helpers; the caller waits.
 * The batch's waiter would take the item itself at once (maccrt_batch_wait)
 * and could not copy through v (copy_d2h_via refuses outside v's threads):
 * it first gives v's helpers up to 2 ms to take it (a polling one takes it
 * in microseconds, a sleeping one once woken), then waits or, when none
 * came, makes it over its own link. */
static void cache__early_via_run(const cache__plan *p, maccrt_device *v, const MACC_SrcLoc *loc)
{
    maccrt_device *d = p->job[0].e->dev;
    int idx = 0;
    maccrt_device *via[1] = {v};
    atomic_int taken = 0;
    cache__share share = {p, loc, &idx, 1, via, &taken};
    struct maccrt_batch *b = v->plugin->helpers_start(v, cache__share_item, &share, 1);
    (void)maccrt_poll(cache__taken, &taken, 2000000L);
    v->plugin->helpers_wait(v, b);
    atomic_store(&d->via_wait, 0);
}

/* The copies of p by the devices' own threads, each device's at once on
 * their streams (one thread copying a synchronisation point's write-backs
 * one after the other took 90 ms of STREAM's 100 on two H200s); the caller
 * copies those of devices without such threads (tests' devices outside the
 * table) and then waits for the others. */
static void cache__plan_fan_out(const cache__plan *p, const MACC_SrcLoc *loc)
{
    maccrt_runtime *rt = &maccrt_rt;
    cache__share share[MACCRT_MAX_DEVICES];
    struct maccrt_batch *batch[MACCRT_MAX_DEVICES];
    maccrt_device *dv[MACCRT_MAX_DEVICES];
    int *idx = maccrt_xcalloc((size_t)p->njob, sizeof *idx);
    unsigned char *taken = maccrt_xcalloc((size_t)p->njob, 1);
    maccrt_device **via = maccrt_xcalloc((size_t)p->njob, sizeof *via);
    cache__plan_via(p, via);
    int used = 0, nd = 0;
    for (int d = 0; d < rt->ndevices; d++) {
        maccrt_device *dev = rt->devices[d];
        int first = used;
        for (int i = 0; i < p->njob && dev->plugin->helpers_start; i++)
            if ((via[i] ? via[i] : p->job[i].e->dev) == dev) {
                idx[used++] = i;
                taken[i] = 1;
            }
        if (used == first)
            continue;
        share[nd] = (cache__share){p, loc, idx + first, used - first, via, NULL};
        dv[nd] = dev;
        batch[nd] = dev->plugin->helpers_start(dev, cache__share_item, &share[nd], used - first);
        nd++;
    }
    for (int i = 0; i < p->njob; i++)
        if (!taken[i])
            (void)cache__job_run(&p->job[i], loc, 0);
    for (int k = 0; k < nd; k++)
        dv[k]->plugin->helpers_wait(dv[k], batch[k]);
    free(via);
    free(taken);
    free(idx);
}

/* Marks the entries the plan fills from the host as filling (on) or done. */
static void cache__plan_filling(cache__plan *p, int on)
{
    cache__plan_need(p);
    for (int i = 0; i < p->njob; i++)
        if (p->job[i].op == CACHE__FILL)
            p->job[i].e->filling = on;
}

/* The plan's copies, the lock dropped. A program thread with several copies
 * to make (a synchronisation point's write-backs) fans them out; a worker (a
 * GPU helper filling its task's maps) copies itself: its siblings may be
 * running tasks that wait for its claims. Its fills may be started only
 * (p->start: their fences in their jobs, for cache__plan_fences). */
static void cache__plan_copies(cache__plan *p, const MACC_SrcLoc *loc)
{
    maccrt_device *v = p->early && p->njob == 1 ? cache__early_via(&p->job[0]) : NULL;
    if (v)
        cache__early_via_run(p, v, loc);
    else if (p->njob > 1 && !maccrt_thread_self()->is_worker)
        cache__plan_fan_out(p, loc);
    else
        for (int i = 0; i < p->njob; i++)
            p->job[i].fence = cache__job_run(&p->job[i], loc, p->start);
}

/* The plan's copies between cache__plan_filling's marks, the lock dropped. */
static void cache__plan_run(cache__plan *p, const MACC_SrcLoc *loc)
{
    if (p->njob == 0)
        return;
    cache__plan_filling(p, 1); /* (cache__plan_fill: another GPU may wait for them) */
    cache__lock_drop();
    cache__plan_copies(p, loc);
    cache__lock_take();
    cache__plan_filling(p, 0);
    if (p->start)
        cache__plan_fences(p);
}

/* After the copies: written-back bytes are no longer dirty. */
static void cache__plan_written_back(cache__plan *p)
{
    cache__plan_need(p);
    for (int i = 0; i < p->njob; i++)
        if (p->job[i].op == CACHE__WB)
            cache__dirty_drop(p->job[i].e, p->job[i].a, p->job[i].b);
}

/* Gives the claims back; detach: the claimed entries also leave their trees
 * (their dirty bytes were written back or superseded). */
static void cache__plan_release(cache__plan *p, int detach)
{
    cache__plan_need(p);
    for (int i = 0; i < p->ncl; i++) {
        maccrt_dentry *e = p->cl[i];
        if (p->clx[i] == CACHE__EXCL)
            e->excl = 0;
        else if (p->clx[i] == CACHE__WBACK)
            e->wb = 0;
        else
            e->shared--;
        cache__signal(cache__keyof(e)); /* (before e may be freed) */
        if (detach) {
            cache__dirty_drop(e, e->node.start, e->node.end);
            cache__detach(e);
        } else {
            cache__maybe_free(e);
        }
    }
    if (p->ncl)
        cache__signal(CACHE__NKEYS);
    p->ncl = 0;
    cache__plan_unindex(p);
}

/* One copy between the host and held entry e ([a, b), to_dev: into e) with
 * e claimed exclusively (the caller saw no claim on it); the lock is dropped
 * during the copy. */
static void cache__copy_held(maccrt_dentry *e, int to_dev, uintptr_t a, uintptr_t b,
                             const char *name, const MACC_SrcLoc *loc)
{
    if (!cache__has_memory(e->dev) || a >= b)
        return; /* the host: the copy is the variable */
    e->excl = 1;
    cache__lock_drop();
    void *dev = maccrt_translate(e->dev_start, e->node.start, (void *)a);
    if (to_dev)
        maccrt_copy(e->dev, 1, dev, (void *)a, b - a, name ? name : e->name, loc);
    else
        maccrt_copy(e->dev, 0, (void *)a, dev, b - a, name ? name : e->name, loc);
    cache__lock_take();
    e->excl = 0;
    cache__dirty_drop(e, a, b); /* home (from), or superseded by the host's bytes (to) */
    cache__wake(e);
}

/* Runs a plan that holds all its claims: commit, copies (the lock dropped),
 * then the effects: written-back bytes are clean (detach: the claimed
 * entries leave their trees, their dirty bytes home or superseded) and the
 * claims go back. */
static void cache__plan_apply(cache__plan *p, const MACC_SrcLoc *loc, int detach)
{
    cache__plan_commit(p);
    cache__plan_run(p, loc);
    if (!detach)
        cache__plan_written_back(p);
    cache__plan_release(p, detach);
}

/* ---- the coherence operations (cache__lock held; dropped during copies) ------------------ */

/* The plan over every other device's cached copies of [a, b) (held entries
 * are the present table's: they keep their bytes), made and applied: with
 * detach, each writes back its dirty bytes outside [a, b) and is detached
 * (cache__invalidate); without, each writes back its dirty bytes inside it
 * (cache__host_current). `skip`: the device whose copies stay. */
static void cache__others(maccrt_device *skip, maccrt_device *also, uintptr_t a, uintptr_t b,
                          const MACC_SrcLoc *loc, int detach)
{
    cache__plan p = {0};
    for (;;) {
        if (atomic_load(detach ? &cache__ncached : &cache__ndirty) == 0)
            break;
        maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
        int n = cache__devices(also, devs);
        cache__ovl o = cache__ovl_of(a, b);
        for (int i = 0; i < n; i++) {
            if (devs[i] == skip)
                continue;
            for (maccrt_dentry *e = cache__ovl_first(&o, devs[i], a, b); e; e = cache__ovl_next(&o, e, b)) {
                if (e->held)
                    continue;
                if (detach) {
                    cache__plan_wb(&p, e, e->node.start, a, 1);
                    cache__plan_wb(&p, e, b, e->node.end, 1);
                } else {
                    cache__plan_wb(&p, e, a, b, 0);
                }
            }
        }
        if (p.blocked) {
            cache__plan_wait(&p);
            continue;
        }
        cache__plan_apply(&p, loc, detach);
        break;
    }
    cache__plan_free(&p);
}

/* Makes the host copy of [a, b) current: every device except `except`
 * writes back the dirty bytes of its cached entries there. */
static void cache__host_current(maccrt_device *except, maccrt_device *also, uintptr_t a,
                                uintptr_t b, const MACC_SrcLoc *loc)
{
    cache__others(except, also, a, b, loc, 0);
}

/* [a, b) was written on `writer` (NULL: the host): every other cached copy
 * that overlaps it is stale. Cached entries of the other devices write back
 * their dirty bytes outside [a, b) (those inside are superseded) and are
 * detached. Held entries are the present table's: they keep their bytes. */
static void cache__invalidate(maccrt_device *writer, maccrt_device *also, uintptr_t a, uintptr_t b,
                              const MACC_SrcLoc *loc)
{
    cache__others(writer, also, a, b, loc, 1);
}

/* A zeroed entry on whole cache lines: the tree's links and the fields set
 * once share the first line, which other threads' claims and releases (the
 * fields after it) never write, so a look-up descending through it does not
 * miss on another core's update. */
static maccrt_dentry *cache__entry_alloc(void)
{
    maccrt_dentry *e = cache__pool_pop(&cache__epool, offsetof(maccrt_dentry, next_free));
    if (e) {
        memset(e, 0, sizeof *e);
        return e;
    }
    size_t sz = (sizeof(maccrt_dentry) + 63) & ~(size_t)63;
    e = aligned_alloc(64, sz);
    if (!e)
        maccrt_fatal(NULL, "out of host memory (a directory entry of %zu bytes)", sz);
    memset(e, 0, sz);
    return e;
}

/* A new entry for [a, b) on d, claimed exclusively by the caller; in the
 * tree unless `detached` (a task's entry of its own). Held entries are
 * counted as such (the caller sets their reference counts). Its device
 * memory is allocated without the lock. */
static maccrt_dentry *cache__new_entry(maccrt_device *d, uintptr_t a, uintptr_t b, const char *name,
                                       int held, int detached)
{
    maccrt_dentry *e = cache__entry_alloc();
    e->node.start = a;
    e->node.end = b;
    e->dev = d;
    e->name = name;
    e->held = held;
    e->excl = 1;
    if (detached) {
        e->detached = 1;
    } else {
        cache__tree_add(e);
        if (held)
            atomic_fetch_add(&d->dheld, 1);
        else
            atomic_fetch_add(&cache__ncached, 1);
    }
    if (!cache__has_memory(d))
        e->dev_start = (void *)a; /* the host: the copy is the variable */
    return e;
}

/* The device memory of a new entry for [a, b) on d, allocated without the
 * lock (the entry is claimed exclusively meanwhile; it is published in the
 * entry under the lock). */
static void *cache__new_memory(maccrt_device *d, uintptr_t a, uintptr_t b, const char *name,
                               const MACC_SrcLoc *loc)
{
    double t0 = maccrt_trace_on() ? maccrt_now() : 0.0;
    void *p = maccrt_device_alloc(d, (void *)a, b - a, name, NULL, loc);
    if (t0 > 0.0)
        maccrt_trace_event(MACCRT_TRACE_ALLOC, d, name, t0, maccrt_now(), b - a);
    if (d->plugin->host_pin)
        d->plugin->host_pin(d, (void *)a, b - a); /* pinned-speed copies while it lives */
    return p;
}

static maccrt_dentry *cache__new(maccrt_device *d, uintptr_t a, uintptr_t b, const char *name,
                                 int held, int detached, const MACC_SrcLoc *loc)
{
    maccrt_dentry *e = cache__new_entry(d, a, b, name, held, detached);
    if (!cache__has_memory(d))
        return e;
    cache__lock_drop();
    void *p = cache__new_memory(d, a, b, name, loc);
    cache__lock_take();
    e->hpin = d->plugin->host_pin != NULL;
    e->dev_start = p;
    return e;
}

/* Gives back the exclusive claim of a new entry. */
static void cache__unclaim(maccrt_dentry *e)
{
    e->excl = 0;
    cache__wake(e);
    cache__maybe_free(e);
}

/* MACC_PEER_WAIT=1 (experimental, off until measured on two GPUs): a fill
 * waits for another GPU's fill of the same bytes from the host, in flight,
 * and copies from that GPU (cache__plan_fill). */
static int cache__peer_wait(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_PEER_WAIT", 0);
}

/* Is a device-to-device copy possible from `from` to `to`? */
static int cache__peer_ok(const maccrt_device *to, const maccrt_device *from)
{
    static int off = -1; /* MACC_NO_PEER=1: through the host, for comparison */
    return !maccrt_env_flag(&off, "MACC_NO_PEER", 0) && to->plugin->copy_peer && to->plugin == from->plugin;
}

/* Plans the fill of e (claimed exclusively by the caller, or `claim_e`: to
 * be claimed with the rest): from another GPU's valid cached entry that
 * contains it, else from the host after every dirty copy of its bytes went
 * home. Held entries of other devices are neither sources nor written back
 * (their bytes are their data constructs'). With MACC_PEER_WAIT=1, another
 * GPU's entry that contains it and whose fill from the host is in flight is
 * waited for (the plan is blocked on it) and then copied from: the bytes cross the host's
 * memory once, not once per GPU (matmul on two H200s: both GPUs filled
 * most tiles from the host at once, 765 fills per GPU, 406 of them from the
 * host, each a 512 KiB staged copy at 4-5 GB/s, the host's memory the
 * limit). A fill is only waited for once in flight, never while merely
 * claimed, so two GPUs each making an entry for the same section do not
 * wait for each other. */
static void cache__plan_fill(cache__plan *p, maccrt_dentry *e, int claim_e)
{
    uintptr_t a = e->node.start, b = e->node.end;
    if (claim_e)
        cache__plan_claim(p, e, CACHE__EXCL);
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    int n = cache__devices(e->dev, devs);
    cache__ovl o = cache__ovl_of(a, b);
    if (e->ndirty == 0) {
        for (int i = 0; i < n; i++) {
            if (devs[i] == e->dev || !cache__peer_ok(e->dev, devs[i]))
                continue;
            maccrt_dentry *g = cache__ovl_first(&o, devs[i], a, b);
            if (!g || g->held || (!g->dev_start && !g->filling) || g->node.start > a || b > g->node.end)
                continue; /* no cached copy there that contains e (one being made and filled: waited for) */
            if (g->valid) {
                cache__plan_claim(p, g, CACHE__SHARED);
                cache__plan_job(p, CACHE__PEER, e, g, a, b);
                return;
            }
            if (g->filling && cache__peer_wait()) {
                cache__plan_claim(p, g, CACHE__SHARED); /* blocked until the fill is done */
                if (p->blocked)
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
        for (maccrt_dentry *g = cache__ovl_first(&o, devs[i], a, b); g; g = cache__ovl_next(&o, g, b))
            if (!g->held)
                cache__plan_wb(p, g, a, b, 0);
    }
    cache__plan_job(p, CACHE__FILL, e, NULL, a, b);
}

/* A new cached entry for [a, b) on d, in d's tree, its memory allocated
 * and (fill) its bytes brought in, then its claim given back: as cache__new
 * and cache__fill_new, but under one drop of the lock instead of two. The
 * fill's plan is made first (its claims keep its sources and the bytes it
 * writes back), then the allocation and the copies run without the lock,
 * the copies into the memory not yet in the entry (cache__job.dst). With
 * four fake GPUs on 16 cores the directory's lock was taken 3.2 times per
 * task, 0.6 of them to publish a new entry's memory before its fill took
 * the lock again. */
static void cache__fill_new(maccrt_dentry *e, int fill, const MACC_SrcLoc *loc);

/* Set when cache__new_filled returned with cache__lock dropped (the entry
 * published under d's part, and taken for the task: cache__publish_part);
 * whoever called cache__task_acquire_dir with the lock (cache__acquire_n,
 * maccrt_map_task_acquire) reads and clears it. */
static __thread int cache__unlocked;

/* MACC_DIR_PUBLISH_PART=0: every new entry is published under the whole lock. */
static int cache__publish_part_on(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_DIR_PUBLISH_PART", 1);
}

/* A new cached entry e of d whose plan claimed nothing else (a fill from the
 * host, or none) or only a peer fill's source (cache__plan_part_ok)
 * published after its copies under d's part alone, used by the calling task
 * (users), its claim given back, then the source's under its own part
 * (cache__give_back_part); cache__lock is not taken again. Everything
 * publication changes is e's own fields, which every reader reads under d's
 * part (alone or with cache__lock: cache__need); with four fake GPUs these
 * publications were 2616 of about 5700 holds of cache__lock per 4096 tasks,
 * whose global part was busy nearly all the run (bench/RESULTS.md,
 * thirty-second session). A thread that waits for e's claim counts itself
 * (cache__nsleep) before it lets the parts go, so it either saw the claim
 * given back or is counted here (cache__may_wait, cache__wake_key). */
static void cache__give_back_part(maccrt_dentry *g);

static void cache__publish_part(maccrt_device *d, maccrt_dentry *e, cache__plan *p, void *mem, int fill)
{
    unsigned key = cache__keyof(e);
    cache__dev_take(d);
    e->filling = 0; /* (the plan's one job, if any, is e's) */
    cache__plan_fences(p);
    e->hpin = d->plugin->host_pin != NULL;
    e->dev_start = mem;
    if (fill)
        e->valid = 1;
    e->users++;
    e->excl = 0;
    int wake = cache__may_wait(key);
    cache__dev_drop(d);
    if (wake)
        cache__wake_key(key);
    if (p->ncl)
        cache__give_back_part(p->cl[0]);
}

/* The shared claim of a peer fill's source g given back under g's device's
 * part alone (after the fill's entry was published under its own: one part
 * at a time), as cache__plan_release would: g freed when that was the last
 * thing keeping it (detached meanwhile), its waiters woken as above. */
static void cache__give_back_part(maccrt_dentry *g)
{
    maccrt_device *x = g->dev;
    unsigned key = cache__keyof(g); /* (g may be freed below: its key is its address's) */
    cache__dev_take(x);
    g->shared--;
    int wake = cache__may_wait(key);
    cache__maybe_free(g); /* (freed: on this thread's list until cache__free_pending) */
    cache__dev_drop(x);
    if (wake)
        cache__wake_key(key);
    if (cache__tofree)
        cache__free_pending();
}

/* Whether a new entry's plan p lets it be published under its device's part
 * (cache__publish_part): a fill from the host or none, or a peer fill whose
 * only claim is its source's shared one, on another device of the table. */
static int cache__plan_part_ok(const cache__plan *p, const maccrt_device *d)
{
    if (p->njob > 1)
        return 0;
    if (p->ncl == 0)
        return 1;
    return p->ncl == 1 && p->njob == 1 && p->job[0].op == CACHE__PEER && p->cl[0] == p->job[0].src &&
           p->clx[0] == CACHE__SHARED && p->cl[0]->dev != d && cache__dev_lockable(p->cl[0]->dev);
}

/* New entry e's device memory allocated and plan p's copies into it made
 * (no lock held; e claimed exclusively): returns the memory, for e's
 * publication. */
static void *cache__new_copied(maccrt_device *d, maccrt_dentry *e, cache__plan *p, const MACC_SrcLoc *loc)
{
    void *mem = cache__new_memory(d, e->node.start, e->node.end, e->name, loc);
    for (int i = 0; i < p->njob; i++)
        if (p->job[i].e == e)
            p->job[i].dst = mem;
    cache__plan_copies(p, loc);
    return mem;
}

static maccrt_dentry *cache__new_filled(maccrt_device *d, uintptr_t a, uintptr_t b, const char *name,
                                        int fill, const MACC_SrcLoc *loc)
{
    if (!cache__has_memory(d)) {
        maccrt_dentry *e = cache__new_entry(d, a, b, name, 0, 0);
        cache__fill_new(e, fill, loc);
        return e;
    }
    maccrt_dentry *e = cache__new_entry(d, a, b, name, 0, 0);
    cache__plan p = {0};
    p.start = 1; /* (a task's map: see "asynchronous fills") */
    while (fill) {
        cache__plan_fill(&p, e, 0);
        if (!p.blocked)
            break;
        cache__plan_wait(&p);
    }
    cache__plan_commit(&p);
    cache__plan_filling(&p, 1); /* (cache__plan_fill: another GPU may wait for them) */
    /* (a task's map in a scoped hold of d, its plan one fill from the host
     * or another GPU, or none: published under d's part, cache__publish_part) */
    int part = cache__scoped && cache__scope == d && cache__plan_part_ok(&p, d) && cache__publish_part_on();
    cache__lock_drop();
    void *mem = cache__new_copied(d, e, &p, loc);
    if (part) {
        cache__publish_part(d, e, &p, mem, fill);
        cache__plan_free(&p);
        cache__scope = NULL;
        cache__unlocked = 1;
        return e;
    }
    cache__lock_take();
    cache__plan_filling(&p, 0);
    cache__plan_fences(&p);
    e->hpin = d->plugin->host_pin != NULL;
    e->dev_start = mem;
    cache__plan_written_back(&p);
    cache__plan_release(&p, 0);
    if (fill)
        e->valid = 1;
    cache__plan_free(&p);
    cache__unclaim(e);
    return e;
}

/* Fills e, a new entry claimed by the caller (when `fill`); gives the claim
 * back. */
static void cache__fill_new(maccrt_dentry *e, int fill, const MACC_SrcLoc *loc)
{
    cache__plan p = {0};
    while (fill && cache__has_memory(e->dev)) {
        cache__plan_fill(&p, e, 0);
        if (p.blocked) {
            cache__plan_wait(&p);
            continue;
        }
        cache__plan_apply(&p, loc, 0);
        e->valid = 1;
        break;
    }
    cache__plan_free(&p);
    cache__unclaim(e);
}

/* Cached entries of d overlapping [a, b) write back their dirty bytes and
 * leave the tree (a held entry is to be made there). Returns 0 when there
 * were none, else 1 after the lock was dropped (the caller looks again). */
static int cache__evict(maccrt_device *d, uintptr_t a, uintptr_t b, const MACC_SrcLoc *loc)
{
    cache__plan p = {0};
    int any = 0;
    for (maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b); r && r->start < b;
         r = maccrt_rtree_next_below(&d->dtree, r, b)) {
        maccrt_dentry *e = (maccrt_dentry *)r;
        if (!e->held) {
            cache__plan_wb(&p, e, e->node.start, e->node.end, 1);
            any = 1;
        }
    }
    if (any) {
        if (p.blocked) {
            cache__plan_wait(&p);
        } else {
            cache__plan_apply(&p, loc, 1);
        }
    }
    cache__plan_free(&p);
    return any;
}

/* A cached entry e of d that contains a data construct's section becomes
 * held: its dirty bytes go home, and it is filled when it is not valid and
 * the map copies in. Returns 0 when done, 1 after a wait (look again). */
static int cache__take_over(maccrt_dentry *e, int to, const MACC_SrcLoc *loc)
{
    void *f = atomic_load(&e->fence);
    if (f) {
        /* a task's fill of it may be on its way: the data construct's copies
         * (any thread's, any stream) come after it; its handle stays valid
         * while e may go (the lock dropped) */
        maccrt_device *dev = e->dev;
        if (!dev->plugin->fence_done(dev, f)) {
            cache__lock_drop();
            while (!dev->plugin->fence_done(dev, f))
                sched_yield();
            cache__lock_take();
            return 1;
        }
        atomic_compare_exchange_strong(&e->fence, &f, NULL);
    }
    cache__plan p = {0};
    if (!e->valid && to)
        cache__plan_fill(&p, e, 1);
    else
        cache__plan_wb(&p, e, e->node.start, e->node.end, 1);
    if (p.blocked) {
        cache__plan_wait(&p);
        cache__plan_free(&p);
        return 1;
    }
    cache__plan_apply(&p, loc, 0);
    cache__plan_free(&p);
    if (e->detached)
        return 1; /* cannot happen while claimed, but look again if it did */
    cache__hold(e);
    e->valid = 1;
    return 0;
}

/* ---- the present table: lookups and errors ------------------------------------------------ */

static const char *cache__name(const MACC_Map *m)
{
    return m->name ? m->name : "(unnamed)";
}

static void cache__not_present(maccrt_device *d, const MACC_Map *m, const MACC_SrcLoc *loc)
{
    cache__lock_drop();
    maccrt_fatal(loc, "'%s' is not present on device %s", cache__name(m), d->name);
}

static void cache__partial(maccrt_device *d, const MACC_Map *m, const maccrt_dentry *e,
                           const MACC_SrcLoc *loc)
{
    size_t have = (size_t)(e->node.end - e->node.start);
    void *at = (void *)e->node.start;
    cache__lock_drop();
    maccrt_fatal(loc,
                 "'%s' is partially present on device %s (mapped: %zu bytes at %p, "
                 "requested: %zu bytes at %p)",
                 cache__name(m), d->name, have, at, m->bytes, m->start);
}

/* The held entry of d that contains [a, b), or NULL; *partial set when a
 * held entry overlaps without containing (then it is returned). *busy set
 * when an entry in the way is claimed exclusively (a copy into it or its
 * removal is in flight: wait and look again). */
static maccrt_dentry *cache__lookup(maccrt_device *d, uintptr_t a, uintptr_t b, int *partial,
                                    int *busy)
{
    *partial = 0;
    *busy = 0;
    if (atomic_load_explicit(&d->dheld, memory_order_relaxed) == 0)
        return NULL; /* no held entry on d (changed only under the lock): no walk of its tree */
    for (maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b); r && r->start < b;
         r = maccrt_rtree_next_below(&d->dtree, r, b)) {
        maccrt_dentry *e = (maccrt_dentry *)r;
        if (!e->held)
            continue;
        *busy = e->excl;
        *partial = !(r->start <= a && b <= r->end);
        return e;
    }
    return NULL;
}

/* cache__lookup, waiting (on the entry's key) while the held entry it finds
 * is claimed exclusively. */
static maccrt_dentry *cache__lookup_idle(maccrt_device *d, uintptr_t a, uintptr_t b, int *partial)
{
    for (;;) {
        int busy;
        maccrt_dentry *e = cache__lookup(d, a, b, partial, &busy);
        if (!busy)
            return e;
        cache__wait_on(e);
    }
}

/* The entry of d that contains address p (held, or cached when `cached`),
 * present and not claimed exclusively; NULL if none. */
static maccrt_dentry *cache__find(maccrt_device *d, uintptr_t p, int cached)
{
    maccrt_dentry *e = (maccrt_dentry *)maccrt_rtree_find(&d->dtree, p);
    if (!e || !e->dev_start || (e->held ? !cache__present(e) : !cached))
        return NULL;
    return e;
}

/* requires unified_shared_memory (MACC_MAP_USM): pointer p of map m, which no
 * map covers on GPU d, must be one d can read as it is; else an error naming
 * the region, rather than the kernel's illegal access. */
static void cache__usm_check(maccrt_device *d, const MACC_Map *m, const void *p, const MACC_SrcLoc *loc)
{
    if (!(m->kind & MACC_MAP_USM) || !p || !d->plugin->host_reachable || maccrt_managed_owns(p, 1) ||
        d->plugin->host_reachable(d, p))
        return;
    maccrt_fatal(loc,
                 "pointer '%s' (%p) points to host memory that no map covers and that %s cannot read (no "
                 "HMM/ATS): 'requires unified_shared_memory' covers heap data here (managed memory), not stack "
                 "or static data: map the data, or allocate it on the heap",
                 m->name ? m->name : "?", p, d->name);
}

/* ---- the present table: data constructs, and the host's tasks ----------------------------- */

/* A reference of kind ref on m's section of d: a data construct (task 0;
 * pins on a GPU), or a task's map that holds a present entry (a host task's,
 * or a GPU task's map of a declare target variable or an association).
 * *took: MACCRT_TOOK_REF when a reference was taken (maccrt_map_release
 * gives it back). */
static void *cache__acquire_ref(maccrt_device *d, const MACC_Map *m, int ref, int task, int *took,
                                const MACC_SrcLoc *loc)
{
    int kind = m->kind;
    int shared = !cache__has_memory(d);
    *took = MACCRT_TOOK_NONE;
    if (kind & MACC_MAP_DEVICEPTR)
        return m->base;
    /* A task on the host with nothing held there: nothing to find, nothing
     * to make (the task path's common case, without the lock). */
    if (task && shared && !(kind & MACC_MAP_PRESENT) && atomic_load(&d->dheld) == 0)
        return m->base;

    if (m->bytes == 0 || (kind & MACC_MAP_ATTACH)) {
        /* Zero-length section or attach: translate the pointer when it points
         * into a present section, else pass it as it is. */
        const void *p = m->bytes ? m->start : m->base;
        cache__lock_take();
        maccrt_dentry *e = cache__find(d, (uintptr_t)p, 0);
        void *r = e ? maccrt_translate(e->dev_start, e->node.start, m->base) : m->base;
        if (!e && (kind & MACC_MAP_PRESENT))
            cache__not_present(d, m, loc);
        cache__lock_drop();
        if (!e && !shared)
            cache__usm_check(d, m, p, loc);
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
    cache__lock_take();
    for (;;) {
        int partial;
        maccrt_dentry *e = cache__lookup_idle(d, a, b, &partial);
        if (partial) {
            if (task && shared && !(kind & MACC_MAP_PRESENT)) {
                /* tasks on the host may map overlapping sections at once */
                cache__lock_drop();
                return m->base;
            }
            if (kind & MACC_MAP_PRESENT)
                cache__not_present(d, m, loc);
            cache__partial(d, m, e, loc);
        }
        if (e && e->perm == MACCRT_PERM_TO) {
            /* a declare target variable: always present, never counted */
            if ((kind & MACC_MAP_ALWAYS) && (kind & MACC_MAP_TO))
                cache__copy_held(e, 1, a, b, m->name, loc);
            if ((kind & MACC_MAP_ALWAYS) && (kind & MACC_MAP_FROM))
                *took = MACCRT_TOOK_REF; /* a task's release copies back (no count to give back) */
            void *r = maccrt_translate(e->dev_start, e->node.start, m->base);
            cache__lock_drop();
            return r;
        }
        if (e && !cache__present(e) && (kind & (MACC_MAP_PRESENT | MACC_MAP_NOCREATE))) {
            /* a declare target link variable that is not mapped: absent */
            if (kind & MACC_MAP_PRESENT)
                cache__not_present(d, m, loc);
            cache__lock_drop();
            return m->base;
        }
        if (e) {
            /* a link variable mapped afresh: its device copy is filled as a new entry's */
            int fresh = e->perm == MACCRT_PERM_LINK && !e->sref && !e->dref;
            if ((fresh || (kind & MACC_MAP_ALWAYS)) && (kind & MACC_MAP_TO))
                cache__copy_held(e, 1, a, b, m->name, loc);
            if (ref == MACCRT_REF_STRUCTURED)
                e->sref++;
            else
                e->dref++;
            if (!task && !shared && !e->pinned) {
                e->pinned = 1;
                atomic_fetch_add(&cache__npinned, 1);
            }
            *took = MACCRT_TOOK_REF;
            void *r = maccrt_translate(e->dev_start, e->node.start, m->base);
            cache__lock_drop();
            return r;
        }
        if (kind & MACC_MAP_PRESENT)
            cache__not_present(d, m, loc);
        if ((kind & MACC_MAP_NOCREATE) || (task && shared)) {
            cache__lock_drop();
            return m->base;
        }
        if (!shared) {
            /* cached copies in the way: one that contains the section is taken
             * over, others go (their dirty bytes home first) */
            maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b);
            if (r && r->start <= a && b <= r->end) {
                if (cache__take_over((maccrt_dentry *)r, (kind & MACC_MAP_TO) != 0, loc))
                    continue;
                e = (maccrt_dentry *)r;
                if (ref == MACCRT_REF_STRUCTURED)
                    e->sref = 1;
                else
                    e->dref = 1;
                if (!task) {
                    e->pinned = 1;
                    atomic_fetch_add(&cache__npinned, 1);
                }
                *took = MACCRT_TOOK_REF;
                void *out = maccrt_translate(e->dev_start, e->node.start, m->base);
                cache__lock_drop();
                return out;
            }
            if (cache__evict(d, a, b, loc))
                continue;
        }
        e = cache__new(d, a, b, m->name, 1, 0, loc);
        if (ref == MACCRT_REF_STRUCTURED)
            e->sref = 1;
        else
            e->dref = 1;
        if (!task && !shared) {
            e->pinned = 1;
            atomic_fetch_add(&cache__npinned, 1);
        }
        e->valid = 1; /* the device copy is the data construct's */
        if (shared) {
            e->excl = 0;
        } else {
            /* from the host (or another GPU's current copy) after every dirty
             * copy of its bytes went home */
            cache__fill_new(e, (kind & MACC_MAP_TO) != 0, loc);
            e->valid = 1;
        }
        *took = MACCRT_TOOK_REF;
        void *out = maccrt_translate(e->dev_start, e->node.start, m->base);
        cache__lock_drop();
        return out;
    }
}

void *maccrt_map_acquire(maccrt_device *d, const MACC_Map *m, int ref, const MACC_SrcLoc *loc)
{
    int took;
    return cache__acquire_ref(d, m, ref, 0, &took, loc);
}

void maccrt_map_release(maccrt_device *d, const MACC_Map *m, int ref, int del,
                        const MACC_SrcLoc *loc)
{
    int kind = m->kind;
    int shared = !cache__has_memory(d);
    if ((kind & (MACC_MAP_DEVICEPTR | MACC_MAP_ATTACH)) || m->bytes == 0)
        return;
    if (!shared && maccrt_managed_owns(m->start, m->bytes)) {
        /* managed: copy-out prefetches back to the host, the rest is free */
        if (kind & MACC_MAP_FROM)
            maccrt_managed_prefetch(d, m->start, m->bytes, 1, 1);
        return;
    }
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    cache__lock_take();
    maccrt_dentry *e;
    for (;;) {
        int partial;
        e = cache__lookup_idle(d, a, b, &partial);
        if (e && cache__claim_blocked(e, CACHE__EXCL)) {
            cache__wait_on(e);
            continue;
        }
        if (!e || partial || !cache__present(e)) {
            /* Not mapped (exit data of absent data is allowed): nothing to do. */
            cache__lock_drop();
            return;
        }
        break;
    }
    if (e->perm == MACCRT_PERM_TO) {
        if ((kind & MACC_MAP_FROM) && (kind & MACC_MAP_ALWAYS))
            cache__copy_held(e, 0, a, b, m->name, loc);
        cache__lock_drop();
        return;
    }
    long sref = e->sref, dref = e->dref;
    if (ref == MACCRT_REF_STRUCTURED) {
        if (sref > 0)
            sref--;
    } else if (del) {
        dref = 0;
        if (del == 2) /* OpenMP's delete: a data region's reference too */
            sref = 0;
    } else if (dref > 0) {
        dref--;
    }
    int last = sref == 0 && dref == 0 && !e->assoc;
    /* the copy back with e claimed (nobody changes its counts meanwhile) */
    if ((kind & MACC_MAP_FROM) && (last || (kind & MACC_MAP_ALWAYS)))
        cache__copy_held(e, 0, a, b, m->name, loc);
    e->sref = sref;
    e->dref = dref;
    if (last) {
        /* the device copy's bytes are dropped: copied home above, or not wanted */
        cache__dirty_drop(e, e->node.start, e->node.end);
        cache__unpin(e);
        if (e->perm == MACCRT_PERM_NONE)
            cache__detach(e); /* freed now, or by the last task using it */
        /* a link variable's copy stays where it is, absent */
    }
    cache__lock_drop();
}

void maccrt_map_update(maccrt_device *d, const MACC_Map *m, const MACC_SrcLoc *loc)
{
    if (m->bytes == 0 || (m->kind & MACC_MAP_DEVICEPTR))
        return;
    if (cache__has_memory(d) && maccrt_managed_owns(m->start, m->bytes)) {
        maccrt_managed_prefetch(d, m->start, m->bytes, (m->kind & MACC_MAP_FROM) != 0, 1);
        return;
    }
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    cache__lock_take();
    for (;;) {
        int partial;
        maccrt_dentry *e = cache__lookup_idle(d, a, b, &partial);
        if (e && cache__claim_blocked(e, CACHE__EXCL)) {
            cache__wait_on(e);
            continue;
        }
        if (!e || partial || !cache__present(e)) {
            /* OpenMP: an update of absent data does nothing; acc update without
             * if_present passes MACC_MAP_PRESENT to make it an error. */
            if (m->kind & MACC_MAP_PRESENT)
                cache__not_present(d, m, loc);
            break;
        }
        /* the section's dirty bytes (tasks' writes) leave the list: home
         * (from), or overwritten by the host's (to) */
        if (m->kind & MACC_MAP_TO)
            cache__copy_held(e, 1, a, b, m->name, loc);
        if (m->kind & MACC_MAP_FROM)
            cache__copy_held(e, 0, a, b, m->name, loc);
        break;
    }
    cache__lock_drop();
}

int maccrt_map_is_present(maccrt_device *d, const void *p, size_t bytes)
{
    if (cache__has_memory(d) && maccrt_managed_owns(p, bytes))
        return 1;
    cache__lock_take();
    int r;
    if (bytes == 0) {
        maccrt_dentry *e = (maccrt_dentry *)maccrt_rtree_find(&d->dtree, (uintptr_t)p);
        r = e && cache__present(e);
    } else {
        MACC_Map m = {.start = (void *)p, .bytes = bytes};
        uintptr_t a, b;
        int partial, busy;
        maccrt_section(&m, &a, &b);
        maccrt_dentry *e = cache__lookup(d, a, b, &partial, &busy);
        r = e && !partial && cache__present(e);
    }
    cache__lock_drop();
    return r;
}

void maccrt_map_counts(maccrt_device *d, const void *p, long *sref, long *dref)
{
    cache__lock_take();
    maccrt_dentry *e = (maccrt_dentry *)maccrt_rtree_find(&d->dtree, (uintptr_t)p);
    int held = e && e->held;
    *sref = held ? e->sref : -1;
    *dref = held ? e->dref : -1;
    cache__lock_drop();
}

int maccrt_ptable_add_var(maccrt_device *d, void *host, size_t bytes, void *dev, int perm,
                          const char *name)
{
    MACC_Map m = {.start = host, .bytes = bytes};
    uintptr_t a, b;
    maccrt_section(&m, &a, &b);
    int r = 0;
    cache__lock_take();
    for (;;) {
        int partial;
        maccrt_dentry *e = cache__lookup_idle(d, a, b, &partial);
        if (e) {
            r = e->perm != MACCRT_PERM_NONE && e->node.start == a && e->node.end == b ? 1 : -1;
            break;
        }
        if (cache__evict(d, a, b, NULL))
            continue;
        e = cache__entry_alloc();
        e->node.start = a;
        e->node.end = b;
        e->dev = d;
        e->dev_start = dev;
        e->name = name;
        e->perm = perm;
        e->held = 1;
        e->valid = 1;
        cache__tree_add(e);
        atomic_fetch_add(&d->dheld, 1);
        break;
    }
    cache__lock_drop();
    return r;
}

void *maccrt_map_device_ptr(maccrt_device *d, const void *p)
{
    if (cache__has_memory(d) && maccrt_managed_owns(p, 1))
        return (void *)p;
    cache__lock_take();
    maccrt_dentry *e = cache__find(d, (uintptr_t)p, 0);
    void *r = e ? maccrt_translate(e->dev_start, e->node.start, p) : NULL;
    cache__lock_drop();
    return r;
}

int maccrt_map_associate(maccrt_device *d, const void *host, void *dev, size_t bytes)
{
    if (!host || !dev || !bytes)
        return EINVAL;
    MACC_Map m = {.start = (void *)host, .bytes = bytes};
    uintptr_t a, b;
    maccrt_section(&m, &a, &b);
    cache__lock_take();
    for (;;) {
        int partial;
        maccrt_dentry *e = cache__lookup_idle(d, a, b, &partial);
        if (e) {
            /* the same association again is fine; anything else is not */
            int same = !partial && e->assoc && e->node.start == a && e->node.end == b &&
                       e->dev_start == dev;
            cache__lock_drop();
            return same ? 0 : EINVAL;
        }
        if (cache__has_memory(d) && cache__evict(d, a, b, NULL))
            continue;
        break;
    }
    maccrt_dentry *e = cache__entry_alloc();
    e->node.start = a;
    e->node.end = b;
    e->dev = d;
    e->dev_start = dev;
    e->name = "(associated)";
    e->assoc = 1;
    e->held = 1;
    e->valid = 1;
    cache__tree_add(e);
    atomic_fetch_add(&d->dheld, 1);
    if (cache__has_memory(d)) { /* tasks using it run on d (the affinity rule) */
        e->pinned = 1;
        atomic_fetch_add(&cache__npinned, 1);
    }
    cache__lock_drop();
    return 0;
}

int maccrt_map_disassociate(maccrt_device *d, const void *host)
{
    cache__lock_take();
    maccrt_dentry *e;
    for (;;) {
        e = (maccrt_dentry *)maccrt_rtree_find(&d->dtree, (uintptr_t)host);
        if (e && e->held && cache__claim_blocked(e, CACHE__EXCL)) {
            cache__cv_wait();
            continue;
        }
        break;
    }
    if (!e || !e->assoc || e->node.start != (uintptr_t)host) {
        cache__lock_drop();
        return EINVAL;
    }
    cache__dirty_drop(e, e->node.start, e->node.end);
    cache__detach(e);
    cache__lock_drop();
    return 0;
}

maccrt_mask maccrt_dir_affinity(const maccrt_task *t)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_mask aff = 0;
    if (atomic_load(&cache__npinned) == 0)
        return 0;
    cache__lock_take();
    for (int di = 0; di < rt->ndevices; di++) {
        maccrt_device *d = rt->devices[di];
        if (!cache__has_memory(d) || atomic_load(&d->dheld) == 0)
            continue;
        for (int i = 0; i < t->nmaps && !(aff & MACCRT_BIT(di)); i++) {
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
            for (maccrt_rnode *r = a < b ? maccrt_rtree_first_overlap(&d->dtree, a, b) : NULL;
                 r && r->start < b; r = maccrt_rtree_next_below(&d->dtree, r, b))
                if (((maccrt_dentry *)r)->pinned) {
                    aff |= MACCRT_BIT(di);
                    break;
                }
        }
    }
    cache__lock_drop();
    return aff;
}

/* ---- tasks' maps ------------------------------------------------------------------------ */

/* A GPU task's map of a section with no held entry around it: the coherent
 * copy of cached entries. NULL when a held entry appeared in the way while
 * it waited (the caller looks again). */
static void *cache__acquire_cached(maccrt_device *d, const MACC_Map *m, void **handle,
                                   const MACC_SrcLoc *loc)
{
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int to = (m->kind & MACC_MAP_TO) != 0;
    cache__plan p = {0};
    maccrt_dentry *e = NULL;
    for (;;) {
        int partial, held_busy;
        if (cache__lookup(d, a, b, &partial, &held_busy)) {
            cache__plan_free(&p);
            return NULL;
        }
        maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b);
        if (r && r->start <= a && b <= r->end) {
            e = (maccrt_dentry *)r;
            if (e->excl) {
                cache__plan_reset(&p);
                cache__wait_on(e);
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
                p.start = 1;
                cache__plan_commit(&p);
                cache__plan_run(&p, loc);
                cache__plan_written_back(&p);
                e->valid = 1;
                cache__plan_release(&p, 0);
            }
            break;
        }
        if (!r) {
            e = cache__new_filled(d, a, b, m->name, to, loc);
            break;
        }
        /* Overlaps entries of d without lying in one: merge them when idle. */
        uintptr_t ua = a, ub = b;
        int busy = 0;
        for (maccrt_rnode *n = r; n && n->start < b; n = maccrt_rtree_next_below(&d->dtree, n, b)) {
            maccrt_dentry *o = (maccrt_dentry *)n;
            busy |= o->users > 0 || o->excl || o->wb || o->shared;
            if (n->start < ua)
                ua = n->start;
            if (n->end > ub)
                ub = n->end;
        }
        if (busy) {
            /* An entry of its own, detached from the start: filled from the
             * current host copy, written through at the end. */
            cache__host_current(NULL, d, a, b, loc);
            e = cache__new(d, a, b, m->name, 0, 1, loc);
            if (to) {
                cache__lock_drop();
                maccrt_copy(d, 1, e->dev_start, (void *)a, b - a, m->name, loc);
                cache__lock_take();
            }
            e->excl = 0;
            cache__wake(e);
            break;
        }
        for (maccrt_rnode *n = r; n && n->start < b; n = maccrt_rtree_next_below(&d->dtree, n, b)) {
            maccrt_dentry *o = (maccrt_dentry *)n;
            cache__plan_wb(&p, o, o->node.start, o->node.end, 1);
        }
        cache__plan_apply(&p, loc, 1);
        e = cache__new_filled(d, ua, ub, m->name, to || ua != a || ub != b, loc); /* the parts outside S must be valid */
        break;
    }
    if (!cache__unlocked) /* (else published and used under d's part, the lock dropped: cache__publish_part) */
        e->users++;
    cache__plan_free(&p);
    *handle = e;
    return maccrt_translate(e->dev_start, e->node.start, m->base);
}

static void *cache__task_acquire_dir(maccrt_device *d, const MACC_Map *m, int *took, void **handle,
                                     const MACC_SrcLoc *loc);

void *maccrt_map_task_acquire(maccrt_device *d, const MACC_Map *m, int *took, void **handle,
                              const MACC_SrcLoc *loc)
{
    int kind = m->kind;
    int shared = !cache__has_memory(d);
    int section = m->bytes > 0 && !(kind & (MACC_MAP_DEVICEPTR | MACC_MAP_ATTACH));
    int managed = section && maccrt_managed_owns(m->start, m->bytes);
    *took = MACCRT_TOOK_NONE;
    *handle = NULL;
    if (managed)
        maccrt_managed_note_use(d, m->start, m->bytes, (kind & MACC_MAP_FROM) != 0);
    if (shared) {
        /* the host: a reference on a held entry around it, and the host copy
         * made current (the directory's write-backs) */
        void *r = cache__acquire_ref(d, m, MACCRT_REF_STRUCTURED, 1, took, loc);
        if (section && !managed) {
            maccrt_cache_host_acquire(m, loc);
            *took |= MACCRT_TOOK_HOST;
        }
        return r;
    }
    if (managed) {
        /* managed memory is present everywhere: a prefetch, no copy */
        if (kind & MACC_MAP_TO)
            maccrt_managed_prefetch(d, m->start, m->bytes, 0, 0);
        return m->base;
    }
    if (kind & MACC_MAP_DEVICEPTR)
        return m->base;
    if (!section) {
        /* zero-length or attach: a pointer into a present section, or into a
         * section another map of the task holds */
        const void *p = m->bytes ? m->start : m->base;
        cache__lock_take();
        maccrt_dentry *e = cache__find(d, (uintptr_t)p, 1);
        void *r = e ? maccrt_translate(e->dev_start, e->node.start, m->base) : m->base;
        if ((!e || !e->held) && (kind & MACC_MAP_PRESENT))
            cache__not_present(d, m, loc);
        cache__lock_drop();
        if (!e)
            cache__usm_check(d, m, p, loc);
        return r;
    }
    cache__lock_take();
    void *r = cache__task_acquire_dir(d, m, took, handle, loc);
    if (cache__unlocked)
        cache__unlocked = 0; /* (dropped already: cache__publish_part) */
    else
        cache__lock_drop();
    return r;
}

/* Whether m of a task on d goes through the directory (cache__task_acquire_dir):
 * a section of a GPU task, not managed memory, not a device pointer. */
static int cache__task_dir_map(maccrt_device *d, const MACC_Map *m)
{
    return cache__has_memory(d) && m->bytes > 0 &&
           !(m->kind & (MACC_MAP_DEVICEPTR | MACC_MAP_ATTACH)) &&
           !maccrt_managed_owns(m->start, m->bytes);
}

/* maccrt_map_task_acquire's directory path: cache__lock held, and held again
 * at return (released while it waits or copies), unless cache__unlocked is
 * set (a new entry published under d's part: the caller clears it). */
static void *cache__task_acquire_dir(maccrt_device *d, const MACC_Map *m, int *took, void **handle,
                                     const MACC_SrcLoc *loc)
{
    int kind = m->kind;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    for (;;) {
        int partial;
        maccrt_dentry *e = cache__lookup_idle(d, a, b, &partial);
        if (e && (partial || e->perm || e->assoc || !cache__present(e))) {
            /* errors, declare target variables and associations: the present
             * table's own path (a reference for the task's duration) */
            cache__lock_drop();
            maccrt_device *sc = cache__scope; /* (the present table's path: the whole lock) */
            cache__scope = NULL;
            void *r = cache__acquire_ref(d, m, MACCRT_REF_STRUCTURED, 1, took, loc);
            cache__scope = sc;
            cache__lock_take();
            return r;
        }
        if (e) {
            /* inside a data construct's entry: used as it is */
            if ((kind & MACC_MAP_ALWAYS) && (kind & MACC_MAP_TO)) {
                if (cache__claim_blocked(e, CACHE__EXCL)) {
                    cache__cv_wait();
                    continue;
                }
                cache__copy_held(e, 1, a, b, m->name, loc);
            }
            e->users++;
            *handle = e;
            *took = MACCRT_TOOK_DIR;
            return maccrt_translate(e->dev_start, e->node.start, m->base);
        }
        if (kind & MACC_MAP_PRESENT)
            cache__not_present(d, m, loc);
        if (kind & MACC_MAP_NOCREATE)
            return m->base;
        void *r = cache__acquire_cached(d, m, handle, loc);
        if (!*handle)
            continue;
        *took = MACCRT_TOOK_DIR;
        return r;
    }
}

/* MACC_MAP_BUSY_LAST=0: a task's maps are taken in their order, each waited
 * for in turn (see maccrt_map_task_acquire_n). */
static int cache__busy_last(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_MAP_BUSY_LAST", 1);
}

/* Whether taking m on d now would wait for another thread's claim on d's
 * entry there (a fill in flight, mostly). cache__lock held. */
static int cache__map_busy(maccrt_device *d, const MACC_Map *m)
{
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    /* through the section index when it serves: a section d does not hold
     * yet (a tile's first use there) cost a walk of d's whole tree, then
     * another for its fill (5% of the helpers' own time on four fake GPUs) */
    cache__ovl o = cache__ovl_of(a, b);
    maccrt_dentry *e = cache__ovl_first(&o, d, a, b);
    return e && e->excl;
}

/* d's dlock held alone (cache__dev_lockable): m, a directory map of a task
 * on d (cache__task_dir_map), taken as cache__task_acquire_dir would take it
 * when that touches only d's own entry: an idle held entry of a data
 * construct around it, or a cached entry containing it, not claimed
 * exclusively and valid when the task reads it. Returns 0 (nothing done)
 * otherwise: the whole lock's path decides. */
static int cache__acquire_fast(maccrt_device *d, const MACC_Map *m, void **ptr, void **handle)
{
    int kind = m->kind;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int partial, busy;
    maccrt_dentry *e = cache__lookup(d, a, b, &partial, &busy);
    if (e) {
        if (busy || partial || e->perm || e->assoc || !cache__present(e) ||
            ((kind & MACC_MAP_ALWAYS) && (kind & MACC_MAP_TO)))
            return 0;
    } else {
        if (kind & (MACC_MAP_PRESENT | MACC_MAP_NOCREATE))
            return 0;
        maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b);
        if (!r || r->start > a || b > r->end)
            return 0;
        e = (maccrt_dentry *)r;
        if (e->excl || ((kind & MACC_MAP_TO) && !e->valid))
            return 0;
    }
    e->users++;
    *handle = e;
    *ptr = maccrt_translate(e->dev_start, e->node.start, m->base);
    return 1;
}

/* ---- first uses beside cache__lock ---------------------------------------------------------
 *
 * A section's first use on a GPU that another device already holds (a new
 * entry filled from a peer's valid copy, or from the host when no other
 * copy holds dirty bytes) took cache__lock: with four and eight fake GPUs
 * (bench/dispatch.sh, 32 cores) each GPU filled most tiles, cache__lock was
 * held about once per task and busy the whole run (eight GPUs: a helper
 * waited 68 us per task for it; they dispatched 2.3 times what one did).
 * Such a first use reads the section's record in the index, its source's
 * entry, and (for a fill from the host) the other copies, and adds its own
 * entry to its tree and to the record: here it holds its own device's part
 * and tries the parts of the devices whose entries it reads (a try: it
 * waits for nothing while it holds a part, as every thread holding parts
 * without cache__lock; a try that fails leaves the map to cache__lock),
 * under cache__sxlk while it looks the record up and tries them (the
 * record cannot go while one of its entries' parts is held). Then the
 * record's lock for its slot. What it changes (its device's tree, its new
 * entry, claimed exclusively until published, the source's shared claim, a
 * record slot under the record's lock) others read under the same part or
 * that lock; a holder of cache__lock reads a record's slot under the
 * record's lock and takes the slot's device's part before its entry's
 * fields (cache__ovl_first). A slot filled while a holder of cache__lock
 * looks at the same section is a copy that was not there when it looked, as
 * if made after it: only two tasks that use the section with no order
 * between them, one writing it, see that. Then the allocation, the copy
 * and the publication as cache__new_filled's path under the part.
 * A section's first use anywhere (no record, none of another shape over
 * it) makes its record here too, under cache__sxlk, and fills from the host:
 * with the index serving, no record means no copy anywhere (every entry is
 * in its section's record; the index is turned off with every part held, so
 * it is asked again once d's part is held). Holders of cache__lock look
 * records up under cache__sxlk too (cache__ovl_of, cache__sx_add: the
 * look-up and the insertion at once, so two first uses never make two
 * records); one that found none and fills from the host while a first use
 * here makes the record is the case above, two tasks without an order.
 * With eight fake GPUs these were 768 of about 1600 holds of cache__lock
 * per 4096 tasks. MACC_DIR_NEW_PART=0: they take cache__lock.
 * A record of another shape, an entry of d there, dirty bytes to write
 * home first, a source claimed exclusively, MACC_PEER_WAIT: cache__lock's
 * way. MACC_DIR_FIRST_PART=0: every first use takes cache__lock. */
static int cache__first_on(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_DIR_FIRST_PART", 1);
}

/* MACC_DIR_NEW_PART=0: a section's first use anywhere (its record made)
 * takes cache__lock. */
static int cache__new_part_on(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_DIR_NEW_PART", 1);
}

/* Tries device i's part (held records in *held): 1 when held now. */
static int cache__part_try(int i, maccrt_mask *held)
{
    if (*held & MACCRT_BIT(i))
        return 1;
    if (maccrt_lock_try(&maccrt_rt.devices[i]->dlock) != 0)
        return 0;
    *held |= MACCRT_BIT(i);
    return 1;
}

/* Gives back the parts of mask m. */
static void cache__parts_give(maccrt_mask m)
{
    while (m) {
        int i = __builtin_ctzll(m);
        m &= m - 1;
        cache__dev_drop(maccrt_rt.devices[i]);
    }
}

/* Whether g, another device's entry in the record of [a, b) (g's part
 * held), is a source cache__plan_fill would copy from into d: a valid
 * cached copy, not claimed exclusively, that a peer copy can read. */
static int cache__first_src_ok(const maccrt_device *d, const maccrt_dentry *g)
{
    return g->dev != d && !g->held && g->valid && g->dev_start && !g->excl && cache__peer_ok(d, g->dev) &&
           cache__dev_lockable(g->dev);
}

/* The record of exactly [a, b) with d's slot free, its entries' parts
 * tried (cache__sxlk held; x's lock taken here): *src, the first source in
 * device order from d's next (the sources spread over the devices), or NULL
 * when none is and every other entry's part is held now with no dirty
 * bytes (a fill from the host, if `to`). Returns 0 when the map is left to
 * cache__lock (the parts taken stay in *held, given back by the caller). */
static int cache__first_plan(cache__sx *x, maccrt_device *d, int to, maccrt_mask *held, maccrt_dentry **src)
{
    int num = d->num, n = x->cap, ok = 1;
    *src = NULL;
    cache__sx_lock(x);
    if (num >= n || x->on[num])
        ok = 0;
    /* (an entry's fields read once its part is held, but its device, set
     * before it entered the record) */
    for (int k = 1; ok && to && k < n && !*src; k++) {
        int i = (num + k) % n;
        maccrt_dentry *g = x->on[i];
        if (!g || g->dev != maccrt_rt.devices[i] || !cache__dev_lockable(g->dev))
            continue;
        if (!cache__part_try(i, held))
            continue; /* (a fill from the host, below, then needs it: left to cache__lock) */
        if (cache__first_src_ok(d, g))
            *src = g;
    }
    /* from the host: every other copy looked at, none dirty (their bytes
     * would go home first) nor valid for a peer copy (claimed exclusively,
     * which cache__plan_fill waits for) */
    for (int i = 0; ok && to && !*src && i < n; i++) {
        maccrt_dentry *g = x->on[i];
        if (!g || g->dev == d)
            continue;
        if (g->dev != maccrt_rt.devices[i] || !(*held & MACCRT_BIT(i)))
            ok = 0;
        else if (!g->held && (g->ndirty > 0 || (g->valid && g->dev_start && cache__peer_ok(d, g->dev))))
            ok = 0;
    }
    cache__sx_unlock(x);
    return ok;
}

/* m, a directory map of a task on d that the fast path did not take
 * (cache__acquire_fast), taken as a first use beside cache__lock (above):
 * 1 with *ptr and *handle set (the entry published and used), 0 with
 * nothing done. */
static int cache__first_part(maccrt_device *d, const MACC_Map *m, void **ptr, void **handle,
                             const MACC_SrcLoc *loc)
{
    if ((m->kind & (MACC_MAP_PRESENT | MACC_MAP_NOCREATE)) || !cache__first_on() || !cache__scope_of(d) ||
        cache__peer_wait() || !cache__index_serves() || atomic_load(&d->dheld) > 0)
        return 0;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int to = (m->kind & MACC_MAP_TO) != 0, num = d->num, other;
    maccrt_mask held = MACCRT_BIT(num);
    cache__dev_take(d);
    maccrt_dentry *src = NULL, *e = cache__entry_alloc();
    e->node.start = a;
    e->node.end = b;
    e->dev = d;
    e->name = m->name;
    e->excl = 1; /* (claimed: nobody uses it before cache__publish_part) */
    /* d holds nothing there (else the exclusive way waits or merges), and the
     * record exists with d's slot free: its entries' parts tried, and e in
     * it before cache__sxlk goes (the record then stays: cache__sx_del) */
    /* (the index asked again with d's part held: it is turned off with every
     * part held, cache__sx_add, and a record made once it is off would say
     * "nothing anywhere" of a section other devices hold) */
    int ok = maccrt_rtree_first_overlap(&d->dtree, a, b) == NULL && cache__index_serves();
    cache__sx *x, *fresh = NULL;
    for (;;) {
        cache__spin_take(&cache__sxlk);
        x = ok ? cache__sx_exact(a, b, &other) : NULL;
        if (x || !ok || other || fresh || !cache__new_part_on())
            break;
        /* no record: the section's first use anywhere, its record made here
         * (taken from the pool without cache__sxlk, then looked for again) */
        cache__spin_drop(&cache__sxlk);
        fresh = cache__sx_fresh(a, b);
    }
    int made = ok && !x && !other && fresh; /* (d->num < the table's size: cache__scope_of) */
    if (made) {
        maccrt_rtree_insert(&cache__sxtree, &fresh->node);
        x = fresh;
        fresh = NULL;
    } else {
        ok = x && cache__first_plan(x, d, to, &held, &src);
    }
    if (ok) {
        cache__sx_lock(x);
        x->on[num] = e;
        x->n++;
        cache__sx_unlock(x);
    }
    cache__spin_drop(&cache__sxlk);
    if (fresh)
        cache__sx_put(fresh);
    if (!ok) {
        cache__parts_give(held);
        cache__entry_put(e);
        return 0;
    }
    e->sx = x;
    maccrt_rtree_insert(&d->dtree, &e->node);
    atomic_fetch_add(&cache__ncached, 1);
    cache__plan p = {0};
    p.start = 1; /* (a task's map: see "asynchronous fills") */
    if (src) {
        cache__plan_claim(&p, src, CACHE__SHARED);
        cache__plan_job(&p, CACHE__PEER, e, src, a, b);
    } else if (to) {
        cache__plan_job(&p, CACHE__FILL, e, NULL, a, b);
    }
    cache__plan_commit(&p);
    cache__plan_filling(&p, 1);
    d->dfirst++;
    d->dmade += made;
    cache__parts_give(held);
    void *mem = cache__new_copied(d, e, &p, loc);
    cache__publish_part(d, e, &p, mem, to);
    cache__plan_free(&p);
    *handle = e;
    *ptr = maccrt_translate(mem, a, m->base);
    return 1;
}

/* d's dlock held (cache__dev_lockable): a GPU task's write of the whole of
 * e, a cached entry of the index's record x, ends while other devices hold
 * cached copies of it (cache__release_fast): those copies made stale as
 * cache__invalidate would (their dirty bytes, all inside the section,
 * superseded; detached), under their parts tried beside cache__lock
 * (cache__first_part's rules: every part beside d's is a try, and a copy
 * claimed by anyone leaves it to cache__lock). With four and eight fake
 * GPUs these writes (matmul's C tiles after a chain moved) were most of
 * what took cache__lock at a task's end. Entries freed here go on this
 * thread's list (cache__free_pending once d's part is dropped). Returns 0
 * (nothing done) otherwise. */
static int cache__make_stale(maccrt_device *d, const MACC_Map *m, maccrt_dentry *e, cache__sx *x, uintptr_t a,
                             uintptr_t b)
{
    if ((m->kind & MACC_MAP_ALWAYS) || !cache__first_on() || a != e->node.start || b != e->node.end)
        return 0;
    maccrt_dentry *stale[MACCRT_MAX_DEVICES];
    maccrt_mask held = 0;
    int ns = 0, ok = 1;
    cache__sx_lock(x); /* (its slots stay: each other entry's part is held once tried) */
    for (int i = 0; i < x->cap && ok; i++) {
        maccrt_dentry *g = x->on[i];
        if (!g || g == e)
            continue;
        /* (its fields read once its part is held, but its device) */
        if (g->dev != maccrt_rt.devices[i] || !cache__dev_lockable(g->dev) || !cache__part_try(i, &held))
            ok = 0;
        else if (!g->held && cache__claim_blocked(g, CACHE__EXCL))
            ok = 0;
        else if (!g->held)
            stale[ns++] = g;
    }
    cache__sx_unlock(x);
    for (int k = 0; ok && k < ns; k++) {
        cache__dirty_drop(stale[k], stale[k]->node.start, stale[k]->node.end);
        cache__detach(stale[k]);
    }
    d->dstale += ok;
    cache__parts_give(held);
    return ok;
}

/* d's dlock held: the end of a GPU task's use of e for m, as
 * cache__release_dir_locked would make it when that touches only e (d's
 * dlock alone): a read, or a write into a held entry (recorded dirty) or
 * into a cached entry no other device holds a cached copy of (nothing to
 * invalidate); or, for a write of all of e, when the other copies can be
 * made stale beside cache__lock (cache__make_stale). Returns 0 (nothing
 * done) otherwise. */
static int cache__release_fast(maccrt_device *d, const MACC_Map *m, maccrt_dentry *e)
{
    if (e->detached)
        return 0; /* (freed when unused: the whole lock's path) */
    if (!(m->kind & MACC_MAP_FROM)) {
        e->users--;
        return 1;
    }
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    if (e->held) {
        if (m->kind & MACC_MAP_ALWAYS)
            return 0;
        cache__dirty_add(e, a, b);
        e->users--;
        return 1;
    }
    if (e->excl)
        return 0;
    /* what cache__invalidate(d, d, a, b) would find: other devices' cached
     * entries over [a, b). With the index on, those are the others of e's
     * own record (every entry over e's bytes has e's section then): read
     * there, under the record's own lock, not through the index's tree, which
     * a scoped hold of cache__lock may change without d's part. */
    if (cache__index_serves()) {
        cache__sx *x = e->sx;
        if (!x)
            return 0;
        int other = 0;
        cache__sx_lock(x); /* (its other entries may come and go meanwhile: cache__sx_add) */
        for (int i = 0; i < x->cap && !other; i++)
            other = x->on[i] && x->on[i] != e && !x->on[i]->held;
        cache__sx_unlock(x);
        if (other && !cache__make_stale(d, m, e, x, a, b))
            return 0;
    } else {
        cache__ovl o = cache__ovl_of(a, b);
        for (int i = 0; i < maccrt_rt.ndevices; i++) {
            maccrt_device *x = maccrt_rt.devices[i];
            if (x == d || !cache__has_memory(x))
                continue;
            for (maccrt_dentry *f = cache__ovl_first(&o, x, a, b); f; f = cache__ovl_next(&o, f, b))
                if (!f->held)
                    return 0;
        }
    }
    cache__dirty_add(e, a, b);
    if (a == e->node.start && b == e->node.end)
        e->valid = 1;
    e->users--;
    return 1;
}

/* The task's kernels on d come after the fills of its entries that other
 * threads started (its own are on its stream). */
static void cache__order_after_fills(maccrt_device *d, int n, const int *took, void *const *handles)
{
    for (int i = 0; i < n; i++) {
        if (took[i] != MACCRT_TOOK_DIR)
            continue;
        maccrt_dentry *e = handles[i];
        int mine = 0;
        for (int k = 0; k < cache__nmine && !mine; k++)
            mine = cache__mine[k] == e;
        if (!mine)
            cache__fence_order(d, e);
    }
}

/* cache__task_acquire_dir for a map of a run of directory maps: the scoped
 * lock taken first unless *locked, and *locked cleared when it returned with
 * the lock dropped (a new entry published under d's part: cache__unlocked). */
static void *cache__acquire_in_run(maccrt_device *d, const MACC_Map *m, int *took, void **handle,
                                   const MACC_SrcLoc *loc, int *locked)
{
    if (!*locked) {
        cache__lock_take_scoped(d);
        *locked = 1;
    }
    void *r = cache__task_acquire_dir(d, m, took, handle, loc);
    if (cache__unlocked) {
        cache__unlocked = 0;
        *locked = 0;
    }
    return r;
}

/* All n maps of a task on d: the directory's ones under one hold of its lock
 * (a matmul task's three tiles took the lock three times to acquire and
 * three times to release; with two GPUs' helpers that lock was the limit),
 * the others as maccrt_map_task_acquire does, in order. Within a run of
 * directory maps, those whose entry another thread is filling now are taken
 * after the others: the helpers that ran matmul's tasks (i, j, k) for j =
 * 0, 1, ... one after the other all waited for the one filling A(i, k),
 * each before filling its own B(k, j) (unpinned tiles on two H200s: 2.5 of
 * each GPU's 8 helpers waiting for data, 1.4 copying); taken after, B(k, j)
 * is filled while A(i, k) is. The order of the maps does not matter to
 * their meaning (a map that is not the directory's, which may point into
 * an earlier one's section, still comes after every earlier map). */
static void cache__acquire_n(maccrt_device *d, int n, const MACC_Map *maps, void **ptrs, int *took,
                             void **handles, const MACC_SrcLoc *loc)
{
    /* first, under d's dlock alone, the maps that touch only d's entries */
    uint64_t fast = 0; /* maps 0..63 taken so */
    if (cache__dev_lockable(d)) {
        int locked = 0, nfast = 0;
        for (int i = 0; i < n && i < 64; i++) {
            if (!cache__task_dir_map(d, &maps[i]))
                continue;
            if (!locked) {
                cache__dev_take(d);
                locked = 1;
            }
            took[i] = MACCRT_TOOK_NONE;
            handles[i] = NULL;
            if (cache__acquire_fast(d, &maps[i], &ptrs[i], &handles[i])) {
                took[i] = MACCRT_TOOK_DIR;
                fast |= (uint64_t)1 << i;
                nfast++;
            }
        }
        if (locked) {
            d->dfast += nfast;
            cache__dev_drop(d);
        }
        if (nfast == n)
            return;
        /* then first uses beside cache__lock (cache__first_part); with
         * MACC_MAP_BUSY_LAST=0 only up to the first map they cannot take
         * (the rest in order, each waited for) */
        int in_order = n > 1 && !cache__busy_last();
        for (int i = 0; i < n && i < 64; i++) {
            if (((fast >> i) & 1) || !cache__task_dir_map(d, &maps[i]))
                continue;
            if (cache__first_part(d, &maps[i], &ptrs[i], &handles[i], loc)) {
                took[i] = MACCRT_TOOK_DIR;
                fast |= (uint64_t)1 << i;
                nfast++;
            } else if (in_order) {
                break;
            }
        }
        if (nfast == n)
            return;
    }
    int locked = 0, busy_last = n > 1 && cache__busy_last();
    int later[8], nlater = 0; /* busy maps of the current run, left for its end */
    for (int i = 0; i <= n; i++) {
        if (i < 64 && ((fast >> i) & 1))
            continue;
        const MACC_Map *m = &maps[i < n ? i : 0];
        int dir = i < n && cache__task_dir_map(d, m);
        if (!dir && nlater) {
            /* the end of a run of directory maps: its busy ones now, waited for */
            for (int k = 0; k < nlater; k++) {
                int j = later[k];
                ptrs[j] = cache__acquire_in_run(d, &maps[j], &took[j], &handles[j], loc, &locked);
            }
            nlater = 0;
        }
        if (i == n)
            break;
        if (!dir) {
            if (locked) {
                cache__lock_drop_scoped();
                locked = 0;
            }
            ptrs[i] = maccrt_map_task_acquire(d, m, &took[i], &handles[i], loc);
            continue;
        }
        took[i] = MACCRT_TOOK_NONE;
        handles[i] = NULL;
        if (!locked) {
            cache__lock_take_scoped(d);
            locked = 1;
        }
        if (busy_last && nlater < (int)(sizeof later / sizeof *later) && cache__map_busy(d, m)) {
            later[nlater++] = i;
            continue;
        }
        ptrs[i] = cache__acquire_in_run(d, m, &took[i], &handles[i], loc, &locked);
    }
    if (locked)
        cache__lock_drop_scoped();
}

/* cache__acquire_n, then the task's kernels ordered after the fills of its
 * entries that other threads left on their way ("asynchronous fills"). */
void maccrt_map_task_acquire_n(maccrt_device *d, int n, const MACC_Map *maps, void **ptrs, int *took,
                               void **handles, const MACC_SrcLoc *loc)
{
    cache__nmine = 0;
    cache__acquire_n(d, n, maps, ptrs, took, handles, loc);
    if (d->plugin->fence_order)
        cache__order_after_fills(d, n, took, handles);
    cache__nmine = 0;
}

/* Maps 0..n-1 that cache__acquire_fast took, given back as a read's end
 * (nothing was written through them), d's part held. */
static void cache__untake_locked(int n, int *took, void **handles)
{
    for (int i = 0; i < n; i++) {
        if (took[i] == MACCRT_TOOK_DIR)
            ((maccrt_dentry *)handles[i])->users--;
        took[i] = MACCRT_TOOK_NONE;
        handles[i] = NULL;
    }
}

void maccrt_map_task_untake_n(maccrt_device *d, int n, int *took, void **handles)
{
    cache__dev_take(d);
    cache__untake_locked(n, took, handles);
    cache__dev_drop(d);
}

/* A task launched ahead of its predecessor's end (task.c, "Launch-ahead"):
 * every one of its n maps taken as cache__acquire_fast takes it, under d's
 * part alone (no copy, no wait, no new entry), or none: 1 when all were
 * taken (the task's kernels then ordered after the fills other threads left
 * on their way), 0 with nothing held. A map that reads needs d's copy valid
 * now: the predecessor still running may be about to write it, and only a
 * copy made before its kernels (read after them on the same stream) is
 * right to read. */
int maccrt_map_task_try_fast_n(maccrt_device *d, int n, const MACC_Map *maps, void **ptrs, int *took,
                               void **handles)
{
    if (n > 64 || !cache__dev_lockable(d))
        return 0;
    for (int i = 0; i < n; i++)
        if (!cache__task_dir_map(d, &maps[i]))
            return 0;
    cache__dev_take(d);
    int i = 0;
    for (; i < n; i++) {
        took[i] = MACCRT_TOOK_NONE;
        handles[i] = NULL;
        if (!cache__acquire_fast(d, &maps[i], &ptrs[i], &handles[i]))
            break;
        took[i] = MACCRT_TOOK_DIR;
    }
    if (i < n)
        cache__untake_locked(i, took, handles);
    else
        d->dfast += n;
    cache__dev_drop(d);
    if (i < n)
        return 0;
    cache__nmine = 0;
    if (d->plugin->fence_order)
        cache__order_after_fills(d, n, took, handles);
    return 1;
}

/* The end of a GPU task's use of entry e for m. */
static void cache__release_dir_locked(maccrt_device *d, const MACC_Map *m, maccrt_dentry *e,
                                      const MACC_SrcLoc *loc)
{
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    int from = (m->kind & MACC_MAP_FROM) != 0;
    if (from && e->held && !e->detached) {
        /* a data construct's entry: the device copy is authoritative; the
         * write is recorded (update from / the exit copy it home) */
        cache__dirty_add(e, a, b);
        if (m->kind & MACC_MAP_ALWAYS) {
            while (cache__claim_blocked(e, CACHE__EXCL))
                cache__cv_wait();
            if (!e->detached)
                cache__copy_held(e, 0, a, b, m->name, loc);
        }
    } else if (from) {
        cache__invalidate(d, d, a, b, loc);
        while (e->excl) /* being invalidated by another writer of overlapping bytes */
            cache__cv_wait();
        if (e->detached) {
            /* written through; copies made since of these bytes are stale */
            cache__lock_drop();
            maccrt_copy(d, 0, (void *)a, maccrt_translate(e->dev_start, e->node.start, (void *)a),
                        b - a, m->name, loc);
            cache__lock_take();
            cache__invalidate(NULL, d, a, b, loc);
        } else {
            cache__dirty_add(e, a, b);
            if (a == e->node.start && b == e->node.end)
                e->valid = 1;
        }
    }
    e->users--;
    cache__maybe_free(e);
}

static void cache__release_dir(maccrt_device *d, const MACC_Map *m, maccrt_dentry *e,
                               const MACC_SrcLoc *loc)
{
    cache__lock_take();
    cache__release_dir_locked(d, m, e, loc);
    cache__lock_drop();
}

/* The n maps of maccrt_map_task_acquire_n given back, last first; those that
 * took only a directory entry under one hold of its lock. */
void maccrt_map_task_release_n(maccrt_device *d, int n, const MACC_Map *maps, const int *took,
                               void *const *handles, const MACC_SrcLoc *loc)
{
    if (d->plugin->fence_done) /* (see "asynchronous fills") */
        for (int i = 0; i < n; i++)
            if (took[i] == MACCRT_TOOK_DIR)
                cache__fence_check(handles[i]);
    /* first, under d's dlock alone, those whose end touches only d's entry */
    uint64_t fast = 0; /* maps 0..63 given back so */
    if (cache__dev_lockable(d)) {
        int locked = 0, nfast = 0;
        for (int i = (n < 64 ? n : 64) - 1; i >= 0; i--) {
            if (took[i] != MACCRT_TOOK_DIR)
                continue;
            if (!locked) {
                cache__dev_take(d);
                locked = 1;
            }
            if (cache__release_fast(d, &maps[i], handles[i])) {
                fast |= (uint64_t)1 << i;
                nfast++;
            }
        }
        if (locked) {
            d->dfast += nfast;
            cache__dev_drop(d);
            if (cache__tofree)
                cache__free_pending(); /* (copies cache__make_stale detached) */
        }
        if (nfast == n)
            return;
    }
    int locked = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (i < 64 && ((fast >> i) & 1))
            continue;
        if (took[i] != MACCRT_TOOK_DIR) {
            if (locked) {
                cache__lock_drop_scoped();
                locked = 0;
            }
            maccrt_map_task_release(d, &maps[i], took[i], handles[i], loc);
            continue;
        }
        if (!locked) {
            cache__lock_take_scoped(d);
            locked = 1;
        }
        cache__release_dir_locked(d, &maps[i], handles[i], loc);
    }
    if (locked)
        cache__lock_drop_scoped();
}

void maccrt_map_task_release(maccrt_device *d, const MACC_Map *m, int took, void *handle,
                             const MACC_SrcLoc *loc)
{
    if (took & MACCRT_TOOK_HOST)
        maccrt_cache_host_release(m, loc);
    if (took & MACCRT_TOOK_DIR)
        cache__release_dir(d, m, handle, loc);
    if (took & MACCRT_TOOK_REF)
        maccrt_map_release(d, m, MACCRT_REF_STRUCTURED, 0, loc);
}

/* ---- tasks on the host ---------------------------------------------------------------------- */

void maccrt_cache_host_acquire(const MACC_Map *m, const MACC_SrcLoc *loc)
{
    if (atomic_load(&cache__ndirty) == 0)
        return;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    cache__lock_take();
    cache__host_current(NULL, NULL, a, b, loc);
    cache__lock_drop();
}

void maccrt_cache_host_release(const MACC_Map *m, const MACC_SrcLoc *loc)
{
    if (!(m->kind & MACC_MAP_FROM) || atomic_load(&cache__ncached) == 0)
        return;
    uintptr_t a, b;
    maccrt_section(m, &a, &b);
    cache__lock_take();
    cache__invalidate(NULL, NULL, a, b, loc);
    cache__lock_drop();
}

/* ---- synchronisation points --------------------------------------------------------------- */

/* The flush at a synchronisation point writes every dirty range home while
 * no task runs: matmul's C tiles, 128 MiB, took the last 2.5-3 ms of a 28 ms
 * run on two H100s with both GPUs idle. A task whose output nothing waits
 * for (task.c: no successor, its creator already waiting) has it written
 * home here instead, by the helper that ran it, while the other tasks run.
 * The entry is claimed exclusively for the copy (a task that maps it after
 * all waits for it, as for a fill) and stays valid. */
size_t maccrt_cache_write_early(maccrt_device *d, uintptr_t a, uintptr_t b, const MACC_SrcLoc *loc)
{
    if (!cache__has_memory(d) || b <= a || atomic_load(&cache__ndirty) == 0 || atomic_load(&maccrt_rt.fatal))
        return 0;
    size_t bytes = 0;
    /* a scoped hold (d's part with the global one; another device's part
     * only where the plan reaches it): every part taken by each early
     * write-back held every GPU's fast paths twice per write-back (eight
     * fake GPUs: 512 of the global part's ~850 holds per 4096 tasks) */
    cache__lock_take_scoped(d);
    maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, a, b);
    maccrt_dentry *e = (maccrt_dentry *)r;
    if (r && r->start <= a && b <= r->end && !e->held && e->users == 0 && !e->excl && !e->wb &&
        !e->shared && (bytes = cache__dirty_bytes(e, a, b)) > 0) {
        cache__plan p = {.early = 1};
        cache__plan_wb(&p, e, a, b, 1);
        if (!p.blocked) {
            cache__plan_apply(&p, loc, 0);
            atomic_fetch_add(&cache__nearly, 1);
        } else {
            bytes = 0;
        }
        cache__plan_free(&p);
    }
    cache__lock_drop_scoped();
    return bytes;
}

maccrt_dirty_range *maccrt_cache_dirty_idle(size_t *n)
{
    *n = 0;
    if (atomic_load(&cache__ndirty) == 0 || atomic_load(&cache__ncached) == 0)
        return NULL; /* (nothing dirty, or only data constructs' entries: no walk) */
    maccrt_dirty_range *out = NULL;
    maccrt_rnode **ents = NULL;
    size_t k = 0, cap = 0, capents = 0;
    cache__lock_take();
    for (int d = 0; d < maccrt_rt.ndevices; d++) {
        maccrt_device *x = maccrt_rt.devices[d];
        if (!cache__has_memory(x) || x->dtree.count == 0)
            continue;
        size_t m = cache__collect(&x->dtree, &ents, &capents);
        for (size_t i = 0; i < m; i++) {
            const maccrt_dentry *e = (const maccrt_dentry *)ents[i];
            if (e->held || e->ndirty == 0 || e->users || e->excl || e->wb || e->shared)
                continue;
            if (k == cap) {
                cap = cap ? 2 * cap : 64;
                out = maccrt_xrealloc(out, cap * sizeof *out);
            }
            out[k++] = (maccrt_dirty_range){x, e->node.start, e->node.end};
        }
    }
    cache__lock_drop();
    free(ents);
    *n = k;
    return out;
}

/* Whether no device but the n of devs has anything in its tree. */
static int cache__only_trees(maccrt_device *const *devs, int n)
{
    for (int d = 0; d < maccrt_rt.ndevices; d++) {
        const maccrt_device *x = maccrt_rt.devices[d];
        int in = 0;
        for (int i = 0; i < n && !in; i++)
            in = devs[i] == x;
        if (!in && x->dtree.count > 0)
            return 0;
    }
    return 1;
}

/* ---- synchronisation points ------------------------------------------------------------------
 *
 * Each flush bumps the epoch first: work deferred before it (a completed
 * task's early write-backs waiting for an idle helper, task.c) reads the
 * epoch it was deferred in and does nothing after the flush, which wrote
 * everything home already. */
static atomic_ulong cache__epoch = 1;

unsigned long maccrt_cache_epoch(void)
{
    return atomic_load(&cache__epoch);
}

static void cache__flush(maccrt_device *also);

void maccrt_cache_flush(maccrt_device *also)
{
    atomic_fetch_add(&cache__epoch, 1);
    cache__flush(also);
}

/* The synchronisation point's write-backs and the end of every cached copy
 * (the program may write the host's bytes next, which the directory does
 * not see). Every cached entry of the devices is claimed exclusively at
 * once (none may be claimed by another thread: the flush waits for those
 * first), the dirty bytes written home by the devices' own threads, then the
 * entries leave; a device whose tree holds nothing else is emptied at once.
 * Through the plan's general path (claims looked up one by one, a tree walk
 * by maccrt_rtree_next from the root per entry, each entry's removal from
 * the treap) one fake GPU's 768 tiles took 0.8 ms of a 42 ms run of
 * bench/dispatch, four fake GPUs' 1.5-1.9 ms of 15 (bench/RESULTS.md,
 * thirtieth session). */
static void cache__flush(maccrt_device *also)
{
    if (atomic_load(&cache__ncached) == 0)
        return;
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    maccrt_rnode **ents[MACCRT_MAX_DEVICES + 1] = {0};
    size_t nent[MACCRT_MAX_DEVICES + 1], nours[MACCRT_MAX_DEVICES + 1], cap[MACCRT_MAX_DEVICES + 1] = {0};
    int whole[MACCRT_MAX_DEVICES + 1];
    cache__plan p = {0};
    double f0 = maccrt_trace_on() ? maccrt_now() : 0.0;
    cache__lock_take();
    int n = cache__devices(also, devs);
    for (;;) {
        const maccrt_dentry *busy = NULL;
        for (int i = 0; i < n && !busy; i++) {
            nent[i] = cache__collect(&devs[i]->dtree, &ents[i], &cap[i]);
            for (size_t k = 0; k < nent[i] && !busy; k++) {
                const maccrt_dentry *e = (const maccrt_dentry *)ents[i][k];
                if (!e->held && cache__claim_blocked(e, CACHE__EXCL))
                    busy = e;
            }
        }
        if (!busy)
            break;
        cache__wait_on(busy);
    }
    /* held entries stay, with their dirty bytes; the others are claimed */
    for (int i = 0; i < n; i++) {
        size_t m = 0;
        for (size_t k = 0; k < nent[i]; k++) {
            maccrt_dentry *e = (maccrt_dentry *)ents[i][k];
            if (e->held)
                continue;
            e->excl = 1;
            for (int j = 0; j < e->ndirty; j++)
                cache__plan_job(&p, CACHE__WB, e, NULL, e->dirty[j].a, e->dirty[j].b);
            ents[i][m++] = &e->node;
        }
        nours[i] = m;
    }
    cache__plan_run(&p, NULL); /* (the lock dropped for the copies: the claims keep the entries) */
    /* a tree all ours (no held entry, nothing added during the copies) is
     * emptied at once; every tree so: the section index goes too, at once */
    int all = 1;
    for (int i = 0; i < n; i++) {
        whole[i] = nours[i] == devs[i]->dtree.count;
        all &= whole[i];
    }
    if (all && cache__only_trees(devs, n)) {
        /* every record is some entry's here: freed by its last one (a walk
         * of the index's own tree read each record's line once more); under
         * cache__sxlk, which the residency term's look holds without any
         * part (cache__seen_by_parts) */
        cache__spin_take(&cache__sxlk);
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < nours[i]; k++) {
                maccrt_dentry *e = (maccrt_dentry *)ents[i][k];
                cache__sx *x = e->sx;
                e->sx = NULL;
                if (x && --x->n == 0)
                    cache__sx_put(x);
            }
        maccrt_rtree_clear(&cache__sxtree);
        cache__spin_drop(&cache__sxlk);
    }
    for (int i = 0; i < n; i++) {
        if (whole[i])
            maccrt_rtree_clear(&devs[i]->dtree);
        for (size_t k = 0; k < nours[i]; k++) {
            maccrt_dentry *e = (maccrt_dentry *)ents[i][k];
            e->excl = 0;
            cache__signal(cache__keyof(e)); /* (before e may be freed) */
            cache__dirty_drop(e, e->node.start, e->node.end);
            if (whole[i]) {
                cache__sx_del(e); /* (nothing left to do when the index went at once) */
                cache__detach_rest(e);
            } else {
                cache__detach(e);
            }
        }
        free(ents[i]);
    }
    cache__signal(CACHE__NKEYS);
    cache__lock_drop();
    if (f0 > 0.0 && p.njob > 0) /* (MACC_TRACE) a "data" slice of the host: the whole synchronisation */
        maccrt_trace_event(MACCRT_TRACE_DATA, maccrt_rt.host, "flush", f0, maccrt_now(), 0);
    cache__plan_free(&p);
}

long maccrt_cache_entries(const maccrt_device *d, long *dirty)
{
    maccrt_dir_info info;
    maccrt_dir_info_get(d, &info);
    if (dirty)
        *dirty = info.cached_dirty;
    return info.cached;
}

void maccrt_dir_info_get(const maccrt_device *d, maccrt_dir_info *out)
{
    memset(out, 0, sizeof *out);
    cache__lock_take();
    for (maccrt_rnode *r = maccrt_rtree_first_overlap(&d->dtree, 0, UINTPTR_MAX); r;
         r = maccrt_rtree_next(&d->dtree, r)) {
        maccrt_dentry *e = (maccrt_dentry *)r;
        if (e->held) {
            out->held++;
            out->pinned += e->pinned;
            out->held_dirty += e->ndirty > 0;
        } else {
            out->cached++;
            out->cached_dirty += e->ndirty > 0;
        }
    }
    out->early = atomic_load(&cache__nearly);
    out->fast = d->dfast;
    out->first = d->dfirst;
    out->made = d->dmade;
    out->stale = d->dstale;
    cache__lock_drop();
}

void maccrt_dir_device_fini(maccrt_device *d)
{
    cache__lock_take();
    while (d->dtree.root) {
        maccrt_dentry *e = (maccrt_dentry *)d->dtree.root;
        cache__tree_del(e);
        if (e->held)
            atomic_fetch_sub(&d->dheld, 1);
        else
            atomic_fetch_sub(&cache__ncached, 1);
        if (e->ndcounted)
            atomic_fetch_sub(&cache__ndirty, 1);
        cache__unpin(e);
        if (e->users == 0 && !e->excl && !e->wb && !e->shared) {
            free(e->dirty);
            free(e); /* the device goes away with its memory */
        } else {
            e->detached = 1; /* still in use (a test's device): freed by its user */
            e->ndcounted = 0;
        }
    }
    cache__lock_drop();
}

/* ---- residency: what the scheduler's estimate adds ----------------------------------------- */

static double cache__bw(double bw)
{
    return bw > 0 ? bw : MACCRT_DEFAULT_BW;
}

/* Gives back what cache__move_times read the directory under: every
 * device's part (try: cache__parts_try) or the whole lock. */
static void cache__read_drop(int try)
{
    if (try)
        cache__parts_drop(maccrt_rt.ndevices);
    else
        cache__lock_drop();
}

/* What device dev's copies of [a, b) mean to the residency term: whether
 * one holds it whole and valid (here), as a cached copy (source: a peer
 * copy's), and the time to pull its dirty bytes in it home (pull). */
typedef struct cache__seen {
    int here, source;
    double pull;
} cache__seen;

static void cache__seen_of(const maccrt_dentry *e, const maccrt_device *dev, uintptr_t a, uintptr_t b,
                           cache__seen *h)
{
    int whole = e->node.start <= a && b <= e->node.end;
    if (whole && e->valid)
        h->here = 1;
    if (e->held)
        return; /* a data construct's copy: not the current value */
    if (whole && e->valid)
        h->source = 1;
    h->pull += (double)cache__dirty_bytes(e, a, b) / cache__bw(atomic_load(&dev->bw_d2h));
}

/* The residency term's look at [a, b) through the index, one device's part
 * at a time: under cache__sxlk (the record stays: records go under it), each
 * holder's part tried and its entry read under it (a slot set while its
 * device's part is held holds a live entry, cache__sx_slot), then given
 * back. The walk's looks held every device's part at once (cache__parts_try)
 * and stopped every GPU's maps meanwhile; a look now stops one device's, a
 * part at a time, and none of the other GPUs' beside it. 0, or -1 when a
 * part is busy, or 1 when records of other shapes lie over [a, b) (the
 * caller walks the trees). */
static int cache__seen_by_parts(uintptr_t a, uintptr_t b, maccrt_device **devs, int n, cache__seen *h)
{
    int other, ok = 1;
    cache__spin_take(&cache__sxlk);
    cache__sx *x = cache__sx_exact(a, b, &other);
    for (int i = 0; !other && x && i < n; i++) {
        maccrt_device *dev = devs[i];
        if (!cache__sx_slot(x, dev))
            continue;
        if (maccrt_lock_try(&dev->dlock) != 0) {
            ok = 0;
            break;
        }
        maccrt_dentry *e = cache__sx_slot(x, dev);
        if (e)
            cache__seen_of(e, dev, a, b, &h[i]);
        cache__dev_drop(dev);
    }
    cache__spin_drop(&cache__sxlk);
    return other ? 1 : ok ? 0 : -1;
}

/* MACC_DIR_LOOK_PARTS=0: the residency term's try holds every device's part
 * for its look (the index serving or not). */
static int cache__look_parts_on(void)
{
    static int on = -1;
    return maccrt_env_flag(&on, "MACC_DIR_LOOK_PARTS", 1);
}

static int cache__move_times(const maccrt_task *t, maccrt_mask want, double *out, int try)
{
    maccrt_runtime *rt = &maccrt_rt;
    for (int d = 0; d < rt->ndevices; d++)
        if (want & MACCRT_BIT(d))
            out[d] = 0;
    if (atomic_load(&cache__ncached) == 0) {
        /* nothing cached anywhere: every section a GPU lacks comes from the host */
        int gpus = 0;
        for (int d = 0; d < rt->ndevices; d++)
            gpus |= (want & MACCRT_BIT(d)) && cache__has_memory(rt->devices[d]);
        if (!gpus)
            return 0;
    }
    maccrt_device *devs[MACCRT_MAX_DEVICES + 1];
    /* managed sections, asked before the lock (the allocator's own locks) */
    char managed[t->nmaps > 0 ? t->nmaps : 1];
    for (int k = 0; k < t->nmaps; k++)
        managed[k] = t->maps[k].bytes && maccrt_managed_owns(t->maps[k].start, t->maps[k].bytes);
    /* a try with the index serving: a part at a time (cache__seen_by_parts) */
    int parts = try && cache__index_serves() && cache__look_parts_on();
    if (!try)
        cache__lock_take();
    else if (!parts && cache__parts_try() != 0)
        return -1;
    int n = cache__devices(NULL, devs);
    int at[MACCRT_MAX_DEVICES + 1]; /* device number -> its place in devs, or -1 */
    for (int d = 0; d < rt->ndevices; d++)
        at[d] = -1;
    for (int i = 0; i < n; i++)
        if (devs[i]->num >= 0 && devs[i]->num < rt->ndevices)
            at[devs[i]->num] = i;
    for (int k = 0; k < t->nmaps; k++) {
        const MACC_Map *m = &t->maps[k];
        if (!(m->kind & MACC_MAP_TO) || !m->bytes || (m->kind & (MACC_MAP_DEVICEPTR | MACC_MAP_ATTACH)))
            continue;
        uintptr_t a, b;
        maccrt_section(m, &a, &b);
        if (managed[k]) {
            /* managed memory: no directory entry; its pages are where the
             * placement records say (one GPU, else the host), and move to
             * the device that runs the task (GPU to GPU over the peer
             * link's measured bandwidth, or the host's when none) */
            maccrt_mask on;
            if (maccrt_managed_holders(a, b, try, &on) < 0) {
                if (!parts)
                    cache__read_drop(try);
                return -1;
            }
            for (int d = 0; d < rt->ndevices; d++) {
                if (!(want & MACCRT_BIT(d)))
                    continue;
                maccrt_device *dev = rt->devices[d];
                if (!cache__has_memory(dev)) { /* the host: pages on a GPU come back */
                    if (on)
                        out[d] += (double)(b - a) /
                                  cache__bw(atomic_load(&rt->devices[__builtin_ctzll(on)]->bw_d2h));
                } else if (!(on & MACCRT_BIT(d))) {
                    double p2p = atomic_load(&dev->bw_p2p);
                    out[d] += (double)(b - a) / (on && p2p > 0 ? p2p : cache__bw(atomic_load(&dev->bw_h2d)));
                }
            }
            continue;
        }
        /* per GPU i: an entry holding the whole section valid (here: nothing
         * moves; a cached one: a source of a peer copy), and its dirty bytes
         * in the section, timed back to the host over i's link */
        cache__seen h[MACCRT_MAX_DEVICES + 1];
        memset(h, 0, sizeof h);
        int look = parts ? cache__seen_by_parts(a, b, devs, n, h) : 1;
        if (look < 0)
            return -1;
        if (look > 0) {
            /* the trees (or records of other shapes over [a, b)): every part
             * at once, as without the index */
            if (parts && cache__parts_try() != 0)
                return -1;
            cache__ovl o = cache__ovl_of(a, b);
            for (int i = 0; i < n; i++)
                for (maccrt_dentry *e = cache__ovl_first(&o, devs[i], a, b); e; e = cache__ovl_next(&o, e, b))
                    cache__seen_of(e, devs[i], a, b, &h[i]);
            if (parts)
                cache__parts_drop(rt->ndevices);
        }
        double pull_all = 0;
        int nsrc = 0, srcs[MACCRT_MAX_DEVICES + 1]; /* the devices holding S valid and cached */
        for (int i = 0; i < n; i++) {
            pull_all += h[i].pull;
            if (h[i].source)
                srcs[nsrc++] = i;
        }
        for (int d = 0; d < rt->ndevices; d++) {
            if (!(want & MACCRT_BIT(d)))
                continue;
            maccrt_device *dev = rt->devices[d];
            int self = at[d];
            if (self < 0) { /* the host: the dirty bytes come back */
                out[d] += pull_all;
                continue;
            }
            if (h[self].here)
                continue;
            int peer = 0;
            for (int j = 0; j < nsrc && !peer; j++)
                peer = srcs[j] != self && cache__peer_ok(dev, devs[srcs[j]]);
            if (peer)
                out[d] += (double)(b - a) / cache__bw(atomic_load(&dev->bw_p2p));
            else
                out[d] += pull_all - h[self].pull + (double)(b - a) / cache__bw(atomic_load(&dev->bw_h2d));
        }
    }
    if (!parts)
        cache__read_drop(try);
    return 0;
}

int maccrt_cache_index_on(void)
{
    cache__lock_take();
    int on = !cache__sx_off;
    cache__lock_drop();
    return on;
}

void maccrt_cache_index_use(int use)
{
    cache__lock_take();
    __atomic_store_n(&cache__sx_unused, !use, __ATOMIC_RELAXED); /* (read by cache__first_part) */
    cache__lock_drop();
}

double maccrt_cache_move_time(const maccrt_task *t, maccrt_device *d)
{
    double v[MACCRT_MAX_DEVICES];
    cache__move_times(t, MACCRT_BIT(d->num), v, 0);
    return v[d->num];
}

double maccrt_cache_move_time_try(const maccrt_task *t, maccrt_device *d)
{
    double v[MACCRT_MAX_DEVICES];
    return cache__move_times(t, MACCRT_BIT(d->num), v, 1) < 0 ? -1 : v[d->num];
}

int maccrt_cache_move_times_try(const maccrt_task *t, maccrt_mask want, double *out)
{
    return cache__move_times(t, want, out, 1);
}
