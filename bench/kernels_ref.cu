/* kernels_ref.cu: hand-written CUDA kernels that bench/kernels.c compares
 * macc's generated kernels against.
 *
 *  - N-body: the force loop of samples/nbody.c, one thread per body, the
 *    classic shared-memory tiling (each block stages a tile of blockDim
 *    positions in shared memory, every thread of the block runs over the tile
 *    with an unrolled inner loop). The math is exactly the sample's
 *    (`1.0f / sqrtf(distSqr)`, no rsqrtf, no fast math), so both sides compute
 *    the same thing. Block size (128/256/512) and unroll factor are tuned at
 *    run time; the chosen variant is reported by ref_last_config().
 *  - STREAM triad a[i] = b[i] + s*c[i] on doubles: four variants (one element
 *    per thread or grid-stride, double or double2 loads), the fastest picked at
 *    run time.
 *  - Device-to-device cudaMemcpy, as a bandwidth reference.
 *
 * Every entry point allocates its device memory, copies the inputs in, warms
 * up, times `reps` back-to-back launches with CUDA events (kernel time only,
 * data resident on the device), copies a result out for validation, frees, and
 * returns seconds per launch. REF_VERBOSE=1 prints the time of every variant
 * tried (stderr). Every CUDA call is checked: on error the message
 * is printed and the process exits with status 1. No entry point allocates
 * more than cudaMemGetInfo's free memory minus REF_MARGIN.
 *
 * All entry points use the current CUDA device (device 0 unless the caller
 * changed it); run with MACC_DEVICES=nvidia (or nvidia:0) so that macc's
 * runtime uses the same GPU.
 *
 * Build: nvcc -O3 -arch=sm_90 -c kernels_ref.cu (macc does it when the file is
 * given on its command line).
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONST 1e-2f                    /* softening, as in samples/nbody.c */
#define REF_MARGIN (256u << 20)        /* bytes left free on the device */

/* ---- errors, memory, timing ------------------------------------------------------------- */

#define CK(call) ref__check((call), #call, __FILE__, __LINE__)

static void ref__check(cudaError_t e, const char *what, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error %s (%s) in %s\n", file, line, cudaGetErrorName(e),
                cudaGetErrorString(e), what);
        exit(1);
    }
}

static char ref__config[256]; /* what the last ref_* call chose */

/* Exits unless `bytes` more device memory can be had, keeping REF_MARGIN free. */
static void ref__need(size_t bytes, const char *who)
{
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < REF_MARGIN || bytes > free_b - REF_MARGIN) {
        fprintf(stderr,
                "%s: needs %.1f MiB of device memory, but only %.1f MiB are free "
                "(%.1f MiB kept as a margin)\n",
                who, bytes / 1048576.0, free_b / 1048576.0, REF_MARGIN / 1048576.0);
        exit(1);
    }
}

static double ref__wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int ref__sm_count(void)
{
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
}

/* A launcher: runs `count` launches of one kernel variant back to back. */
typedef void (*ref__launcher)(const void *args, int count);

/* Seconds per launch of `count` back-to-back launches, timed with events. */
static double ref__time(ref__launcher launch, const void *args, int count)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, 0));
    launch(args, count);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return 1e-3 * ms / count;
}

/* ---- N-body ------------------------------------------------------------------------------- */

/* One thread per body; the positions of all bodies pass through shared
 * memory, BS at a time, packed as float4 (one 128-bit broadcast load per
 * interaction instead of three). The summation order over j is the sample's
 * (0, 1, ..., n-1), and so is every expression. */
