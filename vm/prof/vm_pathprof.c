/* vm_pathprof.c: Ball-Larus path profiling, VM side (vm_pathprof.h): per function, the
 * control-flow graph of its bytecode, the path numbering, the interpreter's actions, the
 * decoder for reports, and the oracle.
 *
 * Graph. Leaders: instruction 0, every jump target, and the instruction after every
 * instruction that branches or leaves (a test's JMP, JMP, FORPREP, FORLOOP, TFORPREP,
 * TFORLOOP, RETURN, RETURN0, RETURN1, TAILCALL). A block runs from a leader to the next.
 * The block's terminator (its last instruction) gives its successors, fall-through first:
 *   test + JMP (the interpreter fuses them): not taken -> the instruction after the JMP,
 *       taken -> the JMP's target. Both outcomes are seen by the interpreter, at the test.
 *   a test whose JMP is itself a leader (a jump elsewhere lands on it; the compiler never
 *       does this, a bytecode file may): not taken -> after the JMP, taken -> the JMP's
 *       block, whose own edge the interpreter applies in the same step (composed action).
 *   JMP, TFORPREP: the target.                FORPREP: the body, or past the loop.
 *   FORLOOP, TFORLOOP: past the loop, or back to the body.
 *   RETURN*, TAILCALL: EXIT.
 *   anything else (the next instruction is a leader): that one; the interpreter does not see
 *       this edge, so it must keep increment 0 (it is the block's only edge) and never be
 *       cut. The bytecode has no skip instructions besides the tests (no LFALSESKIP: a
 *       boolean result is LOADFALSE / JMP / LOADTRUE), and EXTRAARG (after SETLIST) is never
 *       a leader.
 * Only blocks reachable from the entry are numbered (the compiler leaves dead code, e.g.
 * the RETURN after a TAILCALL).
 *
 * Back edges. An edge is a back edge when it goes to a block at or before its source in
 * code order. Removing them leaves a DAG for every graph, reducible or not (goto can make
 * irreducible loops), and in structured code they are exactly the loops' back edges. The
 * classic transformation replaces a back edge u -> v with u -> EXIT plus ENTRY -> v (one
 * ENTRY -> v per distinct v): at run time it emits r + Val(u -> EXIT) and restarts r at
 * Val(ENTRY -> v).
 *
 * Numbering (Ball-Larus): blocks in reverse code order (a topological order of the DAG),
 * NumPaths(EXIT) = 1, NumPaths(u) = the sum over u's edges, each edge's Val the sum of
 * NumPaths of the edges before it. Edges are ordered fall-through first, so the fall-
 * through edge has increment 0; ENTRY's real edge to block 0 comes first (r = 0 at entry),
 * then the ENTRY -> v edges in code order.
 *
 * Fallback: more paths than fit 32 bits. EV_PATH carries 32 bits of path number. When
 * NumPaths(ENTRY) > limit (0xffffffff, or -Xpathprof.limit), the function is numbered
 * again with extra cut points: in reverse code order, a block whose NumPaths would exceed
 * a bound T has its forward edges cut, biggest successor first, until it does not; T starts
 * at the limit and is halved until NumPaths(ENTRY) fits (few cuts where few are needed; it
 * fits at the latest when T <= limit / (2 * (reachable blocks + 1)), below). A cut edge u -> w is treated exactly like a back edge (u ->
 * EXIT, ENTRY -> w): the path ends there and a new one starts at w. Only edges the
 * interpreter sees (from a branching instruction) are cut; a block with only an unseen
 * fall-through edge has the NumPaths of its successor, which is at most T by induction, and
 * one with seen edges ends at most 2T (at most two edges, plus 1 for a composed test), so
 * NumPaths(ENTRY) <= (blocks + 1) * 2T, which is <= limit for T <= limit / (2 * (blocks +
 * 1)). Paths are then shorter (they stop at cut
 * edges: PROF_PATH_END_CUT / PROF_PATH_START_LOOP in the decoded form) but every number is
 * exact. Should the bound still fail (it cannot; kept as a guard), the function is not
 * path-profiled at all (VM_PATH_OFF) rather than given wrong numbers.
 *
 * Functions whose id does not fit EV_PATH's 24-bit field (more than 16M functions) are not
 * path-profiled either. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev_api.h"
#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_state.h"

/* Edge kinds. */
enum { PE_FWD, PE_BACK, PE_CUT, PE_EXIT };

