/* target teams distribute: one iteration per team's initial thread; the inner
 * loop runs sequentially in each team. */
void scale_rows(int rows, int cols, double *m, double f)
{
    #pragma omp target teams distribute map(tofrom: m[0:rows*cols])
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            m[r * cols + c] *= f;
    }
}
