/* declare.c: declare target variables.
 *
 * A global in `#pragma omp declare target` has a device copy for the whole
 * run: the device file defines it as a __device__ variable, and the host file
 * registers it (MACC_declare_target, from a constructor that runs before
 * main, so before the runtime starts). Registrations are kept in a list; when
 * the devices are up (maccrt_declare_start, at the end of maccrt_init) every
 * device with its own memory looks up its copy of each variable through its
 * plugin (CUDA: cudaGetSymbolAddress, once per GPU) and its present table
 * gets a permanent entry for the variable's host range (data.c): maps,
 * `target update` and omp_target_is_present of the variable then use the
 * device copy, which regions and device functions use by name. A
 * registration after the start (a library loaded later) is resolved at once.
 *
 * The same variable registered twice (two files that each have regions
 * using it, each with its own device copy) keeps the first registration;
 * the second is reported once per device.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct declare__var {
    MACC_DeclareTarget v;
    const void *symbol;
    const MACC_SrcLoc *loc;
    int warned; /* reported once, not once per device */
} declare__var;

static pthread_mutex_t declare__lock = PTHREAD_MUTEX_INITIALIZER;
static declare__var *declare__vars;
static int declare__n, declare__cap;
static int declare__started;

/* The entry of x on d. declare__lock held. */
static void declare__one(maccrt_device *d, declare__var *x)
{
    const MACC_DeclareTarget *v = &x->v;
    const char *name = v->name ? v->name : "(unnamed)";
    if (!v->host || !v->bytes)
        return;
    void *dev = NULL;
    int err = d->plugin->symbol_address ? d->plugin->symbol_address(d, x->symbol, &dev) : -1;
    if (err || !dev) {
        const char *es = err > 0 && d->plugin->error_string ? d->plugin->error_string(err) : NULL;
        if (!x->warned++)
            maccrt_warn(x->loc, "declare target variable '%s' has no device copy on %s%s%s", name,
                        d->name, es ? ": " : "", es ? es : "");
        return;
    }
    int perm = (v->flags & MACC_DT_LINK) ? MACCRT_PERM_LINK : MACCRT_PERM_TO;
    int r = maccrt_ptable_add_var(d, v->host, v->bytes, dev, perm, name);
    if (r > 0) {
        if (!x->warned++)
            maccrt_warn(x->loc,
                        "declare target variable '%s' has device copies in two files; maps and "
                        "updates reach the first registered one",
                        name);
        return;
    }
    if (r < 0) {
        if (!x->warned++)
            maccrt_warn(x->loc, "declare target variable '%s' overlaps data already mapped on %s; "
                        "its device copy is not registered", name, d->name);
        return;
    }
    if ((v->flags & MACC_DT_INIT) && perm == MACCRT_PERM_TO)
        maccrt_copy(d, 1, dev, v->host, v->bytes, name, x->loc);
}

/* Entries on d for variables [from, declare__n). declare__lock held. */
static void declare__device(maccrt_device *d, int from)
{
    if (d->plugin->caps & MACCRT_CAP_SHARED_MEM)
        return; /* the host: the variable itself is the host's copy */
    for (int i = from; i < declare__n; i++)
        declare__one(d, &declare__vars[i]);
}

void maccrt_declare_device(maccrt_device *d)
{
    pthread_mutex_lock(&declare__lock);
    declare__device(d, 0);
    pthread_mutex_unlock(&declare__lock);
}

void maccrt_declare_start(void)
{
    maccrt_runtime *rt = &maccrt_rt;
    pthread_mutex_lock(&declare__lock);
    for (int i = 0; i < rt->ndevices; i++)
        declare__device(rt->devices[i], 0);
    declare__started = 1;
    pthread_mutex_unlock(&declare__lock);
}

void MACC_declare_target(const MACC_SrcLoc *loc, int n, const MACC_DeclareTarget *vars,
                         const void *const *symbols)
{
    if (n <= 0 || !vars)
        return;
    pthread_mutex_lock(&declare__lock);
    int first = declare__n;
    if (declare__n + n > declare__cap) {
        declare__cap = declare__n + n > 2 * declare__cap ? declare__n + n : 2 * declare__cap;
        declare__vars = maccrt_xrealloc(declare__vars, sizeof *declare__vars * (size_t)declare__cap);
    }
    for (int i = 0; i < n; i++) {
        declare__var *x = &declare__vars[declare__n++];
        x->v = vars[i];
        x->symbol = symbols ? symbols[i] : NULL;
        x->loc = loc;
        x->warned = 0;
    }
    if (declare__started) { /* after the start: the new ones now */
        maccrt_runtime *rt = &maccrt_rt;
        for (int di = 0; di < rt->ndevices; di++)
            declare__device(rt->devices[di], first);
    }
    pthread_mutex_unlock(&declare__lock);
}
