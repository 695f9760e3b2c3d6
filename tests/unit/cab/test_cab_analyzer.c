/* test_cab_analyzer.c: analyzer threads (cab_analyzer.c) and the topology (cab_topology.c):
 * several producers, each with its ring, served by a smaller pool; residues of closed rings
 * are analysed; shutdown drains everything and joins; the analyzer's idle time reaches the
 * ring's stats; the phase observer hears alternating idle and busy phases. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cab_api.h"

#define NPROD 5

typedef struct Stream {
    CabTransport transport;
    CabProducer prod;
    CabRing *ring;
    uint64_t id, total;
    /* written by the analyzer thread, read after shutdown (joined: ordered) */
    uint64_t next, bad, seen;
    CabStats final;
    int done_calls;
} Stream;

static void consume(void *ctx, const uint64_t *ev, size_t n) {
    Stream *s = ctx;
    for (size_t i = 0; i < n; i++) {
        if (ev[i] != (s->id << 40 | s->next)) s->bad++;
        s->next = (ev[i] & ((1ull << 40) - 1)) + 1;
    }
    s->seen += n;
}

static void done(void *ctx, const CabStats *st) {
    Stream *s = ctx;
    s->final = *st;
    s->done_calls++;
}

static void *producer_main(void *arg) {
    Stream *s = arg;
    for (uint64_t i = 1; i <= s->total; i++) cab_push(&s->prod, s->id << 40 | i);
    cab_close(&s->prod);
    return NULL;
}

/* Stream [i] of a test: id i + 1, [total] events, its ring on [transport] with 4 KiB chunks. */
static void open_stream(Stream *s, int i, uint64_t total, CabTransport transport, size_t ring_bytes) {
    CabConfig c;
    cab_config_default(&c);
    c.transport = transport;
    c.ring_bytes = ring_bytes;
    c.chunk_bytes = 4096;
    s->id = (uint64_t)i + 1;
    s->next = 1;
    s->total = total;
    const char *err = NULL;
    s->ring = cab_ring_new(&c, NULL, &s->prod, &err);
    if (!s->ring) fail_msg("%s", err);
}

/* After the shutdown: every stream done once, every event seen once and in order. */
static void check_streams(const Stream *s, int n) {
    for (int i = 0; i < n; i++) {
        assert_int_equal(s[i].done_calls, 1);
        assert_int_equal(s[i].bad, 0);
        assert_int_equal(s[i].seen, s[i].total);
        assert_int_equal(s[i].final.produced, s[i].total);
        assert_int_equal(s[i].final.consumed, s[i].total);
    }
}

static void test_cab_analyzer_serves_many_rings(void **state) {
    (void)state;
    const char *err = NULL;
    CabAnalyzerPool *pool = cab_analyzer_start(2, NULL, &err);
    assert_non_null(pool);
    Stream s[NPROD];
    pthread_t th[NPROD];
    memset(s, 0, sizeof s);
    for (int i = 0; i < NPROD; i++) {
        CabTransport t = (CabTransport)(i % 3);
        open_stream(&s[i], i, i == NPROD - 1 ? 5 : 300000 + (uint64_t)i * 1000, /* the last: residue only */
                    t, t == CAB_TRANSPORT_FFWD ? 16 * 4096 : (i < 3 ? 3 + (size_t)i : 64) * 4096);
        CabConsumer cons = {.consume = consume, .done = done, .ctx = &s[i]};
        int which = cab_analyzer_register(pool, s[i].ring, &cons, -1);
        assert_true(which == 0 || which == 1);
        assert_int_equal(pthread_create(&th[i], NULL, producer_main, &s[i]), 0);
    }
    for (int i = 0; i < NPROD; i++) pthread_join(th[i], NULL);
    cab_analyzer_shutdown(pool);
    check_streams(s, NPROD);
}

/* Faults (cab_analyzer_set_faults): analyzer 0 stalls once, or dies after 1 or 7 chunks, in
 * pools of one (a spare thread takes its rings) and two analyzers (the other one does); a ring
 * registered after the death goes to a live analyzer. Every event is consumed once, in order,
 * and every ring is done once. */
