/* vm_debug.h: source positions, names of values in error messages, tracebacks (vm_debug.c). */
#ifndef VM_DEBUG_H
#define VM_DEBUG_H

#include "vm_state.h"

/* Current line of the Lua frame [ci] (-1 for C frames or without line info). */
int vm_currentline(const CallInfo *ci);
/* "chunk:line: msg" for the Lua frame [ci]. */
String *vm_add_position(State *S, const CallInfo *ci, String *msg);

/* Errors naming the culprit: [v] may point into the current frame's registers, at a
 * constant or an upvalue; the message then says "(local 'x')", "(global 'x')", ... */
_Noreturn void vm_typeerror(State *S, const Value *v, const char *op);
/* The same for a private copy [v] of the value that lives at [where] (a register, an
 * upvalue or a constant, used only to name the variable; NULL: no name). For values other
 * threads may change: the type is taken from the copy, never from the shared slot. */
_Noreturn void vm_typeerror_of(State *S, const Value *where, const Value *v, const char *op);
_Noreturn void vm_callerror(State *S, const Value *v);
_Noreturn void vm_concaterror(State *S, const Value *a, const Value *b);
_Noreturn void vm_opinterror(State *S, const Value *a, const Value *b, const char *msg);
_Noreturn void vm_tointerror(State *S, const Value *a, const Value *b);
_Noreturn void vm_ordererror(State *S, const Value *a, const Value *b);
_Noreturn void vm_forerror(State *S, const Value *v, const char *what);

/* Traceback of S's frames as a new string ("stack traceback:\n\t..."), starting [level]
 * frames up, with [msg] first when not NULL. */
String *vm_traceback(State *S, const char *msg, int level);
/* The same for the frames of coroutine [L1] (made in S). */
String *vm_traceback_of(State *S, State *L1, const char *msg, int level);
/* Frame [level] of [L] (0: the running function, lua_getstack's levels), or NULL. */
CallInfo *vm_getstack(State *L, vm_Integer level);
/* Local [n] of frame [ci] of [L] (lua5.4's luaG_findlocal): its name ("(temporary)" for
 * other slots of the frame, "(vararg)" for n < 0) and slot, or NULL. */
const char *vm_findlocal(State *L, CallInfo *ci, vm_Integer n, Value **pos);
/* Name of parameter [n] of [p], or NULL. */
const char *vm_paramname(const Proto *p, vm_Integer n);

/* Name of the function running in [ci] as the caller sees it: "function 'f'",
 * "method 'm'", "local 'f'", "field 'x.y'", "upvalue 'g'", "main chunk", or "function <file:12>".
 * Written into buf. */
void vm_funcdesc(State *S, const CallInfo *ci, char *buf, size_t size);

/* Name the caller used for the function running in [ci] (getobjname on the call
 * instruction): returns the kind ("global", "local", "method", "field", "upvalue", ...)
 * and sets *name, or NULL when the caller is not Lua code. */
const char *vm_callname(State *S, const CallInfo *ci, const char **name);
/* "string.rep" / "print" when [f] is a field of a loaded library. */
bool vm_globalfuncname(State *S, const Value *f, char *buf, size_t size);

/* ======================================================================
 * Debug hooks (vm_hook.c): lua5.4's call, return, line and count events, per coroutine.
 * The hooked interpreter copies (vm_interp.c) and precall_c (vm_call.c) call these only when
 * S->hookmask is set; nothing else looks at hooks.
 * ====================================================================== */
#define VM_MASKCALL 1u
#define VM_MASKRET 2u
#define VM_MASKLINE 4u
#define VM_MASKCOUNT 8u
/* Not a hook: the profile library (vm/prof/vm_prof_phase.h) asks this coroutine's running
 * frames to move to the switching copies of the interpreter. The plain copies already test
 * hookmask after every call into C (HOOKSWITCH, vm_interp.c), so the request costs them
 * nothing new; execute_hooked takes it there. Never seen by debug.gethook or lua_gethookmask,
 * never inherited by a new coroutine. */
#define VM_MASKSWITCH 0x40u

/* Install [hook] (a function, or nil to remove) with [mask] and [count] on [L]: a mask of 0
 * or a nil hook turns hooks off, as lua_sethook. */
void vm_sethook(State *L, Value hook, unsigned mask, int count);
/* A Lua frame [ci] starts (the hooked loop's startfunc): "call" or "tail call". */
void vm_hook_call(State *S, CallInfo *ci);
/* The C function of frame [ci] is about to run with [narg] arguments: "call". */
void vm_hook_ccall(State *S, CallInfo *ci, int narg);
/* Frame [ci] returns [nres] values starting [first] slots above ci->func, still in place:
 * "return" when asked for, and the caller's line tracking goes on from its call. */
void vm_hook_return(State *S, CallInfo *ci, int first, int nres);
/* The Lua frame [ci] is about to run the instruction before ci->savedpc: count and line
 * events (luaG_traceexec). */
void vm_hook_trace(State *S, CallInfo *ci);
/* A new coroutine [co] created by [from] gets its mask and count but not its function,
 * as lua_newthread gives (so it runs no hook until one is set on it). */
void vm_hook_inherit(State *co, const State *from);
/* lua5.4 runs an MMBIN instruction after binary operator [tm] on operands that are not
 * numbers (or integers): count it, and say whether its count event is due ... */
bool vm_hook_mmbin_due(State *S, int tm, const Value *a, const Value *b);
/* ... which this calls for S->ci, whose savedpc is set. */
void vm_hook_count(State *S);

#endif
