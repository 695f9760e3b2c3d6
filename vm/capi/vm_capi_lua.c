/* vm_capi_lua.c: the functions of Lua 5.4's lua.h over Tandem's State and Values, exported
 * from the tandem executable under Lua's names (vm/capi/README.md).
 *
 * Invariants every function here keeps:
 *  - every value a C function can reach is on its Lua stack or in the registry (or in an
 *    upvalue of its closure): those are scanned, so a collection may happen inside any call
 *    that allocates, and a String's bytes returned by lua_tolstring stay put while the
 *    string is on the stack (Boehm never moves objects);
 *  - a pointer into the stack is used only until the next call that may grow it;
 *  - errors unwind with vm_throw to the innermost protected call, skipping the C frames of
 *    modules as lua5.4's longjmp does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_bytecode.h"
#include "vm_capi_int.h"
#include "vm_debug.h"
#include "vm_meta.h"
#include "vm_warn.h"

const Value capi_none = {{0}, VT_NIL};

/* The registry as a stack value: a slot per native thread, rewritten at every use (the
 * registry itself is held by Global, so this copy need not be scanned). */
static _Thread_local Value registry_slot;

/* {====================================================================
 * Index translation, registry
 * ===================================================================== */

Table *capi_registry(State *S) {
    Global *g = S->g;
    Table *r = __atomic_load_n(&g->registry, __ATOMIC_ACQUIRE);
    if (r == NULL) {
        Table *fresh = vm_table_new(S, 4, 4);
        Table *expected = NULL;
        if (!__atomic_compare_exchange_n(&g->registry, &expected, fresh, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            fresh = expected;
        r = fresh;
    }
    /* lua5.4's predefined entries; set again (with the same values) until they are there,
     * so a registry made earlier by debug.getregistry gets them too */
    if (vm_table_getint(r, LUA_RIDX_GLOBALS)->tt == VT_NIL) {
        Value v = vm_thread(g->mainthread);
        vm_table_setint(S, r, LUA_RIDX_MAINTHREAD, &v);
        v = vm_table(g->loaded);
        vm_setfield(S, r, LUA_LOADED_TABLE, v);
        Value pkg = vm_loadv(vm_table_getstr(g->loaded, vm_string_newc(S, "package")));
        if (vm_istable(&pkg)) {
            Value pre = vm_loadv(vm_table_getstr(pkg.u.t, vm_string_newc(S, "preload")));
            if (vm_istable(&pre)) vm_setfield(S, r, LUA_PRELOAD_TABLE, pre);
        }
        /* registry["FILE*"]: the io library's file metatable, so luaL_checkudata(L, i,
         * LUA_FILEHANDLE) accepts io's files (lfs.lock). Their payload starts with the
         * FILE * as luaL_Stream does (vm_lib_io.c, LFile); its second word is not a
         * closef function (README.md, "Limits"). */
        Value io = vm_loadv(vm_table_getstr(g->loaded, vm_string_newc(S, "io")));
        if (vm_istable(&io)) {
            Value out = vm_loadv(vm_table_getstr(io.u.t, vm_string_newc(S, "stdout")));
            if (out.tt == VT_USERDATA && out.u.u->meta != NULL) vm_setfield(S, r, LUA_FILEHANDLE, vm_table(out.u.u->meta));
        }
        v = vm_table(g->globals);
        vm_table_setint(S, r, LUA_RIDX_GLOBALS, &v);
    }
    return r;
}

Value *capi_index(State *S, int idx) {
    CallInfo *ci = S->ci;
    if (idx > 0) {
        Value *o = ci->func + idx;
        return o < S->top ? o : (Value *)&capi_none;
    }
    if (idx > LUA_REGISTRYINDEX) return S->top + idx; /* negative: relative to the top */
    if (idx == LUA_REGISTRYINDEX) {
        registry_slot = vm_table(capi_registry(S));
        return &registry_slot;
    }
    /* upvalues of the running C closure */
    int n = LUA_REGISTRYINDEX - idx;
    if (ci->func->tt != VT_CFUNC) return (Value *)&capi_none;
    CClosure *cl = ci->func->u.cf;
    return n <= cl->h.extra ? &cl->upvals[n - 1] : (Value *)&capi_none;
}

static inline Value *idx2v(lua_State *L, int idx) { return capi_index(capi_S(L), idx); }

/* The table at [idx], or a Lua error naming what it is (lua5.4 asserts instead). */
static Table *table_at(State *S, int idx) {
    Value *t = capi_index(S, idx);
    if (t->tt != VT_TABLE) vm_error(S, "table expected, got %s", vm_typename(t));
    return t->u.t;
}

/* }==================================================================== */

/* {====================================================================
 * State, stack manipulation
 * ===================================================================== */

lua_State *lua_newstate(lua_Alloc f, void *ud) {
    (void)f;
    (void)ud;
    return NULL; /* embedding is not offered: see vm/capi/README.md */
}

void lua_close(lua_State *L) { (void)L; }

lua_State *lua_newthread(lua_State *L) {
    State *S = capi_S(L);
    State *co = vm_newstate_thread(S);
    capi_push(S, vm_thread(co));
    return capi_L(co);
}

lua_CFunction lua_atpanic(lua_State *L, lua_CFunction panicf) {
    /* Tandem always runs C code under a protected call (the command line's), so the panic
     * function is never called; it is kept so lua_atpanic returns the previous one. */
    static lua_CFunction current;
    (void)L;
    return __atomic_exchange_n(&current, panicf, __ATOMIC_ACQ_REL);
}

lua_Number lua_version(lua_State *L) {
    (void)L;
    return LUA_VERSION_NUM;
}

int lua_absindex(lua_State *L, int idx) {
    State *S = capi_S(L);
    return (idx > 0 || idx <= LUA_REGISTRYINDEX) ? idx : (int)(S->top - S->ci->func) + idx;
}

int lua_gettop(lua_State *L) {
    State *S = capi_S(L);
    return (int)(S->top - (S->ci->func + 1));
}

void lua_settop(lua_State *L, int idx) {
    State *S = capi_S(L);
    Value *func = S->ci->func;
    Value *nt = idx >= 0 ? func + 1 + idx : S->top + idx + 1;
    if (nt > S->top) {
        ptrdiff_t off = vm_savestack(S, nt);
        vm_checkstack(S, (int)(nt - S->top));
        nt = vm_restorestack(S, off);
        while (S->top < nt) (S->top++)->tt = VT_NIL;
        return;
    }
    /* to-be-closed variables above the new top are closed, as lua5.4 does */
    if (S->ntbc > 0 && S->tbc[S->ntbc - 1] >= vm_savestack(S, nt)) {
        ptrdiff_t off = vm_savestack(S, nt);
        vm_close(S, nt, NULL);
        nt = vm_restorestack(S, off);
    }
    S->top = nt;
}

void lua_pushvalue(lua_State *L, int idx) {
    State *S = capi_S(L);
    capi_push(S, *capi_index(S, idx));
}

static void reverse(Value *from, Value *to) {
    for (; from < to; from++, to--) {
        Value t = *from;
        *from = *to;
        *to = t;
    }
}

void lua_rotate(lua_State *L, int idx, int n) {
    State *S = capi_S(L);
    Value *t = S->top - 1;
    Value *p = capi_index(S, idx);
    Value *m = n >= 0 ? t - n : p - n - 1;
    reverse(p, m);
    reverse(m + 1, t);
    reverse(p, t);
}

void lua_copy(lua_State *L, int fromidx, int toidx) {
    State *S = capi_S(L);
    *capi_index(S, toidx) = *capi_index(S, fromidx);
}

int lua_checkstack(lua_State *L, int n) {
    State *S = capi_S(L);
    if (n < 0 || (S->top - S->stack) + n > VM_MAXSTACK) return 0;
    vm_checkstack(S, n);
    return 1;
}

void lua_xmove(lua_State *from, lua_State *to, int n) {
    State *F = capi_S(from), *T = capi_S(to);
    if (F == T) return;
    vm_checkstack(T, n);
    F->top -= n;
    for (int i = 0; i < n; i++) *T->top++ = F->top[i];
}

/* }==================================================================== */

/* {====================================================================
 * Access functions (stack -> C)
 * ===================================================================== */

static int typeof_value(const Value *o) {
    switch (o->tt) {
    case VT_NIL: return o == &capi_none ? LUA_TNONE : LUA_TNIL;
    case VT_FALSE: case VT_TRUE: return LUA_TBOOLEAN;
    case VT_INT: case VT_FLOAT: return LUA_TNUMBER;
    case VT_LIGHTUD: return LUA_TLIGHTUSERDATA;
    case VT_STR: return LUA_TSTRING;
    case VT_TABLE: return LUA_TTABLE;
    case VT_LFUNC: case VT_CFUNC: return LUA_TFUNCTION;
    case VT_USERDATA: return LUA_TUSERDATA;
    case VT_THREAD: return LUA_TTHREAD;
    default: return LUA_TNONE;
    }
}

int lua_type(lua_State *L, int idx) { return typeof_value(idx2v(L, idx)); }

const char *lua_typename(lua_State *L, int t) {
    static const char *const names[] = {"no value", "nil",      "boolean", "userdata", "number",
                                        "string",   "table",    "function", "userdata", "thread"};
    (void)L;
    return (t >= LUA_TNONE && t <= LUA_TTHREAD) ? names[t + 1] : "?";
}

int lua_isnumber(lua_State *L, int idx) {
    Value out;
    return vm_tonumber(idx2v(L, idx), &out);
}

int lua_isstring(lua_State *L, int idx) {
    const Value *o = idx2v(L, idx);
    return o->tt == VT_STR || vm_isnumber(o);
}

int lua_iscfunction(lua_State *L, int idx) { return idx2v(L, idx)->tt == VT_CFUNC; }
int lua_isinteger(lua_State *L, int idx) { return idx2v(L, idx)->tt == VT_INT; }

int lua_isuserdata(lua_State *L, int idx) {
    uint32_t tt = idx2v(L, idx)->tt;
    return tt == VT_USERDATA || tt == VT_LIGHTUD;
}

int lua_rawequal(lua_State *L, int idx1, int idx2) {
    const Value *a = idx2v(L, idx1), *b = idx2v(L, idx2);
    return a != &capi_none && b != &capi_none && vm_rawequal(a, b);
}

lua_Number lua_tonumberx(lua_State *L, int idx, int *isnum) {
    Value out;
    bool ok = vm_tonumber(idx2v(L, idx), &out);
    if (isnum) *isnum = ok;
    return ok ? vm_numval(&out) : 0;
}

lua_Integer lua_tointegerx(lua_State *L, int idx, int *isnum) {
    vm_Integer i = 0;
    bool ok = vm_tointeger(idx2v(L, idx), &i);
    if (isnum) *isnum = ok;
    return ok ? i : 0;
}

int lua_toboolean(lua_State *L, int idx) { return !vm_isfalsy(idx2v(L, idx)); }

const char *lua_tolstring(lua_State *L, int idx, size_t *len) {
    State *S = capi_S(L);
    Value *o = capi_index(S, idx);
    if (o->tt != VT_STR) {
        if (!vm_isnumber(o)) {
            if (len) *len = 0;
            return NULL;
        }
        String *s = vm_number_tostring(S, o); /* may collect: o is on the stack */
        o = capi_index(S, idx);
        *o = vm_str(s); /* converted in place, as lua5.4 does */
    }
    if (len) *len = o->u.s->len;
    return o->u.s->data;
}

lua_Unsigned lua_rawlen(lua_State *L, int idx) {
    const Value *o = idx2v(L, idx);
    switch (o->tt) {
    case VT_STR: return o->u.s->len;
    case VT_USERDATA: return o->u.u->size;
    case VT_TABLE: return vm_table_len(o->u.t);
    default: return 0;
    }
}

lua_CFunction lua_tocfunction(lua_State *L, int idx) {
    const Value *o = idx2v(L, idx);
    return o->tt == VT_CFUNC ? capi_fn(o->u.cf) : NULL;
}

void *lua_touserdata(lua_State *L, int idx) {
    const Value *o = idx2v(L, idx);
    if (o->tt == VT_USERDATA) return o->u.u->data;
    if (o->tt == VT_LIGHTUD) return o->u.p;
    return NULL;
}

lua_State *lua_tothread(lua_State *L, int idx) {
    const Value *o = idx2v(L, idx);
    return o->tt == VT_THREAD ? capi_L(o->u.th) : NULL;
}

const void *lua_topointer(lua_State *L, int idx) {
    const Value *o = idx2v(L, idx);
    switch (o->tt) {
    case VT_USERDATA: return o->u.u->data;
    case VT_LIGHTUD: return o->u.p;
    case VT_CFUNC:
        /* lua5.4 gives a light C function's address; every C function is a closure here */
        return o->u.cf->h.extra == 0 ? (const void *)capi_fn(o->u.cf) : o->u.p;
    default: return vm_iscollectable(o) ? o->u.p : NULL;
    }
}

/* }==================================================================== */

/* {====================================================================
 * Comparison and arithmetic
 * ===================================================================== */

void lua_arith(lua_State *L, int op) {
    State *S = capi_S(L);
    if (op == LUA_OPUNM || op == LUA_OPBNOT) {
        capi_push(S, S->top[-1]); /* the second operand of a unary operation is a fake copy */
    }
    Value r = vm_arith(S, (TMS)(TM_ADD + op), &S->top[-2], &S->top[-1]);
    S->top[-2] = r;
    S->top--;
}

int lua_compare(lua_State *L, int idx1, int idx2, int op) {
    State *S = capi_S(L);
    const Value *a = capi_index(S, idx1), *b = capi_index(S, idx2);
    if (a == &capi_none || b == &capi_none) return 0;
    Value va = *a, vb = *b; /* copies: a metamethod may move the stack */
    switch (op) {
    case LUA_OPEQ: return vm_equal(S, &va, &vb);
    case LUA_OPLT: return vm_lessthan(S, &va, &vb);
    case LUA_OPLE: return vm_lessequal(S, &va, &vb);
    default: vm_error(S, "invalid option to lua_compare");
    }
}

size_t lua_stringtonumber(lua_State *L, const char *s) {
    Value out;
    size_t len = strlen(s);
    if (!vm_str2number(s, len, &out)) return 0;
    capi_push(capi_S(L), out);
    return len + 1;
}

/* }==================================================================== */

/* {====================================================================
 * Push functions (C -> stack)
 * ===================================================================== */

void lua_pushnil(lua_State *L) { capi_push(capi_S(L), vm_nil()); }
void lua_pushnumber(lua_State *L, lua_Number n) { capi_push(capi_S(L), vm_float(n)); }
void lua_pushinteger(lua_State *L, lua_Integer n) { capi_push(capi_S(L), vm_int(n)); }
void lua_pushboolean(lua_State *L, int b) { capi_push(capi_S(L), vm_bool(b != 0)); }
void lua_pushlightuserdata(lua_State *L, void *p) { capi_push(capi_S(L), vm_lightud(p)); }

const char *lua_pushlstring(lua_State *L, const char *s, size_t len) {
    State *S = capi_S(L);
    String *str = vm_string_new(S, len ? s : "", len);
    capi_push(S, vm_str(str));
    return str->data;
}

const char *lua_pushstring(lua_State *L, const char *s) {
    if (s == NULL) {
        lua_pushnil(L);
        return NULL;
    }
    return lua_pushlstring(L, s, strlen(s));
}

/* lua_pushfstring's formats are Lua's, not printf's: %% %s %f %I %p %d %c %U; anything
 * else is an error, as in lua5.4. The pieces are built in a C buffer (no allocation until
 * the final string). */
typedef struct FBuf {
    State *S;
    char *p;
    size_t n, cap;
    char init[256];
} FBuf;

static void fb_add(FBuf *b, const char *s, size_t len) {
    if (b->n + len > b->cap) {
        size_t ncap = (b->n + len) * 2;
        char *np = vm_alloc_leaf(b->S, ncap); /* held by this C frame: Boehm sees it */
        memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
}

const char *lua_pushvfstring(lua_State *L, const char *fmt, va_list argp) {
    State *S = capi_S(L);
    FBuf b = {S, NULL, 0, sizeof b.init, {0}};
    b.p = b.init;
    const char *e;
    char num[64];
    while ((e = strchr(fmt, '%')) != NULL) {
        fb_add(&b, fmt, (size_t)(e - fmt));
        switch (e[1]) {
        case 's': {
            const char *s = va_arg(argp, char *);
            if (s == NULL) s = "(null)";
            fb_add(&b, s, strlen(s));
            break;
        }
        case 'c': {
            char c = (char)(unsigned char)va_arg(argp, int);
            fb_add(&b, &c, 1);
            break;
        }
        case 'd': {
            Value v = vm_int(va_arg(argp, int));
            fb_add(&b, num, (size_t)vm_number2str(&v, num));
            break;
        }
        case 'I': {
            Value v = vm_int((vm_Integer)va_arg(argp, LUAI_UACINT));
            fb_add(&b, num, (size_t)vm_number2str(&v, num));
            break;
        }
        case 'f': {
            Value v = vm_float((vm_Number)va_arg(argp, LUAI_UACNUMBER));
            fb_add(&b, num, (size_t)vm_number2str(&v, num));
            break;
        }
        case 'p': {
            int n = snprintf(num, sizeof num, "%p", va_arg(argp, void *));
            fb_add(&b, num, (size_t)n);
            break;
        }
        case 'U': {
            int n = vm_utf8_encode(num, (uint32_t)va_arg(argp, long));
            fb_add(&b, num, (size_t)n);
            break;
        }
        case '%': fb_add(&b, "%", 1); break;
        default: vm_error(S, "invalid option '%%%c' to 'lua_pushfstring'", e[1]);
        }
        fmt = e + 2;
    }
    fb_add(&b, fmt, strlen(fmt));
    return lua_pushlstring(L, b.p, b.n);
}

const char *lua_pushfstring(lua_State *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const char *r = lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    return r;
}

void lua_pushcclosure(lua_State *L, lua_CFunction fn, int n) {
    State *S = capi_S(L);
    if (n < 0 || n > VM_MAXUPVALS) vm_error(S, "upvalue index too large");
    /* one hidden slot after the upvalues holds the module's function (vm_capi_lock.c) */
    CClosure *cl = vm_newcfunction(S, capi_trampoline, NULL, n + 1);
    cl->h.extra = (uint16_t)n;
    cl->upvals[n] = vm_lightud((void *)fn);
    S->top -= n;
    for (int i = 0; i < n; i++) cl->upvals[i] = S->top[i];
    capi_push(S, vm_cfunc(cl));
}

int lua_pushthread(lua_State *L) {
    State *S = capi_S(L);
    capi_push(S, vm_thread(S));
    return S == S->g->mainthread;
}

/* }==================================================================== */

/* {====================================================================
 * Get functions (Lua -> stack)
 * ===================================================================== */

static int push_type(State *S, Value v) {
    capi_push(S, v);
    return typeof_value(&S->top[-1]);
}

int lua_getglobal(lua_State *L, const char *name) {
    State *S = capi_S(L);
    Value g = vm_table(S->g->globals);
    Value k = vm_str(vm_string_newc(S, name));
    capi_push(S, k); /* keep the key reachable across __index */
    Value v = vm_gettable(S, &g, &S->top[-1]);
    S->top--;
    return push_type(S, v);
}

int lua_gettable(lua_State *L, int idx) {
    State *S = capi_S(L);
    Value t = *capi_index(S, idx);
    S->top[-1] = vm_gettable(S, &t, &S->top[-1]);
    return typeof_value(&S->top[-1]);
}

int lua_getfield(lua_State *L, int idx, const char *k) {
    State *S = capi_S(L);
    Value t = *capi_index(S, idx);
    capi_push(S, vm_str(vm_string_newc(S, k)));
    S->top[-1] = vm_gettable(S, &t, &S->top[-1]);
    return typeof_value(&S->top[-1]);
}

int lua_geti(lua_State *L, int idx, lua_Integer n) {
    State *S = capi_S(L);
    Value t = *capi_index(S, idx);
    capi_push(S, vm_int(n));
    S->top[-1] = vm_gettable(S, &t, &S->top[-1]);
    return typeof_value(&S->top[-1]);
}

int lua_rawget(lua_State *L, int idx) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    S->top[-1] = vm_loadv(vm_table_get(t, &S->top[-1]));
    return typeof_value(&S->top[-1]);
}

int lua_rawgeti(lua_State *L, int idx, lua_Integer n) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    return push_type(S, vm_loadv(vm_table_getint(t, n)));
}

int lua_rawgetp(lua_State *L, int idx, const void *p) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    Value k = vm_lightud((void *)(uintptr_t)p);
    return push_type(S, vm_loadv(vm_table_get(t, &k)));
}

