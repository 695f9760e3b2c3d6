/* vm_gc.h: what Lua's collector semantics add to the heap of gc/: weak tables (__mode),
 * finalizers (__gc) and warnings. Private to vm/. See vm_gc.c and gc/README.md. */
#ifndef VM_GC_H
#define VM_GC_H

#include <stdbool.h>

#include "gc_api.h"
#include "vm_state.h"

/* Install the collector hooks (once, before the first table is made weak). */
void vm_gc_init(void);

/* Set the metatable of table or full userdata [o] to [mt] (may be NULL), as lua_setmetatable
 * does: a table takes the weak mode of mt.__mode; an object whose new metatable has a __gc
 * field is marked for finalization (once; a __gc added to mt later is not seen). */
void vm_gc_setmetatable(State *S, const Value *o, Table *mt);

/* Run the finalizers of the objects the collector found unreachable, in order, each in a
 * protected call; an error in one becomes a warning. Call only where calling a Lua function
 * is safe (S->top above every live slot); does nothing inside another finalizer. */
void vm_gc_run_finalizers(State *S);
static inline void vm_gc_finalize_pending(State *S) {
    if (__builtin_expect(gc_fin_pending(), 0)) vm_gc_run_finalizers(S);
}

/* Zero the C stack just below the caller's frame (a few KB), where earlier calls left
 * stale words; called right before a call of a VM_CF_SCRUB function (vm_value.h). */
void vm_scrub_stack(void);

/* The program ends (lua_close): no object is marked for finalization any more, and every
 * marked one is finalized, the ones found unreachable first, then the rest, most recently
 * marked first. Runs in the calling language thread. */
void vm_gc_close(State *S);

#endif
