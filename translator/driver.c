/* driver.c: the macc command line. GCC's single-dash options, our own
 * double-dash ones; translate, compile with the C compiler and OpenMP, link
 * the runtime. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macc.h"

extern char **environ;

typedef struct Opts {
    Vec inputs;   /* char * (not owned) */
    Vec cflags;   /* compile options (owned strings) */
    Vec ldflags;  /* link options and libraries, in order (owned) */
    const char *output;
    int compile_only, translate_only, verbose, dry, keep, info, managed;
    int pinned;                 /* --pinned: large heap blocks page-locked (the link's wraps) */
    int mpi;                    /* --mpi, or -lmaccrt_mpi: link the MPI module */
    int fpreprocessed;          /* -fpreprocessed: inputs are already preprocessed */
    int openacc, openacc_flag;  /* -fopenacc / -acc given (openacc_flag: -fopenacc, in cflags) */
    int preprocess, assemble;   /* -E, -S */
    int dep_mode;               /* 0, or 'M' (-M), 'm' (-MM), 'D' (-MD), 'd' (-MMD) */
    int dep_phony;              /* -MP */
    const char *dep_file;       /* -MF */
    Vec dep_targets;            /* -MT/-MQ values (not owned) */
    Vec xnvcc, xhost;           /* -Xnvcc / -Xhost options (not owned) */
    const char *targets;
    const char *cuda_arch;
} Opts;

static void dr__usage(FILE *f)
{
    fputs("usage: macc [options] file...\n"
          "\n"
          "Translates #pragma omp target / if_device / OpenACC data directives, compiles the\n"
          "host part with the C compiler and OpenMP, and links the macc runtime.\n"
          "\n"
          "C compiler options (GCC's meaning):\n"
          "  -o FILE  -c  -I DIR  -D NAME[=V]  -U NAME  -O*  -g  -std=STD  -W*  -l LIB  -L DIR\n"
          "  -E -S -M -MM -MD -MMD -MF FILE -MT TARGET -MQ TARGET -MP\n"
          "  -v       print each sub-command and run it\n"
          "  -###     print each sub-command without running it\n"
          "  other options are passed to the C compiler\n"
          "macc options:\n"
          "  --translate        write the translated files only (to -o DIR, default .)\n"
          "  --targets=LIST     device kinds to build for: host,nvidia (default: host,nvidia)\n"
          "  --cuda-arch=sm_NN  GPU architecture for the device file (default sm_90)\n"
          "  --managed          put heap allocations in managed memory\n"
          "  --pinned           page-lock heap blocks of 4 MiB or more (MACC_CUDA_PIN_MIN)\n"
          "                     for GPU copies at DMA speed (NVHPC's -gpu=pinned)\n"
          "  --mpi              compile and link with the MPI compiler wrapper (MACC_MPICC,\n"
          "                     default mpicc) and the MPI module (libmaccrt_mpi, macc_mpi.h)\n"
          "  --info             report implicit mapping decisions\n"
          "  --keep-files       keep the temporary files\n"
          "  -Xnvcc OPT         pass OPT to nvcc only\n"
          "  -Xhost OPT         pass OPT to the host C compiler's compile step only\n"
          "  --help, --version\n"
          "Environment: MACC_CC (C compiler, default cc), MACC_MPICC (with --mpi, default mpicc)\n",
          f);
}

static int dr__takes_arg(const char *a)
{
    static const char *opts[] = {"-o", "-I", "-D", "-U", "-L", "-l", "-x", "-MF", "-MT", "-MQ",
                                 "-include", "-isystem", "-iquote", "-idirafter", "-Xlinker", NULL};
    for (int i = 0; opts[i]; i++)
        if (strcmp(a, opts[i]) == 0)
            return 1;
    return 0;
}

static int dr__is_link_opt(const char *a)
{
    return !strncmp(a, "-l", 2) || !strncmp(a, "-L", 2) || !strncmp(a, "-Wl,", 4) || !strcmp(a, "-Xlinker") ||
           !strcmp(a, "-static") || !strcmp(a, "-shared") || !strcmp(a, "-rdynamic");
}

static int dr__parse(int argc, char **argv, Opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == 0) {
            vec_push(&o->inputs, (void *)a);
            continue;
        }
        if (!strcmp(a, "--help")) {
            dr__usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--version")) {
            printf("macc %s\n", MACC_VERSION_STRING);
            exit(0);
        }
        if (!strcmp(a, "--translate")) { o->translate_only = 1; continue; }
        if (!strcmp(a, "--managed")) { o->managed = 1; continue; }
        if (!strcmp(a, "--pinned")) { o->pinned = 1; continue; }
        if (!strcmp(a, "--mpi")) { o->mpi = 2; continue; }
        if (!strcmp(a, "-lmaccrt_mpi")) { o->mpi = o->mpi ? o->mpi : 1; continue; }
        if (!strcmp(a, "--info")) { o->info = 1; continue; }
        if (!strcmp(a, "--keep-files")) { o->keep = 1; continue; }
        if (!strncmp(a, "--targets=", 10)) { o->targets = a + 10; continue; }
        if (!strncmp(a, "--cuda-arch=", 12)) { o->cuda_arch = a + 12; continue; }
        if (!strncmp(a, "--", 2)) {
            fprintf(stderr, "macc: error: unknown option '%s' (see macc --help)\n", a);
            return 1;
        }
        if (!strcmp(a, "-fpreprocessed")) { o->fpreprocessed = 1; continue; }
        if (!strcmp(a, "-acc")) { o->openacc = 1; continue; } /* NVHPC's spelling */
        if (!strcmp(a, "-fopenacc"))
            o->openacc = o->openacc_flag = 1; /* and on to the C compiler */
        if (!strcmp(a, "-v")) { o->verbose = 1; continue; }
        if (!strcmp(a, "-###")) { o->dry = 1; continue; }
        if (!strcmp(a, "-c")) { o->compile_only = 1; continue; }
        if (!strcmp(a, "-E")) { o->preprocess = 1; continue; }
        if (!strcmp(a, "-S")) { o->assemble = 1; continue; }
        if (!strcmp(a, "-M")) { o->dep_mode = 'M'; continue; }
        if (!strcmp(a, "-MM")) { o->dep_mode = 'm'; continue; }
        if (!strcmp(a, "-MD")) { o->dep_mode = 'D'; continue; }
        if (!strcmp(a, "-MMD")) { o->dep_mode = 'd'; continue; }
        if (!strcmp(a, "-MP")) { o->dep_phony = 1; continue; }
        if (!strcmp(a, "-MF") || !strcmp(a, "-MT") || !strcmp(a, "-MQ") || !strcmp(a, "-Xnvcc") ||
            !strcmp(a, "-Xhost")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "macc: error: missing argument to '%s'\n", a);
                return 1;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "-MF"))
                o->dep_file = v;
            else if (!strcmp(a, "-Xnvcc"))
                vec_push(&o->xnvcc, (void *)v);
            else if (!strcmp(a, "-Xhost"))
                vec_push(&o->xhost, (void *)v);
            else
                vec_push(&o->dep_targets, (void *)v);
            continue;
        }
        if (!strcmp(a, "-o")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "macc: error: missing filename after '-o'\n");
                return 1;
            }
            o->output = argv[++i];
            continue;
        }
        if (!strncmp(a, "-o", 2)) { o->output = a + 2; continue; }
        Vec *dst = dr__is_link_opt(a) ? &o->ldflags : &o->cflags;
        if (dr__takes_arg(a)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "macc: error: missing argument to '%s'\n", a);
                return 1;
            }
            vec_push(dst, xstrdup(a));
            vec_push(dst, xstrdup(argv[++i]));
            continue;
        }
        vec_push(dst, xstrdup(a));
    }
    return 0;
}

