/* translate.c: one input file to its outputs. Outputs are written to a
 * temporary in the output directory and renamed, so a failed translation
 * leaves nothing behind, and the input is never written. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macc.h"
#include "macc_rt.h"

int translate_needed(const char *text)
{
    if (strstr(text, "_Pragma"))
        return 1;
    for (const char *p = text; (p = strstr(p, "pragma")) != NULL; p += 6) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t')
            q++;
        if (!strncmp(q, "omp", 3) || !strncmp(q, "acc", 3))
            return 1;
    }
    return 0;
}

/* A region whose GPU version cannot be built (a construct inside it that
 * kernels do not run: taskloop, task reductions, scope, ...) runs on the host,
 * as OpenMP's host fallback does, with a warning naming the reason; unless
 * the user asked for a GPU (device(nvidia), an if_device(nvidia) or
 * metadirective GPU variant): then it stays an error (reported when the
 * device file is written). */
static void tr__gpu_fallbacks(Unit *u)
{
    for (int i = 0; i < u->regions.len; i++) {
        Region *r = u->regions.items[i];
        int asked = r->device == MACC_DEVICE_NVIDIA || r->ifdevs.len > 0;
        if (!region_gpu_version(r) || asked)
            continue;
        char *why = NULL;
        if (emit_cuda_probe(u, r, &why))
            continue;
        if (!why || (!strstr(why, "not supported") && !strstr(why, "needs a variable name") &&
                     !strstr(why, "canonical"))) {
            free(why); /* invalid code (a malformed atomic, ...): the error stays */
            continue;
        }
        diag_warning(u->diag, r->target->start, "the GPU version of this region cannot be built (%s): it runs on the host",
                     why ? why : "unsupported construct");
        free(why);
        int k = 0;
        for (int j = 0; j < r->nversions; j++)
            if (r->versions[j].kind != MACC_DEV_NVIDIA)
                r->versions[k++] = r->versions[j];
        r->nversions = k;
        for (int j = 0; j < r->nversions; j++)
            r->versions[j].fallback = 0; /* the host version is the region's one version now */
    }
}

static int tr__run(Source *src, FILE *diag_out, Buf *out, Buf *cuda, const char *display, int info,
                   int managed, const TranslateOptions *opt)
{
    if (display)
        source_set_path(src, display);
    Diag diag;
    diag_init(&diag, src);
    if (diag_out)
        diag.out = diag_out;
    Unit *u = parse_unit(src, &diag);
    if (!u) {
        fprintf(diag.out, "macc: fatal error: cannot create the C parser\n");
        return 1;
    }
    u->info = info;
    Source *split = NULL;
    size_t splen = 0;
    char *sptext = diag.errors ? NULL : acc_split_kernels(u, &splen);
    if (sptext) {
        /* kernels constructs of several statements, rewritten: parse that */
        split = source_from_string(src->path, sptext, splen);
        free(sptext);
        int m = u->managed;
        unit_delete(u);
        diag.src = split;
        u = parse_unit(split, &diag);
        if (!u) {
            fprintf(diag.out, "macc: fatal error: cannot create the C parser\n");
            source_delete(split);
            return 1;
        }
        u->info = info;
        u->managed = u->managed || m;
    }
    u->managed = managed || u->managed; /* --managed, or omp requires unified_shared_memory */
    if (opt) {
        u->macros_fn = opt->macros;
        u->macros_cx = opt->macros_cx;
    }
    analyze_unit(u);
    if (!diag.errors && cuda)
        tr__gpu_fallbacks(u);
    if (!diag.errors)
        emit_host(u, out, src->path);
    if (!diag.errors && cuda)
        emit_cuda(u, cuda, src->path);
    unit_delete(u);
    source_delete(split);
    return diag.errors;
}

int translate_string(const char *name, const char *text, Buf *out, FILE *diag_out)
{
    Source *src = source_from_string(name, text, strlen(text));
    int n = tr__run(src, diag_out, out, NULL, NULL, 0, 0, NULL);
    source_delete(src);
    return n;
}

static char *tr__stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return xstrndup(base, n);
}

static int tr__write(const char *path, const Buf *b, FILE *diag_out)
{
    char *tmp = xsprintf("%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        fprintf(diag_out, "macc: error: cannot write '%s': %s\n", path, strerror(errno));
        free(tmp);
        return 1;
    }
    size_t n = fwrite(b->data, 1, b->len, f);
    int bad = n != b->len || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad || rename(tmp, path) != 0) {
        fprintf(diag_out, "macc: error: cannot write '%s': %s\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}

int translate_file(const char *path, const TranslateOptions *opt, char **host_out, char **cuda_out)
{
    FILE *dout = opt->diag_out ? opt->diag_out : stderr;
    Source *src = source_read(path);
    if (!src) {
        fprintf(dout, "macc: fatal error: %s: %s\n", path, strerror(errno));
        return 1;
    }
    Buf out = {0}, cuda = {0};
    int errors = tr__run(src, dout, &out, opt->host_only ? NULL : &cuda, opt->display, opt->info, opt->managed, opt);
    if (errors) {
        source_delete(src);
        buf_free(&out);
        buf_free(&cuda);
        return 1;
    }
    const char *dir = opt->outdir && *opt->outdir ? opt->outdir : ".";
    char *stem = opt->stem ? xstrdup(opt->stem) : tr__stem(path);
    char *outpath = xsprintf("%s/%s.host.c", dir, stem);
    char *cudapath = cuda.len ? xsprintf("%s/%s.cuda.cu", dir, stem) : NULL;
    free(stem);
    /* never write over the input */
    char in_real[PATH_MAX], out_real[PATH_MAX];
    int rc = 0;
    if (((realpath(path, in_real) && realpath(outpath, out_real) && strcmp(in_real, out_real) == 0)) ||
        (opt->display && realpath(opt->display, in_real) && realpath(outpath, out_real) &&
         strcmp(in_real, out_real) == 0)) {
        fprintf(dout, "macc: error: output '%s' would overwrite the input\n", outpath);
        rc = 1;
    } else {
        rc = tr__write(outpath, &out, dout);
        if (rc == 0 && cudapath && tr__write(cudapath, &cuda, dout) != 0) {
            unlink(outpath);
            rc = 1;
        }
    }
    if (rc == 0 && host_out)
        *host_out = outpath;
    else
        free(outpath);
    if (rc == 0 && cuda_out)
        *cuda_out = cudapath;
    else
        free(cudapath);
    buf_free(&out);
    buf_free(&cuda);
    source_delete(src);
    return rc;
}
