/* directive.h: the parsed form of one `#pragma omp ...` / `#pragma acc ...` line.
 *
 * The grammar is written down in grammar/GRAMMAR.md. The parser keeps every
 * expression as text (trimmed, whitespace-normalised) so that the translator
 * can re-emit it; it does not evaluate anything.
 */
#ifndef MACC_DIRECTIVE_H
#define MACC_DIRECTIVE_H

typedef enum DirKind {
    DIR_OTHER = 0,       /* a pragma that is not ours (passes through untouched) */
    DIR_TARGET,          /* omp target [construct-set] clauses */
    DIR_IF_DEVICE,       /* omp if_device(arch[, subtype]) construct-set clauses */
    DIR_METADIRECTIVE,   /* omp metadirective when(...) default(...) / otherwise(...) */
    DIR_LOOP,            /* a bare construct-set: omp [teams] [distribute] [parallel for] [simd] */
    DIR_TASKWAIT,        /* omp taskwait */
    DIR_TARGET_DATA,     /* omp target data */
    DIR_TARGET_ENTER_DATA,
    DIR_TARGET_EXIT_DATA,
    DIR_TARGET_UPDATE,
    DIR_DECLARE_TARGET,  /* omp declare target [(list)] / begin declare target */
    DIR_END_DECLARE_TARGET,
    DIR_ACC_DATA,        /* acc data */
    DIR_ACC_ENTER_DATA,
    DIR_ACC_EXIT_DATA,
    DIR_ACC_UPDATE,
    DIR_ACC_WAIT,
    DIR_ACC_SET          /* acc set default_async(q) device_num(n) device_type(t) */
} DirKind;

/* Construct-set bits. */
enum {
    CS_TEAMS = 1,
    CS_DISTRIBUTE = 2,
    CS_PARALLEL_FOR = 4, /* "parallel for" (always together) */
    CS_SIMD = 8,
    CS_PARALLEL = 16,    /* "parallel" without "for": a parallel region (also set by "parallel loop") */
    CS_FOR = 32,         /* "for" without "parallel": a worksharing loop (a bare directive only) */
    CS_LOOP = 64         /* "loop": also sets what it means, CS_DISTRIBUTE | CS_PARALLEL_FOR after
                          * "teams", else CS_PARALLEL_FOR; a bare "loop" (CS_LOOP alone) means what
                          * its enclosing construct decides (directive_cs_nest) */
};
/* The bits that make a construct-set a loop construct (the next statement is a for loop). */
#define CS_LOOPS (CS_DISTRIBUTE | CS_PARALLEL_FOR | CS_SIMD | CS_FOR | CS_LOOP)
/* A parallel region without a loop ("target parallel", a bare "parallel"). */
#define CS_IS_PARALLEL_REGION(cs) (((cs) & CS_PARALLEL) && !((cs) & CS_LOOPS))

