// EXPECT: 9: dispatch must be followed by a call statement
/* The dispatch construct applies to a call statement. */
int g(int x);
#pragma omp declare variant(g) match(construct={dispatch})
int f(int x);
int h(int x)
{
    int r = 0;
    #pragma omp dispatch
    r += x;
    return r + f(x);
}
