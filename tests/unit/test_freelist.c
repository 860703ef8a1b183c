/* test_freelist.c: the runtime's per-thread free lists of task blocks
 * (runtime/freelist.c). */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

Test(freelist, blocks_are_aligned_and_reused_by_their_thread)
{
    size_t sizes[] = {1, 100, 480, 500, 1000, 3000, 8000, 20000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char *p = maccrt_block_alloc(sizes[k]);
        cr_assert_eq((uintptr_t)p % _Alignof(max_align_t), 0);
        memset(p, 0xab, sizes[k]); /* the whole size is usable (ASan checks) */
        maccrt_block_free(p);
        char *q = maccrt_block_alloc(sizes[k]);
        if (sizes[k] <= 8000)
            cr_assert_eq(q, p, "size %zu: the block just freed comes back first", sizes[k]);
        maccrt_block_free(q);
    }
    maccrt_block_free(NULL);
}

#define N 10000
static void *blocks[N], *again[N];

static void *free_all(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++)
        maccrt_block_free(blocks[i]);
    long local, batches;
    maccrt_block_stats(&local, &batches);
    cr_assert_lt(local, 2 * MACCRT_FL_BATCH, "a thread keeps fewer than two batches");
    return NULL;
}

Test(freelist, blocks_freed_by_another_thread_come_back_in_batches)
{
    for (int i = 0; i < N; i++)
        blocks[i] = maccrt_block_alloc(600);
    pthread_t th;
    pthread_create(&th, NULL, free_all, NULL);
    pthread_join(th, NULL); /* its remaining list goes back at its exit */
    long local, batches;
    maccrt_block_stats(&local, &batches);
    cr_assert_lt(local, MACCRT_FL_BATCH, "what is left of this thread's last slab");
    cr_assert_geq(batches, N / MACCRT_FL_BATCH - 1);
    /* allocating them again takes that rest, then the batches: no new block */
    long fresh = 0;
    for (int i = 0; i < N; i++) {
        void *p = maccrt_block_alloc(600);
        int known = 0;
        for (int j = 0; j < N && !known; j++)
            known = blocks[j] == p;
        fresh += !known;
        again[i] = p;
    }
    cr_assert_leq(fresh, local, "%ld new blocks (the slab's rest: %ld)", fresh, local);
    maccrt_block_stats(&local, &batches);
    cr_assert_eq(batches, 0);
    for (int i = 0; i < N; i++)
        maccrt_block_free(again[i]);
}

/* Threads passing blocks to each other through a ring of slots: every block
 * allocated by one thread and freed by the next, content intact. */
#define THREADS 4
#define ROUNDS 20000
static _Atomic(char *) slots[THREADS];

static void *ring(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = 64 + (size_t)((r * 7 + me * 13) % 5000);
        char *p = maccrt_block_alloc(n);
        memset(p, me + 1, n);
        p[0] = (char)(n % 120);
        ((size_t *)(void *)(p + 8))[0] = n;
        char *old = atomic_exchange(&slots[(me + 1) % THREADS], p);
        if (old) {
            size_t on = ((size_t *)(void *)(old + 8))[0];
            cr_assert_eq(old[0], (char)(on % 120));
            cr_assert_eq(old[on - 1], old[16], "block of %zu bytes intact", on);
            maccrt_block_free(old);
        }
    }
    return NULL;
}

Test(freelist, threads_allocating_and_freeing_each_others_blocks)
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, ring, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++)
        maccrt_block_free(atomic_exchange(&slots[i], NULL));
}
