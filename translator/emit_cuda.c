/* emit_cuda.c: the device file, name.cuda.cu.
 *
 * Layout:
 *  1. banner, <cuda_runtime.h>, macc_rt.h, macc_device.h, `restrict`;
 *  2. the prelude: the user's whole file, line for line, with what the device
 *     does not need blanked (function bodies, variables, our pragmas), so the
 *     kernels see the user's includes, macros, typedefs and structs in place;
 *     functions that regions call (transitively) become __device__ copies named
 *     macc_d_<name>;
 *  3. per region with an nvidia version: the argument struct (same layout as
 *     the host file's), a pointer struct, the kernel, and the extern "C"
 *     launch function macc_k_<func>_L<line>_nvidia(args, env) that the runtime
 *     calls with the task's stream.
 *
 * Kernel shapes:
 *  - loop: a construct-set with `parallel for` (or `distribute` / `simd` alone):
 *    a grid-stride loop over the collapsed iteration space, one iteration per
 *    thread, reductions through a block tree and a combine kernel; without
 *    `teams` the loop runs as one team (one block), as OpenMP says;
 *  - team: `teams distribute` whose body has loop directives: blocks take the
 *    outer iterations, the body runs as a team (below);
 *  - parallel: `target parallel` with a block: one team whose threads all run
 *    the block (SPMD), worksharing loops split among them, barrier, single,
 *    master, critical and atomic as code;
 *  - generic: no loop construct-set: one team runs the block; loop directives
 *    at its top level are shared among the team's threads, parallel regions
 *    run as in the parallel shape, other statements that write memory run on
 *    thread 0 between barriers.
 */
#include <stdlib.h>
#include <string.h>

#include "macc.h"
#include "macc_rt.h"

typedef struct Cu {
    Unit *u;
    const char *path;
    Vec devfuncs;  /* char * names of the device functions: the file's (as devnodes), then other
                    * files' it calls (u->devexterns); the names not owned */
    Vec devnodes;  /* TSNode * of their definitions (same order) */
    StrSet devvars; /* names of the globals with a device copy (macc_g_<name>) */
    TSNode defid;      /* the name in a device variable's definition being written */
    int errors;
    /* the region being emitted (NULL in the prelude) */
    const Region *r;
    int mode;            /* its kernel shape (CU_LOOP, CU_TEAM_DIST, CU_GENERIC) */
    const Vec *nonlocal; /* names whose writes are not thread-local (device memory, team results) */
    const Vec *thread_arrays; /* arrays copied into each thread (firstprivate/lastprivate) */
    Vec team_shared;     /* variables of a team body in shared memory (atomics update them) */
    int stepped;         /* the loop in steps of one block, a barrier after each (simd safelen) */
    long chunk;          /* schedule(static, C), C > 1: each thread runs C consecutive iterations */
} Cu;

enum { CU_LOOP, CU_TEAM_DIST, CU_GENERIC, CU_PARALLEL };

/* ---- small helpers -------------------------------------------------------- */

static int cu__index_of(const Vec *v, const char *s)
{
    for (int i = 0; i < v->len; i++)
        if (!strcmp(v->items[i], s))
            return i;
    return -1;
}

static int cu__in(const Vec *v, const char *s)
{
    return cu__index_of(v, s) >= 0;
}

static void cu__blank(Cu *c, Buf *out, size_t b, size_t e)
{
    for (size_t i = b; i < e; i++)
        if (c->u->src->text[i] == '\n')
            buf_puts(out, "\n");
}

static const char *const cu__omp_api[] = {"omp_is_initial_device", "omp_get_team_num", "omp_get_num_teams",
                                         "omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads",
                                         "omp_in_parallel", "omp_get_level", "omp_get_device_num",
                                         "omp_get_num_devices", "omp_get_initial_device",
                                         "omp_get_default_device", "omp_get_active_level",
                                         "omp_get_thread_limit", "omp_get_team_size",
                                         "omp_get_ancestor_thread_num", "omp_in_final", "omp_get_dynamic",
                                         "omp_get_cancellation", "omp_get_max_active_levels",
                                         "omp_get_supported_active_levels", "omp_get_num_procs",
                                         "omp_get_wtime", "omp_get_wtick", "acc_on_device", "omp_alloc",
                                         "omp_calloc", "omp_aligned_alloc", "omp_aligned_calloc", "omp_realloc",
                                         "omp_free",
                                         /* the C library where CUDA has no device version of its own */
                                         "abort", "__builtin_isinf_sign", "strlen", "strcmp", "strncmp", "strcpy",
                                         "strncpy", "memcmp", "memmove", NULL};

/* ---- copying text with token edits ---------------------------------------- */

typedef struct CopyCtx {
    const Vec *writeback; /* names replaced by (*macc_p_<name>) */
    const Vec *staged;    /* arrays read as A[var] from shared memory */
    const char *var;      /* the staged loop's variable */
    const char *outer;    /* the kernel loop's variable: A[outer] read once into a register */
    int packed;           /* staged arrays share one vector tile: A[var] is macc_sv_.<x|y|z|w> */
    int spmd;             /* every thread of a parallel region runs the text: master, critical,
                           * atomic and flush become code, other omp constructs are errors */
} CopyCtx;

typedef struct TokEdit {
    size_t start, end;
    char *text;
} TokEdit;

/* The type node of the file-scope typedef named name[0..len), or a null node. */
static TSNode cu__typedef_of(const Cu *c, const char *name, size_t len)
{
    const char *t = c->u->src->text;
    for (int i = 0; i < c->u->ntop; i++) {
        TSNode n = c->u->top[i];
        if (!node_is(n, "type_definition"))
            continue;
        TSNode d = node_field(n, "declarator");
        if (node_is(d, "type_identifier") && ts_node_end_byte(d) - ts_node_start_byte(d) == len &&
            !strncmp(t + ts_node_start_byte(d), name, len))
            return node_field(n, "type");
    }
    return (TSNode){0};
}

/* An edit replacing bytes [start, end) with text (owned by the edit). */
static void cu__edit(Vec *edits, size_t start, size_t end, char *text)
{
    TokEdit *e = xcalloc(1, sizeof *e);
    e->start = start;
    e->end = end;
    e->text = text;
    vec_push(edits, e);
}

/* An edit replacing node n with b's text, padded with the newlines n spanned
 * so that the lines after it keep their numbers (b's data passes to the edit). */
static void cu__replace_node(Cu *c, Vec *edits, TSNode n, Buf *b)
{
    cu__blank(c, b, ts_node_start_byte(n), ts_node_end_byte(n));
    cu__edit(edits, ts_node_start_byte(n), ts_node_end_byte(n), b->data ? b->data : xstrdup(""));
}

static int cu__is_our_pragma(const Cu *c, TSNode n)
{
    if (!node_is(n, "preproc_call"))
        return 0;
    TSNode arg = node_field(n, "argument");
    TSNode dir = node_field(n, "directive");
    const char *t = c->u->src->text;
    if (ts_node_is_null(dir) || ts_node_end_byte(dir) - ts_node_start_byte(dir) != 7 ||
        strncmp(t + ts_node_start_byte(dir), "#pragma", 7))
        return 0;
    if (ts_node_is_null(arg))
        return 0;
    const char *a = t + ts_node_start_byte(arg);
    while (*a == ' ' || *a == '\t')
        a++;
    return !strncmp(a, "omp", 3) || !strncmp(a, "acc", 3);
}

static const Capture *cu__cap(const Region *r, const char *name);

/* The construct traits of the code being emitted (declare variant): the
 * region's GPU construct set, or `target` alone in device functions. */
static unsigned cu__variant_context(const Cu *c)
{
    const RVersion *gv = c->r ? region_gpu_version(c->r) : NULL;
    return c->r ? variant_context(gv ? gv->cs : 0) : VT_TARGET;
}

/* Does identifier n name a global's device copy here (not a variable of the
 * region's kernel, a local or a parameter)? */
static int cu__devvar_ref(const Cu *c, TSNode n)
{
    size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    if (!strset_has(&c->devvars, c->u->src->text + b, e - b))
        return 0;
    TSNode p = ts_node_parent(n);
    if ((node_is(p, "call_expression") && ts_node_eq(node_field(p, "function"), n)) ||
        ((node_is(p, "init_declarator") || node_is(p, "array_declarator") || node_is(p, "pointer_declarator") ||
          node_is(p, "parenthesized_declarator")) &&
         ts_node_eq(node_field(p, "declarator"), n)))
        return 0;
    if (c->r) {
        char *name = xstrndup(c->u->src->text + b, e - b);
        const Capture *k = cu__cap(c->r, name);
        free(name);
        if (k)
            return 0;
    }
    return an_global_var_ref(c->u, n);
}

/* What an omp pragma that is not one of our directives (the translator keeps
 * no Pragma for it) means to the threads of a parallel region. */
enum { CU_SY_NONE, CU_SY_BARRIER, CU_SY_SINGLE, CU_SY_MASTER, CU_SY_LOCK, CU_SY_FLUSH, CU_SY_OTHER };

