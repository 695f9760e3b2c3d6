/* vm_table.c: Lua tables: an array part plus an open-addressing hash part (see Table in
 * vm_value.h for the layout and its invariants). */
#include <assert.h>
#include <string.h>

#include "vm_state.h"
#include "vm_string.h"
#include "vm_table.h"
#include "gc_api.h"

/* Largest array part: 2^MAXABITS slots. asize is a uint32_t, and 2^30 Values are already
 * 16 GB. Integer keys above it always live in the hash part. */
#define MAXABITS 30
/* Largest hash part: 2^MAXHBITS nodes (hmask is a uint32_t; 2^30 nodes are 32 GB). */
#define MAXHBITS 30

/* ======================================================================
 * Hash part
 * ======================================================================
 * Open addressing with linear probing over a power-of-two number of nodes. A node is
 *   empty  key nil                 (ends every probe sequence)
 *   live   key set, value non-nil
 *   dead   key set, value nil      (a removed key: kept so that next() can resume from it)
 * Invariants (checked by vm_table_check):
 *   - every key is reachable from its home node (hash & hmask) without crossing an empty
 *     node, and appears once;
 *   - hused (live + dead nodes) never exceeds hlimit(capacity), so at least a quarter of
 *     the nodes (one node for 2 or 4 nodes) stay empty and every probe ends;
 *   - keys are normalised: no nil, no NaN, no float with an integer value, no integer in
 *     1..asize (those live in the array part).
 * A new key takes the first dead node of its probe sequence if there is one (removing and
 * adding keys in turn does not fill the table with dead nodes); otherwise it takes the empty
 * node that ended the probe, and when that would pass the limit the table is rehashed:
 * sizes are recomputed from the live keys only, which drops every dead node.
 *
 * Rejected: Lua's chained scatter table (Brent's variation) needs a 'next' field per node,
 * which the shared Node layout does not have; and lookups in it chase pointers, where
 * linear probing reads neighbouring nodes from the same cache lines. */

const Value vm_absent = {{0}, VT_NIL};

/* ======================================================================
 * Array part and its length hint
 * ======================================================================
 * An array block has asize + 1 slots: arr[asize] is a hidden slot, never a value, whose
 * u.i holds the length hint, the border last found by vm_table_len (0 .. asize; any value
 * in that range is correct, it is only where the search starts). It makes `t[#t+1] = v`
 * and `t[#t] = nil` O(1) instead of a binary search over the array part (5M appends:
 * 630 ms in vm_table_len alone without it; lua5.4 keeps such a hint in 'alimit'). Its tag
 * stays VT_NIL. The slot lives in the block because Table has no field for it (a uint32_t
 * in the padding after hlive would do, without growing Table); so any code that allocates
 * t->arr must go through this file (vm_table_reserve). */

static inline uint32_t gethint(const Table *t) { return (uint32_t)t->arr[t->asize].u.i; }
static inline void sethint(Table *t, uint32_t h) { t->arr[t->asize].u.i = h; }

/* Most keys a hash part of [cap] nodes may hold, dead ones included: 3/4 of the nodes
 * (one less than all for the tiny sizes, so a probe always finds an empty node). */
static inline uint32_t hlimit(uint32_t cap) {
    return cap <= 4 ? (cap == 0 ? 0 : cap - 1) : cap - (cap >> 2);
}

/* Hash part size for [n] keys: the smallest power of two that holds them with 1/8 of them
 * to spare, so that churn (remove a key, add another) rehashes at most once every n/8 new
 * keys, which keeps the rehash cost amortised O(1). 0 keys: no hash part. */
static uint32_t capfor(State *S, uint64_t n) {
    if (n == 0) return 0;
    uint64_t want = n + (n >> 3);
    uint32_t cap = 2;
    while (hlimit(cap) < want) {
        if (cap >= (1u << MAXHBITS)) vm_runerror(S, "table overflow");
        cap <<= 1;
    }
    return cap;
}

/* 64-bit word to a 32-bit hash. Integers differing only in high bits spread over the
 * low bits that index the nodes, and consecutive integers land on distinct nodes. */
static inline uint32_t hashword(uint64_t x) {
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    return (uint32_t)x;
}

static inline uint32_t hashint(vm_Integer i) { return hashword((uint64_t)i); }

static inline uint32_t hashstr(String *s) { return s->hash != 0 ? s->hash : vm_string_hash(s); }

