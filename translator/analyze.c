/* analyze.c: attach directives to statements and analyse every region and
 * data construct: captured variables and their data-sharing, mapped sections,
 * dependences, the versions to build, the loop nest and collapse. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"
#include "macc_rt.h"

/* ---- tree helpers ------------------------------------------------------- */

static TSNode an__next_stmt(TSNode n)
{
    TSNode s = ts_node_next_named_sibling(n);
    while (!ts_node_is_null(s) && node_is(s, "comment"))
        s = ts_node_next_named_sibling(s);
    return s;
}

static int an__is_statement(TSNode n)
{
    const char *t = node_type(n);
    size_t l = strlen(t);
    if (strcmp(t, "compound_statement") == 0)
        return 1;
    if (l > 10 && strcmp(t + l - 10, "_statement") == 0)
        return 1;
    return 0;
}

static TSNode an__enclosing(TSNode n, const char *type)
{
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p))
        if (node_is(p, type))
            return p;
    TSNode null = {0};
    return null;
}

static int an__contains(TSNode outer, TSNode inner)
{
    return ts_node_start_byte(inner) >= ts_node_start_byte(outer) &&
           ts_node_end_byte(inner) <= ts_node_end_byte(outer);
}

static int an__has_error(TSNode n, TSNode *where)
{
    if (ts_node_is_missing(n) || node_is(n, "ERROR")) {
        *where = n;
        return 1;
    }
    if (!ts_node_has_error(n))
        return 0;
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        if (an__has_error(ts_node_child(n, i), where))
            return 1;
    return 0;
}

static char *an__func_name(const Unit *u, TSNode func)
{
    TSNode d = node_field(func, "declarator");
    while (!ts_node_is_null(d) && !node_is(d, "identifier")) {
        TSNode inner = node_field(d, "declarator");
        if (ts_node_is_null(inner))
            break;
        d = inner;
    }
    if (node_is(d, "identifier"))
        return node_text(u, d);
    return xstrdup("file");
}

/* ---- declarations -------------------------------------------------------- */

static int an__is_declarator(TSNode n)
{
    const char *t = node_type(n);
    return strcmp(t, "identifier") == 0 || strcmp(t, "pointer_declarator") == 0 ||
           strcmp(t, "array_declarator") == 0 || strcmp(t, "function_declarator") == 0 ||
           strcmp(t, "init_declarator") == 0 || strcmp(t, "parenthesized_declarator") == 0 ||
           strcmp(t, "attributed_declarator") == 0;
}

static TSNode an__declarator_ident(TSNode d)
{
    while (!ts_node_is_null(d) && !node_is(d, "identifier")) {
        if (node_is(d, "parenthesized_declarator") || node_is(d, "attributed_declarator")) {
            d = ts_node_named_child(d, 0);
            continue;
        }
        d = node_field(d, "declarator");
    }
    return d;
}

char *anon_tag(const Unit *u, TSNode spec)
{
    int line, col;
    source_position(u->src, ts_node_start_byte(spec), &line, &col);
    return xsprintf("macc_anon_L%d_%d", line, col);
}

/* Builds the specifier text of a declaration (qualifiers + type, no storage class). */
static char *an__spec_text(const Unit *u, TSNode decl);

char *an_spec_text(const Unit *u, TSNode decl)
{
    return an__spec_text(u, decl);
}

static char *an__spec_text(const Unit *u, TSNode decl)
{
    Buf b = {0};
    uint32_t nc = ts_node_named_child_count(decl);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(decl, i);
        if (an__is_declarator(c) || node_is(c, "storage_class_specifier") || node_is(c, "comment") ||
            node_is(c, "attribute_specifier") || node_is(c, "ms_declspec_modifier"))
            continue;
        if (ts_node_start_byte(c) >= ts_node_start_byte(decl) && b.len)
            buf_puts(&b, " ");
        if ((node_is(c, "struct_specifier") || node_is(c, "union_specifier") || node_is(c, "enum_specifier")) &&
            !ts_node_is_null(node_field(c, "body"))) {
            TSNode name = node_field(c, "name");
            if (node_is(c, "enum_specifier") && ts_node_is_null(name)) {
                buf_puts(&b, "int"); /* an anonymous enumeration: its values are ints */
                continue;
            }
            buf_puts(&b, node_is(c, "struct_specifier") ? "struct " : node_is(c, "union_specifier") ? "union " : "enum ");
            if (!ts_node_is_null(name)) {
                char *t = node_text(u, name);
                buf_puts(&b, t);
                free(t);
            } else {
                char *t = anon_tag(u, c); /* the tag macc gives it where it hoists the definition */
                buf_puts(&b, t);
                free(t);
            }
            continue;
        }
        char *t = node_text(u, c);
        buf_puts(&b, t);
        free(t);
    }
    if (!b.data)
        buf_puts(&b, "int");
    return b.data;
}

static Decl *an__make_decl(const Unit *u, TSNode decl, TSNode d, int is_param, int is_global)
{
    TSNode id = an__declarator_ident(d);
    if (ts_node_is_null(id))
        return NULL;
    Decl *x = xcalloc(1, sizeof *x);
    x->name = node_text(u, id);
    x->spec = an__spec_text(u, decl);
    TSNode dd = node_is(d, "init_declarator") ? node_field(d, "declarator") : d;
    x->has_init = node_is(d, "init_declarator");
    x->declarator = dd;
    x->decl_text = node_text(u, dd);
    x->is_param = is_param;
    x->is_global = is_global;
    uint32_t base = ts_node_start_byte(dd);
    x->id_off = (int)(ts_node_start_byte(id) - base);
    x->id_len = (int)(ts_node_end_byte(id) - ts_node_start_byte(id));
    /* the declarator that directly wraps the name gives the outermost type */
    TSNode w = ts_node_parent(id);
    while (node_is(w, "parenthesized_declarator") || node_is(w, "attributed_declarator"))
        w = ts_node_parent(w);
    if (node_is(w, "pointer_declarator")) {
        int fnptr = 0;
        for (TSNode a = ts_node_parent(w); !ts_node_is_null(a) && an__is_declarator(a); a = ts_node_parent(a))
            if (node_is(a, "function_declarator"))
                fnptr = 1;
        x->is_pointer = !fnptr;
    } else if (node_is(w, "array_declarator")) {
        if (is_param) {
            /* a parameter `T x[]`, `T x[n]`, `T a[][N]` is a pointer: written
             * `T (*x)`, `T (*a)[N]` wherever macc declares a copy of it */
            x->is_pointer = 1;
            TSNode bound = node_field(w, "size");
            if (!ts_node_is_null(bound))
                x->param_bound = node_text(u, bound);
            size_t wo = ts_node_start_byte(w) - base, we = ts_node_end_byte(w) - base;
            char *t = xsprintf("%.*s(*%s)%s", (int)wo, x->decl_text, x->name, x->decl_text + we);
            free(x->decl_text);
            x->decl_text = t;
            x->id_off = (int)wo + 2;
        } else {
            x->is_array = 1;
            x->arr_off = (int)(ts_node_start_byte(w) - base);
            x->arr_len = (int)(ts_node_end_byte(w) - ts_node_start_byte(w));
        }
    } else if (node_is(w, "function_declarator")) {
        x->is_function = 1;
    }
    return x;
}

/* If `decl` (a declaration or parameter_declaration) declares `name`, returns it. */
static Decl *an__decl_match(const Unit *u, TSNode decl, const char *name, int is_param, int is_global)
{
    uint32_t nc = ts_node_named_child_count(decl);
    Decl *found = NULL;
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(decl, i);
        if (!an__is_declarator(c))
            continue;
        TSNode id = an__declarator_ident(c);
        if (ts_node_is_null(id))
            continue;
        uint32_t b = ts_node_start_byte(id), e = ts_node_end_byte(id);
        if (strlen(name) == e - b && memcmp(u->src->text + b, name, e - b) == 0) {
            decl_delete(found);
            found = an__make_decl(u, decl, c, is_param, is_global);
        }
    }
    return found;
}

/* ---- the file-scope index ------------------------------------------------------
 * Built once per unit on first use: every name that a file-scope declaration
 * or function definition declares, in file order (lookups of globals cost a
 * hash probe, not a scan of the file and its headers per identifier), the
 * typedef names of struct and union types, and the file's own function
 * definitions. */

typedef struct AnName {
    uint32_t pos;   /* start byte of the file-scope node */
    int top;        /* its index in u->top */
    TSNode decl;    /* a declaration's declarator naming it, or the function_definition */
    int prev;       /* the previous file-scope declaration of the same name, or -1 */
    int func;       /* a function definition */
} AnName;

struct AnIndex {
    AnName *names;
    int nnames, cap;
    StrMap last;       /* name -> its last entry in names */
    StrSet aggregates; /* typedef names of struct/union types (direct children of the root) */
    StrMap funcs;      /* name -> u->top index of the file's own definition (not a system header's) */
};

static void an__index_add(AnIndex *x, const Unit *u, TSNode id, int top, TSNode decl, int func)
{
    if (x->nnames == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 256;
        x->names = xrealloc(x->names, sizeof *x->names * (size_t)x->cap);
    }
    uint32_t b = ts_node_start_byte(id), e = ts_node_end_byte(id);
    const char *rn = func ? variant_renamed(u, b) : NULL; /* a begin declare variant function */
    int *last = rn ? strmap_put(&x->last, rn, strlen(rn), -1) : strmap_put(&x->last, u->src->text + b, e - b, -1);
    AnName *n = &x->names[x->nnames];
    n->pos = ts_node_start_byte(u->top[top]);
    n->top = top;
    n->decl = decl;
    n->prev = *last;
    n->func = func;
    *last = x->nnames++;
}

static const AnIndex *an__index(const Unit *u)
{
    if (u->index)
        return u->index;
    AnIndex *x = xcalloc(1, sizeof *x);
    TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(u->tree));
    for (int i = 0; i < u->ntop; i++) {
        TSNode c = u->top[i];
        if (node_is(c, "declaration")) {
            ts_tree_cursor_reset(&cur, c);
            for (int ok = ts_tree_cursor_goto_first_child(&cur); ok; ok = ts_tree_cursor_goto_next_sibling(&cur)) {
                TSNode d = ts_tree_cursor_current_node(&cur);
                if (!ts_node_is_named(d) || !an__is_declarator(d))
                    continue;
                TSNode id = an__declarator_ident(d);
                if (!ts_node_is_null(id))
                    an__index_add(x, u, id, i, d, 0);
            }
        } else if (node_is(c, "function_definition")) {
            TSNode fd = node_field(c, "declarator");
            TSNode id = an__declarator_ident(fd);
            if (!ts_node_is_null(id))
                an__index_add(x, u, id, i, c, 1);
            /* an__find_function's definition: declarator chain to a function_declarator naming it */
            TSNode d = fd;
            while (!ts_node_is_null(d) && !node_is(d, "function_declarator"))
                d = node_field(d, "declarator");
            TSNode fid = node_field(d, "declarator");
            if (node_is(fid, "identifier") && !source_in_system(u->src, ts_node_start_byte(c))) {
                uint32_t b = ts_node_start_byte(fid), e = ts_node_end_byte(fid);
                const char *rn = variant_renamed(u, b);
                if (rn)
                    strmap_put(&x->funcs, rn, strlen(rn), i);
                else
                    strmap_put(&x->funcs, u->src->text + b, e - b, i);
            }
        }
    }
    /* struct/union typedefs: the root's own children (not inside conditional groups) */
    ts_tree_cursor_reset(&cur, ts_tree_root_node(u->tree));
    for (int ok = ts_tree_cursor_goto_first_child(&cur); ok; ok = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode k = ts_tree_cursor_current_node(&cur);
        if (!node_is(k, "type_definition"))
            continue;
        TSNode ty = node_field(k, "type");
        if (!node_is(ty, "struct_specifier") && !node_is(ty, "union_specifier"))
            continue;
        uint32_t nc = ts_node_named_child_count(k);
        for (uint32_t j = 0; j < nc; j++) {
            TSNode d = ts_node_named_child(k, j);
            if (node_is(d, "type_identifier"))
                strset_add(&x->aggregates, u->src->text + ts_node_start_byte(d),
                           ts_node_end_byte(d) - ts_node_start_byte(d));
        }
    }
    ts_tree_cursor_delete(&cur);
    ((Unit *)u)->index = x; /* built on first use: every Unit is the caller's, never a const object */
    return x;
}

void an_index_delete(AnIndex *x)
{
    if (!x)
        return;
    free(x->names);
    strmap_free(&x->last);
    strset_free(&x->aggregates);
    strmap_free(&x->funcs);
    free(x);
}

/* The file-scope declaration of `name` before byte `limit` (the last one
 * wins; function definitions only when `global`). */
static Decl *an__file_lookup(const Unit *u, const char *name, uint32_t limit, int global, TSNode *where)
{
    const AnIndex *x = an__index(u);
    const int *last = strmap_get(&x->last, name, strlen(name));
    for (int i = last ? *last : -1; i >= 0; i = x->names[i].prev) {
        const AnName *n = &x->names[i];
        if (n->pos >= limit || (n->func && !global))
            continue;
        Decl *d;
        if (n->func) {
            d = xcalloc(1, sizeof *d);
            d->name = xstrdup(name);
            d->spec = xstrdup("");
            d->decl_text = xstrdup("");
            d->is_function = 1;
            d->is_global = 1;
        } else {
            d = an__make_decl(u, u->top[n->top], n->decl, 0, global);
        }
        if (where)
            *where = u->top[n->top];
        return d;
    }
    return NULL;
}

/* Searches a list of siblings (declarations, possibly inside preprocessor
 * conditionals) before byte `limit`. Last declaration wins. File scope: the
 * index. */
static Decl *an__scan_list(const Unit *u, TSNode parent, const char *name, uint32_t limit, int global,
                           TSNode *where)
{
    if (node_is(parent, "translation_unit"))
        return an__file_lookup(u, name, limit, global, where);
    Decl *found = NULL;
    TSTreeCursor cur = ts_tree_cursor_new(parent);
    for (int ok = ts_tree_cursor_goto_first_child(&cur); ok; ok = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        if (!ts_node_is_named(c))
            continue;
        if (ts_node_start_byte(c) >= limit)
            break;
        Decl *d = NULL;
        if (node_is(c, "declaration")) {
            d = an__decl_match(u, c, name, 0, global);
        } else if (global && node_is(c, "function_definition")) {
            TSNode fd = node_field(c, "declarator");
            TSNode id = an__declarator_ident(fd);
            if (!ts_node_is_null(id)) {
                char *t = node_text(u, id);
                if (strcmp(t, name) == 0) {
                    d = xcalloc(1, sizeof *d);
                    d->name = t;
                    d->spec = xstrdup("");
                    d->decl_text = xstrdup("");
                    d->is_function = 1;
                    d->is_global = 1;
                    t = NULL;
                }
                free(t);
            }
        } else if (strncmp(node_type(c), "preproc_if", 10) == 0 || node_is(c, "preproc_else") ||
                   node_is(c, "preproc_elif")) {
            d = an__scan_list(u, c, name, limit, global, where);
            if (d) {
                decl_delete(found);
                found = d;
                continue;
            }
        }
        if (d) {
            decl_delete(found);
            found = d;
            if (where)
                *where = c;
        }
    }
    ts_tree_cursor_delete(&cur);
    return found;
}