static int cu__sync_kind(const Cu *c, TSNode n, int *nowait)
{
    const char *t = c->u->src->text;
    TSNode arg = node_field(n, "argument");
    *nowait = 0;
    if (ts_node_is_null(arg))
        return CU_SY_NONE;
    size_t i = ts_node_start_byte(arg), e = ts_node_end_byte(arg);
    char w[4][24];
    int nw = 0;
    while (i < e && nw < 4) {
        while (i < e && !(t[i] == '_' || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z')))
            i++;
        size_t b = i;
        while (i < e && (t[i] == '_' || (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
                         (t[i] >= '0' && t[i] <= '9')))
            i++;
        if (i > b) {
            snprintf(w[nw], sizeof w[nw], "%.*s", (int)(i - b), t + b);
            if (nw >= 2 && !strcmp(w[nw], "nowait"))
                *nowait = 1;
            if (nw >= 2 && (!strcmp(w[nw], "copyprivate") || !strcmp(w[nw], "filter")))
                return CU_SY_OTHER;
            nw += nw < 2;
        }
    }
    if (nw < 2 || strcmp(w[0], "omp"))
        return CU_SY_NONE;
    if (!strcmp(w[1], "barrier"))
        return CU_SY_BARRIER;
    if (!strcmp(w[1], "single"))
        return CU_SY_SINGLE;
    if (!strcmp(w[1], "master") || !strcmp(w[1], "masked"))
        return CU_SY_MASTER;
    if (!strcmp(w[1], "critical") || !strcmp(w[1], "atomic"))
        return CU_SY_LOCK;
    if (!strcmp(w[1], "flush"))
        return CU_SY_FLUSH;
    if (!strcmp(w[1], "taskyield"))
        return CU_SY_NONE;
    if (!strcmp(w[1], "loop")) /* not ours, so loop bind(thread): each thread runs it whole */
        return CU_SY_NONE;
    return CU_SY_OTHER;
}

static Pragma *cu__pragma_of(const Unit *u, TSNode n);

static size_t cu__sync_edit(Cu *c, TSNode pragma, const CopyCtx *ctx, Vec *edits);

/* A directive of the user's that the GPU version leaves out where one thread
 * runs the code (barrier, single, master, task run undeferred, sections need
 * nothing): an error for those whose meaning would be lost (ordered: the
 * iterations in order; cancel; a task that privatises data: its writes would
 * reach the shared variables). */
static void cu__check_dropped(Cu *c, TSNode n)
{
    const char *t = c->u->src->text;
    if (!cu__pragma_of(c->u, n)) {
        const char *a = t + ts_node_start_byte(n);
        const char *w = strstr(a, "omp");
        size_t len = ts_node_end_byte(n) - ts_node_start_byte(n);
        if (w && (size_t)(w - a) < len) {
            w += 3;
            while (*w == ' ' || *w == '\t')
                w++;
            /* a task that privatises (private, firstprivate, default(...)): run
             * undeferred in place, its writes would reach the shared variables */
            size_t wl = strcspn(w, " \t\n(");
            int task_priv = 0;
            if (wl == 4 && !strncmp(w, "task", 4)) {
                char *pt = xstrndup(a, len);
                task_priv = strstr(pt, "private") || strstr(pt, "default");
                free(pt);
            }
            if (!strncmp(w, "ordered", 7) || !strncmp(w, "cancel", 6) || task_priv) {
                diag_error(c->u->diag, ts_node_start_byte(n), "'#pragma omp %.*s'%s is not supported in the GPU version",
                           (int)wl, w, task_priv ? " with private or firstprivate data" : "");
                c->errors++;
            }
        }
    }
}

/* Is cast expression n `(void *)0` (C's NULL after preprocessing)? */
static int cu__is_c_null(const Cu *c, TSNode n)
{
    TSNode ty = node_field(n, "type"), v = node_field(n, "value");
    if (!node_is(v, "number_literal"))
        return 0;
    const char *t = c->u->src->text;
    size_t vb = ts_node_start_byte(v), ve = ts_node_end_byte(v);
    if (ve - vb != 1 || t[vb] != '0')
        return 0;
    char buf[32];
    size_t k = 0;
    for (size_t i = ts_node_start_byte(ty); i < ts_node_end_byte(ty) && k + 1 < sizeof buf; i++)
        if (t[i] != ' ' && t[i] != '\t')
            buf[k++] = t[i];
    buf[k] = 0;
    return !strcmp(buf, "void*");
}


/* Does declarator text hold an array bound with a name in it (a variably
 * modified type, `double (*x)[n]`, once the outermost bound of a parameter
 * is gone)? C++ has no such types in a struct or a parameter: the device
 * file passes them as void * and declares the typed pointer inside, where a
 * local of variably modified type is allowed (GNU C++). Bounds that are
 * constants (enumerators) take the same path, which costs nothing. */
static int cu__vm_text(const char *s)
{
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth -= depth > 0;
        else if (depth && (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) &&
                 (p == s || !ident_char(p[-1])))
            return 1;
    }
    return 0;
}

/* Is a captured pointer or array of a variably modified type (above)? */
static int cu__cap_vm(const Capture *k)
{
    const Decl *dd = k->decl;
    if (k->kind == CAP_PTR)
        return cu__vm_text(dd->decl_text);
    if (k->kind == CAP_ARRAY)
        return cu__vm_text(dd->decl_text + dd->arr_off + dd->arr_len);
    return 0;
}

/* The run-time bounds of a variably modified declarator (cu__vm_text), as
 * macc_vm<T, R> takes them: `(*restrict a)[n][m]` gives n, m; `a[n][m]` (an
 * array parameter, or a captured array passed as a pointer to its rows)
 * gives m. Returns R, or 0 when the declarator has another shape (the text
 * is then kept as it is). dims receives owned strings. */
static int cu__vm_dims(const char *text, int id_off, int id_len, Vec *dims)
{
    const char *p = text;
    int paren = 0, star = 0;
    while (p < text + id_off) {
        if (*p == '(')
            paren++, p++;
        else if (*p == '*')
            star++, p++;
        else if (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        else if (!strncmp(p, "restrict", 8) || !strncmp(p, "__restrict__", 12) || !strncmp(p, "__restrict", 10) ||
                 !strncmp(p, "const", 5) || !strncmp(p, "volatile", 8))
            while (ident_char(*p))
                p++;
        else
            return 0;
    }
    if (!((paren == 1 && star == 1) || (paren == 0 && star == 0)))
        return 0;
    p = text + id_off + id_len;
    while (*p == ' ' || *p == '\t')
        p++;
    if (paren) {
        if (*p != ')')
            return 0;
        p++;
    }
    int first = 1;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (*p != '[')
            goto bad;
        const char *b = ++p;
        int depth = 1;
        while (*p && depth) {
            depth += *p == '[';
            depth -= *p == ']';
            p++;
        }
        if (depth)
            goto bad;
        if (!(paren == 0 && first)) /* an array's own (outermost) bound: it decays */
            vec_push(dims, xstrndup(b, (size_t)(p - 1 - b)));
        first = 0;
    }
    if (dims->len)
        return dims->len;
bad:
    for (int i = 0; i < dims->len; i++)
        free(dims->items[i]);
    dims->len = 0;
    return 0;
}

/* `macc_vm<T, R> name = {(T *)(src), {bounds}}` for a variably modified
 * pointer or array of element type spec; 0 when it has another shape. */
static int cu__vm_decl(Buf *b, const char *spec, const char *text, int id_off, int id_len, const char *name,
                       const char *src)
{
    Vec dims = {0};
    int r = cu__vm_dims(text, id_off, id_len, &dims);
    if (r) {
        buf_printf(b, "macc_vm<%s, %d> %s = {(%s *)(%s), {", spec, r, name, spec, src);
        for (int i = 0; i < dims.len; i++) {
            buf_printf(b, "%s(long long)(%s)", i ? ", " : "", (char *)dims.items[i]);
            free(dims.items[i]);
        }
        buf_puts(b, "}}");
    }
    vec_free(&dims);
    return r;
}

/* A device function's parameter of variably modified type (`double
 * a[n][m]`, `double (*a)[m]`), which C++ does not allow: the parameter
 * becomes `void *macc_vmp_a` and the body starts by declaring a as
 * macc_vm<double, 1> over it with bound m. Returns 1 when it made the edits. */
static int cu__vm_param(Cu *c, TSNode n, Vec *edits)
{
    TSNode d = node_field(n, "declarator");
    TSNode def = ts_node_parent(n);
    while (!ts_node_is_null(def) && !node_is(def, "function_definition") && !node_is(def, "compound_statement"))
        def = ts_node_parent(def);
    if (ts_node_is_null(d) || !node_is(def, "function_definition"))
        return 0;
    TSNode body = node_field(def, "body");
    TSNode id = d;
    while (!ts_node_is_null(id) && !node_is(id, "identifier"))
        id = node_is(id, "parenthesized_declarator") ? ts_node_named_child(id, 0) : node_field(id, "declarator");
    if (ts_node_is_null(id) || ts_node_is_null(body))
        return 0;
    char *text = node_text(c->u, d);
    int id_off = (int)(ts_node_start_byte(id) - ts_node_start_byte(d));
    int id_len = (int)(ts_node_end_byte(id) - ts_node_start_byte(id));
    Vec dims = {0};
    cu__vm_dims(text, id_off, id_len, &dims); /* the bounds that stay (an array's own decays) */
    int vm = 0;
    for (int i = 0; i < dims.len; i++) {
        char *bound = xsprintf("[%s]", (char *)dims.items[i]);
        vm |= cu__vm_text(bound); /* only bounds with names in them need it */
        free(bound);
        free(dims.items[i]);
    }
    vec_free(&dims);
    if (!vm) {
        free(text);
        return 0;
    }
    char *name = node_text(c->u, id);
    char *spec = xstrndup(c->u->src->text + ts_node_start_byte(n), ts_node_start_byte(d) - ts_node_start_byte(n));
    cu__edit(edits, ts_node_start_byte(n), ts_node_end_byte(n), xsprintf("void *macc_vmp_%s", name));
    Buf decl = {0};
    char *src = xsprintf("macc_vmp_%s", name);
    buf_puts(&decl, " ");
    cu__vm_decl(&decl, spec, text, id_off, id_len, name, src);
    buf_puts(&decl, ";");
    cu__edit(edits, ts_node_start_byte(body) + 1, ts_node_start_byte(body) + 1, decl.data);
    free(src);
    free(spec);
    free(name);
    free(text);
    return 1;
}

static void cu__copy(Cu *c, TSNode n, Buf *out, const CopyCtx *ctx);

/* ---- designated initialisers in C's order ------------------------------------ */

/* The struct/union specifier with a body that type node `ty` names (struct
 * tag, or a typedef name), among the file-scope declarations; null if none. */
static TSNode cu__struct_body_of(const Cu *c, TSNode ty, int depth)
{
    const char *t = c->u->src->text;
    if (depth > 8 || ts_node_is_null(ty))
        return (TSNode){0};
    if (node_is(ty, "type_identifier"))
        return cu__struct_body_of(c, cu__typedef_of(c, t + ts_node_start_byte(ty),
                                                    ts_node_end_byte(ty) - ts_node_start_byte(ty)),
                                  depth + 1);
    if (!node_is(ty, "struct_specifier") && !node_is(ty, "union_specifier"))
        return (TSNode){0};
    if (!ts_node_is_null(node_field(ty, "body")))
        return ty;
    TSNode tag = node_field(ty, "name");
    if (ts_node_is_null(tag))
        return (TSNode){0};
    size_t b = ts_node_start_byte(tag), len = ts_node_end_byte(tag) - b;
    for (int i = 0; i < c->u->ntop; i++) {
        TSNode spec = node_tag_body(c->u->top[i]);
        TSNode nm = ts_node_is_null(spec) ? spec : node_field(spec, "name");
        if (!ts_node_is_null(nm) && !strcmp(node_type(spec), node_type(ty)) &&
            ts_node_end_byte(nm) - ts_node_start_byte(nm) == len && !strncmp(t + ts_node_start_byte(nm), t + b, len))
            return spec;
    }
    return (TSNode){0};
}

/* An initializer list of designated fields (`{ .y = 1, .x = 2 }`) out of the
 * struct's order, which C++ rejects: the same items in the order of the
 * fields. Returns 1 when it made the edit. */
static int cu__designated(Cu *c, TSNode n, const CopyCtx *ctx, Vec *edits)
{
    TSNode p = ts_node_parent(n), ty = {0};
    if (node_is(p, "init_declarator") && node_is(ts_node_parent(p), "declaration"))
        ty = node_field(ts_node_parent(p), "type");
    else if (node_is(p, "compound_literal_expression"))
        ty = node_field(node_field(p, "type"), "type");
    TSNode spec = cu__struct_body_of(c, ty, 0);
    if (ts_node_is_null(spec))
        return 0;
    TSNode body = node_field(spec, "body");
    const char *t = c->u->src->text;
    uint32_t np = ts_node_named_child_count(n);
    int *rank = xcalloc(np + 1, sizeof *rank);
    int sorted = 1, last = -1;
    for (uint32_t i = 0; i < np; i++) {
        TSNode pair = ts_node_named_child(n, i);
        TSNode des = node_field(pair, "designator");
        if (!node_is(pair, "initializer_pair") || ts_node_named_child_count(pair) != 2 ||
            !node_is(des, "field_designator")) {
            free(rank);
            return 0;
        }
        TSNode f = ts_node_named_child(des, 0);
        size_t fb = ts_node_start_byte(f), fl = ts_node_end_byte(f) - fb;
        int idx = -1, k = 0;
        for (uint32_t j = 0; j < ts_node_named_child_count(body) && idx < 0; j++) {
            TSNode fd = ts_node_named_child(body, j);
            if (!node_is(fd, "field_declaration"))
                continue;
            for (uint32_t m = 0; m < ts_node_named_child_count(fd); m++) {
                TSNode x = ts_node_named_child(fd, m);
                if (ts_node_eq(x, node_field(fd, "type")))
                    continue;
                while (!ts_node_is_null(x) && !node_is(x, "field_identifier"))
                    x = node_is(x, "parenthesized_declarator") ? ts_node_named_child(x, 0) : node_field(x, "declarator");
                if (ts_node_is_null(x))
                    continue;
                if (ts_node_end_byte(x) - ts_node_start_byte(x) == fl && !strncmp(t + ts_node_start_byte(x), t + fb, fl))
                    idx = k;
                k++;
            }
        }
        if (idx < 0) {
            free(rank);
            return 0;
        }
        rank[i] = idx;
        sorted = sorted && idx > last;
        last = idx;
    }
    if (sorted) {
        free(rank);
        return 0;
    }
    Buf b = {0};
    buf_puts(&b, "{");
    for (int done = 0, want = 0; done < (int)np; want++) {
        for (uint32_t i = 0; i < np; i++) {
            if (rank[i] != want)
                continue;
            buf_puts(&b, done ? ", " : " ");
            cu__copy(c, ts_node_named_child(n, i), &b, ctx);
            done++;
        }
    }
    buf_puts(&b, " }");
    cu__replace_node(c, edits, n, &b);
    free(rank);
    return 1;
}

/* A local variable-length array (`double v[m]`, `double v[n][m]`), which
 * nvcc's C++ accepts only now and then: its storage from alloca, the name a
 * pointer (one bound) or a macc_vm over the rows (several). Returns 1 when it
 * made the edit. */
static int cu__local_vla(Cu *c, TSNode n, Vec *edits)
{
    if (ts_node_named_child_count(n) != 2 || !node_is(ts_node_parent(n), "compound_statement"))
        return 0;
    TSNode d = ts_node_named_child(n, 1);
    if (!node_is(d, "array_declarator"))
        return 0;
    TSNode id = d;
    while (node_is(id, "array_declarator"))
        id = node_field(id, "declarator");
    if (!node_is(id, "identifier"))
        return 0;
    char *text = node_text(c->u, d);
    int id_off = (int)(ts_node_start_byte(id) - ts_node_start_byte(d));
    int id_len = (int)(ts_node_end_byte(id) - ts_node_start_byte(id));
    if (id_off != 0 || !cu__vm_text(text + id_len)) {
        free(text);
        return 0;
    }
    /* the bounds, outermost first */
    Vec dims = {0};
    for (const char *p = text + id_len; *p;) {
        if (*p != '[') {
            p++;
            continue;
        }
        const char *b = ++p;
        int depth = 1;
        while (*p && depth) {
            depth += *p == '[';
            depth -= *p == ']';
            p++;
        }
        vec_push(&dims, xstrndup(b, (size_t)(p - 1 - b)));
    }
    char *spec = xstrndup(c->u->src->text + ts_node_start_byte(n), ts_node_start_byte(d) - ts_node_start_byte(n));
    char *name = xstrndup(text, (size_t)id_len);
    Buf b = {0}, size = {0};
    buf_printf(&size, "sizeof(%s)", spec);
    for (int i = 0; i < dims.len; i++)
        buf_printf(&size, " * (size_t)(%s)", (char *)dims.items[i]);
    if (dims.len == 1) {
        buf_printf(&b, "%s *%s = (%s *)alloca(%s);", spec, name, spec, size.data);
    } else {
        buf_printf(&b, "macc_vm<%s, %d> %s = {(%s *)alloca(%s), {", spec, dims.len - 1, name, spec, size.data);
        for (int i = 1; i < dims.len; i++)
            buf_printf(&b, "%s(long long)(%s)", i > 1 ? ", " : "", (char *)dims.items[i]);
        buf_puts(&b, "}};");
    }
    for (int i = 0; i < dims.len; i++)
        free(dims.items[i]);
    vec_free(&dims);
    buf_free(&size);
    cu__replace_node(c, edits, n, &b);
    free(spec);
    free(name);
    free(text);
    return 1;
}

/* <tgmath.h>'s calls, `__builtin_tgmath(sqrtf, sqrt, sqrtl, csqrtf, csqrt,
 * csqrtl, x)` once GCC has preprocessed them: on the device the double
 * function's name, whose C++ overloads pick the type, with the arguments
 * after the function names. Returns 1 when it made the edit. */
static int cu__tgmath(Cu *c, TSNode n, const CopyCtx *ctx, Vec *edits)
{
    TSNode f = node_field(n, "function"), args = node_field(n, "arguments");
    const char *t = c->u->src->text;
    if (!node_is(f, "identifier") || ts_node_end_byte(f) - ts_node_start_byte(f) != 16 ||
        strncmp(t + ts_node_start_byte(f), "__builtin_tgmath", 16) || ts_node_is_null(args))
        return 0;
    uint32_t na = ts_node_named_child_count(args);
    uint32_t k = 0;
    char *dbl = NULL;
    while (k + 2 < na) { /* groups of three: f, f without its 'f', that with 'l' */
        char *a = node_text(c->u, ts_node_named_child(args, k));
        char *b = node_text(c->u, ts_node_named_child(args, k + 1));
        char *l = node_text(c->u, ts_node_named_child(args, k + 2));
        size_t al = strlen(a);
        int group = al > 1 && a[al - 1] == 'f' && strlen(b) == al - 1 && !strncmp(a, b, al - 1) &&
                    strlen(l) == al && !strncmp(l, b, al - 1) && l[al - 1] == 'l';
        free(a);
        free(l);
        if (!group) {
            free(b);
            break;
        }
        if (!dbl)
            dbl = b;
        else
            free(b);
        k += 3;
    }
    if (!dbl || k >= na) {
        free(dbl);
        return 0;
    }
    Buf b = {0};
    buf_printf(&b, "%s(", dbl);
    for (uint32_t i = k; i < na; i++) {
        if (i > k)
            buf_puts(&b, ", ");
        cu__copy(c, ts_node_named_child(args, i), &b, ctx);
    }
    buf_puts(&b, ")");
    cu__replace_node(c, edits, n, &b);
    free(dbl);
    return 1;
}

/* ---- C's implicit conversions in C++ ------------------------------------------ */

/* C converts implicitly where C++ does not: void * to T *, T * to a pointer
 * that drops const or volatile, int to an enum, an enum's arithmetic back to
 * the enum. Where copied code stores a value into a pointer or an enum (an
 * initialised declaration, `x = e` with x a declared variable, an argument
 * of a device function's pointer or enum parameter, a device function's
 * return) the value is wrapped in macc_c(e) (macc_device.h): a proxy that
 * converts, as an explicit cast, to whatever type receives it. The C compiler
 * has accepted the same conversion on the host. */

/* Does the specifier text or node name an enum (enum E, or a typedef of one)? */
static int cu__type_is_enum(const Cu *c, TSNode type, int depth)
{
    if (ts_node_is_null(type) || depth > 8)
        return 0;
    if (node_is(type, "enum_specifier"))
        return 1;
    if (!node_is(type, "type_identifier"))
        return 0;
    return cu__type_is_enum(c, cu__typedef_of(c, c->u->src->text + ts_node_start_byte(type),
                                              ts_node_end_byte(type) - ts_node_start_byte(type)),
                            depth + 1);
}

static int cu__spec_is_enum(const Cu *c, const char *spec)
{
    char *u = spec_unqualified(spec);
    const char *p = u;
    while (*p == ' ')
        p++;
    int r = !strncmp(p, "enum", 4) && !ident_char(p[4]);
    if (!r && *p) /* a typedef name */
        r = cu__type_is_enum(c, cu__typedef_of(c, p, strcspn(p, " *")), 0);
    free(u);
    return r;
}

/* Is every struct field of this name that the file declares of an enum
 * type (so `x.f = e` stores into an enum)? */
static int cu__field_is_enum(const Cu *c, const char *name, size_t len)
{
    const char *t = c->u->src->text;
    int en = 0, other = 0;
    for (int i = 0; i < c->u->ntop; i++) {
        TSNode spec = node_tag_body(c->u->top[i]);
        if (ts_node_is_null(spec) || node_is(spec, "enum_specifier"))
            continue;
        TSNode body = node_field(spec, "body");
        for (uint32_t j = 0; j < ts_node_named_child_count(body); j++) {
            TSNode fd = ts_node_named_child(body, j);
            if (!node_is(fd, "field_declaration"))
                continue;
            for (uint32_t m = 0; m < ts_node_named_child_count(fd); m++) {
                TSNode x = ts_node_named_child(fd, m);
                if (!node_is(x, "field_identifier") || ts_node_end_byte(x) - ts_node_start_byte(x) != len ||
                    strncmp(t + ts_node_start_byte(x), name, len))
                    continue;
                if (cu__type_is_enum(c, node_field(fd, "type"), 0))
                    en = 1;
                else
                    other = 1;
            }
        }
    }
    return en && !other;
}

/* Does declarator d (of a declaration or parameter) declare an object
 * pointer (an array parameter included)? */
static int cu__declarator_is_pointer(TSNode d, int param)
{
    while (node_is(d, "parenthesized_declarator") || node_is(d, "attributed_declarator"))
        d = ts_node_named_child(d, 0);
    if (node_is(d, "pointer_declarator") || node_is(d, "abstract_pointer_declarator"))
        return 1;
    return param && (node_is(d, "array_declarator") || node_is(d, "abstract_array_declarator"));
}

/* The definition of device function `name`, or a null node. */
static TSNode cu__devfunc_node(const Cu *c, const char *name, size_t len)
{
    for (int i = 0; i < c->devnodes.len; i++) { /* the file's own: the first devnodes.len */
        const char *f = c->devfuncs.items[i];
        if (strlen(f) == len && !strncmp(f, name, len))
            return *(TSNode *)c->devnodes.items[i];
    }
    return (TSNode){0};
}

/* The function_declarator of a function definition (under pointers). */
static TSNode cu__func_declarator(TSNode def)
{
    TSNode d = node_field(def, "declarator");
    while (!ts_node_is_null(d) && !node_is(d, "function_declarator"))
        d = node_is(d, "parenthesized_declarator") || node_is(d, "attributed_declarator") ? ts_node_named_child(d, 0)
                                                                                           : node_field(d, "declarator");
    return d;
}

/* Is expression e a call of an allocation function (its value a void *)? */
static int cu__is_alloc_call(const Cu *c, TSNode e)
{
    while (node_is(e, "parenthesized_expression") && ts_node_named_child_count(e) == 1)
        e = ts_node_named_child(e, 0);
    if (!node_is(e, "call_expression"))
        return 0;
    TSNode f = node_field(e, "function");
    if (!node_is(f, "identifier"))
        return 0;
    static const char *const alloc[] = {"malloc", "calloc", "realloc", "aligned_alloc", "memcpy", "memset",
                                        "memmove", NULL};
    const char *t = c->u->src->text + ts_node_start_byte(f);
    size_t len = ts_node_end_byte(f) - ts_node_start_byte(f);
    for (int i = 0; alloc[i]; i++)
        if (strlen(alloc[i]) == len && !strncmp(alloc[i], t, len))
            return 1;
    return 0;
}

/* What lvalue x stores into: LV_ENUM (a variable declared as an enum, or a
 * struct field whose declarations all are), LV_POINTER (a variable declared
 * as an object pointer), else 0. */
enum { LV_ENUM = 1, LV_POINTER };
static int cu__lvalue_kind(const Cu *c, TSNode x)
{
    if (node_is(x, "field_expression")) {
        TSNode f = node_field(x, "field");
        return !ts_node_is_null(f) && cu__field_is_enum(c, c->u->src->text + ts_node_start_byte(f),
                                                         ts_node_end_byte(f) - ts_node_start_byte(f))
                   ? LV_ENUM
                   : 0;
    }
    if (!node_is(x, "identifier"))
        return 0;
    char *name = node_text(c->u, x);
    Decl *d = analyze_lookup(c->u, x, name, NULL);
    free(name);
    int r = !d || d->is_function || d->is_array ? 0 : d->is_pointer ? LV_POINTER : cu__spec_is_enum(c, d->spec) ? LV_ENUM : 0;
    decl_delete(d);
    return r;
}

/* ++, --, += and -= on an enum, which C++ does not define: macc_enum_*
 * (macc_device.h) do C's arithmetic and store the enum. Returns 1 when it
 * made the edit. */
static int cu__enum_update(Cu *c, TSNode n, const CopyCtx *ctx, Vec *edits)
{
    TSNode x, e = {0};
    const char *fn;
    if (node_is(n, "update_expression")) {
        x = node_field(n, "argument");
        TSNode op = node_field(n, "operator");
        int inc = !ts_node_is_null(op) && c->u->src->text[ts_node_start_byte(op)] == '+';
        int pre = !ts_node_is_null(op) && ts_node_start_byte(op) < ts_node_start_byte(x);
        fn = inc ? (pre ? "macc_enum_pre_inc" : "macc_enum_post_inc") : (pre ? "macc_enum_pre_dec" : "macc_enum_post_dec");
    } else if (node_is(n, "assignment_expression")) {
        x = node_field(n, "left");
        e = node_field(n, "right");
        TSNode op = node_field(n, "operator");
        size_t ob = ts_node_start_byte(op), ol = ts_node_end_byte(op) - ob;
        if (ol != 2 || c->u->src->text[ob + 1] != '=' || (c->u->src->text[ob] != '+' && c->u->src->text[ob] != '-'))
            return 0;
        fn = c->u->src->text[ob] == '+' ? "macc_enum_add" : "macc_enum_sub";
    } else {
        return 0;
    }
    TSNode lv = x;
    while (node_is(lv, "parenthesized_expression") && ts_node_named_child_count(lv) == 1)
        lv = ts_node_named_child(lv, 0);
    if (ts_node_is_null(x) || cu__lvalue_kind(c, lv) != LV_ENUM)
        return 0;
    Buf b = {0};
    buf_printf(&b, "%s(", fn);
    cu__copy(c, x, &b, ctx);
    if (!ts_node_is_null(e)) {
        buf_puts(&b, ", ");
        cu__copy(c, e, &b, ctx);
    }
    buf_puts(&b, ")");
    cu__replace_node(c, edits, n, &b);
    return 1;
}

/* C11's _Generic(e, T1: e1, T2: e2, default: e3): a lambda called in place
 * whose `if constexpr` chain compares the decayed type of e with each T (the
 * branches not taken take no part in its return type). Returns 1 when it
 * made the edit. */
static int cu__generic(Cu *c, TSNode n, const CopyCtx *ctx, Vec *edits)
{
    uint32_t nc = ts_node_named_child_count(n);
    if (nc < 3)
        return 0;
    Buf b = {0};
    buf_puts(&b, "([&]() { typedef macc_cxx_typename std::decay<decltype(");
    cu__copy(c, ts_node_named_child(n, 0), &b, ctx);
    buf_puts(&b, ")>::type macc_gt_; ");
    TSNode dflt = {0};
    int any = 0;
    for (uint32_t i = 1; i + 1 < nc; i += 2) {
        TSNode ty = ts_node_named_child(n, i), e = ts_node_named_child(n, i + 1);
        char *tt = node_text(c->u, ty);
        int is_default = !strcmp(tt, "default");
        free(tt);
        if (is_default) {
            dflt = e;
            continue;
        }
        buf_puts(&b, any ? "else if macc_cxx_constexpr (std::is_same<macc_gt_, "
                         : "if macc_cxx_constexpr (std::is_same<macc_gt_, ");
        cu__copy(c, ty, &b, ctx);
        buf_puts(&b, ">::value) return (");
        cu__copy(c, e, &b, ctx);
        buf_puts(&b, "); ");
        any = 1;
    }
    if (!ts_node_is_null(dflt)) {
        buf_puts(&b, any ? "else return (" : "return (");
        cu__copy(c, dflt, &b, ctx);
        buf_puts(&b, "); ");
    }
    buf_puts(&b, "}())");
    cu__replace_node(c, edits, n, &b);
    return 1;
}

/* stdio in device code: fprintf(stderr|stdout, ...) is printf(...) (the
 * device has one output stream), puts(s) printf("%s\n", s), putchar(c)
 * printf("%c", c), fflush(stderr|stdout) nothing: is call n one of these
 * forms (*which: 1 to 4)? cu__stdio makes the edit (1 when it did). */
static int cu__stdio_form(const Cu *c, TSNode n, int *which)
{
    TSNode f = node_field(n, "function"), args = node_field(n, "arguments");
    if (!node_is(f, "identifier") || ts_node_is_null(args))
        return 0;
    const char *t = c->u->src->text + ts_node_start_byte(f);
    size_t len = ts_node_end_byte(f) - ts_node_start_byte(f);
    uint32_t na = ts_node_named_child_count(args);
    int stream = 0;
    if (na >= 1) {
        TSNode a0 = ts_node_named_child(args, 0);
        size_t al = ts_node_end_byte(a0) - ts_node_start_byte(a0);
        const char *as = c->u->src->text + ts_node_start_byte(a0);
        stream = node_is(a0, "identifier") && ((al == 6 && !strncmp(as, "stderr", 6)) || (al == 6 && !strncmp(as, "stdout", 6)));
    }
    if (len == 7 && !strncmp(t, "fprintf", 7) && na >= 2 && stream)
        *which = 1;
    else if (len == 4 && !strncmp(t, "puts", 4) && na == 1)
        *which = 2;
    else if (len == 7 && !strncmp(t, "putchar", 7) && na == 1)
        *which = 3;
    else if (len == 6 && !strncmp(t, "fflush", 6) && na == 1 && stream)
        *which = 4;
    else
        return 0;
    return 1;
}

static int cu__stdio(Cu *c, TSNode n, const CopyCtx *ctx, Vec *edits)
{
    int which = 0;
    if (!node_is(n, "call_expression") || !cu__stdio_form(c, n, &which))
        return 0;
    TSNode args = node_field(n, "arguments");
    uint32_t na = ts_node_named_child_count(args);
    Buf b = {0};
    if (which == 1) {
        buf_puts(&b, "printf(");
        for (uint32_t i = 1; i < na; i++) {
            if (i > 1)
                buf_puts(&b, ", ");
            cu__copy(c, ts_node_named_child(args, i), &b, ctx);
        }
        buf_puts(&b, ")");
    } else if (which == 2 || which == 3) {
        buf_puts(&b, which == 2 ? "printf(\"%s\\n\", " : "printf(\"%c\", ");
        cu__copy(c, ts_node_named_child(args, 0), &b, ctx);
        buf_puts(&b, ")");
    } else {
        buf_puts(&b, "(void)0");
    }
    cu__replace_node(c, edits, n, &b);
    return 1;
}

/* Is child k of node n a value that C converts implicitly to a pointer or
 * enum type (wrapped in macc_c)? */
static int cu__conv_child(const Cu *c, TSNode n, TSNode k)
{
    if (!ts_node_is_named(k) || node_is(k, "comment") || node_is(k, "initializer_list"))
        return 0;
    if (node_is(n, "init_declarator")) {
        if (!ts_node_eq(node_field(n, "value"), k))
            return 0;
        if (cu__declarator_is_pointer(node_field(n, "declarator"), 0))
            return 1;
        TSNode decl = ts_node_parent(n);
        return node_is(decl, "declaration") && cu__type_is_enum(c, node_field(decl, "type"), 0);
    }
    if (node_is(n, "assignment_expression")) {
        TSNode op = node_field(n, "operator");
        if (!ts_node_eq(node_field(n, "right"), k) || ts_node_end_byte(op) - ts_node_start_byte(op) != 1)
            return 0;
        if (cu__is_alloc_call(c, k))
            return 1;
        return cu__lvalue_kind(c, node_field(n, "left")) != 0;
    }
    if (node_is(n, "argument_list")) {
        TSNode call = ts_node_parent(n);
        TSNode f = node_field(call, "function");
        if (!node_is(call, "call_expression") || !node_is(f, "identifier"))
            return 0;
        TSNode def = cu__devfunc_node(c, c->u->src->text + ts_node_start_byte(f),
                                      ts_node_end_byte(f) - ts_node_start_byte(f));
        if (ts_node_is_null(def))
            return 0;
        int idx = 0;
        for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
            TSNode a = ts_node_named_child(n, i);
            if (node_is(a, "comment"))
                continue;
            if (ts_node_eq(a, k))
                break;
            idx++;
        }
        TSNode params = node_field(cu__func_declarator(def), "parameters");
        for (uint32_t i = 0; i < ts_node_named_child_count(params); i++) {
            TSNode p = ts_node_named_child(params, i);
            if (!node_is(p, "parameter_declaration"))
                continue;
            if (idx-- == 0)
                return cu__declarator_is_pointer(node_field(p, "declarator"), 1) ||
                       cu__type_is_enum(c, node_field(p, "type"), 0);
        }
        return 0;
    }
    if (node_is(n, "return_statement")) {
        TSNode def = ts_node_parent(n);
        while (!ts_node_is_null(def) && !node_is(def, "function_definition"))
            def = ts_node_parent(def);
        if (ts_node_is_null(def) || c->r)
            return 0; /* in a kernel, a return leaves the iteration */
        return cu__declarator_is_pointer(node_field(def, "declarator"), 0) ||
               cu__type_is_enum(c, node_field(def, "type"), 0);
    }
    return 0;
}



/* ---- pragmas that are not OpenMP's or OpenACC's ------------------------------ */

/* The argument text of a foreign pragma as device code gets it: its macros
 * expanded as the C compiler would (cc -E copies such pragmas as written, and
 * nvcc expands no macro in them), GCC's `unroll N` as CUDA's `unroll N`.
 * NULL: keep the text as it is. */
static char *cu__foreign_pragma(Cu *c, TSNode n)
{
    TSNode dir = node_field(n, "directive"), arg = node_field(n, "argument");
    const char *t = c->u->src->text;
    if (ts_node_is_null(dir) || ts_node_is_null(arg) || ts_node_end_byte(dir) - ts_node_start_byte(dir) != 7 ||
        strncmp(t + ts_node_start_byte(dir), "#pragma", 7))
        return NULL;
    char *a = node_text(c->u, arg);
    /* the pragma's own words (unroll; GCC unroll; nv_diag_suppress) are not expanded */
    char *p = a;
    while (*p == ' ' || *p == '\t')
        p++;
    int gcc_unroll = !strncmp(p, "GCC", 3) && (p[3] == ' ' || p[3] == '\t');
    if (gcc_unroll) {
        char *q = p + 3;
        while (*q == ' ' || *q == '\t')
            q++;
        gcc_unroll = !strncmp(q, "unroll", 6) && !ident_char(q[6]);
        if (gcc_unroll)
            p = q;
    }
    while (ident_char(*p))
        p++;
    int ids = 0;
    for (const char *q = p; *q && !ids; q++)
        ids = (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) && (q == p || !ident_char(q[-1]));
    if (ids && !c->u->macros_asked) {
        c->u->macros_asked = 1;
        char *text = c->u->macros_fn ? c->u->macros_fn(c->u->macros_cx) : NULL;
        if (text)
            c->u->macros = macros_parse(text);
        free(text);
    }
    if (!gcc_unroll && !(ids && c->u->macros)) {
        free(a);
        return NULL;
    }
    char *rest = ids && c->u->macros ? macros_expand(c->u->macros, p) : xstrdup(p);
    char *head = gcc_unroll ? xstrdup("unroll") : xstrndup(a, (size_t)(p - a));
    char *r = xsprintf("%s%s", head, rest);
    free(head);
    free(rest);
    free(a);
    return r;
}

static void cu__collect_edits(Cu *c, TSNode n, const CopyCtx *ctx, Vec *edits)
{
    const char *t = c->u->src->text;
    if (ctx && ctx->spmd && cu__is_our_pragma(c, n) && !cu__pragma_of(c->u, n)) {
        /* run by every thread: master on thread 0; critical, atomic and flush
         * as everywhere in kernels (emit_atomic.c; the statement after the
         * pragma is the body) */
        int nowait;
        const char *pre = "";
        switch (cu__sync_kind(c, n, &nowait)) {
        case CU_SY_MASTER: pre = "if (threadIdx.x == 0)"; break;
        case CU_SY_LOCK:
        case CU_SY_FLUSH:
            cu__sync_edit(c, n, ctx, edits);
            return;
        case CU_SY_NONE: break;
        default: {
            char *txt = node_text(c->u, n);
            char *nl = strchr(txt, '\n');
            if (nl)
                *nl = 0;
            diag_error(c->u->diag, ts_node_start_byte(n),
                       "'%s' is not supported here in the GPU version of a parallel region", txt);
            c->errors++;
            free(txt);
            break;
        }
        }
        TokEdit *e = xcalloc(1, sizeof *e);
        e->start = ts_node_start_byte(n);
        e->end = ts_node_end_byte(n);
        Buf b = {0};
        buf_puts(&b, pre);
        cu__blank(c, &b, e->start, e->end);
        e->text = b.data ? b.data : xstrdup("");
        vec_push(edits, e);
        return;
    }
    if (!c->r && node_is(n, "parameter_declaration") && cu__vm_param(c, n, edits))
        return;
    if (node_is(n, "initializer_list") && cu__designated(c, n, ctx, edits))
        return;
    if (node_is(n, "declaration") && cu__local_vla(c, n, edits))
        return;
    if (node_is(n, "call_expression") && cu__tgmath(c, n, ctx, edits))
        return;
    if ((node_is(n, "update_expression") || node_is(n, "assignment_expression")) && cu__enum_update(c, n, ctx, edits))
        return;
    if (node_is(n, "generic_expression") && cu__generic(c, n, ctx, edits))
        return;
    if (node_is(n, "call_expression") && cu__stdio(c, n, ctx, edits))
        return;
    if (node_is(n, "preproc_call") && !cu__is_our_pragma(c, n)) {
        char *x = cu__foreign_pragma(c, n);
        if (x) {
            TSNode arg = node_field(n, "argument");
            cu__edit(edits, ts_node_start_byte(arg), ts_node_end_byte(arg), x);
        }
        return;
    }
    if (cu__is_our_pragma(c, n)) {
        /* outside parallel regions a thread runs the code alone: barrier,
         * single, master, task (undeferred), sections need nothing; ordered
         * (a loop's iterations in order) and cancel would be wrong dropped */
        cu__check_dropped(c, n);
        TokEdit *e = xcalloc(1, sizeof *e);
        e->start = ts_node_start_byte(n);
        e->end = ts_node_end_byte(n);
        Buf b = {0};
        cu__blank(c, &b, e->start, e->end);
        e->text = b.data ? b.data : xstrdup("");
        vec_push(edits, e);
        return;
    }
    if (node_is(n, "cast_expression") && cu__is_c_null(c, n)) {
        /* C's NULL, ((void *)0) once preprocessed: C++ converts no void * to
         * another pointer type, a literal 0 it does */
        TokEdit *x = xcalloc(1, sizeof *x);
        x->start = ts_node_start_byte(n);
        x->end = ts_node_end_byte(n);
        x->text = xstrdup("0");
        vec_push(edits, x);
        return;
    }
    if (ctx && ctx->staged && node_is(n, "subscript_expression")) {
        TSNode a = node_field(n, "argument"), ix = node_field(n, "index");
        if (node_is(a, "identifier") && node_is(ix, "identifier")) {
            char *an = node_text(c->u, a), *in = node_text(c->u, ix);
            int staged = cu__in(ctx->staged, an);
            int hit = staged && !strcmp(in, ctx->var);
            int hoist = staged && ctx->outer && !strcmp(in, ctx->outer);
            if (hit || hoist) {
                TokEdit *x = xcalloc(1, sizeof *x);
                x->start = ts_node_start_byte(n);
                x->end = ts_node_end_byte(n);
                if (hit && ctx->packed)
                    x->text = xsprintf("macc_sv_.%c", "xyzw"[cu__index_of(ctx->staged, an)]);
                else
                    x->text = hit ? xsprintf("macc_sh_%s[macc_jj_]", an) : xsprintf("macc_hv_%s", an);
                vec_push(edits, x);
            }
            hit |= hoist;
            free(an);
            free(in);
            if (hit)
                return;
        }
    }
    if (node_is(n, "identifier") || node_is(n, "field_identifier") || node_is(n, "type_identifier")) {
        size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
        char *name = xstrndup(t + b, e - b);
        char *repl = NULL;
        TSNode p = ts_node_parent(n);
        const char *var = node_is(n, "identifier") ? variant_of_call(c->u, n, cu__variant_context(c), 1) : NULL;
        if (!var && node_is(n, "identifier") && node_is(p, "function_declarator"))
            var = variant_renamed(c->u, b); /* a begin declare variant function's own name */
        if (var) { /* declare variant: the GPU's variant of the call in this context */
            free(name);
            name = xstrdup(var);
        }
        if (node_is(n, "identifier") && cu__in(&c->devfuncs, name) &&
            ((node_is(p, "call_expression") && ts_node_eq(node_field(p, "function"), n)) ||
             node_is(p, "function_declarator")))
            repl = xsprintf("macc_d_%s", name);
        else if (node_is(n, "identifier") && node_is(p, "call_expression")) {
            for (int i = 0; cu__omp_api[i]; i++)
                if (!strcmp(cu__omp_api[i], name))
                    repl = xsprintf("macc_dev_%s", name);
        }
        if (!repl && (node_is(n, "identifier") || node_is(n, "type_identifier")) && !strncmp(name, "omp_", 4)) {
            /* the memory allocators' handles and their type: macc_device.h's */
            static const char *const handles[] = {"omp_null_allocator", "omp_default_mem_alloc",
                                                  "omp_large_cap_mem_alloc", "omp_const_mem_alloc",
                                                  "omp_high_bw_mem_alloc", "omp_low_lat_mem_alloc",
                                                  "omp_cgroup_mem_alloc", "omp_pteam_mem_alloc",
                                                  "omp_thread_mem_alloc", "omp_allocator_handle_t", NULL};
            for (int i = 0; handles[i]; i++)
                if (!strcmp(handles[i], name))
                    repl = xsprintf("macc_%s", name);
        }
        if (!repl && node_is(n, "identifier") && ctx && ctx->writeback && cu__in(ctx->writeback, name) &&
            !node_is(p, "field_expression"))
            repl = xsprintf("(*macc_p_%s)", name);
        if (!repl && node_is(n, "identifier") && ctx && ctx->writeback && cu__in(ctx->writeback, name) &&
            node_is(p, "field_expression") && ts_node_eq(node_field(p, "argument"), n))
            repl = xsprintf("(*macc_p_%s)", name);
        if (!repl && node_is(n, "identifier") && (ts_node_eq(n, c->defid) || cu__devvar_ref(c, n)))
            repl = xsprintf("macc_g_%s", name);
        if (!repl && var)
            repl = xstrdup(var);
        free(name);
        if (repl) {
            TokEdit *x = xcalloc(1, sizeof *x);
            x->start = b;
            x->end = e;
            x->text = repl;
            vec_push(edits, x);
        }
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_child(n, i);
        if (node_is(k, "preproc_call") && atomic_pragma_kind(c->u, k) != SYNC_NONE) {
            /* atomic / critical / flush: the pragma and its statement become one edit */
            size_t end = cu__sync_edit(c, k, ctx, edits);
            while (i + 1 < nc && ts_node_start_byte(ts_node_child(n, i + 1)) < end)
                i++;
            continue;
        }
        int conv = cu__conv_child(c, n, k);
        if (conv)
            cu__edit(edits, ts_node_start_byte(k), ts_node_start_byte(k), xstrdup("macc_c("));
        cu__collect_edits(c, k, ctx, edits);
        if (conv)
            cu__edit(edits, ts_node_end_byte(k), ts_node_end_byte(k), xstrdup(")"));
    }
}

/* Copies the text of node n, up to byte `limit` (0: its end), with the edits above. */
typedef struct EditAt {
    TokEdit *e;
    int seq;
} EditAt;

static int cu__edit_cmp(const void *a, const void *b)
{
    const EditAt *x = a, *y = b;
    if (x->e->start != y->e->start)
        return x->e->start < y->e->start ? -1 : 1;
    return x->seq - y->seq;
}

/* Edits in text order (an edit may be made while visiting an earlier node:
 * the declaration a variably modified parameter adds to the body); those at
 * one place in the order they were made. */
static void cu__sort_edits(Vec *edits)
{
    EditAt *v = xmalloc(sizeof *v * (size_t)(edits->len ? edits->len : 1));
    for (int i = 0; i < edits->len; i++)
        v[i] = (EditAt){edits->items[i], i};
    qsort(v, (size_t)edits->len, sizeof *v, cu__edit_cmp);
    for (int i = 0; i < edits->len; i++)
        edits->items[i] = v[i].e;
    free(v);
}

static void cu__copy_upto(Cu *c, TSNode n, size_t limit, Buf *out, const CopyCtx *ctx)
{
    Vec edits = {0};
    cu__collect_edits(c, n, ctx, &edits);
    cu__sort_edits(&edits);
    size_t pos = ts_node_start_byte(n), end = ts_node_end_byte(n);
    if (limit && limit < end)
        end = limit;
    for (int i = 0; i < edits.len; i++) {
        TokEdit *e = edits.items[i];
        if (e->start >= pos && e->end <= end) {
            buf_put(out, c->u->src->text + pos, e->start - pos);
            buf_puts(out, e->text);
            pos = e->end;
        }
        free(e->text);
        free(e);
    }
    if (pos < end)
        buf_put(out, c->u->src->text + pos, end - pos);
    vec_free(&edits);
}

static void cu__copy(Cu *c, TSNode n, Buf *out, const CopyCtx *ctx)
{
    cu__copy_upto(c, n, 0, out, ctx);
}

/* ---- atomic, critical, flush (emit_atomic.c) --------------------------------- */

typedef struct SyncCx {
    Cu *c;
    const CopyCtx *ctx;
} SyncCx;

static void cu__sync_copy(void *cx, TSNode n, Buf *out)
{
    SyncCx *s = cx;
    cu__copy(s->c, n, out, s->ctx);
}

static const Capture *cu__cap(const Region *r, const char *name);


/* Does the lvalue x of an atomic live in device memory that other threads
 * see? Through a pointer (`*p`, `p->f`, `p[i]`), a mapped array, a mapped
 * scalar, a global: yes. A variable of the kernel itself (private,
 * firstprivate, declared in the region or in a device function, an array
 * copied into each thread): no, it is the thread's own. */
static int cu__sync_shared(void *cx, TSNode x, TSNode pragma)
{
    SyncCx *s = cx;
    Cu *c = s->c;
    int nsub = 0;
    TSNode n = x;
    for (;;) {
        if (node_is(n, "parenthesized_expression") && ts_node_named_child_count(n) == 1) {
            n = ts_node_named_child(n, 0);
        } else if (node_is(n, "subscript_expression")) {
            nsub++;
            n = node_field(n, "argument");
        } else if (node_is(n, "field_expression")) {
            char *op = node_text(c->u, node_field(n, "operator"));
            int arrow = !strcmp(op, "->");
            free(op);
            if (arrow || nsub)
                return 1; /* through a pointer (a member subscripted: assume a pointer member) */
            n = node_field(n, "argument");
        } else {
            break;
        }
    }
    if (!node_is(n, "identifier"))
        return 1; /* *p, a call: memory through a pointer */
    char *name = node_text(c->u, n);
    int shared = 1;
    const Capture *k = c->r ? cu__cap(c->r, name) : NULL;
    if ((s->ctx && s->ctx->writeback && cu__in(s->ctx->writeback, name)) || cu__in(&c->team_shared, name)) {
        shared = 1;
    } else if (k) {
        int rank = 0;
        for (const char *q = k->decl->decl_text + k->decl->id_off + k->decl->id_len; *q; q++)
            rank += *q == '[';
        switch (k->kind) {
        case CAP_PTR:
            shared = nsub > 0;
            break;
        case CAP_ARRAY:
            shared = !(c->thread_arrays && cu__in(c->thread_arrays, name)) || nsub > rank;
            break;
        default:
            shared = (k->decl->is_pointer && nsub > 0) || (k->decl->is_array && nsub > rank);
            if (!shared && k->kind == CAP_SCALAR)
                diag_warning(c->u->diag, ts_node_start_byte(pragma),
                             "atomic update of firstprivate '%s': each GPU thread updates its own copy "
                             "(map it, map(tofrom: %s), to share it)",
                             name, name);
            break;
        }
    } else {
        TSNode where = {0};
        Decl *d = analyze_lookup(c->u, n, name, &where);
        if (d && !d->is_global) {
            int rank = 0;
            for (const char *q = d->decl_text + d->id_off + d->id_len; *q; q++)
                rank += *q == '[';
            shared = (d->is_pointer && nsub > 0) || (d->is_array && nsub > rank);
            if (!shared && c->r && (c->mode == CU_TEAM_DIST || c->mode == CU_GENERIC) && !ts_node_is_null(where)) {
                /* a variable of the team (declared outside the loop directive
                 * that holds the atomic) is one per thread here, one per team in OpenMP */
                TSNode loop = {0};
                for (TSNode p = ts_node_parent(pragma); !ts_node_is_null(p); p = ts_node_parent(p)) {
                    if (!node_is(p, "for_statement"))
                        continue;
                    TSNode prev = ts_node_prev_named_sibling(p);
                    while (node_is(prev, "comment"))
                        prev = ts_node_prev_named_sibling(prev);
                    if (node_is(prev, "preproc_call")) {
                        for (int i = 0; i < c->u->pragmas.len; i++) {
                            Pragma *q = c->u->pragmas.items[i];
                            if (q->start == ts_node_start_byte(prev) && q->dir.kind == DIR_LOOP &&
                                (q->dir.cs & (CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_LOOP)))
                                loop = p;
                        }
                    }
                    if (!ts_node_is_null(loop))
                        break;
                }
                if (!ts_node_is_null(loop) && ts_node_start_byte(where) < ts_node_start_byte(loop))
                    diag_warning(c->u->diag, ts_node_start_byte(pragma),
                                 "atomic update of '%s', declared outside the loop directive: on the GPU each "
                                 "thread of the team updates its own copy",
                                 name);
            }
        }
        decl_delete(d);
    }
    free(name);
    return shared;
}

static void cu__sync_init(Cu *c, const CopyCtx *ctx, SyncCx *sx, AtomicEmit *a)
{
    sx->c = c;
    sx->ctx = ctx;
    memset(a, 0, sizeof *a);
    a->u = c->u;
    a->copy = cu__sync_copy;
    a->shared = cu__sync_shared;
    a->cx = sx;
}

/* The edit for a sync pragma and its statement; returns the end of what it replaces. */
static size_t cu__sync_edit(Cu *c, TSNode pragma, const CopyCtx *ctx, Vec *edits)
{
    SyncCx sx;
    AtomicEmit a;
    cu__sync_init(c, ctx, &sx, &a);
    Buf b = {0};
    TSNode stmt = atomic_pragma_kind(c->u, pragma) == SYNC_FLUSH ? (TSNode){0} : atomic_pragma_stmt(pragma);
    size_t end = ts_node_end_byte(pragma);
    if (atomic_emit(&a, pragma, &b) == 0 && !ts_node_is_null(stmt))
        end = ts_node_end_byte(stmt);
    c->errors += a.errors;
    TokEdit *e = xcalloc(1, sizeof *e);
    e->start = ts_node_start_byte(pragma);
    e->end = end;
    if (!b.data) {
        cu__blank(c, &b, e->start, e->end);
        if (!b.data)
            buf_puts(&b, "");
    }
    e->text = b.data;
    vec_push(edits, e);
    return end;
}

static void cu__line_dir_off(Cu *c, Buf *out, size_t off);

static void cu__line_dir(Cu *c, Buf *out, TSNode n)
{
    cu__line_dir_off(c, out, ts_node_start_byte(n));
}

/* ---- device functions ------------------------------------------------------- */

/* ---- the prelude: what the kernels need ------------------------------------ */

/* Does file-scope node n define a name in `need` (a typedef name, a tag,
 * an enumerator, a variable)? */
static int cu__defines_needed(const Cu *c, TSNode n, const StrSet *need)
{
    TSNode spec = node_tag_body(n);
    if (!ts_node_is_null(spec) && tag_defines(c->u, spec, need))
        return 1;
    if (node_is(n, "type_definition") || node_is(n, "declaration")) {
        uint32_t k = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < k; i++) {
            TSNode d = ts_node_named_child(n, i);
            if (ts_node_eq(d, node_field(n, "type")))
                continue;
            if (node_is(d, "init_declarator"))
                d = node_field(d, "declarator");
            while (!ts_node_is_null(d) && !node_is(d, "identifier") && !node_is(d, "type_identifier")) {
                TSNode inner = node_field(d, "declarator");
                if (ts_node_is_null(inner) && ts_node_named_child_count(d))
                    inner = ts_node_named_child(d, 0);
                if (ts_node_eq(inner, d))
                    break;
                d = inner;
            }
            if ((node_is(d, "identifier") || node_is(d, "type_identifier")) && node_name_in(c->u, d, need))
                return 1;
        }
    }
    return 0;
}

