/* vm_main.c: the `tandem` command line: run a script or bytecode file, compile to bytecode,
 * dump bytecode, and the -X options. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_api.h"
#include "jit_api.h"
#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_lib.h"
#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_thread.h"

#define EXIT_USAGE 2

/* ======================================================================
 * -X options: one table, so parsing, validation and `tandem -X` agree.
 * ====================================================================== */

typedef struct XOption {
    const char *name;
    const char *values;   /* valid values, for messages and the listing */
    const char *def;      /* default */
    const char *help;
} XOption;

static const XOption xoptions[] = {
    {"dump", "bytecode, jit", "(none)", "bytecode: print a listing of the compiled bytecode instead of running; jit: run with -Xjit=on and print each compiled function's machine code with its bytecode on stderr"},
    {"jit", "on, off", "on", "compile each function to x86-64 code on its first call (jit/README.md); off: interpret only. While profiling, compiled code emits every analysis's events (only the path oracle turns it off)"},
    {"jit.perfmap", "(no value)", "off", "write /tmp/perf-PID.map naming the compiled functions for perf report"},
    {"gc.stress", "N (collect every N allocations; 1 if no value)", "0", "force frequent collections"},
    {"gc.maxheap", "size in bytes with optional k, m or g suffix", "0 (no cap)", "cap the heap; beyond it allocation raises \"not enough memory\""},
    {"profile", "methodcount, callgraph, calltree, pathprof, cachesim (comma-separated)", "(none)", "profile the run; the report is written when the program ends"},
    {"analysis", "concurrent, sequential", "concurrent", "concurrent: analyzer thread fed through a CAB; sequential: inline"},
    {"cab.size", "size in bytes with optional k, m or g suffix; a multiple of cab.chunk, at least 3 chunks", "2m", "CAB ring size per native thread"},
    {"cab.chunk", "power of two, at least 4k, with optional k, m or g suffix", "4 x L1d (128k if unknown)", "CAB chunk size (the analyzer's unit of work)"},
    {"profile.out", "file name", "(stderr)", "where the profile report goes (written atomically)"},
    {"profile.format", "text, json, folded, callgrind", "text", "report format: text for people, json for scripts, folded stacks (calltree) for flame graphs, callgrind (methodcount, callgraph) for kcachegrind"},
    {"profile.stage", "instrument, enqueue, communicate, full", "full", "how far events go: produced only, enqueued (no analyzer), dequeued without analysis, analysed"},
    {"buffer", "cab, nway, ffwd", "cab", "transport between producers and analyzers: CAB, N-way buffering, FastForward"},
    {"cab.mode", "exhaustive, sampling", "exhaustive", "exhaustive: every event analysed (producers may block); sampling: a random fraction of the bursts, never blocks"},
    {"sample.rate", "fraction in (0, 1], or a percentage such as 5%", "0.05", "sampling: fraction of the events analysed (in bursts chosen at random)"},
    {"sample.burst", "bytes (multiple of 8) with optional k suffix", "64", "sampling: the bursts the events are chosen in"},
    {"cachesim.l1", "SIZE:WAYS, e.g. 32k:4 (64-byte lines)", "32k:4", "cachesim: the simulated L1 data cache"},
    {"cachesim.l2", "SIZE:WAYS, e.g. 512k:8 (inclusive of L1)", "512k:8", "cachesim: the simulated L2 cache"},
    {"cachesim.policy", "fifo, lru", "fifo", "cachesim: replacement policy"},
    {"test.analyzer_delay", "microseconds (0-1000000)", "0", "testing: each analyzer sleeps this long per chunk"},
    {"threads", "native, green", "native", "language threads: native threads (1:1) or green threads on carriers (N:M)"},
    {"carriers", "N >= 1", "cores left after the analyzer threads, at least 1", "carrier threads for -Xthreads=green"},
    {"green.slice", "time in ms (1-10000)", "10", "time slice of a green thread before it is preempted at a poll"},
    {"analyzers", "N >= 1", "1", "analyzer threads for concurrent analysis"},
    {"affinity", "auto, none", "auto", "auto: pin application threads and keep cores for the analyzers (hwloc)"},
    {"stats", "(no value)", "off", "print the topology, the thread placement and run statistics on stderr at exit"},
    {NULL, NULL, NULL, NULL},
};

