/* test_bytecode.c: the bytecode writer, loader, verifier and listing (vm_bytecode.c,
 * vm_verify.c). Prototypes are built by hand so each verifier rule is tested alone; the
 * compiler's output is checked too (every program under tests/programs must verify and
 * survive a dump/load round trip). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_opcodes.h"
#include "vm_string.h"

static State *S;

static int setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* ======================================================================
 * Building prototypes by hand
 * ====================================================================== */

#define ABC(op, a, b, c) vm_encode_abc(OP_##op, a, b, c, 0)
#define ABCk(op, a, b, c) vm_encode_abc(OP_##op, a, b, c, 1)
#define ABx(op, a, bx) vm_encode_abx(OP_##op, a, bx)
#define AsBx(op, a, sbx) vm_encode_asbx(OP_##op, a, sbx)
#define sJ(off) vm_encode_asbx(OP_JMP, 0, off)

static String *str(const char *s) { return vm_string_newc(S, s); }

/* A function with [code]; maxstack [maxstack]; no constants, upvalues or children. */
static Proto *mkfunc(const Instr *code, int ncode, int maxstack) {
    Proto *p = gc_alloc(sizeof(Proto));
    p->h.type = VT_PROTO;
    p->code = gc_alloc_leaf((size_t)ncode * sizeof(Instr));
    memcpy(p->code, code, (size_t)ncode * sizeof(Instr));
    p->ncode = ncode;
    p->maxstack = (uint16_t)maxstack;
    p->source = str("=test");
    return p;
}

/* A main function: vararg, one upvalue _ENV. */
static Proto *mkmain(const Instr *code, int ncode, int maxstack) {
    Proto *p = mkfunc(code, ncode, maxstack);
    p->is_vararg = 1;
    p->nupvals = 1;
    p->upvals = gc_alloc(sizeof(UpvalDesc));
    p->upvals[0].instack = 1;
    p->upvals[0].name = str("_ENV");
    return p;
}

static void setk(Proto *p, int n, ...) {
    va_list ap;
    va_start(ap, n);
    p->k = gc_alloc((size_t)n * sizeof(Value));
    p->nk = n;
    for (int i = 0; i < n; i++) p->k[i] = va_arg(ap, Value);
    va_end(ap);
}

static void addchild(Proto *p, Proto *child) {
    Proto **np = gc_alloc((size_t)(p->np + 1) * sizeof(Proto *));
    if (p->np) memcpy(np, p->p, (size_t)p->np * sizeof(Proto *));
    np[p->np++] = child;
    p->p = np;
}

static void setupvals(Proto *p, int n, const UpvalDesc *d) {
    p->upvals = gc_alloc((size_t)n * sizeof(UpvalDesc));
    memcpy(p->upvals, d, (size_t)n * sizeof(UpvalDesc));
    p->nupvals = n;
}

#define CODE(...) (const Instr[]){__VA_ARGS__}, (int)(sizeof((Instr[]){__VA_ARGS__}) / sizeof(Instr))

static char why[256];

static const char *verify(const Proto *p) { return vm_bytecode_verify(p, why, sizeof why); }

/* Assert [p] is rejected with a message containing [part]. */
static void assert_rejected(const Proto *p, const char *part) {
    const char *r = verify(p);
    if (r == NULL) fail_msg("accepted, expected rejection with '%s'", part);
    if (strstr(r, part) == NULL) fail_msg("message '%s' lacks '%s'", r, part);
}

static void assert_accepted(const Proto *p) {
    const char *r = verify(p);
    if (r != NULL) fail_msg("rejected: %s", r);
}

/* A valid program using most features: constants of every type, a numeric for, a generic
 * for, a closure with upvalues of both kinds, a table constructor, varargs, debug info.
 *
 *  0  GETTABUP  0 0 0   ; _ENV "print"
 *  1  LOADK     1 1     ; 42
 *  2  LOADK     2 2     ; 1.5
 *  3  CALL      0 3 1
 *  4  LOADI     0 1
 *  5  LOADI     1 3
 *  6  LOADI     2 1
 *  7  FORPREP   0 -> 10
 *  8  MOVE      4 3
 *  9  FORLOOP   0 -> 8
 * 10  NEWTABLE  0
 * 11  VARARG    1 0
 * 12  SETLIST   0 0 0
 * 13  CLOSURE   1 0
 * 14  TEST      1 0
 * 15  JMP       -> 17
 * 16  LOADNIL   2 0
 * 17  EQK       0 3 0   ; K[3] = nil
 * 18  JMP       -> 19
 * 19  RETURN    0 2
 */
