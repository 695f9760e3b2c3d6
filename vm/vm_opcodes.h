/* vm_opcodes.h: the Tandem instruction set, as one X-macro list (dispatch table, disassembler,
 * code generator, verifier and the JIT's template table all expand it, so they cannot
 * disagree). Grep ORDER OP if you change the list. */
#ifndef VM_OPCODES_H
#define VM_OPCODES_H

#include <stdint.h>

/* ======================================================================
 * Instruction layout: one 64-bit word
 * ======================================================================
 *
 *   63         48 47         32 31         16 15        8 7         0
 *  +-------------+-------------+-------------+-----------+-----------+
 *  |      C      |      B      |      A      |     k     |    op     |   iABC
 *  +-------------+-------------+-------------+-----------+-----------+
 *  |            Bx (32 bits)   |      A      |     k     |    op     |   iABx / iAsBx / isJ
 *  +---------------------------+-------------+-----------+-----------+
 *
 *  A, B, C: unsigned 16-bit; sB, sC: the same bits read as int16_t.
 *  Bx: unsigned 32-bit; sBx, sJ: the same bits read as int32_t.
 *  k: one bit (0 or 1) of the flags byte; the other 7 bits must be zero.
 *
 * Notation (Lua's): R[x] register x of the current frame; K[x] constant x;
 * RK(x) is K[x] when k == 1, else R[x]; UpValue[x]; P[x] nested prototype x.
 * Jumps: pc is the index of the NEXT instruction when an offset is applied,
 * so "pc += sJ" with sJ == 0 is a no-op and a jump to instruction T from the
 * instruction at index I uses offset T - (I + 1).
 *
 * Conditional tests (EQ .. GEI, TEST, TESTSET) are ALWAYS followed by a JMP:
 * when the condition does not hold as k says, the JMP is skipped (pc++);
 * otherwise the JMP is taken. The interpreter fuses the pair.
 */

#define VM_OP_SHIFT_K 8
#define VM_OP_SHIFT_A 16
#define VM_OP_SHIFT_B 32
#define VM_OP_SHIFT_C 48

