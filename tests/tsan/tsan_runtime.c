/* tsan_runtime.c: the runtime's concurrent paths under ThreadSanitizer
 * (make check-tsan). Criterion's forking runner does not start under TSan,
 * so this is a plain program: two fake GPUs in the CUDA plugin's slot (as in
 * tests/unit/test_runtime.c: separate heap memory, helper threads running
 * the GPU versions as host code, copies that take a little time so that
 * they overlap, device-to-device copies) and the host share chains of
 * stencil tasks over arrays whose sections change shape, with dependences
 * and no taskwait between rounds: the directory's fills, write-backs,
 * invalidations, merges, peer copies and flushes, the scheduler and the
 * task path all run concurrently. Exits 0 when the result matches a
 * sequential run; a TSan report makes the process exit 66. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "../fake_gpu.h"
#include "macc_rt.h"

static int fgpu_discover(void)
{
    return 2;
}

static int fgpu_init(maccrt_device *d)
{
    d->pdata = fake_gpu_start(4);
    d->cc = 80;
    d->concurrency = 4;
    d->mem_bytes = (size_t)1 << 30;
    return 0;
}

static void *fgpu_alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)d;
    (void)hostptr;
    void *p = malloc(bytes);
    memset(p, 0xa5, bytes);
    return p;
}

static void fgpu_free(maccrt_device *d, void *p)
{
    (void)d;
    free(p);
}

__attribute__((noinline)) static int fgpu_copy(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    (void)d;
    struct timespec ts = {0, 200000}; /* 0.2 ms: copies overlap */
    nanosleep(&ts, NULL);
    memcpy(dst, src, bytes);
    return 0;
}

/* Fills (host to device, device to device) copy a whole entry, which may be
 * larger than the section the task asked for (a merged union): bytes outside
 * it may be written meanwhile by a concurrent task, whose release then
 * invalidates the entry being filled (cache.c waits for the fill, then drops
 * it). TSan sees those reads as races; tests/tsan/suppressions.txt names
 * these two functions. Write-backs (device to host) are not suppressed. */
static int fgpu_copy_h2d(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    return fgpu_copy(d, dst, src, bytes);
}

static int fgpu_copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                          size_t bytes)
{
    (void)from;
    return fgpu_copy(d, dst, src, bytes);
}

/* A write-back through another GPU (cache.c): in that GPU's helpers only. */
static int fgpu_copy_d2h_via(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                             size_t bytes)
{
    (void)from;
    if (fake_gpu_self != d->pdata)
        return -1;
    return fgpu_copy(d, dst, src, bytes);
}

/* A helper's fills of its task's maps left on their way (tests/fake_gpu.h):
 * the bytes taken through fgpu_copy_h2d, landed by whoever orders after. */
static int fgpu_copy_start(maccrt_device *d, void *dst, const void *src, size_t bytes, void **fence)
{
    return fake_gpu_copy_start(d, dst, src, bytes, fence, fgpu_copy_h2d);
}

const maccrt_plugin maccrt_cuda_plugin = {
    .name = "nvidia",
    .kind = MACC_DEV_NVIDIA,
    .discover = fgpu_discover,
    .init_device = fgpu_init,
    .fini_device = fake_gpu_fini,
    .version_ok = fake_gpu_version_ok,
    .alloc = fgpu_alloc,
    .free = fgpu_free,
    .copy_h2d = fgpu_copy_h2d,
    .copy_d2h = fgpu_copy,
    .copy_peer = fgpu_copy_peer,
    .copy_d2h_via = fgpu_copy_d2h_via,
    .copy_h2d_start = fgpu_copy_start,
    .fence_order = fake_gpu_fence_order,
    .fence_done = fake_gpu_fence_done,
    .helpers_start = fake_gpu_helpers_start, /* (the flush's write-backs, as the CUDA plugin's) */
    .helpers_wait = fake_gpu_helpers_wait,
    .queued = fake_gpu_queued,
    .submit = fake_gpu_plugin_submit,
    .run = fake_gpu_run,
};

typedef struct {
    int lo, n, N, halo;
} sten_args;

static int sten_body(void *args, MACC_TaskEnv *env)
{
    sten_args *a = args;
    const double *x = env->ptrs[0];
    double *y = env->ptrs[1];
    for (int i = a->lo; i < a->lo + a->n; i++) {
        int l = i == 0 ? a->N - 1 : i - 1, r = i == a->N - 1 ? 0 : i + 1;
        if (a->halo) {
            l = i - 1;
            r = i + 1;
        }
        y[i] = fmod(x[l] + 2 * x[i] + x[r], 97.0);
    }
    return 0;
}

static const MACC_Version r_sten_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, sten_body},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, sten_body},
};
static const MACC_Region r_sten = {{"tsan.c", 1, 1, "tsan"}, "r_sten", 2, r_sten_v, 0, 0};