static void test_cab_analyzer_faults_lose_nothing(void **state) {
    (void)state;
    for (int nthreads = 1; nthreads <= 2; nthreads++)
        for (int k = 0; k < 3; k++) {
            CabAnalyzerPool *pool = cab_analyzer_start(nthreads, NULL, NULL);
            assert_non_null(pool);
            CabAnalyzerFaults f = {k == 0 ? 50 : 0, k == 1 ? 1 : k == 2 ? 7 : 0};
            cab_analyzer_set_faults(pool, &f);
            enum { N = 4 };
            Stream s[N];
            pthread_t th[N];
            memset(s, 0, sizeof s);
            for (int i = 0; i < N; i++) {
                open_stream(&s[i], i, 100000, CAB_TRANSPORT_CAB, 4 * 4096);
                if (i == N - 1) /* the last comes once the others have run a while */
                    for (int j = 0; j < N - 1; j++) pthread_join(th[j], NULL);
                CabConsumer cons = {.consume = consume, .done = done, .ctx = &s[i]};
                cab_analyzer_register(pool, s[i].ring, &cons, i == N - 1 ? 0 : -1);
                assert_int_equal(pthread_create(&th[i], NULL, producer_main, &s[i]), 0);
            }
            pthread_join(th[N - 1], NULL);
            cab_analyzer_shutdown(pool);
            check_streams(s, N);
        }
}

/* A consume function slower than the producers: about 2 us per batch. */
static void consume_slowly(void *ctx, const uint64_t *ev, size_t n) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000);
    consume(ctx, ev, n);
}

/* CabConfig.full (cab_ring.c, "Full ring"): four producers on small rings of each transport,
 * one analyzer slower than they are. With self and adaptive the consumer side changes hands
 * between the analyzer and the producers: every event is still analysed once and in order
 * (the consume function checks the sequence, on whichever thread runs it), the ring's
 * counters add up, and with self the producers did analyse chunks themselves. Under
 * ThreadSanitizer (the _tsan twin) this also checks the hand-over's memory ordering. */
static void test_cab_analyzer_full_ring_policies_lose_nothing(void **state) {
    (void)state;
    for (int full = CAB_FULL_BLOCK; full <= CAB_FULL_ADAPTIVE; full++)
        for (int t = CAB_TRANSPORT_CAB; t <= CAB_TRANSPORT_FFWD; t++) {
            CabAnalyzerPool *pool = cab_analyzer_start(1, NULL, NULL);
            assert_non_null(pool);
            enum { N = 4 };
            Stream s[N];
            pthread_t th[N];
            memset(s, 0, sizeof s);
            for (int i = 0; i < N; i++) {
                CabConfig c;
                cab_config_default(&c);
                c.transport = (CabTransport)t;
                c.ring_bytes = (t == CAB_TRANSPORT_FFWD ? 4 : 3 + (size_t)i) * 4096;
                c.chunk_bytes = 4096;
                c.full = (CabFull)full;
                s[i] = (Stream){.id = (uint64_t)i + 1, .next = 1, .total = 40000};
                const char *err = NULL;
                s[i].ring = cab_ring_new(&c, NULL, &s[i].prod, &err);
                if (!s[i].ring) fail_msg("%s", err);
                CabConsumer cons = {.consume = consume_slowly, .done = done, .ctx = &s[i]};
                cab_analyzer_register(pool, s[i].ring, &cons, 0);
                assert_int_equal(pthread_create(&th[i], NULL, producer_main, &s[i]), 0);
            }
            for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
            cab_analyzer_shutdown(pool);
            check_streams(s, N);
            uint64_t self = 0;
            for (int i = 0; i < N; i++) {
                assert_true(s[i].final.self_chunks <= s[i].final.chunks);
                self += s[i].final.self_chunks;
            }
            if (full == CAB_FULL_BLOCK) assert_int_equal(self, 0);
            if (full == CAB_FULL_SELF) assert_true(self > 0);
            print_message("full %d transport %d: %llu chunks analysed by the producers\n", full, t,
                          (unsigned long long)self);
        }
}

/* Sharded analysis (cab_analyzer.c, "Shards"): per stream and shard, the events seen in order
 * and those the shard owns (event % nshards == shard). Each shard's fields are written by
 * one analyzer thread only and read after the shutdown. */
typedef struct ShardedStream {
    Stream s;
    unsigned nshards;
    uint64_t next[CAB_MAX_SHARDS], bad[CAB_MAX_SHARDS], seen[CAB_MAX_SHARDS], owned[CAB_MAX_SHARDS];
} ShardedStream;

static void consume_shard(void *ctx, unsigned shard, const uint64_t *ev, size_t n) {
    ShardedStream *ss = ctx;
    for (size_t i = 0; i < n; i++) {
        uint64_t seq = ev[i] & ((1ull << 40) - 1);
        if (ev[i] != (ss->s.id << 40 | ss->next[shard])) ss->bad[shard]++;
        ss->next[shard] = seq + 1;
        ss->owned[shard] += seq % ss->nshards == shard;
    }
    ss->seen[shard] += n;
}

