/* Placement of managed data (runtime/placement.c) on a fake GPU with a small budget.
 *
 * The fake GPU stands in the CUDA plugin's slot (maccrt_cuda_plugin): one
 * helper thread runs the tasks' version functions as host code, and its run
 * calls the placement hooks as the CUDA plugin's does. Its managed memory is
 * host memory; prefetches and placement advice are logged, and a model of
 * what is on the "GPU" (prefetched there and not moved back) checks that no
 * decision ever moves data past the budget. */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "../fake_gpu.h"

#define MiB ((size_t)1 << 20)

/* ---- the fake GPU ------------------------------------------------------------------------------ */

enum { EV_TO_GPU, EV_TO_HOST, EV_PIN, EV_UNPIN };
typedef struct ev {
    int kind;
    uintptr_t p;
    size_t bytes;
    int dev;
} ev;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static ev evlog[4096];
static int nev;
/* the model: ranges prefetched to the GPU and not back */
static uintptr_t on_a[256], on_b[256];
static int non;
static size_t on_bytes, on_peak;

static void fg_log(int dev, int kind, const void *p, size_t bytes)
{
    pthread_mutex_lock(&log_lock);
    if (nev < 4096)
        evlog[nev++] = (ev){kind, (uintptr_t)p, bytes, dev};
    uintptr_t a = (uintptr_t)p, b = a + bytes;
    if (kind == EV_TO_GPU) {
        on_a[non] = a;
        on_b[non++] = b;
        on_bytes += bytes;
        if (on_bytes > on_peak)
            on_peak = on_bytes;
    } else if (kind == EV_TO_HOST) {
        for (int i = 0; i < non;)
            if (on_a[i] < b && a < on_b[i]) {
                on_bytes -= on_b[i] - on_a[i];
                on_a[i] = on_a[--non];
                on_b[i] = on_b[non];
            } else {
                i++;
            }
    }
    pthread_mutex_unlock(&log_lock);
}

static int count(int kind, const void *p)
{
    int n = 0;
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nev; i++)
        n += evlog[i].kind == kind && (!p || evlog[i].p == (uintptr_t)p);
    pthread_mutex_unlock(&log_lock);
    return n;
}

/* prefetches of p (NULL: any) to GPU dev, in bytes */
static size_t to_gpu_bytes(int dev, const void *p)
{
    size_t n = 0;
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nev; i++)
        if (evlog[i].kind == EV_TO_GPU && evlog[i].dev == dev && (!p || evlog[i].p == (uintptr_t)p))
            n += evlog[i].bytes;
    pthread_mutex_unlock(&log_lock);
    return n;
}

static int fg_ngpus = 1; /* (a test sets 2 before its first runtime call) */
static int fg_discover(void)
{
    return fg_ngpus;
}

static int fg_init(maccrt_device *d)
{
    d->pdata = fake_gpu_start(1);
    d->cc = 90;
    d->concurrency = 1;
    d->mem_bytes = (size_t)1 << 30;
    return 0;
}


static size_t fg_free[2] = {256 * MiB, 256 * MiB}; /* per GPU (a test may shrink the second) */
static int fg_mem_info(maccrt_device *d, size_t *free_b, size_t *total_b)
{
    *free_b = fg_free[d->index & 1];
    *total_b = (size_t)1 << 30;
    return 0;
}

static void fg_prefetch(maccrt_device *d, const void *p, size_t bytes, int to_host)
{
    (void)d;
    fg_log(d->num, to_host ? EV_TO_HOST : EV_TO_GPU, p, bytes);
}

static void fg_advise_place(maccrt_device *d, const void *p, size_t bytes, int host)
{
    (void)d;
    fg_log(d->num, host ? EV_PIN : EV_UNPIN, p, bytes);
}

/* The migration calibration: faults at 12 GB/s, prefetches at 16 GB/s (a
 * threshold of 0.75), or a failure (calib_fails); the calls are counted. */
static int calib_fails, calib_calls;
static size_t calib_bytes;
static int fg_calibrate(maccrt_device *d, size_t bytes, double *fault_s, double *prefetch_s)
{
    (void)d;
    __atomic_add_fetch(&calib_calls, 1, __ATOMIC_SEQ_CST);
    calib_bytes = bytes;
    if (calib_fails)
        return -1;
    *fault_s = (double)bytes / 12e9;
    *prefetch_s = (double)bytes / 16e9;
    return 0;
}

