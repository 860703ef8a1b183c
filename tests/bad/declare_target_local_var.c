// EXPECT: 6: 'x' is a local variable: declare target takes globals and functions
/* declare target inside a function names a local variable. */
void f(void)
{
    int x = 0;
    #pragma omp declare target(x)
    (void)x;
}
