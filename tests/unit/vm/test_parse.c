/* test_parse.c: unit tests of the compiler (vm_parse.c, vm_code.c): instructions,
 * constants, locals and upvalues of the Protos it builds, and its syntax errors with their
 * positions. Every Proto compiled here must also pass the bytecode verifier. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_opcodes.h"
#include "vm_string.h"

static State *S;
static CompileError err;

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* ---- helpers ---- */

static Proto *compile(const char *src) {
    Proto *p = vm_compile(S, src, strlen(src), "=test", &err);
    if (p == NULL) fail_msg("compile error %d:%d: %s\nin: %s", err.line, err.col, err.msg, src);
    char why[256];
    if (vm_bytecode_verify(p, why, sizeof why) != NULL) {
        vm_bytecode_list(stderr, p);
        fail_msg("verifier: %s\nin: %s", why, src);
    }
    return p;
}

/* Compile expecting an error; returns its message (err holds line and column). */
static const char *compile_error(const char *src) {
    Proto *p = vm_compile(S, src, strlen(src), "=test", &err);
    if (p != NULL) fail_msg("no error for: %s", src);
    return err.msg;
}

static int count_op(const Proto *p, OpCode op) {
    int n = 0;
    for (int i = 0; i < p->ncode; i++) n += vm_op(p->code[i]) == op;
    return n;
}

/* Index of the first [op] at or after [from], -1 if none. */
static int find_op(const Proto *p, OpCode op, int from) {
    for (int i = from; i < p->ncode; i++)
        if (vm_op(p->code[i]) == op) return i;
    return -1;
}

static Instr instr_of(const Proto *p, OpCode op) {
    int i = find_op(p, op, 0);
    if (i < 0) {
        vm_bytecode_list(stderr, p);
        fail_msg("no %s", vm_opnames[op]);
    }
    return p->code[i];
}

static bool kstr_is(const Proto *p, unsigned k, const char *s) {
    return k < (unsigned)p->nk && p->k[k].tt == VT_STR && strcmp(p->k[k].u.s->data, s) == 0;
}

static bool str_is(const String *s, const char *c) { return s != NULL && strcmp(s->data, c) == 0; }

/* ---- locals, globals, constants ---- */

static void test_vm_compile_locals_in_registers(void **state) {
    (void)state;
    Proto *p = compile("local a, b, c = 1, 2.0, 'x'\ndo local d = c end\nlocal e");
    assert_int_equal(p->nlocvars, 5);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) assert_true(str_is(p->locvars[i].name, names[i]));
    Instr i0 = p->code[0], i1 = p->code[1], i2 = p->code[2];
    assert_int_equal(vm_op(i0), OP_LOADI);
    assert_int_equal(vm_a(i0), 0);
    assert_int_equal(vm_sbx(i0), 1);
    assert_int_equal(vm_op(i1), OP_LOADF);
    assert_int_equal(vm_a(i1), 1);
    assert_int_equal(vm_op(i2), OP_LOADK);
    assert_int_equal(vm_a(i2), 2);
    assert_true(kstr_is(p, vm_bx(i2), "x"));
    /* d lives in register 3 while active; e reuses register 3 after d is dead */
    Instr mv = instr_of(p, OP_MOVE);
    assert_int_equal(vm_a(mv), 3);
    assert_int_equal(vm_b(mv), 2);
    assert_int_equal(p->locvars[0].startpc, 3);
    assert_true(p->locvars[3].endpc <= p->locvars[4].startpc);
    assert_int_equal(p->locvars[4].endpc, p->ncode);
}

static void test_vm_compile_main_chunk_shape(void **state) {
    (void)state;
    Proto *p = compile("x = y");
    assert_int_equal(p->is_vararg, 1);
    assert_int_equal(p->numparams, 0);
    assert_int_equal(p->nupvals, 1);
    assert_true(str_is(p->upvals[0].name, "_ENV"));
    assert_int_equal(p->upvals[0].instack, 1);
    assert_int_equal(p->upvals[0].idx, 0);
    assert_true(str_is(p->source, "=test"));
    Instr g = instr_of(p, OP_GETTABUP);
    assert_true(kstr_is(p, vm_c(g), "y"));
    Instr s = instr_of(p, OP_SETTABUP);
    assert_int_equal(vm_a(s), 0);
    assert_true(kstr_is(p, vm_b(s), "x"));
    assert_int_equal(vm_k(s), 0);
    assert_int_equal(vm_c(s), vm_a(g));
    assert_int_equal(vm_op(p->code[p->ncode - 1]), OP_RETURN); /* vararg: never RETURN0 */
}

