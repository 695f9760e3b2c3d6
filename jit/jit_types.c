/* jit_types.c: which registers hold an integer, a float or some number before each
 * instruction, so that templates skip the tag guards and tag stores whose outcome is known
 * (jit/README.md, "Known types").
 *
 * A forward data-flow over the bytecode, per function, at compilation. The fact "R[r] is an
 * integer before pc" means: on every path from the function's entry to pc, whether each
 * instruction on it ran its template or was stepped, the tag in R[r]'s slot is VT_INT,
 * provided no Lua code rewrote the frame's registers on the way. Lua code can: a metamethod
 * or C function a step or a call runs, a finalizer, another green thread at a poll, can call
 * debug.setlocal, which reaches any slot of this frame (temporaries too). Compiled code
 * reaches a pc without such code having run only when it falls or jumps from one template
 * to the next; everywhere else (after a step, after a back edge's poll slow path, at a
 * hand-over from the interpreter, at the dispatch after a step: every entry through
 * JitCode.at) it goes through the pc's guarded entry (jit_entry), which tests every fact and
 * steps the instruction when one does not hold (only debug.setlocal makes one fail). So:
 *   - an instruction without a template, a call (CALL, TAILCALL, TFORCALL: C functions may
 *     call Lua and return inline) and CONCAT (__concat) forget everything;
 *   - every other instruction forgets or sets only the registers it writes, with what is
 *     certain whether its template runs or its step does (below, "certain");
 *   - registers captured by any closure of the function are never known: other threads may
 *     write them through the open upvalue at any time (upvalues are shared, vm_value.h);
 *   - at a join a fact holds if it holds on every incoming edge (intersection; an integer on
 *     one edge and a float on the other is "a number").
 * The lattice per register is unknown < number < {integer, float}, and "not reached yet" above
 * all; each register's value only goes down, so the round-robin iteration ends. */
#include "jit_internal.h"

#include <stdlib.h>
#include <string.h>

#include "vm_bytecode.h"

/* Above this many (pc, register) cells the analysis is skipped (nothing is known): a few MB. */
#define KT_MAX_CELLS (4u << 20)

static uint8_t kt_meet(uint8_t x, uint8_t y) {
    if (x == y) return x;
    return (x != KT_NONE && y != KT_NONE) ? KT_NUM : KT_NONE;
}

/* The type a number constant has. */
static uint8_t kt_const(const Value *v) { return v->tt == VT_INT ? KT_INT : v->tt == VT_FLOAT ? KT_FLT : KT_NONE; }

/* The result of + - * % on operands of known types [b] and [c]: integer when both are,
 * float when either is, else a number of either kind. */
static uint8_t kt_arith(uint8_t b, uint8_t c) {
    if (b == KT_INT && c == KT_INT) return KT_INT;
    if (b == KT_FLT || c == KT_FLT) return KT_FLT;
    return KT_NUM;
}

typedef struct Flow {
    Comp *c;
    int nr;
    uint8_t *in;    /* n x nr: facts before each pc */
    bool *seen;     /* n: reached */
    const bool *cap;/* nr: captured by some closure */
    bool changed;
} Flow;

/* Merge state [s] into the state before [to]. */
static void flow_to(Flow *f, int to, const uint8_t *s) {
    if (to < 0 || to >= f->c->n) return;
    uint8_t *d = f->in + (size_t)to * (size_t)f->nr;
    if (!f->seen[to]) {
        f->seen[to] = true;
        for (int r = 0; r < f->nr; r++) d[r] = f->cap[r] ? KT_NONE : s[r];
        f->changed = true;
        return;
    }
    for (int r = 0; r < f->nr; r++) {
        uint8_t m = kt_meet(d[r], s[r]);
        if (m != d[r]) {
            d[r] = m;
            f->changed = true;
        }
    }
}

static void set_reg(const Flow *f, uint8_t *s, int r, uint8_t t) {
    if (r >= 0 && r < f->nr) s[r] = t;
}

/* The state after the instruction at [pc] (state [s], modified in place) flowed to its
 * successors. */
