/* test_callgraph.c: prof_callgraph on synthetic event streams whose call graph is known by
 * construction: edges and sites, a C frame (depth gap), recursion, unwinding by an error
 * (a call at lower depth), two interleaved threads, merge, and every report format. */
#include "prof_test.h"

#define MAIN 1
#define F 2
#define G 3
#define H 4
#define NOLUA 0xffffffffu

/* One thread: main calls f twice (pc 5); f calls g three times (pc 7, 7, 9); the second f
 * calls h through a C frame (depth 4 under f at 2); h recurses twice (pc 3); an error
 * unwinds to main, which calls g (pc 11, depth 2); g calls f with no EV_SITE. */
static const uint64_t stream_a[] = {
    THREAD(1),
    SITE(NOLUA), CALL(MAIN, 1),
    SITE(5), CALL(F, 2),
    SITE(7), CALL(G, 3),
    SITE(7), CALL(G, 3),
    SITE(9), CALL(G, 3),
    SITE(5), CALL(F, 2),
    SITE(NOLUA), CALL(H, 4),
    SITE(3), CALL(H, 5),
    SITE(3), CALL(H, 6),
    SITE(11), CALL(G, 2),
    CALL(F, 3),
};

static const char *const edges_a[] = {
    "{\"caller\":\"f2 (t.lua:2)\",\"callee\":\"f3 (t.lua:3)\",\"calls\":3,\"sites\":[{\"site\":7,\"calls\":2},{\"site\":9,\"calls\":1}]}",
    "{\"caller\":\"f1 (t.lua:1)\",\"callee\":\"f2 (t.lua:2)\",\"calls\":2,\"sites\":[{\"site\":5,\"calls\":2}]}",
    "{\"caller\":\"f4 (t.lua:4)\",\"callee\":\"f4 (t.lua:4)\",\"calls\":2,\"sites\":[{\"site\":3,\"calls\":2}]}",
    "{\"caller\":\"[root]\",\"callee\":\"f1 (t.lua:1)\",\"calls\":1,\"sites\":[{\"site\":\"C\",\"calls\":1}]}",
    "{\"caller\":\"f1 (t.lua:1)\",\"callee\":\"f3 (t.lua:3)\",\"calls\":1,\"sites\":[{\"site\":11,\"calls\":1}]}",
    "{\"caller\":\"f2 (t.lua:2)\",\"callee\":\"f4 (t.lua:4)\",\"calls\":1,\"sites\":[{\"site\":\"C\",\"calls\":1}]}",
    "{\"caller\":\"f3 (t.lua:3)\",\"callee\":\"f2 (t.lua:2)\",\"calls\":1,\"sites\":[{\"site\":\"?\",\"calls\":1}]}",
};

/* Two threads interleaved on one carrier. */
static const uint64_t stream_b[] = {
    THREAD(7), CALL(MAIN, 1), SITE(1), CALL(F, 2),
    THREAD(8), CALL(G, 1), SITE(2), CALL(H, 2),
    THREAD(7), SITE(3), CALL(G, 3), /* under f of thread 7 */
    THREAD(8), SITE(4), CALL(F, 2), /* ends h; under g of thread 8 */
};

static char *run(const uint64_t *ev, size_t n, size_t chunk, ProfFormat fmt) {
    void *st = prof_callgraph.open();
    assert_non_null(st);
    feed(&prof_callgraph, st, ev, n, chunk);
    char *s = report_str(&prof_callgraph, st, fmt, 1.0, NULL);
    prof_callgraph.close(st);
    return s;
}

