/* vm_lib_coro.c: the coroutine library (create, resume, yield, status, wrap, running,
 * isyieldable, close) over the mechanism of vm/vm_coro.c (vm_do.h). */
#include <string.h>

#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"

static State *getco(State *S) {
    const Value *v = vm_at(S, 1);
    if (v->tt != VT_THREAD) vm_type_error(S, 1, "thread");
    return v->u.th;
}

static int co_create(State *S) {
    vm_check_type(S, 1, VT_LFUNC);
    State *co = vm_newstate_thread(S);
    vm_hook_inherit(co, S);
    co->stack[1] = *vm_at(S, 1);
    co->top = co->stack + 2;
    vm_push(S, vm_thread(co));
    return 1;
}

/* The library's resume, yield and wrap tail-call vm_coro_transfer, so that the native
 * frames between a switch and precall_c are the same on both sides (vm_coro.c says why);
 * what they do with the results is their [after]. */
static int resume_after(State *S, State *co, int n) {
    (void)co;
    if (n < 0) {
        vm_pushbool(S, false);
        Value e = S->top[-2];
        S->top[-2] = S->top[-1];
        S->top[-1] = e;
        return 2;
    }
    vm_checkstack(S, 1);
    vm_pushbool(S, true);
    vm_insert(S, vm_gettop(S) - n);
    return n + 1;
}

static int co_resume(State *S) {
    State *co = getco(S);
    return vm_coro_transfer(S, co, vm_gettop(S) - 1, resume_after);
}

static int co_yield(State *S) { return vm_coro_transfer(S, NULL, vm_gettop(S), NULL); }

static int wrap_after(State *S, State *co, int n) {
    if (n < 0) vm_coro_wrap_error(S, co);
    return n;
}

static int auxwrap(State *S) {
    State *co = vm_upvalue(S, 1)->u.th;
    return vm_coro_transfer(S, co, vm_gettop(S), wrap_after);
}

static int co_wrap(State *S) {
    co_create(S);
    CClosure *f = vm_newcfunction(S, auxwrap, "wrap", 1);
    f->h.flags |= VM_CF_CORO_WRAP;
    f->upvals[0] = S->top[-1];
    vm_push(S, vm_cfunc(f));
    return 1;
}

static const char *statusname(State *S, State *co) {
    if (S == co) return "running";
    switch (co->costatus) {
    case CO_SUSPENDED_NEW:
    case CO_SUSPENDED: return "suspended";
    case CO_NORMAL: return "normal";
    case CO_DEAD: return "dead";
    default: return "running";
    }
}

static int co_status(State *S) {
    State *co = getco(S);
    vm_pushcstr(S, statusname(S, co));
    return 1;
}

static int co_running(State *S) {
    vm_push(S, vm_thread(S));
    vm_pushbool(S, S == S->g->mainthread);
    return 2;
}

static int co_isyieldable(State *S) {
    State *co = vm_gettop(S) >= 1 ? getco(S) : S;
    vm_pushbool(S, co != S->g->mainthread && co->nny == 0);
    return 1;
}

static int co_close(State *S) {
    State *co = getco(S);
    const char *st = statusname(S, co);
    if (strcmp(st, "suspended") != 0 && strcmp(st, "dead") != 0)
        vm_error(S, "cannot close a %s coroutine", st);
    int status = VM_OK;
    if (co->costatus == CO_DEAD) {
        status = co->costatus_err;
        if (status != VM_OK) {
            /* Report the error the coroutine died with (once), and forget its frames. */
            Value e = co->errval;
            co->costatus_err = VM_OK;
            co->ci = &co->base_ci;
            co->top = co->stack + 1;
            vm_pushbool(S, false);
            vm_push(S, e);
            return 2;
        }
    } else {
        status = vm_coro_close_suspended(S, co);
        if (status != VM_OK) {
            vm_pushbool(S, false);
            vm_push(S, co->errval);
            return 2;
        }
    }
    vm_pushbool(S, true);
    return 1;
}

static const LibReg colib[] = {
    {"create", co_create},   {"resume", co_resume},   {"yield", co_yield},
    {"status", co_status},   {"wrap", co_wrap},       {"running", co_running},
    {"isyieldable", co_isyieldable}, {"close", co_close}, {NULL, NULL},
};

void vm_open_coroutine(State *S) {
    Table *t = vm_newlib(S, colib);
    /* resume and yield: their calls take vm_coro_precall's one frame (vm_value.h) */
    Value tv = vm_table(t);
    vm_getfield(S, &tv, "resume").u.cf->h.flags |= VM_CF_CORO_RESUME;
    vm_getfield(S, &tv, "yield").u.cf->h.flags |= VM_CF_CORO_YIELD;
    vm_setglobal(S, "coroutine", vm_table(t));
    if (S->g->loaded) vm_setfield(S, S->g->loaded, "coroutine", vm_table(t));
}
