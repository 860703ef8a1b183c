// MACC_FLAGS: --managed
/* bfs.c: breadth-first search, the Rodinia BFS kernels as two `omp target`
 * regions per level, on managed memory (macc --managed): the sample of the
 * placement study (runtime/placement.c, OTM, seed 004).
 *
 * The graph is in CSR form: start[v] .. start[v + 1] index edges[], a large
 * array (degree x vertices ints) that a traversal reads once in all, a few
 * vertices' worth per level; the per-vertex arrays (mask, updating, visited,
 * cost) are read and written by every launch. The graph has `parts`
 * components of equal size (vertices v with v % parts equal, joined by a ring
 * and random edges), and the search from vertex 0 reaches one of them: it
 * touches 1/parts of the edges, the sparse access OTM leaves to page faults.
 *
 *   usage: bfs [vertices [degree [parts [seed [reps]]]]]   (defaults: 4194304 8 8 1 1)
 *
 * The traversal runs `reps` times (fewer when the repetitions have taken
 * REPS_MAX_S in all: at least one), each from the same start: every array
 * moved back to the host first (`target update from`, which under --managed
 * is a prefetch to the host that placement.c notes), the per-vertex arrays
 * reset there. Prints the bytes the regions use (`data: N bytes`), the best
 * traversal's time (`time: S s`, the graph built and the arrays moved back
 * before; `times:` every repetition's), the levels, and `check: PASS`
 * (exit 0) when every cost equals a serial queue-based search's, else
 * `check: FAIL` (exit 1).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS_MAX_S 2.0

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static unsigned long long rng_state;
static unsigned rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33);
}

/* one level: expand the frontier (mask) */
static void bfs_expand(int nv, int ne, const int *start, const int *edges, char *mask, char *updating,
                       const char *visited, int *cost)
{
#pragma omp target teams distribute parallel for map(to: start[0:nv+1], edges[0:ne], visited[0:nv]) map(tofrom: mask[0:nv], updating[0:nv], cost[0:nv])
    for (int v = 0; v < nv; v++) {
        if (mask[v]) {
            mask[v] = 0;
            for (int e = start[v]; e < start[v + 1]; e++) {
                int id = edges[e];
                if (!visited[id]) {
                    cost[id] = cost[v] + 1;
                    updating[id] = 1;
                }
            }
        }
    }
}

/* the next frontier; returns whether there is one */
static int bfs_update(int nv, char *mask, char *updating, char *visited)
{
    int more = 0;
#pragma omp target teams distribute parallel for map(tofrom: mask[0:nv], updating[0:nv], visited[0:nv]) reduction(|: more)
    for (int v = 0; v < nv; v++) {
        if (updating[v]) {
            mask[v] = 1;
            visited[v] = 1;
            more |= 1;
            updating[v] = 0;
        }
    }
    return more;
}

int main(int argc, char **argv)
{
    int nv = argc > 1 ? atoi(argv[1]) : 4194304;
    int degree = argc > 2 ? atoi(argv[2]) : 8;
    int parts = argc > 3 ? atoi(argv[3]) : 8;
    rng_state = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    int reps = argc > 5 ? atoi(argv[5]) : 1;
    if (nv < 2 || degree < 1 || parts < 1 || parts > nv || (long long)nv * degree > 2000000000LL || reps < 1 ||
        reps > 100) {
        fprintf(stderr, "usage: bfs [vertices [degree [parts [seed [reps]]]]]\n");
        return 2;
    }
    int ne = nv * degree;
    int *start = malloc((size_t)(nv + 1) * sizeof *start);
    int *edges = malloc((size_t)ne * sizeof *edges);
    char *mask = malloc((size_t)nv), *updating = malloc((size_t)nv), *visited = malloc((size_t)nv);
    int *cost = malloc((size_t)nv * sizeof *cost);
    int *ref = malloc((size_t)nv * sizeof *ref), *queue = malloc((size_t)nv * sizeof *queue);
    if (!start || !edges || !mask || !updating || !visited || !cost || !ref || !queue) {
        fprintf(stderr, "bfs: out of memory\n");
        return 2;
    }
    /* component of v: v % parts; its members v % parts + parts * k, k < members */
    for (int v = 0; v < nv; v++) {
        int c = v % parts;
        int members = (nv - c + parts - 1) / parts;
        int k = v / parts;
        start[v] = v * degree;
        edges[v * degree] = c + parts * ((k + 1) % members); /* the ring: connected */
        for (int e = 1; e < degree; e++)
            edges[v * degree + e] = c + parts * (int)(rnd() % (unsigned)members);
    }
    start[nv] = ne;

    double t = 0, all = 0, times[100];
    int levels = 0, done = 0;
    while (done < reps && (done == 0 || all < REPS_MAX_S)) {
        /* everything back on the host (no-ops for the host and at the first) */
#pragma omp target update from(start[0:nv+1], edges[0:ne], mask[0:nv], updating[0:nv], visited[0:nv], cost[0:nv])
        for (int v = 0; v < nv; v++) {
            mask[v] = updating[v] = visited[v] = 0;
            cost[v] = -1;
        }
        mask[0] = visited[0] = 1;
        cost[0] = 0;
        double t0 = now();
        levels = 0;
        do {
            bfs_expand(nv, ne, start, edges, mask, updating, visited, cost);
            levels++;
        } while (bfs_update(nv, mask, updating, visited));
        double ti = now() - t0;
        times[done++] = ti;
        all += ti;
        if (done == 1 || ti < t)
            t = ti;
    }

    /* the serial search */
    for (int v = 0; v < nv; v++)
        ref[v] = -1;
    int head = 0, tail = 0;
    ref[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        int v = queue[head++];
        for (int e = start[v]; e < start[v + 1]; e++)
            if (ref[edges[e]] < 0) {
                ref[edges[e]] = ref[v] + 1;
                queue[tail++] = edges[e];
            }
    }
    long bad = 0, reached = 0;
    for (int v = 0; v < nv; v++) {
        bad += cost[v] != ref[v];
        reached += ref[v] >= 0;
    }
    printf("bfs: %d vertices, %d edges, %d components, %ld reached, %d levels\n", nv, ne, parts, reached, levels);
    printf("data: %zu bytes\n", (size_t)(nv + 1) * sizeof(int) + (size_t)ne * sizeof(int) + 3 * (size_t)nv +
                                    (size_t)nv * sizeof(int)); /* what the regions use */
    printf("time: %.6f s\n", t);
    printf("times:");
    for (int i = 0; i < done; i++)
        printf(" %.6f", times[i]);
    printf("\n");
    printf("check: %s\n", bad ? "FAIL" : "PASS");
    if (bad)
        fprintf(stderr, "bfs: %ld costs differ from the serial search\n", bad);
    free(start);
    free(edges);
    free(mask);
    free(updating);
    free(visited);
    free(cost);
    free(ref);
    free(queue);
    return bad ? 1 : 0;
}