const maccrt_plugin maccrt_cuda_plugin = {
    .name = "nvidia",
    .kind = MACC_DEV_NVIDIA,
    .discover = fg_discover,
    .init_device = fg_init,
    .fini_device = fake_gpu_fini,
    .version_ok = fake_gpu_version_ok,
    .alloc = fake_gpu_heap_alloc,
    .free = fake_gpu_heap_free,
    .copy_h2d = fake_gpu_copy,
    .copy_d2h = fake_gpu_copy,
    .submit = fake_gpu_plugin_submit,
    .run = fake_gpu_run, /* as cuda__run: the task layer places managed data around it */
    .managed_alloc = fake_gpu_managed_alloc,
    .managed_free = fake_gpu_managed_free,
    .mem_info = fg_mem_info,
    .prefetch = fg_prefetch,
    .advise_place = fg_advise_place,
    .calibrate_migration = fg_calibrate,
};

/* ---- regions -------------------------------------------------------------------------------------- */

static int kernel(void *args, MACC_TaskEnv *env)
{
    (void)args;
    (void)env;
    return 0;
}

static const MACC_Version vers[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, kernel}};

/* Facts of region R: three objects, "hot" (rank 1), "warm" (rank 2), "cold" (rank 3).
 * cold's elements are 4 KiB (one page each), so the fraction of its pages
 * touched is its density: a 4 MiB cold (1024 elements) at trip 1 Mi has
 * density (and pages) 0.25. */
static const MACC_Access facts3[] = {
    {"hot", 0, 4, 2.0, 1},
    {"warm", 1, 4, 1.0, 2},
    {"cold", 2, 4096, 1.0 / 4096, 3},
};
static const MACC_Region R3 = {{"bfs.c", 10, 1, "main"}, "macc_k_main_L10", 1, vers, 3, facts3};
static const MACC_Access facts1[] = {{"x", 0, 4, 1.0, 1}};
static const MACC_Region R1 = {{"a.c", 20, 1, "f"}, "macc_k_f_L20", 1, vers, 1, facts1};
static const MACC_Region Rnofacts = {{"b.c", 30, 1, "g"}, "macc_k_g_L30", 1, vers, 0, NULL};

static void launch(const MACC_Region *r, int n, float **p, const char *const *names, size_t *bytes, long long trip)
{
    MACC_Map m[8];
    for (int i = 0; i < n; i++)
        m[i] = (MACC_Map){names[i], p[i], p[i], bytes[i], MACC_MAP_TOFROM};
    if (trip >= 0)
        MACC_push_tripcount(trip);
    MACC_target(r, NULL, 0, n, m, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
}

static maccrt_device *gpu(void)
{
    cr_assert_geq(macc_num_devices(), 2);
    maccrt_device *d = maccrt_rt.devices[0];
    cr_assert_eq(d->kind, MACC_DEV_NVIDIA);
    return d;
}

static void env_budget(const char *budget, const char *policy)
{
    unsetenv("MACC_DEVICES");
    unsetenv("MACC_MANAGED_HINTS");
    unsetenv("MACC_OTM_DENSITY");
    unsetenv("MACC_MANAGED_CAP");
    calib_fails = calib_calls = 0;
    setenv("MACC_POOL", "0", 1); /* every object its own allocation, of its exact size */
    setenv("MACC_MANAGED_MARGIN", "16M", 1);
    setenv("MACC_HOST_THREADS", "2", 1);
    if (budget)
        setenv("MACC_DEVICE_MEMORY", budget, 1);
    else
        unsetenv("MACC_DEVICE_MEMORY");
    if (policy)
        setenv("MACC_PLACEMENT", policy, 1);
    else
        unsetenv("MACC_PLACEMENT");
}

static void no_env(void)
{
    env_budget(NULL, NULL);
}

/* Two fake GPUs, the host left out, placement policy `policy` (before the first runtime call). */
static void two_gpus(const char *policy)
{
    fg_ngpus = 2;
    env_budget(NULL, policy);
    setenv("MACC_DEVICES", "nvidia", 1);
}

TestSuite(placement, .init = no_env, .timeout = 60);

static const char *const names3[] = {"hot", "warm", "cold"};

/* Everything fits: dense objects are prefetched (once), the sparse one is
 * left to faults, nothing pinned or evicted. The budget is the cap (256 MiB
 * free - 16 MiB margin). */
Test(placement, fits_dense_prefetched_sparse_faulted)
{
    env_budget(NULL, "otm");
    size_t n = MiB; /* elements of 4 bytes */
    size_t b[3] = {4 * n, 4 * n, 4 * n};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    launch(&R3, 3, p, names3, b, (long long)n);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, p[0]), MACCRT_PL_GPU_PREFETCH);
    cr_assert_eq(maccrt_placement_where(d, p[1]), MACCRT_PL_GPU_PREFETCH, "density 1: prefetched");
    cr_assert_eq(maccrt_placement_where(d, p[2]), MACCRT_PL_GPU_FAULT, "density 0.25 < 0.75: faults");
    cr_assert_eq(count(EV_TO_GPU, p[0]), 1);
    cr_assert_eq(count(EV_TO_GPU, p[2]), 0);
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.faulted, n, "0.25 x 4 MiB: %llu", s.faulted);
    launch(&R3, 3, p, names3, b, (long long)n);
    cr_assert_eq(count(EV_TO_GPU, NULL), 2, "resident objects are not prefetched again");
    cr_assert_eq(count(EV_PIN, NULL) + count(EV_TO_HOST, NULL), 0);
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.budget, 240 * MiB);
    cr_assert_eq(s.prefetched, 8 * n);
    cr_assert_eq(s.faulted, 2 * n, "one more quarter (an upper bound: up to its size): %llu", s.faulted);
    cr_assert_eq(s.resident, 12 * n);
    cr_assert_eq(s.launches, 2);
}

