/* macc_mpi.h: libmaccrt_mpi, a distributed device array and a pipelined ring
 * over MPI (after Wei et al., the DCA++ ring: seed 001).
 *
 * An array too large for one device is partitioned over the P ranks of a
 * communicator, 1/P each: every rank holds its slice on its device (its GPU
 * when the macc runtime has one, else host memory). Every rank makes a
 * contribution per step (DCA++'s G_sigma); the ring brings every
 * contribution to every slice: P-1 steps of MPI_Irecv from the left,
 * MPI_Isend to the right, wait, update the slice, swap two buffers. The
 * update is the user's function, usually an ordinary macc region:
 *
 *     void update(macc_dist *d, void *slice, size_t off, size_t n,
 *                 const void *contrib, int origin, void *arg)
 *     {
 *         double *s = slice; const double *g = contrib;
 *     #pragma omp target device(any) map(tofrom: s[0:n]) map(to: g[0:M])
 *     #pragma omp teams distribute parallel for
 *         for (size_t i = 0; i < n; i++) s[i] += f(off + i, g);
 *     }
 *
 * The slice and the ring buffers are associated with device memory
 * (omp_target_associate_ptr) on a GPU, so their host addresses name data
 * present there: the region runs on that GPU and copies nothing. Without a
 * GPU they are host memory and the region runs on the host.
 *
 * Sub-rings: macc_mpi_split cuts a communicator into rings of S consecutive
 * ranks (each holds a whole array, 1/S per rank) and the communicators that
 * join the ranks holding the same slice (for macc_dist_allreduce at the end).
 * Threads: every thread of a rank may run its own ring (macc_ring_new with its
 * thread index: the MPI tag is offset by it); that needs MPI_THREAD_MULTIPLE,
 * which macc_ring_new checks. The updates of the rings of one array are
 * serialised (one at a time per slice); communication overlaps them.
 *
 * Errors: every MPI error is reported as "macc: error: rank R: MPI_Call ...:
 * message" and the job is aborted (MPI_Abort). A request that does not
 * complete within MACC_MPI_TIMEOUT seconds (default 120) is reported, naming
 * the peer, and the job is aborted: a ring never hangs on a failed peer.
 *
 * Environment: MACC_MPI_TIMEOUT=seconds, MACC_MPI_CUDA_AWARE=0|1|auto
 * (default auto: MPIX_Query_cuda_support() where the MPI has it, else 0),
 * MACC_MPI_DEVICE=host|gpu|auto (default auto: a GPU when the runtime has
 * one, the node-local rank modulo the GPUs).
 *
 * Handles have _new/_delete pairs; _delete(NULL) does nothing. Functions that
 * take a communicator are collective over it. Link with -lmaccrt_mpi (macc
 * --mpi does it, and uses mpicc as the C compiler).
 */
#ifndef MACC_MPI_H
#define MACC_MPI_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct macc_dist macc_dist;
typedef struct macc_ring macc_ring;

/* Cuts comm into sub-rings of `size` consecutive ranks (*ring: ranks
 * r/size*size ... r/size*size+size-1) and the communicators across them
 * (*across: the ranks with the same rank in their ring). size must divide the
 * size of comm; size <= 0 means one ring of all ranks. Both are new
 * communicators (MPI_Comm_free them) with MPI_ERRORS_RETURN. Returns 0, or
 * 1 after printing why (size does not divide). */
int macc_mpi_split(MPI_Comm comm, int size, MPI_Comm *ring, MPI_Comm *across);

/* Whether GPU buffers go to MPI directly (a CUDA-aware MPI, detected at run
 * time, and MACC_MPI_CUDA_AWARE not 0). */
int macc_mpi_cuda_aware(void);

/* A distributed array of global_len elements of elem_size bytes over comm
 * (duplicated: its messages never match the program's). Rank r of P holds
 * elements [offset, offset + count), count = global_len / P (+1 for the first
 * global_len % P ranks), zeroed, on its device. Collective. The caller owns
 * the handle: macc_dist_delete. */
