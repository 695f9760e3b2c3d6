/* test_calltree.c: prof_calltree on synthetic event streams whose calling context tree and
 * depth-two patterns are known by construction: repeated contexts, recursion, a C frame
 * (depth gap) reused by two calls, unwinding by an error, two interleaved threads, merge,
 * and the text, JSON and folded reports. */
#include "prof_test.h"

#define M 1
#define F 2
#define G 3
#define H 4

#define NM "f1 (t.lua:1)"
#define NF "f2 (t.lua:2)"
#define NG "f3 (t.lua:3)"
#define NH "f4 (t.lua:4)"

/* Thread 1: main calls f, which calls g, g, h; f again, which calls g; then h, which
 * recurses twice; the innermost h calls g twice through one C frame (depth 6 under h at
 * 4: [C] at 5); an error unwinds everything to main, which calls f a third time. */
static const uint64_t stream_a[] = {
    THREAD(1), CALL(M, 1), CALL(F, 2), CALL(G, 3), CALL(G, 3), CALL(H, 3), CALL(F, 2), CALL(G, 3),
    CALL(H, 2), CALL(H, 3), CALL(H, 4), CALL(G, 6), CALL(G, 6), CALL(F, 2),
};

static const char *const folded_a[] = {
    NM " 1",
    NM ";" NF " 3",
    NM ";" NF ";" NG " 3",
    NM ";" NF ";" NH " 1",
    NM ";" NH " 1",
    NM ";" NH ";" NH " 1",
    NM ";" NH ";" NH ";" NH " 1",
    NM ";" NH ";" NH ";" NH ";[C];" NG " 2",
};

/* (function, children by name, invocations) */
static const char *const patterns_a[] = {
    "{\"function\":\"" NG "\",\"children\":[],\"count\":5}",
    "{\"function\":\"" NH "\",\"children\":[\"" NH "\"],\"count\":2}",
    "{\"function\":\"" NH "\",\"children\":[],\"count\":1}",
    "{\"function\":\"" NF "\",\"children\":[\"" NG "\",\"" NH "\"],\"count\":1}",
    "{\"function\":\"" NF "\",\"children\":[\"" NG "\"],\"count\":1}",
    "{\"function\":\"" NF "\",\"children\":[],\"count\":1}",
    "{\"function\":\"[C]\",\"children\":[\"" NG "\"],\"count\":1}",
    "{\"function\":\"" NH "\",\"children\":[\"[C]\"],\"count\":1}",
    "{\"function\":\"" NM "\",\"children\":[\"" NF "\",\"" NH "\"],\"count\":1}",
};

/* Threads 7 and 8 interleaved on one carrier. */
static const uint64_t stream_b[] = {
    THREAD(7), CALL(M, 1), CALL(F, 2),
    THREAD(8), CALL(G, 1), CALL(H, 2),
    THREAD(7), CALL(G, 3),
    THREAD(8), CALL(F, 2),
};

static char *run(const uint64_t *ev, size_t n, size_t chunk, ProfFormat fmt) {
    void *st = prof_calltree.open();
    assert_non_null(st);
    feed(&prof_calltree, st, ev, n, chunk);
    char *s = report_str(&prof_calltree, st, fmt, 1.0, NULL);
    prof_calltree.close(st);
    return s;
}

static void test_calltree_contexts_folded(void **state) {
    (void)state;
    char *s = run(stream_a, NEV(stream_a), NEV(stream_a), PROF_FOLDED);
    check_folded(s, folded_a, NEV(folded_a));
    free(s);
}