/* Pages, not elements: a quarter of the elements of an int array, spread
 * over it, touch every page (faults would move all of it: dense); a map of
 * an eighth of an allocation, every element used, touches an eighth of its
 * pages (sparse below 0.75). */
static const MACC_Access facts_pg[] = {{"e", 0, 4, 0.25, 1}, {"s", 1, 4, 1.0, 2}};
static const MACC_Region Rpg = {{"d.c", 60, 1, "k"}, "macc_k_k_L60", 1, vers, 2, facts_pg};
Test(placement, pages_not_elements)
{
    env_budget(NULL, "otm");
    size_t b = 8 * MiB;
    float *e = MACC_malloc(b), *sl = MACC_malloc(b);
    MACC_Map m[2] = {{"e", e, e, b, MACC_MAP_TO}, {"s", sl, sl, b / 8, MACC_MAP_TO}};
    MACC_push_tripcount((long long)(b / 4 / 8)); /* e: 0.25 x 256 Ki of 2 Mi elements; s: 256 Ki of 256 Ki */
    MACC_target(&Rpg, NULL, 0, 2, m, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, e), MACCRT_PL_GPU_PREFETCH, "density 1/32, every page touched");
    cr_assert_eq(maccrt_placement_where(d, sl), MACCRT_PL_GPU_FAULT, "an eighth of its pages");
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.faulted, b / 8, "the pages of the section: %llu", s.faulted);
}

/* The threshold is settable: at 0.2 the cold object is prefetched too. */
Test(placement, threshold_is_settable)
{
    env_budget(NULL, "otm");
    setenv("MACC_OTM_DENSITY", "0.2", 1);
    size_t n = MiB;
    size_t b[3] = {4 * n, 4 * n, 4 * n};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    launch(&R3, 3, p, names3, b, (long long)n);
    cr_assert_eq(maccrt_placement_where(gpu(), p[2]), MACCRT_PL_GPU_PREFETCH);
}

/* The threshold is measured on the GPU once, by the first allocation's thread
 * or at the first decision, whichever comes first (the fake's 12 / 16 GB/s:
 * 0.75): an object of density 0.7 is left to faults. The
 * calibration's size is min(64 MiB, cap / 4) in 2 MiB steps: cap 240 MiB, 60. */
static const MACC_Access facts_07[] = {{"x", 0, 4096, 0.7 / 1024, 1}}; /* 4 MiB, trip 1 Mi: pages 0.7 */
static const MACC_Region R07 = {{"c.c", 50, 1, "h"}, "macc_k_h_L50", 1, vers, 1, facts_07};
Test(placement, threshold_is_measured_once)
{
    env_budget(NULL, "otm");
    size_t b = 4 * MiB;
    float *x = MACC_malloc(b);
    maccrt_device *d = gpu();
    maccrt_placement_info s;
    cr_assert_leq(__atomic_load_n(&calib_calls, __ATOMIC_SEQ_CST), 1,
                  "at most once before a decision (the allocation's thread)");
    static const char *const one[] = {"x"};
    for (int k = 0; k < 3; k++)
        launch(&R07, 1, &x, one, &b, (long long)MiB);
    cr_assert_eq(calib_calls, 1);
    cr_assert_eq(calib_bytes, 60 * MiB);
    cr_assert_eq(maccrt_placement_where(d, x), MACCRT_PL_GPU_FAULT, "0.7 < 0.75");
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.threshold_from, MACCRT_PL_THR_MEASURED);
    cr_assert_float_eq(s.threshold, 0.75, 1e-9);
    cr_assert_float_eq(s.fault_bw, 12e9, 1.0);
    cr_assert_float_eq(s.prefetch_bw, 16e9, 1.0);
    cr_assert_eq(count(EV_TO_GPU, NULL), 0);
}

/* Where the calibration fails, OTM's 0.6: the same object is prefetched. */
Test(placement, threshold_falls_back_to_otm)
{
    env_budget(NULL, "otm");
    calib_fails = 1;
    size_t b = 4 * MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R07, 1, &x, one, &b, (long long)MiB);
    maccrt_device *d = gpu();
    cr_assert_eq(calib_calls, 1);
    cr_assert_eq(maccrt_placement_where(d, x), MACCRT_PL_GPU_PREFETCH, "0.7 >= 0.6");
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.threshold_from, MACCRT_PL_THR_DEFAULT);
    cr_assert_float_eq(s.threshold, 0.6, 1e-9);
    cr_assert_eq(s.fault_bw, 0.0);
}

