/* prof_callgraph.c: call graph profiling (CAB paper 5.2): how many times each caller called
 * each callee, and from which call sites. Reports: text, json, callgrind, pprof.
 *
 * The caller is found on the analyzer, not by the instrumentation: each language thread has
 * a shadow stack of its Lua frames (function id, depth), kept from EV_CALL's depth alone (a
 * call at depth d ends every frame at depth >= d, ev_api.h), one stack per thread id,
 * switched by EV_THREAD (a green threads' carrier interleaves several threads in one
 * stream). The caller of a call at depth d is the frame left on top:
 *   - at depth d-1: a Lua caller; the site is EV_SITE's pc ("?" if no EV_SITE came). EV_SITE
 *     also names the caller, and when it does that name wins: under sampling the shadow
 *     stack may be stale (the caller's own call was not sampled), the site never is;
 *   - below d-1: C frames lie between (a depth gap, e.g. pcall, table.sort's comparator);
 *     the edge goes from the nearest Lua frame below and its site is "C". Attributing it to
 *     one "[C]" pseudo caller instead was rejected: every pcall'd function would then share
 *     one caller and the Lua function that made the call would be lost;
 *   - none: the thread's first frame; the caller is "[root]".
 *
 * State: edges (caller, callee) in a ProfMap to an array of counts; the sites of an edge in
 * a second ProfMap keyed by (edge index, site), with the edge caching its last site so a
 * call from the same site as last time costs one lookup. Nothing is allocated per event
 * once the tables have grown to the program's edges and stack depth. */
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"
#include "prof_pprof.h"
#include "ev_api.h"

#define WHO "callgraph"
#define REPORT_TOP 30 /* edges listed in the text report; the rest are summed on one line */
#define SITES_SHOWN 4 /* sites listed per edge in the text report */

typedef struct Frame {
    uint32_t fid;
    uint32_t depth;
} Frame;

typedef struct Thread {
    Frame *stack; /* owned; frames by increasing depth */
    size_t len, cap;
} Thread;

typedef struct Edge {
    uint32_t caller, callee; /* function ids, caller may be PROF_FID_ROOT */
    uint64_t calls;
    uint32_t last_site; /* the site of the last call, and its index in sites */
    uint32_t last_slot;
} Edge;

typedef struct Site {
    uint32_t edge; /* index in edges */
    uint32_t site; /* pc, PROF_SITE_C or PROF_SITE_UNKNOWN */
    uint64_t calls;
} Site;

typedef struct CallGraph {
    ProfThreads th;
    Thread *threads; /* owned; indexed as th gives */
    size_t threads_cap;
    ProfMap edge_map; /* caller << 32 | callee -> index in edges */
    Edge *edges;      /* owned */
    size_t nedges, edges_cap;
    ProfMap site_map; /* edge << 32 | site -> index in sites */
    Site *sites;      /* owned */
    size_t nsites, sites_cap;
    uint32_t pending_site; /* from the last EV_SITE, for the next EV_CALL */
    uint32_t pending_caller; /* its caller's id; 0: none named (take the shadow stack's) */
    uint64_t total;        /* calls */
    uint64_t weight;       /* what each call counts for: 1, or 2^shift after EV_RATE */
} CallGraph;

static void *cg_open(void) {
    CallGraph *cg = calloc(1, sizeof *cg);
    if (cg == NULL) return NULL;
    cg->th.cur = PROF_MAP_NONE;
    cg->pending_site = PROF_SITE_UNKNOWN;
    cg->weight = 1;
    return cg;
}

/* ---------------------------------------------------------------------- */
/* Tables (slow paths: once per new thread, edge or site)                 */
/* ---------------------------------------------------------------------- */

static __attribute__((noinline)) uint32_t thread_index(CallGraph *cg, uint64_t id) {
    int added;
    uint32_t i = prof_threads_find(&cg->th, id, &added, WHO);
    if (added) prof_grow((void **)&cg->threads, &cg->threads_cap, (size_t)i + 1, sizeof(Thread), WHO);
    return i;
}

static __attribute__((noinline)) uint32_t new_edge(CallGraph *cg, uint64_t key) {
    prof_grow((void **)&cg->edges, &cg->edges_cap, cg->nedges + 1, sizeof(Edge), WHO);
    uint32_t e = (uint32_t)cg->nedges++;
    cg->edges[e] = (Edge){(uint32_t)(key >> 32), (uint32_t)key, 0, PROF_SITE_UNKNOWN, PROF_MAP_NONE};
    prof_map_put(&cg->edge_map, key, e, WHO);
    return e;
}

