/* vm_bytecode.c: the bytecode file format (docs/bytecode.md): writer, loader and listing.
 * The verifier the loader ends with is in vm_verify.c.
 *
 * The loader trusts nothing: every read goes through a Reader that knows how many bytes
 * are left, every count is compared with the bytes left BEFORE anything is allocated for
 * it (each element needs at least one byte, so a count can never ask for more memory than
 * a small multiple of the file's size), nesting is bounded, and the result is verified
 * before it is returned. Format errors unwind with longjmp to the loader's entry; an
 * allocation failure raises "not enough memory", which vm_rawrunprotected catches, so
 * vm_bytecode_load never raises. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_do.h"
#include "vm_opcodes.h"
#include "vm_string.h"

/* Format version written and the only one read. Bump it on any change to the layout or to
 * the meaning of an instruction (ORDER OP: renumbering opcodes is such a change). */
#define BC_VERSION 1
/* Catches files mangled by text-mode conversion (CR/LF, ^Z, 8-bit stripping), as Lua's
 * LUAC_DATA does. */
#define BC_DATA "\x19\x93\r\n\x1a\n"
#define BC_DATALEN 6
/* Check values: a file written with another integer or float encoding decodes them wrong. */
#define BC_CHECK_INT ((vm_Integer)0x5678)
#define BC_CHECK_FLOAT ((vm_Number)370.5)
/* Deepest function nesting read (main = 0); the compiler stays below it (its syntactic
 * nesting limit is 200). Bounds the loader's recursion on hostile input. */
#define BC_MAXDEPTH 200
/* Smallest encoding of a nested function (13 one-byte fields: lines, params, vararg,
 * maxstack and the seven counts, plus the absent name), to bound a function count. */
#define BC_MINFUNC 13

/* Constant tags in the file. */
enum { BCK_NIL = 0, BCK_FALSE = 1, BCK_TRUE = 2, BCK_INT = 3, BCK_FLOAT = 4, BCK_STRING = 5 };

/* ======================================================================
 * Writer
 * ====================================================================== */

typedef struct Writer {
    unsigned char *b; /* malloc'd; owned by the writer until returned */
    size_t n, cap;
    bool failed;      /* allocation failed or the Proto cannot be written */
    bool strip;
} Writer;

static void put_bytes(Writer *W, const void *p, size_t len) {
    if (W->failed) return;
    if (W->cap - W->n < len) {
        size_t cap = W->cap ? W->cap : 256;
        while (cap - W->n < len) {
            if (cap > SIZE_MAX / 2) { W->failed = true; return; }
            cap *= 2;
        }
        unsigned char *nb = realloc(W->b, cap);
        if (nb == NULL) { W->failed = true; return; }
        W->b = nb;
        W->cap = cap;
    }
    memcpy(W->b + W->n, p, len);
    W->n += len;
}

static void put_u8(Writer *W, unsigned v) {
    unsigned char c = (unsigned char)v;
    put_bytes(W, &c, 1);
}

static void put_u64(Writer *W, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    put_bytes(W, b, 8);
}

/* Unsigned LEB128: 7 bits a byte, low group first, high bit = more follows. */
static void put_varint(Writer *W, uint64_t v) {
    unsigned char b[10];
    int n = 0;
    do {
        b[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    put_bytes(W, b, (size_t)n);
}

static void put_string(Writer *W, const String *s) {
    put_varint(W, s->len);
    put_bytes(W, s->data, s->len);
}

/* Optional string: length + 1, or 0 for none. */
static void put_ostring(Writer *W, const String *s) {
    if (s == NULL) {
        put_varint(W, 0);
        return;
    }
    put_varint(W, (uint64_t)s->len + 1);
    put_bytes(W, s->data, s->len);
}

static uint64_t zigzag(int64_t d) { return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63); }

static void put_constant(Writer *W, const Value *k) {
    switch (k->tt) {
    case VT_NIL: put_u8(W, BCK_NIL); break;
    case VT_FALSE: put_u8(W, BCK_FALSE); break;
    case VT_TRUE: put_u8(W, BCK_TRUE); break;
    case VT_INT:
        put_u8(W, BCK_INT);
        put_u64(W, (uint64_t)k->u.i);
        break;
    case VT_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &k->u.n, 8);
        put_u8(W, BCK_FLOAT);
        put_u64(W, bits);
        break;
    }
    case VT_STR:
        put_u8(W, BCK_STRING);
        put_string(W, k->u.s);
        break;
    default:
        W->failed = true; /* not a constant a file can hold */
    }
}