/* Finds the declaration of `name` visible at node `at`. *where receives the
 * declaring node (for the "declared inside the region" test). */
static Decl *an__lookup(const Unit *u, TSNode at, const char *name, TSNode *where)
{
    uint32_t pos = ts_node_start_byte(at);
    for (TSNode p = ts_node_parent(at); !ts_node_is_null(p); p = ts_node_parent(p)) {
        Decl *d = NULL;
        if (node_is(p, "compound_statement") || node_is(p, "translation_unit")) {
            d = an__scan_list(u, p, name, pos, node_is(p, "translation_unit"), where);
        } else if (node_is(p, "for_statement")) {
            TSNode init = node_field(p, "initializer");
            if (node_is(init, "declaration")) {
                d = an__decl_match(u, init, name, 0, 0);
                if (d && where)
                    *where = init;
            }
        } else if (node_is(p, "function_definition")) {
            TSNode fd = node_field(p, "declarator");
            while (!ts_node_is_null(fd) && !node_is(fd, "function_declarator"))
                fd = node_field(fd, "declarator");
            TSNode params = node_field(fd, "parameters");
            uint32_t nc = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params);
            for (uint32_t i = 0; i < nc && !d; i++) {
                TSNode pd = ts_node_named_child(params, i);
                if (node_is(pd, "parameter_declaration")) {
                    d = an__decl_match(u, pd, name, 1, 0);
                    if (d && where)
                        *where = pd;
                }
            }
        }
        if (d)
            return d;
    }
    return NULL;
}

/* ---- expressions inside regions ------------------------------------------ */

/* Is identifier node `id` written (left of an assignment, operand of ++/--,
 * through subscripts, members, derefs and parentheses)? Sets *also_read for
 * compound assignments. */
static int an__is_write(TSNode id, int *also_read)
{
    TSNode n = id;
    *also_read = 0;
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); n = p, p = ts_node_parent(p)) {
        if (node_is(p, "subscript_expression")) {
            TSNode arg = node_field(p, "argument");
            if (!ts_node_eq(arg, n))
                return 0;
            continue;
        }
        if (node_is(p, "field_expression") || node_is(p, "parenthesized_expression") ||
            node_is(p, "pointer_expression"))
            continue;
        if (node_is(p, "assignment_expression")) {
            TSNode left = node_field(p, "left");
            if (!ts_node_eq(left, n))
                return 0;
            TSNode op = node_field(p, "operator");
            *also_read = !(ts_node_end_byte(op) - ts_node_start_byte(op) == 1);
            return 1;
        }
        if (node_is(p, "update_expression")) {
            *also_read = 1;
            return 1;
        }
        return 0;
    }
    return 0;
}

/* Does the identifier's value leave as an address (an array decaying into a
 * call's argument or a pointer, &x, &a[i], a + k)? Then what it names may be
 * written through that address. A subscript, a member or a dereference uses
 * an element; sizeof uses nothing; & of an element leaves again. */
static int an__escapes(TSNode id)
{
    TSNode n = id;
    int elem = 0;
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); n = p, p = ts_node_parent(p)) {
        if (node_is(p, "parenthesized_expression"))
            continue;
        if (node_is(p, "subscript_expression")) {
            if (!ts_node_eq(node_field(p, "argument"), n))
                return 0; /* an index */
            elem = 1;
            continue;
        }
        if (node_is(p, "field_expression")) {
            elem = 1;
            continue;
        }
        if (node_is(p, "pointer_expression")) {
            TSNode op = node_field(p, "operator");
            if (!ts_node_is_null(op) && ts_node_end_byte(op) - ts_node_start_byte(op) == 1 && node_is(op, "&"))
                return 1;
            elem = 1; /* *a */
            continue;
        }
        if (node_is(p, "sizeof_expression") || node_is(p, "alignof_expression"))
            return 0;
        if (node_is(p, "assignment_expression") && ts_node_eq(node_field(p, "left"), n))
            return 0;
        return !elem;
    }
    return 0;
}

typedef struct IdUse {
    char *name;
    TSNode node;      /* first occurrence */
    int read, written;
    int escapes;      /* used as an address somewhere (an__escapes) */
} IdUse;

static IdUse *an__find_use(Vec *uses, const char *name)
{
    for (int i = 0; i < uses->len; i++) {
        IdUse *x = uses->items[i];
        if (strcmp(x->name, name) == 0)
            return x;
    }
    return NULL;
}

static void an__collect_ids(const Unit *u, TSNode n, Vec *uses)
{
    if (node_is(n, "identifier")) {
        TSNode p = ts_node_parent(n);
        /* a declarator's own name is not a use */
        if (an__is_declarator(p) && !node_is(p, "init_declarator")) {
            TSNode d = node_field(p, "declarator");
            if (ts_node_eq(d, n))
                return;
        }
        if (node_is(p, "init_declarator") && ts_node_eq(node_field(p, "declarator"), n))
            return;
        if (node_is(p, "declaration") || node_is(p, "parameter_declaration"))
            return;
        char *name = node_text(u, n);
        IdUse *x = an__find_use(uses, name);
        if (!x) {
            x = xcalloc(1, sizeof *x);
            x->name = name;
            x->node = n;
            vec_push(uses, x);
        } else {
            free(name);
        }
        int also_read;
        if (an__escapes(n))
            x->escapes = 1;
        if (an__is_write(n, &also_read)) {
            x->written = 1;
            if (also_read)
                x->read = 1;
        } else {
            x->read = 1;
        }
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        an__collect_ids(u, ts_node_child(n, i), uses);
}

/* Identifiers in an expression kept as text (clause arguments). */
void an_text_ids(const char *s, Vec *names)
{
    while (s && *s) {
        if (isalpha((unsigned char)*s) || *s == '_') {
            const char *b = s;
            while (isalnum((unsigned char)*s) || *s == '_')
                s++;
            vec_push(names, xstrndup(b, (size_t)(s - b)));
        } else if (isdigit((unsigned char)*s)) {
            while (isalnum((unsigned char)*s) || *s == '.' || *s == '_')
                s++;
        } else {
            s++;
        }
    }
}

/* ---- sections ---------------------------------------------------------- */

static int an__map_kind(int mapt, int always)
{
    int k = 0;
    switch (mapt) {
    case MAPT_TO: k = MACC_MAP_TO; break;
    case MAPT_FROM: k = MACC_MAP_FROM; break;
    case MAPT_TOFROM: k = MACC_MAP_TOFROM; break;
    case MAPT_ALLOC: k = MACC_MAP_ALLOC; break;
    case MAPT_RELEASE: k = MACC_MAP_ALLOC; break;
    case MAPT_DELETE: k = MACC_MAP_ALLOC | MACC_MAP_DELETE | MACC_MAP_DELETE_ALL; break;
    }
    if (always)
        k |= MACC_MAP_ALWAYS;
    return k;
}

/* Computes start/bytes/base expressions of a list item. Returns 0, or -1 after
 * reporting an error. `decl` may be NULL (unknown: a global from a header, a
 * member expression). */
static int an__section(Unit *u, const Pragma *p, const DirItem *it, const Decl *decl, char **start,
                       char **bytes, char **base, int *attach)
{
    const char *B = it->base;
    *attach = 0;
    if (it->nsubs == 0) {
        if (decl && decl->is_array) {
            *start = xsprintf("(void *)(%s)", B);
            *bytes = xsprintf("sizeof(%s)", B);
            *base = xsprintf("(void *)(%s)", B);
        } else if (decl && decl->is_pointer && decl->param_bound && p->dir.is_acc) {
            /* OpenACC, an array parameter with its bound (`double x[N]`): the
             * array, as NVHPC maps it (OpenMP maps the pointer alone) */
            *start = xsprintf("(void *)(%s)", B);
            *bytes = xsprintf("(MACC_SIZE_T)(%s) * sizeof((%s)[0])", decl->param_bound, B);
            *base = xsprintf("(void *)(%s)", B);
        } else if (decl && decl->is_pointer) {
            *start = xsprintf("(void *)(%s)", B);
            *bytes = xstrdup("0");
            *base = xsprintf("(void *)(%s)", B);
            *attach = 1;
        } else {
            *start = xsprintf("(void *)&(%s)", B);
            *bytes = xsprintf("sizeof(%s)", B);
            *base = xsprintf("(void *)&(%s)", B);
        }
        return 0;
    }
    int j = -1;
    for (int i = 0; i < it->nsubs; i++)
        if (it->subs[i].is_section) {
            j = i;
            break;
        }
    Buf prefix = {0};
    buf_printf(&prefix, "(%s)", B);
    int last = j < 0 ? it->nsubs - 1 : j;
    for (int i = 0; i < last; i++)
        buf_printf(&prefix, "[%s]", it->subs[i].lo ? it->subs[i].lo : "0");
    const DirSub *s = &it->subs[last];
    const char *lo = s->lo ? s->lo : "0";
    char *elem = xsprintf("%s[%s]", prefix.data, lo);
    char *len;
    if (j < 0) {
        len = xstrdup("1");
    } else if (s->len) {
        len = xsprintf("(%s)", s->len);
    } else {
        if (last == 0 && decl && decl->is_pointer) {
            diag_error(u->diag, pragma_src_off(p, it->off),
                       "open-ended section of pointer '%s' has no length: write %s[%s:length]", B, B, lo);
            free(elem);
            buf_free(&prefix);
            return -1;
        }
        len = xsprintf("(sizeof(%s) / sizeof((%s)[0]) - (%s))", prefix.data, prefix.data, lo);
    }
    *start = xsprintf("(void *)&%s", elem);
    *bytes = xsprintf("(MACC_SIZE_T)%s * sizeof(%s)", len, elem);
    *base = xsprintf("(void *)(%s)", B);
    free(len);
    free(elem);
    buf_free(&prefix);
    return 0;
}

static RMap *an__add_map(Vec *maps, const char *name, char *base, char *start, char *bytes, int kind,
                         int implicit, size_t off)
{
    RMap *m = xcalloc(1, sizeof *m);
    m->name = xstrdup(name);
    m->base = base;
    m->start = start;
    m->bytes = bytes;
    m->kind = kind;
    m->implicit = implicit;
    m->off = off;
    vec_push(maps, m);
    return m;
}

/* Adds the maps of list items of a clause. */
static void an__items_to_maps(Unit *u, Pragma *p, TSNode at, const DirClause *c, int kind, Vec *maps)
{
    for (int i = 0; i < c->nitems; i++) {
        const DirItem *it = &c->items[i];
        int strided = 0;
        for (int j = 0; j < it->nsubs; j++)
            strided |= it->subs[j].stride != NULL;
        if (strided) {
            /* target update to/from(a[lo:count:stride]): element a[lo], its
             * count and stride kept for the emitter (one update per element) */
            const DirSub *sb = &it->subs[0];
            if (p->dir.kind != DIR_TARGET_UPDATE || it->nsubs != 1 || !sb->len) {
                diag_error(u->diag, pragma_src_off(p, it->off),
                           "array section strides are supported only in 'target update' of a one-dimensional "
                           "section with a length (a[lo:len:stride])");
                continue;
            }
            DirItem one = *it;
            DirSub s1 = {.lo = sb->lo, .len = "1", .is_section = 1};
            one.subs = &s1;
            Decl *d = it->is_ident ? an__lookup(u, at, it->base, NULL) : NULL;
            char *start, *bytes, *base;
            int attach;
            if (an__section(u, p, &one, d, &start, &bytes, &base, &attach) == 0) {
                char *b1 = xsprintf("((long long)(%s) > 0 ? (MACC_SIZE_T)(%s) : 0)", sb->len, bytes);
                free(bytes);
                RMap *m = an__add_map(maps, it->base, base, start, b1, kind, 0, pragma_src_off(p, it->off));
                m->stride = xstrdup(sb->stride);
                m->count = xstrdup(sb->len);
            }
            decl_delete(d);
            continue;
        }
        Decl *d = it->is_ident ? an__lookup(u, at, it->base, NULL) : NULL;
        char *start, *bytes, *base;
        int attach;
        if (an__section(u, p, it, d, &start, &bytes, &base, &attach) == 0) {
            int k = kind;
            if (attach)
                k = (k & ~MACC_MAP_DIR_MASK) | MACC_MAP_ATTACH;
            RMap *m = an__add_map(maps, it->base, base, start, bytes, k, 0, pragma_src_off(p, it->off));
            m->from_value = attach && (kind & MACC_MAP_FROM) && d && d->is_pointer;
        }
        decl_delete(d);
    }
}

static void an__items_to_deps(Unit *u, Pragma *p, TSNode at, const DirClause *c, Vec *deps)
{
    for (int i = 0; i < c->nitems; i++) {
        const DirItem *it = &c->items[i];
        Decl *d = it->is_ident ? an__lookup(u, at, it->base, NULL) : NULL;
        char *start, *bytes, *base;
        int attach;
        if (an__section(u, p, it, d, &start, &bytes, &base, &attach) == 0) {
            if (attach) { /* depend on a pointer variable: its storage, as OpenMP says */
                free(start);
                free(bytes);
                start = xsprintf("(void *)&(%s)", it->base);
                bytes = xsprintf("sizeof(%s)", it->base);
            }
            RDep *r = xcalloc(1, sizeof *r);
            r->addr = start;
            r->bytes = bytes;
            r->kind = c->modifier == DEP_IN ? MACC_DEP_IN : c->modifier == DEP_OUT ? MACC_DEP_OUT : MACC_DEP_INOUT;
            vec_push(deps, r);
            free(base);
        }
        decl_delete(d);
    }
}

static void an__device_clause(const Directive *d, int *device, char **expr)
{
    const DirClause *c = directive_find(d, CL_DEVICE);
    *device = MACC_DEVICE_DEFAULT;
    *expr = NULL;
    if (!c)
        return;
    switch (c->modifier) {
    case DEVSEL_ANY: *device = MACC_DEVICE_ANY; break;
    case DEVSEL_HOST: *device = MACC_DEVICE_HOST; break;
    case DEVSEL_NVIDIA: *device = MACC_DEVICE_NVIDIA; break;
    default: *device = 0; *expr = xstrdup(c->arg ? c->arg : "0"); break;
    }
}

/* ---- data constructs ------------------------------------------------------ */

static int an__acc_kind(ClauseKind k, int *ok)
{
    *ok = 1;
    switch (k) {
    case CL_ACC_COPY: return MACC_MAP_TOFROM;
    case CL_ACC_COPYIN: return MACC_MAP_TO;
    case CL_ACC_COPYOUT: return MACC_MAP_FROM;
    case CL_ACC_CREATE: return MACC_MAP_ALLOC;
    case CL_ACC_PRESENT: return MACC_MAP_ALLOC | MACC_MAP_PRESENT;
    case CL_ACC_NO_CREATE: return MACC_MAP_ALLOC | MACC_MAP_NOCREATE;
    case CL_ACC_DEVICEPTR: return MACC_MAP_DEVICEPTR;
    case CL_ACC_ATTACH: return MACC_MAP_ATTACH;
    case CL_ACC_DETACH: return MACC_MAP_ATTACH;
    case CL_ACC_DELETE: return MACC_MAP_ALLOC;
    case CL_ACC_HOST:
    case CL_ACC_SELF: return MACC_MAP_FROM;
    case CL_ACC_DEVICE: return MACC_MAP_TO;
    case CL_TO: return MACC_MAP_TO;
    case CL_FROM: return MACC_MAP_FROM;
    default: *ok = 0; return 0;
    }
}

/* use_device_ptr / use_device_addr items of a target data construct. A
 * pointer in use_device_ptr, or a section of one in use_device_addr, is
 * shadowed inside the construct by a copy holding the device address; any
 * other variable (use_device_addr, or a non-pointer in use_device_ptr, which
 * OpenMP treats as use_device_addr) is the device's copy. */
static void an__use_device(Unit *u, Pragma *p, const DirClause *c, DataConstruct *dc)
{
    for (int j = 0; j < c->nitems; j++) {
        const DirItem *it = &c->items[j];
        size_t off = pragma_src_off(p, it->off);
        if (!it->is_ident) {
            diag_error(u->diag, off, "'%s' in '%s' must be a variable", it->base,
                       directive_clause_name(c->kind));
            continue;
        }
        Decl *d = an__lookup(u, p->node, it->base, NULL);
        if (!d || d->is_function) {
            diag_error(u->diag, off, "'%s' in '%s' is not a variable declared in this file", it->base,
                       directive_clause_name(c->kind));
            decl_delete(d);
            continue;
        }
        int dup = 0;
        for (int k = 0; k < dc->usedev.len; k++)
            dup |= !strcmp(((UseDev *)dc->usedev.items[k])->name, it->base);
        if (!dup) {
            UseDev *x = xcalloc(1, sizeof *x);
            x->name = xstrdup(it->base);
            x->addr = !(d->is_pointer && (c->kind == CL_USE_DEVICE_PTR || it->nsubs > 0));
            vec_push(&dc->usedev, x);
        }
        decl_delete(d);
    }
}

static void an__data(Unit *u, Pragma *p)
{
    const Directive *d = &p->dir;
    DataConstruct *dc = xcalloc(1, sizeof *dc);
    dc->pragma = p;
    p->used = 1;
    dc->func = an__enclosing(p->node, "function_definition");
    if (ts_node_is_null(dc->func) && d->acc_declare) {
        free(dc); /* acc declare of globals: used where they are (no device copy made) */
        return;
    }
    if (ts_node_is_null(dc->func)) {
        diag_error(u->diag, p->start, "'#pragma %s' outside a function", p->text);
        free(dc);
        return;
    }
    dc->func_name = an__func_name(u, dc->func);
    if (d->acc_declare) {
        dc->stmt = ts_node_parent(p->node); /* acc declare: the enclosing block */
    } else if (d->kind == DIR_TARGET_DATA || d->kind == DIR_ACC_DATA) {
        dc->stmt = an__next_stmt(p->node);
        while (node_is(dc->stmt, "preproc_call")) /* a target region as the block */
            dc->stmt = an__next_stmt(dc->stmt);
        if (!an__is_statement(dc->stmt)) {
            diag_error(u->diag, p->start, "data region has no statement after it");
            free(dc->func_name);
            free(dc);
            return;
        }
    }
    an__device_clause(d, &dc->device, &dc->device_expr);
    int finalize = directive_find(d, CL_ACC_FINALIZE) != NULL;
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        int ok, kind;
        switch (c->kind) {
        case CL_MAP:
            an__items_to_maps(u, p, p->node, c, an__map_kind(c->modifier, c->always), &dc->maps);
            break;
        case CL_DEPEND:
            an__items_to_deps(u, p, p->node, c, &dc->deps);
            break;
        case CL_IF:
            free(dc->if_expr);
            dc->if_expr = xstrdup(c->arg ? c->arg : "1");
            break;
        case CL_NOWAIT:
            dc->nowait = 1;
            break;
        case CL_ACC_ASYNC:
            /* OpenACC: after every deferred task (the queue's work), then at
             * once: the data is present for what follows, in order on its queue */
            break;
        case CL_USE_DEVICE_PTR:
        case CL_USE_DEVICE_ADDR:
            an__use_device(u, p, c, dc);
            break;
        default:
            kind = an__acc_kind(c->kind, &ok);
            if (ok) {
                if (c->kind == CL_ACC_DELETE || ((d->kind == DIR_ACC_EXIT_DATA) && finalize))
                    kind |= finalize ? MACC_MAP_DELETE : 0;
                an__items_to_maps(u, p, p->node, c, kind, &dc->maps);
            }
            break;
        }
    }
    vec_push(&u->datas, dc);
}

