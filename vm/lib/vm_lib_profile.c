/* vm_lib_profile.c: the profile library (`local profile = require "profile"`): profiling a
 * phase of the program from inside it. The mechanism is vm/prof/vm_prof_phase.h; this file
 * is its surface (docs/profile-library.md documents it for users).
 *   profile.start{analyses..., mode = "exact", rate = 1}
 *   profile.stop()
 *   profile.snapshot() -> {methodcount = <json report as tables>, ..., calls = {[name] = n},
 *                          edges = {[caller] = {[callee] = n}}}
 *   profile.write(file, format) -> true | nil, message
 *   profile.reset(), profile.running() -> boolean */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_lib.h"
#include "vm_prof_phase.h"

#define MAX_ANALYSES 8

/* Analyses named by the array part of the start table (strings). */
static int check_analyses(State *S, Table *t, const ProfAnalysis **an) {
    int n = 0;
    for (vm_Integer i = 1;; i++) {
        const Value *v = vm_table_getint(t, i);
        if (v == NULL || v->tt == VT_NIL) break;
        if (v->tt != VT_STR) vm_arg_error(S, 1, "analysis names expected");
        String *s = v->u.s;
        const ProfAnalysis *a = prof_find((s)->data, s->len);
        if (a == NULL) vm_error(S, "profile.start: unknown analysis '%s' (known: %s)", (s)->data, prof_names());
        for (int k = 0; k < n; k++)
            if (an[k] == a) vm_error(S, "profile.start: analysis '%s' given twice", (s)->data);
        if (n == MAX_ANALYSES) vm_error(S, "profile.start: too many analyses");
        an[n++] = a;
    }
    return n;
}

static int pr_start(State *S) {
    const ProfAnalysis *an[MAX_ANALYSES];
    int n = 0;
    if (vm_gettop(S) >= 1 && vm_at(S, 1)->tt != VT_NIL) {
        Table *t = vm_check_table(S, 1);
        n = check_analyses(S, t, an);
        /* mode and rate: only exact, exhaustive counting of the phase exists (a sampled phase
         * would need the countdown of -Xsample.mode=code in the windows' stead) */
        Value mode = vm_getfield(S, vm_at(S, 1), "mode");
        if (mode.tt != VT_NIL && (mode.tt != VT_STR || strcmp((mode.u.s)->data, "exact") != 0))
            vm_error(S, "profile.start: mode must be \"exact\" (the only mode the library has)");
        Value rate = vm_getfield(S, vm_at(S, 1), "rate");
        if (rate.tt != VT_NIL && !((rate.tt == VT_INT && rate.u.i == 1) || (rate.tt == VT_FLOAT && rate.u.n == 1.0)))
            vm_error(S, "profile.start: rate must be 1 (phases are counted exactly, not sampled)");
    }
    const char *err = vm_prof_phase_start(S, an, n);
    if (err != NULL) vm_error(S, "profile.start: %s", err);
    return 0;
}

static int pr_stop(State *S) {
    const char *err = vm_prof_phase_stop(S);
    if (err != NULL) vm_error(S, "profile.stop: %s", err);
    return 0;
}

static int pr_running(State *S) {
    vm_pushbool(S, vm_prof_phase_on());
    return 1;
}

static int pr_reset(State *S) {
    if (!vm_prof_phase_clear(S)) vm_error(S, "profile.reset: out of memory");
    return 0;
}

/* ---- profile.write ---------------------------------------------------------------------- */

static const struct {
    const char *name;
    ProfFormat format;
} formats[] = {{"text", PROF_TEXT},         {"json", PROF_JSON},         {"folded", PROF_FOLDED},
               {"callgrind", PROF_CALLGRIND}, {"annotate", PROF_ANNOTATE}, {"pprof", PROF_PPROF},
               {"html", PROF_HTML}};

static int pr_write(State *S) {
    const char *path = vm_check_string(S, 1)->data;
    const char *fname = vm_opt_string(S, 2, vm_string_newc(S, "text"))->data;
    int k = -1;
    for (int i = 0; i < (int)(sizeof formats / sizeof formats[0]); i++)
        if (strcmp(formats[i].name, fname) == 0) k = i;
    if (k < 0) vm_arg_error(S, 2, "format must be text, json, folded, callgrind, annotate, pprof or html");
    if (!vm_prof_phase_started()) vm_error(S, "profile.write: nothing profiled yet (call profile.start first)");
    FILE *f = fopen(path, "wb");
    if (f == NULL) return vm_file_result(S, false, path);
    int rc = vm_prof_phase_write(S, f, formats[k].format);
    int err = rc != 0 ? EIO : 0;
    if ((fflush(f) != 0 || ferror(f)) && err == 0) err = errno ? errno : EIO;
    if (fclose(f) != 0 && err == 0) err = errno;
    if (err != 0) {
        errno = err;
        return vm_file_result(S, false, path);
    }
    vm_pushbool(S, true);
    return 1;
}