static void put_debug(Writer *W, const Proto *p) {
    if (W->strip) {
        put_varint(W, 0); /* lineinfo */
        put_varint(W, 0); /* locvars */
        put_varint(W, 0); /* upvalue names */
        put_ostring(W, NULL);
        return;
    }
    if (p->lineinfo != NULL) {
        put_varint(W, (uint64_t)p->ncode);
        int64_t prev = p->linedefined;
        for (int i = 0; i < p->ncode; i++) {
            put_varint(W, zigzag((int64_t)p->lineinfo[i] - prev));
            prev = p->lineinfo[i];
        }
    } else {
        put_varint(W, 0);
    }
    put_varint(W, (uint64_t)p->nlocvars);
    for (int i = 0; i < p->nlocvars; i++) {
        const LocVar *lv = &p->locvars[i];
        if (lv->name == NULL) { W->failed = true; return; }
        put_string(W, lv->name);
        put_varint(W, (uint64_t)lv->startpc);
        put_varint(W, (uint64_t)lv->endpc);
    }
    bool named = false;
    for (int i = 0; i < p->nupvals; i++) named |= p->upvals[i].name != NULL;
    put_varint(W, named ? (uint64_t)p->nupvals : 0);
    for (int i = 0; named && i < p->nupvals; i++) put_ostring(W, p->upvals[i].name);
    put_ostring(W, p->name);
}

static void put_function(Writer *W, const Proto *p, bool main) {
    if (W->failed) return;
    if (p == NULL || p->ncode < 0 || p->nk < 0 || p->np < 0 || p->nupvals < 0 ||
        p->nlocvars < 0 || p->linedefined < 0 || p->lastlinedefined < 0) {
        W->failed = true;
        return;
    }
    if (main) put_ostring(W, W->strip ? NULL : p->source);
    put_varint(W, (uint64_t)p->linedefined);
    put_varint(W, (uint64_t)p->lastlinedefined);
    put_u8(W, p->numparams);
    put_u8(W, p->is_vararg);
    put_varint(W, p->maxstack);
    put_varint(W, (uint64_t)p->ncode);
    for (int i = 0; i < p->ncode; i++) put_u64(W, p->code[i]);
    put_varint(W, (uint64_t)p->nk);
    for (int i = 0; i < p->nk; i++) put_constant(W, &p->k[i]);
    put_varint(W, (uint64_t)p->nupvals);
    for (int i = 0; i < p->nupvals; i++) {
        put_u8(W, p->upvals[i].instack);
        put_u8(W, p->upvals[i].kind);
        put_varint(W, p->upvals[i].idx);
    }
    put_varint(W, (uint64_t)p->np);
    for (int i = 0; i < p->np; i++) put_function(W, p->p[i], false);
    put_debug(W, p);
}

