/* api.c: libmaccrt_mpi's contract, run under mpirun (tests/mpi/run.sh).
 *
 *   api            every check below; prints "ok NAME" or "FAIL NAME: why"
 *                  on rank 0 and exits 1 when one failed
 *   api single     initialises MPI_THREAD_SINGLE and asks for a ring of
 *                  thread 1: must stop with a message
 *   api split3     sub-rings of 3 ranks: must fail with a message unless 3
 *                  divides the ranks
 *
 * Checks: the partition covers the array once (uneven sizes too); zero, put,
 * get; a ring whose update records which origins reached each slice (every
 * origin exactly once per round, own first, in ring order); several rounds;
 * two rings on two threads with different tags; sub-rings and the sum across
 * them; an empty slice (more ranks than elements).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "macc_mpi.h"

static int rank, size, failed;

static void check(int cond, const char *name, const char *why)
{
    int all = cond;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!cond)
        fprintf(stderr, "rank %d: %s: %s\n", rank, name, why);
    if (rank == 0)
        printf(all ? "ok %s\n" : "FAIL %s\n", name);
    if (!all)
        failed = 1;
}

/* The update: slice element i counts the contributions (long values) it
 * got; origins are recorded in order. */
typedef struct Rec {
    int origins[64];
    int n;
} Rec;

static void upd(macc_dist *d, void *slice, size_t off, size_t n, const void *contrib, int origin, void *arg)
{
    (void)d;
    (void)off;
    long *s = slice;
    const long *c = contrib;
    for (size_t i = 0; i < n; i++)
        s[i] += c[i % 8];
    Rec *r = arg;
    if (r && r->n < 64)
        r->origins[r->n++] = origin;
}

static void fill(macc_ring *r, long v)
{
    long *b = macc_ring_buffer(r);
    for (int i = 0; i < 8; i++)
        b[i] = v;
}

typedef struct Th {
    macc_dist *d;
    int t;
    int ok;
} Th;

