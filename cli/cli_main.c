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
#include "vm_thread.h"

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
    /* "=stdin" is longer than "-": sized for the name it gets (it overflowed malloc(3),
     * found by ASan) */
    const char *name = strcmp(path, "-") == 0 ? "=stdin" : NULL;
    size_t n = name ? strlen(name) : strlen(path) + 1;
    char *c = malloc(n + 1);
    if (c == NULL) abort();
    if (name) {
        memcpy(c, name, n + 1);
    } else {
        c[0] = '@';
        memcpy(c + 1, path, n);
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
    if (to->sched_fuzz) {
        uint64_t yields, naps;
        vm_threads_fuzz_counts(&yields, &naps);
        fprintf(stderr, "[stats] sched_fuzz: seed %llu, %llu yields, %llu naps\n", (unsigned long long)to->sched_fuzz,
                (unsigned long long)yields, (unsigned long long)naps);
    }
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
    if (main_state) {
        vm_state_close(main_state); /* lua_close: the finalizers still pending */
        vm_threads_shutdown(main_state);
    }
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
    opt.jit_on = TANDEM_JIT; /* -Xjit=on is the default where the JIT is built (jit/README.md) */
    opt.stage = VM_STAGE_FULL;
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
            cli_list_xoptions(stdout);
            return 0;
        } else if (strncmp(a, "-X", 2) == 0) {
            if (!cli_parse_xoption(a, &opt)) return EXIT_USAGE;
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
    if (opt.sequential && (opt.stage == VM_STAGE_ENQUEUE || opt.stage == VM_STAGE_COMMUNICATE)) {
        fprintf(stderr, "tandem: -Xprofile.stage=%s needs -Xanalysis=concurrent (sequential analysis has no buffer "
                        "to stop at)\n", opt.stage == VM_STAGE_ENQUEUE ? "enqueue" : "communicate");
        return EXIT_USAGE;
    }
    /* A profiled run: SIGINT/SIGTERM from now on end it with the profile written (vm_prof.c),
     * even before the profiler has started. */
    if (opt.profile && !opt.dump_bytecode && !compile_in) vm_prof_block_signals();
    if (compile_out && !compile_in) {
        fprintf(stderr, "tandem: -o needs -c\n");
        return EXIT_USAGE;
    }
    /* Placement: with concurrent analysis, keep cores for the analyzers and run the
     * application (and every thread it starts: affinity is inherited) on the others. */
    int nanalyzers = opt.analyzers ? (int)opt.analyzers : 1;
    cab_topology_plan(opt.profile && !opt.sequential ? nanalyzers : 0, &placement);
    if (!opt.affinity_none && placement.napp > 0 && placement.nanalyzers > 0)
        pinned = cab_topology_bind_self_set(placement.app_cpus, placement.napp) == 0;
    print_stats = opt.stats;
    VmProfOptions popt = {{NULL}, opt.nanalyses, opt.sequential, {0}, opt.profile_out, nanalyzers,
                          pinned ? placement.analyzer_cpus : NULL, (VmProfStage)opt.stage,
                          (unsigned)opt.test_delay_us, (ProfFormat)opt.format,
                          {(unsigned)opt.test_stall_ms, (uint64_t)opt.test_die_after}};
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
    VmThreadOptions topt = {opt.green ? VM_THREADS_GREEN : VM_THREADS_NATIVE, (int)opt.carriers,
                            (opt.slice_ms ? (double)opt.slice_ms : 10.0) / 1000.0, (uint64_t)opt.sched_fuzz};
    if (topt.carriers == 0) {
        /* The cores left after the analyzer threads, at least one. */
        long cores = placement.ncores > 0 ? placement.ncores : sysconf(_SC_NPROCESSORS_ONLN);
        long left = cores - (opt.profile && !opt.sequential ? nanalyzers : 0);
        topt.carriers = left > 1 ? (int)left : 1;
    }
    vm_threads_configure(&topt);
    if (opt.test_alloc_fail) gc_set_fail_at((uint64_t)opt.test_alloc_fail); /* counts from the first */
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
    VmPathprofOptions ppopt = {(uint64_t)opt.pathprof_limit, opt.pathprof_oracle};
    vm_pathprof_configure(&ppopt);
    if (!opt.dump_bytecode) {
        /* Profile from the first chunk run to the end of the program, whatever the end. */
        const char *err = NULL;
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
