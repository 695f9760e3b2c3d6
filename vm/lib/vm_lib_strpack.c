/* vm_lib_strpack.c: string.pack, string.unpack and string.packsize: values to and from binary
 * strings by a format (Lua 5.4 manual, section 6.4.2), with lua5.4's messages.
 *
 * A format is read one option at a time (next_option), each giving a kind, a size in bytes and
 * the padding that aligns it; the three functions share that reading and differ only in what
 * they do with each option. Sizes are bounded as lua5.4's are: numbers in a format stop being
 * read past INT_MAX / 10, integers take 1 to 16 bytes, results stay below INT_MAX bytes. */
#include <limits.h>
#include <string.h>

#include "vm_lib_pattern.h"

/* Integers wider than a Lua integer (up to 16 bytes) are written sign- or zero-extended and
 * read back only if the extra bytes are an extension. */
#define PK_MAXINTSIZE 16
/* The largest alignment '!' asks for by default: the strictest of the machine's scalar types
 * (8 on x86-64: double, int64, pointers). */
#define PK_NATIVE_ALIGN 8
/* Sizes and totals stay within an int, as lua5.4's (its MAXSIZE for these functions). */
#define PK_MAXSIZE ((size_t)INT_MAX)

typedef enum PkKind {
    PK_INT,      /* signed integer of [size] bytes */
    PK_UINT,     /* unsigned integer */
    PK_FLOAT,    /* float ('f', 4 bytes) */
    PK_DOUBLE,   /* double ('d', 'n') */
    PK_CHAR,     /* fixed-size string ('cN') */
    PK_STRING,   /* string preceded by its length in [size] bytes ('sN') */
    PK_ZSTR,     /* zero-terminated string ('z') */
    PK_PADDING,  /* one byte of padding ('x') */
    PK_ALIGN,    /* 'Xop': padding to op's alignment */
    PK_NOP,      /* ' ', '<', '>', '=', '!' */
} PkKind;

typedef struct PkState {
    State *S;
    const char *fmt;  /* the next option */
    bool little;      /* current endianness */
    int maxalign;     /* current maximum alignment ('!') */
} PkState;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* An optional count after an option: its digits, or [def] without any. */
static int read_count(PkState *st, int def) {
    if (!is_digit(*st->fmt)) return def;
    int n = 0;
    do {
        n = n * 10 + (*st->fmt++ - '0');
    } while (is_digit(*st->fmt) && n <= ((int)PK_MAXSIZE - 9) / 10);
    return n;
}

/* A count that is an integer's size: 1 .. PK_MAXINTSIZE. */
static int read_int_size(PkState *st, int def) {
    int n = read_count(st, def);
    if (n > PK_MAXINTSIZE || n <= 0) vm_error(st->S, "integral size (%d) out of limits [1,%d]", n, PK_MAXINTSIZE);
    return n;
}

/* One option: its kind and *size (0 for those that take no room of their own). */
static PkKind read_option(PkState *st, int *size) {
    char c = *st->fmt++;
    *size = 0;
    switch (c) {
    case 'b': *size = 1; return PK_INT;
    case 'B': *size = 1; return PK_UINT;
    case 'h': *size = 2; return PK_INT;
    case 'H': *size = 2; return PK_UINT;
    case 'l': case 'j': *size = 8; return PK_INT;
    case 'L': case 'J': case 'T': *size = 8; return PK_UINT;
    case 'i': *size = read_int_size(st, 4); return PK_INT;
    case 'I': *size = read_int_size(st, 4); return PK_UINT;
    case 'f': *size = 4; return PK_FLOAT;
    case 'd': case 'n': *size = 8; return PK_DOUBLE;
    case 's': *size = read_int_size(st, 8); return PK_STRING;
    case 'c':
        *size = read_count(st, -1);
        if (*size == -1) vm_error(st->S, "missing size for format option 'c'");
        return PK_CHAR;
    case 'z': return PK_ZSTR;
    case 'x': *size = 1; return PK_PADDING;
    case 'X': return PK_ALIGN;
    case ' ': return PK_NOP;
    case '<': case '=': st->little = true; return PK_NOP; /* x86-64 is little-endian */
    case '>': st->little = false; return PK_NOP;
    case '!': st->maxalign = read_int_size(st, PK_NATIVE_ALIGN); return PK_NOP;
    default: vm_error(st->S, "invalid format option '%c'", c);
    }
}

/* The next option with the padding (*pad bytes) that aligns it at offset [total]. 'X' takes
 * its alignment from the option after it, which is consumed and otherwise ignored. */
