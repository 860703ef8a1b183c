/* diag.c: the source text, its line table, and diagnostics in GCC's form:
 *   file:line:col: error: message
 *    line | source text
 *         |     ^
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

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
    return s;
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
    free(s->lines);
    free(s);
}

void source_position(const Source *s, size_t off, int *line, int *col)
{
    int lo = 0, hi = s->nlines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (s->lines[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    *line = lo + 1;
    *col = (int)(off - s->lines[lo]) + 1;
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
    fprintf(out, "%s:%d:%d: %s: ", s->path, line, col, what);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    size_t b = s->lines[line - 1], e = b;
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
