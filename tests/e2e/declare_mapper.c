/* declare mapper (OpenMP 5.0): a struct with a pointer member, mapped by its
 * default mapper where a region uses it with no clause and where a clause
 * maps it, by a named mapper (map(mapper(id), ...)), and the same maps written
 * out (map(tofrom: s, s.data[0:s.len])). On a GPU the device copy of the
 * struct points at the device's section while the region runs (attach) and
 * the host's pointer is what comes back. Prints PASS or FAIL. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000

typedef struct myvec {
    size_t len;
    double *data;
} myvec_t;

#pragma omp declare mapper(myvec_t v) map(v, v.data[0:v.len])
#pragma omp declare mapper(half: myvec_t v) map(to: v) map(v.data[0:v.len / 2])

static void init(myvec_t *s, double k)
{
    for (size_t i = 0; i < s->len; i++)
        s->data[i] = k * (double)i;
}

int main(void)
{
    int errors = 0;
    myvec_t s;
    s.data = (double *)calloc(N, sizeof(double));
    s.len = N;
    double *host = s.data;

    /* the default mapper, implicitly */
    #pragma omp target
    {
        init(&s, 1.0);
    }
    for (int i = 0; i < N; ++i)
        errors += s.data[i] != i;

    /* the default mapper, through a map clause; a loop of many threads */
    #pragma omp target teams distribute parallel for map(tofrom: s)
    for (size_t i = 0; i < N; i++)
        s.data[i] += 1.0;
    for (int i = 0; i < N; ++i)
        errors += s.data[i] != i + 1;

    /* a named mapper: half of the data, the struct copied in only */
    #pragma omp target map(mapper(half), tofrom: s)
    {
        for (size_t i = 0; i < s.len / 2; i++)
            s.data[i] = -1.0;
    }
    for (int i = 0; i < N; ++i)
        errors += s.data[i] != (i < N / 2 ? -1.0 : i + 1);

    /* the maps written out */
    #pragma omp target map(tofrom: s, s.data[0:s.len])
    {
        init(&s, 2.0);
    }
    for (int i = 0; i < N; ++i)
        errors += s.data[i] != 2.0 * i;

    errors += s.data != host || s.len != N;
    free(s.data);
    printf("%s\n", errors ? "FAIL" : "PASS");
    if (errors)
        printf("%d errors\n", errors);
    return errors != 0;
}
