/* jit_tpl_arith.c: the templates of arithmetic, bitwise, unary and length operations. */
#include "jit_internal.h"

#include "vm_string.h"
#include "vm_table.h"

/* xmm := the operand as a double; a non-number register is stepped at [pc]. A register
 * whose type is known before [pc] (jit_types.c) is loaded without its tests. */
void jit_load_num(Comp *c, ZydisRegister xmm, Src s, int pc) {
    Asm *a = &c->a;
    if (s.reg < 0) {
        double d = s.isint ? (double)s.i : s.f;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        load_imm64(c, RAX, bits);
        INS2(a, MOVQ, R(xmm), R(RAX));
        return;
    }
    uint8_t k = jit_kt(c, pc, s.reg);
    if (k == KT_FLT) {
        INS2(a, MOVSD, R(xmm), VAL(s.reg));
        return;
    }
    int notflt = jit_new_label(a), done = jit_new_label(a);
    if (k != KT_INT) {
        INS2(a, CMP, TAG(s.reg), I(VT_FLOAT));
        JMP(a, JNZ, notflt);
        INS2(a, MOVSD, R(xmm), VAL(s.reg));
        JMP(a, JMP, done);
    }
    jit_bind(a, notflt);
    if (k == KT_NONE) { /* KT_NUM: not a float, so an integer */
        INS2(a, CMP, TAG(s.reg), I(VT_INT));
        JMP(a, JNZ, STEP(c, pc));
    }
    INS2(a, PXOR, R(xmm), R(xmm)); /* cvtsi2sd writes only the low half: break the dependency */
    INS2(a, CVTSI2SD, R(xmm), VAL(s.reg));
    jit_bind(a, done);
}

/* The known type of an operand before [pc]: a constant's own, a register's from the
 * analysis. */
static uint8_t src_kt(const Comp *c, int pc, Src s) {
    if (s.reg < 0) return s.isint ? KT_INT : KT_FLT;
    return jit_kt(c, pc, s.reg);
}

/* R[ra]'s tag := [tag], unless it is known to be that already (a tag store whose outcome is
 * known: the slot's tag is not written by anything else meanwhile, jit_types.c). */
static void store_tag(Comp *c, int pc, int ra, uint8_t kt) {
    if (jit_kt(c, pc, ra) == kt) return;
    INS2(&c->a, MOV, TAG(ra), I(kt == KT_INT ? VT_INT : VT_FLOAT));
}

/* rax := rax OP operand (integer). */
static void int_op(Comp *c, ZydisMnemonic mn, Src s) {
    if (s.reg >= 0)
        jit_ins(&c->a, mn, 2, R(RAX), VAL(s.reg));
    else if (fits32(s.i) && mn == ZYDIS_MNEMONIC_IMUL)
        jit_ins3(&c->a, mn, R(RAX), R(RAX), I(s.i)); /* imul has no two-operand immediate form */
    else if (fits32(s.i))
        jit_ins(&c->a, mn, 2, R(RAX), I(s.i));
    else {
        load_imm64(c, RCX, (uint64_t)s.i);
        jit_ins(&c->a, mn, 2, R(RAX), R(RCX));
    }
}

/* R[a] := b OP c with the interpreter's number fast paths: int OP int (wrapping) when
 * [imn] is given, else (or for any mix with a float) double OP double; anything else is stepped
 * to the interpreter (string coercion, metamethods, errors). */
static void arith(Comp *c, int pc, int ra, Src b, Src cs, ZydisMnemonic imn, ZydisMnemonic fmn) {
    Asm *a = &c->a;
    int flt = jit_new_label(a), done = jit_new_label(a);
    uint8_t kb = src_kt(c, pc, b), kc = src_kt(c, pc, cs);
    /* the integer path, unless an operand is known (or constant) float; a test only for what
     * is not known to be an integer */
    bool intpath = imn != ZYDIS_MNEMONIC_INVALID && kb != KT_FLT && kc != KT_FLT;
    if (intpath) {
        if (kb != KT_INT) {
            INS2(a, CMP, TAG(b.reg), I(VT_INT));
            JMP(a, JNZ, flt);
        }
        if (kc != KT_INT) {
            INS2(a, CMP, TAG(cs.reg), I(VT_INT));
            JMP(a, JNZ, flt);
        }
        INS2(a, MOV, R(RAX), VAL(b.reg));
        int_op(c, imn, cs);
        INS2(a, MOV, VAL(ra), R(RAX));
        store_tag(c, pc, ra, KT_INT);
        if (kb == KT_INT && kc == KT_INT) return; /* no other path */
        JMP(a, JMP, done);
    }
    jit_bind(a, flt);
    if (fmn == ZYDIS_MNEMONIC_INVALID) {
        JMP(a, JMP, STEP(c, pc));
    } else {
        jit_load_num(c, XMM0, b, pc);
        jit_load_num(c, XMM1, cs, pc);
        jit_ins(a, fmn, 2, R(XMM0), R(XMM1));
        INS2(a, MOVSD, VAL(ra), R(XMM0));
        store_tag(c, pc, ra, KT_FLT);
    }
    jit_bind(a, done);
}

