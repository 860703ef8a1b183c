/* private and firstprivate on target; private, firstprivate and lastprivate
 * in the construct-set. */
int privates(int n, int *v, int base)
{
    int t = 0, scale = 3, last = -1;

    #pragma omp target firstprivate(base) private(t) map(tofrom: v[0:n])
    {
        t = base * 2;
        v[0] = t;
    }

    #pragma omp target teams distribute parallel for private(t) firstprivate(scale) lastprivate(last) map(tofrom: v[0:n])
    for (int i = 0; i < n; i++) {
        t = v[i] * scale;
        v[i] = t;
        last = t;
    }
    return last;
}
