/* cli_options.c: the -X options: one table, each row with its name, valid values, default,
 * help and the function that parses its value (a generic one for choices and counts), so
 * parsing, validation and `tandem -X` agree. */
#include <stddef.h>
#include <stdlib.h>
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
    /* For the generic parsers: the Options field written (offsetof), and either the names
     * of a choice (stored as their index, an int) or a count's range (an int64_t). */
    size_t field;
    const char *const *choices;
    int64_t lo, hi;
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

/* ---- the generic parsers --------------------------------------------------------------- */

/* One of o->choices, stored as its index. */
static bool x_choice(const XOption *o, const char *val, Options *opt) {
    int k = choice(val, o->choices);
    if (k < 0) return bad_value(o, val, NULL);
    *(int *)((char *)opt + o->field) = k;
    return true;
}

/* A count in [o->lo, o->hi]. */
static bool x_count(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_count(val, (uint64_t)o->lo, (uint64_t)o->hi, &n)) return bad_value(o, val, NULL);
    *(int64_t *)((char *)opt + o->field) = (int64_t)n;
    return true;
}

/* ---- the parsers of their own ------------------------------------------------------------ */

/* -Xdump and -Xjit: choices whose second name asks for the JIT, which a build may lack.
 * Returns the index, or -1 after the message. */
static int jit_choice(const XOption *o, const char *val, const char *const *names) {
    int k = choice(val, names);
    if (k < 0) return bad_value(o, val, NULL), -1;
    if (k == 1 && !TANDEM_JIT) return bad_value(o, val, "this tandem is built without the JIT (-DTANDEM_JIT=OFF)"), -1;
    return k;
}

static bool x_dump(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"bytecode", "jit", NULL};
    int k = jit_choice(o, val, names);
    if (k == 0) opt->dump_bytecode = true;
    if (k == 1) opt->jit_dump = opt->jit_on = true;
    return k >= 0;
}

static bool x_jit(const XOption *o, const char *val, Options *opt) {
    static const char *const names[] = {"off", "on", NULL};
    int k = jit_choice(o, val, names);
    if (k >= 0) opt->jit_on = k == 1;
    return k >= 0;
}

