/* freelist.c: blocks for tasks, from per-thread free lists.
 *
 * A task (with its argument block, maps and dependences) is one block of a
 * size class: powers of two from 512 bytes to 8 KiB; larger requests go to
 * malloc. Each thread keeps a list of free blocks per class and allocates and
 * frees on it without a lock. Tasks are usually created by one thread and
 * freed by another (the worker that finished them), so blocks travel back in
 * batches: a thread whose list holds 2 x MACCRT_FL_BATCH blocks moves
 * MACCRT_FL_BATCH of them to the class's global stack of batches (one mutex,
 * taken once per batch), and a thread whose list is empty takes a whole batch
 * from there before it makes new ones. A thread that exits gives its lists
 * back. Blocks are never returned: the pool holds at most what was live at
 * once (bounded by the creating threads' throttle, task.c), plus what is left
 * of each thread's last slab.
 *
 * New blocks come a batch at a time, their pages made by the kernel in one
 * call (MAP_POPULATE). One block at a time from malloc, each new page
 * was a fault at the task's first write: STREAM's pipelined phase on one
 * H200's host (640 tasks live at once, blocks of 1 KiB, four to a page)
 * spent 2-2.5 us in one submission of four, 0.4-0.5 ms of a submission of
 * 1.3 ms, before the first chain could end (bench/RESULTS.md, fifty-first
 * session). The kernel's making of a batch's 16 pages costs about what
 * their faults did (25-55 us), but once per 64 tasks; the phase's
 * submissions took 10-25% less time in all.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FL__MIN_SHIFT 9 /* 512 bytes */
#define FL__NCLASSES 5  /* 512 .. 8192 */
#define FL__LARGE 0xff

typedef struct fl__block {
    struct fl__block *next;  /* in a free list */
    struct fl__block *batch; /* the next batch, in the global stack */
    unsigned cls;            /* size class, FL__LARGE for malloc's */
    int nbatch;              /* a batch's first block: the batch's length */
} fl__block;

/* The header keeps the block's payload max_align_t-aligned. */
#define FL__HDR ((sizeof(fl__block) + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1))

typedef struct fl__list {
    fl__block *head;
    int n;
} fl__list;

static struct {
    pthread_mutex_t lock;
    fl__block *batches; /* each a list of MACCRT_FL_BATCH blocks */
    long nbatches;
} fl__global[FL__NCLASSES] = {
    [0 ... FL__NCLASSES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

static __thread fl__list fl__local[FL__NCLASSES];
static __thread int fl__registered;
static pthread_key_t fl__key;
static pthread_once_t fl__key_once = PTHREAD_ONCE_INIT;

static void fl__push_batch(int c, fl__block *head, int n)
{
    head->nbatch = n;
    pthread_mutex_lock(&fl__global[c].lock);
    head->batch = fl__global[c].batches;
    fl__global[c].batches = head;
    fl__global[c].nbatches++;
    pthread_mutex_unlock(&fl__global[c].lock);
}

/* Thread exit: its blocks go to the global stacks (one batch per class, of
 * whatever length). */
static void fl__thread_exit(void *p)
{
    (void)p;
    for (int c = 0; c < FL__NCLASSES; c++) {
        if (fl__local[c].head)
            fl__push_batch(c, fl__local[c].head, fl__local[c].n);
        fl__local[c].head = NULL;
        fl__local[c].n = 0;
    }
    fl__registered = 0;
}

static void fl__make_key(void)
{
    pthread_key_create(&fl__key, fl__thread_exit);
}

/* The thread's lists are about to hold blocks: give them back at its exit. */
static void fl__register(void)
{
    if (fl__registered)
        return;
    pthread_once(&fl__key_once, fl__make_key);
    pthread_setspecific(fl__key, (void *)1);
    fl__registered = 1;
}

static int fl__class(size_t n)
{
    size_t total = n + FL__HDR;
    for (int c = 0; c < FL__NCLASSES; c++)
        if (total <= (size_t)1 << (FL__MIN_SHIFT + c))
            return c;
    return -1;
}

/* A slab of MACCRT_FL_BATCH new blocks of class c on the thread's (empty)
 * list l (a batch: fewer than the two that send one to the global stack, so
 * a block freed by its thread still comes back first); none when the kernel
 * has no memory for it (malloc's single block then). */
static void fl__slab(fl__list *l, int c)
{
    size_t bs = (size_t)1 << (FL__MIN_SHIFT + c), n = MACCRT_FL_BATCH;
    char *m = mmap(NULL, n * bs, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED)
        return;
    fl__register();
    for (size_t i = n; i-- > 0;) {
        fl__block *b = (fl__block *)(m + i * bs);
        b->cls = (unsigned)c;
        b->next = l->head;
        l->head = b;
    }
    l->n = (int)n;
}

void *maccrt_block_alloc(size_t n)
{
    int c = fl__class(n);
    fl__block *b;
    if (c < 0) {
        b = maccrt_xmalloc(n + FL__HDR);
        b->cls = FL__LARGE;
        return (char *)b + FL__HDR;
    }
    fl__list *l = &fl__local[c];
    if (!l->head) {
        pthread_mutex_lock(&fl__global[c].lock);
        fl__block *batch = fl__global[c].batches;
        if (batch) {
            fl__global[c].batches = batch->batch;
            fl__global[c].nbatches--;
        }
        pthread_mutex_unlock(&fl__global[c].lock);
        if (batch) {
            fl__register();
            l->head = batch;
            l->n = batch->nbatch; /* (not counted by a walk over its blocks) */
        }
    }
    if (!l->head)
        fl__slab(l, c);
    if (l->head) {
        b = l->head;
        l->head = b->next;
        l->n--;
        return (char *)b + FL__HDR;
    }
    b = maccrt_xmalloc((size_t)1 << (FL__MIN_SHIFT + c));
    b->cls = (unsigned)c;
    return (char *)b + FL__HDR;
}

void maccrt_block_free(void *p)
{
    if (!p)
        return;
    fl__block *b = (fl__block *)((char *)p - FL__HDR);
    if (b->cls == FL__LARGE) {
        free(b);
        return;
    }
    int c = (int)b->cls;
    fl__register();
    fl__list *l = &fl__local[c];
    b->next = l->head;
    l->head = b;
    if (++l->n >= 2 * MACCRT_FL_BATCH) {
        /* the first MACCRT_FL_BATCH blocks go to the global stack */
        fl__block *last = l->head;
        for (int i = 1; i < MACCRT_FL_BATCH; i++)
            last = last->next;
        fl__block *batch = l->head;
        l->head = last->next;
        last->next = NULL;
        l->n -= MACCRT_FL_BATCH;
        fl__push_batch(c, batch, MACCRT_FL_BATCH);
    }
}

void maccrt_block_stats(long *local, long *batches)
{
    *local = 0;
    *batches = 0;
    for (int c = 0; c < FL__NCLASSES; c++) {
        *local += fl__local[c].n;
        pthread_mutex_lock(&fl__global[c].lock);
        *batches += fl__global[c].nbatches;
        pthread_mutex_unlock(&fl__global[c].lock);
    }
}
