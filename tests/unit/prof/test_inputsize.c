/* test_inputsize.c: the inputsize analysis (prof_inputsize.c) on event streams built by hand:
 * the paper's examples (figure 1a, 1b, the producer/consumer of figure 2 with its two streams
 * fed in the wrong order, figure 3's external input), and random streams of several green
 * threads checked against a second, independent computation: the naive algorithm of the
 * paper's figure 10 (a set of cells per pending activation), with the costs from the same
 * instruction clocks. */
#include <inttypes.h>

#include "prof_test.h"

#define ICOUNT(n) EVK(EV_ICOUNT, (n))
#define INPUT(a) EVK(EV_INPUT, (a))
#define SYNC(q) EVK(EV_SYNC, (q))

/* ---------------------------------------------------------------------- */
/* Reading the JSON report back                                           */
/* ---------------------------------------------------------------------- */

typedef struct Got {
    uint64_t calls, cost, trms, rms, thr, ext;
    uint64_t trms_sq, rms_sq; /* sum over points of activations * size^2 */
    uint64_t trms_max, rms_max;
} Got;

static void points_of(const char *p, const char *key, uint64_t *sq, uint64_t *max) {
    const char *q = strstr(p, key);
    assert_non_null(q);
    q = strstr(q, "\"points\":[");
    assert_non_null(q);
    q += strlen("\"points\":[");
    *sq = *max = 0;
    while (*q == '[' || *q == ',') {
        if (*q == ',') q++;
        unsigned long long size, n;
        assert_int_equal(sscanf(q, "[%llu,%llu,", &size, &n), 2);
        *sq += n * size * size;
        if (size > *max) *max = size;
        q = strchr(q, ']');
        assert_non_null(q);
        q++;
    }
}

/* The numbers of function [fid] in [st]'s JSON report; calls 0 if it is not there. */
static Got got(void *st, uint32_t fid) {
    Got g;
    memset(&g, 0, sizeof g);
    int rc;
    char *rep = report_str(&prof_inputsize, st, PROF_JSON, 1.0, &rc);
    assert_int_equal(rc, 0);
    char name[64];
    snprintf(name, sizeof name, "{\"function\":\"f%u (t.lua:%u)\"", fid, fid);
    const char *p = strstr(rep, name);
    if (p != NULL) {
        unsigned long long v[6];
        assert_int_equal(sscanf(p + strlen(name),
                                ",\"calls\":%llu,\"cost\":%llu,\"trms\":%llu,\"rms\":%llu,\"induced_thread\":%llu,"
                                "\"induced_external\":%llu",
                                &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]),
                         6);
        g = (Got){v[0], v[1], v[2], v[3], v[4], v[5], 0, 0, 0, 0};
        points_of(p, "\"trms_fit\"", &g.trms_sq, &g.trms_max);
        points_of(p, "\"rms_fit\"", &g.rms_sq, &g.rms_max);
    }
    free(rep);
    return g;
}

/* ---------------------------------------------------------------------- */
/* The paper's examples                                                   */
/* ---------------------------------------------------------------------- */

/* A fresh state that has consumed [ev] in chunks of [chunk]; the caller closes it. */
static void *analysed(const uint64_t *ev, size_t n, size_t chunk) {
    void *st = prof_inputsize.open();
    assert_non_null(st);
    feed(&prof_inputsize, st, ev, n, chunk);
    return st;
}

/* Figure 1a: f (thread 1) reads x, g (thread 2) writes x, f reads x again: RMS 1, TRMS 2. */
static void test_inputsize_figure_1a(void **state) {
    (void)state;
    const uint64_t ev[] = {THREAD(1), CALL(1, 1), LOAD(0x100), THREAD(2), CALL(2, 1), STORE(0x100), RET(1),
                           THREAD(1), LOAD(0x100), RET(1)};
    void *st = analysed(ev, NEV(ev), 3);
    Got f = got(st, 1), g = got(st, 2);
    assert_int_equal(f.calls, 1);
    assert_int_equal(f.rms, 1);
    assert_int_equal(f.trms, 2);
    assert_int_equal(f.thr, 1);
    assert_int_equal(g.trms, 0);
    prof_inputsize.close(st);
}

/* Figure 1b: f reads x; thread 2 writes x; f's child h reads x; f reads x: RMS_h = RMS_f = 1,
 * TRMS_h = 1, TRMS_f = 2 (the third read is not new to f: h read it after the write). */
