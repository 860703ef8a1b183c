/* emit_host.c: the host file. The user's text is copied byte for byte; only
 * the directives and regions are spliced:
 *  - before each function with regions: per region an argument struct, the
 *    outlined host version (seed 003's host reducer), the version table and the
 *    region descriptor;
 *  - at each region: a call to MACC_target with the arguments, maps and deps;
 *  - data directives and taskwait: calls into the runtime.
 * #line directives keep compiler messages on the user's lines. */
#include <stdlib.h>
#include <string.h>

#include "macc.h"
#include "macc_rt.h"

typedef struct Edit {
    size_t start, end;
    char *text;
} Edit;

typedef struct Emit {
    Unit *u;
    const char *path;  /* display path, escaped for strings */
    Vec edits;
    StrSet hoisted;    /* texts of local type definitions already hoisted */
} Emit;

static void em__edit(Emit *e, size_t start, size_t end, char *text)
{
    Edit *x = xcalloc(1, sizeof *x);
    x->start = start;
    x->end = end;
    x->text = text;
    vec_push(&e->edits, x);
}

/* ---- use_device_addr: the device's copy of a variable ------------------------
 *
 * Inside a target data construct with use_device_addr(x) (or use_device_ptr
 * of a non-pointer), x names the device's copy: references in the body
 * become (*macc_uda_x), and so do the names in the code generated for the
 * regions and data directives nested in it. */

/* The use_device_addr names (char *, not owned) of the target data
 * constructs whose body holds source offset off. */
static void em__addr_names(const Emit *e, size_t off, Vec *names)
{
    for (int i = 0; i < e->u->datas.len; i++) {
        const DataConstruct *d = e->u->datas.items[i];
        /* the body: after the pragma (a target region right after it
         * starts with its own pragma line) */
        if (!d->usedev.len || ts_node_is_null(d->stmt) || off < d->pragma->end ||
            off >= ts_node_end_byte(d->stmt))
            continue;
        for (int j = 0; j < d->usedev.len; j++) {
            const UseDev *x = d->usedev.items[j];
            if (x->addr)
                vec_push(names, x->name);
        }
    }
}

/* `text` (generated C) with the identifiers in `names` replaced by
 * (*macc_uda_<name>), except in strings, character constants, comments and
 * after `.` or `->`. Takes text. */
static char *em__subst(char *text, const Vec *names)
{
    if (!names->len || !text)
        return text;
    Buf b = {0};
    const char *s = text;
    char prev = 0; /* last significant character before an identifier */
    while (*s) {
        if (*s == '"' || *s == '\'') {
            char q = *s;
            const char *t = s + 1;
            while (*t && *t != q)
                t += t[0] == '\\' && t[1] ? 2 : 1;
            if (*t)
                t++;
            buf_put(&b, s, (size_t)(t - s));
            s = t;
            prev = q;
        } else if (s[0] == '/' && s[1] == '*') {
            const char *t = strstr(s + 2, "*/");
            t = t ? t + 2 : s + strlen(s);
            buf_put(&b, s, (size_t)(t - s));
            s = t;
        } else if (s[0] == '/' && s[1] == '/') {
            const char *t = strchr(s, '\n');
            t = t ? t : s + strlen(s);
            buf_put(&b, s, (size_t)(t - s));
            s = t;
        } else if (ident_char(*s) && !(*s >= '0' && *s <= '9')) {
            const char *t = s;
            while (ident_char(*t))
                t++;
            int hit = 0;
            if (prev != '.' && prev != '>')
                for (int i = 0; i < names->len && !hit; i++)
                    hit = strlen(names->items[i]) == (size_t)(t - s) &&
                          !memcmp(names->items[i], s, (size_t)(t - s));
            if (hit) {
                buf_puts(&b, "(*macc_uda_");
                buf_put(&b, s, (size_t)(t - s));
                buf_puts(&b, ")");
            } else {
                buf_put(&b, s, (size_t)(t - s));
            }
            s = t;
            prev = 'a';
        } else if (ident_char(*s)) { /* a number (and its suffix) */
            const char *t = s;
            while (ident_char(*t) || *t == '.')
                t++;
            buf_put(&b, s, (size_t)(t - s));
            s = t;
            prev = '0';
        } else {
            if (*s != ' ' && *s != '\t' && *s != '\n')
                prev = (*s == '>' && s > text && s[-1] == '-') ? '>' : *s == '>' ? 'g' : *s;
            buf_put(&b, s, 1);
            s++;
        }
    }
    free(text);
    return b.data ? b.data : xstrdup("");
}

/* em__edit for generated code at source offset `at`: the names of enclosing
 * use_device_addr constructs are substituted. */
static void em__edit_gen(Emit *e, size_t start, size_t end, char *text, size_t at)
{
    Vec names = {0};
    em__addr_names(e, at, &names);
    em__edit(e, start, end, em__subst(text, &names));
    vec_free(&names);
}

/* References to the use_device_addr names of d inside its body. */
static void em__addr_refs(Emit *e, TSNode n, const DataConstruct *d)
{
    if (node_is(n, "identifier")) {
        size_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
        for (int i = 0; i < d->usedev.len; i++) {
            const UseDev *x = d->usedev.items[i];
            if (x->addr && strlen(x->name) == b - a && !memcmp(e->u->src->text + a, x->name, b - a))
                em__edit(e, a, b, xsprintf("(*macc_uda_%s)", x->name));
        }
        return;
    }
    uint32_t k = ts_node_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        em__addr_refs(e, ts_node_child(n, i), d);
}

/* Replaces bytes [start, end) by their newlines alone (lines keep their numbers). */
/* Appends the newlines of source bytes [start, end) (what keeps the lines
 * after a replaced range where they were). */
static void em__newlines(const Unit *u, size_t start, size_t end, Buf *b)
{
    for (size_t k = start; k < end; k++)
        if (u->src->text[k] == '\n')
            buf_puts(b, "\n");
}

static void em__blank(Emit *e, size_t start, size_t end)
{
    Buf nl = {0};
    em__newlines(e->u, start, end, &nl);
    em__edit(e, start, end, nl.data ? nl.data : xstrdup(""));
}

/* Is source offset off inside a target region (its lines and statement)? */
static int em__in_region(const Unit *u, size_t off)
{
    for (int k = 0; k < u->regions.len; k++) {
        const Region *r = u->regions.items[k];
        if (off >= r->target->start && off < ts_node_end_byte(r->span))
            return 1;
    }
    return 0;
}

static int em__line(const Emit *e, size_t off)
{
    int line, col;
    source_position(e->u->src, off, &line, &col);
    return line;
}

static void em__line_dir(const Emit *e, Buf *b, size_t off)
{
    buf_printf(b, "\n#line %d \"%s\"\n", em__line(e, off), source_cfile(e->u->src, off));
}

static const char *em__map_kind(int k, char *buf, size_t n)
{
    static const char *dir[] = {"MACC_MAP_ALLOC", "MACC_MAP_TO", "MACC_MAP_FROM", "MACC_MAP_TOFROM"};
    snprintf(buf, n, "%s", (k & MACC_MAP_ATTACH) ? "MACC_MAP_ATTACH" : dir[k & MACC_MAP_DIR_MASK]);
    static const struct {
        int bit;
        const char *name;
    } mods[] = {{MACC_MAP_ALWAYS, "MACC_MAP_ALWAYS"},   {MACC_MAP_PRESENT, "MACC_MAP_PRESENT"},
                {MACC_MAP_DELETE, "MACC_MAP_DELETE"}, {MACC_MAP_DELETE_ALL, "MACC_MAP_DELETE_ALL"},   {MACC_MAP_NOCREATE, "MACC_MAP_NOCREATE"},
                {MACC_MAP_DEVICEPTR, "MACC_MAP_DEVICEPTR"}, {MACC_MAP_USM, "MACC_MAP_USM"}};
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
        if (k & mods[i].bit) {
            size_t l = strlen(buf);
            snprintf(buf + l, n - l, " | %s", mods[i].name);
        }
    return buf;
}

static const char *em__device(int device, const char *expr, char *buf, size_t n)
{
    switch (device) {
    case MACC_DEVICE_DEFAULT: return "MACC_DEVICE_DEFAULT";
    case MACC_DEVICE_ANY: return "MACC_DEVICE_ANY";
    case MACC_DEVICE_HOST: return "MACC_DEVICE_HOST";
    case MACC_DEVICE_NVIDIA: return "MACC_DEVICE_NVIDIA";
    default:
        /* a literal number as it is; an expression may be negative
         * (omp_initial_device, omp_invalid_device) */
        if (!expr || strspn(expr, "0123456789") == strlen(expr))
            snprintf(buf, n, "(int)(%s)", expr ? expr : "0");
        else
            snprintf(buf, n, "MACC_device_num((int)(%s))", expr);
        return buf;
    }
}

/* `MACC_Map macc_m_[n] = {...};` (nothing when there are no maps). */
static void em__maps(Buf *b, const Vec *maps, const char *indent)
{
    if (!maps->len)
        return;
    buf_printf(b, "%sMACC_Map macc_m_[%d] = {\n", indent, maps->len);
    for (int i = 0; i < maps->len; i++) {
        RMap *m = maps->items[i];
        char kb[160];
        char *name = c_escape(m->name);
        buf_printf(b, "%s    {\"%s\", %s, %s, %s, %s},\n", indent, name, m->base, m->start, m->bytes,
                   em__map_kind(m->kind, kb, sizeof kb));
        free(name);
    }
    buf_printf(b, "%s};\n", indent);
}

static void em__deps(Buf *b, const Vec *deps, const char *indent)
{
    if (!deps->len)
        return;
    static const char *kinds[] = {"", "MACC_DEP_IN", "MACC_DEP_OUT", "MACC_DEP_INOUT"};
    buf_printf(b, "%sMACC_Dep macc_d_[%d] = {\n", indent, deps->len);
    for (int i = 0; i < deps->len; i++) {
        RDep *d = deps->items[i];
        buf_printf(b, "%s    {%s, %s, %s},\n", indent, d->addr, d->bytes, kinds[d->kind]);
    }
    buf_printf(b, "%s};\n", indent);
}

