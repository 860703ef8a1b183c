/* parse.c: the C syntax tree (tree-sitter-c) and the pragmas in it. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

const char *node_type(TSNode n)
{
    return ts_node_is_null(n) ? "" : ts_node_type(n);
}

int node_is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

char *node_text(const Unit *u, TSNode n)
{
    uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    return xstrndup(u->src->text + b, e - b);
}

TSNode node_field(TSNode n, const char *field)
{
    if (ts_node_is_null(n)) /* tree-sitter 0.20 does not check */
        return n;
    return ts_node_child_by_field_name(n, field, (uint32_t)strlen(field));
}

TSNode node_function_id(TSNode n)
{
    TSNode d = node_field(n, "declarator");
    while (!ts_node_is_null(d) && !node_is(d, "function_declarator"))
        d = node_field(d, "declarator");
    TSNode id = node_field(d, "declarator");
    return node_is(id, "identifier") ? id : (TSNode){0};
}

TSNode node_nth_loop(TSNode stmt, int k)
{
    TSNode n = stmt;
    for (int i = 0; i < k; i++) {
        TSNode body = node_field(n, "body");
        while (node_is(body, "compound_statement")) {
            TSNode only = {0};
            uint32_t nc = ts_node_named_child_count(body);
            for (uint32_t j = 0; j < nc; j++) {
                TSNode x = ts_node_named_child(body, j);
                if (!node_is(x, "comment") && !node_is(x, "preproc_call"))
                    only = x;
            }
            body = only;
        }
        n = body;
    }
    return n;
}

char *spec_unqualified(const char *spec)
{
    Buf b = {0};
    const char *s = spec;
    while (*s) {
        while (*s == ' ')
            s++;
        const char *w = s;
        while (*s && *s != ' ')
            s++;
        size_t n = (size_t)(s - w);
        if (!n)
            break;
        if ((n == 5 && !strncmp(w, "const", 5)) || (n == 8 && !strncmp(w, "volatile", 8)))
            continue;
        if (b.len)
            buf_puts(&b, " ");
        buf_put(&b, w, n);
    }
    if (!b.data)
        buf_puts(&b, "int");
    return b.data;
}

size_t pragma_src_off(const Pragma *p, int i)
{
    size_t n = strlen(p->text);
    if (i < 0)
        i = 0;
    if ((size_t)i >= n)
        return n ? p->offmap[n - 1] + 1 : p->start;
    return p->offmap[i];
}

/* The pragma's text after "#pragma": backslash-newlines joined, comments
 * blanked, with the source offset of every byte kept. */
static void parse__pragma_text(const Source *src, size_t b, size_t e, Pragma *p)
{
    Buf t = {0};
    size_t cap = e - b + 1, n = 0;
    p->offmap = xmalloc(sizeof(size_t) * cap);
    const char *s = src->text;
    size_t i = b;
    char quote = 0;
    while (i < e) {
        if (s[i] == '\\' && i + 1 < e && (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < e && s[i + 2] == '\n'))) {
            i += s[i + 1] == '\n' ? 2 : 3;
            continue;
        }
        if (!quote && s[i] == '/' && i + 1 < e && s[i + 1] == '/')
            break;
        if (!quote && s[i] == '/' && i + 1 < e && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j + 1 < e && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            buf_put(&t, " ", 1);
            p->offmap[n++] = i;
            i = j + 2;
            continue;
        }
        if (quote) {
            if (s[i] == '\\' && i + 1 < e) {
                buf_put(&t, s + i, 2);
                p->offmap[n++] = i;
                p->offmap[n++] = i + 1;
                i += 2;
                continue;
            }
            if (s[i] == quote)
                quote = 0;
        } else if (s[i] == '"' || s[i] == '\'') {
            quote = s[i];
        }
        if (s[i] == '\n' || s[i] == '\r') {
            i++;
            continue;
        }
        buf_put(&t, s + i, 1);
        p->offmap[n++] = i;
        i++;
    }
    if (!t.data)
        buf_put(&t, "", 0);
    p->text = t.data;
}

/* Does the pragma start with a loop directive (omp parallel/for/simd/teams/distribute/loop)? */
static int parse__host_loop(const char *t)
{
    while (*t == ' ' || *t == '\t')
        t++;
    if (strncmp(t, "omp", 3) || (t[3] != ' ' && t[3] != '\t'))
        return 0;
    t += 3;
    while (*t == ' ' || *t == '\t')
        t++;
    static const char *words[] = {"parallel", "for", "simd", "teams", "distribute", "loop", NULL};
    for (int i = 0; words[i]; i++) {
        size_t n = strlen(words[i]);
        if (!strncmp(t, words[i], n) && !(t[n] == '_' || (t[n] >= 'a' && t[n] <= 'z')))
            return 1;
    }
    return 0;
}

static int parse__word(const char **s, const char *w)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(w);
    if (strncmp(p, w, n) || (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '('))
        return 0;
    *s = p + n;
    return 1;
}

