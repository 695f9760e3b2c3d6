/* vm_call.c: calling functions (Lua and C), returning, protected calls, and the error
 * functions of the base library (error, pcall, xpcall). */
#include <stdio.h>
#include <stdlib.h>

#include "vm_api.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"

/* ======================================================================
 * Calls
 * ====================================================================== */

void vm_poscall(State *S, CallInfo *ci, int nres) {
    Value *res = ci->func;
    if (!(ci->callstatus & CIST_C) && ci->nextra >= 0 && res->u.lf->p->is_vararg)
        res -= ci->nextra + res->u.lf->p->numparams + 1;
    vm_moveresults(S, res, S->top - nres, nres, ci->nresults);
    S->ci = ci->prev;
}

/* Replace a non-function at [func] by its __call metamethod, shifting the arguments up.
 * Returns the (possibly moved) function slot. */
static Value *tryfuncTM(State *S, Value *func) {
    Table *mt = vm_metatable_of(S, func);
    const Value *tm = mt ? vm_gettm(mt, TM_CALL, S->g->tmname[TM_CALL]) : NULL;
    if (tm == NULL) vm_callerror(S, func);
    Value f = vm_loadv(tm);   /* a metatable slot: other threads may change it */
    ptrdiff_t fo = vm_savestack(S, func);
    vm_checkstack_fast(S, 1);
    func = vm_restorestack(S, fo);
    for (Value *p = S->top; p > func; p--) *p = p[-1];
    S->top++;
    *func = f;
    return func;
}

static int precall_c(State *S, Value *func, int nresults, CFunction f) {
    CallInfo *ci = vm_cframe(S, func, nresults); /* finalizers run first */
    /* Debug hooks (vm_hook.c): one byte tested before and after; the function may set or
     * clear them (debug.sethook's own return is hooked, as in lua5.4). */
    if (__builtin_expect(S->hookmask & VM_MASKCALL, 0)) vm_hook_ccall(S, ci, (int)(S->top - ci->func) - 1);
    int n = f(S);
    if (__builtin_expect(S->hookmask != 0, 0)) vm_hook_return(S, ci, (int)(S->top - n - ci->func), n);
    vm_poscall(S, ci, n);
    return n;
}

/* Set up the frame of a Lua function at [func] with its arguments up to S->top. */
static CallInfo *precall_lua(State *S, Value *func, int nresults) {
    Proto *p = func->u.lf->p;
    int nargs = (int)(S->top - func) - 1;
    int nfix = p->numparams;
    ptrdiff_t fo = vm_savestack(S, func);
    vm_checkstack_fast(S, p->maxstack + nfix + 2);
    func = vm_restorestack(S, fo);
    CallInfo *ci = vm_next_ci(S);
    for (; nargs < nfix; nargs++) (S->top++)->tt = VT_NIL;
    int nextra = 0;
    if (p->is_vararg) {
        /* Move the function and its fixed parameters above the extra arguments, which stay
         * where they are for VARARG to copy (below ci->func). */
        nextra = nargs - nfix;
        Value *nf = S->top;
        nf[0] = func[0];
        for (int i = 1; i <= nfix; i++) {
            nf[i] = func[i];
            func[i].tt = VT_NIL;
        }
        func = nf;
    }
    ci->func = func;
    ci->nresults = nresults;
    ci->callstatus = 0;
    ci->top = func + 1 + p->maxstack;
    ci->savedpc = p->code;
    ci->nextra = nextra;
    /* Registers beyond the arguments start as nil: the conservative collector must not see
     * stale references there, and the debug interface reads them. */
    for (Value *r = func + 1 + nfix; r < ci->top; r++) r->tt = VT_NIL;
    S->top = ci->top;
    S->ci = ci;
    return ci;
}

CallInfo *vm_precall(State *S, Value *func, int nresults) {
    for (;;) {
        switch (func->tt) {
        case VT_LFUNC: return precall_lua(S, func, nresults);
        case VT_CFUNC:
            /* resume, yield and wrap functions: in one frame (vm_coro.c) */
            if (func->u.cf->h.flags & VM_CF_CORO) return vm_coro_precall(S, func, nresults);
            precall_c(S, func, nresults, func->u.cf->f);
            return NULL;
        default: func = tryfuncTM(S, func); break;
        }
    }
}

