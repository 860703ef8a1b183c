/* managed.c: the allocator behind `macc --managed` (MACC_malloc & co., through api.c).
 *
 * With a GPU (a plugin with managed_alloc) the memory is CUDA managed memory,
 * usable at the same address on the host and on every GPU; without one it is
 * ordinary host memory, so the same program runs anywhere.
 *
 * The pool (PGI's -ta=tesla:managed pool allocator, seed 000): memory is taken
 * from the backend in chunks of MACC_POOL_CHUNK bytes and served in
 * power-of-two size classes from MACC_POOL_MIN to MACC_POOL_MAX. A class
 * carves its blocks out of slabs (1 MiB, or one block when the class is
 * larger) cut from the chunks; a freed block goes on its class's stack of
 * free blocks and is handed out again first (LIFO: the block most likely
 * still on the device). Requests above MACC_POOL_MAX, and every request with
 * MACC_POOL=0, go straight to the backend. Bookkeeping is kept out of the
 * blocks (the free stacks and the slab table are host memory), so allocating
 * and freeing never touch managed pages: a pool that migrated to the GPU stays
 * there (the 356.sp pattern of seed 000).
 *
 * The cap: the pool never asks the backend for more than MACC_MANAGED_CAP
 * bytes in all (default: the GPU's free memory at the first allocation minus
 * MACC_MANAGED_MARGIN, default 10% of its memory and at least 256 MiB). Past
 * it an allocation fails as malloc does (NULL, errno ENOMEM), or with
 * MACC_MANAGED_FALLBACK=host is served from the C library's heap; never a
 * hang, never an oversubscribed GPU.
 *
 * maccrt_managed_free of a pointer the pool did not hand out goes to free(3), so memory
 * from libraries or untranslated files can be freed in translated ones.
 *
 * Locks: one per size class (its stack and slab), one for the chunks, one for
 * the large allocations; none is held while calling the backend's free. The
 * fast path (a block on the class's stack) is one lock and a pop.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MP_UNIT_SHIFT 20 /* slab unit: 1 MiB */
#define MP_UNIT ((size_t)1 << MP_UNIT_SHIFT)
#define MP_MAX_CLASSES 40
#define MP_MAX_CHUNKS 4096

typedef struct mp_chunk {
    uintptr_t base;
    size_t size, used;
    unsigned char *unit_class; /* per unit: class + 1 of the slab starting there, 0 if none */
} mp_chunk;

typedef struct mp_class {
    pthread_mutex_t lock;
    size_t size;
    void **stack; /* free blocks */
    size_t nfree, capfree;
    uintptr_t cur, end; /* the slab being carved */
    long blocks;        /* blocks carved so far */
} mp_class;

typedef struct mp_large {
    maccrt_rnode node; /* [p, p + size) */
} mp_large;

static struct {
    pthread_once_t once;
    int on;                  /* MACC_POOL */
    size_t chunk, min, max;  /* MACC_POOL_CHUNK / MIN / MAX */
    size_t cap;              /* backend bytes allowed (SIZE_MAX: no cap) */
    int fallback_host;       /* MACC_MANAGED_FALLBACK=host */
    maccrt_device *gpu;      /* the backend's device (NULL: host memory) */
    int nclasses, minshift;
    mp_class classes[MP_MAX_CLASSES];
    pthread_mutex_t chunk_lock; /* chunks, nchunks, reserved */
    mp_chunk chunks[MP_MAX_CHUNKS];
    int nchunks;
    atomic_size_t reserved;  /* bytes taken from the backend (chunks + large) */
    pthread_mutex_t large_lock;
    maccrt_rtree large;
    atomic_long backend_allocs, backend_frees, fallbacks, cap_refusals;
} mp = {.once = PTHREAD_ONCE_INIT};

/* ---- settings ------------------------------------------------------------------------------ */

