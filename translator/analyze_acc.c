/* analyze_acc.c: OpenACC compute constructs on the OpenMP region model.
 *
 * The grammar gives `acc parallel|kernels|serial [loop]` the construct-set of
 * the OpenMP construct it is translated as (target teams, target, target
 * teams distribute parallel for) and `acc loop` a bare `loop` (or none for
 * seq); analyze.c then builds the region as for `omp target`. What is
 * OpenACC's own is decided here, before the region's versions are made:
 *
 *   - `kernels`: the compiler decides. A loop (kernels loop, a kernels
 *     construct whose statement is one loop nest, an `acc loop` without
 *     independent/seq inside kernels) is parallelised when its iterations are
 *     independent (acc__deps); scalars written by every iteration before they
 *     are read become private, `s += e`, `s = s * e`, `s = fmax(s, e)`, ... are
 *     reductions (as NVHPC finds them); any other dependence keeps the loop
 *     sequential with a warning that names it.
 *   - `serial`: one thread; its loops run sequentially.
 *   - `parallel loop` / `acc loop` in `parallel`: the user asserts
 *     independence; a scalar written by every iteration without a private or
 *     reduction clause gets a warning (the iterations race on it).
 *   - --info: one note per construct saying what it became.
 */
#include <stdlib.h>
#include <string.h>

#include "macc.h"
#include "macc_rt.h"

static int acc__is(TSNode n, const char *t) { return node_is(n, t); }

/* The iteration variable of a for loop (`i = 0` or `int i = 0`), or NULL. */
static char *acc__loop_var(const Unit *u, TSNode loop)
{
    TSNode init = node_field(loop, "initializer");
    if (acc__is(init, "assignment_expression") && acc__is(node_field(init, "left"), "identifier"))
        return node_text(u, node_field(init, "left"));
    if (acc__is(init, "declaration")) {
        TSNode d = node_field(init, "declarator");
        if (acc__is(d, "init_declarator"))
            d = node_field(d, "declarator");
        if (acc__is(d, "identifier"))
            return node_text(u, d);
    }
    return NULL;
}

/* Text without blanks (for comparing subscripts). */
static char *acc__squeeze(const Unit *u, TSNode n)
{
    char *t = node_text(u, n), *o = t;
    for (char *s = t; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            *o++ = *s;
    *o = 0;
    return t;
}

/* Does text t hold identifier w as a whole word? */
static int acc__has_word(const char *t, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = strstr(t, w); p; p = strstr(p + 1, w)) {
        int before = p > t && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                               (p[-1] >= '0' && p[-1] <= '9'));
        char c = p[n];
        int after = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!before && !after)
            return 1;
    }
    return 0;
}

/* Is node n (an lvalue expression) written: the left of an assignment or the
 * operand of ++/--? *rmw: also read (compound assignment, ++). */
static int acc__written(TSNode n, int *rmw)
{
    TSNode p = ts_node_parent(n);
    *rmw = 0;
    while (acc__is(p, "parenthesized_expression")) {
        n = p;
        p = ts_node_parent(p);
    }
    if (acc__is(p, "assignment_expression") && ts_node_eq(node_field(p, "left"), n)) {
        TSNode op = node_field(p, "operator");
        *rmw = ts_node_end_byte(op) - ts_node_start_byte(op) != 1;
        return 1;
    }
    if (acc__is(p, "update_expression")) {
        *rmw = 1;
        return 1;
    }
    return 0;
}

typedef struct AccAccess {
    char *base;   /* array (or scalar) name */
    char *text;   /* the whole access, blanks removed */
    TSNode node;
    int write, rmw;
    int scalar;
} AccAccess;

typedef struct AccScan {
    const Unit *u;
    StrSet locals;   /* declared inside the loop body, or loop variables of inner loops */
    Vec acc;         /* AccAccess * */
    const char *exit_why;
    TSNode exit_at;
    int depth;       /* inner loops / switch around (break is theirs) */
} AccScan;

static void acc__scan(AccScan *s, TSNode n);

static void acc__add(AccScan *s, TSNode node, char *base, int scalar)
{
    AccAccess *a = xcalloc(1, sizeof *a);
    a->base = base;
    a->text = acc__squeeze(s->u, node);
    a->node = node;
    a->scalar = scalar;
    a->write = acc__written(node, &a->rmw);
    vec_push(&s->acc, a);
}

static void acc__scan_children(AccScan *s, TSNode n)
{
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        acc__scan(s, ts_node_child(n, i));
}

static void acc__declared(AccScan *s, TSNode decl)
{
    uint32_t nc = ts_node_named_child_count(decl);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode d = ts_node_named_child(decl, i);
        while (!ts_node_is_null(d) && !acc__is(d, "identifier")) {
            TSNode k = node_field(d, "declarator");
            if (ts_node_is_null(k))
                break;
            d = k;
        }
        if (acc__is(d, "identifier")) {
            char *t = node_text(s->u, d);
            strset_add(&s->locals, t, strlen(t));
            free(t);
        }
    }
}

static void acc__scan(AccScan *s, TSNode n)
{
    const char *t = node_type(n);
    if (!strcmp(t, "declaration")) {
        acc__declared(s, n);
        acc__scan_children(s, n);
        return;
    }
    if (!strcmp(t, "for_statement") || !strcmp(t, "while_statement") || !strcmp(t, "do_statement") ||
        !strcmp(t, "switch_statement")) {
        if (!strcmp(t, "for_statement")) {
            char *v = acc__loop_var(s->u, n);
            if (v)
                strset_add(&s->locals, v, strlen(v));
            free(v);
        }
        s->depth++;
        acc__scan_children(s, n);
        s->depth--;
        return;
    }
    if ((!strcmp(t, "break_statement") && !s->depth) || !strcmp(t, "return_statement") ||
        !strcmp(t, "goto_statement")) {
        if (!s->exit_why) {
            s->exit_why = !strcmp(t, "return_statement") ? "a return" : !strcmp(t, "goto_statement") ? "a goto" : "a break";
            s->exit_at = n;
        }
        return;
    }
    if (!strcmp(t, "subscript_expression")) {
        /* the whole access a[i][j]: its base and every index */
        TSNode b = n;
        while (acc__is(b, "subscript_expression")) {
            acc__scan(s, node_field(b, "index"));
            b = node_field(b, "argument");
        }
        if (acc__is(b, "identifier") || acc__is(b, "field_expression")) {
            acc__add(s, n, acc__squeeze(s->u, b), 0);
            if (acc__is(b, "field_expression"))
                acc__scan(s, node_field(b, "argument"));
        } else {
            acc__scan(s, b);
        }
        return;
    }
    if (!strcmp(t, "pointer_expression") && ts_node_child_count(n) > 0) {
        int rmw;
        TSNode op = ts_node_child(n, 0);
        if (ts_node_end_byte(op) - ts_node_start_byte(op) == 1 && s->u->src->text[ts_node_start_byte(op)] == '*' &&
            acc__written(n, &rmw) && !s->exit_why) {
            s->exit_why = "a write through a pointer";
            s->exit_at = n;
        }
        acc__scan_children(s, n);
        return;
    }
    if (!strcmp(t, "call_expression")) {
        acc__scan(s, node_field(n, "arguments")); /* the function's name is not a variable */
        return;
    }
    if (!strcmp(t, "field_expression")) {
        int rmw;
        if (acc__written(n, &rmw)) { /* s.x = ...: the struct as a scalar */
            TSNode b = node_field(n, "argument");
            if (acc__is(b, "identifier"))
                acc__add(s, n, node_text(s->u, b), 1);
        }
        acc__scan(s, node_field(n, "argument"));
        return;
    }
    if (!strcmp(t, "identifier")) {
        acc__add(s, n, node_text(s->u, n), 1);
        return;
    }
    acc__scan_children(s, n);
}

