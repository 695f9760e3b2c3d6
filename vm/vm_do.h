/* vm_do.h: calls, returns, protected execution and upvalues (vm_call.c, vm_func.c); private. */
#ifndef VM_DO_H
#define VM_DO_H

#include <stdarg.h>
#include <stdbool.h>

#include "vm_gc.h"
#include "vm_state.h"

/* Ensure [n] free slots above S->top; may move the stack (re-derive pointers after). */
void vm_growstack(State *S, int n);
static inline void vm_checkstack_fast(State *S, int n) {
    if (S->stack_last - S->top <= n) vm_growstack(S, n);
}
#define vm_savestack(S, p) ((char *)(p) - (char *)(S)->stack)
#define vm_restorestack(S, n) ((Value *)((char *)(S)->stack + (n)))

CallInfo *vm_extend_ci(State *S);
/* After an error was handled: give back the extra room granted for a stack overflow. */
void vm_shrinkstack(State *S);
static inline CallInfo *vm_next_ci(State *S) {
    return S->ci->next ? S->ci->next : vm_extend_ci(S);
}

/* Move [nres] results starting at [first] to [res], adjusted to [wanted] (VM_MULTRET: all of
 * them); sets the top. vm_poscall's move, and vm_coro_precall's. */
static inline void vm_moveresults(State *S, Value *res, Value *first, int nres, int wanted) {
    if (wanted == VM_MULTRET) {
        for (int i = 0; i < nres; i++) res[i] = first[i];
        S->top = res + nres;
        return;
    }
    int i = 0;
    for (; i < wanted && i < nres; i++) res[i] = first[i];
    for (; i < wanted; i++) res[i].tt = VT_NIL;
    S->top = res + wanted;
}

/* The frame record of a call of the C function at [func] (its arguments up to S->top), made
 * S->ci and returned (its func is [func], wherever the stack now is): precall_c's and
 * vm_coro_precall's. Finalizers the collector queued run first, at a call of a C function:
 * the stack is whole (everything live is below S->top) and the caller expects arbitrary
 * code to run (vm_gc.c). One load when nothing is queued. */
static inline CallInfo *vm_cframe(State *S, Value *func, int nresults) {
    ptrdiff_t fo = vm_savestack(S, func);
    vm_gc_finalize_pending(S);
    vm_checkstack_fast(S, VM_MINSTACK);
    func = vm_restorestack(S, fo);
    CallInfo *ci = vm_next_ci(S);
    ci->func = func;
    ci->top = S->top + VM_MINSTACK;
    ci->nresults = nresults;
    ci->callstatus = CIST_C;
    ci->nextra = 0;
    ci->savedpc = NULL;
    S->ci = ci;
    return ci;
}

/* The Lua-to-Lua call without a C call (the interpreter's L_CALL, the JIT's jit_call): [ra]
 * a Lua function without varargs, with room on the stack for its frame. */
static inline bool vm_fixed_call_ok(const State *S, const Value *ra) {
    return ra->tt == VT_LFUNC && !ra->u.lf->p->is_vararg &&
           S->stack_last - S->top > ra->u.lf->p->maxstack + ra->u.lf->p->numparams;
}
/* Its frame, after [ci], for the arguments up to S->top (missing ones nil): returned, and
 * made S->ci with S->top at its top. */
static inline CallInfo *vm_fixed_call(State *S, CallInfo *ci, Value *ra, int nresults) {
    Proto *p = ra->u.lf->p;
    CallInfo *nci = ci->next ? ci->next : vm_extend_ci(S);
    for (int nargs = (int)(S->top - ra) - 1; nargs < p->numparams; nargs++) (S->top++)->tt = VT_NIL;
    nci->func = ra;
    nci->nresults = nresults;
    nci->callstatus = 0;
    nci->top = ra + 1 + p->maxstack;
    nci->savedpc = p->code;
    nci->nextra = 0;
    S->top = nci->top;
    S->ci = nci;
    return nci;
}

/* Does a Lua frame whose registers start at [base] have something to close when it returns
 * (open upvalues, to-be-closed variables)? */
static inline bool vm_needs_close(const State *S, const Value *base) {
    return (S->openupval != NULL && S->openupval->v >= base) ||
           (S->ntbc > 0 && S->tbc[S->ntbc - 1] >= vm_savestack(S, base));
}

