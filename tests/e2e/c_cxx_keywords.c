/* Identifiers that are C++ keywords: locals, parameters, a struct's fields
 * and an enumerator, used in a region and a function it calls. */
#include <stdio.h>

enum kind { old, new, class };
struct item { double this; int or; enum kind template; };

static double weigh(const struct item *it, double not)
{
    return it->this * not + (it->template == class);
}

int main(void)
{
    struct item items[100];
    for (int i = 0; i < 100; i++) {
        items[i].this = i;
        items[i].or = i % 3;
        items[i].template = (enum kind)(i % 3);
    }
    double out[100];
    #pragma omp target teams distribute parallel for map(to: items[0:100]) map(from: out[0:100])
    for (int i = 0; i < 100; i++) {
        double delete = 2;
        int and = items[i].or;
        out[i] = weigh(&items[i], delete) + and;
    }
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad += out[i] != 2.0 * i + (i % 3 == 2) + i % 3;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