/* ---- regions ------------------------------------------------------------ */

/* OpenACC async/wait on a compute construct: async(q) makes the region a
 * deferred task with an inout dependence on queue q's token (tasks of one
 * queue run in order), wait(q, ...) an in dependence on each queue named
 * (after their tasks), a bare wait waits for every queue first. */
static void an__acc_queues(const Directive *t, Region *r)
{
    for (int i = 0; i < t->nclauses; i++) {
        const DirClause *c = &t->clauses[i];
        if (c->kind == CL_ACC_ASYNC) {
            RDep *d = xcalloc(1, sizeof *d);
            r->nowait = 1;
            d->addr = xsprintf("MACC_acc_queue(%s)", c->arg ? c->arg : "MACC_ACC_ASYNC_NOVAL");
            d->bytes = xstrdup("1");
            d->kind = MACC_DEP_INOUT;
            vec_push(&r->deps, d);
        } else if (c->kind == CL_ACC_WAIT) {
            Vec ids = {0};
            const char *a = c->arg;
            /* wait(devnum: n: queues: list) keeps the list */
            const char *q = a ? strstr(a, "queues") : NULL;
            if (q && strchr(q, ':'))
                a = strchr(q, ':') + 1;
            else if (a && strstr(a, "devnum") && strrchr(a, ':'))
                a = strrchr(a, ':') + 1;
            if (!a || !*a) {
                RDep *d = xcalloc(1, sizeof *d);
                d->addr = xstrdup("MACC_acc_wait_all_token()");
                d->bytes = xstrdup("1");
                d->kind = MACC_DEP_IN;
                vec_push(&r->deps, d);
                continue;
            }
            /* split the list at top-level commas */
            int depth = 0;
            const char *b = a;
            for (const char *s = a;; s++) {
                if (*s == '(' || *s == '[')
                    depth++;
                else if (*s == ')' || *s == ']')
                    depth--;
                if (*s == 0 || (*s == ',' && depth == 0)) {
                    RDep *d = xcalloc(1, sizeof *d);
                    d->addr = xsprintf("MACC_acc_queue(%.*s)", (int)(s - b), b);
                    d->bytes = xstrdup("1");
                    d->kind = MACC_DEP_IN;
                    vec_push(&r->deps, d);
                    b = s + 1;
                    if (!*s)
                        break;
                }
            }
            vec_free(&ids);
        }
    }
}

static int an__cap_find(const Region *r, const char *name)
{
    for (int i = 0; i < r->caps.len; i++)
        if (strcmp(((Capture *)r->caps.items[i])->name, name) == 0)
            return i;
    return -1;
}

static int an__map_find(const Vec *maps, const char *name)
{
    for (int i = 0; i < maps->len; i++)
        if (strcmp(((RMap *)maps->items[i])->name, name) == 0)
            return i;
    return -1;
}

static int an__name_in_clause(const Directive *d, ClauseKind k, const char *name)
{
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        if (c->kind != k)
            continue;
        for (int j = 0; j < c->nitems; j++)
            if (c->items[j].is_ident && strcmp(c->items[j].base, name) == 0)
                return 1;
    }
    return 0;
}

/* Is `name` mapped by a data construct that encloses `stmt`, or by any
 * unstructured enter data in the file? */
static int an__data_covers(const Unit *u, TSNode stmt, const char *name)
{
    for (int i = 0; i < u->datas.len; i++) {
        DataConstruct *dc = u->datas.items[i];
        DirKind k = dc->pragma->dir.kind;
        int structured = k == DIR_TARGET_DATA || k == DIR_ACC_DATA;
        if (structured && !an__contains(dc->stmt, stmt))
            continue;
        if (!structured && k != DIR_TARGET_ENTER_DATA && k != DIR_ACC_ENTER_DATA)
            continue;
        if (an__map_find(&dc->maps, name) >= 0)
            return 1;
    }
    return 0;
}

/* Counts the perfectly nested for loops starting at `stmt`. */
static int an__nest_depth(TSNode stmt)
{
    int depth = 0;
    TSNode n = stmt;
    while (node_is(n, "for_statement")) {
        depth++;
        TSNode body = node_field(n, "body");
        while (node_is(body, "compound_statement")) {
            TSNode only = {0};
            int count = 0;
            uint32_t nc = ts_node_named_child_count(body);
            for (uint32_t i = 0; i < nc; i++) {
                TSNode c = ts_node_named_child(body, i);
                if (node_is(c, "comment"))
                    continue;
                if (node_is(c, "preproc_call")) /* an inner pragma (simd) */
                    continue;
                only = c;
                count++;
            }
            if (count != 1)
                return depth;
            body = only;
        }
        n = body;
    }
    return depth;
}

/* Variables assigned in the initialiser of some for loop inside the region
 * (`for (j = 0; ...)` with j declared outside): private. */
static void an__for_init_vars(const Unit *u, TSNode n, Vec *names)
{
    if (node_is(n, "for_statement")) {
        TSNode init = node_field(n, "initializer");
        if (node_is(init, "assignment_expression")) {
            TSNode left = node_field(init, "left");
            if (node_is(left, "identifier"))
                vec_push(names, node_text(u, left));
        } else if (node_is(init, "comma_expression")) {
            TSNode l = node_field(init, "left");
            if (node_is(l, "assignment_expression") && node_is(node_field(l, "left"), "identifier"))
                vec_push(names, node_text(u, node_field(l, "left")));
        }
    }
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        an__for_init_vars(u, ts_node_named_child(n, i), names);
}

static int an__in_names(const Vec *names, const char *s)
{
    for (int i = 0; i < names->len; i++)
        if (strcmp(names->items[i], s) == 0)
            return 1;
    return 0;
}

static void an__free_names(Vec *names)
{
    for (int i = 0; i < names->len; i++)
        free(names->items[i]);
    vec_free(names);
}

/* Whether an identifier of `names` occurs in n. */
static int an__node_uses(const Unit *u, TSNode n, const StrSet *names)
{
    if (ts_node_is_null(n))
        return 0;
    if (node_is(n, "identifier"))
        return node_name_in(u, n, names);
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        if (an__node_uses(u, ts_node_named_child(n, i), names))
            return 1;
    return 0;
}

/* Whether for loop `loop`'s initializer, condition or update uses one of
 * `names` (the variables of the loops around it: a non-rectangular nest). */
static int an__loop_uses(const Unit *u, TSNode loop, const StrSet *names)
{
    return an__node_uses(u, node_field(loop, "initializer"), names) ||
           an__node_uses(u, node_field(loop, "condition"), names) ||
           an__node_uses(u, node_field(loop, "update"), names);
}

static const char *an__cs_name(unsigned cs)
{
    if (cs & CS_LOOP)
        return "loop";
    if (cs & CS_DISTRIBUTE)
        return "distribute";
    if (cs & CS_PARALLEL_FOR)
        return "parallel for";
    if (cs & CS_FOR)
        return "for";
    return "simd";
}

static void an__add_version(Region *r, int kind, int min_cc, int res, int fallback, unsigned cs,
                            const Directive *dir)
{
    if (r->nversions >= 4)
        return;
    RVersion *v = &r->versions[r->nversions++];
    v->kind = kind;
    v->min_cc = min_cc;
    v->resources = res;
    v->fallback = fallback;
    v->cs = cs;
    v->dir = dir;
}

static int an__resources(Unit *u, Pragma *p, const Directive *d)
{
    const DirClause *c = directive_find(d, CL_RESOURCES);
    if (!c)
        return MACC_RES_DEFAULT;
    if (c->ival == -2)
        return MACC_RES_AUTO;
    if (c->ival >= 1 && c->ival <= 100)
        return (int)c->ival;
    diag_error(u->diag, pragma_src_off(p, c->off),
               "resources needs an integer constant from 1 to 100 or 'auto'");
    return MACC_RES_DEFAULT;
}

static int an__merge_clauses(Unit *u, Directive *t, const Pragma *q);

/* Directives on their own lines after a metadirective (`metadirective
 * when(...: teams) ...` then `distribute parallel for`) combine with each of
 * its variants, as with the directive the variant stands for. */
static int an__meta_nested(Unit *u, Pragma *p, const Vec *nested)
{
    Directive *d = &p->dir;
    for (int j = 0; j < d->nvariants; j++) {
        Directive *v = &d->variants[j];
        if (v->arch == ARCH_NONE)
            continue;
        for (int k = 0; k < nested->len; k++) {
            const Pragma *q = nested->items[k];
            unsigned cs = directive_cs_nest(v->cs, q->dir.cs);
            if (!cs) {
                char a[64], b[64];
                directive_cs_text(v->cs, a, sizeof a);
                directive_cs_text(q->dir.cs, b, sizeof b);
                diag_error(u->diag, q->start, "'#pragma omp %s' does not combine with the metadirective's variant '%s'",
                           b, a[0] ? a : "nothing");
                return -1;
            }
            if (an__merge_clauses(u, v, q) < 0)
                return -1;
            v->cs = cs;
        }
    }
    return 0;
}

/* ---- declare mapper ----------------------------------------------------------- */

/* The mapper for a variable of declaration d: the one named id, else the
 * default mapper of its type; NULL if none. */
static const Mapper *an__mapper_for(const Unit *u, const Decl *d, const char *id)
{
    if (!u->mappers.len || d->is_pointer || d->is_array || d->is_function)
        return NULL;
    char *spec = spec_unqualified(d->spec);
    char *t = text_squeeze(spec, spec + strlen(spec)); /* blanks collapsed, as the mapper's type */
    free(spec);
    const Mapper *found = NULL;
    for (int i = u->mappers.len - 1; i >= 0 && !found; i--) {
        const Mapper *m = u->mappers.items[i];
        if (!strcmp(m->type, t) && !strcmp(m->id, id ? id : "default"))
            found = m;
    }
    free(t);
    return found;
}

/* The mapper's clause text with its variable renamed `name`. */
static char *an__mapper_text(const Mapper *m, const char *name)
{
    Buf o = {0};
    size_t vn = strlen(m->var);
    for (const char *a = m->clauses; *a;) {
        int before = a > m->clauses ? (unsigned char)a[-1] : ' ';
        if (!strncmp(a, m->var, vn) && !(isalnum((unsigned char)a[vn]) || a[vn] == '_') &&
            !(isalnum(before) || before == '_' || before == '.' || (before == '>' && a - m->clauses > 1 && a[-2] == '-'))) {
            buf_puts(&o, name);
            a += vn;
            continue;
        }
        buf_put(&o, a, 1);
        a++;
    }
    return o.data ? o.data : xstrdup("");
}

/* The map type of a mapper's clause invoked by a map of type `outer`: what
 * both allow (OpenMP 5.0 declare mapper). */
static int an__mapper_type(int outer, int inner)
{
    if (inner == MAPT_TOFROM)
        return outer;
    if (outer == MAPT_TOFROM || outer == inner)
        return inner;
    if (outer == MAPT_RELEASE || outer == MAPT_DELETE)
        return outer;
    return MAPT_ALLOC;
}

