/* capitest.c: a C module exercising the Lua 5.4 C API, built against Debian's lua5.4 headers
 * and loaded unchanged by both lua5.4 and tandem (tests/capi/run_capi_tests.py compares
 * their outputs). Each function exercises one group of the API and returns what it saw, so
 * the Lua side prints it; nothing printed may depend on addresses or hash order. */
#include <lua5.4/lauxlib.h>
#include <lua5.4/lua.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* stack: absindex, gettop, settop, pushvalue, rotate, copy, checkstack, insert/remove/replace
 * (macros over rotate/copy), xmove within one state */
static int t_stack(lua_State *L) {
    lua_settop(L, 0);
    for (int i = 1; i <= 5; i++) lua_pushinteger(L, i * 10);
    lua_rotate(L, 2, 1);     /* 10 50 20 30 40 */
    lua_insert(L, 1);        /* 40 10 50 20 30 */
    lua_remove(L, 2);        /* 40 50 20 30 */
    lua_pushinteger(L, 99);
    lua_replace(L, 1);       /* 99 50 20 30 */
    lua_copy(L, -1, 2);      /* 99 30 20 30 */
    lua_pushvalue(L, -3);    /* 99 30 20 30 30 */
    int abs = lua_absindex(L, -2);
    luaL_checkstack(L, 100, "testing");
    int ok = lua_checkstack(L, 50);
    int huge = lua_checkstack(L, 2000000);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= lua_gettop(L) - 1; i++) {
        lua_pushfstring(L, "%d ", (int)lua_tointeger(L, i));
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_pushinteger(L, abs);
    lua_pushboolean(L, ok);
    lua_pushboolean(L, huge);
    return 4;
}

/* types and conversions: type, typename, is*, to*, rawlen, stringtonumber, tolstring's
 * in-place conversion */
static int t_types(lua_State *L) {
    int n = lua_gettop(L);
    luaL_Buffer b;
    lua_pushnil(L); /* slot to hold the growing result below the buffer */
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n + 1; i++) {
        int t = lua_type(L, i);
        int isnum = 0, isint = 0;
        lua_Number d = lua_tonumberx(L, i, &isnum);
        lua_Integer k = lua_tointegerx(L, i, &isint);
        char line[200];
        snprintf(line, sizeof line, "%s num=%d(%.3g) int=%d(%lld) str=%d int?=%d cf=%d ud=%d bool=%d len=%llu\n",
                 lua_typename(L, t), isnum, isnum ? d : 0.0, isint, (long long)k, lua_isstring(L, i),
                 lua_isinteger(L, i), lua_iscfunction(L, i), lua_isuserdata(L, i), lua_toboolean(L, i),
                 (unsigned long long)lua_rawlen(L, i));
        luaL_addstring(&b, line);
    }
    luaL_pushresult(&b);
    size_t r1 = lua_stringtonumber(L, "0x10");
    size_t r2 = lua_stringtonumber(L, "1e2");
    size_t r3 = lua_stringtonumber(L, "nope");
    lua_pushinteger(L, (lua_Integer)(r1 + r2 * 100 + r3 * 10000));
    lua_pushinteger(L, 42);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len); /* converts the slot */
    lua_pushfstring(L, "%s/%d/%s", s, (int)len, luaL_typename(L, -1));
    return 5;
}

/* pushes: every push function, pushfstring's formats */
static int t_push(lua_State *L) {
    lua_pushnil(L);
    lua_pushnumber(L, 2.5);
    lua_pushinteger(L, -7);
    lua_pushlstring(L, "a\0b", 3);
    lua_pushstring(L, "str");
    lua_pushliteral(L, "lit");
    lua_pushfstring(L, "[%s|%d|%I|%f|%c|%U|%%]", "x", -3, (lua_Integer)1 << 40, 0.5, 'Z', 0x20AC);
    lua_pushboolean(L, 7);
    lua_pushboolean(L, 0);
    const char *r = lua_pushstring(L, NULL);
    lua_pushboolean(L, r == NULL);
    return 11;
}

/* tables: createtable, get/set (raw and with metamethods), geti/seti, rawgetp/rawsetp,
 * next, len, getglobal/setglobal, concat, arith, compare */
