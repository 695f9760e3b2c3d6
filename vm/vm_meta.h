/* vm_meta.h: the slow paths of the interpreter: arithmetic with coercions and metamethods,
 * indexing through __index/__newindex, comparisons, concatenation, length, numeric for
 * (vm_meta.c). Every function takes its operands by pointer and reads them before it can
 * call anything, so pointers into the stack are fine; results come back by value because
 * the stack may move. */
#ifndef VM_META_H
#define VM_META_H

#include "vm_state.h"

/* a op b for op in TM_ADD .. TM_BNOT (unary ones use a == b). */
Value vm_arith(State *S, TMS op, const Value *a, const Value *b);
/* t[k] after the raw fast path failed ([slot] is the raw result or NULL if t is no table). */
Value vm_finishget(State *S, const Value *t, const Value *k, const Value *slot);
/* The slot of string key [key] reached through table [t]'s chain of __index tables (t's own
 * slot for key was nil and t has a metatable): the slot in the first table of the chain after
 * t where key's value is not nil, looking at most VM_INDEX_INLINE tables deep; &vm_absent (a
 * nil) when the chain ends in a table without __index (t's metatable included) before
 * that: the value is nil; NULL
 * when it holds a function or a non-table, or goes deeper: the caller then goes through
 * vm_finishget. Never raises, allocates or calls (vm_fasttm's absence bit is its only
 * write). The interpreter's GETFIELD and SELF use it inline, compiled code through its
 * inline caches (jit/jit_ic.c: the same walk, and vm_index_str_at on a miss); both emit
 * EV_LOAD of the slot it returns, or of t (as vm_finishget's callers do) for &vm_absent, so a
 * profile does not depend on whether the code was compiled. The walk tests the slot's tag in
 * place: a caller loads the slot it returns once, whole, and takes a nil in that copy (a
 * racing removal since the walk; the chain would go on past that table) for a miss, never
 * for the value (vm_table.c, "Races": values are decided on once). */
#define VM_INDEX_INLINE 4
/* vm_index_str_at also records, when [pos] is not NULL, where the names were found on the way
 * (vm_table_getstr_at's positions): pos[L] for [key] in the table at level L of the chain
 * (level 0 is t, which the caller looked up: pos[0] is not touched) and mpos[L] for "__index"
 * in the metatable of the table at level L; entries of nodes not found are left alone. The
 * JIT's inline caches (jit/jit_ic.c) replay the same walk from these positions. [pos] and
 * [mpos] are NULL together or not at all. */
__attribute__((always_inline)) static inline const Value *vm_index_str_at(State *S, const Table *t, String *key,
                                                                         uint32_t *pos, uint32_t *mpos) {
    for (int level = 0; level < VM_INDEX_INLINE; level++) {
        const Value *tm = vm_fasttm_at(S, t->meta, TM_INDEX, mpos ? &mpos[level] : NULL);
        if (tm == NULL) return &vm_absent;
        Value tmv = vm_loadv(tm);
        if (tmv.tt != VT_TABLE) return NULL;
        t = tmv.u.t;
        const Value *slot = vm_table_getstr_at(t, key, pos ? &pos[level + 1] : NULL);
        if (slot->tt != VT_NIL) return slot;
    }
    return NULL;
}
__attribute__((always_inline)) static inline const Value *vm_index_str_inline(State *S, const Table *t,
                                                                             String *key) {
    return vm_index_str_at(S, t, key, NULL, NULL);
}
/* SELF on a string (s:upper()): the value of string key [key] in the string metatable's
 * __index table when that is a table holding a non-nil value at key, loaded whole once and
 * decided on (a second load of the slot could read the nil of a racing removal); a nil
 * otherwise (the caller goes through vm_finishget). Its event is the one vm_finishget's
 * callers emit for a non-table: of the register holding the string. vm_index_string is its
 * out-of-line copy (compiled code gets the value in xmm0). */
__attribute__((always_inline)) static inline vm_V16 vm_index_string_inline(State *S, String *key) {
    const vm_V16 none = {0, VT_NIL};
    const Value *tm = vm_fasttm(S, S->g->string_mt, TM_INDEX);
    if (tm == NULL) return none;
    Value tmv = vm_loadv(tm);
    if (tmv.tt != VT_TABLE) return none;
    return vm_load16(vm_table_getstr_inline(tmv.u.t, key));
}
vm_V16 vm_index_string(State *S, String *key);
/* t[k] = v after the raw fast path failed. */
void vm_finishset(State *S, const Value *t, const Value *k, const Value *v);
/* Whether a store into [h] of a key it has no live slot for is a raw insert: h has no
 * __newindex (no metatable, or one without it). SETFIELD's rule, interpreted and compiled. */
static inline bool vm_newindex_absent(State *S, const Table *h) {
    return h->meta == NULL || vm_fasttm(S, h->meta, TM_NEWINDEX) == NULL;
}
/* Compiled SETFIELD of a key [h] has no live slot for: the raw insert when vm_newindex_absent
 * (returns true), else false with nothing done. Allocates (Protect). */
bool vm_setfield_new(State *S, Table *h, String *key, const Value *val);
/* TFORCALL of pairs() without __pairs, without a call: ra[0] is the base library's next and
 * ra[1] a table (the caller checked both, and room for the call's 3 slots past ra + 4). One
 * step of next over ra[1] from key ra[2]: ra[4] = the next key (nil at the end), ra[5] = its
 * value, ra[6 .. 4 + nvars - 1] = nil. May raise "invalid key to 'next'" (savedpc set). The
 * interpreter runs it inline; compiled code goes through vm_tfor_fast. */
__attribute__((always_inline)) static inline void vm_tfor_next_inline(State *S, Value *ra, int nvars) {
    Value key = ra[2], val;
    if (vm_table_next(S, ra[1].u.t, &key, &val)) {
        ra[4] = key;
        ra[5] = val;
        for (int j = 2; j < nvars; j++) ra[4 + j].tt = VT_NIL;
    } else {
        ra[4].tt = VT_NIL;
    }
}
/* TFORCALL for compiled code, without a call when the iterator ra[0] is next over a table
 * (vm_tfor_next_inline) or ipairs' over a table without a metatable and an integer control
 * value (t[i + 1] raw, as ipairs' iterator reads it then) and the stack has room for the
 * call's slots: returns true when it did the step, false (nothing written) otherwise. */
bool vm_tfor_fast(State *S, Value *ra, int nvars);
/* Prepare a numeric for loop at ra: returns true when the loop must be skipped. */
bool vm_forprep(State *S, Value *ra);
/* Float loop step: returns true for another iteration. */
bool vm_floatforloop(Value *ra);
/* Exact numeric comparisons between any two numbers (int/float mixes included). */
bool vm_lt_num(const Value *a, const Value *b);
bool vm_le_num(const Value *a, const Value *b);
bool vm_eq_num(const Value *a, const Value *b);

#endif
