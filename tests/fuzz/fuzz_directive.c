/* fuzz_directive.c: libFuzzer target for the directive parser (grammar/directive.c).
 *
 * Every input is copied, NUL-terminated, and given to directive_parse as the
 * text after "#pragma". Besides the sanitizers' checks it aborts when a
 * documented invariant of directive.h does not hold:
 *   error:   return -1, err.off in [0, strlen(text)], err.msg non-empty,
 *            *out left empty (nothing to free);
 *   success: return 0, nclauses >= 0 (clauses non-NULL when > 0), every clause
 *            offset and item offset in [0, strlen(text)], every item has a
 *            base, nsubs >= 0; metadirective variants likewise; a pragma that
 *            is not ours has no clauses; parsing twice gives the same result.
 * Build and run: sh tests/fuzz/run.sh BUILD SECONDS.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directive.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_directive: invariant failed: %s (%s:%d)\n", #cond,     \
                    __FILE__, __LINE__);                                                 \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static size_t touch(const char *s)
{
    return s ? strlen(s) : 0; /* lets ASan see a dangling or unterminated string */
}

static void check_directive(const Directive *d, int len, int depth)
{
    CHECK(depth < 4);
    CHECK(d->nclauses >= 0);
    CHECK(d->nclauses == 0 || d->clauses != NULL);
    CHECK(d->nvariants >= 0);
    CHECK(d->nvariants == 0 || d->variants != NULL);
    CHECK(d->is_acc == 0 || d->is_acc == 1);
    if (d->kind == DIR_OTHER)
        CHECK(d->nclauses == 0 && d->nvariants == 0);
    for (int i = 0; i < d->nclauses; i++) {
        const DirClause *c = &d->clauses[i];
        CHECK((int)c->kind >= 0 && c->kind < CL_NCLAUSES);
        CHECK(c->off >= 0 && c->off <= len);
        CHECK(c->nitems >= 0);
        CHECK(c->nitems == 0 || c->items != NULL);
        const char *name = directive_clause_name(c->kind);
        CHECK(name != NULL && *name);
        CHECK(directive_find(d, c->kind) != NULL);
        if (c->kind == CL_REDUCTION)
            touch(directive_reduction_op(c->modifier));
        touch(c->name);
        touch(c->arg);
        for (int j = 0; j < c->nitems; j++) {
            const DirItem *it = &c->items[j];
            CHECK(it->base != NULL);
            touch(it->base);
            CHECK(it->off >= 0 && it->off <= len);
            CHECK(it->nsubs >= 0);
            CHECK(it->nsubs == 0 || it->subs != NULL);
            for (int k = 0; k < it->nsubs; k++) {
                touch(it->subs[k].lo);
                touch(it->subs[k].len);
            }
        }
    }
    for (int i = 0; i < d->nvariants; i++)
        check_directive(&d->variants[i], len, depth + 1);
}

/* Shape of a parse, to compare two parses of one text. */
static unsigned long shape(const Directive *d)
{
    unsigned long h = (unsigned long)d->kind * 31u + d->cs * 7u + (unsigned long)d->nclauses * 131u +
                      (unsigned long)d->nvariants * 17u + (unsigned)d->arch + (unsigned)d->min_cc * 3u;
    for (int i = 0; i < d->nclauses; i++)
        h = h * 1000003u + (unsigned long)d->clauses[i].kind * 13u +
            (unsigned long)d->clauses[i].nitems + (unsigned long)d->clauses[i].off * 7u;
    for (int i = 0; i < d->nvariants; i++)
        h = h * 65599u + shape(&d->variants[i]);
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int len = (int)strlen(text);

    Directive d;
    DirError err;
    memset(&d, 0x5a, sizeof d);   /* the parser must initialise *out itself */
    memset(&err, 0x5a, sizeof err);
    int r = directive_parse(text, &d, &err);
    CHECK(r == 0 || r == -1);
    if (r < 0) {
        CHECK(err.off >= 0 && err.off <= len);
        CHECK(memchr(err.msg, '\0', sizeof err.msg) != NULL);
        CHECK(err.msg[0] != '\0');
        CHECK(d.nclauses == 0 && d.clauses == NULL && d.nvariants == 0 && d.variants == NULL);
    } else {
        check_directive(&d, len, 0);
        Directive d2;
        DirError err2;
        CHECK(directive_parse(text, &d2, &err2) == 0);
        CHECK(shape(&d) == shape(&d2));
        directive_free(&d2);
    }
    directive_free(&d);
    directive_free(&d); /* documented: safe on a freed (zeroed) directive */
    directive_free(NULL);
    free(text);
    return 0;
}
