/* Unit tests of the directive grammar (grammar/directive.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "directive.h"

static Directive D;
static DirError E;

static void teardown(void) { directive_free(&D); }

TestSuite(directive, .fini = teardown);

/* Parses txt into D; fails the test on an error. */
static void ok(const char *txt)
{
    int r = directive_parse(txt, &D, &E);
    cr_assert_eq(r, 0, "parse of \"%s\" failed at %d: %s", txt, E.off, E.msg);
}

/* Expects txt to fail at the first occurrence of `at` (NULL: the end of the
 * text; "@N": offset N; "pre|post": where post starts in the first occurrence
 * of "prepost") with a message
 * containing sub; checks *out is left empty. */
static void bad(const char *txt, const char *at, const char *sub)
{
    Directive d;
    DirError e;
    int want, r;

    memset(&d, 0x5a, sizeof d);
    r = directive_parse(txt, &d, &e);
    cr_assert_eq(r, -1, "\"%s\" parsed but should fail", txt);
    cr_assert_eq(d.nclauses, 0);
    cr_assert_null(d.clauses);
    cr_assert_eq(d.nvariants, 0);
    cr_assert_null(d.variants);
    cr_assert_eq(d.kind, DIR_OTHER);
    if (!at)
        want = (int)strlen(txt);
    else if (at[0] == '@')
        want = atoi(at + 1);
    else {
        /* "pre|post": the offset of post in the first occurrence of prepost */
        char buf[256];
        const char *bar = strchr(at, '|'), *q;
        size_t np = bar ? (size_t)(bar - at) : 0;
        snprintf(buf, sizeof buf, "%.*s%s", (int)np, at, bar ? bar + 1 : at);
        q = strstr(txt, buf);
        cr_assert_not_null(q, "bad test: '%s' not in '%s'", buf, txt);
        want = (int)(q - txt + (ptrdiff_t)np);
    }
    cr_assert_eq(e.off, want, "\"%s\": error at %d, expected %d (%s)", txt, e.off, want, e.msg);
    cr_assert_not_null(strstr(e.msg, sub), "\"%s\": message \"%s\" lacks \"%s\"", txt, e.msg, sub);
    cr_assert(e.msg[0] && !(e.msg[0] >= 'A' && e.msg[0] <= 'Z'), "message starts upper-case: %s", e.msg);
    cr_assert_neq(e.msg[strlen(e.msg) - 1], '.', "message ends with a period: %s", e.msg);
}

static void str_or_null(const char *got, const char *want, const char *what)
{
    if (!want)
        cr_assert_null(got, "%s: expected NULL, got \"%s\"", what, got ? got : "");
    else {
        cr_assert_not_null(got, "%s: expected \"%s\", got NULL", what, want);
        cr_assert_str_eq(got, want, "%s", what);
    }
}

static void item(const DirItem *it, const char *base, int is_ident, int nsubs)
{
    cr_assert_str_eq(it->base, base);
    cr_assert_eq(it->is_ident, is_ident, "is_ident of %s", base);
    cr_assert_eq(it->nsubs, nsubs, "nsubs of %s", base);
}

static void sub(const DirSub *s, int is_section, const char *lo, const char *len)
{
    cr_assert_eq(s->is_section, is_section);
    str_or_null(s->lo, lo, "lo");
    str_or_null(s->len, len, "len");
}

static const DirClause *clause(int i, ClauseKind k)
{
    cr_assert_gt(D.nclauses, i, "only %d clauses", D.nclauses);
    cr_assert_eq(D.clauses[i].kind, k, "clause %d is %s, not %s", i,
                 directive_clause_name(D.clauses[i].kind), directive_clause_name(k));
    return &D.clauses[i];
}

static int off_of(const char *txt, const char *at) { return (int)(strstr(txt, at) - txt); }

/* ------------------------------------------------------------------ */
/* omp target                                                         */
/* ------------------------------------------------------------------ */

Test(directive, target_paper_line)
{
    const char *t = "omp target device(any) map(tofrom: vx[k:BS], vy[k:BS]) nowait depend(inout: c[i*BS:BS])";
    const DirClause *c;
    ok(t);
    cr_assert_eq(D.kind, DIR_TARGET);
    cr_assert_eq(D.is_acc, 0);
    cr_assert_eq(D.cs, 0);
    cr_assert_eq(D.nclauses, 4);
    c = clause(0, CL_DEVICE);
    cr_assert_eq(c->modifier, DEVSEL_ANY);
    cr_assert_eq(c->off, off_of(t, "device"));
    c = clause(1, CL_MAP);
    cr_assert_eq(c->modifier, MAPT_TOFROM);
    cr_assert_eq(c->always, 0);
    cr_assert_eq(c->off, off_of(t, "map"));
    cr_assert_eq(c->nitems, 2);
    item(&c->items[0], "vx", 1, 1);
    sub(&c->items[0].subs[0], 1, "k", "BS");
    cr_assert_eq(c->items[0].off, off_of(t, "vx"));
    item(&c->items[1], "vy", 1, 1);
    cr_assert_eq(c->items[1].off, off_of(t, "vy"));
    c = clause(2, CL_NOWAIT);
    cr_assert_eq(c->off, off_of(t, "nowait"));
    c = clause(3, CL_DEPEND);
    cr_assert_eq(c->modifier, DEP_INOUT);
    item(&c->items[0], "c", 1, 1);
    sub(&c->items[0].subs[0], 1, "i*BS", "BS");
}

Test(directive, target_bare)
{
    ok("omp target");
    cr_assert_eq(D.kind, DIR_TARGET);
    cr_assert_eq(D.nclauses, 0);
    ok("  omp   target  \n");
    cr_assert_eq(D.kind, DIR_TARGET);
}

Test(directive, device_keywords_case_insensitive)
{
    static const struct { const char *t; int dev; } cases[] = {
        {"omp target device(any)", DEVSEL_ANY},       {"omp target device(ANY)", DEVSEL_ANY},
        {"omp target device(host)", DEVSEL_HOST},     {"omp target device(Host)", DEVSEL_HOST},
        {"omp target device(smp)", DEVSEL_HOST},      {"omp target device(nvidia)", DEVSEL_NVIDIA},
        {"omp target device(NVIDIA)", DEVSEL_NVIDIA}, {"omp target device( cuda )", DEVSEL_NVIDIA},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ok(cases[i].t);
        cr_assert_eq(clause(0, CL_DEVICE)->modifier, cases[i].dev, "%s", cases[i].t);
        cr_assert_null(D.clauses[0].arg);
        directive_free(&D);
    }
}

Test(directive, device_number_and_expression)
{
    const DirClause *c;
    ok("omp target device(0)");
    c = clause(0, CL_DEVICE);
    cr_assert_eq(c->modifier, DEVSEL_NUM);
    cr_assert_str_eq(c->arg, "0");
    cr_assert_eq(c->ival, 0);
    directive_free(&D);
    ok("omp target device( dev   +\t1 )");
    c = clause(0, CL_DEVICE);
    cr_assert_eq(c->modifier, DEVSEL_NUM);
    cr_assert_str_eq(c->arg, "dev + 1");
    directive_free(&D);
    ok("omp target device(device_num: 2)");
    c = clause(0, CL_DEVICE);
    cr_assert_eq(c->modifier, DEVSEL_NUM);
    cr_assert_str_eq(c->arg, "2");
    cr_assert_eq(c->ival, 2);
}

Test(directive, device_bad_kind)
{
    ok("omp target device(gpu)"); /* a variable named gpu: OpenMP's device number */
    cr_assert_eq(clause(0, CL_DEVICE)->modifier, DEVSEL_NUM);
    cr_assert_str_eq(D.clauses[0].arg, "gpu");
    bad("omp target device()", ")", "device");
    bad("omp target device(ancestor: 1)", "ancestor", "ancestor");
}

