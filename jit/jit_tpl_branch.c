/* jit_tpl_branch.c: the templates of jumps and conditional tests (JMP, EQ .. TESTSET).
 *
 * A test is always followed by its JMP, which its template consumes. Float ordered
 * comparisons use ucomisd so that "above" / "above or equal" means the condition holds: an
 * unordered result (NaN) sets CF and is never above, so every comparison with NaN is false. */
#include "jit_internal.h"

#include "vm_string.h"

#include "vm_prof.h"

/* The label a template jumps to for pc [to]: a backward jump is a loop back edge and goes
 * through a poll, so that no loop runs in compiled code without a safepoint. */
static int target_label(Comp *c, int from, int to) {
    int l;
    if (to > from) {
        l = L(c, to);
    } else {
        if (c->backedge[to] < 0) c->backedge[to] = jit_new_label(&c->a);
        if (c->pollslow[to] < 0) c->pollslow[to] = jit_new_label(&c->a);
        l = c->backedge[to];
    }
    /* The Ball-Larus outcome of the edge: a test's is 1 when it takes its JMP, 0 when it skips
     * it (tpl_cond_ok leaves out tests whose JMP goes to the next instruction, where the two
     * would be one target); a JMP's is 1. */
    unsigned op = vm_op(c->p->code[from]);
    unsigned o = op >= OP_EQ && op <= OP_TESTSET ? to != from + 2 : 1;
    return jit_edge_label(c, from, o, l);
}

/* The two successors of a conditional test at [pc] (always followed by its JMP): when the
 * condition equals k the JMP is taken, else it is skipped. */
static void cond_targets(Comp *c, int pc, int *jmp_to, int *skip_to) {
    Instr j = c->p->code[pc + 1];
    *jmp_to = pc + 2 + vm_sbx(j);
    *skip_to = pc + 2;
}

/* Branch on flags: [cc_true] jumps when the condition holds. */
static void cond_branch(Comp *c, int pc, Instr i, ZydisMnemonic cc_true) {
    int t, f;
    cond_targets(c, pc, &t, &f);
    int x = vm_k(i) ? t : f, y = vm_k(i) ? f : t;
    jit_jump(&c->a, cc_true, target_label(c, pc, x));
    JMP(&c->a, JMP, target_label(c, pc, y));
}

/* The successor labels of a test, as (where to go when the condition holds, when not). */
static void cond_succ(Comp *c, int pc, Instr i, int *when_true, int *when_false) {
    int t, f;
    cond_targets(c, pc, &t, &f);
    *when_true = vm_k(i) ? t : f;
    *when_false = vm_k(i) ? f : t;
}

/* Every test (EQ .. TESTSET): templated only together with its JMP, which it consumes (the
 * verifier guarantees it follows); with path profiling, not when the JMP goes to the next
 * instruction: both outcomes one target, the step tells them apart (target_label). */
bool tpl_cond_ok(const Comp *c, int pc) {
    const Proto *p = c->p;
    if (pc + 1 >= c->n || vm_op(p->code[pc + 1]) != OP_JMP) return false;
    return c->pathbias == VM_PATH_OFF || vm_sbx(p->code[pc + 1]) != 0;
}

/* JMP: a backward jump polls */
void tpl_jmp(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int target = pc + 1 + vm_sbx(i);
    jit_emit_path_action(c, pc, 1);
    if (vm_sbx(i) < 0) {
        jit_sample_tick(c, target);
        jit_poll_then_jump(c, target);
    }
    else
        JMP(a, JMP, L(c, target));
}

/* LT, LE. Operands of known types (jit_types.c) are not tested: two known integers compare
 * at once, a known float goes to the float comparison. */