void lua_createtable(lua_State *L, int narr, int nrec) {
    State *S = capi_S(L);
    Table *t = vm_table_new(S, narr > 0 ? (uint32_t)narr : 0, nrec > 0 ? (uint32_t)nrec : 0);
    capi_push(S, vm_table(t));
}

/* User values: a userdata made here records how many it has in h.flags (at most 255); the
 * one user value of Userdata.uv holds the only one, or a table of them when there are more.
 * Userdata the runtime makes (files, thread handles) have none, as lua5.4's files. */
#define CAPI_MAXUV 255

void *lua_newuserdatauv(lua_State *L, size_t size, int nuvalue) {
    State *S = capi_S(L);
    if (nuvalue < 0 || nuvalue > CAPI_MAXUV) vm_error(S, "invalid value count for a userdata");
    /* scanned payload: a module may keep in it pointers it got from the API (against the
     * rules, but cheap to tolerate), and Boehm then sees them */
    Userdata *u = vm_newuserdata(S, size, NULL, true);
    u->h.flags = (uint8_t)nuvalue;
    if (nuvalue > 1) u->uv = vm_table(vm_table_new(S, (uint32_t)nuvalue, 0));
    capi_push(S, vm_userdata(u));
    return u->data;
}

int lua_getmetatable(lua_State *L, int idx) {
    State *S = capi_S(L);
    Table *mt = vm_getmetatable(S, capi_index(S, idx));
    if (mt == NULL) return 0;
    capi_push(S, vm_table(mt));
    return 1;
}

