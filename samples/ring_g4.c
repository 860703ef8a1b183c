/* ring_g4.c: a DCA++-like accumulation over a distributed G4 and a pipelined
 * ring (seed 001, Wei et al.; libmaccrt_mpi, include/macc_mpi.h).
 *
 * Every rank makes N measurements; each is a random single-particle G_sigma
 * (K x K complex, seeded by rank and measurement) that is added to every
 * entry of the two-particle G4 (K x K x K3 complex):
 *
 *     G4[k1][k2][k3] += G(k3, k2) * G(k3, k1)
 *
 * Ring version: G4 is partitioned over the ranks of a sub-ring of S ranks
 * (macc_dist, 1/S each on the rank's GPU or host memory); every measurement
 * goes around the sub-ring (macc_ring_run) and updates every slice through
 * an ordinary macc region (`target device(any)`), on the GPU where the slice
 * is. T threads per rank run independent rings. At the end the sub-rings'
 * slices are summed (macc_dist_allreduce). Reference (when it fits, unless
 * --no-ref): every rank accumulates its own measurements into a whole G4,
 * then MPI_Allreduce. Prints the normalised L1 and L2 errors (check: PASS
 * when both are under 5e-7), memory per rank (G4 slice, ring buffers, and the
 * measured growth of the ring phase: resident memory on the host, GPU memory
 * in use on a GPU), time per measurement, and the
 * effective ring bandwidth; --peak also times a plain MPI ring of the same
 * message size (the link's peak for it).
 *
 *   usage: ring_g4 [-k K] [-k3 K3] [-n N] [-s S] [-t T] [--no-ref] [--peak]
 *                  [--no-update] [--die RANK] [--stall RANK]
 *   defaults: K 48, K3 = K, N 8, S = all ranks, T 1
 *   build:    macc --mpi -O2 samples/ring_g4.c -o ring_g4 -lm
 *   run:      mpirun -np 4 ./ring_g4 -s 2 -t 2
 *
 * --no-update: the ring runs with an empty update (no check): what the ring
 * itself costs against a plain MPI ring of the same messages (--peak).
 * --die R: rank R kills itself (SIGKILL) before its second measurement;
 * --stall R: rank R stops answering there (sleeps): the other ranks must
 * report it and exit (MACC_MPI_TIMEOUT), not hang.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <omp.h>

#include "macc_mpi.h"

typedef struct Ctx {
    long K, K3, N;
    int T, S, die, stall, wrank, no_update;
    macc_dist *d;
} Ctx;

/* A reproducible uniform number in [-1, 1) for (seed, i): splitmix64. */
static inline double rnd(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static uint64_t seed_of(int rank, long m)
{
    return 0x243f6a8885a308d3ULL ^ ((uint64_t)rank << 32) ^ (uint64_t)m * 0x13198a2e03707344ULL;
}

/* G_sigma of (rank, measurement) into g (K x K complex: re, im). On the
 * device where g is present (a ring buffer), else wherever the runtime picks. */
static void make_g(double *g, long K, uint64_t seed)
{
    long m = 2 * K * K;
    #pragma omp target device(any) map(from: g[0:m])
    #pragma omp teams distribute parallel for
    for (long i = 0; i < m; i++)
        g[i] = rnd(seed, (uint64_t)i);
}

/* G4 entries [off, off + n) (complex: g4[2i], g4[2i+1]) += G(k3,k2) * G(k3,k1). */
static void update_g4(double *g4, long off, long n, const double *g, long K, long K3)
{
    long m = 2 * K * K;
    #pragma omp target device(any) map(tofrom: g4[0:2*n]) map(to: g[0:m])
    #pragma omp teams distribute parallel for
    for (long i = 0; i < n; i++) {
        long f = off + i;
        long k3 = f % K3, k2 = (f / K3) % K, k1 = f / (K3 * K);
        double ar = g[2 * (k3 * K + k2)], ai = g[2 * (k3 * K + k2) + 1];
        double br = g[2 * (k3 * K + k1)], bi = g[2 * (k3 * K + k1) + 1];
        g4[2 * i] += ar * br - ai * bi;
        g4[2 * i + 1] += ar * bi + ai * br;
    }
}

static void ring_update(macc_dist *d, void *slice, size_t off, size_t n, const void *contrib, int origin, void *arg)
{
    (void)d;
    (void)origin;
    const Ctx *c = arg;
    if (c->no_update)
        return;
    update_g4(slice, (long)off, (long)n, contrib, c->K, c->K3);
}

/* Resident memory now and at its peak, in bytes (Linux /proc). */
static void rss(long *now_b, long *peak_b)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    *now_b = *peak_b = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        long kb;
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            *now_b = kb * 1024;
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            *peak_b = kb * 1024;
    }
    fclose(f);
}