/* Hash of a normalised, non-nil key. */
static inline uint32_t keyhash(const Value *k) {
    switch (k->tt) {
    case VT_STR: return hashstr(k->u.s);
    case VT_FALSE: return 0x5bd1e995u;
    case VT_TRUE: return 0x1b873593u;
    default: return hashword((uint64_t)k->u.i);   /* integer, float bits or a pointer */
    }
}

/* String keys: pointer first, then hash, length and bytes. [a] is a key already in the
 * table (its hash is cached), [b] the key looked up with hash [hb]. */
static inline bool streq(const String *a, const String *b, uint32_t hb) {
    return a == b || (a->hash == hb && a->len == b->len && memcmp(a->data, b->data, a->len) == 0);
}

/* Key equality for normalised keys: strings by bytes, booleans by tag, integers and
 * floats by value (no NaN, and -0.0 became integer 0), everything else by identity. */
static inline bool keyeq(const Value *nk, const Value *k, uint32_t h) {
    if (nk->tt != k->tt) return false;
    switch (k->tt) {
    case VT_STR: return streq(nk->u.s, k->u.s, h);
    case VT_FALSE:
    case VT_TRUE: return true;
    default: return nk->u.i == k->u.i;
    }
}

/* Float with an integer value (in range) to that integer. */
static inline bool floatkey(vm_Number d, vm_Integer *out) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        vm_Integer i = (vm_Integer)d;
        if ((vm_Number)i == d) {
            *out = i;
            return true;
        }
    }
    return false;
}

/* Node holding integer key [k] (live or dead), or NULL. */
static inline Node *findint(const Table *t, vm_Integer k) {
    if (t->node == NULL) return NULL;
    uint32_t m = t->hmask, i = hashint(k) & m;
    for (;;) {
        Node *n = &t->node[i];
        if (n->key.tt == VT_INT) {
            if (n->key.u.i == k) return n;
        } else if (n->key.tt == VT_NIL) {
            return NULL;
        }
        i = (i + 1) & m;
    }
}

/* Node holding string key [s] (live or dead), or NULL. */
static inline Node *findstr(const Table *t, String *s) {
    if (t->node == NULL) return NULL;
    uint32_t h = hashstr(s);
    uint32_t m = t->hmask, i = h & m;
    for (;;) {
        Node *n = &t->node[i];
        if (n->key.tt == VT_STR) {
            if (streq(n->key.u.s, s, h)) return n;
        } else if (n->key.tt == VT_NIL) {
            return NULL;
        }
        i = (i + 1) & m;
    }
}

/* Node holding normalised key [k] (live or dead), or NULL. */
static Node *findkey(const Table *t, const Value *k) {
    if (t->node == NULL) return NULL;
    uint32_t h = keyhash(k);
    uint32_t m = t->hmask, i = h & m;
    for (;;) {
        Node *n = &t->node[i];
        if (keyeq(&n->key, k, h)) return n;
        if (n->key.tt == VT_NIL) return NULL;
        i = (i + 1) & m;
    }
}

/* Place a key known to be absent into a hash part with room and no dead nodes (a
 * freshly allocated one, during a resize). */
static void rawinsert(Table *t, const Value *k, const Value *v) {
    uint32_t m = t->hmask, i = keyhash(k) & m;
    assert(t->node != NULL && t->hused < hlimit(m + 1));
    while (t->node[i].key.tt != VT_NIL) i = (i + 1) & m;
    t->node[i].key = *k;
    t->node[i].val = *v;
    t->hused++;
    t->hlive++;
}

/* ======================================================================
 * Resizing
 * ====================================================================== */

/* Rebuild [t] with an array part of [na] slots and a hash part of [nc] nodes (0 or a
 * power of two large enough for every key that ends up there). Integer keys move to
 * whichever part the invariants put them in; dead nodes are dropped. Both blocks are
 * allocated before the table changes, so an allocation error leaves it intact. */
