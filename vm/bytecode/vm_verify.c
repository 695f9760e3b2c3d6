/* vm_verify.c: the bytecode verifier: checks that a Proto tree satisfies everything the
 * interpreter assumes, so that no bytecode file that passes can make it read or write
 * outside a frame, a constant table, an upvalue array or the code (docs/bytecode.md,
 * "Verification").
 *
 * What is checked, per function:
 *   - shape: 1 <= ncode, maxstack <= VM_MAXREGS, numparams <= maxstack, is_vararg 0/1,
 *     nupvals <= VM_MAXUPVALS, arrays present for non-zero counts;
 *   - upvalue descriptors against the enclosing function (register < its maxstack, or
 *     upvalue < its nupvals); the top function's upvalues are created by the loader;
 *   - constants are nil, booleans, numbers or strings;
 *   - each instruction: a known opcode, flag bits other than k zero, register operands
 *     (ranges included) below maxstack, constant indices below nk with the type the
 *     interpreter relies on, upvalue indices below nupvals, prototype indices below np;
 *   - control flow: every successor of every instruction inside [0, ncode), so nothing
 *     falls off the end; conditional tests followed by JMP; FORPREP/FORLOOP paired;
 *     TFORPREP -> TFORCALL -> TFORLOOP; EXTRAARG only after SETLIST with k and never
 *     reached otherwise; VARARG only in vararg functions;
 *   - "up to the top" operands (B == 0 of CALL, TAILCALL, RETURN, SETLIST) are only
 *     reachable straight from the instruction that set the top (CALL or VARARG with
 *     C == 0, or TAILCALL), never by a jump, and that producer's A is not below the
 *     consumer's first value register, so the value count is never negative;
 *   - every SETLIST stores into a register that holds the table of a NEWTABLE on every
 *     path reaching it (a small data-flow analysis, see check_tables);
 *   - debug info: local variable names present, 0 <= startpc <= endpc <= ncode, and never
 *     more locals active at one pc than there are registers (the runtime finds the i-th
 *     active local in register i).
 *
 * What is NOT checked, and why the interpreter must not depend on it: the types held in
 * registers (a numeric for loop whose control registers were overwritten, an integer
 * operand that holds a table...). That would need a data-flow type analysis over every
 * path; the interpreter instead tests tags before it dereferences a register, as Lua 5.4's
 * does. The verifier only proves memory safety of the operands' locations. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "vm_bytecode.h"
#include "vm_opcodes.h"

/* Deepest nesting of functions accepted (main chunk = depth 0). The compiler's own limit
 * on syntactic nesting (200 levels, as Lua's LUAI_MAXCCALLS) keeps its output below it. */
#define VERIFY_MAXDEPTH 200

/* Upvalue kinds (UpvalDesc.kind). */
#define VERIFY_MAXKIND 2

typedef struct Verifier {
    char *why;
    size_t whysize;
    int nfunc;              /* functions numbered so far, in pre-order (main = 0) */
    const Proto *p;         /* function being checked */
    int fnum;               /* its number */
    int pc;                 /* instruction being checked, or -1 */
    uint8_t *flags;         /* ncode per-instruction flags (malloc'd scratch, no GC refs) */
} Verifier;

/* Per-instruction flags of the scratch array. */
#define FL_TARGET 1u    /* reached by a jump or a skip (not only by falling through) */

/* ======================================================================
 * Reporting
 * ====================================================================== */

/* Write "main chunk: instruction 5 (MOVE): <msg>" into V->why; always returns false so
 * callers can `return bad(...)`. */
