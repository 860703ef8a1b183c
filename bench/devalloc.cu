/* devalloc.cu: what a GPU allocation costs the runtime's helpers, and why.
 *
 * The CUDA plugin allocates a directory entry's device copy with
 * cudaMallocAsync on the calling helper's stream, from the GPU's default pool
 * (release threshold: never give memory back), then waits for the stream
 * (cuda__alloc). matmul 16 256 on two H200s made about 750 allocations of
 * 512 KiB per GPU at a median 45-50 us each, on the helpers' path. This
 * program separates what those microseconds are, on GPU 0, N allocations of
 * SIZE bytes each way, in a pool of its own for each way (a fresh pool grows
 * as the process's first allocations do):
 *
 *   grow          cudaMallocAsync into a fresh pool, no wait: the pool grows
 *   grow+wait     the same, each followed by cudaStreamSynchronize (the
 *                 runtime's way)
 *   grow+peer     a fresh pool readable by GPU 1 (cudaMemPoolSetAccess, as a
 *                 peer-enabled runtime needs), no wait (one GPU: skipped)
 *   reuse         the first pool again after every block was freed: the
 *                 memory is there, no growth
 *   reuse+wait    the same, each followed by cudaStreamSynchronize
 *   warmed        a fresh pool grown first by one allocation of N x SIZE,
 *                 freed, then the N allocations
 *   cudaMalloc    the synchronous allocator, for comparison
 *
 *   devalloc [N [SIZE_KIB [REPS]]]     (defaults: 750 512 3)
 *
 * Prints the median and the mean microseconds per allocation of each way.
 * Build: nvcc -O2 -arch=sm_90 bench/devalloc.cu -o devalloc */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "devalloc: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A pool on GPU 0 that keeps what it grows to (as the runtime sets its
 * default pool), readable by GPU `peer` too when peer >= 0. */
static cudaMemPool_t pool_new(int peer)
{
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t p;
    check(cudaMemPoolCreate(&p, &props), "cudaMemPoolCreate");
    unsigned long long keep = ~0ull;
    check(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep), "release threshold");
    if (peer >= 0) {
        cudaMemAccessDesc d;
        memset(&d, 0, sizeof d);
        d.location.type = cudaMemLocationTypeDevice;
        d.location.id = peer;
        d.flags = cudaMemAccessFlagsProtReadWrite;
        check(cudaMemPoolSetAccess(p, &d, 1), "cudaMemPoolSetAccess");
    }
    return p;
}

/* n allocations from pool p on stream s (each waited for when `wait`), timed
 * one by one into us[]; the blocks are left in ptr[] */
static void allocs(cudaMemPool_t p, cudaStream_t s, int n, size_t size, int wait, void **ptr, double *us)
{
    for (int i = 0; i < n; i++) {
        double t0 = now();
        check(cudaMallocFromPoolAsync(&ptr[i], size, p, s), "cudaMallocFromPoolAsync");
        if (wait)
            check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        us[i] = (now() - t0) * 1e6;
    }
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

static void frees(cudaStream_t s, int n, void **ptr)
{
    for (int i = 0; i < n; i++)
        check(cudaFreeAsync(ptr[i], s), "cudaFreeAsync");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

static void report(const char *way, int n, double *us)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += us[i];
    qsort(us, (size_t)n, sizeof us[0], cmp);
    printf("  %-12s %10.1f %10.1f\n", way, us[n / 2], sum / n);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 750;
    size_t size = (size_t)(argc > 2 ? atoi(argv[2]) : 512) << 10;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    if (n < 1 || size == 0 || reps < 1) {
        fprintf(stderr, "usage: devalloc [N [SIZE_KIB [REPS]]]\n");
        return 2;
    }
    int ngpus = 0;
    check(cudaGetDeviceCount(&ngpus), "cudaGetDeviceCount");
    check(cudaSetDevice(0), "cudaSetDevice");
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    /* each rep holds at most four pools of n x size at once */
    if (4 * (size_t)n * size + ((size_t)1 << 30) > free_b) {
        fprintf(stderr, "devalloc: %d x %zu KiB is too much for the GPU's %zu MiB free\n", n, size >> 10,
                free_b >> 20);
        return 1;
    }
    int peer = -1;
    if (ngpus > 1) {
        int can = 0;
        check(cudaDeviceCanAccessPeer(&can, 1, 0), "cudaDeviceCanAccessPeer");
        if (can)
            peer = 1;
    }
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    void **ptr = (void **)calloc((size_t)n, sizeof *ptr);
    double *us = (double *)calloc((size_t)n, sizeof *us);
    if (!ptr || !us)
        return 1;
    printf("devalloc: GPU 0, %d allocations of %zu KiB, us per allocation (median, mean); peer GPU: %s\n", n,
           size >> 10, peer >= 0 ? "1" : "none");
    for (int r = 0; r < reps; r++) {
        printf("rep %d\n", r + 1);
        cudaMemPool_t p1 = pool_new(-1);
        allocs(p1, s, n, size, 0, ptr, us);
        report("grow", n, us);
        frees(s, n, ptr);
        allocs(p1, s, n, size, 0, ptr, us);
        report("reuse", n, us);
        frees(s, n, ptr);
        allocs(p1, s, n, size, 1, ptr, us);
        report("reuse+wait", n, us);
        frees(s, n, ptr);
        cudaMemPool_t p2 = pool_new(-1);
        allocs(p2, s, n, size, 1, ptr, us);
        report("grow+wait", n, us);
        frees(s, n, ptr);
        if (peer >= 0) {
            cudaMemPool_t p3 = pool_new(peer);
            allocs(p3, s, n, size, 0, ptr, us);
            report("grow+peer", n, us);
            frees(s, n, ptr);
            check(cudaMemPoolDestroy(p3), "cudaMemPoolDestroy");
        }
        cudaMemPool_t p4 = pool_new(-1);
        void *big = NULL;
        check(cudaMallocFromPoolAsync(&big, (size_t)n * size, p4, s), "warm");
        check(cudaFreeAsync(big, s), "warm free");
        check(cudaStreamSynchronize(s), "warm");
        allocs(p4, s, n, size, 0, ptr, us);
        report("warmed", n, us);
        frees(s, n, ptr);
        for (int i = 0; i < n; i++) {
            double t0 = now();
            check(cudaMalloc(&ptr[i], size), "cudaMalloc");
            us[i] = (now() - t0) * 1e6;
        }
        report("cudaMalloc", n, us);
        for (int i = 0; i < n; i++)
            check(cudaFree(ptr[i]), "cudaFree");
        check(cudaMemPoolDestroy(p1), "cudaMemPoolDestroy");
        check(cudaMemPoolDestroy(p2), "cudaMemPoolDestroy");
        check(cudaMemPoolDestroy(p4), "cudaMemPoolDestroy");
    }
    free(ptr);
    free(us);
    check(cudaStreamDestroy(s), "cudaStreamDestroy");
    return 0;
}
