/* jit_tpl_move.c: the templates of moves and loads of constants (MOVE, LOADK .. LOADTRUE). */
#include "jit_internal.h"

/* MOVE */
void tpl_move(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    INS2(a, MOVDQA, R(XMM0), WHOLE(vm_b(i)));
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
}

/* LOADK */
void tpl_loadk(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* the constant table is immutable and lives as long as the Proto */
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&p->k[vm_bx(i)]);
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
}

/* LOADI */
void tpl_loadi(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    INS2(a, MOV, VAL(ra), I(vm_sbx(i)));
    if (jit_kt(c, pc, ra) != KT_INT) INS2(a, MOV, TAG(ra), I(VT_INT)); /* else known (jit_types.c) */
}

/* LOADF */
void tpl_loadf(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    double d = (double)vm_sbx(i);
    uint64_t bits;
    memcpy(&bits, &d, 8);
    load_imm64(c, RAX, bits);
    INS2(a, MOV, VAL(ra), R(RAX));
    if (jit_kt(c, pc, ra) != KT_FLT) INS2(a, MOV, TAG(ra), I(VT_FLOAT)); /* else known */
}

/* LOADNIL */
void tpl_loadnil(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    for (int r = ra; r <= ra + (int)vm_b(i); r++) INS2(a, MOV, TAG(r), I(VT_NIL));
}

/* LOADFALSE */
void tpl_loadfalse(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    INS2(a, MOV, TAG(ra), I(VT_FALSE));
}

/* LOADTRUE */
void tpl_loadtrue(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    INS2(a, MOV, TAG(ra), I(VT_TRUE));
}
