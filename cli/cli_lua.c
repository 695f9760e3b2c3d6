/* cli_lua.c: the part of the `tandem` command line that is lua5.4's `lua` command (lua.c's
 * pmain and what it calls): the version line, the arg table, LUA_INIT, -e, -l, -W, the
 * script and its arguments, stdin as a script. Every message and exit status is lua5.4's,
 * with the program named CLI_PROGNAME; the one addition is the column in a syntax error of
 * a chunk given on the command line ("tandem: x.lua:3:7: ..."; tests/README.md, Errors).
 *
 * Invariant: everything here runs as language thread 1 inside one protected call
 * (cli_run_lua), as pmain runs inside lua_pcall; each chunk runs in a protected call of its
 * own with a traceback handler (cli_docall), so an error in one is reported and ends the
 * run with status 1, and an error outside them (out of memory) too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_lib.h"
#include "vm_thread.h"
#include "vm_warn.h"

/* ======================================================================
 * Files
 * ====================================================================== */

char *cli_read_file(const char *path, size_t *len, const char **what) {
    *what = "open";
    FILE *f = path == NULL ? stdin : fopen(path, "rb");
    if (f == NULL) return NULL;
    *what = "read";
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) abort();
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (buf == NULL) abort();
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int err = ferror(f) ? errno : 0;
    if (f != stdin) fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    *len = n;
    return buf;
}

/* ======================================================================
 * Loading and calling, with lua.c's reports
 * ====================================================================== */

void cli_report(State *S, bool quiet) {
    Value *v = vm_at(S, vm_gettop(S));
    const char *msg = vm_isstr(v) ? v->u.s->data : vm_isnumber(v) ? vm_number_tostring(S, v)->data : "(null)";
    if (!quiet) fprintf(stderr, "%s: ", CLI_PROGNAME);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    vm_pop(S, 1);
}

int cli_docall(State *S, int nargs, int nresults, bool quiet) {
    int st = vm_docall(S, nargs, nresults);
    if (st != VM_OK) cli_report(S, quiet);
    return st;
}

/* vm_load, with the column added to a syntax error's position. Pushes the function or
 * the message. */
static int load_chunk(State *S, const char *buf, size_t len, const char *chunkname) {
    int st = vm_load(S, buf, len, chunkname, NULL, true);
    int line, col;
    const char *msg;
    if (st == VM_ERRSYNTAX && vm_last_compile_error(&line, &col, &msg)) {
        char id[VM_IDSIZE];
        vm_chunkid(id, sizeof id, chunkname, strlen(chunkname));
        vm_pop(S, 1);
        vm_pushfstring(S, "%s:%d:%d: %s", id, line, col, msg);
    }
    return st;
}

/* Load the file [name] (NULL: stdin) as luaL_loadfile does, and with Tandem's rule that a
 * ".tbc" file is bytecode (an empty or foreign one is refused, not run as source). */
static int load_file(State *S, const char *name) {
    const char *what;
    size_t len;
    char *buf = cli_read_file(name, &len, &what);
    if (buf == NULL) {
        vm_pushfstring(S, "cannot %s %s: %s", what, name ? name : "stdin", strerror(errno));
        return VM_ERRRUN; /* lua5.4's LUA_ERRFILE: only "not VM_OK" matters to the callers */
    }
    size_t nlen = name ? strlen(name) : 0;
    if (nlen > 4 && strcmp(name + nlen - 4, ".tbc") == 0 &&
        (len < VM_BC_SIGLEN || memcmp(buf, VM_BC_SIGNATURE, VM_BC_SIGLEN) != 0)) {
        char why[256];
        if (vm_bytecode_load(S, (const unsigned char *)buf, len, why, sizeof why) == NULL) {
            free(buf);
            vm_pushfstring(S, "%s: bad bytecode: %s", name, why);
            return VM_ERRSYNTAX;
        }
    }
    /* luaL_loadfile: a first line starting with '#' is skipped (the compiler does that for
     * source), and a binary chunk may follow it */
    const char *text = buf;
    if (len > 0 && buf[0] == '#') {
        const char *nl = memchr(buf, '\n', len);
        if (nl != NULL && (size_t)(nl + 1 - buf) < len && nl[1] == VM_BC_SIGNATURE[0]) {
            len -= (size_t)(nl + 1 - buf);
            text = nl + 1;
        }
    }
    int st;
    if (name == NULL) {
        st = load_chunk(S, text, len, "=stdin");
    } else {
        char *chunkname = malloc(nlen + 2);
        if (chunkname == NULL) abort();
        chunkname[0] = '@';
        memcpy(chunkname + 1, name, nlen + 1);
        st = load_chunk(S, text, len, chunkname);
        free(chunkname);
    }
    free(buf);
    return st;
}

static int dochunk(State *S, int status) {
    if (status == VM_OK) return cli_docall(S, 0, 0, false);
    cli_report(S, false);
    return status;
}

static int dostring(State *S, const char *s, const char *chunkname) {
    return dochunk(S, load_chunk(S, s, strlen(s), chunkname));
}

static int dofile(State *S, const char *name) { return dochunk(S, load_file(S, name)); }

/* -l [g=]mod: g = require(mod); g is mod without "=". */
static int dolibrary(State *S, const char *spec) {
    const char *eq = strchr(spec, '=');
    String *glob = eq ? vm_string_new(S, spec, (size_t)(eq - spec)) : vm_string_newc(S, spec);
    vm_push(S, vm_str(glob)); /* anchored while require runs */
    vm_push(S, vm_getglobal(S, "require"));
    vm_pushcstr(S, eq ? eq + 1 : spec);
    int st = cli_docall(S, 1, 1, false);
    if (st == VM_OK) vm_setglobal(S, glob->data, *vm_at(S, vm_gettop(S)));
    vm_settop(S, vm_gettop(S) - (st == VM_OK ? 2 : 1));
    return st;
}