CallInfo *vm_pretailcall(State *S, CallInfo *ci, Value *func, int narg1) {
    for (;;) {
        switch (func->tt) {
        case VT_CFUNC: {
            /* Run it as a plain call; the caller returns its results. */
            precall_c(S, func, VM_MULTRET, func->u.cf->f);
            return NULL;
        }
        case VT_LFUNC: {
            Proto *p = func->u.lf->p;
            Value *base = ci->func;
            Proto *cp = base->u.lf->p;
            if (cp->is_vararg) base -= ci->nextra + cp->numparams + 1;
            for (int i = 0; i < narg1; i++) base[i] = func[i];
            S->top = base + narg1;
            ptrdiff_t bo = vm_savestack(S, base);
            vm_checkstack_fast(S, p->maxstack + p->numparams + 2);
            base = vm_restorestack(S, bo);
            int nargs = narg1 - 1;
            int nfix = p->numparams;
            for (; nargs < nfix; nargs++) (S->top++)->tt = VT_NIL;
            int nextra = 0;
            if (p->is_vararg) {
                nextra = nargs - nfix;
                Value *nf = S->top;
                nf[0] = base[0];
                for (int i = 1; i <= nfix; i++) {
                    nf[i] = base[i];
                    base[i].tt = VT_NIL;
                }
                base = nf;
            }
            ci->func = base;
            ci->top = base + 1 + p->maxstack;
            ci->savedpc = p->code;
            ci->nextra = nextra;
            ci->callstatus |= CIST_TAIL;
            for (Value *r = base + 1 + nfix; r < ci->top; r++) r->tt = VT_NIL;
            S->top = ci->top;
            return ci;
        }
        default:
            func = tryfuncTM(S, func);
            narg1++;
            break;
        }
    }
}

/* Check the C stack before entering another nested call from C. */
static void checkcstack(State *S) {
    if (S->nCcalls == VM_MAXCCALLS)
        vm_runerror(S, "C stack overflow");
    if (S->nCcalls >= VM_MAXCCALLS / 10 * 11) {
        S->errval = vm_str(vm_string_newc(S, "error in error handling"));
        vm_throw(S, VM_ERRERR);
    }
    char here;
    if (S->cstack_limit != NULL && &here < S->cstack_limit && S->nCcalls < VM_MAXCCALLS)
        vm_runerror(S, "C stack overflow");
}

static void call_value(State *S, Value *func, int nresults, bool yieldable) {
    S->nCcalls++;
    if (S->nCcalls >= VM_MAXCCALLS || S->cstack_limit != NULL) checkcstack(S);
    if (!yieldable) S->nny++;
    CallInfo *ci = vm_precall(S, func, nresults);
    if (ci != NULL) {
        ci->callstatus |= CIST_FRESH;
        vm_execute(S, ci);
    }
    if (!yieldable) S->nny--;
    S->nCcalls--;
}

/* Calls from Lua code (metamethods, iterators) may be crossed by a yield; calls made by C
 * functions may not, except where the C function is written for it (pcall, coroutine
 * bodies), as in lua5.4. */
void vm_call_value(State *S, Value *func, int nresults) {
    call_value(S, func, nresults, !(S->ci->callstatus & CIST_C));
}

void vm_call_yieldable(State *S, Value *func, int nresults) { call_value(S, func, nresults, true); }

/* ======================================================================
 * Protected execution
 * ====================================================================== */

int vm_rawrunprotected(State *S, void (*f)(State *, void *), void *ud) {
    int32_t oldnCcalls = S->nCcalls;
    struct CapiKTarget *oldktarget = S->ktarget;
    ErrJmp ej;
    ej.status = VM_OK;
    ej.prev = S->errjmp;
    S->errjmp = &ej;
    if (setjmp(ej.b) == 0) f(S, ud);
    S->errjmp = ej.prev;
    S->nCcalls = oldnCcalls;
    S->ktarget = oldktarget; /* an error may have left trampolines that set it (vm/capi) */
    return ej.status;
}

/* After an error: put the error object at [oldtop] and make it the top. */
static void seterrorobj(State *S, int status, Value *oldtop) {
    if (status == VM_ERRMEM)
        *oldtop = vm_str(S->g->memerrmsg);
    else
        *oldtop = S->errval;
    S->top = oldtop + 1;
}

typedef struct PCallArgs {
    Value *func;
    int nresults;
    bool yieldable;
} PCallArgs;

static void f_call(State *S, void *ud) {
    PCallArgs *a = ud;
    call_value(S, a->func, a->nresults, a->yieldable);
}

/* Close to-be-closed variables after an error, each in protected mode; an error in a
 * __close handler replaces the error object (an error caught inside one does not). */
typedef struct CloseArgs {
    ptrdiff_t level;
    bool yieldable;   /* the pcall was made from Lua code: handlers may yield */
} CloseArgs;

static void f_close(State *S, void *ud) {
    CloseArgs *c = ud;
    Value err = S->errval;
    vm_close_yieldable(S, vm_restorestack(S, c->level), &err, c->yieldable);
}

