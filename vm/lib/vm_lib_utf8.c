/* vm_lib_utf8.c: the utf8 library of Lua 5.4: char, charpattern, codepoint, len, offset,
 * codes. Strict mode rejects surrogates and code points above 10FFFF unless 'lax'. */
#include <stdio.h>

#include "vm_lib.h"

/* Largest code point accepted in lax mode (31 bits, as lua5.4). */
#define MAXUTF 0x7FFFFFFFu
#define MAXUNICODE 0x10FFFFu

static bool iscont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Decode one sequence at s (NUL-terminated); NULL if invalid. */
static const char *utf8_decode(const char *s, uint32_t *val, bool strict) {
    static const uint32_t limits[] = {~(uint32_t)0, 0x80, 0x800, 0x10000u, 0x200000u, 0x4000000u};
    unsigned int c = (unsigned char)s[0];
    uint32_t res = 0;
    if (c < 0x80) {
        res = c;
    } else {
        int count = 0;
        for (; c & 0x40; c <<= 1) {
            unsigned int cc = (unsigned char)s[++count];
            if (!iscont((unsigned char)cc)) return NULL;
            res = (res << 6) | (cc & 0x3F);
        }
        res |= ((uint32_t)(c & 0x7F) << (count * 5));
        if (count > 5 || res > MAXUTF || res < limits[count]) return NULL;
        s += count;
    }
    if (strict && (res > MAXUNICODE || (0xD800u <= res && res <= 0xDFFFu))) return NULL;
    if (val) *val = res;
    return s + 1;
}

int vm_utf8_encode(char *buf, uint32_t x) {
    if (x < 0x80) {
        buf[0] = (char)x;
        return 1;
    }
    char tmp[8];
    int n = 0;
    uint32_t mfb = 0x3f; /* largest value that fits in the first byte */
    do {
        tmp[7 - n++] = (char)(0x80 | (x & 0x3f));
        x >>= 6;
        mfb >>= 1;
    } while (x > mfb);
    tmp[7 - n] = (char)((~mfb << 1) | x);
    n++;
    memcpy(buf, tmp + 8 - n, (size_t)n);
    return n;
}

/* Relative string position: negative counts from the end. */
static vm_Integer u_posrelat(vm_Integer pos, size_t len) {
    if (pos >= 0) return pos;
    if ((size_t)(0u - (vm_Unsigned)pos) > len) return 0;
    return (vm_Integer)len + pos + 1;
}

/* utf8.len(s [, i [, j [, lax]]]) */
static int u_len(State *S) {
    String *str = vm_check_string(S, 1);
    size_t len = str->len;
    vm_Integer posi = u_posrelat(vm_opt_integer(S, 2, 1), len);
    vm_Integer posj = u_posrelat(vm_opt_integer(S, 3, -1), len);
    bool lax = !vm_isfalsy(vm_at(S, 4));
    if (!(1 <= posi && --posi <= (vm_Integer)len)) vm_arg_error(S, 2, "initial position out of bounds");
    if (!(--posj < (vm_Integer)len)) vm_arg_error(S, 3, "final position out of bounds");
    vm_Integer n = 0;
    const char *s = str->data;
    while (posi <= posj) {
        const char *s1 = utf8_decode(s + posi, NULL, !lax);
        if (s1 == NULL) {
            vm_pushnil(S);
            vm_pushint(S, posi + 1);
            return 2;
        }
        posi = s1 - s;
        n++;
    }
    vm_pushint(S, n);
    return 1;
}

/* utf8.codepoint(s [, i [, j [, lax]]]) */
static int u_codepoint(State *S) {
    String *str = vm_check_string(S, 1);
    size_t len = str->len;
    vm_Integer posi = u_posrelat(vm_opt_integer(S, 2, 1), len);
    vm_Integer pose = u_posrelat(vm_opt_integer(S, 3, posi), len);
    bool lax = !vm_isfalsy(vm_at(S, 4));
    if (posi < 1) vm_arg_error(S, 2, "out of bounds");
    if (pose > (vm_Integer)len) vm_arg_error(S, 3, "out of bounds");
    if (posi > pose) return 0;
    if (pose - posi >= INT32_MAX) vm_error(S, "string slice too long");
    int n = 0;
    const char *s = str->data + posi - 1, *se = str->data + pose;
    vm_checkstack(S, (int)(pose - posi) + 1);
    while (s < se) {
        uint32_t code;
        s = utf8_decode(s, &code, !lax);
        if (s == NULL) vm_error(S, "invalid UTF-8 code");
        vm_pushint(S, code);
        n++;
    }
    return n;
}

