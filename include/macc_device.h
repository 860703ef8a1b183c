/* macc_device.h: device-side support for generated CUDA files (C++ only).
 *
 * - OpenMP API calls inside kernels (omp_get_thread_num, ...) are renamed by the
 *   translator to the macc_dev_omp_* functions below.
 * - Reduction identities and combiners for every operator of SPEC 1.1.
 */
#ifndef MACC_DEVICE_H
#define MACC_DEVICE_H

#include <cuda_runtime.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C under nvcc's C++: the C11 keywords the preprocessed user code may hold
 * (`bool` from <stdbool.h> is `_Bool` once preprocessed). */
#ifndef _Bool
#define _Bool bool
#endif
#define _Alignof alignof
#define _Alignas alignas
#define _Static_assert static_assert
#define _Noreturn
#define _Thread_local thread_local


/* Which device a kernel runs on: {its OpenMP device number, the number of
 * GPUs (== the initial device's number)}. One copy per device file and GPU,
 * written by the CUDA plugin before the first task on that GPU; the file
 * registers it at start-up (MACC_cuda_device_info, in libmaccrt_cuda.a). */
static __device__ int macc_dev_info_[2] = {0, 1};
extern "C" void MACC_cuda_device_info(const void *symbol) __attribute__((weak));
__attribute__((constructor)) static void macc_dev_info_register_(void)
{
    if (MACC_cuda_device_info)
        MACC_cuda_device_info((const void *)&macc_dev_info_);
}

/* OpenMP API on the device: a team is a block, a thread is a thread of it. */
__device__ static inline int macc_dev_omp_is_initial_device(void) { return 0; }
__device__ static inline int macc_dev_omp_get_device_num(void) { return macc_dev_info_[0]; }
__device__ static inline int macc_dev_omp_get_num_devices(void) { return macc_dev_info_[1]; }
__device__ static inline int macc_dev_omp_get_initial_device(void) { return macc_dev_info_[1]; }
__device__ static inline int macc_dev_omp_get_default_device(void) { return macc_dev_info_[0]; }
__device__ static inline int macc_dev_omp_get_team_num(void) { return (int)blockIdx.x; }
__device__ static inline int macc_dev_omp_get_num_teams(void) { return (int)gridDim.x; }
__device__ static inline int macc_dev_omp_get_thread_num(void) { return (int)threadIdx.x; }
__device__ static inline int macc_dev_omp_get_num_threads(void) { return (int)blockDim.x; }
__device__ static inline int macc_dev_omp_get_max_threads(void) { return (int)blockDim.x; }
__device__ static inline int macc_dev_omp_in_parallel(void) { return blockDim.x > 1; }
__device__ static inline int macc_dev_omp_get_level(void) { return blockDim.x > 1; }
__device__ static inline int macc_dev_omp_get_active_level(void) { return blockDim.x > 1; }
__device__ static inline int macc_dev_omp_get_thread_limit(void) { return (int)blockDim.x; }
__device__ static inline int macc_dev_omp_get_team_size(int level)
{
    return level == 0 ? 1 : level == 1 ? (int)blockDim.x : -1;
}
__device__ static inline int macc_dev_omp_get_ancestor_thread_num(int level)
{
    return level == 0 ? 0 : level == 1 ? (int)threadIdx.x : -1;
}
__device__ static inline int macc_dev_omp_in_final(void) { return 0; }
__device__ static inline int macc_dev_omp_get_dynamic(void) { return 0; }
__device__ static inline int macc_dev_omp_get_cancellation(void) { return 0; }
__device__ static inline int macc_dev_omp_get_max_active_levels(void) { return 1; }
__device__ static inline int macc_dev_omp_get_supported_active_levels(void) { return 1; }
/* The multiprocessors of the GPU. */
__device__ static inline int macc_dev_omp_get_num_procs(void)
{
    unsigned n;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
    return (int)n;
}
/* The GPU's global timer (nanoseconds). */
__device__ static inline double macc_dev_omp_get_wtime(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (double)t * 1e-9;
}
__device__ static inline double macc_dev_omp_get_wtick(void) { return 1e-9; }

/* The lock of critical and atomic constructs in parallel regions (one per
 * device file, in global memory): `for (int o_ = acquire(&l); o_; o_ =
 * release(&l)) stmt` runs stmt once holding it. Threads of one warp may spin
 * on it while another holds it: compute capability 7.0 and later schedule
 * them independently. */
__device__ static inline int macc_lock_acquire(int *l)
{
    while (atomicCAS(l, 0, 1) != 0)
        ;
    __threadfence();
    return 1;
}
__device__ static inline int macc_lock_release(int *l)
{
    __threadfence();
    atomicExch(l, 0);
    return 0;
}

