/* copybw.cu: the host <-> GPU copy paths the runtime can take, measured side
 * by side on every GPU at once, so that the directory's copies can be held
 * against the link's own speed.
 *
 *   copybw [MB|KIBk [THREADS [GPUS [CHUNK_KB]]]]     (defaults: 16 8 all 512; 512k: 512 KiB)
 *
 * THREADS threads per GPU each copy their own MB MiB buffer to the GPU and
 * back, REPS times, by each path:
 *   pinned      the buffer from cudaHostAlloc: the link's DMA speed;
 *   registered  malloc'd memory registered once (cudaHostRegister, not timed);
 *   staged      malloc'd memory through two page-locked slots of CHUNK_KB per
 *               thread (memcpy beside the DMA), as runtime/cuda.c stages;
 *   pageable    malloc'd memory, the driver's own pageable path;
 *   memcpy      no GPU: the threads' memcpy between two malloc'd buffers.
 * Prints GB/s per path and direction, all GPUs together. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                            \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "copybw: %s: %s\n", #x, cudaGetErrorString(e_));                             \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)

enum { PINNED, REGISTERED, STAGED, PAGEABLE, MEMCPY, NPATHS };
static const char *const path_name[NPATHS] = {"pinned", "registered", "staged", "pageable", "memcpy"};
enum { REPS = 4 };

static size_t bytes, chunk;
static int nthreads, ngpus;
static pthread_barrier_t bar;

typedef struct {
    int gpu, path, to_dev;
    char *host, *dev, *slots, *other;
    cudaStream_t s;
    cudaEvent_t ev[2];
} worker;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void event_wait(cudaEvent_t ev)
{
    for (int i = 0; i < 20000; i++)
        if (cudaEventQuery(ev) != cudaErrorNotReady)
            return;
    CK(cudaEventSynchronize(ev));
}

static void staged(worker *w)
{
    size_t n = (bytes + chunk - 1) / chunk;
    int out[2] = {0, 0};
    if (w->to_dev) {
        for (size_t i = 0; i < n; i++) {
            size_t len = bytes - i * chunk < chunk ? bytes - i * chunk : chunk;
            char *slot = w->slots + (i & 1) * chunk;
            if (out[i & 1])
                event_wait(w->ev[i & 1]);
            memcpy(slot, w->host + i * chunk, len);
            CK(cudaMemcpyAsync(w->dev + i * chunk, slot, len, cudaMemcpyHostToDevice, w->s));
            CK(cudaEventRecord(w->ev[i & 1], w->s));
            out[i & 1] = 1;
        }
    } else {
        for (size_t i = 0; i <= n; i++) {
            if (i < n) {
                size_t len = bytes - i * chunk < chunk ? bytes - i * chunk : chunk;
                CK(cudaMemcpyAsync(w->slots + (i & 1) * chunk, w->dev + i * chunk, len, cudaMemcpyDeviceToHost,
                                   w->s));
                CK(cudaEventRecord(w->ev[i & 1], w->s));
            }
            if (i > 0) {
                size_t j = i - 1, len = bytes - j * chunk < chunk ? bytes - j * chunk : chunk;
                event_wait(w->ev[j & 1]);
                memcpy(w->host + j * chunk, w->slots + (j & 1) * chunk, len);
            }
        }
    }
}

static void *run(void *arg)
{
    worker *w = (worker *)arg;
    CK(cudaSetDevice(w->gpu));
    for (int r = 0; r < REPS; r++) {
        pthread_barrier_wait(&bar);
        switch (w->path) {
        case STAGED:
            staged(w);
            break;
        case MEMCPY:
            if (w->to_dev)
                memcpy(w->other, w->host, bytes);
            else
                memcpy(w->host, w->other, bytes);
            break;
        default:
            CK(cudaMemcpyAsync(w->to_dev ? w->dev : w->host, w->to_dev ? w->host : w->dev, bytes,
                               w->to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, w->s));
        }
        CK(cudaStreamSynchronize(w->s));
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    /* MB, or KiB with a k suffix (512k: one of matmul's 256 x 256 tiles) */
    char *end = NULL;
    long size = argc > 1 ? strtol(argv[1], &end, 10) : 16;
    int kib = argc > 1 && end && (*end == 'k' || *end == 'K');
    nthreads = argc > 2 ? atoi(argv[2]) : 8;
    int have = 0;
    CK(cudaGetDeviceCount(&have));
    ngpus = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : have;
    chunk = (size_t)(argc > 4 ? atoi(argv[4]) : 512) << 10;
    if (size < 1 || nthreads < 1 || ngpus > have || chunk == 0) {
        fprintf(stderr, "usage: copybw [MB|KIBk [THREADS [GPUS(<= %d) [CHUNK_KB]]]]\n", have);
        return 2;
    }
    bytes = (size_t)size << (kib ? 10 : 20);
    int nw = nthreads * ngpus;
    worker *w = (worker *)calloc(nw, sizeof *w);
    for (int i = 0; i < nw; i++) {
        w[i].gpu = i % ngpus;
        CK(cudaSetDevice(w[i].gpu));
        CK(cudaMalloc(&w[i].dev, bytes));
        CK(cudaStreamCreateWithFlags(&w[i].s, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&w[i].ev[0], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&w[i].ev[1], cudaEventDisableTiming));
        CK(cudaHostAlloc((void **)&w[i].slots, 2 * chunk, cudaHostAllocPortable));
        w[i].other = (char *)malloc(bytes);
        memset(w[i].other, 1, bytes);
    }
    printf("copybw: %d GPU(s), %d threads each, %zu KiB per copy, staging chunk %zu KiB\n", ngpus, nthreads,
           bytes >> 10, chunk >> 10);
    printf("%-11s %10s %10s\n", "path", "h2d GB/s", "d2h GB/s");
    for (int p = 0; p < NPATHS; p++) {
        double gbs[2];
        for (int to_dev = 1; to_dev >= 0; to_dev--) {
            for (int i = 0; i < nw; i++) {
                w[i].path = p;
                w[i].to_dev = to_dev;
                if (p == PINNED) {
                    CK(cudaHostAlloc((void **)&w[i].host, bytes, cudaHostAllocPortable));
                } else {
                    w[i].host = (char *)malloc(bytes);
                    memset(w[i].host, 2, bytes);
                    if (p == REGISTERED)
                        CK(cudaHostRegister(w[i].host, bytes, cudaHostRegisterPortable));
                }
            }
            pthread_barrier_init(&bar, NULL, nw + 1);
            pthread_t *th = (pthread_t *)calloc(nw, sizeof *th);
            for (int i = 0; i < nw; i++)
                pthread_create(&th[i], NULL, run, &w[i]);
            double best = 1e30;
            for (int r = 0; r < REPS; r++) {
                pthread_barrier_wait(&bar);
                double t0 = now();
                pthread_barrier_wait(&bar);
                double t = now() - t0;
                if (t < best)
                    best = t;
            }
            for (int i = 0; i < nw; i++)
                pthread_join(th[i], NULL);
            free(th);
            pthread_barrier_destroy(&bar);
            gbs[to_dev] = (double)bytes * nw / best / 1e9;
            for (int i = 0; i < nw; i++) {
                if (p == PINNED) {
                    CK(cudaFreeHost(w[i].host));
                } else {
                    if (p == REGISTERED)
                        CK(cudaHostUnregister(w[i].host));
                    free(w[i].host);
                }
            }
        }
        printf("%-11s %10.1f %10.1f\n", path_name[p], gbs[1], gbs[0]);
    }
    return 0;
}