/* How a needed file-scope node goes into the device file:
 *  0 not at all, 1 as it is, 2 only its struct/union/enum specifier,
 *  3 as a __device__ copy (a constant table). */
static int cu__prelude_kind(const Cu *c, TSNode n)
{
    const char *t = node_type(n);
    int sys = source_in_system(c->u->src, ts_node_start_byte(n));
    if (source_file_is(c->u->src, ts_node_start_byte(n), "macc_rt.h"))
        return 0; /* the device file includes it */
    if (!strcmp(t, "type_definition")) {
        if (!sys)
            return 1;
        /* a system header's typedef of a scalar type: the same type as the
         * CUDA headers' (C++ allows the repetition); tagged types come from
         * the headers that macc_device.h includes */
        if (!ts_node_is_null(node_tag_body(n)))
            return 0;
        TSNode d = node_field(n, "declarator");
        char *name = ts_node_is_null(d) ? xstrdup("") : node_text(c->u, d);
        int keyword = !strcmp(name, "wchar_t") || !strcmp(name, "char16_t") || !strcmp(name, "char32_t") ||
                      !strcmp(name, "char8_t") || !strcmp(name, "bool");
        free(name);
        return keyword ? 0 : 1;
    }
    if (sys)
        return 0;
    if (!strcmp(t, "struct_specifier") || !strcmp(t, "union_specifier") || !strcmp(t, "enum_specifier"))
        return 1;
    if (strcmp(t, "declaration"))
        return 0;
    int vars = 0, protos = 0, constants = 1, tables = 1, is_const = 0, is_extern = 0;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i);
        if (node_is(k, "type_qualifier")) {
            char *q = node_text(c->u, k);
            is_const |= !strcmp(q, "const");
            free(q);
        } else if (node_is(k, "storage_class_specifier")) {
            char *q = node_text(c->u, k);
            is_extern |= !strcmp(q, "extern");
            free(q);
        }
    }
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i);
        TSNode d = node_is(k, "init_declarator") ? node_field(k, "declarator") : k;
        if (node_is(d, "function_declarator")) {
            protos++;
        } else if (node_is(k, "init_declarator")) {
            vars++;
            if (!node_is(d, "identifier"))
                constants = 0;
            if (!node_is(d, "array_declarator"))
                tables = 0;
        } else if (node_is(k, "identifier") || node_is(k, "pointer_declarator") || node_is(k, "array_declarator") ||
                   node_is(k, "parenthesized_declarator")) {
            vars++;
            constants = 0;
            tables = 0;
        }
    }
    int body = !ts_node_is_null(node_tag_body(n));
    if (!vars && !protos)
        return 1;
    if (vars && is_const && !is_extern && constants)
        return 1;
    if (vars && is_const && !is_extern && tables)
        return 3;
    return body ? 2 : 0;
}

