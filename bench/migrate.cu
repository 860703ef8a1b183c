/* migrate.cu: what bringing managed data from a GPU back to the host costs,
 * against a copy, and what the ways around it cost (docs/MEMORY.md: why
 * `update host` of GPU-resident managed data is slower than explicit copies).
 *
 *   migrate [MB [REPS]]          (defaults: 256 3; on GPU 0)
 *
 * A managed buffer of MB MiB, written by a kernel on the GPU, then per line:
 *   prefetch d2h    cudaMemPrefetchAsync to the host, waited for
 *   host touch      the host reading one word per 4 KiB after it
 *   back h2d        the prefetch back to the GPU
 *   8-stream d2h    the same move cut in 8 prefetches on 8 streams
 *   dup d2h         read-mostly advice (GPU preferred): the prefetch to the
 *                   host makes a copy and keeps the GPU's
 *   unset, kernel   the advice withdrawn, then the GPU's next write (and the one after)
 *   memcpy pinned   cudaMemcpy of the GPU-resident buffer into page-locked memory:
 *                   what explicit copies of the same bytes cost
 *   copy+discard    a way to bring the pages home at copy speed, if the
 *                   driver's page allocation allows: the bytes copied out
 *                   (cudaMemcpy into page-locked memory), the range discarded
 *                   and made host-resident without a transfer
 *                   (cudaMemDiscardAndPrefetchBatchAsync, CUDA 12.8+), the
 *                   bytes copied back in by the host (memcpy; its share apart)
 *   discard         the discard-and-prefetch alone (inside copy+discard)
 *   memcpy_par      the copy in by 16 host threads instead of one
 *   dev+discard     the bytes copied to a device buffer (on the GPU), the range
 *                   discarded to the host, then cudaMemcpy from the device
 *                   buffer into the (now host-resident) managed pages
 * Every copy+discard line checks the bytes that arrive (a wrong value exits 1).
 * Build: nvcc -O2 -arch=sm_90 -Xcompiler -fopenmp bench/migrate.cu -o migrate */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <omp.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__global__ void bump(double *p, size_t n, double v)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += v;
}

