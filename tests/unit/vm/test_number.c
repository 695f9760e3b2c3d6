/* test_number.c: unit tests of vm_number.c: numerals, formatting, conversions and Lua's
 * integer/float arithmetic. Expected values were obtained from lua5.4 (5.4.4), e.g.
 *   lua5.4 -e 'print(math.type(tonumber("0x1p4")), string.format("%a", tonumber("0x1p4")))' */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_number.h"
#include "vm_state.h"
#include "vm_string.h"

static State *S;

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* a string literal and its length, embedded NULs included */
#define LIT(x) x, sizeof(x) - 1

enum { NONE, INT, FLT };

static const struct {
    const char *s;
    size_t len;
    int type;
    vm_Integer i;
    double d;
} numerals[] = {
    {LIT("0x1p4"), FLT, 0, 0x1p+4},
    {LIT("1e15"), FLT, 0, 1e15},
    {LIT(" 10 "), INT, 10, 0},
    {LIT("10 x"), NONE, 0, 0},
    {LIT("0x"), NONE, 0, 0},
    {LIT("0x.1"), FLT, 0, 0x1p-4},
    {LIT("0x1.8p3"), FLT, 0, 12.0},
    {LIT("0x.p1"), NONE, 0, 0},
    {LIT("0x1p"), NONE, 0, 0},
    {LIT("inf"), NONE, 0, 0},
    {LIT("nan"), NONE, 0, 0},
    {LIT("-inf"), NONE, 0, 0},
    {LIT("infinity"), NONE, 0, 0},
    {LIT(""), NONE, 0, 0},
    {LIT(" "), NONE, 0, 0},
    {LIT("1e"), NONE, 0, 0},
    {LIT("1e+"), NONE, 0, 0},
    {LIT(".5"), FLT, 0, 0.5},
    {LIT("5."), FLT, 0, 5.0},
    {LIT("."), NONE, 0, 0},
    {LIT("-.5"), FLT, 0, -0.5},
    {LIT("+5"), INT, 5, 0},
    {LIT("+-5"), NONE, 0, 0},
    {LIT("- 5"), NONE, 0, 0},
    {LIT("0xA"), INT, 10, 0},
    {LIT("-0xA"), INT, -10, 0},
    {LIT("0xffffffffffffffff"), INT, -1, 0},
    {LIT("0x10000000000000000"), INT, 0, 0},
    {LIT("0x7fffffffffffffff"), INT, INT64_MAX, 0},
    {LIT("9223372036854775807"), INT, INT64_MAX, 0},
    {LIT("9223372036854775808"), FLT, 0, 0x1p+63},
    {LIT("-9223372036854775808"), INT, INT64_MIN, 0},
    {LIT("-9223372036854775809"), FLT, 0, -0x1p+63},
    {LIT("1e400"), FLT, 0, HUGE_VAL},
    {LIT("-1e400"), FLT, 0, -HUGE_VAL},
    {LIT("1e-400"), FLT, 0, 0.0},
    {LIT("0x1P-1074"), FLT, 0, 0x0.0000000000001p-1022},
    {LIT("0x1p-1075"), FLT, 0, 0.0},
    {LIT("0x1.8p-1074"), FLT, 0, 0x0.0000000000002p-1022},
    {LIT("0x1.fffffffffffff8p1023"), FLT, 0, HUGE_VAL},
    {LIT("0x1.fffffffffffff7p1023"), FLT, 0, 0x1.fffffffffffffp+1023},
    {LIT("0x.8"), FLT, 0, 0.5},
    {LIT("0X1P+4"), FLT, 0, 16.0},
    {LIT("0x1.0000000000000080000000001p0"), FLT, 0, 1.0},
    {LIT("0x1.00000000000000800p0"), FLT, 0, 1.0},
    {LIT("0x1.00000000000001800p0"), FLT, 0, 1.0},
    {LIT("0x1.00000000000008p0"), FLT, 0, 1.0},                      /* tie: to even */
    {LIT("0x1.0000000000000801p0"), FLT, 0, 0x1.0000000000001p+0},    /* just above the tie */
    {LIT("0x1.00000000000018p0"), FLT, 0, 0x1.0000000000002p+0},      /* tie: to even, up */
    {LIT("0x1.000000000000080000000000000000000001p0"), FLT, 0, 0x1.0000000000001p+0},
    {LIT("0x1.00000000000017ffffffffffffffffffp0"), FLT, 0, 0x1.0000000000001p+0},
    {LIT("0x10000000000000081p-64"), FLT, 0, 1.0},
    {LIT("1E2"), FLT, 0, 100.0},
    {LIT("1e-2"), FLT, 0, 0x1.47ae147ae147bp-7},
    {LIT("\t\n12\v\f\r"), INT, 12, 0},
    {LIT("0x1e"), INT, 30, 0},
    {LIT("0x1E+2"), NONE, 0, 0},
    {LIT("00012"), INT, 12, 0},
    {LIT("0012.5"), FLT, 0, 12.5},
    {LIT("1.5e+300"), FLT, 0, 0x1.1eb2d66005835p+997},
    {LIT("12345678901234567890"), FLT, 0, 0x1.56a95319d63e1p+63},
    {LIT("0.1"), FLT, 0, 0x1.999999999999ap-4},
    {LIT("1e308"), FLT, 0, 0x1.1ccf385ebc8ap+1023},
    {LIT("4.9e-324"), FLT, 0, 0x0.0000000000001p-1022},
    {LIT("2.5e-324"), FLT, 0, 0x0.0000000000001p-1022},
    {LIT("1..2"), NONE, 0, 0},
    {LIT("0x1.2.3"), NONE, 0, 0},
    {LIT("1 2"), NONE, 0, 0},
    {LIT("1\0"), NONE, 0, 0},
    {LIT("0xg"), NONE, 0, 0},
    {LIT("0x-1"), NONE, 0, 0},
    {LIT("123abc"), NONE, 0, 0},
    {LIT("3.0"), FLT, 0, 3.0},
    {LIT("-0"), INT, 0, 0},
    {LIT("-0.0"), FLT, 0, -0.0},
    {LIT("0x8000000000000000"), INT, INT64_MIN, 0},
    {LIT("-0x8000000000000000"), INT, INT64_MIN, 0},
    {LIT("0x1p99999999999999"), FLT, 0, HUGE_VAL},
    {LIT("0x1p-99999999999"), FLT, 0, 0.0},
    {LIT("1e99999999999999999999"), FLT, 0, HUGE_VAL},
    {LIT("0x0p123456"), FLT, 0, 0.0},
    {LIT("0.0000000000000000000000000000000000001e37"), FLT, 0, 1.0},
    {LIT("  0x1P4  "), FLT, 0, 16.0},
    {LIT("-0x1p4"), FLT, 0, -16.0},
    {LIT("0x"), NONE, 0, 0},
    {LIT("1e+5"), FLT, 0, 1e5},
    {LIT("1E-5"), FLT, 0, 1e-5},
    {LIT("- 1"), NONE, 0, 0},
    {LIT("0x 1"), NONE, 0, 0},
    {LIT("9007199254740993"), INT, 9007199254740993, 0},
};