static void test_vm_compile_local_env(void **state) {
    (void)state;
    Proto *p = compile("local _ENV = {}\nx = 1\nreturn y");
    assert_int_equal(count_op(p, OP_GETTABUP) + count_op(p, OP_SETTABUP), 0);
    Instr s = instr_of(p, OP_SETFIELD);
    assert_int_equal(vm_a(s), 0);
    assert_int_equal(vm_k(s), 1);
    assert_true(kstr_is(p, vm_b(s), "x"));
    assert_int_equal(vm_b(instr_of(p, OP_GETFIELD)), 0);
}

static void test_vm_compile_constants_dedup(void **state) {
    (void)state;
    Proto *p = compile("local t = {}\nt.a = 'str'; t.b = 'str'; t.a = 1.5; t.b = 1.5\n"
                       "t.c = 100000000000; t.c = 100000000000.0; t.d = 100000000000");
    /* "a" "str" "b" 1.5 "c" 1e11 (int) 1e11 (float) "d" */
    assert_int_equal(p->nk, 8);
    int ints = 0, floats = 0;
    for (int i = 0; i < p->nk; i++) {
        ints += p->k[i].tt == VT_INT;
        floats += p->k[i].tt == VT_FLOAT;
    }
    assert_int_equal(ints, 1);
    assert_int_equal(floats, 2);
}

static void test_vm_compile_const_locals_fold(void **state) {
    (void)state;
    Proto *p = compile("local k <const> = 10\nlocal s <const> = 'hi'\nlocal x = k * 2 + 1\nreturn s, x");
    /* k and s take no register and no locvars entry: x is local 0 in register 0 */
    assert_int_equal(p->nlocvars, 1);
    assert_true(str_is(p->locvars[0].name, "x"));
    Instr i0 = p->code[0];
    assert_int_equal(vm_op(i0), OP_LOADI);
    assert_int_equal(vm_a(i0), 0);
    assert_int_equal(vm_sbx(i0), 21);
    assert_string_equal(compile_error("local k <const> = 10\nk = 2"), "attempt to assign to const variable 'k'");
    assert_int_equal(err.line, 2);
    assert_string_equal(compile_error("local t <const> = {}\nlocal function f() t = 1 end"),
                        "attempt to assign to const variable 't'");
    assert_string_equal(compile_error("local x <close>, y <close> = 1, 2"),
                        "multiple to-be-closed variables in local list");
    assert_string_equal(compile_error("local x <foo> = 1"), "unknown attribute 'foo'");
}

/* ---- specialised instructions ---- */

static void test_vm_compile_indexing_forms(void **state) {
    (void)state;
    Proto *p = compile("local t, k = ...\nt[1] = t[2]\nt.x = t.y\nt[k] = t[k]\nt[70000] = 1\nt[-1] = true");
    Instr gi = instr_of(p, OP_GETI);
    assert_int_equal(vm_b(gi), 0);
    assert_int_equal(vm_c(gi), 2);
    Instr si = instr_of(p, OP_SETI);
    assert_int_equal(vm_b(si), 1);
    assert_true(kstr_is(p, vm_c(instr_of(p, OP_GETFIELD)), "y"));
    assert_true(kstr_is(p, vm_b(instr_of(p, OP_SETFIELD)), "x"));
    assert_int_equal(count_op(p, OP_GETTABLE), 1);
    assert_int_equal(count_op(p, OP_SETTABLE), 3); /* t[k], t[70000], t[-1] */
    assert_int_equal(count_op(p, OP_SETI), 1);
}

