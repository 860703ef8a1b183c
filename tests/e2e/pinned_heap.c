// MACC_FLAGS: --pinned
/* macc --pinned: the program's heap blocks of 4 MiB or more are page-locked
 * (registered with the CUDA driver) for as long as they live, so that their
 * sections go to and from GPUs at DMA speed. Blocks come from every
 * allocation function (malloc, calloc, aligned_alloc, posix_memalign,
 * realloc growing a small block past the threshold, realloc of NULL), some before the
 * runtime starts (registered when the GPUs start), some after (registered
 * at once), some freed and allocated again between synchronisation points.
 * Tasks read and write sections of all of them; the host checks every
 * element, calloc's zeros and the alignments asked for. Where a GPU is in
 * use (and MACC_CUDA_PIN_HEAP is not 0), the CUDA driver must report the
 * large blocks as page-locked host memory and the small one as not; with no
 * GPU (the CPU machine, MACC_DEVICES=host) nothing may be. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cudaPointerGetAttributes, when the program is linked with the CUDA
 * runtime: its first field says what the driver knows the memory as (1:
 * page-locked host memory; 0: unregistered). The rest is room for CUDA's
 * struct, which has grown fields over releases. */
struct attr {
    int type, device;
    void *devp, *hostp;
    char room[512];
};
extern int cudaPointerGetAttributes(struct attr *a, const void *p) __attribute__((weak));

static int pinned(const void *p)
{
    struct attr a;
    memset(&a, 0, sizeof a);
    if (!cudaPointerGetAttributes || cudaPointerGetAttributes(&a, p) != 0)
        return 0;
    return a.type == 1;
}

enum { NB = 4 };
static long bad;

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        printf("%s: page-locked %d, expected %d\n", what, got, want);
        bad++;
    }
}

/* x[i] = x[i] * 2 + k over n elements, in NB nowait tasks (after the
 * earlier ones on the same blocks). */
static void scale(double *x, long n, double k)
{
    long bs = n / NB;
    for (int b = 0; b < NB; b++) {
        long off = b * bs, len = b == NB - 1 ? n - off : bs;
        #pragma omp target device(any) map(tofrom: x[off:len]) depend(inout: x[off:len]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for
        #pragma omp if_device(host) parallel for
        for (long i = off; i < off + len; i++)
            x[i] = x[i] * 2.0 + k;
    }
}

static void check(const char *what, const double *x, long n, double (*want)(long))
{
    for (long i = 0; i < n; i++)
        if (x[i] != want(i)) {
            if (bad < 5)
                printf("%s[%ld] = %g, want %g\n", what, i, x[i], want(i));
            bad++;
        }
}

static double seq(long i) { return (double)(i % 1009); }
static double seq_done(long i) { return 2.0 * (double)(i % 1009) + 1.0; }
static double zero_done(long i) { (void)i; return 3.0; }
static double seq_done2(long i) { return 2.0 * (2.0 * (double)(i % 1009) + 1.0) + 5.0; }

int main(void)
{
    const long n = 1L << 20; /* 8 MiB of doubles */
    /* before the runtime starts */
    double *a = malloc(n * sizeof(double));
    double *z = calloc(n - 3, sizeof(double)); /* not a whole number of pages */
    double *al = aligned_alloc(64, (n / 2) * sizeof(double));
    void *pm = NULL;
    int pe = posix_memalign(&pm, 128, (n / 2 + 1) * sizeof(double));
    double *small = malloc(1024 * sizeof(double));
    double *grow = malloc(1000 * sizeof(double));
    if (!a || !z || !al || pe || !pm || !small || !grow)
        return 2;
    double *p = pm;
    if ((uintptr_t)al % 64 || (uintptr_t)p % 128) {
        printf("alignment: aligned_alloc %p, posix_memalign %p\n", (void *)al, (void *)p);
        bad++;
    }
    for (long i = 0; i < n - 3; i++)
        if (z[i] != 0.0) {
            printf("calloc: z[%ld] = %g\n", i, z[i]);
            bad++;
            break;
        }
    for (long i = 0; i < n; i++)
        a[i] = seq(i);
    for (long i = 0; i < n / 2; i++)
        al[i] = seq(i);
    for (long i = 0; i < n / 2 + 1; i++)
        p[i] = seq(i);
    for (long i = 0; i < 1024; i++)
        small[i] = seq(i);
    for (long i = 0; i < 1000; i++)
        grow[i] = seq(i);
    double *g = realloc(grow, n * sizeof(double)); /* past the threshold: moved and registered */
    if (!g)
        return 2;
    grow = g;
    for (long i = 1000; i < n; i++)
        grow[i] = seq(i);

    scale(a, n, 1.0);
    scale(al, n / 2, 1.0);
    scale(p, n / 2 + 1, 1.0);
    scale(small, 1024, 1.0);
    scale(grow, n, 1.0);
    for (long i = 0; i < n - 3; i++)
        z[i] = 1.0;
    scale(z, n - 3, 1.0);
    #pragma omp taskwait
    check("a", a, n, seq_done);
    check("aligned_alloc", al, n / 2, seq_done);
    check("posix_memalign", p, n / 2 + 1, seq_done);
    check("small", small, 1024, seq_done);
    check("realloc", grow, n, seq_done);
    check("calloc", z, n - 3, zero_done);

    const char *off = getenv("MACC_CUDA_PIN_HEAP");
    int gpus = omp_get_num_devices() > 0 && cudaPointerGetAttributes && !(off && !strcmp(off, "0"));
    expect("malloc", pinned(a), gpus);
    expect("calloc", pinned(z), gpus);
    expect("aligned_alloc", pinned(al), gpus);
    expect("posix_memalign", pinned(p), gpus);
    expect("realloc", pinned(grow), gpus);
    expect("small malloc", pinned(small), 0);

    /* after the start: freed and allocated again, each round's values */
    for (int r = 0; r < 3; r++) {
        free(a);
        a = malloc(n * sizeof(double));
        if (!a)
            return 2;
        expect("malloc after start", pinned(a), gpus);
        for (long i = 0; i < n; i++)
            a[i] = seq(i) + r;
        scale(a, n, 1.0);
        scale(a, n, 5.0);
        #pragma omp taskwait
        for (long i = 0; i < n; i++)
            if (a[i] != seq_done2(i) + 4.0 * r) {
                if (bad < 5)
                    printf("round %d: a[%ld] = %g, want %g\n", r, i, a[i], seq_done2(i) + 4.0 * r);
                bad++;
            }
    }
    /* realloc of nothing: a new block, registered as malloc's */
    double *rn = realloc(NULL, n * sizeof(double));
    if (!rn)
        return 2;
    expect("realloc(NULL)", pinned(rn), gpus);
    for (long i = 0; i < n; i++)
        rn[i] = seq(i);
    scale(rn, n, 1.0);
    #pragma omp taskwait
    check("realloc(NULL)", rn, n, seq_done);
    free(rn);
    /* a registered block shrunk below the threshold: no longer registered */
    g = realloc(grow, 1000 * sizeof(double));
    if (!g)
        return 2;
    grow = g;
    check("shrunk", grow, 1000, seq_done);
    expect("shrunk", pinned(grow), 0);
    free(a);
    free(z);
    free(al);
    free(p);
    free(small);
    free(grow);
    printf("check: %s (%ld bad)\n", bad ? "FAIL" : "PASS", bad);
    return bad ? 1 : 0;
}
