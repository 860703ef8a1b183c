/* emit_atomic.c: `#pragma omp atomic`, `#pragma omp critical` and
 * `#pragma omp flush` in device code (kernels and the __device__ copies of
 * the functions they call).
 *
 * The host file keeps these pragmas: they are host OpenMP. In the device file
 * the pragma and the statement after it become calls into macc_device.h:
 *
 *   atomic [update]   x++; x--; ++x; --x; x op= e; x = x op e; x = e op x;
 *                     -> macc_atomic_fetch<MACC_A_op>(&x, e)
 *   atomic read       v = x;           -> v = macc_atomic_read(&x)
 *   atomic write      x = e;           -> macc_atomic_fetch<MACC_A_WR>(&x, e)
 *   atomic compare    x = e < x ? e : x;  if (e < x) x = e;  (and > and the
 *                     mirrored forms: min/max)  -> MACC_A_MIN / MACC_A_MAX;
 *                     x = x == e ? d : x;  if (x == e) x = d;  -> macc_atomic_cas
 *   atomic capture    v = x++; v = ++x; v = x op= e; v = x = x op e; v = x = e;
 *                     { v = x; update; }  { update; v = x; }  (also with
 *                     compare forms): the old or the new value goes to v
 *   critical [(name)] the block under a lock of that name (macc_critical_*)
 *   flush             __threadfence()
 *
 * op is one of + - * / & | ^ << >>. Memory-order clauses (seq_cst, acq_rel,
 * acquire, release, relaxed) and hint(...) are accepted; all but relaxed add
 * __threadfence() around the atomic. A statement that fits none of these forms
 * is an error naming the pragma: nothing is dropped silently. An atomic whose
 * variable lives in the thread's own registers or stack (a local or private
 * variable of the kernel) is emitted as the plain statement: no other thread
 * can see it, and CUDA's atomics need global or shared memory. */
#include <stdlib.h>
#include <string.h>

#include "macc.h"

/* ---- the pragma ------------------------------------------------------------ */

/* Text after "#pragma" of a preproc_call node, continuation lines joined
 * (caller frees), or NULL when n is not a #pragma. */
static char *at__pragma_text(const Unit *u, TSNode n)
{
    if (!node_is(n, "preproc_call"))
        return NULL;
    TSNode dir = node_field(n, "directive");
    const char *t = u->src->text;
    if (ts_node_is_null(dir) || ts_node_end_byte(dir) - ts_node_start_byte(dir) != 7 ||
        strncmp(t + ts_node_start_byte(dir), "#pragma", 7))
        return NULL;
    TSNode arg = node_field(n, "argument");
    if (ts_node_is_null(arg))
        return xstrdup("");
    Buf b = {0};
    for (size_t i = ts_node_start_byte(arg); i < ts_node_end_byte(arg); i++) {
        if (t[i] == '\\' && (t[i + 1] == '\n' || (t[i + 1] == '\r' && t[i + 2] == '\n'))) {
            i += t[i + 1] == '\r' ? 2 : 1;
            buf_puts(&b, " ");
            continue;
        }
        buf_put(&b, t + i, 1);
    }
    if (!b.data)
        buf_puts(&b, "");
    return b.data;
}

static int at__word(const char *s, const char *w)
{
    size_t n = strlen(w);
    return !strncmp(s, w, n) && !(s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
                                  (s[n] >= '0' && s[n] <= '9'));
}

static const char *at__skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    return s;
}

int atomic_pragma_kind(const Unit *u, TSNode n)
{
    char *text = at__pragma_text(u, n);
    if (!text)
        return SYNC_NONE;
    const char *s = at__skip_ws(text);
    int kind = SYNC_NONE;
    if (at__word(s, "acc")) { /* OpenACC's atomic: OpenMP's forms and clauses */
        s = at__skip_ws(s + 3);
        if (at__word(s, "atomic"))
            kind = SYNC_ATOMIC;
    } else if (at__word(s, "omp")) {
        s = at__skip_ws(s + 3);
        if (at__word(s, "atomic"))
            kind = SYNC_ATOMIC;
        else if (at__word(s, "critical"))
            kind = SYNC_CRITICAL;
        else if (at__word(s, "flush"))
            kind = SYNC_FLUSH;
    }
    free(text);
    return kind;
}

