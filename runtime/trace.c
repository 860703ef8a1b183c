/* trace.c: MACC_TRACE=file.json, a Chrome/Perfetto timeline of the run.
 *
 * One process per device (pid = the OpenMP device number, named after the
 * device), one slice per task's version run ("cat": "task") and per copy
 * ("h2d", "d2h") and data directive ("data"); the slices of a task's way
 * (wait:ready, wait:queue, maps, task, unmap, finish) carry its number and
 * its chain's in their args ("task", "chain"). Slices are kept in memory and
 * written at exit; overlapping slices of one device are spread over lanes
 * (tid) so that the viewer draws them side by side. tools/trace2svg.py draws
 * the file as an SVG timeline. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct trace__ev {
    double t0, t1;
    int dev;
    int kind;
    const char *name; /* static storage (region names, map names) */
    size_t bytes;
    int thread; /* the recording thread, numbered in the order threads first record */
    unsigned long task, chain; /* a task's slice: its number and its rank (0: none) */
} trace__ev;

/* Events are kept per thread, in chunks that only their thread appends to
 * (no lock taken to record): one lock around every event, and a realloc of
 * the one array under it (3 MB copied at 64 thousand events), were taken
 * inside the directory's and the runtime's critical sections and stretched
 * the very waits for those locks that a trace is read for. A full chunk is
 * followed by a new one, pushed on a lock-free list. */
enum { TRACE__CHUNK = 4096 };
typedef struct trace__chunk {
    struct trace__chunk *next;
    int n; /* events written (its thread's; read at the end with acquire) */
    trace__ev ev[TRACE__CHUNK];
} trace__chunk;

static struct {
    pthread_mutex_t lock; /* maccrt_trace_write */
    char *path;
    trace__chunk *chunks; /* every thread's chunks (pushed atomically) */
    double origin;
    int on;
    int nthreads;
} trace__s = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *const trace__kinds[] = {"task", "h2d", "d2h", "data", "place:prefetch", "place:fault",
                                           "place:host", "evict", "p2p", "wait:ready", "wait:queue",
                                           "maps", "unmap", "finish", "alloc", "wait:data", "wait:lock", "hold:lock", "submit", "pin"};

void maccrt_trace_init(void)
{
    const char *p = getenv("MACC_TRACE");
    if (!p || !*p)
        return;
    char *old = trace__s.path; /* called again (a test starts a trace in a running runtime) */
    trace__s.path = strdup(p);
    free(old);
    trace__s.origin = maccrt_now();
    trace__s.on = trace__s.path != NULL;
}

int maccrt_trace_on(void)
{
    return __atomic_load_n(&trace__s.on, __ATOMIC_RELAXED);
}

static void trace__record(int kind, const maccrt_device *d, const char *name, double t0, double t1, size_t bytes,
                          unsigned long task, unsigned long chain)
{
    static __thread int thread; /* 0: not numbered yet */
    static __thread trace__chunk *chunk; /* this thread's current chunk */
    if (!maccrt_trace_on() || !d)
        return;
    if (!thread)
        thread = __atomic_add_fetch(&trace__s.nthreads, 1, __ATOMIC_RELAXED);
    if (!chunk || chunk->n == TRACE__CHUNK) {
        trace__chunk *c = malloc(sizeof *c);
        if (!c)
            return; /* a trace is never worth failing the program */
        c->n = 0;
        c->next = __atomic_load_n(&trace__s.chunks, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&trace__s.chunks, &c->next, c, 1, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED))
            ;
        chunk = c;
    }
    chunk->ev[chunk->n] = (trace__ev){t0, t1, d->num, kind, name ? name : "?", bytes, thread, task, chain};
    __atomic_store_n(&chunk->n, chunk->n + 1, __ATOMIC_RELEASE);
}

void maccrt_trace_event(int kind, const maccrt_device *d, const char *name, double t0, double t1, size_t bytes)
{
    trace__record(kind, d, name, t0, t1, bytes, 0, 0);
}