/* declare mapper([id:] type var) clauses: recorded for the regions (analyze
 * applies it where a variable of the type is mapped); the line leaves the
 * host file (the C compiler may not know it). Returns 0 after an error. */
static int parse__mapper(Unit *u, Pragma *p, const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    const char *o = s, *close = NULL, *colon = NULL;
    int depth = 0;
    if (*o != '(') {
        diag_error(u->diag, pragma_src_off(p, (int)(o - p->text)), "expected '(' after 'declare mapper'");
        return 0;
    }
    for (const char *q = o; *q && !close; q++) {
        if (*q == '(' || *q == '[')
            depth++;
        else if ((*q == ')' || *q == ']') && --depth == 0)
            close = q;
        else if (*q == ':' && depth == 1 && !colon)
            colon = q;
    }
    const char *tb = colon ? colon + 1 : o + 1, *te = close, *ve;
    while (close && te > tb && (te[-1] == ' ' || te[-1] == '\t'))
        te--;
    ve = te;
    while (close && te > tb && (isalnum((unsigned char)te[-1]) || te[-1] == '_'))
        te--;
    if (!close || te == ve || te == tb || isdigit((unsigned char)*te)) {
        diag_error(u->diag, pragma_src_off(p, (int)(o - p->text)),
                   "expected '([name:] type variable)' after 'declare mapper'");
        return 0;
    }
    Mapper *m = xcalloc(1, sizeof *m);
    m->id = colon ? text_squeeze(o + 1, colon) : xstrdup("default");
    m->type = text_squeeze(tb, te);
    m->var = xstrndup(te, (size_t)(ve - te));
    m->clauses = xstrdup(close + 1);
    m->start = p->start;
    /* the clauses must be map clauses */
    char *t = xsprintf("omp target %s", m->clauses);
    Directive d;
    DirError err;
    int bad = directive_parse(t, &d, &err) != 0;
    for (int i = 0; !bad && i < d.nclauses; i++)
        if (d.clauses[i].kind != CL_MAP) {
            diag_error(u->diag, p->start, "declare mapper: only map clauses are supported, not '%s'",
                       directive_clause_name(d.clauses[i].kind));
            bad = 2;
        }
    if (bad == 1)
        diag_error(u->diag, p->start, "declare mapper: %s", err.msg);
    else
        directive_free(&d);
    free(t);
    vec_push(&u->mappers, m);
    return 1;
}

/* Pragmas of ours that are not directives of the grammar (OpenACC compute
 * constructs are directives of the grammar). Returns 1 when macc implements
 * the line alone and it leaves the host file (`omp requires`, assumptions,
 * declare mapper), 2 when it is kept (u->kept holds it) for a later pass
 * (host tasks with dependences, dispatch, allocate, task lines the host file
 * gets rewritten), 0 when it is not ours. */
static int parse__other(Unit *u, Pragma *p)
{
    const char *s = p->text;
    if (parse__word(&s, "omp") &&
        (parse__word(&s, "assume") || parse__word(&s, "assumes") ||
         ((parse__word(&s, "begin") || parse__word(&s, "end")) && parse__word(&s, "assumes"))))
        return 1; /* assumptions (OpenMP 5.1): promises, no effect on the meaning; GCC 12 lacks them */
    s = p->text;
    if (parse__word(&s, "omp") && parse__word(&s, "allocate")) {
        vec_push(&u->allocates, p);
        return 2;
    }
    s = p->text;
    if (parse__word(&s, "omp") && parse__word(&s, "dispatch")) {
        vec_push(&u->dispatches, p);
        return 2;
    }
    s = p->text;
    if (parse__word(&s, "omp") && parse__word(&s, "declare") && parse__word(&s, "mapper")) {
        parse__mapper(u, p, s);
        return 1;
    }
    s = p->text;
    if (parse__word(&s, "omp") && parse__word(&s, "requires")) {
        /* unified_shared_memory (and unified_address, self_maps): what
         * --managed does for this file: its heap is managed memory, valid on
         * the host and every GPU at the same address */
        if (strstr(s, "unified_shared_memory") || strstr(s, "unified_address") || strstr(s, "self_maps"))
            u->managed = u->requires_usm = 1;
        if (strstr(s, "reverse_offload"))
            diag_error(u->diag, p->start, "'omp requires reverse_offload' is not supported: regions cannot call back to the host");
        return 1;
    }
    s = p->text;
    if (parse__word(&s, "omp") && parse__word(&s, "task")) {
        /* OpenMP 6.0's transparent[(kind)]: the host compiler (GCC 12/13)
         * rejects it; the task's dependences then stay among its own
         * children, as with Clang 16, which ignores the clause too */
        for (const char *q = s; *q; q++) {
            if (strncmp(q, "transparent", 11) || (q > p->text && ident_char(q[-1])) || ident_char(q[11]))
                continue;
            const char *e = q + 11;
            while (*e == ' ' || *e == '\t')
                e++;
            if (*e == '(') {
                e = text_paren_end(e);
                e += *e != 0;
            } else {
                e = q + 11;
            }
            diag_warning(u->diag, pragma_src_off(p, (int)(q - p->text)),
                         "'transparent' (OpenMP 6.0) is ignored: the task's dependences are not seen by its "
                         "parent's other children");
            p->host_text = xsprintf("%.*s%s", (int)(q - p->text), p->text, e);
            vec_push(&u->rewrites, p);
            break;
        }
    }
    s = p->text;
    if (parse__word(&s, "omp") && parse__word(&s, "task") && strstr(s, "depend")) {
        /* a host task with dependences: it may depend on a deferred target
         * region (target nowait depend(out: a), then task depend(in: a)),
         * which libgomp does not see: the host file waits for the runtime's
         * deferred regions first (emit_host) */
        vec_push(&u->host_dep_tasks, p);
        return 2;
    }
    return p->host_text ? 2 : 0;
}