/* ---- sub-commands ---------------------------------------------------------- */

static void dr__print_cmd(char **argv)
{
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        int quote = a[strcspn(a, " \t\"'\\$")] != 0 || !*a;
        fprintf(stderr, i ? (quote ? " \"%s\"" : " %s") : (quote ? "\"%s\"" : "%s"), a);
    }
    fputc('\n', stderr);
}

/* Runs argv (NULL-terminated); returns its exit status. Under -### only
 * prints it, unless `always` (the preprocessor: translation needs its
 * output to know which commands follow). */
static int dr__run_cmd(const Opts *o, Vec *args, int always)
{
    vec_push(args, NULL);
    char **argv = (char **)args->items;
    args->len--;
    if (o->verbose || o->dry)
        dr__print_cmd(argv);
    if (o->dry && !always)
        return 0;
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        fprintf(stderr, "macc: error: cannot run '%s': %s\n", argv[0], strerror(rc));
        return 1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return 1;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    fprintf(stderr, "macc: error: '%s' terminated by signal %d\n", argv[0], WTERMSIG(status));
    return 1;
}

static int dr__run(const Opts *o, Vec *args)
{
    return dr__run_cmd(o, args, 0);
}

static char *dr__self_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return xstrdup(".");
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    return xstrdup(buf);
}

/* --mpi: the host compiler is the MPI wrapper (dr__use_mpicc). */
static int dr__use_mpicc;

static const char *dr__cc(void)
{
    if (dr__use_mpicc) {
        const char *m = getenv("MACC_MPICC");
        return m && *m ? m : "mpicc";
    }
    const char *cc = getenv("MACC_CC");
    return cc && *cc ? cc : "cc";
}

/* --mpi: the wrapper compiles with MACC_CC (else cc), never with macc itself
 * (OMPI_CC=macc mpicc ... --mpi would call macc again). */
static void dr__mpi_setup(void)
{
    const char *cc = getenv("MACC_CC");
    cc = cc && *cc ? cc : "cc";
    setenv("OMPI_CC", cc, 1);
    setenv("MPICH_CC", cc, 1);
    dr__use_mpicc = 1;
}

/* nvcc: $MACC_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc; NULL if none. */
static char *dr__nvcc(void)
{
    const char *env = getenv("MACC_NVCC");
    if (env)
        return *env && access(env, X_OK) == 0 ? xstrdup(env) : NULL;
    const char *path = getenv("PATH");
    if (path) {
        char *p = xstrdup(path);
        for (char *dir = strtok(p, ":"); dir; dir = strtok(NULL, ":")) {
            char *cand = xsprintf("%s/nvcc", *dir ? dir : ".");
            if (access(cand, X_OK) == 0) {
                free(p);
                return cand;
            }
            free(cand);
        }
        free(p);
    }
    if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
        return xstrdup("/usr/local/cuda/bin/nvcc");
    return NULL;
}

static char *dr__dirname(const char *path);

/* The directory holding the CUDA runtime library of the toolkit that nvcc
 * belongs to: lib64, lib, or targets/<arch>-linux/lib next to nvcc's bin
 * (nvcc may be a symbolic link into the toolkit).  *is_static says whether
 * libcudart_static.a is there; otherwise libcudart.so is.  NULL when
 * neither is found: the driver then builds host-only, as without nvcc.
 * MACC_CUDA_LIBDIR, when set, names the one directory to look in. */
static int dr__readable_in(const char *dir, const char *file)
{
    char *f = xsprintf("%s/%s", dir, file);
    int r = access(f, R_OK) == 0;
    free(f);
    return r;
}

static char *dr__cudart_dir(const char *nvcc, int *is_static)
{
    static const char *const lib[] = {"libcudart_static.a", "libcudart.so"};
    const char *only = getenv("MACC_CUDA_LIBDIR");
    if (only) {
        /* set: that directory alone (empty: none, build host-only) */
        for (int l = 0; l < 2 && *only; l++)
            if (dr__readable_in(only, lib[l])) {
                *is_static = l == 0;
                return xstrdup(only);
            }
        return NULL;
    }
    static const char *const sub[] = {"lib64", "lib", "targets/x86_64-linux/lib",
                                      "targets/sbsa-linux/lib", "lib/x86_64-linux-gnu",
                                      "lib/aarch64-linux-gnu"};
    char real[PATH_MAX];
    char *bin = dr__dirname(realpath(nvcc, real) ? real : nvcc);
    char *top = xsprintf("%s/..", bin);
    free(bin);
    /* nvcc's toolkit first; then, for an nvcc that is a wrapper script,
     * $CUDA_HOME, $CUDA_PATH and /usr/local/cuda. In each, the static
     * library anywhere before the shared one. */
    const char *tops[] = {top, getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    char *found = NULL;
    for (size_t t = 0; t < sizeof tops / sizeof *tops && !found; t++) {
        if (!tops[t] || !*tops[t])
            continue;
        for (int l = 0; l < 2 && !found; l++)
            for (size_t i = 0; i < sizeof sub / sizeof *sub && !found; i++) {
                char *dir = xsprintf("%s/%s", tops[t], sub[i]);
                if (dr__readable_in(dir, lib[l])) {
                    found = dir;
                    *is_static = l == 0;
                } else {
                    free(dir);
                }
            }
    }
    free(top);
    return found;
}

static char *dr__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

static char *dr__stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return xstrndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
}

