/* Many reduction variables of one loop (one shared scratch for all the block
 * combines), and reductions in team kernels: of an inner loop into a mapped
 * scalar (combined atomically per team) and of teams distribute. */
void many(int n, const double *a, double *out)
{
    double dsum = 0.0, dmax = -1.0, dmin = 1e9, dprod = 1.0;
    float fsum = 0.0f;
    long long lsum = 0;
    unsigned long long uor = 0;
    int imax = -1, iand = -1, ixor = 0, land = 1, lor = 0;
    short smin = 30000;
    char cmax = 0;
    #pragma omp target teams distribute parallel for map(to: a[0:n]) reduction(+: dsum, fsum, lsum) \
        reduction(max: dmax, imax, cmax) reduction(min: dmin, smin) reduction(*: dprod) \
        reduction(|: uor) reduction(&: iand) reduction(^: ixor) reduction(&&: land) reduction(||: lor)
    for (int i = 0; i < n; i++) {
        dsum += a[i];
        fsum += 1.0f;
        lsum += i;
        dmax = dmax > a[i] ? dmax : a[i];
        imax = imax > i % 777 ? imax : i % 777;
        cmax = cmax > (char)(i % 100) ? cmax : (char)(i % 100);
        dmin = dmin < a[i] ? dmin : a[i];
        smin = smin < (short)(i % 300) ? smin : (short)(i % 300);
        dprod *= a[i];
        uor |= 1ULL << (i % 64);
        iand &= ~(1 << (i % 16));
        ixor ^= i;
        land = land && a[i] >= 0;
        lor = lor || a[i] > 10;
    }
    out[0] = dsum + dmax + dmin + dprod + fsum + lsum + uor + imax + iand + ixor + land + lor + smin + cmax;

    long long total = 10;
    int calls = 0;
    #pragma omp target map(tofrom: total, calls) map(to: a[0:n])
    {
        calls += 1;
        #pragma omp parallel for reduction(+: total)
        for (int i = 0; i < n; i++)
            total += (long long)a[i];
        calls += 1;
    }

    double grand = 1.0;
    int most = 0;
    #pragma omp target teams distribute reduction(+: grand) reduction(max: most) map(to: a[0:n])
    for (int r = 0; r < 40; r++) {
        double row = 0.0;
        #pragma omp parallel for reduction(+: row)
        for (int j = 0; j < n; j++)
            row += a[j];
        grand += row;
        most = r > most ? r : most;
    }
    out[1] = total + calls + grand + most;
}
