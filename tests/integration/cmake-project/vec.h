#ifndef VEC_H
#define VEC_H
#define VEC_SCALE 2.0
double vec_dot_scaled(double *y, const double *x, int n);
#endif
