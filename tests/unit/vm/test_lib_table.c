/* test_lib_table.c: unit tests of the table library (vm_lib_table.c): Lua snippets ending
 * in asserts, lua5.4's error messages, metamethod-aware access, and sort's handling of
 * comparators (valid, invalid, erroring) and large inputs. */
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

/* ======================================================================
 * insert, remove
 * ====================================================================== */

static void test_insert_append_and_position(void **state) {
    (void)state;
    assert_runs("local t = {1, 2, 3} table.insert(t, 4) table.insert(t, 1, 0) table.insert(t, 6, 5)\n"
                "assert(table.concat(t, ',') == '0,1,2,3,4,5')");
    assert_fails_with("table.insert({}, 1, 2, 3)", "test:1: wrong number of arguments to 'insert'");
    assert_fails_with("table.insert({1}, 3, 2)",
                      "test:1: bad argument #2 to 'insert' (position out of bounds)");
    assert_fails_with("table.insert({1}, 0, 2)",
                      "test:1: bad argument #2 to 'insert' (position out of bounds)");
}

static void test_remove_semantics(void **state) {
    (void)state;
    assert_runs("local t = {1, 2, 3}\n"
                "assert(table.remove(t) == 3 and table.remove(t, 1) == 1 and #t == 1 and t[1] == 2)\n"
                "assert(table.remove({}) == nil and table.remove({1, 2}, 3) == nil)\n"
                "local z = {[0] = 'z'} assert(table.remove(z, 0) == 'z' and z[0] == nil)");
    assert_fails_with("table.remove({1, 2}, 5)",
                      "test:1: bad argument #1 to 'remove' (position out of bounds)");
}

static void test_insert_remove_through_metamethods(void **state) {
    (void)state;
    assert_runs("local store, log = {10, 20}, {}\n"
                "local p = setmetatable({}, {__index = function(_, k) return store[k] end,\n"
                "  __newindex = function(_, k, v) log[#log + 1] = k store[k] = v end,\n"
                "  __len = function() return #store end})\n"
                "table.insert(p, 30) table.insert(p, 1, 5)\n"
                "assert(table.concat(store, ',') == '5,10,20,30' and #log == 5)\n"
                "assert(table.remove(p, 1) == 5 and table.concat(store, ',') == '10,20,30')");
}

/* ======================================================================
 * concat, pack, unpack, move
 * ====================================================================== */

static void test_concat_forms(void **state) {
    (void)state;
    assert_runs("assert(table.concat({1, 2.5, 'x'}, ', ') == '1, 2.5, x')\n"
                "assert(table.concat({}) == '' and table.concat({1, 2, 3}, '-', 2, 3) == '2-3')\n"
                "assert(table.concat({1, 2}, '', 3, 2) == '' and table.concat({1.0}) == '1.0')");
    assert_fails_with("table.concat({1, {}})",
                      "test:1: invalid value (table) at index 2 in table for 'concat'");
    assert_fails_with("table.concat({}, ',', 1, 2)",
                      "test:1: invalid value (nil) at index 1 in table for 'concat'");
}

static void test_pack_unpack(void **state) {
    (void)state;
    assert_runs("local t = table.pack(1, nil, 3) assert(t.n == 3 and t[3] == 3)\n"
                "assert(table.pack().n == 0 and select('#', table.unpack({}, 1, 3)) == 3)\n"
                "local a, b = table.unpack({1, 2, 3}, 2) assert(a == 2 and b == 3)\n"
                "assert(select('#', table.unpack({1, 2}, 3, 2)) == 0)");
    assert_fails_with("table.unpack({}, 1, 1e8)", "test:1: too many results to unpack");
    assert_fails_with("table.unpack({}, math.mininteger, math.maxinteger)",
                      "test:1: too many results to unpack");
}

