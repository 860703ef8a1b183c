/* internal.h: the runtime's one internal header (libmaccrt).
 *
 * Sections:
 *   1. basics: export macro, limits, clock, errors
 *   2. range tree: disjoint address intervals (dependences, the data directory)
 *   3. devices and the plugin interface
 *   4. the data directory (cache.c) and data directives (data.c)
 *   5. tasks (task.c)
 *   6. scheduler and policy hooks (sched.c)
 *   7. the runtime state and initialisation (init.c)
 *   8. statistics (stats.c)
 *
 * Every symbol shared between runtime files is prefixed maccrt_. The shared
 * library is built with -fvisibility=hidden, so only the functions declared in
 * macc_rt.h (included below with default visibility) are exported.
 *
 * Locking (outer to inner; never take an outer lock while holding an inner one):
 *   declare lock          declare.c's registration list: held while a
 *                         variable's entries are made (the directory lock,
 *                         the plugin's symbol lookup and copies under it);
 *                         never taken under another runtime lock
 *   maccrt_rt.lock        dependences, ready queue, tokens, task states,
 *                         per-thread child counters, live-task count
 *   plugin locks          e.g. the host pool's queue lock, a GPU's queue lock
 *                         (plugin->submit is called with maccrt_rt.lock held)
 *   directory lock        cache.c's lock over every device's directory tree
 *                         (present-table entries and cached copies): held
 *                         only for bookkeeping, never across a copy or an
 *                         allocation (entries being copied are claimed, see
 *                         cache.c); may be taken under maccrt_rt.lock (the
 *                         affinity rule; the residency estimate only tries
 *                         it there, never waits for it), never takes
 *                         it; plugin alloc/free/copy/pin locks nest inside
 *   alloc lock            data.c's lock over omp_target_alloc's blocks:
 *                         innermost, held only for a range-tree operation
 */
#ifndef MACC_RUNTIME_INTERNAL_H
#define MACC_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The ABI and the user API keep default visibility in the shared library even
 * though the library is built with -fvisibility=hidden (macc_rt.h leaves
 * MACC_API empty when MACC_BUILDING_RUNTIME is defined). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
#include "macc_rt.h"
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

/* ==== 1. basics ============================================================ */

#define MACCRT_MAX_DEVICES 64 /* device masks are uint64_t */
#define MACCRT_TOKENS 100     /* tokens per device */
#define MACCRT_MAX_HOST_WORKERS MACCRT_TOKENS

/* Default resources (tokens out of 100) when a version says MACC_RES_DEFAULT. */
#define MACCRT_RES_HOST_DEFERRED 50
#define MACCRT_RES_HOST_UNDEFERRED 100
#define MACCRT_RES_GPU 25
#define MACCRT_RES_GPU_FILLS 50 /* a region whose kernels fill the GPU four times over */

typedef uint64_t maccrt_mask;
#define MACCRT_BIT(d) ((maccrt_mask)1 << (d))

/* Monotonic clock in seconds. */
double maccrt_now(void);

/* Prints "macc: error: FILE:LINE: message" (location optional) and exits with
 * status 1. Thread-safe; only the first caller exits, later ones block. */
