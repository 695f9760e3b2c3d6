/* vm_lib_debug.c: Lua's debug library without hooks and locals: traceback, getinfo,
 * getmetatable/setmetatable (on any type), getupvalue/setupvalue, upvalueid/upvaluejoin,
 * getregistry, getuservalue/setuservalue (no userdata has user values yet), setcstacklimit. */
#include <stdio.h>

#include "vm_compile.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"

/* debug.traceback([msg [, level]]) */
static int db_traceback(State *S) {
    const Value *m = vm_at(S, 1);
    if (!vm_isnil(m) && m->tt != VT_STR && !vm_isnumber(m)) {
        vm_settop(S, 1);
        return 1; /* a non-string message is returned untouched */
    }
    int level = (int)vm_opt_integer(S, 2, 1);
    const char *msg = NULL;
    if (!vm_isnil(m)) msg = vm_check_string(S, 1)->data;
    vm_push(S, vm_str(vm_traceback(S, msg, level < 0 ? 0 : level)));
    return 1;
}

static void setint(State *S, Table *t, const char *k, vm_Integer v) { vm_setfield(S, t, k, vm_int(v)); }

static void setstr(State *S, Table *t, const char *k, const char *v) {
    vm_setfield(S, t, k, vm_str(vm_string_newc(S, v)));
}

/* debug.getinfo(f | level [, what]): the fields of lua5.4's getinfo that need no hooks. */
static int db_getinfo(State *S) {
    const Value *a = vm_at(S, 1);
    CallInfo *ci = NULL;
    Value f;
    if (vm_isnumber(a)) {
        vm_Integer level = vm_check_integer(S, 1);
        ci = S->ci;
        for (vm_Integer i = 0; i < level && ci != NULL; i++) ci = ci->prev;
        if (ci == NULL || ci == &S->base_ci || level < 0) {
            vm_pushnil(S);
            return 1;
        }
        f = *ci->func;
    } else {
        vm_check_type(S, 1, VT_LFUNC);
        f = *a;
    }
    Table *t = vm_table_new(S, 0, 16);
    vm_setfield(S, t, "func", f);
    if (f.tt == VT_LFUNC) {
        Proto *p = f.u.lf->p;
        char id[VM_IDSIZE];
        const char *src = p->source ? p->source->data : "=?";
        vm_chunkid(id, sizeof id, src, strlen(src));
        setstr(S, t, "source", src);
        setstr(S, t, "short_src", id);
        setint(S, t, "linedefined", p->linedefined);
        setint(S, t, "lastlinedefined", p->lastlinedefined);
        setstr(S, t, "what", p->linedefined == 0 ? "main" : "Lua");
        setint(S, t, "nups", p->nupvals);
        setint(S, t, "nparams", p->numparams);
        vm_setfield(S, t, "isvararg", vm_bool(p->is_vararg));
        setint(S, t, "currentline", ci ? vm_currentline(ci) : -1);
    } else {
        setstr(S, t, "source", "=[C]");
        setstr(S, t, "short_src", "[C]");
        setint(S, t, "linedefined", -1);
        setint(S, t, "lastlinedefined", -1);
        setstr(S, t, "what", "C");
        setint(S, t, "nups", f.tt == VT_CFUNC ? f.u.cf->h.extra : 0);
        setint(S, t, "nparams", 0);
        vm_setfield(S, t, "isvararg", vm_bool(true));
        setint(S, t, "currentline", -1);
    }
    if (ci != NULL) {
        const char *name = NULL;
        const char *kind = vm_callname(S, ci, &name);
        if (kind != NULL && name != NULL) {
            setstr(S, t, "name", name);
            setstr(S, t, "namewhat", kind);
        } else {
            setstr(S, t, "namewhat", "");
        }
        vm_setfield(S, t, "istailcall", vm_bool((ci->callstatus & CIST_TAIL) != 0));
    }
    vm_push(S, vm_table(t));
    return 1;
}

static int db_getmetatable(State *S) {
    vm_check_any(S, 1);
    Table *mt = vm_metatable_of(S, vm_at(S, 1));
    vm_push(S, mt ? vm_table(mt) : vm_nil());
    return 1;
}

/* The tags that make up one Lua type, for a metatable shared by the whole type. */
static void set_type_mt(State *S, ValueTag tt, Table *m) {
    static const ValueTag same[][2] = {{VT_FALSE, VT_TRUE}, {VT_INT, VT_FLOAT}, {VT_LFUNC, VT_CFUNC}};
    S->g->type_mt[tt] = m;
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (same[i][0] == tt || same[i][1] == tt) S->g->type_mt[same[i][0]] = S->g->type_mt[same[i][1]] = m;
}

/* debug.setmetatable(value, mt): a table's or a full userdata's own metatable, or the one
 * every value of the type shares (strings, numbers, booleans, nil, functions, threads,
 * light userdata). */
static int db_setmetatable(State *S) {
    const Value *mt = vm_at(S, 2);
    if (!vm_isnil(mt) && mt->tt != VT_TABLE) vm_type_error(S, 2, "nil or table");
    Value *v = vm_at(S, 1);
    Table *m = vm_isnil(mt) ? NULL : mt->u.t;
    if (v->tt == VT_TABLE || v->tt == VT_USERDATA)
        vm_gc_setmetatable(S, v, m); /* __mode, __gc */
    else if (v->tt == VT_STR)
        S->g->string_mt = m;
    else
        set_type_mt(S, v->tt, m);
    vm_settop(S, 1);
    return 1;
}