static int t_tables(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE); /* a table with __index/__newindex/__len */
    lua_createtable(L, 4, 4);
    int t = lua_gettop(L);
    for (int i = 1; i <= 4; i++) {
        lua_pushinteger(L, i * i);
        lua_rawseti(L, t, i);
    }
    lua_pushstring(L, "v");
    lua_setfield(L, t, "k");
    lua_pushstring(L, "key");
    lua_pushstring(L, "val");
    lua_settable(L, t);
    lua_pushboolean(L, 1);
    lua_rawsetp(L, t, (void *)&t_tables);
    lua_pushinteger(L, 5);
    lua_pushinteger(L, 25);
    lua_rawset(L, t);
    lua_pushinteger(L, 36);
    lua_seti(L, t, 6);
    /* sum the integer keys with next */
    lua_Integer sum = 0, count = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_isinteger(L, -2)) sum += lua_tointeger(L, -1);
        count++;
        lua_pop(L, 1);
    }
    int rp = lua_rawgetp(L, t, (void *)&t_tables);
    lua_pop(L, 1);
    lua_getfield(L, t, "k");
    lua_pushstring(L, "key");
    lua_gettable(L, t);
    lua_geti(L, t, 3);
    lua_rawgeti(L, t, 6);
    lua_concat(L, 4); /* "v" .. "val" .. 9 .. 36 */
    /* metamethods through the API on argument 1 */
    int ty = lua_getfield(L, 1, "missing");                 /* __index */
    lua_pushstring(L, "set");
    lua_setfield(L, 1, "newkey");                           /* __newindex */
    lua_len(L, 1);                                          /* __len */
    lua_Integer len1 = luaL_len(L, 1);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, t));
    lua_pushinteger(L, sum);
    lua_pushinteger(L, count);
    lua_pushinteger(L, rp * 10 + ty);
    lua_pushinteger(L, len1);
    /* arithmetic and comparison */
    lua_pushinteger(L, 7);
    lua_pushinteger(L, 2);
    lua_arith(L, LUA_OPIDIV);
    lua_pushnumber(L, 7);
    lua_pushinteger(L, 2);
    lua_arith(L, LUA_OPPOW);
    lua_pushinteger(L, 5);
    lua_arith(L, LUA_OPUNM);
    lua_pushinteger(L, 1);
    lua_pushnumber(L, 1.0);
    int eq = lua_compare(L, -1, -2, LUA_OPEQ), lt = lua_compare(L, -1, -2, LUA_OPLT),
        le = lua_compare(L, -1, -2, LUA_OPLE), req = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    lua_pushinteger(L, eq * 1000 + lt * 100 + le * 10 + req);
    lua_pushinteger(L, 123);
    lua_setglobal(L, "capitest_global");
    lua_getglobal(L, "capitest_global");
    return lua_gettop(L) - t;
}

/* userdata: newuserdatauv with user values, metatables through luaL_newmetatable, __gc,
 * __index methods, checkudata/testudata, touserdata, light userdata */
typedef struct Counter {
    lua_Integer n;
    char tag[16];
} Counter;

static int counter_gc_count;

static int counter_gc(lua_State *L) {
    Counter *c = luaL_checkudata(L, 1, "capitest.Counter");
    (void)c;
    counter_gc_count++;
    return 0;
}

static int counter_inc(lua_State *L) {
    Counter *c = luaL_checkudata(L, 1, "capitest.Counter");
    c->n += luaL_optinteger(L, 2, 1);
    lua_settop(L, 1);
    return 1;
}

static int counter_get(lua_State *L) {
    Counter *c = luaL_checkudata(L, 1, "capitest.Counter");
    lua_pushinteger(L, c->n);
    lua_pushstring(L, c->tag);
    return 2;
}

static int counter_tostring(lua_State *L) {
    Counter *c = luaL_checkudata(L, 1, "capitest.Counter");
    lua_pushfstring(L, "Counter(%I)", c->n);
    return 1;
}

