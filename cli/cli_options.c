/* cli_options.c: the -X options: one table, each row with its name, valid values, default,
 * help and the function that parses its value, so parsing, validation and `tandem -X` agree. */
#include <string.h>

#include "cli.h"

typedef struct XOption XOption;

/* Parse [val] (NULL when the option has no "=") for row [o] into [opt]; false after printing
 * why it is bad (usually through bad_value). */
typedef bool (*XParse)(const XOption *o, const char *val, Options *opt);

struct XOption {
    const char *name;
    const char *values;   /* valid values, for messages and the listing */
    const char *def;      /* default */
    const char *help;
    XParse parse;
};

/* The message every rejected value gets: the option, the value, why (if more can be said
 * than the valid values) and the valid values. */
static bool bad_value(const XOption *o, const char *val, const char *why) {
    fprintf(stderr, "tandem: bad value '%s' for -X%s%s%s; valid values: %s\n", val ? val : "", o->name,
            why ? ": " : "", why ? why : "", o->values);
    return false;
}

static bool no_value(const XOption *o, const char *val) {
    if (val == NULL) return true;
    fprintf(stderr, "tandem: -X%s takes no value\n", o->name);
    return false;
}

/* The index of [val] in the NULL-terminated [names], or -1. */
static int choice(const char *val, const char *const *names) {
    for (int k = 0; val != NULL && names[k] != NULL; k++)
        if (strcmp(names[k], val) == 0) return k;
    return -1;
}

/* ---- one parser per row ------------------------------------------------------------------ */

static bool x_dump(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"bytecode", "jit", NULL};
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
#if !TANDEM_JIT
    if (k == 1) return bad_value(o, val, "this tandem is built without the JIT (-DTANDEM_JIT=OFF)");
#endif
    if (k == 0) opt->dump_bytecode = true;
    else opt->jit_dump = opt->jit_on = true;
    return true;
}

static bool x_jit(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"off", "on", NULL};
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
#if !TANDEM_JIT
    if (k == 1) return bad_value(o, val, "this tandem is built without the JIT (-DTANDEM_JIT=OFF)");
#endif
    opt->jit_on = k == 1;
    return true;
}

static bool x_jit_perfmap(const XOption *o, const char *val, Options *opt) {
    if (!no_value(o, val)) return false;
    opt->jit_perfmap = true;
    return true;
}

static bool x_gc_stress(const XOption *o, const char *val, Options *opt) {
    uint64_t n = 1;
    if (val != NULL && !cli_parse_count(val, 0, 1000000000, &n)) return bad_value(o, val, NULL);
    opt->gc_stress = (unsigned)n;
    return true;
}

static bool x_gc_maxheap(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_size(val, 0, SIZE_MAX, &n)) return bad_value(o, val, NULL);
    opt->gc_maxheap = (size_t)n;
    return true;
}

static bool x_profile(const XOption *o, const char *val, Options *opt) {
    if (val == NULL || *val == '\0') {
        fprintf(stderr, "tandem: -X%s needs a value; valid analyses: %s\n", o->name, prof_names());
        return false;
    }
    for (const char *p = val; *p;) {
        size_t n = strcspn(p, ",");
        const ProfAnalysis *a = prof_find(p, n);
        if (a == NULL) {
            fprintf(stderr, "tandem: unknown analysis '%.*s' in -X%s; valid analyses: %s\n", (int)n, p, o->name,
                    prof_names());
            return false;
        }
        bool dup = false;
        for (int k = 0; k < opt->nanalyses; k++) dup |= opt->analyses[k] == a;
        if (!dup) {
            if (opt->nanalyses == VM_PROF_MAX_ANALYSES) {
                fprintf(stderr, "tandem: too many analyses in -X%s\n", o->name);
                return false;
            }
            opt->analyses[opt->nanalyses++] = a;
        }
        opt->profile = opt->analyses[0];
        p += n;
        if (*p == ',') p++;
    }
    return true;
}

static bool x_analysis(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"concurrent", "sequential", NULL};
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->sequential = k == 1;
    return true;
}

/* -Xcab.size, -Xcab.chunk: whether they fit together is cab_config_check's to say, once
 * both are known (main). */
static bool x_cab_size(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_size(val, 1, SIZE_MAX, &n)) return bad_value(o, val, NULL);
    if (o->name[4] == 's') opt->cab_size = (size_t)n;
    else opt->cab_chunk = (size_t)n;
    return true;
}

static bool x_profile_out(const XOption *o, const char *val, Options *opt) {
    if (val == NULL || *val == '\0') {
        fprintf(stderr, "tandem: -X%s needs a file name\n", o->name);
        return false;
    }
    opt->profile_out = val;
    return true;
}

static bool x_profile_format(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"text", "json", "folded", "callgrind", NULL}; /* ProfFormat */
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->format = k;
    return true;
}

