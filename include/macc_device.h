/* macc_device.h: device-side support for generated CUDA files (C++ only).
 *
 * - OpenMP API calls inside kernels (omp_get_thread_num, ...) are renamed by the
 *   translator to the macc_dev_omp_* functions below.
 * - Reduction identities and combiners for every operator of SPEC 1.1.
 * - `#pragma omp atomic` and `#pragma omp critical` inside kernels: the
 *   macc_atomic_* templates and the critical-section locks below.
 */
#ifndef MACC_DEVICE_H
#define MACC_DEVICE_H

#include <cuda_runtime.h>
#include <alloca.h> /* local variable-length arrays in device code */
#include <assert.h> /* CUDA declares __assert_fail, what C's assert expands to, for the device */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

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

/* C's implicit conversions (void * to T *, a dropped const or volatile, int to
 * an enum): where copied C code stores a value into a pointer or an enum, the
 * translator wraps it, macc_c(e), and the proxy converts as an explicit cast
 * to whatever type receives it (translator/emit_cuda.c, cu__conv_child). */
template <class S> struct macc_cv_ {
    S v;
    template <class T> __host__ __device__ __forceinline__ operator T() const { return (T)v; }
};
template <class S> __host__ __device__ __forceinline__ macc_cv_<S> macc_c(S v) { return macc_cv_<S>{v}; }

/* C's arithmetic on enums, which C++ does not define: x++, ++x, x--, --x,
 * x += e, x -= e on an enum lvalue (the translator writes these calls). */
template <class E> __host__ __device__ __forceinline__ E macc_enum_post_inc(E &x) { E o = x; x = (E)(x + 1); return o; }
template <class E> __host__ __device__ __forceinline__ E macc_enum_post_dec(E &x) { E o = x; x = (E)(x - 1); return o; }
template <class E> __host__ __device__ __forceinline__ E &macc_enum_pre_inc(E &x) { return x = (E)(x + 1); }
template <class E> __host__ __device__ __forceinline__ E &macc_enum_pre_dec(E &x) { return x = (E)(x - 1); }
template <class E, class V> __host__ __device__ __forceinline__ E &macc_enum_add(E &x, V v) { return x = (E)(x + v); }
template <class E, class V> __host__ __device__ __forceinline__ E &macc_enum_sub(E &x, V v) { return x = (E)(x - v); }

/* C's variably modified types (a pointer to rows of n elements, `double
 * (*a)[n]`, and array parameters `double a[n][m]`), which C++ has not: the
 * translator declares such a variable as macc_vm<T, R> (R bounds known at run
 * time, outermost first) and the user's a[i][j] indexes through it. */
template <class T, int R> struct macc_vm {
    T *p;
    long long d[R];
    __device__ __forceinline__ macc_vm<T, R - 1> operator[](long long i) const
    {
        macc_vm<T, R - 1> r;
        long long s = 1;
        for (int k = 0; k < R; k++)
            s *= d[k];
        r.p = p + i * s;
        for (int k = 1; k < R; k++)
            r.d[k - 1] = d[k];
        return r;
    }
    __device__ __forceinline__ operator T *() const { return p; }
    __device__ __forceinline__ explicit operator void *() const { return (void *)p; } /* to a parameter's macc_vmp_ */
};
template <class T> struct macc_vm<T, 0> {
    T *p;
    long long d[1]; /* unused: lets macc_vm<T, 1>::operator[] copy no bounds */
    __device__ __forceinline__ T &operator[](long long i) const { return p[i]; }
    __device__ __forceinline__ T &operator*() const { return *p; }
    __device__ __forceinline__ operator T *() const { return p; }
    __device__ __forceinline__ explicit operator void *() const { return (void *)p; }
};


/* C's complex types (`double _Complex`, `float _Complex`; GNU's
 * `__complex__`): the translator writes them as macc_complex<T>, the same
 * layout (real part, then imaginary), and an imaginary constant 2.0i as
 * macc_complex<double>(0, 2.0). Arithmetic with complex and real operands in
 * either order, and <complex.h>'s creal, cimag, conj, cabs, carg (and their
 * float forms) on the device. */
