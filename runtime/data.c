/* data.c: the data directives and the copies.
 *
 * MACC_data_* (data regions, enter/exit data, update, as tasks when they
 * have dependences or nowait), MACC_is_present and MACC_device_addr act on
 * the data directory (cache.c), which holds every device's present-table
 * entries and every GPU copy of a host section in one range tree per
 * device. This file also makes the copies between the host and a device or
 * between two devices (counted, timed, traced; a failure is fatal and names
 * the variable), allocates device memory for the directory's entries, and
 * keeps omp_target_alloc's blocks per device (the affinity rule of device
 * pointers).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* omp_target_alloc's blocks of every device: innermost. */
static pthread_mutex_t data__alloc_lock = PTHREAD_MUTEX_INITIALIZER;

void maccrt_data_device_fini(maccrt_device *d)
{
    maccrt_dir_device_fini(d);
    pthread_mutex_lock(&data__alloc_lock);
    while (d->allocs.root) {
        maccrt_rnode *n = d->allocs.root;
        maccrt_rtree_remove(&d->allocs, n);
        free(n);
    }
    pthread_mutex_unlock(&data__alloc_lock);
}

/* Fatal error for a failed copy ("copying 'x' (N bytes) to nvidia:0 failed:
 * an illegal memory access was encountered"); prep is "to" or "from". */
static void data__copy_failed(maccrt_device *d, const char *name, const char *prep, size_t bytes,
                              int err, const MACC_SrcLoc *loc)
{
    if (!name)
        name = "(unnamed)";
    const char *es = d->plugin->error_string ? d->plugin->error_string(err) : NULL;
    if (es)
        maccrt_fatal(loc, "copying '%s' (%zu bytes) %s %s failed: %s", name, bytes, prep,
                     d->name, es);
    maccrt_fatal(loc, "copying '%s' (%zu bytes) %s %s failed (error %d)", name, bytes,
                 prep, d->name, err);
}

/* One more sample of a link's bandwidth: what the link gives one copy, so a
 * faster sample is taken at once and slower ones (copies that shared the
 * link, or waited behind others) pull it down slowly. Races between copiers
 * only blur it. */
static void data__learn_bw(_Atomic double *bw, size_t bytes, double dt)
{
    if (dt <= 0)
        return;
    double v = (double)bytes / dt, old = atomic_load(bw);
    atomic_store(bw, old <= 0 || v > old ? v : 0.98 * old + 0.02 * v);
}

/* maccrt_copy, or (start) a fill through plugin->copy_h2d_start: returns its
 * fence, NULL once the bytes are in place. The link's bandwidth is learnt
 * only from copies made whole: a fill left on its way took the calling
 * thread's share of it (a staged copy's memcpy, the DMA's launch). */
static void *data__copy(maccrt_device *d, int to_dev, void *dst, const void *src, size_t bytes,
                        const char *name, const MACC_SrcLoc *loc, int start)
{
    if (!bytes || dst == src)
        return NULL;
    int timed = bytes >= ((size_t)1 << 18) || maccrt_trace_on();
    double t0 = timed ? maccrt_now() : 0.0;
    void *fence = NULL;
    int err = start    ? d->plugin->copy_h2d_start(d, dst, src, bytes, &fence)
              : to_dev ? d->plugin->copy_h2d(d, dst, src, bytes)
                       : d->plugin->copy_d2h(d, dst, src, bytes);
    if (err)
        data__copy_failed(d, name, to_dev ? "to" : "from", bytes, err, loc);
    atomic_fetch_add(to_dev ? &d->bytes_h2d : &d->bytes_d2h, bytes);
    if (timed && !fence && bytes >= ((size_t)1 << 18))
        data__learn_bw(to_dev ? &d->bw_h2d : &d->bw_d2h, bytes, maccrt_now() - t0);
    if (maccrt_trace_on() && t0 > 0.0)
        maccrt_trace_event(to_dev ? MACCRT_TRACE_H2D : MACCRT_TRACE_D2H, d,
                           name ? name : to_dev ? "h2d" : "d2h", t0, maccrt_now(), bytes);
    return fence;
}

void maccrt_copy(maccrt_device *d, int to_dev, void *dst, const void *src, size_t bytes,
                 const char *name, const MACC_SrcLoc *loc)
{
    (void)data__copy(d, to_dev, dst, src, bytes, name, loc, 0);
}

