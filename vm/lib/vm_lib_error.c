/* vm_lib_error.c: the base library's error handling: error, pcall and xpcall, over the
 * protected calls of vm/vm_call.c (vm_do.h). */
#include "vm_do.h"
#include "vm_lib.h"

static int l_error(State *S) {
    vm_Integer level = vm_opt_integer(S, 2, 1);
    vm_settop(S, 1);
    Value v = *vm_at(S, 1);
    if (v.tt == VT_STR && level > 0) v = vm_str(vm_where(S, (int)level, v.u.s));
    vm_error_value(S, v);
}

/* pcall(f, ...): true + results, or false + error object. */
static int l_pcall(State *S) {
    vm_check_any(S, 1);
    int n = vm_gettop(S);
    int status = vm_pcall_value(S, S->top - n, VM_MULTRET, 0, true);
    if (S->ci->top < S->top) S->ci->top = S->top;
    /* The results (or the error object) start at slot 1. */
    vm_checkstack(S, 1);
    vm_pushbool(S, status == VM_OK);
    vm_insert(S, 1);
    return vm_gettop(S);
}

/* xpcall(f, msgh, ...) */
static int l_xpcall(State *S) {
    int n = vm_gettop(S);
    vm_check_type(S, 2, VT_LFUNC);
    /* Layout: [f, msgh, args...] -> [msgh, f, args...]: the handler stays at slot 1. */
    Value f = *vm_at(S, 1);
    *vm_at(S, 1) = *vm_at(S, 2);
    *vm_at(S, 2) = f;
    ptrdiff_t h = vm_savestack(S, vm_at(S, 1));
    int status = vm_pcall_value(S, vm_at(S, 2), VM_MULTRET, h, true);
    if (S->ci->top < S->top) S->ci->top = S->top;
    /* Results from slot 2 on; slot 1 (the handler) becomes the status. */
    *vm_at(S, 1) = vm_bool(status == VM_OK);
    (void)n;
    return vm_gettop(S);
}

static const LibReg errorfuncs[] = {
    {"error", l_error},
    {"pcall", l_pcall},
    {"xpcall", l_xpcall},
    {NULL, NULL},
};

void vm_open_errors(State *S) {
    for (const LibReg *r = errorfuncs; r->name; r++)
        vm_setglobal(S, r->name, vm_cfunc(vm_newcfunction(S, r->f, r->name, 0)));
}