/* The reduction operator of statement-level write `w` of scalar `v` (RED_*),
 * or 0: v += e, v -= e, v *= e, v &= e, v |= e, v ^= e, v = v op e, v = e op v,
 * v = fmax(v, e) / fmin / max / min (either order), v = v > e ? v : e; e
 * must not mention v. */
static int acc__red_op(const Unit *u, TSNode w, const char *v)
{
    TSNode as = ts_node_parent(w);
    while (acc__is(as, "parenthesized_expression"))
        as = ts_node_parent(as);
    if (!acc__is(as, "assignment_expression") || !acc__is(ts_node_parent(as), "expression_statement"))
        return 0;
    TSNode op = node_field(as, "operator"), right = node_field(as, "right");
    char *ot = node_text(u, op);
    char *rt = node_text(u, right);
    int red = 0, once = 0;
    if (!strcmp(ot, "+=") || !strcmp(ot, "-="))
        red = RED_ADD;
    else if (!strcmp(ot, "*="))
        red = RED_MUL;
    else if (!strcmp(ot, "&="))
        red = RED_BAND;
    else if (!strcmp(ot, "|="))
        red = RED_BOR;
    else if (!strcmp(ot, "^="))
        red = RED_BXOR;
    if (red) {
        if (acc__has_word(rt, v))
            red = 0;
        goto done;
    }
    if (strcmp(ot, "="))
        goto done;
    while (acc__is(right, "parenthesized_expression"))
        right = ts_node_named_child(right, 0);
    if (acc__is(right, "binary_expression")) {
        char *bo = node_text(u, node_field(right, "operator"));
        char *l = acc__squeeze(u, node_field(right, "left")), *r = acc__squeeze(u, node_field(right, "right"));
        once = (!strcmp(l, v) && !acc__has_word(r, v)) ||
               (!strcmp(r, v) && !acc__has_word(l, v) && strcmp(bo, "-") != 0);
        if (once) {
            static const struct { const char *op; int red; } ops[] = {
                {"+", RED_ADD}, {"-", RED_ADD}, {"*", RED_MUL}, {"&", RED_BAND}, {"|", RED_BOR},
                {"^", RED_BXOR}, {"&&", RED_LAND}, {"||", RED_LOR}};
            for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
                if (!strcmp(bo, ops[i].op))
                    red = ops[i].red;
        }
        free(bo);
        free(l);
        free(r);
    } else if (acc__is(right, "call_expression")) {
        char *f = node_text(u, node_field(right, "function"));
        TSNode args = node_field(right, "arguments");
        if (ts_node_named_child_count(args) == 2) {
            char *a = acc__squeeze(u, ts_node_named_child(args, 0)), *b = acc__squeeze(u, ts_node_named_child(args, 1));
            once = (!strcmp(a, v) && !acc__has_word(b, v)) || (!strcmp(b, v) && !acc__has_word(a, v));
            if (once && (!strcmp(f, "fmax") || !strcmp(f, "fmaxf") || !strcmp(f, "fmaxl") || !strcmp(f, "max")))
                red = RED_MAX;
            if (once && (!strcmp(f, "fmin") || !strcmp(f, "fminf") || !strcmp(f, "fminl") || !strcmp(f, "min")))
                red = RED_MIN;
            free(a);
            free(b);
        }
        free(f);
    } else if (acc__is(right, "conditional_expression")) {
        TSNode c = node_field(right, "condition"), x = node_field(right, "consequence"),
               y = node_field(right, "alternative");
        while (acc__is(c, "parenthesized_expression"))
            c = ts_node_named_child(c, 0);
        if (acc__is(c, "binary_expression")) {
            char *co = node_text(u, node_field(c, "operator"));
            char *cl = acc__squeeze(u, node_field(c, "left")), *cr = acc__squeeze(u, node_field(c, "right"));
            char *xs = acc__squeeze(u, x), *ys = acc__squeeze(u, y);
            int gt = !strcmp(co, ">") || !strcmp(co, ">="), lt = !strcmp(co, "<") || !strcmp(co, "<=");
            /* v = v > e ? v : e (max), v = e > v ? e : v (max), and the < forms (min) */
            if ((gt || lt) && !strcmp(cl, xs) && !strcmp(cr, ys) && (!strcmp(cl, v) || !strcmp(cr, v))) {
                const char *e = !strcmp(cl, v) ? cr : cl;
                if (!acc__has_word(e, v))
                    red = (gt == !strcmp(cl, v)) ? RED_MAX : RED_MIN;
            }
            free(co);
            free(cl);
            free(cr);
            free(xs);
            free(ys);
        }
    }
done:
    free(ot);
    free(rt);
    return red;
}

/* Is statement-level node n directly in the loop body (not under an if, a
 * nested loop, ...)? */
static int acc__top_level(TSNode n, TSNode body)
{
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
        if (ts_node_eq(p, body))
            return 1;
        const char *t = node_type(p);
        if (!strcmp(t, "if_statement") || !strcmp(t, "for_statement") || !strcmp(t, "while_statement") ||
            !strcmp(t, "do_statement") || !strcmp(t, "switch_statement") || !strcmp(t, "conditional_expression") ||
            (!strcmp(t, "binary_expression")))
            return 0;
    }
    return 0;
}

/* Is scalar v private to each iteration, as NVHPC finds it: first met (in
 * the body's order) as a whole-variable write at the top level of the body,
 * whose right side does not read it, so no value flows between iterations? */
static int acc__private_scalar(Unit *u, const AccAccess *first, const char *v, TSNode body)
{
    if (!first || !first->write || first->rmw || !acc__top_level(first->node, body))
        return 0;
    TSNode as = ts_node_parent(first->node);
    char *rt = acc__is(as, "assignment_expression") ? node_text(u, node_field(as, "right")) : xstrdup(v);
    int reads = acc__has_word(rt, v);
    free(rt);
    return !reads;
}

static void acc__scan_free(AccScan *s)
{
    for (int i = 0; i < s->acc.len; i++) {
        AccAccess *a = s->acc.items[i];
        free(a->base);
        free(a->text);
        free(a);
    }
    vec_free(&s->acc);
    strset_free(&s->locals);
}

static int acc__listed(const Directive *d, ClauseKind k, const char *name)
{
    return d && directive_lists(d, k, name);
}

static void acc__add_clause(Directive *d, ClauseKind k, int red, const char *name)
{
    DirItem it = {0};
    DirClause c = {0};
    it.base = (char *)name;
    it.is_ident = 1;
    c.kind = k;
    c.modifier = red;
    c.nitems = 1;
    c.items = &it;
    if (directive_add_clause_copy(d, &c) < 0) {
        fputs("macc: fatal error: out of memory\n", stderr);
        exit(1);
    }
}

/* Kernels: are the iterations of `loop` independent? Returns NULL and adds
 * the private and reduction clauses it found to `d`, or the reason (caller
 * frees) and *at, the node to name. `outer` holds clauses of the enclosing
 * construct (private/reduction names there are not dependences). */
/* `indep`: the user asserted independence (acc loop independent): arrays are
 * not checked and only the scalars' reductions and privates are found, as
 * NVHPC finds implicit reductions in independent loops of kernels. */