/* One large fill in DATA__SYNC_EVERY per thread is made whole (and every one
 * until the link has a first sample), for the bandwidth (data__copy). */
#define DATA__SYNC_EVERY 8

void *maccrt_copy_start(maccrt_device *d, void *dst, const void *src, size_t bytes, const char *name,
                        const MACC_SrcLoc *loc)
{
    static int on = -1;
    static __thread unsigned data__nstart;
    int start = d->plugin->copy_h2d_start && maccrt_env_flag(&on, "MACC_FILL_ASYNC", 1) &&
                !(bytes >= ((size_t)1 << 18) &&
                  (atomic_load(&d->bw_h2d) <= 0 || ++data__nstart % DATA__SYNC_EVERY == 0));
    return data__copy(d, 1, dst, src, bytes, name, loc, start);
}

int maccrt_copy_via(maccrt_device *d, void *dst, maccrt_device *from, const void *src, size_t bytes,
                    const char *name, const MACC_SrcLoc *loc)
{
    if (!bytes)
        return 1;
    if (!d->plugin->copy_d2h_via)
        return 0;
    double t0 = maccrt_trace_on() ? maccrt_now() : 0.0;
    int err = d->plugin->copy_d2h_via(d, dst, from, src, bytes);
    if (err < 0)
        return 0;
    if (err)
        data__copy_failed(d, name, "from", bytes, err, loc);
    atomic_fetch_add(&d->bytes_d2h, bytes);
    atomic_fetch_add(&d->bytes_p2p, bytes);
    if (t0 > 0.0)
        maccrt_trace_event(MACCRT_TRACE_D2H, d, name ? name : "d2h", t0, maccrt_now(), bytes);
    return 1;
}

void maccrt_copy_peer(maccrt_device *d, void *dst, maccrt_device *from, const void *src,
                      size_t bytes, const char *name, const MACC_SrcLoc *loc)
{
    if (!bytes)
        return;
    int timed = bytes >= ((size_t)1 << 18) || maccrt_trace_on();
    double t0 = timed ? maccrt_now() : 0.0;
    int err = d->plugin->copy_peer(d, dst, from, src, bytes);
    if (err)
        data__copy_failed(d, name, "to", bytes, err, loc);
    atomic_fetch_add(&d->bytes_p2p, bytes);
    if (timed && bytes >= ((size_t)1 << 18))
        data__learn_bw(&d->bw_p2p, bytes, maccrt_now() - t0);
    if (maccrt_trace_on() && t0 > 0.0)
        maccrt_trace_event(MACCRT_TRACE_P2P, d, name ? name : "p2p", t0, maccrt_now(), bytes);
}

void *maccrt_device_alloc(maccrt_device *d, void *hostptr, size_t bytes, const char *name,
                          pthread_mutex_t *locked, const MACC_SrcLoc *loc)
{
    void *dev = d->plugin->alloc(d, hostptr, bytes);
    if (dev)
        return dev;
    int err = d->plugin->alloc_error ? d->plugin->alloc_error(d) : MACCRT_ERR_NOMEM;
    if (locked)
        pthread_mutex_unlock(locked);
    if (!name)
        name = "(unnamed)";
    if (err == MACCRT_ERR_NOMEM || err == 0)
        maccrt_fatal(loc, "out of %s memory mapping '%s' (%zu bytes) on %s",
                     d->kind == MACC_DEV_NVIDIA ? "GPU" : "device", name, bytes, d->name);
    const char *es = d->plugin->error_string ? d->plugin->error_string(err) : NULL;
    if (es)
        maccrt_fatal(loc, "allocating '%s' (%zu bytes) on %s failed: %s", name, bytes, d->name, es);
    maccrt_fatal(loc, "allocating '%s' (%zu bytes) on %s failed (error %d)", name, bytes, d->name,
                 err);
}

void maccrt_alloc_note(maccrt_device *d, void *p, size_t bytes)
{
    maccrt_rnode *n = maccrt_xcalloc(1, sizeof *n);
    n->start = (uintptr_t)p;
    n->end = n->start + (bytes ? bytes : 1);
    if (n->end < n->start)
        n->end = UINTPTR_MAX;
    pthread_mutex_lock(&data__alloc_lock);
    /* a block the device handed out again after a free we never saw (the
     * program freed it some other way): the old record goes */
    maccrt_rnode *o;
    while ((o = maccrt_rtree_first_overlap(&d->allocs, n->start, n->end)) != NULL) {
        maccrt_rtree_remove(&d->allocs, o);
        free(o);
    }
    maccrt_rtree_insert(&d->allocs, n);
    pthread_mutex_unlock(&data__alloc_lock);
}

