/* test_lib_io.c: unit tests of the io library (vm_lib_io.c): read formats (lines, numbers,
 * counts, "a"), write results, lines iterators, seek, default files, handle type and
 * closing, and lua5.4's error results. Each case works in its own temporary file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_lib.h"

#include "test_snippets.h"

/* Run [body] with the Lua local 'name' bound to a fresh temporary file path. */
static void assert_runs_with_tmp(const char *body) {
    char path[] = "/tmp/tandem_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    size_t n = strlen(body) + 256;
    char *code = malloc(n);
    snprintf(code, n, "local name = '%s'\n%s", path, body);
    assert_runs(code);
    free(code);
    unlink(path);
}

static void test_read_line_formats(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w') f:write('a\\nb\\n\\nc') f:close()\n"
        "f = io.open(name) local x, y, z, w, v = f:read('L', 'l', 'l', 'l', 'l')\n"
        "assert(x == 'a\\n' and y == 'b' and z == '' and w == 'c' and v == nil)\n"
        "assert(f:read('a') == '' and f:read('l') == nil and f:read(0) == nil) f:close()\n"
        "f = io.open(name) assert(f:read('*l') == 'a' and f:read('*a') == 'b\\n\\nc') f:close()");
}

static void test_read_numbers(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w') f:write('12 0x1F -3.5e2 .5 abc') f:close()\n"
        "f = io.open(name) local a, b, c, d, e = f:read('n', 'n', 'n', 'n', 'n')\n"
        "assert(a == 12 and math.type(a) == 'integer' and b == 31 and c == -350.0 and d == 0.5)\n"
        "assert(e == nil and f:read('a') == 'abc') f:close()\n"
        "f = io.open(name, 'w') f:write(string.rep('1', 250)) f:close()\n"
        "f = io.open(name) assert(f:read('n') == nil) f:close()");
}

static void test_read_counts(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w') f:write('hello') f:close()\n"
        "f = io.open(name) local a, b, c, d = f:read(0, 2, 10, 0)\n"
        "assert(a == '' and b == 'he' and c == 'llo' and d == nil) f:close()\n"
        "f = io.open(name, 'w') f:write(string.rep('x', 100000)) f:close()\n"
        "f = io.open(name) assert(#f:read(70000) == 70000 and #f:read(70000) == 30000) f:close()");
}

static void test_write_returns_file_and_formats_numbers(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w') assert(f:write('a', 1, ' ', 2.5, ' ', 1e100, ' ', 2^63):write('!') == f)\n"
        "f:close() assert(io.open(name):read('a') == 'a1 2.5 1e+100 9.2233720368548e+18!')");
    assert_fails_with("io.write({})",
                      "test:1: bad argument #1 to 'write' (string expected, got table)");
}

static void test_lines_iterators(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w') f:write('1 2\\n3 4\\n') f:close()\n"
        "local n = 0 for l in io.lines(name) do n = n + 1 end assert(n == 2)\n"
        "local s = 0 for a, b in io.lines(name, 'n', 'n') do s = s + a + b end assert(s == 10)\n"
        "local it, _, _, h = io.lines(name) assert(io.type(h) == 'file') it() it() it()\n"
        "assert(io.type(h) == 'closed file')\n"
        "f = io.open(name) for l in f:lines('L') do assert(l:sub(-1) == '\\n') end\n"
        "assert(io.type(f) == 'file') f:close()");
    assert_fails_with("io.lines('/nonexistent/file')",
                      "test:1: cannot open file '/nonexistent/file' (No such file or directory)");
}

static void test_seek_and_append(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w+') f:write('0123456789')\n"
        "assert(f:seek('set', 2) == 2 and f:read(3) == '234' and f:seek() == 5 and f:seek('end') == 10)\n"
        "f:close() f = io.open(name, 'a+') f:write('X') f:seek('set') assert(f:read('a') == '0123456789X') f:close()");
    assert_fails_with("io.stdout:seek('x')",
                      "test:1: bad argument #1 to 'seek' (invalid option 'x')");
}

static void test_open_failures_and_modes(void **state) {
    (void)state;
    assert_runs("local f, msg, code = io.open('/nonexistent/x')\n"
                "assert(f == nil and msg == '/nonexistent/x: No such file or directory' and code == 2)\n"
                "assert(io.open('/tmp', 'rb'))");
    assert_fails_with("io.open('x', 'rw')", "test:1: bad argument #2 to 'open' (invalid mode)");
}

static void test_close_and_type(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "local f = io.open(name, 'w') assert(io.type(f) == 'file' and tostring(f):match('^file %(0x'))\n"
        "assert(f:close() == true and io.type(f) == 'closed file' and tostring(f) == 'file (closed)')\n"
        "local ok, e = pcall(f.write, f, 'x') assert(not ok and e:find('attempt to use a closed file'))\n"
        "assert(io.type(1) == nil and io.type(io.stdout) == 'file')\n"
        "local a, b = io.stdout:close() assert(a == nil and b == 'cannot close standard file')\n"
        "do local h <close> = io.open(name) g = h end assert(io.type(g) == 'closed file')");
}

static void test_default_files(void **state) {
    (void)state;
    assert_runs_with_tmp(
        "assert(io.input() == io.stdin and io.output() == io.stdout)\n"
        "io.output(name) io.write('via default') io.close() io.output(io.stdout)\n"
        "io.input(name) assert(io.read('a') == 'via default') io.input():close()\n"
        "local ok, e = pcall(io.read) assert(not ok and e:find('default input file is closed'))\n"
        "io.input(io.stdin)");
}

static void test_popen_and_tmpfile(void **state) {
    (void)state;
    assert_runs("local p = io.popen('echo hi') assert(p:read('l') == 'hi')\n"
                "local ok, how, code = p:close() assert(ok == true and how == 'exit' and code == 0)\n"
                "p = io.popen('exit 3') ok, how, code = p:close() assert(ok == nil and code == 3)\n"
                "local t = io.tmpfile() t:write('abc') t:seek('set') assert(t:read('a') == 'abc') t:close()");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_line_formats),
        cmocka_unit_test(test_read_numbers),
        cmocka_unit_test(test_read_counts),
        cmocka_unit_test(test_write_returns_file_and_formats_numbers),
        cmocka_unit_test(test_lines_iterators),
        cmocka_unit_test(test_seek_and_append),
        cmocka_unit_test(test_open_failures_and_modes),
        cmocka_unit_test(test_close_and_type),
        cmocka_unit_test(test_default_files),
        cmocka_unit_test(test_popen_and_tmpfile),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
