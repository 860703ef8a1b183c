// EXPECT: 10: taskwait
/* taskwait takes no untied clause. */
void f(int n, int bs, double *a)
{
    for (int k = 0; k < n; k += bs) {
        #pragma omp target teams distribute parallel for map(tofrom: a[k:bs]) nowait
        for (int i = k; i < k + bs; i++)
            a[i] += 1.0;
    }
    #pragma omp taskwait untied
}
