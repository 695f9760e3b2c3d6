/* vm_coro.c: coroutines, each running on a C stack of its own: creation of their stacks,
 * resume, yield and closing (the coroutine library is vm/lib/vm_lib_coro.c).
 *
 * Why separate C stacks: a coroutine may yield from anywhere, including from inside a
 * metamethod or a pcall called by C code; with a stack of its own, yield is a plain context
 * switch and every C frame in between simply waits (Lua instead needs continuations for
 * every C function that can be crossed by a yield). Green threads will use the same switch.
 *
 * The C stack of a coroutine is a scanned GC block owned by its State (cstack): while the
 * coroutine is suspended its frames are traced through that block, exactly as long as the
 * coroutine is reachable, and the block is freed with it. While it runs, the collector's
 * notion of the native thread's stack bottom is moved to the block's end (gc_set_stack) and
 * the language thread's base stack (its native thread's stack, or its green-thread stack),
 * now dormant, is scanned from the saved stack pointer through its GcStack. Switches are
 * made by running threads and collections happen only when none runs (gc_api.h), so a
 * collection never sees a half-made switch. */
#include <stdatomic.h>
#include <stdio.h>

#include "gc_api.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_sanitize.h"

/* Size of a coroutine's C stack. Deep C recursion inside a coroutine (metamethods calling
 * metamethods) stops with "C stack overflow" VM_CSTACK_SLACK bytes before the end, which
 * leaves room for library functions and the collector's suspend signal handler (about
 * 3.4 KB of kernel frame on this machine, see the dependency notes). It is large enough
 * that nested C calls reach lua5.4's limit (VM_MAXCCALLS) before the stack's end: nested
 * pcalls of compiled code take about 1 KB each (coroutines/nesting_limit.lua: 195 levels in
 * a coroutine; 192 KB stopped at 170). ASan's redzones make frames 2-3 times larger: its
 * builds get 4 times the stack, so that programs stop at the same depths. */
#define VM_CSTACK_SIZE ((VM_ASAN ? 4 : 1) * 256 * 1024)
#define VM_CSTACK_SLACK (32 * 1024)

/* void vm_ctx_switch(void **save_sp, void *new_sp): save the callee-saved registers on the
 * current stack, store the stack pointer in *save_sp, load new_sp and restore the registers
 * saved there (x86-64 System V). */
__asm__(".text\n"
        ".globl vm_ctx_switch\n"
        ".type vm_ctx_switch,@function\n"
        "vm_ctx_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size vm_ctx_switch, .-vm_ctx_switch\n");
void vm_ctx_switch(void **save_sp, void *new_sp);

/* The coroutine a fresh C stack starts with (set just before the first switch to it). */
static _Thread_local State *starting;

static void *stack_hi(State *S) {
    return S->cstack ? (char *)S->cstack + S->cstacksize : S->basestack->hi;
}

/* Switch the running native thread from [from]'s C stack to [to]'s: [to] is resumed by
 * [from] ([resume]) or [from] yields (or ends) to its resumer [to]. Returns when some
 * coroutine switches back to [from]. Both run in the same language thread (to->basestack
 * was set by resume). Sanitizer builds announce the switch (vm_sanitize.h): a coroutine
 * learns its resumer's stack when it is resumed, and goes back to it. */
static void switch_to(State *from, State *to, bool resume) {
    gc_set_stack(stack_hi(to));
    if (from->cstack == NULL) from->basestack->spp = &from->csp;
    if (to->cstack == NULL) to->basestack->spp = NULL;
    if (resume) to->san_back.fiber = vm_san_fiber_self();
    void *fake = NULL;
    vm_san_switch_start(from->costatus == CO_DEAD ? NULL : &fake, resume ? &to->san : &from->san_back);
    vm_ctx_switch(&from->csp, to->csp);
    vm_san_switch_finish(fake, resume ? NULL : &from->san_back);
}

/* ======================================================================
 * Coroutine body
 * ====================================================================== */

static void f_body(State *co, void *ud) {
    (void)ud;
    vm_call_yieldable(co, co->stack + 1, VM_MULTRET);
}

static void f_closeall(State *co, void *ud) {
    (void)ud;
    Value err = co->errval;
    vm_close(co, co->stack + 1, &err);
}

