/* jit_frame.c: the call, tail call and return helpers compiled code calls in C, for the
 * run's compiled code (p->jit) and for the instrumented twins of sampling windows (p->jitwin,
 * the _window helpers): one body each, [win] telling them apart (a constant in each caller,
 * so each is compiled for its own). */
#include "jit_internal.h"

#include "vm_do.h"
#include "vm_gc.h"
#include "vm_prof.h"
#include "vm_sample.h"

/* Where a frame of [p] continues at [pc] in compiled code: its label's address (a template,
 * or a step through the interpreter), compiling [p] first if nobody
 * has; 1 if [p] cannot be compiled, or its twin is not due yet (jit_compile_window): the
 * interpreter runs it. */
static inline uintptr_t code_at(Proto *p, const Instr *pc, bool win) {
    const JitCode *jc = __atomic_load_n((JitCode *const *)(win ? &p->jitwin : &p->jit), __ATOMIC_ACQUIRE);
    if (jc == NULL) jc = win ? jit_compile_window(p) : jit_compile(p);
    if (jc->at == NULL) return 1;
    return (uintptr_t)jc->at[pc - p->code];
}

/* A twin's frame: the entry's tick first, as the instrumented sampling copy's startfunc
 * (when it ends the window the trampoline starts the frame in the plain copy, without its
 * events); then its start's events and the window's stamp. */
static uintptr_t enter_frame_window(State *S, CallInfo *nci) {
    vm_sample_tl.injit++;
    if (__builtin_expect(--vm_sample_tl.left <= 0, 0)) {
        vm_sample_tl.at = VM_SAMPLE_AT_ENTRY;
        return 1;
    }
    vm_sample_frame_start(S, nci);
    return code_at(nci->func->u.lf->p, nci->savedpc, true);
}

/* A Lua frame [nci] just set up by a call (S->ci): its start's events while profiling, as
 * the interpreter's startfunc emits them, and where its code starts (code_at). */
static inline uintptr_t enter_frame(State *S, CallInfo *nci, bool win) {
    if (win) return enter_frame_window(S, nci);
    if (jit_events) vm_prof_frame_start(S, nci);
    /* -Xsample.mode=code: the entry's tick (as compiled calls count it at callentry); when it
     * ends the gap, the interpreter's trampoline starts the window at this frame's entry */
    if (jit_sample && __builtin_expect(--vm_sample_tl.left <= 0, 0)) {
        /* The profile library forced a flip: make it here, so that a frame of a level that
         * does not run in the trampoline (entered before the library's first start) does
         * not leave compiled code at every call; the interpreter takes the frame only when
         * a window opened (the trampoline's copy sees it, a plain copy goes on). */
        if (vm_sample_phase) {
            vm_sample_flip();
            if (vm_sample_tl.window == 0) return code_at(nci->func->u.lf->p, nci->savedpc, false);
        }
        vm_sample_tl.at = VM_SAMPLE_AT_ENTRY;
        return 1;
    }
    return code_at(nci->func->u.lf->p, nci->savedpc, false);
}

/* OP_CALL from compiled code, ci->savedpc and S->top already set as the interpreter sets
 * them. A Lua callee gets its frame exactly as in the interpreter's L_CALL (inline for fixed
 * arity, vm_precall otherwise) and becomes S->ci; the result is where its code starts
 * (code_at). A C function (or __call on one) runs here and gives 0, or 1 (the interpreter
 * continues the caller) when it set a debug hook. */
