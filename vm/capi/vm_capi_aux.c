/* vm_capi_aux.c: the functions of Lua 5.4's lauxlib.h, written on the lua.h half
 * (vm_capi_lua.c) and on the runtime's own error and traceback machinery, so that messages
 * are the ones the standard library gives (and lua5.4's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_capi_int.h"
#include "vm_debug.h"

/* luaL_ref's free list lives at this key of the table, after the registry's predefined
 * entries (lua5.4.4's choice, so refs number as lua5.4's do). */
#define FREELIST (LUA_RIDX_LAST + 1)

/* {====================================================================
 * Errors
 * ===================================================================== */

int luaL_argerror(lua_State *L, int arg, const char *extramsg) { vm_arg_error(capi_S(L), arg, extramsg); }

int luaL_typeerror(lua_State *L, int arg, const char *tname) {
    const char *typearg;
    if (luaL_getmetafield(L, arg, "__name") == LUA_TSTRING)
        typearg = lua_tolstring(L, -1, NULL);
    else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA)
        typearg = "light userdata";
    else
        typearg = lua_typename(L, lua_type(L, arg));
    const char *msg = lua_pushfstring(L, "%s expected, got %s", tname, typearg);
    return luaL_argerror(L, arg, msg);
}

void luaL_where(lua_State *L, int lvl) {
    State *S = capi_S(L);
    String *empty = vm_string_new(S, "", 0);
    capi_push(S, vm_str(vm_where(S, lvl, empty)));
}

int luaL_error(lua_State *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    luaL_where(L, 1);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}

void luaL_traceback(lua_State *L, lua_State *L1, const char *msg, int level) {
    State *S = capi_S(L);
    String *tb = vm_traceback_of(S, capi_S(L1), msg, level);
    capi_push(S, vm_str(tb));
}

void luaL_checkversion_(lua_State *L, lua_Number ver, size_t sz) {
    if (sz != LUAL_NUMSIZES) luaL_error(L, "core and library have incompatible numeric types");
    if (ver != LUA_VERSION_NUM)
        luaL_error(L, "version mismatch: app. needs %f, Lua core provides %f", (LUAI_UACNUMBER)ver,
                   (LUAI_UACNUMBER)LUA_VERSION_NUM);
}

int luaL_fileresult(lua_State *L, int stat, const char *fname) {
    return vm_file_result(capi_S(L), stat != 0, fname);
}

int luaL_execresult(lua_State *L, int stat) {
    if (stat != 0 && errno != 0) return luaL_fileresult(L, 0, NULL);
    return vm_exec_status(capi_S(L), stat);
}

/* }==================================================================== */

/* {====================================================================
 * Userdata, metatables
 * ===================================================================== */

int luaL_newmetatable(lua_State *L, const char *tname) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, tname) != LUA_TNIL) return 0;
    lua_settop(L, -2);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, tname);
    lua_setfield(L, -2, "__name");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, tname);
    return 1;
}

void luaL_setmetatable(lua_State *L, const char *tname) {
    lua_getfield(L, LUA_REGISTRYINDEX, tname);
    lua_setmetatable(L, -2);
}

void *luaL_testudata(lua_State *L, int ud, const char *tname) {
    void *p = lua_touserdata(L, ud);
    if (p == NULL || !lua_getmetatable(L, ud)) return NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, tname);
    if (!lua_rawequal(L, -1, -2)) p = NULL;
    lua_settop(L, -3);
    return p;
}

void *luaL_checkudata(lua_State *L, int ud, const char *tname) {
    void *p = luaL_testudata(L, ud, tname);
    if (p == NULL) luaL_typeerror(L, ud, tname);
    return p;
}

int luaL_getmetafield(lua_State *L, int obj, const char *e) {
    if (!lua_getmetatable(L, obj)) return LUA_TNIL;
    lua_pushstring(L, e);
    int tt = lua_rawget(L, -2);
    if (tt == LUA_TNIL)
        lua_settop(L, -3);
    else
        lua_rotate(L, -2, -1), lua_settop(L, -2); /* remove the metatable */
    return tt;
}

