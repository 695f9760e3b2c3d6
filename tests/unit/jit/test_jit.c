/* test_jit.c: unit tests of the template JIT (jit/): code memory is never writable and
 * executable at once; which instructions get templates and entries; and templates run
 * against edge values, with guard failures and errors handed to the interpreter (the
 * messages must be the interpreter's, variable names included). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_api.h"
#include "jit_api.h"
#include "jit_asm.h"
#include "vm_api.h"
#include "vm_compile.h"
#include "vm_lib.h"
#include "vm_opcodes.h"
#include "vm_state.h"

#include "../vm/test_snippets.h"

/* The permissions of the mapping that holds [addr], from /proc/self/maps ("r-xp"). */
static void perms_of(const void *addr, char perms[5]) {
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    strcpy(perms, "????");
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char p[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && (uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
            memcpy(perms, p, 5);
            break;
        }
    }
    fclose(f);
}

static void test_code_memory_is_never_writable_and_executable(void **state) {
    (void)state;
    /* mov eax, 42; ret */
    static const uint8_t code[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};
    size_t mapped = 0;
    void *m = jit_mem_publish(code, sizeof code, &mapped);
    assert_non_null(m);
    assert_true(mapped >= sizeof code && mapped % (size_t)sysconf(_SC_PAGESIZE) == 0);
    int (*fn)(void) = (int (*)(void))m;
    assert_int_equal(fn(), 42);
    char perms[5];
    perms_of(m, perms);
    assert_string_equal(perms, "r-xp");
    /* writing to published code faults */
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* not cmocka's handler: die of it */
        *(volatile uint8_t *)m = 0xc3;
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
}

/* What Zydis itself encodes for [r] (machine mode set here), into [out]; its length. */
static size_t zydis_bytes(ZydisEncoderRequest r, uint8_t *out) {
    r.machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    ZyanUSize n = ZYDIS_MAX_INSTRUCTION_LENGTH;
    assert_true(ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&r, out, &n)));
    return n;
}

/* The assembler's own shortcuts (jit_asm.c) give Zydis's bytes: an encoding reused from its
 * table, the first time and when met again (and after a request that shares its hash slot
 * could have evicted it), and the hand-made `mov r64, imm64` for every register and for
 * immediates on both sides of the 32-bit range (which Zydis encodes itself). */