/* cc -fopenmp [-v] CFLAGS: the start of every host compile and link. */
static void dr__cc_command(const Opts *o, Vec *cmd)
{
    vec_push(cmd, (void *)dr__cc());
    vec_push(cmd, "-fopenmp");
    vec_push(cmd, "-D__MACC__=1"); /* as the preprocessor step saw the file */
    if (o->verbose)
        vec_push(cmd, "-v"); /* GCC's meaning too: CMake reads the compiler's search paths */
    for (int i = 0; i < o->cflags.len; i++)
        vec_push(cmd, o->cflags.items[i]);
}

static int dr__is_c(const char *path)
{
    size_t n = strlen(path);
    return n > 2 && (!strcmp(path + n - 2, ".c") || !strcmp(path + n - 2, ".i"));
}

static void dr__push_all(Vec *dst, const Vec *src)
{
    for (int i = 0; i < src->len; i++)
        vec_push(dst, src->items[i]);
}

static void dr__rm_rf(const char *dir)
{
    char *cmd[] = {"rm", "-rf", (char *)dir, NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "rm", NULL, NULL, cmd, environ) == 0) {
        int st;
        waitpid(pid, &st, 0);
    }
}

/* Replaces every occurrence of `from` by `to` in file `path` (a dependency
 * file that names the translated temporary instead of the user's source);
 * with `out`, writes the result there instead ("-": stdout). */
static int dr__fix_depfile(const char *path, const char *from, const char *to, const char *out)
{
    Source *s = source_read(path);
    if (!s) {
        fprintf(stderr, "macc: error: cannot read '%s'\n", path);
        return 1;
    }
    Buf b = {0};
    const char *p = s->text;
    size_t fl = strlen(from);
    for (const char *q; fl && (q = strstr(p, from)) != NULL; p = q + fl) {
        buf_put(&b, p, (size_t)(q - p));
        buf_puts(&b, to);
    }
    buf_puts(&b, p);
    source_delete(s);
    int rc = 0;
    FILE *f = !out ? fopen(path, "wb") : strcmp(out, "-") ? fopen(out, "wb") : stdout;
    if (!f || fwrite(b.data, 1, b.len, f) != b.len)
        rc = 1;
    if (f && f != stdout && fclose(f) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "macc: error: cannot write the dependency file of '%s'\n", to);
    buf_free(&b);
    return rc;
}

/* nvcc's targets for a device file: the --cuda-arch one and every compute
 * capability its if_device lines name (the "macc-cuda-archs:" line of the
 * file) that this CUDA can build (7.5 and later). Nothing when that is just
 * the --cuda-arch one; else "-gencode arch=compute_NN,code=sm_NN" pairs. */
static void dr__cuda_archs(const char *cuda, const char *arch_opt, Vec *out)
{
    int base = 0;
    const char *d = strpbrk(arch_opt, "0123456789");
    if (d)
        base = atoi(d);
    Source *s = source_read(cuda);
    const char *line = s ? strstr(s->text, "macc-cuda-archs:") : NULL;
    int archs[64], n = 0;
    archs[n++] = base;
    if (line) {
        const char *p = line + 16;
        while (*p && *p != '*' && *p != '\n') {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) {
                p++;
                continue;
            }
            int dup = 0;
            for (int i = 0; i < n; i++)
                dup |= archs[i] == v;
            if (v >= 75 && !dup && n < 64)
                archs[n++] = (int)v;
            p = end;
        }
    }
    source_delete(s);
    if (n == 1 || base <= 0)
        return;
    for (int i = 0; i < n; i++) {
        vec_push(out, xstrdup("-gencode"));
        vec_push(out, xsprintf("arch=compute_%d,code=sm_%d", archs[i], archs[i]));
    }
}

static int dr__file_needs_translation(const char *path)
{
    Source *s = source_read(path);
    if (!s)
        return 1; /* let translation report the error */
    int r = translate_needed(s->text);
    source_delete(s);
    return r;
}

/* Does preprocessed text name a routine, type or constant of macc's
 * <openacc.h> (acc_malloc, acc_device_none, ...)? A file that calls the
 * OpenACC runtime API is an OpenACC program even without a directive: it
 * expects _OPENACC and <openacc.h> as -fopenacc / -acc give them. */
static int dr__uses_acc_api(const char *path, const char *incdir)
{
    char *h = xsprintf("%s/openacc.h", incdir);
    Source *hs = source_read(h), *s = hs ? source_read(path) : NULL;
    StrSet api = {0};
    int r = 0;
    free(h);
    if (hs)
        text_ids(hs->text, &api);
    for (const char *p = s ? s->text : ""; !r && (p = strstr(p, "acc_")) != NULL; p += 4) {
        const char *q = p;
        if (p > s->text && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                            (p[-1] >= '0' && p[-1] <= '9')))
            continue;
        while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'))
            q++;
        r = strset_has(&api, p, (size_t)(q - p));
    }
    strset_free(&api);
    source_delete(s);
    source_delete(hs);
    return r;
}

/* --translate takes C text: a file holding NUL bytes (an object, an archive,
 * any binary) is refused rather than copied through. 0: fine or unreadable
 * (translation reports that). */
static int dr__not_c_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char chunk[65536];
    size_t n;
    int bin = 0;
    while (!bin && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        bin = memchr(chunk, 0, n) != NULL;
    fclose(f);
    if (bin)
        fprintf(stderr, "macc: error: %s: not a C source file (it holds NUL bytes)\n", path);
    return bin;
}

/* Does the C compiler accept -fopenacc (GCC does; Clang before 19 does not)?
 * Asked once, quietly. */
static int dr__cc_has_openacc(void)
{
    static int known = -1;
    if (known >= 0)
        return known;
    char *argv[] = {(char *)dr__cc(), "-fopenacc", "-E", "-x", "c", "/dev/null", "-o", "/dev/null", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int st = 1;
    known = 0;
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) == 0 && waitpid(pid, &st, 0) == pid &&
        WIFEXITED(st) && WEXITSTATUS(st) == 0)
        known = 1;
    posix_spawn_file_actions_destroy(&fa);
    return known;
}

/* The preprocessor step: cc -E -fopenmp [-fopenacc] -D__MACC__=1 CFLAGS IN -o OUT.
 * Translation works on what the C compiler sees: headers, macros (pragmas
 * made by macros, _Pragma), conditional groups; the line markers keep the
 * user's files and lines. OpenMP and OpenACC pragmas are macro-expanded as
 * the standards say. OpenACC (-fopenacc: _OPENACC defined, acc pragmas
 * expanded) as GCC and NVHPC do it: when the user asks (-fopenacc, -acc),
 * or when the file holds OpenACC directives; an OpenMP program that tests
 * _OPENACC is not turned into an OpenACC one. */
