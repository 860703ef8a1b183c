/* init.c: one-time initialisation, environment, device table, shutdown.
 *
 * Every ABI and user-API entry calls maccrt_init(), which runs init__start
 * once (pthread_once); in programs linked with the CUDA plugin a constructor
 * (init__early, below) has already started it as the program loaded, unless
 * MACC_EARLY_START=0. Start-up reads the environment,
 * asks every plugin to discover its devices, numbers them the OpenMP way (GPUs
 * 0..k-1, then the host) and registers the exit handler.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The CUDA plugin lives in libmaccrt_cuda.a, which the driver links (whole
 * archive, with -lcudart) only into programs that have GPU kernels. Programs
 * without it resolve this weak reference to NULL and run host-only. */
extern const maccrt_plugin maccrt_cuda_plugin __attribute__((weak));

/* GPU kinds first, the host last: the order gives the device numbers. Filled
 * by init__plugins at start. */
const maccrt_plugin *maccrt_plugins[4];

static void init__plugins(void)
{
    int n = 0;
    if (&maccrt_cuda_plugin != NULL)
        maccrt_plugins[n++] = &maccrt_cuda_plugin;
    maccrt_plugins[n++] = &maccrt_host_plugin;
    maccrt_plugins[n] = NULL;
}

static pthread_once_t init__once = PTHREAD_ONCE_INIT;

/* ---- environment ------------------------------------------------------------ */

static int init__word_eq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

int maccrt_parse_devices(const char *s, maccrt_devsel *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = 0;
    const char *p = s ? s : "";
    while (isspace((unsigned char)*p))
        p++;
    if (!*p) {
        out->host = 1;
        out->nvidia_all = 1;
        return 0;
    }
    while (*p) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (!*p)
            break;
        const char *w = p;
        while (*p && *p != ',' && *p != ':' && !isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - w);
        while (isspace((unsigned char)*p))
            p++;
        if (init__word_eq(w, n, "host") || init__word_eq(w, n, "smp") ||
            init__word_eq(w, n, "cpu")) {
            out->host = 1;
        } else if (init__word_eq(w, n, "all") || init__word_eq(w, n, "any")) {
            out->host = 1;
            out->nvidia_all = 1;
        } else if (init__word_eq(w, n, "nvidia") || init__word_eq(w, n, "cuda") ||
                   init__word_eq(w, n, "gpu")) {
            if (*p != ':') {
                out->nvidia_all = 1;
                continue;
            }
            /* nvidia:I[-J][,I[-J]]... : indices up to the next non-number item. */
            p++;
            int any = 0;
            for (;;) {
                while (isspace((unsigned char)*p))
                    p++;
                if (!isdigit((unsigned char)*p))
                    break;
                char *e;
                long lo = strtol(p, &e, 10), hi = lo;
                p = e;
                if (*p == '-') {
                    p++;
                    if (!isdigit((unsigned char)*p)) {
                        snprintf(err, errlen, "MACC_DEVICES: bad GPU range in '%s'", s);
                        return -1;
                    }
                    hi = strtol(p, &e, 10);
                    p = e;
                }
                if (lo < 0 || hi < lo || hi >= MACCRT_MAX_DEVICES - 1) {
                    snprintf(err, errlen, "MACC_DEVICES: GPU index out of range in '%s'", s);
                    return -1;
                }
                for (long i = lo; i <= hi; i++)
                    out->nvidia |= MACCRT_BIT(i);
                any = 1;
                while (isspace((unsigned char)*p))
                    p++;
                if (*p == ',' && isdigit((unsigned char)p[1 + strspn(p + 1, " \t")])) {
                    p++;
                    continue;
                }
                break;
            }
            if (!any) {
                snprintf(err, errlen, "MACC_DEVICES: expected GPU numbers after 'nvidia:' in '%s'",
                         s);
                return -1;
            }
        } else {
            snprintf(err, errlen,
                     "MACC_DEVICES: unknown device '%.*s' in '%s' (expected host, nvidia, "
                     "nvidia:N[,N...] or all)",
                     (int)n, w, s);
            return -1;
        }
        if (*p && *p != ',') {
            snprintf(err, errlen, "MACC_DEVICES: unexpected '%c' in '%s'", *p, s);
            return -1;
        }
    }
    return 0;
}