/* ---- profile.snapshot: the JSON reports, read back into tables ------------------------- */

/* A recursive-descent reader of the JSON the analyses write (prof_api.h: one document per
 * analysis, each on its own lines): objects become tables with string keys, arrays tables
 * with keys 1..n, numbers integers when they have no fraction or exponent, null an absent
 * field. Each value read is pushed on the Lua stack, so the tables being built are
 * reachable by the collector. */
typedef struct Reader {
    State *S;
    const char *p, *end;
} Reader;

static _Noreturn void bad(Reader *r) { vm_error(r->S, "profile.snapshot: unreadable report near offset %d", (int)(r->end - r->p)); }

static void skip_ws(Reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')) r->p++;
}

static void read_value(Reader *r, int depth);

static void read_string(Reader *r) {
    if (r->p >= r->end || *r->p != '"') bad(r);
    r->p++;
    size_t cap = 64, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) vm_error(r->S, "profile.snapshot: out of memory");
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        char enc[8];
        int len = 1;
        enc[0] = c;
        if (c == '\\') {
            if (r->p >= r->end) break;
            c = *r->p++;
            switch (c) {
            case 'n': enc[0] = '\n'; break;
            case 't': enc[0] = '\t'; break;
            case 'r': enc[0] = '\r'; break;
            case 'b': enc[0] = '\b'; break;
            case 'f': enc[0] = '\f'; break;
            case 'u': {
                unsigned x = 0;
                for (int i = 0; i < 4 && r->p < r->end; i++) {
                    char h = *r->p++;
                    x = x * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
                }
                len = vm_utf8_encode(enc, x);
                break;
            }
            default: enc[0] = c; break; /* \" \\ \/ */
            }
        }
        if (n + (size_t)len > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL) {
                free(buf);
                vm_error(r->S, "profile.snapshot: out of memory");
            }
            buf = nb;
        }
        memcpy(buf + n, enc, (size_t)len);
        n += (size_t)len;
    }
    if (r->p >= r->end) {
        free(buf);
        bad(r);
    }
    r->p++;
    vm_pushstr(r->S, buf, n);
    free(buf);
}

static void read_number(Reader *r) {
    char *e;
    const char *s = r->p;
    bool frac = false;
    for (const char *q = s; q < r->end && strchr("+-0123456789.eE", *q); q++) frac |= *q == '.' || *q == 'e' || *q == 'E';
    if (frac) {
        double d = strtod(s, &e);
        if (e == s) bad(r);
        vm_pushfloat(r->S, d);
    } else {
        long long i = strtoll(s, &e, 10);
        if (e == s) bad(r);
        vm_pushint(r->S, (vm_Integer)i);
    }
    r->p = e;
}

static bool word(Reader *r, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0) return false;
    r->p += n;
    return true;
}

static void read_value(Reader *r, int depth) {
    State *S = r->S;
    if (depth > 200) bad(r);
    skip_ws(r);
    if (r->p >= r->end) bad(r);
    char c = *r->p;
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        r->p++;
        Table *t = vm_table_new(S, 0, 0);
        vm_push(S, vm_table(t));
        vm_Integer i = 0;
        skip_ws(r);
        if (r->p < r->end && *r->p == (obj ? '}' : ']')) {
            r->p++;
            return;
        }
        for (;;) {
            skip_ws(r);
            if (obj) {
                read_string(r); /* the key, on the stack */
                skip_ws(r);
                if (r->p >= r->end || *r->p != ':') bad(r);
                r->p++;
                read_value(r, depth + 1);
                Value *k = vm_at(S, vm_gettop(S) - 1), *v = vm_at(S, vm_gettop(S));
                if (v->tt != VT_NIL) vm_table_set(S, t, k, v);
                vm_pop(S, 2);
            } else {
                read_value(r, depth + 1);
                Value *v = vm_at(S, vm_gettop(S));
                i++;
                if (v->tt != VT_NIL) vm_table_setint(S, t, i, v);
                vm_pop(S, 1);
            }
            skip_ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            if (r->p < r->end && *r->p == (obj ? '}' : ']')) {
                r->p++;
                return;
            }
            bad(r);
        }
    }
    if (c == '"') {
        read_string(r);
        return;
    }
    if (word(r, "true")) {
        vm_pushbool(S, true);
        return;
    }
    if (word(r, "false")) {
        vm_pushbool(S, false);
        return;
    }
    if (word(r, "null")) {
        vm_pushnil(S);
        return;
    }
    read_number(r);
}

