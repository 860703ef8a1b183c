/* acc.c: the OpenACC runtime API (include/openacc.h) over macc's data
 * directory and task queues, for host code.
 *
 * Data routines are the data directives' entry points with one map
 * (acc_copyin is `enter data copyin`, acc_copyout `exit data copyout`, ...),
 * so the present table, reference counts and the coherence rules are the
 * ones regions and directives see. The current device is OpenMP's default
 * device (acc_set_device_num sets it): a GPU, or the host.
 *
 * Asynchronous queues: MACC_acc_queue(q) is queue q's token, an address that
 * work on the queue depends on (inout): the tasks of one queue run in order,
 * tasks of different queues overlap. Waiting for a queue waits for every
 * deferred task of the calling thread (MACC_taskwait): correct, coarser than
 * OpenACC needs. Like omp.c, these definitions come before libgomp's (the
 * driver links libmaccrt first).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
#include "openacc.h"

int omp_get_default_device(void);
void omp_set_default_device(int device_num);
void *omp_target_alloc(size_t size, int device_num);
void omp_target_free(void *device_ptr, int device_num);
int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset, size_t src_offset,
                      int dst_device_num, int src_device_num);

static const MACC_SrcLoc acc__loc = {"(OpenACC runtime call)", 0, 0, "acc"};

/* ---- queues -------------------------------------------------------------------- */

#define ACC__NQUEUES 256
static char acc__tokens[ACC__NQUEUES];
/* the queue that async without an argument (acc_async_noval) names: queue 0
 * at first, as NVHPC's (a queue number, not a special value) */
static atomic_int acc__default_async = 0;

void *MACC_acc_queue(int q)
{
    if (q == acc_async_noval || q == acc_async_default)
        q = atomic_load(&acc__default_async);
    unsigned h = (unsigned)q * 2654435761u;
    return &acc__tokens[h % ACC__NQUEUES];
}

void *MACC_acc_wait_all_token(void)
{
    MACC_taskwait(&acc__loc);
    return &acc__tokens[0];
}

int acc_get_default_async(void)
{
    return atomic_load(&acc__default_async);
}

void acc_set_default_async(int async_arg)
{
    if (async_arg == acc_async_noval)
        return; /* the default queue stays what it is */
    atomic_store(&acc__default_async, async_arg == acc_async_default ? 0 : async_arg);
}

void acc_wait(int wait_arg) { (void)wait_arg; MACC_taskwait(&acc__loc); }
void acc_wait_device(int wait_arg, int dev_num) { (void)dev_num; acc_wait(wait_arg); }
void acc_wait_async(int wait_arg, int async_arg) { (void)async_arg; acc_wait(wait_arg); }
void acc_wait_device_async(int wait_arg, int async_arg, int dev_num) { (void)async_arg; (void)dev_num; acc_wait(wait_arg); }
void acc_wait_all(void) { MACC_taskwait(&acc__loc); }
void acc_wait_all_device(int dev_num) { (void)dev_num; acc_wait_all(); }
void acc_wait_all_async(int async_arg) { (void)async_arg; acc_wait_all(); }
void acc_wait_all_device_async(int async_arg, int dev_num) { (void)async_arg; (void)dev_num; acc_wait_all(); }
void acc_async_wait(int wait_arg) { acc_wait(wait_arg); }
void acc_async_wait_all(void) { acc_wait_all(); }

int acc_wait_any(int count, int wait_arg[])
{
    acc_wait_all();
    for (int i = 0; i < count; i++)
        if (wait_arg && wait_arg[i] != acc_async_sync)
            return i;
    return -1;
}

int acc_wait_any_device(int count, int wait_arg[], int dev_num)
{
    (void)dev_num;
    return acc_wait_any(count, wait_arg);
}

/* A test completes the queue's work first, then answers "done". */
int acc_async_test(int wait_arg) { acc_wait(wait_arg); return 1; }
int acc_async_test_device(int wait_arg, int dev_num) { (void)dev_num; return acc_async_test(wait_arg); }
int acc_async_test_all(void) { acc_wait_all(); return 1; }
int acc_async_test_all_device(int dev_num) { (void)dev_num; return acc_async_test_all(); }

