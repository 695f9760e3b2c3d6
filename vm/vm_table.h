/* vm_table.h: raw table operations (no metamethods; see vm_lib.h for vm_gettable/vm_settable). */
#ifndef VM_TABLE_H
#define VM_TABLE_H

#include "vm_value.h"

struct State;

/* A shared read-only nil returned by lookups of absent keys. Never write through it. */
extern const Value vm_absent;

/* New table with room for [narr] array items and [nhash] hash items. */
Table *vm_table_new(struct State *S, uint32_t narr, uint32_t nhash);

/* Raw lookup; returns &vm_absent (a nil) when the key is absent. Float keys with an integer
 * value find integer keys. The pointer is valid until the table is next modified. */
const Value *vm_table_get(Table *t, const Value *key);
const Value *vm_table_getint(Table *t, vm_Integer key);
const Value *vm_table_getstr(Table *t, String *key);

/* The string-key lookup inline, for the interpreter's hot paths. Must probe exactly as
 * vm_table.c does (linear probing from hash & hmask; a node with a nil key ends the
 * probe; dead nodes keep their keys). vm_table_getstr is this same function. */
uint32_t vm_string_hash(String *s);
__attribute__((always_inline)) static inline const Value *vm_table_getstr_inline(const Table *t, String *s) {
    if (t->node == NULL) return &vm_absent;
    uint32_t h = s->hash != 0 ? s->hash : vm_string_hash(s);
    uint32_t m = t->hmask, i = h & m;
    for (;;) {
        const Node *n = &t->node[i];
        if (n->key.tt == VT_STR) {
            const String *k = n->key.u.s;
            if (k == s || (k->hash == h && k->len == s->len && memcmp(k->data, s->data, s->len) == 0))
                return &n->val;
        } else if (n->key.tt == VT_NIL) {
            return &vm_absent;
        }
        i = (i + 1) & m;
    }
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
 * vm_table_set). Storing through it a non-nil value is a valid raw store. */
Value *vm_table_slot(Table *t, const Value *key);
Value *vm_table_slotstr(Table *t, String *key);

/* Border of the table (Lua's #t without __len): some n with t[n] ~= nil and t[n+1] == nil,
 * or 0 when t[1] == nil; for a proper sequence it is its length. */
vm_Unsigned vm_table_len(Table *t);

/* Traversal: [key] holds the previous key (nil to start); on return true, [key] and [val]
 * hold the next pair; false at the end. Raises "invalid key to 'next'" for a key that is
 * not in the table. Array part first (ascending), then the hash part in node order. */
bool vm_table_next(struct State *S, Table *t, Value *key, Value *val);

/* Resize to at least [narr] array and [nhash] hash slots (table.create-like hints). */
void vm_table_reserve(struct State *S, Table *t, uint32_t narr, uint32_t nhash);

/* Invariant checker for tests and debug builds: returns NULL when t is well formed, else a
 * static message naming the broken invariant. */
const char *vm_table_check(const Table *t);

#endif