static char *acc__deps(Unit *u, TSNode loop, Directive *d, const Directive *outer, TSNode *at, int indep)
{
    AccScan s = {0};
    s.u = u;
    char *iv = acc__loop_var(u, loop);
    TSNode body = node_field(loop, "body");
    char *why = NULL;
    *at = loop;
    if (!iv) {
        why = xstrdup("its iteration variable is not recognised");
        goto out;
    }
    acc__scan(&s, body);
    if (s.exit_why) {
        why = xsprintf("it has %s", s.exit_why);
        *at = s.exit_at;
        goto out;
    }
    /* arrays: every access of a written array must be the same element, one
     * that names the loop variable */
    for (int i = 0; i < s.acc.len && !why && !indep; i++) {
        AccAccess *w = s.acc.items[i];
        if (w->scalar || !w->write || strset_has(&s.locals, w->base, strlen(w->base)))
            continue;
        if (!acc__has_word(w->text, iv)) {
            why = xsprintf("every iteration writes '%s' (not an element indexed by '%s')", w->text, iv);
            *at = w->node;
            break;
        }
        for (int j = 0; j < s.acc.len; j++) {
            AccAccess *o = s.acc.items[j];
            if (o->scalar || strcmp(o->base, w->base) || !strcmp(o->text, w->text))
                continue;
            why = xsprintf("'%s' is written as '%s' and %s as '%s' by other iterations", w->base, w->text,
                           o->write ? "written" : "read", o->text);
            *at = o->node;
            break;
        }
    }
    /* scalars declared outside the loop and written in it */
    StrSet seen = {0};
    for (int i = 0; i < s.acc.len && !why; i++) {
        AccAccess *w = s.acc.items[i];
        const char *v = w->base;
        if (!w->scalar || !w->write || !strcmp(v, iv) || strset_has(&s.locals, v, strlen(v)) ||
            strset_has(&seen, v, strlen(v)))
            continue;
        strset_add(&seen, v, strlen(v));
        if (acc__listed(d, CL_PRIVATE, v) || acc__listed(d, CL_REDUCTION, v) || acc__listed(outer, CL_PRIVATE, v) ||
            acc__listed(outer, CL_REDUCTION, v))
            continue;
        Decl *decl = analyze_lookup(u, loop, v, NULL);
        int is_var = decl && !decl->is_function;
        decl_delete(decl);
        if (!is_var)
            continue;
        /* a reduction: every occurrence is a reduction statement of one operator */
        int red = -1;
        AccAccess *first = NULL;
        for (int j = 0; j < s.acc.len; j++) {
            AccAccess *o = s.acc.items[j];
            if (!o->scalar || strcmp(o->base, v))
                continue;
            if (!first)
                first = o;
            int r = o->write ? acc__red_op(u, o->node, v) : 0;
            if (!o->write) {
                /* a read inside the reduction statement's own right side is not
                 * possible (acc__red_op requires e without v); any other read
                 * breaks the reduction */
                TSNode p = ts_node_parent(o->node);
                while (!ts_node_is_null(p) && !acc__is(p, "assignment_expression"))
                    p = ts_node_parent(p);
                TSNode l = ts_node_is_null(p) ? p : node_field(p, "left");
                char *lt = ts_node_is_null(l) ? xstrdup("") : acc__squeeze(u, l);
                r = !strcmp(lt, v) ? acc__red_op(u, l, v) : 0;
                free(lt);
            }
            if (!r || (red >= 0 && red != r)) {
                red = 0;
                break;
            }
            red = r;
        }
        if (red > 0) {
            acc__add_clause(d, CL_REDUCTION, red, v);
            if (u->info)
                diag_note(u->diag, ts_node_start_byte(first->node), "'%s' is a %s reduction of the loop", v,
                          directive_reduction_op(red));
            continue;
        }
        if (acc__private_scalar(u, first, v, body)) {
            acc__add_clause(d, CL_PRIVATE, 0, v);
            if (u->info)
                diag_note(u->diag, ts_node_start_byte(first->node),
                          "'%s' is private to each iteration (written before it is read)", v);
            continue;
        }
        if (indep)
            continue; /* warned by the caller: the user asserted independence */
        why = xsprintf("scalar '%s' is carried from one iteration to the next", v);
        *at = first ? first->node : loop;
    }
    strset_free(&seen);
out:
    free(iv);
    acc__scan_free(&s);
    return why;
}

/* parallel loop: scalars every iteration writes with no clause saying what
 * they are: private when every iteration writes them before reading them
 * (NVHPC's scalar privatisation; a private clause is added, host and GPU
 * versions alike), else a warning that the iterations race. */
static void acc__race_warnings(Unit *u, TSNode loop, Directive *d, const Directive *outer)
{
    AccScan s = {0};
    s.u = u;
    char *iv = acc__loop_var(u, loop);
    TSNode body = node_field(loop, "body");
    acc__scan(&s, body);
    StrSet seen = {0};
    for (int i = 0; i < s.acc.len; i++) {
        AccAccess *w = s.acc.items[i];
        const char *v = w->base;
        if (!w->scalar || !w->write || (iv && !strcmp(v, iv)) || strset_has(&s.locals, v, strlen(v)) ||
            strset_has(&seen, v, strlen(v)) || !acc__top_level(w->node, body))
            continue;
        strset_add(&seen, v, strlen(v));
        TSNode st = w->node;
        while (!ts_node_is_null(st) && !acc__is(st, "expression_statement"))
            st = ts_node_parent(st);
        TSNode prev = ts_node_is_null(st) ? st : ts_node_prev_named_sibling(st);
        if (acc__is(prev, "preproc_call") && atomic_pragma_kind(u, prev) == SYNC_ATOMIC)
            continue; /* an atomic update */
        if (acc__listed(d, CL_PRIVATE, v) || acc__listed(d, CL_REDUCTION, v) || acc__listed(d, CL_FIRSTPRIVATE, v) ||
            acc__listed(outer, CL_PRIVATE, v) || acc__listed(outer, CL_REDUCTION, v) ||
            acc__listed(outer, CL_FIRSTPRIVATE, v))
            continue;
        Decl *decl = analyze_lookup(u, loop, v, NULL);
        int is_var = decl && !decl->is_function && !decl->is_array;
        decl_delete(decl);
        AccAccess *first = NULL;
        for (int j = 0; j < s.acc.len && !first; j++) {
            AccAccess *o = s.acc.items[j];
            if (o->scalar && !strcmp(o->base, v))
                first = o;
        }
        if (is_var && d && acc__private_scalar(u, first, v, body)) {
            acc__add_clause(d, CL_PRIVATE, 0, v);
            if (u->info)
                diag_note(u->diag, ts_node_start_byte(first->node),
                          "'%s' is private to each iteration (written before it is read)", v);
            continue;
        }
        if (is_var)
            diag_warning(u->diag, ts_node_start_byte(w->node),
                         "'%s' is written by every iteration of this parallel loop but is in no private or reduction "
                         "clause: the iterations race on it",
                         v);
    }
    strset_free(&seen);
    free(iv);
    acc__scan_free(&s);
}

static const char *acc__name(const Directive *d)
{
    static const char *const n[] = {"acc", "acc parallel", "acc kernels", "acc serial", "acc loop"};
    return n[d->acc >= 0 && d->acc <= ACC_LOOP ? d->acc : 0];
}

/* The loop levels of an acc loop as written ("gang vector"), or "". */
static void acc__levels(const Directive *d, char *buf, size_t n)
{
    buf[0] = 0;
    if (d->acc_par & ACC_GANG)
        strncat(buf, "gang ", n - strlen(buf) - 1);
    if (d->acc_par & ACC_WORKER)
        strncat(buf, "worker ", n - strlen(buf) - 1);
    if (d->acc_par & ACC_VECTOR)
        strncat(buf, "vector ", n - strlen(buf) - 1);
    if (buf[0])
        buf[strlen(buf) - 1] = 0;
}

