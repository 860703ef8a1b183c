// EXPECT: 9: copyin
/* acc exit data does not take copyin. */
void f(int n, double *a)
{
    #pragma acc enter data copyin(a[0:n])
    #pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
        a[i] += 1.0;
    #pragma acc exit data copyin(a[0:n])
}