static void *thread_ring(void *arg)
{
    Th *th = arg;
    macc_ring *r = macc_ring_new(th->d, 8 * sizeof(long), th->t);
    int ring_rank, p;
    MPI_Comm_rank(macc_dist_comm(th->d), &ring_rank);
    MPI_Comm_size(macc_dist_comm(th->d), &p);
    Rec rec = {{0}, 0};
    for (int round = 0; round < 3; round++) {
        fill(r, (long)(th->t + 1) * 1000 + ring_rank);
        macc_ring_run(r, upd, &rec);
    }
    th->ok = rec.n == 3 * p;
    macc_ring_delete(r);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    int prov;
    MPI_Init_thread(&argc, &argv, strcmp(mode, "single") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char why[256];

    if (!strcmp(mode, "single")) {
        macc_dist *d = macc_dist_new(MPI_COMM_WORLD, 16, sizeof(long));
        macc_ring *r = macc_ring_new(d, 64, 1); /* must not return */
        macc_ring_delete(r);
        macc_dist_delete(d);
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(mode, "split3")) {
        MPI_Comm a, b;
        int rc = macc_mpi_split(MPI_COMM_WORLD, 3, &a, &b);
        if (!rc) {
            MPI_Comm_free(&a);
            MPI_Comm_free(&b);
        }
        MPI_Finalize();
        return rc;
    }

    /* partition: uneven, covering [0, global) once */
    size_t sizes[] = {1000, 1003, (size_t)size - 1, 0};
    for (int k = 0; k < 4; k++) {
        size_t g = sizes[k];
        macc_dist *d = macc_dist_new(MPI_COMM_WORLD, g, 12);
        unsigned long mine[2] = {macc_dist_offset(d), macc_dist_count(d)};
        unsigned long *all = malloc(2 * sizeof(unsigned long) * (size_t)size);
        MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG, all, 2, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
        int ok = macc_dist_global(d) == g && macc_dist_bytes(d) == macc_dist_count(d) * 12;
        unsigned long next = 0;
        for (int r = 0; r < size; r++) {
            ok = ok && all[2 * r] == next && all[2 * r + 1] + 1 >= g / (size_t)size && all[2 * r + 1] <= g / (size_t)size + 1;
            next = all[2 * r] + all[2 * r + 1];
        }
        ok = ok && next == g;
        snprintf(why, sizeof why, "global %zu: offset %lu count %lu", g, mine[0], mine[1]);
        char name[64];
        snprintf(name, sizeof name, "partition of %zu elements", g);
        check(ok, name, why);
        free(all);
        macc_dist_delete(d);
    }

    /* put, get, zero */
    {
        macc_dist *d = macc_dist_new(MPI_COMM_WORLD, 100, sizeof(long));
        size_t n = macc_dist_count(d), off = macc_dist_offset(d);
        long *h = malloc(n * sizeof(long) + 1), *g = malloc(n * sizeof(long) + 1);
        for (size_t i = 0; i < n; i++)
            h[i] = (long)(off + i) * 3;
        macc_dist_put(d, h);
        macc_dist_get(d, g);
        int ok = !memcmp(h, g, n * sizeof(long));
        macc_dist_zero(d);
        macc_dist_get(d, g);
        for (size_t i = 0; i < n; i++)
            ok = ok && g[i] == 0;
        check(ok, "put, get, zero", "slice contents differ");
        free(h);
        free(g);
        macc_dist_delete(d);
    }

    /* one ring, three rounds: every origin once per round, own first, then
     * left, left's left, ...; the slice holds the sum of all contributions */
    {
        macc_dist *d = macc_dist_new(MPI_COMM_WORLD, 64, sizeof(long));
        macc_ring *r = macc_ring_new(d, 8 * sizeof(long), 0);
        int ok = macc_dist_bytes(d) == macc_dist_count(d) * sizeof(long) + MACC_RING_BUFFERS * 8 * sizeof(long);
        Rec rec = {{0}, 0};
        for (int round = 0; round < 3; round++) {
            fill(r, 1L << rank);
            macc_ring_run(r, upd, &rec);
        }
        ok = ok && rec.n == 3 * size;
        for (int k = 0; k < rec.n && ok; k++)
            ok = rec.origins[k] == ((rank - k % size) % size + size) % size;
        size_t n = macc_dist_count(d);
        long *g = malloc(n * sizeof(long) + 1);
        macc_dist_get(d, g);
        for (size_t i = 0; i < n; i++)
            ok = ok && g[i] == 3 * ((1L << size) - 1);
        snprintf(why, sizeof why, "%d updates, first origins %d %d", rec.n, rec.origins[0], rec.origins[1]);
        check(ok, "ring: every contribution once, in ring order", why);
        free(g);
        macc_ring_delete(r);
        check(macc_dist_bytes(d) == macc_dist_count(d) * sizeof(long), "ring buffers freed", "bytes still counted");
        macc_dist_delete(d);
    }

    /* two threads, two rings on one array */
    {
        macc_dist *d = macc_dist_new(MPI_COMM_WORLD, 40, sizeof(long));
        pthread_t t[2];
        Th th[2] = {{d, 0, 0}, {d, 1, 0}};
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, thread_ring, &th[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        size_t n = macc_dist_count(d);
        long *g = malloc(n * sizeof(long) + 1);
        macc_dist_get(d, g);
        long want = 0;
        for (int t2 = 0; t2 < 2; t2++)
            for (int rr = 0; rr < size; rr++)
                want += 3 * ((long)(t2 + 1) * 1000 + rr);
        int ok = th[0].ok && th[1].ok;
        for (size_t i = 0; i < n; i++)
            ok = ok && g[i] == want;
        check(ok, "two threads, two rings", "wrong sums");
        free(g);
        macc_dist_delete(d);
    }

    /* sub-rings of 2 (when the ranks are even) and the sum across them */
    if (size % 2 == 0) {
        MPI_Comm ring, across;
        int rc = macc_mpi_split(MPI_COMM_WORLD, 2, &ring, &across);
        macc_dist *d = macc_dist_new(ring, 10, sizeof(long));
        macc_ring *r = macc_ring_new(d, 8 * sizeof(long), 0);
        Rec rec = {{0}, 0};
        fill(r, rank + 1);
        macc_ring_run(r, upd, &rec);
        macc_ring_delete(r);
        macc_dist_allreduce(d, across, MPI_LONG, MPI_SUM);
        size_t n = macc_dist_count(d);
        long *g = malloc(n * sizeof(long) + 1);
        macc_dist_get(d, g);
        int ok = !rc && rec.n == 2 && macc_dist_count(d) == 5;
        for (size_t i = 0; i < n; i++)
            ok = ok && g[i] == (long)size * (size + 1) / 2;
        check(ok, "sub-rings of 2 and the sum across them", "wrong sums");
        free(g);
        macc_dist_delete(d);
        MPI_Comm_free(&ring);
        MPI_Comm_free(&across);
    }

    if (rank == 0)
        printf("%s\n", failed ? "api: FAIL" : "api: PASS");
    MPI_Finalize();
    return failed;
}
