/* A struct tag and a function of the same name (legal C: tags have their own
 * name space), a struct mapped explicitly and one mapped by default (a region
 * that writes a struct with no clause maps it tofrom). Prints PASS or FAIL. */
#include <stdio.h>
struct test_struct { int a; double b; };
int test_struct(void)
{
    struct test_struct s = {1, 2.0};
    int errors = 0;
    #pragma omp target map(tofrom: s, errors)
    {
        s.a += 1;
        s.b *= 2.0;
    }
    errors += s.a != 2 || s.b != 4.0;
    struct test_struct t = {5, 0.5};
    #pragma omp target
    {
        t.a = 7;
    }
    errors += t.a != 7;
    return errors;
}
int main(void) { int e = test_struct(); printf("%s\n", e ? "FAIL" : "PASS"); return e; }