unsigned char *vm_bytecode_dump(const Proto *p, size_t *len, bool strip) {
    Writer W = {NULL, 0, 0, false, strip};
    uint64_t fbits;
    vm_Number f = BC_CHECK_FLOAT;
    memcpy(&fbits, &f, 8);
    put_bytes(&W, VM_BC_SIGNATURE, VM_BC_SIGLEN);
    put_u8(&W, BC_VERSION);
    put_bytes(&W, BC_DATA, BC_DATALEN);
    put_u8(&W, sizeof(Instr));
    put_u8(&W, sizeof(vm_Integer));
    put_u8(&W, sizeof(vm_Number));
    put_u64(&W, (uint64_t)BC_CHECK_INT);
    put_u64(&W, fbits);
    put_function(&W, p, true);
    if (W.failed) {
        free(W.b);
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = W.n;
    return W.b;
}

/* ======================================================================
 * Loader
 * ====================================================================== */

typedef struct Reader {
    State *S;
    const unsigned char *p; /* next byte */
    size_t left;            /* bytes from p to the end */
    char *why;
    size_t whysize;
    jmp_buf fail;           /* format errors land here (inside the protected call) */
    int nfunc;              /* functions started, pre-order (main = 0): matches the verifier */
    Proto *main;            /* result; reachable from this C stack frame for the collector */
    String *source;         /* the main function's, inherited by nested functions */
} Reader;

static _Noreturn void fail(Reader *R, const char *fmt, ...) {
    if (R->why != NULL && R->whysize > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(R->why, R->whysize, fmt, ap);
        va_end(ap);
    }
    longjmp(R->fail, 1);
}

static _Noreturn void truncated(Reader *R) { fail(R, "truncated file"); }

static const unsigned char *get_bytes(Reader *R, size_t n) {
    if (R->left < n) truncated(R);
    const unsigned char *b = R->p;
    R->p += n;
    R->left -= n;
    return b;
}

static unsigned get_u8(Reader *R) { return *get_bytes(R, 1); }

static uint64_t get_u64(Reader *R) {
    const unsigned char *b = get_bytes(R, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | b[i];
    return v;
}

/* Strict LEB128: at most 10 bytes, no redundant trailing zero group, value <= max. */
static uint64_t get_varint(Reader *R, uint64_t max, int fn, const char *what) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        if (shift > 63) fail(R, "function %d: malformed %s (varint too long)", fn, what);
        unsigned b = get_u8(R);
        uint64_t bits = (uint64_t)(b & 0x7f);
        if (shift == 63 && bits > 1) fail(R, "function %d: malformed %s (varint overflow)", fn, what);
        v |= bits << shift;
        if (!(b & 0x80)) {
            if (b == 0 && shift > 0) fail(R, "function %d: malformed %s (overlong varint)", fn, what);
            break;
        }
    }
    if (v > max) fail(R, "function %d: %s %" PRIu64 " too large (limit %" PRIu64 ")", fn, what, v, max);
    return v;
}

/* A count of elements that take at least [minsize] bytes each: larger than what the rest
 * of the file can hold means truncation (checked before anything is allocated). */
static int32_t get_count(Reader *R, size_t minsize, uint64_t max, int fn, const char *what) {
    uint64_t n = get_varint(R, max < INT32_MAX ? max : INT32_MAX, fn, what);
    if (n > R->left / minsize) truncated(R);
    return (int32_t)n;
}

static String *get_string_body(Reader *R, size_t len) {
    const unsigned char *b = get_bytes(R, len);
    return vm_string_intern(R->S, (const char *)b, len);
}

static String *get_string(Reader *R, int fn, const char *what) {
    uint64_t len = get_varint(R, UINT64_MAX, fn, what);
    if (len > R->left) truncated(R);
    return get_string_body(R, (size_t)len);
}

static String *get_ostring(Reader *R, int fn, const char *what) {
    uint64_t len = get_varint(R, UINT64_MAX, fn, what);
    if (len == 0) return NULL;
    if (len - 1 > R->left) truncated(R);
    return get_string_body(R, (size_t)(len - 1));
}