static bool x_jit_perfmap(const XOption *o, const char *val, Options *opt) {
    if (!no_value(o, val)) return false;
    if (!TANDEM_JIT) return bad_value(o, "", "this tandem is built without the JIT (-DTANDEM_JIT=OFF)");
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

/* -Xcab.size, -Xcab.chunk: whether they fit together is cab_config_check's to say, once
 * both are known (main). */
static bool x_cab_size(const XOption *o, const char *val, Options *opt) {
    uint64_t n;
    if (!cli_parse_size(val, 1, SIZE_MAX, &n)) return bad_value(o, val, NULL);
    if (o->name[4] == 's') opt->cab_size = (size_t)n;
    else opt->cab_chunk = (size_t)n;
    return true;
}

/* A file name, stored at the row's field (a const char *). */
static bool x_file(const XOption *o, const char *val, Options *opt) {
    if (val == NULL || *val == '\0') {
        fprintf(stderr, "tandem: -X%s needs a file name\n", o->name);
        return false;
    }
    *(const char **)((char *)opt + o->field) = val;
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

static bool x_profile_always(const XOption *o, const char *val, Options *opt) {
    if (!no_value(o, val)) return false;
    opt->profile_always = true;
    return true;
}

/* -Xshadow.load: a positive number of shadows, fractions allowed (0.25: a shadow a quarter of
 * the time). */
static bool x_shadow_load(const XOption *o, const char *val, Options *opt) {
    char *end = NULL;
    double d = val ? strtod(val, &end) : 0.0;
    if (val == NULL || end == val || *end != '\0' || !(d >= 0.01 && d <= 16.0)) return bad_value(o, val, NULL);
    opt->shadow_load = d;
    return true;
}

static bool x_stats(const XOption *o, const char *val, Options *opt) {
    if (!no_value(o, val)) return false;
    opt->stats = true;
    return true;
}


/* ---- the table ---------------------------------------------------------------------------- */

/* The names of the choices: their order is the enum the index is stored as. */
static const char *const analysis_names[] = {"concurrent", "sequential", NULL};
static const char *const format_names[] = {"text", "json", "folded", "callgrind", "annotate", "pprof", "html", NULL}; /* ProfFormat */
static const char *const stage_names[] = {"instrument", "enqueue", "communicate", "full", NULL}; /* VmProfStage */
static const char *const buffer_names[] = {"cab", "nway", "ffwd", NULL}; /* CabTransport */
static const char *const mode_names[] = {"exhaustive", "sampling", NULL};
static const char *const shadow_idle_names[] = {"off", "sleep", "spin", NULL};
static const char *const sample_mode_names[] = {"off", "events", "code", "shadow", NULL};
static const char *const off_on_names[] = {"off", "on", NULL};
static const char *const sample_windows_names[] = {"compiled", "interpreted", NULL};
static const char *const full_names[] = {"block", "self", "adaptive", NULL}; /* CabFull */
static const char *const threads_names[] = {"native", "green", NULL};
static const char *const affinity_names[] = {"auto", "none", NULL};

#define CHOICE(f, names) x_choice, offsetof(Options, f), names, 0, 0
#define COUNT(f, lo, hi) x_count, offsetof(Options, f), NULL, lo, hi
#define FILE_NAME(f) x_file, offsetof(Options, f), NULL, 0, 0
#define OWN(fn) fn, 0, NULL, 0, 0

static const XOption xoptions[] = {
    {"dump", "bytecode, jit", "(none)", "bytecode: print a listing of the compiled bytecode instead of running; jit: run with -Xjit=on and print each compiled function's machine code with its bytecode on stderr", OWN(x_dump)},
#if TANDEM_JIT
    {"jit", "on, off", "on", "compile each function to x86-64 code on its first call (jit/README.md); off: interpret only. While profiling, compiled code emits every analysis's events (only the path oracle turns it off)", OWN(x_jit)},
#else
    {"jit", "off (this tandem is built without the JIT)", "off", "compile each function to x86-64 code on its first call; this build has no JIT (-DTANDEM_JIT=OFF)", OWN(x_jit)},
#endif
    {"jit.perfmap", "(no value)", "off", "write /tmp/perf-PID.map naming the compiled functions for perf report", OWN(x_jit_perfmap)},
    {"gc.stress", "N (collect every N allocations; 1 if no value)", "0", "force frequent collections", OWN(x_gc_stress)},
    {"gc.maxheap", "size in bytes with optional k, m or g suffix", "0 (no cap)", "cap the heap; beyond it allocation raises \"not enough memory\"", OWN(x_gc_maxheap)},
    {"profile", "methodcount, callgraph, calltree, pathprof, cachesim, inputsize (comma-separated)", "(none)", "profile the run; the report is written when the program ends (inputsize: each function's cost in bytecode instructions against its input size, RMS and TRMS, with a fitted cost model)", OWN(x_profile)},
    {"analysis", "concurrent, sequential", "concurrent", "concurrent: analyzer thread fed through a CAB; sequential: inline", CHOICE(sequential, analysis_names)},
    {"cab.size", "size in bytes with optional k, m or g suffix; a multiple of cab.chunk, at least 3 chunks", "2m", "CAB ring size per native thread", OWN(x_cab_size)},
    {"cab.chunk", "power of two, at least 4k, with optional k, m or g suffix", "4 x L1d (128k if unknown)", "CAB chunk size (the analyzer's unit of work)", OWN(x_cab_size)},
    {"profile.out", "file name", "(stderr)", "where the profile report goes: a regular file is written atomically (a temporary file renamed over it once whole, so a failed write keeps the old one); a device (/dev/null) or FIFO in place. A write error (disk full) is reported as \"cannot write the profile to FILE: REASON\"; the program's output is unaffected and its exit status too, except that a successful run then exits 1", FILE_NAME(profile_out)},
    {"profile.format", "text, json, folded, callgrind, annotate, pprof, html", "text", "report format: text for people, json for scripts, folded stacks (calltree) for flame graphs, callgrind (methodcount, callgraph; cachesim: accesses and misses per source line) for kcachegrind, annotate (pathprof: the hottest functions' source with the times each line was entered; cachesim: the source of the functions with most cache misses, with each line's accesses and misses), pprof (calltree, callgraph, methodcount, cachesim, pathprof: one gzip-compressed profile.proto with a sample type per analysis) for go tool pprof, Pyroscope and other pprof readers; html (every analysis) for a browser: one self-contained page (flame graph, call graph, hot paths and annotated source, cache misses per function and per source line, input-size plots, the run's facts; nothing fetched), e.g. -Xprofile.out=report.html", CHOICE(format, format_names)},
    {"trace", "file name", "(none)", "write a timeline of the run in Chrome's trace-event JSON (open it in Perfetto, ui.perfetto.dev, or chrome://tracing): a track per native thread (main, language threads, carriers, analyzers) with which language thread ran when on each carrier (green switches), safepoint pauses with the time to stop, threads parked meanwhile, collections, producers waiting on a full CAB, analyzers' busy and idle phases. Bounded: the last 8192 spans per native thread. Written at the end, also after an error or SIGINT/SIGTERM (trace/README.md)", FILE_NAME(trace_out)},
    {"profile.always", "(no value)", "off", "the always-on preset, meant to be left on in production: -Xprofile=callgraph,calltree (unless -Xprofile names others) with -Xsample.mode=code, -Xsample.rate=0.2%, -Xsample.window=32 and -Xaffinity=none (unless given) and -Xsample.adaptive=on. Its cost on the program's thread was 1.2-1.6% more instructions than no profiling (richards, havlak, json under callgrind; the countdown and the profiler's fixed costs, not the windows); bench/eval's always experiment measures the time", OWN(x_profile_always)},
    {"profile.stage", "instrument, enqueue, communicate, full", "full", "how far events go: produced only, enqueued (no analyzer), dequeued without analysis, analysed", CHOICE(stage, stage_names)},
    {"buffer", "cab, nway, ffwd", "cab", "transport between producers and analyzers: CAB, N-way buffering, FastForward", CHOICE(transport, buffer_names)},
    {"cab.mode", "exhaustive, sampling", "exhaustive", "exhaustive: every event analysed (producers may block); sampling: a random fraction of the bursts, never blocks", CHOICE(sampling, mode_names)},
    {"cab.full", "block, self, adaptive", "block", "exhaustive: what a program thread does when its ring is full. block: waits for the analyzer; self: analyses its own oldest chunks on its own thread; adaptive: analyses them itself only when the analyzer is not at its ring and no CPU is idle (runnable threads from /proc/loadavg), waits otherwise. -Xstats shows the chunks each analysed", CHOICE(cab_full, full_names)},
    {"sample.mode", "off, events, code, shadow", "off", "events: the CAB paper's sampling, the same as -Xcab.mode=sampling (every event is produced, the analyzer analyses random bursts); code: sampled instrumentation, the program runs uninstrumented code between samples (a countdown at function entries and loop back edges) and instrumented code in windows of -Xsample.window ticks started at random, a fraction -Xsample.rate of the ticks; reports are estimates scaled by the fraction measured, and at rate 1 equal the exhaustive profile (vm/prof/vm_sample.h); shadow: shadow profiling, the program runs uninstrumented code only, and now and then forks a shadow process, pinned to the analyzer core, that runs instrumented for -Xshadow.length ticks with no side effect outside itself and hands its events to the parent's analysis (-Xshadow.load shadows live on average); reports are estimates scaled by the ticks the shadows covered (vm/prof/vm_shadow.h)", CHOICE(sample_mode, sample_mode_names)},
    {"sample.rate", "fraction in (0, 1], or a percentage such as 5%", "0.05", "sampling: fraction of the events analysed (events: in bursts chosen at random; code: of the ticks, run inside windows)", OWN(x_sample_rate)},
    {"sample.burst", "bytes (multiple of 8) with optional k suffix", "64", "-Xsample.mode=events: the bursts the events are chosen in", OWN(x_sample_burst)},
    {"sample.window", "ticks (function entries and loop back edges), 1-1000000000", "256", "-Xsample.mode=code: the length of a sampling window; longer windows cost less switching and lose fewer paths at their edges, shorter ones spread the samples", COUNT(sample_window, 1, 1000000000)},
    {"sample.adaptive", "off, on", "off", "-Xsample.mode=code: a program thread whose ring is filling (its analyzer falls behind) halves its rate rather than wait, and doubles it again once the ring keeps room; every window's events are weighted by the inverse of its rate, so the estimates stay unbiased. -Xstats shows the windows per rate", CHOICE(sample_adaptive, off_on_names)},
    {"sample.windows", "compiled, interpreted", "compiled", "-Xsample.mode=code or shadow with -Xjit=on: what sampling windows (and shadows) run. compiled: each function's instrumented twin, compiled once windows have met it -Xsample.twin times, so a window costs what exhaustive profiling of compiled code costs; interpreted: the instrumented interpreter (slower windows, no twins; kept to measure against). Without the JIT and with the profile library windows are interpreted", CHOICE(sample_windows, sample_windows_names)},
    {"sample.twin", "N (1-1000000000)", "1", "-Xsample.mode=code or shadow with compiled windows: a function's instrumented twin is compiled at the Nth time a window meets a frame of it (an entry, a loop back edge, a return into it); until then its frames run interpreted in windows, with the same events. 1: at the first meeting; larger values save compiling twins of functions windows seldom meet (jit/README.md, \"Sampled instrumentation\")", COUNT(sample_twin, 1, 1000000000)},
    {"sample.seed", "N (0-4294967295)", "0 (from the clock)", "-Xsample.mode=code: the seed of the random window phases (each native thread draws its own sequence from it), for repeatable runs", COUNT(sample_seed, 0, 0xffffffff)},
    {"shadow.length", "ticks (function entries and loop back edges), 1-1000000000", "2000000", "-Xsample.mode=shadow: how long each shadow runs instrumented before it hands its events over and exits; longer shadows fork less often (each fork costs the program a copy of its page tables and copy-on-write faults after it), shorter ones spread the samples over more of the run", COUNT(shadow_length, 1, 1000000000)},
    {"shadow.load", "average number of live shadows, 0.01-16", "0.1", "-Xsample.mode=shadow: a shadow is forked at a tick when the average number of live shadows so far is below this; never more than its ceiling live at once (the shadow profiling paper's load)", OWN(x_shadow_load)},
    {"shadow.timeout", "milliseconds (1-3600000)", "10000", "-Xsample.mode=shadow: the watchdog kills a shadow that has not finished after this long; its events are dropped and counted (-Xstats)", COUNT(shadow_timeout_ms, 1, 3600000)},
    {"cachesim.l1", "SIZE:WAYS, e.g. 32k:4 (64-byte lines)", "32k:4", "cachesim: the simulated L1 data cache", OWN(x_cachesim)},
    {"cachesim.l2", "SIZE:WAYS, e.g. 512k:8 (inclusive of L1)", "512k:8", "cachesim: the simulated L2 cache", OWN(x_cachesim)},
    {"cachesim.policy", "fifo, lru", "fifo", "cachesim: replacement policy", OWN(x_cachesim)},
    {"pathprof.limit", "N (2 .. 4294967295)", "4294967295", "pathprof: the most paths a function may have; beyond it edges are cut (Ball-Larus's fallback), as they are for functions too large for EV_PATH", COUNT(pathprof_limit, 2, 0xffffffff)},
#if TANDEM_PATH_ORACLE
    {"pathprof.oracle", "file name", "(none)", "pathprof, testing (TANDEM_PATH_ORACLE builds): interpret with a loop that also counts every path without Ball-Larus numbering, and write the counts to this file", FILE_NAME(pathprof_oracle)},
#endif
    {"test.analyzer_delay", "microseconds (0-1000000)", "0", "testing: each analyzer sleeps this long per chunk", COUNT(test_delay_us, 0, 1000000)},
    {"test.analyzer_stall", "milliseconds (0-60000)", "0", "testing: analyzer 0 sleeps this long once, after its first chunk (a producer may block on its full ring meanwhile); nothing is lost, the profile is complete", COUNT(test_stall_ms, 0, 60000)},
    {"test.analyzer_die", "N chunks (0-1000000000; 0: never)", "0", "testing: analyzer 0's thread ends after taking N chunks; its rings move to the analyzer with the fewest (with -Xanalyzers=1 a spare thread is started for them), so nothing is lost or analysed twice and the profile is complete; stderr says so", COUNT(test_die_after, 0, 1000000000)},
    {"test.alloc_fail", "N (0-1000000000000; 0: never)", "0", "testing: the Nth allocation of the GC heap (counted over all threads from the start) fails as at the -Xgc.maxheap cap, through Boehm's out-of-memory hook: \"not enough memory\", which pcall catches; during startup: a message and exit 1", COUNT(test_alloc_fail, 0, 1000000000000LL)},
    {"test.sched_fuzz", "seed N (0-4294967295)", "0 (off)", "testing: at safepoint polls, at random (one sequence per seed and thread) a green thread yields its carrier or a native thread calls sched_yield, or either naps 1-200 us", COUNT(sched_fuzz, 0, 0xffffffff)},
    {"test.shadow_kill", "N (0-1000000000; 0: never)", "0", "testing: every Nth shadow (-Xsample.mode=shadow) hangs instead of handing its events over, so the watchdog kills it; the program's run and output stay intact, the drops are counted (-Xstats)", COUNT(test_shadow_kill, 0, 1000000000)},
    {"test.shadow_idle", "off, sleep, spin", "off", "measuring: every shadow (-Xsample.mode=shadow) runs no window and lives until the program's end, asleep (what the fork and the copy-on-write faults cost the program, without a shadow working beside it) or spinning on the analyzer core without touching memory (what a busy core beside it costs); it publishes no event, so the report has no shadow's profile (bench/eval/shadow_cpu.py's breakdown)", CHOICE(test_shadow_idle, shadow_idle_names)},
    {"threads", "native, green", "native", "language threads: native threads (1:1) or green threads on carriers (N:M)", CHOICE(green, threads_names)},
    {"carriers", "N >= 1", "cores left after the analyzer threads, at least 1", "carrier threads for -Xthreads=green", COUNT(carriers, 1, 1024)},
    {"green.slice", "time in ms (1-10000)", "10", "time slice of a green thread before it is preempted at a poll", COUNT(slice_ms, 1, 10000)},
    {"analysis.shards", "1, 2, 4 or 8", "1", "concurrent, exhaustive: each program thread's analysis is split over this many analyzer threads working at once, each owning a share of the items (methodcount: functions; cachesim: cache sets) and reading every event; the profile is the same. Needs as many analyzer threads (the default -Xanalyzers becomes N); callgraph, calltree and pathprof cannot be split", COUNT(shards, 1, CAB_MAX_SHARDS)},
    {"analyzers", "N >= 1", "1", "analyzer threads for concurrent analysis", COUNT(analyzers, 1, CAB_MAX_PLACED)},
    {"affinity", "auto, none", "auto", "auto: pin application threads and keep cores for the analyzers (hwloc)", CHOICE(affinity_none, affinity_names)},
    {"stats", "(no value)", "off", "print the topology, the thread placement and run statistics on stderr at exit", OWN(x_stats)},
    {NULL, NULL, NULL, NULL, OWN(NULL)},
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
