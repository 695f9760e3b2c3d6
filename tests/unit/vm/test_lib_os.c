/* test_lib_os.c: unit tests of the os library (vm_lib_os.c): dates and times in UTC,
 * date tables and their normalisation, file operations, and os.exit's status (checked in a
 * forked child). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_lib.h"

#include "test_snippets.h"

static void test_date_formats_utc(void **state) {
    (void)state;
    assert_runs("assert(os.date('!%Y-%m-%d %H:%M:%S', 1700000000) == '2023-11-14 22:13:20')\n"
                "assert(os.date('!%j %a %b %%', 0) == '001 Thu Jan %')\n"
                "local t = os.date('!*t', 86400) assert(t.year == 1970 and t.day == 2 and t.wday == 6)\n"
                "assert(t.yday == 2 and t.isdst == false and t.hour == 0)\n"
                "assert(type(os.date()) == 'string')");
    assert_fails_with("os.date('%Ez')",
                      "test:1: bad argument #1 to 'date' (invalid conversion specifier '%Ez')");
}

static void test_time_from_table_normalises(void **state) {
    (void)state;
    assert_runs("local now = os.time() assert(math.type(now) == 'integer')\n"
                "local t = {year = 2021, month = 13, day = 32, hour = 0}\n"
                "local v = os.time(t) assert(t.year == 2022 and t.month == 2 and t.day == 1)\n"
                "assert(os.date('*t', v).day == 1)\n"
                "assert(os.time({year = 2000, month = 1, day = 1}) - os.time({year = 2000, month = 1, day = 1, hour = 0}) == 12 * 3600)");
    assert_fails_with("os.time({year = 2000})", "test:1: field 'month' missing in date table");
    assert_fails_with("os.time({year = 2000, month = 1.5, day = 1})",
                      "test:1: field 'month' is not an integer");
}

static void test_clock_difftime_getenv(void **state) {
    (void)state;
    setenv("TANDEM_TEST_VAR", "hello", 1);
    assert_runs("assert(math.type(os.clock()) == 'float' and os.difftime(10, 4) == 6.0)\n"
                "assert(os.getenv('TANDEM_TEST_VAR') == 'hello' and os.getenv('TANDEM_NO_SUCH') == nil)");
    assert_fails_with("os.difftime(1)",
                      "test:1: bad argument #2 to 'difftime' (number expected, got no value)");
}

static void test_remove_rename_tmpname(void **state) {
    (void)state;
    assert_runs("local n = os.tmpname() assert(io.open(n)) local m = n .. '.moved'\n"
                "assert(os.rename(n, m) == true and io.open(n) == nil)\n"
                "assert(os.remove(m) == true)\n"
                "local ok, msg, code = os.remove(m)\n"
                "assert(ok == nil and msg == m .. ': No such file or directory' and code == 2)\n"
                "ok, msg = os.rename(m, n) assert(ok == nil and msg == 'No such file or directory')");
}

static void test_execute_results(void **state) {
    (void)state;
    assert_runs("assert(os.execute() == true)\n"
                "local ok, how, code = os.execute('exit 3') assert(ok == nil and how == 'exit' and code == 3)\n"
                "ok, how, code = os.execute('true') assert(ok == true and how == 'exit' and code == 0)");
}

/* Exit status of a child that runs [code]. */
static int child_status(const char *code) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        run(code);
        _exit(99);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_exit_statuses(void **state) {
    (void)state;
    assert_int_equal(child_status("os.exit(3)"), 3);
    assert_int_equal(child_status("os.exit(true)"), 0);
    assert_int_equal(child_status("os.exit(false)"), 1);
    assert_int_equal(child_status("os.exit()"), 0);
}

static void test_exit_flushes_output(void **state) {
    (void)state;
    char path[] = "/tmp/tandem_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char code[256];
    snprintf(code, sizeof code, "local f = io.open('%s', 'w') f:write('kept') os.exit(0)", path);
    assert_int_equal(child_status(code), 0);
    FILE *f = fopen(path, "r");
    char buf[16] = {0};
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, sizeof buf - 1, f), 4);
    fclose(f);
    unlink(path);
    assert_string_equal(buf, "kept");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_date_formats_utc),
        cmocka_unit_test(test_time_from_table_normalises),
        cmocka_unit_test(test_clock_difftime_getenv),
        cmocka_unit_test(test_remove_rename_tmpname),
        cmocka_unit_test(test_execute_results),
        cmocka_unit_test(test_exit_statuses),
        cmocka_unit_test(test_exit_flushes_output),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