template <int BS, int UNROLL>
__global__ void __launch_bounds__(BS)
ref_nbody_kernel(int n, float dt, const float *__restrict__ x, const float *__restrict__ y,
                 const float *__restrict__ z, float *__restrict__ vx, float *__restrict__ vy,
                 float *__restrict__ vz)
{
    __shared__ float4 sp[BS];
    const int i = blockIdx.x * BS + threadIdx.x;
    const bool active = i < n;
    const float xi = active ? x[i] : 0.0f;
    const float yi = active ? y[i] : 0.0f;
    const float zi = active ? z[i] : 0.0f;
    float Fx = 0.0f, Fy = 0.0f, Fz = 0.0f;

    const int full = n - n % BS; /* bodies in whole tiles */
    for (int tile = 0; tile < full; tile += BS) {
        const int j = tile + threadIdx.x;
        sp[threadIdx.x] = make_float4(x[j], y[j], z[j], 0.0f);
        __syncthreads();
#pragma unroll UNROLL
        for (int k = 0; k < BS; k++) {
            const float4 p = sp[k];
            float dx = p.x - xi;
            float dy = p.y - yi;
            float dz = p.z - zi;
            float distSqr = dx * dx + dy * dy + dz * dz + CONST;
            float invDist = 1.0f / sqrtf(distSqr);
            float invDist3 = invDist * invDist * invDist;
            Fx += dx * invDist3;
            Fy += dy * invDist3;
            Fz += dz * invDist3;
        }
        __syncthreads();
    }
    if (full < n) { /* the last, partial tile */
        const int j = full + threadIdx.x;
        if (j < n)
            sp[threadIdx.x] = make_float4(x[j], y[j], z[j], 0.0f);
        __syncthreads();
        const int count = n - full;
        for (int k = 0; k < count; k++) {
            const float4 p = sp[k];
            float dx = p.x - xi;
            float dy = p.y - yi;
            float dz = p.z - zi;
            float distSqr = dx * dx + dy * dy + dz * dz + CONST;
            float invDist = 1.0f / sqrtf(distSqr);
            float invDist3 = invDist * invDist * invDist;
            Fx += dx * invDist3;
            Fy += dy * invDist3;
            Fz += dz * invDist3;
        }
    }
    if (active) {
        vx[i] += dt * Fx;
        vy[i] += dt * Fy;
        vz[i] += dt * Fz;
    }
}

struct ref__nbody_args {
    int n;
    float dt;
    const float *x, *y, *z;
    float *vx, *vy, *vz;
};

template <int BS, int UNROLL>
static void ref__nbody_launch(const void *args, int count)
{
    const ref__nbody_args *a = (const ref__nbody_args *)args;
    const unsigned blocks = (unsigned)((a->n + BS - 1) / BS);
    for (int r = 0; r < count; r++)
        ref_nbody_kernel<BS, UNROLL>
            <<<blocks, BS>>>(a->n, a->dt, a->x, a->y, a->z, a->vx, a->vy, a->vz);
    CK(cudaGetLastError());
}

struct ref__variant {
    const char *name;
    ref__launcher launch;
};

/* Measured on an H100 (n = 65536): block 1024 is about 45% slower, a fully
 * unrolled tile about 20% slower, unroll 4 about 1% slower than these. */
static const ref__variant ref__nbody_variants[] = {
    {"block 128, unroll 16", ref__nbody_launch<128, 16>},
    {"block 128, unroll 32", ref__nbody_launch<128, 32>},
    {"block 128, unroll 64", ref__nbody_launch<128, 64>},
    {"block 256, unroll 16", ref__nbody_launch<256, 16>},
    {"block 256, unroll 32", ref__nbody_launch<256, 32>},
    {"block 256, unroll 64", ref__nbody_launch<256, 64>},
    {"block 512, unroll 16", ref__nbody_launch<512, 16>},
    {"block 512, unroll 32", ref__nbody_launch<512, 32>},
    {"block 512, unroll 64", ref__nbody_launch<512, 64>},
};
#define REF_NVARIANTS(v) ((int)(sizeof(v) / sizeof((v)[0])))

/* Picks the fastest variant: one warm-up launch, then the best of `tries`
 * timings of `per_try` launches each. */
