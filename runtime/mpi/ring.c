/* ring.c: libmaccrt_mpi, the distributed array and the pipelined ring
 * (include/macc_mpi.h; docs/RUNTIME.md, "The MPI module").
 *
 * Memory. The slice and the ring buffers live on the rank's device, chosen
 * once per array: the node-local rank modulo the runtime's GPUs, or the host
 * (no GPU, MACC_MPI_DEVICE=host). On a GPU each piece of device memory is
 * associated (omp_target_associate_ptr) with a host address that names it:
 * an untouched anonymous mapping (no host memory is used) or, for the ring
 * buffers of a non-CUDA-aware MPI, the pinned staging buffer that MPI sends
 * from and receives into. Regions that map those names find them present on
 * that GPU, run there (the runtime's affinity rule) and copy nothing. On the
 * host the names are the memory.
 *
 * The ring (Wei et al., Algorithm 1, two buffers): the own contribution is in
 * buffer 0; step 0 updates with it and posts the send of buffer 0 to the right
 * and the receive of buffer 1 from the left. Step s (1..P-1) waits for the
 * receive into buffer s%2, forwards it (unless it is the last step: the right
 * neighbour made it), hands it to the update once the update of step s-1 is
 * done, and posts the next receive into buffer (s+1)%2 once that buffer's
 * send is done (macc_ring_run). The update runs in the ring's helper
 * thread while this thread keeps testing the requests (Open MPI progresses
 * transfers only inside MPI calls), so the transfers of step s+1 overlap the
 * update of step s. Updates of the rings of one array hold the array's lock.
 *
 * Staging (GPU, MPI not CUDA-aware): MPI uses the pinned host buffers; the
 * helper copies a received buffer to the GPU before updating (overlapped with
 * the transfers as above) and the own contribution is copied back to the host
 * before it is sent. A CUDA-aware MPI gets the device addresses.
 *
 * Failures: the communicators have MPI_ERRORS_RETURN and every call's status
 * is checked (mm__check): a failing call is reported with the rank and the
 * call, then MPI_Abort. Waits poll MPI_Test with a deadline (MACC_MPI_TIMEOUT
 * seconds of waiting with no update running): past it the rank reports what
 * it waited for, from whom, and aborts the job.
 */
#define _GNU_SOURCE
#include "macc_mpi.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

/* The CUDA part (runtime/mpi/cuda.c, libmaccrt_mpi_cuda.a), linked when the
 * program has GPU code: device memory from cudaMalloc (memory CUDA-aware MPIs
 * can register, unlike pool memory), pinned staging buffers. Without it the
 * device memory comes from omp_target_alloc and staging buffers are pageable. */
extern void *maccmpi_cuda_malloc(int ompdev, size_t bytes) __attribute__((weak));
extern void maccmpi_cuda_free(int ompdev, void *p) __attribute__((weak));
extern int maccmpi_cuda_memset(int ompdev, void *p, size_t bytes) __attribute__((weak));
extern void *maccmpi_cuda_host_alloc(size_t bytes) __attribute__((weak));
extern void maccmpi_cuda_host_free(void *p) __attribute__((weak));
extern int maccmpi_cuda_mem_used(int ompdev, size_t *used) __attribute__((weak));

#define MM_TAG_BASE 0x4d41 /* + thread index */
#define MM_CHUNK ((size_t)64 << 20)
#define MM_NBUF MACC_RING_BUFFERS /* contribution-sized buffers per ring */

struct macc_dist {
    MPI_Comm comm;      /* duplicate of the user's, MPI_ERRORS_RETURN */
    int rank, size;     /* in comm */
    size_t global, elem, offset, count, bytes;
    int dev, host_dev;  /* OpenMP device numbers; dev == host_dev: host memory */
    void *local;        /* host address (name) of the slice */
    void *dev_local;    /* its device address */
    size_t dev_bytes, host_bytes; /* accounting, under lock */
    size_t gpu_used0;   /* GPU memory in use before the slice was allocated */
    int gpu_measured;   /* gpu_used0 is known (the CUDA part is linked) */
    pthread_mutex_t lock;         /* updates of the slice, accounting */
};

