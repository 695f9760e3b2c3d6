/* vm_lib_os.c: the os library (clock, time, date, getenv, exit, remove, rename, tmpname,
 * difftime, execute, setlocale). */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vm_api.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"
#include "vm_shadow.h"

/* Room for the expansion of one strftime conversion ("%c" is the longest in practice). */
#define DATE_CONV_MAX 250

/* Conversions os.date accepts, as lua5.4 on C99 systems: single letters, then the E and O
 * modified forms. Anything else is "invalid conversion specifier". */
static const char date_opts1[] = "aAbBcCdDeFgGhHIjmMnprRStTuUVwWxXyYzZ%";
static const char *const date_opts2[] = {"Ec", "EC", "Ex", "EX", "Ey", "EY", "Od", "Oe",
                                         "OH", "OI", "Om", "OM", "OS", "Ou", "OU", "OV",
                                         "Ow", "OW", "Oy", NULL};

/* {====================================================================
 * Helpers
 * ===================================================================== */

/* luaL_fileresult: true on success; else nil, "[fname: ]reason", errno. */
int vm_file_result(State *S, bool ok, const char *fname) {
    int err = errno;
    if (ok) {
        vm_pushbool(S, true);
        return 1;
    }
    vm_pushnil(S);
    if (fname) vm_pushfstring(S, "%s: %s", fname, strerror(err));
    else vm_pushcstr(S, strerror(err));
    vm_pushint(S, err);
    return 3;
}

int vm_exec_status(State *S, int stat) {
    const char *what = "exit";
    if (WIFEXITED(stat)) {
        stat = WEXITSTATUS(stat);
    } else if (WIFSIGNALED(stat)) {
        stat = WTERMSIG(stat);
        what = "signal";
    }
    if (*what == 'e' && stat == 0) vm_pushbool(S, true);
    else vm_pushnil(S);
    vm_pushcstr(S, what);
    vm_pushint(S, stat);
    return 3;
}

/* A time_t argument (an integer that fits time_t). */
static time_t check_time(State *S, int arg) {
    vm_Integer t = vm_check_integer(S, arg);
    if ((vm_Integer)(time_t)t != t) vm_arg_error(S, arg, "time out-of-bounds");
    return (time_t)t;
}

static void set_int_field(State *S, Table *t, const char *k, int v) {
    vm_setfield(S, t, k, vm_int(v));
}

/* Fill [t] with the fields of [tm] (os.date("*t") and the normalisation in os.time). */
static void set_all_fields(State *S, Table *t, const struct tm *tm) {
    set_int_field(S, t, "year", tm->tm_year + 1900);
    set_int_field(S, t, "month", tm->tm_mon + 1);
    set_int_field(S, t, "day", tm->tm_mday);
    set_int_field(S, t, "hour", tm->tm_hour);
    set_int_field(S, t, "min", tm->tm_min);
    set_int_field(S, t, "sec", tm->tm_sec);
    set_int_field(S, t, "yday", tm->tm_yday + 1);
    set_int_field(S, t, "wday", tm->tm_wday + 1);
    if (tm->tm_isdst >= 0) vm_setfield(S, t, "isdst", vm_bool(tm->tm_isdst != 0));
}

/* Integer field [key] of the date table [t] minus [delta]; [def] when absent (< 0: the
 * field is required). */
static int get_date_field(State *S, const Value *t, const char *key, int def, int delta) {
    Value v = vm_getfield(S, t, key);
    vm_Integer n;
    if (!vm_tointeger(&v, &n)) {
        if (!vm_isnil(&v)) vm_error(S, "field '%s' is not an integer", key);
        if (def < 0) vm_error(S, "field '%s' missing in date table", key);
        return def;
    }
    if (!(n >= 0 ? n - delta <= INT_MAX : INT_MIN + delta <= n))
        vm_error(S, "field '%s' is out-of-bound", key);
    return (int)(n - delta);
}

/* }==================================================================== */

/* {====================================================================
 * Time and date
 * ===================================================================== */

static int os_clock(State *S) {
    vm_pushfloat(S, (vm_Number)clock() / (vm_Number)CLOCKS_PER_SEC);
    return 1;
}

