/* test_cachesim.c: prof_cachesim on access patterns whose hits and misses are known by
 * construction, under FIFO and LRU, including back-invalidations of the inclusive L1 by L2
 * evictions; misses per function from EV_CALL/EV_RETURN, and per (function, line) from
 * EV_PC; configuration checks; merge; the text, JSON, annotate and callgrind reports.
 *
 * Most cases use a tiny hierarchy: L1 "256:2" (4 lines, 2 sets of 2 ways: set = line & 1)
 * and L2 "512:2" (8 lines, 4 sets of 2 ways: set = line & 3). Line l is at address 64*l. */
#include "prof_test.h"

#define L(l) ((uint64_t)(l) * 64)
#define M 1
#define F 2
#define G 3
#define H 4

static int defaults(void **state) {
    (void)state;
    const char *err = NULL;
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){32768, 4}, &(ProfCacheLevel){524288, 8}, 0, &err), 0);
    return 0;
}

static void *tiny(const char *policy) {
    const char *err = NULL;
    if (prof_cachesim_configure(&(ProfCacheLevel){256, 2}, &(ProfCacheLevel){512, 2}, strcmp(policy, "lru") == 0, &err) != 0)
        fail_msg("%s", err);
    void *st = prof_cachesim.open();
    assert_non_null(st);
    return st;
}

static char *json_of(void *st) { return report_str(&prof_cachesim, st, PROF_JSON, 1.0, NULL); }

/* Lines 0, 2, 0, 4, 0: all in L1 set 0 (2 ways); in L2 they fit (0 and 4 share set 0). */
static const uint64_t pattern1[] = {THREAD(1), LOAD(L(0)), LOAD(L(2) + 8), LOAD(L(0) + 63), STORE(L(4)), LOAD(L(0))};

static void test_cachesim_fifo(void **state) {
    (void)state;
    void *st = tiny("fifo");
    feed(&prof_cachesim, st, pattern1, NEV(pattern1), 2);
    char *js = json_of(st);
    assert_true(json_valid(js));
    assert_true(json_valid_python(js));
    /* 0 miss, 2 miss, 0 hit, 4 miss (evicts 0, the first in), 0 miss in L1 but hit in L2 */
    assert_true(contains(js, "\"policy\":\"fifo\",\"inclusive\":true,\"accesses\":5,\"loads\":4,\"stores\":1"));
    assert_true(contains(js, "\"l1\":{\"size\":256,\"ways\":2,\"sets\":2,\"hits\":1,\"misses\":4,\"miss_rate\":0.8,\"evictions\":2}"));
    assert_true(contains(js, "\"l2\":{\"size\":512,\"ways\":2,\"sets\":4,\"hits\":1,\"misses\":3,\"miss_rate\":0.75,\"evictions\":0}"));
    assert_true(contains(js, "\"back_invalidations\":0"));
    free(js);
    prof_cachesim.close(st);
}

static void test_cachesim_lru(void **state) {
    (void)state;
    void *st = tiny("lru");
    feed(&prof_cachesim, st, pattern1, NEV(pattern1), 1);
    char *js = json_of(st);
    /* 0 miss, 2 miss, 0 hit (now most recent), 4 miss (evicts 2), 0 hit */
    assert_true(contains(js, "\"policy\":\"lru\""));
    assert_true(contains(js, "\"l1\":{\"size\":256,\"ways\":2,\"sets\":2,\"hits\":2,\"misses\":3,"));
    assert_true(contains(js, "\"l2\":{\"size\":512,\"ways\":2,\"sets\":4,\"hits\":0,\"misses\":3,"));
    free(js);
    prof_cachesim.close(st);
}

/* Lines 0, 4, 8 share L2 set 0 (2 ways) and L1 set 0. Sequence 0, 4, 0, 8, 0, 8, 4:
 * 8 evicts 0 from L2, so L1 drops 0 although L1 just hit it (L2 never sees L1 hits); then
 * 0 evicts 4 and 4 evicts 8 the same way. Same counts under FIFO and LRU. */