/* Block terminators (see the top comment). */
enum { T_FALL, T_EXIT, T_PAIR, T_TESTX, T_JMP, T_TWO };

typedef struct PEdge {
    int32_t to;       /* block, or -1 for EXIT */
    uint8_t kind;     /* PE_* */
    uint8_t cuttable; /* seen by the interpreter, forward */
    uint32_t val;
} PEdge;

typedef struct PBlock {
    int32_t start, last; /* first and last pc */
    uint8_t term;        /* T_* */
    uint8_t nedge;       /* 1 or 2 (after merging two outcomes with the same target) */
    uint8_t reach;
    int8_t outedge[2];   /* outcome (0: fall / not taken, 1: jump / taken) -> edge, -1: none */
    int32_t slotpc;      /* instruction whose action words hold this block's outcomes */
    PEdge e[2];
    uint64_t np;         /* NumPaths from this block to EXIT */
    int32_t entry;       /* index of ENTRY -> this block among the dummy entry edges, or -1 */
} PBlock;

typedef struct PEntry {
    int32_t to;
    uint32_t val;
} PEntry;

struct VmPathFunc {
    uintptr_t bias;      /* first member (vm_pathprof_func_bias); VM_PATH_OFF: not profiled */
    uint64_t *act;       /* 2 words per instruction, 16-byte aligned */
    uint32_t fid;
    int32_t ncode, nblocks;
    int32_t *blockof;    /* pc -> block */
    uint8_t *leader;     /* pc -> 1 if a block starts there (oracle) */
    int32_t *lines;      /* pc -> source line (a copy: the Proto may be collected) */
    PBlock *b;
    PEntry *entry;       /* ENTRY's edges: [0] the real one to block 0, then the dummies */
    int32_t nentry;
    uint64_t numpaths;   /* NumPaths(ENTRY) */
    bool cut;            /* the fallback was used */
};

VmPathFunc **vm_pathprof_pages[VM_PATH_MAXID >> VM_PATH_PAGE_BITS];
#if TANDEM_PATH_ORACLE
bool vm_pathprof_oracle = false;
#endif

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t path_limit = 0xffffffffu;
#if TANDEM_PATH_ORACLE
static char *oracle_file; /* -Xpathprof.oracle; malloc'd */
#endif
/* A function that cannot be profiled: one shared record. */
static VmPathFunc off_func = {.bias = VM_PATH_OFF};

static _Noreturn void oom(void) {
    fprintf(stderr, "tandem: path profiler: out of memory\n");
    abort();
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (p == NULL) oom();
    return p;
}

static bool is_test(unsigned op) {
    return (op >= OP_EQ && op <= OP_GEI) || op == OP_TEST || op == OP_TESTSET;
}

static bool is_exit(unsigned op) {
    return op == OP_RETURN || op == OP_RETURN0 || op == OP_RETURN1 || op == OP_TAILCALL;
}

/* Jump target of the instruction at [pc] (JMP, FORPREP, FORLOOP, TFORPREP, TFORLOOP). */
static int64_t jtarget(const Instr *code, int pc) { return (int64_t)pc + 1 + vm_sbx(code[pc]); }

/* Adds the edge for outcome [o] of block [u] to the instruction at [tpc]; merges it with an
 * existing edge to the same block. */
static void add_edge(VmPathFunc *f, int u, int o, int64_t tpc, bool seen) {
    PBlock *b = &f->b[u];
    int32_t to = f->blockof[tpc];
    for (int j = 0; j < b->nedge; j++)
        if (b->e[j].to == to && b->e[j].kind != PE_EXIT) {
            if (!seen) b->e[j].cuttable = 0;
            if (o >= 0) b->outedge[o] = (int8_t)j;
            return;
        }
    PEdge *e = &b->e[b->nedge];
    e->to = to;
    e->kind = tpc <= b->last ? PE_BACK : PE_FWD;
    e->cuttable = seen && e->kind == PE_FWD;
    if (o >= 0) b->outedge[o] = (int8_t)b->nedge;
    b->nedge++;
}

/* The graph of [p]; false if the code does not have the shape the interpreter relies on
 * (out-of-range jumps, a test without its JMP: only unverified bytecode). */
