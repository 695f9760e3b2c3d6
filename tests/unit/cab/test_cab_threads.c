/* test_cab_threads.c: producer and consumer on two threads, for each transport (CAB, N-way,
 * FastForward) and the sampling mode:
 *   - no loss, no duplication, no reordering over 10^8 events (10^6 under ThreadSanitizer),
 *     checked event by event and by checksums computed on both sides;
 *   - fuzz: random pauses and flushes on both sides, smallest and odd-sized rings;
 *   - flush: a partial chunk reaches the consumer with no further push, at and around every
 *     chunk boundary and the end of the ring;
 *   - blocking: a deliberately slow consumer on the smallest rings (3, 4, 5 and 7 chunks of
 *     4 KiB) makes the producer block many times; the block hooks are counted, come in pairs,
 *     run on the producer thread, and their time is inside the blocked time of the stats;
 *   - sampling: a producer with no consumer at all pushes many times the ring and returns.
 * A deadlock shows as the ctest timeout. The TSan twin (unit_cab_test_cab_threads_tsan) runs
 * the same tests with fewer events. Nothing here asserts a timing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cab_api.h"

#include <time.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
/* TSan is 10-50x slower; ASan (scripts/sanitize.sh address) 3-10x, and 10^8 events ran
 * past the test's 300 s under it */
#define FUZZ_EVENTS ((uint64_t)1 << 17)
#define CHECKSUM_EVENTS ((uint64_t)1000000)
#define SCALE 10                        /* divides the other counts */
#else
#define FUZZ_EVENTS ((uint64_t)1 << 21)
#define CHECKSUM_EVENTS ((uint64_t)100000000)
#define SCALE 1
#endif

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* A consumer loop's wait when nothing was ready: spin a little, then yield (the machine has
 * two cores shared with other work; a spinning consumer would starve the producer). */
static void consumer_wait(unsigned *idle) {
    if (++*idle < 64) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

typedef struct Fuzz {
    CabTransport transport;
    CabMode mode;
    CabProducer prod;
    CabRing *ring;
    uint64_t total;
    uint64_t seed;
    /* consumer side */
    uint64_t next, bad, seen;
    /* hook counts: only the producer thread touches them */
    uint64_t begins, ends;
} Fuzz;

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void pause_some(uint64_t *seed) {
    uint64_t r = xorshift(seed) % 64;
    if (r == 0) sched_yield();
    else for (volatile uint64_t i = 0; i < r * 8; i++) {}
}

static void hook_begin(void *ctx) { ((Fuzz *)ctx)->begins++; }
static void hook_end(void *ctx) { ((Fuzz *)ctx)->ends++; }

static void *producer_main(void *arg) {
    Fuzz *f = arg;
    uint64_t seed = f->seed;
    for (uint64_t i = 1; i <= f->total; i++) {
        if (f->mode == CAB_MODE_SAMPLING) cab_push_sampling(&f->prod, i);
        else if (f->transport == CAB_TRANSPORT_CAB) cab_push(&f->prod, i);
        else if (f->transport == CAB_TRANSPORT_NWAY) cab_nway_push(&f->prod, i);
        else cab_ffwd_push(&f->prod, i);
        uint64_t r = xorshift(&seed);
        if (r % 1024 == 0) pause_some(&seed);        /* random pauses */
        if (r % 65536 == 1) cab_flush(&f->prod);      /* random flushes */
    }
    cab_close(&f->prod);
    return NULL;
}

static void check_seq(void *ctx, const uint64_t *ev, size_t n) {
    Fuzz *f = ctx;
    for (size_t i = 0; i < n; i++) {
        if (ev[i] != f->next) f->bad++;
        f->next = ev[i] + 1;
    }
    f->seen += n;
}

static void check_range(void *ctx, const uint64_t *ev, size_t n) {
    Fuzz *f = ctx;
    for (size_t i = 0; i < n; i++)
        if (ev[i] < 1 || ev[i] > f->total) f->bad++;
    f->seen += n;
}

static CabStats run(CabTransport t, CabMode m, size_t ring, size_t chunk, uint64_t total,
                    Fuzz *f) {
    memset(f, 0, sizeof *f);
    CabConfig c;
    cab_config_default(&c);
    c.transport = t;
    c.mode = m;
    c.ring_bytes = ring;
    c.chunk_bytes = chunk;
    c.sample_rate = 0.5;
    CabBlockHooks hooks = {hook_begin, hook_end, f, NULL};
    f->transport = t;
    f->mode = m;
    f->total = total;
    f->seed = 0x9E3779B97F4A7C15ull ^ ring ^ (uint64_t)t;
    f->next = 1;
    const char *err = NULL;
    f->ring = cab_ring_new(&c, &hooks, &f->prod, &err);
    if (!f->ring) fail_msg("%s", err);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, producer_main, f), 0);
    uint64_t seed = 12345;
    while (!cab_ring_done(f->ring)) {
        size_t got = cab_consume(f->ring, m == CAB_MODE_SAMPLING ? check_range : check_seq, f,
                                 1 + xorshift(&seed) % 4);
        if (got == 0 || xorshift(&seed) % 16 == 0) pause_some(&seed); /* slow consumer: blocks */
    }
    pthread_join(th, NULL);
    CabStats st = cab_ring_stats(f->ring);
    cab_ring_free(f->ring);
    return st;
}

