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
/* t[k] = v after the raw fast path failed. */
void vm_finishset(State *S, const Value *t, const Value *k, const Value *v);
/* Prepare a numeric for loop at ra: returns true when the loop must be skipped. */
bool vm_forprep(State *S, Value *ra);
/* Float loop step: returns true for another iteration. */
bool vm_floatforloop(Value *ra);
/* Exact numeric comparisons between any two numbers (int/float mixes included). */
bool vm_lt_num(const Value *a, const Value *b);
bool vm_le_num(const Value *a, const Value *b);
bool vm_eq_num(const Value *a, const Value *b);

#endif