TSNode atomic_pragma_stmt(TSNode pragma)
{
    TSNode s = ts_node_next_named_sibling(pragma);
    while (node_is(s, "comment"))
        s = ts_node_next_named_sibling(s);
    return s;
}

enum { AT_UPDATE, AT_READ, AT_WRITE, AT_CAPTURE };

typedef struct AtClauses {
    int kind;           /* AT_* */
    int compare;        /* compare clause */
    int fence_before, fence_after;
    char *name;         /* critical: the name, or NULL */
} AtClauses;

/* Parses the clauses of `omp atomic` / `omp critical`. Returns 0, or -1 after
 * an error. */
static int at__clauses(AtomicEmit *a, TSNode pragma, int sync, AtClauses *cl)
{
    memset(cl, 0, sizeof *cl);
    char *text = at__pragma_text(a->u, pragma);
    const char *s = at__skip_ws(text);
    s = at__skip_ws(s + 3);                                /* omp */
    s = at__skip_ws(s + (sync == SYNC_ATOMIC ? 6 : 8)); /* atomic / critical */
    int nkind = 0, rc = 0;
    if (sync == SYNC_CRITICAL && *s == '(') {
        const char *b = at__skip_ws(s + 1), *e = strchr(b, ')');
        if (!e) {
            rc = -1;
            goto out;
        }
        const char *q = e;
        while (q > b && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        cl->name = xstrndup(b, (size_t)(q - b));
        s = at__skip_ws(e + 1);
    }
    while (*s) {
        if (*s == ',') {
            s = at__skip_ws(s + 1);
            continue;
        }
        const char *w = s;
        while ((*s >= 'a' && *s <= 'z') || *s == '_')
            s++;
        size_t n = (size_t)(s - w);
        if (!n) {
            rc = -1;
            goto out;
        }
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)(n < 31 ? n : 31), w);
        s = at__skip_ws(s);
        if (*s == '(') { /* hint(expr), fail(...), memory_order(...): skip the argument */
            int depth = 0;
            for (; *s; s++) {
                if (*s == '(')
                    depth++;
                else if (*s == ')' && --depth == 0) {
                    s++;
                    break;
                }
            }
            s = at__skip_ws(s);
        }
        if (sync == SYNC_CRITICAL) {
            if (strcmp(word, "hint")) {
                rc = -1;
                goto out;
            }
            continue;
        }
        if (!strcmp(word, "read"))
            cl->kind = AT_READ, nkind++;
        else if (!strcmp(word, "write"))
            cl->kind = AT_WRITE, nkind++;
        else if (!strcmp(word, "update"))
            cl->kind = AT_UPDATE, nkind++;
        else if (!strcmp(word, "capture"))
            cl->kind = AT_CAPTURE, nkind++;
        else if (!strcmp(word, "compare"))
            cl->compare = 1;
        else if (!strcmp(word, "seq_cst") || !strcmp(word, "acq_rel"))
            cl->fence_before = cl->fence_after = 1;
        else if (!strcmp(word, "release"))
            cl->fence_before = 1;
        else if (!strcmp(word, "acquire"))
            cl->fence_after = 1;
        else if (strcmp(word, "relaxed") && strcmp(word, "hint") && strcmp(word, "weak") && strcmp(word, "fail") &&
                 strcmp(word, "memory_order")) {
            if (!a->quiet)
                diag_error(a->u->diag, ts_node_start_byte(pragma), "unknown clause '%s' on '#pragma omp atomic'", word);
            a->errors++;
            rc = -2;
            goto out;
        }
    }
    if (nkind > 1 || (cl->compare && (cl->kind == AT_READ || cl->kind == AT_WRITE)))
        rc = -1;
out:
    if (rc == -1) {
        if (!a->quiet)
            diag_error(a->u->diag, ts_node_start_byte(pragma), "malformed '#pragma %s'", text);
        a->errors++;
    }
    free(text);
    if (rc) {
        free(cl->name);
        cl->name = NULL;
    }
    return rc ? -1 : 0;
}

/* ---- statement forms --------------------------------------------------------- */

static TSNode at__strip(TSNode n)
{
    while (node_is(n, "parenthesized_expression") && ts_node_named_child_count(n) == 1)
        n = ts_node_named_child(n, 0);
    return n;
}

