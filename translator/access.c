/* access.c: compile-time access facts of the objects a region uses (OTM, seed 004).
 *
 * For every pointer or array a target region maps, the translator estimates
 * how often one iteration of the region's outer loop touches it (OTM's local
 * access frequency), its element size, and its rank by estimated accesses over
 * all regions of the file (OTM's global access frequency -> reuse rank). With
 * --managed the facts go to the runtime in the region descriptor
 * (MACC_Region.naccess / access), which turns them into an access density at
 * each launch (runtime/placement.c); --info prints them.
 *
 * The counting (docs/TRANSLATION.md, "Access facts"):
 *  - each `x[...]` (a subscript chain counts once), `*x`, `*(x + e)` and
 *    `x->f` of an object x counts 1, times the weight of where it stands;
 *  - a nested loop multiplies its body (and its condition and update) by its
 *    trip count when the bounds and step are literals, else by
 *    ACCESS_LOOP_WEIGHT; while and do loops by ACCESS_LOOP_WEIGHT;
 *  - the branches of if, ?: and the right operand of && and || are weighted
 *    by ACCESS_BRANCH_PROB;
 *  - the outer loop is the region's loop nest (collapse(n): the n loops, the
 *    innermost body counted per iteration of the collapsed space); a region
 *    without a loop is one iteration;
 *  - an object with no counted access (only passed to a function, say) has
 *    unknown accesses (-1): the runtime takes it as dense.
 * Global access frequency of a name: the sum over the file's regions of its
 * accesses per iteration times ACCESS_LOOP_WEIGHT per host loop around the
 * region in its function. Reuse rank: 1 + the number of names with a larger
 * one (ties share a rank). Objects are told apart by name only.
 */
#include "macc.h"

#include <stdlib.h>
#include <string.h>

#define ACCESS_LOOP_WEIGHT 4.0  /* trip of a loop whose trip the translator does not know */
#define ACCESS_BRANCH_PROB 0.5  /* probability of a branch */

typedef struct AccessCx {
    const Unit *u;
    const Region *r;
    double *count; /* per capture index */
} AccessCx;

static int ac__object(const Capture *c)
{
    return (c->kind == CAP_PTR || c->kind == CAP_ARRAY) && c->map >= 0;
}

/* The capture index of object identifier node id, or -1. */
static int ac__obj_index(const AccessCx *x, TSNode id)
{
    while (node_is(id, "parenthesized_expression"))
        id = ts_node_named_child(id, 0);
    if (!node_is(id, "identifier"))
        return -1;
    char *name = node_text(x->u, id);
    int k = -1;
    for (int i = 0; i < x->r->caps.len && k < 0; i++) {
        const Capture *c = x->r->caps.items[i];
        if (ac__object(c) && !strcmp(c->name, name))
            k = i;
    }
    free(name);
    return k;
}

/* Value of a literal integer expression (with + - * and parentheses); 0 if not one. */
static int ac__const(const Unit *u, TSNode n, long long *v)
{
    if (ts_node_is_null(n))
        return 0;
    if (node_is(n, "parenthesized_expression"))
        return ac__const(u, ts_node_named_child(n, 0), v);
    if (node_is(n, "number_literal")) {
        char *t = node_text(u, n);
        char *end;
        long long x = strtoll(t, &end, 0);
        while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
            end++;
        int ok = *end == 0;
        free(t);
        *v = x;
        return ok;
    }
    if (node_is(n, "unary_expression")) {
        char *op = node_text(u, node_field(n, "operator"));
        long long a;
        int neg = !strcmp(op, "-");
        int ok = ac__const(u, node_field(n, "argument"), &a) && (neg || !strcmp(op, "+"));
        free(op);
        *v = neg ? -a : a;
        return ok;
    }
    if (node_is(n, "binary_expression")) {
        long long a, b;
        if (!ac__const(u, node_field(n, "left"), &a) || !ac__const(u, node_field(n, "right"), &b))
            return 0;
        char *op = node_text(u, node_field(n, "operator"));
        int ok = 1;
        if (!strcmp(op, "+")) *v = a + b;
        else if (!strcmp(op, "-")) *v = a - b;
        else if (!strcmp(op, "*")) *v = a * b;
        else ok = 0;
        free(op);
        return ok;
    }
    return 0;
}