macc_dist *macc_dist_new(MPI_Comm comm, size_t global_len, size_t elem_size);
/* Frees the slice and the communicator. Collective; NULL: nothing. */
void macc_dist_delete(macc_dist *d);

/* The slice's host address: the name to map in regions (present on the
 * device), or the memory itself on the host. Owned by the handle. */
void *macc_dist_local(const macc_dist *d);
size_t macc_dist_offset(const macc_dist *d);
size_t macc_dist_count(const macc_dist *d);
size_t macc_dist_global(const macc_dist *d);
/* The OpenMP device number of the slice (omp_get_initial_device() for host memory). */
int macc_dist_device(const macc_dist *d);
/* The rank's ring communicator (the one given to macc_dist_new, duplicated). */
MPI_Comm macc_dist_comm(const macc_dist *d);
/* Bytes of device memory this rank's handle and its rings hold (slice and
 * buffers), host memory when the device is the host; staging buffers in
 * pinned host memory are counted by macc_dist_host_bytes. */
size_t macc_dist_bytes(const macc_dist *d);
size_t macc_dist_host_bytes(const macc_dist *d);
/* Measured: how much the memory in use on the slice's GPU has grown since
 * macc_dist_new began to allocate the slice (cudaMemGetInfo; everything on
 * that GPU counts, so one rank per GPU; allocations are rounded up to the
 * driver's granularity, 2 MiB). Call it while the rings exist to see the
 * slice and their buffers. 0 for host memory or without the CUDA part. */
size_t macc_dist_device_used(const macc_dist *d);

/* Sets the slice to zero. */
void macc_dist_zero(macc_dist *d);
/* Copies the slice to host memory dst (count * elem_size bytes). */
void macc_dist_get(const macc_dist *d, void *dst);
/* Copies host memory src into the slice. */
void macc_dist_put(macc_dist *d, const void *src);
/* Sums (op) the slices of the ranks of `across` element-wise, in place, as
 * elements of `type` (elem_size must be a multiple of its size): the end of a
 * sub-ring run (macc_mpi_split). Collective over across; bounded by
 * MACC_MPI_TIMEOUT like the ring. */
void macc_dist_allreduce(macc_dist *d, MPI_Comm across, MPI_Datatype type, MPI_Op op);

/* The update: adds contribution `contrib` (made by the ring's rank `origin`)
 * to the slice (`slice`: macc_dist_local(d), elements [off, off + n) of the
 * array). contrib is the host address of a ring buffer, present on the
 * slice's device like the slice. */
/* Contribution-sized buffers a ring holds (macc_ring_buffer is one of them). */
#define MACC_RING_BUFFERS 2

typedef void (*macc_ring_update_fn)(macc_dist *d, void *slice, size_t off, size_t n, const void *contrib,
                                    int origin, void *arg);

/* A ring over d's communicator for contributions of `bytes` bytes, run by
 * thread `thread` of the rank (0, 1, ...: the tag offset; every rank's thread
 * t forms ring t). MACC_RING_BUFFERS (two) buffers of `bytes` on the slice's
 * device, the first being the contribution's (and as many pinned staging
 * buffers in host memory when the device is a GPU and the MPI is not
 * CUDA-aware). thread > 0 needs MPI_THREAD_MULTIPLE: without it this
 * prints why and aborts. Not collective. Owned by the caller: macc_ring_delete
 * (before macc_dist_delete). */
macc_ring *macc_ring_new(macc_dist *d, size_t bytes, int thread);
void macc_ring_delete(macc_ring *r);
/* Where the next contribution goes: a host address, present on the device
 * (write it with a region, or write it on the host and `target update to` it).
 * Owned by the ring; the same buffer every round. */
void *macc_ring_buffer(macc_ring *r);
/* Runs one ring step: update(own contribution), then P-1 times receive from
 * the left, forward to the right, update. Returns when every contribution of
 * this round has been added to the local slice. */
void macc_ring_run(macc_ring *r, macc_ring_update_fn fn, void *arg);
/* Seconds this ring spent waiting for MPI (not overlapped with an update). */
double macc_ring_wait_seconds(const macc_ring *r);

#ifdef __cplusplus
}
#endif
#endif
