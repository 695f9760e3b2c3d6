/* test_cab_ring.c: single-threaded tests of cab_ring.c, cab_nway.c and cab_ffwd.c: sizes and
 * their errors, every event read exactly once and in order across wraps with the smallest
 * accepted rings, flush of partial chunks, blocking through the hooks, sampling counts.
 * One thread plays both sides; the producer never pushes more than the free space, except in
 * the blocking tests, where the block hook plays the consumer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cab_api.h"
#include "cab_internal.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

/* A consumer that checks the sequence 1, 2, 3, ... */
typedef struct Seq {
    uint64_t next; /* next expected event */
    uint64_t bad;  /* events out of order */
} Seq;

static void seq_consume(void *ctx, const uint64_t *ev, size_t n) {
    Seq *s = ctx;
    for (size_t i = 0; i < n; i++) {
        if (ev[i] != s->next) s->bad++;
        s->next = ev[i] + 1;
    }
}

static CabConfig cfg_of(CabTransport t, CabMode m, size_t ring, size_t chunk) {
    CabConfig c;
    cab_config_default(&c);
    c.transport = t;
    c.mode = m;
    c.ring_bytes = ring;
    c.chunk_bytes = chunk;
    return c;
}

static void push_any(CabProducer *p, CabTransport t, uint64_t ev) {
    switch (t) {
    case CAB_TRANSPORT_CAB: cab_push(p, ev); break;
    case CAB_TRANSPORT_NWAY: cab_nway_push(p, ev); break;
    case CAB_TRANSPORT_FFWD: cab_ffwd_push(p, ev); break;
    }
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) { /* xorshift64: deterministic across runs */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---------------------------------------------------------------------- */
/* Sizes and configuration                                                 */
/* ---------------------------------------------------------------------- */

static void expect_config_error(CabConfig c, const char *needle) {
    const char *err = cab_config_check(&c);
    assert_non_null(err);
    if (!strstr(err, needle)) fail_msg("message '%s' lacks '%s'", err, needle);
    CabProducer p;
    const char *err2 = NULL;
    assert_null(cab_ring_new(&c, NULL, &p, &err2));
    assert_non_null(err2);
}

static void test_cab_config_check_errors(void **state) {
    (void)state;
    const CabTransport T = CAB_TRANSPORT_CAB;
    const CabMode E = CAB_MODE_EXHAUSTIVE;
    expect_config_error(cfg_of(CAB_TRANSPORT_FFWD, E, 3 << 20, 128 << 10),
                        "ring size 3145728 is not a power of two (needed by ffwd)");
    assert_null(cab_config_check(&(CabConfig){.ring_bytes = 3 << 20, .chunk_bytes = 128 << 10}));
    expect_config_error(cfg_of(T, E, 20 << 10, 8 << 10), "chunk size 8192 does not divide ring size 20480");
    expect_config_error(cfg_of(T, E, 2 << 20, 3000), "chunk size 3000 is not a power of two");
    expect_config_error(cfg_of(T, E, 2 << 20, 2048), "below the minimum 4096");
    expect_config_error(cfg_of(T, E, 64 << 10, 128 << 10), "does not divide ring size");
    expect_config_error(cfg_of(T, E, 0x800000000000ull, 4 << 10), "above the maximum");
    expect_config_error(cfg_of(T, E, 8 << 10, 4 << 10), "holds 2 chunks");
    CabConfig c = cfg_of(T, E, 16 << 10, 4 << 10);
    c.burst_bytes = 12;
    expect_config_error(c, "burst size 12");
    c = cfg_of(T, E, 16 << 10, 4 << 10);
    c.sample_rate = 1.5;
    expect_config_error(c, "sampling rate 1.5");
    c.sample_rate = -0.5;
    expect_config_error(c, "sampling rate -0.5");
    c = cfg_of(T, E, 16 << 10, 4 << 10);
    c.producer_share = 1.5;
    expect_config_error(c, "producer share 1.5 is not in (0, 1]");
    c.producer_share = -0.25;
    expect_config_error(c, "producer share -0.25");
    expect_config_error(cfg_of(CAB_TRANSPORT_NWAY, CAB_MODE_SAMPLING, 16 << 10, 4 << 10),
                        "sampling mode needs the cab transport");
    assert_null(cab_config_check(&(CabConfig){0})); /* all defaults */
    c = cfg_of(T, E, 12 << 10, 4 << 10); /* 3 chunks: the smallest ring */
    assert_null(cab_config_check(&c));
}

/* The idle analyzer's longest sleep for a ring (cab_analyzer.c, "Idle sleeps"): a quarter of
 * the ring at 1 G events/s times the producer's share, within [50 us, 4 ms]. */
static void test_cab_idle_sleep_from_share(void **state) {
    (void)state;
    size_t slots = (2 << 20) / 8; /* the default ring */
    assert_int_equal(cab_idle_sleep_ns(slots, 1.0), 50000);
    assert_int_equal(cab_idle_sleep_ns(slots, 0.5), 131072);   /* 65536 events at 0.5 / ns */
    assert_int_equal(cab_idle_sleep_ns(slots, 0.05), 1310720); /* ... at 0.05 / ns */
    assert_int_equal(cab_idle_sleep_ns(slots, 0.002), 4000000); /* -Xprofile.always: the ceiling */
    assert_int_equal(cab_idle_sleep_ns(3 * 512, 0.5), 50000);   /* a small ring: the floor */
    CabConfig c = {.producer_share = 0.002};
    CabProducer p;
    CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
    assert_non_null(r);
    assert_int_equal(r->idle_sleep_ns, 4000000);
    assert_true(cab_ring_config(r)->producer_share == 0.002);
    cab_ring_free(r);
    r = cab_ring_new(&(CabConfig){0}, NULL, &p, NULL);
    assert_true(cab_ring_config(r)->producer_share == 1.0); /* 0: the default */
    assert_int_equal(r->idle_sleep_ns, 50000);
    cab_ring_free(r);
}

static void test_cab_config_default_chunk_from_l1d(void **state) {
    (void)state;
    CabConfig c;
    cab_config_default(&c);
    assert_int_equal(c.ring_bytes, 2u << 20);
    size_t l1 = cab_topology_l1d_bytes();
    if (l1 == 0) assert_int_equal(c.chunk_bytes, CAB_FALLBACK_CHUNK_BYTES);
    else assert_true(c.chunk_bytes <= 4 * l1 && c.chunk_bytes * 2 > 4 * l1);
    assert_null(cab_config_check(&c));
    /* A defaulted chunk shrinks to fit three chunks into a small ring. */
    CabConfig small = {.ring_bytes = 16 << 10};
    CabProducer p;
    CabRing *r = cab_ring_new(&small, NULL, &p, NULL);
    assert_non_null(r);
    assert_true(cab_ring_config(r)->ring_bytes / cab_ring_config(r)->chunk_bytes >= 3);
    cab_ring_free(r);
}

static void test_cab_ring_new_layout(void **state) {
    (void)state;
    CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_EXHAUSTIVE, 16 << 10, 4 << 10);
    CabProducer p;
    CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
    assert_non_null(r);
    assert_int_equal((uintptr_t)r->slots % (4 << 10), 0); /* chunk-aligned */
    assert_true(r->slots[r->nslots] == CAB_MAGIC);
    assert_ptr_equal(p.cur, r->slots);
    assert_int_equal(r->resume, 1); /* 4 chunks: min(2, 4-3) */
    assert_null(cab_ring_check(r, &p));
    assert_false(cab_event_valid(CAB_CLEAR));
    assert_false(cab_event_valid(CAB_MAGIC));
    assert_true(cab_event_valid(1));
    cab_ring_free(r);
}

