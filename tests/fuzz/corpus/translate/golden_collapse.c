/* collapse(2) and collapse(3). */
void fill(int ni, int nj, int nk, double *a, double *b)
{
    #pragma omp target teams distribute parallel for collapse(2) map(from: a[0:ni*nj])
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            a[i * nj + j] = i + j;

    #pragma omp target teams distribute parallel for collapse(3) map(from: b[0:ni*nj*nk])
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            for (int k = 0; k < nk; k++)
                b[(i * nj + j) * nk + k] = i * j + k;
}
