// EXPECT: 5: 'target data' needs a 'map', 'use_device_ptr' or 'use_device_addr' clause
/* target data needs a data clause. */
void f(double *x)
{
    #pragma omp target data device(0)
    x[0] = 1.0;
}