int maccrt_parse_offload(const char *s)
{
    if (!s || !*s)
        return MACCRT_OFFLOAD_DEFAULT;
    if (!strcasecmp(s, "default"))
        return MACCRT_OFFLOAD_DEFAULT;
    if (!strcasecmp(s, "mandatory"))
        return MACCRT_OFFLOAD_MANDATORY;
    if (!strcasecmp(s, "disabled"))
        return MACCRT_OFFLOAD_DISABLED;
    return -1;
}


static int init__online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- start and shutdown ----------------------------------------------------- */

static void init__shutdown(void);

static maccrt_device *init__new_device(const maccrt_plugin *p, int index)
{
    maccrt_device *d = maccrt_xcalloc(1, sizeof *d);
    d->num = maccrt_rt.ndevices;
    d->kind = p->kind;
    d->index = index;
    d->plugin = p;
    if (p->kind == MACC_DEV_HOST)
        snprintf(d->name, sizeof d->name, "%s", p->name);
    else
        snprintf(d->name, sizeof d->name, "%s:%d", p->name, index);
    d->tokens_total = d->tokens_free = MACCRT_TOKENS;
    pthread_mutex_init(&d->dlock, NULL);
    pthread_mutex_init(&d->slock, NULL);
    atomic_init(&d->bytes_h2d, 0);
    atomic_init(&d->bytes_d2h, 0);
    atomic_init(&d->bytes_p2p, 0);
    return d;
}

/* MACC_TARGET_OFFLOAD, else OMP_TARGET_OFFLOAD (*name: the one read) */
static const char *init__offload_env(const char **name)
{
    const char *off = getenv("MACC_TARGET_OFFLOAD");
    *name = "MACC_TARGET_OFFLOAD";
    if (!off || !*off) {
        off = getenv("OMP_TARGET_OFFLOAD");
        *name = "OMP_TARGET_OFFLOAD";
    }
    return off;
}

