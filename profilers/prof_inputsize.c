/* prof_inputsize.c: input-sensitive profiling (multithreaded-input-sensitive-profiling.txt,
 * sections 2-4): for every activation of every function, its cost and its input size, and
 * per function the points (input size -> activations, min / mean / max cost) with a fitted
 * cost model. Reports: text, json.
 *
 * Cost: the bytecode instructions run by the activation and its descendants, exactly: the
 * difference of the thread's instruction clock (EV_ICOUNT, ev_api.h) between the frame's
 * EV_CALL and its end. Instructions run while another thread of the stream is current are
 * charged to that thread (EV_ICOUNT precedes every EV_THREAD).
 *
 * A cell is what one heap-access event names (ev_api.h EV_LOAD/EV_STORE, vm_interp_body.h
 * MEMEV): a table's array slot or hash node, an upvalue; on the slow paths (absent keys,
 * metamethods, inserts that grow a table) the table itself, which stands for the whole
 * access; and, for external input, value k of one io read call from a stream (EV_INPUT: the
 * FILE's address + k, vm_lib_io.c); the slots library code reads for the program as it
 * iterates (next, pairs' inline loop, ipairs) and the bytes string.byte returns, at their
 * addresses in the string (PROF_NEED_LIBMEM). Locals live in registers and are not cells; the
 * bytes other string functions read (sub, find, patterns) are not counted. A cell's identity
 * is its address, so a table slot that moves (the table grows) is a new cell, and the address
 * of a collected object reused by a new one is the old cell.
 *
 * Input size, per activation r of thread t (the paper's definitions 1-3):
 *   RMS   the cells r and its descendants read before writing them themselves;
 *   TRMS  RMS plus the induced first accesses: reads of cells written, since r (with its
 *         descendants) last touched them, by another thread (thread-induced)
 *         or by the io library (external input: EV_INPUT is a write by "the kernel" followed
 *         by the caller's read).
 * Both by the read/write timestamping algorithm of the paper's figure 11 (and figure 12 for
 * the kernel): a counter [count] advanced at every call and thread switch; per thread a
 * shadow memory tst[cell] (the thread's latest access) and a shadow stack whose entries
 * hold partial sizes (invariant (2): the size of the i-th pending activation is the sum of
 * the partials from i to the top); wts[cell] (the latest write by anyone). RMS is the same
 * algorithm without the wts test, on the same tst.
 *
 * Threads and order. The algorithm needs one order over all the accesses it compares. A
 * state consumes one stream, in the stream's order: a native thread, or a carrier with the
 * green threads it runs (EV_THREAD switches). Across streams the order comes from EV_SYNC
 * numbers (the world, below): counter, wts and every thread's shadow stack and stamps are
 * shared by the run's states, by thread id, so a green thread that moves to another carrier
 * keeps its frames (the carrier's EV_FRAME replay of frames already known is ignored; a frame
 * that began unseen is kept for the stack's shape but never reported).
 *
 * Shadow memory: one shadow of cells for the run (CellE: wts and the tst of the cell's last
 * accessor, 24 bytes; the aligned cells in pages that mirror the address space, the others
 * in a hashed table: "Cells" below), and per thread a table (16-byte entries) of its stamps
 * of the cells another thread took over since. The report says the total and the bytes per
 * cell. A thread's stack and stamps are freed when it ends (EV_THREAD_END); the cells when
 * the run's last state closes.
 *
 * Hot path: one look at the page cache and one entry per access (two probes more when the
 * cell's last accessor was another thread); a binary search of the shadow stack on a first
 * access to a cell some pending ancestor touched; no allocation except when a page is new or
 * a table grows. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "prof_api.h"
#include "prof_out.h"
#include "ev_api.h"

#define WHO "inputsize"
#define ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define SIZE_CAP UINT64_C(0xffffffff) /* sizes are kept in 32 bits of a point's key */
#define REPORT_TOP 40                 /* functions listed in the text report */
#define MIN_SIZES 3                   /* distinct sizes a fit needs */
#define WTS_KERNEL UINT64_C(1)        /* wts's low bit: the latest write was the kernel's */

/* ====================================================================== */
/* Shadow memory: cell address -> 64-bit stamp                             */
/* ====================================================================== */

/* Key 0 marks a free entry (no cell is at address 0). Never shrinks; freed with the state. */
typedef struct ShadowEntry {
    uint64_t cell, stamp;
} ShadowEntry;

typedef struct Shadow {
    ShadowEntry *e; /* owned; NULL until the first cell */
    size_t mask, n;
} Shadow;

static __attribute__((noinline)) void shadow_grow(Shadow *s) {
    size_t cap = s->e ? 2 * (s->mask + 1) : 1024;
    ShadowEntry *e = calloc(cap, sizeof *e);
    if (e == NULL) prof_oom(WHO);
    if (s->e != NULL) {
        for (size_t i = 0; i <= s->mask; i++) {
            if (s->e[i].cell == 0) continue;
            size_t j = (size_t)prof_hash64(s->e[i].cell) & (cap - 1);
            while (e[j].cell != 0) j = (j + 1) & (cap - 1);
            e[j] = s->e[i];
        }
        free(s->e);
    }
    s->e = e;
    s->mask = cap - 1;
}

/* The stamp of [cell], created at 0 if absent. */
static inline uint64_t *shadow_at(Shadow *s, uint64_t cell) {
    if (__builtin_expect(2 * (s->n + 1) > s->mask + 1 || s->e == NULL, 0)) shadow_grow(s);
    for (size_t i = (size_t)prof_hash64(cell) & s->mask;; i = (i + 1) & s->mask) {
        ShadowEntry *e = &s->e[i];
        if (e->cell == cell) return &e->stamp;
        if (e->cell == 0) {
            e->cell = cell;
            s->n++;
            return &e->stamp;
        }
    }
}

