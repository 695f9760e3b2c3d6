/* vm_capi_int.h: private to vm/capi/: the index translation and helpers shared by the lua.h
 * half (vm_capi_lua.c) and the lauxlib.h half (vm_capi_aux.c).
 *
 * A lua_State * handed to a C module IS a State * (the running coroutine): Lua's header
 * leaves the struct opaque, and a lua_CFunction has the ABI of a CFunction, so a module's
 * function is stored in a CClosure as it is and called like any library function. */
#ifndef VM_CAPI_INT_H
#define VM_CAPI_INT_H

#include <lua5.4/lua.h>
#include <lua5.4/lauxlib.h>

#include "vm_do.h"
#include "vm_lib.h"

_Static_assert(sizeof(lua_Integer) == sizeof(vm_Integer) && sizeof(lua_Number) == sizeof(vm_Number),
               "lua_Integer is int64_t and lua_Number double (Debian's luaconf.h)");
_Static_assert(LUA_OK == VM_OK && LUA_YIELD == VM_YIELD && LUA_ERRRUN == VM_ERRRUN &&
                   LUA_ERRSYNTAX == VM_ERRSYNTAX && LUA_ERRMEM == VM_ERRMEM && LUA_ERRERR == VM_ERRERR,
               "status codes are shared");
_Static_assert(LUA_MULTRET == VM_MULTRET, "LUA_MULTRET");
_Static_assert(LUAI_MAXSTACK == VM_MAXSTACK, "LUA_REGISTRYINDEX = -LUAI_MAXSTACK - 1000");

/* The state of the last API call on this native thread: a C module's wait (vm_capi_block.c)
 * finds there the state it runs in, as a module checks its arguments through the API
 * before it waits. One thread-local store per call. */
extern _Thread_local State *capi_running;
static inline State *capi_S(lua_State *L) {
    capi_running = (State *)(void *)L;
    return (State *)(void *)L;
}
/* The module lock (vm_capi_lock.c). The CFunction of every C closure the API makes is
 * capi_trampoline; the module's function is a light userdata in the hidden slot
 * upvals[h.extra], after the upvalues the module sees. */
int capi_trampoline(State *S);
static inline lua_CFunction capi_fn(const CClosure *cl) {
    return cl->f == capi_trampoline ? (lua_CFunction)cl->upvals[cl->h.extra].u.p : (lua_CFunction)(void *)cl->f;
}
/* Give up every level of the lock this language thread holds (0 if none) / take them back. */
int capi_unlock_all(State *S);
/* After a yield inside lua_callk/pcallk/yieldk: run continuation [k] with [status] and
 * [ctx] and make its results the module function's (vm_capi_lock.c): does not return when
 * a trampoline receives them (always, for a module function), else returns k's result. */
int capi_continue(State *S, lua_KFunction k, int status, lua_KContext ctx);
/* The same for [n] results already on the stack (lua_yield without a continuation). */
int capi_kreturn(State *S, int n);
void capi_relock(State *S, int n);
/* Watch the library holding [sym] (a module just opened): its waits go through vm_iowait. */
void capi_block_watch(void *sym);
static inline lua_State *capi_L(State *S) { return (lua_State *)(void *)S; }

/* The slot of acceptable index [idx] (positive, negative, LUA_REGISTRYINDEX, or an upvalue
 * pseudo-index); &capi_none for an absent one (lua_type says LUA_TNONE). Pointers into the
 * stack stay valid until the stack grows (vm_lib.h). */
extern const Value capi_none;
Value *capi_index(State *S, int idx);
/* The registry, made on first use with lua5.4's predefined entries: [LUA_RIDX_MAINTHREAD],
 * [LUA_RIDX_GLOBALS], "_LOADED" (package.loaded), "_PRELOAD" (package.preload). */
Table *capi_registry(State *S);
/* Push [v], growing the stack if needed (a module that pushes past LUA_MINSTACK without
 * lua_checkstack is wrong, but is not left to corrupt memory). */
static inline void capi_push(State *S, Value v) {
    if (__builtin_expect(S->top >= S->ci->top, 0)) vm_checkstack(S, VM_MINSTACK);
    *S->top++ = v;
}

#endif
