/* variant.c: `#pragma omp declare variant(v) match(...)` (OpenMP 5.0).
 *
 * The C compiler resolves variants by itself in host code, but a region's
 * code is not where the user wrote it any more: the host version is an
 * outlined function (no longer lexically inside `target`) and the kernel is
 * in the device file (where the pragma is not). So macc picks the variant of
 * every call in a region's code (and in the device copies of functions) and
 * writes the variant's name into the call:
 *
 *  - construct={target, teams, parallel, for, simd}: the traits must all be
 *    constructs of the call's context: `target` and the region's construct
 *    set for calls in a region's statement, `target` alone in device
 *    functions (OpenMP adds `target` to the context of declare target code);
 *  - device={kind(gpu|nohost|host|cpu|any), arch(nvptx|nvptx64|sm_NN|x86_64)}:
 *    the GPU version or the host version;
 *  - a variant with any other selector (implementation, user, target_device,
 *    isa, dispatch) is never picked here (the C compiler may still pick it
 *    in host code).
 *
 * Among the variants that match, the one with the most traits wins; the first
 * declared on a tie (OpenMP scores traits by their position in the context;
 * this is that rule for the contexts macc sees). */
#include <stdlib.h>
#include <string.h>

#include "macc.h"

typedef struct Variant {
    char *base, *name;
    size_t start, end; /* the directive's line(s) */
    unsigned traits;  /* VT_* construct traits */
    int kind;         /* 0 any, 1 host, 2 gpu */
    int unsupported;  /* a selector macc does not evaluate */
} Variant;

static const char *vt__ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

/* The matching ')' or '}' of the opening bracket at s[-1], or NULL. */
static const char *vt__close(const char *s)
{
    int depth = 1;
    for (; *s; s++) {
        if (*s == '(' || *s == '{')
            depth++;
        else if ((*s == ')' || *s == '}') && --depth == 0)
            return s;
    }
    return NULL;
}

static int vt__word(const char *s, const char *e, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(e - s) == n && !strncmp(s, w, n);
}

/* The traits of one selector set's body [s, e): "target, teams" or
 * "kind(gpu), arch(nvptx64)". */
static void vt__set(Variant *v, const char *set, size_t setn, const char *s, const char *e)
{
    int construct = setn == 9 && !strncmp(set, "construct", 9);
    int device = setn == 6 && !strncmp(set, "device", 6);
    if (!construct && !device) {
        v->unsupported = 1;
        return;
    }
    while (s < e) {
        s = vt__ws(s);
        const char *w = s;
        while (s < e && ident_char(*s))
            s++;
        const char *we = s;
        if (w == we) {
            s++;
            continue;
        }
        s = vt__ws(s);
        const char *args = NULL, *ae = NULL;
        if (s < e && *s == '(') {
            args = s + 1;
            ae = vt__close(args);
            if (!ae || ae > e) {
                v->unsupported = 1;
                return;
            }
            s = ae + 1;
        }
        if (construct) {
            if (vt__word(w, we, "target"))
                v->traits |= VT_TARGET;
            else if (vt__word(w, we, "teams"))
                v->traits |= VT_TEAMS;
            else if (vt__word(w, we, "parallel"))
                v->traits |= VT_PARALLEL;
            else if (vt__word(w, we, "for"))
                v->traits |= VT_FOR;
            else if (vt__word(w, we, "simd"))
                v->traits |= VT_SIMD;
            else if (vt__word(w, we, "dispatch"))
                v->traits |= VT_DISPATCH;
            else
                v->unsupported = 1;
        } else if (args && (vt__word(w, we, "kind") || vt__word(w, we, "arch"))) {
            int arch = vt__word(w, we, "arch");
            for (const char *a = args; a < ae;) {
                a = vt__ws(a);
                if (*a == '"')
                    a++;
                const char *x = a;
                while (a < ae && ident_char(*a))
                    a++;
                const char *xe = a;
                while (a < ae && *a != ',')
                    a++;
                a++;
                int k = 0;
                if (!arch && (vt__word(x, xe, "gpu") || vt__word(x, xe, "nohost")))
                    k = 2;
                else if (!arch && (vt__word(x, xe, "host") || vt__word(x, xe, "cpu")))
                    k = 1;
                else if (!arch && vt__word(x, xe, "any"))
                    continue;
                else if (arch && (vt__word(x, xe, "nvptx") || vt__word(x, xe, "nvptx64") ||
                                  (xe - x > 3 && !strncmp(x, "sm_", 3))))
                    k = 2;
                else if (arch && (vt__word(x, xe, "x86_64") || vt__word(x, xe, "x86") || vt__word(x, xe, "aarch64")))
                    k = 1;
                else {
                    v->unsupported = 1;
                    continue;
                }
                if (v->kind && v->kind != k)
                    v->unsupported = 1; /* never matches */
                v->kind = k;
            }
        } else {
            v->unsupported = 1; /* isa, vendor, ... */
        }
        s = vt__ws(s);
        if (s < e && *s == ',')
            s++;
    }
}