/* MACC_OTM_DENSITY overrides: nothing is measured; the fixed policies do
 * not measure either (they do not use the threshold). */
Test(placement, threshold_setting_skips_the_calibration)
{
    env_budget(NULL, "otm");
    setenv("MACC_OTM_DENSITY", "0.65", 1);
    size_t b = 4 * MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R07, 1, &x, one, &b, (long long)MiB);
    cr_assert_eq(calib_calls, 0);
    cr_assert_eq(maccrt_placement_where(gpu(), x), MACCRT_PL_GPU_PREFETCH, "0.7 >= 0.65");
    maccrt_placement_info s;
    maccrt_placement_stats(gpu(), &s);
    cr_assert_eq(s.threshold_from, MACCRT_PL_THR_ENV);
}

Test(placement, fixed_policies_do_not_measure)
{
    env_budget(NULL, "prefetch");
    size_t b = 4 * MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R07, 1, &x, one, &b, (long long)MiB);
    cr_assert_eq(calib_calls, 0);
    cr_assert_eq(maccrt_placement_where(gpu(), x), MACCRT_PL_GPU_PREFETCH);
}

/* A calibration is never asked for more than a quarter of the cap: with a
 * cap of 240 MiB and a 10 MiB budget, 60 MiB (the plugin also checks the
 * GPU's free memory itself); a cap below 32 MiB measures nothing. */
Test(placement, calibration_within_the_cap)
{
    env_budget("10M", "otm");
    setenv("MACC_MANAGED_CAP", "20M", 1);
    size_t b = MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R07, 1, &x, one, &b, (long long)(b / 4));
    cr_assert_eq(calib_calls, 0, "cap 20 MiB: 5 MiB < 8: not measured");
    maccrt_placement_info s;
    maccrt_placement_stats(gpu(), &s);
    cr_assert_eq(s.threshold_from, MACCRT_PL_THR_DEFAULT);
    unsetenv("MACC_MANAGED_CAP");
}

/* Under a budget of 10 MiB: hot (4) and warm (4) fit, cold (16) does not and
 * is kept on the host; nothing is evicted, the GPU never holds more than the
 * budget, again and again. */
Test(placement, otm_pins_what_does_not_fit)
{
    env_budget("10M", "otm");
    size_t b[3] = {4 * MiB, 4 * MiB, 16 * MiB};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    for (int k = 0; k < 5; k++)
        launch(&R3, 3, p, names3, b, (long long)MiB);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, p[0]), MACCRT_PL_GPU_PREFETCH);
    cr_assert_eq(maccrt_placement_where(d, p[1]), MACCRT_PL_GPU_PREFETCH);
    cr_assert_eq(maccrt_placement_where(d, p[2]), MACCRT_PL_HOST);
    cr_assert_eq(count(EV_PIN, p[2]), 1, "advised once");
    cr_assert_eq(count(EV_TO_HOST, NULL), 0, "no eviction");
    cr_assert_eq(count(EV_TO_GPU, NULL), 2);
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.pinned, 16 * MiB);
    cr_assert_eq(s.evicted, 0);
    cr_assert_leq(s.peak, 10 * MiB);
    cr_assert_leq(on_peak, 10 * MiB);
}

/* The walk goes on past an object that does not fit: a smaller one of a
 * lower rank still gets the room. */
Test(placement, otm_walk_skips_what_does_not_fit)
{
    env_budget("10M", "otm");
    size_t b[3] = {4 * MiB, 8 * MiB, 4 * MiB};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    launch(&R3, 3, p, names3, b, (long long)MiB);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, p[0]), MACCRT_PL_GPU_PREFETCH);
    cr_assert_eq(maccrt_placement_where(d, p[1]), MACCRT_PL_HOST, "rank 2, 8 MiB: 6 left");
    cr_assert_eq(maccrt_placement_where(d, p[2]), MACCRT_PL_GPU_FAULT, "rank 3 fits after it (density 0.25)");
}

/* Dense objects are walked before sparse ones: a sparse object of rank 1
 * does not take the room of a dense one of rank 2. */
static const MACC_Access facts_sd[] = {
    {"edges", 0, 4096, 1.0 / 1024, 1}, /* 8 MiB = 2048 pages, trip 1 Mi: 1024 of them, 0.5 */
    {"cost", 1, 4, 1.0, 2},  /* 4 MiB, density 1 */
};
static const MACC_Region Rsd = {{"bfs.c", 40, 1, "main"}, "macc_k_main_L40", 1, vers, 2, facts_sd};
Test(placement, otm_walks_dense_before_sparse)
{
    env_budget("10M", "otm");
    size_t b[2] = {8 * MiB, 4 * MiB};
    float *p[2] = {MACC_malloc(b[0]), MACC_malloc(b[1])};
    static const char *const nm[] = {"edges", "cost"};
    launch(&Rsd, 2, p, nm, b, (long long)MiB);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, p[1]), MACCRT_PL_GPU_PREFETCH);
    cr_assert_eq(maccrt_placement_where(d, p[0]), MACCRT_PL_HOST);
}