static void cu__line_at(Cu *c, Buf *out, size_t off)
{
    int line, col;
    source_position(c->u->src, off, &line, &col);
    buf_printf(out, "#line %d \"%s\"\n", line, source_cfile(c->u->src, off));
}

/* Top-level preprocessor lines that an input taken as already preprocessed
 * (-fpreprocessed, .i) still holds: its includes and macros stay. */
static int cu__kept_directive(const Cu *c, TSNode n)
{
    return !c->u->preprocessed && (node_is(n, "preproc_include") || node_is(n, "preproc_def") ||
                                   node_is(n, "preproc_function_def") ||
                                   (node_is(n, "preproc_call") && !cu__is_our_pragma(c, n)));
}

/* The device file's declarations: the file-scope types, enumerators and
 * constants that kernels and device functions use (transitively), in the
 * file's order; then a prototype of every device function, then their
 * definitions. Nothing else of the user's file or its headers: no global is
 * defined twice, and no host-only code meets nvcc's C++. */
static void cu__prelude(Cu *c, Buf *out)
{
    Unit *u = c->u;
    StrSet need = {0};
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        node_ids(c->u, r->stmt, &need);
        for (int j = 0; j < r->caps.len; j++) {
            Capture *k = r->caps.items[j];
            if (k->decl) {
                text_ids(k->decl->spec, &need);
                text_ids(k->decl->decl_text, &need);
            }
        }
    }
    for (int i = 0; i < c->devnodes.len; i++)
        node_ids(c->u, *(TSNode *)c->devnodes.items[i], &need);
    for (int i = 0; i < u->devextdecls.len; i++)
        node_ids(c->u, *(TSNode *)u->devextdecls.items[i], &need);
    for (int i = 0; i < u->devvars.len; i++) {
        const DevVar *v = u->devvars.items[i];
        text_ids(v->spec, &need);
        node_ids(c->u, v->declarator, &need);
        if (!ts_node_is_null(v->init))
            node_ids(c->u, v->init, &need);
    }
    /* types declared inside functions that regions use (hoisted) */
    Vec local = {0};
    unit_local_types(u, NULL, &local);
    for (int i = 0; i < local.len; i++)
        node_ids(c->u, *(TSNode *)local.items[i], &need);
    unsigned char *mark = xcalloc((size_t)u->ntop + 1, 1);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = u->ntop - 1; i >= 0; i--) {
            TSNode n = u->top[i];
            if (mark[i] || !cu__defines_needed(c, n, &need))
                continue;
            int k = cu__prelude_kind(c, n);
            mark[i] = (unsigned char)(k ? k : 255);
            if (!k)
                continue;
            changed = 1;
            node_ids(c->u, k == 2 ? node_tag_body(n) : n, &need);
        }
    }
    for (int i = 0; i < u->ntop; i++) {
        TSNode n = u->top[i];
        size_t b = ts_node_start_byte(n);
        if (cu__kept_directive(c, n)) {
            cu__line_at(c, out, b);
            buf_put(out, u->src->text + b, ts_node_end_byte(n) - b);
            buf_puts(out, "\n");
            continue;
        }
        if (!mark[i] || mark[i] == 255)
            continue;
        cu__line_at(c, out, b);
        if (mark[i] == 3)
            buf_puts(out, "__device__ ");
        if (mark[i] == 2) {
            cu__copy(c, node_tag_body(n), out, NULL);
            buf_puts(out, ";\n");
            continue;
        }
        cu__copy(c, n, out, NULL);
        if (!node_is(n, "declaration") && !node_is(n, "type_definition"))
            buf_puts(out, ";");
        buf_puts(out, "\n");
    }
    free(mark);
    strset_free(&need);
    StrSet seen = {0};
    for (int i = 0; i < local.len; i++) {
        TSNode n = *(TSNode *)local.items[i];
        Buf t = {0};
        local_type_text(u, n, &t);
        if (strset_add(&seen, t.data, t.len)) {
            cu__line_at(c, out, ts_node_start_byte(n));
            buf_puts(out, t.data);
        }
        buf_free(&t);
    }
    strset_free(&seen);
    vec_free(&local);
    /* globals with a device copy (declare target variables): __device__
     * variables named macc_g_<name>, initialised as the host's */
    for (int i = 0; i < u->devvars.len; i++) {
        const DevVar *v = u->devvars.items[i];
        cu__line_at(c, out, ts_node_start_byte(v->declarator));
        /* a static or implicit one is the file's own; a declare target global
         * of the program is one device variable, defined by the file that
         * defines it, declared `extern` by the others (the device link joins
         * them); the type keeps its const when initialised */
        char *spec = ts_node_is_null(v->init) && !v->external ? spec_unqualified(v->spec) : xstrdup(v->spec);
        buf_printf(out, "%s__device__ %s ", v->is_static || v->implicit ? "static " : v->external ? "extern " : "", spec);
        free(spec);
        TSNode id = v->declarator;
        while (!ts_node_is_null(id) && !node_is(id, "identifier"))
            id = node_is(id, "parenthesized_declarator") || node_is(id, "attributed_declarator")
                     ? ts_node_named_child(id, 0)
                     : node_field(id, "declarator");
        c->defid = id;
        cu__copy(c, v->declarator, out, NULL);
        c->defid = (TSNode){0};
        if (!ts_node_is_null(v->init) && !v->external) {
            buf_puts(out, " = ");
            cu__copy(c, v->init, out, NULL);
        }
        buf_printf(out, ";%s\n", v->implicit   ? " /* used by a device function: treated as declare target link */"
                                  : v->external ? " /* defined by another file */"
                                  : v->link     ? " /* declare target link */"
                                                : "");
    }
    /* other files' device functions that this file calls: C names, so that
     * the device link finds the defining file's */
    for (int i = 0; i < u->devextdecls.len; i++) {
        TSNode n = *(TSNode *)u->devextdecls.items[i];
        char *spec = an_spec_text(u, n);
        cu__line_at(c, out, ts_node_start_byte(n));
        buf_printf(out, "extern \"C\" __device__ %s ", spec);
        free(spec);
        uint32_t nc = ts_node_named_child_count(n), k = 0;
        for (uint32_t j = 0; j < nc; j++) {
            TSNode d = ts_node_named_child(n, j);
            if (!node_is(d, "function_declarator") && !node_is(d, "pointer_declarator") &&
                !node_is(d, "parenthesized_declarator"))
                continue;
            if (k++)
                buf_puts(out, ", ");
            cu__copy(c, d, out, NULL);
        }
        buf_puts(out, ";\n");
    }
    /* device functions: prototypes first (a callee may be defined after its
     * caller), then the definitions in the file's order; a function with
     * external linkage keeps its C name (other files' kernels call it), an
     * inline one is the file's own */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < u->ntop; i++) {
            TSNode n = u->top[i];
            int dev = 0;
            for (int j = 0; j < c->devnodes.len && !dev; j++)
                dev = ts_node_eq(*(TSNode *)c->devnodes.items[j], n);
            if (!dev)
                continue;
            cu__line_at(c, out, ts_node_start_byte(n));
            int st = 0, inl = 0;
            uint32_t nc = ts_node_named_child_count(n);
            for (uint32_t j = 0; j < nc; j++) {
                TSNode k = ts_node_named_child(n, j);
                if (node_is(k, "storage_class_specifier") || node_is(k, "function_specifier") ||
                    node_is(k, "type_qualifier")) {
                    char *q = node_text(u, k);
                    st |= !strcmp(q, "static");
                    inl |= strstr(q, "inline") != NULL;
                    free(q);
                }
            }
            int ext = !st && !inl; /* in a linkage block: `extern int f(void) {...}` stays valid */
            buf_puts(out, st ? "__device__ " : inl ? "static __device__ " : "extern \"C\" { __device__ ");
            if (pass == 0) {
                cu__copy_upto(c, n, ts_node_start_byte(node_field(n, "body")), out, NULL);
                buf_puts(out, ext ? "; }\n" : ";\n");
            } else {
                cu__copy(c, n, out, NULL);
                buf_puts(out, ext ? " }\n" : "\n");
            }
        }
    }
}

/* ---- loops ---------------------------------------------------------------- */

typedef struct CLoop {
    char *var, *type, *lb, *ub, *step;
    int cmp; /* '<', 'l' (<=), '>', 'g' (>=), '!' */
    TSNode node, body;
} CLoop;

static void cu__free_loop(CLoop *l)
{
    free(l->var);
    free(l->type);
    free(l->lb);
    free(l->ub);
    free(l->step);
}

static const Capture *cu__cap(const Region *r, const char *name)
{
    for (int i = 0; i < r->caps.len; i++) {
        const Capture *k = r->caps.items[i];
        if (!strcmp(k->name, name))
            return k;
    }
    return NULL;
}

/* Parses a canonical for loop (OpenMP's loop form). Returns 0, or -1 after an
 * error. */
static int cu__loop(Cu *c, const Region *r, TSNode loop, CLoop *l)
{
    Unit *u = c->u;
    memset(l, 0, sizeof *l);
    l->node = loop;
    l->body = node_field(loop, "body");
    TSNode init = node_field(loop, "initializer");
    TSNode cond = node_field(loop, "condition");
    TSNode upd = node_field(loop, "update");
    if (node_is(init, "declaration")) {
        TSNode d = ts_node_named_child(init, ts_node_named_child_count(init) - 1);
        if (node_is(d, "init_declarator") && node_is(node_field(d, "declarator"), "identifier")) {
            l->var = node_text(u, node_field(d, "declarator"));
            l->lb = node_text(u, node_field(d, "value"));
            l->type = node_text(u, node_field(init, "type"));
        }
    } else if (node_is(init, "assignment_expression") && node_is(node_field(init, "left"), "identifier")) {
        l->var = node_text(u, node_field(init, "left"));
        l->lb = node_text(u, node_field(init, "right"));
        const Capture *k = cu__cap(r, l->var);
        l->type = xstrdup(k && k->decl ? k->decl->spec : "long long");
    }
    if (!l->var)
        goto bad;
    if (node_is(cond, "binary_expression")) {
        TSNode a = node_field(cond, "left"), b = node_field(cond, "right");
        TSNode op = node_field(cond, "operator");
        char *ops = node_text(u, op);
        char *an = node_text(u, a);
        int swap = strcmp(an, l->var) != 0;
        free(an);
        if (swap) {
            char *bn = node_text(u, b);
            int ok = !strcmp(bn, l->var);
            free(bn);
            if (!ok) {
                free(ops);
                goto bad;
            }
        }
        int cmp = 0;
        if (!strcmp(ops, "<")) cmp = swap ? '>' : '<';
        else if (!strcmp(ops, "<=")) cmp = swap ? 'g' : 'l';
        else if (!strcmp(ops, ">")) cmp = swap ? '<' : '>';
        else if (!strcmp(ops, ">=")) cmp = swap ? 'l' : 'g';
        else if (!strcmp(ops, "!=")) cmp = '!';
        free(ops);
        if (!cmp)
            goto bad;
        l->cmp = cmp;
        l->ub = node_text(u, swap ? a : b);
    } else {
        goto bad;
    }
    if (node_is(upd, "update_expression")) {
        char *txt = node_text(u, upd);
        l->step = xstrdup(strstr(txt, "++") ? "1" : "-1");
        free(txt);
    } else if (node_is(upd, "assignment_expression")) {
        TSNode op = node_field(upd, "operator");
        char *ops = node_text(u, op);
        char *rhs = node_text(u, node_field(upd, "right"));
        if (!strcmp(ops, "+="))
            l->step = xsprintf("(%s)", rhs);
        else if (!strcmp(ops, "-="))
            l->step = xsprintf("(-(%s))", rhs);
        else if (!strcmp(ops, "=")) {
            TSNode rn = node_field(upd, "right");
            if (node_is(rn, "binary_expression")) {
                char *left = node_text(u, node_field(rn, "left"));
                char *o = node_text(u, node_field(rn, "operator"));
                char *right = node_text(u, node_field(rn, "right"));
                if (!strcmp(left, l->var) && !strcmp(o, "+"))
                    l->step = xsprintf("(%s)", right);
                else if (!strcmp(left, l->var) && !strcmp(o, "-"))
                    l->step = xsprintf("(-(%s))", right);
                free(left);
                free(o);
                free(right);
            }
        }
        free(ops);
        free(rhs);
    }
    if (!l->step)
        goto bad;
    return 0;
bad:
    diag_error(u->diag, ts_node_start_byte(loop),
               "the GPU version needs a loop in OpenMP's canonical form (var = lb; var <|<=|>|>=|!= ub; var += step)");
    c->errors++;
    cu__free_loop(l);
    return -1;
}

/* Trip count expression of a canonical loop. */
static char *cu__trip(const CLoop *l)
{
    const char *lb = l->lb, *ub = l->ub, *st = l->step;
    switch (l->cmp) {
    case '<': return xsprintf("((long long)(%s) > (long long)(%s) ? ((long long)(%s) - (long long)(%s) + (long long)%s - 1) / (long long)%s : 0LL)", ub, lb, ub, lb, st, st);
    case 'l': return xsprintf("((long long)(%s) >= (long long)(%s) ? ((long long)(%s) - (long long)(%s) + (long long)%s) / (long long)%s : 0LL)", ub, lb, ub, lb, st, st);
    case '>': return xsprintf("((long long)(%s) < (long long)(%s) ? ((long long)(%s) - (long long)(%s) - (long long)%s - 1) / -(long long)%s : 0LL)", ub, lb, lb, ub, st, st);
    case 'g': return xsprintf("((long long)(%s) <= (long long)(%s) ? ((long long)(%s) - (long long)(%s) - (long long)%s) / -(long long)%s : 0LL)", ub, lb, lb, ub, st, st);
    default: return xsprintf("(((long long)(%s) - (long long)(%s)) / (long long)%s)", ub, lb, st);
    }
}

/* ---- regions ------------------------------------------------------------- */

static const char *cu__red_op(int red)
{
    switch (red) {
    case RED_ADD: case RED_SUB: return "MACC_R_ADD";
    case RED_MUL: return "MACC_R_MUL";
    case RED_MIN: return "MACC_R_MIN";
    case RED_MAX: return "MACC_R_MAX";
    case RED_BAND: return "MACC_R_BAND";
    case RED_BOR: return "MACC_R_BOR";
    case RED_BXOR: return "MACC_R_BXOR";
    case RED_LAND: return "MACC_R_LAND";
    default: return "MACC_R_LOR";
    }
}

/* The atomic operation that combines a reduction's partial result. */
static const char *cu__red_atomic(int red)
{
    switch (red) {
    case RED_ADD: case RED_SUB: return "MACC_A_ADD";
    case RED_MUL: return "MACC_A_MUL";
    case RED_MIN: return "MACC_A_MIN";
    case RED_MAX: return "MACC_A_MAX";
    case RED_BAND: return "MACC_A_AND";
    case RED_BOR: return "MACC_A_OR";
    case RED_BXOR: return "MACC_A_XOR";
    case RED_LAND: return "MACC_A_LAND";
    default: return "MACC_A_LOR";
    }
}

/* Is `name` used in the header (init, condition, update) of a for loop in n? */
static int cu__in_loop_header(const Cu *c, TSNode n, const char *name)
{
    if (node_is(n, "for_statement")) {
        static const char *const parts[] = {"initializer", "condition", "update"};
        for (int i = 0; i < 3; i++) {
            TSNode p = node_field(n, parts[i]);
            if (ts_node_is_null(p))
                continue;
            char *t = node_text(c->u, p);
            Vec ids = {0};
            an_text_ids(t, &ids);
            int hit = cu__in(&ids, name);
            for (int j = 0; j < ids.len; j++)
                free(ids.items[j]);
            vec_free(&ids);
            free(t);
            if (hit)
                return 1;
        }
    }
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (cu__in_loop_header(c, ts_node_named_child(n, i), name))
            return 1;
    return 0;
}

/* The array type of a declaration, its name left out: "double [N][M]". */
static char *cu__array_type(const Decl *dd)
{
    char *spec = spec_unqualified(dd->spec);
    char *t = xsprintf("%s %.*s%s", spec, dd->id_off, dd->decl_text, dd->decl_text + dd->id_off + dd->id_len);
    free(spec);
    return t;
}

typedef struct Red {
    const Capture *cap;
    int op;
    char *type;
} Red;

/* Reductions of directive d on captured (written-back) variables. */
static void cu__reductions(const Region *r, const Directive *d, Vec *reds)
{
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *cl = &d->clauses[i];
        if (cl->kind != CL_REDUCTION)
            continue;
        for (int j = 0; j < cl->nitems; j++) {
            const Capture *k = cu__cap(r, cl->items[j].base);
            if (!k || k->kind != CAP_WRITEBACK)
                continue;
            Red *x = xcalloc(1, sizeof *x);
            x->cap = k;
            x->op = cl->modifier;
            x->type = spec_unqualified(k->decl->spec);
            vec_push(reds, x);
        }
    }
}

static int cu__has_inner_loops(const Unit *u, TSNode stmt)
{
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->dir.kind == DIR_LOOP &&
            ((p->dir.cs & (CS_DISTRIBUTE | CS_PARALLEL_FOR)) || p->dir.cs == CS_LOOP ||
             CS_IS_PARALLEL_REGION(p->dir.cs)) &&
            p->start >= ts_node_start_byte(stmt) && p->start < ts_node_end_byte(stmt))
            return 1;
    }
    return 0;
}

static Pragma *cu__pragma_of(const Unit *u, TSNode n)
{
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->start == ts_node_start_byte(n))
            return p;
    }
    return NULL;
}

/* Does statement s write only plain identifiers? Calls: none at all, or
 * (library_calls) only of functions that are not the program's own. */
static int cu__writes_locals_only(const Cu *c, TSNode s, int library_calls)
{
    if (node_is(s, "call_expression")) {
        if (!library_calls)
            return 0;
        TSNode f = node_field(s, "function");
        if (!node_is(f, "identifier"))
            return 0;
        char *name = node_text(c->u, f);
        int dev = cu__in(&c->devfuncs, name);
        free(name);
        if (dev)
            return 0;
    }
    if (node_is(s, "assignment_expression") || node_is(s, "update_expression")) {
        TSNode t = node_is(s, "assignment_expression") ? node_field(s, "left") : node_field(s, "argument");
        if (!node_is(t, "identifier") || cu__devvar_ref(c, t)) /* a global's device copy is shared */
            return 0;
        if (c->nonlocal || c->team_shared.len) { /* a mapped scalar, a team's variable: not the thread's own */
            char *name = node_text(c->u, t);
            int shared = (c->nonlocal && cu__in(c->nonlocal, name)) || cu__in(&c->team_shared, name);
            free(name);
            if (shared)
                return 0;
        }
    }
    uint32_t nc = ts_node_named_child_count(s);
    for (uint32_t i = 0; i < nc; i++)
        if (!cu__writes_locals_only(c, ts_node_named_child(s, i), library_calls))
            return 0;
    return 1;
}

/* Emits a loop nest of `depth` canonical loops starting at `loop`, shared
 * among `idx`..`stride` (grid-wide or block-wide), with reductions `reds`
 * (block results combined through `part` when grid-wide, else broadcast). */
