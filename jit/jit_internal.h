/* jit_internal.h: what the files of jit/ share and nothing outside jit/ sees: the compiler
 * state (Comp), the register convention, the helpers templates call across files and the
 * templates themselves (tpl_*), which jit_compile.c's template table lists by opcode.
 *
 * A Proto is compiled whole: one template per bytecode instruction, laid out in bytecode
 * order, each starting at a label of its pc. An instruction without a template compiles to a
 * step: the interpreter runs it (vm_jit_step) and compiled code goes on. A template's type
 * guards jump to an out-of-line step of the instruction's own pc, so the interpreter executes
 * the whole instruction (templates write nothing before their guards have passed). Calls and
 * returns between compiled frames switch frames without leaving compiled code. Instructions
 * are assembled by Zydis's encoder (jit_asm.h); branches are always emitted in their rel32
 * form and patched once every label is placed.
 *
 * Register convention inside compiled code (System V callee-saved, so calls to C helpers
 * keep them): rbx = base (the frame's R[0]), r12 = ci, r13 = S, r15 = the LClosure, r14 =
 * the profiling stream while profiling. rax, rcx, rdx, rsi, rdi, r8, r9, xmm0, xmm1 are
 * scratch. */
#ifndef JIT_INTERNAL_H
#define JIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jit_api.h"
#include "jit_asm.h"
#include "ev_api.h"
#include "vm_meta.h"
#include "vm_opcodes.h"
#include "vm_state.h"

/* ======================================================================
 * Configuration (jit_configure, jit_compile.c)
 * ====================================================================== */

extern JitOptions jit_opts;

/* Profiling under the JIT (cli/cli_main.c says which analyses): compiled code emits the events
 * the instrumented interpreter would (jit/README.md), calls made through C helpers have
 * theirs from the VM (vm_prof_frame_start and friends).
 * The thread's stream (vm_prof_tl) is kept in r14, read from thread-local storage (a %fs
 * offset, the same for every thread) at entry and after every call into C, since a green
 * thread may come back on another carrier. */
extern bool jit_prof;          /* the code being compiled emits events. Read only while compiling
                                  (under the JIT's lock): with -Xsample.mode=code it is set for
                                  the compilation of an instrumented twin only (jit_window) */
extern bool jit_events;        /* at run time, for the C helpers (jit_frame.c): the run's
                                  compiled code (p->jit) emits events: exhaustive profiling */
extern int jit_prof_kind;      /* VM_PS_*: which inline enqueue, if any */
extern int64_t jit_tls_stream; /* &vm_prof_tl - the thread pointer */
extern bool jit_sample;        /* -Xsample.mode=code: compiled code (p->jit) is uninstrumented
                                  and counts sampling ticks (jit_sample_tick) */
extern int64_t jit_tls_sample; /* &vm_sample_tl - the thread pointer */
/* Compiling an instrumented twin (p->jitwin, jit_compile_window; under the JIT's lock, with
 * jit_prof and jit_sample set): the exhaustive code's events, with sampling windows' rules
 * (vm/prof/vm_sample.h): ticks that end the window, a frame's start stamped with its window,
 * adoption and partial paths at the path events, the twins' call helpers and steps, and a
 * check after each poll that the window is still this state's. */
extern bool jit_window;

/* ======================================================================
 * The compiler's state
 * ====================================================================== */

/* The register convention (above): the frame's state, then scratch registers. */
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
#define R10 ZYDIS_REGISTER_R10
#define R11 ZYDIS_REGISTER_R11
#define XMM0 ZYDIS_REGISTER_XMM0
#define XMM1 ZYDIS_REGISTER_XMM1

/* R[x]'s payload and tag as memory operands. */
#define VAL(x) M(RBASE, 16 * (int64_t)(x), 8)
#define TAG(x) M(RBASE, 16 * (int64_t)(x) + (int64_t)offsetof(Value, tt), 4)
#define WHOLE(x) M(RBASE, 16 * (int64_t)(x), 16)

