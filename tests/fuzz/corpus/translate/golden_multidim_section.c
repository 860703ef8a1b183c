/* Sections of a row of a 2-D array, a[i][0:n], in map and depend, and a whole
 * 2-D array section a[0:rows][0:COLS]. */
#define ROWS 64
#define COLS 128

void rows(double (*a)[COLS], int nrows)
{
    for (int i = 0; i < nrows; i++) {
        #pragma omp target map(tofrom: a[i][0:COLS]) depend(inout: a[i][0:COLS]) nowait
        #pragma omp if_device(nvidia) teams distribute parallel for
        #pragma omp if_device(host) parallel for
        for (int j = 0; j < COLS; j++)
            a[i][j] = a[i][j] * 2.0 + i;
    }
    #pragma omp taskwait

    #pragma omp target teams distribute parallel for collapse(2) map(tofrom: a[0:nrows][0:COLS])
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < COLS; j++)
            a[i][j] += 1.0;
}
