/* diag.c: the source text, its line table, and diagnostics in GCC's form:
 *   file:line:col: error: message
 *    line | source text
 *         |     ^
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

static int source__file_index(Source *s, const char *name)
{
    for (int i = 0; i < s->nfiles; i++)
        if (!strcmp(s->files[i], name))
            return i;
    s->files = xrealloc(s->files, sizeof(char *) * (size_t)(s->nfiles + 1));
    s->cfiles = xrealloc(s->cfiles, sizeof(char *) * (size_t)(s->nfiles + 1));
    s->files[s->nfiles] = xstrdup(name);
    s->cfiles[s->nfiles] = c_escape(name);
    return s->nfiles++;
}

/* A line marker: `# N "file" flags...` (cc -E) or `#line N ["file"]`. On
 * success sets *line, *name (malloc'd, or NULL when absent) and *sys. */
static int source__marker(const char *t, const char *end, int *line, char **name, int *sys)
{
    const char *p = t;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p != '#')
        return 0;
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (end - p >= 4 && !strncmp(p, "line", 4) && (p[4] == ' ' || p[4] == '\t'))
        p += 4;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return 0;
    long n = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (n > 100000000)
            return 0; /* not a line number any file has */
        n = n * 10 + (*p++ - '0');
    }
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    *name = NULL;
    *sys = 0;
    if (p < end && *p == '"') {
        Buf b = {0};
        p++;
        while (p < end && *p != '"') {
            if (*p == '\\' && p + 1 < end)
                p++;
            buf_put(&b, p, 1);
            p++;
        }
        if (p >= end) {
            buf_free(&b);
            return 0;
        }
        p++;
        *name = b.data ? b.data : xstrdup("");
        while (p < end) {
            if (*p == '3')
                *sys = 1;
            else if (*p != ' ' && *p != '\t' && *p != '1' && *p != '2' && *p != '4' && *p != '\r') {
                free(*name);
                *name = NULL;
                return 0;
            }
            p++;
        }
    } else {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p < end)
            return 0;
    }
    *line = (int)n;
    return 1;
}

/* C that tree-sitter-c's grammar lacks, made readable in the parse text only
 * (the text that the emitters copy keeps it; offsets do not move): the type
 * specifier `_Complex` / `__complex__` reads as a qualifier of the same
 * length (`volatile`), so declarations keep their shape and their specifier
 * text (taken from the text) says _Complex; an imaginary constant's suffix
 * (`1.0iF`, `2i`) is blanked, leaving the number. */
static void source__gnu_c(Source *s)
{
    char *p = s->ptext;
    size_t n = s->len, i = 0;
    int line_start = 1;
    while (i < n) {
        char ch = p[i];
        if (ch == '\n') {
            line_start = 1;
            i++;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r') {
            i++;
            continue;
        }
        if (line_start && ch == '#') { /* directives as they are */
            while (i < n && p[i] != '\n')
                i += p[i] == '\\' && i + 1 < n ? 2 : 1;
            continue;
        }
        line_start = 0;
        if (ch == '/' && i + 1 < n && p[i + 1] == '/') {
            while (i < n && p[i] != '\n')
                i++;
            continue;
        }
        if (ch == '/' && i + 1 < n && p[i + 1] == '*') {
            for (i += 2; i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'); i++)
                ;
            i += 2;
            continue;
        }
        if (ch == '"' || ch == '\'') {
            for (i++; i < n && p[i] != ch && p[i] != '\n'; i++)
                if (p[i] == '\\')
                    i++;
            i++;
            continue;
        }
        if (ch >= '0' && ch <= '9') {
            size_t b = i;
            while (i < n && (ident_char(p[i]) || p[i] == '.' ||
                             ((p[i] == '+' || p[i] == '-') && strchr("eEpP", p[i - 1]) &&
                              !(p[b] == '0' && (p[b + 1] == 'x' || p[b + 1] == 'X') && strchr("eE", p[i - 1])))))
                i++;
            /* the suffix: trailing letters after the digits and exponent */
            size_t e = i;
            while (e > b && strchr("iIjJfFlLuU", p[e - 1]))
                e--;
            int imag = 0;
            for (size_t k = e; k < i; k++)
                imag |= strchr("iIjJ", p[k]) != NULL;
            if (imag && !(p[b] == '0' && i > b + 1 && (p[b + 1] == 'x' || p[b + 1] == 'X')))
                memset(p + e, ' ', i - e);
            continue;
        }
        if (!ident_char(ch)) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < n && ident_char(p[i]))
            i++;
        if (i - b == 8 && !memcmp(p + b, "_Complex", 8))
            memcpy(p + b, "volatile", 8);
        else if (i - b == 11 && !memcmp(p + b, "__complex__", 11))
            memcpy(p + b, "   volatile", 11);
    }
}