/* prefetch under the same budget: the objects of one launch (24 MiB) do not
 * fit in 10: the launch's objects thrash (evicted after the kernel, fetched
 * again at the next launch), and no decision ever holds more than the budget. */
Test(placement, prefetch_thrashes_within_the_budget)
{
    env_budget("10M", "prefetch");
    size_t b[3] = {4 * MiB, 4 * MiB, 16 * MiB};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    for (int k = 0; k < 3; k++)
        launch(&R3, 3, p, names3, b, (long long)MiB);
    maccrt_device *d = gpu();
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(count(EV_PIN, NULL), 0, "prefetch never pins");
    cr_assert_gt(s.n_evict, 2, "evictions every launch: %ld", s.n_evict);
    cr_assert_gt(s.evicted, 16 * MiB);
    cr_assert_leq(s.peak, 10 * MiB, "peak %zu", s.peak);
    cr_assert_leq(s.resident, 10 * MiB);
    cr_assert_leq(on_peak, 10 * MiB, "the fake GPU held %zu", on_peak);
    cr_assert_gt(s.over_budget, 0, "cold (16 MiB > 10) came by faults");
}

/* demand: no prefetch to the GPU at all; the budget still holds (objects are
 * evicted least recently used first). */
Test(placement, demand_faults_and_evicts)
{
    env_budget("10M", "demand");
    size_t b[3] = {4 * MiB, 4 * MiB, 4 * MiB};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    static const char *const one[] = {"x"};
    for (int k = 0; k < 3; k++)
        launch(&R1, 1, &p[k], one, &b[k], (long long)MiB);
    maccrt_device *d = gpu();
    cr_assert_eq(count(EV_TO_GPU, NULL), 0);
    cr_assert_eq(maccrt_placement_where(d, p[2]), MACCRT_PL_GPU_FAULT);
    cr_assert_eq(count(EV_TO_HOST, p[0]), 1, "the least recently used went back");
    cr_assert_eq(count(EV_TO_HOST, p[1]), 0);
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.faulted, 12 * MiB);
    cr_assert_eq(s.resident, 8 * MiB);
}

/* LRU across regions under otm: A then B then A, each 6 MiB with 10 MiB: B
 * evicts A, A evicts B; A is prefetched again after its trip back. */
Test(placement, lru_eviction_across_regions)
{
    env_budget("10M", "otm");
    size_t b = 6 * MiB;
    float *A = MACC_malloc(b), *B = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R1, 1, &A, one, &b, (long long)(b / 4));
    launch(&R1, 1, &B, one, &b, (long long)(b / 4));
    launch(&R1, 1, &A, one, &b, (long long)(b / 4));
    cr_assert_eq(count(EV_TO_HOST, A), 1);
    cr_assert_eq(count(EV_TO_HOST, B), 1);
    cr_assert_eq(count(EV_TO_GPU, A), 2);
    cr_assert_leq(on_peak, 10 * MiB);
}

/* Without facts (a file translated without --managed) or without a trip
 * count, objects are taken as dense and ranked first. */
Test(placement, unknown_facts_are_dense)
{
    env_budget(NULL, "otm");
    size_t b[3] = {4 * MiB, 4 * MiB, 4 * MiB};
    float *p[3] = {MACC_malloc(b[0]), MACC_malloc(b[1]), MACC_malloc(b[2])};
    launch(&R3, 3, p, names3, b, -1);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, p[2]), MACCRT_PL_GPU_PREFETCH, "no trip: density 1");
    float *q = MACC_malloc(4 * MiB);
    size_t qb = 4 * MiB;
    static const char *const one[] = {"q"};
    launch(&Rnofacts, 1, &q, one, &qb, 10);
    cr_assert_eq(maccrt_placement_where(d, q), MACCRT_PL_GPU_PREFETCH);
}

/* A zero-length map (a pointer used without a section under --managed)
 * names its whole allocation; freeing the allocation drops its charge. */
Test(placement, attach_maps_and_free)
{
    env_budget("10M", "otm");
    size_t b = 8 * MiB;
    float *x = MACC_malloc(b);
    MACC_Map m = {"x", x, x, 0, MACC_MAP_ATTACH};
    MACC_push_tripcount((long long)(b / 4));
    MACC_target(&R1, NULL, 0, 1, &m, 0, NULL, 0, MACC_DEVICE_DEFAULT, 1);
    maccrt_device *d = gpu();
    cr_assert_eq(maccrt_placement_where(d, x), MACCRT_PL_GPU_PREFETCH);
    maccrt_placement_info s;
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.resident, b);
    MACC_free(x);
    maccrt_placement_stats(d, &s);
    cr_assert_eq(s.resident, 0);
}

