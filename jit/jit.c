/* jit.c: the x86-64 template JIT (see jit/README.md for the design).
 *
 * A Proto is compiled whole: one template per bytecode instruction, laid out in bytecode
 * order, each starting at a label of its pc. An instruction without a template compiles to a
 * step: the interpreter runs it (vm_jit_step) and compiled code goes on. A template's type
 * guards jump to an out-of-line step of the instruction's own pc, so the interpreter executes
 * the whole instruction (templates write nothing before their guards have passed). Calls and
 * returns between compiled frames switch frames without leaving compiled code. Instructions
 * are assembled by Zydis's encoder; branches are always emitted in their rel32 form and
 * patched once every label is placed.
 *
 * Register convention inside compiled code (System V callee-saved, so calls to C helpers
 * keep them): rbx = base (the frame's R[0]), r12 = ci, r13 = S, r15 = the LClosure, r14 =
 * the profiling stream while profiling. rax, rcx, rdx, rsi, rdi, r8, r9, xmm0, xmm1 are
 * scratch. */
#include "jit_api.h"

#include <Zydis/Zydis.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_do.h"
#include "vm_meta.h"
#include "vm_opcodes.h"
#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_string.h"
#include "vm_table.h"
#include "vm_thread.h"

static JitOptions jit_opts;

/* Profiling under the JIT (vm_main.c says which analyses): compiled code emits the events
 * the instrumented interpreter would (jit/README.md), calls made through C helpers have
 * theirs from the VM (vm_prof_frame_start and friends).
 * The thread's stream (vm_prof_tl) is kept in r14, read from thread-local storage (a %fs
 * offset, the same for every thread) at entry and after every call into C, since a green
 * thread may come back on another carrier. */
static bool jit_prof;         /* profiling: compiled code emits events */
static int jit_prof_kind;     /* VM_PS_*: which inline enqueue, if any */
static int64_t jit_tls_stream; /* &vm_prof_tl - the thread pointer */

void jit_configure(const JitOptions *o) {
    jit_opts = *o;
    vm_jit_compiler = jit_compile;
    vm_jit_enabled = o->on;
    jit_prof = o->on && vm_prof_instrumented;
    if (jit_prof) {
        jit_prof_kind = vm_prof_kind();
        jit_tls_stream = (int64_t)((char *)&vm_prof_tl - (char *)__builtin_thread_pointer());
    }
}

/* ======================================================================
 * Code memory
 * ====================================================================== */

void *jit_mem_publish(const void *code, size_t n, size_t *mapped) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (n + page - 1) / page * page;
    if (size == 0) size = page;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    memcpy(m, code, n);
    /* From here on the pages are never writable again: a function's code is immutable
     * once published (other threads may be running it). */
    if (mprotect(m, size, PROT_READ | PROT_EXEC) != 0) {
        munmap(m, size);
        return NULL;
    }
    __builtin___clear_cache((char *)m, (char *)m + n);
    *mapped = size;
    return m;
}

void jit_disasm(FILE *out, const void *code, size_t n, const char *indent) {
    const uint8_t *p = code;
    size_t off = 0;
    while (off < n) {
        ZydisDisassembledInstruction di;
        if (!ZYAN_SUCCESS(ZydisDisassembleIntel(ZYDIS_MACHINE_MODE_LONG_64, (ZyanU64)(uintptr_t)(p + off),
                                                p + off, n - off, &di))) {
            fprintf(out, "%s%p  (undecodable byte %02x)\n", indent, (const void *)(p + off), p[off]);
            off++;
            continue;
        }
        fprintf(out, "%s%p  %s\n", indent, (const void *)(p + off), di.text);
        off += di.info.length;
    }
}

/* ======================================================================
 * Assembler: Zydis requests, labels and rel32 fixups
 * ====================================================================== */

typedef struct Fixup {
    size_t pos;   /* offset of the rel32 field; the instruction ends at pos + 4 */
    int label;
} Fixup;

typedef struct Asm {
    uint8_t *buf;
    size_t len, cap;
    long *label;      /* offset of each label, -1 while unbound */
    int nlabel, caplabel;
    Fixup *fix;
    int nfix, capfix;
    bool failed;      /* an instruction could not be encoded, or memory ran out */
    const char *why;  /* what failed first, for -Xdump=jit */
    int whymn;        /* the mnemonic that could not be encoded */
} Asm;

typedef ZydisEncoderOperand Op;

static Op R(ZydisRegister r) {
    Op o;
    memset(&o, 0, sizeof o);
    o.type = ZYDIS_OPERAND_TYPE_REGISTER;
    o.reg.value = r;
    return o;
}

static Op M(ZydisRegister base, int64_t disp, unsigned size) {
    Op o;
    memset(&o, 0, sizeof o);
    o.type = ZYDIS_OPERAND_TYPE_MEMORY;
    o.mem.base = base;
    o.mem.displacement = disp;
    o.mem.size = (ZyanU16)size;
    return o;
}

/* [base + index*scale + disp] */
static Op MX(ZydisRegister base, ZydisRegister index, unsigned scale, int64_t disp, unsigned size) {
    Op o = M(base, disp, size);
    o.mem.index = index;
    o.mem.scale = (ZyanU8)scale;
    return o;
}

static Op I(int64_t v) {
    Op o;
    memset(&o, 0, sizeof o);
    o.type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
    o.imm.s = v;
    return o;
}

static void reserve(Asm *a, size_t n) {
    if (a->len + n <= a->cap) return;
    size_t cap = a->cap ? a->cap * 2 : 4096;
    while (cap < a->len + n) cap *= 2;
    uint8_t *nb = realloc(a->buf, cap);
    if (nb == NULL) {
        a->failed = true;
        a->len = 0; /* keep going harmlessly; the result is thrown away */
        return;
    }
    a->buf = nb;
    a->cap = cap;
}

static void encode(Asm *a, ZydisEncoderRequest *r) {
    reserve(a, ZYDIS_MAX_INSTRUCTION_LENGTH);
    if (a->failed) return;
    ZyanUSize n = ZYDIS_MAX_INSTRUCTION_LENGTH;
    r->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(r, a->buf + a->len, &n))) {
        if (!a->failed) {
            a->why = "an instruction could not be encoded";
            a->whymn = (int)r->mnemonic;
        }
        a->failed = true;
        return;
    }
    a->len += n;
}

static void ins(Asm *a, ZydisMnemonic mn, int nops, Op o0, Op o1) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.operand_count = (ZyanU8)nops;
    r.operands[0] = o0;
    r.operands[1] = o1;
    encode(a, &r);
}
static void ins3(Asm *a, ZydisMnemonic mn, Op o0, Op o1, Op o2) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.operand_count = 3;
    r.operands[0] = o0;
    r.operands[1] = o1;
    r.operands[2] = o2;
    encode(a, &r);
}
#define INS2(a, mn, x, y) ins((a), ZYDIS_MNEMONIC_##mn, 2, (x), (y))
#define INS1(a, mn, x) ins((a), ZYDIS_MNEMONIC_##mn, 1, (x), (x))
#define INS0(a, mn) ins((a), ZYDIS_MNEMONIC_##mn, 0, I(0), I(0))

static int new_label(Asm *a) {
    if (a->nlabel == a->caplabel) {
        int cap = a->caplabel ? a->caplabel * 2 : 256;
        long *nl = realloc(a->label, (size_t)cap * sizeof *nl);
        if (nl == NULL) {
            a->failed = true;
            return 0;
        }
        a->label = nl;
        a->caplabel = cap;
    }
    a->label[a->nlabel] = -1;
    return a->nlabel++;
}

static void bind(Asm *a, int l) { a->label[l] = (long)a->len; }

/* A jump (JMP or a Jcc) to label [l], always rel32 so that it can be patched. */
static void jump(Asm *a, ZydisMnemonic mn, int l) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
    r.branch_width = ZYDIS_BRANCH_WIDTH_32;
    r.operand_count = 1;
    r.operands[0] = I(0);
    encode(a, &r);
    if (a->failed) return;
    if (a->nfix == a->capfix) {
        int cap = a->capfix ? a->capfix * 2 : 256;
        Fixup *nf = realloc(a->fix, (size_t)cap * sizeof *nf);
        if (nf == NULL) {
            a->failed = true;
            return;
        }
        a->fix = nf;
        a->capfix = cap;
    }
    a->fix[a->nfix++] = (Fixup){a->len - 4, l};
}
#define JMP(a, cc, l) jump((a), ZYDIS_MNEMONIC_##cc, (l))

static void patch(Asm *a) {
    for (int f = 0; f < a->nfix && !a->failed; f++) {
        long target = a->label[a->fix[f].label];
        if (target < 0) {
            a->why = "a jump to a label never placed";
            a->failed = true; /* a jump to a label never placed: a compiler bug, not run */
            return;
        }
        int32_t rel = (int32_t)(target - (long)(a->fix[f].pos + 4));
        memcpy(a->buf + a->fix[f].pos, &rel, 4);
    }
}

/* ======================================================================
 * The compiler
 * ====================================================================== */

#define RBASE ZYDIS_REGISTER_RBX
#define RCI ZYDIS_REGISTER_R12
#define RS ZYDIS_REGISTER_R13
#define RCL ZYDIS_REGISTER_R15
#define RPS ZYDIS_REGISTER_R14 /* the profiling stream, while profiling (jit_prof) */
#define RAX ZYDIS_REGISTER_RAX
#define RCX ZYDIS_REGISTER_RCX
#define RDI ZYDIS_REGISTER_RDI
#define RSI ZYDIS_REGISTER_RSI
#define RDX ZYDIS_REGISTER_RDX
#define R8 ZYDIS_REGISTER_R8
#define R9 ZYDIS_REGISTER_R9
#define EAX ZYDIS_REGISTER_EAX
#define XMM0 ZYDIS_REGISTER_XMM0
#define XMM1 ZYDIS_REGISTER_XMM1

/* R[x]'s payload and tag as memory operands. */
#define VAL(x) M(RBASE, 16 * (int64_t)(x), 8)
#define TAG(x) M(RBASE, 16 * (int64_t)(x) + (int64_t)offsetof(Value, tt), 4)
#define WHOLE(x) M(RBASE, 16 * (int64_t)(x), 16)

typedef struct Comp {
    Asm a;
    Proto *p;
    int n;             /* p->ncode */
    int step0;         /* label of the out-of-line step of pc j, where its template's guards
                          go: step0 + j (placed only if used) */
    bool *stepused;
    int epilogue;      /* label: store rax in ci->savedpc, restore, return rax */
    int sw;            /* label: switch to the frame S->ci and jump to rax (calls, returns) */
    int resume;        /* label: give S->ci back to the interpreter at its savedpc */
    int fresh;         /* label: a CIST_FRESH frame returned; restore, return NULL */
    int dispatch;      /* label: poll, then jump to the code of the pc in rax (after a step) */
    int callentry;     /* label: where compiled calls enter (EV_CALL while profiling, then pc 0) */
    struct Slow { int slow, back, arg; uintptr_t fn; uint64_t imm; } *slow;
                       /* out-of-line calls of profiling slow paths (emit_slow_stubs) */
    int nslow, capslow;
    uintptr_t pathbias; /* path profiling: the function's action table (vm_pathprof.h), or
                          VM_PATH_OFF: no path code */
    uint32_t fid;      /* the function's id in profiles (0 when not profiling) */
    struct Edge { int stub, from, o, to; } *edge; /* out-of-line path actions on branch edges */
    int nedge, capedge;
    const void **at;   /* JitCode.at being built: filled once the code is placed */
    bool *tmpl;        /* per pc: has a template (else it is stepped), for -Xdump=jit */
    int *pollslow;     /* per back-edge target: out-of-line poll slow path label, or -1 */
    int *backedge;     /* per back-edge target: out-of-line poll-then-jump label, or -1 (for
                          conditional branches that go backwards) */
    size_t templates_end;
} Comp;

