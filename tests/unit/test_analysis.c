/* Unit tests of the translator's region analysis and host emitter: small
 * inputs translated in memory, the analysis results and the output checked. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"
#include "macc_rt.h"

/* Parses and analyses `text`; returns the unit (errors in *nerr). */
static Unit *analyse(const char *text, int *nerr, Source **src, Diag *diag, FILE **errf)
{
    *src = source_from_string("t.c", text, strlen(text));
    diag_init(diag, *src);
    *errf = tmpfile();
    diag->out = *errf;
    Unit *u = parse_unit(*src, diag);
    cr_assert_not_null(u);
    analyze_unit(u);
    *nerr = diag->errors;
    return u;
}

static char *diag_text(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
        s[0] = 0;
    return s;
}

#define ANALYSE(text)                                                                                                  \
    Source *src;                                                                                                       \
    Diag diag;                                                                                                         \
    FILE *errf;                                                                                                        \
    int nerr;                                                                                                          \
    Unit *u = analyse(text, &nerr, &src, &diag, &errf)

#define DONE()                                                                                                         \
    do {                                                                                                               \
        unit_delete(u);                                                                                                \
        source_delete(src);                                                                                            \
        fclose(errf);                                                                                                  \
    } while (0)

static Capture *cap(Region *r, const char *name)
{
    for (int i = 0; i < r->caps.len; i++) {
        Capture *c = r->caps.items[i];
        if (!strcmp(c->name, name))
            return c;
    }
    return NULL;
}

static const char *nbody =
    "#include <math.h>\n"
    "void step(int n, int BS, float dt, float *x, float *y, float *z, float *vx, float *vy, float *vz) {\n"
    "  for (int k = 0; k < n; k += BS) {\n"
    "    #pragma omp target device(any) map(tofrom: vx[k:BS], vy[k:BS], vz[k:BS]) map(to: x[0:n], y[0:n], z[0:n]) nowait\n"
    "    #pragma omp if_device(nvidia, cc35) teams distribute parallel for resources(2)\n"
    "    #pragma omp if_device(host) parallel for resources(40)\n"
    "    for (int i = k; i < k + BS; ++i) {\n"
    "      float Fx = 0.0f, Fy = 0.0f, Fz = 0.0f;\n"
    "      #pragma omp simd reduction(+:Fx,Fy,Fz)\n"
    "      for (int j = 0; j < n; j++) {\n"
    "        float dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];\n"
    "        float d = 1.0f / sqrtf(dx*dx + dy*dy + dz*dz + 1e-9f);\n"
    "        Fx += dx * d; Fy += dy * d; Fz += dz * d;\n"
    "      }\n"
    "      vx[i] += dt * Fx; vy[i] += dt * Fy; vz[i] += dt * Fz;\n"
    "    }\n"
    "  }\n"
    "  #pragma omp taskwait\n"
    "}\n";

Test(analysis, nbody_region)
{
    ANALYSE(nbody);
    cr_assert_eq(nerr, 0);
    cr_assert_eq(u->regions.len, 1);
    Region *r = u->regions.items[0];
    cr_assert_str_eq(r->name, "macc_k_step_L4");
    cr_assert_eq(r->line, 4);
    cr_assert(r->nowait);
    cr_assert_eq(r->device, MACC_DEVICE_ANY);
    cr_assert_eq(r->nversions, 2);
    cr_assert_eq(r->versions[0].kind, MACC_DEV_NVIDIA);
    cr_assert_eq(r->versions[0].min_cc, 35);
    cr_assert_eq(r->versions[0].resources, 2);
    cr_assert_eq(r->versions[1].kind, MACC_DEV_HOST);
    cr_assert_eq(r->versions[1].resources, 40);
    cr_assert_eq(r->versions[1].cs, CS_PARALLEL_FOR);
    cr_assert_eq(r->maps.len, 6);
    RMap *m0 = r->maps.items[0];
    cr_assert_str_eq(m0->name, "vx");
    cr_assert_eq(m0->kind, MACC_MAP_TOFROM);
    cr_assert_str_eq(m0->start, "(void *)&(vx)[k]");
    cr_assert_str_eq(m0->bytes, "(MACC_SIZE_T)(BS) * sizeof((vx)[k])");
    cr_assert_eq(((RMap *)r->maps.items[3])->kind, MACC_MAP_TO);
    /* captures: n, BS? (not used inside), dt scalars; x..vz pointers; k scalar */
    cr_assert_eq(cap(r, "n")->kind, CAP_SCALAR);
    cr_assert_eq(cap(r, "dt")->kind, CAP_SCALAR);
    cr_assert_eq(cap(r, "k")->kind, CAP_SCALAR);
    cr_assert_eq(cap(r, "vx")->kind, CAP_PTR);
    cr_assert_eq(cap(r, "vx")->map, 0);
    cr_assert_eq(cap(r, "x")->map, 3);
    cr_assert(cap(r, "vx")->written);
    cr_assert_null(cap(r, "Fx"));  /* declared inside */
    cr_assert_null(cap(r, "sqrtf"));
    cr_assert_eq(u->datas.len, 1); /* the taskwait */
    DONE();
}

