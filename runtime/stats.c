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

void maccrt_stats_unplaced(maccrt_device *d, maccrt_task *t)
{
    (void)t;
    if (--d->running == 0 && maccrt_rt.timed)
        d->busy_s += maccrt_now() - d->busy_since;
}

void maccrt_stats_finished(maccrt_device *d, maccrt_task *t)
{
    if (t->region) {
        d->tasks_run++;
        d->task_s += t->t_end - t->t_start;
    }
    maccrt_stats_unplaced(d, t);
}
