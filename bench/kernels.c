/* kernels.c: macc's generated CUDA kernels against hand-written ones, in one
 * process on one GPU.
 *
 *  - N-body: one `target teams distribute parallel for device(nvidia)` region
 *    over all n bodies, the force loop of samples/nbody.c, against the
 *    shared-memory tiled kernel of kernels_ref.cu. 20 flops per interaction.
 *  - STREAM triad a[j] = b[j] + s*c[j] on doubles, one region over all n
 *    elements, against the hand-written triad. 3 arrays * 8 bytes per element.
 *  - Device-to-device cudaMemcpy of one array, as a bandwidth reference
 *    (read + write: 2 * 8 bytes per element).
 *
 * The data are put on the GPU once (`target enter data`); the timed loop runs
 * `reps` synchronous regions (each returns when its kernel has finished), so
 * the generated side's time per launch includes the runtime's dispatch and the
 * wait for the kernel; the hand-written side is timed both with CUDA events
 * around `reps` back-to-back launches (kernel time only) and with a host
 * synchronisation after every launch: the ratios compare synchronous regions
 * with the latter, like for like. The N-body region names no block size
 * (macc picks the block and the tile); the hand-written kernel is the best of
 * nine block/unroll variants. See bench/README.md.
 *
 *   usage: kernels [nbodies [triad_n [nbody_reps [triad_reps]]]]
 *          (defaults: 65536 67108864 10 100)
 *
 * Build (bench/kernels.sh does it):
 *   build/bin/macc -O3 --cuda-arch=sm_90 bench/kernels.c bench/kernels_ref.cu \
 *       -o build/bench/kernels -lm
 * Run with MACC_DEVICES=nvidia.
 *
 * Prints the GPU, a table of generated and hand-written throughput and their
 * ratio, and `check: PASS` (exit 0) or `check: FAIL` (exit 1). FAIL means a
 * wrong result on either side, or a generated region that did not run on the
 * GPU. Exit 2: bad arguments or out of host memory.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the hand-written side (kernels_ref.cu) ---------------------------------------------- */

/* Seconds per launch of the tiled N-body kernel (reps launches, data resident);
 * *sync_sec (if not NULL) the time per launch with a host synchronisation
 * after each;
 * out_v* receive the velocities after exactly one launch from v*. */
double ref_nbody(int n, int reps, float dt, const float *x, const float *y, const float *z,
                 const float *vx, const float *vy, const float *vz, float *out_vx,
                 float *out_vy, float *out_vz, double *sync_sec);
/* Seconds per launch of the triad; out_a receives a = b + s*c; *sync_sec (if
 * not NULL) the time per launch with a host synchronisation after each. */
double ref_triad(size_t n, int reps, double s, const double *b, const double *c, double *out_a,
                 double *sync_sec);
/* Seconds per device-to-device cudaMemcpy of `bytes`. */
double ref_d2d_copy(size_t bytes, int reps);
size_t ref_free_memory(void);       /* cudaMemGetInfo's free bytes */
const char *ref_gpu_name(void);     /* name, compute capability, SMs, memory */
const char *ref_last_config(void);  /* the variant the last ref_* call chose */

/* ---- macc's runtime (as declared in macc_rt.h, which the translated file includes) ---- */

int macc_num_devices(void);
int macc_device_kind(int d); /* 0: host (MACC_DEV_HOST), 1: nvidia (MACC_DEV_NVIDIA) */
long macc_device_tasks(int d);
const char *macc_device_name(int d);

/* ---- helpers ---------------------------------------------------------------------------- */