/* "64", "64k", "16M", "1G" (binary multiples); 0 when invalid. */
static size_t mp__size(const char *s, size_t dflt)
{
    if (!s || !*s)
        return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || end == s)
        maccrt_fatal(NULL, "invalid size '%s' in the managed pool settings (expected e.g. 64, 64K, 16M, 1G)", s);
    return (size_t)v;
}

static size_t mp__pow2_ceil(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

size_t maccrt_managed_margin(size_t total)
{
    size_t dflt = total / 10 > ((size_t)256 << 20) ? total / 10 : ((size_t)256 << 20);
    return mp__size(getenv("MACC_MANAGED_MARGIN"), dflt);
}

static void mp__init(void)
{
    const char *on = getenv("MACC_POOL");
    mp.on = !(on && (!strcmp(on, "0") || !strcasecmp(on, "off") || !strcasecmp(on, "no")));
    mp.chunk = mp__size(getenv("MACC_POOL_CHUNK"), (size_t)256 << 20);
    mp.min = mp__pow2_ceil(mp__size(getenv("MACC_POOL_MIN"), 64));
    mp.max = mp__pow2_ceil(mp__size(getenv("MACC_POOL_MAX"), (size_t)16 << 20));
    if (mp.min < 16)
        mp.min = 16;
    if (mp.max < mp.min)
        mp.max = mp.min;
    if (mp.chunk < MP_UNIT)
        mp.chunk = MP_UNIT;
    const char *fb = getenv("MACC_MANAGED_FALLBACK");
    mp.fallback_host = fb && !strcasecmp(fb, "host");
    mp.minshift = 0;
    while (((size_t)1 << mp.minshift) < mp.min)
        mp.minshift++;
    mp.nclasses = 0;
    for (size_t s = mp.min; s <= mp.max && mp.nclasses < MP_MAX_CLASSES; s <<= 1) {
        mp_class *c = &mp.classes[mp.nclasses++];
        pthread_mutex_init(&c->lock, NULL);
        c->size = s;
    }
    pthread_mutex_init(&mp.chunk_lock, NULL);
    pthread_mutex_init(&mp.large_lock, NULL);
    mp.large.seed = 0x51ed270bu;

    /* The backend: the first GPU whose plugin serves managed memory. */
    for (int i = 0; i < maccrt_rt.ngpus; i++) {
        maccrt_device *d = maccrt_rt.devices[i];
        if (d->plugin->managed_alloc && d->plugin->managed_free) {
            mp.gpu = d;
            break;
        }
    }
    mp.cap = SIZE_MAX;
    const char *cap = getenv("MACC_MANAGED_CAP");
    size_t free_b = 0, total_b = 0;
    if (mp.gpu && mp.gpu->plugin->mem_info && mp.gpu->plugin->mem_info(mp.gpu, &free_b, &total_b) == 0) {
        size_t margin = maccrt_managed_margin(total_b);
        mp.cap = free_b > margin ? free_b - margin : 0;
        if (cap && *cap) {
            size_t c = mp__size(cap, mp.cap);
            if (c < mp.cap)
                mp.cap = c; /* a cap above the GPU's free memory is not honoured */
        }
    } else if (cap && *cap) {
        mp.cap = mp__size(cap, SIZE_MAX);
    }
}

static void mp__ensure(void)
{
    pthread_once(&mp.once, mp__init);
}

/* ---- the backend ---------------------------------------------------------------------------- */

/* bytes from the backend, within the cap; NULL when refused or failed. */
static void *mp__backend_alloc(size_t bytes)
{
    size_t r = atomic_fetch_add(&mp.reserved, bytes);
    if (r + bytes > mp.cap || r + bytes < r) {
        atomic_fetch_sub(&mp.reserved, bytes);
        atomic_fetch_add(&mp.cap_refusals, 1);
        return NULL;
    }
    void *p;
    if (mp.gpu) {
        p = mp.gpu->plugin->managed_alloc(mp.gpu, bytes);
    } else {
        p = NULL;
        if (posix_memalign(&p, MP_UNIT, bytes) != 0)
            p = NULL;
    }
    if (!p) {
        atomic_fetch_sub(&mp.reserved, bytes);
        return NULL;
    }
    atomic_fetch_add(&mp.backend_allocs, 1);
    return p;
}

static void mp__backend_free(void *p, size_t bytes)
{
    if (mp.gpu)
        mp.gpu->plugin->managed_free(mp.gpu, p);
    else
        free(p);
    atomic_fetch_sub(&mp.reserved, bytes);
    atomic_fetch_add(&mp.backend_frees, 1);
}

/* ---- chunks and slabs ------------------------------------------------------------------------- */

/* A slab of `bytes` (a multiple of MP_UNIT) for class k; chunk_lock taken here. */
static uintptr_t mp__slab(int k, size_t bytes)
{
    pthread_mutex_lock(&mp.chunk_lock);
    mp_chunk *c = mp.nchunks ? &mp.chunks[mp.nchunks - 1] : NULL;
    if (!c || c->size - c->used < bytes) {
        if (mp.nchunks == MP_MAX_CHUNKS) {
            pthread_mutex_unlock(&mp.chunk_lock);
            return 0;
        }
        size_t size = bytes > mp.chunk ? bytes : mp.chunk;
        size = (size + MP_UNIT - 1) & ~(MP_UNIT - 1);
        void *p = mp__backend_alloc(size);
        if (!p && size > bytes) { /* near the cap: a chunk just big enough */
            size = bytes;
            p = mp__backend_alloc(size);
        }
        if (!p) {
            pthread_mutex_unlock(&mp.chunk_lock);
            return 0;
        }
        c = &mp.chunks[mp.nchunks++]; /* lookups scan the (few) chunks */
        c->base = (uintptr_t)p;
        c->size = size;
        c->used = 0;
        c->unit_class = maccrt_xcalloc(size >> MP_UNIT_SHIFT, 1);
    }
    uintptr_t s = c->base + c->used;
    c->unit_class[c->used >> MP_UNIT_SHIFT] = (unsigned char)(k + 1);
    c->used += bytes;
    pthread_mutex_unlock(&mp.chunk_lock);
    return s;
}

/* The class of the pooled slab holding address a (its start in *slab), or
 * -1 if a is in no chunk's used part (mp.chunk_lock held). */
static int mp__slab_at(uintptr_t a, uintptr_t *slab)
{
    for (int i = 0; i < mp.nchunks; i++) {
        mp_chunk *c = &mp.chunks[i];
        if (a < c->base || a >= c->base + c->used)
            continue;
        /* the slab holding a starts at the nearest marked unit at or before it */
        size_t u = (a - c->base) >> MP_UNIT_SHIFT;
        while (u > 0 && !c->unit_class[u])
            u--;
        if (!c->unit_class[u])
            return -1;
        *slab = c->base + (u << MP_UNIT_SHIFT);
        return c->unit_class[u] - 1;
    }
    return -1;
}

/* The class of pooled block p (its size in *size), or -1 if p is not one. */
static int mp__lookup(const void *p, size_t *size)
{
    uintptr_t a = (uintptr_t)p, slab = 0;
    int k = -1;
    pthread_mutex_lock(&mp.chunk_lock);
    int cls = mp__slab_at(a, &slab);
    if (cls >= 0 && (a - slab) % mp.classes[cls].size == 0) {
        k = cls;
        *size = mp.classes[cls].size;
    }
    pthread_mutex_unlock(&mp.chunk_lock);
    return k;
}

/* Is [p, p + bytes) inside memory the allocator took from its backend? */
static int mp__owned_range(const void *p, size_t bytes)
{
    uintptr_t a = (uintptr_t)p, b = a + (bytes ? bytes : 1);
    int r = 0;
    pthread_mutex_lock(&mp.chunk_lock);
    for (int i = 0; i < mp.nchunks && !r; i++)
        r = a >= mp.chunks[i].base && b <= mp.chunks[i].base + mp.chunks[i].used;
    pthread_mutex_unlock(&mp.chunk_lock);
    if (r)
        return 1;
    pthread_mutex_lock(&mp.large_lock);
    maccrt_rnode *n = maccrt_rtree_find(&mp.large, a);
    r = n && b <= n->end;
    pthread_mutex_unlock(&mp.large_lock);
    return r;
}

static int mp__class_of(size_t n)
{
    size_t s = mp.min;
    int k = 0;
    while (s < n) {
        s <<= 1;
        k++;
    }
    return k;
}

/* ---- allocation --------------------------------------------------------------------------- */

/* gator's prefetch at allocation (seed 002): with MACC_MANAGED_PREFETCH_ALLOC=1
 * a large block (one past the pool's classes: the arrays of a program) is
 * prefetched to the backend's GPU when it is allocated, so that a GPU that
 * touches it first does not fault its pages in one by one. Off by default:
 * on the programs measured, which initialise their arrays on the host, it
 * gained nothing (two H200s: STREAM 0.99 of first touch, Jacobi within its
 * spread; bench/managed.sh's at-alloc column, docs/MEMORY.md). */
static int mp__prefetch_alloc(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("MACC_MANAGED_PREFETCH_ALLOC");
        on = v && (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes"));
    }
    return on;
}

static void *mp__large(size_t n)
{
    size_t size = n ? n : 1;
    void *p = mp__backend_alloc(size);
    if (!p)
        return NULL;
    mp_large *l = maccrt_xcalloc(1, sizeof *l);
    l->node.start = (uintptr_t)p;
    l->node.end = (uintptr_t)p + size;
    pthread_mutex_lock(&mp.large_lock);
    maccrt_rtree_insert(&mp.large, &l->node);
    pthread_mutex_unlock(&mp.large_lock);
    if (mp.gpu && mp.gpu->plugin->prefetch && mp__prefetch_alloc() && maccrt_managed_hints())
        mp.gpu->plugin->prefetch(mp.gpu, p, size, 0);
    return p;
}

static void *mp__pooled(size_t n)
{
    int k = mp__class_of(n ? n : 1);
    mp_class *c = &mp.classes[k];
    pthread_mutex_lock(&c->lock);
    void *p = NULL;
    if (c->nfree) {
        p = c->stack[--c->nfree];
    } else {
        if (c->cur + c->size > c->end || !c->cur) {
            size_t slab = c->size > MP_UNIT ? c->size : MP_UNIT;
            slab = (slab + MP_UNIT - 1) & ~(MP_UNIT - 1);
            uintptr_t s = mp__slab(k, slab);
            if (!s) {
                pthread_mutex_unlock(&c->lock);
                return NULL;
            }
            c->cur = s;
            c->end = s + slab;
        }
        p = (void *)c->cur;
        c->cur += c->size;
        c->blocks++;
    }
    pthread_mutex_unlock(&c->lock);
    return p;
}

static void *mp__alloc(size_t n)
{
    mp__ensure();
    void *p = mp.on && n <= mp.max ? mp__pooled(n) : mp__large(n);
    if (!p && mp.fallback_host) {
        atomic_fetch_add(&mp.fallbacks, 1);
        p = malloc(n ? n : 1); /* not ours: maccrt_managed_free hands it to free(3) */
    }
    if (!p)
        errno = ENOMEM;
    else
        maccrt_placement_prepare(); /* the GPUs' migration measured now, not at the first launch */
    return p;
}

/* Size of a block the allocator handed out (0: not ours). */
static size_t mp__block_size(const void *p)
{
    size_t size = 0;
    if (mp__lookup(p, &size) >= 0)
        return size;
    pthread_mutex_lock(&mp.large_lock);
    maccrt_rnode *n = maccrt_rtree_find(&mp.large, (uintptr_t)p);
    if (n && n->start == (uintptr_t)p)
        size = n->end - n->start;
    pthread_mutex_unlock(&mp.large_lock);
    return size;
}

/* The block the allocator handed out that holds address a: [*start, *start + *size). */
static int mp__block_of(uintptr_t a, uintptr_t *start, size_t *size)
{
    int found = 0;
    uintptr_t slab = 0;
    pthread_mutex_lock(&mp.chunk_lock);
    int cls = mp__slab_at(a, &slab);
    if (cls >= 0) {
        size_t bs = mp.classes[cls].size;
        *start = slab + (a - slab) / bs * bs;
        *size = bs;
        found = 1;
    }
    pthread_mutex_unlock(&mp.chunk_lock);
    if (found)
        return 1;
    pthread_mutex_lock(&mp.large_lock);
    maccrt_rnode *n = maccrt_rtree_find(&mp.large, a);
    if (n) {
        *start = n->start;
        *size = n->end - n->start;
        found = 1;
    }
    pthread_mutex_unlock(&mp.large_lock);
    return found;
}

int maccrt_managed_block(const void *p, void **start, size_t *size)
{
    if (!p || atomic_load(&mp.reserved) == 0)
        return 0;
    uintptr_t s;
    if (!mp__block_of((uintptr_t)p, &s, size))
        return 0;
    *start = (void *)s;
    return 1;
}

size_t maccrt_managed_size_setting(const char *value, size_t dflt)
{
    return mp__size(value, dflt);
}

/* ---- the API (macc_rt.h) ---------------------------------------------------------------- */

void *maccrt_managed_malloc(size_t n)
{
    return mp__alloc(n);
}

void *maccrt_managed_calloc(size_t n, size_t m)
{
    if (m && n > SIZE_MAX / m) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = mp__alloc(n * m);
    if (p)
        memset(p, 0, n * m);
    return p;
}

void maccrt_managed_free(void *p)
{
    if (!p)
        return;
    mp__ensure();
    size_t size;
    int k = mp__lookup(p, &size);
    if (k >= 0)
        maccrt_placement_forget(p, size);
    if (k >= 0) {
        mp_class *c = &mp.classes[k];
        pthread_mutex_lock(&c->lock);
        if (c->nfree == c->capfree) {
            c->capfree = c->capfree ? 2 * c->capfree : 64;
            c->stack = maccrt_xrealloc(c->stack, c->capfree * sizeof *c->stack);
        }
        c->stack[c->nfree++] = p;
        pthread_mutex_unlock(&c->lock);
        return;
    }
    pthread_mutex_lock(&mp.large_lock);
    maccrt_rnode *n = maccrt_rtree_find(&mp.large, (uintptr_t)p);
    if (n && n->start == (uintptr_t)p) {
        maccrt_rtree_remove(&mp.large, n);
        pthread_mutex_unlock(&mp.large_lock);
        maccrt_placement_forget(p, n->end - n->start);
        mp__backend_free(p, n->end - n->start);
        free(n);
        return;
    }
    pthread_mutex_unlock(&mp.large_lock);
    free(p); /* not from this allocator */
}

void *maccrt_managed_realloc(void *p, size_t n)
{
    if (!p)
        return maccrt_managed_malloc(n);
    mp__ensure();
    size_t old = mp__block_size(p);
    if (!old)
        return realloc(p, n); /* the C library's block stays the C library's */
    if (n == 0) {
        maccrt_managed_free(p);
        return NULL;
    }
    if (n <= old && (old <= mp.min || n > old / 2))
        return p;
    void *q = mp__alloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    maccrt_managed_free(p);
    return q;
}

void *maccrt_managed_aligned_alloc(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    mp__ensure();
    /* pooled blocks of size s are s-aligned; large blocks are page-aligned */
    if (align <= 4096 || (mp.on && align <= mp.max))
        return mp__alloc(mp.on && n <= mp.max && n < align ? align : n);
    errno = EINVAL;
    return NULL;
}

int maccrt_managed_posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = maccrt_managed_aligned_alloc(align, n);
    if (!p)
        return errno == EINVAL ? EINVAL : ENOMEM;
    *out = p;
    return 0;
}