static void test_vm_str2number_lua_cases(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof numerals / sizeof numerals[0]; i++) {
        Value v = vm_int(12345);
        bool ok = vm_str2number(numerals[i].s, numerals[i].len, &v);
        switch (numerals[i].type) {
        case NONE:
            if (ok) fail_msg("'%s' should not be a numeral", numerals[i].s);
            assert_int_equal(v.tt, VT_INT);   /* left alone */
            assert_int_equal(v.u.i, 12345);
            break;
        case INT:
            if (!ok || v.tt != VT_INT) fail_msg("'%s' should be an integer", numerals[i].s);
            assert_int_equal(v.u.i, numerals[i].i);
            break;
        case FLT:
            if (!ok || v.tt != VT_FLOAT) fail_msg("'%s' should be a float", numerals[i].s);
            if (memcmp(&v.u.n, &numerals[i].d, sizeof(double)) != 0)
                fail_msg("'%s': got %a, want %a", numerals[i].s, v.u.n, numerals[i].d);
            break;
        }
    }
}

static void test_vm_str2number_not_nul_terminated(void **state) {
    (void)state;
    Value v;
    assert_true(vm_str2number("123456", 3, &v));   /* only "123" */
    assert_int_equal(v.u.i, 123);
    assert_true(vm_str2number("1.5e3x", 5, &v));
    assert_true(v.tt == VT_FLOAT && v.u.n == 1500.0);
    assert_false(vm_str2number("1.5e3x", 4, &v));  /* "1.5e" */
    assert_false(vm_str2number("0x1p4", 4, &v));    /* "0x1p" */
    assert_true(vm_str2number("0x1p4", 3, &v));     /* "0x1" */
    assert_true(v.tt == VT_INT && v.u.i == 1);
    /* a very long numeral (leading zeros) goes through the heap copy */
    char buf[600];
    memset(buf, '0', sizeof buf);
    memcpy(buf + sizeof buf - 4, "1.25", 4);
    assert_true(vm_str2number(buf, sizeof buf, &v));
    assert_true(v.tt == VT_FLOAT && v.u.n == 1.25);
    buf[sizeof buf - 3] = '5';   /* "...0152 5": integer digits only, leading zeros */
    buf[sizeof buf - 2] = '2';
    buf[sizeof buf - 1] = '5';
    assert_true(vm_str2number(buf, sizeof buf, &v));
    assert_int_equal(v.tt, VT_INT);
    assert_int_equal(v.u.i, 1525);
}

