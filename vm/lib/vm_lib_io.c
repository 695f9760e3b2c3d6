/* vm_lib_io.c: the io library on C stdio: file handles, io.read/io.write/io.lines, default
 * input and output.
 *
 * A file handle is a full userdata (pointer-free payload: an LFile) whose metatable is the
 * per-VM file metatable (__index = the methods, __name = "FILE*"). Every closure of this
 * file keeps, as upvalue 1, the per-VM io state table:
 *   [IOS_META] the file metatable      (how a value is recognised as a file)
 *   [IOS_INPUT] the default input file  (io.read, io.lines without a name)
 *   [IOS_OUTPUT] the default output file (io.write)
 * so that several VMs in one process never mix their files. print and io.write both write
 * into C's stdout buffer, so their output interleaves in program order. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_lib.h"
#include "vm_prof.h"
#include "vm_shadow.h"

enum { IOS_META = 1, IOS_INPUT = 2, IOS_OUTPUT = 3 };

/* How a handle is closed. */
enum { FK_STD, FK_FILE, FK_PIPE };

/* Longest numeral read by read("n") (lua5.4's L_MAXLENNUM): longer input fails. */
#define MAX_NUMERAL 200
/* Formats io.lines / file:lines accept (they travel as upvalues of the iterator). */
#define MAX_LINE_FORMATS 250
/* Chunk size for read("a") and read(n). */
#define READ_CHUNK 4096

/* Payload of a file handle. Pointer-free: the FILE is C stdio's (malloc'd), not GC memory. */
typedef struct LFile {
    FILE *f;   /* NULL once closed */
    int kind;  /* FK_* */
} LFile;

/* Upvalue layout of the lines iterator (after upvalue 1, the io state). */
enum { LN_FILE = 2, LN_NFMT = 3, LN_CLOSE = 4, LN_FMT0 = 5 };

/* {====================================================================
 * Handles
 * ===================================================================== */

static Table *io_state(State *S) { return vm_upvalue(S, 1)->u.t; }

static Table *file_meta(State *S) { return vm_loadv(vm_table_getint(io_state(S), IOS_META)).u.t; }

/* LFile of [v] when it is a file handle of this VM, else NULL. */
static LFile *to_lfile(State *S, const Value *v) {
    if (v->tt != VT_USERDATA || v->u.u->meta != file_meta(S)) return NULL;
    return (LFile *)v->u.u->data;
}

static LFile *check_lfile(State *S, int arg) {
    LFile *p = to_lfile(S, vm_at(S, arg));
    if (p == NULL) vm_type_error(S, arg, "FILE*");
    return p;
}

/* The open file at argument 1 (methods). */
static FILE *tofile(State *S) {
    LFile *p = check_lfile(S, 1);
    if (p->f == NULL) vm_error(S, "attempt to use a closed file");
    return p->f;
}

static Value new_file(State *S, FILE *f, int kind) {
    Userdata *u = vm_newuserdata(S, sizeof(LFile), file_meta(S), false);
    LFile *p = (LFile *)u->data;
    p->f = f;
    p->kind = kind;
    return vm_userdata(u);
}

/* luaL_execresult for a pclose status. */
static int exec_result(State *S, int stat) {
    if (stat == -1) return vm_file_result(S, false, NULL);
    return vm_exec_status(S, stat);
}

/* Close [p] as its kind requires and push the results of close(). In a shadow
 * (vm/prof/vm_shadow.h) a file is only forgotten: fclose would write out the program's
 * unflushed output, pclose wait for a process the program owns. */
static int aux_close(State *S, LFile *p) {
    FILE *f = p->f;
    if (__builtin_expect(vm_shadow_child, 0)) {
        if (p->kind == FK_PIPE) vm_shadow_end(VM_SHADOW_END_EFFECT);
        if (p->kind != FK_STD) {
            p->f = NULL;
            return vm_file_result(S, true, NULL);
        }
    }
    switch (p->kind) {
    case FK_STD:
        vm_pushnil(S);
        vm_pushcstr(S, "cannot close standard file");
        return 2;
    case FK_PIPE:
        p->f = NULL;
        return exec_result(S, pclose(f));
    default:
        p->f = NULL;
        return vm_file_result(S, fclose(f) == 0, NULL);
    }
}

