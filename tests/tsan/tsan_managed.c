/* tsan_managed.c: managed memory on two GPUs under ThreadSanitizer (make
 * check-tsan). Two fake GPUs in the CUDA plugin's slot with managed memory
 * (host memory: every device reads it as it is), prefetches, placement
 * advice and a migration measurement that take a little time, so that the
 * placement paths run concurrently: the measurement's thread started by the
 * first allocation, launches on both GPUs' helpers placing sections and
 * taking them from the other GPU's records, the scheduler's residency term
 * asking which GPU holds a section (under the runtime's lock), and data
 * directives sending sections back to the host between rounds. STREAM-like
 * chains of tasks on blocks of three arrays, device(any) and explicit
 * devices in turn; exits 0 when the result matches a sequential run; a TSan
 * report makes the process exit 66. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "../fake_gpu.h"
#include "macc_rt.h"

static void nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

static int fg_discover(void)
{
    return 2;
}

static int fg_init(maccrt_device *d)
{
    d->pdata = fake_gpu_start(4);
    d->cc = 80;
    d->concurrency = 4;
    d->mem_bytes = (size_t)1 << 30;
    return 0;
}

static int fg_mem_info(maccrt_device *d, size_t *free_b, size_t *total_b)
{
    *free_b = d->index ? (size_t)192 << 20 : (size_t)256 << 20;
    *total_b = (size_t)1 << 30;
    return 0;
}

static atomic_long prefetches, advice;

static void fg_prefetch(maccrt_device *d, const void *p, size_t bytes, int to_host)
{
    (void)d, (void)p, (void)bytes, (void)to_host;
    atomic_fetch_add(&prefetches, 1);
    nap(20000);
}

static void fg_advise_place(maccrt_device *d, const void *p, size_t bytes, int host)
{
    (void)d, (void)p, (void)bytes, (void)host;
    atomic_fetch_add(&advice, 1);
}

static void fg_advise_read_mostly(maccrt_device *d, const void *p, size_t bytes, int set)
{
    (void)d, (void)p, (void)bytes, (void)set;
    atomic_fetch_add(&advice, 1);
}

static atomic_int calibrations;

static int fg_calibrate(maccrt_device *d, size_t bytes, double *fault_s, double *prefetch_s)
{
    (void)d;
    atomic_fetch_add(&calibrations, 1);
    nap(2000000); /* 2 ms: launches come meanwhile */
    *fault_s = (double)bytes / 12e9;
    *prefetch_s = (double)bytes / 40e9;
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
    .run = fake_gpu_run,
    .managed_alloc = fake_gpu_managed_alloc,
    .managed_free = fake_gpu_managed_free,
    .mem_info = fg_mem_info,
    .prefetch = fg_prefetch,
    .advise_read_mostly = fg_advise_read_mostly,
    .advise_place = fg_advise_place,
    .calibrate_migration = fg_calibrate,
};

typedef struct {
    int n, op;
    double s;
} op_args;

/* c = a, b = s c, c = a + b, a = b + s c on one block (ptrs: a, b, c) */
static int op_body(void *args, MACC_TaskEnv *env)
{
    op_args *o = args;
    double *a = env->ptrs[0], *b = env->ptrs[1], *c = env->ptrs[2];
    for (int i = 0; i < o->n; i++)
        switch (o->op) {
        case 0: c[i] = a[i]; break;
        case 1: b[i] = o->s * c[i]; break;
        case 2: c[i] = a[i] + b[i]; break;
        default: a[i] = fmod(b[i] + o->s * c[i], 1000.0); break;
        }
    return 0;
}

static const MACC_Access facts[] = {{"a", 0, 8, 1.0, 1}, {"b", 1, 8, 1.0, 1}, {"c", 2, 8, 1.0, 1}};
static const MACC_Version op_v[] = {{MACC_DEV_NVIDIA, 0, MACC_RES_DEFAULT, 0, op_body}};
static const MACC_Region op_r = {{"tsan_managed.c", 1, 1, "main"}, "op", 1, op_v, 3, facts};

