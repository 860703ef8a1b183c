// EXPECT: 3: 'declare target' without 'end declare target'
/* A declare target block that is never closed. */
#pragma omp declare target
int g;
void f(int *a)
{
    #pragma omp target map(tofrom: a[0:1])
    a[0] = g;
}
