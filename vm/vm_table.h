/* vm_table.h: raw table operations (no metamethods; see vm_lib.h for vm_gettable/vm_settable). */
#ifndef VM_TABLE_H
#define VM_TABLE_H

#include "vm_value.h"

struct State;

/* A shared read-only nil returned by lookups of absent keys. Never write through it. */
extern const Value vm_absent;

/* The current blocks of a table's two parts. Load each once (another thread may replace it
 * by a resize at any time) and take every bound from the block loaded: see "Races" in
 * vm_table.c. Acquire loads (plain moves on x86) pairing with the release stores that
 * publish a new block, so its header and contents are seen initialised. */
static inline TabArr *vm_table_arr(const Table *t) { return __atomic_load_n(&t->arr, __ATOMIC_ACQUIRE); }
static inline TabNodes *vm_table_nodes(const Table *t) { return __atomic_load_n(&t->node, __ATOMIC_ACQUIRE); }
/* Sizes, for tests and heuristics (racy snapshots under threads). */
static inline uint32_t vm_table_asize(const Table *t) { return vm_table_arr(t)->size; }
static inline uint32_t vm_table_hcap(const Table *t) {
    const TabNodes *b = vm_table_nodes(t);
    return b->limit == 0 ? 0 : b->mask + 1;   /* the empty block counts as no hash part */
}
static inline uint32_t vm_table_hlive(const Table *t) {
    return __atomic_load_n(&vm_table_nodes(t)->live, __ATOMIC_RELAXED);   /* see RLOAD in vm_table.c */
}

/* The hash part for a lookup: [*mask] and the block, loaded in this order. The hash part
 * only ever grows, and a resize publishes the new block before the new t->hmask (release
 * stores), so the block a reader loads after t->hmask (acquire loads: plain moves on x86)
 * has at least hmask + 1 nodes: probing it with that mask stays inside it. The mask may be
 * older than the block (a resize between the two loads, or one that has published its block
 * and not yet raised t->hmask): the probe then starts at the wrong node and wraps within
 * the block's first hmask + 1 nodes, so it may miss a key that is in the new block as it was
 * in the old one, which no order of the stores explains (a field that was never removed
 * read as nil; test_table.c, test_vm_table_lookup_with_an_older_mask). So a probe that
 * ends without the key, and only that one, compares the mask with the block's own
 * (b->mask, a header word never written after the block is published) and, when they
 * differ, probes again with the block's. Both loads come straight from the Table, so the
 * first node's address does not wait for a load from the block. Code that stores into a
 * block, or walks it, uses the block's own mask instead. */
__attribute__((always_inline)) static inline TabNodes *vm_table_hpart(const Table *t, uint32_t *mask) {
    *mask = __atomic_load_n(&t->hmask, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&t->node, __ATOMIC_ACQUIRE);
}

/* New table with room for [narr] array items and [nhash] hash items. */
Table *vm_table_new(struct State *S, uint32_t narr, uint32_t nhash);

/* Raw lookup; returns &vm_absent (a nil) when the key is absent. Float keys with an integer
 * value find integer keys. The pointer stays valid memory (blocks are never freed while
 * referenced), but the slot may be changed or abandoned by a store from any thread: read
 * it only with vm_loadv, once, and inspect the copy. */
const Value *vm_table_get(Table *t, const Value *key);
const Value *vm_table_getint(Table *t, vm_Integer key);
const Value *vm_table_getstr(Table *t, String *key);

/* The key filter of hash block [b] (TabNodes.keys in vm_value.h): false proves that no node
 * of b holds a key whose hash is [h], live or dead. The bit of a key is set (an atomic or,
 * vm_table.c) before the key is stored into a node of a published block, so a reader that
 * finds it clear ran before any such store: the key is absent, or its insertion races with
 * this read. Relaxed: no payload is read on the strength of it. */
#define VM_KEYBIT_SHIFT 26 /* 32-bit hashes, 64 filter bits: the hash's top 6 bits pick one */
static inline uint64_t vm_table_keybit(uint32_t h) { return (uint64_t)1 << (h >> VM_KEYBIT_SHIFT); }
static inline bool vm_table_maybe_has(const TabNodes *b, uint32_t h) {
    return (__atomic_load_n(&b->keys, __ATOMIC_RELAXED) & vm_table_keybit(h)) != 0;
}

