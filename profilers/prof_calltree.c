/* prof_calltree.c: call-tree profiling (CAB paper 5.2): the calling context tree (CCT) of
 * each language thread with the number of calls of every context, and the paper's summary
 * of the dynamic call tree by its subtree patterns of depth two. Reports: text, json,
 * folded stacks, pprof.
 *
 * Built on the analyzer from the call events alone, as the paper does (Ha et al. needed a
 * bit vector on the application's stack; here the instrumentation is the call graph's):
 * each thread has a shadow stack of (CCT node, depth); a call at depth d pops every frame
 * at depth >= d (returns, errors, tail calls: ev_api.h), and its context is the child of
 * the frame left on top. A gap in depth (the call is made by C code, e.g. pcall, or by a
 * metamethod through C) becomes one "[C]" node between the Lua frames, whatever the number
 * of C frames in the gap; it stays on the shadow stack until a call at or below its depth,
 * so Lua calls made through the same C frame share it (the events do not tell a C frame
 * that returned and a new one at the same depth apart; its count is the number of times a
 * gap was entered, not the number of C calls). Each thread's tree hangs from its own root
 * ("[root]", not a call); EV_THREAD picks the thread (green threads interleave in a
 * carrier's stream), and events before any EV_THREAD belong to thread 0.
 *
 * pprof: one sample per context with calls, its stack from the thread's first frame down
 * (innermost first in the sample), its value the context's calls, labelled "thread" with the
 * thread id: the folded stacks' lines with the thread as a label instead of a frame.
 *
 * Depth-two subtree patterns. Our reading of the paper (5.2, after Ha et al., "Improved
 * error reporting for software that uses black-box components", PLDI'07): every node of
 * the dynamic call tree (one per invocation, not per context) is summarised by the subtree
 * of depth two rooted at it, taken as the pair (its function, the SET of distinct functions
 * it called directly): Ha et al. mark the calls of a frame in a bit vector, so order and
 * multiplicity of the children are dropped. The summary is the histogram of these patterns:
 * each distinct pattern with the number of invocations that had it. Invocations that call
 * nothing count too, as (f, {}), so the histogram sums to the number of invocations; a
 * "[C]" node is a node like any other (its pattern is ([C], {Lua functions called through
 * it})) and appears in its Lua caller's set as "[C]"; the roots are not invocations and
 * have no pattern. A pattern is complete when its frame is popped; frames still open when
 * the profile is merged or reported (the main chunk, a thread killed mid-call) are closed
 * then with the children seen so far.
 *
 * Child sets without allocation: the children of the frame on top are a segment of the
 * thread's kids array (frames above it have been popped before it calls again, so the
 * segments nest like the frames). A CCT node's mark holds the serial number of the frame
 * that last listed it: a context is the child of exactly one parent node and one frame of
 * that node at a time, so mark == serial means "already in the set".
 *
 * State: all threads' nodes in one array (a child's index is above its parent's); children
 * found through a ProfMap keyed by (parent index, function id); patterns in a ProfMap from
 * their 64-bit hash to a chain of patterns with that hash, their child lists in one pool. */
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"
#include "prof_pprof.h"
#include "ev_api.h"

#define WHO "calltree"
#define TEXT_LINES 100     /* contexts listed in the text report */
#define TEXT_MIN_PERMILLE 5 /* ... whose subtree has at least 0.5% of all calls */
#define TEXT_PATTERNS 30    /* patterns listed in the text report */
#define SMALL_SORT 16       /* child sets up to this size are insertion-sorted */

typedef struct Node {
    uint32_t fid;    /* function id, PROF_FID_C, or PROF_FID_ROOT */
    uint32_t parent; /* PROF_MAP_NONE for a root */
    uint64_t calls;  /* calls of this context */
    uint64_t mark;   /* serial of the frame that last put this node in its child set */
    uint32_t last;   /* the pattern of this context's last invocation (PROF_MAP_NONE: none):
                        loops repeat shapes, so most pops skip the hash lookup */
} Node;

typedef struct Frame {
    uint32_t node;
    uint32_t depth; /* 0 for the root frame, never popped */
    uint32_t cbase; /* where this frame's child set starts in kids */
    uint32_t replay; /* replayed (EV_FRAME): its invocation was counted in another stream */
    uint64_t serial;
} Frame;

typedef struct Thread {
    uint64_t id;
    uint32_t root;  /* node index */
    Frame *stack;   /* owned; stack[0] is the root frame */
    size_t len, cap;
    uint32_t *kids; /* owned; the child sets of the frames, as segments */
    size_t klen, kcap;
} Thread;