static int counter_uv(lua_State *L) {
    luaL_checkudata(L, 1, "capitest.Counter");
    int n = (int)luaL_checkinteger(L, 2);
    if (lua_gettop(L) >= 3) {
        lua_settop(L, 3);
        lua_pushboolean(L, lua_setiuservalue(L, 1, n));
        return 1;
    }
    int t = lua_getiuservalue(L, 1, n);
    lua_pushstring(L, lua_typename(L, t));
    return 2;
}

static int t_newcounter(lua_State *L) {
    const char *tag = luaL_optstring(L, 1, "anon");
    Counter *c = lua_newuserdatauv(L, sizeof *c, 2);
    c->n = 0;
    snprintf(c->tag, sizeof c->tag, "%s", tag);
    luaL_setmetatable(L, "capitest.Counter");
    return 1;
}

static int t_gccount(lua_State *L) {
    lua_pushinteger(L, counter_gc_count);
    return 1;
}

static int t_udata(lua_State *L) {
    void *p = luaL_testudata(L, 1, "capitest.Counter");
    lua_pushboolean(L, p != NULL);
    lua_pushboolean(L, lua_touserdata(L, 1) == p);
    static int anchor;
    lua_pushlightuserdata(L, &anchor);
    lua_pushboolean(L, lua_touserdata(L, -1) == &anchor);
    lua_pushboolean(L, lua_topointer(L, -2) == &anchor);
    lua_remove(L, -3);
    return 4;
}

/* closures: upvalues through lua_upvalueindex, getupvalue/setupvalue */
static int counter_closure(lua_State *L) {
    lua_Integer n = lua_tointeger(L, lua_upvalueindex(1)) + 1;
    lua_pushinteger(L, n);
    lua_copy(L, -1, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushboolean(L, lua_isnone(L, lua_upvalueindex(3)));
    return 3;
}

static int t_closure(lua_State *L) {
    lua_pushinteger(L, luaL_optinteger(L, 1, 0));
    lua_pushstring(L, "second");
    lua_pushcclosure(L, counter_closure, 2);
    const char *name = lua_getupvalue(L, -1, 2);
    lua_pushfstring(L, "name=[%s] value=%s", name, lua_tostring(L, -1));
    lua_remove(L, -2);
    return 2;
}

/* calls: call, pcall with and without a message handler, error objects, luaL_error
 * positions, callmeta, tolstring */
static int msgh(lua_State *L) {
    lua_pushfstring(L, "handled<%s>", luaL_tolstring(L, 1, NULL));
    return 1;
}

static int t_calls(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    int top = lua_gettop(L);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 20);
    lua_pushinteger(L, 22);
    lua_call(L, 2, 1); /* f(20, 22) */
    lua_pushvalue(L, 1);
    lua_pushstring(L, "boom");
    int st1 = lua_pcall(L, 1, 0, 0); /* f raises when its first argument is a string */
    lua_pushcfunction(L, msgh);
    lua_pushvalue(L, 1);
    lua_pushstring(L, "bang");
    int st2 = lua_pcall(L, 1, 1, -3);
    lua_remove(L, -2); /* the message handler */
    lua_pushinteger(L, st1 * 10 + st2);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 1);
    lua_pushinteger(L, 2);
    lua_call(L, 2, LUA_MULTRET);
    return lua_gettop(L) - top;
}

static int t_error(lua_State *L) {
    const char *how = luaL_checkstring(L, 1);
    if (strcmp(how, "luaL_error") == 0) return luaL_error(L, "custom %s %d", "message", 42);
    if (strcmp(how, "table") == 0) {
        lua_createtable(L, 0, 1);
        lua_pushstring(L, "payload");
        lua_setfield(L, -2, "code");
        return lua_error(L);
    }
    if (strcmp(how, "argerror") == 0) return luaL_argerror(L, 2, "my message");
    if (strcmp(how, "typeerror") == 0) return luaL_typeerror(L, 2, "widget");
    if (strcmp(how, "checkint") == 0) {
        lua_pushinteger(L, luaL_checkinteger(L, 2));
        return 1;
    }
    if (strcmp(how, "checknum") == 0) {
        lua_pushnumber(L, luaL_checknumber(L, 2));
        return 1;
    }
    if (strcmp(how, "checkstr") == 0) {
        lua_pushstring(L, luaL_checklstring(L, 2, NULL));
        return 1;
    }
    if (strcmp(how, "checkudata") == 0) {
        lua_pushboolean(L, luaL_checkudata(L, 2, "capitest.Counter") != NULL);
        return 1;
    }
    if (strcmp(how, "option") == 0) {
        static const char *const opts[] = {"one", "two", NULL};
        lua_pushinteger(L, luaL_checkoption(L, 2, "two", opts));
        return 1;
    }
    if (strcmp(how, "any") == 0) {
        luaL_checkany(L, 2);
        return 0;
    }
    if (strcmp(how, "where") == 0) {
        luaL_where(L, 1);
        return 1;
    }
    if (strcmp(how, "traceback") == 0) {
        luaL_traceback(L, L, "tb", 0);
        return 1;
    }
    lua_pushstring(L, "no error");
    return 1;
}

