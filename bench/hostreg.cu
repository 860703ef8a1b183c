/* hostreg.cu: what registering host memory (cudaHostRegister) costs, and
 * whether it holds up the copies other threads make meanwhile: the numbers
 * behind the runtime's choice of when and how much of a program's heap
 * block to register (runtime/cuda.c, "page-locked host ranges").
 *
 *   hostreg [MB [THREADS]]      (defaults: 256 8)
 *
 * 1. register and unregister one malloc'd, touched buffer of 4, 16, 64 and
 *    MB MiB: GB/s of each;
 * 2. register MB MiB as windows of 4, 16 and 64 MiB: the total time;
 * 3. THREADS threads copy 512 KiB tiles of registered memory to the GPU in a
 *    loop (each its own stream) for the time one thread takes to register MB
 *    MiB in 64 MiB windows, then as long again without registering: the
 *    copies' GB/s in both, and the longest single copy. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <atomic>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                            \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "hostreg: %s: %s\n", #x, cudaGetErrorString(e_));                            \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static char *touched(size_t bytes)
{
    char *p = (char *)malloc(bytes);
    if (!p) {
        fprintf(stderr, "hostreg: out of memory\n");
        exit(1);
    }
    memset(p, 3, bytes);
    return p;
}

enum { TILE = 512 << 10 };
static std::atomic<int> phase; /* 0: wait, 1: copy, 2: stop */

typedef struct {
    char *src, *dev;
    cudaStream_t s;
    long copies;
    double worst;
} copier;

static void *copy_loop(void *arg)
{
    copier *c = (copier *)arg;
    CK(cudaSetDevice(0));
    while (phase.load() == 0)
        ;
    c->copies = 0;
    c->worst = 0;
    while (phase.load() == 1) {
        double t = now();
        CK(cudaMemcpyAsync(c->dev, c->src, TILE, cudaMemcpyHostToDevice, c->s));
        CK(cudaStreamSynchronize(c->s));
        t = now() - t;
        if (t > c->worst)
            c->worst = t;
        c->copies++;
    }
    return NULL;
}

/* THREADS copiers for `secs` seconds, or while one registration of `big` in
 * 64 MiB windows runs when big is not NULL (its time then). */
static double copy_phase(copier *c, int n, double secs, char *big, size_t bytes, double *gbs, double *worst)
{
    pthread_t th[64];
    phase.store(0);
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, copy_loop, &c[i]);
    double t0 = now();
    phase.store(1);
    if (big) {
        for (size_t off = 0; off < bytes; off += (size_t)64 << 20) {
            size_t len = bytes - off < ((size_t)64 << 20) ? bytes - off : (size_t)64 << 20;
            CK(cudaHostRegister(big + off, len, cudaHostRegisterPortable));
        }
    } else {
        while (now() - t0 < secs)
            ;
    }
    double t = now() - t0;
    phase.store(2);
    long copies = 0;
    *worst = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        copies += c[i].copies;
        if (c[i].worst > *worst)
            *worst = c[i].worst;
    }
    *gbs = (double)copies * TILE / t / 1e9;
    return t;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 256;
    int n = argc > 2 ? atoi(argv[2]) : 8;
    if (mb < 64 || n < 1 || n > 64) {
        fprintf(stderr, "usage: hostreg [MB(>= 64) [THREADS(<= 64)]]\n");
        return 2;
    }
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    printf("hostreg: %zu MiB, %d copying threads\n", mb, n);
    size_t sizes[4] = {4, 16, 64, mb};
    printf("%-24s %10s %12s\n", "one registration", "ms", "GB/s");
    for (int i = 0; i < 4; i++) {
        size_t bytes = sizes[i] << 20;
        char *p = touched(bytes);
        double t = now();
        CK(cudaHostRegister(p, bytes, cudaHostRegisterPortable));
        t = now() - t;
        double u = now();
        CK(cudaHostUnregister(p));
        u = now() - u;
        printf("%4zu MiB register         %10.3f %12.1f\n", sizes[i], t * 1e3, bytes / t / 1e9);
        printf("%4zu MiB unregister       %10.3f %12.1f\n", sizes[i], u * 1e3, bytes / u / 1e9);
        free(p);
    }
    size_t bytes = mb << 20;
    printf("%-24s %10s %12s\n", "in windows", "ms", "GB/s");
    size_t wins[3] = {4, 16, 64};
    for (int i = 0; i < 3; i++) {
        char *p = touched(bytes);
        size_t w = wins[i] << 20;
        double t = now();
        for (size_t off = 0; off < bytes; off += w)
            CK(cudaHostRegister(p + off, bytes - off < w ? bytes - off : w, cudaHostRegisterPortable));
        t = now() - t;
        for (size_t off = 0; off < bytes; off += w)
            CK(cudaHostUnregister(p + off));
        printf("%4zu MiB windows          %10.3f %12.1f\n", wins[i], t * 1e3, bytes / t / 1e9);
        free(p);
    }
    copier c[64];
    for (int i = 0; i < n; i++) {
        c[i].src = touched(TILE);
        CK(cudaHostRegister(c[i].src, TILE, cudaHostRegisterPortable));
        CK(cudaMalloc(&c[i].dev, TILE));
        CK(cudaStreamCreateWithFlags(&c[i].s, cudaStreamNonBlocking));
    }
    char *big = touched(bytes);
    double gbs, worst, gbs0, worst0;
    double t = copy_phase(c, n, 0, big, bytes, &gbs, &worst);
    (void)copy_phase(c, n, t, NULL, 0, &gbs0, &worst0);
    printf("%-24s %10s %12s %12s\n", "512 KiB copies", "ms", "GB/s", "worst us");
    printf("%-24s %10.3f %12.1f %12.1f\n", "while registering", t * 1e3, gbs, worst * 1e6);
    printf("%-24s %10.3f %12.1f %12.1f\n", "alone", t * 1e3, gbs0, worst0 * 1e6);
    return 0;
}