static void op(double *a, double *b, double *c, int lo, int n, int which, int device)
{
    op_args o = {n, which, 3.0};
    size_t bytes = (size_t)n * sizeof(double);
    int rd[4][3] = {{1, 0, 0}, {0, 0, 1}, {1, 1, 0}, {0, 1, 1}}; /* what each op reads */
    int wr[4] = {2, 1, 2, 0};
    double *arr[3] = {a + lo, b + lo, c + lo};
    MACC_Map m[3];
    MACC_Dep d[3];
    for (int k = 0; k < 3; k++) {
        int kind = (rd[which][k] ? MACC_MAP_TO : 0) | (wr[which] == k ? MACC_MAP_FROM : 0);
        m[k] = (MACC_Map){k == 0 ? "a" : k == 1 ? "b" : "c", arr[k], arr[k], bytes, kind ? kind : MACC_MAP_ALLOC};
        d[k] = (MACC_Dep){arr[k], bytes, wr[which] == k ? MACC_DEP_INOUT : MACC_DEP_IN};
    }
    MACC_push_tripcount(n);
    MACC_target(&op_r, &o, sizeof o, 3, m, 3, d, MACC_NOWAIT, device, 1);
}

int main(void)
{
    setenv("MACC_DEVICES", "nvidia", 1);
    setenv("MACC_POOL", "0", 1);
    setenv("MACC_MANAGED_MARGIN", "16M", 1);
    setenv("MACC_PLACEMENT", "otm", 1);
    enum { N = 1 << 16, BS = 1 << 12, ROUNDS = 12 };
    double *a = MACC_malloc(N * sizeof(double)), *b = MACC_malloc(N * sizeof(double));
    double *c = MACC_malloc(N * sizeof(double));
    double *ea = malloc(N * sizeof(double)), *eb = malloc(N * sizeof(double)), *ec = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        a[i] = ea[i] = i % 13;
        b[i] = eb[i] = 0;
        c[i] = ec[i] = 0;
    }
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < N / BS; k++)
            for (int w = 0; w < 4; w++) {
                int dev = r % 3 == 2 ? (k + w) % 2 : MACC_DEVICE_ANY; /* explicit GPUs in turn */
                op(a, b, c, k * BS, BS, w, dev);
                for (int i = k * BS; i < (k + 1) * BS; i++)
                    switch (w) {
                    case 0: ec[i] = ea[i]; break;
                    case 1: eb[i] = 3.0 * ec[i]; break;
                    case 2: ec[i] = ea[i] + eb[i]; break;
                    default: ea[i] = fmod(eb[i] + 3.0 * ec[i], 1000.0); break;
                    }
            }
        MACC_taskwait(NULL);
        /* the data back to the host (update from): sections leave the GPUs' records */
        MACC_Map back[3] = {{"a", a, a, N * sizeof(double), MACC_MAP_FROM},
                            {"b", b, b, N * sizeof(double), MACC_MAP_FROM},
                            {"c", c, c, N * sizeof(double), MACC_MAP_FROM}};
        if (r % 4 == 3)
            MACC_data_update(NULL, 3, back, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    }
    int bad = 0;
    for (int i = 0; i < N && !bad; i++)
        if (a[i] != ea[i] || b[i] != eb[i] || c[i] != ec[i]) {
            fprintf(stderr, "tsan_managed: [%d] a %g/%g b %g/%g c %g/%g\n", i, a[i], ea[i], b[i], eb[i], c[i], ec[i]);
            bad = 1;
        }
    printf("tsan_managed: %d rounds of %d blocks on 2 fake GPUs (%ld and %ld tasks), %ld prefetches, %d "
           "measurements: %s\n",
           ROUNDS, N / BS, macc_device_tasks(0), macc_device_tasks(1), atomic_load(&prefetches),
           atomic_load(&calibrations), bad ? "FAIL" : "PASS");
    MACC_free(a);
    MACC_free(b);
    MACC_free(c);
    free(ea);
    free(eb);
    free(ec);
    return bad;
}