static void test_vm_compile_arith_forms(void **state) {
    (void)state;
    Proto *p = compile("local a = ...\nlocal b = a + 1\nlocal c = a + -5\nlocal d = a + 40000");
    assert_int_equal(count_op(p, OP_ADDI), 2);
    int i = find_op(p, OP_ADDI, 0);
    assert_int_equal(vm_sc(p->code[i]), 1);
    assert_int_equal(vm_b(p->code[i]), 0);
    assert_int_equal(vm_a(p->code[i]), 1);
    i = find_op(p, OP_ADDI, i + 1);
    assert_int_equal(vm_sc(p->code[i]), -5);
    assert_int_equal(count_op(p, OP_ADDK), 1); /* 40000 does not fit sC */
}

static void test_vm_compile_arith_k_operands(void **state) {
    (void)state;
    Proto *p = compile("local a = ...\nlocal c = a + 1.5\nlocal d = a - 1\nlocal e = 1 + a\n"
                       "local f = a * 2\nlocal g = a & 0xff\nlocal h = a << 2\nlocal i = a + 100000");
    assert_int_equal(count_op(p, OP_ADDK), 2);   /* a + 1.5, a + 100000 */
    assert_int_equal(count_op(p, OP_SUBK), 1);   /* a - 1 keeps __sub semantics */
    assert_int_equal(count_op(p, OP_ADD), 1);    /* 1 + a: constant on the left */
    assert_int_equal(count_op(p, OP_MULK), 1);
    assert_int_equal(count_op(p, OP_BANDK), 1);
    assert_int_equal(count_op(p, OP_SHL), 1);
    assert_int_equal(count_op(p, OP_ADDI), 0);
}

static void test_vm_compile_constant_folding(void **state) {
    (void)state;
    Proto *p = compile("local a = 2 + 3 * 4\nlocal b = 2^10\nlocal c = -(-9223372036854775807 - 1)\n"
                       "local d = 7 // 2\nlocal e = ~0\nlocal f = 1 << 63");
    assert_int_equal(count_op(p, OP_ADD) + count_op(p, OP_MUL) + count_op(p, OP_POW), 0);
    assert_int_equal(vm_sbx(p->code[0]), 14);
    assert_int_equal(vm_op(p->code[1]), OP_LOADF);
    assert_int_equal(vm_sbx(p->code[1]), 1024);
    /* no folding of division by zero, NaN or -0.0 */
    Proto *q = compile("local a = 1 // 0\nlocal b = 1 % 0\nlocal c = 0/0\nlocal d = -0.0\nlocal e = 1/0");
    assert_int_equal(count_op(q, OP_IDIVK), 1);
    assert_int_equal(count_op(q, OP_MODK), 1);
    assert_int_equal(count_op(q, OP_DIVK), 2);
    assert_int_equal(count_op(q, OP_UNM), 1);
    /* float modulo takes the sign of the divisor */
    Proto *m = compile("local a = -100000.0 % -3\nlocal b = 5.5 % -2\nlocal c = -7 // 2\nlocal d = 7 % -3");
    assert_int_equal(vm_op(m->code[0]), OP_LOADF);
    assert_int_equal(vm_sbx(m->code[0]), -1);
    assert_int_equal(vm_op(m->code[1]), OP_LOADK);
    assert_true(m->k[vm_bx(m->code[1])].tt == VT_FLOAT && m->k[vm_bx(m->code[1])].u.n == -0.5);
    assert_int_equal(vm_sbx(m->code[2]), -4);
    assert_int_equal(vm_sbx(m->code[3]), -2);
    /* bitwise on a float without an integer value is not folded */
    Proto *r = compile("local a = 1.5 | 1");
    assert_int_equal(count_op(r, OP_BORK), 1);
}