/* ---- for the rest of the runtime -------------------------------------------------------- */

int maccrt_managed_owns(const void *p, size_t bytes)
{
    /* nothing allocated yet: no lock taken */
    if (atomic_load(&mp.reserved) == 0)
        return 0;
    return mp__owned_range(p, bytes);
}

/* Ranges prefetched to each device since the last prefetch back to the host
 * that overlapped them: a task's map of data already moved there prefetches
 * nothing (a prefetch of resident data still walks its pages: measured on
 * the H100, STREAM's pipelined kernels at 839 GB/s with a prefetch per task
 * against 2846 GB/s with none). A small ring per device; forgetting a range
 * costs one redundant prefetch, never correctness (prefetches are hints). */
#define MP_RECENT 256
static struct {
    pthread_mutex_t lock;
    uintptr_t a[MACCRT_MAX_DEVICES][MP_RECENT], b[MACCRT_MAX_DEVICES][MP_RECENT];
    int next[MACCRT_MAX_DEVICES];
} mp_recent = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The records of [a, b) of every GPU but `keep` (-1: none) go (mp_recent.lock
 * held; only GPUs, numbered 0..ngpus-1, have records). */
static void mp__recent_drop(uintptr_t a, uintptr_t b, int keep)
{
    for (int dv = 0; dv < maccrt_rt.ngpus && dv < MACCRT_MAX_DEVICES; dv++)
        for (int i = 0; dv != keep && i < MP_RECENT; i++)
            if (mp_recent.a[dv][i] < b && a < mp_recent.b[dv][i])
                mp_recent.a[dv][i] = mp_recent.b[dv][i] = 0;
}

