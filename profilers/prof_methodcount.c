/* prof_methodcount.c: method counting: how many times each function was entered (EV_CALL).
 * State: a count per function id in a growable array (ids are small and dense, vm/prof/vm_prof.c),
 * in malloc'd memory. Reports: text, json, callgrind, pprof (prof_api.h). */
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"
#include "prof_pprof.h"
#include "ev_api.h"

/* Functions listed in the report; the rest are summed on one line. */
#define REPORT_TOP 30

typedef struct MethodCount {
    uint64_t *counts; /* counts[id]: calls of function id */
    size_t cap;       /* entries in counts */
    uint64_t total;
    uint32_t shard, shard_mask; /* sharded: counts only the ids with id & mask == shard */
    uint64_t weight;  /* what each call counts for: 1, or 2^shift after EV_RATE */
} MethodCount;

static void *mc_open(void) {
    MethodCount *mc = calloc(1, sizeof *mc);
    if (mc != NULL) mc->weight = 1;
    return mc;
}

/* Out of line: the array grows rarely (once per new power of two of ids). */
static __attribute__((noinline)) void grow(MethodCount *mc, size_t id) {
    size_t cap = mc->cap ? mc->cap : 256;
    while (cap <= id) cap *= 2;
    uint64_t *c = realloc(mc->counts, cap * sizeof *c);
    if (c == NULL) {
        fprintf(stderr, "methodcount: out of memory\n");
        abort();
    }
    memset(c + mc->cap, 0, (cap - mc->cap) * sizeof *c);
    mc->counts = c;
    mc->cap = cap;
}

static void mc_consume(void *st, const uint64_t *ev, size_t n) {
    MethodCount *mc = st;
    for (size_t i = 0; i < n; i++) {
        if (ev_kind(ev[i]) != EV_CALL) {
            if (ev_kind(ev[i]) == EV_RATE) mc->weight = ev_rate_weight(ev[i]);
            continue;
        }
        uint64_t id = ev_call_fid(ev[i]);
        if ((id & mc->shard_mask) != mc->shard) continue;
        if (id >= mc->cap) grow(mc, (size_t)id);
        mc->counts[id] += mc->weight;
        mc->total += mc->weight;
    }
}

static void mc_merge(void *into, void *from) {
    MethodCount *a = into, *b = from;
    if (b->cap > a->cap) grow(a, b->cap - 1);
    for (size_t id = 0; id < b->cap; id++) a->counts[id] += b->counts[id];
    a->total += b->total;
}

typedef struct Row {
    uint64_t count;
    const char *name;
} Row;

