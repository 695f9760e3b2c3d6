/* jit_asm.c: the Zydis encoder wrapper, the one place machine code bytes are produced. */
#include "jit_asm.h"

#include <stddef.h>
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

/* ---- the encodings already made ----------------------------------------------------------
 *
 * Zydis's encoder searches its tables for a definition that matches the request's operands
 * at every instruction, some thousands of machine instructions each; a function's code is
 * a few hundred to a few thousand instructions, most of them repeated from template to
 * template and from function to function (the same registers, the same struct offsets).
 * Sampling pays it twice per function (the plain code and the instrumented twin: jit/README.md,
 * "Sampled instrumentation"), at a fixed cost that made up about half of what a 5% sampling
 * run cost the program. So each encoding is kept, keyed by the whole request, and a request
 * seen before copies its bytes. The key is compared whole (memcmp), never trusted by its
 * hash alone: a collision only evicts. Every request is zeroed before it is filled (jit_ins,
 * jit_jump, jit_step.c), so equal requests are equal bytes, padding included.
 *
 * The table is one for the process, direct-mapped, allocated at the first compilation: the
 * assembler runs only inside compile_locked, under the JIT's lock (jit_compile.c), which is
 * what makes the table safe to share. Requests that fail to encode are never stored. */
enum { ENC_SLOTS = 4096 }; /* json's and richards' distinct requests fit with few evictions */
typedef struct EncSlot {
    ZydisEncoderRequest req;
    uint8_t len; /* 0: empty */
    uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
} EncSlot;
static EncSlot *enc_cache;
static bool enc_cache_off; /* its allocation failed: encode every request */

/* The slot of [r]: a hash of its fields up to its last operand (what varies from request to
 * request; the rest only decides equality, which memcmp checks whole). */
static size_t request_slot(const ZydisEncoderRequest *r) {
    const unsigned char *p = (const unsigned char *)r;
    size_t n = offsetof(ZydisEncoderRequest, operands) + (size_t)r->operand_count * sizeof(ZydisEncoderOperand);
    if (n > sizeof *r) n = sizeof *r;
    uint64_t h = 0x9e3779b97f4a7c15u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
    }
    h ^= h >> 32;
    return (size_t)(h & (ENC_SLOTS - 1));
}

/* `mov r64, imm64` with a value that no 32-bit immediate holds (the addresses compiled code
 * loads: load_imm64): REX.W (+B for r8-r15), B8+r, the 8 bytes; the one encoding there is,
 * made here because each such address is a new request for the table above. 0 if [r] is
 * not that. */
static size_t encode_mov_imm64(const ZydisEncoderRequest *r, uint8_t *out) {
    if (r->mnemonic != ZYDIS_MNEMONIC_MOV || r->operand_count != 2 || r->prefixes != 0 ||
        r->operands[0].type != ZYDIS_OPERAND_TYPE_REGISTER || r->operands[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
        return 0;
    int64_t v = r->operands[1].imm.s;
    if (v >= INT32_MIN && v <= (int64_t)UINT32_MAX) return 0; /* Zydis picks a shorter form */
    ZydisRegister reg = r->operands[0].reg.value;
    if (reg < ZYDIS_REGISTER_RAX || reg > ZYDIS_REGISTER_R15) return 0;
    unsigned id = (unsigned)(reg - ZYDIS_REGISTER_RAX); /* RAX .. R15 are consecutive in Zydis's order */
    out[0] = (uint8_t)(0x48 | (id >> 3));
    out[1] = (uint8_t)(0xB8 + (id & 7));
    memcpy(out + 2, &v, 8);
    return 10;
}

void jit_encode(Asm *a, ZydisEncoderRequest *r) {
    reserve(a, ZYDIS_MAX_INSTRUCTION_LENGTH);
    if (a->failed) return;
    ZyanUSize n = ZYDIS_MAX_INSTRUCTION_LENGTH;
    r->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    if ((n = encode_mov_imm64(r, a->buf + a->len)) != 0) {
        a->len += n;
        return;
    }
    n = ZYDIS_MAX_INSTRUCTION_LENGTH;
    if (enc_cache == NULL && !enc_cache_off) {
        enc_cache = calloc(ENC_SLOTS, sizeof *enc_cache);
        enc_cache_off = enc_cache == NULL;
    }
    EncSlot *slot = enc_cache ? &enc_cache[request_slot(r)] : NULL;
    if (slot != NULL && slot->len != 0 && memcmp(&slot->req, r, sizeof *r) == 0) {
        memcpy(a->buf + a->len, slot->bytes, slot->len);
        a->len += slot->len;
        return;
    }
    if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(r, a->buf + a->len, &n))) {
        if (!a->failed) {
            a->why = "an instruction could not be encoded";
            a->whymn = (int)r->mnemonic;
        }
        a->failed = true;
        return;
    }
    if (slot != NULL) {
        slot->req = *r;
        slot->len = (uint8_t)n;
        memcpy(slot->bytes, a->buf + a->len, n);
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