typedef enum ClauseKind {
    CL_DEVICE,        /* device(any|host|nvidia|cuda|expr): dev = DEVSEL_*, arg = expr for DEVSEL_NUM */
    CL_MAP,           /* map([always,][to|from|tofrom|alloc|release|delete:] list) */
    CL_NOWAIT,
    CL_DEPEND,        /* depend(in|out|inout: list): modifier = DEP_* */
    CL_IF,            /* if([target:|target data:|...] expr): arg = expr, name = modifier text or NULL */
    CL_PRIVATE,
    CL_FIRSTPRIVATE,
    CL_LASTPRIVATE,
    CL_SHARED,
    CL_NUM_TEAMS,     /* arg */
    CL_THREAD_LIMIT,  /* arg */
    CL_NUM_THREADS,   /* arg */
    CL_COLLAPSE,      /* arg; ival = value when it is an integer literal, else 0 */
    CL_REDUCTION,     /* modifier = RED_*; items */
    CL_SCHEDULE,      /* arg = whole inner text, e.g. "static, 4" */
    CL_DIST_SCHEDULE, /* arg = whole inner text */
    CL_SIMDLEN,       /* arg */
    CL_SAFELEN,       /* arg */
    CL_RESOURCES,     /* arg = N text, ival = N when literal; ival = -2 for auto */
    CL_TO,            /* target update to(list), declare target to(list) */
    CL_FROM,          /* target update from(list) */
    CL_DEFAULTMAP,    /* arg = inner text, kept for re-emission */
    CL_IS_DEVICE_PTR,
    CL_LINK,          /* declare target link(list) */
    CL_DEVICE_TYPE,   /* declare target device_type(host|nohost|any): modifier = DEVTYPE_* */
    CL_INDIRECT,      /* declare target indirect[(expr)]: arg = expr, or NULL when bare */
    CL_ACCEPTED,      /* default(...), uses_allocators(...), allocate(...), aligned(...),
                         nontemporal(...), bind(...) (a loop's binding: macc binds it
                         by where it is): accepted with no effect on the translation;
                         name = the clause's name, arg = its inner text */
    CL_HAS_DEVICE_ADDR, /* target has_device_addr(list) (OpenMP 5.1) */
    CL_USE_DEVICE_PTR,  /* target data use_device_ptr(list) */
    CL_USE_DEVICE_ADDR, /* target data use_device_addr(list) */
    CL_ORDER,         /* order([reproducible:|unconstrained:] concurrent): arg = inner text; no effect */
    CL_LINEAR,        /* linear(list[: step]), linear(val(list)[: step]), linear(list: step(s)):
                         arg = the inner text (passed to host constructs), items = the list */
    /* OpenACC */
    CL_ACC_COPY,
    CL_ACC_COPYIN,
    CL_ACC_COPYOUT,
    CL_ACC_CREATE,
    CL_ACC_PRESENT,
    CL_ACC_NO_CREATE,
    CL_ACC_DEVICEPTR,
    CL_ACC_ATTACH,
    CL_ACC_DETACH,
    CL_ACC_DELETE,
    CL_ACC_HOST,      /* update host(list) */
    CL_ACC_SELF,      /* update self(list) */
    CL_ACC_DEVICE,    /* update device(list) */
    CL_ACC_FINALIZE,
    CL_ACC_ASYNC,     /* arg = optional expr (NULL when bare) */
    CL_ACC_WAIT,      /* arg = optional list text */
    CL_ACC_IF_PRESENT,
    /* OpenACC compute constructs and loop (the others map to OpenMP's kinds:
     * num_gangs -> CL_NUM_TEAMS, vector_length -> CL_THREAD_LIMIT, self(c) -> CL_IF !(c)) */
    CL_ACC_GANG,      /* gang[(...)]: arg = inner text or NULL */
    CL_ACC_WORKER,    /* worker[(...)] */
    CL_ACC_VECTOR,    /* vector[(...)] */
    CL_ACC_SEQ,
    CL_ACC_INDEPENDENT,
    CL_ACC_AUTO,
    CL_ACC_TILE,      /* tile(list): arg; no effect (the loop keeps its gang/vector mapping) */
    CL_ACC_NUM_WORKERS, /* arg; no effect */
    CL_ACC_DEVICE_TYPE, /* device_type(list): arg; the clauses after it were kept only for `*` */
    CL_ACC_DEFAULT,   /* default(none|present): arg */
    CL_ACC_DEFAULT_ASYNC, /* acc set default_async(q): arg */
    CL_ACC_DEVICE_NUM,    /* acc set device_num(n): arg */
    CL_NCLAUSES
} ClauseKind;

enum { DEVSEL_ANY = 1, DEVSEL_HOST, DEVSEL_NVIDIA, DEVSEL_NUM };
enum { MAPT_TOFROM = 0, MAPT_TO, MAPT_FROM, MAPT_ALLOC, MAPT_RELEASE, MAPT_DELETE };
enum { DEP_IN = 1, DEP_OUT = 2, DEP_INOUT = 3 };
enum { DEVTYPE_ANY = 0, DEVTYPE_HOST, DEVTYPE_NOHOST };
enum {
    RED_ADD = 1, RED_MUL, RED_SUB, RED_MIN, RED_MAX, RED_BAND, RED_BOR, RED_BXOR, RED_LAND, RED_LOR
};
/* if_device architectures */
enum { ARCH_HOST = 1, ARCH_NVIDIA = 2, ARCH_NONE = 3 /* a metadirective variant no version takes */ };

/* One subscript of a list item: `[e]` (is_section 0, lo = e) or `[lo:len]`,
 * `[:len]` (lo NULL), `[lo:]` (len NULL), `[:]` (both NULL). */
typedef struct DirSub {
    char *lo;
    char *len;
    char *stride;  /* [lo:len:stride] (OpenMP 5.0), or NULL */
    int is_section;
} DirSub;

/* A list item: `base` followed by subscripts. `base` is the text before the
 * first `[` (an identifier, or a member expression such as `s.a` / `p->x`);
 * `is_ident` says whether it is a plain identifier. `off` is the byte offset of
 * the item in the pragma text given to directive_parse. */
typedef struct DirItem {
    char *base;
    int is_ident;
    int nsubs;
    DirSub *subs;
    int off;
} DirItem;