static void resize(State *S, Table *t, uint32_t na, uint32_t nc) {
    uint32_t oa = t->asize;
    Value *oarr = t->arr;
    Node *onode = t->node;
    uint32_t ocap = onode != NULL ? t->hmask + 1 : 0;

    Value *narr = oarr;
    if (na != oa) /* zeroed: nils, and a hint of 0; one more slot for the hint */
        narr = na > 0 ? vm_alloc(S, ((size_t)na + 1) * sizeof(Value)) : NULL;
    Node *nnode = nc > 0 ? vm_alloc(S, (size_t)nc * sizeof(Node)) : NULL;   /* all empty */
    if (narr != oarr && narr != NULL && oa > 0) {
        memcpy(narr, oarr, (size_t)(na < oa ? na : oa) * sizeof(Value));
        uint32_t h = (uint32_t)oarr[oa].u.i;   /* keep the hint: after growth it is still near */
        narr[na].u.i = h < na ? h : na;
    }

    t->arr = narr;
    t->asize = na;
    t->node = nnode;
    t->hmask = nc > 0 ? nc - 1 : 0;
    t->hused = t->hlive = 0;

    for (uint32_t k = na; k < oa; k++) {   /* array shrank: its tail goes to the hash part */
        if (oarr[k].tt != VT_NIL) {
            Value key = vm_int((vm_Integer)k + 1);
            rawinsert(t, &key, &oarr[k]);
        }
    }
    for (uint32_t i = 0; i < ocap; i++) {
        Node *n = &onode[i];
        if (n->val.tt == VT_NIL) continue;   /* empty or dead */
        if (n->key.tt == VT_INT && (vm_Unsigned)n->key.u.i - 1 < na)
            narr[n->key.u.i - 1] = n->val;
        else
            rawinsert(t, &n->key, &n->val);
    }
    /* The old blocks belonged to this table alone and nothing may keep pointers into a
     * table's parts across a store (the same rule as Lua's realloc): give them back now,
     * so growing a big table does not leave its predecessors for the collector (peak
     * memory of bench/programs/sieve.lua). */
    if (oarr != NULL && oarr != narr) gc_free(oarr);
    if (onode != NULL) gc_free(onode);
}

/* ceil(log2(x)) for x >= 1: the bin of integer key x in the counts below. */
static inline unsigned ceillog2(uint64_t x) {
    return x <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(x - 1);
}

/* Count the array part's non-nil slots into nums[] (nums[i]: keys in (2^(i-1), 2^i]). */
static uint64_t countarray(const Table *t, uint32_t *nums) {
    uint64_t total = 0;
    uint32_t k = 1;   /* next key to look at */
    uint64_t bound = 1;
    for (unsigned lg = 0; lg <= MAXABITS && k <= t->asize; lg++, bound <<= 1) {
        uint32_t lim = bound > t->asize ? t->asize : (uint32_t)bound;
        uint32_t c = 0;
        for (; k <= lim; k++) c += t->arr[k - 1].tt != VT_NIL;
        nums[lg] += c;
        total += c;
    }
    return total;
}

/* Count the live positive integer keys of the hash part that could go to an array part. */
static uint64_t counthash(const Table *t, uint32_t *nums) {
    uint64_t total = 0;
    if (t->node == NULL) return 0;
    for (uint32_t i = 0; i <= t->hmask; i++) {
        const Node *n = &t->node[i];
        if (n->key.tt == VT_INT && n->val.tt != VT_NIL) {
            vm_Integer k = n->key.u.i;
            if (k >= 1 && k <= ((vm_Integer)1 << MAXABITS)) {
                nums[ceillog2((uint64_t)k)]++;
                total++;
            }
        }
    }
    return total;
}

/* Array size for the integer keys counted in nums[] ([nint] of them): the largest power
 * of two n such that more than n/2 of the keys 1..n are present (Lua's rule: the array
 * part is at least half full). [*inarray] receives the number of keys that go there. */
static uint32_t arraysize(const uint32_t *nums, uint64_t nint, uint64_t *inarray) {
    uint64_t a = 0, na = 0;
    uint32_t optimal = 0;
    uint64_t twotoi = 1;
    for (unsigned i = 0; i <= MAXABITS && twotoi / 2 < nint; i++, twotoi <<= 1) {
        a += nums[i];
        if (a > twotoi / 2) {
            optimal = (uint32_t)twotoi;
            na = a;
        }
    }
    *inarray = na;
    return optimal;
}

/* The hash part has no room for new key [k]: choose new sizes from the live keys (and k)
 * and rebuild. */