static void test_vm_compile_comparison_forms(void **state) {
    (void)state;
    Proto *p = compile("local a, b = ...\nif a == 'x' then end\nif a == 1 then end\nif 1 < a then end\n"
                       "if a > 2 then end\nif a <= b then end\nif a > b then end\nif 3 >= a then end\n"
                       "if a ~= nil then end\nif a < 1.5 then end");
    assert_int_equal(count_op(p, OP_EQK), 2);
    assert_int_equal(count_op(p, OP_EQI), 1);
    assert_int_equal(count_op(p, OP_GTI), 2); /* 1 < a, a > 2 */
    assert_int_equal(count_op(p, OP_LEI), 1); /* 3 >= a is a <= 3 */
    assert_int_equal(count_op(p, OP_LE), 1);
    assert_int_equal(count_op(p, OP_LT), 2); /* a > b is b < a; a < 1.5 */
    Instr lt = instr_of(p, OP_LT);
    assert_int_equal(vm_a(lt), 1); /* b < a */
    assert_int_equal(vm_b(lt), 0);
    for (int i = 0; i < p->ncode; i++) {
        unsigned op = vm_op(p->code[i]);
        if (op >= OP_EQ && op <= OP_TESTSET) assert_int_equal(vm_op(p->code[i + 1]), OP_JMP);
    }
}

static void test_vm_compile_conditions_jump_lists(void **state) {
    (void)state;
    /* 'if a and b' tests without materialising booleans */
    Proto *p = compile("local a, b = ...\nif a and b then a = 1 end");
    assert_int_equal(count_op(p, OP_TEST), 2);
    assert_int_equal(count_op(p, OP_LOADTRUE) + count_op(p, OP_LOADFALSE) + count_op(p, OP_TESTSET), 0);
    /* 'x = a and b' keeps the value with TESTSET */
    Proto *q = compile("local a, b = ...\nlocal x = a or b");
    Instr ts = instr_of(q, OP_TESTSET);
    assert_int_equal(vm_a(ts), 2);
    assert_int_equal(vm_b(ts), 0);
    assert_int_equal(vm_k(ts), 1);
    /* a comparison as a value */
    Proto *r = compile("local a = ...\nlocal x = a < 3");
    assert_int_equal(count_op(r, OP_LOADTRUE), 1);
    assert_int_equal(count_op(r, OP_LOADFALSE), 1);
    /* 'not' inside a condition becomes the test's sense */
    Proto *s = compile("local a = ...\nif not a then a = 1 end");
    assert_int_equal(count_op(s, OP_NOT), 0);
    assert_int_equal(vm_k(instr_of(s, OP_TEST)), 1);
}

static void test_vm_compile_calls_and_returns(void **state) {
    (void)state;
    Proto *p = compile("local function f(x) return x end\nlocal function g() return end\n"
                       "local function h(...) return ... end\nlocal function t(o) return o:m(1) end\n"
                       "local function c() local x <close> = nil; return f() end");
    assert_int_equal(p->np, 5);
    assert_int_equal(vm_op(p->p[0]->code[0]), OP_RETURN1);
    assert_int_equal(vm_op(p->p[1]->code[0]), OP_RETURN0);
    Proto *h = p->p[2];
    assert_int_equal(h->is_vararg, 1);
    assert_int_equal(vm_op(h->code[0]), OP_VARARG);
    assert_int_equal(vm_c(h->code[0]), 0);
    assert_int_equal(vm_op(h->code[1]), OP_RETURN);
    assert_int_equal(vm_b(h->code[1]), 0);
    Proto *t = p->p[3];
    assert_int_equal(count_op(t, OP_SELF), 1);
    int tc = find_op(t, OP_TAILCALL, 0);
    assert_true(tc >= 0);
    assert_int_equal(vm_b(t->code[tc]), 3);
    assert_int_equal(vm_op(t->code[tc + 1]), OP_RETURN);
    Proto *c = p->p[4];
    assert_int_equal(count_op(c, OP_TAILCALL), 0); /* not inside a <close> scope */
    assert_int_equal(count_op(c, OP_TBC), 1);
    assert_int_equal(count_op(c, OP_RETURN1) + count_op(c, OP_RETURN0), 0);
    /* call statement: no results; f(g()) passes all results */
    Proto *q = compile("f(g())");
    int call1 = find_op(q, OP_CALL, 0);
    assert_int_equal(vm_c(q->code[call1]), 0);
    assert_int_equal(vm_b(q->code[call1 + 1]), 0);
    assert_int_equal(vm_c(q->code[call1 + 1]), 1);
}