/* ---------------------------------------------------------------------- */
/* Exhaustive: order across wraps, flush                                   */
/* ---------------------------------------------------------------------- */

/* Push in random bursts never larger than the free space, consume what is ready after each
 * burst, flush now and then; check order, the window invariant and the final counts. */
static void run_interleaved(CabTransport t, size_t ring, size_t chunk, uint64_t total) {
    CabConfig c = cfg_of(t, CAB_MODE_EXHAUSTIVE, ring, chunk);
    CabProducer p;
    CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
    assert_non_null(r);
    Seq s = {1, 0};
    uint64_t next = 1;
    const uint64_t nslots = ring / 8;
    while (next <= total) {
        /* Free space as the producer sees it: NWAY wastes the rest of a flushed buffer and
         * a buffer is free only as a whole, so keep a two-buffer margin there. */
        uint64_t inflight = (next - 1) - (s.next - 1);
        uint64_t margin = t == CAB_TRANSPORT_NWAY ? 2 * chunk / 8 : 0;
        uint64_t room = nslots > inflight + margin ? nslots - inflight - margin : 0;
        uint64_t k = room ? rnd() % (room + 1) : 0;
        if (k > total - next + 1) k = total - next + 1;
        for (uint64_t i = 0; i < k; i++) push_any(&p, t, next++);
        if (rnd() % 4 == 0) cab_flush(&p);
        if (t == CAB_TRANSPORT_CAB) {
            const char *bad = cab_ring_check(r, &p);
            if (bad) fail_msg("%s", bad);
        }
        cab_consume(r, seq_consume, &s, 0);
        if (room == 0 && k == 0) { /* stuck behind the guard: make the residue consumable */
            cab_flush(&p);
            cab_consume(r, seq_consume, &s, 0);
        }
    }
    cab_close(&p);
    while (!cab_ring_done(r)) assert_true(cab_consume(r, seq_consume, &s, 0) > 0);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.next, total + 1);
    CabStats st = cab_ring_stats(r);
    assert_int_equal(st.produced, total);
    assert_int_equal(st.consumed, total);
    assert_int_equal(st.lost, 0);
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.blocks, 0);
    assert_int_equal(cab_producer_count(&p), total);
    cab_ring_free(r);
}