void tpl_lt(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int rb = (int)vm_b(i);
    uint8_t ka = jit_kt(c, pc, ra), kb = jit_kt(c, pc, rb);
    int flt = jit_new_label(a);
    if (ka != KT_FLT && kb != KT_FLT) {
        if (ka != KT_INT) {
            INS2(a, CMP, TAG(ra), I(VT_INT));
            JMP(a, JNZ, kb == KT_INT ? STEP(c, pc) : flt); /* a float against an integer: stepped */
        }
        if (kb != KT_INT) {
            INS2(a, CMP, TAG(rb), I(VT_INT));
            JMP(a, JNZ, STEP(c, pc)); /* int against non-int: vm_lessthan decides */
        }
        INS2(a, MOV, R(RAX), VAL(ra));
        INS2(a, CMP, R(RAX), VAL(rb));
        cond_branch(c, pc, i, vm_op(i) == OP_LT ? ZYDIS_MNEMONIC_JL : ZYDIS_MNEMONIC_JLE);
        if (ka == KT_INT || kb == KT_INT) return; /* no float comparison reachable */
    }
    jit_bind(a, flt);
    if (ka != KT_FLT) {
        INS2(a, CMP, TAG(ra), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
    }
    if (kb != KT_FLT) {
        INS2(a, CMP, TAG(rb), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
    }
    /* a < b  <=>  b above a (ucomisd b, a): false when unordered, as Lua wants */
    INS2(a, MOVSD, R(XMM0), VAL(rb));
    INS2(a, UCOMISD, R(XMM0), VAL(ra));
    cond_branch(c, pc, i, vm_op(i) == OP_LT ? ZYDIS_MNEMONIC_JNBE : ZYDIS_MNEMONIC_JNB);
}

/* LTI, LEI, GTI, GEI */
void tpl_cmpi(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int imm = vm_sb(i);
    unsigned op = vm_op(i);
    uint8_t ka = jit_kt(c, pc, ra);
    int flt = jit_new_label(a);
    if (ka != KT_FLT) {
        if (ka != KT_INT) {
            INS2(a, CMP, TAG(ra), I(VT_INT));
            JMP(a, JNZ, flt);
        }
        INS2(a, CMP, VAL(ra), I(imm));
        cond_branch(c, pc, i,
                    op == OP_LTI ? ZYDIS_MNEMONIC_JL : op == OP_LEI ? ZYDIS_MNEMONIC_JLE
                                                      : op == OP_GTI ? ZYDIS_MNEMONIC_JNLE : ZYDIS_MNEMONIC_JNL);
        if (ka == KT_INT) return;
    }
    jit_bind(a, flt);
    if (ka == KT_NONE) { /* KT_NUM: not an integer, so a float */
        INS2(a, CMP, TAG(ra), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc)); /* metamethods and errors */
    }
    jit_load_num(c, XMM1, src_int(imm), pc);
    if (op == OP_LTI || op == OP_LEI) { /* x < imm <=> imm above x */
        INS2(a, UCOMISD, R(XMM1), VAL(ra));
    } else {                            /* x > imm <=> x above imm */
        INS2(a, MOVSD, R(XMM0), VAL(ra));
        INS2(a, UCOMISD, R(XMM0), R(XMM1));
    }
    cond_branch(c, pc, i, (op == OP_LTI || op == OP_GTI) ? ZYDIS_MNEMONIC_JNBE : ZYDIS_MNEMONIC_JNB);
}

/* EQ */
/* Strings rdi and rsi: the same String is equal, else their bytes decide (vm_string_equal;
 * strings are not all interned, vm_string.h). To [yes] or [no]. */
static void str_equal(Comp *c, int pc, int yes, int no) {
    Asm *a = &c->a;
    INS2(a, CMP, R(RDI), R(RSI));
    JMP(a, JZ, target_label(c, pc, yes));
    INS2(a, MOV, R(RAX), M(RDI, offsetof(String, len), 8));
    INS2(a, CMP, R(RAX), M(RSI, offsetof(String, len), 8));
    JMP(a, JNZ, target_label(c, pc, no));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_string_equal);
    INS1(a, CALL, R(RAX));
    INS2(a, TEST, R(ZYDIS_REGISTER_AL), R(ZYDIS_REGISTER_AL));
    JMP(a, JNZ, target_label(c, pc, yes));
    JMP(a, JMP, target_label(c, pc, no));
}