static void parse__pragma_free(Pragma *p)
{
    directive_free(&p->dir);
    free(p->host_text);
    free(p->text);
    free(p->offmap);
    free(p);
}

static void parse__pragmas_free(Vec *v)
{
    for (int i = 0; i < v->len; i++)
        parse__pragma_free(v->items[i]);
    vec_free(v);
}

/* A preproc_call node: a pragma of ours is parsed and kept. */
static void parse__collect_one(Unit *u, TSNode n)
{
    {
        TSNode dirn = node_field(n, "directive");
        if (!ts_node_is_null(dirn)) {
            uint32_t db = ts_node_start_byte(dirn), de = ts_node_end_byte(dirn);
            if (de - db == 7 && memcmp(u->src->text + db, "#pragma", 7) == 0) {
                TSNode arg = node_field(n, "argument");
                Pragma *p = xcalloc(1, sizeof *p);
                p->node = n;
                p->start = ts_node_start_byte(n);
                p->end = ts_node_end_byte(n);
                size_t ab = ts_node_is_null(arg) ? de : ts_node_start_byte(arg);
                size_t ae = ts_node_is_null(arg) ? de : ts_node_end_byte(arg);
                /* the line as the user wrote it (the parse text may have moved its
                 * last character: parse__brace_pragmas) */
                const char *ut = u->src->text;
                while (ae < u->src->len && ut[ae] != '\n' && !(ut[ae] == '\r' && ut[ae + 1] == '\n'))
                    ae++;
                if (p->end > 0 && ut[p->end - 1] != '\n' && p->end < ae + 1)
                    p->end = ae < u->src->len ? ae + 1 : ae;
                parse__pragma_text(u->src, ab, ae, p);
                DirError err;
                int kept;
                int bad = directive_parse(p->text, &p->dir, &err) != 0;
                if (bad && parse__host_loop(p->text)) {
                    /* host OpenMP outside regions passes through to the C compiler,
                     * whatever clauses it has; inside a region it must be ours */
                    memset(&p->dir, 0, sizeof p->dir);
                    p->deferred = 1;
                    p->err = err;
                    vec_push(&u->pragmas, p);
                } else if (bad) {
                    diag_error(u->diag, pragma_src_off(p, err.off), "%s", err.msg);
                    free(p->text);
                    free(p->offmap);
                    free(p);
                } else if (p->dir.kind == DIR_OTHER && (kept = parse__other(u, p)) != 0) {
                    /* handled here: blanked in the host file; or kept for a later pass */
                    vec_push(kept == 1 ? &u->blanks : &u->kept, p);
                } else if (p->dir.kind == DIR_OTHER) {
                    parse__pragma_free(p);
                } else {
                    vec_push(&u->pragmas, p);
                }
            }
        }
    }
}

/* Every pragma of the tree, in order. The text is searched for `#pragma`
 * and the tree asked for the node there (a descent from the root), which
 * costs far less than visiting every node of a unit that holds its system
 * headers. An occurrence that is no preproc_call in the tree (in a comment, a
 * string, a macro's definition) is no pragma. */
static void parse__collect(Unit *u, TSNode root)
{
    const char *t = u->src->ptext, *end = t + u->src->len;
    for (const char *h = t; (h = memchr(h, '#', (size_t)(end - h))) != NULL; h++) {
        if (end - h < 7 || memcmp(h, "#pragma", 7) != 0)
            continue;
        uint32_t b = (uint32_t)(h - t);
        TSNode n = ts_node_named_descendant_for_byte_range(root, b, b + 7);
        while (!ts_node_is_null(n) && ts_node_start_byte(n) == b && !node_is(n, "preproc_call"))
            n = ts_node_parent(n);
        if (!ts_node_is_null(n) && node_is(n, "preproc_call") && ts_node_start_byte(n) == b)
            parse__collect_one(u, n);
    }
}

