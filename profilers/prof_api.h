/* prof_api.h: the profilers module's one public header: the interface every analysis
 * implements (open, consume, report, close) and the list of analyses by name.
 *
 * An analysis sees only events (events/ev_api.h): 64-bit words of integers and ids. It runs
 * either on an analyzer thread, fed by a CAB (concurrent), or inline on the program's thread
 * (sequential); the same state and the same consume function serve both, so for a
 * deterministic program the two reports are equal. consume must not touch the GC heap
 * (analyzer threads are not registered with the collector). Names of function ids are
 * asked for at report time through [fname], which the runtime provides. */
#ifndef PROF_API_H
#define PROF_API_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Display name of function [id] ("f (prog.lua:3)"); never NULL. */
typedef const char *(*ProfNameFn)(uint32_t id, void *ctx);

/* Grep ProfFormat in cli/cli_options.c (format_names) if you change this enum. */
typedef enum ProfFormat { PROF_TEXT, PROF_JSON, PROF_FOLDED, PROF_CALLGRIND, PROF_ANNOTATE, PROF_PPROF, PROF_HTML } ProfFormat;

/* A pprof profile being built (-Xprofile.format=pprof, prof_pprof.c): the samples of every
 * analysis of a run, written as one gzip-compressed profile.proto message. */
typedef struct ProfPprof ProfPprof;

/* A Ball-Larus path decoded (pathprof): the basic blocks it went through, in order, and the
 * source lines of their instructions (consecutive repeats dropped). Blocks are numbered in
 * code order from 0 (the function's entry). The caller gives the buffers; [nblocks] and
 * [nlines] are the full lengths, which may exceed [maxblocks] / [maxlines] (then only that
 * many were written: call again with larger buffers). Line 0: no line information. */
#define PROF_PATH_START_LOOP 1u /* starts after a back edge (at a loop head) or a cut edge,
                                   not at the function's entry */
#define PROF_PATH_END_BACK 2u   /* ends at a back edge (else at a return or tail call) */
#define PROF_PATH_END_CUT 4u    /* ends at a cut edge: the function has more paths than fit 32
                                   bits, and forward edges were cut to number it in pieces */
typedef struct ProfPath {
    uint32_t *blocks;
    int maxblocks;
    uint32_t *lines;
    int maxlines;
    int nblocks, nlines; /* out */
    unsigned flags;      /* out: PROF_PATH_* */
} ProfPath;

/* Decodes path number [path] of function [id] into [*out]. Returns 0, or -1 if the function
 * or the number is unknown. */
typedef int (*ProfDecodePathFn)(uint32_t id, uint32_t path, ProfPath *out, void *ctx);

/* Where function [id] is in its source (ProfReportOpts.fsource): the file it was loaded from
 * (NULL when it was not loaded from a file: a string chunk, stdin) and its lines (first 0
 * for a main chunk: the whole file). */
typedef struct ProfSource {
    const char *file;
    int first, last;
    /* The source line of each of the function's [ncode] instructions (indexed by pc, as
     * EV_PC and EV_SITE give them), when an analysis of the run needs them (PROF_NEED_PC);
     * else NULL and 0. Line 0: no line information. */
    const int32_t *lines;
    uint32_t ncode;
} ProfSource;
typedef int (*ProfSourceFn)(uint32_t id, ProfSource *out, void *ctx);

/* How to write a report. */
typedef struct ProfReportOpts {
    ProfFormat format;
    double sample_rate;   /* 1: exhaustive; else counts are estimates: scale by 1/rate, say so */
    int partial;          /* the program did not run to its end (SIGINT/SIGTERM, an uncaught
                             error): say the profile is partial */
    ProfNameFn fname;     /* names of function ids */
    void *ctx;            /* for fname */
    ProfDecodePathFn decode_path; /* Ball-Larus paths (pathprof); NULL: numbers only */
    ProfSourceFn fsource;         /* source files of function ids (annotate); may be NULL */
    ProfPprof *pprof;             /* PROF_PPROF: the run's profile, which report adds its
                                     samples to (the caller writes it once every analysis
                                     has); NULL: report writes a whole profile of its own */
    int shadow;           /* shadow profiling: sample_rate is the shadows' coverage of the run
                             (ticks they ran / ticks of the program), which exceeds 1 when
                             shadows overlap; estimates scale by its inverse all the same */
} ProfReportOpts;

