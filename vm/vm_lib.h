/* vm_lib.h: what C functions of the standard library use to talk to the VM.
 *
 * A C function (CFunction) sees its arguments as stack slots 1 .. vm_gettop(S); it pushes
 * its results and returns how many it pushed (the top n values are the results).
 * Pointers returned by vm_at() stay valid only until the stack can grow: any push beyond
 * VM_MINSTACK slots, vm_call, vm_pcall or any function that may call a metamethod. Re-fetch
 * after such calls. Errors never return: they unwind to the nearest protected call. */
#ifndef VM_LIB_H
#define VM_LIB_H

#include <stdarg.h>

#include "vm_number.h"
#include "vm_state.h"
#include "vm_string.h"
#include "vm_table.h"

/* ---- stack --------------------------------------------------------------------------- */
int vm_gettop(State *S);                    /* number of slots above the function */
Value *vm_at(State *S, int idx);            /* slot idx >= 1; a shared nil if idx > top */
void vm_settop(State *S, int idx);          /* grow with nils or shrink to idx slots */
void vm_checkstack(State *S, int n);        /* room for n more pushes, or "stack overflow" */
void vm_push(State *S, Value v);            /* guarantees room (grows the stack) */
void vm_pushnil(State *S);
void vm_pushbool(State *S, bool b);
void vm_pushint(State *S, vm_Integer i);
void vm_pushfloat(State *S, vm_Number n);
String *vm_pushstr(State *S, const char *s, size_t len);   /* short: maybe an earlier string
                                                              with these bytes (vm_string_reuse) */
String *vm_pushcstr(State *S, const char *s);
String *vm_pushfstring(State *S, const char *fmt, ...);   /* C printf formats */
void vm_pop(State *S, int n);
void vm_insert(State *S, int idx);          /* move the top value to idx, shifting up */
void vm_remove(State *S, int idx);

/* ---- calls --------------------------------------------------------------------------- */
/* Call the function at top - nargs - 1 with the nargs values above it; they are replaced by
 * nresults results (VM_MULTRET: all of them). Errors propagate. */
void vm_call(State *S, int nargs, int nresults);
/* As vm_call, and a coroutine may yield inside the call and come back into the C function
 * (what lua5.4 does with lua_callk and a continuation: pairs's __pairs, dofile). Each
 * coroutine has a C stack of its own, so no continuation is needed. */
void vm_call_yieldable_from_c(State *S, int nargs, int nresults);
/* As vm_call but protected: returns VM_OK, or an error status with the error object as the
 * only value left in place of the function and arguments. */
int vm_pcall(State *S, int nargs, int nresults);

/* ---- errors (never return) ------------------------------------------------------------ */
/* luaL_error: message prefixed with "chunk:line:" of the Lua function that called the
 * running C function (when it is a Lua function). */
_Noreturn void vm_error(State *S, const char *fmt, ...);
/* error(v): throw any value as it is. */
_Noreturn void vm_error_value(State *S, Value v);
/* "bad argument #arg to 'fname' (extramsg)" (luaL_argerror), with position. */
_Noreturn void vm_arg_error(State *S, int arg, const char *extramsg);
/* "bad argument #arg to 'fname' (expected expected, got typename)" (luaL_typeerror). */
_Noreturn void vm_type_error(State *S, int arg, const char *expected);

/* ---- argument checks ------------------------------------------------------------------ */
void vm_check_any(State *S, int arg);                 /* "value expected" */
vm_Integer vm_check_integer(State *S, int arg);       /* floats with integral value and
                                                         numeric strings accepted;
                                                         "number has no integer representation" */
vm_Number vm_check_number(State *S, int arg);
String *vm_check_string(State *S, int arg);           /* numbers are converted in place */
Table *vm_check_table(State *S, int arg);
void vm_check_type(State *S, int arg, ValueTag t);    /* exact type (VT_LFUNC/VT_CFUNC both
                                                         accepted for "function") */
vm_Integer vm_opt_integer(State *S, int arg, vm_Integer def);   /* nil/absent -> def */
vm_Number vm_opt_number(State *S, int arg, vm_Number def);
String *vm_opt_string(State *S, int arg, String *def);

/* ---- values -------------------------------------------------------------------------- */
const char *vm_typename(const Value *v);              /* "nil", "boolean", "number", ... */
const char *vm_objtypename(State *S, const Value *v); /* honours a string __name */
String *vm_tostring(State *S, const Value *v);        /* tostring(): __tostring, __name,
                                                         "table: 0x..." */