static void get_header(Reader *R) {
    if (R->left == 0) fail(R, "empty file");
    if (R->left < VM_BC_SIGLEN || memcmp(R->p, VM_BC_SIGNATURE, VM_BC_SIGLEN) != 0) {
        if (R->left < VM_BC_SIGLEN && memcmp(R->p, VM_BC_SIGNATURE, R->left) == 0) truncated(R);
        fail(R, "bad signature (not a Tandem bytecode file)");
    }
    get_bytes(R, VM_BC_SIGLEN);
    unsigned version = get_u8(R);
    if (version != BC_VERSION)
        fail(R, "version mismatch: file has %u, this tandem reads %d", version, BC_VERSION);
    if (memcmp(get_bytes(R, BC_DATALEN), BC_DATA, BC_DATALEN) != 0)
        fail(R, "corrupted header (file mangled by a text-mode transfer?)");
    unsigned si = get_u8(R), sint = get_u8(R), sflt = get_u8(R);
    if (si != sizeof(Instr)) fail(R, "format mismatch: instruction size %u, expected %zu", si, sizeof(Instr));
    if (sint != sizeof(vm_Integer))
        fail(R, "format mismatch: integer size %u, expected %zu", sint, sizeof(vm_Integer));
    if (sflt != sizeof(vm_Number))
        fail(R, "format mismatch: float size %u, expected %zu", sflt, sizeof(vm_Number));
    if ((vm_Integer)get_u64(R) != BC_CHECK_INT) fail(R, "format mismatch: integer check value");
    uint64_t fbits = get_u64(R);
    vm_Number f;
    memcpy(&f, &fbits, 8);
    if (f != BC_CHECK_FLOAT) fail(R, "format mismatch: float check value");
}

static void get_code(Reader *R, Proto *f, int fn) {
    f->ncode = get_count(R, 8, INT32_MAX, fn, "instruction count");
    if (f->ncode == 0) return;
    f->code = vm_alloc_leaf(R->S, (size_t)f->ncode * sizeof(Instr));
    for (int i = 0; i < f->ncode; i++) f->code[i] = get_u64(R);
}

static void get_constants(Reader *R, Proto *f, int fn) {
    int32_t n = get_count(R, 1, INT32_MAX, fn, "constant count");
    if (n == 0) return;
    f->k = vm_alloc(R->S, (size_t)n * sizeof(Value));
    f->nk = n; /* the block is zeroed: every slot is a valid nil meanwhile */
    for (int i = 0; i < n; i++) {
        unsigned tag = get_u8(R);
        switch (tag) {
        case BCK_NIL: f->k[i] = vm_nil(); break;
        case BCK_FALSE: f->k[i] = vm_bool(false); break;
        case BCK_TRUE: f->k[i] = vm_bool(true); break;
        case BCK_INT: f->k[i] = vm_int((vm_Integer)get_u64(R)); break;
        case BCK_FLOAT: {
            uint64_t bits = get_u64(R);
            vm_Number d;
            memcpy(&d, &bits, 8);
            f->k[i] = vm_float(d);
            break;
        }
        case BCK_STRING: f->k[i] = vm_str(get_string(R, fn, "string length")); break;
        default: fail(R, "function %d: constant %d: bad tag %u", fn, i, tag);
        }
    }
}

static void get_upvalues(Reader *R, Proto *f, int fn) {
    int32_t n = get_count(R, 3, VM_MAXUPVALS, fn, "upvalue count");
    if (n == 0) return;
    f->upvals = vm_alloc(R->S, (size_t)n * sizeof(UpvalDesc));
    f->nupvals = n;
    for (int i = 0; i < n; i++) {
        f->upvals[i].instack = (uint8_t)get_u8(R);
        f->upvals[i].kind = (uint8_t)get_u8(R);
        f->upvals[i].idx = (uint16_t)get_varint(R, UINT16_MAX, fn, "upvalue index");
    }
}

