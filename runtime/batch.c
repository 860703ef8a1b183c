/* batch.c: work handed to a device's own threads (plugin->helpers_start).
 *
 * A batch is fn(arg, i) for i in [0, n). Batches sit on a device's list,
 * guarded by the lock of the device's task queue: a helper coming for work
 * takes the next item of the first batch with items left before any task
 * (maccrt_batch_take), and the caller of maccrt_batch_wait takes the items
 * no helper has taken yet, then waits for the ones in flight. So a batch
 * ends even when every helper is busy with a long task or waits for
 * something the caller holds. The CUDA plugin uses it for the directory's
 * write-backs at synchronisation points (each helper copies on its own
 * stream); the tests' fake GPUs use the same code. */
#include "internal.h"

#include <stdlib.h>

struct maccrt_batch {
    void (*fn)(void *arg, int i);
    void *arg;
    int n, next, done;
    pthread_cond_t cv; /* done == n */
    struct maccrt_batch *link;
};

/* b off the list, and freed (the list's lock held). */
static void batch__drop(maccrt_batch **list, maccrt_batch *b)
{
    for (maccrt_batch **p = list; *p; p = &(*p)->link)
        if (*p == b) {
            *p = b->link;
            break;
        }
    pthread_cond_destroy(&b->cv);
    free(b);
}

maccrt_batch *maccrt_batch_push(maccrt_batch **list, pthread_cond_t *wake, void (*fn)(void *, int),
                                void *arg, int n)
{
    maccrt_batch *b = maccrt_xcalloc(1, sizeof *b);
    b->fn = fn;
    b->arg = arg;
    b->n = n;
    pthread_cond_init(&b->cv, NULL);
    b->link = *list;
    *list = b;
    pthread_cond_broadcast(wake);
    return b;
}

int maccrt_batch_take(maccrt_batch **list, pthread_mutex_t *lock)
{
    maccrt_batch *b = *list;
    while (b && b->next >= b->n)
        b = b->link;
    if (!b)
        return 0;
    int i = b->next++;
    pthread_mutex_unlock(lock);
    b->fn(b->arg, i);
    pthread_mutex_lock(lock);
    if (++b->done == b->n)
        pthread_cond_broadcast(&b->cv);
    return 1;
}

void maccrt_batch_wait(maccrt_batch **list, pthread_mutex_t *lock, maccrt_batch *b)
{
    pthread_mutex_lock(lock);
    while (b->next < b->n) {
        int i = b->next++;
        pthread_mutex_unlock(lock);
        b->fn(b->arg, i);
        pthread_mutex_lock(lock);
        b->done++;
    }
    while (b->done < b->n)
        pthread_cond_wait(&b->cv, lock);
    batch__drop(list, b);
    pthread_mutex_unlock(lock);
}
