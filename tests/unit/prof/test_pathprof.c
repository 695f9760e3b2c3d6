/* test_pathprof.c: prof_pathprof: counting per (function, path) through table growth,
 * merge equals one state, ignored events, and the text and JSON reports with a decoder
 * (and without one). */
#include "prof_test.h"

#define PATH(fid, n) EVK(EV_PATH, (uint64_t)(n) << 24 | (uint32_t)(fid))

/* A decoder: path n of function f goes through blocks 0..n%4 and lines 10*f + block; odd
 * paths start at a loop head and end at a back edge; path 999 is unknown. */
static int test_decode(uint32_t fid, uint32_t path, ProfPath *out, void *ctx) {
    (void)ctx;
    if (path == 999) return -1;
    out->nblocks = out->nlines = 0;
    out->flags = path % 2 ? PROF_PATH_START_LOOP | PROF_PATH_END_BACK : 0;
    for (uint32_t b = 0; b <= path % 4; b++) {
        if (out->nblocks < out->maxblocks) out->blocks[out->nblocks] = b;
        out->nblocks++;
        if (out->nlines < out->maxlines) out->lines[out->nlines] = 10 * fid + b;
        out->nlines++;
    }
    return 0;
}

static char *report(void *st, ProfFormat fmt, ProfDecodePathFn dec) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ProfReportOpts o = {.format = fmt, .sample_rate = 1.0, .fname = test_fname, .decode_path = dec};
    assert_int_equal(prof_pathprof.report(st, f, &o), 0);
    fclose(f);
    return buf;
}

static const uint64_t stream[] = {
    THREAD(1), CALL(1, 1), PATH(1, 3), PATH(1, 3), PATH(2, 0), LOAD(0x1000), PATH(1, 3), PATH(2, 5),
    THREAD(2), PATH(2, 5), PATH(1, 999), RET(1),
};

static void test_pathprof_reports(void **state) {
    (void)state;
    void *st = prof_pathprof.open();
    feed(&prof_pathprof, st, stream, NEV(stream), 3);
    char *t = report(st, PROF_TEXT, test_decode);
    assert_true(contains(t, "pathprof: 7 paths run, 4 distinct paths in 2 functions\n"));
    assert_true(contains(t, "f1 (t.lua:1) path 3: lines 10 11 12 13 (blocks 0 1 2 3; loop to back) 3 times (42.86%)\n"));
    assert_true(contains(t, "f2 (t.lua:2) path 5: lines 20 21 (blocks 0 1; loop to back) 2 times (28.57%)\n"));
    assert_true(contains(t, "f2 (t.lua:2) path 0: lines 20 (blocks 0; entry to return) 1 times (14.29%)\n"));
    assert_true(contains(t, "f1 (t.lua:1) path 999: (not decoded) 1 times (14.29%)\n"));
    free(t);
    char *js = report(st, PROF_JSON, test_decode);
    assert_true(json_valid(js));
    assert_true(json_valid_python(js));
    assert_true(contains(js, "\"analysis\":\"pathprof\""));
    assert_true(contains(js, "\"total_paths\":7"));
    assert_true(contains(js, "{\"function\":\"f1 (t.lua:1)\",\"fid\":1,\"path\":3,\"count\":3,\"start\":\"loop\","
                             "\"end\":\"back\",\"blocks\":[0,1,2,3],\"lines\":[10,11,12,13]}"));
    assert_true(contains(js, "{\"function\":\"f1 (t.lua:1)\",\"fid\":1,\"path\":999,\"count\":1,\"start\":null,"
                             "\"end\":null,\"blocks\":[],\"lines\":[]}"));
    free(js);
    char *nodec = report(st, PROF_TEXT, NULL);
    assert_true(contains(nodec, "f1 (t.lua:1) path 3: (not decoded) 3 times"));
    free(nodec);
    int rc = 0;
    char *fold = report_str(&prof_pathprof, st, PROF_FOLDED, 1.0, &rc);
    assert_int_equal(rc, -2);
    free(fold);
    prof_pathprof.close(st);
}

/* Many distinct paths: the table grows (no allocation per event otherwise); a merge of two
 * states equals one state fed everything. */
static void test_pathprof_growth_and_merge(void **state) {
    (void)state;
    enum { N = 200000 };
    uint64_t *ev = malloc(N * sizeof *ev);
    for (uint32_t i = 0; i < N; i++) ev[i] = PATH(1 + i % 7, (i * 2654435761u) % 50000);
    void *one = prof_pathprof.open(), *a = prof_pathprof.open(), *b = prof_pathprof.open();
    feed(&prof_pathprof, one, ev, N, 4096);
    feed(&prof_pathprof, a, ev, N / 3, 1000);
    feed(&prof_pathprof, b, ev + N / 3, N - N / 3, 777);
    prof_pathprof.merge(a, b);
    char *x = report(one, PROF_JSON, test_decode), *y = report(a, PROF_JSON, test_decode);
    assert_string_equal(x, y);
    assert_true(json_valid(x));
    assert_true(contains(x, "\"total_paths\":200000"));
    free(x), free(y);
    char *t = report(one, PROF_TEXT, test_decode);
    assert_true(contains(t, "pathprof: 200000 paths run, "));
    assert_true(contains(t, "(") && contains(t, "more paths: "));
    free(t);
    prof_pathprof.close(one), prof_pathprof.close(a), prof_pathprof.close(b);
    free(ev);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pathprof_reports),
        cmocka_unit_test(test_pathprof_growth_and_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