static PkKind next_option(PkState *st, size_t total, int *size, int *pad) {
    PkKind k = read_option(st, size);
    int align = *size;
    if (k == PK_ALIGN) {
        if (*st->fmt == '\0' || read_option(st, &align) == PK_CHAR || align == 0)
            vm_arg_error(st->S, 1, "invalid next option for option 'X'");
    }
    *pad = 0;
    if (align > 1 && k != PK_CHAR) {
        if (align > st->maxalign) align = st->maxalign;
        if ((align & (align - 1)) != 0) vm_arg_error(st->S, 1, "format asks for alignment not power of 2");
        *pad = (align - (int)(total & (size_t)(align - 1))) & (align - 1);
    }
    return k;
}

static void init_state(PkState *st, State *S, const char *fmt) {
    st->S = S;
    st->fmt = fmt;
    st->little = true;
    st->maxalign = 1;
}

/* ======================================================================
 * Bytes of numbers
 * ====================================================================== */

/* [v] in [size] bytes at [out], extended with [ext] past 8 bytes. */
static void put_int(char *out, uint64_t v, int size, bool little, unsigned char ext) {
    for (int i = 0; i < size; i++) {
        unsigned char byte = i < 8 ? (unsigned char)(v >> (8 * i)) : ext;
        out[little ? i : size - 1 - i] = (char)byte;
    }
}

/* The integer in [size] bytes at [in]; raises if more than 8 bytes do not extend the first 8. */
static uint64_t get_int(State *S, const char *in, int size, bool little, bool is_signed) {
    uint64_t v = 0;
    int low = size < 8 ? size : 8;
    for (int i = 0; i < low; i++) v |= (uint64_t)(unsigned char)in[little ? i : size - 1 - i] << (8 * i);
    if (size < 8) {
        if (is_signed) {
            uint64_t sign = (uint64_t)1 << (8 * size - 1);
            v = (v ^ sign) - sign;
        }
    } else if (size > 8) {
        unsigned char ext = is_signed && (int64_t)v < 0 ? 0xff : 0;
        for (int i = 8; i < size; i++)
            if ((unsigned char)in[little ? i : size - 1 - i] != ext)
                vm_error(S, "%d-byte integer does not fit into Lua Integer", size);
    }
    return v;
}

/* [n] bytes copied to [out] in the current byte order (x86-64 is little-endian). */
static void put_ordered(char *out, const void *src, size_t n, bool little) {
    const char *s = src;
    for (size_t i = 0; i < n; i++) out[i] = s[little ? i : n - 1 - i];
}

/* ======================================================================
 * The functions
 * ====================================================================== */

int vm_str_pack(State *S) {
    PkState st;
    init_state(&st, S, vm_check_string(S, 1)->data);
    /* lua5.4 pushes a nil after the arguments (its buffer's marker), so a missing first value
     * is "got nil" and the ones after it "got no value": the same here. */
    vm_pushnil(S);
    StrBuf b;
    vm_strbuf_init(S, &b);
    int arg = 1;
    size_t total = 0;
    while (*st.fmt != '\0') {
        int size, pad;
        PkKind k = next_option(&st, total, &size, &pad);
        total += (size_t)pad + (size_t)size;
        while (pad-- > 0) vm_strbuf_addlstr(&b, "", 1);
        arg++;
        char tmp[PK_MAXINTSIZE];
        switch (k) {
        case PK_INT:
        case PK_UINT: {
            vm_Integer n = vm_check_integer(S, arg);
            if (size < 8) {
                if (k == PK_INT) {
                    vm_Integer lim = (vm_Integer)1 << (size * 8 - 1);
                    if (!(-lim <= n && n < lim)) vm_arg_error(S, arg, "integer overflow");
                } else if ((uint64_t)n >= (uint64_t)1 << (size * 8)) {
                    vm_arg_error(S, arg, "unsigned overflow");
                }
            }
            put_int(tmp, (uint64_t)n, size, st.little, k == PK_INT && n < 0 ? 0xff : 0);
            vm_strbuf_addlstr(&b, tmp, (size_t)size);
            break;
        }
        case PK_FLOAT: {
            float f = (float)vm_check_number(S, arg);
            put_ordered(tmp, &f, sizeof f, st.little);
            vm_strbuf_addlstr(&b, tmp, sizeof f);
            break;
        }
        case PK_DOUBLE: {
            double d = vm_check_number(S, arg);
            put_ordered(tmp, &d, sizeof d, st.little);
            vm_strbuf_addlstr(&b, tmp, sizeof d);
            break;
        }
        case PK_CHAR: {
            String *s = vm_check_string(S, arg);
            if (s->len > (size_t)size) vm_arg_error(S, arg, "string longer than given size");
            vm_strbuf_addlstr(&b, s->data, s->len);
            for (size_t i = s->len; i < (size_t)size; i++) vm_strbuf_addlstr(&b, "", 1);
            break;
        }
        case PK_STRING: {
            String *s = vm_check_string(S, arg);
            if (size < 8 && s->len >= (size_t)1 << (size * 8))
                vm_arg_error(S, arg, "string length does not fit in given size");
            put_int(tmp, (uint64_t)s->len, size, st.little, 0);
            vm_strbuf_addlstr(&b, tmp, (size_t)size);
            vm_strbuf_addlstr(&b, s->data, s->len);
            total += s->len;
            break;
        }
        case PK_ZSTR: {
            String *s = vm_check_string(S, arg);
            if (strlen(s->data) != s->len) vm_arg_error(S, arg, "string contains zeros");
            vm_strbuf_addlstr(&b, s->data, s->len + 1);
            total += s->len + 1;
            break;
        }
        case PK_PADDING:
            vm_strbuf_addlstr(&b, "", 1);
            arg--;
            break;
        case PK_ALIGN:
        case PK_NOP:
            arg--;
            break;
        }
    }
    vm_strbuf_push(&b);
    return 1;
}

