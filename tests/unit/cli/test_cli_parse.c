/* test_cli_parse.c: the command line's one number grammar (cli/cli_parse.c): counts, sizes
 * with k/m/g, fractions and percentages, cache geometries. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_parse.h"

static void test_sizes(void **state) {
    (void)state;
    uint64_t v;
    assert_true(cli_parse_size("2m", 0, UINT64_MAX, &v));
    assert_int_equal(v, 2u << 20);
    assert_true(cli_parse_size("512k", 0, UINT64_MAX, &v));
    assert_int_equal(v, 512u << 10);
    assert_true(cli_parse_size("16384", 0, UINT64_MAX, &v));
    assert_int_equal(v, 16384);
    assert_true(cli_parse_size("1G", 0, UINT64_MAX, &v));
    assert_int_equal(v, (uint64_t)1 << 30);
    assert_true(cli_parse_size("4K", 0, UINT64_MAX, &v));
    assert_int_equal(v, 4096);
    assert_true(cli_parse_size("64KB", 0, UINT64_MAX, &v));
    assert_int_equal(v, 65536);
    v = 7;
    assert_false(cli_parse_size("", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size(NULL, 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("k", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("12q", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("2mbb", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("12b", 0, UINT64_MAX, &v)); /* b only after a suffix */
    assert_false(cli_parse_size("-1", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size(" 1", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("99999999999999999999999", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("99999999999g", 0, UINT64_MAX, &v));
    assert_false(cli_parse_size("0", 1, UINT64_MAX, &v)); /* range */
    assert_false(cli_parse_size("2k", 0, 2047, &v));
    assert_int_equal(v, 7); /* untouched on failure */
}

static void test_counts(void **state) {
    (void)state;
    uint64_t v;
    assert_true(cli_parse_count("0", 0, 10, &v));
    assert_int_equal(v, 0);
    assert_true(cli_parse_count("4294967295", 2, 0xffffffffu, &v));
    assert_int_equal(v, 0xffffffffu);
    assert_false(cli_parse_count("4294967296", 2, 0xffffffffu, &v));
    assert_false(cli_parse_count("1", 2, 10, &v));
    assert_false(cli_parse_count("4k", 0, UINT64_MAX, &v)); /* no suffix in a count */
    assert_false(cli_parse_count("+3", 0, 10, &v));
    assert_false(cli_parse_count("3 ", 0, 10, &v));
}

static void test_fractions(void **state) {
    (void)state;
    double r;
    assert_true(cli_parse_fraction("0.05", &r));
    assert_true(r == 0.05);
    assert_true(cli_parse_fraction("5%", &r));
    assert_true(r == 0.05);
    assert_true(cli_parse_fraction("100%", &r));
    assert_true(r == 1.0);
    assert_true(cli_parse_fraction("1", &r));
    assert_false(cli_parse_fraction("0", &r));
    assert_false(cli_parse_fraction("150%", &r));
    assert_false(cli_parse_fraction("1.5", &r));
    assert_false(cli_parse_fraction("5%%", &r));
    assert_false(cli_parse_fraction("x", &r));
    assert_false(cli_parse_fraction("", &r));
    assert_false(cli_parse_fraction("nan", &r));
}

static void test_geometries(void **state) {
    (void)state;
    uint64_t size, ways;
    assert_true(cli_parse_geometry("32k:4", &size, &ways));
    assert_int_equal(size, 32768);
    assert_int_equal(ways, 4);
    assert_true(cli_parse_geometry("64KB:8", &size, &ways));
    assert_int_equal(size, 65536);
    assert_int_equal(ways, 8);
    assert_true(cli_parse_geometry("256:2", &size, &ways));
    assert_int_equal(size, 256);
    assert_false(cli_parse_geometry("32k", &size, &ways));
    assert_false(cli_parse_geometry("x:8", &size, &ways));
    assert_false(cli_parse_geometry("32k:4x", &size, &ways));
    assert_false(cli_parse_geometry("32k:", &size, &ways));
    assert_false(cli_parse_geometry("32k:4k", &size, &ways));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_fractions),
        cmocka_unit_test(test_geometries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
