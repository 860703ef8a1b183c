/* depend(in), depend(out), depend(inout), several items in one clause, and
 * several depend clauses on one target. */
void pipeline(int n, int bs, float *a, float *b, float *c)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target map(from: a[k:bs]) depend(out: a[k:bs]) nowait
        for (int i = k; i < k + bs; i++)
            a[i] = (float)i;

        #pragma omp target map(tofrom: a[k:bs]) depend(inout: a[k:bs]) nowait
        for (int i = k; i < k + bs; i++)
            a[i] *= 2.0f;

        #pragma omp target map(to: a[k:bs]) map(from: b[k:bs], c[k:bs]) depend(in: a[k:bs]) depend(out: b[k:bs], c[k:bs]) nowait
        for (int i = k; i < k + bs; i++) {
            b[i] = a[i] + 1.0f;
            c[i] = a[i] - 1.0f;
        }
    }
    #pragma omp taskwait
}