int luaL_callmeta(lua_State *L, int obj, const char *e) {
    obj = lua_absindex(L, obj);
    if (luaL_getmetafield(L, obj, e) == LUA_TNIL) return 0;
    lua_pushvalue(L, obj);
    lua_callk(L, 1, 1, 0, NULL);
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * Argument checks
 * ===================================================================== */

static void tag_error(lua_State *L, int arg, int tag) { luaL_typeerror(L, arg, lua_typename(L, tag)); }

int luaL_checkoption(lua_State *L, int arg, const char *def, const char *const lst[]) {
    const char *name = def ? luaL_optlstring(L, arg, def, NULL) : luaL_checklstring(L, arg, NULL);
    for (int i = 0; lst[i]; i++)
        if (strcmp(lst[i], name) == 0) return i;
    return luaL_argerror(L, arg, lua_pushfstring(L, "invalid option '%s'", name));
}

void luaL_checkstack(lua_State *L, int space, const char *msg) {
    if (!lua_checkstack(L, space)) {
        if (msg)
            luaL_error(L, "stack overflow (%s)", msg);
        else
            luaL_error(L, "stack overflow");
    }
}

void luaL_checktype(lua_State *L, int arg, int t) {
    if (lua_type(L, arg) != t) tag_error(L, arg, t);
}

void luaL_checkany(lua_State *L, int arg) {
    if (lua_type(L, arg) == LUA_TNONE) luaL_argerror(L, arg, "value expected");
}

const char *luaL_checklstring(lua_State *L, int arg, size_t *len) {
    const char *s = lua_tolstring(L, arg, len);
    if (s == NULL) tag_error(L, arg, LUA_TSTRING);
    return s;
}

const char *luaL_optlstring(lua_State *L, int arg, const char *def, size_t *len) {
    if (lua_type(L, arg) <= 0) {
        if (len) *len = def ? strlen(def) : 0;
        return def;
    }
    return luaL_checklstring(L, arg, len);
}

lua_Number luaL_checknumber(lua_State *L, int arg) {
    int isnum;
    lua_Number d = lua_tonumberx(L, arg, &isnum);
    if (!isnum) tag_error(L, arg, LUA_TNUMBER);
    return d;
}

lua_Number luaL_optnumber(lua_State *L, int arg, lua_Number def) {
    return lua_type(L, arg) <= 0 ? def : luaL_checknumber(L, arg);
}

lua_Integer luaL_checkinteger(lua_State *L, int arg) {
    int isnum;
    lua_Integer d = lua_tointegerx(L, arg, &isnum);
    if (!isnum) {
        if (lua_isnumber(L, arg))
            luaL_argerror(L, arg, "number has no integer representation");
        else
            tag_error(L, arg, LUA_TNUMBER);
    }
    return d;
}

lua_Integer luaL_optinteger(lua_State *L, int arg, lua_Integer def) {
    return lua_type(L, arg) <= 0 ? def : luaL_checkinteger(L, arg);
}

/* }==================================================================== */

/* {====================================================================
 * Buffers
 *
 * lua5.4's discipline, which modules rely on: luaL_buffinit pushes one slot (a placeholder)
 * and the buffer owns that slot until luaL_pushresult; when the initial in-struct buffer is
 * too small the slot becomes a "box", a userdata whose pointer-free block holds the
 * characters, so they are reachable from the stack while the C function runs (a collection
 * may happen at any growth). B->b then points into that block.
 * ===================================================================== */

/* Room for [sz] more bytes; the buffer's slot is at [boxidx] (the top, or below a value
 * luaL_addvalue is adding). */
static char *prepbuffsize(luaL_Buffer *B, size_t sz, int boxidx) {
    if (B->size - B->n >= sz) return B->b + B->n;
    lua_State *L = B->L;
    State *S = capi_S(L);
    size_t newsize = (B->size / 2) * 3;
    if (SIZE_MAX - sz < B->n) luaL_error(L, "buffer too large");
    if (newsize < B->n + sz) newsize = B->n + sz;
    Userdata *box = vm_newuserdata(S, newsize, NULL, false);
    memcpy(box->data, B->b, B->n);
    *capi_index(S, boxidx) = vm_userdata(box);
    B->b = box->data;
    B->size = newsize;
    return B->b + B->n;
}

void luaL_buffinit(lua_State *L, luaL_Buffer *B) {
    B->L = L;
    B->b = B->init.b;
    B->n = 0;
    B->size = LUAL_BUFFERSIZE;
    lua_pushlightuserdata(L, (void *)B);
}

char *luaL_prepbuffsize(luaL_Buffer *B, size_t sz) { return prepbuffsize(B, sz, -1); }

char *luaL_buffinitsize(lua_State *L, luaL_Buffer *B, size_t sz) {
    luaL_buffinit(L, B);
    return prepbuffsize(B, sz, -1);
}

void luaL_addlstring(luaL_Buffer *B, const char *s, size_t l) {
    if (l > 0) {
        char *b = prepbuffsize(B, l, -1);
        memcpy(b, s, l);
        B->n += l;
    }
}

void luaL_addstring(luaL_Buffer *B, const char *s) { luaL_addlstring(B, s, strlen(s)); }

void luaL_pushresult(luaL_Buffer *B) {
    lua_State *L = B->L;
    lua_pushlstring(L, B->b, B->n);
    /* drop the placeholder or box below the result */
    lua_rotate(L, -2, -1);
    lua_settop(L, -2);
}

void luaL_pushresultsize(luaL_Buffer *B, size_t sz) {
    B->n += sz;
    luaL_pushresult(B);
}

void luaL_addvalue(luaL_Buffer *B) {
    lua_State *L = B->L;
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    char *b = prepbuffsize(B, len, -2);
    s = lua_tolstring(L, -1, &len); /* the string did not move, but re-fetch after growth */
    memcpy(b, s, len);
    B->n += len;
    lua_settop(L, -2);
}

void luaL_addgsub(luaL_Buffer *b, const char *s, const char *p, const char *r) {
    const char *wild;
    size_t l = strlen(p);
    while ((wild = strstr(s, p)) != NULL) {
        luaL_addlstring(b, s, (size_t)(wild - s));
        luaL_addstring(b, r);
        s = wild + l;
    }
    luaL_addstring(b, s);
}

const char *luaL_gsub(lua_State *L, const char *s, const char *p, const char *r) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addgsub(&b, s, p, r);
    luaL_pushresult(&b);
    return lua_tolstring(L, -1, NULL);
}

