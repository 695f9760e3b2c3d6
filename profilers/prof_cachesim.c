/* prof_cachesim.c: cache simulation (CAB paper 5.2, like Pin's dcache): the heap loads and
 * stores (EV_LOAD, EV_STORE) run through a set-associative L1 and L2; the report gives
 * hits, misses and miss rates per level and the accesses and misses of each function and of
 * each of its source lines. Reports: text, json, annotate (the source of the functions with
 * most misses, per line), callgrind (per line), pprof (a sample per (function, line):
 * "accesses", "l1_misses", "l2_misses").
 *
 * Model. Defaults as the paper: L1 32 KB 4-way, L2 512 KB 8-way, 64-byte lines, inclusive,
 * FIFO replacement; geometry and policy (fifo | lru) are set by prof_cachesim_configure.
 *   - Loads and stores are alike: write-allocate, no write-back traffic modelled.
 *   - An access looks in L1; on a miss, in L2 (an L2 miss fills L2); then the line fills L1.
 *   - Inclusive: when L2 evicts a line, L1 drops it too (a back-invalidation). L1 hits are
 *     not seen by L2, so under LRU a line hot in L1 can age out of L2 and be invalidated in
 *     L1, as in real inclusive hierarchies.
 *   - Victim: an invalid way if the set has one, else the oldest: by time of insertion
 *     (FIFO) or of last use (LRU). Each way keeps that time as a stamp from one counter.
 *   - One cache per state, i.e. per event stream: a native language thread has a private
 *     cache (its own core's), and the green threads of one carrier share the carrier's (they
 *     run on one core). No coherence between streams is modelled: a line written by one
 *     thread stays valid in another's cache. At the end the states' counts are summed
 *     (merge); the cache contents are not merged.
 *   - Who is charged: the instruction that made the access, from the EV_PC just before it
 *     (PROF_NEED_PC): its function and its pc, kept as a (function, pc) pair and turned into
 *     a source line at report time (ProfSource.lines), so per-line counts cost the hot path
 *     an array index, not a line lookup. Library code in C charges the call instruction of
 *     the nearest Lua frame. An access with no EV_PC before it (a sampled burst began
 *     between them, or a function id too large for EV_PC) is charged to the top of the
 *     current thread's shadow stack, kept from EV_CALL (a call at depth d ends the frames at
 *     depth >= d) and EV_RETURN (the frame at depth d returns: frames at depth >= d end),
 *     at an unknown line; before any call, to "[none]".
 *   - Invariant: every access counted for a function is counted for exactly one of its
 *     (pc) entries, so the per-line counts of a function sum to its per-function counts
 *     (the unknown line included); both merge by addition, so concurrent, sequential and
 *     sharded analyses give the same numbers.
 *
 * Hot path: one set scan per access (plus the L2 set on an L1 miss), and the (function, pc)
 * counts found by two indexings (per function, a dense array by pc); no allocation once
 * every pc is seen. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"
#include "prof_pprof.h"
#include "ev_api.h"

#define WHO "cachesim"
#define LINE_SHIFT 6 /* 64-byte lines */
#define LINE_BYTES (1u << LINE_SHIFT)
#define INVALID UINT64_MAX /* a free way (line numbers are below 2^42: 48-bit addresses) */
#define ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define MAX_SIZE (UINT64_C(1) << 30) /* 1 GiB per level: 16M ways of 16 bytes */
#define REPORT_TOP 30 /* functions listed in the text report */
#define LINES_TOP 20  /* lines listed in the text report */
#define ANNOTATE_TOP 10 /* functions whose source the annotate report shows */
#define PC_MAX (1u << 24) /* larger pcs (none in practice) count as unknown */

typedef struct Geom {
    uint64_t size; /* bytes */
    uint32_t ways;
} Geom;

typedef struct Config {
    Geom g[2]; /* L1, L2 */
    int lru;   /* 0: FIFO */
} Config;

/* Set by prof_cachesim_configure before the analysis starts; copied by open. */
static Config config = {{{32 * 1024, 4}, {512 * 1024, 8}}, 0};

typedef struct Way {
    uint64_t line;  /* INVALID: free */
    uint64_t stamp; /* insertion (FIFO) or last use (LRU) */
} Way;

typedef struct Level {
    Way *ways; /* owned; set s is ways[s * nways .. + nways) */
    uint64_t set_mask;
    uint32_t nways;
    uint64_t hits, misses, evictions;
} Level;

typedef struct FnCount {
    uint64_t accesses, l1_misses, l2_misses;
} FnCount;

/* One function's counts per instruction: at[pc] for the pcs below n (dense: a function's pcs
 * are small and most of those making heap accesses are seen), and the accesses whose
 * instruction is unknown. */
typedef struct FnPcs {
    FnCount *at; /* owned; [n] */
    size_t n;
    FnCount unknown;
} FnPcs;

static void fn_add(FnCount *into, const FnCount *c) {
    into->accesses += c->accesses;
    into->l1_misses += c->l1_misses;
    into->l2_misses += c->l2_misses;
}

