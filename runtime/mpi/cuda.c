/* cuda.c: the CUDA part of libmaccrt_mpi (libmaccrt_mpi_cuda.a), linked by
 * the driver with the MPI module when the program has GPU code; ring.c finds
 * these functions through weak references.
 *
 * Device memory for slices and ring buffers comes from cudaMalloc, not from
 * the runtime's stream-ordered pool: CUDA-aware MPIs register (IPC, RDMA)
 * ordinary allocations, and pool memory may not be registrable. Staging
 * buffers are pinned (cudaHostAlloc), so copies to the GPU run at full speed
 * and MPI can read them while a copy is in flight.
 *
 * The runtime's device numbers are OpenMP's, renumbered by MACC_DEVICES; the
 * CUDA ordinal of device n is read from a block omp_target_alloc makes on it.
 * The caller's current CUDA device is left as it was.
 */
#include <cuda_runtime_api.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>

#define MC_MAXDEV 64
static int mc__ord[MC_MAXDEV]; /* CUDA ordinal + 1 of each OpenMP device number, 0: unknown */

static int mc__ordinal(int ompdev)
{
    if (ompdev < 0 || ompdev >= MC_MAXDEV)
        return -1;
    int o = __atomic_load_n(&mc__ord[ompdev], __ATOMIC_RELAXED);
    if (o)
        return o - 1;
    void *p = omp_target_alloc(1, ompdev);
    if (!p)
        return -1;
    struct cudaPointerAttributes a;
    int ord = -1;
    if (cudaPointerGetAttributes(&a, p) == cudaSuccess && a.type == cudaMemoryTypeDevice)
        ord = a.device;
    omp_target_free(p, ompdev);
    if (ord >= 0)
        __atomic_store_n(&mc__ord[ompdev], ord + 1, __ATOMIC_RELAXED);
    return ord;
}

void *maccmpi_cuda_malloc(int ompdev, size_t bytes);
void maccmpi_cuda_free(int ompdev, void *p);
int maccmpi_cuda_memset(int ompdev, void *p, size_t bytes);
void *maccmpi_cuda_host_alloc(size_t bytes);
void maccmpi_cuda_host_free(void *p);
int maccmpi_cuda_mem_used(int ompdev, size_t *used);

void *maccmpi_cuda_malloc(int ompdev, size_t bytes)
{
    int ord = mc__ordinal(ompdev), cur = 0;
    if (ord < 0)
        return NULL;
    void *p = NULL;
    cudaGetDevice(&cur);
    cudaSetDevice(ord);
    cudaError_t e = cudaMalloc(&p, bytes);
    cudaSetDevice(cur);
    if (e != cudaSuccess) {
        fprintf(stderr, "macc: error: cudaMalloc of %zu bytes on GPU %d: %s\n", bytes, ord, cudaGetErrorString(e));
        return NULL;
    }
    return p;
}

void maccmpi_cuda_free(int ompdev, void *p)
{
    int ord = mc__ordinal(ompdev), cur = 0;
    cudaGetDevice(&cur);
    if (ord >= 0)
        cudaSetDevice(ord);
    cudaFree(p);
    cudaSetDevice(cur);
}

int maccmpi_cuda_memset(int ompdev, void *p, size_t bytes)
{
    int ord = mc__ordinal(ompdev), cur = 0;
    if (ord < 0)
        return -1;
    cudaGetDevice(&cur);
    cudaSetDevice(ord);
    cudaError_t e = cudaMemset(p, 0, bytes);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    cudaSetDevice(cur);
    return e != cudaSuccess;
}

void *maccmpi_cuda_host_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess)
        return NULL;
    return p;
}

void maccmpi_cuda_host_free(void *p)
{
    cudaFreeHost(p);
}

/* Bytes in use on the GPU (cudaMemGetInfo: total - free, every process's
 * allocations and contexts included). Returns 0, or -1 when it cannot tell. */
int maccmpi_cuda_mem_used(int ompdev, size_t *used)
{
    int ord = mc__ordinal(ompdev), cur = 0;
    if (ord < 0)
        return -1;
    size_t fr = 0, tot = 0;
    cudaGetDevice(&cur);
    cudaSetDevice(ord);
    cudaError_t e = cudaMemGetInfo(&fr, &tot);
    cudaSetDevice(cur);
    if (e != cudaSuccess)
        return -1;
    *used = tot - fr;
    return 0;
}
