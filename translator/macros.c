/* macros.c: pragmas made by macros.
 *
 * Real programs write `#define OFFLOAD _Pragma("omp target ...")` or
 * `#define PRAGMA(x) _Pragma(#x)` and use the macro on a line of its own.
 * Before parsing, every such line whose expansion is exactly one _Pragma of
 * one of our directives is rewritten in memory as the equivalent `#pragma`
 * line, so the rest of the translator sees an ordinary directive on the same
 * line. The expander knows the file's own #define lines (object-like and
 * function-like, # stringification, nested use); macros from headers are not
 * expanded. Everything else is left as it is. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

typedef struct Macro {
    char *name;
    int fn;          /* function-like */
    Vec params;      /* char * */
    char *body;
} Macro;

static int mac__ident_start(int c) { return isalpha(c) || c == '_'; }
static int mac__ident(int c) { return isalnum(c) || c == '_'; }

static Macro *mac__find(const Vec *macros, const char *s, size_t n)
{
    for (int i = macros->len - 1; i >= 0; i--) {
        Macro *m = macros->items[i];
        if (strlen(m->name) == n && !strncmp(m->name, s, n))
            return m;
    }
    return NULL;
}

/* Reads the #define lines of the text. */
static void mac__defines(const char *t, size_t len, Vec *macros)
{
    size_t i = 0;
    while (i < len) {
        size_t ls = i;
        while (i < len && (t[i] == ' ' || t[i] == '\t'))
            i++;
        if (i < len && t[i] == '#') {
            i++;
            while (i < len && (t[i] == ' ' || t[i] == '\t'))
                i++;
            if (len - i > 6 && !strncmp(t + i, "define", 6) && (t[i + 6] == ' ' || t[i + 6] == '\t')) {
                /* the logical line, continuations joined */
                Buf line = {0};
                size_t j = i + 6;
                while (j < len && t[j] != '\n') {
                    if (t[j] == '\\' && j + 1 < len && t[j + 1] == '\n') {
                        j += 2;
                        buf_puts(&line, " ");
                        continue;
                    }
                    buf_put(&line, t + j, 1);
                    j++;
                }
                i = j;
                const char *p = line.data ? line.data : "";
                while (*p == ' ' || *p == '\t')
                    p++;
                const char *nb = p;
                while (mac__ident(*p))
                    p++;
                if (p > nb) {
                    Macro *m = xcalloc(1, sizeof *m);
                    m->name = xstrndup(nb, (size_t)(p - nb));
                    if (*p == '(') {
                        m->fn = 1;
                        p++;
                        while (*p && *p != ')') {
                            while (*p == ' ' || *p == ',')
                                p++;
                            const char *a = p;
                            while (mac__ident(*p) || *p == '.')
                                p++;
                            if (p > a)
                                vec_push(&m->params, xstrndup(a, (size_t)(p - a)));
                            else if (*p && *p != ')')
                                p++;
                        }
                        if (*p == ')')
                            p++;
                    }
                    while (*p == ' ' || *p == '\t')
                        p++;
                    /* drop a trailing // comment */
                    const char *e = p + strlen(p);
                    const char *cm = strstr(p, "//");
                    if (cm && !memchr(p, '"', (size_t)(cm - p)))
                        e = cm;
                    m->body = xstrndup(p, (size_t)(e - p));
                    vec_push(macros, m);
                }
                buf_free(&line);
            }
        }
        while (i < len && t[i] != '\n')
            i++;
        i++;
        (void)ls;
    }
}

static void mac__stringify(Buf *out, const char *s, size_t n)
{
    buf_puts(out, "\"");
    /* trim and collapse white space, escape quotes and backslashes */
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    int sp = 0;
    for (size_t i = 0; i < n; i++) {
        if (isspace((unsigned char)s[i])) {
            sp = 1;
            continue;
        }
        if (sp)
            buf_puts(out, " ");
        sp = 0;
        if (s[i] == '"' || s[i] == '\\')
            buf_puts(out, "\\");
        buf_put(out, s + i, 1);
    }
    buf_puts(out, "\"");
}

/* Scans a balanced argument list starting after '('; returns the position
 * after ')', or NULL. Arguments are appended as (start, length) pairs. */
