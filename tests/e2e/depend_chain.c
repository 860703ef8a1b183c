/* Chains of nowait tasks ordered only by depend clauses (flow, anti and
 * output dependences, on sections of blocks and across neighbouring blocks),
 * then taskwait. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define BS 512

int main(void)
{
    int n = N;
    long *a = malloc(n * sizeof(long));
    long *b = malloc(n * sizeof(long));
    long *c = malloc(n * sizeof(long));
    long *e = malloc(n * sizeof(long));
    for (int i = 0; i < n; i++)
        a[i] = b[i] = c[i] = e[i] = -7;

    for (int rep = 0; rep < 3; rep++) {
        for (int k = 0; k < n; k += BS) {
            /* out: a = i + rep */
            #pragma omp target device(any) map(from: a[k:BS]) depend(out: a[k:BS]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for resources(10)
            #pragma omp if_device(host) parallel for resources(30)
            for (int i = k; i < k + BS; i++)
                a[i] = i + rep;

            /* inout: a = 2a + 1 */
            #pragma omp target device(any) map(tofrom: a[k:BS]) depend(inout: a[k:BS]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for resources(10)
            #pragma omp if_device(host) parallel for resources(30)
            for (int i = k; i < k + BS; i++)
                a[i] = 2 * a[i] + 1;

            /* in a, out b and e: b = e = a * 3 */
            #pragma omp target device(any) map(to: a[k:BS]) map(from: b[k:BS], e[k:BS]) depend(in: a[k:BS]) depend(out: b[k:BS], e[k:BS]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for resources(10)
            #pragma omp if_device(host) parallel for resources(30)
            for (int i = k; i < k + BS; i++)
                b[i] = e[i] = a[i] * 3;

            /* anti-dependence: overwrite a after b has read it */
            #pragma omp target device(any) map(from: a[k:BS]) depend(out: a[k:BS]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for resources(10)
            #pragma omp if_device(host) parallel for resources(30)
            for (int i = k; i < k + BS; i++)
                a[i] = -1;
        }
        /* c reads block k of b and the next block of e: depends on both. */
        for (int k = 0; k < n; k += BS) {
            int kn = (k + BS) % n;
            #pragma omp target device(any) map(to: b[k:BS], e[kn:BS]) map(from: c[k:BS]) depend(in: b[k:BS], e[kn:BS]) depend(out: c[k:BS]) nowait
            #pragma omp if_device(nvidia) teams distribute parallel for resources(10)
            #pragma omp if_device(host) parallel for resources(30)
            for (int i = k; i < k + BS; i++)
                c[i] = b[i] + e[kn + (i - k)];
        }
    }
    #pragma omp taskwait

    for (int i = 0; i < n; i++) {
        long bi = (2L * (i + 2) + 1) * 3;
        int in = (i + BS) % n;
        long bn = (2L * (in + 2) + 1) * 3;
        if (a[i] != -1 || b[i] != bi || c[i] != bi + bn) {
            printf("FAIL: i=%d a=%ld b=%ld (want %ld) c=%ld (want %ld)\n", i, a[i], b[i], bi, c[i], bi + bn);
            return 1;
        }
    }
    free(a);
    free(b);
    free(c);
    free(e);
    printf("PASS\n");
    return 0;
}
