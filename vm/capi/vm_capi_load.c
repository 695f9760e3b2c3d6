/* vm_capi_load.c: opening C libraries (package.loadlib, require's C searchers). */
#include <dlfcn.h>

#include "vm_capi.h"
#include "vm_capi_int.h"

/* The two halves of the API are linked into the executable only when something refers to
 * them (they live in the tandem_vm archive); this table makes the loader, which the
 * package library always uses, refer to one function of each file, so every exported
 * lua_* and luaL_* name is present for modules to bind to (the export list is
 * vm/capi/vm_capi_exports.list). */
void *const vm_capi_anchor[] = {(void *)lua_pushnil, (void *)luaL_checkversion_, (void *)capi_block_watch};

int vm_capi_loadfunc(State *S, const char *path, const char *sym) {
    lua_State *L = capi_L(S);
    capi_registry(S); /* the predefined entries, before any module runs */
    /* Libraries are never closed (lua5.4 closes them at lua_close, when the process ends
     * anyway). A global load for "*" makes the symbols available to later libraries. */
    void *lib = dlopen(path, RTLD_NOW | (*sym == '*' ? RTLD_GLOBAL : RTLD_LOCAL));
    if (lib == NULL) {
        lua_pushstring(L, dlerror());
        return 1;
    }
    if (*sym == '*') {
        lua_pushboolean(L, 1);
        return 0;
    }
    lua_CFunction f = (lua_CFunction)dlsym(lib, sym);
    if (f == NULL) {
        lua_pushstring(L, dlerror());
        return 2;
    }
    capi_block_watch((void *)f);
    lua_pushcclosure(L, f, 0);
    return 0;
}
