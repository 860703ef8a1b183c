/* simd alone as the construct-set: target simd, and simd on if_device lines. */
float dot(int n, const float *x, const float *y)
{
    float s = 0.0f;
    #pragma omp target simd reduction(+: s) map(to: x[0:n], y[0:n])
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

void negate(int n, float *x)
{
    #pragma omp target device(any) map(tofrom: x[0:n])
    #pragma omp if_device(nvidia) simd
    #pragma omp if_device(host) simd
    for (int i = 0; i < n; i++)
        x[i] = -x[i];
}