static const char *mac__args(const char *p, Vec *starts, Vec *lens)
{
    int depth = 0;
    const char *a = p;
    for (; *p; p++) {
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p && *p != q) {
                if (*p == '\\' && p[1])
                    p++;
                p++;
            }
            if (!*p)
                return NULL;
            continue;
        }
        if (*p == '(' || *p == '[' || *p == '{')
            depth++;
        else if ((*p == ')' || *p == ']' || *p == '}') && depth > 0)
            depth--;
        else if ((*p == ',' && depth == 0) || (*p == ')' && depth == 0)) {
            vec_push(starts, (void *)a);
            vec_push(lens, (void *)(size_t)(p - a));
            if (*p == ')')
                return p + 1;
            a = p + 1;
        }
    }
    return NULL;
}

static void mac__expand(const Vec *macros, const char *s, Buf *out, int depth, const char *self);

/* Substitutes the arguments into a function-like macro's body. */
static void mac__subst(const Vec *macros, const Macro *m, Vec *starts, Vec *lens, Buf *out, int depth)
{
    const char *p = m->body;
    while (*p) {
        if (*p == '#' && p[1] != '#') {
            const char *q = p + 1;
            while (*q == ' ')
                q++;
            const char *nb = q;
            while (mac__ident(*q))
                q++;
            for (int i = 0; i < m->params.len && q > nb; i++)
                if (strlen(m->params.items[i]) == (size_t)(q - nb) && !strncmp(m->params.items[i], nb, (size_t)(q - nb)) &&
                    i < starts->len) {
                    mac__stringify(out, starts->items[i], (size_t)lens->items[i]);
                    p = q;
                    goto next;
                }
        }
        if (mac__ident_start((unsigned char)*p)) {
            const char *nb = p;
            while (mac__ident(*p))
                p++;
            for (int i = 0; i < m->params.len; i++)
                if (strlen(m->params.items[i]) == (size_t)(p - nb) && !strncmp(m->params.items[i], nb, (size_t)(p - nb)) &&
                    i < starts->len) {
                    char *arg = xstrndup(starts->items[i], (size_t)lens->items[i]);
                    mac__expand(macros, arg, out, depth + 1, NULL);
                    free(arg);
                    goto next;
                }
            buf_put(out, nb, (size_t)(p - nb));
            continue;
        }
        buf_put(out, p, 1);
        p++;
    next:;
    }
}

static void mac__expand(const Vec *macros, const char *s, Buf *out, int depth, const char *self)
{
    const char *p = s;
    while (*p) {
        if (*p == '"' || *p == '\'') {
            const char *b = p;
            char q = *p++;
            while (*p && *p != q) {
                if (*p == '\\' && p[1])
                    p++;
                p++;
            }
            if (*p)
                p++;
            buf_put(out, b, (size_t)(p - b));
            continue;
        }
        if (!mac__ident_start((unsigned char)*p)) {
            buf_put(out, p, 1);
            p++;
            continue;
        }
        const char *nb = p;
        while (mac__ident(*p))
            p++;
        Macro *m = depth < 16 ? mac__find(macros, nb, (size_t)(p - nb)) : NULL;
        if (m && self && !strcmp(m->name, self))
            m = NULL;
        if (!m) {
            buf_put(out, nb, (size_t)(p - nb));
            continue;
        }
        if (!m->fn) {
            Buf t = {0};
            mac__expand(macros, m->body, &t, depth + 1, m->name);
            if (t.data)
                buf_puts(out, t.data);
            buf_free(&t);
            continue;
        }
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '(') {
            buf_put(out, nb, (size_t)(p - nb));
            continue;
        }
        Vec starts = {0}, lens = {0};
        const char *after = mac__args(q + 1, &starts, &lens);
        if (!after) {
            vec_free(&starts);
            vec_free(&lens);
            buf_put(out, nb, (size_t)(p - nb));
            continue;
        }
        Buf t = {0};
        mac__subst(macros, m, &starts, &lens, &t, depth);
        Buf t2 = {0};
        mac__expand(macros, t.data ? t.data : "", &t2, depth + 1, m->name);
        if (t2.data)
            buf_puts(out, t2.data);
        buf_free(&t);
        buf_free(&t2);
        vec_free(&starts);
        vec_free(&lens);
        p = after;
    }
}

/* If `s` is exactly one _Pragma("...") (white space around), returns the
 * destringised pragma text. */