static void test_inputsize_figure_1b(void **state) {
    (void)state;
    const uint64_t ev[] = {THREAD(1), CALL(1, 1), LOAD(0x200), THREAD(2), CALL(2, 1), STORE(0x200), RET(1),
                           THREAD(1), CALL(3, 2), LOAD(0x200), RET(2), LOAD(0x200), RET(1)};
    void *st = analysed(ev, NEV(ev), 1);
    Got f = got(st, 1), h = got(st, 3);
    assert_int_equal(f.rms, 1);
    assert_int_equal(f.trms, 2);
    assert_int_equal(h.rms, 1);
    assert_int_equal(h.trms, 1);
    prof_inputsize.close(st);
}

/* A cell written before it is read is no input; a cell read by a finished child is input to
 * the parent once, however often both read it. */
static void test_inputsize_write_before_read_and_children(void **state) {
    (void)state;
    const uint64_t ev[] = {CALL(1, 1), STORE(0x10), LOAD(0x10), CALL(2, 2), LOAD(0x20), LOAD(0x20), RET(2),
                           LOAD(0x20), CALL(2, 2), LOAD(0x20), LOAD(0x10), RET(2), RET(1)};
    void *st = analysed(ev, NEV(ev), 4);
    Got f = got(st, 1), g = got(st, 2);
    assert_int_equal(f.trms, 1); /* 0x20 only */
    assert_int_equal(f.rms, 1);
    assert_int_equal(g.calls, 2);
    assert_int_equal(g.trms, 3); /* 1 + 2: the second call reads 0x20 and 0x10 first */
    assert_int_equal(g.rms_max, 2);
    prof_inputsize.close(st);
}

/* Figure 2 on two native threads, one stream each, with the semaphores' EV_SYNC numbers as
 * the thread library gives them: the consumer's stream is analysed before the producer's has
 * arrived, and the numbers put the accesses back in order. */
#define PC_N 5
static void test_inputsize_producer_consumer_two_streams(void **state) {
    (void)state;
    uint64_t prod[4 + 3 * PC_N], cons[4 + 3 * PC_N];
    size_t np = 0, nc = 0;
    prod[np++] = THREAD(10);
    prod[np++] = CALL(1, 1);
    cons[nc++] = THREAD(11);
    cons[nc++] = CALL(2, 1);
    for (uint64_t i = 0; i < PC_N; i++) {
        prod[np++] = SYNC(4 * i + 1); /* recv(empty) */
        prod[np++] = STORE(0x300);    /* box[1] = i */
        prod[np++] = SYNC(4 * i + 2); /* send(full) */
        cons[nc++] = SYNC(4 * i + 3); /* recv(full) */
        cons[nc++] = LOAD(0x300);     /* s = s + box[1] */
        cons[nc++] = SYNC(4 * i + 4); /* send(empty) */
    }
    prod[np++] = RET(1);
    cons[nc++] = RET(1);
    void *ps = prof_inputsize.open(), *cs = prof_inputsize.open();
    feed(&prof_inputsize, cs, cons, nc, 2); /* all of the consumer first: it must wait */
    feed(&prof_inputsize, ps, prod, np, 3);
    prof_inputsize.merge(ps, cs);
    Got c = got(ps, 2), p = got(ps, 1);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.rms, 1);
    assert_int_equal(c.trms, PC_N);
    assert_int_equal(c.thr, PC_N);
    assert_int_equal(p.trms, 0);
    prof_inputsize.close(cs);
    prof_inputsize.close(ps);
}

/* A thread that ends (EV_THREAD_END) has its open frames ended and reported, its state
 * freed; its writes still count as input to the threads that read them later, and a cell it
 * owned can be taken over. */
