/* fuzz_translate.c: libFuzzer target for the whole translator.
 *
 * Every input is a C file ("fuzz.c"). It is translated twice, in memory only
 * (nothing is written to disk; diagnostics go to /dev/null):
 *   1. translate_string, as the tests do (host file only);
 *   2. the steps of translate_file (translator/translate.c, tr__run) done here:
 *      source_from_string (line markers of preprocessed text included), parse_unit,
 *      analyze_unit, then emit_host and emit_cuda when there is no error.
 * 3. the same with --managed (Unit.managed): no more errors than without.
 * Checks: both runs report the same number of errors up to emit_host and, when
 * there is none, the same host file (output is deterministic); every output buffer is
 * NUL-terminated at its length.
 * Build and run: sh tests/fuzz/run.sh BUILD SECONDS.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_translate: invariant failed: %s (%s:%d)\n", #cond,     \
                    __FILE__, __LINE__);                                                 \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    devnull = fopen("/dev/null", "w");
    if (!devnull) {
        perror("fuzz_translate: /dev/null");
        abort();
    }
    return 0;
}

static void check_buf(const Buf *b)
{
    if (b->data) {
        CHECK(b->len <= b->cap);
        CHECK(b->data[b->len] == '\0');
    } else {
        CHECK(b->len == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    /* 1. as the tests call it */
    Buf out1 = {0};
    int err1 = translate_string("fuzz.c", text, &out1, devnull);
    CHECK(err1 >= 0);
    check_buf(&out1);

    /* 2. as translate_file does, host and device files, in memory */
    Buf host = {0}, cuda = {0};
    int err2 = -1; /* errors before emit_cuda, as translate_string counts them */
    Source *src = source_from_string("fuzz.c", text, strlen(text));
    CHECK(src != NULL);
    CHECK(src->text != NULL && src->text[src->len] == '\0');
    CHECK(src->ptext != NULL && src->ptext[src->len] == '\0');
    Diag diag;
    diag_init(&diag, src);
    diag.out = devnull;
    Unit *u = parse_unit(src, &diag);
    int parsed = u != NULL;
    if (parsed) {
        analyze_unit(u);
        if (!diag.errors)
            emit_host(u, &host, "fuzz.c");
        err2 = diag.errors;
        if (!diag.errors) {
            int cerr = emit_cuda(u, &cuda, "fuzz.c");
            CHECK(cerr >= 0);
        }
        unit_delete(u);
    }
    source_delete(src);
    check_buf(&host);
    check_buf(&cuda);

    /* 3. with --managed (allocation calls rewritten, unmapped pointers
     * allowed): never more errors than without */
    Buf mhost = {0}, mcuda = {0};
    src = source_from_string("fuzz.c", text, strlen(text));
    CHECK(src != NULL);
    diag_init(&diag, src);
    diag.out = devnull;
    u = parse_unit(src, &diag);
    if (u) {
        u->managed = 1;
        analyze_unit(u);
        int err3 = diag.errors; /* before emit_cuda, as err2 */
        if (!diag.errors) {
            emit_host(u, &mhost, "fuzz.c");
            CHECK(emit_cuda(u, &mcuda, "fuzz.c") >= 0);
        }
        if (parsed)
            CHECK(err3 <= err2);
        unit_delete(u);
    }
    source_delete(src);
    check_buf(&mhost);
    check_buf(&mcuda);
    buf_free(&mhost);
    buf_free(&mcuda);

    if (parsed) {
        CHECK(err1 == err2);
        if (err1 == 0) {
            CHECK(out1.len == host.len);
            CHECK(out1.len == 0 || memcmp(out1.data, host.data, out1.len) == 0);
        }
    }

    buf_free(&out1);
    buf_free(&host);
    buf_free(&cuda);
    free(text);
    return 0;
}