static int an__same_item(const DirItem *a, const DirItem *b)
{
    if (strcmp(a->base, b->base) || a->nsubs != b->nsubs)
        return 0;
    for (int k = 0; k < a->nsubs; k++) {
        const DirSub *x = &a->subs[k], *y = &b->subs[k];
        if (x->is_section != y->is_section || strcmp(x->lo ? x->lo : "", y->lo ? y->lo : "") ||
            strcmp(x->len ? x->len : "", y->len ? y->len : "") ||
            strcmp(x->stride ? x->stride : "", y->stride ? y->stride : ""))
            return 0;
    }
    return 1;
}

/* Is item it already in a map clause of t? */
static int an__mapped_item(const Directive *t, const DirItem *it)
{
    for (int i = 0; i < t->nclauses; i++)
        if (t->clauses[i].kind == CL_MAP)
            for (int j = 0; j < t->clauses[i].nitems; j++)
                if (an__same_item(&t->clauses[i].items[j], it))
                    return 1;
    return 0;
}

/* Replaces, in the target directive, the map of a struct variable whose type
 * has a mapper (map(tofrom: s), map(mapper(id), to: s)), and adds the map of
 * one the region uses with no clause naming it (its default mapper, as
 * map(tofrom: s)), by the mapper's maps, their types combined with the
 * invoking one's (OpenMP 5.0 declare mapper). */
static void an__apply_mappers(Unit *u, Region *r)
{
    Pragma *tp = r->target;
    Directive *t = &tp->dir;
    typedef struct { char *name; char *id; int type, off; } Use;
    Vec want = {0};
    for (int i = 0; i < t->nclauses; i++) {
        DirClause *c = &t->clauses[i];
        if (c->kind != CL_MAP)
            continue;
        for (int j = 0; j < c->nitems; j++) {
            const DirItem *it = &c->items[j];
            int named = c->name && strcmp(c->name, "default");
            if (!it->is_ident || it->nsubs || (!u->mappers.len && !named))
                continue;
            Decl *d = an__lookup(u, tp->node, it->base, NULL);
            const Mapper *m = d ? an__mapper_for(u, d, named ? c->name : NULL) : NULL;
            decl_delete(d);
            if (!m && named) {
                diag_error(u->diag, pragma_src_off(tp, it->off), "no mapper named '%s' for '%s' (declare mapper)",
                           c->name, it->base);
                continue;
            }
            if (!m)
                continue;
            Use *x = xcalloc(1, sizeof *x);
            x->name = xstrdup(it->base);
            x->id = named ? xstrdup(c->name) : NULL;
            x->type = c->modifier;
            x->off = c->off;
            vec_push(&want, x);
            directive_remove_item(c, j--); /* the mapper's maps stand for it */
        }
    }
    if (u->mappers.len) { /* variables no clause names: the default mapper, tofrom */
        Vec uses = {0};
        an__collect_ids(u, r->stmt, &uses);
        static const ClauseKind named[] = {CL_MAP, CL_PRIVATE, CL_FIRSTPRIVATE, CL_IS_DEVICE_PTR, CL_HAS_DEVICE_ADDR,
                                           CL_REDUCTION, CL_LASTPRIVATE};
        for (int i = 0; i < uses.len; i++) {
            IdUse *x = uses.items[i];
            int listed = 0;
            for (size_t k = 0; k < sizeof named / sizeof *named; k++)
                listed |= an__name_in_clause(t, named[k], x->name);
            for (int k = 0; k < want.len; k++)
                listed |= !strcmp(((Use *)want.items[k])->name, x->name);
            TSNode where = {0};
            Decl *d = listed ? NULL : an__lookup(u, x->node, x->name, &where);
            if (d && (ts_node_is_null(where) || !an__contains(r->stmt, where)) && an__mapper_for(u, d, NULL)) {
                Use *w = xcalloc(1, sizeof *w);
                w->name = xstrdup(x->name);
                w->type = MAPT_TOFROM;
                w->off = 0;
                vec_push(&want, w);
            }
            decl_delete(d);
        }
        for (int i = 0; i < uses.len; i++) {
            IdUse *x = uses.items[i];
            free(x->name);
            free(x);
        }
        vec_free(&uses);
    }
    for (int i = 0; i < want.len; i++) {
        Use *x = want.items[i];
        TSNode where = {0};
        Decl *d = an__lookup(u, x->off ? tp->node : r->stmt, x->name, &where);
        const Mapper *m = d ? an__mapper_for(u, d, x->id) : NULL;
        decl_delete(d);
        if (m) {
            char *text = an__mapper_text(m, x->name);
            char *line = xsprintf("omp target %s", text);
            Directive md;
            DirError err;
            if (directive_parse(line, &md, &err) == 0) {
                for (int k = 0; k < md.nclauses; k++) {
                    DirClause *mc = &md.clauses[k];
                    if (mc->kind != CL_MAP)
                        continue;
                    for (int q = 0; q < mc->nitems; q++)
                        if (an__mapped_item(t, &mc->items[q]))
                            directive_remove_item(mc, q--);
                    if (!mc->nitems)
                        continue;
                    mc->modifier = an__mapper_type(x->type, mc->modifier);
                    mc->off = x->off;
                    for (int q = 0; q < mc->nitems; q++)
                        mc->items[q].off = x->off;
                    if (directive_add_clause_copy(t, mc) < 0) {
                        fputs("macc: fatal error: out of memory\n", stderr);
                        exit(1);
                    }
                }
                directive_free(&md);
            }
            if (u->info) {
                int ml, mcol;
                source_position(u->src, m->start, &ml, &mcol);
                diag_note(u->diag, tp->start, "'%s' is mapped by its mapper (declare mapper at line %d):%s", x->name, ml,
                          text);
            }
            free(line);
            free(text);
        }
        free(x->name);
        free(x->id);
        free(x);
    }
    vec_free(&want);
}

static void an__versions(Unit *u, Region *r, const Vec *nested)
{
    const Directive *t = &r->target->dir;
    int have[MACC_DEV_NKINDS] = {0};
    for (int i = 0; i < r->ifdevs.len; i++) {
        Pragma *p = r->ifdevs.items[i];
        const Directive *d = &p->dir;
        if (d->kind == DIR_METADIRECTIVE && nested->len && an__meta_nested(u, p, nested) < 0)
            return;
        if (d->kind == DIR_METADIRECTIVE) {
            const Directive *dflt = NULL;
            for (int j = 0; j < d->nvariants; j++) {
                const Directive *v = &d->variants[j];
                if (v->arch == 0) {
                    dflt = v;
                    continue;
                }
                if (v->arch == ARCH_NONE) /* implementation={vendor(...)} of another vendor */
                    continue;
                int kind = v->arch == ARCH_NVIDIA ? MACC_DEV_NVIDIA : MACC_DEV_HOST;
                if (!have[kind]) {
                    have[kind] = 1;
                    an__add_version(r, kind, v->min_cc, an__resources(u, p, v), 0, v->cs, v);
                }
            }
            if (dflt) {
                for (int kind = 0; kind < MACC_DEV_NKINDS; kind++)
                    if (!have[kind]) {
                        have[kind] = 1;
                        an__add_version(r, kind, 0, an__resources(u, p, dflt), 0, dflt->cs, dflt);
                    }
            }
            continue;
        }
        int kind = d->arch == ARCH_NVIDIA ? MACC_DEV_NVIDIA : MACC_DEV_HOST;
        if (have[kind]) {
            diag_error(u->diag, p->start, "a second if_device line for the same architecture");
            continue;
        }
        have[kind] = 1;
        an__add_version(r, kind, d->min_cc, an__resources(u, p, d), 0, d->cs, d);
    }
    if (r->ifdevs.len == 0) {
        int res = an__resources(u, r->target, t);
        /* OpenACC device_type(nvidia|host) clauses: each version its own */
        const Directive *nv = acc_version_dir(t, ARCH_NVIDIA), *hv = acc_version_dir(t, ARCH_HOST);
        if (r->device != MACC_DEVICE_HOST)
            an__add_version(r, MACC_DEV_NVIDIA, 0, res, 0, nv->cs, nv);
        an__add_version(r, MACC_DEV_HOST, 0, res, r->device == MACC_DEVICE_NVIDIA, hv->cs, hv);
    } else if (!have[MACC_DEV_HOST]) {
        /* host fallback, as OpenMP promises when no device can run the region:
         * the target line's construct-set, else the first version's. */
        unsigned cs = t->cs ? t->cs : r->versions[0].cs;
        const Directive *dir = t->cs ? t : r->versions[0].dir;
        an__add_version(r, MACC_DEV_HOST, 0, MACC_RES_DEFAULT, 1, cs, dir);
    }
}

/* --info: what was decided without the user writing it. */
static void an__info(Unit *u, const Region *r)
{
    static const char *dir[] = {"alloc", "to", "from", "tofrom"};
    for (int i = 0; i < r->caps.len; i++) {
        const Capture *c = r->caps.items[i];
        const RMap *m = c->map >= 0 ? r->maps.items[c->map] : NULL;
        switch (c->kind) {
        case CAP_SCALAR:
            diag_note(u->diag, r->target->start, "'%s' is firstprivate (copied in; writes are not seen after the region)",
                      c->name);
            break;
        case CAP_PRIVATE:
            diag_note(u->diag, r->target->start, "'%s' is private", c->name);
            break;
        default:
            if (m && m->implicit)
                diag_note(u->diag, r->target->start, "'%s' is mapped implicitly: %s, %s bytes", c->name,
                          (m->kind & MACC_MAP_ATTACH) ? "present data (attach)" : dir[m->kind & MACC_MAP_DIR_MASK],
                          m->bytes);
            break;
        }
    }
}

/* defaultmap(behavior[: category]): the implicit behavior per category. */
enum { DM_DEFAULT, DM_ALLOC, DM_TO, DM_FROM, DM_TOFROM, DM_FIRSTPRIVATE, DM_NONE, DM_PRESENT };
enum { DM_SCALAR, DM_AGGREGATE, DM_POINTER, DM_NCAT };

static void an__defaultmap(Unit *u, Pragma *tp, int dm[DM_NCAT])
{
    static const char *const behaviors[] = {"default", "alloc", "to", "from", "tofrom", "firstprivate", "none",
                                            "present"};
    static const char *const cats[] = {"scalar", "aggregate", "pointer"};
    for (int i = 0; i < DM_NCAT; i++)
        dm[i] = DM_DEFAULT;
    const Directive *t = &tp->dir;
    for (int i = 0; i < t->nclauses; i++) {
        const DirClause *c = &t->clauses[i];
        if (c->kind != CL_DEFAULTMAP)
            continue;
        const char *a = c->arg ? c->arg : "";
        const char *colon = strchr(a, ':');
        size_t bl = colon ? (size_t)(colon - a) : strlen(a);
        while (bl && a[bl - 1] == ' ')
            bl--;
        int b = -1;
        for (int k = 0; k < (int)(sizeof behaviors / sizeof behaviors[0]); k++)
            if (strlen(behaviors[k]) == bl && !strncmp(a, behaviors[k], bl))
                b = k;
        const char *cat = colon ? colon + 1 : "all";
        while (*cat == ' ')
            cat++;
        int ci = -2;
        if (!strcmp(cat, "all"))
            ci = -1;
        for (int k = 0; k < DM_NCAT; k++)
            if (!strcmp(cat, cats[k]))
                ci = k;
        if (b < 0 || ci == -2) {
            diag_error(u->diag, pragma_src_off(tp, c->off),
                       "defaultmap(%s): expected defaultmap(alloc|to|from|tofrom|firstprivate|none|default|present"
                       "[: scalar|aggregate|pointer|all])",
                       a);
            continue;
        }
        for (int k = 0; k < DM_NCAT; k++)
            if (ci < 0 || ci == k)
                dm[k] = b;
    }
}

static int an__dm_map_kind(int b)
{
    switch (b) {
    case DM_ALLOC: return MACC_MAP_ALLOC;
    case DM_TO: return MACC_MAP_TO;
    case DM_FROM: return MACC_MAP_FROM;
    case DM_PRESENT: return MACC_MAP_ALLOC | MACC_MAP_PRESENT;
    default: return MACC_MAP_TOFROM;
    }
}

/* Is the type `spec` a struct or union (directly or through a typedef of the file)? */
static int an__is_aggregate(const Unit *u, const char *spec)
{
    const char *s = spec;
    for (;;) {
        while (*s == ' ')
            s++;
        if (!strncmp(s, "const ", 6) || !strncmp(s, "volatile ", 9))
            s += s[0] == 'c' ? 6 : 9;
        else
            break;
    }
    if (!strncmp(s, "struct ", 7) || !strncmp(s, "union ", 6))
        return 1;
    return strset_has(&an__index(u)->aggregates, s, strlen(s));
}

/* Does an array declaration have a dimension that depends on a variable of
 * the function (a variable-length array)? */
static int an__is_vla(const Unit *u, const Decl *d)
{
    TSNode n = d->declarator;
    int vla = 0;
    while (!ts_node_is_null(n) && !vla) {
        if (node_is(n, "array_declarator")) {
            TSNode size = node_field(n, "size");
            if (!ts_node_is_null(size)) {
                char *text = node_text(u, size);
                Vec ids = {0};
                an_text_ids(text, &ids);
                for (int i = 0; i < ids.len && !vla; i++) {
                    if (!strcmp(ids.items[i], "sizeof"))
                        continue;
                    Decl *x = an__lookup(u, size, ids.items[i], NULL);
                    vla = x && !x->is_global && !x->is_function;
                    decl_delete(x);
                }
                for (int i = 0; i < ids.len; i++)
                    free(ids.items[i]);
                vec_free(&ids);
                free(text);
            }
        }
        if (node_is(n, "parenthesized_declarator") || node_is(n, "attributed_declarator"))
            n = ts_node_named_child(n, 0);
        else
            n = node_field(n, "declarator");
    }
    return vla;
}

static void an__local_types(Unit *u, Region *r);

/* ---- directives nested on their own lines ------------------------------------ */

static Pragma *an__pragma_at(const Unit *u, TSNode n)
{
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *x = u->pragmas.items[i];
        if (x->start == ts_node_start_byte(n))
            return x;
    }
    return NULL;
}

/* The first node from n on that is not a #pragma line (ours or another,
 * such as `omp single` between a parallel directive and its block). */
static TSNode an__past_any_pragmas(TSNode n)
{
    while (node_is(n, "preproc_call"))
        n = an__next_stmt(n);
    return n;
}

/* The first node from n on that is not one of our directives. */
static TSNode an__past_pragmas(const Unit *u, TSNode n)
{
    while (node_is(n, "preproc_call") && an__pragma_at(u, n))
        n = an__next_stmt(n);
    return n;
}

/* When compound statement `n` holds only one construct written with our
 * directives on their own lines (directives, then one statement), the node of
 * its first directive; else a null node. */
static TSNode an__sole_construct(const Unit *u, TSNode n)
{
    TSNode null = {0}, first = {0};
    int stmts = 0;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i);
        if (node_is(k, "comment"))
            continue;
        if (node_is(k, "preproc_call")) {
            Pragma *q = an__pragma_at(u, k);
            if (stmts || !q || q->dir.kind != DIR_LOOP)
                return null;
            if (ts_node_is_null(first))
                first = k;
            continue;
        }
        if (ts_node_is_null(first) || ++stmts > 1)
            return null;
    }
    return stmts == 1 ? first : null;
}

/* A block whose only content is a metadirective line and one statement that
 * is not a directive: the metadirective's node, else null. */