/* Parses "omp declare variant(name) match(sets)"; 0 when it is not one. */
static int vt__parse(const char *t, Variant *v)
{
    const char *s = vt__ws(t);
    static const char *const words[] = {"omp", "declare", "variant"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if (strncmp(s, words[i], n) || ident_char(s[n]))
            return 0;
        s = vt__ws(s + n);
    }
    if (*s != '(')
        return 0;
    const char *ne = vt__close(s + 1);
    if (!ne)
        return 0;
    const char *a = vt__ws(s + 1), *b = ne;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    for (const char *q = a; q < b; q++)
        if (!ident_char(*q))
            return 0;
    if (a == b)
        return 0;
    v->name = xstrndup(a, (size_t)(b - a));
    s = vt__ws(ne + 1);
    while (*s) {
        const char *w = s;
        while (ident_char(*s))
            s++;
        size_t wn = (size_t)(s - w);
        s = vt__ws(s);
        if (*s != '(')
            break;
        const char *ce = vt__close(s + 1);
        if (!ce)
            break;
        if (wn == 5 && !strncmp(w, "match", 5)) {
            for (const char *p = s + 1; p < ce;) {
                p = vt__ws(p);
                const char *set = p;
                while (p < ce && ident_char(*p))
                    p++;
                size_t setn = (size_t)(p - set);
                p = vt__ws(p);
                if (!setn || *p != '=') {
                    v->unsupported = 1;
                    break;
                }
                p = vt__ws(p + 1);
                if (*p != '{') {
                    v->unsupported = 1;
                    break;
                }
                const char *be = vt__close(p + 1);
                if (!be || be > ce) {
                    v->unsupported = 1;
                    break;
                }
                vt__set(v, set, setn, p + 1, be);
                p = vt__ws(be + 1);
                if (*p == ',')
                    p++;
            }
        } else {
            v->unsupported = 1; /* adjust_args, append_args (5.1) */
        }
        s = vt__ws(ce + 1);
    }
    return 1;
}

/* The name of the function declared or defined by file-scope node n. */
static char *vt__function_name(const Unit *u, TSNode n)
{
    if (node_is(n, "declaration") && node_is(node_field(n, "declarator"), "init_declarator"))
        return NULL;
    TSNode id = node_function_id(n);
    return ts_node_is_null(id) ? NULL : node_text(u, id);
}

typedef struct VtRename {
    size_t off;
    char *name;
} VtRename;

typedef struct VtLine {
    size_t start, end;
    char *text;
} VtLine;

/* Is pragma text t `omp begin declare variant ...` (1, *match set to the
 * text after "variant") or `omp end declare variant` (2)? */
static int vt__block(const char *t, const char **match)
{
    const char *s = vt__ws(t);
    static const char *const words[] = {"omp", "begin", "declare", "variant"};
    int end = 0;
    for (int i = 0; i < 4; i++) {
        const char *w = words[i];
        if (i == 1 && !strncmp(s, "end", 3) && !ident_char(s[3])) {
            end = 1;
            s = vt__ws(s + 3);
            continue;
        }
        size_t n = strlen(w);
        if (strncmp(s, w, n) || ident_char(s[n]))
            return 0;
        s = vt__ws(s + n);
    }
    *match = s;
    return end ? 2 : 1;
}

/* begin declare variant blocks: each function defined in one becomes a
 * variant (renamed) of the function of its name; the end line declares them
 * for the C compiler (a prototype of the base after each directive). */
static void vt__blocks(Unit *u)
{
    const char *match = NULL;
    char *open = NULL; /* the match text of the block we are in */
    Buf decls = {0};
    for (int i = 0; i < u->ntop; i++) {
        TSNode n = u->top[i];
        if (node_is(n, "preproc_call")) {
            TSNode arg = node_field(n, "argument");
            char *t = ts_node_is_null(arg) ? NULL : node_text(u, arg);
            int k = t ? vt__block(t, &match) : 0;
            if (k) {
                VtLine *l = xcalloc(1, sizeof *l);
                l->start = ts_node_start_byte(n);
                l->end = ts_node_end_byte(n);
                if (k == 1) {
                    free(open);
                    open = xstrdup(match);
                    for (char *c = open; *c; c++) /* a comment after the directive */
                        if (c[0] == '/' && (c[1] == '/' || c[1] == '*')) {
                            *c = 0;
                            break;
                        }
                    decls.len = 0;
                } else if (open) {
                    l->text = decls.data ? xstrndup(decls.data, decls.len) : NULL;
                    free(open);
                    open = NULL;
                }
                vec_push(&u->vblocks, l);
            }
            free(t);
            continue;
        }
        if (!open || !node_is(n, "function_definition"))
            continue;
        TSNode id = node_function_id(n);
        if (ts_node_is_null(id))
            continue;
        char *base = node_text(u, id);
        VtRename *r = xcalloc(1, sizeof *r);
        r->off = ts_node_start_byte(id);
        r->name = xsprintf("macc_bdv_%s_%d", base, u->renames.len + 1);
        vec_push(&u->renames, r);
        char *line = xsprintf("omp declare variant(%s) %s", r->name, open);
        Variant v = {0};
        if (vt__parse(line, &v)) {
            Variant *x = xmalloc(sizeof *x);
            *x = v;
            x->base = xstrdup(base);
            vec_push(&u->variants, x);
        }
        free(line);
        /* for the C compiler: the directive, then the base's prototype */
        TSNode body = node_field(n, "body");
        size_t hb = ts_node_start_byte(n), he = ts_node_start_byte(body);
        buf_printf(&decls, "#pragma omp declare variant(%s) %s\n%.*s;\n", r->name, open, (int)(he - hb),
                   u->src->text + hb);
        free(base);
    }
    free(open);
    buf_free(&decls);
}