/* A loop's parallelism after the decisions: the note --info prints. */
static void acc__info_loop(Unit *u, size_t off, const Directive *d, int line)
{
    char lv[32];
    acc__levels(d, lv, sizeof lv);
    if (!(d->cs & CS_LOOPS) && !(d->cs & CS_PARALLEL_FOR))
        diag_note(u->diag, off, "%s: the loop at line %d runs sequentially (seq)", acc__name(d), line);
    else
        diag_note(u->diag, off,
                  "%s: the loop at line %d is parallel (%s): CUDA blocks x threads on the GPU, a parallel for "
                  "over the task's host threads on the host",
                  acc__name(d), line, lv[0] ? lv : "gang vector");
}

static int acc__line(const Unit *u, TSNode n)
{
    int line, col;
    source_position(u->src, ts_node_start_byte(n), &line, &col);
    return line;
}

/* The for loop a pragma applies to (comments skipped), or a null node. */
static TSNode acc__pragma_loop(const Pragma *q)
{
    TSNode s = ts_node_next_named_sibling(q->node);
    while (acc__is(s, "comment") || acc__is(s, "preproc_call"))
        s = ts_node_next_named_sibling(s);
    return acc__is(s, "for_statement") ? s : (TSNode){0};
}

static int acc__line(const Unit *u, TSNode n);

/* Does a reduction clause of d name an array (or an array section)? Those
 * loops run sequentially (an array reduction is not translated). */
static const char *acc__array_reduction(const Unit *u, const Directive *d, TSNode at)
{
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        for (int j = 0; c->kind == CL_REDUCTION && j < c->nitems; j++) {
            Decl *decl = c->items[j].is_ident ? analyze_lookup(u, at, c->items[j].base, NULL) : NULL;
            int arr = c->items[j].nsubs > 0 || (decl && (decl->is_array || decl->is_pointer));
            decl_delete(decl);
            if (arr)
                return c->items[j].base;
        }
    }
    return NULL;
}

static void acc__no_array_reduction(Unit *u, Directive *d, TSNode loop, size_t off)
{
    const char *a = d->cs ? acc__array_reduction(u, d, loop) : NULL;
    if (a) {
        d->cs = 0;
        diag_warning(u->diag, off, "reduction of array '%s' is not supported: the loop at line %d runs sequentially",
                     a, acc__line(u, loop));
    }
}

/* private(p[lo:n]) / firstprivate(p[lo:n]) of a pointer's section on a
 * compute construct. serial has one gang of one thread: its copy is the
 * device's copy of the section, made for the region (create / copyin), the
 * host's left as it was on a GPU. Elsewhere each gang would need its own
 * copy: an error. A clause that mixes sections and variables is an error too. */
static void acc__private_sections(Unit *u, Region *r)
{
    Directive *t = &r->target->dir;
    for (int i = 0; i < t->nclauses; i++) {
        DirClause *c = &t->clauses[i];
        if (c->kind != CL_PRIVATE && c->kind != CL_FIRSTPRIVATE)
            continue;
        int sections = 0;
        for (int j = 0; j < c->nitems; j++)
            sections += c->items[j].nsubs > 0;
        if (!sections)
            continue;
        if (t->acc == ACC_SERIAL && sections == c->nitems) {
            c->kind = c->kind == CL_PRIVATE ? CL_ACC_CREATE : CL_ACC_COPYIN;
            c->modifier = 0;
            continue;
        }
        diag_error(u->diag, pragma_src_off(r->target, c->off),
                   "%s of an array section on '%s' is not supported (each gang needs its own copy)%s",
                   directive_clause_name(c->kind), acc__name(t),
                   t->acc == ACC_SERIAL ? ": name the sections in a clause of their own" : "");
        return;
    }
}

/* A loop of a kernels construct (d: its directive, outer: the construct's
 * when the loop is an acc loop inside it): parallel when its iterations are
 * independent (found, or asserted by `independent`: then only its scalars'
 * reductions and privates are found), else sequential with a warning that
 * names the line and the cause. */
static void acc__kernels_loop(Unit *u, TSNode loop, Directive *d, const Directive *outer)
{
    TSNode at;
    int indep = (d->acc_par & ACC_INDEPENDENT) != 0;
    char *why = acc__deps(u, loop, d, outer, &at, indep);
    if (indep) {
        free(why); /* asserted independent: the scalars left race (warned) */
        why = NULL;
        acc__race_warnings(u, loop, d, outer);
    }
    if (why) {
        d->cs = 0;
        diag_warning(u->diag, ts_node_start_byte(loop),
                     "loop at line %d is not parallelised: %s (line %d); it runs sequentially (seq)",
                     acc__line(u, loop), why, acc__line(u, at));
        free(why);
    }
}

/* Nested parallel loops (NVHPC gives the outer to gangs, the inner to vector
 * lanes, so neighbouring threads touch neighbouring elements): where the
 * region's loop holds, as its whole body, another acc loop that says it is
 * parallel (independent, gang, worker or vector) and has no other clause,
 * and its bounds
 * do not use the outer loop's variable, the two become one collapsed loop
 * (CUDA threads over both, the inner index fastest; on the host one
 * parallel for over both), deeper nests the same way. The inner directive
 * then says nothing (cs 0), in the host version as on the GPU. */
/* collapse(k) on t and on those of its variants that have loops and no collapse */
static void acc__add_collapse(Directive *t, int k)
{
    char n[16];
    snprintf(n, sizeof n, "%d", k);
    DirClause c = {0};
    c.kind = CL_COLLAPSE;
    c.arg = n;
    c.ival = k;
    if (directive_add_clause_copy(t, &c) < 0) {
        fputs("macc: fatal error: out of memory\n", stderr);
        exit(1);
    }
    for (int i = 0; i < t->nvariants; i++)
        if ((t->variants[i].cs & CS_LOOPS) && !directive_find(&t->variants[i], CL_COLLAPSE) &&
            directive_add_clause_copy(&t->variants[i], &c) < 0) {
            fputs("macc: fatal error: out of memory\n", stderr);
            exit(1);
        }
}

/* Does n hold an atomic or critical construct (a pragma line under it)? */
static int acc__holds_sync(const Unit *u, TSNode n)
{
    if (acc__is(n, "preproc_call"))
        return atomic_pragma_kind(u, n) != SYNC_NONE;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (acc__holds_sync(u, ts_node_named_child(n, i)))
            return 1;
    return 0;
}

