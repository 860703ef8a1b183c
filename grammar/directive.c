/* directive.c: a small lexer and recursive-descent parser for the text of a
 * `#pragma omp ...` / `#pragma acc ...` line (the text after "#pragma").
 *
 * The grammar, the clause table and the decisions taken are written down in
 * grammar/GRAMMAR.md. Expressions are never evaluated: they are kept as text
 * (trimmed, runs of whitespace and comments turned into one space, string and
 * character literals copied verbatim).
 */
#include "directive.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Parser state. All offsets are byte offsets into `s`. */
typedef struct DirP {
    const char *s;   /* the whole pragma text */
    int len;         /* strlen(s) */
    int pos;         /* cursor */
    int lim;         /* end of the range being parsed (len, or a variant's ')') */
    int is_acc;      /* parsing an acc directive */
    DirError *err;
    int failed;
} DirP;

#define DIR__BIT(k) ((uint64_t)1 << (k))
#define DIR__W(n) ((n) > 48 ? 48 : (n)) /* at most 48 bytes of a word in a message */

/* ------------------------------------------------------------------ */
/* Errors                                                             */
/* ------------------------------------------------------------------ */

static int dir__fail(DirP *p, int off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first error (later ones are consequences) and returns -1. */
static int dir__fail(DirP *p, int off, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        p->failed = 1;
        p->err->off = off;
        va_start(ap, fmt);
        vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Lexical helpers                                                    */
/* ------------------------------------------------------------------ */

static int dir__idstart(int c) { return isalpha((unsigned char)c) || c == '_'; }
static int dir__idchar(int c) { return isalnum((unsigned char)c) || c == '_'; }

static int dir__is_comment(const DirP *p, int i, int lim)
{
    return p->s[i] == '/' && i + 1 < lim && (p->s[i + 1] == '*' || p->s[i + 1] == '/');
}

/* s[i] starts a comment: returns the index after it (lim when unterminated). */
static int dir__skip_comment(const DirP *p, int i, int lim)
{
    if (p->s[i + 1] == '/') {
        while (i < lim && p->s[i] != '\n')
            i++;
        return i;
    }
    for (i += 2; i + 1 < lim; i++)
        if (p->s[i] == '*' && p->s[i + 1] == '/')
            return i + 2;
    return lim;
}

/* Length of a line continuation at i: a backslash, optional blanks, then a
 * newline or the end of the text (0 when none). */
static int dir__bsnl(const DirP *p, int i, int lim)
{
    int j = i + 1;
    if (p->s[i] != '\\')
        return 0;
    while (j < lim && (p->s[j] == ' ' || p->s[j] == '\t'))
        j++;
    if (j >= lim)
        return j - i;
    if (p->s[j] == '\n')
        return j + 1 - i;
    if (p->s[j] == '\r')
        return (j + 1 < lim && p->s[j + 1] == '\n') ? j + 2 - i : j + 1 - i;
    return 0;
}

/* Skips whitespace, comments and backslash-newlines. */
static int dir__skip_ws(const DirP *p, int i, int lim)
{
    while (i < lim) {
        int n;
        if (isspace((unsigned char)p->s[i]))
            i++;
        else if ((n = dir__bsnl(p, i, lim)) > 0)
            i += n;
        else if (dir__is_comment(p, i, lim))
            i = dir__skip_comment(p, i, lim);
        else
            break;
    }
    return i;
}

static void dir__ws(DirP *p) { p->pos = dir__skip_ws(p, p->pos, p->lim); }

/* Length of the identifier at i (0 when none). */
static int dir__word_at(const DirP *p, int i, int lim)
{
    int j = i;
    if (i >= lim || !dir__idstart(p->s[i]))
        return 0;
    while (j < lim && dir__idchar(p->s[j]))
        j++;
    return j - i;
}

static int dir__is(const DirP *p, int i, int n, const char *w)
{
    return (int)strlen(w) == n && memcmp(p->s + i, w, (size_t)n) == 0;
}

static int dir__ieq(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

/* Whether the next word (after whitespace) is w; does not consume it. */
static int dir__peek(DirP *p, const char *w)
{
    dir__ws(p);
    return dir__is(p, p->pos, dir__word_at(p, p->pos, p->lim), w);
}

static int dir__accept(DirP *p, const char *w)
{
    if (!dir__peek(p, w))
        return 0;
    p->pos += (int)strlen(w);
    return 1;
}

/* Skips a string or character literal starting at i; -1 when unterminated. */
static int dir__skip_lit(DirP *p, int i, int lim)
{
    char q = p->s[i];
    int j = i + 1;
    while (j < lim && p->s[j] != q) {
        if (p->s[j] == '\\' && j + 1 < lim)
            j++;
        j++;
    }
    if (j >= lim)
        return q == '"' ? dir__fail(p, i, "unterminated string literal")
                        : dir__fail(p, i, "unterminated character literal");
    return j + 1;
}

/* Scans [i, lim) for the first character of `stops` at nesting depth 0,
 * outside literals and comments; (), [] and {} must balance. With qcolon, a
 * ':' that closes a pending '?' of a conditional expression is not a stop.
 * Returns the index of the stop, lim when none, -1 after an error. */
static int dir__scan(DirP *p, int i, int lim, const char *stops, int qcolon)
{
    const char *s = p->s;
    char stack[64];
    int sp = 0, q = 0;

    while (i < lim) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            i = dir__skip_lit(p, i, lim);
            if (i < 0)
                return -1;
            continue;
        }
        if (dir__is_comment(p, i, lim)) {
            i = dir__skip_comment(p, i, lim);
            continue;
        }
        if (sp == 0) {
            if (c == ':' && qcolon && q > 0) {
                q--;
                i++;
                continue;
            }
            if (strchr(stops, c))
                return i;
            if (c == '?')
                q++;
        }
        if (c == '(' || c == '[' || c == '{') {
            if (sp == (int)sizeof stack)
                return dir__fail(p, i, "expressions nested too deeply");
            stack[sp++] = c == '(' ? ')' : c == '[' ? ']' : '}';
        } else if (c == ')' || c == ']' || c == '}') {
            if (sp == 0) {
                if (strchr(stops, ')'))
                    return dir__fail(p, i, "expected ')' before '%c'", c);
                if (strchr(stops, ']'))
                    return dir__fail(p, i, "expected ']' before '%c'", c);
                return dir__fail(p, i, "unexpected '%c'", c);
            }
            if (stack[sp - 1] != c)
                return dir__fail(p, i, "expected '%c' before '%c'", stack[sp - 1], c);
            sp--;
        }
        i++;
    }
    if (sp)
        return dir__fail(p, lim, "expected '%c'", stack[sp - 1]);
    return lim;
}

/* The text of [a, b), trimmed, whitespace runs and comments turned into one
 * space, literals kept verbatim. Never NULL unless out of memory. */
static char *dir__text(DirP *p, int a, int b)
{
    const char *s = p->s;
    char *t = malloc((size_t)(b > a ? b - a : 0) + 1);
    int n = 0, sp = 0, i = a;

    if (!t) {
        dir__fail(p, a, "out of memory");
        return NULL;
    }
    while (i < b) {
        char c = s[i];
        int k;
        if (isspace((unsigned char)c)) {
            sp = 1;
            i++;
            continue;
        }
        if ((k = dir__bsnl(p, i, b)) > 0) {
            sp = 1;
            i += k;
            continue;
        }
        if (dir__is_comment(p, i, b)) {
            sp = 1;
            i = dir__skip_comment(p, i, b);
            continue;
        }
        if (sp && n)
            t[n++] = ' ';
        sp = 0;
        if (c == '"' || c == '\'') {
            int j = i + 1;
            while (j < b && s[j] != c) {
                if (s[j] == '\\' && j + 1 < b)
                    j++;
                j++;
            }
            if (j < b)
                j++;
            memcpy(t + n, s + i, (size_t)(j - i));
            n += j - i;
            i = j;
            continue;
        }
        t[n++] = c;
        i++;
    }
    t[n] = 0;
    return t;
}

/* Whether t is a whole C integer literal (decimal, octal or hex, with an
 * optional u/l suffix); stores its value. */
static int dir__intlit(const char *t, long *v)
{
    char *e;
    unsigned long long x;
    if (!isdigit((unsigned char)t[0]))
        return 0;
    errno = 0;
    x = strtoull(t, &e, 0);
    if (errno || e == t)
        return 0;
    while (*e == 'u' || *e == 'U' || *e == 'l' || *e == 'L')
        e++;
    if (*e || x > (unsigned long long)LONG_MAX)
        return 0;
    *v = (long)x;
    return 1;
}

static int dir__is_ident(const char *t)
{
    if (!dir__idstart(*t))
        return 0;
    while (*t && dir__idchar(*t))
        t++;
    return *t == 0;
}

/* ------------------------------------------------------------------ */
/* Clause names                                                       */
/* ------------------------------------------------------------------ */

static const char *const dir__clause_names[CL_NCLAUSES] = {
    [CL_DEVICE] = "device", [CL_MAP] = "map", [CL_NOWAIT] = "nowait",
    [CL_DEPEND] = "depend", [CL_IF] = "if", [CL_PRIVATE] = "private",
    [CL_FIRSTPRIVATE] = "firstprivate", [CL_LASTPRIVATE] = "lastprivate",
    [CL_SHARED] = "shared", [CL_NUM_TEAMS] = "num_teams",
    [CL_THREAD_LIMIT] = "thread_limit", [CL_NUM_THREADS] = "num_threads",
    [CL_COLLAPSE] = "collapse", [CL_REDUCTION] = "reduction",
    [CL_SCHEDULE] = "schedule", [CL_DIST_SCHEDULE] = "dist_schedule",
    [CL_SIMDLEN] = "simdlen", [CL_SAFELEN] = "safelen",
    [CL_RESOURCES] = "resources", [CL_TO] = "to", [CL_FROM] = "from",
    [CL_DEFAULTMAP] = "defaultmap", [CL_IS_DEVICE_PTR] = "is_device_ptr",
    [CL_LINK] = "link", [CL_DEVICE_TYPE] = "device_type", [CL_INDIRECT] = "indirect",
    [CL_HAS_DEVICE_ADDR] = "has_device_addr", [CL_USE_DEVICE_PTR] = "use_device_ptr",
    [CL_USE_DEVICE_ADDR] = "use_device_addr",
    [CL_ORDER] = "order", [CL_LINEAR] = "linear", [CL_ACCEPTED] = "default",
    [CL_ACC_COPY] = "copy", [CL_ACC_COPYIN] = "copyin",
    [CL_ACC_COPYOUT] = "copyout", [CL_ACC_CREATE] = "create",
    [CL_ACC_PRESENT] = "present", [CL_ACC_NO_CREATE] = "no_create",
    [CL_ACC_DEVICEPTR] = "deviceptr", [CL_ACC_ATTACH] = "attach",
    [CL_ACC_DETACH] = "detach", [CL_ACC_DELETE] = "delete",
    [CL_ACC_HOST] = "host", [CL_ACC_SELF] = "self", [CL_ACC_DEVICE] = "device",
    [CL_ACC_FINALIZE] = "finalize", [CL_ACC_ASYNC] = "async",
    [CL_ACC_WAIT] = "wait", [CL_ACC_IF_PRESENT] = "if_present",
    [CL_ACC_GANG] = "gang", [CL_ACC_WORKER] = "worker", [CL_ACC_VECTOR] = "vector",
    [CL_ACC_SEQ] = "seq", [CL_ACC_INDEPENDENT] = "independent", [CL_ACC_AUTO] = "auto",
    [CL_ACC_TILE] = "tile", [CL_ACC_NUM_WORKERS] = "num_workers",
    [CL_ACC_DEVICE_TYPE] = "device_type", [CL_ACC_DEFAULT] = "default",
    [CL_ACC_DEFAULT_ASYNC] = "default_async", [CL_ACC_DEVICE_NUM] = "device_num",
};

typedef struct DirName {
    const char *name;
    int kind;
} DirName;

static const DirName dir__omp_names[] = {
    {"device", CL_DEVICE}, {"map", CL_MAP}, {"nowait", CL_NOWAIT},
    {"depend", CL_DEPEND}, {"if", CL_IF}, {"private", CL_PRIVATE},
    {"firstprivate", CL_FIRSTPRIVATE}, {"lastprivate", CL_LASTPRIVATE},
    {"shared", CL_SHARED}, {"num_teams", CL_NUM_TEAMS},
    {"thread_limit", CL_THREAD_LIMIT}, {"num_threads", CL_NUM_THREADS},
    {"collapse", CL_COLLAPSE}, {"reduction", CL_REDUCTION}, {"in_reduction", CL_REDUCTION},
    {"schedule", CL_SCHEDULE}, {"dist_schedule", CL_DIST_SCHEDULE},
    {"simdlen", CL_SIMDLEN}, {"safelen", CL_SAFELEN},
    {"resources", CL_RESOURCES}, {"to", CL_TO}, {"enter", CL_TO},
    {"from", CL_FROM}, {"defaultmap", CL_DEFAULTMAP},
    {"is_device_ptr", CL_IS_DEVICE_PTR}, {"link", CL_LINK},
    {"device_type", CL_DEVICE_TYPE}, {"indirect", CL_INDIRECT},
    {"has_device_addr", CL_HAS_DEVICE_ADDR},
    {"use_device_ptr", CL_USE_DEVICE_PTR}, {"use_device_addr", CL_USE_DEVICE_ADDR},
    {"order", CL_ORDER}, {"linear", CL_LINEAR},
    {"default", CL_ACCEPTED}, {"uses_allocators", CL_ACCEPTED}, {"allocate", CL_ACCEPTED},
    {"aligned", CL_ACCEPTED}, {"nontemporal", CL_ACCEPTED}, {"bind", CL_ACCEPTED},
};

static const DirName dir__acc_names[] = {
    {"copy", CL_ACC_COPY}, {"pcopy", CL_ACC_COPY}, {"present_or_copy", CL_ACC_COPY},
    {"copyin", CL_ACC_COPYIN}, {"pcopyin", CL_ACC_COPYIN},
    {"present_or_copyin", CL_ACC_COPYIN},
    {"copyout", CL_ACC_COPYOUT}, {"pcopyout", CL_ACC_COPYOUT},
    {"present_or_copyout", CL_ACC_COPYOUT},
    {"create", CL_ACC_CREATE}, {"pcreate", CL_ACC_CREATE},
    {"present_or_create", CL_ACC_CREATE},
    {"present", CL_ACC_PRESENT}, {"no_create", CL_ACC_NO_CREATE},
    {"deviceptr", CL_ACC_DEVICEPTR}, {"attach", CL_ACC_ATTACH},
    {"detach", CL_ACC_DETACH}, {"delete", CL_ACC_DELETE}, {"host", CL_ACC_HOST},
    {"self", CL_ACC_SELF}, {"device", CL_ACC_DEVICE}, {"finalize", CL_ACC_FINALIZE},
    {"async", CL_ACC_ASYNC}, {"wait", CL_ACC_WAIT}, {"if_present", CL_ACC_IF_PRESENT},
    {"private", CL_PRIVATE}, {"firstprivate", CL_FIRSTPRIVATE}, {"reduction", CL_REDUCTION},
    {"collapse", CL_COLLAPSE}, {"num_gangs", CL_NUM_TEAMS}, {"vector_length", CL_THREAD_LIMIT},
    {"num_workers", CL_ACC_NUM_WORKERS}, {"gang", CL_ACC_GANG}, {"worker", CL_ACC_WORKER},
    {"vector", CL_ACC_VECTOR}, {"seq", CL_ACC_SEQ}, {"independent", CL_ACC_INDEPENDENT},
    {"auto", CL_ACC_AUTO}, {"tile", CL_ACC_TILE}, {"device_type", CL_ACC_DEVICE_TYPE},
    {"dtype", CL_ACC_DEVICE_TYPE}, {"default", CL_ACC_DEFAULT},
    {"if", CL_IF}, {"device_resident", CL_ACC_CREATE}, {"link", CL_LINK},
    {"default_async", CL_ACC_DEFAULT_ASYNC}, {"device_num", CL_ACC_DEVICE_NUM},
    {"use_device", CL_USE_DEVICE_PTR},
};

static int dir__lookup(const DirP *p, int off, int n)
{
    const DirName *t = p->is_acc ? dir__acc_names : dir__omp_names;
    size_t nt = p->is_acc ? sizeof dir__acc_names / sizeof *dir__acc_names
                          : sizeof dir__omp_names / sizeof *dir__omp_names;
    for (size_t i = 0; i < nt; i++)
        if (dir__is(p, off, n, t[i].name))
            return t[i].kind;
    return -1;
}

const char *directive_clause_name(ClauseKind k)
{
    if ((int)k < 0 || k >= CL_NCLAUSES || !dir__clause_names[k])
        return "";
    return dir__clause_names[k];
}

const char *directive_reduction_op(int red)
{
    static const char *const ops[] = {"", "+", "*", "-", "min", "max", "&", "|", "^", "&&", "||"};
    if (red < RED_ADD || red > RED_LOR)
        return "";
    return ops[red];
}

/* ------------------------------------------------------------------ */
/* Building and freeing                                               */
/* ------------------------------------------------------------------ */

static void dir__free_item(DirItem *it)
{
    free(it->base);
    for (int j = 0; j < it->nsubs; j++) {
        free(it->subs[j].lo);
        free(it->subs[j].len);
        free(it->subs[j].stride);
    }
    free(it->subs);
}

static void dir__free_items(DirItem *it, int n)
{
    for (int i = 0; i < n; i++)
        dir__free_item(&it[i]);
    free(it);
}

void directive_remove_item(DirClause *c, int i)
{
    if (!c || i < 0 || i >= c->nitems)
        return;
    dir__free_item(&c->items[i]);
    memmove(&c->items[i], &c->items[i + 1], sizeof *c->items * (size_t)(c->nitems - i - 1));
    c->nitems--;
}

int directive_in_reduction(const DirClause *c)
{
    return c && c->kind == CL_REDUCTION && c->name && !strcmp(c->name, "in_reduction");
}

void directive_free(Directive *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nclauses; i++) {
        DirClause *c = &d->clauses[i];
        free(c->name);
        free(c->arg);
        dir__free_items(c->items, c->nitems);
    }
    free(d->clauses);
    for (int i = 0; i < d->nvariants; i++)
        directive_free(&d->variants[i]);
    free(d->variants);
    memset(d, 0, sizeof *d);
}