static Proto *sample(void) {
    Proto *p = mkmain(CODE(ABC(GETTABUP, 0, 0, 0), ABx(LOADK, 1, 1), ABx(LOADK, 2, 2), ABC(CALL, 0, 3, 1),
                           AsBx(LOADI, 0, 1), AsBx(LOADI, 1, 3), AsBx(LOADI, 2, 1), AsBx(FORPREP, 0, 2),
                           ABC(MOVE, 4, 3, 0), AsBx(FORLOOP, 0, -2), ABC(NEWTABLE, 0, 0, 0), ABC(VARARG, 1, 0, 0),
                           ABC(SETLIST, 0, 0, 0), ABx(CLOSURE, 1, 0), ABC(TEST, 1, 0, 0), sJ(1),
                           ABC(LOADNIL, 2, 0, 0), ABC(EQK, 0, 3, 0), sJ(0), ABC(RETURN, 0, 2, 0)),
                      6);
    setk(p, 6, vm_str(str("print")), vm_int(42), vm_float(1.5), vm_nil(), vm_bool(true), vm_bool(false));
    p->lineinfo = gc_alloc_leaf((size_t)p->ncode * sizeof(int32_t));
    for (int i = 0; i < p->ncode; i++) p->lineinfo[i] = 1 + i / 3;
    p->lineinfo[5] = 1; /* a line going backwards */
    p->locvars = gc_alloc(2 * sizeof(LocVar));
    p->nlocvars = 2;
    p->locvars[0] = (LocVar){str("t"), 11, 20};
    p->locvars[1] = (LocVar){str("f"), 14, 20};
    p->lastlinedefined = 0;
    /* child: function(x) return x + up end, capturing register 0 and _ENV */
    Proto *c = mkfunc(CODE(ABC(GETUPVAL, 1, 0, 0), ABC(ADD, 1, 0, 1), ABC(RETURN1, 1, 0, 0)), 2);
    c->numparams = 1;
    c->linedefined = 5;
    c->lastlinedefined = 7;
    c->name = str("inner");
    setupvals(c, 2, (UpvalDesc[]){{str("t"), 1, 0, 0}, {str("_ENV"), 0, 0, 0}});
    c->locvars = gc_alloc(sizeof(LocVar));
    c->nlocvars = 1;
    c->locvars[0] = (LocVar){str("x"), 0, 3};
    addchild(p, c);
    return p;
}

/* ======================================================================
 * Round trips
 * ====================================================================== */

static void assert_same_proto(const Proto *a, const Proto *b, bool strip) {
    assert_int_equal(a->numparams, b->numparams);
    assert_int_equal(a->is_vararg, b->is_vararg);
    assert_int_equal(a->maxstack, b->maxstack);
    assert_int_equal(a->ncode, b->ncode);
    assert_memory_equal(a->code, b->code, (size_t)a->ncode * sizeof(Instr));
    assert_int_equal(a->linedefined, b->linedefined);
    assert_int_equal(a->lastlinedefined, b->lastlinedefined);
    assert_int_equal(a->nk, b->nk);
    for (int i = 0; i < a->nk; i++) {
        assert_int_equal(a->k[i].tt, b->k[i].tt);
        if (a->k[i].tt == VT_STR)
            assert_true(vm_string_eq(a->k[i].u.s, b->k[i].u.s));
        else if (a->k[i].tt == VT_INT || a->k[i].tt == VT_FLOAT)
            assert_memory_equal(&a->k[i].u, &b->k[i].u, 8);
    }
    assert_int_equal(a->nupvals, b->nupvals);
    for (int i = 0; i < a->nupvals; i++) {
        assert_int_equal(a->upvals[i].instack, b->upvals[i].instack);
        assert_int_equal(a->upvals[i].kind, b->upvals[i].kind);
        assert_int_equal(a->upvals[i].idx, b->upvals[i].idx);
        if (strip || a->upvals[i].name == NULL)
            assert_null(b->upvals[i].name);
        else
            assert_true(vm_string_eq(a->upvals[i].name, b->upvals[i].name));
    }
    if (strip) {
        assert_null(b->lineinfo);
        assert_int_equal(b->nlocvars, 0);
        assert_null(b->name);
    } else {
        if (a->lineinfo == NULL)
            assert_null(b->lineinfo);
        else
            assert_memory_equal(a->lineinfo, b->lineinfo, (size_t)a->ncode * sizeof(int32_t));
        assert_int_equal(a->nlocvars, b->nlocvars);
        for (int i = 0; i < a->nlocvars; i++) {
            assert_true(vm_string_eq(a->locvars[i].name, b->locvars[i].name));
            assert_int_equal(a->locvars[i].startpc, b->locvars[i].startpc);
            assert_int_equal(a->locvars[i].endpc, b->locvars[i].endpc);
        }
        assert_true(a->name == NULL ? b->name == NULL : vm_string_eq(a->name, b->name));
    }
    assert_int_equal(a->np, b->np);
    for (int i = 0; i < a->np; i++) {
        assert_ptr_equal(b->p[i]->source, b->source); /* nested functions inherit it */
        assert_same_proto(a->p[i], b->p[i], strip);
    }
}

static void test_vm_bytecode_dump_roundtrip(void **state) {
    (void)state;
    Proto *p = sample();
    assert_accepted(p);
    size_t len;
    unsigned char *buf = vm_bytecode_dump(p, &len, false);
    assert_non_null(buf);
    assert_memory_equal(buf, VM_BC_SIGNATURE, VM_BC_SIGLEN);
    Proto *q = vm_bytecode_load(S, buf, len, why, sizeof why);
    if (q == NULL) fail_msg("load failed: %s", why);
    assert_same_proto(p, q, false);
    assert_string_equal(q->source->data, "=test");
    /* writing what was read gives the same bytes */
    size_t len2;
    unsigned char *buf2 = vm_bytecode_dump(q, &len2, false);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    free(buf);
    free(buf2);
}