static uint32_t edge_index(CallGraph *cg, uint32_t caller, uint32_t callee) {
    uint64_t key = (uint64_t)caller << 32 | callee;
    uint32_t e = prof_map_get(&cg->edge_map, key);
    return e != PROF_MAP_NONE ? e : new_edge(cg, key);
}

static __attribute__((noinline)) uint32_t site_index(CallGraph *cg, uint32_t e, uint32_t site) {
    uint64_t key = (uint64_t)e << 32 | site;
    uint32_t s = prof_map_get(&cg->site_map, key);
    if (s != PROF_MAP_NONE) return s;
    prof_grow((void **)&cg->sites, &cg->sites_cap, cg->nsites + 1, sizeof(Site), WHO);
    s = (uint32_t)cg->nsites++;
    cg->sites[s] = (Site){e, site, 0};
    prof_map_put(&cg->site_map, key, s, WHO);
    return s;
}

/* Adds [n] calls of edge [e] from [site]. */
static inline void count(CallGraph *cg, uint32_t e, uint32_t site, uint64_t n) {
    Edge *ed = &cg->edges[e];
    ed->calls += n;
    if (ed->last_site != site || ed->last_slot == PROF_MAP_NONE) {
        uint32_t s = site_index(cg, e, site);
        ed = &cg->edges[e];
        ed->last_site = site;
        ed->last_slot = s;
    }
    cg->sites[ed->last_slot].calls += n;
}

/* ---------------------------------------------------------------------- */
/* Consume                                                                */
/* ---------------------------------------------------------------------- */

static __attribute__((noinline)) void push_slow(Thread *t) {
    prof_grow((void **)&t->stack, &t->cap, t->len + 1, sizeof(Frame), WHO);
}

static inline void on_call(CallGraph *cg, uint32_t fid, uint32_t depth, uint32_t cut) {
    if (cg->th.cur == PROF_MAP_NONE) cg->th.cur = thread_index(cg, 0);
    Thread *t = &cg->threads[cg->th.cur];
    while (t->len && t->stack[t->len - 1].depth >= cut) t->len--;
    uint32_t caller, site = cg->pending_site;
    if (cg->pending_caller != 0) {
        caller = cg->pending_caller; /* the site named its Lua caller */
    } else if (t->len == 0) {
        caller = PROF_FID_ROOT;
        if (depth > 1 && site != PROF_SITE_UNKNOWN) site = PROF_SITE_C;
    } else {
        const Frame *top = &t->stack[t->len - 1];
        caller = top->fid;
        /* a depth gap means a C frame between; with no EV_SITE at all the site stays
         * unknown (under sampling the gap may only be a stale shadow stack) */
        if (top->depth + 1 < depth && site != PROF_SITE_UNKNOWN) site = PROF_SITE_C;
    }
    if (t->len == t->cap) push_slow(t);
    t->stack[t->len++] = (Frame){fid, depth};
    count(cg, edge_index(cg, caller, fid), site, cg->weight);
    cg->total += cg->weight;
}

/* A replayed frame (a green thread moved to this carrier's stream): context, not a call. */
static void on_frame(CallGraph *cg, uint32_t fid, uint32_t depth, uint32_t cut) {
    if (cg->th.cur == PROF_MAP_NONE) cg->th.cur = thread_index(cg, 0);
    Thread *t = &cg->threads[cg->th.cur];
    while (t->len && t->stack[t->len - 1].depth >= cut) t->len--;
    if (t->len == t->cap) push_slow(t);
    t->stack[t->len++] = (Frame){fid, depth};
}

static void cg_consume(void *st, const uint64_t *ev, size_t n) {
    CallGraph *cg = st;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = ev[i];
        switch (ev_kind(e)) {
        case EV_CALL:
            on_call(cg, ev_call_fid(e), ev_call_depth(e), ev_call_cut(e));
            cg->pending_site = PROF_SITE_UNKNOWN;
            cg->pending_caller = 0;
            break;
        case EV_SITE:
            cg->pending_site = ev_site_pc(e);
            cg->pending_caller = ev_site_caller(e);
            break;
        case EV_FRAME: on_frame(cg, ev_call_fid(e), ev_call_depth(e), ev_call_cut(e)); break;
        case EV_THREAD:
            cg->th.cur = thread_index(cg, ev_payload(e));
            cg->pending_site = PROF_SITE_UNKNOWN;
            cg->pending_caller = 0;
            break;
        case EV_RATE: cg->weight = ev_rate_weight(e); break;
        case EV_GAP: /* the EV_CALL after a pending site was not sampled */
            cg->pending_site = PROF_SITE_UNKNOWN;
            cg->pending_caller = 0;
            break;
        default: break;
        }
    }
}

