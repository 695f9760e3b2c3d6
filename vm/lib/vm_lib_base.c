/* vm_lib_base.c: the base library (print, type, pairs, load, ...) and the package library
 * (require, package.path, package.loaded, package.searchers). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_bytecode.h"
#include "vm_capi.h"
#include "vm_gc.h"
#include "vm_lib.h"
#include "vm_prof.h"
#include "vm_warn.h"

/* Separator of templates in package.path, the mark replaced by the module name, and the
 * directory separator: the first three lines of package.config, as in lua5.4. */
#define PATH_SEP ';'
#define PATH_MARK '?'
#define DIR_SEP '/'
#define PACKAGE_CONFIG "/\n;\n?\n!\n-\n"

/* package.path and package.cpath: lua5.4's defaults on Debian (x86-64), so that modules
 * installed for lua5.4 (/usr/share/lua/5.4) are found and "module not found" messages
 * match it line for line. C libraries load through vm/capi/ (searcher_c). */
#define DEFAULT_PATH                                                                      \
    "/usr/local/share/lua/5.4/?.lua;/usr/local/share/lua/5.4/?/init.lua;"                \
    "/usr/local/lib/lua/5.4/?.lua;/usr/local/lib/lua/5.4/?/init.lua;"                    \
    "/usr/share/lua/5.4/?.lua;/usr/share/lua/5.4/?/init.lua;./?.lua;./?/init.lua"
#define DEFAULT_CPATH                                                                      \
    "/usr/local/lib/lua/5.4/?.so;/usr/lib/x86_64-linux-gnu/lua/5.4/?.so;"                 \
    "/usr/lib/lua/5.4/?.so;/usr/local/lib/lua/5.4/loadall.so;./?.so"

/* The third result of a failed package.loadlib: the library could not be opened, or the
 * function was not found in it (lua5.4's LIB_FAIL and "init"). */
#define LIB_FAIL "open"
#define INIT_FAIL "init"
/* vm_capi_loadfunc's "function not found" (lua5.4's ERRFUNC). */
#define ERRFUNC 2
/* In a module name, what comes before this mark is left out of the luaopen_ name (LUA_IGMARK). */
#define IGMARK '-'

/* print builds each line on the C stack when it fits, so that the common case allocates
 * nothing; longer lines go through one GC leaf block. */
#define PRINT_STACKBUF 512

/* {====================================================================
 * Helpers shared by the functions of this file
 * ===================================================================== */

/* Copy of the value at [idx]: safe to keep across calls that may move the stack. */
static Value arg_value(State *S, int idx) { return *vm_at(S, idx); }

static bool is_none(State *S, int idx) { return idx > vm_gettop(S); }

static bool is_noneornil(State *S, int idx) {
    return idx > vm_gettop(S) || vm_isnil(vm_at(S, idx));
}

/* Push [v] and return 1: the tail of most one-result functions. */
static int push1(State *S, Value v) {
    vm_push(S, v);
    return 1;
}

/* Push nil and the message [msg] (a failed load, a file error). */
static int push_fail_msg(State *S, Value msg) {
    vm_pushnil(S);
    vm_push(S, msg);
    return 2;
}

/* Set t[name] = closure over [f] with no upvalues (name is static: also the closure name). */
static CClosure *set_cfunc(State *S, Table *t, const char *key, const char *qualname,
                           CFunction f) {
    CClosure *cl = vm_newcfunction(S, f, qualname, 0);
    vm_setfield(S, t, key, vm_cfunc(cl));
    return cl;
}

/* t[k] through __index (package fields may be proxied). */
static Value field_of(State *S, Table *t, const char *k) {
    Value tv = vm_table(t);
    return vm_getfield(S, &tv, k);
}

/* A growable byte buffer in one GC leaf block (pointer-free: it only ever holds bytes). */
typedef struct ByteBuf {
    char *p;
    size_t len, cap;
} ByteBuf;

static void buf_init(State *S, ByteBuf *b, size_t cap) {
    b->cap = cap < 64 ? 64 : cap;
    b->p = vm_alloc_leaf(S, b->cap);
    b->len = 0;
}

