/* dispatch.c: what the runtime's dispatch costs per GPU task, without a GPU.
 *
 * On two H200s, samples/matmul.c's 4096 tasks of about 70 us were bounded by
 * the runtime, not the GPUs: the helpers spent 43% of their time completing
 * tasks (the dispatch walk under maccrt_rt.lock) and 36% acquiring maps (the
 * directory's lock), the kernels 18% (bench/RESULTS.md). This program runs
 * the same task graph (C(i,j) += A(i,k) B(k,j) over NB x NB tiles: maps to
 * A and B tiles, tofrom the C tile, depend in/in/inout) on fake GPUs in the
 * CUDA plugin's slot, whose helpers "run" a kernel by sleeping KERNEL_US and
 * whose copies are memcpy, so the runtime's own work is all the CPU does:
 *
 *   dispatch [NGPUS [NB [KERNEL_US [HELPERS]]]]   (defaults 2 16 70 8)
 *   DISPATCH_HOST_US=n dispatch ...               (the host a device too, below)
 *   DISPATCH_FLOOR=1 dispatch ...                 (no runtime: the machine's floor, below)
 *   DISPATCH_ASYNC=1 DISPATCH_LANES=P DISPATCH_FILL_US=f DISPATCH_PEER_US=p dispatch ...
 *                                                 (a model of a GPU's throughput and of
 *                                                 staged copies, below: where a run's start
 *                                                 goes, scaled up so the CPU's cost is small)
 *   DISPATCH_PLACE_ROWS=1 dispatch ...            (row i of C on GPU i * NGPUS / NB: the
 *                                                 tasks placed by the program, not by eft)
 *   DISPATCH_DMA_US=m dispatch ...                (each fill's DMA after its hold: waited
 *                                                 for by the helper with MACC_FILL_ASYNC=0,
 *                                                 else left on its way, below)
 *   DISPATCH_CHAINS=1 dispatch ...                (when the chains C(i, j) ran: chains_report)
 *
 * prints the wall time, tasks per second, and the efficiency: the time the
 * tasks would take if every helper slept back to back (NB^3 x KERNEL_US /
 * (NGPUS x HELPERS)) over the wall time. A per-task cost of the runtime
 * shows as efficiency below 1 that gets worse with more GPUs. bench/dispatch.sh
 * runs 1 and 2 GPUs side by side. Tiles are 64 doubles, so copies cost
 * little; the check compares C with a serial product. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "internal.h"
#include "../tests/fake_gpu.h"
#include "macc_rt.h"

/* Doubles per tile (DISPATCH_TILE_KB: KiB per tile instead; each task still
 * computes and the check still reads the first TILE_WORK of each tile, so
 * that only the copies grow: with matmul's 512 KiB tiles eft's residency
 * term is asked, which 512-byte tiles make too small to weigh). */
static size_t tile = 64;
enum { TILE_WORK = 64 };

static int ngpus = 2, helpers = 8, kernel_us = 70;
static double now(void);
static int async_ends; /* DISPATCH_ASYNC=1 (below) */

static int fgpu_discover(void)
{
    return ngpus;
}

/* A fake GPU's memory: blocks of slabs of host memory (slab.c), as the CUDA
 * plugin cuts its allocations from slabs of device memory; malloc and free
 * for each copy (the tests' fake GPUs) cost the runtime's flush a free of
 * another thread's block per tile, which the CUDA plugin's free does not. */
static void *fgpu_slab_get(void *ctx, size_t bytes)
{
    (void)ctx;
    return malloc(bytes);
}