/* Streams sharded 2, 3 and 4 ways on pools of 4 analyzers, on every transport, the rings
 * small so that the owners wait on full shard queues and the producers on full rings: every
 * shard sees every event once and in order, the shards' own items add up to the stream, the
 * ring's counters and the per-shard chunk counts agree. A consumer asking for more shards
 * than threads is refused. */
static void test_cab_analyzer_shards_see_everything_in_order(void **state) {
    (void)state;
    CabAnalyzerPool *pool = cab_analyzer_start(4, NULL, NULL);
    assert_non_null(pool);
    enum { N = 3 };
    ShardedStream ss[N];
    pthread_t th[N];
    memset(ss, 0, sizeof ss);
    for (int i = 0; i < N; i++) {
        CabTransport t = (CabTransport)i;
        ss[i].nshards = 2 + (unsigned)i;
        for (unsigned j = 0; j < CAB_MAX_SHARDS; j++) ss[i].next[j] = 1;
        CabConfig c;
        cab_config_default(&c);
        c.transport = t;
        c.ring_bytes = 4 * 4096;
        c.chunk_bytes = 4096;
        ss[i].s = (Stream){.id = (uint64_t)i + 1, .next = 1, .total = 300000};
        ss[i].s.ring = cab_ring_new(&c, NULL, &ss[i].s.prod, NULL);
        assert_non_null(ss[i].s.ring);
        CabConsumer cons = {.consume = consume, .done = done, .ctx = &ss[i], .consume_shard = consume_shard,
                            .nshards = ss[i].nshards};
        assert_true(cab_analyzer_register(pool, ss[i].s.ring, &cons, -1) >= 0);
        assert_int_equal(pthread_create(&th[i], NULL, producer_main, &ss[i].s), 0);
    }
    CabConsumer too_many = {.consume = consume, .ctx = &ss[0], .consume_shard = consume_shard, .nshards = 5};
    CabProducer p;
    CabRing *r = cab_ring_new(NULL, NULL, &p, NULL);
    assert_int_equal(cab_analyzer_register(pool, r, &too_many, -1), -1);
    cab_ring_free(r);
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    cab_analyzer_shutdown(pool);
    for (int i = 0; i < N; i++) {
        const ShardedStream *x = &ss[i];
        assert_int_equal(x->s.done_calls, 1);
        assert_int_equal(x->s.seen, 0); /* [consume] unused when sharded */
        assert_int_equal(x->s.final.produced, x->s.total);
        assert_int_equal(x->s.final.consumed, x->s.total);
        assert_int_equal(x->s.final.nshards, x->nshards);
        uint64_t owned = 0;
        for (unsigned j = 0; j < x->nshards; j++) {
            assert_int_equal(x->bad[j], 0);
            assert_int_equal(x->seen[j], x->s.total);
            assert_true(x->s.final.shard_chunks[j] == x->s.final.shard_chunks[0] && x->s.final.shard_chunks[0] > 0);
            owned += x->owned[j];
        }
        assert_int_equal(owned, x->s.total);
    }
}

/* Shutdown with nothing registered, and a ring closed before its analyzer even picked it up:
 * its residue is still analysed. */
static void test_cab_analyzer_shutdown_drains_closed_rings(void **state) {
    (void)state;
    CabAnalyzerPool *pool = cab_analyzer_start(1, NULL, NULL);
    cab_analyzer_shutdown(pool);
    pool = cab_analyzer_start(3, NULL, NULL);
    Stream s = {.id = 9, .next = 1, .total = 1234};
    CabConfig c = {.ring_bytes = 12 << 10, .chunk_bytes = 4 << 10};
    s.ring = cab_ring_new(&c, NULL, &s.prod, NULL);
    for (uint64_t i = 1; i <= s.total; i++) cab_push(&s.prod, s.id << 40 | i);
    cab_close(&s.prod);
    CabConsumer cons = {.consume = consume, .done = done, .ctx = &s};
    assert_int_equal(cab_analyzer_register(pool, s.ring, &cons, 2), 2);
    cab_analyzer_shutdown(pool);
    assert_int_equal(s.done_calls, 1);
    assert_int_equal(s.seen, 1234);
    assert_int_equal(s.bad, 0);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Set (release) by the phase observer when it hears the analyzer start; while
 * [wait_for_start], the late producer's 30 ms count from then: on a loaded machine a new
 * thread may start later than that (ASan at a load average of 8: the analyzer's first round
 * came after the first push, and no idle phase was 10 ms long). */
static int analyzer_started, wait_for_start;

static void *late_producer_main(void *arg) {
    Stream *s = arg;
    struct timespec nap = {0, 100 * 1000};
    while (wait_for_start && !__atomic_load_n(&analyzer_started, __ATOMIC_ACQUIRE)) nanosleep(&nap, NULL);
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL); /* the analyzer has nothing to do meanwhile */
    return producer_main(s);
}