/* registry and references; luaL_getsubtable, luaL_requiref; luaL_getmetafield */
static int opener(lua_State *L) {
    lua_createtable(L, 0, 1);
    lua_pushstring(L, lua_tostring(L, 1));
    lua_setfield(L, -2, "openedas");
    return 1;
}

static int t_registry(lua_State *L) {
    lua_pushstring(L, "refd");
    int r1 = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushnil(L);
    int rnil = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r1);
    luaL_unref(L, LUA_REGISTRYINDEX, r1);
    lua_pushstring(L, "again");
    int r2 = luaL_ref(L, LUA_REGISTRYINDEX); /* reuses r1 */
    lua_pushboolean(L, r1 == r2 && rnil == LUA_REFNIL);
    luaL_unref(L, LUA_REGISTRYINDEX, r2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_getfield(L, -1, "capitest_global");
    lua_remove(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    lua_pushboolean(L, lua_tothread(L, -1) != NULL);
    lua_remove(L, -2);
    int had = luaL_getsubtable(L, LUA_REGISTRYINDEX, "capitest.sub");
    int had2 = luaL_getsubtable(L, LUA_REGISTRYINDEX, "capitest.sub");
    lua_pop(L, 2);
    lua_pushinteger(L, had * 10 + had2);
    luaL_requiref(L, "capitest.req", opener, 1);
    lua_getfield(L, -1, "openedas");
    lua_remove(L, -2);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "capitest.req");
    lua_pushboolean(L, lua_istable(L, -1));
    lua_remove(L, -2);
    lua_remove(L, -2);
    int mf = luaL_getmetafield(L, 1, "__name");
    if (mf == LUA_TNIL) lua_pushstring(L, "(no __name)");
    return 7;
}

/* buffers growing past LUAL_BUFFERSIZE, addvalue under the buffer, gsub, buffinitsize,
 * pushresultsize, addchar/addsize macros */
static int t_buffer(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 0; i < n; i++) {
        luaL_addchar(&b, (char)('a' + i % 26));
        if (i % 100 == 0) {
            lua_pushinteger(L, i);
            luaL_addvalue(&b);
        }
    }
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    lua_pushinteger(L, (lua_Integer)len);
    lua_pushlstring(L, s + (len > 30 ? len - 30 : 0), len > 30 ? 30 : len);
    lua_remove(L, -3);
    luaL_gsub(L, "a-b-c-d", "-", "+=");
    char *p = luaL_buffinitsize(L, &b, 5000);
    memset(p, 'x', 5000);
    luaL_pushresultsize(&b, 5000);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
    lua_remove(L, -2);
    return 4;
}

/* loading: loadstring, loadbufferx with modes, dostring, a syntax error's message */
static int t_load(lua_State *L) {
    int st = luaL_loadstring(L, "return 1 + ...");
    lua_pushinteger(L, 41);
    lua_call(L, 1, 1);
    int st2 = luaL_loadbufferx(L, "return 'x'", 10, "=chunk", "b");
    const char *m2 = lua_tostring(L, -1);
    lua_pushstring(L, m2);
    lua_remove(L, -2);
    int st3 = luaL_loadbufferx(L, "x = = 1", 7, "=bad", NULL);
    int st4 = luaL_dostring(L, "return capitest_global * 2");
    lua_pushinteger(L, st * 1000 + st2 * 100 + st3 * 10 + st4);
    return 5;
}

