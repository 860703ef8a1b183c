/* util.c: no target region, only declare target code that other files'
 * kernels call, and a declare target link array that main.c maps. */
#include "multi.h"

#pragma omp declare target
double offset(double x) { return 0.5 * x; }
#pragma omp end declare target

double weights[4] = {1.0, 2.0, 3.0, 4.0};
#pragma omp declare target link(weights)
