/* api.c: the ABI's entry points (include/macc_rt.h) that the translator's
 * code calls, on top of the layers: each starts the runtime (maccrt_init)
 * and hands the call down to tasks (task.c), data (data.c, cache.c) or the
 * managed allocator (managed.c). OpenMP's and OpenACC's routines are in
 * omp.c and acc.c, the macc_* queries in init.c (docs/RUNTIME.md, "Layers").
 */
#include "internal.h"

/* ---- regions and tasks ----------------------------------------------------------------------- */

void MACC_target(const MACC_Region *r, const void *args, size_t args_size, int nmaps,
                 const MACC_Map *maps, int ndeps, const MACC_Dep *deps, int flags, int device,
                 int ifcond)
{
    maccrt_init();
    maccrt_task_create(r, args, args_size, nmaps, maps, ndeps, deps, flags, device, ifcond);
}

void MACC_taskwait(const MACC_SrcLoc *loc)
{
    maccrt_init();
    maccrt_task_wait_children(loc);
    maccrt_sched_log_flush();
}

/* ---- data directives ------------------------------------------------------------------------------------ */

static void api__check(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int ndeps,
                        const MACC_Dep *deps)
{
    if (nmaps < 0 || ndeps < 0 || (nmaps && !maps) || (ndeps && !deps))
        maccrt_fatal(loc, "bad arguments for a data directive");
}

void MACC_data_begin(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device)
{
    maccrt_init();
    api__check(loc, nmaps, maps, 0, NULL);
    maccrt_cache_flush(NULL);
    maccrt_device *d = maccrt_data_device(device, loc);
    for (int i = 0; i < nmaps; i++)
        maccrt_map_acquire(d, &maps[i], MACCRT_REF_STRUCTURED, loc);
}

void MACC_data_end(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device)
{
    maccrt_init();
    api__check(loc, nmaps, maps, 0, NULL);
    maccrt_cache_flush(NULL);
    maccrt_device *d = maccrt_data_device(device, loc);
    for (int i = nmaps - 1; i >= 0; i--)
        maccrt_map_release(d, &maps[i], MACCRT_REF_STRUCTURED, 0, loc);
}

static void api__op(const MACC_SrcLoc *loc, int op, int nmaps, const MACC_Map *maps, int device,
                     int ndeps, const MACC_Dep *deps, int flags)
{
    maccrt_init();
    api__check(loc, nmaps, maps, ndeps, deps);
    maccrt_device *d = maccrt_data_device(device, loc);
    if (ndeps > 0 || (flags & MACC_NOWAIT))
        maccrt_task_data_op(d, op, nmaps, maps, ndeps, deps, flags, loc);
    else
        maccrt_data_op(d, op, nmaps, maps, loc);
}

void MACC_data_enter(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                     int ndeps, const MACC_Dep *deps, int flags)
{
    api__op(loc, MACCRT_OP_ENTER, nmaps, maps, device, ndeps, deps, flags);
}

void MACC_data_exit(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                    int ndeps, const MACC_Dep *deps, int flags)
{
    api__op(loc, MACCRT_OP_EXIT, nmaps, maps, device, ndeps, deps, flags);
}

void MACC_data_update(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                      int ndeps, const MACC_Dep *deps, int flags)
{
    api__op(loc, MACCRT_OP_UPDATE, nmaps, maps, device, ndeps, deps, flags);
}

int MACC_is_present(const void *p, size_t bytes, int device)
{
    maccrt_init();
    maccrt_runtime *rt = &maccrt_rt;
    if (device >= rt->ndevices)
        return 0;
    if (device < 0 && device != MACC_DEVICE_DEFAULT && device != MACC_DEVICE_ANY &&
        device != MACC_DEVICE_HOST && device != MACC_DEVICE_NVIDIA)
        return 0;
    if (device == MACC_DEVICE_NVIDIA && rt->ngpus == 0)
        return 0;
    return maccrt_map_is_present(maccrt_data_device(device, NULL), p, bytes);
}

void *MACC_device_addr(const void *p, int device)
{
    maccrt_init();
    if (!p)
        return NULL;
    maccrt_device *d = maccrt_data_device(device, NULL);
    if (d->plugin->caps & MACCRT_CAP_SHARED_MEM)
        return (void *)p;
    void *r = maccrt_map_device_ptr(d, p);
    return r ? r : (void *)p;
}

/* ---- managed memory (macc --managed) ---------------------------------------------------------- */

void *MACC_malloc(size_t n)
{
    maccrt_init();
    return maccrt_managed_malloc(n);
}

void *MACC_calloc(size_t n, size_t m)
{
    maccrt_init();
    return maccrt_managed_calloc(n, m);
}

void MACC_free(void *p)
{
    if (!p)
        return;
    maccrt_init();
    maccrt_managed_free(p);
}

void *MACC_realloc(void *p, size_t n)
{
    maccrt_init();
    return maccrt_managed_realloc(p, n);
}

void *MACC_aligned_alloc(size_t align, size_t n)
{
    maccrt_init();
    return maccrt_managed_aligned_alloc(align, n);
}

int MACC_posix_memalign(void **out, size_t align, size_t n)
{
    maccrt_init();
    return maccrt_managed_posix_memalign(out, align, n);
}