/* coroutines: newthread, resume, yield from C (with and without continuation), status,
 * isyieldable, xmove, pushthread */
static int yielder(lua_State *L) {
    lua_pushinteger(L, lua_tointeger(L, 1) * 2);
    return lua_yield(L, 1);
}

static int cont(lua_State *L, int status, lua_KContext ctx) {
    lua_pushfstring(L, "cont(%d,%d,%d)", status == LUA_YIELD, (int)ctx, lua_gettop(L));
    return 1;
}

static int yielder_k(lua_State *L) {
    lua_pushstring(L, "yk");
    return lua_yieldk(L, 1, 7, cont);
}

/* continuations: after a yield inside lua_callk/lua_pcallk the function does not go on
 * after the call (capitest_went_on stays nil); its continuation ends it, with status
 * LUA_YIELD or pcallk's error status, on the stack the call left */
static int k_after(lua_State *L, int status, lua_KContext ctx) {
    const char *st = status == LUA_OK ? "ok" : status == LUA_YIELD ? "yield" : "error";
    lua_pushfstring(L, "k(%s,%d,top=%d)", st, (int)ctx, lua_gettop(L));
    lua_insert(L, 1);
    return lua_gettop(L);
}

static int t_callk(lua_State *L) {
    lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 11, k_after);
    lua_pushboolean(L, 1);
    lua_setglobal(L, "capitest_went_on");
    return k_after(L, LUA_OK, 11);
}

static int t_pcallk(lua_State *L) {
    int st = lua_pcallk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, 12, k_after);
    lua_pushboolean(L, 1);
    lua_setglobal(L, "capitest_went_on");
    return k_after(L, st, 12);
}

/* lua_dump: a function dumped through a writer and loaded back gives the same results
 * (the bytes are each runtime's own format) */
static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud) {
    (void)L;
    luaL_addlstring((luaL_Buffer *)ud, p, sz);
    return 0;
}

static int t_dump(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b); /* the buffer's box may sit above the function */
    lua_pushvalue(L, 1);
    int st = lua_dump(L, dump_writer, &b, 0);
    lua_pop(L, 1);
    luaL_pushresult(&b);
    size_t len;
    const char *code = lua_tolstring(L, -1, &len);
    int bin = len > 0 && code[0] == LUA_SIGNATURE[0];
    int lst = luaL_loadbufferx(L, code, len, "=dumped", "b");
    lua_pushinteger(L, 20);
    lua_call(L, 1, 1);
    lua_pushcfunction(L, t_dump);
    int cst = lua_dump(L, dump_writer, &b, 0); /* a C function cannot be dumped */
    lua_pop(L, 1);
    lua_pushfstring(L, "dump %d binary %d load %d C %d", st, bin, lst, cst);
    lua_insert(L, -2);
    return 2;
}

/* C hooks: line and call events recorded with lua_getinfo of the hooked frame (level 0 of
 * lua_getstack inside the hook, as the lua_Debug the hook gets) */
static void rec_hook(lua_State *L, lua_Debug *ar) {
    lua_Debug at;
    int ok = lua_getstack(L, 0, &at) && lua_getinfo(L, "Sl", &at) && lua_getinfo(L, "Sl", ar);
    lua_getfield(L, LUA_REGISTRYINDEX, "capitest_hooklog");
    lua_Integer n = luaL_len(L, -1);
    lua_pushfstring(L, "%s:%d %s %d=%d", ar->event == LUA_HOOKLINE ? "line" : ar->event == LUA_HOOKCALL ? "call" : "ret",
                    ar->currentline, ar->short_src, at.currentline, ok);
    lua_rawseti(L, -2, n + 1);
    lua_pop(L, 1);
}

static int t_hook(lua_State *L) {
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "capitest_hooklog");
    lua_sethook(L, rec_hook, LUA_MASKLINE | LUA_MASKCALL, 0);
    int same = lua_gethook(L) == rec_hook && lua_gethookmask(L) == (LUA_MASKLINE | LUA_MASKCALL);
    lua_pushvalue(L, 1);
    lua_call(L, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    lua_pushboolean(L, same && lua_gethook(L) == NULL && lua_gethookmask(L) == 0);
    lua_getfield(L, LUA_REGISTRYINDEX, "capitest_hooklog");
    return 2;
}

