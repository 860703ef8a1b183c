/* A file with no directives at all: passes through byte for byte.
 * Odd spacing, tabs, trailing comment and a string with "#pragma omp target" in it. */
#include <stdio.h>

static const char *msg = "#pragma omp target map(to: a[0:n])";

int  sum(const int *v,	int n)
{
    int s = 0;   /* not a region */
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

// #pragma omp target teams distribute parallel for
int main(void)
{
    int v[4] = {1, 2, 3, 4};
    printf("%s %d\n", msg, sum(v, 4));
    return 0;
}