template <class T> struct macc_complex {
    T re, im;
    __host__ __device__ __forceinline__ macc_complex() : re(0), im(0) {}
    template <class S, class = typename std::enable_if<std::is_arithmetic<S>::value>::type>
    __host__ __device__ __forceinline__ macc_complex(S r) : re((T)r), im(0) {}
    __host__ __device__ __forceinline__ macc_complex(T r, T i) : re(r), im(i) {}
    template <class U> __host__ __device__ __forceinline__ macc_complex(const macc_complex<U> &z) : re((T)z.re), im((T)z.im) {}
    template <class S, class = typename std::enable_if<std::is_arithmetic<S>::value>::type>
    __host__ __device__ __forceinline__ explicit operator S() const { return (S)re; }
};
template <class T> struct macc_is_cx : std::false_type {};
template <class T> struct macc_is_cx<macc_complex<T>> : std::true_type {};
/* operands that take part: a complex and a complex or arithmetic value */
template <class A, class B> struct macc_cx_ok {
    static const bool value = (macc_is_cx<A>::value && (macc_is_cx<B>::value || std::is_arithmetic<B>::value)) ||
                              (macc_is_cx<B>::value && std::is_arithmetic<A>::value);
};
template <class A, class B> struct macc_cpromote { typedef decltype(A() + B()) type; };
template <class T> struct macc_creal_t { typedef T type; };
template <class T> struct macc_creal_t<macc_complex<T>> { typedef T type; };
template <class T> __host__ __device__ __forceinline__ macc_complex<T> macc_cx(const macc_complex<T> &z) { return z; }
template <class T, class = typename std::enable_if<std::is_arithmetic<T>::value>::type>
__host__ __device__ __forceinline__ macc_complex<T> macc_cx(T r) { return macc_complex<T>(r, (T)0); }
#define MACC_CX_T(A, B) macc_complex<typename macc_cpromote<typename macc_creal_t<A>::type, typename macc_creal_t<B>::type>::type>
#define MACC_CX_OP(OP, BODY)                                                                                            \
    template <class A, class B, class = typename std::enable_if<macc_cx_ok<A, B>::value>::type>                         \
    __host__ __device__ __forceinline__ auto operator OP(const A &a_, const B &b_)->MACC_CX_T(A, B)                     \
    {                                                                                                                   \
        typedef typename macc_creal_t<MACC_CX_T(A, B)>::type R;                                                          \
        macc_complex<R> a = macc_cx(a_), b = macc_cx(b_);                                                               \
        BODY                                                                                                            \
    }