static int t_isyieldable(lua_State *L) {
    lua_pushboolean(L, lua_isyieldable(L));
    return 1;
}

static int t_coro(lua_State *L) {
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1); /* a Lua function that yields twice */
    lua_xmove(L, co, 1);
    lua_pushinteger(co, 5);
    int nres = 0;
    int st1 = lua_resume(co, L, 1, &nres);
    lua_Integer y1 = lua_tointeger(co, -1);
    lua_pop(co, nres);
    int s1 = lua_status(co);
    lua_pushinteger(co, 6);
    int st2 = lua_resume(co, L, 1, &nres);
    lua_Integer y2 = lua_tointeger(co, -1);
    lua_pop(co, nres);
    int st3 = lua_resume(co, L, 0, &nres);
    lua_pushfstring(L, "%d %d %d | %I %I | %d %d", st1, st2, st3, y1, y2, s1, lua_status(co));
    int ismain = lua_pushthread(L);
    lua_pop(L, 1);
    lua_pushboolean(L, ismain);
    return 2;
}

/* garbage collector controls and allocator access */
static int t_gc(lua_State *L) {
    lua_gc(L, LUA_GCCOLLECT);
    int running = lua_gc(L, LUA_GCISRUNNING);
    int kb = lua_gc(L, LUA_GCCOUNT);
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    void *blk = f(ud, NULL, 0, 64);
    memset(blk, 1, 64);
    blk = f(ud, blk, 64, 128);
    f(ud, blk, 128, 0);
    lua_pushboolean(L, running);
    lua_pushboolean(L, kb > 0);
    lua_pushnumber(L, lua_version(L));
    return 3;
}

/* debug interface: getstack, getinfo ('S', 'l', 'n', 'u', 'f', '>'), getlocal */
static int t_debug(lua_State *L) {
    lua_Debug ar;
    int ok = lua_getstack(L, 1, &ar);
    lua_getinfo(L, "Slnu", &ar);
    lua_pushfstring(L, "%d %s %s:%d what=%s nups=%d params=%d", ok, ar.short_src, ar.namewhat, ar.currentline,
                    ar.what, (int)ar.nups, (int)ar.nparams);
    const char *local = lua_getlocal(L, &ar, 1);
    lua_pushstring(L, local ? local : "(none)");
    lua_remove(L, -2);
    lua_pushvalue(L, 1);
    lua_getinfo(L, ">S", &ar);
    lua_pushfstring(L, "%s %d-%d", ar.what, ar.linedefined, ar.lastlinedefined);
    lua_pushboolean(L, lua_getstack(L, 50, &ar));
    return 4;
}

/* to-be-closed slots and settop closing them */
static int t_toclose(lua_State *L) {
    luaL_checkany(L, 1); /* a value with __close */
    lua_settop(L, 1);
    lua_toclose(L, 1);
    lua_pushstring(L, "before");
    lua_closeslot(L, 1);
    return 1;
}

/* the rest of the API: upvalue identity and joining, setupvalue, parameter names, setlocal,
 * tocfunction, tothread, resetthread, loadfilex, fileresult, execresult, callmeta,
 * warning, atpanic, hook queries, setcstacklimit */
