/* Struct members in a region: scalars read through a struct pointer mapped
 * as p[0:1], and a section length taken from a member. */
struct grid {
    int n;
    double h;
};

void scale_grid(const struct grid *p, double *u)
{
    #pragma omp target teams distribute parallel for map(to: p[0:1]) map(tofrom: u[0:p->n])
    for (int i = 0; i < p->n; i++)
        u[i] *= p->h;
}