MACC_CX_OP(+, return macc_complex<R>(a.re + b.re, a.im + b.im);)
MACC_CX_OP(-, return macc_complex<R>(a.re - b.re, a.im - b.im);)
MACC_CX_OP(*, return macc_complex<R>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);)
MACC_CX_OP(/, R d = b.re * b.re + b.im * b.im;
           return macc_complex<R>((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);)
#undef MACC_CX_OP
template <class T, class B> __host__ __device__ __forceinline__ macc_complex<T> &operator+=(macc_complex<T> &a, const B &b) { return a = a + b; }
template <class T, class B> __host__ __device__ __forceinline__ macc_complex<T> &operator-=(macc_complex<T> &a, const B &b) { return a = a - b; }
template <class T, class B> __host__ __device__ __forceinline__ macc_complex<T> &operator*=(macc_complex<T> &a, const B &b) { return a = a * b; }
template <class T, class B> __host__ __device__ __forceinline__ macc_complex<T> &operator/=(macc_complex<T> &a, const B &b) { return a = a / b; }
template <class T> __host__ __device__ __forceinline__ macc_complex<T> operator-(const macc_complex<T> &a) { return macc_complex<T>(-a.re, -a.im); }
template <class T> __host__ __device__ __forceinline__ macc_complex<T> operator+(const macc_complex<T> &a) { return a; }
template <class A, class B, class = typename std::enable_if<macc_cx_ok<A, B>::value>::type>
__host__ __device__ __forceinline__ bool operator==(const A &a_, const B &b_)
{
    auto a = macc_cx(a_);
    auto b = macc_cx(b_);
    return a.re == b.re && a.im == b.im;
}
template <class A, class B, class = typename std::enable_if<macc_cx_ok<A, B>::value>::type>
__host__ __device__ __forceinline__ bool operator!=(const A &a, const B &b) { return !(a == b); }
__device__ static inline double creal(macc_complex<double> z) { return z.re; }
__device__ static inline double cimag(macc_complex<double> z) { return z.im; }
__device__ static inline float crealf(macc_complex<float> z) { return z.re; }
__device__ static inline float cimagf(macc_complex<float> z) { return z.im; }
__device__ static inline macc_complex<double> conj(macc_complex<double> z) { return macc_complex<double>(z.re, -z.im); }
__device__ static inline macc_complex<float> conjf(macc_complex<float> z) { return macc_complex<float>(z.re, -z.im); }
__device__ static inline double cabs(macc_complex<double> z) { return hypot(z.re, z.im); }
__device__ static inline float cabsf(macc_complex<float> z) { return hypotf(z.re, z.im); }
__device__ static inline double carg(macc_complex<double> z) { return atan2(z.im, z.re); }
__device__ static inline float cargf(macc_complex<float> z) { return atan2f(z.im, z.re); }

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

/* The C library in device code where CUDA's headers have no device version:
 * abort() stops the kernel (the launch reports an error, as a failed assert
 * does); glibc's isinf() is __builtin_isinf_sign; the string functions. */
__device__ static inline void macc_dev_abort(void) { __trap(); }
/* <string.h> beyond CUDA's memcpy and memset */
__device__ static inline size_t macc_dev_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}
__device__ static inline int macc_dev_strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y || !x)
            return x - y;
    }
    return 0;
}
__device__ static inline int macc_dev_strcmp(const char *a, const char *b) { return macc_dev_strncmp(a, b, (size_t)-1); }
__device__ static inline char *macc_dev_strcpy(char *d, const char *s)
{
    size_t i = 0;
    while ((d[i] = s[i]) != 0)
        i++;
    return d;
}
__device__ static inline char *macc_dev_strncpy(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i < n && s[i]; i++)
        d[i] = s[i];
    for (; i < n; i++)
        d[i] = 0;
    return d;
}
__device__ static inline int macc_dev_memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] - y[i];
    return 0;
}
__device__ static inline void *macc_dev_memmove(void *d, const void *s, size_t n)
{
    unsigned char *x = (unsigned char *)d;
    const unsigned char *y = (const unsigned char *)s;
    if (x < y)
        for (size_t i = 0; i < n; i++)
            x[i] = y[i];
    else
        for (size_t i = n; i > 0; i--)
            x[i - 1] = y[i - 1];
    return d;
}
__device__ static inline int macc_dev___builtin_isinf_sign(double x) { return isinf(x) ? (signbit(x) ? -1 : 1) : 0; }
__device__ static inline int macc_dev___builtin_isinf_sign(float x) { return isinf(x) ? (signbit(x) ? -1 : 1) : 0; }

/* OpenMP API on the device: a team is a block, a thread is a thread of it. */
/* OpenMP memory allocators in kernels (omp_alloc & co. are renamed to these):
 * the predefined allocators, all served by the device heap (malloc in a
 * kernel: cudaLimitMallocHeapSize, 8 MB unless the program sets more); a
 * block keeps its start and size before the address it returns (alignment,
 * realloc). The translator renames the handles (omp_default_mem_alloc, ...)
 * and their type in kernel code to the macc_omp_ names below (libgomp's
 * values): the device file need not see <omp.h>, and may. */
