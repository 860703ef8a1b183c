/* placement.c: where managed data lives, decided at each region launch (OTM, seed 004).
 *
 * The translator gives every region of a --managed file its objects' access
 * facts (MACC_Region.access: accesses per outer-loop iteration, element size,
 * reuse rank) and the outer loop's trip count (MACC_push_tripcount). At a
 * launch on a GPU, for each managed object a map names (the allocation that
 * holds it: size from the allocator):
 *
 *     density = min(accesses per iteration x trip / elements, 1)
 *
 * (1 when a fact is unknown), OTM's, and from it the fraction of the object's
 * pages the accesses touch, which is what page faults move (a fault migrates
 * a whole page, 4 KiB at least): the accesses taken as spread evenly over the
 * mapped section (s elements of the object's E, each touched with
 * probability ds = min(accesses / s, 1)), a 4 KiB page of k elements is
 * touched with probability 1 - (1 - ds)^k, so
 *
 *     pages = s / E x (1 - (1 - ds)^k)
 *
 * A quarter of the elements of an int array, scattered (BFS's edges), touch
 * every page: faults move all of it; a section of an eighth of the object,
 * all accessed, moves an eighth. An object is dense when pages >= the
 * threshold. The policies (MACC_PLACEMENT):
 *  - otm (default): walk the dense objects (pages >= the threshold), then
 *    the sparse ones, each by reuse rank (then pages, more first; then
 *    size, smaller first; see pl__cmp); an object that fits in what is left of
 *    the GPU budget goes to the GPU, prefetched when it is dense,
 *    left to page faults otherwise; one that
 *    does not fit is kept in host memory (preferred location host, accessed by
 *    the GPU: read over the link instead of evicting hotter data). Dense
 *    before sparse departs from OTM's walk by rank alone: a sparse object
 *    read over the link moves about the bytes it would fault in, a dense one
 *    all of itself at every launch;
 *  - prefetch: every object to the GPU, prefetched once per trip (what
 *    --managed did before);
 *  - demand: every object to the GPU by page faults;
 *  - off: none of this (the task maps' prefetches of managed.c).
 *
 * The budget: MACC_DEVICE_MEMORY, or the managed cap (the GPU's free memory at
 * the first allocation minus the margin). Every policy respects it: an object
 * bound for the GPU is charged its size; when it does not fit, the least
 * recently used objects of other launches are moved back to the host first
 * (a prefetch to the host). If it still does not fit, it is not prefetched;
 * its pages come by faults while the kernel runs, and after the kernel the
 * launch's objects are charged and the least recently used are evicted until
 * the charge is within the budget again: prefetch and demand thrash as
 * unified memory would on a GPU of that size; otm's pinning avoids it.
 *
 * The density threshold is the break-even point of the two ways to move an
 * object: faulting in the fraction `pages` of its bytes costs
 * pages x size / (fault-driven migration's bandwidth), prefetching all of it
 * size / (prefetch bandwidth); they are equal at
 *
 *     threshold = fault bandwidth / prefetch bandwidth
 *
 * measured once per GPU, at its first otm decision (the plugin's
 * calibrate_migration: a kernel faulting in every page, in a scattered order,
 * of a managed buffer resident on the host, against a prefetch of the same
 * size; min(64 MiB, cap / 4), never more than half the GPU's free memory
 * beyond the margin). MACC_OTM_DENSITY sets it instead; where it cannot be
 * measured (no calibration in the plugin, too little memory, an error) it is
 * OTM's 0.6, a figure from a P100 over NVLink (docs/RUNTIME.md).
 *
 * Counters per GPU (MACC_STATS, docs/RUNTIME.md): bytes prefetched to the GPU
 * (the sizes of the prefetch calls), bytes faulted (an estimate: pages x
 * size per object left to faults, up to its size until it is evicted), bytes
 * evicted (the sizes of the prefetches back to the host), bytes pinned (the
 * sizes of the objects advised to stay on the host); resident and peak: the
 * bytes charged to the GPU. With MACC_TRACE every decision is a slice.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Thread_local long long pl_trip = -1;

void MACC_push_tripcount(long long n)
{
    pl_trip = n;
}

long long maccrt_placement_take_trip(void)
{
    long long t = pl_trip;
    pl_trip = -1;
    return t;
}

typedef struct pl_obj {
    uintptr_t a, b;         /* the allocation (with several GPUs: the section, in pages) */
    int where;              /* MACCRT_PL_* of its last launch */
    int charged;            /* counts against the budget */
    int prefetched;         /* prefetched to the GPU since it was last evicted */
    size_t faulted;         /* estimated bytes faulted in since then */
    unsigned long used;     /* launch clock of its last use */
    unsigned long launch;   /* the launch that placed it last */
    const char *name;       /* a map's name, for the trace */
} pl_obj;

