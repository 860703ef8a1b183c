/* acc enter data copyin/create, acc update device/self/host, acc exit data
 * copyout/delete (with finalize), acc wait. */
void acc_dynamic(int n, double *x, double *y)
{
    #pragma acc enter data copyin(x[0:n]) create(y[0:n])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        y[i] = x[i] + 1.0;
    #pragma acc update self(y[0:n])
    x[0] = y[0];
    #pragma acc update device(x[0:1])
    #pragma acc update host(y[0:n/2])
    #pragma acc wait
    #pragma acc exit data copyout(y[0:n]) delete(x[0:n])
    #pragma acc enter data copyin(x[0:n])
    #pragma acc exit data delete(x[0:n]) finalize
}
