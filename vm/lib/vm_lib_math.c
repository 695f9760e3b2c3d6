/* vm_lib_math.c: the math library, with lua5.4's integer/float rules and its
 * xoshiro256** pseudo-random generator (same seeding, so math.randomseed(n) gives the same
 * sequence as lua5.4). */
#include <float.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "vm_lib.h"

#define PI 3.141592653589793238462643383279502884

/* Bits of a double's mantissa: a random float is (53 random bits) * 2^-53. */
#define FLOAT_BITS 53

/* {====================================================================
 * Helpers
 * ===================================================================== */

/* Push [d] as an integer when it has an exact integer value in range, else as a float
 * (floor, ceil, modf). */
static void push_numint(State *S, vm_Number d) {
    vm_Integer i;
    if (vm_flt2int(d, &i)) vm_pushint(S, i);
    else vm_pushfloat(S, d);
}

static bool arg_is_int(State *S, int arg) { return vm_isint(vm_at(S, arg)); }

/* }==================================================================== */

/* {====================================================================
 * Rounding, absolute value, remainders
 * ===================================================================== */

static int math_abs(State *S) {
    if (arg_is_int(S, 1)) {
        vm_Integer n = vm_at(S, 1)->u.i;
        if (n < 0) n = (vm_Integer)(0u - (vm_Unsigned)n);
        vm_pushint(S, n);
    } else {
        vm_pushfloat(S, fabs(vm_check_number(S, 1)));
    }
    return 1;
}

static int math_floor(State *S) {
    if (arg_is_int(S, 1)) vm_pushint(S, vm_at(S, 1)->u.i);
    else push_numint(S, floor(vm_check_number(S, 1)));
    return 1;
}

static int math_ceil(State *S) {
    if (arg_is_int(S, 1)) vm_pushint(S, vm_at(S, 1)->u.i);
    else push_numint(S, ceil(vm_check_number(S, 1)));
    return 1;
}

static int math_fmod(State *S) {
    if (arg_is_int(S, 1) && arg_is_int(S, 2)) {
        vm_Integer a = vm_at(S, 1)->u.i, d = vm_at(S, 2)->u.i;
        if ((vm_Unsigned)d + 1u <= 1u) { /* 0 or -1 */
            if (d == 0) vm_arg_error(S, 2, "zero");
            vm_pushint(S, 0); /* avoids the overflow of mininteger % -1 */
        } else {
            vm_pushint(S, a % d); /* C's remainder: sign of the dividend, as fmod */
        }
    } else {
        vm_Number a = vm_check_number(S, 1);
        vm_pushfloat(S, fmod(a, vm_check_number(S, 2)));
    }
    return 1;
}

/* modf(x): integral part (an integer when representable, truncated toward zero) and the
 * fractional part as a float (0.0 for infinities). */
static int math_modf(State *S) {
    if (arg_is_int(S, 1)) {
        vm_pushint(S, vm_at(S, 1)->u.i);
        vm_pushfloat(S, 0.0);
        return 2;
    }
    vm_Number n = vm_check_number(S, 1);
    vm_Number ip = n < 0 ? ceil(n) : floor(n);
    push_numint(S, ip);
    vm_pushfloat(S, n == ip ? 0.0 : n - ip);
    return 2;
}

/* }==================================================================== */

/* {====================================================================
 * Float functions
 * ===================================================================== */

static int math_sqrt(State *S) { vm_pushfloat(S, sqrt(vm_check_number(S, 1))); return 1; }
static int math_sin(State *S) { vm_pushfloat(S, sin(vm_check_number(S, 1))); return 1; }
static int math_cos(State *S) { vm_pushfloat(S, cos(vm_check_number(S, 1))); return 1; }
static int math_tan(State *S) { vm_pushfloat(S, tan(vm_check_number(S, 1))); return 1; }
static int math_asin(State *S) { vm_pushfloat(S, asin(vm_check_number(S, 1))); return 1; }
static int math_acos(State *S) { vm_pushfloat(S, acos(vm_check_number(S, 1))); return 1; }
static int math_exp(State *S) { vm_pushfloat(S, exp(vm_check_number(S, 1))); return 1; }

static int math_atan(State *S) {
    vm_Number y = vm_check_number(S, 1);
    vm_pushfloat(S, atan2(y, vm_opt_number(S, 2, 1.0)));
    return 1;
}

static int math_deg(State *S) { vm_pushfloat(S, vm_check_number(S, 1) * (180.0 / PI)); return 1; }
static int math_rad(State *S) { vm_pushfloat(S, vm_check_number(S, 1) * (PI / 180.0)); return 1; }