static void test_vm_compile_table_constructors(void **state) {
    (void)state;
    Proto *p = compile("local t = {1, 2, 3, x = 1, [10] = 2, f()}");
    Instr nt = instr_of(p, OP_NEWTABLE);
    assert_int_equal(vm_b(nt), 2); /* hash hint */
    assert_int_equal(vm_c(nt), 4); /* array hint: the call counts as one value (luac: 3) */
    Instr sl = instr_of(p, OP_SETLIST);
    assert_int_equal(vm_b(sl), 0); /* up to the top: the call's results */
    assert_int_equal(vm_c(sl), 0);
    /* a call that is not last gives one value; a last name is not multiple */
    assert_int_equal(vm_c(instr_of(compile("local t = {f(), f()}"), OP_NEWTABLE)), 2);
    assert_int_equal(vm_c(instr_of(compile("local t = {f(), g}"), OP_NEWTABLE)), 2);
    assert_int_equal(vm_c(instr_of(compile("local t = {(f())}"), OP_NEWTABLE)), 1);
    assert_int_equal(vm_c(instr_of(compile("local t = {x = 1}"), OP_NEWTABLE)), 0);
    /* 120 items: SETLISTs of 50, 50, 20 with C = items already stored */
    char src[1024] = "local t = {";
    for (int i = 0; i < 120; i++) strcat(src, "1,");
    strcat(src, "}");
    Proto *q = compile(src);
    int i1 = find_op(q, OP_SETLIST, 0), i2 = find_op(q, OP_SETLIST, i1 + 1), i3 = find_op(q, OP_SETLIST, i2 + 1);
    assert_true(i3 > 0);
    assert_int_equal(vm_b(q->code[i1]), 50);
    assert_int_equal(vm_c(q->code[i1]), 0);
    assert_int_equal(vm_c(q->code[i2]), 50);
    assert_int_equal(vm_b(q->code[i3]), 20);
    assert_int_equal(vm_c(q->code[i3]), 100);
}

static void test_vm_compile_upvalues_and_close(void **state) {
    (void)state;
    Proto *p = compile("local x = 1\nlocal function f() return x end\n"
                       "do local y = 2; g = function() y = y + 1 end end\n"
                       "local function h() return function() return x end end");
    Proto *f = p->p[0];
    assert_int_equal(f->nupvals, 1);
    assert_true(str_is(f->upvals[0].name, "x"));
    assert_int_equal(f->upvals[0].instack, 1);
    assert_int_equal(f->upvals[0].idx, 0);
    /* the do-block declares a captured local: CLOSE at its end, with its first register */
    Instr cl = instr_of(p, OP_CLOSE);
    assert_int_equal(vm_a(cl), 2);
    /* h's inner function reaches x through h's upvalue */
    Proto *inner = p->p[2]->p[0];
    assert_int_equal(inner->upvals[0].instack, 0);
    assert_int_equal(inner->upvals[0].idx, 0);
    assert_true(str_is(p->p[2]->upvals[0].name, "x"));
}

static void test_vm_compile_function_names(void **state) {
    (void)state;
    Proto *p = compile("function foo() end\nfunction a.b:c() end\nlocal function bar() end\n"
                       "x = function() end\nfunction a.b.c() end");
    assert_true(str_is(p->p[0]->name, "foo"));
    assert_true(str_is(p->p[1]->name, "a.b:c"));
    assert_int_equal(p->p[1]->numparams, 1); /* self */
    assert_true(str_is(p->p[1]->locvars[0].name, "self"));
    assert_true(str_is(p->p[2]->name, "bar"));
    assert_null(p->p[3]->name);
    assert_true(str_is(p->p[4]->name, "a.b.c"));
    assert_int_equal(p->p[0]->linedefined, 1);
    assert_int_equal(p->p[1]->linedefined, 2);
    assert_int_equal(p->p[1]->lastlinedefined, 2);
}

