/* jit_ic.c: per-site inline caches of string-key field accesses (GETFIELD, GETTABUP, SELF,
 * SETFIELD, SETTABUP): the cache of a site, the machine code that probes tables through it
 * (the templates in jit_tpl_table.c use it for the indexed table; the __index chain walker
 * below for the tables up its chain) and the miss handlers in C that refill it.
 *
 * What a cache remembers is where its key sat, as a position (hash + nodes stepped over from
 * the home node, vm_table_getstr_at), per level of the __index chain, and where "__index"
 * sat in each metatable. A probe through it is the first probe of an ordinary lookup moved
 * to the remembered node: the table's mask and block read as every lookup reads them, the
 * node's key read whole and accepted only if it is the site's own interned key. Nothing is
 * assumed from an earlier run of the site, so there is nothing to invalidate: a table that
 * grew, a key removed or moved, another metatable, an __index replaced, a class given the
 * key lower down the chain, all show up as a miss or as a different but correct answer on
 * the next execution. What makes the chain walk sound is the proof, at every level passed,
 * that the key is not in that table: the key's node holds nil there (a dead key), or the
 * block's key filter has no bit for its hash (TabNodes.keys, vm_table.h), which every
 * insertion sets before it stores its key. Anything else is a miss.
 *
 * Threads: a cache is shared by every thread that runs the function, and is rewritten by
 * their miss handlers with relaxed 32-bit stores (any value is safe: positions are masked
 * and checked). Table reads follow vm_table.c's "Races" rules: hmask before node, whole-key
 * and whole-value loads, the block's own filter. A racing program sees what a racing
 * interpreter would: some order of the stores.
 *
 * Rejected: caching pointers (the table, its block, the metatable) as shapes are cached
 * elsewhere: tables have no shapes here, a block pointer is reused after gc_free, and every
 * cached pointer would have to be kept alive or the cache flushed by the collector. A
 * position needs neither. Patching code per site (W^X forbids writing published code). */
#include "jit_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_string.h"
#include "vm_table.h"

/* -Xstats: sites given a cache at compilation (under the JIT's lock), misses by reason (any thread:
 * relaxed loads and stores, which may lose counts under threads but are not a data race),
 * and reads the interpreter had to finish (stepped). */
static uint64_t ic_sites, ic_missed[IC_MISS_N], ic_stepped;
static const char *const ic_why[IC_MISS_N] = {
    "key not at its node", "__index not at its node", "__index not a table",
    "key not at its node up the chain", "chain deeper than 4", "stored key not at its node",
};
static inline void count(uint64_t *n) { __atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED); }

/* The node at position [where] of table [t] (see jit_internal.h). */
void jit_ic_node(Comp *c, ZydisRegister t, Op where) {
    Asm *a = &c->a;
    INS2(a, MOV, R(ZYDIS_REGISTER_ECX), where);
    INS2(a, AND, R(ZYDIS_REGISTER_ECX), M(t, offsetof(Table, hmask), 4));
    INS2(a, MOV, R(RAX), M(t, offsetof(Table, node), 8));
    INS2(a, SHL, R(RCX), I(5)); /* sizeof(Node); the 32-bit and zeroed rcx's top half */
    INS2(a, LEA, R(RAX), MX(RAX, RCX, 1, offsetof(TabNodes, n), 8));
}

void jit_ic_key_is(Comp *c, Op key, int miss) {
    Asm *a = &c->a;
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    INS2(a, MOVQ, R(RDX), R(XMM0));
    INS2(a, CMP, R(RDX), key);
    JMP(a, JNZ, miss);
    jit_copy_tag(c, XMM0);
    INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_STR));
    JMP(a, JNZ, miss);
}

void jit_ic_find(Comp *c, ZydisRegister t, int64_t disp, Op h, int notkey, int live, bool copy) {
    Asm *a = &c->a;
    /* The cached position; the one before it, for a site that sees tables of two layouts;
     * the key's home node, where most keys sit (the positions keep displaced ones). */
    Op where[3] = {M(R10, disp, 4), M(R10, disp - (int64_t)offsetof(JitFieldIC, pos) + (int64_t)offsetof(JitFieldIC, alt), 4), h};
    int dead = jit_new_label(a);
    for (int k = 0; k < 3; k++) {
        int next = k < 2 ? jit_new_label(a) : notkey;
        jit_ic_node(c, t, where[k]);
        jit_ic_key_is(c, R(R8), next);
        INS2(a, ADD, R(RAX), I(offsetof(Node, val)));
        if (copy) { /* one load; the test and the reader's store use that copy */
            INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
            jit_copy_tag(c, XMM0);
            INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_NIL));
        } else {
            INS2(a, CMP, M(RAX, offsetof(Value, tt), 4), I(VT_NIL));
        }
        JMP(a, JNZ, live);
        if (k == 2) break;
        JMP(a, JMP, dead);
        jit_bind(a, next);
    }
    jit_bind(a, dead);
}

void jit_ic_site_regs(Comp *c, const JitFieldIC *ic) {
    load_imm64(c, R10, (uint64_t)(uintptr_t)ic);
    load_imm64(c, R8, (uint64_t)(uintptr_t)ic->key);
}

