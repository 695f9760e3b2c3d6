/* gc_boehm.c: gc_api.h on Boehm GC; the only file that includes Boehm's headers.
 *
 * Stack switching (coroutines now, green threads later) follows the verified recipe of
 * ../shared/notes/dependencies.md section 2: a switch happens with the allocator lock held
 * (gc_switch_begin/end), the thread's recorded stack bottom is moved to the stack being
 * switched to (gc_set_stack), and the part of the thread's native stack that is dormant while
 * it runs elsewhere is pushed by our push-other-roots callback. Coroutine stacks themselves
 * are scanned GC blocks (reachable from their coroutine object), so a suspended coroutine's
 * frames are traced exactly when the coroutine is reachable. */
#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_mark.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"

/* Native threads known to the switching machinery. Static so the table itself is in the
 * data segment (scanned, and never moved). */
#define GC_MAX_NATIVE 1024

typedef struct NativeStack {
    void *handle;          /* from GC_get_my_stackbottom */
    void *hi;              /* bottom (highest address) of the native stack */
    void **volatile spp;   /* where the sp saved on leaving the native stack is, else NULL */
    bool used;
} NativeStack;

static NativeStack natives[GC_MAX_NATIVE];
static _Thread_local NativeStack *self;
static GC_push_other_roots_proc prev_push;
static atomic_uint stress_every;
static _Thread_local unsigned stress_count;

/* Runs in the collecting thread with the world stopped: must not allocate or lock. */
static void GC_CALLBACK push_dormant_native_stacks(void) {
    for (int i = 0; i < GC_MAX_NATIVE; i++) {
        NativeStack *n = &natives[i];
        void **spp = n->spp;
        if (n->used && spp != NULL && *spp != NULL) GC_push_all_eager(*spp, n->hi);
    }
    if (prev_push) prev_push();
}

static NativeStack *register_self(void) {
    if (self) return self;
    GC_alloc_lock();
    for (int i = 0; i < GC_MAX_NATIVE; i++) {
        if (!natives[i].used) {
            natives[i].used = true;
            self = &natives[i];
            break;
        }
    }
    GC_alloc_unlock();
    if (!self) abort();
    struct GC_stack_base sb;
    self->handle = GC_get_my_stackbottom(&sb);
    self->hi = sb.mem_base;
    return self;
}

/* Boehm warns on stderr when the heap cap is reached; the VM reports that as a Lua error
 * ("not enough memory") instead, so those warnings are dropped. Others still print. */
static void GC_CALLBACK warn(char *msg, GC_word arg) {
    if (strstr(msg, "Out of Memory") != NULL) return;
    fprintf(stderr, msg, arg);
}

void gc_init(void) {
    static bool started;
    if (started) return;
    started = true;
    GC_INIT();
    /* Collect once a heap's 1/8 has been allocated since the last collection (Boehm's
     * default is 1/3): peak memory of allocation-heavy programs stays within 2x lua5.4's
     * (bench/programs/binary_trees.lua: 49 MB -> 31 MB, lua5.4 19 MB) for a few percent of
     * time. The environment variable still wins, for experiments. */
    if (getenv("GC_FREE_SPACE_DIVISOR") == NULL) GC_set_free_space_divisor(8);
    GC_set_warn_proc(warn);
    GC_allow_register_threads();
    prev_push = GC_get_push_other_roots();
    GC_set_push_other_roots(push_dormant_native_stacks);
    register_self();
}

static void maybe_stress(void) {
    unsigned every = atomic_load_explicit(&stress_every, memory_order_relaxed);
    if (every && ++stress_count >= every) {
        stress_count = 0;
        GC_gcollect();
    }
}

void *gc_alloc(size_t n) {
    maybe_stress();
    return GC_MALLOC(n);
}

void *gc_alloc_leaf(size_t n) {
    maybe_stress();
    return GC_MALLOC_ATOMIC(n);
}

void *gc_realloc(void *p, size_t n) {
    maybe_stress();
    return GC_REALLOC(p, n);
}

void gc_free(void *p) { GC_FREE(p); }

void gc_collect(void) { GC_gcollect(); }

size_t gc_heap_used(void) {
    GC_word heap = 0, free_bytes = 0;
    GC_get_heap_usage_safe(&heap, &free_bytes, NULL, NULL, NULL);
    return (size_t)(heap - free_bytes);
}

void gc_set_stress(unsigned every) { atomic_store_explicit(&stress_every, every, memory_order_relaxed); }

void gc_set_max_heap(size_t bytes) { GC_set_max_heap_size((GC_word)bytes); }

uint64_t gc_count(void) { return (uint64_t)GC_get_gc_no(); }

/* Native threads that run VM code. While there is only one, no other thread can start a
 * collection (marker threads only help one that we start), so a switch needs no lock: the
 * allocator lock costs 15% of bench/programs/coroutine_pipeline.lua. The count only grows
 * through a registration made by a running mutator outside any switch, before the new
 * thread exists (the thread library's job), so no switch can be in progress without the
 * lock when the second mutator appears. */
static atomic_int mutators = 1;
static _Thread_local bool switch_locked;

void gc_switch_begin(void) {
    register_self();
    switch_locked = atomic_load_explicit(&mutators, memory_order_acquire) > 1;
    if (switch_locked) GC_alloc_lock();
}

void gc_switch_end(void) {
    if (switch_locked) GC_alloc_unlock();
}

/* Requires the allocator lock (gc_switch_begin). */
void gc_set_stack(void *hi) {
    struct GC_stack_base sb = {.mem_base = hi};
    GC_set_stackbottom(self->handle, &sb);
}

void *gc_native_stack_hi(void) { return register_self()->hi; }

/* Requires the allocator lock when called while other threads may collect. */
void gc_note_native_sp(void **saved_sp) { self->spp = saved_sp; }