/* The file-scope nodes in order (conditional groups flattened), walked once
 * with a cursor: lookups of globals and functions scan this array instead of
 * asking the tree for its i-th child (which walks from the first child). */
static void parse__top(Unit *u, TSNode parent)
{
    TSTreeCursor cur = ts_tree_cursor_new(parent);
    if (ts_tree_cursor_goto_first_child(&cur)) {
        do {
            TSNode k = ts_tree_cursor_current_node(&cur);
            if (!ts_node_is_named(k))
                continue;
            const char *t = ts_node_type(k);
            if (!strncmp(t, "preproc_if", 10) || !strcmp(t, "preproc_else") || !strncmp(t, "preproc_elif", 12)) {
                parse__top(u, k);
                continue;
            }
            if (u->ntop == u->captop) {
                u->captop = u->captop ? 2 * u->captop : 256;
                u->top = xrealloc(u->top, sizeof(TSNode) * (size_t)u->captop);
            }
            u->top[u->ntop++] = k;
        } while (ts_tree_cursor_goto_next_sibling(&cur));
    }
    ts_tree_cursor_delete(&cur);
}

/* ---- Directives that stand where C wants one statement ----
 *
 * `for (...)` + `#pragma omp atomic` + `x += 1;` is valid OpenMP, but to C's
 * grammar a #pragma line is not a statement, so tree-sitter sees a loop
 * without a body. And `#pragma omp target parallel` + `#pragma omp single` +
 * `{...}` is one construct whose statement is two nodes (the single line and
 * the block). For both, the parse text gets braces around the directive lines
 * and the statement after them: the '\n' before the first line becomes '{'
 * and a blank after the statement '}'. Offsets do not move, the user's text
 * (what is emitted) is unchanged, and the analysis sees one block. */

typedef struct {
    size_t open;      /* the '\n' before the first braced pragma line */
    size_t from, to;  /* the pragma lines blanked for the statement's parse */
    size_t steal;     /* when not 0: the last character of the pragma line before, made its '\n' */
} ParseBrace;

static int parse__ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Offset of "#" when line i of the parse text is a #pragma line, else -1. */
static long parse__pragma_line(const Source *s, int i)
{
    size_t b = s->lines[i], e = i + 1 < s->nlines ? s->lines[i + 1] : s->len;
    size_t k = b;
    while (k < e && (s->ptext[k] == ' ' || s->ptext[k] == '\t'))
        k++;
    if (k >= e || s->ptext[k] != '#')
        return -1;
    size_t h = k++;
    while (k < e && (s->ptext[k] == ' ' || s->ptext[k] == '\t'))
        k++;
    return e - k >= 6 && !memcmp(s->ptext + k, "pragma", 6) && (k + 6 == e || !ident_char(s->ptext[k + 6])) ? (long)h
                                                                                                             : -1;
}

/* The first word after "omp" of the pragma at `h`, copied into w. */
static void parse__omp_word(const Source *s, size_t h, char *w, size_t cap)
{
    const char *p = s->ptext + h + 1;
    w[0] = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    p += 6;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "omp", 3) || ident_char(p[3]))
        return;
    p += 3;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = 0;
    while (ident_char(p[n]) && n + 1 < cap) {
        w[n] = p[n];
        n++;
    }
    w[n] = 0;
    if (!strcmp(w, "target")) { /* target data/enter/exit/update are not constructs with a body here */
        const char *q = p + n;
        while (*q == ' ' || *q == '\t')
            q++;
        if ((!strncmp(q, "data", 4) && !ident_char(q[4])) || !strncmp(q, "enter", 5) || !strncmp(q, "exit", 4) ||
            !strncmp(q, "update", 6))
            strcpy(w, "target-data");
    }
}

/* Constructs with a statement that macc does not merge into a target line. */
static int parse__host_construct(const char *w)
{
    static const char *const names[] = {"single", "master", "masked", "critical", "sections", "task",
                                        "taskloop", "taskgroup", "ordered", "atomic", "scope"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(w, names[i]))
            return 1;
    return 0;
}

/* Is the text before offset `b` (blanks skipped) the end of a statement head
 * that wants a statement: `)` of for/if/while/switch, `else`, `do`? */
static int parse__after_head(const Source *s, size_t b)
{
    size_t k = b;
    while (k > 0 && parse__ws(s->ptext[k - 1]))
        k--;
    if (k == 0)
        return 0;
    if (s->ptext[k - 1] == ')')
        return 1;
    size_t w = k;
    while (w > 0 && ident_char(s->ptext[w - 1]))
        w--;
    if (w > 0 && s->ptext[w - 1] == '#')
        return 0;
    return (k - w == 4 && !memcmp(s->ptext + w, "else", 4)) || (k - w == 2 && !memcmp(s->ptext + w, "do", 2));
}

