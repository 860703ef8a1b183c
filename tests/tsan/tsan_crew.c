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

#include "../crew_callers.h"
#include "internal.h"

#define CALLERS 4
#define ITERS 300

static pthread_barrier_t half;

static void at_half(void)
{
    pthread_barrier_wait(&half); /* (the crew stops here) */
}

static void *caller(void *arg)
{
    return (void *)crew_caller_run((unsigned)(uintptr_t)arg, ITERS, 96u << 10, at_half);
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