/* Smallest accepted rings: 3, 4 and 5 chunks of the minimum 4 KiB (FFWD needs a power of
 * two: 4 and 8), then a larger one; about twenty laps each. */
static void test_cab_consume_in_order_smallest_rings(void **state) {
    (void)state;
    const size_t chunk = 4 << 10;
    const size_t counts[] = {3, 4, 5, 8};
    for (size_t i = 0; i < 4; i++)
        for (int t = CAB_TRANSPORT_CAB; t <= CAB_TRANSPORT_FFWD; t++) {
            size_t nch = counts[i];
            if (t == CAB_TRANSPORT_FFWD && (nch & (nch - 1))) continue;
            run_interleaved((CabTransport)t, nch * chunk, chunk, 20 * nch * chunk / 8 + 13);
        }
}

static void test_cab_consume_in_order_default_ring(void **state) {
    (void)state;
    for (int t = CAB_TRANSPORT_CAB; t <= CAB_TRANSPORT_FFWD; t++)
        run_interleaved((CabTransport)t, 2 << 20, 128 << 10, 3 * (2 << 20) / 8 + 7);
}

static void test_cab_flush_partial_chunk(void **state) {
    (void)state;
    CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_EXHAUSTIVE, 16 << 10, 4 << 10);
    CabProducer p;
    CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
    Seq s = {1, 0};
    for (uint64_t i = 1; i <= 10; i++) cab_push(&p, i);
    assert_int_equal(cab_consume(r, seq_consume, &s, 0), 0); /* residue: guard not reached */
    cab_flush(&p);
    assert_int_equal(cab_consume(r, seq_consume, &s, 0), 10);
    for (uint64_t i = 11; i <= 15; i++) cab_push(&p, i);
    assert_int_equal(cab_consume(r, seq_consume, &s, 0), 0); /* the old flush covers nothing new */
    cab_flush(&p);
    assert_int_equal(cab_consume(r, seq_consume, &s, 0), 5);
    assert_null(cab_ring_check(r, &p));
    /* Now fill past the guard from a mid-chunk consumer position: the chunk's rest comes
     * through the guard path. */
    for (uint64_t i = 16; i <= 1500; i++) cab_push(&p, i);
    assert_int_equal(cab_consume(r, seq_consume, &s, 0), 512 - 15); /* rest of chunk 0 */
    cab_close(&p);
    while (!cab_ring_done(r)) cab_consume(r, seq_consume, &s, 0);
    assert_int_equal(s.next, 1501);
    assert_int_equal(s.bad, 0);
    CabStats st = cab_ring_stats(r);
    assert_int_equal(st.produced, 1500);
    assert_int_equal(st.consumed, 1500);
    assert_int_equal(st.flushes, 3);
    cab_ring_free(r);
}

static void test_cab_close_empty_ring(void **state) {
    (void)state;
    for (int t = CAB_TRANSPORT_CAB; t <= CAB_TRANSPORT_FFWD; t++) {
        CabConfig c = cfg_of((CabTransport)t, CAB_MODE_EXHAUSTIVE, 16 << 10, 4 << 10);
        CabProducer p;
        CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
        cab_close(&p);
        Seq s = {1, 0};
        assert_int_equal(cab_consume(r, seq_consume, &s, 0), 0);
        assert_true(cab_ring_done(r));
        assert_int_equal(cab_ring_stats(r).produced, 0);
        cab_ring_free(r);
    }
}

