/* vm_sanitize.h: telling AddressSanitizer and ThreadSanitizer about the runtime's own stack
 * switches (coroutine C stacks in vm_coro.c, green stacks in threads/vm_green.c). Both
 * switch with vm_ctx_switch, which no sanitizer can see:
 *
 * - ASan keeps the native thread's stack bounds while code runs on another stack, so
 *   __asan_handle_no_return (called before every longjmp: a Lua error) refuses to clean the
 *   frames the jump skips, and their redzones stay poisoned; a stack that is reused (the
 *   green stack cache, the dead coroutines' C stack cache) then reports those stale redzones
 *   as "stack-buffer-overflow" in whatever innocent frame lands on them (tests/README.md,
 *   "Sanitizers"). The fiber API moves the bounds with every switch.
 * - TSan keeps one shadow call stack per native thread; a switch without a fiber of its own
 *   per stack mixes the call stacks (and the happens-before of a green thread that moves to
 *   another carrier is lost).
 *
 * A VmSanStack describes a stack to switch to: its bounds for ASan, its fiber for TSan.
 * Outside sanitizer builds every function here is empty and the struct is never used, so
 * normal builds are unchanged. The feature tests are gcc's macros and clang's
 * __has_feature. */
#ifndef VM_SANITIZE_H
#define VM_SANITIZE_H

#include <stddef.h>

#ifdef __has_feature
#define VM_HAS_FEATURE(x) __has_feature(x)
#else
#define VM_HAS_FEATURE(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || VM_HAS_FEATURE(address_sanitizer)
#define VM_ASAN 1
#include <sanitizer/asan_interface.h>
#else
#define VM_ASAN 0
#endif
#if defined(__SANITIZE_THREAD__) || VM_HAS_FEATURE(thread_sanitizer)
#define VM_TSAN 1
#include <sanitizer/tsan_interface.h>
#else
#define VM_TSAN 0
#endif

typedef struct VmSanStack {
    const void *lo;             /* ASan: lowest address */
    size_t size;                /* ASan: size in bytes */
    void *fiber;                /* TSan: its fiber (NULL: none yet) */
} VmSanStack;

/* Just before vm_ctx_switch to [to]. [fake] receives ASan's fake stack of the stack being
 * left (a local of the switching function); NULL when that stack is left for good. */
static inline void vm_san_switch_start(void **fake, const VmSanStack *to) {
#if VM_ASAN
    __sanitizer_start_switch_fiber(fake, to->lo, to->size);
#endif
#if VM_TSAN
    __tsan_switch_to_fiber(to->fiber, 0);
#endif
    (void)fake;
    (void)to;
}

/* First thing after a switch has landed (after vm_ctx_switch returns, or at the entry of a
 * fresh stack with fake NULL): [from], when not NULL, receives the bounds of the stack that
 * was left, so that the way back can be announced. */
static inline void vm_san_switch_finish(void *fake, VmSanStack *from) {
#if VM_ASAN
    const void *lo = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(fake, &lo, &size);
    if (from != NULL) {
        from->lo = lo;
        from->size = size;
    }
#endif
    (void)fake;
    (void)from;
}

/* TSan: a fiber for a new stack, the fiber running now (a native thread's own stack), and
 * the end of a fiber (called from another one, once its stack is left for good). */
static inline void *vm_san_fiber_new(void) {
#if VM_TSAN
    return __tsan_create_fiber(0);
#else
    return NULL;
#endif
}

static inline void *vm_san_fiber_self(void) {
#if VM_TSAN
    return __tsan_get_current_fiber();
#else
    return NULL;
#endif
}

static inline void vm_san_fiber_free(VmSanStack *s) {
#if VM_TSAN
    if (s->fiber != NULL) __tsan_destroy_fiber(s->fiber);
#endif
    s->fiber = NULL;
}

/* ASan: a stack left for good keeps the redzones of the frames that never returned; clear
 * them before its memory is used again (another stack, or other objects). */
static inline void vm_san_stack_reset(void *lo, size_t size) {
#if VM_ASAN
    __asan_unpoison_memory_region(lo, size);
#endif
    (void)lo;
    (void)size;
}

#endif