static int L(Comp *c, int pc) { return pc; } /* the label of pc's template is pc */

/* The out-of-line step of [pc], where its template's failed guards go. */
static int STEP(Comp *c, int pc) {
    c->stepused[pc] = true;
    return c->step0 + pc;
}

static void load_imm64(Comp *c, ZydisRegister r, uint64_t v) { INS2(&c->a, MOV, R(r), I((int64_t)v)); }

/* r14 = this thread's profiling stream (vm_prof_tl), while profiling. */
static void load_stream(Comp *c) {
    if (!jit_prof) return;
    ZydisEncoderRequest r; /* mov r14, fs:[offset] */
    memset(&r, 0, sizeof r);
    r.mnemonic = ZYDIS_MNEMONIC_MOV;
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    r.operand_count = 2;
    r.operands[0] = R(RPS);
    r.operands[1] = M(ZYDIS_REGISTER_NONE, jit_tls_stream, 8);
    encode(&c->a, &r);
}

/* Re-derive base after a call that may have moved the stack (the interpreter's Protect). */
static void reload_base(Comp *c) {
    INS2(&c->a, MOV, R(RBASE), M(RCI, offsetof(CallInfo, func), 8));
    INS2(&c->a, ADD, R(RBASE), I(16));
    load_stream(c); /* the call may have moved this green thread to another carrier */
}

/* Back-edge safepoint: the interpreter's POLL, one load and compare-and-branch; the slow
 * path (out of line) stores savedpc and calls vm_poll_slow, then continues at [target]. */
static void emit_reserve(Comp *c);
static void poll_then_jump(Comp *c, int target) {
    emit_reserve(c); /* a back edge: room for the loop body's heap accesses */
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_poll_word);
    INS2(&c->a, CMP, M(RAX, 0, 4), I(0));
    if (c->pollslow[target] < 0) c->pollslow[target] = new_label(&c->a);
    JMP(&c->a, JNZ, c->pollslow[target]);
    JMP(&c->a, JMP, L(c, target));
}

/* The label a template jumps to for pc [to]: a backward jump is a loop back edge and goes
 * through a poll, so that no loop runs in compiled code without a safepoint. */
static int edge_label(Comp *c, int from, unsigned o, int label);

static int target_label(Comp *c, int from, int to) {
    int l;
    if (to > from) {
        l = L(c, to);
    } else {
        if (c->backedge[to] < 0) c->backedge[to] = new_label(&c->a);
        if (c->pollslow[to] < 0) c->pollslow[to] = new_label(&c->a);
        l = c->backedge[to];
    }
    /* The Ball-Larus outcome of the edge: a test's is 1 when it takes its JMP, 0 when it skips
     * it (has_template leaves out tests whose JMP goes to the next instruction, where the two
     * would be one target); a JMP's is 1. */
    unsigned op = vm_op(c->p->code[from]);
    unsigned o = op >= OP_EQ && op <= OP_TESTSET ? to != from + 2 : 1;
    return edge_label(c, from, o, l);
}

/* An operand of an arithmetic template: a register or a numeric constant. */
typedef struct Src {
    int reg;          /* >= 0: R[reg]; -1: constant */
    bool isint;       /* constant: integer (else float) */
    int64_t i;
    double f;
} Src;

static Src src_reg(int r) { return (Src){r, false, 0, 0}; }
static Src src_const(const Value *v) {
    Src s = {-1, v->tt == VT_INT, 0, 0};
    if (s.isint) s.i = v->u.i;
    else s.f = v->u.n;
    return s;
}
static Src src_int(int64_t i) { return (Src){-1, true, i, 0}; }

/* xmm := the operand as a double; a non-number register is stepped at [pc]. */
static void load_num(Comp *c, ZydisRegister xmm, Src s, int pc) {
    Asm *a = &c->a;
    if (s.reg < 0) {
        double d = s.isint ? (double)s.i : s.f;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        load_imm64(c, RAX, bits);
        INS2(a, MOVQ, R(xmm), R(RAX));
        return;
    }
    int notflt = new_label(a), done = new_label(a);
    INS2(a, CMP, TAG(s.reg), I(VT_FLOAT));
    JMP(a, JNZ, notflt);
    INS2(a, MOVSD, R(xmm), VAL(s.reg));
    JMP(a, JMP, done);
    bind(a, notflt);
    INS2(a, CMP, TAG(s.reg), I(VT_INT));
    JMP(a, JNZ, STEP(c, pc));
    INS2(a, PXOR, R(xmm), R(xmm)); /* cvtsi2sd writes only the low half: break the dependency */
    INS2(a, CVTSI2SD, R(xmm), VAL(s.reg));
    bind(a, done);
}

static bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* rax := rax OP operand (integer). */
static void int_op(Comp *c, ZydisMnemonic mn, Src s) {
    if (s.reg >= 0)
        ins(&c->a, mn, 2, R(RAX), VAL(s.reg));
    else if (fits32(s.i) && mn == ZYDIS_MNEMONIC_IMUL)
        ins3(&c->a, mn, R(RAX), R(RAX), I(s.i)); /* imul has no two-operand immediate form */
    else if (fits32(s.i))
        ins(&c->a, mn, 2, R(RAX), I(s.i));
    else {
        load_imm64(c, RCX, (uint64_t)s.i);
        ins(&c->a, mn, 2, R(RAX), R(RCX));
    }
}

/* R[a] := b OP c with the interpreter's number fast paths: int OP int (wrapping) when
 * [imn] is given, else (or for any mix with a float) double OP double; anything else is stepped
 * to the interpreter (string coercion, metamethods, errors). */
static void arith(Comp *c, int pc, int ra, Src b, Src cs, ZydisMnemonic imn, ZydisMnemonic fmn) {
    Asm *a = &c->a;
    int flt = new_label(a), done = new_label(a);
    bool intpath = imn != ZYDIS_MNEMONIC_INVALID && (cs.reg >= 0 || cs.isint);
    if (intpath) {
        INS2(a, CMP, TAG(b.reg), I(VT_INT));
        JMP(a, JNZ, flt);
        if (cs.reg >= 0) {
            INS2(a, CMP, TAG(cs.reg), I(VT_INT));
            JMP(a, JNZ, flt);
        }
        INS2(a, MOV, R(RAX), VAL(b.reg));
        int_op(c, imn, cs);
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, TAG(ra), I(VT_INT));
        JMP(a, JMP, done);
    }
    bind(a, flt);
    if (fmn == ZYDIS_MNEMONIC_INVALID) {
        JMP(a, JMP, STEP(c, pc));
    } else {
        load_num(c, XMM0, b, pc);
        load_num(c, XMM1, cs, pc);
        ins(a, fmn, 2, R(XMM0), R(XMM1));
        INS2(a, MOVSD, VAL(ra), R(XMM0));
        INS2(a, MOV, TAG(ra), I(VT_FLOAT));
    }
    bind(a, done);
}

/* The two successors of a conditional test at [pc] (always followed by its JMP): when the
 * condition equals k the JMP is taken, else it is skipped. */
static void cond_targets(Comp *c, int pc, int *jmp_to, int *skip_to) {
    Instr j = c->p->code[pc + 1];
    *jmp_to = pc + 2 + vm_sbx(j);
    *skip_to = pc + 2;
}

/* Branch on flags: [cc_true] jumps when the condition holds. */
static void cond_branch(Comp *c, int pc, Instr i, ZydisMnemonic cc_true) {
    int t, f;
    cond_targets(c, pc, &t, &f);
    int x = vm_k(i) ? t : f, y = vm_k(i) ? f : t;
    jump(&c->a, cc_true, target_label(c, pc, x));
    JMP(&c->a, JMP, target_label(c, pc, y));
}

/* The successor labels of a test, as (where to go when the condition holds, when not). */
static void cond_succ(Comp *c, int pc, Instr i, int *when_true, int *when_false) {
    int t, f;
    cond_targets(c, pc, &t, &f);
    *when_true = vm_k(i) ? t : f;
    *when_false = vm_k(i) ? f : t;
}

/* Which instructions have templates. A test (EQ .. TESTSET) is templated only together
 * with its JMP, which it consumes; a JMP with a backward target polls. */
static bool has_template(const Proto *p, int pc) {
    Instr i = p->code[pc];
    switch (vm_op(i)) {
    case OP_MOVE: case OP_LOADK: case OP_LOADI: case OP_LOADF: case OP_LOADNIL:
    case OP_LOADFALSE: case OP_LOADTRUE: case OP_GETUPVAL: case OP_SETUPVAL:
    case OP_ADDI: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
    case OP_BAND: case OP_BOR: case OP_BXOR: case OP_UNM: case OP_NOT:
    case OP_JMP: case OP_LT: case OP_LE: case OP_EQ: case OP_EQI: case OP_LTI: case OP_LEI:
    case OP_GTI: case OP_GEI: case OP_TEST: case OP_TESTSET: case OP_FORPREP: case OP_FORLOOP:
    case OP_CALL: case OP_TAILCALL: case OP_RETURN: case OP_RETURN0: case OP_RETURN1:
        return true;
    case OP_ADDK: case OP_SUBK: case OP_MULK: case OP_DIVK: case OP_BANDK: case OP_BORK:
    case OP_BXORK: {
        uint32_t tt = p->k[vm_c(i)].tt;
        if (tt == VT_INT) return true;
        return tt == VT_FLOAT && vm_op(i) != OP_BANDK && vm_op(i) != OP_BORK && vm_op(i) != OP_BXORK;
    }
    case OP_MOD: case OP_LEN: case OP_NEWTABLE:
        return true;
    case OP_MODK: { /* an integer constant other than 0 and -1 (errors, overflow: the interpreter) */
        const Value *kc = &p->k[vm_c(i)];
        return kc->tt == VT_INT && kc->u.i != 0 && kc->u.i != -1;
    }
    case OP_EQK: {
        uint32_t tt = p->k[vm_b(i)].tt;
        return tt <= VT_FLOAT; /* nil, booleans, numbers; strings compare by contents */
    }
    case OP_GETTABLE: case OP_SETTABLE: case OP_GETFIELD: case OP_GETTABUP: case OP_SETFIELD:
    case OP_SETTABUP:
        return true;
    case OP_GETI:
        return vm_c(i) >= 1; /* key 0 never is in the array part */
    case OP_SETI:
        return vm_b(i) >= 1;
    default:
        return false;
    }
}

/* ---- calls and returns between compiled frames ---------------------------------------- */

/* Where a frame of [p] continues at [pc] in compiled code: its label's address (a template,
 * or a step through the interpreter), compiling [p] first if nobody
 * has; 1 if [p] cannot be compiled (the interpreter runs it). */
static uintptr_t code_at(Proto *p, const Instr *pc) {
    const JitCode *jc = __atomic_load_n((JitCode *const *)&p->jit, __ATOMIC_ACQUIRE);
    if (jc == NULL) jc = jit_compile(p);
    if (jc->at == NULL) return 1;
    return (uintptr_t)jc->at[pc - p->code];
}

/* A Lua frame [nci] just set up by a call (S->ci): its start's events while profiling, as
 * the interpreter's startfunc emits them, and where its code starts (code_at). */
static uintptr_t enter_frame(State *S, CallInfo *nci) {
    if (jit_prof) vm_prof_frame_start(S, nci);
    return code_at(nci->func->u.lf->p, nci->savedpc);
}