static void parse__brace_pragmas(Source *s, TSParser *parser)
{
    Vec braces = {0};
    for (int i = 0; i < s->nlines;) {
        long h = parse__pragma_line(s, i);
        if (h < 0) {
            i++;
            continue;
        }
        int first = i, last = i;
        int j = i + 1;
        for (; j < s->nlines; j++) { /* the run: pragma lines, blank lines between */
            if (parse__pragma_line(s, j) >= 0) {
                last = j;
                continue;
            }
            size_t b = s->lines[j], e = j + 1 < s->nlines ? s->lines[j + 1] : s->len;
            while (b < e && parse__ws(s->ptext[b]))
                b++;
            if (b < e)
                break;
        }
        int open = -1;
        size_t low = 0; /* the '{' goes in [low, the '#' of line open) */
        if (parse__after_head(s, s->lines[first])) {
            open = first;
            low = s->lines[first] > 0 ? s->lines[first] - 1 : 0;
        } else {
            char w[32];
            parse__omp_word(s, (size_t)h, w, sizeof w);
            if (!strcmp(w, "target")) {
                for (int k = first + 1; k <= last && open < 0; k++) {
                    long hk = parse__pragma_line(s, k);
                    if (hk < 0)
                        continue;
                    parse__omp_word(s, (size_t)hk, w, sizeof w);
                    if (parse__host_construct(w))
                        open = k;
                    else
                        low = k + 1 < s->nlines ? s->lines[k + 1] : s->len; /* not the '\n' ending a pragma */
                }
            }
        }
        long ho = open >= 0 ? parse__pragma_line(s, open) : -1;
        if (open > first)
            low = low > s->lines[first + 1] ? low : s->lines[first + 1];
        size_t at = 0, steal = 0;
        if (ho > 0 && (size_t)ho - 1 >= low && parse__ws(s->ptext[ho - 1])) {
            at = (size_t)ho - 1;
        } else if (ho > 0 && open > first) {
            /* no blank before the line (GCC 13's and Clang's -E): the last
             * character of the pragma line before it moves to make room (the
             * line's text is read from the user's text, see parse__collect) */
            int pl = open - 1;
            while (pl > first && parse__pragma_line(s, pl) < 0)
                pl--;
            long hp = parse__pragma_line(s, pl);
            size_t nl = s->lines[pl + 1] - 1;
            if (hp >= 0 && s->ptext[nl] == '\n' && nl > (size_t)hp + 8 && s->ptext[nl - 1] != '\\' &&
                s->ptext[nl - 1] != '\r') {
                at = nl;
                steal = nl - 1;
            }
        }
        if (at) {
            ParseBrace *pb = xcalloc(1, sizeof *pb);
            pb->open = at;
            pb->steal = steal;
            pb->from = s->lines[open];
            pb->to = last + 1 < s->nlines ? s->lines[last + 1] : s->len;
            vec_push(&braces, pb);
        }
        i = j > last ? j : last + 1;
    }
    if (!braces.len)
        return;
    /* the statements after the braced lines, from a parse without them */
    char *t = xmalloc(s->len + 1);
    memcpy(t, s->ptext, s->len + 1);
    for (int i = 0; i < braces.len; i++) {
        ParseBrace *pb = braces.items[i];
        for (size_t k = pb->from; k < pb->to; k++)
            if (t[k] != '\n')
                t[k] = ' ';
    }
    TSTree *tree = ts_parser_parse_string(parser, NULL, t, (uint32_t)s->len);
    unsigned char *placed = xcalloc(s->len + 1, 1);
    for (int i = 0; tree && i < braces.len; i++) {
        ParseBrace *pb = braces.items[i];
        size_t st = pb->to;
        while (st < s->len && parse__ws(t[st]))
            st++;
        if (st >= s->len || !parse__ws(s->ptext[pb->open]))
            continue;
        TSNode n = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), (uint32_t)st, (uint32_t)st);
        for (;;) {
            TSNode p = ts_node_parent(n);
            if (ts_node_is_null(p) || ts_node_start_byte(p) != st || node_is(p, "translation_unit"))
                break;
            n = p;
        }
        const char *ty = node_type(n);
        size_t tl = strlen(ty);
        if (ts_node_start_byte(n) != st || ts_node_has_error(n) ||
            !(tl > 10 && !strcmp(ty + tl - 10, "_statement")))
            continue;
        size_t e = ts_node_end_byte(n);
        while (e < s->len && placed[e])
            e++;
        if (e >= s->len || !parse__ws(s->ptext[e]))
            continue;
        if (pb->steal)
            s->ptext[pb->steal] = '\n';
        s->ptext[pb->open] = '{';
        s->ptext[e] = '}';
        placed[e] = 1;
    }
    if (tree)
        ts_tree_delete(tree);
    free(placed);
    free(t);
    for (int i = 0; i < braces.len; i++)
        free(braces.items[i]);
    vec_free(&braces);
}