static const uint64_t pattern2[] = {THREAD(1), LOAD(L(0)), LOAD(L(4)), LOAD(L(0)), LOAD(L(8)),
                                    LOAD(L(0)), LOAD(L(8)), LOAD(L(4))};

static void check_inclusive(const char *policy) {
    void *st = tiny(policy);
    feed(&prof_cachesim, st, pattern2, NEV(pattern2), 3);
    char *js = json_of(st);
    if (!contains(js, "\"l1\":{\"size\":256,\"ways\":2,\"sets\":2,\"hits\":2,\"misses\":5,") ||
        !contains(js, "\"l2\":{\"size\":512,\"ways\":2,\"sets\":4,\"hits\":0,\"misses\":5,") ||
        !contains(js, "\"evictions\":3}") || !contains(js, "\"back_invalidations\":3"))
        fail_msg("%s: unexpected %s", policy, js);
    /* L1 never had to evict: each fill found the way L2's eviction had invalidated */
    assert_true(contains(js, "\"hits\":2,\"misses\":5,\"miss_rate\":0.7142857142857"));
    assert_true(contains(js, "\"evictions\":0},\"l2\""));
    free(js);
    prof_cachesim.close(st);
}

static void test_cachesim_inclusive_eviction_fifo(void **state) {
    (void)state;
    check_inclusive("fifo");
}

static void test_cachesim_inclusive_eviction_lru(void **state) {
    (void)state;
    check_inclusive("lru");
}

/* pattern1 under functions: m loads 0; f (depth 2) stores 2, loads 0 (hit); f returns; m
 * stores 4; g (depth 2) calls h through a C frame (depth 4), h returns, g loads 0. */
static const uint64_t funcs[] = {
    THREAD(1), CALL(M, 1), LOAD(L(0)), CALL(F, 2), STORE(L(2)), LOAD(L(0)), RET(2), STORE(L(4)),
    CALL(G, 2), CALL(H, 4), RET(4), LOAD(L(0)),
};

static void test_cachesim_misses_per_function(void **state) {
    (void)state;
    void *st = tiny("fifo");
    feed(&prof_cachesim, st, funcs, NEV(funcs), 5);
    char *js = json_of(st);
    /* no EV_PC: each function's accesses are at an unknown line (0) */
    assert_true(contains(js, "{\"function\":\"f1 (t.lua:1)\",\"id\":1,\"accesses\":2,\"l1_misses\":2,\"l2_misses\":2,"
                             "\"lines\":[{\"line\":0,\"accesses\":2,\"l1_misses\":2,\"l2_misses\":2}]}"));
    assert_true(contains(js, "{\"function\":\"f2 (t.lua:2)\",\"id\":2,\"accesses\":2,\"l1_misses\":1,\"l2_misses\":1,"));
    assert_true(contains(js, "{\"function\":\"f3 (t.lua:3)\",\"id\":3,\"accesses\":1,\"l1_misses\":1,\"l2_misses\":0,"));
    assert_false(contains(js, "f4 (t.lua:4)"));
    free(js);
    prof_cachesim.close(st);
}

/* Accesses before any call belong to "[none]"; threads keep their own stacks. */
static void test_cachesim_threads(void **state) {
    (void)state;
    static const uint64_t ev[] = {
        LOAD(L(1)),                              /* thread 0, no function */
        THREAD(5), CALL(F, 1), LOAD(L(3)),       /* f */
        THREAD(6), CALL(G, 1), CALL(H, 2),       /* g, h */
        THREAD(5), LOAD(L(5)),                   /* f again */
        THREAD(6), RET(2), LOAD(L(7)),           /* g */
    };
    void *st = tiny("fifo");
    feed(&prof_cachesim, st, ev, NEV(ev), 2);
    char *js = json_of(st);
    assert_true(contains(js, "{\"function\":\"[none]\",\"id\":0,\"accesses\":1,"));
    assert_true(contains(js, "{\"function\":\"f2 (t.lua:2)\",\"id\":2,\"accesses\":2,"));
    assert_true(contains(js, "{\"function\":\"f3 (t.lua:3)\",\"id\":3,\"accesses\":1,"));
    free(js);
    prof_cachesim.close(st);
}

