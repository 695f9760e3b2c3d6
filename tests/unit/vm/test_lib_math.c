/* test_lib_math.c: unit tests of the math library (vm_lib_math.c): integer/float results
 * as lua5.4, error messages, and the random generator's sequence for a fixed seed (the
 * expected numbers come from lua5.4). */
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

static void test_floor_ceil_integer_results(void **state) {
    (void)state;
    assert_runs("assert(math.floor(3.7) == 3 and math.type(math.floor(3.7)) == 'integer')\n"
                "assert(math.ceil(-3.7) == -3 and math.type(math.ceil(3.2)) == 'integer')\n"
                "assert(math.type(math.floor(2^70)) == 'float' and math.floor(5) == 5)\n"
                "assert(math.floor(-2^63) == math.mininteger and math.floor('3.7') == 3)");
    assert_fails_with("math.floor({})",
                      "test:1: bad argument #1 to 'floor' (number expected, got table)");
}

static void test_abs_fmod_modf(void **state) {
    (void)state;
    assert_runs("assert(math.abs(math.mininteger) == math.mininteger and math.abs(-2.5) == 2.5)\n"
                "assert(math.fmod(-7, 3) == -1 and math.type(math.fmod(7, 3)) == 'integer')\n"
                "assert(math.fmod(7, -3) == 1 and math.fmod(-7.5, 2) == -1.5)\n"
                "assert(math.fmod(math.mininteger, -1) == 0)\n"
                "local i, f = math.modf(3.7) assert(i == 3 and math.type(i) == 'integer' and math.abs(f - 0.7) < 1e-12)\n"
                "i, f = math.modf(-1/0) assert(i == -1/0 and f == 0.0)\n"
                "i, f = math.modf(5) assert(i == 5 and math.type(f) == 'float')");
    assert_fails_with("math.fmod(1, 0)", "test:1: bad argument #2 to 'fmod' (zero)");
}

static void test_float_functions(void **state) {
    (void)state;
    assert_runs("assert(math.sqrt(16) == 4.0 and math.exp(0) == 1.0 and math.log(8, 2) == 3.0)\n"
                "assert(math.log(1000, 10) == 3.0 and math.abs(math.log(27, 3) - 3) < 1e-12)\n"
                "assert(math.abs(math.atan(1, 1) - math.pi / 4) < 1e-15 and math.cos(0) == 1.0)\n"
                "assert(math.huge == 1/0 and math.pi > 3.14159 and math.maxinteger + 1 == math.mininteger)");
}

static void test_tointeger_type_ult(void **state) {
    (void)state;
    assert_runs("assert(math.tointeger(3.0) == 3 and math.tointeger(3.5) == nil and math.tointeger('8') == 8)\n"
                "assert(math.tointeger(2^63) == nil and math.type(1) == 'integer' and math.type(1.0) == 'float')\n"
                "assert(math.type('1') == nil and math.ult(1, -1) and not math.ult(-1, 1))");
    assert_fails_with("math.type()", "test:1: bad argument #1 to 'type' (value expected)");
}

static void test_max_min_keep_integers(void **state) {
    (void)state;
    assert_runs("assert(math.type(math.max(3, 3.0)) == 'integer' and math.type(math.max(3.0, 3)) == 'float')\n"
                "assert(math.max(1, 5, 3) == 5 and math.min(1.5, 0.5) == 0.5 and math.max(2^53, 1) == 2^53)");
    assert_fails_with("math.max()", "test:1: bad argument #1 to 'max' (value expected)");
}

static void test_random_matches_lua_sequence(void **state) {
    (void)state;
    /* values printed by lua5.4 after math.randomseed(42) */
    assert_runs("math.randomseed(42)\n"
                "assert(string.format('%.14g', math.random()) == '0.93081217803957')\n"
                "assert(math.random(10) == 2 and math.random(5, 100) == 80)\n"
                "assert(math.random(0) == -3807604385970496171 and math.random(-10, 10) == -4)\n"
                "assert(math.random(math.mininteger, math.maxinteger) == 3891836817331783281)\n"
                "math.randomseed(42, 7) assert(math.random(1, 1000000) == 412209)\n"
                "local a, b = math.randomseed(42) assert(a == 42 and b == 0)");
}

static void test_random_ranges_and_errors(void **state) {
    (void)state;
    assert_runs("for i = 1, 1000 do local r = math.random(3, 5) assert(r >= 3 and r <= 5) end\n"
                "for i = 1, 1000 do local r = math.random() assert(r >= 0 and r < 1) end\n"
                "assert(math.random(7, 7) == 7)");
    assert_fails_with("math.random(2, 1)",
                      "test:1: bad argument #1 to 'random' (interval is empty)");
    assert_fails_with("math.random(1, 2, 3)", "test:1: wrong number of arguments");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor_ceil_integer_results),
        cmocka_unit_test(test_abs_fmod_modf),
        cmocka_unit_test(test_float_functions),
        cmocka_unit_test(test_tointeger_type_ult),
        cmocka_unit_test(test_max_min_keep_integers),
        cmocka_unit_test(test_random_matches_lua_sequence),
        cmocka_unit_test(test_random_ranges_and_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
