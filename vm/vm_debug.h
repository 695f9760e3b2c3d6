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

#endif