Test(directive, map_types)
{
    static const struct { const char *t; int mt; } cases[] = {
        {"omp target map(to: a)", MAPT_TO},       {"omp target map(from: a)", MAPT_FROM},
        {"omp target map(tofrom: a)", MAPT_TOFROM}, {"omp target map(alloc: a)", MAPT_ALLOC},
        {"omp target map(a)", MAPT_TOFROM},       {"omp target map(to:a)", MAPT_TO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const DirClause *c;
        ok(cases[i].t);
        c = clause(0, CL_MAP);
        cr_assert_eq(c->modifier, cases[i].mt, "%s", cases[i].t);
        cr_assert_eq(c->nitems, 1);
        item(&c->items[0], "a", 1, 0);
        cr_assert_eq(c->items[0].off, (int)(strrchr(cases[i].t, 'a') - cases[i].t));
        directive_free(&D);
    }
}

Test(directive, map_always_forms)
{
    static const char *const forms[] = {
        "omp target map(always, to: x)", "omp target map(always to: x)",
        "omp target map(always,to:x)", "omp target map(close, always, to: x)",
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        const DirClause *c;
        ok(forms[i]);
        c = clause(0, CL_MAP);
        cr_assert_eq(c->always, 1, "%s", forms[i]);
        cr_assert_eq(c->modifier, MAPT_TO, "%s", forms[i]);
        item(&c->items[0], "x", 1, 0);
        directive_free(&D);
    }
}

Test(directive, map_errors)
{
    bad("omp target map(tofro: a[0:n])", "tofro", "map type");
    bad("omp target map(always: a)", ":", "map type");
    bad("omp target map(delete: a)", "delete", "map");
    bad("omp target map(release: a)", "release", "map");
    bad("omp target map(to from: a)", "from", "map type");
    bad("omp target teams distribute parallel for map(to:) map(tofrom: a[0:n])", ")", "expected a list item");
}

Test(directive, depend_types)
{
    const char *t = "omp target depend(in: a[0:n], b) depend(out: c) depend(inout: d[i][j])";
    ok(t);
    cr_assert_eq(clause(0, CL_DEPEND)->modifier, DEP_IN);
    cr_assert_eq(D.clauses[0].nitems, 2);
    item(&D.clauses[0].items[1], "b", 1, 0);
    cr_assert_eq(clause(1, CL_DEPEND)->modifier, DEP_OUT);
    cr_assert_eq(clause(2, CL_DEPEND)->modifier, DEP_INOUT);
    item(&D.clauses[2].items[0], "d", 1, 2);
    sub(&D.clauses[2].items[0].subs[0], 0, "i", NULL);
    sub(&D.clauses[2].items[0].subs[1], 0, "j", NULL);
}

Test(directive, depend_errors)
{
    bad("omp target map(tofrom: a[0:n]) depend(read: a[0:n]) nowait", "read", "depend");
    bad("omp target depend(a[0:n])", "a[", "depend");
    bad("omp target depend(: a)", ":", "depend");
}

Test(directive, if_clause)
{
    const DirClause *c;
    ok("omp target if(n > 10000 && n % 2 == 0)");
    c = clause(0, CL_IF);
    cr_assert_null(c->name);
    cr_assert_str_eq(c->arg, "n > 10000 && n % 2 == 0");
    directive_free(&D);
    ok("omp target teams distribute parallel for if(target: n > 10)");
    c = clause(0, CL_IF);
    cr_assert_str_eq(c->name, "target");
    cr_assert_str_eq(c->arg, "n > 10");
    directive_free(&D);
    ok("omp target data map(to: a) if(target  data : big)");
    c = clause(1, CL_IF);
    cr_assert_str_eq(c->name, "target data");
    cr_assert_str_eq(c->arg, "big");
    directive_free(&D);
    ok("omp target if(c ? x : y)");
    c = clause(0, CL_IF);
    cr_assert_null(c->name);
    cr_assert_str_eq(c->arg, "c ? x : y");
}

Test(directive, if_errors)
{
    bad("omp target if()", ")", "expected an expression");
    bad("omp target if(bogus: x)", "bogus", "modifier");
    bad("omp target if(a) if(b)", "if(b)", "duplicate");
}

Test(directive, data_sharing_and_misc_clauses)
{
    const char *t = "omp target firstprivate(base, s.k) private(t) shared(q) is_device_ptr(dp) defaultmap(tofrom: scalar) resources(30)";
    ok(t);
    cr_assert_eq(clause(0, CL_FIRSTPRIVATE)->nitems, 2);
    item(&D.clauses[0].items[1], "s.k", 0, 0);
    item(&clause(1, CL_PRIVATE)->items[0], "t", 1, 0);
    item(&clause(2, CL_SHARED)->items[0], "q", 1, 0);
    item(&clause(3, CL_IS_DEVICE_PTR)->items[0], "dp", 1, 0);
    cr_assert_str_eq(clause(4, CL_DEFAULTMAP)->arg, "tofrom: scalar");
    cr_assert_eq(clause(5, CL_RESOURCES)->ival, 30);
}

Test(directive, clause_separators)
{
    ok("omp target map(to: a),nowait , device(1)  ,depend(in: a)");
    cr_assert_eq(D.nclauses, 4);
    cr_assert_eq(D.clauses[3].kind, CL_DEPEND);
    bad("omp target map(to: a),", NULL, "expected a clause");
    bad("omp target map(to: a),, nowait", ", nowait", "expected a clause");
}

Test(directive, trailing_garbage)
{
    bad("omp target map(to: a) )", "a) |)", "expected a clause");
    bad("omp target nowait 42", "42", "expected a clause");
    bad("omp target nowait(1)", "(", "argument");
}

Test(directive, unknown_clause)
{
    const char *t = "omp target teams distribute parallel for map(tofrom: a[0:n]) frobnicate(3)";
    bad(t, "frobnicate", "unknown clause 'frobnicate' on 'target'");
    bad("omp target foo", "foo", "unknown clause 'foo' on 'target'");
    bad("omp target update to(a) enter(b)", "enter", "unknown clause 'enter'");
}

Test(directive, parentheses_errors)
{
    bad("omp target teams distribute parallel for map(tofrom: a[0:n]", NULL, "expected ')'");
    bad("omp target map(to: a[0:n)", ")", "expected ']'");
    bad("omp target map to: a", "to:", "expected '('");
    bad("omp target map(to: a]) nowait", "]", "expected ')'");
    bad("omp target if((a)", NULL, "expected ')'");
    bad("omp target if(\"x)", "\"", "unterminated string");
}

/* ------------------------------------------------------------------ */
/* construct-sets                                                     */
/* ------------------------------------------------------------------ */

Test(directive, construct_sets_on_target)
{
    static const struct { const char *t; unsigned cs; } cases[] = {
        {"omp target teams distribute parallel for", CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR},
        {"omp target teams distribute parallel for simd", CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_SIMD},
        {"omp target teams distribute", CS_TEAMS | CS_DISTRIBUTE},
        {"omp target teams distribute simd", CS_TEAMS | CS_DISTRIBUTE | CS_SIMD},
        {"omp target distribute parallel for", CS_DISTRIBUTE | CS_PARALLEL_FOR},
        {"omp target distribute parallel for simd", CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_SIMD},
        {"omp target parallel for", CS_PARALLEL_FOR},
        {"omp target parallel for simd", CS_PARALLEL_FOR | CS_SIMD},
        {"omp target simd", CS_SIMD},
        {"omp target teams", CS_TEAMS},
        {"omp target distribute", CS_DISTRIBUTE},
        {"omp target parallel", CS_PARALLEL},
        {"omp target teams loop", CS_TEAMS | CS_LOOP | CS_DISTRIBUTE | CS_PARALLEL_FOR},
        {"omp target parallel loop", CS_PARALLEL | CS_LOOP | CS_PARALLEL_FOR},
        {"omp target loop", CS_LOOP | CS_PARALLEL_FOR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ok(cases[i].t);
        cr_assert_eq(D.kind, DIR_TARGET, "%s", cases[i].t);
        cr_assert_eq(D.cs, cases[i].cs, "%s: cs %u", cases[i].t, D.cs);
        cr_assert_eq(D.nclauses, 0);
        directive_free(&D);
    }
}

Test(directive, construct_set_after_clauses)
{
    ok("omp target device(any) distribute parallel for");
    cr_assert_eq(D.cs, CS_DISTRIBUTE | CS_PARALLEL_FOR);
    cr_assert_eq(D.nclauses, 1);
    directive_free(&D);
    ok("omp target device(any) map(tofrom: y[0:n]) nowait parallel for num_threads(4)");
    cr_assert_eq(D.cs, CS_PARALLEL_FOR);
    cr_assert_eq(D.nclauses, 4);
    cr_assert_eq(clause(3, CL_NUM_THREADS)->ival, 4);
}

Test(directive, construct_set_errors)
{
    bad("omp target parallel simd", "simd", "expected 'for' or 'loop' after 'parallel'");
    bad("omp target parallel teams", "teams", "expected 'for' or 'loop'");
    bad("omp target distribute parallel map(to: a)", "map", "expected 'for' after 'parallel'");
    bad("omp target distribute parallel loop", "loop", "expected 'for' after 'parallel'");
    bad("omp target teams parallel for", "parallel", "expected 'distribute' or 'loop'");
    bad("omp target teams simd", "simd", "expected 'distribute' or 'loop'");
    bad("omp target for", "for", "unknown clause 'for'");
    bad("omp target teams loop simd", "simd", "construct-set");
    bad("omp target loop num_teams(4)", "num_teams", "needs 'teams'");
    bad("omp target parallel collapse(2)", "collapse", "not allowed on 'target parallel'");
    bad("omp target parallel schedule(static)", "schedule", "not allowed on 'target parallel'");
    bad("omp target teams distribute map(to: a) simd", "simd", "construct-set");
    bad("omp target parallel for teams", "teams", "construct-set");
}

Test(directive, construct_set_clauses)
{
    const char *t = "omp target teams distribute parallel for simd num_teams(n / 128 + 1) thread_limit(128) "
                    "num_threads(64) collapse(2) schedule(static, 4) dist_schedule(static) simdlen(8) "
                    "safelen(16) lastprivate(last) private(t) firstprivate(s)";
    const DirClause *c;
    ok(t);
    cr_assert_eq(D.nclauses, 11);
    c = clause(0, CL_NUM_TEAMS);
    cr_assert_str_eq(c->arg, "n / 128 + 1");
    cr_assert_eq(c->ival, 0);
    c = clause(1, CL_THREAD_LIMIT);
    cr_assert_str_eq(c->arg, "128");
    cr_assert_eq(c->ival, 128);
    cr_assert_str_eq(clause(2, CL_NUM_THREADS)->arg, "64");
    c = clause(3, CL_COLLAPSE);
    cr_assert_eq(c->ival, 2);
    cr_assert_str_eq(c->arg, "2");
    cr_assert_str_eq(clause(4, CL_SCHEDULE)->arg, "static, 4");
    cr_assert_str_eq(clause(5, CL_DIST_SCHEDULE)->arg, "static");
    cr_assert_str_eq(clause(6, CL_SIMDLEN)->arg, "8");
    cr_assert_str_eq(clause(7, CL_SAFELEN)->arg, "16");
    item(&clause(8, CL_LASTPRIVATE)->items[0], "last", 1, 0);
    item(&clause(9, CL_PRIVATE)->items[0], "t", 1, 0);
    item(&clause(10, CL_FIRSTPRIVATE)->items[0], "s", 1, 0);
}

Test(directive, reduction_operators)
{
    static const struct { const char *op; int red; } ops[] = {
        {"+", RED_ADD}, {"*", RED_MUL}, {"-", RED_SUB}, {"min", RED_MIN}, {"max", RED_MAX},
        {"&", RED_BAND}, {"|", RED_BOR}, {"^", RED_BXOR}, {"&&", RED_LAND}, {"||", RED_LOR},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        char t[128];
        const DirClause *c;
        snprintf(t, sizeof t, "omp target parallel for reduction( %s : s1, s2)", ops[i].op);
        ok(t);
        c = clause(0, CL_REDUCTION);
        cr_assert_eq(c->modifier, ops[i].red, "%s", t);
        cr_assert_str_eq(directive_reduction_op(c->modifier), ops[i].op);
        cr_assert_eq(c->nitems, 2);
        item(&c->items[1], "s2", 1, 0);
        directive_free(&D);
    }
}

Test(directive, reduction_errors)
{
    bad("omp target teams distribute parallel for reduction(/: s) map(to: a[0:n])", "/", "reduction");
    bad("omp target parallel for reduction(s)", "s)", "reduction");
    bad("omp target parallel for reduction(: s)", ":", "reduction");
    bad("omp target parallel for reduction(foo: s)", "foo", "reduction operator 'foo'");
    bad("omp target parallel for reduction(+:)", ")", "expected a list item");
}

Test(directive, collapse_values)
{
    ok("omp target parallel for collapse(0x3)");
    cr_assert_eq(clause(0, CL_COLLAPSE)->ival, 3);
    directive_free(&D);
    ok("omp target parallel for collapse( 2u )");
    cr_assert_eq(clause(0, CL_COLLAPSE)->ival, 2);
    bad("omp target parallel for collapse(n)", "n)", "collapse");
    bad("omp target parallel for collapse(0)", "0)", "collapse");
    bad("omp target parallel for collapse(-1)", "-1", "collapse");
    bad("omp target parallel for collapse()", ")", "collapse");
}

Test(directive, clause_needs_construct)
{
    bad("omp target map(to: a) num_threads(4)", "num_threads", "not allowed on 'target'");
    bad("omp target parallel for safelen(4)", "safelen", "not allowed on 'target parallel for'");
    bad("omp target parallel for num_teams(4)", "num_teams", "teams");
    bad("omp target teams dist_schedule(static)", "dist_schedule", "distribute");
    bad("omp target reduction(+: s)", "reduction", "not allowed");
    bad("omp simd num_threads(2)", "num_threads", "not allowed on 'simd'");
    ok("omp target thread_limit(64) firstprivate(a) shared(b)");
    cr_assert_eq(D.nclauses, 3);
}

Test(directive, duplicate_clauses)
{
    bad("omp target nowait nowait", "nowait |nowait", "duplicate clause 'nowait'");
    bad("omp target device(any) map(to: a) device(host)", "device(host)", "duplicate");
    bad("omp target parallel for collapse(2) collapse(2)", "collapse(2) |collapse", "duplicate");
    ok("omp target parallel for if(target: a) if(parallel: b) map(to: x) map(from: y)");
    cr_assert_eq(D.nclauses, 4);
}

/* ------------------------------------------------------------------ */
/* list items and sections                                            */
/* ------------------------------------------------------------------ */

Test(directive, section_forms)
{
    const char *t = "omp target map(to: a[e], b[lo:len], c[:len], d[lo:], e[:])";
    const DirClause *c;
    ok(t);
    c = clause(0, CL_MAP);
    cr_assert_eq(c->nitems, 5);
    item(&c->items[0], "a", 1, 1);
    sub(&c->items[0].subs[0], 0, "e", NULL);
    sub(&c->items[1].subs[0], 1, "lo", "len");
    sub(&c->items[2].subs[0], 1, NULL, "len");
    sub(&c->items[3].subs[0], 1, "lo", NULL);
    sub(&c->items[4].subs[0], 1, NULL, NULL);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(c->items[i].off, off_of(t, (const char[]){(char)('a' + i), '[', 0}));
}

Test(directive, section_multidimensional)
{
    const DirClause *c;
    ok("omp target map(tofrom: a[i][0:COLS], m[0:nrows][0:COLS][:], x [ 2 ] [ 1 : 3 ])");
    c = clause(0, CL_MAP);
    item(&c->items[0], "a", 1, 2);
    sub(&c->items[0].subs[0], 0, "i", NULL);
    sub(&c->items[0].subs[1], 1, "0", "COLS");
    item(&c->items[1], "m", 1, 3);
    sub(&c->items[1].subs[2], 1, NULL, NULL);
    item(&c->items[2], "x", 1, 2);
    sub(&c->items[2].subs[1], 1, "1", "3");
}

Test(directive, member_expression_bases)
{
    const DirClause *c;
    ok("omp target map(to: s.a, p->x, s.b[0:n], p -> v[0:p->n], (*q).f, arr_2)");
    c = clause(0, CL_MAP);
    cr_assert_eq(c->nitems, 6);
    item(&c->items[0], "s.a", 0, 0);
    item(&c->items[1], "p->x", 0, 0);
    item(&c->items[2], "s.b", 0, 1);
    item(&c->items[3], "p -> v", 0, 1);
    sub(&c->items[3].subs[0], 1, "0", "p->n");
    item(&c->items[4], "(*q).f", 0, 0);
    item(&c->items[5], "arr_2", 1, 0);
}

Test(directive, section_expressions)
{
    const DirClause *c;
    ok("omp target map(to: a[c ? 1 : 2 : n], b[f(x, y):idx[2]], d[  i *\tBS :   BS ], e[(k>0?k:0):m])");
    c = clause(0, CL_MAP);
    cr_assert_eq(c->nitems, 4);
    sub(&c->items[0].subs[0], 1, "c ? 1 : 2", "n");
    sub(&c->items[1].subs[0], 1, "f(x, y)", "idx[2]");
    sub(&c->items[2].subs[0], 1, "i * BS", "BS");
    sub(&c->items[3].subs[0], 1, "(k>0?k:0)", "m");
}

Test(directive, literals_and_comments_in_expressions)
{
    const DirClause *c;
    ok("omp target if(strcmp(s, \"a):b,  c\") == ')') /* note: map(x) */ nowait // trailing");
    cr_assert_eq(D.nclauses, 2);
    c = clause(0, CL_IF);
    cr_assert_null(c->name);
    cr_assert_str_eq(c->arg, "strcmp(s, \"a):b,  c\") == ')'");
    cr_assert_eq(D.clauses[1].kind, CL_NOWAIT);
}

Test(directive, list_item_errors)
{
    bad("omp target teams distribute parallel for map(to: a[0:n] b[0:n])", "b[", "expected ','");
    bad("omp target private(a b)", "b)", "expected ','");
    bad("omp target private(a,,b)", ",b", "expected a list item");
    bad("omp target private(a,)", ")", "expected a list item");
    bad("omp target private()", ")", "expected a list item");
    bad("omp target map(to: a[0:n:])", ":]", "stride"); /* a stride itself parses: the analysis allows it in target update only */
    bad("omp target map(to: a[])", "[", "expected an expression");
    bad("omp target map(to: x+1)", "+", "list item");
    bad("omp target map(to: a[0].x)", ".x", "expected ','");
}

/* ------------------------------------------------------------------ */
/* if_device                                                          */
/* ------------------------------------------------------------------ */

Test(directive, if_device_paper)
{
    const char *t = "omp if_device(NVIDIA,cc35) teams distribute parallel for resources(2)";
    ok(t);
    cr_assert_eq(D.kind, DIR_IF_DEVICE);
    cr_assert_eq(D.arch, ARCH_NVIDIA);
    cr_assert_eq(D.min_cc, 35);
    cr_assert_eq(D.cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    cr_assert_eq(clause(0, CL_RESOURCES)->ival, 2);
    cr_assert_str_eq(D.clauses[0].arg, "2");
    cr_assert_eq(D.clauses[0].off, off_of(t, "resources"));
    directive_free(&D);
    ok("omp if_device(host) parallel for resources (40)");
    cr_assert_eq(D.arch, ARCH_HOST);
    cr_assert_eq(D.min_cc, 0);
    cr_assert_eq(D.cs, CS_PARALLEL_FOR);
    cr_assert_eq(clause(0, CL_RESOURCES)->ival, 40);
}

Test(directive, if_device_arch_aliases_and_subtypes)
{
    static const struct { const char *t; int arch, cc; } cases[] = {
        {"omp if_device(cuda, cc90) simd", ARCH_NVIDIA, 90},
        {"omp if_device(NVIDIA, sm_90) simd", ARCH_NVIDIA, 90},
        {"omp if_device(nvidia, sm90) simd", ARCH_NVIDIA, 90},
        {"omp if_device(Nvidia) simd", ARCH_NVIDIA, 0},
        {"omp if_device(SMP) simd", ARCH_HOST, 0},
        {"omp if_device( Host ) simd", ARCH_HOST, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ok(cases[i].t);
        cr_assert_eq(D.arch, cases[i].arch, "%s", cases[i].t);
        cr_assert_eq(D.min_cc, cases[i].cc, "%s", cases[i].t);
        cr_assert_eq(D.cs, CS_SIMD);
        directive_free(&D);
    }
}

Test(directive, if_device_clauses)
{
    ok("omp if_device(nvidia, cc35) teams distribute parallel for reduction(+: sum2) num_teams(8) thread_limit(128) collapse(2)");
    cr_assert_eq(D.nclauses, 4);
    cr_assert_eq(clause(0, CL_REDUCTION)->modifier, RED_ADD);
    cr_assert_eq(clause(3, CL_COLLAPSE)->ival, 2);
}

Test(directive, if_device_empty_construct_set)
{
    ok("omp if_device(host) resources(50)");
    cr_assert_eq(D.kind, DIR_IF_DEVICE);
    cr_assert_eq(D.cs, 0);
    cr_assert_eq(clause(0, CL_RESOURCES)->ival, 50);
    directive_free(&D);
    ok("omp if_device(host) num_threads(8)");
    cr_assert_eq(D.cs, 0);
    cr_assert_eq(clause(0, CL_NUM_THREADS)->ival, 8);
}

Test(directive, resources_values)
{
    const DirClause *c;
    ok("omp if_device(host) parallel for resources(auto)");
    c = clause(0, CL_RESOURCES);
    cr_assert_eq(c->ival, -2);
    cr_assert_str_eq(c->arg, "auto");
    directive_free(&D);
    ok("omp if_device(host) parallel for resources(100)");
    cr_assert_eq(clause(0, CL_RESOURCES)->ival, 100);
    directive_free(&D);
    ok("omp if_device(host) parallel for resources(share * 2)");
    c = clause(0, CL_RESOURCES);
    cr_assert_eq(c->ival, -1);
    cr_assert_str_eq(c->arg, "share * 2");
    directive_free(&D);
    ok("omp target device(any) resources(AUTO)");
    cr_assert_eq(clause(1, CL_RESOURCES)->ival, -2);
}

Test(directive, resources_errors)
{
    bad("omp if_device(nvidia) teams distribute parallel for resources(101)", "101", "resources");
    bad("omp if_device(host) parallel for resources(0)", "0)", "resources");
    bad("omp if_device(host) parallel for resources(-5)", "-5", "resources");
    bad("omp if_device(host) parallel for resources()", "resources(|)", "resources");
    bad("omp if_device(host) resources(10) resources(20)", "resources(20)", "duplicate");
}

Test(directive, if_device_errors)
{
    bad("omp if_device(amdgpu) teams distribute parallel for resources(10)", "amdgpu", "architecture");
    bad("omp if_device() simd", ")", "architecture");
    bad("omp if_device(nvidia, cc3x) simd", "cc3x", "subtype");
    bad("omp if_device(host, cc35) simd", "cc35", "architecture");
    bad("omp if_device(nvidia cc35) simd", "cc35", "expected ')'");
    bad("omp if_device simd", "simd", "expected '('");
    bad("omp if_device(host) parallel for tokens(40)", "tokens", "unknown clause 'tokens' on 'if_device'");
    bad("omp if_device(host) parallel for map(to: a)", "map", "not allowed on 'if_device'");
    bad("omp if_device(host) parallel simd", "simd", "expected 'for' or 'loop'");
}

/* ------------------------------------------------------------------ */
/* metadirective                                                      */
/* ------------------------------------------------------------------ */

Test(directive, metadirective_when_default)
{
    const Directive *v;
    ok("omp metadirective when(device={kind(gpu)}: teams distribute parallel for) default(parallel for)");
    cr_assert_eq(D.kind, DIR_METADIRECTIVE);
    cr_assert_eq(D.nclauses, 0);
    cr_assert_eq(D.nvariants, 2);
    v = &D.variants[0];
    cr_assert_eq(v->kind, DIR_IF_DEVICE);
    cr_assert_eq(v->arch, ARCH_NVIDIA);
    cr_assert_eq(v->cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    v = &D.variants[1];
    cr_assert_eq(v->kind, DIR_IF_DEVICE);
    cr_assert_eq(v->arch, 0);
    cr_assert_eq(v->cs, CS_PARALLEL_FOR);
}

Test(directive, metadirective_otherwise_with_clauses)
{
    const char *t = "omp metadirective when(device={kind(gpu)}: teams distribute parallel for reduction(+: s)) "
                    "otherwise(parallel for reduction(+: s) num_threads(4))";
    ok(t);
    cr_assert_eq(D.nvariants, 2);
    cr_assert_eq(D.variants[0].nclauses, 1);
    cr_assert_eq(D.variants[0].clauses[0].kind, CL_REDUCTION);
    cr_assert_eq(D.variants[0].clauses[0].off, off_of(t, "reduction"));
    cr_assert_eq(D.variants[1].nclauses, 2);
    cr_assert_eq(D.variants[1].clauses[1].kind, CL_NUM_THREADS);
}

Test(directive, metadirective_selectors)
{
    static const struct { const char *sel; int arch, cc; } cases[] = {
        {"device={kind(gpu)}", ARCH_NVIDIA, 0},
        {"device={kind(nohost)}", ARCH_NVIDIA, 0},
        {"device={kind(host)}", ARCH_HOST, 0},
        {"device={kind(cpu)}", ARCH_HOST, 0},
        {"device={kind(any)}", 0, 0},
        {"device={arch(\"nvidia\")}", ARCH_NVIDIA, 0},
        {"device={arch(\"sm_90\")}", ARCH_NVIDIA, 90},
        {"device = { kind(gpu), arch(nvptx64) }", ARCH_NVIDIA, 0},
        {"device={kind(gpu), arch(\"sm_80\")}", ARCH_NVIDIA, 80},
        {"device={arch(x86_64)}", ARCH_HOST, 0},
        {"implementation={vendor(nvidia)}", ARCH_NVIDIA, 0},
        {"implementation={vendor(amd)}", ARCH_NONE, 0},
        {"implementation = { vendor(llvm, \"nvidia\") }", ARCH_NVIDIA, 0},
        {"device={kind(host)}, implementation={vendor(nvidia)}", ARCH_NONE, 0},
        {"implementation={vendor(nvidia)}, device={arch(\"sm_80\")}", ARCH_NVIDIA, 80},
        {"device={kind(any)}, implementation={vendor(gnu)}", ARCH_NONE, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char t[256];
        snprintf(t, sizeof t, "omp metadirective when(%s: simd) default(nothing)", cases[i].sel);
        ok(t);
        cr_assert_eq(D.nvariants, 2);
        cr_assert_eq(D.variants[0].arch, cases[i].arch, "%s", t);
        cr_assert_eq(D.variants[0].min_cc, cases[i].cc, "%s", t);
        cr_assert_eq(D.variants[0].cs, CS_SIMD);
        cr_assert_eq(D.variants[1].cs, 0);
        cr_assert_eq(D.variants[1].arch, 0);
        directive_free(&D);
    }
}

Test(directive, metadirective_several_when)
{
    ok("omp metadirective when(device={kind(gpu)}: teams distribute parallel for resources(5)), "
       "when(device={kind(host)}: parallel for resources(auto)) default()");
    cr_assert_eq(D.nvariants, 3);
    cr_assert_eq(D.variants[0].clauses[0].ival, 5);
    cr_assert_eq(D.variants[1].arch, ARCH_HOST);
    cr_assert_eq(D.variants[1].clauses[0].ival, -2);
    cr_assert_eq(D.variants[2].cs, 0);
    cr_assert_eq(D.variants[2].nclauses, 0);
}

Test(directive, metadirective_errors)
{
    bad("omp metadirective when(hardware={kind(gpu)}: teams distribute parallel for) default(parallel for)",
        "hardware", "metadirective");
    bad("omp metadirective when(user={condition(n > 5)}: simd)", "user", "metadirective");
    bad("omp metadirective when(implementation={extension(x)}: simd)", "extension", "metadirective");
    bad("omp metadirective when(implementation={vendor(nvidia)}, implementation={vendor(amd)}: simd)",
        "implementation={vendor(amd", "metadirective");
    bad("omp metadirective when(implementation={vendor(nvidia) x}: simd)", "x}", "metadirective");
    bad("omp metadirective when(device={kind(fpga)}: simd)", "fpga", "metadirective");
    bad("omp metadirective when(device={arch(\"amdgcn\")}: simd)", "\"amdgcn", "metadirective");
    bad("omp metadirective when(device={isa(avx512f)}: simd)", "isa", "metadirective");
    bad("omp metadirective when(device={kind(gpu), kind(host)}: simd)", "host", "metadirective");
    bad("omp metadirective when(device={kind(gpu)} simd)", "simd|)", "metadirective");
    bad("omp metadirective when(device={}: simd)", "}", "metadirective");
    bad("omp metadirective when(device kind(gpu): simd)", "kind", "metadirective");
    bad("omp metadirective default(simd) otherwise(simd)", "otherwise", "metadirective");
    bad("omp metadirective", NULL, "metadirective");
    bad("omp metadirective frob(simd)", "frob", "metadirective");
    bad("omp metadirective when(device={kind(gpu)}: simd foo(1))", "foo", "metadirective");
}

/* ------------------------------------------------------------------ */
/* bare construct-sets (DIR_LOOP)                                     */
/* ------------------------------------------------------------------ */

Test(directive, loop_directives)
{
    static const struct { const char *t; unsigned cs; } cases[] = {
        {"omp teams distribute parallel for", CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR},
        {"omp parallel for", CS_PARALLEL_FOR},
        {"omp parallel for simd", CS_PARALLEL_FOR | CS_SIMD},
        {"omp simd", CS_SIMD},
        {"omp distribute", CS_DISTRIBUTE},
        {"omp distribute parallel for", CS_DISTRIBUTE | CS_PARALLEL_FOR},
        {"omp teams", CS_TEAMS},
        {"omp teams distribute simd", CS_TEAMS | CS_DISTRIBUTE | CS_SIMD},
        {"omp parallel", CS_PARALLEL},
        {"omp parallel num_threads(4)", CS_PARALLEL},
        {"omp for", CS_FOR},
        {"omp for simd", CS_FOR | CS_SIMD},
        {"omp loop", CS_LOOP},
        {"omp teams loop", CS_TEAMS | CS_LOOP | CS_DISTRIBUTE | CS_PARALLEL_FOR},
        {"omp parallel loop", CS_PARALLEL | CS_LOOP | CS_PARALLEL_FOR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ok(cases[i].t);
        cr_assert_eq(D.kind, DIR_LOOP, "%s", cases[i].t);
        cr_assert_eq(D.cs, cases[i].cs, "%s", cases[i].t);
        directive_free(&D);
    }
}

Test(directive, loop_clauses)
{
    const DirClause *c;
    ok("omp simd reduction(+:Fx,Fy,Fz)");
    cr_assert_eq(D.kind, DIR_LOOP);
    c = clause(0, CL_REDUCTION);
    cr_assert_eq(c->nitems, 3);
    item(&c->items[2], "Fz", 1, 0);
    directive_free(&D);
    ok("omp parallel for reduction(+: s) schedule(dynamic, 64) private(t) if(n > 100) num_threads(nt)");
    cr_assert_eq(D.nclauses, 5);
    cr_assert_str_eq(clause(4, CL_NUM_THREADS)->arg, "nt");
}

Test(directive, loop_errors)
{
    bad("omp parallel for proc_bind(close)", "proc_bind", "unknown clause 'proc_bind' on 'parallel for'");
    ok("omp parallel for default(none) aligned(a: 64) nontemporal(a)");
    cr_assert_eq(D.clauses[0].kind, CL_ACCEPTED);
    cr_assert_str_eq(D.clauses[0].name, "default");
    cr_assert_str_eq(D.clauses[0].arg, "none");
    bad("omp parallel for default(everything)", "everything", "expected shared, none, firstprivate or private");
    ok("omp target teams loop bind(teams)");
    cr_assert_eq(D.clauses[0].kind, CL_ACCEPTED);
    bad("omp loop bind(grid)", "grid", "expected teams, parallel or thread");
    bad("omp teams loop bind(thread)", "thread", "only allowed on a 'loop' directive of its own");
    ok("omp loop bind(thread)");
    cr_assert_eq(D.kind, DIR_OTHER, "each thread runs the loop as written: not ours");
    cr_assert_eq(D.nclauses, 0);
    ok("omp target teams distribute parallel for reduction(task, +: s)");
    cr_assert_eq(D.clauses[0].modifier, RED_ADD);
    cr_assert_str_eq(D.clauses[0].name, "task", "the task modifier is kept (host versions print it)");
    ok("omp parallel reduction(default, max: s)");
    cr_assert_eq(D.clauses[0].modifier, RED_MAX);
    cr_assert_null(D.clauses[0].name);
    bad("omp target parallel for reduction(inscan, +: s)", "inscan", "inscan");
    bad("omp parallel for map(to: a)", "map", "not allowed on 'parallel for'");
    bad("omp parallel for nowait", "nowait", "not allowed");
    bad("omp simd if(x) simd", "x) |simd", "construct-set");
    bad("omp teams parallel for", "parallel", "expected 'distribute'");
    bad("omp for num_threads(4)", "num_threads", "not allowed on 'for' (needs 'parallel for' or 'parallel')");
    bad("omp loop schedule(static)", "schedule", "not allowed on 'loop'");
    bad("omp loop firstprivate(x)", "firstprivate", "not allowed on 'loop'");
    bad("omp parallel collapse(2)", "collapse", "not allowed on 'parallel'");
    bad("omp parallel nowait", "nowait", "not allowed on 'parallel'");
    bad("omp for simd loop", "loop", "construct-set");
    bad("omp for order(x)", "x", "expected 'concurrent'");
    bad("omp loop order(fast: concurrent)", "fast", "order modifier");
    bad("omp simd order(concurrent) order(concurrent)", "concurrent) |order", "duplicate");
}

Test(directive, loop_new_constructs_clauses)
{
    ok("omp for schedule(static, 4) nowait reduction(+: s) collapse(2) lastprivate(x) firstprivate(y)");
    cr_assert_eq(D.cs, CS_FOR);
    cr_assert_eq(D.nclauses, 6);
    cr_assert_eq(clause(1, CL_NOWAIT)->kind, CL_NOWAIT);
    directive_free(&D);
    ok("omp parallel num_threads(8) if(n > 100) private(t) firstprivate(u) shared(a) reduction(max: m)");
    cr_assert_eq(D.cs, CS_PARALLEL);
    cr_assert_eq(D.nclauses, 6);
    directive_free(&D);
    ok("omp loop collapse(2) private(t) lastprivate(x) reduction(+: s) order(concurrent)");
    cr_assert_eq(D.cs, CS_LOOP);
    cr_assert_str_eq(clause(4, CL_ORDER)->arg, "concurrent");
    directive_free(&D);
    ok("omp teams loop num_teams(4) thread_limit(64) order(reproducible: concurrent)");
    cr_assert_eq(D.nclauses, 3);
    directive_free(&D);
    ok("omp target parallel map(tofrom: a[0:n]) num_threads(64) reduction(+: s)");
    cr_assert_eq(D.kind, DIR_TARGET);
    cr_assert_eq(D.cs, CS_PARALLEL);
    directive_free(&D);
    ok("omp target map(to: a) parallel if(parallel: n > 4)");
    cr_assert_eq(D.cs, CS_PARALLEL);
    cr_assert_str_eq(clause(1, CL_IF)->name, "parallel");
}

Test(directive, cs_text)
{
    static const struct { unsigned cs; const char *t; } cases[] = {
        {0, ""},
        {CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_SIMD, "teams distribute parallel for simd"},
        {CS_PARALLEL, "parallel"},
        {CS_FOR | CS_SIMD, "for simd"},
        {CS_LOOP, "loop"},
        {CS_TEAMS | CS_LOOP | CS_DISTRIBUTE | CS_PARALLEL_FOR, "teams loop"},
        {CS_PARALLEL | CS_LOOP | CS_PARALLEL_FOR, "parallel loop"},
        {CS_LOOP | CS_PARALLEL_FOR, "loop"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        cr_assert_str_eq(directive_cs_text(cases[i].cs, buf, sizeof buf), cases[i].t);
}

/* A directive on its own line directly inside another: the combined construct. */
Test(directive, cs_nest)
{
    enum { T = CS_TEAMS, D_ = CS_DISTRIBUTE, PF = CS_PARALLEL_FOR, S = CS_SIMD, P = CS_PARALLEL, F = CS_FOR,
           L = CS_LOOP };
    static const struct { unsigned outer, inner, want; } cases[] = {
        {0, T, T},
        {0, T | D_ | PF, T | D_ | PF},
        {0, PF | S, PF | S},
        {0, P, P},
        {0, S, S},
        {0, L, L | PF},
        {0, D_ | PF, D_ | PF},
        {0, F, 0},
        {T, D_ | PF, T | D_ | PF},
        {T, D_ | PF | S, T | D_ | PF | S},
        {T, D_, T | D_},
        {T, L, T | L | D_ | PF},
        {T, PF, 0},
        {T, S, 0},
        {T, P, 0},
        {T, T, 0},
        {T, T | D_ | PF, 0},
        {P, F, PF},
        {P, F | S, PF | S},
        {P, L, P | L | PF},
        {P, PF, 0},
        {P, S, 0},
        {P, P, 0},
        {T | D_, PF, 0},
        {PF, S, 0},
        {P | L | PF, F, 0},
        {0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        cr_assert_eq(directive_cs_nest(cases[i].outer, cases[i].inner), cases[i].want, "case %zu: %u + %u", i,
                     cases[i].outer, cases[i].inner);
}

Test(directive, add_clause_copy)
{
    Directive t;
    DirError e;
    cr_assert_eq(directive_parse("omp target map(to: a[0:n], b[i][1:m])", &t, &e), 0);
    ok("omp parallel for reduction(+: s) private(x) if(n > 1)");
    for (int i = 0; i < D.nclauses; i++)
        cr_assert_eq(directive_add_clause_copy(&t, &D.clauses[i]), 0);
    directive_free(&D); /* the copies own their text */
    cr_assert_eq(t.nclauses, 4);
    cr_assert_eq(t.clauses[1].kind, CL_REDUCTION);
    cr_assert_str_eq(t.clauses[1].items[0].base, "s");
    cr_assert_str_eq(t.clauses[3].arg, "n > 1");
    cr_assert_str_eq(t.clauses[0].items[1].subs[1].len, "m");
    cr_assert_eq(directive_add_clause_copy(NULL, &t.clauses[0]), -1);
    cr_assert(directive_clause_unique(CL_NUM_THREADS));
    cr_assert(!directive_clause_unique(CL_MAP));
    directive_free(&t);
}

/* ------------------------------------------------------------------ */
/* taskwait, data directives, declare target                          */
/* ------------------------------------------------------------------ */

Test(directive, taskwait)
{
    ok("omp taskwait");
    cr_assert_eq(D.kind, DIR_TASKWAIT);
    cr_assert_eq(D.nclauses, 0);
    ok("omp taskwait nowait");
    cr_assert_eq(D.nclauses, 1);
    ok("omp taskwait depend(in: a) depend(out: b[0:n])");
    cr_assert_eq(D.nclauses, 2);
    bad("omp taskwait untied", "untied", "taskwait");
}

Test(directive, target_data)
{
    ok("omp target data map(to: in[0:n]) map(from: out[0:n]) map(alloc: tmp[0:n]) if(big) device(1)");
    cr_assert_eq(D.kind, DIR_TARGET_DATA);
    cr_assert_eq(D.nclauses, 5);
    cr_assert_eq(D.clauses[2].modifier, MAPT_ALLOC);
    bad("omp target data nowait", "nowait", "not allowed on 'target data'");
    bad("omp target data map(delete: a)", "delete", "map");
    bad("omp target data", "data", "map");
}

Test(directive, use_device_and_device_addresses)
{
    ok("omp target data map(to: p[0:n]) use_device_ptr(p, q) use_device_addr(x, a[0:n]) device(dev + 1)");
    cr_assert_eq(D.kind, DIR_TARGET_DATA);
    cr_assert_eq(clause(1, CL_USE_DEVICE_PTR)->nitems, 2);
    item(&D.clauses[2].items[1], "a", 1, 1);
    cr_assert_eq(clause(3, CL_DEVICE)->modifier, DEVSEL_NUM);
    cr_assert_str_eq(D.clauses[3].arg, "dev + 1");
    ok("omp target data use_device_addr(x)"); /* no map needed */
    cr_assert_str_eq(directive_clause_name(CL_USE_DEVICE_ADDR), "use_device_addr");
    ok("omp target teams distribute parallel for has_device_addr(x, a) is_device_ptr(p)");
    item(&clause(0, CL_HAS_DEVICE_ADDR)->items[1], "a", 1, 0);
    cr_assert_str_eq(directive_clause_name(CL_HAS_DEVICE_ADDR), "has_device_addr");
    bad("omp target use_device_ptr(p)", "use_device_ptr", "not allowed on 'target'");
    bad("omp target enter data map(to: p) use_device_ptr(p)", "use_device_ptr", "not allowed");
    bad("omp target data has_device_addr(x)", "has_device_addr", "not allowed on 'target data'");
    bad("omp target data device(0)", "data", "'use_device_ptr'");
}

Test(directive, target_enter_data)
{
    ok("omp target enter data map(to: a[0:n]) map(alloc: w[0:n]) map(b) nowait depend(out: a) if(c) device(0)");
    cr_assert_eq(D.kind, DIR_TARGET_ENTER_DATA);
    cr_assert_eq(D.clauses[0].modifier, MAPT_TO);
    cr_assert_eq(D.clauses[1].modifier, MAPT_ALLOC);
    cr_assert_eq(D.clauses[2].modifier, MAPT_TO); /* no type: to */
    bad("omp target enter data map(from: a)", "from", "map");
    bad("omp target enter data map(tofrom: a)", "tofrom", "map");
    bad("omp target enter data map(always, release: a)", "release", "map");
    bad("omp target enter map(to: a)", "map", "expected 'data'");
    bad("omp target enter data nowait", "enter", "map");
}

Test(directive, target_exit_data)
{
    ok("omp target exit data map(from: b[0:n]) map(release: a[0:n]) map(delete: w) map(x)");
    cr_assert_eq(D.kind, DIR_TARGET_EXIT_DATA);
    cr_assert_eq(D.clauses[0].modifier, MAPT_FROM);
    cr_assert_eq(D.clauses[1].modifier, MAPT_RELEASE);
    cr_assert_eq(D.clauses[2].modifier, MAPT_DELETE);
    cr_assert_eq(D.clauses[3].modifier, MAPT_FROM); /* no type: from */
    bad("omp target exit data map(to: a)", "to:", "map");
    bad("omp target exit data map(alloc: a)", "alloc", "map");
    bad("omp target exit", NULL, "expected 'data'");
}

Test(directive, target_update)
{
    const DirClause *c;
    ok("omp target update to(a[0:1]) from(b[n/2:n-n/2], c) if(k) device(1) nowait depend(in: a)");
    cr_assert_eq(D.kind, DIR_TARGET_UPDATE);
    cr_assert_eq(D.nclauses, 6);
    c = clause(0, CL_TO);
    sub(&c->items[0].subs[0], 1, "0", "1");
    c = clause(1, CL_FROM);
    cr_assert_eq(c->nitems, 2);
    sub(&c->items[0].subs[0], 1, "n/2", "n-n/2");
    directive_free(&D);
    ok("omp target update from(w[100:50])");
    cr_assert_eq(D.nclauses, 1);
    bad("omp target update", "update", "update");
    bad("omp target update nowait", "update", "update");
    bad("omp target update map(to: a)", "map", "not allowed on 'target update'");
}

Test(directive, declare_target)
{
    const char *t = "omp declare target(a, b[0:4])";
    ok("omp declare target");
    cr_assert_eq(D.kind, DIR_DECLARE_TARGET);
    cr_assert_eq(D.nclauses, 0);
    directive_free(&D);
    ok(t);
    cr_assert_eq(D.kind, DIR_DECLARE_TARGET);
    cr_assert_eq(clause(0, CL_TO)->nitems, 2);
    cr_assert_eq(D.clauses[0].off, off_of(t, "("));
    item(&D.clauses[0].items[1], "b", 1, 1);
    directive_free(&D);
    ok("omp declare target to(f, g) enter(h)");
    cr_assert_eq(D.nclauses, 2);
    cr_assert_eq(clause(1, CL_TO)->nitems, 1);
    directive_free(&D);
    ok("omp begin declare target");
    cr_assert_eq(D.kind, DIR_DECLARE_TARGET);
    directive_free(&D);
    ok("omp end declare target");
    cr_assert_eq(D.kind, DIR_END_DECLARE_TARGET);
    bad("omp declare target(a) to(b)", "to(b)", "unexpected");
    bad("omp end declare target x", "x", "unexpected");
    bad("omp declare target map(to: a)", "map", "not allowed");
}

Test(directive, declare_target_clauses)
{
    ok("omp declare target link(x, y[0:2]) to(f) device_type(nohost)");
    cr_assert_eq(D.nclauses, 3);
    cr_assert_eq(clause(0, CL_LINK)->nitems, 2);
    item(&D.clauses[0].items[1], "y", 1, 1);
    cr_assert_eq(clause(2, CL_DEVICE_TYPE)->modifier, DEVTYPE_NOHOST);
    directive_free(&D);
    ok("omp declare target enter(f) device_type(host) indirect");
    cr_assert_eq(clause(1, CL_DEVICE_TYPE)->modifier, DEVTYPE_HOST);
    cr_assert_null(clause(2, CL_INDIRECT)->arg);
    directive_free(&D);
    ok("omp declare target to(f) indirect(1) device_type( any )");
    cr_assert_str_eq(clause(1, CL_INDIRECT)->arg, "1");
    cr_assert_eq(clause(2, CL_DEVICE_TYPE)->modifier, DEVTYPE_ANY);
    directive_free(&D);
    ok("omp begin declare target device_type(nohost) indirect");
    cr_assert_eq(D.kind, DIR_DECLARE_TARGET);
    cr_assert_eq(clause(0, CL_DEVICE_TYPE)->modifier, DEVTYPE_NOHOST);
    directive_free(&D);
    ok("omp declare_target enter(f)");
    cr_assert_eq(D.kind, DIR_DECLARE_TARGET);
    cr_assert_eq(clause(0, CL_TO)->nitems, 1);
    directive_free(&D);
    ok("omp begin declare_target");
    cr_assert_eq(D.kind, DIR_DECLARE_TARGET);
    directive_free(&D);
    ok("omp end declare_target");
    cr_assert_eq(D.kind, DIR_END_DECLARE_TARGET);
    directive_free(&D);
    bad("omp declare target to(f) device_type(gpu)", "gpu", "expected host, nohost or any");
    bad("omp declare target to(f) device_type(host, any)", ",", "unexpected text");
    bad("omp declare target to(f) device_type(host) device_type(any)", "device_type(any)", "duplicate");
    bad("omp begin declare target to(f)", "to", "not allowed");
    bad("omp begin declare target link(f)", "link", "not allowed");
    bad("omp target link(x)", "link", "not allowed");
    bad("omp target update to(x) device_type(host)", "device_type", "not allowed");
}

/* ------------------------------------------------------------------ */
/* OpenACC                                                            */
/* ------------------------------------------------------------------ */

Test(directive, acc_data)
{
    static const ClauseKind kinds[] = {CL_ACC_COPY, CL_ACC_COPYIN, CL_ACC_COPYOUT, CL_ACC_CREATE,
                                       CL_ACC_PRESENT, CL_ACC_NO_CREATE, CL_ACC_DEVICEPTR,
                                       CL_ACC_ATTACH, CL_IF};
    const char *t = "acc data copy(a[0:n]) copyin(b[0:n]) copyout(c[0:n]) create(t[0:n]) "
                    "present(p[0:n], q) no_create(d[0:n]) deviceptr(dbuf) attach(s->p) if(n > 0)";
    ok(t);
    cr_assert_eq(D.kind, DIR_ACC_DATA);
    cr_assert_eq(D.is_acc, 1);
    cr_assert_eq(D.nclauses, 9);
    for (int i = 0; i < 9; i++)
        clause(i, kinds[i]);
    cr_assert_eq(D.clauses[4].nitems, 2);
    item(&D.clauses[7].items[0], "s->p", 0, 0);
    cr_assert_str_eq(D.clauses[8].arg, "n > 0");
    cr_assert_eq(D.clauses[1].off, off_of(t, "copyin"));
}

Test(directive, acc_aliases)
{
    static const struct { const char *name; ClauseKind k; } al[] = {
        {"pcopy", CL_ACC_COPY},         {"present_or_copy", CL_ACC_COPY},
        {"pcopyin", CL_ACC_COPYIN},     {"present_or_copyin", CL_ACC_COPYIN},
        {"pcopyout", CL_ACC_COPYOUT},   {"present_or_copyout", CL_ACC_COPYOUT},
        {"pcreate", CL_ACC_CREATE},     {"present_or_create", CL_ACC_CREATE},
    };
    for (size_t i = 0; i < sizeof al / sizeof *al; i++) {
        char t[128];
        snprintf(t, sizeof t, "acc data %s(x[0:n])", al[i].name);
        ok(t);
        clause(0, al[i].k);
        item(&D.clauses[0].items[0], "x", 1, 1);
        directive_free(&D);
    }
}

Test(directive, acc_copyin_readonly_modifier)
{
    ok("acc data copyin(readonly: a[0:n]) copyout(zero: b) create(c)");
    cr_assert_eq(clause(0, CL_ACC_COPYIN)->modifier, 1);
    item(&D.clauses[0].items[0], "a", 1, 1);
    cr_assert_eq(clause(1, CL_ACC_COPYOUT)->modifier, 1);
    cr_assert_eq(clause(2, CL_ACC_CREATE)->modifier, 0);
    bad("acc data copy(readonly: a)", ":", "expected");
    bad("acc data copyin(bogus: a)", "bogus", "modifier");
}

Test(directive, acc_enter_data)
{
    const DirClause *c;
    ok("acc enter data copyin(b[0:n]) create(t[0:n]) attach(s.p) if(go) async(2) wait(1, 2)");
    cr_assert_eq(D.kind, DIR_ACC_ENTER_DATA);
    cr_assert_eq(D.nclauses, 6);
    c = clause(4, CL_ACC_ASYNC);
    cr_assert_str_eq(c->arg, "2");
    cr_assert_str_eq(clause(5, CL_ACC_WAIT)->arg, "1, 2");
    directive_free(&D);
    ok("acc enter data create(x) async wait");
    cr_assert_null(clause(1, CL_ACC_ASYNC)->arg);
    cr_assert_null(clause(2, CL_ACC_WAIT)->arg);
    bad("acc enter data copyout(a)", "copyout", "not allowed");
    bad("acc enter data async", "enter", "copyin");
    bad("acc enter copyin(a)", "copyin", "expected 'data'");
}

Test(directive, acc_exit_data)
{
    ok("acc exit data copyout(t[0:n]) delete(b[0:n]) detach(s.p) finalize if(1) async wait(q)");
    cr_assert_eq(D.kind, DIR_ACC_EXIT_DATA);
    cr_assert_eq(D.nclauses, 7);
    clause(3, CL_ACC_FINALIZE);
    directive_free(&D);
    ok("acc exit data delete(x[0:n]) finalize");
    cr_assert_eq(D.nclauses, 2);
    bad("acc exit data copyin(a[0:n])", "copyin", "copyin");
    bad("acc exit data finalize finalize delete(a)", "finalize delete", "duplicate");
    bad("acc exit data finalize", "exit", "copyout");
}

Test(directive, acc_update)
{
    ok("acc update host(t[0:10]) self(y[0:n]) device(b[0:n]) if(k) async(1) if_present wait");
    cr_assert_eq(D.kind, DIR_ACC_UPDATE);
    cr_assert_eq(D.nclauses, 7);
    clause(0, CL_ACC_HOST);
    clause(1, CL_ACC_SELF);
    item(&clause(2, CL_ACC_DEVICE)->items[0], "b", 1, 1);
    clause(5, CL_ACC_IF_PRESENT);
    directive_free(&D);
    ok("acc update host(y[0:n/2])");
    sub(&D.clauses[0].items[0].subs[0], 1, "0", "n/2");
    bad("acc update async", "update", "update");
    bad("acc update copyin(a)", "copyin", "not allowed on 'acc update'");
    bad("acc update host(a) map(a)", "map", "unknown clause 'map' on 'acc update'");
}

Test(directive, acc_wait)
{
    ok("acc wait");
    cr_assert_eq(D.kind, DIR_ACC_WAIT);
    cr_assert_eq(D.nclauses, 0);
    directive_free(&D);
    ok("acc wait(1, q+1) async(3)");
    cr_assert_str_eq(clause(0, CL_ACC_WAIT)->arg, "1, q+1");
    cr_assert_str_eq(clause(1, CL_ACC_ASYNC)->arg, "3");
    directive_free(&D);
    ok("acc wait async");
    clause(0, CL_ACC_ASYNC);
    bad("acc wait()", ")", "expected an expression");
    bad("acc wait copy(a)", "copy", "not allowed");
}

/* ------------------------------------------------------------------ */
/* not ours                                                           */
/* ------------------------------------------------------------------ */

Test(directive, other_pragmas)
{
    static const char *const others[] = {
        "", "   ", "once", "GCC ivdep", "GCC optimize(\"O3\")", "pack(push, 1)", "weak helper_weak",
        "omp", "omp critical", "omp atomic update", "omp barrier", "omp parallel master",
        "omp parallel masked", "omp parallel sections", "omp parallel workshare", "omp task depend(in: x)",
        "omp declare simd", "omp declare reduction(merge : int : omp_out += omp_in)",
        "omp declare mapper(id: struct s v) map(v.a)", "omp begin metadirective", "omp end parallel",
        "omp single", "omp master", "omp section", "omp ordered", "omp flush", "omp taskloop",
        "acc", "acc routine seq",
        "acc atomic", "acc cache(a[0:n])",
        "ompx foo", "accx", "omp_target", "omp (x)",
    };
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        ok(others[i]);
        cr_assert_eq(D.kind, DIR_OTHER, "'%s' is kind %d", others[i], D.kind);
        cr_assert_eq(D.nclauses, 0, "%s", others[i]);
        cr_assert_null(D.clauses);
        cr_assert_eq(D.nvariants, 0);
        directive_free(&D);
    }
}

Test(directive, other_null_text)
{
    cr_assert_eq(directive_parse(NULL, &D, &E), 0);
    cr_assert_eq(D.kind, DIR_OTHER);
}

/* ------------------------------------------------------------------ */
/* API                                                                */
/* ------------------------------------------------------------------ */

Test(directive, find_clause)
{
    const DirClause *c;
    ok("omp target map(to: a) nowait map(from: b)");
    c = directive_find(&D, CL_MAP);
    cr_assert_eq(c, &D.clauses[0]);
    cr_assert_eq(directive_find(&D, CL_NOWAIT), &D.clauses[1]);
    cr_assert_null(directive_find(&D, CL_DEPEND));
    cr_assert_null(directive_find(NULL, CL_MAP));
}

Test(directive, clause_names)
{
    cr_assert_str_eq(directive_clause_name(CL_MAP), "map");
    cr_assert_str_eq(directive_clause_name(CL_NUM_TEAMS), "num_teams");
    cr_assert_str_eq(directive_clause_name(CL_IS_DEVICE_PTR), "is_device_ptr");
    cr_assert_str_eq(directive_clause_name(CL_ACC_NO_CREATE), "no_create");
    cr_assert_str_eq(directive_clause_name(CL_ACC_DEVICE), "device");
    cr_assert_str_eq(directive_clause_name(CL_ACC_IF_PRESENT), "if_present");
    for (int k = 0; k < CL_NCLAUSES; k++)
        cr_assert(directive_clause_name((ClauseKind)k)[0], "kind %d has no name", k);
    cr_assert_str_eq(directive_clause_name(CL_NCLAUSES), "");
}

Test(directive, reduction_op_names)
{
    cr_assert_str_eq(directive_reduction_op(RED_ADD), "+");
    cr_assert_str_eq(directive_reduction_op(RED_MIN), "min");
    cr_assert_str_eq(directive_reduction_op(RED_LOR), "||");
    cr_assert_str_eq(directive_reduction_op(0), "");
    cr_assert_str_eq(directive_reduction_op(99), "");
}

Test(directive, free_is_safe)
{
    directive_free(NULL);
    ok("omp metadirective when(device={kind(gpu)}: teams distribute parallel for reduction(+: a, b)) default(simd)");
    directive_free(&D);
    cr_assert_eq(D.nvariants, 0);
    directive_free(&D); /* twice: still fine */
}

Test(directive, error_leaves_out_empty_and_err_optional)
{
    Directive d;
    cr_assert_eq(directive_parse("omp target map(to: a) frob", &d, NULL), -1);
    cr_assert_eq(d.nclauses, 0);
    cr_assert_null(d.clauses);
    cr_assert_eq(directive_parse("omp target map(to: a)", &d, NULL), 0);
    cr_assert_eq(d.nclauses, 1);
    directive_free(&d);
    cr_assert_eq(directive_parse("omp target", NULL, &E), -1);
}

Test(directive, continuation_and_newlines)
{
    ok("omp target teams distribute \\\n   parallel for map(tofrom:\n a[0:n])");
    cr_assert_eq(D.cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    item(&D.clauses[0].items[0], "a", 1, 1);
}

Test(directive, acc_compute_constructs)
{
    ok("acc parallel num_gangs(8) vector_length(128) num_workers(4) copy(a[0:n]) present(b) "
       "private(t) firstprivate(s) reduction(+:sum) async(1) wait(2, 3) default(present)");
    cr_assert_eq(D.kind, DIR_TARGET);
    cr_assert_eq(D.acc, ACC_PARALLEL);
    cr_assert_eq(D.cs, CS_TEAMS);
    cr_assert_str_eq(clause(0, CL_NUM_TEAMS)->arg, "8");
    cr_assert_str_eq(clause(1, CL_THREAD_LIMIT)->arg, "128");
    clause(2, CL_ACC_NUM_WORKERS);
    cr_assert_eq(clause(7, CL_REDUCTION)->modifier, RED_ADD);
    cr_assert_str_eq(clause(9, CL_ACC_WAIT)->arg, "2, 3");
    directive_free(&D);
    ok("acc kernels copyin(a[0:n])");
    cr_assert_eq(D.acc, ACC_KERNELS);
    cr_assert_eq(D.cs, 0);
    directive_free(&D);
    ok("acc serial self(on_host)");
    cr_assert_eq(D.acc, ACC_SERIAL);
    cr_assert_eq(D.cs, 0);
    cr_assert_str_eq(clause(0, CL_IF)->arg, "!(on_host)");
    directive_free(&D);
    bad("acc parallel bogus(1)", "bogus", "unknown clause");
    bad("acc parallel default(shared)", "shared", "none or present");
}

Test(directive, acc_loops)
{
    ok("acc parallel loop gang vector collapse(2) reduction(max:m) private(x)");
    cr_assert_eq(D.kind, DIR_TARGET);
    cr_assert(D.acc_loop);
    cr_assert_eq(D.cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    cr_assert_eq(D.acc_par, ACC_GANG | ACC_VECTOR);
    cr_assert_eq(clause(2, CL_COLLAPSE)->ival, 2);
    directive_free(&D);
    ok("acc parallel loop seq");
    cr_assert_eq(D.cs, 0);
    directive_free(&D);
    ok("acc serial loop gang");
    cr_assert_eq(D.cs, 0);
    directive_free(&D);
    ok("acc loop worker(4) vector(32) independent tile(8, 8)");
    cr_assert_eq(D.kind, DIR_LOOP);
    cr_assert_eq(D.acc, ACC_LOOP);
    cr_assert_eq(D.cs, CS_LOOP);
    cr_assert_eq(D.acc_par, ACC_WORKER | ACC_VECTOR | ACC_INDEPENDENT);
    cr_assert_str_eq(clause(0, CL_ACC_WORKER)->arg, "4");
    directive_free(&D);
    ok("acc loop seq");
    cr_assert_eq(D.cs, 0);
    directive_free(&D);
    ok("acc loop collapse(force: 3)");
    cr_assert_eq(clause(0, CL_COLLAPSE)->ival, 3);
    directive_free(&D);
    /* clauses after device_type(x) are kept only for device_type(*) */
    ok("acc parallel loop device_type(nvidia) num_gangs(4) device_type(*) vector_length(32)");
    cr_assert_eq(D.nclauses, 3);
    clause(2, CL_THREAD_LIMIT);
    /* device_type(nvidia) clauses: the nvidia version's directive */
    cr_assert_eq(D.nvariants, 1);
    cr_assert_eq(D.variants[0].arch, ARCH_NVIDIA);
    cr_assert_eq(D.variants[0].cs, D.cs);
    cr_assert_str_eq(directive_find(&D.variants[0], CL_NUM_TEAMS)->arg, "4");
    cr_assert_not_null(directive_find(&D.variants[0], CL_THREAD_LIMIT));
    directive_free(&D);
    /* a device's clause replaces the common one (each section may repeat it);
     * dtype is device_type; a device's seq makes its version sequential */
    ok("acc kernels loop num_gangs(2) async(1) dtype(host) seq num_gangs(1) device_type(nvidia) num_gangs(64) "
       "vector_length(128) device_type(radeon) num_gangs(9)");
    cr_assert_eq(D.nvariants, 2);
    cr_assert_eq(D.variants[0].arch, ARCH_NVIDIA);
    cr_assert_str_eq(directive_find(&D.variants[0], CL_NUM_TEAMS)->arg, "64");
    cr_assert_str_eq(directive_find(&D.variants[0], CL_THREAD_LIMIT)->arg, "128");
    cr_assert_not_null(directive_find(&D.variants[0], CL_ACC_ASYNC));
    cr_assert_eq(D.variants[0].cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    cr_assert_eq(D.variants[1].arch, ARCH_HOST);
    cr_assert_str_eq(directive_find(&D.variants[1], CL_NUM_TEAMS)->arg, "1");
    cr_assert_eq(D.variants[1].cs, 0);
    cr_assert_str_eq(directive_find(&D, CL_NUM_TEAMS)->arg, "2");
    cr_assert_null(directive_find(&D, CL_THREAD_LIMIT));
    directive_free(&D);
    /* acc loop: no versions; only device_type(*) clauses are kept */
    ok("acc loop device_type(nvidia) vector(128) device_type(*) gang");
    cr_assert_eq(D.nvariants, 0);
    cr_assert_eq(D.acc_par, ACC_GANG);
    directive_free(&D);
    bad("acc parallel num_gangs(2) num_gangs(3)", "num_gangs(3)", "duplicate");
    /* acc declare in a function: a data region; acc set */
    ok("acc declare copyin(a[0:n]) device_resident(b) create(c)");
    cr_assert_eq(D.kind, DIR_ACC_DATA);
    cr_assert(D.acc_declare);
    cr_assert_eq(clause(1, CL_ACC_CREATE)->nitems, 1);
    directive_free(&D);
    bad("acc declare", "declare", "needs a data clause");
    bad("acc declare if(1) copy(a)", "if", "not allowed");
    ok("acc data copy(a[0:n]) async(1) wait(2)");
    cr_assert_eq(D.kind, DIR_ACC_DATA);
    cr_assert_str_eq(clause(1, CL_ACC_ASYNC)->arg, "1");
    directive_free(&D);
    ok("acc set default_async(q + 1) device_type(nvidia) device_num(0) if(c)");
    cr_assert_eq(D.kind, DIR_ACC_SET);
    cr_assert_str_eq(clause(0, CL_ACC_DEFAULT_ASYNC)->arg, "q + 1");
    cr_assert_str_eq(clause(2, CL_ACC_DEVICE_NUM)->arg, "0");
    directive_free(&D);
    bad("acc set if(c)", "set", "needs a default_async");
    ok("acc host_data use_device(a, b) if_present");
    cr_assert_eq(D.kind, DIR_ACC_DATA);
    cr_assert_eq(clause(0, CL_USE_DEVICE_PTR)->nitems, 2);
    directive_free(&D);
    bad("acc host_data if(1)", "host_data", "needs a use_device clause");
    bad("acc loop seq gang", "seq", "cannot be combined");
    bad("acc loop copy(a)", "copy", "not allowed");
}

static void linear_step_is(const char *txt, const char *want)
{
    ok(txt);
    const DirClause *c = directive_find(&D, CL_LINEAR);
    cr_assert_not_null(c, "%s", txt);
    char *st = directive_linear_step(c);
    cr_assert_str_eq(st, want, "%s", txt);
    free(st);
}

Test(directive, linear_steps)
{
    linear_step_is("omp parallel for linear(i)", "1");
    directive_free(&D);
    linear_step_is("omp parallel for linear(i, j: 2)", "2");
    directive_free(&D);
    linear_step_is("omp parallel for linear(i: s * (k + 1))", "s * (k + 1)");
    directive_free(&D);
    linear_step_is("omp parallel for linear(val(i): 4)", "4");
    directive_free(&D);
    linear_step_is("omp simd linear(x: step(3))", "3");
    directive_free(&D);
    linear_step_is("omp simd linear(x: val, step(n - 1))", "n - 1");
    directive_free(&D);
    linear_step_is("omp simd linear(x: uval)", "1");
    directive_free(&D);
    linear_step_is("omp simd linear(x: stepsize)", "stepsize");
}

Test(directive, map_mapper_modifier)
{
    ok("omp target map(mapper(half), to: s) map(mapper(default): t) map(mapper(m) , always, from: u)");
    cr_assert_eq(D.nclauses, 3);
    cr_assert_str_eq(D.clauses[0].name, "half");
    cr_assert_eq(D.clauses[0].modifier, MAPT_TO);
    cr_assert_str_eq(D.clauses[1].name, "default");
    cr_assert_eq(D.clauses[1].modifier, MAPT_TOFROM);
    cr_assert_str_eq(D.clauses[2].name, "m");
    cr_assert_eq(D.clauses[2].modifier, MAPT_FROM);
    cr_assert_eq(D.clauses[2].always, 1);
    directive_free(&D);
    bad("omp target map(mapper, to: s)", ",", "mapper");
    bad("omp target map(mapper(a b), to: s)", "a b", "mapper");
    bad("omp target map(mapper(m), to, from: s)", "from", "map type");
}

Test(directive, target_in_reduction)
{
    ok("omp target in_reduction(+: s) in_reduction(*: p, q)");
    cr_assert_eq(D.nclauses, 2);
    cr_assert_eq(D.clauses[0].kind, CL_REDUCTION);
    cr_assert_eq(D.clauses[0].modifier, RED_ADD);
    cr_assert_str_eq(D.clauses[0].name, "in_reduction");
    cr_assert_eq(D.clauses[1].modifier, RED_MUL);
    cr_assert_eq(D.clauses[1].nitems, 2);
    directive_free(&D);
    ok("omp target teams distribute parallel for in_reduction(+: s) reduction(max: m)");
    cr_assert_str_eq(D.clauses[0].name, "in_reduction");
    cr_assert_null(D.clauses[1].name);
    directive_free(&D);
    bad("omp parallel for in_reduction(+: s)", "in_reduction", "only on a 'target'");
    bad("omp target in_reduction(task, +: s)", "in_reduction", "without modifiers");
}

Test(directive, section_strides)
{
    ok("omp target update to(a[0:n/2:2], b[lo : len : s + 1]) from(c[1:4])");
    cr_assert_str_eq(D.clauses[0].items[0].subs[0].lo, "0");
    cr_assert_str_eq(D.clauses[0].items[0].subs[0].len, "n/2");
    cr_assert_str_eq(D.clauses[0].items[0].subs[0].stride, "2");
    cr_assert_str_eq(D.clauses[0].items[1].subs[0].len, "len");
    cr_assert_str_eq(D.clauses[0].items[1].subs[0].stride, "s + 1");
    cr_assert_null(D.clauses[1].items[0].subs[0].stride);
    directive_free(&D);
    bad("omp target update to(a[0:4:])", ":]", "stride");
}
