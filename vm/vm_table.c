/* vm_table.c: Lua tables: an array part plus an open-addressing hash part (see Table in
 * vm_value.h for the layout and its invariants). */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <string.h>

#include "vm_do.h"
#include "vm_state.h"
#include "vm_string.h"
#include "vm_table.h"
#include "gc_api.h"

/* Largest array part: 2^MAXABITS slots. TabArr.size is a uint32_t, and 2^30 Values are
 * already 16 GB. Integer keys above it always live in the hash part. */
#define MAXABITS 30
/* Largest hash part: 2^MAXHBITS nodes (TabNodes.mask is a uint32_t; 2^30 nodes are 32 GB). */
#define MAXHBITS 30

/* ======================================================================
 * Hash part
 * ======================================================================
 * Open addressing with linear probing over a power-of-two number of nodes. A node is
 *   empty  key nil                 (ends every probe sequence)
 *   live   key set, value non-nil
 *   dead   key set, value nil      (a removed key: kept so that next() can resume from it)
 * Invariants (checked by vm_table_check):
 *   - every key is reachable from its home node (hash & mask) without crossing an empty
 *     node, and appears once;
 *   - 'used' (live + dead nodes) never exceeds 'limit' = hlimit(capacity), so at least a
 *     quarter of the nodes (one node for 2 or 4 nodes) stay empty;
 *   - keys are normalised: no nil, no NaN, no float with an integer value, no integer in
 *     1..arr->size (those live in the array part);
 *   - the bit (hash >> 26) of every key, live or dead, is set in the block's key filter
 *     (TabNodes.keys): an absent key whose bit is clear costs one load instead of a probe
 *     to the end of its cluster (the JIT's inline caches rely on it, jit/jit_ic.c).
 * These hold while one thread at a time changes the table; with racing writers only the
 * shape checked by vm_table_check_shape does (see "Races").
 * A new key takes the first dead node of its probe sequence if there is one, while a single
 * thread runs VM code (removing and adding keys in turn does not fill the table with dead
 * nodes; with threads, keys are never recycled: "Races"); otherwise it takes the empty
 * node that ended the probe, and when that would pass the limit the table is rehashed:
 * sizes are recomputed from the live keys only, which drops every dead node.
 *
 * Rejected: Lua's chained scatter table (Brent's variation) needs a 'next' field per node,
 * which the shared Node layout does not have; and lookups in it chase pointers, where
 * linear probing reads neighbouring nodes from the same cache lines. */

/* ======================================================================
 * Races
 * ======================================================================
 * Language threads (native, and green threads on several carriers) share tables without
 * locks, so any number of threads may run any of these functions on one table at once.
 * The program then gets unspecified values (a store may be lost, a read may see an older
 * or a newer value, a racing insertion may duplicate a key or drop another one, counts
 * drift), but nothing here reads or writes outside a block, dereferences a payload under
 * the wrong tag, or loops forever. How:
 *   - Slots. Every key and value slot of a block is read and written as a whole with one
 *     16-byte access (vm_loadv / vm_load16 / vm_storev / vm_copyv in vm_value.h) and
 *     readers inspect their copy. A tag read alone (is this slot nil?) is fine as long as
 *     no payload is used on its strength.
 *   - Blocks. Each part is a block that holds its own size (TabArr.size, TabNodes.mask).
 *     The array part: code loads t->arr once (vm_table_arr) and takes the bound from that
 *     block, so a size and a block from different resizes are never combined. A resize
 *     builds the new blocks privately (copying the old slots with whole-Value loads) and
 *     publishes them with release stores; readers use acquire loads (plain moves on x86,
 *     which keeps loads in order; the compiler must not reorder or repeat them).
 *   - Hash mask. Lookups probe with t->hmask, loaded before t->node, without touching the
 *     block's header until the probe ends without the key: a mask older than the block
 *     misses keys the block holds, so that probe goes again with the block's own mask
 *     (vm_table_hpart). This is safe because the capacity of the hash part never shrinks
 *     along the sequence of its blocks, and t->hmask is raised only after its block is in
 *     place: any (mask, block) pair a reader combines is in bounds (vm_table_hpart in
 *     vm_table.h). The node block is the commit point of a resize (a compare-and-swap from
 *     the block it was built from: of two racing resizes one is dropped and its store
 *     retried), which keeps capacities monotonic; t->hmask is raised with a CAS-max. Stores
 *     into a block and walks over it use the block's own mask.
 *   - Old blocks. A thread that still works on a replaced block reads stale values or
 *     stores into it in vain; the block stays valid memory because, once threads exist,
 *     old blocks are no longer given back with gc_free (vm_table_threads_started; the
 *     collector reclaims them once nobody points into them; Boehm recognises interior
 *     pointers).
 *   - Integer keys between the parts. A resize that grows the array part publishes the
 *     node block before the array block, so a reader may pair the old array block with the
 *     new node block and find a moved key in neither: the node block records the array size
 *     it was built beside (TabNodes.asize) and vm_table_getint goes again once the array
 *     block it names is out (await_arr). A resize waits likewise before it reads the two
 *     blocks, so it never builds on such a pair: t->node's asize exceeds t->arr's size only
 *     between the two stores of one resize.
 *   - Length hint. TabArr.lenhint is clamped to its block's size when used.
 *   - Hash probes. Racing inserters may together take every node of a block (each checks
 *     'used' against 'limit', but the counts are updated without atomics), so no probe may
 *     rely on finding an empty node: every probe visits at most mask + 1 nodes. An insertion
 *     that finds no empty node rehashes; rehashing clamps the counts to the capacity, and a
 *     rebuild whose keys outgrow the new block (keys added meanwhile) retries with twice the
 *     nodes.
 *   - Keys are never recycled. Lookups return a pointer to the value slot of the node
 *     whose key matched, and the caller reads the value after the lookup has returned: if
 *     the node's key could change in between (a dead node reused for another key), the
 *     caller would read the other key's value (tests/threads/ic_race.lua: a method call got
 *     a number stored under another name). So once threads have started
 *     (vm_table_threads_started) an insertion never reuses a dead node: in a block, a node's
 *     key goes once from nil to a key and stays; a rehash (a new block) drops dead nodes.
 *     Writes into a node are key first, then value: a reader may see a new key with a nil
 *     value (absent).
 *   - Values are decided on once. The value in the slot may change between the lookup and
 *     the read (a racing store or removal), so a reader loads it once, whole, and decides on
 *     that copy (nil: absent, go on up the __index chain; else the value read), never on the
 *     slot and then on a second load, which could take a removal's nil past the test that
 *     found a method (ic_race.lua). The interpreter's table reads (vm_interp_body.h: a walk's
 *     slot emptied since the walk takes the slow path), vm_finishget, vm_index_string and
 *     compiled code's probes, chain walker and miss handler (jit/jit_ic.c) all do.
 *   - Key filter (TabNodes.keys). A key's bit is set with an atomic or before the key is
 *     stored into a node (setkeybit), and no bit is ever cleared in a block, so a lookup that
 *     finds its bit clear (vm_table_maybe_has) ran before every store of that key into the
 *     block: it answers "absent" as a probe that ran then would. Plain or-and-store would let
 *     racing inserters of two keys lose one bit, hiding a key from every lookup for good.
 *   - Duplicates. Racing insertions may leave a key in two nodes, or an integer key of the
 *     array part in the hash part. Lookups find one copy; a traversal returns only the copy
 *     lookups find (canonical() below), or next() would go round for ever; the next resize
 *     drops array keys left in the hash part.
 * In a program without races none of this changes what a table holds (vm_table_check). */