static void test_vm_bytecode_dump_strip(void **state) {
    (void)state;
    Proto *p = sample();
    size_t full, len;
    unsigned char *b0 = vm_bytecode_dump(p, &full, false);
    unsigned char *buf = vm_bytecode_dump(p, &len, true);
    assert_non_null(buf);
    assert_true(len < full);
    Proto *q = vm_bytecode_load(S, buf, len, why, sizeof why);
    if (q == NULL) fail_msg("load failed: %s", why);
    assert_same_proto(p, q, true);
    assert_string_equal(q->source->data, "=?");
    free(b0);
    free(buf);
}

static void test_vm_bytecode_dump_rejects_bad_constant(void **state) {
    (void)state;
    Proto *p = sample();
    p->k[4] = vm_table(NULL); /* not something a file can hold */
    size_t len = 99;
    assert_null(vm_bytecode_dump(p, &len, false));
    assert_int_equal(len, 0);
}

/* Every program under tests/programs compiles to bytecode that verifies and survives a
 * dump/load round trip unchanged. */
static int roundtrip_file(const char *path, int *nfiles) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *src = malloc((size_t)n + 1);
    size_t got = fread(src, 1, (size_t)n, f);
    fclose(f);
    char chunk[1100];
    snprintf(chunk, sizeof chunk, "@%s", path);
    CompileError err;
    Proto *p = vm_compile(S, src, got, chunk, &err);
    free(src);
    if (p == NULL) return 0; /* syntax error tests */
    (*nfiles)++;
    const char *r = verify(p);
    if (r != NULL) {
        print_error("%s: compiler output rejected: %s\n", path, r);
        return 1;
    }
    size_t len;
    unsigned char *buf = vm_bytecode_dump(p, &len, false);
    if (buf == NULL) {
        print_error("%s: dump failed\n", path);
        return 1;
    }
    Proto *q = vm_bytecode_load(S, buf, len, why, sizeof why);
    int bad = 0;
    if (q == NULL) {
        print_error("%s: reload failed: %s\n", path, why);
        bad = 1;
    } else {
        size_t len2;
        unsigned char *buf2 = vm_bytecode_dump(q, &len2, false);
        if (buf2 == NULL || len2 != len || memcmp(buf, buf2, len) != 0) {
            print_error("%s: second dump differs\n", path);
            bad = 1;
        }
        free(buf2);
    }
    free(buf);
    return bad;
}

static int roundtrip_dir(const char *dir, int *nfiles) {
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode))
            bad += roundtrip_dir(path, nfiles);
        else if (strlen(e->d_name) > 4 && strcmp(e->d_name + strlen(e->d_name) - 4, ".lua") == 0)
            bad += roundtrip_file(path, nfiles);
    }
    closedir(d);
    return bad;
}

static void test_vm_bytecode_verify_compiler_output(void **state) {
    (void)state;
    const char *dirs[] = {"../../programs", "tests/programs", "../tests/programs"};
    int nfiles = 0, bad = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && nfiles == 0; i++)
        bad = roundtrip_dir(dirs[i], &nfiles);
    if (nfiles == 0) skip();
    print_message("%d programs compiled, verified and round-tripped\n", nfiles);
    assert_int_equal(bad, 0);
}

/* A small source compiled in memory round-trips too (works even without the folder). */
static void test_vm_bytecode_verify_compiled_snippet(void **state) {
    (void)state;
    static const char src[] =
        "local t = {1, 2, 3, n = 'x', [10] = false}\n"
        "for i, v in ipairs(t) do t[i] = v * 2 end\n"
        "for i = 10, 1, -1 do t[#t + 1] = i end\n"
        "local function f(...) local a, b = ... return select('#', ...), {...}, a or b end\n"
        "local s = 0\n"
        "while s < 100 do s = s + 1 if s % 7 == 0 then goto cont end ::cont:: end\n"
        "local obj = {v = 1}\n"
        "function obj:get() return self.v end\n"
        "print(f(1, 2, 3), obj:get(), s, t[1] .. t[2] .. 'z')\n"
        "return f(table.unpack(t))\n";
    CompileError err;
    Proto *p = vm_compile(S, src, sizeof src - 1, "=snippet", &err);
    if (p == NULL) fail_msg("compile failed: %d:%d: %s", err.line, err.col, err.msg);
    assert_accepted(p);
    size_t len;
    unsigned char *buf = vm_bytecode_dump(p, &len, false);
    Proto *q = vm_bytecode_load(S, buf, len, why, sizeof why);
    if (q == NULL) fail_msg("reload failed: %s", why);
    assert_same_proto(p, q, false);
    free(buf);
}

/* ======================================================================
 * Loader: malformed files
 * ====================================================================== */

static unsigned char *sample_bytes(size_t *len) {
    unsigned char *b = vm_bytecode_dump(sample(), len, false);
    assert_non_null(b);
    return b;
}

