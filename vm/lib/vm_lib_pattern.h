/* vm_lib_pattern.h: private interface between the four files of the string library:
 * vm_lib_string.c (basic functions, the growable buffer, registration), vm_lib_pattern.c
 * (Lua patterns: find, match, gmatch, gsub), vm_lib_strfmt.c (string.format) and
 * vm_lib_strpack.c (string.pack, unpack, packsize). */
#ifndef VM_LIB_PATTERN_H
#define VM_LIB_PATTERN_H

#include "vm_lib.h"

/* Bytes kept inside the StrBuf itself before it moves to the heap. Coroutines run on small C
 * stacks, so this stays well under a kilobyte. */
#define VM_STRBUF_INIT 200

/* A growable byte buffer for building results (luaL_Buffer-like, but it never touches the
 * Lua stack). While the contents fit, b points at init; beyond that at a pointer-free GC
 * block from vm_alloc_leaf, kept alive by the StrBuf living on the (scanned) C stack.
 * Never copy a StrBuf: b may point into the struct itself. */
typedef struct StrBuf {
    State *S;
    char *b;       /* contents: init or a GC leaf block */
    size_t n;      /* bytes used */
    size_t cap;    /* bytes available at b */
    char init[VM_STRBUF_INIT];
} StrBuf;

void vm_strbuf_init(State *S, StrBuf *B);
/* Room for [extra] more bytes; returns where they go (call vm_strbuf_commit afterwards).
 * Raises "resulting string too large" when the size would overflow. */
char *vm_strbuf_reserve(StrBuf *B, size_t extra);
static inline void vm_strbuf_commit(StrBuf *B, size_t n) { B->n += n; }
/* Append [len] bytes: inline while they fit, vm_strbuf_addlstr_grow beyond. */
void vm_strbuf_addlstr_grow(StrBuf *B, const char *s, size_t len);
static inline void vm_strbuf_addlstr(StrBuf *B, const char *s, size_t len) {
    if (len <= B->cap - B->n) {
        if (len > 0) memcpy(B->b + B->n, s, len);   /* s may be NULL when len is 0 */
        B->n += len;
    } else {
        vm_strbuf_addlstr_grow(B, s, len);
    }
}
static inline void vm_strbuf_addchar(StrBuf *B, char c) {
    if (B->n == B->cap) vm_strbuf_reserve(B, 1);
    B->b[B->n++] = c;
}
/* Push the contents as a new string and return it. The buffer may be reused afterwards
 * only after vm_strbuf_init. */
String *vm_strbuf_push(StrBuf *B);

/* Library functions defined in vm_lib_pattern.c (called from the string table). */
int vm_str_find(State *S);
int vm_str_match(State *S);
int vm_str_gmatch(State *S);
int vm_str_gsub(State *S);

/* Defined in vm_lib_strfmt.c. */
int vm_str_format(State *S);

/* vm_lib_strpack.c */
int vm_str_pack(State *S);
int vm_str_packsize(State *S);
int vm_str_unpack(State *S);

/* Character classes of Lua patterns, ASCII as in the C locale (lua5.4 never calls
 * setlocale, so its ctype calls behave this way too). */
static inline bool vm_ch_isupper(int c) { return c >= 'A' && c <= 'Z'; }
static inline bool vm_ch_islower(int c) { return c >= 'a' && c <= 'z'; }
static inline bool vm_ch_isalpha(int c) { return vm_ch_isupper(c) || vm_ch_islower(c); }
static inline bool vm_ch_isdigit(int c) { return c >= '0' && c <= '9'; }
static inline bool vm_ch_isalnum(int c) { return vm_ch_isalpha(c) || vm_ch_isdigit(c); }
static inline bool vm_ch_iscntrl(int c) { return (c >= 0 && c < 32) || c == 127; }
static inline bool vm_ch_isgraph(int c) { return c > 32 && c < 127; }
static inline bool vm_ch_ispunct(int c) { return vm_ch_isgraph(c) && !vm_ch_isalnum(c); }
static inline bool vm_ch_isspace(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline bool vm_ch_isxdigit(int c) {
    return vm_ch_isdigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

#endif