typedef unsigned long long macc_omp_allocator_handle_t; /* kernels' omp_allocator_handle_t */
enum {
    macc_omp_null_allocator = 0,
    macc_omp_default_mem_alloc = 1,
    macc_omp_large_cap_mem_alloc = 2,
    macc_omp_const_mem_alloc = 3,
    macc_omp_high_bw_mem_alloc = 4,
    macc_omp_low_lat_mem_alloc = 5,
    macc_omp_cgroup_mem_alloc = 6,
    macc_omp_pteam_mem_alloc = 7,
    macc_omp_thread_mem_alloc = 8
};
__device__ static inline void *macc_dev_omp_aligned_alloc(size_t align, size_t size, macc_omp_allocator_handle_t a)
{
    (void)a;
    if (!size)
        return NULL;
    if (align < 16)
        align = 16;
    if (align & (align - 1))
        return NULL;
    char *raw = (char *)malloc(size + align + 2 * sizeof(size_t));
    if (!raw)
        return NULL;
    size_t at = ((size_t)raw + 2 * sizeof(size_t) + align - 1) & ~(align - 1);
    ((char **)at)[-1] = raw;
    ((size_t *)at)[-2] = size;
    return (void *)at;
}
__device__ static inline void *macc_dev_omp_alloc(size_t size, macc_omp_allocator_handle_t a)
{
    return macc_dev_omp_aligned_alloc(16, size, a);
}
__device__ static inline void *macc_dev_omp_aligned_calloc(size_t align, size_t n, size_t size, macc_omp_allocator_handle_t a)
{
    void *p = macc_dev_omp_aligned_alloc(align, n * size, a);
    if (p)
        memset(p, 0, n * size);
    return p;
}
__device__ static inline void *macc_dev_omp_calloc(size_t n, size_t size, macc_omp_allocator_handle_t a)
{
    return macc_dev_omp_aligned_calloc(16, n, size, a);
}
__device__ static inline void macc_dev_omp_free(void *p, macc_omp_allocator_handle_t a)
{
    (void)a;
    if (p)
        free(((char **)p)[-1]);
}
__device__ static inline void *macc_dev_omp_realloc(void *p, size_t size, macc_omp_allocator_handle_t a,
                                                     macc_omp_allocator_handle_t free_a)
{
    if (!p)
        return macc_dev_omp_alloc(size, a);
    if (!size) {
        macc_dev_omp_free(p, free_a);
        return NULL;
    }
    void *q = macc_dev_omp_alloc(size, a);
    if (q) {
        size_t old = ((size_t *)p)[-2];
        memcpy(q, p, old < size ? old : size);
        macc_dev_omp_free(p, free_a);
    }
    return q;
}

__device__ static inline int macc_dev_omp_is_initial_device(void) { return 0; }
/* OpenACC's acc_on_device in kernels: acc_device_not_host (4) and
 * acc_device_nvidia (5) of include/openacc.h */
__device__ static inline int macc_dev_acc_on_device(int t) { return t == 4 || t == 5; }
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

/* Scratch for block reductions: one slot per warp, shared by every reduction
 * of a kernel (whatever its type), so that a kernel with many reduction
 * variables needs 512 bytes of shared memory, not a tree per type. */
__device__ static inline void *macc_red_scratch(void)
{
    __shared__ unsigned long long macc_red_sh_[64]; /* 32 slots of up to 16 bytes (complex double) */
    return macc_red_sh_;
}

/* Warp shuffles of types of 1, 2, 4 or 8 bytes, moved as their bits: v from
 * the lane `o` places up in a segment of `width` lanes (its own value past the
 * segment's end), or from lane `src`. */
