/* prof_pathprof.c: Ball-Larus path profiling (CAB paper 5.2; Ball and Larus, "Efficient
 * Path Profiling", MICRO 1996): counts how often each acyclic path of each function ran.
 * The interpreter numbers the paths (vm/prof/vm_pathprof.c) and emits one EV_PATH [fid:24 |
 * path:32] per completed path, at back edges and at function exits; this analysis counts
 * them per (function id, path number) in a hash table and, at report time, decodes every
 * number back into the blocks and source lines it went through, through the runtime's
 * ProfReportOpts.decode_path. Reports: text (hottest paths first), json (every path),
 * annotate (the source of the hottest functions with each line's count, "Annotate" below),
 * pprof (the same line counts as "line_entries" samples, one frame at each line).
 *
 * Hot path: one probe of an open-addressing table of (key, count) pairs, key =
 * fid << 32 | path (fid >= 1, so key 0 marks a free slot); no allocation per event (the
 * table doubles at half load). Paths belong to functions, not threads: EV_THREAD is
 * ignored and merging streams adds counts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"
#include "prof_pprof.h"
#include "ev_api.h"

#define WHO "pathprof"
#define REPORT_TOP 30   /* paths listed in the text report */
#define MAX_DECODE 4096 /* blocks and lines kept per decoded path (longer ones are elided) */
#define ANNOTATE_TOP 10 /* functions whose source the annotate report shows */

typedef struct PSlot {
    uint64_t key; /* fid << 32 | path; 0: free */
    uint64_t count;
} PSlot;

typedef struct PathProf {
    PSlot *slots;
    size_t mask; /* slots - 1 */
    size_t n;    /* keys stored */
    uint64_t total;
    uint64_t weight; /* what each path counts for: 1, or 2^shift after EV_RATE */
} PathProf;

static void *pp_open(void) {
    PathProf *pp = calloc(1, sizeof *pp);
    if (pp == NULL) return NULL;
    pp->weight = 1;
    pp->slots = calloc(1024, sizeof *pp->slots);
    if (pp->slots == NULL) {
        free(pp);
        return NULL;
    }
    pp->mask = 1023;
    return pp;
}

static inline size_t slot_of(uint64_t key, size_t mask) { return (size_t)prof_hash64(key) & mask; }

static __attribute__((noinline)) void grow(PathProf *pp) {
    size_t ncap = (pp->mask + 1) * 2;
    PSlot *ns = calloc(ncap, sizeof *ns);
    if (ns == NULL) prof_oom(WHO);
    for (size_t i = 0; i <= pp->mask; i++) {
        if (pp->slots[i].key == 0) continue;
        size_t j = slot_of(pp->slots[i].key, ncap - 1);
        while (ns[j].key != 0) j = (j + 1) & (ncap - 1);
        ns[j] = pp->slots[i];
    }
    free(pp->slots);
    pp->slots = ns;
    pp->mask = ncap - 1;
}

static inline void add(PathProf *pp, uint64_t key, uint64_t count) {
    size_t j = slot_of(key, pp->mask);
    for (;; j = (j + 1) & pp->mask) {
        PSlot *s = &pp->slots[j];
        if (s->key == key) {
            s->count += count;
            return;
        }
        if (s->key == 0) break;
    }
    pp->slots[j].key = key;
    pp->slots[j].count = count;
    if (++pp->n * 2 > pp->mask + 1) grow(pp);
}

static void pp_consume(void *st, const uint64_t *ev, size_t n) {
    PathProf *pp = st;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = ev[i];
        if (ev_kind(e) != EV_PATH) {
            if (ev_kind(e) == EV_RATE) pp->weight = ev_rate_weight(e);
            continue;
        }
        uint32_t fid = ev_path_fid(e);
        if (fid == 0) continue; /* never produced; key 0 is the free mark */
        add(pp, (uint64_t)fid << 32 | ev_path_number(e), pp->weight);
        pp->total += pp->weight;
    }
}

static void pp_merge(void *into, void *from) {
    PathProf *a = into, *b = from;
    for (size_t i = 0; i <= b->mask; i++)
        if (b->slots[i].key != 0) add(a, b->slots[i].key, b->slots[i].count);
    a->total += b->total;
}

typedef struct Row {
    uint32_t fid, path;
    uint64_t count;
    const char *name;
} Row;

/* Most frequent first; ties by function name, then path number (not by id, so the order
 * does not depend on the order functions were first entered in). */