static int ref__tune(const ref__variant *v, int nv, const void *args, int tries, int per_try)
{
    const char *verbose = getenv("REF_VERBOSE");
    int best = 0;
    double best_s = 0.0;
    for (int k = 0; k < nv; k++) {
        v[k].launch(args, 1);
        double s = 0.0;
        for (int t = 0; t < tries; t++) {
            double st = ref__time(v[k].launch, args, per_try);
            if (t == 0 || st < s)
                s = st;
        }
        if (verbose && *verbose && *verbose != '0')
            fprintf(stderr, "ref: %-48s %10.1f us per launch\n", v[k].name, 1e6 * s);
        if (k == 0 || s < best_s) {
            best = k;
            best_s = s;
        }
    }
    return best;
}

extern "C" double ref_nbody(int n, int reps, float dt, const float *hx, const float *hy,
                            const float *hz, const float *hvx, const float *hvy,
                            const float *hvz, float *out_vx, float *out_vy, float *out_vz,
                            double *sync_sec)
{
    if (n < 1 || reps < 1) {
        fprintf(stderr, "ref_nbody: bad arguments n=%d reps=%d\n", n, reps);
        exit(1);
    }
    const size_t bytes = (size_t)n * sizeof(float);
    ref__need(6 * bytes, "ref_nbody");
    float *d[6];
    for (int k = 0; k < 6; k++)
        CK(cudaMalloc((void **)&d[k], bytes));
    const float *src[6] = {hx, hy, hz, hvx, hvy, hvz};
    for (int k = 0; k < 6; k++)
        CK(cudaMemcpy(d[k], src[k], bytes, cudaMemcpyHostToDevice));
    ref__nbody_args args = {n, dt, d[0], d[1], d[2], d[3], d[4], d[5]};

    /* Tune (the velocities drift meanwhile: timing does not care). */
    const int nv = REF_NVARIANTS(ref__nbody_variants);
    const int best = ref__tune(ref__nbody_variants, nv, &args, 2, 1);
    const ref__variant *v = &ref__nbody_variants[best];
    snprintf(ref__config, sizeof ref__config, "%s (best of %d variants)", v->name, nv);

    v->launch(&args, 1); /* warm-up */
    const double sec = ref__time(v->launch, &args, reps);

    /* The same kernel with a host synchronisation after every launch, timed
     * on the host, as for the triad. */
    if (sync_sec) {
        CK(cudaDeviceSynchronize());
        const double t0 = ref__wall();
        for (int r = 0; r < reps; r++) {
            v->launch(&args, 1);
            CK(cudaStreamSynchronize(0));
        }
        *sync_sec = (ref__wall() - t0) / reps;
    }

    /* Validation: exactly one launch from the given velocities. */
    for (int k = 3; k < 6; k++)
        CK(cudaMemcpy(d[k], src[k], bytes, cudaMemcpyHostToDevice));
    v->launch(&args, 1);
    CK(cudaDeviceSynchronize());
    float *dst[3] = {out_vx, out_vy, out_vz};
    for (int k = 0; k < 3; k++)
        CK(cudaMemcpy(dst[k], d[3 + k], bytes, cudaMemcpyDeviceToHost));
    for (int k = 0; k < 6; k++)
        CK(cudaFree(d[k]));
    return sec;
}

/* ---- STREAM triad ------------------------------------------------------------------------- */

__global__ void ref_triad_flat(size_t n, double s, double *__restrict__ a,
                               const double *__restrict__ b, const double *__restrict__ c)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = b[i] + s * c[i];
}

__global__ void ref_triad_flat2(size_t n, double s, double *__restrict__ a,
                                const double *__restrict__ b, const double *__restrict__ c)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n2 = n / 2;
    if (i < n2) {
        const double2 bb = reinterpret_cast<const double2 *>(b)[i];
        const double2 cc = reinterpret_cast<const double2 *>(c)[i];
        reinterpret_cast<double2 *>(a)[i] = make_double2(bb.x + s * cc.x, bb.y + s * cc.y);
    } else if (i == n2 && (n & 1)) {
        a[n - 1] = b[n - 1] + s * c[n - 1];
    }
}