void tpl_eq(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int rb = (int)vm_b(i);
    int yes, no;
    cond_succ(c, pc, i, &yes, &no);
    int isint = jit_new_label(a), notint = jit_new_label(a);
    INS2(a, MOV, R(EAX), TAG(ra));
    INS2(a, CMP, R(EAX), TAG(rb));
    JMP(a, JNZ, STEP(c, pc)); /* different tags: 1 == 1.0 and __eq are the interpreter's */
    INS2(a, CMP, R(EAX), I(VT_INT));
    JMP(a, JZ, isint);
    JMP(a, JB, target_label(c, pc, yes)); /* nil, false, true: equal tags are equal values */
    JMP(a, JMP, notint);
    jit_bind(a, isint);
    INS2(a, MOV, R(RAX), VAL(ra));
    INS2(a, CMP, R(RAX), VAL(rb));
    cond_branch(c, pc, i, ZYDIS_MNEMONIC_JZ);
    jit_bind(a, notint);
    int notstr = jit_new_label(a);
    INS2(a, CMP, R(EAX), I(VT_STR));
    JMP(a, JNZ, notstr);
    INS2(a, MOV, R(RDI), VAL(ra));
    INS2(a, MOV, R(RSI), VAL(rb));
    str_equal(c, pc, yes, no);
    jit_bind(a, notstr);
    INS2(a, CMP, R(EAX), I(VT_FLOAT));
    JMP(a, JNZ, STEP(c, pc));
    INS2(a, MOVSD, R(XMM0), VAL(ra));
    INS2(a, UCOMISD, R(XMM0), VAL(rb));
    JMP(a, JP, target_label(c, pc, no)); /* NaN */
    JMP(a, JZ, target_label(c, pc, yes));
    JMP(a, JMP, target_label(c, pc, no));
}

/* EQK, EQI */
void tpl_eqk(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int yes, no;
    cond_succ(c, pc, i, &yes, &no);
    Value kv = vm_op(i) == OP_EQI ? vm_int(vm_sb(i)) : p->k[vm_b(i)];
    if (kv.tt == VT_STR) { /* a string register, compared with the constant as EQ does */
        INS2(a, CMP, TAG(ra), I(VT_STR));
        JMP(a, JNZ, target_label(c, pc, no));
        INS2(a, MOV, R(RDI), VAL(ra));
        load_imm64(c, RSI, (uint64_t)(uintptr_t)kv.u.s);
        str_equal(c, pc, yes, no);
        return;
    }
    if (kv.tt <= VT_TRUE) { /* nil or a boolean: equal iff the tags are */
        INS2(a, CMP, TAG(ra), I(kv.tt));
        cond_branch(c, pc, i, ZYDIS_MNEMONIC_JZ);
        return;
    }
    /* a number: an integer or a float register compares numerically (EQK is raw
     * equality, which for numbers is the same); any other type is not equal */
    int flt = jit_new_label(a);
    INS2(a, CMP, TAG(ra), I(VT_INT));
    JMP(a, JNZ, flt);
    if (kv.tt == VT_INT && fits32(kv.u.i)) {
        INS2(a, CMP, VAL(ra), I(kv.u.i));
        cond_branch(c, pc, i, ZYDIS_MNEMONIC_JZ);
    } else {
        /* an integer register against a float or a wide integer constant: the
         * interpreter's exact mixed comparison */
        JMP(a, JMP, STEP(c, pc));
    }
    jit_bind(a, flt);
    INS2(a, CMP, TAG(ra), I(VT_FLOAT));
    JMP(a, JNZ, target_label(c, pc, no));
    if (kv.tt == VT_INT && (kv.u.i > (1LL << 53) || kv.u.i < -(1LL << 53))) {
        JMP(a, JMP, STEP(c, pc)); /* (double)k would round */
        return;
    }
    jit_load_num(c, XMM1, src_const(&kv), pc);
    INS2(a, UCOMISD, R(XMM1), VAL(ra));
    JMP(a, JP, target_label(c, pc, no));
    JMP(a, JZ, target_label(c, pc, yes));
    JMP(a, JMP, target_label(c, pc, no));
}

/* EQK: nil, boolean, number and string constants. */
bool tpl_eqk_ok(const Comp *c, int pc) {
    uint32_t tt = c->p->k[vm_b(c->p->code[pc])].tt;
    return (tt <= VT_FLOAT || tt == VT_STR) && tpl_cond_ok(c, pc);
}

/* TEST */
void tpl_test(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    INS2(a, CMP, TAG(ra), I(VT_FALSE));
    cond_branch(c, pc, i, ZYDIS_MNEMONIC_JNBE); /* truthy: tag above VT_FALSE */
}

/* TESTSET */
void tpl_testset(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* truthy(R[B]) ~= k: skip the JMP; else R[A] := R[B] and take it */
    int t, f;
    int rb = (int)vm_b(i);
    cond_targets(c, pc, &t, &f);
    INS2(a, CMP, TAG(rb), I(VT_FALSE));
    if (vm_k(i))
        JMP(a, JBE, target_label(c, pc, f));
    else
        JMP(a, JNBE, target_label(c, pc, f));
    INS2(a, MOVDQA, R(XMM0), WHOLE(rb));
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
    JMP(a, JMP, target_label(c, pc, t));
}