/* Two streams on disjoint cache sets (even lines vs odd lines): the merged counts equal
 * those of one state fed both streams (a shared cache would give the same here). */
static void test_cachesim_merge_equals_one_state(void **state) {
    (void)state;
    static const uint64_t odd[] = {THREAD(2), CALL(G, 1), LOAD(L(1)), LOAD(L(3)), LOAD(L(1)),
                                   STORE(L(5)), LOAD(L(9)), LOAD(L(1))};
    void *one = tiny("lru"), *a = tiny("lru"), *b = tiny("lru");
    feed(&prof_cachesim, one, funcs, NEV(funcs), 4);
    feed(&prof_cachesim, one, odd, NEV(odd), 4);
    feed(&prof_cachesim, a, funcs, NEV(funcs), 3);
    feed(&prof_cachesim, b, odd, NEV(odd), 1);
    prof_cachesim.merge(a, b);
    for (int f = PROF_TEXT; f <= PROF_JSON; f++) {
        char *x = report_str(&prof_cachesim, one, (ProfFormat)f, 1.0, NULL);
        char *y = report_str(&prof_cachesim, a, (ProfFormat)f, 1.0, NULL);
        assert_string_equal(x, y);
        free(x), free(y);
    }
    char *js = json_of(a);
    assert_true(contains(js, "\"accesses\":11,\"loads\":8,\"stores\":3"));
    free(js);
    prof_cachesim.close(one), prof_cachesim.close(a), prof_cachesim.close(b);
}

/* A reproducible mix of calls, returns, thread switches, loads and stores over 300 lines. */
static size_t random_stream(uint64_t *ev, size_t n, uint64_t seed) {
    uint64_t x = seed;
    size_t k = 0;
    uint32_t depth = 0;
    while (k < n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned r = (unsigned)(x % 100);
        if (r < 3) ev[k++] = THREAD(1 + x % 3);
        else if (r < 10) ev[k++] = CALL(1 + (x >> 8) % 7, depth < 20 ? ++depth : depth);
        else if (r < 15 && depth > 0) ev[k++] = RET(depth--);
        else if (r < 18) ev[k++] = PC(1 + (x >> 8) % 7, (x >> 24) % 12); /* usually before an access */
        else if (r < 60) ev[k++] = LOAD(L((x >> 16) % 300) + (x >> 40) % 64);
        else ev[k++] = STORE(L((x >> 16) % 300));
    }
    return k;
}

/* Sharded (ProfAnalysis.shard, -Xanalysis.shards): 2, 4 and 8 shards, each fed the whole
 * stream and merged, report exactly what one unsharded state does, under FIFO and LRU, on a
 * hierarchy with 8 L1 sets and 16 L2 sets (so lines of one L2 set lie in several L1 sets and
 * back-invalidations cross sets, but never shards). The most shards is the smaller number of
 * sets. */
static void test_cachesim_shards_merge_to_the_unsharded_state(void **state) {
    (void)state;
    enum { N = 20000 };
    static uint64_t ev[N];
    random_stream(ev, N, 12345);
    for (int lru = 0; lru <= 1; lru++) {
        const char *err = NULL;
        assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){1024, 2}, &(ProfCacheLevel){4096, 4}, lru, &err), 0);
        assert_int_equal(prof_cachesim_max_shards(), 8);
        void *one = prof_cachesim.open();
        feed(&prof_cachesim, one, ev, N, 64);
        char *want = report_str(&prof_cachesim, one, PROF_JSON, 1.0, NULL);
        for (unsigned k = 2; k <= 8; k *= 2) {
            void *sh[8];
            for (unsigned j = 0; j < k; j++) {
                sh[j] = prof_cachesim.open();
                prof_cachesim.shard(sh[j], j, k);
                feed(&prof_cachesim, sh[j], ev, N, 64);
            }
            for (unsigned j = 1; j < k; j++) prof_cachesim.merge(sh[0], sh[j]);
            char *got = report_str(&prof_cachesim, sh[0], PROF_JSON, 1.0, NULL);
            assert_string_equal(got, want);
            free(got);
            for (unsigned j = 0; j < k; j++) prof_cachesim.close(sh[j]);
        }
        free(want);
        prof_cachesim.close(one);
    }
}