#define CONST 1e-2f   /* softening, as in samples/nbody.c */
#define NCHECK 256    /* bodies checked */
#define WARMUP 2      /* untimed launches before the timed ones */
#define TARGET 0.90   /* the goal: generated / hand-written */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "kernels: out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* Deterministic pseudo-random numbers in [-1, 1) (samples/nbody.c's). */
static unsigned long long rng_state = 88172645463325252ULL;
static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* Region tasks run so far on GPUs and on the host. */
static void device_tasks(long *gpu, long *host)
{
    *gpu = *host = 0;
    for (int d = 0; d < macc_num_devices(); d++) {
        if (macc_device_kind(d) == 0)
            *host += macc_device_tasks(d);
        else
            *gpu += macc_device_tasks(d);
    }
}

/* ---- N-body ----------------------------------------------------------------------------- */

typedef struct Result {
    double gen_s, ref_s; /* seconds per launch */
    double sync_s;       /* hand-written, a host synchronisation after every launch */
    double gen_nowait_s; /* generated, `nowait` regions then one taskwait (triad only) */
    char ref_config[256];
    int ok;
} Result;

/* Serial double-precision velocity of body i after one step; *scale receives
 * a magnitude for relative errors (samples/nbody.c's reference). */
static void reference_velocity(int n, int i, float dt, const float *x, const float *y,
                               const float *z, const float v0[3], double out[3], double *scale)
{
    double Fx = 0, Fy = 0, Fz = 0, Fabs = 0;
    for (int j = 0; j < n; j++) {
        double dx = (double)x[j] - x[i];
        double dy = (double)y[j] - y[i];
        double dz = (double)z[j] - z[i];
        double distSqr = dx * dx + dy * dy + dz * dz + (double)CONST;
        double invDist = 1.0 / sqrt(distSqr);
        double invDist3 = invDist * invDist * invDist;
        Fx += dx * invDist3;
        Fy += dy * invDist3;
        Fz += dz * invDist3;
        Fabs += sqrt(dx * dx + dy * dy + dz * dz) * invDist3;
    }
    out[0] = v0[0] + (double)dt * Fx;
    out[1] = v0[1] + (double)dt * Fy;
    out[2] = v0[2] + (double)dt * Fz;
    *scale = fabs(v0[0]) + fabs(v0[1]) + fabs(v0[2]) + (double)dt * Fabs;
}

