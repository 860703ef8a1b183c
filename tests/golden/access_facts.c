// MACC_FLAGS: --managed
/* MACC_GOLDEN: info. Access facts (translator/access.c) of small regions with
 * known answers; the expected numbers are worked out in the comments. */
struct pt { float x, y; };

/* x: 1, y: 2 accesses per iteration; trip n */
void saxpy(int n, float a, float *x, float *y)
{
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

/* a literal inner loop of 3 trips: in 3 + 0.5 (the ?: branch) = 3.5; idx 1
 * (the condition); out 1; collapse(2): trip (n - 2) * m. The region is in a
 * host loop: its global frequencies are 4x its accesses per iteration. */
void stencil(int n, int m, const double *in, double *out, const int *idx)
{
    for (int it = 0; it < 10; it++) {
#pragma omp target teams distribute parallel for collapse(2) map(to: in[0:n*m], idx[0:n]) map(from: out[0:n*m])
        for (int i = 1; i < n - 1; i++)
            for (int j = 0; j < m; j++) {
                double s = 0;
                for (int k = 0; k < 3; k++)
                    s += in[(i + k - 1) * m + j];
                out[i * m + j] = idx[i] > 0 ? s : in[i * m + j];
            }
    }
}

/* graph traversal: mask 1 + 0.5; start 0.5 * (1 + 4) (the inner loop's
 * bounds, its condition 4 trips); edges 0.5 * 4 (visited[edges[e]]) +
 * 0.5 * 4 * 0.5 (cost[edges[e]]) = 3; visited 0.5 * 4; cost 0.5 * 4 * 0.5 * 2;
 * trip nv. */
void expand(int nv, const int *start, const int *edges, char *mask, char *visited, int *cost)
{
#pragma omp target teams distribute parallel for map(to: start[0:nv+1], edges[0:start[nv]]) map(tofrom: mask[0:nv], visited[0:nv], cost[0:nv])
    for (int v = 0; v < nv; v++) {
        if (mask[v]) {
            mask[v] = 0;
            for (int e = start[v]; e < start[v + 1]; e++)
                if (!visited[edges[e]])
                    cost[edges[e]] = cost[v] + 1;
        }
    }
}

/* no loop: one iteration (trip 1); *p 1, q->x 1 + 1, w: only used through
 * an alias (unknown); a step of 2 downwards with a bound in a pointer: trip
 * unknown in the second region. */
void scalar(float *p, struct pt *q, float *w, int *nb)
{
#pragma omp target map(tofrom: p[0:1], q[0:1], w[0:1])
    {
        *p = q->x + q->y;
        float *alias = w;
        alias[0] = 1.0f;
    }
#pragma omp target teams distribute parallel for map(tofrom: p[0:nb[0]]) map(to: nb[0:1])
    for (int i = nb[0] - 1; i >= 0; i -= 2)
        p[i] = p[i] * 2.0f;
}