/* A returning Lua frame [ci] of [p]: its [n] results at [ra] moved to where the caller wants
 * them (ci->nresults of them, nil-padded; all for VM_MULTRET), S->top just after them. */
static inline void vm_move_results(State *S, const CallInfo *ci, const Proto *p, const Value *ra, int n) {
    Value *res = ci->func;
    if (p->is_vararg) res -= ci->nextra + p->numparams + 1;
    int wanted = ci->nresults;
    if (wanted == VM_MULTRET) wanted = n;
    int j = 0;
    for (; j < n && j < wanted; j++) res[j] = ra[j];
    for (; j < wanted; j++) res[j].tt = VT_NIL;
    S->top = res + wanted;
}

/* Prepare a call of the value at [func] with the arguments up to S->top. For a Lua function
 * returns its new CallInfo (S->ci) without running it; for a C function runs it, finishes
 * the call (results moved to func ...) and returns NULL. __call is resolved here. */
CallInfo *vm_precall(State *S, Value *func, int nresults);
/* Finish a call: move the [nres] values below S->top to the frame's result position,
 * adjusted to ci->nresults, and pop the frame. */
void vm_poscall(State *S, CallInfo *ci, int nres);
/* Tail call from the Lua frame [ci] of the function at [func] with args up to top:
 * returns the new (reused) CallInfo for a Lua callee, or NULL after running a C callee
 * (whose results are then returned by the caller). */
CallInfo *vm_pretailcall(State *S, CallInfo *ci, Value *func, int narg1);

/* Call the value at [func] (args up to top) and run it to completion, from C. */
void vm_call_value(State *S, Value *func, int nresults);

/* As vm_call_value, and a coroutine may yield inside the call even when made from C. */
void vm_call_yieldable(State *S, Value *func, int nresults);

/* The interpreter: runs Lua frames starting at [ci] (marked CIST_FRESH) until it returns. */
void vm_execute(State *S, CallInfo *ci);
/* For JIT-compiled code (jit/): run the one instruction at ci->savedpc of the Lua frame
 * [ci] (S->ci) exactly as the interpreter does, and return the pc of the next instruction to
 * run, also left in ci->savedpc. Never a call, tail call or return (they leave the frame). */
const Instr *vm_jit_step(State *S, CallInfo *ci);
/* The same for the instrumented twins of -Xsample.mode=code's windows (jit/README.md): the
 * instrumented sampling step, and the tick of a stepped back edge counted. */
const Instr *vm_jit_step_window(State *S, CallInfo *ci);
/* Uninstrumented compiled code (no profiling, or -Xsample.mode=code's between windows) at an
 * instruction other than FORLOOP and TFORLOOP, whose steps count no sampling tick: the plain
 * step alone (vm_jit_step tests the mode, the analyses and the opcode at every step). */
const Instr *vm_jit_step_plain(State *S, CallInfo *ci);

/* Run f(S, ud) catching errors: returns the status, the error object in S->errval. The
 * stack and frames are NOT restored (vm_pcall does that). */
int vm_rawrunprotected(State *S, void (*f)(State *, void *), void *ud);

/* vm_pcall with a message handler at stack offset [errfunc] (see S->errfunc). */
int vm_pcall_msgh(State *S, int nargs, int nresults, ptrdiff_t errfunc);

/* Upvalues (vm_func.c). */
UpVal *vm_findupval(State *S, Value *level);
void vm_closeupvals(State *S, Value *level);
/* Whether [p] (u->v, loaded once) may be accessed directly by S's thread: u is closed, or
 * open on S's own stack (only S's thread closes it or moves that stack), or no second
 * language thread has started (then the stack it is open on is a suspended coroutine's of
 * this one thread: nothing closes or moves it meanwhile; a coroutine reading its creator's
 * locals is the common case, and lua5.4 pays nothing for it). Otherwise the access goes
 * through vm_upval_foreign (vm_func.c, "Foreign accesses"). */
static inline bool vm_upval_direct(const State *S, const UpVal *u, const Value *p) {
    return p == &u->closed || (p >= S->stack && p < S->stack_last + VM_EXTRA_STACK) ||
           !vm_table_threads_have_started();
}
/* A whole-Value access to upvalue [u], open on another thread's stack: *[load] = the value
 * when [load] is not NULL, else the value = *[store]. Returns the address accessed (for
 * the profiler's heap events). */