static int row_cmp(const void *x, const void *y) {
    const Row *a = x, *b = y;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c != 0) return c;
    if (a->fid != b->fid) return a->fid < b->fid ? -1 : 1;
    return a->path < b->path ? -1 : a->path > b->path;
}

static Row *sorted_rows(const PathProf *pp, const ProfReportOpts *o) {
    Row *rows = malloc((pp->n ? pp->n : 1) * sizeof *rows);
    if (rows == NULL) return NULL;
    size_t r = 0;
    for (size_t i = 0; i <= pp->mask; i++) {
        const PSlot *s = &pp->slots[i];
        if (s->key == 0) continue;
        uint32_t fid = (uint32_t)(s->key >> 32);
        rows[r++] = (Row){fid, (uint32_t)s->key, s->count, o->fname(fid, o->ctx)};
    }
    qsort(rows, r, sizeof *rows, row_cmp);
    return rows;
}

/* Decoding buffers, one per report. */
typedef struct Dec {
    uint32_t blocks[MAX_DECODE];
    uint32_t lines[MAX_DECODE];
    ProfPath p;
    int ok;
} Dec;

static void decode(Dec *d, const ProfReportOpts *o, uint32_t fid, uint32_t path) {
    d->p = (ProfPath){d->blocks, MAX_DECODE, d->lines, MAX_DECODE, 0, 0, 0};
    d->ok = o->decode_path != NULL && o->decode_path(fid, path, &d->p, o->ctx) == 0;
}

static const char *start_name(unsigned flags) { return flags & PROF_PATH_START_LOOP ? "loop" : "entry"; }
static const char *end_name(unsigned flags) {
    return flags & PROF_PATH_END_BACK ? "back" : flags & PROF_PATH_END_CUT ? "cut" : "return";
}

static void list_u32(FILE *out, const uint32_t *v, int n, int shown, const char *sep) {
    for (int i = 0; i < shown; i++) fprintf(out, "%s%u", i ? sep : "", v[i]);
    if (n > shown) fprintf(out, "%s... (%d more)", sep, n - shown);
}

static size_t count_functions(const Row *rows, size_t n) {
    /* rows are not grouped by function: count distinct ids with a small map */
    ProfMap seen = {0};
    size_t nf = 0;
    for (size_t i = 0; i < n; i++)
        if (prof_map_get(&seen, rows[i].fid) == PROF_MAP_NONE) {
            prof_map_put(&seen, rows[i].fid, 1, WHO);
            nf++;
        }
    prof_map_free(&seen);
    return nf;
}

static void report_text(const PathProf *pp, const Row *rows, FILE *out, const ProfReportOpts *o, Dec *d) {
    double total = pp->total ? (double)pp->total : 1.0;
    fprintf(out, "pathprof: %llu paths run, %zu distinct paths in %zu functions\n",
            (unsigned long long)prof_est(pp->total, o), pp->n, count_functions(rows, pp->n));
    prof_text_notes(out, o);
    fprintf(out, "each path runs from the function's entry or a loop head (\"loop\") to a return or a "
                 "back edge (\"back\"), or a \"cut\" edge in functions with more than 2^32 paths; "
                 "hottest first\n");
    for (size_t i = 0; i < pp->n && i < REPORT_TOP; i++) {
        const Row *r = &rows[i];
        decode(d, o, r->fid, r->path);
        fprintf(out, "%s path %u: ", r->name, r->path);
        if (d->ok) {
            fputs("lines ", out);
            list_u32(out, d->lines, d->p.nlines, d->p.nlines < MAX_DECODE ? d->p.nlines : MAX_DECODE, " ");
            fputs(" (blocks ", out);
            list_u32(out, d->blocks, d->p.nblocks, d->p.nblocks < MAX_DECODE ? d->p.nblocks : MAX_DECODE, " ");
            fprintf(out, "; %s to %s)", start_name(d->p.flags), end_name(d->p.flags));
        } else {
            fputs("(not decoded)", out);
        }
        fprintf(out, " %llu times (%.2f%%)\n", (unsigned long long)prof_est(r->count, o),
                100.0 * (double)r->count / total);
    }
    if (pp->n > REPORT_TOP) {
        uint64_t rest = 0;
        for (size_t i = REPORT_TOP; i < pp->n; i++) rest += rows[i].count;
        fprintf(out, "(%zu more paths: %llu times (%.2f%%))\n", pp->n - REPORT_TOP,
                (unsigned long long)prof_est(rest, o), 100.0 * (double)rest / total);
    }
}