/* xorshift64*: deterministic pseudo-random numbers */
static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static void test_vm_str2number_hexfloat_matches_strtod(void **state) {
    (void)state;
    /* lua5.4 reads hex floats with glibc's strtod, which rounds correctly: compare the
     * hand-written reader with it on random numerals, subnormals and overflow included */
    char buf[128];
    for (int iter = 0; iter < 200000; iter++) {
        int n = 0;
        if (rnd() % 2) buf[n++] = '-';
        buf[n++] = '0';
        buf[n++] = rnd() % 2 ? 'x' : 'X';
        int ndig = 1 + (int)(rnd() % 40);
        int point = (int)(rnd() % (unsigned)(ndig + 2)) - 1;   /* -1: no point */
        int zeros = (int)(rnd() % 4);                          /* leading zeros */
        for (int i = 0; i < ndig; i++) {
            if (i == point) buf[n++] = '.';
            int d = i < zeros ? 0 : (int)(rnd() % 16);
            if (rnd() % 4 == 0) d = rnd() % 2 ? 0 : 15;        /* runs of 0 and f: ties */
            buf[n++] = "0123456789abcdef"[d];
        }
        if (point == ndig) buf[n++] = '.';
        if (point < 0 || rnd() % 8 != 0)   /* without point or exponent it is an integer */
            n += snprintf(buf + n, sizeof buf - (size_t)n, "p%d", (int)(rnd() % 2300) - 1200);
        buf[n] = '\0';
        char *end;
        double want = strtod(buf, &end);
        assert_ptr_equal(end, buf + n);
        Value v;
        if (!vm_str2number(buf, (size_t)n, &v) || v.tt != VT_FLOAT) fail_msg("'%s' not read as a float", buf);
        if (memcmp(&v.u.n, &want, sizeof want) != 0) fail_msg("'%s': got %a, want %a", buf, v.u.n, want);
    }
    /* long mantissas: the exponent of each digit still counts */
    static char big[2000];
    int n = snprintf(big, sizeof big, "0x0.");
    for (int i = 0; i < 300; i++) big[n++] = '0';
    n += snprintf(big + n, sizeof big - (size_t)n, "1p1204");   /* 16^-301 * 2^1204 = 1 */
    Value v;
    assert_true(vm_str2number(big, (size_t)n, &v));
    assert_true(v.tt == VT_FLOAT && v.u.n == 1.0);
    n = snprintf(big, sizeof big, "0x1");
    for (int i = 0; i < 300; i++) big[n++] = '0';
    n += snprintf(big + n, sizeof big - (size_t)n, "p-1200");   /* 2^1200 * 2^-1200 = 1 */
    assert_true(vm_str2number(big, (size_t)n, &v));
    assert_true(v.tt == VT_FLOAT && v.u.n == 1.0);
}

static void test_vm_number2str_matches_printf(void **state) {
    (void)state;
    /* the integral fast path must print what "%.14g" (plus ".0") prints */
    char want[VM_NUMBUF], got[VM_NUMBUF];
    for (int iter = 0; iter < 200000; iter++) {
        double d;
        uint64_t r = rnd();
        switch (iter % 4) {
        case 0: memcpy(&d, &r, sizeof d); break;                           /* any bits */
        case 1: d = (double)(int64_t)(r >> (r % 64)) * (r % 2 ? 1 : -1); break;   /* integers */
        case 2: d = (double)(int64_t)(r % 200000000000000ull) - 1e14; break;    /* near 1e14 */
        default: d = (double)(int64_t)(r % 2000) / 8 - 125; break;        /* small, halves */
        }
        if (d != d) continue;
        snprintf(want, sizeof want, "%.14g", d);
        if (want[strspn(want, "-0123456789")] == '\0') strcat(want, ".0");
        Value v = vm_float(d);
        int len = vm_number2str(&v, got);
        assert_string_equal(got, want);
        assert_int_equal(len, (int)strlen(want));
    }
}

