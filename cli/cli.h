/* cli.h: the `tandem` command line's own interface between its files: the options a run is
 * configured with, filled from the -X table (cli_options.c). Nothing outside cli/ includes
 * it; the number grammar is cli_parse.h. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cab_api.h"
#include "cli_parse.h"
#include "prof_api.h"
#include "vm_prof.h"
#if TANDEM_JIT
#include "jit_api.h"
#endif

#define EXIT_USAGE 2

/* Everything the -X options set. main sets the defaults that are not zero (jit_on, stage)
 * before parsing; any other zero means "not given" (the default applies). The choice and
 * count fields are int and int64_t because the table's generic parsers store into them. */
typedef struct Options {
    bool dump_bytecode;
    bool jit_on;                 /* -Xjit (default on where the JIT is built) */
    bool jit_dump;               /* -Xdump=jit */
    bool jit_perfmap;            /* -Xjit.perfmap */
    unsigned gc_stress;
    size_t gc_maxheap;
    const ProfAnalysis *profile; /* NULL: no profiling; else the first of analyses */
    const ProfAnalysis *analyses[VM_PROF_MAX_ANALYSES];
    int nanalyses;
    int stage;                   /* VmProfStage */
    int transport;               /* CabTransport */
    int sampling;                /* -Xcab.mode: 0 exhaustive, 1 sampling */
    int cab_full;                /* -Xcab.full: CabFull */
    double sample_rate;          /* 0: default */
    size_t sample_burst;         /* 0: default */
    int sample_mode;             /* -Xsample.mode: 0 off, 1 events (= -Xcab.mode=sampling), 2 code, 3 shadow */
    int64_t sample_window;       /* -Xsample.window: ticks; 0: default */
    int64_t sample_seed;         /* -Xsample.seed: 0: from the clock */
    int sample_adaptive;         /* -Xsample.adaptive: 0 off, 1 on */
    int sample_windows;          /* -Xsample.windows: 0 compiled, 1 interpreted */
    int64_t sample_twin;         /* -Xsample.twin: meetings before a twin is compiled; 0: default */
    int64_t shadow_length;       /* -Xshadow.length: ticks; 0: default */
    double shadow_load;          /* -Xshadow.load: average live shadows; 0: default */
    int64_t shadow_timeout_ms;   /* -Xshadow.timeout: the watchdog; 0: default */
    int64_t test_shadow_kill;    /* -Xtest.shadow_kill: every Nth shadow hangs (0: none) */
    int test_shadow_idle;        /* -Xtest.shadow_idle: 0 off, 1 sleep, 2 spin (instead of the window) */
    bool profile_always;         /* -Xprofile.always: the always-on preset (cli_main.c) */
    int64_t test_delay_us;
    int64_t test_stall_ms, test_die_after, test_alloc_fail; /* -Xtest.*: fault injection */
    int64_t sched_fuzz;          /* -Xtest.sched_fuzz: seed; 0: off */
    int sequential;              /* -Xanalysis: 0 concurrent, 1 sequential */
    size_t cab_size, cab_chunk;  /* 0: default */
    const char *profile_out;
    const char *trace_out;       /* -Xtrace: the timeline's file; NULL: no trace */
    int green;                   /* -Xthreads: 0 native, 1 green */
    int64_t carriers;            /* 0: default */
    int64_t slice_ms;            /* 0: default */
    int64_t analyzers;           /* 0: default (1, or -Xanalysis.shards) */
    int64_t shards;              /* -Xanalysis.shards; 0: default (1) */
    int affinity_none;           /* -Xaffinity: 0 auto, 1 none */
    bool stats;
    int format;                  /* ProfFormat */
    int64_t pathprof_limit;      /* 0: default */
    const char *pathprof_oracle; /* TANDEM_PATH_ORACLE builds; NULL: none */
} Options;

/* lua.c's options, as main found them (collect_args), for the part of the command line
 * that runs Lua code (cli_lua.c). argv[1 .. optlim-1] are options (lua's and Tandem's, in
 * their order); argv[script] is the script ("-": stdin), 0 when there is none (also
 * when "--" ends the command line, as in lua5.4). */
typedef struct LuaArgs {
    int argc;
    char **argv;
    int script;
    int optlim;
    bool has_i;      /* -i: the interactive loop after the script */
    bool has_v;      /* -v (or -i): the version line first */
    bool has_e;      /* -e: with no script, stdin is not read */
    bool has_E;      /* -E: LUA_INIT, LUA_PATH and LUA_CPATH ignored */
} LuaArgs;

/* The version line of -v, -i and the interactive banner. */
#define CLI_VERSION "Tandem 0.1 (Lua 5.4 compatible)"
/* The name messages start with ("tandem: "), whatever argv[0] is (cli/README.md). */
#define CLI_PROGNAME "tandem"

struct State;
/* What lua.c's pmain does once the options are known to be good: the version line, the
 * arg table, LUA_INIT, -e/-l/-W in their order, the script, then the interactive loop (-i,
 * or no script, no -e, no -v and a terminal on stdin) or stdin as a script. Returns the
 * exit status: 0, or 1 after an error was reported. Runs as language thread 1. */
int cli_run_lua(struct State *S, const LuaArgs *la);

/* Print the message on the top as lua.c's report does ("tandem: " first unless [quiet]: the
 * interactive loop names nobody) and pop it. */
void cli_report(struct State *S, bool quiet);

/* cli_lua.c's protected call of the function under [nargs] arguments (vm_docall) and its
 * report of a failure: "tandem: " (unless [quiet]: the interactive loop names nobody) and
 * the message. Returns the VM_* status. */
int cli_docall(struct State *S, int nargs, int nresults, bool quiet);

/* The whole file [path] (NULL: stdin) in a malloc'd buffer; NULL with errno set and *what
 * saying what failed ("open" or "read", for lua5.4's "cannot open x: ..."). */
char *cli_read_file(const char *path, size_t *len, const char **what);

/* The interactive loop (cli_repl.c): read a line, run it (as an expression whose values
 * are printed, else as statements, reading more lines while they are incomplete), until
 * end of input. With line editing and history when the build has readline. */
void cli_repl(struct State *S);

/* Parse one "-Xname[=value]" argument into [opt]. Returns false after printing why it is bad
 * (the option's name and its valid values). */
bool cli_parse_xoption(const char *arg, Options *opt);

/* `tandem -X`: every option with its values, default and help. */
void cli_list_xoptions(FILE *f);


#endif