/* cab_push on an NWAY/FFWD ring goes through the redirect word to the transport's push. */
static void test_cab_push_generic_on_other_transports(void **state) {
    (void)state;
    for (int t = CAB_TRANSPORT_NWAY; t <= CAB_TRANSPORT_FFWD; t++) {
        CabConfig c = cfg_of((CabTransport)t, CAB_MODE_EXHAUSTIVE, 16 << 10, 4 << 10);
        CabProducer p;
        CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
        Seq s = {1, 0};
        for (uint64_t i = 1; i <= 1000; i++) {
            if (i % 2) cab_push(&p, i);
            else cab_push_sampling(&p, i); /* also routed out of line, not a sampling store */
        }
        cab_close(&p);
        while (!cab_ring_done(r)) cab_consume(r, seq_consume, &s, 0);
        assert_int_equal(s.next, 1001);
        assert_int_equal(s.bad, 0);
        cab_ring_free(r);
    }
}

/* Flush with the producer's cursor at and around every chunk boundary, over three laps: on
 * a chunk's first and last slot, on the end-of-ring sentinel (position = a whole number of
 * laps, before the wrap) and just after the wrap. After each flush the consumer must get
 * exactly everything pushed so far, and the window invariant must hold. Rings of 3, 4, 5
 * and 7 chunks of the minimum 4 KiB (FFWD: 4 and 8). */
static void run_boundaries(CabTransport t, size_t nch) {
    const size_t chunk = 4096;
    const uint64_t cs = chunk / 8;
    CabConfig c = cfg_of(t, CAB_MODE_EXHAUSTIVE, nch * chunk, chunk);
    CabProducer p;
    CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
    assert_non_null(r);
    Seq s = {1, 0};
    uint64_t pos = 0;
    for (uint64_t k = 1; k <= 3 * nch + 1; k++)
        for (int d = -1; d <= 1; d++) {
            uint64_t target = k * cs + (uint64_t)(int64_t)d;
            while (pos < target) push_any(&p, t, ++pos);
            assert_int_equal(cab_producer_count(&p), pos);
            if (t == CAB_TRANSPORT_CAB) {
                /* Without a flush, the consumer gets whole chunks whose guard was written:
                 * never the chunk the producer is in, nor the one before it. */
                cab_consume(r, seq_consume, &s, 0);
                assert_true(s.next - 1 <= pos);
                assert_true(pos - (s.next - 1) <= 2 * cs);
                const char *bad = cab_ring_check(r, &p);
                if (bad) fail_msg("%s", bad);
            }
            cab_flush(&p);
            cab_consume(r, seq_consume, &s, 0);
            if (s.next != pos + 1)
                fail_msg("transport %d, %zu chunks, flush at %llu: consumer got %llu", (int)t,
                         nch, (unsigned long long)pos, (unsigned long long)s.next - 1);
            assert_int_equal(cab_consume(r, seq_consume, &s, 0), 0); /* nothing twice */
            if (t == CAB_TRANSPORT_CAB) {
                const char *bad = cab_ring_check(r, &p);
                if (bad) fail_msg("%s", bad);
                /* On the sentinel the cursor has not wrapped yet; the next push wraps. */
                if (pos % (nch * cs) == 0) assert_ptr_equal(p.cur, r->slots + nch * cs);
            }
        }
    cab_close(&p);
    while (!cab_ring_done(r)) cab_consume(r, seq_consume, &s, 0);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.next, pos + 1);
    CabStats st = cab_ring_stats(r);
    assert_int_equal(st.produced, pos);
    assert_int_equal(st.consumed, pos);
    assert_int_equal(st.blocks, 0);
    cab_ring_free(r);
}

static void test_cab_flush_at_chunk_boundaries(void **state) {
    (void)state;
    const size_t counts[] = {3, 4, 5, 7};
    for (size_t i = 0; i < 4; i++) {
        run_boundaries(CAB_TRANSPORT_CAB, counts[i]);
        run_boundaries(CAB_TRANSPORT_NWAY, counts[i]);
    }
    run_boundaries(CAB_TRANSPORT_FFWD, 4);
    run_boundaries(CAB_TRANSPORT_FFWD, 8);
}