int maccrt_alloc_forget(maccrt_device *d, void *p)
{
    pthread_mutex_lock(&data__alloc_lock);
    maccrt_rnode *n = maccrt_rtree_find(&d->allocs, (uintptr_t)p);
    int found = n && n->start == (uintptr_t)p;
    if (found)
        maccrt_rtree_remove(&d->allocs, n);
    pthread_mutex_unlock(&data__alloc_lock);
    if (found)
        free(n);
    return found;
}

int maccrt_alloc_owner(const void *p)
{
    maccrt_runtime *rt = &maccrt_rt;
    for (int di = 0; di < rt->ndevices; di++) {
        maccrt_device *d = rt->devices[di];
        pthread_mutex_lock(&data__alloc_lock);
        int in = d->allocs.count && maccrt_rtree_find(&d->allocs, (uintptr_t)p);
        pthread_mutex_unlock(&data__alloc_lock);
        if (in)
            return di;
    }
    return -1;
}

maccrt_mask maccrt_data_affinity(const maccrt_task *t)
{
    maccrt_mask aff = 0;
    if (t->nmaps == 0)
        return 0;
    /* a device pointer (is_device_ptr, deviceptr) into a block that
     * omp_target_alloc made on some device: the task runs there */
    for (int i = 0; i < t->nmaps; i++) {
        const MACC_Map *m = &t->maps[i];
        if (!(m->kind & MACC_MAP_DEVICEPTR))
            continue;
        int owner = maccrt_alloc_owner(m->base);
        if (owner >= 0)
            aff |= MACCRT_BIT(owner);
    }
    return aff | maccrt_dir_affinity(t);
}

void maccrt_data_op(maccrt_device *d, int op, int nmaps, const MACC_Map *maps,
                    const MACC_SrcLoc *loc)
{
    maccrt_cache_flush(d);
    for (int i = 0; i < nmaps; i++) {
        const MACC_Map *m = &maps[i];
        switch (op) {
        case MACCRT_OP_ENTER:
            maccrt_map_acquire(d, m, MACCRT_REF_DYNAMIC, loc);
            break;
        case MACCRT_OP_EXIT:
            maccrt_map_release(d, m, MACCRT_REF_DYNAMIC,
                               (m->kind & MACC_MAP_DELETE_ALL) ? 2 : (m->kind & MACC_MAP_DELETE) != 0, loc);
            break;
        case MACCRT_OP_UPDATE:
            maccrt_map_update(d, m, loc);
            break;
        default:
            break;
        }
    }
}

/* ---- device selectors ----------------------------------------------------------------------- */

maccrt_device *maccrt_data_device(int device, const MACC_SrcLoc *loc)
{
    maccrt_runtime *rt = &maccrt_rt;
    if (device == MACC_DEVICE_DEFAULT || device == MACC_DEVICE_ANY) {
        int dd = atomic_load(&rt->default_device); /* omp_set_default_device, if set */
        if (dd != MACC_DEVICE_DEFAULT)
            device = dd;
    }
    if (device == MACC_DEVICE_DEFAULT || device == MACC_DEVICE_ANY) {
        for (int d = 0; d < rt->ngpus; d++)
            if (rt->selectable & MACCRT_BIT(d))
                return rt->devices[d];
        return rt->host;
    }
    if (device == MACC_DEVICE_HOST)
        return rt->host;
    if (device == MACC_DEVICE_NVIDIA) {
        if (rt->ngpus > 0)
            return rt->devices[0];
        if (rt->offload == MACCRT_OFFLOAD_MANDATORY)
            maccrt_fatal(loc, "MACC_TARGET_OFFLOAD=mandatory but no GPU is available");
        return rt->host;
    }
    if (device >= 0 && device < rt->ndevices)
        return rt->devices[device];
    if (device >= 0 && rt->offload != MACCRT_OFFLOAD_MANDATORY)
        return rt->host;
    if (device == MACC_DEVICE_INVALID)
        maccrt_fatal(loc, "device number is negative (omp_invalid_device?)");
    maccrt_fatal(loc, "device number %d does not exist (%d devices)", device, rt->ndevices);
}
