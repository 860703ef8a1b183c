/* test_slab.c: a device's memory in blocks of size classes cut from slabs
 * (runtime/slab.c), with host memory standing in for the device's. */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The "device": malloc, with a budget to make it run short. */
typedef struct dev {
    pthread_mutex_t lock;
    size_t budget, held;
    long gets, puts, refused;
    size_t last_get;
} dev;

static void *dev_get(void *ctx, size_t bytes)
{
    dev *d = ctx;
    pthread_mutex_lock(&d->lock);
    if (d->held + bytes > d->budget) {
        d->refused++;
        pthread_mutex_unlock(&d->lock);
        return NULL;
    }
    d->held += bytes;
    d->gets++;
    d->last_get = bytes;
    pthread_mutex_unlock(&d->lock);
    void *p = NULL;
    cr_assert_eq(posix_memalign(&p, 4096, bytes), 0);
    /* the size in a side table is not needed: put only counts */
    return p;
}

static size_t dev_bytes_of(void *p);
static void dev_put(void *ctx, void *p)
{
    dev *d = ctx;
    pthread_mutex_lock(&d->lock);
    d->puts++;
    d->held -= dev_bytes_of(p);
    pthread_mutex_unlock(&d->lock);
    free(p);
}

/* slab sizes by address (the tests' own bookkeeping) */
#define MAXSLABS 4096
static struct {
    void *p;
    size_t n;
} slabs_seen[MAXSLABS];
static int nseen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void *dev_get_noted(void *ctx, size_t bytes)
{
    void *p = dev_get(ctx, bytes);
    if (p) {
        pthread_mutex_lock(&seen_lock);
        cr_assert_lt(nseen, MAXSLABS);
        slabs_seen[nseen].p = p;
        slabs_seen[nseen].n = bytes;
        nseen++;
        pthread_mutex_unlock(&seen_lock);
    }
    return p;
}

static size_t dev_bytes_of(void *p)
{
    size_t n = 0;
    pthread_mutex_lock(&seen_lock);
    for (int i = 0; i < nseen; i++)
        if (slabs_seen[i].p == p) {
            n = slabs_seen[i].n;
            slabs_seen[i] = slabs_seen[--nseen];
            break;
        }
    pthread_mutex_unlock(&seen_lock);
    cr_assert_gt(n, 0, "put() is given a slab that get() returned");
    return n;
}

static int in_some_slab(uintptr_t a, uintptr_t b)
{
    for (int i = 0; i < nseen; i++) {
        uintptr_t s = (uintptr_t)slabs_seen[i].p;
        if (a >= s && b <= s + slabs_seen[i].n)
            return 1;
    }
    return 0;
}

static void dev_init(dev *d, size_t budget)
{
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->lock, NULL);
    d->budget = budget;
    nseen = 0;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

Test(slab, blocks_are_aligned_disjoint_inside_slabs_and_no_larger_than_a_fifth_over)
{
    dev d;
    dev_init(&d, (size_t)1 << 34);
    maccrt_slabs *s = maccrt_slabs_new(dev_get_noted, dev_put, (size_t)64 << 20);
    size_t sizes[] = {1, 100, 256, 257, 600, 1024, 1025, 1280, 1281, 3000, 4096, 5000,
                      524288, 524289, 700000, (size_t)2 << 20, (size_t)9 << 20, (size_t)64 << 20};
    enum { K = 6 };
    size_t ns = sizeof sizes / sizeof *sizes;
    uintptr_t lo[sizeof sizes / sizeof *sizes * K][2];
    int n = 0;
    for (size_t i = 0; i < ns; i++) {
        for (int k = 0; k < K; k++) {
            int nomem = 1;
            char *p = maccrt_slabs_alloc(s, sizes[i], &d, &nomem);
            cr_assert_not_null(p, "size %zu", sizes[i]);
            cr_assert_eq(nomem, 0);
            cr_assert_eq((uintptr_t)p % 256, 0, "size %zu: 256-byte aligned", sizes[i]);
            cr_assert(in_some_slab((uintptr_t)p, (uintptr_t)p + sizes[i]), "size %zu: inside a slab", sizes[i]);
            p[0] = 1;
            p[sizes[i] - 1] = 2;
            lo[n][0] = (uintptr_t)p;
            lo[n][1] = (uintptr_t)p + sizes[i];
            n++;
        }
    }
    qsort(lo, (size_t)n, sizeof lo[0], cmp_ptr);
    for (int i = 1; i < n; i++)
        cr_assert_leq(lo[i - 1][1], lo[i][0], "blocks do not overlap");
    maccrt_slabs_stat st;
    maccrt_slabs_info(s, &st);
    size_t asked = 0;
    for (size_t i = 0; i < ns; i++)
        asked += K * (sizes[i] < 256 ? 256 : sizes[i]);
    cr_assert_leq(st.bytes_used, asked + asked / 4, "classes round up by at most a quarter above a power of two");
    cr_assert_geq(st.bytes_used, asked);
}

