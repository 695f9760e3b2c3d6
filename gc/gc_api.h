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

/* An observer of collections (-Xtrace): called on the collecting thread when a collection
 * starts ([end] 0, [heap_used] 0) and when it ends ([end] 1, the bytes in use after it),
 * whoever started it (the VM's trigger or Boehm's own, inside an allocation). It runs with
 * Boehm's allocation lock held: it must not allocate from the GC heap or wait for another
 * VM thread (malloc is fine). Set it before any other thread starts; NULL: none. */
void gc_set_collection_observer(void (*fn)(int end, size_t heap_used));

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

/* Bytes in use right after the last collection (what it found live), for
 * collectgarbage("step")'s notion of when a collection is due. */
size_t gc_heap_live(void);

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

/* A fork whose child goes on using the heap (shadow profiling, vm/prof/vm_shadow.c): call
 * gc_fork_prepare just before fork(), then gc_fork_parent in the parent or gc_fork_child
 * first thing in the child. Boehm's allocator lock is held across the fork, so the child's
 * heap is consistent, and the child's collector knows only the forking thread (Boehm's
 * GC_atfork_*: gc_init asks for manual fork handling, GC_set_handle_fork(-1), so forks the
 * runtime does not make, popen and system, are not touched). */
void gc_fork_prepare(void);
void gc_fork_parent(void);
void gc_fork_child(void);

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

/* ---- weak blocks, the post-mark hook, finalization ---------------------------------------
 * Weak references (gc/README.md, "Weak references and finalization"). A weak block is
 * allocated in a kind of its own whose contents Boehm does not scan: whenever it marks one,
 * it calls the VM's trace hook, which names the references that keep something alive
 * (gc_mark_slot) and leaves the weak ones out. When marking is over, with the world still
 * stopped and nothing freed yet, the after-mark hook runs: it may mark more (ephemerons,
 * objects resurrected for finalization) with gc_mark_slot, which then runs a marker of
 * this layer's own, and clear the weak references to what is still unmarked (gc_is_marked)
 * before Boehm frees it. Both hooks run with Boehm's allocator lock held and the world
 * stopped: they must not allocate, lock, or call back into the VM beyond reading and
 * clearing memory. */
typedef struct GcMarker GcMarker;

/* Keep alive what the word at [slot] points at (anything that is not a pointer into the
 * heap is ignored), and, through it, everything it references. Only inside the hooks. */
void gc_mark_slot(GcMarker *m, void *const *slot);

/* Has [p] (the start of an object) been marked in this collection so far? Pointers outside
 * the heap count as marked (they are never freed). Only inside the hooks. */
bool gc_is_marked(const void *p);

/* Objects marked by gc_mark_slot in this after-mark hook so far (the VM repeats ephemeron
 * passes until a pass marks nothing). */
uint64_t gc_marked_count(const GcMarker *m);

typedef struct GcHooks {
    /* Block [b] of [bytes] bytes from gc_alloc_weak is reachable: mark its strong
     * references. May run several times per collection, on several marker threads, and on
     * a block that is free (all zero but its first word). */
    void (*trace)(void *b, size_t bytes, GcMarker *m);
    /* Marking is complete (see above). */
    void (*after_mark)(GcMarker *m);
} GcHooks;
void gc_set_hooks(const GcHooks *h);

/* Zeroed block traced by the trace hook instead of being scanned. NULL on exhaustion.
 * gc_free ignores such blocks (they stay registered until a collection finds them dead). */
void *gc_alloc_weak(size_t n);

/* In the after-mark hook: call [fn] on every weak block marked so far. Blocks found dead are
 * forgotten only when the hook returns (a later mark may still reach them). */
void gc_weak_each(GcMarker *m, void (*fn)(void *b, size_t bytes, GcMarker *m, void *arg), void *arg);

/* Finalization, in the order of Lua's __gc: [obj] is to be finalized once unreachable. The
 * caller registers an object at most once until gc_fin_next hands it back. */
void gc_fin_register(void *obj);

/* In the after-mark hook: every registered object still unmarked becomes ready (most
 * recently registered first), is marked with everything it references (it lives on until
 * its finalizer has run), and is forgotten by the registry. Returns how many. */
size_t gc_fin_separate(GcMarker *m);

/* Outside collections (the end of the program): every registered object becomes ready,
 * after those already ready, most recently registered first. */
void gc_fin_all(void);

/* The next ready object, or NULL. Ready objects are roots until taken. */
void *gc_fin_next(void);

/* Any ready object? One relaxed load: callers poll it on hot paths. */
bool gc_fin_pending(void);

#endif
