/* prof_out.h: private to profilers/: what the analyses share: an open-addressing hash map
 * of 64-bit keys, growable arrays, per-thread demultiplexing, and the report writers (text
 * notes on sampling and partial profiles, JSON strings, folded-stack frames, callgrind
 * headers and names). Not part of prof_api.h: the runtime never needs it.
 *
 * Allocation: everything here is malloc'd memory outside the GC heap (consume runs on
 * analyzer threads, which are not registered with the collector). consume cannot return an
 * error, so running out of memory there is fatal: prof_oom prints "<analysis>: out of
 * memory" and aborts, as methodcount always did. */
#ifndef PROF_OUT_H
#define PROF_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prof_api.h"

/* Pseudo function ids used by the analyses (real ids are small and dense, vm/prof/vm_prof.c, so
 * the top of the 32-bit range is free). Their names are fixed: "[root]", "[C]". */
#define PROF_FID_ROOT 0xfffffffeu /* the caller of a thread's first frame; the CCT's root */
#define PROF_FID_C 0xffffffffu    /* one or more C frames (a gap in depth) */

/* Call-site values (callgraph): a pc from EV_SITE, or these. */
#define PROF_SITE_C 0xffffffffu       /* called from C (EV_SITE said so, or a depth gap) */
#define PROF_SITE_UNKNOWN 0xfffffffeu /* no EV_SITE preceded the call */

/* Prints "[who]: out of memory" and aborts. */
void prof_oom(const char *who) __attribute__((noreturn, cold));

/* Grows [*p] (elements of [elem] bytes, capacity [*cap]) to hold at least [need]; doubles.
 * New memory is zeroed. Aborts through prof_oom([who]) on failure. */
void prof_grow(void **p, size_t *cap, size_t need, size_t elem, const char *who);

/* ====================================================================== */
/* ProfMap: uint64 key -> uint32 value, open addressing, linear probing     */
/* ====================================================================== */

/* A slot is free when its value is PROF_MAP_NONE, so every key (0 too) can be stored but
 * PROF_MAP_NONE cannot be a value. Load factor at most 1/2: a miss ends after a short run.
 * Nothing is ever removed (profiles only grow). */
#define PROF_MAP_NONE 0xffffffffu

typedef struct ProfMapSlot {
    uint64_t key;
    uint32_t val; /* PROF_MAP_NONE: free */
} ProfMapSlot;

typedef struct ProfMap {
    ProfMapSlot *slots; /* owned; NULL until the first put */
    size_t mask;        /* slots - 1 (a power of two minus one), 0 when empty */
    size_t n;           /* keys stored */
} ProfMap;