typedef struct DirClause {
    ClauseKind kind;
    int off;       /* byte offset of the clause name in the pragma text */
    int modifier;  /* MAPT_*, DEP_*, RED_*, DEVSEL_* depending on kind */
    int always;    /* map: always modifier */
    char *name;    /* if: directive-name modifier text, or NULL; reduction: "task" for the task modifier */
    char *arg;     /* expression text, or NULL */
    long ival;     /* literal value where documented */
    int nitems;
    DirItem *items;
} DirClause;

/* OpenACC constructs (Directive.acc). */
enum { ACC_PARALLEL = 1, ACC_KERNELS, ACC_SERIAL, ACC_LOOP };
/* Directive.acc_par: the loop clauses of an acc loop (or combined construct). */
enum { ACC_GANG = 1, ACC_WORKER = 2, ACC_VECTOR = 4, ACC_SEQ = 8, ACC_INDEPENDENT = 16, ACC_AUTO = 32 };

typedef struct Directive {
    DirKind kind;
    int is_acc;
    int acc;       /* ACC_*: acc parallel/kernels/serial [loop] (kind DIR_TARGET), acc loop (DIR_LOOP) */
    int acc_loop;  /* a combined construct: acc parallel/kernels/serial loop */
    int acc_declare; /* acc declare (kind DIR_ACC_DATA): a data region to the end of the enclosing block */
    unsigned acc_par; /* ACC_GANG | ACC_WORKER | ... */
    unsigned cs;   /* construct-set bits (target, if_device, loop) */
    int arch;      /* if_device: ARCH_* */
    int min_cc;    /* if_device: minimum compute capability * 10 (cc35 -> 35), 0 if none */
    int nclauses;
    DirClause *clauses;
    /* metadirective: each when(...) variant as a DIR_IF_DEVICE directive; the
     * default/otherwise variant has arch 0. */
    int nvariants;
    struct Directive *variants;
} Directive;

typedef struct DirError {
    int off;        /* byte offset in the pragma text */
    char msg[256];
} DirError;

/* Parses `text`, the pragma's text after "#pragma" (for example
 * "omp target device(any) map(to: x[0:n])"). Continuation lines must already be
 * joined (backslash-newline removed). Returns 0 and fills *out on success
 * (kind DIR_OTHER for pragmas that are not ours: other namespaces, and omp/acc
 * directives outside SPEC 1.1/1.2 such as `omp critical`); returns -1 and fills
 * *err on a malformed directive or an unknown clause of one of ours. On error
 * *out is left empty (nothing to free). The caller owns *out: release it with
 * directive_free. */
int directive_parse(const char *text, Directive *out, DirError *err);

/* Releases what directive_parse allocated; directive_free(NULL) is a no-op. */
void directive_free(Directive *d);

/* Removes list item i of clause c (its strings freed). */
void directive_remove_item(DirClause *c, int i);

/* Is c a target's in_reduction(op: list) (a CL_REDUCTION named "in_reduction")? */
int directive_in_reduction(const DirClause *c);

/* First clause of kind k, or NULL. */
const DirClause *directive_find(const Directive *d, ClauseKind k);

/* linear(list[: step]): the step expression (malloc'd): the text after the
 * list's colon without 5.2's val/ref/uval modifiers, step(s) unwrapped; "1"
 * when the clause gives none. */
char *directive_linear_step(const DirClause *c);

/* Name of a clause kind as written ("map", "num_teams", ...). Static storage. */
const char *directive_clause_name(ClauseKind k);

/* Operator text of a reduction identifier ("+", "min", ...). Static storage. */
const char *directive_reduction_op(int red);

/* The construct-set of a directive written on its own line directly inside a
 * construct whose construct-set is `outer` (`target` alone: 0), as the one
 * combined construct they make: `teams` + `distribute parallel for`, `parallel`
 * + `for`, `teams` + `loop` (CS_DISTRIBUTE | CS_PARALLEL_FOR), ... Returns 0
 * when they do not combine (`outer` is already a loop construct, `teams` +
 * `parallel for`, a `for` outside `parallel`, ...). */
unsigned directive_cs_nest(unsigned outer, unsigned inner);

/* The construct-set as written ("teams distribute parallel for", "parallel",
 * "teams loop"); an empty string for 0. Returns buf. */
const char *directive_cs_text(unsigned cs, char *buf, int n);

/* Whether a directive may hold at most one clause of kind k (per `if` modifier). */
int directive_clause_unique(ClauseKind k);

/* Appends a copy of clause c (from another directive) to d. Returns 0, or -1
 * when out of memory (d unchanged). */
int directive_add_clause_copy(Directive *d, const DirClause *c);

#endif
