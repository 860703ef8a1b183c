/* crew.c: a crew of copying threads. A device's thread that copies a large
 * block between two host buffers (the CUDA plugin: a chunk of the program's
 * pageable memory into a page-locked staging slot, before its DMA) posts the
 * copy as a job cut in parts; the crew's threads and the poster claim parts
 * until none is left, and the poster returns once every part is copied.
 * The poster claims parts too, so a job never waits for a crew thread that
 * has not started one: with no crew (MACC_COPY_THREADS=0, or none started
 * yet, or stopped at exit) the poster copies the whole block alone.
 *
 * Why: a staged copy of pageable memory costs its thread a memcpy that runs
 * at a fraction of the host's memory bandwidth (one thread: 5-7 GB/s into a
 * slot; a 512 KiB tile took a GPU helper 97-110 us), and the helpers of two
 * GPUs staged the tiles of unpinned matmul at about 30-42 GB/s, while 24
 * threads' staged copies reach 50 (bench/copybw.cu, two H200s).
 *
 * Claims: a job's state is one word, (generation, parts, next part). The
 * poster writes the job's fields, then the state (g, n, 0) (release); a
 * claimer reads the state, and claims part k < n of generation g with a
 * compare-and-swap from (g, n, k) to (g, n, k + 1), so a claim never lands
 * on another generation (the count of parts is in the word: read apart, a
 * new job's count could have let a claim on the old generation through). The
 * fields it reads after its claim are g's: the poster writes the next
 * generation's only once every part of g, this one included, is copied.
 * Parts end with a store fence (the non-temporal stores are ordered before
 * the part's count), so a DMA queued by the poster after the last count
 * reads every byte.
 *
 * Crew threads look for jobs while any is posted, spin MACC_COPY_SPIN_US
 * (default 200) after their last part, then sleep until a job is posted.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct maccrt_crew_job {
    _Alignas(64) _Atomic uint64_t state; /* generation << 32 | parts << 16 | next part */
    atomic_uint done;                    /* parts copied by the crew */
    _Atomic(char *) dst;
    _Atomic(const char *) src;
    _Atomic size_t bytes;
    atomic_int nt;
};

enum { CREW__MAX_JOBS = 512, CREW__MAX_THREADS = 64 };

static struct {
    pthread_mutex_t lock; /* sleeping, starting and stopping */
    pthread_cond_t cv;
    maccrt_crew_job jobs[CREW__MAX_JOBS];
    atomic_int njobs;   /* jobs handed out (maccrt_crew_job_new) */
    atomic_int active;  /* jobs posted whose poster still claims */
    atomic_long posted; /* jobs posted so far (the sleepers' key) */
    atomic_long parts;  /* parts the crew's threads copied (maccrt_crew_parts) */
    atomic_int sleepers;
    atomic_int stop;
    atomic_int nthreads;
    int started;
    pthread_t threads[CREW__MAX_THREADS];
    _Atomic size_t part; /* bytes per part (MACC_COPY_PART_KB, default 64); 0 before the start */
    long spin_ns;        /* MACC_COPY_SPIN_US, in ns (set before any crew thread starts) */
} crew = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* n bytes copied by the calling thread: non-temporal stores where dst is
 * 16-byte aligned (nt), fenced, else memcpy. */
static void crew__copy_block(void *dst, const void *src, size_t n, int nt)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    if (nt && !((uintptr_t)d & 15)) {
        size_t i = 0;
        for (; i + 64 <= n; i += 64) {
            _mm_prefetch(s + i + 1024, _MM_HINT_T0);
            __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
            _mm_stream_si128((__m128i *)(d + i), a);
            _mm_stream_si128((__m128i *)(d + i + 16), b);
            _mm_stream_si128((__m128i *)(d + i + 32), c);
            _mm_stream_si128((__m128i *)(d + i + 48), e);
        }
        if (i < n)
            memcpy(d + i, s + i, n - i);
        _mm_sfence(); /* (the stores reach memory before whatever follows) */
        return;
    }
#endif
    (void)nt;
    memcpy(dst, src, n);
}