static void test_calltree_json_tree_and_patterns(void **state) {
    (void)state;
    char *js = run(stream_a, NEV(stream_a), 3, PROF_JSON);
    assert_true(json_valid(js));
    assert_true(json_valid_python(js));
    assert_true(contains(js, "\"analysis\":\"calltree\""));
    assert_true(contains(js, "\"total_calls\":13,"));
    /* nodes in depth-first order, children by calls in their subtree (h's subtree: 5) */
    assert_true(contains(js, "{\"thread\":1,\"nodes\":[\n"
                             "{\"id\":0,\"parent\":null,\"function\":\"[root]\",\"calls\":0},\n"
                             "{\"id\":1,\"parent\":0,\"function\":\"" NM "\",\"calls\":1},\n"
                             "{\"id\":2,\"parent\":1,\"function\":\"" NF "\",\"calls\":3},\n"
                             "{\"id\":3,\"parent\":2,\"function\":\"" NG "\",\"calls\":3},\n"
                             "{\"id\":4,\"parent\":2,\"function\":\"" NH "\",\"calls\":1},\n"
                             "{\"id\":5,\"parent\":1,\"function\":\"" NH "\",\"calls\":1},\n"
                             "{\"id\":6,\"parent\":5,\"function\":\"" NH "\",\"calls\":1},\n"
                             "{\"id\":7,\"parent\":6,\"function\":\"" NH "\",\"calls\":1},\n"
                             "{\"id\":8,\"parent\":7,\"function\":\"[C]\",\"calls\":1},\n"
                             "{\"id\":9,\"parent\":8,\"function\":\"" NG "\",\"calls\":2}]}"));
    assert_true(contains(js, "\"patterns\":{\"distinct\":9,\"invocations\":14,"));
    for (size_t i = 0; i < NEV(patterns_a); i++)
        if (!contains(js, patterns_a[i])) fail_msg("missing pattern %s in\n%s", patterns_a[i], js);
    free(js);
}

static void test_calltree_chunking_does_not_matter(void **state) {
    (void)state;
    char *whole = run(stream_a, NEV(stream_a), NEV(stream_a), PROF_JSON);
    for (size_t chunk = 1; chunk < 4; chunk++) {
        char *s = run(stream_a, NEV(stream_a), chunk, PROF_JSON);
        assert_string_equal(whole, s);
        free(s);
    }
    free(whole);
}

static void test_calltree_threads_interleaved(void **state) {
    (void)state;
    char *s = run(stream_b, NEV(stream_b), 2, PROF_FOLDED);
    static const char *const want[] = {
        "thread 7;" NM " 1", "thread 7;" NM ";" NF " 1", "thread 7;" NM ";" NF ";" NG " 1",
        "thread 8;" NG " 1", "thread 8;" NG ";" NH " 1", "thread 8;" NG ";" NF " 1",
    };
    check_folded(s, want, NEV(want));
    free(s);
    char *js = run(stream_b, NEV(stream_b), 2, PROF_JSON);
    assert_true(json_valid(js));
    assert_true(contains(js, "{\"thread\":7,\"nodes\":["));
    assert_true(contains(js, "{\"thread\":8,\"nodes\":["));
    /* thread 8's g called h, then f (h ended): one invocation, set {f, h} */
    assert_true(contains(js, "{\"function\":\"" NG "\",\"children\":[\"" NF "\",\"" NH "\"],\"count\":1}"));
    free(js);
}

/* merge(state fed A, state fed B) reports what one state fed A then B reports. */
static void test_calltree_merge_equals_one_state(void **state) {
    (void)state;
    void *one = prof_calltree.open(), *a = prof_calltree.open(), *b = prof_calltree.open();
    feed(&prof_calltree, one, stream_a, NEV(stream_a), 4);
    feed(&prof_calltree, one, stream_b, NEV(stream_b), 4);
    feed(&prof_calltree, a, stream_a, NEV(stream_a), 5);
    feed(&prof_calltree, b, stream_b, NEV(stream_b), 1);
    prof_calltree.merge(a, b);
    for (int f = PROF_TEXT; f <= PROF_FOLDED; f++) {
        char *x = report_str(&prof_calltree, one, (ProfFormat)f, 1.0, NULL);
        char *y = report_str(&prof_calltree, a, (ProfFormat)f, 1.0, NULL);
        assert_string_equal(x, y);
        free(x), free(y);
    }
    prof_calltree.close(one), prof_calltree.close(a), prof_calltree.close(b);
}