/* os.time([t]): now, or the time described by the date table t (whose fields are then
 * normalised in place, as mktime does). */
static int os_time(State *S) {
    time_t t;
    if (vm_gettop(S) < 1 || vm_isnil(vm_at(S, 1))) {
        t = time(NULL);
    } else {
        Table *tab = vm_check_table(S, 1);
        Value tv = vm_table(tab);
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        tm.tm_year = get_date_field(S, &tv, "year", -1, 1900);
        tm.tm_mon = get_date_field(S, &tv, "month", -1, 1);
        tm.tm_mday = get_date_field(S, &tv, "day", -1, 0);
        tm.tm_hour = get_date_field(S, &tv, "hour", 12, 0);
        tm.tm_min = get_date_field(S, &tv, "min", 0, 0);
        tm.tm_sec = get_date_field(S, &tv, "sec", 0, 0);
        Value dst = vm_getfield(S, &tv, "isdst");
        tm.tm_isdst = vm_isnil(&dst) ? -1 : !vm_isfalsy(&dst);
        t = mktime(&tm);
        if (t == (time_t)-1) vm_error(S, "time result cannot be represented in this installation");
        set_all_fields(S, tab, &tm);
    }
    vm_pushint(S, (vm_Integer)t);
    return 1;
}

/* Length of the valid conversion at [conv] (after the '%'), or 0. */
static size_t date_conv_len(const char *conv, size_t avail) {
    if (avail >= 1 && conv[0] != '\0' && strchr(date_opts1, conv[0]) != NULL) return 1;
    if (avail >= 2)
        for (int i = 0; date_opts2[i] != NULL; i++)
            if (memcmp(conv, date_opts2[i], 2) == 0) return 2;
    return 0;
}

static int os_date(State *S) {
    String *fmt = vm_opt_string(S, 1, vm_string_newc(S, "%c"));
    time_t t = (vm_gettop(S) >= 2 && !vm_isnil(vm_at(S, 2))) ? check_time(S, 2) : time(NULL);
    const char *s = fmt->data, *se = fmt->data + fmt->len;
    struct tm tmr, *tm;
    if (*s == '!') {
        tm = gmtime_r(&t, &tmr);
        s++;
    } else {
        tm = localtime_r(&t, &tmr);
    }
    if (tm == NULL) vm_error(S, "date result cannot be represented in this installation");
    if (strcmp(s, "*t") == 0) {
        Table *r = vm_table_new(S, 0, 9);
        set_all_fields(S, r, tm);
        vm_push(S, vm_table(r));
        return 1;
    }
    size_t cap = (size_t)(se - s) * 4 + DATE_CONV_MAX + 1, len = 0;
    char *out = vm_alloc_leaf(S, cap);
    while (s < se) {
        if (cap - len < DATE_CONV_MAX + 1) {
            cap *= 2;
            out = vm_realloc(S, out, cap);
        }
        if (*s != '%') {
            out[len++] = *s++;
            continue;
        }
        s++;
        size_t n = date_conv_len(s, (size_t)(se - s));
        if (n == 0) {
            const char *msg = vm_pushfstring(S, "invalid conversion specifier '%%%s'", s)->data;
            vm_arg_error(S, 1, msg);
        }
        char cc[4] = {'%', s[0], n == 2 ? s[1] : '\0', '\0'};
        len += strftime(out + len, DATE_CONV_MAX, cc, tm);
        s += n;
    }
    vm_pushstr(S, out, len);
    return 1;
}