typedef struct Options {
    bool dump_bytecode;
    JitOptions jit;
    unsigned gc_stress;
    size_t gc_maxheap;
    const ProfAnalysis *profile; /* NULL: no profiling; else the first of analyses */
    const ProfAnalysis *analyses[VM_PROF_MAX_ANALYSES];
    int nanalyses;
    int stage;                   /* VmProfStage + 1; 0: default */
    int transport;               /* CabTransport */
    bool sampling;
    double sample_rate;          /* 0: default */
    size_t sample_burst;         /* 0: default */
    unsigned test_delay_us;
    bool sequential;
    size_t cab_size, cab_chunk;  /* 0: default */
    const char *profile_out;
    bool green;
    int carriers;                /* 0: default */
    double slice_ms;             /* 0: default */
    int analyzers;               /* 0: default (1) */
    bool affinity_none;
    bool stats;
    int format;                  /* ProfFormat */
} Options;

/* Integer option value in [lo, hi]; false if malformed. */
static bool parse_int(const char *s, long lo, long hi, long *out) {
    if (s == NULL || *s == '\0') return false;
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (*end != '\0' || errno != 0 || n < lo || n > hi) return false;
    *out = n;
    return true;
}

/* "64m" -> 67108864; false if malformed. */
static bool parse_size(const char *s, size_t *out) {
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') return false;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno) return false;
    unsigned long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1ull << 10, end++;
    else if (*end == 'm' || *end == 'M') mul = 1ull << 20, end++;
    else if (*end == 'g' || *end == 'G') mul = 1ull << 30, end++;
    if (*end != '\0' || n > (~0ull) / mul) return false;
    *out = (size_t)(n * mul);
    return true;
}

static void list_xoptions(void) {
    printf("-X options (-Xname=value):\n");
    for (const XOption *o = xoptions; o->name; o++)
        printf("  -X%-12s %s\n  %14s values: %s; default: %s\n", o->name, o->help, "", o->values, o->def);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: tandem [options] script [args...]\n"
            "       tandem -c script.lua [-o out.tbc]\n"
            "options:\n"
            "  -e chunk      run the string 'chunk' (before the script, if any)\n"
            "  -c file       compile file to bytecode (output: -o, default file with .tbc)\n"
            "  -o file       output file for -c\n"
            "  -X            list the -X options\n"
            "  -Xname=value  set a runtime option\n"
            "  -v            print the version\n"
            "  -h            print this help\n"
            "  script        a Lua source file or a Tandem bytecode file; '-' reads stdin\n");
}

