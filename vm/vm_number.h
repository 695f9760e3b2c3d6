/* vm_number.h: number conversion and arithmetic with Lua 5.4 semantics. */
#ifndef VM_NUMBER_H
#define VM_NUMBER_H

#include "vm_value.h"

struct State;

/* Buffer size for vm_number2str. */
#define VM_NUMBUF 64

/* Parse a numeral with Lua's rules (lua_stringtonumber): optional leading/trailing spaces,
 * optional sign, decimal or hexadecimal integers and floats (hex floats with 'p' exponents),
 * "inf"/"nan" are NOT numerals. A decimal integer that overflows becomes a float; a hex
 * integer wraps around. Returns false (and leaves *out alone) if [s, s+len) is not a
 * numeral. s need not be NUL-terminated. */
bool vm_str2number(const char *s, size_t len, Value *out);

/* Format a number as lua5.4's tostring does: integers with "%lld"; floats with "%.14g",
 * adding ".0" when the result looks like an integer; "inf", "-inf", "nan", "-nan" as the C
 * library prints them. Writes at most VM_NUMBUF bytes with a terminating '\0' into buf and
 * returns the length. */
int vm_number2str(const Value *v, char *buf);

/* New string holding vm_number2str's text. */
struct String *vm_number_tostring(struct State *S, const Value *v);

/* Float to integer if the float has an exact integer value in range. */
bool vm_flt2int(vm_Number d, vm_Integer *out);

/* Value to integer: integers; floats with an exact integer value; strings that are such
 * numerals. False otherwise. */
bool vm_tointeger(const Value *v, vm_Integer *out);

/* Value to number (integer or float Value): numbers, and strings that are numerals. */
bool vm_tonumber(const Value *v, Value *out);

/* Integer floor division and modulo for b != 0 (the caller raises "attempt to perform
 * 'n//0'" / "attempt to perform 'n%%0'" for b == 0). Handle b == -1 without overflow. */
vm_Integer vm_idiv(vm_Integer a, vm_Integer b);
vm_Integer vm_imod(vm_Integer a, vm_Integer b);
/* Float floor division and Lua's float modulo (result has the sign of b). */
vm_Number vm_fidiv(vm_Number a, vm_Number b);
vm_Number vm_fmod(vm_Number a, vm_Number b);
/* Shifts: logical, shifting by >= 64 or <= -64 gives 0; negative shifts go the other way. */
vm_Integer vm_shiftl(vm_Integer x, vm_Integer y);

#endif
