/* macc_rt.h: the runtime interface of macc.
 *
 * Two parts:
 *  - the user API (macc_*), callable from any program linked with libmaccrt;
 *  - the ABI that generated code calls (MACC_*). Every ABI entry takes a static
 *    source location so that errors name the user's file and line.
 *
 * This header is included by generated C files and by generated CUDA (C++) files.
 */
#ifndef MACC_RT_H
#define MACC_RT_H

/* No system header: generated host files include this header ahead of the
 * user's preprocessed text, which already holds its headers' contents (a
 * second copy of <stddef.h> would define its types twice). */
#define MACC_SIZE_T __SIZE_TYPE__

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(MACC_BUILDING_RUNTIME)
#define MACC_API __attribute__((visibility("default")))
#else
#define MACC_API
#endif

/* ---- user API --------------------------------------------------------- */

/* Device kinds. */
enum {
    MACC_DEV_HOST = 0,
    MACC_DEV_NVIDIA = 1,
    MACC_DEV_NKINDS = 2
};

/* Number of devices the runtime uses (host included). Starts the runtime. */
MACC_API int macc_num_devices(void);
/* Kind of device number d (0 <= d < macc_num_devices()); -1 if out of range. */
MACC_API int macc_device_kind(int d);
/* Tasks device d has run so far. */
MACC_API long macc_device_tasks(int d);
/* Name of device d, e.g. "host" or "nvidia:0". Static storage. */
MACC_API const char *macc_device_name(int d);
/* Prints the per-device statistics to stderr (what MACC_STATS=1 prints at exit). */
MACC_API void macc_print_stats(void);

/* ---- ABI used by generated code ---------------------------------------- */

/* A source location; generated code passes pointers to static instances. */
typedef struct MACC_SrcLoc {
    const char *file;
    int line;
    int col;
    const char *func;
} MACC_SrcLoc;

/* Map kinds (low bits) and modifiers. */
enum {
    MACC_MAP_ALLOC = 0,
    MACC_MAP_TO = 1,
    MACC_MAP_FROM = 2,
    MACC_MAP_TOFROM = 3,
    MACC_MAP_DIR_MASK = 3,
    MACC_MAP_ALWAYS = 1 << 2,   /* copy even when already present */
    MACC_MAP_PRESENT = 1 << 3,  /* must already be present (acc present) */
    MACC_MAP_DELETE = 1 << 4,   /* exit data: the dynamic reference count to zero (acc finalize) */
    MACC_MAP_ATTACH = 1 << 5,   /* zero-length: translate the pointer if present, else pass it as is */
    MACC_MAP_NOCREATE = 1 << 6, /* acc no_create: use if present, else pass host pointer */
    MACC_MAP_DEVICEPTR = 1 << 7, /* acc deviceptr: already a device address */
    /* with DELETE: OpenMP's map(delete:), which sets the item's one reference
     * count to zero, a data region's reference included (the entry leaves
     * the device now); DELETE alone is OpenACC's finalize, which zeroes the
     * dynamic count and leaves a data construct's reference */
    MACC_MAP_DELETE_ALL = 1 << 8,
    /* with ATTACH, in a unit that says `requires unified_shared_memory`: a
     * pointer no map covers must be one the GPU can read (heap data is
     * managed memory there; stack and static data need HMM/ATS): an error
     * naming the region where it cannot, instead of an illegal access */
    MACC_MAP_USM = 1 << 9
};

/* One mapped section. The section is [start, start + bytes). `base` is the
 * value of the variable the section belongs to (the pointer, or the array's
 * first element); the task receives, for each map, that variable translated to
 * the device's address space, so that the user's indices stay valid. */
typedef struct MACC_Map {
    const char *name; /* the variable, for diagnostics and statistics */
    void *base;
    void *start;
    MACC_SIZE_T bytes;
    int kind;
} MACC_Map;

/* Dependence types. */
enum { MACC_DEP_IN = 1, MACC_DEP_OUT = 2, MACC_DEP_INOUT = 3 };

typedef struct MACC_Dep {
    const void *addr;
    MACC_SIZE_T bytes;
    int kind;
} MACC_Dep;

/* What a running version of a region receives besides its argument block. */
typedef struct MACC_TaskEnv {
    int device_kind;  /* MACC_DEV_* */
    int device_index; /* index among devices of that kind */
    int nthreads;     /* host: threads this task may use */
    void *stream;     /* nvidia: the cudaStream_t to launch on */
    void **ptrs;      /* per map of the task: the variable's address on this device */
    const MACC_SrcLoc *loc;
    long long threads; /* nvidia: the threads (grid x block) its kernel was launched with; set by
                        * the version (0: not told) */
} MACC_TaskEnv;

/* A version of a region. Returns 0 on success, else an error code of the
 * device (a cudaError_t for nvidia). */
typedef int (*MACC_VersionFn)(void *args, MACC_TaskEnv *env);

