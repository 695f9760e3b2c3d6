/* vm_lib_debug.c: Lua's debug library: traceback, getinfo, getlocal/setlocal,
 * sethook/gethook (the hooks themselves: vm/vm_hook.c), getmetatable/setmetatable (on any
 * type), getupvalue/setupvalue, upvalueid/upvaluejoin, getregistry, getuservalue/setuservalue
 * (no userdata has user values yet), setcstacklimit. Every function that takes a thread
 * first works on that coroutine's frames (levels as lua_getstack counts them). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vm_compile.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"

/* The optional thread argument of most functions (lua5.4's getthread): [L1] and the index
 * of the argument before the others. */
static State *getthread(State *S, int *arg) {
    const Value *v = vm_at(S, 1);
    if (v->tt == VT_THREAD) {
        *arg = 1;
        return v->u.th;
    }
    *arg = 0;
    return S;
}

static bool isfunction(const Value *v) { return v->tt == VT_LFUNC || v->tt == VT_CFUNC; }

/* debug.traceback([thread,] [msg [, level]]): level 1 by default for this coroutine (not
 * traceback itself), 0 for another. */
static int db_traceback(State *S) {
    int arg;
    State *L1 = getthread(S, &arg);
    const Value *m = vm_at(S, arg + 1);
    if (!vm_isnil(m) && m->tt != VT_STR && !vm_isnumber(m)) {
        vm_settop(S, arg + 1);
        return 1; /* a non-string message is returned untouched */
    }
    vm_Integer level = vm_opt_integer(S, arg + 2, L1 == S ? 1 : 0);
    const char *msg = NULL;
    if (!vm_isnil(m)) msg = vm_check_string(S, arg + 1)->data;
    int lv = level < 0 ? -1 : level > INT32_MAX ? INT32_MAX : (int)level;
    vm_push(S, vm_str(vm_traceback_of(S, L1, msg, lv)));
    return 1;
}

static void setint(State *S, Table *t, const char *k, vm_Integer v) { vm_setfield(S, t, k, vm_int(v)); }

static void setstr(State *S, Table *t, const char *k, const char *v) {
    vm_setfield(S, t, k, vm_str(vm_string_newc(S, v)));
}

/* The lines of [p]'s instructions as a set (getinfo's 'L'). */
static Value activelines(State *S, const Proto *p) {
    Table *t = vm_table_new(S, 0, 0);
    Value v = vm_table(t);
    if (p->lineinfo != NULL) {
        Value yes = vm_bool(true);
        for (int pc = 0; pc < p->ncode; pc++) vm_table_setint(S, t, p->lineinfo[pc], &yes);
    }
    return v;
}

/* debug.getinfo([thread,] f | level [, what]): lua5.4's fields, for the options in [what]
 * ("flnSrtu" by default; 'L' adds activelines). A level beyond the stack gives nil; an option
 * that is not one of those is an error. */