static bool x_profile_stage(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"instrument", "enqueue", "communicate", "full", NULL}; /* VmProfStage */
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->stage = k + 1; /* 0: not given */
    return true;
}

static bool x_buffer(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"cab", "nway", "ffwd", NULL}; /* CabTransport */
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->transport = k;
    return true;
}

static bool x_cab_mode(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"exhaustive", "sampling", NULL};
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->sampling = k == 1;
    return true;
}

static bool x_sample_rate(const XOption *o, const char *val, Options *opt) {
    if (!cli_parse_fraction(val, &opt->sample_rate)) return bad_value(o, val, NULL);
    return true;
}

static bool x_sample_burst(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_size(val, 8, SIZE_MAX, &n) || n % 8 != 0) return bad_value(o, val, NULL);
    opt->sample_burst = (size_t)n;
    return true;
}

/* -Xcachesim.*: the simulator checks the geometry (powers of two, ways, L2 >= L1). */
static bool x_cachesim(const XOption *o, const char *val, Options *opt) {
    (void)opt;
    const char *err = NULL;
    int rc;
    if (strcmp(o->name, "cachesim.policy") == 0) {
        static const char *const names[] = {"fifo", "lru", NULL};
        int k = choice(val, names);
        if (k < 0) return bad_value(o, val, NULL);
        rc = prof_cachesim_configure(NULL, NULL, k, &err);
    } else {
        ProfCacheLevel lv;
        if (!cli_parse_geometry(val, &lv.size, &lv.ways))
            return bad_value(o, val, o->name[10] == '1' ? "expected SIZE:WAYS, e.g. 32k:4" : "expected SIZE:WAYS, e.g. 512k:8");
        rc = o->name[10] == '1' ? prof_cachesim_configure(&lv, NULL, -1, &err)
                                : prof_cachesim_configure(NULL, &lv, -1, &err);
    }
    return rc == 0 ? true : bad_value(o, val, err);
}

static bool x_test_analyzer_delay(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_count(val, 0, 1000000, &n)) return bad_value(o, val, NULL);
    opt->test_delay_us = (unsigned)n;
    return true;
}

static bool x_threads(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"native", "green", NULL};
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->green = k == 1;
    return true;
}

static bool x_carriers(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_count(val, 1, 1024, &n)) return bad_value(o, val, NULL);
    opt->carriers = (int)n;
    return true;
}

static bool x_green_slice(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_count(val, 1, 10000, &n)) return bad_value(o, val, NULL);
    opt->slice_ms = (double)n;
    return true;
}

static bool x_analyzers(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_count(val, 1, CAB_MAX_PLACED, &n)) return bad_value(o, val, NULL);
    opt->analyzers = (int)n;
    return true;
}

static bool x_affinity(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"auto", "none", NULL};
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL);
    opt->affinity_none = k == 1;
    return true;
}

static bool x_stats(const XOption *o, const char *val, Options *opt) {
    if (!no_value(o, val)) return false;
    opt->stats = true;
    return true;
}

static bool x_pathprof_limit(const XOption *o, const char *val, Options *opt) {
    if (!cli_parse_count(val, 2, 0xffffffffu, &opt->pathprof_limit)) return bad_value(o, val, NULL);
    return true;
}

#if TANDEM_PATH_ORACLE
static bool x_pathprof_oracle(const XOption *o, const char *val, Options *opt) {
    if (val == NULL || *val == '\0') {
        fprintf(stderr, "tandem: -X%s needs a file name\n", o->name);
        return false;
    }
    opt->pathprof_oracle = val;
    return true;
}
#endif

/* ---- the table ---------------------------------------------------------------------------- */