static TSNode an__sole_metadirective(const Unit *u, TSNode n)
{
    TSNode null = {0}, meta = {0};
    int stmts = 0;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i);
        if (node_is(k, "comment"))
            continue;
        if (node_is(k, "preproc_call")) {
            Pragma *q = an__pragma_at(u, k);
            if (!ts_node_is_null(meta) && !stmts && q && q->dir.kind == DIR_LOOP)
                continue; /* directives the variants combine with (an__versions) */
            if (stmts || !ts_node_is_null(meta) || !q || q->dir.kind != DIR_METADIRECTIVE)
                return null;
            meta = k;
            continue;
        }
        if (ts_node_is_null(meta) || ++stmts > 1)
            return null;
    }
    return stmts == 1 ? meta : null;
}

/* An if clause that applies to the target construct (no modifier, or target:). */
static int an__if_target(const DirClause *c)
{
    return c->kind == CL_IF && (!c->name || strcmp(c->name, "target") == 0);
}

/* Adds the clauses of q, a directive nested on its own line, to the target
 * line's directive, whose construct-set becomes `cs`: the region is then
 * what the combined construct would be. Returns 0, or -1 after an error. */
static int an__merge_clauses(Unit *u, Directive *t, const Pragma *q)
{
    const Directive *d = &q->dir;
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        if (c->kind == CL_NOWAIT) /* for nowait: the combined construct ends with the region */
            continue;
        if (c->kind == CL_IF && ((c->name && strcmp(c->name, "parallel") != 0) ||
                                 !(d->cs & (CS_PARALLEL | CS_PARALLEL_FOR))))
            continue; /* the if of a simd: no effect here */
        if (directive_clause_unique(c->kind)) {
            for (int j = 0; j < t->nclauses; j++) {
                const DirClause *o = &t->clauses[j];
                if (o->kind != c->kind)
                    continue;
                if (c->kind == CL_IF && !(o->name && strcmp(o->name, "parallel") == 0))
                    continue; /* the target line's if(...) applies to target only */
                diag_error(u->diag, pragma_src_off(q, c->off),
                           "duplicate clause '%s': an enclosing directive of the combined construct has it too",
                           directive_clause_name(c->kind));
                return -1;
            }
        }
        if (directive_add_clause_copy(t, c) < 0) {
            fputs("macc: fatal error: out of memory\n", stderr);
            exit(1);
        }
        DirClause *x = &t->clauses[t->nclauses - 1];
        if (x->kind == CL_IF && !x->name)
            x->name = xstrdup("parallel"); /* the nested parallel's own if */
    }
    return 0;
}

static int an__merge_nested(Unit *u, Pragma *tp, Pragma *q, unsigned cs)
{
    Directive *t = &tp->dir;
    const Directive *d = &q->dir;
    if (an__merge_clauses(u, t, q) < 0)
        return -1;
    t->cs = cs;
    t->acc_par |= d->acc_par; /* an acc loop's gang/vector/independent */
    q->used = 1;
    return 0;
}

/* The pragma a clause of the (combined) target directive was written on. */
static Pragma *an__clause_pragma(Pragma *tp, const Vec *nested, const DirClause *c)
{
    for (int i = 0; i < nested->len; i++) {
        Pragma *q = nested->items[i];
        for (int j = 0; j < q->dir.nclauses; j++) {
            const DirClause *x = &q->dir.clauses[j];
            if (x->kind == c->kind && x->off == c->off &&
                ((!x->arg && !c->arg) || (x->arg && c->arg && strcmp(x->arg, c->arg) == 0)))
                return q;
        }
    }
    return tp;
}

/* Follows the directives nested on their own lines after the target line
 * (and its if_device lines) from node n: `target` + `teams` + `distribute
 * parallel for`, with or without braces holding only the nested construct,
 * merging each into the target line's directive. Sets r->stmt and r->span;
 * returns 0, or -1 after an error. */
static int an__nested(Unit *u, Region *r, TSNode n, Vec *nested, Pragma **loop_from)
{
    Pragma *tp = r->target;
    TSNode span = {0};
    *loop_from = NULL;
    for (;;) {
        if (node_is(n, "preproc_call")) {
            Pragma *q = an__pragma_at(u, n);
            if (q && q->deferred) { /* a loop directive we could not parse */
                diag_error(u->diag, pragma_src_off(q, q->err.off), "%s", q->err.msg);
                return -1;
            }
            if (!q || q->dir.kind != DIR_LOOP)
                break;
            if (q->dir.acc && q->dir.cs && tp->dir.acc == ACC_SERIAL && !(tp->dir.cs & CS_LOOPS)) {
                /* acc loop right after serial: one thread runs it as it is; its
                 * private and reduction clauses are the construct's */
                if (an__merge_nested(u, tp, q, tp->dir.cs) < 0)
                    return -1;
                n = an__next_stmt(q->node);
                continue;
            }
            if (q->dir.acc && !q->dir.cs && !(tp->dir.cs & CS_LOOPS)) {
                /* acc loop seq right after the compute construct: the loop runs as it is */
                tp->dir.acc_par |= q->dir.acc_par;
                q->used = 1;
                n = an__next_stmt(q->node);
                continue;
            }
            unsigned cs = directive_cs_nest(tp->dir.cs, q->dir.cs);
            if (!cs) {
                char a[64], b[64];
                const char *hint = "put braces around it";
                directive_cs_text(tp->dir.cs, a, sizeof a);
                directive_cs_text(q->dir.cs, b, sizeof b);
                if (tp->dir.cs & CS_TEAMS)
                    hint = "inside 'teams' write 'distribute ...' or 'loop', or put braces around it";
                else if (q->dir.cs & CS_FOR)
                    hint = "'for' needs an enclosing 'parallel'";
                else if (tp->dir.cs & CS_PARALLEL)
                    hint = "inside 'parallel' write 'for' or 'loop', or put braces around it";
                if (tp->dir.cs & CS_LOOPS)
                    diag_error(u->diag, q->start, "'%s' needs a for loop as the next statement, not '#pragma omp %s'",
                               an__cs_name(tp->dir.cs), b);
                else
                    diag_error(u->diag, q->start,
                               "'#pragma omp %s' directly inside 'target%s%s' is not a combined construct (%s)", b,
                               a[0] ? " " : "", a, hint);
                return -1;
            }
            if (an__merge_nested(u, tp, q, cs) < 0)
                return -1;
            vec_push(nested, q);
            if (q->dir.cs & CS_LOOPS)
                *loop_from = q;
            n = an__next_stmt(q->node);
            continue;
        }
        if (node_is(n, "compound_statement")) {
            TSNode first = an__sole_construct(u, n);
            Pragma *q = ts_node_is_null(first) ? NULL : an__pragma_at(u, first);
            if (q && directive_cs_nest(tp->dir.cs, q->dir.cs)) {
                if (ts_node_is_null(span))
                    span = n;
                n = first;
                continue;
            }
            /* `target { metadirective ... stmt }`: the metadirective as if it
             * followed the target line (the block holds nothing else) */
            TSNode meta = r->ifdevs.len || nested->len ? (TSNode){0} : an__sole_metadirective(u, n);
            Pragma *mq = ts_node_is_null(meta) ? NULL : an__pragma_at(u, meta);
            if (mq) {
                mq->used = 1;
                vec_push(&r->ifdevs, mq);
                if (ts_node_is_null(span))
                    span = n;
                n = an__next_stmt(mq->node);
                continue;
            }
        }
        break;
    }
    if (node_is(n, "preproc_call")) {
        /* a host construct's line (single, critical, ...) right after the
         * target lines: parse.c braces it with its statement when the text
         * has room (cc -E output from GCC has); else the user must */
        char *t = node_text(u, n);
        char *nl = strchr(t, '\n');
        if (nl)
            *nl = 0;
        diag_error(u->diag, ts_node_start_byte(n), "'%s' right after a target directive: put braces around it and its statement", t);
        free(t);
        return -1;
    }
    if (!an__is_statement(n)) {
        diag_error(u->diag, tp->start, "target directive has no statement after it");
        return -1;
    }
    r->stmt = n;
    r->span = ts_node_is_null(span) ? n : span;
    return 0;
}