void jit_ic_filter(Comp *c, ZydisRegister t, uint32_t h, int maybe) {
    Asm *a = &c->a;
    unsigned bit = h >> VM_KEYBIT_SHIFT;
    INS2(a, MOV, R(RAX), M(t, offsetof(Table, node), 8));
    INS2(a, TEST, M(RAX, (int64_t)offsetof(TabNodes, keys) + bit / 8, 1), I((int8_t)(1 << (bit % 8)))); /* imm8, sign-extended by the encoder */
    JMP(a, JNZ, maybe);
}

/* The hash of [s] (computed and cached if it was not). */
static uint32_t strhash(String *s) {
    uint32_t h = vm_str_cachedhash(s);
    return h != 0 ? h : vm_string_hash(s);
}

bool jit_ic_wanted(const Comp *c, int pc) {
    switch (vm_op(c->p->code[pc])) {
    case OP_GETFIELD: case OP_GETTABUP: case OP_SETFIELD: case OP_SETTABUP: case OP_SELF: return c->tmpl[pc];
    default: return false;
    }
}

/* The hash of "__index" (of its bytes: the state's interned String is not at hand while
 * compiling), for the home position of the metatables' caches. */
static uint32_t index_hash(void) {
    static const char name[] = "__index";
    union {
        String s;
        char bytes[sizeof(String) + sizeof name];
    } tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.s.h.type = VT_STR;
    tmp.s.len = sizeof name - 1;
    memcpy(tmp.s.data, name, sizeof name);
    return vm_string_hash(&tmp.s);
}

JitFieldIC *jit_ic_site(Comp *c, String *key, bool tabup) {
    if (c->nic >= c->capic) { /* a template takes a cache jit_ic_wanted did not count */
        fprintf(stderr, "jit: more inline caches than field sites (jit_ic_wanted)\n");
        abort();
    }
    JitFieldIC *ic = &c->ic[c->nic++];
    uint32_t h = strhash(key);
    ic->key = key;
    /* home nodes until a miss says otherwise */
    uint32_t hi = index_hash();
    for (int l = 0; l <= VM_INDEX_INLINE; l++) ic->pos[l] = ic->alt[l] = h;
    for (int l = 0; l < VM_INDEX_INLINE; l++) ic->mpos[l] = hi;
    ic->tabup = tabup;
    ic_sites++;
    return ic;
}

/* ======================================================================
 * The chain walker
 * ====================================================================== */

void jit_emit_ic_chain(Comp *c) {
    if (c->icchain < 0) return;
    Asm *a = &c->a;
    int absent = jit_new_label(a), found = jit_new_label(a), miss = jit_new_label(a);
    int why[IC_MISS_N]; /* the chain's reasons; the others belong to the sites */
    for (int w = 0; w < IC_MISS_N; w++) why[w] = w == IC_MISS_KEY || w == IC_MISS_STORE ? -1 : jit_new_label(a);
    jit_bind(a, c->icchain);
    /* Level L (unrolled: the walk is at most VM_INDEX_INLINE tables long, as
     * vm_index_str_at's): rdi is a table where the key's value is nil. */
    for (int l = 0; l < VM_INDEX_INLINE; l++) {
        int notkey = jit_new_label(a), next = jit_new_label(a);
        /* vm_fasttm(S, rdi->meta, TM_INDEX): no metatable, or __index known absent */
        INS2(a, MOV, R(RSI), M(RDI, offsetof(Table, meta), 8));
        INS2(a, TEST, R(RSI), R(RSI));
        JMP(a, JZ, absent);
        INS2(a, TEST, M(RSI, offsetof(Table, h.flags), 1), I(1u << TM_INDEX));
        JMP(a, JNZ, absent);
        /* its "__index" node, by the cache; a table value goes on, anything else misses */
        jit_ic_node(c, RSI, M(R10, (int64_t)offsetof(JitFieldIC, mpos) + 4 * l, 4));
        INS2(a, MOV, R(RCX), M(RS, offsetof(State, g), 8));
        jit_ic_key_is(c, M(RCX, (int64_t)offsetof(Global, tmname) + 8 * TM_INDEX, 8), why[IC_MISS_INDEX]);
        INS2(a, MOVDQA, R(XMM0), M(RAX, offsetof(Node, val), 16));
        jit_copy_tag(c, XMM0);
        INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_TABLE));
        JMP(a, JNZ, why[IC_MISS_NOTTABLE]);
        INS2(a, MOVQ, R(RDI), R(XMM0));
        /* the key in that table: a value ends the walk (xmm0: the copy decided on), a nil
         * goes up */
        jit_ic_find(c, RDI, (int64_t)offsetof(JitFieldIC, pos) + 4 * (l + 1), R(ZYDIS_REGISTER_R11D), notkey, found,
                    true);
        JMP(a, JMP, next);
        /* not at the cached node: absent only if the key filter says so */
        jit_bind(a, notkey);
        INS2(a, MOV, R(RAX), M(RDI, offsetof(Table, node), 8));
        INS2(a, MOV, R(RDX), M(RAX, offsetof(TabNodes, keys), 8));
        INS2(a, MOV, R(ZYDIS_REGISTER_ECX), R(ZYDIS_REGISTER_R11D));
        INS2(a, SHR, R(ZYDIS_REGISTER_ECX), I(VM_KEYBIT_SHIFT));
        INS2(a, BT, R(RDX), R(RCX));
        JMP(a, JB, why[IC_MISS_CHAIN]);
        jit_bind(a, next);
    }
    /* deeper than vm_index_str_at looks: the interpreter's vm_finishget */
    JMP(a, JMP, why[IC_MISS_DEEP]);
    for (int w = 0; w < IC_MISS_N; w++) {
        if (why[w] < 0) continue;
        jit_bind(a, why[w]);
        INS2(a, MOV, R(ZYDIS_REGISTER_ECX), I(w));
        JMP(a, JMP, miss);
    }
    jit_bind(a, miss);
    INS2(a, XOR, R(EAX), R(EAX));
    INS0(a, RET);
    jit_bind(a, absent);
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_absent);
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    jit_bind(a, found);
    INS0(a, RET);
}