/* A canonical loop's parts: the variable, lb, ub, step nodes, the comparison. */
typedef struct AcLoop {
    char *var;
    TSNode lb, ub, step; /* step null: 1 (or -1 for --) */
    int step_sign;       /* +1 / -1 when step is null; the sign to apply to step otherwise */
    char cmp;            /* '<' 'l'(<=) '>' 'g'(>=) */
} AcLoop;

static void ac__loop_free(AcLoop *l)
{
    free(l->var);
    l->var = NULL;
}

static int ac__loop(const Unit *u, TSNode loop, AcLoop *l)
{
    memset(l, 0, sizeof *l);
    if (!node_is(loop, "for_statement"))
        return 0;
    TSNode init = node_field(loop, "initializer");
    TSNode cond = node_field(loop, "condition");
    TSNode upd = node_field(loop, "update");
    if (ts_node_is_null(init) || ts_node_is_null(cond) || ts_node_is_null(upd))
        return 0;
    TSNode vid = {0};
    if (node_is(init, "declaration")) {
        if (ts_node_named_child_count(init) < 2)
            return 0;
        TSNode d = node_field(init, "declarator");
        if (!node_is(d, "init_declarator"))
            return 0;
        vid = node_field(d, "declarator");
        l->lb = node_field(d, "value");
    } else if (node_is(init, "assignment_expression")) {
        vid = node_field(init, "left");
        l->lb = node_field(init, "right");
    }
    if (!node_is(vid, "identifier") || ts_node_is_null(l->lb))
        return 0;
    l->var = node_text(u, vid);
    while (node_is(cond, "parenthesized_expression"))
        cond = ts_node_named_child(cond, 0);
    if (!node_is(cond, "binary_expression"))
        goto bad;
    char *op = node_text(u, node_field(cond, "operator"));
    TSNode left = node_field(cond, "left"), right = node_field(cond, "right");
    char *lt = node_text(u, left), *rt = node_text(u, right);
    int var_left = !strcmp(lt, l->var), var_right = !strcmp(rt, l->var);
    free(lt);
    free(rt);
    char c = !strcmp(op, "<") ? '<' : !strcmp(op, "<=") ? 'l' : !strcmp(op, ">") ? '>' : !strcmp(op, ">=") ? 'g' : 0;
    free(op);
    if (!c || var_left == var_right)
        goto bad;
    if (var_right) /* ub > i  is  i < ub */
        c = c == '<' ? '>' : c == 'l' ? 'g' : c == '>' ? '<' : 'l';
    l->cmp = c;
    l->ub = var_left ? right : left;
    if (node_is(upd, "update_expression")) {
        char *t = node_text(u, upd);
        l->step_sign = strstr(t, "++") ? 1 : -1;
        free(t);
    } else if (node_is(upd, "assignment_expression")) {
        char *o = node_text(u, node_field(upd, "operator"));
        l->step = node_field(upd, "right");
        l->step_sign = !strcmp(o, "+=") ? 1 : !strcmp(o, "-=") ? -1 : 0;
        free(o);
        if (!l->step_sign)
            goto bad;
    } else {
        goto bad;
    }
    return 1;
bad:
    ac__loop_free(l);
    return 0;
}

/* The trip count of a loop with literal bounds; 0 when not known. */
static int ac__const_trip(const Unit *u, TSNode loop, double *trip)
{
    AcLoop l;
    if (!ac__loop(u, loop, &l))
        return 0;
    long long lb, ub, st = 1;
    int ok = ac__const(u, l.lb, &lb) && ac__const(u, l.ub, &ub) && (ts_node_is_null(l.step) || ac__const(u, l.step, &st));
    st *= l.step_sign;
    ac__loop_free(&l);
    if (!ok || st == 0)
        return 0;
    long long n;
    switch (l.cmp) {
    case '<': n = ub > lb && st > 0 ? (ub - lb + st - 1) / st : 0; break;
    case 'l': n = ub >= lb && st > 0 ? (ub - lb + st) / st : 0; break;
    case '>': n = lb > ub && st < 0 ? (lb - ub - st - 1) / -st : 0; break;
    default: n = lb >= ub && st < 0 ? (lb - ub - st) / -st : 0; break;
    }
    *trip = (double)n;
    return 1;
}