static void fuzz_exhaustive(CabTransport t, size_t ring, size_t chunk, uint64_t total) {
    Fuzz f;
    CabStats st = run(t, CAB_MODE_EXHAUSTIVE, ring, chunk, total, &f);
    assert_int_equal(st.hooked_blocks, f.begins);
    assert_true(st.hooked_blocks <= st.blocks);
    if (st.blocks) assert_true(st.blocked_ns > 0);
    if (f.bad || f.next != total + 1)
        fail_msg("transport %d ring %zu chunk %zu: %llu out of order, stopped at %llu of %llu",
                 (int)t, ring, chunk, (unsigned long long)f.bad, (unsigned long long)f.next - 1,
                 (unsigned long long)total);
    /* Informational: shows that the run exercised blocking and flushing. */
    print_message("transport %d, %zu chunks: %llu events, %llu blocks (%llu through the hooks), "
                  "%llu flushes\n", (int)t, ring / chunk, (unsigned long long)total,
                  (unsigned long long)st.blocks, (unsigned long long)f.begins,
                  (unsigned long long)st.flushes);
    assert_int_equal(st.produced, total);
    assert_int_equal(st.consumed, total);
    assert_int_equal(f.seen, total);
    assert_int_equal(st.lost, 0);
    assert_int_equal(f.begins, f.ends);
    assert_true(st.blocks >= f.begins);
}

static void test_cab_fuzz_cab_smallest_rings(void **state) {
    (void)state;
    const size_t counts[] = {3, 4, 5, 7};
    for (size_t i = 0; i < 4; i++)
        fuzz_exhaustive(CAB_TRANSPORT_CAB, counts[i] * 4096, 4096, FUZZ_EVENTS);
    fuzz_exhaustive(CAB_TRANSPORT_CAB, 3 * 8192, 8192, FUZZ_EVENTS); /* 3 chunks of 8 KiB */
}

static void test_cab_fuzz_cab_default_ring(void **state) {
    (void)state;
    fuzz_exhaustive(CAB_TRANSPORT_CAB, 2 << 20, 128 << 10, 4 * FUZZ_EVENTS);
}

static void test_cab_fuzz_nway(void **state) {
    (void)state;
    fuzz_exhaustive(CAB_TRANSPORT_NWAY, 3 * 4096, 4096, FUZZ_EVENTS);
    fuzz_exhaustive(CAB_TRANSPORT_NWAY, 4 * 4096, 4096, FUZZ_EVENTS);
    fuzz_exhaustive(CAB_TRANSPORT_NWAY, 7 * 4096, 4096, FUZZ_EVENTS);
    fuzz_exhaustive(CAB_TRANSPORT_NWAY, 2 << 20, 128 << 10, 4 * FUZZ_EVENTS);
}