static bool build_graph(VmPathFunc *f, const Proto *p) {
    int n = p->ncode;
    const Instr *code = p->code;
    if (n <= 0) return false;
    f->leader = xcalloc((size_t)n + 1, 1);
    f->leader[0] = 1;
    for (int pc = 0; pc < n; pc++) {
        unsigned op = vm_op(code[pc]);
        if (is_test(op)) {
            if (pc + 2 >= n || vm_op(code[pc + 1]) != OP_JMP) return false;
            f->leader[pc + 2] = 1;
        } else if (op == OP_JMP || op == OP_FORPREP || op == OP_FORLOOP || op == OP_TFORPREP ||
                   op == OP_TFORLOOP) {
            int64_t t = jtarget(code, pc);
            if (t < 0 || t >= n || pc + 1 > n) return false;
            f->leader[t] = 1;
            f->leader[pc + 1] = 1;
        } else if (is_exit(op)) {
            f->leader[pc + 1] = 1;
        }
    }
    /* Falling off the end would be a verifier error; the last instruction must end. */
    unsigned lastop = vm_op(code[n - 1]);
    if (!is_exit(lastop) && lastop != OP_JMP && lastop != OP_TFORPREP) return false;

    int nb = 0;
    for (int pc = 0; pc < n; pc++) nb += f->leader[pc];
    f->nblocks = nb;
    f->b = xcalloc((size_t)nb, sizeof *f->b);
    f->blockof = xcalloc((size_t)n, sizeof *f->blockof);
    for (int pc = 0, bi = -1; pc < n; pc++) {
        if (f->leader[pc]) {
            bi++;
            f->b[bi].start = pc;
        }
        f->blockof[pc] = bi;
        f->b[bi].last = pc;
    }
    for (int u = 0; u < nb; u++) {
        PBlock *b = &f->b[u];
        int last = b->last;
        unsigned op = vm_op(code[last]);
        b->outedge[0] = b->outedge[1] = -1;
        b->entry = -1;
        b->slotpc = last;
        if (is_exit(op)) {
            b->term = T_EXIT;
            b->e[0] = (PEdge){-1, PE_EXIT, 0, 0};
            b->nedge = 1;
        } else if (op == OP_JMP && last > b->start && is_test(vm_op(code[last - 1]))) {
            b->term = T_PAIR; /* the test and its JMP, fused */
            b->slotpc = last - 1;
            add_edge(f, u, 0, last + 1, true);
            add_edge(f, u, 1, jtarget(code, last), true);
        } else if (is_test(op)) {
            b->term = T_TESTX; /* the JMP after it is a block of its own */
            add_edge(f, u, 0, last + 2, true);
            add_edge(f, u, 1, last + 1, false); /* composed with the JMP's: never cut */
        } else if (op == OP_JMP || op == OP_TFORPREP) {
            b->term = T_JMP;
            add_edge(f, u, 1, jtarget(code, last), true);
        } else if (op == OP_FORPREP || op == OP_FORLOOP || op == OP_TFORLOOP) {
            b->term = T_TWO;
            add_edge(f, u, 0, last + 1, true);
            add_edge(f, u, 1, jtarget(code, last), true);
        } else {
            b->term = T_FALL;
            if (last + 1 >= n) return false;
            add_edge(f, u, -1, last + 1, false);
        }
    }
    /* Reachability from the entry, over every edge. */
    int32_t *stack = xcalloc((size_t)nb, sizeof *stack);
    int sp = 0;
    f->b[0].reach = 1;
    stack[sp++] = 0;
    while (sp > 0) {
        PBlock *b = &f->b[stack[--sp]];
        for (int j = 0; j < b->nedge; j++) {
            int32_t w = b->e[j].to;
            if (w >= 0 && !f->b[w].reach) {
                f->b[w].reach = 1;
                stack[sp++] = w;
            }
        }
    }
    free(stack);
    return true;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static uint64_t contrib(const VmPathFunc *f, const PEdge *e) {
    return e->kind == PE_FWD ? f->b[e->to].np : 1;
}

/* Numbers the DAG; [T] > 0: cut forward edges so that no block exceeds T paths. Returns
 * NumPaths(ENTRY) (saturated). Sets every edge's Val and the entry edges. */
static uint64_t number(VmPathFunc *f, uint64_t T) {
    int nb = f->nblocks;
    for (int u = nb - 1; u >= 0; u--) {
        PBlock *b = &f->b[u];
        b->entry = -1;
        if (!b->reach) continue;
        for (int j = 0; j < b->nedge; j++)
            if (b->e[j].kind == PE_CUT) b->e[j].kind = PE_FWD;
        uint64_t sum = 0;
        for (int j = 0; j < b->nedge; j++) sum = sat_add(sum, contrib(f, &b->e[j]));
        while (T > 0 && sum > T) {
            int best = -1;
            for (int j = 0; j < b->nedge; j++)
                if (b->e[j].kind == PE_FWD && b->e[j].cuttable && f->b[b->e[j].to].np > 1 &&
                    (best < 0 || f->b[b->e[j].to].np > f->b[b->e[best].to].np))
                    best = j;
            if (best < 0) break;
            b->e[best].kind = PE_CUT;
            sum = 0;
            for (int j = 0; j < b->nedge; j++) sum = sat_add(sum, contrib(f, &b->e[j]));
        }
        uint64_t v = 0;
        for (int j = 0; j < b->nedge; j++) {
            b->e[j].val = (uint32_t)v; /* only kept when the total fits */
            v = sat_add(v, contrib(f, &b->e[j]));
        }
        b->np = sum;
    }
    /* ENTRY: the real edge to block 0, then one dummy edge per back/cut target. */
    for (int u = 0; u < nb; u++) {
        PBlock *b = &f->b[u];
        if (!b->reach) continue;
        for (int j = 0; j < b->nedge; j++)
            if (b->e[j].kind == PE_BACK || b->e[j].kind == PE_CUT) f->b[b->e[j].to].entry = 0;
    }
    free(f->entry);
    f->entry = xcalloc((size_t)nb + 1, sizeof *f->entry);
    int ne = 0;
    uint64_t total = f->b[0].np;
    f->entry[ne++] = (PEntry){0, 0};
    for (int w = 0; w < nb; w++) {
        if (f->b[w].entry < 0) continue;
        f->b[w].entry = ne;
        f->entry[ne++] = (PEntry){w, (uint32_t)total};
        total = sat_add(total, f->b[w].np);
    }
    f->nentry = ne;
    return total;
}

static uint64_t make_act(uint32_t inc, uint32_t reset) { return (uint64_t)inc | ((uint64_t)reset << 32); }

/* The action of edge [e] of a block. */
static uint64_t edge_act(const VmPathFunc *f, const PEdge *e) {
    if (e->kind == PE_BACK || e->kind == PE_CUT)
        return make_act(e->val, f->entry[f->b[e->to].entry].val);
    return make_act(e->val, VM_PATH_NORESET);
}

static void fill_actions(VmPathFunc *f) {
    for (int pc = 0; pc < 2 * f->ncode; pc++) f->act[pc] = make_act(0, VM_PATH_NORESET);
    for (int pass = 0; pass < 2; pass++) /* composed tests after the JMP blocks they use */
        for (int u = 0; u < f->nblocks; u++) {
            PBlock *b = &f->b[u];
            if (!b->reach || b->term == T_FALL || b->term == T_EXIT) continue;
            if ((b->term == T_TESTX) != (pass == 1)) continue;
            for (int o = 0; o < 2; o++) {
                if (b->outedge[o] < 0) continue;
                const PEdge *e = &b->e[b->outedge[o]];
                uint64_t a = edge_act(f, e);
                if (b->term == T_TESTX && o == 1) {
                    /* taken: into the JMP's block, and along the JMP's edge at once */
                    uint64_t j = f->act[2 * (size_t)f->b[e->to].last + 1];
                    a = make_act(vm_pathact_inc(a) + vm_pathact_inc(j), vm_pathact_reset(j));
                }
                f->act[2 * (size_t)b->slotpc + (size_t)o] = a;
            }
        }
}

static VmPathFunc *build_func(const Proto *p, uint32_t fid) {
    if (fid == 0 || fid >= VM_PATH_MAXID) return &off_func;
    VmPathFunc *f = xcalloc(1, sizeof *f);
    f->fid = fid;
    f->ncode = p->ncode;
    f->bias = VM_PATH_OFF;
    f->lines = xcalloc((size_t)(p->ncode > 0 ? p->ncode : 1), sizeof *f->lines);
    if (p->lineinfo != NULL) memcpy(f->lines, p->lineinfo, (size_t)p->ncode * sizeof *f->lines);
    if (!build_graph(f, p)) return f; /* kept for the oracle's sake; numbers none */
    uint64_t total = number(f, 0);
    /* Too many paths: cut, with the per-block bound T halved until the total fits (at
     * T <= limit / (2 * (blocks + 1)) it must, see the top comment). */
    for (uint64_t T = path_limit; total > path_limit; T /= 2) {
        if (T < 2) return f; /* not profiled rather than wrong */
        f->cut = true;
        total = number(f, T);
    }
    f->numpaths = total;
    size_t size = 2 * sizeof(uint64_t) * (size_t)p->ncode;
    if (posix_memalign((void **)&f->act, 16, size) != 0) oom();
    if ((uintptr_t)f->act == 2 * (uintptr_t)p->code) {
        /* a bias of 0 would read as VM_PATH_OFF: take another block (while this one is
         * still held, so the address differs) */
        uint64_t *again;
        if (posix_memalign((void **)&again, 16, size) != 0) oom();
        free(f->act);
        f->act = again;
    }
    fill_actions(f);
    f->bias = (uintptr_t)f->act - 2 * (uintptr_t)p->code;
    return f;
}

static VmPathFunc *lookup(uint32_t fid) {
    if (fid >= VM_PATH_MAXID) return NULL;
    VmPathFunc **page = __atomic_load_n(&vm_pathprof_pages[fid >> VM_PATH_PAGE_BITS], __ATOMIC_ACQUIRE);
    if (page == NULL) return NULL;
    return __atomic_load_n(&page[fid & ((1u << VM_PATH_PAGE_BITS) - 1)], __ATOMIC_ACQUIRE);
}

uintptr_t vm_pathprof_build(const Proto *p, uint32_t fid) {
    if (fid == 0 || fid >= VM_PATH_MAXID) return VM_PATH_OFF;
    pthread_mutex_lock(&build_lock);
    VmPathFunc *f = lookup(fid); /* another thread may have built it meanwhile */
    if (f == NULL) {
        VmPathFunc **page = vm_pathprof_pages[fid >> VM_PATH_PAGE_BITS];
        if (page == NULL) {
            page = xcalloc((size_t)1 << VM_PATH_PAGE_BITS, sizeof *page);
            __atomic_store_n(&vm_pathprof_pages[fid >> VM_PATH_PAGE_BITS], page, __ATOMIC_RELEASE);
        }
        f = build_func(p, fid);
        __atomic_store_n(&page[fid & ((1u << VM_PATH_PAGE_BITS) - 1)], f, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&build_lock);
    return f->bias;
}

/* ======================================================================
 * Decoding
 * ====================================================================== */

int vm_pathprof_decode(uint32_t fid, uint32_t path, ProfPath *out, void *ctx) {
    (void)ctx;
    out->nblocks = out->nlines = 0;
    out->flags = 0;
    VmPathFunc *f = lookup(fid);
    if (f == NULL || f->bias == VM_PATH_OFF || path >= f->numpaths) return -1;
    /* ENTRY: the last edge whose Val is <= path (Vals increase along the list). */
    int ei = 0;
    while (ei + 1 < f->nentry && f->entry[ei + 1].val <= path) ei++;
    uint64_t r = path - f->entry[ei].val;
    if (ei > 0) out->flags |= PROF_PATH_START_LOOP;
    int32_t u = f->entry[ei].to;
    int32_t lastline = -1;
    for (int steps = 0; steps <= f->nblocks; steps++) {
        const PBlock *b = &f->b[u];
        if (out->nblocks < out->maxblocks) out->blocks[out->nblocks] = (uint32_t)u;
        out->nblocks++;
        for (int pc = b->start; pc <= b->last; pc++) {
            int32_t line = f->lines[pc];
            if (line == lastline) continue;
            lastline = line;
            if (out->nlines < out->maxlines) out->lines[out->nlines] = (uint32_t)(line > 0 ? line : 0);
            out->nlines++;
        }
        int j = 0;
        while (j + 1 < b->nedge && b->e[j + 1].val <= r) j++;
        r -= b->e[j].val;
        const PEdge *e = &b->e[j];
        if (e->kind == PE_FWD) {
            u = e->to;
            continue;
        }
        if (e->kind == PE_BACK) out->flags |= PROF_PATH_END_BACK;
        if (e->kind == PE_CUT) out->flags |= PROF_PATH_END_CUT;
        return r == 0 ? 0 : -1;
    }
    return -1; /* a cycle: cannot happen in a DAG */
}

#if TANDEM_PATH_ORACLE
/* ======================================================================
 * Oracle
 * ====================================================================== */

/* Per frame record: the blocks of the path under way. Keyed by the CallInfo, which keeps its
 * address for life and is reused by later frames (enter resets it). */
typedef struct OFrame {
    const struct CallInfo *ci;
    const VmPathFunc *f;
    uint32_t fid;
    int startloop;
    int32_t *seq;
    int n, cap;
} OFrame;

/* Counted paths: key text "fid start end b0,b1,..." -> count. */
typedef struct OCount {
    char *key;
    uint64_t count;
    struct OCount *next;
} OCount;

static struct {
    pthread_mutex_t lock;
    OFrame *frames; /* open addressing on ci */
    size_t fcap, fn;
    OCount **buckets;
    size_t bcap, bn;
} orc = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, NULL, 0, 0};

static size_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return (size_t)x;
}