/* ---- devices ------------------------------------------------------------------- */

static maccrt_device *acc__dev(void)
{
    maccrt_init();
    return maccrt_data_device(MACC_DEVICE_DEFAULT, NULL);
}

static int acc__shared(const maccrt_device *d)
{
    return (d->plugin->caps & MACCRT_CAP_SHARED_MEM) != 0;
}

static int acc__is_gpu_type(acc_device_t t)
{
    return t == acc_device_nvidia || t == acc_device_not_host || t == acc_device_default || t == acc_device_current;
}

int acc_get_num_devices(acc_device_t dev_type)
{
    maccrt_init();
    if (dev_type == acc_device_host)
        return 1;
    if (dev_type == acc_device_nvidia || dev_type == acc_device_not_host)
        return maccrt_rt.ngpus;
    if (dev_type == acc_device_default || dev_type == acc_device_current)
        return maccrt_rt.ngpus ? maccrt_rt.ngpus : 1;
    return 0;
}

acc_device_t acc_get_device_type(void)
{
    return acc__shared(acc__dev()) ? acc_device_host : acc_device_nvidia;
}

void acc_set_device_type(acc_device_t dev_type)
{
    maccrt_init();
    if (dev_type == acc_device_host || maccrt_rt.ngpus == 0)
        omp_set_default_device(maccrt_rt.host->num);
    else if (acc__is_gpu_type(dev_type) && acc__shared(acc__dev()))
        omp_set_default_device(0);
}

int acc_get_device_num(acc_device_t dev_type)
{
    maccrt_device *d = acc__dev();
    if (dev_type == acc_device_host || acc__shared(d))
        return 0;
    return d->index;
}

void acc_set_device_num(int dev_num, acc_device_t dev_type)
{
    maccrt_init();
    if (dev_type == acc_device_host || maccrt_rt.ngpus == 0) {
        omp_set_default_device(maccrt_rt.host->num);
        return;
    }
    if (dev_num < 0)
        dev_num = 0; /* the implementation's default device of that type */
    if (dev_num < maccrt_rt.ngpus)
        omp_set_default_device(dev_num);
}

/* The device numbered dev_num of type dev_type, or NULL. */
static maccrt_device *acc__typed(int dev_num, acc_device_t dev_type)
{
    maccrt_init();
    if (dev_type == acc_device_host)
        return dev_num == 0 ? maccrt_rt.host : NULL;
    if (acc__is_gpu_type(dev_type) && maccrt_rt.ngpus > 0)
        return dev_num >= 0 && dev_num < maccrt_rt.ngpus ? maccrt_rt.devices[dev_num] : NULL;
    if ((dev_type == acc_device_default || dev_type == acc_device_current) && dev_num == 0)
        return maccrt_rt.host;
    return NULL;
}

size_t acc_get_property(int dev_num, acc_device_t dev_type, acc_device_property_t property)
{
    maccrt_device *d = acc__typed(dev_num, dev_type);
    size_t free_b = 0, total_b = 0;
    if (!d)
        return 0;
    if (acc__shared(d)) {
        /* the host: its physical memory; its free memory is not the device's
         * (acc_malloc there is malloc, which the page count does not see, and
         * other processes move it): 0, unknown, as libgomp's host device says */
        long pages = sysconf(_SC_PHYS_PAGES), ps = sysconf(_SC_PAGESIZE);
        total_b = pages > 0 && ps > 0 ? (size_t)pages * (size_t)ps : 0;
    } else if (!d->plugin->mem_info || d->plugin->mem_info(d, &free_b, &total_b) != 0) {
        total_b = d->mem_bytes;
    }
    switch (property) {
    case acc_property_memory: return total_b;
    case acc_property_free_memory: return free_b;
    case acc_property_shared_memory_support: return acc__shared(d) ? 1 : 0;
    default: return 0;
    }
}

