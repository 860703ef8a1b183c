/* slab.c: a device's memory handed out in blocks of size classes, cut from
 * larger slabs the device allocates.
 *
 * The directory gives every device copy its own allocation (a tile of a
 * matrix, a block of a vector), and the CUDA plugin used to ask the driver
 * for each one (cudaMallocAsync from the stream-ordered pool, then a wait
 * for the stream). With a few dozen helpers per GPU those calls queue in the
 * driver: matmul's 512 KiB tiles took a median 30-40 us each on one H100
 * and a 90th percentile of 300 us with two GPUs (whose pools are mapped for
 * each other), and 0.5 ms with one GPU split four ways, on the helpers'
 * path to their kernels. Here a block is a pop from a free list under a
 * short lock, and the driver is asked for a slab of many blocks now and then.
 *
 * Size classes: 256, 512 and 1024 bytes, then four per power of two (2^e x
 * 1, 1.25, 1.5, 1.75), so a block wastes at most a fifth of its size; every
 * class is a multiple of 256 bytes, so every block keeps the 256-byte
 * alignment of the slab. Requests above the largest class (max_block) are
 * not slab work: maccrt_slabs_alloc says so and the caller allocates them
 * itself. A class's first slab holds 2 MiB of blocks (at least one block),
 * and each later one twice its predecessor, up to 64 MiB (or one block):
 * few driver calls for a class in heavy use, little kept for one that is
 * not. One thread at a time grows a class; the others that need the class
 * meanwhile wait for its slab instead of asking the driver too. A slab of
 * SLAB__AHEAD_MIN bytes or more is asked for ahead, by the thread whose
 * block leaves fewer than half the last slab's blocks free, so that the
 * others go on with the rest meanwhile: a 32-64 MiB slab took the driver
 * 270-460 us, and every helper of the GPU waited for it (matmul on two
 * H200s: each GPU's 8 helpers in 'alloc' at once 3 times in the first 8 ms).
 * An ahead slab the device refuses is not asked again: the class then grows
 * when empty, trimming first as below.
 *
 * A freed block goes back to its class's free list (the block is found by
 * its slab, in a range tree). Memory stays in the slabs, as the pool kept
 * what it had before; when the device refuses a slab, every slab with no
 * block in use is given back and the slab asked for once more
 * (maccrt_slabs_trim, also for the caller before its own allocation). The
 * caller guarantees what the stream-ordered allocator did not need to know:
 * no device work still uses a block when it is freed (every copy and kernel
 * on device copies is waited for before the directory frees them).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define SLAB__NCLASSES 96
#define SLAB__FIRST ((size_t)2 << 20)  /* a class's first slab: 2 MiB of blocks */
#define SLAB__MAX ((size_t)64 << 20)   /* the largest slab (or one block) */
#define SLAB__AHEAD_MIN ((size_t)16 << 20) /* slabs this large are asked for ahead */

typedef struct slab__slab {
    maccrt_rnode node; /* [base, base + nblocks * its class's size) in the tree */
    unsigned nblocks, nused;
    int cls;
} slab__slab;

typedef struct slab__free {
    void *p;
    slab__slab *sl; /* its slab: an allocation counts its use without a look-up */
} slab__free;

typedef struct slab__class {
    size_t size;
    slab__free *free; /* free blocks, a stack */
    size_t nfree, cap;
    size_t next_bytes; /* the next slab's size */
    int growing;       /* a thread is getting this class a slab */
    unsigned last_nblocks; /* blocks of its last slab */
    int no_ahead;      /* an ahead slab was refused: grow only when empty */
} slab__class;

struct maccrt_slabs {
    pthread_mutex_t lock;
    pthread_cond_t grown;
    maccrt_rtree tree;
    slab__class cls[SLAB__NCLASSES];
    size_t max_block;
    maccrt_slab_get get;
    maccrt_slab_put put;
    size_t bytes_slabs, bytes_used; /* what the slabs hold, what blocks in use hold */
    long nslabs, ngets;
};

/* The class of a request of n bytes (n <= max_block), and its size. */
static int slab__class_of(size_t n, size_t *size)
{
    if (n <= 256) {
        *size = 256;
        return 0;
    }
    if (n <= 512) {
        *size = 512;
        return 1;
    }
    if (n <= 1024) {
        *size = 1024;
        return 2;
    }
    /* 2^e < n <= 2^(e+1), e >= 10: steps of 2^(e-2) above 2^e */
    int e = 63 - __builtin_clzll((unsigned long long)(n - 1));
    size_t base = (size_t)1 << e, step = base >> 2;
    size_t m = (n - base + step - 1) / step; /* 1..4 */
    *size = base + m * step;
    return 3 + (e - 10) * 4 + (int)(m - 1);
}

maccrt_slabs *maccrt_slabs_new(maccrt_slab_get get, maccrt_slab_put put, size_t max_block)
{
    maccrt_slabs *s = maccrt_xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->grown, NULL);
    size_t top = 256;
    if (max_block > SLAB__MAX)
        max_block = SLAB__MAX;
    (void)slab__class_of(max_block < 256 ? 256 : max_block, &top);
    s->max_block = top;
    s->get = get;
    s->put = put;
    return s;
}

size_t maccrt_slabs_max_block(const maccrt_slabs *s)
{
    return s->max_block;
}

/* The slabs with no block in use leave the tree and their blocks the free
 * lists (s->lock held); they are returned as a list through node.left. */