static void flow_instr(Flow *f, int pc, uint8_t *s) {
    Comp *c = f->c;
    const Proto *p = c->p;
    Instr i = p->code[pc];
    unsigned op = vm_op(i);
    int a = (int)vm_a(i), nr = f->nr;
    if (!c->tmpl[pc] || op == OP_CALL || op == OP_TAILCALL || op == OP_TFORCALL || op == OP_CONCAT) {
        /* stepped or may run Lua code: nothing known after; every successor a step can
         * have (the next pc, the jump of a test, a loop's edges) */
        memset(s, KT_NONE, (size_t)nr);
        flow_to(f, pc + 1, s);
        if (op == OP_JMP || op == OP_FORPREP || op == OP_FORLOOP || op == OP_TFORPREP || op == OP_TFORLOOP)
            flow_to(f, pc + 1 + vm_sbx(i), s);
        if (op >= OP_EQ && op <= OP_TESTSET && pc + 1 < c->n && vm_op(p->code[pc + 1]) == OP_JMP) {
            flow_to(f, pc + 2, s);
            flow_to(f, pc + 2 + vm_sbx(p->code[pc + 1]), s);
        }
        return;
    }
    int b = (int)vm_b(i), cc = (int)vm_c(i);
    uint8_t tb = b < nr ? s[b] : KT_NONE, tc = cc < nr ? s[cc] : KT_NONE;
    /* A type is learnt only when it is certain, not from a guard that passed: a guard that
     * fails steps the instruction, which may run a metamethod and leave anything in R[A]
     * (a table from __add), and that step path joins the fast path at the next pc. So an
     * arithmetic result is known when its operands were known to be numbers (no guard can
     * fail, the template computes it), never otherwise. */
    switch ((OpCode)op) {
    case OP_MOVE: set_reg(f, s, a, tb); break;
    case OP_LOADI: set_reg(f, s, a, KT_INT); break;
    case OP_LOADF: set_reg(f, s, a, KT_FLT); break;
    case OP_LOADK: set_reg(f, s, a, kt_const(&p->k[vm_bx(i)])); break;
    case OP_LOADNIL:
        for (int r = a; r <= a + b; r++) set_reg(f, s, r, KT_NONE);
        break;
    /* + - * and % (whose fast path is for integers: floats, a zero or -1 divisor are stepped,
     * and give a float, an error, an integer) */
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_MOD:
        set_reg(f, s, a, tb != KT_NONE && tc != KT_NONE ? kt_arith(tb, tc) : KT_NONE);
        break;
    case OP_ADDK: case OP_SUBK: case OP_MULK: case OP_MODK:
        set_reg(f, s, a, tb != KT_NONE ? kt_arith(tb, kt_const(&p->k[cc])) : KT_NONE);
        break;
    case OP_ADDI: set_reg(f, s, a, tb != KT_NONE ? kt_arith(tb, KT_INT) : KT_NONE); break;
    case OP_DIV: set_reg(f, s, a, tb != KT_NONE && tc != KT_NONE ? KT_FLT : KT_NONE); break;
    case OP_DIVK: set_reg(f, s, a, tb != KT_NONE ? KT_FLT : KT_NONE); break;
    /* bitwise: integers give an integer; a float is converted by the step, or an error */
    case OP_BAND: case OP_BOR: case OP_BXOR:
        set_reg(f, s, a, tb != KT_NONE && tc != KT_NONE ? KT_INT : KT_NONE);
        break;
    case OP_BANDK: case OP_BORK: case OP_BXORK: set_reg(f, s, a, tb != KT_NONE ? KT_INT : KT_NONE); break;
    case OP_UNM: set_reg(f, s, a, tb); break;
    case OP_SELF:
        set_reg(f, s, a, KT_NONE);
        set_reg(f, s, a + 1, KT_NONE);
        break;
    case OP_FORPREP: {
        /* the loop runs with integers when init and step are integers, else with floats
         * (vm_forprep writes all four); a skipped loop leaves them as they were */
        uint8_t t = s[a] == KT_INT && s[a + 2] == KT_INT ? KT_INT
                    : (s[a] == KT_FLT || s[a + 2] == KT_FLT) ? KT_FLT : KT_NUM;
        for (int r = a; r < a + 4; r++) set_reg(f, s, r, t);
        flow_to(f, pc + 1, s);
        for (int r = a; r < a + 4; r++) set_reg(f, s, r, KT_NONE);
        flow_to(f, pc + 1 + vm_sbx(i), s);
        return;
    }
    case OP_FORLOOP: {
        /* the template runs integer loops and steps float ones (vm_floatforloop writes a
         * float control variable); R[A] to R[A+2] are not written by it, R[A+3] when it
         * loops: an integer if the step is known to be one, a float if a float */
        uint8_t t = s[a + 2];
        flow_to(f, pc + 1, s);
        set_reg(f, s, a + 3, t);
        flow_to(f, pc + 1 + vm_sbx(i), s);
        return;
    }
    case OP_TFORLOOP:
        set_reg(f, s, a + 2, KT_NONE);
        flow_to(f, pc + 1, s);
        flow_to(f, pc + 1 + vm_sbx(i), s);
        return;
    case OP_JMP: flow_to(f, pc + 1 + vm_sbx(i), s); return;
    case OP_LT: case OP_LE: case OP_LTI: case OP_LEI: case OP_GTI: case OP_GEI:
    case OP_EQ: case OP_EQK: case OP_EQI: case OP_TEST: {
        int to = pc + 2 + vm_sbx(p->code[pc + 1]); /* tpl_cond_ok: a JMP follows */
        flow_to(f, pc + 2, s);
        flow_to(f, to, s);
        return;
    }
    case OP_TESTSET: {
        int to = pc + 2 + vm_sbx(p->code[pc + 1]);
        flow_to(f, pc + 2, s);
        set_reg(f, s, a, tb); /* the JMP is taken with R[A] := R[B] */
        flow_to(f, to, s);
        return;
    }
    case OP_RETURN: case OP_RETURN0: case OP_RETURN1: return;
    /* no register written */
    case OP_SETUPVAL: case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD: break;
    /* R[A] written with a value of any type: loads, tables, closures, NOT, LEN (__len) */
    case OP_LEN: case OP_GETUPVAL: case OP_GETTABUP: case OP_GETTABLE: case OP_GETI: case OP_GETFIELD: case OP_NEWTABLE:
    case OP_CLOSURE: case OP_NOT: case OP_LOADFALSE: case OP_LOADTRUE:
        set_reg(f, s, a, KT_NONE);
        break;
    default: /* anything not modelled above: nothing known after */
        memset(s, KT_NONE, (size_t)nr);
        break;
    }
    flow_to(f, pc + 1, s);
}

