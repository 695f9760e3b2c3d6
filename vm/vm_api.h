/* vm_api.h: the embedding API: create a VM, load and run a program, get the last error, free.
 * Nothing unwinds through these functions: they return a status (VM_OK, VM_ERRRUN,
 * VM_ERRSYNTAX, ... from vm_state.h). */
#ifndef VM_API_H
#define VM_API_H

#include <stdbool.h>
#include <stddef.h>

struct State;
typedef struct State State;

/* New VM (its main coroutine) with every standard library opened. Calls gc_init() if the
 * collector is not running yet. Never returns NULL (aborts if memory cannot be had). */
State *vm_state_new(void);

/* Run a protected function [f] with [ud] on [S]: errors inside are caught and their status
 * returned; the error object is left on the stack top. */
int vm_protect(State *S, void (*f)(State *S, void *ud), void *ud);

/* Compile [len] bytes (source or bytecode) named [chunkname] and run them with [args]
 * pushed as arguments (strings). Returns a VM_* status; on error vm_last_error() gives the
 * message. [traceback] receives a malloc'd traceback string when a runtime error escapes
 * (NULL if not wanted). */
int vm_run_buffer(State *S, const char *buf, size_t len, const char *chunkname, int nargs,
                  char **args, char **traceback);

/* Call the function below the top [nargs] values as the `lua` command runs every chunk
 * (lua.c's docall): protected, with a message handler that turns the error into a string
 * and appends a traceback (not to what a __tostring metamethod made of an error value).
 * Returns a VM_* status; the results, or the error message, replace function and
 * arguments. Inside a protected call of [S]. */
int vm_docall(State *S, int nargs, int nresults);

/* The program is over (lua_close): run the finalizers of every object marked for
 * finalization (vm_gc.h). Call once, before the threads are shut down. */
void vm_state_close(State *S);

/* Message of the last error (a static buffer valid until the next call). */
const char *vm_last_error(State *S);

/* Position and message of the last syntax error of a load on this thread (for the command
 * line's "file:line:col: message"); false if the last load had none. */
bool vm_last_compile_error(int *line, int *col, const char **msg);

#endif
