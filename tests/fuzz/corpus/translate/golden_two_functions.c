/* Several functions, each with regions (one function with two, one static):
 * the generated names (macc_k_<func>_L<line>) must all be distinct. */
void first(int n, float *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] += 1.0f;
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] *= 2.0f;
}

void second(int n, float *a)
{
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++)
        a[i] -= 1.0f;
}

static void third(int n, float *a) {
    #pragma omp target teams distribute parallel for map(tofrom: a[0:n])
    for (int i = 0; i < n; i++) a[i] = 0.0f;
}

void call_third(int n, float *a) { third(n, a); }