const char *acc_get_property_string(int dev_num, acc_device_t dev_type, acc_device_property_t property)
{
    maccrt_device *d = acc__typed(dev_num, dev_type);
    if (!d)
        return NULL;
    switch (property) {
    case acc_property_name: return d->name;
    case acc_property_vendor: return acc__shared(d) ? "host" : "NVIDIA";
    case acc_property_driver: return acc__shared(d) ? "macc host" : "CUDA";
    default: return NULL;
    }
}

void acc_init(acc_device_t dev_type) { (void)dev_type; maccrt_init(); }
void acc_init_device(int dev_num, acc_device_t dev_type) { (void)dev_num; (void)dev_type; maccrt_init(); }
/* The devices stay up (their data is the program's until exit); pending work completes. */
void acc_shutdown(acc_device_t dev_type) { (void)dev_type; acc_wait_all(); }
void acc_shutdown_device(int dev_num, acc_device_t dev_type) { (void)dev_num; (void)dev_type; acc_wait_all(); }

/* Host code (a region's host version included) runs on the host. */
int acc_on_device(acc_device_t dev_type)
{
    return dev_type == acc_device_host;
}

/* ---- data ------------------------------------------------------------------------ */

void *acc_malloc(size_t bytes)
{
    return omp_target_alloc(bytes, acc__dev()->num);
}

void acc_free(void *data_dev)
{
    omp_target_free(data_dev, acc__dev()->num);
}

void *acc_deviceptr(void *data_arg)
{
    maccrt_device *d = acc__dev();
    if (!data_arg || !maccrt_map_is_present(d, data_arg, 0))
        return NULL;
    return acc__shared(d) ? data_arg : maccrt_map_device_ptr(d, data_arg);
}

/* The host address of a device address: on the host they are the same;
 * on a GPU the present table is searched by host range, not device address. */
void *acc_hostptr(void *data_dev)
{
    return acc__shared(acc__dev()) ? data_dev : NULL;
}

int acc_is_present(void *data_arg, size_t bytes)
{
    return data_arg && maccrt_map_is_present(acc__dev(), data_arg, bytes);
}

enum { ACC__ENTER, ACC__EXIT, ACC__UPDATE };

static void acc__op(int op, void *p, size_t bytes, int kind, int async, const char *name)
{
    MACC_Map m = {name, p, p, bytes, kind};
    MACC_Dep dep = {NULL, 1, MACC_DEP_INOUT};
    int ndeps = 0, flags = 0; /* (the queue's dependence, should the call become deferred) */
    if (!p)
        return;
    if (async != acc_async_sync) {
        /* after the queue's work, and done before the call returns: a
         * region queued next finds the data present when it is created */
        acc_wait(async);
    }
    if (op == ACC__ENTER)
        MACC_data_enter(&acc__loc, 1, &m, MACC_DEVICE_DEFAULT, ndeps, ndeps ? &dep : NULL, flags);
    else if (op == ACC__EXIT)
        MACC_data_exit(&acc__loc, 1, &m, MACC_DEVICE_DEFAULT, ndeps, ndeps ? &dep : NULL, flags);
    else
        MACC_data_update(&acc__loc, 1, &m, MACC_DEVICE_DEFAULT, ndeps, ndeps ? &dep : NULL, flags);
}

