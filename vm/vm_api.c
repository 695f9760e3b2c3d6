/* vm_api.c: the stack API for C functions (vm_lib.h), argument checks, library
 * registration, loading chunks, and the embedding API (vm_api.h). */
#include <stdio.h>
#include <stdlib.h>

#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"
#include "vm_shadow.h"
#include "vm_thread.h"

static const Value nilvalue = {{0}, VT_NIL};

/* ======================================================================
 * Stack
 * ====================================================================== */

int vm_gettop(State *S) { return (int)(S->top - (S->ci->func + 1)); }

Value *vm_at(State *S, int idx) {
    Value *p = S->ci->func + idx;
    if (idx <= 0 || p >= S->top) return (Value *)&nilvalue;
    return p;
}

void vm_checkstack(State *S, int n) {
    vm_checkstack_fast(S, n);
    if (S->ci->top < S->top + n) S->ci->top = S->top + n;
}

void vm_settop(State *S, int idx) {
    Value *nt = S->ci->func + 1 + idx;
    if (nt > S->top) {
        vm_checkstack(S, (int)(nt - S->top));
        nt = S->ci->func + 1 + idx;
        while (S->top < nt) (S->top++)->tt = VT_NIL;
    } else {
        S->top = nt;
    }
}

void vm_push(State *S, Value v) {
    if (S->top >= S->ci->top) vm_checkstack(S, VM_MINSTACK);
    *S->top++ = v;
}

void vm_pushnil(State *S) { vm_push(S, vm_nil()); }
void vm_pushbool(State *S, bool b) { vm_push(S, vm_bool(b)); }
void vm_pushint(State *S, vm_Integer i) { vm_push(S, vm_int(i)); }
void vm_pushfloat(State *S, vm_Number n) { vm_push(S, vm_float(n)); }

String *vm_pushstr(State *S, const char *s, size_t len) {
    String *str = vm_string_reuse(S, s, len);
    vm_push(S, vm_str(str));
    return str;
}

String *vm_pushcstr(State *S, const char *s) { return vm_pushstr(S, s, strlen(s)); }

String *vm_pushfstring(State *S, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    String *s = vm_vformat(S, fmt, ap);
    va_end(ap);
    vm_push(S, vm_str(s));
    return s;
}

void vm_pop(State *S, int n) { S->top -= n; }

void vm_insert(State *S, int idx) {
    Value *p = S->ci->func + idx;
    Value v = S->top[-1];
    for (Value *q = S->top - 1; q > p; q--) *q = q[-1];
    *p = v;
}

void vm_remove(State *S, int idx) {
    Value *p = S->ci->func + idx;
    for (; p + 1 < S->top; p++) *p = p[1];
    S->top--;
}

/* ======================================================================
 * Argument errors and checks
 * ====================================================================== */

/* As luaL_argerror: the function is named as the calling code named it; a method call
 * does not count self; called from C, it is named by its place in a loaded library. */
_Noreturn void vm_arg_error(State *S, int arg, const char *extramsg) {
    const char *name = NULL;
    const char *kind = vm_callname(S, S->ci, &name);
    char buf[160];
    if (kind != NULL && strcmp(kind, "method") == 0) {
        arg--;
        if (arg == 0) vm_error(S, "calling '%s' on bad self (%s)", name, extramsg);
    }
    if (kind == NULL || name == NULL) {
        if (vm_globalfuncname(S, S->ci->func, buf, sizeof buf))
            name = buf;
        else if (S->ci->func->tt == VT_CFUNC && S->ci->func->u.cf->name)
            name = S->ci->func->u.cf->name;
        else
            name = "?";
    }
    vm_error(S, "bad argument #%d to '%s' (%s)", arg, name, extramsg);
}

_Noreturn void vm_type_error(State *S, int arg, const char *expected) {
    const char *got;
    if (arg > vm_gettop(S))
        got = "no value";
    else if (vm_at(S, arg)->tt == VT_LIGHTUD)
        got = "light userdata";
    else
        got = vm_objtypename(S, vm_at(S, arg));
    char msg[200];
    snprintf(msg, sizeof msg, "%.60s expected, got %.60s", expected, got);
    vm_arg_error(S, arg, msg);
}

void vm_check_any(State *S, int arg) {
    if (arg > vm_gettop(S)) vm_arg_error(S, arg, "value expected");
}