/* The resume distance R (cab_ring.c, "Resume distance") against what a consumer can free.
 * For every ring of 3 to 9 chunks and every offset of the blocked slot within its chunk:
 * fill the ring exactly (the producer's next slot is the consumer's), let the consumer take
 * everything it can (no flush), then look at the slot the blocked producer polls. With our
 * R it is CLEAR, so the producer resumes; with the paper's fixed R = 2 it stays an event on
 * rings of 3 and 4 chunks: a deadlock. */
static void test_cab_resume_distance_reachable(void **state) {
    (void)state;
    const size_t chunk = 4096, cs = chunk / 8;
    for (size_t nch = 3; nch <= 9; nch++) {
        bool paper_deadlocks = false;
        const size_t offs[] = {0, 1, cs / 2, cs - 1, cs, 2 * cs + 3, (nch - 1) * cs + cs - 1};
        for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++) {
            size_t off = offs[oi] % (nch * cs);
            CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_EXHAUSTIVE, nch * chunk, chunk);
            CabProducer p;
            CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
            Seq s = {1, 0};
            uint64_t ev = 1;
            for (size_t i = 0; i < off; i++) cab_push(&p, ev++);
            cab_flush(&p);
            cab_consume(r, seq_consume, &s, 0); /* consumer at [off] */
            for (size_t i = 0; i < nch * cs; i++) cab_push(&p, ev++); /* full, no block */
            assert_int_equal(r->blocks_live, 0);
            cab_consume(r, seq_consume, &s, 0); /* everything the guard rule allows */
            assert_int_equal(s.bad, 0);
            size_t k = off / cs;
            uint64_t *ours = r->resume == 0 ? r->slots + off
                                            : r->slots + ((k + r->resume) % nch) * cs;
            uint64_t *paper = r->slots + ((k + 2) % nch) * cs;
            if (*ours != CAB_CLEAR)
                fail_msg("%zu chunks, blocked at slot %zu: the poll slot (R = %u) is never freed",
                         nch, off, r->resume);
            if (*paper != CAB_CLEAR) paper_deadlocks = true;
            /* And the producer's next slot is free at once: no wait at all. */
            cab_push(&p, ev++);
            assert_int_equal(r->blocks_live, 0);
            cab_ring_free(r);
        }
        assert_int_equal(paper_deadlocks, nch <= 4);
    }
}

/* ---------------------------------------------------------------------- */
/* Blocking                                                                */
/* ---------------------------------------------------------------------- */

/* The block hook consumes what is ready (once), as a consumer thread would while the
 * producer waits. If the resume distance were beyond what the consumer can free (the
 * paper's two chunks with a 3- or 4-chunk ring), the producer would wait forever here. */
typedef struct HookCtx {
    CabRing *r;
    Seq seq;
    int begins, ends, waits;
} HookCtx;

static void hook_begin(void *ctx) {
    HookCtx *h = ctx;
    h->begins++;
    cab_consume(h->r, seq_consume, &h->seq, 0);
}
static void hook_end(void *ctx) { ((HookCtx *)ctx)->ends++; }
/* The runtime's block_wait runs the wait as a blocking region; here it checks that it comes
 * between the other two, once, and runs it. */
static void hook_wait(void *ctx, void (*wait)(void *arg), void *arg) {
    HookCtx *h = ctx;
    h->waits++;
    assert_int_equal(h->begins, h->ends + 1);
    wait(arg);
    assert_int_equal(h->begins, h->ends + 1);
}

static void run_blocking(CabTransport t, size_t ring, size_t chunk, bool with_wait) {
    CabConfig c = cfg_of(t, CAB_MODE_EXHAUSTIVE, ring, chunk);
    HookCtx h = {.seq = {1, 0}};
    CabBlockHooks hooks = {hook_begin, hook_end, &h, with_wait ? hook_wait : NULL};
    CabProducer p;
    CabRing *r = cab_ring_new(&c, &hooks, &p, NULL);
    assert_non_null(r);
    h.r = r;
    const uint64_t total = 7 * ring / 8 + 3; /* several laps, nobody consumes but the hook */
    for (uint64_t i = 1; i <= total; i++) push_any(&p, t, i);
    assert_true(h.begins > 0);
    assert_int_equal(h.begins, h.ends);
    assert_int_equal(h.waits, with_wait ? h.begins : 0);
    cab_close(&p);
    while (!cab_ring_done(r)) cab_consume(r, seq_consume, &h.seq, 0);
    assert_int_equal(h.seq.bad, 0);
    assert_int_equal(h.seq.next, total + 1);
    CabStats st = cab_ring_stats(r);
    assert_int_equal(st.produced, total);
    assert_int_equal(st.consumed, total);
    assert_int_equal(st.blocks, (uint64_t)h.begins); /* the spin never succeeds alone */
    assert_int_equal(st.hooked_blocks, st.blocks);
    assert_true(st.blocked_ns > 0);
    cab_ring_free(r);
}