static inline uintptr_t call_helper(State *S, CallInfo *ci, Value *ra, int nresults, bool win) {
    CallInfo *nci;
    if (vm_fixed_call_ok(S, ra)) {
        nci = vm_fixed_call(S, ci, ra, nresults);
    } else {
        /* as the interpreter's L_CALL: collectgarbage's frames start on a clean stack */
        if (ra->tt == VT_CFUNC && (ra->u.cf->h.flags & VM_CF_SCRUB)) vm_scrub_stack();
        /* resume, yield, wrap functions: vm_precall's own test, made here to save its frame */
        if (ra->tt == VT_CFUNC && (ra->u.cf->h.flags & VM_CF_CORO))
            nci = vm_coro_precall(S, ra, nresults);
        else
            nci = vm_precall(S, ra, nresults);
        if (nci == NULL) { /* a C function ran */
            if (nresults >= 0) S->top = ci->top;
            if (jit_events || win) vm_prof_frame_back(ci);
            /* It set a debug hook on this coroutine (debug.sethook, or another coroutine
             * while this one was suspended in it): compiled code has no hooks, so the
             * interpreter goes on after the call, in its hooked copy (vm_interp.c). */
            if (__builtin_expect(S->hookmask != 0, 0)) return 1;
            /* -Xsample.mode=code: the C function opened a window (it ran Lua code that
             * ticked): the instrumented interpreter goes on after the call. The window is
             * tested first, alone: it is 0 whenever no sampling runs, so this costs every
             * run a load, a test and a branch (one instruction more than jit_sample's test
             * took), and sampled runs' plain code no more (their C calls paid five
             * instructions more than without profiling: 12 M on bench/suite/json.lua at
             * scale 0.25, vm/prof/README.md) */
            if (__builtin_expect(vm_sample_tl.window != 0, 0) && jit_sample && !win) return 1;
            /* ... or (a twin) the C function ended the window, or ended it and opened
             * another (the frames' paths are then partial: the interpreter's SAMPLECHECK) */
            if (win && __builtin_expect(S->sample_win != vm_sample_tl.window, 0)) return 1;
            return 0;
        }
    }
    return enter_frame(S, nci, win);
}

uintptr_t jit_call(State *S, CallInfo *ci, Value *ra, int nresults) { return call_helper(S, ci, ra, nresults, false); }
uintptr_t jit_call_window(State *S, CallInfo *ci, Value *ra, int nresults) { return call_helper(S, ci, ra, nresults, true); }

/* OP_RETURN/RETURN0/RETURN1 from compiled code: R[a] .. R[a+n-1] are the results (n < 0:
 * up to S->top), ci->savedpc is set. The interpreter's L_RETURN, then its 'ret': 0 when the
 * frame was entered from C (the interpreter that handed over returns); else the caller
 * becomes S->ci and the result is where it continues (code_at its savedpc). */
static inline uintptr_t return_helper(State *S, CallInfo *ci, int a, int n, bool win) {
    Value *base = ci->func + 1;
    if (n < 0) n = (int)(S->top - (base + a));
    if (vm_needs_close(S, base)) {
        S->top = base + a + n;
        vm_close(S, base, NULL); /* __close handlers may move the stack */
        base = ci->func + 1;
    }
    if (win)
        vm_sample_frame_exit(ci, true);
    else if (jit_events)
        vm_prof_frame_exit(ci, true);
    vm_move_results(S, ci, ci->func->u.lf->p, base + a, n);
    if (ci->callstatus & CIST_FRESH) return 0;
    int wanted = ci->nresults;
    ci = ci->prev;
    S->ci = ci;
    if (wanted != VM_MULTRET) S->top = ci->top;
    if (jit_events || win) vm_prof_frame_back(ci);
    return code_at(ci->func->u.lf->p, ci->savedpc, win);
}

uintptr_t jit_return(State *S, CallInfo *ci, int a, int n) { return return_helper(S, ci, a, n, false); }
uintptr_t jit_return_window(State *S, CallInfo *ci, int a, int n) { return return_helper(S, ci, a, n, true); }

/* OP_TAILCALL from compiled code (ci->savedpc set): the interpreter's L_TAILCALL. The callee
 * replaces the frame: a Lua one becomes S->ci and the result is its code; a C function runs
 * and its results are returned as by jit_return. */
static inline uintptr_t tailcall_helper(State *S, CallInfo *ci, int a, int b, bool win) {
    Value *base = ci->func + 1, *ra = base + a;
    if (b != 0)
        S->top = ra + b;
    else
        b = (int)(S->top - ra);
    if (win)
        vm_sample_frame_exit(ci, false);
    else if (jit_events)
        vm_prof_frame_exit(ci, false);
    if (S->openupval != NULL && S->openupval->v >= base) vm_closeupvals(S, base);
    CallInfo *nci = vm_pretailcall(S, ci, ra, b);
    if (nci == NULL) return return_helper(S, ci, a, (int)(S->top - (ci->func + 1 + a)), win);
    return enter_frame(S, nci, win);
}

uintptr_t jit_tailcall(State *S, CallInfo *ci, int a, int b) { return tailcall_helper(S, ci, a, b, false); }
uintptr_t jit_tailcall_window(State *S, CallInfo *ci, int a, int b) { return tailcall_helper(S, ci, a, b, true); }