static void test_vm_compile_loops(void **state) {
    (void)state;
    Proto *p = compile("for i = 1, 10 do local x = i end\nfor k, v in pairs(t) do end");
    int fp = find_op(p, OP_FORPREP, 0), fl = find_op(p, OP_FORLOOP, 0);
    assert_true(fp >= 0 && fl > fp);
    assert_int_equal(fp + 1 + vm_sbx(p->code[fp]), fl + 1);
    assert_int_equal(fl + 1 + vm_sbx(p->code[fl]), fp + 1);
    assert_true(str_is(p->locvars[3].name, "i"));
    assert_true(str_is(p->locvars[0].name, "(for state)"));
    int tp = find_op(p, OP_TFORPREP, 0), tc = find_op(p, OP_TFORCALL, 0), tl = find_op(p, OP_TFORLOOP, 0);
    assert_int_equal(tp + 1 + vm_sbx(p->code[tp]), tc);
    assert_int_equal(tl, tc + 1);
    assert_int_equal(tl + 1 + vm_sbx(p->code[tl]), tp + 1);
    assert_int_equal(vm_c(p->code[tc]), 2);
    assert_int_equal(vm_op(p->code[tl + 1]), OP_CLOSE); /* the generic for always closes */
}

static void test_vm_compile_goto_and_break(void **state) {
    (void)state;
    Proto *p = compile("for i = 1, 3 do\n  if i == 2 then goto continue end\n  local x = i\n  ::continue::\nend\n"
                       "while true do break end\n::top:: do goto top end");
    assert_non_null(p);
    /* breaking out of a loop whose body captures a local closes it */
    Proto *q = compile("while true do local x; f = function() return x end; break end");
    assert_true(count_op(q, OP_CLOSE) >= 1);
    assert_string_equal(compile_error("goto foo"), "no visible label 'foo' for <goto> at line 1");
    assert_string_equal(compile_error("do goto a; local x; ::a:: print(x) end"),
                        "<goto a> at line 1 jumps into the scope of local 'x'");
    assert_string_equal(compile_error("::a::\n::a::"), "label 'a' already defined on line 2");
    assert_int_equal(err.line, 2);
    assert_string_equal(compile_error("\nbreak"), "break outside loop at line 2");
    assert_string_equal(compile_error("repeat local x; goto l; ::l:: until x\ngoto l"),
                        "no visible label 'l' for <goto> at line 2");
}

static void test_vm_compile_line_info(void **state) {
    (void)state;
    Proto *p = compile("local a = ...\nlocal b = a\n+\n{}\nf\n(\n1)");
    int add = find_op(p, OP_ADD, 0);
    assert_true(add >= 0);
    assert_int_equal(p->lineinfo[add], 3);       /* the operator's line */
    int call = find_op(p, OP_CALL, 0);
    assert_int_equal(p->lineinfo[call], 5);      /* where the called expression starts */
    assert_int_equal(p->lineinfo[0], 1);
}

/* ---- errors ---- */

typedef struct ErrCase {
    const char *src;
    const char *msg;
    int line, col;
} ErrCase;