static int cu__emit_loop(Cu *c, const Region *r, TSNode loop, int depth, const char *idx, const char *stride,
                         const CopyCtx *ctx, Buf *b, const char *ind)
{
    CLoop loops[8];
    if (depth > 8)
        depth = 8;
    int n = 0;
    for (int k = 0; k < depth; k++) {
        if (cu__loop(c, r, node_nth_loop(loop, k), &loops[n]) != 0) {
            for (int j = 0; j < n; j++)
                cu__free_loop(&loops[j]);
            return -1;
        }
        n++;
    }
    buf_printf(b, "%s{\n", ind);
    for (int k = 0; k < n; k++) {
        char *trip = cu__trip(&loops[k]);
        buf_printf(b, "%s    const long long macc_t%d_ = %s;\n", ind, k, trip);
        free(trip);
    }
    buf_printf(b, "%s    const long long macc_total_ = 1LL", ind);
    for (int k = 0; k < n; k++)
        buf_printf(b, " * macc_t%d_", k);
    buf_puts(b, ";\n");
    if (c->chunk > 1) /* a thread's chunks of consecutive iterations, in order */
        buf_printf(b, "%s    for (long long macc_c0_ = (%s) * %ldLL; macc_c0_ < macc_total_; macc_c0_ += (%s) * %ldLL)\n"
                      "%s    for (long long macc_it_ = macc_c0_; macc_it_ < macc_c0_ + %ldLL && macc_it_ < macc_total_; "
                      "macc_it_++) {\n",
                   ind, idx, c->chunk, stride, c->chunk, ind, c->chunk);
    else if (c->stepped) /* every thread reaches each step's barrier */
        buf_printf(b, "%s    for (long long macc_b_ = 0; macc_b_ < macc_total_; macc_b_ += blockDim.x) {\n"
                      "%s    const long long macc_it_ = macc_b_ + threadIdx.x;\n%s    if (macc_it_ < macc_total_) {\n",
                   ind, ind, ind);
    else
        buf_printf(b, "%s    for (long long macc_it_ = %s; macc_it_ < macc_total_; macc_it_ += %s) {\n", ind, idx, stride);
    buf_printf(b, "%s        long long macc_rest_ = macc_it_;\n", ind);
    for (int k = n - 1; k >= 0; k--) {
        if (k > 0)
            buf_printf(b, "%s        %s %s = (%s)((%s) + (macc_rest_ %% macc_t%d_) * %s); macc_rest_ /= macc_t%d_;\n", ind,
                       loops[k].type, loops[k].var, loops[k].type, loops[k].lb, k, loops[k].step, k);
        else
            buf_printf(b, "%s        %s %s = (%s)((%s) + macc_rest_ * %s);\n", ind, loops[k].type, loops[k].var,
                       loops[k].type, loops[k].lb, loops[k].step);
        buf_printf(b, "%s        (void)%s;\n", ind, loops[k].var);
    }
    /* linear: the variable's value in iteration k is its start value + k * step */
    const RVersion *lv = region_gpu_version(r);
    if (lv && c->mode == CU_LOOP) {
        for (int i = 0; i < lv->dir->nclauses; i++) {
            const DirClause *cl = &lv->dir->clauses[i];
            if (cl->kind != CL_LINEAR)
                continue;
            for (int j = 0; j < cl->nitems; j++) {
                const char *v = cl->items[j].base;
                int isvar = 0;
                for (int q = 0; q < n; q++)
                    isvar |= !strcmp(loops[q].var, v);
                if (!isvar)
                    buf_printf(b, "%s        %s = macc_a_.macc_init_%s + macc_it_ * macc_a_.macc_lstep_v%d_%d;\n", ind, v, v,
                               (int)(lv - r->versions), i);
            }
        }
    }
    buf_printf(b, "%s        do\n", ind);
    TSNode body = loops[n - 1].body;
    cu__line_dir(c, b, body);
    cu__copy(c, body, b, ctx);
    buf_printf(b, "\n%s        while (0);\n", ind);
    /* lastprivate: the thread of the sequentially last iteration */
    const RVersion *gv = region_gpu_version(r);
    if (gv && c->mode == CU_LOOP) {
        for (int i = 0; i < gv->dir->nclauses; i++) {
            const DirClause *cl = &gv->dir->clauses[i];
            if (cl->kind != CL_LASTPRIVATE && cl->kind != CL_LINEAR)
                continue;
            for (int j = 0; j < cl->nitems; j++) {
                const char *v = cl->items[j].base;
                const Capture *k = cu__cap(r, v);
                if (cl->kind == CL_LINEAR && directive_lists(gv->dir, CL_LASTPRIVATE, v))
                    continue; /* written back once */
                if (k && k->kind == CAP_ARRAY && k->map >= 0 && c->thread_arrays && cu__in(c->thread_arrays, v)) {
                    buf_printf(b, "%s        if (macc_it_ == macc_total_ - 1) memcpy((void *)macc_p_.%s, %s, sizeof %s);\n",
                               ind, v, v, v);
                    continue;
                }
                if (!k || k->kind != CAP_WRITEBACK)
                    continue;
                int isvar = -1;
                for (int q = 0; q < n; q++)
                    if (!strcmp(loops[q].var, v))
                        isvar = q;
                if (isvar >= 0)
                    buf_printf(b, "%s        if (macc_it_ == macc_total_ - 1) *macc_p_%s = (%s) + macc_t%d_ * %s;\n", ind,
                               v, loops[isvar].lb, isvar, loops[isvar].step);
                else
                    buf_printf(b, "%s        if (macc_it_ == macc_total_ - 1) *macc_p_%s = %s;\n", ind, v, v);
            }
        }
    }
    if (c->stepped)
        buf_printf(b, "%s    }\n%s    __syncthreads();\n", ind, ind);
    buf_printf(b, "%s    }\n%s}\n", ind, ind);
    for (int k = 0; k < n; k++)
        cu__free_loop(&loops[k]);
    return 0;
}

/* Names of the variables that `omp atomic` pragmas inside n update directly. */
static void cu__atomic_roots(Cu *c, TSNode n, Vec *names)
{
    if (node_is(n, "preproc_call")) {
        TSNode x = atomic_target(c->u, n);
        while (node_is(x, "parenthesized_expression") && ts_node_named_child_count(x) == 1)
            x = ts_node_named_child(x, 0);
        if (node_is(x, "identifier"))
            vec_push(names, node_text(c->u, x));
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        cu__atomic_roots(c, ts_node_child(n, i), names);
}

/* A declaration of the team body of one variable that atomics update: one
 * copy per team in shared memory (OpenMP shares it among the team's threads),
 * initialised by thread 0; the name becomes a reference to it. Returns 1 when
 * emitted. */
static int cu__team_shared_decl(Cu *c, TSNode k, const Vec *roots, const Vec *reduced, const CopyCtx *ctx, Buf *b)
{
    if (!node_is(k, "declaration"))
        return 0;
    TSNode dcl = {0};
    int count = 0;
    for (uint32_t j = 0; j < ts_node_named_child_count(k); j++) {
        TSNode x = ts_node_named_child(k, j);
        if (node_is(x, "identifier") || node_is(x, "init_declarator") || node_is(x, "pointer_declarator") ||
            node_is(x, "array_declarator")) {
            dcl = x;
            count++;
        }
    }
    if (count != 1)
        return 0;
    TSNode id = node_is(dcl, "init_declarator") ? node_field(dcl, "declarator") : dcl;
    if (!node_is(id, "identifier"))
        return 0;
    char *name = node_text(c->u, id);
    Decl *d = NULL;
    int hit = cu__in(roots, name) && !cu__in(reduced, name);
    if (hit)
        d = analyze_lookup(c->u, id, name, NULL);
    if (!d) {
        free(name);
        return 0;
    }
    cu__line_dir(c, b, k);
    buf_printf(b, "__shared__ %s macc_sh_%s; /* one per team: atomics update it */\n", d->spec, name);
    buf_puts(b, "        __syncthreads();\n");
    TSNode init = node_is(dcl, "init_declarator") ? node_field(dcl, "value") : (TSNode){0};
    if (!ts_node_is_null(init) && !node_is(init, "initializer_list")) {
        buf_printf(b, "        if (threadIdx.x == 0) macc_sh_%s = (", name);
        cu__copy(c, init, b, ctx);
        buf_puts(b, ");\n        __syncthreads();\n");
    }
    buf_printf(b, "        %s &%s = macc_sh_%s;\n", d->spec, name, name);
    vec_push(&c->team_shared, name);
    decl_delete(d);
    return 1;
}

/* ---- parallel regions and the team's loop directives ------------------------ */

/* Is v named in a private or firstprivate clause of d? */
static int cu__named_private(const Directive *d, const char *v)
{
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *cl = &d->clauses[i];
        if (cl->kind == CL_PRIVATE || cl->kind == CL_FIRSTPRIVATE)
            for (int j = 0; j < cl->nitems; j++)
                if (!strcmp(cl->items[j].base, v))
                    return 1;
    }
    return 0;
}

static void cu__line_dir_off(Cu *c, Buf *out, size_t off)
{
    int line, col;
    source_position(c->u->src, off, &line, &col);
    /* the line is the one of the file the byte comes from (a header's, too) */
    buf_printf(out, "#line %d \"%s\"\n%*s", line, source_cfile(c->u->src, off), col - 1, "");
}

/* Copies the bytes [from, to) of node n, which are whole children of n, with
 * the edits of those children. */
static void cu__copy_span(Cu *c, TSNode n, size_t from, size_t to, const CopyCtx *ctx, Buf *out)
{
    Vec edits = {0};
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_child(n, i);
        if (ts_node_start_byte(k) >= from && ts_node_end_byte(k) <= to)
            cu__collect_edits(c, k, ctx, &edits);
    }
    size_t pos = from;
    for (int i = 0; i < edits.len; i++) {
        TokEdit *e = edits.items[i];
        if (e->start >= pos && e->end <= to) {
            buf_put(out, c->u->src->text + pos, e->start - pos);
            buf_puts(out, e->text);
            pos = e->end;
        }
        free(e->text);
        free(e);
    }
    if (pos < to)
        buf_put(out, c->u->src->text + pos, to - pos);
    vec_free(&edits);
}

/* Index of the next named child of `parent` after i that is not a comment. */
static uint32_t cu__next_index(TSNode parent, uint32_t i)
{
    uint32_t nc = ts_node_named_child_count(parent);
    for (i++; i < nc && node_is(ts_node_named_child(parent, i), "comment"); i++)
        ;
    return i;
}

/* A worksharing loop of the enclosing parallel region: `for`, or a bare `loop`. */
static int cu__is_ws_loop(const Pragma *p)
{
    return p && p->dir.kind == DIR_LOOP && ((p->dir.cs & CS_FOR) || p->dir.cs == CS_LOOP);
}

/* Does n, run by every thread of a parallel region, hold a construct that the
 * threads meet together (a worksharing loop, barrier, single) or one we cannot
 * run there? What a master, critical, atomic, simd or nested parallel for
 * governs runs as written and is not looked into. */
static int cu__spmd_needs(const Cu *c, TSNode n)
{
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i);
        if (node_is(k, "preproc_call")) {
            Pragma *p = cu__pragma_of(c->u, k);
            int nowait, kind;
            if (p && p->dir.kind == DIR_LOOP) {
                if (cu__is_ws_loop(p) || CS_IS_PARALLEL_REGION(p->dir.cs) ||
                    (p->dir.cs & (CS_TEAMS | CS_DISTRIBUTE)))
                    return 1;
                i = cu__next_index(n, i);
            } else if (!p && cu__is_our_pragma(c, k)) {
                kind = cu__sync_kind(c, k, &nowait);
                if (kind == CU_SY_BARRIER || kind == CU_SY_SINGLE || kind == CU_SY_OTHER)
                    return 1;
                if (kind == CU_SY_MASTER || kind == CU_SY_LOCK)
                    i = cu__next_index(n, i);
            }
            continue;
        }
        if (cu__spmd_needs(c, k))
            return 1;
    }
    return 0;
}

/* The type and the expression of variable v in kernel code. */
static char *cu__var_type(const Region *r, const CopyCtx *ctx, const char *v)
{
    const Capture *k = cu__cap(r, v);
    if (k && k->decl && ctx && ctx->writeback && cu__in(ctx->writeback, v))
        return spec_unqualified(k->decl->spec);
    return xsprintf("decltype(%s)", v);
}

/* Is v a mapped scalar reached through its device copy? */
static int cu__mapped(const CopyCtx *ctx, const char *v)
{
    return ctx && ctx->writeback && cu__in(ctx->writeback, v);
}

static char *cu__var_expr(const CopyCtx *ctx, const char *v)
{
    if (ctx && ctx->writeback && cu__in(ctx->writeback, v))
        return xsprintf("(*macc_p_%s)", v);
    return xstrdup(v);
}

/* Opens a block giving every thread its own copies of the private,
 * firstprivate and reduction variables of d (a loop directive or parallel
 * region inside a team): reductions start at the operator's identity.
 * *inner receives the context for the block's text (shadowed names are no
 * longer written back through pointers; wb2 holds its list). Nothing is
 * emitted when d has none of these clauses. */
static int cu__shadow_open(Cu *c, const Region *r, const Pragma *p, const CopyCtx *ctx, CopyCtx *inner, Vec *wb2,
                           Buf *b)
{
    const Directive *d = &p->dir;
    int any = 0;
    *inner = *ctx;
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *cl = &d->clauses[i];
        ClauseKind k = cl->kind;
        any |= k == CL_REDUCTION || k == CL_PRIVATE || k == CL_FIRSTPRIVATE;
        for (int j = 0; j < cl->nitems && (k == CL_REDUCTION || k == CL_PRIVATE || k == CL_FIRSTPRIVATE); j++)
            if (!cl->items[j].is_ident || cl->items[j].nsubs) {
                diag_error(c->u->diag, pragma_src_off(p, cl->items[j].off),
                           "%s of '%s' inside the region: the GPU version needs a variable name",
                           directive_clause_name(k), cl->items[j].base);
                c->errors++;
                return 0;
            }
    }
    if (!any)
        return 0;
    if (ctx->writeback)
        for (int i = 0; i < ctx->writeback->len; i++) {
            const char *w = ctx->writeback->items[i];
            int shadowed = 0;
            for (int q = 0; q < d->nclauses; q++) {
                const DirClause *cl = &d->clauses[q];
                if (cl->kind == CL_REDUCTION || cl->kind == CL_PRIVATE || cl->kind == CL_FIRSTPRIVATE)
                    for (int j = 0; j < cl->nitems; j++)
                        shadowed |= !strcmp(cl->items[j].base, w);
            }
            if (!shadowed)
                vec_push(wb2, (void *)w);
        }
    inner->writeback = wb2;
    buf_puts(b, "        {\n");
    for (int pass = 0; pass < 2; pass++)
        for (int q = 0; q < d->nclauses; q++) {
            const DirClause *cl = &d->clauses[q];
            for (int j = 0; j < cl->nitems; j++) {
                const char *v = cl->items[j].base;
                char *ty = cu__var_type(r, ctx, v), *ex = cu__var_expr(ctx, v);
                if (pass == 0 && cl->kind == CL_REDUCTION && cu__mapped(ctx, v))
                    buf_printf(b, "        %s macc_tot_%s;\n", ty, v); /* combined atomically at the end */
                else if (pass == 0 && cl->kind == CL_REDUCTION)
                    buf_printf(b, "        %s macc_orig_%s = %s;\n        %s macc_tot_%s;\n", ty, v, ex, ty, v);
                else if (pass == 0 && cl->kind == CL_FIRSTPRIVATE)
                    buf_printf(b, "        %s macc_fp_%s = %s;\n", ty, v, ex);
                else if (pass == 1 && cl->kind == CL_REDUCTION)
                    buf_printf(b, "        %s %s = macc_red<%s, %s>::id();\n", ty, v, cu__red_op(cl->modifier), ty);
                else if (pass == 1 && cl->kind == CL_PRIVATE)
                    buf_printf(b, "        %s %s;\n", ty, v);
                else if (pass == 1 && cl->kind == CL_FIRSTPRIVATE)
                    buf_printf(b, "        %s %s = macc_fp_%s;\n", ty, v, v);
                free(ty);
                free(ex);
            }
            if (pass == 0 && q == d->nclauses - 1)
                buf_puts(b, "        {\n");
        }
    return 1;
}

/* Closes the block of cu__shadow_open: the reductions combined over the
 * block and given to every thread (the variable's original value included). */
static void cu__shadow_close(const Region *r, const Directive *d, const CopyCtx *ctx, int opened, Buf *b)
{
    if (!opened)
        return;
    for (int pass = 0; pass < 2; pass++) {
        for (int q = 0; q < d->nclauses; q++) {
            const DirClause *cl = &d->clauses[q];
            if (cl->kind != CL_REDUCTION)
                continue;
            for (int j = 0; j < cl->nitems; j++) {
                const char *v = cl->items[j].base, *op = cu__red_op(cl->modifier);
                char *ty = cu__var_type(r, ctx, v), *ex = cu__var_expr(ctx, v);
                if (pass == 0)
                    buf_printf(b, "        macc_tot_%s = macc_block_reduce<%s, %s>(%s);\n", v, op, ty, v);
                else if (cu__mapped(ctx, v)) /* device memory that other teams may update too */
                    buf_printf(b, "        if (threadIdx.x == 0) (void)macc_atomic_fetch<%s>(&%s, macc_tot_%s);\n",
                               cu__red_atomic(cl->modifier), ex, v);
                else
                    buf_printf(b, "        %s = macc_red<%s, %s>::op(macc_orig_%s, macc_tot_%s);\n", ex, op, ty, v, v);
                free(ty);
                free(ex);
            }
        }
        buf_puts(b, "        }\n");
    }
}

/* A loop directive shared among the threads of the block (a worksharing loop
 * of a parallel region, or a loop directive at the top of a team's body),
 * with its own private copies and reductions; `barrier`: the threads wait for
 * one another at its end. */
static void cu__emit_shared_loop(Cu *c, const Region *r, const Pragma *p, TSNode loop, const CopyCtx *ctx, Buf *b)
{
    const DirClause *col = directive_find(&p->dir, CL_COLLAPSE);
    const DirClause *lp = directive_find(&p->dir, CL_LASTPRIVATE);
    int depth = col && col->ival > 0 ? (int)col->ival : 1;
    if (lp) {
        diag_error(c->u->diag, pragma_src_off(p, lp->off),
                   "lastprivate on a loop directive inside the region is not supported in the GPU version");
        c->errors++;
        return;
    }
    CopyCtx in;
    Vec wb2 = {0};
    int opened = cu__shadow_open(c, r, p, ctx, &in, &wb2, b);
    cu__emit_loop(c, r, loop, depth, "threadIdx.x", "blockDim.x", &in, b, "        ");
    cu__shadow_close(r, &p->dir, ctx, opened, b);
    vec_free(&wb2);
}

static void cu__spmd(Cu *c, const Region *r, TSNode n, const CopyCtx *ctx, Buf *b);

/* The named children [i0, i1) of `parent`, run by every thread of a parallel
 * region: worksharing loops shared among them, barriers and single
 * constructs as barriers and thread 0, everything else by every thread. */
static void cu__spmd_seq(Cu *c, const Region *r, TSNode parent, uint32_t i0, uint32_t i1, const CopyCtx *ctx,
                         Buf *b)
{
    for (uint32_t i = i0; i < i1; i++) {
        TSNode k = ts_node_named_child(parent, i);
        if (node_is(k, "comment"))
            continue;
        if (!node_is(k, "preproc_call")) {
            cu__spmd(c, r, k, ctx, b);
            continue;
        }
        Pragma *p = cu__pragma_of(c->u, k);
        uint32_t j = cu__next_index(parent, i);
        if (p && p->dir.kind == DIR_LOOP) {
            char t[64];
            if (cu__is_ws_loop(p)) {
                if (j < i1 && node_is(ts_node_named_child(parent, j), "for_statement")) {
                    cu__emit_shared_loop(c, r, p, ts_node_named_child(parent, j), ctx, b);
                    if (!directive_find(&p->dir, CL_NOWAIT))
                        buf_puts(b, "        __syncthreads();\n");
                    i = j;
                }
            } else if (CS_IS_PARALLEL_REGION(p->dir.cs) || (p->dir.cs & (CS_TEAMS | CS_DISTRIBUTE))) {
                diag_error(c->u->diag, p->start, "'%s' inside a parallel region is not supported in the GPU version",
                           directive_cs_text(p->dir.cs, t, sizeof t));
                c->errors++;
            }
            /* simd, a nested parallel for: the statement runs on every thread as written */
            continue;
        }
        if (p || !cu__is_our_pragma(c, k)) {
            if (!p) { /* #pragma unroll and the like */
                cu__copy(c, k, b, ctx);
                buf_puts(b, "\n");
            }
            continue;
        }
        int nowait, kind = cu__sync_kind(c, k, &nowait);
        if (kind == CU_SY_BARRIER) {
            buf_puts(b, "        __syncthreads();\n");
        } else if (kind == CU_SY_SINGLE) {
            if (j < i1) {
                buf_puts(b, "        if (threadIdx.x == 0) {\n");
                cu__line_dir(c, b, ts_node_named_child(parent, j));
                cu__copy(c, ts_node_named_child(parent, j), b, ctx);
                buf_puts(b, "\n        }\n");
                i = j;
            }
            if (!nowait)
                buf_puts(b, "        __syncthreads();\n");
        } else if (atomic_pragma_kind(c->u, k) != SYNC_NONE) {
            /* atomic, critical, flush: run by every thread (emit_atomic.c), as
             * everywhere else in kernels */
            SyncCx sx;
            AtomicEmit a;
            cu__sync_init(c, ctx, &sx, &a);
            a.no_frame = 1;
            TSNode st = atomic_pragma_kind(c->u, k) == SYNC_FLUSH ? (TSNode){0} : atomic_pragma_stmt(k);
            Buf code = {0};
            int ok = atomic_emit(&a, k, &code) == 0;
            c->errors += a.errors;
            cu__line_dir(c, b, ts_node_is_null(st) ? k : st);
            buf_puts(b, code.data ? code.data : "");
            buf_puts(b, "\n");
            buf_free(&code);
            if (ok && !ts_node_is_null(st) && j < i1 && ts_node_eq(ts_node_named_child(parent, j), st))
                i = j;
        } else {
            /* master: the copy's edits (others: an error there) */
            cu__copy(c, k, b, ctx);
            buf_puts(b, "\n");
        }
    }
}

/* Statement n run by every thread of a parallel region. Statements around
 * worksharing constructs (blocks, loops, if) are emitted piece by piece:
 * OpenMP makes every thread of the team meet those constructs. */