static size_t hash_str(const char *s) {
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return (size_t)h;
}

static OFrame *oframe(const struct CallInfo *ci) {
    if (orc.fn * 2 >= orc.fcap) {
        size_t ncap = orc.fcap ? orc.fcap * 2 : 256;
        OFrame *nf = xcalloc(ncap, sizeof *nf);
        for (size_t i = 0; i < orc.fcap; i++) {
            if (orc.frames[i].ci == NULL) continue;
            size_t j = hash_ptr(orc.frames[i].ci) & (ncap - 1);
            while (nf[j].ci != NULL) j = (j + 1) & (ncap - 1);
            nf[j] = orc.frames[i];
        }
        free(orc.frames);
        orc.frames = nf;
        orc.fcap = ncap;
    }
    size_t j = hash_ptr(ci) & (orc.fcap - 1);
    while (orc.frames[j].ci != NULL && orc.frames[j].ci != ci) j = (j + 1) & (orc.fcap - 1);
    if (orc.frames[j].ci == NULL) {
        orc.frames[j].ci = ci;
        orc.fn++;
    }
    return &orc.frames[j];
}

static void ocount(const OFrame *fr, const char *end) {
    if (fr->f == NULL || fr->n == 0) return;
    size_t len = 64 + (size_t)fr->n * 12;
    char *key = xcalloc(len, 1);
    int k = snprintf(key, len, "%u %s %s ", fr->fid, fr->startloop ? "loop" : "entry", end);
    for (int i = 0; i < fr->n; i++) k += snprintf(key + k, len - (size_t)k, i ? ",%d" : "%d", fr->seq[i]);
    if (orc.bn * 2 >= orc.bcap) {
        size_t ncap = orc.bcap ? orc.bcap * 2 : 1024;
        OCount **nb = xcalloc(ncap, sizeof *nb);
        for (size_t i = 0; i < orc.bcap; i++)
            for (OCount *c = orc.buckets[i], *next; c; c = next) {
                next = c->next;
                size_t h = hash_str(c->key) & (ncap - 1);
                c->next = nb[h];
                nb[h] = c;
            }
        free(orc.buckets);
        orc.buckets = nb;
        orc.bcap = ncap;
    }
    size_t h = hash_str(key) & (orc.bcap - 1);
    for (OCount *c = orc.buckets[h]; c; c = c->next)
        if (strcmp(c->key, key) == 0) {
            c->count++;
            free(key);
            return;
        }
    OCount *c = xcalloc(1, sizeof *c);
    c->key = key;
    c->count = 1;
    c->next = orc.buckets[h];
    orc.buckets[h] = c;
    orc.bn++;
}

