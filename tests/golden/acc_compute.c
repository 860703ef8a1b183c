/* OpenACC compute constructs: parallel loop (gang vector, a reduction),
 * parallel with a gang loop, serial, kernels loops (a max reduction found,
 * a dependence kept sequential), async/wait, acc atomic. */
#include <math.h>

void laplace(int n, double (*restrict A)[64], double (*restrict Anew)[64], double *err)
{
    double error = 0.0;
#pragma acc kernels copyin(A[0:n]) copyout(Anew[0:n])
    for (int j = 1; j < n - 1; j++)
        for (int i = 1; i < 63; i++) {
            Anew[j][i] = 0.25 * (A[j][i + 1] + A[j][i - 1] + A[j - 1][i] + A[j + 1][i]);
            error = fmax(error, fabs(Anew[j][i] - A[j][i]));
        }
    *err = error;
}

double compute(int n, float *restrict a, float *restrict b)
{
    double sum = 0.0;
    int count = 0;
#pragma acc parallel loop gang vector copyin(a[0:n]) copyout(b[0:n]) async(1)
    for (int i = 0; i < n; i++)
        b[i] = 2.0f * a[i];
#pragma acc parallel loop reduction(+:sum) copyin(b[0:n]) wait(1)
    for (int i = 0; i < n; i++)
        sum += b[i];
#pragma acc parallel num_gangs(4) vector_length(64) copy(a[0:n])
    {
#pragma acc loop gang
        for (int i = 0; i < n; i++)
            a[i] += 1.0f;
    }
#pragma acc serial copy(a[0:n])
    {
        for (int i = 1; i < n; i++)
            a[i] += a[i - 1];
    }
#pragma acc kernels copy(b[0:n])
    for (int i = 1; i < n; i++)
        b[i] = b[i - 1] + 1.0f;
#pragma acc parallel loop copy(count)
    for (int i = 0; i < n; i++) {
#pragma acc atomic update
        count += 1;
    }
    return sum + count;
}