/* ---- Casts decided by what is declared ----
 *
 * C's grammar needs the declarations to tell `(x)` the cast from `(x)` the
 * parenthesised expression: `(x[i]) - e` is a subtraction when x is a
 * variable, a cast of `-e` to an array type when x is a type. tree-sitter
 * knows no declarations and reads the cast; `#define AT(a, i) (a[(i)])` makes
 * that common. After the first parse, every cast (and sizeof) whose type is a
 * lone name, with array brackets at most, that the scope declares as a
 * variable, parameter or function has its two parentheses blanked in both
 * texts (` x[i]  - e`: the same expression, since postfix operators bind
 * tighter than any that can follow) and the file is parsed again, so every
 * analysis and both emitters see the expression. `(f)(x)`, a call through a
 * parenthesised name, loses its parentheses the same way. Offsets do not move. */
static void parse__misread_casts(Unit *u, TSNode n, Vec *offs)
{
    if (node_is(n, "cast_expression") || node_is(n, "sizeof_expression")) {
        TSNode ty = node_field(n, "type");
        if (node_is(ty, "type_descriptor")) {
            TSNode name = node_field(ty, "type");
            TSNode d = node_field(ty, "declarator");
            while (node_is(d, "abstract_array_declarator"))
                d = node_field(d, "declarator");
            int simple = node_is(name, "type_identifier") && ts_node_is_null(d);
            for (uint32_t i = 0; simple && i < ts_node_child_count(ty); i++) {
                TSNode k = ts_node_child(ty, i);
                simple = ts_node_eq(k, name) || node_is(k, "abstract_array_declarator");
            }
            /* the parentheses: the tokens just before and after the type */
            TSNode open = ts_node_prev_sibling(ty), close = ts_node_next_sibling(ty);
            if (simple && !ts_node_is_null(open) && !ts_node_is_null(close) && !strcmp(ts_node_type(open), "(") &&
                !strcmp(ts_node_type(close), ")")) {
                char *id = node_text(u, name);
                TSNode where = {0};
                Decl *dl = analyze_lookup(u, name, id, &where);
                if (dl) {
                    size_t *o = xmalloc(2 * sizeof *o);
                    o[0] = ts_node_start_byte(open);
                    o[1] = ts_node_start_byte(close);
                    vec_push(offs, o);
                }
                decl_delete(dl);
                free(id);
            }
        }
    }
    if (node_is(n, "call_expression")) {
        /* `(f)(x)`: a call of f (the parentheses keep a function-like macro
         * from expanding), made `f (x)` so that every analysis sees f called */
        TSNode f = node_field(n, "function");
        if (node_is(f, "parenthesized_expression") && ts_node_child_count(f) == 3 &&
            node_is(ts_node_named_child(f, 0), "identifier")) {
            TSNode id = ts_node_named_child(f, 0);
            char *name = node_text(u, id);
            Decl *dl = analyze_lookup(u, id, name, NULL);
            if (dl) { /* not `(T)(x)` with T a typedef name, which is a cast */
                size_t *o = xmalloc(2 * sizeof *o);
                o[0] = ts_node_start_byte(f);
                o[1] = ts_node_end_byte(f) - 1;
                vec_push(offs, o);
            }
            decl_delete(dl);
            free(name);
        }
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        parse__misread_casts(u, ts_node_child(n, i), offs);
}

static void parse__fix_casts(Unit *u)
{
    Vec offs = {0};
    for (int i = 0; i < u->ntop; i++)
        if (node_is(u->top[i], "function_definition") || node_is(u->top[i], "declaration"))
            parse__misread_casts(u, u->top[i], &offs);
    if (!offs.len)
        return;
    for (int i = 0; i < offs.len; i++) {
        size_t *o = offs.items[i];
        u->src->text[o[0]] = u->src->text[o[1]] = ' ';
        u->src->ptext[o[0]] = u->src->ptext[o[1]] = ' ';
        free(o);
    }
    vec_free(&offs);
    an_index_delete(u->index);
    u->index = NULL;
    TSTree *t = ts_parser_parse_string(u->parser, NULL, u->src->ptext, (uint32_t)u->src->len);
    if (!t)
        return;
    ts_tree_delete(u->tree);
    u->tree = t;
    u->ntop = 0;
    parse__top(u, ts_tree_root_node(u->tree));
}

/* ---- collapse of imperfectly nested loops (OpenMP 5.0) ----
 * `collapse(n)` over loops with code between them (`for (i) { double t =
 * f(i); for (j) { ... } }`): the code between is moved to the start of the
 * inner loop's body, a rotation of the bytes from the first such statement
 * to the inner body's '{' (lengths and offsets elsewhere unchanged). OpenMP
 * leaves the number of times such code runs unspecified; declarations and
 * expressions without effects outside the iteration are what it allows in
 * practice, and what is moved: no loops, jumps, pragmas or code after the
 * inner loop, nothing the inner loop's head uses. Both the user text and the
 * parse text are rotated (emitters read the first), line starts recomputed. */

static int parse__movable(TSNode st)
{
    return node_is(st, "declaration") || node_is(st, "expression_statement");
}

/* One rotation for loop `outer` if its body is `{ intervening; for (...) { ... } }`. */
static int parse__sink_one(Source *s, TSNode outer)
{
    TSNode body = node_field(outer, "body");
    if (!node_is(body, "compound_statement"))
        return 0;
    TSNode inner = {0}, first = {0};
    uint32_t nc = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(body, i);
        if (node_is(c, "comment"))
            continue;
        if (!ts_node_is_null(inner))
            return 0; /* code after the inner loop */
        if (node_is(c, "for_statement")) {
            inner = c;
            continue;
        }
        if (!parse__movable(c))
            return 0;
        if (ts_node_is_null(first))
            first = c;
    }
    if (ts_node_is_null(inner) || ts_node_is_null(first))
        return 0;
    TSNode ib = node_field(inner, "body");
    if (!node_is(ib, "compound_statement") || ts_node_has_error(body))
        return 0;
    /* names the moved declarations declare must not be in the inner loop's head */
    size_t hb = ts_node_start_byte(inner), he = ts_node_start_byte(ib);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(body, i);
        if (!node_is(c, "declaration"))
            continue;
        for (uint32_t j = 0; j < ts_node_named_child_count(c); j++) {
            TSNode d = ts_node_named_child(c, j);
            while (!ts_node_is_null(d) && !node_is(d, "identifier"))
                d = node_field(d, "declarator");
            if (ts_node_is_null(d))
                continue;
            size_t db = ts_node_start_byte(d), dn = ts_node_end_byte(d) - db;
            char name[128];
            if (dn >= sizeof name)
                return 0;
            memcpy(name, s->ptext + db, dn);
            name[dn] = 0;
            for (size_t k = hb; k + dn <= he; k++)
                if (!memcmp(s->ptext + k, name, dn) && !ident_char(s->ptext[k - 1]) && !ident_char(s->ptext[k + dn]))
                    return 0;
        }
    }
    /* rotate [a, m) [m, z): the intervening code, then the inner head up to and with '{' */
    size_t a = ts_node_start_byte(first), m = hb, z = ts_node_start_byte(ib) + 1;
    char *tmp = xmalloc(z - a);
    char *texts[2] = {s->text, s->ptext};
    for (int t = 0; t < 2; t++) {
        memcpy(tmp, texts[t] + m, z - m);
        memcpy(tmp + (z - m), texts[t] + a, m - a);
        memcpy(texts[t] + a, tmp, z - a);
    }
    free(tmp);
    return 1;
}