const char *variant_renamed(const Unit *u, size_t off)
{
    for (int i = 0; i < u->renames.len; i++) {
        const VtRename *r = u->renames.items[i];
        if (r->off == off)
            return r->name;
    }
    return NULL;
}

int variant_block_line(const Unit *u, int i, size_t *start, size_t *end, const char **text)
{
    if (i >= u->vblocks.len)
        return 0;
    const VtLine *l = u->vblocks.items[i];
    *start = l->start;
    *end = l->end;
    *text = l->text;
    return 1;
}

void variants_collect(Unit *u)
{
    vt__blocks(u);
    for (int i = 0; i < u->ntop; i++) {
        TSNode n = u->top[i];
        if (!node_is(n, "preproc_call"))
            continue;
        TSNode arg = node_field(n, "argument");
        if (ts_node_is_null(arg))
            continue;
        char *t = node_text(u, arg);
        Variant v = {0};
        if (!vt__parse(t, &v)) {
            free(t);
            continue;
        }
        free(t);
        int j = i + 1;
        while (j < u->ntop && (node_is(u->top[j], "preproc_call") || node_is(u->top[j], "comment")))
            j++;
        char *base = j < u->ntop ? vt__function_name(u, u->top[j]) : NULL;
        if (!base) {
            free(v.name);
            continue;
        }
        Variant *x = xmalloc(sizeof *x);
        *x = v;
        x->base = base;
        x->start = ts_node_start_byte(n);
        x->end = ts_node_end_byte(n);
        vec_push(&u->variants, x);
    }
}

int variant_dispatch_line(const Unit *u, int i, size_t *start, size_t *end)
{
    for (int k = 0; k < u->variants.len; k++) {
        const Variant *v = u->variants.items[k];
        if (!(v->traits & VT_DISPATCH) || i--)
            continue;
        *start = v->start;
        *end = v->end;
        return 1;
    }
    return 0;
}

void variants_free(Unit *u)
{
    for (int i = 0; i < u->renames.len; i++) {
        VtRename *r = u->renames.items[i];
        free(r->name);
        free(r);
    }
    vec_free(&u->renames);
    for (int i = 0; i < u->vblocks.len; i++) {
        VtLine *l = u->vblocks.items[i];
        free(l->text);
        free(l);
    }
    vec_free(&u->vblocks);
    for (int i = 0; i < u->variants.len; i++) {
        Variant *v = u->variants.items[i];
        free(v->base);
        free(v->name);
        free(v);
    }
    vec_free(&u->variants);
}

static int vt__bits(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

const char *variant_pick(const Unit *u, const char *base, size_t len, unsigned context, int gpu)
{
    const Variant *best = NULL;
    int best_score = -1;
    for (int i = 0; i < u->variants.len; i++) {
        const Variant *v = u->variants.items[i];
        if (v->unsupported || strlen(v->base) != len || strncmp(v->base, base, len))
            continue;
        if ((v->traits & context) != v->traits)
            continue;
        if (v->kind && v->kind != (gpu ? 2 : 1))
            continue;
        int score = vt__bits(v->traits) + (v->kind != 0);
        if (score > best_score) {
            best = v;
            best_score = score;
        }
    }
    return best ? best->name : NULL;
}

unsigned variant_context(unsigned cs)
{
    unsigned t = VT_TARGET;
    if (cs & CS_TEAMS)
        t |= VT_TEAMS;
    if (cs & (CS_PARALLEL | CS_PARALLEL_FOR))
        t |= VT_PARALLEL;
    if (cs & (CS_FOR | CS_PARALLEL_FOR))
        t |= VT_FOR;
    if (cs & CS_SIMD)
        t |= VT_SIMD;
    return t;
}

const char *variant_of_call(const Unit *u, TSNode id, unsigned context, int gpu)
{
    if (!u->variants.len || !node_is(id, "identifier"))
        return NULL;
    TSNode p = ts_node_parent(id);
    if (!node_is(p, "call_expression") || !ts_node_eq(node_field(p, "function"), id))
        return NULL;
    size_t b = ts_node_start_byte(id), e = ts_node_end_byte(id);
    return variant_pick(u, u->src->text + b, e - b, context, gpu);
}
