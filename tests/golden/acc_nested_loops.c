/* MACC_GOLDEN: info
 * Nested parallel OpenACC loops: collapsed into one loop over all of them
 * (the innermost index fastest across CUDA threads, as NVHPC's gang/vector
 * mapping makes neighbouring threads touch neighbouring elements), and the
 * nests that stay as they are: an inner loop with a clause of its own, a
 * triangular nest, a sequential inner loop. */
void nests(int n, int m, double *restrict a, const double *restrict b, double *restrict s)
{
    double mn = 1e30;
    #pragma acc kernels copyin(b[0:n*m]) copyout(a[0:n*m])
    #pragma acc loop independent
    for (int i = 0; i < n; i++) {
        #pragma acc loop independent
        for (int j = 0; j < m; j++)
            a[i * m + j] = 2 * b[i * m + j];
    }
    #pragma acc parallel loop gang copyin(b[0:n*m]) reduction(min: mn)
    for (int i = 0; i < n; i++) {
        #pragma acc loop worker
        for (int j = 0; j < m; j++) {
            #pragma acc loop vector
            for (int k = 0; k < 4; k++) {
                double v = b[i * m + j] + k;
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
        #pragma acc loop
        for (int j = 0; j < i && j < m; j++)
            a[i * m + j] = 0;
    }
    #pragma acc parallel loop copy(a[0:n*m])
    for (int i = 0; i < n; i++) {
        #pragma acc loop seq
        for (int j = 1; j < m; j++)
            a[i * m + j] += a[i * m + j - 1];
    }
    s[0] += mn;
}
