/* vm_compile.h: source text to Proto (lexer vm_lex.c, parser and code generator vm_parse.c). */
#ifndef VM_COMPILE_H
#define VM_COMPILE_H

#include "vm_state.h"

/* A syntax error: 1-based line and column of the token where it was detected, and Lua's
 * wording of the message ("'=' expected near 'x'", "unexpected symbol near <eof>",
 * "'end' expected (to close 'function' at line 3) near <eof>", ...) without position. */
typedef struct CompileError {
    int line;
    int col;
    char msg[256];
} CompileError;

/* Compile [len] bytes of Lua source. [source] is the chunk name stored in every Proto
 * ("@path/file.lua" for files, "=stdin", or the code itself for load() strings).
 * Returns the main function's Proto (vararg, no parameters, one upvalue "_ENV" with
 * instack = 1, idx = 0), or NULL with *err filled in. Never raises a Lua error for bad
 * source; allocation failure raises "not enough memory". */
Proto *vm_compile(State *S, const char *src, size_t len, const char *source, CompileError *err);

/* Chunk id for messages, as Lua's luaO_chunkid: "@file" -> "file" (shortened from the
 * left with "..." if long), "=name" -> "name", a source string -> [string "first line..."].
 * Writes at most [bufsize] bytes including the NUL. */
void vm_chunkid(char *buf, size_t bufsize, const char *source, size_t srclen);

/* Size of chunk ids in messages, as lua5.4's LUA_IDSIZE, so long names are shortened the
 * same way. */
#define VM_IDSIZE 60

#endif