/* One compilation (compile_locked, under the JIT's lock): the code being assembled, the
 * labels templates jump to, the out-of-line pieces to place after the templates. Every
 * array is owned by compile_locked and freed before it returns, except at, which becomes
 * JitCode.at. */
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
                       /* out-of-line calls of profiling slow paths (jit_emit_slow_stubs) */
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
    int *samplestub;   /* -Xsample.mode=code, per back-edge target: the out-of-line exit to the
                          interpreter when a tick ends the gap, or -1 */
    int sampleentry, samplestep; /* the same at callentry and after a step (0: none) */
    struct JitFieldIC *ic; /* the inline caches of the string-key field sites (jit_ic.c), one
                          per site in pc order; becomes JitCode.ic */
    int nic, capic;    /* sites given a cache so far (jit_ic_site), and room: the sites
                          jit_ic_wanted counted (the two agree, or the compiler has a bug) */
    int icchain;       /* label: the __index chain walker (jit_emit_ic_chain), or -1 unused */
    uint8_t *kt;       /* the known types (jit_types.c): kt[pc * nkt + r] is what R[r] holds
                          before pc (KT_*), or NULL: nothing known */
    int nkt;           /* registers per pc in kt */
    int *guard;        /* per pc: the label of its guarded entry (jit_entry), or -1: nothing
                          known there */
    size_t templates_end;
} Comp;

/* Known types of registers (jit_types.c): none, an integer, a float, a number of either kind. */
enum { KT_NONE, KT_INT, KT_FLT, KT_NUM };

/* What R[r] is known to hold before the instruction at [pc]. */
static inline uint8_t jit_kt(const Comp *c, int pc, int r) {
    return c->kt != NULL && r >= 0 && r < c->nkt && pc < c->n ? c->kt[(size_t)pc * (size_t)c->nkt + (size_t)r] : KT_NONE;
}

/* The analysis, after c->tmpl is filled: c->kt (or NULL), c->nkt. */
void jit_types_analyse(Comp *c);
/* Whether anything is known before [pc]. */
bool jit_kt_any(const Comp *c, int pc);
/* The label where code continues at [pc] after anything but its own fall-through or jump
 * from a template (a step, a poll's slow path): its guarded entry when facts are known there,
 * else its template. JitCode.at holds the same entries. */
int jit_entry(Comp *c, int pc);
/* The guarded entries, out of line: the facts tested, else the instruction stepped. */
void jit_emit_guards(Comp *c);
/* -Xstats: how many guarded entries failed (jit_print_stats calls it). */
void jit_types_print_stats(FILE *out);
/* -Xdump=jit: the facts known before [pc], on one line (nothing when none). */
void jit_dump_known(const Comp *c, int pc);

static inline int L(Comp *c, int pc) { return pc; } /* the label of pc's template is pc */

/* The out-of-line step of [pc], where its template's failed guards go. */
static inline int STEP(Comp *c, int pc) {
    c->stepused[pc] = true;
    return c->step0 + pc;
}

static inline void load_imm64(Comp *c, ZydisRegister r, uint64_t v) { INS2(&c->a, MOV, R(r), I((int64_t)v)); }

/* edx = the tag of the Value copy in [xmm] (loaded whole: tag and payload are of one store;
 * other threads may write the slot it came from, so decisions are made on the copy, which
 * is then what gets stored). PEXTRW, one SSE2 instruction (a shuffle and a move took two),
 * takes Value.tt's low 16-bit word: every tag is below VT_NTAGS, so that is the whole tag. */
static inline void jit_copy_tag(Comp *c, ZydisRegister xmm) {
    _Static_assert(VT_NTAGS <= 0x10000 && offsetof(Value, tt) % 2 == 0, "a tag is Value.tt's low 16-bit word");
    jit_ins3(&c->a, ZYDIS_MNEMONIC_PEXTRW, R(ZYDIS_REGISTER_EDX), R(xmm), I(offsetof(Value, tt) / 2));
}

/* ======================================================================
 * Code memory (jit_mcode.c; jit_mem_publish and jit_disasm are in jit_api.h)
 * ====================================================================== */

