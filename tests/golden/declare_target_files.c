/* declare target across files: a global this file only declares (another
 * file defines it: `extern __device__`, not registered here), one it defines
 * (registered, reached by other files' kernels), a static one (the file's
 * own), a function another file defines (an `extern "C" __device__`
 * prototype, called as macc_d_<name>), one this file defines for others (a C
 * name), a static one and an inline one (the file's own). */
#pragma omp declare target
extern double gain;          /* another file's */
extern int calls;            /* another file's */
double bias = 0.25;          /* this file's, for every file */
static int seen;             /* this file's own */
double shape(double x);      /* another file's */
double blend(double x) { return shape(x) * gain + bias; }
static double twice(double x) { return 2.0 * x; }
inline double half(double x) { return 0.5 * x; }
#pragma omp end declare target

double combine(double x);    /* another file's, no directive here */

void apply(int n, double *y)
{
    #pragma omp target teams distribute parallel for map(tofrom: y[0:n])
    for (int i = 0; i < n; i++)
        y[i] = blend(y[i]) + twice(half(y[i])) + combine(y[i]);
    #pragma omp target
    {
        calls++;
        seen++;
    }
}