void maccrt_managed_prefetch(maccrt_device *d, const void *p, size_t bytes, int to_host, int force)
{
    if (!d->plugin->prefetch || !maccrt_managed_hints() || !bytes)
        return;
    uintptr_t a = (uintptr_t)p, b = a + bytes;
    int n = d->num;
    if (n < 0 || n >= MACCRT_MAX_DEVICES)
        return;
    if (maccrt_placement_active(d)) {
        /* placement.c decides at each launch what goes to the GPU (and keeps
         * it within the budget); a trip back to the host is noted there, and
         * so is an update to the device (the host may have written it: the
         * next launch prefetches it) */
        if (to_host || force)
            maccrt_placement_note_host(p, bytes);
        if (!to_host)
            return;
    }
    pthread_mutex_lock(&mp_recent.lock);
    /* pages are in one place: every other device's record of them goes
     * (all of them on the way to the host) */
    mp__recent_drop(a, b, to_host ? -1 : n);
    if (to_host) {
        pthread_mutex_unlock(&mp_recent.lock);
        d->plugin->prefetch(d, p, bytes, 1);
        return;
    }
    int seen = 0;
    for (int i = 0; i < MP_RECENT && !seen; i++)
        seen = mp_recent.a[n][i] <= a && b <= mp_recent.b[n][i] && mp_recent.b[n][i];
    if (seen && !force) {
        pthread_mutex_unlock(&mp_recent.lock);
        return;
    }
    if (!seen) {
        int k = mp_recent.next[n]++ % MP_RECENT;
        mp_recent.a[n][k] = a;
        mp_recent.b[n][k] = b;
    }
    pthread_mutex_unlock(&mp_recent.lock);
    d->plugin->prefetch(d, p, bytes, 0);
}

