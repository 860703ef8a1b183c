// EXPECT: 5: uses_allocators
/* uses_allocators with traits: a user-defined allocator is not supported */
void f(int n, double *a) {
    omp_alloctrait_t t[1];
    #pragma omp target uses_allocators(my(t)) map(tofrom: a[0:n])
    for (int i = 0; i < n; i++) a[i] = 0;
}