static void ac__walk(AccessCx *x, TSNode n, double w);

static void ac__children(AccessCx *x, TSNode n, double w)
{
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        ac__walk(x, ts_node_named_child(n, i), w);
}

static void ac__walk(AccessCx *x, TSNode n, double w)
{
    if (ts_node_is_null(n) || node_is(n, "comment") || node_is(n, "preproc_call"))
        return;
    if (node_is(n, "for_statement")) {
        double trip;
        if (!ac__const_trip(x->u, n, &trip))
            trip = ACCESS_LOOP_WEIGHT;
        ac__walk(x, node_field(n, "initializer"), w);
        ac__walk(x, node_field(n, "condition"), w * trip);
        ac__walk(x, node_field(n, "update"), w * trip);
        ac__walk(x, node_field(n, "body"), w * trip);
        return;
    }
    if (node_is(n, "while_statement") || node_is(n, "do_statement")) {
        ac__walk(x, node_field(n, "condition"), w * ACCESS_LOOP_WEIGHT);
        ac__walk(x, node_field(n, "body"), w * ACCESS_LOOP_WEIGHT);
        return;
    }
    if (node_is(n, "if_statement")) {
        ac__walk(x, node_field(n, "condition"), w);
        ac__walk(x, node_field(n, "consequence"), w * ACCESS_BRANCH_PROB);
        ac__walk(x, node_field(n, "alternative"), w * ACCESS_BRANCH_PROB);
        return;
    }
    if (node_is(n, "conditional_expression")) {
        ac__walk(x, node_field(n, "condition"), w);
        ac__walk(x, node_field(n, "consequence"), w * ACCESS_BRANCH_PROB);
        ac__walk(x, node_field(n, "alternative"), w * ACCESS_BRANCH_PROB);
        return;
    }
    if (node_is(n, "binary_expression")) {
        char *op = node_text(x->u, node_field(n, "operator"));
        int lazy = !strcmp(op, "&&") || !strcmp(op, "||");
        free(op);
        ac__walk(x, node_field(n, "left"), w);
        ac__walk(x, node_field(n, "right"), lazy ? w * ACCESS_BRANCH_PROB : w);
        return;
    }
    if (node_is(n, "subscript_expression")) {
        /* a[i][j]: one access of a; the indices are walked */
        TSNode base = n;
        while (node_is(base, "subscript_expression")) {
            ac__walk(x, node_field(base, "index"), w);
            base = node_field(base, "argument");
        }
        int k = ac__obj_index(x, base);
        if (k >= 0)
            x->count[k] += w;
        else
            ac__walk(x, base, w);
        return;
    }
    if (node_is(n, "pointer_expression")) {
        char *op = node_text(x->u, node_field(n, "operator"));
        int deref = !strcmp(op, "*");
        free(op);
        TSNode a = node_field(n, "argument");
        while (node_is(a, "parenthesized_expression"))
            a = ts_node_named_child(a, 0);
        int k = deref ? ac__obj_index(x, a) : -1;
        if (k < 0 && deref && node_is(a, "binary_expression")) { /* *(p + i) */
            k = ac__obj_index(x, node_field(a, "left"));
            if (k < 0)
                k = ac__obj_index(x, node_field(a, "right"));
        }
        if (k >= 0)
            x->count[k] += w;
        ac__children(x, a, w);
        return;
    }
    if (node_is(n, "field_expression")) {
        char *op = node_text(x->u, node_field(n, "operator"));
        int arrow = !strcmp(op, "->");
        free(op);
        TSNode a = node_field(n, "argument");
        int k = arrow ? ac__obj_index(x, a) : -1;
        if (k >= 0)
            x->count[k] += w;
        else
            ac__walk(x, a, w);
        return;
    }
    ac__children(x, n, w);
}

/* May the call site evaluate expression n (the region not yet started)?
 * Literals, operators, casts, and identifiers that are not non-scalar captures. */