typedef struct pl_gpu {
    pl_obj *objs;
    int n, cap;
    size_t resident, peak;
    unsigned long clock;
    unsigned long long prefetched, faulted, evicted, pinned;
    long launches, n_prefetch, n_fault, n_host, n_evict, over_budget;
    /* the GPU's own budget (pl__budget; 0: not yet known) */
    size_t budget;
    /* the density threshold (pl__threshold) */
    int thr_done, thr_from;
    double thr, fault_bw, prefetch_bw;
    size_t calib_bytes;
} pl_gpu;

#define PL_PAGE ((uintptr_t)4096)          /* sections are placed in whole pages */
#define PL_FALLBACK_THRESHOLD 0.6          /* OTM's, when it cannot be measured */
#define PL_CALIB_MAX ((size_t)64 << 20)    /* the calibration's size: at most */
#define PL_CALIB_MIN ((size_t)8 << 20)     /* and at least (else not measured) */

static struct {
    pthread_once_t once;
    pthread_mutex_t lock, calib_lock;
    int policy;
    double threshold; /* MACC_OTM_DENSITY, or -1 */
    size_t budget, cap;
    pl_gpu gpu[MACCRT_MAX_DEVICES];
} pl = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER, .calib_lock = PTHREAD_MUTEX_INITIALIZER};

static void pl__init(void)
{
    const char *p = getenv("MACC_PLACEMENT");
    pl.policy = MACCRT_PL_OTM;
    if (p && *p) {
        if (!strcasecmp(p, "otm"))
            pl.policy = MACCRT_PL_OTM;
        else if (!strcasecmp(p, "prefetch"))
            pl.policy = MACCRT_PL_PREFETCH;
        else if (!strcasecmp(p, "demand"))
            pl.policy = MACCRT_PL_DEMAND;
        else if (!strcasecmp(p, "off") || !strcmp(p, "0"))
            pl.policy = MACCRT_PL_OFF;
        else
            maccrt_fatal(NULL, "invalid MACC_PLACEMENT '%s' (expected otm, prefetch, demand or off)", p);
    }
    pl.threshold = -1.0;
    const char *t = getenv("MACC_OTM_DENSITY");
    if (t && *t) {
        char *end;
        double v = strtod(t, &end);
        if (*end || end == t || !(v >= 0.0 && v <= 1.0))
            maccrt_fatal(NULL, "invalid MACC_OTM_DENSITY '%s' (expected a number from 0 to 1)", t);
        pl.threshold = v;
    }
    maccrt_managed_info mi;
    maccrt_managed_stats(&mi); /* starts the allocator: the cap */
    pl.budget = mi.cap;
    pl.cap = mi.cap;
    const char *m = getenv("MACC_DEVICE_MEMORY");
    if (m && *m) {
        size_t v = maccrt_managed_size_setting(m, pl.budget);
        if (v < pl.budget)
            pl.budget = v; /* never more than the cap */
    }
}

static void pl__ensure(void)
{
    pthread_once(&pl.once, pl__init);
}

int maccrt_placement_active(const maccrt_device *d)
{
    if (!d || !d->plugin->advise_place || !d->plugin->prefetch || !maccrt_managed_hints())
        return 0;
    pl__ensure();
    return pl.policy != MACCRT_PL_OFF;
}

/* The density threshold of d (see the top): MACC_OTM_DENSITY, else measured
 * at the first call for d under otm, else the fallback. */