void maccrt_fatal(const MACC_SrcLoc *loc, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
/* Prints "macc: warning: FILE:LINE: message" (location optional). */
void maccrt_warn(const MACC_SrcLoc *loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation that never returns NULL (fatal on exhaustion). */
void *maccrt_xmalloc(size_t n);
void *maccrt_xcalloc(size_t n, size_t m);
void *maccrt_xrealloc(void *p, size_t n);

/* ==== 2. range tree ========================================================= */

/* A treap of disjoint, non-empty half-open intervals [start, end) ordered by
 * start. Nodes are embedded in the user's struct (first member, or use
 * container_of); the tree never allocates. Not thread-safe: callers lock. */
typedef struct maccrt_rnode {
    uintptr_t start, end;
    struct maccrt_rnode *left, *right;
    unsigned prio;
} maccrt_rnode;

#define MACCRT_RTREE_HINTS 4096
typedef struct maccrt_rtree {
    maccrt_rnode *root;
    /* written by every insert and remove: a cache line of their own, so that
     * look-ups (which read root) do not miss on them */
    char apart[64];
    unsigned seed;
    size_t count;
    /* The last node inserted with each start (by hash; a node in the tree
     * starting at a is the only one): look-ups of a section that starts a
     * node (a task's tile, its dependence segment) skip the tree walk. */
    maccrt_rnode *hint[MACCRT_RTREE_HINTS];
} maccrt_rtree;

/* Inserts n (n->start, n->end set; must not overlap a node in the tree). */
void maccrt_rtree_insert(maccrt_rtree *t, maccrt_rnode *n);
/* Removes n, which must be in the tree. */
void maccrt_rtree_remove(maccrt_rtree *t, maccrt_rnode *n);
/* The node with the lowest start that overlaps [a, b) (b > a), or NULL. */
maccrt_rnode *maccrt_rtree_first_overlap(const maccrt_rtree *t, uintptr_t a, uintptr_t b);
/* The node that contains address a, or NULL. */
maccrt_rnode *maccrt_rtree_find(const maccrt_rtree *t, uintptr_t a);
/* The node after n in address order, or NULL. */
maccrt_rnode *maccrt_rtree_next(const maccrt_rtree *t, const maccrt_rnode *n);
/* The same for a walk of the nodes that start below b: NULL once n reaches b
 * (no tree walk for the last one). */
maccrt_rnode *maccrt_rtree_next_below(const maccrt_rtree *t, const maccrt_rnode *n, uintptr_t b);
/* Every node, in address order, into out (t->count slots); returns how many.
 * O(n), where a walk by maccrt_rtree_next descends from the root per node. */
size_t maccrt_rtree_collect(const maccrt_rtree *t, maccrt_rnode **out);
/* Empties the tree at once (its nodes are the caller's, as they were). */
void maccrt_rtree_clear(maccrt_rtree *t);

/* ---- slabs: a device's memory in blocks of size classes (slab.c) ---------------------------- */

/* A plugin's allocator of device memory for the directory's copies: blocks
 * of size classes cut from slabs that get() allocates on the device (ctx is
 * what the caller passed to the call that needed it; NULL: the device has
 * none to give) and put() frees. Thread-safe. */
typedef void *(*maccrt_slab_get)(void *ctx, size_t bytes);
typedef void (*maccrt_slab_put)(void *ctx, void *p);
typedef struct maccrt_slabs maccrt_slabs;
typedef struct maccrt_slabs_stat {
    size_t bytes_slabs, bytes_used; /* held from the device, in blocks in use */
    long nslabs, ngets;             /* slabs now, slabs ever obtained */
} maccrt_slabs_stat;
/* Blocks up to max_block bytes (rounded up to a class; at most 64 MiB). */
maccrt_slabs *maccrt_slabs_new(maccrt_slab_get get, maccrt_slab_put put, size_t max_block);
size_t maccrt_slabs_max_block(const maccrt_slabs *s);
/* A block of at least n bytes, 256-byte aligned. NULL with *nomem 0: n is
 * above max_block (the caller allocates it); NULL with *nomem 1: the device
 * gave no slab, even after the empty ones went back. */
void *maccrt_slabs_alloc(maccrt_slabs *s, size_t n, void *ctx, int *nomem);
/* 1: p was a block, now free for reuse (no device work may still use it);
 * 0: p is not a block of s. */
int maccrt_slabs_free(maccrt_slabs *s, void *p);
/* Gives every slab with no block in use back (put); returns the bytes. */
size_t maccrt_slabs_trim(maccrt_slabs *s, void *ctx);
void maccrt_slabs_info(maccrt_slabs *s, maccrt_slabs_stat *out);

/* ==== 3. devices and plugins ================================================ */

struct maccrt_task;
struct maccrt_device;

/* Device capabilities. */
enum {
    MACCRT_CAP_SHARED_MEM = 1 /* device addresses are host addresses (the host) */
};

/* Error code a plugin's alloc reports for "out of device memory" (device
 * error codes are >= 0; a CUDA error is a cudaError_t). */
#define MACCRT_ERR_NOMEM (-12)

/* What a device kind provides (libgomp's plugin interface, reduced). One static
 * instance per kind: maccrt_host_plugin (host.c) and maccrt_cuda_plugin
 * (cuda.c, in the separate archive libmaccrt_cuda.a). init.c finds the CUDA
 * plugin through a weak reference and lists it first in maccrt_plugins.
 * Every function gets the device it acts on; per-device state lives in
 * dev->pdata. Functions return 0 on success or a device error code. */
/* plugin->run returned this: the task's end comes through maccrt_up.ran */
#define MACCRT_RUN_PENDING (-0x4d41)

typedef struct maccrt_plugin {
    const char *name; /* "host", "nvidia": device names are NAME or NAME:INDEX */
    int kind;         /* MACC_DEV_* */
    int caps;         /* MACCRT_CAP_* */

    /* Optional: starts the driver, so that discover finds it started; may be
     * called before main (init.c's early start), before discover, once or more. */
    void (*prepare)(void);
    /* The runtime starts as the program loads (init.c's early start) when the
     * plugin in maccrt_cuda_plugin's slot says so: the CUDA plugin does; the
     * tests' fake GPUs, which stand in that slot in programs that set the
     * environment in main and fork per test, do not. */
    int early;
    /* How many devices of this kind exist (0 when the driver is absent). Called
     * once at initialisation, before any other function but prepare. */
    int (*discover)(void);
    /* Brings device d up: d->index, d->num and d->name are set; sets d->pdata
     * and properties (d->cc, d->mem_bytes) and starts helper threads. */
    int (*init_device)(struct maccrt_device *d);
    /* Optional: called once after discover and every init_device of this
     * plugin (whatever they returned): the devices are up. */
    void (*started)(void);
    /* Stops helper threads and frees d->pdata. Called at exit once no task is
     * live, from a thread that is not one of the device's helpers. */
    void (*fini_device)(struct maccrt_device *d);
    /* Can d run version v (kind already matched)? e.g. the min_cc check. */
    int (*version_ok)(const struct maccrt_device *d, const MACC_Version *v);

    /* Device memory. For shared-memory devices alloc returns the host address
     * it is given (hostptr) and free does nothing. On failure alloc returns
     * NULL; alloc_error (optional) then tells why: MACCRT_ERR_NOMEM when the
     * device is out of memory, else a device error code (data.c reports
     * either with the map's name; without alloc_error NULL means out of
     * memory). alloc, free and the copies may be called from any thread
     * (helpers for task maps, the program's threads for data directives);
     * they complete before returning (a copy's data is in place on return). */
    void *(*alloc)(struct maccrt_device *d, void *hostptr, size_t bytes);
    void (*free)(struct maccrt_device *d, void *devptr);
    int (*copy_h2d)(struct maccrt_device *d, void *dst, const void *src, size_t bytes);
    int (*copy_d2h)(struct maccrt_device *d, void *dst, const void *src, size_t bytes);
    /* Optional: copies bytes from src on device `from` (same plugin) to dst on
     * d without the host (peer access where the hardware has it), completing
     * before it returns. */
    int (*copy_peer)(struct maccrt_device *d, void *dst, struct maccrt_device *from, const void *src,
                     size_t bytes);
    /* Optional: copies bytes from src on device `from` (same plugin) home to
     * host dst through d's own link (a copy from `from` to d, then d's to the
     * host), completing before it returns; -1 (nothing copied) when the
     * calling thread is not one of d's own (helpers_start's). For the
     * write-backs of a synchronisation point where one GPU holds more than
     * another (cache.c, "write-backs through another GPU"). */
    int (*copy_d2h_via)(struct maccrt_device *d, void *dst, struct maccrt_device *from, const void *src,
                        size_t bytes);
    /* Optional, the three together: asynchronous fills. copy_h2d_start is
     * copy_h2d that may return with the bytes still on their way when the
     * calling thread is one of d's own threads running a task there (its
     * stream's kernels come after them): *fence is then a handle that is done
     * once they are in place, else NULL (they are). The source may be
     * changed once it returns (a staged copy's bytes are in the plugin's
     * buffer; a page-locked source is the program's, whose task reads it).
     * fence_order makes what the calling thread does next on d (copies,
     * kernels) come after a fence of any device of this plugin: its stream
     * waits for it where the thread is d's, else the thread waits.
     * fence_done says whether it is done (0: not yet, or not known). A
     * fence's handle stays valid for the process: the plugin reuses it only
     * once done (a late fence_order on a reused handle waits for later
     * bytes, never for fewer). */
    int (*copy_h2d_start)(struct maccrt_device *d, void *dst, const void *src, size_t bytes, void **fence);
    void (*fence_order)(struct maccrt_device *d, void *fence);
    int (*fence_done)(struct maccrt_device *d, void *fence);
    /* Optional: host range [p, p + bytes) will be copied to and from d
     * repeatedly (a directory entry): make its copies fast (page-locking
     * it, once per range, counted) until host_unpin with the same range. */
    void (*host_pin)(struct maccrt_device *d, const void *p, size_t bytes);
    /* Optional: can d's kernels read host address p as it is (HMM/ATS, or
     * memory the driver knows: managed, page-locked, its own)? Asked for
     * pointers no map covers in units that require unified shared memory. */
    int (*host_reachable)(struct maccrt_device *d, const void *p);
    void (*host_unpin)(struct maccrt_device *d, const void *p, size_t bytes);
    /* Optional: runs fn(arg, i) for i in [0, n) on d's own threads (a GPU's
     * helpers, each with its stream), several at once, before its tasks;
     * helpers_wait returns when all have run. fn must not wait for anything
     * a task holds. The directory's write-backs at synchronisation points
     * (one thread copying every dirty section home, one after the other)
     * run this way. */
    struct maccrt_batch *(*helpers_start)(struct maccrt_device *d, void (*fn)(void *arg, int i), void *arg,
                                          int n);
    void (*helpers_wait)(struct maccrt_device *d, struct maccrt_batch *b);
    /* Optional: the tasks submitted to d that no thread of d has taken yet
     * (a hint, read without d's locks). A plugin that offers it promises
     * that d's own threads call maccrt_up.idle(d) whenever they have no task
     * to take (before they poll or sleep) and d->idle_work is not 0: work
     * the runtime defers to that moment while tasks wait in d's queue (a
     * completed task's early write-backs) waits for them. */
    int (*queued)(struct maccrt_device *d);

    /* Accepts task t, placed on d (tokens held, version chosen). The device
     * runs it asynchronously (host: a pool worker; nvidia: the GPU's helper
     * thread) by calling maccrt_task_execute(t). Called with maccrt_rt.lock
     * held: must not block and must not call back into the scheduler. */
    void (*submit)(struct maccrt_device *d, struct maccrt_task *t);
    /* Runs version t->ver of t in the calling thread with env (env->ptrs
     * filled) and waits for it (nvidia: launch on env->stream, then sync),
     * returning 0 or an error; or, once the launch went well, returns
     * MACCRT_RUN_PENDING without waiting and later reports the end from one
     * of its own threads through maccrt_up.ran (nvidia: a GPU's watcher sees
     * the kernels end, a helper finishes the task). */
    int (*run)(struct maccrt_device *d, struct maccrt_task *t, MACC_TaskEnv *env);
    /* Waits until everything issued on d has completed. */
    int (*synchronize)(struct maccrt_device *d);
    /* Text for an error code returned by run/copy (NULL: print the number). */
    const char *(*error_string)(int err);
    /* Why the calling thread's last alloc on d returned NULL (see alloc). */
    int (*alloc_error)(struct maccrt_device *d);

    /* Managed memory (optional; managed.c uses the first GPU that has them):
     * memory at the same address on the host and every device. */
    void *(*managed_alloc)(struct maccrt_device *d, size_t bytes);
    void (*managed_free)(struct maccrt_device *d, void *p);
    /* Free and total device memory (0 on success). */
    int (*mem_info)(struct maccrt_device *d, size_t *free_b, size_t *total_b);
    /* A hint: move managed [p, p + bytes) to d (to_host: to the host) ahead of
     * use, asynchronously, on the calling helper's stream (or the data stream). */
    void (*prefetch)(struct maccrt_device *d, const void *p, size_t bytes, int to_host);
    /* A hint: managed [p, p + bytes) is read by several devices (set) or
     * written again (!set): read-mostly copies on each reader, or not. */
    void (*advise_read_mostly)(struct maccrt_device *d, const void *p, size_t bytes, int set);
    /* Placement advice for managed [p, p + bytes) (optional; placement.c is
     * active only with it): host != 0 keeps it in host memory, read by d over
     * the link (preferred location host, accessed by d); host == 0 withdraws that. */
    void (*advise_place)(struct maccrt_device *d, const void *p, size_t bytes, int host);
    /* Times moving `bytes` of managed memory host -> d by page faults (a kernel
     * touching each page) and by a prefetch (optional; placement.c's density
     * threshold is their ratio). 0 on success. */
    int (*calibrate_migration)(struct maccrt_device *d, size_t bytes, double *fault_s, double *prefetch_s);

    /* Declare target variables (optional): the device address on d of a
     * device variable of the program (`symbol` as MACC_declare_target got
     * it). 0 on success, else a device error code. */
    int (*symbol_address)(struct maccrt_device *d, const void *symbol, void **devptr);
} maccrt_plugin;

/* Batches of work for a device's own threads (batch.c): the list and its
 * lock are the device's task queue's. push (lock held) adds fn(arg, i) for
 * i < n and wakes the threads; take (lock held; dropped around the item)
 * runs one item of the first batch with items left, 0 when none; wait
 * (lock not held) runs the items nobody took, waits for the others, and
 * frees the batch. */
typedef struct maccrt_batch maccrt_batch;
maccrt_batch *maccrt_batch_push(maccrt_batch **list, pthread_cond_t *wake, void (*fn)(void *arg, int i),
                                void *arg, int n);
int maccrt_batch_take(maccrt_batch **list, pthread_mutex_t *lock);
void maccrt_batch_wait(maccrt_batch **list, pthread_mutex_t *lock, maccrt_batch *b);


typedef struct maccrt_device {
    int num;   /* OpenMP device number: GPUs 0..k-1, host k */
    int kind;  /* MACC_DEV_* */
    int index; /* among the devices of its kind */
    char name[32];
    const maccrt_plugin *plugin;
    void *pdata;      /* plugin state */
    int selectable;   /* in MACC_DEVICES: eligible for device(any) and defaults */
    int cc;           /* nvidia: compute capability * 10 */
    int shares;       /* its tasks at once share one processor, each running longer the more run
                       * beside it (a GPU's kernels: set by the plugin's init_device; eft's
                       * occupancy term, sched.c) */
    size_t mem_bytes; /* device memory (0: unknown / host) */
    long long wave;   /* a GPU: the threads its multiprocessors hold at once (0: unknown / host);
                       * a kernel of four times as many runs two at once ("Tokens", RUNTIME.md) */

    /* Its placement state: tokens, its placed tasks (the list, their count,
     * their expected ends: pend, first_end) and rel_walk. Written under
     * slock (placements, under maccrt_rt.lock too; a task's release, under
     * maccrt_rt.lock or, while the completer is behind, by the GPU helper
     * that ran it alone: MACC_RELEASE_IN_HELPER); the walk reads the list and the ends under slock
     * and the counts atomically (sched.c, "A device's own lock"). */
    pthread_mutex_t slock;
    int tokens_total; /* MACCRT_TOKENS */
    int tokens_free;
    int tokens_peak_used;
    long released_by_helper; /* releases made by the GPU helper that ran the task (task.c; slock, read atomically) */
    struct maccrt_task *placed; /* tasks placed here, not finished (slock) */
    int nplaced;
    /* The expected ends of the first MACCRT_PEND of them, side by side (and
     * their tasks): eft__first reads these instead of walking the list, whose
     * tasks' cache lines the helpers running them write (a miss per task:
     * a quarter of eft's own time with four fake GPUs). npend == nplaced:
     * every placed task is here. slock. */
#define MACCRT_PEND 64
    int npend;
    double pend[MACCRT_PEND]; /* (-1: a task launched ahead without its tokens yet) */
    struct maccrt_task *ptask[MACCRT_PEND];
    /* placed tasks launched ahead that have no tokens yet: queued behind
     * their lane's running task, not running beside it (slock; read
     * atomically: sched__running) */
    int nahead0;
    int concurrency; /* tasks the plugin runs at once (GPU: helpers); 0: as tokens allow */
    /* Work deferred to d's idle threads (task.c's early write-backs, taken by
     * maccrt_up.idle): read without a lock by the plugin, whose threads skip
     * the idle call while it is 0. */
    atomic_int idle_work;
    /* Bytes of write-backs on their way home over its link: copies in
     * flight (cache.c) and early write-backs waiting for its idle helpers
     * (task.c). MACC_WB_VIA_EARLY=1: an early write-back goes through the
     * GPU whose link has the least (cache__early_via); via_wait: one of its
     * helpers waits for such a write-back (one at a time). */
    atomic_llong wb_load;
    atomic_int via_wait;
    /* eft's "first placed task expected to end" of this device (0: none):
     * kept as placements come (the smaller of the two) and counted again
     * over the placed list only after the task that had it finishes
     * (first_ok 0). slock. */
    double first_end;
    int first_ok;
    /* Its own ready queue (sched.c): ready tasks whose predecessors wrote
     * their data here (their home) or that chose to wait for it, oldest
     * first. maccrt_rt.lock. */
    struct maccrt_task *rq_head, *rq_tail;
    int rq_len;
    unsigned long rel_walk; /* maccrt_rt.walks when a task of its last ended (sched.c; slock, read atomically) */

    /* The data directory's tree of this device (cache.c): its present-table
     * entries and (devices with their own memory) cached copies of tasks'
     * maps; guarded by the directory lock. dheld: its present-table entries
     * (read without the lock by a host task's maps). dlock: this device's
     * part of the directory lock (cache.c, "Concurrency"): held with it
     * by every operation that changes a tree, and alone by a GPU task's
     * maps that touch only this device's entries. */
    maccrt_rtree dtree;
    pthread_mutex_t dlock;
    long dfast; /* maps of its tasks taken or given back under dlock alone (dlock) */
    long dfirst; /* first uses of sections by its tasks beside the directory's global part (cache.c; dlock) */
    long dmade;  /* of them, sections' first uses anywhere (cache.c; dlock) */
    long dstale; /* writes of its tasks that made other copies stale beside that part (cache.c; dlock) */
    atomic_long dheld;
    /* omp_target_alloc's blocks on this device (device addresses; data.c). */
    maccrt_rtree allocs;

    /* Statistics (stats.c). Counters updated under maccrt_rt.lock, bytes with
     * atomics (copies run outside the lock). */
    long tasks_run;
    atomic_long tasks_direct; /* tasks run at once by their creating threads (the throttle): added in
                               * batches (maccrt_task_flush_counts), no lock */
    int running;       /* tasks placed and not finished */
    double busy_since; /* when running went 0 -> 1 */
    double busy_s;     /* time with at least one task running */
    double task_s;     /* sum of task execution times */
    atomic_ullong bytes_h2d, bytes_d2h;
    atomic_ullong bytes_p2p; /* bytes copied into this device from another one */
    /* Measured copy bandwidths, bytes/s (0: not yet), moving averages of the
     * copies of 256 KiB or more: host -> d, d -> host, another device -> d.
     * The scheduler's residency estimate reads them (maccrt_cache_move_time). */
    _Atomic double bw_h2d, bw_d2h, bw_p2p;
    /* eft's link term: the estimated copy time into this device of the tasks
     * placed on it whose maps are not acquired yet (ns; sched.c, task.c) */
    atomic_llong link_ns;
} maccrt_device;

/* Plugins of this program (NULL-terminated), GPU kinds first, the host last:
 * filled by maccrt_init (the CUDA plugin only when the program links
 * libmaccrt_cuda.a). */
extern const maccrt_plugin *maccrt_plugins[];
extern const maccrt_plugin maccrt_host_plugin;

/* Calls up (base.c's table, filled by init.c before any device starts): the
 * devices run what they are handed and reach the task layer only through
 * it, never by calling its functions (the layers, docs/RUNTIME.md). */
struct maccrt_thread;
typedef struct maccrt_upcalls {
    /* runs a task that plugin->submit accepted, in the calling thread: maps,
     * the version (plugin->run), unmapping, completion (maccrt_task_execute) */
    void (*execute)(struct maccrt_task *t);
    /* the end of a task whose plugin->run returned MACCRT_RUN_PENDING: err
     * as run would have returned it, seen_at when its end was seen
     * (maccrt_now); unmapping and completion (maccrt_task_ran) */
    void (*ran)(struct maccrt_task *t, int err, double seen_at);
    /* a thread that used the runtime exits (maccrt_task_thread_exit) */
    void (*thread_exit)(struct maccrt_thread *th);
    /* a thread of d (plugin->queued set) has no task to take: one piece of
     * the work deferred to such a moment (maccrt_task_idle); 1 when it did
     * some (the thread looks for tasks again), 0 when there was none */
    int (*idle)(struct maccrt_device *d);
    /* Launch-ahead: a successor of fifo[n - 1] whose every unfinished
     * predecessor is among fifo[0..n-1] (tasks launched in that order on one
     * stream of d, none of them finished while the caller holds it), its
     * maps taken on d without a copy or a wait, placed on d for the caller
     * to run behind them; or NULL (maccrt_task_ahead_pick) */
    struct maccrt_task *(*ahead_pick)(struct maccrt_device *d, struct maccrt_task *const *fifo, int n);
    /* runs that task's version on the caller's stream (go), or (go 0)
     * gives its maps and place back: it waits for its predecessors as before
     * (maccrt_task_execute_ahead) */
    int (*ahead_execute)(struct maccrt_task *t, int go);
} maccrt_upcalls;
extern maccrt_upcalls maccrt_up;

/* ==== 4. the data directory (cache.c) and data directives (data.c) ========= */

/* Reference kinds. */
enum {
    MACCRT_REF_STRUCTURED = 0, /* data_begin/end, and a task's own maps of present data */
    MACCRT_REF_DYNAMIC = 1     /* enter/exit data */
};

/* Declare target variables' entries (maccrt_ptable_add_var): PERM_TO present
 * for the whole run (OpenMP's infinite reference count: maps copy only with
 * `always`), PERM_LINK present only while its counts are above zero, its
 * storage (the device variable) staying in place between maps. */
enum { MACCRT_PERM_NONE = 0, MACCRT_PERM_TO, MACCRT_PERM_LINK };

/* The device's data state goes away: its directory tree's entries and its
 * omp_target_alloc records are freed (the device memory goes with the
 * device). maccrt_data_device_fini does both. */
void maccrt_dir_device_fini(maccrt_device *d);
void maccrt_data_device_fini(maccrt_device *d);

/* What a task's map took (bits; maccrt_map_task_release gives it back). */
enum {
    MACCRT_TOOK_NONE = 0,
    MACCRT_TOOK_REF = 1,  /* a reference on a present entry: maccrt_map_release */
    MACCRT_TOOK_DIR = 2,  /* a GPU's directory entry (the handle), used while the task runs */
    MACCRT_TOOK_HOST = 4  /* a host task's section under the coherence rules */
};

/* A data construct's map m on d (entering a data region: REF_STRUCTURED,
 * enter data: REF_DYNAMIC). Returns the variable's device address (m->base
 * translated). Errors (not present with MACC_MAP_PRESENT, partially present,
 * out of device memory) are fatal and name loc. On a device with its own
 * memory the entry is pinned (see maccrt_dir_affinity). */
void *maccrt_map_acquire(maccrt_device *d, const MACC_Map *m, int ref, const MACC_SrcLoc *loc);
/* Drops a reference of kind ref on m (data_end, exit data, end of a task);
 * del: 1, MACC_MAP_DELETE / OpenACC's finalize (the dynamic count to 0); 2,
 * OpenMP's map(delete:) (MACC_MAP_DELETE_ALL: both counts to 0, the entry
 * leaves even inside a data region). Copies back (from) when
 * the entry goes away or with MACC_MAP_ALWAYS. Absent sections are ignored. */
void maccrt_map_release(maccrt_device *d, const MACC_Map *m, int ref, int del,
                        const MACC_SrcLoc *loc);
/* update to/from for one map. */
void maccrt_map_update(maccrt_device *d, const MACC_Map *m, const MACC_SrcLoc *loc);
/* A task's map m on d, the device it runs on: the device address of m->base.
 * Inside a present entry of a GPU: that entry (no copy); otherwise on a GPU
 * the coherent copy of the directory; on the host a reference on a present
 * entry around it, if any, and the host copy made current. *took and
 * *handle go back to maccrt_map_task_release at the task's end. */
void *maccrt_map_task_acquire(maccrt_device *d, const MACC_Map *m, int *took, void **handle,
                              const MACC_SrcLoc *loc);
void maccrt_map_task_release(maccrt_device *d, const MACC_Map *m, int took, void *handle,
                             const MACC_SrcLoc *loc);
/* The same for a task's n maps at once (the directory's lock taken once for
 * those it serves). */
void maccrt_map_task_acquire_n(maccrt_device *d, int n, const MACC_Map *maps, void **ptrs, int *took,
                               void **handles, const MACC_SrcLoc *loc);
void maccrt_map_task_release_n(maccrt_device *d, int n, const MACC_Map *maps, const int *took,
                               void *const *handles, const MACC_SrcLoc *loc);
/* All n maps of a task on GPU d taken without a copy, a wait or a new entry
 * (d's own valid copies), or none: 1 when taken (task.c's launch-ahead). */
int maccrt_map_task_try_fast_n(maccrt_device *d, int n, const MACC_Map *maps, void **ptrs, int *took,
                               void **handles);
/* Those maps given back unused (the task did not run). */
void maccrt_map_task_untake_n(maccrt_device *d, int n, int *took, void **handles);
/* The affinity rule (data constructs): the devices with their own memory on
 * which a data construct made present a section that one of t's maps
 * overlaps (an attach or zero-length map: the pointer lies in it), and the
 * devices of omp_target_alloc blocks that its device pointers point into.
 * May be called with maccrt_rt.lock held. */
maccrt_mask maccrt_data_affinity(const struct maccrt_task *t);
maccrt_mask maccrt_dir_affinity(const struct maccrt_task *t);
/* Performs data operation op (MACCRT_OP_*) on d now, in the calling thread. */
void maccrt_data_op(maccrt_device *d, int op, int nmaps, const MACC_Map *maps,
                    const MACC_SrcLoc *loc);
/* Is [p, p + bytes) inside one present entry of d? (bytes 0: is p inside one). */
int maccrt_map_is_present(maccrt_device *d, const void *p, size_t bytes);
/* Counts of the present entry containing p (-1 each if none); for tests. */
void maccrt_map_counts(maccrt_device *d, const void *p, long *sref, long *dref);
/* A declare target variable's entry on d: host range [host, host + bytes),
 * device copy dev, kind MACCRT_PERM_TO or MACCRT_PERM_LINK. Returns 0, 1 when
 * the same variable already has one (registered by another file), -1 when
 * the range overlaps other mapped data (nothing added). */
int maccrt_ptable_add_var(maccrt_device *d, void *host, size_t bytes, void *dev, int perm,
                          const char *name);

/* ---- declare target variables (declare.c) ---- */

/* The devices are up (end of maccrt_init): the variables registered so far
 * get their entries, later registrations get them at once. */
void maccrt_declare_start(void);
/* Entries for every registered variable on d, a device with its own memory
 * (maccrt_declare_start does it for the devices of the runtime; tests call it
 * for devices of their own). */
void maccrt_declare_device(maccrt_device *d);
/* The device address of host address p on d when an entry of d's table holds
 * it (managed memory: p itself), else NULL. */
void *maccrt_map_device_ptr(maccrt_device *d, const void *p);
/* omp_target_associate_ptr: [host, host + bytes) on d is dev (the program's
 * memory), with an infinite reference count. 0, or an errno value (EINVAL:
 * the range overlaps an entry that is not this same association). */
int maccrt_map_associate(maccrt_device *d, const void *host, void *dev, size_t bytes);
/* omp_target_disassociate_ptr: removes the association starting at host.
 * 0, or EINVAL when there is none. */
int maccrt_map_disassociate(maccrt_device *d, const void *host);

/* omp_target_alloc's blocks, per device (device addresses): noted when
 * allocated, forgotten when freed; maccrt_alloc_forget returns whether p
 * started a block of d. maccrt_alloc_owner: the device one of whose blocks
 * holds p, or -1. Take the pin locks (innermost). */
void maccrt_alloc_note(maccrt_device *d, void *p, size_t bytes);
int maccrt_alloc_forget(maccrt_device *d, void *p);
int maccrt_alloc_owner(const void *p);

/* A map's host section [*a, *b) (b saturates at the top of the address space). */
static inline void maccrt_section(const MACC_Map *m, uintptr_t *a, uintptr_t *b)
{
    *a = (uintptr_t)m->start;
    *b = *a + m->bytes < *a ? UINTPTR_MAX : *a + m->bytes;
}
/* The device address of hostptr in a copy of the host range starting at
 * `start` whose device address is dev_start. Computed on integers: hostptr may
 * lie before the section (a base pointer outside it), which as pointer
 * arithmetic would overflow. */
static inline void *maccrt_translate(const void *dev_start, uintptr_t start, const void *hostptr)
{
    return (void *)((uintptr_t)dev_start + ((uintptr_t)hostptr - start));
}
/* Device memory for `bytes` of the variable `name` (hostptr: its host address)
 * on d. Failure is fatal and names the variable ("out of GPU memory mapping
 * 'x' (N bytes) on nvidia:0"); `locked`, when not NULL, is unlocked first. */
void *maccrt_device_alloc(maccrt_device *d, void *hostptr, size_t bytes, const char *name,
                          pthread_mutex_t *locked, const MACC_SrcLoc *loc);
/* Copies bytes between the host and d (to_dev: host -> device), counts them
 * and traces them; a failure is fatal and names `name` and loc. */
void maccrt_copy(maccrt_device *d, int to_dev, void *dst, const void *src, size_t bytes,
                 const char *name, const MACC_SrcLoc *loc);
/* maccrt_copy host -> d through plugin->copy_h2d_start where d has it and
 * MACC_FILL_ASYNC is not 0: returns the fence of bytes still on their way
 * (see the plugin), or NULL once they are in place. */
void *maccrt_copy_start(maccrt_device *d, void *dst, const void *src, size_t bytes, const char *name,
                        const MACC_SrcLoc *loc);
/* Copies bytes from src on device `from` to dst on d (plugin->copy_peer),
 * counted in d->bytes_p2p and traced; a failure is fatal. */
void maccrt_copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                      size_t bytes, const char *name, const MACC_SrcLoc *loc);
/* Copies bytes from src on device `from` home to host dst through d's link
 * (plugin->copy_d2h_via); 0 when d cannot from the calling thread (nothing
 * copied: the caller copies from `from`), 1 when copied. Errors are fatal. */
int maccrt_copy_via(maccrt_device *d, void *dst, maccrt_device *from, const void *src, size_t bytes,
                    const char *name, const MACC_SrcLoc *loc);
/* Bandwidth assumed for a link not measured yet (bytes/s). */
#define MACCRT_DEFAULT_BW 10e9

/* ---- the coherence directory: GPU copies of tasks' maps (cache.c) ---- */

/* A host task's map: before (the host copy of the section made current) and
 * after (other copies of a written section invalidated). */
void maccrt_cache_host_acquire(const MACC_Map *m, const MACC_SrcLoc *loc);
void maccrt_cache_host_release(const MACC_Map *m, const MACC_SrcLoc *loc);
/* A synchronisation point: every dirty byte of cached entries back to the
 * host, every cached entry dropped (present entries stay). `also`: a device
 * outside the runtime's table (tests), or NULL. */
void maccrt_cache_flush(maccrt_device *also);
/* Synchronisation points so far (cache.c): each flush adds one first; work
 * deferred before one does nothing after it (task.c's deferred write-backs). */
unsigned long maccrt_cache_epoch(void);
/* A GPU task on d wrote [a, b) and nothing will use it before the next
 * synchronisation point: the dirty bytes of d's cached entry there go home
 * now (the entry stays valid). Nothing is done when the entry is in use,
 * claimed or clean. Returns the bytes copied. */
size_t maccrt_cache_write_early(maccrt_device *d, uintptr_t a, uintptr_t b, const MACC_SrcLoc *loc);
/* The cached entries of every GPU that hold dirty bytes and that no task
 * uses or claims now, as (device, [a, b)): what a write-back ahead of a
 * synchronisation point may copy home (maccrt_cache_write_early looks at
 * each again). *n: how many; the array (NULL when none) is the caller's. */
typedef struct maccrt_dirty_range {
    maccrt_device *dev;
    uintptr_t a, b;
} maccrt_dirty_range;
maccrt_dirty_range *maccrt_cache_dirty_idle(size_t *n);
/* The residency term of the scheduler's estimate for t on d: the time to
 * bring every input section of t not valid on d from where its current copy
 * is (another GPU's valid copy: a device-to-device copy; else the host's,
 * after other GPUs' dirty bytes come back), and on the host the pull-back
 * of GPU-dirty bytes. Takes the directory's lock; the scheduler, under
 * maccrt_rt.lock, only tries it (the _try form). */
double maccrt_cache_move_time(const struct maccrt_task *t, maccrt_device *d);
/* The same, or -1 without waiting when the directory's lock is busy. */
double maccrt_cache_move_time_try(const struct maccrt_task *t, maccrt_device *d);
/* The residency term of t for every device in want (bits of
 * maccrt_rt.devices) from one look at the directory, into out[device]:
 * each section's entries on each GPU are found once, however many devices
 * are asked about (the scheduler asks for every candidate of a task).
 * Returns 0, or -1 without waiting when the directory's lock is busy. */
int maccrt_cache_move_times_try(const struct maccrt_task *t, maccrt_mask want, double *out);
/* The directory's section index (cache.c): whether it is still on (no entry
 * partly overlapped another device's), and, for tests, whether the residency
 * term uses it (0: it walks every device's tree). */
int maccrt_cache_index_on(void);
void maccrt_cache_index_use(int use);
/* Cached (not present-table) entries of d, and how many are dirty; for tests
 * and statistics. */
long maccrt_cache_entries(const maccrt_device *d, long *dirty);
/* What d's directory tree holds (tests). */
typedef struct maccrt_dir_info {
    long held;         /* present-table entries (data constructs, declare target, associations) */
    long pinned;       /* of them, pinned (the affinity rule) */
    long held_dirty;   /* of them, with bytes tasks wrote that the host has not seen */
    long cached;       /* coherent copies of tasks' maps */
    long cached_dirty; /* of them, dirty */
    long early;        /* early write-backs so far, every device (maccrt_cache_write_early) */
    long fast;         /* maps of its tasks taken or given back under its own lock alone */
    long first;        /* first uses of sections by its tasks beside the directory's global part */
    long made;         /* of them, sections' first uses anywhere (their records made) */
    long stale;        /* writes of its tasks that made other copies stale beside that part */
} maccrt_dir_info;
void maccrt_dir_info_get(const maccrt_device *d, maccrt_dir_info *out);

/* ---- managed memory (managed.c) ---- */

/* MACC_malloc & co. (api.c) below maccrt_init (managed.c). */
void *maccrt_managed_malloc(size_t n);
void *maccrt_managed_calloc(size_t n, size_t m);
void *maccrt_managed_realloc(void *p, size_t n);
void maccrt_managed_free(void *p);
void *maccrt_managed_aligned_alloc(size_t align, size_t n);
int maccrt_managed_posix_memalign(void **out, size_t align, size_t n);
/* Is [p, p + bytes) in memory that MACC_malloc & co. took from their backend
 * (managed memory with a GPU: present everywhere at the same address)? */
int maccrt_managed_owns(const void *p, size_t bytes);
/* Are data clauses on managed memory turned into prefetches (MACC_MANAGED_HINTS,
 * default 1; 0 leaves everything to page faults, for comparison)? */
int maccrt_managed_hints(void);
/* A prefetch hint of managed [p, p + bytes) to d (to_host: back to the host).
 * To a device it is skipped when that range already went there since its last
 * trip back, unless force (explicit directives: enter data, update device). */
void maccrt_managed_prefetch(maccrt_device *d, const void *p, size_t bytes, int to_host, int force);
/* A task on d uses managed [p, p + bytes), writing it or not: data only read
 * by tasks on two or more devices gets read-mostly advice, withdrawn when a
 * task writes it. */
void maccrt_managed_note_use(maccrt_device *d, const void *p, size_t bytes, int writes);
/* The GPUs that hold managed [a, b) (placement.c's records, or without
 * placement the prefetches of managed.c): 0 with *out set, -1 when try and
 * busy. The scheduler's residency term (cache.c) reads it. */
int maccrt_managed_holders(uintptr_t a, uintptr_t b, int try, maccrt_mask *out);
/* Does the allocator serve CUDA managed memory (else host memory)? */
int maccrt_managed_on_gpu(void);
typedef struct maccrt_managed_info {
    int on, gpu, chunks;
    size_t chunk, min, max, cap, reserved;
    long backend_allocs, backend_frees, fallbacks, cap_refusals;
    long pooled_blocks, pooled_free;
} maccrt_managed_info;
void maccrt_managed_stats(maccrt_managed_info *out);
/* The block MACC_malloc & co. handed out that holds p (its start and size): 1, else 0. */
int maccrt_managed_block(const void *p, void **start, size_t *size);
/* The memory a GPU of `total` bytes keeps free of managed data: MACC_MANAGED_MARGIN, by
 * default a tenth of it and at least 256 MiB. */
size_t maccrt_managed_margin(size_t total);
/* A size setting ("64", "16M", "1G"); dflt when value is NULL or empty; fatal when invalid. */
size_t maccrt_managed_size_setting(const char *value, size_t dflt);

/* ---- placement of managed data (placement.c, OTM) ---- */
enum { MACCRT_PL_OTM, MACCRT_PL_PREFETCH, MACCRT_PL_DEMAND, MACCRT_PL_OFF };
/* Where a managed object is (the decision of its last launch). */
enum { MACCRT_PL_NONE, MACCRT_PL_GPU_PREFETCH, MACCRT_PL_GPU_FAULT, MACCRT_PL_HOST };
/* Does placement decide for d (a plugin with advise_place, hints on, MACC_PLACEMENT not off)? */
int maccrt_placement_active(const maccrt_device *d);
/* Before / after region r runs on d with these maps: the decisions for the
 * managed objects the maps name (trip: the outer loop's trip count, < 0 unknown). */
void maccrt_placement_launch(maccrt_device *d, const MACC_Region *r, int nmaps, const MACC_Map *maps,
                             long long trip);
void maccrt_placement_done(maccrt_device *d, const MACC_Region *r, int nmaps, const MACC_Map *maps);
/* A block freed / prefetched back to the host by a directive: its records go / are updated. */
void maccrt_placement_forget(const void *p, size_t bytes);
void maccrt_placement_note_host(const void *p, size_t bytes);
/* After a managed allocation: measures the GPUs' density thresholds in a
 * thread of its own (once), ahead of the first launch. fini waits for it
 * (at exit, before the devices stop). */
void maccrt_placement_prepare(void);
void maccrt_placement_fini(void);
/* MACC_target takes the trip count MACC_push_tripcount left for the thread (-1: none). */
long long maccrt_placement_take_trip(void);
typedef struct maccrt_placement_info {
    int policy;                 /* MACCRT_PL_* */
    double threshold;           /* density at or above which an object is prefetched */
    size_t budget;              /* GPU bytes the policies may fill */
    size_t resident, peak;      /* bytes charged to the GPU now / at most (never above budget) */
    unsigned long long prefetched, faulted, evicted, pinned; /* bytes, see docs/RUNTIME.md */
    long launches, n_prefetch, n_fault, n_host, n_evict, over_budget;
    int threshold_from;         /* MACCRT_PL_THR_*: where this GPU's threshold comes from */
    double fault_bw, prefetch_bw; /* measured, bytes/s (0: not measured) */
    size_t calib_bytes;         /* the calibration's size */
} maccrt_placement_info;
enum { MACCRT_PL_THR_DEFAULT, MACCRT_PL_THR_ENV, MACCRT_PL_THR_MEASURED };
void maccrt_placement_stats(const maccrt_device *d, maccrt_placement_info *out);
/* Where the object holding p is on d (MACCRT_PL_NONE: no record). */
int maccrt_placement_where(const maccrt_device *d, const void *p);
/* The GPUs whose placement records hold all of [a, b) (charged there, not
 * kept on the host) in *out: 0, or -1 when try and the lock is busy. */
int maccrt_placement_holders(uintptr_t a, uintptr_t b, int try, maccrt_mask *out);
/* The MACC_STATS lines of placement (nothing when no launch was placed). */
void maccrt_placement_print(FILE *f);

/* ==== 5. tasks (task.c) ===================================================== */

enum maccrt_task_state {
    MACCRT_TASK_WAITING = 0, /* has unfinished predecessors */
    MACCRT_TASK_READY,       /* in the ready queue */
    MACCRT_TASK_PLACED,      /* on a device, tokens held, handed to the plugin */
    MACCRT_TASK_INLINE,      /* on the host, to be run by its waiting encountering thread */
    MACCRT_TASK_RUNNING,
    MACCRT_TASK_DONE
};

/* Kinds of data operations run as tasks (data directives with depend/nowait). */
enum { MACCRT_OP_NONE = 0, MACCRT_OP_ENTER, MACCRT_OP_EXIT, MACCRT_OP_UPDATE };

/* Per-thread state (created on a thread's first runtime call). */
typedef struct maccrt_thread {
    long children;        /* deferred tasks created by this thread, not finished */
    pthread_cond_t cv;    /* with maccrt_rt.lock: children == 0, undeferred task progress */
    int refs;             /* 1 for the live thread + 1 per unfinished deferred child */
    int is_worker;        /* a runtime helper (host pool worker, GPU helper) */
    int unthrottled;      /* a throttle wait of this thread stalled: not throttled again (task.c) */
    int finishing;        /* in the completion of a task it ran: the host pool hands the first
                           * task placed meanwhile to it (host.c) when it runs pool tasks */
    int in_wait;          /* in a taskwait or a wait for every task (atomic; task.c's early
                           * write-backs) */
    struct maccrt_task *current; /* task this thread is executing */
    struct maccrt_thread *free_next; /* task.c: threads to free after a completion */
} maccrt_thread;

typedef struct maccrt_task {
    unsigned long id;
    const MACC_Region *region; /* NULL for data operations */
    const MACC_SrcLoc *loc;
    int deferred;   /* MACC_NOWAIT */
    long long trip; /* outer-loop trip count from MACC_push_tripcount (-1: unknown; placement.c) */
    int direct;     /* deferred, run at once by its creating thread outside the scheduler (the
                     * throttle): 1 in a block, 2 on that thread's stack */
    int timed;      /* t_start / t_end taken (maccrt_rt.timed, or resources(auto)) */
    int keep;       /* a tiny host task kept for its creating thread (task.c, host.c) */
    int sample;     /* a host task whose run is timed for the tiny-task measure (sample_s) */
    double sample_s;
    float occ; /* its device's tasks placed and not finished: at its placement (itself included), then the mean with its end's (sched.c) */
    int explore_threads; /* > 0: the host's exploring instance, run with this many threads (sched.c) */
    int op;         /* MACCRT_OP_*: a data operation instead of a region */

    /* Copied arguments (one allocation with the task). */
    void *args;
    size_t args_size;
    int nmaps;
    MACC_Map *maps;
    void **ptrs; /* filled on the device before the version runs */
    int *took;   /* per map: what its map took (MACCRT_TOOK_* bits) */
    void **cache; /* per map with MACCRT_TOOK_DIR: the directory entry it uses */
    int ndeps;
    MACC_Dep *deps;

    /* Where it may run: chosen at creation. */
    maccrt_mask cand; /* candidate devices */
    int fallback;     /* MACC_VERSION_FALLBACK versions allowed */
    int nested;       /* undeferred, created inside a running task: no tokens */
    maccrt_device *opdev; /* data operation: its device */

    /* Where it runs: set at placement. */
    maccrt_device *dev;
    const MACC_Version *ver;
    int tokens;
    int released; /* its device's placement state given back (maccrt_sched_release_device) */
    double exp_end; /* expected end (placement time + the region's estimate) */
    /* eft's residency term per device (maccrt_rt.ndevices entries in the
     * task's block; NULL for a task eft never asks about), as the directory
     * gave it at xfer_at (sched.c: eft__residency) */
    double xfer_at;
    float *xfer_memo;
    maccrt_mask xfer_known; /* devices whose xfer_memo is from xfer_at */
    unsigned long xfer_tried; /* the walk (maccrt_rt.walk) in which a look at the directory for it found it busy */
    /* eft's choice (device number + 1, 0: none) and its copy time there;
     * once placed there, the copy time added to that device's link_ns until
     * the task's maps are acquired */
    int chose_dev1;
    float chose_xfer;
    /* The walk in which the policy last chose that it wait for the busy
     * device whose queue it is in (maccrt_rt.walks then; 0: none), and when
     * (sched.c: sched__still_waits). */
    unsigned long wait_walk;
    double wait_at;
    long long link_ns;
    /* Bytes of its maps that finished predecessors wrote, and where: data a
     * device other than the one it runs on must move first (the transfer
     * part of the scheduler's estimate). At most MACCRT_PRODUCERS devices
     * (more are added to the last). Guarded by maccrt_rt.lock. */
#define MACCRT_PRODUCERS 4
    int nprod;
    short prod_dev[MACCRT_PRODUCERS];
    size_t prod_bytes[MACCRT_PRODUCERS];
    struct maccrt_task *dprev, *dnext; /* the device's placed list */
    int pidx;                          /* its slot in the device's pend[] (-1: none) */

    /* Dependences (guarded by maccrt_rt.lock). */
    int npreds;
    int nsuccs, capsuccs;
    struct maccrt_task **succs; /* succ_small until it holds more */
    struct maccrt_task *succ_small[4];
    unsigned long mark; /* id of the last task that got an edge from this one */

    int state;
    int refs; /* the scheduler's + the waiting thread's */
    maccrt_thread *creator; /* deferred: whose taskwait counts it */
    maccrt_thread *waiter;  /* undeferred: the thread waiting for it */
    struct maccrt_task *qprev, *qnext; /* ready queue: the global one, or its home device's */
    int qdev;                          /* that queue's device (its home, or the device it waits for), -1: the global queue */
    unsigned long rank;                /* its chain's: the least rank of its predecessors at its entry, else its id (task.c) */
    unsigned long rseq;                /* the walk's order, ties by id: its rank (MACC_CHAIN_ORDER=0: its id; MACC_PROGRAM_ORDER=0: maccrt_rt.ready_seq) */
    struct maccrt_task *pnext;         /* plugin queue link */
    struct maccrt_task *done_next;     /* task.c's stack of GPU completions to process */
    struct maccrt_task *in_next;       /* task.c's inbox of submissions to enter */
    struct maccrt_task *sub_next;      /* sched.c: placed, to hand to the plugin after unlocking */

    double t_start, t_end; /* when timed */
    double t_maps;         /* when timed: of that, the maps (copies in and out) */
    double t_ready, t_placed; /* MACC_TRACE only: when it became ready, when it was placed */
    double x_s0, x_tr0, x_r0; /* maccrt_task_execute's clocks, kept for maccrt_task_ran */
    void *pdata; /* plugin per-task state */
    /* Launch-ahead (task.c): 1 once placed to run behind its running
     * predecessors on their GPU's stream (it never becomes ready: its last
     * predecessor's completion leaves it running, and drops the reference
     * it took). Written under maccrt_rt.lock, read atomically. */
    int ahead;
    int perr;    /* plugin: the error an asynchronous run ended with (maccrt_up.ran) */
    int plane;   /* plugin: the stream (lane) it ran on */
    /* plugin: the task launched ahead behind it, and (pfin) whether this one
     * waits for the task before it to be finished (maccrt_up.ran) before its
     * own end may be claimed */
    struct maccrt_task *pafter;
    int pfin;
    double pseen; /* plugin: when that end was seen */
    float est1;   /* the estimate its exp_end was made with */
    int notok;    /* placed ahead, its tokens not given yet (slock) */
} maccrt_task;

/* Whether a goes before b in the queues' order (sched.c): by rseq, ties (a
 * chain's links share its rank) by id. The CUDA plugin asks it of the tasks
 * it runs (a lane's priority). */
static inline int maccrt_task_before(const maccrt_task *a, const maccrt_task *b)
{
    return a->rseq < b->rseq || (a->rseq == b->rseq && a->id < b->id);
}

/* A FIFO of tasks linked through pnext (a device's queue of placed tasks,
 * the CUDA plugin's queue of ended ones): appended at the tail, taken from
 * the head, under the queue owner's lock. */
static inline void maccrt_taskq_push(maccrt_task **head, maccrt_task **tail, maccrt_task *t)
{
    t->pnext = NULL;
    if (*tail)
        (*tail)->pnext = t;
    else
        *head = t;
    *tail = t;
}

/* The head of the FIFO taken off it, or NULL. */
static inline maccrt_task *maccrt_taskq_pop(maccrt_task **head, maccrt_task **tail)
{
    maccrt_task *t = *head;
    if (t) {
        *head = t->pnext;
        if (!*head)
            *tail = NULL;
    }
    return t;
}

/* Task blocks (freelist.c): per-thread free lists by size class, batches of
 * MACCRT_FL_BATCH blocks moving between threads through a global stack.
 * maccrt_block_alloc never returns NULL; the block is max_align_t-aligned. */
#define MACCRT_FL_BATCH 64
void *maccrt_block_alloc(size_t n);
void maccrt_block_free(void *p);
/* Blocks in the calling thread's lists, and batches in the global stacks. */
void maccrt_block_stats(long *local, long *batches);

/* Runs a placed task on its device in the calling thread: maps, the version
 * (through plugin->run) or the data operation, unmapping, then completion.
 * Called by plugin workers and by encountering threads for inline tasks. */
void maccrt_task_execute(maccrt_task *t);
void maccrt_task_ran(maccrt_task *t, int err, double seen_at);
/* maccrt_up.ahead_pick and maccrt_up.ahead_execute (task.c, "Launch-ahead"). */
maccrt_task *maccrt_task_ahead_pick(maccrt_device *d, maccrt_task *const *fifo, int n);
int maccrt_task_execute_ahead(maccrt_task *t, int go);
/* Tasks launched ahead so far (MACC_STATS, tests). */
long maccrt_task_ahead_count(void);
/* Picks for launch-ahead that found none, by reason (MACC_STATS): a
 * successor waiting for another lane's task (or being entered), one of a
 * kind that may not go ahead, its maps not valid on the GPU, not placed. */
void maccrt_task_ahead_refused(long *preds, long *kind, long *maps, long *place);
/* maccrt_up.idle: one of d's deferred early write-backs (task.c). */
int maccrt_task_idle(maccrt_device *d);
/* Early write-backs deferred to an idle helper so far (tests). */
long maccrt_task_deferred(void);
/* GPU tasks completed by the completion thread so far (task.c; tests). */
long maccrt_task_completer_count(void);
/* Seconds the completion thread held the runtime lock to complete them
 * (its walks included: the serial part of many devices' dispatch). */
double maccrt_task_completer_held_s(void);
/* GPU tasks whose device's placement state their helper gave back
 * (MACC_RELEASE_IN_HELPER; task.c; tests). */
long maccrt_task_released_in_helper(void);
/* The calling thread's state (base.c: created on first use; at the thread's
 * exit maccrt_up.thread_exit settles it). */
maccrt_thread *maccrt_thread_self(void);
void maccrt_thread_free(maccrt_thread *th);
/* maccrt_up.thread_exit: the thread's counts added, its struct freed once no
 * deferred child points at it. */
void maccrt_task_thread_exit(maccrt_thread *th);
/* Resolves the device selector of a data call (DEFAULT/ANY: the default device). */
maccrt_device *maccrt_data_device(int device, const MACC_SrcLoc *loc);
/* MACC_target and MACC_taskwait (api.c) below maccrt_init: creates a task
 * instance of r; waits for the calling thread's deferred children. */
void maccrt_task_create(const MACC_Region *r, const void *args, size_t args_size, int nmaps,
                        const MACC_Map *maps, int ndeps, const MACC_Dep *deps, int flags, int device,
                        int ifcond);
void maccrt_task_wait_children(const MACC_SrcLoc *loc);
/* Waits until every live task has finished. */
void maccrt_task_wait_all(void);
/* Adds the calling thread's count of tasks it ran directly to the host's
 * tasks_direct (done every 64, at taskwait and at thread exit). */
void maccrt_task_flush_counts(void);
/* The same, but gives up when no task has finished for stall_s seconds;
 * returns how many tasks are still live (used at exit). */
long maccrt_task_drain(double stall_s);

/* Creates a task for a data operation with dependences or nowait (device d,
 * MACCRT_OP_*); waits for it unless flags has MACC_NOWAIT. */
void maccrt_task_data_op(maccrt_device *d, int op, int nmaps, const MACC_Map *maps, int ndeps,
                         const MACC_Dep *deps, int flags, const MACC_SrcLoc *loc);
/* The version of t's region that device d runs (NULL for data operations). */
const MACC_Version *maccrt_task_version(const maccrt_task *t, const maccrt_device *d);
/* Picks the version of r for device d: the first non-fallback version of d's
 * kind that d can run, else (fallback) the first fallback one; NULL if none. */
const MACC_Version *maccrt_pick_version(const MACC_Region *r, const maccrt_device *d,
                                        int fallback);

/* ==== 6. scheduler (sched.c) ================================================ */

/* A scheduling policy: the default one is greedy (earliest expected finish
 * among the devices that have the tokens). A cost-model policy and
 * resources(auto) replace these hooks. All are called with maccrt_rt.lock held. */
typedef struct maccrt_policy {
    const char *name;
    /* Picks one device among cand (t's candidates not reserved by an earlier
     * task of this dispatch walk); fit (non-empty) are those with t's tokens
     * free. A device outside fit means "wait for it": t stays queued and
     * reserves it. backlog[d]: tasks of this walk already waiting for d. */
    maccrt_device *(*choose)(maccrt_task *t, maccrt_mask cand, maccrt_mask fit,
                             const int *backlog);
    /* Tokens version v of t needs on device kind `kind` (resources(N),
     * defaults, and later auto). */
    int (*tokens)(maccrt_task *t, int kind, const MACC_Version *v);
    /* t ran `seconds` on d (learning). */
    void (*observe)(maccrt_task *t, maccrt_device *d, double seconds);
    /* The devices of cand that take none of t's region's tasks whatever
     * their queues (eft's share rule), or NULL. Depends on the region's
     * history only, so a dispatch walk asks once per region. */
    maccrt_mask (*shut_out)(maccrt_task *t, maccrt_mask cand);
    /* Whether t, free to start now on h (its home, among fit), goes there
     * without choose being asked: the answer choose would give, found
     * without looking at every candidate; 0: ask choose. Or NULL. */
    int (*stays)(maccrt_task *t, maccrt_device *h, maccrt_mask cand, maccrt_mask skip);
    /* Whether t, which choose told to wait for h (busy), still waits while
     * the devices of `free` are free (h as it was then): 0: ask choose
     * again. Or NULL (then t waits only while no device is free). */
    int (*still_waits)(maccrt_task *t, maccrt_device *h, maccrt_mask free, maccrt_mask skip,
                       const int *backlog);
} maccrt_policy;

extern const maccrt_policy maccrt_policy_greedy; /* earliest finish among the free devices */
extern const maccrt_policy maccrt_policy_eft;    /* earliest finish, waiting included (default) */

/* Adds a ready task to the queue (state READY). */
void maccrt_sched_ready(maccrt_task *t);
/* A spinning thread's pause between two looks at what it waits for. */
static inline void maccrt_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/* The i-th wait of a thread spinning for something another thread finishes
 * soon: a pause for the first 256, then its core yielded (a thread that
 * holds what it waits for may be descheduled). */
static inline void maccrt_backoff(unsigned i)
{
    if (i < 256)
        maccrt_pause();
    else
        sched_yield();
}
/* pthread_mutex_lock(m) for a lock held a few microseconds at a time by many
 * threads (the directory's, cache.c): the caller
 * spins a little, then yields its core between tries, and sleeps only after
 * about 200 tries. A sleeping waiter's wake-up, tens of microseconds on a
 * loaded host, was what the helpers waited for, one hand-over after another.
 * MACC_LOCK_SPIN=0: a plain pthread_mutex_lock (for comparison). */
void maccrt_lock_spin(pthread_mutex_t *m);
/* A boolean setting of the environment, read once into *memo (-1 until
 * then; set atomically, as every helper may ask at once): dflt when `name`
 * is unset, 0 when it is "0", 1 otherwise. Inline: maccrt_lock_spin and
 * every task's maps ask; the first read is maccrt_env_flag_read's. */
int maccrt_env_flag_read(int *memo, const char *name, int dflt);
static inline int maccrt_env_flag(int *memo, const char *name, int dflt)
{
    int v = __atomic_load_n(memo, __ATOMIC_RELAXED);
    return v >= 0 ? v : maccrt_env_flag_read(memo, name, dflt);
}
/* pthread_mutex_trylock when m looks unlocked (a plain read first): a try
 * of a held lock is an atomic write that takes its cache line from the
 * holder and every spinner. 0: taken. */
int maccrt_lock_try(pthread_mutex_t *m);

/* Polls done(arg) for up to `ns` nanoseconds, pausing between polls and
 * yielding the core every 16: 1 when it became true, 0 when the time ran out
 * (the caller then sleeps on its condition variable). For waits that usually
 * end within microseconds, where a sleeping thread's wake-up costs tens. */
int maccrt_poll(int (*done)(const void *arg), const void *arg, long ns);

/* After a poll that ran out: sleeps MACC_DOZE_US (default 20 us; 0: not at
 * all) at a time, the timer slack lowered to 1 us meanwhile, and checks
 * done(arg) between sleeps, for up to `ns` nanoseconds: 1 when it became
 * true, 0 when the time ran out. A kernel of milliseconds is thus seen to end
 * within about a step, where a blocking wait's interrupt wake-up (and the
 * condition variable's after it) cost 100-200 us per region on an H100,
 * while the thread uses a few percent of a core. */
int maccrt_doze(int (*done)(const void *arg), const void *arg, long ns);
long maccrt_doze_step(void);

/* How long maccrt_doze goes on before a wait blocks: past 100 ms a wake-up's
 * cost is under 0.2% of the wait. */
#define MACCRT_DOZE_NS 100000000L

/* The copying crew (crew.c): threads that share large host-to-host copies
 * with the thread that asks for one (a staged copy's chunk into its slot).
 * maccrt_crew_start starts MACC_COPY_THREADS threads (default: half the
 * cores left by `busy` threads of the devices and the program's own, at most 8)
 * once and returns how many run; maccrt_crew_stop joins them (copies then
 * run on their callers alone). A job belongs to one caller at a time
 * (maccrt_crew_job_new: NULL when all are handed out; copies then run
 * alone). maccrt_crew_copy copies n bytes, in parts the crew and the caller
 * claim, and returns once all are copied; nt: non-temporal stores where dst
 * is 16-byte aligned, fenced. */
typedef struct maccrt_crew_job maccrt_crew_job;
int maccrt_crew_start(int busy);
void maccrt_crew_stop(void);
int maccrt_crew_threads(void);
long maccrt_crew_parts(void); /* parts the crew's threads copied so far */
maccrt_crew_job *maccrt_crew_job_new(void);
void maccrt_crew_copy(maccrt_crew_job *j, void *dst, const void *src, size_t n, int nt);

/* Places as many ready tasks as the tokens allow. GPU tasks placed are
 * handed to their plugins by maccrt_sched_submit_placed, which the caller
 * calls after it unlocks maccrt_rt.lock (or before it waits with it). */
void maccrt_sched_dispatch(void);
/* MACC_SCHED_LOG's lines so far to its file (each taskwait: the log is buffered). */
void maccrt_sched_log_flush(void);
/* t, not ready (its predecessors run on d), placed on d to run behind them
 * (task.c's launch-ahead): its version and place counted as a placement's,
 * its state RUNNING, no tokens yet: it runs after its predecessors, on
 * theirs (the release of the task before it on its lane hands them over:
 * maccrt_sched_release_device). 0 (nothing done) when the version is resources(auto)'s or the
 * region has not yet run on d's kind (its exploration is the walk's).
 * maccrt_rt.lock held. */
int maccrt_sched_place_ahead(struct maccrt_task *t, maccrt_device *d);
/* maccrt_sched_place_ahead taken back (the task was not launched): it
 * waits for its predecessors again. maccrt_rt.lock held. */
void maccrt_sched_unplace_ahead(struct maccrt_task *t);
/* A task placed ahead whose last predecessor completes now: its tokens
 * taken if the release of the task before it on its lane did not hand
 * them over (maccrt_sched_release_device), and it has not ended. */
void maccrt_sched_ahead_tokens(struct maccrt_task *t);
/* Hands the GPU tasks this thread's dispatch placed to their plugins
 * (maccrt_rt.lock held or not). */
void maccrt_sched_submit_placed(void);
/* t is finished: gives its tokens back (maccrt_rt.lock held). */
void maccrt_sched_release(maccrt_task *t);
/* Its device's part of that, once: its tokens, its place among the device's
 * placed tasks (d->slock taken; no other lock needed). */
void maccrt_sched_release_device(maccrt_task *t, int by_helper);
/* t's copy time leaves its device's link term (eft; once its maps are acquired). */
void maccrt_sched_link_done(maccrt_task *t);
/* Whether t, a task with depend clauses beside a GPU, may not explore the
 * host (its region has not run there); maccrt_rt.lock held. */
int maccrt_sched_host_unexplorable(const maccrt_task *t);
/* Runs, in the calling thread, the first task waiting in the host pool's
 * queue that `creator` created (host.c): a thread that waits for its tasks
 * (the throttle, taskwait) lends its core to them, as libgomp's waiting
 * threads run tasks. Returns 1 when it ran one. Called without maccrt_rt.lock. */
int maccrt_host_help(maccrt_device *d, const maccrt_thread *creator);
/* The host pool's counters: sleeping workers woken by a submit, tasks run by
 * maccrt_host_help, tasks handed to the thread whose completion placed them
 * (no queue), workers started. */
void maccrt_host_counts(maccrt_device *d, long *signals, long *helped, long *handed, int *workers);
/* Kept tasks (t->keep) placed on the host so far, and those a worker ran
 * after a whole spin (their creating thread did not come for them). */
void maccrt_host_kept(maccrt_device *d, long *kept, long *by_workers);
/* Host threads a host task holding `tokens` may use (host.c). */
int maccrt_host_nthreads(int tokens);

/* Per-region history for the cost model (sched.c). */
/* resources(auto): the token amounts tried, per device kind. */
#define MACCRT_AUTO_LEVELS 3 /* 100, 50, 25 tokens */
#define MACCRT_AUTO_TRIES 2  /* instances measured at each level */
typedef struct maccrt_region_info {
    const MACC_Region *region;
    long runs[MACC_DEV_NKINDS];
    double ema_s[MACC_DEV_NKINDS]; /* moving average of one instance's run time */
    double dev_s[MACC_DEV_NKINDS]; /* moving average of |run time - ema_s| */
    int exploring[MACC_DEV_NKINDS]; /* instances placed while none was measured */
    /* The same per device (GPUs of one kind may differ); a device not yet
     * measured uses its kind's figures. */
    long druns[MACCRT_MAX_DEVICES];
    double dema_s[MACCRT_MAX_DEVICES], ddev_s[MACCRT_MAX_DEVICES];
    double dlast_at[MACCRT_MAX_DEVICES]; /* when each device's last sample came (0: none timed) */
    /* moving average of the device's tasks in flight over a sample's run
     * (devices that share one processor: eft's occupancy term), per device */
    double docc[MACCRT_MAX_DEVICES], occ_s[MACC_DEV_NKINDS]; /* (and per kind) */
    /* resources(auto): instances measured and their mean time per level */
    int auto_runs[MACC_DEV_NKINDS][MACCRT_AUTO_LEVELS];
    int auto_started[MACC_DEV_NKINDS][MACCRT_AUTO_LEVELS];
    double auto_s[MACC_DEV_NKINDS][MACCRT_AUTO_LEVELS];
    int auto_choice[MACC_DEV_NKINDS]; /* tokens chosen, 0 while exploring */
    /* Host runs of its deferred tasks, sampled (the first 8, then one in 64
     * placed), maps included: the tiny-task measure (task.c). */
    long host_placed, host_samples;
    double host_run_s;
} maccrt_region_info;
maccrt_region_info *maccrt_region_info_get(const MACC_Region *r);
/* A version of region r ran on d and launched `threads` threads (its
 * env.threads; 0: not told): whether its kernels fill d four times over
 * (MACC_GPU_FILLS), which sets the default tokens of r's later tasks on d's
 * kind (sched.c, "Tokens" in RUNTIME.md). Any thread, no lock. */
void maccrt_sched_note_threads(const MACC_Region *r, const struct maccrt_device *d, long long threads);

/* ==== 7. runtime state and initialisation (init.c) ========================== */

enum { MACCRT_OFFLOAD_DEFAULT = 0, MACCRT_OFFLOAD_MANDATORY, MACCRT_OFFLOAD_DISABLED };

/* A parsed MACC_DEVICES value. */
typedef struct maccrt_devsel {
    int host;             /* "host" / "smp" named */
    int nvidia_all;       /* "nvidia" / "cuda" without indices */
    maccrt_mask nvidia;   /* "nvidia:0,1": those indices */
} maccrt_devsel;

/* Parses a MACC_DEVICES value ("host", "nvidia", "nvidia:0,1", "host,nvidia",
 * "all"; case-insensitive; NULL or empty: everything). Returns 0, or -1 with a
 * message in err. */
int maccrt_parse_devices(const char *s, maccrt_devsel *out, char *err, size_t errlen);
/* Parses MACC_TARGET_OFFLOAD; -1 when invalid (NULL/empty: default). */
int maccrt_parse_offload(const char *s);
/* Parses MACC_HOST_THREADS and other positive integers; -1 when invalid. */
long maccrt_parse_positive(const char *s);
/* A numeric setting read once: v (its getenv, NULL or empty: dflt) clamped
 * to [lo, hi], times scale, stored in *memo (relaxed) and returned. The
 * caller reads *memo first and calls this while it is negative. */
long maccrt_env_memo(long *memo, const char *v, long dflt, long lo, long hi, long scale);

typedef struct maccrt_runtime {
    pthread_mutex_t lock; /* see the locking order at the top */
    pthread_cond_t idle_cv; /* live == 0 */

    int ndevices;
    maccrt_device *devices[MACCRT_MAX_DEVICES];
    int ngpus;
    maccrt_device *host;  /* devices[ngpus] */
    maccrt_mask selectable; /* devices eligible for device(any) / default */
    maccrt_mask all;        /* every device */
    maccrt_mask shares;     /* devices whose tasks share one processor (d->shares: eft's occupancy term) */
    /* OpenMP's default-device-var (omp_set_default_device, OMP_DEFAULT_DEVICE),
     * process-wide, as a selector: the device number that regions and data
     * directives without a device clause use, MACC_DEVICE_INVALID (set to a
     * negative number other than omp_initial_device), or MACC_DEVICE_DEFAULT
     * while unset (then: the first selectable GPU that can run the region,
     * else the host). */
    atomic_int default_device;

    /* Settings. */
    int offload;       /* MACCRT_OFFLOAD_* */
    int host_threads;  /* threads the host tasks share */
    int stats;         /* MACC_STATS */
    const maccrt_policy *policy;

    /* Tasks. */
    unsigned long next_id;
    long live;                      /* created, not finished */
    unsigned long finished;         /* tasks finished so far */
    maccrt_task *ready_head, *ready_tail; /* the global ready queue (devices have their own) */
    int ready_cand[MACCRT_MAX_DEVICES]; /* ready tasks (any queue) that have device d as a candidate */
    unsigned long ready_seq;            /* tasks made ready so far (their rseq) */
    long policy_calls;  /* policy->choose calls of the dispatch walks (a test's measure of their cost) */
    long policy_terms;  /* residency terms the policy asked for (eft__residency: a test's measure) */
    long policy_blind;  /* of them, unknown: the directory busy and no earlier value kept */
    long inbox_pushes;  /* submissions left in task.c's inbox for a completing helper (tests) */
    long wait_completed; /* GPU tasks completed by a waiting program thread (task.c; tests) */
    unsigned long walk;     /* the dispatch walk in progress (0: none; sched.c), walks so far */
    unsigned long walks;
    int stopped;                    /* helpers stopped: run everything inline */
    /* The throttle: a thread that creates a deferred task while pending_max
     * tasks are live runs it at once itself when it can (no dependences, the
     * host its only device; task.c), else waits until live is down to
     * pending_max / 2 (throttled: threads waiting on throttle_cv). */
    long pending_max;
    int throttled;
    pthread_cond_t throttle_cv;
    int timed;                      /* time stamps per task (see init.c) */
    atomic_int fatal;               /* a fatal error is exiting the process */
} maccrt_runtime;

extern maccrt_runtime maccrt_rt;

/* One-time initialisation (pthread_once); every entry point calls it. */
void maccrt_init(void);

/* ==== 8. statistics (stats.c) =============================================== */

/* Bookkeeping around a task's life on a device; maccrt_rt.lock held. */
void maccrt_stats_placed(maccrt_device *d, maccrt_task *t);
void maccrt_stats_finished(maccrt_device *d, maccrt_task *t);
/* A placement taken back before the task ran (task.c's launch-ahead). */
void maccrt_stats_unplaced(maccrt_device *d, maccrt_task *t);
/* Writes the statistics table to f. */
void maccrt_stats_print(FILE *f);

/* trace.c: MACC_TRACE timeline. Event kinds: */
enum { MACCRT_TRACE_TASK, MACCRT_TRACE_H2D, MACCRT_TRACE_D2H, MACCRT_TRACE_DATA,
       MACCRT_TRACE_PLACE_PREFETCH, MACCRT_TRACE_PLACE_FAULT, MACCRT_TRACE_PLACE_HOST, MACCRT_TRACE_EVICT,
       MACCRT_TRACE_P2P, MACCRT_TRACE_WAIT_READY, MACCRT_TRACE_WAIT_QUEUE, MACCRT_TRACE_MAPS,
       MACCRT_TRACE_UNMAP, MACCRT_TRACE_FINISH, MACCRT_TRACE_ALLOC, MACCRT_TRACE_WAIT_DATA,
       MACCRT_TRACE_WAIT_LOCK, MACCRT_TRACE_HOLD_LOCK, MACCRT_TRACE_SUBMIT, MACCRT_TRACE_PIN };
void maccrt_trace_init(void);
int maccrt_trace_on(void);
/* Records a slice [t0, t1] (maccrt_now() seconds) on device d; `name` must
 * outlive the program's run (region and map names are static). */
void maccrt_trace_event(int kind, const struct maccrt_device *d, const char *name, double t0, double t1,
                        size_t bytes);
/* The same for a slice of one task's way (wait:ready, wait:queue, maps,
 * task, unmap, finish): its args name the task's number and its chain's
 * (its rank), which tools/tracestat.py --chains follows. */
void maccrt_trace_task_event(int kind, const struct maccrt_device *d, const char *name, double t0, double t1,
                             unsigned long task, unsigned long chain);
/* Writes the file (at exit). */
void maccrt_trace_write(void);

#endif
