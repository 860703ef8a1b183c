// EXPECT: 5: a declare target block inside a function is not supported
/* The block form belongs at file scope. */
void f(void)
{
    #pragma omp declare target
    static int y;
    #pragma omp end declare target
    (void)y;
}