/* Largest and lowest values of a type: min/max reduction identities. */
template <typename T> struct macc_lim;
#define MACC_LIM(T, LO, HI)                                                                        \
    template <> struct macc_lim<T> {                                                               \
        __device__ static T lowest() { return LO; }                                                \
        __device__ static T highest() { return HI; }                                               \
    };
MACC_LIM(char, CHAR_MIN, CHAR_MAX)
MACC_LIM(signed char, SCHAR_MIN, SCHAR_MAX)
MACC_LIM(unsigned char, 0, UCHAR_MAX)
MACC_LIM(short, SHRT_MIN, SHRT_MAX)
MACC_LIM(unsigned short, 0, USHRT_MAX)
MACC_LIM(int, INT_MIN, INT_MAX)
MACC_LIM(unsigned int, 0, UINT_MAX)
MACC_LIM(long, LONG_MIN, LONG_MAX)
MACC_LIM(unsigned long, 0, ULONG_MAX)
MACC_LIM(long long, LLONG_MIN, LLONG_MAX)
MACC_LIM(unsigned long long, 0, ULLONG_MAX)
MACC_LIM(float, -FLT_MAX, FLT_MAX)
MACC_LIM(double, -DBL_MAX, DBL_MAX)
#undef MACC_LIM

/* Operators: identity and combine. */
enum { MACC_R_ADD, MACC_R_MUL, MACC_R_MIN, MACC_R_MAX, MACC_R_BAND, MACC_R_BOR, MACC_R_BXOR, MACC_R_LAND, MACC_R_LOR };

template <int OP, typename T> struct macc_red;
template <typename T> struct macc_red<MACC_R_ADD, T> {
    __device__ static T id() { return (T)0; }
    __device__ static T op(T a, T b) { return a + b; }
};
template <typename T> struct macc_red<MACC_R_MUL, T> {
    __device__ static T id() { return (T)1; }
    __device__ static T op(T a, T b) { return a * b; }
};
template <typename T> struct macc_red<MACC_R_MIN, T> {
    __device__ static T id() { return macc_lim<T>::highest(); }
    __device__ static T op(T a, T b) { return b < a ? b : a; }
};
template <typename T> struct macc_red<MACC_R_MAX, T> {
    __device__ static T id() { return macc_lim<T>::lowest(); }
    __device__ static T op(T a, T b) { return b > a ? b : a; }
};
template <typename T> struct macc_red<MACC_R_BAND, T> {
    __device__ static T id() { return (T)~(T)0; }
    __device__ static T op(T a, T b) { return a & b; }
};
template <typename T> struct macc_red<MACC_R_BOR, T> {
    __device__ static T id() { return (T)0; }
    __device__ static T op(T a, T b) { return a | b; }
};
template <typename T> struct macc_red<MACC_R_BXOR, T> {
    __device__ static T id() { return (T)0; }
    __device__ static T op(T a, T b) { return a ^ b; }
};
template <typename T> struct macc_red<MACC_R_LAND, T> {
    __device__ static T id() { return (T)1; }
    __device__ static T op(T a, T b) { return (T)(a && b); }
};
template <typename T> struct macc_red<MACC_R_LOR, T> {
    __device__ static T id() { return (T)0; }
    __device__ static T op(T a, T b) { return (T)(a || b); }
};

/* Block-wide reduction of v (blockDim.x a power of two, at most 1024); the
 * result is returned to every thread of the block. */
template <int OP, typename T> __device__ static inline T macc_block_reduce(T v)
{
    __shared__ T sh[1024];
    __syncthreads();
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o)
            sh[threadIdx.x] = macc_red<OP, T>::op(sh[threadIdx.x], sh[threadIdx.x + o]);
        __syncthreads();
    }
    T r = sh[0];
    __syncthreads();
    return r;
}

/* Combines per-block partial results into *out (its original value included). */
template <int OP, typename T> __global__ void macc_finish_reduce(const T *part, int n, T *out)
{
    T acc = macc_red<OP, T>::id();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc = macc_red<OP, T>::op(acc, part[i]);
    acc = macc_block_reduce<OP, T>(acc);
    if (threadIdx.x == 0)
        *out = macc_red<OP, T>::op(*out, acc);
}

/* Grid size for a loop of `total` iterations in blocks of `block` threads:
 * one iteration per thread, or at most 32 blocks per SM when `capped` (loops
 * with reductions: fewer partial results to combine). */
static inline int macc_grid_size(long long total, int block, int num_teams, int capped)
{
    static int sms[64];
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64)
        device = 0;
    if (!sms[device]) {
        int v = 0;
        if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || v <= 0)
            v = 80;
        sms[device] = v;
    }
    long long g = (total + block - 1) / block;
    long long cap = capped ? (long long)sms[device] * 32 : 0x7fffffffLL;
    if (g > cap)
        g = cap;
    if (num_teams > 0 && g > num_teams)
        g = num_teams;
    return g < 1 ? 1 : (int)g;
}

#endif