/* The functions lua5.4 keeps for compatibility with 5.2 (LUA_COMPAT_MATHLIB, which Debian's
 * lua5.4 is built with): programs written for it call them. */
static int math_cosh(State *S) { vm_pushfloat(S, cosh(vm_check_number(S, 1))); return 1; }
static int math_sinh(State *S) { vm_pushfloat(S, sinh(vm_check_number(S, 1))); return 1; }
static int math_tanh(State *S) { vm_pushfloat(S, tanh(vm_check_number(S, 1))); return 1; }
static int math_log10(State *S) { vm_pushfloat(S, log10(vm_check_number(S, 1))); return 1; }

static int math_pow(State *S) {
    vm_Number x = vm_check_number(S, 1);
    vm_pushfloat(S, pow(x, vm_check_number(S, 2)));
    return 1;
}

static int math_frexp(State *S) {
    int e;
    vm_pushfloat(S, frexp(vm_check_number(S, 1), &e));
    vm_pushint(S, e);
    return 2;
}

static int math_ldexp(State *S) {
    vm_Number m = vm_check_number(S, 1);
    vm_pushfloat(S, ldexp(m, (int)vm_check_integer(S, 2)));
    return 1;
}

/* log(x [, base]): bases 2 and 10 use log2/log10 for exact results on powers. */
static int math_log(State *S) {
    vm_Number x = vm_check_number(S, 1);
    vm_Number r;
    if (vm_gettop(S) < 2 || vm_isnil(vm_at(S, 2))) {
        r = log(x);
    } else {
        vm_Number base = vm_check_number(S, 2);
        if (base == 2.0) r = log2(x);
        else if (base == 10.0) r = log10(x);
        else r = log(x) / log(base);
    }
    vm_pushfloat(S, r);
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * Integers and types: tointeger, type, ult, max, min
 * ===================================================================== */

static int math_tointeger(State *S) {
    vm_Integer n;
    if (vm_tointeger(vm_at(S, 1), &n)) {
        vm_pushint(S, n);
    } else {
        vm_check_any(S, 1);
        vm_pushnil(S);
    }
    return 1;
}

static int math_type(State *S) {
    Value *v = vm_at(S, 1);
    if (vm_isnumber(v)) {
        vm_pushcstr(S, vm_isint(v) ? "integer" : "float");
    } else {
        vm_check_any(S, 1);
        vm_pushnil(S);
    }
    return 1;
}

static int math_ult(State *S) {
    vm_Integer a = vm_check_integer(S, 1);
    vm_Integer b = vm_check_integer(S, 2);
    vm_pushbool(S, (vm_Unsigned)a < (vm_Unsigned)b);
    return 1;
}

/* max and min compare with '<' (so integer-ness is kept and mixed comparisons are exact). */
static int minmax(State *S, bool want_max) {
    int n = vm_gettop(S);
    if (n < 1) vm_arg_error(S, 1, "value expected");
    int best = 1;
    for (int i = 2; i <= n; i++) {
        Value b = *vm_at(S, best), c = *vm_at(S, i);
        if (want_max ? vm_lessthan(S, &b, &c) : vm_lessthan(S, &c, &b)) best = i;
    }
    vm_push(S, *vm_at(S, best));
    return 1;
}

static int math_max(State *S) { return minmax(S, true); }
static int math_min(State *S) { return minmax(S, false); }

/* }==================================================================== */

/* {====================================================================
 * Pseudo-random numbers: xoshiro256**
 * =====================================================================
 * The state is process-wide (one generator for every VM and thread; unsynchronised, so
 * threads that draw numbers concurrently only get a worse sequence, never a crash). */

static uint64_t rng[4];

static uint64_t rotl(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

static uint64_t next_rand(void) {
    uint64_t s0 = rng[0], s1 = rng[1], s2 = rng[2] ^ s0, s3 = rng[3] ^ s1;
    uint64_t res = rotl(s1 * 5, 7) * 9;
    s1 <<= 17;
    rng[0] = s0 ^ s3;
    rng[1] = rng[1] ^ s2;
    rng[2] = s2 ^ s1;
    rng[3] = rotl(s3, 45);
    return res;
}

/* Seed as lua5.4: state {n1, 0xff, n2, 0}, then 16 values discarded. */
static void set_seed(uint64_t n1, uint64_t n2) {
    rng[0] = n1;
    rng[1] = 0xff;
    rng[2] = n2;
    rng[3] = 0;
    for (int i = 0; i < 16; i++) next_rand();
}

/* Random value in [0, n] from [ran]: masking to the smallest 2^b - 1 >= n and drawing
 * again while above n (no bias, same draws as lua5.4). */
static vm_Unsigned project(vm_Unsigned ran, vm_Unsigned n) {
    if ((n & (n + 1)) == 0) return ran & n; /* n + 1 is a power of two */
    vm_Unsigned lim = n;
    lim |= lim >> 1;
    lim |= lim >> 2;
    lim |= lim >> 4;
    lim |= lim >> 8;
    lim |= lim >> 16;
    lim |= lim >> 32;
    while ((ran &= lim) > n) ran = next_rand();
    return ran;
}

static int math_random(State *S) {
    uint64_t rv = next_rand();
    vm_Integer low, up;
    switch (vm_gettop(S)) {
    case 0:
        vm_pushfloat(S, (vm_Number)(rv >> (64 - FLOAT_BITS)) * (0.5 / ((uint64_t)1 << (FLOAT_BITS - 1))));
        return 1;
    case 1:
        low = 1;
        up = vm_check_integer(S, 1);
        if (up == 0) { /* random(0): all 64 bits */
            vm_pushint(S, (vm_Integer)rv);
            return 1;
        }
        break;
    case 2:
        low = vm_check_integer(S, 1);
        up = vm_check_integer(S, 2);
        break;
    default:
        vm_error(S, "wrong number of arguments");
    }
    if (low > up) vm_arg_error(S, 1, "interval is empty");
    vm_Unsigned p = project(rv, (vm_Unsigned)up - (vm_Unsigned)low);
    vm_pushint(S, (vm_Integer)(p + (vm_Unsigned)low));
    return 1;
}

/* A seed that differs between runs: the time and an address (ASLR). */
static uint64_t time_seed(void) {
    uint64_t t = (uint64_t)time(NULL);
    uint64_t addr = (uint64_t)(uintptr_t)&rng;
    return t ^ (addr << 7) ^ ((uint64_t)clock() << 32);
}

static int math_randomseed(State *S) {
    uint64_t n1, n2;
    if (vm_gettop(S) == 0) {
        n1 = time_seed();
        n2 = next_rand();
    } else {
        n1 = (uint64_t)vm_check_integer(S, 1);
        n2 = (uint64_t)vm_opt_integer(S, 2, 0);
    }
    set_seed(n1, n2);
    vm_pushint(S, (vm_Integer)n1);
    vm_pushint(S, (vm_Integer)n2);
    return 2;
}

/* }==================================================================== */

static const LibReg math_funcs[] = {
    {"math.abs", math_abs},
    {"math.ceil", math_ceil},
    {"math.floor", math_floor},
    {"math.fmod", math_fmod},
    {"math.modf", math_modf},
    {"math.sqrt", math_sqrt},
    {"math.sin", math_sin},
    {"math.cos", math_cos},
    {"math.tan", math_tan},
    {"math.asin", math_asin},
    {"math.acos", math_acos},
    {"math.atan", math_atan},
    {"math.exp", math_exp},
    {"math.log", math_log},
    {"math.tointeger", math_tointeger},
    {"math.type", math_type},
    {"math.ult", math_ult},
    {"math.max", math_max},
    {"math.min", math_min},
    {"math.random", math_random},
    {"math.randomseed", math_randomseed},
    {"math.deg", math_deg},
    {"math.rad", math_rad},
    /* LUA_COMPAT_MATHLIB */
    {"math.atan2", math_atan},
    {"math.cosh", math_cosh},
    {"math.sinh", math_sinh},
    {"math.tanh", math_tanh},
    {"math.pow", math_pow},
    {"math.frexp", math_frexp},
    {"math.ldexp", math_ldexp},
    {"math.log10", math_log10},
    {NULL, NULL},
};

void vm_open_math(State *S) {
    Table *t = vm_table_new(S, 0, 32);
    for (const LibReg *r = math_funcs; r->name != NULL; r++)
        vm_setfield(S, t, r->name + 5, vm_cfunc(vm_newcfunction(S, r->f, r->name, 0)));
    vm_setfield(S, t, "pi", vm_float(PI));
    vm_setfield(S, t, "huge", vm_float(HUGE_VAL));
    vm_setfield(S, t, "maxinteger", vm_int(VM_MAXINTEGER));
    vm_setfield(S, t, "mininteger", vm_int(VM_MININTEGER));
    /* lua5.4 starts from a random seed */
    set_seed(time_seed(), (uint64_t)(uintptr_t)t);
    vm_setglobal(S, "math", vm_table(t));
    if (S->g->loaded != NULL) vm_setfield(S, S->g->loaded, "math", vm_table(t));
}