Test(analysis, nbody_host_output)
{
    Buf out = {0};
    FILE *errf = tmpfile();
    cr_assert_eq(translate_string("nbody.c", nbody, &out, errf), 0);
    cr_assert_not_null(strstr(out.data, "#pragma omp parallel for num_threads(macc_env_->nthreads)"));
    cr_assert_not_null(strstr(out.data, "#pragma omp simd reduction(+: Fx, Fy, Fz)"));
    cr_assert_not_null(strstr(out.data, "float *vx = macc_env_->ptrs[0];"));
    cr_assert_not_null(strstr(out.data, "{MACC_DEV_HOST, 0, 40, 0, macc_h_step_L4}"));
    cr_assert_not_null(strstr(out.data, "{MACC_DEV_NVIDIA, 35, 2, 0, macc_k_step_L4_nvidia}"));
    cr_assert_not_null(strstr(out.data, "MACC_NOWAIT, MACC_DEVICE_ANY, 1);"));
    cr_assert_not_null(strstr(out.data, "MACC_taskwait(&macc_l_);"));
    cr_assert_not_null(strstr(out.data, "#line 1 \"nbody.c\""));
    /* the user's text after the region keeps its line */
    cr_assert_not_null(strstr(out.data, "#line 16 \"nbody.c\""));
    buf_free(&out);
    fclose(errf);
}

Test(analysis, reduction_writeback_and_private_loop_var)
{
    ANALYSE("double dot(int n, double *a, double *b) {\n"
            "  double s = 0; int i;\n"
            "  #pragma omp target teams distribute parallel for reduction(+: s) map(to: a[0:n], b[0:n])\n"
            "  for (i = 0; i < n; i++) s += a[i] * b[i];\n"
            "  return s;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(cap(r, "s")->kind, CAP_WRITEBACK);
    cr_assert_eq(cap(r, "i")->kind, CAP_PRIVATE);
    RMap *m = r->maps.items[cap(r, "s")->map];
    cr_assert_eq(m->kind, MACC_MAP_TOFROM);
    cr_assert_str_eq(m->start, "(void *)&(s)");
    /* no if_device lines: both kinds, host not a fallback */
    cr_assert_eq(r->nversions, 2);
    cr_assert_eq(r->versions[1].kind, MACC_DEV_HOST);
    cr_assert_eq(r->versions[1].fallback, 0);
    cr_assert_eq(r->versions[1].cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    DONE();
}

Test(analysis, static_arrays_mapped_whole)
{
    ANALYSE("#define N 64\n"
            "double g[N];\n"
            "void f(void) {\n"
            "  double a[N][N];\n"
            "  #pragma omp target teams distribute parallel for collapse(2)\n"
            "  for (int i = 0; i < N; i++)\n"
            "    for (int j = 0; j < N; j++)\n"
            "      a[i][j] = g[j];\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->collapse, 2);
    cr_assert_eq(r->nest_depth, 2);
    Capture *a = cap(r, "a");
    cr_assert_eq(a->kind, CAP_ARRAY);
    RMap *ma = r->maps.items[a->map];
    cr_assert(ma->implicit);
    cr_assert_eq(ma->kind, MACC_MAP_TOFROM);
    cr_assert_str_eq(ma->bytes, "sizeof(a)");
    cr_assert_eq(cap(r, "g")->kind, CAP_ARRAY); /* a global array: mapped and rebound too */
    int found = 0;
    for (int i = 0; i < r->maps.len; i++)
        if (!strcmp(((RMap *)r->maps.items[i])->name, "g")) {
            found = 1;
            cr_assert_eq(((RMap *)r->maps.items[i])->kind, MACC_MAP_TO);
        }
    cr_assert(found);
    DONE();
}

Test(analysis, defaultmap_categories)
{
    ANALYSE("typedef struct { int a; } S;\n"
            "void f(int n, double *p) {\n"
            "  int w = 0, r = 1; S st; double arr[4]; double fa[4];\n"
            "  #pragma omp target defaultmap(tofrom: scalar) defaultmap(from: aggregate) defaultmap(firstprivate: pointer)\n"
            "  { w = r; st.a = 1; arr[0] = p[0]; }\n"
            "  #pragma omp target defaultmap(firstprivate: aggregate)\n"
            "  { fa[0] = 1; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(cap(r, "w")->kind, CAP_WRITEBACK);
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "w")->map])->kind, MACC_MAP_TOFROM);
    cr_assert_eq(cap(r, "r")->kind, CAP_SCALAR); /* only read: firstprivate */
    cr_assert_eq(cap(r, "st")->kind, CAP_WRITEBACK); /* a struct through a typedef: aggregate */
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "st")->map])->kind, MACC_MAP_FROM);
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "arr")->map])->kind, MACC_MAP_FROM);
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "p")->map])->kind, MACC_MAP_ATTACH); /* no error */
    Region *r2 = u->regions.items[1];
    Capture *fa = cap(r2, "fa");
    cr_assert(fa->target_fp);
    cr_assert_eq(((RMap *)r2->maps.items[fa->map])->kind, MACC_MAP_TO);
    DONE();
}

Test(analysis, defaultmap_none_and_bad_behavior)
{
    ANALYSE("void f(int n, double *p) {\n"
            "  double k = 2;\n"
            "  #pragma omp target teams distribute parallel for defaultmap(none) map(tofrom: p[0:n]) firstprivate(n)\n"
            "  for (int i = 0; i < n; i++) p[i] *= k;\n"
            "  #pragma omp target defaultmap(maybe: scalar) map(tofrom: p[0:n])\n"
            "  p[0] = 1;\n"
            "}\n");
    cr_assert_eq(nerr, 2);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "'k' is used in the target region but no data-sharing or map clause names it"));
    cr_assert_null(strstr(msg, "'i' is used"));
    cr_assert_not_null(strstr(msg, "defaultmap(maybe: scalar): expected"));
    free(msg);
    DONE();
}