static void test_cab_fuzz_ffwd(void **state) {
    (void)state;
    fuzz_exhaustive(CAB_TRANSPORT_FFWD, 4 * 4096, 4096, FUZZ_EVENTS);
    fuzz_exhaustive(CAB_TRANSPORT_FFWD, 2 << 20, 128 << 10, 4 * FUZZ_EVENTS);
}

/* Sampling under contention: never blocks, every analysed word is a real event, and the
 * three counts add up to what was produced. */
static void test_cab_fuzz_sampling(void **state) {
    (void)state;
    for (size_t nch = 3; nch <= 5; nch++) {
        Fuzz f;
        CabStats st = run(CAB_TRANSPORT_CAB, CAB_MODE_SAMPLING, nch * 4096, 4096, FUZZ_EVENTS, &f);
        assert_int_equal(f.bad, 0);
        assert_int_equal(f.begins, 0);
        assert_int_equal(st.blocks, 0);
        assert_int_equal(st.produced, FUZZ_EVENTS);
        assert_int_equal(st.consumed, f.seen);
        assert_int_equal(st.consumed + st.skipped + st.lost, FUZZ_EVENTS);
    }
}

/* ---------------------------------------------------------------------- */
/* 10^8 events with checksums                                              */
/* ---------------------------------------------------------------------- */

/* Event i (1-based) is i times an odd constant: a bijection of 64-bit words, so events use
 * all 64 bits and neighbours differ in every byte. Never CLEAR (i != 0 mod 2^64); MAGIC only
 * for i = 0x0e217c1e66c88cc3, far beyond the counts used here. */
#define MIX 0x9E3779B97F4A7C15ull
static inline uint64_t ev_of(uint64_t i) { return i * MIX; }

/* Order-independent checksums of a stream: count, sum, and sum of a second mixing of each
 * event (a plain sum misses compensating errors). Order is checked event by event. */
typedef struct Sum {
    uint64_t n, sum, mix;
} Sum;
static inline void sum_add(Sum *s, uint64_t v) {
    s->n++;
    s->sum += v;
    s->mix += (v ^ (v >> 29)) * 0xBF58476D1CE4E5B9ull;
}

typedef struct Check {
    CabTransport t;
    CabRing *ring;
    CabProducer prod;
    uint64_t total;
    Sum produced; /* producer thread; read after the join */
    /* consumer thread */
    Sum consumed;
    uint64_t next, bad, first_bad;
} Check;

static void *check_producer(void *arg) {
    Check *c = arg;
    CabProducer *p = &c->prod;
    Sum s = {0, 0, 0};
    const uint64_t n = c->total;
    uint64_t i = 1;
    switch (c->t) {
    case CAB_TRANSPORT_CAB: {
        /* The first half through cab_push (the interpreter's form), the rest through the
         * register form cab_push_r (the benchmark's and a JIT's). */
        for (; i <= n / 2; i++) {
            uint64_t v = ev_of(i);
            cab_push(p, v);
            sum_add(&s, v);
        }
        uint64_t *cur = p->cur;
        for (; i <= n; i++) {
            uint64_t v = ev_of(i);
            cur = cab_push_r(p, cur, v);
            sum_add(&s, v);
        }
        p->cur = cur;
        break;
    }
    case CAB_TRANSPORT_NWAY:
        for (; i <= n; i++) {
            uint64_t v = ev_of(i);
            cab_nway_push(p, v);
            sum_add(&s, v);
        }
        break;
    case CAB_TRANSPORT_FFWD:
        for (; i <= n; i++) {
            uint64_t v = ev_of(i);
            cab_ffwd_push(p, v);
            sum_add(&s, v);
        }
        break;
    }
    c->produced = s;
    cab_close(p);
    return NULL;
}

static void check_consume(void *ctx, const uint64_t *ev, size_t n) {
    Check *c = ctx;
    uint64_t next = c->next;
    Sum s = c->consumed;
    for (size_t k = 0; k < n; k++, next++) {
        uint64_t v = ev[k];
        if (v != ev_of(next) && c->bad++ == 0) c->first_bad = next;
        sum_add(&s, v);
    }
    c->consumed = s;
    c->next = next;
}

