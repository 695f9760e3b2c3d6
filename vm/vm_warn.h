/* vm_warn.h: warnings, as lua_warning and lauxlib's default warning function give them:
 * "Lua warning: " + the message's pieces + "\n" on stderr, off until "@on". The `warn`
 * library function, the command line's -W and the collector's "error in __gc" warnings all
 * go through here, so their control messages and continuations share one state
 * (Global.warnmode). */
#ifndef VM_WARN_H
#define VM_WARN_H

#include <stdbool.h>

#include "vm_state.h"

/* Global.warnmode: what the next piece does (lauxlib's warnfoff, warnfon, warnfcont). */
enum { VM_WARN_OFF = 0, VM_WARN_ON, VM_WARN_CONT };

/* One piece of a warning (lua_warning): [tocont] says more pieces of the same message
 * follow. A single-piece message "@on" or "@off" switches warnings on or off; any other
 * single piece starting with '@' is a control message that is ignored. */
void vm_warning(State *S, const char *msg, bool tocont);

/* A whole message of [n] pieces (n >= 1), written without pieces of other threads'
 * warnings between them (warn(a, b, c) is one message). */
void vm_warning_pieces(State *S, const char *const *pieces, int n);

/* "error in WHERE (MSG)" for an error raised where nobody can catch it (a __gc
 * metamethod: luaE_warnerror): MSG is [err] when it is a string, else
 * "error object is not a string". */
void vm_warn_error(State *S, const char *where, const Value *err);

#endif