typedef struct Frame {
    uint32_t fid, depth;
} Frame;

typedef struct Thread {
    Frame *stack; /* owned */
    size_t len, cap;
} Thread;

typedef struct CacheSim {
    Config cfg;
    uint64_t shard, shard_mask; /* sharded: only the lines with line & mask == shard */
    Level l[2];
    uint64_t clock;
    uint64_t loads, stores;
    uint64_t back_inval; /* L1 lines dropped because L2 evicted them */
    FnCount *fn;         /* owned; fn[fid + 1]; fn[0]: no function */
    size_t fn_cap;
    size_t cur;          /* index in fn of the current function */
    ProfThreads th;
    Thread *threads; /* owned */
    size_t threads_cap;
    FnPcs *pcs;           /* owned; pcs[slot] for fn[slot]; [pcs_cap] >= fn_cap */
    size_t pcs_cap;
    /* An EV_PC came just before: the next access is charged to these (pointers into fn and
     * pcs, which cannot move before that access: only EV_PC, calls, returns, thread
     * switches and merges grow them, and every event but an access drops them). */
    int pending;
    FnCount *pend_fn, *pend_pc;
} CacheSim;

/* ---------------------------------------------------------------------- */
/* Configuration                                                          */
/* ---------------------------------------------------------------------- */

static char errbuf[256];

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

/* Checks level [which] ("L1", "L2") of [lv] and sets [g]. */
static int check_geom(const ProfCacheLevel *lv, const char *which, Geom *g) {
    uint64_t size = lv->size, ways = lv->ways;
    if (size > MAX_SIZE) {
        snprintf(errbuf, sizeof errbuf, "cachesim: %s size %" PRIu64 " is too large (at most 1g)", which, size);
        return -1;
    }
    if (size % LINE_BYTES != 0 || !is_pow2(size / LINE_BYTES)) {
        snprintf(errbuf, sizeof errbuf,
                 "cachesim: %s size %" PRIu64 " must be a power-of-two number of %u-byte lines (e.g. 16k, 32k, 512k)",
                 which, size, LINE_BYTES);
        return -1;
    }
    if (ways == 0 || (size / LINE_BYTES) % ways != 0) {
        snprintf(errbuf, sizeof errbuf, "cachesim: %s ways %" PRIu64 " must be at least 1 and divide its %" PRIu64
                 " lines (a power of two up to %" PRIu64 ")", which, ways, size / LINE_BYTES, size / LINE_BYTES);
        return -1;
    }
    g->size = size;
    g->ways = (uint32_t)ways;
    return 0;
}

int prof_cachesim_configure(const ProfCacheLevel *l1, const ProfCacheLevel *l2, int lru, const char **err) {
    Config c = config;
    if (l1 != NULL && check_geom(l1, "L1", &c.g[0]) != 0) goto fail;
    if (l2 != NULL && check_geom(l2, "L2", &c.g[1]) != 0) goto fail;
    if (lru >= 0) c.lru = lru != 0;
    if (c.g[1].size < c.g[0].size) {
        snprintf(errbuf, sizeof errbuf,
                 "cachesim: L2 (%" PRIu64 " bytes) is smaller than L1 (%" PRIu64
                 " bytes): an inclusive L2 must be at least as large as L1",
                 c.g[1].size, c.g[0].size);
        goto fail;
    }
    config = c;
    return 0;
fail:
    if (err) *err = errbuf;
    return -1;
}

/* ---------------------------------------------------------------------- */
/* State                                                                  */
/* ---------------------------------------------------------------------- */

static void cs_close(void *st);

/* Room for function slots below [need] in fn and pcs alike. */
static void grow_fn(CacheSim *cs, size_t need) {
    prof_grow((void **)&cs->fn, &cs->fn_cap, need, sizeof(FnCount), WHO);
    prof_grow((void **)&cs->pcs, &cs->pcs_cap, cs->fn_cap, sizeof(FnPcs), WHO);
}

static void *cs_open(void) {
    CacheSim *cs = calloc(1, sizeof *cs);
    if (cs == NULL) return NULL;
    cs->cfg = config;
    for (int i = 0; i < 2; i++) {
        uint64_t lines = cs->cfg.g[i].size / LINE_BYTES;
        Level *l = &cs->l[i];
        l->nways = cs->cfg.g[i].ways;
        l->set_mask = lines / l->nways - 1;
        l->ways = malloc(lines * sizeof *l->ways);
        if (l->ways == NULL) {
            cs_close(cs);
            return NULL;
        }
        for (uint64_t w = 0; w < lines; w++) l->ways[w] = (Way){INVALID, 0};
    }
    cs->th.cur = PROF_MAP_NONE;
    grow_fn(cs, 256);
    return cs;
}

/* ---------------------------------------------------------------------- */
/* The cache                                                              */
/* ---------------------------------------------------------------------- */

static inline Way *find(Way *set, uint32_t n, uint64_t line) {
    for (uint32_t i = 0; i < n; i++)
        if (set[i].line == line) return &set[i];
    return NULL;
}