static void an__region(Unit *u, Pragma *tp)
{
    Region *r = xcalloc(1, sizeof *r);
    r->target = tp;
    tp->used = 1;
    TSNode n = an__next_stmt(tp->node);
    while (node_is(n, "preproc_call")) {
        Pragma *q = NULL;
        for (int i = 0; i < u->pragmas.len; i++) {
            Pragma *x = u->pragmas.items[i];
            if (x->start == ts_node_start_byte(n))
                q = x;
        }
        if (!q || (q->dir.kind != DIR_IF_DEVICE && q->dir.kind != DIR_METADIRECTIVE))
            break;
        q->used = 1;
        vec_push(&r->ifdevs, q);
        n = an__next_stmt(n);
    }
    r->func = an__enclosing(tp->node, "function_definition");
    if (ts_node_is_null(r->func)) {
        diag_error(u->diag, tp->start, "target region outside a function");
        vec_free(&r->ifdevs);
        free(r);
        return;
    }
    Vec nested = {0};
    Pragma *loop_from = NULL;
    if (an__nested(u, r, n, &nested, &loop_from) < 0) {
        vec_free(&nested);
        vec_free(&r->ifdevs);
        free(r);
        return;
    }
    r->func_name = an__func_name(u, r->func);
    source_position(u->src, tp->start, &r->line, &r->col);
    int same = 0;
    for (int i = 0; i < u->regions.len; i++) {
        Region *o = u->regions.items[i];
        if (o->line == r->line && strcmp(o->func_name, r->func_name) == 0)
            same++;
    }
    r->suffix = same ? xsprintf("%s_L%d_%d", r->func_name, r->line, same)
                     : xsprintf("%s_L%d", r->func_name, r->line);
    r->name = xsprintf("macc_k_%s", r->suffix);

    const Directive *t = &tp->dir;
    an__device_clause(t, &r->device, &r->device_expr);
    r->nowait = directive_find(t, CL_NOWAIT) != NULL;
    for (int i = 0; i < t->nclauses && !r->if_expr; i++)
        if (an__if_target(&t->clauses[i]))
            r->if_expr = xstrdup(t->clauses[i].arg ? t->clauses[i].arg : "1");

    TSNode err;
    if (an__has_error(r->func, &err)) {
        /* the analysis of a broken tree could be wrong: report, go no further */
        diag_error(u->diag, ts_node_start_byte(err), "syntax error in a function with a target region");
        vec_free(&nested);
        vec_free(&r->ifdevs);
        free(r->func_name);
        free(r->suffix);
        free(r->name);
        free(r->device_expr);
        free(r->if_expr);
        free(r);
        return;
    }

    acc_region_prepare(u, r);
    an__versions(u, r, &nested);

    /* loop nest and collapse */
    r->nest_depth = an__nest_depth(r->stmt);
    r->collapse = 1;
    unsigned loopcs = 0;
    for (int i = 0; i < r->nversions; i++) {
        const RVersion *v = &r->versions[i];
        if (v->cs & CS_LOOPS) {
            loopcs |= v->cs;
            const DirClause *c = directive_find(v->dir, CL_COLLAPSE);
            if (c && c->ival > r->collapse)
                r->collapse = (int)c->ival;
        }
    }
    if (loopcs && !node_is(r->stmt, "for_statement")) {
        Pragma *lp = loop_from ? loop_from : tp;
        for (int i = 0; i < r->ifdevs.len; i++) {
            Pragma *q = r->ifdevs.items[i];
            if (!(t->cs & CS_LOOPS) && (q->dir.cs & CS_LOOPS) && lp == tp)
                lp = q;
        }
        diag_error(u->diag, lp->start, "'%s' needs a for loop as the next statement", an__cs_name(loopcs));
    } else if (loopcs && r->collapse > r->nest_depth && t->acc) {
        r->collapse = r->nest_depth; /* OpenACC collapse(force: n): the perfectly nested loops */
    } else if (loopcs && r->collapse > r->nest_depth) {
        const DirClause *c = NULL;
        Pragma *cp = tp;
        for (int i = 0; i < r->nversions && !c; i++) {
            c = directive_find(r->versions[i].dir, CL_COLLAPSE);
            if (c && c->ival == r->collapse && r->versions[i].dir != t) {
                for (int j = 0; j < r->ifdevs.len; j++) {
                    Pragma *q = r->ifdevs.items[j];
                    if (&q->dir == r->versions[i].dir)
                        cp = q;
                }
            } else if (c && c->ival == r->collapse) {
                cp = an__clause_pragma(tp, &nested, c);
            } else if (!(c && c->ival == r->collapse)) {
                c = NULL;
            }
        }
        diag_error(u->diag, c ? pragma_src_off(cp, c->off) : cp->start,
                   "collapse(%d) is deeper than the loop nest (%d perfectly nested for loop%s)", r->collapse,
                   r->nest_depth, r->nest_depth == 1 ? "" : "s");
    }
    if (loopcs && node_is(r->stmt, "for_statement")) {
        StrSet outer = {0}; /* the collapsed loops' variables, declared ones too */
        for (int k = 0; k < r->collapse && k < r->nest_depth; k++) {
            TSNode loop = node_nth_loop(r->stmt, k);
            if (k > 0 && an__loop_uses(u, loop, &outer)) {
                /* a non-rectangular nest (OpenMP 5.0: an inner loop's bounds
                 * use an outer loop's variable): the loops before it are
                 * collapsed and the rest run inside each of their iterations
                 * (the kernel's collapsed space needs rectangular trip
                 * counts; gcc 12's collapse of such a nest crashes) */
                r->collapse_clause = r->collapse;
                r->collapse = k;
                break;
            }
            TSNode init = node_field(loop, "initializer"), var = {0};
            if (node_is(init, "assignment_expression") && node_is(node_field(init, "left"), "identifier")) {
                var = node_field(init, "left");
                vec_push(&r->loop_vars, node_text(u, var));
            } else if (node_is(init, "declaration") && node_is(node_field(init, "declarator"), "init_declarator")) {
                var = node_field(node_field(init, "declarator"), "declarator");
            }
            if (node_is(var, "identifier"))
                strset_add(&outer, u->src->text + ts_node_start_byte(var),
                           ts_node_end_byte(var) - ts_node_start_byte(var));
        }
        strset_free(&outer);
    }

    an__apply_mappers(u, r);

    /* explicit maps and dependences */
    for (int i = 0; i < t->nclauses; i++) {
        const DirClause *c = &t->clauses[i];
        int ok, kind = t->is_acc ? an__acc_kind(c->kind, &ok) : (ok = 0);
        if (c->kind == CL_MAP)
            an__items_to_maps(u, tp, tp->node, c, an__map_kind(c->modifier, c->always), &r->maps);
        else if (c->kind == CL_DEPEND)
            an__items_to_deps(u, tp, tp->node, c, &r->deps);
        else if (ok) /* OpenACC data clauses: the maps of the region; with an if
                      * clause, present is not checked (false: the host runs it
                      * without its data clauses) */
            an__items_to_maps(u, tp, tp->node, c, r->if_expr ? kind & ~MACC_MAP_PRESENT : kind, &r->maps);
    }
    if (t->is_acc)
        an__acc_queues(t, r);

    int dm[DM_NCAT];
    an__defaultmap(u, tp, dm);

    /* variables the region uses */
    Vec uses = {0}, forvars = {0}, clause_ids = {0};
    an__collect_ids(u, r->stmt, &uses);
    an__for_init_vars(u, r->stmt, &forvars);
    for (int i = 0; i < r->nversions; i++) {
        const Directive *d = r->versions[i].dir;
        for (int j = 0; j < d->nclauses; j++) {
            const DirClause *c = &d->clauses[j];
            if (c->kind == CL_NUM_THREADS || c->kind == CL_SCHEDULE || c->kind == CL_NUM_TEAMS ||
                c->kind == CL_THREAD_LIMIT || c->kind == CL_IF || c->kind == CL_DIST_SCHEDULE)
                an_text_ids(c->arg, &clause_ids);
            if (c->kind == CL_LINEAR) { /* the step, evaluated as the region starts */
                char *st = directive_linear_step(c);
                an_text_ids(st, &clause_ids);
                free(st);
            }
        }
    }
    for (int i = 0; i < clause_ids.len; i++) {
        if (!an__find_use(&uses, clause_ids.items[i])) {
            IdUse *x = xcalloc(1, sizeof *x);
            x->name = xstrdup(clause_ids.items[i]);
            x->node = r->stmt;
            x->read = 1;
            vec_push(&uses, x);
        }
    }

    for (int i = 0; i < uses.len; i++) {
        IdUse *x = uses.items[i];
        TSNode where = {0};
        Decl *d = an__lookup(u, x->node, x->name, &where);
        if (!d)
            goto next; /* a macro, an enum constant, or declared in a header */
        if (!ts_node_is_null(where) && an__contains(r->stmt, where))
            goto next; /* declared inside the region */
        if (d->is_function)
            goto next;
        int reduction = 0, lastpriv = 0, priv = 0, fpriv = 0, fp_all = 1, vpriv = 0;
        for (int k = 0; k < r->nversions; k++) {
            const Directive *vd = r->versions[k].dir;
            reduction |= an__name_in_clause(vd, CL_REDUCTION, x->name);
            lastpriv |= an__name_in_clause(vd, CL_LASTPRIVATE, x->name) || an__name_in_clause(vd, CL_LINEAR, x->name);
            fpriv |= an__name_in_clause(vd, CL_FIRSTPRIVATE, x->name);
            fp_all &= an__name_in_clause(vd, CL_FIRSTPRIVATE, x->name);
            vpriv |= an__name_in_clause(vd, CL_PRIVATE, x->name);
        }
        reduction |= an__name_in_clause(t, CL_REDUCTION, x->name) || acc_inner_reduction(u, r, x->name);
        int target_fp = an__name_in_clause(t, CL_FIRSTPRIVATE, x->name);
        fpriv |= target_fp;
        priv = an__name_in_clause(t, CL_PRIVATE, x->name) || an__in_names(&r->loop_vars, x->name) ||
               an__in_names(&forvars, x->name);
        int mi = an__map_find(&r->maps, x->name);
        if (d->is_global && !d->is_array && !d->is_pointer && d->has_init && strstr(d->spec, "const"))
            goto next; /* a constant: visible to both the host and the device file */
        /* defaultmap: what a variable no clause names becomes */
        int listed = priv || vpriv || reduction || lastpriv || fpriv || mi >= 0 ||
                     an__name_in_clause(t, CL_IS_DEVICE_PTR, x->name);
        /* (a clause expression such as num_threads(n) is evaluated on the host: n is captured) */
        if (d->is_global && !listed && !an__in_names(&clause_ids, x->name)) {
            const DeclTarget *dt = an_declare_target(u, x->name);
            if (dt && !dt->link) {
                /* declare target: the host version uses the variable, the
                 * GPU version its device copy (no map, no copy) */
                if (u->info)
                    diag_note(u->diag, r->target->start,
                              "'%s' is declare target: the GPU version uses its device copy", x->name);
                goto next;
            }
        }
        int cat = d->is_pointer ? DM_POINTER : (d->is_array || an__is_aggregate(u, d->spec)) ? DM_AGGREGATE : DM_SCALAR;
        /* an array or struct whose address the region hands on (f(a), p = &s,
         * q = &a[i]) may be written through it: as written, so its implicit
         * map is tofrom (a scalar is firstprivate: writes through &x stay in
         * the region, as OpenMP says) */
        if (cat == DM_AGGREGATE && x->escapes)
            x->written = 1;
        /* globals and names used only in clause expressions (evaluated before the region) keep their rule */
        int dmb = listed || d->is_global || ts_node_eq(x->node, r->stmt) ? DM_DEFAULT : dm[cat];
        /* a scalar or struct the region only reads: firstprivate gives the same values (no
         * indirection, usable in launch clauses such as num_teams) */
        if (cat != DM_POINTER && !d->is_array && !x->written && dmb != DM_NONE)
            dmb = DM_DEFAULT;
        if (dmb == DM_NONE) {
            diag_error(u->diag, tp->start,
                       "'%s' is used in the target region but no data-sharing or map clause names it "
                       "(defaultmap(none))",
                       x->name);
            diag_note(u->diag, ts_node_start_byte(x->node), "'%s' is used here", x->name);
            goto next;
        }
        if (d->is_array && (fpriv || lastpriv || vpriv || dmb == DM_FIRSTPRIVATE) && an__is_vla(u, d)) {
            diag_error(u->diag, tp->start,
                       "%s array '%s' has a variable length: only arrays of constant size can be private, "
                       "firstprivate or lastprivate",
                       lastpriv ? "lastprivate" : fpriv || dmb == DM_FIRSTPRIVATE ? "firstprivate" : "private", x->name);
            goto next;
        }
        Capture *cap = xcalloc(1, sizeof *cap);
        cap->name = xstrdup(x->name);
        cap->read = x->read;
        cap->written = x->written;
        cap->map = -1;
        if (priv && !reduction && !lastpriv) {
            cap->kind = CAP_PRIVATE;
        } else if (mi < 0 && (an__name_in_clause(t, CL_HAS_DEVICE_ADDR, x->name) ||
                              (d->is_pointer && an__name_in_clause(t, CL_IS_DEVICE_PTR, x->name)))) {
            /* is_device_ptr(p), has_device_addr(x): already device addresses
             * (the pointer's value; the variable's address), passed as they
             * are; a scalar is then used through that address */
            cap->kind = d->is_array ? CAP_ARRAY : d->is_pointer ? CAP_PTR : CAP_WRITEBACK;
            mi = r->maps.len;
            char *addr = d->is_array || d->is_pointer ? xsprintf("(void *)(%s)", x->name)
                                                      : xsprintf("(void *)&(%s)", x->name);
            an__add_map(&r->maps, x->name, addr, xstrdup(addr), xstrdup("0"), MACC_MAP_DEVICEPTR, 1,
                        tp->start);
            cap->map = mi;
        } else if (d->is_array) {
            cap->kind = CAP_ARRAY;
            cap->target_fp = target_fp || dmb == DM_FIRSTPRIVATE;
            if (mi < 0) {
                /* firstprivate everywhere: the region's writes go to copies, nothing comes back */
                int kind = lastpriv ? MACC_MAP_TOFROM
                           : (cap->target_fp || (fpriv && fp_all)) ? MACC_MAP_TO
                           : (dmb != DM_DEFAULT) ? an__dm_map_kind(dmb)
                           : x->written ? MACC_MAP_TOFROM : MACC_MAP_TO;
                mi = r->maps.len;
                an__add_map(&r->maps, x->name, xsprintf("(void *)(%s)", x->name),
                            xsprintf("(void *)(%s)", x->name), xsprintf("sizeof(%s)", x->name), kind, 1, tp->start);
            }
            cap->map = mi;
        } else if (d->is_pointer) {
            cap->kind = CAP_PTR;
            if (mi < 0) {
                /* OpenMP's implicit zero-length map of a pointer: translated at
                 * run time when it points into data present on the device (a
                 * data region here, in a caller, enter data), else passed as it
                 * is (--managed: heap data is managed memory, valid on every
                 * device at the same address). */
                int known = an__name_in_clause(t, CL_IS_DEVICE_PTR, x->name) || an__data_covers(u, r->stmt, x->name) ||
                            u->managed || dmb != DM_DEFAULT;
                mi = r->maps.len;
                an__add_map(&r->maps, x->name, xsprintf("(void *)(%s)", x->name), xsprintf("(void *)(%s)", x->name),
                            xstrdup("0"), MACC_MAP_ATTACH | (u->requires_usm ? MACC_MAP_USM : 0), 1, tp->start);
                if (!known && u->info)
                    diag_note(u->diag, ts_node_start_byte(x->node),
                              "pointer '%s' has no map here: it is translated at run time if its data is present "
                              "on the device (a data region, enter data), else passed as it is",
                              x->name);
            } else if (((RMap *)r->maps.items[mi])->from_value && x->written) {
                /* map(from: p) of the pointer itself (OpenMP maps the variable): the
                 * value the region gives it comes back */
                cap->ptr_back = r->maps.len + 1;
                an__add_map(&r->maps, x->name, xsprintf("(void *)&(%s)", x->name), xsprintf("(void *)&(%s)", x->name),
                            xsprintf("sizeof(%s)", x->name), MACC_MAP_FROM, 1, tp->start);
            }
            cap->map = mi;
        } else if (reduction || lastpriv || (mi >= 0 && !(((RMap *)r->maps.items[mi])->kind & MACC_MAP_ATTACH)) ||
                   (dmb != DM_DEFAULT && dmb != DM_FIRSTPRIVATE) ||
                   (cat == DM_AGGREGATE && dmb == DM_DEFAULT && x->written && !listed) ||
                   (t->acc == ACC_KERNELS && x->written && !vpriv && !fpriv)) {
            /* (a struct the region writes: an aggregate, implicitly tofrom; OpenACC
             * kernels: a scalar it writes is copied in and out) */
            if (mi < 0 && cat == DM_AGGREGATE && dmb == DM_DEFAULT && u->info)
                diag_note(u->diag, r->target->start, "'%s' is mapped implicitly: tofrom (a struct the region writes)",
                          x->name);
            cap->kind = CAP_WRITEBACK;
            if (mi < 0) {
                mi = r->maps.len;
                an__add_map(&r->maps, x->name, xsprintf("(void *)&(%s)", x->name),
                            xsprintf("(void *)&(%s)", x->name), xsprintf("sizeof(%s)", x->name),
                            reduction || lastpriv ? MACC_MAP_TOFROM : an__dm_map_kind(dmb), 1, tp->start);
            }
            cap->map = mi;
        } else {
            cap->kind = CAP_SCALAR;
        }
        cap->decl = d;
        d = NULL;
        vec_push(&r->caps, cap);
    next:
        decl_delete(d);
    }
    for (int i = 0; i < uses.len; i++) {
        IdUse *x = uses.items[i];
        free(x->name);
        free(x);
    }
    vec_free(&uses);
    an__free_names(&forvars);
    an__free_names(&clause_ids);
    vec_free(&nested);
    /* loop directives inside the region must annotate for loops */
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *q = u->pragmas.items[i];
        if (q->start < ts_node_start_byte(r->stmt) || q->start >= ts_node_end_byte(r->stmt))
            continue;
        if (q->deferred) {
            diag_error(u->diag, pragma_src_off(q, q->err.off), "%s", q->err.msg);
            continue;
        }
        if (q->dir.kind != DIR_LOOP)
            continue;
        q->used = 1;
        TSNode s = an__next_stmt(q->node);
        if ((q->dir.cs & CS_LOOPS) && !node_is(s, "for_statement"))
            diag_error(u->diag, q->start, "'%s' needs a for loop as the next statement", an__cs_name(q->dir.cs));
        else if (CS_IS_PARALLEL_REGION(q->dir.cs) && !an__is_statement(an__past_any_pragmas(an__past_pragmas(u, s))))
            diag_error(u->diag, q->start, "'parallel' directive has no statement after it");
    }
    an__local_types(u, r);
    /* private(list) names that the region does not otherwise use */
    (void)an__cap_find;
    if (u->info)
        an__info(u, r);
    access_region(u, r);
    vec_push(&u->regions, r);
}

/* ---- declare target ---------------------------------------------------------
 *
 * Names come from list clauses (`declare target(list)`, `to`, `enter`,
 * `link`) and from the declarations inside `declare target` / `begin declare
 * target` ... `end declare target` blocks (the innermost block's device_type).
 * Then the device code: the functions GPU versions call (transitively) and
 * the declare target functions of the file (not device_type(host)) get
 * __device__ copies; the globals that GPU versions and device functions use
 * get device variables: declare target ones, and globals that device
 * functions use without a directive (treated as link, with a warning). */

const DeclTarget *an_declare_target(const Unit *u, const char *name)
{
    const DeclTarget *r = NULL;
    for (int i = 0; i < u->dtargets.len; i++) {
        const DeclTarget *x = u->dtargets.items[i];
        if (!strcmp(x->name, name))
            r = x;
    }
    return r;
}

const DevVar *an_devvar(const Unit *u, const char *name)
{
    for (int i = 0; i < u->devvars.len; i++) {
        const DevVar *x = u->devvars.items[i];
        if (!strcmp(x->name, name))
            return x;
    }
    return NULL;
}

int an_global_var_ref(const Unit *u, TSNode id)
{
    char *name = node_text(u, id);
    Decl *d = an__lookup(u, id, name, NULL);
    int r = d && d->is_global && !d->is_function;
    decl_delete(d);
    free(name);
    return r;
}

static void an__dt_add(Unit *u, const char *name, size_t n, int link, int devtype, int indirect, size_t off)
{
    DeclTarget *x = xcalloc(1, sizeof *x);
    x->name = xstrndup(name, n);
    x->link = link;
    x->device_type = devtype;
    x->indirect = indirect;
    x->off = off;
    vec_push(&u->dtargets, x);
}

/* The functions and variables that file-scope node n declares (a block's
 * contents). System headers included inside a block are left alone. */
static void an__dt_node(Unit *u, TSNode n, int devtype, int indirect)
{
    const char *t = u->src->text;
    if (source_in_system(u->src, ts_node_start_byte(n)))
        return;
    if (node_is(n, "function_definition")) {
        TSNode id = an__declarator_ident(node_field(n, "declarator"));
        if (!ts_node_is_null(id))
            an__dt_add(u, t + ts_node_start_byte(id), ts_node_end_byte(id) - ts_node_start_byte(id), 0, devtype,
                       indirect, ts_node_start_byte(id));
        return;
    }
    if (!node_is(n, "declaration"))
        return;
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (!an__is_declarator(c))
            continue;
        TSNode id = an__declarator_ident(c);
        if (!ts_node_is_null(id))
            an__dt_add(u, t + ts_node_start_byte(id), ts_node_end_byte(id) - ts_node_start_byte(id), 0, devtype,
                       indirect, ts_node_start_byte(id));
    }
}

typedef struct AnBlock {
    Pragma *open;
    size_t from, to;
    int devtype, indirect;
} AnBlock;

