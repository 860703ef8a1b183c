/* Host memory freed and allocated again between synchronisation points,
 * while its copies may be registered (page-locked) past them (the default
 * on a GPU for sections of 4 MiB or more): each round allocates its buffers
 * afresh (mmap'd blocks, so a freed block's address comes back with new
 * pages), grows one with realloc, maps 8 MiB with mmap itself and unmaps it
 * at the round's end, fills them with the round's values, and tasks read
 * them (to) and write a result (from). A registration that outlived its
 * memory would copy the old pages: the host checks every element of every
 * round. Also run with MACC_CUDA_PIN_MIN=65536 (every block registered) on
 * the GPU machine. */
#include <malloc.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROUNDS = 6, NB = 4 };

int main(void)
{
    mallopt(M_MMAP_THRESHOLD, 256 * 1024); /* every block below mmap'd, given back at free */
    long n = 1L << 20;                     /* 8 MiB of doubles */
    long bad = 0;
    double *grow = malloc(1000 * sizeof(double));
    long glen = 1000;
    if (!grow)
        return 2;
    for (int r = 0; r < ROUNDS; r++) {
        double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
        long nlen = glen + 300007;
        double *g = realloc(grow, nlen * sizeof(double));
        if (!in || !out || !g)
            return 2;
        grow = g;
        glen = nlen;
        double *m = mmap(NULL, n * sizeof(double), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 2;
        for (long i = 0; i < n; i++)
            m[i] = (double)(i % 31) - r;
        for (long i = 0; i < n; i++) {
            in[i] = (double)(i % 977) + 1000.0 * r;
            out[i] = -1.0;
        }
        for (long i = 0; i < glen; i++)
            grow[i] = (double)(i % 13) + r;
        long bs = n / NB;
        for (int b = 0; b < NB; b++) {
            long off = b * bs;
            #pragma omp target device(any) map(to: in[off:bs]) map(from: out[off:bs]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for
            #pragma omp if_device(host) parallel for
            for (long i = off; i < off + bs; i++)
                out[i] = in[i] + 0.5;
        }
        #pragma omp target device(any) map(tofrom: grow[0:glen]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for
        #pragma omp if_device(host) parallel for
        for (long i = 0; i < glen; i++)
            grow[i] *= 2.0;
        #pragma omp target device(any) map(tofrom: m[0:n]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for
        #pragma omp if_device(host) parallel for
        for (long i = 0; i < n; i++)
            m[i] += 3.0;
        #pragma omp taskwait
        for (long i = 0; i < n; i++) {
            double want = (double)(i % 31) - r + 3.0;
            if (m[i] != want) {
                if (bad < 5)
                    printf("round %d: m[%ld] = %g, want %g\n", r, i, m[i], want);
                bad++;
            }
        }
        munmap(m, n * sizeof(double));
        for (long i = 0; i < n; i++) {
            double want = (double)(i % 977) + 1000.0 * r + 0.5;
            if (out[i] != want) {
                if (bad < 5)
                    printf("round %d: out[%ld] = %g, want %g\n", r, i, out[i], want);
                bad++;
            }
        }
        for (long i = 0; i < glen; i++) {
            double want = 2.0 * ((double)(i % 13) + r);
            if (grow[i] != want) {
                if (bad < 5)
                    printf("round %d: grow[%ld] = %g, want %g\n", r, i, grow[i], want);
                bad++;
            }
        }
        free(in);
        free(out);
    }
    free(grow);
    printf("check: %s (%ld bad elements)\n", bad ? "FAIL" : "PASS", bad);
    return bad ? 1 : 0;
}