/* The for statement a loop pragma node applies to (after further pragma
 * lines and comments), else a null node. */
static TSNode parse__pragma_loop(TSNode n)
{
    TSNode x = ts_node_next_named_sibling(n);
    while (node_is(x, "preproc_call") || node_is(x, "comment"))
        x = ts_node_next_named_sibling(x);
    return node_is(x, "for_statement") ? x : (TSNode){0};
}

static int parse__sink_walk(Source *s, TSNode n)
{
    if (node_is(n, "preproc_call")) {
        TSNode arg = node_field(n, "argument");
        if (ts_node_is_null(arg))
            return 0;
        size_t b = ts_node_start_byte(arg), e = ts_node_end_byte(arg);
        const char *c = NULL;
        for (size_t k = b; k + 9 < e && !c; k++)
            if (!memcmp(s->ptext + k, "collapse(", 9) && (k == b || !ident_char(s->ptext[k - 1])))
                c = s->ptext + k + 9;
        if (!c || (strncmp(s->ptext + b, "omp", 3) && strncmp(s->ptext + b, "acc", 3)))
            return 0;
        while (*c == ' ')
            c++;
        if (!strncmp(c, "force", 5)) { /* OpenACC 3.3 collapse(force: n): this very rotation */
            c += 5;
            while (*c == ' ' || *c == ':')
                c++;
        }
        int depth = atoi(c);
        TSNode first = parse__pragma_loop(n);
        for (int k = 1; k < depth && depth <= 8 && !ts_node_is_null(first); k++) {
            TSNode loop = node_nth_loop(first, k - 1); /* the nest, down to the first imperfect level */
            if (!node_is(loop, "for_statement"))
                break;
            if (parse__sink_one(s, loop))
                return 1; /* the tree is stale: parse again */
        }
        return 0;
    }
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (parse__sink_walk(s, ts_node_named_child(n, i)))
            return 1;
    return 0;
}