/* One analyzer serving stream [id] (100,000 events) whose producer sleeps 30 ms before its
 * first push; returns after the pool's shutdown (the analyzer joined). */
static void run_late_producer(Stream *s, uint64_t id) {
    CabAnalyzerPool *pool = cab_analyzer_start(1, NULL, NULL);
    *s = (Stream){.id = id, .next = 1, .total = 100000};
    CabConfig c = {.ring_bytes = 64 << 10, .chunk_bytes = 4 << 10};
    s->ring = cab_ring_new(&c, NULL, &s->prod, NULL);
    CabConsumer cons = {.consume = consume, .done = done, .ctx = s};
    cab_analyzer_register(pool, s->ring, &cons, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, late_producer_main, s), 0);
    pthread_join(th, NULL);
    cab_analyzer_shutdown(pool);
}

/* CabStats.idle_ns: the analyzer's idle time while it served the ring, here at least most of
 * the 30 ms the producer slept before its first push, and never more than the ring's life. */
static void test_cab_analyzer_idle_time(void **state) {
    (void)state;
    Stream s;
    uint64_t t0 = now_ns();
    run_late_producer(&s, 3);
    uint64_t life = now_ns() - t0;
    assert_int_equal(s.done_calls, 1);
    assert_int_equal(s.seen, s.total);
    assert_int_equal(s.bad, 0);
    print_message("idle %.1f ms of %.1f ms\n", (double)s.final.idle_ns * 1e-6, (double)life * 1e-6);
    assert_true(s.final.idle_ns >= 10 * 1000 * 1000);
    assert_true(s.final.idle_ns <= life);
}

/* The phase observer (-Xtrace): written by the analyzer thread, read after shutdown (joined). */
#define MAX_PHASES 4096
typedef struct PhaseRec {
    int analyzer, busy;
    uint64_t t0, t1, chunks;
} PhaseRec;
static PhaseRec phases[MAX_PHASES];
static int nphases;

static void record_phase(int analyzer, int busy, uint64_t t0, uint64_t t1, uint64_t chunks) {
    if (nphases < MAX_PHASES) phases[nphases] = (PhaseRec){analyzer, busy, t0, t1, chunks};
    nphases++;
    if (busy == -1) __atomic_store_n(&analyzer_started, 1, __ATOMIC_RELEASE);
}

/* One analyzer, a producer that sleeps 30 ms before pushing: the observer hears the start
 * (busy -1), then phases that alternate from idle, each starting where the last ended, the
 * busy ones with chunks (all of the ring's), an idle one of most of the 30 ms. */
static void test_cab_analyzer_phase_observer(void **state) {
    (void)state;
    nphases = 0;
    analyzer_started = 0;
    wait_for_start = 1;
    cab_analyzer_set_phase_observer(record_phase);
    Stream s;
    run_late_producer(&s, 4);
    cab_analyzer_set_phase_observer(NULL);
    wait_for_start = 0;
    assert_int_equal(s.seen, s.total);
    assert_true(nphases >= 3 && nphases <= MAX_PHASES);
    assert_int_equal(phases[0].busy, -1);
    uint64_t chunks = 0, longest_idle = 0;
    for (int i = 1; i < nphases; i++) {
        assert_int_equal(phases[i].analyzer, 0);
        assert_int_equal(phases[i].busy, (i - 1) % 2); /* idle, busy, idle, ... */
        assert_true(phases[i].t1 >= phases[i].t0);
        if (i > 1) assert_true(phases[i].t0 == phases[i - 1].t1);
        if (phases[i].busy) {
            assert_true(phases[i].chunks > 0);
            chunks += phases[i].chunks;
        } else if (phases[i].t1 - phases[i].t0 > longest_idle) {
            longest_idle = phases[i].t1 - phases[i].t0;
        }
    }
    assert_true(chunks >= s.final.chunks);
    assert_true(longest_idle >= 10 * 1000 * 1000);
}

/* A ring of a low producer share (-Xprofile.always's 0.2%): through 40 ms with nothing to
 * read, the idle analyzer's sleeps double up to 4 ms (cab_analyzer.c, "Idle sleeps"), so it
 * wakes at most 12 times on the way up (1 us .. 2 ms), then once per 4 ms, plus once for the
 * registration, the close and the shutdown. At the 50 us of a share of 1 it sleeps hundreds
 * of times on a quiet machine (printed, not asserted). The close ends the sleep: the residue
 * is drained. */
