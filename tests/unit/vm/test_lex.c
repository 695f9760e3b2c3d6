/* test_lex.c: unit tests of vm_lex.c: tokens, numerals, string escapes, long strings and
 * comments, line counting, and lexical errors with their line and column. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_lex.h"
#include "vm_string.h"

static State *S;

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* A lexer over a C string, with its error landing pad. */
typedef struct LexFix {
    Lexer ls;
    CompileError err;
    jmp_buf jb;
} LexFix;

static LexFix fx;

static void start(const char *src) {
    vm_lex_init(&fx.ls, S, src, strlen(src), &fx.err, &fx.jb);
}

/* Kinds of all tokens of [src] into [out] (up to max, TK_EOS included); -1 on an error. */
static int lex_all(const char *src, int *out, int max) {
    volatile int n = 0; /* modified between setjmp and a possible longjmp */
    start(src);
    if (setjmp(fx.jb)) return -1;
    do {
        vm_lex_next(&fx.ls);
        if (n < max) out[n] = fx.ls.t.kind;
        n++;
    } while (fx.ls.t.kind != TK_EOS);
    return n;
}

/* The first token of [src] (must lex without error). */
static Token first_token(const char *src) {
    start(src);
    if (setjmp(fx.jb)) fail_msg("unexpected lexer error: %s", fx.err.msg);
    vm_lex_next(&fx.ls);
    return fx.ls.t;
}

/* Lex [src] to the end expecting an error; returns its message. */
static const char *lex_error(const char *src) {
    int kinds[64];
    if (lex_all(src, kinds, 64) != -1) fail_msg("no error for: %s", src);
    return fx.err.msg;
}

static void assert_string_token(const char *src, const char *bytes, size_t len) {
    Token t = first_token(src);
    assert_int_equal(t.kind, TK_STRING);
    assert_int_equal(t.v.s->len, len);
    assert_memory_equal(t.v.s->data, bytes, len);
}

/* ---- tokens ---- */

static void test_vm_lex_next_symbols(void **state) {
    (void)state;
    int k[64];
    int n = lex_all("// .. ... == >= <= ~= << >> :: + - * / % ^ # & ~ | < > = ( ) { } [ ] ; : , .", k, 64);
    int want[] = {TK_IDIV, TK_CONCAT, TK_DOTS, TK_EQ, TK_GE, TK_LE, TK_NE, TK_SHL, TK_SHR, TK_DBCOLON,
                  '+', '-', '*', '/', '%', '^', '#', '&', '~', '|', '<', '>', '=', '(', ')', '{', '}',
                  '[', ']', ';', ':', ',', '.', TK_EOS};
    assert_int_equal(n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < n; i++) assert_int_equal(k[i], want[i]);
}

static void test_vm_lex_next_keywords_and_names(void **state) {
    (void)state;
    int k[32];
    int n = lex_all("and break do else elseif end false for function goto if in local nil not or "
                    "repeat return then true until while _x9 While", k, 32);
    assert_int_equal(n, 25);
    for (int i = 0; i < 22; i++) assert_int_equal(k[i], TK_AND + i);
    assert_int_equal(k[22], TK_NAME);
    assert_int_equal(k[23], TK_NAME);
    assert_int_equal(k[24], TK_EOS);
    Token t = first_token("  _x9 ");
    assert_int_equal(t.v.s->len, 3);
    assert_memory_equal(t.v.s->data, "_x9", 3);
    assert_int_equal(t.col, 3);
}

static void test_vm_lex_next_lines_and_columns(void **state) {
    (void)state;
    start("a\n  b\r\n\tc\n\rd -- comment\n--[[ long\ncomment ]] e");
    if (setjmp(fx.jb)) fail();
    int lines[] = {1, 2, 3, 4, 6}, cols[] = {1, 3, 2, 1, 12};
    for (int i = 0; i < 5; i++) {
        vm_lex_next(&fx.ls);
        assert_int_equal(fx.ls.t.kind, TK_NAME);
        assert_int_equal(fx.ls.t.line, lines[i]);
        assert_int_equal(fx.ls.t.col, cols[i]);
    }
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.kind, TK_EOS);
}

static void test_vm_lex_skip_first_line_shebang(void **state) {
    (void)state;
    const char *src = "\xEF\xBB\xBF#!/usr/bin/lua\nx";
    vm_lex_init(&fx.ls, S, src, strlen(src), &fx.err, &fx.jb);
    if (setjmp(fx.jb)) fail();
    vm_lex_skip_first_line(&fx.ls);
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.kind, TK_NAME);
    assert_int_equal(fx.ls.t.line, 2);
    /* without the skip, '#' is the length operator */
    Token t = first_token("#!x");
    assert_int_equal(t.kind, '#');
}

static void test_vm_lex_lookahead_keeps_current(void **state) {
    (void)state;
    start("a = 1");
    if (setjmp(fx.jb)) fail();
    vm_lex_next(&fx.ls);
    assert_int_equal(vm_lex_lookahead(&fx.ls), '=');
    assert_int_equal(fx.ls.t.kind, TK_NAME);
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.kind, '=');
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.kind, TK_INT);
}