int vm_pcall_value(State *S, Value *func, int nresults, ptrdiff_t errfunc, bool yieldable) {
    CallInfo *old_ci = S->ci;
    ptrdiff_t old_top = vm_savestack(S, func);
    ptrdiff_t old_errfunc = S->errfunc;
    S->errfunc = errfunc;
    int32_t old_nny = S->nny;
    uint8_t old_inhook = S->inhook; /* an error inside a hook leaves the hook */
    PCallArgs a = {func, nresults, yieldable};
    int status = vm_rawrunprotected(S, f_call, &a);
    if (status != VM_OK) {
        S->ci = old_ci;
        /* Close upvalues and pending to-be-closed variables of the aborted frames. The error
         * being propagated is kept aside: a handler's own pcall that catches an error writes
         * S->errval, and must not replace it; a handler that raises does replace it. */
        CloseArgs c = {old_top, yieldable};
        Value errv = S->errval;
        int st;
        while ((st = vm_rawrunprotected(S, f_close, &c)) != VM_OK) {
            S->ci = old_ci;
            status = st;
            errv = S->errval;
        }
        S->errval = errv;
        seterrorobj(S, status, vm_restorestack(S, old_top));
        vm_shrinkstack(S);
        /* The aborted frames' registers still hold references, and the collector scans
         * the whole stack block: clear them so what the failed call built can be freed
         * (a pcall that failed with "not enough memory" must give its memory back). */
        for (Value *v = S->top; v < S->stack_last + VM_EXTRA_STACK; v++) v->tt = VT_NIL, v->u.p = NULL;
    }
    S->nny = old_nny;
    S->inhook = old_inhook;
    S->errfunc = old_errfunc;
    return status;
}

int vm_pcall_msgh(State *S, int nargs, int nresults, ptrdiff_t errfunc) {
    int status = vm_pcall_value(S, S->top - nargs - 1, nresults, errfunc, false);
    if (nresults == VM_MULTRET && S->ci->top < S->top) S->ci->top = S->top;
    return status;
}

int vm_protect(State *S, void (*f)(State *S, void *ud), void *ud) {
    CallInfo *old_ci = S->ci;
    ptrdiff_t old_top = vm_savestack(S, S->top);
    int status = vm_rawrunprotected(S, f, ud);
    if (status != VM_OK) {
        S->ci = old_ci;
        vm_closeupvals(S, vm_restorestack(S, old_top));
        seterrorobj(S, status, vm_restorestack(S, old_top));
    }
    return status;
}

/* Throw S->errval as a runtime error, first passing it through xpcall's message handler
 * (called where the error happened, so it can see the whole stack). */
_Noreturn void vm_throwrun(State *S) {
    if (S->errfunc != 0) {
        Value *h = vm_restorestack(S, S->errfunc);
        vm_checkstack_fast(S, 2);
        h = vm_restorestack(S, S->errfunc);
        S->top[0] = *h;
        S->top[1] = S->errval;
        S->top += 2;
        vm_call_value(S, S->top - 2, 1);
        S->errval = S->top[-1];
        S->top--;
    }
    vm_throw(S, VM_ERRRUN);
}

/* ======================================================================
 * C API: calls and errors
 * ====================================================================== */

void vm_call(State *S, int nargs, int nresults) {
    vm_call_value(S, S->top - nargs - 1, nresults);
    if (nresults == VM_MULTRET && S->ci->top < S->top) S->ci->top = S->top;
}

void vm_call_yieldable_from_c(State *S, int nargs, int nresults) {
    vm_call_yieldable(S, S->top - nargs - 1, nresults);
    if (nresults == VM_MULTRET && S->ci->top < S->top) S->ci->top = S->top;
}

int vm_pcall(State *S, int nargs, int nresults) {
    int status = vm_pcall_value(S, S->top - nargs - 1, nresults, 0, false);
    if (nresults == VM_MULTRET && S->ci->top < S->top) S->ci->top = S->top;
    return status;
}

_Noreturn void vm_error_value(State *S, Value v) {
    S->errval = v;
    vm_throwrun(S);
}

String *vm_where(State *S, int level, String *msg) {
    CallInfo *ci = S->ci;
    for (int i = 0; i < level && ci != NULL; i++) ci = ci->prev;
    if (ci != NULL && ci != &S->base_ci && !(ci->callstatus & CIST_C)) return vm_add_position(S, ci, msg);
    return msg;
}

_Noreturn void vm_error(State *S, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    String *msg = vm_vformat(S, fmt, ap);
    va_end(ap);
    vm_error_value(S, vm_str(vm_where(S, 1, msg)));
}