__global__ void ref_triad_gs(size_t n, double s, double *__restrict__ a,
                             const double *__restrict__ b, const double *__restrict__ c)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        a[i] = b[i] + s * c[i];
}

__global__ void ref_triad_gs2(size_t n, double s, double *__restrict__ a,
                              const double *__restrict__ b, const double *__restrict__ c)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n2 = n / 2;
    const double2 *b2 = reinterpret_cast<const double2 *>(b);
    const double2 *c2 = reinterpret_cast<const double2 *>(c);
    double2 *a2 = reinterpret_cast<double2 *>(a);
    for (size_t i = first; i < n2; i += stride) {
        const double2 bb = b2[i];
        const double2 cc = c2[i];
        a2[i] = make_double2(bb.x + s * cc.x, bb.y + s * cc.y);
    }
    if (first == 0 && (n & 1))
        a[n - 1] = b[n - 1] + s * c[n - 1];
}

struct ref__triad_args {
    size_t n;
    double s;
    double *a;
    const double *b, *c;
    unsigned gs_blocks, gs2_blocks; /* one full wave of resident blocks */
};

#define REF_TRIAD_BLOCK 256

static unsigned ref__blocks(size_t items, unsigned block)
{
    size_t g = (items + block - 1) / block;
    return (unsigned)(g ? g : 1);
}

static void ref__triad_flat(const void *args, int count)
{
    const ref__triad_args *t = (const ref__triad_args *)args;
    const unsigned g = ref__blocks(t->n, REF_TRIAD_BLOCK);
    for (int r = 0; r < count; r++)
        ref_triad_flat<<<g, REF_TRIAD_BLOCK>>>(t->n, t->s, t->a, t->b, t->c);
    CK(cudaGetLastError());
}

static void ref__triad_flat2(const void *args, int count)
{
    const ref__triad_args *t = (const ref__triad_args *)args;
    const unsigned g = ref__blocks(t->n / 2 + 1, REF_TRIAD_BLOCK);
    for (int r = 0; r < count; r++)
        ref_triad_flat2<<<g, REF_TRIAD_BLOCK>>>(t->n, t->s, t->a, t->b, t->c);
    CK(cudaGetLastError());
}

static void ref__triad_gs(const void *args, int count)
{
    const ref__triad_args *t = (const ref__triad_args *)args;
    for (int r = 0; r < count; r++)
        ref_triad_gs<<<t->gs_blocks, REF_TRIAD_BLOCK>>>(t->n, t->s, t->a, t->b, t->c);
    CK(cudaGetLastError());
}

static void ref__triad_gs2(const void *args, int count)
{
    const ref__triad_args *t = (const ref__triad_args *)args;
    for (int r = 0; r < count; r++)
        ref_triad_gs2<<<t->gs2_blocks, REF_TRIAD_BLOCK>>>(t->n, t->s, t->a, t->b, t->c);
    CK(cudaGetLastError());
}

static const ref__variant ref__triad_variants[] = {
    {"double, one element per thread, block 256", ref__triad_flat},
    {"double2, two elements per thread, block 256", ref__triad_flat2},
    {"double, grid-stride (one wave), block 256", ref__triad_gs},
    {"double2, grid-stride (one wave), block 256", ref__triad_gs2},
};