/* Claims and copies one part of j if one is left; 0 when none is. */
static int crew__claim(maccrt_crew_job *j)
{
    uint64_t s = atomic_load_explicit(&j->state, memory_order_acquire);
    for (;;) {
        if ((s & 0xffff) >= ((s >> 16) & 0xffff))
            return 0;
        if (atomic_compare_exchange_weak_explicit(&j->state, &s, s + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
    }
    size_t part = atomic_load_explicit(&crew.part, memory_order_relaxed);
    size_t bytes = atomic_load_explicit(&j->bytes, memory_order_relaxed), off = (size_t)(s & 0xffff) * part;
    size_t len = bytes - off < part ? bytes - off : part;
    crew__copy_block(atomic_load_explicit(&j->dst, memory_order_relaxed) + off,
                      atomic_load_explicit(&j->src, memory_order_relaxed) + off, len,
                      atomic_load_explicit(&j->nt, memory_order_relaxed));
    return 1;
}

static void *crew__thread(void *arg)
{
    (void)arg;
    double last = maccrt_now(), spin = (double)crew.spin_ns * 1e-9;
    for (;;) {
        long seen = atomic_load(&crew.posted);
        int worked = 0;
        if (atomic_load(&crew.active) > 0) {
            int n = atomic_load(&crew.njobs);
            for (int i = 0; i < n; i++) {
                maccrt_crew_job *j = &crew.jobs[i];
                while (crew__claim(j)) {
                    atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
                    atomic_fetch_add_explicit(&crew.parts, 1, memory_order_relaxed);
                    worked = 1;
                }
            }
        }
        if (atomic_load(&crew.stop))
            break;
        double t = maccrt_now();
        if (worked) {
            last = t;
            continue;
        }
        if (t - last < spin) {
            maccrt_pause();
            continue;
        }
        pthread_mutex_lock(&crew.lock);
        atomic_fetch_add(&crew.sleepers, 1);
        while (atomic_load(&crew.posted) == seen && !atomic_load(&crew.stop))
            pthread_cond_wait(&crew.cv, &crew.lock);
        atomic_fetch_sub(&crew.sleepers, 1);
        pthread_mutex_unlock(&crew.lock);
        last = maccrt_now();
    }
    return NULL;
}

int maccrt_crew_start(int busy)
{
    pthread_mutex_lock(&crew.lock);
    if (!crew.started) {
        crew.started = 1;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        /* half the cores the devices' own threads and the program's leave,
         * at most 8: on two H200s (32 cores, 18 threads of the GPUs) 4, 6 and
         * 8 threads sped unpinned matmul alike, 13 spread its two-GPU runs
         * (a thread descheduled in its part holds its caller) */
        long free_cores = ncpu - busy - 1;
        long dflt = free_cores < 2 ? 0 : free_cores / 2 > 8 ? 8 : free_cores / 2;
        long n, part;
        (void)maccrt_env_memo(&n, getenv("MACC_COPY_THREADS"), dflt, 0, CREW__MAX_THREADS, 1);
        (void)maccrt_env_memo(&part, getenv("MACC_COPY_PART_KB"), 64, 4, 1L << 20, 1024);
        atomic_store(&crew.part, (size_t)part);
        (void)maccrt_env_memo(&crew.spin_ns, getenv("MACC_COPY_SPIN_US"), 200, 0, 1000000, 1000);
        for (int i = 0; i < n; i++) {
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, 64u << 10);
            if (pthread_create(&crew.threads[atomic_load(&crew.nthreads)], &attr, crew__thread, NULL) == 0)
                atomic_fetch_add(&crew.nthreads, 1);
            pthread_attr_destroy(&attr);
        }
    }
    int n = atomic_load(&crew.nthreads);
    pthread_mutex_unlock(&crew.lock);
    return n;
}

void maccrt_crew_stop(void)
{
    pthread_mutex_lock(&crew.lock);
    atomic_store(&crew.stop, 1);
    pthread_cond_broadcast(&crew.cv);
    int n = atomic_exchange(&crew.nthreads, 0);
    pthread_mutex_unlock(&crew.lock);
    for (int i = 0; i < n; i++)
        pthread_join(crew.threads[i], NULL);
}

maccrt_crew_job *maccrt_crew_job_new(void)
{
    int i = atomic_fetch_add(&crew.njobs, 1);
    if (i >= CREW__MAX_JOBS) {
        atomic_fetch_sub(&crew.njobs, 1);
        return NULL;
    }
    return &crew.jobs[i];
}

void maccrt_crew_copy(maccrt_crew_job *j, void *dst, const void *src, size_t n, int nt)
{
    size_t part = atomic_load_explicit(&crew.part, memory_order_relaxed);
    if (!j || part == 0 || n < 2 * part || n / part >= 0xffff ||
        atomic_load_explicit(&crew.nthreads, memory_order_relaxed) == 0) {
        crew__copy_block(dst, src, n, nt);
        return;
    }
    uint32_t nparts = (uint32_t)((n + part - 1) / part);
    atomic_store_explicit(&j->dst, (char *)dst, memory_order_relaxed);
    atomic_store_explicit(&j->src, (const char *)src, memory_order_relaxed);
    atomic_store_explicit(&j->bytes, n, memory_order_relaxed);
    atomic_store_explicit(&j->nt, nt, memory_order_relaxed);
    atomic_store_explicit(&j->done, 0, memory_order_relaxed);
    uint64_t gen = (atomic_load_explicit(&j->state, memory_order_relaxed) >> 32) + 1;
    atomic_store_explicit(&j->state, gen << 32 | (uint64_t)nparts << 16, memory_order_release);
    atomic_fetch_add(&crew.active, 1);
    atomic_fetch_add(&crew.posted, 1);
    int sleeping = atomic_load(&crew.sleepers);
    if (sleeping > 0) {
        pthread_mutex_lock(&crew.lock);
        for (uint32_t i = 1; i < nparts && (int)i <= sleeping; i++)
            pthread_cond_signal(&crew.cv);
        pthread_mutex_unlock(&crew.lock);
    }
    uint32_t mine = 0;
    while (crew__claim(j))
        mine++;
    atomic_fetch_sub(&crew.active, 1);
    /* the parts crew threads claimed: a thread descheduled in its part is
     * let run (the caller yields its core after a while) */
    for (unsigned i = 0; atomic_load_explicit(&j->done, memory_order_acquire) + mine < nparts; i++)
        maccrt_backoff(i);
}

int maccrt_crew_threads(void)
{
    return atomic_load_explicit(&crew.nthreads, memory_order_relaxed);
}

long maccrt_crew_parts(void)
{
    return atomic_load_explicit(&crew.parts, memory_order_relaxed);
}