/* By count, most first; ties by name, so the order does not depend on id assignment. */
static int row_cmp(const void *a, const void *b) {
    const Row *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The functions called at least once, sorted by row_cmp; NULL if out of memory. */
static Row *sorted_rows(const MethodCount *mc, const ProfReportOpts *o, size_t *nfun) {
    size_t n = 0;
    for (size_t id = 0; id < mc->cap; id++) n += mc->counts[id] != 0;
    Row *rows = malloc((n ? n : 1) * sizeof *rows);
    if (rows == NULL) return NULL;
    size_t r = 0;
    for (size_t id = 0; id < mc->cap; id++)
        if (mc->counts[id]) rows[r++] = (Row){mc->counts[id], o->fname((uint32_t)id, o->ctx)};
    qsort(rows, n, sizeof *rows, row_cmp);
    *nfun = n;
    return rows;
}

static void report_text(const MethodCount *mc, const Row *rows, size_t nfun, FILE *out,
                        const ProfReportOpts *o) {
    double total = mc->total ? (double)mc->total : 1.0;
    fprintf(out, "methodcount: %llu calls of %zu functions\n", (unsigned long long)prof_est(mc->total, o),
            nfun);
    prof_text_notes(out, o);
    fprintf(out, "%12s  %7s  %s\n", "calls", "percent", "function");
    for (size_t i = 0; i < nfun && i < REPORT_TOP; i++)
        fprintf(out, "%12llu  %6.2f%%  %s\n", (unsigned long long)prof_est(rows[i].count, o),
                100.0 * (double)rows[i].count / total, rows[i].name);
    if (nfun > REPORT_TOP) {
        uint64_t rest = 0;
        for (size_t i = REPORT_TOP; i < nfun; i++) rest += rows[i].count;
        fprintf(out, "%12llu  %6.2f%%  (%zu more functions)\n", (unsigned long long)prof_est(rest, o),
                100.0 * (double)rest / total, nfun - REPORT_TOP);
    }
    fprintf(out, "%12llu  %6.2f%%  total\n", (unsigned long long)prof_est(mc->total, o),
            mc->total ? 100.0 : 0.0);
}

/* {..., "total_calls": N, "functions": [{"function": name, "calls": n}, ...]} */
static void report_json(const MethodCount *mc, const Row *rows, size_t nfun, FILE *out,
                        const ProfReportOpts *o) {
    prof_json_begin(out, "methodcount", o);
    fprintf(out, ",\"total_calls\":%llu,\"functions\":[", (unsigned long long)mc->total);
    for (size_t i = 0; i < nfun; i++) {
        fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
        prof_json_str(out, rows[i].name);
        fprintf(out, ",\"calls\":%llu}", (unsigned long long)rows[i].count);
    }
    fputs("]}\n", out);
}

/* Each function's self cost is its number of calls (event "Calls"). */
static void report_callgrind(const MethodCount *mc, const Row *rows, size_t nfun, FILE *out,
                             const ProfReportOpts *o) {
    prof_cg_header(out, "methodcount", o, prof_est(mc->total, o));
    for (size_t i = 0; i < nfun; i++) {
        unsigned long line = prof_cg_fn(out, "", rows[i].name);
        fprintf(out, "%lu %llu\n\n", line, (unsigned long long)prof_est(rows[i].count, o));
    }
    fprintf(out, "totals: %llu\n", (unsigned long long)prof_est(mc->total, o));
}

/* pprof: "function_calls", one sample per function with the function alone as its stack. */
static int add_pprof(ProfPprof *b, void *st, const ProfReportOpts *o) {
    size_t nfun;
    Row *rows = sorted_rows(st, o, &nfun);
    if (rows == NULL) return -1;
    uint32_t type = prof_pprof_type(b, "function_calls", "count");
    for (size_t i = 0; i < nfun; i++) {
        uint64_t loc = prof_pprof_frame(b, rows[i].name, 0);
        prof_pprof_sample(b, &loc, 1, type, prof_est(rows[i].count, o), PROF_PPROF_NO_THREAD);
    }
    free(rows);
    return 0;
}

static int mc_report(void *st, FILE *out, const ProfReportOpts *o) {
    MethodCount *mc = st;
    if (o->format == PROF_PPROF) return prof_pprof_report(out, o, add_pprof, mc);
    if (o->format != PROF_TEXT && o->format != PROF_JSON && o->format != PROF_CALLGRIND) return -2;
    size_t nfun;
    Row *rows = sorted_rows(mc, o, &nfun);
    if (rows == NULL) return -1;
    if (o->format == PROF_TEXT) report_text(mc, rows, nfun, out, o);
    else if (o->format == PROF_JSON) report_json(mc, rows, nfun, out, o);
    else report_callgrind(mc, rows, nfun, out, o);
    free(rows);
    return ferror(out) ? -1 : 0;
}

static void mc_close(void *st) {
    MethodCount *mc = st;
    if (mc == NULL) return;
    free(mc->counts);
    free(mc);
}

/* A shard counts the functions whose id it owns; the merge adds disjoint counts. */
static void mc_shard(void *st, unsigned shard, unsigned nshards) {
    MethodCount *mc = st;
    mc->shard = shard;
    mc->shard_mask = nshards - 1;
}

const ProfAnalysis prof_methodcount = {"methodcount", PROF_NEED_CALL, mc_open, mc_consume, mc_merge,
                                       mc_report,     mc_close,       mc_shard};