/* debug.getregistry(): a table of the runtime's own, for C-style bookkeeping in Lua. */
static int db_getregistry(State *S) {
    if (S->g->registry == NULL) S->g->registry = vm_table_new(S, 0, 4);
    vm_push(S, vm_table(S->g->registry));
    return 1;
}

/* debug.getuservalue(u [, n]) and debug.setuservalue(u, value [, n]): the userdata the
 * runtime makes (files, thread handles) have no user values, as lua5.4's files have none,
 * so both answer fail (nil) for every n; a userdata that is not one raises as lua5.4 does. */
static int db_getuservalue(State *S) {
    vm_opt_integer(S, 2, 1);
    vm_pushnil(S);
    return 1;
}

static int db_setuservalue(State *S) {
    vm_check_type(S, 1, VT_USERDATA);
    vm_check_any(S, 2);
    vm_opt_integer(S, 3, 1);
    vm_pushnil(S);
    return 1;
}

/* Function [arg] has an upvalue [argn] (lua5.4's checks, in its order); returns its index. */
static int check_upvalue(State *S, int arg, int argn) {
    vm_check_type(S, arg, VT_LFUNC); /* any function */
    vm_Integer n = vm_check_integer(S, argn);
    const Value *f = vm_at(S, arg);
    int nup = f->tt == VT_LFUNC ? f->u.lf->p->nupvals : f->u.cf->h.extra;
    if (n < 1 || n > nup) vm_arg_error(S, argn, "invalid upvalue index");
    return (int)n - 1;
}

/* debug.upvalueid(f, n): an identity for the upvalue, equal for closures that share it. */
static int db_upvalueid(State *S) {
    const Value *f = vm_at(S, 1);
    vm_Integer n = vm_check_integer(S, 2);
    if (f->tt == VT_CFUNC) {
        if (n < 1 || n > f->u.cf->h.extra) {
            vm_pushnil(S);
            return 1;
        }
        vm_push(S, vm_lightud(&f->u.cf->upvals[n - 1]));
        return 1;
    }
    vm_check_type(S, 1, VT_LFUNC);
    if (n < 1 || n > f->u.lf->p->nupvals) {
        vm_pushnil(S);
        return 1;
    }
    vm_push(S, vm_lightud(f->u.lf->upvals[n - 1]));
    return 1;
}

/* debug.upvaluejoin(f1, n1, f2, n2): f1's n1-th upvalue becomes f2's n2-th. */
static int db_upvaluejoin(State *S) {
    int n1 = check_upvalue(S, 1, 2), n2 = check_upvalue(S, 3, 4);
    if (vm_at(S, 1)->tt != VT_LFUNC) vm_arg_error(S, 1, "Lua function expected");
    if (vm_at(S, 3)->tt != VT_LFUNC) vm_arg_error(S, 3, "Lua function expected");
    vm_at(S, 1)->u.lf->upvals[n1] = vm_at(S, 3)->u.lf->upvals[n2];
    return 0;
}

/* debug.setcstacklimit: deprecated in 5.4, a no-op answering the fixed limit of C calls. */
static int db_setcstacklimit(State *S) {
    vm_check_integer(S, 1);
    vm_pushint(S, VM_MAXCCALLS);
    return 1;
}

/* Upvalue [n] of Lua function [f]: its slot and name, or NULL. */
static Value *upvalue_of(const Value *f, vm_Integer n, const char **name) {
    if (f->tt == VT_LFUNC) {
        LClosure *cl = f->u.lf;
        if (n < 1 || n > cl->p->nupvals || cl->upvals[n - 1] == NULL) return NULL;
        String *s = cl->p->upvals[n - 1].name;
        *name = s ? s->data : "(no name)";
        return __atomic_load_n(&cl->upvals[n - 1]->v, __ATOMIC_ACQUIRE);
    }
    if (f->tt == VT_CFUNC) {
        CClosure *cf = f->u.cf;
        if (n < 1 || n > cf->h.extra) return NULL;
        *name = "";
        return &cf->upvals[n - 1];
    }
    return NULL;
}

static int db_getupvalue(State *S) {
    vm_check_type(S, 1, VT_LFUNC);
    const char *name;
    Value *v = upvalue_of(vm_at(S, 1), vm_check_integer(S, 2), &name);
    if (v == NULL) return 0;
    Value val = vm_loadv(v);   /* other threads may write the upvalue */
    vm_pushcstr(S, name);
    vm_push(S, val);
    return 2;
}

static int db_setupvalue(State *S) {
    vm_check_any(S, 3);
    vm_check_type(S, 1, VT_LFUNC);
    const char *name;
    Value *v = upvalue_of(vm_at(S, 1), vm_check_integer(S, 2), &name);
    if (v == NULL) return 0;
    vm_copyv(v, vm_at(S, 3));
    vm_pushcstr(S, name);
    return 1;
}

static const LibReg dblib[] = {
    {"traceback", db_traceback},       {"getinfo", db_getinfo},
    {"getmetatable", db_getmetatable}, {"setmetatable", db_setmetatable},
    {"getupvalue", db_getupvalue},     {"setupvalue", db_setupvalue},
    {"getregistry", db_getregistry},   {"getuservalue", db_getuservalue},
    {"setuservalue", db_setuservalue}, {"upvalueid", db_upvalueid},
    {"upvaluejoin", db_upvaluejoin},   {"setcstacklimit", db_setcstacklimit},
    {NULL, NULL},
};

void vm_open_debug(State *S) {
    Table *t = vm_newlib(S, dblib);
    vm_setglobal(S, "debug", vm_table(t));
    if (S->g->loaded) vm_setfield(S, S->g->loaded, "debug", vm_table(t));
}