static void get_debug(Reader *R, Proto *f, int fn) {
    int32_t n = get_count(R, 1, INT32_MAX, fn, "line count");
    if (n != 0 && n != f->ncode)
        fail(R, "function %d: %d lines for %d instructions", fn, (int)n, (int)f->ncode);
    if (n > 0) {
        f->lineinfo = vm_alloc_leaf(R->S, (size_t)n * sizeof(int32_t));
        int64_t line = f->linedefined;
        for (int i = 0; i < n; i++) {
            uint64_t z = get_varint(R, UINT64_MAX, fn, "line");
            int64_t d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
            if ((d > 0 && line > INT32_MAX - d) || (d < 0 && line < INT32_MIN - d))
                fail(R, "function %d: instruction %d: line number out of range", fn, i);
            line += d;
            f->lineinfo[i] = (int32_t)line;
        }
    }
    n = get_count(R, 3, INT32_MAX, fn, "local variable count");
    if (n > 0) {
        f->locvars = vm_alloc(R->S, (size_t)n * sizeof(LocVar));
        f->nlocvars = n;
        for (int i = 0; i < n; i++) {
            f->locvars[i].name = get_string(R, fn, "local name");
            f->locvars[i].startpc = (int32_t)get_varint(R, INT32_MAX, fn, "local start");
            f->locvars[i].endpc = (int32_t)get_varint(R, INT32_MAX, fn, "local end");
        }
    }
    n = get_count(R, 1, VM_MAXUPVALS, fn, "upvalue name count");
    if (n != 0 && n != f->nupvals)
        fail(R, "function %d: %d upvalue names for %d upvalues", fn, (int)n, (int)f->nupvals);
    for (int i = 0; i < n; i++) f->upvals[i].name = get_ostring(R, fn, "upvalue name");
    f->name = get_ostring(R, fn, "function name");
}

static Proto *get_function(Reader *R, int depth) {
    int fn = R->nfunc++;
    if (depth > BC_MAXDEPTH) fail(R, "function %d: functions nested deeper than %d", fn, BC_MAXDEPTH);
    Proto *f = vm_alloc(R->S, sizeof(Proto));
    f->h.type = VT_PROTO;
    if (depth == 0) {
        String *src = get_ostring(R, fn, "source name");
        R->source = src ? src : vm_string_newc(R->S, "=?");
        R->main = f;
    }
    f->source = R->source;
    f->linedefined = (int32_t)get_varint(R, INT32_MAX, fn, "line defined");
    f->lastlinedefined = (int32_t)get_varint(R, INT32_MAX, fn, "last line defined");
    f->numparams = (uint8_t)get_u8(R);
    f->is_vararg = (uint8_t)get_u8(R);
    f->maxstack = (uint16_t)get_varint(R, UINT16_MAX, fn, "maxstack");
    get_code(R, f, fn);
    get_constants(R, f, fn);
    get_upvalues(R, f, fn);
    int32_t np = get_count(R, BC_MINFUNC, INT32_MAX, fn, "function count");
    if (np > 0) {
        f->p = vm_alloc(R->S, (size_t)np * sizeof(Proto *));
        f->np = np;
        for (int i = 0; i < np; i++) f->p[i] = get_function(R, depth + 1);
    }
    get_debug(R, f, fn);
    return f;
}

/* Body of the protected call: parse, then verify. Format errors longjmp to R->fail here,
 * inside the protected region, so the protected call always returns normally for them. */
static void load_protected(State *S, void *ud) {
    Reader *R = ud;
    (void)S;
    if (setjmp(R->fail) != 0) {
        R->main = NULL;
        return;
    }
    get_header(R);
    Proto *main = get_function(R, 0);
    if (R->left != 0) fail(R, "%zu bytes of garbage after the main function", R->left);
    if (vm_bytecode_verify(main, R->why, R->whysize) != NULL) {
        R->main = NULL;
        return;
    }
    R->main = main;
}

Proto *vm_bytecode_load(State *S, const unsigned char *buf, size_t len, char *why, size_t whysize) {
    Reader R;
    memset(&R, 0, sizeof R);
    R.S = S;
    R.p = buf;
    R.left = buf ? len : 0;
    R.why = why;
    R.whysize = whysize;
    if (why != NULL && whysize > 0) why[0] = '\0';
    int status = vm_rawrunprotected(S, load_protected, &R);
    if (status != VM_OK) {
        if (why != NULL && whysize > 0)
            snprintf(why, whysize, "%s", status == VM_ERRMEM ? "not enough memory" : "load failed");
        return NULL;
    }
    return R.main;
}