template <bool DOWN, typename T> __device__ static inline T macc_shfl_bits(unsigned mask, T v, unsigned o, int width)
{
    static_assert(sizeof(T) <= 8 || sizeof(T) % 8 == 0, "macc_shfl: a type of at most 8 bytes, or of 8-byte words");
    if constexpr (sizeof(T) > 8) { /* complex types: word by word */
        unsigned long long b[sizeof(T) / 8];
        memcpy(b, &v, sizeof(T));
        for (unsigned k = 0; k < sizeof(T) / 8; k++)
            b[k] = DOWN ? __shfl_down_sync(mask, b[k], o, width) : __shfl_sync(mask, b[k], (int)o, width);
        memcpy(&v, b, sizeof(T));
    } else if constexpr (sizeof(T) == 8) {
        unsigned long long b;
        memcpy(&b, &v, 8);
        b = DOWN ? __shfl_down_sync(mask, b, o, width) : __shfl_sync(mask, b, (int)o, width);
        memcpy(&v, &b, 8);
    } else {
        unsigned int b = 0;
        memcpy(&b, &v, sizeof(T));
        b = DOWN ? __shfl_down_sync(mask, b, o, width) : __shfl_sync(mask, b, (int)o, width);
        memcpy(&v, &b, sizeof(T));
    }
    return v;
}
template <typename T> __device__ static inline T macc_shfl_down(unsigned mask, T v, unsigned o, int width)
{
    return macc_shfl_bits<true>(mask, v, o, width);
}

/* Block-wide reduction of v (blockDim.x a power of two, at most 1024); the
 * result is returned to every thread of the block. Every thread of the block
 * must call it. Warps reduce with shuffles, then the first warp reduces the
 * warps' results. */
template <int OP, typename T> __device__ static inline T macc_block_reduce(T v)
{
    static_assert(sizeof(T) <= 16, "macc_block_reduce: a type of at most 16 bytes");
    T *sh = (T *)macc_red_scratch();
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const int width = blockDim.x < 32 ? (int)blockDim.x : 32;
    const unsigned mask = width == 32 ? 0xffffffffu : ((1u << width) - 1u);
    for (unsigned o = (unsigned)width / 2; o > 0; o >>= 1)
        v = macc_red<OP, T>::op(v, macc_shfl_down(mask, v, o, width));
    if (blockDim.x <= 32)
        return macc_shfl_bits<false>(mask, v, 0, width);
    __syncthreads(); /* the scratch of a previous reduction is free */
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const unsigned nw = blockDim.x >> 5;
        v = lane < nw ? sh[lane] : macc_red<OP, T>::id();
        for (unsigned o = 16; o > 0; o >>= 1)
            v = macc_red<OP, T>::op(v, macc_shfl_down(0xffffffffu, v, o, 32));
        if (lane == 0)
            sh[0] = v;
    }
    __syncthreads();
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

/* ---- atomics: `#pragma omp atomic` inside kernels --------------------------
 *
 * The translator rewrites the statement after the pragma into these calls:
 * update `x op= e` is macc_atomic_fetch<OP>(&x, e) (it returns the old value;
 * macc_atomic_apply<OP>(old, e) is the new one, for capture forms), read is
 * macc_atomic_read, compare (min/max idioms) is MACC_A_MIN/MACC_A_MAX and
 * `x == e ? d : x` is macc_atomic_cas. The value computed is the one C gives:
 * (T)(x op e) with the usual conversions. CUDA's atomicAdd/Sub/And/Or/Xor/
 * Min/Max/Exch serve the types and operators where they give the same result
 * (int, unsigned, long long, unsigned long long and 8-byte long, float and
 * double for add/sub); every other case is an atomicCAS loop on the bit
 * pattern (2-byte types with the 16-bit atomicCAS, 1-byte types through the aligned
 * 4-byte word around them),
 * so any scalar type of 1, 2, 4 or 8 bytes works. Atomics are relaxed and
 * device-wide; the translator adds __threadfence() for seq_cst, acq_rel,
 * acquire and release. */
enum {
    MACC_A_ADD, MACC_A_SUB, MACC_A_MUL, MACC_A_DIV, MACC_A_AND, MACC_A_OR, MACC_A_XOR, MACC_A_SHL, MACC_A_SHR,
    MACC_A_RSUB, MACC_A_RDIV, MACC_A_RSHL, MACC_A_RSHR, /* x = e op x */
    MACC_A_MIN, MACC_A_MAX, /* x = e < x ? e : x, x = e > x ? e : x */
    MACC_A_WR,              /* x = e */
    MACC_A_LAND, MACC_A_LOR /* reductions combined atomically */
};