static cudaMemLocation loc(int host)
{
    cudaMemLocation l;
    memset(&l, 0, sizeof l);
    l.type = host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    l.id = 0;
    return l;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "migrate: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    size_t bytes = mb << 20, n = bytes / sizeof(double);
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    if (3 * bytes + ((size_t)1 << 30) > free_b) { /* never oversubscribe managed memory */
        fprintf(stderr, "migrate: %zu MiB is too much for the GPU's %zu MiB free\n", mb, free_b >> 20);
        return 1;
    }
    double *p, *pin, *dtmp;
    check(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal), "cudaMallocManaged");
    check(cudaMalloc(&dtmp, bytes), "cudaMalloc");
    check(cudaMallocHost(&pin, bytes), "cudaMallocHost");
    memset(p, 0, bytes);
    memset(pin, 0, bytes);
    cudaStream_t s[8];
    for (int i = 0; i < 8; i++)
        check(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking), "cudaStreamCreate");
    unsigned blocks = (unsigned)((n + 255) / 256);
    volatile double sink = 0;
    printf("migrate: %zu MiB, ms per operation\n", mb);
    printf("%-4s %12s %11s %9s %13s %9s %9s %9s %11s %14s %13s %7s %8s %11s %12s\n", "rep", "prefetch_d2h", "host_touch", "back_h2d",
           "8-stream_d2h", "dup_d2h", "unset", "kernel", "kernel_next", "memcpy_pinned", "copy+discard", "memcpy", "discard", "memcpy_par", "dev+discard");
    for (int r = 0; r < reps; r++) {
        /* on the GPU, written there */
        check(cudaMemPrefetchAsync(p, bytes, loc(0), 0, s[0]), "prefetch");
        bump<<<blocks, 256, 0, s[0]>>>(p, n, 1.0);
        check(cudaStreamSynchronize(s[0]), "kernel");
        double t0 = now();
        check(cudaMemPrefetchAsync(p, bytes, loc(1), 0, s[0]), "prefetch");
        check(cudaStreamSynchronize(s[0]), "prefetch");
        double d2h = now() - t0;
        t0 = now();
        for (size_t i = 0; i < n; i += 512)
            sink += p[i];
        double touch = now() - t0;
        t0 = now();
        check(cudaMemPrefetchAsync(p, bytes, loc(0), 0, s[0]), "prefetch");
        check(cudaStreamSynchronize(s[0]), "prefetch");
        double back = now() - t0;
        bump<<<blocks, 256, 0, s[0]>>>(p, n, 1.0);
        check(cudaStreamSynchronize(s[0]), "kernel");
        t0 = now();
        for (int i = 0; i < 8; i++)
            check(cudaMemPrefetchAsync((char *)p + i * (bytes / 8), bytes / 8, loc(1), 0, s[i]), "prefetch");
        for (int i = 0; i < 8; i++)
            check(cudaStreamSynchronize(s[i]), "prefetch");
        double d2h8 = now() - t0;
        check(cudaMemPrefetchAsync(p, bytes, loc(0), 0, s[0]), "prefetch");
        bump<<<blocks, 256, 0, s[0]>>>(p, n, 1.0);
        check(cudaStreamSynchronize(s[0]), "kernel");
        check(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, loc(0)), "advise");
        check(cudaMemAdvise(p, bytes, cudaMemAdviseSetReadMostly, loc(0)), "advise");
        t0 = now();
        check(cudaMemPrefetchAsync(p, bytes, loc(1), 0, s[0]), "prefetch");
        check(cudaStreamSynchronize(s[0]), "prefetch");
        double dup = now() - t0;
        for (size_t i = 0; i < n; i += 512)
            sink += p[i];
        t0 = now();
        check(cudaMemAdvise(p, bytes, cudaMemAdviseUnsetReadMostly, loc(0)), "advise");
        double unset = now() - t0;
        t0 = now();
        bump<<<blocks, 256, 0, s[0]>>>(p, n, 1.0);
        check(cudaStreamSynchronize(s[0]), "kernel");
        double k1 = now() - t0;
        t0 = now();
        bump<<<blocks, 256, 0, s[0]>>>(p, n, 1.0);
        check(cudaStreamSynchronize(s[0]), "kernel");
        double k2 = now() - t0;
        check(cudaMemAdvise(p, bytes, cudaMemAdviseUnsetPreferredLocation, loc(0)), "advise");
        t0 = now();
        check(cudaMemcpyAsync(pin, p, bytes, cudaMemcpyDeviceToHost, s[0]), "memcpy");
        check(cudaStreamSynchronize(s[0]), "memcpy");
        double cp = now() - t0;
        /* copy out, discard and make host-resident, copy in */
        double expect = 0;
        void *ptrs[1] = {p};
        size_t sizes[1] = {bytes}, idx[1] = {0};
        cudaMemLocation host = loc(1);
        double cd = -1, cdm = -1, disc = -1, cdp = -1, dd = -1;
        for (int way = 0; way < 3; way++) {
            check(cudaMemPrefetchAsync(p, bytes, loc(0), 0, s[0]), "prefetch");
            bump<<<blocks, 256, 0, s[0]>>>(p, n, 1.0);
            check(cudaStreamSynchronize(s[0]), "kernel");
            expect = 0;
            check(cudaMemcpy(&expect, p + n - 1, sizeof expect, cudaMemcpyDeviceToHost), "peek");
            t0 = now();
            if (way < 2)
                check(cudaMemcpyAsync(pin, p, bytes, cudaMemcpyDeviceToHost, s[0]), "memcpy");
            else
                check(cudaMemcpyAsync(dtmp, p, bytes, cudaMemcpyDeviceToDevice, s[0]), "memcpy");
            check(cudaStreamSynchronize(s[0]), "copy out");
            double td = now();
            cudaError_t de = cudaMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 1, &host, idx, 1, 0, s[0]);
            if (de == cudaSuccess)
                de = cudaStreamSynchronize(s[0]);
            if (de != cudaSuccess) {
                fprintf(stderr, "migrate: discard: %s\n", cudaGetErrorString(de));
                cudaGetLastError();
                break;
            }
            double t1 = now();
            if (way == 0) {
                memcpy(p, pin, bytes);
            } else if (way == 1) {
#pragma omp parallel num_threads(16)
                {
                    int k = omp_get_thread_num(), m = omp_get_num_threads();
                    size_t lo = bytes / m * k, hi = k == m - 1 ? bytes : bytes / m * (k + 1);
                    memcpy((char *)p + lo, (char *)pin + lo, hi - lo);
                }
            } else {
                check(cudaMemcpyAsync(p, dtmp, bytes, cudaMemcpyDeviceToHost, s[0]), "memcpy");
                check(cudaStreamSynchronize(s[0]), "copy in");
            }
            double t2 = now();
            if (p[0] != expect || p[n - 1] != expect || p[n / 2] != expect) {
                fprintf(stderr, "migrate: way %d: got %g %g %g, expected %g\n", way, p[0], p[n / 2], p[n - 1], expect);
                return 1;
            }
            if (way == 0) {
                cd = t2 - t0;
                cdm = t2 - t1;
                disc = t1 - td;
            } else if (way == 1) {
                cdp = t2 - t0;
            } else {
                dd = t2 - t0;
            }
        }
        printf("%-4d %12.1f %11.1f %9.1f %13.1f %9.1f %9.2f %9.2f %11.2f %14.1f %13.1f %7.1f %8.1f %11.1f %12.1f\n", r + 1, d2h * 1e3,
               touch * 1e3, back * 1e3, d2h8 * 1e3, dup * 1e3, unset * 1e3, k1 * 1e3, k2 * 1e3, cp * 1e3, cd * 1e3,
               cdm * 1e3, disc * 1e3, cdp * 1e3, dd * 1e3);
    }
    cudaFreeHost(pin);
    cudaFree(dtmp);
    cudaFree(p);
    return sink < 0; /* (keeps the reads) */
}
