/* Nested parallel OpenACC loops, collapsed into one loop over all of them
 * (kernels with loop independent on both loops, parallel with gang, worker
 * and vector loops and a min reduction, bare loops of a parallel construct,
 * a tile(32,32) nest), beside nests that keep their inner loop (a vector loop
 * with its own reduction, a sequential inner loop). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 300, m = 200;
    double *a = malloc(n * m * sizeof *a), *b = malloc(n * m * sizeof *b), *s = malloc(n * sizeof *s);
    for (int i = 0; i < n * m; i++)
        b[i] = (i % 17) - 3;
    double mn = 1e30;
    #pragma acc kernels copyin(b[0:n*m]) copyout(a[0:n*m])
    #pragma acc loop independent
    for (int i = 0; i < n; i++) {
        #pragma acc loop independent
        for (int j = 0; j < m; j++)
            a[i * m + j] = 2 * b[i * m + j] + j;
    }
    #pragma acc parallel loop gang copyin(b[0:n*m]) reduction(min: mn)
    for (int i = 0; i < n; i++) {
        #pragma acc loop worker
        for (int j = 0; j < m; j++) {
            #pragma acc loop vector
            for (int k = 0; k < 4; k++) {
                double v = b[i * m + j] * (k + 1) + i;
                mn = v < mn ? v : mn;
            }
        }
    }
    #pragma acc parallel loop gang copyin(b[0:n*m]) copyout(s[0:n])
    for (int i = 0; i < n; i++) {
        double t = 0;
        #pragma acc loop vector reduction(+: t)
        for (int j = 0; j < m; j++)
            t += b[i * m + j];
        s[i] = t;
    }
    #pragma acc parallel loop copy(a[0:n*m])
    for (int i = 0; i < n; i++) {
        #pragma acc loop seq
        for (int j = 1; j < m; j++)
            a[i * m + j] += a[i * m + j - 1];
    }
    /* bare loops in a parallel construct: independent, collapsed */
    double *c = malloc(n * m * sizeof *c), *d = malloc(n * m * sizeof *d);
    #pragma acc data copyin(b[0:n*m]) copyout(c[0:n*m], d[0:n*m])
    {
        #pragma acc parallel
        {
            /* a comment before the loop */
            #pragma acc loop
            for (int i = 0; i < n; i++)
                #pragma acc loop
                for (int j = 0; j < m; j++)
                    c[i * m + j] = b[i * m + j] * i - j;
        }
        /* tile: the two loops, one collapsed loop; the edges left out */
        #pragma acc parallel loop tile(32, 32)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++)
                d[i * m + j] = (i > 0 && j > 0 && i < n - 1 && j < m - 1) ? b[(i - 1) * m + j] + b[i * m + j + 1] : -1;
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            bad += c[i * m + j] != b[i * m + j] * i - j;
            bad += d[i * m + j] != ((i > 0 && j > 0 && i < n - 1 && j < m - 1) ? b[(i - 1) * m + j] + b[i * m + j + 1] : -1);
        }
    free(c);
    free(d);
    double want_mn = 1e30;
    for (int i = 0; i < n; i++) {
        double t = 0, run = 0;
        for (int j = 0; j < m; j++) {
            t += b[i * m + j];
            run += 2 * b[i * m + j] + j;
            bad += a[i * m + j] != run;
            for (int k = 0; k < 4; k++) {
                double v = b[i * m + j] * (k + 1) + i;
                want_mn = v < want_mn ? v : want_mn;
            }
        }
        bad += s[i] != t;
    }
    bad += mn != want_mn;
    printf("%s (min %g, expected %g)\n", bad ? "FAIL" : "PASS", mn, want_mn);
    free(a);
    free(b);
    free(s);
    return bad != 0;
}