/* OP_CALL from compiled code, ci->savedpc and S->top already set as the interpreter sets
 * them. A Lua callee gets its frame exactly as in the interpreter's L_CALL (inline for fixed
 * arity, vm_precall otherwise) and becomes S->ci; the result is where its code starts
 * (code_at). A C function (or __call on one) runs here and gives 0. */
static uintptr_t jit_call(State *S, CallInfo *ci, Value *ra, int nresults) {
    CallInfo *nci;
    if (vm_fixed_call_ok(S, ra)) {
        nci = vm_fixed_call(S, ci, ra, nresults);
    } else {
        nci = vm_precall(S, ra, nresults);
        if (nci == NULL) { /* a C function ran */
            if (nresults >= 0) S->top = ci->top;
            if (jit_prof) vm_prof_frame_back(ci);
            return 0;
        }
    }
    return enter_frame(S, nci);
}

/* OP_RETURN/RETURN0/RETURN1 from compiled code: R[a] .. R[a+n-1] are the results (n < 0:
 * up to S->top), ci->savedpc is set. The interpreter's L_RETURN, then its 'ret': 0 when the
 * frame was entered from C (the interpreter that handed over returns); else the caller
 * becomes S->ci and the result is where it continues (code_at its savedpc). */
static uintptr_t jit_return(State *S, CallInfo *ci, int a, int n) {
    Value *base = ci->func + 1;
    if (n < 0) n = (int)(S->top - (base + a));
    if (vm_needs_close(S, base)) {
        S->top = base + a + n;
        vm_close(S, base, NULL); /* __close handlers may move the stack */
        base = ci->func + 1;
    }
    if (jit_prof) vm_prof_frame_exit(ci, true);
    vm_move_results(S, ci, ci->func->u.lf->p, base + a, n);
    if (ci->callstatus & CIST_FRESH) return 0;
    int wanted = ci->nresults;
    ci = ci->prev;
    S->ci = ci;
    if (wanted != VM_MULTRET) S->top = ci->top;
    if (jit_prof) vm_prof_frame_back(ci);
    return code_at(ci->func->u.lf->p, ci->savedpc);
}

/* OP_TAILCALL from compiled code (ci->savedpc set): the interpreter's L_TAILCALL. The callee
 * replaces the frame: a Lua one becomes S->ci and the result is its code; a C function runs
 * and its results are returned as by jit_return. */
static uintptr_t jit_tailcall(State *S, CallInfo *ci, int a, int b) {
    Value *base = ci->func + 1, *ra = base + a;
    if (b != 0)
        S->top = ra + b;
    else
        b = (int)(S->top - ra);
    if (jit_prof) vm_prof_frame_exit(ci, false);
    if (S->openupval != NULL && S->openupval->v >= base) vm_closeupvals(S, base);
    CallInfo *nci = vm_pretailcall(S, ci, ra, b);
    if (nci == NULL) return jit_return(S, ci, a, (int)(S->top - (ci->func + 1 + a)));
    return enter_frame(S, nci);
}

/* Instructions after which the interpreter always goes on with the next one (so a step of
 * them falls through to the next template); every other one may jump or skip. */
static bool falls_through(OpCode op) {
    switch (op) {
    case OP_MOVE: case OP_LOADK: case OP_LOADI: case OP_LOADF: case OP_LOADNIL: case OP_LOADFALSE:
    case OP_LOADTRUE: case OP_GETUPVAL: case OP_SETUPVAL: case OP_GETTABUP: case OP_GETTABLE:
    case OP_GETI: case OP_GETFIELD: case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD:
    case OP_NEWTABLE: case OP_SELF: case OP_ADDI: case OP_ADDK: case OP_SUBK: case OP_MULK: case OP_MODK:
    case OP_POWK: case OP_DIVK: case OP_IDIVK: case OP_BANDK: case OP_BORK: case OP_BXORK: case OP_ADD:
    case OP_SUB: case OP_MUL: case OP_MOD: case OP_POW: case OP_DIV: case OP_IDIV: case OP_BAND:
    case OP_BOR: case OP_BXOR: case OP_SHL: case OP_SHR: case OP_UNM: case OP_BNOT: case OP_NOT:
    case OP_LEN: case OP_CONCAT: case OP_CLOSE: case OP_TBC: case OP_CLOSURE: case OP_VARARG:
    case OP_TFORCALL:
        return true;
    default:
        return false;
    }
}

/* The instruction at [pc] run by the interpreter (vm_jit_step), for instructions without a
 * template and templates whose guards failed: errors, metamethods, coercions and messages
 * are the interpreter's, and compiled code goes on at the pc it leaves in savedpc. No
 * call, tail call or return is ever stepped: they have templates that never fail. */
static void emit_step(Comp *c, int pc, bool inline_next) {
    Asm *a = &c->a;
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(c->p->code + pc));
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, MOV, R(RSI), R(RCI));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_jit_step);
    INS1(a, CALL, R(RAX));
    reload_base(c);
    if (!falls_through((OpCode)vm_op(c->p->code[pc])))
        JMP(a, JMP, c->dispatch);
    else if (!inline_next)
        JMP(a, JMP, L(c, pc + 1));
}

/* The first probe of a string-key lookup inline (vm_table_getstr_inline's first step), for
 * table rdi and constant key [key]: if the node at hash & hmask holds [key] itself, rax gets
 * its value slot and control goes to [hit]; otherwise falls through with rdi and rsi (the key)
 * set for the out-of-line lookup. The key is read whole (vm_load16: another thread may be
 * storing it) and only the copy is inspected; hmask is read before node, as lookups must
 * (it never exceeds the mask of the block node points to). Uses rax, rcx, rdx, xmm0, xmm1. */
static void probe_str(Comp *c, String *key, int hit) {
    Asm *a = &c->a;
    uint32_t h = key->hash != 0 ? key->hash : vm_string_hash(key);
    int miss = new_label(a);
    INS2(a, MOV, R(ZYDIS_REGISTER_ECX), M(RDI, offsetof(Table, hmask), 4));
    INS2(a, MOV, R(RAX), M(RDI, offsetof(Table, node), 8));
    INS2(a, AND, R(ZYDIS_REGISTER_ECX), I((int64_t)(int32_t)h));
    INS2(a, SHL, R(RCX), I(5)); /* sizeof(Node) */
    INS2(a, LEA, R(RAX), MX(RAX, RCX, 1, offsetof(TabNodes, n), 8));
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    load_imm64(c, RSI, (uint64_t)(uintptr_t)key);
    INS2(a, MOVQ, R(RDX), R(XMM0));
    INS2(a, CMP, R(RDX), R(RSI));
    JMP(a, JNZ, miss);
    ins3(a, ZYDIS_MNEMONIC_PSHUFD, R(XMM1), R(XMM0), I(0xEE)); /* the high half: the tag */
    INS2(a, MOVD, R(ZYDIS_REGISTER_EDX), R(XMM1));
    INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_STR));
    JMP(a, JNZ, miss);
    INS2(a, ADD, R(RAX), I(offsetof(Node, val)));
    JMP(a, JMP, hit);
    bind(a, miss);
}

/* Room for one more element in the growing array *[arr] of [n] used, *[cap] allocated
 * elements of [size] bytes; false (and the compilation failed) when memory runs out. */
static bool grow(Comp *c, void **arr, int *cap, int n, size_t size) {
    if (n < *cap) return true;
    int ncap = *cap ? 2 * *cap : 16;
    void *na = realloc(*arr, (size_t)ncap * size);
    if (na == NULL) {
        c->a.failed = true;
        return false;
    }
    *arr = na;
    *cap = ncap;
    return true;
}

/* A call into C out of line, from code whose caller-saved registers must all survive it:
 * [fn](rdi), rdi being rdx (SLOW_RDX), r12 (SLOW_CI) or [imm] (SLOW_IMM); then back to
 * [back]. Returns the stub's label. */
enum { SLOW_RDX, SLOW_CI, SLOW_IMM };
static int slow_call(Comp *c, void *fn, int arg, uint64_t imm, int back) {
    if (!grow(c, (void **)&c->slow, &c->capslow, c->nslow, sizeof *c->slow)) return back;
    int l = new_label(&c->a);
    c->slow[c->nslow++] = (struct Slow){l, back, arg, (uintptr_t)fn, imm};
    return l;
}

/* The slow-call stubs, saving every caller-saved register the code around may hold (9
 * general-purpose, xmm0 and xmm1: 112 bytes, so rsp stays 16-byte aligned for the call). */
static const ZydisRegister saved_gprs[] = {ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
                                           ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8,
                                           ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11};
static void emit_slow_stubs(Comp *c) {
    Asm *a = &c->a;
    int n = (int)(sizeof saved_gprs / sizeof saved_gprs[0]);
    for (int e = 0; e < c->nslow; e++) {
        const struct Slow *sl = &c->slow[e];
        bind(a, sl->slow);
        for (int r = 0; r < n; r++) INS1(a, PUSH, R(saved_gprs[r]));
        INS2(a, SUB, R(ZYDIS_REGISTER_RSP), I(40));
        INS2(a, MOVDQU, M(ZYDIS_REGISTER_RSP, 0, 16), R(XMM0));
        INS2(a, MOVDQU, M(ZYDIS_REGISTER_RSP, 16, 16), R(XMM1));
        if (sl->arg == SLOW_RDX)
            INS2(a, MOV, R(RDI), R(RDX));
        else if (sl->arg == SLOW_CI)
            INS2(a, MOV, R(RDI), R(RCI));
        else
            load_imm64(c, RDI, sl->imm);
        load_imm64(c, RAX, (uint64_t)sl->fn);
        INS1(a, CALL, R(RAX));
        INS2(a, MOVDQU, R(XMM0), M(ZYDIS_REGISTER_RSP, 0, 16));
        INS2(a, MOVDQU, R(XMM1), M(ZYDIS_REGISTER_RSP, 16, 16));
        INS2(a, ADD, R(ZYDIS_REGISTER_RSP), I(40));
        for (int r = n - 1; r >= 0; r--) INS1(a, POP, R(saved_gprs[r]));
        JMP(a, JMP, sl->back);
    }
}

/* Enqueue the event in rdx into the thread's stream (r14: a VmProfStream, whose first word is
 * its producer's cursor), as the interpreter's vm_prof_emit does ([mem]: vm_prof_emit_mem,
 * for heap accesses, whose room was reserved). Exhaustive mode is the CAB fast path of
 * cab_push, five instructions: load the cursor, test the slot for CLEAR, branch out if not,
 * store, advance the cursor in memory. Sampling tests for MAGIC instead (its ring is never
 * full, it only wraps). Other kinds (sequential analysis, the instrument stage) always take
 * the slow path. Uses rax; the slow path keeps every other register. */
static void emit_enqueue_as(Comp *c, bool mem) {
    Asm *a = &c->a;
    int back = new_label(a);
    int slow = slow_call(c, mem ? (void *)&vm_prof_emit_mem_out : (void *)&vm_prof_emit_slow, SLOW_RDX, 0, back);
    if (jit_prof_kind == VM_PS_EXHAUSTIVE || jit_prof_kind == VM_PS_SAMPLING) {
        _Static_assert(offsetof(VmProfStream, prod) == 0 && offsetof(CabProducer, cur) == 0,
                       "the stream's first word is its cursor");
        INS2(a, MOV, R(RAX), M(RPS, 0, 8));
        INS2(a, CMP, M(RAX, 0, 8), I(jit_prof_kind == VM_PS_EXHAUSTIVE ? 0 : -1)); /* CLEAR / MAGIC */
        jump(a, jit_prof_kind == VM_PS_EXHAUSTIVE ? ZYDIS_MNEMONIC_JNZ : ZYDIS_MNEMONIC_JZ, slow);
        INS2(a, MOV, M(RAX, 0, 8), R(RDX));
        INS2(a, ADD, M(RPS, 0, 8), I(8));
    } else {
        JMP(a, JMP, slow);
    }
    bind(a, back);
}
static void emit_enqueue(Comp *c) { emit_enqueue_as(c, false); }

