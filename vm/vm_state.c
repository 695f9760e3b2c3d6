/* vm_state.c: creating states, allocation that raises, stack growth, metamethod lookup and
 * throwing errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"
#include "vm_thread.h"

/* ORDER TM */
static const char *const tmnames[TM_N] = {
    "__index", "__newindex", "__len",  "__eq",   "__call", "__close",    "__gc",   "__mode",
    "__add",   "__sub",      "__mul",  "__mod",  "__pow",  "__div",      "__idiv", "__band",
    "__bor",   "__bxor",     "__shl",  "__shr",  "__unm",  "__bnot",     "__lt",   "__le",
    "__concat", "__tostring", "__name", "__metatable", "__pairs",
};

/* Initial Lua stack of a coroutine, in slots. */
#define VM_BASIC_STACK 64

/* ======================================================================
 * Allocation
 * ====================================================================== */

_Noreturn static void memerror(State *S) {
    S->errval = vm_str(S->g->memerrmsg);
    vm_throw(S, VM_ERRMEM);
}

/* At the heap cap Boehm returns NULL without collecting first: collect once and retry
 * before reporting "not enough memory". */
void *vm_alloc(State *S, size_t n) {
    void *p = gc_alloc(n);
    if (p == NULL && n > 0) {
        gc_collect();
        if ((p = gc_alloc(n)) == NULL) memerror(S);
    }
    return p;
}

void *vm_alloc_weak(State *S, size_t n) {
    void *p = gc_alloc_weak(n);
    if (p == NULL) {
        gc_collect();
        if ((p = gc_alloc_weak(n)) == NULL) memerror(S);
    }
    return p;
}

void *vm_alloc_leaf(State *S, size_t n) {
    void *p = gc_alloc_leaf(n);
    if (p == NULL && n > 0) {
        gc_collect();
        if ((p = gc_alloc_leaf(n)) == NULL) memerror(S);
    }
    return p;
}

void *vm_realloc(State *S, void *p, size_t n) {
    void *q = gc_realloc(p, n);
    if (q == NULL && n > 0) {
        gc_collect();
        if ((q = gc_realloc(p, n)) == NULL) memerror(S);
    }
    return q;
}

/* ======================================================================
 * Metamethods
 * ====================================================================== */

const Value *vm_gettm(Table *mt, TMS event, String *ename) {
    const Value *tm = vm_table_getstr_inline(mt, ename);
    if (vm_isnil(tm)) {
        if (event < VM_TM_FAST) __atomic_fetch_or(&mt->h.flags, (uint8_t)(1u << event), __ATOMIC_RELAXED); /* cache absence (vm_fasttm) */
        return NULL;
    }
    return tm;
}

Table *vm_metatable_of(State *S, const Value *v) {
    switch (v->tt) {
    case VT_TABLE: return v->u.t->meta;
    case VT_USERDATA: return v->u.u->meta;
    case VT_STR: return S->g->string_mt;
    default: return S->g->type_mt[v->tt];
    }
}

/* ======================================================================
 * Stack
 * ====================================================================== */

