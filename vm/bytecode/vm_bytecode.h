/* vm_bytecode.h: the Tandem bytecode file format (docs/bytecode.md): writer, loader and
 * verifier. */
#ifndef VM_BYTECODE_H
#define VM_BYTECODE_H

#include <stdio.h>

#include "vm_state.h"

/* First bytes of every bytecode file (also how vm_load tells binary from source). */
#define VM_BC_SIGNATURE "\x1bTBC"
#define VM_BC_SIGLEN 4

/* Serialise [p] (a main chunk) into a new malloc'd buffer; *len receives its size.
 * Returns NULL on allocation failure. [strip] drops debug info (lines, locals, names). */
unsigned char *vm_bytecode_dump(const Proto *p, size_t *len, bool strip);

/* Load and fully verify a bytecode buffer. Returns the main Proto, or NULL with a one-line
 * reason in [why] (e.g. "truncated file", "bad magic", "unsupported version 3",
 * "function 2: instruction 17: jump target 99 outside the function",
 * "function 0: constant index 12 out of range (8 constants)").
 * Nothing is executed before verification succeeds. Never raises, never crashes on any
 * input. */
Proto *vm_bytecode_load(State *S, const unsigned char *buf, size_t len, char *why, size_t whysize);

/* Verify one Proto tree produced by the compiler or the loader: NULL if valid, else the
 * reason written to [why]. Used by the loader and by tests of the compiler. */
const char *vm_bytecode_verify(const Proto *p, char *why, size_t whysize);

/* Print a readable listing of [p] and its nested functions (tandem -Xdump=bytecode):
 * one line per instruction with index, source line, opcode, operands and a comment
 * resolving constants, upvalue names and jump targets. */
void vm_bytecode_list(FILE *out, const Proto *p);
/* One line of that listing: instruction [pc] of [p] (also used by -Xdump=jit). */
void vm_bytecode_list_instr(FILE *out, const Proto *p, int pc);

#endif
