/* declare target: a block, begin/end, lists (to, enter, link), device_type,
 * indirect. Declare target functions get __device__ copies even when no
 * region calls them; globals get device variables (macc_g_<name>) used by
 * kernels and device functions, registered by the host file. */
struct pt { double x, y; };

#pragma omp declare target
double table[64];
int counter = 5;
static struct pt origin = {1.0, 2.0};
static double shift(double v) { return v + origin.x + counter; }
#pragma omp end declare target

#pragma omp begin declare target device_type(any) indirect
int unused_on_device(int v) { return v * 3; }
#pragma omp end declare target

int lut[16] = {1, 2, 3};
int bias = 4;
long hits;
#pragma omp declare target enter(lut) link(bias)
#pragma omp declare target(hits)

int host_only(int v) { return v - 1; }
#pragma omp declare target to(host_only) device_type(host)

static int lookup(int i) { return lut[i % 16] + bias; }
#pragma omp declare target to(lookup) device_type(nohost)

void run(int n, double *out)
{
    #pragma omp target update to(table, lut)
    #pragma omp target teams distribute parallel for map(from: out[0:n]) map(to: bias)
    for (int i = 0; i < n; i++)
        out[i] = shift(table[i % 64]) + lookup(i);
    #pragma omp target
    {
        counter = 7;
        hits++;
        table[0] = -1.0;
    }
    #pragma omp target update from(counter, table[0:1])
    #pragma omp target map(tofrom: counter) firstprivate(hits)
    counter += (int)hits;
    for (int i = 0; i < n; i++)
        out[i] += host_only(i);
}
