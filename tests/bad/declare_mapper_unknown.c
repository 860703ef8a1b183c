// EXPECT: 9: no mapper named 'nope'
/* map(mapper(id), ...) naming a mapper that no declare mapper declares. */
typedef struct vec { int n; double *d; } vec_t;

#pragma omp declare mapper(vec_t v) map(v, v.d[0:v.n])

void f(vec_t s)
{
    #pragma omp target device(any) map(mapper(nope), tofrom: s)
    s.d[0] = 1.0;
}
