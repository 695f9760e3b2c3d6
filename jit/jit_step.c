/* jit_step.c: the sequences every template and the driver share: steps through the
 * interpreter, safepoint polls on back edges, re-deriving base and the profiling stream. */
#include "jit_internal.h"

#include "vm_do.h"
#include "vm_sample.h"
#include "vm_thread.h"

/* r14 = this thread's profiling stream (vm_prof_tl), while profiling. */
void jit_load_stream(Comp *c) {
    if (!jit_prof) return;
    ZydisEncoderRequest r; /* mov r14, fs:[offset] */
    memset(&r, 0, sizeof r);
    r.mnemonic = ZYDIS_MNEMONIC_MOV;
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    r.operand_count = 2;
    r.operands[0] = R(RPS);
    r.operands[1] = M(ZYDIS_REGISTER_NONE, jit_tls_stream, 8);
    jit_encode(&c->a, &r);
}

/* Re-derive base after a call that may have moved the stack (the interpreter's Protect). */
void jit_reload_base(Comp *c) {
    INS2(&c->a, MOV, R(RBASE), M(RCI, offsetof(CallInfo, func), 8));
    INS2(&c->a, ADD, R(RBASE), I(16));
    jit_load_stream(c); /* the call may have moved this green thread to another carrier */
}

/* Back-edge safepoint: the interpreter's POLL, one load and compare-and-branch; the slow
 * path (out of line) stores savedpc and calls vm_poll_slow, then continues at [target]. */
void jit_poll_then_jump(Comp *c, int target) {
    jit_emit_reserve(c); /* a back edge: room for the loop body's heap accesses */
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_poll_word);
    INS2(&c->a, CMP, M(RAX, 0, 4), I(0));
    if (c->pollslow[target] < 0) c->pollslow[target] = jit_new_label(&c->a);
    JMP(&c->a, JNZ, c->pollslow[target]);
    JMP(&c->a, JMP, L(c, target));
}

/* ---- sampled instrumentation (-Xsample.mode=code, vm/prof/vm_sample.h) ---------------------- */

/* [mn] on the thread's sampling state: [fs:vm_sample_tl + disp], [size] bytes, with the
 * immediate [imm] as second operand when [nops] is 2. */
static void sample_fs(Comp *c, ZydisMnemonic mn, int nops, int64_t disp, unsigned size, int64_t imm) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = mn;
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    r.operand_count = (ZyanU8)nops;
    r.operands[0] = M(ZYDIS_REGISTER_NONE, jit_tls_sample + disp, size);
    if (nops == 2) r.operands[1] = I(imm);
    jit_encode(&c->a, &r);
}

/* The tick: one decrement of the countdown in memory and one branch, all that profiling
 * costs compiled code between windows. A twin (inside windows only) also counts its ticks
 * for -Xstats (VmSampleTl.injit), before the decrement whose flags the branch reads. */
static void tick(Comp *c, int stub) {
    if (jit_window) sample_fs(c, ZYDIS_MNEMONIC_ADD, 2, offsetof(VmSampleTl, injit), 8, 1);
    sample_fs(c, ZYDIS_MNEMONIC_DEC, 1, offsetof(VmSampleTl, left), 8, 0);
    JMP(&c->a, JLE, stub);
}

/* The exit to the interpreter: [at] (VM_SAMPLE_AT_*) for the trampoline, the frame's
 * savedpc = p->code + [pc] (or rax when [pc] < 0), then 'resume' (the interpreter continues
 * S->ci at its savedpc, vm_interp_body.h's JITENTER sees the countdown at 0). */
static void sample_exit(Comp *c, int at, int pc) {
    Asm *a = &c->a;
    if (at != VM_SAMPLE_AT_MID) sample_fs(c, ZYDIS_MNEMONIC_MOV, 2, offsetof(VmSampleTl, at), 1, at);
    if (pc >= 0) load_imm64(c, RAX, (uint64_t)(uintptr_t)(c->p->code + pc));
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    JMP(a, JMP, c->resume);
}

void jit_sample_tick(Comp *c, int target) {
    if (!jit_sample) return;
    if (c->samplestub[target] < 0) c->samplestub[target] = jit_new_label(&c->a);
    tick(c, c->samplestub[target]);
}

/* The stubs go out of line (jit_emit_sample_stubs): the fall-through is the tick alone. */
void jit_sample_entry_tick(Comp *c) {
    if (!jit_sample) return;
    c->sampleentry = jit_new_label(&c->a);
    tick(c, c->sampleentry);
}

void jit_sample_after_step(Comp *c) {
    if (!jit_sample) return;
    c->samplestep = jit_new_label(&c->a);
    sample_fs(c, ZYDIS_MNEMONIC_CMP, 2, offsetof(VmSampleTl, left), 8, 0);
    JMP(&c->a, JLE, c->samplestep);
}

void jit_emit_sample_stubs(Comp *c) {
    if (!jit_sample) return;
    jit_bind(&c->a, c->sampleentry);
    sample_exit(c, VM_SAMPLE_AT_ENTRY, 0);
    jit_bind(&c->a, c->samplestep);
    sample_exit(c, VM_SAMPLE_AT_MID, -1); /* vm_jit_step set [at]; rax is the pc */
    for (int pc = 0; pc < c->n; pc++) {
        if (c->samplestub[pc] < 0) continue;
        jit_bind(&c->a, c->samplestub[pc]);
        sample_exit(c, VM_SAMPLE_AT_BACK, pc);
    }
}

