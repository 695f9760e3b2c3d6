/* gc_api.h: the one allocation interface of the VM, on Boehm GC (gc_boehm.c is the only
 * file that includes Boehm's header). */
#ifndef GC_API_H
#define GC_API_H

#include <stddef.h>
#include <stdint.h>

/* Start the collector. Call once from the main thread before any allocation. */
void gc_init(void);

/* Scanned block of [n] bytes, zeroed. Every word is treated as a possible pointer.
 * Returns NULL when the heap cannot grow (the VM turns that into "not enough memory"). */
void *gc_alloc(size_t n);

/* Pointer-free block of [n] bytes (string bytes, code, number arrays): never scanned,
 * NOT zeroed. Returns NULL on exhaustion. */
void *gc_alloc_leaf(size_t n);

/* Resize a block from gc_alloc/gc_alloc_leaf keeping its kind; new bytes of a scanned block
 * are zeroed. Returns NULL on exhaustion (the old block is untouched). */
void *gc_realloc(void *p, size_t n);

/* Give back a block that nothing can reference any more (a table's old array after a
 * resize), without waiting for a collection. Never call it on a block someone may still
 * point to. */
void gc_free(void *p);

/* A full stop-the-world collection now. */
void gc_collect(void);

/* Bytes in use in the heap (approximate, for collectgarbage("count")). */
size_t gc_heap_used(void);

/* Force frequent collections (-Xgc.stress): a collection every [every] allocations;
 * 0 turns stress off. */
void gc_set_stress(unsigned every);

/* Cap the heap at [bytes] (0: no cap). Allocation beyond it fails (the VM raises
 * "not enough memory"). */
void gc_set_max_heap(size_t bytes);

/* Number of collections so far. */
uint64_t gc_count(void);

/* Stack switching support for coroutines (and later green threads). Before switching the
 * current native thread onto another stack, call gc_switch_begin(); then gc_set_stack(hi)
 * with the upper end of the stack being switched to, and gc_switch_end() once running on
 * it. While the current native thread runs on a foreign stack, its own stack above
 * [native_sp] is still scanned (gc_note_native_sp). Between begin and end no collection
 * can start (the allocator lock is held), so the scanned range always matches the stack
 * in use. Must not allocate between begin and end. */
void gc_switch_begin(void);
void gc_switch_end(void);
void gc_set_stack(void *hi);
void *gc_native_stack_hi(void);
/* While this thread runs on a foreign stack, *[saved_sp] holds the stack pointer saved when
 * it left its native stack; the collector scans the native stack from there. NULL: this
 * thread runs on its native stack again. Call between gc_switch_begin and gc_switch_end. */
void gc_note_native_sp(void **saved_sp);

#endif
