// EXPECT: 7: is used in a target region
/* allocate of a variable that a target region then uses. */
int f(void)
{
    int x[16];
    int s = 0;
    #pragma omp allocate(x)
    #pragma omp target map(tofrom: s)
    for (int i = 0; i < 16; i++)
        s += x[i];
    return s;
}
