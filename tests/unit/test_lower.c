/* Unit tests of the C-to-C++ lowering (lower_cxx.c), the macro expander for
 * foreign pragmas (macro.c) and casts decided by declarations (parse.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "macc.h"

static char *lower(const char *s)
{
    Buf b = {0};
    lower_cxx(s, strlen(s), &b);
    return b.data ? b.data : xstrdup("");
}

Test(lower, keywords_renamed_in_declarations_and_uses)
{
    char *o = lower("struct s { int new; double class; };\nint f(struct s *this) { int or = this->new; return or; }\n");
    cr_assert_str_eq(o, "struct s { int macc_kw_new; double macc_kw_class; };\n"
                        "int f(struct s *macc_kw_this) { int macc_kw_or = macc_kw_this->macc_kw_new; return macc_kw_or; }\n");
    free(o);
}

Test(lower, strings_comments_and_preprocessor_lines_untouched)
{
    char *o = lower("#line 3 \"new.c\"\nchar *s = \"new or class\"; /* new */ // this\nint template_x = 'n';\n");
    cr_assert_str_eq(o, "#line 3 \"new.c\"\nchar *s = \"new or class\"; /* new */ // this\nint template_x = 'n';\n");
    free(o);
}

Test(lower, c11_keywords_as_cxx)
{
    char *o = lower("_Bool b; _Static_assert(1, \"x\"); int a = _Alignof(double); _Noreturn void f(void);\n");
    cr_assert_str_eq(o, "bool b; static_assert(1, \"x\"); int a = alignof(double);  void f(void);\n");
    free(o);
}

Test(lower, identifiers_that_contain_keywords_and_numbers)
{
    char *o = lower("int newer = 1e+10 + 0x1fULL; x.new_ = not_eq2;\n");
    cr_assert_str_eq(o, "int newer = 1e+10 + 0x1fULL; x.new_ = not_eq2;\n");
    free(o);
}

Test(macro, object_and_function_like_rescanned)
{
    MacroTable *t = macros_parse("#define NTD 4\n#define TWICE(x) (2 * (x))\n#define N TWICE(NTD)\n"
                                 "#define SELF SELF + 1\n#define STR(x) #x\n#define V(...) f(__VA_ARGS__)\n");
    char *e = macros_expand(t, "(N) SELF TWICE (NTD + 1) TWICE STR(a) V(1, 2)");
    cr_assert_str_eq(e, "((2 * (4))) SELF + 1 (2 * (4 + 1)) TWICE STR(a) f(1, 2)");
    free(e);
    macros_delete(t);
}

Test(macro, last_definition_wins)
{
    MacroTable *t = macros_parse("#define A 1\n#define B A\n#define A 2\n");
    char *e = macros_expand(t, "B");
    cr_assert_str_eq(e, "2");
    free(e);
    macros_delete(t);
}

static char *translated(const char *text)
{
    Buf out = {0};
    FILE *err = tmpfile();
    int n = translate_string("t.c", text, &out, err);
    fclose(err);
    cr_assert_eq(n, 0);
    return out.data;
}

Test(casts, parenthesised_variable_is_an_expression)
{
    /* (x[(i)]) - e with x a variable: x is captured (mapped), not a type */
    char *h = translated("typedef double real;\n"
                         "void f(double *x, double *z, double s, int n) {\n"
                         "#pragma omp target teams distribute parallel for map(to: x[0:n]) map(from: z[0:n])\n"
                         "  for (int i = 0; i < n; i++) z[i] = (x[(i)]) - s * (real)(x[i]) + (s);\n"
                         "}\n");
    cr_assert_not_null(strstr(h, " x[(i)]  - s * (real) x[i]  + (s);"), "%s", h);
    free(h);
}

Test(casts, parenthesised_function_is_a_call)
{
    char *h = translated("static double g(double v) { return v; }\n"
                         "void f(double *z, int n) {\n"
                         "#pragma omp target teams distribute parallel for map(from: z[0:n])\n"
                         "  for (int i = 0; i < n; i++) z[i] = (g)(i);\n"
                         "}\n");
    cr_assert_not_null(strstr(h, "z[i] =  g (i);"), "%s", h);
    free(h);
}

Test(lower, storage_and_parameter_qualifiers_c_only)
{
    char *o = lower("double f(const double a[static 4], double b[restrict], double c[const static 2]) { register int i = 0; return a[i]; }\n");
    cr_assert_str_eq(o, "double f(const double a[ 4], double b[], double c[  2]) {  int i = 0; return a[i]; }\n");
    free(o);
}

Test(lower, complex_types_and_imaginary_constants)
{
    char *o = lower("double _Complex z = 1.0 + 2.0i; _Complex float f = 1.0iF; long double _Complex l; __complex__ double g;\n");
    cr_assert_str_eq(o, "macc_complex<double> z = 1.0 + macc_complex<double>(0, 2.0); macc_complex<float> f = "
                        "macc_complex<float>(0, 1.0f); macc_complex<long double> l; macc_complex<double> g;\n");
    free(o);
}

Test(lower, emitter_cxx_words_kept)
{
    char *o = lower("if macc_cxx_constexpr (x) typedef macc_cxx_typename T::type y; int typename_;\n");
    cr_assert_str_eq(o, "if constexpr (x) typedef typename T::type y; int typename_;\n");
    free(o);
}