int maccrt_managed_holders(uintptr_t a, uintptr_t b, int try, maccrt_mask *out)
{
    *out = 0;
    for (int k = 0; k < maccrt_rt.ngpus; k++)
        if (maccrt_placement_active(maccrt_rt.devices[k]))
            return maccrt_placement_holders(a, b, try, out);
    if (try ? maccrt_lock_try(&mp_recent.lock) != 0 : pthread_mutex_lock(&mp_recent.lock) != 0)
        return -1;
    for (int dv = 0; dv < maccrt_rt.ngpus && dv < MACCRT_MAX_DEVICES; dv++)
        for (int i = 0; i < MP_RECENT; i++)
            if (mp_recent.b[dv][i] && mp_recent.a[dv][i] <= a && b <= mp_recent.b[dv][i]) {
                *out |= MACCRT_BIT(dv);
                break;
            }
    pthread_mutex_unlock(&mp_recent.lock);
    return 0;
}

/* Read-mostly advice: per section used by tasks, the devices that read it
 * since it was last written. */
#define MP_READERS 256
static struct {
    pthread_mutex_t lock;
    uintptr_t a[MP_READERS], b[MP_READERS];
    maccrt_mask readers[MP_READERS];
    int advised[MP_READERS];
    int next;
} mp_rd = {.lock = PTHREAD_MUTEX_INITIALIZER};