uint32_t vm_string_hash(String *s);
/* Node keys carry their key's hash (keyhash in vm_table.c; for a string, its cached hash) in
 * the upper half of the tag word, bytes 12..15 of the key Value, which Values elsewhere leave
 * zero. It is written with the key in the key's one 16-byte store, so a reader's copy has the
 * key and its hash from the same store. A probe then tells another key from its own by the
 * tag word alone, without loading the other key's String (in a large table every node of the
 * cluster passed over cost a cache miss: on hash_table.lua half the time of insertion went
 * to that load), and a rehash places keys without loading them. A key taken out of a node
 * (next()) leaves with the word's upper half cleared (vm_table.c, nodekey). */
static inline uint64_t vm_node_tagword(uint32_t tt, uint32_t h) { return (uint64_t)h << 32 | tt; }
static inline uint32_t vm_node_hash(vm_V16 k) { return (uint32_t)((uint64_t)k[1] >> 32); }
/* What node [n] holds for string [s] of hash [h]: 2 s itself, 1 a String of the same bytes,
 * 0 another key, -1 no key (the end of a probe). The key is loaded whole, its copy inspected. */
__attribute__((always_inline)) static inline int vm_node_strkey(const Node *n, String *s, uint32_t h) {
    vm_V16 k = vm_load16(&n->key);
    if ((uint64_t)k[1] == vm_node_tagword(VT_STR, h)) {
        const String *ks = vm_v16_p(k);
        if (ks == s) return 2;
        return ks->len == s->len && memcmp(ks->data, s->data, s->len) == 0;
    }
    return vm_v16_tt(k) == VT_NIL ? -1 : 0;
}
/* The probe of block [b] for string [s] (hash [h]) with mask [m]: linear from h & m, a node
 * with a nil key ends it, at most m + 1 nodes. The key's value slot, or NULL; with [pos], a
 * node away from its home records h + steps there (the inline caches' position). */
__attribute__((always_inline)) static inline const Value *vm_table_probe_str(const TabNodes *b, uint32_t m, String *s,
                                                                            uint32_t h, uint32_t *pos) {
    uint32_t i = h & m;
    for (uint32_t step = 0; step <= m; step++) {
        const Node *n = &b->n[i];
        int r = vm_node_strkey(n, s, h);
        if (r > 0) {
            if (r == 2 && pos != NULL) *pos = h + step;
            return &n->val;
        }
        if (r < 0) return NULL;
        i = (i + 1) & m;
    }
    return NULL;
}
/* vm_table_getstr_at's probe of block [b] for [s] (hash [h]) with the block's own mask, for
 * a lookup whose mask was older than the block (vm_table_hpart). */
const Value *vm_table_getstr_block(const TabNodes *b, String *s, uint32_t h, uint32_t *pos);
/* The string-key lookup inline, for the interpreter's hot paths. Must probe exactly as
 * vm_table.c does (linear probing from hash & mask; a node with a nil key ends the probe;
 * dead nodes keep their keys; at most mask + 1 nodes, because racing inserters may fill
 * every node). Each key is loaded whole (vm_load16) and only the copy is inspected.
 * [*pos], when not NULL, receives hash + the number of nodes stepped over when the node
 * holding s itself (this very String) is found, and is left alone otherwise: the node is
 * then at *pos & mask in this block, and a home key is at that position in a block of any
 * size (the JIT's inline caches, jit/jit_ic.c, remember it; a constant NULL folds away).
 * vm_table_getstr is this same function.
 * The key filter (vm_table_maybe_has) is not tested here: it would save the rest of a probe
 * through a cluster for an absent key, but inlined into the interpreter's loop it changed
 * which stale copies of dead objects stay on the C stack, and tests/programs/weak/ (whose
 * results depend on them: ephemeron_cache.lua) then kept a dead key. Compiled code tests it
 * (jit/jit_ic.c). */
