/* omp.c: OpenMP's device memory and device query routines, for host code.
 *
 * The program's <omp.h> (GCC's) declares them and libgomp defines them too;
 * these definitions are the ones used because the driver links libmaccrt
 * before -fopenmp adds libgomp: a program that calls one of them pulls this
 * object out of libmaccrt.a (the executable's definition wins over the
 * shared libgomp's), and libmaccrt.so comes before libgomp.so in the search
 * order. Device numbers are the runtime's, which are OpenMP's: GPUs 0..k-1,
 * the host (the initial device) k == omp_get_num_devices().
 *
 * Return values follow OpenMP: 0 for success, an errno value otherwise;
 * nothing here is a fatal error.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The definitions keep default visibility in libmaccrt.so (built with
 * -fvisibility=hidden). GCC's <omp.h> checks them against OpenMP's
 * signatures where it is there; macc_rt.h declares the OpenMP 5.1 ones that
 * older <omp.h> files lack. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
#if defined(__has_include)
#if __has_include(<omp.h>)
#include <omp.h>
#endif
#endif

/* The device numbered n, or NULL. */
static maccrt_device *omp__device(int n)
{
    maccrt_init();
    if (n < 0 || n >= maccrt_rt.ndevices)
        return NULL;
    return maccrt_rt.devices[n];
}

static int omp__shared(const maccrt_device *d)
{
    return (d->plugin->caps & MACCRT_CAP_SHARED_MEM) != 0;
}

/* ---- devices ------------------------------------------------------------------ */

int omp_get_num_devices(void)
{
    maccrt_init();
    return maccrt_rt.ngpus;
}

int omp_get_initial_device(void)
{
    maccrt_init();
    return maccrt_rt.host->num;
}

/* Host code runs on the initial device (a region's host version too). */
int omp_get_device_num(void)
{
    return omp_get_initial_device();
}

int omp_is_initial_device(void)
{
    return 1;
}

/* -1 is OpenMP 5.2's omp_initial_device; other negative numbers
 * (omp_invalid_device) make regions without a device clause an error. */
void omp_set_default_device(int device_num)
{
    maccrt_init();
    atomic_store(&maccrt_rt.default_device, MACC_device_num(device_num) == MACC_DEVICE_HOST
                                                ? maccrt_rt.host->num
                                                : MACC_device_num(device_num));
}

/* Unset: the device a data directive without a device clause uses (the
 * first selectable GPU, else the host). */
int omp_get_default_device(void)
{
    maccrt_init();
    int n = atomic_load(&maccrt_rt.default_device);
    if (n >= 0)
        return n;
    if (n == MACC_DEVICE_INVALID)
        return -4; /* omp_invalid_device */
    return maccrt_data_device(MACC_DEVICE_DEFAULT, NULL)->num;
}

/* ---- device memory -------------------------------------------------------------- */

void *omp_target_alloc(size_t size, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d || size == 0)
        return NULL;
    void *p = omp__shared(d) ? malloc(size) : d->plugin->alloc(d, NULL, size);
    if (p)
        maccrt_alloc_note(d, p, size);
    return p;
}

void omp_target_free(void *device_ptr, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d || !device_ptr)
        return;
    /* only what omp_target_alloc gave out on that device */
    if (!maccrt_alloc_forget(d, device_ptr))
        return;
    if (omp__shared(d))
        free(device_ptr);
    else
        d->plugin->free(d, device_ptr);
}

/* One contiguous copy of n bytes between any two devices (GPU to GPU through
 * a host buffer); the bytes count in the statistics. 0 or an error code. */
static int omp__copy(maccrt_device *dd, char *dst, maccrt_device *sd, const char *src, size_t n)
{
    int err = 0;
    if (!n)
        return 0;
    if (omp__shared(dd) && omp__shared(sd)) {
        memmove(dst, src, n);
    } else if (omp__shared(sd)) {
        err = dd->plugin->copy_h2d(dd, dst, src, n);
        if (!err)
            atomic_fetch_add(&dd->bytes_h2d, n);
    } else if (omp__shared(dd)) {
        err = sd->plugin->copy_d2h(sd, dst, src, n);
        if (!err)
            atomic_fetch_add(&sd->bytes_d2h, n);
    } else {
        char *tmp = malloc(n);
        if (!tmp)
            return ENOMEM;
        err = omp__copy(maccrt_rt.host, tmp, sd, src, n);
        if (!err)
            err = omp__copy(dd, dst, maccrt_rt.host, tmp, n);
        free(tmp);
    }
    return err ? (err > 0 ? err : EIO) : 0;
}