/* ---- numerals ---- */

static void assert_int_token(const char *src, vm_Integer v) {
    Token t = first_token(src);
    assert_int_equal(t.kind, TK_INT);
    assert_true(t.v.i == v);
}

static void assert_flt_token(const char *src, double v) {
    Token t = first_token(src);
    assert_int_equal(t.kind, TK_FLT);
    assert_true(t.v.n == v);
}

static void test_vm_lex_next_integers(void **state) {
    (void)state;
    assert_int_token("0", 0);
    assert_int_token("42", 42);
    assert_int_token("0xff", 255);
    assert_int_token("0XA", 10);
    assert_int_token("9223372036854775807", INT64_MAX);
    assert_int_token("0x7fffffffffffffff", INT64_MAX);
    assert_int_token("0xffffffffffffffff", -1);          /* hex wraps around */
    assert_int_token("0x10000000000000000", 0);          /* ... modulo 2^64 */
}

static void test_vm_lex_next_floats(void **state) {
    (void)state;
    assert_flt_token("9223372036854775808", 9223372036854775808.0); /* decimal overflow: float */
    assert_flt_token("1e2", 100.0);
    assert_flt_token("1E-2", 0.01);
    assert_flt_token("3.", 3.0);
    assert_flt_token(".5", 0.5);
    assert_flt_token("2.5e+1", 25.0);
    assert_flt_token("0x1p4", 16.0);
    assert_flt_token("0x.8", 0.5);
    assert_flt_token("0xA.8p1", 21.0);
    Token t = first_token("1.5");
    assert_string_equal(t.text, "1.5");
}

static void test_vm_lex_next_malformed_numbers(void **state) {
    (void)state;
    assert_string_equal(lex_error("x = 3x"), "malformed number near '3x'");
    assert_int_equal(fx.err.line, 1);
    assert_int_equal(fx.err.col, 5);
    assert_string_equal(lex_error("0x"), "malformed number near '0x'");
    assert_string_equal(lex_error("1e"), "malformed number near '1e'");
    assert_string_equal(lex_error("1..2"), "malformed number near '1..2'");
    assert_string_equal(lex_error("3.4.5"), "malformed number near '3.4.5'");
    assert_string_equal(lex_error("12abc"), "malformed number near '12abc'");
}

/* ---- strings ---- */

static void test_vm_lex_next_simple_escapes(void **state) {
    (void)state;
    assert_string_token("'\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\''", "\a\b\f\n\r\t\v\\\"'", 10);
    assert_string_token("\"it's\"", "it's", 4);
    assert_string_token("'say \"hi\"'", "say \"hi\"", 8);
}

static void test_vm_lex_next_numeric_escapes(void **state) {
    (void)state;
    assert_string_token("'\\x41\\x6a'", "Aj", 2);
    assert_string_token("'\\65\\0669\\255'", "AB9\xff", 4);
    assert_string_token("'\\0'", "\0", 1);
    assert_string_token("'\\u{48}\\u{e9}\\u{20AC}'", "H\xc3\xa9\xe2\x82\xac", 6);
    assert_string_token("'\\u{10FFFF}'", "\xf4\x8f\xbf\xbf", 4);
    assert_string_token("'\\u{7FFFFFFF}'", "\xfd\xbf\xbf\xbf\xbf\xbf", 6);
}

static void test_vm_lex_next_line_escapes(void **state) {
    (void)state;
    assert_string_token("'a\\\nb'", "a\nb", 3);
    assert_string_token("'a\\\r\nb'", "a\nb", 3);
    assert_string_token("'a\\z  \n\t  b'", "ab", 2);
    start("'a\\z\n\n b' x");
    if (setjmp(fx.jb)) fail();
    vm_lex_next(&fx.ls);
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.line, 3);
}

static void test_vm_lex_next_escape_errors(void **state) {
    (void)state;
    assert_string_equal(lex_error("x = \"\\q\""), "invalid escape sequence near '\"\\q'");
    assert_int_equal(fx.err.col, 5);
    assert_string_equal(lex_error("'\\xg'"), "hexadecimal digit expected near ''\\xg'");
    assert_string_equal(lex_error("'\\x5'"), "hexadecimal digit expected near ''\\x5''");
    assert_string_equal(lex_error("'\\300'"), "decimal escape too large near ''\\300''");
    assert_string_equal(lex_error("'\\u123'"), "missing '{' near ''\\u1'");
    assert_string_equal(lex_error("'\\u{12'"), "missing '}' near ''\\u{12''");
    assert_string_equal(lex_error("'\\u{110000000}'"), "UTF-8 value too large near ''\\u{110000000'");
    assert_string_equal(lex_error("'\\u{}'"), "hexadecimal digit expected near ''\\u{}'");
}

static void test_vm_lex_next_unfinished_strings(void **state) {
    (void)state;
    assert_string_equal(lex_error("x = \"abc"), "unfinished string near <eof>");
    assert_string_equal(lex_error("x = \"abc\ndef\""), "unfinished string near '\"abc'");
    assert_int_equal(fx.err.line, 1);
    assert_int_equal(fx.err.col, 5);
    assert_string_equal(lex_error("'abc\\"), "unfinished string near <eof>");
}