/* ======================================================================
 * pmain
 * ====================================================================== */

static void print_version(void) {
    fputs(CLI_VERSION "\n", stdout);
    fflush(stdout);
}

/* arg[0] is the script, its arguments follow, the interpreter and its options (Tandem's
 * too) are at negative indices; with no script, arg[0] is the interpreter. */
static void create_arg_table(State *S, const LuaArgs *la) {
    int narg = la->argc - (la->script + 1);
    Table *t = vm_table_new(S, (uint32_t)(narg > 0 ? narg : 0), (uint32_t)la->script + 1);
    Value tv = vm_table(t);
    vm_push(S, tv);
    for (int i = 0; i < la->argc; i++) {
        Value v = vm_str(vm_string_newc(S, la->argv[i]));
        vm_table_setint(S, t, (vm_Integer)(i - la->script), &v);
    }
    vm_setglobal(S, "arg", tv);
    vm_pop(S, 1);
}

/* LUA_INIT_5_4, else LUA_INIT: "@file" runs the file, anything else is a chunk named after
 * the variable. */
static int handle_luainit(State *S) {
    const char *name = "=LUA_INIT_5_4";
    const char *init = getenv(name + 1);
    if (init == NULL) {
        name = "=LUA_INIT";
        init = getenv(name + 1);
    }
    if (init == NULL) return VM_OK;
    if (init[0] == '@') return dofile(S, init + 1);
    return dostring(S, init, name);
}

/* -e, -l and -W, in their order on the command line; false after an error. Tandem's own
 * options were handled before the state existed and are skipped, with their arguments. */
static bool runargs(State *S, const LuaArgs *la) {
    for (int i = 1; i < la->optlim; i++) {
        const char *a = la->argv[i];
        switch (a[1]) {
        case 'e':
        case 'l': {
            const char *extra = a[2] != '\0' ? a + 2 : la->argv[++i];
            int st = a[1] == 'e' ? dostring(S, extra, "=(command line)") : dolibrary(S, extra);
            if (st != VM_OK) return false;
            break;
        }
        case 'W':
            vm_warning(S, "@on", false);
            break;
        case 'c':
        case 'o':
            i++; /* -c file, -o file: compile mode, which never gets here */
            break;
        default: /* -i, -v, -E, -X...: nothing to run */
            break;
        }
    }
    return true;
}

/* The arguments after the script, pushed from the arg table as it is now (a chunk of -e may
 * have changed it). Returns how many. */
static int pushargs(State *S) {
    Value arg = vm_getglobal(S, "arg");
    if (!vm_istable(&arg)) vm_error(S, "'arg' is not a table");
    vm_push(S, arg);
    Value len = vm_len(S, &arg);
    if (len.tt != VT_INT) vm_error(S, "object length is not an integer");
    vm_Integer n = len.u.i;
    if (n > VM_MAXSTACK) vm_error(S, "stack overflow (too many arguments to script)");
    int base = vm_gettop(S);
    for (vm_Integer i = 1; i <= n; i++) {
        Value k = vm_int(i);
        vm_push(S, vm_loadv(vm_table_get(vm_at(S, base)->u.t, &k)));
    }
    vm_remove(S, base);
    return (int)(n > 0 ? n : 0);
}

static int handle_script(State *S, const LuaArgs *la) {
    const char *fname = la->argv[la->script];
    if (strcmp(fname, "-") == 0 && strcmp(la->argv[la->script - 1], "--") != 0)
        fname = NULL; /* stdin */
    int st = load_file(S, fname);
    if (st != VM_OK) {
        cli_report(S, false);
        return st;
    }
    int n = pushargs(S);
    return cli_docall(S, n, 0, false);
}

typedef struct LuaJob {
    const LuaArgs *la;
    bool ok;
    int status;
} LuaJob;

static void pmain(State *S, void *ud) {
    LuaJob *job = ud;
    const LuaArgs *la = job->la;
    if (la->has_v) print_version();
    if (la->has_E) vm_package_setpaths(S, false); /* the library read the environment */
    create_arg_table(S, la);
    if (!la->has_E && handle_luainit(S) != VM_OK) return;
    if (!runargs(S, la)) return;
    if (la->script > 0 && handle_script(S, la) != VM_OK) return;
    if (la->has_i) {
        cli_repl(S);
    } else if (la->script == 0 && !la->has_e && !la->has_v) {
        if (isatty(0)) {
            print_version();
            cli_repl(S);
        } else {
            dofile(S, NULL); /* its status is not the run's: lua5.4 exits 0 either way */
        }
    }
    job->ok = true;
}

/* lua.c calls pmain through lua_pcall: one nested C call under every chunk, which the
 * traceback shows as its last line ("[C]: in ?", the base frame here). It is counted as
 * lua5.4 counts it, so that the limits on nested C calls and coroutines ("C stack
 * overflow" at VM_MAXCCALLS) fall at the depths they fall at in lua5.4. */
static void main_body(State *S, void *ud) {
    LuaJob *job = ud;
    S->nCcalls++;
    job->status = vm_protect(S, pmain, job);
    S->nCcalls--;
}

int cli_run_lua(State *S, const LuaArgs *la) {
    LuaJob job = {la, false, VM_OK};
    vm_threads_run(S, main_body, &job);
    if (job.status != VM_OK) cli_report(S, false);
    fflush(stdout);
    return job.ok && job.status == VM_OK ? 0 : 1;
}