/* A heap load or store at [addr + disp] (EV_LOAD / EV_STORE, as MEMEV in the
 * interpreter), while an analysis needs them. Uses rax, rdx. */
static void emit_mem(Comp *c, EvKind kind, ZydisRegister addr, int64_t disp) {
    if (!jit_prof || !(vm_prof_needs & PROF_NEED_MEM)) return;
    INS2(&c->a, LEA, R(RDX), M(addr, disp, 8));
    load_imm64(c, RAX, ev_make(kind, 0));
    INS2(&c->a, OR, R(RDX), R(RAX));
    emit_enqueue_as(c, true);
}

/* cab_reserve's check inline: the last slot of the room wanted ([bytes] past the cursor, the
 * constant given or, [in_rdx], rdx) lies before the ring's end and is CLEAR; else to [slow].
 * Uses rax. */
static void reserve_check(Comp *c, bool in_rdx, int64_t bytes, int slow) {
    Asm *a = &c->a;
    INS2(a, MOV, R(RAX), M(RPS, offsetof(CabProducer, cur), 8));
    if (in_rdx)
        INS2(a, LEA, R(RAX), MX(RAX, RDX, 1, -8, 8));
    else
        INS2(a, ADD, R(RAX), I(bytes - 8));
    INS2(a, CMP, R(RAX), M(RPS, offsetof(CabProducer, end), 8));
    JMP(a, JNB, slow);
    INS2(a, CMP, M(RAX, 0, 8), I(0));
    JMP(a, JNZ, slow);
}

/* Room for the heap-access events up to the next safepoint (RESERVE_FOR in the interpreter:
 * 2 x ncode, at most one access and one cut-edge path event per instruction), at a safepoint:
 * cab_reserve's check inline (exhaustive CAB only: nothing else ever waits), its wait out of
 * line. Uses rax. */
static void emit_reserve(Comp *c) {
    if (!jit_prof || !(vm_prof_needs & PROF_NEED_MEM) || jit_prof_kind != VM_PS_EXHAUSTIVE) return;
    Asm *a = &c->a;
    size_t n = 2 * (size_t)c->p->ncode;
    int back = new_label(a);
    reserve_check(c, false, 8 * (int64_t)n, slow_call(c, (void *)&vm_prof_reserve_out, SLOW_IMM, n, back));
    bind(a, back);
}

/* rdx = [kind | depth << shift | low], the depth of the frame in r12 saturated as ev_depth
 * does (EV_CALL has it at bit 32, EV_RETURN at bit 0). Uses rax. */
static void event_with_depth(Comp *c, EvKind kind, int shift, uint32_t low) {
    Asm *a = &c->a;
    INS2(a, MOV, R(ZYDIS_REGISTER_EDX), M(RCI, offsetof(CallInfo, depth), 4));
    INS2(a, MOV, R(EAX), I(EV_DEPTH_MAX));
    INS2(a, CMP, R(ZYDIS_REGISTER_EDX), R(EAX));
    INS2(a, CMOVNBE, R(ZYDIS_REGISTER_EDX), R(EAX));
    if (shift != 0) INS2(a, SHL, R(RDX), I(shift));
    load_imm64(c, RAX, ev_make(kind, low));
    INS2(a, OR, R(RDX), R(RAX));
}

/* rdx = EV_PATH of this function's path number edx (vm_pathprof_event). Uses rax. */
static void path_event(Comp *c) {
    INS2(&c->a, SHL, R(RDX), I(24));
    load_imm64(c, RAX, vm_pathprof_event(c->fid, 0));
    INS2(&c->a, OR, R(RDX), R(RAX));
}

/* Ball-Larus: the action of outcome [o] of the branching instruction at [pc] on the path
 * register in the frame (ci->pathreg, shared with the interpreter and the steps), as path_act
 * in the interpreter applies it. The action is known here: the function's table is built. */
static bool path_noop(Comp *c, int pc, unsigned o) {
    if (c->pathbias == VM_PATH_OFF) return true;
    uint64_t act = vm_pathprof_act(c->pathbias, c->p->code + pc, o);
    return vm_pathact_reset(act) == VM_PATH_NORESET && vm_pathact_inc(act) == 0;
}

static void emit_path_action(Comp *c, int pc, unsigned o) {
    if (path_noop(c, pc, o)) return;
    Asm *a = &c->a;
    uint64_t act = vm_pathprof_act(c->pathbias, c->p->code + pc, o);
    uint32_t inc = vm_pathact_inc(act), reset = vm_pathact_reset(act);
    if (reset == VM_PATH_NORESET) {
        INS2(a, ADD, M(RCI, offsetof(CallInfo, pathreg), 4), I((int64_t)(int32_t)inc));
        return;
    }
    INS2(a, MOV, R(ZYDIS_REGISTER_EDX), M(RCI, offsetof(CallInfo, pathreg), 4));
    if (inc != 0) INS2(a, ADD, R(ZYDIS_REGISTER_EDX), I((int64_t)(int32_t)inc));
    path_event(c);
    emit_enqueue(c);
    INS2(a, MOV, M(RCI, offsetof(CallInfo, pathreg), 4), I((int64_t)(int32_t)reset));
}

/* The label a branch of [from] with outcome [o] goes to, on its way to [label]: [label]
 * itself, or an out-of-line stub that applies the path action first. */
static int edge_label(Comp *c, int from, unsigned o, int label) {
    if (path_noop(c, from, o)) return label;
    if (!grow(c, (void **)&c->edge, &c->capedge, c->nedge, sizeof *c->edge)) return label;
    int stub = new_label(&c->a);
    c->edge[c->nedge++] = (struct Edge){stub, from, (int)o, label};
    return stub;
}

static void emit_edge_stubs(Comp *c) {
    for (int e = 0; e < c->nedge; e++) { /* (the list may not grow here: actions only) */
        bind(&c->a, c->edge[e].stub);
        emit_path_action(c, c->edge[e].from, (unsigned)c->edge[e].o);
        JMP(&c->a, JMP, c->edge[e].to);
    }
}

/* At a compiled return, its guards passed (r12 = the frame returning): the path's end and
 * EV_RETURN, as 'ret' in the instrumented interpreter. Uses rax, rdx. */
static void emit_frame_exit(Comp *c) {
    if (c->pathbias != VM_PATH_OFF) {
        INS2(&c->a, MOV, R(ZYDIS_REGISTER_EDX), M(RCI, offsetof(CallInfo, pathreg), 4));
        path_event(c);
        emit_enqueue(c);
        INS2(&c->a, MOV, R(RAX), I(VM_PATH_OFF));
        INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, pathbias), 8), R(RAX));
    }
    if (vm_prof_needs & PROF_NEED_RETURN) {
        event_with_depth(c, EV_RETURN, 0, 0);
        emit_enqueue(c);
    }
}

/* The function's id in profiles (given on first use). */
static uint32_t prof_id(Proto *p) { return p->id != 0 ? p->id : vm_prof_newid(p); }

/* At a compiled call's entry (r12 = the new frame): what the instrumented interpreter's
 * startfunc does. EV_CALL: made by a Lua frame, so never "from C". (The call site was
 * enqueued by the caller's CALL template, which knows it.) */
static void emit_frame_start(Comp *c) {
    if (vm_prof_needs & PROF_NEED_CALL) {
        event_with_depth(c, EV_CALL, 32, prof_id(c->p));
        emit_enqueue(c);
    }
    if (c->pathbias != VM_PATH_OFF) {
        load_imm64(c, RAX, c->pathbias);
        INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, pathbias), 8), R(RAX));
        INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, pathreg), 4), I(0));
    }
    emit_reserve(c);
}

/* rdi = the table in R[reg], or ([up]) in upvalue [reg], read whole so that the pointer and
 * the tag come from one 16-byte copy (another thread may be storing it); anything but a table
 * is stepped at [pc]. Uses rax, xmm0, xmm1. */
static void table_operand(Comp *c, int pc, int reg, bool up) {
    Asm *a = &c->a;
    if (!up) {
        INS2(a, CMP, TAG(reg), I(VT_TABLE));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOV, R(RDI), VAL(reg));
        return;
    }
    INS2(a, MOV, R(RAX), M(RCL, (int64_t)offsetof(LClosure, upvals) + 8 * (int64_t)reg, 8));
    INS2(a, MOV, R(RAX), M(RAX, offsetof(UpVal, v), 8));
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    INS2(a, MOVQ, R(RDI), R(XMM0));
    ins3(a, ZYDIS_MNEMONIC_PSHUFD, R(XMM1), R(XMM0), I(0xEE)); /* the high half: the tag */
    INS2(a, MOVD, R(EAX), R(XMM1));
    INS2(a, CMP, R(EAX), I(VT_TABLE));
    JMP(a, JNZ, STEP(c, pc));
}

/* The end of a table read, as the interpreter's: the value at [slot] read whole, a hit unless
 * it is nil and the table [table] has a metatable (then stepped at [pc]: __index); R[ra]
 * takes it (an EV_LOAD of the slot while profiling). */
static void finish_get(Comp *c, int pc, int ra, ZydisRegister slot, ZydisRegister table) {
    Asm *a = &c->a;
    int store = new_label(a);
    INS2(a, MOVDQA, R(XMM0), M(slot, 0, 16));
    INS2(a, CMP, M(slot, offsetof(Value, tt), 4), I(VT_NIL));
    JMP(a, JNZ, store);
    INS2(a, CMP, M(table, offsetof(Table, meta), 8), I(0));
    JMP(a, JNZ, STEP(c, pc));
    bind(a, store);
    emit_mem(c, EV_LOAD, slot, 0);
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
}

/* xmm0 = RK(C) of [i], whole. Uses rdx. */
static void load_rkc(Comp *c, Instr i) {
    if (vm_k(i)) {
        load_imm64(c, RDX, (uint64_t)(uintptr_t)&c->p->k[vm_c(i)]);
        INS2(&c->a, MOVDQA, R(XMM0), M(RDX, 0, 16));
    } else {
        INS2(&c->a, MOVDQA, R(XMM0), WHOLE(vm_c(i)));
    }
}

/* After jit_call / jit_return / jit_tailcall (rax): 0 goes to [zero], 1 to the interpreter
 * (resume), anything else is code to enter in the frame S->ci (sw). */
static void after_frame_helper(Comp *c, int zero) {
    INS2(&c->a, CMP, R(RAX), I(1));
    JMP(&c->a, JB, zero);
    JMP(&c->a, JZ, c->resume);
    JMP(&c->a, JMP, c->sw);
}

/* jit_return or jit_tailcall(S, ci, [a], [n]) for the instruction at [pc] (savedpc after it,
 * as the interpreter leaves it), then where the helper says: a fresh frame's return (0) goes
 * back to the interpreter that handed over. */
static void call_frame_helper(Comp *c, int pc, uintptr_t (*fn)(State *, CallInfo *, int, int), int a, int n) {
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(c->p->code + pc + 1));
    INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    INS2(&c->a, MOV, R(RDI), R(RS));
    INS2(&c->a, MOV, R(RSI), R(RCI));
    INS2(&c->a, MOV, R(ZYDIS_REGISTER_EDX), I(a));
    INS2(&c->a, MOV, R(ZYDIS_REGISTER_ECX), I(n));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)fn);
    INS1(&c->a, CALL, R(RAX));
    after_frame_helper(c, c->fresh);
}

/* rcx = the word at [field] of the compiled code of the Proto in [proto] (JitCode.at or
 * .callentry); to [slow] when it has none (not compiled yet, or cannot be). */