/* A valid mode for fopen: [rwa]%+?b* */
static bool check_mode(const char *mode) {
    if (*mode == '\0' || strchr("rwa", *mode) == NULL) return false;
    mode++;
    if (*mode == '+') mode++;
    return strspn(mode, "b") == strlen(mode);
}

/* Opening a file in a shadow: for reading only (opening to write creates or truncates it). */
static void shadow_open(const char *mode) {
    if (mode[0] != 'r' || strchr(mode, '+') != NULL) vm_shadow_end(VM_SHADOW_END_EFFECT);
}

/* Open [name] or raise "cannot open file 'name' (reason)" (io.lines, io.input, io.output). */
static Value open_or_raise(State *S, const char *name, const char *mode) {
    if (__builtin_expect(vm_shadow_child, 0)) shadow_open(mode);
    FILE *f = fopen(name, mode);
    if (f == NULL) vm_error(S, "cannot open file '%s' (%s)", name, strerror(errno));
    return new_file(S, f, FK_FILE);
}

/* The default input or output file; raises if it was closed. */
static FILE *get_iofile(State *S, int which) {
    Value v = vm_loadv(vm_table_getint(io_state(S), which));
    LFile *p = to_lfile(S, &v);
    if (p == NULL || p->f == NULL)
        vm_error(S, "default %s file is closed", which == IOS_INPUT ? "input" : "output");
    return p->f;
}

/* }==================================================================== */

/* {====================================================================
 * Reading
 * ===================================================================== */

/* Thread-local line buffer for getline, reused across calls (malloc'd; never freed). */
static _Thread_local char *line_buf;
static _Thread_local size_t line_cap;

/* Push the next line (without its '\n' when [chop]); false at end of file (pushes ""). */
static bool read_line(State *S, FILE *f, bool chop) {
    ssize_t n = getline(&line_buf, &line_cap, f);
    if (n <= 0) {
        vm_pushstr(S, "", 0);
        return false;
    }
    size_t len = (size_t)n;
    if (chop && line_buf[len - 1] == '\n') len--;
    vm_pushstr(S, line_buf, len);
    return true;
}

