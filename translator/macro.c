/* macro.c: the C preprocessor's macros, for pragma text the compiler leaves
 * unexpanded.
 *
 * `cc -E` expands macros in the pragmas it knows (omp, acc) and copies every
 * other pragma as written: `#pragma unroll(NTD)` keeps NTD, and nvcc does not
 * expand it either. Pragmas that go into device code are expanded here, with
 * the definitions that `cc -E -dM` prints for the same file and options (the
 * macros defined at the end of the file: a macro redefined between the pragma
 * and the end of the file takes its last definition). Object-like and
 * function-like macros, rescanned, a macro not expanded inside itself;
 * definitions that use # or ## are left unexpanded.
 */
#include <string.h>

#include "macc.h"

typedef struct Macro {
    char *name;
    int fnlike;
    int nparams;
    char **params;
    char *body;
} Macro;

struct MacroTable {
    StrMap index; /* name -> position in macros */
    Macro *macros;
    int n, cap;
};

static const char *mac__skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

MacroTable *macros_parse(const char *text)
{
    MacroTable *t = xcalloc(1, sizeof *t);
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *p = mac__skip_ws(line);
        if (!strncmp(p, "#define", 7) && (p[7] == ' ' || p[7] == '\t')) {
            p = mac__skip_ws(p + 7);
            const char *nb = p;
            while (ident_char(*p))
                p++;
            Macro m = {0};
            m.name = xstrndup(nb, (size_t)(p - nb));
            if (*p == '(') {
                m.fnlike = 1;
                p++;
                for (;;) {
                    p = mac__skip_ws(p);
                    const char *pb = p;
                    while (ident_char(*p) || *p == '.')
                        p++;
                    if (p > pb) {
                        m.params = xrealloc(m.params, sizeof *m.params * (size_t)(m.nparams + 1));
                        m.params[m.nparams++] = xstrndup(pb, (size_t)(p - pb));
                    }
                    p = mac__skip_ws(p);
                    if (*p == ',') {
                        p++;
                        continue;
                    }
                    if (*p == ')')
                        p++;
                    break;
                }
            }
            p = mac__skip_ws(p);
            const char *end = line + len;
            m.body = xstrndup(p, p < end ? (size_t)(end - p) : 0);
            if (t->n == t->cap) {
                t->cap = t->cap ? 2 * t->cap : 64;
                t->macros = xrealloc(t->macros, sizeof *t->macros * (size_t)t->cap);
            }
            int *slot = strmap_put(&t->index, m.name, strlen(m.name), t->n);
            if (*slot != t->n) { /* defined again: the last definition */
                Macro *old = &t->macros[*slot];
                for (int i = 0; i < old->nparams; i++)
                    free(old->params[i]);
                free(old->params);
                free(old->name);
                free(old->body);
                *old = m;
            } else {
                t->macros[t->n++] = m;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return t;
}

void macros_delete(MacroTable *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++) {
        for (int k = 0; k < t->macros[i].nparams; k++)
            free(t->macros[i].params[k]);
        free(t->macros[i].params);
        free(t->macros[i].name);
        free(t->macros[i].body);
    }
    free(t->macros);
    strmap_free(&t->index);
    free(t);
}

static void mac__expand(const MacroTable *t, const char *s, size_t n, Buf *out, const char **active, int depth);

/* The body of m with its parameters replaced by the (expanded) arguments. */
static void mac__subst(const MacroTable *t, const Macro *m, char **args, int nargs, Buf *out, const char **active,
                       int depth)
{
    const char *b = m->body;
    size_t i = 0, copied = 0, n = strlen(b);
    while (i < n) {
        if (b[i] == '"' || b[i] == '\'') {
            char q = b[i++];
            while (i < n && b[i] != q)
                i += b[i] == '\\' ? 2 : 1;
            i++;
            continue;
        }
        if (!ident_char(b[i]) || (b[i] >= '0' && b[i] <= '9')) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < n && ident_char(b[i]))
            i++;
        for (int k = 0; k < m->nparams && k < nargs; k++) {
            const char *pn = !strcmp(m->params[k], "...") ? "__VA_ARGS__" : m->params[k];
            if (strlen(pn) == i - s && !strncmp(pn, b + s, i - s)) {
                buf_put(out, b + copied, s - copied);
                mac__expand(t, args[k], strlen(args[k]), out, active, depth + 1);
                copied = i;
                break;
            }
        }
    }
    buf_put(out, b + copied, n - copied);
}