static void test_callgraph_edges_and_sites(void **state) {
    (void)state;
    char *js = run(stream_a, NEV(stream_a), NEV(stream_a), PROF_JSON);
    assert_true(json_valid(js));
    assert_true(json_valid_python(js));
    assert_true(contains(js, "\"analysis\":\"callgraph\""));
    assert_true(contains(js, "\"total_calls\":11,"));
    for (size_t i = 0; i < NEV(edges_a); i++)
        if (!contains(js, edges_a[i])) fail_msg("missing edge %s in\n%s", edges_a[i], js);
    /* exactly those 7 edges: count "caller" */
    size_t k = 0;
    for (const char *p = js; (p = strstr(p, "\"caller\"")) != NULL; p++) k++;
    assert_int_equal(k, NEV(edges_a));
    free(js);
}

static void test_callgraph_chunking_does_not_matter(void **state) {
    (void)state;
    char *whole = run(stream_a, NEV(stream_a), NEV(stream_a), PROF_JSON);
    for (size_t chunk = 1; chunk < 5; chunk++) {
        char *s = run(stream_a, NEV(stream_a), chunk, PROF_JSON);
        assert_string_equal(whole, s);
        free(s);
    }
    free(whole);
}

static void test_callgraph_threads_interleaved(void **state) {
    (void)state;
    char *js = run(stream_b, NEV(stream_b), 3, PROF_JSON);
    assert_true(json_valid(js));
    assert_true(contains(js, "\"total_calls\":6,"));
    static const char *const want[] = {
        "{\"caller\":\"[root]\",\"callee\":\"f1 (t.lua:1)\",\"calls\":1,\"sites\":[{\"site\":\"?\",\"calls\":1}]}",
        "{\"caller\":\"f1 (t.lua:1)\",\"callee\":\"f2 (t.lua:2)\",\"calls\":1,\"sites\":[{\"site\":1,\"calls\":1}]}",
        "{\"caller\":\"[root]\",\"callee\":\"f3 (t.lua:3)\",\"calls\":1,",
        "{\"caller\":\"f3 (t.lua:3)\",\"callee\":\"f4 (t.lua:4)\",\"calls\":1,\"sites\":[{\"site\":2,",
        "{\"caller\":\"f2 (t.lua:2)\",\"callee\":\"f3 (t.lua:3)\",\"calls\":1,\"sites\":[{\"site\":3,",
        "{\"caller\":\"f3 (t.lua:3)\",\"callee\":\"f2 (t.lua:2)\",\"calls\":1,\"sites\":[{\"site\":4,",
    };
    for (size_t i = 0; i < NEV(want); i++)
        if (!contains(js, want[i])) fail_msg("missing %s in\n%s", want[i], js);
    free(js);
}

/* merge(state fed A, state fed B) reports what one state fed A then B reports. */
static void test_callgraph_merge_equals_one_state(void **state) {
    (void)state;
    void *one = prof_callgraph.open(), *a = prof_callgraph.open(), *b = prof_callgraph.open();
    feed(&prof_callgraph, one, stream_a, NEV(stream_a), 4);
    feed(&prof_callgraph, one, stream_b, NEV(stream_b), 4);
    feed(&prof_callgraph, a, stream_a, NEV(stream_a), 5);
    feed(&prof_callgraph, b, stream_b, NEV(stream_b), 2);
    prof_callgraph.merge(a, b);
    for (int f = PROF_TEXT; f <= PROF_CALLGRIND; f++) {
        if (f == PROF_FOLDED) continue;
        char *x = report_str(&prof_callgraph, one, (ProfFormat)f, 1.0, NULL);
        char *y = report_str(&prof_callgraph, a, (ProfFormat)f, 1.0, NULL);
        assert_string_equal(x, y);
        free(x), free(y);
    }
    char *js = report_str(&prof_callgraph, a, PROF_JSON, 1.0, NULL);
    assert_true(contains(js, "\"total_calls\":17,"));
    /* f1 -> f2 now has both streams' calls: 2 (pc 5) + 1 (pc 1) */
    assert_true(contains(js, "{\"caller\":\"f1 (t.lua:1)\",\"callee\":\"f2 (t.lua:2)\",\"calls\":3,\"sites\":[{\"site\":5,\"calls\":2},{\"site\":1,\"calls\":1}]}"));
    free(js);
    prof_callgraph.close(one), prof_callgraph.close(a), prof_callgraph.close(b);
}

