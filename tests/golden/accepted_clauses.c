/* Clauses accepted with no effect on the translation (default data-sharing,
 * predefined allocators, alignment and non-temporal hints), the task
 * modifier of reduction, and taskwait with depend / nowait. */
void f(int n, double *a, double *b)
{
    double s = 0.0;
    int k = 3;
    #pragma omp target teams distribute parallel for default(shared) map(tofrom: a[0:n]) map(to: b[0:n]) \
        uses_allocators(omp_default_mem_alloc) allocate(omp_default_mem_alloc: k) firstprivate(k) \
        reduction(task, +: s) nontemporal(a) nowait depend(out: a[0:n])
    for (int i = 0; i < n; i++) {
        a[i] += k * b[i];
        s += a[i];
    }
    #pragma omp taskwait depend(in: a[0:n])
    #pragma omp target parallel for simd aligned(a: 64) default(none) shared(a, n) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] *= 2.0;
    #pragma omp taskwait nowait
    b[0] = s;
}