static void mac__expand(const MacroTable *t, const char *s, size_t n, Buf *out, const char **active, int depth)
{
    size_t i = 0, copied = 0;
    while (i < n) {
        if (s[i] == '"' || s[i] == '\'') {
            char q = s[i++];
            while (i < n && s[i] != q)
                i += s[i] == '\\' ? 2 : 1;
            i++;
            continue;
        }
        if (s[i] >= '0' && s[i] <= '9') {
            while (i < n && (ident_char(s[i]) || s[i] == '.'))
                i++;
            continue;
        }
        if (!ident_char(s[i])) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < n && ident_char(s[i]))
            i++;
        const int *mi = depth < 32 ? strmap_get(&t->index, s + b, i - b) : NULL;
        if (!mi)
            continue;
        const Macro *m = &t->macros[*mi];
        int busy = strchr(m->body, '#') != NULL;
        for (int k = 0; active[k] && !busy; k++)
            busy = !strcmp(active[k], m->name);
        if (busy)
            continue;
        size_t end = i;
        char **args = NULL;
        int nargs = 0;
        if (m->fnlike) {
            size_t p = i;
            while (p < n && (s[p] == ' ' || s[p] == '\t'))
                p++;
            if (p >= n || s[p] != '(')
                continue; /* a function-like macro's name without arguments */
            p++;
            size_t ab = p;
            for (int level = 0; p < n; p++) {
                if (s[p] == '(')
                    level++;
                else if ((s[p] == ')' && level == 0) || (s[p] == ',' && level == 0 &&
                                                         !(m->nparams && nargs == m->nparams - 1 &&
                                                           !strcmp(m->params[m->nparams - 1], "...")))) {
                    args = xrealloc(args, sizeof *args * (size_t)(nargs + 1));
                    const char *a = s + ab;
                    size_t al = p - ab;
                    while (al && (*a == ' ' || *a == '\t'))
                        a++, al--;
                    while (al && (a[al - 1] == ' ' || a[al - 1] == '\t'))
                        al--;
                    args[nargs++] = xstrndup(a, al);
                    ab = p + 1;
                    if (s[p] == ')')
                        break;
                } else if (s[p] == ')') {
                    level--;
                }
            }
            if (p >= n) { /* unbalanced: as written */
                for (int k = 0; k < nargs; k++)
                    free(args[k]);
                free(args);
                continue;
            }
            end = p + 1;
        }
        buf_put(out, s + copied, b - copied);
        /* the replacement, rescanned with this macro not expanded again */
        int na = 0;
        while (active[na])
            na++;
        const char **act = xmalloc(sizeof *act * (size_t)(na + 2));
        memcpy(act, active, sizeof *act * (size_t)na);
        act[na] = m->name;
        act[na + 1] = NULL;
        Buf rep = {0};
        if (m->fnlike)
            mac__subst(t, m, args, nargs, &rep, active, depth);
        else
            buf_puts(&rep, m->body);
        mac__expand(t, rep.data ? rep.data : "", rep.len, out, act, depth + 1);
        buf_free(&rep);
        free(act);
        for (int k = 0; k < nargs; k++)
            free(args[k]);
        free(args);
        i = copied = end;
    }
    buf_put(out, s + copied, n - copied);
}

char *macros_expand(const MacroTable *t, const char *text)
{
    Buf out = {0};
    const char *active[1] = {NULL};
    mac__expand(t, text, strlen(text), &out, active, 0);
    return out.data ? out.data : xstrdup("");
}
