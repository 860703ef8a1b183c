/* lower_cxx.c: C to CUDA C++, the token level.
 *
 * The device file is compiled by nvcc's C++ front end, but most of its text
 * is the user's C: types and constants copied from the file and its headers,
 * kernel bodies, __device__ copies of the functions regions call. Everything
 * emit_cuda writes into the device file below its includes passes through
 * lower_cxx once, so a C feature that C++ spells differently is handled in
 * one place, whichever part of the emitter copied it:
 *
 *   - identifiers that are C++ keywords (`new`, `class`, `or`, `this`, ...)
 *     become macc_kw_<name>, in declarations and uses alike (struct fields,
 *     enumerators, parameters, labels: every token of that spelling outside
 *     strings, comments and preprocessor lines), so the device file is
 *     consistent with itself; nothing links to those names across files
 *     (device variables are macc_g_<name>, kernels macc_k_<...>);
 *   - C11's keywords without a C++ spelling in nvcc (`_Bool`, `_Alignof`,
 *     `_Alignas`, `_Static_assert`, `_Noreturn`) become C++'s;
 *   - `register` (gone from C++17) and the qualifiers of an array
 *     parameter's brackets (`a[static N]`, `a[restrict]`) are dropped;
 *   - C++ keywords that the emitter itself needs are written macc_cxx_<kw>
 *     (macc_cxx_constexpr) and come out as <kw>;
 *   - complex types (`double _Complex`, `_Complex float`, GNU `__complex__`)
 *     become macc_complex<T> (macc_device.h: the same layout), imaginary
 *     constants (GNU's 2.0i, 1.0iF) macc_complex<T>(0, value).
 *
 * What needs the syntax tree or the declarations (C's implicit conversions,
 * C's NULL, the C library on the device) is lowered where the text is copied
 * (emit_cuda.c: cu__collect_edits, and macc_device.h's macc_c).
 */
#include <stdio.h>
#include <string.h>

#include "macc.h"

/* C++ keywords and alternative tokens that are ordinary identifiers in C.
 * `bool`, `true`, `false` and `decltype` are left alone: the emitter itself
 * writes them, and C code meets them only through <stdbool.h> (`_Bool`, 1, 0);
 * so are wchar_t, char16_t, char32_t and char8_t, C's typedefs of the same
 * types (the device file keeps no system typedef of them). */
static const char *const lower__cxx_keywords[] = {
    "alignas", "alignof", "and", "and_eq", "bitand", "bitor", "catch",
    "class", "co_await", "co_return", "co_yield", "compl", "concept", "const_cast", "consteval", "constexpr",
    "constinit", "delete", "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this", "thread_local", "throw",
    "try", "typeid", "typename", "using", "virtual", "xor", "xor_eq", NULL};

static const struct {
    const char *c, *cxx;
} lower__c11[] = {{"_Bool", "bool"},
                  {"_Alignof", "alignof"},
                  {"_Alignas", "alignas"},
                  {"_Static_assert", "static_assert"},
                  {"_Noreturn", ""},
                  {NULL, NULL}};

int lower_cxx_is_keyword(const char *s, size_t n)
{
    for (int i = 0; lower__cxx_keywords[i]; i++)
        if (strlen(lower__cxx_keywords[i]) == n && !strncmp(lower__cxx_keywords[i], s, n))
            return 1;
    return 0;
}