const DirClause *directive_find(const Directive *d, ClauseKind k)
{
    if (!d)
        return NULL;
    for (int i = 0; i < d->nclauses; i++)
        if (d->clauses[i].kind == k)
            return &d->clauses[i];
    return NULL;
}

/* Grows *arr (of *n elements of size sz) by one zeroed element. */
static void *dir__grow(DirP *p, void **arr, int *n, size_t sz, int off)
{
    char *a = realloc(*arr, (size_t)(*n + 1) * sz);
    if (!a) {
        dir__fail(p, off, "out of memory");
        return NULL;
    }
    *arr = a;
    memset(a + (size_t)*n * sz, 0, sz);
    return a + (size_t)(*n)++ * sz;
}

static DirClause *dir__add_clause(DirP *p, Directive *d, ClauseKind k, int off)
{
    DirClause *c = dir__grow(p, (void **)&d->clauses, &d->nclauses, sizeof *c, off);
    if (c) {
        c->kind = k;
        c->off = off;
    }
    return c;
}

/* Construct-set text ("teams distribute parallel for simd", "teams loop"). */
static const char *dir__cs_text(unsigned cs, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *word;
    } words[] = {{CS_TEAMS, "teams"}, {CS_DISTRIBUTE, "distribute"}, {CS_PARALLEL_FOR, "parallel for"},
                 {CS_PARALLEL, "parallel"}, {CS_FOR, "for"}, {CS_SIMD, "simd"}, {CS_LOOP, "loop"}};
    buf[0] = 0;
    if (cs & CS_LOOP) /* the words written: what loop means is not */
        cs &= ~(unsigned)(CS_DISTRIBUTE | CS_PARALLEL_FOR);
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (cs & words[i].bit)
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? " " : "", words[i].word);
    return buf;
}

const char *directive_cs_text(unsigned cs, char *buf, int n)
{
    if (!buf || n <= 0)
        return "";
    return dir__cs_text(cs, buf, (size_t)n);
}

/* ------------------------------------------------------------------ */
/* List items and array sections                                      */
/* ------------------------------------------------------------------ */

/* Checks the base of a list item, [a, b): identifiers joined by '.', '->',
 * '*' and parentheses; two identifiers separated only by whitespace mean a
 * missing comma. */
static int dir__check_base(DirP *p, int a, int b)
{
    int prev_word = 0, gap = 0, any = 0, i = a;
    while (i < b) {
        char c = p->s[i];
        int k;
        if (isspace((unsigned char)c)) {
            gap = 1;
            i++;
        } else if ((k = dir__bsnl(p, i, b)) > 0) {
            gap = 1;
            i += k;
        } else if (dir__is_comment(p, i, b)) {
            gap = 1;
            i = dir__skip_comment(p, i, b);
        } else if (dir__idchar(c)) {
            if (prev_word && gap)
                return dir__fail(p, i, "expected ',' before '%.*s'",
                                 DIR__W(dir__word_at(p, i, b) ? dir__word_at(p, i, b) : 1), p->s + i);
            while (i < b && dir__idchar(p->s[i]))
                i++;
            prev_word = any = 1;
            gap = 0;
        } else if (c == '-' && i + 1 < b && p->s[i + 1] == '>') {
            prev_word = gap = 0;
            i += 2;
        } else if (c == '.' || c == '*' || c == '(' || c == ')') {
            prev_word = c == ')';
            gap = 0;
            i++;
        } else {
            return dir__fail(p, i, "expected ',' or ')' before '%c' in a list item", c);
        }
    }
    if (!any)
        return dir__fail(p, a, "expected a list item");
    return 0;
}

/* One subscript: p->s[ob] == '['. Returns the index after the ']'. */
static int dir__sub(DirP *p, DirItem *it, int ob, int b)
{
    int cb, colon, a;
    DirSub *sub;

    cb = dir__scan(p, ob + 1, b, "]", 0);
    if (cb < 0)
        return -1;
    if (cb >= b)
        return dir__fail(p, b, "expected ']'");
    sub = dir__grow(p, (void **)&it->subs, &it->nsubs, sizeof *sub, ob);
    if (!sub)
        return -1;
    a = ob + 1;
    colon = dir__scan(p, a, cb, ":", 1);
    if (colon < 0)
        return -1;
    if (colon >= cb) {
        if (!(sub->lo = dir__text(p, a, cb)))
            return -1;
        if (!sub->lo[0])
            return dir__fail(p, ob, "expected an expression in '[]'");
        return cb + 1;
    }
    sub->is_section = 1;
    const int rbr = cb;
    int c2 = dir__scan(p, colon + 1, cb, ":", 1);
    if (c2 < 0)
        return -1;
    if (c2 < cb) { /* a stride (OpenMP 5.0) */
        if (!(sub->stride = dir__text(p, c2 + 1, cb)))
            return -1;
        if (!sub->stride[0])
            return dir__fail(p, c2, "expected a stride after ':'");
        cb = c2; /* the length ends at the second ':' */
    }
    if (!(sub->lo = dir__text(p, a, colon)) || !(sub->len = dir__text(p, colon + 1, cb)))
        return -1;
    if (!sub->lo[0]) {
        free(sub->lo);
        sub->lo = NULL;
    }
    if (!sub->len[0]) {
        free(sub->len);
        sub->len = NULL;
    }
    return rbr + 1;
}

/* A comma-separated list of items in [a, b) (the inside of a clause). */
static int dir__list(DirP *p, DirClause *c, int a, int b)
{
    int i = a;
    for (;;) {
        DirItem *it;
        int e;

        i = dir__skip_ws(p, i, b);
        if (i >= b || p->s[i] == ',')
            return dir__fail(p, i, "expected a list item");
        e = dir__scan(p, i, b, ",[", 0);
        if (e < 0 || dir__check_base(p, i, e) < 0)
            return -1;
        it = dir__grow(p, (void **)&c->items, &c->nitems, sizeof *it, i);
        if (!it)
            return -1;
        it->off = i;
        if (!(it->base = dir__text(p, i, e)))
            return -1;
        it->is_ident = dir__is_ident(it->base);
        while (e < b && p->s[e] == '[') {
            e = dir__sub(p, it, e, b);
            if (e < 0)
                return -1;
            e = dir__skip_ws(p, e, b);
        }
        if (e < b && p->s[e] != ',')
            return dir__fail(p, e, "expected ',' or ')' after a list item");
        if (e >= b)
            return 0;
        i = e + 1;
    }
}

/* ------------------------------------------------------------------ */
/* Clauses                                                            */
/* ------------------------------------------------------------------ */

/* Expects '(' after a clause name, finds its ')': the inside is [*a, *b). */
static int dir__parens(DirP *p, const char *what, int *a, int *b)
{
    int e;
    dir__ws(p);
    if (p->pos >= p->lim || p->s[p->pos] != '(')
        return dir__fail(p, p->pos, "expected '(' after '%s'", what);
    e = dir__scan(p, p->pos + 1, p->lim, ")", 0);
    if (e < 0)
        return -1;
    if (e >= p->lim)
        return dir__fail(p, p->lim, "expected ')'");
    *a = p->pos + 1;
    *b = e;
    p->pos = e + 1;
    return 0;
}

/* c->arg = the text of [a, b), which must not be empty. */
static int dir__arg(DirP *p, DirClause *c, int a, int b)
{
    if (!(c->arg = dir__text(p, a, b)))
        return -1;
    if (!c->arg[0])
        return dir__fail(p, dir__skip_ws(p, a, b), "expected an expression in '%s'",
                         directive_clause_name(c->kind));
    return 0;
}

/* A word of a modifier prefix (before a ':'). */
typedef struct DirWord {
    int off, n;
} DirWord;

