// MACC_FLAGS: -Ofast -DNTD=4 -Wno-discarded-qualifiers -Wno-unknown-pragmas
/* C that nvcc's C++ front end reads differently, built with the default
 * targets (nvcc compiles the device file where installed) and run: a const
 * pointer passed to a plain pointer parameter, void * and int stored into
 * pointers and enums, C++ keywords as names of fields, enumerators, locals
 * and parameters, assert in a called function, an array element in
 * parentheses from a macro (not a cast), a call through a parenthesised
 * name, a foreign pragma with a macro from -D, and -Ofast (nvcc gets -O3
 * --use_fast_math). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#define AT(a, i) (a[(i)])

typedef enum { OLD, new, class } kind_t;
struct node { double this; int or; kind_t kind; };

static double get(double *p, int i) { return p[i]; }

static double scale(struct node *restrict n, double not)
{
    assert(not >= 0);
    void *raw = n;
    struct node *q = raw;
    kind_t k = q->or % 3;
    return q->this * not + (k == class);
}

static kind_t next_kind(kind_t k) { return (k + 1) % 3; }

int main(void)
{
    enum { N = 1000 };
    struct node *nodes = malloc(N * sizeof *nodes);
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    for (int i = 0; i < N; i++) {
        nodes[i] = (struct node){.this = 0.5, .or = i, .kind = (kind_t)(i % 3)};
        x[i] = i;
    }
    const double *cx = x;
    #pragma omp target teams distribute parallel for map(tofrom: nodes[0:N]) map(to: cx[0:N]) map(from: z[0:N])
    for (int i = 0; i < N; i++) {
        double delete = 0;
        #pragma unroll(NTD)
        for (int j = 0; j < NTD; j++)
            delete += j;
        delete += AT(cx, i) - 0.5 * AT(cx, i) + get(cx, i);
        nodes[i].kind = next_kind(nodes[i].kind);
        z[i] = (scale)(&nodes[i], delete);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double d = 6 + 1.5 * i;
        double want = 0.5 * d + (i % 3 == 2);
        if (z[i] != want || nodes[i].kind != (kind_t)((i % 3 + 1) % 3))
            bad++;
    }
    printf("c_to_cxx: %s\n", bad ? "FAILED" : "ok");
    free(nodes);
    free(x);
    free(z);
    return bad != 0;
}
