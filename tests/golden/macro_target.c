/* MACC_GOLDEN: cpp (through the C preprocessor) */
/* Pragmas made by macros: _Pragma in #define, stringified arguments, nested
 * macros, a target region, a reduction and a taskwait all come from macros. */
int printf(const char *, ...);

#define PRAGMA(x) _Pragma(#x)
#define OFFLOAD(clauses) PRAGMA(omp target teams distribute parallel for clauses)
#define TASKWAIT _Pragma("omp taskwait")
#define N 1000

static double scale(double v) { return 2.0 * v; }

int main(void)
{
    int n = N;
    double a[N], s = 0.0;
    OFFLOAD(map(from: a[0:n]))
    for (int i = 0; i < n; i++)
        a[i] = scale(i);
    PRAGMA(omp target teams distribute parallel for reduction(+: s) map(to: a[0:n]))
    for (int i = 0; i < n; i++)
        s += a[i];
    TASKWAIT
    double want = 2.0 * (N - 1) * N / 2.0;
    if (s != want) {
        printf("FAIL: sum %g, expected %g\n", s, want);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