static void test_inputsize_thread_end_frees_and_keeps_wts(void **state) {
    (void)state;
    const uint64_t ev[] = {THREAD(1), CALL(1, 1), LOAD(0x500), THREAD(2), CALL(2, 1), STORE(0x500), LOAD(0x600),
                           EVK(EV_THREAD_END, 2), THREAD(1), LOAD(0x500), LOAD(0x600), RET(1)};
    void *st = analysed(ev, NEV(ev), 2);
    Got f = got(st, 1), g = got(st, 2);
    assert_int_equal(g.calls, 1); /* ended with its thread */
    assert_int_equal(g.trms, 1);
    assert_int_equal(f.rms, 2);
    assert_int_equal(f.trms, 3); /* 0x500 twice (the second written by thread 2), 0x600 */
    assert_int_equal(f.thr, 1);
    int rc;
    char *rep = report_str(&prof_inputsize, st, PROF_JSON, 1.0, &rc);
    assert_true(contains(rep, "\"threads_ended\":1"));
    free(rep);
    prof_inputsize.close(st);
}

/* Figure 3: n reads of a buffer the kernel refilled each time: RMS 1, TRMS n, all external;
 * the cost is the instruction clock's difference. */
static void test_inputsize_external_input(void **state) {
    (void)state;
    uint64_t ev[16];
    size_t n = 0;
    ev[n++] = ICOUNT(5);
    ev[n++] = CALL(1, 1);
    for (int i = 0; i < 4; i++) ev[n++] = INPUT(0x4000);
    ev[n++] = ICOUNT(47);
    ev[n++] = RET(1);
    void *st = analysed(ev, n, 16);
    Got f = got(st, 1);
    assert_int_equal(f.rms, 1);
    assert_int_equal(f.trms, 4);
    assert_int_equal(f.ext, 4);
    assert_int_equal(f.cost, 42);
    prof_inputsize.close(st);
}

/* ---------------------------------------------------------------------- */
/* Random streams against the naive algorithm (figure 10)                 */
/* ---------------------------------------------------------------------- */

#define R_THREADS 3
#define R_DEPTH 8
#define R_CELLS 64 /* cells 1..64: a set is one 64-bit mask */

/* Cell k's address: both kinds of place the analysis keeps cells in (prof_inputsize.c,
 * "Cells"): 8-byte aligned ones spread over pages (neighbours within a page, and pages far
 * apart), and unaligned ones (string bytes, io values), some next to an aligned one. */
static uint64_t cell_addr(int k) {
    switch (k % 4) {
    case 0: return UINT64_C(0x7f0000000000) + (uint64_t)k * 8;       /* one page, neighbours */
    case 1: return UINT64_C(0x10000) + (uint64_t)k * 4104;            /* a page each */
    case 2: return UINT64_C(0x7f0000000000) + (uint64_t)k * 8 + 3;    /* unaligned, among case 0 */
    default: return UINT64_C(0x5000000) + (uint64_t)k * 65536 + 1;   /* unaligned, far */
    }
}
#define R_FNS 6

typedef struct NFrame {
    uint32_t fid;
    uint64_t L, R; /* the naive sets: TRMS's (losing cells others write) and RMS's */
    uint64_t trms, rms, cost0;
} NFrame;

typedef struct NThread {
    NFrame st[R_DEPTH];
    int len;
    uint64_t clock;
} NThread;

typedef struct NTot {
    uint64_t calls, cost, trms, rms, trms_sq, rms_sq;
} NTot;

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

static void naive_read(NThread *t, int cell) {
    uint64_t bit = 1ull << (cell - 1);
    for (int i = 0; i < t->len; i++) {
        NFrame *f = &t->st[i];
        if (!(f->L & bit)) f->trms++;
        if (!(f->R & bit)) f->rms++;
        f->L |= bit;
        f->R |= bit;
    }
}

/* The top frame of [t] returns: its sizes and cost join its function's totals. */
static void naive_return(NThread *t, NTot *tot) {
    NFrame *f = &t->st[--t->len];
    NTot *o = &tot[f->fid];
    o->calls++;
    o->cost += t->clock - f->cost0;
    o->trms += f->trms;
    o->rms += f->rms;
    o->trms_sq += f->trms * f->trms;
    o->rms_sq += f->rms * f->rms;
}

/* One random stream of green threads; feeds it to the analysis and checks every function's
 * calls, cost, TRMS and RMS totals and the sums of squared sizes against the naive sets. */