/* Splits [a, b) into words separated by whitespace or commas; anything else
 * fails with `what`. Returns the number of words (at most max), -1 on error. */
static int dir__words(DirP *p, int a, int b, DirWord *w, int max, const char *what)
{
    int n = 0, i = a;
    for (;;) {
        int k;
        i = dir__skip_ws(p, i, b);
        if (i < b && p->s[i] == ',') {
            i++;
            continue;
        }
        if (i >= b)
            return n;
        k = dir__word_at(p, i, b);
        if (!k || n == max)
            return dir__fail(p, i, "%s", what);
        w[n].off = i;
        w[n].n = k;
        n++;
        i += k;
    }
}

static int dir__cl_map(DirP *p, Directive *d, DirClause *c, int a, int b)
{
    static const char *const types[] = {"tofrom", "to", "from", "alloc", "release", "delete"};
    int colon = dir__scan(p, a, b, ":", 1), explicit_type = 0, toff = a;
    DirWord w[8] = {{0, 0}};

    if (colon < 0)
        return -1;
    c->modifier = MAPT_TOFROM;
    if (colon < b) {
        /* mapper(id) (OpenMP 5.0): the name, in c->name */
        int m = dir__skip_ws(p, a, colon), mn = dir__word_at(p, m, colon), mods = a;
        if (mn && dir__is(p, m, mn, "mapper")) {
            int o = dir__skip_ws(p, m + mn, colon), cl, ia, in;
            if (o >= colon || p->s[o] != '(')
                return dir__fail(p, o, "expected '(' after 'mapper'");
            cl = dir__scan(p, o + 1, colon, ")", 0);
            if (cl < 0)
                return -1;
            if (cl >= colon)
                return dir__fail(p, colon, "expected ')' after the mapper's name");
            ia = dir__skip_ws(p, o + 1, cl);
            in = dir__word_at(p, ia, cl);
            if (!in || dir__skip_ws(p, ia + in, cl) != cl)
                return dir__fail(p, ia, "expected a mapper name (an identifier or 'default')");
            if (!(c->name = dir__text(p, ia, ia + in)))
                return -1;
            mods = cl + 1;
            explicit_type = -1; /* a map type may follow, or not */
        }
        int n = dir__words(p, mods, colon, w, 8, "expected a map type before ':'");
        if (n < 0)
            return -1;
        for (int i = 0; i < n; i++) {
            int t = -1;
            if (explicit_type > 0)
                return dir__fail(p, w[i].off, "unexpected '%.*s' after the map type",
                                 DIR__W(w[i].n), p->s + w[i].off);
            if (dir__is(p, w[i].off, w[i].n, "always")) {
                if (c->always)
                    return dir__fail(p, w[i].off, "duplicate map modifier 'always'");
                c->always = 1;
                continue;
            }
            if (dir__is(p, w[i].off, w[i].n, "close"))
                continue;
            for (int j = 0; j < 6; j++)
                if (dir__is(p, w[i].off, w[i].n, types[j]))
                    t = j;
            if (t < 0)
                return dir__fail(p, w[i].off, "unknown map type '%.*s'", DIR__W(w[i].n),
                                 p->s + w[i].off);
            c->modifier = t;
            explicit_type = 1;
            toff = w[i].off;
        }
        if (!explicit_type)
            return dir__fail(p, colon, "expected a map type before ':'");
        if (explicit_type < 0)
            explicit_type = 0;
        a = colon + 1;
    }
    switch (d->kind) {
    case DIR_TARGET_ENTER_DATA:
        if (!explicit_type)
            c->modifier = MAPT_TO;
        if (c->modifier != MAPT_TO && c->modifier != MAPT_ALLOC)
            return dir__fail(p, toff, "map type '%s' not allowed on 'target enter data' (use to or alloc)",
                             types[c->modifier]);
        break;
    case DIR_TARGET_EXIT_DATA:
        if (!explicit_type)
            c->modifier = MAPT_FROM;
        if (c->modifier != MAPT_FROM && c->modifier != MAPT_RELEASE && c->modifier != MAPT_DELETE)
            return dir__fail(p, toff,
                             "map type '%s' not allowed on 'target exit data' (use from, release or delete)",
                             types[c->modifier]);
        break;
    default:
        if (c->modifier == MAPT_RELEASE || c->modifier == MAPT_DELETE)
            return dir__fail(p, toff, "map type '%s' is only allowed on 'target exit data'",
                             types[c->modifier]);
        break;
    }
    return dir__list(p, c, a, b);
}

static int dir__cl_depend(DirP *p, DirClause *c, int a, int b)
{
    int colon = dir__scan(p, a, b, ":", 1), n;
    DirWord w[2] = {{0, 0}, {0, 0}};

    if (colon < 0)
        return -1;
    if (colon >= b)
        return dir__fail(p, dir__skip_ws(p, a, b), "expected a depend type (in, out or inout) and ':'");
    n = dir__words(p, a, colon, w, 1, "expected a depend type (in, out or inout)");
    if (n < 0)
        return -1;
    if (n == 0)
        return dir__fail(p, colon, "expected a depend type (in, out or inout) before ':'");
    if (dir__is(p, w[0].off, w[0].n, "in"))
        c->modifier = DEP_IN;
    else if (dir__is(p, w[0].off, w[0].n, "out"))
        c->modifier = DEP_OUT;
    else if (dir__is(p, w[0].off, w[0].n, "inout"))
        c->modifier = DEP_INOUT;
    else
        return dir__fail(p, w[0].off, "unknown depend type '%.*s' (expected in, out or inout)",
                         DIR__W(w[0].n), p->s + w[0].off);
    return dir__list(p, c, colon + 1, b);
}

static int dir__cl_if(DirP *p, DirClause *c, int a, int b)
{
    static const char *const mods[] = {"target", "data", "enter", "exit", "update", "parallel",
                                       "simd", "teams", "task", "taskloop", "cancel"};
    int colon = p->is_acc ? b : dir__scan(p, a, b, ":", 1);
    if (colon < 0)
        return -1;
    if (colon < b) {
        DirWord w[4] = {{0, 0}};
        int i = dir__skip_ws(p, a, colon), allwords = 1, n;
        /* only a prefix made of words is a directive-name modifier */
        for (int j = i; j < colon; j++)
            if (!dir__idchar(p->s[j]) && !isspace((unsigned char)p->s[j]))
                allwords = 0;
        if (allwords && i < colon) {
            n = dir__words(p, a, colon, w, 4, "unknown directive-name modifier in 'if'");
            if (n < 0)
                return -1;
            for (int k = 0; k < n; k++) {
                int ok = 0;
                for (size_t m = 0; m < sizeof mods / sizeof *mods; m++)
                    ok |= dir__is(p, w[k].off, w[k].n, mods[m]);
                if (!ok)
                    return dir__fail(p, w[k].off, "unknown directive-name modifier '%.*s' in 'if'",
                                     DIR__W(w[k].n), p->s + w[k].off);
            }
            if (!(c->name = dir__text(p, a, colon)))
                return -1;
            a = colon + 1;
        }
    }
    return dir__arg(p, c, a, b);
}

/* device(any|host|smp|nvidia|cuda) or device([device_num:] expr): any other
 * word is an expression (`int gpu = ...; device(gpu)` is OpenMP; an
 * undeclared name is the C compiler's error). */
static int dir__cl_device(DirP *p, DirClause *c, int a, int b)
{
    int colon = dir__scan(p, a, b, ":", 1);
    long v;

    if (colon < 0)
        return -1;
    if (colon < b) {
        int i = dir__skip_ws(p, a, colon), n = dir__word_at(p, i, colon);
        if (dir__is(p, i, n, "device_num") && dir__skip_ws(p, i + n, colon) == colon)
            a = colon + 1;
        else if (dir__is(p, i, n, "ancestor"))
            return dir__fail(p, i, "device modifier 'ancestor' is not supported");
    }
    if (!(c->arg = dir__text(p, a, b)))
        return -1;
    if (!c->arg[0])
        return dir__fail(p, dir__skip_ws(p, a, b), "expected a device kind (any, host, nvidia) or number in 'device'");
    if (dir__ieq(c->arg, "any"))
        c->modifier = DEVSEL_ANY;
    else if (dir__ieq(c->arg, "host") || dir__ieq(c->arg, "smp"))
        c->modifier = DEVSEL_HOST;
    else if (dir__ieq(c->arg, "nvidia") || dir__ieq(c->arg, "cuda"))
        c->modifier = DEVSEL_NVIDIA;
    else {
        c->modifier = DEVSEL_NUM;
        if (dir__intlit(c->arg, &v))
            c->ival = v;
        return 0;
    }
    /* a keyword: no expression text */
    free(c->arg);
    c->arg = NULL;
    return 0;
}

static int dir__cl_reduction(DirP *p, DirClause *c, int a, int b)
{
    static const char *const ops[] = {"", "+", "*", "-", "min", "max", "&", "|", "^", "&&", "||"};
    int colon = dir__scan(p, a, b, ":", 1), i;
    char *op;

    if (colon < 0)
        return -1;
    i = dir__skip_ws(p, a, b);
    if (colon >= b)
        return dir__fail(p, i, "expected a reduction operator and ':' in 'reduction'");
    if (!(op = dir__text(p, a, colon)))
        return -1;
    /* modifiers: task (the reduction also covers the tasks inside that say
     * in_reduction; kept for the host versions) and default; inscan needs scan */
    const char *o = op;
    if (!strncmp(o, "task", 4) || !strncmp(o, "default", 7)) {
        const char *q = o + (o[0] == 't' ? 4 : 7);
        while (*q == ' ')
            q++;
        if (*q == ',' && o[0] == 't' && !c->name && !(c->name = strdup("task"))) {
            free(op);
            return -1;
        }
        if (*q == ',') {
            q++;
            while (*q == ' ')
                q++;
            o = q;
        }
    } else if (!strncmp(o, "inscan", 6) && (o[6] == ',' || o[6] == ' ')) {
        free(op);
        return dir__fail(p, i, "'reduction(inscan, ...)' (with scan) is not supported");
    }
    for (int k = RED_ADD; k <= RED_LOR; k++)
        if (strcmp(o, ops[k]) == 0)
            c->modifier = k;
    if (!c->modifier) {
        int r = op[0] ? dir__fail(p, i, "unknown reduction operator '%.48s'", op)
                      : dir__fail(p, i, "expected a reduction operator before ':'");
        free(op);
        return r;
    }
    free(op);
    return dir__list(p, c, colon + 1, b);
}

static int dir__cl_collapse(DirP *p, DirClause *c, int a, int b)
{
    long v = 0;
    if (p->is_acc) { /* OpenACC 3.3: collapse(force: n) */
        int i = dir__skip_ws(p, a, b), n = dir__word_at(p, i, b);
        int colon = dir__skip_ws(p, i + n, b);
        if (dir__is(p, i, n, "force") && colon < b && p->s[colon] == ':')
            a = colon + 1;
    }
    if (dir__arg(p, c, a, b) < 0)
        return -1;
    if (!dir__intlit(c->arg, &v) || v <= 0)
        return dir__fail(p, dir__skip_ws(p, a, b),
                         "collapse expects a positive integer constant, not '%.48s'", c->arg);
    c->ival = v;
    return 0;
}

static int dir__cl_resources(DirP *p, DirClause *c, int a, int b)
{
    long v;
    int i = dir__skip_ws(p, a, b), neg = 0;
    const char *t;
    if (!(c->arg = dir__text(p, a, b)))
        return -1;
    if (!c->arg[0])
        return dir__fail(p, i, "expected a number of tokens (1 to 100) or 'auto' in 'resources'");
    if (dir__ieq(c->arg, "auto")) {
        c->ival = -2;
        return 0;
    }
    t = c->arg;
    if (*t == '-') { /* a negative literal is out of range too */
        neg = 1;
        t += t[1] == ' ' ? 2 : 1;
    }
    if (dir__intlit(t, &v)) {
        if (neg)
            v = -v;
        if (v < 1 || v > 100)
            return dir__fail(p, i, "resources(%s) is outside 1..100 (a device has 100 tokens)",
                             c->arg);
        c->ival = v;
        return 0;
    }
    c->ival = -1; /* an expression, evaluated at run time */
    return 0;
}

/* Clause kinds that are list clauses. */
static int dir__is_list_kind(ClauseKind k)
{
    switch (k) {
    case CL_PRIVATE: case CL_FIRSTPRIVATE: case CL_LASTPRIVATE: case CL_SHARED:
    case CL_TO: case CL_FROM: case CL_IS_DEVICE_PTR: case CL_LINK: case CL_HAS_DEVICE_ADDR:
    case CL_USE_DEVICE_PTR: case CL_USE_DEVICE_ADDR:
    case CL_ACC_COPY: case CL_ACC_COPYIN: case CL_ACC_COPYOUT: case CL_ACC_CREATE:
    case CL_ACC_PRESENT: case CL_ACC_NO_CREATE: case CL_ACC_DEVICEPTR: case CL_ACC_ATTACH:
    case CL_ACC_DETACH: case CL_ACC_DELETE: case CL_ACC_HOST: case CL_ACC_SELF:
    case CL_ACC_DEVICE:
        return 1;
    default:
        return 0;
    }
}