static void test_move_overlaps(void **state) {
    (void)state;
    assert_runs("assert(table.concat(table.move({1, 2, 3, 4, 5}, 1, 5, 3), ',') == '1,2,1,2,3,4,5')\n"
                "assert(table.concat(table.move({1, 2, 3, 4, 5}, 2, 5, 1), ',') == '2,3,4,5,5')\n"
                "local d = table.move({1, 2}, 1, 2, 1, {}) assert(#d == 2)");
    assert_fails_with("table.move({}, 1, math.maxinteger, 2)",
                      "test:1: bad argument #4 to 'move' (destination wrap around)");
}

/* ======================================================================
 * sort
 * ====================================================================== */

static void test_sort_default_and_comparator(void **state) {
    (void)state;
    assert_runs("local t = {5, 3, 8, 1, 9, 2} table.sort(t) assert(table.concat(t, ' ') == '1 2 3 5 8 9')\n"
                "table.sort(t, function(a, b) return a > b end) assert(table.concat(t, ' ') == '9 8 5 3 2 1')\n"
                "local w = {'pear', 'apple', 'fig'} table.sort(w) assert(table.concat(w, ' ') == 'apple fig pear')\n"
                "local m = {3, 1.5, 2, -1} table.sort(m) assert(table.concat(m, ' ') == '-1 1.5 2 3')");
}

static void test_sort_uses_lt_metamethod(void **state) {
    (void)state;
    assert_runs("local V = {__lt = function(a, b) return a.v < b.v end}\n"
                "local o = {} for i, v in ipairs({5, 3, 9, 1}) do o[i] = setmetatable({v = v}, V) end\n"
                "table.sort(o) assert(o[1].v == 1 and o[4].v == 9)");
}

static void test_sort_large_and_sorted_inputs(void **state) {
    (void)state;
    assert_runs("local t = {} for i = 1, 20000 do t[i] = (i * 7919) % 20011 end table.sort(t)\n"
                "for i = 2, #t do assert(t[i - 1] <= t[i]) end\n"
                "local s = {} for i = 1, 5000 do s[i] = i end table.sort(s, function(a, b) return a > b end)\n"
                "assert(s[1] == 5000 and s[5000] == 1)\n"
                "local e = {} for i = 1, 3000 do e[i] = 7 end table.sort(e) assert(e[3000] == 7)");
}

static void test_sort_invalid_order_and_errors(void **state) {
    (void)state;
    assert_runs("local t = {} for i = 1, 100 do t[i] = 5 end\n"
                "local ok, e = pcall(table.sort, t, function(a, b) return true end)\n"
                "assert(not ok and e:find('invalid order function for sorting'))\n"
                "ok, e = pcall(table.sort, {3, 1, 'x'}) assert(not ok and e:find('attempt to compare'))\n"
                "ok, e = pcall(table.sort, {3, 2, 1}, function() error('cmp') end) assert(e:find('cmp'))");
    assert_fails_with("table.sort({1, 2}, 3)",
                      "test:1: bad argument #2 to 'sort' (function expected, got number)");
}

static void test_sort_comparator_modifying_table(void **state) {
    (void)state;
    /* the comparator grows the table while sorting: must not crash */
    assert_runs("local t = {} for i = 1, 50 do t[i] = 51 - i end\n"
                "pcall(table.sort, t, function(a, b) t[#t + 1] = 0 return a < b end)\n"
                "assert(#t >= 50)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_append_and_position),
        cmocka_unit_test(test_remove_semantics),
        cmocka_unit_test(test_insert_remove_through_metamethods),
        cmocka_unit_test(test_concat_forms),
        cmocka_unit_test(test_pack_unpack),
        cmocka_unit_test(test_move_overlaps),
        cmocka_unit_test(test_sort_default_and_comparator),
        cmocka_unit_test(test_sort_uses_lt_metamethod),
        cmocka_unit_test(test_sort_large_and_sorted_inputs),
        cmocka_unit_test(test_sort_invalid_order_and_errors),
        cmocka_unit_test(test_sort_comparator_modifying_table),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