static int lower__ident_start(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int lower__bracket_qual(const char *w, size_t n)
{
    static const char *const q[] = {"static", "const", "volatile", "restrict", "__restrict", "__restrict__", NULL};
    for (int i = 0; q[i]; i++)
        if (strlen(q[i]) == n && !strncmp(q[i], w, n))
            return 1;
    return 0;
}

void lower_cxx(const char *s, size_t n, Buf *out)
{
    size_t i = 0, copied = 0;
    int line_start = 1;
    while (i < n) {
        char ch = s[i];
        if (ch == '\n') {
            line_start = 1;
            i++;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
            i++;
            continue;
        }
        if (line_start && ch == '#') {
            /* a preprocessor line (#line, #include, #pragma, #define): as it is,
             * continuation lines included */
            while (i < n && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n')
                    i++;
                i++;
            }
            continue;
        }
        line_start = 0;
        if (ch == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
            continue;
        }
        if (ch == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'))
                i++;
            i = i + 2 <= n ? i + 2 : n;
            continue;
        }
        if (ch == '"' || ch == '\'') {
            i++;
            while (i < n && s[i] != ch && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n)
                    i++;
                i++;
            }
            i += i < n && s[i] == ch;
            continue;
        }
        if (ch >= '0' && ch <= '9') {
            /* a number, suffixes and exponents included (1e10, 0x1fULL) */
            size_t b = i;
            int hex = ch == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X');
            while (i < n && (ident_char(s[i]) || s[i] == '.' ||
                             ((s[i] == '+' || s[i] == '-') &&
                              (((s[i - 1] == 'e' || s[i - 1] == 'E') && !hex) || s[i - 1] == 'p' || s[i - 1] == 'P'))))
                i++;
            /* an imaginary constant (GNU C: 2.0i, 1.0iF) */
            size_t e = i;
            while (e > b && strchr(hex ? "iIjJlLuU" : "iIjJfFlLuU", s[e - 1]))
                e--;
            int imag = 0, fl = 0;
            for (size_t k = e; k < i; k++) {
                imag |= strchr("iIjJ", s[k]) != NULL;
                fl |= s[k] == 'f' || s[k] == 'F';
            }
            if (imag) {
                buf_put(out, s + copied, b - copied);
                buf_printf(out, "macc_complex<%s>(0, ", fl ? "float" : "double");
                buf_put(out, s + b, e - b);
                buf_puts(out, fl ? "f)" : ")");
                copied = i;
            }
            continue;
        }
        if (!lower__ident_start(ch)) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < n && ident_char(s[i]))
            i++;
        size_t len = i - b;
        const char *repl = NULL;
        int kw = 0;
        if ((len == 8 && !strncmp(s + b, "_Complex", 8)) || (len == 11 && !strncmp(s + b, "__complex__", 11))) {
            /* with the real type before or after it (none: double) */
            size_t from = b, to = i;
            const char *real = "double";
            size_t p = b;
            while (p > copied && (s[p - 1] == ' ' || s[p - 1] == '\t'))
                p--;
            size_t w = p;
            while (w > copied && ident_char(s[w - 1]))
                w--;
            if ((p - w == 6 && !strncmp(s + w, "double", 6)) || (p - w == 5 && !strncmp(s + w, "float", 5))) {
                real = s[w] == 'd' ? "double" : "float";
                from = w;
                size_t q = w;
                while (q > copied && (s[q - 1] == ' ' || s[q - 1] == '\t'))
                    q--;
                size_t v = q;
                while (v > copied && ident_char(s[v - 1]))
                    v--;
                if (real[0] == 'd' && q - v == 4 && !strncmp(s + v, "long", 4)) {
                    real = "long double";
                    from = v;
                }
            } else {
                size_t q = i;
                while (q < n && (s[q] == ' ' || s[q] == '\t'))
                    q++;
                size_t v = q;
                while (v < n && ident_char(s[v]))
                    v++;
                if (v - q == 4 && !strncmp(s + q, "long", 4)) {
                    size_t r = v;
                    while (r < n && (s[r] == ' ' || s[r] == '\t'))
                        r++;
                    size_t t2 = r;
                    while (t2 < n && ident_char(s[t2]))
                        t2++;
                    if (t2 - r == 6 && !strncmp(s + r, "double", 6)) {
                        real = "long double";
                        to = t2;
                    }
                } else if ((v - q == 6 && !strncmp(s + q, "double", 6)) || (v - q == 5 && !strncmp(s + q, "float", 5))) {
                    real = s[q] == 'd' ? "double" : "float";
                    to = v;
                }
            }
            buf_put(out, s + copied, from - copied);
            buf_printf(out, "macc_complex<%s>", real);
            copied = i = to;
            continue;
        }
        if (lower_cxx_is_keyword(s + b, len)) {
            kw = 1;
        } else if (s[b] == '_') {
            for (int k = 0; lower__c11[k].c; k++)
                if (strlen(lower__c11[k].c) == len && !strncmp(lower__c11[k].c, s + b, len))
                    repl = lower__c11[k].cxx;
        }
        if (!kw && !repl && lower__bracket_qual(s + b, len)) {
            /* `double a[static 4]`, `a[restrict]`, `a[const n]`: C99's
             * qualifiers of an array parameter, which C++ has not */
            size_t q = b;
            for (;;) {
                while (q > 0 && (s[q - 1] == ' ' || s[q - 1] == '\t'))
                    q--;
                size_t w = q;
                while (w > 0 && ident_char(s[w - 1]))
                    w--;
                if (w == q || !lower__bracket_qual(s + w, q - w))
                    break;
                q = w;
            }
            if (q > 0 && s[q - 1] == '[')
                repl = "";
        }
        if (!kw && !repl && len == 8 && !strncmp(s + b, "register", 8))
            repl = ""; /* a storage class C++17 no longer has */
        if (!kw && !repl && len > 9 && !strncmp(s + b, "macc_cxx_", 9)) {
            /* C++ that the emitter itself writes (macc_cxx_constexpr): as C++ */
            buf_put(out, s + copied, b - copied);
            buf_put(out, s + b + 9, len - 9);
            copied = i;
            continue;
        }
        if (!kw && !repl)
            continue;
        buf_put(out, s + copied, b - copied);
        if (kw) {
            buf_puts(out, "macc_kw_");
            buf_put(out, s + b, len);
        } else {
            buf_puts(out, repl);
        }
        copied = i;
    }
    buf_put(out, s + copied, n - copied);
}