static bool bad(Verifier *V, const char *fmt, ...) {
    if (V->why == NULL || V->whysize == 0) return false;
    size_t n;
    if (V->fnum == 0)
        n = (size_t)snprintf(V->why, V->whysize, "function 0 (main chunk): ");
    else if (V->p == NULL)
        n = (size_t)snprintf(V->why, V->whysize, "function %d: ", V->fnum);
    else
        n = (size_t)snprintf(V->why, V->whysize, "function %d (line %d): ", V->fnum,
                             (int)V->p->linedefined);
    if (n < V->whysize && V->pc >= 0 && V->p != NULL) {
        unsigned op = vm_op(V->p->code[V->pc]);
        n += (size_t)snprintf(V->why + n, V->whysize - n, "instruction %d (%s): ", V->pc,
                              op < OP__COUNT ? vm_opnames[op] : "?");
    }
    if (n < V->whysize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(V->why + n, V->whysize - n, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* ======================================================================
 * Operand checks
 * ====================================================================== */

/* Registers first .. first+count-1 all exist (count may be 0). */
static bool regs(Verifier *V, uint64_t first, uint64_t count) {
    if (count == 0) return true;
    uint64_t last = first + count - 1;
    if (last >= V->p->maxstack)
        return bad(V, "register %llu out of range (maxstack %u)", (unsigned long long)last,
                   (unsigned)V->p->maxstack);
    return true;
}

static bool reg(Verifier *V, uint64_t r) { return regs(V, r, 1); }

static bool upval(Verifier *V, unsigned idx) {
    if ((int64_t)idx >= V->p->nupvals)
        return bad(V, "upvalue %u out of range (%d upvalues)", idx, (int)V->p->nupvals);
    return true;
}

enum { K_ANY, K_STRING, K_NUMBER };

static bool konst(Verifier *V, uint64_t idx, int want) {
    const Proto *p = V->p;
    if (idx >= (uint64_t)p->nk)
        return bad(V, "constant %llu out of range (%d constants)", (unsigned long long)idx,
                   (int)p->nk);
    const Value *k = &p->k[idx];
    if (want == K_STRING && k->tt != VT_STR)
        return bad(V, "constant %llu is not a string", (unsigned long long)idx);
    if (want == K_NUMBER && k->tt != VT_INT && k->tt != VT_FLOAT)
        return bad(V, "constant %llu is not a number", (unsigned long long)idx);
    return true;
}

/* RK(C): a constant when k is set, else a register. */
static bool rkc(Verifier *V, Instr i, int want) {
    return vm_k(i) ? konst(V, vm_c(i), want) : reg(V, vm_c(i));
}

/* Jump destination from instruction pc with offset off (relative to pc + 1). */
static bool target(Verifier *V, int64_t off, int64_t *dest) {
    int64_t t = (int64_t)V->pc + 1 + off;
    if (t < 0 || t >= V->p->ncode)
        return bad(V, "jump target %lld outside the function (%d instructions)", (long long)t,
                   (int)V->p->ncode);
    V->flags[t] |= FL_TARGET;
    *dest = t;
    return true;
}

static bool is_test(unsigned op) {
    return (op >= OP_EQ && op <= OP_GEI) || op == OP_TEST || op == OP_TESTSET;
}

/* Sets the top for the next instruction (an "open" result list). TAILCALL counts: the
 * compiler follows it with RETURN A 0, which is never executed. */
static bool is_open_producer(Instr i) {
    unsigned op = vm_op(i);
    return ((op == OP_CALL || op == OP_VARARG) && vm_c(i) == 0) || op == OP_TAILCALL;
}

/* Takes its values "up to the top". */
static bool is_open_consumer(Instr i) {
    unsigned op = vm_op(i);
    return (op == OP_CALL || op == OP_TAILCALL || op == OP_RETURN || op == OP_SETLIST) &&
           vm_b(i) == 0;
}

/* ======================================================================
 * Instructions
 * ====================================================================== */

/* Operand checks of one instruction, and the jump targets it marks. */
static bool check_operands(Verifier *V, Instr i) {
    const Proto *p = V->p;
    unsigned op = vm_op(i), a = vm_a(i), b = vm_b(i), c = vm_c(i);
    int64_t t;
    switch ((OpCode)op) {
    case OP_MOVE: case OP_UNM: case OP_BNOT: case OP_NOT: case OP_LEN: case OP_ADDI:
    case OP_GETI: case OP_TESTSET:
        return reg(V, a) && reg(V, b);
    case OP_LOADK:
        return reg(V, a) && konst(V, vm_bx(i), K_ANY);
    case OP_LOADI: case OP_LOADF: case OP_LOADFALSE: case OP_LOADTRUE: case OP_NEWTABLE:
    case OP_TBC: case OP_TEST: case OP_RETURN1: case OP_EQI: case OP_LTI: case OP_LEI:
    case OP_GTI: case OP_GEI:
        return reg(V, a);
    case OP_LOADNIL:
        return regs(V, a, (uint64_t)b + 1);
    case OP_GETUPVAL: case OP_SETUPVAL:
        return reg(V, a) && upval(V, b);
    case OP_GETTABUP:
        return reg(V, a) && upval(V, b) && konst(V, c, K_STRING);
    case OP_SETTABUP:
        return upval(V, a) && konst(V, b, K_STRING) && rkc(V, i, K_ANY);
    case OP_GETTABLE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_MOD: case OP_POW:
    case OP_DIV: case OP_IDIV: case OP_BAND: case OP_BOR: case OP_BXOR: case OP_SHL:
    case OP_SHR:
        return reg(V, a) && reg(V, b) && reg(V, c);
    case OP_GETFIELD:
        return reg(V, a) && reg(V, b) && konst(V, c, K_STRING);
    case OP_SETTABLE:
        return reg(V, a) && reg(V, b) && rkc(V, i, K_ANY);
    case OP_SETI:
        return reg(V, a) && rkc(V, i, K_ANY);
    case OP_SETFIELD:
        return reg(V, a) && konst(V, b, K_STRING) && rkc(V, i, K_ANY);
    case OP_SELF:
        return regs(V, a, 2) && reg(V, b) && rkc(V, i, K_STRING);
    case OP_ADDK: case OP_SUBK: case OP_MULK: case OP_MODK: case OP_POWK: case OP_DIVK:
    case OP_IDIVK: case OP_BANDK: case OP_BORK: case OP_BXORK:
        return reg(V, a) && reg(V, b) && konst(V, c, K_NUMBER);
    case OP_CONCAT:
        if (b < 2) return bad(V, "concatenation of %u values (at least 2)", b);
        return regs(V, a, b);
    case OP_CLOSE:
        /* Only compared with stack addresses, never read: the level just past the last
         * register is acceptable. */
        if (a > p->maxstack)
            return bad(V, "register %u out of range (maxstack %u)", a, (unsigned)p->maxstack);
        return true;
    case OP_JMP:
        return target(V, vm_sbx(i), &t);
    case OP_EQ: case OP_LT: case OP_LE:
        return reg(V, a) && reg(V, b);
    case OP_EQK:
        return reg(V, a) && konst(V, b, K_ANY);
    case OP_CALL:
        /* function, B-1 arguments (or up to the top), C-1 results (or up to the top) */
        return reg(V, a) && regs(V, a, b) && (c < 2 || regs(V, a, (uint64_t)c - 1));
    case OP_TAILCALL:
        return reg(V, a) && regs(V, a, b);
    case OP_RETURN:
        if (b == 0) return reg(V, a);
        if (b == 1) { /* no value: R[A] is never read */
            if (a > p->maxstack)
                return bad(V, "register %u out of range (maxstack %u)", a,
                           (unsigned)p->maxstack);
            return true;
        }
        return regs(V, a, (uint64_t)b - 1);
    case OP_RETURN0:
        return true;
    case OP_FORPREP: case OP_FORLOOP:
        return regs(V, a, 4) && target(V, vm_sbx(i), &t);
    case OP_TFORPREP:
        return regs(V, a, 4) && target(V, vm_sbx(i), &t);
    case OP_TFORCALL:
        /* results R[A+4] .. R[A+3+C]; TFORLOOP reads R[A+4] even when C == 0 */
        return regs(V, a, 4 + (uint64_t)(c ? c : 1));
    case OP_TFORLOOP:
        return regs(V, a, 5) && target(V, vm_sbx(i), &t);
    case OP_SETLIST:
        return reg(V, a) && regs(V, a, (uint64_t)b + 1);
    case OP_CLOSURE:
        if ((int64_t)vm_bx(i) >= p->np)
            return bad(V, "function %u out of range (%d nested functions)", (unsigned)vm_bx(i),
                       (int)p->np);
        return reg(V, a);
    case OP_VARARG:
        if (!p->is_vararg) return bad(V, "VARARG in a function that is not vararg");
        return reg(V, a) && (c < 2 || regs(V, a, (uint64_t)c - 1));
    case OP_EXTRAARG:
        return true; /* placement is checked by check_flow */
    case OP__COUNT:
        break;
    }
    return bad(V, "invalid opcode %u", op);
}

/* Structural rules that look at neighbouring instructions. Runs after check_operands has
 * validated (and marked) every jump target of the function. */
static bool check_flow(Verifier *V, Instr i) {
    const Proto *p = V->p;
    int pc = V->pc;
    unsigned op = vm_op(i);
    Instr next = pc + 1 < p->ncode ? p->code[pc + 1] : 0;
    bool has_next = pc + 1 < p->ncode;

    if (is_test(op)) {
        if (!has_next || vm_op(next) != OP_JMP) return bad(V, "test not followed by JMP");
        if (pc + 2 >= p->ncode) return bad(V, "skip past the end of the function");
    }
    if (op == OP_SETLIST && vm_k(i)) {
        if (!has_next || vm_op(next) != OP_EXTRAARG)
            return bad(V, "SETLIST with k not followed by EXTRAARG");
        if (pc + 2 >= p->ncode) return bad(V, "execution falls off the end of the function");
    }
    if (op == OP_EXTRAARG) {
        if (pc == 0 || vm_op(p->code[pc - 1]) != OP_SETLIST || !vm_k(p->code[pc - 1]))
            return bad(V, "EXTRAARG not after SETLIST with k");
        if (V->flags[pc] & FL_TARGET) return bad(V, "jump to EXTRAARG");
    }
    if (op == OP_FORPREP) {
        /* exit target is just past the FORLOOP that jumps back to pc + 1 */
        int64_t t = (int64_t)pc + 1 + vm_sbx(i);
        Instr l = t - 1 > pc ? p->code[t - 1] : 0;
        if (t - 1 <= pc || vm_op(l) != OP_FORLOOP || vm_a(l) != vm_a(i) ||
            (int64_t)(t - 1) + 1 + vm_sbx(l) != (int64_t)pc + 1)
            return bad(V, "FORPREP does not exit past its FORLOOP");
    }
    if (op == OP_FORLOOP) {
        int64_t t = (int64_t)pc + 1 + vm_sbx(i);
        Instr f = t >= 1 && t - 1 < pc ? p->code[t - 1] : 0;
        if (t < 1 || t - 1 >= pc || vm_op(f) != OP_FORPREP || vm_a(f) != vm_a(i) ||
            (int64_t)(t - 1) + 1 + vm_sbx(f) != (int64_t)pc + 1)
            return bad(V, "FORLOOP does not jump back after its FORPREP");
    }
    if (op == OP_TFORPREP) {
        int64_t t = (int64_t)pc + 1 + vm_sbx(i);
        if (vm_op(p->code[t]) != OP_TFORCALL || vm_a(p->code[t]) != vm_a(i))
            return bad(V, "TFORPREP does not jump to a TFORCALL of the same loop");
    }
    if (op == OP_TFORCALL) {
        if (!has_next || vm_op(next) != OP_TFORLOOP || vm_a(next) != vm_a(i))
            return bad(V, "TFORCALL not followed by a TFORLOOP of the same loop");
    }
    if (is_open_producer(i) && op != OP_TAILCALL) {
        if (!has_next || !is_open_consumer(next))
            return bad(V, "open result list not used by the next instruction");
    }
    if (is_open_consumer(i)) {
        if (V->flags[pc] & FL_TARGET) return bad(V, "jump to an instruction that uses the top");
        Instr prev = pc > 0 ? p->code[pc - 1] : 0;
        if (pc == 0 || !is_open_producer(prev))
            return bad(V, "top used without a preceding open call or VARARG");
        unsigned first = vm_a(i) + (op == OP_RETURN ? 0 : 1);
        if (vm_a(prev) < first)
            return bad(V, "open result list starts at register %u, below register %u",
                       vm_a(prev), first);
    }
    /* falling through to pc + 1 */
    bool falls = !(op == OP_JMP || op == OP_RETURN || op == OP_RETURN0 || op == OP_RETURN1 ||
                   op == OP_TAILCALL || op == OP_TFORPREP || op == OP_EXTRAARG);
    if (falls && !has_next) return bad(V, "execution falls off the end of the function");
    return true;
}

static bool check_code(Verifier *V) {
    const Proto *p = V->p;
    for (int pc = 0; pc < p->ncode; pc++) {
        Instr i = p->code[pc];
        V->pc = pc;
        if (vm_op(i) >= OP__COUNT) return bad(V, "invalid opcode %u", vm_op(i));
        if (vm_k(i) & ~1u) return bad(V, "reserved flag bits set (0x%02x)", vm_k(i));
        if (!check_operands(V, i)) return false;
        /* the skip of a conditional test lands two instructions further */
        if (is_test(vm_op(i)) && pc + 2 < p->ncode) V->flags[pc + 2] |= FL_TARGET;
    }
    for (int pc = 0; pc < p->ncode; pc++) {
        V->pc = pc;
        if (!check_flow(V, p->code[pc])) return false;
    }
    V->pc = -1;
    return true;
}

/* ======================================================================
 * Table registers of SETLIST
 * ======================================================================
 * SETLIST stores into R[A] without testing its tag (it only ever follows the NEWTABLE of
 * a table constructor), so the verifier proves that R[A] holds a table on every path that
 * reaches a SETLIST. A forward data-flow over two register sets per instruction:
 *   known: registers certainly holding the table of a NEWTABLE (must: intersection at joins);
 *   cap:   registers that may be captured by an open upvalue (may: union at joins); a
 *          closure can rewrite them whenever Lua code runs, so they are never "known".
 * Invariant: known and cap are disjoint at every instruction. Writes are modelled per
 * opcode; where an instruction may write an open-ended range (CALL, VARARG, CONCAT,
 * TFORCALL results) every register from the first one up is forgotten.
 * Other code reaches this frame's registers through open upvalues (closures,
 * debug.setupvalue), which the analysis models, and through debug.setlocal, which it cannot:
 * a function called for the constructor's last values may replace R[A]. So the interpreter's
 * SETLIST (which the JIT steps) also tests R[A]'s tag and raises an error instead of storing
 * into a non-table (tests/cli/setlocal_constructor.lua); the proof still rejects
 * bytecode that could reach a SETLIST without a table by itself. */

typedef struct RegSet {
    uint64_t w[4]; /* VM_MAXREGS <= 256 */
} RegSet;

static void rs_set(RegSet *s, unsigned r) {
    if (r < 256) s->w[r >> 6] |= 1ull << (r & 63);
}
static bool rs_has(const RegSet *s, unsigned r) {
    return r < 256 && (s->w[r >> 6] >> (r & 63)) & 1;
}
/* Forget registers first .. first+count-1. */
static void rs_clear(RegSet *s, uint64_t first, uint64_t count) {
    for (uint64_t r = first; r < first + count && r < 256; r++) s->w[r >> 6] &= ~(1ull << (r & 63));
}
static void rs_clear_from(RegSet *s, uint64_t first) { rs_clear(s, first, 256); }

typedef struct FlowState {
    RegSet known, cap;
} FlowState;

/* State after instruction [i] given the state before it. */
static FlowState flow_transfer(const Proto *p, Instr i, FlowState st) {
    unsigned op = vm_op(i), a = vm_a(i);
    switch ((OpCode)op) {
    case OP_LOADNIL: rs_clear(&st.known, a, (uint64_t)vm_b(i) + 1); break;
    case OP_SELF: rs_clear(&st.known, a, 2); break;
    case OP_CONCAT: case OP_CALL: case OP_VARARG: rs_clear_from(&st.known, a); break;
    case OP_TFORCALL: rs_clear_from(&st.known, (uint64_t)a + 4); break;
    case OP_FORPREP: case OP_FORLOOP: case OP_TFORPREP: rs_clear(&st.known, a, 4); break;
    case OP_TFORLOOP: rs_clear(&st.known, (uint64_t)a + 2, 1); break;
    case OP_CLOSE: rs_clear_from(&st.cap, a); break;
    case OP_CLOSURE: {
        rs_clear(&st.known, a, 1);
        const Proto *np = p->p[vm_bx(i)];
        if (np == NULL || np->upvals == NULL) break; /* rejected when np is verified */
        for (int u = 0; u < np->nupvals && u <= VM_MAXUPVALS; u++)
            if (np->upvals[u].instack) rs_set(&st.cap, np->upvals[u].idx);
        break;
    }
    /* no register written */
    case OP_SETUPVAL: case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD:
    case OP_TBC: case OP_JMP: case OP_EQ: case OP_LT: case OP_LE: case OP_EQK: case OP_EQI:
    case OP_LTI: case OP_LEI: case OP_GTI: case OP_GEI: case OP_TEST: case OP_TAILCALL:
    case OP_RETURN: case OP_RETURN0: case OP_RETURN1: case OP_SETLIST: case OP_EXTRAARG:
        break;
    default: /* every other opcode writes R[A] only */
        rs_clear(&st.known, a, 1);
        break;
    }
    for (int w = 0; w < 4; w++) st.known.w[w] &= ~st.cap.w[w];
    if (op == OP_NEWTABLE && !rs_has(&st.cap, a)) rs_set(&st.known, a);
    return st;
}

/* Successors of the instruction at pc (at most 2); operands already checked. */
static int flow_successors(const Proto *p, int pc, int succ[2]) {
    Instr i = p->code[pc];
    unsigned op = vm_op(i);
    int n = 0;
    switch ((OpCode)op) {
    case OP_JMP: case OP_TFORPREP:
        succ[n++] = pc + 1 + vm_sbx(i);
        break;
    case OP_FORPREP: case OP_FORLOOP: case OP_TFORLOOP:
        succ[n++] = pc + 1;
        succ[n++] = pc + 1 + vm_sbx(i);
        break;
    case OP_RETURN: case OP_RETURN0: case OP_RETURN1: case OP_TAILCALL: case OP_EXTRAARG:
        break;
    case OP_SETLIST:
        succ[n++] = vm_k(i) ? pc + 2 : pc + 1;
        break;
    default:
        succ[n++] = pc + 1;
        if (is_test(op)) succ[n++] = pc + 2;
        break;
    }
    return n;
}

static bool check_tables(Verifier *V) {
    const Proto *p = V->p;
    bool any = false;
    for (int pc = 0; pc < p->ncode && !any; pc++) any = vm_op(p->code[pc]) == OP_SETLIST;
    if (!any) return true;
    size_t n = (size_t)p->ncode;
    FlowState *in = malloc(n * sizeof *in);
    int *work = malloc(n * sizeof *work);
    uint8_t *seen = calloc(n, 2); /* [0, n): visited; [n, 2n): on the work list */
    bool ok = true;
    if (in == NULL || work == NULL || seen == NULL) {
        ok = bad(V, "out of memory while verifying");
        goto done;
    }
    int nwork = 0;
    memset(&in[0], 0, sizeof in[0]);
    seen[0] = seen[n] = 1;
    work[nwork++] = 0;
    while (nwork > 0) {
        int pc = work[--nwork];
        seen[n + (size_t)pc] = 0;
        FlowState out = flow_transfer(p, p->code[pc], in[pc]);
        int succ[2];
        int ns = flow_successors(p, pc, succ);
        for (int s = 0; s < ns; s++) {
            int t = succ[s];
            bool changed = false;
            if (!seen[t]) {
                in[t] = out;
                seen[t] = 1;
                changed = true;
            } else {
                for (int w = 0; w < 4; w++) {
                    uint64_t k = in[t].known.w[w] & out.known.w[w];
                    uint64_t c = in[t].cap.w[w] | out.cap.w[w];
                    if (k != in[t].known.w[w] || c != in[t].cap.w[w]) changed = true;
                    in[t].known.w[w] = k;
                    in[t].cap.w[w] = c;
                }
            }
            if (changed && !seen[n + (size_t)t]) {
                seen[n + (size_t)t] = 1;
                work[nwork++] = t;
            }
        }
    }
    for (int pc = 0; pc < p->ncode && ok; pc++) {
        Instr i = p->code[pc];
        if (vm_op(i) == OP_SETLIST && seen[pc] && !rs_has(&in[pc].known, vm_a(i))) {
            V->pc = pc;
            ok = bad(V, "register %u may not hold the constructor's table", vm_a(i));
        }
    }
    V->pc = -1;
done:
    free(in);
    free(work);
    free(seen);
    return ok;
}

/* ======================================================================
 * Functions
 * ====================================================================== */

static bool check_shape(Verifier *V, const Proto *parent) {
    const Proto *p = V->p;
    if (p->ncode < 1 || p->code == NULL) return bad(V, "no code");
    if (p->maxstack > VM_MAXREGS)
        return bad(V, "maxstack %u above the limit of %d", (unsigned)p->maxstack, VM_MAXREGS);
    if (p->numparams > p->maxstack)
        return bad(V, "%u parameters but maxstack %u", (unsigned)p->numparams,
                   (unsigned)p->maxstack);
    if (p->is_vararg > 1) return bad(V, "bad vararg flag %u", (unsigned)p->is_vararg);
    if (p->nk < 0 || (p->nk > 0 && p->k == NULL)) return bad(V, "bad constant table");
    if (p->np < 0 || (p->np > 0 && p->p == NULL)) return bad(V, "bad function table");
    if (p->nlocvars < 0 || (p->nlocvars > 0 && p->locvars == NULL))
        return bad(V, "bad local variable table");
    if (p->nupvals < 0 || p->nupvals > VM_MAXUPVALS || (p->nupvals > 0 && p->upvals == NULL))
        return bad(V, "bad upvalue count %d", (int)p->nupvals);
    /* The top function of a file may have any number of upvalues (string.dump of a
     * closure): the loader sets the first to _ENV and the others to fresh nil upvalues,
     * which every instruction handles safely. */
    for (int u = 0; u < p->nupvals; u++) {
        const UpvalDesc *d = &p->upvals[u];
        if (d->kind > VERIFY_MAXKIND) return bad(V, "upvalue %d: bad kind %u", u, d->kind);
        if (d->instack > 1) return bad(V, "upvalue %d: bad instack flag %u", u, d->instack);
        if (parent == NULL) continue; /* _ENV of the main function is set by the loader */
        if (d->instack && d->idx >= parent->maxstack)
            return bad(V, "upvalue %d: enclosing register %u out of range (maxstack %u)", u,
                       (unsigned)d->idx, (unsigned)parent->maxstack);
        if (!d->instack && d->idx >= parent->nupvals)
            return bad(V, "upvalue %d: enclosing upvalue %u out of range (%d upvalues)", u,
                       (unsigned)d->idx, (int)parent->nupvals);
    }
    for (int k = 0; k < p->nk; k++) {
        uint32_t tt = p->k[k].tt;
        if (tt == VT_STR && p->k[k].u.s == NULL) return bad(V, "constant %d: missing string", k);
        if (tt != VT_NIL && tt != VT_FALSE && tt != VT_TRUE && tt != VT_INT && tt != VT_FLOAT &&
            tt != VT_STR)
            return bad(V, "constant %d: type %u not allowed", k, (unsigned)tt);
    }
    return true;
}

/* Local variables: valid ranges, and at most maxstack of them active at any pc (debug code
 * finds the i-th active local in register i). */
static bool check_locvars(Verifier *V) {
    const Proto *p = V->p;
    if (p->nlocvars == 0) return true;
    int32_t *delta = calloc((size_t)p->ncode + 1, sizeof *delta);
    if (delta == NULL) return bad(V, "out of memory while verifying");
    bool ok = true;
    for (int l = 0; l < p->nlocvars && ok; l++) {
        const LocVar *lv = &p->locvars[l];
        if (lv->name == NULL)
            ok = bad(V, "local %d: missing name", l);
        else if (lv->startpc < 0 || lv->startpc > lv->endpc || lv->endpc > p->ncode)
            ok = bad(V, "local %d: bad range %d..%d (%d instructions)", l, (int)lv->startpc,
                     (int)lv->endpc, (int)p->ncode);
        else {
            delta[lv->startpc]++;
            delta[lv->endpc]--;
        }
    }
    int64_t active = 0;
    for (int pc = 0; pc < p->ncode && ok; pc++) {
        active += delta[pc];
        if (active > p->maxstack)
            ok = bad(V, "%lld locals active at instruction %d (maxstack %u)", (long long)active,
                     pc, (unsigned)p->maxstack);
    }
    free(delta);
    return ok;
}

static bool verify_function(Verifier *V, const Proto *p, const Proto *parent, int depth) {
    int fnum = V->nfunc++;
    V->p = p;
    V->fnum = fnum;
    V->pc = -1;
    if (p == NULL) return bad(V, "missing function");
    if (depth > VERIFY_MAXDEPTH) return bad(V, "functions nested too deeply");
    if (!check_shape(V, parent)) return false;
    V->flags = calloc((size_t)p->ncode, 1);
    if (V->flags == NULL) return bad(V, "out of memory while verifying");
    bool ok = check_code(V) && check_tables(V) && check_locvars(V);
    free(V->flags);
    V->flags = NULL;
    if (!ok) return false;
    for (int i = 0; i < p->np; i++) {
        if (!verify_function(V, p->p[i], p, depth + 1)) return false;
        V->p = p; /* restore for messages about this function */
        V->fnum = fnum;
    }
    return true;
}

const char *vm_bytecode_verify(const Proto *p, char *why, size_t whysize) {
    Verifier V;
    memset(&V, 0, sizeof V);
    V.why = why;
    V.whysize = whysize;
    V.pc = -1;
    if (verify_function(&V, p, NULL, 0)) return NULL;
    return why != NULL && whysize > 0 ? why : "invalid bytecode";
}