static int ac__host_expr(const Unit *u, const Region *r, TSNode n)
{
    if (ts_node_is_null(n))
        return 1;
    const char *t = node_type(n);
    if (!strcmp(t, "identifier")) {
        char *name = node_text(u, n);
        int ok = 1;
        for (int i = 0; i < r->caps.len; i++) {
            const Capture *c = r->caps.items[i];
            if (!strcmp(c->name, name) && c->kind != CAP_SCALAR)
                ok = 0;
        }
        for (int i = 0; i < r->loop_vars.len; i++) /* an inner bound that uses an outer variable */
            if (!strcmp(r->loop_vars.items[i], name))
                ok = 0;
        free(name);
        return ok;
    }
    if (strcmp(t, "number_literal") && strcmp(t, "binary_expression") && strcmp(t, "unary_expression") &&
        strcmp(t, "parenthesized_expression") && strcmp(t, "cast_expression") && strcmp(t, "type_descriptor") &&
        strcmp(t, "primitive_type") && strcmp(t, "sized_type_specifier") && strcmp(t, "type_identifier") &&
        strcmp(t, "sizeof_expression"))
        return 0;
    if (!strcmp(t, "unary_expression")) {
        char *op = node_text(u, node_field(n, "operator"));
        int ok = !strcmp(op, "-") || !strcmp(op, "+") || !strcmp(op, "~") || !strcmp(op, "!");
        free(op);
        if (!ok)
            return 0;
    }
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (!ac__host_expr(u, r, ts_node_named_child(n, i)))
            return 0;
    return 1;
}

/* The trip count expression of a canonical loop that the call site can evaluate, or NULL. */
static char *ac__trip_expr(const Unit *u, const Region *r, TSNode loop, Buf *shown)
{
    AcLoop l;
    if (!ac__loop(u, loop, &l))
        return NULL;
    char *res = NULL;
    if (ac__host_expr(u, r, l.lb) && ac__host_expr(u, r, l.ub) && ac__host_expr(u, r, l.step)) {
        char *lb = node_text(u, l.lb), *ub = node_text(u, l.ub);
        char *st = ts_node_is_null(l.step) ? xstrdup("1") : node_text(u, l.step);
        const char *sg = l.step_sign < 0 ? "-" : "";
        static const char *const cmps[] = {"<", "<=", ">", ">="};
        int ci = l.cmp == '<' ? 0 : l.cmp == 'l' ? 1 : l.cmp == '>' ? 2 : 3;
        buf_printf(shown, "%s%s from %s while %s %s, step %s%s", shown->len ? " * " : "", l.var, lb, cmps[ci], ub, sg, st);
        /* as the GPU version computes it (emit_cuda's trip), with the step's sign */
        switch (l.cmp) {
        case '<': res = xsprintf("((long long)(%s) > (long long)(%s) ? ((long long)(%s) - (long long)(%s) + %s(long long)(%s) - 1) / (%s(long long)(%s)) : 0LL)", ub, lb, ub, lb, sg, st, sg, st); break;
        case 'l': res = xsprintf("((long long)(%s) >= (long long)(%s) ? ((long long)(%s) - (long long)(%s) + %s(long long)(%s)) / (%s(long long)(%s)) : 0LL)", ub, lb, ub, lb, sg, st, sg, st); break;
        case '>': res = xsprintf("((long long)(%s) < (long long)(%s) ? ((long long)(%s) - (long long)(%s) - %s(long long)(%s) - 1) / -(%s(long long)(%s)) : 0LL)", ub, lb, lb, ub, sg, st, sg, st); break;
        default: res = xsprintf("((long long)(%s) <= (long long)(%s) ? ((long long)(%s) - (long long)(%s) - %s(long long)(%s)) / -(%s(long long)(%s)) : 0LL)", ub, lb, lb, ub, sg, st, sg, st); break;
        }
        free(lb);
        free(ub);
        free(st);
    }
    ac__loop_free(&l);
    return res;
}

/* The region's outer loop: its statement, or the one loop of a block around it. */
static TSNode ac__outer_loop(TSNode s)
{
    while (node_is(s, "compound_statement")) {
        TSNode only = {0};
        int n = 0;
        uint32_t nc = ts_node_named_child_count(s);
        for (uint32_t j = 0; j < nc; j++) {
            TSNode x = ts_node_named_child(s, j);
            if (!node_is(x, "comment") && !node_is(x, "preproc_call")) {
                only = x;
                n++;
            }
        }
        if (n != 1)
            return (TSNode){0};
        s = only;
    }
    return node_is(s, "for_statement") ? s : (TSNode){0};
}