/* Resets the peak resident memory to the current one (Linux >= 4.0). */
static void rss_reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

typedef struct Worker {
    Ctx *c;
    int t;
    long count;
    double ring_s; /* time in macc_ring_run */
    size_t dev_used; /* GPU memory growth while the ring existed (macc_dist_device_used) */
    size_t staged;   /* pinned staging bytes while it existed (macc_dist_host_bytes) */
} Worker;

static void *ring_thread(void *arg)
{
    Worker *w = arg;
    Ctx *c = w->c;
    macc_ring *r = macc_ring_new(c->d, (size_t)(2 * c->K * c->K) * sizeof(double), w->t);
    for (long m = w->t; m < c->N; m += c->T) {
        if (m > 0 && c->wrank == c->die) {
            fprintf(stderr, "ring_g4: rank %d: killing itself (--die)\n", c->wrank);
            raise(SIGKILL);
        }
        if (m > 0 && c->wrank == c->stall) {
            fprintf(stderr, "ring_g4: rank %d: stalling (--stall)\n", c->wrank);
            sleep(3600);
        }
        make_g(macc_ring_buffer(r), c->K, seed_of(c->wrank, m));
        double t0 = MPI_Wtime();
        macc_ring_run(r, ring_update, c);
        w->ring_s += MPI_Wtime() - t0;
        w->count++;
    }
    w->dev_used = macc_dist_device_used(c->d);
    w->staged = macc_dist_host_bytes(c->d);
    macc_ring_delete(r);
    return NULL;
}

/* A plain MPI ring of `bytes` messages over comm (P-1 steps, Irecv/Isend/
 * Waitall, host buffers), `reps` times: seconds per round. */