static void jit_code_field(Comp *c, ZydisRegister proto, size_t field, int slow) {
    INS2(&c->a, MOV, R(RCX), M(proto, offsetof(Proto, jit), 8));
    INS2(&c->a, TEST, R(RCX), R(RCX));
    JMP(&c->a, JZ, slow);
    INS2(&c->a, MOV, R(RCX), M(RCX, (int64_t)field, 8));
    INS2(&c->a, TEST, R(RCX), R(RCX));
    JMP(&c->a, JZ, slow);
}

/* The template of the instruction at [pc] (has_template says it has one). Float ordered
 * comparisons use ucomisd so that "above" / "above or equal" means the condition holds: an
 * unordered result (NaN) sets CF and is never above, so every comparison with NaN is false. */
static void emit_template(Comp *c, int pc) {
    Asm *a = &c->a;
    Proto *p = c->p;
    Instr i = p->code[pc];
    int ra = (int)vm_a(i);
    switch (vm_op(i)) {
    case OP_MOVE:
        INS2(a, MOVDQA, R(XMM0), WHOLE(vm_b(i)));
        INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
        break;
    case OP_LOADK:
        /* the constant table is immutable and lives as long as the Proto */
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&p->k[vm_bx(i)]);
        INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
        INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
        break;
    case OP_LOADI:
        INS2(a, MOV, VAL(ra), I(vm_sbx(i)));
        INS2(a, MOV, TAG(ra), I(VT_INT));
        break;
    case OP_LOADF: {
        double d = (double)vm_sbx(i);
        uint64_t bits;
        memcpy(&bits, &d, 8);
        load_imm64(c, RAX, bits);
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, TAG(ra), I(VT_FLOAT));
        break;
    }
    case OP_LOADNIL:
        for (int r = ra; r <= ra + (int)vm_b(i); r++) INS2(a, MOV, TAG(r), I(VT_NIL));
        break;
    case OP_LOADFALSE:
        INS2(a, MOV, TAG(ra), I(VT_FALSE));
        break;
    case OP_LOADTRUE:
        INS2(a, MOV, TAG(ra), I(VT_TRUE));
        break;
    case OP_GETUPVAL:
    case OP_SETUPVAL:
        /* upvals[B]->v, then the whole Value in one 16-byte access (another thread may be
         * writing the same upvalue: vm_value.h) */
        INS2(a, MOV, R(RCX), M(RCL, (int64_t)offsetof(LClosure, upvals) + 8 * (int64_t)vm_b(i), 8));
        INS2(a, MOV, R(RCX), M(RCX, offsetof(UpVal, v), 8));
        if (vm_op(i) == OP_GETUPVAL) {
            INS2(a, MOVDQA, R(XMM0), M(RCX, 0, 16));
            emit_mem(c, EV_LOAD, RCX, 0);
            INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
        } else {
            emit_mem(c, EV_STORE, RCX, 0);
            INS2(a, MOVDQA, R(XMM0), WHOLE(ra));
            INS2(a, MOVDQA, M(RCX, 0, 16), R(XMM0));
        }
        break;
    case OP_ADDI:
        arith(c, pc, ra, src_reg((int)vm_b(i)), src_int(vm_sc(i)), ZYDIS_MNEMONIC_ADD, ZYDIS_MNEMONIC_ADDSD);
        break;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_BAND: case OP_BOR: case OP_BXOR:
    case OP_ADDK: case OP_SUBK: case OP_MULK: case OP_DIVK: case OP_BANDK: case OP_BORK: case OP_BXORK: {
        unsigned op = vm_op(i);
        bool konst = op >= OP_ADDK && op <= OP_BXORK;
        Src cs = konst ? src_const(&p->k[vm_c(i)]) : src_reg((int)vm_c(i));
        ZydisMnemonic imn = ZYDIS_MNEMONIC_INVALID, fmn = ZYDIS_MNEMONIC_INVALID;
        switch (op) {
        case OP_ADD: case OP_ADDK: imn = ZYDIS_MNEMONIC_ADD; fmn = ZYDIS_MNEMONIC_ADDSD; break;
        case OP_SUB: case OP_SUBK: imn = ZYDIS_MNEMONIC_SUB; fmn = ZYDIS_MNEMONIC_SUBSD; break;
        case OP_MUL: case OP_MULK: imn = ZYDIS_MNEMONIC_IMUL; fmn = ZYDIS_MNEMONIC_MULSD; break;
        case OP_DIV: case OP_DIVK: fmn = ZYDIS_MNEMONIC_DIVSD; break; /* '/' is always float */
        case OP_BAND: case OP_BANDK: imn = ZYDIS_MNEMONIC_AND; break;  /* floats: coercion, stepped */
        case OP_BOR: case OP_BORK: imn = ZYDIS_MNEMONIC_OR; break;
        default: imn = ZYDIS_MNEMONIC_XOR; break;
        }
        arith(c, pc, ra, src_reg((int)vm_b(i)), cs, imn, fmn);
        break;
    }
    case OP_MOD: case OP_MODK: {
        /* Integer % integer, floored as in Lua: the remainder of idiv takes the dividend's
         * sign, so a non-zero one of the other sign than the divisor gets the divisor added.
         * A positive power-of-two constant is a mask. Floats, a zero divisor (an error) and
         * -1 (INT_MIN % -1 traps in idiv) go to the interpreter. */
        int store = new_label(a);
        INS2(a, CMP, TAG(vm_b(i)), I(VT_INT));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOV, R(RAX), VAL(vm_b(i)));
        if (vm_op(i) == OP_MODK) {
            int64_t d = p->k[vm_c(i)].u.i;
            if (d > 0 && (d & (d - 1)) == 0 && fits32(d - 1)) {
                INS2(a, AND, R(RAX), I(d - 1));
                INS2(a, MOV, R(RDX), R(RAX));
                JMP(a, JMP, store);
            }
            load_imm64(c, RCX, (uint64_t)d);
        } else {
            INS2(a, CMP, TAG(vm_c(i)), I(VT_INT));
            JMP(a, JNZ, STEP(c, pc));
            INS2(a, MOV, R(RCX), VAL(vm_c(i)));
            INS2(a, LEA, R(RDX), M(RCX, 1, 8));
            INS2(a, CMP, R(RDX), I(1));
            JMP(a, JBE, STEP(c, pc)); /* divisor 0 or -1 */
        }
        INS0(a, CQO);
        INS1(a, IDIV, R(RCX));
        INS2(a, TEST, R(RDX), R(RDX));
        JMP(a, JZ, store);
        INS2(a, MOV, R(RAX), R(RDX));
        INS2(a, XOR, R(RAX), R(RCX));
        JMP(a, JNS, store);
        INS2(a, ADD, R(RDX), R(RCX));
        bind(a, store);
        INS2(a, MOV, VAL(ra), R(RDX));
        INS2(a, MOV, TAG(ra), I(VT_INT));
        break;
    }
    case OP_LEN: {
        /* a string's length, or a table's border (vm_table_len, which neither raises nor
         * allocates) when it has no metatable; __len and errors are stepped */
        int rb = (int)vm_b(i), tab = new_label(a), store = new_label(a);
        INS2(a, CMP, TAG(rb), I(VT_STR));
        JMP(a, JNZ, tab);
        INS2(a, MOV, R(RAX), VAL(rb));
        INS2(a, MOV, R(RAX), M(RAX, offsetof(String, len), 8));
        JMP(a, JMP, store);
        bind(a, tab);
        INS2(a, CMP, TAG(rb), I(VT_TABLE));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOV, R(RDI), VAL(rb));
        INS2(a, CMP, M(RDI, offsetof(Table, meta), 8), I(0));
        JMP(a, JNZ, STEP(c, pc));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_len);
        INS1(a, CALL, R(RAX));
        bind(a, store);
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, TAG(ra), I(VT_INT));
        break;
    }
    case OP_NEWTABLE:
        /* vm_table_new as the interpreter calls it (Protect: it allocates, so it may collect) */
        load_imm64(c, RAX, (uint64_t)(uintptr_t)(p->code + pc + 1));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
        INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, top), 8));
        INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
        INS2(a, MOV, R(RDI), R(RS));
        INS2(a, MOV, R(ZYDIS_REGISTER_ESI), I(vm_c(i)));
        INS2(a, MOV, R(ZYDIS_REGISTER_EDX), I(vm_b(i)));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_new);
        INS1(a, CALL, R(RAX));
        reload_base(c);
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, TAG(ra), I(VT_TABLE));
        break;
    case OP_UNM: {
        int flt = new_label(a), done = new_label(a);
        int rb = (int)vm_b(i);
        INS2(a, CMP, TAG(rb), I(VT_INT));
        JMP(a, JNZ, flt);
        INS2(a, MOV, R(RAX), VAL(rb));
        INS1(a, NEG, R(RAX));
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, TAG(ra), I(VT_INT));
        JMP(a, JMP, done);
        bind(a, flt);
        INS2(a, CMP, TAG(rb), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOV, R(RAX), VAL(rb));
        INS2(a, BTC, R(RAX), I(63)); /* flip the sign bit: -x for every double, NaN included */
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, TAG(ra), I(VT_FLOAT));
        bind(a, done);
        break;
    }
    case OP_NOT:
        /* falsy (tag <= VT_FALSE) -> VT_TRUE, else VT_FALSE (VT_TRUE == VT_FALSE + 1) */
        INS2(a, XOR, R(EAX), R(EAX));
        INS2(a, CMP, TAG(vm_b(i)), I(VT_FALSE));
        INS1(a, SETBE, R(ZYDIS_REGISTER_AL));
        INS2(a, ADD, R(EAX), I(VT_FALSE));
        INS2(a, MOV, TAG(ra), R(EAX));
        break;
    case OP_JMP: {
        int target = pc + 1 + vm_sbx(i);
        emit_path_action(c, pc, 1);
        if (vm_sbx(i) < 0)
            poll_then_jump(c, target);
        else
            JMP(a, JMP, L(c, target));
        break;
    }
    case OP_LT: case OP_LE: {
        int rb = (int)vm_b(i);
        int flt = new_label(a);
        INS2(a, CMP, TAG(ra), I(VT_INT));
        JMP(a, JNZ, flt);
        INS2(a, CMP, TAG(rb), I(VT_INT));
        JMP(a, JNZ, STEP(c, pc)); /* int against non-int: vm_lessthan decides */
        INS2(a, MOV, R(RAX), VAL(ra));
        INS2(a, CMP, R(RAX), VAL(rb));
        cond_branch(c, pc, i, vm_op(i) == OP_LT ? ZYDIS_MNEMONIC_JL : ZYDIS_MNEMONIC_JLE);
        bind(a, flt);
        INS2(a, CMP, TAG(ra), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, CMP, TAG(rb), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
        /* a < b  <=>  b above a (ucomisd b, a): false when unordered, as Lua wants */
        INS2(a, MOVSD, R(XMM0), VAL(rb));
        INS2(a, UCOMISD, R(XMM0), VAL(ra));
        cond_branch(c, pc, i, vm_op(i) == OP_LT ? ZYDIS_MNEMONIC_JNBE : ZYDIS_MNEMONIC_JNB);
        break;
    }
    case OP_LTI: case OP_LEI: case OP_GTI: case OP_GEI: {
        int imm = vm_sb(i);
        unsigned op = vm_op(i);
        int flt = new_label(a);
        INS2(a, CMP, TAG(ra), I(VT_INT));
        JMP(a, JNZ, flt);
        INS2(a, CMP, VAL(ra), I(imm));
        cond_branch(c, pc, i,
                    op == OP_LTI ? ZYDIS_MNEMONIC_JL : op == OP_LEI ? ZYDIS_MNEMONIC_JLE
                                                      : op == OP_GTI ? ZYDIS_MNEMONIC_JNLE : ZYDIS_MNEMONIC_JNL);
        bind(a, flt);
        INS2(a, CMP, TAG(ra), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc)); /* metamethods and errors */
        load_num(c, XMM1, src_int(imm), pc);
        if (op == OP_LTI || op == OP_LEI) { /* x < imm <=> imm above x */
            INS2(a, UCOMISD, R(XMM1), VAL(ra));
        } else {                            /* x > imm <=> x above imm */
            INS2(a, MOVSD, R(XMM0), VAL(ra));
            INS2(a, UCOMISD, R(XMM0), R(XMM1));
        }
        cond_branch(c, pc, i, (op == OP_LTI || op == OP_GTI) ? ZYDIS_MNEMONIC_JNBE : ZYDIS_MNEMONIC_JNB);
        break;
    }
    case OP_EQ: {
        int rb = (int)vm_b(i);
        int yes, no;
        cond_succ(c, pc, i, &yes, &no);
        int isint = new_label(a), notint = new_label(a);
        INS2(a, MOV, R(EAX), TAG(ra));
        INS2(a, CMP, R(EAX), TAG(rb));
        JMP(a, JNZ, STEP(c, pc)); /* different tags: 1 == 1.0 and __eq are the interpreter's */
        INS2(a, CMP, R(EAX), I(VT_INT));
        JMP(a, JZ, isint);
        JMP(a, JB, target_label(c, pc, yes)); /* nil, false, true: equal tags are equal values */
        JMP(a, JMP, notint);
        bind(a, isint);
        INS2(a, MOV, R(RAX), VAL(ra));
        INS2(a, CMP, R(RAX), VAL(rb));
        cond_branch(c, pc, i, ZYDIS_MNEMONIC_JZ);
        bind(a, notint);
        INS2(a, CMP, R(EAX), I(VT_FLOAT));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOVSD, R(XMM0), VAL(ra));
        INS2(a, UCOMISD, R(XMM0), VAL(rb));
        JMP(a, JP, target_label(c, pc, no)); /* NaN */
        JMP(a, JZ, target_label(c, pc, yes));
        JMP(a, JMP, target_label(c, pc, no));
        break;
    }
    case OP_EQK:
    case OP_EQI: {
        int yes, no;
        cond_succ(c, pc, i, &yes, &no);
        Value kv = vm_op(i) == OP_EQI ? vm_int(vm_sb(i)) : p->k[vm_b(i)];
        if (kv.tt <= VT_TRUE) { /* nil or a boolean: equal iff the tags are */
            INS2(a, CMP, TAG(ra), I(kv.tt));
            cond_branch(c, pc, i, ZYDIS_MNEMONIC_JZ);
            break;
        }
        /* a number: an integer or a float register compares numerically (EQK is raw
         * equality, which for numbers is the same); any other type is not equal */
        int flt = new_label(a);
        INS2(a, CMP, TAG(ra), I(VT_INT));
        JMP(a, JNZ, flt);
        if (kv.tt == VT_INT && fits32(kv.u.i)) {
            INS2(a, CMP, VAL(ra), I(kv.u.i));
            cond_branch(c, pc, i, ZYDIS_MNEMONIC_JZ);
        } else {
            /* an integer register against a float or a wide integer constant: the
             * interpreter's exact mixed comparison */
            JMP(a, JMP, STEP(c, pc));
        }
        bind(a, flt);
        INS2(a, CMP, TAG(ra), I(VT_FLOAT));
        JMP(a, JNZ, target_label(c, pc, no));
        if (kv.tt == VT_INT && (kv.u.i > (1LL << 53) || kv.u.i < -(1LL << 53))) {
            JMP(a, JMP, STEP(c, pc)); /* (double)k would round */
            break;
        }
        load_num(c, XMM1, src_const(&kv), pc);
        INS2(a, UCOMISD, R(XMM1), VAL(ra));
        JMP(a, JP, target_label(c, pc, no));
        JMP(a, JZ, target_label(c, pc, yes));
        JMP(a, JMP, target_label(c, pc, no));
        break;
    }
    case OP_TEST:
        INS2(a, CMP, TAG(ra), I(VT_FALSE));
        cond_branch(c, pc, i, ZYDIS_MNEMONIC_JNBE); /* truthy: tag above VT_FALSE */
        break;
    case OP_TESTSET: {
        /* truthy(R[B]) ~= k: skip the JMP; else R[A] := R[B] and take it */
        int t, f;
        int rb = (int)vm_b(i);
        cond_targets(c, pc, &t, &f);
        INS2(a, CMP, TAG(rb), I(VT_FALSE));
        if (vm_k(i))
            JMP(a, JBE, target_label(c, pc, f));
        else
            JMP(a, JNBE, target_label(c, pc, f));
        INS2(a, MOVDQA, R(XMM0), WHOLE(rb));
        INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
        JMP(a, JMP, target_label(c, pc, t));
        break;
    }
    case OP_GETTABLE: case OP_GETI: {
        /* The array part only (vm_interp_body.h's first fast path): a table, an integer key
         * in 1..size; a nil slot is a hit only if the table has no metatable. Everything
         * else (hash part, __index, non-tables) is stepped. The slot is read whole (16 bytes):
         * other threads may be writing it. */
        int rb = (int)vm_b(i);
        bool konst = vm_op(i) == OP_GETI;
        int other = konst ? STEP(c, pc) : new_label(a); /* GETTABLE: any other key */
        table_operand(c, pc, rb, false);
        INS2(a, MOV, R(RAX), R(RDI));                                    /* Table * */
        if (!konst) {
            INS2(a, CMP, TAG(vm_c(i)), I(VT_INT));
            JMP(a, JNZ, other);
        }
        INS2(a, MOV, R(RCX), M(RAX, offsetof(Table, arr), 8));          /* TabArr * */
        INS2(a, MOV, R(ZYDIS_REGISTER_ESI), M(RCX, offsetof(TabArr, size), 4));
        if (konst) {
            INS2(a, CMP, R(RSI), I((int64_t)vm_c(i) - 1));
            JMP(a, JBE, STEP(c, pc));                                     /* size <= key - 1 */
            if (vm_c(i) > 1) INS2(a, ADD, R(RCX), I(16 * ((int64_t)vm_c(i) - 1)));
        } else {
            INS2(a, MOV, R(RDX), VAL(vm_c(i)));
            INS1(a, DEC, R(RDX));
            INS2(a, CMP, R(RDX), R(RSI));
            JMP(a, JNB, other);                                           /* unsigned: key < 1 too */
            INS2(a, SHL, R(RDX), I(4));
            INS2(a, ADD, R(RCX), R(RDX));
        }
        INS2(a, ADD, R(RCX), I(offsetof(TabArr, v)));                   /* the slot */
        if (!konst) {
            /* other keys: vm_table_get (raw, never raises or allocates), as the interpreter */
            int got = new_label(a);
            JMP(a, JMP, got);
            bind(a, other);
            INS1(a, PUSH, R(RAX)); /* keep the table across the call (and rsp 16-byte aligned) */
            INS1(a, PUSH, R(RAX));
            INS2(a, MOV, R(RDI), R(RAX));
            INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)vm_c(i), 8));
            load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_get);
            INS1(a, CALL, R(RAX));
            INS2(a, MOV, R(RCX), R(RAX));
            INS1(a, POP, R(RAX));
            INS1(a, POP, R(RAX));
            bind(a, got);
        }
        finish_get(c, pc, ra, RCX, RAX);
        break;
    }
    case OP_SETTABLE: case OP_SETI: {
        /* Array part only: R[A] a table, the key an integer in 1..size, and the slot not nil
         * or no metatable (no __newindex to consult); the value stored whole. */
        bool konst = vm_op(i) == OP_SETI;
        INS2(a, CMP, TAG(ra), I(VT_TABLE));
        JMP(a, JNZ, STEP(c, pc));
        if (!konst) {
            INS2(a, CMP, TAG(vm_b(i)), I(VT_INT));
            JMP(a, JNZ, STEP(c, pc));
        }
        int store = new_label(a);
        INS2(a, MOV, R(RAX), VAL(ra));
        INS2(a, MOV, R(RCX), M(RAX, offsetof(Table, arr), 8));
        INS2(a, MOV, R(ZYDIS_REGISTER_ESI), M(RCX, offsetof(TabArr, size), 4));
        if (konst) {
            INS2(a, CMP, R(RSI), I((int64_t)vm_b(i) - 1));
            JMP(a, JBE, STEP(c, pc));
            if (vm_b(i) > 1) INS2(a, ADD, R(RCX), I(16 * ((int64_t)vm_b(i) - 1)));
        } else {
            INS2(a, MOV, R(RDX), VAL(vm_b(i)));
            INS1(a, DEC, R(RDX));
            INS2(a, CMP, R(RDX), R(RSI));
            JMP(a, JNB, STEP(c, pc));
            INS2(a, SHL, R(RDX), I(4));
            INS2(a, ADD, R(RCX), R(RDX));
        }
        INS2(a, CMP, M(RCX, (int64_t)offsetof(TabArr, v) + 8, 4), I(VT_NIL));
        JMP(a, JNZ, store);
        INS2(a, CMP, M(RAX, offsetof(Table, meta), 8), I(0));
        JMP(a, JNZ, STEP(c, pc));
        bind(a, store);
        emit_mem(c, EV_STORE, RCX, offsetof(TabArr, v));
        load_rkc(c, i);
        INS2(a, MOVDQA, M(RCX, offsetof(TabArr, v), 16), R(XMM0));
        break;
    }
    case OP_GETFIELD: case OP_GETTABUP: {
        /* A string key: vm_table_getstr (the interpreter's probe; it neither raises nor
         * allocates, so no savedpc or top) on a table, a nil result a hit only without a
         * metatable; __index, non-tables and errors are stepped. For GETTABUP the upvalue is read
         * whole and the table pointer and tag taken from that one copy. */
        const Value *key = &p->k[vm_c(i)];
        table_operand(c, pc, (int)vm_b(i), vm_op(i) == OP_GETTABUP);
        int found = new_label(a), got = new_label(a);
        probe_str(c, key->u.s, found);
        INS1(a, PUSH, R(RDI)); /* keep the table across the call (and rsp 16-byte aligned) */
        INS1(a, PUSH, R(RDI));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_getstr);
        INS1(a, CALL, R(RAX));
        INS1(a, POP, R(RCX));
        INS1(a, POP, R(RCX));
        JMP(a, JMP, got);
        bind(a, found);
        INS2(a, MOV, R(RCX), R(RDI));
        bind(a, got);
        finish_get(c, pc, ra, RAX, RCX);
        break;
    }
    case OP_SETFIELD: case OP_SETTABUP: {
        /* A string key already present: vm_table_slotstr (the interpreter's first fast path;
         * it neither raises nor allocates) gives the slot, which takes the value whole. No
         * slot (a new key, __newindex) or not a table: stepped. */
        const Value *key = &p->k[vm_b(i)];
        table_operand(c, pc, ra, vm_op(i) == OP_SETTABUP);
        int found = new_label(a), got = new_label(a);
        probe_str(c, key->u.s, found);
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_slotstr);
        INS1(a, CALL, R(RAX));
        INS2(a, TEST, R(RAX), R(RAX));
        JMP(a, JZ, STEP(c, pc));
        JMP(a, JMP, got);
        bind(a, found); /* vm_table_slotstr's other condition: a live value */
        INS2(a, CMP, M(RAX, offsetof(Value, tt), 4), I(VT_NIL));
        JMP(a, JZ, STEP(c, pc));
        bind(a, got);
        INS2(a, MOV, R(RCX), R(RAX)); /* the slot */
        emit_mem(c, EV_STORE, RCX, 0);
        load_rkc(c, i);
        INS2(a, MOVDQA, M(RCX, 0, 16), R(XMM0));
        break;
    }
    case OP_FORPREP: {
        /* vm_forprep does the checks, errors and the iteration count: call it as the
         * interpreter does (savedpc after this instruction, top = ci->top, base again) */
        load_imm64(c, RAX, (uint64_t)(uintptr_t)(p->code + pc + 1));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
        INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, top), 8));
        INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
        INS2(a, MOV, R(RDI), R(RS));
        INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)ra, 8));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_forprep);
        INS1(a, CALL, R(RAX));
        reload_base(c);
        INS2(a, TEST, R(ZYDIS_REGISTER_AL), R(ZYDIS_REGISTER_AL));
        JMP(a, JNZ, edge_label(c, pc, 1, L(c, pc + 1 + vm_sbx(i))));
        emit_path_action(c, pc, 0);
        break;
    }
    case OP_FORLOOP: {
        /* integer loops only; R[A+1] counts the iterations left (vm_opcodes.h) */
        int done = pc + 1;
        INS2(a, CMP, TAG(ra + 2), I(VT_INT));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOV, R(RAX), VAL(ra + 1));
        INS2(a, TEST, R(RAX), R(RAX));
        JMP(a, JZ, edge_label(c, pc, 0, L(c, done)));
        INS1(a, DEC, R(RAX));
        INS2(a, MOV, VAL(ra + 1), R(RAX));
        INS2(a, MOV, R(RAX), VAL(ra));
        INS2(a, ADD, R(RAX), VAL(ra + 2));
        INS2(a, MOV, VAL(ra), R(RAX));
        INS2(a, MOV, VAL(ra + 3), R(RAX));
        INS2(a, MOV, TAG(ra + 3), I(VT_INT));
        emit_path_action(c, pc, 1);
        poll_then_jump(c, pc + 1 + vm_sbx(i));
        break;
    }
    case OP_CALL: {
        /* jit_call sets the callee's frame up (or runs a C function) and says where to go:
         * 0: a C function ran, carry on here; 1: the interpreter continues S->ci; else the
         * address of the callee's code, entered with the frame switched to S->ci. No native
         * frame is pushed for a Lua call: compiled frames all run on the one native frame of
         * the hand-over, as interpreted ones run in one C frame of the interpreter. */
        int b = (int)vm_b(i), cont = new_label(a), slow = new_label(a);
        if (b != 0) {
            /* Inline, as most calls go: a Lua function of exactly b - 1 fixed parameters,
             * already compiled, room on the stack and a CallInfo record to reuse. The guards
             * come first and write nothing; then the frame is set up as L_CALL sets it and
             * its code entered. Anything else: jit_call. */
            int nargs = b - 1;
            INS2(a, LEA, R(RDX), M(RBASE, 16 * (int64_t)ra, 8));                 /* ra */
            INS2(a, CMP, M(RDX, offsetof(Value, tt), 4), I(VT_LFUNC));
            JMP(a, JNZ, slow);
            INS2(a, MOV, R(R8), M(RDX, 0, 8));                                    /* closure */
            INS2(a, MOV, R(RSI), M(R8, offsetof(LClosure, p), 8));                /* proto */
            INS2(a, CMP, M(RSI, offsetof(Proto, is_vararg), 1), I(0));
            JMP(a, JNZ, slow);
            INS2(a, CMP, M(RSI, offsetof(Proto, numparams), 1), I(nargs));
            JMP(a, JNZ, slow);
            INS2(a, MOVZX, R(EAX), M(RSI, offsetof(Proto, maxstack), 2));
            INS2(a, SHL, R(RAX), I(4));
            INS2(a, LEA, R(RAX), MX(RDX, RAX, 1, 16, 8));                         /* its top */
            INS2(a, LEA, R(RCX), M(RAX, 32 * (int64_t)nargs, 8));                 /* L_CALL's room */
            INS2(a, CMP, R(RCX), M(RS, offsetof(State, stack_last), 8));
            JMP(a, JNB, slow);
            jit_code_field(c, RSI, offsetof(JitCode, callentry), slow);
            INS2(a, MOV, R(RDI), M(RCI, offsetof(CallInfo, next), 8));
            INS2(a, TEST, R(RDI), R(RDI));
            JMP(a, JZ, slow);
            load_imm64(c, R9, (uint64_t)(uintptr_t)(p->code + pc + 1));
            INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(R9));
            INS2(a, MOV, M(RDI, offsetof(CallInfo, func), 8), R(RDX));
            INS2(a, MOV, M(RDI, offsetof(CallInfo, nresults), 4), I((int64_t)vm_c(i) - 1));
            INS2(a, MOV, M(RDI, offsetof(CallInfo, callstatus), 2), I(0));
            INS2(a, MOV, M(RDI, offsetof(CallInfo, top), 8), R(RAX));
            INS2(a, MOV, R(R9), M(RSI, offsetof(Proto, code), 8));
            INS2(a, MOV, M(RDI, offsetof(CallInfo, savedpc), 8), R(R9));
            INS2(a, MOV, M(RDI, offsetof(CallInfo, nextra), 4), I(0));
            INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
            INS2(a, MOV, M(RS, offsetof(State, ci), 8), R(RDI));
            INS2(a, MOV, R(RCI), R(RDI));
            INS2(a, LEA, R(RBASE), M(RDX, 16, 8));
            INS2(a, MOV, R(RCL), R(R8));
            if (jit_prof && (vm_prof_needs & PROF_NEED_SITE)) {
                /* the call site: [this pc | the caller's id], as call_site gives it */
                uint32_t id = prof_id(p);
                uint64_t site = (uint64_t)(uint32_t)pc | (id <= EV_DEPTH_MAX ? (uint64_t)id << 32 : 0);
                load_imm64(c, RDX, ev_make(EV_SITE, site));
                emit_enqueue(c);
            }
            INS1(a, JMP, R(RCX));
        }
        bind(a, slow);
        if (b != 0) {
            INS2(a, LEA, R(RAX), M(RBASE, 16 * (int64_t)(ra + b), 8));
            INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
        }
        load_imm64(c, RAX, (uint64_t)(uintptr_t)(p->code + pc + 1));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
        INS2(a, MOV, R(RDI), R(RS));
        INS2(a, MOV, R(RSI), R(RCI));
        INS2(a, LEA, R(RDX), M(RBASE, 16 * (int64_t)ra, 8));
        INS2(a, MOV, R(ZYDIS_REGISTER_ECX), I((int64_t)vm_c(i) - 1));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&jit_call);
        INS1(a, CALL, R(RAX));
        after_frame_helper(c, cont);
        bind(a, cont);
        reload_base(c);
        break;
    }
    case OP_TAILCALL: {
        /* jit_tailcall: the interpreter's L_TAILCALL; then as after a return */
        call_frame_helper(c, pc, jit_tailcall, ra, (int)vm_b(i));
        break;
    }
    case OP_RETURN: case OP_RETURN0: case OP_RETURN1: {
        /* jit_return does the interpreter's return and says where to go: 0: the frame was
         * CIST_FRESH (back to C through the interpreter); 1: the interpreter continues the
         * caller; else the caller's compiled code at its savedpc. */
        int n = vm_op(i) == OP_RETURN0 ? 0 : vm_op(i) == OP_RETURN1 ? 1 : (int)vm_b(i) - 1;
        int slow = new_label(a);
        if (vm_op(i) != OP_RETURN && !p->is_vararg) {
            /* Inline, as most returns go: nothing to close, not entered from C, the caller
             * wants exactly the results given and has compiled code. Guards first; then the
             * result is moved, the caller becomes S->ci and its code goes on at its savedpc. */
            int noup = new_label(a);
            INS2(a, MOV, R(RAX), M(RS, offsetof(State, openupval), 8));
            INS2(a, TEST, R(RAX), R(RAX));
            JMP(a, JZ, noup);
            INS2(a, CMP, M(RAX, offsetof(UpVal, v), 8), R(RBASE));
            JMP(a, JNB, slow);
            bind(a, noup);
            INS2(a, CMP, M(RS, offsetof(State, ntbc), 4), I(0));
            JMP(a, JNZ, slow);
            INS2(a, TEST, M(RCI, offsetof(CallInfo, callstatus), 2), I(CIST_FRESH));
            JMP(a, JNZ, slow);
            INS2(a, CMP, M(RCI, offsetof(CallInfo, nresults), 4), I(n));
            JMP(a, JNZ, slow);
            INS2(a, MOV, R(RDI), M(RCI, offsetof(CallInfo, prev), 8));            /* caller */
            INS2(a, MOV, R(RAX), M(RDI, offsetof(CallInfo, func), 8));
            INS2(a, MOV, R(R8), M(RAX, 0, 8));                                    /* its closure */
            INS2(a, MOV, R(RSI), M(R8, offsetof(LClosure, p), 8));
            jit_code_field(c, RSI, offsetof(JitCode, at), slow);
            INS2(a, MOV, R(RDX), M(RDI, offsetof(CallInfo, savedpc), 8));
            INS2(a, SUB, R(RDX), M(RSI, offsetof(Proto, code), 8));
            INS2(a, MOV, R(RCX), MX(RCX, RDX, 1, 0, 8)); /* at[pc]: Instr and pointers are both 8 bytes */
            if (jit_prof) { /* the events of 'ret' in the instrumented interpreter */
                emit_frame_exit(c);
                INS2(a, MOV, R(RAX), M(RDI, offsetof(CallInfo, func), 8));
            }
            if (n == 1) {
                INS2(a, MOVDQA, R(XMM0), WHOLE(ra));
                INS2(a, MOV, R(RDX), M(RCI, offsetof(CallInfo, func), 8));
                INS2(a, MOVDQA, M(RDX, 0, 16), R(XMM0));
            }
            INS2(a, MOV, M(RS, offsetof(State, ci), 8), R(RDI));
            INS2(a, MOV, R(RDX), M(RDI, offsetof(CallInfo, top), 8));
            INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RDX));
            INS2(a, MOV, R(RCI), R(RDI));
            INS2(a, LEA, R(RBASE), M(RAX, 16, 8));
            INS2(a, MOV, R(RCL), R(R8));
            if (jit_prof && (vm_prof_needs & PROF_NEED_MEM) && jit_prof_kind == VM_PS_EXHAUSTIVE) {
                /* control back in the caller (rsi: its Proto): room for 2 x its ncode heap
                 * accesses, as emit_reserve for a size known only now */
                int back = new_label(a);
                INS2(a, MOVSXD, R(RDX), M(RSI, offsetof(Proto, ncode), 4));
                INS2(a, SHL, R(RDX), I(4)); /* 2 x ncode slots of 8 bytes */
                reserve_check(c, true, 0, slow_call(c, (void *)&vm_prof_frame_back, SLOW_CI, 0, back));
                bind(a, back);
            }
            INS1(a, JMP, R(RCX));
        }
        bind(a, slow);
        call_frame_helper(c, pc, jit_return, ra, n);
        break;
    }
    default:
        emit_step(c, pc, true);
        break;
    }
}

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static JitCode jit_failed; /* at == NULL: interpret this function */
static FILE *perfmap;