/* device_type(host|nohost|any) of declare target. */
static int dir__cl_device_type(DirP *p, DirClause *c, int a, int b)
{
    int i = dir__skip_ws(p, a, b), n = dir__word_at(p, i, b);
    if (dir__is(p, i, n, "any"))
        c->modifier = DEVTYPE_ANY;
    else if (dir__is(p, i, n, "host"))
        c->modifier = DEVTYPE_HOST;
    else if (dir__is(p, i, n, "nohost"))
        c->modifier = DEVTYPE_NOHOST;
    else
        return dir__fail(p, i, "expected host, nohost or any in 'device_type'");
    if (dir__skip_ws(p, i + n, b) != b)
        return dir__fail(p, dir__skip_ws(p, i + n, b), "unexpected text in 'device_type'");
    return 0;
}

/* linear(list[: step]): OpenMP 4.5's val(list) / ref(list) / uval(list)
 * modifiers and 5.2's step(s), val after the colon are kept in arg. */
static int dir__cl_linear(DirP *p, DirClause *c, int a, int b)
{
    if (dir__arg(p, c, a, b) < 0)
        return -1;
    int colon = dir__scan(p, a, b, ":", 1);
    if (colon < 0)
        return -1;
    int la = dir__skip_ws(p, a, colon), lb = colon;
    int n = dir__word_at(p, la, lb);
    if (n && (dir__is(p, la, n, "val") || dir__is(p, la, n, "ref") || dir__is(p, la, n, "uval")) &&
        dir__skip_ws(p, la + n, lb) < lb && p->s[dir__skip_ws(p, la + n, lb)] == '(') {
        int o = dir__skip_ws(p, la + n, lb), cl = dir__scan(p, o + 1, lb, ")", 0);
        if (cl < 0)
            return -1;
        la = o + 1;
        lb = cl;
    }
    return dir__list(p, c, la, lb);
}

char *directive_linear_step(const DirClause *c)
{
    const char *a = c && c->arg ? c->arg : "";
    /* the list's colon: the first ':' outside parentheses and brackets */
    int depth = 0;
    const char *colon = NULL;
    for (const char *q = a; *q && !colon; q++) {
        if (*q == '(' || *q == '[')
            depth++;
        else if ((*q == ')' || *q == ']') && depth > 0)
            depth--;
        else if (*q == ':' && !depth)
            colon = q;
    }
    if (!colon)
        return strdup("1");
    /* modifiers separated by top-level commas: val, ref, uval, step(s), or the step */
    const char *p = colon + 1, *step = NULL;
    size_t step_len = 0;
    while (*p) {
        const char *e = p;
        depth = 0;
        while (*e && (depth || *e != ',')) {
            if (*e == '(' || *e == '[')
                depth++;
            else if ((*e == ')' || *e == ']') && depth > 0)
                depth--;
            e++;
        }
        const char *s = p, *t = e;
        while (s < t && (*s == ' ' || *s == '\t'))
            s++;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        size_t n = (size_t)(t - s);
        int is_mod = (n == 3 && (!strncmp(s, "val", 3) || !strncmp(s, "ref", 3))) || (n == 4 && !strncmp(s, "uval", 4));
        if (n > 5 && !strncmp(s, "step", 4)) {
            const char *o = s + 4;
            while (o < t && (*o == ' ' || *o == '\t'))
                o++;
            if (o < t && *o == '(' && t[-1] == ')') {
                step = o + 1;
                step_len = (size_t)(t - 1 - step);
                is_mod = 1;
            }
        }
        if (!is_mod && n) {
            step = s;
            step_len = n;
        }
        p = *e ? e + 1 : e;
    }
    if (!step || !step_len)
        return strdup("1");
    char *r = malloc(step_len + 1);
    if (!r)
        return NULL;
    memcpy(r, step, step_len);
    r[step_len] = 0;
    return r;
}

/* A list clause; acc copyin(readonly: ...), copyout/create(zero: ...) and
 * lastprivate(conditional: ...) set modifier = 1. */
static int dir__cl_list(DirP *p, DirClause *c, int a, int b, const char *name)
{
    int colon = dir__scan(p, a, b, ":", 1);
    if (colon < 0)
        return -1;
    if (colon < b) {
        int i = dir__skip_ws(p, a, colon), n = dir__word_at(p, i, colon);
        const char *want = c->kind == CL_ACC_COPYIN ? "readonly"
                         : (c->kind == CL_ACC_COPYOUT || c->kind == CL_ACC_CREATE) ? "zero"
                         : c->kind == CL_LASTPRIVATE ? "conditional" : NULL;
        if (!want || !n || dir__skip_ws(p, i + n, colon) != colon)
            return dir__fail(p, colon, "expected ',' or ')' before ':' in '%s'", name);
        if (!dir__is(p, i, n, want))
            return dir__fail(p, i, "unknown modifier '%.*s' in '%s'", DIR__W(n), p->s + i, name);
        c->modifier = 1;
        a = colon + 1;
    }
    return dir__list(p, c, a, b);
}

/* Parses one clause whose name [off, off+n) is already read (kind k). */
static int dir__clause(DirP *p, Directive *d, ClauseKind k, int off, int n)
{
    char name[64];
    DirClause *c;
    int a, b;
    long v;

    snprintf(name, sizeof name, "%.*s", n, p->s + off);
    c = dir__add_clause(p, d, k, off);
    if (!c)
        return -1;
    switch (k) {
    case CL_NOWAIT:
    case CL_ACC_FINALIZE:
    case CL_ACC_IF_PRESENT:
    case CL_ACC_SEQ:
    case CL_ACC_INDEPENDENT:
    case CL_ACC_AUTO:
        dir__ws(p);
        if (p->pos < p->lim && p->s[p->pos] == '(')
            return dir__fail(p, p->pos, "clause '%s' takes no argument", name);
        return 0;
    case CL_ACC_SELF: /* on a compute construct: self[(cond)], run on the host when cond holds */
        if (d->kind != DIR_TARGET)
            break;
        /* fall through */
    case CL_ACC_ASYNC:
    case CL_ACC_WAIT:
    case CL_INDIRECT:
    case CL_ACC_GANG:
    case CL_ACC_WORKER:
    case CL_ACC_VECTOR:
        dir__ws(p);
        if (p->pos >= p->lim || p->s[p->pos] != '(')
            return 0;
        if (dir__parens(p, name, &a, &b) < 0)
            return -1;
        return dir__arg(p, c, a, b);
    default:
        break;
    }
    if (dir__parens(p, name, &a, &b) < 0)
        return -1;
    switch (k) {
    case CL_DEVICE:
        return dir__cl_device(p, c, a, b);
    case CL_DEVICE_TYPE:
        return dir__cl_device_type(p, c, a, b);
    case CL_MAP:
        return dir__cl_map(p, d, c, a, b);
    case CL_DEPEND:
        return dir__cl_depend(p, c, a, b);
    case CL_IF:
        return dir__cl_if(p, c, a, b);
    case CL_REDUCTION:
        if (dir__cl_reduction(p, c, a, b) < 0)
            return -1;
        if (dir__is(p, c->off, dir__word_at(p, c->off, p->lim), "in_reduction")) {
            /* target in_reduction(op: list) (OpenMP 5.0): a reduction of the
             * region into the enclosing task reduction's instance (name says so) */
            if (d->kind != DIR_TARGET || d->acc || c->name)
                return dir__fail(p, c->off, "'in_reduction' is supported only on a 'target' directive, without modifiers");
            if (!(c->name = strdup("in_reduction")))
                return -1;
        }
        return 0;
    case CL_COLLAPSE:
        return dir__cl_collapse(p, c, a, b);
    case CL_RESOURCES:
        return dir__cl_resources(p, c, a, b);
    case CL_NUM_TEAMS: case CL_THREAD_LIMIT: case CL_NUM_THREADS:
    case CL_SIMDLEN: case CL_SAFELEN:
        if (dir__arg(p, c, a, b) < 0)
            return -1;
        if (dir__intlit(c->arg, &v))
            c->ival = v;
        return 0;
    case CL_SCHEDULE: case CL_DIST_SCHEDULE: case CL_DEFAULTMAP:
    case CL_ACC_TILE: case CL_ACC_NUM_WORKERS: case CL_ACC_DEVICE_TYPE:
    case CL_ACC_DEFAULT_ASYNC: case CL_ACC_DEVICE_NUM:
        return dir__arg(p, c, a, b);
    case CL_LINEAR:
        return dir__cl_linear(p, c, a, b);
    case CL_ACC_DEFAULT:
        if (dir__arg(p, c, a, b) < 0)
            return -1;
        if (strcmp(c->arg, "none") && strcmp(c->arg, "present"))
            return dir__fail(p, dir__skip_ws(p, a, b), "expected none or present in 'default'");
        return 0;
    case CL_ACCEPTED: {
        /* no effect on what macc builds: default data-sharing (macc's implicit
         * rules apply), allocators (placement only; predefined allocators
         * exist everywhere), alignment and non-temporal hints */
        if (!(c->name = dir__text(p, c->off, c->off + dir__word_at(p, c->off, p->lim))))
            return -1;
        if (dir__arg(p, c, a, b) < 0)
            return -1;
        if (!strcmp(c->name, "uses_allocators") && strchr(c->arg, '('))
            return dir__fail(p, a, "'uses_allocators' with traits (a user-defined allocator) is not supported");
        if (!strcmp(c->name, "bind") && !strcmp(c->arg, "thread") && !(d->kind == DIR_LOOP && d->cs == CS_LOOP))
            return dir__fail(p, a, "'bind(thread)' is only allowed on a 'loop' directive of its own");
        if (!strcmp(c->name, "bind") && strcmp(c->arg, "teams") && strcmp(c->arg, "parallel") && strcmp(c->arg, "thread"))
            return dir__fail(p, a, "expected teams, parallel or thread in 'bind'");
        if (!strcmp(c->name, "default") && strcmp(c->arg, "shared") && strcmp(c->arg, "none") &&
            strcmp(c->arg, "firstprivate") && strcmp(c->arg, "private"))
            return dir__fail(p, a, "expected shared, none, firstprivate or private in 'default'");
        return 0;
    }
    case CL_ORDER: {
        /* [reproducible: | unconstrained:] concurrent */
        int colon = dir__scan(p, a, b, ":", 0), i = a, k;
        if (colon < 0)
            return -1;
        if (colon < b) {
            i = dir__skip_ws(p, a, colon);
            k = dir__word_at(p, i, colon);
            if (!(dir__is(p, i, k, "reproducible") || dir__is(p, i, k, "unconstrained")) ||
                dir__skip_ws(p, i + k, colon) != colon)
                return dir__fail(p, i, "unknown order modifier (expected reproducible or unconstrained)");
            i = colon + 1;
        }
        i = dir__skip_ws(p, i, b);
        k = dir__word_at(p, i, b);
        if (!dir__is(p, i, k, "concurrent") || dir__skip_ws(p, i + k, b) != b)
            return dir__fail(p, i, "expected 'concurrent' in 'order'");
        return dir__arg(p, c, a, b);
    }
    default:
        if (dir__is_list_kind(k))
            return dir__cl_list(p, c, a, b, name);
        return dir__fail(p, off, "internal error: clause '%s' has no parser", name);
    }
}

/* ------------------------------------------------------------------ */
/* Construct-sets and clause lists                                    */
/* ------------------------------------------------------------------ */

static int dir__is_cs_word(const DirP *p, int i, int n)
{
    return dir__is(p, i, n, "teams") || dir__is(p, i, n, "distribute") ||
           dir__is(p, i, n, "parallel") || dir__is(p, i, n, "simd") || dir__is(p, i, n, "loop");
}

/* construct-set := teams [distribute [parallel for] [simd] | loop]
 *                | distribute [parallel for] [simd]
 *                | parallel [for [simd] | loop]
 *                | for [simd]                          (bare directives only)
 *                | simd | loop
 * `loop` also sets what it means: distribute parallel for after teams,
 * parallel for elsewhere; on a bare directive, `loop` alone stays CS_LOOP. */