/* X(name, format, description). format: ABC, ABx, AsBx, sJ. */
#define VM_OPCODES(X)                                                                        \
    X(MOVE, ABC, "R[A] := R[B]")                                                             \
    X(LOADK, ABx, "R[A] := K[Bx]")                                                           \
    X(LOADI, AsBx, "R[A] := integer sBx")                                                    \
    X(LOADF, AsBx, "R[A] := float sBx")                                                      \
    X(LOADNIL, ABC, "R[A], ..., R[A+B] := nil  (B+1 registers)")                             \
    X(LOADFALSE, ABC, "R[A] := false")                                                       \
    X(LOADTRUE, ABC, "R[A] := true")                                                         \
    X(GETUPVAL, ABC, "R[A] := UpValue[B]")                                                   \
    X(SETUPVAL, ABC, "UpValue[B] := R[A]")                                                   \
    X(GETTABUP, ABC, "R[A] := UpValue[B][K[C]]  (K[C] is a string)")                         \
    X(SETTABUP, ABC, "UpValue[A][K[B]] := RK(C)  (K[B] is a string)")                        \
    X(GETTABLE, ABC, "R[A] := R[B][R[C]]")                                                   \
    X(GETI, ABC, "R[A] := R[B][C]  (C is an integer key 0..65535)")                          \
    X(GETFIELD, ABC, "R[A] := R[B][K[C]]  (K[C] is a string)")                               \
    X(SETTABLE, ABC, "R[A][R[B]] := RK(C)")                                                  \
    X(SETI, ABC, "R[A][B] := RK(C)  (B is an integer key 0..65535)")                         \
    X(SETFIELD, ABC, "R[A][K[B]] := RK(C)  (K[B] is a string)")                              \
    X(NEWTABLE, ABC, "R[A] := {}  (B: hash size hint, C: array size hint)")                  \
    X(SELF, ABC, "R[A+1] := R[B]; R[A] := R[B][RK(C)]")                                      \
    X(ADDI, ABC, "R[A] := R[B] + sC")                                                        \
    X(ADDK, ABC, "R[A] := R[B] + K[C]  (K[C] is a number)")                                  \
    X(SUBK, ABC, "R[A] := R[B] - K[C]")                                                      \
    X(MULK, ABC, "R[A] := R[B] * K[C]")                                                      \
    X(MODK, ABC, "R[A] := R[B] % K[C]")                                                      \
    X(POWK, ABC, "R[A] := R[B] ^ K[C]")                                                      \
    X(DIVK, ABC, "R[A] := R[B] / K[C]")                                                      \
    X(IDIVK, ABC, "R[A] := R[B] // K[C]")                                                    \
    X(BANDK, ABC, "R[A] := R[B] & K[C]")                                                     \
    X(BORK, ABC, "R[A] := R[B] | K[C]")                                                      \
    X(BXORK, ABC, "R[A] := R[B] ~ K[C]")                                                     \
    X(ADD, ABC, "R[A] := R[B] + R[C]")                                                       \
    X(SUB, ABC, "R[A] := R[B] - R[C]")                                                       \
    X(MUL, ABC, "R[A] := R[B] * R[C]")                                                       \
    X(MOD, ABC, "R[A] := R[B] % R[C]")                                                       \
    X(POW, ABC, "R[A] := R[B] ^ R[C]")                                                       \
    X(DIV, ABC, "R[A] := R[B] / R[C]")                                                       \
    X(IDIV, ABC, "R[A] := R[B] // R[C]")                                                     \
    X(BAND, ABC, "R[A] := R[B] & R[C]")                                                      \
    X(BOR, ABC, "R[A] := R[B] | R[C]")                                                       \
    X(BXOR, ABC, "R[A] := R[B] ~ R[C]")                                                      \
    X(SHL, ABC, "R[A] := R[B] << R[C]")                                                      \
    X(SHR, ABC, "R[A] := R[B] >> R[C]")                                                      \
    X(UNM, ABC, "R[A] := -R[B]")                                                             \
    X(BNOT, ABC, "R[A] := ~R[B]")                                                            \
    X(NOT, ABC, "R[A] := not R[B]")                                                          \
    X(LEN, ABC, "R[A] := #R[B]")                                                             \
    X(CONCAT, ABC, "R[A] := R[A] .. ... .. R[A+B-1]  (B >= 2)")                              \
    X(CLOSE, ABC, "close upvalues and to-be-closed variables >= R[A]")                       \
    X(TBC, ABC, "mark R[A] as a to-be-closed variable")                                      \
    X(JMP, sJ, "pc += sJ")                                                                   \
    X(EQ, ABC, "if ((R[A] == R[B]) ~= k) then pc++")                                         \
    X(LT, ABC, "if ((R[A] < R[B]) ~= k) then pc++")                                          \
    X(LE, ABC, "if ((R[A] <= R[B]) ~= k) then pc++")                                         \
    X(EQK, ABC, "if ((R[A] == K[B]) ~= k) then pc++  (raw equality)")                        \
    X(EQI, ABC, "if ((R[A] == sB) ~= k) then pc++")                                          \
    X(LTI, ABC, "if ((R[A] < sB) ~= k) then pc++")                                           \
    X(LEI, ABC, "if ((R[A] <= sB) ~= k) then pc++")                                          \
    X(GTI, ABC, "if ((R[A] > sB) ~= k) then pc++")                                           \
    X(GEI, ABC, "if ((R[A] >= sB) ~= k) then pc++")                                          \
    X(TEST, ABC, "if (truthy(R[A]) ~= k) then pc++")                                         \
    X(TESTSET, ABC, "if (truthy(R[B]) ~= k) then pc++ else R[A] := R[B]")                    \
    X(CALL, ABC, "R[A], ..., R[A+C-2] := R[A](R[A+1], ..., R[A+B-1])")                       \
    X(TAILCALL, ABC, "return R[A](R[A+1], ..., R[A+B-1])")                                   \
    X(RETURN, ABC, "return R[A], ..., R[A+B-2]")                                             \
    X(RETURN0, ABC, "return")                                                                \
    X(RETURN1, ABC, "return R[A]")                                                           \
    X(FORPREP, AsBx, "numeric for: prepare R[A..A+3]; if no iteration, pc += sBx")           \
    X(FORLOOP, AsBx, "numeric for: step; if another iteration, R[A+3] := index, pc += sBx")  \
    X(TFORPREP, AsBx, "generic for: mark R[A+3] to-be-closed if not nil; pc += sBx")         \
    X(TFORCALL, ABC, "R[A+4], ..., R[A+3+C] := R[A](R[A+1], R[A+2])")                        \
    X(TFORLOOP, AsBx, "if R[A+4] ~= nil then { R[A+2] := R[A+4]; pc += sBx }")               \
    X(SETLIST, ABC, "R[A][C+i] := R[A+i], 1 <= i <= B")                                      \
    X(CLOSURE, ABx, "R[A] := closure(P[Bx])")                                                \
    X(VARARG, ABC, "R[A], R[A+1], ..., R[A+C-2] := vararg")                                  \
    X(EXTRAARG, ABx, "extra (larger) argument for the previous instruction")