/* ======================================================================
 * Listing
 * ====================================================================== */

/* A constant as the listing shows it: strings quoted (escaped, shortened), numbers as
 * Lua prints them. */
static void list_value(FILE *out, const Value *v) {
    switch (v->tt) {
    case VT_NIL: fputs("nil", out); break;
    case VT_FALSE: fputs("false", out); break;
    case VT_TRUE: fputs("true", out); break;
    case VT_INT: fprintf(out, "%" PRId64, (int64_t)v->u.i); break;
    case VT_FLOAT: {
        char buf[64];
        snprintf(buf, sizeof buf, "%.14g", v->u.n);
        fputs(buf, out);
        if (strspn(buf, "-0123456789") == strlen(buf)) fputs(".0", out);
        break;
    }
    case VT_STR: {
        const String *s = v->u.s;
        size_t n = s->len > 40 ? 40 : s->len;
        fputc('"', out);
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s->data[i];
            if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
            else if (c == '\n') fputs("\\n", out);
            else if (c < 32 || c >= 127) fprintf(out, "\\%u", c);
            else fputc(c, out);
        }
        fputc('"', out);
        if (n < s->len) fputs("...", out);
        break;
    }
    default: fprintf(out, "<%s>", "?"); break;
    }
}

static void list_const(FILE *out, const Proto *p, uint64_t idx) {
    if (idx < (uint64_t)p->nk)
        list_value(out, &p->k[idx]);
    else
        fprintf(out, "K[%" PRIu64 "]?", idx);
}

static void list_upname(FILE *out, const Proto *p, unsigned idx) {
    if ((int64_t)idx < p->nupvals && p->upvals[idx].name != NULL)
        fputs(p->upvals[idx].name->data, out);
    else
        fprintf(out, "U[%u]", idx);
}

static void list_count(FILE *out, unsigned n, const char *what) {
    if (n == 0)
        fprintf(out, "all %s", what);
    else
        fprintf(out, "%u %s", n - 1, what);
}

/* The comment after an instruction: what its operands refer to. */
static void list_comment(FILE *out, const Proto *p, int pc, Instr i) {
    unsigned op = vm_op(i), a = vm_a(i), b = vm_b(i), c = vm_c(i), k = vm_k(i);
    switch (op) {
    case OP_LOADK: fputs("; ", out); list_const(out, p, vm_bx(i)); break;
    case OP_GETUPVAL: case OP_SETUPVAL: fputs("; ", out); list_upname(out, p, b); break;
    case OP_GETTABUP:
        fputs("; ", out); list_upname(out, p, b); fputc(' ', out); list_const(out, p, c);
        break;
    case OP_SETTABUP:
        fputs("; ", out); list_upname(out, p, a); fputc(' ', out); list_const(out, p, b);
        if (k) { fputc(' ', out); list_const(out, p, c); }
        break;
    case OP_GETFIELD: fputs("; ", out); list_const(out, p, c); break;
    case OP_SETFIELD:
        fputs("; ", out); list_const(out, p, b);
        if (k) { fputc(' ', out); list_const(out, p, c); }
        break;
    case OP_SETTABLE: case OP_SETI: case OP_SELF:
        if (k) { fputs("; ", out); list_const(out, p, c); }
        break;
    case OP_ADDK: case OP_SUBK: case OP_MULK: case OP_MODK: case OP_POWK: case OP_DIVK:
    case OP_IDIVK: case OP_BANDK: case OP_BORK: case OP_BXORK:
        fputs("; ", out); list_const(out, p, c);
        break;
    case OP_EQK: fputs("; ", out); list_const(out, p, b); break;
    case OP_JMP: case OP_FORLOOP: case OP_TFORPREP: case OP_TFORLOOP:
        fprintf(out, "; to %" PRId64, (int64_t)pc + 1 + vm_sbx(i));
        break;
    case OP_FORPREP: fprintf(out, "; exit to %" PRId64, (int64_t)pc + 1 + vm_sbx(i)); break;
    case OP_CALL:
        fputs("; ", out); list_count(out, b, "in"); fputc(' ', out); list_count(out, c, "out");
        break;
    case OP_TAILCALL: fputs("; ", out); list_count(out, b, "in"); break;
    case OP_RETURN: fputs("; ", out); list_count(out, b, "out"); break;
    case OP_VARARG: fputs("; ", out); list_count(out, c, "out"); break;
    case OP_SETLIST:
        if (b == 0) fputs("; all values", out); else fprintf(out, "; %u values", b);
        if (k && pc + 1 < p->ncode) fprintf(out, " from index %u", vm_bx(p->code[pc + 1]) + 1);
        else fprintf(out, " from index %u", c + 1);
        break;
    case OP_CLOSURE:
        if ((int64_t)vm_bx(i) < p->np && p->p[vm_bx(i)] != NULL) {
            const Proto *np = p->p[vm_bx(i)];
            fprintf(out, "; function <line %d-%d>", (int)np->linedefined, (int)np->lastlinedefined);
            if (np->name) fprintf(out, " '%s'", np->name->data);
        }
        break;
    case OP_NEWTABLE:
        if (b || c) fprintf(out, "; hash %u, array %u", b, c);
        break;
    default: break;
    }
}