static int t_misc(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION); /* function(a, b) with upvalues u1, u2 */
    luaL_checktype(L, 2, LUA_TFUNCTION); /* another closure over the same u1 */
    int top = lua_gettop(L);
    lua_pushboolean(L, lua_upvalueid(L, 1, 1) == lua_upvalueid(L, 2, 1));
    lua_pushboolean(L, lua_upvalueid(L, 1, 2) == lua_upvalueid(L, 2, 1));
    lua_pushstring(L, "set by C");
    const char *uname = lua_setupvalue(L, 1, 2);
    lua_pushstring(L, uname ? uname : "(null)");
    lua_upvaluejoin(L, 1, 2, 2, 1); /* f's 2nd upvalue is now g's 1st */
    lua_pushboolean(L, lua_upvalueid(L, 1, 2) == lua_upvalueid(L, 2, 1));
    lua_pushvalue(L, 1);
    const char *p1 = lua_getlocal(L, NULL, 1);
    lua_pushvalue(L, 1);
    const char *p3 = lua_getlocal(L, NULL, 3);
    lua_pushfstring(L, "params %s %s", p1, p3 ? p3 : "(none)");
    lua_pushboolean(L, lua_tocfunction(L, lua_upvalueindex(0) - 1) == NULL);
    lua_getglobal(L, "print");
    lua_pushboolean(L, lua_tocfunction(L, -1) != NULL && lua_tocfunction(L, 1) == NULL);
    lua_remove(L, -2);
    lua_State *co = lua_newthread(L);
    lua_pushboolean(L, lua_tothread(L, -1) == co && lua_tothread(L, 1) == NULL);
    lua_pushboolean(L, lua_resetthread(co) == LUA_OK);
    lua_remove(L, -3);
    int st = luaL_loadfilex(L, "no/such/file.lua", NULL);
    lua_pushinteger(L, st);
    errno = ENOENT;
    int n = luaL_fileresult(L, 0, "thefile");
    lua_pop(L, n - 1); /* keep the message */
    luaL_fileresult(L, 1, NULL);
    n = luaL_execresult(L, 3 << 8); /* an exit status of 3 */
    lua_pushfstring(L, "%s %d", lua_tostring(L, -2), (int)lua_tointeger(L, -1));
    lua_remove(L, -2), lua_remove(L, -2), lua_remove(L, -2);
    lua_pushboolean(L, n == 3);
    lua_warning(L, "a warning nobody sees (warnings are off)", 0);
    lua_CFunction old = lua_atpanic(L, t_misc);
    lua_atpanic(L, old);
    lua_pushinteger(L, lua_gethookmask(L) * 100 + lua_gethookcount(L));
    lua_pushboolean(L, lua_gethook(L) == NULL);
    lua_createtable(L, 0, 0);
    lua_pushboolean(L, luaL_callmeta(L, -1, "__tostring"));
    lua_remove(L, -2);
    return lua_gettop(L) - top;
}

/* the benchmark's trivial functions (bench/capi/) */
static int t_noop(lua_State *L) {
    (void)L;
    return 0;
}

static int t_add(lua_State *L) {
    lua_pushinteger(L, luaL_checkinteger(L, 1) + luaL_checkinteger(L, 2));
    return 1;
}

static const luaL_Reg funcs[] = {
    {"stack", t_stack},     {"types", t_types},       {"push", t_push},       {"tables", t_tables},
    {"newcounter", t_newcounter}, {"gccount", t_gccount}, {"udata", t_udata}, {"closure", t_closure},
    {"calls", t_calls},     {"error", t_error},       {"registry", t_registry}, {"buffer", t_buffer},
    {"load", t_load},       {"coro", t_coro},         {"yielder", yielder},   {"yielder_k", yielder_k}, {"callk", t_callk}, {"pcallk", t_pcallk}, {"dump", t_dump}, {"hook", t_hook},
    {"isyieldable", t_isyieldable}, {"gc", t_gc},     {"debug", t_debug},     {"toclose", t_toclose},
    {"misc", t_misc},       {"noop", t_noop},       {"add", t_add},           {"placeholder", NULL},  {NULL, NULL}};

static const luaL_Reg counter_methods[] = {
    {"inc", counter_inc}, {"get", counter_get}, {"uv", counter_uv}, {NULL, NULL}};

int luaopen_capitest(lua_State *L);
int luaopen_capitest(lua_State *L) {
    luaL_checkversion(L);
    if (luaL_newmetatable(L, "capitest.Counter")) {
        luaL_newlib(L, counter_methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, counter_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, counter_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    int again = luaL_newmetatable(L, "capitest.Counter");
    lua_pop(L, 2);
    lua_createtable(L, 0, 32);
    lua_pushstring(L, "shared");
    luaL_setfuncs(L, funcs, 1);
    lua_pushboolean(L, again);
    lua_setfield(L, -2, "metatable_again");
    lua_pushstring(L, lua_tostring(L, 1));
    lua_setfield(L, -2, "modname");
    return 1;
}