typedef struct Pattern {
    uint32_t fid;
    uint32_t nkids;
    size_t off;     /* first child in pool (sorted function ids) */
    uint64_t hash;
    uint64_t count; /* invocations with this pattern */
    uint32_t next;  /* next pattern with the same hash, or PROF_MAP_NONE */
} Pattern;

typedef struct CallTree {
    ProfThreads th;
    Thread *threads; /* owned */
    size_t threads_cap;
    Node *nodes;     /* owned */
    size_t nnodes, nodes_cap;
    ProfMap children; /* parent << 32 | fid -> node */
    Pattern *pats;    /* owned */
    size_t npats, pats_cap;
    ProfMap pat_map;  /* hash -> first pattern with it */
    uint32_t *pool;   /* owned; the patterns' children */
    size_t pool_len, pool_cap;
    uint64_t serial;  /* frames pushed so far */
    uint64_t total;   /* calls (Lua, not counting [C] nodes) */
    uint64_t invocations; /* patterns recorded */
    uint64_t weight;  /* what each call counts for: 1, or 2^shift after EV_RATE (patterns are
                         not weighted: they stay counts of the invocations observed) */
} CallTree;

static void *ct_open(void) {
    CallTree *ct = calloc(1, sizeof *ct);
    if (ct == NULL) return NULL;
    ct->th.cur = PROF_MAP_NONE;
    ct->weight = 1;
    return ct;
}

/* ---------------------------------------------------------------------- */
/* Tree and patterns                                                      */
/* ---------------------------------------------------------------------- */

static uint32_t new_node(CallTree *ct, uint32_t parent, uint32_t fid) {
    prof_grow((void **)&ct->nodes, &ct->nodes_cap, ct->nnodes + 1, sizeof(Node), WHO);
    uint32_t n = (uint32_t)ct->nnodes++;
    ct->nodes[n] = (Node){fid, parent, 0, 0, PROF_MAP_NONE};
    return n;
}

static __attribute__((noinline)) uint32_t add_child(CallTree *ct, uint32_t parent, uint32_t fid) {
    uint32_t n = new_node(ct, parent, fid);
    prof_map_put(&ct->children, (uint64_t)parent << 32 | fid, n, WHO);
    return n;
}

static inline uint32_t child(CallTree *ct, uint32_t parent, uint32_t fid) {
    uint32_t n = prof_map_get(&ct->children, (uint64_t)parent << 32 | fid);
    return n != PROF_MAP_NONE ? n : add_child(ct, parent, fid);
}

static __attribute__((noinline)) uint32_t thread_index(CallTree *ct, uint64_t id) {
    int added;
    uint32_t i = prof_threads_find(&ct->th, id, &added, WHO);
    if (added) {
        prof_grow((void **)&ct->threads, &ct->threads_cap, (size_t)i + 1, sizeof(Thread), WHO);
        Thread *t = &ct->threads[i];
        t->id = id;
        t->root = new_node(ct, PROF_MAP_NONE, PROF_FID_ROOT);
        prof_grow((void **)&t->stack, &t->cap, 16, sizeof(Frame), WHO);
        t->stack[0] = (Frame){t->root, 0, 0, 0, ++ct->serial};
        t->len = 1;
    }
    return i;
}