/* The new value of x. */
template <int OP, typename T, typename E> __device__ static inline T macc_atomic_apply(T x, E e)
{
    if constexpr (OP == MACC_A_ADD) return (T)(x + e);
    else if constexpr (OP == MACC_A_SUB) return (T)(x - e);
    else if constexpr (OP == MACC_A_MUL) return (T)(x * e);
    else if constexpr (OP == MACC_A_DIV) return (T)(x / e);
    else if constexpr (OP == MACC_A_AND) return (T)(x & e);
    else if constexpr (OP == MACC_A_OR) return (T)(x | e);
    else if constexpr (OP == MACC_A_XOR) return (T)(x ^ e);
    else if constexpr (OP == MACC_A_SHL) return (T)(x << e);
    else if constexpr (OP == MACC_A_SHR) return (T)(x >> e);
    else if constexpr (OP == MACC_A_RSUB) return (T)(e - x);
    else if constexpr (OP == MACC_A_RDIV) return (T)(e / x);
    else if constexpr (OP == MACC_A_RSHL) return (T)(e << x);
    else if constexpr (OP == MACC_A_RSHR) return (T)(e >> x);
    else if constexpr (OP == MACC_A_MIN) return e < x ? (T)e : x;
    else if constexpr (OP == MACC_A_MAX) return e > x ? (T)e : x;
    else if constexpr (OP == MACC_A_WR) return (T)e;
    else if constexpr (OP == MACC_A_LAND) return (T)(x && e);
    else return (T)(x || e);
}

/* Same bit pattern (not ==: NaNs and signed zeros compare by bits). */
template <typename T> __device__ static inline bool macc_same_bits(T a, T b)
{
    if constexpr (sizeof(T) == 8) {
        unsigned long long x, y;
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
        return x == y;
    } else {
        unsigned int x = 0, y = 0;
        memcpy(&x, &a, sizeof(T));
        memcpy(&y, &b, sizeof(T));
        return x == y;
    }
}

/* The current value of *p, read once. */
template <typename T> __device__ static inline T macc_atomic_read(const T *p)
{
    return *(const volatile T *)p;
}

/* atomicCAS on the bits of any type of 1, 2, 4 or 8 bytes; returns the old value. */
template <typename T> __device__ static inline T macc_atomic_cas_bits(T *p, T cmp, T val)
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "#pragma omp atomic on the GPU: a type of 1, 2, 4 or 8 bytes");
    T r;
    if constexpr (sizeof(T) == 8) {
        unsigned long long c, v;
        memcpy(&c, &cmp, 8);
        memcpy(&v, &val, 8);
        unsigned long long o = atomicCAS((unsigned long long *)p, c, v);
        memcpy(&r, &o, 8);
    } else if constexpr (sizeof(T) == 4) {
        unsigned int c, v;
        memcpy(&c, &cmp, 4);
        memcpy(&v, &val, 4);
        unsigned int o = atomicCAS((unsigned int *)p, c, v);
        memcpy(&r, &o, 4);
    } else if constexpr (sizeof(T) == 2) {
        unsigned short int c, v;
        memcpy(&c, &cmp, 2);
        memcpy(&v, &val, 2);
        unsigned short int o = atomicCAS((unsigned short int *)p, c, v);
        memcpy(&r, &o, 2);
    } else {
        /* one byte: CAS on the aligned word that holds it */
        unsigned int *w = (unsigned int *)((size_t)p & ~(size_t)3);
        const unsigned sh = (unsigned)((size_t)p & 3) * 8u;
        unsigned char c, v;
        memcpy(&c, &cmp, 1);
        memcpy(&v, &val, 1);
        unsigned int cur = *(volatile unsigned int *)w;
        for (;;) {
            unsigned char b = (unsigned char)(cur >> sh);
            if (b != c) {
                memcpy(&r, &b, 1);
                break;
            }
            unsigned int seen = atomicCAS(w, cur, (cur & ~(0xffu << sh)) | ((unsigned int)v << sh));
            if (seen == cur) {
                memcpy(&r, &c, 1);
                break;
            }
            cur = seen;
        }
    }
    return r;
}