Test(analysis, private_arrays)
{
    ANALYSE("void f(int n, int m, int *out) {\n"
            "  int t[4] = {0}; int l[2]; int v[m];\n"
            "  #pragma omp target teams distribute parallel for firstprivate(t) lastprivate(l) map(from: out[0:n])\n"
            "  for (int i = 0; i < n; i++) { l[0] = t[i % 4]; out[i] = l[0]; }\n"
            "  #pragma omp target teams distribute parallel for firstprivate(v) map(from: out[0:n])\n"
            "  for (int i = 0; i < n; i++) out[i] = v[0];\n"
            "}\n");
    cr_assert_eq(nerr, 1);
    Region *r = u->regions.items[0];
    cr_assert_eq(cap(r, "t")->kind, CAP_ARRAY);
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "t")->map])->kind, MACC_MAP_TO); /* firstprivate everywhere */
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "l")->map])->kind, MACC_MAP_TOFROM);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "firstprivate array 'v' has a variable length"));
    free(msg);
    /* the host version holds arrays again, copied in and out */
    Buf out = {0};
    emit_host(u, &out, "t.c");
    cr_assert_not_null(strstr(out.data, "    int t[4];\n    __builtin_memcpy(t, macc_env_->ptrs["));
    cr_assert_not_null(strstr(out.data, "firstprivate(t) lastprivate(l)"));
    cr_assert_not_null(strstr(out.data, "__builtin_memcpy(macc_env_->ptrs[1], l, sizeof l);"));
    buf_free(&out);
    DONE();
}

Test(analysis, atomic_in_kernels)
{
    ANALYSE("void f(int n, int *h) {\n"
            "  int c = 0; double d = 0;\n"
            "  #pragma omp target teams distribute parallel for map(tofrom: c, d, h[0:8])\n"
            "  for (int i = 0; i < n; i++) {\n"
            "    int mine = 0, v;\n"
            "    #pragma omp atomic\n"
            "    h[i % 8] += 2;\n"
            "    #pragma omp atomic capture\n"
            "    v = c++;\n"
            "    #pragma omp atomic\n"
            "    d = d * 0.5;\n"
            "    #pragma omp atomic\n"
            "    mine++;\n"
            "    #pragma omp critical (name)\n"
            "    h[0] += v + mine;\n"
            "  }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Buf out = {0};
    cr_assert_eq(emit_cuda(u, &out, "t.c"), 0);
    cr_assert_not_null(strstr(out.data, "(void)macc_atomic_fetch<MACC_A_ADD>(&(h[i % 8]), (2));"));
    cr_assert_not_null(strstr(out.data, "(v) = macc_atomic_fetch<MACC_A_ADD>(&((*macc_p_c)), macc_e_);"));
    cr_assert_not_null(strstr(out.data, "(void)macc_atomic_fetch<MACC_A_MUL>(&((*macc_p_d)), (0.5));"));
    cr_assert_not_null(strstr(out.data, "    mine++;")); /* the thread's own variable: the plain statement */
    cr_assert_not_null(strstr(out.data, "macc_critical_enter(macc_lk_)"));
    cr_assert_null(strstr(out.data, "#pragma omp atomic"));
    buf_free(&out);
    DONE();
}

Test(analysis, unmapped_pointer_is_an_implicit_attach_map)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target parallel for\n"
            "  for (int i = 0; i < n; i++) p[i] = 0;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->maps.len, 1);
    RMap *m = r->maps.items[0];
    cr_assert_str_eq(m->name, "p");
    cr_assert(m->kind & MACC_MAP_ATTACH);
    cr_assert_str_eq(m->bytes, "0");
    DONE();
}

Test(analysis, data_region_covers_pointer)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma acc data copy(p[0:n])\n"
            "  {\n"
            "    #pragma omp target parallel for\n"
            "    for (int i = 0; i < n; i++) p[i] = 0;\n"
            "  }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    RMap *m = r->maps.items[cap(r, "p")->map];
    cr_assert_eq(m->kind, MACC_MAP_ATTACH);
    DataConstruct *d = u->datas.items[0];
    cr_assert_eq(((RMap *)d->maps.items[0])->kind, MACC_MAP_TOFROM);
    DONE();
}

Test(analysis, collapse_deeper_than_nest)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target teams distribute parallel for collapse(3) map(p[0:n*n])\n"
            "  for (int i = 0; i < n; i++)\n"
            "    for (int j = 0; j < n; j++) p[i*n+j] = 0;\n"
            "}\n");
    cr_assert_eq(nerr, 1);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "t.c:2:"));
    cr_assert_not_null(strstr(msg, "collapse(3)"));
    free(msg);
    DONE();
}

Test(analysis, if_device_without_target)
{
    ANALYSE("void f(int n) {\n"
            "  #pragma omp if_device(host) parallel for\n"
            "  for (int i = 0; i < n; i++) ;\n"
            "}\n");
    cr_assert_eq(nerr, 1);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "t.c:2:"));
    cr_assert_not_null(strstr(msg, "if_device"));
    free(msg);
    DONE();
}

Test(analysis, target_without_statement)
{
    ANALYSE("void f(void) {\n"
            "  int x = 0; (void)x;\n"
            "  #pragma omp target\n"
            "}\n");
    cr_assert_eq(nerr, 1);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "t.c:3:"));
    cr_assert_not_null(strstr(msg, "no statement"));
    free(msg);
    DONE();
}