static int db_getinfo(State *S) {
    int arg;
    State *L1 = getthread(S, &arg);
    const char *what = "flnSrtu";
    if (!vm_isnil(vm_at(S, arg + 2))) what = vm_check_string(S, arg + 2)->data;
    if (what[0] == '>') vm_arg_error(S, arg + 2, "invalid option '>'");
    CallInfo *ci = NULL;
    Value f;
    if (isfunction(vm_at(S, arg + 1))) {
        f = *vm_at(S, arg + 1);
    } else {
        ci = vm_getstack(L1, vm_check_integer(S, arg + 1));
        if (ci == NULL) {
            vm_pushnil(S);
            return 1;
        }
        f = *ci->func; /* nil for the main thread's base frame: a C function without value */
    }
    for (const char *o = what; *o; o++)
        if (strchr("SlutnrLf", *o) == NULL) vm_arg_error(S, arg + 2, "invalid option");
    bool lua = f.tt == VT_LFUNC && (ci == NULL || !(ci->callstatus & CIST_C));
    const Proto *p = lua ? f.u.lf->p : NULL;
    Table *t = vm_table_new(S, 0, 16);
    vm_push(S, vm_table(t)); /* keeps it reachable while it fills */
    if (strchr(what, 'S')) {
        if (lua) {
            char id[VM_IDSIZE];
            const char *src = p->source ? p->source->data : "=?";
            vm_chunkid(id, sizeof id, src, strlen(src));
            setstr(S, t, "source", src);
            setstr(S, t, "short_src", id);
            setint(S, t, "linedefined", p->linedefined);
            setint(S, t, "lastlinedefined", p->lastlinedefined);
            setstr(S, t, "what", p->linedefined == 0 ? "main" : "Lua");
        } else {
            setstr(S, t, "source", "=[C]");
            setstr(S, t, "short_src", "[C]");
            setint(S, t, "linedefined", -1);
            setint(S, t, "lastlinedefined", -1);
            setstr(S, t, "what", "C");
        }
    }
    if (strchr(what, 'l')) setint(S, t, "currentline", ci != NULL && lua ? vm_currentline(ci) : -1);
    if (strchr(what, 'u')) {
        setint(S, t, "nups", lua ? p->nupvals : f.tt == VT_CFUNC ? f.u.cf->h.extra : 0);
        setint(S, t, "nparams", lua ? p->numparams : 0);
        vm_setfield(S, t, "isvararg", vm_bool(lua ? p->is_vararg : true));
    }
    if (strchr(what, 'n')) {
        const char *name = NULL;
        const char *kind = ci != NULL ? vm_callname(L1, ci, &name) : NULL;
        if (kind != NULL && name != NULL) {
            setstr(S, t, "name", name);
            setstr(S, t, "namewhat", kind);
        } else {
            setstr(S, t, "namewhat", "");
        }
    }
    if (strchr(what, 'r')) {
        bool tran = ci != NULL && (ci->callstatus & CIST_TRAN);
        setint(S, t, "ftransfer", tran ? L1->ftransfer : 0);
        setint(S, t, "ntransfer", tran ? L1->ntransfer : 0);
    }
    if (strchr(what, 't')) vm_setfield(S, t, "istailcall", vm_bool(ci != NULL && (ci->callstatus & CIST_TAIL)));
    if (strchr(what, 'L') && lua) vm_setfield(S, t, "activelines", activelines(S, p));
    if (strchr(what, 'f')) vm_setfield(S, t, "func", f);
    return 1;
}

/* debug.getlocal([thread,] f | level, n): a function gives the name of its parameter n; a
 * level gives the name and value of local n (negative: the n-th extra argument). */
static int db_getlocal(State *S) {
    int arg;
    State *L1 = getthread(S, &arg);
    vm_Integer n = vm_check_integer(S, arg + 2);
    const Value *fv = vm_at(S, arg + 1);
    if (isfunction(fv)) {
        const char *name = fv->tt == VT_LFUNC ? vm_paramname(fv->u.lf->p, n) : NULL;
        vm_push(S, name ? vm_str(vm_string_newc(S, name)) : vm_nil());
        return 1;
    }
    CallInfo *ci = vm_getstack(L1, vm_check_integer(S, arg + 1));
    if (ci == NULL) vm_arg_error(S, arg + 1, "level out of range");
    Value *pos;
    const char *name = vm_findlocal(L1, ci, n, &pos);
    if (name == NULL) {
        vm_pushnil(S);
        return 1;
    }
    Value v = *pos;
    vm_pushcstr(S, name);
    vm_push(S, v);
    return 2;
}

/* debug.setlocal([thread,] level, n, value): the name of the local set, or nil. */
static int db_setlocal(State *S) {
    int arg;
    State *L1 = getthread(S, &arg);
    vm_Integer level = vm_check_integer(S, arg + 1);
    vm_Integer n = vm_check_integer(S, arg + 2);
    CallInfo *ci = vm_getstack(L1, level);
    if (ci == NULL) vm_arg_error(S, arg + 1, "level out of range");
    vm_check_any(S, arg + 3);
    Value *pos;
    const char *name = vm_findlocal(L1, ci, n, &pos);
    if (name != NULL) *pos = *vm_at(S, arg + 3);
    vm_push(S, name ? vm_str(vm_string_newc(S, name)) : vm_nil());
    return 1;
}

/* debug.sethook([thread,] hook, mask [, count]) and debug.sethook([thread]) to remove it. */
static int db_sethook(State *S) {
    int arg;
    State *L1 = getthread(S, &arg);
    Value hook = vm_nil();
    unsigned mask = 0;
    int count = 0;
    if (!vm_isnil(vm_at(S, arg + 1))) {
        const char *smask = vm_check_string(S, arg + 2)->data;
        vm_check_type(S, arg + 1, VT_LFUNC); /* any function */
        vm_Integer c = vm_opt_integer(S, arg + 3, 0);
        count = c > INT32_MAX ? INT32_MAX : c < INT32_MIN ? INT32_MIN : (int)c;
        if (strchr(smask, 'c')) mask |= VM_MASKCALL;
        if (strchr(smask, 'r')) mask |= VM_MASKRET;
        if (strchr(smask, 'l')) mask |= VM_MASKLINE;
        if (count > 0) mask |= VM_MASKCOUNT;
        hook = *vm_at(S, arg + 1);
    }
    vm_sethook(L1, hook, mask, count);
    return 0;
}

