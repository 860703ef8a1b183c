/* An inner `simd reduction(+: a, b)` loop inside a region's outer loop
 * (the N-body shape). */
#include <math.h>

void forces(int n, const float *x, const float *y, float *fx, float *fy)
{
    #pragma omp target device(any) map(to: x[0:n], y[0:n]) map(from: fx[0:n], fy[0:n])
    #pragma omp if_device(nvidia) teams distribute parallel for
    #pragma omp if_device(host) parallel for
    for (int i = 0; i < n; i++) {
        float ax = 0.0f, ay = 0.0f;
        #pragma omp simd reduction(+: ax, ay)
        for (int j = 0; j < n; j++) {
            float dx = x[j] - x[i], dy = y[j] - y[i];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + 1e-3f);
            ax += dx * inv;
            ay += dy * inv;
        }
        fx[i] = ax;
        fy[i] = ay;
    }
}