static void fgpu_slab_put(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static maccrt_slabs *fgpu_slabs[MACCRT_MAX_DEVICES];

/* d's slabs (NULL for a device outside the table: plain malloc and free) */
static maccrt_slabs **fgpu_slabs_of(const maccrt_device *d)
{
    return d->num >= 0 && d->num < MACCRT_MAX_DEVICES ? &fgpu_slabs[d->num] : NULL;
}

static void *fgpu_alloc(maccrt_device *d, void *hostptr, size_t bytes)
{
    (void)hostptr;
    maccrt_slabs **s = fgpu_slabs_of(d);
    int nomem = 0;
    void *p = s && *s ? maccrt_slabs_alloc(*s, bytes ? bytes : 1, NULL, &nomem) : NULL;
    return p ? p : malloc(bytes ? bytes : 1); /* (above the largest block: not slab work) */
}

static void fgpu_free(maccrt_device *d, void *p)
{
    maccrt_slabs **s = fgpu_slabs_of(d);
    if (p && !(s && *s && maccrt_slabs_free(*s, p)))
        free(p);
}

static int fgpu_init(maccrt_device *d)
{
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* (inherited by the helpers) */
    d->pdata = fake_gpu_start(helpers);
    maccrt_slabs **s = fgpu_slabs_of(d);
    if (s)
        *s = maccrt_slabs_new(fgpu_slab_get, fgpu_slab_put, (size_t)64 << 20);
    d->cc = 90;
    /* asynchronous ends: tasks in flight as the CUDA plugin's slots allow */
    d->concurrency = async_ends ? 32 : helpers;
    d->mem_bytes = (size_t)1 << 30;
    return 0;
}

/* DISPATCH_FILL_US / DISPATCH_PEER_US: each copy between the host and a
 * fake GPU / between two fake GPUs also holds the thread that makes it for
 * that long (a sleep), as a staged copy of a pageable tile holds a CUDA
 * helper (memcpy into its slot, the DMA, the wait): a model of the fills
 * that bound the start of a run, where the scheduler decides which GPU
 * needs which tiles. Default 0: memcpy alone. */
static long fill_ns, peer_ns;

static void hold_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    if (ns > 0)
        nanosleep(&ts, NULL);
}

static int fgpu_copy(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    hold_ns(fill_ns);
    return fake_gpu_copy(d, dst, src, bytes);
}

/* DISPATCH_DMA_US: a fill's DMA, after the hold above. A fill waited for
 * (MACC_FILL_ASYNC=0, or the program's) holds its thread for both; a
 * helper's fill of its task's map (plugin->copy_h2d_start) holds it for the
 * first only, and the kernels ordered after it (its task's, and those of
 * the other tasks that use the tile) start when the DMA is done
 * (tests/fake_gpu.h, fake_gpu_version_start). */
static int fgpu_copy_whole(maccrt_device *d, void *dst, const void *src, size_t bytes)
{
    hold_ns(fake_fill_dma_ns);
    return fgpu_copy(d, dst, src, bytes);
}

static int fgpu_copy_start(maccrt_device *d, void *dst, const void *src, size_t bytes, void **fence)
{
    *fence = NULL;
    if (fake_gpu_self != d->pdata || fake_fill_dma_ns == 0)
        return fgpu_copy_whole(d, dst, src, bytes); /* (no DMA: the fake's fences would be all its cost) */
    return fake_gpu_copy_start(d, dst, src, bytes, fence, fgpu_copy);
}

static int fgpu_copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src, size_t bytes)
{
    (void)from;
    hold_ns(peer_ns);
    return fake_gpu_copy(d, dst, src, bytes);
}

/* DISPATCH_LANES=P (with DISPATCH_ASYNC=1): a fake GPU runs at most P kernels
 * at once, KERNEL_US each; a kernel launched while P run starts when the
 * first of them ends: a GPU whose throughput (P / KERNEL_US), not its number
 * of slots, bounds its tasks, as a real GPU's kernels share its SMs (matmul's
 * 256 x 256 tiles on an H200: about 10 at once of about 110 us). 0 (the
 * default): any number at once. */
static int gpu_lanes;
enum { MAX_LANES = 64 };
static struct {
    pthread_mutex_t lock;
    double free_at[MAX_LANES]; /* when each lane is free (now(), seconds) */
} gpu_sm[MACCRT_MAX_DEVICES] = {[0 ... MACCRT_MAX_DEVICES - 1] = {PTHREAD_MUTEX_INITIALIZER, {0}}};