void maccrt_managed_note_use(maccrt_device *d, const void *p, size_t bytes, int writes)
{
    mp__ensure();
    maccrt_device *g = mp.gpu;
    if (!g || !g->plugin->advise_read_mostly || !maccrt_managed_hints() || !bytes)
        return;
    uintptr_t a = (uintptr_t)p, b = a + bytes;
    int call = 0, set = 0;
    pthread_mutex_lock(&mp_rd.lock);
    if (writes) {
        /* every section it overlaps is written: advice withdrawn */
        for (int i = 0; i < MP_READERS; i++)
            if (mp_rd.b[i] && mp_rd.a[i] < b && a < mp_rd.b[i]) {
                if (mp_rd.advised[i]) {
                    call = 1;
                    a = mp_rd.a[i] < a ? mp_rd.a[i] : a;
                    b = mp_rd.b[i] > b ? mp_rd.b[i] : b;
                }
                mp_rd.a[i] = mp_rd.b[i] = 0;
                mp_rd.readers[i] = 0;
                mp_rd.advised[i] = 0;
            }
    } else {
        int k = -1;
        for (int i = 0; i < MP_READERS && k < 0; i++)
            if (mp_rd.a[i] == a && mp_rd.b[i] == b)
                k = i;
        if (k < 0) {
            k = mp_rd.next++ % MP_READERS;
            mp_rd.a[k] = a;
            mp_rd.b[k] = b;
            mp_rd.readers[k] = 0;
            mp_rd.advised[k] = 0;
        }
        mp_rd.readers[k] |= MACCRT_BIT(d->num);
        if (!mp_rd.advised[k] && __builtin_popcountll(mp_rd.readers[k]) >= 2) {
            mp_rd.advised[k] = 1;
            call = set = 1;
        }
    }
    pthread_mutex_unlock(&mp_rd.lock);
    if (call)
        g->plugin->advise_read_mostly(g, (void *)a, b - a, set);
}