__attribute__((always_inline)) static inline const Value *vm_table_getstr_at(const Table *t, String *s,
                                                                           uint32_t *pos) {
    uint32_t m;
    const TabNodes *b = vm_table_hpart(t, &m);
    uint32_t h = vm_str_cachedhash(s);
    if (h == 0) h = vm_string_hash(s);
    const Value *v = vm_table_probe_str(b, m, s, h, pos);
    if (v != NULL) return v;
    /* absent, unless m was older than the block (vm_table_hpart): out of line, rare */
    if (__builtin_expect(b->mask != m, 0)) return vm_table_getstr_block(b, s, h, pos);
    return &vm_absent;
}
__attribute__((always_inline)) static inline const Value *vm_table_getstr_inline(const Table *t, String *s) {
    return vm_table_getstr_at(t, s, NULL);
}

/* Raw store. Storing nil removes the key (it stays as a dead node until the next rehash so a
 * traversal can continue). Raises "table index is nil" / "table index is NaN" for such keys. A store
 * that adds a new key clears the table's absent-metamethod cache (t->h.flags = 0).
 * May grow the table (allocation, so it can raise "not enough memory"). */
void vm_table_set(struct State *S, Table *t, const Value *key, const Value *val);
void vm_table_setint(struct State *S, Table *t, vm_Integer key, const Value *val);
void vm_table_setstr(struct State *S, Table *t, String *key, const Value *val);

/* Slot for [key] for the interpreter's fast store path: returns a pointer to the existing
 * value slot when the key is present with a non-nil value, else NULL (then use
 * vm_table_set). Storing through it a non-nil value with vm_storev / vm_copyv is a valid
 * raw store. */
Value *vm_table_slot(Table *t, const Value *key);
Value *vm_table_slotstr(Table *t, String *key);

/* Border of the table (Lua's #t without __len): some n with t[n] ~= nil and t[n+1] == nil,
 * or 0 when t[1] == nil; for a proper sequence it is its length. */
vm_Unsigned vm_table_len(Table *t);

/* Traversal: [key] holds the previous key (nil to start); on return true, [key] and [val]
 * hold the next pair; false at the end. Raises "invalid key to 'next'" for a key that is
 * not in the table. Array part first (ascending), then the hash part in node order. */
bool vm_table_next(struct State *S, Table *t, Value *key, Value *val);

/* From now on, for good, other language threads may run at the same time as this one: a
 * resize stops giving the old blocks back with gc_free (another thread may still be
 * reading them) and leaves them to the collector. The thread library calls it before it
 * starts the second language thread, in every thread model; so does anything else that
 * runs VM code on a second native thread. Missing it is a use after free. */
void vm_table_threads_started(void);
/* Whether vm_table_threads_started has been called (a relaxed load; vm/capi/ locks C modules
 * from then on, and upvalues open on another coroutine's stack are accessed directly until
 * then: vm_upval_direct). The flag itself is read by compiled code (jit_tpl_table.c). */
extern bool vm_threads_started_flag;
static inline bool vm_table_threads_have_started(void) {
    return __atomic_load_n(&vm_threads_started_flag, __ATOMIC_RELAXED);
}

/* Make [t] weak with [mode] (VM_WEAKK | VM_WEAKV, vm_value.h), or ordinary with 0: from
 * then on the collector clears the entries whose weak key or value it frees (vm_gc.c). */
void vm_table_setweak(struct State *S, Table *t, uint32_t mode);

/* Resize to at least [narr] array and [nhash] hash slots (table.create-like hints). */
void vm_table_reserve(struct State *S, Table *t, uint32_t narr, uint32_t nhash);

/* Invariant checker for tests and debug builds: returns NULL when t is well formed, else a
 * static message naming the broken invariant. For a table that only one thread has changed
 * at a time (the counts, key placement and uniqueness hold only then). */
const char *vm_table_check(const Table *t);

/* The weaker shape that unsynchronised stores from several threads preserve (what memory
 * safety needs): sizes within limits, power-of-two hash capacity, valid tags in every
 * slot, no nil/NaN keys with values... Safe to call while other threads change t. */
const char *vm_table_check_shape(const Table *t);

#endif