/* The unsigned type of T's size, for CUDA's integer atomics. */
template <typename T> using macc_atomic_uint =
    typename std::conditional<sizeof(T) == 8, unsigned long long, unsigned int>::type;
template <typename T> using macc_atomic_sint = typename std::conditional<sizeof(T) == 8, long long, int>::type;

/* *p = macc_atomic_apply<OP>(*p, e) atomically; returns the old value. */
template <int OP, typename T, typename E> __device__ static inline T macc_atomic_fetch(T *p, E e)
{
    constexpr bool ints = std::is_integral<T>::value && std::is_integral<E>::value &&
                          (sizeof(T) == 4 || sizeof(T) == 8) && !std::is_same<T, bool>::value;
    /* the arithmetic is done in T itself: x op e == x op (T)e */
    constexpr bool in_t = std::is_same<decltype(T() + E()), T>::value;
    if constexpr ((OP == MACC_A_ADD || OP == MACC_A_SUB) && ints) {
        typedef macc_atomic_uint<T> U;
        U d = (U)(T)e;
        U o = atomicAdd((U *)p, OP == MACC_A_ADD ? d : (U)0 - d);
        T r;
        memcpy(&r, &o, sizeof r);
        return r;
    } else if constexpr ((OP == MACC_A_ADD || OP == MACC_A_SUB) && in_t &&
                         (std::is_same<T, float>::value || std::is_same<T, double>::value)) {
        /* x - e is x + (-e) exactly in IEEE arithmetic */
        return atomicAdd(p, OP == MACC_A_ADD ? (T)e : -(T)e);
    } else if constexpr ((OP == MACC_A_AND || OP == MACC_A_OR || OP == MACC_A_XOR) && ints) {
        typedef macc_atomic_uint<T> U;
        U d = (U)(T)e, o;
        if constexpr (OP == MACC_A_AND) o = atomicAnd((U *)p, d);
        else if constexpr (OP == MACC_A_OR) o = atomicOr((U *)p, d);
        else o = atomicXor((U *)p, d);
        T r;
        memcpy(&r, &o, sizeof r);
        return r;
    } else if constexpr ((OP == MACC_A_MIN || OP == MACC_A_MAX) && ints && in_t) {
        typedef typename std::conditional<std::is_signed<T>::value, macc_atomic_sint<T>, macc_atomic_uint<T>>::type S;
        S d = (S)(T)e, o;
        if constexpr (OP == MACC_A_MIN) o = atomicMin((S *)p, d);
        else o = atomicMax((S *)p, d);
        T r;
        memcpy(&r, &o, sizeof r);
        return r;
    } else if constexpr (OP == MACC_A_WR && (sizeof(T) == 4 || sizeof(T) == 8)) {
        typedef macc_atomic_uint<T> U;
        T v = (T)e;
        U d, o;
        memcpy(&d, &v, sizeof d);
        o = atomicExch((U *)p, d);
        T r;
        memcpy(&r, &o, sizeof r);
        return r;
    } else {
        T old = macc_atomic_read(p);
        for (;;) {
            T seen = macc_atomic_cas_bits(p, old, macc_atomic_apply<OP>(old, e));
            if (macc_same_bits(seen, old))
                return old;
            old = seen;
        }
    }
}

/* x = x == e ? d : x atomically (`atomic compare`); returns the old value. */
template <typename T, typename E, typename D> __device__ static inline T macc_atomic_cas(T *p, E e, D d)
{
    T old = macc_atomic_read(p);
    for (;;) {
        if (!(old == e))
            return old;
        T seen = macc_atomic_cas_bits(p, old, (T)d);
        if (macc_same_bits(seen, old))
            return old;
        old = seen;
    }
}