static Userdata *udata_at(State *S, int idx) {
    Value *o = capi_index(S, idx);
    if (o->tt != VT_USERDATA) vm_error(S, "full userdata expected");
    return o->u.u;
}

int lua_getiuservalue(lua_State *L, int idx, int n) {
    State *S = capi_S(L);
    Userdata *u = udata_at(S, idx);
    if (n <= 0 || n > u->h.flags) {
        capi_push(S, vm_nil());
        return LUA_TNONE;
    }
    if (u->h.flags == 1) return push_type(S, vm_loadv(&u->uv));
    return push_type(S, vm_loadv(vm_table_getint(u->uv.u.t, n)));
}

/* }==================================================================== */

/* {====================================================================
 * Set functions (stack -> Lua)
 * ===================================================================== */

void lua_setglobal(lua_State *L, const char *name) {
    State *S = capi_S(L);
    Value g = vm_table(S->g->globals);
    capi_push(S, vm_str(vm_string_newc(S, name)));
    vm_settable(S, &g, &S->top[-1], &S->top[-2]);
    S->top -= 2;
}

void lua_settable(lua_State *L, int idx) {
    State *S = capi_S(L);
    Value t = *capi_index(S, idx);
    vm_settable(S, &t, &S->top[-2], &S->top[-1]);
    S->top -= 2;
}