/* The line "START SIZE lua:[name]" of the [n] bytes at [code] appended to
 * /tmp/perf-PID.map (-Xjit.perfmap), which perf report reads; nothing if it cannot be opened. */
void jit_perfmap_add(const void *code, size_t n, const char *name);

/* ======================================================================
 * Steps, safepoints, base and stream (jit_step.c)
 * ====================================================================== */

/* r14 = this thread's profiling stream (vm_prof_tl), while profiling. */
void jit_load_stream(Comp *c);

/* Re-derive base after a call that may have moved the stack (the interpreter's Protect),
 * and the stream. */
void jit_reload_base(Comp *c);

/* Back-edge safepoint, then on to pc [target]: the slow path is out of line. */
void jit_poll_then_jump(Comp *c, int target);

/* -Xsample.mode=code (vm/prof/vm_sample.h): the tick of a back edge to [target] (the
 * interpreter's: backward JMP, FORLOOP; not the conditional tests, which the interpreter
 * does not poll), `dec qword fs:[left]; jle stub`; the stub (jit_emit_sample_stubs) gives
 * the frame to the interpreter at [target] with at = VM_SAMPLE_AT_BACK. Nothing otherwise. */
void jit_sample_tick(Comp *c, int target);
/* The same at a frame's entry (callentry), its stub placed at once, out of line. */
void jit_sample_entry_tick(Comp *c);
/* After a step (c->dispatch, rax = the pc): a step of a float FORLOOP or TFORLOOP counted its
 * tick in vm_jit_step; if it ended the gap, give the frame to the interpreter at rax. */
void jit_sample_after_step(Comp *c);
void jit_emit_sample_stubs(Comp *c);

/* Instrumented twins only (jit_window; nothing otherwise), each using rax (but the first):
 * jit_window_after_poll: after vm_poll_slow or a step (ci->savedpc is where the frame
 *   stands): if the state is no longer in this thread's window (a green thread switch, a
 *   metamethod's nested run that ended the window or began another), give the frame to the
 *   interpreter, which switches copies. Uses ecx;
 * jit_window_call_guard: in an inline call's guards: to [slow] when the callee's entry tick
 *   will end the window (its call site must not be enqueued then: jit_call_window ticks first);
 * jit_window_stamp: at a frame's start, after its events: the frame's path is whole, in this
 *   window (ci->samplewin, CIST_SAMPLEPART cleared), as the instrumented sampling copy's
 *   startfunc;
 * jit_window_own: before a path event of the frame in r12: vm_sample_adopt (out of line) when
 *   the frame was not yet met in this window;
 * jit_window_partial: after jit_window_own: to [skip] (CIST_SAMPLEPART cleared on the way)
 *   when the frame's path began before the window, so its path event is not enqueued. */
void jit_window_after_poll(Comp *c);
void jit_window_call_guard(Comp *c, int slow);
void jit_window_stamp(Comp *c);
void jit_window_own(Comp *c);
void jit_window_partial(Comp *c, int skip);

/* Before a call into C that may raise or collect, as the interpreter's Protect: savedpc after
 * [pc], S->top = ci->top; then rdi = S. Uses rax. */
void jit_emit_protect(Comp *c, int pc);

/* The instruction at [pc] run by the interpreter (vm_jit_step); [inline_next]: the next
 * template follows, so an instruction that never jumps falls through to it. */
void jit_emit_step(Comp *c, int pc, bool inline_next);

/* ======================================================================
 * Operands of arithmetic and comparisons (jit_tpl_arith.c)
 * ====================================================================== */

/* An operand of an arithmetic template: a register or a numeric constant. */
typedef struct Src {
    int reg;          /* >= 0: R[reg]; -1: constant */
    bool isint;       /* constant: integer (else float) */
    int64_t i;
    double f;
} Src;

static inline Src src_reg(int r) { return (Src){r, false, 0, 0}; }
static inline Src src_const(const Value *v) {
    Src s = {-1, v->tt == VT_INT, 0, 0};
    if (s.isint) s.i = v->u.i;
    else s.f = v->u.n;
    return s;
}
static inline Src src_int(int64_t i) { return (Src){-1, true, i, 0}; }