/* The stamp of [cell], 0 if absent. */
static inline uint64_t shadow_get(const Shadow *s, uint64_t cell) {
    if (s->e == NULL) return 0;
    for (size_t i = (size_t)prof_hash64(cell) & s->mask;; i = (i + 1) & s->mask) {
        const ShadowEntry *e = &s->e[i];
        if (e->cell == cell) return e->stamp;
        if (e->cell == 0) return 0;
    }
}

static size_t shadow_bytes(const Shadow *s) { return s->e ? (s->mask + 1) * sizeof(ShadowEntry) : 0; }

/* ====================================================================== */
/* Cells: the world's shadow of every cell anyone touched                  */
/* ====================================================================== */

/* wts, and the tst of the thread that touched the cell last (its owner), in one entry, so
 * that an access by the same thread as the last one (nearly all of them: one thread, or
 * threads working on their own data) finds both at one place. The other threads' stamps of
 * the cell live in their own Shadow (Thread.tst), written back there when another thread
 * takes the cell over (cell_take). Invariant: a thread's tst of cell c is its entry's tst
 * if it owns c, else its Shadow's stamp of c (0: never touched). An entry of zeros is a
 * cell nobody touched. */
typedef struct CellE {
    uint64_t wts;   /* latest write's [count] << 1 | WTS_KERNEL; 0: never written */
    uint64_t tst;   /* the owner's latest access */
    uint64_t owner; /* thread index + 1; 0: none yet */
} CellE;

/* Where the entries live. The analysis is bound by finding them (perf, 2026-11-26: a third
 * of the analyzer's time on the first probe of a hashed table, a cache miss nearly every
 * time, as neighbouring cells hashed far apart). Nearly every cell is 8-byte aligned (table
 * slots, hash nodes, upvalues, io's FILE address), so those live in pages: the entries of
 * the aligned cells of one 4 KB of address space, in address order, found through a small
 * direct-mapped cache of recent pages and, behind it, a directory of pages (a ProfMap on the
 * page number). An array's slots are then neighbours in the shadow as in the heap.
 * The other cells (the bytes of strings that string.byte returns, io values past the first
 * of a read) live in an open-addressing table of their own. Cost: 12 KB of entries per 4 KB
 * page touched (3x the touched heap; the hashed table took 64-128 bytes per cell). Never
 * shrinks; freed with the run's last state. */
#define PAGE_SHIFT 12
#define PAGE_CELLS (1u << (PAGE_SHIFT - 3))
#define PAGE_TLB 256u

typedef struct PageSlot {
    uint64_t pno; /* page number + 1; 0: a free slot */
    CellE *e;     /* its PAGE_CELLS entries (Cells.pages owns them) */
} PageSlot;

typedef struct OddCell {
    uint64_t cell; /* 0: a free entry (no cell is at address 0) */
    CellE v;
} OddCell;

typedef struct Cells {
    PageSlot tlb[PAGE_TLB]; /* recent pages by pno % PAGE_TLB */
    ProfMap dir;            /* page number + 1 -> index in pages */
    CellE **pages;          /* owned, each owned */
    size_t npages, pages_cap;
    OddCell *odd;           /* owned; NULL until the first unaligned cell */
    size_t omask, on;
    uint64_t n;             /* cells touched (an owner given) */
} Cells;

/* The page of [pno1] (page number + 1), made if absent, remembered in the cache. */
static __attribute__((noinline)) CellE *page_find(Cells *c, uint64_t pno1) {
    uint32_t i = prof_map_get(&c->dir, pno1);
    if (i == PROF_MAP_NONE) {
        prof_grow((void **)&c->pages, &c->pages_cap, c->npages + 1, sizeof *c->pages, WHO);
        CellE *e = calloc(PAGE_CELLS, sizeof *e);
        if (e == NULL) prof_oom(WHO);
        i = (uint32_t)c->npages++;
        c->pages[i] = e;
        prof_map_put(&c->dir, pno1, i, WHO);
    }
    c->tlb[pno1 % PAGE_TLB] = (PageSlot){pno1, c->pages[i]};
    return c->pages[i];
}

static __attribute__((noinline)) void odd_grow(Cells *c) {
    size_t cap = c->odd ? 2 * (c->omask + 1) : 256;
    OddCell *e = calloc(cap, sizeof *e);
    if (e == NULL) prof_oom(WHO);
    for (size_t i = 0; c->odd && i <= c->omask; i++) {
        if (c->odd[i].cell == 0) continue;
        size_t j = (size_t)prof_hash64(c->odd[i].cell) & (cap - 1);
        while (e[j].cell != 0) j = (j + 1) & (cap - 1);
        e[j] = c->odd[i];
    }
    free(c->odd);
    c->odd = e;
    c->omask = cap - 1;
}

static __attribute__((noinline)) CellE *odd_at(Cells *c, uint64_t cell) {
    if (c->odd == NULL || 2 * (c->on + 1) > c->omask + 1) odd_grow(c);
    for (size_t i = (size_t)prof_hash64(cell) & c->omask;; i = (i + 1) & c->omask) {
        OddCell *e = &c->odd[i];
        if (e->cell == cell) return &e->v;
        if (e->cell == 0) {
            e->cell = cell;
            c->on++;
            return &e->v;
        }
    }
}

/* The entry of [cell] (all zeros if nobody touched it). */
static inline CellE *cell_at(Cells *c, uint64_t cell) {
    if (__builtin_expect((cell & 7) != 0, 0)) return odd_at(c, cell);
    uint64_t pno1 = (cell >> PAGE_SHIFT) + 1;
    const PageSlot *t = &c->tlb[pno1 % PAGE_TLB];
    CellE *page = __builtin_expect(t->pno == pno1, 1) ? t->e : page_find(c, pno1);
    return &page[(cell >> 3) & (PAGE_CELLS - 1)];
}