/* utf8.char(...) */
static int u_char(State *S) {
    int n = vm_gettop(S);
    size_t cap = (size_t)n * 8 + 1, len = 0;
    char *buf = vm_alloc_leaf(S, cap);
    for (int i = 1; i <= n; i++) {
        vm_Integer code = vm_check_integer(S, i);
        if ((vm_Unsigned)code > MAXUTF) vm_arg_error(S, i, "value out of range");
        len += (size_t)vm_utf8_encode(buf + len, (uint32_t)code);
    }
    vm_pushstr(S, buf, len);
    return 1;
}

/* utf8.offset(s, n [, i]) */
static int u_offset(State *S) {
    String *str = vm_check_string(S, 1);
    size_t len = str->len;
    const char *s = str->data;
    vm_Integer n = vm_check_integer(S, 2);
    vm_Integer posi = (n >= 0) ? 1 : (vm_Integer)len + 1;
    posi = u_posrelat(vm_opt_integer(S, 3, posi), len);
    if (!(1 <= posi && --posi <= (vm_Integer)len)) vm_arg_error(S, 3, "position out of bounds");
    if (n == 0) {
        while (posi > 0 && iscont((unsigned char)s[posi])) posi--;
    } else {
        if (iscont((unsigned char)s[posi])) vm_error(S, "initial position is a continuation byte");
        if (n < 0) {
            while (n < 0 && posi > 0) {
                do posi--;
                while (posi > 0 && iscont((unsigned char)s[posi]));
                n++;
            }
        } else {
            n--;
            while (n > 0 && posi < (vm_Integer)len) {
                do posi++;
                while (iscont((unsigned char)s[posi]));
                n--;
            }
        }
    }
    if (n == 0)
        vm_pushint(S, posi + 1);
    else
        vm_pushnil(S);
    return 1;
}

/* Iterator of utf8.codes: state is the string, control the byte position. */
static int iter_aux(State *S, bool strict) {
    String *str = vm_check_string(S, 1);
    size_t len = str->len;
    const char *s = str->data;
    vm_Unsigned n = (vm_Unsigned)vm_check_integer(S, 2);
    if (n < len) {
        while (iscont((unsigned char)s[n])) n++; /* skip continuation bytes */
    }
    if (n >= len) return 0;
    uint32_t code;
    const char *next = utf8_decode(s + n, &code, strict);
    if (next == NULL || iscont((unsigned char)*next)) vm_error(S, "invalid UTF-8 code");
    vm_pushint(S, (vm_Integer)n + 1);
    vm_pushint(S, code);
    return 2;
}

static int iter_auxstrict(State *S) { return iter_aux(S, true); }
static int iter_auxlax(State *S) { return iter_aux(S, false); }

/* utf8.codes(s [, lax]) */
static int u_codes(State *S) {
    String *str = vm_check_string(S, 1);
    bool lax = !vm_isfalsy(vm_at(S, 2));
    if (str->len > 0 && iscont((unsigned char)str->data[0])) vm_arg_error(S, 1, "invalid UTF-8 code");
    vm_push(S, vm_cfunc(vm_newcfunction(S, lax ? iter_auxlax : iter_auxstrict, "for iterator", 0)));
    vm_push(S, vm_str(str));
    vm_pushint(S, 0);
    return 3;
}

static const LibReg utf8lib[] = {
    {"offset", u_offset}, {"codepoint", u_codepoint}, {"char", u_char},
    {"len", u_len},       {"codes", u_codes},         {NULL, NULL},
};

void vm_open_utf8(State *S) {
    Table *t = vm_newlib(S, utf8lib);
    /* "[\0-\x7F\xC2-\xFD][\x80-\xBF]*" */
    static const char pattern[] = "[\0-\x7F\xC2-\xFD][\x80-\xBF]*";
    vm_setfield(S, t, "charpattern", vm_str(vm_string_new(S, pattern, sizeof pattern - 1)));
    vm_setglobal(S, "utf8", vm_table(t));
    if (S->g->loaded) vm_setfield(S, S->g->loaded, "utf8", vm_table(t));
}
