/* test_string.c: unit tests of vm_string.c: allocation, hashing, equality and ordering. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_state.h"
#include "vm_string.h"

static State *S;

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* Sign of an int, so that comparisons can be checked against Lua's true/false. */
static int sign(int x) { return (x > 0) - (x < 0); }

static String *lit(const char *s, size_t len) { return vm_string_new(S, s, len); }

/* ---------------------------------------------------------------------- */

static void test_vm_string_new_copies_bytes_with_nuls(void **state) {
    (void)state;
    char src[] = {'a', '\0', 'b', '\0', 'c'};
    String *s = vm_string_new(S, src, sizeof src);
    assert_int_equal(s->h.type, VT_STR);
    assert_int_equal(s->len, 5);
    assert_memory_equal(s->data, src, 5);
    assert_int_equal(s->data[5], '\0');
    src[0] = 'x';   /* a copy, not a view */
    assert_int_equal(s->data[0], 'a');
}

static void test_vm_string_newc_and_alloc(void **state) {
    (void)state;
    String *a = vm_string_newc(S, "hello");
    assert_int_equal(a->len, 5);
    assert_string_equal(a->data, "hello");
    String *e = vm_string_newc(S, "");
    assert_int_equal(e->len, 0);
    assert_int_equal(e->data[0], '\0');
    String *b = vm_string_alloc(S, 5);
    assert_int_equal(b->len, 5);
    assert_int_equal(b->data[5], '\0');
    memcpy(b->data, "hello", 5);
    assert_true(vm_string_eq(a, b));
    assert_int_equal(vm_string_hash(a), vm_string_hash(b));
}

static void test_vm_string_hash_equal_bytes_equal_hash(void **state) {
    (void)state;
    /* every length around the block boundaries of the hash, with embedded NULs */
    char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)(i % 7 == 0 ? 0 : 'a' + i % 26);
    for (size_t len = 0; len < sizeof buf; len++) {
        String *a = lit(buf, len), *b = lit(buf, len);
        assert_ptr_not_equal(a, b);
        uint32_t ha = vm_string_hash(a);
        assert_int_not_equal(ha, 0);
        assert_int_equal(ha, a->hash);   /* cached */
        assert_int_equal(ha, vm_string_hash(b));
        assert_true(vm_string_eq(a, b));
    }
}

static void test_vm_string_hash_every_byte_counts(void **state) {
    (void)state;
    /* changing any single byte (including a NUL, and deep inside long strings) changes the
     * hash: a sampled hash would miss most of these */
    static char buf[5000];
    size_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100, 200, 4999};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t len = lens[li];
        for (size_t i = 0; i < len; i++) buf[i] = (char)(i * 31 + 7);
        uint32_t base = vm_string_hash(lit(buf, len));
        size_t step = len > 300 ? 13 : 1;
        for (size_t i = 0; i < len; i += step) {
            char save = buf[i];
            buf[i] = (char)(save ^ 1);
            assert_int_not_equal(vm_string_hash(lit(buf, len)), base);
            buf[i] = 0;
            if (save != 0) assert_int_not_equal(vm_string_hash(lit(buf, len)), base);
            buf[i] = save;
        }
        /* a trailing NUL makes a different string */
        buf[len] = 0;
        assert_int_not_equal(vm_string_hash(lit(buf, len + 1)), base);
    }
}

static void test_vm_string_hash_spreads_low_bits(void **state) {
    (void)state;
    /* tables index nodes by the low bits: keys "k0".."k99999" over 1024 buckets should be
     * close to uniform (mean 97.7) */
    enum { N = 100000, B = 1024 };
    static unsigned counts[B];
    memset(counts, 0, sizeof counts);
    char buf[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "k%d", i);
        counts[vm_string_hash(lit(buf, (size_t)n)) & (B - 1)]++;
    }
    unsigned max = 0, min = N;
    for (int b = 0; b < B; b++) {
        if (counts[b] > max) max = counts[b];
        if (counts[b] < min) min = counts[b];
    }
    assert_true(max < 150);
    assert_true(min > 50);
}

static void test_vm_string_eq_embedded_nuls(void **state) {
    (void)state;
    String *a = lit("a\0b", 3), *b = lit("a\0b", 3), *c = lit("a\0c", 3), *d = lit("a", 1);
    assert_true(vm_string_eq(a, a));
    assert_true(vm_string_eq(a, b));
    assert_false(vm_string_eq(a, c));
    assert_false(vm_string_eq(a, d));   /* strcmp would say equal */
    assert_int_not_equal(vm_string_hash(a), vm_string_hash(d));
}

static void test_vm_string_cmp_orders_as_lua(void **state) {
    (void)state;
    /* expected signs from lua5.4 (a < b printed true: -1) */
    static const struct {
        const char *a;
        size_t la;
        const char *b;
        size_t lb;
        int want;
    } cases[] = {
        {"a", 1, "b", 1, -1},
        {"", 0, "a", 1, -1},
        {"", 0, "", 0, 0},
        {"abc", 3, "abc", 3, 0},
        {"abc", 3, "abd", 3, -1},
        {"Z", 1, "a", 1, -1},
        {"\200", 1, "a", 1, 1},          /* bytes are unsigned */
        {"a", 1, "a\0", 2, -1},          /* a prefix is smaller, even before a NUL */
        {"a\0", 2, "a\1", 2, -1},
        {"a\0b", 3, "a\0c", 3, -1},      /* pieces after a NUL count */
        {"", 0, "\0", 1, -1},
        {"a\0\0", 3, "a\0", 2, 1},
        {"ab", 2, "a\0c", 3, 1},
        {"a\0b", 3, "a\0b", 3, 0},
        {"a\0", 2, "a\0", 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        String *a = lit(cases[i].a, cases[i].la), *b = lit(cases[i].b, cases[i].lb);
        assert_int_equal(sign(vm_string_cmp(a, b)), cases[i].want);
        assert_int_equal(sign(vm_string_cmp(b, a)), -cases[i].want);
    }
}

static void test_vm_string_cmp_long_common_prefix(void **state) {
    (void)state;
    enum { N = 10000 };
    static char x[N], y[N];
    memset(x, 'q', N);
    memset(y, 'q', N);
    y[N - 1] = 'r';
    assert_true(vm_string_cmp(lit(x, N), lit(y, N)) < 0);
    assert_true(vm_string_cmp(lit(x, N), lit(x, N - 1)) > 0);
    x[5000] = '\0';
    y[5000] = '\0';
    assert_true(vm_string_cmp(lit(x, N), lit(y, N)) < 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_string_new_copies_bytes_with_nuls),
        cmocka_unit_test(test_vm_string_newc_and_alloc),
        cmocka_unit_test(test_vm_string_hash_equal_bytes_equal_hash),
        cmocka_unit_test(test_vm_string_hash_every_byte_counts),
        cmocka_unit_test(test_vm_string_hash_spreads_low_bits),
        cmocka_unit_test(test_vm_string_eq_embedded_nuls),
        cmocka_unit_test(test_vm_string_cmp_orders_as_lua),
        cmocka_unit_test(test_vm_string_cmp_long_common_prefix),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