/* }==================================================================== */

/* {====================================================================
 * References
 * ===================================================================== */

int luaL_ref(lua_State *L, int t) {
    if (lua_type(L, -1) == LUA_TNIL) {
        lua_settop(L, -2);
        return LUA_REFNIL;
    }
    t = lua_absindex(L, t);
    int ref;
    if (lua_rawgeti(L, t, FREELIST) == LUA_TNIL) { /* first use: an empty list */
        ref = 0;
        lua_pushinteger(L, 0);
        lua_rawseti(L, t, FREELIST);
    } else {
        ref = (int)lua_tointegerx(L, -1, NULL);
    }
    lua_settop(L, -2);
    if (ref != 0) { /* reuse a freed reference */
        lua_rawgeti(L, t, ref);
        lua_rawseti(L, t, FREELIST);
    } else {
        ref = (int)lua_rawlen(L, t) + 1;
    }
    lua_rawseti(L, t, ref);
    return ref;
}

void luaL_unref(lua_State *L, int t, int ref) {
    if (ref < 0) return;
    t = lua_absindex(L, t);
    lua_rawgeti(L, t, FREELIST);
    lua_rawseti(L, t, ref); /* t[ref] = t[FREELIST] */
    lua_pushinteger(L, ref);
    lua_rawseti(L, t, FREELIST);
}

/* }==================================================================== */

/* {====================================================================
 * Loading
 * ===================================================================== */

typedef struct StrReader {
    const char *s;
    size_t size;
} StrReader;

static const char *read_str(lua_State *L, void *ud, size_t *size) {
    (void)L;
    StrReader *r = ud;
    if (r->size == 0) return NULL;
    *size = r->size;
    r->size = 0;
    return r->s;
}

int luaL_loadbufferx(lua_State *L, const char *buff, size_t sz, const char *name, const char *mode) {
    StrReader r = {buff, sz};
    return lua_load(L, read_str, &r, name, mode);
}