static int os_difftime(State *S) {
    time_t t1 = check_time(S, 1);
    time_t t2 = check_time(S, 2);
    vm_pushfloat(S, difftime(t1, t2));
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * Environment, processes and files
 * ===================================================================== */

static int os_getenv(State *S) {
    const char *v = getenv(vm_check_string(S, 1)->data);
    if (v) vm_pushcstr(S, v);
    else vm_pushnil(S);
    return 1;
}

static void close_main_tbc(State *S, void *ud) {
    (void)ud;
    Value nil = vm_nil();
    vm_close(S, S->stack, &nil);
}

/* os.exit([code [, close]]): true/false or a status; stdio buffers (print, io.write) are
 * flushed by exit(). With [close], the pending to-be-closed variables of the main
 * coroutine are closed first, as lua_close does (errors in their __close are ignored,
 * and closing goes on with the next one), then every pending finalizer runs. */
static int os_exit(State *S) {
    int status;
    Value *v = vm_at(S, 1);
    if (vm_isbool(v)) status = v->tt == VT_TRUE ? EXIT_SUCCESS : EXIT_FAILURE;
    else status = (int)vm_opt_integer(S, 1, EXIT_SUCCESS);
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_EXIT);
    if (!vm_isfalsy(vm_at(S, 2)) && S == S->g->mainthread) {
        for (int tries = S->ntbc + 1; tries > 0 && S->ntbc > 0; tries--)
            if (vm_protect(S, close_main_tbc, NULL) == VM_OK) break;
        vm_gc_close(S); /* then lua_close's finalizers */
    }
    fflush(NULL);
    exit(status);
}

/* os.execute([command]): without a command, whether a shell exists; else true|nil,
 * "exit"|"signal", code (luaL_execresult). */
static int os_execute(State *S) {
    String *cmd = vm_opt_string(S, 1, NULL);
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_EFFECT);
    fflush(NULL);
    int stat = system(cmd ? cmd->data : NULL);
    if (cmd == NULL) {
        vm_pushbool(S, stat != 0);
        return 1;
    }
    if (stat == -1) return vm_file_result(S, false, NULL);
    return vm_exec_status(S, stat);
}

static int os_remove(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_EFFECT);
    return vm_file_result(S, remove(name) == 0, name);
}

static int os_rename(State *S) {
    const char *from = vm_check_string(S, 1)->data;
    const char *to = vm_check_string(S, 2)->data;
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_EFFECT);
    return vm_file_result(S, rename(from, to) == 0, NULL);
}

static int os_tmpname(State *S) {
    char name[] = "/tmp/lua_XXXXXX";
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_EFFECT); /* it creates the file */
    int fd = mkstemp(name);
    if (fd == -1) vm_error(S, "unable to generate a unique filename");
    close(fd);
    vm_pushcstr(S, name);
    return 1;
}

static int os_setlocale(State *S) {
    static const int cats[] = {LC_ALL, LC_COLLATE, LC_CTYPE, LC_MONETARY, LC_NUMERIC, LC_TIME};
    static const char *const names[] = {"all", "collate", "ctype", "monetary", "numeric",
                                        "time", NULL};
    String *loc = vm_opt_string(S, 1, NULL);
    const char *cat = vm_opt_string(S, 2, vm_string_newc(S, "all"))->data;
    int i = 0;
    while (names[i] != NULL && strcmp(names[i], cat) != 0) i++;
    if (names[i] == NULL) vm_arg_error(S, 2, vm_pushfstring(S, "invalid option '%s'", cat)->data);
    const char *r = setlocale(cats[i], loc ? loc->data : NULL);
    if (r) vm_pushcstr(S, r);
    else vm_pushnil(S);
    return 1;
}

/* }==================================================================== */

static const LibReg os_funcs[] = {
    {"os.clock", os_clock},
    {"os.time", os_time},
    {"os.date", os_date},
    {"os.difftime", os_difftime},
    {"os.getenv", os_getenv},
    {"os.exit", os_exit},
    {"os.execute", os_execute},
    {"os.remove", os_remove},
    {"os.rename", os_rename},
    {"os.tmpname", os_tmpname},
    {"os.setlocale", os_setlocale},
    {NULL, NULL},
};

void vm_open_os(State *S) {
    Table *t = vm_table_new(S, 0, 16);
    for (const LibReg *r = os_funcs; r->name != NULL; r++)
        vm_setfield(S, t, r->name + 3, vm_cfunc(vm_newcfunction(S, r->f, r->name, 0)));
    vm_setglobal(S, "os", vm_table(t));
    if (S->g->loaded != NULL) vm_setfield(S, S->g->loaded, "os", vm_table(t));
}