void lua_setfield(lua_State *L, int idx, const char *k) {
    State *S = capi_S(L);
    Value t = *capi_index(S, idx);
    capi_push(S, vm_str(vm_string_newc(S, k)));
    vm_settable(S, &t, &S->top[-1], &S->top[-2]);
    S->top -= 2;
}

void lua_seti(lua_State *L, int idx, lua_Integer n) {
    State *S = capi_S(L);
    Value t = *capi_index(S, idx);
    capi_push(S, vm_int(n));
    vm_settable(S, &t, &S->top[-1], &S->top[-2]);
    S->top -= 2;
}

/* A raw store with lua5.4's key checks (the interpreter makes them before vm_table_set). */
static void rawset_checked(State *S, Table *t, const Value *k, const Value *v) {
    if (k->tt == VT_NIL) vm_error(S, "index is nil");
    if (k->tt == VT_FLOAT && k->u.n != k->u.n) vm_error(S, "index is NaN");
    vm_table_set(S, t, k, v);
}

void lua_rawset(lua_State *L, int idx) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    rawset_checked(S, t, &S->top[-2], &S->top[-1]);
    S->top -= 2;
}

void lua_rawseti(lua_State *L, int idx, lua_Integer n) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    vm_table_setint(S, t, n, &S->top[-1]);
    S->top--;
}