static void test_vm_compile_syntax_errors(void **state) {
    (void)state;
    static const ErrCase cases[] = {
        {"x = 1 +", "unexpected symbol near <eof>", 1, 8},
        {"x = = 1", "unexpected symbol near '='", 1, 5},
        {"local x y", "syntax error near <eof>", 1, 10},
        {"x", "syntax error near <eof>", 1, 2},
        {"x y = 1", "syntax error near 'y'", 1, 3},
        {"local t = {\n1,\n2\n", "'}' expected (to close '{' at line 1) near <eof>", 4, 1},
        {"f(\n1\nx", "')' expected (to close '(' at line 1) near 'x'", 3, 1},
        {"f(1 x", "')' expected near 'x'", 1, 5},
        {"if x then", "'end' expected near <eof>", 1, 10},
        {"function f()\n\nx = 1", "'end' expected (to close 'function' at line 1) near <eof>", 3, 6},
        {"if x print(1) end", "'then' expected near 'print'", 1, 6},
        {"for i do end", "'=' or 'in' expected near 'do'", 1, 7},
        {"local function end", "<name> expected near 'end'", 1, 16},
        {"function f(a,) end", "<name> or '...' expected near ')'", 1, 14},
        {"function f() x = ... end", "cannot use '...' outside a vararg function near '...'", 1, 18},
        {"a.b:c = 1", "function arguments expected near '='", 1, 7},
        {"x = {a=1,,}", "unexpected symbol near ','", 1, 10},
        {"return return", "unexpected symbol near 'return'", 1, 8},
        {"return 1 x = 2", "<eof> expected near 'x'", 1, 10},
        {"if x then else elseif", "'end' expected near 'elseif'", 1, 16},
        {"x = 'abc", "unfinished string near <eof>", 1, 5},
        {"x = 3x", "malformed number near '3x'", 1, 5},
        {"x = '\\q'", "invalid escape sequence near ''\\q'", 1, 5},
        {"x = y + @", "unexpected symbol near '@'", 1, 9},
        {"repeat\nx = 1\n", "'until' expected (to close 'repeat' at line 1) near <eof>", 3, 1},
        {"x = function(", "<name> or '...' expected near <eof>", 1, 14},
        {"local x <const> = 1; x = 2", "attempt to assign to const variable 'x'", 1, 24},
        {"(f)", "syntax error near <eof>", 1, 4},
        {"f() = 1", "syntax error near '='", 1, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *m = compile_error(cases[i].src);
        if (strcmp(m, cases[i].msg) != 0 || err.line != cases[i].line || err.col != cases[i].col)
            fail_msg("for %s: got %d:%d: %s; want %d:%d: %s", cases[i].src, err.line, err.col, m,
                     cases[i].line, cases[i].col, cases[i].msg);
    }
}

static void test_vm_compile_deep_nesting(void **state) {
    (void)state;
    size_t n = 10000;
    char *src = malloc(2 * n + 16);
    strcpy(src, "return ");
    memset(src + 7, '(', n);
    strcpy(src + 7 + n, "1");
    memset(src + 8 + n, ')', n);
    src[8 + 2 * n] = '\0';
    assert_string_equal(compile_error(src), "chunk has too many syntax levels");
    /* 150 levels are fine */
    memset(src, 0, 2 * n + 16);
    strcpy(src, "return ");
    memset(src + 7, '(', 150);
    strcpy(src + 157, "1");
    memset(src + 158, ')', 150);
    compile(src);
    /* nested blocks, tables and functions */
    memset(src, 0, 2 * n + 16);
    for (size_t i = 0; i < 3000; i++) strcat(src, "do ");
    assert_string_equal(compile_error(src), "chunk has too many syntax levels");
    memset(src, 0, 2 * n + 16);
    strcpy(src, "x = ");
    for (size_t i = 0; i < 3000; i++) strcat(src, "{");
    assert_string_equal(compile_error(src), "chunk has too many syntax levels");
    free(src);
}

static void test_vm_compile_limits(void **state) {
    (void)state;
    char *src = malloc(4096);
    strcpy(src, "local a0");
    for (int i = 1; i <= 200; i++) sprintf(src + strlen(src), ",a%d", i);
    assert_string_equal(compile_error(src), "too many local variables (limit is 200) in main function near <eof>");
    strcpy(src, "\nlocal function f()\nlocal a0");
    for (int i = 1; i <= 200; i++) sprintf(src + strlen(src), ",a%d", i);
    strcat(src, " end");
    assert_string_equal(compile_error(src),
                        "too many local variables (limit is 200) in function at line 2 near 'end'");
    /* 200 locals compile */
    strcpy(src, "local a0");
    for (int i = 1; i < 200; i++) sprintf(src + strlen(src), ",a%d", i);
    Proto *p = compile(src);
    assert_int_equal(p->nlocvars, 200);
    assert_true(p->maxstack <= VM_MAXREGS);
    /* an expression needing more registers than there are */
    strcpy(src, "local a0");
    for (int i = 1; i < 200; i++) sprintf(src + strlen(src), ",a%d", i);
    strcat(src, "\nf(");
    for (int i = 0; i < 60; i++) strcat(src, "1,");
    strcat(src, "1)");
    assert_string_equal(compile_error(src), "function or expression needs too many registers near '1'");
    free(src);
}

static void test_vm_compile_never_crashes_on_garbage(void **state) {
    (void)state;
    /* deterministic random byte strings drawn from Lua-ish tokens */
    static const char *toks[] = {"local", "function", "end", "(", ")", "{", "}", "[", "]", "=", "==",
                                 "x", "y", "1", "2.5", "'s'", "..", "...", ",", ";", "if", "then",
                                 "else", "for", "in", "do", "while", "return", "goto", "::", "break",
                                 "and", "or", "not", "-", "#", "<", ">=", "\"", "[[", "--", "\n", ":", "."};
    uint64_t r = 12345;
    char buf[512];
    for (int iter = 0; iter < 3000; iter++) {
        buf[0] = '\0';
        int n = (int)(r % 40);
        for (int i = 0; i < n; i++) {
            r ^= r << 13; r ^= r >> 7; r ^= r << 17;
            strcat(buf, toks[r % (sizeof toks / sizeof toks[0])]);
            strcat(buf, " ");
        }
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        Proto *p = vm_compile(S, buf, strlen(buf), "=fuzz", &err);
        if (p != NULL) {
            char why[256];
            if (vm_bytecode_verify(p, why, sizeof why) != NULL) fail_msg("verifier: %s\nin: %s", why, buf);
        } else {
            assert_true(err.msg[0] != '\0');
            assert_true(err.line >= 1);
        }
    }
}

static void test_vm_chunkid_forms(void **state) {
    (void)state;
    char b[60];
    vm_chunkid(b, sizeof b, "=stdin", 6);
    assert_string_equal(b, "stdin");
    vm_chunkid(b, sizeof b, "@prog.lua", 9);
    assert_string_equal(b, "prog.lua");
    vm_chunkid(b, sizeof b, "x = 1", 5);
    assert_string_equal(b, "[string \"x = 1\"]");
    vm_chunkid(b, sizeof b, "x = 1\ny = 2", 11);
    assert_string_equal(b, "[string \"x = 1...\"]");
    const char *longsrc = "local a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14";
    vm_chunkid(b, sizeof b, longsrc, strlen(longsrc));
    assert_string_equal(b, "[string \"local a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a...\"]");
    const char *longfile = "@/a/very/long/path/name/that/goes/on/and/on/and/on/forever/file.lua";
    vm_chunkid(b, sizeof b, longfile, strlen(longfile));
    assert_int_equal(strlen(b), 59);
    assert_memory_equal(b, "...", 3);
    assert_string_equal(b + strlen(b) - 8, "file.lua");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_compile_locals_in_registers),
        cmocka_unit_test(test_vm_compile_main_chunk_shape),
        cmocka_unit_test(test_vm_compile_local_env),
        cmocka_unit_test(test_vm_compile_constants_dedup),
        cmocka_unit_test(test_vm_compile_const_locals_fold),
        cmocka_unit_test(test_vm_compile_indexing_forms),
        cmocka_unit_test(test_vm_compile_arith_forms),
        cmocka_unit_test(test_vm_compile_arith_k_operands),
        cmocka_unit_test(test_vm_compile_constant_folding),
        cmocka_unit_test(test_vm_compile_comparison_forms),
        cmocka_unit_test(test_vm_compile_conditions_jump_lists),
        cmocka_unit_test(test_vm_compile_calls_and_returns),
        cmocka_unit_test(test_vm_compile_table_constructors),
        cmocka_unit_test(test_vm_compile_upvalues_and_close),
        cmocka_unit_test(test_vm_compile_function_names),
        cmocka_unit_test(test_vm_compile_loops),
        cmocka_unit_test(test_vm_compile_goto_and_break),
        cmocka_unit_test(test_vm_compile_line_info),
        cmocka_unit_test(test_vm_compile_syntax_errors),
        cmocka_unit_test(test_vm_compile_deep_nesting),
        cmocka_unit_test(test_vm_compile_limits),
        cmocka_unit_test(test_vm_compile_never_crashes_on_garbage),
        cmocka_unit_test(test_vm_chunkid_forms),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
