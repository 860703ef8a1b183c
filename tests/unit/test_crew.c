/* test_crew.c: the copying crew (runtime/crew.c): copies shared between
 * their callers and the crew's threads come out byte for byte, whatever the
 * size, alignment and number of callers; a job reused at once never takes a
 * part of its last copy for the next; with no crew, or a stopped one, the
 * callers copy alone. (Criterion runs each test in its own process, so each
 * starts its own crew.) */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../crew_callers.h"
#include "internal.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 9));
}

/* A copy of n bytes from src + so to dst + doff through j; checks every
 * byte, and that the bytes around the destination stayed. */
static void copy_and_check(maccrt_crew_job *j, size_t n, size_t so, size_t doff, int nt, unsigned seed)
{
    unsigned char *src = malloc(n + so + 64), *dst = aligned_alloc(64, (n + doff + 128 + 63) & ~(size_t)63);
    cr_assert(src && dst);
    fill(src + so, n, seed);
    memset(dst, 0xa5, n + doff + 128);
    maccrt_crew_copy(j, dst + doff, src + so, n, nt);
    cr_assert(memcmp(dst + doff, src + so, n) == 0, "copy of %zu bytes (src +%zu, dst +%zu, nt %d) differs", n, so,
              doff, nt);
    for (size_t i = 0; i < doff; i++)
        cr_assert(dst[i] == 0xa5);
    for (size_t i = n + doff; i < n + doff + 128; i++)
        cr_assert(dst[i] == 0xa5, "written past the copy's end");
    free(src);
    free(dst);
}

static void sizes(maccrt_crew_job *j)
{
    static const size_t n[] = {0, 1, 63, 64, 4095, 65536, 131071, 131072, 131073, 524288, 600001, 2u << 20};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        for (int nt = 0; nt < 2; nt++) {
            copy_and_check(j, n[i], 0, 0, nt, (unsigned)i);
            copy_and_check(j, n[i], 3, 16, nt, (unsigned)i + 1);
            copy_and_check(j, n[i], 5, 7, nt, (unsigned)i + 2); /* dst unaligned: plain memcpy */
        }
}

Test(crew, the_caller_copies_alone_without_a_crew)
{
    cr_assert_eq(maccrt_crew_threads(), 0);
    sizes(maccrt_crew_job_new());
    sizes(NULL);
    cr_assert_eq(maccrt_crew_parts(), 0);
}

Test(crew, copies_shared_with_the_crew_are_exact)
{
    setenv("MACC_COPY_THREADS", "3", 1);
    setenv("MACC_COPY_PART_KB", "16", 1);
    cr_assert_eq(maccrt_crew_start(0), 3);
    cr_assert_eq(maccrt_crew_start(0), 3, "a second start starts none");
    maccrt_crew_job *j = maccrt_crew_job_new();
    cr_assert(j);
    for (int r = 0; r < 20; r++)
        sizes(j);
    cr_assert_gt(maccrt_crew_parts(), 0, "the crew's threads copied no part");
    maccrt_crew_stop();
    cr_assert_eq(maccrt_crew_threads(), 0);
    long before = maccrt_crew_parts();
    sizes(j); /* after the stop: alone, still exact */
    cr_assert_eq(maccrt_crew_parts(), before);
}

Test(crew, the_default_leaves_the_busy_cores)
{
    unsetenv("MACC_COPY_THREADS");
    cr_assert_eq(maccrt_crew_start(1 << 20), 0, "no core left: no crew");
}

/* Many callers at once, each its own job (tests/crew_callers.h). */
#define CALLERS 4

static void *caller(void *arg)
{
    return (void *)crew_caller_run((unsigned)(uintptr_t)arg, 400, 256u << 10, NULL);
}

Test(crew, callers_at_once_each_get_their_own_bytes)
{
    setenv("MACC_COPY_THREADS", "3", 1);
    setenv("MACC_COPY_PART_KB", "4", 1);
    setenv("MACC_COPY_SPIN_US", "50", 1); /* the crew sleeps between bursts too */
    cr_assert_eq(maccrt_crew_start(0), 3);
    pthread_t th[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, caller, (void *)(uintptr_t)(i + 1)), 0);
    long bad = 0;
    for (int i = 0; i < CALLERS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (long)r;
    }
    cr_assert_eq(bad, 0, "%ld copies differ", bad);
    cr_assert_gt(maccrt_crew_parts(), 0);
    maccrt_crew_stop();
}