static void test_cab_push_blocks_calls_hooks(void **state) {
    (void)state;
    for (int t = CAB_TRANSPORT_CAB; t <= CAB_TRANSPORT_FFWD; t++) {
        for (int w = 0; w <= 1; w++) {
            run_blocking((CabTransport)t, 16 << 10, 4 << 10, w);
            run_blocking((CabTransport)t, 64 << 10, 4 << 10, w);
        }
    }
}

/* The resume distance is min(2, chunks - 3): the largest the consumer can always free. With
 * the paper's fixed 2, the 3- and 4-chunk rings of run_blocking would wait forever (the
 * hook frees chunks k .. k+C-3 only); the test would then hit its ctest timeout. */
static void test_cab_push_smallest_rings(void **state) {
    (void)state;
    const unsigned expect[] = {0, 0, 0, 0, 1, 2, 2, 2, 2};
    for (size_t nch = 3; nch <= 8; nch++) {
        CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_EXHAUSTIVE, nch * 4096, 4096);
        CabProducer p;
        CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
        assert_non_null(r);
        assert_int_equal(r->resume, expect[nch]);
        cab_ring_free(r);
        run_blocking(CAB_TRANSPORT_CAB, nch * 4096, 4096, false);
        if (nch != 4 && nch != 8) run_blocking(CAB_TRANSPORT_NWAY, nch * 4096, 4096, false);
    }
}

/* ---------------------------------------------------------------------- */
/* Sampling                                                                */
/* ---------------------------------------------------------------------- */

typedef struct Burst {
    uint64_t n, bad;
    size_t chunk_slots, burst_slots;
} Burst;

/* Every delivered run of events must be one burst or part of one: consecutive events (they
 * are numbered from 1 in push order), at most burst_slots of them, inside one chunk (the
 * bursts' phase in a chunk is random). */
static void burst_consume(void *ctx, const uint64_t *ev, size_t n) {
    Burst *b = ctx;
    if (n > b->burst_slots) b->bad++;
    for (size_t i = 1; i < n; i++)
        if (ev[i] != ev[i - 1] + 1 || (ev[i] - 1) / b->chunk_slots != (ev[0] - 1) / b->chunk_slots) b->bad++;
    b->n += n;
}

/* Consumer keeping up (one chunk pushed, then a consume): at rate 1 every event is read, in
 * order (sampling at 100% equals exhaustive); below, bursts are read, about the rate's
 * fraction of the events (51200 events in 6400 bursts: 4 standard deviations at rate 0.1 are
 * within 12% of the expected count), and everything is either consumed or skipped. */
static void test_cab_sampling_counts_match_rate(void **state) {
    (void)state;
    const double rates[] = {1.0, 0.5, 0.25, 0.1};
    for (size_t k = 0; k < 4; k++) {
        CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_SAMPLING, 32 << 10, 4 << 10);
        c.sample_rate = rates[k];
        CabProducer p;
        CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
        const uint64_t cs = 512, chunks = 100;
        Burst b = {0, 0, cs, 8};
        uint64_t ev = 1;
        for (uint64_t i = 0; i < chunks; i++) {
            for (uint64_t j = 0; j < cs; j++) cab_push_sampling(&p, ev++);
            cab_consume(r, burst_consume, &b, 0);
        }
        cab_close(&p);
        while (!cab_ring_done(r)) cab_consume(r, burst_consume, &b, 0);
        CabStats st = cab_ring_stats(r);
        double expect = rates[k] * (double)(chunks * cs);
        assert_int_equal(st.produced, chunks * cs);
        assert_int_equal(st.chunks, chunks);
        assert_int_equal(b.n, st.consumed);
        assert_int_equal(b.bad, 0);
        assert_true((double)st.consumed >= 0.88 * expect && (double)st.consumed <= 1.12 * expect);
        if (rates[k] == 1.0) assert_int_equal(st.consumed, chunks * cs);
        assert_int_equal(st.skipped, chunks * cs - st.consumed);
        assert_int_equal(st.lost, 0);
        assert_int_equal(st.blocks, 0);
        cab_ring_free(r);
    }
}

