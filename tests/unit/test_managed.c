/* test_managed.c: the allocator behind --managed (runtime/managed.c) with
 * host memory behind it (no GPU): size classes, reuse, growth, the large
 * path, the cap (with and without the host fallback), realloc/calloc/aligned
 * variants, frees of C-library memory, and many threads at once.
 *
 * Criterion runs every test in its own process: each reads its settings from
 * the environment its init sets before the first allocation. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "macc_rt.h"

static void clean_env(void)
{
    static const char *vars[] = {"MACC_POOL", "MACC_POOL_CHUNK", "MACC_POOL_MIN", "MACC_POOL_MAX",
                                 "MACC_MANAGED_CAP", "MACC_MANAGED_MARGIN", "MACC_MANAGED_FALLBACK",
                                 "MACC_DEVICES", "MACC_TEST_FAKE_GPUS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

TestSuite(pool, .init = clean_env, .timeout = 60);

static maccrt_managed_info info(void)
{
    maccrt_managed_info i;
    maccrt_managed_stats(&i);
    return i;
}

Test(pool, size_classes_and_alignment)
{
    char *a = MACC_malloc(1), *b = MACC_malloc(1), *c = MACC_malloc(100), *d = MACC_malloc(5000);
    cr_assert(a && b && c && d);
    cr_assert_eq((uintptr_t)a % 64, 0, "the smallest class is 64 bytes");
    cr_assert_eq((uintptr_t)c % 128, 0, "100 bytes: the 128-byte class, 128-aligned");
    cr_assert_eq((uintptr_t)d % 8192, 0);
    cr_assert_geq((uintptr_t)(b > a ? b - a : a - b), 64, "blocks do not overlap");
    memset(d, 0x5a, 5000);
    maccrt_managed_info i = info();
    cr_assert(i.on);
    cr_assert(!i.gpu, "no GPU: host memory");
    cr_assert_eq(i.chunks, 1, "one chunk serves them all");
    cr_assert_eq(i.min, 64);
    cr_assert_eq(i.max, (size_t)16 << 20);
    cr_assert(maccrt_managed_owns(c, 100));
    cr_assert(maccrt_managed_owns(d + 10, 100));
    int local;
    cr_assert(!maccrt_managed_owns(&local, sizeof local));
    MACC_free(a);
    MACC_free(b);
    MACC_free(c);
    MACC_free(d);
}

Test(pool, a_freed_block_is_reused_first)
{
    void *p = MACC_malloc(200);
    MACC_free(p);
    void *q = MACC_malloc(250); /* the same 256-byte class */
    cr_assert_eq(p, q);
    long blocks = info().pooled_blocks;
    for (int i = 0; i < 1000; i++) {
        void *r = MACC_malloc(256);
        MACC_free(r);
    }
    cr_assert_eq(info().pooled_blocks, blocks + 1, "1000 alloc/free pairs carve one block");
    cr_assert_eq(info().backend_allocs, 1);
    MACC_free(q);
}

Test(pool, growth_by_chunks, .init = clean_env)
{
    setenv("MACC_POOL_CHUNK", "2M", 1);
    void *p[5];
    for (int i = 0; i < 5; i++) {
        p[i] = MACC_malloc(1 << 20); /* 1 MiB class: one slab each */
        cr_assert_not_null(p[i]);
        memset(p[i], i, 1 << 20);
    }
    maccrt_managed_info i = info();
    cr_assert_eq(i.chunks, 3, "2 MiB chunks: %d", i.chunks);
    cr_assert_eq(i.reserved, (size_t)6 << 20);
    for (int k = 0; k < 5; k++)
        MACC_free(p[k]);
    cr_assert_eq(info().pooled_free, 5);
}

Test(pool, large_requests_go_to_the_backend, .init = clean_env)
{
    setenv("MACC_POOL_MAX", "64K", 1);
    char *p = MACC_malloc(1 << 20);
    cr_assert_not_null(p);
    p[(1 << 20) - 1] = 1;
    cr_assert_eq(info().backend_allocs, 1);
    cr_assert(maccrt_managed_owns(p, 1 << 20));
    MACC_free(p);
    cr_assert_eq(info().backend_frees, 1);
    cr_assert_eq(info().reserved, 0);
    cr_assert(!maccrt_managed_owns(p, 1));
}

Test(pool, the_pool_can_be_switched_off, .init = clean_env)
{
    setenv("MACC_POOL", "0", 1);
    void *a = MACC_malloc(10), *b = MACC_malloc(10);
    cr_assert_eq(info().backend_allocs, 2, "every request from the backend");
    MACC_free(a);
    MACC_free(b);
    cr_assert_eq(info().backend_frees, 2);
}