int maccrt_managed_hints(void)
{
    static int hints = -1;
    return maccrt_env_flag(&hints, "MACC_MANAGED_HINTS", 1);
}

int maccrt_managed_on_gpu(void)
{
    mp__ensure();
    return mp.gpu != NULL;
}

void maccrt_managed_stats(maccrt_managed_info *out)
{
    mp__ensure();
    memset(out, 0, sizeof *out);
    out->on = mp.on;
    out->chunk = mp.chunk;
    out->min = mp.min;
    out->max = mp.max;
    out->cap = mp.cap;
    out->reserved = atomic_load(&mp.reserved);
    out->backend_allocs = atomic_load(&mp.backend_allocs);
    out->backend_frees = atomic_load(&mp.backend_frees);
    out->fallbacks = atomic_load(&mp.fallbacks);
    out->cap_refusals = atomic_load(&mp.cap_refusals);
    out->gpu = mp.gpu != NULL;
    pthread_mutex_lock(&mp.chunk_lock);
    out->chunks = mp.nchunks;
    pthread_mutex_unlock(&mp.chunk_lock);
    for (int k = 0; k < mp.nclasses; k++) {
        pthread_mutex_lock(&mp.classes[k].lock);
        out->pooled_free += (long)mp.classes[k].nfree;
        out->pooled_blocks += mp.classes[k].blocks;
        pthread_mutex_unlock(&mp.classes[k].lock);
    }
}