static void acc__collapse_nest(Unit *u, Region *r, Directive *t)
{
    if (!(t->cs & CS_LOOPS) || (t->acc_par & ACC_SEQ) || !acc__is(r->stmt, "for_statement"))
        return;
    const DirClause *tile = directive_find(t, CL_ACC_TILE);
    if (tile && !directive_find(t, CL_COLLAPSE)) {
        /* tile(n1, ..., nk): the k tightly nested loops are independent and
         * tiled; every iteration is one CUDA thread of one collapsed loop (the
         * innermost index fastest, so neighbouring threads touch neighbouring
         * elements), a schedule that tiles of a warp's width already give */
        int k = 1;
        for (const char *a = tile->arg ? tile->arg : ""; *a; a++) {
            int depth = 0;
            depth += *a == '(' || *a == '[';
            depth -= *a == ')' || *a == ']';
            k += *a == ',' && depth == 0;
        }
        if (k >= 2) {
            acc__add_collapse(t, k);
            if (u->info)
                diag_note(u->diag, r->target->start,
                          "%s: tile(%s): the %d loops from line %d are one collapsed loop: CUDA threads over all of "
                          "them, the innermost index fastest; one parallel for on the host",
                          acc__name(t), tile->arg ? tile->arg : "", k, acc__line(u, r->stmt));
        }
        return;
    }
    if (directive_find(t, CL_COLLAPSE))
        return;
    TSNode loop = r->stmt;
    int depth = 1;
    StrSet vars = {0};
    for (;;) {
        char *iv = acc__loop_var(u, loop);
        if (!iv)
            break;
        strset_add(&vars, iv, strlen(iv));
        free(iv);
        TSNode body = node_field(loop, "body");
        /* the body: one acc loop pragma and its for loop (comments aside) */
        Pragma *q = NULL;
        TSNode inner = {0};
        int others = 0;
        uint32_t nc = acc__is(body, "compound_statement") ? ts_node_named_child_count(body) : 0;
        for (uint32_t i = 0; i < nc; i++) {
            TSNode k = ts_node_named_child(body, i);
            if (acc__is(k, "comment"))
                continue;
            if (acc__is(k, "preproc_call") && !q) {
                for (int j = 0; j < u->pragmas.len && !q; j++) {
                    Pragma *p = u->pragmas.items[j];
                    if (p->start == ts_node_start_byte(k))
                        q = p;
                }
                if (q)
                    continue;
            }
            if (acc__is(k, "for_statement") && ts_node_is_null(inner))
                inner = k;
            else
                others++;
        }
        /* only the loop's parallelism, said (independent, gang, worker, vector),
         * or nothing said in a parallel construct, whose loops are independent
         * unless they say seq or auto (OpenACC 2.9.2); a bare acc loop of a
         * kernels construct keeps running inside each iteration of the outer one,
         * and so does a bare one whose body holds an atomic or critical
         * construct: under NVHPC its iterations are the vector lanes of one gang,
         * in one warp, and programs (OpenACCV-V's atomic capture tests) read
         * the atomically updated value beside the updates, which stays
         * consistent only when one thread (or one warp) runs them */
        int plain = 1, said = t->acc == ACC_PARALLEL && q && q->dir.nclauses == 0 && !ts_node_is_null(inner) &&
                                !acc__holds_sync(u, inner);
        for (int i = 0; q && i < q->dir.nclauses; i++) {
            ClauseKind k = q->dir.clauses[i].kind;
            said |= k == CL_ACC_INDEPENDENT || k == CL_ACC_GANG || k == CL_ACC_WORKER || k == CL_ACC_VECTOR;
            plain &= k == CL_ACC_INDEPENDENT || k == CL_ACC_GANG || k == CL_ACC_WORKER || k == CL_ACC_VECTOR;
        }
        if (!q || ts_node_is_null(inner) || others || q->dir.kind != DIR_LOOP || !q->dir.acc ||
            !(q->dir.cs & CS_LOOPS) || (q->dir.acc_par & ACC_SEQ) || !plain || !said ||
            !ts_node_eq(acc__pragma_loop(q), inner))
            break;
        /* rectangular: the inner loop's header names no outer loop variable */
        TSNode parts[3] = {node_field(inner, "initializer"), node_field(inner, "condition"), node_field(inner, "update")};
        int uses = 0;
        for (int k = 0; k < 3 && !uses; k++) {
            if (ts_node_is_null(parts[k]))
                continue;
            StrSet ids = {0};
            node_ids(u, parts[k], &ids);
            for (size_t m = 0; m < ids.cap && !uses; m++)
                uses = ids.keys[m] && strset_has(&vars, ids.keys[m], strlen(ids.keys[m]));
            strset_free(&ids);
        }
        if (uses)
            break;
        q->dir.cs = 0; /* folded into the region's loop */
        q->dir.acc_par = 0;
        depth++;
        loop = inner;
    }
    strset_free(&vars);
    if (depth < 2)
        return;
    acc__add_collapse(t, depth);
    if (u->info)
        diag_note(u->diag, r->target->start,
                  "%s: the %d nested parallel loops from line %d are one collapsed loop: CUDA threads over all of "
                  "them, the innermost index fastest (gang and vector as NVHPC maps them); one parallel for on the host",
                  acc__name(t), depth, acc__line(u, r->stmt));
}

void acc_region_prepare(Unit *u, Region *r)
{
    Pragma *tp = r->target;
    Directive *t = &tp->dir;
    if (!t->acc)
        return;
    acc__private_sections(u, r);
    int nclauses0 = t->nclauses;
    /* kernels whose statement is a block holding one loop nest: that loop */
    if (t->acc == ACC_KERNELS && !t->acc_loop && t->cs == 0 && acc__is(r->stmt, "compound_statement")) {
        TSNode only = {0};
        int n = 0;
        uint32_t nc = ts_node_named_child_count(r->stmt);
        for (uint32_t i = 0; i < nc; i++) {
            TSNode k = ts_node_named_child(r->stmt, i);
            if (!acc__is(k, "comment"))
                n++, only = k;
        }
        if (n == 1 && acc__is(only, "for_statement"))
            r->stmt = only;
    }
    if (t->acc == ACC_KERNELS && acc__is(r->stmt, "for_statement")) {
        if (t->cs == 0 && !(t->acc_par & ACC_SEQ))
            t->cs = CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR;
        else if ((t->cs & CS_LOOPS) && !(t->cs & CS_TEAMS))
            /* `acc kernels` then `acc loop` on its own line (merged into the
             * construct): the loop's gangs are CUDA blocks too, not one */
            t->cs |= CS_TEAMS | CS_DISTRIBUTE;
        if (t->cs)
            acc__kernels_loop(u, r->stmt, t, NULL);
    }
    if (acc__is(r->stmt, "for_statement"))
        acc__no_array_reduction(u, t, r->stmt, tp->start);
    if (t->acc == ACC_PARALLEL && (t->cs & CS_LOOPS))
        acc__race_warnings(u, r->stmt, t, NULL);
    /* device_type versions: the decisions made on the construct (its loop
     * sequential or not, the private and reduction clauses found) */
    for (int i = 0; i < t->nvariants; i++) {
        Directive *v = &t->variants[i];
        for (int k = nclauses0; k < t->nclauses; k++)
            if (directive_add_clause_copy(v, &t->clauses[k]) < 0) {
                fputs("macc: fatal error: out of memory\n", stderr);
                exit(1);
            }
        v->cs = (v->acc_par & ACC_SEQ) ? 0 : t->cs;
    }
    if (u->info) {
        static const char *const what[] = {"", "target teams (gangs: CUDA blocks; host: one team)",
                                           "target (one thread; its loops decided one by one)",
                                           "target (one thread)", ""};
        if (t->acc_loop || (t->cs & CS_LOOPS))
            acc__info_loop(u, tp->start, t, acc__line(u, r->stmt));
        else
            diag_note(u->diag, tp->start, "%s: a region, as %s", acc__name(t), what[t->acc]);
    }
    /* loops of the region's statement */
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *q = u->pragmas.items[i];
        if (q == tp || q->dir.kind != DIR_LOOP || !q->dir.acc || q->start < ts_node_start_byte(r->stmt) ||
            q->start >= ts_node_end_byte(r->stmt))
            continue;
        TSNode loop = acc__pragma_loop(q);
        if (ts_node_is_null(loop))
            continue; /* reported by the analysis */
        acc__no_array_reduction(u, &q->dir, loop, q->start);
        if (t->acc == ACC_SERIAL && q->dir.cs) {
            q->dir.cs = 0;
        } else if (t->acc == ACC_KERNELS && q->dir.cs) {
            acc__kernels_loop(u, loop, &q->dir, t);
        } else if (t->acc == ACC_PARALLEL && q->dir.cs) {
            acc__race_warnings(u, loop, &q->dir, t);
        }
        if (u->info)
            acc__info_loop(u, q->start, &q->dir, acc__line(u, loop));
    }
    acc__collapse_nest(u, r, t);
}