/* Bytes of an element of a basic type (0: not one). */
static int ac__basic_size(const char *t)
{
    static const struct { const char *n; int s; } k[] = {
        {"char", 1}, {"signed char", 1}, {"unsigned char", 1}, {"_Bool", 1}, {"bool", 1},
        {"int8_t", 1}, {"uint8_t", 1}, {"short", 2}, {"unsigned short", 2}, {"short int", 2},
        {"int16_t", 2}, {"uint16_t", 2}, {"int", 4}, {"unsigned", 4}, {"unsigned int", 4},
        {"signed int", 4}, {"signed", 4}, {"int32_t", 4}, {"uint32_t", 4}, {"float", 4},
        {"long", 8}, {"unsigned long", 8}, {"long int", 8}, {"long long", 8},
        {"unsigned long long", 8}, {"long long int", 8}, {"int64_t", 8}, {"uint64_t", 8},
        {"size_t", 8}, {"double", 8}, {"long double", 16},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcmp(k[i].n, t))
            return k[i].s;
    return 0;
}

void access_region(Unit *u, Region *r)
{
    AccessCx x = {.u = u, .r = r, .count = xcalloc((size_t)(r->caps.len ? r->caps.len : 1), sizeof(double))};
    TSNode outer = ac__outer_loop(r->stmt);
    TSNode body = r->stmt;
    if (!ts_node_is_null(outer)) {
        int n = r->collapse > 1 ? r->collapse : 1;
        Buf trip = {0}, shown = {0};
        int ok = 1;
        TSNode l = outer;
        for (int k = 0; k < n && ok; k++) {
            l = k ? node_nth_loop(outer, k) : outer;
            char *t = node_is(l, "for_statement") ? ac__trip_expr(u, r, l, &shown) : NULL;
            if (!t) {
                ok = 0;
                break;
            }
            buf_printf(&trip, "%s%s", k ? " * " : "", t);
            free(t);
        }
        if (ok && trip.data) {
            r->access_trip = xstrdup(trip.data);
            r->access_trip_shown = xstrdup(shown.data);
        }
        buf_free(&trip);
        buf_free(&shown);
        body = node_is(l, "for_statement") ? node_field(l, "body") : body;
    } else {
        r->access_trip = xstrdup("1LL"); /* no loop: the region is one iteration */
        r->access_trip_shown = xstrdup("1 (no loop)");
    }
    ac__walk(&x, body, 1.0);
    for (int i = 0; i < r->caps.len; i++) {
        const Capture *c = r->caps.items[i];
        if (!ac__object(c))
            continue;
        AccessFact *f = xcalloc(1, sizeof *f);
        f->name = xstrdup(c->name);
        f->map = c->map;
        f->per_iter = x.count[i] > 0 ? x.count[i] : -1.0;
        /* element type: the specifiers, or a pointer for a pointer to pointers */
        int stars = 0;
        const Decl *d = c->decl;
        if (d && d->decl_text)
            for (int j = 0; j < d->id_off && d->decl_text[j]; j++)
                stars += d->decl_text[j] == '*';
        if (c->kind == CAP_PTR && stars == 0 && d && d->is_pointer)
            stars = 1; /* a parameter array: int a[] */
        char *spec = d && d->spec ? spec_unqualified(d->spec) : xstrdup("");
        if ((c->kind == CAP_PTR && stars > 1) || (c->kind == CAP_ARRAY && stars > 0)) {
            f->elem_type = xstrdup("void *");
            f->elem_size = 8;
        } else {
            f->elem_type = spec;
            spec = NULL;
            f->elem_size = ac__basic_size(f->elem_type);
        }
        free(spec);
        vec_push(&r->access, f);
    }
    free(x.count);
}