vm_Integer vm_check_integer(State *S, int arg) {
    const Value *v = vm_at(S, arg);
    if (v->tt == VT_INT) return v->u.i;
    vm_Integer i;
    if (vm_tointeger(v, &i)) return i;
    Value n;
    if (vm_tonumber(v, &n)) vm_arg_error(S, arg, "number has no integer representation");
    vm_type_error(S, arg, "number");
}

vm_Number vm_check_number(State *S, int arg) {
    const Value *v = vm_at(S, arg);
    if (v->tt == VT_FLOAT) return v->u.n;
    if (v->tt == VT_INT) return (vm_Number)v->u.i;
    Value n;
    if (vm_tonumber(v, &n)) return vm_numval(&n);
    vm_type_error(S, arg, "number");
}

String *vm_check_string(State *S, int arg) {
    Value *v = vm_at(S, arg);
    if (v->tt == VT_STR) return v->u.s;
    if (vm_isnumber(v)) {
        String *s = vm_number_tostring(S, v);
        v = vm_at(S, arg);
        *v = vm_str(s);
        return s;
    }
    vm_type_error(S, arg, "string");
}

Table *vm_check_table(State *S, int arg) {
    const Value *v = vm_at(S, arg);
    if (v->tt != VT_TABLE) vm_type_error(S, arg, "table");
    return v->u.t;
}

void vm_check_type(State *S, int arg, ValueTag t) {
    const Value *v = vm_at(S, arg);
    bool ok = v->tt == (uint32_t)t || ((t == VT_LFUNC || t == VT_CFUNC) && vm_isfunction(v)) ||
              ((t == VT_TRUE || t == VT_FALSE) && vm_isbool(v));
    if (!ok) {
        Value proto;
        proto.tt = t;
        proto.u.p = NULL;
        if (arg > vm_gettop(S) && t != VT_NIL) vm_type_error(S, arg, vm_typename(&proto));
        vm_type_error(S, arg, vm_typename(&proto));
    }
}

vm_Integer vm_opt_integer(State *S, int arg, vm_Integer def) {
    return vm_isnil(vm_at(S, arg)) ? def : vm_check_integer(S, arg);
}

vm_Number vm_opt_number(State *S, int arg, vm_Number def) {
    return vm_isnil(vm_at(S, arg)) ? def : vm_check_number(S, arg);
}

String *vm_opt_string(State *S, int arg, String *def) {
    return vm_isnil(vm_at(S, arg)) ? def : vm_check_string(S, arg);
}

/* ======================================================================
 * Functions, libraries, globals
 * ====================================================================== */

CClosure *vm_newcfunction(State *S, CFunction f, const char *name, int nupvals) {
    CClosure *c = vm_alloc(S, sizeof(CClosure) + (size_t)nupvals * sizeof(Value));
    c->h.type = VT_CFUNC;
    c->h.extra = (uint16_t)nupvals;
    c->f = f;
    c->name = name;
    return c;
}

Table *vm_newlib(State *S, const LibReg *funcs) {
    int n = 0;
    while (funcs[n].name) n++;
    Table *t = vm_table_new(S, 0, (uint32_t)n);
    for (const LibReg *r = funcs; r->name; r++) vm_setfield(S, t, r->name, vm_cfunc(vm_newcfunction(S, r->f, r->name, 0)));
    return t;
}

void vm_setfield(State *S, Table *t, const char *k, Value v) {
    vm_table_setstr(S, t, vm_string_intern(S, k, strlen(k)), &v);
}

void vm_setglobal(State *S, const char *name, Value v) { vm_setfield(S, S->g->globals, name, v); }

Value vm_getglobal(State *S, const char *name) {
    return vm_loadv(vm_table_getstr(S->g->globals, vm_string_newc(S, name)));
}

Value *vm_upvalue(State *S, int i) { return &S->ci->func->u.cf->upvals[i - 1]; }

Userdata *vm_newuserdata(State *S, size_t size, Table *meta, bool scanned) {
    Userdata *u = vm_alloc(S, sizeof(Userdata) + (scanned ? size : 0));
    u->h.type = VT_USERDATA;
    u->meta = meta;
    u->size = size;
    u->uv = vm_nil();
    if (scanned)
        u->data = u->payload;
    else
        u->data = vm_alloc_leaf(S, size ? size : 1);
    if (meta != NULL) {
        Value v = vm_userdata(u);
        vm_gc_setmetatable(S, &v, meta); /* a __gc there marks it for finalization */
    }
    return u;
}

