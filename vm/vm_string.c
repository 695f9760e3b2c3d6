/* vm_string.c: immutable byte strings: allocation, hashing and ordering (see String in vm_value.h). */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "vm_state.h"
#include "vm_string.h"
#include "vm_table.h"

/* Seeds of the hash: odd 64-bit constants with well-spread bits (the fractional parts of
 * sqrt(2), sqrt(3) and sqrt(5)). The hash is not keyed: tables use linear probing over a
 * good 64-bit mix, and a program that wants to collide keys on purpose can always do so
 * with enough tries, as with Lua's seeded-but-public hash. */
#define HASH_S0 0x6a09e667f3bcc909ull
#define HASH_S1 0xbb67ae8584caa73bull
#define HASH_S2 0x3c6ef372fe94f82bull

/* ======================================================================
 * Allocation
 * ====================================================================== */

String *vm_string_alloc(State *S, size_t len) {
    /* A length that would overflow the size computation asks the collector for an impossible
     * block, which vm_alloc_leaf turns into "not enough memory". */
    size_t size = len > SIZE_MAX / 2 ? SIZE_MAX : sizeof(String) + len + 1;
    String *s = vm_alloc_leaf(S, size);   /* pointer-free: a String holds no references */
    s->h.type = VT_STR;
    s->h.flags = 0;
    s->h.extra = 0;
    s->hash = 0;                          /* computed on first use (vm_string_hash) */
    s->len = len;
    s->data[len] = '\0';
    return s;
}

String *vm_string_new(State *S, const char *src, size_t len) {
    String *s = vm_string_alloc(S, len);
    if (len > 0) memcpy(s->data, src, len);
    return s;
}

String *vm_string_newc(State *S, const char *cstr) {
    return vm_string_new(S, cstr, strlen(cstr));
}

/* ======================================================================
 * Hashing
 * ======================================================================
 * Every byte is hashed, whatever the length: the hash is computed once per string and
 * cached, a table lookup that finds the key compares all the bytes anyway, and sampling
 * (Lua 5.1-5.3) lets strings that differ only between samples collide in whole families.
 * The core is a 128-bit multiply folded to 64 bits (the mixing step of wyhash), 16 bytes
 * per round. */

static inline uint64_t mix(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t read64(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);   /* unaligned load; compiles to one mov on x86-64 */
    return v;
}

static inline uint64_t read32(const char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* 1 to 3 bytes, each byte read once or twice, no branch on the exact length. */
static inline uint64_t read_small(const char *p, size_t n) {
    return ((uint64_t)(unsigned char)p[0] << 16) | ((uint64_t)(unsigned char)p[n >> 1] << 8) |
           (unsigned char)p[n - 1];
}

static uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t seed = HASH_S0 ^ mix(n ^ HASH_S1, HASH_S2);
    uint64_t a, b;
    if (n <= 16) {
        if (n >= 4) {
            /* two overlapping 4-byte reads from each end cover 4..16 bytes */
            size_t q = (n >> 3) << 2;
            a = (read32(p) << 32) | read32(p + q);
            b = (read32(p + n - 4) << 32) | read32(p + n - 4 - q);
        } else if (n > 0) {
            a = read_small(p, n);
            b = 0;
        } else {
            a = b = 0;
        }
    } else {
        size_t i = n;
        if (i > 48) {
            uint64_t s1 = seed, s2 = seed;
            do {
                seed = mix(read64(p) ^ HASH_S1, read64(p + 8) ^ seed);
                s1 = mix(read64(p + 16) ^ HASH_S2, read64(p + 24) ^ s1);
                s2 = mix(read64(p + 32) ^ HASH_S0, read64(p + 40) ^ s2);
                p += 48;
                i -= 48;
            } while (i > 48);
            seed ^= s1 ^ s2;
        }
        while (i > 16) {
            seed = mix(read64(p) ^ HASH_S1, read64(p + 8) ^ seed);
            p += 16;
            i -= 16;
        }
        /* the last 16 bytes of the string (overlapping what came before is fine) */
        a = read64(p + i - 16);
        b = read64(p + i - 8);
    }
    return mix(HASH_S1 ^ n, mix(a ^ HASH_S1, b ^ seed));
}

uint32_t vm_string_hash(String *s) {
    uint32_t cached = vm_str_cachedhash(s);
    if (cached != 0) return cached;
    uint64_t h = hash_bytes(s->data, s->len);
    uint32_t h32 = (uint32_t)(h ^ (h >> 32));
    if (h32 == 0) h32 = 1;   /* 0 means "not computed yet" */
    __atomic_store_n(&s->hash, h32, __ATOMIC_RELAXED); /* see vm_str_cachedhash */
    return h32;
}

