/* jit_asm.c: the Zydis encoder wrapper, the one place machine code bytes are produced. */
#include "jit_asm.h"

#include <stdlib.h>

static void reserve(Asm *a, size_t n) {
    if (a->len + n <= a->cap) return;
    size_t cap = a->cap ? a->cap * 2 : 4096;
    while (cap < a->len + n) cap *= 2;
    uint8_t *nb = realloc(a->buf, cap);
    if (nb == NULL) {
        a->failed = true;
        a->len = 0; /* keep going harmlessly; the result is thrown away */
        return;
    }
    a->buf = nb;
    a->cap = cap;
}

void jit_encode(Asm *a, ZydisEncoderRequest *r) {
    reserve(a, ZYDIS_MAX_INSTRUCTION_LENGTH);
    if (a->failed) return;
    ZyanUSize n = ZYDIS_MAX_INSTRUCTION_LENGTH;
    r->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(r, a->buf + a->len, &n))) {
        if (!a->failed) {
            a->why = "an instruction could not be encoded";
            a->whymn = (int)r->mnemonic;
        }
        a->failed = true;
        return;
    }
    a->len += n;
}

void jit_ins(Asm *a, ZydisMnemonic mn, int nops, Op o0, Op o1) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.operand_count = (ZyanU8)nops;
    r.operands[0] = o0;
    r.operands[1] = o1;
    jit_encode(a, &r);
}
void jit_ins3(Asm *a, ZydisMnemonic mn, Op o0, Op o1, Op o2) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.operand_count = 3;
    r.operands[0] = o0;
    r.operands[1] = o1;
    r.operands[2] = o2;
    jit_encode(a, &r);
}

int jit_new_label(Asm *a) {
    if (a->nlabel == a->caplabel) {
        int cap = a->caplabel ? a->caplabel * 2 : 256;
        long *nl = realloc(a->label, (size_t)cap * sizeof *nl);
        if (nl == NULL) {
            a->failed = true;
            return 0;
        }
        a->label = nl;
        a->caplabel = cap;
    }
    a->label[a->nlabel] = -1;
    return a->nlabel++;
}

void jit_bind(Asm *a, int l) { a->label[l] = (long)a->len; }

/* A jump (JMP or a Jcc) to label [l], always rel32 so that it can be patched. */
void jit_jump(Asm *a, ZydisMnemonic mn, int l) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
    r.branch_width = ZYDIS_BRANCH_WIDTH_32;
    r.operand_count = 1;
    r.operands[0] = I(0);
    jit_encode(a, &r);
    if (a->failed) return;
    if (a->nfix == a->capfix) {
        int cap = a->capfix ? a->capfix * 2 : 256;
        Fixup *nf = realloc(a->fix, (size_t)cap * sizeof *nf);
        if (nf == NULL) {
            a->failed = true;
            return;
        }
        a->fix = nf;
        a->capfix = cap;
    }
    a->fix[a->nfix++] = (Fixup){a->len - 4, l};
}

void jit_patch(Asm *a) {
    for (int f = 0; f < a->nfix && !a->failed; f++) {
        long target = a->label[a->fix[f].label];
        if (target < 0) {
            a->why = "a jump to a label never placed";
            a->failed = true; /* a jump to a label never placed: a compiler bug, not run */
            return;
        }
        int32_t rel = (int32_t)(target - (long)(a->fix[f].pos + 4));
        memcpy(a->buf + a->fix[f].pos, &rel, 4);
    }
}
