/* MACC_GOLDEN: cpp (through the C preprocessor) */
/* _Pragma in macro bodies, outside any region: the GCC pragma passes through
 * as a macro; the OpenMP loop directive, one of ours, becomes a #pragma line. */
#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(GCC unroll n)
#define HOST_PARALLEL_FOR _Pragma("omp parallel for")

void host_only(int n, double *v)
{
    UNROLL(4)
    for (int i = 0; i < n; i++)
        v[i] += 1.0;

    HOST_PARALLEL_FOR
    for (int i = 0; i < n; i++)
        v[i] *= 2.0;
}