static double plain_ring(MPI_Comm comm, size_t bytes, int reps)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (p == 1)
        return 0;
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) {
        fprintf(stderr, "ring_g4: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    int left = (rank - 1 + p) % p, right = (rank + 1) % p;
    double best = 1e30;
    for (int k = 0; k <= reps; k++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int s = 1; s < p; s++) {
            MPI_Request rq[2];
            MPI_Irecv(b, (int)bytes, MPI_BYTE, left, 7, comm, &rq[0]);
            MPI_Isend(a, (int)bytes, MPI_BYTE, right, 7, comm, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            char *x = a;
            a = b;
            b = x;
        }
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (k > 0 && t < best) /* the first round warms up */
            best = t;
    }
    free(a);
    free(b);
    return best;
}

static void usage(void)
{
    fprintf(stderr, "usage: ring_g4 [-k K] [-k3 K3] [-n N] [-s S] [-t T] [--no-ref] [--peak] [--no-update] [--die R] [--stall R]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int prov;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    Ctx c = {.K = 48, .K3 = -1, .N = 8, .T = 1, .S = 0, .die = -1, .stall = -1, .wrank = wrank};
    int ref = 1, peak = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "-k") && more) c.K = atol(argv[++i]);
        else if (!strcmp(a, "-k3") && more) c.K3 = atol(argv[++i]);
        else if (!strcmp(a, "-n") && more) c.N = atol(argv[++i]);
        else if (!strcmp(a, "-s") && more) c.S = atoi(argv[++i]);
        else if (!strcmp(a, "-t") && more) c.T = atoi(argv[++i]);
        else if (!strcmp(a, "--die") && more) c.die = atoi(argv[++i]);
        else if (!strcmp(a, "--stall") && more) c.stall = atoi(argv[++i]);
        else if (!strcmp(a, "--no-ref")) ref = 0;
        else if (!strcmp(a, "--peak")) peak = 1;
        else if (!strcmp(a, "--no-update")) c.no_update = 1, ref = 0;
        else {
            if (wrank == 0)
                usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (c.K3 < 0)
        c.K3 = c.K;
    if (c.K < 1 || c.K3 < 1 || c.K3 > c.K || c.N < 1 || c.T < 1) {
        if (wrank == 0)
            fprintf(stderr, "ring_g4: need K >= 1, 1 <= K3 <= K, N >= 1, T >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (c.S <= 0)
        c.S = wsize;
    MPI_Comm ring, across;
    if (macc_mpi_split(MPI_COMM_WORLD, c.S, &ring, &across)) {
        MPI_Finalize();
        return 2;
    }
    size_t g4_elems = (size_t)(c.K * c.K * c.K3), g4_bytes = g4_elems * 16, msg = (size_t)(2 * c.K * c.K) * 8;

    /* the link's peak for this message size: a plain MPI ring */
    double peak_t = 0;
    if (peak)
        peak_t = plain_ring(ring, msg, 3);

    /* ---- ring version ---- */
    long rss0, hwm;
    rss_reset_peak();
    rss(&rss0, &hwm);
    c.d = macc_dist_new(ring, g4_elems, 16);
    omp_set_default_device(macc_dist_device(c.d));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pthread_t th[64];
    Worker w[64];
    if (c.T > 64)
        c.T = 64;
    for (int t = 0; t < c.T; t++) {
        w[t] = (Worker){&c, t, 0, 0, 0, 0};
        if (c.T > 1)
            pthread_create(&th[t], NULL, ring_thread, &w[t]);
    }
    if (c.T == 1)
        ring_thread(&w[0]);
    else
        for (int t = 0; t < c.T; t++)
            pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t_ring = MPI_Wtime() - t0;
    size_t mod_bytes = macc_dist_bytes(c.d) + MACC_RING_BUFFERS * (size_t)c.T * msg; /* rings are deleted: add their buffers */
    long rss1;
    rss(&rss1, &hwm);
    long grown = hwm - rss0;
    macc_dist_allreduce(c.d, across, MPI_DOUBLE, MPI_SUM);
    size_t off = macc_dist_offset(c.d), cnt = macc_dist_count(c.d);
    double *mine = malloc(cnt * 16 + 16);
    if (!mine) {
        fprintf(stderr, "ring_g4: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    macc_dist_get(c.d, mine);

    /* ---- reference: the whole G4 on every rank, when it fits ---- */
    long avail = sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE);
    if (ref && (double)g4_bytes * wsize > 0.5 * (double)avail) {
        if (wrank == 0)
            printf("reference: skipped (%d whole copies of G4, %.1f MB each, would not fit in memory)\n", wsize,
                   g4_bytes / 1e6);
        ref = 0;
    }
    double l1 = -1, l2 = -1;
    double t_ref = 0;
    if (ref) {
        double *full = calloc(g4_elems * 2, sizeof(double));
        double *g = malloc(msg);
        if (!full || !g) {
            fprintf(stderr, "ring_g4: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        long n2 = (long)g4_elems * 2, m = 2 * c.K * c.K;
        double tr0 = MPI_Wtime();
        #pragma omp target data map(tofrom: full[0:n2]) map(alloc: g[0:m])
        {
            for (long k = 0; k < c.N; k++) {
                make_g(g, c.K, seed_of(wrank, k));
                update_g4(full, 0, (long)g4_elems, g, c.K, c.K3);
            }
        }
        for (size_t o = 0; o < (size_t)n2; o += (size_t)1 << 26) {
            size_t k = (size_t)n2 - o < ((size_t)1 << 26) ? (size_t)n2 - o : ((size_t)1 << 26);
            MPI_Allreduce(MPI_IN_PLACE, full + o, (int)k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        t_ref = MPI_Wtime() - tr0;
        int arank;
        MPI_Comm_rank(across, &arank);
        double s[4] = {0, 0, 0, 0};
        if (arank == 0) /* one sub-ring's slices cover G4 once */
            for (size_t i = 0; i < cnt; i++) {
                double rr = full[2 * (off + i)], ri = full[2 * (off + i) + 1];
                double dr = mine[2 * i] - rr, di = mine[2 * i + 1] - ri;
                double dd = dr * dr + di * di, rn = rr * rr + ri * ri;
                s[0] += sqrt(dd);
                s[1] += sqrt(rn);
                s[2] += dd;
                s[3] += rn;
            }
        MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        l1 = s[1] > 0 ? s[0] / s[1] : s[0];
        l2 = s[3] > 0 ? sqrt(s[2] / s[3]) : sqrt(s[2]);
        free(full);
        free(g);
    }

    /* ---- report ---- */
    double ring_s = 0, dev_used = 0, staged = 0;
    for (int t = 0; t < c.T; t++) {
        ring_s = w[t].ring_s > ring_s ? w[t].ring_s : ring_s;
        dev_used = (double)w[t].dev_used > dev_used ? (double)w[t].dev_used : dev_used;
        staged = (double)w[t].staged > staged ? (double)w[t].staged : staged;
    }
    /* ranks of this node whose slices are on the same GPU: the GPU memory
     * measured is then theirs together */
    int sharing = 1;
    {
        MPI_Comm node, same;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_split(node, macc_dist_device(c.d), wrank, &same);
        if (macc_dist_device(c.d) != omp_get_initial_device())
            MPI_Comm_size(same, &sharing);
        MPI_Comm_free(&same);
        MPI_Comm_free(&node);
    }
    double mx[6] = {(double)grown, (double)mod_bytes, staged, ring_s, dev_used, (double)sharing};
    MPI_Allreduce(MPI_IN_PLACE, mx, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = !ref || (l1 < 5e-7 && l2 < 5e-7);
    if (wrank == 0) {
        int host = macc_dist_device(c.d) == omp_get_initial_device();
        double slice_max = (double)((g4_elems + c.S - 1) / c.S) * 16;
        double target = slice_max + 3.0 * c.T * msg;
        printf("ring_g4: P=%d S=%d T=%d K=%ld K3=%ld N=%ld, slice on %s%s\n", wsize, c.S, c.T, c.K, c.K3, c.N,
               host ? "the host" : "a GPU",
               host ? "" : macc_mpi_cuda_aware() ? " (CUDA-aware MPI)" : " (pinned staging buffers)");
        printf("G4: %.3f MB whole, G_sigma: %.3f MB per message\n", g4_bytes / 1e6, msg / 1e6);
        printf("memory per rank: slice %.3f MB (1/%d of G4), ring buffers %.3f MB (%d x %d thread(s)), "
               "module total %.3f MB\n", slice_max / 1e6, c.S, (double)MACC_RING_BUFFERS * c.T * msg / 1e6,
               MACC_RING_BUFFERS, c.T, mx[1] / 1e6);
        if (!host)
            printf("memory per rank: pinned staging %.3f MB in host memory\n", mx[2] / 1e6);
        if (host)
            printf("memory per rank measured: peak resident growth of the ring phase %.3f MB "
                   "(target <= 1/S G4 + 3 G_sigma per thread = %.3f MB): %s\n", mx[0] / 1e6, target / 1e6,
                   mx[0] <= target ? "ok" : "over");
        else if (mx[5] > 1)
            printf("memory per rank measured: n/a (%.0f ranks share a GPU; GPU memory growth of the ring phase "
                   "%.3f MB for them together)\n", mx[5], mx[4] / 1e6);
        else if (mx[4] > 0) { /* the GPU hands out memory in 2 MiB pages */
            double gran = (double)(2 << 20), tgpu = ceil(target / gran) * gran;
            printf("memory per rank measured: GPU memory growth of the ring phase %.3f MB "
                   "(target <= 1/S G4 + 3 G_sigma per thread = %.3f MB, %.3f MB in whole 2 MiB pages): %s\n",
                   mx[4] / 1e6, target / 1e6, tgpu / 1e6, mx[4] <= tgpu ? "ok" : "over");
        }
        else
            printf("memory per rank measured: n/a (device memory, not measurable here)\n");
        printf("time per measurement: %.3f ms (ring phase %.3f s, %ld measurements per rank)\n",
               1e3 * t_ring / c.N, t_ring, c.N);
        double bw = c.S > 1 ? (double)c.N * (c.S - 1) * msg / mx[3] : 0;
        printf("time in the ring: %.3f ms per measurement (macc_ring_run: communication and updates; the rest "
               "makes G_sigma)\n", 1e3 * mx[3] * c.T / c.N);
        printf("ring bandwidth: %.3f GB/s per rank ((S-1) x message x N / time in macc_ring_run); "
               "%.3f GB/s over the whole measurement\n", bw / 1e9,
               c.S > 1 ? (double)c.N * (c.S - 1) * msg / t_ring / 1e9 : 0.0);
        if (peak && c.S > 1) {
            double pbw = (double)(c.S - 1) * msg / peak_t;
            printf("peak: plain MPI ring of the same messages %.3f GB/s per rank; ring / peak = %.0f%%\n",
                   pbw / 1e9, 100 * bw / pbw);
        }
        if (ref)
            printf("reference: whole G4 per rank + MPI_Allreduce, %.3f s\n", t_ref);
        if (ref)
            printf("check: L1 = %.3e, L2 = %.3e (< 5e-7): %s\n", l1, l2, ok ? "PASS" : "FAIL");
        else
            printf("check: skipped (%s)\n", c.no_update ? "--no-update" : "no reference");
    }
    free(mine);
    macc_dist_delete(c.d);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&across);
    MPI_Finalize();
    return ok ? 0 : 1;
}