static void opush(OFrame *fr, int32_t blk) {
    if (fr->n == fr->cap) {
        fr->cap = fr->cap ? fr->cap * 2 : 16;
        fr->seq = realloc(fr->seq, (size_t)fr->cap * sizeof *fr->seq);
        if (fr->seq == NULL) oom();
    }
    fr->seq[fr->n++] = blk;
}

void vm_pathoracle_enter(const struct CallInfo *ci, const Proto *p) {
    VmPathFunc *f = lookup(p->id);
    pthread_mutex_lock(&orc.lock);
    OFrame *fr = oframe(ci);
    fr->f = f != NULL && f != &off_func && f->bias != VM_PATH_OFF ? f : NULL;
    fr->fid = p->id;
    fr->startloop = 0;
    fr->n = 0;
    pthread_mutex_unlock(&orc.lock);
}

void vm_pathoracle_at(const struct CallInfo *ci, const Proto *p, const Instr *ipc) {
    VmPathFunc *f = lookup(p->id);
    if (f == NULL || f->bias == VM_PATH_OFF) return;
    int32_t pc = (int32_t)(ipc - p->code);
    if (!f->leader[pc]) return;
    int32_t y = f->blockof[pc];
    pthread_mutex_lock(&orc.lock);
    OFrame *fr = oframe(ci);
    if (fr->f == f && fr->n > 0) {
        int32_t x = fr->seq[fr->n - 1];
        const char *end = NULL;
        if (y <= x) {
            end = "back";
        } else {
            const PBlock *b = &f->b[x];
            for (int j = 0; j < b->nedge; j++)
                if (b->e[j].to == y && b->e[j].kind == PE_CUT) end = "cut";
        }
        if (end != NULL) {
            ocount(fr, end);
            fr->n = 0;
            fr->startloop = 1;
        }
    }
    if (fr->f == f) opush(fr, y);
    pthread_mutex_unlock(&orc.lock);
}