static double pl__threshold(maccrt_device *d)
{
    if (pl.threshold >= 0.0)
        return pl.threshold;
    pl_gpu *g = &pl.gpu[d->num];
    pthread_mutex_lock(&pl.calib_lock);
    if (!g->thr_done) {
        g->thr_done = 1;
        g->thr = PL_FALLBACK_THRESHOLD;
        g->thr_from = MACCRT_PL_THR_DEFAULT;
        size_t bytes = pl.cap / 4;
        if (bytes > PL_CALIB_MAX)
            bytes = PL_CALIB_MAX;
        bytes &= ~(((size_t)2 << 20) - 1);
        double tf = 0.0, tp = 0.0;
        if (pl.policy == MACCRT_PL_OTM && d->plugin->calibrate_migration && bytes >= PL_CALIB_MIN &&
            d->plugin->calibrate_migration(d, bytes, &tf, &tp) == 0 && tf > 0.0 && tp > 0.0) {
            double r = tp / tf; /* = fault bandwidth / prefetch bandwidth */
            g->thr = r < 0.01 ? 0.01 : r > 1.0 ? 1.0 : r;
            g->thr_from = MACCRT_PL_THR_MEASURED;
            g->fault_bw = (double)bytes / tf;
            g->prefetch_bw = (double)bytes / tp;
            g->calib_bytes = bytes;
        }
        if (maccrt_rt.stats) {
            if (g->thr_from == MACCRT_PL_THR_MEASURED)
                fprintf(stderr,
                        "macc: %s: migration of %zu MiB: page faults %.2f GB/s, prefetch %.2f GB/s: density "
                        "threshold %.3f\n",
                        d->name, g->calib_bytes >> 20, g->fault_bw / 1e9, g->prefetch_bw / 1e9, g->thr);
            else
                fprintf(stderr, "macc: %s: migration not measured: density threshold %.2f (fallback)\n", d->name,
                        g->thr);
        }
    }
    double t = g->thr;
    pthread_mutex_unlock(&pl.calib_lock);
    return t;
}

/* The budget of GPU d (pl.lock held): the budget of the first GPU (the
 * managed cap, MACC_DEVICE_MEMORY), and with several GPUs never more than
 * d's own free memory at its first launch less the margin (a smaller or
 * busier second GPU is not filled to the first one's size). */
static size_t pl__budget(maccrt_device *d, pl_gpu *g)
{
    if (g->budget)
        return g->budget;
    size_t b = pl.budget, free_b = 0, total_b = 0;
    if (maccrt_rt.ngpus > 1 && d->plugin->mem_info && d->plugin->mem_info(d, &free_b, &total_b) == 0) {
        size_t margin = maccrt_managed_margin(total_b);
        size_t own = free_b > margin ? free_b - margin : 0;
        if (own < b)
            b = own;
    }
    g->budget = b ? b : 1; /* (1: nothing fits, and it is known) */
    return g->budget;
}

/* ---- the measurement ahead of the first launch ------------------------------------------------ */

/* The first managed allocation starts a thread that measures every GPU's
 * threshold (pl__threshold, under calib_lock) while the program fills its
 * arrays: the first launch on a GPU then finds it done (or waits for the
 * rest of it) instead of measuring inside the program's first region. It
 * took about 70 ms there on an H200 (the probe kernel's PTX loaded and
 * compiled, 64 MiB faulted in and prefetched), in Jacobi's timed loop; with
 * two GPUs the first GPU to measure fell behind, the other took the first
 * tasks, and the pages, which the tasks follow, stayed with it (STREAM
 * --managed on two H200s: 572 / 68 tasks, no faster than one GPU; 320 / 320
 * and 1.97x one GPU without the measurement). */
static pthread_t pl_calib_th;
static atomic_int pl_calib_state; /* 0 not started, 1 thread started, 2 nothing to measure */
static pid_t pl_calib_pid;        /* the process that started it (a forked child does not join it) */

static void *pl__calib_main(void *arg)
{
    (void)arg;
    for (int k = 0; k < maccrt_rt.ngpus; k++)
        if (maccrt_placement_active(maccrt_rt.devices[k]))
            (void)pl__threshold(maccrt_rt.devices[k]);
    return NULL;
}

void maccrt_placement_prepare(void)
{
    int st = 0;
    if (atomic_load(&pl_calib_state) || !atomic_compare_exchange_strong(&pl_calib_state, &st, 2))
        return;
    if (!maccrt_rt.ngpus || !maccrt_placement_active(maccrt_rt.devices[0]) || pl.policy != MACCRT_PL_OTM ||
        pl.threshold >= 0.0)
        return;
    pl_calib_pid = getpid();
    if (pthread_create(&pl_calib_th, NULL, pl__calib_main, NULL) == 0)
        atomic_store(&pl_calib_state, 1);
}