/* ======================================================================
 * Miss handlers, and their counts for -Xstats
 * ====================================================================== */

void jit_print_stats(FILE *out) {
    fprintf(out, "[stats] jit: %llu field sites with an inline cache; misses:", (unsigned long long)ic_sites);
    for (int w = 0; w < IC_MISS_N; w++)
        fprintf(out, "%s %s %llu", w ? "," : "", ic_why[w], (unsigned long long)__atomic_load_n(&ic_missed[w], __ATOMIC_RELAXED));
    fprintf(out, "; stepped %llu\n", (unsigned long long)__atomic_load_n(&ic_stepped, __ATOMIC_RELAXED));
    jit_types_print_stats(out); /* the known types' guarded entries (jit_types.c) */
}

/* Positions found by a lookup, stored where they changed (relaxed: any thread may be storing
 * into the same cache; a position is only a hint). With [alt] (the key's positions), a new
 * position moves the one it replaces to alt[], unless alt[] holds the new one already. */
static void keep(uint32_t *cache, uint32_t *alt, const uint32_t *found, int n) {
    for (int l = 0; l < n; l++) {
        uint32_t old = __atomic_load_n(&cache[l], __ATOMIC_RELAXED);
        if (old == found[l]) continue;
        if (alt != NULL && __atomic_load_n(&alt[l], __ATOMIC_RELAXED) != found[l])
            __atomic_store_n(&alt[l], old, __ATOMIC_RELAXED);
        __atomic_store_n(&cache[l], found[l], __ATOMIC_RELAXED);
    }
}

vm_V16 jit_ic_get(State *S, Table *t, JitFieldIC *ic, int why, const void **ev) {
    if ((unsigned)why < IC_MISS_N) count(&ic_missed[why]);
    uint32_t pos[VM_INDEX_INLINE + 1], mpos[VM_INDEX_INLINE];
    for (int l = 0; l <= VM_INDEX_INLINE; l++) pos[l] = __atomic_load_n(&ic->pos[l], __ATOMIC_RELAXED);
    for (int l = 0; l < VM_INDEX_INLINE; l++) mpos[l] = __atomic_load_n(&ic->mpos[l], __ATOMIC_RELAXED);
    const Value *slot = vm_table_getstr_at(t, ic->key, &pos[0]);
    vm_V16 v = vm_load16(slot); /* decided on this copy, not on a second load */
    const void *at = slot;
    if (vm_v16_tt(v) == VT_NIL && t->meta != NULL) {
        /* the interpreter's GETFIELD: the chain of __index tables (GETTABUP: its FINISHGET,
         * whose event is of the table). The walk found s2 holding a value; a racing thread
         * may have removed it since (the chain would then go on past that table): a nil in
         * the copy is stepped, as the interpreter takes its slow path then. */
        const Value *s2 = vm_index_str_at(S, t, ic->key, pos, mpos);
        keep(ic->mpos, NULL, mpos, VM_INDEX_INLINE);
        if (s2 != NULL) v = vm_load16(s2);
        if (s2 == NULL || (vm_v16_tt(v) == VT_NIL && s2 != &vm_absent))
            at = NULL;
        else
            at = s2 == &vm_absent || ic->tabup ? (const void *)t : (const void *)s2;
    }
    keep(ic->pos, ic->alt, pos, VM_INDEX_INLINE + 1);
    if (at == NULL) count(&ic_stepped);
    *ev = at;
    return v;
}

Value *jit_ic_slot(Table *t, JitFieldIC *ic) {
    count(&ic_missed[IC_MISS_STORE]);
    uint32_t pos = __atomic_load_n(&ic->pos[0], __ATOMIC_RELAXED);
    const Value *v = vm_table_getstr_at(t, ic->key, &pos);
    keep(ic->pos, ic->alt, &pos, 1);
    return v->tt != VT_NIL ? (Value *)v : NULL; /* never &vm_absent: that one is nil */
}