static void run_checksum(CabTransport t, size_t ring, size_t chunk, uint64_t total) {
    Check c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.total = total;
    c.next = 1;
    CabConfig cfg = cfg_of(t, CAB_MODE_EXHAUSTIVE, ring, chunk);
    const char *err = NULL;
    c.ring = cab_ring_new(&cfg, NULL, &c.prod, &err);
    if (!c.ring) fail_msg("%s", err);
    pthread_t th;
    uint64_t t0 = now_ns();
    assert_int_equal(pthread_create(&th, NULL, check_producer, &c), 0);
    unsigned idle = 0;
    while (!cab_ring_done(c.ring)) {
        if (cab_consume(c.ring, check_consume, &c, 0)) idle = 0;
        else consumer_wait(&idle);
    }
    pthread_join(th, NULL);
    double secs = (double)(now_ns() - t0) * 1e-9;
    CabStats st = cab_ring_stats(c.ring);
    cab_ring_free(c.ring);
    print_message("transport %d: %llu events in %.2f s (%.0f M/s), %llu blocks\n", (int)t,
                  (unsigned long long)total, secs, (double)total / secs * 1e-6,
                  (unsigned long long)st.blocks);
    if (c.bad)
        fail_msg("transport %d: %llu events differ, the first at index %llu", (int)t,
                 (unsigned long long)c.bad, (unsigned long long)c.first_bad);
    assert_int_equal(c.next, total + 1);
    assert_int_equal(c.produced.n, total);
    assert_int_equal(c.consumed.n, c.produced.n);
    assert_int_equal(c.consumed.sum, c.produced.sum);
    assert_int_equal(c.consumed.mix, c.produced.mix);
    assert_int_equal(st.produced, total);
    assert_int_equal(st.consumed, total);
    assert_int_equal(st.lost, 0);
    assert_int_equal(st.dropped, 0);
}

static void test_cab_checksum_1e8_cab(void **state) {
    (void)state;
    run_checksum(CAB_TRANSPORT_CAB, 2 << 20, 128 << 10, CHECKSUM_EVENTS);
}

static void test_cab_checksum_1e8_nway(void **state) {
    (void)state;
    run_checksum(CAB_TRANSPORT_NWAY, 2 << 20, 128 << 10, CHECKSUM_EVENTS);
}

static void test_cab_checksum_1e8_ffwd(void **state) {
    (void)state;
    run_checksum(CAB_TRANSPORT_FFWD, 2 << 20, 128 << 10, CHECKSUM_EVENTS);
}

/* The smallest ring (3 chunks of 4 KiB) and an odd one (7 chunks), a tenth of the events:
 * many more wraps and chunk hand-overs per event. */
static void test_cab_checksum_small_rings(void **state) {
    (void)state;
    run_checksum(CAB_TRANSPORT_CAB, 3 * 4096, 4096, CHECKSUM_EVENTS / 10);
    run_checksum(CAB_TRANSPORT_CAB, 7 * 4096, 4096, CHECKSUM_EVENTS / 10);
    run_checksum(CAB_TRANSPORT_NWAY, 3 * 4096, 4096, CHECKSUM_EVENTS / 10);
}

/* ---------------------------------------------------------------------- */
/* Flush: a partial chunk reaches the consumer with no further push        */
/* ---------------------------------------------------------------------- */

typedef struct Handshake {
    CabTransport t;
    CabRing *ring;
    CabProducer prod;
    uint64_t targets[128];
    size_t ntargets;
    uint64_t seen; /* written by the consumer (release), waited on by the producer */
    uint64_t next, bad;
} Handshake;

static void *handshake_producer(void *arg) {
    Handshake *h = arg;
    uint64_t pos = 0;
    for (size_t k = 0; k < h->ntargets; k++) {
        while (pos < h->targets[k]) {
            pos++;
            switch (h->t) {
            case CAB_TRANSPORT_CAB: cab_push(&h->prod, pos); break;
            case CAB_TRANSPORT_NWAY: cab_nway_push(&h->prod, pos); break;
            case CAB_TRANSPORT_FFWD: cab_ffwd_push(&h->prod, pos); break;
            }
        }
        cab_flush(&h->prod);
        /* No further push until the consumer has seen everything: the flush alone must
         * hand the partial chunk over, or this waits until the ctest timeout. */
        while (__atomic_load_n(&h->seen, __ATOMIC_ACQUIRE) < pos) sched_yield();
    }
    cab_close(&h->prod);
    return NULL;
}