/* ======================================================================
 * Reusing short strings
 * ======================================================================
 * A direct-mapped cache indexed by a cheap hash of the bytes (two words that, for up to 16
 * bytes, hold them all, so they also decide equality without memcmp). Strings are
 * immutable and equality never depends on identity, so returning an older string with the
 * same bytes is invisible to programs; a reused string also keeps its table hash once
 * computed. The cache holds its strings strongly (at most VM_STRCACHE_SIZE per coroutine). */

/* Words of [p, p + n) read as hash_bytes reads short strings: for n <= 16 they hold every
 * byte (the reads overlap), beyond that the first and the last 8. */
static inline void edge_words(const char *p, size_t n, uint64_t *a, uint64_t *b) {
    if (n >= 8) {
        *a = read64(p);
        *b = read64(p + n - 8);
    } else if (n >= 4) {
        *a = read32(p);
        *b = read32(p + n - 4);
    } else {
        *a = n > 0 ? read_small(p, n) : 0;
        *b = 0;
    }
}

String *vm_string_reuse(State *S, const char *s, size_t len) {
    if (len > VM_STRCACHE_MAXLEN) return vm_string_new(S, s, len);
    String **cache = S->strcache;
    if (cache == NULL) cache = S->strcache = vm_alloc(S, VM_STRCACHE_SIZE * sizeof(String *));
    uint64_t a, b;
    edge_words(s, len, &a, &b);
    uint64_t h = ((a ^ len) * HASH_S0) ^ (b * HASH_S1);
    String **slot = &cache[(h >> 40) & (VM_STRCACHE_SIZE - 1)];
    String *c = *slot;
    if (c != NULL && c->len == len) {
        if (len > 16) {
            if (memcmp(c->data, s, len) == 0) return c;
        } else {
            uint64_t ca, cb;
            edge_words(c->data, len, &ca, &cb);
            if (ca == a && cb == b) return c;
        }
    }
    c = vm_string_new(S, s, len);
    *slot = c;
    return c;
}

/* ======================================================================
 * Ordering
 * ======================================================================
 * lua5.4 compares with strcoll() on each '\0'-separated piece in turn, a shorter string
 * being smaller when all its pieces are equal. data[len] is always '\0', so every piece is
 * a proper C string. In the C locale this is plain unsigned byte order; the strcoll loop is
 * kept so that os.setlocale() changes the order as it does in Lua. */
int vm_string_cmp(const String *a, const String *b) {
    const char *l = a->data, *r = b->data;
    size_t ll = a->len, lr = b->len;
    for (;;) {
        int c = strcoll(l, r);
        if (c != 0) return c;
        size_t n = strlen(l);   /* equal pieces: both have this length */
        if (n == lr) return n == ll ? 0 : 1;   /* b is done */
        if (n == ll) return -1;                /* a is done, b goes on */
        n++;                                   /* skip the '\0' */
        l += n;
        ll -= n;
        r += n;
        lr -= n;
    }
}

/* ======================================================================
 * Interning
 * ======================================================================
 * A plain table from each name to itself (Global.intern). It holds its strings strongly, so
 * it is bounded: past VM_INTERN_MAX entries a fresh table replaces it. Strings interned
 * before stay valid, they just stop being shared with later ones. */
#define VM_INTERN_MAX 65536

String *vm_string_intern(State *S, const char *s, size_t len) {
    if (len > VM_INTERN_MAXLEN) return vm_string_new(S, s, len);
    Global *g = S->g;
    /* A stack copy to look the bytes up without allocating. */
    union {
        String str;
        char bytes[sizeof(String) + VM_INTERN_MAXLEN + 1];
    } key;
    key.str.h.type = VT_STR;
    key.str.hash = 0;
    key.str.len = len;
    memcpy(key.str.data, s, len);
    key.str.data[len] = '\0';
    if (g->intern != NULL) {
        Value v = vm_loadv(vm_table_getstr(g->intern, &key.str));
        if (v.tt == VT_STR) return v.u.s;
    }
    if (g->intern == NULL || vm_table_hlive(g->intern) >= VM_INTERN_MAX) g->intern = vm_table_new(S, 0, 256);
    String *ns = vm_string_new(S, s, len);
    Value v = vm_str(ns);
    vm_table_setstr(S, g->intern, ns, &v);
    return ns;
}

bool vm_string_equal(String *a, String *b) { return vm_string_eq(a, b); }