Test(analysis, only_nvidia_named_gets_host_fallback)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target device(any) map(tofrom: p[0:n])\n"
            "  #pragma omp if_device(nvidia) teams distribute parallel for\n"
            "  for (int i = 0; i < n; i++) p[i] += 1;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->nversions, 2);
    cr_assert_eq(r->versions[1].kind, MACC_DEV_HOST);
    cr_assert(r->versions[1].fallback);
    DONE();
}

Test(analysis, depend_sections)
{
    ANALYSE("void f(int nb, int bs, double *c) {\n"
            "  for (int b = 0; b < nb; b++) {\n"
            "    #pragma omp target nowait map(tofrom: c[b*bs:bs]) depend(inout: c[b*bs:bs]) depend(in: nb)\n"
            "    for (int i = 0; i < bs; i++) c[b*bs+i] *= 2;\n"
            "  }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->deps.len, 2);
    RDep *d = r->deps.items[0];
    cr_assert_eq(d->kind, MACC_DEP_INOUT);
    cr_assert_str_eq(d->addr, "(void *)&(c)[b*bs]");
    cr_assert_str_eq(((RDep *)r->deps.items[1])->addr, "(void *)&(nb)");
    DONE();
}

Test(analysis, multidim_section_and_struct_scalar)
{
    ANALYSE("typedef struct { int n; double w; } P;\n"
            "void f(P prm, double (*a)[8], int i) {\n"
            "  #pragma omp target map(tofrom: a[i][0:8])\n"
            "  { for (int j = 0; j < prm.n; j++) a[i][j] *= prm.w; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    RMap *m = r->maps.items[0];
    cr_assert_str_eq(m->start, "(void *)&(a)[i][0]");
    cr_assert_str_eq(m->bytes, "(MACC_SIZE_T)(8) * sizeof((a)[i][0])");
    cr_assert_eq(cap(r, "prm")->kind, CAP_SCALAR);
    cr_assert_str_eq(cap(r, "prm")->decl->spec, "P");
    cr_assert_eq(cap(r, "a")->kind, CAP_PTR);
    DONE();
}

Test(analysis, syntax_error_in_function_with_region)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target parallel for map(p[0:n])\n"
            "  for (int i = 0; i < n; i++) p[i] = ;\n"
            "}\n");
    cr_assert_geq(nerr, 1);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "syntax error"));
    free(msg);
    DONE();
}

Test(analysis, generated_names_distinct_for_same_line)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target map(p[0:n])\n"
            "  p[0] = 1;\n"
            "}\n"
            "void g(int n, float *p) {\n"
            "  #pragma omp target map(p[0:n])\n"
            "  p[0] = 2;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_str_eq(((Region *)u->regions.items[0])->name, "macc_k_f_L2");
    cr_assert_str_eq(((Region *)u->regions.items[1])->name, "macc_k_g_L6");
    DONE();
}