static void buf_add(State *S, ByteBuf *b, const char *s, size_t n) {
    if (n > b->cap - b->len) {
        size_t ncap = b->cap * 2;
        while (ncap - b->len < n) ncap *= 2;
        b->p = vm_realloc(S, b->p, ncap);
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_addc(State *S, ByteBuf *b, const char *s) { buf_add(S, b, s, strlen(s)); }

/* Read the whole of [f] into a new GC leaf block (NUL-terminated); *len receives its size.
 * Returns NULL on a read error (errno set). */
static char *read_stream(State *S, FILE *f, size_t *len) {
    ByteBuf b;
    buf_init(S, &b, 4096);
    for (;;) {
        if (b.len == b.cap) {
            b.p = vm_realloc(S, b.p, b.cap * 2);
            b.cap *= 2;
        }
        size_t got = fread(b.p + b.len, 1, b.cap - b.len, f);
        b.len += got;
        if (got == 0) break;
    }
    if (ferror(f)) return NULL;
    buf_add(S, &b, "", 1);
    *len = b.len - 1;
    return b.p;
}

/* Loads the file [filename] (stdin when NULL) as luaL_loadfilex does: skips a UTF-8 BOM and
 * a first line starting with '#' (keeping its newline before text, so line numbers stay
 * right).
 * Pushes the closure and returns VM_OK, or pushes a message and returns an error status:
 * "cannot open <name>: <reason>" (VM_ERRRUN stands for Lua's LUA_ERRFILE here) or the
 * syntax error from vm_load. [mode] is "b", "t" or "bt"; [env] as vm_load. */
static int load_file(State *S, const char *filename, const char *mode, const Value *env) {
    FILE *f = filename ? fopen(filename, "rb") : stdin;
    const char *shown = filename ? filename : "stdin";
    if (f == NULL) {
        vm_pushfstring(S, "cannot open %s: %s", shown, strerror(errno));
        return VM_ERRRUN;
    }
    size_t len = 0;
    char *text = read_stream(S, f, &len);
    int err = errno;
    if (filename) fclose(f);
    else clearerr(stdin);
    if (text == NULL) {
        vm_pushfstring(S, "cannot read %s: %s", shown, strerror(err));
        return VM_ERRRUN;
    }
    char *p = text;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
        p += 3;
        len -= 3;
    }
    if (len > 0 && p[0] == '#') {
        size_t i = 0;
        while (i < len && p[i] != '\n') i++;
        p += i;
        len -= i;
        /* a binary chunk after that line starts after its newline (kept for text only) */
        if (len > 1 && p[1] == VM_BC_SIGNATURE[0]) {
            p++;
            len--;
        }
    }
    bool binary = len > 0 && p[0] == VM_BC_SIGNATURE[0];
    if (binary ? strchr(mode, 'b') == NULL : strchr(mode, 't') == NULL) {
        vm_pushfstring(S, "attempt to load a %s chunk (mode is '%s')",
                       binary ? "binary" : "text", mode);
        return VM_ERRSYNTAX;
    }
    String *chunkname = filename ? vm_pushfstring(S, "@%s", filename) : vm_pushcstr(S, "=stdin");
    int status = vm_load(S, p, len, chunkname->data, env, binary);
    /* drop the chunk name under the result */
    Value res = *vm_at(S, vm_gettop(S));
    vm_pop(S, 2);
    vm_push(S, res);
    return status;
}

/* }==================================================================== */

/* {====================================================================
 * Output and conversions: print, type, tostring, tonumber
 * ===================================================================== */

/* print(...): the whole line goes out with one fwrite so that lines printed by several
 * threads never interleave; then stdout is flushed, as lua5.4 does, so that output
 * interleaves with that of child processes in program order. */
static int base_print(State *S) {
    int n = vm_gettop(S);
    size_t total = 1; /* the newline */
    for (int i = 1; i <= n; i++) {
        String *s = vm_tostring(S, vm_at(S, i));
        *vm_at(S, i) = vm_str(s); /* keep it: the slot is ours and keeps it alive */
        total += s->len + (i > 1);
    }
    char stackbuf[PRINT_STACKBUF];
    char *buf = total <= sizeof stackbuf ? stackbuf : vm_alloc_leaf(S, total);
    size_t pos = 0;
    for (int i = 1; i <= n; i++) {
        String *s = vm_at(S, i)->u.s;
        if (i > 1) buf[pos++] = '\t';
        memcpy(buf + pos, s->data, s->len);
        pos += s->len;
    }
    buf[pos++] = '\n';
    fwrite(buf, 1, pos, stdout);
    fflush(stdout);
    return 0;
}

static int base_type(State *S) {
    vm_check_any(S, 1);
    vm_pushcstr(S, vm_typename(vm_at(S, 1)));
    return 1;
}

static int base_tostring(State *S) {
    vm_check_any(S, 1);
    return push1(S, vm_str(vm_tostring(S, vm_at(S, 1))));
}

static bool is_space(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int digit_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* Integer numeral of [s, s+len) in [base], with surrounding spaces and an optional sign;
 * wraps around on overflow as lua5.4 does. False if it is not such a numeral. */
static bool str2int_base(const char *s, size_t len, int base, vm_Integer *out) {
    const char *e = s + len;
    while (s < e && is_space((unsigned char)*s)) s++;
    bool neg = false;
    if (s < e && *s == '-') {
        neg = true;
        s++;
    } else if (s < e && *s == '+') {
        s++;
    }
    if (s == e || digit_value((unsigned char)*s) >= base) return false;
    vm_Unsigned n = 0;
    while (s < e && digit_value((unsigned char)*s) < base) {
        n = n * (vm_Unsigned)base + (vm_Unsigned)digit_value((unsigned char)*s);
        s++;
    }
    while (s < e && is_space((unsigned char)*s)) s++;
    if (s != e) return false;
    *out = (vm_Integer)(neg ? 0u - n : n);
    return true;
}

static int base_tonumber(State *S) {
    if (is_noneornil(S, 2)) {
        Value *v = vm_at(S, 1);
        if (vm_isnumber(v)) return push1(S, *v);
        if (vm_isstr(v)) {
            Value r;
            if (vm_str2number(v->u.s->data, v->u.s->len, &r)) return push1(S, r);
        } else {
            vm_check_any(S, 1);
        }
        vm_pushnil(S);
        return 1;
    }
    vm_Integer base = vm_check_integer(S, 2);
    if (!vm_isstr(vm_at(S, 1))) vm_type_error(S, 1, "string");
    if (base < 2 || base > 36) vm_arg_error(S, 2, "base out of range");
    String *s = vm_at(S, 1)->u.s;
    vm_Integer n;
    if (str2int_base(s->data, s->len, (int)base, &n)) vm_pushint(S, n);
    else vm_pushnil(S);
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * Iteration: next, pairs, ipairs, select
 * ===================================================================== */

static int base_next(State *S) {
    Table *t = vm_check_table(S, 1);
    vm_settop(S, 2);
    Value key = *vm_at(S, 2), val;
    if (vm_table_next(S, t, &key, &val)) {
        vm_prof_lib_load(S, vm_table_get(t, &key)); /* input-sensitive profiling: the slot read */
        vm_push(S, key);
        vm_push(S, val);
        return 2;
    }
    vm_pushnil(S);
    return 1;
}

/* pairs(t): __pairs when present (its three results), else next, t, nil. Upvalue 1 is the
 * 'next' function. */
static int base_pairs(State *S) {
    vm_check_any(S, 1);
    Value t = arg_value(S, 1);
    Value mm = vm_getmetafield(S, &t, "__pairs");
    if (!vm_isnil(&mm)) {
        vm_push(S, mm);
        vm_push(S, t);
        vm_call_yieldable_from_c(S, 1, 3); /* __pairs may yield, as in lua5.4 */
        return 3;
    }
    vm_push(S, *vm_upvalue(S, 1));
    vm_push(S, t);
    vm_pushnil(S);
    return 3;
}

/* The iterator of ipairs: t[i+1] (through __index as in 5.4), stopping at the first nil. */
static int ipairs_aux(State *S) {
    vm_Integer i = (vm_Integer)((vm_Unsigned)vm_check_integer(S, 2) + 1u); /* wraps, as lua5.4's */
    Value *tv = vm_at(S, 1);
    Value v;
    if (vm_istable(tv) && tv->u.t->meta == NULL) {
        const Value *slot = vm_table_getint(tv->u.t, i);
        vm_prof_lib_load(S, slot); /* input-sensitive profiling: the slot read */
        v = vm_loadv(slot);
    } else {
        Value t = *tv, k = vm_int(i);
        v = vm_gettable(S, &t, &k);
    }
    if (vm_isnil(&v)) {
        vm_pushnil(S);
        return 1;
    }
    vm_pushint(S, i);
    vm_push(S, v);
    return 2;
}

/* ipairs(t): upvalue 1 is ipairs_aux. */
static int base_ipairs(State *S) {
    vm_check_any(S, 1);
    Value t = arg_value(S, 1);
    vm_push(S, *vm_upvalue(S, 1));
    vm_push(S, t);
    vm_pushint(S, 0);
    return 3;
}

static int base_select(State *S) {
    int n = vm_gettop(S);
    Value *a = vm_at(S, 1);
    if (vm_isstr(a) && a->u.s->len == 1 && a->u.s->data[0] == '#') {
        vm_pushint(S, n - 1);
        return 1;
    }
    vm_Integer i = vm_check_integer(S, 1);
    if (i < 0) i = n + i;
    else if (i > n) i = n;
    if (i < 1) vm_arg_error(S, 1, "index out of range");
    return n - (int)i;
}

/* }==================================================================== */

/* {====================================================================
 * Raw access and metatables
 * ===================================================================== */

static int base_rawget(State *S) {
    Table *t = vm_check_table(S, 1);
    vm_check_any(S, 2);
    return push1(S, vm_loadv(vm_table_get(t, vm_at(S, 2))));
}

static int base_rawset(State *S) {
    Table *t = vm_check_table(S, 1);
    vm_check_any(S, 2);
    vm_check_any(S, 3);
    Value k = arg_value(S, 2), v = arg_value(S, 3);
    vm_table_set(S, t, &k, &v);
    return push1(S, arg_value(S, 1));
}

static int base_rawequal(State *S) {
    vm_check_any(S, 1);
    vm_check_any(S, 2);
    vm_pushbool(S, vm_rawequal(vm_at(S, 1), vm_at(S, 2)));
    return 1;
}

static int base_rawlen(State *S) {
    Value *v = vm_at(S, 1);
    if (vm_istable(v)) vm_pushint(S, (vm_Integer)vm_table_len(v->u.t));
    else if (vm_isstr(v)) vm_pushint(S, (vm_Integer)v->u.s->len);
    else vm_type_error(S, 1, "table or string");
    return 1;
}

static int base_setmetatable(State *S) {
    Value *mt = vm_at(S, 2);
    if (!vm_isnil(mt) && !vm_istable(mt)) vm_type_error(S, 2, "nil or table");
    Table *t = vm_check_table(S, 1);
    if (is_none(S, 2)) vm_type_error(S, 2, "nil or table");
    if (t->meta != NULL && !vm_isnil(vm_table_getstr(t->meta, S->g->tmname[TM_METATABLE])))
        vm_error(S, "cannot change a protected metatable");
    mt = vm_at(S, 2);
    Value tv = vm_table(t);
    vm_gc_setmetatable(S, &tv, vm_istable(mt) ? mt->u.t : NULL); /* __mode, __gc */
    return push1(S, arg_value(S, 1));
}

static int base_getmetatable(State *S) {
    vm_check_any(S, 1);
    Table *mt = vm_metatable_of(S, vm_at(S, 1));
    if (mt == NULL) {
        vm_pushnil(S);
        return 1;
    }
    Value protected_mt = vm_loadv(vm_table_getstr(mt, S->g->tmname[TM_METATABLE]));
    return push1(S, vm_isnil(&protected_mt) ? vm_table(mt) : protected_mt);
}

/* }==================================================================== */

/* {====================================================================
 * assert, collectgarbage
 * ===================================================================== */

static int base_assert(State *S) {
    if (!vm_isfalsy(vm_at(S, 1))) return vm_gettop(S);
    vm_check_any(S, 1);
    /* as error(msg, 1): a string message gets the position of assert's caller when that
     * is a Lua function (vm_error adds exactly that); other values are thrown as they are */
    if (vm_gettop(S) < 2) vm_error(S, "assertion failed!");
    Value msg = arg_value(S, 2);
    if (vm_isstr(&msg)) vm_error(S, "%s", msg.u.s->data);
    vm_error_value(S, msg);
}

/* The collector is Boehm's (gc/), not incremental nor generational: "stop" and "restart"
 * really stop and restart automatic collection, "count" follows every allocation, and a
 * "step" that runs runs a whole collection. Modes and their parameters keep lua5.4's
 * answers so programs that tune the collector run unchanged; they live in statics and
 * change nothing but what "step" answers and when it collects. The `lua` command line
 * starts lua5.4 in generational mode. */
static const char *gc_mode = "generational";
/* lua5.4 keeps these parameters divided by 4 (one byte each): what it gives back is the
 * value set rounded down to a multiple of 4. */
static int gc_pause = 200 / 4, gc_stepmul = 100 / 4;
static int gc_minormul = 20; /* generational: a minor collection after 20% growth */

/* collectgarbage("step", n), as lua5.4's lua_gc(LUA_GCSTEP) decides it (lapi.c): n == 0 is
 * a basic step, which always does work; otherwise n KB are added to the collector's debt
 * (the bytes allocated beyond its threshold) and a step runs only if the debt is then
 * positive. The threshold is lua5.4's for the mode: the live heap times the pause
 * (incremental), or the live heap plus the minor multiplier's share (generational). A
 * step that runs collects everything, so in incremental mode it always ends a cycle (the
 * answer is true), where lua5.4 on a large heap needs several steps; in generational mode
 * lua5.4 never rests in its pause state after a step, and the answer is false. */
static bool gc_step_due(vm_Integer n) {
    if (n == 0) return true;
    double live = (double)gc_heap_live();
    double threshold = strcmp(gc_mode, "incremental") == 0 ? live * (gc_pause * 4) / 100.0
                                                            : live + live * gc_minormul / 100.0;
    return (double)gc_heap_used() + (double)n * 1024.0 - threshold > 0;
}

/* Stack slots above the top hold what returned calls and finished blocks left there; the
 * stack block is scanned whole, so they would keep dead objects alive that lua5.4 (which
 * marks a stack only up to its top) collects, and weak entries and finalizers would wait
 * for them. An explicit collection clears them first: nothing above S->top is live. */
static void clear_dead_slots(State *S) {
    for (Value *v = S->top; v < S->stack_last + VM_EXTRA_STACK; v++) *v = vm_nil();
}

static int base_collectgarbage(State *S) {
    static const char *const opts[] = {"collect", "stop", "restart", "count", "step",
                                       "setpause", "setstepmul", "isrunning",
                                       "generational", "incremental", NULL};
    const char *opt = "collect";
    if (!is_noneornil(S, 1)) opt = vm_check_string(S, 1)->data;
    int o = 0;
    while (opts[o] != NULL && strcmp(opts[o], opt) != 0) o++;
    if (opts[o] == NULL) {
        const char *msg = vm_pushfstring(S, "invalid option '%s'", opt)->data;
        vm_arg_error(S, 1, msg);
    }
    switch (o) {
    case 0: /* collect */
        clear_dead_slots(S);
        gc_collect();
        vm_gc_run_finalizers(S); /* lua5.4's full collection ends with them */
        vm_pushint(S, 0);
        return 1;
    case 1: /* stop */
    case 2: /* restart */
        gc_set_running(o == 2);
        vm_pushint(S, 0);
        return 1;
    case 3: /* count */
        vm_pushfloat(S, (vm_Number)gc_heap_used() / 1024.0);
        return 1;
    case 4: { /* step */
        /* lua_gc takes an int: lua5.4's luaL_optinteger result is cast to one */
        vm_Integer n = (int)vm_opt_integer(S, 2, 0);
        bool ran = gc_step_due(n);
        if (ran) {
            clear_dead_slots(S);
            gc_collect();
            vm_gc_run_finalizers(S);
        }
        vm_pushbool(S, ran && strcmp(gc_mode, "incremental") == 0);
        return 1;
    }
    case 5: { /* setpause */
        int prev = gc_pause * 4;
        gc_pause = (int)vm_opt_integer(S, 2, 0) / 4;
        vm_pushint(S, prev);
        return 1;
    }
    case 6: { /* setstepmul */
        int prev = gc_stepmul * 4;
        gc_stepmul = (int)vm_opt_integer(S, 2, 0) / 4;
        vm_pushint(S, prev);
        return 1;
    }
    case 7: /* isrunning */
        vm_pushbool(S, gc_running());
        return 1;
    default: { /* generational (minor, major multipliers), incremental (pause, stepmul, size) */
        const char *prev = gc_mode;
        gc_mode = opts[o];
        int p2 = (int)vm_opt_integer(S, 2, 0), p3 = (int)vm_opt_integer(S, 3, 0);
        if (strcmp(gc_mode, "incremental") == 0) { /* pause, step multiplier, step size */
            vm_opt_integer(S, 4, 0);
            if (p2 != 0) gc_pause = p2 / 4;
            if (p3 != 0) gc_stepmul = p3 / 4;
        } else if (p2 != 0) { /* minor multiplier (the major one changes nothing here) */
            gc_minormul = p2;
        }
        vm_pushcstr(S, prev);
        return 1;
    }
    }
}

/* }==================================================================== */

/* {====================================================================
 * load, loadfile, dofile
 * ===================================================================== */

/* Mode argument at [idx] ("bt" by default). */
static const char *opt_mode(State *S, int idx) {
    String *m = vm_opt_string(S, idx, NULL);
    return m ? m->data : "bt";
}

/* Concatenate the pieces returned by the reader function at slot 1 until it returns nil or
 * an empty string. Returns VM_OK with the text pushed, or an error status with the error
 * object pushed (an error in the reader, or a piece that is not a string). */
static int read_chunk_pieces(State *S, ByteBuf *b) {
    for (;;) {
        vm_push(S, arg_value(S, 1));
        int status = vm_pcall(S, 0, 1);
        if (status != VM_OK) return status;
        Value *piece = vm_at(S, vm_gettop(S));
        if (vm_isnil(piece)) break;
        if (!vm_isstr(piece)) {
            vm_pop(S, 1);
            vm_pushcstr(S, "reader function must return a string");
            return VM_ERRRUN;
        }
        if (piece->u.s->len == 0) break;
        buf_add(S, b, piece->u.s->data, piece->u.s->len);
        vm_pop(S, 1);
    }
    vm_pop(S, 1);
    return VM_OK;
}

/* load(chunk [, chunkname [, mode [, env]]]) */
static int base_load(State *S) {
    Value chunk = arg_value(S, 1);
    const char *mode = opt_mode(S, 3);
    bool has_env = !is_none(S, 4);
    Value env = arg_value(S, 4);
    const char *text;
    size_t len;
    const char *chunkname;
    if (vm_isstr(&chunk)) {
        text = chunk.u.s->data;
        len = chunk.u.s->len;
        chunkname = vm_opt_string(S, 2, chunk.u.s)->data;
    } else {
        if (!vm_isfunction(&chunk)) vm_type_error(S, 1, "function");
        chunkname = vm_opt_string(S, 2, vm_string_newc(S, "=(load)"))->data;
        ByteBuf b;
        buf_init(S, &b, 256);
        if (read_chunk_pieces(S, &b) != VM_OK) {
            Value err = *vm_at(S, vm_gettop(S));
            return push_fail_msg(S, err);
        }
        text = b.p;
        len = b.len;
    }
    bool binary = len > 0 && text[0] == VM_BC_SIGNATURE[0];
    if (binary ? strchr(mode, 'b') == NULL : strchr(mode, 't') == NULL) {
        vm_pushnil(S);
        vm_pushfstring(S, "attempt to load a %s chunk (mode is '%s')",
                       binary ? "binary" : "text", mode);
        return 2;
    }
    int status = vm_load(S, text, len, chunkname, has_env ? &env : NULL, binary);
    if (status == VM_OK) return 1;
    return push_fail_msg(S, arg_value(S, vm_gettop(S)));
}

/* loadfile([filename [, mode [, env]]]) */
static int base_loadfile(State *S) {
    String *fname = vm_opt_string(S, 1, NULL);
    const char *mode = opt_mode(S, 2);
    bool has_env = !is_none(S, 3);
    Value env = arg_value(S, 3);
    if (load_file(S, fname ? fname->data : NULL, mode, has_env ? &env : NULL) == VM_OK)
        return 1;
    return push_fail_msg(S, arg_value(S, vm_gettop(S)));
}

/* dofile([filename]): errors (loading or running) propagate. */
static int base_dofile(State *S) {
    String *fname = vm_opt_string(S, 1, NULL);
    vm_settop(S, 1);
    if (load_file(S, fname ? fname->data : NULL, "bt", NULL) != VM_OK)
        vm_error_value(S, arg_value(S, vm_gettop(S)));
    vm_call_yieldable_from_c(S, 0, VM_MULTRET); /* the chunk may yield, as in lua5.4 */
    return vm_gettop(S) - 1;
}

/* warn(msg1, ...): every argument a string (numbers converted), the last one ends the
 * message (luaB_warn). */
static int base_warn(State *S) {
    int n = vm_gettop(S);
    vm_check_string(S, 1);
    for (int i = 2; i <= n; i++) vm_check_string(S, i);
    const char *stackbuf[16];
    const char **pieces = n <= 16 ? stackbuf : vm_alloc(S, (size_t)n * sizeof *pieces);
    for (int i = 1; i <= n; i++) pieces[i - 1] = vm_at(S, i)->u.s->data;
    vm_warning_pieces(S, pieces, n);
    return 0;
}

/* }==================================================================== */

static const LibReg base_funcs[] = {
    {"print", base_print},
    {"type", base_type},
    {"tostring", base_tostring},
    {"tonumber", base_tonumber},
    {"next", base_next},
    {"select", base_select},
    {"rawget", base_rawget},
    {"rawset", base_rawset},
    {"rawequal", base_rawequal},
    {"rawlen", base_rawlen},
    {"setmetatable", base_setmetatable},
    {"getmetatable", base_getmetatable},
    {"assert", base_assert},
    {"collectgarbage", base_collectgarbage},
    {"load", base_load},
    {"loadfile", base_loadfile},
    {"dofile", base_dofile},
    {"warn", base_warn},
    {NULL, NULL},
};

void vm_open_base(State *S) {
    Table *g = S->g->globals;
    CClosure *next = NULL;
    for (const LibReg *r = base_funcs; r->name != NULL; r++) {
        CClosure *cl = set_cfunc(S, g, r->name, r->name, r->f);
        if (r->f == base_next) next = cl;
        if (r->f == base_collectgarbage) cl->h.flags |= VM_CF_SCRUB;
    }
    vm_setfield(S, g, "_G", vm_table(g));
    vm_setfield(S, g, "_VERSION", vm_str(vm_string_newc(S, "Lua 5.4")));

    /* pairs and ipairs keep their helper functions as upvalues */
    CClosure *pairs = vm_newcfunction(S, base_pairs, "pairs", 1);
    pairs->upvals[0] = vm_cfunc(next);
    vm_setfield(S, g, "pairs", vm_cfunc(pairs));
    CClosure *ipairs = vm_newcfunction(S, base_ipairs, "ipairs", 1);
    ipairs->upvals[0] = vm_cfunc(vm_newcfunction(S, ipairs_aux, "ipairs_aux", 0));
    vm_setfield(S, g, "ipairs", vm_cfunc(ipairs));
}

/* {====================================================================
 * package and require
 * =====================================================================
 * package.searchers holds lua5.4's four searchers (preload, Lua file, C library, C root;
 * C libraries open through vm/capi/); require walks it exactly as lua5.4 does, so programs may add searchers. Both
 * searchers and require keep the package table as upvalue 1 (lua5.4 keeps it the same way,
 * so replacing the global 'package' does not change where require looks). */

/* Replace every occurrence of [from] (one char) in [s] by [to]. New GC string. */
static String *gsub_char(State *S, const char *s, char from, const char *to) {
    ByteBuf b;
    buf_init(S, &b, strlen(s) + 16);
    for (; *s; s++) {
        if (*s == from) buf_addc(S, &b, to);
        else buf_add(S, &b, s, 1);
    }
    return vm_string_new(S, b.p, b.len);
}

static bool readable(const char *filename) {
    FILE *f = fopen(filename, "r");
    if (f == NULL) return false;
    fclose(f);
    return true;
}

/* Search [path] for [name] (after replacing [sep] in it by [rep]). Returns the file name,
 * or NULL with *notfound set to "no file 'a'\n\tno file 'b'...". */
static String *search_path(State *S, const char *name, const char *path, const char *sep,
                           const char *rep, String **notfound) {
    if (*sep != '\0' && strchr(name, *sep) != NULL) name = gsub_char(S, name, *sep, rep)->data;
    String *full = gsub_char(S, path, PATH_MARK, name);
    const char *p = full->data, *end = full->data + full->len;
    while (p < end) {
        const char *semi = memchr(p, PATH_SEP, (size_t)(end - p));
        size_t n = semi ? (size_t)(semi - p) : (size_t)(end - p);
        if (n > 0) {
            String *candidate = vm_string_new(S, p, n);
            if (readable(candidate->data)) return candidate;
        }
        p += n + 1;
    }
    ByteBuf b;
    buf_init(S, &b, full->len * 2 + 16);
    buf_addc(S, &b, "no file '");
    for (const char *q = full->data; q < end; q++) {
        if (*q == PATH_SEP) buf_addc(S, &b, "'\n\tno file '");
        else buf_add(S, &b, q, 1);
    }
    buf_addc(S, &b, "'");
    *notfound = vm_string_new(S, b.p, b.len);
    return NULL;
}

/* package.searchpath(name, path [, sep [, rep]]) */
static int pkg_searchpath(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    const char *path = vm_check_string(S, 2)->data;
    const char *sep = vm_opt_string(S, 3, vm_string_newc(S, "."))->data;
    const char *rep = vm_opt_string(S, 4, vm_string_newc(S, "/"))->data;
    String *notfound = NULL;
    String *found = search_path(S, name, path, sep, rep, &notfound);
    if (found) return push1(S, vm_str(found));
    return push_fail_msg(S, vm_str(notfound));
}

static Table *package_table(State *S) {
    Value *p = vm_upvalue(S, 1);
    return vm_istable(p) ? p->u.t : NULL;
}

/* searchers[1]: package.preload[name] */
static int searcher_preload(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    Table *pkg = package_table(S);
    Value preload = field_of(S, pkg, "preload");
    if (!vm_istable(&preload)) vm_error(S, "'package.preload' must be a table");
    Value loader = vm_getfield(S, &preload, name);
    if (vm_isnil(&loader)) {
        vm_pushfstring(S, "no field package.preload['%s']", name);
        return 1;
    }
    vm_push(S, loader);
    vm_pushcstr(S, ":preload:");
    return 2;
}

/* package[field] from the environment variable [envname]_5_4 or [envname] (unless
 * [use_env] is false: -E), with ";;" standing for [def], else [def] (lua5.4's setpath). */
static void set_path(State *S, Table *pkg, const char *field, const char *envname, const char *def,
                     bool use_env) {
    char versioned[32];
    snprintf(versioned, sizeof versioned, "%s_5_4", envname);
    const char *env = use_env ? getenv(versioned) : NULL;
    if (env == NULL && use_env) env = getenv(envname);
    const char *dd = env ? strstr(env, ";;") : NULL;
    String *path;
    if (env == NULL) {
        path = vm_string_newc(S, def);
    } else if (dd == NULL) {
        path = vm_string_newc(S, env);
    } else {
        ByteBuf b;
        buf_init(S, &b, strlen(env) + strlen(def) + 4);
        if (dd > env) {
            buf_add(S, &b, env, (size_t)(dd - env));
            buf_addc(S, &b, ";");
        }
        buf_addc(S, &b, def);
        if (dd[2] != '\0') {
            buf_addc(S, &b, ";");
            buf_addc(S, &b, dd + 2);
        }
        path = vm_string_new(S, b.p, b.len);
    }
    vm_setfield(S, pkg, field, vm_str(path));
}

void vm_package_setpaths(State *S, bool use_env) {
    Table *pkg = vm_getglobal(S, "package").u.t;
    set_path(S, pkg, "path", "LUA_PATH", DEFAULT_PATH, use_env);
    set_path(S, pkg, "cpath", "LUA_CPATH", DEFAULT_CPATH, use_env);
}

/* searchers[2]: a Lua file along package.path. */
static int searcher_lua(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    Table *pkg = package_table(S);
    Value path = field_of(S, pkg, "path");
    if (!vm_isstr(&path)) vm_error(S, "'package.path' must be a string");
    String *notfound = NULL;
    String *filename = search_path(S, name, path.u.s->data, ".", "/", &notfound);
    if (filename == NULL) return push1(S, vm_str(notfound));
    if (load_file(S, filename->data, "bt", NULL) != VM_OK) {
        Value *msg = vm_at(S, vm_gettop(S));
        String *m = vm_isstr(msg) ? msg->u.s : vm_tostring(S, msg);
        /* raised from the searcher (called by require, a C function): no position */
        vm_error_value(S, vm_str(vm_pushfstring(S, "error loading module '%s' from file '%s':\n\t%s",
                                                name, filename->data, m->data)));
    }
    vm_push(S, vm_str(filename));
    return 2;
}

/* searchers[3] and [4]: C libraries along package.cpath (for the whole name, then for its
 * root before the first dot), opened through the C API room (vm/capi/), as lua5.4's
 * searcher_C and searcher_Croot. */

/* Push the open function of module [modname] from [filename]: luaopen_<name> with dots
 * as '_', trying first the part before a '-' mark (lua5.4's loadfunc). Returns
 * vm_capi_loadfunc's status (0: the function is pushed; else a message is). */
static int loadfunc(State *S, const char *filename, const char *modname) {
    char *name = vm_pushcstr(S, modname)->data;
    for (char *p = name; *p; p++)
        if (*p == '.') *p = '_'; /* a fresh string nobody else sees yet */
    const char *mark = strchr(name, IGMARK);
    if (mark != NULL) {
        String *open = vm_pushfstring(S, "luaopen_%.*s", (int)(mark - name), name);
        int stat = vm_capi_loadfunc(S, filename, open->data);
        if (stat != ERRFUNC) return stat;
        name = (char *)mark + 1; /* else the old-style name */
    }
    String *open = vm_pushfstring(S, "luaopen_%s", name);
    return vm_capi_loadfunc(S, filename, open->data);
}

/* The searcher's error for a library that is there but does not load. */
_Noreturn static void load_error(State *S, const char *modname, const char *filename) {
    const Value *msg = vm_at(S, vm_gettop(S));
    vm_error_value(S, vm_str(vm_pushfstring(S, "error loading module '%s' from file '%s':\n\t%s", modname,
                                            filename, vm_isstr(msg) ? msg->u.s->data : "?")));
}

static String *find_clib(State *S, const char *name, String **notfound) {
    Table *pkg = package_table(S);
    Value cpath = field_of(S, pkg, "cpath");
    if (!vm_isstr(&cpath)) vm_error(S, "'package.cpath' must be a string");
    return search_path(S, name, cpath.u.s->data, ".", "/", notfound);
}

static int searcher_c(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    String *notfound = NULL;
    String *filename = find_clib(S, name, &notfound);
    if (filename == NULL) return push1(S, vm_str(notfound));
    if (loadfunc(S, filename->data, name) != 0) load_error(S, name, filename->data);
    vm_push(S, vm_str(filename));
    return 2;
}

static int searcher_croot(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    const char *dot = strchr(name, '.');
    if (dot == NULL) return 0;
    String *root = vm_string_new(S, name, (size_t)(dot - name));
    String *notfound = NULL;
    String *filename = find_clib(S, root->data, &notfound);
    if (filename == NULL) return push1(S, vm_str(notfound));
    int stat = loadfunc(S, filename->data, name);
    if (stat != 0) {
        if (stat != ERRFUNC) load_error(S, name, filename->data);
        vm_pushfstring(S, "no module '%s' in file '%s'", name, filename->data);
        return 1;
    }
    vm_push(S, vm_str(filename));
    return 2;
}

/* package.loadlib(path, funcname): the function, or fail, the message and where it failed
 * ("open" or "init"), as lua5.4. */
static int pkg_loadlib(State *S) {
    const char *path = vm_check_string(S, 1)->data;
    const char *init = vm_check_string(S, 2)->data;
    int stat = vm_capi_loadfunc(S, path, init);
    if (stat == 0) return 1;
    vm_pushnil(S);
    vm_insert(S, vm_gettop(S) - 1);
    vm_pushcstr(S, stat == ERRFUNC ? INIT_FAIL : LIB_FAIL);
    return 3;
}

/* Find a loader for [name] through package.searchers: pushes the loader and its extra
 * value, or raises "module 'name' not found:" with what every searcher said. */
static void find_loader(State *S, Table *pkg, String *name) {
    Value searchers = field_of(S, pkg, "searchers");
    if (!vm_istable(&searchers)) vm_error(S, "'package.searchers' must be a table");
    ByteBuf msg;
    buf_init(S, &msg, 256);
    for (vm_Integer i = 1;; i++) {
        Value k = vm_int(i);
        Value searcher = vm_gettable(S, &searchers, &k);
        if (vm_isnil(&searcher)) {
            buf_add(S, &msg, "", 1);
            vm_error(S, "module '%s' not found:%s", name->data, msg.p);
        }
        vm_push(S, searcher);
        vm_push(S, vm_str(name));
        vm_call(S, 1, 2);
        int top = vm_gettop(S);
        Value *found = vm_at(S, top - 1);
        if (vm_isfunction(found)) return;
        if (vm_isstr(found)) {
            buf_addc(S, &msg, "\n\t");
            buf_add(S, &msg, found->u.s->data, found->u.s->len);
        }
        vm_pop(S, 2);
    }
}

/* require(name): package.loaded[name], or load it through the searchers, call the loader
 * with (name, extra) and store its result (true when it returns nothing). Returns the
 * module and the loader's extra value (the file name). */
static int pkg_require(State *S) {
    String *name = vm_check_string(S, 1);
    vm_settop(S, 1);
    Table *loaded = S->g->loaded;
    Value have = vm_loadv(vm_table_getstr(loaded, name));
    if (!vm_isfalsy(&have)) return push1(S, have);
    find_loader(S, package_table(S), name);
    Value extra = *vm_at(S, 3);
    vm_push(S, *vm_at(S, 2));
    vm_push(S, vm_str(name));
    vm_push(S, extra);
    vm_call(S, 2, 1);
    Value result = *vm_at(S, vm_gettop(S));
    if (!vm_isnil(&result)) vm_table_setstr(S, loaded, name, &result);
    result = vm_loadv(vm_table_getstr(loaded, name));
    if (vm_isnil(&result)) {
        result = vm_bool(true);
        vm_table_setstr(S, loaded, name, &result);
    }
    vm_push(S, result);
    vm_push(S, extra);
    return 2;
}

static void add_searcher(State *S, Table *searchers, int i, CClosure *cl) {
    Value v = vm_cfunc(cl);
    vm_table_setint(S, searchers, i, &v);
}

void vm_open_package(State *S) {
    if (S->g->loaded == NULL) S->g->loaded = vm_table_new(S, 0, 16);
    Table *loaded = S->g->loaded;
    Table *pkg = vm_table_new(S, 0, 8);
    vm_setfield(S, pkg, "config", vm_str(vm_string_newc(S, PACKAGE_CONFIG)));
    vm_setfield(S, pkg, "loaded", vm_table(loaded));
    vm_setfield(S, pkg, "preload", vm_table(vm_table_new(S, 0, 0)));
    set_cfunc(S, pkg, "searchpath", "package.searchpath", pkg_searchpath);
    set_cfunc(S, pkg, "loadlib", "package.loadlib", pkg_loadlib);

    Table *searchers = vm_table_new(S, 2, 0);
    CClosure *pre = vm_newcfunction(S, searcher_preload, "searcher_preload", 1);
    pre->upvals[0] = vm_table(pkg);
    add_searcher(S, searchers, 1, pre);
    CClosure *lua = vm_newcfunction(S, searcher_lua, "searcher_Lua", 1);
    lua->upvals[0] = vm_table(pkg);
    add_searcher(S, searchers, 2, lua);
    CClosure *c = vm_newcfunction(S, searcher_c, "searcher_C", 1);
    c->upvals[0] = vm_table(pkg);
    add_searcher(S, searchers, 3, c);
    CClosure *croot = vm_newcfunction(S, searcher_croot, "searcher_Croot", 1);
    croot->upvals[0] = vm_table(pkg);
    add_searcher(S, searchers, 4, croot);
    vm_setfield(S, pkg, "searchers", vm_table(searchers));

    CClosure *req = vm_newcfunction(S, pkg_require, "require", 1);
    req->upvals[0] = vm_table(pkg);
    vm_setglobal(S, "require", vm_cfunc(req));
    vm_setglobal(S, "package", vm_table(pkg));
    vm_package_setpaths(S, true);

    /* register the libraries opened so far; later openers register themselves */
    static const char *const libs[] = {"coroutine", "string", "table", "math", "io",
                                       "os", "utf8", "debug", "thread", NULL};
    vm_setfield(S, loaded, "_G", vm_table(S->g->globals));
    vm_setfield(S, loaded, "package", vm_table(pkg));
    for (int i = 0; libs[i] != NULL; i++) {
        Value lib = vm_getglobal(S, libs[i]);
        if (vm_istable(&lib)) vm_setfield(S, loaded, libs[i], lib);
    }
}

/* }==================================================================== */
