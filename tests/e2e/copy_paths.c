/* Sections of every size the CUDA plugin copies differently, at odd offsets
 * and lengths: small (the driver's pageable copy), and 64 KiB or more
 * (staged through a helper's page-locked slots of 512 KiB: a length that is
 * not a whole number of slots, a last slot of a few elements; with
 * MACC_CUDA_PIN_MIN, registered: a page-locked middle with pageable head and
 * tail). Each task reads its section (to), writes another (from)
 * and updates a third (tofrom); two rounds, so the second reads back what
 * the first wrote through the directory, and the host checks every element.
 * Also run with MACC_CUDA_STAGE=0 / MACC_CUDA_PIN_MIN=65536 on the GPU machine. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    /* lengths in doubles: 1000 (8 KB), 9000 (72 KB), 65537 (one slot and 8
     * bytes over), 200003 (3 slots and a bit), 700001 (5.3 MiB) */
    static const long lens[] = {1000, 9000, 65537, 200003, 700001};
    enum { NL = sizeof lens / sizeof lens[0] };
    long total = 0;
    for (int k = 0; k < NL; k++)
        total += lens[k] + 3; /* 3 doubles of gap: odd offsets, untouched */
    double *in = malloc(total * sizeof(double));
    double *out = malloc(total * sizeof(double));
    double *acc = malloc(total * sizeof(double));
    if (!in || !out || !acc)
        return 2;
    for (long i = 0; i < total; i++) {
        in[i] = (double)(i % 1009) + 0.25;
        out[i] = -1.0;
        acc[i] = (double)(i % 7);
    }
    for (int round = 0; round < 2; round++) {
        long off = 1; /* the first section starts one element in */
        for (int k = 0; k < NL; k++) {
            long len = lens[k];
            #pragma omp target device(any) map(to: in[off:len]) map(from: out[off:len]) map(tofrom: acc[off:len]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for
            #pragma omp if_device(host) parallel for
            for (long i = off; i < off + len; i++) {
                out[i] = 2.0 * in[i];
                acc[i] += in[i];
            }
            off += len + 3;
        }
        #pragma omp taskwait
    }
    long bad = 0, off = 1;
    for (int k = 0; k < NL; k++) {
        for (long i = off - 1; i < off + lens[k] + 2 && i < total; i++) {
            int inside = i >= off && i < off + lens[k];
            double v = (double)(i % 1009) + 0.25;
            double want_out = inside ? 2.0 * v : -1.0;
            double want_acc = (double)(i % 7) + (inside ? 2.0 * v : 0.0);
            if (out[i] != want_out || acc[i] != want_acc) {
                if (bad < 5)
                    printf("element %ld (section %d): out %g (want %g), acc %g (want %g)\n", i, k, out[i],
                           want_out, acc[i], want_acc);
                bad++;
            }
        }
        off += lens[k] + 3;
    }
    printf("check: %s (%ld bad elements of %ld)\n", bad ? "FAIL" : "PASS", bad, total);
    free(in);
    free(out);
    free(acc);
    return bad ? 1 : 0;
}