static void assert_load_fails(const unsigned char *b, size_t len, const char *part) {
    why[0] = '\0';
    Proto *p = vm_bytecode_load(S, b, len, why, sizeof why);
    if (p != NULL) fail_msg("loaded, expected failure '%s'", part);
    if (strstr(why, part) == NULL) fail_msg("message '%s' lacks '%s'", why, part);
    assert_null(strchr(why, '\n'));
}

static void test_vm_bytecode_load_empty(void **state) {
    (void)state;
    assert_load_fails((const unsigned char *)"", 0, "empty file");
    assert_load_fails(NULL, 0, "empty file");
}

static void test_vm_bytecode_load_truncated_everywhere(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = sample_bytes(&len);
    for (size_t n = 1; n < len; n++) {
        unsigned char *cut = malloc(n); /* exact size, so ASan sees over-reads */
        memcpy(cut, b, n);
        assert_load_fails(cut, n, "truncated file");
        free(cut);
    }
    free(b);
}

static void test_vm_bytecode_load_bad_signature(void **state) {
    (void)state;
    assert_load_fails((const unsigned char *)"print('hi')", 11, "bad signature");
    size_t len;
    unsigned char *b = sample_bytes(&len);
    b[1] = 'L';
    assert_load_fails(b, len, "bad signature");
    free(b);
}

static void test_vm_bytecode_load_version_mismatch(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = sample_bytes(&len);
    b[4] = 7;
    assert_load_fails(b, len, "version mismatch: file has 7, this tandem reads 1");
    free(b);
}

static void test_vm_bytecode_load_format_mismatch(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = sample_bytes(&len);
    b[7] = '\n'; /* CR -> LF in the check bytes "\x19\x93\r\n\x1a\n" at offset 5 */
    assert_load_fails(b, len, "corrupted header");
    free(b);
    b = sample_bytes(&len);
    b[11] = 4; /* instruction size */
    assert_load_fails(b, len, "instruction size 4");
    free(b);
    b = sample_bytes(&len);
    b[15] ^= 1; /* integer check value (offset 14, little-endian 0x5678) */
    assert_load_fails(b, len, "integer check");
    free(b);
    b = sample_bytes(&len);
    b[29] ^= 0x80; /* sign of the float check value */
    assert_load_fails(b, len, "float check");
    free(b);
}

static void test_vm_bytecode_load_trailing_garbage(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = sample_bytes(&len);
    unsigned char *c = malloc(len + 3);
    memcpy(c, b, len);
    memset(c + len, 0, 3);
    assert_load_fails(c, len + 3, "3 bytes of garbage");
    free(b);
    free(c);
}

/* The header, then a hand-written main function. */
static size_t header(unsigned char *b) {
    size_t len;
    unsigned char *s = sample_bytes(&len);
    memcpy(b, s, 30);
    free(s);
    return 30;
}

static void test_vm_bytecode_load_huge_count_refused(void **state) {
    (void)state;
    unsigned char b[64];
    size_t n = header(b);
    b[n++] = 0;                              /* no source */
    b[n++] = 0; b[n++] = 0;                  /* lines */
    b[n++] = 0; b[n++] = 1; b[n++] = 2;      /* params, vararg, maxstack */
    /* 2^31 - 1 instructions: refused before any allocation */
    b[n++] = 0xff; b[n++] = 0xff; b[n++] = 0xff; b[n++] = 0xff; b[n++] = 0x07;
    assert_load_fails(b, n, "truncated file");
    /* a count that does not fit 32 bits */
    n -= 5;
    b[n++] = 0xff; b[n++] = 0xff; b[n++] = 0xff; b[n++] = 0xff; b[n++] = 0x7f;
    assert_load_fails(b, n, "instruction count");
    /* an 11-byte varint */
    n -= 5;
    memset(b + n, 0x80, 10);
    n += 10;
    b[n++] = 0;
    assert_load_fails(b, n, "varint too long");
    /* an overlong encoding of 1 */
    n -= 11;
    b[n++] = 0x81; b[n++] = 0x00;
    assert_load_fails(b, n, "overlong");
}

/* Functions nested 300 deep: refused by depth, without deep recursion past the limit. */
static void test_vm_bytecode_load_deep_nesting(void **state) {
    (void)state;
    size_t cap = 30 + 300 * 16 + 16;
    unsigned char *b = malloc(cap);
    size_t n = header(b);
    b[n++] = 0;
    for (int d = 0; d < 300; d++) {
        b[n++] = 0; b[n++] = 0; b[n++] = 0; b[n++] = 1; b[n++] = 2; /* lines, params, vararg, maxstack */
        b[n++] = 0; b[n++] = 0; b[n++] = 0;                          /* code, constants, upvalues */
        b[n++] = 1;                                                  /* one nested function */
    }
    memset(b + n, 0, 16); /* rest: zero counts */
    assert_load_fails(b, n + 16, "nested deeper than 200");
    free(b);
}