static void init__start(void)
{
    maccrt_runtime *rt = &maccrt_rt;
    char err[256];

    const char *offname;
    const char *off = init__offload_env(&offname);
    rt->offload = maccrt_parse_offload(off);
    if (rt->offload < 0)
        maccrt_fatal(NULL, "%s: invalid value '%s' (expected mandatory, disabled or default)",
                     offname, off);

    maccrt_devsel sel;
    const char *devs = getenv("MACC_DEVICES");
    if (maccrt_parse_devices(devs, &sel, err, sizeof err) != 0)
        maccrt_fatal(NULL, "%s", err);

    const char *st = getenv("MACC_STATS");
    rt->stats = st && *st && strcmp(st, "0") != 0;
    maccrt_trace_init();
    const char *sc = getenv("MACC_SCHEDULER");
    if (!sc || !*sc || !strcmp(sc, "eft"))
        rt->policy = &maccrt_policy_eft;
    else if (!strcmp(sc, "greedy"))
        rt->policy = &maccrt_policy_greedy;
    else
        maccrt_fatal(NULL, "MACC_SCHEDULER: unknown policy '%s' (expected eft or greedy)", sc);

    /* Devices: GPU plugins first, in plugin order, then the host. GPUs not
     * named in MACC_DEVICES are left out altogether (renumbered like
     * CUDA_VISIBLE_DEVICES); the host always exists (it is the initial
     * device) but is selectable only when named. */
    init__plugins();
    int ngpu_helpers = 0;
    for (int pi = 0; maccrt_plugins[pi]; pi++) {
        const maccrt_plugin *p = maccrt_plugins[pi];
        if (p->kind == MACC_DEV_HOST)
            continue;
        if (rt->offload == MACCRT_OFFLOAD_DISABLED)
            continue;
        /* Not named at all (MACC_DEVICES=host): the driver is not even asked. */
        if (!sel.nvidia_all && !sel.nvidia)
            continue;
        int n = p->discover ? p->discover() : 0;
        if (n < 0)
            n = 0;
        if (!sel.nvidia_all && n < MACCRT_MAX_DEVICES - 1 && (sel.nvidia >> n) != 0)
            maccrt_warn(NULL, "MACC_DEVICES names %s GPU(s) that do not exist (%d found); "
                        "they are ignored", p->name, n);
        for (int i = 0; i < n && rt->ndevices < MACCRT_MAX_DEVICES - 1; i++) {
            if (!sel.nvidia_all && !(sel.nvidia & MACCRT_BIT(i)))
                continue;
            maccrt_device *d = init__new_device(p, i);
            if (p->init_device && p->init_device(d) != 0) {
                maccrt_warn(NULL, "device %s failed to start; not used", d->name);
                maccrt_data_device_fini(d);
                free(d);
                continue;
            }
            d->selectable = 1;
            rt->devices[rt->ndevices++] = d;
            ngpu_helpers++;
        }
        if (p->started)
            p->started();
    }
    rt->ngpus = rt->ndevices;

    /* Host threads: the CPUs left after one helper thread per GPU. */
    int cpus = init__online_cpus();
    rt->host_threads = cpus - ngpu_helpers > 1 ? cpus - ngpu_helpers : 1;
    const char *ht = getenv("MACC_HOST_THREADS");
    if (ht && *ht) {
        long v = maccrt_parse_positive(ht);
        if (v < 0)
            maccrt_fatal(NULL, "MACC_HOST_THREADS: invalid value '%s' (expected a positive integer)",
                         ht);
        rt->host_threads = v > 4096 ? 4096 : (int)v;
    }

    maccrt_device *h = init__new_device(&maccrt_host_plugin, 0);
    if (maccrt_host_plugin.init_device(h) != 0)
        maccrt_fatal(NULL, "the host device failed to start");
    /* The host is selectable when MACC_DEVICES names it, or when no GPU is
     * selectable (then it is the only place tasks can go). */
    h->selectable = sel.host || rt->ngpus == 0 || rt->offload == MACCRT_OFFLOAD_DISABLED;
    rt->devices[rt->ndevices++] = h;
    rt->host = h;

    for (int d = 0; d < rt->ndevices; d++) {
        rt->all |= MACCRT_BIT(d);
        if (rt->devices[d]->shares)
            rt->shares |= MACCRT_BIT(d);
        if (rt->devices[d]->selectable)
            rt->selectable |= MACCRT_BIT(d);
    }
    /* OpenMP's default device: OMP_DEFAULT_DEVICE=N (a device number;
     * "initial" is the host); anything else leaves it unset, as libgomp
     * (which reads it too) warns about it */
    int defdev = MACC_DEVICE_DEFAULT;
    const char *dd = getenv("OMP_DEFAULT_DEVICE");
    if (dd && !strcasecmp(dd, "initial")) {
        defdev = h->num;
    } else if (dd && *dd) {
        char *e;
        errno = 0;
        long v = strtol(dd, &e, 10);
        if (!errno && e != dd && !*e && v >= 0 && v < MACCRT_MAX_DEVICES)
            defdev = (int)v;
    }
    atomic_store(&rt->default_device, defdev);
    /* The throttle (task.c): 64 pending tasks per thread that runs them, as
     * libgomp bounds its queue (64 x the team's threads). */
    long runners = rt->host_threads;
    for (int d = 0; d < rt->ngpus; d++)
        runners += rt->devices[d]->concurrency > 0 ? rt->devices[d]->concurrency : 1;
    const char *pm = getenv("MACC_PENDING_MAX");
    long pmv = pm && *pm ? maccrt_parse_positive(pm) : 0;
    if (pm && *pm && pmv < 0)
        maccrt_fatal(NULL, "MACC_PENDING_MAX: invalid value '%s' (expected a positive integer)", pm);
    rt->pending_max = pmv > 0 ? pmv : 64 * runners;
    /* Time stamps per task only where something reads them: the scheduler's
     * estimates when there is a choice of devices (resources(auto) asks for
     * them per task), the statistics, the trace. */
    rt->timed = rt->ndevices > 1 || rt->stats || maccrt_trace_on();
    maccrt_declare_start(); /* declare target variables: their device copies */
    atexit(init__shutdown);
}

void maccrt_init(void)
{
    pthread_once(&init__once, init__start);
}