static void handshake_consume(void *ctx, const uint64_t *ev, size_t n) {
    Handshake *h = ctx;
    for (size_t i = 0; i < n; i++) {
        if (ev[i] != h->next) h->bad++;
        h->next = ev[i] + 1;
    }
    __atomic_store_n(&h->seen, h->next - 1, __ATOMIC_RELEASE);
}

/* Flush at every chunk boundary, one before and one after, over two laps and a bit: the
 * producer's cursor on a chunk's first slot, its last, on the end-of-ring sentinel (before
 * the wrap) and just after the wrap. */
static void run_handshake(CabTransport t, size_t nch, size_t chunk) {
    Handshake h;
    memset(&h, 0, sizeof h);
    h.t = t;
    h.next = 1;
    const uint64_t cs = chunk / 8;
    h.targets[h.ntargets++] = 1;
    for (uint64_t k = 1; k <= 2 * nch + 2 && h.ntargets + 3 <= 128; k++)
        for (int d = -1; d <= 1; d++) h.targets[h.ntargets++] = k * cs + (uint64_t)(int64_t)d;
    CabConfig cfg = cfg_of(t, CAB_MODE_EXHAUSTIVE, nch * chunk, chunk);
    const char *err = NULL;
    h.ring = cab_ring_new(&cfg, NULL, &h.prod, &err);
    if (!h.ring) fail_msg("%s", err);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, handshake_producer, &h), 0);
    unsigned idle = 0;
    while (!cab_ring_done(h.ring)) {
        if (cab_consume(h.ring, handshake_consume, &h, 0)) idle = 0;
        else consumer_wait(&idle);
    }
    pthread_join(th, NULL);
    uint64_t last = h.targets[h.ntargets - 1];
    assert_int_equal(h.bad, 0);
    assert_int_equal(h.next, last + 1);
    CabStats st = cab_ring_stats(h.ring);
    assert_int_equal(st.produced, last);
    assert_int_equal(st.consumed, last);
    assert_int_equal(st.flushes, h.ntargets + 1);
    cab_ring_free(h.ring);
}

static void test_cab_flush_partial_chunk_two_threads(void **state) {
    (void)state;
    const size_t counts[] = {3, 4, 5, 7};
    for (size_t i = 0; i < 4; i++) {
        run_handshake(CAB_TRANSPORT_CAB, counts[i], 4096);
        run_handshake(CAB_TRANSPORT_NWAY, counts[i], 4096);
    }
    run_handshake(CAB_TRANSPORT_FFWD, 4, 4096);
    run_handshake(CAB_TRANSPORT_FFWD, 8, 4096);
    run_handshake(CAB_TRANSPORT_CAB, 16, 128 << 10); /* the default ring */
}

/* ---------------------------------------------------------------------- */
/* Blocking: slow consumer, smallest rings, hooks                          */
/* ---------------------------------------------------------------------- */

typedef struct Slow {
    CabTransport t;
    CabRing *ring;
    CabProducer prod;
    uint64_t total;
    pthread_t producer_self;
    uint32_t finished;  /* producer closed the ring (release/acquire) */
    uint32_t in_block;  /* 1 between block_begin and block_end (release/acquire) */
    /* producer thread only (the hooks run there); read after the join */
    uint64_t begins, ends, wrong_thread, nested, hook_ns, t_begin;
    /* consumer */
    uint64_t next, bad;
} Slow;

static void slow_begin(void *ctx) {
    Slow *s = ctx;
    if (!pthread_equal(pthread_self(), s->producer_self)) s->wrong_thread++;
    if (s->begins != s->ends) s->nested++;
    s->begins++;
    s->t_begin = now_ns();
    __atomic_store_n(&s->in_block, 1, __ATOMIC_RELEASE);
}