/* ---- clause printing (the host reducer) ---------------------------------- */

static void em__items(Buf *b, const DirClause *c)
{
    for (int i = 0; i < c->nitems; i++) {
        const DirItem *it = &c->items[i];
        buf_printf(b, "%s%s", i ? ", " : "", it->base);
        for (int j = 0; j < it->nsubs; j++) {
            const DirSub *s = &it->subs[j];
            if (s->is_section)
                buf_printf(b, "[%s:%s]", s->lo ? s->lo : "", s->len ? s->len : "");
            else
                buf_printf(b, "[%s]", s->lo ? s->lo : "");
        }
    }
}

/* Prints the loop clauses of `d` that the host construct keeps; `limit`, when
 * not NULL, is a thread_limit that bounds num_threads. */
/* The region's collapse when a non-rectangular nest made it smaller than
 * its clause (Region.collapse_clause), while its own loop pragma is printed. */
static int em__collapse_cap;
/* The region whose host version is printed (its variables' types), or NULL. */
static const Region *em__cur_region;

/* Is `name` a _Bool variable of the region being printed? GCC's OpenMP
 * reductions with + or * on _Bool add the partial results as integers into
 * the byte (1 + 1 + 1 gives a _Bool holding 3): such items are reduced with
 * || and && instead, which is what + and * mean for _Bool. */
static int em__bool_item(const char *name)
{
    if (!em__cur_region)
        return 0;
    for (int i = 0; i < em__cur_region->caps.len; i++) {
        const Capture *k = em__cur_region->caps.items[i];
        if (strcmp(k->name, name) || !k->decl || k->decl->is_pointer || k->decl->is_array)
            continue;
        char *u = spec_unqualified(k->decl->spec);
        int r = !strcmp(u, "_Bool") || !strcmp(u, "bool");
        free(u);
        return r;
    }
    return 0;
}

static int em__loop_clauses(Buf *b, const Directive *d, int parallel, int simd, const char *limit)
{
    int has_num_threads = 0;
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        switch (c->kind) {
        case CL_COLLAPSE:
            if (em__collapse_cap > 0 && c->ival > em__collapse_cap)
                buf_printf(b, " collapse(%d)", em__collapse_cap);
            else
                buf_printf(b, " collapse(%s)", c->arg ? c->arg : "1");
            break;
        case CL_REDUCTION: { /* the task modifier where OpenMP allows it (parallel, for) */
            int arith = c->modifier == RED_ADD || c->modifier == RED_SUB || c->modifier == RED_MUL;
            int nbool = 0;
            for (int j = 0; j < c->nitems; j++)
                nbool += arith && c->items[j].nsubs == 0 && em__bool_item(c->items[j].base);
            if (nbool) {
                DirClause rest = *c, bools = *c;
                DirItem *ri = xcalloc((size_t)c->nitems, sizeof *ri), *bi = xcalloc((size_t)c->nitems, sizeof *bi);
                rest.items = ri;
                bools.items = bi;
                rest.nitems = bools.nitems = 0;
                for (int j = 0; j < c->nitems; j++) {
                    if (c->items[j].nsubs == 0 && em__bool_item(c->items[j].base))
                        bi[bools.nitems++] = c->items[j];
                    else
                        ri[rest.nitems++] = c->items[j];
                }
                buf_printf(b, " reduction(%s: ", c->modifier == RED_MUL ? "&&" : "||");
                em__items(b, &bools);
                buf_puts(b, ")");
                if (rest.nitems) {
                    buf_printf(b, " reduction(%s: ", directive_reduction_op(c->modifier));
                    em__items(b, &rest);
                    buf_puts(b, ")");
                }
                free(ri);
                free(bi);
                break;
            }
            buf_printf(b, " reduction(%s%s: ",
                       parallel && !simd && c->name && !strcmp(c->name, "task") ? "task, " : "",
                       directive_reduction_op(c->modifier));
            em__items(b, c);
            buf_puts(b, ")");
            break;
        }
        case CL_PRIVATE:
        case CL_FIRSTPRIVATE:
        case CL_LASTPRIVATE:
            if (!parallel && c->kind == CL_FIRSTPRIVATE)
                break;
            buf_printf(b, " %s(%s", directive_clause_name(c->kind),
                       c->kind == CL_LASTPRIVATE && c->modifier ? "conditional: " : "");
            em__items(b, c);
            buf_puts(b, ")");
            break;
        case CL_LINEAR: { /* as OpenMP 4.5 writes it (5.2's step(s) is newer than the C compiler) */
            char *st = directive_linear_step(c);
            buf_puts(b, " linear(");
            em__items(b, c);
            buf_printf(b, ": %s)", st);
            free(st);
            break;
        }
        case CL_SCHEDULE:
            if (parallel)
                buf_printf(b, " schedule(%s)", c->arg ? c->arg : "static");
            break;
        case CL_NUM_THREADS:
            if (parallel) {
                const char *a = c->arg ? c->arg : "1";
                if (limit)
                    buf_printf(b, " num_threads((%s) > 0 && (%s) < (%s) ? (int)(%s) : (%s))", limit, limit, a, limit, a);
                else
                    buf_printf(b, " num_threads(%s)", a);
                has_num_threads = 1;
            }
            break;
        case CL_SIMDLEN:
        case CL_SAFELEN:
            if (simd)
                buf_printf(b, " %s(%s)", directive_clause_name(c->kind), c->arg ? c->arg : "1");
            break;
        case CL_IF: /* a nested parallel's own if(...); the combined construct's
                     * if without a modifier applies to its parallel too */
            if (parallel && ((c->name && strcmp(c->name, "parallel") == 0) || (!c->name && d->kind == DIR_TARGET)))
                buf_printf(b, " if(%s)", c->arg ? c->arg : "1");
            break;
        case CL_NOWAIT: /* on a worksharing for */
            if (d->kind == DIR_LOOP && (d->cs & CS_FOR))
                buf_puts(b, " nowait");
            break;
        default:
            break;
        }
    }
    return has_num_threads;
}

/* num_threads of the task's share of host threads, at most `limit` (a
 * thread_limit) when there is one. */
static void em__share(Buf *b, const char *limit)
{
    if (limit)
        buf_printf(b, " num_threads((%s) > 0 && (%s) < macc_env_->nthreads ? (int)(%s) : macc_env_->nthreads)", limit,
                   limit, limit);
    else
        buf_puts(b, " num_threads(macc_env_->nthreads)");
}

/* The thread_limit of a version: its directive's, else the target line's. */
static const char *em__thread_limit(const Region *r, const RVersion *v)
{
    const DirClause *tl = directive_find(v->dir, CL_THREAD_LIMIT);
    if (!tl)
        tl = directive_find(&r->target->dir, CL_THREAD_LIMIT);
    return tl ? tl->arg : NULL;
}

/* The host pragma for construct-set `cs` with the clauses of `d`; NULL when
 * the version has no loop construct or parallel region. A thread_limit of
 * `d`, else `outer` (the version's, for loop directives inside the region),
 * bounds the threads: the host reducer runs the teams as one team of
 * min(thread_limit, the task's share of host threads) threads. */
static char *em__host_pragma(unsigned cs, const Directive *d, const char *outer)
{
    Buf b = {0};
    int simd = (cs & CS_SIMD) != 0;
    const DirClause *tl = directive_find(d, CL_THREAD_LIMIT);
    const char *limit = tl && tl->arg ? tl->arg : outer;
    if (CS_IS_PARALLEL_REGION(cs)) {
        buf_puts(&b, "#pragma omp parallel");
        if (!em__loop_clauses(&b, d, 1, 0, limit))
            em__share(&b, limit);
    } else if (cs & (CS_DISTRIBUTE | CS_PARALLEL_FOR)) {
        buf_printf(&b, "#pragma omp parallel for%s", simd ? " simd" : "");
        if (!em__loop_clauses(&b, d, 1, simd, limit))
            em__share(&b, limit);
    } else if (simd) {
        buf_puts(&b, "#pragma omp simd");
        em__loop_clauses(&b, d, 0, 1, NULL);
    } else {
        return NULL;
    }
    return b.data;
}

/* An inner loop directive of a region body: only simd survives. */
static char *em__inner_pragma(const Directive *d)
{
    if (!(d->cs & CS_SIMD))
        return xstrdup("");
    Buf b = {0};
    buf_puts(&b, "#pragma omp simd");
    em__loop_clauses(&b, d, 0, 1, NULL);
    return b.data;
}

/* A worksharing loop (`for`, or a bare `loop` in a parallel region) of a
 * region body, for the parallel region around it. */
static char *em__for_pragma(const Directive *d)
{
    Buf b = {0};
    buf_printf(&b, "#pragma omp for%s", (d->cs & CS_SIMD) ? " simd" : "");
    em__loop_clauses(&b, d, 1, (d->cs & CS_SIMD) != 0, NULL);
    return b.data;
}

/* A parallel region of a region body; `outer`: not inside another parallel
 * construct of the version (then it gets the task's share of host threads,
 * bounded by the version's thread_limit `limit`). */
static char *em__parallel_pragma(const Directive *d, int outer, const char *limit)
{
    Buf b = {0};
    buf_puts(&b, "#pragma omp parallel");
    if (!em__loop_clauses(&b, d, 1, 0, outer ? limit : NULL) && outer)
        em__share(&b, limit);
    return b.data;
}

/* ---- regions -------------------------------------------------------------- */