/* {..., "total_paths": N, "paths": [{"function": name, "fid": id, "path": n, "count": c,
 *   "start": "entry"|"loop", "end": "return"|"back"|"cut", "blocks": [...], "lines": [...]}]}
 * A path that cannot be decoded has "start": null and no blocks or lines. */
static void report_json(const PathProf *pp, const Row *rows, FILE *out, const ProfReportOpts *o, Dec *d) {
    prof_json_begin(out, "pathprof", o);
    fprintf(out, ",\"total_paths\":%llu,\"paths\":[", (unsigned long long)pp->total);
    for (size_t i = 0; i < pp->n; i++) {
        const Row *r = &rows[i];
        fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
        prof_json_str(out, r->name);
        fprintf(out, ",\"fid\":%u,\"path\":%u,\"count\":%llu", r->fid, r->path, (unsigned long long)r->count);
        decode(d, o, r->fid, r->path);
        if (!d->ok) {
            fputs(",\"start\":null,\"end\":null,\"blocks\":[],\"lines\":[]}", out);
            continue;
        }
        fprintf(out, ",\"start\":\"%s\",\"end\":\"%s\",\"blocks\":[", start_name(d->p.flags), end_name(d->p.flags));
        list_u32(out, d->blocks, d->p.nblocks < MAX_DECODE ? d->p.nblocks : MAX_DECODE,
                 d->p.nblocks < MAX_DECODE ? d->p.nblocks : MAX_DECODE, ",");
        fputs("],\"lines\":[", out);
        list_u32(out, d->lines, d->p.nlines < MAX_DECODE ? d->p.nlines : MAX_DECODE,
                 d->p.nlines < MAX_DECODE ? d->p.nlines : MAX_DECODE, ",");
        fputc(']', out);
        if (d->p.nblocks > MAX_DECODE || d->p.nlines > MAX_DECODE)
            fprintf(out, ",\"truncated\":true,\"nblocks\":%d,\"nlines\":%d", d->p.nblocks, d->p.nlines);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/* ---- Annotate ----------------------------------------------------------------------
 *
 * Line counts from the paths. A decoded path lists the source lines its blocks went through,
 * consecutive repeats dropped: each entry is control coming to that line from another line,
 * or from a back edge or the function's entry. Every time the path ran, each entry happened
 * once, so a line's count is the sum over paths of the path's count times the line's entries
 * in its list. That is the sense of Lua's line hook (debug.sethook with "l": a new line, or
 * a jump back, even to the same line), which the tests use as the oracle. What a path count
 * cannot see: a path that never ended (its frame left by an error, a coroutine suspended for
 * good, os.exit) counts none of its lines; where a cut edge (functions with more than 2^32
 * paths, -Xpathprof.limit) falls inside a line, the line counts once in each piece (the
 * function's header says its paths were cut). A path longer than MAX_DECODE lines contributes
 * its first MAX_DECODE entries (the report says so). */
typedef struct LineCount {
    uint32_t fid, line;
    uint64_t count;
    int cut; /* a path through it ended at a cut edge */
} LineCount;

typedef struct FnTotal {
    uint32_t fid;
    uint64_t total;
    const char *name;
    int cut; /* some of its paths end at a cut edge */
} FnTotal;

static int fn_total_cmp(const void *x, const void *y) {
    const FnTotal *a = x, *b = y;
    if (a->total != b->total) return a->total > b->total ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int line_count_cmp(const void *x, const void *y) {
    const LineCount *a = x, *b = y;
    if (a->fid != b->fid) return a->fid < b->fid ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* One function's source with its counts: lines first..last of its file, a count or "." on
 * each; counted lines outside that range (none expected) after it. */
static void annotate_function(FILE *out, const ProfReportOpts *o, const FnTotal *fn, const LineCount *lc,
                              size_t nlc, double total) {
    ProfSource src = {NULL, 0, 0, NULL, 0};
    int have = o->fsource != NULL && o->fsource(fn->fid, &src, o->ctx) == 0 && src.file != NULL;
    fprintf(out, "\n-- %s: %llu line entries (%.2f%%)%s\n", fn->name, (unsigned long long)prof_est(fn->total, o),
            100.0 * (double)fn->total / total,
            fn->cut ? "; its paths were cut: a line a cut falls in counts once in each piece" : "");
    size_t nsrc = 0;
    char **text = have ? prof_read_lines(src.file, &nsrc, WHO) : NULL;
    if (!have) fputs("   (no source file: the chunk was not loaded from a file)\n", out);
    else if (text == NULL) fprintf(out, "   (source %s not readable: %s)\n", src.file, strerror(errno));
    size_t i = 0;
    if (text != NULL) {
        int first = src.first > 0 ? src.first : 1;
        int last = src.first > 0 ? src.last : (int)nsrc;
        if (last > (int)nsrc) last = (int)nsrc;
        fprintf(out, "   %s, lines %d-%d\n%12s %6s\n", src.file, first, last, "count", "line");
        for (; i < nlc && (int)lc[i].line < first; i++)
            fprintf(out, "%12llu %6u   (outside the function)\n", (unsigned long long)prof_est(lc[i].count, o), lc[i].line);
        for (int l = first; l <= last; l++) {
            uint64_t c = 0;
            if (i < nlc && lc[i].line == (uint32_t)l) c = lc[i++].count;
            if (c != 0) fprintf(out, "%12llu %6d  %s\n", (unsigned long long)prof_est(c, o), l, text[l - 1]);
            else fprintf(out, "%12s %6d  %s\n", ".", l, text[l - 1]);
        }
        prof_free_lines(text, nsrc);
    } else {
        fprintf(out, "%12s %6s\n", "count", "line");
    }
    for (; i < nlc; i++)
        fprintf(out, "%12llu %6u%s\n", (unsigned long long)prof_est(lc[i].count, o), lc[i].line,
                text != NULL ? "   (outside the function)" : "");
}

/* The line counts of every function (sorted by function id, then line; malloc'd, *[nlc] of
 * them, NULL if none); *[truncated]: some path had more than MAX_DECODE lines; *[undecoded]:
 * some path could not be decoded. */
static LineCount *line_counts(const PathProf *pp, const Row *rows, const ProfReportOpts *o, Dec *d, size_t *nlcp,
                              int *truncated, int *undecoded) {
    LineCount *lc = NULL;
    size_t nlc = 0, cap = 0;
    ProfMap at = {0}; /* fid << 32 | line -> index in lc */
    *truncated = *undecoded = 0;
    for (size_t i = 0; i < pp->n; i++) {
        const Row *r = &rows[i];
        decode(d, o, r->fid, r->path);
        if (!d->ok) {
            *undecoded = 1;
            continue;
        }
        int n = d->p.nlines;
        if (n > MAX_DECODE) {
            n = MAX_DECODE;
            *truncated = 1;
        }
        for (int k = 0; k < n; k++) {
            uint32_t line = d->lines[k];
            if (line == 0) continue; /* no line information */
            uint64_t key = (uint64_t)r->fid << 32 | line;
            uint32_t j = prof_map_get(&at, key);
            if (j == PROF_MAP_NONE) {
                prof_grow((void **)&lc, &cap, nlc + 1, sizeof *lc, WHO);
                lc[nlc] = (LineCount){r->fid, line, 0, 0};
                j = (uint32_t)nlc++;
                prof_map_put(&at, key, j, WHO);
            }
            lc[j].count += r->count;
            if (d->p.flags & PROF_PATH_END_CUT) lc[j].cut = 1;
        }
    }
    prof_map_free(&at);
    if (nlc > 0) qsort(lc, nlc, sizeof *lc, line_count_cmp);
    *nlcp = nlc;
    return lc;
}

static void report_annotate(const PathProf *pp, const Row *rows, FILE *out, const ProfReportOpts *o, Dec *d) {
    size_t nlc;
    int truncated, undecoded;
    LineCount *lc = line_counts(pp, rows, o, d, &nlc, &truncated, &undecoded);
    /* Per function: its total and where its lines start in lc. */
    FnTotal *fns = NULL;
    size_t *start = NULL, nf = 0, fcap = 0, scap = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < nlc; i++) {
        if (i == 0 || lc[i].fid != lc[i - 1].fid) {
            prof_grow((void **)&fns, &fcap, nf + 1, sizeof *fns, WHO);
            prof_grow((void **)&start, &scap, nf + 1, sizeof *start, WHO);
            fns[nf] = (FnTotal){lc[i].fid, 0, o->fname(lc[i].fid, o->ctx), 0};
            start[nf++] = i;
        }
        fns[nf - 1].total += lc[i].count;
        fns[nf - 1].cut |= lc[i].cut;
        total += lc[i].count;
    }
    /* Sort the functions, keeping each one's range of lc: sort indices by their totals. */
    FnTotal *sorted = nf ? malloc(nf * sizeof *sorted) : NULL;
    if (nf && sorted == NULL) prof_oom(WHO);
    for (size_t f = 0; f < nf; f++) {
        sorted[f] = fns[f];
        sorted[f].fid = (uint32_t)f; /* index into fns/start while sorting */
    }
    if (nf) qsort(sorted, nf, sizeof *sorted, fn_total_cmp);
    fprintf(out, "pathprof annotate: %llu line entries in %zu functions, from %llu paths run; the %d hottest "
                 "functions' source with the times control entered each line (a new line, or a jump back to "
                 "one, as Lua's line hook counts)\n",
            (unsigned long long)prof_est(total, o), nf, (unsigned long long)prof_est(pp->total, o), ANNOTATE_TOP);
    prof_text_notes(out, o);
    if (truncated) fprintf(out, "(paths longer than %d lines count their first %d only)\n", MAX_DECODE, MAX_DECODE);
    if (undecoded) fputs("(some paths could not be decoded and are not counted)\n", out);
    double dt = total ? (double)total : 1.0;
    for (size_t k = 0; k < nf && k < ANNOTATE_TOP; k++) {
        size_t f = sorted[k].fid;
        size_t end = f + 1 < nf ? start[f + 1] : nlc;
        annotate_function(out, o, &fns[f], lc + start[f], end - start[f], dt);
    }
    if (nf > ANNOTATE_TOP) {
        uint64_t rest = 0;
        for (size_t k = ANNOTATE_TOP; k < nf; k++) rest += sorted[k].total;
        fprintf(out, "\n(%zu more functions: %llu line entries (%.2f%%))\n", nf - ANNOTATE_TOP,
                (unsigned long long)prof_est(rest, o), 100.0 * (double)rest / dt);
    }
    free(sorted);
    free(fns);
    free(start);
    free(lc);
}

typedef struct PprofArg {
    const PathProf *pp;
    const Row *rows;
    Dec *d;
} PprofArg;

/* pprof: "line_entries", the annotate report's counts: one sample per (function, line) with
 * a one-frame stack at that line, so pprof's source views (list, weblist) show each line's
 * entries. */
static int add_pprof(ProfPprof *b, void *arg, const ProfReportOpts *o) {
    const PprofArg *pa = arg;
    size_t nlc;
    int truncated, undecoded;
    LineCount *lc = line_counts(pa->pp, pa->rows, o, pa->d, &nlc, &truncated, &undecoded);
    uint32_t type = prof_pprof_type(b, "line_entries", "count");
    for (size_t i = 0; i < nlc; i++) {
        uint64_t loc = prof_pprof_frame(b, o->fname(lc[i].fid, o->ctx), lc[i].line);
        prof_pprof_sample(b, &loc, 1, type, prof_est(lc[i].count, o), PROF_PPROF_NO_THREAD);
    }
    free(lc);
    return 0;
}

static int pp_report(void *st, FILE *out, const ProfReportOpts *o) {
    PathProf *pp = st;
    if (o->format != PROF_TEXT && o->format != PROF_JSON && o->format != PROF_ANNOTATE && o->format != PROF_PPROF)
        return -2;
    Row *rows = sorted_rows(pp, o);
    Dec *d = malloc(sizeof *d);
    if (rows == NULL || d == NULL) {
        free(rows);
        free(d);
        return -1;
    }
    int rc = 0;
    if (o->format == PROF_PPROF) {
        PprofArg pa = {pp, rows, d};
        rc = prof_pprof_report(out, o, add_pprof, &pa);
    } else if (o->format == PROF_TEXT) {
        report_text(pp, rows, out, o, d);
    } else if (o->format == PROF_ANNOTATE) {
        report_annotate(pp, rows, out, o, d);
    } else {
        report_json(pp, rows, out, o, d);
    }
    free(d);
    free(rows);
    return rc || ferror(out) ? -1 : 0;
}

static void pp_close(void *st) {
    PathProf *pp = st;
    if (pp == NULL) return;
    free(pp->slots);
    free(pp);
}

const ProfAnalysis prof_pathprof = {"pathprof", PROF_NEED_PATH, pp_open, pp_consume, pp_merge, pp_report, pp_close, NULL};