static void function_name(const Proto *p, char *buf, size_t n) {
    char src[80];
    if (p->source != NULL)
        vm_chunkid(src, sizeof src, p->source->data, p->source->len);
    else
        snprintf(src, sizeof src, "?");
    if (p->linedefined == 0)
        snprintf(buf, n, "main chunk %s", src);
    else
        snprintf(buf, n, "%s %s:%d", p->name ? p->name->data : "function", src, (int)p->linedefined);
}

static void dump(const Comp *c, const JitCode *jc, const uint8_t *code) {
    const Proto *p = c->p;
    char name[160];
    function_name(p, name, sizeof name);
    fprintf(stderr, "jit: %s: %d instructions, %d with a template, %zu bytes of code at %p\n", name,
            (int)p->ncode, jc->ntemplated, jc->codesize, (const void *)code);
    fprintf(stderr, "  enter: save registers, load base/ci/S/closure, jump to the entry\n");
    long ce = c->a.label[c->callentry];
    jit_disasm(stderr, code, (size_t)ce, "      ");
    if (ce < c->a.label[0]) {
        fprintf(stderr, "  call entry: the frame's events (EV_CALL enqueued inline: cursor load, CLEAR test, "
                        "branch, store, advance), path register, room for heap accesses\n");
        jit_disasm(stderr, code + ce, (size_t)(c->a.label[0] - ce), "      ");
    }
    for (int pc = 0; pc < c->n; pc++) {
        vm_bytecode_list_instr(stderr, p, pc);
        long from = c->a.label[pc], to = pc + 1 < c->n ? c->a.label[pc + 1] : (long)c->templates_end;
        if (!c->tmpl[pc]) fprintf(stderr, "      ; step: no template, the interpreter runs it (vm_jit_step)\n");
        jit_disasm(stderr, code + from, (size_t)(to - from), "      ");
    }
    fprintf(stderr, "  out of line: steps where guards fail, back-edge polls, frame switches, epilogue\n");
    jit_disasm(stderr, code + c->templates_end, c->a.len - c->templates_end, "      ");
    fflush(stderr);
}

