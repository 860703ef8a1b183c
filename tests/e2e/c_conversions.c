// MACC_FLAGS: -Wno-discarded-qualifiers
/* C's implicit conversions that C++ rejects, in a region and the functions
 * it calls: a const pointer passed to a plain pointer parameter and
 * returned through one, void * stored into a typed pointer, an int and an
 * enum's arithmetic stored into an enum (also through a typedef, and into a
 * struct's enum field), ++ and += on enums, a brace initialiser that
 * narrows. */
#include <stdio.h>
#include <stdlib.h>

typedef enum { RED, GREEN, BLUE } color_t;
enum shape { ROUND, SQUARE };
struct tile { color_t color; int n; };

static double get(double *p, int i) { return p[i]; }
static double *at(const double *p, int i) { return p + i; }
static color_t next(color_t c) { return (c + 1) % 3; }

int main(void)
{
    int n = 1000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++)
        x[i] = i;
    const double *cx = x;
    struct tile *t = malloc(n * sizeof *t);
    for (int i = 0; i < n; i++)
        t[i] = (struct tile){RED, i};
    #pragma omp target teams distribute parallel for map(to: cx[0:n]) map(from: y[0:n]) map(tofrom: t[0:n])
    for (int i = 0; i < n; i++) {
        color_t c = i % 3;
        enum shape s = i & 1;
        c = next(c);
        color_t d = RED;
        for (int k = 0; k < i % 3; k++)
            d++;
        d += 0;
        ++d;
        --d;
        int narrow[2] = {i / 2.0 > 1e9, 0}; /* a double into an int, as C allows */
        c = (c + d - i % 3 + 3 + narrow[0]) % 3;
        void *raw = at(cx, i);
        double *p = raw;
        y[i] = get(p, 0) + get(cx, i) + c + s;
        t[i].color = (t[i].color + t[i].n) % 3;
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += y[i] != 2.0 * i + (i % 3 + 1) % 3 + (i & 1) || t[i].color != (color_t)(i % 3);
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(x);
    free(y);
    free(t);
    return bad != 0;
}