static size_t cells_bytes(const Cells *c) {
    return c->npages * (PAGE_CELLS * sizeof(CellE) + sizeof(CellE *) + 2 * sizeof(uint64_t)) +
           (c->odd ? (c->omask + 1) * sizeof(OddCell) : 0);
}

static void cells_free(Cells *c) {
    for (size_t i = 0; i < c->npages; i++) free(c->pages[i]);
    free(c->pages);
    prof_map_free(&c->dir);
    free(c->odd);
    memset(c, 0, sizeof *c);
}

/* ====================================================================== */
/* State                                                                   */
/* ====================================================================== */

/* A pending activation. The partials may be negative (an ancestor's share of a cell a
 * descendant counted again, figure 11 line 8); the size of the top frame is its partial. */
typedef struct Frame {
    uint32_t fid, depth;
    uint64_t ts;        /* [count] at its call */
    uint64_t cost0;     /* the thread's clock at its call */
    int64_t trms, rms;  /* partial sizes */
    int64_t thr, ext;   /* induced first accesses: by another thread, by the kernel (these
                           are counted at the top only and summed into the parent at the end:
                           plain subtree sums) */
    int replayed;       /* EV_FRAME: started before this stream saw it: never reported */
} Frame;

typedef struct Thread {
    Frame *stack; /* owned */
    size_t len, cap;
    Shadow tst;   /* cell -> [count] of this thread's latest access, for the cells another
                     thread owns now (CellE) */
    uint64_t clock; /* instructions charged to this thread */
    int ended;      /* EV_THREAD_END: stack and tst freed; cells it owns keep no stamp for it */
} Thread;

/* One point: activations of [fid] whose size (TRMS or RMS: [kind]) was [size]. */
typedef struct Point {
    uint32_t fid, kind;
    uint64_t size, n, min, max;
    double sum; /* of costs; double: the mean is what is reported */
} Point;

enum { K_TRMS, K_RMS, K__COUNT };

typedef struct FnTotal {
    uint64_t calls, cost; /* reported activations and their cost */
    uint64_t trms, rms, thr, ext;
} FnTotal;

typedef struct InputSize {
    uint64_t last_icount;/* the stream's instruction count at the latest EV_ICOUNT */
    uint32_t cur;        /* the current thread (index in world.threads); PROF_MAP_NONE: none yet */
    Point *pts;          /* owned */
    size_t npts, pts_cap;
    ProfMap pt_index;    /* point key -> index in pts */
    FnTotal *fn;         /* owned; fn[fid] */
    size_t fn_cap;
    uint64_t loads, stores, inputs, unreported; /* events; activations not reported (replayed) */
    uint64_t ended;      /* threads whose shadow state was freed (EV_THREAD_END) */
    uint64_t cells, shadow_bytes; /* filled at report time: the world's cells and table bytes */
    uint64_t queue_bytes; /* at merge: the capacity the order queues reached (timing-dependent) */
    /* The order across streams (World): */
    uint64_t wait_seq;   /* 0: events are analysed as they come; else the EV_SYNC number at
                            the head of [q] that the world has not reached yet */
    uint64_t *q;         /* owned: events waiting for wait_seq, from q[qhead] to q[qlen] */
    size_t qhead, qlen, qcap;
    struct InputSize *prev, *next; /* the world's list of open states */
} InputSize;

/* The world: what all the states of a run share, under one lock. Every state is one
 * stream; the paper's algorithm needs one global counter and one wts over all the threads,
 * and the accesses of different streams in an order that respects the program's
 * synchronisation. EV_SYNC numbers give that order: a stream's events after an EV_SYNC
 * numbered k are analysed only after every EV_SYNC numbered below k (in any stream) and the
 * events before it in its stream. A state that meets an EV_SYNC whose number the world has
 * not reached keeps that event and all that follow in its queue until the world gets there
 * (drain), so no analyzer thread ever waits for another stream (one analyzer may serve
 * several streams). Segments that no synchronisation orders are analysed in whatever order
 * their chunks arrive: for a program without data races they touch no cell in common with a
 * conflicting access (the conflicting pairs are ordered by synchronisation), so the sizes
 * do not depend on that order. For a racy program a write and a read of one cell with no
 * synchronisation between them are ordered as the analysis happened to see them: a read may
 * or may not count as thread-induced input, and the profile may differ between runs.
 * The counter also advances whenever the analysis turns from one stream to another, so an
 * access of another thread always gets a time of its own (figure 11's switchThread).
 * Memory: the queue holds a stream's events while an earlier EV_SYNC of another stream is
 * still in that stream's ring (at most until the ring's chunk is handed over or its thread
 * ends). Lock: world.lock, taken once per consume call; states are opened and closed under it. */
static struct {
    pthread_mutex_t lock;
    uint64_t count;      /* the paper's global counter: calls, thread switches, syncs */
    uint64_t next;       /* the EV_SYNC number to analyse next (numbers start at 1) */
    Cells cells;         /* every cell: wts, and its last accessor's tst */
    const InputSize *last; /* the state analysed last */
    InputSize *states;   /* open states */
    /* Threads by language thread id (0: a native stream's thread before any EV_THREAD, the
     * main thread): their shadow stacks, tst and clocks follow them from stream to stream
     * (a green thread moving between carriers). Owned; freed with the last state. */
    ProfThreads th;
    Thread *threads;
    size_t threads_cap;
} world = {.lock = PTHREAD_MUTEX_INITIALIZER, .next = 1, .th = {{NULL, 0, 0}, PROF_MAP_NONE, 0}};

static void *is_open(void) {
    InputSize *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->cur = PROF_MAP_NONE;
    pthread_mutex_lock(&world.lock);
    s->next = world.states;
    if (s->next) s->next->prev = s;
    world.states = s;
    pthread_mutex_unlock(&world.lock);
    return s;
}