static const XOption xoptions[] = {
    {"dump", "bytecode, jit", "(none)", "bytecode: print a listing of the compiled bytecode instead of running; jit: run with -Xjit=on and print each compiled function's machine code with its bytecode on stderr", x_dump},
#if TANDEM_JIT
    {"jit", "on, off", "on", "compile each function to x86-64 code on its first call (jit/README.md); off: interpret only. While profiling, compiled code emits every analysis's events (only the path oracle turns it off)", x_jit},
#else
    {"jit", "off (this tandem is built without the JIT)", "off", "compile each function to x86-64 code on its first call; this build has no JIT (-DTANDEM_JIT=OFF)", x_jit},
#endif
    {"jit.perfmap", "(no value)", "off", "write /tmp/perf-PID.map naming the compiled functions for perf report", x_jit_perfmap},
    {"gc.stress", "N (collect every N allocations; 1 if no value)", "0", "force frequent collections", x_gc_stress},
    {"gc.maxheap", "size in bytes with optional k, m or g suffix", "0 (no cap)", "cap the heap; beyond it allocation raises \"not enough memory\"", x_gc_maxheap},
    {"profile", "methodcount, callgraph, calltree, pathprof, cachesim (comma-separated)", "(none)", "profile the run; the report is written when the program ends", x_profile},
    {"analysis", "concurrent, sequential", "concurrent", "concurrent: analyzer thread fed through a CAB; sequential: inline", x_analysis},
    {"cab.size", "size in bytes with optional k, m or g suffix; a multiple of cab.chunk, at least 3 chunks", "2m", "CAB ring size per native thread", x_cab_size},
    {"cab.chunk", "power of two, at least 4k, with optional k, m or g suffix", "4 x L1d (128k if unknown)", "CAB chunk size (the analyzer's unit of work)", x_cab_size},
    {"profile.out", "file name", "(stderr)", "where the profile report goes (written atomically)", x_profile_out},
    {"profile.format", "text, json, folded, callgrind", "text", "report format: text for people, json for scripts, folded stacks (calltree) for flame graphs, callgrind (methodcount, callgraph) for kcachegrind", x_profile_format},
    {"profile.stage", "instrument, enqueue, communicate, full", "full", "how far events go: produced only, enqueued (no analyzer), dequeued without analysis, analysed", x_profile_stage},
    {"buffer", "cab, nway, ffwd", "cab", "transport between producers and analyzers: CAB, N-way buffering, FastForward", x_buffer},
    {"cab.mode", "exhaustive, sampling", "exhaustive", "exhaustive: every event analysed (producers may block); sampling: a random fraction of the bursts, never blocks", x_cab_mode},
    {"sample.rate", "fraction in (0, 1], or a percentage such as 5%", "0.05", "sampling: fraction of the events analysed (in bursts chosen at random)", x_sample_rate},
    {"sample.burst", "bytes (multiple of 8) with optional k suffix", "64", "sampling: the bursts the events are chosen in", x_sample_burst},
    {"cachesim.l1", "SIZE:WAYS, e.g. 32k:4 (64-byte lines)", "32k:4", "cachesim: the simulated L1 data cache", x_cachesim},
    {"cachesim.l2", "SIZE:WAYS, e.g. 512k:8 (inclusive of L1)", "512k:8", "cachesim: the simulated L2 cache", x_cachesim},
    {"cachesim.policy", "fifo, lru", "fifo", "cachesim: replacement policy", x_cachesim},
    {"pathprof.limit", "N (2 .. 4294967295)", "4294967295", "pathprof: the most paths a function may have; beyond it edges are cut (Ball-Larus's fallback), as they are for functions too large for EV_PATH", x_pathprof_limit},
#if TANDEM_PATH_ORACLE
    {"pathprof.oracle", "file name", "(none)", "pathprof, testing (TANDEM_PATH_ORACLE builds): interpret with a loop that also counts every path without Ball-Larus numbering, and write the counts to this file", x_pathprof_oracle},
#endif
    {"test.analyzer_delay", "microseconds (0-1000000)", "0", "testing: each analyzer sleeps this long per chunk", x_test_analyzer_delay},
    {"threads", "native, green", "native", "language threads: native threads (1:1) or green threads on carriers (N:M)", x_threads},
    {"carriers", "N >= 1", "cores left after the analyzer threads, at least 1", "carrier threads for -Xthreads=green", x_carriers},
    {"green.slice", "time in ms (1-10000)", "10", "time slice of a green thread before it is preempted at a poll", x_green_slice},
    {"analyzers", "N >= 1", "1", "analyzer threads for concurrent analysis", x_analyzers},
    {"affinity", "auto, none", "auto", "auto: pin application threads and keep cores for the analyzers (hwloc)", x_affinity},
    {"stats", "(no value)", "off", "print the topology, the thread placement and run statistics on stderr at exit", x_stats},
    {NULL, NULL, NULL, NULL, NULL},
};

void cli_list_xoptions(FILE *f) {
    fprintf(f, "-X options (-Xname=value):\n");
    for (const XOption *o = xoptions; o->name; o++)
        fprintf(f, "  -X%-12s %s\n  %14s values: %s; default: %s\n", o->name, o->help, "", o->values, o->def);
}

bool cli_parse_xoption(const char *arg, Options *opt) {
    const char *body = arg + 2;
    const char *eq = strchr(body, '=');
    size_t nlen = eq ? (size_t)(eq - body) : strlen(body);
    for (const XOption *o = xoptions; o->name; o++)
        if (strlen(o->name) == nlen && strncmp(o->name, body, nlen) == 0) return o->parse(o, eq ? eq + 1 : NULL, opt);
    fprintf(stderr, "tandem: unknown option '%s'; valid -X options:", arg);
    for (const XOption *p = xoptions; p->name; p++) fprintf(stderr, " -X%s", p->name);
    fprintf(stderr, " (tandem -X lists them)\n");
    return false;
}