static void rehash(State *S, Table *t, const Value *k) {
    uint32_t cap = t->node != NULL ? t->hmask + 1 : 0;
    uint32_t dead = t->hused - t->hlive;
    /* Mostly dead nodes and a key that cannot go to the array part: only clean the hash
     * part. Recounting the array part would cost O(asize) for each round of churn in a
     * small hash part beside a large array. */
    if (k->tt != VT_INT && dead > 0 && dead >= (cap >> 2)) {
        resize(S, t, t->asize, capfor(S, (uint64_t)t->hlive + 1));
        return;
    }
    uint32_t nums[MAXABITS + 1] = {0};
    uint64_t inarr = countarray(t, nums);
    uint64_t nint = inarr + counthash(t, nums);
    uint64_t total = inarr + t->hlive + 1;
    if (k->tt == VT_INT && k->u.i >= 1 && k->u.i <= ((vm_Integer)1 << MAXABITS)) {
        nums[ceillog2((uint64_t)k->u.i)]++;
        nint++;
    }
    uint64_t toarray;
    uint32_t na = arraysize(nums, nint, &toarray);
    resize(S, t, na, capfor(S, total - toarray));
}

/* ======================================================================
 * Creation
 * ====================================================================== */

Table *vm_table_new(State *S, uint32_t narr, uint32_t nhash) {
    Table *t = vm_alloc(S, sizeof(Table));   /* scanned, zeroed: empty parts, no metatable */
    t->h.type = VT_TABLE;
    if (narr > 0 || nhash > 0) vm_table_reserve(S, t, narr, nhash);
    return t;
}

void vm_table_reserve(State *S, Table *t, uint32_t narr, uint32_t nhash) {
    if (narr > (1u << MAXABITS)) vm_runerror(S, "table overflow");
    uint32_t na = narr > t->asize ? narr : t->asize;
    uint32_t cap = t->node != NULL ? t->hmask + 1 : 0;
    uint32_t nc = capfor(S, nhash);
    if (nc < cap) nc = cap;
    if (na == t->asize && nc == cap) return;
    resize(S, t, na, nc);
}

/* ======================================================================
 * Lookup
 * ====================================================================== */

const Value *vm_table_getint(Table *t, vm_Integer k) {
    if ((vm_Unsigned)k - 1 < t->asize) return &t->arr[k - 1];
    Node *n = findint(t, k);
    return n != NULL ? &n->val : &vm_absent;
}

const Value *vm_table_getstr(Table *t, String *s) { return vm_table_getstr_inline(t, s); }

const Value *vm_table_get(Table *t, const Value *key) {
    switch (key->tt) {
    case VT_STR: return vm_table_getstr(t, key->u.s);
    case VT_INT: return vm_table_getint(t, key->u.i);
    case VT_NIL: return &vm_absent;
    case VT_FLOAT: {
        vm_Integer i;
        if (floatkey(key->u.n, &i)) return vm_table_getint(t, i);
        break;   /* a NaN is never found: no node holds one */
    }
    default: break;
    }
    Node *n = findkey(t, key);
    return n != NULL ? &n->val : &vm_absent;
}

Value *vm_table_slot(Table *t, const Value *key) {
    if (key->tt == VT_INT && (vm_Unsigned)key->u.i - 1 < t->asize) {
        Value *v = &t->arr[key->u.i - 1];
        return v->tt != VT_NIL ? v : NULL;
    }
    const Value *v = vm_table_get(t, key);
    return v->tt != VT_NIL ? (Value *)v : NULL;   /* never &vm_absent: that one is nil */
}

Value *vm_table_slotstr(Table *t, String *key) {
    Node *n = findstr(t, key);
    return n != NULL && n->val.tt != VT_NIL ? &n->val : NULL;
}

/* ======================================================================
 * Store
 * ====================================================================== */

/* Store [val] under normalised key [k] (hash [h]) in the hash part. */
static void hashset(State *S, Table *t, const Value *k, uint32_t h, const Value *val) {
    Node *tomb = NULL, *empty = NULL;
    if (t->node != NULL) {
        uint32_t m = t->hmask, i = h & m;
        for (;;) {
            Node *n = &t->node[i];
            if (n->key.tt == VT_NIL) {
                empty = n;
                break;
            }
            if (keyeq(&n->key, k, h)) {
                if (n->val.tt == VT_NIL) {            /* dead key comes back */
                    if (val->tt == VT_NIL) return;
                    t->hlive++;
                    t->h.flags = 0;
                } else if (val->tt == VT_NIL) {       /* removal: the node turns dead */
                    t->hlive--;
                }
                n->val = *val;
                return;
            }
            if (tomb == NULL && n->val.tt == VT_NIL) tomb = n;
            i = (i + 1) & m;
        }
    }
    if (val->tt == VT_NIL) return;   /* removing an absent key */
    t->h.flags = 0;                  /* a new key may be a metamethod name */
    if (tomb != NULL) {              /* reuse a dead node: hused does not change */
        tomb->key = *k;
        tomb->val = *val;
        t->hlive++;
        return;
    }
    if (empty == NULL || t->hused >= hlimit(t->hmask + 1)) {
        rehash(S, t, k);
        vm_table_set(S, t, k, val);   /* the key may now belong to the array part */
        return;
    }
    empty->key = *k;
    empty->val = *val;
    t->hused++;
    t->hlive++;
}