Test(slab, a_freed_block_comes_back_without_asking_the_device)
{
    dev d;
    dev_init(&d, (size_t)1 << 30);
    maccrt_slabs *s = maccrt_slabs_new(dev_get_noted, dev_put, (size_t)64 << 20);
    int nomem;
    void *p = maccrt_slabs_alloc(s, 524288, &d, &nomem);
    long gets = d.gets;
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(maccrt_slabs_free(s, p), 1);
        void *q = maccrt_slabs_alloc(s, 500000, &d, &nomem); /* the same class */
        cr_assert_eq(q, p);
        p = q;
    }
    cr_assert_eq(d.gets, gets);
    int x;
    cr_assert_eq(maccrt_slabs_free(s, &x), 0, "not a block: the caller frees it");
}

Test(slab, large_requests_are_the_callers_and_slabs_grow_geometrically)
{
    dev d;
    dev_init(&d, (size_t)1 << 34);
    maccrt_slabs *s = maccrt_slabs_new(dev_get_noted, dev_put, (size_t)16 << 20);
    cr_assert_eq(maccrt_slabs_max_block(s), (size_t)16 << 20);
    int nomem = 1;
    cr_assert_null(maccrt_slabs_alloc(s, ((size_t)16 << 20) + 1, &d, &nomem));
    cr_assert_eq(nomem, 0, "too large is not out of memory");
    cr_assert_eq(d.gets, 0);
    /* matmul's 768 tiles of 512 KiB: a dozen slabs, not 768 allocations */
    for (int i = 0; i < 768; i++)
        cr_assert_not_null(maccrt_slabs_alloc(s, 524288, &d, &nomem));
    cr_assert_leq(d.gets, 12, "%ld slabs", d.gets);
    cr_assert_leq(d.last_get, (size_t)64 << 20, "slabs of at most 64 MiB");
    maccrt_slabs_stat st;
    maccrt_slabs_info(s, &st);
    cr_assert_eq(st.bytes_used, (size_t)768 * 524288);
    cr_assert_leq(st.bytes_slabs, 2 * st.bytes_used, "at most twice what is in use");
}

/* A slab of 16 MiB or more is asked for while its class still has blocks:
 * by the allocation that leaves fewer than half the last slab's blocks free
 * (512 KiB blocks: slabs of 2, 4 and 8 MiB when empty, then 16 MiB with the
 * 21st block, 7 still free), so no allocation after it finds the class
 * empty and waits for the driver. */
Test(slab, a_large_slab_is_asked_for_before_its_class_runs_out)
{
    dev d;
    dev_init(&d, (size_t)1 << 34);
    maccrt_slabs *s = maccrt_slabs_new(dev_get_noted, dev_put, (size_t)64 << 20);
    int nomem;
    maccrt_slabs_stat st;
    for (int k = 1; k <= 768; k++) {
        cr_assert_not_null(maccrt_slabs_alloc(s, 524288, &d, &nomem));
        maccrt_slabs_info(s, &st);
        if (k == 20)
            cr_assert_eq(d.gets, 3, "2, 4 and 8 MiB, each when the class was empty");
        if (k == 21) {
            cr_assert_eq(d.gets, 4);
            cr_assert_eq(d.last_get, (size_t)16 << 20);
        }
        if (k >= 21)
            cr_assert_gt(st.bytes_slabs, st.bytes_used, "blocks left after the %d-th", k);
    }
    cr_assert_leq(d.gets, 12, "%ld slabs", d.gets);
    cr_assert_leq(st.bytes_slabs, 2 * st.bytes_used, "at most twice what is in use");
}

/* An ahead slab the device refuses costs nothing: no slab goes back for it,
 * and the class grows as before once empty (here by one block). */