static _Noreturn void coro_entry(void) {
    State *co = starting;
    vm_san_switch_finish(NULL, &co->san_back);
    int status = vm_rawrunprotected(co, f_body, NULL);
    if (status == VM_OK) {
        co->nxfer = (int)(co->top - (co->stack + 1));
    } else {
        /* Close what the coroutine left open; an error in a __close replaces the error.
         * The frames it died in stay for debug.traceback(co) and getinfo, as lua5.4 keeps
         * them, unless a __close handler ran (its calls reuse their records and slots);
         * the error goes above them (co_close reads it from errval). */
        CallInfo *errci = co->ci;
        bool keep = co->ntbc == 0;
        co->ci = &co->base_ci;
        int st;
        while ((st = vm_rawrunprotected(co, f_closeall, NULL)) != VM_OK) {
            co->ci = &co->base_ci;
            status = st;
        }
        co->errval = status == VM_ERRMEM ? vm_str(co->g->memerrmsg) : co->errval;
        if (keep && co->top < co->stack_last)
            co->ci = errci;
        else
            co->top = co->stack + 1;
        *co->top++ = co->errval;
        co->nxfer = 1;
    }
    co->costatus_err = status;
    co->costatus = CO_DEAD;
    State *to = co->resumer;
    co->resumer = NULL;
    to->costatus = CO_RUNNING;
    switch_to(co, to, false);
    /* A dead coroutine is never switched to again. */
    __builtin_unreachable();
}

/* The cache of dead coroutines' C stacks is shared by every language thread; a spin lock
 * is enough for a few loads and stores (and is never held across anything that waits). */
static void *cstack_take(Global *g) {
    while (atomic_flag_test_and_set_explicit(&g->cstack_lock, memory_order_acquire)) __builtin_ia32_pause();
    void *p = NULL;
    if (g->ncstack_cache > 0) {
        p = g->cstack_cache[--g->ncstack_cache];
        g->cstack_cache[g->ncstack_cache] = NULL;
    }
    atomic_flag_clear_explicit(&g->cstack_lock, memory_order_release);
    return p;
}

static void cstack_give(Global *g, void *p) {
    while (atomic_flag_test_and_set_explicit(&g->cstack_lock, memory_order_acquire)) __builtin_ia32_pause();
    if (g->ncstack_cache < (int32_t)(sizeof g->cstack_cache / sizeof g->cstack_cache[0]))
        g->cstack_cache[g->ncstack_cache++] = p;
    atomic_flag_clear_explicit(&g->cstack_lock, memory_order_release);
}

/* Prepare the C stack of a new coroutine so that the first switch enters coro_entry. */
static void init_cstack(State *S, State *co) {
    Global *g = S->g;
    co->cstacksize = VM_CSTACK_SIZE;
    /* A dead coroutine's stack is as good as a new one, and allocating a new one costs
     * 256 KB of zeroing and collector churn per coroutine (coroutine_pipeline). */
    co->cstack = cstack_take(g);
    if (co->cstack == NULL) {
        co->cstack = vm_alloc(S, VM_CSTACK_SIZE);
        gc_stack_block(co->cstack, VM_CSTACK_SIZE);
    }
    uintptr_t top = ((uintptr_t)co->cstack + VM_CSTACK_SIZE) & ~(uintptr_t)15;
    void **sp = (void **)(top - 64);
    for (int i = 0; i < 8; i++) sp[i] = NULL;
    sp[6] = (void *)coro_entry; /* 6 pops, then ret: rsp % 16 == 8 at entry, as after a call */
    co->csp = sp;
    co->cstack_limit = (char *)co->cstack + VM_CSTACK_SLACK;
    co->san.lo = co->cstack;
    co->san.size = VM_CSTACK_SIZE;
    co->san.fiber = vm_san_fiber_new();
}

/* Sanitizer builds: [co]'s C stack is left for good (it ended, or was closed while
 * suspended): its frames' redzones are cleared before the memory serves again, and its
 * fiber ends. */
static void cstack_abandon(State *co) {
    vm_san_stack_reset(co->cstack, co->cstacksize);
    vm_san_fiber_free(&co->san);
}

/* ======================================================================
 * Resume and yield
 * ====================================================================== */

