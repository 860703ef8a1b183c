/* nbody.c: all-pairs N-body simulation, the structure of Figure 2 of
 * Ozen et al., "Multiple Target Task Sharing Support for the OpenMP
 * Accelerator Model" (seeds/003).
 *
 * The bodies are split into blocks of BS; every time step creates one
 * `target device(any)` task per block that updates the velocities of the
 * block from the positions of all bodies. The NVIDIA version is a
 * `teams distribute parallel for` kernel holding 2 of the GPU's 100 tokens,
 * the host version a `parallel for` holding 40 of the host's 100 tokens (so at
 * most two host tasks run at a time). A second set of tasks then moves the
 * bodies.
 *
 *   usage: nbody [n [steps [BS]]]      (defaults: 8192 10 1024)
 *
 * Self-check: at every step, the velocities of a sample of bodies are compared
 * with a serial double-precision computation from the same positions.
 * Prints `check: PASS` (exit 0) or `check: FAIL` (exit 1), and
 * `nbody: n=... steps=... time=... s  GFLOP/s=...` (20 flops per interaction).
 *
 * Builds with macc, and also with a plain C compiler (`cc -O2 nbody.c -lm`),
 * which ignores the pragmas and runs it serially.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __MACC__
#include "macc_rt.h"
#endif

#define CONST 1e-2f  /* softening: keeps close encounters finite */
#define NCHECK 64    /* bodies checked against the double-precision reference */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Deterministic pseudo-random numbers in [-1, 1). */
static unsigned long long rng_state = 88172645463325252ULL;
static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* Serial double-precision velocity of body i after one step from the given
 * positions; *scale receives a magnitude for relative errors. */
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8192;
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    int BS = argc > 3 ? atoi(argv[3]) : 1024;
    const float dt = 0.001f;

    if (n < 1 || steps < 1 || BS < 1) {
        fprintf(stderr, "usage: %s [n [steps [BS]]]\n", argv[0]);
        return 2;
    }
    if (BS > n)
        BS = n;
    if (n % BS != 0) {
        n = (n + BS - 1) / BS * BS;
        printf("nbody: n rounded up to %d, a multiple of BS=%d\n", n, BS);
    }

    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    float *z = malloc(n * sizeof(float));
    float *vx = malloc(n * sizeof(float));
    float *vy = malloc(n * sizeof(float));
    float *vz = malloc(n * sizeof(float));
    if (!x || !y || !z || !vx || !vy || !vz) {
        fprintf(stderr, "nbody: out of memory\n");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        x[i] = frand();
        y[i] = frand();
        z[i] = frand();
        vx[i] = 0.1f * frand();
        vy[i] = 0.1f * frand();
        vz[i] = 0.1f * frand();
    }

    /* The sampled bodies, spread over every block. */
    int sample[NCHECK];
    int ncheck = n < NCHECK ? n : NCHECK;
    int stride = n / ncheck;
    for (int s = 0; s < ncheck; s++)
        sample[s] = s * stride + (s * 37) % stride;

#ifdef __MACC__
    macc_num_devices(); /* start the runtime (GPU contexts, helpers) before the clock */
#endif
    double maxerr = 0.0;
    double elapsed = 0.0;
    for (int step = 0; step < steps; step++) {
        /* Reference for this step, from the positions and velocities before it. */
        double ref[NCHECK][3], scale[NCHECK];
        for (int s = 0; s < ncheck; s++) {
            int i = sample[s];
            float v0[3] = {vx[i], vy[i], vz[i]};
            reference_velocity(n, i, dt, x, y, z, v0, ref[s], &scale[s]);
        }

        double t0 = now();
        //N-Body Computation
        for (int k = 0; k < n; k += BS) {
            #pragma omp target device(any) map(tofrom: vx[k:BS], vy[k:BS], vz[k:BS]) map(to: x[0:n], y[0:n], z[0:n]) nowait
            #pragma omp if_device(nvidia, cc35) teams distribute parallel for resources(2)
            #pragma omp if_device(host) parallel for resources(40)
            for (int i = k; i < k + BS; ++i) {
                float Fx = 0.0f; float Fy = 0.0f; float Fz = 0.0f;
                #pragma omp simd reduction(+:Fx,Fy,Fz)
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
        #pragma omp taskwait
        double t1 = now();

        for (int s = 0; s < ncheck; s++) {
            int i = sample[s];
            double e = fabs(vx[i] - ref[s][0]) + fabs(vy[i] - ref[s][1]) + fabs(vz[i] - ref[s][2]);
            e /= scale[s] > 0 ? scale[s] : 1.0;
            if (!(e <= maxerr)) /* also catches NaN */
                maxerr = e;
        }

        /* Position update: one task per block. */
        double t2 = now();
        for (int k = 0; k < n; k += BS) {
            #pragma omp target device(any) map(to: vx[k:BS], vy[k:BS], vz[k:BS]) map(tofrom: x[k:BS], y[k:BS], z[k:BS]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for resources(2)
            #pragma omp if_device(host) parallel for resources(40)
            for (int i = k; i < k + BS; ++i) {
                x[i] += vx[i] * dt;
                y[i] += vy[i] * dt;
                z[i] += vz[i] * dt;
            }
        }
        #pragma omp taskwait
        elapsed += (t1 - t0) + (now() - t2);
    }

    /* Positions after the last step must be finite. */
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i]) || !isfinite(z[i]))
            maxerr = INFINITY;

    double gflops = 20.0 * (double)n * (double)n * steps / elapsed * 1e-9;
    printf("nbody: n=%d steps=%d BS=%d time=%.3f s  GFLOP/s=%.2f\n", n, steps, BS, elapsed, gflops);
#ifdef __MACC__
    for (int d = 0; d < macc_num_devices(); d++)
        printf("nbody: device %d (%s): %ld tasks\n", d, macc_device_name(d), macc_device_tasks(d));
#endif
    int ok = maxerr < 1e-3;
    printf("check: %s (max relative error %.2e over %d bodies x %d steps)\n", ok ? "PASS" : "FAIL",
           maxerr, ncheck, steps);
    free(x); free(y); free(z); free(vx); free(vy); free(vz);
    return ok ? 0 : 1;
}