static void dr__cpp_command(const Opts *o, Vec *cmd, const char *in, const char *out, const char *incdir, int acc)
{
    vec_push(cmd, (void *)dr__cc());
    vec_push(cmd, "-E");
    vec_push(cmd, "-fopenmp");
    if (acc && !o->openacc_flag && dr__cc_has_openacc())
        vec_push(cmd, "-fopenacc");
    vec_push(cmd, "-D__MACC__=1");
    /* macc's <openacc.h> (its runtime's routines), ahead of the user's and the compiler's */
    vec_push(cmd, "-I");
    vec_push(cmd, (void *)incdir);
    for (int i = 0; i < o->cflags.len; i++)
        vec_push(cmd, o->cflags.items[i]);
    dr__push_all(cmd, &o->xhost);
    vec_push(cmd, (void *)in);
    vec_push(cmd, "-o");
    vec_push(cmd, (void *)out);
}

/* Preprocesses `in` into dir/<stem>.<i>.i (unless the input is already
 * preprocessed: -fpreprocessed or a .i file); extra arguments (dependency
 * options) go to the preprocessor. Returns the file to translate (owned) or
 * NULL after an error. */
static char *dr__self_dir(void);

/* Does preprocessed text hold a `#pragma acc` line? */
static int dr__has_acc_pragma(const char *path)
{
    Source *s = source_read(path);
    int r = 0;
    for (const char *p = s ? s->text : ""; !r && (p = strstr(p, "#pragma")) != NULL; p += 7) {
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t')
            q++;
        r = !strncmp(q, "acc", 3) && (q[3] == ' ' || q[3] == '\t' || q[3] == '\n');
    }
    source_delete(s);
    return r;
}

/* GCC's dependency options for the preprocessor step: -MD/-MMD, -MF file,
 * the user's -MT/-MQ targets or else `target`, -MP. The strings are not
 * copied: they must outlive *args. */
static void dr__dep_args(const Opts *o, Vec *args, const char *file, const char *target)
{
    vec_push(args, o->dep_mode == 'D' || o->dep_mode == 'M' ? "-MD" : "-MMD");
    vec_push(args, "-MF");
    vec_push(args, (void *)file);
    for (int k = 0; k < o->dep_targets.len; k++) {
        vec_push(args, "-MT");
        vec_push(args, o->dep_targets.items[k]);
    }
    if (!o->dep_targets.len) {
        vec_push(args, "-MT");
        vec_push(args, (void *)target);
    }
    if (o->dep_phony)
        vec_push(args, "-MP");
}

static char *dr__preprocess(const Opts *o, const char *in, const char *dir, const char *stem, int i,
                            const Vec *extra, int *rc)
{
    size_t n = strlen(in);
    if (o->fpreprocessed || (n > 2 && !strcmp(in + n - 2, ".i")))
        return xstrdup(in);
    char *ifile = xsprintf("%s/%s.%d.i", dir, stem, i);
    Vec cmd = {0};
    char *self = dr__self_dir();
    char *incdir = xsprintf("%s/../include", self);
    dr__cpp_command(o, &cmd, in, ifile, incdir, o->openacc);
    if (extra)
        dr__push_all(&cmd, extra);
    *rc = dr__run_cmd(o, &cmd, 1);
    vec_free(&cmd);
    if (!*rc && !o->openacc && dr__cc_has_openacc() &&
        (dr__has_acc_pragma(ifile) || dr__uses_acc_api(ifile, incdir))) {
        /* an OpenACC file: again with OpenACC's macros and expansion */
        dr__cpp_command(o, &cmd, in, ifile, incdir, 1);
        if (extra)
            dr__push_all(&cmd, extra);
        *rc = dr__run_cmd(o, &cmd, 1);
        vec_free(&cmd);
    }
    free(incdir);
    free(self);
    if (*rc) {
        free(ifile);
        return NULL;
    }
    return ifile;
}

/* The C compiler's options as nvcc gets them, by meaning (docs/DRIVER.md
 * has the table): optimisation levels nvcc knows, -Ofast and -ffast-math as
 * --use_fast_math, the macros and include paths, debug information, what
 * the host side of a CUDA object must share with the program's objects
 * (-fPIC, -mcmodel) through -Xcompiler; everything else (warnings,
 * -march, -std, -f options of GCC's code generation) stays with the C
 * compiler, so nothing nvcc rejects reaches it. */
static void dr__nvcc_options(const Opts *o, Vec *cmd, int user_cu)
{
    int fast = 0;
    const char *level = NULL;
    for (int k = 0; k < o->cflags.len; k++) {
        const char *f = o->cflags.items[k];
        const char *next = k + 1 < o->cflags.len ? o->cflags.items[k + 1] : NULL;
        if (!strcmp(f, "-Ofast")) {
            level = "-O3";
            fast = 1;
        } else if (!strcmp(f, "-O") || !strcmp(f, "-O1")) {
            level = "-O1";
        } else if (!strcmp(f, "-O0") || !strcmp(f, "-O2") || !strcmp(f, "-O3")) {
            level = f;
        } else if (!strncmp(f, "-O", 2) && f[2]) {
            level = f[2] == 'g' ? "-O1" : "-O2"; /* -Os, -Oz, -Og, -O4 and beyond */
        } else if (!strcmp(f, "-ffast-math")) {
            fast = 1;
        } else if (!strcmp(f, "-fno-fast-math")) {
            fast = 0;
        } else if ((!strcmp(f, "-D") || !strcmp(f, "-U") || !strcmp(f, "-I") ||
                    (user_cu && (!strcmp(f, "-include") || !strcmp(f, "-isystem")))) && next) {
            /* -include: only into the user's own .cu files (a generated
             * device file holds the included header's types already) */
            vec_push(cmd, (void *)f);
            vec_push(cmd, (void *)next);
            k++;
        } else if (!strncmp(f, "-D", 2) || !strncmp(f, "-U", 2) || !strncmp(f, "-I", 2)) {
            vec_push(cmd, (void *)f);
        } else if (!strcmp(f, "-g") || !strncmp(f, "-ggdb", 5) || (f[0] == '-' && f[1] == 'g' && f[2] >= '1' && f[2] <= '3' && !f[3])) {
            vec_push(cmd, "-g");
        } else if (!strcmp(f, "-w")) {
            vec_push(cmd, "-w");
        } else if (!strcmp(f, "-m64")) {
            vec_push(cmd, "-m64");
        } else if (!strcmp(f, "-fPIC") || !strcmp(f, "-fpic") || !strcmp(f, "-fPIE") || !strcmp(f, "-fpie") ||
                   !strncmp(f, "-mcmodel=", 9)) {
            vec_push(cmd, "-Xcompiler");
            vec_push(cmd, (void *)f);
        } else if (dr__takes_arg(f) && next) {
            k++; /* an option of the C compiler's with its argument (-x, -MT, ...) */
        }
    }
    if (level)
        vec_push(cmd, (void *)level);
    if (fast)
        vec_push(cmd, "--use_fast_math");
}

