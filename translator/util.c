/* util.c: allocation, strings, buffers, vectors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

static void util__oom(void)
{
    fputs("macc: fatal error: out of memory\n", stderr);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        util__oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        util__oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        util__oom();
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static char *util__vsprintf(const char *fmt, va_list ap, int *len)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    char *p = xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    *len = n;
    return p;
}

char *xsprintf(const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    char *p = util__vsprintf(fmt, ap, &n);
    va_end(ap);
    return p;
}

void buf_put(Buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    if (n) /* s may be NULL then (an empty Buf's data) */
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void buf_puts(Buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

void buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    char *p = util__vsprintf(fmt, ap, &n);
    va_end(ap);
    buf_put(b, p, (size_t)n);
    free(p);
}

void buf_free(Buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void vec_push(Vec *v, void *p)
{
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->items = xrealloc(v->items, sizeof(void *) * (size_t)v->cap);
    }
    v->items[v->len++] = p;
}

void vec_free(Vec *v)
{
    free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}

char *c_escape(const char *s)
{
    Buf b = {0};
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            buf_put(&b, "\\", 1);
        buf_put(&b, s, 1);
    }
    if (!b.data)
        buf_puts(&b, "");
    return b.data;
}

/* ---- string sets ------------------------------------------------------------ */

static uint64_t util__hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

int strset_has(const StrSet *set, const char *s, size_t n)
{
    if (!set->cap)
        return 0;
    for (size_t i = util__hash(s, n) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
        const char *k = set->keys[i];
        if (!k)
            return 0;
        if (strlen(k) == n && !memcmp(k, s, n))
            return 1;
    }
}

int strset_add(StrSet *set, const char *s, size_t n)
{
    if (strset_has(set, s, n))
        return 0;
    if (2 * (set->len + 1) > set->cap) {
        size_t ncap = set->cap ? 2 * set->cap : 64;
        char **keys = xcalloc(ncap, sizeof(char *));
        for (size_t i = 0; i < set->cap; i++) {
            char *k = set->keys[i];
            if (!k)
                continue;
            size_t j = util__hash(k, strlen(k)) & (ncap - 1);
            while (keys[j])
                j = (j + 1) & (ncap - 1);
            keys[j] = k;
        }
        free(set->keys);
        set->keys = keys;
        set->cap = ncap;
    }
    size_t i = util__hash(s, n) & (set->cap - 1);
    while (set->keys[i])
        i = (i + 1) & (set->cap - 1);
    set->keys[i] = xstrndup(s, n);
    set->len++;
    return 1;
}

void strset_free(StrSet *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->keys[i]);
    free(set->keys);
    memset(set, 0, sizeof *set);
}

/* ---- string maps ------------------------------------------------------------ */

static size_t util__map_slot(const StrMap *m, const char *s, size_t n)
{
    for (size_t i = util__hash(s, n) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const char *k = m->keys[i];
        if (!k || (strlen(k) == n && !memcmp(k, s, n)))
            return i;
    }
}

int *strmap_get(const StrMap *m, const char *s, size_t n)
{
    if (!m->cap)
        return NULL;
    size_t i = util__map_slot(m, s, n);
    return m->keys[i] ? &m->vals[i] : NULL;
}

int *strmap_put(StrMap *m, const char *s, size_t n, int val)
{
    int *v = strmap_get(m, s, n);
    if (v)
        return v;
    if (2 * (m->len + 1) > m->cap) {
        StrMap g = {xcalloc(m->cap ? 2 * m->cap : 64, sizeof(char *)), NULL, m->len, m->cap ? 2 * m->cap : 64};
        g.vals = xcalloc(g.cap, sizeof(int));
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = util__map_slot(&g, m->keys[i], strlen(m->keys[i]));
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    size_t i = util__map_slot(m, s, n);
    m->keys[i] = xstrndup(s, n);
    m->vals[i] = val;
    m->len++;
    return &m->vals[i];
}

void strmap_free(StrMap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char *text_squeeze(const char *a, const char *b)
{
    Buf o = {0};
    int space = 0;
    for (; a < b && *a; a++) {
        if (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r') {
            space = o.len > 0;
            continue;
        }
        if (space)
            buf_puts(&o, " ");
        space = 0;
        buf_put(&o, a, 1);
    }
    return o.data ? o.data : xstrdup("");
}

const char *text_paren_end(const char *open)
{
    int depth = 0;
    for (const char *q = open; *q; q++) {
        if (*q == '(')
            depth++;
        else if (*q == ')' && --depth == 0)
            return q;
    }
    return open + strlen(open);
}
