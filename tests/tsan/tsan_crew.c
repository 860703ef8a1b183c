/* tsan_crew.c: the copying crew (runtime/crew.c) under ThreadSanitizer (make
 * check-tsan): four callers, each with its own job reused at once, share
 * copies of many sizes with three crew threads that sleep between bursts;
 * then the crew stops while the callers go on. Exits 0 when every copy is
 * exact and the crew copied parts; a TSan report makes the process exit 66. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CALLERS 4
#define ITERS 300

static pthread_barrier_t half;

static void *caller(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    maccrt_crew_job *j = maccrt_crew_job_new();
    size_t cap = 96u << 10;
    unsigned char *src = malloc(cap + 8), *dst = aligned_alloc(64, cap);
    long bad = 0;
    for (int it = 0; it < ITERS; it++) {
        if (it == ITERS / 2)
            pthread_barrier_wait(&half); /* (the crew stops here) */
        size_t n = 4096 + (size_t)((seed * 2654435761u + (unsigned)it * 40503u) % (cap - 4096));
        size_t so = (size_t)(it % 3);
        for (size_t i = 0; i < n; i++)
            src[so + i] = (unsigned char)(seed + (unsigned)it + i * 13u);
        maccrt_crew_copy(j, dst, src + so, n, it & 1);
        bad += memcmp(dst, src + so, n) != 0;
    }
    free(src);
    free(dst);
    return (void *)bad;
}

int main(void)
{
    setenv("MACC_COPY_THREADS", "3", 1);
    setenv("MACC_COPY_PART_KB", "4", 1);
    setenv("MACC_COPY_SPIN_US", "20", 1);
    if (maccrt_crew_start(0) != 3) {
        fprintf(stderr, "tsan_crew: the crew did not start\n");
        return 1;
    }
    pthread_barrier_init(&half, NULL, CALLERS + 1);
    pthread_t th[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        pthread_create(&th[i], NULL, caller, (void *)(uintptr_t)(i + 1));
    pthread_barrier_wait(&half);
    long parts = maccrt_crew_parts();
    maccrt_crew_stop();
    long bad = 0;
    for (int i = 0; i < CALLERS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (long)r;
    }
    printf("tsan_crew: %d callers x %d copies, %ld differ, %ld parts by the crew\n", CALLERS, ITERS, bad, parts);
    return bad == 0 && parts > 0 ? 0 : 1;
}