Test(pool, the_cap_makes_malloc_fail_cleanly, .init = clean_env)
{
    setenv("MACC_MANAGED_CAP", "4M", 1);
    setenv("MACC_POOL_CHUNK", "2M", 1);
    void *p[8];
    int n = 0;
    while (n < 8 && (p[n] = MACC_malloc(1 << 20)) != NULL)
        n++;
    cr_assert_eq(n, 4, "4 MiB of 1 MiB blocks: %d", n);
    errno = 0;
    cr_assert_null(MACC_malloc(1 << 20));
    cr_assert_eq(errno, ENOMEM);
    cr_assert_null(MACC_malloc(64 << 20), "a large request is refused too");
    cr_assert_gt(info().cap_refusals, 0);
    cr_assert_leq(info().reserved, (size_t)4 << 20);
    MACC_free(p[0]);
    void *again = MACC_malloc(1 << 20);
    cr_assert_eq(again, p[0], "freed memory is served again under the cap");
    for (int i = 1; i < n; i++)
        MACC_free(p[i]);
    MACC_free(again);
}

Test(pool, past_the_cap_host_memory_when_asked, .init = clean_env)
{
    setenv("MACC_MANAGED_CAP", "1M", 1);
    setenv("MACC_MANAGED_FALLBACK", "host", 1);
    void *a = MACC_malloc(1 << 20);
    char *b = MACC_malloc(1 << 20);
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_eq(info().fallbacks, 1);
    cr_assert(!maccrt_managed_owns(b, 1), "the fallback block is the C library's");
    b[0] = 1;
    MACC_free(b); /* goes to free(3); ASan checks it */
    MACC_free(a);
}

Test(pool, realloc_calloc_and_aligned_variants)
{
    char *p = MACC_malloc(100);
    for (int i = 0; i < 100; i++)
        p[i] = (char)i;
    char *q = MACC_realloc(p, 10000);
    cr_assert_not_null(q);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(q[i], (char)i);
    cr_assert_eq(MACC_realloc(q, 9000), q, "shrinking within the class keeps the block");
    char *libc = malloc(16);
    strcpy(libc, "from libc");
    libc = MACC_realloc(libc, 64);
    cr_assert_str_eq(libc, "from libc");
    MACC_free(libc);
    memset(q, 0xff, 4096);
    MACC_free(q);
    unsigned char *z = MACC_calloc(1000, 4);
    for (int i = 0; i < 4000; i++)
        cr_assert_eq(z[i], 0, "calloc zeroes reused memory");
    MACC_free(z);
    void *al = MACC_aligned_alloc(4096, 100);
    cr_assert_eq((uintptr_t)al % 4096, 0);
    MACC_free(al);
    void *pm = NULL;
    cr_assert_eq(MACC_posix_memalign(&pm, 256, 10), 0);
    cr_assert_eq((uintptr_t)pm % 256, 0);
    MACC_free(pm);
    cr_assert_eq(MACC_posix_memalign(&pm, 3, 10), EINVAL);
    cr_assert_null(MACC_aligned_alloc(48, 10));
    cr_assert_null(MACC_calloc(SIZE_MAX / 2, 4), "overflow");
    MACC_free(NULL);
    cr_assert_null(MACC_realloc(MACC_malloc(8), 0));
}

/* 8 threads allocating, filling, checking and freeing blocks of random sizes:
 * a block is never handed to two owners (each checks its own pattern). */
static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    enum { LIVE = 64 };
    unsigned char *live[LIVE] = {0};
    size_t size[LIVE] = {0};
    long bad = 0;
    for (int it = 0; it < 20000; it++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % LIVE);
        if (live[k]) {
            unsigned char tag = (unsigned char)(k + (uintptr_t)arg * 64);
            for (size_t j = 0; j < size[k]; j += 61)
                bad += live[k][j] != tag;
            MACC_free(live[k]);
            live[k] = NULL;
        } else {
            size[k] = 1 + (seed >> 12) % 9000;
            live[k] = MACC_malloc(size[k]);
            if (!live[k])
                return (void *)-1;
            memset(live[k], (unsigned char)(k + (uintptr_t)arg * 64), size[k]);
        }
    }
    for (int k = 0; k < LIVE; k++)
        MACC_free(live[k]);
    return (void *)bad;
}

Test(pool, many_threads)
{
    pthread_t th[8];
    for (uintptr_t i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, churn, (void *)i);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(th[i], &r);
        cr_assert_eq(r, NULL, "thread %d saw %ld corrupted bytes", i, (long)(intptr_t)r);
    }
    maccrt_managed_info s = info();
    cr_assert_eq(s.pooled_free, s.pooled_blocks, "every block back on its stack");
}

Test(pool, bad_settings_are_errors, .init = clean_env, .exit_code = 1)
{
    setenv("MACC_POOL_CHUNK", "lots", 1);
    MACC_malloc(1);
}
