/* MACC_GOLDEN: cpp
 * C that nvcc's C++ front end reads differently, in a kernel and the
 * functions it calls: identifiers that are C++ keywords (a struct's fields,
 * an enumerator, parameters, locals), void * and int stored into pointers
 * and enums, a parenthesised array element read as a cast by the grammar, a
 * call through a parenthesised name, assert, and foreign pragmas whose
 * argument is a macro (expanded as the C compiler would), GCC's unroll as
 * CUDA's. */
#include <assert.h>
#include <stdlib.h>

#define NTD 4
#define AT(a, i) (a[(i)])

typedef enum { OLD, new, class } kind_t;
struct node { double this; int or; kind_t kind; };

static double scale(struct node *restrict p, double not)
{
    assert(not >= 0);
    void *raw = p;
    struct node *q = raw;
    kind_t k = q->or + 1;
    return q->this * not + (k == class);
}

static kind_t next_kind(kind_t k) { return (k + 1) % 3; }

void run(struct node *nodes, double *x, double *z, int n)
{
    #pragma omp target teams distribute parallel for map(tofrom: nodes[0:n]) map(to: x[0:n]) map(from: z[0:n])
    for (int i = 0; i < n; i++) {
        double delete = 0;
        #pragma unroll(NTD)
        for (int j = 0; j < NTD; j++)
            delete += j;
        #pragma GCC unroll 2
        for (int j = 0; j < 2; j++)
            delete += AT(x, i) - 0.5 * AT(x, i);
        nodes[i].kind = next_kind(nodes[i].kind);
        z[i] = (scale)(&nodes[i], delete);
    }
}