static void an__declare_collect(Unit *u)
{
    AnBlock stack[32];
    int sp = 0;
    Vec blocks = {0};
    TSNode root = ts_tree_root_node(u->tree);
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->dir.kind != DIR_DECLARE_TARGET && p->dir.kind != DIR_END_DECLARE_TARGET)
            continue;
        p->used = 1;
        int local = !ts_node_is_null(an__enclosing(p->node, "function_definition"));
        if (local && (p->dir.kind == DIR_END_DECLARE_TARGET || (!directive_find(&p->dir, CL_TO) &&
                                                                !directive_find(&p->dir, CL_LINK)))) {
            diag_error(u->diag, p->start, "a declare target block inside a function is not supported: put it at file scope");
            continue;
        }
        if (p->dir.kind == DIR_END_DECLARE_TARGET) {
            if (!sp) {
                diag_error(u->diag, p->start, "'end declare target' without a 'declare target' before it");
                continue;
            }
            AnBlock *b = xmalloc(sizeof *b);
            *b = stack[--sp];
            b->to = p->start;
            vec_push(&blocks, b);
            continue;
        }
        const DirClause *dtc = directive_find(&p->dir, CL_DEVICE_TYPE);
        int devtype = dtc ? dtc->modifier : DEVTYPE_ANY;
        int indirect = directive_find(&p->dir, CL_INDIRECT) != NULL;
        int list = 0;
        for (int k = 0; k < p->dir.nclauses; k++) {
            const DirClause *c = &p->dir.clauses[k];
            if (c->kind != CL_TO && c->kind != CL_LINK)
                continue;
            list = 1;
            for (int j = 0; j < c->nitems; j++) {
                const DirItem *it = &c->items[j];
                size_t off = pragma_src_off(p, it->off);
                if (!it->is_ident || it->nsubs) {
                    diag_error(u->diag, off, "declare target takes names of variables and functions");
                    continue;
                }
                /* at block scope: what the name means there */
                Decl *d = local ? an__lookup(u, p->node, it->base, NULL)
                                : an__scan_list(u, root, it->base, (uint32_t)p->start, 1, NULL);
                if (!d)
                    diag_error(u->diag, off, "'%s' is not declared before this directive", it->base);
                else if (!d->is_global)
                    diag_error(u->diag, off, "'%s' is a local variable: declare target takes globals and functions",
                               it->base);
                else
                    an__dt_add(u, it->base, strlen(it->base), c->kind == CL_LINK, devtype, indirect, off);
                decl_delete(d);
            }
        }
        if (list)
            continue;
        if (sp == (int)(sizeof stack / sizeof stack[0])) {
            diag_error(u->diag, p->start, "declare target blocks nested too deeply");
            continue;
        }
        stack[sp].open = p;
        stack[sp].from = p->end;
        stack[sp].to = 0;
        stack[sp].devtype = devtype;
        stack[sp].indirect = indirect;
        sp++;
    }
    while (sp > 0)
        diag_error(u->diag, stack[--sp].open->start, "'declare target' without 'end declare target'");
    /* declarations inside blocks: the innermost block's clauses */
    for (int i = 0; i < u->ntop && blocks.len; i++) {
        size_t pos = ts_node_start_byte(u->top[i]);
        const AnBlock *in = NULL;
        for (int k = 0; k < blocks.len; k++) {
            const AnBlock *b = blocks.items[k];
            if (b->from <= pos && pos < b->to && (!in || b->from > in->from))
                in = b;
        }
        if (in)
            an__dt_node(u, u->top[i], in->devtype, in->indirect);
    }
    for (int k = 0; k < blocks.len; k++)
        free(blocks.items[k]);
    vec_free(&blocks);
}

/* The file's own definition of function `name` (not a system header's:
 * CUDA has its own math and C library functions). */
static TSNode an__find_function(const Unit *u, const char *name)
{
    const int *i = strmap_get(&an__index(u)->funcs, name, strlen(name));
    return i ? u->top[*i] : (TSNode){0};
}

static int an__is_devfunc(const Unit *u, const char *name)
{
    for (int i = 0; i < u->devfuncs.len; i++)
        if (!strcmp(u->devfuncs.items[i], name))
            return 1;
    return 0;
}

static void an__devfunc_calls(Unit *u, TSNode n, unsigned context);

/* The file's declaration (not a definition) of function `name`, outside
 * system headers and macc's own (omp.h, openacc.h), not static; or null. */
static TSNode an__find_fdecl(const Unit *u, const char *name)
{
    static const char *const own[] = {"omp.h", "openacc.h", "macc_rt.h", "macc_device.h", NULL};
    static const char *const prefixes[] = {"omp_", "acc_", "macc_", "MACC_", "__", NULL};
    for (int i = 0; prefixes[i]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return (TSNode){0};
    for (int i = 0; i < u->ntop; i++) {
        TSNode n = u->top[i];
        if (!node_is(n, "declaration") || source_in_system(u->src, ts_node_start_byte(n)))
            continue;
        int skip = 0;
        for (int k = 0; own[k] && !skip; k++)
            skip = source_file_is(u->src, ts_node_start_byte(n), own[k]);
        uint32_t nc = ts_node_named_child_count(n);
        for (uint32_t k = 0; k < nc && !skip; k++) {
            TSNode c = ts_node_named_child(n, k);
            if (node_is(c, "storage_class_specifier")) {
                char *q = node_text(u, c);
                skip = !strcmp(q, "static") || !strcmp(q, "typedef");
                free(q);
            }
        }
        for (uint32_t k = 0; k < nc && !skip; k++) {
            TSNode d = ts_node_named_child(n, k);
            while (node_is(d, "pointer_declarator") || node_is(d, "parenthesized_declarator") ||
                   node_is(d, "attributed_declarator"))
                d = node_is(d, "pointer_declarator") ? node_field(d, "declarator") : ts_node_named_child(d, 0);
            if (!node_is(d, "function_declarator"))
                continue;
            TSNode id = node_field(d, "declarator");
            if (!node_is(id, "identifier"))
                continue;
            size_t b = ts_node_start_byte(id), e = ts_node_end_byte(id);
            if (e - b == strlen(name) && !strncmp(u->src->text + b, name, e - b))
                return n;
        }
    }
    return (TSNode){0};
}

/* A call of a function the file declares but does not define: another
 * file's device function (its declare target definition), named
 * macc_d_<name> there and declared `extern "C" __device__` here; the device
 * link resolves it. Takes `name`. */
static void an__devextern_add(Unit *u, char *name)
{
    for (int i = 0; i < u->devexterns.len; i++)
        if (!strcmp(u->devexterns.items[i], name)) {
            free(name);
            return;
        }
    TSNode d = an__find_fdecl(u, name);
    const DeclTarget *dt = an_declare_target(u, name);
    if (ts_node_is_null(d) || (dt && dt->device_type == DEVTYPE_HOST)) {
        free(name);
        return;
    }
    TSNode *keep = xmalloc(sizeof *keep);
    *keep = d;
    vec_push(&u->devexterns, name);
    vec_push(&u->devextdecls, keep);
}

static void an__devfunc_add(Unit *u, char *name, TSNode def)
{
    TSNode *keep = xmalloc(sizeof *keep);
    *keep = def;
    vec_push(&u->devfuncs, name);
    vec_push(&u->devfnodes, keep);
    an__devfunc_calls(u, node_field(def, "body"), VT_TARGET);
}

/* Functions called under n that the file defines: device functions (a call's
 * declare variant for the GPU in the given context instead of its base). */
static void an__devfunc_calls(Unit *u, TSNode n, unsigned context)
{
    if (node_is(n, "call_expression")) {
        TSNode f = node_field(n, "function");
        if (node_is(f, "identifier")) {
            const char *var = variant_of_call(u, f, context, 1);
            char *name = var ? xstrdup(var) : node_text(u, f);
            TSNode def = an__is_devfunc(u, name) ? (TSNode){0} : an__find_function(u, name);
            const DeclTarget *dt = ts_node_is_null(def) ? NULL : an_declare_target(u, name);
            if (dt && dt->device_type == DEVTYPE_HOST) {
                diag_error(u->diag, ts_node_start_byte(f),
                           "'%s' is declare target device_type(host): it cannot be called on the GPU", name);
                free(name);
            } else if (!ts_node_is_null(def)) {
                an__devfunc_add(u, name, def);
            } else if (!an__is_devfunc(u, name)) {
                an__devextern_add(u, name);
            } else {
                free(name);
            }
        }
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        an__devfunc_calls(u, ts_node_child(n, i), context);
}

const RVersion *region_gpu_version(const Region *r)
{
    for (int i = 0; i < r->nversions; i++)
        if (r->versions[i].kind == MACC_DEV_NVIDIA)
            return &r->versions[i];
    return NULL;
}

/* Names declared as variables by file-scope declarations (not system headers'). */
static void an__global_names(const Unit *u, StrSet *names)
{
    for (int i = 0; i < u->ntop; i++) {
        TSNode n = u->top[i];
        if (!node_is(n, "declaration") || source_in_system(u->src, ts_node_start_byte(n)))
            continue;
        uint32_t nc = ts_node_named_child_count(n);
        for (uint32_t k = 0; k < nc; k++) {
            TSNode c = ts_node_named_child(n, k);
            TSNode dd = node_is(c, "init_declarator") ? node_field(c, "declarator") : c;
            if (!an__is_declarator(c) || node_is(dd, "function_declarator"))
                continue;
            TSNode id = an__declarator_ident(c);
            if (!ts_node_is_null(id))
                strset_add(names, u->src->text + ts_node_start_byte(id), ts_node_end_byte(id) - ts_node_start_byte(id));
        }
    }
}

/* The declaration that defines global `name` in this file: one with an
 * initialiser, else one without `extern`, else the first. */
static int an__devvar_def(Unit *u, DevVar *v)
{
    int best = -1;
    for (int i = 0; i < u->ntop; i++) {
        TSNode n = u->top[i];
        if (!node_is(n, "declaration") || source_in_system(u->src, ts_node_start_byte(n)))
            continue;
        int is_extern = 0, is_static = 0;
        uint32_t nc = ts_node_named_child_count(n);
        for (uint32_t k = 0; k < nc; k++) {
            TSNode c = ts_node_named_child(n, k);
            if (node_is(c, "storage_class_specifier")) {
                char *q = node_text(u, c);
                is_extern |= !strcmp(q, "extern");
                is_static |= !strcmp(q, "static");
                free(q);
            }
        }
        for (uint32_t k = 0; k < nc; k++) {
            TSNode c = ts_node_named_child(n, k);
            TSNode dd = node_is(c, "init_declarator") ? node_field(c, "declarator") : c;
            if (!an__is_declarator(c) || node_is(dd, "function_declarator"))
                continue;
            TSNode id = an__declarator_ident(c);
            if (ts_node_is_null(id))
                continue;
            size_t b = ts_node_start_byte(id), e = ts_node_end_byte(id);
            if (e - b != strlen(v->name) || strncmp(u->src->text + b, v->name, e - b))
                continue;
            int rank = node_is(c, "init_declarator") ? 3 : !is_extern ? 2 : 1;
            if (rank > best) {
                best = rank;
                v->is_static = is_static;
                v->decl = n;
                v->declarator = dd;
                v->init = node_is(c, "init_declarator") ? node_field(c, "value") : (TSNode){0};
            }
        }
    }
    if (best < 0)
        return -1;
    v->init_from_host = best == 1;
    v->spec = an__spec_text(u, v->decl);
    return 0;
}

static int an__cmp_devvar(const void *a, const void *b)
{
    const DevVar *x = *(DevVar *const *)a, *y = *(DevVar *const *)b;
    uint32_t p = ts_node_start_byte(x->declarator), q = ts_node_start_byte(y->declarator);
    return p < q ? -1 : p > q;
}

/* Adds global `name` (used at node `at`, or NULL) as a device variable. */
static void an__devvar_add(Unit *u, const char *name, int link, int implicit, TSNode at)
{
    if (an_devvar(u, name))
        return;
    DevVar *v = xcalloc(1, sizeof *v);
    v->name = xstrdup(name);
    v->link = link;
    v->implicit = implicit;
    if (an__devvar_def(u, v) != 0) {
        free(v->name);
        free(v);
        return;
    }
    /* an extern declaration of a declare target global: the defining file's
     * device copy, reached through the device link */
    v->external = v->init_from_host && !implicit && !v->is_static;
    if (!v->external && node_is(v->declarator, "array_declarator") && ts_node_is_null(node_field(v->declarator, "size")) &&
        ts_node_is_null(v->init)) {
        diag_error(u->diag, ts_node_start_byte(ts_node_is_null(at) ? v->declarator : at),
                   "the device copy of '%s' needs its size: declare it with one in this file", name);
        free(v->spec);
        free(v->name);
        free(v);
        return;
    }
    vec_push(&u->devvars, v);
}

/* Globals used under n: by a GPU version (r) or by device function `fname`. */
static void an__devvar_uses(Unit *u, TSNode n, const Region *r, const char *fname, const StrSet *globals)
{
    if (node_is(n, "identifier")) {
        size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
        if (!strset_has(globals, u->src->text + b, e - b))
            return;
        TSNode p = ts_node_parent(n);
        if (an__is_declarator(p) && ts_node_eq(node_field(p, "declarator"), n))
            return; /* a declarator's own name */
        if (node_is(p, "declaration") || node_is(p, "parameter_declaration"))
            return;
        char *name = xstrndup(u->src->text + b, e - b);
        Decl *d = an_devvar(u, name) ? NULL : an__lookup(u, n, name, NULL);
        if (d && d->is_global && !d->is_function &&
            !(d->has_init && !d->is_pointer && strstr(d->spec, "const"))) { /* constants are in the prelude */
            const DeclTarget *dt = an_declare_target(u, name);
            if (dt)
                an__devvar_add(u, name, dt->link, 0, n);
            else if (!r) {
                diag_warning(u->diag, b,
                             "'%s' is used on the GPU by '%s' but is in no declare target directive: it is "
                             "treated as declare target link(%s), its device copy holding data only while a "
                             "region maps it",
                             name, fname, name);
                an__devvar_add(u, name, 1, 1, n);
            }
        }
        decl_delete(d);
        free(name);
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        an__devvar_uses(u, ts_node_child(n, i), r, fname, globals);
}

static void an__device_code(Unit *u)
{
    int gpu = 0;
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        const RVersion *gv = region_gpu_version(r);
        if (!gv)
            continue;
        gpu = 1;
        an__devfunc_calls(u, r->stmt, variant_context(gv->cs));
    }
    /* no GPU region: a device file still, for the file's declare target
     * functions and variables (other files' kernels use them) */
    int dt_dev = 0;
    for (int i = 0; i < u->dtargets.len && !gpu; i++)
        dt_dev |= ((const DeclTarget *)u->dtargets.items[i])->device_type != DEVTYPE_HOST;
    if (!gpu && !dt_dev)
        return; /* no device file */
    for (int i = 0; i < u->dtargets.len; i++) {
        const DeclTarget *x = u->dtargets.items[i];
        if (x->device_type == DEVTYPE_HOST || an__is_devfunc(u, x->name) || an_declare_target(u, x->name) != x)
            continue;
        TSNode def = an__find_function(u, x->name);
        if (!ts_node_is_null(def))
            an__devfunc_add(u, xstrdup(x->name), def);
    }
    StrSet globals = {0};
    an__global_names(u, &globals);
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        if (region_gpu_version(r))
            an__devvar_uses(u, r->stmt, r, NULL, &globals);
    }
    for (int i = 0; i < u->devfuncs.len; i++) {
        TSNode def = *(TSNode *)u->devfnodes.items[i];
        an__devvar_uses(u, node_field(def, "body"), NULL, u->devfuncs.items[i], &globals);
    }
    /* declare target variables the file defines: a device copy even when no
     * device code here uses them (maps and updates reach it) */
    for (int i = 0; i < u->dtargets.len; i++) {
        const DeclTarget *x = u->dtargets.items[i];
        if (an_declare_target(u, x->name) != x || x->device_type == DEVTYPE_HOST ||
            !strset_has(&globals, x->name, strlen(x->name)) || an_devvar(u, x->name))
            continue;
        DevVar probe = {.name = x->name};
        if (an__devvar_def(u, &probe) == 0) {
            int is_const = probe.spec && strstr(probe.spec, "const") && !ts_node_is_null(probe.init) &&
                           !node_is(probe.declarator, "pointer_declarator");
            free(probe.spec);
            if (!probe.init_from_host && !is_const)
                an__devvar_add(u, x->name, x->link, 0, (TSNode){0});
        }
    }
    strset_free(&globals);
    if (u->devvars.len > 1)
        qsort(u->devvars.items, (size_t)u->devvars.len, sizeof(void *), an__cmp_devvar);
    /* the table's name: the same in the host and the device file, unique
     * per translated text */
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < u->src->len; i++)
        h = (h ^ (unsigned char)u->src->text[i]) * 1099511628211ULL;
    u->dt_key = xsprintf("macc_dt_%016llx", h);
}

