/* cli_main.c: the `tandem` command line: run a script or bytecode file, compile to bytecode,
 * dump bytecode; configure the runtime from the -X options (cli_options.c). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gc_api.h"
#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_lib.h"
#include "vm_prof.h"
#include "vm_sample.h"
#include "vm_shadow.h"
#include "vm_thread.h"

/* lua5.4's usage message (with this program's name), then Tandem's own options. */
static void usage(FILE *f) {
    fprintf(f,
            "usage: %s [options] [script [args]]\n"
            "Available options are:\n"
            "  -e stat   execute string 'stat'\n"
            "  -i        enter interactive mode after executing 'script'\n"
            "  -l mod    require library 'mod' into global 'mod'\n"
            "  -l g=mod  require library 'mod' into global 'g'\n"
            "  -v        show version information\n"
            "  -E        ignore environment variables\n"
            "  -W        turn warnings on\n"
            "  --        stop handling options\n"
            "  -         stop handling options and execute stdin\n"
            "Tandem's options:\n"
            "  -c file   compile 'file' to bytecode (output: -o, default file with .tbc)\n"
            "  -o file   output file for -c\n"
            "  -X        list the -X options\n"
            "  -Xname=value  set a runtime option (anywhere before the script)\n"
            "  -h        show this help\n"
            "  script    a Lua source file or a Tandem bytecode file (.tbc)\n",
            CLI_PROGNAME);
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

/* Compile [path] ("-": stdin) for -c and -Xdump=bytecode; NULL after reporting the
 * problem. */
static Proto *compile_file(State *S, const char *path) {
    bool in = strcmp(path, "-") == 0;
    const char *what;
    size_t len;
    char *buf = cli_read_file(in ? NULL : path, &len, &what);
    if (buf == NULL) {
        fprintf(stderr, "tandem: cannot %s %s: %s\n", what, in ? "stdin" : path, strerror(errno));
        return NULL;
    }
    char *chunkname = malloc(strlen(path) + 8);
    if (chunkname == NULL) abort();
    sprintf(chunkname, "%s%s", in ? "=" : "@", in ? "stdin" : path);
    CompileJob j = {buf, len, chunkname, NULL, {0, 0, {0}}};
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
    if (j.p == NULL) fprintf(stderr, "tandem: %s:%d:%d: %s\n", in ? "stdin" : path, j.err.line, j.err.col, j.err.msg);
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

/* The program has ended with [code]: write the profile (if any); a profile that cannot be
 * written turns success into failure. */
static State *main_state;
static bool print_stats;
static CabPlacement placement;
static bool pinned;
static bool always_unpinned; /* -Xprofile.always left the placement to the system */

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
    if (to->sched_fuzz) {
        uint64_t yields, naps;
        vm_threads_fuzz_counts(&yields, &naps);
        fprintf(stderr, "[stats] sched_fuzz: seed %llu, %llu yields, %llu naps\n", (unsigned long long)to->sched_fuzz,
                (unsigned long long)yields, (unsigned long long)naps);
    }
    if (!pinned) {
        fprintf(stderr, "[stats] placement: not pinned (%s)\n",
                placement.ncores == 0 ? "topology unknown" : placement.ncores < 2 ? "one core" :
                placement.nanalyzers == 0 ? "no analyzer threads" :
                always_unpinned ? "-Xprofile.always: -Xaffinity=none unless given" : "-Xaffinity=none");
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
    if (main_state) {
        vm_state_close(main_state); /* lua_close: the finalizers still pending */
        vm_threads_shutdown(main_state);
    }
    if (code != 0) vm_prof_mark_partial(); /* the program stopped at an uncaught error */
    if (vm_prof_finish() != 0 && code == 0) code = 1;
    if (vm_trace_finish() != 0 && code == 0) code = 1; /* after the profile: analyzers record */
    if (print_stats) {
        stats_report();
        if (vm_jit_enabled) jit_print_stats(stderr);
        vm_prof_print_stats(stderr);
    }
    return code;
}

/* lua.c's collectargs with Tandem's options among lua's: fills [la], [opt] and the
 * compile mode's files. Returns -1 when the command line is good, else the exit status,
 * after what had to be printed: a bad lua option gets lua5.4's message and usage and 1 (as
 * lua5.4); a bad -X option, or -c or -o without its file, a message and 2 (Tandem's own
 * options, cli/README.md); -X and -h their listing and 0. */
static int collect_args(int argc, char **argv, LuaArgs *la, Options *opt, const char **cin, const char **cout) {
    la->argc = argc;
    la->argv = argv;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        la->optlim = la->script = i;
        if (a[0] != '-') return -1; /* the script */
        bool alone = a[1] != '\0' && a[2] == '\0';
        switch (a[1]) {
        case '-':
            if (a[2] == '\0') { /* "--": the next argument is the script, even "-"; none */
                la->optlim = i + 1;
                la->script = i + 1 < argc ? i + 1 : 0;
                return -1;
            }
            if (strcmp(a, "--help") == 0) {
                usage(stdout);
                return 0;
            }
            if (strcmp(a, "--version") != 0) goto bad;
            la->has_v = true;
            break;
        case '\0': /* "-": stdin is the script */
            return -1;
        case 'E':
            if (!alone) goto bad;
            la->has_E = true;
            break;
        case 'W':
            if (!alone) goto bad;
            break;
        case 'i':
            if (!alone) goto bad;
            la->has_i = la->has_v = true;
            break;
        case 'v':
            if (!alone) goto bad;
            la->has_v = true;
            break;
        case 'e':
        case 'l':
            la->has_e |= a[1] == 'e';
            if (a[2] == '\0') { /* the chunk or module is the next argument, not an option */
                if (i + 1 >= argc || argv[i + 1][0] == '-') {
                    fprintf(stderr, "%s: '%s' needs argument\n", CLI_PROGNAME, a);
                    usage(stderr);
                    return 1;
                }
                i++;
            }
            break;
        case 'X':
            if (a[2] == '\0') {
                cli_list_xoptions(stdout);
                return 0;
            }
            if (!cli_parse_xoption(a, opt)) return EXIT_USAGE;
            break;
        case 'c':
        case 'o':
            if (!alone) goto bad;
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: option '%s' needs an argument\n", CLI_PROGNAME, a);
                usage(stderr);
                return EXIT_USAGE;
            }
            *(a[1] == 'c' ? cin : cout) = argv[++i];
            break;
        case 'h':
            if (!alone) goto bad;
            usage(stdout);
            return 0;
        default:
            goto bad;
        }
    }
    la->optlim = i;
    la->script = 0; /* no script */
    return -1;
bad:
    fprintf(stderr, "%s: unrecognized option '%s'\n", CLI_PROGNAME, argv[i]);
    usage(stderr);
    return 1;
}