/* Shadow stacks are not merged: each stream's threads are its own, and merging happens
 * once the streams have ended. */
static void cg_merge(void *into, void *from) {
    CallGraph *a = into, *b = from;
    uint32_t *map = malloc((b->nedges ? b->nedges : 1) * sizeof *map);
    if (map == NULL) prof_oom(WHO);
    for (size_t e = 0; e < b->nedges; e++) map[e] = edge_index(a, b->edges[e].caller, b->edges[e].callee);
    for (size_t s = 0; s < b->nsites; s++) count(a, map[b->sites[s].edge], b->sites[s].site, b->sites[s].calls);
    a->total += b->total;
    free(map);
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                */
/* ---------------------------------------------------------------------- */

static const char *fn_name(uint32_t fid, const ProfReportOpts *o) {
    if (fid == PROF_FID_ROOT) return "[root]";
    if (fid == PROF_FID_C) return "[C]";
    return o->fname(fid, o->ctx);
}

typedef struct Row {
    const Edge *e;
    const char *caller, *callee;
    Site **sites; /* this edge's sites, most calls first; points into a shared array */
    size_t nsites;
} Row;

static int row_cmp(const void *pa, const void *pb) {
    const Row *x = pa, *y = pb;
    if (x->e->calls != y->e->calls) return x->e->calls > y->e->calls ? -1 : 1;
    int c = strcmp(x->caller, y->caller);
    return c ? c : strcmp(x->callee, y->callee);
}

static int site_cmp(const void *pa, const void *pb) {
    const Site *x = *(Site *const *)pa, *y = *(Site *const *)pb;
    if (x->edge != y->edge) return x->edge < y->edge ? -1 : 1;
    if (x->calls != y->calls) return x->calls > y->calls ? -1 : 1;
    return x->site < y->site ? -1 : x->site > y->site;
}

/* By caller (name, then id: names may repeat), then callee name. */
static int fn_cmp(const void *pa, const void *pb) {
    const Row *x = pa, *y = pb;
    int c = strcmp(x->caller, y->caller);
    if (c) return c;
    if (x->e->caller != y->e->caller) return x->e->caller < y->e->caller ? -1 : 1;
    return strcmp(x->callee, y->callee);
}

typedef struct Fn {
    const char *name;
    uint32_t fid;
    uint64_t incalls; /* calls into it */
} Fn;

static int fnrec_cmp(const void *pa, const void *pb) {
    const Fn *x = pa, *y = pb;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/* Rows sorted by row_cmp, each with its sites; *[sitev] owns the site pointers. */
static Row *make_rows(const CallGraph *cg, const ProfReportOpts *o, Site ***sitev) {
    Row *rows = malloc((cg->nedges ? cg->nedges : 1) * sizeof *rows);
    Site **sv = malloc((cg->nsites ? cg->nsites : 1) * sizeof *sv);
    if (rows == NULL || sv == NULL) {
        free(rows);
        free(sv);
        return NULL;
    }
    for (size_t s = 0; s < cg->nsites; s++) sv[s] = &cg->sites[s];
    qsort(sv, cg->nsites, sizeof *sv, site_cmp);
    size_t s = 0;
    for (size_t e = 0; e < cg->nedges; e++) {
        const Edge *ed = &cg->edges[e];
        rows[e] = (Row){ed, fn_name(ed->caller, o), fn_name(ed->callee, o), sv + s, 0};
        while (s < cg->nsites && sv[s]->edge == e) s++, rows[e].nsites++;
    }
    qsort(rows, cg->nedges, sizeof *rows, row_cmp);
    *sitev = sv;
    return rows;
}

static void site_text(FILE *out, uint32_t site) {
    if (site == PROF_SITE_C) fputs("C", out);
    else if (site == PROF_SITE_UNKNOWN) fputs("?", out);
    else fprintf(out, "pc %u", site);
}

static void report_text(const CallGraph *cg, const Row *rows, FILE *out, const ProfReportOpts *o) {
    double total = cg->total ? (double)cg->total : 1.0;
    fprintf(out, "callgraph: %llu calls along %zu edges\n", (unsigned long long)prof_est(cg->total, o),
            cg->nedges);
    prof_text_notes(out, o);
    fprintf(out, "%12s  %7s  %s\n", "calls", "percent", "caller -> callee  [call sites: calls]");
    for (size_t i = 0; i < cg->nedges && i < REPORT_TOP; i++) {
        const Row *r = &rows[i];
        fprintf(out, "%12llu  %6.2f%%  %s -> %s  [", (unsigned long long)prof_est(r->e->calls, o),
                100.0 * (double)r->e->calls / total, r->caller, r->callee);
        for (size_t k = 0; k < r->nsites && k < SITES_SHOWN; k++) {
            if (k) fputs(", ", out);
            site_text(out, r->sites[k]->site);
            fprintf(out, ": %llu", (unsigned long long)prof_est(r->sites[k]->calls, o));
        }
        if (r->nsites > SITES_SHOWN) fprintf(out, ", %zu more", r->nsites - SITES_SHOWN);
        fputs("]\n", out);
    }
    if (cg->nedges > REPORT_TOP) {
        uint64_t rest = 0;
        for (size_t i = REPORT_TOP; i < cg->nedges; i++) rest += rows[i].e->calls;
        fprintf(out, "%12llu  %6.2f%%  (%zu more edges)\n", (unsigned long long)prof_est(rest, o),
                100.0 * (double)rest / total, cg->nedges - REPORT_TOP);
    }
    fprintf(out, "%12llu  %6.2f%%  total\n", (unsigned long long)prof_est(cg->total, o),
            cg->total ? 100.0 : 0.0);
}

/* {..., "total_calls": N, "edges": [{"caller", "callee", "calls",
 *  "sites": [{"site": pc | "C" | "?", "calls"}]}]}; "[root]" is the caller of a thread's
 * first frame. */
static void report_json(const CallGraph *cg, const Row *rows, FILE *out, const ProfReportOpts *o) {
    prof_json_begin(out, "callgraph", o);
    fprintf(out, ",\"total_calls\":%llu,\"edges\":[", (unsigned long long)cg->total);
    for (size_t i = 0; i < cg->nedges; i++) {
        const Row *r = &rows[i];
        fputs(i ? ",\n{\"caller\":" : "\n{\"caller\":", out);
        prof_json_str(out, r->caller);
        fputs(",\"callee\":", out);
        prof_json_str(out, r->callee);
        fprintf(out, ",\"calls\":%llu,\"sites\":[", (unsigned long long)r->e->calls);
        for (size_t k = 0; k < r->nsites; k++) {
            uint32_t s = r->sites[k]->site;
            fputs(k ? ",{\"site\":" : "{\"site\":", out);
            if (s == PROF_SITE_C) fputs("\"C\"", out);
            else if (s == PROF_SITE_UNKNOWN) fputs("\"?\"", out);
            else fprintf(out, "%u", s);
            fprintf(out, ",\"calls\":%llu}", (unsigned long long)r->sites[k]->calls);
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
}

/* One block per function (by name): its self cost is the number of times it was called;
 * then one call per callee: "calls=<n> <callee line>" and the call's cost, <n> (a call
 * graph knows no inclusive costs). Sites are not written: positions are source lines and
 * the events carry instruction indices. */
static int report_callgrind(const CallGraph *cg, Row *rows, FILE *out, const ProfReportOpts *o) {
    ProfMap ids = {0}; /* function id -> index in fns */
    Fn *fns = malloc((cg->nedges * 2 + 1) * sizeof *fns);
    if (fns == NULL) return -1;
    uint32_t nf = 0;
    for (size_t i = 0; i < cg->nedges; i++) {
        uint32_t ends[2] = {rows[i].e->caller, rows[i].e->callee};
        const char *nm[2] = {rows[i].caller, rows[i].callee};
        for (int k = 0; k < 2; k++) {
            uint32_t f = prof_map_get(&ids, ends[k]);
            if (f == PROF_MAP_NONE) {
                f = nf++;
                prof_map_put(&ids, ends[k], f, WHO);
                fns[f] = (Fn){nm[k], ends[k], 0};
            }
            if (k == 1) fns[f].incalls += rows[i].e->calls;
        }
    }
    prof_map_free(&ids);
    qsort(fns, nf, sizeof *fns, fnrec_cmp);
    qsort(rows, cg->nedges, sizeof *rows, fn_cmp); /* the same order of callers */
    prof_cg_header(out, "callgraph", o, prof_est(cg->total, o));
    size_t i = 0;
    for (uint32_t f = 0; f < nf; f++) {
        unsigned long line = prof_cg_fn(out, "", fns[f].name);
        fprintf(out, "%lu %llu\n", line, (unsigned long long)prof_est(fns[f].incalls, o));
        for (; i < cg->nedges && rows[i].e->caller == fns[f].fid; i++) {
            unsigned long cline = prof_cg_fn(out, "c", rows[i].callee);
            uint64_t n = prof_est(rows[i].e->calls, o);
            fprintf(out, "calls=%llu %lu\n%lu %llu\n", (unsigned long long)n, cline, line, (unsigned long long)n);
        }
        putc('\n', out);
    }
    fprintf(out, "totals: %llu\n", (unsigned long long)prof_est(cg->total, o));
    free(fns);
    return 0;
}

/* pprof: "edge_calls", one sample per edge with the stack [callee, caller] ("[root]" the
 * caller of a thread's first frame). Sites are not written: they are instruction indices,
 * not lines. */
static int add_pprof(ProfPprof *b, const CallGraph *cg, const Row *rows, const ProfReportOpts *o) {
    uint32_t type = prof_pprof_type(b, "edge_calls", "count");
    for (size_t i = 0; i < cg->nedges; i++) {
        uint64_t stack[2] = {prof_pprof_frame(b, rows[i].callee, 0), prof_pprof_frame(b, rows[i].caller, 0)};
        prof_pprof_sample(b, stack, 2, type, prof_est(rows[i].e->calls, o), PROF_PPROF_NO_THREAD);
    }
    return 0;
}

typedef struct PprofArg {
    const CallGraph *cg;
    const Row *rows;
} PprofArg;

static int add_pprof_cb(ProfPprof *b, void *arg, const ProfReportOpts *o) {
    const PprofArg *pa = arg;
    return add_pprof(b, pa->cg, pa->rows, o);
}

static int cg_report_all(const CallGraph *cg, FILE *out, const ProfReportOpts *o) {
    Site **sv;
    Row *rows = make_rows(cg, o, &sv);
    if (rows == NULL) return -1;
    int rc = 0;
    if (o->format == PROF_PPROF) {
        PprofArg pa = {cg, rows};
        rc = prof_pprof_report(out, o, add_pprof_cb, &pa);
    } else if (o->format == PROF_TEXT) report_text(cg, rows, out, o);
    else if (o->format == PROF_JSON) report_json(cg, rows, out, o);
    else rc = report_callgrind(cg, rows, out, o);
    free(rows);
    free(sv);
    return rc || ferror(out) ? -1 : 0;
}

/* Sampled profiles: a call whose EV_SITE was not analysed (the burst began between the two
 * events) has site "?" and a caller guessed from a shadow stack that sampling leaves stale
 * (in binary_trees at 5%, 2% of the calls landed on edges that do not exist). Such calls
 * are left out, and the rate the report scales by shrinks by the fraction kept: whether a
 * call's site was cut off depends on where a burst began, not on the edge, so what remains
 * is an unbiased sample at that rate. Exhaustive streams from the VM never lack a site (it
 * emits one before every call while callgraph is on); the "?" sites there are kept. */
static CallGraph *without_guessed(const CallGraph *cg, ProfReportOpts *o) {
    CallGraph *k = cg_open();
    if (k == NULL) prof_oom(WHO);
    for (size_t s = 0; s < cg->nsites; s++) {
        const Site *si = &cg->sites[s];
        if (si->site == PROF_SITE_UNKNOWN) continue;
        const Edge *e = &cg->edges[si->edge];
        count(k, edge_index(k, e->caller, e->callee), si->site, si->calls);
        k->total += si->calls;
    }
    if (cg->total > 0 && k->total > 0) o->sample_rate *= (double)k->total / (double)cg->total;
    return k;
}

static void cg_close(void *st);

static int cg_report(void *st, FILE *out, const ProfReportOpts *o) {
    CallGraph *cg = st;
    if (o->format != PROF_TEXT && o->format != PROF_JSON && o->format != PROF_CALLGRIND && o->format != PROF_PPROF)
        return -2;
    if (o->sample_rate < 1.0 || o->shadow) {
        ProfReportOpts ko = *o;
        CallGraph *k = without_guessed(cg, &ko);
        int rc = cg_report_all(k, out, &ko);
        cg_close(k);
        return rc;
    }
    return cg_report_all(cg, out, o);
}

static void cg_close(void *st) {
    CallGraph *cg = st;
    if (cg == NULL) return;
    for (uint32_t t = 0; t < cg->th.n; t++) free(cg->threads[t].stack);
    free(cg->threads);
    prof_map_free(&cg->th.ids);
    prof_map_free(&cg->edge_map);
    prof_map_free(&cg->site_map);
    free(cg->edges);
    free(cg->sites);
    free(cg);
}

const ProfAnalysis prof_callgraph = {"callgraph",  PROF_NEED_CALL | PROF_NEED_SITE, cg_open, cg_consume,
                                     cg_merge,     cg_report, cg_close, NULL};