int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset,
                      size_t src_offset, int dst_device_num, int src_device_num)
{
    maccrt_device *dd = omp__device(dst_device_num), *sd = omp__device(src_device_num);
    if (!dd || !sd)
        return EINVAL;
    if (!length)
        return 0;
    if (!dst || !src)
        return EINVAL;
    return omp__copy(dd, (char *)dst + dst_offset, sd, (const char *)src + src_offset, length);
}

int omp_target_memcpy_rect(void *dst, const void *src, size_t element_size, int num_dims,
                           const size_t *volume, const size_t *dst_offsets,
                           const size_t *src_offsets, const size_t *dst_dimensions,
                           const size_t *src_dimensions, int dst_device_num, int src_device_num)
{
    if (!dst && !src)
        return INT_MAX; /* the most dimensions supported */
    maccrt_device *dd = omp__device(dst_device_num), *sd = omp__device(src_device_num);
    if (!dd || !sd || !dst || !src || num_dims < 1 || !volume || !dst_offsets || !src_offsets ||
        !dst_dimensions || !src_dimensions)
        return EINVAL;
    for (int k = 0; k < num_dims; k++)
        if (!volume[k])
            return 0;
    /* Rows of the innermost dimension, one copy each; idx runs over the
     * outer dimensions' volume. */
    size_t row = volume[num_dims - 1] * element_size;
    size_t *idx = calloc((size_t)num_dims, sizeof *idx);
    if (!idx)
        return ENOMEM;
    int err = 0;
    for (;;) {
        size_t doff = 0, soff = 0;
        for (int k = 0; k < num_dims; k++) {
            size_t i = k < num_dims - 1 ? idx[k] : 0;
            doff = doff * dst_dimensions[k] + dst_offsets[k] + i;
            soff = soff * src_dimensions[k] + src_offsets[k] + i;
        }
        err = omp__copy(dd, (char *)dst + doff * element_size, sd,
                        (const char *)src + soff * element_size, row);
        if (err)
            break;
        int k = num_dims - 2;
        while (k >= 0 && ++idx[k] == volume[k])
            idx[k--] = 0;
        if (k < 0)
            break;
    }
    free(idx);
    return err;
}

/* ---- the device data environment ---------------------------------------------------- */

int omp_target_is_present(const void *ptr, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d)
        return 0;
    if (d == maccrt_rt.host)
        return 1; /* OpenMP: everything is present on the host device */
    return ptr && maccrt_map_is_present(d, ptr, 0);
}

int omp_target_is_accessible(const void *ptr, size_t size, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d)
        return 0;
    if (omp__shared(d))
        return 1;
    /* on a GPU: managed memory only (macc --managed, MACC_malloc) */
    return ptr && maccrt_managed_owns(ptr, size ? size : 1);
}

int omp_target_associate_ptr(const void *host_ptr, const void *device_ptr, size_t size,
                             size_t device_offset, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d || omp__shared(d))
        return EINVAL; /* the host device has nothing to associate */
    return maccrt_map_associate(d, host_ptr, (char *)device_ptr + device_offset, size);
}

int omp_target_disassociate_ptr(const void *ptr, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d || omp__shared(d) || !ptr)
        return EINVAL;
    return maccrt_map_disassociate(d, ptr);
}

void *omp_get_mapped_ptr(const void *ptr, int device_num)
{
    maccrt_device *d = omp__device(device_num);
    if (!d || !ptr)
        return NULL;
    if (d == maccrt_rt.host)
        return (void *)ptr;
    return maccrt_map_device_ptr(d, ptr);
}

/* #pragma omp allocate(list) [allocator(a)] [align(n)] of local variables
 * (the host file): each variable's storage comes from the allocator, held
 * by a pointer that a cleanup attribute frees when the block is left. */
void *MACC_omp_allocate(MACC_SIZE_T bytes, MACC_SIZE_T align, unsigned long long allocator, const MACC_SrcLoc *loc)
{
    void *p = NULL;
    if (!bytes)
        bytes = 1;
#if defined(_OMP_H) || defined(__OMP_H)
    if (align > 1)
        p = omp_aligned_alloc(align, bytes, (omp_allocator_handle_t)allocator);
    else
        p = omp_alloc(bytes, (omp_allocator_handle_t)allocator);
#else
    (void)allocator;
    if (posix_memalign(&p, align > sizeof(void *) ? align : sizeof(void *), bytes))
        p = NULL;
#endif
    if (!p)
        maccrt_fatal(loc, "omp allocate: the allocator gave no memory for %llu bytes", (unsigned long long)bytes);
    return p;
}

void MACC_omp_allocate_free(void *pp)
{
    void *p = *(void **)pp;
    if (!p)
        return;
#if defined(_OMP_H) || defined(__OMP_H)
    omp_free(p, omp_null_allocator);
#else
    free(p);
#endif
}

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
