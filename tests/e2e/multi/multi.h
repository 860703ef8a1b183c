/* multi.h: what the three files of the multi-file program share. */
#ifndef MULTI_H
#define MULTI_H

#define N 64

#pragma omp declare target
extern double factor; /* lib.c */
extern int counter;   /* lib.c */
double scale(double x);  /* lib.c: factor * x + offset(x) */
double offset(double x); /* util.c */
#pragma omp end declare target

int lib_read_counter(void);        /* lib.c: a region of lib.c reads counter */
double lib_sum_scaled(int n);      /* lib.c: a region of lib.c calls scale */

#endif