static void cu__spmd(Cu *c, const Region *r, TSNode n, const CopyCtx *ctx, Buf *b)
{
    if (!cu__spmd_needs(c, n)) {
        cu__line_dir(c, b, n);
        cu__copy(c, n, b, ctx);
        buf_puts(b, "\n");
        return;
    }
    if (node_is(n, "compound_statement")) {
        buf_puts(b, "        {\n");
        cu__spmd_seq(c, r, n, 0, ts_node_named_child_count(n), ctx, b);
        buf_puts(b, "        }\n");
        return;
    }
    if (!(node_is(n, "for_statement") || node_is(n, "while_statement") || node_is(n, "do_statement") ||
          node_is(n, "if_statement") || node_is(n, "else_clause"))) {
        diag_error(c->u->diag, ts_node_start_byte(n),
                   "a worksharing or barrier construct inside this statement is not supported in the GPU version");
        c->errors++;
        return;
    }
    size_t pos = ts_node_start_byte(n);
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i);
        if (!cu__spmd_needs(c, k))
            continue;
        cu__line_dir_off(c, b, pos);
        cu__copy_span(c, n, pos, ts_node_start_byte(k), ctx, b);
        buf_puts(b, "\n");
        cu__spmd(c, r, k, ctx, b);
        pos = ts_node_end_byte(k);
    }
    if (pos < ts_node_end_byte(n)) {
        cu__line_dir_off(c, b, pos);
        cu__copy_span(c, n, pos, ts_node_end_byte(n), ctx, b);
        buf_puts(b, "\n");
    }
}

/* A parallel region inside a team's body (the named children [i0, i1) of
 * parent: the region's statement, after any directives nested in it): every
 * thread of the block runs it. */
static void cu__emit_inner_parallel(Cu *c, const Region *r, const Pragma *p, TSNode parent, uint32_t i0,
                                    uint32_t i1, const CopyCtx *ctx, Buf *b)
{
    CopyCtx in;
    Vec wb2 = {0};
    buf_puts(b, "        __syncthreads();\n");
    int opened = cu__shadow_open(c, r, p, ctx, &in, &wb2, b);
    in.spmd = 1;
    cu__spmd_seq(c, r, parent, i0, i1, &in, b);
    cu__shadow_close(r, &p->dir, ctx, opened, b);
    buf_puts(b, "        __syncthreads();\n");
    vec_free(&wb2);
}

/* A team runs a compound statement (or any statement): declarations and
 * local-only statements on every thread, loop directives shared among the
 * threads, parallel regions by every thread, other statements on thread 0
 * between barriers. */
static void cu__emit_team_body(Cu *c, const Region *r, TSNode stmt, const CopyCtx *ctx, Buf *b)
{
    Unit *u = c->u;
    if (!node_is(stmt, "compound_statement")) {
        buf_puts(b, "        if (threadIdx.x == 0) {\n");
        cu__line_dir(c, b, stmt);
        cu__copy(c, stmt, b, ctx);
        buf_puts(b, "\n        }\n        __syncthreads();\n");
        return;
    }
    Vec roots = {0}, reduced = {0};
    cu__atomic_roots(c, stmt, &roots);
    for (int i = 0; i < u->pragmas.len && roots.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->dir.kind != DIR_LOOP || p->start < ts_node_start_byte(stmt) || p->start >= ts_node_end_byte(stmt))
            continue;
        for (int q = 0; q < p->dir.nclauses; q++)
            if (p->dir.clauses[q].kind == CL_REDUCTION)
                for (int j = 0; j < p->dir.clauses[q].nitems; j++)
                    vec_push(&reduced, p->dir.clauses[q].items[j].base);
    }
    int shared0 = c->team_shared.len;
    uint32_t nc = ts_node_named_child_count(stmt);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(stmt, i);
        if (node_is(k, "comment"))
            continue;
        if (roots.len && cu__team_shared_decl(c, k, &roots, &reduced, ctx, b))
            continue;
        Pragma *p = node_is(k, "preproc_call") ? cu__pragma_of(u, k) : NULL;
        if (node_is(k, "preproc_call")) {
            if (p && p->dir.kind == DIR_LOOP && CS_IS_PARALLEL_REGION(p->dir.cs)) {
                /* the region's statement: after the directives nested in it */
                uint32_t j = cu__next_index(stmt, i);
                while (j < nc && node_is(ts_node_named_child(stmt, j), "preproc_call") &&
                       cu__pragma_of(u, ts_node_named_child(stmt, j)))
                    j = cu__next_index(stmt, j);
                if (j < nc)
                    cu__emit_inner_parallel(c, r, p, stmt, i + 1, j + 1, ctx, b);
                i = j;
                continue;
            }
            if (p && p->dir.kind == DIR_LOOP && ((p->dir.cs & (CS_DISTRIBUTE | CS_PARALLEL_FOR)) || p->dir.cs == CS_LOOP)) {
                uint32_t j = cu__next_index(stmt, i);
                /* a barrier first: thread 0's statements before it are seen */
                buf_puts(b, "        __syncthreads();\n        {\n");
                if (j < nc)
                    cu__emit_shared_loop(c, r, p, ts_node_named_child(stmt, j), ctx, b);
                buf_puts(b, "        }\n        __syncthreads();\n");
                i = j; /* the loop itself */
                continue;
            }
            int sk = atomic_pragma_kind(u, k);
            if (sk != SYNC_NONE) {
                /* atomic, critical: once per team (thread 0), unless the atomic's
                 * variable is each thread's own; flush: every thread */
                SyncCx sx;
                AtomicEmit a;
                cu__sync_init(c, ctx, &sx, &a);
                a.no_frame = 1;
                TSNode st = sk == SYNC_FLUSH ? (TSNode){0} : atomic_pragma_stmt(k);
                Buf code = {0};
                int ok = atomic_emit(&a, k, &code) == 0;
                c->errors += a.errors;
                int all = sk == SYNC_FLUSH || (ok && sk == SYNC_ATOMIC && !a.was_atomic && cu__writes_locals_only(c, st, 0));
                if (!all)
                    buf_puts(b, "        if (threadIdx.x == 0) {\n");
                cu__line_dir(c, b, ts_node_is_null(st) ? k : st);
                buf_puts(b, code.data ? code.data : "");
                buf_puts(b, all ? "\n" : "\n        }\n        __syncthreads();\n");
                buf_free(&code);
                while (ok && !ts_node_is_null(st) && i + 1 < nc && !ts_node_eq(ts_node_named_child(stmt, i), st))
                    i++;
                continue;
            }
            cu__check_dropped(c, k);
            continue; /* other pragmas: blanked */
        }
        if (node_is(k, "declaration") || cu__writes_locals_only(c, k, 0)) {
            cu__line_dir(c, b, k);
            cu__copy(c, k, b, ctx);
            buf_puts(b, "\n");
        } else {
            buf_puts(b, "        if (threadIdx.x == 0) {\n");
            cu__line_dir(c, b, k);
            cu__copy(c, k, b, ctx);
            buf_puts(b, "\n        }\n        __syncthreads();\n");
        }
    }
    while (c->team_shared.len > shared0)
        free(c->team_shared.items[--c->team_shared.len]);
    for (int i = 0; i < roots.len; i++)
        free(roots.items[i]);
    vec_free(&roots);
    vec_free(&reduced);
}

/* ---- shared-memory staging of an inner loop (the N-body pattern) ------------
 *
 * In a loop-shaped kernel whose body is { pre; for (j = lo; j < hi; j++) L; post }
 * where pre and L write only local variables, the bounds of the j loop are the
 * same for every thread, and read-only arrays are read in L only as A[j], every
 * block loads tiles of those arrays into shared memory once and all its threads
 * read them from there, as a hand-written tiled kernel does. The outer loop
 * then advances a block at a time so that every thread reaches the barriers;
 * threads past the end run pre and L on the first iteration and skip post.
 * MACC_NO_STAGING=1 at translation time turns it off. */

#define CU_TILE 256 /* default block */
#define CU_STAGE_TILE 512 /* a staged loop's largest tile (macc_stage_block) */

typedef struct Stage {
    TSNode loop;       /* the j loop */
    CLoop l;
    Vec arrays;        /* char * names */
    Vec types;         /* char * element types */
} Stage;

static int cu__jumps(TSNode n)
{
    if (node_is(n, "break_statement") || node_is(n, "return_statement") || node_is(n, "goto_statement") ||
        node_is(n, "continue_statement"))
        return 1;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (cu__jumps(ts_node_named_child(n, i)))
            return 1;
    return 0;
}

/* Is every use of `name` in n a subscript, name[var] (counted) or name[e]
 * with e free of var? */
static int cu__only_indexed(const Cu *c, TSNode n, const char *name, const char *var, int *uses)
{
    if (node_is(n, "identifier")) {
        char *t = node_text(c->u, n);
        int hit = !strcmp(t, name);
        free(t);
        if (!hit)
            return 1;
        TSNode p = ts_node_parent(n);
        if (!node_is(p, "subscript_expression") || !ts_node_eq(node_field(p, "argument"), n))
            return 0;
        /* A[var] is staged; A[e] with e free of var stays a global read */
        TSNode ix = node_field(p, "index");
        char *it = node_text(c->u, ix);
        int ok;
        if (!strcmp(it, var)) {
            (*uses)++;
            ok = 1;
        } else {
            Vec ids = {0};
            an_text_ids(it, &ids);
            ok = !cu__in(&ids, var);
            for (int i = 0; i < ids.len; i++)
                free(ids.items[i]);
            vec_free(&ids);
        }
        free(it);
        return ok;
    }
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (!cu__only_indexed(c, ts_node_named_child(n, i), name, var, uses))
            return 0;
    return 1;
}

/* Does the expression text use only scalar captures (and macros, constants)? */
static int cu__names_only_scalars(const Cu *c, const Region *r, const char *s)
{
    while (*s) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_') {
            const char *w = s;
            while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')
                s++;
            char *name = xstrndup(w, (size_t)(s - w));
            const Capture *k = cu__cap(r, name);
            int dev = !k && strset_has(&c->devvars, name, strlen(name)); /* a device copy: not on the host */
            free(name);
            if ((k && k->kind != CAP_SCALAR) || dev)
                return 0;
        } else {
            s++;
        }
    }
    return 1;
}

static void cu__free_stage(Stage *st)
{
    cu__free_loop(&st->l);
    for (int i = 0; i < st->arrays.len; i++) {
        free(st->arrays.items[i]);
        free(st->types.items[i]);
    }
    vec_free(&st->arrays);
    vec_free(&st->types);
}

/* A canonical loop, or nothing (no diagnostic: staging is an optimisation). */
static int cu__loop_quiet(Cu *c, const Region *r, TSNode loop, CLoop *l)
{
    Diag *dg = c->u->diag;
    FILE *out = dg->out;
    int errs = dg->errors, cerrs = c->errors;
    dg->out = fopen("/dev/null", "w");
    int rc = dg->out ? cu__loop(c, r, loop, l) : -1;
    if (dg->out)
        fclose(dg->out);
    dg->out = out;
    dg->errors = errs;
    c->errors = cerrs;
    return rc;
}

static int cu__stage_plan(Cu *c, const Region *r, Stage *st)
{
    memset(st, 0, sizeof *st);
    if (r->collapse != 1 || !node_is(r->stmt, "for_statement"))
        return 0;
    TSNode body = node_field(r->stmt, "body");
    if (!node_is(body, "compound_statement"))
        return 0;
    uint32_t nc = ts_node_named_child_count(body);
    TSNode loop = {0};
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(body, i);
        if (node_is(k, "comment") || node_is(k, "preproc_call"))
            continue;
        if (node_is(k, "for_statement")) {
            loop = k;
            break;
        }
        if (!node_is(k, "declaration") && !node_is(k, "expression_statement"))
            return 0;
        if (cu__jumps(k) || !cu__writes_locals_only(c, k, 1))
            return 0;
    }
    if (ts_node_is_null(loop) || cu__loop_quiet(c, r, loop, &st->l) != 0)
        return 0;
    if (strcmp(st->l.step, "1") || (st->l.cmp != '<' && st->l.cmp != 'l') || !cu__names_only_scalars(c, r, st->l.lb) ||
        !cu__names_only_scalars(c, r, st->l.ub) || cu__jumps(st->l.body) || !cu__writes_locals_only(c, st->l.body, 1)) {
        cu__free_loop(&st->l);
        return 0;
    }
    st->loop = loop;
    for (int i = 0; i < r->caps.len; i++) {
        const Capture *k = r->caps.items[i];
        if (k->kind != CAP_PTR || k->written || k->map < 0)
            continue;
        const Decl *d = k->decl;
        /* a plain pointer to scalars: "*x", "*restrict x", "*const x" */
        const char *t = d->decl_text;
        if (t[0] != '*' || strchr(t + 1, '*') || strchr(t, '[') || strchr(t, '('))
            continue;
        int uses = 0;
        if (!cu__only_indexed(c, st->l.body, k->name, st->l.var, &uses) || !uses)
            continue;
        vec_push(&st->arrays, xstrdup(k->name));
        vec_push(&st->types, spec_unqualified(d->spec));
    }
    if (!st->arrays.len) {
        cu__free_stage(st);
        return 0;
    }
    return 1;
}

/* The vector type that holds one element of every staged array, when they are
 * two to four arrays of one type that CUDA has a vector of (float2, float4,
 * int2, int4, double2): a tile of those costs one shared-memory load per
 * iteration instead of one per array (a 128-bit broadcast for x, y, z).
 * NULL: one tile per array. */
static const char *cu__stage_vector(const Stage *st)
{
    int k = st->arrays.len;
    if (k < 2 || k > 4 || getenv("MACC_NO_STAGE_PACK"))
        return NULL;
    const char *t = st->types.items[0];
    for (int i = 1; i < k; i++)
        if (strcmp(st->types.items[i], t))
            return NULL;
    if (!strcmp(t, "float"))
        return k == 2 ? "float2" : "float4";
    if (!strcmp(t, "int"))
        return k == 2 ? "int2" : "int4";
    if (!strcmp(t, "double") && k == 2)
        return "double2";
    return NULL;
}

/* One tile's inner iterations: a full tile in steps of 32, each unrolled
 * (the tile, the block, is a multiple of 32 chosen at launch), or the last,
 * partial tile. */
static void cu__emit_staged_inner(Cu *c, Stage *st, const CopyCtx *sctx, Buf *b, int full)
{
    const char *ind = full ? "                    " : "                ";
    if (full)
        buf_puts(b, "                for (int macc_j0_ = 0; macc_j0_ < macc_tile_; macc_j0_ += 32) {\n"
                    "                    #pragma unroll\n"
                    "                    for (int macc_jj_ = macc_j0_; macc_jj_ < macc_j0_ + 32; macc_jj_++) {\n");
    else
        buf_puts(b, "                const int macc_jn_ = (int)(macc_jhi_ - macc_jt_);\n"
                    "                for (int macc_jj_ = 0; macc_jj_ < macc_jn_; macc_jj_++) {\n");
    buf_printf(b, "%s    %s %s = (%s)(macc_jt_ + macc_jj_);\n%s    (void)%s;\n", ind, st->l.type, st->l.var, st->l.type, ind,
               st->l.var);
    if (sctx->packed)
        buf_printf(b, "%s    const %s macc_sv_ = macc_sh_[macc_jj_];\n", ind, cu__stage_vector(st));
    cu__line_dir(c, b, st->l.body);
    cu__copy(c, st->l.body, b, sctx);
    buf_printf(b, "\n%s}\n", ind);
    if (full)
        buf_puts(b, "                }\n");
}

/* Thread t's element of the tile at macc_jt_ into shared memory. */
static void cu__emit_stage_load(Buf *b, const Stage *st, const char *vec, const char *ind)
{
    if (vec) {
        buf_printf(b, "%smacc_sh_[threadIdx.x] = make_%s(", ind, vec);
        int lanes = vec[strlen(vec) - 1] - '0';
        for (int a = 0; a < lanes; a++)
            if (a < st->arrays.len)
                buf_printf(b, "%s%s[macc_jt_ + threadIdx.x]", a ? ", " : "", (char *)st->arrays.items[a]);
            else
                buf_printf(b, ", (%s)0", (char *)st->types.items[0]);
        buf_puts(b, ");\n");
    } else {
        for (int a = 0; a < st->arrays.len; a++)
            buf_printf(b, "%smacc_sh_%s[threadIdx.x] = %s[macc_jt_ + threadIdx.x];\n", ind, (char *)st->arrays.items[a],
                       (char *)st->arrays.items[a]);
    }
}

static void cu__emit_staged(Cu *c, const Region *r, Stage *st, const CopyCtx *wctx, Buf *b, int tile)
{
    CLoop outer;
    if (cu__loop(c, r, r->stmt, &outer) != 0)
        return;
    char *trip = cu__trip(&outer);
    buf_printf(b, "    const long long macc_total_ = %s;\n", trip);
    free(trip);
    const char *vec = cu__stage_vector(st);
    if (vec)
        buf_printf(b, "    __shared__ %s macc_sh_[%d];\n", vec, tile);
    else
        for (int i = 0; i < st->arrays.len; i++)
            buf_printf(b, "    __shared__ %s macc_sh_%s[%d];\n", (char *)st->types.items[i],
                       (char *)st->arrays.items[i], tile);
    buf_puts(b, "    const int macc_tile_ = (int)blockDim.x;\n");
    buf_puts(b, "    for (long long macc_base_ = (long long)blockIdx.x * blockDim.x; macc_base_ < macc_total_;"
                " macc_base_ += (long long)gridDim.x * blockDim.x) {\n");
    buf_puts(b, "        const long long macc_it_ = macc_base_ + threadIdx.x;\n");
    buf_puts(b, "        const bool macc_act_ = macc_it_ < macc_total_;\n");
    buf_printf(b, "        %s %s = (%s)((%s) + (macc_act_ ? macc_it_ : 0LL) * %s);\n        (void)%s;\n", outer.type,
               outer.var, outer.type, outer.lb, outer.step, outer.var);
    buf_puts(b, "        {\n");
    TSNode body = node_field(r->stmt, "body");
    uint32_t nc = ts_node_named_child_count(body);
    CopyCtx sctx = *wctx;
    sctx.staged = &st->arrays;
    sctx.var = st->l.var;
    sctx.outer = outer.var; /* A[i]: read-only and the same for the whole j loop */
    sctx.packed = vec != NULL;
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(body, i);
        if (node_is(k, "comment") || node_is(k, "preproc_call"))
            continue;
        if (ts_node_eq(k, st->loop)) {
            buf_printf(b, "        const long long macc_jlo_ = (long long)(%s), macc_jhi_ = (long long)(%s)%s;\n",
                       st->l.lb, st->l.ub, st->l.cmp == 'l' ? " + 1" : "");
            for (int a = 0; a < st->arrays.len; a++)
                buf_printf(b, "        const %s macc_hv_%s = %s[%s];\n", (char *)st->types.items[a], (char *)st->arrays.items[a],
                           (char *)st->arrays.items[a], outer.var);
            /* whole tiles (every thread loads one element), then the rest;
             * the bounds are the same for every thread of the block */
            buf_puts(b, "        long long macc_jt_ = macc_jlo_;\n"
                        "        for (; macc_jt_ + macc_tile_ <= macc_jhi_; macc_jt_ += macc_tile_) {\n");
            cu__emit_stage_load(b, st, vec, "            ");
            buf_puts(b, "            __syncthreads();\n            {\n");
            cu__emit_staged_inner(c, st, &sctx, b, 1);
            buf_puts(b, "            }\n            __syncthreads();\n        }\n        if (macc_jt_ < macc_jhi_) {\n"
                        "            if (macc_jt_ + threadIdx.x < macc_jhi_) {\n");
            cu__emit_stage_load(b, st, vec, "                ");
            buf_puts(b, "            }\n            __syncthreads();\n            {\n");
            cu__emit_staged_inner(c, st, &sctx, b, 0);
            buf_puts(b, "            }\n            __syncthreads();\n");
            buf_puts(b, "        }\n        if (macc_act_) {\n");
            continue;
        }
        cu__line_dir(c, b, k);
        cu__copy(c, k, b, wctx);
        buf_puts(b, "\n");
    }
    buf_puts(b, "        }\n        }\n    }\n");
    cu__free_loop(&outer);
}

/* ---- calls the GPU cannot make ----------------------------------------------- */

/* Functions of the C library that device code may call: CUDA's device
 * versions (printf, malloc, the memory functions, assert's), macc_device.h's
 * (abort), every function of <math.h> and <complex.h> (by the header that
 * declares it), the compiler's builtins. */
static int cu__device_libc(const Cu *c, const char *name, size_t declared_at)
{
    /* CUDA's own device versions; macc_device.h's are the renamed ones (cu__omp_api) */
    static const char *const ok[] = {"printf", "vprintf", "malloc", "free", "memcpy", "memset", "__assert_fail", "abs",
                                     "labs", "llabs", NULL};
    for (int i = 0; ok[i]; i++)
        if (!strcmp(ok[i], name))
            return 1;
    for (int i = 0; cu__omp_api[i]; i++)
        if (!strcmp(cu__omp_api[i], name))
            return 1;
    if (!strncmp(name, "__builtin_", 10) || !strncmp(name, "omp_", 4) || !strncmp(name, "acc_", 4) ||
        !strncmp(name, "__nv", 4) || !strncmp(name, "macc_", 5))
        return 1;
    const char *f = source_file(c->u->src, declared_at);
    const char *base = f ? strrchr(f, '/') : NULL;
    base = base ? base + 1 : f ? f : "";
    return strstr(base, "math") || strstr(base, "complex"); /* math.h, mathcalls.h, cmath, complex.h */
}