/* Is `name` private to each iteration of an acc loop of region r whose loop
 * holds the pragma at byte `at` (the name is then a new variable there)? */
static int acc__private_around(const Unit *u, const Region *r, const char *name, size_t at)
{
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *q = u->pragmas.items[i];
        if (q->dir.kind != DIR_LOOP || !q->dir.acc || q->start < ts_node_start_byte(r->stmt) ||
            q->start >= ts_node_end_byte(r->stmt) || !directive_lists(&q->dir, CL_PRIVATE, name))
            continue;
        TSNode loop = acc__pragma_loop(q);
        if (!ts_node_is_null(loop) && at > ts_node_start_byte(loop) && at < ts_node_end_byte(loop))
            return 1;
    }
    return 0;
}

int acc_inner_reduction(const Unit *u, const Region *r, const char *name)
{
    const Directive *t = &r->target->dir;
    if (!t->acc || directive_lists(t, CL_PRIVATE, name) || directive_lists(t, CL_FIRSTPRIVATE, name))
        return 0; /* private to the construct's gangs (or its loop's iterations) */
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *q = u->pragmas.items[i];
        if (q->dir.kind == DIR_LOOP && q->dir.acc && q->start >= ts_node_start_byte(r->stmt) &&
            q->start < ts_node_end_byte(r->stmt) && directive_lists(&q->dir, CL_REDUCTION, name) &&
            !acc__private_around(u, r, name, q->start))
            return 1;
    }
    return 0;
}

/* Does declaration d make name[i] a pointer (T **p, T *p[N], T *p[] as a
 * parameter)? The stars before the name count the pointer levels. */
static int acc__rows_of_pointers(const Decl *d)
{
    int stars = 0;
    for (int i = 0; i < d->id_off && d->decl_text[i]; i++)
        stars += d->decl_text[i] == '*';
    if (d->is_array || (d->is_pointer && d->arr_len > 0))
        return stars >= 1;
    return d->is_pointer && stars >= 2;
}

/* The pointer-to-pointer sections of directive `dir` (at `node`): for each,
 * call each(x, item, kind text, map kind bits of its clause). */
static const char *acc__rows_kind(const DirClause *c, int finalize)
{
    switch (c->kind) {
    case CL_ACC_COPY: return "MACC_MAP_TOFROM";
    case CL_ACC_COPYIN: return "MACC_MAP_TO";
    case CL_ACC_COPYOUT: return finalize ? "MACC_MAP_FROM | MACC_MAP_DELETE" : "MACC_MAP_FROM";
    case CL_ACC_CREATE: return "MACC_MAP_ALLOC";
    case CL_ACC_PRESENT: return "MACC_MAP_PRESENT";
    case CL_ACC_DELETE: return finalize ? "MACC_MAP_DELETE" : "MACC_MAP_ALLOC";
    case CL_ACC_DEVICE: return "MACC_MAP_TO";
    case CL_ACC_HOST: case CL_ACC_SELF: return "MACC_MAP_FROM";
    default: return NULL;
    }
}

/* Is item `it` of a directive at `node` a pointer-to-pointer section? */
static int acc__rows_item(const Unit *u, TSNode node, const DirItem *it)
{
    if (!it->is_ident || it->nsubs != 2)
        return 0;
    Decl *decl = analyze_lookup(u, node, it->base, NULL);
    int rows = decl && acc__rows_of_pointers(decl);
    decl_delete(decl);
    return rows;
}

static void acc__rows_call(Buf *b, const DirItem *it, const char *kind, const char *dev, const char *cond,
                           const char *loc, int op)
{
    const DirSub *s0 = &it->subs[0], *s1 = &it->subs[1];
    buf_printf(b,
               "\n    if (%s)\n        MACC_acc_rows(%s, \"%s\", (void **)(%s), (long long)(%s), "
               "(long long)(%s), sizeof((%s)[0][0]), (long long)(%s), (long long)(%s), %s, %s, %d);",
               cond, loc, it->base, it->base, s0->lo ? s0->lo : "0", s0->is_section ? (s0->len ? s0->len : "0") : "1",
               it->base, s1->lo ? s1->lo : "0", s1->is_section ? (s1->len ? s1->len : "0") : "1", kind, dev, op);
}

void acc_rows_calls(const Unit *u, const DataConstruct *d, Buf *b, const char *dev, int after)
{
    const Directive *dir = &d->pragma->dir;
    DirKind k = dir->kind;
    /* MACC_acc_rows' operation: acc data 1 (after it begins) / 0 (before it
     * ends); enter data 2 (after); exit data 3 (before); update 4 (before:
     * detach, the pointers are copied as the host's) / 5 (after: the rows, attach) */
    int op = k == DIR_ACC_DATA ? after
             : k == DIR_ACC_ENTER_DATA ? (after ? 2 : -1)
             : k == DIR_ACC_EXIT_DATA ? (after ? -1 : 3)
             : k == DIR_ACC_UPDATE ? (after ? 5 : 4)
                                   : -1;
    if (op < 0 || dir->acc_declare)
        return;
    int finalize = directive_find(dir, CL_ACC_FINALIZE) != NULL;
    for (int i = 0; i < dir->nclauses; i++) {
        const DirClause *c = &dir->clauses[i];
        const char *kind = acc__rows_kind(c, finalize);
        for (int j = 0; kind && j < c->nitems; j++)
            if (acc__rows_item(u, d->pragma->node, &c->items[j]))
                acc__rows_call(b, &c->items[j], kind, dev,
                               k == DIR_ACC_DATA ? "macc_if_" : d->if_expr ? d->if_expr : "1", "&macc_l_", op);
    }
}

void acc_region_rows(const Unit *u, const Region *r, Buf *b, const char *dev, int after)
{
    const Directive *t = &r->target->dir;
    const char *cond = r->if_expr ? r->if_expr : "1";
    int n = 0;
    for (int i = 0; t->acc && i < t->nclauses; i++) {
        const DirClause *c = &t->clauses[i];
        const char *kind = c->kind == CL_ACC_DELETE ? NULL : acc__rows_kind(c, 0);
        for (int j = 0; kind && j < c->nitems; j++) {
            const DirItem *it = &c->items[j];
            if (!acc__rows_item(u, r->target->node, it))
                continue;
            const RMap *m = NULL;
            for (int x = 0; x < r->maps.len && !m; x++)
                if (!strcmp(((const RMap *)r->maps.items[x])->name, it->base))
                    m = r->maps.items[x];
            if (!m)
                continue;
            /* the pointers are on the device before the rows are attached in
             * them (the region then finds both present), and leave after */
            if (!after) {
                buf_printf(b, "    MACC_Map macc_rm%d_ = {\"%s\", %s, %s, %s, %d};\n    if (%s)\n        "
                              "MACC_data_begin(&macc_zl_, 1, &macc_rm%d_, %s);",
                           n, m->name, m->base, m->start, m->bytes, m->kind, cond, n, dev);
                acc__rows_call(b, it, kind, dev, cond, "&macc_zl_", 1);
                buf_puts(b, "\n");
            } else {
                acc__rows_call(b, it, kind, dev, cond, "&macc_zl_", 0);
                buf_printf(b, "\n    if (%s)\n        MACC_data_end(&macc_zl_, 1, &macc_rm%d_, %s);\n", cond, n, dev);
            }
            n++;
        }
    }
}

