/* test_prof_out.c: what the analyses share: the analysis list, JSON strings (escapes,
 * invalid UTF-8), display-name splitting for callgrind, the sampling error rate
 * (prof_error_rate), the prof_error.py tool on real reports, and the HTML page's embedding
 * (prof_html.c). */
#include <math.h>

#include "prof_test.h"

static void test_prof_names_lists_every_analysis(void **state) {
    (void)state;
    const char *names = prof_names();
    static const char *const all[] = {"methodcount", "callgraph", "calltree", "cachesim"};
    for (size_t i = 0; i < NEV(all); i++) {
        assert_true(contains(names, all[i]));
        const ProfAnalysis *a = prof_find(all[i], strlen(all[i]));
        assert_non_null(a);
        assert_string_equal(a->name, all[i]);
    }
    assert_null(prof_find("callgraphx", 10));
    assert_non_null(prof_find("calltree,cachesim", 8)); /* a prefix of a comma list */
    assert_int_equal(prof_callgraph.needs, PROF_NEED_CALL | PROF_NEED_SITE);
    assert_int_equal(prof_calltree.needs, PROF_NEED_CALL);
    assert_int_equal(prof_cachesim.needs, PROF_NEED_CALL | PROF_NEED_RETURN | PROF_NEED_MEM | PROF_NEED_PC);
}

/* Names with quotes, backslashes, control characters, UTF-8 and broken UTF-8 make valid
 * JSON with the expected escapes. */
static void test_prof_json_strings_escaped(void **state) {
    (void)state;
    test_names[1] = "q\"b\\s\n\t\x01 \xc3\xa9 (t.lua:1)";  /* é stays as is */
    test_names[2] = "bad \xff\xc3 \xed\xa0\x80 \xf0\x9f\x98\x80 (t.lua:2)"; /* invalid, surrogate, emoji */
    static const uint64_t ev[] = {THREAD(1), CALL(1, 1), CALL(2, 2), CALL(2, 2)};
    void *st = prof_methodcount.open();
    feed(&prof_methodcount, st, ev, NEV(ev), 4);
    char *js = report_str(&prof_methodcount, st, PROF_JSON, 1.0, NULL);
    assert_true(json_valid(js));
    assert_true(json_valid_python(js));
    assert_true(contains(js, "\"q\\\"b\\\\s\\n\\t\\u0001 \xc3\xa9 (t.lua:1)\""));
    assert_true(contains(js, "\"bad \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \xf0\x9f\x98\x80 (t.lua:2)\""));
    free(js);
    /* folded frames: ';' and line breaks are replaced */
    test_names[3] = "a;b\nc (t.lua:3)";
    static const uint64_t ev2[] = {THREAD(1), CALL(3, 1), CALL(1, 2)};
    void *ct = prof_calltree.open();
    feed(&prof_calltree, ct, ev2, NEV(ev2), 3);
    char *fo = report_str(&prof_calltree, ct, PROF_FOLDED, 1.0, NULL);
    static const char *const want[] = {"a,b c (t.lua:3) 1", "a,b c (t.lua:3);q\"b\\s \t\x01 \xc3\xa9 (t.lua:1) 1"};
    check_folded(fo, want, 2);
    free(fo);
    test_names[1] = test_names[2] = test_names[3] = NULL;
    prof_calltree.close(ct);
    prof_methodcount.close(st);
}

static void test_prof_error_rate(void **state) {
    (void)state;
    double actual[] = {100, 50, 10, 0}, sampled[] = {6, 2, 0, 3};
    /* estimates 120, 40, 0: errors 0.2, 0.2, 1; the item with actual 0 is left out */
    assert_float_equal(prof_error_rate(actual, sampled, 4, 0.05), (0.2 + 0.2 + 1.0) / 3, 1e-12);
    double exact[] = {10, 20};
    assert_float_equal(prof_error_rate(exact, exact, 2, 1.0), 0.0, 0.0);
    assert_true(isnan(prof_error_rate(actual + 3, sampled + 3, 1, 0.5)));
    assert_true(isnan(prof_error_rate(actual, sampled, 3, 0.0)));
    assert_true(isnan(prof_error_rate(NULL, NULL, 0, 0.5)));
}

