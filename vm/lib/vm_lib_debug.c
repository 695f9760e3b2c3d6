/* vm_lib_debug.c: the parts of Lua's debug library that programs use for diagnostics:
 * traceback, getinfo, getmetatable/setmetatable, getupvalue/setupvalue. */
#include <stdio.h>

#include "vm_compile.h"
#include "vm_debug.h"
#include "vm_do.h"
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

/* debug.setmetatable(value, mt): tables and userdata only here (the string metatable is
 * shared and not replaceable). */
static int db_setmetatable(State *S) {
    const Value *mt = vm_at(S, 2);
    if (!vm_isnil(mt) && mt->tt != VT_TABLE) vm_type_error(S, 2, "nil or table");
    Value *v = vm_at(S, 1);
    Table *m = vm_isnil(mt) ? NULL : mt->u.t;
    if (v->tt == VT_TABLE)
        v->u.t->meta = m;
    else if (v->tt == VT_USERDATA)
        v->u.u->meta = m;
    else
        vm_arg_error(S, 1, "cannot set the metatable of this type");
    vm_settop(S, 1);
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
    {NULL, NULL},
};

void vm_open_debug(State *S) {
    Table *t = vm_newlib(S, dblib);
    vm_setglobal(S, "debug", vm_table(t));
    if (S->g->loaded) vm_setfield(S, S->g->loaded, "debug", vm_table(t));
}