/* Reallocate the stack to [newsize] slots, correcting every pointer into it. */
static void realloc_stack(State *S, int newsize) {
    Value *old = S->stack;
    Value *nw = vm_alloc(S, (size_t)(newsize + VM_EXTRA_STACK) * sizeof(Value));
    int keep = S->stacksize < newsize ? S->stacksize : newsize; /* shrinking keeps the used part */
    for (CallInfo *ci = S->ci; ci != NULL; ci = ci->prev) {
        ci->func = nw + (ci->func - old);
        ci->top = nw + (ci->top - old);
    }
    /* Another thread may be accessing an open upvalue through its old pointer: it does so
     * under the foreign-access lock (vm_func.c, "Foreign accesses"), so the move happens
     * under it too, the copy included (a write it makes lands before the copy). */
    bool locked = S->openupval != NULL;
    if (locked) vm_upval_lock();
    memcpy(nw, old, (size_t)(keep + VM_EXTRA_STACK) * sizeof(Value));
    for (UpVal *uv = S->openupval; uv != NULL; uv = uv->next)
        __atomic_store_n(&uv->v, nw + (uv->v - old), __ATOMIC_RELEASE);
    /* The old block is garbage from now on, but Boehm recognises interior pointers and a
     * stale copy of one (a spilled base in a C frame, a register) is enough to keep it, and
     * with it every value its slots still held: dead frames of a deep recursion, the
     * temporaries of finished calls. binary_trees kept its whole stretch tree (10 MB) alive
     * to the end that way. Zeroed, it keeps nothing. Nothing reads it any more: pointers
     * into the stack are re-derived after anything that may grow it (as in Lua, whose
     * realloc frees the old stack), and a foreign access to an open upvalue goes through
     * uv->v under the lock held here. */
    memset(old, 0, (size_t)(S->stacksize + VM_EXTRA_STACK) * sizeof(Value));
    if (locked) vm_upval_unlock();
    S->top = nw + (S->top - old);
    S->stack = nw;
    S->stacksize = newsize;
    S->stack_last = nw + newsize;
}

void vm_growstack(State *S, int n) {
    int size = S->stacksize;
    int needed = (int)(S->top - S->stack) + n;
    if (size > VM_MAXSTACK) {
        /* already using the extra room granted to handle a stack overflow */
        S->errval = vm_str(vm_string_newc(S, "error in error handling"));
        vm_throw(S, VM_ERRERR);
    }
    if (needed > VM_MAXSTACK) {
        /* Give the error handler some room, then raise. */
        realloc_stack(S, VM_MAXSTACK + 200);
        vm_runerror(S, "stack overflow");
    }
    int newsize = 2 * size;
    if (newsize < needed) newsize = needed;
    if (newsize > VM_MAXSTACK) newsize = VM_MAXSTACK;
    realloc_stack(S, newsize);
}

void vm_shrinkstack(State *S) {
    if (S->stacksize <= VM_MAXSTACK) return;
    Value *lim = S->top;
    for (CallInfo *ci = S->ci; ci != NULL; ci = ci->prev)
        if (lim < ci->top) lim = ci->top;
    int inuse = (int)(lim - S->stack) + 1;
    int newsize = inuse + inuse / 2 + VM_MINSTACK;
    if (newsize < VM_MAXSTACK) realloc_stack(S, newsize);
}

CallInfo *vm_extend_ci(State *S) {
    CallInfo *ci = vm_alloc(S, sizeof(CallInfo));
    S->ci->next = ci;
    ci->prev = S->ci;
    ci->next = NULL;
    /* A frame record keeps its place in the list for life, so its depth never changes. */
    ci->depth = S->ci->depth + 1;
    return ci;
}

/* ======================================================================
 * Errors
 * ====================================================================== */

_Noreturn void vm_throw(State *S, int status) {
    ErrJmp *ej = S->errjmp;
    if (ej == NULL) {
        /* No protected call anywhere: a VM bug (the entry points all protect). */
        fprintf(stderr, "tandem: vm: unprotected error: %s\n",
                S->errval.tt == VT_STR ? S->errval.u.s->data : "(error object is not a string)");
        abort();
    }
    ej->status = status;
    longjmp(ej->b, 1);
}