/* Programs with GPU code start the runtime as they load. The CUDA driver
 * starts before main (cuInit, about 100 ms), as Clang's and NVHPC's runtimes
 * start it; the rest (each GPU's context, about 100 ms more, its streams and
 * helpers) in a thread of its own, so that it overlaps what main does before
 * its first region (reading input, filling arrays) instead of adding to that
 * region. The first region, or any API call, waits for the start to end
 * (pthread_once). The environment is read then, as libgomp reads its variables
 * when it loads. MACC_EARLY_START: 1 (default) as said; async: the driver's
 * start in the thread too (a program with a long set-up before its first
 * region ends up to 100 ms sooner; one without, no later, but its first region
 * waits for all of it); 0: the runtime starts lazily, at the first region or
 * call, as without GPU code (for a program that forks before its first region
 * and uses the GPUs in the child: a CUDA context does not survive fork). No
 * driver is started before main when MACC_DEVICES or OMP_TARGET_OFFLOAD leave
 * the GPUs out. */
static pthread_t init__early_tid;
static int init__early_on;

static void *init__early_main(void *arg)
{
    (void)arg;
    maccrt_init();
    return NULL;
}

/* At exit, before the runtime's own handler (registered later, by the start,
 * so it runs first) or, if main ended while the runtime was still starting,
 * wait for the start: a process must not exit under a thread inside CUDA's
 * initialisation. */
static void init__early_join(void)
{
    if (init__early_on) {
        init__early_on = 0;
        pthread_join(init__early_tid, NULL);
    }
}

/* The calls up (internal.h), before anything starts: priority 101 runs
 * before init__early and before any constructor of the program. */
__attribute__((constructor(101))) static void init__upcalls(void)
{
    maccrt_up.execute = maccrt_task_execute;
    maccrt_up.ran = maccrt_task_ran;
    maccrt_up.thread_exit = maccrt_task_thread_exit;
    maccrt_up.idle = maccrt_task_idle;
    maccrt_up.ahead_pick = maccrt_task_ahead_pick;
    maccrt_up.ahead_execute = maccrt_task_execute_ahead;
}

__attribute__((constructor)) static void init__early(void)
{
    if (&maccrt_cuda_plugin == NULL || !maccrt_cuda_plugin.early)
        return;
    const char *e = getenv("MACC_EARLY_START");
    if (e && !strcmp(e, "0"))
        return;
    const char *offname;
    const char *off = init__offload_env(&offname);
    maccrt_devsel sel;
    char err[256];
    int gpus = maccrt_parse_offload(off) != MACCRT_OFFLOAD_DISABLED &&
               maccrt_parse_devices(getenv("MACC_DEVICES"), &sel, err, sizeof err) == 0 &&
               (sel.nvidia_all || sel.nvidia);
    if (gpus && !(e && !strcmp(e, "async")) && maccrt_cuda_plugin.prepare)
        maccrt_cuda_plugin.prepare();
    if (pthread_create(&init__early_tid, NULL, init__early_main, NULL) == 0) {
        init__early_on = 1;
        atexit(init__early_join);
    }
}

/* At exit: wait for the live tasks (the implicit barrier at the end of the
 * program), stop the helpers, print the statistics. Never waits when called
 * from a helper thread, from a running task or after a fatal error (exit(1)
 * from a worker). Tasks that make no progress for MACCRT_EXIT_STALL_S seconds
 * (e.g. a task whose OpenMP team lost the thread that called exit) are
 * abandoned with a warning rather than hang the exit. */
#define MACCRT_EXIT_STALL_S 30.0

static void init__shutdown(void)
{
    maccrt_runtime *rt = &maccrt_rt;
    maccrt_thread *self = maccrt_thread_self();
    int fatal = atomic_load(&rt->fatal);
    if (!fatal && !self->is_worker && !self->current) {
        long left = maccrt_task_drain(MACCRT_EXIT_STALL_S);
        if (left > 0) {
            maccrt_warn(NULL, "%ld task(s) still running at exit after %.0f s without progress; "
                        "not waiting for them", left, MACCRT_EXIT_STALL_S);
        } else {
            maccrt_placement_fini(); /* (the migration measurement's thread) */
            maccrt_cache_flush(NULL); /* dirty data home, device copies freed */
            pthread_mutex_lock(&rt->lock);
            __atomic_store_n(&rt->stopped, 1, __ATOMIC_RELAXED); /* (read atomically by task.c's completion thread) */
            pthread_mutex_unlock(&rt->lock);
            for (int d = 0; d < rt->ndevices; d++) {
                maccrt_device *dev = rt->devices[d];
                if (dev->plugin->fini_device)
                    dev->plugin->fini_device(dev);
            }
        }
    }
    if (rt->stats)
        maccrt_stats_print(stderr);
    maccrt_trace_write();
}