static JitCode *compile_locked(Proto *p) {
    Comp c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.n = p->ncode;
    if (c.n <= 0) return &jit_failed;
    JitCode *jc = NULL;
    c.stepused = calloc((size_t)c.n, sizeof *c.stepused);
    c.pollslow = malloc((size_t)c.n * sizeof *c.pollslow);
    c.backedge = malloc((size_t)c.n * sizeof *c.backedge);
    const void **at = calloc((size_t)c.n, sizeof *at);
    bool *tmpl = calloc((size_t)c.n, sizeof *tmpl);
    if (!c.stepused || !c.pollslow || !c.backedge || !at || !tmpl) goto fail;
    c.at = at;
    c.tmpl = tmpl;
    for (int pc = 0; pc < c.n; pc++) c.pollslow[pc] = c.backedge[pc] = -1;
    Asm *a = &c.a;
    for (int pc = 0; pc < c.n; pc++) new_label(a);               /* labels 0 .. n-1: templates */
    c.step0 = a->nlabel;
    for (int pc = 0; pc < c.n; pc++) new_label(a);               /* n .. 2n-1: steps of failed guards */
    c.epilogue = new_label(a);
    c.sw = new_label(a);
    c.resume = new_label(a);
    c.fresh = new_label(a);
    c.dispatch = new_label(a);
    c.callentry = new_label(a);
    if (a->failed) goto fail;

    if (jit_prof) {
        c.fid = prof_id(p);
        c.pathbias = (vm_prof_needs & PROF_NEED_PATH) ? vm_pathprof_bias(p, c.fid) : VM_PATH_OFF;
    }
    /* Which pcs have a template; a test's JMP must follow it (the verifier guarantees it). */
    int ntemplated = 0;
    for (int pc = 0; pc < c.n; pc++) {
        unsigned op = vm_op(p->code[pc]);
        bool t = has_template(p, pc);
        if (t && op >= OP_EQ && op <= OP_TESTSET && (pc + 1 >= c.n || vm_op(p->code[pc + 1]) != OP_JMP)) t = false;
        if (t && op >= OP_EQ && op <= OP_TESTSET && c.pathbias != VM_PATH_OFF && vm_sbx(p->code[pc + 1]) == 0)
            t = false; /* both outcomes one target: the step tells them apart (target_label) */
        tmpl[pc] = t;
        ntemplated += t;
    }

    /* Prologue (enter): rdi = S, rsi = ci, rdx = base, rcx = target. Five pushes after the
     * return address leave rsp 16-byte aligned for calls to C. */
    INS1(a, PUSH, R(RPS));
    INS1(a, PUSH, R(RBASE));
    INS1(a, PUSH, R(RCI));
    INS1(a, PUSH, R(RS));
    INS1(a, PUSH, R(RCL));
    INS2(a, MOV, R(RS), R(RDI));
    INS2(a, MOV, R(RCI), R(RSI));
    INS2(a, MOV, R(RBASE), R(ZYDIS_REGISTER_RDX));
    INS2(a, MOV, R(RAX), M(RSI, offsetof(CallInfo, func), 8));
    INS2(a, MOV, R(RCL), M(RAX, 0, 8)); /* func->u.lf */
    load_stream(&c);
    INS1(a, JMP, R(RCX));

    /* Where compiled calls enter (JitCode.callentry): while profiling, the frame's EV_CALL,
     * then pc 0. A compiled call is made by a Lua frame, so the event is never "from C". */
    bind(a, c.callentry);
    if (jit_prof) emit_frame_start(&c);

    for (int pc = 0; pc < c.n; pc++) {
        bind(a, L(&c, pc));
        if (pc == 0) {
            /* function entry safepoint (jit/README.md: the same poll as the interpreter's) */
            int go = new_label(a);
            load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_word);
            INS2(a, CMP, M(RAX, 0, 4), I(0));
            JMP(a, JZ, go);
            load_imm64(&c, RAX, (uint64_t)(uintptr_t)p->code);
            INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
            INS2(a, MOV, R(RDI), R(RS));
            load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_slow);
            INS1(a, CALL, R(RAX));
            reload_base(&c);
            bind(a, go);
        }
        if (tmpl[pc])
            emit_template(&c, pc);
        else
            emit_step(&c, pc, true);
    }
    /* Out of line: steps of failed guards, back-edge polls, the epilogue. */
    c.templates_end = a->len;
    for (int pc = 0; pc < c.n; pc++) {
        if (!c.stepused[pc]) continue;
        bind(a, c.step0 + pc);
        emit_step(&c, pc, false);
    }
    for (int pc = 0; pc < c.n; pc++) {
        if (c.backedge[pc] < 0) continue;
        bind(a, c.backedge[pc]);
        poll_then_jump(&c, pc);
    }
    for (int pc = 0; pc < c.n; pc++) {
        if (c.pollslow[pc] < 0) continue;
        bind(a, c.pollslow[pc]);
        load_imm64(&c, RAX, (uint64_t)(uintptr_t)(p->code + pc));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
        INS2(a, MOV, R(RDI), R(RS));
        load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_slow);
        INS1(a, CALL, R(RAX));
        reload_base(&c);
        JMP(a, JMP, L(&c, pc));
    }
    /* After a step that may jump (a test, a generic for, a float loop): poll, since the jump
     * may be a back edge, then go on at the pc in rax through the table of code addresses. */
    {
        int go = new_label(a), slow = new_label(a);
        bind(a, c.dispatch);
        load_imm64(&c, RCX, (uint64_t)(uintptr_t)&vm_poll_word);
        INS2(a, CMP, M(RCX, 0, 4), I(0));
        JMP(a, JNZ, slow);
        bind(a, go);
        load_imm64(&c, RCX, (uint64_t)(uintptr_t)p->code);
        INS2(a, SUB, R(RAX), R(RCX));
        load_imm64(&c, RCX, (uint64_t)(uintptr_t)at);
        INS1(a, JMP, MX(RCX, RAX, 1, 0, 8)); /* at[pc]: Instr and pointers are both 8 bytes */
        bind(a, slow);
        INS2(a, MOV, R(RDI), R(RS));
        load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_slow);
        INS1(a, CALL, R(RAX));
        reload_base(&c);
        INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, savedpc), 8));
        JMP(a, JMP, go);
    }
    /* Calls and returns: switch to the frame S->ci (ci, base, closure) and jump to rax. */
    bind(a, c.sw);
    INS2(a, MOV, R(RCI), M(RS, offsetof(State, ci), 8));
    INS2(a, MOV, R(RBASE), M(RCI, offsetof(CallInfo, func), 8));
    INS2(a, MOV, R(RCL), M(RBASE, 0, 8)); /* func->u.lf */
    INS2(a, ADD, R(RBASE), I(16));
    load_stream(&c); /* after a helper in C (jit_call may have run a C function) */
    INS1(a, JMP, R(RAX));
    emit_edge_stubs(&c);
    emit_slow_stubs(&c);
    /* The interpreter continues S->ci at its savedpc (the epilogue stores it back, unchanged). */
    bind(a, c.resume);
    INS2(a, MOV, R(RCI), M(RS, offsetof(State, ci), 8));
    INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, savedpc), 8));
    JMP(a, JMP, c.epilogue);
    /* A CIST_FRESH frame returned: give NULL back without touching its savedpc. */
    bind(a, c.fresh);
    INS2(a, XOR, R(EAX), R(EAX));
    INS1(a, POP, R(RCL));
    INS1(a, POP, R(RS));
    INS1(a, POP, R(RCI));
    INS1(a, POP, R(RBASE));
    INS1(a, POP, R(RPS));
    INS0(a, RET);
    bind(a, c.epilogue);
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    INS1(a, POP, R(RCL));
    INS1(a, POP, R(RS));
    INS1(a, POP, R(RCI));
    INS1(a, POP, R(RBASE));
    INS1(a, POP, R(RPS));
    INS0(a, RET);
    patch(a);
    if (a->failed) goto fail;

    size_t mapped;
    uint8_t *mem = jit_mem_publish(a->buf, a->len, &mapped);
    if (mem == NULL) goto fail;
    jc = malloc(sizeof *jc);
    if (jc == NULL) {
        munmap(mem, mapped);
        goto fail;
    }
    for (int pc = 0; pc < c.n; pc++) at[pc] = mem + a->label[pc]; /* before jc is published */
    jc->enter = (JitEnterFn)(void *)mem;
    jc->at = at;
    jc->callentry = mem + a->label[c.callentry];
    jc->mem = mem;
    jc->memsize = mapped;
    jc->codesize = a->len;
    jc->ntemplated = ntemplated;
    if (jit_opts.dump) dump(&c, jc, mem);
    if (jit_opts.perfmap) {
        if (perfmap == NULL) {
            char path[64];
            snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
            perfmap = fopen(path, "w");
        }
        if (perfmap != NULL) {
            char name[160];
            function_name(p, name, sizeof name);
            fprintf(perfmap, "%lx %zx lua:%s\n", (unsigned long)(uintptr_t)mem, a->len, name);
            fflush(perfmap);
        }
    }
    at = NULL;
fail:
    free(at);
    free(c.stepused);
    free(c.pollslow);
    free(c.backedge);
    free(tmpl);
    if (jc == NULL && jit_opts.dump) {
        char name[160];
        function_name(p, name, sizeof name);
        fprintf(stderr, "jit: %s: not compiled (%s%s%s), interpreted\n", name, c.a.why ? c.a.why : "out of memory",
                c.a.why && c.a.whymn ? ": " : "", c.a.why && c.a.whymn ? ZydisMnemonicGetString((ZydisMnemonic)c.a.whymn) : "");
    }
    free(c.edge);
    free(c.slow);
    free(c.a.buf);
    free(c.a.label);
    free(c.a.fix);
    return jc ? jc : &jit_failed;
}

const JitCode *jit_compile(Proto *p) {
    pthread_mutex_lock(&jit_lock);
    JitCode *jc = p->jit; /* another thread may have compiled it while we waited */
    if (jc == NULL) {
        jc = compile_locked(p);
        __atomic_store_n(&p->jit, jc, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&jit_lock);
    return jc;
}