/* Push up to [max] bytes (everything when max is SIZE_MAX); returns how many were read. */
static size_t read_upto(State *S, FILE *f, size_t max) {
    size_t cap = max < READ_CHUNK ? max : READ_CHUNK, len = 0;
    char *buf = vm_alloc_leaf(S, cap > 0 ? cap : 1);
    while (len < max) {
        if (len == cap) {
            size_t ncap = cap * 2;
            if (ncap > max) ncap = max;
            buf = vm_realloc(S, buf, ncap);
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    vm_pushstr(S, buf, len);
    return len;
}

/* read(0): "" unless at end of file. */
static bool test_eof(State *S, FILE *f) {
    int c = getc(f);
    ungetc(c, f);
    vm_pushstr(S, "", 0);
    return c != EOF;
}

/* Scanner state of read("n"): the characters accepted so far and one look-ahead. */
typedef struct NumReader {
    FILE *f;
    int c;                        /* look-ahead character */
    int n;                        /* characters in buf */
    char buf[MAX_NUMERAL + 1];
} NumReader;

/* Accept the look-ahead and read the next one; false (and the buffer is invalidated) when
 * the numeral grows too long. */
static bool num_accept(NumReader *r) {
    if (r->n >= MAX_NUMERAL) {
        r->buf[0] = '\0';
        return false;
    }
    r->buf[r->n++] = (char)r->c;
    r->c = getc(r->f);
    return true;
}

/* Accept the look-ahead if it is one of the two characters [set]. */
static bool num_accept_either(NumReader *r, const char *set) {
    if (r->c == set[0] || r->c == set[1]) return num_accept(r);
    return false;
}

static int num_digits(NumReader *r, bool hex) {
    int count = 0;
    while ((hex ? isxdigit(r->c) : isdigit(r->c)) && num_accept(r)) count++;
    return count;
}

/* read("n"): the longest prefix that looks like a numeral (at most MAX_NUMERAL chars),
 * converted as a Lua numeral; pushes nil and fails when it is not one. */
static bool read_number(State *S, FILE *f) {
    NumReader r;
    r.f = f;
    r.n = 0;
    bool hex = false;
    int count = 0;
    do r.c = getc(f);
    while (isspace(r.c));
    num_accept_either(&r, "-+");
    if (num_accept_either(&r, "00")) {
        if (num_accept_either(&r, "xX")) hex = true;
        else count = 1; /* the '0' is a digit */
    }
    count += num_digits(&r, hex);
    if (num_accept_either(&r, "..")) count += num_digits(&r, hex);
    if (count > 0 && num_accept_either(&r, hex ? "pP" : "eE")) {
        num_accept_either(&r, "-+");
        num_digits(&r, false);
    }
    ungetc(r.c, f);
    r.buf[r.n] = '\0';
    Value v;
    if (vm_str2number(r.buf, strlen(r.buf), &v)) {
        vm_push(S, v);
        return true;
    }
    vm_pushnil(S);
    return false;
}

/* External input for input-sensitive profiling (-Xprofile=inputsize): the [n] values one
 * read call got from [f] are cells the kernel filled and the caller reads, one EV_INPUT
 * each. The cells stand for the stream's read buffer: value k of a call is the cell at the
 * FILE's address + k, the same cells on every call, so a loop reading n lines has an input
 * of n values (they were refilled each time: TRMS) over one cell (RMS). The FILE is C
 * memory, never a GC heap address, so these cells never alias a table slot or an upvalue. */
static void external_input(FILE *f, int n) {
    for (int k = 0; k < n; k++) vm_prof_emit(ev_make(EV_INPUT, (uintptr_t)f + (unsigned)k));
}

/* Read with the [nfmt] formats found at stack slots first.. (or, when [from_upvalues], at
 * upvalues first..) and push one result per format read; reading stops at the first
 * failure, whose result becomes nil. No format means "l". Returns the number of results
 * (nil, message, errno on a read error). */
static int read_formats(State *S, FILE *f, int first, int nfmt, bool from_upvalues) {
/* the argument number reported for format i: for the lines iterator, lua5.4 counts the
 * formats from 2 (they sit above the file on its stack) */
#define FMT_ARG(i) (from_upvalues ? (i) - first + 2 : (i))
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_check_read(fileno(f)); /* pipes and terminals: input the program will read */
    clearerr(f);
    int n = 0;
    bool ok = true;
    if (nfmt == 0) {
        ok = read_line(S, f, true);
        n = 1;
    } else {
        vm_checkstack(S, nfmt + VM_MINSTACK);
        for (int i = 0; i < nfmt && ok; i++, n++) {
            int idx = first + i;
            Value fmt = from_upvalues ? *vm_upvalue(S, idx) : *vm_at(S, idx);
            if (vm_isnumber(&fmt)) {
                vm_Integer cnt;
                if (!vm_tointeger(&fmt, &cnt)) {
                    if (from_upvalues)
                        vm_arg_error(S, FMT_ARG(idx), "number has no integer representation");
                    cnt = vm_check_integer(S, idx);
                }
                ok = cnt == 0 ? test_eof(S, f) : read_upto(S, f, (size_t)cnt) > 0;
                continue;
            }
            const char *p;
            if (vm_isstr(&fmt)) p = fmt.u.s->data;
            else if (from_upvalues) vm_arg_error(S, FMT_ARG(idx), "invalid format");
            else p = vm_check_string(S, idx)->data;
            if (*p == '*') p++; /* "*l" and friends, as in Lua 5.3 */
            switch (*p) {
            case 'n': ok = read_number(S, f); break;
            case 'l': ok = read_line(S, f, true); break;
            case 'L': ok = read_line(S, f, false); break;
            case 'a': read_upto(S, f, SIZE_MAX); ok = true; break;
            default: vm_arg_error(S, FMT_ARG(idx), "invalid format");
            }
        }
    }
    if (ferror(f)) return vm_file_result(S, false, NULL);
    if (vm_prof_needs & PROF_NEED_INPUT) external_input(f, ok ? n : n - 1);
    if (!ok) {
        vm_pop(S, 1);
        vm_pushnil(S);
    }
    return n;
#undef FMT_ARG
}

static int io_read(State *S) {
    FILE *f = get_iofile(S, IOS_INPUT);
    return read_formats(S, f, 1, vm_gettop(S), false);
}

static int f_read(State *S) {
    FILE *f = tofile(S);
    return read_formats(S, f, 2, vm_gettop(S) - 1, false);
}

/* The iterator of io.lines / file:lines (see LN_* for its upvalues). */
static int io_readline(State *S) {
    Value fv = *vm_upvalue(S, LN_FILE);
    LFile *p = (LFile *)fv.u.u->data;
    if (p->f == NULL) vm_error(S, "file is already closed");
    int nfmt = (int)vm_upvalue(S, LN_NFMT)->u.i;
    vm_settop(S, 0);
    int n = read_formats(S, p->f, LN_FMT0, nfmt, true);
    if (!vm_isfalsy(vm_at(S, vm_gettop(S) - n + 1))) return n;
    if (n > 1) { /* a read error: its message follows the nil */
        Value msg = *vm_at(S, vm_gettop(S) - n + 2);
        vm_error(S, "%s", vm_isstr(&msg) ? msg.u.s->data : "read error");
    }
    if (!vm_isfalsy(vm_upvalue(S, LN_CLOSE))) {
        vm_settop(S, 0);
        aux_close(S, p);
    }
    return 0;
}

/* Push the lines iterator over the file at slot 1 with the formats at slots 2.. */
static void push_lines_iter(State *S, bool toclose) {
    int nfmt = vm_gettop(S) - 1;
    if (nfmt > MAX_LINE_FORMATS) vm_arg_error(S, MAX_LINE_FORMATS + 2, "too many arguments");
    CClosure *it = vm_newcfunction(S, io_readline, "for iterator", LN_FMT0 - 1 + nfmt);
    it->upvals[0] = vm_table(io_state(S));
    it->upvals[LN_FILE - 1] = *vm_at(S, 1);
    it->upvals[LN_NFMT - 1] = vm_int(nfmt);
    it->upvals[LN_CLOSE - 1] = vm_bool(toclose);
    for (int i = 0; i < nfmt; i++) it->upvals[LN_FMT0 - 1 + i] = *vm_at(S, 2 + i);
    vm_push(S, vm_cfunc(it));
}

static int f_lines(State *S) {
    tofile(S);
    push_lines_iter(S, false);
    return 1;
}

/* io.lines([filename, ...]): without a name, the lines of the default input (left open);
 * with one, the file is closed at the end and returned as the to-be-closed 4th value. */
static int io_lines(State *S) {
    if (vm_gettop(S) == 0) vm_pushnil(S);
    if (vm_isnil(vm_at(S, 1))) {
        *vm_at(S, 1) = vm_loadv(vm_table_getint(io_state(S), IOS_INPUT));
        tofile(S);
        push_lines_iter(S, false);
        return 1;
    }
    const char *name = vm_check_string(S, 1)->data;
    *vm_at(S, 1) = open_or_raise(S, name, "r");
    push_lines_iter(S, true);
    vm_pushnil(S);
    vm_pushnil(S);
    vm_push(S, *vm_at(S, 1));
    return 4;
}

/* }==================================================================== */

/* {====================================================================
 * Writing and the other methods
 * ===================================================================== */

/* Write the values at slots first..top (strings or numbers: integers as "%lld", floats as
 * "%.14g", as lua5.4's io.write) and push [file] on success. */
/* All values are checked before anything is written, and the whole call's output goes out
 * under the file's lock, so that io.write calls of several threads never interleave (and
 * an error cannot leave the lock held). */
static int write_values(State *S, FILE *f, int first, Value file) {
    int top = vm_gettop(S);
    bool ok = true;
    for (int i = first; i <= top; i++) {
        Value *v = vm_at(S, i);
        if (v->tt != VT_INT && v->tt != VT_FLOAT) vm_check_string(S, i);
    }
    flockfile(f);
    for (int i = first; i <= top; i++) {
        Value *v = vm_at(S, i);
        if (v->tt == VT_INT) {
            ok = ok && fprintf(f, "%lld", (long long)v->u.i) > 0;
        } else if (v->tt == VT_FLOAT) {
            ok = ok && fprintf(f, "%.14g", v->u.n) > 0;
        } else {
            String *s = vm_check_string(S, i);
            ok = ok && fwrite(s->data, 1, s->len, f) == s->len;
        }
    }
    funlockfile(f);
    if (!ok) return vm_file_result(S, false, NULL);
    vm_push(S, file);
    return 1;
}

/* write_values in a shadow: the values are checked as the program's write checks them, and
 * nothing is written (vm/prof/vm_shadow.h). */
static int shadow_write(State *S, int first, Value file) {
    for (int i = first; i <= vm_gettop(S); i++) {
        Value *v = vm_at(S, i);
        if (v->tt != VT_INT && v->tt != VT_FLOAT) vm_check_string(S, i);
    }
    vm_push(S, file);
    return 1;
}

static int io_write(State *S) {
    FILE *f = get_iofile(S, IOS_OUTPUT);
    if (__builtin_expect(vm_shadow_child, 0)) return shadow_write(S, 1, vm_loadv(vm_table_getint(io_state(S), IOS_OUTPUT)));
    return write_values(S, f, 1, vm_loadv(vm_table_getint(io_state(S), IOS_OUTPUT)));
}

static int f_write(State *S) {
    FILE *f = tofile(S);
    if (__builtin_expect(vm_shadow_child, 0)) return shadow_write(S, 2, *vm_at(S, 1));
    return write_values(S, f, 2, *vm_at(S, 1));
}

static int f_close(State *S) {
    tofile(S);
    return aux_close(S, check_lfile(S, 1));
}

/* io.close([file]): the default output without an argument. */
static int io_close(State *S) {
    if (vm_gettop(S) == 0 || vm_isnil(vm_at(S, 1))) {
        vm_settop(S, 0);
        vm_push(S, vm_loadv(vm_table_getint(io_state(S), IOS_OUTPUT)));
    }
    return f_close(S);
}

static int f_flush(State *S) {
    FILE *f = tofile(S);
    if (__builtin_expect(vm_shadow_child, 0)) return vm_file_result(S, true, NULL); /* nothing of the shadow's was written */
    return vm_file_result(S, fflush(f) == 0, NULL);
}

static int io_flush(State *S) {
    if (__builtin_expect(vm_shadow_child, 0)) return vm_file_result(S, get_iofile(S, IOS_OUTPUT) != NULL, NULL);
    return vm_file_result(S, fflush(get_iofile(S, IOS_OUTPUT)) == 0, NULL);
}

/* Index of the option named by the string at [arg] (default [def]) in [names]. */
static int check_option(State *S, int arg, const char *def, const char *const names[]) {
    const char *name = def ? vm_opt_string(S, arg, vm_string_newc(S, def))->data
                           : vm_check_string(S, arg)->data;
    for (int i = 0; names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0) return i;
    vm_arg_error(S, arg, vm_pushfstring(S, "invalid option '%s'", name)->data);
}

static int f_seek(State *S) {
    static const int whence[] = {SEEK_SET, SEEK_CUR, SEEK_END};
    static const char *const names[] = {"set", "cur", "end", NULL};
    FILE *f = tofile(S);
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_check_read(fileno(f)); /* fseeko flushes: only a detached regular file */
    int op = check_option(S, 2, "cur", names);
    vm_Integer off = vm_opt_integer(S, 3, 0);
    errno = 0;
    if (fseeko(f, (off_t)off, whence[op]) != 0) return vm_file_result(S, false, NULL);
    vm_pushint(S, (vm_Integer)ftello(f));
    return 1;
}

static int f_setvbuf(State *S) {
    static const int modes[] = {_IONBF, _IOFBF, _IOLBF};
    static const char *const names[] = {"no", "full", "line", NULL};
    FILE *f = tofile(S);
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_check_read(fileno(f)); /* setvbuf may flush: only a detached regular file */
    int op = check_option(S, 2, NULL, names);
    vm_Integer size = vm_opt_integer(S, 3, BUFSIZ);
    return vm_file_result(S, setvbuf(f, NULL, modes[op], (size_t)size) == 0, NULL);
}

static int f_tostring(State *S) {
    LFile *p = check_lfile(S, 1);
    if (p->f == NULL) vm_pushcstr(S, "file (closed)");
    else vm_pushfstring(S, "file (%p)", (void *)p->f);
    return 1;
}

/* __gc and __close: close a file that is still open (standard files stay open). */
static int f_gc(State *S) {
    LFile *p = to_lfile(S, vm_at(S, 1));
    if (p != NULL && p->f != NULL && p->kind != FK_STD) aux_close(S, p);
    return 0;
}

/* }==================================================================== */

/* {====================================================================
 * io functions
 * ===================================================================== */

static int io_open(State *S) {
    const char *name = vm_check_string(S, 1)->data;
    String *ms = vm_opt_string(S, 2, NULL);
    const char *mode = ms ? ms->data : "r";
    if (!check_mode(mode)) vm_arg_error(S, 2, "invalid mode");
    if (__builtin_expect(vm_shadow_child, 0)) shadow_open(mode);
    FILE *f = fopen(name, mode);
    if (f == NULL) return vm_file_result(S, false, name);
    vm_push(S, new_file(S, f, FK_FILE));
    return 1;
}

static int io_popen(State *S) {
    const char *prog = vm_check_string(S, 1)->data;
    String *ms = vm_opt_string(S, 2, NULL);
    const char *mode = ms ? ms->data : "r";
    if (!((mode[0] == 'r' || mode[0] == 'w') && mode[1] == '\0'))
        vm_arg_error(S, 2, "invalid mode");
    if (__builtin_expect(vm_shadow_child, 0)) vm_shadow_end(VM_SHADOW_END_EFFECT); /* runs a command */
    fflush(NULL);
    FILE *f = popen(prog, mode);
    if (f == NULL) return vm_file_result(S, false, prog);
    vm_push(S, new_file(S, f, FK_PIPE));
    return 1;
}

static int io_tmpfile(State *S) {
    FILE *f = tmpfile();
    if (f == NULL) return vm_file_result(S, false, NULL);
    vm_push(S, new_file(S, f, FK_FILE));
    return 1;
}

static int io_type(State *S) {
    vm_check_any(S, 1);
    LFile *p = to_lfile(S, vm_at(S, 1));
    if (p == NULL) vm_pushnil(S);
    else vm_pushcstr(S, p->f == NULL ? "closed file" : "file");
    return 1;
}

/* io.input / io.output: set the default from a file name or a handle; return it. */
static int g_iofile(State *S, int which, const char *mode) {
    if (vm_gettop(S) >= 1 && !vm_isnil(vm_at(S, 1))) {
        Value *a = vm_at(S, 1);
        Value file;
        if (vm_isstr(a) || vm_isnumber(a)) {
            file = open_or_raise(S, vm_check_string(S, 1)->data, mode);
        } else {
            tofile(S);
            file = *vm_at(S, 1);
        }
        vm_table_setint(S, io_state(S), which, &file);
    }
    vm_push(S, vm_loadv(vm_table_getint(io_state(S), which)));
    return 1;
}

static int io_input(State *S) { return g_iofile(S, IOS_INPUT, "r"); }
static int io_output(State *S) { return g_iofile(S, IOS_OUTPUT, "w"); }

/* }==================================================================== */

static const LibReg io_funcs[] = {
    {"io.close", io_close},
    {"io.flush", io_flush},
    {"io.input", io_input},
    {"io.lines", io_lines},
    {"io.open", io_open},
    {"io.output", io_output},
    {"io.popen", io_popen},
    {"io.read", io_read},
    {"io.tmpfile", io_tmpfile},
    {"io.type", io_type},
    {"io.write", io_write},
    {NULL, NULL},
};

static const LibReg file_methods[] = {
    {"close", f_close},
    {"flush", f_flush},
    {"lines", f_lines},
    {"read", f_read},
    {"seek", f_seek},
    {"setvbuf", f_setvbuf},
    {"write", f_write},
    {NULL, NULL},
};

/* Closure over [f] with the io state as upvalue 1. */
static Value io_closure(State *S, CFunction f, const char *name, Table *st) {
    CClosure *cl = vm_newcfunction(S, f, name, 1);
    cl->upvals[0] = vm_table(st);
    return vm_cfunc(cl);
}

/* Libraries opened before package (and by other files) are registered in package.loaded
 * here if their openers did not do it: io is the last opener. */
static void register_loaded(State *S) {
    static const char *const libs[] = {"_G", "package", "coroutine", "string", "table",
                                       "math", "os", "io", "utf8", "debug", "thread", NULL};
    Table *loaded = S->g->loaded;
    if (loaded == NULL) return;
    for (int i = 0; libs[i] != NULL; i++) {
        if (!vm_isnil(vm_table_getstr(loaded, vm_string_newc(S, libs[i])))) continue;
        Value lib = vm_getglobal(S, libs[i]);
        if (vm_istable(&lib)) vm_setfield(S, loaded, libs[i], lib);
    }
}

void vm_open_io(State *S) {
    Table *st = vm_table_new(S, 3, 0);
    Table *meta = vm_table_new(S, 0, 8);
    Value mv = vm_table(meta);
    vm_table_setint(S, st, IOS_META, &mv);

    Table *methods = vm_table_new(S, 0, 8);
    for (const LibReg *r = file_methods; r->name != NULL; r++)
        vm_setfield(S, methods, r->name, io_closure(S, r->f, r->name, st));
    vm_setfield(S, meta, "__index", vm_table(methods));
    vm_setfield(S, meta, "__name", vm_str(vm_string_newc(S, "FILE*")));
    vm_setfield(S, meta, "__tostring", io_closure(S, f_tostring, "tostring", st));
    vm_setfield(S, meta, "__gc", io_closure(S, f_gc, "gc", st));
    vm_setfield(S, meta, "__close", io_closure(S, f_gc, "close", st));

    Table *io = vm_table_new(S, 0, 16);
    for (const LibReg *r = io_funcs; r->name != NULL; r++)
        vm_setfield(S, io, r->name + 3, io_closure(S, r->f, r->name, st));

    /* new_file reads the metatable from upvalue 1 of the running C function, which is not
     * ours here: build the standard handles by hand */
    static const struct { const char *name; int slot; } stds[] = {
        {"stdin", IOS_INPUT}, {"stdout", IOS_OUTPUT}, {"stderr", 0}};
    FILE *files[] = {stdin, stdout, stderr};
    for (int i = 0; i < 3; i++) {
        Userdata *u = vm_newuserdata(S, sizeof(LFile), meta, false);
        LFile *p = (LFile *)u->data;
        p->f = files[i];
        p->kind = FK_STD;
        Value fv = vm_userdata(u);
        vm_setfield(S, io, stds[i].name, fv);
        if (stds[i].slot != 0) vm_table_setint(S, st, stds[i].slot, &fv);
    }

    vm_setglobal(S, "io", vm_table(io));
    if (S->g->loaded != NULL) vm_setfield(S, S->g->loaded, "io", vm_table(io));
    register_loaded(S);
}
