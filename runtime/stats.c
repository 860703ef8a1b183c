/* stats.c: per-device statistics (MACC_STATS=1, macc_print_stats).
 *
 * Busy time is the time during which the device had at least one task placed
 * on it (so concurrent host tasks are not counted twice); task time is the
 * sum of the tasks' own run times. A timeline writer (MACC_TRACE) would hook
 * in at maccrt_stats_placed / maccrt_stats_finished.
 */
#include "internal.h"

void maccrt_stats_placed(maccrt_device *d, maccrt_task *t)
{
    (void)t;
    if (d->running++ == 0 && maccrt_rt.timed)
        d->busy_since = maccrt_now();
}

void maccrt_stats_finished(maccrt_device *d, maccrt_task *t)
{
    if (t->region) {
        d->tasks_run++;
        d->task_s += t->t_end - t->t_start;
    }
    if (--d->running == 0 && maccrt_rt.timed)
        d->busy_s += maccrt_now() - d->busy_since;
}

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
    maccrt_placement_print(f);
    if (locked)
        pthread_mutex_unlock(&rt->lock);
    fflush(f);
}