static void test_vm_lex_next_long_strings(void **state) {
    (void)state;
    assert_string_token("[[abc]]", "abc", 3);
    assert_string_token("[[\nabc]]", "abc", 3);               /* first newline skipped */
    assert_string_token("[[\r\n\nabc]]", "\nabc", 4);
    assert_string_token("[==[a]]b]=]c]==]", "a]]b]=]c", 8);
    assert_string_token("[[a\r\nb]]", "a\nb", 3);              /* newlines normalised */
    start("[[\nx\ny]] z");
    if (setjmp(fx.jb)) fail();
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.line, 3);
    vm_lex_next(&fx.ls);
    assert_int_equal(fx.ls.t.kind, TK_NAME);
    assert_int_equal(fx.ls.t.line, 3);
}

static void test_vm_lex_next_long_errors(void **state) {
    (void)state;
    assert_string_equal(lex_error("x = [==[ abc\n\n"), "unfinished long string (starting at line 1) near <eof>");
    assert_int_equal(fx.err.line, 3);
    assert_string_equal(lex_error("\n--[[ abc\n"), "unfinished long comment (starting at line 2) near <eof>");
    assert_int_equal(fx.err.line, 3);
    assert_string_equal(lex_error("x = [=x"), "invalid long string delimiter near '[='");
}

static void test_vm_lex_next_comments(void **state) {
    (void)state;
    int k[8];
    assert_int_equal(lex_all("--[==[ ]] ]==] a --[ not long\n b --\n", k, 8), 3);
    assert_int_equal(k[0], TK_NAME);
    assert_int_equal(k[1], TK_NAME);
}

/* vm_lex_error shows the current token as Lua does: source text quoted for names,
 * strings and numerals, the symbol quoted for the others, <eof> unquoted. */
static const char *error_at_token(const char *src, int skip) {
    start(src);
    if (setjmp(fx.jb)) return fx.err.msg;
    for (int i = 0; i <= skip; i++) vm_lex_next(&fx.ls);
    vm_lex_error(&fx.ls, "oops", true);
    return NULL;
}

static void test_vm_lex_error_near_tokens(void **state) {
    (void)state;
    const char *src = "x 'a\\65' 0x1F end == \1\n  ";
    assert_string_equal(error_at_token(src, 0), "oops near 'x'");
    assert_string_equal(error_at_token(src, 1), "oops near ''aA''");
    assert_int_equal(fx.err.col, 3);
    assert_string_equal(error_at_token(src, 2), "oops near '0x1F'");
    assert_string_equal(error_at_token(src, 3), "oops near 'end'");
    assert_string_equal(error_at_token(src, 4), "oops near '=='");
    assert_string_equal(error_at_token(src, 5), "oops near '<\\1>'");
    assert_string_equal(error_at_token(src, 6), "oops near <eof>");
    assert_int_equal(fx.err.line, 2);
    assert_int_equal(fx.err.col, 3);
}

static void test_vm_lex_token2str_forms(void **state) {
    (void)state;
    char b[32];
    assert_string_equal(vm_lex_token2str('+', b, sizeof b), "'+'");
    assert_string_equal(vm_lex_token2str(1, b, sizeof b), "'<\\1>'");
    assert_string_equal(vm_lex_token2str(TK_END, b, sizeof b), "'end'");
    assert_string_equal(vm_lex_token2str(TK_DOTS, b, sizeof b), "'...'");
    assert_string_equal(vm_lex_token2str(TK_EOS, b, sizeof b), "<eof>");
    assert_string_equal(vm_lex_token2str(TK_NAME, b, sizeof b), "<name>");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_lex_next_symbols),
        cmocka_unit_test(test_vm_lex_next_keywords_and_names),
        cmocka_unit_test(test_vm_lex_next_lines_and_columns),
        cmocka_unit_test(test_vm_lex_skip_first_line_shebang),
        cmocka_unit_test(test_vm_lex_lookahead_keeps_current),
        cmocka_unit_test(test_vm_lex_next_integers),
        cmocka_unit_test(test_vm_lex_next_floats),
        cmocka_unit_test(test_vm_lex_next_malformed_numbers),
        cmocka_unit_test(test_vm_lex_next_simple_escapes),
        cmocka_unit_test(test_vm_lex_next_numeric_escapes),
        cmocka_unit_test(test_vm_lex_next_line_escapes),
        cmocka_unit_test(test_vm_lex_next_escape_errors),
        cmocka_unit_test(test_vm_lex_next_unfinished_strings),
        cmocka_unit_test(test_vm_lex_next_long_strings),
        cmocka_unit_test(test_vm_lex_next_long_errors),
        cmocka_unit_test(test_vm_lex_next_comments),
        cmocka_unit_test(test_vm_lex_error_near_tokens),
        cmocka_unit_test(test_vm_lex_token2str_forms),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
