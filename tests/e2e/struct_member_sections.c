/* A struct passed by value whose pointer members are mapped as array
 * sections (XSBench's shape: map(to: SD.a[:SD.na]) with SD a parameter):
 * the kernel's copy of the struct points at the device's sections, as
 * OpenMP attaches them; a scalar member mapped alongside; a member section
 * of zero length that the kernel never reads. */
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int na, nb, nz;
    double *a;
    int *b;
    double *unused;
} Data;

static long run(Data D, int n)
{
    long *out = malloc(n * sizeof *out);
    #pragma omp target teams distribute parallel for map(to: D.nb) map(to: D.a[:D.na]) map(to: D.b[:D.nb]) \
        map(to: D.unused[:D.nz]) map(from: out[:n])
    for (int i = 0; i < n; i++)
        out[i] = (long)D.a[i % D.na] + D.b[i % D.nb];
    long s = 0;
    for (int i = 0; i < n; i++)
        s += out[i];
    free(out);
    return s;
}

int main(void)
{
    Data D = {100, 7, 0, NULL, NULL, NULL};
    D.a = malloc(D.na * sizeof *D.a);
    D.b = malloc(D.nb * sizeof *D.b);
    for (int i = 0; i < D.na; i++)
        D.a[i] = i;
    for (int i = 0; i < D.nb; i++)
        D.b[i] = 1000 * i;
    int n = 10000;
    long want = 0;
    for (int i = 0; i < n; i++)
        want += (long)D.a[i % D.na] + D.b[i % D.nb];
    long got = run(D, n);
    printf("%s (%ld, expected %ld)\n", got == want ? "PASS" : "FAIL", got, want);
    free(D.a);
    free(D.b);
    return got != want;
}
