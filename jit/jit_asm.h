/* jit_asm.h: the Zydis encoder wrapper (private to jit/): operands, instructions, labels and
 * rel32 jumps patched once every label is placed. jit_asm.c is the one place machine code
 * bytes are produced. */
#ifndef JIT_ASM_H
#define JIT_ASM_H

#include <Zydis/Zydis.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct Fixup {
    size_t pos;   /* offset of the rel32 field; the instruction ends at pos + 4 */
    int label;
} Fixup;

typedef struct Asm {
    uint8_t *buf;
    size_t len, cap;
    long *label;      /* offset of each label, -1 while unbound */
    int nlabel, caplabel;
    Fixup *fix;
    int nfix, capfix;
    bool failed;      /* an instruction could not be encoded, or memory ran out */
    const char *why;  /* what failed first, for -Xdump=jit */
    int whymn;        /* the mnemonic that could not be encoded */
} Asm;

typedef ZydisEncoderOperand Op;

/* ---- operands: R(register), M([base + disp], size bytes), MX([base + index*scale + disp]), I(imm) */

/* An operand of [type], every other field zero (the encoder reads them). */
static inline Op op_new(ZydisOperandType type) {
    Op o;
    memset(&o, 0, sizeof o);
    o.type = type;
    return o;
}

static inline Op R(ZydisRegister r) {
    Op o = op_new(ZYDIS_OPERAND_TYPE_REGISTER);
    o.reg.value = r;
    return o;
}

static inline Op M(ZydisRegister base, int64_t disp, unsigned size) {
    Op o = op_new(ZYDIS_OPERAND_TYPE_MEMORY);
    o.mem.base = base;
    o.mem.displacement = disp;
    o.mem.size = (ZyanU16)size;
    return o;
}

/* [base + index*scale + disp] */
static inline Op MX(ZydisRegister base, ZydisRegister index, unsigned scale, int64_t disp, unsigned size) {
    Op o = M(base, disp, size);
    o.mem.index = index;
    o.mem.scale = (ZyanU8)scale;
    return o;
}

static inline Op I(int64_t v) {
    Op o = op_new(ZYDIS_OPERAND_TYPE_IMMEDIATE);
    o.imm.s = v;
    return o;
}

/* ---- instructions ---------------------------------------------------------------------- */

/* Encode the request [r] at the end of [a]'s buffer (64-bit mode): Zydis's bytes, copied
 * from an equal request encoded before when there is one (jit_asm.c). [r] must have been
 * zeroed before it was filled (equal requests are equal bytes). Only while compiling, under
 * the JIT's lock (the table of encodings is shared). On failure [a] is marked failed (why,
 * whymn say what) and nothing more is written: callers need not check. */
void jit_encode(Asm *a, ZydisEncoderRequest *r);

/* [mn] with [nops] (0 to 2) of the operands [o0], [o1]; jit_ins3 with three. */
void jit_ins(Asm *a, ZydisMnemonic mn, int nops, Op o0, Op o1);
void jit_ins3(Asm *a, ZydisMnemonic mn, Op o0, Op o1, Op o2);
#define INS2(a, mn, x, y) jit_ins((a), ZYDIS_MNEMONIC_##mn, 2, (x), (y))
#define INS1(a, mn, x) jit_ins((a), ZYDIS_MNEMONIC_##mn, 1, (x), (x))
#define INS0(a, mn) jit_ins((a), ZYDIS_MNEMONIC_##mn, 0, I(0), I(0))

/* ---- labels and jumps -------------------------------------------------------------------- */

/* A new label, unbound (placed later by jit_bind); 0 with [a] failed if memory ran out. */
int jit_new_label(Asm *a);

/* Place label [l] at the current end of the code. */
void jit_bind(Asm *a, int l);

/* A jump (JMP or a Jcc [mn]) to label [l], always rel32 so that it can be patched. */
void jit_jump(Asm *a, ZydisMnemonic mn, int l);
#define JMP(a, cc, l) jit_jump((a), ZYDIS_MNEMONIC_##cc, (l))

/* Fill in every jump's rel32 once all labels are placed; a label never placed fails [a]. */
void jit_patch(Asm *a);

#endif