/* The preprocessor's macro definitions for one input (`cc -E -dM` with the
 * user's options), for pragmas in device code that cc -E leaves unexpanded;
 * run only when the translator asks. */
typedef struct DrMacros {
    const Opts *o;
    const char *in, *dir, *stem;
    int i;
} DrMacros;

static char *dr__macros(void *cx)
{
    DrMacros *m = cx;
    size_t n = strlen(m->in);
    if (m->o->fpreprocessed || (n > 2 && !strcmp(m->in + n - 2, ".i")))
        return NULL; /* its macros are gone */
    char *mfile = xsprintf("%s/%s.%d.macros", m->dir, m->stem, m->i);
    char *self = dr__self_dir();
    char *incdir = xsprintf("%s/../include", self);
    Vec cmd = {0};
    dr__cpp_command(m->o, &cmd, m->in, mfile, incdir, m->o->openacc);
    vec_push(&cmd, "-dM");
    int rc = dr__run_cmd(m->o, &cmd, 1);
    vec_free(&cmd);
    free(incdir);
    free(self);
    char *text = NULL;
    Source *src = rc ? NULL : source_read(mfile);
    if (src)
        text = xstrdup(src->text);
    source_delete(src);
    unlink(mfile);
    free(mfile);
    return text;
}

int driver_main(int argc, char **argv)
{
    Opts o = {0};
    int rc = 0;
    if (dr__parse(argc, argv, &o)) {
        rc = 1;
        goto out;
    }
    if (o.mpi == 2)
        dr__mpi_setup();
    if (!o.inputs.len) {
        /* `macc -v`, `-dumpversion`, `-dumpmachine`, `-print-*`: the C compiler answers */
        if (o.verbose || o.cflags.len) {
            if (o.verbose)
                fprintf(stderr, "macc version %s\n", MACC_VERSION_STRING);
            Vec cmd = {0};
            vec_push(&cmd, (void *)dr__cc());
            dr__push_all(&cmd, &o.cflags);
            if (o.verbose)
                vec_push(&cmd, "-v");
            o.verbose = 0;
            rc = dr__run(&o, &cmd);
            vec_free(&cmd);
            goto out;
        }
        fprintf(stderr, "macc: fatal error: no input files\n");
        rc = 1;
        goto out;
    }
    if (o.targets) {
        char *t = xstrdup(o.targets);
        for (char *tok = strtok(t, ","); tok; tok = strtok(NULL, ",")) {
            if (strcmp(tok, "host") && strcmp(tok, "nvidia") && strcmp(tok, "cuda")) {
                fprintf(stderr, "macc: error: unknown target '%s' in --targets (host, nvidia)\n", tok);
                rc = 1;
            }
        }
        free(t);
        if (rc)
            goto out;
    }

    if (o.translate_only) {
        TranslateOptions to = {0};
        to.outdir = o.output ? o.output : ".";
        to.info = o.info;
        to.managed = o.managed;
        struct stat st;
        if (stat(to.outdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "macc: error: output directory '%s' does not exist\n", to.outdir);
            rc = 1;
            goto out;
        }
        const char *tmproot = getenv("TMPDIR");
        char *tdir = xsprintf("%s/macc-XXXXXX", tmproot && *tmproot ? tmproot : "/tmp");
        if (!mkdtemp(tdir)) {
            fprintf(stderr, "macc: error: cannot create a temporary directory: %s\n", strerror(errno));
            free(tdir);
            rc = 1;
            goto out;
        }
        for (int i = 0; i < o.inputs.len; i++) {
            const char *in = o.inputs.items[i];
            if (dr__not_c_text(in)) {
                rc = 1;
                continue;
            }
            char *stem = dr__stem(in);
            int prc = 0;
            /* GCC's dependency options: the preprocessor writes them, for
             * the host file (default OUT/<stem>.d, target OUT/<stem>.host.c) */
            Vec depargs = {0};
            char *df = NULL, *dt = NULL;
            if (o.dep_mode) {
                df = o.dep_file ? xstrdup(o.dep_file) : xsprintf("%s/%s.d", to.outdir, stem);
                dt = xsprintf("%s/%s.host.c", to.outdir, stem);
                dr__dep_args(&o, &depargs, df, dt);
            }
            char *ifile = dr__preprocess(&o, in, tdir, stem, i, &depargs, &prc);
            vec_free(&depargs);
            free(df);
            free(dt);
            to.display = in;
            to.stem = stem;
            to.host_only = o.targets && !strstr(o.targets, "nvidia") && !strstr(o.targets, "cuda");
            DrMacros mcx = {&o, in, tdir, stem, i};
            to.macros = dr__macros;
            to.macros_cx = &mcx;
            if (!ifile || translate_file(ifile, &to, NULL, NULL))
                rc = 1;
            free(ifile);
            free(stem);
        }
        if (o.keep)
            fprintf(stderr, "macc: kept temporary files in %s\n", tdir);
        else
            dr__rm_rf(tdir);
        free(tdir);
        goto out;
    }

    int want_nvidia = 1;
    if (o.targets)
        want_nvidia = strstr(o.targets, "nvidia") || strstr(o.targets, "cuda");
    char *nvcc = want_nvidia ? dr__nvcc() : NULL;
    char *cudalib = NULL, *arch = NULL;
    int cudart_static = 1;
    if (nvcc) {
        cudalib = dr__cudart_dir(nvcc, &cudart_static);
        if (!cudalib) {
            if (o.verbose)
                fprintf(stderr, "macc: note: no libcudart next to %s\n", nvcc);
            free(nvcc);
            nvcc = NULL;
        }
    }
    {
        const char *a = o.cuda_arch ? o.cuda_arch : "sm_90";
        if (!strncmp(a, "sm_", 3) || !strncmp(a, "compute_", 8))
            arch = xsprintf("-arch=%s", a);
        else
            arch = xsprintf("-arch=sm_%s", a);
    }
    int linked_cuda = 0, noted = 0;
    char *self = dr__self_dir();
    char *incdir = xsprintf("%s/../include", self);
    char *rtlib = xsprintf("%s/../lib/libmaccrt.a", self);
    char *rtcuda = xsprintf("%s/../lib/libmaccrt_cuda.a", self);
    char *rtmpi = xsprintf("%s/../lib/libmaccrt_mpi.a", self);
    char *rtmpicuda = xsprintf("%s/../lib/libmaccrt_mpi_cuda.a", self);
    if (nvcc && access(rtcuda, R_OK) != 0) {
        if (o.verbose)
            fprintf(stderr, "macc: note: %s not found: the runtime was built without CUDA\n", rtcuda);
        free(nvcc);
        nvcc = NULL;
    }
    free(self);
    const char *tmproot = getenv("TMPDIR");
    char *tmpdir = xsprintf("%s/macc-XXXXXX", tmproot && *tmproot ? tmproot : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "macc: error: cannot create a temporary directory: %s\n", strerror(errno));
        free(tmpdir);
        tmpdir = NULL;
        rc = 1;
        goto cleanup;
    }
    if (o.output) {
        char a[PATH_MAX], b[PATH_MAX];
        for (int i = 0; i < o.inputs.len; i++)
            if (realpath(o.output, a) && realpath(o.inputs.items[i], b) && !strcmp(a, b)) {
                fprintf(stderr, "macc: fatal error: input file '%s' is the same as output file\n",
                        (char *)o.inputs.items[i]);
                rc = 1;
                goto cleanup;
            }
    }
    int dep_only = o.dep_mode == 'M' || o.dep_mode == 'm';
    int no_link = o.compile_only || o.preprocess || o.assemble || dep_only;
    if ((o.compile_only || o.assemble) && o.output && o.inputs.len > 1) {
        fprintf(stderr, "macc: fatal error: cannot specify '-o' with '-c' or '-S' and multiple files\n");
        rc = 1;
        goto cleanup;
    }

    Vec objs = {0}, owned = {0};
    for (int i = 0; i < o.inputs.len && !rc; i++) {
        const char *in = o.inputs.items[i];
        size_t inlen = strlen(in);
        int is_cu = inlen > 3 && !strcmp(in + inlen - 3, ".cu");
        if (!dr__is_c(in) && !is_cu) {
            /* an object made by `macc -c` may hold GPU code: link the plugin */
            if (nvcc)
                linked_cuda = 1;
            vec_push(&objs, (void *)in);
            continue;
        }
        char *stem = dr__stem(in);
        const char *src = in;
        char *host = NULL, *cuda = NULL, *srcdir = NULL;
        int deps_done = 0, as_acc = 0;
        if (is_cu) {
            if (!nvcc) {
                fprintf(stderr, "macc: error: '%s' needs nvcc, which was not found (set MACC_NVCC)\n", in);
                rc = 1;
                free(stem);
                break;
            }
            cuda = xstrdup(in);
            srcdir = dr__dirname(in);
        } else if (!o.preprocess && !dep_only) {
            /* the preprocessor first: what the compiler sees decides (pragmas
             * may come from macros in headers); it also writes the
             * dependency file, which then names the user's headers */
            Vec depargs = {0};
            char *pdepfile = NULL, *pdeptarget = NULL;
            if (o.dep_mode) {
                const char *uo = o.compile_only ? (o.output ? o.output : NULL) : o.assemble ? o.output : NULL;
                char *uo_own = NULL;
                if (!uo && (o.compile_only || o.assemble))
                    uo = uo_own = xsprintf("%s.%s", stem, o.assemble ? "s" : "o");
                if (o.dep_file)
                    pdepfile = xstrdup(o.dep_file);
                else if (o.compile_only || o.assemble) {
                    const char *dot = strrchr(uo, '.');
                    const char *sl = strrchr(uo, '/');
                    pdepfile = dot && (!sl || dot > sl) ? xsprintf("%.*s.d", (int)(dot - uo), uo) : xsprintf("%s.d", uo);
                } else {
                    pdepfile = xsprintf("%s.d", stem);
                }
                pdeptarget = (o.compile_only || o.assemble) ? xstrdup(uo) : xsprintf("%s.o", stem);
                dr__dep_args(&o, &depargs, pdepfile, pdeptarget);
                free(uo_own);
                deps_done = 1;
            }
            char *ifile = dr__preprocess(&o, in, tmpdir, stem, i, &depargs, &rc);
            vec_free(&depargs);
            free(pdepfile);
            free(pdeptarget);
            if (!ifile) {
                free(stem);
                break;
            }
            int needs = o.managed || dr__file_needs_translation(ifile);
            if (!needs) {
                /* an OpenACC program with no directive (runtime calls only) is
                 * compiled as it is, as an OpenACC program */
                as_acc = !o.openacc_flag && dr__cc_has_openacc() && dr__uses_acc_api(ifile, incdir);
                free(ifile);
                goto compile;
            }
            /* --managed: every C file, for its allocation calls */
            TranslateOptions to = {0};
            to.outdir = tmpdir;
            to.info = o.info;
            to.managed = o.managed;
            to.display = in;
            to.stem = stem;
            to.host_only = !want_nvidia;
            DrMacros mcx = {&o, in, tmpdir, stem, i};
            to.macros = dr__macros;
            to.macros_cx = &mcx;
            if (o.verbose || o.dry)
                fprintf(stderr, "macc --translate %s -o %s\n", ifile, tmpdir);
            int trc = translate_file(ifile, &to, &host, &cuda);
            free(ifile);
            if (trc) {
                rc = 1;
                free(stem);
                break;
            }
            src = host;
            srcdir = dr__dirname(in);
            if (cuda && (o.preprocess || o.assemble || dep_only)) {
                free(cuda); /* -E, -S, -M: the host side only */
                cuda = NULL;
            } else if (cuda && !nvcc) {
                if (want_nvidia && !noted++)
                    fprintf(stderr, "macc: note: no nvcc, no libcudart or no CUDA runtime plugin: building host-only (set MACC_NVCC, MACC_CUDA_LIBDIR)\n");
                free(cuda);
                cuda = NULL;
            }
        }
        if (cuda) {
            char *cobj = o.compile_only && is_cu ? (o.output ? xstrdup(o.output) : xsprintf("%s.o", stem))
                                                 : xsprintf("%s/%s.%d.cu.o", tmpdir, stem, i);
            Vec cmd = {0}, gencode = {0};
            vec_push(&cmd, nvcc);
            dr__cuda_archs(cuda, arch, &gencode);
            if (gencode.len)
                dr__push_all(&cmd, &gencode);
            else
                vec_push(&cmd, arch);

            vec_push(&cmd, "-std=c++17");
            vec_push(&cmd, "--expt-relaxed-constexpr"); /* C's fmax(int, int) &c.: <cmath>'s templates on the device */
            /* generated C-like host code needs no C++ runtime: without
             * exceptions and guarded statics it references nothing of
             * libstdc++, which (linked as needed) is then not loaded, about
             * 1 MiB of resident memory in every program */
            if (!is_cu)
                vec_push(&cmd, "-Xcompiler=-fno-exceptions,-fno-threadsafe-statics");
            /* relocatable device code: a kernel calls another file's declare
             * target functions and uses one copy of each declare target
             * global; the link step joins the device code (docs/DRIVER.md) */
            if (!is_cu)
                vec_push(&cmd, "-rdc=true");
            dr__push_all(&cmd, &o.xnvcc);
            dr__nvcc_options(&o, &cmd, is_cu);
            vec_push(&cmd, "-I");
            vec_push(&cmd, incdir);
            vec_push(&cmd, "-I");
            vec_push(&cmd, srcdir);
            vec_push(&cmd, "-c");
            vec_push(&cmd, cuda);
            vec_push(&cmd, "-o");
            vec_push(&cmd, cobj);
            rc = dr__run(&o, &cmd);
            vec_free(&cmd);
            for (int k = 0; k < gencode.len; k++)
                free(gencode.items[k]);
            vec_free(&gencode);
            vec_push(&objs, cobj);
            vec_push(&owned, cobj);
            linked_cuda = 1;
            if (is_cu || rc) {
                free(cuda);
                free(srcdir);
                free(stem);
                if (rc)
                    break;
                continue;
            }
        }
    compile:;
        char *obj;
        if (o.preprocess || dep_only)
            obj = xstrdup(o.output ? o.output : "-");
        else if (o.assemble)
            obj = o.output ? xstrdup(o.output) : xsprintf("%s.s", stem);
        else
            obj = o.compile_only ? (o.output ? xstrdup(o.output) : xsprintf("%s.o", stem))
                                 : xsprintf("%s/%s.%d.o", tmpdir, stem, i);
        /* -c with a device file: the host and device objects are merged into
         * the one object the user asked for (a relocatable link) */
        char *final_obj = NULL;
        if (o.compile_only && cuda) {
            final_obj = obj;
            obj = xsprintf("%s/%s.%d.host.o", tmpdir, stem, i);
        }
        const char *user_obj = final_obj ? final_obj : obj;
        Vec cmd = {0};
        dr__cc_command(&o, &cmd);
        /* macc's <openacc.h> ahead of the user's and the compiler's (a file
         * compiled as it is may include it too) */
        vec_push(&cmd, NULL);
        vec_push(&cmd, NULL);
        memmove(&cmd.items[5], &cmd.items[3], sizeof(void *) * (size_t)(cmd.len - 5));
        cmd.items[3] = "-I";
        cmd.items[4] = incdir;
        dr__push_all(&cmd, &o.xhost);
        if (cuda)
            vec_push(&cmd, "-DMACC_WITH_CUDA=1");
        if (as_acc)
            vec_push(&cmd, "-fopenacc");
        vec_push(&cmd, "-I");
        vec_push(&cmd, incdir);
        if (srcdir) {
            vec_push(&cmd, "-iquote");
            vec_push(&cmd, srcdir);
        }
        /* dependencies (GCC's -M options): the compiler writes them for the
         * translated file; its name is replaced by the user's afterwards */
        char *depfile = NULL, *deptarget = NULL;
        int dep_to_out = 0;
        if (o.dep_mode && !deps_done) {
            vec_push(&cmd, o.dep_mode == 'M' ? "-M" : o.dep_mode == 'm' ? "-MM" : o.dep_mode == 'D' ? "-MD" : "-MMD");
            if (o.dep_file)
                depfile = xstrdup(o.dep_file);
            else if (dep_only) {
                depfile = xsprintf("%s/%s.%d.d", tmpdir, stem, i);
                dep_to_out = 1;
            } else if (o.compile_only || o.assemble) {
                const char *dot = strrchr(user_obj, '.');
                const char *sl = strrchr(user_obj, '/');
                depfile = dot && (!sl || dot > sl) ? xsprintf("%.*s.d", (int)(dot - user_obj), user_obj)
                                                   : xsprintf("%s.d", user_obj);
            } else {
                depfile = xsprintf("%s.d", stem);
            }
            vec_push(&cmd, "-MF");
            vec_push(&cmd, depfile);
            for (int k = 0; k < o.dep_targets.len; k++) {
                vec_push(&cmd, "-MT");
                vec_push(&cmd, o.dep_targets.items[k]);
            }
            if (!o.dep_targets.len) {
                deptarget = (o.compile_only || o.assemble) ? xstrdup(user_obj) : xsprintf("%s.o", stem);
                vec_push(&cmd, "-MT");
                vec_push(&cmd, deptarget);
            }
            if (o.dep_phony)
                vec_push(&cmd, "-MP");
        }
        vec_push(&cmd, o.preprocess || dep_only ? "-E" : o.assemble ? "-S" : "-c");
        vec_push(&cmd, (void *)src);
        if (strcmp(obj, "-") && !dep_only) {
            vec_push(&cmd, "-o");
            vec_push(&cmd, obj);
        }
        rc = dr__run(&o, &cmd);
        vec_free(&cmd);
        if (!rc && depfile && !o.dry && (host || dep_to_out))
            rc = dr__fix_depfile(depfile, src, in, dep_to_out ? obj : NULL);
        if (!rc && final_obj) {
            Vec rcmd = {0};
            vec_push(&rcmd, (void *)dr__cc());
            vec_push(&rcmd, "-r");
            vec_push(&rcmd, obj);
            vec_push(&rcmd, objs.items[objs.len - 1]); /* the device object */
            vec_push(&rcmd, "-o");
            vec_push(&rcmd, final_obj);
            rc = dr__run(&o, &rcmd);
            vec_free(&rcmd);
            free(obj);
            obj = final_obj;
        }
        free(depfile);
        free(deptarget);
        if (o.preprocess || dep_only || o.assemble)
            free(obj);
        else {
            vec_push(&objs, obj);
            vec_push(&owned, obj);
        }
        free(host);
        free(cuda);
        free(srcdir);
        free(stem);
    }
    if (!rc && !no_link && o.mpi && access(rtmpi, R_OK) != 0) {
        fprintf(stderr, "macc: error: %s not found: macc was built without MPI (install an MPI compiler "
                        "wrapper, mpicc, and rebuild)\n", rtmpi);
        rc = 1;
    }
    /* the device link: every object's and library's relocatable device code
     * into one image per architecture (nvcc -dlink), linked beside them */
    char *dlink = NULL;
    if (!rc && !no_link && linked_cuda && nvcc) {
        dlink = xsprintf("%s/macc-dlink.o", tmpdir);
        Vec cmd = {0};
        vec_push(&cmd, nvcc);
        /* the --cuda-arch target: every object has its code (a file's
         * if_device archs beside it are not linked; docs/DRIVER.md) */
        vec_push(&cmd, arch);
        vec_push(&cmd, "-dlink");
        /* position-independent: the object may go into a shared library
         * (-shared) as into a PIE */
        vec_push(&cmd, "-Xcompiler=-fPIC");
        for (int k = 0; k < objs.len; k++) {
            const char *f = objs.items[k];
            size_t fl = strlen(f);
            if (!(fl > 3 && !strcmp(f + fl - 3, ".so")) && !strstr(f, ".so."))
                vec_push(&cmd, (void *)f);
        }
        for (int k = 0; k < o.ldflags.len; k++) {
            const char *f = o.ldflags.items[k];
            if (!strcmp(f, "-L") || !strcmp(f, "-l")) {
                if (k + 1 < o.ldflags.len) {
                    vec_push(&cmd, (void *)f);
                    vec_push(&cmd, o.ldflags.items[++k]);
                }
            } else if (!strncmp(f, "-L", 2) || !strncmp(f, "-l", 2)) {
                vec_push(&cmd, (void *)f);
            }
        }
        vec_push(&cmd, "-o");
        vec_push(&cmd, dlink);
        rc = dr__run(&o, &cmd);
        vec_free(&cmd);
        if (rc)
            fprintf(stderr, "macc: error: the device link failed: a kernel uses a device function or declare "
                            "target variable that no file defines in a declare target directive\n");
    }
    if (!rc && !no_link) {
        Vec cmd = {0};
        dr__cc_command(&o, &cmd);
        dr__push_all(&cmd, &objs);
        if (dlink)
            vec_push(&cmd, dlink);
        char *cudaL = NULL, *cudaR = NULL;
        /* the MPI module before libmaccrt.a, which it calls; its CUDA part
         * (weak references from the module) whenever the GPU plugin is linked */
        if (o.mpi) {
            if (linked_cuda && access(rtmpicuda, R_OK) == 0) {
                vec_push(&cmd, "-Wl,--whole-archive");
                vec_push(&cmd, rtmpicuda);
                vec_push(&cmd, "-Wl,--no-whole-archive");
            }
            vec_push(&cmd, rtmpi);
        }
        /* the plugin before libmaccrt.a: the archive resolves what the
         * plugin needs even when the user's objects call nothing of it */
        if (linked_cuda) {
            vec_push(&cmd, "-Wl,--whole-archive");
            vec_push(&cmd, rtcuda);
            vec_push(&cmd, "-Wl,--no-whole-archive");
            /* the plugin sees the program's frees: a host registration kept
             * past synchronisation points (MACC_CUDA_PIN_KEEP, the default)
             * ends before its memory goes back to the C library or the
             * kernel */
            vec_push(&cmd, "-Wl,--wrap=free");
            vec_push(&cmd, "-Wl,--wrap=realloc");
            vec_push(&cmd, "-Wl,--wrap=munmap");
            /* --pinned: the plugin also sees the program's allocations, and
             * page-locks the large ones (runtime/cuda.c) */
            if (o.pinned) {
                vec_push(&cmd, "-Wl,--wrap=malloc");
                vec_push(&cmd, "-Wl,--wrap=calloc");
                vec_push(&cmd, "-Wl,--wrap=aligned_alloc");
                vec_push(&cmd, "-Wl,--wrap=posix_memalign");
            }
        }
        vec_push(&cmd, rtlib);
        if (linked_cuda) {
            cudaL = xsprintf("-L%s", cudalib);
            vec_push(&cmd, cudaL);
            /* relocatable device code's runtime (a static library: linked
             * only if the device code calls it) */
            char *devrt = xsprintf("%s/libcudadevrt.a", cudalib);
            if (access(devrt, R_OK) == 0)
                vec_push(&cmd, "-lcudadevrt");
            free(devrt);
            if (cudart_static) {
                vec_push(&cmd, "-lcudart_static");
            } else {
                cudaR = xsprintf("-Wl,-rpath,%s", cudalib);
                vec_push(&cmd, "-lcudart");
                vec_push(&cmd, cudaR);
            }
            vec_push(&cmd, "-lrt");
            /* only when something (a user's .cu, a C++ object) needs it */
            vec_push(&cmd, "-Wl,--push-state,--as-needed");
            vec_push(&cmd, "-lstdc++");
            vec_push(&cmd, "-Wl,--pop-state");
        }
        dr__push_all(&cmd, &o.ldflags);
        vec_push(&cmd, "-lpthread");
        vec_push(&cmd, "-ldl");
        vec_push(&cmd, "-lm");
        vec_push(&cmd, "-o");
        vec_push(&cmd, (void *)(o.output ? o.output : "a.out"));
        rc = dr__run(&o, &cmd);
        vec_free(&cmd);
        free(cudaL);
        free(cudaR);
    }
    for (int i = 0; i < owned.len; i++)
        free(owned.items[i]);
    vec_free(&owned);
    free(dlink);
    vec_free(&objs);
cleanup:
    if (tmpdir && o.keep)
        fprintf(stderr, "macc: kept temporary files in %s\n", tmpdir);
    else if (tmpdir)
        dr__rm_rf(tmpdir);
    free(tmpdir);
    free(incdir);
    free(rtlib);
    free(rtcuda);
    free(rtmpi);
    free(rtmpicuda);
    free(nvcc);
    free(cudalib);
    free(arch);
out:
    for (int i = 0; i < o.cflags.len; i++)
        free(o.cflags.items[i]);
    for (int i = 0; i < o.ldflags.len; i++)
        free(o.ldflags.items[i]);
    vec_free(&o.cflags);
    vec_free(&o.ldflags);
    vec_free(&o.dep_targets);
    vec_free(&o.xnvcc);
    vec_free(&o.xhost);
    vec_free(&o.inputs);
    return rc;
}