/* A directive that moves an object back to the host (update from) uncharges
 * it; the next launch prefetches it again. Task maps do not prefetch on
 * their own while placement decides. */
Test(placement, directives_and_tasks_go_through_placement)
{
    env_budget(NULL, "otm");
    size_t b = 4 * MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R1, 1, &x, one, &b, (long long)(b / 4));
    cr_assert_eq(count(EV_TO_GPU, x), 1, "once, from placement");
    MACC_Map upd = {"x", x, x, b, MACC_MAP_FROM};
    static const MACC_SrcLoc loc = {"t.c", 1, 1, "t"};
    MACC_data_update(&loc, 1, &upd, 0, 0, NULL, 0);
    cr_assert_eq(count(EV_TO_HOST, x), 1);
    maccrt_placement_info s;
    maccrt_placement_stats(gpu(), &s);
    cr_assert_eq(s.resident, 0);
    launch(&R1, 1, &x, one, &b, (long long)(b / 4));
    cr_assert_eq(count(EV_TO_GPU, x), 2);
}

Test(placement, off_leaves_it_to_managed_c)
{
    env_budget(NULL, "off");
    size_t b = 4 * MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R1, 1, &x, one, &b, (long long)(b / 4));
    cr_assert_not(maccrt_placement_active(gpu()));
    cr_assert_eq(maccrt_placement_where(gpu(), x), MACCRT_PL_NONE);
    cr_assert_eq(count(EV_TO_GPU, x), 1, "the task map's own prefetch");
}

Test(placement, invalid_policy_is_an_error, .exit_code = 1)
{
    env_budget(NULL, "sometimes");
    size_t b = MiB;
    float *x = MACC_malloc(b);
    static const char *const one[] = {"x"};
    launch(&R1, 1, &x, one, &b, 1);
}

/* A budget above the cap is not honoured. */
Test(placement, budget_never_above_the_cap)
{
    env_budget("100G", "otm");
    float *x = MACC_malloc(MiB);
    (void)x;
    maccrt_placement_info s;
    maccrt_placement_stats(gpu(), &s);
    cr_assert_eq(s.budget, 240 * MiB);
}

/* ---- several GPUs -------------------------------------------------------------------------------- */

static void launch_on(const MACC_Region *r, float *x, size_t bytes, int device)
{
    MACC_Map m = {"x", x, x, bytes, MACC_MAP_TOFROM};
    MACC_push_tripcount((long long)(bytes / 4)); /* every element: dense */
    MACC_target(r, NULL, 0, 1, &m, 0, NULL, 0, device, 1);
}

/* With two GPUs a task's section is placed, not its whole allocation, and
 * pages are in one place: a section that a task on the other GPU took is
 * prefetched again when a task on the first uses it next (before, the first
 * GPU's record still said "prefetched" and its kernel faulted the pages
 * back), its charge moves with it, and the records say which GPU holds it. */
Test(placement, two_gpus_sections_move_with_their_tasks)
{
    two_gpus("otm");
    size_t half = 4 * MiB;
    float *x = MACC_malloc(2 * half);
    cr_assert_eq(macc_num_devices(), 3);
    maccrt_device *g0 = maccrt_rt.devices[0], *g1 = maccrt_rt.devices[1];
    uintptr_t a = (uintptr_t)x, b = a + half;
    maccrt_mask on;

    launch_on(&R1, x, half, 0);
    cr_assert_eq(to_gpu_bytes(0, x), half, "the section, not the allocation: %zu", to_gpu_bytes(0, x));
    cr_assert_eq(maccrt_placement_holders(a, b, 0, &on), 0);
    cr_assert_eq(on, MACCRT_BIT(0));
    launch_on(&R1, x + half / 4, half, 1); /* the other half on GPU 1 */
    cr_assert_eq(to_gpu_bytes(1, x + half / 4), half);
    cr_assert_eq(maccrt_placement_holders(a, b, 0, &on), 0);
    cr_assert_eq(on, MACCRT_BIT(0), "the first half stays on GPU 0");

    launch_on(&R1, x, half, 1); /* the first half taken by GPU 1 */
    cr_assert_eq(to_gpu_bytes(1, x), half);
    maccrt_placement_holders(a, b, 0, &on);
    cr_assert_eq(on, MACCRT_BIT(1));
    maccrt_placement_info s0, s1;
    maccrt_placement_stats(g0, &s0);
    maccrt_placement_stats(g1, &s1);
    cr_assert_eq(s0.resident, 0, "its charge left GPU 0: %zu", s0.resident);
    cr_assert_eq(s1.resident, 2 * half);

    launch_on(&R1, x, half, 0); /* and back: prefetched again */
    cr_assert_eq(to_gpu_bytes(0, x), 2 * half, "prefetched again on GPU 0: %zu", to_gpu_bytes(0, x));
    maccrt_placement_holders(a, b, 0, &on);
    cr_assert_eq(on, MACCRT_BIT(0));
    maccrt_placement_stats(g0, &s0);
    maccrt_placement_stats(g1, &s1);
    cr_assert_eq(s0.resident + s1.resident, 2 * half, "each byte charged once: %zu + %zu", s0.resident, s1.resident);
    cr_assert_leq(s0.resident, s0.budget);
    cr_assert_leq(s1.resident, s1.budget);
    launch_on(&R1, x, half, 0);
    cr_assert_eq(to_gpu_bytes(0, x), 2 * half, "resident: not prefetched again");
}

