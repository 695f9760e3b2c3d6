/* vm_number.c: numerals to numbers and back, and the integer/float arithmetic that Lua 5.4
 * defines differently from C (floor division, modulo, shifts). */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_number.h"
#include "vm_state.h"
#include "vm_string.h"

/* Numerals up to this length are converted from a stack copy; longer ones (possible: any
 * number of leading zeros is a valid numeral) from a malloc'd copy. */
#define NUMERAL_BUF 200
/* Binary exponents of hex floats are clamped to this magnitude while being read: far
 * beyond any double (2^-1074 .. 2^1024) even after the scale of up to 4 bits per digit of
 * a long mantissa is added, and small enough that the int64_t sums cannot overflow. */
#define HEXEXP_CLAMP 1000000000000000LL

/* ======================================================================
 * Numerals to numbers
 * ====================================================================== */

/* Lua's lisspace in the C locale. */
static inline bool isspc(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline bool isdig(char c) { return c >= '0' && c <= '9'; }

/* Value of hex digit [c], or -1. */
static inline int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* m * 2^e, correctly rounded to the nearest double (ties to even); [sticky] says nonzero
 * bits were dropped below m. Handles subnormal results and overflow to infinity. */
static vm_Number scale2(uint64_t m, int64_t e, bool sticky) {
    if (m == 0) return 0.0;
    int nb = 64 - __builtin_clzll(m);
    int64_t top = e + nb - 1;                 /* exponent of the leading bit */
    if (top > 1100) return HUGE_VAL;          /* also keeps e within int for ldexp */
    int64_t low = top - 52;                   /* exponent of the last bit a double keeps */
    if (low < -1074) low = -1074;             /* subnormals keep fewer bits */
    int64_t drop = low - e;
    if (drop > 0) {
        uint64_t q, rem, half;
        if (drop > 64) {
            return 0.0;                       /* less than half the smallest subnormal */
        } else if (drop == 64) {
            q = 0;
            rem = m;
            half = 1ull << 63;
        } else {
            q = m >> drop;
            rem = m & ((1ull << drop) - 1);
            half = 1ull << (drop - 1);
        }
        if (rem > half || (rem == half && (sticky || (q & 1)))) q++;
        m = q;
        e = low;
        if (m == 0) return 0.0;
    }
    return ldexp((vm_Number)m, (int)e);       /* exact: m has at most 54 bits here */
}

/* Hexadecimal float after "0x" at [p] (up to [end]): hex digits with an optional point (at
 * least one digit), then an optional binary exponent "p[sign]digits". Returns the end of
 * the numeral, or NULL. The first 16 significant digits are kept; the rest only count for
 * the exponent and for rounding (sticky). */
static const char *readhexfloat(const char *p, const char *end, vm_Number *out) {
    uint64_t m = 0;
    int64_t e = 0;
    int nsig = 0;
    bool any = false, sticky = false, point = false;
    for (; p < end; p++) {
        int d;
        if (*p == '.') {
            if (point) break;
            point = true;
            continue;
        }
        if ((d = hexval(*p)) < 0) break;
        any = true;
        if (m == 0 && d == 0) {               /* leading zero */
            if (point) e -= 4;
        } else if (nsig < 16) {
            m = (m << 4) | (uint64_t)d;
            nsig++;
            if (point) e -= 4;
        } else {
            if (d != 0) sticky = true;
            if (!point) e += 4;
        }
    }
    if (!any) return NULL;
    if (p < end && (*p == 'p' || *p == 'P')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= end || !isdig(*p)) return NULL;
        int64_t x = 0;
        for (; p < end && isdig(*p); p++)
            if (x < HEXEXP_CLAMP) x = x * 10 + (*p - '0');
        e += eneg ? -x : x;
    }
    *out = scale2(m, e, sticky);
    return p;
}

/* Decimal float numeral [s, end) (sign included, already validated) through strtod,
 * which rounds correctly. */