/* Version flags. */
enum {
    MACC_VERSION_FALLBACK = 1 /* host version used only when no named device can run the region */
};

/* resources values with special meaning. */
enum { MACC_RES_DEFAULT = -1, MACC_RES_AUTO = -2 };

typedef struct MACC_Version {
    int kind;      /* MACC_DEV_* */
    int min_cc;    /* nvidia: minimum compute capability * 10 (e.g. 35, 90); 0: any */
    int resources; /* tokens out of 100, MACC_RES_DEFAULT or MACC_RES_AUTO */
    int flags;     /* MACC_VERSION_* */
    MACC_VersionFn fn;
} MACC_Version;

/* Compile-time access facts of an object (a mapped pointer or array) of a
 * region, for the placement of managed data (OTM; runtime/placement.c). */
typedef struct MACC_Access {
    const char *name; /* the variable */
    int map;          /* index of its map in the region's maps */
    int elem_size;    /* bytes per element; 0: unknown */
    double per_iter;  /* estimated accesses per outer-loop iteration; < 0: unknown */
    int reuse_rank;   /* rank by estimated accesses over the file's regions (1: most) */
} MACC_Access;

typedef struct MACC_Region {
    MACC_SrcLoc loc;
    const char *name; /* macc_k_<func>_L<line> */
    int nversions;
    const MACC_Version *versions;
    /* Added for placement; generated code written before them leaves them 0. */
    int naccess;                /* macc --managed: one per mapped pointer or array */
    const MACC_Access *access;
} MACC_Region;

/* Device selectors for MACC_target and the data calls. Non-negative values are
 * device numbers as in OpenMP's device(N): 0 .. omp-visible GPUs, then host. */
enum {
    MACC_DEVICE_DEFAULT = -1, /* no device clause: omp_get_default_device(), else the first GPU, else the host */
    MACC_DEVICE_ANY = -2,     /* device(any): wherever the scheduler decides */
    MACC_DEVICE_HOST = -3,    /* device(host) */
    MACC_DEVICE_NVIDIA = -4,  /* device(nvidia): any GPU */
    MACC_DEVICE_INVALID = -5  /* device(N) with N negative and not omp_initial_device: an error */
};

/* device(expr) with an expression: an OpenMP device number as a selector.
 * -1 is OpenMP 5.2's omp_initial_device (the host); other negative numbers
 * (omp_invalid_device) name no device. */
static inline int MACC_device_num(int n)
{
    return n >= 0 ? n : n == -1 ? MACC_DEVICE_HOST : MACC_DEVICE_INVALID;
}

/* MACC_target flags. */
enum { MACC_NOWAIT = 1 };

/* Creates a task instance of region r. The argument block (args_size bytes),
 * the maps and the dependences are copied; the call returns at once with
 * MACC_NOWAIT, else when the task has finished. `ifcond` false runs the region
 * on the host. */
MACC_API void MACC_target(const MACC_Region *r, const void *args, MACC_SIZE_T args_size, int nmaps,
                          const MACC_Map *maps, int ndeps, const MACC_Dep *deps, int flags,
                          int device, int ifcond);

/* The trip count of the outer loop of the next region the calling thread
 * launches (macc --managed emits it before MACC_target when the call site can
 * evaluate it): the runtime's access densities use it. */
MACC_API void MACC_push_tripcount(long long n);

/* Waits for every deferred task created by the calling thread. */
MACC_API void MACC_taskwait(const MACC_SrcLoc *loc);
/* #pragma omp allocate of a local variable: its storage (`allocator` is an
 * omp_allocator_handle_t's value, 0 for the default; align 0 for the
 * allocator's own), and the cleanup that frees it (pp points at the pointer) */
MACC_API void *MACC_omp_allocate(MACC_SIZE_T bytes, MACC_SIZE_T align, unsigned long long allocator,
                                 const MACC_SrcLoc *loc);
MACC_API void MACC_omp_allocate_free(void *pp);

/* Data directives. `device` as for MACC_target. */
/* Structured data region (target data, acc data): begin and end. */
MACC_API void MACC_data_begin(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device);
MACC_API void MACC_data_end(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device);
/* Unstructured: enter data / exit data (dynamic reference counts). */
MACC_API void MACC_data_enter(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                              int ndeps, const MACC_Dep *deps, int flags);
MACC_API void MACC_data_exit(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                             int ndeps, const MACC_Dep *deps, int flags);
/* update: maps with MACC_MAP_TO update the devices from the host, MACC_MAP_FROM
 * the host from the device that holds the current copy. */
MACC_API void MACC_data_update(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device,
                               int ndeps, const MACC_Dep *deps, int flags);

/* Declare target variables (`#pragma omp declare target`): a global's device
 * copy on every GPU for the whole run, the device file's __device__ variable.
 * The host file registers its variables from a constructor (before main);
 * when the GPUs start, each gets a present-table entry for the variable's
 * host range that names the device copy, so that maps and updates of the
 * variable reach it. */