static void random_case(uint64_t seed, size_t chunk) {
    rng_state = seed;
    NThread th[R_THREADS];
    memset(th, 0, sizeof th);
    NTot tot[R_FNS + 1];
    memset(tot, 0, sizeof tot);
    size_t cap = 1 << 16, n = 0;
    uint64_t *ev = malloc(cap * sizeof *ev);
    assert_non_null(ev);
    uint64_t icount = 0;
    int cur = 0;
    ev[n++] = THREAD(1);
    for (int step = 0; step < 3000 && n + 8 < cap; step++) {
        NThread *t = &th[cur];
        uint32_t r = rnd(100);
        if (r < 5) { /* switch threads: the instructions so far are the current one's */
            int nt = (int)rnd(R_THREADS);
            if (nt == cur) continue;
            ev[n++] = ICOUNT(icount);
            ev[n++] = THREAD((uint64_t)nt + 1);
            cur = nt;
        } else if (r < 20 && t->len < R_DEPTH) {
            uint32_t fid = 1 + rnd(R_FNS);
            ev[n++] = ICOUNT(icount);
            ev[n++] = CALL(fid, t->len + 1);
            t->st[t->len++] = (NFrame){fid, 0, 0, 0, 0, t->clock};
        } else if (r < 32 && t->len > 0) {
            ev[n++] = ICOUNT(icount);
            ev[n++] = RET(t->len);
            naive_return(t, tot);
        } else if (r < 70) {
            int cell = 1 + (int)rnd(R_CELLS);
            ev[n++] = LOAD(cell_addr(cell));
            naive_read(t, cell);
        } else if (r < 95) {
            int cell = 1 + (int)rnd(R_CELLS);
            uint64_t bit = 1ull << (cell - 1);
            ev[n++] = STORE(cell_addr(cell));
            for (int k = 0; k < R_THREADS; k++)
                for (int i = 0; i < th[k].len; i++) {
                    if (k == cur) {
                        th[k].st[i].L |= bit;
                        th[k].st[i].R |= bit;
                    } else {
                        th[k].st[i].L &= ~bit; /* another thread's write: new input to them */
                    }
                }
        } else {
            int cell = 1 + (int)rnd(R_CELLS);
            uint64_t bit = 1ull << (cell - 1);
            ev[n++] = INPUT(cell_addr(cell));
            for (int k = 0; k < R_THREADS; k++) /* the kernel's write: new to everyone */
                for (int i = 0; i < th[k].len; i++) th[k].st[i].L &= ~bit;
            naive_read(t, cell);
        }
        uint32_t ran = rnd(5); /* instructions between events */
        icount += ran;
        th[cur].clock += ran;
    }
    /* Every thread returns its frames, in turn. */
    for (int k = 0; k < R_THREADS; k++) {
        ev[n++] = ICOUNT(icount);
        ev[n++] = THREAD((uint64_t)k + 1);
        NThread *t = &th[k];
        while (t->len > 0) {
            ev[n++] = RET(t->len);
            naive_return(t, tot);
        }
    }
    void *st = analysed(ev, n, chunk);
    for (uint32_t fid = 1; fid <= R_FNS; fid++) {
        Got g = got(st, fid);
        const NTot *o = &tot[fid];
        if (g.calls != o->calls || g.cost != o->cost || g.trms != o->trms || g.rms != o->rms ||
            g.trms_sq != o->trms_sq || g.rms_sq != o->rms_sq)
            fail_msg("seed %" PRIu64 " f%u: calls %" PRIu64 "/%" PRIu64 " cost %" PRIu64 "/%" PRIu64 " trms %" PRIu64
                     "/%" PRIu64 " rms %" PRIu64 "/%" PRIu64 " trms_sq %" PRIu64 "/%" PRIu64 " rms_sq %" PRIu64
                     "/%" PRIu64 " (analysis/naive)",
                     seed, fid, g.calls, o->calls, g.cost, o->cost, g.trms, o->trms, g.rms, o->rms, g.trms_sq,
                     o->trms_sq, g.rms_sq, o->rms_sq);
    }
    prof_inputsize.close(st);
    free(ev);
}

static void test_inputsize_random_streams_equal_the_naive_sets(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++) random_case(seed, 1 + seed % 64);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputsize_figure_1a),
        cmocka_unit_test(test_inputsize_figure_1b),
        cmocka_unit_test(test_inputsize_write_before_read_and_children),
        cmocka_unit_test(test_inputsize_producer_consumer_two_streams),
        cmocka_unit_test(test_inputsize_external_input),
        cmocka_unit_test(test_inputsize_thread_end_frees_and_keeps_wts),
        cmocka_unit_test(test_inputsize_random_streams_equal_the_naive_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