/* (after_ns: the kernel starts no earlier, its fills' DMA) */
static long kernel_ns(const maccrt_device *d, long after_ns)
{
    long k = kernel_us * 1000L + after_ns;
    if (gpu_lanes <= 0 || d->num < 0 || d->num >= MACCRT_MAX_DEVICES)
        return k;
    pthread_mutex_lock(&gpu_sm[d->num].lock);
    double *f = gpu_sm[d->num].free_at, t = now() + 1e-9 * (double)after_ns;
    /* the lane free by t that became free last (a kernel that waits for its
     * fills' DMA leaves the lanes free now to kernels launched after it, as
     * a GPU runs whichever kernel is ready), else the first to become free */
    int first = -1;
    for (int i = 0; i < gpu_lanes; i++)
        if (f[i] <= t && (first < 0 || f[i] > f[first]))
            first = i;
    if (first < 0) {
        first = 0;
        for (int i = 1; i < gpu_lanes; i++)
            if (f[i] < f[first])
                first = i;
    }
    double end = (f[first] > t ? f[first] : t) + 1e-6 * kernel_us;
    f[first] = end;
    pthread_mutex_unlock(&gpu_sm[d->num].lock);
    return (long)((end - t) * 1e9) + after_ns;
}

static int fgpu_run(maccrt_device *d, maccrt_task *t, MACC_TaskEnv *env)
{
    long after = fake_gpu_version_start(); /* (its fills' DMA: DISPATCH_DMA_US) */
    if (!async_ends)
        hold_ns(after);
    return fake_gpu_ran_async(d, t, t->ver->fn(t->args, env), async_ends ? kernel_ns(d, after) : 0);
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
    .copy_h2d = fgpu_copy_whole,
    .copy_d2h = fgpu_copy,
    .copy_peer = fgpu_copy_peer,
    .copy_h2d_start = fgpu_copy_start,
    .fence_order = fake_gpu_fence_order,
    .fence_done = fake_gpu_fence_done,
    .helpers_start = fake_gpu_helpers_start,
    .helpers_wait = fake_gpu_helpers_wait,
    .queued = fake_gpu_queued,
    .submit = fake_gpu_plugin_submit,
    .run = fgpu_run,
};

/* When the last "kernel" ended (ns on CLOCK_MONOTONIC, the largest seen):
 * the time from it to the taskwait's return is the wait's end, its flush
 * above all (the write-backs and the end of every cached copy). */
static atomic_llong last_end_ns;

/* one multiply-add per tile element, then a sleep of ns */
static int gemm_tile_sleep(const MACC_TaskEnv *env, long ns)
{
    const double *a = env->ptrs[0], *b = env->ptrs[1];
    double *c = env->ptrs[2];
    for (int i = 0; i < TILE_WORK; i++)
        c[i] += a[i] * b[i];
    hold_ns(ns);
    long long e = (long long)(now() * 1e9), seen = atomic_load_explicit(&last_end_ns, memory_order_relaxed);
    while (e > seen && !atomic_compare_exchange_weak(&last_end_ns, &seen, e))
        ;
    return 0;
}

/* DISPATCH_CHAINS=1: each task's launch (its version's call: the kernel's
 * queueing, with asynchronous ends) and device, by tile (i, j) and step k,
 * for the summary of the chains C(i, j) (chains_report). */
typedef struct {
    int i, j, k;
} gemm_args;
static int chains_on, chains_nb;
static double chains_t0, *chains_at;
static signed char *chains_dev;

static void chains_note(const void *args, const MACC_TaskEnv *env)
{
    const gemm_args *g = args;
    if (!chains_on || !g)
        return;
    size_t x = ((size_t)g->i * chains_nb + g->j) * chains_nb + g->k;
    chains_at[x] = now() - chains_t0;
    chains_dev[x] = (signed char)(env->device_kind == MACC_DEV_HOST ? -1 : env->device_index);
}

/* the "kernel": its sleep, or with asynchronous ends, its end due then */
static int gemm_tile(void *args, MACC_TaskEnv *env)
{
    chains_note(args, env);
    return gemm_tile_sleep(env, async_ends ? 0 : kernel_us * 1000L);
}

/* DISPATCH_HOST_US=n: the region also has a host version (resources(50),
 * as samples/matmul.c's) that "runs" n us of one thread's work on the
 * threads it is given (a sleep of n / nthreads us), and the host is a device
 * beside the fake GPUs (MACC_HOST_THREADS default 16): the scheduler's part of
 * sharing a region with a host that is much slower per task, with no CPU
 * contention (sleeps), against the same run without the host. */
static int host_us;

static int gemm_tile_host(void *args, MACC_TaskEnv *env)
{
    chains_note(args, env);
    return gemm_tile_sleep(env, host_us * 1000L / (env->nthreads > 0 ? env->nthreads : 1));
}