/* world.lock held (as everywhere the world's threads are touched). */
static __attribute__((noinline)) uint32_t thread_index(uint64_t id) {
    int added;
    uint32_t i = prof_threads_find(&world.th, id, &added, WHO);
    if (added) prof_grow((void **)&world.threads, &world.threads_cap, (size_t)i + 1, sizeof(Thread), WHO);
    return i;
}

/* The record may move when a thread is added (EV_THREAD): callers do not keep it across. */
static inline Thread *cur_thread(InputSize *s) {
    if (__builtin_expect(s->cur == PROF_MAP_NONE, 0)) s->cur = thread_index(0);
    return &world.threads[s->cur];
}

/* ====================================================================== */
/* Points                                                                  */
/* ====================================================================== */

static uint64_t point_key(uint32_t fid, uint32_t kind, uint64_t size) {
    return (uint64_t)fid << 33 | (uint64_t)kind << 32 | size;
}

static void add_point(InputSize *s, uint32_t fid, uint32_t kind, uint64_t size, uint64_t n, uint64_t min,
                      uint64_t max, double sum) {
    if (size > SIZE_CAP) size = SIZE_CAP;
    uint64_t key = point_key(fid, kind, size);
    uint32_t i = prof_map_get(&s->pt_index, key);
    if (i == PROF_MAP_NONE) {
        prof_grow((void **)&s->pts, &s->pts_cap, s->npts + 1, sizeof(Point), WHO);
        i = (uint32_t)s->npts++;
        s->pts[i] = (Point){fid, kind, size, 0, UINT64_MAX, 0, 0.0};
        prof_map_put(&s->pt_index, key, i, WHO);
    }
    Point *p = &s->pts[i];
    p->n += n;
    p->sum += sum;
    if (min < p->min) p->min = min;
    if (max > p->max) p->max = max;
}

static FnTotal *fn_total(InputSize *s, uint32_t fid) {
    if (fid >= s->fn_cap) prof_grow((void **)&s->fn, &s->fn_cap, (size_t)fid + 1, sizeof(FnTotal), WHO);
    return &s->fn[fid];
}

/* ====================================================================== */
/* The algorithm (figures 11 and 12)                                       */
/* ====================================================================== */

/* The top frame of [t] ends: its sizes are final (invariant (2) with nothing above it);
 * they join the parent's partials, which keeps (2) for the frames below. */
static void frame_end(InputSize *s, Thread *t) {
    Frame *f = &t->stack[--t->len];
    if (t->len > 0) {
        Frame *p = &t->stack[t->len - 1];
        p->trms += f->trms;
        p->rms += f->rms;
        p->thr += f->thr;
        p->ext += f->ext;
    }
    if (f->replayed) {
        s->unreported++;
        return;
    }
    uint64_t cost = t->clock - f->cost0;
    uint64_t trms = f->trms > 0 ? (uint64_t)f->trms : 0, rms = f->rms > 0 ? (uint64_t)f->rms : 0;
    add_point(s, f->fid, K_TRMS, trms, 1, cost, cost, (double)cost);
    add_point(s, f->fid, K_RMS, rms, 1, cost, cost, (double)cost);
    FnTotal *ft = fn_total(s, f->fid);
    ft->calls++;
    ft->cost += cost;
    ft->trms += trms;
    ft->rms += rms;
    ft->thr += (uint64_t)f->thr;
    ft->ext += (uint64_t)f->ext;
}

static __attribute__((noinline)) void push_slow(Thread *t) {
    prof_grow((void **)&t->stack, &t->cap, t->len + 1, sizeof(Frame), WHO);
}

/* EV_CALL (a call at depth d ends the frames at depth >= its cut) and EV_FRAME. */
static void on_call(InputSize *s, uint64_t ev, int replayed) {
    Thread *t = cur_thread(s);
    uint32_t cut = ev_call_cut(ev);
    if (replayed) { /* a moved green thread's open frame: known already unless it began unseen */
        for (size_t j = t->len; j-- > 0;)
            if (t->stack[j].depth == ev_call_depth(ev) && t->stack[j].fid == ev_call_fid(ev)) return;
    }
    while (t->len && t->stack[t->len - 1].depth >= cut) frame_end(s, t);
    if (t->len == t->cap) push_slow(t);
    world.count++;
    t->stack[t->len++] = (Frame){ev_call_fid(ev), ev_call_depth(ev), world.count, t->clock, 0, 0, 0, 0, replayed};
}

static void on_return(InputSize *s, uint32_t depth) {
    Thread *t = cur_thread(s);
    while (t->len && t->stack[t->len - 1].depth >= depth) frame_end(s, t);
}

/* The deepest pending frame of [t] that started at or before [ts] (figure 11, line 7): the
 * one whose subtree made the access at [ts], and so already counted the cell. Frames' ts
 * grow from the bottom up. -1 when the access came before every pending frame (then no
 * pending frame counted it). */