void maccrt_placement_fini(void)
{
    if (atomic_exchange(&pl_calib_state, 2) == 1 && getpid() == pl_calib_pid)
        pthread_join(pl_calib_th, NULL);
}

/* ---- records (pl.lock held) ------------------------------------------------------------------ */

static pl_obj *pl__find(pl_gpu *g, uintptr_t a)
{
    for (int i = 0; i < g->n; i++)
        if (g->objs[i].a <= a && a < g->objs[i].b)
            return &g->objs[i];
    return NULL;
}

static pl_obj *pl__get(pl_gpu *g, uintptr_t a, uintptr_t b, const char *name)
{
    pl_obj *o = pl__find(g, a);
    if (o && o->a == a && o->b == b)
        return o;
    if (o) { /* a stale record (the block was reused with another size) */
        if (o->charged)
            g->resident -= o->b - o->a;
        *o = g->objs[--g->n];
    }
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 32;
        g->objs = maccrt_xrealloc(g->objs, (size_t)g->cap * sizeof *g->objs);
    }
    o = &g->objs[g->n++];
    memset(o, 0, sizeof *o);
    o->a = a;
    o->b = b;
    o->name = name;
    return o;
}

static void pl__trace(int kind, maccrt_device *d, const pl_obj *o, double t0)
{
    if (t0 > 0.0)
        maccrt_trace_event(kind, d, o->name, t0, maccrt_now(), o->b - o->a);
}

/* Moves o back to the host (its charge goes). */
static void pl__evict(maccrt_device *d, pl_gpu *g, pl_obj *o)
{
    double t0 = maccrt_trace_on() ? maccrt_now() : 0.0;
    size_t n = o->b - o->a;
    d->plugin->prefetch(d, (const void *)o->a, n, 1);
    if (o->charged)
        g->resident -= n;
    o->charged = 0;
    o->prefetched = 0;
    o->faulted = 0;
    g->evicted += n;
    g->n_evict++;
    pl__trace(MACCRT_TRACE_EVICT, d, o, t0);
}

/* [a, b) moved to GPU `to` (-1: to the host): the records of every other
 * GPU lose it. A record inside it is no longer on that GPU (its charge
 * goes); one that overlaps it lost part of its pages (prefetched again at
 * its next use). Pages of managed memory are in one place at a time (no
 * read-mostly copies are assumed): without this, a GPU whose record said
 * "prefetched" skipped the prefetch of data another GPU had taken, and its
 * kernel faulted the pages back one by one. */
static void pl__moved(int to, uintptr_t a, uintptr_t b)
{
    int n = to < 0 ? MACCRT_MAX_DEVICES : maccrt_rt.ngpus;
    for (int k = 0; k < n; k++) {
        if (k == to)
            continue;
        pl_gpu *g = &pl.gpu[k];
        for (int i = 0; i < g->n; i++) {
            pl_obj *o = &g->objs[i];
            if (!(o->a < b && a < o->b))
                continue;
            if (o->a >= a && o->b <= b) { /* the whole object went */
                if (o->charged)
                    g->resident -= o->b - o->a;
                o->charged = o->prefetched = 0;
                o->faulted = 0;
            } else {
                o->prefetched = 0; /* part of it: prefetched again next time */
            }
        }
    }
}

/* The least recently used charged object not placed by launch `now` (0: any). */
static pl_obj *pl__lru(pl_gpu *g, unsigned long now)
{
    pl_obj *v = NULL;
    for (int i = 0; i < g->n; i++) {
        pl_obj *o = &g->objs[i];
        if (o->charged && (!now || o->launch != now) && (!v || o->used < v->used))
            v = o;
    }
    return v;
}

static void pl__charge(pl_gpu *g, pl_obj *o)
{
    o->charged = 1;
    g->resident += o->b - o->a;
    if (g->resident > g->peak)
        g->peak = g->resident;
}

/* ---- the decisions ------------------------------------------------------------------------------ */

typedef struct pl_item {
    uintptr_t a, b;
    double density;
    double pages;   /* the fraction of its pages the accesses touch (see the top) */
    int rank;
    int order;      /* map order */
    int dest;       /* MACCRT_PL_* */
    const char *name;
    int sparse;     /* density < the threshold */
} pl_item;