const Value *vm_upval_foreign(UpVal *u, Value *load, const Value *store);
/* *[tv] = the value of upvalue [u], read whole; returns where it was read, or [tv] itself
 * when it went through vm_upval_foreign (the slot may be reused once the lock is gone). */
static inline const Value *vm_upval_value(const State *S, UpVal *u, Value *tv) {
    const Value *p = __atomic_load_n(&u->v, __ATOMIC_ACQUIRE);
    if (vm_upval_direct(S, u, p)) {
        *tv = vm_loadv(p);
        return p;
    }
    vm_upval_foreign(u, tv, NULL);
    return tv;
}
/* Held while open upvalues' pointers change outside their owner's closing (realloc_stack). */
void vm_upval_lock(void);
void vm_upval_unlock(void);
/* Close upvalues and call __close of to-be-closed variables at or above [level]; [err] is
 * the error object (nil for a normal exit). May call Lua code (may move the stack). */
void vm_close(State *S, Value *level, const Value *err);
/* As vm_close; [yieldable]: the handlers may yield even when a C function closes (pcall's
 * error path in a coroutine, as lua5.4 allows), else vm_call_value's rule decides. */
void vm_close_yieldable(State *S, Value *level, const Value *err, bool yieldable);
void vm_newtbc(State *S, Value *obj);
LClosure *vm_newlclosure(State *S, Proto *p);
/* CLOSURE's work (interpreter and compiled code): a closure of [np], nested in the running Lua
 * function [cl] of frame S->ci, its upvalues the frame's registers (open upvalues, shared)
 * or [cl]'s own. Allocates (Protect: savedpc and top set). */
LClosure *vm_closure(State *S, const LClosure *cl, Proto *np);

/* A new coroutine (vm_state.c). */
State *vm_newstate_thread(State *parent);

String *vm_vformat(State *S, const char *fmt, va_list ap);

/* Throw S->errval as a runtime error through xpcall's message handler, if any. */
_Noreturn void vm_throwrun(State *S);

/* Call the value at [func] (arguments up to top) protected: returns the status; the results,
 * or the error object alone, from [func] on. [errfunc]: stack offset of a message handler, or
 * 0. [yieldable]: a coroutine may yield inside (pcall from Lua code). */
int vm_pcall_value(State *S, Value *func, int nresults, ptrdiff_t errfunc, bool yieldable);

/* [msg] prefixed with "chunk:line:" of the function [level] levels up from the running one
 * (1: the caller of the running C function), or [msg] itself for a C function or none. */
String *vm_where(State *S, int level, String *msg);

/* Coroutines (vm_coro.c; the library is vm/lib/vm_lib_coro.c). Resume [co] with the [nargs]
 * values on top of S's stack: on return the values it yielded or returned (or its error
 * object) are on top of S's stack; returns their count, or -1 after an error (one value, the
 * error object). */
int vm_coro_resume(State *S, State *co, int nargs);
/* Yield the [n] values on top of the running coroutine's stack; returns the number of values
 * the next resume passes in (on top of the stack). Raises outside a coroutine. */
int vm_coro_yield(State *S, int n);
/* Both in one (vm_coro.c says why): [co] NULL yields, else resumes [co], with the [n] values
 * on top of S's stack; then returns after(S, co, result) (co NULL after a yield; result as
 * vm_coro_resume's or vm_coro_yield's), or the result when [after] is NULL. For the library
 * functions to tail-call. */
typedef int (*VmCoroAfter)(State *S, State *co, int n);
int vm_coro_transfer(State *S, State *co, int n, VmCoroAfter after);
/* A call of a VM_CF_CORO function at [func] (vm_value.h), its arguments up to S->top, made by
 * vm_precall (and jit_call): what precall_c, the library function and vm_poscall
 * do, in one C frame. Returns NULL (a C function ran), for vm_precall to tail-call. */
CallInfo *vm_coro_precall(State *S, Value *func, int nresults);
/* coroutine.wrap's function after [co] failed: raise its error object (on top of S's stack),
 * a string with the position of the wrap function's caller added, as lua5.4's wrap does. */
_Noreturn void vm_coro_wrap_error(State *S, State *co);
/* Close the pending to-be-closed variables of suspended [co] and mark it dead: the status
 * of the last __close that failed (its error in co->errval), or VM_OK. */
int vm_coro_close_suspended(State *S, State *co);

/* Registers error, pcall and xpcall (vm/lib/vm_lib_error.c). */
void vm_open_errors(State *S);

#endif