/* ---- types declared inside the enclosing function --------------------------- */

void node_ids(const Unit *u, TSNode n, StrSet *ids)
{
    if (node_is(n, "identifier") || node_is(n, "type_identifier")) {
        size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
        strset_add(ids, u->src->text + b, e - b);
        return;
    }
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++)
        node_ids(u, ts_node_child(n, i), ids);
}

void text_ids(const char *s, StrSet *ids)
{
    Vec names = {0};
    an_text_ids(s, &names);
    for (int i = 0; i < names.len; i++) {
        strset_add(ids, names.items[i], strlen(names.items[i]));
        free(names.items[i]);
    }
    vec_free(&names);
}

int node_name_in(const Unit *u, TSNode id, const StrSet *ids)
{
    if (ts_node_is_null(id))
        return 0;
    size_t b = ts_node_start_byte(id), e = ts_node_end_byte(id);
    return strset_has(ids, u->src->text + b, e - b);
}

int tag_defines(const Unit *u, TSNode spec, const StrSet *ids)
{
    if (node_name_in(u, node_field(spec, "name"), ids))
        return 1;
    if (!node_is(spec, "enum_specifier"))
        return 0;
    TSNode body = node_field(spec, "body");
    uint32_t k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode en = ts_node_named_child(body, i);
        if (node_is(en, "enumerator") && node_name_in(u, node_field(en, "name"), ids))
            return 1;
    }
    return 0;
}

/* The struct/union/enum specifier with a body that node n (a declaration,
 * type_definition or specifier) holds, or a null node. */
TSNode node_tag_body(TSNode n)
{
    TSNode null = {0};
    TSNode spec = node_is(n, "struct_specifier") || node_is(n, "union_specifier") || node_is(n, "enum_specifier")
                      ? n
                      : node_field(n, "type");
    if ((node_is(spec, "struct_specifier") || node_is(spec, "union_specifier") || node_is(spec, "enum_specifier")) &&
        !ts_node_is_null(node_field(spec, "body")))
        return spec;
    return null;
}

/* Does a local declaration define a type name, tag or enumerator in ids? */
static int an__defines_type(const Unit *u, TSNode n, const StrSet *ids)
{
    TSNode spec = node_tag_body(n);
    if (!ts_node_is_null(spec)) {
        if (tag_defines(u, spec, ids))
            return 1;
        if (ts_node_is_null(node_field(spec, "name")) && !node_is(spec, "enum_specifier")) {
            char *t = anon_tag(u, spec);
            int hit = strset_has(ids, t, strlen(t));
            free(t);
            if (hit)
                return 1;
        }
    }
    if (node_is(n, "type_definition")) {
        uint32_t k = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < k; i++) {
            TSNode d = ts_node_named_child(n, i);
            if (node_is(d, "type_identifier") && node_name_in(u, d, ids))
                return 1;
        }
    }
    return 0;
}

/* The type declarations under n before the region that define a name in ids
 * go to r->local_types (one walk with a cursor; nothing at or after the
 * region's start is visited). */
static void an__local_walk(Unit *u, Region *r, TSNode n, const StrSet *ids, int *changed)
{
    uint32_t rs = ts_node_start_byte(r->stmt);
    TSTreeCursor cur = ts_tree_cursor_new(n);
    for (;;) {
        TSNode k = ts_tree_cursor_current_node(&cur);
        int descend = 0;
        if (ts_node_start_byte(k) >= rs) {
            /* the siblings after it start later still */
            if (!ts_tree_cursor_goto_parent(&cur))
                break;
        } else if (ts_node_is_named(k)) {
            const char *t = node_type(k);
            if (!strcmp(t, "declaration") || !strcmp(t, "type_definition") || !strcmp(t, "struct_specifier") ||
                !strcmp(t, "union_specifier") || !strcmp(t, "enum_specifier")) {
                if ((!strcmp(t, "type_definition") || !ts_node_is_null(node_tag_body(k))) &&
                    an__defines_type(u, k, ids)) {
                    int dup = 0;
                    for (int i = 0; i < r->local_types.len && !dup; i++)
                        dup = ts_node_eq(*(TSNode *)r->local_types.items[i], k);
                    if (!dup) {
                        TSNode *keep = xmalloc(sizeof *keep);
                        *keep = k;
                        vec_push(&r->local_types, keep);
                        *changed = 1;
                    }
                }
            } else {
                descend = 1;
            }
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur))
            continue;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur))
                goto done;
    }
done:
    ts_tree_cursor_delete(&cur);
}

static int an__cmp_nodes(const void *a, const void *b)
{
    uint32_t x = ts_node_start_byte(**(TSNode *const *)a), y = ts_node_start_byte(**(TSNode *const *)b);
    return x < y ? -1 : x > y;
}

/* Types declared in the enclosing function before the region that the
 * region uses (its variables' types, tags, enumerators): the outlined host
 * version and the kernel are outside the function, so these definitions go
 * with them (r->local_types, in the file's order). */
static void an__local_types(Unit *u, Region *r)
{
    TSNode body = node_field(r->func, "body");
    if (ts_node_is_null(body))
        return;
    StrSet ids = {0};
    node_ids(u, r->stmt, &ids);
    for (int i = 0; i < r->caps.len; i++) {
        Capture *c = r->caps.items[i];
        if (c->decl) {
            text_ids(c->decl->spec, &ids);
            text_ids(c->decl->decl_text, &ids);
        }
    }
    for (int changed = 1; changed;) {
        changed = 0;
        int before = r->local_types.len;
        an__local_walk(u, r, body, &ids, &changed);
        for (int i = before; i < r->local_types.len; i++)
            node_ids(u, *(TSNode *)r->local_types.items[i], &ids);
    }
    if (r->local_types.len > 1)
        qsort(r->local_types.items, (size_t)r->local_types.len, sizeof(void *), an__cmp_nodes);
    strset_free(&ids);
    /* variables of such a type are copied by bytes at the call (the hoisted
     * definition is another type for C) */
    for (int i = 0; i < r->caps.len; i++) {
        Capture *c = r->caps.items[i];
        if (!c->decl)
            continue;
        StrSet one = {0};
        text_ids(c->decl->spec, &one);
        for (int j = 0; j < r->local_types.len && !c->local_type; j++)
            c->local_type = an__defines_type(u, *(TSNode *)r->local_types.items[j], &one);
        strset_free(&one);
    }
}

/* ---- entry point ----------------------------------------------------------- */

void analyze_unit(Unit *u)
{
    /* data constructs first: regions look for enclosing data regions */
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        switch (p->dir.kind) {
        case DIR_TARGET_DATA:
        case DIR_TARGET_ENTER_DATA:
        case DIR_TARGET_EXIT_DATA:
        case DIR_TARGET_UPDATE:
        case DIR_ACC_DATA:
        case DIR_ACC_ENTER_DATA:
        case DIR_ACC_EXIT_DATA:
        case DIR_ACC_UPDATE:
        case DIR_ACC_WAIT:
        case DIR_ACC_SET:
        case DIR_TASKWAIT:
            an__data(u, p);
            break;
        default:
            break;
        }
    }
    an__declare_collect(u);
    variants_collect(u);
    if (u->renames.len && u->index) { /* begin declare variant functions: indexed by their new names */
        an_index_delete(u->index);
        u->index = NULL;
    }
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->dir.kind == DIR_TARGET)
            an__region(u, p);
    }
    access_rank(u);
    an__device_code(u);
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->used)
            continue;
        if (p->dir.kind == DIR_IF_DEVICE)
            diag_error(u->diag, p->start, "if_device must directly follow a '#pragma omp target' line");
        else if (p->dir.kind == DIR_METADIRECTIVE)
            diag_error(u->diag, p->start, "metadirective is supported only directly after a '#pragma omp target' line");
    }
}

/* ---- for the emitters -------------------------------------------------------- */

Decl *analyze_lookup(const Unit *u, TSNode at, const char *name, TSNode *where)
{
    return an__lookup(u, at, name, where);
}

int directive_lists(const Directive *d, ClauseKind kind, const char *name)
{
    return an__name_in_clause(d, kind, name);
}

const Capture *region_member_attach(const Region *r, int j, const char **member)
{
    const RMap *m = r->maps.items[j];
    const char *dot = strchr(m->name, '.');
    if (!dot || strstr(m->name, "->") || strchr(m->name, '[') || strncmp(m->base, "(void *)(", 9))
        return NULL;
    for (int i = 0; i < r->caps.len; i++) {
        const Capture *k = r->caps.items[i];
        if (k->kind == CAP_WRITEBACK && k->map >= 0 && k->decl && !k->decl->is_pointer && !k->decl->is_array &&
            strlen(k->name) == (size_t)(dot - m->name) && !strncmp(k->name, m->name, (size_t)(dot - m->name))) {
            *member = dot + 1;
            return k;
        }
    }
    return NULL;
}

int region_init_copy(const Region *r, const char *name)
{
    for (int v = 0; v < r->nversions; v++) {
        const Directive *d = r->versions[v].dir;
        if (r->versions[v].kind != MACC_DEV_NVIDIA)
            continue;
        if (an__name_in_clause(d, CL_LINEAR, name) ||
            (an__name_in_clause(d, CL_LASTPRIVATE, name) && an__name_in_clause(d, CL_FIRSTPRIVATE, name)))
            return 1;
    }
    return 0;
}

void region_launch_fields(const Region *r, Buf *fields, Buf *assign)
{
    static const ClauseKind kinds[] = {CL_NUM_TEAMS, CL_THREAD_LIMIT, CL_NUM_THREADS};
    /* the start values of linear and firstprivate+lastprivate scalars (by value:
     * the write-back copy changes while the GPU threads start) */
    for (int i = 0; i < r->caps.len; i++) {
        const Capture *k = r->caps.items[i];
        if (k->kind != CAP_WRITEBACK || !region_init_copy(r, k->name))
            continue;
        const Decl *dd = k->decl;
        if (fields) {
            char *spec = spec_unqualified(dd->spec);
            buf_printf(fields, "    %s %.*smacc_init_%s%s;\n", spec, dd->id_off, dd->decl_text, dd->name,
                       dd->decl_text + dd->id_off + dd->id_len);
            free(spec);
        }
        if (assign)
            buf_printf(assign, "    __builtin_memcpy(&macc_a_.macc_init_%s, &%s, sizeof macc_a_.macc_init_%s);\n", k->name,
                       k->name, k->name);
    }
    /* the host's values of pointer members that the device copy of their
     * mapped struct points elsewhere while the region runs (restored after) */
    for (int j = 0; j < r->maps.len; j++) {
        const char *member;
        if (!region_member_attach(r, j, &member))
            continue;
        const RMap *m = r->maps.items[j];
        if (fields)
            buf_printf(fields, "    void *macc_mh_%d;\n", j);
        if (assign)
            buf_printf(assign, "    macc_a_.macc_mh_%d = %s;\n", j, m->base);
    }
    for (int v = 0; v < r->nversions; v++) {
        if (r->versions[v].kind != MACC_DEV_NVIDIA)
            continue;
        /* linear steps, evaluated on the host as the region starts */
        const Directive *ld = r->versions[v].dir;
        for (int j = 0; j < ld->nclauses; j++) {
            if (ld->clauses[j].kind != CL_LINEAR)
                continue;
            if (fields)
                buf_printf(fields, "    long long macc_lstep_v%d_%d;\n", v, j);
            if (assign) {
                char *st = directive_linear_step(&ld->clauses[j]);
                buf_printf(assign, "    macc_a_.macc_lstep_v%d_%d = (long long)(%s);\n", v, j, st);
                free(st);
            }
        }
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            const DirClause *c = directive_find(r->versions[v].dir, kinds[k]);
            if (!c && kinds[k] == CL_THREAD_LIMIT) /* the target line's bounds every version */
                c = directive_find(&r->target->dir, CL_THREAD_LIMIT);
            if (!c || !c->arg)
                continue;
            const char *name = directive_clause_name(kinds[k]);
            if (fields)
                buf_printf(fields, "    int macc_%s_v%d;\n", name, v);
            if (assign)
                buf_printf(assign, "    macc_a_.macc_%s_v%d = (int)(%s);\n", name, v, c->arg);
        }
        /* if(parallel: e): false makes the parallel region one thread */
        const Directive *d = r->versions[v].dir;
        for (int j = 0; j < d->nclauses; j++) {
            const DirClause *c = &d->clauses[j];
            if (c->kind != CL_IF || !c->arg || !c->name || strcmp(c->name, "parallel"))
                continue;
            if (fields)
                buf_printf(fields, "    int macc_if_parallel_v%d;\n", v);
            if (assign)
                buf_printf(assign, "    macc_a_.macc_if_parallel_v%d = (%s) != 0;\n", v, c->arg);
            break;
        }
    }
}

void local_type_text(const Unit *u, TSNode n, Buf *out)
{
    TSNode spec = node_is(n, "type_definition") ? n : node_tag_body(n);
    size_t sb = ts_node_start_byte(spec), se = ts_node_end_byte(spec);
    if (!node_is(spec, "type_definition") && !node_is(spec, "enum_specifier") &&
        ts_node_is_null(node_field(spec, "name"))) {
        TSNode body = node_field(spec, "body");
        char *t = anon_tag(u, spec);
        buf_printf(out, "%s %s ", node_is(spec, "struct_specifier") ? "struct" : "union", t);
        free(t);
        sb = ts_node_start_byte(body);
    }
    buf_put(out, u->src->text + sb, se - sb);
    buf_puts(out, node_is(spec, "type_definition") ? "\n" : ";\n");
}

void unit_local_types(const Unit *u, const TSNode *func, Vec *out)
{
    for (int i = 0; i < u->regions.len; i++) {
        Region *q = u->regions.items[i];
        if (func && !ts_node_eq(q->func, *func))
            continue;
        for (int j = 0; j < q->local_types.len; j++) {
            TSNode *n = q->local_types.items[j];
            int dup = 0;
            for (int k = 0; k < out->len && !dup; k++)
                dup = ts_node_eq(*(TSNode *)out->items[k], *n);
            if (!dup)
                vec_push(out, n);
        }
    }
    if (out->len > 1)
        qsort(out->items, (size_t)out->len, sizeof(void *), an__cmp_nodes);
}