/* The tool's path from tests/unit/prof (ctest's working directory), wherever it lives. */
static const char *tool_path(void) {
    static const char *const paths[] = {"../../../bench/prof_error.py", "../../../profilers/tools/prof_error.py"};
    for (size_t i = 0; i < NEV(paths); i++)
        if (access(paths[i], R_OK) == 0) return paths[i];
    return NULL;
}

static void write_report(const char *path, const ProfAnalysis *an, const uint64_t *ev, size_t n, double rate) {
    void *st = an->open();
    feed(an, st, ev, n, n);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    ProfReportOpts o = {.format = PROF_JSON, .sample_rate = rate, .fname = test_fname};
    assert_int_equal(an->report(st, f, &o), 0);
    fclose(f);
    an->close(st);
}

static char *run_tool(const char *args) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 %s %s 2>&1", tool_path(), args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *buf = calloc(1, 4096);
    size_t n = fread(buf, 1, 4095, p);
    buf[n] = 0;
    pclose(p);
    return buf;
}

static void test_prof_error_tool(void **state) {
    (void)state;
    if (tool_path() == NULL || system("command -v python3 >/dev/null 2>&1") != 0) skip();
    uint64_t ex[161], sa[9];
    size_t n = 0, m = 0;
    ex[n++] = sa[m++] = THREAD(1);
    for (int i = 0; i < 100; i++) ex[n++] = CALL(1, 1);
    for (int i = 0; i < 50; i++) ex[n++] = CALL(2, 1);
    for (int i = 0; i < 10; i++) ex[n++] = CALL(3, 1);
    for (int i = 0; i < 6; i++) sa[m++] = CALL(1, 1);
    for (int i = 0; i < 2; i++) sa[m++] = CALL(2, 1);
    write_report("/tmp/prof_error_ex.json", &prof_methodcount, ex, n, 1.0);
    write_report("/tmp/prof_error_sa.json", &prof_methodcount, sa, m, 0.05);
    char *out = run_tool("/tmp/prof_error_ex.json /tmp/prof_error_sa.json --value");
    assert_string_equal(out, "0.466667\n"); /* the rate comes from the sampled profile */
    free(out);
    out = run_tool("/tmp/prof_error_ex.json /tmp/prof_error_sa.json --rate 0.1");
    /* estimates 60, 20, 0: errors 0.4, 0.6, 1 */
    assert_true(contains(out, "methodcount: error rate 0.666667 (66.67%) over 3 items at sampling rate 0.1; 1 missing"));
    free(out);
    /* calltree and callgraph: a profile against itself at rate 1 has no error */
    write_report("/tmp/prof_error_ct.json", &prof_calltree, ex, n, 1.0);
    out = run_tool("/tmp/prof_error_ct.json /tmp/prof_error_ct.json --value");
    assert_string_equal(out, "0.000000\n");
    free(out);
    write_report("/tmp/prof_error_cg.json", &prof_callgraph, ex, n, 1.0);
    out = run_tool("/tmp/prof_error_cg.json /tmp/prof_error_sa.json");
    assert_true(contains(out, "different analyses"));
    free(out);
    unlink("/tmp/prof_error_ex.json"), unlink("/tmp/prof_error_sa.json");
    unlink("/tmp/prof_error_ct.json"), unlink("/tmp/prof_error_cg.json");
}

static void test_prof_callgrind_names(void **state) {
    (void)state;
    static const uint64_t ev[] = {THREAD(1), CALL(1, 1), CALL(2, 2), CALL(3, 2)};
    test_names[1] = "main chunk (dir/prog (v2).lua)";
    test_names[2] = "anonymous";
    test_names[3] = "function <[string \"x:1\"]:7>";
    void *st = prof_callgraph.open();
    feed(&prof_callgraph, st, ev, NEV(ev), 3);
    char *cg = report_str(&prof_callgraph, st, PROF_CALLGRIND, 1.0, NULL);
    assert_true(contains(cg, "fl=dir/prog (v2).lua\nfn=main chunk (dir/prog (v2).lua)\n0 1\n"
                             "cfl=???\ncfn=anonymous\ncalls=1 0\n0 1\n"
                             "cfl=[string \"x:1\"]\ncfn=function <[string \"x:1\"]:7>\ncalls=1 7\n0 1\n"));
    char *out = callgrind_annotate(cg, "");
    if (out) assert_true(contains(out, "PROGRAM TOTALS"));
    free(out);
    free(cg);
    test_names[1] = test_names[2] = test_names[3] = NULL;
    prof_callgraph.close(st);
}