static char *mac__one_pragma(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    if (strncmp(s, "_Pragma", 7))
        return NULL;
    s += 7;
    while (isspace((unsigned char)*s))
        s++;
    if (*s++ != '(')
        return NULL;
    while (isspace((unsigned char)*s))
        s++;
    if (*s++ != '"')
        return NULL;
    Buf b = {0};
    while (*s && *s != '"') {
        if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
            s++;
        buf_put(&b, s, 1);
        s++;
    }
    if (*s++ != '"') {
        buf_free(&b);
        return NULL;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s++ != ')') {
        buf_free(&b);
        return NULL;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s) {
        buf_free(&b);
        return NULL;
    }
    if (!b.data)
        buf_puts(&b, "");
    return b.data;
}

int source_expand_pragma_macros(Source *src)
{
    if (!strstr(src->text, "_Pragma"))
        return 0;
    Vec macros = {0};
    mac__defines(src->text, src->len, &macros);
    Buf out = {0};
    const char *t = src->text;
    size_t i = 0, n = src->len;
    int changed = 0, in_comment = 0, continued = 0;
    while (i < n) {
        size_t ls = i, le = i;
        while (le < n && t[le] != '\n')
            le++;
        /* a continuation line (of a #define, say) is never a pragma line */
        int was_continued = continued;
        continued = le > ls && t[le - 1] == '\\';
        if (was_continued) {
            buf_put(&out, t + ls, le - ls + (le < n));
            i = le + 1;
            continue;
        }
        /* the first token of the line, outside comments */
        size_t p = ls;
        if (in_comment) {
            const char *end = strstr(t + ls, "*/");
            if (!end || (size_t)(end - t) > le) {
                buf_put(&out, t + ls, le - ls + (le < n));
                i = le + 1;
                continue;
            }
            in_comment = 0;
            p = (size_t)(end - t) + 2;
        }
        while (p < le && (t[p] == ' ' || t[p] == '\t'))
            p++;
        char *line = xstrndup(t + p, le - p);
        char *pragma = NULL;
        if (p < le && mac__ident_start((unsigned char)t[p])) {
            /* only a macro use or _Pragma(...) alone on the line */
            Buf e = {0};
            char *code = xstrdup(line);
            char *cm = strstr(code, "//");
            if (cm)
                *cm = 0;
            mac__expand(&macros, code, &e, 0, NULL);
            pragma = e.data ? mac__one_pragma(e.data) : NULL;
            buf_free(&e);
            free(code);
            if (pragma) {
                Directive d;
                DirError err;
                int ok = directive_parse(pragma, &d, &err) == 0;
                if (ok) {
                    int ours = d.kind != DIR_OTHER;
                    directive_free(&d);
                    if (!ours) {
                        free(pragma);
                        pragma = NULL;
                    }
                }
                /* a malformed directive of ours: keep it, the parser reports it */
            }
        }
        if (pragma) {
            buf_put(&out, t + ls, p - ls);
            buf_printf(&out, "#pragma %s", pragma);
            changed++;
            free(pragma);
        } else {
            buf_put(&out, t + ls, le - ls);
        }
        if (le < n)
            buf_puts(&out, "\n");
        /* track block comments opened on this line */
        for (const char *q = line; *q; q++) {
            if (q[0] == '/' && q[1] == '*') {
                const char *e = strstr(q + 2, "*/");
                if (!e) {
                    in_comment = 1;
                    break;
                }
                q = e + 1;
            } else if (q[0] == '/' && q[1] == '/') {
                break;
            } else if (*q == '"') {
                q++;
                while (*q && *q != '"') {
                    if (*q == '\\' && q[1])
                        q++;
                    q++;
                }
                if (!*q)
                    break;
            }
        }
        free(line);
        i = le + 1;
    }
    for (int k = 0; k < macros.len; k++) {
        Macro *m = macros.items[k];
        free(m->name);
        free(m->body);
        for (int j = 0; j < m->params.len; j++)
            free(m->params.items[j]);
        vec_free(&m->params);
        free(m);
    }
    vec_free(&macros);
    if (changed) {
        free(src->text);
        src->text = out.data;
        src->len = out.len;
        free(src->lines);
        /* the line table: the same number of lines */
        int cap = src->nlines + 1;
        src->lines = xmalloc(sizeof(size_t) * (size_t)cap);
        src->nlines = 0;
        src->lines[src->nlines++] = 0;
        for (size_t k = 0; k < src->len; k++)
            if (src->text[k] == '\n' && src->nlines < cap)
                src->lines[src->nlines++] = k + 1;
    } else {
        buf_free(&out);
    }
    return changed;
}