void *acc_copyin(void *a, size_t n) { acc__op(ACC__ENTER, a, n, MACC_MAP_TO, acc_async_sync, "acc_copyin"); return acc_deviceptr(a); }
void acc_copyin_async(void *a, size_t n, int q) { acc__op(ACC__ENTER, a, n, MACC_MAP_TO, q, "acc_copyin"); }
void *acc_create(void *a, size_t n) { acc__op(ACC__ENTER, a, n, MACC_MAP_ALLOC, acc_async_sync, "acc_create"); return acc_deviceptr(a); }
void acc_create_async(void *a, size_t n, int q) { acc__op(ACC__ENTER, a, n, MACC_MAP_ALLOC, q, "acc_create"); }
void *acc_present_or_copyin(void *a, size_t n) { return acc_copyin(a, n); }
void *acc_pcopyin(void *a, size_t n) { return acc_copyin(a, n); }
void *acc_present_or_create(void *a, size_t n) { return acc_create(a, n); }
void *acc_pcreate(void *a, size_t n) { return acc_create(a, n); }
void acc_copyout(void *a, size_t n) { acc__op(ACC__EXIT, a, n, MACC_MAP_FROM, acc_async_sync, "acc_copyout"); }
void acc_copyout_async(void *a, size_t n, int q) { acc__op(ACC__EXIT, a, n, MACC_MAP_FROM, q, "acc_copyout"); }
void acc_copyout_finalize(void *a, size_t n) { acc__op(ACC__EXIT, a, n, MACC_MAP_FROM | MACC_MAP_DELETE, acc_async_sync, "acc_copyout"); }
void acc_copyout_finalize_async(void *a, size_t n, int q) { acc__op(ACC__EXIT, a, n, MACC_MAP_FROM | MACC_MAP_DELETE, q, "acc_copyout"); }
void acc_delete(void *a, size_t n) { acc__op(ACC__EXIT, a, n, MACC_MAP_ALLOC, acc_async_sync, "acc_delete"); }
void acc_delete_async(void *a, size_t n, int q) { acc__op(ACC__EXIT, a, n, MACC_MAP_ALLOC, q, "acc_delete"); }
void acc_delete_finalize(void *a, size_t n) { acc__op(ACC__EXIT, a, n, MACC_MAP_ALLOC | MACC_MAP_DELETE, acc_async_sync, "acc_delete"); }
void acc_delete_finalize_async(void *a, size_t n, int q) { acc__op(ACC__EXIT, a, n, MACC_MAP_ALLOC | MACC_MAP_DELETE, q, "acc_delete"); }
void acc_update_device(void *a, size_t n) { acc__op(ACC__UPDATE, a, n, MACC_MAP_TO, acc_async_sync, "acc_update_device"); }
void acc_update_device_async(void *a, size_t n, int q) { acc__op(ACC__UPDATE, a, n, MACC_MAP_TO, q, "acc_update_device"); }
void acc_update_self(void *a, size_t n) { acc__op(ACC__UPDATE, a, n, MACC_MAP_FROM, acc_async_sync, "acc_update_self"); }
void acc_update_self_async(void *a, size_t n, int q) { acc__op(ACC__UPDATE, a, n, MACC_MAP_FROM, q, "acc_update_self"); }