void jit_types_analyse(Comp *c) {
    const Proto *p = c->p;
    int nr = p->maxstack + 1;
    c->kt = NULL;
    c->nkt = nr;
    if ((size_t)c->n * (size_t)nr > KT_MAX_CELLS) return;
    Flow f = {c, nr, calloc((size_t)c->n * (size_t)nr, 1), calloc((size_t)c->n, sizeof(bool)),
              calloc((size_t)nr, sizeof(bool)), true};
    uint8_t *s = malloc((size_t)nr);
    bool *cap = (bool *)f.cap;
    if (f.in == NULL || f.seen == NULL || cap == NULL || s == NULL) goto out;
    /* registers an open upvalue may point at */
    for (int pc = 0; pc < c->n; pc++) {
        Instr i = p->code[pc];
        if (vm_op(i) != OP_CLOSURE) continue;
        const Proto *np = p->p[vm_bx(i)];
        for (int u = 0; u < np->nupvals; u++)
            if (np->upvals[u].instack && np->upvals[u].idx < nr) cap[np->upvals[u].idx] = true;
    }
    memset(s, KT_NONE, (size_t)nr);
    flow_to(&f, 0, s); /* the entry: nothing known about the arguments */
    while (f.changed) {
        f.changed = false;
        for (int pc = 0; pc < c->n; pc++) {
            if (!f.seen[pc]) continue;
            memcpy(s, f.in + (size_t)pc * (size_t)nr, (size_t)nr);
            flow_instr(&f, pc, s);
        }
    }
    /* Unreached pcs: nothing known (the code is there, nothing enters it typed). Calls and
     * returns: their templates use no fact and nothing is known after them, so they need no
     * guarded entry, and must have none: they are never stepped (jit_emit_step). */
    for (int pc = 0; pc < c->n; pc++) {
        unsigned op = vm_op(p->code[pc]);
        if (!f.seen[pc] || op == OP_CALL || op == OP_TAILCALL || op == OP_RETURN || op == OP_RETURN0 ||
            op == OP_RETURN1)
            memset(f.in + (size_t)pc * (size_t)nr, KT_NONE, (size_t)nr);
    }
    c->kt = f.in;
    f.in = NULL;
out:
    free(f.in);
    free(f.seen);
    free(cap);
    free(s);
}

