/* vm_string.h: immutable byte strings (see String in vm_value.h). */
#ifndef VM_STRING_H
#define VM_STRING_H

#include "vm_value.h"

struct State;

/* New string with a copy of [len] bytes at [s]. Raises "not enough memory" on exhaustion. */
String *vm_string_new(struct State *S, const char *s, size_t len);
/* New string from a NUL-terminated C string. */
String *vm_string_newc(struct State *S, const char *cstr);
/* New string of [len] bytes left for the caller to fill (data[len] is already '\0').
 * It must be completely written before it is hashed, compared or made visible. */
String *vm_string_alloc(struct State *S, size_t len);

/* The canonical string with these bytes, for names the compiler and the libraries use
 * (constants, field names, metamethod names): equal names then share one String, so table
 * lookups with them succeed on the pointer compare instead of comparing bytes. Runtime
 * strings are not interned; equality never depends on interning. Strings longer than
 * VM_INTERN_MAXLEN are returned as new strings. */
#define VM_INTERN_MAXLEN 40
String *vm_string_intern(struct State *S, const char *s, size_t len);

/* A string with these bytes for the libraries' results (vm_pushstr): up to
 * VM_STRCACHE_MAXLEN bytes, a string made recently by this coroutine with the same bytes
 * when the per-coroutine cache (State.strcache) still holds it, else a new one that
 * replaces the cache slot; longer, a new string. Results repeat (words, fields, single
 * characters), and a lookup costs a hash and a compare where a new string costs an
 * allocation and, later, the collector's work (and a reused string keeps its hash). */
#define VM_STRCACHE_MAXLEN 40
#define VM_STRCACHE_SIZE 512
String *vm_string_reuse(struct State *S, const char *s, size_t len);

/* Hash of the bytes (computed once, then cached in s->hash; never 0). */
uint32_t vm_string_hash(String *s);

/* Byte equality. */
static inline bool vm_string_eq(String *a, String *b) {
    return a == b || (a->len == b->len && memcmp(a->data, b->data, a->len) == 0);
}

/* vm_string_eq out of line, for compiled code (EQ, EQK on strings). */
bool vm_string_equal(String *a, String *b);

/* Ordering as Lua's string comparison (strcoll on each '\0'-separated piece, as lua5.4 does;
 * in the C locale that is byte order): <0, 0, >0. */
int vm_string_cmp(const String *a, const String *b);

#endif
