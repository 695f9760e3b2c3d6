/* gc_api.h: the one allocation interface of the VM, on Boehm GC (gc_boehm.c is the only
 * file that includes Boehm's header).
 *
 * When collections happen. Boehm stops the world by signals at arbitrary instructions, and
 * the runtime wants every collection to happen with every language thread at a safepoint or
 * blocked. With one thread that holds trivially, and Boehm's own policy decides. Once there
 * are several (gc_use_vm_trigger), Boehm's allocation-triggered collections are switched
 * off: this layer decides that a collection is due (allocation volume, heap cap, stress
 * mode, an explicit request) and calls the collect hook the VM installs; the hook brings the
 * world to a safepoint and calls gc_collect_now(). Without a hook (unit tests)
 * gc_collect_now() is called directly. */
#ifndef GC_API_H
#define GC_API_H

#include <stdbool.h>
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

/* Scanned, zeroed block that is never collected: a root until gc_free (thread
 * descriptors that must outlive every reference to them from the heap). */
void *gc_alloc_root(size_t n);

/* Say that the gc_alloc block [p] of [n] bytes serves as a machine stack (a coroutine's C
 * stack). AddressSanitizer builds clear the redzones its frames leave behind once it is
 * collected (Boehm then reuses the memory, and would trip over them); nothing otherwise. */
void gc_stack_block(void *p, size_t n);

/* Resize a block from gc_alloc/gc_alloc_leaf keeping its kind; new bytes of a scanned block
 * are zeroed. Returns NULL on exhaustion (the old block is untouched). */
void *gc_realloc(void *p, size_t n);

/* Give back a block that nothing can reference any more (a table's old array after a
 * resize, a dead thread's root block), without waiting for a collection. Never call it on
 * a block someone may still point to. */
void gc_free(void *p);

/* A collection is wanted (collectgarbage, allocation failure): goes through the hook. */
void gc_collect(void);

/* Collect now. The caller guarantees that no other thread that touches the heap is running
 * (they are at safepoints or blocked). */
void gc_collect_now(void);

/* The hook that gc_collect and the allocation trigger call; NULL: collect directly. */
void gc_set_collect_hook(void (*hook)(void));

/* From now on (for good) collections are decided here and run through the hook, never by
 * Boehm inside an allocation: call it before a second thread starts running VM code. Until
 * then Boehm's own policy decides, in the one thread's allocations. */
void gc_use_vm_trigger(void);

/* collectgarbage("stop"/"restart"): while not running, no collection starts on its own
 * (allocation only grows the heap); gc_collect still collects. */
void gc_set_running(bool on);
bool gc_running(void);

/* Bytes in use in the heap (approximate, for collectgarbage("count")). */
size_t gc_heap_used(void);

/* Force frequent collections (-Xgc.stress): a collection every [every] allocations;
 * 0 turns stress off. */
void gc_set_stress(unsigned every);

/* Cap the heap at [bytes] (0: no cap). Allocation beyond it fails (the VM raises
 * "not enough memory"). */
void gc_set_max_heap(size_t bytes);

/* Testing (-Xtest.alloc_fail): the [n]th allocation from now on (gc_alloc, gc_alloc_leaf,
 * gc_realloc, all threads) fails as at the heap cap, through Boehm's out-of-memory hook,
 * and so does the VM's one retry of it after a collection; 0: off. */
void gc_set_fail_at(uint64_t n);

/* Number of collections so far. */
uint64_t gc_count(void);

/* ---- threads --------------------------------------------------------------------------
 * Native threads that touch the heap are created here, so the collector knows them
 * (their stacks are scanned). */
typedef void *(*gc_thread_fn)(void *arg);
/* Start [fn(arg)] on a new registered native thread with a stack of [stack_bytes] (0:
 * default); returns 0 or an errno value. The thread is detached. */
int gc_thread_start(gc_thread_fn fn, void *arg, size_t stack_bytes);

/* Run [fn(arg)] with this thread counted as inactive by the collector: a collection does
 * not stop it and scans its stack only from here up. [fn] must not touch the GC heap. */
void *gc_do_blocking(gc_thread_fn fn, void *arg);

/* ---- stacks ---------------------------------------------------------------------------
 * A language thread may run on stacks that are not its native thread's own (coroutine C
 * stacks, green-thread stacks). Every stack that holds live frames but is not the one its
 * native thread currently runs on ("dormant") is scanned through a GcStack: from *spp (the
 * stack pointer saved when it was left) up to hi. A GcStack lives in memory that neither
 * moves nor is collected while it is linked (static, or gc_alloc_root). */
typedef struct GcStack {
    void *hi;                 /* highest address of the stack */
    void **volatile spp;      /* where its saved sp is while dormant, else NULL */
    struct GcStack *prev, *next;
} GcStack;
void gc_stack_link(GcStack *s);
void gc_stack_unlink(GcStack *s);

/* The GcStack of the calling native thread's own stack (linked at registration). */
GcStack *gc_native_stack(void);

/* Move the calling native thread's recorded stack bottom to [hi]: call just before switching
 * it onto another stack whose highest address is hi. Switches happen only while the thread
 * is running (not at a safepoint), and collections only while no thread is running, so a
 * collection never sees a stack pointer and a stack bottom from different stacks. */
void gc_set_stack(void *hi);

#endif