static void sten(double *x, double *y, int N, int lo, int n, int xlo, int xn, int device)
{
    sten_args a = {lo, n, N, xlo != 0 || xn != N};
    MACC_Map m[2] = {{"x", x, x + xlo, (size_t)xn * sizeof(double), MACC_MAP_TO},
                     {"y", y, y + lo, (size_t)n * sizeof(double), MACC_MAP_FROM}};
    MACC_Dep d[2] = {{x + xlo, (size_t)xn * sizeof(double), MACC_DEP_IN},
                     {y + lo, (size_t)n * sizeof(double), MACC_DEP_OUT}};
    MACC_target(&r_sten, &a, sizeof a, 2, m, 2, d, MACC_NOWAIT, device, 1);
}

/* y[lo:n] = (3 x + 1) mod 97: chains of blocks whose links each wait for
 * the one before alone (launch-ahead: MACC_TEST_FAKE_AHEAD). */
typedef struct {
    int lo, n;
} pt_args;

static int pt_body(void *args, MACC_TaskEnv *env)
{
    pt_args *a = args;
    const double *x = env->ptrs[0];
    double *y = env->ptrs[1];
    for (int i = a->lo; i < a->lo + a->n; i++)
        y[i] = fmod(3 * x[i] + 1, 97.0);
    return 0;
}

static const MACC_Version r_pt_v[] = {
    {MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, pt_body},
    {MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 0, pt_body},
};
static const MACC_Region r_pt = {{"tsan.c", 2, 1, "tsan"}, "r_pt", 2, r_pt_v, 0, 0};

static int chains(void)
{
    enum { N = 4800, B = 400, ROUNDS = 24 };
    static double x[N], y[N], ex[N], ey[N];
    for (int i = 0; i < N; i++)
        x[i] = ex[i] = (i * 5) % 13;
    for (int r = 0; r < ROUNDS; r++) {
        double *src = r % 2 ? y : x, *dst = r % 2 ? x : y;
        double *esrc = r % 2 ? ey : ex, *edst = r % 2 ? ex : ey;
        for (int lo = 0; lo < N; lo += B) {
            pt_args a = {lo, B};
            MACC_Map m[2] = {{"x", src, src + lo, B * sizeof(double), MACC_MAP_TO},
                             {"y", dst, dst + lo, B * sizeof(double), MACC_MAP_FROM}};
            MACC_Dep d[2] = {{src + lo, B * sizeof(double), MACC_DEP_IN}, {dst + lo, B * sizeof(double), MACC_DEP_OUT}};
            MACC_target(&r_pt, &a, sizeof a, 2, m, 2, d, MACC_NOWAIT, MACC_DEVICE_ANY, 1);
            for (int i = lo; i < lo + B; i++)
                edst[i] = fmod(3 * esrc[i] + 1, 97.0);
        }
    }
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++)
        if (x[i] != ex[i] || y[i] != ey[i]) {
            fprintf(stderr, "tsan_runtime: chains: x[%d] = %g (expected %g), y[%d] = %g (expected %g)\n", i,
                    x[i], ex[i], i, y[i], ey[i]);
            return 1;
        }
    return 0;
}

int main(void)
{
    setenv("MACC_HOST_THREADS", "4", 1);
    enum { N = 4800, ROUNDS = 28 };
    static double x[N], y[N], ex[N], ey[N];
    for (int i = 0; i < N; i++)
        x[i] = ex[i] = (i * 7) % 11;
    /* (8: hundreds of entries at a taskwait) */
    static const int bs[] = {N, 400, 1200, 160, N, 2400, 8};
    for (int r = 0; r < ROUNDS; r++) {
        double *src = r % 2 ? y : x, *dst = r % 2 ? x : y;
        double *esrc = r % 2 ? ey : ex, *edst = r % 2 ? ex : ey;
        int b = bs[r % 7];
        for (int k = 0; k < N / b; k++) {
            int lo = k * b;
            /* explicit devices and device(any) in turn */
            int dev = r % 4 == 3 ? MACC_DEVICE_ANY : (r + k) % 3;
            if (b < N && lo > 0 && lo + b < N)
                sten(src, dst, N, lo, b, lo - 1, b + 2, dev);
            else
                sten(src, dst, N, lo, b, 0, N, dev);
            for (int i = lo; i < lo + b; i++) {
                int l = (i + N - 1) % N, rr = (i + 1) % N;
                edst[i] = fmod(esrc[l] + 2 * esrc[i] + esrc[rr], 97.0);
            }
        }
        if (r % 7 >= 5)
            MACC_taskwait(NULL);
    }
    MACC_taskwait(NULL);
    for (int i = 0; i < N; i++)
        if (x[i] != ex[i] || y[i] != ey[i]) {
            fprintf(stderr, "tsan_runtime: x[%d] = %g (expected %g), y[%d] = %g (expected %g)\n", i,
                    x[i], ex[i], i, y[i], ey[i]);
            return 1;
        }
    if (chains())
        return 1;
    printf("tsan_runtime: %d rounds on 2 fake GPUs and the host, then chains (%ld tasks launched ahead): PASS\n",
           ROUNDS, maccrt_task_ahead_count());
    return 0;
}