static int pl__cmp(const void *x, const void *y)
{
    const pl_item *p = x, *q = y;
    int ps = p->sparse, qs = q->sparse;
    if (ps != qs) /* dense objects first */
        return ps - qs;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    if (p->pages != q->pages)
        return p->pages > q->pages ? -1 : 1;
    if (p->b - p->a != q->b - q->a)
        return p->b - p->a < q->b - q->a ? -1 : 1;
    return p->order - q->order;
}

static const MACC_Access *pl__fact(const MACC_Region *r, int i, const MACC_Map *m)
{
    if (!r || !r->access || r->naccess <= 0)
        return NULL;
    for (int k = 0; k < r->naccess; k++) /* the map's index, the same name */
        if (r->access[k].map == i && m->name && r->access[k].name && !strcmp(r->access[k].name, m->name))
            return &r->access[k];
    for (int k = 0; k < r->naccess; k++)
        if (m->name && r->access[k].name && !strcmp(r->access[k].name, m->name))
            return &r->access[k];
    return NULL;
}

/* The pages of section [s, e) that placement moves with several GPUs, within
 * the allocation [*a, *b): the whole pages inside it, so that neighbouring
 * sections of one array (row blocks of any size) on two GPUs do not both
 * claim the page they share, which made each GPU's record of its section
 * lose a page to the other at every step and prefetch the section again
 * (the page or two at the ends come by faults); a section of less than two
 * whole pages: the pages it touches. */
static void pl__pages(uintptr_t s, uintptr_t e, uintptr_t *a, uintptr_t *b)
{
    uintptr_t ia = (s + PL_PAGE - 1) & ~(PL_PAGE - 1), ib = e & ~(PL_PAGE - 1);
    uintptr_t sa = ia, sb = ib;
    if (ib < ia || ib - ia < 2 * PL_PAGE) { /* small: the pages it touches */
        sa = s & ~(PL_PAGE - 1);
        sb = (e + PL_PAGE - 1) & ~(PL_PAGE - 1);
    }
    *a = sa > *a ? sa : *a;
    *b = sb < *b ? sb : *b;
}

/* x^k (k >= 0), without libm. */
static double pl__pow(double x, size_t k)
{
    double r = 1.0;
    for (; k; k >>= 1, x *= x)
        if (k & 1)
            r *= x;
    return r;
}

/* The managed objects of the maps, one item per allocation; returns the count. */
static int pl__items(const MACC_Region *r, int nmaps, const MACC_Map *maps, long long trip, pl_item *it)
{
    int n = 0;
    for (int i = 0; i < nmaps; i++) {
        const MACC_Map *m = &maps[i];
        if (m->kind & MACC_MAP_DEVICEPTR)
            continue;
        const void *p = m->bytes ? m->start : m->base;
        void *start;
        size_t size;
        if (!p || !maccrt_managed_block(p, &start, &size) || !size)
            continue;
        const MACC_Access *f = pl__fact(r, i, m);
        double density = 1.0, pages = 1.0;
        /* several GPUs: the object is the section (below), its facts too */
        int part = maccrt_rt.ngpus > 1 && m->bytes && m->bytes < size;
        if (f && f->per_iter >= 0 && f->elem_size > 0 && trip >= 0) {
            double elems = (double)(part ? m->bytes : size) / (double)f->elem_size;
            double acc = f->per_iter * (double)trip;
            density = elems > 0 ? acc / elems : 1.0;
            if (density > 1.0)
                density = 1.0;
            size_t sec = m->bytes && m->bytes < size ? m->bytes : size;
            double selems = (double)sec / (double)f->elem_size;
            double ds = selems > 0 ? acc / selems : 1.0;
            if (ds > 1.0)
                ds = 1.0;
            pages = (part ? 1.0 : (double)sec / (double)size) * (1.0 - pl__pow(1.0 - ds, f->elem_size >= 4096 ? 1 : (size_t)(4096 / f->elem_size)));
        }
        int rank = f ? f->reuse_rank : 1;
        uintptr_t a = (uintptr_t)start, b = a + size;
        if (part) {
            /* several GPUs: the section (whole pages), not the allocation.
             * Tasks of one array on both GPUs (STREAM's blocks) each move
             * their own part; a whole-array prefetch per launch moved all of
             * it to one GPU and then the other, and each GPU's record of it
             * went stale (two H100s: 184 GB/s against 1918 with copies). */
            pl__pages((uintptr_t)m->start, (uintptr_t)m->start + m->bytes, &a, &b);
        }
        int k = 0;
        while (k < n && (it[k].a != a || it[k].b != b))
            k++;
        if (k < n) { /* two maps of one allocation: one object */
            if (density > it[k].density)
                it[k].density = density;
            if (pages > it[k].pages)
                it[k].pages = pages;
            if (rank < it[k].rank)
                it[k].rank = rank;
            continue;
        }
        it[n++] = (pl_item){a, b, density, pages, rank, i, MACCRT_PL_NONE, m->name ? m->name : "?", 0};
    }
    return n;
}