static void test_vm_bytecode_load_bad_constant_tag(void **state) {
    (void)state;
    unsigned char b[128];
    size_t n = header(b);
    b[n++] = 0;
    b[n++] = 0; b[n++] = 0; b[n++] = 0; b[n++] = 1; b[n++] = 2;
    b[n++] = 1; /* one instruction: RETURN0 */
    uint64_t ret0 = vm_encode_abc(OP_RETURN0, 0, 0, 0, 0);
    for (int i = 0; i < 8; i++) b[n++] = (unsigned char)(ret0 >> (8 * i));
    b[n++] = 1; b[n++] = 9; /* one constant with tag 9 */
    memset(b + n, 0, 8);
    assert_load_fails(b, n + 8, "constant 0: bad tag 9");
}

/* Loading runs the verifier: an out-of-range register in a file is refused. */
static void test_vm_bytecode_load_runs_verifier(void **state) {
    (void)state;
    Proto *p = sample();
    p->code[8] = ABC(MOVE, 300, 3, 0);
    size_t len;
    unsigned char *b = vm_bytecode_dump(p, &len, false);
    assert_non_null(b);
    assert_load_fails(b, len, "function 0 (main chunk): instruction 8 (MOVE): register 300 out of range (maxstack 6)");
    free(b);
}

/* Every single-byte change of a valid file either loads (and then verifies) or fails with
 * a one-line reason; nothing crashes (run under ASan by tests/fuzz/run.sh too). */
static void test_vm_bytecode_load_single_byte_corruptions(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = sample_bytes(&len);
    static const unsigned masks[] = {0x01, 0x80, 0xff};
    int loaded = 0, rejected = 0;
    for (size_t off = 0; off < len; off++) {
        for (size_t m = 0; m < 4; m++) {
            unsigned char *c = malloc(len);
            memcpy(c, b, len);
            if (m < 3) c[off] ^= (unsigned char)masks[m]; else c[off] = 0;
            if (c[off] == b[off]) { free(c); continue; }
            why[0] = '\0';
            Proto *p = vm_bytecode_load(S, c, len, why, sizeof why);
            if (p) {
                loaded++;
                assert_null(verify(p));
            } else {
                rejected++;
                assert_true(why[0] != '\0');
                assert_null(strchr(why, '\n'));
            }
            free(c);
        }
    }
    assert_true(rejected > 0);
    free(b);
}

/* Random files and random mutations (deterministic generator). */
static void test_vm_bytecode_load_random_bytes(void **state) {
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    size_t len;
    unsigned char *base = sample_bytes(&len);
    for (int round = 0; round < 3000; round++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t n = round % 2 ? len : (size_t)(x % 200);
        unsigned char *c = malloc(n + 1);
        if (round % 2) {
            memcpy(c, base, len);
            for (int k = 0; k < 1 + (int)(x % 4); k++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                c[(x >> 8) % len] = (unsigned char)x;
            }
        } else {
            if (n >= 4) memcpy(c, VM_BC_SIGNATURE, 4);
            for (size_t i = 4; i < n; i++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                c[i] = (unsigned char)x;
            }
        }
        Proto *p = vm_bytecode_load(S, c, n, why, sizeof why);
        if (p != NULL) assert_null(verify(p));
        free(c);
    }
    free(base);
}

/* ======================================================================
 * Verifier rules, one by one
 * ====================================================================== */

static void test_vm_bytecode_verify_sample_ok(void **state) {
    (void)state;
    assert_accepted(sample());
    assert_accepted(mkmain(CODE(ABC(RETURN0, 0, 0, 0)), 0));
}