enum {
    MACC_DT_LINK = 1, /* link(list): present only while mapped (reference counts as usual) */
    MACC_DT_INIT = 2  /* the device copy starts as the host's bytes (the device file has no initialiser) */
};
typedef struct MACC_DeclareTarget {
    const char *name; /* the variable */
    void *host;       /* its host address */
    MACC_SIZE_T bytes;
    int flags;        /* MACC_DT_* */
} MACC_DeclareTarget;
/* Registers n variables; symbols[i] is vars[i]'s device variable as CUDA's
 * cudaGetSymbolAddress takes it (the address of the __device__ variable in the
 * device file's host code). */
MACC_API void MACC_declare_target(const MACC_SrcLoc *loc, int n, const MACC_DeclareTarget *vars,
                                  const void *const *symbols);

/* Is [p, p+bytes) present on `device`? (omp_target_is_present / acc_is_present) */
MACC_API int MACC_is_present(const void *p, MACC_SIZE_T bytes, int device);

/* use_device_ptr / use_device_addr of a data construct on `device`: the
 * device address of host address p when the device's table holds it (the
 * data construct mapped it), else p itself (also on the host and for
 * managed memory). */
MACC_API void *MACC_device_addr(const void *p, int device);

/* The allocator `macc --managed` puts in place of malloc & co. in translated
 * files: CUDA managed memory from a pool when a GPU is there, host memory
 * otherwise; MACC_free also frees what the C library allocated. Settings:
 * MACC_POOL, MACC_POOL_CHUNK, MACC_POOL_MIN, MACC_POOL_MAX,
 * MACC_MANAGED_CAP, MACC_MANAGED_MARGIN, MACC_MANAGED_FALLBACK (docs/RUNTIME.md). */
MACC_API void *MACC_malloc(MACC_SIZE_T n);
MACC_API void *MACC_calloc(MACC_SIZE_T n, MACC_SIZE_T m);
MACC_API void *MACC_realloc(void *p, MACC_SIZE_T n);
MACC_API void MACC_free(void *p);
MACC_API void *MACC_aligned_alloc(MACC_SIZE_T align, MACC_SIZE_T n);
MACC_API int MACC_posix_memalign(void **out, MACC_SIZE_T align, MACC_SIZE_T n);

/* OpenACC queues (runtime/acc.c): the token of queue q, an address that
 * work on q depends on (inout; acc_async_noval, -1: the default queue), and
 * one that is returned after waiting for every queue (a bare wait clause). */
#define MACC_ACC_ASYNC_NOVAL (-1)
MACC_API void *MACC_acc_queue(int q);
MACC_API void *MACC_acc_wait_all_token(void);
/* acc declare in a function: MACC_data_begin now, MACC_data_end (after the
 * deferred tasks) when the block is left (a cleanup variable holds the handle) */
MACC_API void *MACC_acc_declare_begin(const MACC_SrcLoc *loc, int nmaps, const MACC_Map *maps, int device);
MACC_API void MACC_acc_declare_end(void **handle);
/* acc data / enter data / exit data / update of a pointer-to-pointer section
 * ptrs[lo:len][rlo:rlen] (elements of elem bytes): op 1 after MACC_data_begin,
 * 2 after MACC_data_enter, 5 after MACC_data_update: each row mapped (or
 * updated) with `kind` and the device copy of ptrs[i] made to point at it
 * (attach); op 0 before MACC_data_end, 3 before MACC_data_exit: released, and
 * detached once a row has left the device; op 4 before MACC_data_update: detached. */
/* copyout(zero: ...) / create(zero: ...): a section not present yet is
 * entered and its device copy zeroed before the construct's maps (a handle
 * holds the reference), MACC_acc_zero_end drops it with `kind` after them. */
MACC_API void *MACC_acc_zero_begin(const MACC_SrcLoc *loc, const char *name, void *start, MACC_SIZE_T bytes,
                                   int device);
MACC_API void MACC_acc_zero_end(const MACC_SrcLoc *loc, void *handle, int kind);
MACC_API void MACC_acc_rows(const MACC_SrcLoc *loc, const char *name, void **ptrs, long long lo, long long len,
                            MACC_SIZE_T elem, long long rlo, long long rlen, int kind, int device, int op);

/* OpenMP 5.1 device memory routines that libmaccrt defines (with the rest of
 * OpenMP's device API: omp_target_alloc, omp_target_memcpy, ...; see
 * docs/RUNTIME.md) and that older <omp.h> files (GCC 12) do not declare. */
#ifndef __cplusplus
MACC_API void *omp_get_mapped_ptr(const void *ptr, int device_num);
MACC_API int omp_target_is_accessible(const void *ptr, __SIZE_TYPE__ size, int device_num);
#endif

#ifdef __cplusplus
}
#endif
#endif
