/* test_methodcount.c: prof_methodcount: counts, merge, and the text, JSON and callgrind
 * reports (callgrind_annotate must read the latter). */
#include "prof_test.h"

static const uint64_t stream_a[] = {
    THREAD(1), CALL(1, 1), CALL(2, 2), CALL(3, 3), CALL(3, 3), CALL(2, 2), CALL(3, 3), CALL(4, 5),
};
static const uint64_t stream_b[] = {THREAD(2), CALL(4, 1), CALL(4, 2), CALL(1, 1)};

static void test_methodcount_counts_json(void **state) {
    (void)state;
    void *st = prof_methodcount.open();
    feed(&prof_methodcount, st, stream_a, NEV(stream_a), 3);
    char *js = report_str(&prof_methodcount, st, PROF_JSON, 1.0, NULL);
    assert_true(json_valid(js));
    assert_true(json_valid_python(js));
    assert_string_equal(js,
                        "{\"analysis\":\"methodcount\",\"version\":1,\"sample_rate\":1,\"estimated\":false,"
                        "\"partial\":false,\"total_calls\":7,\"functions\":[\n"
                        "{\"function\":\"f3 (t.lua:3)\",\"calls\":3},\n"
                        "{\"function\":\"f2 (t.lua:2)\",\"calls\":2},\n"
                        "{\"function\":\"f1 (t.lua:1)\",\"calls\":1},\n"
                        "{\"function\":\"f4 (t.lua:4)\",\"calls\":1}]}\n");
    free(js);
    prof_methodcount.close(st);
}

static void test_methodcount_merge_equals_one_state(void **state) {
    (void)state;
    void *one = prof_methodcount.open(), *a = prof_methodcount.open(), *b = prof_methodcount.open();
    feed(&prof_methodcount, one, stream_a, NEV(stream_a), 2);
    feed(&prof_methodcount, one, stream_b, NEV(stream_b), 2);
    feed(&prof_methodcount, a, stream_a, NEV(stream_a), 8);
    feed(&prof_methodcount, b, stream_b, NEV(stream_b), 1);
    prof_methodcount.merge(a, b);
    for (int f = PROF_TEXT; f <= PROF_CALLGRIND; f++) {
        if (f == PROF_FOLDED) continue;
        char *x = report_str(&prof_methodcount, one, (ProfFormat)f, 1.0, NULL);
        char *y = report_str(&prof_methodcount, a, (ProfFormat)f, 1.0, NULL);
        assert_string_equal(x, y);
        free(x), free(y);
    }
    char *t = report_str(&prof_methodcount, a, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "methodcount: 10 calls of 4 functions\n"));
    assert_true(contains(t, "           3   30.00%  f4 (t.lua:4)\n"));
    free(t);
    prof_methodcount.close(one), prof_methodcount.close(a), prof_methodcount.close(b);
}

/* Sharded (-Xanalysis.shards): 2 and 4 shards, each fed both streams, own the functions whose
 * id they match modulo the shards; merged, they report what one state does. */
static void test_methodcount_shards_merge_to_the_unsharded_state(void **state) {
    (void)state;
    void *one = prof_methodcount.open();
    feed(&prof_methodcount, one, stream_a, NEV(stream_a), 2);
    feed(&prof_methodcount, one, stream_b, NEV(stream_b), 2);
    char *want = report_str(&prof_methodcount, one, PROF_TEXT, 1.0, NULL);
    for (unsigned k = 2; k <= 4; k *= 2) {
        void *sh[4];
        for (unsigned j = 0; j < k; j++) {
            sh[j] = prof_methodcount.open();
            prof_methodcount.shard(sh[j], j, k);
            feed(&prof_methodcount, sh[j], stream_a, NEV(stream_a), 3);
            feed(&prof_methodcount, sh[j], stream_b, NEV(stream_b), 3);
        }
        char *part = report_str(&prof_methodcount, sh[1], PROF_TEXT, 1.0, NULL);
        assert_string_not_equal(part, want); /* a shard alone sees only its functions */
        free(part);
        for (unsigned j = 1; j < k; j++) prof_methodcount.merge(sh[0], sh[j]);
        char *got = report_str(&prof_methodcount, sh[0], PROF_TEXT, 1.0, NULL);
        assert_string_equal(got, want);
        free(got);
        for (unsigned j = 0; j < k; j++) prof_methodcount.close(sh[j]);
    }
    free(want);
    prof_methodcount.close(one);
}

static void test_methodcount_sampling_and_partial(void **state) {
    (void)state;
    void *st = prof_methodcount.open();
    feed(&prof_methodcount, st, stream_a, NEV(stream_a), 4);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ProfReportOpts o = {.format = PROF_TEXT, .sample_rate = 0.05, .partial = 1, .fname = test_fname};
    assert_int_equal(prof_methodcount.report(st, f, &o), 0);
    fclose(f);
    assert_true(contains(buf, "methodcount: 140 calls of 4 functions\n"));
    assert_true(contains(buf, "estimates from sampling at rate 0.05: counts are observed counts scaled by 1/0.05"));
    assert_true(contains(buf, "partial profile: the program was interrupted"));
    assert_true(contains(buf, "          60   42.86%  f3 (t.lua:3)\n"));
    free(buf);
    f = open_memstream(&buf, &len);
    o.format = PROF_JSON;
    assert_int_equal(prof_methodcount.report(st, f, &o), 0);
    fclose(f);
    assert_true(contains(buf, "\"sample_rate\":0.05,\"estimated\":true,\"partial\":true,\"total_calls\":7,"));
    free(buf);
    int rc;
    char *s = report_str(&prof_methodcount, st, PROF_FOLDED, 1.0, &rc);
    assert_int_equal(rc, -2);
    free(s);
    prof_methodcount.close(st);
}

static void test_methodcount_callgrind_annotate(void **state) {
    (void)state;
    void *st = prof_methodcount.open();
    feed(&prof_methodcount, st, stream_a, NEV(stream_a), 4);
    char *cg = report_str(&prof_methodcount, st, PROF_CALLGRIND, 1.0, NULL);
    prof_methodcount.close(st);
    assert_true(contains(cg, "# callgrind format\n"));
    assert_true(contains(cg, "events: Calls\n"));
    assert_true(contains(cg, "fl=t.lua\nfn=f3 (t.lua:3)\n3 3\n"));
    assert_true(contains(cg, "totals: 7\n"));
    char *out = callgrind_annotate(cg, "");
    free(cg);
    if (out == NULL) skip();
    assert_true(contains(out, "7 (100.0%)  PROGRAM TOTALS"));
    assert_true(contains(out, "3 (42.86%)  t.lua:f3 (t.lua:3)"));
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methodcount_counts_json),
        cmocka_unit_test(test_methodcount_merge_equals_one_state),
        cmocka_unit_test(test_methodcount_shards_merge_to_the_unsharded_state),
        cmocka_unit_test(test_methodcount_sampling_and_partial),
        cmocka_unit_test(test_methodcount_callgrind_annotate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