/* debug.gethook([thread]): the hook, its mask and count; nil without a hook. */
static int db_gethook(State *S) {
    int arg;
    State *L1 = getthread(S, &arg);
    if ((L1->hookmask & ~VM_MASKSWITCH) == 0) {
        vm_pushnil(S);
        return 1;
    }
    char smask[4];
    int i = 0;
    if (L1->hookmask & VM_MASKCALL) smask[i++] = 'c';
    if (L1->hookmask & VM_MASKRET) smask[i++] = 'r';
    if (L1->hookmask & VM_MASKLINE) smask[i++] = 'l';
    smask[i] = '\0';
    vm_push(S, L1->hook);
    vm_pushcstr(S, smask);
    vm_pushint(S, L1->basehookcount);
    return 3;
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
void vm_setmetatable_any(State *S, const Value *o, Table *mt) {
    if (o->tt == VT_TABLE || o->tt == VT_USERDATA)
        vm_gc_setmetatable(S, o, mt); /* __mode, __gc */
    else if (o->tt == VT_STR)
        S->g->string_mt = mt;
    else
        set_type_mt(S, o->tt, mt);
}

static int db_setmetatable(State *S) {
    const Value *mt = vm_at(S, 2);
    if (!vm_isnil(mt) && mt->tt != VT_TABLE) vm_type_error(S, 2, "nil or table");
    vm_setmetatable_any(S, vm_at(S, 1), vm_isnil(mt) ? NULL : mt->u.t);
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

/* Upvalue [n] of function [f]: its name, and for a Lua function its UpVal (*u), for a C
 * function the slot itself (*c); false when there is no such upvalue. A Lua upvalue may be
 * open on another thread's stack, so it is read and written through vm_upval_value and
 * vm_upval_foreign as GETUPVAL/SETUPVAL do (vm_func.c, "Foreign accesses"). */
static bool upvalue_of(const Value *f, vm_Integer n, const char **name, UpVal **u, Value **c) {
    *u = NULL;
    *c = NULL;
    if (f->tt == VT_LFUNC) {
        LClosure *cl = f->u.lf;
        if (n < 1 || n > cl->p->nupvals || cl->upvals[n - 1] == NULL) return false;
        String *s = cl->p->upvals[n - 1].name;
        *name = s ? s->data : "(no name)";
        *u = cl->upvals[n - 1];
        return true;
    }
    if (f->tt == VT_CFUNC) {
        CClosure *cf = f->u.cf;
        if (n < 1 || n > cf->h.extra) return false;
        *name = "";
        *c = &cf->upvals[n - 1];
        return true;
    }
    return false;
}

static int db_getupvalue(State *S) {
    vm_check_type(S, 1, VT_LFUNC);
    const char *name;
    UpVal *u;
    Value *c;
    if (!upvalue_of(vm_at(S, 1), vm_check_integer(S, 2), &name, &u, &c)) return 0;
    Value val;
    if (u != NULL)
        vm_upval_value(S, u, &val);
    else
        val = vm_loadv(c);
    vm_pushcstr(S, name);
    vm_push(S, val);
    return 2;
}

static int db_setupvalue(State *S) {
    vm_check_any(S, 3);
    vm_check_type(S, 1, VT_LFUNC);
    const char *name;
    UpVal *u;
    Value *c;
    if (!upvalue_of(vm_at(S, 1), vm_check_integer(S, 2), &name, &u, &c)) return 0;
    const Value *nv = vm_at(S, 3);
    if (c != NULL) {
        vm_copyv(c, nv);
    } else {
        Value *p = __atomic_load_n(&u->v, __ATOMIC_ACQUIRE);
        if (vm_upval_direct(S, u, p))
            vm_copyv(p, nv);
        else
            vm_upval_foreign(u, NULL, nv);
    }
    vm_pushcstr(S, name);
    return 1;
}

static const LibReg dblib[] = {
    {"traceback", db_traceback},       {"getinfo", db_getinfo},
    {"getlocal", db_getlocal},         {"setlocal", db_setlocal},
    {"sethook", db_sethook},           {"gethook", db_gethook},
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