const Value vm_absent = {{0}, VT_NIL};

/* The shared empty parts: size 0, and mask 0 with one empty node and limit 0 (a probe
 * ends at once; an insertion always rehashes first, so nothing ever writes to them). All
 * zero bytes: VT_NIL is 0. */
static const struct {
    uint32_t size, unused[3];
} emptyarr_ __attribute__((aligned(16)));
static const struct {
    uint32_t mask, limit, used, live, weak, asize, keys[2];
    Node n0;
} emptynodes_;
#define EMPTYARR ((TabArr *)&emptyarr_)
#define EMPTYNODES ((TabNodes *)&emptynodes_)
_Static_assert(offsetof(TabArr, v) == 16 && sizeof emptyarr_ == sizeof(TabArr), "array block header");
_Static_assert(offsetof(TabNodes, n) == 32 && offsetof(__typeof__(emptynodes_), n0) == offsetof(TabNodes, n),
               "node block header");

/* The length hint: the border last found by vm_table_len (any value is correct, it is only
 * where the search starts). It makes `t[#t+1] = v` and `t[#t] = nil` O(1) instead of a
 * binary search over the array part (5M appends: 630 ms in vm_table_len alone without
 * it; lua5.4 keeps such a hint in 'alimit'). One 32-bit word in the Table, written by any
 * thread, so clamped to the size of the array block in use. */
static inline uint32_t gethint(const TabArr *a) {
    uint32_t h = __atomic_load_n(&a->lenhint, __ATOMIC_RELAXED);
    return h < a->size ? h : a->size;
}
/* Only for a non-empty block: the shared empty one is read-only. */
static inline void sethint(TabArr *a, uint32_t h) { __atomic_store_n(&a->lenhint, h, __ATOMIC_RELAXED); }

/* A block's 'used' and 'live' counts and a table's absent-metamethod cache (h.flags) are
 * written by every thread that stores into the table. Relaxed atomic loads and stores: the
 * same moves as plain accesses, but no data race in C11 terms (TSan checks this). A count
 * is changed by a load and a store, not by an atomic add: racing writers may lose updates,
 * which the counts allow ("Races" above; rehash clamps them), and a locked add would slow
 * every insertion. */
#define RLOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define RSTORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define RADD(x, d) RSTORE(x, RLOAD(x) + (d))

/* Most keys a hash part of [cap] nodes may hold, dead ones included: 3/4 of the nodes
 * (one less than all for 4 nodes, so a probe usually finds an empty node), but all of a
 * 2-node block: a two-field record ({value = v, next = n}) then takes 2 nodes instead of 4
 * (Boehm's 112-byte class instead of 176). A full block is safe: every probe visits at
 * most mask + 1 nodes (racing inserters may fill any block, "Races"), and with 2 nodes a
 * probe for an absent key reads both, no more than a probe that meets an empty node. */
