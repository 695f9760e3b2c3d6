/* vm_capi.h: what the rest of vm/ asks of the Lua 5.4 C API room (vm/capi/README.md):
 * loading C libraries for package.loadlib and the C searchers of require. */
#ifndef VM_CAPI_H
#define VM_CAPI_H

#include "vm_state.h"

/* package.loadlib's core (lua5.4's lookforfunc): open the shared library [path] (once per
 * process; it stays loaded) and, when [sym] is "*", only make its symbols global; else
 * push the C function [sym] it exports. Returns 0 after pushing the function (or true for
 * "*"), 1 when the library cannot be opened, 2 when the symbol is absent; on 1 and 2 the
 * dlerror() message is pushed. */
int vm_capi_loadfunc(State *S, const char *path, const char *sym);

#endif