/* Instrumentation an analysis needs (ProfAnalysis.needs): only the enabled analyses'
 * instrumentation is active. */
#define PROF_NEED_CALL 1u    /* Lua function entries (EV_CALL) */
#define PROF_NEED_SITE 2u    /* call sites (EV_SITE before each EV_CALL) */
#define PROF_NEED_RETURN 4u  /* Lua function returns (EV_RETURN) */
#define PROF_NEED_PATH 8u    /* Ball-Larus paths (EV_PATH) */
#define PROF_NEED_MEM 16u    /* heap loads and stores (EV_LOAD, EV_STORE) */
#define PROF_NEED_COST 32u   /* instruction counts (EV_ICOUNT before call, frame, return, thread) */
#define PROF_NEED_INPUT 64u  /* external input: cells the io library fills (EV_INPUT) */
#define PROF_NEED_SYNC 128u  /* synchronisation order across threads (EV_SYNC) */
#define PROF_NEED_LIBMEM 256u /* cells read by library code too (next and pairs' inline loop,
                                 ipairs: the slots; string.byte: the bytes returned): more
                                 EV_LOADs, which another analysis enabled in the same run
                                 (cachesim) then sees as well */
#define PROF_NEED_PC 512u    /* the instruction of each heap access (EV_PC before every
                                EV_LOAD / EV_STORE), and ProfSource.lines at report time */

/* One state per event stream: a stream is what one producer emits (a native language
 * thread, or a carrier with the green threads it runs, told apart by EV_THREAD events).
 * Concurrent analysis consumes each stream on the analyzer thread that serves its CAB;
 * sequential analysis consumes it inline on the producing thread. At the end the states are
 * merged into one and reported. */
typedef struct ProfAnalysis {
    const char *name;                                        /* as given to -Xprofile */
    unsigned needs;                                          /* PROF_NEED_* */
    void *(*open)(void);                                     /* new state; NULL: out of memory */
    void (*consume)(void *st, const uint64_t *ev, size_t n); /* n >= 1 events, in order */
    void (*merge)(void *into, void *from);                   /* add [from]'s profile to [into] */
    /* Write the report to [out]. Returns 0, -1 if writing failed, -2 if this analysis has
     * no report in that format (the runtime says so; text and json always exist). */
    int (*report)(void *st, FILE *out, const ProfReportOpts *o);
    void (*close)(void *st);                                 /* free the state */
    /* Sharded analysis (-Xanalysis.shards, cab_api.h CabConsumer.nshards): from now on [st]
     * counts only shard [shard] of [nshards] (a power of two) of the items, while it still
     * consumes every event of the stream in order; the merged states of all the shards equal
     * the state of the unsharded analysis exactly. NULL: the analysis cannot be sharded. */
    void (*shard)(void *st, unsigned shard, unsigned nshards);
} ProfAnalysis;

/* The analyses, and the report formats each has (others: report returns -2).
 *   methodcount  calls per function                      text json callgrind pprof
 *   callgraph    caller -> callee edges with call sites   text json callgrind pprof
 *   calltree     calling context tree; depth-two patterns text json folded pprof
 *   cachesim     L1/L2 cache simulation of heap accesses, text json annotate callgrind
 *                per function and per source line          pprof
 *   pathprof     Ball-Larus paths, decoded to blocks/lines text json annotate pprof
 *   inputsize    cost against input size (RMS, TRMS) per    text json
 *                function, with a fitted cost model
 * JSON: one document per analysis and report, ending with a newline, with the members
 * "analysis", "version", "sample_rate", "estimated", "partial"; counts in it are the
 * observed ones (divide by sample_rate to estimate). Text, folded, callgrind and pprof counts
 * are estimates scaled by 1/sample_rate when sampled (text, callgrind and pprof say so).
 * pprof: one profile for all the analyses of a run, a sample type (or three) per analysis:
 *   calltree     "calls": a sample per context, its stack from the thread's first frame,
 *                labelled with the thread ("[C]" nodes are frames, not samples)
 *   callgraph    "edge_calls": a sample per edge, stack [callee, caller]
 *   methodcount  "function_calls": a sample per function, stack [function]
 *   cachesim     "accesses", "l1_misses", "l2_misses": a sample per (function, line)
 *   pathprof     "line_entries": a sample per (function, line), the annotate counts
 * html is not an analysis's format: the runtime calls prof_html_report for all of them at
 * once. */
