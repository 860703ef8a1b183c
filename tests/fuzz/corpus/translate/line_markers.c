# 0 "fz.c"
# 0 "<built-in>"
# 0 "<command-line>"
# 1 "/usr/include/stdc-predef.h" 1 3 4
# 0 "<command-line>" 2
# 1 "fz.c"
# 1 "h.h" 1


static inline double sq(double x) { return x * x; }
# 2 "fz.c" 2
int main(void) {
  double a[64];
  
# 4 "fz.c"
#pragma omp target teams distribute parallel for
  for (int i = 0; i < 64; i++) a[i] = sq(i);
  return 0;
}