void maccrt_placement_launch(maccrt_device *d, const MACC_Region *r, int nmaps, const MACC_Map *maps,
                             long long trip)
{
    if (nmaps <= 0 || d->num < 0 || d->num >= MACCRT_MAX_DEVICES)
        return;
    pl_item items[nmaps];
    int n = pl__items(r, nmaps, maps, trip, items); /* none without managed memory: nothing started */
    if (!n || !maccrt_placement_active(d))
        return;
    pthread_mutex_lock(&pl.lock);
    size_t budget = pl__budget(d, &pl.gpu[d->num]);
    pthread_mutex_unlock(&pl.lock);
    if (pl.policy == MACCRT_PL_OTM) {
        double thr = pl__threshold(d);
        for (int i = 0; i < n; i++)
            items[i].sparse = items[i].pages < thr;
        qsort(items, (size_t)n, sizeof items[0], pl__cmp);
        size_t left = budget;
        for (int i = 0; i < n; i++) {
            size_t sz = items[i].b - items[i].a;
            if (sz <= left) {
                items[i].dest = !items[i].sparse ? MACCRT_PL_GPU_PREFETCH : MACCRT_PL_GPU_FAULT;
                left -= sz;
            } else {
                items[i].dest = MACCRT_PL_HOST;
            }
        }
    } else {
        for (int i = 0; i < n; i++)
            items[i].dest = pl.policy == MACCRT_PL_PREFETCH ? MACCRT_PL_GPU_PREFETCH : MACCRT_PL_GPU_FAULT;
    }
    pthread_mutex_lock(&pl.lock);
    pl_gpu *g = &pl.gpu[d->num];
    unsigned long now = ++g->clock;
    g->launches++;
    for (int i = 0; i < n; i++) {
        pl_item *x = &items[i];
        pl_obj *o = pl__get(g, x->a, x->b, x->name);
        size_t sz = x->b - x->a;
        o->used = now;
        o->launch = now;
        o->name = x->name;
        double t0 = maccrt_trace_on() ? maccrt_now() : 0.0;
        if (x->dest == MACCRT_PL_HOST) {
            if (o->charged || o->prefetched || o->faulted)
                pl__evict(d, g, o);
            if (o->where != MACCRT_PL_HOST) {
                d->plugin->advise_place(d, (const void *)x->a, sz, 1);
                g->pinned += sz;
            }
            o->where = MACCRT_PL_HOST;
            g->n_host++;
            pl__trace(MACCRT_TRACE_PLACE_HOST, d, o, t0);
            continue;
        }
        if (o->where == MACCRT_PL_HOST)
            d->plugin->advise_place(d, (const void *)x->a, sz, 0);
        if (!o->charged) {
            pl_obj *v;
            while (g->resident + sz > budget && (v = pl__lru(g, now)) != NULL)
                pl__evict(d, g, v);
            if (g->resident + sz <= budget)
                pl__charge(g, o);
            else
                g->over_budget++; /* its pages come by faults; charged after the kernel */
        }
        if (x->dest == MACCRT_PL_GPU_PREFETCH && o->charged) {
            if (!o->prefetched) {
                d->plugin->prefetch(d, (const void *)x->a, sz, 0);
                o->prefetched = 1;
                g->prefetched += sz;
            }
            g->n_prefetch++;
            pl__trace(MACCRT_TRACE_PLACE_PREFETCH, d, o, t0);
        } else {
            if (!o->prefetched && o->faulted < sz) {
                size_t f = (size_t)(x->pages * (double)sz);
                if (f > sz - o->faulted)
                    f = sz - o->faulted;
                o->faulted += f;
                g->faulted += f;
            }
            g->n_fault++;
            pl__trace(MACCRT_TRACE_PLACE_FAULT, d, o, t0);
        }
        o->where = x->dest == MACCRT_PL_GPU_PREFETCH && o->charged ? MACCRT_PL_GPU_PREFETCH : MACCRT_PL_GPU_FAULT;
        if (maccrt_rt.ngpus > 1)
            pl__moved(d->num, x->a, x->b); /* its pages come here (prefetched or faulted) */
    }
    pthread_mutex_unlock(&pl.lock);
}