extern const ProfAnalysis prof_methodcount;
extern const ProfAnalysis prof_callgraph;
extern const ProfAnalysis prof_calltree;
extern const ProfAnalysis prof_cachesim;
extern const ProfAnalysis prof_pathprof;
extern const ProfAnalysis prof_inputsize;

/* pprof profiles (prof_pprof.c). A new, empty profile; NULL if out of memory. */
ProfPprof *prof_pprof_new(void);

/* Writes [b] to [out] as a gzip-compressed pprof profile, with notes (Profile.comment) on
 * sampling and partial profiles from [o]. Returns 0, or -1 if encoding, compressing or
 * writing failed. */
int prof_pprof_write(ProfPprof *b, FILE *out, const ProfReportOpts *o);

void prof_pprof_free(ProfPprof *b);

/* Cache simulator geometry and policy (-Xcachesim.l1, -Xcachesim.l2, -Xcachesim.policy),
 * for states opened afterwards (call it before the program starts). [l1], [l2]: size in
 * bytes and ways (the defaults: 32768:4 and 524288:8); lines are 64 bytes; the size must be
 * a power-of-two number of lines up to 1 GiB, the ways must divide it, and L2 must be at
 * least L1 (the hierarchy is inclusive). [lru]: 1 LRU, 0 FIFO (default). A NULL level or a
 * negative [lru] keeps that setting. Returns 0, or -1 with [*err] set to a message naming
 * the bad value (static storage, valid until the next call) and nothing changed. Not
 * thread-safe. */
typedef struct ProfCacheLevel {
    uint64_t size;
    uint64_t ways;
} ProfCacheLevel;
int prof_cachesim_configure(const ProfCacheLevel *l1, const ProfCacheLevel *l2, int lru, const char **err);

/* The most shards the configured cache simulation can be split into: its smaller number of
 * sets (a shard owns the sets whose index is its number modulo the shards, at both levels). */
unsigned prof_cachesim_max_shards(void);

/* The CAB paper's sampling error (section 6.4): the mean over items i with actual[i] > 0 of
 * |actual[i] - sampled[i] / rate| / actual[i]. [actual], [sampled]: [n] counts of the same
 * items (an item the sampled profile lacks has sampled 0); [rate] in (0, 1]. Returns NaN if
 * no item has actual > 0 or rate <= 0. */
double prof_error_rate(const double *actual, const double *sampled, size_t n, double rate);

/* -Xprofile.format=html (prof_html.c): what the page says about the run besides the
 * analyses' results; the runtime fills it (profilers/ see no runtime state). */
typedef struct ProfRunStream {
    const char *name;                     /* "thread 1", "carrier 0" */
    uint64_t produced, consumed, dropped; /* its events */
} ProfRunStream;

typedef struct ProfRunFacts {
    const char *const *argv; /* the command line (the -X options are in it) */
    int argc;
    const char *analysis;    /* "concurrent" or "sequential" */
    const char *threads;     /* "native" or "green" */
    const char *sampling;    /* "exhaustive", "phase" (the profile library's start..stop
                                intervals, each exhaustive), "events" (the CAB's bursts), "code" (sampled
                                instrumentation) or "shadow" (shadow processes); the rate
                                (the shadows' coverage) is each analysis's sample_rate */
    const ProfRunStream *streams; /* [nstreams], one per event stream */
    int nstreams;
} ProfRunFacts;

/* Writes one self-contained HTML page to [out] for the [n] analyses [an] with their merged
 * states [st]: each analysis's JSON report (whatever [o]->format says), [run], the names and
 * places of the function ids [o]->fsource knows (dense from 1) and, when pathprof or
 * cachesim ran, the source files they came from (read now), with the viewer that draws them.
 * Nothing in the page refers to anything outside it. Returns 0, or -1 if writing failed. */
int prof_html_report(FILE *out, const ProfAnalysis *const *an, void *const *st, int n, const ProfReportOpts *o,
                     const ProfRunFacts *run);

/* The analysis called [name], or NULL. [len]: bytes of [name] to compare (names may come
 * from a comma-separated list). */
const ProfAnalysis *prof_find(const char *name, size_t len);

/* Valid names for messages and listings: "methodcount, callgraph, calltree, cachesim, pathprof, inputsize". */
const char *prof_names(void);

#endif