/* The way to replace: a free one, else the smallest stamp. */
static inline Way *victim(Way *set, uint32_t n) {
    Way *v = &set[0];
    for (uint32_t i = 0; i < n; i++) {
        if (set[i].line == INVALID) return &set[i];
        if (set[i].stamp < v->stamp) v = &set[i];
    }
    return v;
}

static inline Way *set_of(Level *l, uint64_t line) { return l->ways + (line & l->set_mask) * l->nways; }

/* L1 missed [line] (in L1 set [s1]): look in L2, fill L2 if needed (evicting from L1 what
 * L2 evicts), then fill L1. Returns 1 if L2 missed too. */
static int miss(CacheSim *cs, uint64_t line, Way *s1) {
    Level *l1 = &cs->l[0], *l2 = &cs->l[1];
    Way *s2 = set_of(l2, line);
    Way *w = find(s2, l2->nways, line);
    int l2miss = w == NULL;
    if (w != NULL) {
        l2->hits++;
        if (cs->cfg.lru) w->stamp = ++cs->clock;
    } else {
        l2->misses++;
        w = victim(s2, l2->nways);
        if (w->line != INVALID) {
            l2->evictions++;
            Way *in1 = find(set_of(l1, w->line), l1->nways, w->line);
            if (in1 != NULL) {
                in1->line = INVALID;
                cs->back_inval++;
            }
        }
        *w = (Way){line, ++cs->clock};
    }
    w = victim(s1, l1->nways);
    if (w->line != INVALID) l1->evictions++;
    *w = (Way){line, ++cs->clock};
    return l2miss;
}

/* Room for pc in [fp]. */
static __attribute__((noinline)) void grow_pcs(FnPcs *fp, size_t pc) {
    prof_grow((void **)&fp->at, &fp->n, pc + 1, sizeof(FnCount), WHO);
}

/* Returns 1 if the access was this state's (always, unless sharded). It is charged to the
 * pending EV_PC's instruction, else to the current function at an unknown line. */
static inline __attribute__((always_inline)) int access_line(CacheSim *cs, uint64_t addr) {
    FnCount *fc, *pcc;
    if (cs->pending) {
        cs->pending = 0;
        fc = cs->pend_fn;
        pcc = cs->pend_pc;
    } else {
        fc = &cs->fn[cs->cur];
        pcc = &cs->pcs[cs->cur].unknown;
    }
    uint64_t line = (addr & ADDR_MASK) >> LINE_SHIFT;
    if ((line & cs->shard_mask) != cs->shard) return 0; /* another shard's sets */
    fc->accesses++;
    pcc->accesses++;
    Level *l1 = &cs->l[0];
    Way *s1 = set_of(l1, line);
    Way *w = find(s1, l1->nways, line);
    if (w != NULL) {
        l1->hits++;
        if (cs->cfg.lru) w->stamp = ++cs->clock;
        return 1;
    }
    l1->misses++;
    fc->l1_misses++;
    pcc->l1_misses++;
    if (miss(cs, line, s1)) {
        fc->l2_misses++;
        pcc->l2_misses++;
    }
    return 1;
}

/* EV_PC: the next access is instruction [pc] of function [fid] (0: unknown, then the
 * shadow stack's function is charged, at an unknown line). A pc beyond PC_MAX (none is:
 * bytecode is far shorter) is counted as unknown rather than given a huge array. */
static inline void on_pc(CacheSim *cs, uint32_t fid, uint32_t pc) {
    if (fid == 0) return;
    size_t slot = (size_t)fid + 1;
    if (slot >= cs->fn_cap) grow_fn(cs, slot + 1);
    FnPcs *fp = &cs->pcs[slot];
    if (pc >= fp->n) {
        if (pc > PC_MAX) {
            cs->pending = 1;
            cs->pend_fn = &cs->fn[slot];
            cs->pend_pc = &fp->unknown;
            return;
        }
        grow_pcs(fp, pc);
    }
    cs->pending = 1;
    cs->pend_fn = &cs->fn[slot];
    cs->pend_pc = &fp->at[pc];
}

/* ---------------------------------------------------------------------- */
/* Consume                                                                */
/* ---------------------------------------------------------------------- */

static __attribute__((noinline)) uint32_t thread_index(CacheSim *cs, uint64_t id) {
    int added;
    uint32_t i = prof_threads_find(&cs->th, id, &added, WHO);
    if (added) prof_grow((void **)&cs->threads, &cs->threads_cap, (size_t)i + 1, sizeof(Thread), WHO);
    return i;
}

static inline Thread *cur_thread(CacheSim *cs) {
    if (cs->th.cur == PROF_MAP_NONE) cs->th.cur = thread_index(cs, 0);
    return &cs->threads[cs->th.cur];
}

/* Makes the top of [t] the current function. */
static inline void set_cur(CacheSim *cs, const Thread *t) {
    size_t slot = t->len ? (size_t)t->stack[t->len - 1].fid + 1 : 0;
    if (slot >= cs->fn_cap) grow_fn(cs, slot + 1);
    cs->cur = slot;
}