bool jit_kt_any(const Comp *c, int pc) {
    if (c->kt == NULL || pc >= c->n) return false;
    const uint8_t *k = c->kt + (size_t)pc * (size_t)c->nkt;
    for (int r = 0; r < c->nkt; r++)
        if (k[r] != KT_NONE) return true;
    return false;
}

int jit_entry(Comp *c, int pc) {
    if (pc < c->n && c->guard != NULL && c->guard[pc] >= 0) return c->guard[pc];
    return L(c, pc);
}

/* -Xstats: guarded entries that failed (incremented by compiled code without a lock: other
 * threads' increments may be lost, it is a count for tests and the curious). */
static uint64_t guard_fails;

void jit_types_print_stats(FILE *out) {
    fprintf(out, "[stats] jit: guarded entries failed %llu\n",
            (unsigned long long)__atomic_load_n(&guard_fails, __ATOMIC_RELAXED));
}

/* The guarded entry of [pc]: every fact tested, then the template; a fact that does not hold
 * steps the instruction (counted, as its template would have counted it), which goes on at
 * the next pc's guarded entry. Numbers: VT_INT and VT_FLOAT are consecutive tags. */
void jit_emit_guards(Comp *c) {
    if (c->guard == NULL) return;
    Asm *a = &c->a;
    _Static_assert(VT_FLOAT == VT_INT + 1, "the number tags are consecutive");
    for (int pc = 0; pc < c->n; pc++) {
        if (c->guard[pc] < 0) continue;
        int fail = jit_new_label(a);
        jit_bind(a, c->guard[pc]);
        const uint8_t *k = c->kt + (size_t)pc * (size_t)c->nkt;
        for (int r = 0; r < c->nkt; r++) {
            if (k[r] == KT_NONE) continue;
            if (k[r] == KT_NUM) {
                INS2(a, MOV, R(EAX), TAG(r));
                INS2(a, SUB, R(EAX), I(VT_INT));
                INS2(a, CMP, R(EAX), I(1));
                JMP(a, JNBE, fail);
            } else {
                INS2(a, CMP, TAG(r), I(k[r] == KT_INT ? VT_INT : VT_FLOAT));
                JMP(a, JNZ, fail);
            }
        }
        JMP(a, JMP, L(c, pc));
        jit_bind(a, fail);
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&guard_fails);
        INS2(a, ADD, M(RAX, 0, 8), I(1));
        jit_emit_count(c);
        jit_emit_step(c, pc, false);
    }
}

void jit_dump_known(const Comp *c, int pc) {
    if (!jit_kt_any(c, pc)) return;
    static const char *const names[] = {"", "int", "float", "number"};
    const uint8_t *k = c->kt + (size_t)pc * (size_t)c->nkt;
    fprintf(stderr, "      ; known:");
    for (int r = 0; r < c->nkt; r++)
        if (k[r] != KT_NONE) fprintf(stderr, " R%d %s", r, names[k[r]]);
    fprintf(stderr, "\n");
}
