/* crew_callers.h: one caller of the copying crew (runtime/crew.c) for the
 * tests (tests/unit/test_crew.c, tests/tsan/tsan_crew.c): `iters` copies of
 * 4 KiB to `cap` bytes from sources at odd offsets, through the caller's own
 * job reused at once, alternately with non-temporal stores, each checked
 * byte for byte (a claim landing on the wrong generation would copy the old
 * source's bytes or none). at_half, when not NULL, runs halfway. Returns the
 * number of copies that differ. */
#ifndef MACC_TESTS_CREW_CALLERS_H
#define MACC_TESTS_CREW_CALLERS_H

#include <stdlib.h>
#include <string.h>

#include "internal.h"

static long crew_caller_run(unsigned seed, int iters, size_t cap, void (*at_half)(void))
{
    maccrt_crew_job *j = maccrt_crew_job_new();
    unsigned char *src = malloc(cap + 8), *dst = aligned_alloc(64, (cap + 63) & ~(size_t)63);
    long bad = 0;
    for (int it = 0; it < iters; it++) {
        if (it == iters / 2 && at_half)
            at_half();
        size_t n = 4096 + (size_t)((seed * 2654435761u + (unsigned)it * 40503u) % (cap - 4096));
        size_t so = (size_t)(it % 5);
        for (size_t i = 0; i < n; i++)
            src[so + i] = (unsigned char)(seed + (unsigned)it + i * 13u + (i >> 9));
        maccrt_crew_copy(j, dst, src + so, n, it & 1);
        bad += memcmp(dst, src + so, n) != 0;
    }
    free(src);
    free(dst);
    return bad;
}

#endif
