/* macc.h: the translator's one internal header, in sections (one per phase).
 *
 *   util       strings, buffers, allocation that never returns NULL
 *   source     the input text and its line table
 *   diag       diagnostics: file:line:col: error: message, source line, caret
 *   parse      tree-sitter parse, pragmas collected and attached to statements
 *   analyze    regions: captured variables, maps, dependences, versions, loop nest
 *   emit       the host file (name.host.c), the device file (name.cuda.cu)
 *   lower_cxx  the device file's C text as C++ (keywords)
 *   translate  one input file to its outputs (written to a temporary, renamed)
 *   driver     command line, sub-commands
 */
#ifndef MACC_H
#define MACC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <tree_sitter/api.h>

#include "directive.h"

#define MACC_VERSION_STRING "0.1.0"

/* ---- util ---------------------------------------------------------------- */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xsprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer; `data` is always NUL-terminated. */
typedef struct Buf {
    char *data;
    size_t len, cap;
} Buf;
void buf_put(Buf *b, const char *s, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(Buf *b);
/* s with '"' and '\\' escaped, for a C string literal (caller frees). */
char *c_escape(const char *s);

/* Growable array of pointers. */
typedef struct Vec {
    void **items;
    int len, cap;
} Vec;
void vec_push(Vec *v, void *p);
void vec_free(Vec *v);

/* A set of strings (open addressing; keys owned). */
typedef struct StrSet {
    char **keys;
    size_t len, cap;
} StrSet;
int strset_has(const StrSet *set, const char *s, size_t n);
int strset_add(StrSet *set, const char *s, size_t n);   /* 1 when newly added */
void strset_free(StrSet *set);

/* A map from strings to ints (open addressing; keys owned). */
typedef struct StrMap {
    char **keys;
    int *vals;
    size_t len, cap;
} StrMap;
/* The value of key s[0..n), or NULL when absent (valid until the next put). */
int *strmap_get(const StrMap *m, const char *s, size_t n);
/* Adds the key with value val unless present; returns the key's value either way. */
int *strmap_put(StrMap *m, const char *s, size_t n, int val);
void strmap_free(StrMap *m);

/* ---- source -------------------------------------------------------------- */
typedef struct Source {
    char *path;      /* as given by the user (used in messages and #line) */
    char *text;      /* whole file, NUL-terminated (line markers included) */
    char *ptext;     /* the same bytes with line-marker lines blanked: what the C parser reads */
    size_t len;
    size_t *lines;   /* byte offset of the start of each line */
    int nlines;
    /* Where each line comes from. Preprocessed input (`cc -E`) carries line
     * markers (`# 12 "file.h" 1 3`, `#line 12 "f.c"`); without them every
     * line is its own. */
    int *oline;      /* per line: line number in its original file */
    int *ofile;      /* per line: index into files */
    unsigned char *osys;   /* per line: inside a system header (marker flag 3) */
    unsigned char *omark;  /* per line: the line is a line marker */
    char **files;    /* original file names, files[0] the main file */
    char **cfiles;   /* the same, escaped for a C string literal */
    int nfiles;
    int has_markers; /* the text is preprocessed output */
} Source;

/* Reads `path`. Returns NULL and sets errno when it cannot be read. The caller
 * owns the result: source_delete. */
Source *source_read(const char *path);
/* Makes a Source from memory (copied). */
Source *source_from_string(const char *path, const char *text, size_t len);
void source_delete(Source *s);
/* 1-based line (in its original file) and column of byte offset `off`. */
void source_position(const Source *s, size_t off, int *line, int *col);
/* Index of the line holding byte `off` (0-based, in the text). */
int source_line_index(const Source *s, size_t off);
/* The original file of byte `off` (as named by the line markers; the
 * source's path without them), plain and escaped for a C string literal. */
const char *source_file(const Source *s, size_t off);
const char *source_cfile(const Source *s, size_t off);
/* Is byte `off` inside a system header (line-marker flag 3)? */
int source_in_system(const Source *s, size_t off);
/* Does byte `off` come from a file whose last path component is `base`? */
int source_file_is(const Source *s, size_t off, const char *base);
/* Renames the main file (messages, #line) when the text has no markers of its
 * own name for it (in-memory sources, preprocessed temporaries). */
void source_set_path(Source *s, const char *path);

/* ---- diag ---------------------------------------------------------------- */
typedef struct Diag {
    const Source *src;
    FILE *out;        /* stderr unless a test redirects it */
    int errors;
    int warnings;
    int max_errors;   /* stop reporting past this many (0: no limit) */
} Diag;

void diag_init(Diag *d, const Source *src);
void diag_error(Diag *d, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(Diag *d, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- parse --------------------------------------------------------------- */
const TSLanguage *tree_sitter_c(void);

/* One `#pragma` line of ours (kind != DIR_OTHER) or of interest. */
typedef struct Pragma {
    TSNode node;        /* the preproc_call node */
    size_t start, end;  /* bytes of the whole pragma line(s) in the source */
    char *text;         /* text after "#pragma", continuation lines joined */
    size_t *offmap;     /* offmap[i]: source offset of text[i] */
    Directive dir;
    int used;           /* attached to a construct */
    int deferred;       /* a host loop directive we could not parse: an error only inside a region */
    char *host_text;    /* what the host file gets after "#pragma" instead (u->rewrites), or NULL */
    DirError err;
} Pragma;

/* `#pragma omp declare mapper([id:] type var) map(...)...` (OpenMP 5.0). */
typedef struct Mapper {
    char *id;      /* "default" when unnamed */
    char *type;    /* the type's text, blanks collapsed */
    char *var;     /* the variable the clauses name */
    char *clauses; /* the clauses' text */
    size_t start;  /* the pragma's source offset */
} Mapper;

typedef struct AnIndex AnIndex; /* file-scope names (analyze.c) */

typedef struct Unit {
    Source *src;
    Diag *diag;
    TSParser *parser;
    TSTree *tree;
    Vec pragmas;        /* Pragma *, in source order */
    Vec blanks;         /* Pragma *: lines macc implements alone (omp requires), left out of the host file */
    Vec kept;           /* Pragma *: lines of others macc keeps for a later pass (the lists below view them) */
    Vec host_dep_tasks; /* Pragma *: host `omp task ... depend(...)` lines */
    Vec mappers;        /* Mapper *: declare mapper directives, in source order */
    Vec dispatches;     /* Pragma *: `omp dispatch` lines (emit_host resolves their calls) */
    Vec rewrites;       /* Pragma *: lines the host file gets as host_text */
    Vec allocates;      /* Pragma *: `omp allocate(list)` directives (emit_host) */
    Vec renames;        /* VtRename * (variant.c): begin declare variant functions */
    Vec vblocks;        /* VtLine * (variant.c): begin/end declare variant lines */
    Vec regions;        /* Region * (analyze) */
    Vec datas;          /* DataConstruct * (analyze) */
    TSNode *top;        /* file-scope nodes in order, conditional groups flattened */
    int ntop, captop;
    AnIndex *index;     /* what top[] declares, by name: built on the first lookup (analyze) */
    Vec dtargets;       /* DeclTarget *: names in declare target directives (analyze) */
    Vec devfuncs;       /* char *: functions with a __device__ copy (analyze) */
    Vec devfnodes;      /* TSNode *: their definitions, same order */
    Vec devvars;        /* DevVar *: globals with a device copy (analyze) */
    Vec devexterns;     /* char *: functions device code calls that the file declares but does not
                         * define: another file's device functions, resolved by the device link */
    Vec devextdecls;    /* TSNode *: their declarations, same order */
    Vec variants;       /* declare variant directives (variant.c) */
    char *dt_key;       /* the device file's table of device variables: macc_dt_<hash> */
    int preprocessed;   /* the text is the preprocessor's output (cc -E) */
    int info;           /* --info: notes on implicit data-sharing decisions */
    int managed;        /* --managed: allocation calls go to MACC_malloc & co. */
    int requires_usm;   /* `omp requires unified_shared_memory` (or unified_address, self_maps) */
    /* the preprocessor's macro definitions (`cc -E -dM`), asked for when a
     * pragma copied into device code needs them (NULL: none to ask) */
    char *(*macros_fn)(void *cx);
    void *macros_cx;
    struct MacroTable *macros;
    int macros_asked;
} Unit;

/* Is c a character of a C identifier (letter, digit, '_')? */
int ident_char(char c);
/* Text [a, b) with blanks collapsed to one space and trimmed (malloc'd). */
char *text_squeeze(const char *a, const char *b);
/* The ')' that closes the '(' at open, or the string's end when none does. */
const char *text_paren_end(const char *open);

/* declare variant (variant.c): construct traits of a call's context. */
enum { VT_TARGET = 1, VT_TEAMS = 2, VT_PARALLEL = 4, VT_FOR = 8, VT_SIMD = 16, VT_DISPATCH = 32 };
/* Source ranges of the `declare variant` lines whose selector names the
 * dispatch construct (the C compiler may not know it: macc resolves them,
 * emit_host leaves the lines out): the i-th, 0 when there are no more. */
int variant_dispatch_line(const Unit *u, int i, size_t *start, size_t *end);
/* begin declare variant match(...) ... end declare variant (OpenMP 5.1): the
 * functions defined between the lines are variants of the same-named base
 * function, renamed macc_bdv_<name>_<k> everywhere macc writes them. The new
 * name of the function whose name (identifier) starts at byte off, or NULL. */
const char *variant_renamed(const Unit *u, size_t off);
/* The i-th line of such a block for the host file: its source range and the
 * text it becomes (the end line: declare variant directives of the base
 * functions, which the C compiler resolves in host code); 0 when no more. */
int variant_block_line(const Unit *u, int i, size_t *start, size_t *end, const char **text);
/* Collects the unit's `declare variant` directives (file scope). */
void variants_collect(Unit *u);
void variants_free(Unit *u);
/* The traits of a region's code with construct set cs (target included). */
unsigned variant_context(unsigned cs);
/* The variant a call to base[0..len) resolves to in a context (VT_* traits)
 * on the GPU (gpu) or the host, or NULL for the base function. */
const char *variant_pick(const Unit *u, const char *base, size_t len, unsigned context, int gpu);
/* The same for identifier `id` when it is the function of a call expression. */
const char *variant_of_call(const Unit *u, TSNode id, unsigned context, int gpu);

/* Parses the source and collects its pragmas (malformed ones are reported).
 * Returns NULL only if the parser itself cannot be created. */
Unit *parse_unit(Source *src, Diag *diag);
void unit_delete(Unit *u);
void an_index_delete(AnIndex *x);

/* Tree helpers. */
const char *node_type(TSNode n);
int node_is(TSNode n, const char *type);
char *node_text(const Unit *u, TSNode n);   /* caller frees */
TSNode node_field(TSNode n, const char *field);
/* Identifiers and type names under n (or in an expression kept as text) into the set. */
void node_ids(const Unit *u, TSNode n, StrSet *ids);
void text_ids(const char *s, StrSet *ids);
/* Is the name at node id (may be null) in the set? */
int node_name_in(const Unit *u, TSNode id, const StrSet *ids);
/* Does struct/union/enum specifier `spec` define a name in the set (its tag,
 * an enumerator)? */
int tag_defines(const Unit *u, TSNode spec, const StrSet *ids);
/* The struct/union/enum specifier with a body inside a declaration,
 * type_definition or specifier node, or a null node. */
TSNode node_tag_body(TSNode n);
/* The k-th loop of a perfect nest starting at `stmt` (0: stmt itself). */
TSNode node_nth_loop(TSNode stmt, int k);
/* The name (identifier) a function definition or declaration n declares, or a null node. */
TSNode node_function_id(TSNode n);
/* Specifier text without top-level const/volatile (caller frees). */
char *spec_unqualified(const char *spec);
/* Source offset of byte `i` of a pragma's text. */
size_t pragma_src_off(const Pragma *p, int i);

/* ---- analyze -------------------------------------------------------------- */
enum CapKind {
    CAP_SCALAR = 1,   /* firstprivate copy in the argument block */
    CAP_PTR,          /* pointer: through a map (env->ptrs) */
    CAP_ARRAY,        /* local array: through a map, rebound as pointer to its rows */
    CAP_PRIVATE,      /* declared, uninitialised */
    CAP_WRITEBACK     /* reduction/lastprivate/map of a scalar: through a map, written back */
};

typedef struct Decl {
    char *name;
    char *spec;        /* specifiers and qualifiers, without storage class ("const float") */
    TSNode declarator; /* the declarator node (identifier/pointer/array/...) */
    char *decl_text;   /* declarator text without initialiser ("*restrict x", "a[N][M]") */
    int id_off, id_len;   /* the name inside decl_text */
    int arr_off, arr_len; /* arrays: the innermost array declarator ("a[N]") inside decl_text */
    int is_pointer;    /* declarator is a pointer (or a parameter array) */
    int is_array;      /* declarator is an array (not a parameter) */
    int is_function;
    int is_global;
    int has_init;      /* declared with an initialiser */
    int is_param;
    char *param_bound; /* a parameter declared as an array with a bound: the bound's text */
} Decl;

typedef struct Capture {
    char *name;
    int kind;          /* CapKind */
    Decl *decl;
    int map;           /* index into the region's maps, or -1 */
    int read, written;
    int local_type;    /* its type is defined inside the enclosing function (hoisted) */
    int target_fp;     /* arrays: firstprivate on the target construct itself (its clause or
                          defaultmap(firstprivate: aggregate)): one copy per task */
    int ptr_back;      /* pointers in map(from|tofrom: p) that the region assigns: 1 + the index
                          of a map of the variable itself, its final value written back there */
} Capture;

typedef struct RMap {
    char *name;        /* the variable */
    char *base;        /* expression of the variable's value (pointer or array) */
    char *start;       /* address expression of the section start */
    char *bytes;       /* size expression */
    int kind;          /* MACC_MAP_* value */
    int implicit;
    int from_value;    /* a pointer named without a section in map(from|tofrom: p) */
    char *stride;      /* target update of a[lo:count:stride]: start and bytes are a[lo]'s, or NULL */
    char *count;
    size_t off;        /* where it was written, for diagnostics */
} RMap;

typedef struct RDep {
    char *addr, *bytes;
    int kind;          /* MACC_DEP_* */
} RDep;

typedef struct RVersion {
    int kind;          /* MACC_DEV_HOST / MACC_DEV_NVIDIA */
    int min_cc;
    int resources;     /* N, MACC_RES_DEFAULT, MACC_RES_AUTO */
    int fallback;
    unsigned cs;       /* construct-set for this version */
    const Directive *dir;  /* directive whose loop clauses apply (target or if_device) */
} RVersion;

typedef struct Region {
    Pragma *target;
    Vec ifdevs;        /* Pragma * */
    TSNode stmt;       /* the structured block */
    TSNode span;       /* the statement after the target line: stmt, or the braces around
                        * directives nested on their own lines (target { teams ... }) */
    TSNode func;       /* enclosing function_definition */
    char *func_name;
    int line, col;
    char *name;        /* macc_k_<func>_L<line>[_n] */
    char *suffix;      /* <func>_L<line>[_n], for the other generated names */
    Vec caps;          /* Capture * */
    Vec maps;          /* RMap * */
    Vec deps;          /* RDep * */
    RVersion versions[4];
    int nversions;
    int device;        /* MACC_DEVICE_* or DEVSEL_NUM with device_expr */
    char *device_expr;
    char *if_expr;
    int nowait;
    int collapse;        /* the loops collapsed (at most the clause's: see collapse_clause) */
    int collapse_clause; /* the clause's n when a non-rectangular nest made collapse smaller, else 0 */
    int nest_depth;    /* perfectly nested for loops at stmt */
    Vec loop_vars;     /* char *: iteration variables of the collapsed nest */
    Vec local_types;   /* TSNode *: type definitions in the enclosing function the region needs */
    Vec access;        /* AccessFact *: per mapped pointer or array (access.c) */
    char *access_trip; /* the outer loop's trip count, evaluable at the call site, or NULL */
    char *access_trip_shown; /* the same for --info */
} Region;

/* Compile-time access facts of an object a region uses (access.c, OTM). */
typedef struct AccessFact {
    char *name;
    int map;           /* index into the region's maps */
    double per_iter;   /* estimated accesses per outer-loop iteration; -1: unknown */
    char *elem_type;   /* element type text */
    int elem_size;     /* bytes, 0: unknown (not a basic type) */
    double gaf;        /* global access frequency over the file's regions */
    int rank;          /* reuse rank: 1 = most accessed */
} AccessFact;

/* access.c: the facts of region r (after its captures and maps). */
void access_region(Unit *u, Region *r);
/* After every region: reuse ranks over the file, and the --info notes. */
void access_rank(Unit *u);
/* Emitters (--managed only): the facts table before the descriptor, the
 * descriptor's trailing fields, the MACC_push_tripcount call before MACC_target. */
void access_emit_facts(const Unit *u, const Region *r, Buf *b);
void access_emit_fields(const Unit *u, const Region *r, Buf *b);
void access_emit_trip(const Unit *u, const Region *r, Buf *b);
void access_free(Region *r);

/* A list item of use_device_ptr / use_device_addr on target data: inside
 * the construct a pointer holds the device address of the data it points to
 * (addr 0: a shadowing copy of the pointer), any other variable is the
 * device's copy (addr 1: references become (*macc_uda_<name>)). */
typedef struct UseDev {
    char *name;
    int addr;
} UseDev;

/* Data constructs other than target regions: target data, enter/exit data,
 * update, taskwait, the OpenACC data family. */
typedef struct DataConstruct {
    Pragma *pragma;
    TSNode stmt;       /* structured block for target data / acc data, else null */
    TSNode func;
    char *func_name;
    Vec maps;          /* RMap * */
    Vec deps;          /* RDep * */
    int device;
    char *device_expr;
    char *if_expr;
    int nowait;
    Vec usedev;        /* UseDev *: target data use_device_ptr / use_device_addr */
} DataConstruct;

/* A name in a declare target directive (a list, or a declaration inside a
 * declare target ... end declare target block). */
typedef struct DeclTarget {
    char *name;
    int link;          /* link(list) (else to / enter / a block) */
    int device_type;   /* DEVTYPE_* */
    int indirect;
    size_t off;        /* where it is named, for diagnostics */
} DeclTarget;

/* A global with a device copy: a __device__ variable of the device file
 * (macc_g_<name>), registered by the host file with the runtime. */
typedef struct DevVar {
    char *name;
    char *spec;        /* specifiers without storage class */
    TSNode decl;       /* the file-scope declaration that defines it */
    TSNode declarator; /* its declarator (without the initialiser) */
    TSNode init;       /* the initialiser, or null */
    int link;          /* link(list), or not in a declare target directive (used by a device function) */
    int implicit;      /* not in a declare target directive */
    int init_from_host;/* no definition in this file: the device copy starts as the host's bytes */
    int is_static;     /* a static global: its device copy is the file's own */
    int external;      /* an extern declaration of a declare target global: another file defines
                        * the device copy (`extern __device__`), which registers it */
} DevVar;

/* Releases a declaration; decl_delete(NULL) is a no-op. */
void decl_delete(Decl *d);

/* Attaches directives to statements and analyses every region and data
 * construct. Reports errors through u->diag. */
void analyze_unit(Unit *u);

/* The region's GPU (nvidia) version, or NULL when it has none. */
const RVersion *region_gpu_version(const Region *r);
/* The clause expressions a GPU version's launch needs (num_teams,
 * thread_limit, num_threads): evaluated where the region is encountered and
 * passed in the argument block as `int macc_<clause>_v<version>`. Writes the
 * struct fields to `fields` and the assignments to `macc_a_` to `assign`
 * (either may be NULL). */
void region_launch_fields(const Region *r, Buf *fields, Buf *assign);
/* Does the GPU version need the value name has as the region starts, while
 * the write-back copy may change (linear; firstprivate and lastprivate)? It is
 * then passed by value as macc_init_<name>. */
int region_init_copy(const Region *r, const char *name);
/* Map j is a section of a pointer member of a struct the region maps whole
 * (map(tofrom: s, s.p[0:n]), a mapper's maps): its capture, and the member
 * path after the struct's name; else NULL. The GPU version attaches it: the
 * device copy of s.p points at the device's section while the region runs. */
const Capture *region_member_attach(const Region *r, int j, const char **member);

/* The local type definitions (Region.local_types) of the regions of
 * function *func (NULL: of every region), each once, in the file's order; the
 * nodes are the regions' (not owned). */
void unit_local_types(const Unit *u, const TSNode *func, Vec *out);
/* The tag macc gives an anonymous struct/union declared in a function, where
 * it hoists the definition (macc_anon_L<line>_<col>; caller frees). */
char *anon_tag(const Unit *u, TSNode spec);
/* The text of a hoisted local type definition (an anonymous struct/union
 * gets its anon_tag), with its closing ";" and a newline. */
void local_type_text(const Unit *u, TSNode n, Buf *out);

/* Appends (as owned strings) the identifiers of an expression kept as text. */
void an_text_ids(const char *s, Vec *names);

/* The declaration of `name` visible at node `at` (NULL: none in the file);
 * *where, when not NULL, receives the declaring node. Free with decl_delete. */
Decl *analyze_lookup(const Unit *u, TSNode at, const char *name, TSNode *where);

/* Does a `kind` clause of `d` list the variable `name`? */
int directive_lists(const Directive *d, ClauseKind kind, const char *name);
/* The declare target entry of `name` (the last directive naming it), or NULL. */
const DeclTarget *an_declare_target(const Unit *u, const char *name);
/* A declaration's type specifiers and qualifiers, without storage class or
 * declarators (a tag with a body: just its name). */
char *an_spec_text(const Unit *u, TSNode decl);
/* The device copy of global `name`, or NULL. */
const DevVar *an_devvar(const Unit *u, const char *name);
/* Does identifier node `id` name a file-scope variable (not a local, a
 * parameter or a function)? */
int an_global_var_ref(const Unit *u, TSNode id);

/* ---- analyze_acc: OpenACC compute constructs ------------------------------- */
/* Decides what an OpenACC region's loops become (kernels: dependences,
 * reductions, private scalars; serial: sequential loops; parallel loop:
 * warnings on racing scalars) and gives --info notes; called before the
 * region's versions are made. No effect on OpenMP regions. */
void acc_region_prepare(Unit *u, Region *r);
/* kernels constructs whose block holds several statements: the unit's text
 * with each loop nest (and each run of other statements) a kernels construct
 * of its own and the data clauses on a data construct around them; NULL when
 * there is none (analyze_acc.c). The caller frees it and parses it instead. */
char *acc_split_kernels(Unit *u, size_t *len_out);
/* Does an acc loop inside OpenACC region r name `name` in a reduction clause
 * (the construct then copies the variable, as OpenACC 2.7 says)? */
int acc_inner_reduction(const Unit *u, const Region *r, const char *name);
/* acc set: the runtime calls (acc_set_default_async, acc_set_device_type,
 * acc_set_device_num) under its if clause, and the closing brace. */
void acc_set_calls(const DataConstruct *d, Buf *b);
/* The directive of an OpenACC construct's version for arch (ARCH_NVIDIA,
 * ARCH_HOST): its device_type(arch) variant, else the construct's own. */
const Directive *acc_version_dir(const Directive *t, int arch);
/* acc enter data / acc data (after: the data is on the device): acc_attach of
 * attach(p) items and of members' sections (s.p[lo:n]: the device copy of s,
 * when present, points at the section); exit data / the end of acc data
 * (before): acc_detach of detach(p) items and members' sections. */
void acc_attach_calls(const DataConstruct *d, Buf *b, int after);
/* copyout(zero:) / create(zero:) items of an OpenACC construct whose maps are
 * `maps`: before them (after 0) MACC_acc_zero_begin when `cond`, after them
 * MACC_acc_zero_end (copied out when a map of the name copies out). */
void acc_zero_calls(const Directive *dir, const Vec *maps, Buf *b, const char *dev, const char *cond, const char *loc,
                    int after);
/* acc data, enter data, exit data, update: the calls that map the rows of
 * pointer-to-pointer sections (copyin(a[0:n][0:m]) of a T **a: a's pointers,
 * then each a[i][0:m], attached in the device copy of a): after the data
 * begins / is entered / updated (after 1), before it ends / leaves / is
 * updated (after 0). */
void acc_rows_calls(const Unit *u, const DataConstruct *d, Buf *b, const char *dev, int after);
/* The same for an OpenACC compute construct's clauses, around its launch
 * (the pointers and rows entered before it, after 0; released after it, 1). */
void acc_region_rows(const Unit *u, const Region *r, Buf *b, const char *dev, int after);

/* ---- emit ---------------------------------------------------------------- */
/* Emits the host file of `u` into *out. `display_path` is the file name used in
 * #line directives and source locations. */
void emit_host(Unit *u, Buf *out, const char *display_path);

/* Emits the device file (name.cuda.cu) of `u` into *out; returns the number
 * of errors reported (loops a GPU version cannot run). Nothing is emitted when
 * no region has an nvidia version (*out stays empty). */
int emit_cuda(Unit *u, Buf *out, const char *display_path);

/* Can region r's GPU version be built? Emits it to a scratch buffer with
 * diagnostics held back; on failure *why receives the first error's message
 * (caller frees). */
int emit_cuda_probe(Unit *u, Region *r, char **why);

/* ---- macro: the preprocessor's definitions, for pragmas cc -E leaves as written -- */
typedef struct MacroTable MacroTable;
/* The definitions in `cc -E -dM` output (the last of a name wins). */
MacroTable *macros_parse(const char *text);
void macros_delete(MacroTable *t);
/* text with its macros expanded (caller frees). */
char *macros_expand(const MacroTable *t, const char *text);

/* ---- lower_cxx: C to CUDA C++ at the token level ------------------------------ */
/* Appends s[0..n), the device file's C text, to out as C++: identifiers that
 * are C++ keywords renamed macc_kw_<name>, C11 keywords spelled as C++'s;
 * strings, comments and preprocessor lines as they are. */
void lower_cxx(const char *s, size_t n, Buf *out);
/* Is s[0..n) a C++ keyword that C programs may use as an identifier? */
int lower_cxx_is_keyword(const char *s, size_t n);

/* ---- emit_atomic: atomic, critical and flush in device code ---------------- */
enum { SYNC_NONE, SYNC_ATOMIC, SYNC_CRITICAL, SYNC_FLUSH };

typedef struct AtomicEmit {
    Unit *u;
    /* copies node n with the caller's token edits (renamed variables, ...) */
    void (*copy)(void *cx, TSNode n, Buf *out);
    /* does the lvalue x live where other threads see it (device memory)? 0:
     * in the thread's own registers or stack (the plain statement is emitted) */
    int (*shared)(void *cx, TSNode x, TSNode pragma);
    void *cx;
    int no_frame;      /* emit the code alone, not padded to the source lines */
    int quiet;         /* report nothing */
    int errors;        /* errors reported */
    int was_atomic;    /* the last atomic_emit made an atomic (not a plain statement) */
} AtomicEmit;

/* SYNC_ATOMIC for `#pragma omp atomic ...`, SYNC_CRITICAL, SYNC_FLUSH, else SYNC_NONE. */
int atomic_pragma_kind(const Unit *u, TSNode n);
/* The statement a pragma applies to: its next named sibling, comments skipped. */
TSNode atomic_pragma_stmt(TSNode pragma);
/* Appends the device code of the pragma `pragma` and its statement to out.
 * Returns 0, or -1 after reporting an error. */
int atomic_emit(AtomicEmit *a, TSNode pragma, Buf *out);
/* The variable (lvalue) an `omp atomic` pragma updates or reads, or a null node. */
TSNode atomic_target(Unit *u, TSNode pragma);

/* ---- translate ------------------------------------------------------------ */
typedef struct TranslateOptions {
    const char *outdir;   /* where the outputs go */
    const char *display;  /* the user's name of the file (messages, #line); default: the input path */
    const char *stem;     /* output names <stem>.host.c / .cuda.cu; default: the input's */
    int info;             /* --info: report implicit decisions */
    int managed;          /* --managed */
    int host_only;        /* --targets without nvidia: no device file, no GPU-version checks */
    FILE *diag_out;       /* default stderr */
    /* the text of `cc -E -dM` for the file (caller's options; malloc'd, or
     * NULL), asked for only when device code holds a pragma to expand */
    char *(*macros)(void *cx);
    void *macros_cx;
} TranslateOptions;

/* Translates `path` into outdir/<stem>.host.c and, when a region has an
 * nvidia version, outdir/<stem>.cuda.cu. Returns 0 on success, 1 on error
 * (diagnostics printed, no output file left). `*host_out` / `*cuda_out`, when
 * not NULL, receive the output paths (caller frees; *cuda_out NULL when there
 * is no device file). */
int translate_file(const char *path, const TranslateOptions *opt, char **host_out, char **cuda_out);

/* Translates in memory (tests). Returns the number of errors; *out receives the
 * host file. */
int translate_string(const char *name, const char *text, Buf *out, FILE *diag_out);

/* Does the file contain anything macc translates (a `#pragma omp`/`#pragma acc`
 * or `_Pragma`)? */
int translate_needed(const char *text);

/* ---- driver ---------------------------------------------------------------- */
int driver_main(int argc, char **argv);

#endif