/* Parse one -X option. Returns false after printing why it is bad. */
static bool parse_xoption(const char *arg, Options *opt) {
    const char *body = arg + 2;
    const char *eq = strchr(body, '=');
    size_t nlen = eq ? (size_t)(eq - body) : strlen(body);
    const char *val = eq ? eq + 1 : NULL;
    const XOption *o = xoptions;
    for (; o->name; o++)
        if (strlen(o->name) == nlen && strncmp(o->name, body, nlen) == 0) break;
    if (o->name == NULL) {
        fprintf(stderr, "tandem: unknown option '%s'; valid -X options:", arg);
        for (const XOption *p = xoptions; p->name; p++) fprintf(stderr, " -X%s", p->name);
        fprintf(stderr, " (tandem -X lists them)\n");
        return false;
    }
    if (strcmp(o->name, "dump") == 0) {
        if (val != NULL && strcmp(val, "bytecode") == 0) {
            opt->dump_bytecode = true;
        } else if (val != NULL && strcmp(val, "jit") == 0) {
            opt->jit.dump = true;
            opt->jit.on = true;
        } else {
            fprintf(stderr, "tandem: bad value '%s' for -Xdump; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strcmp(o->name, "jit") == 0) {
        if (val != NULL && strcmp(val, "on") == 0)
            opt->jit.on = true;
        else if (val != NULL && strcmp(val, "off") == 0)
            opt->jit.on = false;
        else {
            fprintf(stderr, "tandem: bad value '%s' for -Xjit; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strcmp(o->name, "jit.perfmap") == 0) {
        if (val != NULL) {
            fprintf(stderr, "tandem: -Xjit.perfmap takes no value\n");
            return false;
        }
        opt->jit.perfmap = true;
    } else if (strcmp(o->name, "gc.stress") == 0) {
        if (val == NULL) {
            opt->gc_stress = 1;
        } else {
            char *end;
            errno = 0;
            unsigned long n = strtoul(val, &end, 10);
            if (*val == '\0' || *end != '\0' || errno != 0 || n > 1000000000ul || val[0] == '-') {
                fprintf(stderr, "tandem: bad value '%s' for -Xgc.stress; valid values: %s\n", val, o->values);
                return false;
            }
            opt->gc_stress = (unsigned)n;
        }
    } else if (strcmp(o->name, "gc.maxheap") == 0) {
        if (val == NULL || !parse_size(val, &opt->gc_maxheap)) {
            fprintf(stderr, "tandem: bad value '%s' for -Xgc.maxheap; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strcmp(o->name, "profile") == 0) {
        if (val == NULL || *val == '\0') {
            fprintf(stderr, "tandem: -Xprofile needs a value; valid analyses: %s\n", prof_names());
            return false;
        }
        for (const char *p = val; *p;) {
            size_t n = strcspn(p, ",");
            const ProfAnalysis *a = prof_find(p, n);
            if (a == NULL) {
                fprintf(stderr, "tandem: unknown analysis '%.*s' in -Xprofile; valid analyses: %s\n", (int)n, p,
                        prof_names());
                return false;
            }
            bool dup = false;
            for (int k = 0; k < opt->nanalyses; k++) dup |= opt->analyses[k] == a;
            if (!dup) {
                if (opt->nanalyses == VM_PROF_MAX_ANALYSES) {
                    fprintf(stderr, "tandem: too many analyses in -Xprofile\n");
                    return false;
                }
                opt->analyses[opt->nanalyses++] = a;
            }
            opt->profile = opt->analyses[0];
            p += n;
            if (*p == ',') p++;
        }
    } else if (strcmp(o->name, "analysis") == 0) {
        if (val != NULL && strcmp(val, "concurrent") == 0)
            opt->sequential = false;
        else if (val != NULL && strcmp(val, "sequential") == 0)
            opt->sequential = true;
        else {
            fprintf(stderr, "tandem: bad value '%s' for -Xanalysis; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strcmp(o->name, "cab.size") == 0 || strcmp(o->name, "cab.chunk") == 0) {
        size_t *dst = o->name[4] == 's' ? &opt->cab_size : &opt->cab_chunk;
        const char *err = NULL;
        if (val == NULL)
            err = "cab: no size given";
        else if (cab_size_parse(val, dst, &err) && *dst == 0)
            err = "cab: size must not be 0";
        if (err != NULL) {
            fprintf(stderr, "tandem: bad value '%s' for -X%s: %s; valid values: %s\n", val ? val : "", o->name,
                    err, o->values);
            return false;
        }
    } else if (strcmp(o->name, "profile.out") == 0) {
        if (val == NULL || *val == '\0') {
            fprintf(stderr, "tandem: -Xprofile.out needs a file name\n");
            return false;
        }
        opt->profile_out = val;
    } else if (strcmp(o->name, "profile.format") == 0) {
        static const char *formats[] = {"text", "json", "folded", "callgrind", NULL};
        int k = 0;
        while (formats[k] && (val == NULL || strcmp(formats[k], val) != 0)) k++;
        if (formats[k] == NULL) {
            fprintf(stderr, "tandem: bad value '%s' for -Xprofile.format; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
        opt->format = k;
    } else if (strcmp(o->name, "profile.stage") == 0 || strcmp(o->name, "buffer") == 0 ||
               strcmp(o->name, "cab.mode") == 0) {
        static const char *stages[] = {"instrument", "enqueue", "communicate", "full", NULL};
        static const char *buffers[] = {"cab", "nway", "ffwd", NULL};
        static const char *modes[] = {"exhaustive", "sampling", NULL};
        const char **names = o->name[0] == 'p' ? stages : o->name[0] == 'b' ? buffers : modes;
        int k = 0;
        while (names[k] && (val == NULL || strcmp(names[k], val) != 0)) k++;
        if (names[k] == NULL) {
            fprintf(stderr, "tandem: bad value '%s' for -X%s; valid values: %s\n", val ? val : "", o->name, o->values);
            return false;
        }
        if (o->name[0] == 'p')
            opt->stage = k + 1; /* 0: not given */
        else if (o->name[0] == 'b')
            opt->transport = k;
        else
            opt->sampling = k == 1;
    } else if (strcmp(o->name, "sample.rate") == 0) {
        char *end = NULL;
        double r = val ? strtod(val, &end) : 0;
        if (val && end && *end == '%' && end[1] == '\0') {
            r /= 100.0;
            end++;
        }
        if (val == NULL || end == val || *end != '\0' || !(r > 0 && r <= 1)) {
            fprintf(stderr, "tandem: bad value '%s' for -Xsample.rate; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
        opt->sample_rate = r;
    } else if (strcmp(o->name, "sample.burst") == 0) {
        const char *err = NULL;
        if (val == NULL || !cab_size_parse(val, &opt->sample_burst, &err) || opt->sample_burst == 0 ||
            opt->sample_burst % 8 != 0) {
            fprintf(stderr, "tandem: bad value '%s' for -Xsample.burst; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strncmp(o->name, "cachesim.", 9) == 0) {
        const char *err = NULL;
        const char *l1 = NULL, *l2 = NULL, *pol = NULL;
        if (o->name[9] == 'p')
            pol = val ? val : "";
        else if (o->name[10] == '1')
            l1 = val ? val : "";
        else
            l2 = val ? val : "";
        if (prof_cachesim_configure(l1, l2, pol, &err) != 0) {
            fprintf(stderr, "tandem: bad value '%s' for -X%s: %s; valid values: %s\n", val ? val : "", o->name,
                    err ? err : "invalid", o->values);
            return false;
        }
    } else if (strcmp(o->name, "test.analyzer_delay") == 0) {
        long n;
        if (!parse_int(val, 0, 1000000, &n)) {
            fprintf(stderr, "tandem: bad value '%s' for -Xtest.analyzer_delay; valid values: %s\n", val ? val : "",
                    o->values);
            return false;
        }
        opt->test_delay_us = (unsigned)n;
    } else if (strcmp(o->name, "threads") == 0) {
        if (val != NULL && strcmp(val, "native") == 0)
            opt->green = false;
        else if (val != NULL && strcmp(val, "green") == 0)
            opt->green = true;
        else {
            fprintf(stderr, "tandem: bad value '%s' for -Xthreads; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strcmp(o->name, "carriers") == 0 || strcmp(o->name, "green.slice") == 0) {
        bool carriers = o->name[0] == 'c';
        long n;
        if (!parse_int(val, 1, carriers ? 1024 : 10000, &n)) {
            fprintf(stderr, "tandem: bad value '%s' for -X%s; valid values: %s\n", val ? val : "", o->name, o->values);
            return false;
        }
        if (carriers)
            opt->carriers = (int)n;
        else
            opt->slice_ms = (double)n;
    } else if (strcmp(o->name, "analyzers") == 0) {
        long n;
        if (!parse_int(val, 1, CAB_MAX_PLACED, &n)) {
            fprintf(stderr, "tandem: bad value '%s' for -Xanalyzers; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
        opt->analyzers = (int)n;
    } else if (strcmp(o->name, "affinity") == 0) {
        if (val != NULL && strcmp(val, "auto") == 0)
            opt->affinity_none = false;
        else if (val != NULL && strcmp(val, "none") == 0)
            opt->affinity_none = true;
        else {
            fprintf(stderr, "tandem: bad value '%s' for -Xaffinity; valid values: %s\n", val ? val : "", o->values);
            return false;
        }
    } else if (strcmp(o->name, "stats") == 0) {
        if (val != NULL) {
            fprintf(stderr, "tandem: -Xstats takes no value\n");
            return false;
        }
        opt->stats = true;
    }
    return true;
}

/* ======================================================================
 * Files
 * ====================================================================== */

/* Whole file (or stdin for "-") in a malloc'd buffer; NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) return NULL;
    for (;;) {
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int err = ferror(f);
    if (f != stdin) fclose(f);
    if (err) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

static char *chunkname_for(const char *path) {
    size_t n = strlen(path);
    char *c = malloc(n + 2);
    if (c == NULL) abort();
    if (strcmp(path, "-") == 0) {
        strcpy(c, "=stdin");
    } else {
        c[0] = '@';
        memcpy(c + 1, path, n + 1);
    }
    return c;
}

/* ======================================================================
 * Modes
 * ====================================================================== */

typedef struct CompileJob {
    const char *buf;
    size_t len;
    const char *chunkname;
    Proto *p;
    CompileError err;
} CompileJob;

static void f_compile(State *S, void *ud) {
    CompileJob *j = ud;
    j->p = vm_compile(S, j->buf, j->len, j->chunkname, &j->err);
}

static void print_syntax_error(const char *path, const CompileError *e) {
    fprintf(stderr, "%s:%d:%d: %s\n", strcmp(path, "-") == 0 ? "stdin" : path, e->line, e->col, e->msg);
}

/* Compile [path]; NULL after reporting the problem. */
static Proto *compile_file(State *S, const char *path) {
    size_t len;
    char *buf = read_file(path, &len);
    if (buf == NULL) {
        fprintf(stderr, "tandem: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    CompileJob j = {buf, len, chunkname_for(path), NULL, {0, 0, {0}}};
    if (len >= VM_BC_SIGLEN && memcmp(buf, VM_BC_SIGNATURE, VM_BC_SIGLEN) == 0) {
        char why[256];
        j.p = vm_bytecode_load(S, (const unsigned char *)buf, len, why, sizeof why);
        if (j.p == NULL) fprintf(stderr, "tandem: %s: bad bytecode: %s\n", path, why);
        free(buf);
        free((char *)j.chunkname);
        return j.p;
    }
    int st = vm_protect(S, f_compile, &j);
    free(buf);
    free((char *)j.chunkname);
    if (st != VM_OK) {
        fprintf(stderr, "tandem: %s: %s\n", path, vm_last_error(S));
        return NULL;
    }
    if (j.p == NULL) print_syntax_error(path, &j.err);
    return j.p;
}

static int do_compile(State *S, const char *in, const char *out) {
    Proto *p = compile_file(S, in);
    if (p == NULL) return 1;
    char *outname = NULL;
    if (out == NULL) {
        size_t n = strlen(in);
        outname = malloc(n + 5);
        if (outname == NULL) abort();
        strcpy(outname, in);
        if (n > 4 && strcmp(outname + n - 4, ".lua") == 0) outname[n - 4] = '\0';
        strcat(outname, ".tbc");
        out = outname;
    }
    size_t len;
    unsigned char *bytes = vm_bytecode_dump(p, &len, false);
    if (bytes == NULL) {
        fprintf(stderr, "tandem: out of memory writing %s\n", out);
        return 1;
    }
    FILE *f = fopen(out, "wb");
    if (f == NULL || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "tandem: cannot write %s: %s\n", out, strerror(errno));
        return 1;
    }
    free(bytes);
    free(outname);
    return 0;
}

/* Sets the global 'arg': arg[0] = script, arg[1..] = its arguments, negative indices for
 * the interpreter and its options. */
typedef struct ArgJob {
    int argc;
    char **argv;
    int script;
} ArgJob;

static void f_setargs(State *S, void *ud) {
    ArgJob *a = ud;
    Table *t = vm_table_new(S, (uint32_t)(a->argc - a->script), 4);
    for (int i = 0; i < a->argc; i++) {
        Value v = vm_str(vm_string_newc(S, a->argv[i]));
        vm_table_setint(S, t, (vm_Integer)(i - a->script), &v);
    }
    vm_setglobal(S, "arg", vm_table(t));
}

static int report_run(State *S, int status, const char *tb, const char *path) {
    if (status == VM_OK) return 0;
    int line, col;
    const char *msg;
    if (status == VM_ERRSYNTAX && vm_last_compile_error(&line, &col, &msg)) {
        fprintf(stderr, "%s:%d:%d: %s\n", path, line, col, msg);
        return 1;
    }
    fprintf(stderr, "tandem: %s\n", vm_last_error(S));
    if (tb) fprintf(stderr, "%s\n", tb);
    return 1;
}

static int run_buffer(State *S, const char *buf, size_t len, const char *chunkname, const char *path,
                      int nargs, char **args) {
    char *tb = NULL;
    int st = vm_run_buffer(S, buf, len, chunkname, nargs, args, &tb);
    fflush(stdout);
    int code = report_run(S, st, tb, path);
    free(tb);
    return code;
}

/* The program has ended with [code]: write the profile (if any); a profile that cannot be
 * written turns success into failure. */
static State *main_state;
static bool print_stats;
static CabPlacement placement;
static bool pinned;

/* -Xstats: what the run looked like. */
static void stats_report(void) {
    char topo[512];
    cab_topology_describe(topo, sizeof topo);
    fprintf(stderr, "[stats] %s\n", topo);
    fprintf(stderr, "[stats] gc: %llu collections, %.1f MB in use at exit\n", (unsigned long long)gc_count(),
            (double)gc_heap_used() / (1 << 20));
    const VmThreadOptions *to = vm_threads_options();
    if (to->model == VM_THREADS_GREEN)
        fprintf(stderr, "[stats] threads: green on %d carrier(s), slice %.0f ms\n", to->carriers, to->slice * 1000);
    else
        fprintf(stderr, "[stats] threads: native\n");
    if (!pinned) {
        fprintf(stderr, "[stats] placement: not pinned (%s)\n",
                placement.ncores == 0 ? "topology unknown" : placement.ncores < 2 ? "one core" :
                placement.nanalyzers == 0 ? "no analyzer threads" : "-Xaffinity=none");
        return;
    }
    fprintf(stderr, "[stats] placement: application threads on CPU(s)");
    for (int i = 0; i < placement.napp; i++) fprintf(stderr, "%s%d", i ? "," : " ", placement.app_cpus[i]);
    fprintf(stderr, "\n");
    for (int i = 0; i < placement.nanalyzers; i++)
        fprintf(stderr, "[stats] placement: analyzer %d on CPU %d (shares %s with CPU %d)\n", i,
                placement.analyzer_cpus[i], cab_topology_shared_cache(placement.analyzer_cpus[i], placement.app_cpus[0]),
                placement.app_cpus[0]);
}

static int finish(int code) {
    if (main_state) vm_threads_shutdown(main_state);
    if (code != 0) vm_prof_mark_partial(); /* the program stopped at an uncaught error */
    if (vm_prof_finish() != 0 && code == 0) code = 1;
    if (print_stats) {
        stats_report();
        vm_prof_print_stats(stderr);
    }
    return code;
}

int main(int argc, char **argv) {
    Options opt = {0};
    opt.jit.on = true; /* -Xjit=on is the default (jit/README.md) */
    const char *compile_in = NULL, *compile_out = NULL;
    const char *chunks[32];
    int nchunks = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || strcmp(a, "-") == 0) break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-X") == 0) {
            list_xoptions();
            return 0;
        } else if (strncmp(a, "-X", 2) == 0) {
            if (!parse_xoption(a, &opt)) return EXIT_USAGE;
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "-e") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tandem: option '%s' needs an argument\n", a);
                usage(stderr);
                return EXIT_USAGE;
            }
            if (a[1] == 'c')
                compile_in = argv[++i];
            else if (a[1] == 'o')
                compile_out = argv[++i];
            else if (nchunks < 32)
                chunks[nchunks++] = argv[++i];
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
            printf("Tandem 0.1 (Lua 5.4 compatible)\n");
            return 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tandem: unknown option '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (compile_out && !compile_in) {
        fprintf(stderr, "tandem: -o needs -c\n");
        return EXIT_USAGE;
    }
    /* Placement: with concurrent analysis, keep cores for the analyzers and run the
     * application (and every thread it starts: affinity is inherited) on the others. */
    int nanalyzers = opt.analyzers ? opt.analyzers : 1;
    cab_topology_plan(opt.profile && !opt.sequential ? nanalyzers : 0, &placement);
    if (!opt.affinity_none && placement.napp > 0 && placement.nanalyzers > 0)
        pinned = cab_topology_bind_self_set(placement.app_cpus, placement.napp) == 0;
    print_stats = opt.stats;
    VmProfOptions popt = {{NULL}, opt.nanalyses, opt.sequential, {0}, opt.profile_out, nanalyzers,
                          pinned ? placement.analyzer_cpus : NULL, (VmProfStage)(opt.stage ? opt.stage - 1 : VM_STAGE_FULL),
                          opt.test_delay_us, (ProfFormat)opt.format};
    for (int k = 0; k < opt.nanalyses; k++) popt.analyses[k] = opt.analyses[k];
    if (pinned && nanalyzers > placement.nanalyzers) popt.analyzer_cpus = NULL; /* more analyzers than cores */
    if (opt.cab_size || opt.cab_chunk || (opt.profile && !opt.sequential)) {
        cab_config_default(&popt.cab);
        if (opt.cab_size) popt.cab.ring_bytes = opt.cab_size;
        if (opt.cab_chunk) popt.cab.chunk_bytes = opt.cab_chunk;
        popt.cab.transport = (CabTransport)opt.transport;
        if (opt.sampling) {
            popt.cab.mode = CAB_MODE_SAMPLING;
            popt.cab.sample_rate = opt.sample_rate ? opt.sample_rate : 0.05;
        }
        if (opt.sample_burst) popt.cab.burst_bytes = opt.sample_burst;
        const char *msg = cab_config_check(&popt.cab);
        if (msg != NULL) {
            fprintf(stderr, "tandem: bad -Xcab.size/-Xcab.chunk: %s\n", msg);
            return EXIT_USAGE;
        }
    }
    VmThreadOptions topt = {opt.green ? VM_THREADS_GREEN : VM_THREADS_NATIVE, opt.carriers,
                            (opt.slice_ms ? opt.slice_ms : 10.0) / 1000.0};
    if (topt.carriers == 0) {
        /* The cores left after the analyzer threads, at least one. */
        long cores = placement.ncores > 0 ? placement.ncores : sysconf(_SC_NPROCESSORS_ONLN);
        long left = cores - (opt.profile && !opt.sequential ? nanalyzers : 0);
        topt.carriers = left > 1 ? (int)left : 1;
    }
    vm_threads_configure(&topt);
    State *S = vm_state_new();
    main_state = S;
    if (opt.gc_stress) gc_set_stress(opt.gc_stress);
    if (opt.gc_maxheap) gc_set_max_heap(opt.gc_maxheap);

    if (compile_in) return do_compile(S, compile_in, compile_out);

    if (i >= argc && nchunks == 0) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *script = i < argc ? argv[i] : NULL;
    if (!opt.dump_bytecode) {
        /* Profile from the first chunk run to the end of the program, whatever the end. */
        const char *err = NULL;
        if (!vm_prof_start(&popt, &err)) {
            fprintf(stderr, "tandem: cannot start the profiler: %s\n", err ? err : "unknown error");
            return 1;
        }
    }
    /* Compiled code emits the events of every analysis (jit/README.md); the path oracle
     * (a debug loop of the interpreter) runs without it. */
    if (opt.jit.on && opt.dump_bytecode) opt.jit.on = false;
    if (opt.jit.on && vm_pathprof_oracle) opt.jit.on = false;
    jit_configure(&opt.jit);
    ArgJob aj = {argc, argv, script ? i : argc};
    if (vm_protect(S, f_setargs, &aj) != VM_OK) {
        fprintf(stderr, "tandem: %s\n", vm_last_error(S));
        return finish(1);
    }
    for (int c = 0; c < nchunks; c++) {
        int code = run_buffer(S, chunks[c], strlen(chunks[c]), "=(command line)", "(command line)", 0, NULL);
        if (code) return finish(code);
    }
    if (script == NULL) return finish(0);

    if (opt.dump_bytecode) {
        Proto *p = compile_file(S, script);
        if (p == NULL) return 1;
        vm_bytecode_list(stdout, p);
        return 0;
    }
    if (strcmp(script, "-") != 0) {
        char *dup = strdup(script);
        S->g->script_dir = strdup(dirname(dup));
        free(dup);
    }
    size_t len;
    char *buf = read_file(script, &len);
    if (buf == NULL) {
        fprintf(stderr, "tandem: cannot open %s: %s\n", script, strerror(errno));
        return finish(1);
    }
    size_t slen = strlen(script);
    if (slen > 4 && strcmp(script + slen - 4, ".tbc") == 0 &&
        (len < VM_BC_SIGLEN || memcmp(buf, VM_BC_SIGNATURE, VM_BC_SIGLEN) != 0)) {
        /* A .tbc file is bytecode: an empty or foreign one is refused, not run as source. */
        char why[256];
        if (vm_bytecode_load(S, (const unsigned char *)buf, len, why, sizeof why) == NULL) {
            fprintf(stderr, "tandem: %s: bad bytecode: %s\n", script, why);
            free(buf);
            return finish(1);
        }
    }
    char *chunkname = chunkname_for(script);
    int code = run_buffer(S, buf, len, chunkname, script, argc - i - 1, argv + i + 1);
    free(buf);
    free(chunkname);
    return finish(code);
}