static inline uint32_t hlimit(uint32_t cap) {
    return cap <= 4 ? (cap <= 2 ? cap : cap - 1) : cap - (cap >> 2);
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

static inline uint32_t hashstr(String *s) {
    uint32_t h = vm_str_cachedhash(s);
    return h != 0 ? h : vm_string_hash(s);
}

/* Hash of a normalised, non-nil key. */
static inline uint32_t keyhash(const Value *k) {
    switch (k->tt) {
    case VT_STR: return hashstr(k->u.s);
    case VT_FALSE: return 0x5bd1e995u;
    case VT_TRUE: return 0x1b873593u;
    default: return hashword((uint64_t)k->u.i);   /* integer, float bits or a pointer */
    }
}

/* Key equality for normalised keys, on [x], a private copy of a node's key: the tag word
 * (tag and hash, vm_node_tagword) first, then strings by pointer or bytes, booleans by tag,
 * integers and floats by value (no NaN, and -0.0 became integer 0), everything else by
 * identity. [h] is keyhash(k). */
static inline bool keyeq(vm_V16 x, const Value *k, uint32_t h) {
    if ((uint64_t)x[1] != vm_node_tagword(k->tt, h)) return false;
    switch (k->tt) {
    case VT_STR: {
        const String *a = vm_v16_p(x), *b = k->u.s;
        return a == b || (a->len == b->len && memcmp(a->data, b->data, a->len) == 0);
    }
    case VT_FALSE:
    case VT_TRUE: return true;
    default: return vm_v16_i(x) == k->u.i;
    }
}

/* Store key [k] of hash [h] into node [n] with its hash in the tag word (vm_node_tagword),
 * one 16-byte store. */
static inline void storekey(Node *n, const Value *k, uint32_t h) {
    vm_V16 x = {(long long)k->u.i, (long long)vm_node_tagword(k->tt, h)};
    vm_store16(&n->key, x);
}

/* The key of node [n] read whole, as a Value whose tag word's upper half is cleared (it
 * leaves the table), and its hash in [*h]. */
static inline Value nodekey(const Node *n, uint32_t *h) {
    vm_V16 x = vm_load16(&n->key);
    *h = vm_node_hash(x);
    x[1] = (long long)(uint32_t)x[1];
    Value v;
    memcpy(&v, &x, sizeof v);
    return v;
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

/* Node of the hash part of [t] holding integer key [k] (live or dead), or NULL; [*probed],
 * when not NULL, receives the block probed. A probe with a mask older than the block that
 * ends without the key goes again with the block's own (vm_table_hpart). */
static inline Node *findint(const Table *t, vm_Integer k, const TabNodes **probed) {
    uint32_t m;
    const TabNodes *b = vm_table_hpart(t, &m);
    if (probed != NULL) *probed = b;
    for (;;) {
        uint32_t i = hashint(k) & m;
        for (uint32_t left = m + 1; left != 0; left--) {
            Node *n = (Node *)&b->n[i];
            vm_V16 nk = vm_load16(&n->key);
            uint32_t tt = vm_v16_tt(nk);
            if (tt == VT_INT) {
                if (vm_v16_i(nk) == k) return n;
            } else if (tt == VT_NIL) {
                break;
            }
            i = (i + 1) & m;
        }
        uint32_t bm = b->mask;
        if (bm == m) return NULL;
        m = bm;
    }
}

/* Node of block [b] holding normalised key [k] (live or dead), or NULL. */
static Node *findkeyh(const TabNodes *b, const Value *k, uint32_t h) {
    uint32_t m = b->mask, i = h & m;
    for (uint32_t left = m + 1; left != 0; left--) {
        Node *n = (Node *)&b->n[i];
        vm_V16 nk = vm_load16(&n->key);
        if (keyeq(nk, k, h)) return n;
        if (vm_v16_tt(nk) == VT_NIL) return NULL;
        i = (i + 1) & m;
    }
    return NULL;
}

static Node *findkey(const TabNodes *b, const Value *k) { return findkeyh(b, k, keyhash(k)); }

/* ======================================================================
 * Resizing
 * ====================================================================== */

/* The weak mode of [t] (VM_WEAKK | VM_WEAKV, 0 for an ordinary table): its new blocks are
 * weak blocks, traced by vm_gc.c instead of scanned (see Table in vm_value.h). */
static inline uint32_t weakmode(const Table *t) { return t->h.extra & (VM_WEAKK | VM_WEAKV); }

static TabArr *newarr(State *S, uint32_t n, uint32_t weak) {
    if (n == 0) return EMPTYARR;
    size_t bytes = sizeof(TabArr) + (size_t)n * sizeof(Value);
    TabArr *a = weak ? vm_alloc_weak(S, bytes) : vm_alloc(S, bytes);   /* zeroed: nils */
    a->size = n;
    if (weak) a->weak = VM_WEAKARR | weak;
    return a;
}

static TabNodes *newnodes(State *S, uint32_t cap, uint32_t weak) {
    if (cap == 0) return EMPTYNODES;
    size_t bytes = sizeof(TabNodes) + (size_t)cap * sizeof(Node);
    TabNodes *b = weak ? vm_alloc_weak(S, bytes) : vm_alloc(S, bytes);   /* all empty */
    b->mask = cap - 1;
    b->limit = hlimit(cap);
    if (weak) b->weak = VM_WEAKNODES | weak;
    return b;
}

/* Place key [k] with value [v] into block [b], which no other thread can see yet and
 * which has no dead nodes. false: no room under the limit (keys were added to the old
 * block by another thread while it was counted). A key that racing insertions left twice
 * in the old block stays twice: lookups find the first copy (vm_table_check_shape allows
 * that; vm_table_check does not). */
/* Inlined into resize_blocks: out of line (as the key filter's bit made it bigger) it cost
 * hash_table.lua 1 about 2% more instructions (callgrind: 17M of 872M). */
__attribute__((always_inline)) static inline bool rawinsert(TabNodes *b, const Value *k, uint32_t h, const Value *v) {
    if (b->used >= b->limit) return false;
    uint32_t m = b->mask, i = h & m;
    for (uint32_t left = m + 1; left != 0; left--) {
        Node *n = &b->n[i];
        if (n->key.tt == VT_NIL) {
            b->keys |= vm_table_keybit(h);   /* a private block: plain */
            storekey(n, k, h);
            n->val = *v;
            b->used++;
            b->live++;
            return true;
        }
        i = (i + 1) & m;
    }
    return false;
}

/* Old blocks. While one thread runs VM code, a resize gives the replaced blocks back at once
 * (gc_free): nothing can point into them, since no code keeps a pointer into a table's
 * parts across a store (the rule of Lua's realloc), and coroutines switch only at calls.
 * Leaving them to the collector costs single-threaded programs: a table that grows by
 * doubling leaves all its predecessors behind for the next collections (cachegrind on
 * bench/programs: binary_trees 11% more instructions, hash_table 3%, alloc_churn 2%).
 * Once a second language thread may run (vm_table_threads_started, called by the thread
 * library before it starts one, in any thread model), another thread may still be reading
 * an old block (it loaded t->arr or t->node before the resize published the new one), so
 * old blocks are left to the collector, which frees them once no thread points into them. */
bool vm_threads_started_flag;

void vm_table_threads_started(void) { __atomic_store_n(&vm_threads_started_flag, true, __ATOMIC_SEQ_CST); }

/* May this resize free the blocks it replaced? Besides the flag, a safety net: the first
 * native thread that resizes a table is remembered, and a resize on any other native thread
 * means that threads were started without vm_table_threads_started: from then on nothing
 * is freed (frees made before that moment stay a bug of the caller). */
static bool may_free_old_blocks(void) {
    if (vm_table_threads_have_started()) return false;
    static pthread_t first;
    static int have_first;   /* 0 none, 1 being set, 2 set */
    int expect = 0;
    if (__atomic_compare_exchange_n(&have_first, &expect, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        first = pthread_self();
        __atomic_store_n(&have_first, 2, __ATOMIC_RELEASE);
        return true;
    }
    if (expect != 2 || !pthread_equal(first, pthread_self())) {
        vm_table_threads_started();
        return false;
    }
    return true;
}

/* Rebuild [t] with an array part of [na] slots and a hash part of [nc] nodes (0 or a
 * power of two large enough for every key that ends up there). Integer keys move to
 * whichever part the invariants put them in; dead nodes are dropped. The new blocks are
 * built before the table changes, so an allocation error leaves it intact, and readers on
 * other threads only ever see complete blocks. */
static void resize_blocks(State *S, Table *t, uint32_t na, uint32_t nc, bool fresh);
static void release_block(const Table *t, void *blk, size_t bytes);
static void resize(State *S, Table *t, uint32_t na, uint32_t nc) { resize_blocks(S, t, na, nc, false); }

/* Between a resize's two publishing stores, t->node names (TabNodes.asize) a larger array
 * block than t->arr holds. Lookups that need that block, and resizes (which must not build
 * on such a pair: the keys moved into the unpublished array block would be lost, and the
 * pair would stay inconsistent), wait here until t->arr is no longer [a]. The window is two
 * stores on the resizing thread, with no allocation, error or safepoint between them, so the
 * wait is short unless that thread was preempted; the time bound (false: t->arr unchanged)
 * is only a net. */
static bool await_arr(const Table *t, const TabArr *a) {
    for (unsigned i = 0; i < 64; i++) {
        if (vm_table_arr(t) != a) return true;
        __builtin_ia32_pause();
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (vm_table_arr(t) == a) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) > 100000000L) return false;
    }
    return true;
}

/* [fresh]: build new blocks even where the sizes stay (a table turning weak moves into
 * weak blocks). */
static void resize_blocks(State *S, Table *t, uint32_t na, uint32_t nc, bool fresh) {
    uint32_t weak = weakmode(t);
    TabArr *oa;
    TabNodes *ob;
    for (;;) {   /* a pair from one resize: never build on a node block whose array block is not out */
        oa = vm_table_arr(t);
        ob = vm_table_nodes(t);
        if (ob->asize <= oa->size || !await_arr(t, oa)) break;
    }
    uint32_t osize = oa->size, onodes = ob->mask + 1;
    uint32_t ocap = ob->limit != 0 ? onodes : 0;
    if (nc < ocap) nc = ocap;   /* the hash part never shrinks (vm_table_hpart) */

    TabArr *a = oa;
    if (na != osize || (fresh && na > 0)) {
        a = newarr(S, na, weak);
        uint32_t keep = na < osize ? na : osize;
        for (uint32_t k = 0; k < keep; k++) vm_copyv(&a->v[k], &oa->v[k]);
        if (na > 0) a->lenhint = gethint(oa) < na ? gethint(oa) : na;   /* still near after growth */
    }
    for (;;) {
        TabNodes *b = newnodes(S, nc, weak);
        if (b != EMPTYNODES) b->asize = na;   /* private until published: plain */
        bool ok = true;
        for (uint32_t k = na; k < osize && ok; k++) {   /* array shrank: its tail goes to the hash part */
            Value v = vm_loadv(&oa->v[k]);
            if (v.tt != VT_NIL) {
                Value key = vm_int((vm_Integer)k + 1);
                ok = rawinsert(b, &key, hashint(key.u.i), &v);
            }
        }
        for (uint32_t i = 0; i < onodes && ok; i++) {
            const Node *n = &ob->n[i];
            Value v = vm_loadv(&n->val);
            if (v.tt == VT_NIL) continue;   /* empty or dead */
            uint32_t h;
            Value key = nodekey(n, &h);   /* its hash from the node: the key is not loaded */
            if (key.tt == VT_NIL) continue; /* cannot happen: keys are written first */
            if (key.tt == VT_INT && (vm_Unsigned)key.u.i - 1 < na) {
                /* nil test: a racing store may have left the key in both parts; the array
                 * (the copy every lookup finds) wins */
                Value *d = &a->v[key.u.i - 1];
                if (d->tt == VT_NIL) vm_storev(d, v);
            } else {
                ok = rawinsert(b, &key, h, &v);
            }
        }
        if (ok) {
            /* Publish, with release stores so that the blocks are seen complete. The node
             * block is the commit point: it replaces the block it was built from or nothing.
             * When another thread resized meanwhile, this work is dropped and the caller's
             * store retries on the new blocks; so capacities only grow along the sequence of
             * node blocks, and t->hmask, raised to the new mask after the block is in place,
             * never exceeds the mask of the block a later load of t->node returns. */
            if (!__atomic_compare_exchange_n(&t->node, &ob, b, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                return;
            if (a != oa) __atomic_store_n(&t->arr, a, __ATOMIC_RELEASE);
            uint32_t m = __atomic_load_n(&t->hmask, __ATOMIC_RELAXED);
            while (m < b->mask &&
                   !__atomic_compare_exchange_n(&t->hmask, &m, b->mask, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
            }
            if (may_free_old_blocks()) {
                if (a != oa && oa != EMPTYARR) release_block(t, oa, sizeof(TabArr) + (size_t)osize * sizeof(Value));
                if (ob != EMPTYNODES) release_block(t, ob, sizeof(TabNodes) + (size_t)onodes * sizeof(Node));
            }
            return;
        }
        /* Keys were added to the old block while we counted them (another thread): more
         * room. The old block holds at most onodes keys, so this ends. */
        if (nc >= (1u << MAXHBITS)) vm_runerror(S, "table overflow");
        nc = nc < 2 ? 2 : 2 * nc;
    }
}

/* ceil(log2(x)) for x >= 1: the bin of integer key x in the counts below. */
static inline unsigned ceillog2(uint64_t x) {
    return x <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(x - 1);
}

/* Count the non-nil slots of array block [a] into nums[] (nums[i]: keys in (2^(i-1), 2^i]). */
static uint64_t countarray(const TabArr *a, uint32_t *nums) {
    uint64_t total = 0;
    uint32_t k = 1;   /* next key to look at */
    uint64_t bound = 1;
    uint32_t size = a->size;
    for (unsigned lg = 0; lg <= MAXABITS && k <= size; lg++, bound <<= 1) {
        uint32_t lim = bound > size ? size : (uint32_t)bound;
        uint32_t c = 0;
        for (; k <= lim; k++) c += a->v[k - 1].tt != VT_NIL;
        nums[lg] += c;
        total += c;
    }
    return total;
}

/* Count the live positive integer keys of block [b] that could go to an array part into
 * nums[] (returned), and all its live nodes into *live. */
static uint64_t counthash(const TabNodes *b, uint32_t *nums, uint32_t *live) {
    uint64_t total = 0;
    uint32_t l = 0;
    for (uint32_t i = 0; i <= b->mask; i++) {
        const Node *n = &b->n[i];
        if (n->val.tt == VT_NIL) continue;   /* empty or dead */
        l++;
        Value k = vm_loadv(&n->key);
        if (k.tt == VT_INT && k.u.i >= 1 && k.u.i <= ((vm_Integer)1 << MAXABITS)) {
            nums[ceillog2((uint64_t)k.u.i)]++;
            total++;
        }
    }
    *live = l;
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
    TabArr *a = vm_table_arr(t);
    TabNodes *b = vm_table_nodes(t);
    uint32_t cap = b->limit != 0 ? b->mask + 1 : 0;
    /* The block's counts are exact when one thread at a time changes the table; with
     * racing writers they may be anything, so clamp them to the capacity: they only size
     * the new block, and resize() grows it when the keys do not fit. */
    uint32_t bused = RLOAD(b->used), blive = RLOAD(b->live);
    uint32_t used = bused < cap ? bused : cap;
    uint32_t live = blive < used ? blive : used;
    uint32_t dead = used - live;
    /* Mostly dead nodes and a key that cannot go to the array part: only clean the hash
     * part. Recounting the array part would cost O(asize) for each round of churn in a
     * small hash part beside a large array. */
    if (k->tt != VT_INT && dead > 0 && dead >= (cap >> 2)) {
        resize(S, t, a->size, capfor(S, (uint64_t)live + 1));
        return;
    }
    uint32_t nums[MAXABITS + 1] = {0};
    uint64_t inarr = countarray(a, nums);
    uint64_t nint = inarr + counthash(b, nums, &live);
    uint64_t total = inarr + live + 1;
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

/* Small tables sized at creation (a constructor's hints) hold their parts in their own
 * block, after the Table: [Table][TabArr][TabNodes], one allocation instead of up to three,
 * and no Boehm slack byte per part (a two-field record {value = v, next = n}: 144 bytes
 * instead of 48 + 112; a pair {l, r}: 96 instead of 48 + 64). The parts are ordinary
 * blocks in every other respect: t->arr and t->node point at them (interior pointers, which
 * Boehm recognises), they carry their own sizes, and a resize replaces them as it replaces
 * any block, except that an inline block is never given back with gc_free (it is not a
 * block of Boehm's): release_block() clears it instead while the old blocks may be given
 * back, so the Table's block keeps no stale copy of a value the table no longer holds (the
 * conservative scan would follow it: a weak table would keep what it should drop). Once
 * threads have started, replaced inline parts keep their last contents until the table
 * dies, as replaced separate blocks do until nobody points into them; so once threads have
 * started, new tables get separate parts (a constructed table made weak would otherwise keep
 * its first values for life: tests/programs/weak/constructed.lua under green threads). A
 * table built inline before the first thread and made weak after it still keeps them.
 * How much is inline is in h.extra (VM_TABINLINE_SHIFT): a block is inline exactly when it
 * starts inside that extent; a separate block cannot, since it is another block of Boehm's.
 * Parts larger than TABINLINE_MAX bytes stay separate: a table that grows past its
 * constructor keeps its dead inline parts for life, so only small ones are worth it. */
#define TABINLINE_MAX 512
_Static_assert((TABINLINE_MAX / 16) << VM_TABINLINE_SHIFT <= 0xFFFF, "inline extent fits h.extra");

static inline bool inlined(const Table *t, const void *blk) {
    return (uintptr_t)blk - (uintptr_t)(t + 1) < (size_t)(t->h.extra >> VM_TABINLINE_SHIFT) * 16;
}

/* A part that [t] no longer uses, while no other thread can be reading it. */
static void release_block(const Table *t, void *blk, size_t bytes) {
    if (inlined(t, blk))
        memset(blk, 0, bytes);
    else
        gc_free(blk);
}

/* The blocks are allocated before the Table, so that an allocation error leaves nothing
 * half built, and stored with plain stores: no other thread can see the table yet (it is
 * published by a later store of its pointer, which vm_storev orders after these). */
Table *vm_table_new(State *S, uint32_t narr, uint32_t nhash) {
    if (narr > (1u << MAXABITS)) vm_runerror(S, "table overflow");
    uint32_t cap = capfor(S, nhash);
    size_t abytes = narr != 0 ? sizeof(TabArr) + (size_t)narr * sizeof(Value) : 0;
    size_t nbytes = cap != 0 ? sizeof(TabNodes) + (size_t)cap * sizeof(Node) : 0;
    if (abytes + nbytes != 0 && abytes + nbytes <= TABINLINE_MAX &&
        !vm_table_threads_have_started()) {
        Table *t = vm_alloc(S, sizeof(Table) + abytes + nbytes);   /* scanned, zeroed */
        TabArr *a = EMPTYARR;
        TabNodes *b = EMPTYNODES;
        if (narr != 0) {
            a = (TabArr *)(t + 1);
            a->size = narr;
        }
        if (cap != 0) {
            b = (TabNodes *)((char *)(t + 1) + abytes);
            b->mask = cap - 1;
            b->limit = hlimit(cap);
            b->asize = narr;
        }
        t->h.type = VT_TABLE;
        t->h.extra = (uint16_t)(((abytes + nbytes) / 16) << VM_TABINLINE_SHIFT);
        t->arr = a;
        t->node = b;
        t->hmask = b->mask;
        return t;
    }
    TabArr *a = newarr(S, narr, 0);
    TabNodes *b = newnodes(S, cap, 0);
    if (b != EMPTYNODES) b->asize = narr;
    Table *t = vm_alloc(S, sizeof(Table));   /* scanned, zeroed: no metatable */
    t->h.type = VT_TABLE;
    t->arr = a;
    t->node = b;
    t->hmask = b->mask;
    return t;
}

void vm_table_reserve(State *S, Table *t, uint32_t narr, uint32_t nhash) {
    if (narr > (1u << MAXABITS)) vm_runerror(S, "table overflow");
    uint32_t asize = vm_table_asize(t);
    uint32_t na = narr > asize ? narr : asize;
    uint32_t cap = vm_table_hcap(t);
    uint32_t nc = capfor(S, nhash);
    if (nc < cap) nc = cap;
    if (na == asize && nc == cap) return;
    resize(S, t, na, nc);
}

/* Weak tables. A table that turns weak moves into weak blocks (the collector must not
 * scan its slots); one whose blocks are weak already, or that turns strong again, only
 * changes the mode in their headers (a weak block with mode 0 is traced whole). New blocks
 * follow weakmode(t) from then on. */
void vm_table_setweak(State *S, Table *t, uint32_t mode) {
    mode &= VM_WEAKK | VM_WEAKV;
    if (weakmode(t) == mode) return;
    t->h.extra = (uint16_t)((t->h.extra & ~(VM_WEAKK | VM_WEAKV)) | mode);
    TabArr *a = vm_table_arr(t);
    TabNodes *b = vm_table_nodes(t);
    bool aweak = a->size == 0 || (a->weak & VM_WEAKMAGIC) == VM_WEAKARR;
    bool bweak = b->limit == 0 || (b->weak & VM_WEAKMAGIC) == VM_WEAKNODES;
    if (mode != 0 && !(aweak && bweak)) {
        resize_blocks(S, t, a->size, b->limit != 0 ? b->mask + 1 : 0, true);
        return;
    }
    if (a->size != 0 && aweak) a->weak = VM_WEAKARR | mode;
    if (b->limit != 0 && bweak) b->weak = VM_WEAKNODES | mode;
}

/* ======================================================================
 * Lookup
 * ====================================================================== */

/* A resize that moves integer keys from the hash part into a larger array part publishes its
 * node block (the commit point) before its array block (resize_blocks). A reader that loaded
 * the old array block and then the new node block finds such a key in neither, though it was
 * never removed. The node block says which array size it was built beside (asize): a key
 * below it that the node block lacks belongs to an array block newer than the one read, so
 * the lookup goes again once that block is out (await_arr). Integer keys of the array part
 * and keys found at once never reach this. */
const Value *vm_table_getint(Table *t, vm_Integer k) {
    for (;;) {
        const TabArr *a = vm_table_arr(t);
        if ((vm_Unsigned)k - 1 < a->size) return &a->v[k - 1];
        const TabNodes *b;
        Node *n = findint(t, k, &b);
        if (n != NULL) return &n->val;
        if ((vm_Unsigned)k - 1 >= b->asize || !await_arr(t, a)) return &vm_absent;
    }
}

const Value *vm_table_getstr(Table *t, String *s) { return vm_table_getstr_inline(t, s); }

const Value *vm_table_getstr_block(const TabNodes *b, String *s, uint32_t h, uint32_t *pos) {
    const Value *v = vm_table_probe_str(b, b->mask, s, h, pos);
    return v != NULL ? v : &vm_absent;
}

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
    Node *n = findkey(vm_table_nodes(t), key);
    return n != NULL ? &n->val : &vm_absent;
}

Value *vm_table_slot(Table *t, const Value *key) {
    if (key->tt == VT_INT) {
        TabArr *a = vm_table_arr(t);
        if ((vm_Unsigned)key->u.i - 1 < a->size) {
            Value *v = &a->v[key->u.i - 1];
            return v->tt != VT_NIL ? v : NULL;
        }
    }
    const Value *v = vm_table_get(t, key);
    return v->tt != VT_NIL ? (Value *)v : NULL;   /* never &vm_absent: that one is nil */
}

Value *vm_table_slotstr(Table *t, String *key) {
    const Value *v = vm_table_getstr_inline(t, key);
    return v->tt != VT_NIL ? (Value *)v : NULL;   /* never &vm_absent: that one is nil */
}

/* ======================================================================
 * Store
 * ====================================================================== */

/* The key filter's bit of hash [h] in published block [b] (TabNodes.keys), before a key of
 * that hash is stored into one of its nodes: a reader that finds the bit clear then ran
 * before the key's store (vm_table_maybe_has). An atomic or, so that racing inserters of
 * other keys cannot lose it; only when the bit is clear, which is at most 64 times a block.
 * Never called on the shared empty block (its limit 0 sends every insertion to rehash). */
static inline void setkeybit(TabNodes *b, uint32_t h) {
    uint64_t bit = vm_table_keybit(h);
    if (!(__atomic_load_n(&b->keys, __ATOMIC_RELAXED) & bit)) __atomic_fetch_or(&b->keys, bit, __ATOMIC_SEQ_CST);
}

/* Store [val] under normalised key [k] (hash [h]) in the hash part. */
static void hashset(State *S, Table *t, const Value *k, uint32_t h, const Value *val) {
    TabNodes *b = vm_table_nodes(t);
    Node *tomb = NULL, *empty = NULL;
    uint32_t m = b->mask, i = h & m;   /* the block's own: this may store into it */
    for (uint32_t left = m + 1; left != 0; left--) {
        Node *n = &b->n[i];
        vm_V16 nk = vm_load16(&n->key);
        if (vm_v16_tt(nk) == VT_NIL) {
            empty = n;
            break;
        }
        if (keyeq(nk, k, h)) {
            if (n->val.tt == VT_NIL) {            /* dead key comes back */
                if (val->tt == VT_NIL) return;
                RADD(b->live, 1);
                RSTORE(t->h.flags, 0);
            } else if (val->tt == VT_NIL) {       /* removal: the node turns dead */
                RADD(b->live, -1);
            }
            vm_copyv(&n->val, val);
            return;
        }
        if (tomb == NULL && n->val.tt == VT_NIL) tomb = n;
        i = (i + 1) & m;
    }
    if (val->tt == VT_NIL) return;   /* removing an absent key */
    RSTORE(t->h.flags, 0);           /* a new key may be a metamethod name */
    /* Reuse a dead node ('used' does not change) only while one thread runs VM code. Once
     * threads may race, a node's key never changes in its block ("Races": keys are never
     * recycled), and the dead nodes go at the next rehash. */
    if (tomb != NULL && !vm_table_threads_have_started()) {
        setkeybit(b, h);
        storekey(tomb, k, h);
        vm_copyv(&tomb->val, val);
        RADD(b->live, 1);
        return;
    }
    /* No empty node (racing inserters filled the block) or no room under the limit (the
     * shared empty block has limit 0). */
    if (empty == NULL || RLOAD(b->used) >= b->limit) {
        rehash(S, t, k);
        vm_table_set(S, t, k, val);   /* the key may now belong to the array part */
        return;
    }
    setkeybit(b, h);
    storekey(empty, k, h);
    vm_copyv(&empty->val, val);
    RADD(b->used, 1);
    RADD(b->live, 1);
}

void vm_table_setint(State *S, Table *t, vm_Integer key, const Value *val) {
    TabArr *a = vm_table_arr(t);
    if ((vm_Unsigned)key - 1 < a->size) {
        vm_copyv(&a->v[key - 1], val);
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
 * until t[j] is nil, then binary search between the last non-nil and that nil. Every
 * probe is a whole lookup, so other threads changing t only change the answer. */
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
 * full. Rejected: keeping no hint (a binary search per #t, O(log n) cache misses).
 * Only tags of the array block are read, and only inside [0, n). */
vm_Unsigned vm_table_len(Table *t) {
    TabArr *a = vm_table_arr(t);
    uint32_t n = a->size;
    if (n > 0) {
        const Value *arr = a->v;
        uint32_t h = gethint(a);
        uint32_t b;
        if (h > 0 && arr[h - 1].tt == VT_NIL) {             /* the border is below h */
            if (h >= 2 && arr[h - 2].tt != VT_NIL)
                b = h - 1;                                  /* t[#t] = nil */
            else
                b = arrayborder(arr, 0, h);
            sethint(a, b);
            return b;
        }
        if (h < n) {                                        /* h == 0 or arr[h-1] non-nil */
            if (arr[n - 1].tt != VT_NIL) {
                /* A full array part answers n, as lua5.4 does: #{1, nil, 3} is 3. */
                sethint(a, n);
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
            sethint(a, b);
            if (b < n) return b;
        }
    }
full:
    /* the array part is full (or empty): the border may continue in the hash part */
    {
        Node *nn = findint(t, (vm_Integer)n + 1, NULL);
        if (nn == NULL || nn->val.tt == VT_NIL) return n;
    }
    return hashborder(t, n + 1);
}

/* ======================================================================
 * Traversal
 * ====================================================================== */

/* Position after [key] in traversal order over blocks [a] and [b]: 0 for nil (the start),
 * k for array key k, and a->size + i + 1 for the key in node i. A key no longer in the
 * table raises an error; a dead key is still in its node, so a traversal that clears
 * fields goes on. */
static uint64_t nextindex(State *S, const TabArr *a, const TabNodes *b, const Value *key) {
    Value k = *key;
    if (k.tt == VT_NIL) return 0;
    if (k.tt == VT_FLOAT) {
        vm_Integer i;
        if (floatkey(k.u.n, &i)) k = vm_int(i);
    }
    if (k.tt == VT_INT && (vm_Unsigned)k.u.i - 1 < a->size) return (uint64_t)k.u.i;
    Node *n = findkey(b, &k);
    if (n == NULL) {
        /* next is a C function in lua5.4, so its message has no position, also when the
         * generic for runs next without a call (TFORCALL, compiled or interpreted) */
        S->errval = vm_str(vm_string_newc(S, "invalid key to 'next'"));
        vm_throwrun(S);
    }
    return (uint64_t)a->size + (uint64_t)(n - b->n) + 1;
}

/* Is node [i] of block [b] the copy of its key [k] that lookups find? Always, unless
 * racing insertions left a key twice in the hash part, or an integer key of the array part
 * in the hash part. A traversal must return only that copy: after returning another one,
 * next() would resume from the copy lookups find, before it, and go round for ever. A key
 * in its home node is the first of its probe sequence (the usual case: no second probe). */
static inline bool canonical(const TabArr *a, const TabNodes *b, uint32_t i, const Value *k) {
    if (k->tt == VT_NIL) return false;   /* cannot happen: keys are written first */
    if (k->tt == VT_INT && (vm_Unsigned)k->u.i - 1 < a->size) return false;
    uint32_t h = keyhash(k);
    return (h & b->mask) == i || findkeyh(b, k, h) == &b->n[i];
}

/* Where the last traversal step of this native thread left the hash part: block [b], node
 * [i]. The generic for hands next() the key it returned, and finding that key again is a
 * probe to a random node (a cache miss in a large table), plus canonical()'s own probe:
 * on hash_table.lua, pairs over 100,000 keys took ~240 ns a key. The hint is checked, never
 * trusted: it is used only when [b] is the table's current block and node [i] holds this
 * very key (same tag and payload; a dead key still does, so clearing fields during the
 * traversal keeps the hint), and only while a single thread runs VM code: keys are then
 * unique in a block, so that node is the one findkey would return. With threads, racing
 * insertions may duplicate a key and the full search decides (canonical()). A stale
 * pointer here is harmless: it is compared, and node i read only when it is the live block. */
static __thread __attribute__((tls_model("initial-exec"))) struct {
    const TabNodes *b;
    uint32_t i;
} nexthint;

bool vm_table_next(State *S, Table *t, Value *key, Value *val) {
    const TabArr *a = vm_table_arr(t);
    const TabNodes *b = vm_table_nodes(t);
    bool single = !vm_table_threads_have_started();
    uint64_t i;
    if (single && nexthint.b == b && nexthint.i <= b->mask && key->tt != VT_NIL) {
        Value hk = vm_loadv(&b->n[nexthint.i].key);
        if (hk.tt == key->tt && hk.u.i == key->u.i)
            i = (uint64_t)a->size + nexthint.i + 1;
        else
            i = nextindex(S, a, b, key);
    } else {
        i = nextindex(S, a, b, key);
    }
    for (; i < a->size; i++) {
        Value v = vm_loadv(&a->v[i]);
        if (v.tt != VT_NIL) {
            *key = vm_int((vm_Integer)i + 1);
            *val = v;
            return true;
        }
    }
    for (i -= a->size; i <= b->mask; i++) {
        const Node *n = &b->n[i];
        Value v = vm_loadv(&n->val);
        if (v.tt != VT_NIL) {
            uint32_t kh;
            Value k = nodekey(n, &kh);
            /* single thread: no duplicates, no array key left in the hash part */
            if (!single && !canonical(a, b, (uint32_t)i, &k)) continue;
            nexthint.b = b;
            nexthint.i = (uint32_t)i;
            *key = k;
            *val = v;
            return true;
        }
    }
    return false;
}

/* ======================================================================
 * Invariant checkers
 * ====================================================================== */

static bool validtag(uint32_t tt) { return tt < VT_NTAGS && tt != VT_PROTO; }

const char *vm_table_check_shape(const Table *t) {
    if (t->h.type != VT_TABLE) return "header type is not VT_TABLE";
    const TabArr *a = vm_table_arr(t);
    const TabNodes *b = vm_table_nodes(t);
    if (a == NULL) return "no array block";
    if (b == NULL) return "no node block";
    if (a->size > (1u << MAXABITS)) return "array part larger than 2^MAXABITS";
    if (a->size == 0 && a != EMPTYARR) return "empty array block that is not the shared one";
    for (uint32_t i = 0; i < a->size; i++)
        if (!validtag(vm_loadv(&a->v[i]).tt)) return "array slot with an invalid tag";
    /* t->hmask first, as lookups load them (vm_table_hpart) */
    if (__atomic_load_n(&t->hmask, __ATOMIC_ACQUIRE) > vm_table_nodes(t)->mask) return "hmask beyond the node block";
    if (b == EMPTYNODES) return NULL;
    uint32_t cap = b->mask + 1;
    if (cap < 2 || cap > (1u << MAXHBITS) || (cap & b->mask) != 0) return "hash capacity is not a power of two >= 2";
    if (b->limit != hlimit(cap)) return "hash limit does not match the capacity";
    for (uint32_t i = 0; i < cap; i++) {
        const Node *n = &b->n[i];
        /* value first: a writer stores the key before the value, so a value seen here
         * has its key visible too (x86 keeps both loads and stores in order) */
        Value v = vm_loadv(&n->val);
        Value k = vm_loadv(&n->key);
        if (!validtag(k.tt)) return "key with an invalid tag";
        if (!validtag(v.tt)) return "value with an invalid tag";
        if (k.tt == VT_NIL) {
            if (v.tt != VT_NIL) return "empty node with a value";
            continue;
        }
        if (k.tt == VT_FLOAT && k.u.n != k.u.n) return "NaN key";
        if (k.tt >= VT_STR && k.u.p == NULL) return "collectable key without an object";
        if (k.tt == VT_STR && k.u.s->hash == 0) return "string key without a cached hash";
    }
    return NULL;
}

const char *vm_table_check(const Table *t) {
    const char *msg = vm_table_check_shape(t);
    if (msg != NULL) return msg;
    const TabArr *a = vm_table_arr(t);
    const TabNodes *b = vm_table_nodes(t);
    if (t->hmask != b->mask) return "hmask is not the node block's mask";
    if (b == EMPTYNODES) return NULL;
    uint32_t cap = b->mask + 1;
    uint32_t used = 0, live = 0;
    for (uint32_t i = 0; i < cap; i++) {
        const Node *n = &b->n[i];
        const Value *k = &n->key;
        if (k->tt == VT_NIL) continue;
        used++;
        if (n->val.tt != VT_NIL) live++;
        if (k->tt == VT_FLOAT) {
            vm_Integer iv;
            if (floatkey(k->u.n, &iv)) return "float key with an integer value not normalised";
        }
        if (k->tt == VT_INT && (vm_Unsigned)k->u.i - 1 < a->size) return "integer key of the array part in the hash part";
        /* reachable from its home node, and the first node with that key (no duplicate) */
        if (findkey(b, k) != n) return "key unreachable from its home node, or duplicated";
        if (!(b->keys & vm_table_keybit(keyhash(k)))) return "key without its bit in the block's key filter";
        if (vm_node_hash(vm_load16(k)) != keyhash(k)) return "node key without its hash in the tag word";
    }
    if (used != b->used) return "'used' does not match the nodes";
    if (live != b->live) return "'live' does not match the nodes";
    if (used > b->limit) return "hash part fuller than its limit";
    return NULL;
}