static void bench_nbody(int n, int reps, Result *res)
{
    const float dt = 0.001f;
    const size_t bytes = (size_t)n * sizeof(float);
    float *x = xmalloc(bytes), *y = xmalloc(bytes), *z = xmalloc(bytes);
    float *vx = xmalloc(bytes), *vy = xmalloc(bytes), *vz = xmalloc(bytes);
    float *v0x = xmalloc(bytes), *v0y = xmalloc(bytes), *v0z = xmalloc(bytes);
    float *rvx = xmalloc(bytes), *rvy = xmalloc(bytes), *rvz = xmalloc(bytes);
    for (int i = 0; i < n; i++) {
        x[i] = frand();
        y[i] = frand();
        z[i] = frand();
        v0x[i] = 0.1f * frand();
        v0y[i] = 0.1f * frand();
        v0z[i] = 0.1f * frand();
    }

    /* Generated kernel. Pass 0 times WARMUP + reps launches; pass 1 runs one
     * launch from the initial velocities, for validation. Each pass puts the
     * data on the GPU once. */
    long gpu0, host0, gpu1, host1;
    device_tasks(&gpu0, &host0);
    double t0 = 0.0, t1 = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        const int launches = pass == 0 ? WARMUP + reps : 1;
        memcpy(vx, v0x, bytes);
        memcpy(vy, v0y, bytes);
        memcpy(vz, v0z, bytes);
        #pragma omp target enter data map(to: x[0:n], y[0:n], z[0:n], vx[0:n], vy[0:n], vz[0:n])
        for (int r = 0; r < launches; r++) {
            if (pass == 0 && r == WARMUP)
                t0 = now();
            #pragma omp target teams distribute parallel for device(nvidia)
            for (int i = 0; i < n; i++) {
                float Fx = 0.0f; float Fy = 0.0f; float Fz = 0.0f;
                for (int j = 0; j < n; j++) {
                    float dx = x[j] - x[i];
                    float dy = y[j] - y[i];
                    float dz = z[j] - z[i];
                    float distSqr = dx*dx + dy*dy + dz*dz + CONST;
                    float invDist = 1.0f / sqrtf(distSqr);
                    float invDist3 = invDist * invDist * invDist;
                    Fx += dx * invDist3; Fy += dy * invDist3; Fz += dz * invDist3;
                }
                vx[i] += dt*Fx; vy[i] += dt*Fy; vz[i] += dt*Fz;
            }
        }
        if (pass == 0)
            t1 = now();
        #pragma omp target exit data map(from: vx[0:n], vy[0:n], vz[0:n]) map(release: x[0:n], y[0:n], z[0:n])
    }
    device_tasks(&gpu1, &host1);
    res->gen_s = (t1 - t0) / reps;

    /* Hand-written kernel. */
    res->ref_s = ref_nbody(n, reps, dt, x, y, z, v0x, v0y, v0z, rvx, rvy, rvz, &res->sync_s);
    snprintf(res->ref_config, sizeof res->ref_config, "%s", ref_last_config());

    /* Validation on a sample of bodies: both against a double-precision
     * reference, and against each other. */
    int ncheck = n < NCHECK ? n : NCHECK;
    int stride = n / ncheck;
    double err_gen = 0.0, err_ref = 0.0, err_diff = 0.0;
    for (int s = 0; s < ncheck; s++) {
        int i = s * stride + (s * 37) % stride;
        float v0[3] = {v0x[i], v0y[i], v0z[i]};
        double ref[3], scale;
        reference_velocity(n, i, dt, x, y, z, v0, ref, &scale);
        if (!(scale > 0))
            scale = 1.0;
        double eg = (fabs(vx[i] - ref[0]) + fabs(vy[i] - ref[1]) + fabs(vz[i] - ref[2])) / scale;
        double er = (fabs(rvx[i] - ref[0]) + fabs(rvy[i] - ref[1]) + fabs(rvz[i] - ref[2])) / scale;
        double ed = (fabs((double)vx[i] - rvx[i]) + fabs((double)vy[i] - rvy[i]) +
                     fabs((double)vz[i] - rvz[i])) / scale;
        if (!(eg <= err_gen)) /* also catches NaN */
            err_gen = eg;
        if (!(er <= err_ref))
            err_ref = er;
        if (!(ed <= err_diff))
            err_diff = ed;
    }
    long want = WARMUP + reps + 1;
    int on_gpu = gpu1 - gpu0 == want && host1 == host0;
    res->ok = err_gen < 1e-3 && err_ref < 1e-3 && err_diff < 1e-3 && on_gpu;
    printf("nbody: check over %d bodies: max relative error generated %.2e, hand-written %.2e, "
           "generated vs hand-written %.2e (tolerance 1e-3)\n", ncheck, err_gen, err_ref, err_diff);
    if (!on_gpu)
        printf("nbody: the generated regions did not all run on the GPU: %ld GPU tasks, %ld host "
               "tasks, expected %ld GPU tasks\n", gpu1 - gpu0, host1 - host0, want);

    free(x); free(y); free(z); free(vx); free(vy); free(vz);
    free(v0x); free(v0y); free(v0z); free(rvx); free(rvy); free(rvz);
}

/* ---- STREAM triad ----------------------------------------------------------------------- */

/* Values whose products and sums are exact in double, so that every side
 * (FMA or not) must match the host bit for bit. */
static double triad_b(long j) { return (double)(j % 1024); }
static double triad_c(long j) { return 0.5 * (double)(j % 997); }

static long count_triad_errors(long n, double s, const double *a)
{
    long bad = 0;
    for (long j = 0; j < n; j++)
        if (a[j] != triad_b(j) + s * triad_c(j))
            bad++;
    return bad;
}

