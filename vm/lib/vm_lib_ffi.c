/* vm_lib_ffi.c: the ffi library on libffi and dlopen: call C functions of shared libraries.
 *
 *   local libc = ffi.load("c")                      -- "c"/"libc", "m"/"libm", a path, or
 *                                                   -- nothing: the process itself
 *   local strlen = libc:func("strlen", "int64", {"string"})
 *   print(strlen("hello"))                          --> 5
 *
 * Signatures are made of the type names of ffi_types[] below. A library handle is a full
 * userdata (pointer-free payload: an FfiLib; its display name is the user value) whose
 * metatable is the per-VM library metatable (__index = the methods, __name = "ffi.library").
 * Every closure of ffi_funcs/lib_methods keeps that metatable as upvalue 1, which is how a
 * value is recognised as a library handle, so several VMs in one process never mix them.
 *
 * A bound function is a C closure over two upvalues: 1, a pointer-free userdata whose
 * payload is the whole FfiSig (symbol address, prepared ffi_cif, its argument-type array and
 * the symbol name), and 2, the library handle. Invariant: the cif points only into its own
 * FfiSig block (atypes) or at libffi's static ffi_type_* objects, never at other GC memory:
 * the block is not scanned, so a GC object reachable only from it would be collected. The
 * block itself lives as long as the closure (upvalue 1 -> Userdata.data), and Boehm never
 * moves it, so the cif's interior pointers stay valid.
 *
 * Libraries are never dlclose'd: a bound function may outlive every handle of its library
 * (it keeps one as upvalue 2, but C code may also have kept pointers into the library), and
 * dlopen reference-counts repeated loads, so the cost is one mapping per distinct library.
 *
 * Safepoints: the foreign call runs in a blocking region (vm_blocking_call), so a
 * thread sitting in a long C call counts as stopped and never holds up a collection. Inside
 * the region nothing touches a Value or allocates: arguments are converted into C storage
 * before it, the result is converted after it. The region is one for the collector too
 * (GC_do_blocking), so it does not even signal the thread (a signal would cut short sleeps
 * and other system calls that are never restarted). */
#include <dlfcn.h>
#include <ffi.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "vm_lib.h"
#include "vm_shadow.h"
#include "vm_thread.h"

/* Most arguments a bound function may take (argument storage lives on the C stack). */
#define FFI_MAXARGS 16

/* Signature type names; ORDER FT matches ffi_types[]. */
typedef enum { FT_VOID, FT_INT, FT_INT64, FT_DOUBLE, FT_STRING, FT_POINTER, FT_NTYPES } FfiKind;

static const struct {
    const char *name;
    ffi_type *type;
} ffi_types[FT_NTYPES] = {
    [FT_VOID] = {"void", &ffi_type_void},
    [FT_INT] = {"int", &ffi_type_sint},
    [FT_INT64] = {"int64", &ffi_type_sint64},
    [FT_DOUBLE] = {"double", &ffi_type_double},
    [FT_STRING] = {"string", &ffi_type_pointer},
    [FT_POINTER] = {"pointer", &ffi_type_pointer},
};

/* The lists quoted in "unknown type" errors (void is a result type only). */
#define FFI_ARG_TYPES "int, int64, double, string, pointer"
#define FFI_RET_TYPES FFI_ARG_TYPES ", void"

/* Payload of a library handle. Pointer-free: the dlopen handle is not GC memory. */
typedef struct FfiLib {
    void *handle;
} FfiLib;

/* Payload of a bound function's signature (see the invariant at the top). */
typedef struct FfiSig {
    void *sym;                        /* the C function */
    ffi_cif cif;                      /* prepared once, at bind time */
    ffi_type *atypes[FFI_MAXARGS];    /* cif.arg_types points here */
    uint8_t ret;                      /* FfiKind of the result */
    uint8_t nargs;
    uint8_t kinds[FFI_MAXARGS];       /* FfiKind of each argument */
    char name[];                      /* symbol name, NUL-terminated: the closure's name */
} FfiSig;

/* {====================================================================
 * Library handles
 * ===================================================================== */

static Table *lib_meta(State *S) { return vm_upvalue(S, 1)->u.t; }