struct macc_ring {
    macc_dist *d;
    size_t bytes;
    int thread, tag, left, right;
    int staging;        /* GPU without CUDA-aware MPI: MPI uses host[] */
    void *host[MM_NBUF];  /* names (host addresses) of the buffers */
    void *dev[MM_NBUF];   /* device addresses (== host[] on the host) */
    int mapped[MM_NBUF];  /* host[b] is an anonymous mapping (munmap it) */
    void *dev_block;      /* on a GPU: the one device block holding dev[] */
    MPI_Request send[MM_NBUF], recv;
    double wait_s;
    /* helper thread: runs update jobs one at a time */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, quit;
    long job_seq, done_seq; /* done_seq read by the ring thread with atomics */
    int job_buf, job_origin;
    int job_received;       /* job_buf was filled by MPI (staging: copy it to the GPU first) */
    macc_ring_update_fn fn;
    void *arg;
};

/* ---- errors ---------------------------------------------------------------- */

static int mm__world_rank(void)
{
    int r = -1, init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static void mm__die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void mm__die(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "macc: error: rank %d: %s\n", mm__world_rank(), msg);
    fflush(stderr);
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* A failed MPI call: "rank R: MPI_Call (what): MPI's message", then abort. */
static void mm__check(int err, const char *call, const char *what)
{
    if (err == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(err, s, &n) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", err);
    mm__die("%s (%s) failed: %s", call, what, s);
}

static double mm__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double mm__timeout_s = 120;
static pthread_once_t mm__timeout_once = PTHREAD_ONCE_INIT;

static void mm__timeout_init(void)
{
    const char *e = getenv("MACC_MPI_TIMEOUT");
    if (e && *e) {
        char *end;
        double x = strtod(e, &end);
        if (*end || !(x > 0))
            mm__die("MACC_MPI_TIMEOUT='%s' is not a positive number of seconds", e);
        mm__timeout_s = x;
    }
}

/* MACC_MPI_TIMEOUT, seconds (default 120). */
static double mm__timeout(void)
{
    pthread_once(&mm__timeout_once, mm__timeout_init);
    return mm__timeout_s;
}

/* Open MPI moves a large message only inside MPI calls (fragment by
 * fragment where the transport has no single copy), so while a transfer is
 * in flight the waits call MPI_Test back to back (yielding the CPU between
 * calls) for the first MM_SPIN_S seconds of a wait: with sleeps between the
 * tests a 170 MB message moved at a third of the link's speed (H200 node,
 * 2026-11-22). Past that, or with nothing in flight, they back off. */
#ifndef MM_SPIN_S
#define MM_SPIN_S 1.0
#endif

/* Backs off while polling: yields first, then sleeps up to 50 us. */
static void mm__pause(int *spins)
{
    if (++*spins < 64) {
        sched_yield();
        return;
    }
    int us = *spins < 1024 ? 5 : 50;
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

/* ---- devices and memory ---------------------------------------------------- */

int macc_mpi_cuda_aware(void)
{
    const char *e = getenv("MACC_MPI_CUDA_AWARE");
    if (e && !strcmp(e, "0"))
        return 0;
    int aware = 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    aware = MPIX_Query_cuda_support();
#endif
    if (e && !strcmp(e, "1"))
        return 1;
    if (e && *e && strcmp(e, "auto"))
        mm__die("MACC_MPI_CUDA_AWARE='%s': use 0, 1 or auto", e);
    return aware;
}

/* The device of this rank's slices: the node-local rank modulo the GPUs, or
 * the host. */
static int mm__pick_device(MPI_Comm comm)
{
    int host = omp_get_initial_device();
    int ngpu = omp_get_num_devices();
    MPI_Comm node;
    int lr = 0;
    /* collective: every rank splits, whatever it finds */
    mm__check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type",
              "node-local ranks");
    MPI_Comm_rank(node, &lr);
    MPI_Comm_free(&node);
    const char *e = getenv("MACC_MPI_DEVICE");
    if (e && *e && strcmp(e, "auto") && strcmp(e, "host") && strcmp(e, "gpu"))
        mm__die("MACC_MPI_DEVICE='%s': use host, gpu or auto", e);
    if (e && !strcmp(e, "host"))
        return host;
    if (ngpu <= 0) {
        if (e && !strcmp(e, "gpu"))
            mm__die("MACC_MPI_DEVICE=gpu but the runtime has no GPU");
        return host;
    }
    return lr % ngpu;
}

/* Device memory of `bytes` on dev (a GPU), or NULL. */
static void *mm__dev_alloc(int dev, size_t bytes)
{
    if (maccmpi_cuda_malloc)
        return maccmpi_cuda_malloc(dev, bytes);
    return omp_target_alloc(bytes, dev);
}

static void mm__dev_free(int dev, void *p)
{
    if (!p)
        return;
    if (maccmpi_cuda_free)
        maccmpi_cuda_free(dev, p);
    else
        omp_target_free(p, dev);
}

/* A host address range that names device memory: never touched, so it costs
 * no memory (MAP_NORESERVE). */
static void *mm__name(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Device memory for `bytes`, associated with a host name (pinned staging
 * memory when `staging`, else an untouched mapping). */
static void mm__gpu_pair(int dev, size_t bytes, int staging, void **host, void **devp, int *mapped,
                         const char *what)
{
    if (!*devp) /* else: part of a block the caller allocated */
        *devp = mm__dev_alloc(dev, bytes ? bytes : 1);
    if (!*devp)
        mm__die("cannot allocate %zu bytes of GPU memory on device %d for %s", bytes, dev, what);
    if (staging) {
        *host = maccmpi_cuda_host_alloc ? maccmpi_cuda_host_alloc(bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
        *mapped = 0;
    } else {
        *host = mm__name(bytes);
        *mapped = 1;
    }
    if (!*host)
        mm__die("cannot allocate %zu bytes of host memory for %s", bytes, what);
    int rc = omp_target_associate_ptr(*host, *devp, bytes ? bytes : 1, 0, dev);
    if (rc)
        mm__die("omp_target_associate_ptr for %s failed (%s)", what, strerror(rc));
}

static void mm__gpu_unpair(int dev, size_t bytes, void *host, void *devp, int mapped, int free_dev)
{
    if (!devp)
        return;
    omp_target_disassociate_ptr(host, dev);
    if (free_dev)
        mm__dev_free(dev, devp);
    if (mapped)
        munmap(host, bytes ? bytes : 1);
    else if (maccmpi_cuda_host_free)
        maccmpi_cuda_host_free(host);
    else
        free(host);
}

static void mm__copy(void *dst, int ddev, const void *src, int sdev, size_t bytes, const char *what)
{
    if (!bytes)
        return;
    int rc = omp_target_memcpy(dst, (void *)src, bytes, 0, 0, ddev, sdev);
    if (rc)
        mm__die("copying %s (%zu bytes, device %d to %d) failed (error %d)", what, bytes, sdev, ddev, rc);
}

static void mm__wait_one(MPI_Request *req, const char *call, const char *what);

/* ---- communicators --------------------------------------------------------- */

int macc_mpi_split(MPI_Comm comm, int size, MPI_Comm *ring, MPI_Comm *across)
{
    int rank, p;
    mm__check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", "macc_mpi_split");
    mm__check(MPI_Comm_size(comm, &p), "MPI_Comm_size", "macc_mpi_split");
    if (size <= 0)
        size = p;
    if (size > p || p % size) {
        if (rank == 0)
            fprintf(stderr, "macc: error: sub-rings of %d ranks do not divide %d ranks\n", size, p);
        return 1;
    }
    mm__check(MPI_Comm_split(comm, rank / size, rank, ring), "MPI_Comm_split", "sub-ring");
    mm__check(MPI_Comm_split(comm, rank % size, rank, across), "MPI_Comm_split", "across the sub-rings");
    MPI_Comm_set_errhandler(*ring, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(*across, MPI_ERRORS_RETURN);
    return 0;
}

/* ---- the distributed array --------------------------------------------------- */

macc_dist *macc_dist_new(MPI_Comm comm, size_t global_len, size_t elem_size)
{
    int init = 0;
    MPI_Initialized(&init);
    if (!init)
        mm__die("macc_dist_new: MPI is not initialised (call MPI_Init_thread first)");
    if (!elem_size)
        mm__die("macc_dist_new: element size 0");
    macc_dist *d = calloc(1, sizeof *d);
    if (!d)
        mm__die("out of memory");
    mm__check(MPI_Comm_dup(comm, &d->comm), "MPI_Comm_dup", "macc_dist_new");
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);
    pthread_mutex_init(&d->lock, NULL);
    size_t base = global_len / (size_t)d->size, rem = global_len % (size_t)d->size, r = (size_t)d->rank;
    d->global = global_len;
    d->elem = elem_size;
    d->count = base + (r < rem);
    d->offset = r * base + (r < rem ? r : rem);
    d->bytes = d->count * elem_size;
    d->host_dev = omp_get_initial_device();
    d->dev = mm__pick_device(d->comm);
    /* every rank has initialised its runtime (contexts on every GPU it
     * sees) once all have picked their devices: the GPU memory in use is
     * measured from here (macc_dist_device_used) */
    MPI_Request bar;
    mm__check(MPI_Ibarrier(d->comm, &bar), "MPI_Ibarrier", "macc_dist_new");
    mm__wait_one(&bar, "MPI_Ibarrier", "macc_dist_new");
    if (d->dev == d->host_dev) {
        /* written now: the pages are the rank's from the start (no page
         * faults inside the ring, and the memory measured is the memory used) */
        d->local = malloc(d->bytes ? d->bytes : 1);
        if (!d->local)
            mm__die("cannot allocate the slice: %zu bytes of host memory", d->bytes);
        memset(d->local, 0, d->bytes);
        d->dev_local = d->local;
        d->dev_bytes = d->bytes;
    } else {
        int mapped;
        d->gpu_measured = maccmpi_cuda_mem_used && !maccmpi_cuda_mem_used(d->dev, &d->gpu_used0);
        mm__gpu_pair(d->dev, d->bytes, 0, &d->local, &d->dev_local, &mapped, "the slice");
        d->dev_bytes = d->bytes;
        macc_dist_zero(d);
    }
    return d;
}

void macc_dist_delete(macc_dist *d)
{
    if (!d)
        return;
    if (d->dev == d->host_dev)
        free(d->local);
    else
        mm__gpu_unpair(d->dev, d->bytes, d->local, d->dev_local, 1, 1);
    MPI_Comm_free(&d->comm);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

void *macc_dist_local(const macc_dist *d) { return d->local; }
size_t macc_dist_offset(const macc_dist *d) { return d->offset; }
size_t macc_dist_count(const macc_dist *d) { return d->count; }
size_t macc_dist_global(const macc_dist *d) { return d->global; }
int macc_dist_device(const macc_dist *d) { return d->dev; }
MPI_Comm macc_dist_comm(const macc_dist *d) { return d->comm; }

size_t macc_dist_bytes(const macc_dist *d)
{
    macc_dist *m = (macc_dist *)d;
    pthread_mutex_lock(&m->lock);
    size_t b = d->dev_bytes;
    pthread_mutex_unlock(&m->lock);
    return b;
}

size_t macc_dist_host_bytes(const macc_dist *d)
{
    macc_dist *m = (macc_dist *)d;
    pthread_mutex_lock(&m->lock);
    size_t b = d->host_bytes;
    pthread_mutex_unlock(&m->lock);
    return b;
}

size_t macc_dist_device_used(const macc_dist *d)
{
    size_t now = 0;
    if (!d->gpu_measured || maccmpi_cuda_mem_used(d->dev, &now))
        return 0;
    return now > d->gpu_used0 ? now - d->gpu_used0 : 0;
}

void macc_dist_zero(macc_dist *d)
{
    if (d->dev == d->host_dev) {
        memset(d->local, 0, d->bytes);
        return;
    }
    if (maccmpi_cuda_memset) {
        if (maccmpi_cuda_memset(d->dev, d->dev_local, d->bytes))
            mm__die("zeroing the slice on device %d failed", d->dev);
        return;
    }
    size_t n = d->bytes < MM_CHUNK ? d->bytes : MM_CHUNK;
    void *z = calloc(n ? n : 1, 1);
    if (!z)
        mm__die("out of memory");
    for (size_t o = 0; o < d->bytes; o += n) {
        size_t k = d->bytes - o < n ? d->bytes - o : n;
        mm__copy((char *)d->dev_local + o, d->dev, z, d->host_dev, k, "zeros to the slice");
    }
    free(z);
}

void macc_dist_get(const macc_dist *d, void *dst)
{
    if (d->dev == d->host_dev)
        memcpy(dst, d->local, d->bytes);
    else
        mm__copy(dst, d->host_dev, d->dev_local, d->dev, d->bytes, "the slice to the host");
}

void macc_dist_put(macc_dist *d, const void *src)
{
    if (d->dev == d->host_dev)
        memcpy(d->local, src, d->bytes);
    else
        mm__copy(d->dev_local, d->dev, src, d->host_dev, d->bytes, "host memory to the slice");
}

/* Waits for req, polling with the deadline; what/peer name it in the message. */
static void mm__wait_one(MPI_Request *req, const char *call, const char *what)
{
    double limit = mm__timeout(), t0 = mm__now();
    int spins = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        mm__check(MPI_Test(req, &flag, &st), call, what);
        if (flag)
            return;
        double now = mm__now();
        if (now - t0 > limit)
            mm__die("%s (%s) did not complete within %g s (MACC_MPI_TIMEOUT): a peer failed or stalled; aborting",
                    call, what, limit);
        if (now - t0 < MM_SPIN_S)
            sched_yield();
        else
            mm__pause(&spins);
    }
}

void macc_dist_allreduce(macc_dist *d, MPI_Comm across, MPI_Datatype type, MPI_Op op)
{
    int tsize = 0, n = 1;
    mm__check(MPI_Type_size(type, &tsize), "MPI_Type_size", "macc_dist_allreduce");
    mm__check(MPI_Comm_size(across, &n), "MPI_Comm_size", "macc_dist_allreduce");
    if (tsize <= 0 || d->elem % (size_t)tsize)
        mm__die("macc_dist_allreduce: elements of %zu bytes are not made of a type of %d bytes", d->elem, tsize);
    if (n == 1 || !d->bytes)
        return;
    MPI_Errhandler old;
    MPI_Comm_get_errhandler(across, &old);
    MPI_Comm_set_errhandler(across, MPI_ERRORS_RETURN);
    size_t chunk = MM_CHUNK - MM_CHUNK % (size_t)tsize;
    int on_host = d->dev == d->host_dev;
    void *tmp = on_host ? NULL : malloc(chunk);
    if (!on_host && !tmp)
        mm__die("out of memory");
    for (size_t o = 0; o < d->bytes; o += chunk) {
        size_t k = d->bytes - o < chunk ? d->bytes - o : chunk;
        void *p = on_host ? (char *)d->local + o : tmp;
        if (!on_host)
            mm__copy(tmp, d->host_dev, (char *)d->dev_local + o, d->dev, k, "the slice to the host");
        MPI_Request req;
        mm__check(MPI_Iallreduce(MPI_IN_PLACE, p, (int)(k / (size_t)tsize), type, op, across, &req), "MPI_Iallreduce",
                  "slices across the sub-rings");
        mm__wait_one(&req, "MPI_Iallreduce", "slices across the sub-rings");
        if (!on_host)
            mm__copy((char *)d->dev_local + o, d->dev, tmp, d->host_dev, k, "the reduced slice to the device");
    }
    free(tmp);
    MPI_Comm_set_errhandler(across, old);
    MPI_Errhandler_free(&old);
}

/* ---- the ring ---------------------------------------------------------------- */

static void *ring__helper(void *arg)
{
    macc_ring *r = arg;
    macc_dist *d = r->d;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->quit && r->job_seq == __atomic_load_n(&r->done_seq, __ATOMIC_RELAXED))
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->quit)
            break;
        int b = r->job_buf, origin = r->job_origin, received = r->job_received;
        pthread_mutex_unlock(&r->mu);
        /* Only a buffer MPI received into is newer on the host. The own
         * contribution (step 0) was written on the GPU: its staging buffer
         * is a copy of it when P > 1 and stale when P = 1 (nothing is sent),
         * so copying it back would overwrite the contribution. */
        if (r->staging && received)
            mm__copy(r->dev[b], d->dev, r->host[b], d->host_dev, r->bytes, "a received contribution to the GPU");
        pthread_mutex_lock(&d->lock);
        r->fn(d, d->local, d->offset, d->count, r->host[b], origin, r->arg);
        pthread_mutex_unlock(&d->lock);
        pthread_mutex_lock(&r->mu);
        __atomic_store_n(&r->done_seq, r->done_seq + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

macc_ring *macc_ring_new(macc_dist *d, size_t bytes, int thread)
{
    if (thread < 0)
        mm__die("macc_ring_new: thread index %d", thread);
    if (bytes > INT_MAX)
        mm__die("macc_ring_new: contributions of %zu bytes: at most %d bytes per message", bytes, INT_MAX);
    if (thread > 0) {
        int prov = MPI_THREAD_SINGLE;
        MPI_Query_thread(&prov);
        if (prov < MPI_THREAD_MULTIPLE)
            mm__die("a ring per thread (thread %d) needs MPI_THREAD_MULTIPLE: initialise MPI with "
                    "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) (the thread level is %s)",
                    thread, prov == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : prov == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED"
                                                                                                   : "MPI_THREAD_SERIALIZED");
    }
    macc_ring *r = calloc(1, sizeof *r);
    if (!r)
        mm__die("out of memory");
    r->d = d;
    r->bytes = bytes;
    r->thread = thread;
    r->tag = MM_TAG_BASE + thread;
    r->left = (d->rank - 1 + d->size) % d->size;
    r->right = (d->rank + 1) % d->size;
    int gpu = d->dev != d->host_dev;
    r->staging = gpu && !macc_mpi_cuda_aware();
    size_t devb = 0, hostb = 0;
    if (gpu) {
        /* the buffers in one device block: the GPU hands out memory in 2 MiB
         * pages, one block rounds up once */
        size_t one = ((bytes ? bytes : 1) + 255) & ~(size_t)255;
        r->dev_block = mm__dev_alloc(d->dev, one * MM_NBUF);
        if (!r->dev_block)
            mm__die("cannot allocate %zu bytes of GPU memory on device %d for the ring buffers", one * MM_NBUF,
                    d->dev);
        for (int b = 0; b < MM_NBUF; b++)
            r->dev[b] = (char *)r->dev_block + (size_t)b * one;
    }
    for (int b = 0; b < MM_NBUF; b++) {
        r->send[b] = MPI_REQUEST_NULL;
        if (gpu) {
            mm__gpu_pair(d->dev, bytes, r->staging, &r->host[b], &r->dev[b], &r->mapped[b], "a ring buffer");
            devb += bytes;
            if (r->staging)
                hostb += bytes;
        } else {
            r->host[b] = r->dev[b] = malloc(bytes ? bytes : 1);
            if (!r->host[b])
                mm__die("cannot allocate a ring buffer of %zu bytes", bytes);
            memset(r->host[b], 0, bytes); /* touched now, as the slice */
            devb += bytes;
        }
    }
    r->recv = MPI_REQUEST_NULL;
    pthread_mutex_lock(&d->lock);
    d->dev_bytes += devb;
    d->host_bytes += hostb;
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (pthread_create(&r->th, NULL, ring__helper, r))
        mm__die("cannot start the ring's update thread");
    r->started = 1;
    return r;
}

void macc_ring_delete(macc_ring *r)
{
    if (!r)
        return;
    macc_dist *d = r->d;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->quit = 1;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->th, NULL);
    }
    size_t devb = 0, hostb = 0;
    for (int b = 0; b < MM_NBUF; b++) {
        if (d->dev != d->host_dev) {
            mm__gpu_unpair(d->dev, r->bytes, r->host[b], r->dev[b], r->mapped[b], 0);
            if (r->staging)
                hostb += r->bytes;
        } else {
            free(r->host[b]);
        }
        devb += r->bytes;
    }
    if (r->dev_block)
        mm__dev_free(d->dev, r->dev_block);
    pthread_mutex_lock(&d->lock);
    d->dev_bytes -= devb;
    d->host_bytes -= hostb;
    pthread_mutex_unlock(&d->lock);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

void *macc_ring_buffer(macc_ring *r) { return r->host[0]; }
double macc_ring_wait_seconds(const macc_ring *r) { return r->wait_s; }

/* The buffer MPI uses. */
static void *ring__mpi_buf(const macc_ring *r, int b)
{
    return r->staging ? r->host[b] : r->dev[b];
}

/* Hands buffer b (made by `origin`; `received`: by MPI, not on this GPU) to
 * the helper. */
static void ring__start_update(macc_ring *r, int b, int origin, int received)
{
    pthread_mutex_lock(&r->mu);
    r->job_buf = b;
    r->job_origin = origin;
    r->job_received = received;
    r->job_seq++;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int ring__update_busy(macc_ring *r)
{
    return __atomic_load_n(&r->done_seq, __ATOMIC_ACQUIRE) != r->job_seq;
}

/* Tests every active request (progress for all of them); returns when the
 * request `want` (NULL: none) has completed and, if `upd`, no update is
 * running. The deadline counts only time with no update running. */
static void ring__wait(macc_ring *r, MPI_Request *want, int upd, const char *call, int peer, int step)
{
    double limit = mm__timeout(), t0 = mm__now(), w0 = t0;
    int spins = 0;
    for (;;) {
        int busy = ring__update_busy(r);
        int done = 1, active = 0;
        MPI_Request *all[1 + MM_NBUF] = {&r->recv};
        for (int b = 0; b < MM_NBUF; b++)
            all[1 + b] = &r->send[b];
        for (int i = 0; i < 1 + MM_NBUF; i++) {
            if (*all[i] == MPI_REQUEST_NULL)
                continue;
            int flag = 0;
            MPI_Status st;
            int err = MPI_Test(all[i], &flag, &st);
            if (err != MPI_SUCCESS) {
                char what[128];
                snprintf(what, sizeof what, "%s ring rank %d, thread %d, step %d", i ? "send to" : "receive from",
                         i ? r->right : r->left, r->thread, step);
                mm__check(err, "MPI_Test", what);
            }
            active |= *all[i] != MPI_REQUEST_NULL;
        }
        if (want && *want != MPI_REQUEST_NULL)
            done = 0;
        if (upd && busy)
            done = 0;
        if (done)
            break;
        double now = mm__now();
        if (busy)
            t0 = now;
        else if (now - t0 > limit) {
            mm__die("%s ring rank %d (thread %d, step %d of a ring of %d) did not complete within %g s "
                    "(MACC_MPI_TIMEOUT): the peer failed or stalled; aborting",
                    call, peer, r->thread, step, r->d->size, limit);
        }
        if (active && now - w0 < MM_SPIN_S)
            sched_yield(); /* a transfer in flight: keep it moving */
        else
            mm__pause(&spins);
    }
    if (want)
        r->wait_s += mm__now() - w0;
}

static void ring__post_recv(macc_ring *r, int b, int step)
{
    char what[96];
    snprintf(what, sizeof what, "from ring rank %d, thread %d, step %d", r->left, r->thread, step);
    mm__check(MPI_Irecv(ring__mpi_buf(r, b), (int)r->bytes, MPI_BYTE, r->left, r->tag, r->d->comm, &r->recv),
              "MPI_Irecv", what);
}

static void ring__post_send(macc_ring *r, int b, int step)
{
    char what[96];
    snprintf(what, sizeof what, "to ring rank %d, thread %d, step %d", r->right, r->thread, step);
    mm__check(MPI_Isend(ring__mpi_buf(r, b), (int)r->bytes, MPI_BYTE, r->right, r->tag, r->d->comm, &r->send[b]),
              "MPI_Isend", what);
}

void macc_ring_run(macc_ring *r, macc_ring_update_fn fn, void *arg)
{
    macc_dist *d = r->d;
    int p = d->size;
    r->fn = fn;
    r->arg = arg;
    /* the own contribution: to the host first when MPI sends from staging */
    if (r->staging && p > 1)
        mm__copy(r->host[0], d->host_dev, r->dev[0], d->dev, r->bytes, "the contribution to the host");
    if (p > 1) {
        ring__post_recv(r, 1, 1);
        ring__post_send(r, 0, 0);
    }
    ring__start_update(r, 0, d->rank, 0);
    /* Two buffers: the one just received is forwarded and updated from at
     * once (both only read it) while the next receive goes into the other,
     * whose send and update (step s-1) are waited for first. A step takes
     * max(transfer, update), as with more buffers. */
    for (int s = 1; s < p; s++) {
        int cur = s % 2, nxt = (s + 1) % 2;
        ring__wait(r, &r->recv, 0, "MPI_Irecv from", r->left, s);
        if (s < p - 1)
            ring__post_send(r, cur, s);
        ring__wait(r, NULL, 1, "", 0, s); /* update s-1, of buffer nxt */
        ring__start_update(r, cur, (d->rank - s + p) % p, 1);
        if (s < p - 1) {
            ring__wait(r, &r->send[nxt], 0, "MPI_Isend to", r->right, s);
            ring__post_recv(r, nxt, s + 1);
        }
    }
    ring__wait(r, NULL, 1, "", 0, p);
    for (int b = 0; b < MM_NBUF; b++)
        ring__wait(r, &r->send[b], 0, "MPI_Isend to", r->right, p);
}