/* -Xprofile.always's sampling rate: the windows' share of the run (interpreted, instrumented)
 * stays a small part of the 1% budget, the countdown the rest. */
#define ALWAYS_RATE 0.002
/* -Xprofile.always's window: at the same rate, windows of 32 ticks cost what windows of 256
 * cost (json at scale 0.25, program thread under callgrind: +0.68% either way) and, being 8
 * times as many, spread the samples over the run's phases: weighted error of the call graph
 * on havlak (scale 1) 38% with 256, 3.5% with 32; json (1.7) 12% against 4.6-5.7%; calltree
 * havlak 41% against 11% (bench/always_accuracy.py). The path profile is not in the preset,
 * so the paths short windows cut at their edges (vm_sample.h) do not matter here. */
#define ALWAYS_WINDOW 32

int main(int argc, char **argv) {
    Options opt = {0};
    opt.jit_on = TANDEM_JIT; /* -Xjit=on is the default where the JIT is built (jit/README.md) */
    opt.stage = VM_STAGE_FULL;
    opt.affinity_none = -1; /* not given: auto, but -Xprofile.always's own below */
    const char *compile_in = NULL, *compile_out = NULL;
    LuaArgs la = {0};
    int bad = collect_args(argc, argv, &la, &opt, &compile_in, &compile_out);
    if (bad >= 0) return bad;
    if (opt.sequential && (opt.stage == VM_STAGE_ENQUEUE || opt.stage == VM_STAGE_COMMUNICATE)) {
        fprintf(stderr, "tandem: -Xprofile.stage=%s needs -Xanalysis=concurrent (sequential analysis has no buffer "
                        "to stop at)\n", opt.stage == VM_STAGE_ENQUEUE ? "enqueue" : "communicate");
        return EXIT_USAGE;
    }
    /* A profiled run: SIGINT/SIGTERM from now on end it with the profile written (vm_prof.c),
     * even before the profiler has started. */
    if ((opt.profile || opt.trace_out) && !opt.dump_bytecode && !compile_in) vm_prof_block_signals();
    if (compile_out && !compile_in) {
        fprintf(stderr, "tandem: -o needs -c\n");
        return EXIT_USAGE;
    }
    /* -Xanalysis.shards: every analysis must split (ProfAnalysis.shard), each shard on its
     * own analyzer thread. */
    if (opt.shards > 1 && opt.profile) {
        const char *why = NULL;
        if ((opt.shards & (opt.shards - 1)) != 0) why = "the number of shards must be a power of two (2, 4 or 8)";
        else if (opt.sequential) why = "sharded analysis needs -Xanalysis=concurrent";
        else if (opt.sampling) why = "sharded analysis needs -Xcab.mode=exhaustive";
        else if (opt.sample_mode >= 2) why = opt.sample_mode == 2 ? "sharded analysis cannot be combined with -Xsample.mode=code"
                                                                 : "sharded analysis cannot be combined with -Xsample.mode=shadow";
        else if (opt.analyzers && opt.analyzers < opt.shards) why = "it needs at least as many analyzer threads (-Xanalyzers) as shards";
        else if (opt.test_die_after) why = "-Xtest.analyzer_die cannot be combined with sharded analysis";
        for (int k = 0; why == NULL && k < opt.nanalyses; k++)
            if (opt.analyses[k]->shard == NULL) {
                fprintf(stderr, "tandem: -Xanalysis.shards=%lld: %s cannot be split (methodcount and cachesim can)\n",
                        (long long)opt.shards, opt.analyses[k]->name);
                return EXIT_USAGE;
            } else if (opt.analyses[k] == &prof_cachesim && (unsigned)opt.shards > prof_cachesim_max_shards()) {
                fprintf(stderr, "tandem: -Xanalysis.shards=%lld: the simulated caches have only %u set(s) at one level\n",
                        (long long)opt.shards, prof_cachesim_max_shards());
                return EXIT_USAGE;
            }
        if (why != NULL) {
            fprintf(stderr, "tandem: -Xanalysis.shards=%lld: %s\n", (long long)opt.shards, why);
            return EXIT_USAGE;
        }
    }
    /* -Xprofile.always: the always-on preset (issue 17): the call graph and the call tree by
     * sampled instrumentation at a rate whose windows cost a small part of the 1% budget (the
     * countdown and the profiler's fixed costs take the rest: 1.2-1.6% more instructions on
     * the program's thread under callgrind, so the budget is not met yet), adaptive so a slow
     * analyzer never holds the program up. Options given explicitly win. */
    if (opt.profile_always) {
        if (opt.nanalyses == 0) {
            opt.analyses[opt.nanalyses++] = &prof_callgraph;
            opt.analyses[opt.nanalyses++] = &prof_calltree;
            opt.profile = opt.analyses[0];
        }
        if (opt.sample_mode == 0) opt.sample_mode = 2;
        if (opt.sample_rate == 0) opt.sample_rate = ALWAYS_RATE;
        if (opt.sample_window == 0) opt.sample_window = ALWAYS_WINDOW;
        /* Not pinned (unless -Xaffinity=auto is given): its analyzer is idle nearly all the
         * time, so keeping a core for it would only take that core from the program (a
         * production server's threads, or the scheduler's choice of the less busy CPU on a
         * shared machine: richards at 0.2, two batches of 12 interleaved runs at a load
         * average of 12-13, medians: no profiling 0.61-0.65 s, always-on pinned 0.66-1.09 s,
         * always-on unpinned 0.58 s; suggestive, not a clean measurement). */
        if (opt.affinity_none < 0) opt.affinity_none = always_unpinned = 1;
        if (opt.sample_mode == 2) opt.sample_adaptive = 1;
    }
    if (opt.affinity_none < 0) opt.affinity_none = 0;
    /* -Xsample.mode: events is the CAB's sampling mode; code is sampled instrumentation, over
     * exhaustive rings (vm/prof/vm_sample.h). */
    if (opt.sample_mode == 1) opt.sampling = 1;
    if (opt.sample_adaptive && opt.sample_mode != 2) { /* not shadow: the program has no ring to watch */
        fprintf(stderr, "tandem: -Xsample.adaptive=on needs -Xsample.mode=code\n");
        return EXIT_USAGE;
    }
    /* a shadow's window is a window too: compiled or interpreted alike (vm/prof/vm_shadow.h) */
    if (opt.sample_windows && opt.sample_mode < 2) {
        fprintf(stderr, "tandem: -Xsample.windows needs -Xsample.mode=code or shadow\n");
        return EXIT_USAGE;
    }
    if (opt.sample_twin && (opt.sample_mode < 2 || opt.sample_windows)) {
        fprintf(stderr, "tandem: -Xsample.twin needs -Xsample.mode=code or shadow with compiled windows\n");
        return EXIT_USAGE;
    }
    if (opt.sample_mode == 2 && opt.sampling) {
        fprintf(stderr, "tandem: -Xsample.mode=code cannot be combined with -Xcab.mode=sampling (choose one way to sample)\n");
        return EXIT_USAGE;
    }
    /* -Xsample.mode=shadow: sampled instrumentation's countdown in the program, whose windows
     * run in forked shadows instead (vm/prof/vm_shadow.h); analysed on the shadow thread. */
    if (opt.sample_mode != 3 && (opt.shadow_length || opt.shadow_load > 0 || opt.shadow_timeout_ms || opt.test_shadow_kill || opt.test_shadow_idle)) {
        fprintf(stderr, "tandem: -Xshadow.*, -Xtest.shadow_kill and -Xtest.shadow_idle need -Xsample.mode=shadow\n");
        return EXIT_USAGE;
    }
    if (opt.sample_mode == 3 && opt.profile) {
        const char *why = NULL;
        if (opt.sequential) why = "-Xanalysis=sequential (the shadows' events are analysed on the shadow thread)";
        else if (opt.sampling) why = "-Xcab.mode=sampling (choose one way to sample)";
        else if (opt.stage != VM_STAGE_FULL) why = "-Xprofile.stage (the program emits no events to stage)";
        if (why != NULL) {
            fprintf(stderr, "tandem: -Xsample.mode=shadow cannot be combined with %s\n", why);
            return EXIT_USAGE;
        }
    }
    if (opt.profile && opt.sample_mode >= 2) {
        VmSampleOptions sopt = {true, opt.sample_rate && opt.sample_mode == 2 ? opt.sample_rate : 0.05, (uint64_t)opt.sample_window,
                                (uint64_t)opt.sample_seed, opt.sample_adaptive == 1, opt.sample_windows == 1,
                                (uint64_t)opt.sample_twin};
        vm_sample_configure(&sopt);
    }
    /* Placement: with concurrent analysis, keep cores for the analyzers and run the
     * application (and every thread it starts: affinity is inherited) on the others. */
    int nanalyzers = opt.analyzers ? (int)opt.analyzers : opt.shards > 1 ? (int)opt.shards : 1;
    cab_topology_load_core(); /* still the only thread: no collector, no VM thread yet */
    cab_topology_plan(opt.profile && !opt.sequential ? nanalyzers : 0, &placement);
    if (!opt.affinity_none && placement.napp > 0 && placement.nanalyzers > 0)
        pinned = cab_topology_bind_self_set(placement.app_cpus, placement.napp) == 0;
    print_stats = opt.stats;
    VmProfOptions popt = {{NULL}, opt.nanalyses, opt.sequential, {0}, opt.profile_out, nanalyzers,
                          pinned ? placement.analyzer_cpus : NULL, (VmProfStage)opt.stage,
                          (unsigned)opt.test_delay_us, (ProfFormat)opt.format,
                          {(unsigned)opt.test_stall_ms, (uint64_t)opt.test_die_after}, 1, argc, argv};
    for (int k = 0; k < opt.nanalyses; k++) popt.analyses[k] = opt.analyses[k];
    popt.shards = opt.shards > 1 ? (unsigned)opt.shards : 1;
    if (pinned && nanalyzers > placement.nanalyzers) popt.analyzer_cpus = NULL; /* more analyzers than cores */
    if (opt.cab_size || opt.cab_chunk || (opt.profile && !opt.sequential)) {
        cab_config_default(&popt.cab);
        if (opt.cab_size) popt.cab.ring_bytes = opt.cab_size;
        if (opt.cab_chunk) popt.cab.chunk_bytes = opt.cab_chunk;
        popt.cab.transport = (CabTransport)opt.transport;
        popt.cab.full = (CabFull)opt.cab_full;
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
    VmThreadOptions topt = {opt.green ? VM_THREADS_GREEN : VM_THREADS_NATIVE, (int)opt.carriers,
                            (opt.slice_ms ? (double)opt.slice_ms : 10.0) / 1000.0, (uint64_t)opt.sched_fuzz};
    if (topt.carriers == 0) {
        /* The cores left after the analyzer threads, at least one. */
        long cores = placement.ncores > 0 ? placement.ncores : sysconf(_SC_NPROCESSORS_ONLN);
        long left = cores - (opt.profile && !opt.sequential ? nanalyzers : 0);
        topt.carriers = left > 1 ? (int)left : 1;
    }
    if (opt.profile && opt.sample_mode == 3) {
        /* A fork keeps one thread: the carrier that forks runs every green thread in the
         * shadow; with several carriers the others first switch their green threads out
         * (vm_green_gather, vm/threads/vm_thread.h). */
        VmShadowOptions shopt = {true, (uint64_t)opt.shadow_length, opt.shadow_load, (uint64_t)opt.shadow_timeout_ms,
                                 (uint64_t)opt.sample_seed, (uint64_t)opt.test_shadow_kill,
                                 pinned && placement.nanalyzers > 0 ? placement.analyzer_cpus[0] : -1,
                                 opt.test_shadow_idle};
        vm_shadow_configure(&shopt);
    }
    vm_threads_configure(&topt);
    if (opt.test_alloc_fail) gc_set_fail_at((uint64_t)opt.test_alloc_fail); /* counts from the first */
    State *S = vm_state_new();
    main_state = S;
    if (opt.gc_stress) gc_set_stress(opt.gc_stress);
    if (opt.gc_maxheap) gc_set_max_heap(opt.gc_maxheap);

    if (compile_in) return do_compile(S, compile_in, compile_out);

    /* The script -Xdump=bytecode lists: a file, or stdin for "-" */
    const char *script = la.script > 0 ? argv[la.script] : NULL;
    if (opt.dump_bytecode && script == NULL) {
        fprintf(stderr, "tandem: -Xdump=bytecode needs a script to list\n");
        return EXIT_USAGE;
    }
    VmPathprofOptions ppopt = {(uint64_t)opt.pathprof_limit, opt.pathprof_oracle};
    vm_pathprof_configure(&ppopt);
    if (!opt.dump_bytecode) {
        /* Profile from the first chunk run to the end of the program, whatever the end. */
        const char *err = NULL;
        /* The trace first: its observers must be in place before the analyzers start. */
        if (opt.trace_out && !vm_trace_start(opt.trace_out, &err)) {
            fprintf(stderr, "tandem: cannot write the trace to %s: %s\n", opt.trace_out, err);
            return 1;
        }
        if (!vm_prof_start(&popt, &err)) {
            fprintf(stderr, "tandem: cannot start the profiler: %s\n", err ? err : "unknown error");
            return 1;
        }
    }
#if TANDEM_JIT
    /* Compiled code emits the events of every analysis (jit/README.md); the path oracle
     * (a testing loop of the interpreter) runs without it. */
    JitOptions jopt = {opt.jit_on, opt.jit_dump, opt.jit_perfmap};
    if (opt.dump_bytecode) jopt.on = false;
#if TANDEM_PATH_ORACLE
    if (vm_pathprof_oracle) jopt.on = false;
#endif
    jit_configure(&jopt);
#endif
    if (opt.dump_bytecode) {
        Proto *p = compile_file(S, script);
        if (p == NULL) return 1;
        vm_bytecode_list(stdout, p);
        return 0;
    }
    return finish(cli_run_lua(S, &la));
}