Test(analysis, use_device_ptr_and_addr)
{
    ANALYSE("struct S { int v; };\n"
            "void f(int n, float *p, struct S q) {\n"
            "  float a[8], x = 0;\n"
            "  #pragma omp target data map(p[0:n]) use_device_ptr(p, a) use_device_addr(x, q)\n"
            "  { p[0] = a[0] + x + q.v; }\n"
            "  #pragma omp target is_device_ptr(p) has_device_addr(x)\n"
            "  p[0] = x;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    DataConstruct *d = u->datas.items[0];
    cr_assert_eq(d->usedev.len, 4);
    const char *names[] = {"p", "a", "x", "q"};
    int addr[] = {0, 1, 1, 1}; /* a non-pointer in use_device_ptr is use_device_addr */
    for (int i = 0; i < 4; i++) {
        UseDev *x = d->usedev.items[i];
        cr_assert_str_eq(x->name, names[i]);
        cr_assert_eq(x->addr, addr[i], "%s", names[i]);
    }
    Region *r = u->regions.items[0];
    cr_assert_eq(cap(r, "p")->kind, CAP_PTR);
    cr_assert_eq(((RMap *)r->maps.items[cap(r, "p")->map])->kind, MACC_MAP_DEVICEPTR);
    cr_assert_eq(cap(r, "x")->kind, CAP_WRITEBACK);
    RMap *mx = r->maps.items[cap(r, "x")->map];
    cr_assert_eq(mx->kind, MACC_MAP_DEVICEPTR);
    cr_assert_str_eq(mx->base, "(void *)&(x)");
    Buf out = {0};
    emit_host(u, &out, "t.c");
    /* the body names the device's copies; members and strings are left alone */
    cr_assert_not_null(strstr(out.data, "{ p[0] = (*macc_uda_a)[0] + (*macc_uda_x) + (*macc_uda_q).v; }"), "%s", out.data);
    cr_assert_not_null(strstr(out.data, "__typeof__(macc_udp_p) p = macc_udp_p;"));
    buf_free(&out);
    DONE();
}

Test(analysis, translate_needed)
{
    cr_assert(translate_needed("#pragma omp target\n"));
    cr_assert(translate_needed("# pragma acc data\n"));
    cr_assert(translate_needed("_Pragma(\"omp target\")"));
    cr_assert_not(translate_needed("#pragma once\nint x;\n"));
    cr_assert_not(translate_needed("int main(void) { return 0; }\n"));
}

Test(source, line_markers_map_to_original_files)
{
    const char *text = "# 0 \"main.c\"\n"                  /* line 0 */
                       "# 1 \"/usr/include/stdio.h\" 1 3 4\n" /* 1 */
                       "typedef unsigned long size_t;\n"     /* 2: stdio.h:1 */
                       "# 2 \"main.c\" 2\n"                   /* 3 */
                       "# 1 \"inc/my.h\" 1\n"                 /* 4 */
                       "int g;\n"                            /* 5: my.h:1 */
                       "# 3 \"main.c\" 2\n"                   /* 6 */
                       "int main(void)\n"                    /* 7: main.c:3 */
                       "{ return g; }\n";                    /* 8: main.c:4 */
    Source *s = source_from_string("main.c", text, strlen(text));
    int line, col;
    cr_assert(s->has_markers);
    source_position(s, s->lines[2] + 8, &line, &col);
    cr_assert_eq(line, 1);
    cr_assert_eq(col, 9);
    cr_assert_str_eq(source_file(s, s->lines[2]), "/usr/include/stdio.h");
    cr_assert(source_in_system(s, s->lines[2]));
    source_position(s, s->lines[5], &line, &col);
    cr_assert_eq(line, 1);
    cr_assert_str_eq(source_file(s, s->lines[5]), "inc/my.h");
    cr_assert(!source_in_system(s, s->lines[5]));
    cr_assert(source_file_is(s, s->lines[5], "my.h"));
    source_position(s, s->lines[8], &line, &col);
    cr_assert_eq(line, 4);
    cr_assert_str_eq(source_file(s, s->lines[8]), "main.c");
    /* the parser reads the markers as blank lines */
    cr_assert_eq(s->ptext[s->lines[1]], ' ');
    cr_assert_eq(s->text[s->lines[1]], '#');
    cr_assert_eq(s->ptext[s->lines[2]], 't');
    source_delete(s);
}

Test(source, no_markers_lines_are_their_own)
{
    const char *text = "int a;\n#pragma omp taskwait\nint b;\n";
    Source *s = source_from_string("m.c", text, strlen(text));
    int line, col;
    cr_assert(!s->has_markers);
    source_position(s, s->lines[2] + 4, &line, &col);
    cr_assert_eq(line, 3);
    cr_assert_eq(col, 5);
    cr_assert_str_eq(source_file(s, 0), "m.c");
    cr_assert_str_eq(s->ptext, text);
    source_set_path(s, "shown.c");
    cr_assert_str_eq(source_file(s, 0), "shown.c");
    source_delete(s);
}

Test(source, hash_line_directive_and_escaped_names)
{
    const char *text = "#line 40 \"dir/q\\\"x.c\"\nint a;\n";
    Source *s = source_from_string("m.c", text, strlen(text));
    int line, col;
    source_position(s, s->lines[1], &line, &col);
    cr_assert_eq(line, 40);
    cr_assert_str_eq(source_file(s, s->lines[1]), "dir/q\"x.c");
    cr_assert_str_eq(source_cfile(s, s->lines[1]), "dir/q\\\"x.c");
    source_delete(s);
}

/* ---- declare target ---------------------------------------------------------------------- */

static const DeclTarget *dt(const Unit *u, const char *name)
{
    return an_declare_target(u, name);
}

Test(analysis, declare_target_names)
{
    ANALYSE("#pragma omp declare target\n"
            "int a[8], b = 1;\n"
            "double f(double v) { return v; }\n"
            "  #pragma omp begin declare target device_type(nohost)\n"
            "  int g(void);\n"
            "  #pragma omp end declare target\n"
            "#pragma omp end declare target\n"
            "int l; int e;\n"
            "#pragma omp declare target link(l) enter(e) device_type(host) indirect\n"
            "#pragma omp declare target(f)\n"
            "int outside;\n");
    cr_assert_eq(nerr, 0);
    cr_assert_not_null(dt(u, "a"));
    cr_assert_not_null(dt(u, "b"));
    cr_assert_eq(dt(u, "f")->device_type, DEVTYPE_ANY, "the last directive naming f");
    cr_assert_eq(dt(u, "g")->device_type, DEVTYPE_NOHOST, "the innermost block");
    cr_assert(dt(u, "l")->link);
    cr_assert(!dt(u, "e")->link);
    cr_assert_eq(dt(u, "e")->device_type, DEVTYPE_HOST);
    cr_assert(dt(u, "e")->indirect);
    cr_assert_null(dt(u, "outside"));
    /* no region with a GPU version: a device file still, for other files'
     * kernels (the declare target variables and functions, not device_type(host)'s) */
    cr_assert_eq(u->devvars.len, 2);
    cr_assert_not_null(an_devvar(u, "a"));
    cr_assert_not_null(an_devvar(u, "b"));
    cr_assert_null(an_devvar(u, "e"));
    cr_assert_eq(u->devfuncs.len, 1);
    cr_assert_str_eq(u->devfuncs.items[0], "f");
    DONE();
}

/* Declare target globals are not captured: the host version uses the
 * variable, the kernel its device copy; a firstprivate, a private loop
 * variable and a mapped one keep their data-sharing; a non declare target
 * global array is still mapped; globals that device functions use get device
 * copies (those outside any directive with a warning, as link). */
Test(analysis, declare_target_globals_in_regions)
{
    ANALYSE("int g = 1, i;\n"
            "double t[4];\n"
            "int m;\n"
            "#pragma omp declare target enter(g, i, t, m)\n"
            "double plain[4];\n"
            "int other;\n"
            "int uses_other(void) { return other; }\n"
            "static int unused_dt(void) { return 2; }\n"
            "#pragma omp declare target(unused_dt)\n"
            "void f(void) {\n"
            "  #pragma omp target map(tofrom: m) firstprivate(g)\n"
            "  { for (i = 0; i < 4; i++) t[i] = g + plain[i] + m + uses_other(); }\n"
            "  #pragma omp target\n"
            "  { g = 2; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_null(cap(r, "t"), "declare target: not captured");
    cr_assert_eq(cap(r, "g")->kind, CAP_SCALAR, "firstprivate(g)");
    cr_assert_eq(cap(r, "i")->kind, CAP_PRIVATE, "a loop variable");
    cr_assert_eq(cap(r, "m")->kind, CAP_WRITEBACK, "map(tofrom: m): through the map");
    cr_assert_eq(cap(r, "plain")->kind, CAP_ARRAY);
    cr_assert_null(cap((Region *)u->regions.items[1], "g"));
    const char *names[] = {"g", "i", "t", "m", "other"};
    cr_assert_eq(u->devvars.len, 5);
    for (int k = 0; k < 5; k++)
        cr_assert_str_eq(((DevVar *)u->devvars.items[k])->name, names[k], "file order");
    const DevVar *o = an_devvar(u, "other");
    cr_assert(o->implicit && o->link);
    cr_assert(!an_devvar(u, "g")->link);
    cr_assert_null(an_devvar(u, "plain"), "used only by the region: mapped");
    int have_unused = 0, have_uses = 0;
    for (int k = 0; k < u->devfuncs.len; k++) {
        have_unused |= !strcmp(u->devfuncs.items[k], "unused_dt");
        have_uses |= !strcmp(u->devfuncs.items[k], "uses_other");
    }
    cr_assert(have_unused, "a declare target function no region calls");
    cr_assert(have_uses);
    cr_assert_eq(diag.warnings, 1);
    char *msg = diag_text(errf);
    cr_assert(strstr(msg, "'other' is used on the GPU by 'uses_other' but is in no declare target directive"), "%s",
              msg);
    free(msg);
    cr_assert(!strncmp(u->dt_key, "macc_dt_", 8));
    DONE();
}

/* A variable declared extern here: its device copy starts as the host's
 * bytes; a declare target variable defined here but not used on the device
 * still gets one (maps and updates reach it). */
Test(analysis, declare_target_extern_and_unused)
{
    ANALYSE("extern int ext;\n"
            "int here[3] = {1, 2, 3};\n"
            "#pragma omp declare target(ext, here)\n"
            "void f(int *p) {\n"
            "  #pragma omp target map(tofrom: p[0:1])\n"
            "  p[0] = ext;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(u->devvars.len, 2);
    cr_assert(an_devvar(u, "ext")->init_from_host);
    cr_assert(!an_devvar(u, "here")->init_from_host);
    cr_assert(!ts_node_is_null(an_devvar(u, "here")->init));
    DONE();
}

/* A declare target global named in a version's private or firstprivate
 * clause is the region's own copy (captured, per thread on the GPU); one no
 * clause names is the device copy; defaultmap does not change that. */
Test(analysis, declare_target_with_version_privates)
{
    ANALYSE("double t[4];\n"
            "int g;\n"
            "#pragma omp declare target enter(t, g)\n"
            "void f(int n) {\n"
            "  #pragma omp target teams distribute parallel for private(t) firstprivate(n) defaultmap(none)\n"
            "  for (int i = 0; i < n; i++) { t[0] = i; g += (int)t[0]; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_not_null(cap(r, "t"), "private(t): the region's copy");
    cr_assert_null(cap(r, "g"), "declare target: the device copy");
    DONE();
}

/* Directives nested on their own lines make the combined construct. */
Test(analysis, nested_directives_combine)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target map(tofrom: p[0:n]) if(n > 0)\n"
            "  {\n"
            "    #pragma omp teams num_teams(4)\n"
            "    #pragma omp distribute parallel for collapse(1) if(n > 9)\n"
            "    for (int i = 0; i < n; i++) p[i] = 0;\n"
            "  }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(u->regions.len, 1);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->versions[0].cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    cr_assert(node_is(r->stmt, "for_statement"));
    cr_assert(node_is(r->span, "compound_statement")); /* the host call replaces the braces too */
    cr_assert_str_eq(r->if_expr, "n > 0");            /* the nested parallel's if is not the region's */
    const Directive *d = r->versions[0].dir;
    cr_assert_not_null(directive_find(d, CL_NUM_TEAMS));
    cr_assert_eq(directive_find(d, CL_COLLAPSE)->ival, 1);
    cr_assert_str_eq(directive_find(d, CL_IF)->arg, "n > 0");
    for (int i = 0; i < u->pragmas.len; i++)
        cr_assert(((Pragma *)u->pragmas.items[i])->used);
    DONE();
}

Test(analysis, nested_parallel_for_and_loop)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target parallel map(tofrom: p[0:n])\n"
            "  #pragma omp for nowait\n"
            "  for (int i = 0; i < n; i++) p[i] = 0;\n"
            "  #pragma omp target teams map(tofrom: p[0:n])\n"
            "  #pragma omp loop\n"
            "  for (int i = 0; i < n; i++) p[i] = 1;\n"
            "  #pragma omp target map(tofrom: p[0:n])\n"
            "  #pragma omp loop\n"
            "  for (int i = 0; i < n; i++) p[i] = 2;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(u->regions.len, 3);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->versions[0].cs, CS_PARALLEL_FOR);
    cr_assert_null(directive_find(r->versions[0].dir, CL_NOWAIT)); /* the for's nowait is not the region's */
    cr_assert_eq(r->nowait, 0);
    r = u->regions.items[1];
    cr_assert_eq(r->versions[0].cs, CS_TEAMS | CS_LOOP | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    r = u->regions.items[2];
    cr_assert_eq(r->versions[0].cs, CS_LOOP | CS_PARALLEL_FOR);
    DONE();
}

Test(analysis, nested_not_combined)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target teams map(tofrom: p[0:n])\n"
            "  #pragma omp parallel for\n"
            "  for (int i = 0; i < n; i++) p[i] = 0;\n"
            "}\n");
    cr_assert_eq(nerr, 1);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "t.c:3:3: error: '#pragma omp parallel for' directly inside 'target teams'"));
    free(msg);
    DONE();
}