/* The library handle at argument [arg], or a type error. */
static Userdata *check_lib(State *S, int arg) {
    const Value *v = vm_at(S, arg);
    if (v->tt != VT_USERDATA || v->u.u->meta != lib_meta(S)) vm_type_error(S, arg, "ffi.library");
    return v->u.u;
}

static const char *lib_name(const Userdata *u) { return u->uv.u.s->data; }

/* Library file names for the conveniences "c"/"libc" and "m"/"libm" (glibc's sonames); any
 * other name goes to dlopen as it is. */
static const char *lib_filename(const char *name) {
    if (strcmp(name, "c") == 0 || strcmp(name, "libc") == 0) return "libc.so.6";
    if (strcmp(name, "m") == 0 || strcmp(name, "libm") == 0) return "libm.so.6";
    return name;
}

/* ffi.load([name]): open a shared library (RTLD_NOW: a missing dependency fails here, not at
 * the first call); no name or nil opens the process itself. dlopen runs outside a blocking
 * region, so the thread stays RUNNING: a collection waits for dlopen to return rather than
 * run while this thread holds the dynamic loader's lock, which the collector needs to walk
 * the loaded libraries for roots. dlopen is short, so the wait is too. */
static int ffi_load(State *S) {
    const char *file = NULL;
    if (!vm_isnil(vm_at(S, 1))) {
        vm_check_type(S, 1, VT_STR);
        String *name = vm_at(S, 1)->u.s;
        if (strlen(name->data) != name->len) vm_arg_error(S, 1, "name contains a zero byte");
        file = lib_filename(name->data);
    }
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_FFI); /* a library's constructors may do anything */
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();
        vm_error(S, "ffi.load: cannot open '%s': %s", file ? file : "(process)",
                 why ? why : "unknown error");
    }
    Userdata *u = vm_newuserdata(S, sizeof(FfiLib), lib_meta(S), false);
    ((FfiLib *)u->data)->handle = h;
    u->uv = vm_str(vm_string_newc(S, file ? file : "(process)"));
    vm_push(S, vm_userdata(u));
    return 1;
}