void maccrt_placement_done(maccrt_device *d, const MACC_Region *r, int nmaps, const MACC_Map *maps)
{
    if (nmaps <= 0 || d->num < 0 || d->num >= MACCRT_MAX_DEVICES)
        return;
    pl_item items[nmaps];
    int n = pl__items(r, nmaps, maps, -1, items);
    if (!n || !maccrt_placement_active(d))
        return;
    pthread_mutex_lock(&pl.lock);
    pl_gpu *g = &pl.gpu[d->num];
    int over = 0;
    for (int i = 0; i < n; i++) {
        pl_obj *o = pl__find(g, items[i].a);
        if (o && !o->charged && o->where != MACCRT_PL_HOST) {
            /* the kernel faulted it in: it is on the GPU now */
            o->charged = 1;
            g->resident += o->b - o->a;
            over = 1;
        }
    }
    pl_obj *v;
    while (over && g->resident > pl__budget(d, g) && (v = pl__lru(g, 0)) != NULL)
        pl__evict(d, g, v);
    pthread_mutex_unlock(&pl.lock);
}

void maccrt_placement_forget(const void *p, size_t bytes)
{
    if (!bytes)
        return;
    uintptr_t a = (uintptr_t)p, b = a + bytes;
    pthread_mutex_lock(&pl.lock);
    for (int k = 0; k < MACCRT_MAX_DEVICES; k++) {
        pl_gpu *g = &pl.gpu[k];
        for (int i = 0; i < g->n;) {
            pl_obj *o = &g->objs[i];
            if (o->a < b && a < o->b) {
                if (o->charged)
                    g->resident -= o->b - o->a;
                *o = g->objs[--g->n];
            } else {
                i++;
            }
        }
    }
    pthread_mutex_unlock(&pl.lock);
}

void maccrt_placement_note_host(const void *p, size_t bytes)
{
    uintptr_t a = (uintptr_t)p, b = a + bytes;
    pthread_mutex_lock(&pl.lock);
    pl__moved(-1, a, b);
    pthread_mutex_unlock(&pl.lock);
}

int maccrt_placement_holders(uintptr_t a, uintptr_t b, int try, maccrt_mask *out)
{
    *out = 0;
    if (maccrt_rt.ngpus > 1) { /* the pages a launch of [a, b) placed (pl__items) */
        uintptr_t pa = 0, pb = UINTPTR_MAX;
        pl__pages(a, b, &pa, &pb);
        a = pa > a ? pa : a;
        b = pb < b ? pb : b;
        if (b <= a)
            return 0;
    }
    if (try ? maccrt_lock_try(&pl.lock) != 0 : pthread_mutex_lock(&pl.lock) != 0)
        return -1;
    for (int k = 0; k < maccrt_rt.ngpus && k < MACCRT_MAX_DEVICES; k++) {
        const pl_gpu *g = &pl.gpu[k];
        for (int i = 0; i < g->n; i++) {
            const pl_obj *o = &g->objs[i];
            if (o->a <= a && b <= o->b && o->charged && o->where != MACCRT_PL_HOST) {
                *out |= MACCRT_BIT(k);
                break;
            }
        }
    }
    pthread_mutex_unlock(&pl.lock);
    return 0;
}

/* ---- statistics ---------------------------------------------------------------------------------- */

