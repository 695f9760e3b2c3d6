/* test_cab_threads.c: two-thread fuzz of sequence numbers under contention, for each
 * transport and for the smallest rings: the producer pushes 1..N with random pauses and
 * flushes, the consumer checks order and completeness. A deadlock shows as the ctest timeout.
 * Also run under ThreadSanitizer (cab/README.md). Nothing here asserts a timing. */
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

#if defined(__SANITIZE_THREAD__)
#define FUZZ_EVENTS ((uint64_t)1 << 17) /* TSan is ~10x slower */
#else
#define FUZZ_EVENTS ((uint64_t)1 << 21)
#endif

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
    CabBlockHooks hooks = {hook_begin, hook_end, f};
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
    for (size_t nch = 3; nch <= 5; nch++)
        fuzz_exhaustive(CAB_TRANSPORT_CAB, nch * 4096, 4096, FUZZ_EVENTS);
}

static void test_cab_fuzz_cab_default_ring(void **state) {
    (void)state;
    fuzz_exhaustive(CAB_TRANSPORT_CAB, 2 << 20, 128 << 10, 4 * FUZZ_EVENTS);
}

static void test_cab_fuzz_nway(void **state) {
    (void)state;
    fuzz_exhaustive(CAB_TRANSPORT_NWAY, 3 * 4096, 4096, FUZZ_EVENTS);
    fuzz_exhaustive(CAB_TRANSPORT_NWAY, 4 * 4096, 4096, FUZZ_EVENTS);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cab_fuzz_cab_smallest_rings),
        cmocka_unit_test(test_cab_fuzz_cab_default_ring),
        cmocka_unit_test(test_cab_fuzz_nway),
        cmocka_unit_test(test_cab_fuzz_ffwd),
        cmocka_unit_test(test_cab_fuzz_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