/* Nobody consumes while the producer laps the ring ten times: it never blocks, and the
 * counts still add up. */
static void test_cab_sampling_never_blocks(void **state) {
    (void)state;
    CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_SAMPLING, 16 << 10, 4 << 10);
    HookCtx h = {.seq = {1, 0}};
    CabBlockHooks hooks = {hook_begin, hook_end, &h, NULL};
    CabProducer p;
    CabRing *r = cab_ring_new(&c, &hooks, &p, NULL);
    h.r = r;
    const uint64_t total = 10 * 2048 + 100;
    for (uint64_t i = 1; i <= total; i++) {
        if (i % 3) cab_push_sampling(&p, i);
        else cab_push(&p, i); /* the exhaustive entry on a sampling ring never blocks either */
    }
    assert_int_equal(h.begins, 0);
    cab_close(&p);
    Burst b = {0, 0, 512, 8};
    assert_int_equal(cab_ring_stats(r).hooked_blocks, 0);
    while (!cab_ring_done(r)) cab_consume(r, burst_consume, &b, 0);
    CabStats st = cab_ring_stats(r);
    assert_int_equal(st.produced, total);
    assert_int_equal(st.blocks, 0);
    assert_int_equal(st.consumed + st.skipped + st.lost, total);
    assert_true(st.lost >= total - 2048); /* at most one ring's worth survives */
    assert_true(st.consumed > 0);
    assert_int_equal(b.n, st.consumed);
    cab_ring_free(r);
}

/* cab_has_room: the test cab_reserve waits on, without the wait. A fresh ring has room up to
 * the ring less two chunks; a push that would wrap onto slots written in this lap and not
 * yet consumed finds none, and finds it again once the consumer has cleared them. */
static void test_cab_has_room_follows_the_consumer(void **state) {
    (void)state;
    const size_t ring = 64 << 10, chunk = 4 << 10, nslots = ring / 8;
    CabConfig c = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_EXHAUSTIVE, ring, chunk);
    CabProducer p;
    CabRing *r = cab_ring_new(&c, NULL, &p, NULL);
    assert_non_null(r);
    assert_true(cab_has_room(&p, 1));
    assert_true(cab_has_room(&p, nslots - 2 * chunk / 8));
    assert_true(cab_has_room(&p, 10 * nslots)); /* clamped */
    Seq s = {1, 0};
    uint64_t next = 1;
    while (next <= nslots - 100) cab_push(&p, next++);
    assert_true(cab_has_room(&p, 100));   /* the slots before the end were never written */
    assert_false(cab_has_room(&p, 200));  /* wraps onto this lap's first slots, unread */
    cab_consume(r, seq_consume, &s, 0);   /* every chunk but the one the producer is in */
    assert_true(cab_has_room(&p, 200));
    assert_int_equal(s.bad, 0);
    cab_close(&p);
    while (!cab_ring_done(r)) cab_consume(r, seq_consume, &s, 0);
    assert_int_equal(s.next, next);
    cab_ring_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cab_config_check_errors),
        cmocka_unit_test(test_cab_config_default_chunk_from_l1d),
        cmocka_unit_test(test_cab_idle_sleep_from_share),
        cmocka_unit_test(test_cab_ring_new_layout),
        cmocka_unit_test(test_cab_consume_in_order_smallest_rings),
        cmocka_unit_test(test_cab_consume_in_order_default_ring),
        cmocka_unit_test(test_cab_flush_partial_chunk),
        cmocka_unit_test(test_cab_flush_at_chunk_boundaries),
        cmocka_unit_test(test_cab_resume_distance_reachable),
        cmocka_unit_test(test_cab_close_empty_ring),
        cmocka_unit_test(test_cab_push_generic_on_other_transports),
        cmocka_unit_test(test_cab_push_blocks_calls_hooks),
        cmocka_unit_test(test_cab_push_smallest_rings),
        cmocka_unit_test(test_cab_sampling_counts_match_rate),
        cmocka_unit_test(test_cab_sampling_never_blocks),
        cmocka_unit_test(test_cab_has_room_follows_the_consumer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