Test(analysis, nested_braces_with_more_stay_a_block)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target teams map(tofrom: p[0:n])\n"
            "  {\n"
            "    #pragma omp parallel for\n"
            "    for (int i = 0; i < n; i++) p[i] = 0;\n"
            "  }\n"
            "  #pragma omp target map(tofrom: p[0:n])\n"
            "  {\n"
            "    #pragma omp teams distribute parallel for\n"
            "    for (int i = 0; i < n; i++) p[i] = 0;\n"
            "    p[0] = 1;\n"
            "  }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert_eq(r->versions[0].cs, CS_TEAMS);
    cr_assert(node_is(r->stmt, "compound_statement"));
    r = u->regions.items[1];
    cr_assert_eq(r->versions[0].cs, 0);
    cr_assert(ts_node_eq(r->stmt, r->span));
    DONE();
}

Test(analysis, nested_duplicate_and_collapse_errors)
{
    ANALYSE("void f(int n, float *p) {\n"
            "  #pragma omp target thread_limit(64) map(tofrom: p[0:n])\n"
            "  #pragma omp teams thread_limit(32)\n"
            "  #pragma omp distribute\n"
            "  for (int i = 0; i < n; i++) p[i] = 0;\n"
            "  #pragma omp target map(tofrom: p[0:n])\n"
            "  #pragma omp parallel for collapse(2)\n"
            "  for (int i = 0; i < n; i++) p[i] = 0;\n"
            "}\n");
    cr_assert_eq(nerr, 2);
    char *msg = diag_text(errf);
    cr_assert_not_null(strstr(msg, "t.c:3:21: error: duplicate clause 'thread_limit'"));
    cr_assert_not_null(strstr(msg, "t.c:7:28: error: collapse(2) is deeper than the loop nest"));
    free(msg);
    DONE();
}