/* Resume and yield are one body with one call of switch_to (transfer), and each way of
 * calling them is one function around it: vm_coro_precall for the calls of resume, yield
 * and wrap functions that Lua code makes (the interpreter's and compiled code's CALL and
 * TFORCALL), vm_coro_transfer for the rest (the library functions called otherwise, by
 * pcall or from C, or with a debug hook, tail-call it: vm_lib_coro.c). Then, when both
 * sides of a switch came the same way, the native return addresses between the switch and
 * the caller are the same on both sides of it (the call of vm_ctx_switch, the call of the
 * function around it, the caller's call, ...), and the processor's return predictions,
 * made from the calls on the other side, hold. With a separate resume and yield every
 * return after a switch was mispredicted up to compiled code (a ping-pong ran slower than
 * lua5.4 in fewer instructions). The functions around it are noinline and noclone, to stay
 * one body each. [co] NULL: yield the [n] values on top of S's stack; else resume [co]
 * with them. Returns vm_coro_resume's or vm_coro_yield's result. */
static inline __attribute__((always_inline)) int transfer(State *S, State *co, int n) {
    State *to;
    if (co == NULL) {
        to = S->resumer;
        if (to == NULL || S->cstack == NULL) vm_runerror(S, "attempt to yield from outside a coroutine");
        if (S->nny > 0) vm_runerror(S, "attempt to yield across a C-call boundary");
        S->nxfer = n;
        S->nyields++;
        S->costatus = CO_SUSPENDED;
        S->resumer = NULL;
    } else {
        if (co->costatus != CO_SUSPENDED && co->costatus != CO_SUSPENDED_NEW) {
            const char *msg = co->costatus == CO_DEAD ? "cannot resume dead coroutine"
                                                      : "cannot resume non-suspended coroutine";
            S->top -= n;
            vm_pushcstr(S, msg);
            return -1;
        }
        if (S->nCcalls >= VM_MAXCCALLS) {
            S->top -= n;
            vm_pushcstr(S, "C stack overflow");
            return -1;
        }
        if (co->costatus == CO_SUSPENDED_NEW && co->cstack == NULL) init_cstack(S, co);
        /* Move the arguments over. */
        vm_checkstack_fast(co, n + VM_MINSTACK);
        for (int i = 0; i < n; i++) co->top[i] = S->top[i - n];
        co->top += n;
        S->top -= n;
        co->nxfer = n;
        /* One more nested C call than the resumer, as lua_resume counts (LUAI_MAXCCALLS 200
         * allows about 196 nested coroutines): a new coroutine's body is called through
         * call_value (f_body), which adds that one; a suspended one continues where it
         * yielded, so the resume adds it here. */
        co->nCcalls = S->nCcalls + (co->costatus == CO_SUSPENDED_NEW ? 0 : 1);
        co->resumer = S;
        co->basestack = S->basestack; /* it runs in our language thread */
        /* Call depths continue the first resumer's (vm_state.h); the coroutine's frame
         * records are made after this, so they are consistent with it. */
        if (co->costatus == CO_SUSPENDED_NEW && co->ci == &co->base_ci && co->base_ci.next == NULL)
            co->base_ci.depth = S->ci->depth;
        S->costatus = CO_NORMAL;
        if (co->costatus == CO_SUSPENDED_NEW) starting = co;
        to = co;
    }
    to->costatus = CO_RUNNING;
    /* One call of the switch: without these the compiler copies it into the branches above
     * and below (it threads the tests of co through them). */
    __asm__("" : "+r"(co), "+r"(to));
    switch_to(S, to, co != NULL);
    __asm__("" : "+r"(co));
    if (co == NULL) return S->nxfer;
    /* Back: the coroutine yielded, returned or failed. */
    S->costatus = CO_RUNNING;
    if (co->costatus == CO_DEAD && co->cstack != NULL) {
        /* We are off its stack for good: keep the stack for the next coroutine. */
        cstack_abandon(co);
        cstack_give(S->g, co->cstack);
        co->cstack = NULL;
        co->csp = NULL;
        co->cstack_limit = NULL;
    }
    n = co->nxfer;
    /* vm_checkstack's room (for n + 1: resume's boolean), its call only when it grows */
    if (S->stack_last - S->top <= n + 1 || S->ci->top < S->top + n + 1) vm_checkstack(S, n + 1);
    for (int i = 0; i < n; i++) S->top[i] = co->top[i - n];
    S->top += n;
    co->top -= n;
    if (co->costatus == CO_DEAD && co->costatus_err != VM_OK) n = -1;
    return n;
}

/* [after]: the library's handling of the results, called after the switch (it returns the
 * library function's count of results); NULL returns transfer's result. */
__attribute__((noinline, noclone)) int vm_coro_transfer(State *S, State *co, int n, VmCoroAfter after) {
    n = transfer(S, co, n);
    return after ? after(S, co, n) : n;
}