/* Per line (EV_PC): function 1's instructions are all on line 7, function 2's pc p on line
 * p + 1 of a real file (for annotate), function 3 has no line information. */
static char lines_file[64];
static int32_t lines_f1[12], lines_f2[12];

static int lines_fsource(uint32_t id, ProfSource *out, void *ctx) {
    (void)ctx;
    if (id == 1) *out = (ProfSource){NULL, 1, 12, lines_f1, 12};
    else if (id == 2) *out = (ProfSource){lines_file, 1, 6, lines_f2, 12};
    else if (id == 3) *out = (ProfSource){NULL, 3, 3, NULL, 0};
    else return -1;
    return 0;
}

static char *lines_report(void *st, ProfFormat fmt) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ProfReportOpts o = {.format = fmt, .sample_rate = 1.0, .fname = test_fname, .fsource = lines_fsource};
    assert_int_equal(prof_cachesim.report(st, f, &o), 0);
    fclose(f);
    return buf;
}

/* Default geometry: every first touch of a line misses both levels, nothing is evicted. */
static const uint64_t lines_ev[] = {
    THREAD(1), CALL(M, 1),
    PC(M, 0), LOAD(L(0)),                /* m line 7: miss */
    CALL(F, 2),
    PC(F, 3), LOAD(L(2)),                /* f line 4: miss */
    PC(F, 3), LOAD(L(0) + 8),            /* f line 4: hit */
    PC(F, 4), STORE(L(4)),               /* f line 5: miss */
    LOAD(L(6)),                          /* no EV_PC: the stack's f, line unknown: miss */
    PC(F, 5), EVK(EV_GAP, 0), LOAD(L(8)), /* the gap drops the EV_PC: f, unknown: miss */
    PC(G, 1), LOAD(L(2)),                /* g's instruction (not the stack's f), no lines: hit */
    RET(2),
    PC(0, 7), LOAD(L(10)),               /* function 0 (unknown): the stack's m, unknown: miss */
};