/* Same expression text, whitespace and outer parentheses aside. */
static int at__same(const Unit *u, TSNode a, TSNode b)
{
    a = at__strip(a);
    b = at__strip(b);
    if (ts_node_is_null(a) || ts_node_is_null(b))
        return 0;
    const char *t = u->src->text;
    size_t i = ts_node_start_byte(a), ie = ts_node_end_byte(a);
    size_t j = ts_node_start_byte(b), je = ts_node_end_byte(b);
    for (;;) {
        while (i < ie && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
            i++;
        while (j < je && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r'))
            j++;
        if (i == ie || j == je)
            return i == ie && j == je;
        if (t[i] != t[j])
            return 0;
        i++;
        j++;
    }
}

static char *at__op_text(const Unit *u, TSNode n)
{
    return node_text(u, node_field(n, "operator"));
}

/* Binary operators of atomic updates: MACC_A_* names (and their reversed forms). */
static const struct {
    const char *op;
    const char *name, *rname;
} at__ops[] = {
    {"+", "MACC_A_ADD", "MACC_A_ADD"}, {"-", "MACC_A_SUB", "MACC_A_RSUB"}, {"*", "MACC_A_MUL", "MACC_A_MUL"},
    {"/", "MACC_A_DIV", "MACC_A_RDIV"}, {"&", "MACC_A_AND", "MACC_A_AND"}, {"|", "MACC_A_OR", "MACC_A_OR"},
    {"^", "MACC_A_XOR", "MACC_A_XOR"}, {"<<", "MACC_A_SHL", "MACC_A_RSHL"}, {">>", "MACC_A_SHR", "MACC_A_RSHR"},
};

static int at__op_index(const char *op)
{
    for (size_t i = 0; i < sizeof at__ops / sizeof at__ops[0]; i++)
        if (!strcmp(at__ops[i].op, op))
            return (int)i;
    return -1;
}

typedef struct Upd {
    TSNode x;          /* the atomic variable (an lvalue) */
    TSNode e;          /* the operand; null: the literal 1 (++/--) */
    TSNode d;          /* compare ==: the value stored */
    const char *op;    /* MACC_A_*, or NULL for compare == (macc_atomic_cas) */
    int prefix;        /* ++x / --x */
    TSNode stmt;       /* the whole statement, for the plain fallback */
} Upd;

enum { UPD_PLAIN = 1, UPD_WRITE = 2, UPD_COMPARE = 4 };

/* Compare forms: condition c, value stored `val`, x. */
static int at__compare(const Unit *u, TSNode c, TSNode val, TSNode x, Upd *up)
{
    if (ts_node_is_null(val))
        return -1; /* GNU "c ?: x" stores the condition's value: no compare form */
    c = at__strip(c);
    if (!node_is(c, "binary_expression"))
        return -1;
    char *op = at__op_text(u, c);
    TSNode l = node_field(c, "left"), r = node_field(c, "right");
    int rc = -1;
    if (!strcmp(op, "==")) {
        TSNode e = at__same(u, l, x) ? r : at__same(u, r, x) ? l : (TSNode){0};
        if (!ts_node_is_null(e)) {
            up->x = x;
            up->e = e;
            up->d = val;
            up->op = NULL;
            rc = 0;
        }
    } else if (!strcmp(op, "<") || !strcmp(op, ">")) {
        int lt = op[0] == '<';
        /* e < x ? e : x is min; x < e ? e : x is max */
        if (at__same(u, r, x) && at__same(u, l, val)) {
            up->op = lt ? "MACC_A_MIN" : "MACC_A_MAX";
            rc = 0;
        } else if (at__same(u, l, x) && at__same(u, r, val)) {
            up->op = lt ? "MACC_A_MAX" : "MACC_A_MIN";
            rc = 0;
        }
        if (!rc) {
            up->x = x;
            up->e = val;
        }
    }
    free(op);
    return rc;
}

/* An expression that updates x: fills *up and returns 0, else -1. */
static int at__update_expr(const Unit *u, TSNode n, int allow, Upd *up)
{
    memset(up, 0, sizeof *up);
    n = at__strip(n);
    if (node_is(n, "update_expression")) {
        TSNode arg = node_field(n, "argument");
        TSNode opn = node_field(n, "operator");
        char *op = node_text(u, opn);
        up->x = arg;
        up->op = op[0] == '+' ? "MACC_A_ADD" : "MACC_A_SUB";
        up->prefix = ts_node_start_byte(opn) < ts_node_start_byte(arg);
        free(op);
        return 0;
    }
    if (!node_is(n, "assignment_expression"))
        return -1;
    TSNode left = node_field(n, "left"), right = node_field(n, "right");
    char *op = at__op_text(u, n);
    int rc = -1;
    size_t ol = strlen(op);
    if (ol > 1 && op[ol - 1] == '=') {
        op[ol - 1] = 0;
        int k = at__op_index(op);
        if (k >= 0) {
            up->x = left;
            up->e = right;
            up->op = at__ops[k].name;
            rc = 0;
        }
    } else if (!strcmp(op, "=")) {
        TSNode r = at__strip(right);
        if (node_is(r, "binary_expression")) {
            char *bop = at__op_text(u, r);
            int k = at__op_index(bop);
            free(bop);
            if (k >= 0 && at__same(u, node_field(r, "left"), left)) {
                up->x = left;
                up->e = node_field(r, "right");
                up->op = at__ops[k].name;
                rc = 0;
            } else if (k >= 0 && at__same(u, node_field(r, "right"), left)) {
                up->x = left;
                up->e = node_field(r, "left");
                up->op = at__ops[k].rname;
                rc = 0;
            }
        } else if (node_is(r, "conditional_expression") && (allow & UPD_COMPARE)) {
            if (at__same(u, node_field(r, "alternative"), left))
                rc = at__compare(u, node_field(r, "condition"), node_field(r, "consequence"), left, up);
        }
        if (rc && (allow & UPD_WRITE)) {
            up->x = left;
            up->e = right;
            up->op = "MACC_A_WR";
            rc = 0;
        }
    }
    free(op);
    return rc;
}

/* The one expression of an expression statement (or of a block holding only
 * that statement), or a null node. */
static TSNode at__expr_of(TSNode s)
{
    TSNode null = {0};
    while (node_is(s, "compound_statement")) {
        TSNode only = null;
        int count = 0;
        for (uint32_t i = 0; i < ts_node_named_child_count(s); i++) {
            TSNode k = ts_node_named_child(s, i);
            if (node_is(k, "comment"))
                continue;
            only = k;
            count++;
        }
        if (count != 1)
            return null;
        s = only;
    }
    if (!node_is(s, "expression_statement") || ts_node_named_child_count(s) < 1)
        return null;
    TSNode e = ts_node_named_child(s, 0);
    return node_is(e, "comment") ? null : e;
}

/* A statement that updates x (an expression statement, or for compare an
 * `if (c) x = v;` without else). */
static int at__update_stmt(const Unit *u, TSNode s, int allow, Upd *up)
{
    memset(up, 0, sizeof *up);
    if (node_is(s, "if_statement")) {
        if (!(allow & UPD_COMPARE) || !ts_node_is_null(node_field(s, "alternative")))
            return -1;
        TSNode as = at__strip(at__expr_of(node_field(s, "consequence")));
        if (!node_is(as, "assignment_expression"))
            return -1;
        char *op = at__op_text(u, as);
        int plain = !strcmp(op, "=");
        free(op);
        if (!plain)
            return -1;
        if (at__compare(u, node_field(s, "condition"), node_field(as, "right"), node_field(as, "left"), up))
            return -1;
        up->stmt = s;
        return 0;
    }
    TSNode e = at__expr_of(s);
    if (ts_node_is_null(e) || at__update_expr(u, e, allow, up))
        return -1;
    if ((allow & UPD_COMPARE) && up->op && strcmp(up->op, "MACC_A_MIN") && strcmp(up->op, "MACC_A_MAX") &&
        !(allow & UPD_PLAIN))
        return -1;
    up->stmt = s;
    return 0;
}

/* `v = x` as an expression statement: *v, *x. */
static int at__read_stmt(const Unit *u, TSNode s, TSNode *v, TSNode *x)
{
    TSNode e = at__strip(at__expr_of(s));
    if (!node_is(e, "assignment_expression"))
        return -1;
    char *op = at__op_text(u, e);
    int plain = !strcmp(op, "=");
    free(op);
    if (!plain)
        return -1;
    *v = node_field(e, "left");
    *x = node_field(e, "right");
    TSNode r = at__strip(*x);
    /* x is an lvalue: a name, a subscript, a member, a dereference */
    return node_is(r, "identifier") || node_is(r, "subscript_expression") || node_is(r, "field_expression") ||
                   node_is(r, "pointer_expression")
               ? 0
               : -1;
}

/* ---- emission ------------------------------------------------------------------ */

static void at__copy(AtomicEmit *a, TSNode n, Buf *out)
{
    buf_puts(out, "(");
    a->copy(a->cx, n, out);
    buf_puts(out, ")");
}

static void at__e(AtomicEmit *a, const Upd *up, Buf *out)
{
    if (ts_node_is_null(up->e))
        buf_puts(out, "1");
    else
        at__copy(a, up->e, out);
}

/* The atomic update itself; `val` NULL: the value is discarded; else val
 * receives the old value (want_new 0) or the new one. */
static void at__emit_update(AtomicEmit *a, const Upd *up, TSNode v, int want_new, Buf *out)
{
    int capture = !ts_node_is_null(v);
    if (!up->op) { /* compare == */
        buf_puts(out, "{ auto macc_e_ = ");
        at__copy(a, up->e, out);
        buf_puts(out, "; auto macc_d_ = ");
        at__copy(a, up->d, out);
        buf_puts(out, "; auto macc_o_ = macc_atomic_cas(&");
        at__copy(a, up->x, out);
        buf_puts(out, ", macc_e_, macc_d_); ");
        if (capture) {
            at__copy(a, v, out);
            buf_puts(out, want_new ? " = macc_o_ == macc_e_ ? (decltype(macc_o_))macc_d_ : macc_o_; " : " = macc_o_; ");
        } else {
            buf_puts(out, "(void)macc_o_; ");
        }
        buf_puts(out, "}");
        return;
    }
    if (!capture) {
        buf_printf(out, "(void)macc_atomic_fetch<%s>(&", up->op);
        at__copy(a, up->x, out);
        buf_puts(out, ", ");
        at__e(a, up, out);
        buf_puts(out, ");");
        return;
    }
    buf_puts(out, "{ auto macc_e_ = ");
    at__e(a, up, out);
    buf_puts(out, "; ");
    at__copy(a, v, out);
    if (want_new)
        buf_printf(out, " = macc_atomic_apply<%s>(macc_atomic_fetch<%s>(&", up->op, up->op);
    else
        buf_printf(out, " = macc_atomic_fetch<%s>(&", up->op);
    at__copy(a, up->x, out);
    buf_puts(out, want_new ? ", macc_e_), macc_e_); }" : ", macc_e_); }");
}

static void at__error(AtomicEmit *a, TSNode pragma, const char *clause, const char *forms)
{
    if (!a->quiet)
        diag_error(a->u->diag, ts_node_start_byte(pragma),
               "the statement after '#pragma omp atomic%s%s' must be %s", clause[0] ? " " : "", clause, forms);
    a->errors++;
}

static unsigned long long at__hash(const char *s)
{
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

/* Keeps the line count: the pragma's lines as newlines, the text between the
 * pragma and its statement as it is, then the code; newlines after it so that
 * what follows stays on its line. */
static void at__frame(AtomicEmit *a, TSNode pragma, TSNode stmt, const Buf *code, Buf *out)
{
    if (a->no_frame) {
        buf_puts(out, code->data ? code->data : "");
        return;
    }
    const char *t = a->u->src->text;
    size_t ps = ts_node_start_byte(pragma), pe = ts_node_end_byte(pragma);
    size_t ss = ts_node_is_null(stmt) ? pe : ts_node_start_byte(stmt);
    size_t se = ts_node_is_null(stmt) ? pe : ts_node_end_byte(stmt);
    for (size_t i = ps; i < pe; i++)
        if (t[i] == '\n')
            buf_puts(out, "\n");
    for (size_t i = pe; i < ss; i++)
        buf_put(out, (t[i] == ' ' || t[i] == '\t' || t[i] == '\n') ? t + i : " ", 1);
    buf_puts(out, code->data ? code->data : "");
    int want = 0, have = 0;
    for (size_t i = ss; i < se; i++)
        want += t[i] == '\n';
    for (size_t i = 0; code->data && i < code->len; i++)
        have += code->data[i] == '\n';
    for (; have < want; have++)
        buf_puts(out, "\n");
}

int atomic_emit(AtomicEmit *a, TSNode pragma, Buf *out)
{
    const Unit *u = a->u;
    int sync = atomic_pragma_kind(u, pragma);
    Buf code = {0};
    TSNode stmt = {0};
    AtClauses cl;
    int rc = 0;
    a->was_atomic = sync != SYNC_ATOMIC;
    if (sync == SYNC_FLUSH) {
        buf_puts(out, "__threadfence();");
        if (!a->no_frame)
            for (size_t i = ts_node_start_byte(pragma); i < ts_node_end_byte(pragma); i++)
                if (u->src->text[i] == '\n')
                    buf_puts(out, "\n");
        return 0;
    }
    stmt = atomic_pragma_stmt(pragma);
    const char *what = sync == SYNC_ATOMIC ? "atomic" : "critical";
    if (ts_node_is_null(stmt) || node_is(stmt, "preproc_call") || node_is(stmt, "declaration") ||
        !(node_is(stmt, "expression_statement") || node_is(stmt, "compound_statement") ||
          strstr(node_type(stmt), "_statement"))) {
        if (!a->quiet)
            diag_error(u->diag, ts_node_start_byte(pragma), "'#pragma omp %s' has no statement after it", what);
        a->errors++;
        return -1;
    }
    if (at__clauses(a, pragma, sync, &cl) != 0)
        return -1;
    if (sync == SYNC_CRITICAL) {
        buf_printf(&code, "{ unsigned int *macc_lk_ = macc_critical_lock(0x%llxULL); /* critical%s%s%s */ "
                          "for (bool macc_done_ = false; !macc_done_;) if (macc_critical_enter(macc_lk_)) { ",
                   cl.name ? at__hash(cl.name) : 0ULL, cl.name ? " (" : "", cl.name ? cl.name : "", cl.name ? ")" : "");
        a->copy(a->cx, stmt, &code);
        buf_puts(&code, " macc_critical_leave(macc_lk_); macc_done_ = true; } }");
        at__frame(a, pragma, stmt, &code, out);
        free(cl.name);
        buf_free(&code);
        return 0;
    }

    Upd up;
    TSNode v = {0}, xr = {0};
    int want_new = 0;
    const char *clause = cl.kind == AT_READ ? "read" : cl.kind == AT_WRITE ? "write"
                        : cl.kind == AT_CAPTURE ? (cl.compare ? "capture compare" : "capture")
                        : cl.compare ? "compare" : "";
    memset(&up, 0, sizeof up);
    switch (cl.kind) {
    case AT_READ:
        if (at__read_stmt(u, stmt, &v, &xr)) {
            at__error(a, pragma, clause, "'v = x;'");
            rc = -1;
        }
        up.x = xr;
        break;
    case AT_WRITE: {
        TSNode e = at__strip(at__expr_of(stmt));
        char *op = node_is(e, "assignment_expression") ? at__op_text(u, e) : NULL;
        if (op && !strcmp(op, "=")) {
            up.x = node_field(e, "left");
            up.e = node_field(e, "right");
            up.op = "MACC_A_WR";
        } else {
            at__error(a, pragma, clause, "'x = expr;'");
            rc = -1;
        }
        free(op);
        break;
    }
    case AT_UPDATE:
        if (at__update_stmt(u, stmt, cl.compare ? UPD_COMPARE : UPD_PLAIN, &up)) {
            at__error(a, pragma, clause,
                      cl.compare ? "'x = e < x ? e : x;', 'if (e < x) x = e;' (also with >, or x first), "
                                   "'x = x == e ? d : x;' or 'if (x == e) x = d;'"
                                 : "'x++;', 'x--;', '++x;', '--x;', 'x op= e;', 'x = x op e;' or 'x = e op x;' "
                                   "(op: + - * / & | ^ << >>)");
            rc = -1;
        }
        break;
    case AT_CAPTURE: {
        int allow = UPD_PLAIN | UPD_WRITE | (cl.compare ? UPD_COMPARE : 0);
        TSNode e = at__strip(at__expr_of(stmt));
        int ok = 0;
        if (!cl.compare && node_is(e, "assignment_expression") && node_is(stmt, "expression_statement")) {
            /* v = x++, v = ++x, v = x op= e, v = x = x op e, v = x = e */
            char *op = at__op_text(u, e);
            if (!strcmp(op, "=")) {
                TSNode r = at__strip(node_field(e, "right"));
                if (node_is(r, "update_expression") && !at__update_expr(u, r, 0, &up)) {
                    v = node_field(e, "left");
                    want_new = up.prefix;
                    ok = 1;
                } else if (node_is(r, "assignment_expression") && !at__update_expr(u, r, UPD_WRITE, &up)) {
                    v = node_field(e, "left");
                    want_new = 1;
                    ok = 1;
                }
            }
            free(op);
        }
        if (!ok && node_is(stmt, "compound_statement")) {
            TSNode k[2];
            int nk = 0;
            for (uint32_t i = 0; i < ts_node_named_child_count(stmt); i++) {
                TSNode c = ts_node_named_child(stmt, i);
                if (node_is(c, "comment"))
                    continue;
                if (nk < 2)
                    k[nk] = c;
                nk++;
            }
            if (nk == 2) {
                Upd u2;
                /* { v = x; update; }: the old value */
                if (!at__read_stmt(u, k[0], &v, &xr) && !at__update_stmt(u, k[1], allow, &u2) &&
                    at__same(u, xr, u2.x)) {
                    up = u2;
                    want_new = 0;
                    ok = 1;
                } else if (!at__update_stmt(u, k[0], allow, &u2) && !at__read_stmt(u, k[1], &v, &xr) &&
                           at__same(u, xr, u2.x)) {
                    /* { update; v = x; }: the new value */
                    up = u2;
                    want_new = 1;
                    ok = 1;
                }
            }
        }
        if (!ok) {
            at__error(a, pragma, clause,
                      cl.compare ? "'{ v = x; cond-update }' or '{ cond-update v = x; }' (cond-update: 'if (e < x) x = "
                                   "e;', 'x = x == e ? d : x;', ...)"
                                 : "'v = x++;', 'v = ++x;', 'v = x op= e;', 'v = x = x op e;', 'v = x = e;', "
                                   "'{ v = x; update; }' or '{ update; v = x; }'");
            rc = -1;
        }
        break;
    }
    }
    if (rc) {
        free(cl.name);
        buf_free(&code);
        return -1;
    }
    a->was_atomic = a->shared(a->cx, up.x, pragma);
    if (!a->was_atomic) {
        /* the thread's own variable: the plain statement */
        a->copy(a->cx, stmt, &code);
    } else {
        if (cl.fence_before)
            buf_puts(&code, "__threadfence(); ");
        if (cl.kind == AT_READ) {
            at__copy(a, v, &code);
            buf_puts(&code, " = macc_atomic_read(&");
            at__copy(a, up.x, &code);
            buf_puts(&code, ");");
        } else {
            at__emit_update(a, &up, v, want_new, &code);
        }
        if (cl.fence_after)
            buf_puts(&code, " __threadfence();");
    }
    at__frame(a, pragma, stmt, &code, out);
    free(cl.name);
    buf_free(&code);
    return 0;
}

/* ---- the variable of an atomic ------------------------------------------------ */

static void at__no_copy(void *cx, TSNode n, Buf *out)
{
    (void)cx;
    (void)n;
    (void)out;
}

static int at__record(void *cx, TSNode x, TSNode pragma)
{
    (void)pragma;
    *(TSNode *)cx = x;
    return 1;
}

TSNode atomic_target(Unit *u, TSNode pragma)
{
    TSNode x = {0};
    if (atomic_pragma_kind(u, pragma) != SYNC_ATOMIC)
        return x;
    AtomicEmit a;
    memset(&a, 0, sizeof a);
    a.u = u;
    a.copy = at__no_copy;
    a.shared = at__record;
    a.cx = &x;
    a.quiet = 1;
    Buf b = {0};
    if (atomic_emit(&a, pragma, &b) != 0)
        memset(&x, 0, sizeof x);
    buf_free(&b);
    return x;
}