static __attribute__((noinline)) void push_slow(Thread *t) {
    prof_grow((void **)&t->stack, &t->cap, t->len + 1, sizeof(Frame), WHO);
}

static void on_call(CacheSim *cs, uint32_t fid, uint32_t depth, uint32_t cut) {
    Thread *t = cur_thread(cs);
    while (t->len && t->stack[t->len - 1].depth >= cut) t->len--;
    if (t->len == t->cap) push_slow(t);
    t->stack[t->len++] = (Frame){fid, depth};
    set_cur(cs, t);
}

static void on_return(CacheSim *cs, uint32_t depth) {
    Thread *t = cur_thread(cs);
    while (t->len && t->stack[t->len - 1].depth >= depth) t->len--;
    set_cur(cs, t);
}

static void cs_consume(void *st, const uint64_t *ev, size_t n) {
    CacheSim *cs = st;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = ev[i];
        EvKind k = ev_kind(e);
        /* An EV_PC belongs to the event right after it, which must be a heap access: any
         * other event (EV_GAP at a sampled burst's start) drops it. */
        if (k != EV_LOAD && k != EV_STORE) cs->pending = 0;
        switch (k) {
        case EV_LOAD:
            cs->loads += access_line(cs, ev_payload(e));
            break;
        case EV_STORE:
            cs->stores += access_line(cs, ev_payload(e));
            break;
        case EV_CALL:
        case EV_FRAME: on_call(cs, ev_call_fid(e), ev_call_depth(e), ev_call_cut(e)); break;
        case EV_RETURN: on_return(cs, (uint32_t)ev_payload(e) & EV_DEPTH_MAX); break;
        case EV_THREAD:
            cs->th.cur = thread_index(cs, ev_payload(e));
            set_cur(cs, &cs->threads[cs->th.cur]);
            break;
        case EV_PC: on_pc(cs, ev_pc_fid(e), ev_pc_pc(e)); break;
        default: break;
        }
    }
}

