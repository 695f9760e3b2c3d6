/* prof_test.h: helpers for the profilers' unit tests: event builders, a name callback,
 * reports captured into strings, a minimal JSON checker, folded-stack parsing, and running
 * callgrind_annotate on a callgrind report. Header-only (each test is one executable). */
#ifndef PROF_TEST_H
#define PROF_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "prof_api.h"
#include "ev_api.h"

/* ---------------------------------------------------------------------- */
/* Events                                                                 */
/* ---------------------------------------------------------------------- */

/* Macros, not functions: they initialise static arrays. */
#define EVK(k, p) (((uint64_t)(k) << EV_KIND_SHIFT) | ((uint64_t)(p) & EV_PAYLOAD_MASK))
#define CALL(fid, depth) EVK(EV_CALL, (uint64_t)(depth) << 32 | (uint32_t)(fid))
#define SITE(pc) EVK(EV_SITE, (uint32_t)(pc))
#define RET(depth) EVK(EV_RETURN, (depth))
#define THREAD(id) EVK(EV_THREAD, (id))
#define LOAD(a) EVK(EV_LOAD, (a))
#define STORE(a) EVK(EV_STORE, (a))
#define PC(fid, pc) EVK(EV_PC, (uint64_t)(fid) << 32 | (uint32_t)(pc))

#define NEV(a) (sizeof(a) / sizeof((a)[0]))

/* Feeds [n] events one call per [chunk] events (as an analyzer gets them in chunks). */
static inline void feed(const ProfAnalysis *an, void *st, const uint64_t *ev, size_t n, size_t chunk) {
    for (size_t i = 0; i < n; i += chunk) an->consume(st, ev + i, n - i < chunk ? n - i : chunk);
}

/* ---------------------------------------------------------------------- */
/* Names: function id k is "f<k> (t.lua:<k>)"; ids listed in test_names get those names */
/* ---------------------------------------------------------------------- */

static const char *test_names[64];

static inline const char *test_fname(uint32_t id, void *ctx) {
    static char buf[64][48];
    (void)ctx;
    if (id < 64 && test_names[id]) return test_names[id];
    if (id >= 64) return "f? (t.lua:0)";
    snprintf(buf[id], sizeof buf[id], "f%u (t.lua:%u)", id, id);
    return buf[id];
}

/* The report of [st] in [fmt] at [rate] as a malloc'd string (the caller frees); *[rc]
 * gets report's return value. */
static inline char *report_str(const ProfAnalysis *an, void *st, ProfFormat fmt, double rate, int *rc) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    ProfReportOpts o = {.format = fmt, .sample_rate = rate, .fname = test_fname};
    int r = an->report(st, f, &o);
    fclose(f);
    if (rc) *rc = r;
    return buf;
}

static inline int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* ---------------------------------------------------------------------- */
/* Minimal JSON checker (RFC 8259 syntax; strings must be valid escapes)    */
/* ---------------------------------------------------------------------- */

static const char *json_value(const char *p, int depth);

static inline const char *json_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static inline const char *json_string(const char *p) {
    if (*p++ != '"') return NULL;
    while (*p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c == 0 || c < 0x20) return NULL;
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || p[i] == 0) return NULL;
                p += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", *p) || *p == 0) return NULL;
        }
        p++;
    }
    return p + 1;
}

static inline const char *json_number(const char *p) {
    const char *s = p;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return NULL;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return NULL;
        while (*p >= '0' && *p <= '9') p++;
    }
    return p > s ? p : NULL;
}

static const char *json_value(const char *p, int depth) {
    if (depth > 200) return NULL;
    p = json_ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = json_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (obj) {
                p = json_string(json_ws(p));
                if (p == NULL) return NULL;
                p = json_ws(p);
                if (*p++ != ':') return NULL;
            }
            p = json_value(p, depth + 1);
            if (p == NULL) return NULL;
            p = json_ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == close) return p + 1;
            return NULL;
        }
    }
    if (*p == '"') return json_string(p);
    if (strncmp(p, "true", 4) == 0) return p + 4;
    if (strncmp(p, "false", 5) == 0) return p + 5;
    if (strncmp(p, "null", 4) == 0) return p + 4;
    return json_number(p);
}

/* 1 if [s] is exactly one JSON document (surrounding whitespace allowed). */
static inline int json_valid(const char *s) {
    const char *p = json_value(s, 0);
    return p != NULL && *json_ws(p) == '\0';
}

/* If python3 is there, also check [s] with its json module; 1 if fine or no python3. */
static inline int json_valid_python(const char *s) {
    if (system("command -v python3 >/dev/null 2>&1") != 0) return 1;
    char path[] = "/tmp/prof_test_json_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    FILE *f = fdopen(fd, "w");
    fputs(s, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' %s", path);
    int rc = system(cmd);
    unlink(path);
    return rc == 0;
}

/* ---------------------------------------------------------------------- */
/* Folded stacks                                                          */
/* ---------------------------------------------------------------------- */

/* Checks that every line of [folded] is "<frames> <count>" with a positive count and that
 * the lines are exactly [expected] (in any order): [n] strings "a;b;c count". */
static inline void check_folded(const char *folded, const char *const *expected, size_t n) {
    size_t lines = 0;
    int *seen = calloc(n + 1, sizeof *seen);
    for (const char *p = folded; *p;) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        size_t len = (size_t)(e - p);
        const char *sp = p + len;
        while (sp > p && sp[-1] != ' ') sp--;
        assert_true(sp > p + 1);                                  /* frames, a space, a count */
        assert_true(strspn(sp, "0123456789") == (size_t)(e - sp)); /* the count is a number */
        assert_true(atoll(sp) > 0);
        int found = 0;
        for (size_t i = 0; i < n; i++)
            if (!seen[i] && strlen(expected[i]) == len && memcmp(expected[i], p, len) == 0) {
                seen[i] = found = 1;
                break;
            }
        if (!found) fail_msg("unexpected folded line: %.*s", (int)len, p);
        lines++;
        p = e + 1;
    }
    assert_int_equal(lines, n);
    free(seen);
}

/* ---------------------------------------------------------------------- */
/* callgrind_annotate                                                     */
/* ---------------------------------------------------------------------- */

/* Runs callgrind_annotate (extra options [opts]) on [text]; returns its output (malloc'd),
 * or NULL if callgrind_annotate is not installed. Fails the test if it rejects the file. */
static inline char *callgrind_annotate(const char *text, const char *opts) {
    if (system("command -v callgrind_annotate >/dev/null 2>&1") != 0) return NULL;
    char in[] = "/tmp/prof_test_cg_XXXXXX";
    int fd = mkstemp(in);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    char out[64];
    snprintf(out, sizeof out, "%s.out", in);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "callgrind_annotate %s %s > %s 2>&1", opts, in, out);
    int rc = system(cmd);
    FILE *r = fopen(out, "r");
    assert_non_null(r);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, r);
    buf[n] = 0;
    fclose(r);
    unlink(in);
    unlink(out);
    if (rc != 0) fail_msg("callgrind_annotate rejected the report (status %d):\n%s\n--- report:\n%s", rc, buf, text);
    return buf;
}

#endif