static Value field(State *S, const Value *t, const char *k) { return t->tt == VT_TABLE ? vm_getfield(S, t, k) : vm_nil(); }

/* snapshot.calls = {[function] = calls} from methodcount's report at [rep]. */
static void add_calls(State *S, Table *snap, const Value *rep) {
    Value fns = field(S, rep, "functions");
    if (fns.tt != VT_TABLE) return;
    Table *calls = vm_table_new(S, 0, 0);
    vm_push(S, vm_table(calls));
    for (vm_Integer i = 1;; i++) {
        const Value *e = vm_table_getint(fns.u.t, i);
        if (e == NULL || e->tt != VT_TABLE) break;
        Value name = field(S, e, "function"), n = field(S, e, "calls");
        if (name.tt == VT_STR) vm_table_set(S, calls, &name, &n);
    }
    vm_setfield(S, snap, "calls", vm_table(calls));
    vm_pop(S, 1);
}

/* snapshot.edges = {[caller] = {[callee] = calls}} from callgraph's report at [rep]. */
static void add_edges(State *S, Table *snap, const Value *rep) {
    Value es = field(S, rep, "edges");
    if (es.tt != VT_TABLE) return;
    Table *edges = vm_table_new(S, 0, 0);
    vm_push(S, vm_table(edges));
    for (vm_Integer i = 1;; i++) {
        const Value *e = vm_table_getint(es.u.t, i);
        if (e == NULL || e->tt != VT_TABLE) break;
        Value from = field(S, e, "caller"), to = field(S, e, "callee"), n = field(S, e, "calls");
        if (from.tt != VT_STR || to.tt != VT_STR) continue;
        const Value *row = vm_table_get(edges, &from);
        Table *rt;
        if (row == NULL || row->tt != VT_TABLE) {
            rt = vm_table_new(S, 0, 0);
            Value rv = vm_table(rt);
            vm_push(S, rv);
            vm_table_set(S, edges, &from, &rv);
            vm_pop(S, 1);
        } else {
            rt = row->u.t;
        }
        vm_table_set(S, rt, &to, &n);
    }
    vm_setfield(S, snap, "edges", vm_table(edges));
    vm_pop(S, 1);
}

static int pr_snapshot(State *S) {
    if (!vm_prof_phase_started()) vm_error(S, "profile.snapshot: nothing profiled yet (call profile.start first)");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) vm_error(S, "profile.snapshot: out of memory");
    int rc = vm_prof_phase_write(S, f, PROF_JSON);
    if (fclose(f) != 0 || rc != 0) {
        free(text);
        vm_error(S, "profile.snapshot: the report could not be made");
    }
    Table *snap = vm_table_new(S, 0, 4);
    vm_push(S, vm_table(snap));
    int top = vm_gettop(S);
    Reader r = {S, text, text + len};
    /* Read every document before freeing the text: an error inside leaks it, as the reports
     * the runtime writes are always well formed (a bad one is a bug, said loudly). */
    for (;;) {
        skip_ws(&r);
        if (r.p >= r.end) break;
        read_value(&r, 0);
        Value *rep = vm_at(S, vm_gettop(S));
        Value name = field(S, rep, "analysis");
        if (name.tt == VT_STR) {
            vm_table_set(S, snap, &name, rep);
            const char *nm = (name.u.s)->data;
            if (strcmp(nm, "methodcount") == 0) add_calls(S, snap, vm_at(S, vm_gettop(S)));
            if (strcmp(nm, "callgraph") == 0) add_edges(S, snap, vm_at(S, vm_gettop(S)));
        }
        vm_settop(S, top);
    }
    free(text);
    return 1;
}

static const LibReg profilelib[] = {
    {"start", pr_start}, {"stop", pr_stop},   {"snapshot", pr_snapshot}, {"write", pr_write},
    {"reset", pr_reset}, {"running", pr_running}, {NULL, NULL},
};

/* require "profile" finds it in package.loaded; not a global (lua5.4 has none of that name,
 * and a program that does not ask for it sees no difference at all). */
void vm_open_profile(State *S) {
    Table *t = vm_newlib(S, profilelib);
    if (S->g->loaded) vm_setfield(S, S->g->loaded, "profile", vm_table(t));
}