/* Operands, in the order and signedness each opcode uses them. */
static void list_operands(FILE *out, Instr i) {
    unsigned op = vm_op(i), a = vm_a(i), b = vm_b(i), c = vm_c(i), k = vm_k(i);
    char buf[64];
    switch (op) {
    case OP_LOADFALSE: case OP_LOADTRUE: case OP_CLOSE: case OP_TBC: case OP_RETURN1:
        snprintf(buf, sizeof buf, "%u", a);
        break;
    case OP_RETURN0: buf[0] = '\0'; break;
    case OP_MOVE: case OP_LOADNIL: case OP_GETUPVAL: case OP_SETUPVAL: case OP_UNM:
    case OP_BNOT: case OP_NOT: case OP_LEN: case OP_CONCAT: case OP_RETURN: case OP_TAILCALL:
        snprintf(buf, sizeof buf, "%u %u", a, b);
        break;
    case OP_VARARG: case OP_TFORCALL: snprintf(buf, sizeof buf, "%u %u", a, c); break;
    case OP_TEST: snprintf(buf, sizeof buf, "%u %u", a, k); break;
    case OP_EQ: case OP_LT: case OP_LE: case OP_EQK: case OP_TESTSET:
        snprintf(buf, sizeof buf, "%u %u %u", a, b, k);
        break;
    case OP_EQI: case OP_LTI: case OP_LEI: case OP_GTI: case OP_GEI:
        snprintf(buf, sizeof buf, "%u %d %u", a, vm_sb(i), k);
        break;
    case OP_ADDI: snprintf(buf, sizeof buf, "%u %u %d", a, b, vm_sc(i)); break;
    case OP_JMP: snprintf(buf, sizeof buf, "%" PRId32, vm_sbx(i)); break;
    case OP_EXTRAARG: snprintf(buf, sizeof buf, "%" PRIu32, vm_bx(i)); break;
    default:
        if (op >= OP__COUNT) {
            snprintf(buf, sizeof buf, "0x%016" PRIx64, (uint64_t)i);
            break;
        }
        switch (vm_opformats[op]) {
        case OPF_ABx: snprintf(buf, sizeof buf, "%u %" PRIu32, a, vm_bx(i)); break;
        case OPF_AsBx: snprintf(buf, sizeof buf, "%u %" PRId32, a, vm_sbx(i)); break;
        default: snprintf(buf, sizeof buf, "%u %u %u%s", a, b, c, k ? "k" : ""); break;
        }
    }
    fprintf(out, "%-16s", buf);
}