/* ======================================================================
 * Loading
 * ====================================================================== */

/* Last syntax error of vm_load on this thread, for the command line's file:line:col. */
static _Thread_local CompileError last_compile_error;
static _Thread_local bool have_compile_error;

bool vm_last_compile_error(int *line, int *col, const char **msg) {
    if (!have_compile_error) return false;
    *line = last_compile_error.line;
    *col = last_compile_error.col;
    *msg = last_compile_error.msg;
    return true;
}

/* Closure for a main-chunk prototype with _ENV set. */
static void push_main_closure(State *S, Proto *p, const Value *env) {
    /* Shadow profiling: the program names every function it loads, before a shadow meets it
     * (vm/prof/vm_shadow.c, "Function ids"). */
    if (vm_shadow_on && !vm_shadow_child) vm_shadow_name_protos(p);
    LClosure *cl = vm_newlclosure(S, p);
    for (int i = 0; i < p->nupvals; i++) {
        UpVal *uv = vm_alloc(S, sizeof(UpVal));
        uv->v = &uv->closed;
        uv->closed = (i == 0) ? (env ? *env : vm_table(S->g->globals)) : vm_nil();
        cl->upvals[i] = uv;
    }
    vm_push(S, vm_lfunc(cl));
}

int vm_load(State *S, const char *buf, size_t len, const char *chunkname, const Value *env,
            bool allow_binary) {
    have_compile_error = false;
    Value envv = env ? *env : vm_table(S->g->globals);
    /* Binary or text is decided by the first byte (ESC), as lua5.4 decides it: a chunk that
     * starts like bytecode but is not a whole signature is a bad binary chunk, not source. */
    if (len > 0 && buf[0] == VM_BC_SIGNATURE[0]) {
        if (!allow_binary) {
            vm_pushfstring(S, "attempt to load a binary chunk (mode is 't')");
            return VM_ERRSYNTAX;
        }
        /* lua5.4's words (lundump.c's error) and its name for the chunk */
        const char *name = chunkname[0] == '@' || chunkname[0] == '=' ? chunkname + 1
                           : chunkname[0] == VM_BC_SIGNATURE[0]       ? "binary string"
                                                                      : chunkname;
        if (len < VM_BC_SIGLEN || memcmp(buf, VM_BC_SIGNATURE, VM_BC_SIGLEN) != 0) {
            bool prefix = memcmp(buf, VM_BC_SIGNATURE, len < VM_BC_SIGLEN ? len : VM_BC_SIGLEN) == 0;
            vm_pushfstring(S, "%s: bad binary format (%s)", name, prefix ? "truncated chunk" : "not a binary chunk");
            return VM_ERRSYNTAX;
        }
        char why[256];
        Proto *p = vm_bytecode_load(S, (const unsigned char *)buf, len, why, sizeof why);
        if (p == NULL) {
            /* a chunk cut short says so in lua5.4's words; other reasons are Tandem's own
             * (its bytecode is not lua5.4's: version, sizes, which part is malformed) */
            vm_pushfstring(S, "%s: bad binary format (%s)", name,
                           strcmp(why, "truncated file") == 0 ? "truncated chunk" : why);
            return VM_ERRSYNTAX;
        }
        push_main_closure(S, p, &envv);
        return VM_OK;
    }
    CompileError err;
    Proto *p = vm_compile(S, buf, len, chunkname, &err);
    if (p == NULL) {
        char id[VM_IDSIZE];
        vm_chunkid(id, sizeof id, chunkname, strlen(chunkname));
        last_compile_error = err;
        have_compile_error = true;
        vm_pushfstring(S, "%s:%d: %s", id, err.line, err.msg);
        return VM_ERRSYNTAX;
    }
    push_main_closure(S, p, &envv);
    return VM_OK;
}

/* ======================================================================
 * Embedding API
 * ====================================================================== */

static char lasterror[4096];

const char *vm_last_error(State *S) {
    (void)S;
    return lasterror;
}

