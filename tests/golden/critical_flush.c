/* #pragma omp critical (unnamed and named, with an atomic inside), flush,
 * atomics on a thread's own variables (plain statements), atomics in a
 * function the region calls, and in a teams region: on a variable of the
 * team (shared memory) and at the top of the team body (thread 0). */
static void bump(int *h, int k)
{
    int local = 0;
    #pragma omp atomic
    h[k]++;
    #pragma omp atomic
    local++;
    #pragma omp flush
    (void)local;
}

int loops(const int *a, int *h, int n)
{
    int total = 0;
    #pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: total, h[0:16])
    for (int i = 0; i < n; i++) {
        int loc = 0;
        #pragma omp atomic
        loc += a[i];
        if (a[i] > 0) {
            #pragma omp atomic
            total += loc;
        }
        #pragma omp critical
        {
            total += 1;
            #pragma omp atomic
            total -= 1;
        }
        #pragma omp critical (other) hint(0)
        total += 0;
        #pragma omp flush
        bump(h, a[i] & 15);
    }
    return total;
}

void teams(const double *a, double *out, int n, int m)
{
    int hits = 0;
    #pragma omp target teams distribute map(to: a[0:n*m]) map(from: out[0:n]) map(tofrom: hits)
    for (int i = 0; i < n; i++) {
        int cnt = 0;
        #pragma omp parallel for
        for (int j = 0; j < m; j++) {
            if (a[i * m + j] > 0) {
                #pragma omp atomic
                cnt++;
            }
        }
        out[i] = cnt;
        #pragma omp atomic
        hits += 1;
        #pragma omp critical
        { hits += 0; }
    }
}
