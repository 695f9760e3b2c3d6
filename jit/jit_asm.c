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
 * run cost the program. So each encoding is kept, and a request seen before copies its bytes.
 *
 * The table's key is not the request (400 bytes to zero, hash and compare, which cost about
 * 500 machine instructions an instruction, 15 M on bench/suite/json.lua's twins at scale
 * 0.25) but the few fields this assembler ever sets, packed in 8 words (EncKey): the
 * mnemonic, operand count, prefixes, branch type and width, and each operand's type,
 * register, base, index, scale, size and displacement or immediate. Every request and
 * operand is made zeroed, then only those fields are set (jit_asm.h's constructors, jit_ins,
 * jit_ins3, jit_jump and the fs: requests of jit_step.c): so the key says everything the
 * request says, requests with equal keys are equal, and a miss rebuilds the request from the
 * key (request_of) for Zydis. The key is compared whole, never trusted by its hash alone: a
 * collision only evicts.
 *
 * The table is one for the process, direct-mapped, allocated at the first compilation: the
 * assembler runs only inside compile_locked, under the JIT's lock (jit_compile.c), which is
 * what makes the table safe to share. Requests that fail to encode are never stored. */
enum { ENC_SLOTS = 4096 }; /* json's and richards' distinct requests fit with few evictions */
enum { ENC_OPS = 3 };      /* jit_ins3: the most operands a request here has */
typedef struct EncKey {
    uint64_t head;        /* mnemonic | operand count << 16 | branch type << 24 | branch width << 32 */
    uint64_t prefixes;
    uint64_t op[ENC_OPS][2]; /* type | scale << 8 | size << 16 | register or base << 32 | index << 48;
                                the displacement or the immediate. Unused operands: 0, 0 */
} EncKey;
_Static_assert(ZYDIS_REGISTER_MAX_VALUE < (1 << 16) && ZYDIS_MNEMONIC_MAX_VALUE < (1 << 16) &&
                   ZYDIS_OPERAND_TYPE_MAX_VALUE < (1 << 8),
               "EncKey's fields hold every value");
typedef struct EncSlot {
    EncKey key;
    uint8_t len; /* 0: empty */
    uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
} EncSlot;
static EncSlot *enc_cache;
static bool enc_cache_off; /* its allocation failed: encode every request */

static void key_op(uint64_t *w, const Op *o) {
    switch (o->type) {
    case ZYDIS_OPERAND_TYPE_REGISTER:
        w[0] = (uint64_t)o->type | (uint64_t)o->reg.value << 32;
        w[1] = 0;
        break;
    case ZYDIS_OPERAND_TYPE_MEMORY:
        w[0] = (uint64_t)o->type | (uint64_t)o->mem.scale << 8 | (uint64_t)o->mem.size << 16 |
               (uint64_t)o->mem.base << 32 | (uint64_t)o->mem.index << 48;
        w[1] = (uint64_t)o->mem.displacement;
        break;
    case ZYDIS_OPERAND_TYPE_IMMEDIATE:
        w[0] = (uint64_t)o->type;
        w[1] = o->imm.u;
        break;
    default: /* not made here: one the encoder will refuse (the key only has to be exact) */
        w[0] = (uint64_t)o->type;
        w[1] = 0;
        break;
    }
}

static void key_head(EncKey *k, ZydisMnemonic mn, int nops) {
    k->head = (uint64_t)mn | (uint64_t)(unsigned)nops << 16;
    k->prefixes = 0;
    memset(k->op, 0, sizeof k->op);
}

/* The request [k] stands for, as its maker would have filled it (zeroed first). */
static void request_of(const EncKey *k, ZydisEncoderRequest *r) {
    memset(r, 0, sizeof *r);
    r->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    r->mnemonic = (ZydisMnemonic)(k->head & 0xffff);
    r->operand_count = (ZyanU8)(k->head >> 16);
    r->branch_type = (ZydisBranchType)(uint8_t)(k->head >> 24);
    r->branch_width = (ZydisBranchWidth)(uint8_t)(k->head >> 32);
    r->prefixes = k->prefixes;
    for (int i = 0; i < ENC_OPS && i < r->operand_count; i++) {
        ZydisEncoderOperand *o = &r->operands[i];
        uint64_t w = k->op[i][0];
        o->type = (ZydisOperandType)(uint8_t)w;
        if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
            o->reg.value = (ZydisRegister)(uint16_t)(w >> 32);
        } else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY) {
            o->mem.scale = (ZyanU8)(w >> 8);
            o->mem.size = (ZyanU16)(w >> 16);
            o->mem.base = (ZydisRegister)(uint16_t)(w >> 32);
            o->mem.index = (ZydisRegister)(uint16_t)(w >> 48);
            o->mem.displacement = (ZyanI64)k->op[i][1];
        } else if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
            o->imm.u = k->op[i][1];
        }
    }
}

/* The slot of [k]: a multiply-xorshift hash of its words. */
static size_t key_slot(const EncKey *k) {
    const uint64_t *w = (const uint64_t *)k;
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < sizeof *k / 8; i++) {
        h = (h ^ w[i]) * 0xff51afd7ed558ccdu;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    return (size_t)(h & (ENC_SLOTS - 1));
}