static inline long frame_at(const Thread *t, uint64_t ts) {
    long lo = 0, hi = (long)t->len - 1, best = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (t->stack[mid].ts <= ts) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

/* A first access by the top frame to a cell [t] last touched at [ts] (0: never): counted
 * at the top, and taken back from the deepest pending frame that had already counted it,
 * so the sums (2) of the frames at or below that one count it once. */
static inline void first_access(Thread *t, uint64_t ts, size_t field) {
    Frame *top = &t->stack[t->len - 1];
    (*(int64_t *)((char *)top + field))++;
    if (ts == 0) return;
    long i = frame_at(t, ts);
    if (i >= 0) (*(int64_t *)((char *)&t->stack[i] + field))--;
}

/* Thread [t] (index [ti]) takes [e] over from its last accessor: the owner's stamp goes back
 * to the owner's Shadow, and [t]'s own comes out of its Shadow. Returns [t]'s stamp. */
static __attribute__((noinline)) uint64_t cell_take(CellE *e, uint64_t cell, Thread *t, uint32_t ti) {
    if (e->owner == 0) {
        world.cells.n++;
    } else {
        if (!world.threads[e->owner - 1].ended) *shadow_at(&world.threads[e->owner - 1].tst, cell) = e->tst;
    }
    e->owner = (uint64_t)ti + 1;
    return shadow_get(&t->tst, cell);
}

/* [t]'s latest access to [cell] (entry [e]; 0: never), making [t] its owner. */
static inline uint64_t cell_tst(CellE *e, uint64_t cell, Thread *t, uint32_t ti) {
    return e->owner == (uint64_t)ti + 1 ? e->tst : cell_take(e, cell, t, ti);
}

static inline void on_read(InputSize *s, uint64_t cell) {
    Thread *t = cur_thread(s);
    CellE *e = cell_at(&world.cells, cell);
    uint64_t ts = cell_tst(e, cell, t, s->cur);
    e->tst = world.count;
    if (t->len == 0) return; /* no activation to charge (before the first call) */
    Frame *top = &t->stack[t->len - 1];
    /* RMS: figure 11 without lines 1-2 */
    if (ts < top->ts) first_access(t, ts, offsetof(Frame, rms));
    /* TRMS */
    uint64_t w = e->wts;
    if (ts < (w >> 1)) { /* written by another thread or the kernel since t last touched it */
        top->trms++;
        if (w & WTS_KERNEL) top->ext++;
        else top->thr++;
    } else if (ts < top->ts) {
        first_access(t, ts, offsetof(Frame, trms));
    }
}

static inline void on_write(InputSize *s, uint64_t cell) {
    Thread *t = cur_thread(s);
    CellE *e = cell_at(&world.cells, cell);
    if (e->owner != (uint64_t)s->cur + 1) cell_take(e, cell, t, s->cur);
    e->tst = world.count;
    e->wts = world.count << 1;
}

/* Figure 12: the kernel writes the cell (a time of its own), then the thread reads it. */
static void on_input(InputSize *s, uint64_t cell) {
    world.count++;
    cell_at(&world.cells, cell)->wts = world.count << 1 | WTS_KERNEL;
    on_read(s, cell);
}

/* Analyses the events of [s] from [ev] up to its first EV_SYNC, and returns that event's
 * index ([n]: none). One pass: the order check costs nothing on the other events. world.lock
 * held. */
static size_t analyse(InputSize *s, const uint64_t *ev, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint64_t e = ev[i];
        switch (ev_kind(e)) {
        case EV_SYNC: return i;
        case EV_LOAD:
            s->loads++;
            on_read(s, ev_payload(e) & ADDR_MASK);
            break;
        case EV_STORE:
            s->stores++;
            on_write(s, ev_payload(e) & ADDR_MASK);
            break;
        case EV_ICOUNT: {
            uint64_t v = ev_payload(e);
            cur_thread(s)->clock += v - s->last_icount;
            s->last_icount = v;
            break;
        }
        case EV_CALL: on_call(s, e, 0); break;
        case EV_FRAME: on_call(s, e, 1); break;
        case EV_RETURN: on_return(s, (uint32_t)ev_payload(e) & EV_DEPTH_MAX); break;
        case EV_INPUT:
            s->inputs++;
            on_input(s, ev_payload(e) & ADDR_MASK);
            break;
        case EV_THREAD:
            world.count++; /* switchThread */
            s->cur = thread_index(ev_payload(e));
            break;
        case EV_THREAD_END: {
            /* Memory is freed when a thread ends: its frames end (as a cut would end them),
             * its stack and stamps go. Its clock stays (its EV_ICOUNTs are past). */
            Thread *t = &world.threads[thread_index(ev_payload(e))];
            while (t->len) frame_end(s, t);
            free(t->stack);
            free(t->tst.e);
            t->stack = NULL;
            t->cap = 0;
            t->tst = (Shadow){NULL, 0, 0};
            t->ended = 1;
            s->ended++;
            break;
        }
        case EV_GAP: /* sampled: the frames' accesses are incomplete from here on */
            for (uint32_t k = 0; k < world.th.n; k++)
                for (size_t j = 0; j < world.threads[k].len; j++) world.threads[k].stack[j].replayed = 1;
            break;
        default: break;
        }
    }
    return n;
}

/* ====================================================================== */
/* Order across streams (the world)                                       */
/* ====================================================================== */

/* Analyses [ev] of [s] up to the first EV_SYNC the world has not reached; returns how many
 * events were consumed (n: all). world.lock held. */
static size_t run_ordered(InputSize *s, const uint64_t *ev, size_t n) {
    if (world.last != s) { /* another thread's accesses get times of their own */
        world.count++;
        world.last = s;
    }
    for (size_t i = analyse(s, ev, n); i < n; i = i + 1 + analyse(s, ev + i + 1, n - i - 1)) {
        uint64_t seq = ev_payload(ev[i]); /* ev[i] is an EV_SYNC */
        if (seq > world.next) return i;
        if (seq == world.next) world.next++; /* (below: passed over by drain_all) */
        world.count++;
    }
    return n;
}

static void enqueue(InputSize *s, const uint64_t *ev, size_t n) {
    if (s->qhead == s->qlen) s->qhead = s->qlen = 0;
    if (s->qlen + n > s->qcap && s->qhead > 0) {
        memmove(s->q, s->q + s->qhead, (s->qlen - s->qhead) * sizeof *s->q);
        s->qlen -= s->qhead;
        s->qhead = 0;
    }
    if (s->qlen + n > s->qcap) prof_grow((void **)&s->q, &s->qcap, s->qlen + n, sizeof *s->q, WHO);
    memcpy(s->q + s->qlen, ev, n * sizeof *ev);
    s->qlen += n;
}

/* Runs the queue of [s], whose head is the EV_SYNC the world has reached. */
static void run_queue(InputSize *s) {
    s->wait_seq = 0;
    size_t left = s->qlen - s->qhead, k = run_ordered(s, s->q + s->qhead, left);
    s->qhead += k;
    if (k < left) s->wait_seq = ev_payload(s->q[s->qhead]);
}

