// EXPECT: 11: 's.p' in 'use_device_ptr' must be a variable
/* use_device_ptr and use_device_addr take variables, not members. */
struct s {
    double *p;
    int n;
};
void lib(double *p, int n);

void f(struct s s)
{
    #pragma omp target data map(tofrom: s.p[0:s.n]) use_device_ptr(s.p)
    lib(s.p, s.n);
}