static bool key_equal(const EncKey *x, const EncKey *y) {
    const uint64_t *a = (const uint64_t *)x, *b = (const uint64_t *)y;
    uint64_t d = 0;
    for (size_t i = 0; i < sizeof *x / 8; i++) d |= a[i] ^ b[i];
    return d == 0;
}

/* `mov r64, imm64` with a value that no 32-bit immediate holds (the addresses compiled code
 * loads: load_imm64): REX.W (+B for r8-r15), B8+r, the 8 bytes; the one encoding there is,
 * made here because each such address is a new key for the table above. 0 if [k] is not
 * that. */
static size_t encode_mov_imm64(const EncKey *k, uint8_t *out) {
    if (k->head != ((uint64_t)ZYDIS_MNEMONIC_MOV | 2u << 16) || k->prefixes != 0 ||
        (uint8_t)k->op[0][0] != ZYDIS_OPERAND_TYPE_REGISTER || k->op[1][0] != ZYDIS_OPERAND_TYPE_IMMEDIATE)
        return 0;
    int64_t v = (int64_t)k->op[1][1];
    if (v >= INT32_MIN && v <= (int64_t)UINT32_MAX) return 0; /* Zydis picks a shorter form */
    ZydisRegister reg = (ZydisRegister)(uint16_t)(k->op[0][0] >> 32);
    if (reg < ZYDIS_REGISTER_RAX || reg > ZYDIS_REGISTER_R15) return 0;
    unsigned id = (unsigned)(reg - ZYDIS_REGISTER_RAX); /* RAX .. R15 are consecutive in Zydis's order */
    out[0] = (uint8_t)(0x48 | (id >> 3));
    out[1] = (uint8_t)(0xB8 + (id & 7));
    memcpy(out + 2, &v, 8);
    return 10;
}

/* The instruction [k] at the end of [a]'s buffer: from the table, or encoded by Zydis. */
static void emit(Asm *a, const EncKey *k) {
    reserve(a, ZYDIS_MAX_INSTRUCTION_LENGTH);
    if (a->failed) return;
    ZyanUSize n;
    if ((n = encode_mov_imm64(k, a->buf + a->len)) != 0) {
        a->len += n;
        return;
    }
    if (enc_cache == NULL && !enc_cache_off) {
        enc_cache = calloc(ENC_SLOTS, sizeof *enc_cache);
        enc_cache_off = enc_cache == NULL;
    }
    EncSlot *slot = enc_cache ? &enc_cache[key_slot(k)] : NULL;
    if (slot != NULL && slot->len != 0 && key_equal(&slot->key, k)) {
        memcpy(a->buf + a->len, slot->bytes, slot->len);
        a->len += slot->len;
        return;
    }
    ZydisEncoderRequest r;
    request_of(k, &r);
    n = ZYDIS_MAX_INSTRUCTION_LENGTH;
    if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&r, a->buf + a->len, &n))) {
        if (!a->failed) {
            a->why = "an instruction could not be encoded";
            a->whymn = (int)r.mnemonic;
        }
        a->failed = true;
        return;
    }
    if (slot != NULL) {
        slot->key = *k;
        slot->len = (uint8_t)n;
        memcpy(slot->bytes, a->buf + a->len, n);
    }
    a->len += n;
}

void jit_encode(Asm *a, ZydisEncoderRequest *r) {
    EncKey k;
    key_head(&k, r->mnemonic, r->operand_count);
    k.head |= (uint64_t)(uint8_t)r->branch_type << 24 | (uint64_t)(uint8_t)r->branch_width << 32;
    k.prefixes = r->prefixes;
    for (int i = 0; i < ENC_OPS && i < r->operand_count; i++) key_op(k.op[i], &r->operands[i]);
    if (r->operand_count > ENC_OPS) k.head = ZYDIS_MNEMONIC_INVALID; /* never made here: refused */
    emit(a, &k);
}

void jit_ins(Asm *a, ZydisMnemonic mn, int nops, Op o0, Op o1) {
    EncKey k;
    key_head(&k, mn, nops);
    if (nops > 0) key_op(k.op[0], &o0);
    if (nops > 1) key_op(k.op[1], &o1);
    emit(a, &k);
}
void jit_ins3(Asm *a, ZydisMnemonic mn, Op o0, Op o1, Op o2) {
    EncKey k;
    key_head(&k, mn, 3);
    key_op(k.op[0], &o0);
    key_op(k.op[1], &o1);
    key_op(k.op[2], &o2);
    emit(a, &k);
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
    EncKey k; /* the request: mn, near, rel32, one immediate 0 */
    key_head(&k, mn, 1);
    k.head |= (uint64_t)ZYDIS_BRANCH_TYPE_NEAR << 24 | (uint64_t)ZYDIS_BRANCH_WIDTH_32 << 32;
    k.op[0][0] = ZYDIS_OPERAND_TYPE_IMMEDIATE;
    emit(a, &k);
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