/* Runs every queue the world can reach, in order. world.lock held. */
static void drain(void) {
    for (;;) {
        InputSize *t = world.states;
        while (t != NULL && t->wait_seq != world.next) t = t->next;
        if (t == NULL) return;
        run_queue(t);
    }
}

/* At the end: numbers that never came (a thread the shutdown stopped between taking its
 * number and emitting it) are passed over, and every queue runs, lowest number first. */
static void drain_all(void) {
    drain();
    for (;;) {
        InputSize *low = NULL;
        for (InputSize *t = world.states; t != NULL; t = t->next)
            if (t->wait_seq != 0 && (low == NULL || t->wait_seq < low->wait_seq)) low = t;
        if (low == NULL) return;
        world.next = low->wait_seq;
        drain();
    }
}

static void is_consume(void *st, const uint64_t *ev, size_t n) {
    InputSize *s = st;
    pthread_mutex_lock(&world.lock);
    if (s->wait_seq != 0) {
        enqueue(s, ev, n);
    } else {
        size_t k = run_ordered(s, ev, n);
        if (k < n) {
            s->wait_seq = ev_payload(ev[k]);
            enqueue(s, ev + k, n - k);
        }
    }
    drain();
    pthread_mutex_unlock(&world.lock);
}

/* ====================================================================== */
/* Merge                                                                   */
/* ====================================================================== */

/* The queue a state's stream needed (before it is closed). */
static void count_queue(InputSize *s) {
    if (s->queue_bytes == 0) s->queue_bytes = s->qcap * sizeof *s->q;
}

/* The world's shadow memory: every thread's tst and stack, and wts. world.lock held. */
static void count_shadow(InputSize *s) {
    uint64_t cells = world.cells.n, bytes = cells_bytes(&world.cells);
    for (uint32_t k = 0; k < world.th.n; k++) {
        bytes += shadow_bytes(&world.threads[k].tst);
        bytes += world.threads[k].cap * sizeof(Frame);
    }
    s->cells = cells;
    s->shadow_bytes = bytes;
}

static void is_merge(void *into, void *from) {
    InputSize *a = into, *b = from;
    pthread_mutex_lock(&world.lock);
    drain_all();
    pthread_mutex_unlock(&world.lock);
    count_queue(a);
    count_queue(b);
    for (size_t i = 0; i < b->npts; i++) {
        const Point *p = &b->pts[i];
        add_point(a, p->fid, p->kind, p->size, p->n, p->min, p->max, p->sum);
    }
    for (uint32_t f = 0; f < b->fn_cap; f++) {
        const FnTotal *x = &b->fn[f];
        if (x->calls == 0) continue;
        FnTotal *y = fn_total(a, f);
        y->calls += x->calls;
        y->cost += x->cost;
        y->trms += x->trms;
        y->rms += x->rms;
        y->thr += x->thr;
        y->ext += x->ext;
    }
    a->loads += b->loads;
    a->stores += b->stores;
    a->inputs += b->inputs;
    a->unreported += b->unreported;
    a->ended += b->ended;
    a->queue_bytes += b->queue_bytes;
}

/* ====================================================================== */
/* The cost model                                                          */
/* ====================================================================== */

/* Candidate growth functions f(n), slowest first. log2(1 + n), so that size 0 (a function
 * with no input) is defined. Grep MODEL_NAMES. */
enum { M_1, M_LOG, M_N, M_NLOG, M_N2, M_N3, M__COUNT, M_NONE = -1 };
static const char *const model_names[M__COUNT] = {"1", "log n", "n", "n log n", "n^2", "n^3"};

static double model_f(int m, double n) {
    switch (m) {
    case M_LOG: return log2(1.0 + n);
    case M_N: return n;
    case M_NLOG: return n * log2(1.0 + n);
    case M_N2: return n * n;
    case M_N3: return n * n * n;
    default: return 1.0;
    }
}

typedef struct Fit {
    int model;      /* M_*, or M_NONE: fewer than MIN_SIZES distinct sizes */
    double a, b;    /* mean cost ~ a + b f(n) */
    double r2;      /* coefficient of determination of that fit (1 when the costs are all equal) */
    int sizes;      /* distinct sizes (points) */
    uint64_t max_size;
} Fit;

/* Least squares of the mean cost of each point against a + b f(size), one point per
 * distinct size (the paper's plots: one point per size, however many activations it has).
 * The criterion: the growth model with the largest R^2 among those with b > 0; exact ties
 * go to the slower-growing one. The constant model wins when no growth model has b > 0 or
 * all costs are equal. Fewer than MIN_SIZES sizes: no model (M_NONE). */
static Fit fit_points(const Point *const *pts, int n) {
    Fit r = {M_NONE, 0, 0, 0, n, 0};
    for (int i = 0; i < n; i++)
        if (pts[i]->size > r.max_size) r.max_size = pts[i]->size;
    if (n < MIN_SIZES) return r;
    double my = 0;
    for (int i = 0; i < n; i++) my += pts[i]->sum / (double)pts[i]->n;
    my /= n;
    double tss = 0;
    for (int i = 0; i < n; i++) {
        double d = pts[i]->sum / (double)pts[i]->n - my;
        tss += d * d;
    }
    r.model = M_1;
    r.a = my;
    r.r2 = tss == 0 ? 1.0 : 0.0;
    if (tss == 0) return r;
    for (int m = M_LOG; m < M__COUNT; m++) {
        double mx = 0;
        for (int i = 0; i < n; i++) mx += model_f(m, (double)pts[i]->size);
        mx /= n;
        double sxx = 0, sxy = 0;
        for (int i = 0; i < n; i++) {
            double dx = model_f(m, (double)pts[i]->size) - mx;
            sxx += dx * dx;
            sxy += dx * (pts[i]->sum / (double)pts[i]->n - my);
        }
        if (sxx <= 0) continue;
        double b = sxy / sxx, a = my - b * mx;
        if (!(b > 0)) continue;
        double rss = 0;
        for (int i = 0; i < n; i++) {
            double e = pts[i]->sum / (double)pts[i]->n - (a + b * model_f(m, (double)pts[i]->size));
            rss += e * e;
        }
        double r2 = 1.0 - rss / tss;
        if (r2 > r.r2 + 1e-12) { /* models come slowest first: a tie keeps the slower */
            r.model = m;
            r.a = a;
            r.b = b;
            r.r2 = r2;
        }
    }
    return r;
}