void acc_map_data(void *data_arg, void *data_dev, size_t bytes)
{
    maccrt_device *d = acc__dev();
    if (acc__shared(d) && data_arg != data_dev) {
        /* on the host the data is its own device copy: present, at its own address */
        MACC_Map m = {"acc_map_data", data_arg, data_arg, bytes, MACC_MAP_ALLOC};
        MACC_data_enter(&acc__loc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
        return;
    }
    if (maccrt_map_associate(d, data_arg, data_dev, bytes) != 0)
        maccrt_fatal(&acc__loc, "acc_map_data: %p is already present on %s", data_arg, d->name);
}

void acc_unmap_data(void *data_arg)
{
    maccrt_device *d = acc__dev();
    if (maccrt_map_disassociate(d, data_arg) != 0 && acc__shared(d)) {
        MACC_Map m = {"acc_unmap_data", data_arg, data_arg, 1, MACC_MAP_ALLOC | MACC_MAP_DELETE};
        MACC_data_exit(&acc__loc, 1, &m, MACC_DEVICE_DEFAULT, 0, NULL, 0);
    }
}

void acc_memcpy_to_device(void *dst, void *src, size_t n)
{
    maccrt_device *d = acc__dev();
    omp_target_memcpy(dst, src, n, 0, 0, d->num, maccrt_rt.host->num);
}

void acc_memcpy_from_device(void *dst, void *src, size_t n)
{
    maccrt_device *d = acc__dev();
    omp_target_memcpy(dst, src, n, 0, 0, maccrt_rt.host->num, d->num);
}

void acc_memcpy_device(void *dst, void *src, size_t n)
{
    maccrt_device *d = acc__dev();
    omp_target_memcpy(dst, src, n, 0, 0, d->num, d->num);
}

/* The asynchronous copies complete the queue's earlier work, then copy. */
void acc_memcpy_to_device_async(void *dst, void *src, size_t n, int q) { acc_wait(q); acc_memcpy_to_device(dst, src, n); }
void acc_memcpy_from_device_async(void *dst, void *src, size_t n, int q) { acc_wait(q); acc_memcpy_from_device(dst, src, n); }
void acc_memcpy_device_async(void *dst, void *src, size_t n, int q) { acc_wait(q); acc_memcpy_device(dst, src, n); }

void acc_memcpy_d2d(void *dst, void *src, size_t bytes, int dev_dst, int dev_src)
{
    acc_device_t t = acc_get_device_type();
    maccrt_device *dd = acc__typed(dev_dst, t), *sd = acc__typed(dev_src, t);
    if (!dd || !sd)
        maccrt_fatal(&acc__loc, "acc_memcpy_d2d: no device %d or %d", dev_dst, dev_src);
    void *dp = acc__shared(dd) ? dst : maccrt_map_device_ptr(dd, dst);
    void *sp = acc__shared(sd) ? src : maccrt_map_device_ptr(sd, src);
    if (!dp || !sp)
        maccrt_fatal(&acc__loc, "acc_memcpy_d2d: data not present on the device");
    if (dp != sp || dd != sd)
        omp_target_memcpy(dp, sp, bytes, 0, 0, dd->num, sd->num);
}

void acc_memcpy_d2d_async(void *dst, void *src, size_t bytes, int dev_dst, int dev_src, int q)
{
    acc_wait(q);
    acc_memcpy_d2d(dst, src, bytes, dev_dst, dev_src);
}

/* attach: the device copy of the pointer *ptr_addr holds the device address
 * of what it points to (both present); detach: the host value again. On the
 * host both are the same bytes. */
static void acc__attach(void **pp, int attach)
{
    maccrt_device *d = acc__dev();
    if (!pp || acc__shared(d))
        return;
    void *var = maccrt_map_device_ptr(d, pp);
    void *val = attach ? maccrt_map_device_ptr(d, *pp) : *pp;
    if (var && val)
        d->plugin->copy_h2d(d, var, &val, sizeof val);
}

void acc_attach(void **p) { acc__attach(p, 1); }
void acc_attach_async(void **p, int q) { acc_wait(q); acc__attach(p, 1); }
void acc_detach(void **p) { acc__attach(p, 0); }
void acc_detach_async(void **p, int q) { acc_wait(q); acc__attach(p, 0); }
void acc_detach_finalize(void **p) { acc__attach(p, 0); }
void acc_detach_finalize_async(void **p, int q) { acc_wait(q); acc__attach(p, 0); }

/* acc declare in a function (the translator's cleanup variable): the maps
 * are kept until the block is left. */
typedef struct acc__declared {
    const MACC_SrcLoc *loc;
    int n, device;
    MACC_Map maps[];
} acc__declared;

void *MACC_acc_declare_begin(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device)
{
    acc__declared *s = malloc(sizeof *s + (size_t)(nmaps > 0 ? nmaps : 0) * sizeof(MACC_Map));
    if (!s) {
        fputs("macc: fatal error: out of memory\n", stderr);
        exit(1);
    }
    s->loc = loc;
    s->n = nmaps;
    s->device = device;
    if (nmaps > 0)
        memcpy(s->maps, maps, (size_t)nmaps * sizeof(MACC_Map));
    MACC_data_begin(loc, nmaps, maps, device);
    return s;
}

void MACC_acc_declare_end(void **handle)
{
    acc__declared *s = handle ? *handle : NULL;
    if (!s)
        return;
    MACC_taskwait(s->loc); /* async work on the data ends first, as at the end of acc data */
    MACC_data_end(s->loc, s->n, s->maps, s->device);
    free(s);
    *handle = NULL;
}

void MACC_acc_rows(const MACC_SrcLoc *loc, const char *name, void **ptrs, long long lo, long long len,
                   MACC_SIZE_T elem, long long rlo, long long rlen, int kind, int device, int op)
{
    maccrt_init();
    maccrt_device *d = maccrt_data_device(device, loc);
    if (!ptrs || len <= 0 || rlen < 0)
        return;
    /* op: 1 acc data begins, 0 it ends, 2 enter data, 3 exit data, 4 before
     * an update (detach), 5 after it (the rows, then attach) */
    int begin = op == 1 || op == 2 || op == 5;
    for (long long i = lo; i < lo + len; i++) {
        char *row = ptrs[i];
        MACC_Map m = {name, row, row + rlo * (long long)elem, (MACC_SIZE_T)rlen * elem, kind};
        if (!row)
            continue;
        if (op == 1)
            MACC_data_begin(loc, 1, &m, device);
        else if (op == 2)
            MACC_data_enter(loc, 1, &m, device, 0, NULL, 0);
        else if (op == 5)
            MACC_data_update(loc, 1, &m, device, 0, NULL, 0);
        else if (op == 0)
            MACC_data_end(loc, 1, &m, device);
        else if (op == 3)
            MACC_data_exit(loc, 1, &m, device, 0, NULL, 0);
        /* the device copy of ptrs[i]: the row's device address (attach), or,
         * before an update or once the row has left the device (a row an
         * enclosing construct still holds stays attached), the host's */
        void *var = acc__shared(d) ? NULL : maccrt_map_device_ptr(d, &ptrs[i]);
        if (!var || ((op == 0 || op == 3) && maccrt_map_device_ptr(d, m.start)))
            continue;
        char *start = begin ? maccrt_map_device_ptr(d, m.start) : NULL;
        void *val = begin ? (void *)(start ? start - rlo * (long long)elem : NULL) : (void *)row;
        if (val)
            d->plugin->copy_h2d(d, var, &val, sizeof val);
    }
}

/* copyout(zero: ...) / create(zero: ...): a section that is not present yet
 * is entered (a structured reference held by the returned handle) and its
 * device copy zeroed (on the host, whose copy is the data, the data), so that
 * the construct's own maps find it present; MACC_acc_zero_end drops the
 * reference with the kind of the construct's maps of it (from: copied out). */
typedef struct acc__zeroed {
    MACC_Map map;
    int device;
} acc__zeroed;

void *MACC_acc_zero_begin(const MACC_SrcLoc *loc, const char *name, void *start, MACC_SIZE_T bytes, int device)
{
    maccrt_init();
    maccrt_device *d = maccrt_data_device(device, loc);
    if (!start || !bytes || maccrt_map_is_present(d, start, bytes))
        return NULL;
    acc__zeroed *z = calloc(1, sizeof *z);
    void *zeros = acc__shared(d) ? NULL : calloc(1, bytes);
    if (!z || (!acc__shared(d) && !zeros)) {
        fputs("macc: fatal error: out of memory\n", stderr);
        exit(1);
    }
    z->map = (MACC_Map){name, start, start, bytes, MACC_MAP_ALLOC};
    z->device = device;
    MACC_data_begin(loc, 1, &z->map, device);
    if (acc__shared(d)) {
        memset(start, 0, bytes);
    } else {
        void *dst = maccrt_map_device_ptr(d, start);
        if (dst)
            d->plugin->copy_h2d(d, dst, zeros, bytes);
    }
    free(zeros);
    return z;
}

void MACC_acc_zero_end(const MACC_SrcLoc *loc, void *handle, int kind)
{
    acc__zeroed *z = handle;
    if (!z)
        return;
    z->map.kind = kind;
    MACC_data_end(loc, 1, &z->map, z->device);
    free(z);
}