void lua_rawsetp(lua_State *L, int idx, const void *p) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    Value k = vm_lightud((void *)(uintptr_t)p);
    vm_table_set(S, t, &k, &S->top[-1]);
    S->top--;
}

int lua_setmetatable(lua_State *L, int objindex) {
    State *S = capi_S(L);
    Value *mtv = &S->top[-1];
    Table *mt = NULL;
    if (mtv->tt == VT_TABLE)
        mt = mtv->u.t;
    else if (mtv->tt != VT_NIL)
        vm_error(S, "table expected");
    vm_setmetatable_any(S, capi_index(S, objindex), mt);
    S->top--;
    return 1;
}

int lua_setiuservalue(lua_State *L, int idx, int n) {
    State *S = capi_S(L);
    Userdata *u = udata_at(S, idx);
    int ok = 1;
    if (n <= 0 || n > u->h.flags)
        ok = 0;
    else if (u->h.flags == 1)
        vm_storev(&u->uv, S->top[-1]);
    else
        vm_table_setint(S, u->uv.u.t, n, &S->top[-1]);
    S->top--;
    return ok;
}

/* }==================================================================== */

/* {====================================================================
 * Calls, loading
 * ===================================================================== */

/* A call with a continuation [k] is yieldable. Each coroutine runs on a C stack of its own
 * (vm_coro.c), so a yield inside it comes back here when the coroutine is resumed; then, as
 * in lua5.4, the module function does not go on after the call: capi_continue runs k and
 * makes its results the function's (vm_capi_lock.c). Without a yield the call returns. */
typedef struct CallArgs {
    int nargs, nresults;
    bool yieldable;
} CallArgs;

static void call_args(State *S, void *ud) {
    CallArgs *a = ud;
    if (a->yieldable)
        vm_call_yieldable_from_c(S, a->nargs, a->nresults);
    else
        vm_call(S, a->nargs, a->nresults);
}

void lua_callk(lua_State *L, int nargs, int nresults, lua_KContext ctx, lua_KFunction k) {
    State *S = capi_S(L);
    int held = capi_unlock_all(S); /* Lua code runs: the module lock is not held there */
    uint32_t yields = S->nyields;
    CallArgs a = {nargs, nresults, k != NULL};
    if (held == 0) {
        call_args(S, &a);
    } else { /* an error from the call takes the levels back before it unwinds the caller */
        int status = vm_rawrunprotected(S, call_args, &a);
        if (status != VM_OK) {
            capi_relock(S, held);
            capi_running = S;
            vm_throw(S, status);
        }
    }
    capi_relock(S, held);
    /* a green thread may have moved to another carrier during the call: the wait that may
     * follow looks for its state in this native thread's slot (vm_capi_block.c) */
    capi_running = S;
    if (k != NULL && S->nyields != yields) capi_continue(S, k, LUA_YIELD, ctx);
}

int lua_pcallk(lua_State *L, int nargs, int nresults, int errfunc, lua_KContext ctx, lua_KFunction k) {
    State *S = capi_S(L);
    ptrdiff_t ef = errfunc == 0 ? 0 : vm_savestack(S, capi_index(S, errfunc));
    int status;
    int held = capi_unlock_all(S); /* as in lua_callk */
    uint32_t yields = S->nyields;
    if (k == NULL) {
        status = vm_pcall_msgh(S, nargs, nresults, ef);
    } else { /* with a continuation the call may yield (see lua_callk) */
        status = vm_pcall_value(S, S->top - nargs - 1, nresults, ef, true);
        if (nresults == LUA_MULTRET && S->ci->top < S->top) S->ci->top = S->top;
    }
    capi_relock(S, held);
    capi_running = S; /* as in lua_callk */
    /* After a yield k gets LUA_YIELD, or the error status with the error on the stack. An
     * error in a call that could have yielded ends the function through k even without a
     * yield: lua5.4 makes such a call unprotected and recovers from the error by finishing
     * the function with its continuation. */
    if (k != NULL && (S->nyields != yields || (status != LUA_OK && lua_isyieldable(L))))
        return capi_continue(S, k, status == LUA_OK ? LUA_YIELD : status, ctx);
    return status;
}

typedef struct LoadAcc {
    char *p;
    size_t n, cap;
} LoadAcc;

int lua_load(lua_State *L, lua_Reader reader, void *data, const char *chunkname, const char *mode) {
    State *S = capi_S(L);
    LoadAcc acc = {NULL, 0, 0};
    size_t sz;
    const char *piece;
    /* the reader's pieces are gathered in one scanned-free block held by this frame */
    while ((piece = reader(L, data, &sz)) != NULL && sz > 0) {
        if (acc.n + sz > acc.cap) {
            size_t ncap = (acc.n + sz) * 2;
            char *np = vm_alloc_leaf(S, ncap);
            if (acc.n) memcpy(np, acc.p, acc.n);
            acc.p = np;
            acc.cap = ncap;
        }
        memcpy(acc.p + acc.n, piece, sz);
        acc.n += sz;
    }
    bool binary = acc.n > 0 && acc.p[0] == LUA_SIGNATURE[0];
    if (mode != NULL && strchr(mode, binary ? 'b' : 't') == NULL) {
        lua_pushfstring(L, "attempt to load a %s chunk (mode is '%s')", binary ? "binary" : "text", mode);
        return LUA_ERRSYNTAX;
    }
    if (chunkname == NULL) chunkname = "?";
    return vm_load(S, acc.n ? acc.p : "", acc.n, chunkname, NULL, true);
}