/* ADDI */
void tpl_addi(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    arith(c, pc, ra, src_reg((int)vm_b(i)), src_int(vm_sc(i)), ZYDIS_MNEMONIC_ADD, ZYDIS_MNEMONIC_ADDSD);
}

/* ADD, SUB, MUL, DIV, BAND, BOR, BXOR and their K forms */
void tpl_arith(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    unsigned op = vm_op(i);
    bool konst = op >= OP_ADDK && op <= OP_BXORK;
    Src cs = konst ? src_const(&p->k[vm_c(i)]) : src_reg((int)vm_c(i));
    ZydisMnemonic imn = ZYDIS_MNEMONIC_INVALID, fmn = ZYDIS_MNEMONIC_INVALID;
    switch (op) {
    case OP_ADD: case OP_ADDK: imn = ZYDIS_MNEMONIC_ADD; fmn = ZYDIS_MNEMONIC_ADDSD; break;
    case OP_SUB: case OP_SUBK: imn = ZYDIS_MNEMONIC_SUB; fmn = ZYDIS_MNEMONIC_SUBSD; break;
    case OP_MUL: case OP_MULK: imn = ZYDIS_MNEMONIC_IMUL; fmn = ZYDIS_MNEMONIC_MULSD; break;
    case OP_DIV: case OP_DIVK: fmn = ZYDIS_MNEMONIC_DIVSD; break; /* '/' is always float */
    case OP_BAND: case OP_BANDK: imn = ZYDIS_MNEMONIC_AND; break;  /* floats: coercion, stepped */
    case OP_BOR: case OP_BORK: imn = ZYDIS_MNEMONIC_OR; break;
    default: imn = ZYDIS_MNEMONIC_XOR; break;
    }
    /* x - 0 (the integer constant) is x + 0 for floats, as in the interpreter (SUBK):
     * -0.0 - 0 is 0.0 in lua5.4 */
    if (op == OP_SUBK && p->k[vm_c(i)].tt == VT_INT && p->k[vm_c(i)].u.i == 0) fmn = ZYDIS_MNEMONIC_ADDSD;
    arith(c, pc, ra, src_reg((int)vm_b(i)), cs, imn, fmn);
}

/* ADDK, SUBK, MULK, DIVK: an integer or float constant. */
bool tpl_arithk_ok(const Comp *c, int pc) {
    uint32_t tt = c->p->k[vm_c(c->p->code[pc])].tt;
    return tt == VT_INT || tt == VT_FLOAT;
}

/* BANDK, BORK, BXORK: an integer constant (a float one is coerced: stepped). */
bool tpl_bitk_ok(const Comp *c, int pc) { return c->p->k[vm_c(c->p->code[pc])].tt == VT_INT; }