static Source *source__index(Source *s)
{
    int cap = 64;
    s->lines = xmalloc(sizeof(size_t) * (size_t)cap);
    s->nlines = 0;
    s->lines[s->nlines++] = 0;
    for (size_t i = 0; i < s->len; i++) {
        if (s->text[i] == '\n') {
            if (s->nlines == cap) {
                cap *= 2;
                s->lines = xrealloc(s->lines, sizeof(size_t) * (size_t)cap);
            }
            s->lines[s->nlines++] = i + 1;
        }
    }
    size_t nl = (size_t)s->nlines;
    s->oline = xmalloc(sizeof(int) * nl);
    s->ofile = xmalloc(sizeof(int) * nl);
    s->osys = xcalloc(nl, 1);
    s->omark = xcalloc(nl, 1);
    s->ptext = xmalloc(s->len + 1);
    memcpy(s->ptext, s->text, s->len + 1);
    source__file_index(s, s->path);
    int cur_line = 1, cur_file = 0, cur_sys = 0;
    for (int i = 0; i < s->nlines; i++) {
        size_t b = s->lines[i];
        size_t e = i + 1 < s->nlines ? s->lines[i + 1] - 1 : s->len;
        int ln, sys;
        char *name;
        const char *t = s->text + b;
        /* a marker line: cheap test first (a '#' then a digit or "line") */
        if (e > b && (t[0] == '#' || t[0] == ' ') && source__marker(t, s->text + e, &ln, &name, &sys)) {
            s->omark[i] = 1;
            s->oline[i] = cur_line;
            s->ofile[i] = cur_file;
            s->osys[i] = (unsigned char)cur_sys;
            if (name) {
                if (!s->has_markers && i == 0) {
                    /* cc -E names the main file first */
                    free(s->files[0]);
                    free(s->cfiles[0]);
                    s->files[0] = xstrdup(name);
                    s->cfiles[0] = c_escape(name);
                }
                cur_file = source__file_index(s, name);
                cur_sys = sys;
                free(name);
            }
            s->has_markers = 1;
            cur_line = ln;
            memset(s->ptext + b, ' ', e - b);
            continue;
        }
        s->oline[i] = cur_line++;
        s->ofile[i] = cur_file;
        s->osys[i] = (unsigned char)cur_sys;
    }
    source__gnu_c(s);
    return s;
}

void source_set_path(Source *s, const char *path)
{
    char *old = s->path;
    s->path = xstrdup(path);
    if (s->nfiles && !strcmp(s->files[0], old)) {
        free(s->files[0]);
        free(s->cfiles[0]);
        s->files[0] = xstrdup(path);
        s->cfiles[0] = c_escape(path);
    }
    free(old);
}

Source *source_from_string(const char *path, const char *text, size_t len)
{
    Source *s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    s->text = xstrndup(text, len);
    s->len = len;
    return source__index(s);
}

Source *source_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    Buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_put(&b, chunk, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        buf_free(&b);
        errno = EIO;
        return NULL;
    }
    if (!b.data)
        buf_put(&b, "", 0);
    Source *s = xcalloc(1, sizeof *s);
    s->path = xstrdup(path);
    s->text = b.data;
    s->len = b.len;
    return source__index(s);
}

void source_delete(Source *s)
{
    if (!s)
        return;
    free(s->path);
    free(s->text);
    free(s->ptext);
    free(s->lines);
    free(s->oline);
    free(s->ofile);
    free(s->osys);
    free(s->omark);
    for (int i = 0; i < s->nfiles; i++) {
        free(s->files[i]);
        free(s->cfiles[i]);
    }
    free(s->files);
    free(s->cfiles);
    free(s);
}

int source_line_index(const Source *s, size_t off)
{
    int lo = 0, hi = s->nlines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (s->lines[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void source_position(const Source *s, size_t off, int *line, int *col)
{
    int lo = source_line_index(s, off);
    *line = s->oline[lo];
    *col = (int)(off - s->lines[lo]) + 1;
}

const char *source_file(const Source *s, size_t off)
{
    return s->files[s->ofile[source_line_index(s, off)]];
}

const char *source_cfile(const Source *s, size_t off)
{
    return s->cfiles[s->ofile[source_line_index(s, off)]];
}

int source_in_system(const Source *s, size_t off)
{
    return s->osys[source_line_index(s, off)];
}

void diag_init(Diag *d, const Source *src)
{
    memset(d, 0, sizeof *d);
    d->src = src;
    d->out = stderr;
    d->max_errors = 50;
}

static void diag__emit(Diag *d, size_t off, const char *what, const char *fmt, va_list ap)
{
    FILE *out = d->out ? d->out : stderr;
    const Source *s = d->src;
    int line, col;
    if (off > s->len)
        off = s->len;
    source_position(s, off, &line, &col);
    fprintf(out, "%s:%d:%d: %s: ", source_file(s, off), line, col, what);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    size_t b = s->lines[source_line_index(s, off)], e = b;
    while (e < s->len && s->text[e] != '\n')
        e++;
    if (e > b && s->text[e - 1] == '\r')
        e--;
    fprintf(out, " %5d | %.*s\n       | ", line, (int)(e - b), s->text + b);
    for (size_t i = b; i < b + (size_t)col - 1 && i < e; i++)
        fputc(s->text[i] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

void diag_error(Diag *d, size_t off, const char *fmt, ...)
{
    d->errors++;
    if (d->max_errors && d->errors > d->max_errors) {
        if (d->errors == d->max_errors + 1)
            fprintf(d->out ? d->out : stderr, "%s: note: too many errors, stopping here\n",
                    d->src->path);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    diag__emit(d, off, "error", fmt, ap);
    va_end(ap);
}

void diag_warning(Diag *d, size_t off, const char *fmt, ...)
{
    d->warnings++;
    va_list ap;
    va_start(ap, fmt);
    diag__emit(d, off, "warning", fmt, ap);
    va_end(ap);
}

void diag_note(Diag *d, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag__emit(d, off, "note", fmt, ap);
    va_end(ap);
}

int source_file_is(const Source *s, size_t off, const char *base)
{
    const char *f = source_file(s, off);
    size_t n = strlen(f), b = strlen(base);
    return n >= b && !strcmp(f + n - b, base) && (n == b || f[n - b - 1] == '/');
}