static int em__cmp_edit(const void *a, const void *b)
{
    const Edit *x = *(Edit *const *)a, *y = *(Edit *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* `#pragma acc atomic ...` lines under n: edits that make them `omp atomic`
 * (the same forms and clauses), which the host compiler implements. */
static void em__acc_atomics(const Unit *u, TSNode n, Vec *edits)
{
    if (node_is(n, "preproc_call")) {
        if (atomic_pragma_kind(u, n) != SYNC_ATOMIC)
            return;
        const char *t = u->src->text;
        size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
        const char *acc = NULL;
        for (size_t k = b + 1; k + 3 <= e && !acc; k++) /* "#pragma acc": the word after "pragma" */
            if (!memcmp(t + k, "acc", 3) && (t[k - 1] == ' ' || t[k - 1] == '\t'))
                acc = t + k;
        if (!acc)
            return;
        Edit *x = xcalloc(1, sizeof *x);
        x->start = (size_t)(acc - t);
        x->end = x->start + 3;
        x->text = xstrdup("omp");
        vec_push(edits, x);
        return;
    }
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        em__acc_atomics(u, ts_node_named_child(n, i), edits);
}

/* The region's statement text for the host version of `v`, inner loop
 * directives reduced. */
/* Calls under n whose declare variant for the host in this context is not
 * the base: edits naming the variant. The C compiler cannot see that the
 * outlined code was inside `target`. */
static void em__variant_calls(const Unit *u, TSNode n, unsigned context, Vec *edits)
{
    if (node_is(n, "identifier")) {
        const char *var = variant_of_call(u, n, context, 0);
        if (var) {
            Edit *x = xcalloc(1, sizeof *x);
            x->start = ts_node_start_byte(n);
            x->end = ts_node_end_byte(n);
            x->text = xstrdup(var);
            vec_push(edits, x);
        }
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        em__variant_calls(u, ts_node_child(n, i), context, edits);
}

/* Does the region's code use scalar `name` in a way that needs the mapped
 * variable itself rather than a copy (its address is taken), with nothing that
 * would make a rewrite of its uses wrong (a declaration of the same name, a
 * clause of the host construct or of a directive inside naming it)? */
static int em__ident_is(const Unit *u, TSNode n, const char *name)
{
    size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    return node_is(n, "identifier") && e - b == strlen(name) && !strncmp(u->src->text + b, name, e - b);
}

static int em__addr_taken(const Unit *u, TSNode n, const char *name, int *blocked)
{
    int hit = 0;
    if (node_is(n, "pointer_expression")) {
        TSNode op = ts_node_child(n, 0), arg = node_field(n, "argument");
        if (!ts_node_is_null(op) && u->src->text[ts_node_start_byte(op)] == '&' && node_is(arg, "identifier") &&
            em__ident_is(u, arg, name))
            hit = 1;
    }
    if ((node_is(n, "init_declarator") || node_is(n, "declaration") || node_is(n, "parameter_declaration") ||
         node_is(n, "pointer_declarator") || node_is(n, "array_declarator")) &&
        em__ident_is(u, node_field(n, "declarator"), name))
        *blocked = 1;
    if (node_is(n, "preproc_call")) {
        char *t = node_text(u, n);
        StrSet ids = {0};
        text_ids(t, &ids);
        if (strset_has(&ids, name, strlen(name)))
            *blocked = 1;
        strset_free(&ids);
        free(t);
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        hit |= em__addr_taken(u, ts_node_child(n, i), name, blocked);
    return hit;
}

/* The RED_* operator of a reduction clause of the version or the target line
 * naming `name` (min and max: 0, their copy may start at the original) */
static int em__region_reduction(const Region *r, const RVersion *hv, const char *name)
{
    const Directive *ds[2] = {hv->dir, &r->target->dir};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < ds[k]->nclauses; i++) {
            const DirClause *c = &ds[k]->clauses[i];
            if (c->kind != CL_REDUCTION || c->modifier == RED_MIN || c->modifier == RED_MAX)
                continue;
            for (int j = 0; j < c->nitems; j++)
                if (c->items[j].base && !strcmp(c->items[j].base, name))
                    return c->modifier;
        }
    return 0;
}

/* Does a directive line under n privatise `name` (names it in a private,
 * firstprivate or lastprivate clause, or says default(private|firstprivate))? */
static int em__inner_privatizes(const Unit *u, TSNode n, const char *name)
{
    if (node_is(n, "preproc_call")) {
        char *t = node_text(u, n);
        int hit = 0;
        if (strstr(t, "default(firstprivate)") || strstr(t, "default(private)")) {
            hit = 1;
        } else if (strstr(t, "private")) {
            StrSet ids = {0};
            text_ids(t, &ids);
            hit = strset_has(&ids, name, strlen(name));
            strset_free(&ids);
        }
        free(t);
        return hit;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (em__inner_privatizes(u, ts_node_child(n, i), name))
            return 1;
    return 0;
}

static int em__scalar_direct(const Unit *u, const Region *r, const RVersion *hv, const char *name)
{
    if (!hv)
        return 0;
    for (int i = 0; i < hv->dir->nclauses; i++) { /* the clauses that stay on the host construct */
        ClauseKind k = hv->dir->clauses[i].kind;
        if (k != CL_MAP && k != CL_DEPEND && k != CL_HAS_DEVICE_ADDR && k != CL_IS_DEVICE_PTR &&
            directive_lists(hv->dir, k, name))
            return 0;
    }
    int blocked = 0;
    int taken = em__addr_taken(u, r->stmt, name, &blocked);
    return taken && !blocked;
}

/* Uses of the names in `direct` under n become (*macc_p_<name>). */
static void em__direct_uses(const Unit *u, TSNode n, const StrSet *direct, Vec *edits)
{
    if (node_is(n, "identifier")) {
        size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
        if (strset_has(direct, u->src->text + b, e - b)) {
            Edit *x = xcalloc(1, sizeof *x);
            x->start = b;
            x->end = e;
            x->text = xsprintf("(*macc_p_%.*s)", (int)(e - b), u->src->text + b);
            vec_push(edits, x);
        }
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        em__direct_uses(u, ts_node_child(n, i), direct, edits);
}

static void em__body(Emit *e, const Region *r, const RVersion *v, const StrSet *direct, Buf *out)
{
    const Unit *u = e->u;
    size_t sb = ts_node_start_byte(r->stmt), se = ts_node_end_byte(r->stmt);
    Vec inner = {0};
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->start >= sb && p->end <= se + 1 && p->dir.kind == DIR_LOOP)
            vec_push(&inner, p);
    }
    Vec edits = {0};
    for (int i = 0; i < inner.len; i++) {
        Pragma *p = inner.items[i];
        char *text = NULL;
        /* outer: not inside a loop construct nor a parallel region (of the
         * version or of a directive of the body); in_par: inside a parallel region */
        int outer = !(v->cs & CS_LOOPS) && !CS_IS_PARALLEL_REGION(v->cs);
        int in_par = CS_IS_PARALLEL_REGION(v->cs), in_loop = (v->cs & CS_LOOPS) != 0;
        for (int j = 0; j < inner.len; j++) {
            Pragma *q = inner.items[j];
            int loopq = (q->dir.cs & (CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_FOR | CS_LOOP)) != 0;
            if (q == p || !(loopq || CS_IS_PARALLEL_REGION(q->dir.cs)))
                continue;
            TSNode qs = ts_node_next_named_sibling(q->node);
            while (node_is(qs, "comment") || node_is(qs, "preproc_call"))
                qs = ts_node_next_named_sibling(qs);
            /* p is in q's statement, or between q and it (parallel + for + loop) */
            if (!ts_node_is_null(qs) && q->start < p->start && p->end <= ts_node_end_byte(qs) + 1) {
                outer = 0;
                in_par |= CS_IS_PARALLEL_REGION(q->dir.cs);
                in_loop |= loopq;
            }
        }
        unsigned pcs = p->dir.cs;
        if (CS_IS_PARALLEL_REGION(pcs))
            text = em__parallel_pragma(&p->dir, outer, em__thread_limit(r, v));
        else if (pcs & CS_FOR)
            text = em__for_pragma(&p->dir);
        else if (pcs == CS_LOOP && in_par && !in_loop) /* a bare loop binds to the parallel region */
            text = em__for_pragma(&p->dir);
        else if (outer && (pcs & (CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_LOOP)))
            text = em__host_pragma(pcs == CS_LOOP ? CS_PARALLEL_FOR : pcs, &p->dir, em__thread_limit(r, v));
        else
            text = em__inner_pragma(&p->dir);
        Buf t = {0};
        buf_puts(&t, text ? text : "");
        free(text);
        /* the pragma's end includes its newline; keep lines in step */
        int l0 = em__line(e, p->start), l1 = em__line(e, p->end);
        if (l1 - l0 == 1)
            buf_puts(&t, "\n");
        else
            em__line_dir(e, &t, p->end);
        Edit *x = xcalloc(1, sizeof *x);
        x->start = p->start;
        x->end = p->end;
        x->text = t.data;
        vec_push(&edits, x);
    }
    if (direct && direct->len)
        em__direct_uses(u, r->stmt, direct, &edits);
    /* omp allocate of the region's own variables: they keep automatic storage
     * in the host version (the host compiler has no allocate directive; in
     * kernels the line is not ours either) */
    for (int i = 0; i < u->allocates.len + u->blanks.len; i++) {
        /* (and lines macc implements alone, such as assumptions) */
        const Pragma *p = i < u->allocates.len ? u->allocates.items[i] : u->blanks.items[i - u->allocates.len];
        if (p->start < sb || p->start >= se)
            continue;
        Edit *x = xcalloc(1, sizeof *x);
        x->start = p->start;
        x->end = p->end;
        Buf t = {0};
        em__newlines(u, p->start, p->end, &t);
        x->text = t.data ? t.data : xstrdup("");
        vec_push(&edits, x);
    }
    if (u->variants.len) /* declare variant: calls in the region's code */
        em__variant_calls(u, r->stmt, variant_context(v->cs), &edits);
    em__acc_atomics(u, r->stmt, &edits);
    if (edits.len)
        qsort(edits.items, (size_t)edits.len, sizeof(void *), em__cmp_edit);
    size_t pos = sb;
    for (int i = 0; i < edits.len; i++) {
        Edit *x = edits.items[i];
        if (x->start < pos)
            continue;
        buf_put(out, u->src->text + pos, x->start - pos);
        buf_puts(out, x->text);
        pos = x->end;
    }
    if (pos < se)
        buf_put(out, u->src->text + pos, se - pos);
    for (int i = 0; i < edits.len; i++) {
        Edit *x = edits.items[i];
        free(x->text);
        free(x);
    }
    vec_free(&edits);
    vec_free(&inner);
}

/* The declarator of `c` with its name replaced by `repl`. */
static char *em__declarator(const Capture *c, const char *repl)
{
    const Decl *d = c->decl;
    return xsprintf("%.*s%s%s", d->id_off, d->decl_text, repl, d->decl_text + d->id_off + d->id_len);
}

/* An array's declarator rebound as a pointer to its rows: a[N][M] -> (*a)[M]. */
static char *em__row_pointer(const Capture *c)
{
    const Decl *d = c->decl;
    return xsprintf("%.*s(*%s)%s", d->arr_off, d->decl_text, d->name, d->decl_text + d->arr_off + d->arr_len);
}

/* The type definitions of the function's regions that live inside the
 * function (local structs, enums, typedefs): copied before the outlined
 * code, once per function, in the file's order. */
static void em__local_types(Emit *e, const Region *first, Buf *b)
{
    Unit *u = e->u;
    Vec all = {0};
    unit_local_types(u, &first->func, &all);
    int said = 0;
    for (int i = 0; i < all.len; i++) {
        TSNode n = *(TSNode *)all.items[i];
        size_t sb = ts_node_start_byte(n);
        Buf t = {0};
        local_type_text(u, n, &t);
        /* the same definition in another function (a copy-pasted enum) goes once */
        if (strset_add(&e->hoisted, t.data, t.len)) {
            if (!said++)
                buf_puts(b, "\n/* types the regions of this function use, declared inside it */\n");
            buf_printf(b, "#line %d \"%s\"\n", em__line(e, sb), source_cfile(u->src, sb));
            buf_puts(b, t.data);
        }
        buf_free(&t);
    }
    vec_free(&all);
}

static void em__outlined(Emit *e, const Region *r, Buf *b)
{
    const char *sfx = r->suffix;
    buf_printf(b, "\n/* target region %s:%d: argument block, host version, version table */\n", e->path, r->line);
    buf_printf(b, "struct macc_a_%s {\n    int macc_unused_;\n", sfx);
    for (int i = 0; i < r->caps.len; i++) {
        Capture *c = r->caps.items[i];
        if (c->kind != CAP_SCALAR)
            continue;
        char *spec = spec_unqualified(c->decl->spec);
        buf_printf(b, "    %s %s;\n", spec, c->decl->decl_text);
        free(spec);
    }
    region_launch_fields(r, b, NULL);
    buf_puts(b, "};\n");

    /* the host version */
    const RVersion *hv = NULL;
    for (int i = 0; i < r->nversions; i++)
        if (r->versions[i].kind == MACC_DEV_HOST)
            hv = &r->versions[i];
    buf_printf(b, "static int macc_h_%s(void *macc_args_, MACC_TaskEnv *macc_env_)\n{\n", sfx);
    buf_printf(b, "    struct macc_a_%s *macc_a_ = (struct macc_a_%s *)macc_args_;\n", sfx, sfx);
    Buf unused = {0};
    buf_puts(&unused, "    (void)macc_a_;\n");
    Buf after = {0};
    StrSet direct = {0}; /* mapped scalars used through their mapped address */
    for (int i = 0; i < r->caps.len; i++) {
        Capture *c = r->caps.items[i];
        char *decl = NULL;
        switch (c->kind) {
        case CAP_SCALAR:
            buf_printf(b, "    %s %s = macc_a_->%s;\n", c->decl->spec, c->decl->decl_text, c->name);
            break;
        case CAP_PRIVATE:
            buf_printf(b, "    %s %s;\n", c->decl->spec, c->decl->decl_text);
            break;
        case CAP_PTR:
            if (c->map < 0)
                break;
            buf_printf(b, "    %s %s = macc_env_->ptrs[%d];\n", c->decl->spec, c->decl->decl_text, c->map);
            if (c->ptr_back)
                buf_printf(&after, "    __builtin_memcpy(macc_env_->ptrs[%d], &%s, sizeof %s);\n", c->ptr_back - 1,
                           c->name, c->name);
            break;
        case CAP_ARRAY: {
            int fp = c->target_fp || (hv && directive_lists(hv->dir, CL_FIRSTPRIVATE, c->name));
            int lp = hv && directive_lists(hv->dir, CL_LASTPRIVATE, c->name);
            int pv = hv && directive_lists(hv->dir, CL_PRIVATE, c->name);
            if (!fp && !lp && !pv && em__inner_privatizes(e->u, r->stmt, c->name)) {
                /* a directive in the body makes the array private or firstprivate (task
                 * default(firstprivate), ...): that needs an array, not a pointer, so the
                 * region works on an array copied in and back */
                char *spec = spec_unqualified(c->decl->spec);
                buf_printf(b, "    %s %s;\n", spec, c->decl->decl_text);
                free(spec);
                buf_printf(b, "    __builtin_memcpy(%s, macc_env_->ptrs[%d], sizeof %s);\n", c->name, c->map, c->name);
                buf_printf(&after, "    __builtin_memcpy(macc_env_->ptrs[%d], %s, sizeof %s);\n", c->map, c->name,
                           c->name);
                break;
            }
            if (fp || lp || pv) {
                /* an array again, not a pointer: the host construct's private/firstprivate/
                 * lastprivate give each thread its own copy */
                char *spec = spec_unqualified(c->decl->spec);
                buf_printf(b, "    %s %s;\n", spec, c->decl->decl_text);
                free(spec);
                if (fp)
                    buf_printf(b, "    __builtin_memcpy(%s, macc_env_->ptrs[%d], sizeof %s);\n", c->name, c->map, c->name);
                if (lp)
                    buf_printf(&after, "    __builtin_memcpy(macc_env_->ptrs[%d], %s, sizeof %s);\n", c->map, c->name,
                               c->name);
                break;
            }
            decl = em__row_pointer(c);
            buf_printf(b, "    %s %s = macc_env_->ptrs[%d];\n", c->decl->spec, decl, c->map);
            break;
        }
        case CAP_WRITEBACK: {
            char *pn = xsprintf("(*macc_p_%s)", c->name);
            decl = em__declarator(c, pn);
            free(pn);
            buf_printf(b, "    %s %s = macc_env_->ptrs[%d];\n", c->decl->spec, decl, c->map);
            if (em__scalar_direct(e->u, r, hv, c->name)) {
                /* the region takes its address: the mapped variable itself, not a copy */
                strset_add(&direct, c->name, strlen(c->name));
                buf_printf(&unused, "    (void)macc_p_%s;\n", c->name);
                break;
            }
            char *spec = spec_unqualified(c->decl->spec);
            int red = hv && !(hv->cs & (CS_LOOPS | CS_PARALLEL)) ? em__region_reduction(r, hv, c->name) : 0;
            if (red) {
                /* a reduction of the region itself (target teams, acc serial/parallel
                 * without a loop): the one team's private copy starts at the identity
                 * and is combined with the original at the end */
                int one = red == RED_MUL || red == RED_LAND;
                buf_printf(b, "    %s %s = %s;\n", spec, c->decl->decl_text, red == RED_BAND ? "~0" : one ? "1" : "0");
                if (red == RED_LAND || red == RED_LOR)
                    buf_printf(&after, "    *macc_p_%s = *macc_p_%s %s %s;\n", c->name, c->name,
                               red == RED_LAND ? "&&" : "||", c->name);
                else
                    buf_printf(&after, "    *macc_p_%s %s= %s;\n", c->name,
                               red == RED_SUB ? "+" : directive_reduction_op(red), c->name);
                free(spec);
                break;
            }
            buf_printf(b, "    %s %s = *macc_p_%s;\n", spec, c->decl->decl_text, c->name);
            free(spec);
            buf_printf(&after, "    *macc_p_%s = %s;\n", c->name, c->name);
            break;
        }
        }
        free(decl);
        if ((c->kind != CAP_PTR || c->map >= 0) && !strset_has(&direct, c->name, strlen(c->name)))
            buf_printf(&unused, "    (void)%s;\n", c->name);
    }
    buf_puts(b, unused.data);
    buf_free(&unused);
    const char *tlim = hv ? em__thread_limit(r, hv) : NULL;
    em__collapse_cap = r->collapse_clause ? r->collapse : 0;
    em__cur_region = r;
    char *pragma = hv ? em__host_pragma(hv->cs, hv->dir, tlim) : NULL;
    em__cur_region = NULL;
    em__collapse_cap = 0;
    size_t sb = ts_node_start_byte(r->stmt);
    int line, col;
    source_position(e->u->src, sb, &line, &col);
    if (tlim) /* the region's thread-limit-var, as omp_get_thread_limit() reads it in the region's code */
        buf_printf(b,
                   "    const int macc_tl_ = (int)(%s); (void)macc_tl_;\n"
                   "#define omp_get_thread_limit() (macc_tl_ > 0 ? macc_tl_ : omp_get_thread_limit())\n",
                   tlim);
    if (pragma) {
        buf_printf(b, "#line %d \"%s\"\n%s\n", line, source_cfile(e->u->src, sb), pragma);
        free(pragma);
    }
    buf_printf(b, "#line %d \"%s\"\n", line, source_cfile(e->u->src, sb));
    buf_printf(b, "%*s", col - 1, "");
    if (hv)
        em__body(e, r, hv, &direct, b);
    strset_free(&direct);
    buf_puts(b, "\n");
    if (tlim)
        buf_puts(b, "#undef omp_get_thread_limit\n");
    if (after.data)
        buf_puts(b, after.data);
    buf_free(&after);
    buf_puts(b, "    return 0;\n}\n");

    /* version table and region descriptor */
    if (region_gpu_version(r))
        buf_printf(b, "#if defined(MACC_WITH_CUDA)\nextern int macc_k_%s_nvidia(void *, MACC_TaskEnv *);\n#endif\n", sfx);
    buf_printf(b, "static const MACC_Version macc_v_%s[] = {\n", sfx);
    for (int i = 0; i < r->nversions; i++) {
        const RVersion *v = &r->versions[i];
        char res[32];
        if (v->resources == MACC_RES_DEFAULT)
            snprintf(res, sizeof res, "MACC_RES_DEFAULT");
        else if (v->resources == MACC_RES_AUTO)
            snprintf(res, sizeof res, "MACC_RES_AUTO");
        else
            snprintf(res, sizeof res, "%d", v->resources);
        if (v->kind == MACC_DEV_NVIDIA)
            buf_printf(b, "#if defined(MACC_WITH_CUDA)\n    {MACC_DEV_NVIDIA, %d, %s, 0, macc_k_%s_nvidia},\n#endif\n",
                       v->min_cc, res, sfx);
        else
            buf_printf(b, "    {MACC_DEV_HOST, 0, %s, %s, macc_h_%s},\n", res,
                       v->fallback ? "MACC_VERSION_FALLBACK" : "0", sfx);
    }
    buf_puts(b, "};\n");
    access_emit_facts(e->u, r, b);
    buf_printf(b,
               "static const MACC_Region macc_r_%s = {\n    {\"%s\", %d, %d, \"%s\"}, \"%s\",\n"
               "    (int)(sizeof macc_v_%s / sizeof macc_v_%s[0]), macc_v_%s",
               sfx, e->path, r->line, r->col, r->func_name, r->name, sfx, sfx, sfx);
    access_emit_fields(e->u, r, b);
    buf_puts(b, "\n};\n");
    /* the call reaches the descriptor through a function: a region inside a
     * task or parallel construct with default(none) names no variable of ours */
    buf_printf(b, "static const MACC_Region *macc_rp_%s(void) { return &macc_r_%s; }\n", sfx, sfx);
}

/* The next word of pragma text *t and, when '(' follows it, its argument
 * [*a, *ae) (else *a = NULL); 0 at the end of the text. */
static int em__next_clause(const char **t, const char **w, size_t *wn, const char **a, const char **ae)
{
    const char *s = *t;
    while (*s && !ident_char(*s))
        s++;
    if (!*s)
        return 0;
    *w = s;
    while (ident_char(*s))
        s++;
    *wn = (size_t)(s - *w);
    const char *q = s;
    while (*q == ' ' || *q == '\t')
        q++;
    *a = *ae = NULL;
    if (*q == '(') {
        *a = q + 1;
        *ae = text_paren_end(q);
        s = **ae ? *ae + 1 : *ae;
    }
    *t = s;
    return 1;
}

/* Is word [w, w + wn) one of the NULL-ended list? */
static int em__word_in(const char *w, size_t wn, const char *const *list)
{
    for (int k = 0; list[k]; k++)
        if (strlen(list[k]) == wn && !strncmp(list[k], w, wn))
            return 1;
    return 0;
}

/* The argument text of clause `name` of a pragma's text (malloc'd), or NULL;
 * *other (when given) set when a word not in `known` is there. */
static char *em__clause_arg(const char *t, const char *name, const char *const *known, int *other)
{
    char *found = NULL;
    const char *w, *a, *ae;
    size_t wn, n = strlen(name);
    while (em__next_clause(&t, &w, &wn, &a, &ae)) {
        if (wn == n && !strncmp(w, name, n) && a && !found)
            found = xstrndup(a, (size_t)(ae - a));
        else if (other && known && !em__word_in(w, wn, known))
            *other = 1;
    }
    return found;
}

/* Does a data-sharing or data clause of pragma text t name `name`? (Those
 * would name the variable, not its allocated storage; aligned, nontemporal
 * and shared name it harmlessly.) */
static int em__clause_names(const char *t, const char *name)
{
    static const char *const bad[] = {"private", "firstprivate", "lastprivate", "reduction", "in_reduction",
                                      "task_reduction", "linear", "copyin", "copyprivate", "map", "depend",
                                      "allocate", "to", "from", "use_device_ptr", "use_device_addr",
                                      "is_device_ptr", "has_device_addr", "uniform", NULL};
    const char *w, *a, *ae;
    size_t wn, nn = strlen(name);
    while (em__next_clause(&t, &w, &wn, &a, &ae)) {
        if (!a || !em__word_in(w, wn, bad))
            continue;
        for (const char *x = a; x + nn <= ae; x++)
            if (!strncmp(x, name, nn) && (x == a || !ident_char(x[-1])) && !ident_char(x[nn]))
                return 1;
    }
    return 0;
}

/* Rewrites the uses of the variable declared by `decl` (its declarator
 * node) in n, from offset `from` on, to `(*ptr)`. Returns -1 when a use lies
 * in a target region (its code is generated from the variable's name), -2
 * when a later directive's data-sharing or map clause names it. */
static int em__alloc_uses(Emit *e, TSNode n, const char *name, TSNode decl, size_t from, const char *ptr)
{
    const Unit *u = e->u;
    if (ts_node_end_byte(n) <= from)
        return 0;
    if (node_is(n, "preproc_call") && ts_node_start_byte(n) >= from) {
        char *t = node_text(u, n);
        int bad = em__clause_names(t, name);
        free(t);
        return bad ? -2 : 0;
    }
    if (node_is(n, "identifier") && ts_node_start_byte(n) >= from) {
        size_t b = ts_node_start_byte(n), en = ts_node_end_byte(n);
        if (en - b != strlen(name) || strncmp(u->src->text + b, name, en - b))
            return 0;
        TSNode p = ts_node_parent(n);
        if (node_is(p, "field_expression") && ts_node_eq(node_field(p, "field"), n))
            return 0; /* s.name */
        TSNode where = {0};
        Decl *d = analyze_lookup(u, n, name, &where);
        int same = d && ts_node_start_byte(d->declarator) == ts_node_start_byte(decl);
        decl_delete(d);
        if (!same)
            return 0;
        if (em__in_region(u, b))
            return -1;
        em__edit(e, b, en, xsprintf("(*%s)", ptr));
        return 0;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        int r = em__alloc_uses(e, ts_node_child(n, i), name, decl, from, ptr);
        if (r < 0)
            return r;
    }
    return 0;
}

/* `#pragma omp allocate(list) [allocator(a)] [align(n)]` (OpenMP 5.0; the
 * host compiler, GCC 12/13, has it only as "sorry, unimplemented"): a local
 * variable's storage comes from the allocator (MACC_omp_allocate), held by
 * a pointer declared on the directive's line with a cleanup that frees it
 * when the block is left; the variable's uses after the line go through
 * the pointer, so &x is the allocator's memory, aligned as it says. A
 * variable of static storage keeps its place (OpenMP allows only predefined
 * allocators there): the line leaves the host file. */
static void em__allocates(Emit *e)
{
    const Unit *u = e->u;
    for (int i = 0; i < u->allocates.len; i++) {
        const Pragma *p = u->allocates.items[i];
        if (em__in_region(u, p->start))
            continue; /* a region's own variable: the region's versions drop the line */
        const char *t = p->text, *o = strchr(t, '(');
        const char *c = o ? strchr(o, ')') : NULL;
        if (!o || !c) {
            diag_error(u->diag, p->start, "expected 'allocate(list)'");
            continue;
        }
        char *alloc = em__clause_arg(c + 1, "allocator", NULL, NULL);
        char *align = em__clause_arg(c + 1, "align", NULL, NULL);
        int line, col;
        source_position(u->src, p->start, &line, &col);
        Buf b = {0};
        TSNode block = ts_node_parent(p->node);
        int local = node_is(block, "compound_statement");
        for (const char *q = o + 1; q < c;) {
            while (q < c && !ident_char(*q))
                q++;
            const char *w = q;
            while (q < c && ident_char(*q))
                q++;
            if (q == w)
                break;
            char *name = xstrndup(w, (size_t)(q - w));
            TSNode where = {0};
            Decl *d = analyze_lookup(u, p->node, name, &where);
            if (!d) {
                diag_error(u->diag, p->start, "allocate: '%s' is not a variable declared before the directive", name);
            } else if (local && !d->is_global && !d->is_param) {
                /* a static local keeps its storage too */
                TSNode decl = ts_node_parent(d->declarator);
                while (!ts_node_is_null(decl) && !node_is(decl, "declaration"))
                    decl = ts_node_parent(decl);
                char *dt = ts_node_is_null(decl) ? NULL : node_text(u, decl);
                int is_static = dt && (strstr(dt, "static ") == dt || strstr(dt, " static "));
                free(dt);
                if (!is_static) {
                    char *ptr = xsprintf("macc_al_%s", name);
                    char *spec = spec_unqualified(d->spec);
                    buf_printf(&b,
                               "%s %.*s(*%s)%s __attribute__((cleanup(MACC_omp_allocate_free))) = "
                               "MACC_omp_allocate(sizeof *%s, %s%s%s, (unsigned long long)(%s), &macc_all_%d); ",
                               spec, d->id_off, d->decl_text, ptr, d->decl_text + d->id_off + d->id_len, ptr,
                               align ? "(MACC_SIZE_T)(" : "0", align ? align : "", align ? ")" : "",
                               alloc ? alloc : "0", i);
                    if (d->has_init)
                        buf_printf(&b, "__builtin_memcpy(%s, &%s, sizeof *%s); ", ptr, name, ptr);
                    else
                        buf_printf(&b, "(void)%s; ", name);
                    free(spec);
                    int r = em__alloc_uses(e, block, name, d->declarator, p->end, ptr);
                    if (r == -1)
                        diag_error(u->diag, p->start,
                                   "allocate: '%s' is used in a target region: not supported (its code names the "
                                   "variable)",
                                   name);
                    else if (r == -2)
                        diag_error(u->diag, p->start,
                                   "allocate: '%s' is named in a later directive's data-sharing or map clause: not "
                                   "supported (the clause would name the variable, not its allocated storage)",
                                   name);
                    free(ptr);
                }
            }
            decl_delete(d);
            free(name);
        }
        Buf out = {0};
        if (b.len)
            buf_printf(&out, "static const MACC_SrcLoc macc_all_%d = {\"%s\", %d, %d, \"allocate\"}; %s", i, e->path,
                       line, col, b.data);
        em__newlines(u, p->start, p->end, &out);
        em__edit(e, p->start, p->end, out.data ? out.data : xstrdup(""));
        buf_free(&b);
        free(alloc);
        free(align);
    }
}

/* The names of begin declare variant functions (variant_renamed), where
 * they are defined. */
static void em__renames_in(Emit *e, TSNode n)
{
    for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
        TSNode c = ts_node_named_child(n, i);
        if (!node_is(c, "function_definition")) {
            if (!strncmp(node_type(c), "preproc_if", 10) || node_is(c, "preproc_else") || node_is(c, "preproc_elif"))
                em__renames_in(e, c);
            continue;
        }
        TSNode id = node_function_id(c);
        const char *rn = ts_node_is_null(id) ? NULL : variant_renamed(e->u, ts_node_start_byte(id));
        if (rn)
            em__edit(e, ts_node_start_byte(id), ts_node_end_byte(id), xstrdup(rn));
    }
}

static void em__renames(Emit *e)
{
    if (e->u->renames.len)
        em__renames_in(e, ts_tree_root_node(e->u->tree));
}

/* `#pragma omp dispatch [novariants(e)] [nocontext(e)]` and a call statement
 * (OpenMP 5.1): the call goes to the function's variant for the dispatch
 * construct (declare variant ... match(construct={dispatch})) unless either
 * expression is true. The line becomes `if (!(e1) && !(e2)) { variant call }
 * else`, the statement stays where it is: the base call. */
static void em__dispatches(Emit *e)
{
    const Unit *u = e->u;
    size_t vs, ve;
    for (int i = 0; variant_dispatch_line(u, i, &vs, &ve); i++)
        em__blank(e, vs, ve);
    for (int i = 0; i < u->dispatches.len; i++) {
        const Pragma *p = u->dispatches.items[i];
        static const char *const known[] = {"omp", "dispatch", "novariants", "nocontext", "device", "depend",
                                            "nowait", "is_device_ptr", "has_device_addr", NULL};
        int other = 0;
        char *nv = em__clause_arg(p->text, "novariants", known, &other);
        char *nc = em__clause_arg(p->text, "nocontext", NULL, NULL);
        char *dv = em__clause_arg(p->text, "device", NULL, NULL);
        if (other)
            diag_error(u->diag, p->start,
                       "dispatch: supported clauses are novariants, nocontext, device, depend, nowait, is_device_ptr "
                       "and has_device_addr");
        if (em__in_region(u, p->start)) {
            diag_error(u->diag, p->start, "dispatch inside a target region is not supported");
            free(nv);
            free(nc);
            free(dv);
            continue;
        }
        TSNode st = ts_node_next_named_sibling(p->node);
        while (node_is(st, "comment"))
            st = ts_node_next_named_sibling(st);
        TSNode x = node_is(st, "expression_statement") ? ts_node_named_child(st, 0) : (TSNode){0};
        if (node_is(x, "assignment_expression"))
            x = node_field(x, "right");
        TSNode f = node_is(x, "call_expression") ? node_field(x, "function") : (TSNode){0};
        if (!node_is(f, "identifier")) {
            diag_error(u->diag, p->start, "dispatch must be followed by a call statement (f(...); or x = f(...);)");
            free(nv);
            free(nc);
            free(dv);
            continue;
        }
        size_t fb = ts_node_start_byte(f), fe = ts_node_end_byte(f);
        const char *v = variant_pick(u, u->src->text + fb, fe - fb, VT_DISPATCH, 0);
        Buf b = {0};
        /* depend(...): as if a taskwait with them came first (OpenMP 5.1);
         * nowait: the call may run at once (it does); is_device_ptr and
         * has_device_addr only matter to adjust_args variants (not picked) */
        const char *t = p->text, *w, *a, *ae;
        size_t wn;
        while (em__next_clause(&t, &w, &wn, &a, &ae)) {
            if (!a || wn != 6 || strncmp(w, "depend", 6))
                continue;
            char *dep = xstrndup(a, (size_t)(ae - a)), *esc = c_escape(dep);
            buf_printf(&b, "_Pragma(\"omp taskwait depend(%s)\") ", esc);
            free(esc);
            free(dep);
        }
        /* device(n): the call sees n as the default device */
        if (dv)
            buf_printf(&b, "{ extern int omp_get_default_device(void); extern void omp_set_default_device(int); "
                           "int macc_dd_ = omp_get_default_device(); omp_set_default_device(%s); ",
                       dv);
        if (v) {
            buf_printf(&b, "if (!(%s) && !(%s)) { ", nv ? nv : "0", nc ? nc : "0");
            size_t sb = ts_node_start_byte(st), se = ts_node_end_byte(st);
            for (size_t k = sb; k < se; k++) {
                if (k == fb) {
                    buf_puts(&b, v);
                    k = fe - 1;
                    continue;
                }
                char ch = u->src->text[k];
                buf_put(&b, ch == '\n' || ch == '\r' ? " " : &u->src->text[k], 1);
            }
            buf_puts(&b, " } else");
        }
        em__newlines(u, p->start, p->end, &b);
        em__edit(e, p->start, p->end, b.data ? b.data : xstrdup(""));
        if (dv) /* the default device back after the statement */
            em__edit(e, ts_node_end_byte(st), ts_node_end_byte(st), xstrdup(" omp_set_default_device(macc_dd_); }"));
        free(nv);
        free(nc);
        free(dv);
    }
}

static void em__call(Emit *e, const Region *r)
{
    Buf b = {0};
    /* target in_reduction(op: list): the region runs inside a task that takes
     * part in the enclosing task reduction (undeferred, or deferred for
     * nowait, the region then synchronous in it): in the task the list's
     * names are the task's instances, which the region reduces into */
    int inred = 0;
    for (int i = 0; i < r->target->dir.nclauses; i++) {
        const DirClause *c = &r->target->dir.clauses[i];
        if (!directive_in_reduction(c))
            continue;
        buf_printf(&b, "%s in_reduction(%s: ", inred++ ? "" : "\n#pragma omp task", directive_reduction_op(c->modifier));
        em__items(&b, c);
        buf_puts(&b, ")");
    }
    if (inred)
        buf_printf(&b, " if(%d)\n", r->nowait ? 1 : 0);
    const int nowait = r->nowait && !inred;
    buf_printf(&b, "{ /* target region %s */\n", r->name);
    buf_printf(&b, "    struct macc_a_%s macc_a_ = {0};\n", r->suffix);
    for (int i = 0; i < r->caps.len; i++) {
        Capture *c = r->caps.items[i];
        if (c->kind == CAP_SCALAR && c->local_type) /* the hoisted type is another type for C */
            buf_printf(&b, "    __builtin_memcpy(&macc_a_.%s, &%s, sizeof macc_a_.%s);\n", c->name, c->name, c->name);
        else if (c->kind == CAP_SCALAR)
            buf_printf(&b, "    macc_a_.%s = %s;\n", c->name, c->name);
        else if (c->kind == CAP_PRIVATE) /* the user's variable is no longer used here */
            buf_printf(&b, "    (void)%s;\n", c->name);
    }
    region_launch_fields(r, NULL, &b);
    em__maps(&b, &r->maps, "    ");
    em__deps(&b, &r->deps, "    ");
    if (r->deps.len && e->u->host_dep_tasks.len)
        /* the other direction of the host-task ordering below (emit_host):
         * host tasks with dependences finish before a region with
         * dependences starts (conservative: every child task) */
        buf_puts(&b, "#pragma omp taskwait\n");
    access_emit_trip(e->u, r, &b);
    char dbuf[256];
    const char *dev = em__device(r->device, r->device_expr, dbuf, sizeof dbuf);
    Buf z = {0}; /* OpenACC copyout(zero:) / create(zero:) */
    acc_zero_calls(&r->target->dir, &r->maps, &z, dev, r->if_expr ? r->if_expr : "1", "&macc_zl_", 0);
    acc_region_rows(e->u, r, &z, dev, 0);
    if (z.len)
        buf_printf(&b, "    static const MACC_SrcLoc macc_zl_ = {\"%s\", %d, %d, \"%s\"};\n%s", e->path, r->line, r->col,
                   r->func_name, z.data);
    buf_printf(&b, "    MACC_target(macc_rp_%s(), &macc_a_, sizeof macc_a_, %d, %s, %d, %s, %s, %s, %s);\n%s",
               r->suffix, r->maps.len, r->maps.len ? "macc_m_" : "0", r->deps.len, r->deps.len ? "macc_d_" : "0",
               nowait ? "MACC_NOWAIT" : "0", dev, r->if_expr ? r->if_expr : "1",
               z.len && nowait ? "    MACC_taskwait(&macc_zl_);\n" : "");
    if (z.len) {
        z.len = 0;
        acc_region_rows(e->u, r, &z, dev, 1);
        acc_zero_calls(&r->target->dir, &r->maps, &z, dev, r->if_expr ? r->if_expr : "1", "&macc_zl_", 1);
        buf_puts(&b, z.data);
    }
    buf_free(&z);
    buf_puts(&b, "}");
    size_t end = ts_node_end_byte(r->span);
    em__line_dir(e, &b, end);
    em__edit_gen(e, r->target->start, end, b.data, r->target->start);
}

/* The statement of the innermost OpenMP construct around node n that ends
 * with an implicit barrier (parallel, single, for, sections, no nowait), in
 * the same function; a null node when there is none. */
static TSNode em__barrier_construct(const Unit *u, TSNode n)
{
    TSNode null = {0};
    for (TSNode a = ts_node_parent(n); !ts_node_is_null(a); a = ts_node_parent(a)) {
        if (node_is(a, "function_definition"))
            return null;
        /* the pragma lines right before statement a */
        for (TSNode p = ts_node_prev_named_sibling(a); node_is(p, "preproc_call"); p = ts_node_prev_named_sibling(p)) {
            TSNode arg = node_field(p, "argument");
            if (ts_node_is_null(arg))
                break;
            char *t = node_text(u, arg);
            char w1[16] = "", w2[16] = "";
            int hit = sscanf(t, " omp %15[a-z_] %15[a-z_]", w1, w2) >= 1 && !strstr(t, "nowait") &&
                      (!strcmp(w1, "parallel") || !strcmp(w1, "single") || !strcmp(w1, "for") ||
                       !strcmp(w1, "sections"));
            free(t);
            if (hit)
                return a;
        }
    }
    return null;
}

static void em__loc(Emit *e, Buf *b, const DataConstruct *d)
{
    int line, col;
    source_position(e->u->src, d->pragma->start, &line, &col);
    buf_printf(b, "    static const MACC_SrcLoc macc_l_ = {\"%s\", %d, %d, \"%s\"};\n", e->path, line, col,
               d->func_name);
}

static void em__data(Emit *e, const DataConstruct *d)
{
    Buf b = {0};
    char dbuf[256];
    const char *dev = em__device(d->device, d->device_expr, dbuf, sizeof dbuf);
    const char *maps = d->maps.len ? "macc_m_" : "0";
    const char *deps = d->deps.len ? "macc_d_" : "0";
    DirKind k = d->pragma->dir.kind;
    size_t at = d->pragma->start;
    if (d->pragma->dir.acc_declare) {
        /* acc declare: a data region to the end of the block, however it is left */
        buf_printf(&b, "void *macc_decl_%zu __attribute__((cleanup(MACC_acc_declare_end))) = 0;\n", at);
        buf_printf(&b, "{ /* #pragma %s */\n", d->pragma->text);
        em__loc(e, &b, d);
        em__maps(&b, &d->maps, "    ");
        buf_printf(&b, "    macc_decl_%zu = MACC_acc_declare_begin(&macc_l_, %d, %s, %s);\n}", at, d->maps.len, maps,
                   dev);
        em__line_dir(e, &b, d->pragma->end);
        em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
        return;
    }
    buf_printf(&b, "{ /* #pragma %s */\n", d->pragma->text);
    em__loc(e, &b, d);
    if (k == DIR_TASKWAIT && directive_find(&d->pragma->dir, CL_NOWAIT)) {
        /* taskwait nowait: no task waits */
        buf_puts(&b, "    (void)macc_l_;\n}");
        em__line_dir(e, &b, d->pragma->end);
        em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
        return;
    }
    if (k == DIR_TASKWAIT) {
        /* the runtime's deferred regions, then the host's OpenMP tasks */
        buf_puts(&b, "    MACC_taskwait(&macc_l_);\n");
        buf_puts(&b, "#pragma omp taskwait\n}");
        em__line_dir(e, &b, d->pragma->end);
        em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
        return;
    }
    if (k == DIR_ACC_SET) {
        acc_set_calls(d, &b);
        em__line_dir(e, &b, d->pragma->end);
        em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
        return;
    }
    if (k == DIR_ACC_WAIT) {
        buf_puts(&b, "    MACC_taskwait(&macc_l_);\n}");
        em__line_dir(e, &b, d->pragma->end);
        em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
        return;
    }
    em__maps(&b, &d->maps, "    ");
    if (k == DIR_TARGET_DATA || k == DIR_ACC_DATA) {
        if (k == DIR_ACC_DATA && directive_find(&d->pragma->dir, CL_ACC_WAIT))
            /* wait(q): after the queues' tasks (all of them); async(q): the
             * data moves at once (the region's end waits for its work) */
            buf_puts(&b, "    MACC_taskwait(&macc_l_);\n");
        buf_printf(&b, "    const int macc_if_ = (%s);\n", d->if_expr ? d->if_expr : "1");
        acc_zero_calls(&d->pragma->dir, &d->maps, &b, dev, "macc_if_", "&macc_l_", 0);
        buf_printf(&b, "    if (macc_if_)\n        MACC_data_begin(&macc_l_, %d, %s, %s);", d->maps.len, maps, dev);
        acc_rows_calls(e->u, d, &b, dev, 1);
        acc_attach_calls(d, &b, 1);
        if (d->usedev.len) {
            /* use_device_ptr: a pointer shadowed by one holding the device
             * address; use_device_addr: the device's copy of a variable */
            for (int i = 0; i < d->usedev.len; i++) {
                const UseDev *x = d->usedev.items[i];
                if (x->addr)
                    buf_printf(&b,
                               "\n    __typeof__(%s) *macc_uda_%s = (__typeof__(%s) *)(macc_if_ ? MACC_device_addr("
                               "(const void *)&(%s), %s) : (const void *)&(%s));\n    (void)macc_uda_%s;",
                               x->name, x->name, x->name, x->name, dev, x->name, x->name);
                else
                    buf_printf(&b,
                               "\n    __typeof__(%s) macc_udp_%s = macc_if_ ? (__typeof__(%s))MACC_device_addr("
                               "(const void *)(%s), %s) : (%s);",
                               x->name, x->name, x->name, x->name, dev, x->name);
            }
            buf_puts(&b, "\n    {");
            for (int i = 0; i < d->usedev.len; i++) {
                const UseDev *x = d->usedev.items[i];
                if (!x->addr)
                    buf_printf(&b, "\n    __typeof__(macc_udp_%s) %s = macc_udp_%s;\n    (void)%s;", x->name, x->name,
                               x->name, x->name);
            }
            em__addr_refs(e, d->stmt, d);
        }
        em__line_dir(e, &b, d->pragma->end);
        em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
        size_t end = ts_node_end_byte(d->stmt);
        Buf c = {0};
        /* acc data: async work on its data ends before the data leaves the
         * device (OpenACC programs count on it; waiting for all is correct) */
        buf_printf(&c, "%s\n%s", d->usedev.len ? "\n    }" : "", k == DIR_ACC_DATA ? "    MACC_taskwait(&macc_l_);" : "");
        acc_rows_calls(e->u, d, &c, dev, 0);
        acc_attach_calls(d, &c, 0);
        buf_printf(&c, "%s    if (macc_if_)\n        MACC_data_end(&macc_l_, %d, %s, %s);\n",
                   k == DIR_ACC_DATA ? "\n" : "", d->maps.len, maps, dev);
        acc_zero_calls(&d->pragma->dir, &d->maps, &c, dev, "macc_if_", "&macc_l_", 1);
        buf_puts(&c, "}");
        em__line_dir(e, &c, end);
        em__edit_gen(e, end, end, c.data, at);
        return;
    }
    if ((k == DIR_ACC_UPDATE || k == DIR_ACC_ENTER_DATA || k == DIR_ACC_EXIT_DATA) &&
        (directive_find(&d->pragma->dir, CL_ACC_WAIT) || directive_find(&d->pragma->dir, CL_ACC_ASYNC)))
        /* wait(q) / async(q) on a data directive: after the queues' tasks (all of
         * them: a wait for every queue is a correct wait for one), then at once */
        buf_puts(&b, "    MACC_taskwait(&macc_l_);\n");
    em__deps(&b, &d->deps, "    ");
    const char *fn = (k == DIR_TARGET_ENTER_DATA || k == DIR_ACC_ENTER_DATA) ? "MACC_data_enter"
                     : (k == DIR_TARGET_EXIT_DATA || k == DIR_ACC_EXIT_DATA) ? "MACC_data_exit"
                                                                             : "MACC_data_update";
    acc_attach_calls(d, &b, 0);
    acc_rows_calls(e->u, d, &b, dev, 0);
    if (k == DIR_ACC_ENTER_DATA)
        acc_zero_calls(&d->pragma->dir, &d->maps, &b, dev, d->if_expr ? d->if_expr : "1", "&macc_l_", 0);
    int strided = 0;
    for (int i = 0; i < d->maps.len; i++)
        strided |= ((RMap *)d->maps.items[i])->stride != NULL;
    buf_printf(&b, "%s    if (%s)\n        %s(&macc_l_, %d, %s, %s, %d, %s, %s);", b.len && b.data[b.len - 1] != '\n' ? "\n" : "",
               d->if_expr ? d->if_expr : "1", fn, d->maps.len, maps, dev, d->deps.len, deps,
               d->nowait && !strided ? "MACC_NOWAIT" : "0");
    for (int i = 0; i < d->maps.len; i++) {
        /* a[lo:count:stride]: the first element above, each next one here */
        const RMap *m = d->maps.items[i];
        if (!m->stride)
            continue;
        char kb[160];
        char *name = c_escape(m->name);
        buf_printf(&b,
                   "\n    if (%s)\n        for (long long macc_k_ = 1; macc_k_ < (long long)(%s); macc_k_++) {\n"
                   "            MACC_Map macc_sm_ = {\"%s\", %s, (void *)((char *)(%s) + macc_k_ * (long long)(%s) * "
                   "(long long)(%s)), %s, %s};\n"
                   "            %s(&macc_l_, 1, &macc_sm_, %s, 0, 0, 0);\n        }",
                   d->if_expr ? d->if_expr : "1", m->count, name, m->base, m->start, m->stride, m->bytes, m->bytes,
                   em__map_kind(m->kind, kb, sizeof kb), fn, dev);
        free(name);
    }
    acc_rows_calls(e->u, d, &b, dev, 1);
    acc_attach_calls(d, &b, 1);
    if (k == DIR_ACC_ENTER_DATA) {
        Buf z = {0};
        acc_zero_calls(&d->pragma->dir, &d->maps, &z, dev, d->if_expr ? d->if_expr : "1", "&macc_l_", 1);
        if (z.len)
            buf_printf(&b, "\n%.*s", (int)z.len - 1, z.data); /* without its last newline */
        buf_free(&z);
    }
    buf_puts(&b, "\n}");
    em__line_dir(e, &b, d->pragma->end);
    em__edit_gen(e, d->pragma->start, d->pragma->end, b.data, at);
}

/* --managed: the C library's allocation functions, where an expression names
 * them (calls, and uses as function pointers such as `release = free`),
 * become the runtime's (same signatures). Declarations are left alone, and
 * so are calls inside regions (region bodies are re-emitted from the user's
 * text: allocation inside a region is not managed). */
static int em__expr_parent(TSNode id)
{
    TSNode p = ts_node_parent(id);
    if (ts_node_is_null(p))
        return 0;
    static const char *const ok[] = {
        "call_expression", "argument_list", "assignment_expression", "return_statement",
        "conditional_expression", "cast_expression", "parenthesized_expression",
        "initializer_list", "comma_expression", "binary_expression"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (node_is(p, ok[i]))
            return 1;
    if (node_is(p, "init_declarator")) { /* only the value: T *f = free; */
        TSNode v = node_field(p, "value");
        return !ts_node_is_null(v) && ts_node_eq(v, id);
    }
    return 0;
}

static void em__managed(Emit *e, TSNode n)
{
    static const char *const names[][2] = {
        {"malloc", "MACC_malloc"}, {"calloc", "MACC_calloc"}, {"realloc", "MACC_realloc"},
        {"free", "MACC_free"}, {"aligned_alloc", "MACC_aligned_alloc"},
        {"posix_memalign", "MACC_posix_memalign"}};
    if (node_is(n, "identifier") && em__expr_parent(n)) {
        size_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (strlen(names[i][0]) == b - a && !memcmp(e->u->src->text + a, names[i][0], b - a))
                em__edit(e, a, b, xstrdup(names[i][1]));
        return;
    }
    uint32_t k = ts_node_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        em__managed(e, ts_node_child(n, i));
}

/* declare target pragmas: the host file's C compiler need not see them (its
 * OpenMP may not know the newer forms); the lines stay. */
static void em__declare_pragmas(Emit *e)
{
    const Unit *u = e->u;
    for (int i = 0; i < u->pragmas.len; i++) {
        const Pragma *p = u->pragmas.items[i];
        if (p->dir.kind != DIR_DECLARE_TARGET && p->dir.kind != DIR_END_DECLARE_TARGET)
            continue;
        em__blank(e, p->start, p->end);
    }
}

/* The device copies of the file's globals (declare target variables), when
 * the device file is built: registered with the runtime before main, with
 * the device file's table of their symbols. */
static void em__devvars(const Emit *e, Buf *b)
{
    const Unit *u = e->u;
    /* an extern declaration's device copy is the defining file's, which registers it */
    const DevVar *first = NULL;
    int n = 0;
    for (int i = 0; i < u->devvars.len; i++) {
        const DevVar *v = u->devvars.items[i];
        if (!v->external && !n++)
            first = v;
    }
    if (!n)
        return;
    buf_printf(b, "\n#if defined(MACC_WITH_CUDA)\n/* declare target variables: their device copies are in the device file */\n");
    buf_printf(b, "extern const void *const %s[];\n", u->dt_key);
    buf_puts(b, "static void macc_dt_register_(void) __attribute__((constructor));\nstatic void macc_dt_register_(void)\n{\n");
    buf_printf(b, "    static const MACC_SrcLoc macc_l_ = {\"%s\", %d, 1, \"declare target\"};\n", e->path,
               em__line(e, ts_node_start_byte(first->declarator)));
    buf_printf(b, "    MACC_DeclareTarget macc_v_[%d] = {\n", n);
    for (int i = 0; i < u->devvars.len; i++) {
        const DevVar *v = u->devvars.items[i];
        if (v->external)
            continue;
        const char *fl = v->link && v->init_from_host ? "MACC_DT_LINK | MACC_DT_INIT"
                         : v->link                    ? "MACC_DT_LINK"
                         : v->init_from_host          ? "MACC_DT_INIT"
                                                      : "0";
        buf_printf(b, "        {\"%s\", (void *)&(%s), sizeof(%s), %s},\n", v->name, v->name, v->name, fl);
    }
    buf_printf(b, "    };\n    MACC_declare_target(&macc_l_, %d, macc_v_, %s);\n}\n#endif\n", n, u->dt_key);
}

void emit_host(Unit *u, Buf *out, const char *display_path)
{
    Emit e = {0};
    e.u = u;
    char *path = c_escape(display_path);
    e.path = path;

    /* outlined code, grouped per function, before the function */
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        int first = 1;
        for (int j = 0; j < i; j++)
            if (ts_node_eq(((Region *)u->regions.items[j])->func, r->func))
                first = 0;
        if (!first)
            continue;
        Buf b = {0};
        em__local_types(&e, r, &b);
        for (int j = i; j < u->regions.len; j++) {
            Region *q = u->regions.items[j];
            if (ts_node_eq(q->func, r->func))
                em__outlined(&e, q, &b);
        }
        size_t fs = ts_node_start_byte(r->func);
        em__line_dir(&e, &b, fs);
        em__edit(&e, fs, fs, b.data);
    }
    for (int i = 0; i < u->regions.len; i++)
        em__call(&e, u->regions.items[i]);
    for (int i = 0; i < u->datas.len; i++)
        em__data(&e, u->datas.items[i]);
    if (u->managed)
        em__managed(&e, ts_tree_root_node(u->tree));
    em__declare_pragmas(&e);

    /* a host task with dependences after a deferred target region with
     * dependences: the runtime's deferred regions finish first (libgomp does
     * not know them), so target nowait depend(out: a) then task depend(in: a)
     * is ordered; conservative: it waits for every deferred region */
    int deferred_deps = 0;
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        deferred_deps |= r->nowait && r->deps.len;
    }
    for (int i = 0; i < u->host_dep_tasks.len && deferred_deps; i++) {
        const Pragma *p = u->host_dep_tasks.items[i];
        int line, col;
        source_position(u->src, p->start, &line, &col);
        TSNode f = ts_node_parent(p->node);
        while (!ts_node_is_null(f) && !node_is(f, "function_definition"))
            f = ts_node_parent(f);
        if (ts_node_is_null(f))
            continue;
        em__edit(&e, p->start, p->start,
                 xsprintf("{ static const MACC_SrcLoc macc_l_ = {\"%s\", %d, %d, \"task\"}; MACC_taskwait(&macc_l_); }\n",
                          source_cfile(u->src, p->start), line, col));
    }
    /* a deferred region (nowait) inside a construct that ends with a barrier
     * (parallel, single, for, sections without nowait): OpenMP's barrier waits
     * for it, libgomp's does not know it, so the thread that made it waits for
     * the runtime's deferred regions at the end of the innermost such construct */
    StrSet waited = {0};
    for (int i = 0; i < u->regions.len; i++) {
        const Region *r = u->regions.items[i];
        if (!r->nowait)
            continue;
        TSNode body = em__barrier_construct(u, r->target->node);
        if (ts_node_is_null(body))
            continue;
        /* inside the construct, so that the thread that ran its statement (the
         * one that made the regions: single) waits: braces around the statement */
        size_t b = ts_node_start_byte(body), at = ts_node_end_byte(body);
        char key[32];
        snprintf(key, sizeof key, "%zu", at);
        if (!strset_add(&waited, key, strlen(key)))
            continue;
        int line, col;
        source_position(u->src, r->target->start, &line, &col);
        em__edit(&e, b, b, xstrdup("{ "));
        em__edit(&e, at, at,
                 xsprintf("\n{ static const MACC_SrcLoc macc_l_ = {\"%s\", %d, %d, \"barrier\"}; MACC_taskwait(&macc_l_); } }",
                          source_cfile(u->src, r->target->start), line, col));
    }
    strset_free(&waited);
    for (int i = 0; i < u->blanks.len; i++) {
        const Pragma *p = u->blanks.items[i];
        em__blank(&e, p->start, p->end);
    }
    em__dispatches(&e);
    em__allocates(&e);
    {
        /* begin declare variant: the functions renamed, the lines replaced
         * (the end line by the declare variant directives of the bases) */
        size_t ls, le;
        const char *lt;
        for (int i = 0; variant_block_line(u, i, &ls, &le, &lt); i++) {
            Buf t = {0};
            if (lt) {
                buf_printf(&t, "\n%s", lt);
                em__line_dir(&e, &t, le);
            } else {
                em__newlines(u, ls, le, &t);
            }
            em__edit(&e, ls, le, t.data ? t.data : xstrdup(""));
        }
        em__renames(&e);
    }
    for (int i = 0; i < u->rewrites.len; i++) {
        const Pragma *p = u->rewrites.items[i];
        Buf t = {0};
        buf_printf(&t, "#pragma %s", p->host_text);
        em__newlines(u, p->start, p->end, &t);
        em__edit(&e, p->start, p->end, t.data);
    }
    /* the runtime's header, when the program includes it too: the file's
     * own #include at the top is the one copy */
    const Source *src = u->src;
    for (int i = 0; i < src->nlines; i++) {
        if (src->omark[i] || !source_file_is(src, src->lines[i], "macc_rt.h"))
            continue;
        int j = i;
        while (j + 1 < src->nlines && !src->omark[j + 1] && source_file_is(src, src->lines[j + 1], "macc_rt.h"))
            j++;
        size_t b = src->lines[i], end = j + 1 < src->nlines ? src->lines[j + 1] : src->len;
        em__blank(&e, b, end);
        i = j;
    }
    if (e.edits.len)
        qsort(e.edits.items, (size_t)e.edits.len, sizeof(void *), em__cmp_edit);

    buf_printf(out, "/* @generated by macc %s from %s: do not edit. */\n", MACC_VERSION_STRING, path);
    buf_puts(out, "#ifndef __MACC__\n#define __MACC__ 1\n#endif\n#include \"macc_rt.h\"\n");
    buf_printf(out, "#line 1 \"%s\"\n", path);
    size_t pos = 0;
    for (int i = 0; i < e.edits.len; i++) {
        Edit *x = e.edits.items[i];
        if (x->start < pos)
            continue; /* overlapping edits cannot happen for valid nesting */
        buf_put(out, u->src->text + pos, x->start - pos);
        buf_puts(out, x->text);
        pos = x->end;
    }
    buf_put(out, u->src->text + pos, u->src->len - pos);
    em__devvars(&e, out);
    for (int i = 0; i < e.edits.len; i++) {
        Edit *x = e.edits.items[i];
        free(x->text);
        free(x);
    }
    vec_free(&e.edits);
    strset_free(&e.hoisted);
    free(path);
}