static int dir__cs(DirP *p, unsigned *cs, int bare)
{
    *cs = 0;
    if (dir__accept(p, "teams")) {
        *cs |= CS_TEAMS;
        if (dir__peek(p, "parallel") || dir__peek(p, "simd") || dir__peek(p, "for"))
            return dir__fail(p, p->pos, "expected 'distribute' or 'loop' after 'teams'");
        if (dir__accept(p, "loop")) {
            *cs |= CS_LOOP | CS_DISTRIBUTE | CS_PARALLEL_FOR;
            return 0;
        }
    }
    if (dir__accept(p, "distribute"))
        *cs |= CS_DISTRIBUTE;
    if (dir__accept(p, "parallel")) {
        if (dir__accept(p, "loop")) {
            if (*cs & CS_DISTRIBUTE)
                return dir__fail(p, p->pos - 4, "expected 'for' after 'parallel'");
            *cs |= CS_PARALLEL | CS_LOOP | CS_PARALLEL_FOR;
            return 0;
        }
        if (dir__accept(p, "for"))
            *cs |= CS_PARALLEL_FOR;
        else if (*cs & CS_DISTRIBUTE)
            return dir__fail(p, p->pos, "expected 'for' after 'parallel'");
        else if (dir__peek(p, "simd") || dir__peek(p, "teams") || dir__peek(p, "distribute"))
            return dir__fail(p, p->pos, "expected 'for' or 'loop' after 'parallel'");
        else
            *cs |= CS_PARALLEL;
    } else if (*cs == 0 && bare && dir__accept(p, "for")) {
        *cs |= CS_FOR;
    }
    if (!(*cs & CS_PARALLEL) && dir__accept(p, "simd"))
        *cs |= CS_SIMD;
    if (*cs == 0 && dir__accept(p, "loop"))
        *cs |= bare ? CS_LOOP : CS_LOOP | CS_PARALLEL_FOR;
    return 0;
}

enum { DIR__CS_NO = 0, DIR__CS_MISPLACED, DIR__CS_LATE };

/* clause-list := { [','] clause }. cs_mode: whether construct-set words may
 * still come (the paper writes `target device(any) distribute parallel for`). */
static int dir__clauses(DirP *p, Directive *d, uint64_t allowed, const char *dname, int cs_mode)
{
    for (;;) {
        int off, n, k;
        dir__ws(p);
        if (p->pos >= p->lim)
            return 0;
        if (p->s[p->pos] == ',' && d->nclauses > 0) {
            p->pos++;
            dir__ws(p);
            if (p->pos >= p->lim)
                return dir__fail(p, p->pos, "expected a clause after ','");
        }
        off = p->pos;
        n = dir__word_at(p, off, p->lim);
        if (!n)
            return dir__fail(p, off, "expected a clause on '%s'", dname);
        if (cs_mode != DIR__CS_NO && dir__is_cs_word(p, off, n)) {
            if (cs_mode == DIR__CS_LATE && d->cs == 0) {
                if (dir__cs(p, &d->cs, 0) < 0)
                    return -1;
                continue;
            }
            return dir__fail(p, off, "unexpected '%.*s': the construct-set of '%s' must be written in one piece",
                             n, p->s + off, dname);
        }
        k = dir__lookup(p, off, n);
        if (k == CL_TO && d->kind != DIR_DECLARE_TARGET && dir__is(p, off, n, "enter"))
            k = -1;
        if (k < 0)
            return dir__fail(p, off, "unknown clause '%.*s' on '%s'", DIR__W(n), p->s + off, dname);
        if (!(allowed & DIR__BIT(k)))
            return dir__fail(p, off, "clause '%.*s' not allowed on '%s'", n, p->s + off, dname);
        p->pos = off + n;
        /* RoseACC's dimensions (PolyBench-ACC): num_gangs[1](e), gang[0],
         * worker[1]: a loop's gang/worker/vector is what it says, and the
         * launch takes dimension 0's num_gangs/num_workers/vector_length */
        int dim = 0;
        if (d->is_acc && p->pos < p->lim && p->s[p->pos] == '[' &&
            (k == CL_ACC_GANG || k == CL_ACC_WORKER || k == CL_ACC_VECTOR || k == CL_NUM_TEAMS ||
             k == CL_ACC_NUM_WORKERS || k == CL_THREAD_LIMIT)) {
            int q = p->pos + 1;
            while (q < p->lim && p->s[q] >= '0' && p->s[q] <= '9')
                dim = dim * 10 + (p->s[q++] - '0');
            if (q >= p->lim || p->s[q] != ']' || q == p->pos + 1)
                return dir__fail(p, p->pos, "expected a dimension, '[0]', '[1]' or '[2]', after '%.*s'", n, p->s + off);
            p->pos = q + 1;
        }
        if (dir__clause(p, d, (ClauseKind)k, off, n) < 0)
            return -1;
        if (dim > 0 && k != CL_ACC_GANG && k != CL_ACC_WORKER && k != CL_ACC_VECTOR) {
            DirClause *c = &d->clauses[--d->nclauses];
            free(c->name);
            free(c->arg);
            dir__free_items(c->items, c->nitems);
        }
    }
}

/* Construct-set bits a clause needs (0: none). */
static unsigned dir__needs(ClauseKind k, DirKind dk)
{
    switch (k) {
    case CL_NUM_TEAMS:
        return CS_TEAMS;
    case CL_THREAD_LIMIT:
        return dk == DIR_TARGET ? 0 : CS_TEAMS;
    case CL_NUM_THREADS:
        return CS_PARALLEL_FOR | CS_PARALLEL;
    case CL_SCHEDULE:
        return CS_PARALLEL_FOR | CS_FOR;
    case CL_COLLAPSE:
    case CL_LASTPRIVATE:
    case CL_ORDER:
        return CS_LOOPS;
    case CL_LINEAR:
        return CS_PARALLEL_FOR | CS_FOR | CS_SIMD;
    case CL_REDUCTION:
        return CS_TEAMS | CS_PARALLEL_FOR | CS_SIMD | CS_PARALLEL | CS_FOR | CS_LOOP;
    case CL_DIST_SCHEDULE:
        return CS_DISTRIBUTE;
    case CL_SIMDLEN:
    case CL_SAFELEN:
        return CS_SIMD;
    case CL_SHARED:
        return dk == DIR_TARGET ? 0 : CS_TEAMS | CS_PARALLEL_FOR | CS_PARALLEL;
    case CL_FIRSTPRIVATE:
        return dk == DIR_TARGET ? 0 : CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_PARALLEL | CS_FOR;
    case CL_IF:
        return dk == DIR_LOOP ? CS_PARALLEL_FOR | CS_SIMD | CS_PARALLEL : 0;
    case CL_NOWAIT:
        return dk == DIR_LOOP ? CS_FOR : 0;
    default:
        return 0;
    }
}

static int dir__unique(ClauseKind k)
{
    switch (k) {
    case CL_DEVICE: case CL_NOWAIT: case CL_IF: case CL_NUM_TEAMS: case CL_THREAD_LIMIT:
    case CL_NUM_THREADS: case CL_COLLAPSE: case CL_SCHEDULE: case CL_DIST_SCHEDULE:
    case CL_SIMDLEN: case CL_SAFELEN: case CL_RESOURCES: case CL_ACC_FINALIZE:
    case CL_ACC_ASYNC: case CL_ACC_IF_PRESENT: case CL_ORDER: case CL_ACC_DEFAULT:
    case CL_ACC_SEQ: case CL_ACC_INDEPENDENT: case CL_ACC_AUTO:
    case CL_DEVICE_TYPE: case CL_INDIRECT: case CL_ACC_DEFAULT_ASYNC: case CL_ACC_DEVICE_NUM:
        return 1;
    default:
        return 0;
    }
}

int directive_clause_unique(ClauseKind k)
{
    return dir__unique(k);
}

/* Checks after the clause list: duplicates, and clauses that need a part of
 * the construct-set (skipped for an if_device/variant without construct-set,
 * whose clauses refine the target line's). */
static int dir__check(DirP *p, const Directive *d, const char *dname)
{
    char csbuf[64];
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        unsigned nb;
        if (dir__unique(c->kind))
            for (int j = i - 1; j >= 0; j--) {
                const DirClause *o = &d->clauses[j];
                if (o->kind == CL_ACC_DEVICE_TYPE)
                    break; /* OpenACC: each device_type section has its own */
                if (o->kind != c->kind)
                    continue;
                if (c->kind == CL_IF && (c->name || o->name) &&
                    !(c->name && o->name && strcmp(c->name, o->name) == 0))
                    continue;
                return dir__fail(p, c->off, "duplicate clause '%s' on '%s'",
                                 directive_clause_name(c->kind), dname);
            }
        if (d->kind != DIR_TARGET && d->kind != DIR_IF_DEVICE && d->kind != DIR_LOOP)
            continue;
        if (d->acc) /* OpenACC: every clause of the table applies to its construct */
            continue;
        if (d->kind == DIR_IF_DEVICE && d->cs == 0)
            continue;
        if (directive_in_reduction(c))
            continue; /* any target construct */
        nb = dir__needs(c->kind, d->kind);
        if (nb && !(d->cs & nb)) {
            const char *parts[8];
            char buf[160] = "";
            int np = 0;
            if (nb & CS_TEAMS)
                parts[np++] = "teams";
            if (nb & CS_DISTRIBUTE)
                parts[np++] = "distribute";
            if (nb & CS_PARALLEL_FOR)
                parts[np++] = "parallel for";
            if (nb & CS_PARALLEL)
                parts[np++] = "parallel";
            if (nb & CS_FOR)
                parts[np++] = "for";
            if (nb & CS_SIMD)
                parts[np++] = "simd";
            if (nb & CS_LOOP)
                parts[np++] = "loop";
            for (int q = 0; q < np; q++)
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s'%s'",
                         q == 0 ? "" : q == np - 1 ? " or " : ", ", parts[q]);
            return dir__fail(p, c->off, "clause '%s' not allowed on '%s%s%s' (needs %s)",
                             directive_clause_name(c->kind), d->kind == DIR_LOOP ? "" : dname,
                             d->kind != DIR_LOOP && d->cs ? " " : "",
                             dir__cs_text(d->cs, csbuf, sizeof csbuf), buf);
        }
    }
    return 0;
}

/* Requires the end of the range. */
static int dir__end(DirP *p, const char *dname)
{
    dir__ws(p);
    if (p->pos < p->lim)
        return dir__fail(p, p->pos, "unexpected text after '%s'", dname);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Directives                                                         */
/* ------------------------------------------------------------------ */

#define B_ DIR__BIT
#define DIR__CS_CLAUSES                                                                     \
    (B_(CL_NUM_TEAMS) | B_(CL_THREAD_LIMIT) | B_(CL_NUM_THREADS) | B_(CL_COLLAPSE) |        \
     B_(CL_REDUCTION) | B_(CL_PRIVATE) | B_(CL_FIRSTPRIVATE) | B_(CL_LASTPRIVATE) |         \
     B_(CL_SCHEDULE) | B_(CL_DIST_SCHEDULE) | B_(CL_SIMDLEN) | B_(CL_SAFELEN) | B_(CL_SHARED) | \
     B_(CL_ORDER) | B_(CL_LINEAR) | B_(CL_ACCEPTED))
#define DIR__TARGET_OK                                                                      \
    (DIR__CS_CLAUSES | B_(CL_DEVICE) | B_(CL_MAP) | B_(CL_NOWAIT) | B_(CL_DEPEND) |         \
     B_(CL_IF) | B_(CL_IS_DEVICE_PTR) | B_(CL_HAS_DEVICE_ADDR) | B_(CL_DEFAULTMAP) |          \
     B_(CL_RESOURCES))
#define DIR__IFDEV_OK (DIR__CS_CLAUSES | B_(CL_RESOURCES))
#define DIR__LOOP_OK (DIR__CS_CLAUSES | B_(CL_IF) | B_(CL_NOWAIT))
#define DIR__TENTER_OK (B_(CL_DEVICE) | B_(CL_MAP) | B_(CL_IF) | B_(CL_NOWAIT) | B_(CL_DEPEND))
#define DIR__TDATA_USE (B_(CL_USE_DEVICE_PTR) | B_(CL_USE_DEVICE_ADDR))
#define DIR__TDATA_OK (B_(CL_DEVICE) | B_(CL_MAP) | B_(CL_IF) | DIR__TDATA_USE)
#define DIR__TUPDATE_OK ((B_(CL_TO) | B_(CL_FROM) | DIR__TENTER_OK) & ~B_(CL_MAP))
#define DIR__ACC_DATA_OK                                                                    \
    (B_(CL_ACC_COPY) | B_(CL_ACC_COPYIN) | B_(CL_ACC_COPYOUT) | B_(CL_ACC_CREATE) |         \
     B_(CL_ACC_PRESENT) | B_(CL_ACC_NO_CREATE) | B_(CL_ACC_DEVICEPTR) | B_(CL_ACC_ATTACH) | \
     B_(CL_IF))
#define DIR__ACC_ASYNC (B_(CL_IF) | B_(CL_ACC_ASYNC) | B_(CL_ACC_WAIT))
#define DIR__ACC_DECLARE_OK                                                                 \
    (B_(CL_ACC_COPY) | B_(CL_ACC_COPYIN) | B_(CL_ACC_COPYOUT) | B_(CL_ACC_CREATE) |         \
     B_(CL_ACC_PRESENT) | B_(CL_ACC_DEVICEPTR) | B_(CL_LINK))
#define DIR__ACC_ENTER_DATA (B_(CL_ACC_COPYIN) | B_(CL_ACC_CREATE) | B_(CL_ACC_ATTACH))
#define DIR__ACC_EXIT_DATA (B_(CL_ACC_COPYOUT) | B_(CL_ACC_DELETE) | B_(CL_ACC_DETACH))
#define DIR__ACC_UPDATE_DATA (B_(CL_ACC_HOST) | B_(CL_ACC_SELF) | B_(CL_ACC_DEVICE))

/* Whether d has a clause whose kind is in mask. */
static int dir__has(const Directive *d, uint64_t mask)
{
    for (int i = 0; i < d->nclauses; i++)
        if (mask & B_(d->clauses[i].kind))
            return 1;
    return 0;
}

/* Clauses, then the checks, then an optional "needs one of" rule. */
static int dir__body(DirP *p, Directive *d, uint64_t ok, const char *dname, int cs_mode,
                     uint64_t need, int need_off, const char *need_msg)
{
    if (dir__clauses(p, d, ok, dname, cs_mode) < 0 || dir__check(p, d, dname) < 0)
        return -1;
    if (need && !dir__has(d, need))
        return dir__fail(p, need_off, "'%s' needs %s", dname, need_msg);
    return 0;
}

/* A compute-capability subtype: cc35, sm_90, sm90, compute_90 -> 35/90; -1 if not one. */
static int dir__cc(const char *t)
{
    static const char *const pre[] = {"compute_", "sm_", "cc", "sm"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
        size_t n = strlen(pre[i]);
        long v = 0;
        const char *q;
        if (strncasecmp(t, pre[i], n) != 0)
            continue;
        q = t + n;
        if (strlen(q) < 2 || strlen(q) > 3)
            return -1;
        for (const char *r = q; *r; r++) {
            if (!isdigit((unsigned char)*r))
                return -1;
            v = v * 10 + (*r - '0');
        }
        return (int)v;
    }
    return -1;
}

/* An architecture name of if_device (nvidia|cuda|host|smp) or of a
 * metadirective arch(...) trait (also nvptx, sm_NN, x86_64, ...). */
static int dir__arch(const char *t, int wide, int *arch, int *cc)
{
    static const char *const hosts[] = {"x86_64", "x86", "amd64", "i386", "i686", "aarch64",
                                        "arm64", "arm", "ppc64le", "ppc64", "riscv64"};
    *cc = 0;
    if (dir__ieq(t, "nvidia") || dir__ieq(t, "cuda")) {
        *arch = ARCH_NVIDIA;
        return 0;
    }
    if (dir__ieq(t, "host") || dir__ieq(t, "smp")) {
        *arch = ARCH_HOST;
        return 0;
    }
    if (!wide)
        return -1;
    if (dir__ieq(t, "nvptx") || dir__ieq(t, "nvptx64")) {
        *arch = ARCH_NVIDIA;
        return 0;
    }
    if ((*cc = dir__cc(t)) > 0) {
        *arch = ARCH_NVIDIA;
        return 0;
    }
    *cc = 0;
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++)
        if (dir__ieq(t, hosts[i])) {
            *arch = ARCH_HOST;
            return 0;
        }
    return -1;
}

