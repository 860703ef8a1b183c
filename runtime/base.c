/* base.c: the bottom layer's basics: the runtime's state (maccrt_rt, filled
 * by init.c), the clock, errors and warnings, allocation that never fails,
 * the spinning lock, polling and dozing waits, the per-thread state, and the
 * calls up (maccrt_up) through which the devices reach the layers above them
 * (see docs/RUNTIME.md, "Layers").
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

maccrt_runtime maccrt_rt = {
    /* adaptive: spins briefly before sleeping (the lock is held for short
     * stretches, and a futex sleep costs more than the wait) */
    .lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
    .idle_cv = PTHREAD_COND_INITIALIZER,
    .throttle_cv = PTHREAD_COND_INITIALIZER,
};


double maccrt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pthread_mutex_t base__fatal_lock = PTHREAD_MUTEX_INITIALIZER;

static void base__vmessage(const char *what, const MACC_SrcLoc *loc, const char *fmt, va_list ap)
{
    char buf[1024];
    int n = 0;
    if (loc && loc->file)
        n = snprintf(buf, sizeof buf, "macc: %s: %s:%d: ", what, loc->file, loc->line);
    else
        n = snprintf(buf, sizeof buf, "macc: %s: ", what);
    if (n < 0 || (size_t)n >= sizeof buf)
        n = 0;
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    /* One write, so that messages of concurrent threads do not interleave. */
    fprintf(stderr, "%s\n", buf);
    fflush(stderr);
}

void maccrt_fatal(const MACC_SrcLoc *loc, const char *fmt, ...)
{
    /* The first fatal error exits; a second thread failing at the same time
     * waits here until the process is gone. */
    pthread_mutex_lock(&base__fatal_lock);
    va_list ap;
    va_start(ap, fmt);
    base__vmessage("error", loc, fmt, ap);
    va_end(ap);
    atomic_store(&maccrt_rt.fatal, 1);
    exit(1);
}

void maccrt_warn(const MACC_SrcLoc *loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base__vmessage("warning", loc, fmt, ap);
    va_end(ap);
}

void *maccrt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        maccrt_fatal(NULL, "out of memory (%zu bytes)", n);
    return p;
}

void *maccrt_xcalloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p)
        maccrt_fatal(NULL, "out of memory (%zu bytes)", n * m);
    return p;
}

void *maccrt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        maccrt_fatal(NULL, "out of memory (%zu bytes)", n);
    return q;
}

static int base__lock_spin = -1; /* MACC_LOCK_SPIN (default on) */

/* Whether m looks unlocked (a plain read of the word glibc's mutexes lock;
 * elsewhere: always, and the try decides). */
static int base__looks_free(pthread_mutex_t *m)
{
#if defined(__GLIBC__)
    return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0;
#else
    (void)m;
    return 1;
#endif
}

int maccrt_env_flag_read(int *memo, const char *name, int dflt)
{
    const char *e = getenv(name);
    int v = e ? strcmp(e, "0") != 0 : dflt;
    __atomic_store_n(memo, v, __ATOMIC_RELAXED);
    return v;
}

int maccrt_lock_try(pthread_mutex_t *m)
{
    return base__looks_free(m) ? pthread_mutex_trylock(m) : EBUSY;
}

static long base__lock_tries = -1; /* MACC_LOCK_TRIES (default 200) */

void maccrt_lock_spin(pthread_mutex_t *m)
{
    int on = maccrt_env_flag(&base__lock_spin, "MACC_LOCK_SPIN", 1);
    long tries = __atomic_load_n(&base__lock_tries, __ATOMIC_RELAXED);
    if (tries < 0)
        tries = maccrt_env_memo(&base__lock_tries, getenv("MACC_LOCK_TRIES"), 200, 32, 1000000, 1);
    for (long i = 0; on && i < tries; i++) {
        /* tried only when it looks free: a try is an atomic write that takes
         * the lock's cache line from its holder and from every other
         * spinner (16 cores, four fake GPUs of 8 helpers: 48% of the CPU
         * time in pthread_mutex_trylock, the holders slowed by the
         * traffic on the lines they work on) */
        if (maccrt_lock_try(m) == 0)
            return;
        if (i < 32) {
            maccrt_pause();
        } else {
            sched_yield();
        }
    }
    pthread_mutex_lock(m);
}

int maccrt_poll(int (*done)(const void *arg), const void *arg, long ns)
{
    double end = maccrt_now() + (double)ns * 1e-9;
    for (unsigned i = 1;; i++) {
        if (done(arg))
            return 1;
        if ((i & 15) == 0) {
            if (maccrt_now() > end)
                return 0;
            sched_yield();
        }
        maccrt_pause();
    }
}

long maccrt_env_memo(long *memo, const char *v, long dflt, long lo, long hi, long scale)
{
    long x = v && *v ? strtol(v, NULL, 10) : dflt;
    x = (x < lo ? lo : x > hi ? hi : x) * scale;
    __atomic_store_n(memo, x, __ATOMIC_RELAXED);
    return x;
}

static long base__doze_step = -1; /* MACC_DOZE_US, in ns */

long maccrt_doze_step(void)
{
    long ns = __atomic_load_n(&base__doze_step, __ATOMIC_RELAXED);
    return ns >= 0 ? ns : maccrt_env_memo(&base__doze_step, getenv("MACC_DOZE_US"), 20, 0, 10000, 1000);
}

int maccrt_doze(int (*done)(const void *arg), const void *arg, long ns)
{
    long step = maccrt_doze_step();
    if (step <= 0 || ns <= 0)
        return done(arg);
#ifdef __linux__
    /* the default slack (50 us) would stretch every step; the thread's own
     * value comes back before it returns */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > 1000)
        (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
    double end = maccrt_now() + (double)ns * 1e-9;
    struct timespec ts = {step / 1000000000L, step % 1000000000L};
    int r;
    for (;;) {
        if ((r = done(arg)) != 0 || maccrt_now() > end)
            break;
        nanosleep(&ts, NULL);
    }
#ifdef __linux__
    if (slack > 1000)
        (void)prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
#endif
    return r;
}

long maccrt_parse_positive(const char *s)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *e;
    long v = strtol(s, &e, 10);
    while (isspace((unsigned char)*e))
        e++;
    if (errno || *e || v <= 0)
        return -1;
    return v;
}

/* ---- calls up ------------------------------------------------------------------ */

maccrt_upcalls maccrt_up;

/* ---- per-thread state ---------------------------------------------------------- */

static pthread_key_t base__key;
static pthread_once_t base__key_once = PTHREAD_ONCE_INIT;
static __thread maccrt_thread *base__self;

void maccrt_thread_free(maccrt_thread *th)
{
    pthread_cond_destroy(&th->cv);
    free(th);
}

static void base__thread_exit(void *p)
{
    base__self = NULL; /* a later destructor calling in gets a fresh struct */
    if (maccrt_up.thread_exit)
        maccrt_up.thread_exit(p);
    else if (--((maccrt_thread *)p)->refs == 0)
        maccrt_thread_free(p);
}

static void base__make_key(void)
{
    pthread_key_create(&base__key, base__thread_exit);
}

maccrt_thread *maccrt_thread_self(void)
{
    maccrt_thread *th = base__self;
    if (th)
        return th;
    pthread_once(&base__key_once, base__make_key);
    th = maccrt_xcalloc(1, sizeof *th);
    pthread_cond_init(&th->cv, NULL);
    th->refs = 1;
    pthread_setspecific(base__key, th);
    base__self = th;
    return th;
}