static inline bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* xmm := the operand as a double; a non-number register is stepped at [pc]. */
void jit_load_num(Comp *c, ZydisRegister xmm, Src s, int pc);

/* ======================================================================
 * Profiling code (jit_tpl_prof.c); each emits nothing when not profiling or when no analysis
 * needs it
 * ====================================================================== */

/* The function's id in profiles (given on first use). */
uint32_t jit_prof_id(Proto *p);

/* Enqueue the event in rdx into the thread's stream (r14). Uses rax. */
void jit_emit_enqueue(Comp *c);

/* EV_LOAD / EV_STORE [kind] of the heap address [addr + disp] by the instruction at [pc]
 * (with its EV_PC when PROF_NEED_PC). Uses rax, rdx. */
void jit_emit_mem(Comp *c, EvKind kind, ZydisRegister addr, int64_t disp, int pc);

/* cab_reserve's check inline for [bytes] (or, [in_rdx], rdx bytes) of room; else to [slow]. */
void jit_reserve_check(Comp *c, bool in_rdx, int64_t bytes, int slow);

/* At a safepoint: room for the heap-access events up to the next one. Uses rax. */
void jit_emit_reserve(Comp *c);

/* The Ball-Larus action of outcome [o] of the branch at [pc], inline. */
void jit_emit_path_action(Comp *c, int pc, unsigned o);

/* The label a branch of [from] with outcome [o] goes to on its way to [label]: [label], or a
 * stub applying the path action (placed by jit_emit_edge_stubs). */
int jit_edge_label(Comp *c, int from, unsigned o, int label);
void jit_emit_edge_stubs(Comp *c);

/* A call into C out of line that keeps every caller-saved register: [fn](rdi), rdi being
 * rdx (SLOW_RDX), r12 (SLOW_CI) or [imm] (SLOW_IMM), then back to [back]; its label.
 * jit_emit_slow_stubs places them all. */
enum { SLOW_RDX, SLOW_CI, SLOW_IMM };
int jit_slow_call(Comp *c, void *fn, int arg, uint64_t imm, int back);
void jit_emit_slow_stubs(Comp *c);

/* A frame's start at a compiled call's entry (r12 = the new frame), and its exit at a compiled
 * return (r12 = the frame returning): the instrumented interpreter's events. */
void jit_emit_frame_start(Comp *c);
void jit_emit_frame_exit(Comp *c);
/* At the start of every instruction's code, while an analysis needs costs: one more
 * instruction in the stream's count (VmProfStream.icount, as COUNT_INSTR in the interpreter). */
void jit_emit_count(Comp *c);

/* ======================================================================
 * Inline caches of string-key field accesses (jit_ic.c)
 * ======================================================================
 * One JitFieldIC per GETFIELD, GETTABUP, SELF (constant key), SETFIELD and SETTABUP site:
 * where its key was last found, as positions (hash + nodes stepped over, used masked with
 * the table's hmask: vm_table_getstr_at), never as pointers. The code trusts no entry: each
 * probe re-reads the table's current mask and block, the node's key whole, and accepts only
 * the site's own key (the interned constant, by identity); a wrong or stale position just
 * misses. So the cache needs no invalidation, holds nothing the collector must see, and any
 * thread may rewrite it at any time (relaxed 32-bit stores in the miss handlers). */
typedef struct JitFieldIC {
    String *key;                      /* the site's constant key (kept alive by p->k) */
    uint32_t pos[VM_INDEX_INLINE + 1];/* pos[L]: key's position in the table at level L of
                                         the __index chain (level 0: the table indexed) */
    uint32_t mpos[VM_INDEX_INLINE];   /* mpos[L]: "__index"'s position in the metatable of the
                                         table at level L */
    uint32_t tabup;                   /* GETTABUP: results from the chain have the table's
                                         event, as the interpreter's FINISHGET gives them */
    uint32_t alt[VM_INDEX_INLINE + 1];/* alt[L]: the position pos[L] held before the last one
                                         found (a second layout seen at the site) */
} JitFieldIC;

