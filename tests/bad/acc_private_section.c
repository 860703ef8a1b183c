// EXPECT: 6: private of an array section on 'acc parallel' is not supported
/* each gang of acc parallel would need its own copy of the section */
void f(int n, double *a, double *c)
{
    #pragma acc data copy(a[0:10*n])
    #pragma acc parallel num_gangs(10) private(c[0:n])
    {
        #pragma acc loop gang
        for (int x = 0; x < 10; ++x)
            for (int y = 0; y < n; ++y) {
                c[y] = x;
                a[x * n + y] = c[y];
            }
    }
}