/* Reports each call under n to a function that a system header declares and
 * the GPU cannot run (fopen, rand, ...), at the call, and looks inside the
 * file's functions that n calls (once each: seen). */
static void cu__check_calls(Cu *c, TSNode n, StrSet *seen)
{
    if (node_is(n, "call_expression")) {
        TSNode f = node_field(n, "function");
        if (node_is(f, "identifier")) {
            char *name = node_text(c->u, f);
            TSNode def = cu__devfunc_node(c, name, strlen(name));
            if (!ts_node_is_null(def)) {
                if (strset_add(seen, name, strlen(name)))
                    cu__check_calls(c, node_field(def, "body"), seen);
            } else if (!variant_of_call(c->u, f, cu__variant_context(c), 1) && !cu__stdio_form(c, n, &(int){0})) {
                TSNode where = {0};
                Decl *d = analyze_lookup(c->u, f, name, &where);
                if (d && d->is_function && !ts_node_is_null(where) &&
                    source_in_system(c->u->src, ts_node_start_byte(where)) &&
                    !cu__device_libc(c, name, ts_node_start_byte(where))) {
                    diag_error(c->u->diag, ts_node_start_byte(f),
                               "'%s' is not supported in the GPU version (a C library function with no device "
                               "version)",
                               name);
                    c->errors++;
                }
                decl_delete(d);
            }
            free(name);
        }
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        cu__check_calls(c, ts_node_child(n, i), seen);
}

/* Does text hold the type `long double` (words, not parts of names)? */
static int cu__has_long_double(const char *t)
{
    for (const char *p = t; (p = strstr(p, "long")) != NULL; p += 4) {
        if (p > t && ident_char(p[-1]))
            continue;
        const char *q = p + 4;
        while (*q == ' ' || *q == '\t' || *q == '\n')
            q++;
        if (q > p + 4 && !strncmp(q, "double", 6) && !ident_char(q[6]))
            return 1;
    }
    return 0;
}

/* long double, real or complex, in the region's variables or code: the GPU
 * has no 80-bit floating point (nvcc would make it double, and the data that
 * the host maps would not be what the kernel reads). */
static void cu__check_long_double(Cu *c, const Region *r)
{
    int found = 0;
    for (int i = 0; i < r->caps.len && !found; i++) {
        const Capture *k = r->caps.items[i];
        found = k->decl && cu__has_long_double(k->decl->spec);
    }
    if (!found) {
        char *t = node_text(c->u, r->stmt);
        found = cu__has_long_double(t);
        free(t);
    }
    if (found) {
        diag_error(c->u->diag, r->target->start,
                   "'long double' is not supported in the GPU version (the GPU has no 80-bit floating point)");
        c->errors++;
    }
}

/* Is map j of region r an array section through a pointer member of a
 * struct variable that the kernel gets by value (`map(to: s.p[0:n])`, s
 * firstprivate)? Then the kernel's copy of s must point at the device's
 * section, as OpenMP attaches it: returns the member's path ("s.p"), else
 * NULL (caller frees). */
static char *cu__member_ptr_map(const Region *r, int j)
{
    const RMap *m = r->maps.items[j];
    const char *dot = strchr(m->name, '.');
    if (!dot || strstr(m->name, "->") || strchr(m->name, '[') || strncmp(m->base, "(void *)(", 9))
        return NULL;
    char *root = xstrndup(m->name, (size_t)(dot - m->name));
    const Capture *k = cu__cap(r, root);
    free(root);
    if (!k || k->kind != CAP_SCALAR || !k->decl || k->decl->is_pointer || k->decl->is_array)
        return NULL;
    return xstrdup(m->name);
}

/* schedule(static, C) with a literal C > 1 (modifiers allowed): C, else 0.
 * Each GPU thread then runs chunks of C consecutive iterations in order, as
 * OpenMP's threads do, so a private variable carries from one iteration of a
 * chunk to the next; without it, one iteration per thread. */
static long cu__static_chunk(const Directive *d)
{
    const DirClause *s = directive_find(d, CL_SCHEDULE);
    if (!s || !s->arg)
        return 0;
    const char *a = s->arg, *colon = strchr(a, ':'), *comma = strchr(a, ',');
    if (colon && (!comma || colon < comma))
        a = colon + 1;
    while (*a == ' ' || *a == '\t')
        a++;
    if (strncmp(a, "static", 6) || !comma)
        return 0;
    const char *p = comma + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    char *end;
    long v = strtol(p, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    return end != p && !*end && v > 1 && v <= 1 << 20 ? v : 0;
}

static void cu__region(Cu *c, const Region *r, Buf *b)
{
    const RVersion *gv = region_gpu_version(r);
    if (!gv)
        return;
    const char *sfx = r->suffix;
    const Directive *d = gv->dir;
    unsigned cs = gv->cs;
    /* simd alone with safelen(n) (one team): iterations n apart may depend on
     * each other, so the loop runs n at a time in order, a step of one block
     * of n threads and a barrier (cu__emit_loop's stepped form) */
    const DirClause *safelen = (cs & CS_SIMD) && !(cs & (CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_PARALLEL | CS_FOR))
                                   ? directive_find(d, CL_SAFELEN)
                                   : NULL;
    if (safelen && !safelen->arg)
        safelen = NULL;
    const long chunk = safelen ? 0 : cu__static_chunk(d); /* schedule(static, C) */
    int inner = cu__has_inner_loops(c->u, r->stmt);
    enum { LOOP = CU_LOOP, TEAM_DIST = CU_TEAM_DIST, GENERIC = CU_GENERIC, PARALLEL = CU_PARALLEL } mode;
    if (cs & CS_PARALLEL_FOR)
        mode = LOOP;
    else if (cs & CS_DISTRIBUTE)
        mode = inner ? TEAM_DIST : LOOP;
    else if (cs & CS_SIMD)
        mode = LOOP;
    else if (CS_IS_PARALLEL_REGION(cs))
        mode = PARALLEL;
    else
        mode = GENERIC;
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *k = &d->clauses[i];
        /* linear: loop kernels (each iteration sets the variable from its number) */
        int bad_linear = 0;
        if (k->kind == CL_LINEAR) {
            bad_linear = mode != LOOP || safelen || chunk;
            for (int j = 0; j < k->nitems && !bad_linear; j++) {
                const Capture *x = cu__cap(r, k->items[j].base);
                bad_linear = !k->items[j].is_ident || !x || x->kind != CAP_WRITEBACK;
            }
        }
        if (bad_linear || (k->kind == CL_LASTPRIVATE && k->modifier)) {
            diag_error(c->u->diag, pragma_src_off(r->target, k->off), "'%s' is not supported in the GPU version%s",
                       k->kind == CL_LINEAR ? "linear" : "lastprivate(conditional:)",
                       k->kind == CL_LINEAR ? " (only on a loop of scalars run by every GPU thread)" : "");
            c->errors++;
            return;
        }
    }
    StrSet seen = {0};
    int errs = c->errors;
    cu__check_calls(c, r->stmt, &seen);
    strset_free(&seen);
    cu__check_long_double(c, r);
    if (c->errors > errs)
        return;

    c->r = r;
    buf_printf(b, "\n/* target region %s:%d: nvidia version */\n", c->path, r->line);
    buf_printf(b, "struct macc_a_%s {\n    int macc_unused_;\n", sfx);
    Vec wb = {0};
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        if (k->kind == CAP_SCALAR) {
            char *spec = spec_unqualified(k->decl->spec);
            buf_printf(b, "    %s %s;\n", spec, k->decl->decl_text);
            free(spec);
        }
    }
    region_launch_fields(r, b, NULL);
    buf_puts(b, "};\n");
    buf_printf(b, "struct macc_p_%s {\n    void *macc_unused_;\n", sfx);
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        const Decl *dd = k->decl;
        if (k->map < 0)
            continue;
        if (cu__cap_vm(k))
            buf_printf(b, "    void *%s;%s%s%s\n", k->name, k->ptr_back ? "\n    void *macc_pv_" : "",
                       k->ptr_back ? k->name : "", k->ptr_back ? ";" : "");
        else if (k->kind == CAP_PTR && k->ptr_back)
            buf_printf(b, "    %s %s;\n    void *macc_pv_%s;\n", dd->spec, dd->decl_text, k->name);
        else if (k->kind == CAP_PTR)
            buf_printf(b, "    %s %s;\n", dd->spec, dd->decl_text);
        else if (k->kind == CAP_ARRAY)
            buf_printf(b, "    %s %.*s(*%s)%s;\n", dd->spec, dd->arr_off, dd->decl_text, dd->name,
                       dd->decl_text + dd->arr_off + dd->arr_len);
        else if (k->kind == CAP_WRITEBACK) {
            char *spec = spec_unqualified(dd->spec);
            buf_printf(b, "    %s %.*s(*macc_p_%s)%s;\n", spec, dd->id_off, dd->decl_text, dd->name,
                       dd->decl_text + dd->id_off + dd->id_len);
            free(spec);
        }
    }
    for (int j = 0; j < r->maps.len; j++) { /* s.p[lo:n] of a struct s by value: the device's p */
        char *path = cu__member_ptr_map(r, j);
        if (path)
            buf_printf(b, "    void *macc_mp_%d; /* %s */\n", j, path);
        free(path);
    }
    /* firstprivate/lastprivate arrays: a copy in each thread (loop kernels,
     * clause of the loop construct), or copies in device memory made before
     * the launch, one per team (team kernels) or one for the task (a
     * firstprivate of the target alone) */
    Vec thread_arrays = {0}, scratch = {0};
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        if (k->kind != CAP_ARRAY || k->map < 0)
            continue;
        int fp = directive_lists(d, CL_FIRSTPRIVATE, k->name), lp = directive_lists(d, CL_LASTPRIVATE, k->name);
        fp |= directive_lists(d, CL_PRIVATE, k->name); /* the same, uninitialised */
        if ((mode == LOOP || mode == PARALLEL) && (fp || lp)) /* PARALLEL: parallel's copies are per thread */
            vec_push(&thread_arrays, k->name);
        else if (fp || lp || k->target_fp) {
            vec_push(&scratch, k->name);
            buf_printf(b, "    void *macc_fp_%s;\n", k->name);
        }
    }
    buf_puts(b, "};\n");

    /* reductions of the loop construct (grid-wide); in team kernels, reductions
     * of the version's construct: private per thread, each team's result
     * combined atomically at the end */
    Vec reds = {0}, treds = {0};
    if (mode == LOOP)
        cu__reductions(r, d, &reds);
    else if (mode != PARALLEL) /* a parallel region (one block) combines its own */
        cu__reductions(r, d, &treds);
    /* writeback scalars that are neither reductions nor lastprivate: shared through the pointer */
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        if (k->kind != CAP_WRITEBACK)
            continue;
        int special = 0;
        for (int j = 0; j < reds.len; j++)
            special |= ((Red *)reds.items[j])->cap == k;
        for (int v = 0; v < r->nversions; v++)
            for (int q = 0; q < r->versions[v].dir->nclauses; q++) {
                const DirClause *cl = &r->versions[v].dir->clauses[q];
                if (cl->kind == CL_LASTPRIVATE || cl->kind == CL_REDUCTION || cl->kind == CL_LINEAR)
                    for (int j = 0; j < cl->nitems; j++)
                        special |= !strcmp(cl->items[j].base, k->name);
            }
        if (!special)
            vec_push(&wb, k->name);
    }
    CopyCtx ctx = {.writeback = &wb};
    /* writes to these run once per team in team kernels (thread 0) */
    Vec nonlocal = {0};
    for (int i = 0; i < wb.len; i++)
        vec_push(&nonlocal, wb.items[i]);
    for (int i = 0; i < treds.len; i++)
        vec_push(&nonlocal, ((Red *)treds.items[i])->cap->name);
    c->mode = mode;
    c->nonlocal = &nonlocal;
    c->thread_arrays = &thread_arrays;

    /* kernel */
    Stage st;
    int staged = 0, tile = CU_TILE;
    {
        /* the tile is the block: a literal thread_limit/num_threads, else 256 */
        const DirClause *bl = directive_find(d, CL_NUM_THREADS);
        if (!bl)
            bl = directive_find(d, CL_THREAD_LIMIT);
        if (!bl)
            bl = directive_find(&r->target->dir, CL_THREAD_LIMIT);
        if (bl) {
            const char *a = bl->arg ? bl->arg : "";
            tile = a[strspn(a, "0123456789")] == 0 && *a ? atoi(a) : 0;
            if (tile < 32 || tile > 1024 || (tile & (tile - 1)))
                tile = 0;
        } else {
            tile = CU_STAGE_TILE; /* the largest tile; the block, chosen at launch, is the tile */
        }
    }
    const DirClause *if_parallel = NULL; /* if(parallel: e): one thread per block when false */
    for (int j = 0; j < d->nclauses && !if_parallel; j++)
        if (d->clauses[j].kind == CL_IF && d->clauses[j].name && !strcmp(d->clauses[j].name, "parallel"))
            if_parallel = &d->clauses[j];
    if (mode == LOOP && tile && !reds.len && !if_parallel && !directive_find(d, CL_LASTPRIVATE) &&
        !directive_find(d, CL_LINEAR) && !getenv("MACC_NO_STAGING"))
        staged = cu__stage_plan(c, r, &st);
    /* a staged kernel's blocks have exactly `tile` threads: it says so, as a
     * hand-written kernel does (registers budgeted for that block, not 1024) */
    char *bounds = staged ? xsprintf("__launch_bounds__(%d) ", tile) : NULL;
    buf_printf(b, "__global__ %svoid macc_g_%s(const struct macc_a_%s macc_a_, const struct macc_p_%s macc_p_",
               bounds ? bounds : "", sfx, sfx, sfx);
    free(bounds);
    for (int i = 0; i < reds.len; i++) {
        Red *x = reds.items[i];
        buf_printf(b, ", %s *macc_part_%s", x->type, x->cap->name);
    }
    buf_puts(b, ")\n{\n    (void)macc_a_; (void)macc_p_;\n");
    int shared_scalars = 0;
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        const Decl *dd = k->decl;
        switch (k->kind) {
        case CAP_SCALAR:
            if (mode == PARALLEL && k->written && !cu__named_private(d, k->name)) {
                /* shared by the threads of the parallel region, as in OpenMP */
                char *spec = spec_unqualified(dd->spec);
                buf_printf(b, "    __shared__ %s %s;\n    if (threadIdx.x == 0) %s = macc_a_.%s;\n", spec, dd->decl_text,
                           k->name, k->name);
                free(spec);
                shared_scalars = 1;
                vec_push(&c->team_shared, xstrdup(k->name)); /* atomics on it are atomics */
                break;
            }
            buf_printf(b, "    %s %s = macc_a_.%s;\n", dd->spec, dd->decl_text, k->name);
            for (int j = 0; j < r->maps.len; j++) {
                char *path = cu__member_ptr_map(r, j);
                size_t kl = strlen(k->name);
                if (path && !strncmp(path, k->name, kl) && path[kl] == '.')
                    buf_printf(b, "    memcpy((void *)&(%s), &macc_p_.macc_mp_%d, sizeof(void *));\n", path, j);
                free(path);
            }
            break;
        case CAP_PRIVATE:
            buf_printf(b, "    %s %s;\n", dd->spec, dd->decl_text);
            break;
        case CAP_PTR:
            if (k->map >= 0 && cu__cap_vm(k)) {
                char *src = xsprintf("macc_p_.%s", k->name);
                buf_puts(b, "    ");
                if (!cu__vm_decl(b, dd->spec, dd->decl_text, dd->id_off, dd->id_len, k->name, src))
                    buf_printf(b, "%s %s = (%s %.*s%s)%s", dd->spec, dd->decl_text, dd->spec, dd->id_off, dd->decl_text,
                               dd->decl_text + dd->id_off + dd->id_len, src);
                buf_puts(b, ";\n");
                free(src);
            } else if (k->map >= 0)
                buf_printf(b, "    %s %s = macc_p_.%s;\n", dd->spec, dd->decl_text, k->name);
            break;
        case CAP_ARRAY:
            if (cu__in(&thread_arrays, k->name)) {
                char *spec = spec_unqualified(dd->spec);
                buf_printf(b, "    %s %s;\n", spec, dd->decl_text);
                if (directive_lists(d, CL_FIRSTPRIVATE, k->name) || k->target_fp)
                    buf_printf(b, "    memcpy(%s, (const void *)macc_p_.%s, sizeof %s);\n", k->name, k->name, k->name);
                free(spec);
            } else if (cu__in(&scratch, k->name)) {
                /* this team's copy (the task's in a loop kernel) */
                char *at = cu__array_type(dd);
                char *off = mode == LOOP ? xstrdup("") : xsprintf(" + (size_t)blockIdx.x * sizeof(%s)", at);
                buf_printf(b, "    %s %.*s(*%s)%s = (%s %.*s(*)%s)((unsigned char *)macc_p_.macc_fp_%s%s);\n", dd->spec,
                           dd->arr_off, dd->decl_text, dd->name, dd->decl_text + dd->arr_off + dd->arr_len, dd->spec,
                           dd->arr_off, dd->decl_text, dd->decl_text + dd->arr_off + dd->arr_len, k->name, off);
                free(off);
                free(at);
            } else if (cu__cap_vm(k)) {
                char *src = xsprintf("macc_p_.%s", k->name);
                buf_puts(b, "    ");
                if (!cu__vm_decl(b, dd->spec, dd->decl_text, dd->id_off, dd->id_len, k->name, src))
                    buf_printf(b, "%s %.*s(*%s)%s = (%s %.*s(*)%s)%s", dd->spec, dd->arr_off, dd->decl_text, dd->name,
                               dd->decl_text + dd->arr_off + dd->arr_len, dd->spec, dd->arr_off, dd->decl_text,
                               dd->decl_text + dd->arr_off + dd->arr_len, src);
                buf_puts(b, ";\n");
                free(src);
            } else {
                buf_printf(b, "    %s %.*s(*%s)%s = macc_p_.%s;\n", dd->spec, dd->arr_off, dd->decl_text, dd->name,
                           dd->decl_text + dd->arr_off + dd->arr_len, k->name);
            }
            break;
        case CAP_WRITEBACK: {
            char *spec = spec_unqualified(dd->spec);
            buf_printf(b, "    %s %.*s(*macc_p_%s)%s = macc_p_.macc_p_%s;\n", spec, dd->id_off, dd->decl_text, dd->name,
                       dd->decl_text + dd->id_off + dd->id_len, k->name);
            int bound = cu__in(&wb, k->name) && cu__in_loop_header(c, r->stmt, k->name);
            if (!cu__in(&wb, k->name) && region_init_copy(r, k->name))
                buf_printf(b, "    %s %s = macc_a_.macc_init_%s;\n", spec, dd->decl_text, k->name);
            else if (!cu__in(&wb, k->name))
                buf_printf(b, "    %s %s = *macc_p_%s;\n", spec, dd->decl_text, k->name);
            else if (bound) /* loop bounds are read once, before the loop */
                buf_printf(b, "    const %s %s = *macc_p_%s;\n", spec, dd->decl_text, k->name);
            free(spec);
            if (bound)
                buf_printf(b, "    (void)%s;\n", k->name);
            break;
        }
        }
        if (k->kind != CAP_WRITEBACK || !cu__in(&wb, k->name))
            buf_printf(b, "    (void)%s;\n", k->name);
    }
    for (int i = 0; i < reds.len; i++) {
        Red *x = reds.items[i];
        buf_printf(b, "    %s = macc_red<%s, %s>::id();\n", x->cap->name, cu__red_op(x->op), x->type);
    }
    for (int i = 0; i < treds.len; i++) {
        Red *x = treds.items[i];
        buf_printf(b, "    %s = macc_red<%s, %s>::id();\n", x->cap->name, cu__red_op(x->op), x->type);
    }
    if (shared_scalars)
        buf_puts(b, "    __syncthreads();\n");
    int collapse = r->collapse > 0 ? r->collapse : 1;
    if (staged) {
        cu__emit_staged(c, r, &st, &ctx, b, tile);
        cu__free_stage(&st);
    } else if (mode == LOOP) {
        c->stepped = safelen != NULL && !staged;
        c->chunk = c->stepped || staged ? 0 : chunk;
        cu__emit_loop(c, r, r->stmt, collapse, "(long long)blockIdx.x * blockDim.x + threadIdx.x",
                      "(long long)gridDim.x * blockDim.x", &ctx, b, "    ");
        c->stepped = 0;
        c->chunk = 0;
        for (int i = 0; i < reds.len; i++) {
            Red *x = reds.items[i];
            buf_printf(b, "    { %s macc_v_ = macc_block_reduce<%s, %s>(%s); if (threadIdx.x == 0) macc_part_%s[blockIdx.x] = macc_v_; }\n",
                       x->type, cu__red_op(x->op), x->type, x->cap->name, x->cap->name);
        }
    } else if (mode == TEAM_DIST) {
        CLoop l;
        if (cu__loop(c, r, r->stmt, &l) == 0) {
            char *trip = cu__trip(&l);
            buf_printf(b, "    const long long macc_total_ = %s;\n", trip);
            buf_puts(b, "    for (long long macc_it_ = blockIdx.x; macc_it_ < macc_total_; macc_it_ += gridDim.x) {\n");
            buf_printf(b, "        %s %s = (%s)((%s) + macc_it_ * %s);\n        (void)%s;\n", l.type, l.var, l.type, l.lb,
                       l.step, l.var);
            cu__emit_team_body(c, r, l.body, &ctx, b);
            /* lastprivate: the team that ran the last iteration */
            for (int q = 0; q < d->nclauses; q++) {
                const DirClause *cl = &d->clauses[q];
                if (cl->kind != CL_LASTPRIVATE)
                    continue;
                for (int j = 0; j < cl->nitems; j++) {
                    const char *v = cl->items[j].base;
                    const Capture *k = cu__cap(r, v);
                    if (k && k->kind == CAP_ARRAY && cu__in(&scratch, v)) {
                        char *at = cu__array_type(k->decl);
                        buf_printf(b, "        __syncthreads();\n        if (threadIdx.x == 0 && macc_it_ == macc_total_ - 1) "
                                      "memcpy((void *)macc_p_.%s, (const void *)%s, sizeof(%s));\n",
                                   v, v, at);
                        free(at);
                    } else if (k && k->kind == CAP_WRITEBACK && !cu__in(&wb, v)) {
                        if (!strcmp(v, l.var))
                            buf_printf(b, "        if (threadIdx.x == 0 && macc_it_ == macc_total_ - 1) *macc_p_%s = (%s) + macc_total_ * %s;\n",
                                       v, l.lb, l.step);
                        else
                            buf_printf(b, "        if (threadIdx.x == 0 && macc_it_ == macc_total_ - 1) *macc_p_%s = %s;\n", v, v);
                    }
                }
            }
            buf_puts(b, "    }\n");
            free(trip);
            cu__free_loop(&l);
        }
    } else if (mode == PARALLEL) {
        /* every thread of one block runs the region; its reductions start at the
         * identity on every thread and are combined over the block at the end */
        Vec preds = {0};
        CopyCtx sctx = ctx;
        sctx.spmd = 1;
        cu__reductions(r, d, &preds);
        for (int i = 0; i < preds.len; i++) {
            Red *x = preds.items[i];
            buf_printf(b, "    %s macc_orig_%s = %s;\n    %s = macc_red<%s, %s>::id();\n", x->type, x->cap->name,
                       x->cap->name, x->cap->name, cu__red_op(x->op), x->type);
        }
        cu__spmd(c, r, r->stmt, &sctx, b);
        for (int i = 0; i < preds.len; i++) {
            Red *x = preds.items[i];
            buf_printf(b, "    %s = macc_red<%s, %s>::op(macc_orig_%s, macc_block_reduce<%s, %s>(%s));\n", x->cap->name,
                       cu__red_op(x->op), x->type, x->cap->name, cu__red_op(x->op), x->type, x->cap->name);
            free(x->type);
            free(x);
        }
        vec_free(&preds);
    } else {
        cu__emit_team_body(c, r, r->stmt, &ctx, b);
    }
    /* write back lastprivate/reduction copies in generic shapes: each team's
     * reduction result combined atomically (the original value included once) */
    if (mode != LOOP) {
        for (int i = 0; i < r->caps.len; i++) {
            Capture *k = r->caps.items[i];
            if (k->kind != CAP_WRITEBACK || cu__in(&wb, k->name))
                continue;
            const Red *tr = NULL;
            for (int j = 0; j < treds.len; j++)
                if (((Red *)treds.items[j])->cap == k)
                    tr = treds.items[j];
            if (tr)
                buf_printf(b, "    if (threadIdx.x == 0) (void)macc_atomic_fetch<%s>(macc_p_%s, %s);\n",
                           cu__red_atomic(tr->op), k->name, k->name);
            else if (!(mode == TEAM_DIST && directive_lists(d, CL_LASTPRIVATE, k->name)))
                buf_printf(b, "    if (threadIdx.x == 0 && blockIdx.x == 0) *macc_p_%s = %s;\n", k->name, k->name);
        }
    }
    for (int i = 0; i < r->caps.len; i++) { /* map(from: p): the pointer's value comes back */
        Capture *k = r->caps.items[i];
        if (k->kind == CAP_PTR && k->ptr_back)
            buf_printf(b, "    if (threadIdx.x == 0 && blockIdx.x == 0) memcpy(macc_p_.macc_pv_%s, &%s, sizeof %s);\n",
                       k->name, k->name, k->name);
    }
    buf_puts(b, "}\n");

    /* launch function */
    buf_printf(b, "extern \"C\" int macc_k_%s_nvidia(void *macc_args_, MACC_TaskEnv *macc_env_)\n{\n", sfx);
    buf_printf(b, "    const struct macc_a_%s *macc_a_ = (const struct macc_a_%s *)macc_args_;\n", sfx, sfx);
    buf_printf(b, "    struct macc_p_%s macc_p_;\n    memset(&macc_p_, 0, sizeof macc_p_);\n", sfx);
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        if (k->map < 0 || (k->kind != CAP_PTR && k->kind != CAP_ARRAY && k->kind != CAP_WRITEBACK))
            continue;
        if (k->kind == CAP_WRITEBACK)
            buf_printf(b, "    memcpy((void *)&macc_p_.macc_p_%s, &macc_env_->ptrs[%d], sizeof(void *));\n", k->name, k->map);
        else
            buf_printf(b, "    memcpy((void *)&macc_p_.%s, &macc_env_->ptrs[%d], sizeof(void *));\n", k->name, k->map);
        if (k->kind == CAP_PTR && k->ptr_back)
            buf_printf(b, "    macc_p_.macc_pv_%s = macc_env_->ptrs[%d];\n", k->name, k->ptr_back - 1);
    }
    for (int j = 0; j < r->maps.len; j++) {
        char *path = cu__member_ptr_map(r, j);
        if (path)
            buf_printf(b, "    macc_p_.macc_mp_%d = macc_env_->ptrs[%d];\n", j, j);
        free(path);
    }
    buf_puts(b, "    cudaStream_t macc_s_ = (cudaStream_t)macc_env_->stream;\n");
    Buf detach = {0};
    for (int j = 0; j < r->maps.len; j++) {
        const char *member;
        const Capture *k = region_member_attach(r, j, &member);
        if (!k)
            continue;
        char *spec = spec_unqualified(k->decl->spec);
        /* attach: the device copy of the struct points at the device's section
         * (on the task's stream: after the struct's copy in, before the kernel),
         * and at the host's again after the kernel (what a copy back brings) */
        buf_printf(b,
                   "    macc_set_ptr<<<1, 1, 0, macc_s_>>>((void **)((char *)macc_p_.macc_p_%s + __builtin_offsetof(%s, %s)), "
                   "macc_env_->ptrs[%d]); /* attach %s.%s */\n",
                   k->name, spec, member, j, k->name, member);
        buf_printf(&detach,
                   "    macc_set_ptr<<<1, 1, 0, macc_s_>>>((void **)((char *)macc_p_.macc_p_%s + __builtin_offsetof(%s, %s)), "
                   "macc_a_->macc_mh_%d); /* detach %s.%s */\n",
                   k->name, spec, member, j, k->name, member);
        free(spec);
    }
    const DirClause *tl = directive_find(d, CL_THREAD_LIMIT);
    if (!tl) /* thread_limit on the target line bounds every version */
        tl = directive_find(&r->target->dir, CL_THREAD_LIMIT);
    const DirClause *nth = directive_find(d, CL_NUM_THREADS);
    const DirClause *nt = directive_find(d, CL_NUM_TEAMS);
    /* scalars for the clause expressions and the loop bounds */
    for (int i = 0; i < r->caps.len; i++) {
        Capture *k = r->caps.items[i];
        if (k->kind == CAP_SCALAR)
            buf_printf(b, "    %s %s = macc_a_->%s; (void)%s;\n", k->decl->spec, k->decl->decl_text, k->name, k->name);
    }
    int inner_threads = (mode != LOOP && inner) || mode == PARALLEL;
    if (staged)
        buf_printf(b, "    /* inner loop staged through shared memory in tiles of one block (at most %d) */\n", tile);
    /* clause expressions were evaluated where the region was encountered
     * (OpenMP's rule) and came in the argument block */
    int vix = (int)(gv - r->versions);
    char *nth_f = nth ? xsprintf("macc_a_->macc_%s_v%d", "num_threads", vix) : NULL;
    char *tl_f = tl ? xsprintf("macc_a_->macc_%s_v%d", "thread_limit", vix) : NULL;
    char *nt_f = nt ? xsprintf("macc_a_->macc_%s_v%d", "num_teams", vix) : NULL;
    char tile_s[16];
    snprintf(tile_s, sizeof tile_s, "%d", staged ? tile : CU_TILE); /* a staged kernel's block is its tile */
    buf_printf(b, "    int macc_block_ = %s%s%s;\n", nth ? "(int)(" : tl ? "(int)(" : "",
               nth ? nth_f : tl ? tl_f : (mode == LOOP || inner_threads) ? tile_s : "1", nth || tl ? ")" : "");
    const DirClause *ds = directive_find(d, CL_DIST_SCHEDULE);
    const char *ds_chunk = ds && ds->arg ? strchr(ds->arg, ',') : NULL;
    if (ds_chunk && mode == LOOP && (cs & CS_DISTRIBUTE) && !(cs & CS_PARALLEL_FOR) && !nth && !tl)
        /* distribute alone, dist_schedule(static, C): a team (block) of C threads
         * per chunk, chunks to teams round-robin, as the grid-stride loop deals them */
        buf_printf(b, "    macc_block_ = (int)(%s);\n", ds_chunk + 1);
    if (nth && tl) /* num_threads bounded by the thread_limit */
        buf_printf(b, "    if ((int)(%s) > 0 && macc_block_ > (int)(%s)) macc_block_ = (int)(%s);\n", tl_f, tl_f, tl_f);
    if (safelen && mode == LOOP) /* a constant: at most that many iterations at once */
        buf_printf(b, "    if ((long long)(%s) < macc_block_) macc_block_ = (int)(%s); /* safelen */\n", safelen->arg,
                   safelen->arg);
    buf_puts(b, "    if (macc_block_ < 1) macc_block_ = 1;\n    if (macc_block_ > 1024) macc_block_ = 1024;\n");
    if (if_parallel && if_parallel->arg)
        buf_printf(b, "    if (!macc_a_->macc_if_parallel_v%d) macc_block_ = 1; /* if(parallel: false) */\n", vix);
    if (reds.len || mode != LOOP)
        buf_puts(b, "    { int p2_ = 1; while (p2_ * 2 <= macc_block_) p2_ *= 2; macc_block_ = p2_; }\n");
    int host_total = 0;
    if (mode == LOOP) {
        /* the host knows the trip count when the bounds use only scalars */
        Buf tb = {0};
        int ok = 1;
        buf_puts(&tb, "1LL");
        for (int k = 0; k < collapse && ok; k++) {
            CLoop l;
            TSNode loop = node_nth_loop(r->stmt, k);
            if (cu__loop(c, r, loop, &l) != 0) {
                ok = 0;
                break;
            }
            /* bounds that use pointers or arrays: known only on the device */
            if (!cu__names_only_scalars(c, r, l.lb) || !cu__names_only_scalars(c, r, l.ub) ||
                !cu__names_only_scalars(c, r, l.step))
                ok = 0;
            char *trip = cu__trip(&l);
            buf_printf(&tb, " * %s", trip);
            free(trip);
            cu__free_loop(&l);
        }
        host_total = ok;
        if (ok)
            buf_printf(b, "    const long long macc_total_ = %s;\n    if (macc_total_ <= 0) return 0;\n", tb.data);
        else
            buf_puts(b, "    const long long macc_total_ = 1LL << 40; /* bounds known only on the device */\n");
        buf_free(&tb);
        if (ok && chunk > 1 && !staged) /* a thread per chunk of C iterations */
            buf_printf(b, "    const long long macc_threads_ = (macc_total_ + %ldLL - 1) / %ldLL;\n", chunk, chunk);
        const char *tot = ok && chunk > 1 && !staged ? "macc_threads_" : "macc_total_";
        if (ok && !nth && !tl && !nt && !ds_chunk && !staged && (cs & CS_TEAMS))
            /* no block size given: a small loop spread over every SM */
            buf_printf(b, "    macc_block_ = macc_loop_block(%s, macc_block_);\n", tot);
        else if (ok && !nth && !tl && staged)
            /* a staged loop's tile is its block: the largest that fills the GPU */
            buf_puts(b, "    macc_block_ = macc_stage_block(macc_total_, macc_block_);\n");
        buf_printf(b, "    int macc_grid_ = macc_grid_size(%s, macc_block_, %s%s%s, %d);\n", tot, nt ? "(int)(" : "",
                   nt ? nt_f : (cs & CS_TEAMS) ? "0" : "1", nt ? ")" : "", reds.len > 0 || !host_total);
    } else if (mode == TEAM_DIST) {
        buf_printf(b, "    int macc_grid_ = %s%s%s;\n", nt ? "(int)(" : "", nt ? nt_f : "1024", nt ? ")" : "");
        buf_puts(b, "    if (macc_grid_ < 1) macc_grid_ = 1;\n");
    } else {
        buf_puts(b, "    int macc_grid_ = 1;\n");
    }
    for (int i = 0; i < scratch.len; i++) {
        /* copies of firstprivate/lastprivate arrays: one per team, or one for the task */
        const Capture *k = cu__cap(r, scratch.items[i]);
        char *at = cu__array_type(k->decl);
        buf_printf(b, "    { const size_t macc_b_ = sizeof(%s); const int macc_n_ = %s;\n"
                      "      cudaError_t e_ = cudaMallocAsync(&macc_p_.macc_fp_%s, macc_b_ * (size_t)macc_n_, macc_s_);\n"
                      "      if (e_ != cudaSuccess) return (int)e_;\n",
                   at, mode == LOOP ? "1" : "macc_grid_", k->name);
        if (directive_lists(d, CL_FIRSTPRIVATE, k->name) || k->target_fp)
            buf_printf(b, "      const size_t macc_all_ = macc_b_ * (size_t)macc_n_;\n"
                          "      macc_replicate<<<(int)((macc_all_ + 255) / 256 < 1024 ? (macc_all_ + 255) / 256 : 1024), 256, 0, macc_s_>>>("
                          "(unsigned char *)macc_p_.macc_fp_%s, (const unsigned char *)macc_p_.%s, macc_b_, macc_n_);\n",
                       k->name, k->name);
        buf_puts(b, "    }\n");
        free(at);
    }
    for (int i = 0; i < reds.len; i++) {
        Red *x = reds.items[i];
        buf_printf(b, "    %s *macc_part_%s = NULL;\n", x->type, x->cap->name);
        buf_printf(b, "    { cudaError_t e_ = cudaMallocAsync((void **)&macc_part_%s, sizeof(%s) * (size_t)macc_grid_, macc_s_); if (e_ != cudaSuccess) return (int)e_; }\n",
                   x->cap->name, x->type);
    }
    /* the launch's size: the runtime's default tokens for the region (a kernel that fills its GPU
     * four times over runs two at once, RUNTIME.md "Tokens") */
    buf_puts(b, "    macc_env_->threads = (long long)macc_grid_ * macc_block_;\n");
    buf_printf(b, "    macc_g_%s<<<macc_grid_, macc_block_, 0, macc_s_>>>(*macc_a_, macc_p_", sfx);
    for (int i = 0; i < reds.len; i++)
        buf_printf(b, ", macc_part_%s", ((Red *)reds.items[i])->cap->name);
    buf_puts(b, ");\n");
    for (int i = 0; i < reds.len; i++) {
        Red *x = reds.items[i];
        buf_printf(b, "    macc_finish_reduce<%s, %s><<<1, 256, 0, macc_s_>>>(macc_part_%s, macc_grid_, macc_p_.macc_p_%s);\n",
                   cu__red_op(x->op), x->type, x->cap->name, x->cap->name);
        buf_printf(b, "    cudaFreeAsync(macc_part_%s, macc_s_);\n", x->cap->name);
    }
    for (int i = 0; i < scratch.len; i++)
        buf_printf(b, "    cudaFreeAsync(macc_p_.macc_fp_%s, macc_s_);\n", (char *)scratch.items[i]);
    if (detach.len)
        buf_put(b, detach.data, detach.len);
    buf_free(&detach);
    buf_puts(b, "    return (int)cudaGetLastError();\n}\n");
    for (int i = 0; i < reds.len; i++) {
        Red *x = reds.items[i];
        free(x->type);
        free(x);
    }
    for (int i = 0; i < treds.len; i++) {
        Red *x = treds.items[i];
        free(x->type);
        free(x);
    }
    vec_free(&reds);
    vec_free(&treds);
    vec_free(&wb);
    vec_free(&nonlocal);
    vec_free(&thread_arrays);
    vec_free(&scratch);
    while (c->team_shared.len)
        free(c->team_shared.items[--c->team_shared.len]);
    c->r = NULL;
    c->nonlocal = NULL;
    c->thread_arrays = NULL;
    free(nth_f);
    free(tl_f);
    free(nt_f);
}