/* if_device '(' ARCH [',' SUBTYPE] ')' [construct-set] clauses */
static int dir__if_device(DirP *p, Directive *d)
{
    char w[64];
    int a, b, i, n, cc;

    d->kind = DIR_IF_DEVICE;
    if (dir__parens(p, "if_device", &a, &b) < 0)
        return -1;
    i = dir__skip_ws(p, a, b);
    n = dir__word_at(p, i, b);
    if (!n)
        return dir__fail(p, i, "expected an architecture (nvidia or host) in 'if_device'");
    snprintf(w, sizeof w, "%.*s", DIR__W(n), p->s + i);
    if (dir__arch(w, 0, &d->arch, &cc) < 0)
        return dir__fail(p, i, "unknown architecture '%s' in 'if_device' (expected nvidia, cuda, host or smp)", w);
    i = dir__skip_ws(p, i + n, b);
    if (i < b && p->s[i] == ',') {
        int j;
        i = dir__skip_ws(p, i + 1, b);
        for (j = i; j < b && dir__idchar(p->s[j]);)
            j++;
        if (j == i)
            return dir__fail(p, i, "expected a subtype (such as cc35 or sm_90) in 'if_device'");
        snprintf(w, sizeof w, "%.*s", DIR__W(j - i), p->s + i);
        if ((cc = dir__cc(w)) < 0)
            return dir__fail(p, i, "unknown subtype '%s' in 'if_device' (expected e.g. cc35 or sm_90)", w);
        if (d->arch != ARCH_NVIDIA)
            return dir__fail(p, i, "subtype '%s' needs architecture nvidia", w);
        d->min_cc = cc;
        i = dir__skip_ws(p, j, b);
    }
    if (i < b)
        return dir__fail(p, i, "expected ')' after the architecture of 'if_device'");
    dir__ws(p);
    if (dir__is_cs_word(p, p->pos, dir__word_at(p, p->pos, p->lim)) && dir__cs(p, &d->cs, 0) < 0)
        return -1;
    return dir__body(p, d, DIR__IFDEV_OK, "if_device", DIR__CS_LATE, 0, 0, NULL);
}

/* One trait value: an identifier, a number or a string literal. */
static int dir__trait_value(DirP *p, int *i, int b, char *w, size_t wn)
{
    int j = *i, k;
    if (j < b && p->s[j] == '"') {
        k = dir__skip_lit(p, j, b);
        if (k < 0)
            return -1;
        snprintf(w, wn, "%.*s", DIR__W(k - j - 2), p->s + j + 1);
    } else {
        for (k = j; k < b && dir__idchar(p->s[k]);)
            k++;
        if (k == j)
            return dir__fail(p, j, "expected a trait value in metadirective");
        snprintf(w, wn, "%.*s", DIR__W(k - j), p->s + j);
    }
    *i = k;
    return 0;
}

/* implementation={vendor(v, ...)}: the code of the NVIDIA version is NVIDIA's
 * compiler's (vendor nvidia); no other vendor matches, in any version */
static int dir__impl_selector(DirP *p, int ob, int cb, int *impl)
{
    int i = dir__skip_ws(p, ob + 1, cb), n = dir__word_at(p, i, cb);
    if (!n || !dir__is(p, i, n, "vendor"))
        return dir__fail(p, i, "implementation trait '%.*s' is not supported in metadirective (only vendor)",
                         DIR__W(n ? n : 1), p->s + i);
    int to = dir__skip_ws(p, i + n, cb);
    if (to >= cb || p->s[to] != '(')
        return dir__fail(p, to, "expected '(' after 'vendor' in metadirective");
    int tc = dir__scan(p, to + 1, cb, ")", 0);
    if (tc < 0)
        return -1;
    if (tc >= cb)
        return dir__fail(p, cb, "expected ')' in metadirective");
    if (dir__skip_ws(p, tc + 1, cb) != cb)
        return dir__fail(p, dir__skip_ws(p, tc + 1, cb), "expected '}' after the vendor trait in metadirective");
    *impl = ARCH_NONE;
    for (int j = to + 1, nv = 0;; nv++) {
        char w[64];
        j = dir__skip_ws(p, j, tc);
        if (j >= tc && nv)
            break;
        if (nv) {
            if (p->s[j] != ',')
                return dir__fail(p, j, "expected ',' or ')' in metadirective");
            j = dir__skip_ws(p, j + 1, tc);
        }
        if (dir__trait_value(p, &j, tc, w, sizeof w) < 0)
            return -1;
        if (dir__ieq(w, "nvidia"))
            *impl = ARCH_NVIDIA;
    }
    return 0;
}

/* set {',' set} with set := device '=' '{' trait {',' trait} '}' (trait :=
 * kind(...) | arch(...)) | implementation '=' '{' vendor(...) '}' */
static int dir__selector(DirP *p, int a, int b, int *arch, int *min_cc)
{
    int i = a, nsets = 0, seen_dev = 0, impl = 0;
    *arch = 0;
    *min_cc = 0;
    for (;;) {
        int n, ob, cb, ntraits = 0;
        i = dir__skip_ws(p, i, b);
        if (nsets && i >= b) {
            /* both sets: the variant applies where both do */
            if (impl == ARCH_NONE || (impl && *arch && *arch != impl))
                *arch = ARCH_NONE;
            else if (impl)
                *arch = impl;
            return 0;
        }
        if (nsets) {
            if (p->s[i] != ',')
                return dir__fail(p, i, "expected ':' after the context selector in metadirective");
            i = dir__skip_ws(p, i + 1, b);
        }
        n = dir__word_at(p, i, b);
        if (!n)
            return dir__fail(p, i, "expected a context selector (device={...}) in metadirective");
        if (dir__is(p, i, n, "implementation")) {
            if (impl)
                return dir__fail(p, i, "duplicate context selector set 'implementation' in metadirective");
            nsets++;
            int e = dir__skip_ws(p, i + n, b);
            if (e >= b || p->s[e] != '=')
                return dir__fail(p, e, "expected '=' after 'implementation' in metadirective");
            e = dir__skip_ws(p, e + 1, b);
            if (e >= b || p->s[e] != '{')
                return dir__fail(p, e, "expected '{' after 'implementation=' in metadirective");
            cb = dir__scan(p, e + 1, b, "}", 0);
            if (cb < 0)
                return -1;
            if (cb >= b)
                return dir__fail(p, b, "expected '}' in metadirective");
            if (dir__impl_selector(p, e, cb, &impl) < 0)
                return -1;
            i = cb + 1;
            continue;
        }
        if (!dir__is(p, i, n, "device")) {
            static const char *const known[] = {"user", "construct", "target_device"};
            for (size_t k = 0; k < sizeof known / sizeof *known; k++)
                if (dir__is(p, i, n, known[k]))
                    return dir__fail(p, i,
                                     "context selector set '%.*s' is not supported in metadirective (only device and "
                                     "implementation)",
                                     n, p->s + i);
            return dir__fail(p, i, "unknown context selector set '%.*s' in metadirective", DIR__W(n), p->s + i);
        }
        if (seen_dev++)
            return dir__fail(p, i, "duplicate context selector set 'device' in metadirective");
        nsets++;
        i = dir__skip_ws(p, i + n, b);
        if (i >= b || p->s[i] != '=')
            return dir__fail(p, i, "expected '=' after 'device' in metadirective");
        i = dir__skip_ws(p, i + 1, b);
        if (i >= b || p->s[i] != '{')
            return dir__fail(p, i, "expected '{' after 'device=' in metadirective");
        ob = i;
        cb = dir__scan(p, ob + 1, b, "}", 0);
        if (cb < 0)
            return -1;
        if (cb >= b)
            return dir__fail(p, b, "expected '}' in metadirective");
        for (i = ob + 1;;) {
            int to, tc, isarch;
            i = dir__skip_ws(p, i, cb);
            if (i >= cb) {
                if (!ntraits)
                    return dir__fail(p, i, "expected a device trait (kind or arch) in metadirective");
                break;
            }
            if (ntraits) {
                if (p->s[i] != ',')
                    return dir__fail(p, i, "expected ',' or '}' in metadirective");
                i = dir__skip_ws(p, i + 1, cb);
            }
            n = dir__word_at(p, i, cb);
            if (!n)
                return dir__fail(p, i, "expected a device trait (kind or arch) in metadirective");
            isarch = dir__is(p, i, n, "arch");
            if (!isarch && !dir__is(p, i, n, "kind"))
                return dir__fail(p, i, "device trait '%.*s' is not supported in metadirective (only kind and arch)",
                                 DIR__W(n), p->s + i);
            ntraits++;
            to = dir__skip_ws(p, i + n, cb);
            if (to >= cb || p->s[to] != '(')
                return dir__fail(p, to, "expected '(' after '%.*s' in metadirective", n, p->s + i);
            tc = dir__scan(p, to + 1, cb, ")", 0);
            if (tc < 0)
                return -1;
            if (tc >= cb)
                return dir__fail(p, cb, "expected ')' in metadirective");
            for (int j = to + 1, nv = 0;; nv++) {
                char w[64];
                int ar = 0, cc = 0, vo;
                j = dir__skip_ws(p, j, tc);
                if (j >= tc && nv)
                    break;
                if (nv) {
                    if (p->s[j] != ',')
                        return dir__fail(p, j, "expected ',' or ')' in metadirective");
                    j = dir__skip_ws(p, j + 1, tc);
                }
                vo = j;
                if (dir__trait_value(p, &j, tc, w, sizeof w) < 0)
                    return -1;
                if (isarch) {
                    if (dir__arch(w, 1, &ar, &cc) < 0)
                        return dir__fail(p, vo, "unknown architecture '%s' in metadirective", w);
                } else if (dir__ieq(w, "gpu") || dir__ieq(w, "nohost")) {
                    ar = ARCH_NVIDIA;
                } else if (dir__ieq(w, "host") || dir__ieq(w, "cpu")) {
                    ar = ARCH_HOST;
                } else if (!dir__ieq(w, "any")) {
                    return dir__fail(p, vo, "unknown device kind '%s' in metadirective (expected gpu, nohost, host, cpu or any)", w);
                }
                if (ar && *arch && ar != *arch)
                    return dir__fail(p, vo, "conflicting device selectors in metadirective");
                if (ar)
                    *arch = ar;
                if (cc > *min_cc)
                    *min_cc = cc;
            }
            i = tc + 1;
        }
        i = cb + 1;
    }
}