static const MACC_Version gemm_v[] = {{MACC_DEV_NVIDIA, 0, 5, 0, gemm_tile}, {MACC_DEV_HOST, 0, 50, 0, gemm_tile_host}};
static const MACC_Region gemm_r = {{"dispatch.c", 1, 1, "main"}, "gemm_tile", 1, gemm_v, 0, 0};
static const MACC_Region gemm_rh = {{"dispatch.c", 1, 1, "main"}, "gemm_tile", 2, gemm_v, 0, 0};

/* DISPATCH_CHAINS=1's summary: when the chains' first and last steps were
 * launched (quantiles over the NB^2 chains, ms), how many chains have their
 * last step in the run's last tenth and how far behind they were, and the
 * moves of a chain's steps between devices. */
static int chains_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void chains_report(int NB, double t)
{
    int n = NB * NB;
    double *first = malloc((size_t)n * sizeof *first), *last = malloc((size_t)n * sizeof *last);
    long moves = 0;
    int late = 0, behind_max = 0;
    for (int c = 0; c < n; c++) {
        const double *at = chains_at + (size_t)c * NB;
        const signed char *dv = chains_dev + (size_t)c * NB;
        first[c] = at[0];
        last[c] = at[NB - 1];
        for (int k = 1; k < NB; k++)
            moves += dv[k] != dv[k - 1];
        if (at[NB - 1] > 0.9 * t) {
            late++;
            int behind = 0; /* its steps launched in the last tenth */
            for (int k = 0; k < NB; k++)
                behind += at[k] > 0.9 * t;
            if (behind > behind_max)
                behind_max = behind;
        }
    }
    qsort(first, (size_t)n, sizeof *first, chains_cmp);
    qsort(last, (size_t)n, sizeof *last, chains_cmp);
    printf("dispatch: chains: first step launched at %.1f / %.1f / %.1f ms (min / median / max), "
           "last step at %.1f / %.1f / %.1f ms; %d chains end in the last tenth (%.1f ms), "
           "up to %d of their %d steps there; %.2f moves between devices per chain\n",
           1e3 * first[0], 1e3 * first[n / 2], 1e3 * first[n - 1], 1e3 * last[0], 1e3 * last[n / 2],
           1e3 * last[n - 1], late, 0.1e3 * t, behind_max, NB, (double)moves / n);
    free(first);
    free(last);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The process's CPU time (user + system, every thread) so far: per task, a
 * measure of the runtime's cost that a shared machine's other load moves
 * less than the wall time (the fake kernels sleep, so it is the runtime's,
 * the fake GPUs' threads' and the kernel's wake-ups). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec + ru.ru_stime.tv_sec + 1e-6 * ru.ru_stime.tv_usec;
}

/* DISPATCH_FLOOR=1: NGPUS x min(HELPERS, 20) threads take the NB^3 "tasks"
 * from a counter and sleep KERNEL_US each, without the runtime: the most
 * tasks per second this machine's timers and cores allow (the same line,
 * check=PASS, so bench/dispatch.sh reads it as a run). */
static atomic_long floor_left;

static void *floor_thread(void *arg)
{
    (void)arg;
    struct timespec ts = {0, kernel_us * 1000L};
    while (atomic_fetch_sub(&floor_left, 1) > 0)
        nanosleep(&ts, NULL);
    return NULL;
}

static int floor_run(int NB)
{
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    int n = ngpus * (helpers < 20 ? helpers : 20);
    long ntasks = (long)NB * NB * NB;
    pthread_t th[8 * FAKE_GPU_MAX_THREADS];
    atomic_store(&floor_left, ntasks);
    double t0 = now(), c0 = cpu_s();
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, floor_thread, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    double t = now() - t0, c = cpu_s() - c0;
    double ideal = ntasks * kernel_us * 1e-6 / n;
    printf("dispatch: floor gpus=%d threads=%d tasks=%ld kernel_us=%d time=%.4f s tasks_per_s=%.0f "
           "efficiency=%.3f policy_calls_per_task=0.0 cpu_us_per_task=%.1f check=PASS\n",
           ngpus, n, ntasks, kernel_us, t, ntasks / t, ideal / t, 1e6 * c / ntasks);
    return 0;
}

/* A switch of the environment: set to "1". */
static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && !strcmp(v, "1");
}

/* A number of the environment, 0 when unset or empty. */
static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : 0;
}