static void test_assembler_gives_zydis_bytes(void **state) {
    (void)state;
    static const ZydisRegister gprs[] = {
        ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
        ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
        ZYDIS_REGISTER_R8,  ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
        ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15};
    static const int64_t imms[] = {0x123456789abcdef0, -0x80000001LL, (int64_t)0x100000000, INT64_MIN, -1, 42,
                                   0xffffffffLL, INT32_MIN};
    for (int round = 0; round < 3; round++) {
        Asm a;
        memset(&a, 0, sizeof a);
        uint8_t want[4096];
        size_t wn = 0;
        for (size_t g = 0; g < sizeof gprs / sizeof *gprs; g++) {
            for (size_t k = 0; k < sizeof imms / sizeof *imms; k++) {
                ZydisEncoderRequest r;
                memset(&r, 0, sizeof r);
                r.mnemonic = ZYDIS_MNEMONIC_MOV;
                r.operand_count = 2;
                r.operands[0] = R(gprs[g]);
                r.operands[1] = I(imms[k]);
                wn += zydis_bytes(r, want + wn);
                INS2(&a, MOV, R(gprs[g]), I(imms[k]));
            }
            /* a memory operand, an add, a 32-bit register: through the table */
            ZydisEncoderRequest r;
            memset(&r, 0, sizeof r);
            r.mnemonic = ZYDIS_MNEMONIC_ADD;
            r.operand_count = 2;
            r.operands[0] = M(gprs[g], 16 * (int64_t)g + 8, 8);
            r.operands[1] = I(round + 1);
            wn += zydis_bytes(r, want + wn);
            INS2(&a, ADD, M(gprs[g], 16 * (int64_t)g + 8, 8), I(round + 1));
        }
        /* the other request makers: a one-operand instruction (INS1 passes its operand
         * twice, the request has one), none, three operands with a scaled index, an
         * fs:-prefixed request built whole (jit_step.c's), and a rel32 jump (its bytes up to
         * the rel32, which jit_patch fills) */
        ZydisEncoderRequest r;
        memset(&r, 0, sizeof r);
        r.mnemonic = ZYDIS_MNEMONIC_PUSH;
        r.operand_count = 1;
        r.operands[0] = R(ZYDIS_REGISTER_R13);
        wn += zydis_bytes(r, want + wn);
        INS1(&a, PUSH, R(ZYDIS_REGISTER_R13));
        memset(&r, 0, sizeof r);
        r.mnemonic = ZYDIS_MNEMONIC_RET;
        wn += zydis_bytes(r, want + wn);
        INS0(&a, RET);
        memset(&r, 0, sizeof r);
        r.mnemonic = ZYDIS_MNEMONIC_IMUL;
        r.operand_count = 3;
        r.operands[0] = R(ZYDIS_REGISTER_RDX);
        r.operands[1] = MX(ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_RCX, 8, -24 - round, 8);
        r.operands[2] = I(1000 + round);
        wn += zydis_bytes(r, want + wn);
        jit_ins3(&a, ZYDIS_MNEMONIC_IMUL, R(ZYDIS_REGISTER_RDX), MX(ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_RCX, 8, -24 - round, 8),
                 I(1000 + round));
        memset(&r, 0, sizeof r);
        r.mnemonic = ZYDIS_MNEMONIC_DEC;
        r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
        r.operand_count = 1;
        r.operands[0] = M(ZYDIS_REGISTER_NONE, -0x338 + 8 * round, 8);
        wn += zydis_bytes(r, want + wn);
        ZydisEncoderRequest fs = r;
        jit_encode(&a, &fs);
        memset(&r, 0, sizeof r); /* the same without the prefix: another key */
        r.mnemonic = ZYDIS_MNEMONIC_DEC;
        r.operand_count = 1;
        r.operands[0] = M(ZYDIS_REGISTER_NONE, -0x338 + 8 * round, 8);
        wn += zydis_bytes(r, want + wn);
        INS1(&a, DEC, M(ZYDIS_REGISTER_NONE, -0x338 + 8 * round, 8));
        memset(&r, 0, sizeof r);
        r.mnemonic = ZYDIS_MNEMONIC_JNZ;
        r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
        r.branch_width = ZYDIS_BRANCH_WIDTH_32;
        r.operand_count = 1;
        r.operands[0] = I(0);
        wn += zydis_bytes(r, want + wn);
        int l = jit_new_label(&a);
        JMP(&a, JNZ, l);
        jit_bind(&a, l); /* right after the jump: its rel32 is 0, as Zydis's for I(0) */
        jit_patch(&a);
        assert_false(a.failed);
        assert_int_equal(a.len, wn);
        assert_memory_equal(a.buf, want, wn);
        free(a.buf);
        free(a.label);
        free(a.fix);
    }
}

static Proto *compile_nested(const char *src) {
    CompileError err;
    Proto *main = vm_compile(S, src, strlen(src), "=test", &err);
    assert_non_null(main);
    assert_true(main->np >= 1);
    return main->p[0];
}

