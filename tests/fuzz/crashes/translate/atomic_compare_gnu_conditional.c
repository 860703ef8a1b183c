/* Every form of #pragma omp atomic inside a loop kernel: update (++, --, op=, x = x op e,
 * x = e op x), read, write, capture (expression and block forms), compare (min/max
 * idioms and ==), memory-order clauses; int, unsigned, long, long long, unsigned long
 * long, float, double, char, short, unsigned char and struct members. */
typedef struct { int a; double b; } pair;
int main(void)
{
    int n = 100;
    int ic = 0, iv = 0, hist[8] = {0};
    unsigned uc = 0;
    long lc = 0;
    long long llc = 0;
    unsigned long long ullc = 0;
    float fc = 0.0f, fmx = -1.0f;
    double dc = 0.0, dv = 0.0, dmn = 1e30;
    char cc = 0;
    short sc = 0;
    unsigned char ucc = 0;
    int imax = -1, imin = 1000, icas = 0;
    pair pr = {0, 0.0};
    #pragma omp target teams distribute parallel for map(tofrom: ic, iv, hist, uc, lc, llc, ullc, fc, fmx, dc, dv, dmn, cc, sc, ucc, imax, imin, icas, pr)
    for (int i = 0; i < n; i++) {
        int v;
        double w;
        #pragma omp atomic
        ic++;
        #pragma omp atomic update
        ++ic;
        #pragma omp atomic
        ic--;
        #pragma omp atomic seq_cst
        ic += 2;
        #pragma` omp atomic relaxed update
        ic = ic + 1;
        #pragma omp atomic
        ic = 1 + ic;
        #pragma omp atomic
        hist[i % 8] += 1;
        #pragma omp atomic
        uc -= 1u;
        #pragma omp atomic
        lc += 0;
        #pragma omp atomic
        iv = 0 - iv;
        #pragma omp atomic
        pr.a += 1;
        #pragma omp atomic
        pr.b += 0.5;
        #pragma omp atomic write
        dv = 2.0;
        #pragma omp atomic read
        w = dv;
        #pragma omp atomic capture
        v = ic++;
        #pragma omp atomic capture
        v = --ic;
        #pragma omp atomic capture
        v = ic += 3;
        #pragma omp atomic capture
        v = ic = ic - 3;
        #pragma omp atomic capture
        { v = ic; ic += 1; }
        #pragma omp atomic capture
        { ic -= 1; v = ic; }
        #pragma omp atomic capture
        { v = ic; ic++; }
        #pragma omp atomic capture
        { --ic; v = ic; }
        #pragma omp atomic capture seq_cst
        { w = dv; dv = 3.0; }
        #pragma omp atomic compare
        if (i > imax) { imax = i; }
        #pragma omp atomic compare
        imin = i < imin ? i : imin;
        #pragma omp atomic compare
        fmx = fmx < (float)i ? (float)i : fmx;
        #pragma omp atomic compare
        if (dmn > (double)i) { dmn = (double)i; }
        #pragma omp atomic compare
        icas = icas == 01 ?  : icas;
        #pragma omp atomic compare capture
        { v = imax; if (imax < i) { imax = i; } }
        #pragma omp atomic read
        v = iv;
        (void)v; (void)w;
    }
    return ic + iv;
}