/* -Xprofile.format=html: a page whose data holds "</script><!--" in a name and in a source
 * line still has exactly its two script elements, and the data between the tags is valid
 * JSON with no '<' at all (prof_html.c: every '<' written as \u003c). */
static const char *html_src_file;

static int html_fsource(uint32_t id, ProfSource *out, void *ctx) {
    (void)ctx;
    if (id < 1 || id > 2) return -1;
    *out = (ProfSource){id == 1 ? html_src_file : NULL, id == 1 ? 0 : 3, id == 1 ? 0 : 3};
    return 0;
}

static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_prof_html_page(void **state) {
    (void)state;
    char path[] = "/tmp/prof_html_src_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *sf = fdopen(fd, "w");
    fputs("local s = '</script><!--'\r\nreturn s\n", sf);
    fclose(sf);
    html_src_file = path;
    test_names[1] = "main chunk (x</script><!--.lua)";
    static const uint64_t ev[] = {THREAD(1), CALL(1, 1), CALL(2, 2)};
    const ProfAnalysis *an[] = {&prof_methodcount, &prof_pathprof};
    void *st[] = {prof_methodcount.open(), prof_pathprof.open()};
    feed(&prof_methodcount, st[0], ev, NEV(ev), 3);
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    assert_non_null(f);
    ProfReportOpts o = {.format = PROF_HTML, .sample_rate = 1.0, .fname = test_fname, .fsource = html_fsource};
    const char *argv[] = {"tandem", "-Xprofile=methodcount,pathprof", "x</script><!--.lua"};
    ProfRunStream rs = {"thread 1", 3, 3, 0};
    ProfRunFacts run = {argv, 3, "concurrent", "native", "exhaustive", &rs, 1};
    assert_int_equal(prof_html_report(f, an, st, 2, &o, &run), 0);
    fclose(f);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    assert_int_equal(count_of(page, "</script>"), 2); /* the data's and the viewer's */
    assert_int_equal(count_of(page, "</style>"), 1);
    const char *open = "<script type=\"application/json\" id=\"profile-data\">";
    char *data = strstr(page, open);
    assert_non_null(data);
    data += strlen(open);
    char *end = strstr(data, "</script>");
    *end = '\0';
    assert_null(strchr(data, '<'));
    assert_true(json_valid(data));
    assert_true(json_valid_python(data));
    assert_true(contains(data, "\"main chunk (x\\u003c/script>\\u003c!--.lua)\""));
    assert_true(contains(data, "\"files\":{\"/tmp/prof_html_src_"));
    assert_true(contains(data, "[\"local s = '\\u003c/script>\\u003c!--'\",\"return s\"]")); /* \r dropped */
    assert_true(contains(data, "{\"id\":2,\"name\":\"f2 (t.lua:2)\",\"file\":null,\"first\":3,\"last\":3}"));
    assert_true(contains(data, "\"streams\":[\n{\"name\":\"thread 1\",\"produced\":3,\"consumed\":3,\"dropped\":0}]"));
    assert_true(contains(data, "{\"analysis\":\"methodcount\""));
    assert_true(contains(data, "{\"analysis\":\"pathprof\""));
    free(page);
    unlink(path);
    test_names[1] = NULL;
    prof_methodcount.close(st[0]);
    prof_pathprof.close(st[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prof_names_lists_every_analysis),
        cmocka_unit_test(test_prof_json_strings_escaped),
        cmocka_unit_test(test_prof_error_rate),
        cmocka_unit_test(test_prof_error_tool),
        cmocka_unit_test(test_prof_callgrind_names),
        cmocka_unit_test(test_prof_html_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