static String *vformat(State *S, const char *fmt, va_list ap) {
    char small[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof small) {
        va_end(ap2);
        return vm_string_new(S, small, (size_t)n);
    }
    String *s = vm_string_alloc(S, (size_t)n);
    vsnprintf(s->data, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

String *vm_vformat(State *S, const char *fmt, va_list ap) { return vformat(S, fmt, ap); }

_Noreturn void vm_runerror(State *S, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    String *msg = vformat(S, fmt, ap);
    va_end(ap);
    if (!(S->ci->callstatus & CIST_C)) msg = vm_add_position(S, S->ci, msg);
    S->errval = vm_str(msg);
    vm_throwrun(S);
}

/* ======================================================================
 * States
 * ====================================================================== */

/* The main state cannot be created: no Lua error can be raised yet, so say why and exit
 * (it used to abort, a crash, when -Xtest.alloc_fail hit one of the first allocations). */
_Noreturn static void startup_failed(const char *why) {
    fprintf(stderr, "tandem: cannot create the VM state: %s\n", why);
    exit(1);
}

State *vm_newstate_thread(State *parent) {
    State *S = parent ? vm_alloc(parent, sizeof(State)) : gc_alloc(sizeof(State));
    if (S == NULL) startup_failed("not enough memory");
    S->h.type = VT_THREAD;
    S->g = parent ? parent->g : NULL;
    S->stack = gc_alloc((VM_BASIC_STACK + VM_EXTRA_STACK) * sizeof(Value));
    if (S->stack == NULL) {
        if (parent) memerror(parent);
        startup_failed("not enough memory");
    }
    S->stacksize = VM_BASIC_STACK;
    S->stack_last = S->stack + VM_BASIC_STACK;
    S->top = S->stack;
    S->ci = &S->base_ci;
    S->base_ci.func = S->top;
    S->base_ci.callstatus = CIST_C;
    S->top->tt = VT_NIL; /* the entry "function" slot */
    S->top++;
    S->base_ci.top = S->top + VM_MINSTACK;
    S->base_ci.nresults = 0;
    S->costatus = CO_SUSPENDED_NEW;
    return S;
}

/* Runs the library openers; protected by vm_state_new's caller. */
static void open_libs(State *S, void *ud) {
    (void)ud;
    vm_open_base(S);
    vm_open_errors(S);
    vm_open_package(S);
    vm_open_coroutine(S);
    vm_open_string(S);
    vm_open_table(S);
    vm_open_math(S);
    vm_open_os(S);
    vm_open_io(S);
    vm_open_debug(S);
    vm_open_utf8(S);
    vm_open_ffi(S);
    vm_open_thread(S);
    vm_open_profile(S);
    Value next = vm_getglobal(S, "next");
    if (next.tt == VT_CFUNC) S->g->fn_next = next.u.cf->f;
    Value ipairs = vm_getglobal(S, "ipairs"); /* its iterator is its upvalue (vm_lib_base.c) */
    if (ipairs.tt == VT_CFUNC && ipairs.u.cf->h.extra >= 1 && ipairs.u.cf->upvals[0].tt == VT_CFUNC)
        S->g->fn_ipairs_aux = ipairs.u.cf->upvals[0].u.cf->f;
}

State *vm_state_new(void) {
    gc_init();
    vm_gc_init();
    Global *g = gc_alloc(sizeof(Global));
    if (g == NULL) startup_failed("not enough memory");
    State *S = vm_newstate_thread(NULL);
    S->g = g;
    S->costatus = CO_RUNNING;
    g->mainthread = S;
    S->basestack = gc_native_stack();
    /* Until the first protected call, errors here are fatal (vm_throw aborts). */
    ErrJmp ej;
    ej.prev = NULL;
    ej.status = VM_OK;
    S->errjmp = &ej;
    if (setjmp(ej.b) == 0) {
        g->memerrmsg = vm_string_newc(S, "not enough memory");
        for (int i = 0; i < TM_N; i++) g->tmname[i] = vm_string_intern(S, tmnames[i], strlen(tmnames[i]));
        g->globals = vm_table_new(S, 0, 64);
        g->loaded = vm_table_new(S, 0, 16);
    } else {
        startup_failed(ej.status == VM_ERRMEM ? "not enough memory" : "error");
    }
    S->errjmp = NULL;
    int st = vm_protect(S, open_libs, NULL);
    if (st != VM_OK) {
        /* vm_protect leaves vm_last_error unset: say what we know. Exit, not abort: out of
         * memory here is not a crash. */
        fprintf(stderr, "tandem: cannot open the standard libraries: %s\n",
                st == VM_ERRMEM ? "not enough memory" : S->errval.tt == VT_STR ? S->errval.u.s->data : "error");
        exit(1);
    }
    return S;
}