/* The acc_device_t value of a device_type name (nvidia, host, *, default). */
static const char *acc__device_value(const char *t)
{
    while (*t == ' ' || *t == '\t')
        t++;
    if (!strncmp(t, "acc_device_", 11))
        return t;
    if (!strncmp(t, "nvidia", 6) || !strncmp(t, "cuda", 4))
        return "5";
    if (!strncmp(t, "host", 4) || !strncmp(t, "multicore", 9))
        return "2";
    return "1"; /* default, *: acc_device_default */
}

void acc_set_calls(const DataConstruct *d, Buf *b)
{
    const Directive *dir = &d->pragma->dir;
    const DirClause *type = directive_find(dir, CL_ACC_DEVICE_TYPE), *num = directive_find(dir, CL_ACC_DEVICE_NUM),
                    *q = directive_find(dir, CL_ACC_DEFAULT_ASYNC);
    buf_printf(b, "    (void)macc_l_;\n    if (%s) {\n", d->if_expr ? d->if_expr : "1");
    if (type)
        buf_printf(b, "        extern void acc_set_device_type(int);\n        acc_set_device_type(%s);\n",
                   acc__device_value(type->arg ? type->arg : ""));
    if (num)
        buf_printf(b, "        extern void acc_set_device_num(int, int);\n        acc_set_device_num((%s), %s);\n",
                   num->arg ? num->arg : "0", type ? acc__device_value(type->arg ? type->arg : "") : "-1");
    if (q)
        buf_printf(b, "        extern void acc_set_default_async(int);\n        acc_set_default_async(%s);\n",
                   q->arg ? q->arg : "-1");
    buf_puts(b, "    }\n}");
}

const Directive *acc_version_dir(const Directive *t, int arch)
{
    for (int i = 0; t->acc && i < t->nvariants; i++)
        if (t->variants[i].arch == arch)
            return &t->variants[i];
    return t;
}

/* Is item text `b` a member of a struct (x.m, p->m, x.y.m)? */
static int acc__is_member(const char *b)
{
    return strchr(b, '.') != NULL || strstr(b, "->") != NULL;
}

void acc_attach_calls(const DataConstruct *d, Buf *b, int after)
{
    const Directive *dir = &d->pragma->dir;
    DirKind k = dir->kind;
    int attach = (k == DIR_ACC_ENTER_DATA && after) || (k == DIR_ACC_DATA && after && !dir->acc_declare);
    int detach = (k == DIR_ACC_EXIT_DATA && !after) || (k == DIR_ACC_DATA && !after && !dir->acc_declare);
    if (!attach && !detach)
        return;
    for (int i = 0; i < dir->nclauses; i++) {
        const DirClause *c = &dir->clauses[i];
        int named = c->kind == (attach ? CL_ACC_ATTACH : CL_ACC_DETACH) ||
                    (k == DIR_ACC_DATA && c->kind == CL_ACC_ATTACH);
        int member_kind = attach ? (c->kind == CL_ACC_COPYIN || c->kind == CL_ACC_CREATE || c->kind == CL_ACC_COPY ||
                                    c->kind == CL_ACC_COPYOUT)
                                 : (c->kind == CL_ACC_COPYOUT || c->kind == CL_ACC_DELETE || c->kind == CL_ACC_COPY ||
                                    c->kind == CL_ACC_COPYIN || c->kind == CL_ACC_CREATE);
        for (int j = 0; j < c->nitems; j++) {
            const DirItem *it = &c->items[j];
            /* attach(p) / detach(p), and a member's section p.m[lo:n]: the
             * device copy of the struct (when present) points at the section */
            if (!named && !(member_kind && it->nsubs > 0 && acc__is_member(it->base)))
                continue;
            buf_printf(b, "\n    if (%s) {\n        extern void acc_%s(void **);\n        acc_%s((void **)&(%s));\n    }",
                       k == DIR_ACC_DATA ? "macc_if_" : d->if_expr ? d->if_expr : "1", attach ? "attach" : "detach",
                       attach ? "attach" : "detach",
                       it->base);
        }
    }
}

void acc_zero_calls(const Directive *dir, const Vec *maps, Buf *b, const char *dev, const char *cond, const char *loc,
                    int after)
{
    int k = 0;
    for (int i = 0; i < dir->nclauses; i++) {
        const DirClause *c = &dir->clauses[i];
        if ((c->kind != CL_ACC_CREATE && c->kind != CL_ACC_COPYOUT) || !c->modifier)
            continue;
        int want = c->kind == CL_ACC_CREATE ? MACC_MAP_ALLOC : MACC_MAP_FROM;
        for (int j = 0; j < c->nitems; j++) {
            const RMap *m = NULL;
            int dirs = 0;
            for (int x = 0; x < maps->len; x++) {
                const RMap *y = maps->items[x];
                if (strcmp(y->name, c->items[j].base))
                    continue;
                dirs |= y->kind & MACC_MAP_DIR_MASK;
                if (!m && (y->kind & MACC_MAP_DIR_MASK) == want)
                    m = y;
            }
            if (!m)
                continue;
            if (!after)
                buf_printf(b, "    void *macc_z%d_ = (%s) ? MACC_acc_zero_begin(%s, \"%s\", (void *)(%s), %s, %s) : 0;\n",
                           k, cond, loc, m->name, m->start, m->bytes, dev);
            else
                buf_printf(b, "    MACC_acc_zero_end(%s, macc_z%d_, %d);\n", loc, k, dirs & MACC_MAP_FROM ? MACC_MAP_FROM : MACC_MAP_ALLOC);
            k++;
        }
    }
}

/* ---- kernels constructs of several statements --------------------------- */

/* OpenACC's kernels construct lets the compiler make each loop nest of its
 * block a kernel of its own (NVHPC and GCC do). macc's region is one
 * statement, so a kernels construct whose block holds several statements is
 * rewritten before the analysis, in the text:
 *
 *     #pragma acc kernels CLAUSES          #pragma acc data DATA-CLAUSES
 *     {                                    {
 *         s = 0;                               #pragma acc kernels CLAUSES'
 *         for (...) ...                        s = 0;
 *         for (...) ...             ->         #pragma acc kernels CLAUSES'
 *     }                                        for (...) ...
 *                                              #pragma acc kernels CLAUSES'
 *                                              for (...) ...
 *                                          }
 *
 * DATA-CLAUSES are the construct's data clauses (and its if), CLAUSES' the
 * others (if, self, wait, num_gangs, vector_length, default, device_type
 * ...) but async: the kernels run synchronously, in order (a declaration's
 * host variable or a scalar written by one is read by the next at its
 * launch); no data clause: no data construct, the block stays a block. Each loop nest is then a kernels loop (parallelised when its
 * iterations are independent, else seq with a warning naming the line); a
 * run of other statements becomes one kernels construct of one thread;
 * declarations stay in the block, on the host (their variables are then
 * captured like any other: scalars copied in and out). Line markers after
 * every inserted line keep lines and columns of the user's text. */

static int acc__data_clause(const char *w, size_t n)
{
    static const char *const names[] = {"copy",       "pcopy",     "present_or_copy",  "copyin",
                                        "pcopyin",    "present_or_copyin", "copyout", "pcopyout",
                                        "present_or_copyout", "create", "pcreate", "present_or_create",
                                        "present",    "no_create", "deviceptr",        "attach"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == n && !memcmp(w, names[i], n))
            return 1;
    return 0;
}