/* `#pragma omp atomic` as a loop's unbraced body, and a host construct right
 * after `target parallel`: the parse text gets braces, the region's statement
 * is the construct with its block. Without room for the brace (no blank before
 * the construct's line) the error says what to write. */
Test(analysis, directive_as_statement)
{
    ANALYSE("void f(int *c, int *r) {\n"
            "  #pragma omp target teams map(tofrom: c[:1])\n"
            "  for (int i = 0; i < 10; ++i)\n"
            "    #pragma omp atomic\n"
            "    c[0] += 1;\n"
            "  #pragma omp target parallel map(tofrom: r[:1])\n"
            "  #pragma omp single\n"
            "  { r[0] = 1; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(u->regions.len, 2);
    Region *r = u->regions.items[1];
    cr_assert(node_is(r->stmt, "compound_statement"));
    cr_assert_eq(src->text[ts_node_start_byte(r->stmt)], ' ', "the brace is in the parse text only");
    DONE();
}

Test(analysis, host_construct_after_target_without_room)
{
    /* no blank before the construct's line (GCC 13's and Clang's -E output):
     * the target line's last character makes room; its text is the user's */
    ANALYSE("void f(int *r) {\n"
            "#pragma omp target parallel map(tofrom: r[:1])\n"
            "#pragma omp single\n"
            "  { r[0] = 1; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(u->regions.len, 1);
    Region *r = u->regions.items[0];
    cr_assert(node_is(r->stmt, "compound_statement"));
    cr_assert_str_eq(r->target->text, "omp target parallel map(tofrom: r[:1])");
    cr_assert_eq(src->text[r->target->end - 1], '\n');
    DONE();
}

/* ---- OpenACC compute constructs ---------------------------------------- */

Test(analysis, acc_kernels_reduction_found)
{
    ANALYSE("double fmax(double, double); double fabs(double);\n"
            "void f(int n, double (*A)[64], double (*B)[64]) {\n"
            "  double err = 0.0, s = 0.0, t;\n"
            "#pragma acc kernels copyin(A[0:n]) copyout(B[0:n])\n"
            "  for (int j = 1; j < n; j++)\n"
            "    for (int i = 1; i < 63; i++) {\n"
            "      t = A[j][i - 1] + A[j][i + 1];\n"
            "      B[j][i] = 0.5 * t;\n"
            "      err = fmax(err, fabs(B[j][i] - A[j][i]));\n"
            "      s += t;\n"
            "    }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(diag.warnings, 0);
    Region *r = u->regions.items[0];
    const Directive *t = &r->target->dir;
    cr_assert_eq(t->cs, CS_TEAMS | CS_DISTRIBUTE | CS_PARALLEL_FOR);
    cr_assert(directive_lists(t, CL_REDUCTION, "err"));
    cr_assert(directive_lists(t, CL_REDUCTION, "s"));
    cr_assert(directive_lists(t, CL_PRIVATE, "t"));
    cr_assert_eq(cap(r, "err")->kind, CAP_WRITEBACK);
    DONE();
}

Test(analysis, acc_kernels_dependence_runs_seq)
{
    ANALYSE("void f(int n, float *a, float *b) {\n"
            "  float c = 0;\n"
            "#pragma acc kernels\n"
            "  for (int i = 1; i < n; i++) a[i] = a[i - 1] + b[i];\n"
            "#pragma acc kernels\n"
            "  for (int i = 1; i < n; i++) { b[i] = c; c = a[i]; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(diag.warnings, 2);
    char *msg = diag_text(errf);
    cr_assert(strstr(msg, "t.c:4:3: warning: loop at line 4 is not parallelised: 'a' is written as 'a[i]' and read as "
                          "'a[i-1]'"),
              "%s", msg);
    cr_assert(strstr(msg, "scalar 'c' is carried from one iteration to the next"), "%s", msg);
    free(msg);
    cr_assert_eq(((Region *)u->regions.items[0])->target->dir.cs, 0);
    cr_assert_eq(((Region *)u->regions.items[1])->target->dir.cs, 0);
    DONE();
}

/* acc loop independent inside kernels: parallel as asserted, its reduction
 * found (the tutorial's error = fmax(error, ...)), a scalar carried from one
 * iteration to the next warned as a race (not made sequential). */
Test(analysis, acc_kernels_independent_finds_reductions_and_warns_races)
{
    ANALYSE("double fmax(double, double);\n"
            "void f(int n, double *a, double *b) {\n"
            "  double e = 0, t = 0;\n"
            "#pragma acc kernels copy(a[0:n], b[0:n])\n"
            "#pragma acc loop independent\n"
            "  for (int i = 1; i < n; i++) { e = fmax(e, a[i]); a[i] = t; t = b[i] + t; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(diag.warnings, 1);
    char *msg = diag_text(errf);
    cr_assert(strstr(msg, "warning: 't' is written by every iteration of this parallel loop"), "%s", msg);
    free(msg);
    /* the acc loop line is the construct's loop: its decisions are the region's */
    const Directive *t = &((Region *)u->regions.items[0])->target->dir;
    cr_assert_neq(t->cs, 0);
    cr_assert(directive_lists(t, CL_REDUCTION, "e"));
    DONE();
}

Test(analysis, acc_parallel_loop_racing_scalar_warns)
{
    /* x: written before it is read in every iteration, private (NVHPC's
     * scalar privatisation); c: its value flows from one iteration to the
     * next, the iterations race; y: private by its clause */
    ANALYSE("void f(int n, float *a) {\n"
            "  float x = 0, y, c = 0;\n"
            "#pragma acc parallel loop copy(a[0:n])\n"
            "  for (int i = 0; i < n; i++) { x = a[i]; a[i] = 2 * x; }\n"
            "#pragma acc parallel loop copy(a[0:n]) private(y)\n"
            "  for (int i = 0; i < n; i++) { y = a[i]; a[i] = 2 * y; }\n"
            "#pragma acc parallel loop copy(a[0:n])\n"
            "  for (int i = 0; i < n; i++) { c = c + a[i]; a[i] = c; }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    cr_assert_eq(diag.warnings, 1);
    char *msg = diag_text(errf);
    cr_assert(strstr(msg, "t.c:8:33: warning: 'c' is written by every iteration of this parallel loop"), "%s", msg);
    free(msg);
    Region *r = u->regions.items[0];
    cr_assert(directive_lists(&r->target->dir, CL_PRIVATE, "x"));
    DONE();
}

Test(analysis, acc_serial_and_kernels_loops)
{
    ANALYSE("void f(int n, float *a, float s) {\n"
            "#pragma acc serial copy(a[0:n])\n"
            "  {\n"
            "#pragma acc loop\n"
            "    for (int i = 0; i < n; i++) a[i] += 1;\n"
            "    a[0] = 0;\n"
            "  }\n"
            "#pragma acc kernels copy(a[0:n])\n"
            "  {\n"
            "#pragma acc loop\n"
            "    for (int i = 0; i < n; i++) a[i] += s;\n"
            "    s = a[0];\n"
            "  }\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    int seen = 0;
    for (int i = 0; i < u->pragmas.len; i++) {
        Pragma *p = u->pragmas.items[i];
        if (p->dir.kind == DIR_LOOP && p->dir.acc) {
            cr_assert_eq(p->dir.cs, seen == 0 ? 0u : (unsigned)CS_LOOP); /* serial: seq; kernels: independent */
            seen++;
        }
    }
    cr_assert_eq(seen, 2);
    Region *k = u->regions.items[1];
    cr_assert_eq(cap(k, "s")->kind, CAP_WRITEBACK); /* kernels: a scalar it writes is copied back */
    DONE();
}

Test(analysis, acc_async_wait_dependences)
{
    ANALYSE("void f(int n, float *a) {\n"
            "#pragma acc parallel loop async(2) wait(1, 3) copy(a[0:n])\n"
            "  for (int i = 0; i < n; i++) a[i] += 1;\n"
            "}\n");
    cr_assert_eq(nerr, 0);
    Region *r = u->regions.items[0];
    cr_assert(r->nowait);
    cr_assert_eq(r->deps.len, 3);
    cr_assert_str_eq(((RDep *)r->deps.items[0])->addr, "MACC_acc_queue(2)");
    cr_assert_eq(((RDep *)r->deps.items[0])->kind, MACC_DEP_INOUT);
    cr_assert_str_eq(((RDep *)r->deps.items[2])->addr, "MACC_acc_queue( 3)");
    cr_assert_eq(((RDep *)r->deps.items[2])->kind, MACC_DEP_IN);
    cr_assert_eq(r->maps.len >= 1, 1);
    DONE();
}