/* MOD, MODK */
void tpl_mod(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* Integer % integer, floored as in Lua: the remainder of idiv takes the dividend's
     * sign, so a non-zero one of the other sign than the divisor gets the divisor added.
     * A positive power-of-two constant is a mask. Floats, a zero divisor (an error) and
     * -1 (INT_MIN % -1 traps in idiv) go to the interpreter. */
    int store = jit_new_label(a);
    if (jit_kt(c, pc, (int)vm_b(i)) != KT_INT) {
        INS2(a, CMP, TAG(vm_b(i)), I(VT_INT));
        JMP(a, JNZ, STEP(c, pc));
    }
    INS2(a, MOV, R(RAX), VAL(vm_b(i)));
    if (vm_op(i) == OP_MODK) {
        int64_t d = p->k[vm_c(i)].u.i;
        if (d > 0 && (d & (d - 1)) == 0 && fits32(d - 1)) {
            INS2(a, AND, R(RAX), I(d - 1));
            INS2(a, MOV, R(RDX), R(RAX));
            JMP(a, JMP, store);
        }
        load_imm64(c, RCX, (uint64_t)d);
    } else {
        if (jit_kt(c, pc, (int)vm_c(i)) != KT_INT) {
            INS2(a, CMP, TAG(vm_c(i)), I(VT_INT));
            JMP(a, JNZ, STEP(c, pc));
        }
        INS2(a, MOV, R(RCX), VAL(vm_c(i)));
        INS2(a, LEA, R(RDX), M(RCX, 1, 8));
        INS2(a, CMP, R(RDX), I(1));
        JMP(a, JBE, STEP(c, pc)); /* divisor 0 or -1 */
    }
    INS0(a, CQO);
    INS1(a, IDIV, R(RCX));
    INS2(a, TEST, R(RDX), R(RDX));
    JMP(a, JZ, store);
    INS2(a, MOV, R(RAX), R(RDX));
    INS2(a, XOR, R(RAX), R(RCX));
    JMP(a, JNS, store);
    INS2(a, ADD, R(RDX), R(RCX));
    jit_bind(a, store);
    INS2(a, MOV, VAL(ra), R(RDX));
    store_tag(c, pc, ra, KT_INT);
}

/* MODK: an integer constant other than 0 and -1 (errors, overflow: the interpreter). */
bool tpl_modk_ok(const Comp *c, int pc) {
    const Value *kc = &c->p->k[vm_c(c->p->code[pc])];
    return kc->tt == VT_INT && kc->u.i != 0 && kc->u.i != -1;
}

/* LEN */
void tpl_len(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* a string's length, or a table's border (vm_table_len, which neither raises nor
     * allocates) when it has no metatable; __len and errors are stepped */
    int rb = (int)vm_b(i), tab = jit_new_label(a), store = jit_new_label(a);
    INS2(a, CMP, TAG(rb), I(VT_STR));
    JMP(a, JNZ, tab);
    INS2(a, MOV, R(RAX), VAL(rb));
    INS2(a, MOV, R(RAX), M(RAX, offsetof(String, len), 8));
    JMP(a, JMP, store);
    jit_bind(a, tab);
    INS2(a, CMP, TAG(rb), I(VT_TABLE));
    JMP(a, JNZ, STEP(c, pc));
    INS2(a, MOV, R(RDI), VAL(rb));
    INS2(a, CMP, M(RDI, offsetof(Table, meta), 8), I(0));
    JMP(a, JNZ, STEP(c, pc));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_len);
    INS1(a, CALL, R(RAX));
    jit_bind(a, store);
    INS2(a, MOV, VAL(ra), R(RAX));
    INS2(a, MOV, TAG(ra), I(VT_INT));
}

/* UNM */
void tpl_unm(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int flt = jit_new_label(a), done = jit_new_label(a);
    int rb = (int)vm_b(i);
    uint8_t kb = jit_kt(c, pc, rb);
    if (kb != KT_FLT) {
        if (kb != KT_INT) {
            INS2(a, CMP, TAG(rb), I(VT_INT));
            JMP(a, JNZ, flt);
        }
        INS2(a, MOV, R(RAX), VAL(rb));
        INS1(a, NEG, R(RAX));
        INS2(a, MOV, VAL(ra), R(RAX));
        store_tag(c, pc, ra, KT_INT);
        if (kb == KT_INT) return;
        JMP(a, JMP, done);
    }
    jit_bind(a, flt);
    if (kb == KT_NONE) { /* KT_NUM, not an integer: a float */
        INS2(a, CMP, TAG(rb), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
    }
    INS2(a, MOV, R(RAX), VAL(rb));
    INS2(a, BTC, R(RAX), I(63)); /* flip the sign bit: -x for every double, NaN included */
    INS2(a, MOV, VAL(ra), R(RAX));
    store_tag(c, pc, ra, KT_FLT);
    jit_bind(a, done);
}

/* NOT */
void tpl_not(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* falsy (tag <= VT_FALSE) -> VT_TRUE, else VT_FALSE (VT_TRUE == VT_FALSE + 1) */
    INS2(a, XOR, R(EAX), R(EAX));
    INS2(a, CMP, TAG(vm_b(i)), I(VT_FALSE));
    INS1(a, SETBE, R(ZYDIS_REGISTER_AL));
    INS2(a, ADD, R(EAX), I(VT_FALSE));
    INS2(a, MOV, TAG(ra), R(EAX));
}