/* The scheduler sees where managed pages are: tasks of device(any) that map
 * a section GPU 1 holds run on GPU 1, and tasks of a section GPU 0 holds on
 * GPU 0, both GPUs free (before, every GPU cost the same move from the
 * host and the tie went to GPU 0). Up to three attempts, fresh sections
 * and a fresh region each, until one has every task on its pages' GPU: the
 * choice weighs the learned run times too, and one run slowed by a loaded
 * machine (make check's other jobs) makes a GPU look slower by more than
 * the 4 MiB move (about 1 in 80 runs beside two busy loops on the 2-core
 * machine). */
static const MACC_Region Rpages[3] = {{{"a.c", 21, 1, "f"}, "macc_k_f_L21", 1, vers, 1, facts1},
                                      {{"a.c", 22, 1, "f"}, "macc_k_f_L22", 1, vers, 1, facts1},
                                      {{"a.c", 23, 1, "f"}, "macc_k_f_L23", 1, vers, 1, facts1}};
Test(placement, two_gpus_tasks_follow_the_pages)
{
    two_gpus("otm");
    size_t half = 4 * MiB;
    cr_assert_eq(macc_num_devices(), 3);
    int ok = 0, bad_round = -1;
    for (int attempt = 0; attempt < 3 && !ok; attempt++) {
        /* a region of its own: a slow run's learned time (a moving
         * average) would outlast the attempt */
        const MACC_Region *r = &Rpages[attempt];
        float *x = MACC_malloc(2 * half), *y = x + half / 4;
        launch_on(r, y, half, 0); /* measured on both GPUs */
        launch_on(r, x, half, 1);
        ok = 1;
        for (int i = 0; i < 4 && ok; i++) {
            long t0 = macc_device_tasks(0), t1 = macc_device_tasks(1);
            launch_on(r, x, half, MACC_DEVICE_ANY);
            ok = macc_device_tasks(1) == t1 + 1; /* on GPU 1, which holds x's pages */
            launch_on(r, y, half, MACC_DEVICE_ANY);
            ok = ok && macc_device_tasks(0) == t0 + 1; /* on GPU 0, which holds y's pages */
            bad_round = ok ? -1 : i;
        }
        ok = ok && to_gpu_bytes(0, x) + to_gpu_bytes(1, y) == 0; /* nothing moved between the GPUs */
    }
    cr_assert(ok, "three attempts: a task left its pages' GPU (last attempt's round %d), or bytes moved between "
                  "the GPUs", bad_round);
}

/* Without placement (MACC_PLACEMENT=off: managed.c's prefetches of task
 * maps) the same: a GPU's record of data another GPU prefetched goes, and
 * its next task prefetches it again instead of faulting it back. */
Test(placement, two_gpus_off_prefetches_again)
{
    two_gpus("off");
    size_t bytes = 4 * MiB;
    float *x = MACC_malloc(bytes);
    cr_assert_eq(macc_num_devices(), 3);
    launch_on(&R1, x, bytes, 0);
    launch_on(&R1, x, bytes, 0);
    cr_assert_eq(to_gpu_bytes(0, x), bytes, "once while it stays");
    launch_on(&R1, x, bytes, 1);
    cr_assert_eq(to_gpu_bytes(1, x), bytes);
    maccrt_mask on;
    cr_assert_eq(maccrt_managed_holders((uintptr_t)x, (uintptr_t)x + bytes, 0, &on), 0);
    cr_assert_eq(on, MACCRT_BIT(1));
    launch_on(&R1, x, bytes, 0);
    cr_assert_eq(to_gpu_bytes(0, x), 2 * bytes, "GPU 1 took it: prefetched again");
}

/* The first managed allocation measures every GPU's migration in a thread
 * of its own, before any launch (a first region on each GPU then does not
 * stop for it; with two GPUs the first to measure fell behind and the other
 * kept the pages and the tasks). A launch finds it done: measured once. */