static vm_Number decimalfloat(const char *s, size_t n) {
    char sbuf[NUMERAL_BUF + 1];
    char *buf = n <= NUMERAL_BUF ? sbuf : malloc(n + 1);
    if (buf == NULL) return 0.0;   /* cannot happen in practice: a numeral this long is a string */
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *stop;
    vm_Number d = strtod(buf, &stop);
    if (stop != buf + n) {
        /* a locale whose decimal point is not '.' (os.setlocale): retry with its point */
        char *dot = memchr(buf, '.', n);
        if (dot != NULL) {
            *dot = localeconv()->decimal_point[0];
            d = strtod(buf, &stop);
        }
    }
    if (buf != sbuf) free(buf);
    return d;
}

/* End of the decimal numeral (digits, optional point, optional exponent) at [p], or NULL
 * if there is none. [*isint] tells whether it has neither point nor exponent. */
static const char *scandecimal(const char *p, const char *end, bool *isint) {
    bool any = false;
    *isint = true;
    while (p < end && isdig(*p)) p++, any = true;
    if (p < end && *p == '.') {
        *isint = false;
        p++;
        while (p < end && isdig(*p)) p++, any = true;
    }
    if (!any) return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        *isint = false;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !isdig(*p)) return NULL;
        while (p < end && isdig(*p)) p++;
    }
    return p;
}

/* Decimal digits [p, end) to an integer with sign [neg]; false on overflow (then the
 * numeral is a float, as in Lua). */
static bool decimalint(const char *p, const char *end, bool neg, vm_Integer *out) {
    vm_Unsigned a = 0;
    const vm_Unsigned maxby10 = (vm_Unsigned)VM_MAXINTEGER / 10;
    const int maxlastd = (int)((vm_Unsigned)VM_MAXINTEGER % 10);
    for (; p < end; p++) {
        int d = *p - '0';
        if (a >= maxby10 && (a > maxby10 || d > maxlastd + neg)) return false;
        a = a * 10 + (vm_Unsigned)d;
    }
    *out = (vm_Integer)(neg ? 0u - a : a);
    return true;
}

bool vm_str2number(const char *s, size_t len, Value *out) {
    const char *p = s, *end = s + len;
    while (p < end && isspc(*p)) p++;
    const char *numstart = p;   /* the sign belongs to the numeral given to strtod */
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    Value v;
    if (end - p >= 2 && p[0] == '0' && (p[1] | 0x20) == 'x') {
        const char *q = p + 2;
        vm_Unsigned a = 0;
        const char *digits = q;
        int d;
        while (q < end && (d = hexval(*q)) >= 0) a = (a << 4) | (vm_Unsigned)d, q++;   /* wraps */
        if (q < end && (*q == '.' || *q == 'p' || *q == 'P')) {
            vm_Number x;
            q = readhexfloat(p + 2, end, &x);
            if (q == NULL) return false;
            v = vm_float(neg ? -x : x);
        } else {
            if (q == digits) return false;
            v = vm_int((vm_Integer)(neg ? 0u - a : a));
        }
        p = q;
    } else {
        bool isint;
        const char *q = scandecimal(p, end, &isint);
        if (q == NULL) return false;
        vm_Integer i;
        if (isint && decimalint(p, q, neg, &i))
            v = vm_int(i);
        else
            v = vm_float(decimalfloat(numstart, (size_t)(q - numstart)));
        p = q;
    }
    while (p < end && isspc(*p)) p++;
    if (p != end) return false;
    *out = v;
    return true;
}

/* ======================================================================
 * Numbers to text
 * ====================================================================== */