/* Splits the clauses of `acc kernels CLAUSES` (p->text) into data and other. */
static void acc__kernels_clauses(const char *text, Buf *data, Buf *other)
{
    const char *p = text;
    for (int skip = 0; skip < 2; skip++) { /* "acc", "kernels" */
        while (*p == ' ' || *p == '\t')
            p++;
        while (ident_char(*p))
            p++;
    }
    int after_dtype = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!ident_char(*p))
            break;
        const char *w = p;
        while (ident_char(*p))
            p++;
        size_t wn = (size_t)(p - w);
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '(') {
            int depth = 0;
            for (; *q; q++) {
                if (*q == '(')
                    depth++;
                else if (*q == ')' && --depth == 0) {
                    q++;
                    break;
                }
            }
            p = q;
        }
        if ((wn == 11 && !memcmp(w, "device_type", 11)) || (wn == 5 && !memcmp(w, "dtype", 5)))
            after_dtype = 1;
        int is_if = wn == 2 && !memcmp(w, "if", 2);
        if (wn == 5 && !memcmp(w, "async", 5))
            continue; /* the kernels run in order, synchronously: host code between them reads their results */
        Buf *to = !after_dtype && acc__data_clause(w, wn) ? data : other;
        buf_put(to, " ", 1);
        buf_put(to, w, (size_t)(p - w));
        if (is_if) {
            buf_put(data, " ", 1);
            buf_put(data, w, (size_t)(p - w));
        }
    }
}

/* "\n# LINE\n" for the line holding source offset `off`, then `col` blanks. */
static void acc__mark(const Source *s, Buf *b, size_t off, int pad)
{
    int li = source_line_index(s, off);
    buf_printf(b, "\n# %d\n", s->oline[li]);
    size_t col = off - s->lines[li];
    for (size_t i = 0; pad && i < col; i++)
        buf_put(b, " ", 1);
}

typedef struct AccEdit {
    size_t at, to;   /* replace text [at, to) (to == at: insert) */
    char *with;
} AccEdit;

static void acc__edit(Vec *ed, size_t at, size_t to, char *with)
{
    AccEdit *e = xcalloc(1, sizeof *e);
    *e = (AccEdit){at, to, with};
    vec_push(ed, e);
}

static int acc__edit_cmp(const void *x, const void *y)
{
    const AccEdit *a = *(AccEdit *const *)x, *b = *(AccEdit *const *)y;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* A statement of a kernels block, with the pragma lines before it. */
typedef struct AccGroup {
    size_t start, end;
    int kind; /* ACC_G_* */
} AccGroup;
enum { ACC_G_DECL, ACC_G_LOOP, ACC_G_OTHER };

char *acc_split_kernels(Unit *u, size_t *len_out)
{
    const Source *s = u->src;
    Vec ed = {0}; /* AccEdit *, every construct's */
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (!p->dir.acc || p->dir.acc != ACC_KERNELS || p->dir.acc_loop || p->dir.kind != DIR_TARGET)
            continue;
        TSNode st = ts_node_next_named_sibling(p->node);
        while (!ts_node_is_null(st) && node_is(st, "comment"))
            st = ts_node_next_named_sibling(st);
        if (ts_node_is_null(st) || !node_is(st, "compound_statement") || ts_node_has_error(st))
            continue;
        /* the block's statements, each with the pragma lines before it */
        Vec gv = {0}; /* AccGroup * */
        int nloops = 0, bad = 0;
        size_t pend = 0;
        int has_pend = 0;
        uint32_t nc = ts_node_named_child_count(st);
        for (uint32_t k = 0; k < nc && !bad; k++) {
            TSNode c = ts_node_named_child(st, k);
            const char *ty = node_type(c);
            if (!strcmp(ty, "comment"))
                continue;
            if (!strcmp(ty, "preproc_call")) {
                if (!has_pend)
                    pend = ts_node_start_byte(c), has_pend = 1;
                continue;
            }
            if (!strcmp(ty, "labeled_statement") || !strcmp(ty, "return_statement") ||
                !strcmp(ty, "break_statement") || !strcmp(ty, "continue_statement") ||
                !strcmp(ty, "goto_statement") || !strncmp(ty, "preproc_", 8)) {
                bad = 1;
                break;
            }
            AccGroup *g = xcalloc(1, sizeof *g);
            g->start = has_pend ? pend : ts_node_start_byte(c);
            g->end = ts_node_end_byte(c);
            g->kind = !strcmp(ty, "declaration") ? ACC_G_DECL : !strcmp(ty, "for_statement") ? ACC_G_LOOP : ACC_G_OTHER;
            nloops += g->kind == ACC_G_LOOP;
            if (g->kind == ACC_G_DECL && has_pend)
                bad = 1; /* a pragma before a declaration */
            has_pend = 0;
            vec_push(&gv, g);
        }
        if (bad || has_pend || gv.len < 2 || nloops == 0) {
            for (int g = 0; g < gv.len; g++)
                free(gv.items[g]);
            vec_free(&gv);
            continue;
        }
        AccGroup **gr = (AccGroup **)gv.items;
        int ng = gv.len;
        Buf data = {0}, other = {0};
        acc__kernels_clauses(p->text, &data, &other);
        /* the construct's line: a data construct of its data clauses, or nothing */
        Buf head = {0};
        if (data.len) {
            buf_puts(&head, "#pragma acc data");
            buf_put(&head, data.data, data.len);
        }
        acc__mark(s, &head, p->end < s->len ? p->end : p->start, 0);
        /* acc__mark put "\n# L\n": the pragma's own newline is replaced */
        acc__edit(&ed, p->start, p->end, xstrndup(head.data + (data.len ? 0 : 1), head.len - (data.len ? 0 : 1)));
        buf_free(&head);
        int nk = 0;
        for (int g = 0; g < ng; g++) {
            if (gr[g]->kind == ACC_G_DECL)
                continue;
            int last = g;
            if (gr[g]->kind == ACC_G_OTHER)
                while (last + 1 < ng && gr[last + 1]->kind == ACC_G_OTHER)
                    last++;
            Buf ins = {0};
            acc__mark(s, &ins, gr[g]->start, 0);
            buf_puts(&ins, "#pragma acc kernels");
            buf_put(&ins, other.data, other.len);
            if (last > g)
                buf_puts(&ins, "\n{");
            acc__mark(s, &ins, gr[g]->start, 1);
            acc__edit(&ed, gr[g]->start, gr[g]->start, xstrndup(ins.data, ins.len));
            buf_free(&ins);
            if (last > g)
                acc__edit(&ed, gr[last]->end, gr[last]->end, xstrdup(" }"));
            nk++;
            g = last;
        }
        if (u->info)
            diag_note(u->diag, p->start,
                      "acc kernels: %d loop nest%s and %d other statement group%s, each a kernels construct "
                      "(a kernel)%s",
                      nloops, nloops == 1 ? "" : "s", nk - nloops, nk - nloops == 1 ? "" : "s",
                      data.len ? "; the data clauses make a data construct around them" : "");
        buf_free(&data);
        buf_free(&other);
        for (int g = 0; g < gv.len; g++)
            free(gv.items[g]);
        vec_free(&gv);
    }
    if (!ed.len)
        return NULL;
    qsort(ed.items, (size_t)ed.len, sizeof *ed.items, acc__edit_cmp);
    Buf out = {0};
    size_t at = 0;
    for (int i = 0; i < ed.len; i++) {
        AccEdit *e = ed.items[i];
        buf_put(&out, s->text + at, e->at - at);
        buf_puts(&out, e->with);
        at = e->to;
        free(e->with);
        free(e);
    }
    buf_put(&out, s->text + at, s->len - at);
    vec_free(&ed);
    *len_out = out.len;
    return out.data;
}