static void parse__sink_intervening(Source *s, TSParser *parser)
{
    if (!strstr(s->ptext, "collapse"))
        return;
    int changed = 0;
    for (int round = 0; round < 64; round++) {
        TSTree *tree = ts_parser_parse_string(parser, NULL, s->ptext, (uint32_t)s->len);
        if (!tree)
            break;
        int r = parse__sink_walk(s, ts_tree_root_node(tree));
        ts_tree_delete(tree);
        if (!r)
            break;
        changed = 1;
    }
    if (!changed)
        return;
    int k = 1;
    for (size_t i = 0; i < s->len && k < s->nlines; i++)
        if (s->text[i] == '\n')
            s->lines[k++] = i + 1;
}

Unit *parse_unit(Source *src, Diag *diag)
{
    Unit *u = xcalloc(1, sizeof *u);
    u->src = src;
    u->diag = diag;
    u->parser = ts_parser_new();
    if (!u->parser || !ts_parser_set_language(u->parser, tree_sitter_c())) {
        unit_delete(u);
        return NULL;
    }
    parse__sink_intervening(src, u->parser);
    parse__brace_pragmas(src, u->parser);
    u->tree = ts_parser_parse_string(u->parser, NULL, src->ptext, (uint32_t)src->len);
    if (!u->tree) {
        unit_delete(u);
        return NULL;
    }
    parse__top(u, ts_tree_root_node(u->tree));
    parse__fix_casts(u);
    parse__collect(u, ts_tree_root_node(u->tree));
    return u;
}

static void parse__free_maps(Vec *maps, Vec *deps)
{
    for (int i = 0; i < maps->len; i++) {
        RMap *m = maps->items[i];
        free(m->name);
        free(m->base);
        free(m->start);
        free(m->bytes);
        free(m->stride);
        free(m->count);
        free(m);
    }
    vec_free(maps);
    for (int i = 0; i < deps->len; i++) {
        RDep *d = deps->items[i];
        free(d->addr);
        free(d->bytes);
        free(d);
    }
    vec_free(deps);
}

void decl_delete(Decl *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->spec);
    free(d->decl_text);
    free(d->param_bound);
    free(d);
}

void unit_delete(Unit *u)
{
    if (!u)
        return;
    macros_delete(u->macros);
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        vec_free(&r->ifdevs);
        free(r->func_name);
        free(r->name);
        free(r->suffix);
        for (int j = 0; j < r->caps.len; j++) {
            Capture *c = r->caps.items[j];
            free(c->name);
            decl_delete(c->decl);
            free(c);
        }
        vec_free(&r->caps);
        parse__free_maps(&r->maps, &r->deps);
        free(r->device_expr);
        free(r->if_expr);
        for (int j = 0; j < r->loop_vars.len; j++)
            free(r->loop_vars.items[j]);
        vec_free(&r->loop_vars);
        for (int j = 0; j < r->local_types.len; j++)
            free(r->local_types.items[j]);
        vec_free(&r->local_types);
        access_free(r);
        free(r);
    }
    vec_free(&u->regions);
    for (int i = 0; i < u->datas.len; i++) {
        DataConstruct *d = u->datas.items[i];
        free(d->func_name);
        parse__free_maps(&d->maps, &d->deps);
        free(d->device_expr);
        free(d->if_expr);
        for (int j = 0; j < d->usedev.len; j++) {
            free(((UseDev *)d->usedev.items[j])->name);
            free(d->usedev.items[j]);
        }
        vec_free(&d->usedev);
        free(d);
    }
    vec_free(&u->datas);
    parse__pragmas_free(&u->pragmas);
    for (int i = 0; i < u->dtargets.len; i++) {
        DeclTarget *x = u->dtargets.items[i];
        free(x->name);
        free(x);
    }
    vec_free(&u->dtargets);
    for (int i = 0; i < u->devfuncs.len; i++) {
        free(u->devfuncs.items[i]);
        free(u->devfnodes.items[i]);
    }
    vec_free(&u->devfuncs);
    vec_free(&u->devfnodes);
    for (int i = 0; i < u->devexterns.len; i++) {
        free(u->devexterns.items[i]);
        free(u->devextdecls.items[i]);
    }
    vec_free(&u->devexterns);
    vec_free(&u->devextdecls);
    variants_free(u);
    for (int i = 0; i < u->devvars.len; i++) {
        DevVar *v = u->devvars.items[i];
        free(v->name);
        free(v->spec);
        free(v);
    }
    vec_free(&u->devvars);
    free(u->dt_key);
    parse__pragmas_free(&u->blanks);
    parse__pragmas_free(&u->kept);
    vec_free(&u->host_dep_tasks);
    vec_free(&u->dispatches);
    vec_free(&u->allocates);
    vec_free(&u->rewrites);
    for (int i = 0; i < u->mappers.len; i++) {
        Mapper *m = u->mappers.items[i];
        free(m->id);
        free(m->type);
        free(m->var);
        free(m->clauses);
        free(m);
    }
    vec_free(&u->mappers);
    free(u->top);
    an_index_delete(u->index);
    if (u->tree)
        ts_tree_delete(u->tree);
    if (u->parser)
        ts_parser_delete(u->parser);
    free(u);
}