static slab__slab *slab__take_empty(maccrt_slabs *s)
{
    slab__slab *out = NULL;
    maccrt_rnode *n = maccrt_rtree_first_overlap(&s->tree, 0, UINTPTR_MAX);
    while (n) {
        maccrt_rnode *next = maccrt_rtree_next(&s->tree, n);
        slab__slab *sl = (slab__slab *)n;
        if (sl->nused == 0) {
            slab__class *c = &s->cls[sl->cls];
            size_t w = 0;
            for (size_t i = 0; i < c->nfree; i++)
                if (c->free[i].sl != sl)
                    c->free[w++] = c->free[i];
            c->nfree = w;
            maccrt_rtree_remove(&s->tree, n);
            s->bytes_slabs -= sl->node.end - sl->node.start;
            s->nslabs--;
            sl->node.left = (maccrt_rnode *)out;
            out = sl;
        }
        n = next;
    }
    return out;
}

static size_t slab__put_all(maccrt_slabs *s, slab__slab *l, void *ctx)
{
    size_t bytes = 0;
    while (l) {
        slab__slab *n = (slab__slab *)l->node.left;
        bytes += l->node.end - l->node.start;
        s->put(ctx, (void *)l->node.start);
        free(l);
        l = n;
    }
    return bytes;
}

size_t maccrt_slabs_trim(maccrt_slabs *s, void *ctx)
{
    pthread_mutex_lock(&s->lock);
    slab__slab *l = slab__take_empty(s);
    pthread_mutex_unlock(&s->lock);
    return slab__put_all(s, l, ctx);
}

/* Gets class c a slab (s->lock held on entry and exit, dropped meanwhile).
 * Returns 0 when the device had none to give, even after the empty slabs
 * went back (ahead: not asked again, nothing trimmed). */
static int slab__grow(maccrt_slabs *s, int ci, void *ctx, int ahead)
{
    slab__class *c = &s->cls[ci];
    if (!c->next_bytes)
        c->next_bytes = c->size >= SLAB__FIRST ? c->size : SLAB__FIRST / c->size * c->size;
    size_t bytes = c->next_bytes;
    c->growing = 1;
    pthread_mutex_unlock(&s->lock);
    void *p = s->get(ctx, bytes);
    if (!p && !ahead) {
        /* the device is short: what no block uses goes back, then once more,
         * for as little as one block */
        maccrt_slabs_trim(s, ctx);
        bytes = c->size;
        p = s->get(ctx, bytes);
    }
    slab__slab *sl = p ? maccrt_xcalloc(1, sizeof *sl) : NULL;
    pthread_mutex_lock(&s->lock);
    c->growing = 0;
    pthread_cond_broadcast(&s->grown);
    if (!p) {
        c->no_ahead |= ahead;
        return 0;
    }
    s->ngets++;
    sl->node.start = (uintptr_t)p;
    sl->node.end = (uintptr_t)p + bytes;
    sl->nblocks = (unsigned)(bytes / c->size);
    c->last_nblocks = sl->nblocks;
    sl->cls = ci;
    maccrt_rtree_insert(&s->tree, &sl->node);
    s->bytes_slabs += bytes;
    s->nslabs++;
    if (c->cap < c->nfree + sl->nblocks) {
        c->cap = 2 * (c->nfree + sl->nblocks);
        c->free = maccrt_xrealloc(c->free, c->cap * sizeof *c->free);
    }
    /* lowest address on top */
    for (unsigned i = sl->nblocks; i-- > 0;)
        c->free[c->nfree++] = (slab__free){(char *)p + (size_t)i * c->size, sl};
    size_t next = 2 * bytes;
    if (next > SLAB__MAX)
        next = SLAB__MAX / c->size * c->size;
    if (next < c->size)
        next = c->size;
    if (next > c->next_bytes)
        c->next_bytes = next;
    return 1;
}

void *maccrt_slabs_alloc(maccrt_slabs *s, size_t n, void *ctx, int *nomem)
{
    *nomem = 0;
    if (n > s->max_block)
        return NULL;
    size_t size;
    int ci = slab__class_of(n ? n : 1, &size);
    pthread_mutex_lock(&s->lock);
    slab__class *c = &s->cls[ci];
    c->size = size;
    while (c->nfree == 0) {
        if (c->growing) {
            pthread_cond_wait(&s->grown, &s->lock);
            continue;
        }
        if (!slab__grow(s, ci, ctx, 0)) {
            pthread_mutex_unlock(&s->lock);
            *nomem = 1;
            return NULL;
        }
    }
    slab__free f = c->free[--c->nfree];
    f.sl->nused++;
    s->bytes_used += size;
    if (!c->growing && !c->no_ahead && c->next_bytes >= SLAB__AHEAD_MIN && c->nfree < c->last_nblocks / 2)
        (void)slab__grow(s, ci, ctx, 1); /* (f is this thread's already) */
    pthread_mutex_unlock(&s->lock);
    return f.p;
}

int maccrt_slabs_free(maccrt_slabs *s, void *p)
{
    pthread_mutex_lock(&s->lock);
    slab__slab *sl = (slab__slab *)maccrt_rtree_find(&s->tree, (uintptr_t)p);
    if (!sl) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    slab__class *c = &s->cls[sl->cls];
    /* (blocks of several slabs may come back while their slabs were grown
     * with room only for the free blocks of the time) */
    if (c->nfree == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->free = maccrt_xrealloc(c->free, c->cap * sizeof *c->free);
    }
    c->free[c->nfree++] = (slab__free){p, sl};
    sl->nused--;
    s->bytes_used -= c->size;
    pthread_mutex_unlock(&s->lock);
    return 1;
}

void maccrt_slabs_info(maccrt_slabs *s, maccrt_slabs_stat *out)
{
    pthread_mutex_lock(&s->lock);
    out->bytes_slabs = s->bytes_slabs;
    out->bytes_used = s->bytes_used;
    out->nslabs = s->nslabs;
    out->ngets = s->ngets;
    pthread_mutex_unlock(&s->lock);
}