void vm_pathoracle_exit(const struct CallInfo *ci) {
    pthread_mutex_lock(&orc.lock);
    OFrame *fr = oframe(ci);
    ocount(fr, "return");
    fr->n = 0;
    fr->f = NULL;
    pthread_mutex_unlock(&orc.lock);
}

static int key_cmp(const void *a, const void *b) {
    return strcmp((*(OCount *const *)a)->key, (*(OCount *const *)b)->key);
}
#endif /* TANDEM_PATH_ORACLE */

/* ======================================================================
 * Lifecycle
 * ====================================================================== */

void vm_pathprof_configure(const VmPathprofOptions *o) {
    path_limit = o->limit != 0 ? o->limit : 0xffffffffu;
#if TANDEM_PATH_ORACLE
    free(oracle_file);
    oracle_file = NULL;
    if (o->oracle_file != NULL) {
        oracle_file = strdup(o->oracle_file);
        if (oracle_file == NULL) oom();
    }
#endif
}

void vm_pathprof_start(unsigned needs) {
#if TANDEM_PATH_ORACLE
    vm_pathprof_oracle = oracle_file != NULL && (needs & PROF_NEED_PATH);
#else
    (void)needs;
#endif
}

int vm_pathprof_finish(void) {
#if !TANDEM_PATH_ORACLE
    return 0;
#else
    if (oracle_file == NULL) return 0;
    pthread_mutex_lock(&orc.lock);
    OCount **all = xcalloc(orc.bn, sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i < orc.bcap; i++)
        for (OCount *c = orc.buckets[i]; c; c = c->next) all[n++] = c;
    qsort(all, n, sizeof *all, key_cmp);
    int rc = 0;
    FILE *fp = fopen(oracle_file, "w");
    if (fp == NULL) {
        fprintf(stderr, "tandem: cannot write the path oracle '%s': %s\n", oracle_file, strerror(errno));
        rc = -1;
    } else {
        /* One line per path: count fid start end blocks */
        for (size_t i = 0; i < n; i++) fprintf(fp, "%llu %s\n", (unsigned long long)all[i]->count, all[i]->key);
        if (fclose(fp) != 0) rc = -1;
    }
    free(all);
    free(oracle_file);
    oracle_file = NULL;
    pthread_mutex_unlock(&orc.lock);
    return rc;
#endif
}

/* vm_pathprof.h: the register value a path starting at [pc] after a back (or cut) edge
 * begins with: Val(ENTRY -> the block at pc), the same for every back edge into that block. */
uint32_t vm_pathprof_restart(uint32_t fid, int pc) {
    if (fid >= VM_PATH_MAXID) return VM_PATH_NORESET;
    VmPathFunc **page = __atomic_load_n(&vm_pathprof_pages[fid >> VM_PATH_PAGE_BITS], __ATOMIC_ACQUIRE);
    if (page == NULL) return VM_PATH_NORESET;
    const VmPathFunc *f = __atomic_load_n(&page[fid & ((1u << VM_PATH_PAGE_BITS) - 1)], __ATOMIC_ACQUIRE);
    if (f == NULL || f->bias == VM_PATH_OFF || pc < 0 || pc >= f->ncode) return VM_PATH_NORESET;
    const PBlock *b = &f->b[f->blockof[pc]];
    if (b->start != pc || b->entry <= 0) return VM_PATH_NORESET; /* not a path start: entry 0 is the real edge */
    return f->entry[b->entry].val;
}