int vm_str_packsize(State *S) {
    PkState st;
    init_state(&st, S, vm_check_string(S, 1)->data);
    size_t total = 0;
    while (*st.fmt != '\0') {
        int size, pad;
        PkKind k = next_option(&st, total, &size, &pad);
        if (k == PK_STRING || k == PK_ZSTR) vm_arg_error(S, 1, "variable-length format");
        size += pad;
        if (total > PK_MAXSIZE - (size_t)size) vm_arg_error(S, 1, "format result too large");
        total += (size_t)size;
    }
    vm_pushint(S, (vm_Integer)total);
    return 1;
}

/* Position rules of string.unpack's init (as string.byte's start). */
static size_t unpack_start(vm_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos;
    if (pos == 0 || pos < -(vm_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

int vm_str_unpack(State *S) {
    PkState st;
    init_state(&st, S, vm_check_string(S, 1)->data);
    String *data = vm_check_string(S, 2);
    size_t len = data->len;
    size_t pos = unpack_start(vm_opt_integer(S, 3, 1), len) - 1;
    if (pos > len) vm_arg_error(S, 3, "initial position out of string");
    int n = 0;
    while (*st.fmt != '\0') {
        int size, pad;
        PkKind k = next_option(&st, pos, &size, &pad);
        if ((size_t)pad + (size_t)size > len - pos) vm_arg_error(S, 2, "data string too short");
        pos += (size_t)pad;
        /* Strings never move (Boehm's heap does not compact), and [data] stays reachable
         * from argument 2, so this pointer holds across the pushes below. */
        const char *at = data->data + pos;
        vm_checkstack(S, 2);
        switch (k) {
        case PK_INT:
        case PK_UINT:
            vm_pushint(S, (vm_Integer)get_int(S, at, size, st.little, k == PK_INT));
            n++;
            break;
        case PK_FLOAT: {
            float f;
            put_ordered((char *)&f, at, sizeof f, st.little);
            vm_pushfloat(S, (vm_Number)f);
            n++;
            break;
        }
        case PK_DOUBLE: {
            double d;
            put_ordered((char *)&d, at, sizeof d, st.little);
            vm_pushfloat(S, d);
            n++;
            break;
        }
        case PK_CHAR:
            vm_pushstr(S, at, (size_t)size);
            n++;
            break;
        case PK_STRING: {
            uint64_t slen = get_int(S, at, size, st.little, false);
            if (slen > len - pos - (size_t)size) vm_arg_error(S, 2, "data string too short");
            vm_pushstr(S, at + size, (size_t)slen);
            pos += (size_t)slen;
            n++;
            break;
        }
        case PK_ZSTR: {
            size_t zlen = strnlen(at, len - pos);
            if (pos + zlen >= len) vm_arg_error(S, 2, "unfinished string for format 'z'");
            vm_pushstr(S, at, zlen);
            pos += zlen + 1;
            n++;
            break;
        }
        case PK_PADDING:
        case PK_ALIGN:
        case PK_NOP:
            break;
        }
        pos += (size_t)size;
    }
    vm_pushint(S, (vm_Integer)(pos + 1));
    return n + 1;
}