static void test_callgraph_text_and_sampling(void **state) {
    (void)state;
    void *st = prof_callgraph.open();
    feed(&prof_callgraph, st, stream_a, NEV(stream_a), 8);
    char *t = report_str(&prof_callgraph, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "callgraph: 11 calls along 7 edges"));
    assert_true(contains(t, "f2 (t.lua:2) -> f3 (t.lua:3)  [pc 7: 2, pc 9: 1]"));
    assert_true(contains(t, "f2 (t.lua:2) -> f4 (t.lua:4)  [C: 1]"));
    assert_false(contains(t, "estimates"));
    free(t);
    /* Sampled: the call with no EV_SITE (g -> f, its site may have been cut off by a burst
     * boundary, so its caller is only a guess) is left out, and the rate shrinks by the
     * fraction kept: 0.25 * 10/11. Estimates: 10 calls * 4.4 = 44 along 6 edges; f2 -> f3
     * 3 * 4.4 = 13.2, its sites 8.8 and 4.4. */
    t = report_str(&prof_callgraph, st, PROF_TEXT, 0.25, NULL);
    assert_true(contains(t, "callgraph: 44 calls along 6 edges"));
    assert_true(contains(t, "estimates from sampling at rate 0.227273"));
    assert_true(contains(t, "          13   30.00%  f2 (t.lua:2) -> f3 (t.lua:3)  [pc 7: 9, pc 9: 4]"));
    assert_false(contains(t, "f3 (t.lua:3) -> f2 (t.lua:2)"));
    free(t);
    /* JSON keeps the observed counts and says the rate */
    char *js = report_str(&prof_callgraph, st, PROF_JSON, 0.25, NULL);
    assert_true(contains(js, "\"estimated\":true"));
    assert_true(contains(js, "\"total_calls\":10,"));
    free(js);
    int rc;
    char *s = report_str(&prof_callgraph, st, PROF_FOLDED, 1.0, &rc);
    assert_int_equal(rc, -2);
    free(s);
    prof_callgraph.close(st);
}

static void test_callgraph_callgrind_annotate(void **state) {
    (void)state;
    char *cg = run(stream_a, NEV(stream_a), 16, PROF_CALLGRIND);
    assert_true(contains(cg, "events: Calls\n"));
    assert_true(contains(cg, "fl=t.lua\nfn=f2 (t.lua:2)\n2 3\ncfl=t.lua\ncfn=f3 (t.lua:3)\ncalls=3 3\n2 3\n"));
    assert_true(contains(cg, "totals: 11\n"));
    char *out = callgrind_annotate(cg, "--inclusive=yes --tree=caller");
    if (out == NULL) {
        free(cg);
        skip();
    }
    assert_true(contains(out, "f3 (t.lua:3)"));
    assert_true(contains(out, "11"));
    free(out);
    free(cg);
}

static void test_callgraph_empty(void **state) {
    (void)state;
    void *st = prof_callgraph.open();
    for (int f = PROF_TEXT; f <= PROF_CALLGRIND; f++) {
        int rc;
        char *s = report_str(&prof_callgraph, st, (ProfFormat)f, 1.0, &rc);
        assert_int_equal(rc, f == PROF_FOLDED ? -2 : 0);
        if (f == PROF_JSON) assert_true(json_valid(s));
        free(s);
    }
    prof_callgraph.close(st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callgraph_edges_and_sites),
        cmocka_unit_test(test_callgraph_chunking_does_not_matter),
        cmocka_unit_test(test_callgraph_threads_interleaved),
        cmocka_unit_test(test_callgraph_merge_equals_one_state),
        cmocka_unit_test(test_callgraph_text_and_sampling),
        cmocka_unit_test(test_callgraph_callgrind_annotate),
        cmocka_unit_test(test_callgraph_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