void vm_table_setint(State *S, Table *t, vm_Integer key, const Value *val) {
    if ((vm_Unsigned)key - 1 < t->asize) {
        t->arr[key - 1] = *val;
        return;
    }
    Value k = vm_int(key);
    hashset(S, t, &k, hashint(key), val);
}

void vm_table_setstr(State *S, Table *t, String *key, const Value *val) {
    Value k = vm_str(key);
    hashset(S, t, &k, hashstr(key), val);
}

void vm_table_set(State *S, Table *t, const Value *key, const Value *val) {
    switch (key->tt) {
    case VT_INT: vm_table_setint(S, t, key->u.i, val); return;
    case VT_STR: vm_table_setstr(S, t, key->u.s, val); return;
    case VT_NIL: vm_runerror(S, "table index is nil");
    case VT_FLOAT: {
        vm_Integer i;
        if (floatkey(key->u.n, &i)) {
            vm_table_setint(S, t, i, val);
            return;
        }
        if (key->u.n != key->u.n) vm_runerror(S, "table index is NaN");
        break;
    }
    default: break;
    }
    hashset(S, t, key, keyhash(key), val);
}

/* ======================================================================
 * Length (border)
 * ====================================================================== */

/* Border beyond the array part, which is full (or empty): t[j] is known non-nil. Double j
 * until t[j] is nil, then binary search between the last non-nil and that nil. */
static vm_Unsigned hashborder(Table *t, vm_Unsigned j) {
    vm_Unsigned i = j;
    j++;
    while (vm_table_getint(t, (vm_Integer)j)->tt != VT_NIL) {
        i = j;
        if (j > (vm_Unsigned)VM_MAXINTEGER / 2) {
            /* a table built to defeat the doubling: linear search from the start */
            vm_Unsigned n = 1;
            while (vm_table_getint(t, (vm_Integer)n)->tt != VT_NIL) n++;
            return n - 1;
        }
        j *= 2;
    }
    while (j - i > 1) {   /* t[i] non-nil (or i == 0), t[j] nil */
        vm_Unsigned m = i + (j - i) / 2;
        if (vm_table_getint(t, (vm_Integer)m)->tt == VT_NIL)
            j = m;
        else
            i = m;
    }
    return i;
}

/* Border inside the array part: arr[lo-1] non-nil (or lo == 0) and arr[hi-1] nil. */
static uint32_t arrayborder(const Value *arr, uint32_t lo, uint32_t hi) {
    while (hi - lo > 1) {
        uint32_t m = lo + (hi - lo) / 2;
        if (arr[m - 1].tt == VT_NIL)
            hi = m;
        else
            lo = m;
    }
    return lo;
}

/* As lua5.4's luaH_getn: look near the hint first (pushes and pops move the border by
 * one), then binary search in the array part, then the hash part when the array part is
 * full. Rejected: keeping no hint (a binary search per #t, O(log n) cache misses). */
vm_Unsigned vm_table_len(Table *t) {
    uint32_t n = t->asize;
    if (n > 0) {
        Value *arr = t->arr;
        uint32_t h = gethint(t);
        uint32_t b;
        if (h > 0 && arr[h - 1].tt == VT_NIL) {             /* the border is below h */
            if (h >= 2 && arr[h - 2].tt != VT_NIL)
                b = h - 1;                                  /* t[#t] = nil */
            else
                b = arrayborder(arr, 0, h);
            sethint(t, b);
            return b;
        }
        if (h < n) {                                        /* h == 0 or arr[h-1] non-nil */
            if (arr[n - 1].tt != VT_NIL) {
                /* A full array part answers n, as lua5.4 does: #{1, nil, 3} is 3. */
                sethint(t, n);
                goto full;
            }
            if (arr[h].tt == VT_NIL) return h;              /* unchanged */
            if (h + 1 < n && arr[h + 1].tt == VT_NIL) {
                b = h + 1;                                  /* t[#t+1] = v */
            } else if (arr[n - 1].tt == VT_NIL) {
                b = arrayborder(arr, h + 1, n);
            } else {
                b = n;
            }
            sethint(t, b);
            if (b < n) return b;
        }
    }
full:
    /* the array part is full (or empty): the border may continue in the hash part */
    if (t->node == NULL) return n;
    Node *nn = findint(t, (vm_Integer)n + 1);
    if (nn == NULL || nn->val.tt == VT_NIL) return n;
    return hashborder(t, n + 1);
}