/* A metadirective variant [a, b): [nothing | construct-set] clauses. */
static int dir__variant(DirP *p, Directive *md, int a, int b, int arch, int min_cc, int off)
{
    Directive *v = dir__grow(p, (void **)&md->variants, &md->nvariants, sizeof *v, off);
    int save = p->lim, r;

    if (!v)
        return -1;
    v->kind = DIR_IF_DEVICE;
    v->arch = arch;
    v->min_cc = min_cc;
    p->lim = b;
    p->pos = a;
    if (dir__accept(p, "nothing")) {
        r = dir__end(p, "nothing");
    } else {
        dir__ws(p);
        r = 0;
        if (dir__is_cs_word(p, p->pos, dir__word_at(p, p->pos, p->lim)))
            r = dir__cs(p, &v->cs, 0);
        if (r == 0)
            r = dir__body(p, v, DIR__IFDEV_OK, "metadirective", DIR__CS_LATE, 0, 0, NULL);
    }
    p->lim = save;
    p->pos = b + 1;
    return r;
}

/* metadirective { when '(' selector ':' variant ')' } [default|otherwise '(' variant ')'] */
static int dir__metadirective(DirP *p, Directive *d)
{
    int have_default = 0;
    d->kind = DIR_METADIRECTIVE;
    for (;;) {
        int off, n, a, b, arch, cc;
        dir__ws(p);
        if (p->pos < p->lim && p->s[p->pos] == ',' && d->nvariants) {
            p->pos++;
            dir__ws(p);
        }
        if (p->pos >= p->lim)
            break;
        off = p->pos;
        n = dir__word_at(p, off, p->lim);
        if (!n)
            return dir__fail(p, off, "expected 'when' or 'default' in metadirective");
        p->pos += n;
        if (dir__is(p, off, n, "when")) {
            int colon;
            if (dir__parens(p, "when", &a, &b) < 0)
                return -1;
            if (have_default)
                return dir__fail(p, off, "'when' after 'default' in metadirective");
            colon = dir__scan(p, a, b, ":", 0);
            if (colon < 0)
                return -1;
            if (colon >= b)
                return dir__fail(p, b, "expected ':' after the context selector in metadirective");
            if (dir__selector(p, a, colon, &arch, &cc) < 0 ||
                dir__variant(p, d, colon + 1, b, arch, cc, off) < 0)
                return -1;
        } else if (dir__is(p, off, n, "default") || dir__is(p, off, n, "otherwise")) {
            if (dir__parens(p, "default", &a, &b) < 0)
                return -1;
            if (have_default++)
                return dir__fail(p, off, "metadirective has more than one default/otherwise clause");
            if (dir__variant(p, d, a, b, 0, 0, off) < 0)
                return -1;
        } else {
            return dir__fail(p, off, "unknown clause '%.*s' on 'metadirective'", DIR__W(n), p->s + off);
        }
    }
    if (!d->nvariants)
        return dir__fail(p, p->pos, "expected 'when' or 'default' in metadirective");
    return 0;
}

/* omp target [data | enter data | exit data | update | construct-set] ... */
static int dir__omp_target(DirP *p, Directive *d)
{
    int off;
    dir__ws(p);
    off = p->pos;
    if (dir__accept(p, "data")) {
        d->kind = DIR_TARGET_DATA;
        return dir__body(p, d, DIR__TDATA_OK, "target data", DIR__CS_NO, B_(CL_MAP) | DIR__TDATA_USE,
                         off, "a 'map', 'use_device_ptr' or 'use_device_addr' clause");
    }
    if (dir__accept(p, "enter") || dir__accept(p, "exit")) {
        int enter = p->s[off + 1] == 'n';
        if (!dir__accept(p, "data"))
            return dir__fail(p, p->pos, "expected 'data' after 'target %s'", enter ? "enter" : "exit");
        d->kind = enter ? DIR_TARGET_ENTER_DATA : DIR_TARGET_EXIT_DATA;
        return dir__body(p, d, DIR__TENTER_OK, enter ? "target enter data" : "target exit data",
                         DIR__CS_NO, B_(CL_MAP), off, "a 'map' clause");
    }
    if (dir__accept(p, "update")) {
        d->kind = DIR_TARGET_UPDATE;
        return dir__body(p, d, DIR__TUPDATE_OK, "target update", DIR__CS_NO, B_(CL_TO) | B_(CL_FROM),
                         off, "a 'to' or 'from' clause");
    }
    d->kind = DIR_TARGET;
    if (dir__is_cs_word(p, p->pos, dir__word_at(p, p->pos, p->lim)) && dir__cs(p, &d->cs, 0) < 0)
        return -1;
    return dir__body(p, d, DIR__TARGET_OK, "target", DIR__CS_LATE, 0, 0, NULL);
}

static int dir__omp(DirP *p, Directive *d)
{
    int off, n;
    dir__ws(p);
    off = p->pos;
    n = dir__word_at(p, off, p->lim);
    if (!n)
        return 0;
    p->pos += n;
    if (dir__is(p, off, n, "target"))
        return dir__omp_target(p, d);
    if (dir__is(p, off, n, "if_device"))
        return dir__if_device(p, d);
    if (dir__is(p, off, n, "metadirective"))
        return dir__metadirective(p, d);
    if (dir__is(p, off, n, "taskwait")) {
        /* depend(...) (5.0): macc waits for every deferred task, those the
         * dependences name included; nowait (5.1): nothing to wait for */
        d->kind = DIR_TASKWAIT;
        return dir__body(p, d, B_(CL_DEPEND) | B_(CL_NOWAIT), "taskwait", DIR__CS_NO, 0, 0, NULL);
    }
    if (dir__is(p, off, n, "declare") || dir__is(p, off, n, "begin") || dir__is(p, off, n, "declare_target")) {
        int begin = p->s[off] == 'b';
        /* 5.2 spells directive names with underscores too: declare_target */
        if (begin && !dir__accept(p, "declare_target") && (!dir__accept(p, "declare") || !dir__accept(p, "target")))
            return 0;
        if (!begin && !dir__is(p, off, n, "declare_target") && !dir__accept(p, "target"))
            return 0; /* declare simd / reduction / mapper / variant, begin ...: not ours */
        d->kind = DIR_DECLARE_TARGET;
        if (begin)
            return dir__body(p, d, B_(CL_DEVICE_TYPE) | B_(CL_INDIRECT), "begin declare target",
                             DIR__CS_NO, 0, 0, NULL);
        dir__ws(p);
        if (p->pos < p->lim && p->s[p->pos] == '(') {
            int a, b, coff = p->pos;
            DirClause *c = dir__add_clause(p, d, CL_TO, coff);
            if (!c || dir__parens(p, "declare target", &a, &b) < 0 || dir__list(p, c, a, b) < 0)
                return -1;
            return dir__end(p, "declare target(...)");
        }
        return dir__body(p, d, B_(CL_TO) | B_(CL_LINK) | B_(CL_DEVICE_TYPE) | B_(CL_INDIRECT),
                         "declare target", DIR__CS_NO, 0, 0, NULL);
    }
    if (dir__is(p, off, n, "end")) {
        if (!dir__accept(p, "declare_target") && (!dir__accept(p, "declare") || !dir__accept(p, "target")))
            return 0;
        d->kind = DIR_END_DECLARE_TARGET;
        return dir__end(p, "end declare target");
    }
    if (dir__is(p, off, n, "parallel") &&
        (dir__peek(p, "sections") || dir__peek(p, "master") || dir__peek(p, "masked") ||
         dir__peek(p, "workshare") || dir__peek(p, "single")))
        return 0; /* omp parallel sections, parallel master [taskloop], ...: not ours */
    if (dir__is_cs_word(p, off, n) || dir__is(p, off, n, "for")) {
        char name[64];
        d->kind = DIR_LOOP;
        p->pos = off;
        if (dir__cs(p, &d->cs, 1) < 0)
            return -1;
        dir__cs_text(d->cs, name, sizeof name);
        return dir__body(p, d, DIR__LOOP_OK, name, DIR__CS_MISPLACED, 0, 0, NULL);
    }
    return 0; /* critical, atomic, barrier, for, task, ...: not ours */
}

#define DIR__ACC_COMPUTE_OK                                                                 \
    (DIR__ACC_DATA_OK | DIR__ACC_ASYNC | B_(CL_PRIVATE) | B_(CL_FIRSTPRIVATE) |              \
     B_(CL_REDUCTION) | B_(CL_NUM_TEAMS) | B_(CL_THREAD_LIMIT) | B_(CL_ACC_NUM_WORKERS) |    \
     B_(CL_ACC_DEFAULT) | B_(CL_ACC_SELF) | B_(CL_ACC_DEVICE_TYPE))
#define DIR__ACC_LOOP_OK                                                                    \
    (B_(CL_ACC_GANG) | B_(CL_ACC_WORKER) | B_(CL_ACC_VECTOR) | B_(CL_ACC_SEQ) |              \
     B_(CL_ACC_INDEPENDENT) | B_(CL_ACC_AUTO) | B_(CL_ACC_TILE) | B_(CL_COLLAPSE) |          \
     B_(CL_PRIVATE) | B_(CL_REDUCTION) | B_(CL_ACC_DEVICE_TYPE))

/* The device kinds a device_type(list) names: 1 nvidia (nvidia, cuda,
 * acc_device_nvidia), 2 host (host, multicore, acc_device_host), 3 for `*`. */
static int dir__acc_dtype_mask(const char *arg)
{
    int m = 0;
    const char *s = arg ? arg : "";
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        const char *w = s;
        while (*s && *s != ',' && *s != ' ' && *s != '\t')
            s++;
        size_t n = (size_t)(s - w);
        if (n == 1 && *w == '*')
            m |= 3;
        else if ((n == 6 && !strncmp(w, "nvidia", 6)) || (n == 4 && !strncmp(w, "cuda", 4)) ||
                 (n == 17 && !strncmp(w, "acc_device_nvidia", 17)))
            m |= 1;
        else if ((n == 4 && !strncmp(w, "host", 4)) || (n == 9 && !strncmp(w, "multicore", 9)) ||
                 (n == 15 && !strncmp(w, "acc_device_host", 15)))
            m |= 2;
    }
    return m;
}

/* device_type(list) sections: the clauses before the first device_type and
 * those after device_type(*) apply to every device and stay in d; those
 * after device_type(nvidia) / device_type(host) go to nv / host (the
 * versions of the region for that device, as if_device lines give them);
 * those after a list naming neither are dropped (other devices' tuning).
 * On an acc loop (nv == NULL) there are no versions: a device's clauses are
 * kept only when every device macc builds for is named (`*`). async and wait
 * apply to the region whatever device runs it (a wait is always correct). */
static int dir__acc_device_type(Directive *d, Directive *nv, Directive *host)
{
    int mask = 3, n = 0;
    for (int i = 0; i < d->nclauses; i++) {
        DirClause *c = &d->clauses[i];
        if (c->kind == CL_ACC_DEVICE_TYPE)
            mask = dir__acc_dtype_mask(c->arg);
        if (mask == 3 || c->kind == CL_ACC_DEVICE_TYPE || (nv && (c->kind == CL_ACC_ASYNC || c->kind == CL_ACC_WAIT))) {
            d->clauses[n++] = *c;
            continue;
        }
        if (nv && (((mask & 1) && directive_add_clause_copy(nv, c) < 0) ||
                   ((mask & 2) && directive_add_clause_copy(host, c) < 0)))
            return -1;
        free(c->name);
        free(c->arg);
        dir__free_items(c->items, c->nitems);
    }
    d->nclauses = n;
    return 0;
}

/* acc_par and the construct-set of an acc construct from its clauses. */
static int dir__acc_finish(DirP *p, Directive *d, int which, int loop)
{
    d->acc_par = 0;
    for (int i = 0; i < d->nclauses; i++) {
        DirClause *c = &d->clauses[i];
        switch (c->kind) {
        case CL_ACC_GANG: d->acc_par |= ACC_GANG; break;
        case CL_ACC_WORKER: d->acc_par |= ACC_WORKER; break;
        case CL_ACC_VECTOR: d->acc_par |= ACC_VECTOR; break;
        case CL_ACC_SEQ: d->acc_par |= ACC_SEQ; break;
        case CL_ACC_INDEPENDENT: d->acc_par |= ACC_INDEPENDENT; break;
        case CL_ACC_AUTO: d->acc_par |= ACC_AUTO; break;
        default: break;
        }
    }
    if ((d->acc_par & ACC_SEQ) && (d->acc_par & (ACC_GANG | ACC_WORKER | ACC_VECTOR | ACC_INDEPENDENT | ACC_AUTO)))
        return dir__fail(p, directive_find(d, CL_ACC_SEQ)->off,
                         "'seq' cannot be combined with gang, worker, vector, independent or auto");
    if (which == ACC_LOOP)
        d->cs = (d->acc_par & ACC_SEQ) ? 0 : CS_LOOP;
    else if (loop)
        d->cs = (d->acc_par & ACC_SEQ) || which == ACC_SERIAL ? 0 : CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR;
    else
        d->cs = which == ACC_PARALLEL ? CS_TEAMS : 0;
    return 0;
}