/* splitmix64's finalizer: every input bit reaches every output bit. */
static inline uint64_t prof_hash64(uint64_t x) {
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/* The value of [key], or PROF_MAP_NONE. */
static inline uint32_t prof_map_get(const ProfMap *m, uint64_t key) {
    if (m->slots == NULL) return PROF_MAP_NONE;
    for (size_t i = (size_t)prof_hash64(key) & m->mask;; i = (i + 1) & m->mask) {
        const ProfMapSlot *s = &m->slots[i];
        if (s->val == PROF_MAP_NONE || s->key == key) return s->val;
    }
}

/* Stores [key] -> [val] ([key] must be absent; [val] != PROF_MAP_NONE). Out of line: runs
 * once per new key. Aborts through prof_oom([who]) if the table cannot grow. */
void prof_map_put(ProfMap *m, uint64_t key, uint32_t val, const char *who);

void prof_map_free(ProfMap *m);

/* ====================================================================== */
/* Threads: one record per language thread id, found through a ProfMap     */
/* ====================================================================== */

/* Each analysis keeps an array of its own per-thread records; ProfThreads maps a thread id
 * (EV_THREAD's payload) to the record's index. Events before any EV_THREAD belong to thread
 * 0. [cur] is the index of the current thread, so only EV_THREAD pays for a lookup. */
typedef struct ProfThreads {
    ProfMap ids;   /* thread id -> index */
    uint32_t cur;  /* index of the current thread; PROF_MAP_NONE before the first event */
    uint32_t n;    /* threads seen */
} ProfThreads;

/* Index of thread [id]; *[added] = 1 if it is new (index == old n: the caller must
 * initialise its record at that index), else 0. */
uint32_t prof_threads_find(ProfThreads *t, uint64_t id, int *added, const char *who);

/* ====================================================================== */
/* Reports                                                                 */
/* ====================================================================== */

/* 1/rate when the profile was sampled (0 < rate < 1), else 1. */
static inline double prof_scale(const ProfReportOpts *o) {
    if (o->shadow) return o->sample_rate > 0.0 ? 1.0 / o->sample_rate : 1.0;
    return (o->sample_rate > 0.0 && o->sample_rate < 1.0) ? 1.0 / o->sample_rate : 1.0;
}

/* [c] scaled by 1/rate and rounded (the estimate of an exhaustive count). */
uint64_t prof_est(uint64_t c, const ProfReportOpts *o);

/* Text: the lines under a report's title that say the counts are estimates from sampling
 * and/or that the profile is partial; nothing for an exhaustive, complete profile. */
void prof_text_notes(FILE *out, const ProfReportOpts *o);

/* JSON: [s] as a JSON string: quotes, backslashes and control characters escaped, bytes
 * that are not UTF-8 written as U+FFFD, so the document is always valid UTF-8 JSON. */
void prof_json_str(FILE *out, const char *s);

/* JSON: [x] as a number that reads back exactly, in as few digits as that takes ("0.05",
 * not "0.050000000000000003"); null if it is not finite. */
void prof_json_num(FILE *out, double x);

/* JSON: opens an analysis's document with its common members:
 *   {"analysis":"<name>","version":1,"sample_rate":r,"estimated":bool,"partial":bool
 * Counts in JSON documents are always the raw (observed) counts: a reader divides by
 * sample_rate to estimate (that is how bench/prof_error.py computes the paper's error). */
void prof_json_begin(FILE *out, const char *analysis, const ProfReportOpts *o);

/* Folded stacks: [name] as one frame: ';' (the frame separator) becomes ',' and line
 * breaks become spaces; a trailing " <count>" is what flamegraph.pl splits on, so spaces
 * inside names are fine. */
void prof_folded_frame(FILE *out, const char *name);

/* Callgrind: splits a display name "f (prog.lua:3)" into file "prog.lua" and line 3 (also
 * "main chunk (prog.lua)": line 0, and "function <prog.lua:7>"). Returns 0 and sets
 * [*file], [*flen], [*line]; -1 if [name] has no such suffix. */
int prof_name_split(const char *name, const char **file, size_t *flen, unsigned long *line);

/* Callgrind: the header ("# callgrind format", version, creator, positions: line,
 * events: Calls, notes on sampling/partial as comments, summary: [total]). */
void prof_cg_header(FILE *out, const char *creator, const ProfReportOpts *o, uint64_t total);

/* Callgrind: the same header with [events] (names separated by spaces) and their [n]
 * [totals] as the summary. */
void prof_cg_header_events(FILE *out, const char *creator, const ProfReportOpts *o, const char *events,
                           const uint64_t *totals, int n);

/* Callgrind: writes "<pfx>fl=<file>\n<pfx>fn=<name>\n" (pfx "" or "c": cfl=/cfn=) for
 * display name [name] and returns its line (0 if unknown). Line breaks in names become
 * spaces (callgrind lines end at a newline). */
unsigned long prof_cg_fn(FILE *out, const char *pfx, const char *name);

/* Annotate: the lines of source file [path] (malloc'd, NUL-terminated, newlines dropped):
 * *[n] lines, or NULL with errno set; prof_oom([who]) if memory runs out. */
char **prof_read_lines(const char *path, size_t *n, const char *who);
void prof_free_lines(char **v, size_t n);

#endif