/* ---------------------------------------------------------------------- */

static const char *fmt(Value v) {
    static char buf[VM_NUMBUF];
    int n = vm_number2str(&v, buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

static void test_vm_number2str_lua_cases(void **state) {
    (void)state;
    static const struct {
        double d;
        const char *want;
    } floats[] = {
        {1e15, "1e+15"},
        {0x1p63, "9.2233720368548e+18"},
        {-0.0, "-0.0"},
        {0.0, "0.0"},
        {HUGE_VAL, "inf"},
        {-HUGE_VAL, "-inf"},
        {1e14, "1e+14"},
        {1e100, "1e+100"},
        {0.1, "0.1"},
        {1.0 / 3, "0.33333333333333"},
        {-1.0 / 3, "-0.33333333333333"},
        {123456789012345.0, "1.2345678901234e+14"},
        {99999999999999.0, "99999999999999.0"},
        {-99999999999999.0, "-99999999999999.0"},
        {3.0, "3.0"},
        {-3.0, "-3.0"},
        {0x1p53, "9.007199254741e+15"},
        {1e-5, "1e-05"},
        {1e-4, "0.0001"},
        {123.456, "123.456"},
        {0x0.0000000000001p-1022, "4.9406564584125e-324"},
        {0x1.fffffffffffffp+1023, "1.7976931348623e+308"},
        {3.14159265358979323846, "3.1415926535898"},
        {-3.14159265358979323846, "-3.1415926535898"},
        {100.0, "100.0"},
        {1e16, "1e+16"},
        {16777216.0, "16777216.0"},
        {0.5, "0.5"},
        {0x1.fffffffffffffp+62, "9.2233720368548e+18"},
        {-0x1p63, "-9.2233720368548e+18"},
        {255.0 / 256, "0.99609375"},
        {1e-310, "1e-310"},
        {1.0, "1.0"},
        {-1.0, "-1.0"},
    };
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        assert_string_equal(fmt(vm_float(floats[i].d)), floats[i].want);

    static const struct {
        vm_Integer i;
        const char *want;
    } ints[] = {
        {0, "0"},
        {-1, "-1"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
        {12345678901234567, "12345678901234567"},
        {10, "10"},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        assert_string_equal(fmt(vm_int(ints[i].i)), ints[i].want);
}

static void test_vm_number2str_nan_signs(void **state) {
    (void)state;
    /* lua5.4 on x86-64: print(0/0, -(0/0)) gives "-nan nan"; the division happens at run
     * time here too (volatile), so the hardware produces the same NaN */
    volatile double z = 0.0;
    double nan1 = z / z;
    assert_string_equal(fmt(vm_float(nan1)), "-nan");
    assert_string_equal(fmt(vm_float(-nan1)), "nan");
}

static void test_vm_number_tostring_makes_string(void **state) {
    (void)state;
    Value v = vm_float(2.5);
    String *s = vm_number_tostring(S, &v);
    assert_int_equal(s->len, 3);
    assert_string_equal(s->data, "2.5");
    v = vm_int(-42);
    assert_string_equal(vm_number_tostring(S, &v)->data, "-42");
}

/* ---------------------------------------------------------------------- */

static void test_vm_flt2int_cases(void **state) {
    (void)state;
    vm_Integer i = 99;
    assert_true(vm_flt2int(3.0, &i));
    assert_int_equal(i, 3);
    assert_true(vm_flt2int(-0.0, &i));
    assert_int_equal(i, 0);
    assert_true(vm_flt2int(-0x1p63, &i));
    assert_int_equal(i, INT64_MIN);
    assert_true(vm_flt2int(0x1.fffffffffffffp+62, &i));
    assert_int_equal(i, (vm_Integer)0x7ffffffffffffc00);
    i = 99;
    assert_false(vm_flt2int(0x1p63, &i));
    assert_false(vm_flt2int(3.5, &i));
    assert_false(vm_flt2int(-0x1.0000000000001p63, &i));
    assert_false(vm_flt2int(HUGE_VAL, &i));
    volatile double z = 0.0;
    assert_false(vm_flt2int(z / z, &i));
    assert_int_equal(i, 99);
}

static void test_vm_tointeger_cases(void **state) {
    (void)state;
    vm_Integer i;
    Value v = vm_int(7);
    assert_true(vm_tointeger(&v, &i) && i == 7);
    v = vm_float(7.0);
    assert_true(vm_tointeger(&v, &i) && i == 7);
    v = vm_float(7.5);
    assert_false(vm_tointeger(&v, &i));
    /* strings as math.tointeger(tonumber(s)) in lua5.4 */
    const char *yes[] = {"3.0", " 0x10 ", "1e2", "9007199254740993", "-0.0"};
    vm_Integer want[] = {3, 16, 100, 9007199254740993, 0};
    for (int k = 0; k < 5; k++) {
        v = vm_str(vm_string_newc(S, yes[k]));
        assert_true(vm_tointeger(&v, &i));
        assert_int_equal(i, want[k]);
    }
    const char *no[] = {"3.5", "abc", "1e100", ""};
    for (int k = 0; k < 4; k++) {
        v = vm_str(vm_string_newc(S, no[k]));
        assert_false(vm_tointeger(&v, &i));
    }
    v = vm_bool(true);
    assert_false(vm_tointeger(&v, &i));
    v = vm_nil();
    assert_false(vm_tointeger(&v, &i));
}

static void test_vm_tonumber_cases(void **state) {
    (void)state;
    Value out, v = vm_int(5);
    assert_true(vm_tonumber(&v, &out) && out.tt == VT_INT && out.u.i == 5);
    v = vm_float(2.5);
    assert_true(vm_tonumber(&v, &out) && out.tt == VT_FLOAT && out.u.n == 2.5);
    v = vm_str(vm_string_newc(S, " 0x10 "));
    assert_true(vm_tonumber(&v, &out) && out.tt == VT_INT && out.u.i == 16);
    v = vm_str(vm_string_newc(S, "1e1"));
    assert_true(vm_tonumber(&v, &out) && out.tt == VT_FLOAT && out.u.n == 10.0);
    v = vm_str(vm_string_new(S, "1\0", 2));
    assert_false(vm_tonumber(&v, &out));
    v = vm_bool(false);
    assert_false(vm_tonumber(&v, &out));
}

/* ---------------------------------------------------------------------- */

static void test_vm_idiv_imod_floor(void **state) {
    (void)state;
    /* lua5.4: 7 // -2, -7 // 2, 7 % -3, -7 % 3, math.mininteger // -1, math.mininteger % -1 */
    assert_int_equal(vm_idiv(7, -2), -4);
    assert_int_equal(vm_idiv(-7, 2), -4);
    assert_int_equal(vm_idiv(7, 2), 3);
    assert_int_equal(vm_idiv(-7, -2), 3);
    assert_int_equal(vm_idiv(6, -2), -3);
    assert_int_equal(vm_idiv(INT64_MIN, -1), INT64_MIN);
    assert_int_equal(vm_idiv(INT64_MIN, 1), INT64_MIN);
    assert_int_equal(vm_idiv(5, -1), -5);
    assert_int_equal(vm_imod(7, -3), -2);
    assert_int_equal(vm_imod(-7, 3), 2);
    assert_int_equal(vm_imod(7, 3), 1);
    assert_int_equal(vm_imod(-7, -3), -1);
    assert_int_equal(vm_imod(6, -3), 0);
    assert_int_equal(vm_imod(INT64_MIN, -1), 0);
    assert_int_equal(vm_imod(INT64_MIN, INT64_MAX), INT64_MAX - 1);
    assert_int_equal(vm_imod(INT64_MAX, INT64_MIN), -1);
}

static void test_vm_fidiv_fmod_lua_cases(void **state) {
    (void)state;
    volatile double zero = 0.0, inf = HUGE_VAL;
    /* lua5.4: 7 // 2.0, -7 // 2.0, 7.5 // -2, 7.0 // 0, -7 // 0.0 */
    assert_true(vm_fidiv(7, 2.0) == 3.0);
    assert_true(vm_fidiv(-7, 2.0) == -4.0);
    assert_true(vm_fidiv(7.5, -2) == -4.0);
    assert_true(vm_fidiv(7.0, zero) == HUGE_VAL);
    assert_true(vm_fidiv(-7.0, zero) == -HUGE_VAL);
    /* lua5.4: 5.5 % math.huge, -5.5 % math.huge, 5.5 % -math.huge, -5.5 % -math.huge */
    assert_true(vm_fmod(5.5, inf) == 5.5);
    assert_true(vm_fmod(-5.5, inf) == HUGE_VAL);
    assert_true(vm_fmod(5.5, -inf) == -HUGE_VAL);
    assert_true(vm_fmod(-5.5, -inf) == -5.5);
    assert_true(vm_fmod(3, inf) == 3.0);
    /* 5.3 % 2, -5.3 % 2, 5.3 % -2, -5.3 % -2 print 1.3 0.7 -0.7 -1.3 */
    char buf[VM_NUMBUF];
    Value r = vm_float(vm_fmod(5.3, 2));
    vm_number2str(&r, buf);
    assert_string_equal(buf, "1.3");
    r = vm_float(vm_fmod(-5.3, 2));
    vm_number2str(&r, buf);
    assert_string_equal(buf, "0.7");
    r = vm_float(vm_fmod(5.3, -2));
    vm_number2str(&r, buf);
    assert_string_equal(buf, "-0.7");
    r = vm_float(vm_fmod(-5.3, -2));
    vm_number2str(&r, buf);
    assert_string_equal(buf, "-1.3");
    /* 0.0 % 1, -0.0 % 1, 0.0 % -1, -0.0 % -1, 4 % -2.0, -4 % 2.0: 0.0 -0.0 0.0 -0.0 0.0 -0.0 */
    const double zs[][2] = {{0.0, 1}, {-0.0, 1}, {0.0, -1}, {-0.0, -1}, {4, -2.0}, {-4, 2.0}};
    const char *zwant[] = {"0.0", "-0.0", "0.0", "-0.0", "0.0", "-0.0"};
    for (int i = 0; i < 6; i++) {
        r = vm_float(vm_fmod(zs[i][0], zs[i][1]));
        vm_number2str(&r, buf);
        assert_string_equal(buf, zwant[i]);
    }
    /* 5 % 0.0, -5 % 0.0, math.huge % 2, 1 % -0.0 all print "-nan" in lua5.4 */
    const double nans[][2] = {{5, 0.0}, {-5, 0.0}, {HUGE_VAL, 2}, {1, -0.0}};
    for (int i = 0; i < 4; i++) {
        r = vm_float(vm_fmod(nans[i][0] + zero, nans[i][1] + zero));
        vm_number2str(&r, buf);
        assert_string_equal(buf, "-nan");
    }
}

static void test_vm_shiftl_cases(void **state) {
    (void)state;
    /* lua5.4: 1 << 63, 1 << 64, -1 >> 1, 1 << -1, 2 >> -1, -1 >> 63, -1 << 70 */
    assert_int_equal(vm_shiftl(1, 63), INT64_MIN);
    assert_int_equal(vm_shiftl(1, 64), 0);
    assert_int_equal(vm_shiftl(-1, -1), INT64_MAX);   /* -1 >> 1 */
    assert_int_equal(vm_shiftl(1, -1), 0);
    assert_int_equal(vm_shiftl(2, 1), 4);             /* 2 >> -1 */
    assert_int_equal(vm_shiftl(-1, -63), 1);
    assert_int_equal(vm_shiftl(-1, 70), 0);
    assert_int_equal(vm_shiftl(-1, -64), 0);
    assert_int_equal(vm_shiftl(-1, INT64_MIN), 0);
    assert_int_equal(vm_shiftl(-1, INT64_MAX), 0);
    assert_int_equal(vm_shiftl(5, 0), 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_str2number_lua_cases),
        cmocka_unit_test(test_vm_str2number_not_nul_terminated),
        cmocka_unit_test(test_vm_str2number_hexfloat_matches_strtod),
        cmocka_unit_test(test_vm_number2str_lua_cases),
        cmocka_unit_test(test_vm_number2str_matches_printf),
        cmocka_unit_test(test_vm_number2str_nan_signs),
        cmocka_unit_test(test_vm_number_tostring_makes_string),
        cmocka_unit_test(test_vm_flt2int_cases),
        cmocka_unit_test(test_vm_tointeger_cases),
        cmocka_unit_test(test_vm_tonumber_cases),
        cmocka_unit_test(test_vm_idiv_imod_floor),
        cmocka_unit_test(test_vm_fidiv_fmod_lua_cases),
        cmocka_unit_test(test_vm_shiftl_cases),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