static int lib_tostring(State *S) {
    Userdata *u = check_lib(S, 1);
    vm_pushfstring(S, "ffi.library: %s (%p)", lib_name(u), ((FfiLib *)u->data)->handle);
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * Calls
 * ===================================================================== */

/* Storage for one converted argument; ffi_call reads it through avalues[i]. */
typedef union FfiSlot {
    int i;
    int64_t l;
    double d;
    const void *p;
} FfiSlot;

/* What "bad argument" errors say a [k] argument expects (Lua type names: only numbers
 * convert to numeric kinds, numeric strings do not). */
static const char *expected_name(FfiKind k) {
    switch (k) {
    case FT_STRING: return "string";
    case FT_POINTER: return "light userdata";
    default: return "number";
    }
}

/* Convert argument [arg] (1-based) of kind [k] into [slot]. May raise, so it runs before
 * the blocking region. String and pointer arguments point into Lua strings: they stay alive
 * during the call because the argument slots on the stack reference them. */
static void to_c(State *S, int arg, FfiKind k, FfiSlot *slot) {
    const Value *v = vm_at(S, arg);
    switch (k) {
    case FT_INT:
    case FT_INT64: {
        vm_Integer i;
        if (v->tt == VT_INT) i = v->u.i;
        else if (v->tt != VT_FLOAT) vm_type_error(S, arg, expected_name(k));
        else if (!vm_flt2int(v->u.n, &i)) vm_arg_error(S, arg, "number has no integer representation");
        if (k == FT_INT64) {
            slot->l = i;
        } else {
            if (i < INT_MIN || i > INT_MAX) vm_arg_error(S, arg, "number out of range for C int");
            slot->i = (int)i;
        }
        break;
    }
    case FT_DOUBLE:
        if (!vm_isnumber(v)) vm_type_error(S, arg, expected_name(k));
        slot->d = vm_numval(v);
        break;
    case FT_STRING:
        if (v->tt == VT_STR) slot->p = v->u.s->data;
        else if (v->tt == VT_NIL) slot->p = NULL;
        else vm_type_error(S, arg, expected_name(k));
        break;
    case FT_POINTER:
        if (v->tt == VT_LIGHTUD) slot->p = v->u.p;
        else if (v->tt == VT_NIL) slot->p = NULL;
        else if (v->tt == VT_STR) slot->p = v->u.s->data;
        else vm_type_error(S, arg, expected_name(k));
        break;
    default:  /* FT_VOID is refused at bind time */
        vm_error(S, "ffi: bad argument kind %d", (int)k);
    }
}

/* The foreign call, run as a blocking region (vm_blocking_call). */
typedef struct FfiCall {
    const FfiSig *sig;
    void *rv;
    void **avalues;
} FfiCall;

static void *do_call(void *arg) {
    FfiCall *c = arg;
    ffi_call((ffi_cif *)&c->sig->cif, FFI_FN(c->sig->sym), c->rv, c->avalues);
    return NULL;
}

/* A bound function: check and convert the arguments, call, convert the result. */
static int ffi_trampoline(State *S) {
    FfiSig *sig = (FfiSig *)vm_upvalue(S, 1)->u.u->data;
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_FFI); /* C code's effects cannot be contained */
    int n = vm_gettop(S);
    if (n < sig->nargs) vm_type_error(S, n + 1, expected_name((FfiKind)sig->kinds[n]));
    if (n > sig->nargs) {
        char msg[80];
        snprintf(msg, sizeof msg, "%d argument%s expected, got %d", sig->nargs,
                 sig->nargs == 1 ? "" : "s", n);
        vm_arg_error(S, sig->nargs + 1, msg);
    }
    FfiSlot slots[FFI_MAXARGS];
    void *avalues[FFI_MAXARGS];
    for (int i = 0; i < sig->nargs; i++) {
        to_c(S, i + 1, (FfiKind)sig->kinds[i], &slots[i]);
        avalues[i] = &slots[i];
    }
    /* libffi widens integral results smaller than a word to a whole ffi_arg */
    union {
        ffi_arg a;
        ffi_sarg s;
        int64_t l;
        double d;
        void *p;
    } rv;
    memset(&rv, 0, sizeof rv);
    /* sig lives in the closure's upvalue, which the stack slot of the running function keeps
     * alive; reading it inside the region touches no Value */
    FfiCall call = {sig, &rv, avalues};
    vm_blocking_call(S, do_call, &call);
    switch ((FfiKind)sig->ret) {
    case FT_VOID:
        return 0;
    case FT_INT:
        vm_pushint(S, (int)rv.s);
        break;
    case FT_INT64:
        vm_pushint(S, rv.l);
        break;
    case FT_DOUBLE:
        vm_pushfloat(S, rv.d);
        break;
    case FT_STRING:
        if (rv.p == NULL) vm_pushnil(S);
        else vm_pushcstr(S, (const char *)rv.p);
        break;
    case FT_POINTER:
        if (rv.p == NULL) vm_pushnil(S);
        else vm_push(S, vm_lightud(rv.p));
        break;
    default:
        vm_error(S, "ffi: bad result kind %d", (int)sig->ret);
    }
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * Binding
 * ===================================================================== */

/* FfiKind named by [v]; raises naming [what] (the result or argument i of [fname]). */
static FfiKind parse_type(State *S, const Value *v, const char *fname, int argno) {
    char what[48];
    if (argno == 0) snprintf(what, sizeof what, "result");
    else snprintf(what, sizeof what, "argument %d", argno);
    if (v->tt != VT_STR)
        vm_error(S, "ffi: type of %s of '%s' must be a type name (a string), got %s", what, fname,
                 vm_typename(v));
    const char *t = v->u.s->data;
    for (int k = 0; k < FT_NTYPES; k++) {
        if (strcmp(t, ffi_types[k].name) != 0 || strlen(t) != v->u.s->len) continue;
        if (k == FT_VOID && argno != 0)
            vm_error(S, "ffi: 'void' is not a valid type for %s of '%s' (valid types: %s)", what,
                     fname, FFI_ARG_TYPES);
        return (FfiKind)k;
    }
    vm_error(S, "ffi: unknown type '%s' for %s of '%s' (valid types: %s)", t, what, fname,
             argno == 0 ? FFI_RET_TYPES : FFI_ARG_TYPES);
}

/* lib:func(name, ret [, {args...}]): bind the C function [name] of lib with that signature
 * and return it as a Lua function. Everything that can fail (types, arity, symbol, cif) is
 * checked here, once, so that a call only converts values. */
static int lib_func(State *S) {
    Userdata *lu = check_lib(S, 1);
    vm_check_type(S, 2, VT_STR);
    String *name = vm_at(S, 2)->u.s;
    const char *fname = name->data;
    if (strlen(fname) != name->len) vm_arg_error(S, 2, "name contains a zero byte");
    Table *args = NULL;
    if (!vm_isnil(vm_at(S, 4))) args = vm_check_table(S, 4);

    FfiKind ret = parse_type(S, vm_at(S, 3), fname, 0);
    vm_Unsigned nargs = args ? vm_table_len(args) : 0;
    if (nargs > FFI_MAXARGS)
        vm_error(S, "ffi: '%s' has %llu arguments; at most %d are supported", fname,
                 (unsigned long long)nargs, FFI_MAXARGS);
    uint8_t kinds[FFI_MAXARGS];
    for (vm_Unsigned i = 0; i < nargs; i++)
        kinds[i] = (uint8_t)parse_type(S, vm_table_getint(args, (vm_Integer)i + 1), fname, (int)i + 1);

    /* dlerror() is per thread: clear it, then a NULL address with an error is "missing"
     * (a symbol whose address really is NULL is refused too: it cannot be called) */
    FfiLib *lib = (FfiLib *)lu->data;
    dlerror();
    void *sym = dlsym(lib->handle, fname);
    if (sym == NULL) {
        const char *why = dlerror();
        vm_error(S, "ffi: symbol '%s' not found in '%s': %s", fname, lib_name(lu),
                 why ? why : "address is NULL");
    }

    Userdata *su = vm_newuserdata(S, sizeof(FfiSig) + name->len + 1, NULL, false);
    FfiSig *sig = (FfiSig *)su->data;
    memset(sig, 0, sizeof *sig);
    sig->sym = sym;
    sig->ret = (uint8_t)ret;
    sig->nargs = (uint8_t)nargs;
    for (vm_Unsigned i = 0; i < nargs; i++) {
        sig->kinds[i] = kinds[i];
        sig->atypes[i] = ffi_types[kinds[i]].type;
    }
    memcpy(sig->name, fname, name->len + 1);
    ffi_status st = ffi_prep_cif(&sig->cif, FFI_DEFAULT_ABI, (unsigned)nargs, ffi_types[ret].type,
                                 sig->atypes);
    if (st != FFI_OK) vm_error(S, "ffi: cannot prepare the call of '%s' (libffi status %d)", fname, (int)st);

    CClosure *cl = vm_newcfunction(S, ffi_trampoline, sig->name, 2);
    cl->upvals[0] = vm_userdata(su);
    cl->upvals[1] = vm_userdata(lu);
    vm_push(S, vm_cfunc(cl));
    return 1;
}

/* }==================================================================== */

static const LibReg ffi_funcs[] = {
    {"load", ffi_load},
    {NULL, NULL},
};

static const LibReg lib_methods[] = {
    {"func", lib_func},
    {NULL, NULL},
};

/* Closure over [f] with the library metatable as upvalue 1. */
static Value lib_closure(State *S, CFunction f, const char *name, Table *meta) {
    CClosure *cl = vm_newcfunction(S, f, name, 1);
    cl->upvals[0] = vm_table(meta);
    return vm_cfunc(cl);
}

void vm_open_ffi(State *S) {
    Table *meta = vm_table_new(S, 0, 4);
    Table *methods = vm_table_new(S, 0, 2);
    vm_setfield(S, meta, "__index", vm_table(methods));
    for (const LibReg *r = lib_methods; r->name != NULL; r++)
        vm_setfield(S, methods, r->name, lib_closure(S, r->f, r->name, meta));
    vm_setfield(S, meta, "__name", vm_str(vm_string_newc(S, "ffi.library")));
    vm_setfield(S, meta, "__tostring", lib_closure(S, lib_tostring, "tostring", meta));

    Table *ffi = vm_table_new(S, 0, 2);
    for (const LibReg *r = ffi_funcs; r->name != NULL; r++)
        vm_setfield(S, ffi, r->name, lib_closure(S, r->f, r->name, meta));
    vm_setglobal(S, "ffi", vm_table(ffi));
    if (S->g->loaded) vm_setfield(S, S->g->loaded, "ffi", vm_table(ffi));
}