Test(placement, allocation_measures_every_gpu_ahead)
{
    two_gpus("otm");
    float *x = MACC_malloc(4 * MiB);
    for (int i = 0; i < 1000 && __atomic_load_n(&calib_calls, __ATOMIC_SEQ_CST) < 2; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    cr_assert_eq(__atomic_load_n(&calib_calls, __ATOMIC_SEQ_CST), 2, "both GPUs measured without a launch");
    launch_on(&R1, x, 4 * MiB, 0);
    launch_on(&R1, x, 4 * MiB, 1);
    cr_assert_eq(__atomic_load_n(&calib_calls, __ATOMIC_SEQ_CST), 2, "and not again at the launches");
}

/* gator's prefetch at allocation: asked for, a block past the pool's
 * classes goes to the GPU when it is allocated (one prefetch of the whole
 * block); not asked for (the default), an allocation prefetches nothing. */
static int prefetches_of(uintptr_t a, size_t bytes)
{
    int n = 0;
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nev; i++)
        n += evlog[i].kind == EV_TO_GPU && evlog[i].p == a && evlog[i].bytes == bytes;
    pthread_mutex_unlock(&log_lock);
    return n;
}

Test(placement, prefetch_at_allocation_when_asked)
{
    env_budget(NULL, "otm");
    setenv("MACC_MANAGED_PREFETCH_ALLOC", "1", 1);
    float *x = MACC_malloc(8 * MiB);
    cr_assert_not_null(x);
    cr_assert_eq(prefetches_of((uintptr_t)x, 8 * MiB), 1, "the new block prefetched to the GPU once");
    MACC_free(x);
}

Test(placement, no_prefetch_at_allocation_by_default)
{
    env_budget(NULL, "otm");
    unsetenv("MACC_MANAGED_PREFETCH_ALLOC");
    float *x = MACC_malloc(8 * MiB);
    cr_assert_not_null(x);
    cr_assert_eq(prefetches_of((uintptr_t)x, 8 * MiB), 0, "first touch decides");
    MACC_free(x);
}

/* A budget per GPU: the second GPU, with 128 MiB free, holds at most 112
 * MiB (the margin 16 MiB) whatever the first one's budget (240 MiB): its
 * least recently used object goes back to the host to make room. */
Test(placement, two_gpus_each_within_its_own_budget)
{
    fg_free[1] = 128 * MiB;
    two_gpus("otm");
    size_t sz = 48 * MiB;
    float *o[3] = {MACC_malloc(sz), MACC_malloc(sz), MACC_malloc(sz)};
    cr_assert_eq(macc_num_devices(), 3);
    maccrt_placement_info s0, s1;
    for (int i = 0; i < 3; i++) {
        launch_on(&R1, o[i], sz, 1);
        maccrt_placement_stats(maccrt_rt.devices[1], &s1);
        cr_assert_leq(s1.resident, 112 * MiB, "object %d: %zu resident", i, s1.resident);
    }
    cr_assert_eq(s1.budget, 112 * MiB, "%zu", s1.budget);
    cr_assert_eq(s1.resident, 2 * sz);
    cr_assert_eq(count(EV_TO_HOST, o[0]), 1, "the least recently used went back");
    for (int i = 0; i < 3; i++)
        launch_on(&R1, o[i], sz, 0);
    maccrt_placement_stats(maccrt_rt.devices[0], &s0);
    maccrt_placement_stats(maccrt_rt.devices[1], &s1);
    cr_assert_eq(s0.budget, 240 * MiB);
    cr_assert_eq(s0.resident, 3 * sz, "all three fit on the first GPU");
    cr_assert_eq(s1.resident, 0, "and left the second: %zu", s1.resident);
}

/* Neighbouring sections that share a page (row blocks of any size), one on
 * each GPU, step after step: each GPU keeps its own whole pages and
 * prefetches them once (the shared page comes by faults); before, the
 * shared page made each record lose to the other GPU at every step. */
Test(placement, two_gpus_neighbours_sharing_a_page)
{
    two_gpus("otm");
    size_t bytes = 8 * MiB, cut = 4 * MiB + 1000; /* not on a page boundary */
    char *x = MACC_malloc(bytes);
    cr_assert_eq(macc_num_devices(), 3);
    for (int step = 0; step < 3; step++) {
        launch_on(&R1, (float *)x, cut, 0);
        launch_on(&R1, (float *)(x + cut), bytes - cut, 1);
    }
    cr_assert_eq(count(EV_TO_GPU, NULL), 2, "each section prefetched once: %d", count(EV_TO_GPU, NULL));
    maccrt_mask on;
    maccrt_placement_holders((uintptr_t)x, (uintptr_t)x + cut, 0, &on);
    cr_assert_eq(on, MACCRT_BIT(0));
    maccrt_placement_holders((uintptr_t)x + cut, (uintptr_t)x + bytes, 0, &on);
    cr_assert_eq(on, MACCRT_BIT(1));
}