/* host loops around the region in its function */
static int ac__host_depth(const Region *r)
{
    int n = 0;
    for (TSNode p = ts_node_parent(r->stmt); !ts_node_is_null(p) && !ts_node_eq(p, r->func); p = ts_node_parent(p))
        if (node_is(p, "for_statement") || node_is(p, "while_statement") || node_is(p, "do_statement"))
            n++;
    return n;
}

void access_rank(Unit *u)
{
    /* global access frequency per name */
    Vec names = {0};
    double *gaf = xcalloc((size_t)(u->regions.len * 8 + 8), sizeof(double));
    int cap = u->regions.len * 8 + 8;
    for (int i = 0; i < u->regions.len; i++) {
        const Region *r = u->regions.items[i];
        double hw = 1.0;
        for (int d = ac__host_depth(r); d > 0; d--)
            hw *= ACCESS_LOOP_WEIGHT;
        for (int j = 0; j < r->access.len; j++) {
            const AccessFact *f = r->access.items[j];
            int k = 0;
            while (k < names.len && strcmp(names.items[k], f->name))
                k++;
            if (k == names.len) {
                if (names.len == cap) {
                    gaf = xrealloc(gaf, (size_t)cap * 2 * sizeof(double));
                    memset(gaf + cap, 0, (size_t)cap * sizeof(double));
                    cap *= 2;
                }
                vec_push(&names, f->name);
            }
            gaf[k] += (f->per_iter > 0 ? f->per_iter : 1.0) * hw;
        }
    }
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        for (int j = 0; j < r->access.len; j++) {
            AccessFact *f = r->access.items[j];
            int k = 0;
            while (strcmp(names.items[k], f->name))
                k++;
            f->gaf = gaf[k];
            f->rank = 1;
            for (int m = 0; m < names.len; m++)
                f->rank += gaf[m] > gaf[k];
        }
        if (!u->info || !r->access.len)
            continue;
        diag_note(u->diag, r->target->start, "access facts: outer-loop trip count %s", r->access_trip_shown ? r->access_trip_shown : "unknown (density taken as 1)");
        for (int j = 0; j < r->access.len; j++) {
            const AccessFact *f = r->access.items[j];
            char acc[48];
            if (f->per_iter < 0)
                snprintf(acc, sizeof acc, "unknown accesses");
            else
                snprintf(acc, sizeof acc, "%g accesses", f->per_iter);
            char es[16];
            snprintf(es, sizeof es, "%d", f->elem_size);
            diag_note(u->diag, r->target->start,
                      "'%s': %s per iteration, element %s (%s bytes), global frequency %g, reuse rank %d of %d", f->name,
                      acc, f->elem_type, f->elem_size ? es : "unknown", f->gaf, f->rank, names.len);
        }
    }
    free(gaf);
    vec_free(&names);
}

void access_emit_facts(const Unit *u, const Region *r, Buf *b)
{
    if (!u->managed || !r->access.len)
        return;
    buf_printf(b, "static const MACC_Access macc_x_%s[] = {\n", r->suffix);
    for (int j = 0; j < r->access.len; j++) {
        const AccessFact *f = r->access.items[j];
        buf_printf(b, "    {\"%s\", %d, %d, %.6g, %d},\n", f->name, f->map, f->elem_size, f->per_iter, f->rank);
    }
    buf_puts(b, "};\n");
}

void access_emit_fields(const Unit *u, const Region *r, Buf *b)
{
    if (!u->managed || !r->access.len) {
        buf_puts(b, ", 0, 0");
        return;
    }
    buf_printf(b, ",\n    (int)(sizeof macc_x_%s / sizeof macc_x_%s[0]), macc_x_%s", r->suffix, r->suffix, r->suffix);
}

void access_emit_trip(const Unit *u, const Region *r, Buf *b)
{
    if (!u->managed || !r->access.len || !r->access_trip)
        return;
    buf_printf(b, "    MACC_push_tripcount(%s);\n", r->access_trip);
}

void access_free(Region *r)
{
    for (int j = 0; j < r->access.len; j++) {
        AccessFact *f = r->access.items[j];
        free(f->name);
        free(f->elem_type);
        free(f);
    }
    vec_free(&r->access);
    free(r->access_trip);
    free(r->access_trip_shown);
    r->access_trip = r->access_trip_shown = NULL;
}
