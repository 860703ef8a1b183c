/* A region in a function whose parameters and locals use typedef'd types. */
#include <stddef.h>

typedef float real_t;
typedef struct {
    real_t x, y;
} vec2;
typedef size_t index_t;

void rotate(index_t n, vec2 *v, real_t c, real_t s)
{
    #pragma omp target teams distribute parallel for map(tofrom: v[0:n])
    for (index_t i = 0; i < n; i++) {
        vec2 p = v[i];
        v[i].x = c * p.x - s * p.y;
        v[i].y = s * p.x + c * p.y;
    }
}