/* Decimal form of [i] into [buf]; returns the length. */
static int fmtint(vm_Integer i, char *buf) {
    char tmp[24];
    int n = 0;
    vm_Unsigned u = i < 0 ? 0u - (vm_Unsigned)i : (vm_Unsigned)i;   /* mininteger too */
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    int len = 0;
    if (i < 0) buf[len++] = '-';
    while (n > 0) buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

int vm_number2str(const Value *v, char *buf) {
    if (v->tt == VT_INT) return fmtint(v->u.i, buf);
    vm_Number d = v->u.n;
    /* Integral values below 1e14 have at most 14 digits, so "%.14g" prints them in full
     * without an exponent: format them as integers (snprintf is the slow part of
     * tostring). -0.0 goes the slow way to keep its sign. */
    if (d > -1e14 && d < 1e14 && d != 0.0 && d == (vm_Number)(vm_Integer)d) {
        int len = fmtint((vm_Integer)d, buf);
        buf[len++] = '.';
        buf[len++] = '0';
        buf[len] = '\0';
        return len;
    }
    int len = snprintf(buf, VM_NUMBUF, "%.14g", d);
    if (buf[strspn(buf, "-0123456789")] == '\0') {   /* looks like an integer */
        buf[len++] = '.';                             /* lua5.4 uses the locale's point here; */
        buf[len++] = '0';                             /* the C locale's is '.' */
        buf[len] = '\0';
    }
    return len;
}

String *vm_number_tostring(State *S, const Value *v) {
    char buf[VM_NUMBUF];
    int len = vm_number2str(v, buf);
    return vm_string_new(S, buf, (size_t)len);
}

/* ======================================================================
 * Conversions
 * ====================================================================== */

bool vm_flt2int(vm_Number d, vm_Integer *out) {
    /* [-2^63, 2^63): both bounds are exact doubles; NaN fails both compares */
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        vm_Integer i = (vm_Integer)d;
        if ((vm_Number)i == d) {
            *out = i;
            return true;
        }
    }
    return false;
}

bool vm_tointeger(const Value *v, vm_Integer *out) {
    switch (v->tt) {
    case VT_INT: *out = v->u.i; return true;
    case VT_FLOAT: return vm_flt2int(v->u.n, out);
    case VT_STR: {
        Value n;
        if (!vm_str2number(v->u.s->data, v->u.s->len, &n)) return false;
        if (n.tt == VT_INT) {
            *out = n.u.i;
            return true;
        }
        return vm_flt2int(n.u.n, out);
    }
    default: return false;
    }
}

bool vm_tonumber(const Value *v, Value *out) {
    switch (v->tt) {
    case VT_INT:
    case VT_FLOAT: *out = *v; return true;
    case VT_STR: return vm_str2number(v->u.s->data, v->u.s->len, out);
    default: return false;
    }
}

/* ======================================================================
 * Arithmetic
 * ====================================================================== */

vm_Integer vm_idiv(vm_Integer a, vm_Integer b) {
    if (b == -1) return (vm_Integer)(0u - (vm_Unsigned)a);   /* mininteger // -1 wraps, as in Lua */
    vm_Integer q = a / b;
    if ((a % b != 0) && ((a ^ b) < 0)) q--;                 /* C truncates; Lua floors */
    return q;
}

vm_Integer vm_imod(vm_Integer a, vm_Integer b) {
    if (b == -1) return 0;   /* a % -1 would trap for mininteger in C */
    vm_Integer r = a % b;
    if (r != 0 && (r ^ b) < 0) r += b;   /* result takes the sign of b */
    return r;
}

vm_Number vm_fidiv(vm_Number a, vm_Number b) {
    return floor(a / b);
}

vm_Number vm_fmod(vm_Number a, vm_Number b) {
    vm_Number m = fmod(a, b);
    /* fmod keeps the sign of a; move toward b's sign when they differ (as lua5.4.4:
     * -5.5 % math.huge is inf, 5.5 % -math.huge is -inf, -5.5 % -math.huge is -5.5) */
    if (m > 0 ? b < 0 : (m < 0 && b > 0)) m += b;
    return m;
}

vm_Integer vm_shiftl(vm_Integer x, vm_Integer y) {
    if (y < 0) {
        if (y <= -64) return 0;
        return (vm_Integer)((vm_Unsigned)x >> (unsigned)(-y));
    }
    if (y >= 64) return 0;
    return (vm_Integer)((vm_Unsigned)x << (unsigned)y);
}