static void test_cachesim_misses_per_line(void **state) {
    (void)state;
    snprintf(lines_file, sizeof lines_file, "/tmp/tandem_cachesim_lines_%d.lua", (int)getpid());
    FILE *src = fopen(lines_file, "w");
    assert_non_null(src);
    fputs("local function f()\n  -- two\n  -- three\n  x = t[i]\n  t[j] = 1\nend\n", src);
    fclose(src);
    for (int pc = 0; pc < 12; pc++) lines_f1[pc] = 7, lines_f2[pc] = pc + 1;
    for (size_t chunk = 1; chunk <= NEV(lines_ev); chunk += 5) {
        void *st = prof_cachesim.open();
        feed(&prof_cachesim, st, lines_ev, NEV(lines_ev), chunk);
        char *js = lines_report(st, PROF_JSON);
        assert_true(json_valid(js));
        /* each function's lines sum to its counts */
        if (!contains(js, "{\"function\":\"f2 (t.lua:2)\",\"id\":2,\"accesses\":5,\"l1_misses\":4,\"l2_misses\":4,"
                          "\"lines\":[{\"line\":0,\"accesses\":2,\"l1_misses\":2,\"l2_misses\":2},"
                          "{\"line\":4,\"accesses\":2,\"l1_misses\":1,\"l2_misses\":1},"
                          "{\"line\":5,\"accesses\":1,\"l1_misses\":1,\"l2_misses\":1}]}") ||
            !contains(js, "{\"function\":\"f1 (t.lua:1)\",\"id\":1,\"accesses\":2,\"l1_misses\":2,\"l2_misses\":2,"
                          "\"lines\":[{\"line\":0,\"accesses\":1,\"l1_misses\":1,\"l2_misses\":1},"
                          "{\"line\":7,\"accesses\":1,\"l1_misses\":1,\"l2_misses\":1}]}") ||
            !contains(js, "{\"function\":\"f3 (t.lua:3)\",\"id\":3,\"accesses\":1,\"l1_misses\":0,\"l2_misses\":0,"
                          "\"lines\":[{\"line\":0,\"accesses\":1,\"l1_misses\":0,\"l2_misses\":0}]}"))
            fail_msg("chunk %zu: %s", chunk, js);
        free(js);
        prof_cachesim.close(st);
    }
    void *st = prof_cachesim.open();
    feed(&prof_cachesim, st, lines_ev, NEV(lines_ev), 4);

    /* annotate: f2's source with its counted lines; the unknown line first */
    char *an = lines_report(st, PROF_ANNOTATE);
    char want[256];
    assert_true(contains(an, "-- f2 (t.lua:2): 5 accesses, 4 L1 misses (66.67% of all), 4 L2 misses\n"));
    snprintf(want, sizeof want, "%12d %12d %12d %6s   (no instruction", 2, 2, 2, "?");
    assert_true(contains(an, want));
    snprintf(want, sizeof want, "%12d %12d %12d %6d  %s\n", 2, 1, 1, 4, "  x = t[i]");
    assert_true(contains(an, want));
    snprintf(want, sizeof want, "%12d %12d %12d %6d  %s\n", 1, 1, 1, 5, "  t[j] = 1");
    assert_true(contains(an, want));
    snprintf(want, sizeof want, "%12s %12s %12s %6d  %s\n", ".", ".", ".", 2, "  -- two");
    assert_true(contains(an, want));
    assert_true(contains(an, "-- f1 (t.lua:1): 2 accesses, 2 L1 misses (33.33% of all), 2 L2 misses\n"
                             "   (no source file: the chunk was not loaded from a file)\n"));
    /* f2 has the most misses: first */
    assert_true(strstr(an, "-- f2 (") < strstr(an, "-- f1 ("));
    free(an);

    /* callgrind: per line, in the three events */
    char *cg = lines_report(st, PROF_CALLGRIND);
    assert_true(contains(cg, "positions: line\nevents: Acc D1m DLm\nsummary: 8 6 6\n"));
    assert_true(contains(cg, "fn=f2 (t.lua:2)\n0 2 2 2\n4 2 1 1\n5 1 1 1\n"));
    assert_true(contains(cg, "fn=f1 (t.lua:1)\n0 1 1 1\n7 1 1 1\n"));
    char *ann = callgrind_annotate(cg, "--auto=no");
    if (ann != NULL) {
        assert_true(contains(ann, "Acc"));
        free(ann);
    }
    free(cg);

    /* text: the hottest lines */
    char *t = lines_report(st, PROF_TEXT);
    assert_true(contains(t, "misses per source line (most L1 misses first):\n"));
    assert_true(contains(t, "%  ?:0") == 0);
    snprintf(want, sizeof want, "%s:4 in f2 (t.lua:2)\n", lines_file);
    assert_true(contains(t, want));
    free(t);
    prof_cachesim.close(st);
    remove(lines_file);
}

static void test_cachesim_text_and_sampling(void **state) {
    (void)state;
    void *st = tiny("fifo");
    feed(&prof_cachesim, st, funcs, NEV(funcs), 100);
    char *t = report_str(&prof_cachesim, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "cachesim: 5 accesses (3 loads, 2 stores)\n"));
    assert_true(contains(t, "L1 256 bytes 2-way, L2 512 bytes 2-way, 64-byte lines, inclusive, FIFO"));
    assert_true(contains(t, "    L1              1              4   80.0000%\n"));
    free(t);
    t = report_str(&prof_cachesim, st, PROF_TEXT, 0.1, NULL);
    assert_true(contains(t, "cachesim: 50 accesses (30 loads, 20 stores)\n"));
    assert_true(contains(t, "estimates from sampling at rate 0.1"));
    assert_true(contains(t, "    L1             10             40   80.0000%\n"));
    free(t);
    int rc;
    char *s = report_str(&prof_cachesim, st, PROF_FOLDED, 1.0, &rc);
    assert_int_equal(rc, -2);
    free(s);
    prof_cachesim.close(st);
}