static void slow_end(void *ctx) {
    Slow *s = ctx;
    if (!pthread_equal(pthread_self(), s->producer_self)) s->wrong_thread++;
    __atomic_store_n(&s->in_block, 0, __ATOMIC_RELEASE);
    s->hook_ns += now_ns() - s->t_begin;
    s->ends++;
}

static void *slow_producer(void *arg) {
    Slow *s = arg;
    s->producer_self = pthread_self();
    for (uint64_t i = 1; i <= s->total; i++) {
        switch (s->t) {
        case CAB_TRANSPORT_CAB: cab_push(&s->prod, i); break;
        case CAB_TRANSPORT_NWAY: cab_nway_push(&s->prod, i); break;
        case CAB_TRANSPORT_FFWD: cab_ffwd_push(&s->prod, i); break;
        }
    }
    cab_close(&s->prod);
    __atomic_store_n(&s->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void slow_consume(void *ctx, const uint64_t *ev, size_t n) {
    Slow *s = ctx;
    for (size_t i = 0; i < n; i++) {
        if (ev[i] != s->next) s->bad++;
        s->next = ev[i] + 1;
    }
}

/* The consumer takes nothing until the producer is inside block_begin (so the producer's
 * spin never succeeds), then one chunk at a time with a 50 us nap after each, until the
 * producer resumes. So the producer blocks again and again: at least once per lap. With a
 * resume distance the consumer cannot reach (the paper's 2 chunks on a 3- or 4-chunk ring)
 * the producer would never resume and the test would hit its timeout. */
static void run_slow(CabTransport t, size_t nch, size_t chunk, uint64_t laps) {
    Slow s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.next = 1;
    const uint64_t nslots = nch * chunk / 8;
    s.total = laps * nslots + chunk / 16; /* ends mid-chunk: the residue needs the close */
    CabConfig cfg = cfg_of(t, CAB_MODE_EXHAUSTIVE, nch * chunk, chunk);
    CabBlockHooks hooks = {slow_begin, slow_end, &s, NULL};
    const char *err = NULL;
    s.ring = cab_ring_new(&cfg, &hooks, &s.prod, &err);
    if (!s.ring) fail_msg("%s", err);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, slow_producer, &s), 0);
    while (!cab_ring_done(s.ring)) {
        if (__atomic_load_n(&s.finished, __ATOMIC_ACQUIRE)) {
            cab_consume(s.ring, slow_consume, &s, 0); /* drain the residue */
        } else if (__atomic_load_n(&s.in_block, __ATOMIC_ACQUIRE)) {
            cab_consume(s.ring, slow_consume, &s, 1);
            sleep_us(50);
        } else {
            sched_yield();
        }
    }
    pthread_join(th, NULL);
    CabStats st = cab_ring_stats(s.ring);
    cab_ring_free(s.ring);
    print_message("transport %d, %zu chunks of %zu: %llu blocks, %llu hooked, blocked %.1f ms "
                  "(%.1f ms inside the hooks)\n", (int)t, nch, chunk,
                  (unsigned long long)st.blocks, (unsigned long long)st.hooked_blocks,
                  (double)st.blocked_ns * 1e-6, (double)s.hook_ns * 1e-6);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.next, s.total + 1);
    assert_int_equal(st.produced, s.total);
    assert_int_equal(st.consumed, s.total);
    assert_int_equal(s.wrong_thread, 0);
    assert_int_equal(s.nested, 0);
    assert_int_equal(s.begins, s.ends);
    assert_int_equal(st.hooked_blocks, s.begins);
    assert_true(st.hooked_blocks <= st.blocks);
    /* "Many times": at least once a lap, since a block frees at most a ring. Nearly all of
     * them go through the hooks (the consumer waits for block_begin); a chunk taken on a
     * stale reading of in_block may end the next wait within its spin, hence only half. */
    assert_true(st.blocks >= laps - 1);
    assert_true(st.hooked_blocks >= laps / 2);
    assert_true(st.blocked_ns >= s.hook_ns); /* measured around the whole wait */
}