/* The emitter's state for unit u: the unit's device functions (not owned)
 * and the names of its device variables. */
static void cu__init(Cu *c, Unit *u, const char *path)
{
    memset(c, 0, sizeof *c);
    c->u = u;
    c->path = path;
    /* the file's device functions, then other files' that it calls (same renaming) */
    for (int i = 0; i < u->devfuncs.len; i++)
        vec_push(&c->devfuncs, u->devfuncs.items[i]);
    for (int i = 0; i < u->devexterns.len; i++)
        vec_push(&c->devfuncs, u->devexterns.items[i]);
    c->devnodes = u->devfnodes;
    for (int i = 0; i < u->devvars.len; i++) {
        const char *name = ((DevVar *)u->devvars.items[i])->name;
        strset_add(&c->devvars, name, strlen(name));
    }
}

static void cu__fini(Cu *c)
{
    vec_free(&c->devfuncs);
    vec_free(&c->team_shared);
    strset_free(&c->devvars);
}

int emit_cuda_probe(Unit *u, Region *r, char **why)
{
    Cu c;
    cu__init(&c, u, "");
    Diag *dg = u->diag;
    FILE *out = dg->out;
    int errs = dg->errors, warns = dg->warnings;
    char *text = NULL;
    size_t len = 0;
    dg->out = open_memstream(&text, &len);
    Buf scratch = {0};
    if (dg->out) {
        cu__region(&c, r, &scratch);
        fclose(dg->out);
    } else {
        c.errors = 0;
    }
    dg->out = out;
    dg->errors = errs;
    dg->warnings = warns;
    buf_free(&scratch);
    cu__fini(&c);
    *why = NULL;
    if (c.errors && text) {
        /* "file:line:col: error: message": the message */
        char *m = strstr(text, ": error: ");
        char *nl = m ? strchr(m, '\n') : NULL;
        if (m)
            *why = xstrndup(m + 9, nl ? (size_t)(nl - m - 9) : strlen(m + 9));
    }
    free(text);
    return c.errors == 0;
}

int emit_cuda(Unit *u, Buf *out, const char *display_path)
{
    int any = 0;
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        for (int j = 0; j < r->nversions; j++)
            any |= r->versions[j].kind == MACC_DEV_NVIDIA;
    }
    /* no GPU region: a file of declare target functions and variables that
     * other files' kernels use still has its device part */
    if (!any && !u->devfuncs.len && !u->devvars.len)
        return 0;
    Cu c = {0};
    char *path = c_escape(display_path);
    cu__init(&c, u, path);

    buf_printf(out, "/* @generated by macc %s from %s: do not edit. */\n", MACC_VERSION_STRING, c.path);
    /* the compute capabilities that if_device lines ask for: the driver adds them to nvcc's targets */
    buf_puts(out, "/* macc-cuda-archs:");
    int seen[64] = {0}, nseen = 0;
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        for (int j = 0; j < r->nversions; j++) {
            int cc = r->versions[j].kind == MACC_DEV_NVIDIA ? r->versions[j].min_cc : 0;
            int dup = 0;
            for (int k = 0; k < nseen; k++)
                dup |= seen[k] == cc;
            if (cc > 0 && !dup && nseen < 64) {
                seen[nseen++] = cc;
                buf_printf(out, " %d", cc);
            }
        }
    }
    buf_puts(out, " */\n");
    buf_puts(out, "#ifndef __MACC__\n#define __MACC__ 1\n#endif\n#define MACC_DEVICE_FILE 1\n"
                  "#include <cuda_runtime.h>\n#include <string.h>\n#include \"macc_rt.h\"\n#include \"macc_device.h\"\n"
                  "#define restrict __restrict__\n"
                  "#pragma nv_diag_suppress 177\n#pragma nv_diag_suppress 550\n#pragma nv_diag_suppress 1675\n"
                  "#pragma nv_diag_suppress 2361\n"); /* C's brace initialisers narrow freely */
    /* everything below the includes is C made into C++: through the lowering */
    Buf body = {0};
    cu__prelude(&c, &body);
    buf_puts(&body, "\n");
    for (int i = 0; i < u->regions.len; i++)
        cu__region(&c, u->regions.items[i], &body);
    lower_cxx(body.data, body.len, out);
    buf_free(&body);
    int registered = 0;
    for (int i = 0; i < u->devvars.len; i++)
        registered += !((DevVar *)u->devvars.items[i])->external;
    if (registered) {
        /* what the host file registers (same order): the device variables as
         * cudaGetSymbolAddress takes them (not another file's) */
        buf_printf(out, "\n/* declare target variables: registered by the host file */\nextern \"C\" const void *const %s[] = {\n",
                   u->dt_key);
        for (int i = 0; i < u->devvars.len; i++)
            if (!((DevVar *)u->devvars.items[i])->external)
                buf_printf(out, "    (const void *)&macc_g_%s,\n", ((DevVar *)u->devvars.items[i])->name);
        buf_puts(out, "};\n");
    }
    /* a program with this object is linked by macc (its device link step):
     * a plain `cc` link names this among what is missing */
    buf_puts(out, "extern \"C\" const int macc_link_this_program_with_macc;\n"
                  "__attribute__((used)) static const int *const macc_link_check_ = &macc_link_this_program_with_macc;\n");
    cu__fini(&c);
    free(path);
    return c.errors;
}