/* The same thread in two states (a green thread that moved carriers): contexts add up. */
static void test_calltree_merge_same_thread(void **state) {
    (void)state;
    void *a = prof_calltree.open(), *b = prof_calltree.open();
    feed(&prof_calltree, a, stream_a, NEV(stream_a), 7);
    feed(&prof_calltree, b, stream_a, NEV(stream_a), 3);
    prof_calltree.merge(a, b);
    char *s = report_str(&prof_calltree, a, PROF_FOLDED, 1.0, NULL);
    static const char *const want[] = {
        NM " 2", NM ";" NF " 6", NM ";" NF ";" NG " 6", NM ";" NF ";" NH " 2", NM ";" NH " 2",
        NM ";" NH ";" NH " 2", NM ";" NH ";" NH ";" NH " 2", NM ";" NH ";" NH ";" NH ";[C];" NG " 4",
    };
    check_folded(s, want, NEV(want));
    free(s);
    char *js = report_str(&prof_calltree, a, PROF_JSON, 1.0, NULL);
    assert_true(contains(js, "\"patterns\":{\"distinct\":9,\"invocations\":28,"));
    assert_true(contains(js, "{\"function\":\"" NG "\",\"children\":[],\"count\":10}"));
    free(js);
    prof_calltree.close(a), prof_calltree.close(b);
}

static void test_calltree_text_and_sampling(void **state) {
    (void)state;
    void *st = prof_calltree.open();
    feed(&prof_calltree, st, stream_a, NEV(stream_a), 8);
    char *t = report_str(&prof_calltree, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "calltree: 13 calls in 9 contexts, 1 thread\n"));
    assert_true(contains(t, "           1           13  " NM "\n"));
    assert_true(contains(t, "           3            7    " NF "\n"));
    assert_true(contains(t, "depth-two subtree patterns: 9 distinct in 14 invocations"));
    assert_true(contains(t, "           5   35.71%  " NG " -> {}\n"));
    assert_true(contains(t, NM " -> {" NF ", " NH "}\n"));
    free(t);
    t = report_str(&prof_calltree, st, PROF_TEXT, 0.5, NULL);
    assert_true(contains(t, "calltree: 26 calls"));
    assert_true(contains(t, "estimates from sampling at rate 0.5"));
    free(t);
    char *fo = report_str(&prof_calltree, st, PROF_FOLDED, 0.5, NULL);
    assert_true(contains(fo, NM ";" NF " 6\n"));
    free(fo);
    int rc;
    char *s = report_str(&prof_calltree, st, PROF_CALLGRIND, 1.0, &rc);
    assert_int_equal(rc, -2);
    free(s);
    prof_calltree.close(st);
}

/* Deep recursion: no recursion in the analysis or the reports; valid JSON. */
static void test_calltree_deep_recursion(void **state) {
    (void)state;
    enum { DEPTH = 20000 };
    uint64_t *ev = malloc((DEPTH + 1) * sizeof *ev);
    ev[0] = THREAD(3);
    for (uint32_t d = 1; d <= DEPTH; d++) ev[d] = CALL(F, d);
    void *st = prof_calltree.open();
    feed(&prof_calltree, st, ev, DEPTH + 1, 4096);
    char *js = report_str(&prof_calltree, st, PROF_JSON, 1.0, NULL);
    assert_true(json_valid(js));
    assert_true(contains(js, "\"patterns\":{\"distinct\":2,\"invocations\":20000,"));
    assert_true(contains(js, "{\"function\":\"" NF "\",\"children\":[\"" NF "\"],\"count\":19999}"));
    free(js);
    char *t = report_str(&prof_calltree, st, PROF_TEXT, 1.0, NULL);
    assert_true(contains(t, "smaller subtrees not shown"));
    free(t);
    prof_calltree.close(st);
    free(ev);
}

static void test_calltree_empty(void **state) {
    (void)state;
    void *st = prof_calltree.open();
    for (int f = PROF_TEXT; f <= PROF_CALLGRIND; f++) {
        int rc;
        char *s = report_str(&prof_calltree, st, (ProfFormat)f, 1.0, &rc);
        assert_int_equal(rc, f == PROF_CALLGRIND ? -2 : 0);
        if (f == PROF_JSON) assert_true(json_valid(s));
        if (f == PROF_FOLDED) assert_string_equal(s, "");
        free(s);
    }
    prof_calltree.close(st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calltree_contexts_folded),
        cmocka_unit_test(test_calltree_json_tree_and_patterns),
        cmocka_unit_test(test_calltree_chunking_does_not_matter),
        cmocka_unit_test(test_calltree_threads_interleaved),
        cmocka_unit_test(test_calltree_merge_equals_one_state),
        cmocka_unit_test(test_calltree_merge_same_thread),
        cmocka_unit_test(test_calltree_text_and_sampling),
        cmocka_unit_test(test_calltree_deep_recursion),
        cmocka_unit_test(test_calltree_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