static void test_cab_slow_consumer_smallest_rings(void **state) {
    (void)state;
    const size_t counts[] = {3, 4, 5, 7};
    const uint64_t laps = 12;
    for (size_t i = 0; i < 4; i++) {
        run_slow(CAB_TRANSPORT_CAB, counts[i], 4096, laps);
        run_slow(CAB_TRANSPORT_NWAY, counts[i], 4096, laps);
    }
    run_slow(CAB_TRANSPORT_FFWD, 4, 4096, laps);
    run_slow(CAB_TRANSPORT_FFWD, 8, 4096, laps);
}

/* ---------------------------------------------------------------------- */
/* Sampling with no consumer at all                                        */
/* ---------------------------------------------------------------------- */

typedef struct Lonely {
    CabProducer prod;
    uint64_t total;
    uint64_t hooks; /* producer thread only */
} Lonely;

static void lonely_hook(void *ctx) { ((Lonely *)ctx)->hooks++; }

static void *lonely_producer(void *arg) {
    Lonely *l = arg;
    for (uint64_t i = 1; i <= l->total; i++) {
        if (i & 1) {
            cab_push_sampling(&l->prod, i);
        } else {
            cab_push(&l->prod, i); /* the exhaustive entry on a sampling ring: never blocks */
        }
    }
    cab_close(&l->prod);
    return NULL;
}

/* Nobody ever consumes while the producer pushes [laps] times the ring: it must return
 * (a block would hang until the ctest timeout), never call the hooks, and the counts must
 * add up once an analyzer drains what is left. */
static void run_lonely(size_t nch, size_t chunk, uint64_t laps) {
    Lonely l;
    memset(&l, 0, sizeof l);
    l.total = laps * (nch * chunk / 8) + 3;
    CabConfig cfg = cfg_of(CAB_TRANSPORT_CAB, CAB_MODE_SAMPLING, nch * chunk, chunk);
    cfg.sample_rate = 0.25;
    CabBlockHooks hooks = {lonely_hook, lonely_hook, &l, NULL};
    const char *err = NULL;
    CabRing *r = cab_ring_new(&cfg, &hooks, &l.prod, &err);
    if (!r) fail_msg("%s", err);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, lonely_producer, &l), 0);
    pthread_join(th, NULL);
    assert_int_equal(l.hooks, 0);
    Fuzz f; /* only for check_range */
    memset(&f, 0, sizeof f);
    f.total = l.total;
    while (!cab_ring_done(r)) cab_consume(r, check_range, &f, 0);
    CabStats st = cab_ring_stats(r);
    cab_ring_free(r);
    assert_int_equal(f.bad, 0);
    assert_int_equal(st.produced, l.total);
    assert_int_equal(st.blocks, 0);
    assert_int_equal(st.hooked_blocks, 0);
    assert_int_equal(st.blocked_ns, 0);
    assert_int_equal(st.consumed + st.skipped + st.lost, l.total);
    assert_int_equal(st.dropped, st.skipped + st.lost);
    assert_true(st.lost >= l.total - nch * chunk / 8); /* at most one ring survives */
}

static void test_cab_sampling_no_consumer_never_blocks(void **state) {
    (void)state;
    run_lonely(3, 4096, 1000 / SCALE);
    run_lonely(5, 4096, 1000 / SCALE);
    run_lonely(7, 8192, 300 / SCALE);
    run_lonely(16, 128 << 10, 20 / SCALE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cab_fuzz_cab_smallest_rings),
        cmocka_unit_test(test_cab_fuzz_cab_default_ring),
        cmocka_unit_test(test_cab_fuzz_nway),
        cmocka_unit_test(test_cab_fuzz_ffwd),
        cmocka_unit_test(test_cab_fuzz_sampling),
        cmocka_unit_test(test_cab_checksum_1e8_cab),
        cmocka_unit_test(test_cab_checksum_1e8_nway),
        cmocka_unit_test(test_cab_checksum_1e8_ffwd),
        cmocka_unit_test(test_cab_checksum_small_rings),
        cmocka_unit_test(test_cab_flush_partial_chunk_two_threads),
        cmocka_unit_test(test_cab_slow_consumer_smallest_rings),
        cmocka_unit_test(test_cab_sampling_no_consumer_never_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