/* Notes:
 *
 * CALL: B == 0: the arguments run up to the top (set by a previous CALL or VARARG with
 *   C == 0). C == 0: all results are kept and the top is set after the last one.
 *   Otherwise B-1 arguments and C-1 results.
 * TAILCALL: as CALL with C == 0, reusing the frame. B == 0: arguments up to the top.
 * RETURN: B == 0: return R[A] up to the top; otherwise B-1 values. Closes open upvalues and
 *   to-be-closed variables of the frame first (the interpreter checks; no flag needed).
 * VARARG: C == 0: all extra arguments, top set after the last; otherwise C-1 values.
 *   Vararg functions need no prologue instruction: the call sets the frame up.
 * LOADNIL: sets B+1 registers.
 * FORPREP/FORLOOP: R[A] = initial value, R[A+1] = limit, R[A+2] = step before FORPREP.
 *   FORPREP checks the types ("'for' initial value must be a number", ...) and that the
 *   step is not zero ("'for' step is zero"), sets R[A+3] := R[A] and jumps past the loop
 *   (sBx: to the instruction after the FORLOOP) when the loop runs zero times. The body
 *   starts right after FORPREP and sees the control variable in R[A+3]. FORLOOP's sBx
 *   jumps back to the first body instruction. For integer loops the interpreter keeps an
 *   iteration count in R[A+1] so the loop never overflows, as Lua 5.4 does.
 * TFORPREP: R[A] iterator function, R[A+1] state, R[A+2] control, R[A+3] closing value;
 *   jumps (sBx) to the TFORCALL. Layout emitted by the compiler:
 *       TFORPREP A -> L2
 *   L1: body (loop variables in R[A+4] ...)
 *   L2: TFORCALL A C    (C = number of loop variables)
 *       TFORLOOP A -> L1
 *   and then CLOSE A (the generic for's block always closes R[A+3] and captured loop
 *   variables on every exit).
 * SETLIST: B == 0: values from R[A+1] up to the top. When k == 1, the real C does not fit
 *   16 bits and is the Bx of the EXTRAARG that follows.
 * NEWTABLE: B and C are hints only (saturated at 65535).
 * SELF/SETTABUP/SETTABLE/SETI/SETFIELD use k to choose K[C] or R[C] for the stored value.
 * EQK: K[B] may be nil, a boolean, a number or a string; never calls metamethods.
 * EQI/LTI/LEI/GTI/GEI: sB is an integer immediate (-32768..32767). When R[A] is not a
 *   number, ordering comparisons call __lt/__le with the operands in source order.
 * ADDI: sC is an integer immediate. ADDK..BXORK: K[C] is an integer or float constant.
 *   Arithmetic falls back to string coercion and then to metamethods (__add, ...).
 * CONCAT: B >= 2 values R[A] .. R[A+B-1]; the result goes to R[A].
 * CLOSE/TBC: the compiler emits TBC right after initialising a local declared <close>, and
 *   CLOSE A at every exit of a block (including break and goto out of it) that declares a
 *   captured local or a <close> local, A being the block's first register.
 */

typedef enum {
#define VM_OP_ENUM(name, fmt, doc) OP_##name,
    VM_OPCODES(VM_OP_ENUM)
#undef VM_OP_ENUM
    OP__COUNT
} OpCode;

typedef enum { OPF_ABC, OPF_ABx, OPF_AsBx, OPF_sJ } OpFormat;

/* Name and format of each opcode (vm_opnames.c). */
extern const char *const vm_opnames[OP__COUNT];
extern const uint8_t vm_opformats[OP__COUNT];

/* --- decoding ----------------------------------------------------------- */
static inline unsigned vm_op(uint64_t i) { return (unsigned)(i & 0xff); }
static inline unsigned vm_k(uint64_t i) { return (unsigned)((i >> VM_OP_SHIFT_K) & 0xff); }
static inline unsigned vm_a(uint64_t i) { return (unsigned)((i >> VM_OP_SHIFT_A) & 0xffff); }
static inline unsigned vm_b(uint64_t i) { return (unsigned)((i >> VM_OP_SHIFT_B) & 0xffff); }
static inline unsigned vm_c(uint64_t i) { return (unsigned)(i >> VM_OP_SHIFT_C); }
static inline int vm_sb(uint64_t i) { return (int16_t)vm_b(i); }
static inline int vm_sc(uint64_t i) { return (int16_t)vm_c(i); }
static inline uint32_t vm_bx(uint64_t i) { return (uint32_t)(i >> VM_OP_SHIFT_B); }
static inline int32_t vm_sbx(uint64_t i) { return (int32_t)vm_bx(i); }

/* --- encoding ----------------------------------------------------------- */
static inline uint64_t vm_encode_abc(unsigned op, unsigned a, unsigned b, unsigned c, unsigned k) {
    return (uint64_t)op | ((uint64_t)(k & 1) << VM_OP_SHIFT_K) | ((uint64_t)(a & 0xffff) << VM_OP_SHIFT_A) |
           ((uint64_t)(b & 0xffff) << VM_OP_SHIFT_B) | ((uint64_t)(c & 0xffff) << VM_OP_SHIFT_C);
}
static inline uint64_t vm_encode_abx(unsigned op, unsigned a, uint32_t bx) {
    return (uint64_t)op | ((uint64_t)(a & 0xffff) << VM_OP_SHIFT_A) | ((uint64_t)bx << VM_OP_SHIFT_B);
}
static inline uint64_t vm_encode_asbx(unsigned op, unsigned a, int32_t sbx) {
    return vm_encode_abx(op, a, (uint32_t)sbx);
}

#endif