/* ======================================================================
 * Calls of resume, yield and wrap functions
 * ====================================================================== */

/* A call of coroutine.resume, coroutine.yield or a coroutine.wrap function (VM_CF_CORO,
 * vm_value.h) from the interpreter's or compiled code's CALL or TFORCALL (or any call
 * through vm_precall): the C frame precall_c makes, the library function's work (resume_after and
 * wrap_after of vm_lib_coro.c) and vm_poscall's move of the results, in this one C frame
 * around the switch (transfer). Each of those was a C frame of its own, and with
 * vm_precall's and the generic result shuffles they were most of a switch's cost
 * (callgrind, a wrap generator in a generic for, JIT: 752 instructions a resume/yield
 * pair). The results are the library function's: resume's true or false first, a wrap
 * function's error raised with its caller's position; a resume whose first argument is not
 * a coroutine is the library function's to refuse. One call site of the switch for all
 * three, so that both sides return along the same native addresses (above). */
__attribute__((noinline, noclone)) CallInfo *vm_coro_precall(State *S, Value *func, int nresults) {
    CallInfo *ci = vm_cframe(S, func, nresults); /* as precall_c's: finalizers run first */
    func = ci->func;
    /* debug hooks as precall_c runs them (one byte tested before and after) */
    if (__builtin_expect(S->hookmask & VM_MASKCALL, 0)) vm_hook_ccall(S, ci, (int)(S->top - func) - 1);
    CClosure *cf = func->u.cf;
    unsigned kind = cf->h.flags & VM_CF_CORO;
    int n = (int)(S->top - func) - 1;
    State *co = NULL;
    if (kind == VM_CF_CORO_WRAP) {
        co = cf->upvals[0].u.th;
    } else if (kind == VM_CF_CORO_RESUME) {
        if (n == 0 || func[1].tt != VT_THREAD) {
            n = cf->f(S); /* raises the library's "bad argument" */
            goto done;
        }
        co = func[1].u.th;
        n--;
    }
    __asm__("" : "+r"(co), "+r"(n), "+r"(kind)); /* one call, not one per kind */
    n = transfer(S, co, n);
    __asm__("" : "+r"(co), "+r"(n), "+r"(kind));
    if (kind == VM_CF_CORO_RESUME) {
        /* The coroutine's own slot, ci->func + 1, lies right below its [n] values (or its
         * error object, n < 0): it becomes resume's true (false). The stack may have
         * moved: ci->func is kept up to date. */
        ci->func[1] = vm_bool(n >= 0);
        n = n < 0 ? 2 : n + 1;
    } else if (n < 0) {
        vm_coro_wrap_error(S, co);
    }
done:
    if (__builtin_expect(S->hookmask != 0, 0)) vm_hook_return(S, ci, (int)(S->top - n - ci->func), n);
    /* vm_poscall's work for a C frame */
    vm_moveresults(S, ci->func, S->top - n, n, nresults);
    S->ci = ci->prev;
    return NULL;
}

_Noreturn void vm_coro_wrap_error(State *S, State *co) {
    Value e = S->top[-1];
    if (e.tt == VT_STR && co->costatus_err != VM_ERRMEM) {
        CallInfo *ci = S->ci->prev;
        if (ci && !(ci->callstatus & CIST_C) && ci != &S->base_ci) e = vm_str(vm_add_position(S, ci, e.u.s));
    }
    vm_error_value(S, e);
}

int vm_coro_resume(State *S, State *co, int nargs) { return vm_coro_transfer(S, co, nargs, NULL); }

int vm_coro_yield(State *S, int n) { return vm_coro_transfer(S, NULL, n, NULL); }

int vm_coro_close_suspended(State *S, State *co) {
    /* Its own C stack is abandoned as it is; the __close handlers run on our C stack with a
     * protected boundary of ours. */
    co->ci = &co->base_ci;
    co->errval = vm_nil();
    co->resumer = S;
    co->cstack_limit = S->cstack_limit;
    int status = VM_OK, st;
    while ((st = vm_rawrunprotected(co, f_closeall, NULL)) != VM_OK) {
        co->ci = &co->base_ci;
        status = st;
    }
    co->resumer = NULL;
    co->costatus = CO_DEAD;
    co->top = co->stack + 1;
    if (co->cstack != NULL) cstack_abandon(co);
    return status;
}
