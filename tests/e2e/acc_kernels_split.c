/* An OpenACC kernels construct whose block holds several statements (the
 * OpenACC tutorial's Laplace solver): each loop nest becomes a kernel of its
 * own, parallelised with the max reduction the analysis finds (also under
 * `acc loop independent`), the other statements run as one-thread kernels,
 * a declaration stays on the host, and the data clauses make a data
 * construct around them. Checked against the same iterations run serially. */
#include <math.h>
#include <stdio.h>

#define N 130

static double A[N][N], Anew[N][N], R[N][N], Rnew[N][N];

int main(void)
{
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            A[j][i] = R[j][i] = (j == 0) ? 1.0 : 0.0;
    double error = 1.0;
    int iter = 0, steps = 0;
    #pragma acc data copy(A) create(Anew)
    while (error > 1e-4 && iter < 300) {
        #pragma acc kernels present(A, Anew) copy(steps)
        {
            error = 0.0;
            double w = 0.25; /* a declaration: stays on the host */
            #pragma acc loop independent
            for (int j = 1; j < N - 1; j++)
                for (int i = 1; i < N - 1; i++) {
                    Anew[j][i] = w * (A[j][i + 1] + A[j][i - 1] + A[j - 1][i] + A[j + 1][i]);
                    error = fmax(error, fabs(Anew[j][i] - A[j][i]));
                }
            for (int j = 1; j < N - 1; j++)
                for (int i = 1; i < N - 1; i++)
                    A[j][i] = Anew[j][i];
            steps = steps + 1;
            A[0][0] = A[0][0] + 1.0;
        }
        iter++;
    }
    /* the same, serially */
    double rerr = 1.0;
    int riter = 0;
    while (rerr > 1e-4 && riter < 300) {
        rerr = 0.0;
        for (int j = 1; j < N - 1; j++)
            for (int i = 1; i < N - 1; i++) {
                Rnew[j][i] = 0.25 * (R[j][i + 1] + R[j][i - 1] + R[j - 1][i] + R[j + 1][i]);
                rerr = fmax(rerr, fabs(Rnew[j][i] - R[j][i]));
            }
        for (int j = 1; j < N - 1; j++)
            for (int i = 1; i < N - 1; i++)
                R[j][i] = Rnew[j][i];
        R[0][0] += 1.0;
        riter++;
    }
    int bad = iter != riter || steps != riter || fabs(error - rerr) > 1e-12;
    for (int j = 0; j < N && !bad; j++)
        for (int i = 0; i < N; i++)
            if (fabs(A[j][i] - R[j][i]) > 1e-12) {
                printf("FAIL: A[%d][%d] = %.17g, want %.17g\n", j, i, A[j][i], R[j][i]);
                bad = 1;
                break;
            }
    printf("iterations %d (serial %d), steps %d, error %.6g (serial %.6g)\n", iter, riter, steps, error, rerr);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