static void bench_triad(long n, int reps, Result *res)
{
    const double s = 3.0;
    const size_t bytes = (size_t)n * sizeof(double);
    double *a = xmalloc(bytes), *b = xmalloc(bytes), *c = xmalloc(bytes);
    for (long j = 0; j < n; j++) {
        a[j] = -1.0;
        b[j] = triad_b(j);
        c[j] = triad_c(j);
    }

    long gpu0, host0, gpu1, host1;
    device_tasks(&gpu0, &host0);
    double t0 = 0.0;
    #pragma omp target enter data map(to: a[0:n], b[0:n], c[0:n])
    for (int r = 0; r < WARMUP + reps; r++) {
        if (r == WARMUP)
            t0 = now();
        #pragma omp target teams distribute parallel for device(nvidia)
        for (long j = 0; j < n; j++)
            a[j] = b[j] + s * c[j];
    }
    double t1 = now();
    /* the same regions deferred: the runtime's dispatch overlaps the kernels,
     * which the GPU's streams run back to back, as the hand-written launches */
    double t2 = now();
    for (int r = 0; r < reps; r++) {
        #pragma omp target teams distribute parallel for device(nvidia) nowait
        for (long j = 0; j < n; j++)
            a[j] = b[j] + s * c[j];
    }
    #pragma omp taskwait
    double t3 = now();
    res->gen_nowait_s = (t3 - t2) / reps;
    #pragma omp target exit data map(from: a[0:n]) map(release: b[0:n], c[0:n])
    device_tasks(&gpu1, &host1);
    res->gen_s = (t1 - t0) / reps;
    long bad_gen = count_triad_errors(n, s, a);

    for (long j = 0; j < n; j++)
        a[j] = -1.0;
    res->ref_s = ref_triad((size_t)n, reps, s, b, c, a, &res->sync_s);
    snprintf(res->ref_config, sizeof res->ref_config, "%s", ref_last_config());
    long bad_ref = count_triad_errors(n, s, a);

    long want = WARMUP + 2L * reps;
    int on_gpu = gpu1 - gpu0 == want && host1 == host0;
    res->ok = bad_gen == 0 && bad_ref == 0 && on_gpu;
    printf("triad: check over %ld elements: %ld wrong generated, %ld wrong hand-written\n", n,
           bad_gen, bad_ref);
    if (!on_gpu)
        printf("triad: the generated regions did not all run on the GPU: %ld GPU tasks, %ld host "
               "tasks, expected %ld GPU tasks\n", gpu1 - gpu0, host1 - host0, want);
    free(a); free(b); free(c);
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    long nb = argc > 1 ? atol(argv[1]) : 65536L;
    long nt = argc > 2 ? atol(argv[2]) : 67108864L;
    int nb_reps = argc > 3 ? atoi(argv[3]) : 10;
    int nt_reps = argc > 4 ? atoi(argv[4]) : 100;
    if (argc > 5 || nb < 1 || nb > 1L << 30 || nt < 1 || nb_reps < 1 || nt_reps < 1) {
        fprintf(stderr, "usage: %s [nbodies [triad_n [nbody_reps [triad_reps]]]]\n"
                        "       (defaults: 65536 67108864 10 100)\n", argv[0]);
        return 2;
    }

    printf("GPU: %s\n", ref_gpu_name());
    for (int d = 0; d < macc_num_devices(); d++)
        printf("macc device %d: %s\n", d, macc_device_name(d));

    /* The triad needs 3 arrays on the generated side and 3 on the
     * hand-written one; leave room for both at once (in case the runtime keeps
     * its memory after exit data), plus 1 GiB. */
    size_t free_b = ref_free_memory();
    size_t margin = (size_t)1 << 30;
    size_t room = free_b > margin ? (free_b - margin) / (6 * sizeof(double)) : 0;
    if ((size_t)nt > room) {
        long m = 1;
        while ((size_t)(2 * m) <= room)
            m *= 2;
        if (room < 1024) {
            fprintf(stderr, "kernels: only %zu bytes of GPU memory free\n", free_b);
            return 1;
        }
        printf("triad: n=%ld does not fit in %.1f MiB of free GPU memory; n=%ld\n", nt,
               free_b / 1048576.0, m);
        nt = m;
    }

    Result rn, rt;
    bench_nbody((int)nb, nb_reps, &rn);
    bench_triad(nt, nt_reps, &rt);
    double copy_s = ref_d2d_copy((size_t)nt * sizeof(double), nt_reps);

    const double flops = 20.0 * (double)nb * (double)nb;
    const double triad_bytes = 3.0 * sizeof(double) * (double)nt;
    const double copy_bytes = 2.0 * sizeof(double) * (double)nt;
    double rn_gen = flops / rn.gen_s * 1e-9, rn_ref = flops / rn.ref_s * 1e-9;
    double rt_gen = triad_bytes / rt.gen_s * 1e-9, rt_ref = triad_bytes / rt.ref_s * 1e-9;

    printf("\n");
    printf("nbody: n=%ld, %d timed launches (20 flops per interaction); "
           "generated %.3f ms, hand-written %.3f ms per launch\n",
           nb, nb_reps, 1e3 * rn.gen_s, 1e3 * rn.ref_s);
    printf("       hand-written: %s\n", rn.ref_config);
    printf("triad: n=%ld (%.1f MiB per array), %d timed launches (24 bytes per element); "
           "generated %.1f us, hand-written %.1f us per launch\n",
           nt, nt * sizeof(double) / 1048576.0, nt_reps, 1e6 * rt.gen_s, 1e6 * rt.ref_s);
    printf("       hand-written: %s\n", rt.ref_config);
    printf("\n");
    printf("%-13s %-18s %-18s %s\n", "kernel", "generated", "hand-written", "ratio");
    double rn_sync = rn.sync_s > 0 ? flops / rn.sync_s * 1e-9 : rn_ref;
    printf("%-13s %10.1f %-7s %10.1f %-7s %5.2f   (synchronous regions / launch+sync)\n", "nbody", rn_gen, "GFLOP/s",
           rn_sync, "GFLOP/s", rn_gen / rn_sync);
    double rt_now = triad_bytes / rt.gen_nowait_s * 1e-9;
    double rt_sync = rt.sync_s > 0 ? triad_bytes / rt.sync_s * 1e-9 : rt_ref;
    /* like for like: synchronous regions against launches each followed by a
     * host synchronisation; deferred regions against back-to-back launches */
    printf("%-13s %10.1f %-7s %10.1f %-7s %5.2f   (synchronous regions / launch+sync)\n", "triad", rt_gen, "GB/s",
           rt_sync, "GB/s", rt_gen / rt_sync);
    printf("%-13s %10.1f %-7s %10.1f %-7s %5.2f   (nowait regions + taskwait / back-to-back launches)\n",
           "triad nowait", rt_now, "GB/s", rt_ref, "GB/s", rt_now / rt_ref);
    printf("(d2d copy     %10.1f GB/s: cudaMemcpy, read + write)\n", copy_bytes / copy_s * 1e-9);
    printf("(triad async  %10.1f GB/s: hand-written, back-to-back launches; synchronous regions / it: %.2f)\n",
           rt_ref, rt_gen / rt_ref);
    printf("(nbody async  %10.1f GFLOP/s: hand-written, back-to-back launches; synchronous regions / it: %.2f)\n",
           rn_ref, rn_gen / rn_ref);
    printf("\n");
    printf("target: ratio >= %.2f: nbody %s, triad (synchronous regions) %s, triad (nowait regions) %s\n", TARGET,
           rn_gen / rn_sync >= TARGET ? "met" : "NOT met", rt_gen / rt_sync >= TARGET ? "met" : "NOT met",
           rt_now / rt_ref >= TARGET ? "met" : "NOT met");

    int ok = rn.ok && rt.ok;
    printf("check: %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