static void set_lasterror(State *S, const Value *v) {
    if (v->tt == VT_STR)
        snprintf(lasterror, sizeof lasterror, "%s", v->u.s->data);
    else if (vm_isnumber(v)) {
        char buf[VM_NUMBUF];
        vm_number2str(v, buf);
        snprintf(lasterror, sizeof lasterror, "%s", buf);
    } else if (v->tt == VT_NIL)
        snprintf(lasterror, sizeof lasterror, "nil");
    else
        snprintf(lasterror, sizeof lasterror, "(error object is a %s value)", vm_typename(v));
}

/* lua.c's message handler: a string (or number) error gets a traceback; another value is
 * replaced by what its __tostring makes of it when that is a string (then without a
 * traceback), else by "(error object is a T value)" with a traceback. */
static int msghandler(State *S) {
    Value *e = vm_at(S, 1);
    const char *msg;
    if (e->tt == VT_STR) {
        msg = e->u.s->data;
    } else if (vm_isnumber(e)) {
        msg = vm_number_tostring(S, e)->data;
    } else {
        Value tm = vm_getmetafield(S, e, "__tostring");
        if (!vm_isnil(&tm)) {
            vm_push(S, tm);
            vm_push(S, *vm_at(S, 1));
            vm_call(S, 1, 1);
            if (vm_isstr(vm_at(S, vm_gettop(S)))) return 1;
        }
        msg = vm_pushfstring(S, "(error object is a %s value)", vm_typename(vm_at(S, 1)))->data;
    }
    vm_push(S, vm_str(vm_traceback(S, msg, 1)));
    return 1;
}

int vm_docall(State *S, int nargs, int nresults) {
    int base = vm_gettop(S) - nargs; /* the function's index */
    vm_push(S, vm_cfunc(vm_newcfunction(S, msghandler, "msghandler", 0)));
    vm_insert(S, base);
    int st = vm_pcall_msgh(S, nargs, nresults, vm_savestack(S, S->ci->func + base));
    vm_remove(S, base);
    return st;
}

typedef struct RunArgs {
    const char *buf;
    size_t len;
    const char *chunkname;
    int nargs;
    char **args;
    int status;
} RunArgs;

static void f_run(State *S, void *ud) {
    RunArgs *r = ud;
    int st = vm_load(S, r->buf, r->len, r->chunkname, NULL, true);
    if (st != VM_OK) {
        r->status = st;
        S->errval = S->top[-1];
        vm_throw(S, st);
    }
    for (int i = 0; i < r->nargs; i++) vm_pushcstr(S, r->args[i]);
    r->status = vm_docall(S, r->nargs, 0);
    if (r->status != VM_OK) {
        S->errval = S->top[-1];
        vm_throw(S, r->status);
    }
}

typedef struct MainRun {
    RunArgs *r;
    int status;
} MainRun;

static void main_body(State *S, void *ud) {
    MainRun *m = ud;
    m->status = vm_protect(S, f_run, m->r);
}

static void close_body(State *S, void *ud) {
    (void)ud;
    vm_gc_close(S);
}

/* As the main program runs: language thread 1 (a green thread under -Xthreads=green). */
void vm_state_close(State *S) { vm_threads_run(S, close_body, NULL); }

int vm_run_buffer(State *S, const char *buf, size_t len, const char *chunkname, int nargs,
                  char **args, char **traceback) {
    RunArgs r = {buf, len, chunkname, nargs, args, VM_OK};
    MainRun m = {&r, VM_OK};
    /* The program runs as language thread 1 (on a green stack under -Xthreads=green). */
    vm_threads_run(S, main_body, &m);
    int status = m.status;
    if (traceback) *traceback = NULL;
    if (status != VM_OK) {
        Value e = S->top[-1];
        if (status == VM_ERRRUN && e.tt == VT_STR) {
            /* The handler appended the traceback: split message and traceback. */
            const char *s = e.u.s->data;
            const char *tb = strstr(s, "\nstack traceback:\n");
            if (tb != NULL) {
                snprintf(lasterror, sizeof lasterror, "%.*s", (int)(tb - s), s);
                if (traceback) *traceback = strdup(tb + 1);
            } else {
                set_lasterror(S, &e);
            }
        } else {
            set_lasterror(S, &e);
        }
        S->top--;
    }
    return status;
}