int main(int argc, char **argv)
{
    ngpus = argc > 1 ? atoi(argv[1]) : 2;
    int NB = argc > 2 ? atoi(argv[2]) : 16;
    kernel_us = argc > 3 ? atoi(argv[3]) : 70;
    helpers = argc > 4 ? atoi(argv[4]) : 8;
    /* (any number of GPUs the runtime's device masks hold, the host one of them) */
    if (ngpus < 1 || ngpus > MACCRT_MAX_DEVICES - 1 || NB < 1 || kernel_us < 1 || helpers < 1 ||
        helpers > FAKE_GPU_MAX_THREADS) {
        fprintf(stderr, "usage: %s [NGPUS(1-%d) [NB [KERNEL_US [HELPERS(1-%d)]]]]\n", argv[0],
                MACCRT_MAX_DEVICES - 1, FAKE_GPU_MAX_THREADS);
        return 2;
    }
    /* DISPATCH_ASYNC=1: the fake GPUs' tasks end asynchronously, as the CUDA
     * plugin's do: a helper runs the version and goes on, a watcher ends the
     * task KERNEL_US later and a helper finishes it (tests/fake_gpu.h) */
    async_ends = env_on("DISPATCH_ASYNC");
    if (async_ends)
        setenv("MACC_TEST_FAKE_ASYNC_US", "0", 1);
    /* DISPATCH_IDLE_SPIN_US (default 500, the CUDA plugin's
     * MACC_CUDA_IDLE_SPIN_US): a fake GPU's helper with nothing to take
     * polls that long before it sleeps (one per GPU, four with asynchronous
     * ends), as the plugin's do; 0: they sleep at once (before 2026-11-30) */
    const char *isp = getenv("DISPATCH_IDLE_SPIN_US");
    setenv("MACC_TEST_FAKE_IDLE_SPIN_US", isp && *isp ? isp : "500", 1);
    fill_ns = 1000L * env_long("DISPATCH_FILL_US");
    peer_ns = 1000L * env_long("DISPATCH_PEER_US");
    fake_fill_dma_ns = 1000L * env_long("DISPATCH_DMA_US");
    gpu_lanes = async_ends ? (int)env_long("DISPATCH_LANES") : 0;
    if (gpu_lanes > MAX_LANES)
        gpu_lanes = MAX_LANES;
    int place_rows = env_on("DISPATCH_PLACE_ROWS"), place_cols = env_on("DISPATCH_PLACE_COLS");
    long tile_kb = env_long("DISPATCH_TILE_KB");
    if (tile_kb > 0)
        tile = (size_t)tile_kb * 1024 / sizeof(double);
    if (env_on("DISPATCH_FLOOR"))
        return floor_run(NB);
    host_us = (int)env_long("DISPATCH_HOST_US");
    if (host_us > 0) {
        setenv("MACC_DEVICES", "host,nvidia", 1);
        setenv("MACC_HOST_THREADS", "16", 0);
    } else {
        setenv("MACC_DEVICES", "nvidia", 1);
    }
    size_t ntile = (size_t)NB * NB;
    double *A = malloc(ntile * tile * sizeof *A), *B = malloc(ntile * tile * sizeof *B);
    double *C = malloc(ntile * tile * sizeof *C);
    /* (C's zeros are written here, before the clock: malloc and a zeroing
     * loop became calloc, whose fresh pages the helpers' write-backs then
     * faulted in inside the measured time, several at once on the same
     * mapping, 3 ms of CPU with one fake GPU: host memory's first touch, not
     * the runtime's work. The empty asm keeps the two apart.) */
    __asm__ volatile("" : : "g"(C) : "memory");
    for (size_t i = 0; i < ntile * tile; i++) {
        A[i] = (double)(i % 7);
        B[i] = (double)(i % 5);
        C[i] = 0;
    }
    chains_on = env_on("DISPATCH_CHAINS");
    if (chains_on) {
        chains_nb = NB;
        chains_at = calloc(ntile * NB, sizeof *chains_at);
        chains_dev = calloc(ntile * NB, 1);
    }
    macc_num_devices(); /* the runtime and its helpers up before the clock */
    double t0 = now(), c0 = cpu_s();
    chains_t0 = t0;
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NB; j++)
            for (int k = 0; k < NB; k++) {
                double *a = A + ((size_t)i * NB + k) * tile, *b = B + ((size_t)k * NB + j) * tile;
                double *c = C + ((size_t)i * NB + j) * tile;
                MACC_Map m[3] = {{"A", a, a, tile * sizeof(double), MACC_MAP_TO},
                                 {"B", b, b, tile * sizeof(double), MACC_MAP_TO},
                                 {"C", c, c, tile * sizeof(double), MACC_MAP_TOFROM}};
                MACC_Dep dep[3] = {{a, tile * sizeof(double), MACC_DEP_IN},
                                   {b, tile * sizeof(double), MACC_DEP_IN},
                                   {c, tile * sizeof(double), MACC_DEP_INOUT}};
                int dev = place_rows ? i * ngpus / NB : place_cols ? j * ngpus / NB : MACC_DEVICE_ANY;
                gemm_args ga = {i, j, k}; /* (only for DISPATCH_CHAINS: no arguments otherwise, as before) */
                MACC_target(host_us > 0 ? &gemm_rh : &gemm_r, chains_on ? &ga : NULL, chains_on ? sizeof ga : 0, 3,
                            m, 3, dep, MACC_NOWAIT, dev, 1);
            }
    double tc = now() - t0; /* the tasks created */
    MACC_taskwait(NULL);
    double t = now() - t0, c = cpu_s() - c0;
    long bad = 0;
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NB; j++)
            for (int e = 0; e < TILE_WORK; e++) {
                double want = 0;
                for (int k = 0; k < NB; k++)
                    want += A[((size_t)i * NB + k) * tile + e] * B[((size_t)k * NB + j) * tile + e];
                bad += C[((size_t)i * NB + j) * tile + e] != want;
            }
    long ntasks = (long)NB * NB * NB;
    /* (resources(5): 20 at once; DISPATCH_LANES: that many) */
    int at_once = gpu_lanes > 0 ? gpu_lanes : async_ends || helpers > 20 ? 20 : helpers;
    double ideal = ntasks * kernel_us * 1e-6 / (ngpus * at_once);
    printf("dispatch: gpus=%d helpers=%d tasks=%ld kernel_us=%d time=%.4f s tasks_per_s=%.0f "
           "efficiency=%.3f policy_calls_per_task=%.1f cpu_us_per_task=%.1f check=%s\n",
           ngpus, helpers, ntasks, kernel_us, t, ntasks / t, ideal / t,
           (double)maccrt_rt.policy_calls / (double)ntasks, 1e6 * c / ntasks, bad ? "FAIL" : "PASS");
    printf("dispatch: residency terms %ld, %ld of them unknown (the directory busy, nothing kept); "
           "%ld tasks completed by the waiting thread, %ld by the completion thread; the tasks created in %.4f s\n",
           maccrt_rt.policy_terms, maccrt_rt.policy_blind, maccrt_rt.wait_completed, maccrt_task_completer_count(), tc);
    if (maccrt_task_completer_count() > 0)
        printf("dispatch: the completion thread held the runtime lock %.2f ms of %.2f ms (%.2f us per task it "
               "completed)\n",
               1e3 * maccrt_task_completer_held_s(), 1e3 * t,
               1e6 * maccrt_task_completer_held_s() / (double)maccrt_task_completer_count());
    if (!async_ends) /* (asynchronous ends: the sleeps are the launches) */
        printf("dispatch: the wait returned %.0f us after the last kernel ended (its flush)\n",
               (t0 + t) * 1e6 - 1e-3 * (double)atomic_load(&last_end_ns));
    if (chains_on)
        chains_report(NB, t);
    for (int d = 0; d < macc_num_devices(); d++) {
        maccrt_dir_info di;
        maccrt_dir_info_get(maccrt_rt.devices[d], &di);
        printf("dispatch: device %d (%s): %ld tasks, %llu bytes in from the host, %llu from other GPUs, "
               "%ld maps under its own lock, %ld first uses (%ld of sections new anywhere) and %ld writes making "
               "copies stale beside the global one\n",
               d, macc_device_name(d), macc_device_tasks(d),
               (unsigned long long)atomic_load(&maccrt_rt.devices[d]->bytes_h2d),
               (unsigned long long)atomic_load(&maccrt_rt.devices[d]->bytes_p2p), di.fast, di.first, di.made, di.stale);
    }
    free(A);
    free(B);
    free(C);
    return bad ? 1 : 0;
}