void vm_bytecode_list_instr(FILE *out, const Proto *p, int pc) {
    Instr i = p->code[pc];
    unsigned op = vm_op(i);
    char line[16];
    if (p->lineinfo)
        snprintf(line, sizeof line, "[%d]", (int)p->lineinfo[pc]);
    else
        snprintf(line, sizeof line, "[-]");
    /* built in memory so the padding before a missing comment can be trimmed */
    char *text = NULL;
    size_t size = 0;
    FILE *lf = open_memstream(&text, &size);
    FILE *o = lf ? lf : out;
    fprintf(o, "  %5d  %-6s  %-9s  ", pc, line, op < OP__COUNT ? vm_opnames[op] : "?");
    list_operands(o, i);
    list_comment(o, p, pc, i);
    if (lf != NULL) {
        fclose(lf);
        while (size > 0 && text[size - 1] == ' ') text[--size] = '\0';
        fputs(text, out);
        free(text);
    }
    fputc('\n', out);
}

static void list_function(FILE *out, const Proto *p, int *fnum) {
    char src[80];
    const String *s = p->source;
    if (s != NULL)
        vm_chunkid(src, sizeof src, s->data, s->len);
    else
        snprintf(src, sizeof src, "?");
    int n = (*fnum)++;
    if (n == 0)
        fprintf(out, "main <%s:%d-%d> (function 0, %d instructions)\n", src, (int)p->linedefined,
                (int)p->lastlinedefined, (int)p->ncode);
    else
        fprintf(out, "function <%s:%d-%d>%s%s%s (function %d, %d instructions)\n", src,
                (int)p->linedefined, (int)p->lastlinedefined, p->name ? " '" : "",
                p->name ? p->name->data : "", p->name ? "'" : "", n, (int)p->ncode);
    fprintf(out, "%u param%s%s, %u register%s, %d constant%s, %d upvalue%s, %d local%s, %d function%s\n",
            (unsigned)p->numparams, p->numparams == 1 ? "" : "s", p->is_vararg ? " + vararg" : "",
            (unsigned)p->maxstack, p->maxstack == 1 ? "" : "s", (int)p->nk, p->nk == 1 ? "" : "s",
            (int)p->nupvals, p->nupvals == 1 ? "" : "s", (int)p->nlocvars,
            p->nlocvars == 1 ? "" : "s", (int)p->np, p->np == 1 ? "" : "s");
    for (int pc = 0; pc < p->ncode; pc++) vm_bytecode_list_instr(out, p, pc);
    fprintf(out, "constants (%d):\n", (int)p->nk);
    for (int i = 0; i < p->nk; i++) {
        static const char *const kinds[] = {"N", "B", "B", "I", "F", "?", "S"};
        uint32_t tt = p->k[i].tt;
        fprintf(out, "  %5d  %s  ", i, tt <= VT_STR ? kinds[tt] : "?");
        list_value(out, &p->k[i]);
        fputc('\n', out);
    }
    fprintf(out, "locals (%d):\n", (int)p->nlocvars);
    for (int i = 0; i < p->nlocvars; i++) {
        const LocVar *lv = &p->locvars[i];
        fprintf(out, "  %5d  %-12s  %d-%d\n", i, lv->name ? lv->name->data : "?", (int)lv->startpc,
                (int)lv->endpc);
    }
    fprintf(out, "upvalues (%d):\n", (int)p->nupvals);
    for (int i = 0; i < p->nupvals; i++) {
        const UpvalDesc *d = &p->upvals[i];
        static const char *const kinds[] = {"", " <const>", " <close>"};
        fprintf(out, "  %5d  %-12s  %s %u%s\n", i, d->name ? d->name->data : "?",
                d->instack ? "register" : "upvalue", (unsigned)d->idx, d->kind <= 2 ? kinds[d->kind] : " ?");
    }
    for (int i = 0; i < p->np; i++) {
        fputc('\n', out);
        if (p->p[i] != NULL) list_function(out, p->p[i], fnum);
    }
}

void vm_bytecode_list(FILE *out, const Proto *p) {
    int fnum = 0;
    if (p != NULL) list_function(out, p, &fnum);
}