/* Sums the counts; the cache contents stay per stream (see the file comment). */
static void cs_merge(void *into, void *from) {
    CacheSim *a = into, *b = from;
    for (int i = 0; i < 2; i++) {
        a->l[i].hits += b->l[i].hits;
        a->l[i].misses += b->l[i].misses;
        a->l[i].evictions += b->l[i].evictions;
    }
    a->loads += b->loads;
    a->stores += b->stores;
    a->back_inval += b->back_inval;
    grow_fn(a, b->fn_cap);
    a->pending = 0; /* its pointers may have moved (a merged state consumes no more) */
    for (size_t f = 0; f < b->fn_cap; f++) {
        fn_add(&a->fn[f], &b->fn[f]);
        const FnPcs *bp = &b->pcs[f];
        FnPcs *ap = &a->pcs[f];
        fn_add(&ap->unknown, &bp->unknown);
        if (bp->n > ap->n) grow_pcs(ap, bp->n - 1);
        for (size_t pc = 0; pc < bp->n; pc++) fn_add(&ap->at[pc], &bp->at[pc]);
    }
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                */
/* ---------------------------------------------------------------------- */

/* A function's row: its counts, name, and its lines (a range of the report's Line array). */
typedef struct Row {
    const FnCount *c;
    const char *name;
    uint32_t slot;           /* fid + 1; 0: "[none]" */
    size_t line0, nlines;    /* its lines: Report.lines[line0 .. + nlines), by line */
} Row;

/* One source line of one function (line 0: unknown). */
typedef struct Line {
    uint32_t slot, line;
    FnCount c;
} Line;

/* What every report format draws from: the functions and their lines. */
typedef struct Report {
    Row *rows; /* most L1 misses first (row_cmp) */
    size_t nrows;
    Line *lines; /* by function slot, then line */
    size_t nlines;
} Report;

static int row_cmp(const void *pa, const void *pb) {
    const Row *x = pa, *y = pb;
    if (x->c->l1_misses != y->c->l1_misses) return x->c->l1_misses > y->c->l1_misses ? -1 : 1;
    if (x->c->accesses != y->c->accesses) return x->c->accesses > y->c->accesses ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int line_cmp(const void *pa, const void *pb) {
    const Line *x = pa, *y = pb;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Most L1 misses first, then accesses, then by place. */
static int line_hot_cmp(const void *pa, const void *pb) {
    const Line *x = *(Line *const *)pa, *y = *(Line *const *)pb;
    if (x->c.l1_misses != y->c.l1_misses) return x->c.l1_misses > y->c.l1_misses ? -1 : 1;
    if (x->c.accesses != y->c.accesses) return x->c.accesses > y->c.accesses ? -1 : 1;
    return line_cmp(x, y);
}

/* The source line of [pc] in [src] (its function's; NULL: unknown), 0 when unknown. */
static uint32_t pc_line(const ProfSource *src, size_t pc) {
    return src != NULL && src->lines != NULL && pc < src->ncode && src->lines[pc] > 0 ? (uint32_t)src->lines[pc] : 0;
}

/* Adds [c] to the line [line] of function slot [slot] in [r] (through [at]). */
static void line_add(Report *r, ProfMap *at, uint32_t slot, uint32_t line, const FnCount *c) {
    if (c->accesses == 0) return;
    uint64_t key = (uint64_t)slot << 32 | line;
    uint32_t k = prof_map_get(at, key);
    if (k == PROF_MAP_NONE) {
        k = (uint32_t)r->nlines++;
        r->lines[k] = (Line){slot, line, {0, 0, 0}};
        prof_map_put(at, key, k, WHO);
    }
    fn_add(&r->lines[k].c, c);
}

/* Builds [r] from [cs]: the functions with accesses, and the (function, pc) counts summed
 * per (function, line). Returns 0, or -1 if memory ran out. */
static int report_build(const CacheSim *cs, const ProfReportOpts *o, Report *r) {
    memset(r, 0, sizeof *r);
    size_t n = 0, npc = 0;
    for (size_t f = 0; f < cs->fn_cap; f++) {
        n += cs->fn[f].accesses != 0;
        npc += cs->pcs[f].unknown.accesses != 0;
        for (size_t pc = 0; pc < cs->pcs[f].n; pc++) npc += cs->pcs[f].at[pc].accesses != 0;
    }
    r->rows = malloc((n ? n : 1) * sizeof *r->rows);
    r->lines = malloc((npc ? npc : 1) * sizeof *r->lines);
    if (r->rows == NULL || r->lines == NULL) return -1;
    ProfMap at = {0}; /* slot << 32 | line -> index in lines */
    for (size_t f = 0; f < cs->fn_cap; f++) {
        const FnPcs *fp = &cs->pcs[f];
        ProfSource src = {NULL, 0, 0, NULL, 0};
        int have = f != 0 && fp->n && o->fsource != NULL && o->fsource((uint32_t)(f - 1), &src, o->ctx) == 0;
        line_add(r, &at, (uint32_t)f, 0, &fp->unknown);
        for (size_t pc = 0; pc < fp->n; pc++) line_add(r, &at, (uint32_t)f, pc_line(have ? &src : NULL, pc), &fp->at[pc]);
    }
    prof_map_free(&at);
    qsort(r->lines, r->nlines, sizeof *r->lines, line_cmp);
    size_t l = 0;
    for (size_t f = 0; f < cs->fn_cap; f++) {
        if (cs->fn[f].accesses == 0) continue;
        while (l < r->nlines && r->lines[l].slot < f) l++;
        size_t l0 = l;
        while (l < r->nlines && r->lines[l].slot == f) l++;
        r->rows[r->nrows++] =
            (Row){&cs->fn[f], f ? o->fname((uint32_t)(f - 1), o->ctx) : "[none]", (uint32_t)f, l0, l - l0};
    }
    qsort(r->rows, r->nrows, sizeof *r->rows, row_cmp);
    return 0;
}

static void report_free(Report *r) {
    free(r->rows);
    free(r->lines);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* "32 KB", "1 MB", "96 bytes" */
static void size_text(char *buf, size_t n, uint64_t size) {
    if (size >= (1u << 20) && size % (1u << 20) == 0) snprintf(buf, n, "%" PRIu64 " MB", size >> 20);
    else if (size >= 1024 && size % 1024 == 0) snprintf(buf, n, "%" PRIu64 " KB", size >> 10);
    else snprintf(buf, n, "%" PRIu64 " bytes", size);
}

/* The file of function slot [slot] ("?" when unknown). */
static const char *slot_file(uint32_t slot, const ProfReportOpts *o) {
    ProfSource src = {NULL, 0, 0, NULL, 0};
    if (slot == 0 || o->fsource == NULL || o->fsource(slot - 1, &src, o->ctx) != 0 || src.file == NULL) return "?";
    return src.file;
}

/* The text report's hottest lines: up to LINES_TOP lines with L1 misses, most first. */
static void text_lines(const Report *r, FILE *out, const ProfReportOpts *o) {
    Line **hot = malloc((r->nlines ? r->nlines : 1) * sizeof *hot);
    if (hot == NULL) return;
    size_t n = 0;
    for (size_t l = 0; l < r->nlines; l++)
        if (r->lines[l].c.l1_misses) hot[n++] = &r->lines[l];
    qsort(hot, n, sizeof *hot, line_hot_cmp);
    fprintf(out, "misses per source line (most L1 misses first):\n");
    fprintf(out, "%14s %14s %14s %10s  %s\n", "L1 misses", "L2 misses", "accesses", "L1 rate", "line");
    for (size_t i = 0; i < n && i < LINES_TOP; i++) {
        const Line *ln = hot[i];
        char where[32];
        if (ln->line) snprintf(where, sizeof where, "%" PRIu32, ln->line);
        else snprintf(where, sizeof where, "?");
        fprintf(out, "%14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %9.4f%%  %s:%s in %s\n", prof_est(ln->c.l1_misses, o),
                prof_est(ln->c.l2_misses, o), prof_est(ln->c.accesses, o),
                100.0 * ratio(ln->c.l1_misses, ln->c.accesses), slot_file(ln->slot, o), where,
                ln->slot ? o->fname(ln->slot - 1, o->ctx) : "[none]");
    }
    if (n > LINES_TOP) fprintf(out, "  (%zu more lines with misses)\n", n - LINES_TOP);
    free(hot);
}

static void report_text(const CacheSim *cs, const Report *r, FILE *out, const ProfReportOpts *o) {
    const Row *rows = r->rows;
    size_t nrows = r->nrows;
    uint64_t acc = cs->loads + cs->stores;
    char s1[32], s2[32];
    size_text(s1, sizeof s1, cs->cfg.g[0].size);
    size_text(s2, sizeof s2, cs->cfg.g[1].size);
    fprintf(out, "cachesim: %" PRIu64 " accesses (%" PRIu64 " loads, %" PRIu64 " stores)\n", prof_est(acc, o),
            prof_est(cs->loads, o), prof_est(cs->stores, o));
    fprintf(out, "  L1 %s %u-way, L2 %s %u-way, %u-byte lines, inclusive, %s; one private cache per event stream\n",
            s1, cs->cfg.g[0].ways, s2, cs->cfg.g[1].ways, LINE_BYTES, cs->cfg.lru ? "LRU" : "FIFO");
    prof_text_notes(out, o);
    const Level *l1 = &cs->l[0], *l2 = &cs->l[1];
    fprintf(out, "%6s %14s %14s %10s\n", "level", "hits", "misses", "miss rate");
    fprintf(out, "%6s %14" PRIu64 " %14" PRIu64 " %9.4f%%\n", "L1", prof_est(l1->hits, o), prof_est(l1->misses, o),
            100.0 * ratio(l1->misses, acc));
    fprintf(out, "%6s %14" PRIu64 " %14" PRIu64 " %9.4f%%  (of L2 accesses; %.4f%% of all accesses)\n", "L2",
            prof_est(l2->hits, o), prof_est(l2->misses, o), 100.0 * ratio(l2->misses, l2->hits + l2->misses),
            100.0 * ratio(l2->misses, acc));
    fprintf(out, "  L2 evictions %" PRIu64 ", L1 lines invalidated by them (inclusion) %" PRIu64 "\n",
            prof_est(l2->evictions, o), prof_est(cs->back_inval, o));
    fprintf(out, "misses per function (most L1 misses first):\n");
    fprintf(out, "%14s %14s %14s %10s  %s\n", "L1 misses", "L2 misses", "accesses", "L1 rate", "function");
    for (size_t i = 0; i < nrows && i < REPORT_TOP; i++) {
        const FnCount *c = rows[i].c;
        fprintf(out, "%14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %9.4f%%  %s\n", prof_est(c->l1_misses, o),
                prof_est(c->l2_misses, o), prof_est(c->accesses, o), 100.0 * ratio(c->l1_misses, c->accesses),
                rows[i].name);
    }
    if (nrows > REPORT_TOP) {
        FnCount rest = {0, 0, 0};
        for (size_t i = REPORT_TOP; i < nrows; i++) fn_add(&rest, rows[i].c);
        fprintf(out, "%14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %9.4f%%  (%zu more functions)\n",
                prof_est(rest.l1_misses, o), prof_est(rest.l2_misses, o), prof_est(rest.accesses, o),
                100.0 * ratio(rest.l1_misses, rest.accesses), nrows - REPORT_TOP);
    }
    text_lines(r, out, o);
}

static void level_json(FILE *out, const char *name, const CacheSim *cs, int i) {
    const Level *l = &cs->l[i];
    fprintf(out, ",\"%s\":{\"size\":%" PRIu64 ",\"ways\":%u,\"sets\":%" PRIu64 ",\"hits\":%" PRIu64
                 ",\"misses\":%" PRIu64 ",\"miss_rate\":",
            name, cs->cfg.g[i].size, l->nways, l->set_mask + 1, l->hits, l->misses);
    prof_json_num(out, ratio(l->misses, l->hits + l->misses));
    fprintf(out, ",\"evictions\":%" PRIu64 "}", l->evictions);
}

/* {..., "line_bytes", "policy", "inclusive", "accesses", "loads", "stores",
 *  "l1": {size, ways, sets, hits, misses, miss_rate (local), evictions}, "l2": {...},
 *  "back_invalidations", "functions": [{"function", "id", "accesses", "l1_misses",
 *  "l2_misses", "lines": [{"line", "accesses", "l1_misses", "l2_misses"}]}]}
 * (lines by line number; line 0: unknown; a function's lines sum to its counts) */
static void report_json(const CacheSim *cs, const Report *r, FILE *out, const ProfReportOpts *o) {
    prof_json_begin(out, "cachesim", o);
    fprintf(out, ",\"line_bytes\":%u,\"policy\":\"%s\",\"inclusive\":true,\"accesses\":%" PRIu64 ",\"loads\":%" PRIu64
                 ",\"stores\":%" PRIu64,
            LINE_BYTES, cs->cfg.lru ? "lru" : "fifo", cs->loads + cs->stores, cs->loads, cs->stores);
    level_json(out, "l1", cs, 0);
    level_json(out, "l2", cs, 1);
    fprintf(out, ",\"back_invalidations\":%" PRIu64 ",\"functions\":[", cs->back_inval);
    for (size_t i = 0; i < r->nrows; i++) {
        const Row *row = &r->rows[i];
        fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
        prof_json_str(out, row->name);
        fprintf(out, ",\"id\":%" PRIu32 ",\"accesses\":%" PRIu64 ",\"l1_misses\":%" PRIu64 ",\"l2_misses\":%" PRIu64
                     ",\"lines\":[",
                row->slot ? row->slot - 1 : 0, row->c->accesses, row->c->l1_misses, row->c->l2_misses);
        for (size_t l = 0; l < row->nlines; l++) {
            const Line *ln = &r->lines[row->line0 + l];
            fprintf(out, "%s{\"line\":%" PRIu32 ",\"accesses\":%" PRIu64 ",\"l1_misses\":%" PRIu64
                         ",\"l2_misses\":%" PRIu64 "}",
                    l ? "," : "", ln->line, ln->c.accesses, ln->c.l1_misses, ln->c.l2_misses);
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
}

/* Annotate: the ANNOTATE_TOP functions with most L1 misses (and any accesses), each with its
 * source, a line's accesses and misses beside it ("." for none), as callgrind_annotate. */
static void annotate_function(FILE *out, const Row *row, const Report *r, const ProfReportOpts *o, uint64_t l1_total) {
    const FnCount *c = row->c;
    fprintf(out, "\n-- %s: %" PRIu64 " accesses, %" PRIu64 " L1 misses (%.2f%% of all), %" PRIu64 " L2 misses\n",
            row->name, prof_est(c->accesses, o), prof_est(c->l1_misses, o), 100.0 * ratio(c->l1_misses, l1_total),
            prof_est(c->l2_misses, o));
    ProfSource src = {NULL, 0, 0, NULL, 0};
    int have = row->slot != 0 && o->fsource != NULL && o->fsource(row->slot - 1, &src, o->ctx) == 0 && src.file;
    size_t nsrc = 0;
    char **text = have ? prof_read_lines(src.file, &nsrc, WHO) : NULL;
    if (!have) fputs("   (no source file: the chunk was not loaded from a file)\n", out);
    else if (text == NULL) fprintf(out, "   (source %s not readable: %s)\n", src.file, strerror(errno));
    const Line *ln = r->lines + row->line0;
    size_t n = row->nlines, i = 0;
    fprintf(out, "%12s %12s %12s %6s\n", "accesses", "L1 misses", "L2 misses", "line");
    for (; i < n && ln[i].line == 0; i++) /* line 0 sorts first */
        fprintf(out, "%12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %6s   (no instruction or no line information)\n",
                prof_est(ln[i].c.accesses, o), prof_est(ln[i].c.l1_misses, o), prof_est(ln[i].c.l2_misses, o), "?");
    if (text != NULL) {
        int first = src.first > 0 ? src.first : 1;
        int last = src.first > 0 ? src.last : (int)nsrc;
        if (last > (int)nsrc) last = (int)nsrc;
        for (int l = first; l <= last; l++) {
            for (; i < n && ln[i].line < (uint32_t)l; i++) /* before the function (none expected) */
                fprintf(out, "%12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %6" PRIu32 "   (outside the function)\n",
                        prof_est(ln[i].c.accesses, o), prof_est(ln[i].c.l1_misses, o), prof_est(ln[i].c.l2_misses, o),
                        ln[i].line);
            if (i < n && ln[i].line == (uint32_t)l) {
                fprintf(out, "%12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %6d  %s\n", prof_est(ln[i].c.accesses, o),
                        prof_est(ln[i].c.l1_misses, o), prof_est(ln[i].c.l2_misses, o), l, text[l - 1]);
                i++;
            } else {
                fprintf(out, "%12s %12s %12s %6d  %s\n", ".", ".", ".", l, text[l - 1]);
            }
        }
        prof_free_lines(text, nsrc);
    }
    for (; i < n; i++)
        fprintf(out, "%12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %6" PRIu32 "%s\n", prof_est(ln[i].c.accesses, o),
                prof_est(ln[i].c.l1_misses, o), prof_est(ln[i].c.l2_misses, o), ln[i].line,
                text != NULL ? "   (outside the function)" : "");
}

static void report_annotate(const CacheSim *cs, const Report *r, FILE *out, const ProfReportOpts *o) {
    uint64_t l1_total = cs->l[0].misses;
    fprintf(out, "cachesim annotate: %" PRIu64 " accesses, %" PRIu64 " L1 misses, %" PRIu64
                 " L2 misses; the %d functions with most L1 misses, their source with each line's accesses and "
                 "misses\n",
            prof_est(cs->loads + cs->stores, o), prof_est(l1_total, o), prof_est(cs->l[1].misses, o), ANNOTATE_TOP);
    prof_text_notes(out, o);
    for (size_t i = 0; i < r->nrows && i < ANNOTATE_TOP; i++) annotate_function(out, &r->rows[i], r, o, l1_total);
}

/* Callgrind: three events per source line of each function (fl=/fn= from its display name,
 * as methodcount's), so callgrind_annotate and KCachegrind show misses per line. */
static void report_callgrind(const CacheSim *cs, const Report *r, FILE *out, const ProfReportOpts *o) {
    uint64_t tot[3] = {prof_est(cs->loads + cs->stores, o), prof_est(cs->l[0].misses, o), prof_est(cs->l[1].misses, o)};
    prof_cg_header_events(out, "cachesim", o, "Acc D1m DLm", tot, 3);
    for (size_t i = 0; i < r->nrows; i++) {
        const Row *row = &r->rows[i];
        prof_cg_fn(out, "", row->name);
        for (size_t l = 0; l < row->nlines; l++) {
            const Line *ln = &r->lines[row->line0 + l];
            fprintf(out, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", ln->line, prof_est(ln->c.accesses, o),
                    prof_est(ln->c.l1_misses, o), prof_est(ln->c.l2_misses, o));
        }
        fputc('\n', out);
    }
}

/* pprof: three sample types, and per (function, line) one sample in each (its stack: that
 * location alone, "[none]" for accesses before any call; line 0: unknown). */
static int add_pprof(ProfPprof *b, void *arg, const ProfReportOpts *o) {
    const Report *r = arg;
    uint32_t acc = prof_pprof_type(b, "accesses", "count");
    uint32_t l1 = prof_pprof_type(b, "l1_misses", "count");
    uint32_t l2 = prof_pprof_type(b, "l2_misses", "count");
    for (size_t i = 0; i < r->nrows; i++) {
        const Row *row = &r->rows[i];
        for (size_t l = 0; l < row->nlines; l++) {
            const Line *ln = &r->lines[row->line0 + l];
            uint64_t loc = prof_pprof_frame(b, row->name, ln->line);
            prof_pprof_sample(b, &loc, 1, acc, prof_est(ln->c.accesses, o), PROF_PPROF_NO_THREAD);
            prof_pprof_sample(b, &loc, 1, l1, prof_est(ln->c.l1_misses, o), PROF_PPROF_NO_THREAD);
            prof_pprof_sample(b, &loc, 1, l2, prof_est(ln->c.l2_misses, o), PROF_PPROF_NO_THREAD);
        }
    }
    return 0;
}

static int cs_report(void *st, FILE *out, const ProfReportOpts *o) {
    CacheSim *cs = st;
    if (o->format != PROF_TEXT && o->format != PROF_JSON && o->format != PROF_PPROF && o->format != PROF_ANNOTATE &&
        o->format != PROF_CALLGRIND)
        return -2;
    Report r;
    if (report_build(cs, o, &r) != 0) {
        report_free(&r);
        return -1;
    }
    int rc = 0;
    switch (o->format) {
    case PROF_PPROF: rc = prof_pprof_report(out, o, add_pprof, &r); break;
    case PROF_TEXT: report_text(cs, &r, out, o); break;
    case PROF_ANNOTATE: report_annotate(cs, &r, out, o); break;
    case PROF_CALLGRIND: report_callgrind(cs, &r, out, o); break;
    default: report_json(cs, &r, out, o); break;
    }
    report_free(&r);
    return rc || ferror(out) ? -1 : 0;
}

static void cs_close(void *st) {
    CacheSim *cs = st;
    if (cs == NULL) return;
    for (uint32_t t = 0; t < cs->th.n; t++) free(cs->threads[t].stack);
    free(cs->threads);
    prof_map_free(&cs->th.ids);
    free(cs->l[0].ways);
    free(cs->l[1].ways);
    for (size_t f = 0; f < cs->pcs_cap; f++) free(cs->pcs[f].at);
    free(cs->fn);
    free(cs->pcs);
    free(cs);
}

/* Shards: a set's lines all have the same low line-number bits (the set index), at both
 * levels, and a shard owns the lines whose low bits are its number; with no more shards than
 * either level has sets, every set, and every back-invalidation between the levels, belongs
 * to one shard. Each shard keeps its own stamp clock: only the order of stamps within a set
 * matters to the victim choice, and it is the same. So the merged counts are exactly the
 * unsharded ones; the shadow stack is kept by every shard. */
static void cs_shard(void *st, unsigned shard, unsigned nshards) {
    CacheSim *cs = st;
    cs->shard = shard;
    cs->shard_mask = nshards - 1;
}

unsigned prof_cachesim_max_shards(void) {
    uint64_t s1 = config.g[0].size / LINE_BYTES / config.g[0].ways, s2 = config.g[1].size / LINE_BYTES / config.g[1].ways;
    uint64_t m = s1 < s2 ? s1 : s2;
    return m > 64 ? 64 : (unsigned)m;
}

const ProfAnalysis prof_cachesim = {"cachesim",
                                    PROF_NEED_CALL | PROF_NEED_RETURN | PROF_NEED_MEM | PROF_NEED_PC,
                                    cs_open,
                                    cs_consume,
                                    cs_merge,
                                    cs_report,
                                    cs_close,
                                    cs_shard};