void maccrt_placement_stats(const maccrt_device *d, maccrt_placement_info *out)
{
    pl__ensure();
    memset(out, 0, sizeof *out);
    out->policy = pl.policy;
    out->threshold = pl.threshold >= 0.0 ? pl.threshold : PL_FALLBACK_THRESHOLD;
    out->threshold_from = pl.threshold >= 0.0 ? MACCRT_PL_THR_ENV : MACCRT_PL_THR_DEFAULT;
    out->budget = pl.budget;
    if (!d || d->num < 0 || d->num >= MACCRT_MAX_DEVICES)
        return;
    const pl_gpu *g = &pl.gpu[d->num];
    pthread_mutex_lock(&pl.lock);
    if (g->budget)
        out->budget = g->budget;
    pthread_mutex_unlock(&pl.lock);
    pthread_mutex_lock(&pl.calib_lock);
    if (pl.threshold < 0.0 && g->thr_done) {
        out->threshold = g->thr;
        out->threshold_from = g->thr_from;
        out->fault_bw = g->fault_bw;
        out->prefetch_bw = g->prefetch_bw;
        out->calib_bytes = g->calib_bytes;
    }
    pthread_mutex_unlock(&pl.calib_lock);
    pthread_mutex_lock(&pl.lock);
    out->resident = g->resident;
    out->peak = g->peak;
    out->prefetched = g->prefetched;
    out->faulted = g->faulted;
    out->evicted = g->evicted;
    out->pinned = g->pinned;
    out->launches = g->launches;
    out->n_prefetch = g->n_prefetch;
    out->n_fault = g->n_fault;
    out->n_host = g->n_host;
    out->n_evict = g->n_evict;
    out->over_budget = g->over_budget;
    pthread_mutex_unlock(&pl.lock);
}

int maccrt_placement_where(const maccrt_device *d, const void *p)
{
    if (!d || d->num < 0 || d->num >= MACCRT_MAX_DEVICES)
        return MACCRT_PL_NONE;
    pthread_mutex_lock(&pl.lock);
    pl_obj *o = pl__find(&pl.gpu[d->num], (uintptr_t)p);
    int w = o ? o->where : MACCRT_PL_NONE;
    pthread_mutex_unlock(&pl.lock);
    return w;
}

void maccrt_placement_print(FILE *f)
{
    static const char *const names[] = {"otm", "prefetch", "demand", "off"};
    int header = 0;
    for (int i = 0; i < maccrt_rt.ndevices; i++) {
        maccrt_device *d = maccrt_rt.devices[i];
        if (d->num < 0 || d->num >= MACCRT_MAX_DEVICES || !pl.gpu[d->num].launches)
            continue;
        maccrt_placement_info s;
        maccrt_placement_stats(d, &s);
        if (!header) {
            fprintf(f, "macc: placement %s, budget %zu bytes\n", names[s.policy], s.budget);
            fprintf(f, "macc: %-12s %8s %14s %14s %14s %14s %14s %14s %8s %8s %8s %8s %8s\n", "device", "launches",
                    "prefetched", "faulted(est)", "evicted", "pinned", "resident", "peak", "n_pref", "n_fault",
                    "n_host", "n_evict", "over");
            header = 1;
        }
        fprintf(f, "macc: %-12s %8ld %14llu %14llu %14llu %14llu %14zu %14zu %8ld %8ld %8ld %8ld %8ld\n", d->name,
                s.launches, s.prefetched, s.faulted, s.evicted, s.pinned, s.resident, s.peak, s.n_prefetch,
                s.n_fault, s.n_host, s.n_evict, s.over_budget);
    }
    for (int i = 0; header && pl.policy == MACCRT_PL_OTM && i < maccrt_rt.ndevices; i++) {
        maccrt_device *d = maccrt_rt.devices[i];
        if (d->num < 0 || d->num >= MACCRT_MAX_DEVICES || !pl.gpu[d->num].launches)
            continue;
        maccrt_placement_info s;
        maccrt_placement_stats(d, &s);
        if (s.threshold_from == MACCRT_PL_THR_MEASURED)
            fprintf(f, "macc: %-12s density threshold %.3f (measured over %zu MiB: page faults %.2f GB/s, prefetch %.2f GB/s)\n",
                    d->name, s.threshold, s.calib_bytes >> 20, s.fault_bw / 1e9, s.prefetch_bw / 1e9);
        else
            fprintf(f, "macc: %-12s density threshold %.3f (%s)\n", d->name, s.threshold,
                    s.threshold_from == MACCRT_PL_THR_ENV ? "MACC_OTM_DENSITY" : "fallback, not measured");
    }
}