/* The function on top in Tandem's bytecode format (vm/bytecode/), which lua_load and load()
 * accept, not lua5.4's: a module that dumps and loads back works; the bytes differ. */
int lua_dump(lua_State *L, lua_Writer writer, void *data, int strip) {
    State *S = capi_S(L);
    const Value *f = S->top - 1;
    if (f->tt != VT_LFUNC) return 1;
    size_t len;
    unsigned char *buf = vm_bytecode_dump(f->u.lf->p, &len, strip != 0);
    if (buf == NULL) return 1;
    int status = writer(L, buf, len, data);
    free(buf);
    return status;
}

/* }==================================================================== */

/* {====================================================================
 * Coroutines
 * ===================================================================== */

/* The coroutine's C stack keeps the module function's frame, so the yield returns here when
 * the coroutine is resumed. The function then ends as lua5.4's would: with the results of
 * its continuation, or without one with the values resume passed (capi_continue's throw). */
int lua_yieldk(lua_State *L, int nresults, lua_KContext ctx, lua_KFunction k) {
    State *S = capi_S(L);
    int held = capi_unlock_all(S); /* other coroutines of this thread run meanwhile */
    int n = vm_coro_yield(S, nresults);
    capi_relock(S, held);
    capi_running = S; /* as in lua_callk */
    if (k != NULL) return capi_continue(S, k, LUA_YIELD, ctx);
    return capi_kreturn(S, n);
}

int lua_resume(lua_State *L, lua_State *from, int narg, int *nres) {
    State *co = capi_S(L);
    State *S = from != NULL ? capi_S(from) : co->g->mainthread;
    /* vm_coro_resume takes the arguments from the resumer's stack and leaves the results
     * there; lua_resume has both on the coroutine's stack */
    lua_xmove(L, capi_L(S), narg);
    int n = vm_coro_resume(S, co, narg);
    int status;
    if (n < 0) {
        status = co->costatus_err;
        n = 1;
    } else {
        status = co->costatus == CO_DEAD ? LUA_OK : LUA_YIELD;
    }
    lua_xmove(capi_L(S), L, n);
    if (nres) *nres = n;
    return status;
}

int lua_status(lua_State *L) {
    State *S = capi_S(L);
    if (S->costatus == CO_SUSPENDED) return LUA_YIELD;
    if (S->costatus == CO_DEAD) return S->costatus_err;
    return LUA_OK;
}

int lua_isyieldable(lua_State *L) {
    State *S = capi_S(L);
    return S != S->g->mainthread && S->nny == 0;
}

static int closethread(lua_State *L, lua_State *from) {
    State *co = capi_S(L);
    State *S = from != NULL ? capi_S(from) : co;
    if (co->costatus != CO_SUSPENDED && co->costatus != CO_SUSPENDED_NEW && co->costatus != CO_DEAD)
        vm_error(S, "cannot close a running coroutine");
    int status = co->costatus == CO_SUSPENDED ? vm_coro_close_suspended(S, co) : LUA_OK;
    co->top = co->stack;
    if (status != LUA_OK) *co->top++ = co->errval;
    return status;
}

int lua_resetthread(lua_State *L) { return closethread(L, NULL); }

/* }==================================================================== */

/* {====================================================================
 * Warnings, garbage collection, miscellaneous
 * ===================================================================== */

void lua_setwarnf(lua_State *L, lua_WarnFunction f, void *ud) {
    /* the runtime's warnings go to stderr as lua.c's do (vm_warn.c); a module cannot
     * redirect them */
    (void)L;
    (void)f;
    (void)ud;
}

void lua_warning(lua_State *L, const char *msg, int tocont) { vm_warning(capi_S(L), msg, tocont != 0); }

int lua_gc(lua_State *L, int what, ...) {
    State *S = capi_S(L);
    /* the mechanics are the collectgarbage library function's: call it, so both agree */
    static const char *const opts[] = {"stop", "restart", "collect", "count", "count",
                                       "step", "setpause", "setstepmul", NULL, "isrunning",
                                       "generational", "incremental"};
    if (what < 0 || what > LUA_GCINC || opts[what] == NULL) return -1;
    va_list ap;
    va_start(ap, what);
    int arg = (what == LUA_GCSTEP || what == LUA_GCSETPAUSE || what == LUA_GCSETSTEPMUL) ? va_arg(ap, int) : 0;
    va_end(ap);
    Value cg = vm_getglobal(S, "collectgarbage");
    if (!vm_isfunction(&cg)) return -1;
    int top = lua_gettop(L);
    capi_push(S, cg);
    lua_pushstring(L, opts[what]);
    int nargs = 1;
    if (what == LUA_GCSTEP || what == LUA_GCSETPAUSE || what == LUA_GCSETSTEPMUL) {
        lua_pushinteger(L, arg);
        nargs = 2;
    }
    vm_call(S, nargs, 1);
    int res = 0;
    if (what == LUA_GCCOUNT || what == LUA_GCCOUNTB) {
        double kb = lua_tonumberx(L, -1, NULL);
        res = what == LUA_GCCOUNT ? (int)kb : (int)((kb - (double)(int)kb) * 1024);
    } else if (what == LUA_GCISRUNNING || what == LUA_GCSTEP) {
        res = lua_toboolean(L, -1);
    } else {
        res = (int)lua_tointegerx(L, -1, NULL);
    }
    lua_settop(L, top);
    return res;
}

int lua_error(lua_State *L) {
    State *S = capi_S(L);
    vm_error_value(S, S->top[-1]);
}