/* ---- the statistics table (MACC_STATS, macc_print_stats) ------------------------------- */

void maccrt_stats_print(FILE *f)
{
    maccrt_runtime *rt = &maccrt_rt;
    /* After a fatal error another thread may hold the lock forever: read
     * without it then (the numbers are only a report). */
    maccrt_task_flush_counts();
    int locked = !atomic_load(&rt->fatal);
    if (locked)
        pthread_mutex_lock(&rt->lock);
    double now = maccrt_now();
    fprintf(f, "macc: statistics (host threads: %d, policy: %s)\n", rt->host_threads,
            rt->policy ? rt->policy->name : "none");
    fprintf(f, "macc: %-12s %10s %10s %10s %7s %5s %14s %14s\n", "device", "tasks", "busy(s)",
            "task(s)", "tokens", "peak", "bytes h2d", "bytes d2h");
    for (int i = 0; i < rt->ndevices; i++) {
        maccrt_device *d = rt->devices[i];
        double busy = d->busy_s + (d->running ? now - d->busy_since : 0);
        fprintf(f, "macc: %-12s %10ld %10.3f %10.3f %7d %5d %14llu %14llu\n", d->name,
                d->tasks_run + atomic_load(&d->tasks_direct), busy, d->task_s, d->tokens_total, d->tokens_peak_used,
                (unsigned long long)atomic_load(&d->bytes_h2d),
                (unsigned long long)atomic_load(&d->bytes_d2h));
    }
    for (int i = 0; i < rt->ndevices; i++) {
        maccrt_device *d = rt->devices[i];
        unsigned long long p2p = atomic_load(&d->bytes_p2p);
        if (p2p) /* device-to-device copies into d (cache.c), GB/s measured */
            fprintf(f, "macc: %-12s %14llu bytes from other devices (%.1f GB/s); host links %.1f / %.1f GB/s\n",
                    d->name, p2p, atomic_load(&d->bw_p2p) / 1e9, atomic_load(&d->bw_h2d) / 1e9,
                    atomic_load(&d->bw_d2h) / 1e9);
    }
    long ahead = maccrt_task_ahead_count(), preds, kind, maps, place;
    maccrt_task_ahead_refused(&preds, &kind, &maps, &place);
    if (ahead || preds || kind || maps || place) /* (task.c's launch-ahead) */
        fprintf(f,
                "macc: %ld GPU tasks launched ahead, behind their predecessors on the same stream; picks that "
                "found none: %ld a successor waiting for another stream's task, %ld not of a kind to go ahead, "
                "%ld its data not valid on the GPU, %ld not placed\n",
                ahead, preds, kind, maps, place);
    maccrt_placement_print(f);
    if (locked)
        pthread_mutex_unlock(&rt->lock);
    fflush(f);
}

/* ---- user API ---------------------------------------------------------------- */

int macc_num_devices(void)
{
    maccrt_init();
    return maccrt_rt.ndevices;
}

int macc_device_kind(int d)
{
    maccrt_init();
    if (d < 0 || d >= maccrt_rt.ndevices)
        return -1;
    return maccrt_rt.devices[d]->kind;
}

const char *macc_device_name(int d)
{
    maccrt_init();
    if (d < 0 || d >= maccrt_rt.ndevices)
        return NULL;
    return maccrt_rt.devices[d]->name;
}

long macc_device_tasks(int d)
{
    maccrt_init();
    if (d < 0 || d >= maccrt_rt.ndevices)
        return 0;
    maccrt_task_flush_counts();
    pthread_mutex_lock(&maccrt_rt.lock);
    long n = maccrt_rt.devices[d]->tasks_run + atomic_load(&maccrt_rt.devices[d]->tasks_direct);
    pthread_mutex_unlock(&maccrt_rt.lock);
    return n;
}

void macc_print_stats(void)
{
    maccrt_init();
    maccrt_stats_print(stderr);
}