/* ---- instrumented twins (jit_window, jit_internal.h) ----------------------------------------- */

/* [reg] (32 bits) = this thread's window number (VmSampleTl.window). */
static void window_to(Comp *c, ZydisRegister reg) {
    ZydisEncoderRequest r;
    memset(&r, 0, sizeof r);
    r.mnemonic = ZYDIS_MNEMONIC_MOV;
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    r.operand_count = 2;
    r.operands[0] = R(reg);
    r.operands[1] = M(ZYDIS_REGISTER_NONE, jit_tls_sample + (int64_t)offsetof(VmSampleTl, window), 4);
    jit_encode(&c->a, &r);
}

/* The interpreter's SAMPLECHECK after a poll or a step: the instrumented sampling copy takes
 * the frame at its savedpc (stored before the poll; by the step: its next pc) and the
 * trampoline switches copies. Uses ecx only (rax holds a step's pc for 'dispatch'). */
void jit_window_after_poll(Comp *c) {
    if (!jit_window) return;
    window_to(c, ZYDIS_REGISTER_ECX);
    INS2(&c->a, CMP, M(RS, offsetof(State, sample_win), 4), R(ZYDIS_REGISTER_ECX));
    JMP(&c->a, JNZ, c->resume);
}

void jit_window_call_guard(Comp *c, int slow) {
    if (!jit_window) return;
    sample_fs(c, ZYDIS_MNEMONIC_CMP, 2, offsetof(VmSampleTl, left), 8, 1);
    JMP(&c->a, JLE, slow);
}

void jit_window_stamp(Comp *c) {
    if (!jit_window) return;
    window_to(c, EAX);
    INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, samplewin), 4), R(EAX));
    INS2(&c->a, AND, M(RCI, offsetof(CallInfo, callstatus), 2), I((int16_t)~CIST_SAMPLEPART));
}

void jit_window_own(Comp *c) {
    if (!jit_window) return;
    int back = jit_new_label(&c->a);
    window_to(c, EAX);
    INS2(&c->a, CMP, M(RCI, offsetof(CallInfo, samplewin), 4), R(EAX));
    JMP(&c->a, JNZ, jit_slow_call(c, (void *)&vm_sample_adopt_ci, SLOW_CI, 0, back));
    jit_bind(&c->a, back);
}

void jit_window_partial(Comp *c, int skip) {
    if (!jit_window) return;
    int whole = jit_new_label(&c->a);
    INS2(&c->a, TEST, M(RCI, offsetof(CallInfo, callstatus), 2), I(CIST_SAMPLEPART));
    JMP(&c->a, JZ, whole);
    INS2(&c->a, AND, M(RCI, offsetof(CallInfo, callstatus), 2), I((int16_t)~CIST_SAMPLEPART));
    JMP(&c->a, JMP, skip);
    jit_bind(&c->a, whole);
}

/* Before a call into C that may raise or collect, as the interpreter's Protect: savedpc after
 * [pc], S->top = ci->top; then rdi = S (for vm_forprep, vm_table_new). Uses rax. */
void jit_emit_protect(Comp *c, int pc) {
    Asm *a = &c->a;
    Proto *p = c->p;
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(p->code + pc + 1));
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, top), 8));
    INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
    INS2(a, MOV, R(RDI), R(RS));
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
void jit_emit_step(Comp *c, int pc, bool inline_next) {
    Asm *a = &c->a;
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(c->p->code + pc));
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, MOV, R(RSI), R(RCI));
    /* A twin's steps are instrumented as windows are (vm_sample_path_act's partial paths).
     * Uninstrumented code (no jit_prof: no profiling, or sampled code between windows) always
     * steps plainly (vm_jit_step's instrumented step is for exhaustive code; the profile
     * library, which may start later, turns on vm_sample_code, whose steps are plain), and
     * only a loop's step may count a sampling tick (step_sampled, vm_interp.c): the others
     * call the plain step without vm_jit_step's tests, 6 instructions a step instead of 14
     * (18 while sampling): on bench/suite/json.lua at scale 0.25, a million steps. */
    OpCode op = (OpCode)vm_op(c->p->code[pc]);
    const void *fn = jit_window                                        ? (const void *)&vm_jit_step_window
                     : !jit_prof && op != OP_FORLOOP && op != OP_TFORLOOP ? (const void *)&vm_jit_step_plain
                                                                          : (const void *)&vm_jit_step;
    load_imm64(c, RAX, (uint64_t)(uintptr_t)fn);
    INS1(a, CALL, R(RAX));
    jit_reload_base(c);
    /* The step set a debug hook on this coroutine (a metamethod or C function it ran called
     * debug.sethook): compiled code has no hooks, so the interpreter goes on at the next pc,
     * in its hooked copy, as after a call (jit_call's 1). Before, compiled code went on
     * unhooked (tests/programs/coroutines/tforcall_c.lua under input-size profiling, which
     * steps TFORCALL). */
    INS2(a, CMP, M(RS, offsetof(State, hookmask), 1), I(0));
    JMP(a, JNZ, c->resume);
    jit_window_after_poll(c); /* a metamethod the step ran may have ended the window */
    /* Lua code the step ran may have rewritten any register: the next pc's facts are tested
     * (its guarded entry, jit_types.c) */
    if (!falls_through(op))
        JMP(a, JMP, c->dispatch);
    else if (!inline_next || jit_entry(c, pc + 1) != L(c, pc + 1))
        JMP(a, JMP, jit_entry(c, pc + 1));
}