/* ======================================================================
 * Traversal
 * ====================================================================== */

/* Position after [key] in traversal order: 0 for nil (the start), k for array key k, and
 * asize + i + 1 for the key in node i. A key no longer in the table raises an error; a
 * dead key is still in its node, so a traversal that clears fields goes on. */
static uint64_t nextindex(State *S, Table *t, const Value *key) {
    Value k = *key;
    if (k.tt == VT_NIL) return 0;
    if (k.tt == VT_FLOAT) {
        vm_Integer i;
        if (floatkey(k.u.n, &i)) k = vm_int(i);
    }
    if (k.tt == VT_INT && (vm_Unsigned)k.u.i - 1 < t->asize) return (uint64_t)k.u.i;
    Node *n = findkey(t, &k);
    if (n == NULL) vm_runerror(S, "invalid key to 'next'");
    return (uint64_t)t->asize + (uint64_t)(n - t->node) + 1;
}

bool vm_table_next(State *S, Table *t, Value *key, Value *val) {
    uint64_t i = nextindex(S, t, key);
    for (; i < t->asize; i++) {
        if (t->arr[i].tt != VT_NIL) {
            *key = vm_int((vm_Integer)i + 1);
            *val = t->arr[i];
            return true;
        }
    }
    if (t->node == NULL) return false;
    for (i -= t->asize; i <= t->hmask; i++) {
        Node *n = &t->node[i];
        if (n->val.tt != VT_NIL) {
            *key = n->key;
            *val = n->val;
            return true;
        }
    }
    return false;
}

/* ======================================================================
 * Invariant checker
 * ====================================================================== */

const char *vm_table_check(const Table *t) {
    if (t->h.type != VT_TABLE) return "header type is not VT_TABLE";
    if (t->asize > (1u << MAXABITS)) return "array part larger than 2^MAXABITS";
    if (t->asize > 0 && t->arr == NULL) return "array part without a block";
    if (t->asize > 0 && (uint64_t)t->arr[t->asize].u.i > t->asize) return "length hint beyond the array part";
    if (t->node == NULL) {
        if (t->hmask != 0 || t->hused != 0 || t->hlive != 0) return "counts set without a hash part";
        return NULL;
    }
    uint32_t cap = t->hmask + 1;
    if (cap < 2 || (cap & t->hmask) != 0) return "hash capacity is not a power of two >= 2";
    uint32_t used = 0, live = 0;
    for (uint32_t i = 0; i < cap; i++) {
        const Node *n = &t->node[i];
        const Value *k = &n->key;
        if (k->tt == VT_NIL) {
            if (n->val.tt != VT_NIL) return "empty node with a value";
            continue;
        }
        used++;
        if (n->val.tt != VT_NIL) live++;
        if (k->tt >= VT_NTAGS) return "key with an invalid tag";
        if (k->tt == VT_FLOAT) {
            vm_Integer iv;
            if (k->u.n != k->u.n) return "NaN key";
            if (floatkey(k->u.n, &iv)) return "float key with an integer value not normalised";
        }
        if (k->tt == VT_INT && (vm_Unsigned)k->u.i - 1 < t->asize) return "integer key of the array part in the hash part";
        if (k->tt == VT_STR && (k->u.s == NULL || k->u.s->hash == 0)) return "string key without a cached hash";
        /* reachable from its home node, and the first node with that key (no duplicate) */
        if (findkey(t, k) != n) return "key unreachable from its home node, or duplicated";
    }
    if (used != t->hused) return "hused does not match the nodes";
    if (live != t->hlive) return "hlive does not match the nodes";
    if (used > hlimit(cap)) return "hash part fuller than its limit";
    return NULL;
}