Test(slab, a_refused_ahead_slab_leaves_the_class_as_it_was)
{
    dev d;
    dev_init(&d, (size_t)20 << 20); /* 2 + 4 + 8 MiB, not 16 more */
    maccrt_slabs *s = maccrt_slabs_new(dev_get_noted, dev_put, (size_t)64 << 20);
    int nomem;
    for (int k = 1; k <= 28; k++)
        cr_assert_not_null(maccrt_slabs_alloc(s, 524288, &d, &nomem));
    cr_assert_eq(d.refused, 1, "the 16 MiB slab, asked ahead with the 21st block");
    cr_assert_eq(d.puts, 0);
    cr_assert_not_null(maccrt_slabs_alloc(s, 524288, &d, &nomem), "the 29th: one block's slab");
    cr_assert_eq(d.last_get, (size_t)524288);
    cr_assert_eq(d.refused, 2, "16 MiB once more when empty, then one block");
}

Test(slab, short_of_memory_the_empty_slabs_go_back_first)
{
    dev d;
    dev_init(&d, (size_t)7 << 20);
    maccrt_slabs *s = maccrt_slabs_new(dev_get_noted, dev_put, (size_t)64 << 20);
    int nomem;
    /* 2 MiB of 4 KiB blocks, all freed again: one empty slab */
    void *b[512];
    for (int i = 0; i < 512; i++)
        cr_assert_not_null(b[i] = maccrt_slabs_alloc(s, 4096, &d, &nomem));
    for (int i = 0; i < 512; i++)
        cr_assert_eq(maccrt_slabs_free(s, b[i]), 1);
    /* 6 MiB blocks (a budget of 7): the first only once the empty slab went back */
    void *x = maccrt_slabs_alloc(s, (size_t)6 << 20, &d, &nomem);
    cr_assert_not_null(x);
    cr_assert_eq(d.puts, 1, "the empty 4 KiB slab was given back for it");
    void *y = maccrt_slabs_alloc(s, (size_t)6 << 20, &d, &nomem);
    cr_assert_null(y);
    cr_assert_eq(nomem, 1, "the device is out of memory");
    cr_assert_eq(maccrt_slabs_free(s, x), 1);
    cr_assert_eq(maccrt_slabs_trim(s, &d), (size_t)6 << 20);
    cr_assert_eq(d.held, 0);
    /* after the trim the classes work as before */
    void *z = maccrt_slabs_alloc(s, 4096, &d, &nomem);
    cr_assert_not_null(z);
    cr_assert_eq(maccrt_slabs_free(s, z), 1);
}

#define NT 8
#define ROUNDS 3000
static maccrt_slabs *shared;
static dev shared_dev;

static void *churn(void *arg)
{
    int me = (int)(intptr_t)arg;
    void *mine[16] = {0};
    unsigned r = 12345u + (unsigned)me;
    for (int i = 0; i < ROUNDS; i++) {
        r = r * 1103515245u + 12345u;
        int k = (int)((r >> 8) % 16);
        if (mine[k]) {
            unsigned char *p = mine[k];
            cr_assert_eq(p[0], me + 1, "nobody else was given my block");
            p[0] = 0;
            cr_assert_eq(maccrt_slabs_free(shared, p), 1);
            mine[k] = NULL;
        } else {
            size_t sizes[] = {300, 5000, 65536, 524288};
            int nomem;
            unsigned char *p = maccrt_slabs_alloc(shared, sizes[(r >> 4) % 4], &shared_dev, &nomem);
            cr_assert_not_null(p);
            cr_assert_eq(p[0], 0, "a free block is nobody's");
            p[0] = (unsigned char)(me + 1);
            mine[k] = p;
        }
    }
    for (int k = 0; k < 16; k++)
        if (mine[k]) {
            ((unsigned char *)mine[k])[0] = 0;
            maccrt_slabs_free(shared, mine[k]);
        }
    return NULL;
}

static void *zeroed_get(void *ctx, size_t bytes)
{
    void *p = dev_get_noted(ctx, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

Test(slab, threads_never_share_a_block)
{
    dev_init(&shared_dev, (size_t)1 << 32);
    shared = maccrt_slabs_new(zeroed_get, dev_put, (size_t)64 << 20);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&th[i], NULL, churn, (void *)(intptr_t)i);
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    maccrt_slabs_stat st;
    maccrt_slabs_info(shared, &st);
    cr_assert_eq(st.bytes_used, 0, "every block was freed");
    cr_assert_eq(maccrt_slabs_trim(shared, &shared_dev), st.bytes_slabs);
    cr_assert_eq(shared_dev.held, 0);
}