/* ====================================================================== */
/* Reports                                                                 */
/* ====================================================================== */

typedef struct Row {
    uint32_t fid;
    const char *name;
    const FnTotal *t;
    const Point **pts[K__COUNT]; /* sorted by size */
    int npts[K__COUNT];
    Fit fit[K__COUNT];
} Row;

static int pt_cmp(const void *pa, const void *pb) {
    const Point *x = *(const Point *const *)pa, *y = *(const Point *const *)pb;
    return x->size < y->size ? -1 : x->size > y->size;
}

/* Fastest growth first (the TRMS model), then the larger cost. */
static int row_cmp(const void *pa, const void *pb) {
    const Row *x = pa, *y = pb;
    if (x->fit[K_TRMS].model != y->fit[K_TRMS].model) return x->fit[K_TRMS].model > y->fit[K_TRMS].model ? -1 : 1;
    if (x->t->cost != y->t->cost) return x->t->cost > y->t->cost ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const char *model_name(int m) { return m == M_NONE ? "-" : model_names[m]; }

static void report_text(const InputSize *s, const Row *rows, size_t nrows, FILE *out, const ProfReportOpts *o) {
    uint64_t calls = 0;
    for (size_t i = 0; i < nrows; i++) calls += rows[i].t->calls;
    fprintf(out, "inputsize: %zu functions, %" PRIu64 " activations; cost: bytecode instructions of the activation "
                 "and its descendants; input size: TRMS (RMS for comparison)\n", nrows, calls);
    prof_text_notes(out, o);
    fprintf(out, "  events: %" PRIu64 " loads, %" PRIu64 " stores, %" PRIu64 " external inputs; shadow memory: %" PRIu64
                 " cells, %" PRIu64 " bytes (%.1f bytes per cell)\n",
            s->loads, s->stores, s->inputs, s->cells, s->shadow_bytes,
            s->cells ? (double)s->shadow_bytes / (double)s->cells : 0.0);
    if (s->ended)
        fprintf(out, "  %" PRIu64 " threads ended; their stacks and stamps were freed then\n", s->ended);
    if (s->queue_bytes)
        fprintf(out, "  order queues (events held until an earlier EV_SYNC of another stream came): %" PRIu64 " bytes\n",
                s->queue_bytes);
    if (s->unreported)
        fprintf(out, "  %" PRIu64 " activations not reported (started before their stream saw them)\n", s->unreported);
    fprintf(out, "  model: least squares of mean cost = a + b f(n), f among 1, log n, n, n log n, n^2, n^3; the largest "
                 "R^2 with b > 0 wins (at least %d sizes)\n", MIN_SIZES);
    fprintf(out, "%-8s %8s %10s %6s %10s %12s %8s %8s %8s  %s\n", "model", "R^2", "calls", "sizes", "max TRMS",
            "max cost", "RMS fit", "thread%", "extern%", "function (fastest growth first)");
    for (size_t i = 0; i < nrows && i < REPORT_TOP; i++) {
        const Row *r = &rows[i];
        uint64_t maxc = 0;
        for (int j = 0; j < r->npts[K_TRMS]; j++)
            if (r->pts[K_TRMS][j]->max > maxc) maxc = r->pts[K_TRMS][j]->max;
        double tr = (double)r->t->trms;
        fprintf(out, "%-8s %8.4f %10" PRIu64 " %6d %10" PRIu64 " %12" PRIu64 " %8s %7.1f%% %7.1f%%  %s\n",
                model_name(r->fit[K_TRMS].model), r->fit[K_TRMS].r2, r->t->calls, r->fit[K_TRMS].sizes,
                r->fit[K_TRMS].max_size, maxc, model_name(r->fit[K_RMS].model),
                tr > 0 ? 100.0 * (double)r->t->thr / tr : 0.0, tr > 0 ? 100.0 * (double)r->t->ext / tr : 0.0, r->name);
    }
    if (nrows > REPORT_TOP) fprintf(out, "  (%zu more functions: -Xprofile.format=json lists them all)\n", nrows - REPORT_TOP);
}

static void fit_json(FILE *out, const char *key, const Row *r, int k) {
    const Fit *f = &r->fit[k];
    fprintf(out, ",\"%s\":{\"model\":", key);
    if (f->model == M_NONE) fputs("null", out);
    else prof_json_str(out, model_names[f->model]);
    fputs(",\"a\":", out);
    prof_json_num(out, f->a);
    fputs(",\"b\":", out);
    prof_json_num(out, f->b);
    fputs(",\"r2\":", out);
    prof_json_num(out, f->r2);
    fputs(",\"points\":[", out);
    for (int j = 0; j < r->npts[k]; j++) {
        const Point *p = r->pts[k][j];
        fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", j ? "," : "", p->size, p->n, p->min);
        prof_json_num(out, p->sum / (double)p->n);
        fprintf(out, ",%" PRIu64 "]", p->max);
    }
    fputs("]}", out);
}

/* {..., "cost":"instructions", "loads", "stores", "inputs", "cells", "shadow_bytes", "queue_bytes", "unreported",
 *  "threads_ended",
 *  "models": [...], "functions": [{"function", "calls", "cost", "trms", "rms", "induced_thread",
 *  "induced_external", "trms_fit": {"model", "a", "b", "r2", "points": [[size, calls, min, mean, max]]},
 *  "rms_fit": {...}}]} in the text's order; sizes and costs are totals over the activations. */
static void report_json(const InputSize *s, const Row *rows, size_t nrows, FILE *out, const ProfReportOpts *o) {
    prof_json_begin(out, "inputsize", o);
    fprintf(out, ",\"cost\":\"instructions\",\"loads\":%" PRIu64 ",\"stores\":%" PRIu64 ",\"inputs\":%" PRIu64
                 ",\"cells\":%" PRIu64 ",\"shadow_bytes\":%" PRIu64 ",\"queue_bytes\":%" PRIu64
                 ",\"unreported\":%" PRIu64 ",\"threads_ended\":%" PRIu64 ",\"models\":[",
            s->loads, s->stores, s->inputs, s->cells, s->shadow_bytes, s->queue_bytes, s->unreported, s->ended);
    for (int m = 0; m < M__COUNT; m++) {
        if (m) fputc(',', out);
        prof_json_str(out, model_names[m]);
    }
    fputs("],\"functions\":[", out);
    for (size_t i = 0; i < nrows; i++) {
        const Row *r = &rows[i];
        fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
        prof_json_str(out, r->name);
        fprintf(out, ",\"calls\":%" PRIu64 ",\"cost\":%" PRIu64 ",\"trms\":%" PRIu64 ",\"rms\":%" PRIu64
                     ",\"induced_thread\":%" PRIu64 ",\"induced_external\":%" PRIu64,
                r->t->calls, r->t->cost, r->t->trms, r->t->rms, r->t->thr, r->t->ext);
        fit_json(out, "trms_fit", r, K_TRMS);
        fit_json(out, "rms_fit", r, K_RMS);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

static int is_report(void *st, FILE *out, const ProfReportOpts *o) {
    InputSize *s = st;
    if (o->format != PROF_TEXT && o->format != PROF_JSON) return -2;
    pthread_mutex_lock(&world.lock);
    drain_all();
    count_shadow(s);
    pthread_mutex_unlock(&world.lock);
    count_queue(s);
    size_t nrows = 0;
    for (size_t f = 0; f < s->fn_cap; f++) nrows += s->fn[f].calls != 0;
    Row *rows = calloc(nrows ? nrows : 1, sizeof *rows);
    const Point **all = malloc((s->npts ? s->npts : 1) * sizeof *all);
    size_t *first = calloc(2 * (s->fn_cap ? s->fn_cap : 1), sizeof *first); /* points per (fid, kind) */
    int rc = -1;
    if (rows == NULL || all == NULL || first == NULL) goto done;
    /* Bucket the points by (fid, kind): counting sort on 2 * fid + kind. */
    size_t nb = 2 * s->fn_cap;
    for (size_t i = 0; i < s->npts; i++) first[2 * s->pts[i].fid + s->pts[i].kind]++;
    size_t acc = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t c = first[b];
        first[b] = acc;
        acc += c;
    }
    size_t *fill = malloc((nb ? nb : 1) * sizeof *fill);
    if (fill == NULL) goto done;
    memcpy(fill, first, nb * sizeof *fill);
    for (size_t i = 0; i < s->npts; i++) all[fill[2 * s->pts[i].fid + s->pts[i].kind]++] = &s->pts[i];
    free(fill);
    size_t r = 0;
    for (size_t f = 0; f < s->fn_cap; f++) {
        if (s->fn[f].calls == 0) continue;
        Row *row = &rows[r++];
        row->fid = (uint32_t)f;
        row->name = o->fname((uint32_t)f, o->ctx);
        row->t = &s->fn[f];
        for (int k = 0; k < K__COUNT; k++) {
            size_t b = 2 * f + (size_t)k, end = b + 1 < nb ? first[b + 1] : s->npts;
            row->pts[k] = all + first[b];
            row->npts[k] = (int)(end - first[b]);
            qsort(row->pts[k], (size_t)row->npts[k], sizeof *row->pts[k], pt_cmp);
            row->fit[k] = fit_points(row->pts[k], row->npts[k]);
        }
    }
    qsort(rows, nrows, sizeof *rows, row_cmp);
    if (o->format == PROF_TEXT) report_text(s, rows, nrows, out, o);
    else report_json(s, rows, nrows, out, o);
    rc = ferror(out) ? -1 : 0;
done:
    free(rows);
    free(all);
    free(first);
    return rc;
}

static void is_close(void *st) {
    InputSize *s = st;
    if (s == NULL) return;
    pthread_mutex_lock(&world.lock);
    if (s->prev) s->prev->next = s->next;
    else world.states = s->next;
    if (s->next) s->next->prev = s->prev;
    if (world.last == s) world.last = NULL;
    if (world.states == NULL) { /* the run is over: the next starts afresh */
        cells_free(&world.cells);
        for (uint32_t t = 0; t < world.th.n; t++) {
            free(world.threads[t].stack);
            free(world.threads[t].tst.e);
        }
        free(world.threads);
        world.threads = NULL;
        world.threads_cap = 0;
        prof_map_free(&world.th.ids);
        world.th = (ProfThreads){{NULL, 0, 0}, PROF_MAP_NONE, 0};
        world.count = 0;
        world.next = 1;
    }
    pthread_mutex_unlock(&world.lock);
    free(s->q);
    free(s->pts);
    prof_map_free(&s->pt_index);
    free(s->fn);
    free(s);
}

const ProfAnalysis prof_inputsize = {"inputsize", PROF_NEED_CALL | PROF_NEED_RETURN | PROF_NEED_MEM | PROF_NEED_COST | PROF_NEED_INPUT |
                                                        PROF_NEED_SYNC | PROF_NEED_LIBMEM,
                                     is_open, is_consume, is_merge, is_report, is_close, NULL};