/* acc parallel|kernels|serial [loop] clauses, acc loop clauses: the
 * construct-set of the OpenMP construct each one is translated as
 * (docs/TRANSLATION.md): parallel ~ target teams, serial and kernels ~
 * target (one thread; kernels' loops decided by the analysis), a loop with
 * gang, worker, vector or none of them ~ distribute parallel for (a bare
 * `loop` inside a region: what its place makes it), seq ~ no loop construct. */
static int dir__acc_compute(DirP *p, Directive *d, int which)
{
    static const char *const names[] = {"", "acc parallel", "acc kernels", "acc serial", "acc loop"};
    char name[32];
    int loop = which == ACC_LOOP || dir__accept(p, "loop");
    uint64_t ok = which == ACC_LOOP ? DIR__ACC_LOOP_OK : DIR__ACC_COMPUTE_OK | (loop ? DIR__ACC_LOOP_OK : 0);
    d->acc = which;
    d->acc_loop = loop && which != ACC_LOOP;
    d->kind = which == ACC_LOOP ? DIR_LOOP : DIR_TARGET;
    snprintf(name, sizeof name, "%s%s", names[which], d->acc_loop ? " loop" : "");
    if (dir__body(p, d, ok, name, DIR__CS_NO, 0, 0, NULL) < 0)
        return -1;
    Directive dev[2];
    memset(dev, 0, sizeof dev);
    if (dir__acc_device_type(d, which == ACC_LOOP ? NULL : &dev[0], &dev[1]) < 0) {
        directive_free(&dev[0]);
        directive_free(&dev[1]);
        return dir__fail(p, 0, "out of memory");
    }
    for (int i = 0; i < d->nclauses; i++) {
        DirClause *c = &d->clauses[i];
        switch (c->kind) {
        case CL_ACC_SELF: { /* self(cond): the host runs it when cond holds */
            char *t = c->arg ? malloc(strlen(c->arg) + 4) : NULL;
            if (c->arg && !t)
                return dir__fail(p, c->off, "out of memory");
            if (t)
                sprintf(t, "!(%s)", c->arg);
            free(c->arg);
            c->arg = t ? t : strdup("0");
            c->kind = CL_IF;
            if (!c->arg)
                return dir__fail(p, c->off, "out of memory");
            break;
        }
        default: break;
        }
    }
    int r = dir__acc_finish(p, d, which, loop);
    /* device_type(nvidia) / device_type(host) clauses: a version's directive,
     * the common clauses and that device's (d->variants, arch set) */
    for (int k = 0; k < 2 && r == 0; k++) {
        if (!dev[k].nclauses)
            continue;
        Directive v;
        memset(&v, 0, sizeof v);
        v.kind = d->kind;
        v.is_acc = 1;
        v.acc = d->acc;
        v.acc_loop = d->acc_loop;
        v.arch = k == 0 ? ARCH_NVIDIA : ARCH_HOST;
        for (int i = 0; i < d->nclauses && r == 0; i++) /* the device's num_gangs(n) &c. win */
            if (!dir__unique(d->clauses[i].kind) || !directive_find(&dev[k], d->clauses[i].kind))
                r = directive_add_clause_copy(&v, &d->clauses[i]);
        for (int i = 0; i < dev[k].nclauses && r == 0; i++)
            r = directive_add_clause_copy(&v, &dev[k].clauses[i]);
        Directive *grown = r == 0 ? realloc(d->variants, (size_t)(d->nvariants + 1) * sizeof *grown) : NULL;
        if (!grown) {
            directive_free(&v);
            r = dir__fail(p, 0, "out of memory");
            break;
        }
        d->variants = grown;
        d->variants[d->nvariants] = v;
        r = dir__acc_finish(p, &d->variants[d->nvariants++], which, loop);
    }
    directive_free(&dev[0]);
    directive_free(&dev[1]);
    return r;
}

static int dir__acc(DirP *p, Directive *d)
{
    int off, n;
    dir__ws(p);
    off = p->pos;
    n = dir__word_at(p, off, p->lim);
    p->pos += n;
    d->is_acc = 1;
    if (dir__is(p, off, n, "data")) {
        d->kind = DIR_ACC_DATA;
        return dir__body(p, d, DIR__ACC_DATA_OK | DIR__ACC_ASYNC, "acc data", DIR__CS_NO, 0, 0, NULL);
    }
    if (dir__is(p, off, n, "host_data")) {
        /* the device addresses of present data in the block: target data
         * use_device_ptr (an array: use_device_addr) */
        d->kind = DIR_ACC_DATA;
        return dir__body(p, d, B_(CL_USE_DEVICE_PTR) | B_(CL_IF) | B_(CL_ACC_IF_PRESENT), "acc host_data",
                         DIR__CS_NO, B_(CL_USE_DEVICE_PTR), off, "a use_device clause");
    }
    if (dir__is(p, off, n, "set")) {
        uint64_t set = B_(CL_ACC_DEFAULT_ASYNC) | B_(CL_ACC_DEVICE_NUM) | B_(CL_ACC_DEVICE_TYPE);
        d->kind = DIR_ACC_SET;
        return dir__body(p, d, set | B_(CL_IF), "acc set", DIR__CS_NO, set, off,
                         "a default_async, device_num or device_type clause");
    }
    if (dir__is(p, off, n, "declare")) {
        /* in a function: the data of a data region from here to the end of
         * the block (device_resident: create); at file scope nothing to do
         * (the analysis ignores it) */
        d->kind = DIR_ACC_DATA;
        d->acc_declare = 1;
        return dir__body(p, d, DIR__ACC_DECLARE_OK, "acc declare", DIR__CS_NO, DIR__ACC_DECLARE_OK, off,
                         "a data clause");
    }
    if (dir__is(p, off, n, "enter") || dir__is(p, off, n, "exit")) {
        int enter = p->s[off + 1] == 'n';
        if (!dir__accept(p, "data"))
            return dir__fail(p, p->pos, "expected 'data' after 'acc %s'", enter ? "enter" : "exit");
        d->kind = enter ? DIR_ACC_ENTER_DATA : DIR_ACC_EXIT_DATA;
        if (enter)
            return dir__body(p, d, DIR__ACC_ENTER_DATA | DIR__ACC_ASYNC, "acc enter data",
                             DIR__CS_NO, DIR__ACC_ENTER_DATA, off, "a copyin, create or attach clause");
        return dir__body(p, d, DIR__ACC_EXIT_DATA | DIR__ACC_ASYNC | B_(CL_ACC_FINALIZE),
                         "acc exit data", DIR__CS_NO, DIR__ACC_EXIT_DATA, off,
                         "a copyout, delete or detach clause");
    }
    if (dir__is(p, off, n, "update")) {
        d->kind = DIR_ACC_UPDATE;
        return dir__body(p, d, DIR__ACC_UPDATE_DATA | DIR__ACC_ASYNC | B_(CL_ACC_IF_PRESENT),
                         "acc update", DIR__CS_NO, DIR__ACC_UPDATE_DATA, off,
                         "a host, self or device clause");
    }
    if (dir__is(p, off, n, "wait")) {
        d->kind = DIR_ACC_WAIT;
        dir__ws(p);
        if (p->pos < p->lim && p->s[p->pos] == '(') {
            int a, b;
            DirClause *c = dir__add_clause(p, d, CL_ACC_WAIT, off);
            if (!c || dir__parens(p, "wait", &a, &b) < 0 || dir__arg(p, c, a, b) < 0)
                return -1;
        }
        return dir__body(p, d, B_(CL_ACC_ASYNC) | B_(CL_IF), "acc wait", DIR__CS_NO, 0, 0, NULL);
    }
    if (dir__is(p, off, n, "parallel"))
        return dir__acc_compute(p, d, ACC_PARALLEL);
    if (dir__is(p, off, n, "kernels"))
        return dir__acc_compute(p, d, ACC_KERNELS);
    if (dir__is(p, off, n, "serial"))
        return dir__acc_compute(p, d, ACC_SERIAL);
    if (dir__is(p, off, n, "loop"))
        return dir__acc_compute(p, d, ACC_LOOP);
    d->is_acc = 0;
    return 0; /* routine, atomic, declare, host_data, ...: not ours */
}

/* ------------------------------------------------------------------ */
/* Nested directives                                                  */
/* ------------------------------------------------------------------ */

unsigned directive_cs_nest(unsigned outer, unsigned inner)
{
    if (!inner || (outer & CS_LOOPS))
        return 0; /* a loop construct holds a for loop, not another construct */
    if (outer == 0) { /* target */
        if (inner & CS_FOR)
            return 0; /* a worksharing loop needs an enclosing parallel region */
        if (inner == CS_LOOP)
            return CS_LOOP | CS_PARALLEL_FOR;
        return inner;
    }
    if (outer == CS_TEAMS) {
        if (inner == CS_LOOP)
            return CS_TEAMS | CS_LOOP | CS_DISTRIBUTE | CS_PARALLEL_FOR;
        if ((inner & CS_DISTRIBUTE) && !(inner & (CS_TEAMS | CS_LOOP)))
            return CS_TEAMS | inner;
        return 0;
    }
    if (CS_IS_PARALLEL_REGION(outer)) {
        if (inner == CS_LOOP)
            return CS_PARALLEL | CS_LOOP | CS_PARALLEL_FOR;
        if ((inner & CS_FOR) && !(inner & ~(unsigned)(CS_FOR | CS_SIMD)))
            return CS_PARALLEL_FOR | (inner & CS_SIMD);
        return 0;
    }
    return 0;
}

static char *dir__dup(const char *s, int *fail)
{
    char *t;
    if (!s)
        return NULL;
    t = strdup(s);
    if (!t)
        *fail = 1;
    return t;
}

int directive_add_clause_copy(Directive *d, const DirClause *c)
{
    DirClause x, *grown;
    int fail = 0;

    if (!d || !c)
        return -1;
    x = *c;
    x.name = dir__dup(c->name, &fail);
    x.arg = dir__dup(c->arg, &fail);
    x.items = NULL;
    if (c->nitems > 0 && !fail) {
        x.items = calloc((size_t)c->nitems, sizeof *x.items);
        if (!x.items)
            fail = 1;
        for (int i = 0; i < c->nitems && !fail; i++) {
            const DirItem *it = &c->items[i];
            DirItem *y = &x.items[i];
            *y = *it;
            y->subs = NULL;
            y->nsubs = 0;
            y->base = dir__dup(it->base, &fail);
            if (it->nsubs > 0 && !fail) {
                y->subs = calloc((size_t)it->nsubs, sizeof *y->subs);
                if (!y->subs) {
                    fail = 1;
                    break;
                }
                y->nsubs = it->nsubs;
                for (int j = 0; j < it->nsubs; j++) {
                    y->subs[j].is_section = it->subs[j].is_section;
                    y->subs[j].lo = dir__dup(it->subs[j].lo, &fail);
                    y->subs[j].len = dir__dup(it->subs[j].len, &fail);
                    y->subs[j].stride = dir__dup(it->subs[j].stride, &fail);
                }
            }
        }
    }
    grown = fail ? NULL : realloc(d->clauses, (size_t)(d->nclauses + 1) * sizeof *grown);
    if (!grown) {
        free(x.name);
        free(x.arg);
        dir__free_items(x.items, x.items ? c->nitems : 0);
        return -1;
    }
    d->clauses = grown;
    d->clauses[d->nclauses++] = x;
    return 0;
}

int directive_parse(const char *text, Directive *out, DirError *err)
{
    DirError dummy;
    Directive d;
    DirP p;
    int off, n, r = 0;

    if (!err)
        err = &dummy;
    memset(err, 0, sizeof *err);
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!text)
        return 0;
    memset(&d, 0, sizeof d);
    memset(&p, 0, sizeof p);
    p.s = text;
    p.len = (int)strnlen(text, INT_MAX - 1);
    p.lim = p.len;
    p.err = err;
    dir__ws(&p);
    off = p.pos;
    n = dir__word_at(&p, off, p.lim);
    p.pos += n;
    if (dir__is(&p, off, n, "omp")) {
        r = dir__omp(&p, &d);
    } else if (dir__is(&p, off, n, "acc")) {
        p.is_acc = 1;
        r = dir__acc(&p, &d);
    }
    if (r < 0 || p.failed) {
        if (!p.failed)
            dir__fail(&p, p.pos, "malformed directive");
        directive_free(&d);
        return -1;
    }
    /* loop bind(thread): each thread that meets it runs the whole loop, as
     * written: nothing of ours (the host compiler gets the line) */
    if (d.kind == DIR_LOOP && d.cs == CS_LOOP)
        for (int i = 0; i < d.nclauses; i++)
            if (d.clauses[i].kind == CL_ACCEPTED && d.clauses[i].name && !strcmp(d.clauses[i].name, "bind") &&
                d.clauses[i].arg && !strcmp(d.clauses[i].arg, "thread"))
                d.kind = DIR_OTHER;
    if (d.kind == DIR_OTHER)
        directive_free(&d);
    *out = d;
    return 0;
}