extern "C" double ref_triad(size_t n, int reps, double s, const double *hb, const double *hc,
                            double *out_a, double *sync_sec)
{
    if (n < 1 || reps < 1) {
        fprintf(stderr, "ref_triad: bad arguments n=%zu reps=%d\n", n, reps);
        exit(1);
    }
    const size_t bytes = n * sizeof(double);
    ref__need(3 * bytes, "ref_triad");
    double *a, *b, *c;
    CK(cudaMalloc((void **)&a, bytes));
    CK(cudaMalloc((void **)&b, bytes));
    CK(cudaMalloc((void **)&c, bytes));
    CK(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c, hc, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(a, 0, bytes));

    ref__triad_args args;
    args.n = n;
    args.s = s;
    args.a = a;
    args.b = b;
    args.c = c;
    int per_sm = 0, per_sm2 = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ref_triad_gs, REF_TRIAD_BLOCK, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm2, ref_triad_gs2, REF_TRIAD_BLOCK, 0));
    const int sms = ref__sm_count();
    args.gs_blocks = (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
    args.gs2_blocks = (unsigned)(sms * (per_sm2 > 0 ? per_sm2 : 1));

    const int nv = REF_NVARIANTS(ref__triad_variants);
    const int best = ref__tune(ref__triad_variants, nv, &args, 3, 5);
    const ref__variant *v = &ref__triad_variants[best];
    unsigned blocks = best == 2 ? args.gs_blocks : best == 3 ? args.gs2_blocks : 0;
    if (blocks)
        snprintf(ref__config, sizeof ref__config, "%s, %u blocks (best of %d variants)", v->name,
                 blocks, nv);
    else
        snprintf(ref__config, sizeof ref__config, "%s (best of %d variants)", v->name, nv);

    v->launch(&args, 1); /* warm-up */
    const double sec = ref__time(v->launch, &args, reps);

    /* The same kernel with a host synchronisation after every launch, timed
     * on the host: the floor for a synchronous launch of this kernel. */
    if (sync_sec) {
        CK(cudaDeviceSynchronize());
        const double t0 = ref__wall();
        for (int r = 0; r < reps; r++) {
            v->launch(&args, 1);
            CK(cudaStreamSynchronize(0));
        }
        *sync_sec = (ref__wall() - t0) / reps;
    }

    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out_a, a, bytes, cudaMemcpyDeviceToHost));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
    return sec;
}

/* ---- device-to-device copy ---------------------------------------------------------------- */

struct ref__copy_args {
    void *dst;
    const void *src;
    size_t bytes;
};

static void ref__copy(const void *args, int count)
{
    const ref__copy_args *a = (const ref__copy_args *)args;
    for (int r = 0; r < count; r++)
        CK(cudaMemcpyAsync(a->dst, a->src, a->bytes, cudaMemcpyDeviceToDevice, 0));
}

extern "C" double ref_d2d_copy(size_t bytes, int reps)
{
    if (bytes < 1 || reps < 1) {
        fprintf(stderr, "ref_d2d_copy: bad arguments bytes=%zu reps=%d\n", bytes, reps);
        exit(1);
    }
    ref__need(2 * bytes, "ref_d2d_copy");
    void *src, *dst;
    CK(cudaMalloc(&src, bytes));
    CK(cudaMalloc(&dst, bytes));
    CK(cudaMemset(src, 1, bytes));
    ref__copy_args args = {dst, src, bytes};
    ref__copy(&args, 2); /* warm-up */
    const double sec = ref__time(ref__copy, &args, reps);
    snprintf(ref__config, sizeof ref__config, "cudaMemcpyAsync device to device");
    CK(cudaFree(src));
    CK(cudaFree(dst));
    return sec;
}

/* ---- device queries ----------------------------------------------------------------------- */

extern "C" size_t ref_free_memory(void)
{
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    return free_b;
}

extern "C" const char *ref_gpu_name(void)
{
    static char name[512];
    int dev = 0;
    cudaDeviceProp p;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&p, dev));
    snprintf(name, sizeof name, "%s (device %d, sm_%d%d, %d SMs, %.1f GiB)", p.name, dev, p.major,
             p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
    return name;
}

extern "C" const char *ref_last_config(void)
{
    return ref__config;
}
