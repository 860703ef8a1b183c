/* params.h: included by saxpy.c only (the file with a region), so touching it
 * must rebuild saxpy's object and nothing else. */
#ifndef PARAMS_H
#define PARAMS_H
#define SAXPY_N 4096
#define SAXPY_A 3.0f
#endif