int luaL_loadstring(lua_State *L, const char *s) { return luaL_loadbufferx(L, s, strlen(s), s, NULL); }

int luaL_loadfilex(lua_State *L, const char *filename, const char *mode) {
    int fnameindex = lua_gettop(L) + 1;
    FILE *f;
    if (filename == NULL) {
        lua_pushstring(L, "=stdin");
        f = stdin;
    } else {
        lua_pushfstring(L, "@%s", filename);
        f = fopen(filename, "rb");
    }
    if (f == NULL) {
        lua_pushfstring(L, "cannot open %s: %s", filename, strerror(errno));
        lua_rotate(L, fnameindex, -1), lua_settop(L, -2);
        return LUA_ERRFILE;
    }
    /* the whole file in a C block: the loader compiles from one buffer */
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL) free(buf);
            buf = nb;
        }
    }
    int readerr = ferror(f);
    if (f != stdin) fclose(f);
    if (buf == NULL || readerr) {
        free(buf);
        lua_pushfstring(L, "cannot read %s", lua_tolstring(L, fnameindex, NULL) + 1);
        lua_rotate(L, fnameindex, -1), lua_settop(L, -2);
        return LUA_ERRFILE;
    }
    const char *p = buf;
    size_t len = n;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3, len -= 3; /* UTF-8 BOM */
    if (len > 0 && *p == '#') {                                            /* Unix exec. file */
        while (len > 0 && *p != '\n') p++, len--;
    }
    int status = luaL_loadbufferx(L, p, len, lua_tolstring(L, fnameindex, NULL), mode);
    free(buf);
    lua_rotate(L, fnameindex, -1), lua_settop(L, -2); /* remove the chunk name */
    return status;
}

/* }==================================================================== */

/* {====================================================================
 * Miscellaneous
 * ===================================================================== */

lua_Integer luaL_len(lua_State *L, int idx) {
    int isnum;
    lua_len(L, idx);
    lua_Integer l = lua_tointegerx(L, -1, &isnum);
    if (!isnum) luaL_error(L, "object length is not an integer");
    lua_settop(L, -2);
    return l;
}

const char *luaL_tolstring(lua_State *L, int idx, size_t *len) {
    State *S = capi_S(L);
    Value v = *capi_index(S, idx);
    capi_push(S, v); /* keep it reachable while __tostring runs */
    String *s = vm_tostring(S, &S->top[-1]);
    S->top[-1] = vm_str(s);
    if (len) *len = s->len;
    return s->data;
}

void luaL_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
    State *S = capi_S(L);
    luaL_checkstack(L, nup, "too many upvalues");
    for (; l->name != NULL; l++) {
        if (l->func == NULL) {
            lua_pushboolean(L, 0); /* a placeholder */
        } else {
            for (int i = 0; i < nup; i++) lua_pushvalue(L, -nup);
            lua_pushcclosure(L, l->func, nup);
            /* the registered name: "bad argument" messages of calls made from C name it,
             * as the runtime's own library functions are named (the string is the
             * module's, loaded for good) */
            S->top[-1].u.cf->name = l->name;
        }
        lua_setfield(L, -(nup + 2), l->name);
    }
    lua_settop(L, -(nup + 1));
}

int luaL_getsubtable(lua_State *L, int idx, const char *fname) {
    if (lua_getfield(L, idx, fname) == LUA_TTABLE) return 1;
    lua_settop(L, -2);
    idx = lua_absindex(L, idx);
    lua_createtable(L, 0, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, idx, fname);
    return 0;
}

void luaL_requiref(lua_State *L, const char *modname, lua_CFunction openf, int glb) {
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, modname);
    if (!lua_toboolean(L, -1)) {
        lua_settop(L, -2);
        lua_pushcclosure(L, openf, 0);
        lua_pushstring(L, modname);
        lua_callk(L, 1, 1, 0, NULL);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, modname);
    }
    lua_rotate(L, -2, -1), lua_settop(L, -2); /* remove the LOADED table */
    if (glb) {
        lua_pushvalue(L, -1);
        lua_setglobal(L, modname);
    }
}

lua_State *luaL_newstate(void) {
    return NULL; /* embedding is not offered (vm/capi/README.md) */
}

/* }==================================================================== */