/* Whether the instruction at [pc] gets an inline cache (the templates of jit_tpl_table.c that
 * take one), and the next cache for it, initialised, at compilation. */
bool jit_ic_wanted(const Comp *c, int pc);
JitFieldIC *jit_ic_site(Comp *c, String *key, bool tabup);

/* rax = the node at position [where] (a word of the site's JitFieldIC, in r10, or a hash) of
 * the hash part of table [t]: the position masked with t->hmask, read before t->node (the
 * rule of vm_table_hpart). Uses rcx. */
void jit_ic_node(Comp *c, ZydisRegister t, Op where);
/* To [miss] unless node rax holds the String [key] (a register, or a memory operand), read
 * whole. Uses rdx, xmm0. */
void jit_ic_key_is(Comp *c, Op key, int miss);
/* r10 = the site's cache [ic], r8 = its key: what the probes below and the chain walker use. */
void jit_ic_site_regs(Comp *c, const JitFieldIC *ic);
/* The key (r8) at position [disp](r10) of table [t], else at the position alt[] holds for
 * the same level, else at its home node (hash [h], an immediate or a register): rax = its
 * value slot, and to [live] when the value is not nil, on (falling through) when it is (a
 * dead key), to [notkey] when all three nodes hold other keys. With [copy] (reads) the value
 * is loaded whole into xmm0 and the decision is made on that copy, which the reader then
 * uses: another thread may remove the key (store nil) at any time, and a read that tested the
 * slot and loaded it again could take a nil past the test that sent it on (the __index chain
 * would have gone on to a class). Without [copy] (stores, which write the slot and read
 * nothing from it) the tag is tested in place. Uses rcx, rdx, xmm0. */
void jit_ic_find(Comp *c, ZydisRegister t, int64_t disp, Op h, int notkey, int live, bool copy);
/* To [maybe] unless the key filter of table [t]'s current block proves key hash [h] absent
 * (vm_table_maybe_has). Uses rax. */
void jit_ic_filter(Comp *c, ZydisRegister t, uint32_t h, int maybe);

/* The __index chain walker, out of line, called (a near call: it calls nothing, so the stack
 * needs no alignment) with rdi = a table whose own node for the key is nil or absent, r8 =
 * the key, r10 = the site's JitFieldIC, r11d = the key's hash: rax = the slot of the first
 * table up the chain where the key's value is not nil and xmm0 = that value, loaded once
 * (the copy the walk decided on: the caller stores it, never the slot's value again);
 * rax = &vm_absent and xmm0 = its nil when the chain ends (the value is nil); rax = 0 when
 * the caches miss or the chain needs the interpreter. The same walk as vm_index_str_at,
 * through the cached positions; on a miss, ecx = why (IC_MISS_*). Uses rcx, rdx, rsi, rdi,
 * xmm0; keeps r8 to r11. Placed once per function (c->icchain). */
void jit_emit_ic_chain(Comp *c);

/* The miss handlers, in C. jit_ic_get: t[key] as far as the interpreter's GETFIELD does it
 * without a metamethod call (t's node, then vm_index_str_at), the positions found stored in
 * the cache. Returns the value (in xmm0), loaded whole once and decided on as the
 * interpreter's GETFIELD decides on its copy; *ev = the address of its EV_LOAD (the slot, or
 * t for the chain's nil and, for GETTABUP, anything from the chain), or NULL when the
 * instruction is stepped (the returned value is then meaningless). jit_ic_slot:
 * vm_table_slotstr through the cache. Neither raises nor allocates. */
/* Why a read missed, counted for -Xstats (jit_print_stats): the machine code puts it in ecx,
 * jit_ic_get's fourth argument. ORDER ICMISS: jit_ic.c's names. */