static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void sort_u32(uint32_t *v, size_t n) {
    if (n > SMALL_SORT) {
        qsort(v, n, sizeof *v, u32_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint32_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

static uint64_t pattern_hash(uint32_t fid, const uint32_t *kids, size_t n) {
    uint64_t h = prof_hash64(((uint64_t)fid << 32) ^ n);
    for (size_t i = 0; i < n; i++) h = prof_hash64(h ^ kids[i]);
    return h;
}

static __attribute__((noinline)) void add_pattern(CallTree *ct, uint32_t fid, const uint32_t *kids,
                                                  size_t n, uint64_t h, uint32_t first, uint64_t count) {
    prof_grow((void **)&ct->pool, &ct->pool_cap, ct->pool_len + n, sizeof(uint32_t), WHO);
    prof_grow((void **)&ct->pats, &ct->pats_cap, ct->npats + 1, sizeof(Pattern), WHO);
    uint32_t p = (uint32_t)ct->npats++;
    if (n) memcpy(ct->pool + ct->pool_len, kids, n * sizeof *kids);
    ct->pats[p] = (Pattern){fid, (uint32_t)n, ct->pool_len, h, count, PROF_MAP_NONE};
    ct->pool_len += n;
    if (first == PROF_MAP_NONE) {
        prof_map_put(&ct->pat_map, h, p, WHO);
    } else { /* another pattern with this hash: chain after the first */
        ct->pats[p].next = ct->pats[first].next;
        ct->pats[first].next = p;
    }
}

static inline int pattern_is(const CallTree *ct, uint32_t p, uint32_t fid, const uint32_t *kids, size_t n) {
    const Pattern *pt = &ct->pats[p];
    return pt->fid == fid && pt->nkids == n && (n == 0 || memcmp(ct->pool + pt->off, kids, n * sizeof *kids) == 0);
}

/* Counts [count] invocations of (fid, kids) ([kids] sorted, distinct); returns the
 * pattern's index. */
static uint32_t count_pattern(CallTree *ct, uint32_t fid, const uint32_t *kids, size_t n, uint64_t count) {
    uint64_t h = pattern_hash(fid, kids, n);
    uint32_t first = prof_map_get(&ct->pat_map, h);
    for (uint32_t p = first; p != PROF_MAP_NONE; p = ct->pats[p].next) {
        if (ct->pats[p].hash == h && pattern_is(ct, p, fid, kids, n)) {
            ct->pats[p].count += count;
            return p;
        }
    }
    add_pattern(ct, fid, kids, n, h, first, count);
    return (uint32_t)ct->npats - 1;
}

/* ---------------------------------------------------------------------- */
/* Consume                                                                */
/* ---------------------------------------------------------------------- */

/* Pops the top frame (not the root) and counts its pattern. */
static inline void pop(CallTree *ct, Thread *t) {
    Frame *f = &t->stack[--t->len];
    if (f->replay) { /* counted where the invocation began; its pattern is not ours */
        t->klen = f->cbase;
        return;
    }
    uint32_t *kids = t->kids + f->cbase;
    size_t n = t->klen - f->cbase;
    sort_u32(kids, n);
    Node *nd = &ct->nodes[f->node];
    if (nd->last != PROF_MAP_NONE && pattern_is(ct, nd->last, nd->fid, kids, n))
        ct->pats[nd->last].count++;
    else
        nd->last = count_pattern(ct, nd->fid, kids, n, 1);
    ct->invocations++;
    t->klen = f->cbase;
}

static __attribute__((noinline)) void grow_thread(Thread *t) {
    prof_grow((void **)&t->stack, &t->cap, t->len + 1, sizeof(Frame), WHO);
    prof_grow((void **)&t->kids, &t->kcap, t->klen + 1, sizeof(uint32_t), WHO);
}

/* Enters context [fid] under the frame on top, at [depth]. */
static inline void enter(CallTree *ct, Thread *t, uint32_t fid, uint32_t depth, uint32_t replay) {
    Frame *top = &t->stack[t->len - 1];
    uint32_t n = child(ct, top->node, fid);
    Node *nd = &ct->nodes[n];
    nd->calls += replay ? 0 : ct->weight;
    if (t->len == t->cap || t->klen == t->kcap) grow_thread(t);
    top = &t->stack[t->len - 1];
    if (!replay && nd->mark != top->serial) { /* first call of fid by this invocation */
        nd->mark = top->serial;
        t->kids[t->klen++] = fid;
    }
    t->stack[t->len++] = (Frame){n, depth, (uint32_t)t->klen, replay, ++ct->serial};
}

/* A call ([replay] 0), or a frame replayed after a green thread moved here ([replay] 1:
 * context only, counted in the stream where the call happened). */
static inline void on_call(CallTree *ct, uint32_t fid, uint32_t depth, uint32_t cut, uint32_t replay) {
    if (ct->th.cur == PROF_MAP_NONE) ct->th.cur = thread_index(ct, 0);
    Thread *t = &ct->threads[ct->th.cur];
    if (depth == 0) depth = 1; /* the root frame is at 0 */
    if (cut == 0) cut = 1;
    while (t->stack[t->len - 1].depth >= cut) pop(ct, t);
    if (t->stack[t->len - 1].depth + 1 < depth) enter(ct, t, PROF_FID_C, depth - 1, replay);
    enter(ct, t, fid, depth, replay);
    ct->total += replay ? 0 : ct->weight;
}

static void ct_consume(void *st, const uint64_t *ev, size_t n) {
    CallTree *ct = st;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = ev[i];
        EvKind k = ev_kind(e);
        if (k == EV_CALL) on_call(ct, ev_call_fid(e), ev_call_depth(e), ev_call_cut(e), 0);
        else if (k == EV_FRAME) on_call(ct, ev_call_fid(e), ev_call_depth(e), ev_call_cut(e), 1);
        else if (k == EV_THREAD) ct->th.cur = thread_index(ct, ev_payload(e));
        else if (k == EV_RATE) ct->weight = ev_rate_weight(e);
    }
}

/* Closes every open frame (their patterns count with the children seen so far). */
static void flush(CallTree *ct) {
    for (uint32_t i = 0; i < ct->th.n; i++) {
        Thread *t = &ct->threads[i];
        while (t->len > 1) pop(ct, t);
    }
}

/* The patterns of [b]'s open frames (with the children seen so far) counted in [a], as
 * flush(b) would count them in b, but leaving b as it is: [b] may be a stream that goes on
 * (the profile library's snapshots merge the live streams into a fresh state, and the
 * frames' own returns count them in b later). */
static void count_open(CallTree *a, const CallTree *b) {
    uint32_t *tmp = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < b->th.n; i++) {
        const Thread *t = &b->threads[i];
        for (size_t j = t->len; j-- > 1;) {
            const Frame *f = &t->stack[j];
            if (f->replay) continue; /* as pop: counted where the invocation began */
            size_t end = j + 1 < t->len ? t->stack[j + 1].cbase : t->klen, n = end - f->cbase;
            if (n > cap) prof_grow((void **)&tmp, &cap, n, sizeof *tmp, WHO);
            if (n) memcpy(tmp, t->kids + f->cbase, n * sizeof *tmp);
            sort_u32(tmp, n);
            count_pattern(a, b->nodes[f->node].fid, tmp, n, 1);
            a->invocations++;
        }
    }
    free(tmp);
}

static void ct_merge(void *into, void *from) {
    CallTree *a = into, *b = from;
    flush(a);
    count_open(a, b);
    uint32_t *map = malloc((b->nnodes ? b->nnodes : 1) * sizeof *map);
    if (map == NULL) prof_oom(WHO);
    for (uint32_t i = 0; i < b->th.n; i++) {
        const Thread *tb = &b->threads[i];
        uint32_t ia = thread_index(a, tb->id); /* may move a->threads: index after the call */
        map[tb->root] = a->threads[ia].root;
    }
    for (size_t n = 0; n < b->nnodes; n++) { /* parents come before their children */
        const Node *nb = &b->nodes[n];
        if (nb->parent == PROF_MAP_NONE) continue;
        map[n] = child(a, map[nb->parent], nb->fid);
        a->nodes[map[n]].calls += nb->calls;
    }
    free(map);
    for (size_t p = 0; p < b->npats; p++) {
        const Pattern *pt = &b->pats[p];
        count_pattern(a, pt->fid, b->pool + pt->off, pt->nkids, pt->count);
    }
    a->total += b->total;
    a->invocations += b->invocations;
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                */
/* ---------------------------------------------------------------------- */

/* The tree as the reports walk it: children lists sorted by subtree calls (most first),
 * then name, then id, so the output does not depend on the order events arrived in. */
typedef struct View {
    const CallTree *ct;
    const ProfReportOpts *o;
    const char **name; /* per node */
    uint64_t *sub;     /* per node: calls in its subtree */
    uint32_t *first;   /* per node: its children are kid[first[n] .. first[n+1]) */
    uint32_t *kid;
} View;

static const char *fn_name(uint32_t fid, const ProfReportOpts *o) {
    if (fid == PROF_FID_ROOT) return "[root]";
    if (fid == PROF_FID_C) return "[C]";
    return o->fname(fid, o->ctx);
}

static int kid_cmp(const void *pa, const void *pb, void *arg) {
    uint32_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;
    const View *v = arg;
    if (v->sub[x] != v->sub[y]) return v->sub[x] > v->sub[y] ? -1 : 1;
    int c = strcmp(v->name[x], v->name[y]);
    if (c) return c;
    uint32_t fx = v->ct->nodes[x].fid, fy = v->ct->nodes[y].fid;
    return fx < fy ? -1 : fx > fy;
}

static void view_free(View *v) {
    free(v->name);
    free(v->sub);
    free(v->first);
    free(v->kid);
}

static int view_make(View *v, const CallTree *ct, const ProfReportOpts *o) {
    size_t nn = ct->nnodes;
    *v = (View){ct, o, malloc((nn + 1) * sizeof *v->name), calloc(nn + 1, sizeof *v->sub),
                calloc(nn + 2, sizeof *v->first), malloc((nn + 1) * sizeof *v->kid)};
    if (!v->name || !v->sub || !v->first || !v->kid) {
        view_free(v);
        return -1;
    }
    for (size_t n = 0; n < nn; n++) {
        v->name[n] = fn_name(ct->nodes[n].fid, o);
        v->sub[n] = ct->nodes[n].fid == PROF_FID_C ? 0 : ct->nodes[n].calls;
    }
    for (size_t n = nn; n-- > 0;) /* children have higher indices than parents */
        if (ct->nodes[n].parent != PROF_MAP_NONE) v->sub[ct->nodes[n].parent] += v->sub[n];
    /* counting sort of nodes by parent */
    for (size_t n = 0; n < nn; n++)
        if (ct->nodes[n].parent != PROF_MAP_NONE) v->first[ct->nodes[n].parent + 1]++;
    for (size_t n = 0; n < nn; n++) v->first[n + 1] += v->first[n];
    uint32_t *fill = malloc((nn + 1) * sizeof *fill);
    if (fill == NULL) {
        view_free(v);
        return -1;
    }
    memcpy(fill, v->first, (nn + 1) * sizeof *fill);
    for (size_t n = 0; n < nn; n++)
        if (ct->nodes[n].parent != PROF_MAP_NONE) v->kid[fill[ct->nodes[n].parent]++] = (uint32_t)n;
    free(fill);
    for (size_t n = 0; n < nn; n++) /* glibc's qsort_r (_GNU_SOURCE) */
        qsort_r(v->kid + v->first[n], v->first[n + 1] - v->first[n], sizeof *v->kid, kid_cmp, v);
    return 0;
}

static int thread_cmp(const void *pa, const void *pb, void *arg) {
    const CallTree *ct = arg;
    uint64_t x = ct->threads[*(const uint32_t *)pa].id, y = ct->threads[*(const uint32_t *)pb].id;
    return x < y ? -1 : x > y;
}

/* Threads in order of id. */
static uint32_t *thread_order(const CallTree *ct) {
    uint32_t *ord = malloc((ct->th.n + 1) * sizeof *ord);
    if (ord == NULL) return NULL;
    for (uint32_t i = 0; i < ct->th.n; i++) ord[i] = i;
    qsort_r(ord, ct->th.n, sizeof *ord, thread_cmp, (void *)ct);
    return ord;
}

/* Depth-first walk from [root] in view order, without recursion (recursive programs make
 * deep trees). Calls [visit] for every node below the root with its depth (1 for the
 * root's children) and the path of nodes from the first level to it; [visit] returns
 * nonzero to skip the node's subtree. Returns -1 if out of memory. */
typedef int (*VisitFn)(const View *v, const uint32_t *path, size_t depth, void *arg);

static int walk(const View *v, uint32_t root, VisitFn visit, void *arg) {
    size_t cap = 64, len = 0;
    uint32_t *path = malloc(cap * sizeof *path); /* path[i]: node at level i+1 */
    uint32_t *pos = malloc(cap * sizeof *pos);   /* pos[i]: next child index of level i */
    if (path == NULL || pos == NULL) {
        free(path), free(pos);
        return -1;
    }
    uint32_t next = v->first[root];
    for (;;) {
        uint32_t parent = len ? path[len - 1] : root;
        if (next < v->first[parent + 1]) {
            uint32_t n = v->kid[next];
            if (len == cap) {
                cap *= 2;
                uint32_t *p2 = realloc(path, cap * sizeof *path), *q2;
                if (p2) path = p2;
                q2 = realloc(pos, cap * sizeof *pos);
                if (q2) pos = q2;
                if (!p2 || !q2) {
                    free(path), free(pos);
                    return -1;
                }
            }
            pos[len] = next + 1;
            path[len++] = n;
            if (visit(v, path, len, arg)) { /* skip its children */
                len--;
                next = pos[len];
            } else {
                next = v->first[n];
            }
        } else {
            if (len == 0) break;
            len--;
            next = pos[len];
        }
    }
    free(path), free(pos);
    return 0;
}

typedef struct TextArg {
    FILE *out;
    uint64_t min; /* subtree calls needed to be listed */
    size_t lines, omitted;
} TextArg;

static int visit_text(const View *v, const uint32_t *path, size_t depth, void *arg) {
    TextArg *ta = arg;
    uint32_t n = path[depth - 1];
    if (v->sub[n] < ta->min || ta->lines >= TEXT_LINES) {
        ta->omitted++;
        return 1;
    }
    ta->lines++;
    fprintf(ta->out, "%12llu %12llu  %*s%s\n", (unsigned long long)prof_est(v->ct->nodes[n].calls, v->o),
            (unsigned long long)prof_est(v->sub[n], v->o), (int)(2 * (depth - 1)), "", v->name[n]);
    return 0;
}

/* A pattern as reported: its children by name. */
typedef struct PatRow {
    uint64_t count;
    const char *fn;
    const char **kids; /* points into a shared array */
    uint32_t n;
} PatRow;

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int patrow_cmp(const void *pa, const void *pb) {
    const PatRow *x = pa, *y = pb;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    int c = strcmp(x->fn, y->fn);
    if (c) return c;
    for (uint32_t i = 0; i < x->n && i < y->n; i++)
        if ((c = strcmp(x->kids[i], y->kids[i])) != 0) return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* The patterns sorted for reporting; *[names] owns the child names. */
static PatRow *pattern_rows(const CallTree *ct, const ProfReportOpts *o, const char ***names) {
    PatRow *rows = malloc((ct->npats + 1) * sizeof *rows);
    const char **nm = malloc((ct->pool_len + 1) * sizeof *nm);
    if (rows == NULL || nm == NULL) {
        free(rows), free(nm);
        return NULL;
    }
    for (size_t p = 0; p < ct->npats; p++) {
        const Pattern *pt = &ct->pats[p];
        for (uint32_t k = 0; k < pt->nkids; k++) nm[pt->off + k] = fn_name(ct->pool[pt->off + k], o);
        qsort(nm + pt->off, pt->nkids, sizeof *nm, name_cmp);
        rows[p] = (PatRow){pt->count, fn_name(pt->fid, o), nm + pt->off, pt->nkids};
    }
    qsort(rows, ct->npats, sizeof *rows, patrow_cmp);
    *names = nm;
    return rows;
}

static void report_text(const CallTree *ct, const View *v, const uint32_t *ord, const PatRow *pr,
                        FILE *out, const ProfReportOpts *o) {
    fprintf(out, "calltree: %llu calls in %zu contexts, %u thread%s\n", (unsigned long long)prof_est(ct->total, o),
            ct->nnodes - ct->th.n, ct->th.n, ct->th.n == 1 ? "" : "s");
    prof_text_notes(out, o);
    fprintf(out, "%12s %12s  %s\n", "calls", "subtree", "context (children by calls in their subtree)");
    TextArg ta = {out, (ct->total * TEXT_MIN_PERMILLE + 999) / 1000, 0, 0};
    for (uint32_t i = 0; i < ct->th.n; i++) {
        const Thread *t = &ct->threads[ord[i]];
        if (v->sub[t->root] < ta.min || v->sub[t->root] == 0 || ta.lines >= TEXT_LINES) {
            ta.omitted += v->first[t->root + 1] - v->first[t->root];
            continue;
        }
        if (ct->th.n > 1) fprintf(out, "thread %llu:\n", (unsigned long long)t->id);
        walk(v, t->root, visit_text, &ta);
    }
    if (ta.omitted)
        fprintf(out, "  (%zu smaller subtrees not shown: under %d.%d%% of the calls, or past %d lines)\n",
                ta.omitted, TEXT_MIN_PERMILLE / 10, TEXT_MIN_PERMILLE % 10, TEXT_LINES);
    double inv = ct->invocations ? (double)ct->invocations : 1.0;
    fprintf(out, "\ndepth-two subtree patterns: %zu distinct in %llu invocations "
                 "(a function and the set of functions it called)\n",
            ct->npats, (unsigned long long)prof_est(ct->invocations, o));
    fprintf(out, "%12s  %7s  %s\n", "invocations", "percent", "pattern");
    for (size_t p = 0; p < ct->npats && p < TEXT_PATTERNS; p++) {
        fprintf(out, "%12llu  %6.2f%%  %s -> {", (unsigned long long)prof_est(pr[p].count, o),
                100.0 * (double)pr[p].count / inv, pr[p].fn);
        for (uint32_t k = 0; k < pr[p].n; k++) fprintf(out, "%s%s", k ? ", " : "", pr[p].kids[k]);
        fputs("}\n", out);
    }
    if (ct->npats > TEXT_PATTERNS) {
        uint64_t rest = 0;
        for (size_t p = TEXT_PATTERNS; p < ct->npats; p++) rest += pr[p].count;
        fprintf(out, "%12llu  %6.2f%%  (%zu more patterns)\n", (unsigned long long)prof_est(rest, o),
                100.0 * (double)rest / inv, ct->npats - TEXT_PATTERNS);
    }
}

typedef struct JsonArg {
    FILE *out;
    uint32_t *id; /* per node: its id in the document (walk order) */
    uint32_t next;
} JsonArg;

static int visit_json(const View *v, const uint32_t *path, size_t depth, void *arg) {
    JsonArg *ja = arg;
    uint32_t n = path[depth - 1];
    uint32_t parent = v->ct->nodes[n].parent;
    ja->id[n] = ja->next++;
    fprintf(ja->out, ",\n{\"id\":%u,\"parent\":%u,\"function\":", ja->id[n], ja->id[parent]);
    prof_json_str(ja->out, v->name[n]);
    fprintf(ja->out, ",\"calls\":%llu}", (unsigned long long)v->ct->nodes[n].calls);
    return 0;
}

/* {..., "total_calls": N, "threads": [{"thread": id, "nodes": [{"id", "parent",
 * "function", "calls"}, ...]}], "patterns": {"distinct": P, "invocations": I, "list":
 * [{"function", "children": [names], "count"}]}}. Nodes are a flat list in depth-first
 * order (a nested tree would be as deep as the recursion, which JSON readers limit); the
 * first is the thread's root ("[root]", parent null); a "[C]" node's calls count the times
 * a gap was entered; the patterns' children are sorted by name. */
static int report_json(const CallTree *ct, const View *v, const uint32_t *ord, const PatRow *pr,
                       FILE *out, const ProfReportOpts *o) {
    JsonArg ja = {out, malloc((ct->nnodes + 1) * sizeof(uint32_t)), 0};
    if (ja.id == NULL) return -1;
    prof_json_begin(out, "calltree", o);
    fprintf(out, ",\"total_calls\":%llu,\"threads\":[", (unsigned long long)ct->total);
    int rc = 0;
    for (uint32_t i = 0; i < ct->th.n; i++) {
        const Thread *t = &ct->threads[ord[i]];
        ja.next = 0;
        ja.id[t->root] = ja.next++;
        fprintf(out, "%s\n{\"thread\":%llu,\"nodes\":[\n{\"id\":0,\"parent\":null,\"function\":\"[root]\",\"calls\":0}",
                i ? "," : "", (unsigned long long)t->id);
        if (walk(v, t->root, visit_json, &ja) != 0) rc = -1;
        fputs("]}", out);
    }
    fprintf(out, "],\n\"patterns\":{\"distinct\":%zu,\"invocations\":%llu,\"list\":[", ct->npats,
            (unsigned long long)ct->invocations);
    for (size_t p = 0; p < ct->npats; p++) {
        fputs(p ? ",\n{\"function\":" : "\n{\"function\":", out);
        prof_json_str(out, pr[p].fn);
        fputs(",\"children\":[", out);
        for (uint32_t k = 0; k < pr[p].n; k++) {
            if (k) putc(',', out);
            prof_json_str(out, pr[p].kids[k]);
        }
        fprintf(out, "],\"count\":%llu}", (unsigned long long)pr[p].count);
    }
    fputs("]}}\n", out);
    free(ja.id);
    return rc;
}

typedef struct FoldArg {
    FILE *out;
    const char *prefix; /* "thread N" frame when there are several threads, else NULL */
} FoldArg;

/* One line per context with calls: "a;b;c <calls>" (a "[C]" node adds no line of its
 * own: its weight is in the Lua calls below it). */
static int visit_folded(const View *v, const uint32_t *path, size_t depth, void *arg) {
    FoldArg *fa = arg;
    uint32_t n = path[depth - 1];
    const Node *nd = &v->ct->nodes[n];
    if (nd->fid == PROF_FID_C || nd->calls == 0) return 0;
    if (fa->prefix) {
        prof_folded_frame(fa->out, fa->prefix);
        putc(';', fa->out);
    }
    for (size_t i = 0; i < depth; i++) {
        if (i) putc(';', fa->out);
        prof_folded_frame(fa->out, v->name[path[i]]);
    }
    fprintf(fa->out, " %llu\n", (unsigned long long)prof_est(nd->calls, v->o));
    return 0;
}

static int report_folded(const CallTree *ct, const View *v, const uint32_t *ord, FILE *out) {
    int rc = 0;
    for (uint32_t i = 0; i < ct->th.n; i++) {
        const Thread *t = &ct->threads[ord[i]];
        char prefix[40];
        snprintf(prefix, sizeof prefix, "thread %llu", (unsigned long long)t->id);
        FoldArg fa = {out, ct->th.n > 1 ? prefix : NULL};
        if (walk(v, t->root, visit_folded, &fa) != 0) rc = -1;
    }
    return rc;
}

typedef struct PprofArg {
    ProfPprof *b;
    uint32_t type;
    uint64_t thread;
    uint64_t *loc;   /* per node: its location id, 0 until first needed */
    uint64_t *stack; /* the path's locations, innermost first */
    size_t cap;
} PprofArg;

/* One sample per context with calls, as visit_folded writes a line ("[C]" nodes are frames
 * of the stacks below them, not samples). */
static int visit_pprof(const View *v, const uint32_t *path, size_t depth, void *arg) {
    PprofArg *pa = arg;
    uint32_t n = path[depth - 1];
    const Node *nd = &v->ct->nodes[n];
    if (pa->loc[n] == 0) pa->loc[n] = prof_pprof_frame(pa->b, v->name[n], 0);
    if (nd->fid == PROF_FID_C || nd->calls == 0) return 0;
    if (depth > pa->cap) prof_grow((void **)&pa->stack, &pa->cap, depth, sizeof *pa->stack, WHO);
    for (size_t i = 0; i < depth; i++) pa->stack[i] = pa->loc[path[depth - 1 - i]];
    prof_pprof_sample(pa->b, pa->stack, depth, pa->type, prof_est(nd->calls, v->o), pa->thread);
    return 0;
}

static int add_pprof(ProfPprof *b, void *st, const ProfReportOpts *o) {
    CallTree *ct = st;
    View v;
    if (view_make(&v, ct, o) != 0) return -1;
    uint32_t *ord = thread_order(ct);
    PprofArg pa = {b, prof_pprof_type(b, "calls", "count"), 0, calloc(ct->nnodes + 1, sizeof(uint64_t)), NULL, 0};
    int rc = ord == NULL || pa.loc == NULL ? -1 : 0;
    for (uint32_t i = 0; rc == 0 && i < ct->th.n; i++) {
        pa.thread = ct->threads[ord[i]].id;
        rc = walk(&v, ct->threads[ord[i]].root, visit_pprof, &pa);
    }
    free(pa.loc);
    free(pa.stack);
    free(ord);
    view_free(&v);
    return rc;
}

static int ct_report(void *st, FILE *out, const ProfReportOpts *o) {
    CallTree *ct = st;
    if (o->format == PROF_PPROF) {
        flush(ct);
        return prof_pprof_report(out, o, add_pprof, ct);
    }
    if (o->format != PROF_TEXT && o->format != PROF_JSON && o->format != PROF_FOLDED) return -2;
    flush(ct);
    View v;
    if (view_make(&v, ct, o) != 0) return -1;
    uint32_t *ord = thread_order(ct);
    const char **names = NULL;
    PatRow *pr = o->format == PROF_FOLDED ? NULL : pattern_rows(ct, o, &names);
    int rc = 0;
    if (ord == NULL || (o->format != PROF_FOLDED && pr == NULL)) rc = -1;
    else if (o->format == PROF_TEXT) report_text(ct, &v, ord, pr, out, o);
    else if (o->format == PROF_JSON) rc = report_json(ct, &v, ord, pr, out, o);
    else rc = report_folded(ct, &v, ord, out);
    free(pr);
    free(names);
    free(ord);
    view_free(&v);
    return rc || ferror(out) ? -1 : 0;
}

static void ct_close(void *st) {
    CallTree *ct = st;
    if (ct == NULL) return;
    for (uint32_t i = 0; i < ct->th.n; i++) {
        free(ct->threads[i].stack);
        free(ct->threads[i].kids);
    }
    free(ct->threads);
    prof_map_free(&ct->th.ids);
    free(ct->nodes);
    prof_map_free(&ct->children);
    free(ct->pats);
    prof_map_free(&ct->pat_map);
    free(ct->pool);
    free(ct);
}

const ProfAnalysis prof_calltree = {"calltree", PROF_NEED_CALL, ct_open, ct_consume, ct_merge, ct_report, ct_close, NULL};