static void test_vm_bytecode_verify_registers(void **state) {
    (void)state;
    assert_rejected(mkmain(CODE(ABC(MOVE, 0, 2, 0), ABC(RETURN0, 0, 0, 0)), 2),
                    "instruction 0 (MOVE): register 2 out of range (maxstack 2)");
    assert_rejected(mkmain(CODE(ABC(LOADNIL, 0, 2, 0), ABC(RETURN0, 0, 0, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(CALL, 0, 3, 1), ABC(RETURN0, 0, 0, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(CALL, 0, 1, 4), ABC(RETURN0, 0, 0, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(CONCAT, 0, 3, 0), ABC(RETURN0, 0, 0, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(CONCAT, 0, 1, 0), ABC(RETURN0, 0, 0, 0)), 2), "at least 2");
    assert_rejected(mkmain(CODE(ABC(SELF, 1, 0, 0), ABC(RETURN0, 0, 0, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(RETURN, 1, 3, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(RETURN1, 2, 0, 0)), 2), "register 2");
    assert_rejected(mkmain(CODE(ABC(TFORCALL, 0, 0, 2), AsBx(TFORLOOP, 0, -2), ABC(RETURN0, 0, 0, 0)), 5),
                    "register 5");
    assert_rejected(mkmain(CODE(ABC(VARARG, 1, 0, 3), ABC(RETURN0, 0, 0, 0)), 2), "register 2");
    assert_accepted(mkmain(CODE(ABC(LOADNIL, 0, 1, 0), ABC(CONCAT, 0, 2, 0), ABC(RETURN, 2, 1, 0)), 2));
    Proto *big = mkmain(CODE(ABC(RETURN0, 0, 0, 0)), VM_MAXREGS + 1);
    assert_rejected(big, "maxstack 251 above the limit");
    Proto *params = mkmain(CODE(ABC(RETURN0, 0, 0, 0)), 1);
    params->numparams = 2;
    assert_rejected(params, "2 parameters but maxstack 1");
}

static void test_vm_bytecode_verify_constants(void **state) {
    (void)state;
    Proto *p = mkmain(CODE(ABx(LOADK, 0, 2), ABC(RETURN0, 0, 0, 0)), 1);
    setk(p, 2, vm_int(1), vm_str(str("a")));
    assert_rejected(p, "constant 2 out of range (2 constants)");
    p = mkmain(CODE(ABC(GETFIELD, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 1);
    setk(p, 1, vm_int(1));
    assert_rejected(p, "constant 0 is not a string");
    p = mkmain(CODE(ABC(GETTABUP, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 1);
    setk(p, 1, vm_float(2.0));
    assert_rejected(p, "not a string");
    p = mkmain(CODE(ABCk(SETFIELD, 0, 0, 1), ABC(RETURN0, 0, 0, 0)), 1);
    setk(p, 2, vm_str(str("a")), vm_nil());
    assert_accepted(p); /* any value may be stored */
    p = mkmain(CODE(ABCk(SELF, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 2);
    setk(p, 1, vm_bool(true));
    assert_rejected(p, "not a string");
    p = mkmain(CODE(ABC(ADDK, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 1);
    setk(p, 1, vm_str(str("1")));
    assert_rejected(p, "not a number");
    p = mkmain(CODE(ABC(RETURN0, 0, 0, 0)), 1);
    setk(p, 1, vm_lightud(p));
    assert_rejected(p, "constant 0: type 5 not allowed");
}

static void test_vm_bytecode_verify_upvalues(void **state) {
    (void)state;
    assert_rejected(mkmain(CODE(ABC(GETUPVAL, 0, 1, 0), ABC(RETURN0, 0, 0, 0)), 1),
                    "upvalue 1 out of range (1 upvalues)");
    /* a top function without upvalues (string.dump of a plain function) is fine */
    Proto *p = mkmain(CODE(ABC(RETURN0, 0, 0, 0)), 1);
    p->nupvals = 0;
    char why[256];
    assert_null(vm_bytecode_verify(p, why, sizeof why));
    /* nested: register captured beyond the parent's frame, upvalue beyond its upvalues */
    p = mkmain(CODE(ABx(CLOSURE, 0, 0), ABC(RETURN0, 0, 0, 0)), 2);
    Proto *c = mkfunc(CODE(ABC(RETURN0, 0, 0, 0)), 0);
    setupvals(c, 1, (UpvalDesc[]){{NULL, 1, 0, 2}});
    addchild(p, c);
    assert_rejected(p, "function 1 (line 0): upvalue 0: enclosing register 2 out of range");
    c->upvals[0] = (UpvalDesc){NULL, 0, 0, 1};
    assert_rejected(p, "enclosing upvalue 1 out of range");
    c->upvals[0] = (UpvalDesc){NULL, 0, 0, 0};
    assert_accepted(p);
    c->upvals[0].kind = 3;
    assert_rejected(p, "bad kind");
}

static void test_vm_bytecode_verify_jumps(void **state) {
    (void)state;
    assert_rejected(mkmain(CODE(sJ(5), ABC(RETURN0, 0, 0, 0)), 1),
                    "jump target 6 outside the function (2 instructions)");
    assert_rejected(mkmain(CODE(sJ(-2), ABC(RETURN0, 0, 0, 0)), 1), "jump target -1");
    assert_rejected(mkmain(CODE(ABC(LOADNIL, 0, 0, 0)), 1), "falls off the end");
    assert_accepted(mkmain(CODE(ABC(RETURN0, 0, 0, 0), sJ(-2)), 1));
    assert_rejected(mkmain(CODE(ABC(TEST, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 1), "test not followed by JMP");
    assert_rejected(mkmain(CODE(ABC(RETURN0, 0, 0, 0), ABC(TEST, 0, 0, 0), sJ(-3)), 1), "skip past the end");
    assert_rejected(mkmain(CODE(AsBx(FORPREP, 0, 1), ABC(RETURN0, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 4),
                    "FORPREP does not exit past its FORLOOP");
    assert_rejected(mkmain(CODE(AsBx(FORLOOP, 0, -1), ABC(RETURN0, 0, 0, 0)), 4),
                    "FORLOOP does not jump back");
    assert_rejected(mkmain(CODE(AsBx(TFORPREP, 0, 0), ABC(RETURN0, 0, 0, 0)), 8),
                    "TFORPREP does not jump to a TFORCALL");
    assert_rejected(mkmain(CODE(ABC(TFORCALL, 0, 0, 1), ABC(RETURN0, 0, 0, 0)), 8),
                    "TFORCALL not followed by a TFORLOOP");
    assert_accepted(mkmain(CODE(AsBx(TFORPREP, 0, 1), ABC(MOVE, 0, 4, 0), ABC(TFORCALL, 0, 0, 1),
                                AsBx(TFORLOOP, 0, -3), ABC(RETURN0, 0, 0, 0)),
                           8));
    Proto *p = mkmain(CODE(ABC(RETURN0, 0, 0, 0)), 1);
    p->code[0] |= (uint64_t)2 << VM_OP_SHIFT_K;
    assert_rejected(p, "reserved flag bits");
    p->code[0] = OP__COUNT;
    assert_rejected(p, "invalid opcode");
}

static void test_vm_bytecode_verify_setlist_extraarg(void **state) {
    (void)state;
    assert_rejected(mkmain(CODE(ABC(NEWTABLE, 0, 0, 0), ABCk(SETLIST, 0, 1, 0), ABC(RETURN0, 0, 0, 0)), 2),
                    "not followed by EXTRAARG");
    assert_rejected(mkmain(CODE(ABx(EXTRAARG, 0, 0), ABC(RETURN0, 0, 0, 0)), 1), "EXTRAARG not after SETLIST");
    assert_accepted(mkmain(CODE(ABC(NEWTABLE, 0, 0, 0), ABCk(SETLIST, 0, 1, 0), ABx(EXTRAARG, 0, 70000),
                                ABC(RETURN0, 0, 0, 0)),
                           2));
    assert_rejected(mkmain(CODE(sJ(2), ABC(NEWTABLE, 0, 0, 0), ABCk(SETLIST, 0, 1, 0), ABx(EXTRAARG, 0, 1),
                                ABC(RETURN0, 0, 0, 0)),
                           2),
                    "jump to EXTRAARG");
    /* SETLIST on a register that never got a table */
    assert_rejected(mkmain(CODE(AsBx(LOADI, 0, 1), ABC(SETLIST, 0, 1, 0), ABC(RETURN0, 0, 0, 0)), 2),
                    "register 0 may not hold the constructor's table");
    /* a table on one path only */
    assert_rejected(mkmain(CODE(ABC(TEST, 1, 0, 0), sJ(1), ABC(NEWTABLE, 0, 0, 0), ABC(SETLIST, 0, 1, 0),
                                ABC(RETURN0, 0, 0, 0)),
                           2),
                    "may not hold");
    /* the table register captured by a closure, which could replace it during a call */
    Proto *p = mkmain(CODE(ABC(NEWTABLE, 0, 0, 0), ABx(CLOSURE, 1, 0), ABC(CALL, 1, 1, 1),
                           ABC(SETLIST, 0, 1, 0), ABC(RETURN0, 0, 0, 0)),
                      2);
    Proto *c = mkfunc(CODE(ABC(RETURN0, 0, 0, 0)), 0);
    setupvals(c, 1, (UpvalDesc[]){{NULL, 1, 0, 0}});
    addchild(p, c);
    assert_rejected(p, "may not hold");
    /* ... but after CLOSE the register is free again */
    p = mkmain(CODE(ABx(CLOSURE, 1, 0), ABC(CLOSE, 0, 0, 0), ABC(NEWTABLE, 0, 0, 0), ABC(SETLIST, 0, 1, 0),
                    ABC(RETURN0, 0, 0, 0)),
               2);
    addchild(p, c);
    assert_accepted(p);
}

static void test_vm_bytecode_verify_open_results(void **state) {
    (void)state;
    /* CALL B == 0 needs the top from the instruction just before */
    assert_rejected(mkmain(CODE(ABC(CALL, 0, 0, 1), ABC(RETURN0, 0, 0, 0)), 2),
                    "top used without a preceding open call");
    /* VARARG C == 0 must be consumed at once */
    assert_rejected(mkmain(CODE(ABC(VARARG, 0, 0, 0), ABC(RETURN0, 0, 0, 0)), 2),
                    "open result list not used");
    /* the producer must not start below the consumer's values */
    assert_rejected(mkmain(CODE(ABC(VARARG, 0, 0, 0), ABC(CALL, 0, 0, 1), ABC(RETURN0, 0, 0, 0)), 2),
                    "open result list starts at register 0, below register 1");
    assert_accepted(mkmain(CODE(ABC(VARARG, 1, 0, 0), ABC(CALL, 0, 0, 1), ABC(RETURN0, 0, 0, 0)), 2));
    assert_accepted(mkmain(CODE(ABC(VARARG, 0, 0, 0), ABC(RETURN, 0, 0, 0)), 1));
    /* no jump into the consumer */
    assert_rejected(mkmain(CODE(sJ(1), ABC(VARARG, 0, 0, 0), ABC(RETURN, 0, 0, 0)), 1),
                    "jump to an instruction that uses the top");
    /* VARARG only in vararg functions */
    Proto *p = mkmain(CODE(ABC(VARARG, 0, 0, 2), ABC(RETURN0, 0, 0, 0)), 1);
    p->is_vararg = 0;
    assert_rejected(p, "not vararg");
    /* TAILCALL; RETURN A 0 as the compiler emits it */
    assert_accepted(mkmain(CODE(ABC(TAILCALL, 0, 1, 0), ABC(RETURN, 0, 0, 0)), 1));
}

static void test_vm_bytecode_verify_locvars(void **state) {
    (void)state;
    Proto *p = mkmain(CODE(ABC(RETURN0, 0, 0, 0)), 1);
    p->locvars = gc_alloc(2 * sizeof(LocVar));
    p->nlocvars = 1;
    p->locvars[0] = (LocVar){str("x"), 0, 2};
    assert_rejected(p, "local 0: bad range 0..2");
    p->locvars[0] = (LocVar){str("x"), 0, 1};
    assert_accepted(p);
    p->locvars[1] = (LocVar){str("y"), 0, 1};
    p->nlocvars = 2;
    assert_rejected(p, "2 locals active at instruction 0 (maxstack 1)");
    p->locvars[1].name = NULL;
    assert_rejected(p, "local 1: missing name");
}

static void test_vm_bytecode_verify_message_numbers_functions(void **state) {
    (void)state;
    /* main -> f1 -> f2, main -> f3: pre-order numbering; f3 has the bad instruction */
    Proto *p = mkmain(CODE(ABx(CLOSURE, 0, 0), ABx(CLOSURE, 0, 1), ABC(RETURN0, 0, 0, 0)), 1);
    Proto *f1 = mkfunc(CODE(ABx(CLOSURE, 0, 0), ABC(RETURN0, 0, 0, 0)), 1);
    Proto *f2 = mkfunc(CODE(ABC(RETURN0, 0, 0, 0)), 0);
    Proto *f3 = mkfunc(CODE(AsBx(LOADI, 0, 0), ABC(MOVE, 0, 9, 0), ABC(RETURN0, 0, 0, 0)), 3);
    f3->linedefined = 12;
    addchild(f1, f2);
    addchild(p, f1);
    addchild(p, f3);
    assert_rejected(p, "function 3 (line 12): instruction 1 (MOVE): register 9 out of range (maxstack 3)");
}

/* ======================================================================
 * Listing
 * ====================================================================== */

static void test_vm_bytecode_list_sample(void **state) {
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    vm_bytecode_list(out, sample());
    fclose(out);
    const char *expect[] = {
        "main <test:0-0> (function 0, 20 instructions)",
        "0 params + vararg, 6 registers, 6 constants, 1 upvalue, 2 locals, 1 function",
        "GETTABUP", "; _ENV \"print\"", "; 42", "; 1.5", "; exit to 10", "; to 8", "; to 17",
        "; 2 in 0 out", "; all out", "; 1 out", "function <line 5-7> 'inner'",
        "constants (6):", "I  42", "F  1.5", "S  \"print\"", "N  nil", "B  true",
        "locals (2):", "upvalues (1):", "_ENV          register 0",
        "function <test:5-7> 'inner' (function 1, 3 instructions)",
        "1 param, 2 registers", "; t", "t             register 0", "_ENV          upvalue 0",
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        if (strstr(text, expect[i]) == NULL) fail_msg("listing lacks '%s':\n%s", expect[i], text);
    /* one line per instruction: "  <pc>  [<line>]  OP" */
    assert_non_null(strstr(text, "     19  [7]     RETURN"));
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_bytecode_dump_roundtrip),
        cmocka_unit_test(test_vm_bytecode_dump_strip),
        cmocka_unit_test(test_vm_bytecode_dump_rejects_bad_constant),
        cmocka_unit_test(test_vm_bytecode_verify_compiler_output),
        cmocka_unit_test(test_vm_bytecode_verify_compiled_snippet),
        cmocka_unit_test(test_vm_bytecode_load_empty),
        cmocka_unit_test(test_vm_bytecode_load_truncated_everywhere),
        cmocka_unit_test(test_vm_bytecode_load_bad_signature),
        cmocka_unit_test(test_vm_bytecode_load_version_mismatch),
        cmocka_unit_test(test_vm_bytecode_load_format_mismatch),
        cmocka_unit_test(test_vm_bytecode_load_trailing_garbage),
        cmocka_unit_test(test_vm_bytecode_load_huge_count_refused),
        cmocka_unit_test(test_vm_bytecode_load_deep_nesting),
        cmocka_unit_test(test_vm_bytecode_load_bad_constant_tag),
        cmocka_unit_test(test_vm_bytecode_load_runs_verifier),
        cmocka_unit_test(test_vm_bytecode_load_single_byte_corruptions),
        cmocka_unit_test(test_vm_bytecode_load_random_bytes),
        cmocka_unit_test(test_vm_bytecode_verify_sample_ok),
        cmocka_unit_test(test_vm_bytecode_verify_registers),
        cmocka_unit_test(test_vm_bytecode_verify_constants),
        cmocka_unit_test(test_vm_bytecode_verify_upvalues),
        cmocka_unit_test(test_vm_bytecode_verify_jumps),
        cmocka_unit_test(test_vm_bytecode_verify_setlist_extraarg),
        cmocka_unit_test(test_vm_bytecode_verify_open_results),
        cmocka_unit_test(test_vm_bytecode_verify_locvars),
        cmocka_unit_test(test_vm_bytecode_verify_message_numbers_functions),
        cmocka_unit_test(test_vm_bytecode_list_sample),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