static void test_templates_and_entries(void **state) {
    (void)state;
    /* A loop of templated instructions with a concatenation (no template) before it: the
     * function compiles, and every instruction has code (its template, or a step through
     * the interpreter for the CONCAT) where the interpreter, calls and returns may enter. */
    Proto *p = compile_nested("local function f(n)\n"
                              "  local t = n .. 'x'\n"
                              "  local s = 0\n"
                              "  for i = 1, n do s = s + i * 2 end\n"
                              "  return s\n"
                              "end\n");
    const JitCode *jc = jit_compile(p);
    assert_non_null(jc);
    assert_non_null(jc->at);
    assert_ptr_equal(p->jit, jc);
    assert_ptr_equal(jit_compile(p), jc); /* compiled once */
    int forloop = -1, concat = -1, body = -1;
    for (int pc = 0; pc < p->ncode; pc++) {
        unsigned op = vm_op(p->code[pc]);
        if (op == OP_FORLOOP) {
            forloop = pc;
            body = pc + 1 + vm_sbx(p->code[pc]);
        }
        if (op == OP_CONCAT) concat = pc;
    }
    assert_true(forloop > 0 && concat >= 0);
    assert_non_null(jc->at[body]); /* the loop head */
    for (int pc = 0; pc < p->ncode; pc++) assert_non_null(jc->at[pc]);
    assert_true(jc->ntemplated >= 6);
    assert_true(jc->codesize > 0 && jc->codesize <= jc->memsize);
    char perms[5];
    perms_of(jc->mem, perms);
    assert_string_equal(perms, "r-xp");
    /* the disassembler reads the code back */
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    jit_disasm(f, jc->mem, jc->codesize, "");
    fclose(f);
    assert_non_null(strstr(text, "push r14"));
    assert_non_null(strstr(text, "ret"));
    free(text);
}

static void test_integer_and_float_arithmetic(void **state) {
    (void)state;
    assert_runs("local function f(a, b)\n"
                "  local r = {}\n"
                "  r[1] = a + b; r[2] = a - b; r[3] = a * b; r[4] = a / b\n"
                "  r[5] = a + 1; r[6] = a - 3; r[7] = a * 5; r[8] = -a\n"
                "  if math.type(a) == 'integer' then r[9] = a & b; r[10] = a | 7; r[11] = a ~ b end\n"
                "  return r\n"
                "end\n"
                "local M, m = math.maxinteger, math.mininteger\n"
                "local r = f(M, 1)\n"
                "assert(r[1] == m and math.type(r[1]) == 'integer' and r[2] == M - 1 and r[3] == M)\n"
                "assert(r[5] == m and r[7] == M * 5 and r[8] == -M and r[9] == 1 and r[10] == M)\n"
                "r = f(m, -1)\n"
                "assert(r[1] == M and r[2] == m + 1 and r[3] == m and r[8] == m and r[4] == -(m + 0.0))\n"
                "r = f(2.5, 2)\n"
                "assert(r[1] == 4.5 and r[2] == 0.5 and r[3] == 5.0 and r[4] == 1.25 and r[8] == -2.5)\n"
                "r = f(-0.0, 1)\n"
                "assert(1 / r[8] == 1 / 0.0 and 1 / (-0.0 * 1) == -1 / 0.0)\n"
                "r = f(0 / 0, 1)\n"
                "assert(r[1] ~= r[1] and r[8] ~= r[8])\n"
                "r = f('10', 2)\n" /* strings: the interpreter's coercion */
                "assert(r[1] == 12 and r[3] == 20 and r[10] == nil)\n"
                "assert(f(6, 3)[4] == 2.0 and math.type(f(6, 3)[4]) == 'float')");
}

static void test_comparisons_and_loops(void **state) {
    (void)state;
    assert_runs("local function cmp(a, b)\n"
                "  local n = 0\n"
                "  if a < b then n = n + 1 end\n"
                "  if a <= b then n = n + 2 end\n"
                "  if a == b then n = n + 4 end\n"
                "  if a > 1 then n = n + 8 end\n"
                "  if a >= -1 then n = n + 16 end\n"
                "  if a == 3 then n = n + 32 end\n"
                "  if not a then n = n + 64 end\n"
                "  return n\n"
                "end\n"
                "assert(cmp(1, 2) == 1 + 2 + 16)\n"
                "assert(cmp(3, 3) == 2 + 4 + 8 + 16 + 32)\n"
                "assert(cmp(3.0, 3) == 2 + 4 + 8 + 16 + 32)\n" /* mixed: the interpreter's */
                "local nan = 0 / 0\n"
                "assert(cmp(nan, nan) == 0 and cmp(nan, 1) == 0)\n"
                "assert(cmp(-1.5, 2.5) == 1 + 2)\n"

                "local s = 0\n"
                "for i = 10, 1, -3 do s = s + i end\n"
                "assert(s == 10 + 7 + 4 + 1)\n"
                "s = 0\n"
                "for i = math.maxinteger - 2, math.maxinteger do s = s + 1 end\n"
                "assert(s == 3)\n"
                "for i = 1, 3, 0.5 do s = s + i end\n" /* a float loop: FORLOOP exits */
                "assert(s == 3 + 1 + 1.5 + 2 + 2.5 + 3)\n"
                "local i, t = 0, 0\n"
                "while i < 1000 do i = i + 1; if i & 1 == 0 then t = t + i end end\n"
                "assert(t == 250500)\n"
                "repeat i = i - 7 until i < 0\n"
                "assert(i == -1)");
}

