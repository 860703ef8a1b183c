/* private (on if_device lines), firstprivate and lastprivate arrays: per thread in a loop kernel, per task
 * on a target block, per team in a teams distribute with loops inside; on the
 * host an array again (not a pointer), so that the host construct copies it. */
void arrays(int *out, int n)
{
    int t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    #pragma omp target teams distribute parallel for firstprivate(t) map(from: out[0:n])
    for (int i = 0; i < n; i++) {
        t[i % 8] += i;
        out[i] = t[i % 8];
    }

    double w[4][2] = {{0.5, 1.5}, {2.5, 3.5}, {4.5, 5.5}, {6.5, 7.5}};
    #pragma omp target device(any) map(from: out[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for firstprivate(w)
    #pragma omp if_device(host) parallel for firstprivate(w)
    for (int i = 0; i < n; i++)
        out[i] = (int)w[i % 4][i % 2];

    int scratch[4];
    #pragma omp target device(any) map(from: out[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for private(scratch)
    #pragma omp if_device(host) parallel for private(scratch)
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++)
            scratch[k] = i + k;
        out[i] = scratch[0] + scratch[3];
    }

    int base[4] = {10, 20, 30, 40};
    int res[2];
    #pragma omp target firstprivate(base) map(from: res)
    {
        base[0] += 5;
        res[0] = base[0];
        res[1] = base[1];
    }

    int g[4] = {1, 1, 1, 1};
    #pragma omp target teams distribute firstprivate(g) map(from: out[0:n])
    for (int r = 0; r < n; r++) {
        g[0] = r;
        int s = 0;
        #pragma omp parallel for reduction(+: s)
        for (int j = 0; j < 100; j++)
            s += g[j % 4];
        out[r] = s;
    }

    int last[3];
    #pragma omp target teams distribute parallel for lastprivate(last)
    for (int i = 0; i < n; i++) {
        last[0] = i;
        last[1] = 2 * i;
        last[2] = i % 7;
    }
    out[0] = last[0] + last[1] + last[2];

    int lt[2] = {0, 0};
    #pragma omp target teams distribute lastprivate(lt)
    for (int r = 0; r < 50; r++) {
        lt[0] = r;
        #pragma omp parallel for
        for (int j = 0; j < 4; j++)
            if (j == 0)
                lt[1] = r;
    }
    out[1] = lt[0] + lt[1];
}