int lua_next(lua_State *L, int idx) {
    State *S = capi_S(L);
    Table *t = table_at(S, idx);
    Value k = S->top[-1], v;
    if (!vm_table_next(S, t, &k, &v)) {
        S->top--;
        return 0;
    }
    S->top[-1] = k;
    capi_push(S, v);
    return 1;
}

void lua_toclose(lua_State *L, int idx) {
    State *S = capi_S(L);
    vm_newtbc(S, capi_index(S, idx));
}

void lua_closeslot(lua_State *L, int idx) {
    State *S = capi_S(L);
    Value *level = capi_index(S, idx);
    ptrdiff_t off = vm_savestack(S, level);
    vm_close(S, level, NULL);
    vm_restorestack(S, off)->tt = VT_NIL;
}

void lua_concat(lua_State *L, int n) {
    State *S = capi_S(L);
    if (n == 0)
        lua_pushlstring(L, "", 0);
    else if (n > 1)
        vm_concat(S, n);
}

void lua_len(lua_State *L, int idx) {
    State *S = capi_S(L);
    Value o = *capi_index(S, idx);
    capi_push(S, vm_nil()); /* the slot first: __len may move the stack */
    Value r = vm_len(S, &o);
    S->top[-1] = r;
}

lua_Alloc lua_getallocf(lua_State *L, void **ud);

/* lua_getallocf: modules (LPeg) allocate their own pointer-free blocks (compiled pattern
 * code) with it and free them from __gc. Those blocks hold no Lua values, so the C heap is
 * their right home, as in lua.c's l_alloc. */
static void *capi_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

lua_Alloc lua_getallocf(lua_State *L, void **ud) {
    (void)L;
    if (ud) *ud = NULL;
    return capi_alloc;
}

void lua_setallocf(lua_State *L, lua_Alloc f, void *ud) {
    (void)L;
    (void)f;
    (void)ud; /* Boehm owns the heap: ignored */
}

/* }==================================================================== */

/* {====================================================================
 * Upvalues
 * ===================================================================== */

/* Upvalue [n] of the function at [funcindex]: its slot and name ("" for C functions, as
 * lua5.4), or NULL. */
static const char *aux_upvalue(State *S, Value *fi, int n, Value **val) {
    if (fi->tt == VT_CFUNC) {
        CClosure *cl = fi->u.cf;
        if (n < 1 || n > cl->h.extra) return NULL;
        *val = &cl->upvals[n - 1];
        return "";
    }
    if (fi->tt == VT_LFUNC) {
        LClosure *cl = fi->u.lf;
        Proto *p = cl->p;
        if (n < 1 || n > p->nupvals) return NULL;
        *val = __atomic_load_n(&cl->upvals[n - 1]->v, __ATOMIC_ACQUIRE);
        String *name = p->upvals[n - 1].name;
        (void)S;
        return name == NULL ? "(no name)" : name->data;
    }
    return NULL;
}

const char *lua_getupvalue(lua_State *L, int funcindex, int n) {
    State *S = capi_S(L);
    Value *val = NULL;
    const char *name = aux_upvalue(S, capi_index(S, funcindex), n, &val);
    if (name != NULL) capi_push(S, vm_loadv(val));
    return name;
}

const char *lua_setupvalue(lua_State *L, int funcindex, int n) {
    State *S = capi_S(L);
    Value *val = NULL;
    const char *name = aux_upvalue(S, capi_index(S, funcindex), n, &val);
    if (name != NULL) {
        vm_storev(val, S->top[-1]);
        S->top--;
    }
    return name;
}

void *lua_upvalueid(lua_State *L, int fidx, int n) {
    State *S = capi_S(L);
    Value *fi = capi_index(S, fidx);
    if (fi->tt == VT_LFUNC) {
        LClosure *cl = fi->u.lf;
        return (n >= 1 && n <= cl->p->nupvals) ? (void *)cl->upvals[n - 1] : NULL;
    }
    if (fi->tt == VT_CFUNC) {
        CClosure *cl = fi->u.cf;
        return (n >= 1 && n <= cl->h.extra) ? (void *)&cl->upvals[n - 1] : NULL;
    }
    return NULL;
}

void lua_upvaluejoin(lua_State *L, int fidx1, int n1, int fidx2, int n2) {
    State *S = capi_S(L);
    Value *f1 = capi_index(S, fidx1), *f2 = capi_index(S, fidx2);
    if (f1->tt != VT_LFUNC || f2->tt != VT_LFUNC) vm_error(S, "Lua function expected");
    LClosure *c1 = f1->u.lf, *c2 = f2->u.lf;
    if (n1 < 1 || n1 > c1->p->nupvals || n2 < 1 || n2 > c2->p->nupvals) vm_error(S, "invalid upvalue index");
    c1->upvals[n1 - 1] = c2->upvals[n2 - 1];
}

/* }==================================================================== */

/* {====================================================================
 * Debug interface
 * ===================================================================== */

static bool is_chook_frame(const CallInfo *ci); /* lua_sethook, below */

int lua_getstack(lua_State *L, int level, lua_Debug *ar) {
    State *S = capi_S(L);
    if (level < 0) return 0;
    if (is_chook_frame(S->ci)) level++; /* inside a C hook: level 0 is the hooked function */
    CallInfo *ci = vm_getstack(S, level);
    if (ci == NULL) return 0;
    ar->i_ci = (struct CallInfo *)(void *)ci;
    return 1;
}

static void fill_source(lua_Debug *ar, const Value *f) {
    if (f->tt != VT_LFUNC) {
        ar->source = "=[C]";
        ar->srclen = 4;
        ar->linedefined = ar->lastlinedefined = -1;
        ar->what = "C";
    } else {
        Proto *p = f->u.lf->p;
        ar->source = p->source ? p->source->data : "=?";
        ar->srclen = p->source ? p->source->len : 2;
        ar->linedefined = p->linedefined;
        ar->lastlinedefined = p->lastlinedefined;
        ar->what = p->linedefined == 0 ? "main" : "Lua";
    }
    const char *src = ar->source;
    if (*src == '=' || *src == '@') {
        snprintf(ar->short_src, LUA_IDSIZE, "%s", src + 1);
    } else {
        const char *nl = strchr(src, '\n');
        size_t l = nl ? (size_t)(nl - src) : strlen(src);
        if (l > LUA_IDSIZE - 15) l = LUA_IDSIZE - 15;
        snprintf(ar->short_src, LUA_IDSIZE, "[string \"%.*s%s\"]", (int)l, src, (nl || l < strlen(src)) ? "..." : "");
    }
}

