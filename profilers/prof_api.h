/* prof_api.h: the profilers module's one public header: the interface every analysis
 * implements (open, consume, report, close) and the list of analyses by name.
 *
 * An analysis sees only events (vm/vm_events.h): 64-bit words of integers and ids. It runs
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

typedef enum ProfFormat { PROF_TEXT, PROF_JSON, PROF_FOLDED, PROF_CALLGRIND } ProfFormat;

/* How to write a report. */
typedef struct ProfReportOpts {
    ProfFormat format;
    double sample_rate;   /* 1: exhaustive; else counts are estimates: scale by 1/rate, say so */
    int partial;          /* the program was interrupted (SIGINT/SIGTERM): say the profile is partial */
    ProfNameFn fname;     /* names of function ids */
    void *ctx;            /* for fname */
} ProfReportOpts;

/* Instrumentation an analysis needs (ProfAnalysis.needs): only the enabled analyses'
 * instrumentation is active. */
#define PROF_NEED_CALL 1u    /* Lua function entries (EV_CALL) */
#define PROF_NEED_SITE 2u    /* call sites (EV_SITE before each EV_CALL) */
#define PROF_NEED_RETURN 4u  /* Lua function returns (EV_RETURN) */
#define PROF_NEED_PATH 8u    /* Ball-Larus paths (EV_PATH) */
#define PROF_NEED_MEM 16u    /* heap loads and stores (EV_LOAD, EV_STORE) */

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
} ProfAnalysis;

/* The analyses. */
extern const ProfAnalysis prof_methodcount;

/* The analysis called [name], or NULL. [len]: bytes of [name] to compare (names may come
 * from a comma-separated list). */
const ProfAnalysis *prof_find(const char *name, size_t len);

/* Valid names for messages and listings: "methodcount". */
const char *prof_names(void);

#endif