void maccrt_trace_task_event(int kind, const maccrt_device *d, const char *name, double t0, double t1,
                             unsigned long task, unsigned long chain)
{
    trace__record(kind, d, name, t0, t1, 0, task, chain);
}

static int trace__cmp(const void *a, const void *b)
{
    const trace__ev *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev - y->dev;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static void trace__string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Writes the trace once (at exit; later events are not recorded). */
void maccrt_trace_write(void)
{
    if (!maccrt_trace_on())
        return;
    maccrt_runtime *rt = &maccrt_rt;
    pthread_mutex_lock(&trace__s.lock);
    if (!maccrt_trace_on()) {
        pthread_mutex_unlock(&trace__s.lock);
        return;
    }
    __atomic_store_n(&trace__s.on, 0, __ATOMIC_RELAXED);
    /* every thread's events (after `on` is cleared a thread may still be
     * ending one: each chunk's count is read once) */
    size_t nchunks = 0, n = 0;
    trace__chunk *chunks = __atomic_load_n(&trace__s.chunks, __ATOMIC_ACQUIRE);
    for (trace__chunk *c = chunks; c; c = c->next)
        nchunks++;
    trace__ev *evs = malloc((nchunks ? nchunks : 1) * sizeof(trace__ev) * TRACE__CHUNK);
    FILE *f = evs ? fopen(trace__s.path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "macc: warning: MACC_TRACE: cannot write '%s'\n", trace__s.path);
        free(evs);
        pthread_mutex_unlock(&trace__s.lock);
        return;
    }
    for (trace__chunk *c = chunks; c; c = c->next) {
        int m = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
        memcpy(evs + n, c->ev, (size_t)m * sizeof *evs);
        n += (size_t)m;
    }
    qsort(evs, n, sizeof *evs, trace__cmp);
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", f);
    int first = 1;
    for (int i = 0; i < rt->ndevices; i++) {
        fprintf(f, "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": ",
                first ? "" : ",\n", rt->devices[i]->num);
        trace__string(f, rt->devices[i]->name);
        fputs("}}", f);
        first = 0;
    }
    /* lanes: the first lane of the device (per category: tasks, copies) free at t0 */
    enum { MAXLANES = 256 };
    double lane_end[3][MAXLANES];
    int cur = -1;
    for (size_t k = 0; k < n; k++) {
        trace__ev *e = &evs[k];
        if (e->dev != cur) {
            cur = e->dev;
            for (int c = 0; c < 3; c++)
                for (int l = 0; l < MAXLANES; l++)
                    lane_end[c][l] = -1.0;
        }
        int cat = e->kind == MACCRT_TRACE_TASK ? 0 : e->kind >= MACCRT_TRACE_WAIT_READY ? 2 : 1;
        int lane = 0;
        while (lane < MAXLANES - 1 && lane_end[cat][lane] > e->t0)
            lane++;
        lane_end[cat][lane] = e->t1;
        double ts = (e->t0 - trace__s.origin) * 1e6, dur = (e->t1 - e->t0) * 1e6;
        fprintf(f, ",\n{\"name\": ");
        trace__string(f, e->name);
        fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": %d",
                trace__kinds[e->kind], ts, dur < 0 ? 0.0 : dur, e->dev, cat * 100 + lane);
        fprintf(f, ", \"args\": {\"thread\": %d", e->thread);
        if (e->bytes)
            fprintf(f, ", \"bytes\": %zu", e->bytes);
        if (e->task)
            fprintf(f, ", \"task\": %lu, \"chain\": %lu", e->task, e->chain);
        fputc('}', f);
        fputc('}', f);
    }
    free(evs);
    fputs("\n]}\n", f);
    if (fclose(f) != 0)
        fprintf(stderr, "macc: warning: MACC_TRACE: cannot write '%s'\n", trace__s.path);
    pthread_mutex_unlock(&trace__s.lock);
}