int lua_getinfo(lua_State *L, const char *what, lua_Debug *ar) {
    State *S = capi_S(L);
    CallInfo *ci = NULL;
    Value f;
    if (*what == '>') {
        f = S->top[-1];
        S->top--;
        what++;
    } else {
        ci = (CallInfo *)(void *)ar->i_ci;
        f = *ci->func;
    }
    int status = 1;
    for (; *what; what++) {
        switch (*what) {
        case 'S': fill_source(ar, &f); break;
        case 'l': ar->currentline = (ci && !(ci->callstatus & CIST_C)) ? vm_currentline(ci) : -1; break;
        case 'u':
            if (f.tt == VT_LFUNC) {
                ar->nups = (unsigned char)f.u.lf->p->nupvals;
                ar->nparams = f.u.lf->p->numparams;
                ar->isvararg = (char)f.u.lf->p->is_vararg;
            } else {
                ar->nups = f.tt == VT_CFUNC ? (unsigned char)f.u.cf->h.extra : 0;
                ar->nparams = 0;
                ar->isvararg = 1;
            }
            break;
        case 't': ar->istailcall = ci ? (char)((ci->callstatus & CIST_TAIL) != 0) : 0; break;
        case 'n':
            ar->namewhat = "";
            ar->name = NULL;
            if (ci != NULL) {
                const char *name = NULL;
                const char *kind = vm_callname(S, ci, &name);
                if (kind != NULL) {
                    ar->namewhat = kind;
                    ar->name = name;
                }
            }
            break;
        case 'r': ar->ftransfer = ar->ntransfer = 0; break;
        case 'L': capi_push(S, vm_nil()); break;
        case 'f': capi_push(S, f); break;
        default: status = 0;
        }
    }
    return status;
}

const char *lua_getlocal(lua_State *L, const lua_Debug *ar, int n) {
    State *S = capi_S(L);
    if (ar == NULL) {
        /* parameters of the function on the top, which stays there (as in lua5.4) */
        Value *f = &S->top[-1];
        return f->tt == VT_LFUNC ? vm_paramname(f->u.lf->p, n) : NULL;
    }
    Value *pos = NULL;
    const char *name = vm_findlocal(S, (CallInfo *)(void *)ar->i_ci, n, &pos);
    if (name != NULL) capi_push(S, *pos);
    return name;
}

const char *lua_setlocal(lua_State *L, const lua_Debug *ar, int n) {
    State *S = capi_S(L);
    Value *pos = NULL;
    const char *name = vm_findlocal(S, (CallInfo *)(void *)ar->i_ci, n, &pos);
    if (name != NULL) *pos = S->top[-1];
    S->top--;
    return name;
}

/* Hooks set from C would call a C function where the runtime calls a Lua value: refused
 * with an error rather than silently ignored (vm/capi/README.md). */
/* C hooks ride on the VM's hooks (vm/vm_hook.c), which call a function value with the event's
 * name and line, as debug.sethook's do: that function is a C closure of chook_bridge holding
 * the module's lua_Hook, which gets lua5.4's lua_Debug (event, currentline, and the hooked
 * frame in i_ci, the bridge's caller) and, through lua_getstack, the hooked function at
 * level 0, as a C hook runs without a frame of its own in lua5.4. */
static int chook_bridge(lua_State *L) {
    State *S = capi_S(L);
    lua_Hook hook = (lua_Hook)lua_touserdata(L, lua_upvalueindex(1));
    static const char *const names[] = {"call", "return", "line", "count", "tail call"};
    const char *ev = lua_tostring(L, 1);
    lua_Debug ar;
    memset(&ar, 0, sizeof ar);
    for (int i = 0; i < 5; i++)
        if (ev != NULL && strcmp(ev, names[i]) == 0) ar.event = i; /* LUA_HOOKCALL .. LUA_HOOKTAILCALL */
    ar.currentline = lua_isinteger(L, 2) ? (int)lua_tointeger(L, 2) : -1;
    ar.i_ci = (struct CallInfo *)(void *)S->ci->prev;
    lua_settop(L, 0);
    hook(L, &ar);
    return 0;
}

/* The bridge's frame, when [ci] is one (lua_getstack skips it). */
static bool is_chook_frame(const CallInfo *ci) {
    return (ci->callstatus & CIST_C) && ci->func->tt == VT_CFUNC && capi_fn(ci->func->u.cf) == chook_bridge;
}

void lua_sethook(lua_State *L, lua_Hook func, int mask, int count) {
    State *S = capi_S(L);
    if (func == NULL || mask == 0) {
        vm_sethook(S, vm_nil(), 0, 0);
        return;
    }
    lua_pushlightuserdata(L, (void *)func);
    lua_pushcclosure(L, chook_bridge, 1);
    vm_sethook(S, S->top[-1], (unsigned)mask, count);
    S->top--;
}

lua_Hook lua_gethook(lua_State *L) {
    State *S = capi_S(L);
    if (S->hook.tt != VT_CFUNC || capi_fn(S->hook.u.cf) != chook_bridge) return NULL;
    return (lua_Hook)S->hook.u.cf->upvals[0].u.p;
}

int lua_gethookmask(lua_State *L) { return capi_S(L)->hookmask & ~VM_MASKSWITCH; }
int lua_gethookcount(lua_State *L) { return capi_S(L)->basehookcount; }

int lua_setcstacklimit(lua_State *L, unsigned int limit) {
    (void)L;
    (void)limit;
    return VM_MAXCCALLS;
}

/* }==================================================================== */