static void test_errors_come_from_the_interpreter(void **state) {
    (void)state;
    assert_fails_with("local function f(a, b) local s = 0 for i = 1, 3 do s = s + a * b end return s end\n"
                      "f(1, nil)",
                      "test:1: attempt to perform arithmetic on a nil value (local 'b')");
    assert_fails_with("local function f(a) local n = 0 while n < 10 do n = n + 1 if a < n then return n end end end\n"
                      "f({})",
                      "test:1: attempt to compare table with number");
    assert_fails_with("local x = 1\nfor i = 1, 'x' do x = x + i end",
                      "test:2: bad 'for' limit (number expected, got string)");
    assert_fails_with("local function f(a) return a & 1.5 end\nf(3)",
                      "test:1: number has no integer representation");
}

static void test_upvalues(void **state) {
    (void)state;
    assert_runs("local u = 0\n"
                "local function inc(n) for i = 1, n do u = u + i end return u end\n"
                "assert(inc(100) == 5050 and u == 5050)\n"
                "local function get() local a = u return a end\n"
                "assert(get() == 5050)");
}

static void test_tables(void **state) {
    (void)state;
    assert_runs("local function fill(t, n) for i = 1, n do t[i] = i * i end return t end\n"
                "local function sum(t, n) local s = 0 for i = 1, n do s = s + (t[i] or 0) end return s end\n"
                "local t = fill({0, 0, 0}, 3)\n"
                "assert(sum(t, 3) == 14 and sum(t, 5) == 14)\n" /* past the array part: exits */
                "local m = setmetatable({1, nil, 3}, {__index = function(_, k) return k * 10 end})\n"
                "assert(sum(m, 4) == 1 + 20 + 3 + 40)\n"
                "local log = {}\n"
                "local n = setmetatable({nil, 2}, {__newindex = function(t, k, v) log[#log + 1] = k; rawset(t, k, v) end})\n"
                "fill(n, 3)\n"
                "assert(n[1] == 1 and n[2] == 4 and n[3] == 9 and log[1] == 1 and log[2] == 3 and #log == 2)\n"
                "local o = {x = 1, y = 2}\n"
                "local function move(o, k) for i = 1, k do o.x = o.x + o.y end return o.x end\n"
                "assert(move(o, 10) == 21)\n"
                "local c = setmetatable({}, {__index = {x = 5, y = 1}})\n"
                "assert(move(c, 2) == 7 and rawget(c, 'x') == 7)\n"
                "g_counter = 0\n"
                "local function bump(k) for i = 1, k do g_counter = g_counter + 1 end end\n"
                "bump(100)\n"
                "assert(g_counter == 100)");
    assert_fails_with("local function f(t) local s = 0 for i = 1, 3 do s = s + t[i] end return s end\n"
                      "f({1, 2})",
                      "test:1: attempt to perform arithmetic on a nil value (field '?')");
    assert_fails_with("local function f(t) for i = 1, 3 do t[i] = i end end\nf(nil)",
                      "test:1: attempt to index a nil value (local 't')");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_code_memory_is_never_writable_and_executable),
        cmocka_unit_test(test_assembler_gives_zydis_bytes),
        cmocka_unit_test(test_templates_and_entries),
        cmocka_unit_test(test_integer_and_float_arithmetic),
        cmocka_unit_test(test_comparisons_and_loops),
        cmocka_unit_test(test_errors_come_from_the_interpreter),
        cmocka_unit_test(test_upvalues),
        cmocka_unit_test(test_tables),
    };
    JitOptions o = {true, false, false};
    jit_configure(&o);
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