bool vm_rawequal(const Value *a, const Value *b);
bool vm_equal(State *S, const Value *a, const Value *b);     /* ==, with __eq */
bool vm_lessthan(State *S, const Value *a, const Value *b);  /* <, with __lt */
bool vm_lessequal(State *S, const Value *a, const Value *b); /* <=, with __le */
Value vm_len(State *S, const Value *v);                      /* #v, with __len */
Value vm_gettable(State *S, const Value *t, const Value *k); /* t[k], with __index */
void vm_settable(State *S, const Value *t, const Value *k, const Value *v); /* with __newindex */
Value vm_getfield(State *S, const Value *t, const char *k);  /* t.k, with __index */
void vm_concat(State *S, int n);     /* replace the n top values by their concatenation */
Table *vm_getmetatable(State *S, const Value *v);            /* raw metatable or NULL */
/* Metafield [event] ("__tostring", ...) of v's metatable; nil when absent. */
Value vm_getmetafield(State *S, const Value *v, const char *event);

/* UTF-8 (lua5.4's extended, up to 2^31) encoding of [x] into [buf] (at least 8 bytes);
 * returns the length (vm_lib_utf8.c; lua_pushfstring's %U uses it too). */
int vm_utf8_encode(char *buf, uint32_t x);
/* The metatable of [o] as debug.setmetatable and lua_setmetatable set it: a table's or a
 * full userdata's own (with __mode and __gc, vm_gc_setmetatable), else the one every value
 * of o's type shares (vm_lib_debug.c). */
void vm_setmetatable_any(State *S, const Value *o, Table *mt);
/* luaL_fileresult: true when [ok]; else nil, "[fname: ]strerror(errno)", errno (errno read
 * first). Returns the results pushed (vm_lib_os.c; io, os and the C API share it). */
int vm_file_result(State *S, bool ok, const char *fname);
/* luaL_execresult's status part for a wait status [stat] from system/pclose: true|nil,
 * "exit"|"signal", the code. Returns 3 (vm_lib_os.c). */
int vm_exec_status(State *S, int stat);

/* ---- globals and libraries ------------------------------------------------------------ */
typedef struct LibReg {
    const char *name;
    CFunction f;
} LibReg;
CClosure *vm_newcfunction(State *S, CFunction f, const char *name, int nupvals);
/* New table holding the functions of [funcs] (terminated by {NULL, NULL}). */
Table *vm_newlib(State *S, const LibReg *funcs);
void vm_setglobal(State *S, const char *name, Value v);
Value vm_getglobal(State *S, const char *name);
void vm_setfield(State *S, Table *t, const char *k, Value v);     /* raw t.k = v */
/* Upvalue [i] (1-based) of the running C closure. */
Value *vm_upvalue(State *S, int i);
/* Userdata with [size] payload bytes (pointer-free unless [scanned]) and metatable. */
Userdata *vm_newuserdata(State *S, size_t size, Table *meta, bool scanned);

/* Library openers (vm/lib/): each registers its globals in S->g->globals. */
void vm_open_base(State *S);       /* vm_lib_base.c */
void vm_open_coroutine(State *S);  /* vm_lib_coro.c */
void vm_open_string(State *S);     /* vm_lib_string.c: also sets the string metatable */
void vm_open_table(State *S);      /* vm_lib_table.c */
void vm_open_math(State *S);       /* vm_lib_math.c */
void vm_open_os(State *S);         /* vm_lib_os.c */
void vm_open_io(State *S);         /* vm_lib_io.c */
void vm_open_package(State *S);    /* vm_lib_base.c: require, package.path, package.loaded */
/* package.path and package.cpath set again from LUA_PATH_5_4/LUA_PATH and
 * LUA_CPATH_5_4/LUA_CPATH (";;" is the default), or to the defaults when [use_env] is false
 * (the command line's -E; vm_open_package reads the environment). */
void vm_package_setpaths(State *S, bool use_env);
void vm_open_debug(State *S);      /* vm_lib_debug.c: traceback, getinfo, ... */
void vm_open_utf8(State *S);       /* vm_lib_utf8.c */
void vm_open_ffi(State *S);        /* vm_lib_ffi.c: ffi.load, lib:func (libffi) */
void vm_open_profile(State *S);    /* vm_lib_profile.c: require "profile" (package.loaded only) */

/* Compile and load source (load(), require, the command line). On success pushes the new
 * main-chunk closure (with _ENV = [env] or the globals when env is NULL) and returns
 * VM_OK; on a syntax error pushes the message "chunkname:line: msg" and returns
 * VM_ERRSYNTAX. Binary chunks (starting with the bytecode signature) are loaded by the
 * verifier when [allow_binary]. */
int vm_load(State *S, const char *buf, size_t len, const char *chunkname, const Value *env,
            bool allow_binary);

#endif