enum {
    IC_MISS_KEY,      /* the key not at its cached node of the table indexed, and its filter bit set */
    IC_MISS_INDEX,    /* "__index" not at its cached node of a metatable */
    IC_MISS_NOTTABLE, /* __index holds no table (a function, a string, a dead nil) */
    IC_MISS_CHAIN,    /* the key not at its cached node up the chain, and its filter bit set */
    IC_MISS_DEEP,     /* the key in none of the VM_INDEX_INLINE tables up the chain */
    IC_MISS_STORE,    /* a store's key not at its cached node, and its filter bit set */
    IC_MISS_N
};
vm_V16 jit_ic_get(State *S, Table *t, JitFieldIC *ic, int why, const void **ev);
Value *jit_ic_slot(Table *t, JitFieldIC *ic);

/* ======================================================================
 * Helpers compiled code calls (jit_frame.c): each returns 0 (go on in this frame, or a
 * CIST_FRESH frame returned), 1 (the interpreter continues S->ci) or the code to enter in
 * the frame S->ci
 * ====================================================================== */

uintptr_t jit_call(State *S, CallInfo *ci, Value *ra, int nresults);
uintptr_t jit_return(State *S, CallInfo *ci, int a, int n);
uintptr_t jit_tailcall(State *S, CallInfo *ci, int a, int b);
/* The same for the instrumented twins (jit_window): the sampling copy's frame events
 * (vm_sample_frame_start / _exit: ticks first, stamps, partial paths), the callee's or
 * caller's twin, and after a C function a return to the interpreter when the window is no
 * longer this state's. */
uintptr_t jit_call_window(State *S, CallInfo *ci, Value *ra, int nresults);
uintptr_t jit_return_window(State *S, CallInfo *ci, int a, int n);
uintptr_t jit_tailcall_window(State *S, CallInfo *ci, int a, int b);

/* ======================================================================
 * Templates, one per opcode or group of opcodes, listed by opcode in jit_compile.c's table
 * ====================================================================== */

/* A template: emits the code of instruction [i] at [pc] of [p] into [a] (c->p and &c->a,
 * given as the switch that preceded the table had them), [ra] being its A operand. */
typedef void TplEmit(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra);

/* Whether the instruction at [pc] has a template, for opcodes where its operands decide. */
typedef bool TplOk(const Comp *c, int pc);

/* jit_tpl_move.c */
TplEmit tpl_move, tpl_loadk, tpl_loadi, tpl_loadf, tpl_loadnil, tpl_loadfalse, tpl_loadtrue;

/* jit_tpl_arith.c. tpl_arith: ADD SUB MUL DIV BAND BOR BXOR and their K forms, with
 * tpl_arithk_ok (ADDK SUBK MULK DIVK) and tpl_bitk_ok (BANDK BORK BXORK); tpl_mod: MOD, MODK. */
TplEmit tpl_addi, tpl_arith, tpl_mod, tpl_unm, tpl_not, tpl_len;
TplOk tpl_arithk_ok, tpl_bitk_ok, tpl_modk_ok;

/* jit_tpl_branch.c. tpl_lt: LT, LE; tpl_cmpi: LTI LEI GTI GEI; tpl_eqk: EQK, EQI;
 * tpl_cond_ok: every test (EQ .. TESTSET); tpl_eqk_ok: EQK. */
TplEmit tpl_jmp, tpl_lt, tpl_cmpi, tpl_eq, tpl_eqk, tpl_test, tpl_testset;
TplOk tpl_cond_ok, tpl_eqk_ok;

/* jit_tpl_table.c. tpl_upval: GETUPVAL, SETUPVAL; tpl_gettable: GETTABLE, GETI; tpl_settable:
 * SETTABLE, SETI; tpl_getfield: GETFIELD, GETTABUP; tpl_setfield: SETFIELD, SETTABUP;
 * tpl_self: SELF with a constant string key. */
TplEmit tpl_upval, tpl_gettable, tpl_settable, tpl_getfield, tpl_setfield, tpl_newtable, tpl_self;
TplOk tpl_geti_ok, tpl_seti_ok, tpl_self_ok;

/* jit_tpl_call.c. tpl_return: RETURN, RETURN0, RETURN1. */
TplEmit tpl_call, tpl_tailcall, tpl_return, tpl_forprep, tpl_forloop, tpl_tforcall, tpl_tforloop, tpl_concat,
    tpl_closure;
TplOk tpl_tforcall_ok;

#endif