/* ---- `#pragma omp critical` inside kernels -----------------------------------
 *
 * One lock per critical name (the translator passes a hash of the name; the
 * unnamed critical has its own), per device file. The translator emits
 *
 *     for (bool done = false; !done;)
 *         if (macc_critical_enter(lock)) { BLOCK; macc_critical_leave(lock); done = true; }
 *
 * The thread that takes the lock runs the block inside the loop, so threads of
 * one warp that wait for it never keep it from finishing: no deadlock, with or
 * without independent thread scheduling (sm_70 and later have it; earlier GPUs
 * reconverge after the branch). The fences make the block's writes visible to
 * the next holder. */
template <unsigned long long NAME> __device__ unsigned int macc_critical_word_ = 0u;
#define macc_critical_lock(NAME) (&macc_critical_word_<NAME>)

__device__ static inline bool macc_critical_enter(unsigned int *lock)
{
    if (atomicCAS(lock, 0u, 1u) != 0u)
        return false;
    __threadfence();
    return true;
}
__device__ static inline void macc_critical_leave(unsigned int *lock)
{
    __threadfence();
    atomicExch(lock, 0u);
}

/* ---- firstprivate arrays -------------------------------------------------------
 * `n` copies of `bytes` bytes of src, one after the other at dst (per team or
 * per task copies of a firstprivate array). */
__global__ static void macc_replicate(unsigned char *dst, const unsigned char *src, size_t bytes, int n)
{
    const size_t total = bytes * (size_t)n;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i % bytes];
}

/* ---- attach ---------------------------------------------------------------------
 * The pointer at device address dst becomes v (a pointer member of a mapped
 * struct made to point at its mapped section, and back), in stream order. */
__global__ static void macc_set_ptr(void **dst, void *v)
{
    *dst = v;
}

/* Grid size for a loop of `total` iterations in blocks of `block` threads:
 * one iteration per thread, or at most 32 blocks per SM when `capped` (loops
 * with reductions: fewer partial results to combine). */
/* The current GPU's multiprocessors (cached per device). */
static inline int macc_sm_count(void)
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
    return sms[device];
}

/* Threads per block for a loop of `total` iterations (one per thread) whose
 * region names no block size: `block` (256), halved while the grid would have
 * fewer blocks than the GPU has multiprocessors, down to one warp. A loop of
 * 2000 iterations, each a long sequential inner loop (PolyBench's 2mm), ran
 * in 8 blocks on 8 of 132 SMs; in 63 blocks of 32 threads every iteration's
 * memory latency overlaps on 63. */
static inline int macc_loop_block(long long total, int block)
{
    const int sms = macc_sm_count();
    while (block > 32 && (total + block - 1) / block < sms)
        block >>= 1;
    return block;
}

/* Threads per block, and elements per shared-memory tile, of a staged
 * all-pairs loop (one iteration per thread, an inner loop over tiles) whose
 * region names no block size: `block` (512), halved while the blocks would
 * fill less than three quarters of the multiprocessors, down to 32. Larger
 * tiles cost fewer barriers per element: N-body on an H100 with 65536 bodies
 * ran 2.4% faster in 128 blocks of 512 than in 256 of 256, and 10% slower
 * with 32768 bodies (64 blocks for 132 SMs). */
static inline int macc_stage_block(long long total, int block)
{
    const int sms = macc_sm_count();
    while (block > 32 && 4 * ((total + block - 1) / block) < 3LL * sms)
        block >>= 1;
    return block;
}

static inline int macc_grid_size(long long total, int block, int num_teams, int capped)
{
    long long g = (total + block - 1) / block;
    long long cap = capped ? (long long)macc_sm_count() * 32 : 0x7fffffffLL;
    if (g > cap)
        g = cap;
    if (num_teams > 0 && g > num_teams)
        g = num_teams;
    return g < 1 ? 1 : (int)g;
}

#endif