static void test_cab_analyzer_idle_sleeps_follow_the_share(void **state) {
    (void)state;
    for (int low = 1; low >= 0; low--) {
        CabAnalyzerPool *pool = cab_analyzer_start(1, NULL, NULL);
        Stream s = {.id = 9, .next = 1, .total = 5};
        CabConfig c = {.producer_share = low ? 0.002 : 1}; /* the default 2 MiB ring: 4 ms */
        s.ring = cab_ring_new(&c, NULL, &s.prod, NULL);
        assert_non_null(s.ring);
        CabConsumer cons = {.consume = consume, .done = done, .ctx = &s};
        cab_analyzer_register(pool, s.ring, &cons, 0);
        uint64_t t0 = now_ns();
        struct timespec ts = {0, 40 * 1000 * 1000};
        nanosleep(&ts, NULL);
        producer_main(&s); /* 5 events, then the close */
        cab_analyzer_shutdown(pool);
        double ms = (double)(now_ns() - t0) * 1e-6;
        print_message("share %s: %llu sleeps in %.1f ms\n", low ? "0.002" : "1",
                      (unsigned long long)s.final.idle_sleeps, ms);
        assert_int_equal(s.done_calls, 1);
        assert_int_equal(s.seen, 5);
        assert_int_equal(s.bad, 0);
        /* An upper bound only: on a loaded machine the 64 pauses and 16 sched_yields before
         * the first sleep can take the whole 40 ms (TSan at a load average of 14: 0 sleeps
         * at a share of 1), but no sleep ends before its time unless woken. */
        if (low) assert_true(s.final.idle_sleeps <= 12 + (uint64_t)(ms / 4) + 3);
    }
}

static void test_cab_analyzer_start_rejects_zero(void **state) {
    (void)state;
    const char *err = NULL;
    assert_null(cab_analyzer_start(0, NULL, &err));
    assert_non_null(strstr(err, "at least one"));
}

/* cab_topology_load_core leaves the environment as it found it: no blacklist of its own
 * afterwards, and a user's kept. */
static void test_cab_topology_load_core_keeps_the_environment(void **state) {
    (void)state;
    unsetenv("HWLOC_PLUGINS_BLACKLIST");
    cab_topology_load_core();
    assert_null(getenv("HWLOC_PLUGINS_BLACKLIST"));
    setenv("HWLOC_PLUGINS_BLACKLIST", "mine", 1);
    cab_topology_load_core();
    assert_string_equal(getenv("HWLOC_PLUGINS_BLACKLIST"), "mine");
    unsetenv("HWLOC_PLUGINS_BLACKLIST");
    assert_true(cab_topology_current_cpu() >= 0);
}

static void test_cab_topology_basics(void **state) {
    (void)state;
    size_t l1 = cab_topology_l1d_bytes();
    size_t chunk = cab_topology_default_chunk();
    assert_true(chunk >= CAB_MIN_CHUNK_BYTES && (chunk & (chunk - 1)) == 0);
    if (l1) assert_true(chunk <= 4 * l1 || chunk == CAB_MIN_CHUNK_BYTES);
    int cpu = cab_topology_current_cpu();
    assert_true(cpu >= 0);
    int partner = cab_topology_pick_partner(cpu);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu > 1) assert_true(partner >= 0 && partner != cpu);
    /* Binding may be refused in a restricted container: only check it when it works. */
    if (cab_topology_bind_self(cpu) == 0) assert_int_equal(cab_topology_current_cpu(), cpu);
    assert_int_equal(cab_topology_pick_partner(-1), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cab_analyzer_serves_many_rings),
        cmocka_unit_test(test_cab_analyzer_shutdown_drains_closed_rings),
        cmocka_unit_test(test_cab_analyzer_faults_lose_nothing),
        cmocka_unit_test(test_cab_analyzer_full_ring_policies_lose_nothing),
        cmocka_unit_test(test_cab_analyzer_shards_see_everything_in_order),
        cmocka_unit_test(test_cab_analyzer_idle_time),
        cmocka_unit_test(test_cab_analyzer_phase_observer),
        cmocka_unit_test(test_cab_analyzer_idle_sleeps_follow_the_share),
        cmocka_unit_test(test_cab_analyzer_start_rejects_zero),
        cmocka_unit_test(test_cab_topology_load_core_keeps_the_environment),
        cmocka_unit_test(test_cab_topology_basics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