static void test_cachesim_default_geometry(void **state) {
    (void)state;
    void *st = prof_cachesim.open();
    /* 32 KB 4-way: 128 sets; lines 0, 128, 256, 384, 512 share set 0: the fifth evicts 0 */
    uint64_t ev[12];
    size_t n = 0;
    for (int k = 0; k < 5; k++) ev[n++] = LOAD(L(128 * k));
    ev[n++] = LOAD(L(0));          /* L1 miss, L2 hit (L2: 1024 sets, no conflict) */
    ev[n++] = LOAD(L(512));        /* L1 hit */
    feed(&prof_cachesim, st, ev, n, n);
    char *js = json_of(st);
    assert_true(contains(js, "\"l1\":{\"size\":32768,\"ways\":4,\"sets\":128,\"hits\":1,\"misses\":6,"));
    assert_true(contains(js, "\"l2\":{\"size\":524288,\"ways\":8,\"sets\":1024,\"hits\":1,\"misses\":5,"));
    free(js);
    char *t = report_str(&prof_cachesim, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "L1 32 KB 4-way, L2 512 KB 8-way, 64-byte lines, inclusive, FIFO"));
    free(t);
    prof_cachesim.close(st);
}

static void test_cachesim_configure_errors(void **state) {
    (void)state;
    const char *err = NULL;
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){33 * 1024, 4}, NULL, -1, &err), -1);
    assert_true(contains(err, "L1 size 33792 must be a power-of-two number of 64-byte lines"));
    assert_int_equal(prof_cachesim_configure(NULL, &(ProfCacheLevel){512 * 1024, 3}, -1, &err), -1);
    assert_true(contains(err, "L2 ways 3 must be at least 1 and divide its 8192 lines"));
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){32 * 1024, 0}, NULL, -1, &err), -1);
    assert_true(contains(err, "L1 ways"));
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){4ull << 30, 4}, NULL, -1, &err), -1);
    assert_true(contains(err, "too large"));
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){1 << 20, 4}, &(ProfCacheLevel){512 * 1024, 8}, -1, &err), -1);
    assert_true(contains(err, "L2 (524288 bytes) is smaller than L1 (1048576 bytes)"));
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){1 << 20, 4}, NULL, -1, &err), -1); /* against L2 512k */
    /* nothing changed */
    void *st = prof_cachesim.open();
    char *t = report_str(&prof_cachesim, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "L1 32 KB 4-way, L2 512 KB 8-way, 64-byte lines, inclusive, FIFO"));
    free(t);
    prof_cachesim.close(st);
    /* accepted geometries (the text forms are the command line's: tests/unit/cli) */
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){64 * 1024, 8}, &(ProfCacheLevel){2 << 20, 16}, 1, &err), 0);
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){64, 1}, &(ProfCacheLevel){64, 1}, -1, &err), 0); /* one line */
    assert_int_equal(prof_cachesim_configure(&(ProfCacheLevel){1024, 16}, &(ProfCacheLevel){1024, 16}, -1, &err), 0); /* fully associative */
    st = prof_cachesim.open();
    t = report_str(&prof_cachesim, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "L1 1 KB 16-way, L2 1 KB 16-way, 64-byte lines, inclusive, LRU"));
    free(t);
    prof_cachesim.close(st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_cachesim_fifo, defaults),
        cmocka_unit_test_teardown(test_cachesim_lru, defaults),
        cmocka_unit_test_teardown(test_cachesim_inclusive_eviction_fifo, defaults),
        cmocka_unit_test_teardown(test_cachesim_inclusive_eviction_lru, defaults),
        cmocka_unit_test_teardown(test_cachesim_misses_per_function, defaults),
        cmocka_unit_test_teardown(test_cachesim_misses_per_line, defaults),
        cmocka_unit_test_teardown(test_cachesim_threads, defaults),
        cmocka_unit_test_teardown(test_cachesim_merge_equals_one_state, defaults),
        cmocka_unit_test_teardown(test_cachesim_shards_merge_to_the_unsharded_state, defaults),
        cmocka_unit_test_teardown(test_cachesim_text_and_sampling, defaults),
        cmocka_unit_test_teardown(test_cachesim_default_geometry, defaults),
        cmocka_unit_test_teardown(test_cachesim_configure_errors, defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
