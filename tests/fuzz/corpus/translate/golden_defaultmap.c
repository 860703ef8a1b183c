/* defaultmap: tofrom/to/from/alloc for scalars (written back or not),
 * aggregate (structs and arrays: tofrom, firstprivate), pointer, none with
 * every variable named, firstprivate and a loop bound mapped tofrom. */
typedef struct { int hits; double sum; } stats;

void dm(int n, double *p)
{
    int s = 0, keep = 7;
    double d = 1.0;
    #pragma omp target defaultmap(tofrom: scalar) firstprivate(keep)
    {
        s = 42 + keep;
        d *= 2.5;
    }

    int lastv = -1;
    #pragma omp target teams distribute parallel for defaultmap(tofrom: scalar)
    for (int i = 0; i < n; i++)
        if (i == n - 1)
            lastv = i;

    int in = 3, out = 0;
    #pragma omp target defaultmap(to: scalar) map(from: out)
    out = in * 2;

    stats st = {0, 0.0};
    int arr[16];
    #pragma omp target defaultmap(tofrom: aggregate)
    {
        st.hits = 5;
        arr[0] = 1;
    }
    #pragma omp target defaultmap(firstprivate: aggregate) defaultmap(alloc: scalar)
    {
        arr[0] = 100;
        s = arr[1];
    }
    #pragma omp target defaultmap(none) defaultmap(firstprivate: pointer) map(tofrom: s) firstprivate(n)
    {
        if (n > 0)
            s = (int)p[0];
    }
    p[0] = s + lastv + out + st.hits + arr[0] + d;
}
