/* jit_tpl_prof.c: the profiling code templates emit: the inline enqueue, heap-access events,
 * the reserve check, Ball-Larus path actions and edge stubs, frame start and exit events. */
#include "jit_internal.h"

#include <stdlib.h>

#include "vm_prof.h"

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
int jit_slow_call(Comp *c, void *fn, int arg, uint64_t imm, int back) {
    if (!grow(c, (void **)&c->slow, &c->capslow, c->nslow, sizeof *c->slow)) return back;
    int l = jit_new_label(&c->a);
    c->slow[c->nslow++] = (struct Slow){l, back, arg, (uintptr_t)fn, imm};
    return l;
}

/* The slow-call stubs, saving every caller-saved register the code around may hold (9
 * general-purpose, xmm0 and xmm1: 112 bytes, so rsp stays 16-byte aligned for the call). */
static const ZydisRegister saved_gprs[] = {ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
                                           ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8,
                                           ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11};
void jit_emit_slow_stubs(Comp *c) {
    Asm *a = &c->a;
    int n = (int)(sizeof saved_gprs / sizeof saved_gprs[0]);
    for (int e = 0; e < c->nslow; e++) {
        const struct Slow *sl = &c->slow[e];
        jit_bind(a, sl->slow);
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
    int back = jit_new_label(a);
    int slow = jit_slow_call(c, mem ? (void *)&vm_prof_emit_mem_out : (void *)&vm_prof_emit_slow, SLOW_RDX, 0, back);
    if (jit_prof_kind == VM_PS_EXHAUSTIVE || jit_prof_kind == VM_PS_SAMPLING) {
        _Static_assert(offsetof(VmProfStream, prod) == 0 && offsetof(CabProducer, cur) == 0,
                       "the stream's first word is its cursor");
        INS2(a, MOV, R(RAX), M(RPS, 0, 8));
        INS2(a, CMP, M(RAX, 0, 8), I(jit_prof_kind == VM_PS_EXHAUSTIVE ? 0 : -1)); /* CLEAR / MAGIC */
        jit_jump(a, jit_prof_kind == VM_PS_EXHAUSTIVE ? ZYDIS_MNEMONIC_JNZ : ZYDIS_MNEMONIC_JZ, slow);
        INS2(a, MOV, M(RAX, 0, 8), R(RDX));
        INS2(a, ADD, M(RPS, 0, 8), I(8));
    } else {
        JMP(a, JMP, slow);
    }
    jit_bind(a, back);
}
void jit_emit_enqueue(Comp *c) { emit_enqueue_as(c, false); }

/* A heap load or store at [addr + disp] (EV_LOAD / EV_STORE, as MEMEV in the
 * interpreter) by the instruction at [pc], while an analysis needs them; after its EV_PC
 * (a constant here) when an analysis needs that too. [addr] may be rax or rdx: the address
 * is computed first, and kept on the stack (twice, so rsp stays 16-byte aligned for the
 * slow-call stubs) while the EV_PC is enqueued. Uses rax, rdx. */
void jit_emit_mem(Comp *c, EvKind kind, ZydisRegister addr, int64_t disp, int pc) {
    if (!jit_prof || !(vm_prof_needs & PROF_NEED_MEM)) return;
    Asm *a = &c->a;
    INS2(a, LEA, R(RDX), M(addr, disp, 8));
    if (vm_prof_needs & PROF_NEED_PC) {
        INS1(a, PUSH, R(RDX));
        INS1(a, PUSH, R(RDX));
        load_imm64(c, RDX, vm_prof_pc_event(c->fid, (uint32_t)pc));
        emit_enqueue_as(c, true);
        INS1(a, POP, R(RDX));
        INS1(a, POP, R(RDX));
    }
    load_imm64(c, RAX, ev_make(kind, 0));
    INS2(a, OR, R(RDX), R(RAX));
    emit_enqueue_as(c, true);
}

/* cab_reserve's check inline: the last slot of the room wanted ([bytes] past the cursor, the
 * constant given or, [in_rdx], rdx) lies before the ring's end and is CLEAR; else to [slow].
 * Uses rax. */
void jit_reserve_check(Comp *c, bool in_rdx, int64_t bytes, int slow) {
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

/* Room for the heap-access events up to the next safepoint (vm_prof_frame_room, the rule the
 * interpreter's RESERVE_FOR uses, vm_prof.h), at a safepoint:
 * cab_reserve's check inline (exhaustive CAB only: nothing else ever waits), its wait out of
 * line. Uses rax. */
void jit_emit_reserve(Comp *c) {
    if (!jit_prof || !(vm_prof_needs & PROF_NEED_MEM) || jit_prof_kind != VM_PS_EXHAUSTIVE) return;
    Asm *a = &c->a;
    size_t n = vm_prof_frame_room(c->p);
    int back = jit_new_label(a);
    jit_reserve_check(c, false, 8 * (int64_t)n, jit_slow_call(c, (void *)&vm_prof_reserve_out, SLOW_IMM, n, back));
    jit_bind(a, back);
}

/* rdx = [kind | depth << shift | low], the depth of the frame in r12 saturated as vm_prof_depth
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
 * register in the frame (ci->pathreg, shared with the interpreter and the steps), as vm_prof_path_act
 * in the interpreter applies it. The action is known here: the function's table is built. */
static bool path_noop(Comp *c, int pc, unsigned o) {
    if (c->pathbias == VM_PATH_OFF) return true;
    uint64_t act = vm_pathprof_act(c->pathbias, c->p->code + pc, o);
    return vm_pathact_reset(act) == VM_PATH_NORESET && vm_pathact_inc(act) == 0;
}

void jit_emit_path_action(Comp *c, int pc, unsigned o) {
    if (path_noop(c, pc, o)) return;
    Asm *a = &c->a;
    uint64_t act = vm_pathprof_act(c->pathbias, c->p->code + pc, o);
    uint32_t inc = vm_pathact_inc(act), reset = vm_pathact_reset(act);
    if (reset == VM_PATH_NORESET) {
        INS2(a, ADD, M(RCI, offsetof(CallInfo, pathreg), 4), I((int64_t)(int32_t)inc));
        return;
    }
    /* A twin: a frame first met in this window is adopted (its path partial), and a
     * partial path is not enqueued; the reset makes the frame's next path whole (the
     * instrumented sampling copy's vm_sample_path_act). Adds need neither: a partial path's
     * register is never enqueued. */
    int reset_only = jit_new_label(a);
    jit_window_own(c);
    jit_window_partial(c, reset_only);
    INS2(a, MOV, R(ZYDIS_REGISTER_EDX), M(RCI, offsetof(CallInfo, pathreg), 4));
    if (inc != 0) INS2(a, ADD, R(ZYDIS_REGISTER_EDX), I((int64_t)(int32_t)inc));
    path_event(c);
    jit_emit_enqueue(c);
    jit_bind(a, reset_only);
    INS2(a, MOV, M(RCI, offsetof(CallInfo, pathreg), 4), I((int64_t)(int32_t)reset));
}

/* The label a branch of [from] with outcome [o] goes to, on its way to [label]: [label]
 * itself, or an out-of-line stub that applies the path action first. */
int jit_edge_label(Comp *c, int from, unsigned o, int label) {
    if (path_noop(c, from, o)) return label;
    if (!grow(c, (void **)&c->edge, &c->capedge, c->nedge, sizeof *c->edge)) return label;
    int stub = jit_new_label(&c->a);
    c->edge[c->nedge++] = (struct Edge){stub, from, (int)o, label};
    return stub;
}

void jit_emit_edge_stubs(Comp *c) {
    for (int e = 0; e < c->nedge; e++) { /* (the list may not grow here: actions only) */
        jit_bind(&c->a, c->edge[e].stub);
        jit_emit_path_action(c, c->edge[e].from, (unsigned)c->edge[e].o);
        JMP(&c->a, JMP, c->edge[e].to);
    }
}

/* At a compiled return, its guards passed (r12 = the frame returning): the path's end and
 * EV_RETURN, as 'ret' in the instrumented interpreter. Uses rax, rdx. */
/* EV_ICOUNT of the stream's instruction count (vm_prof_emit_icount), while an analysis needs
 * costs. Uses rax, rdx. */
static void emit_icount_event(Comp *c) {
    if (!(vm_prof_needs & PROF_NEED_COST)) return;
    INS2(&c->a, MOV, R(RDX), M(RPS, offsetof(VmProfStream, icount), 8));
    load_imm64(c, RAX, ev_make(EV_ICOUNT, 0));
    INS2(&c->a, OR, R(RDX), R(RAX));
    jit_emit_enqueue(c);
}

/* One add to memory per instruction: [r14] is the stream of the thread running the code, and
 * only that thread writes its count. Costs about a cycle per instruction when an analysis
 * needs it (inputsize), nothing otherwise. Flags: templates set their own before they test. */
void jit_emit_count(Comp *c) {
    if (!jit_prof || !(vm_prof_needs & PROF_NEED_COST)) return;
    INS2(&c->a, ADD, M(RPS, offsetof(VmProfStream, icount), 8), I(1));
}

void jit_emit_frame_exit(Comp *c) {
    if (c->pathbias != VM_PATH_OFF) {
        int off = jit_new_label(&c->a);
        jit_window_own(c); /* a twin: as at a path reset (jit_emit_path_action) */
        jit_window_partial(c, off);
        INS2(&c->a, MOV, R(ZYDIS_REGISTER_EDX), M(RCI, offsetof(CallInfo, pathreg), 4));
        path_event(c);
        jit_emit_enqueue(c);
        jit_bind(&c->a, off);
        INS2(&c->a, MOV, R(RAX), I(VM_PATH_OFF));
        INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, pathbias), 8), R(RAX));
    }
    if (vm_prof_needs & PROF_NEED_RETURN) {
        emit_icount_event(c);
        event_with_depth(c, EV_RETURN, 0, 0);
        jit_emit_enqueue(c);
    }
}

/* The function's id in profiles (given on first use). */
uint32_t jit_prof_id(Proto *p) { return p->id != 0 ? p->id : vm_prof_newid(p); }

/* At a compiled call's entry (r12 = the new frame): what the instrumented interpreter's
 * startfunc does. EV_CALL: made by a Lua frame, so never "from C". (The call site was
 * enqueued by the caller's CALL template, which knows it.) */
void jit_emit_frame_start(Comp *c) {
    emit_icount_event(c);
    if (vm_prof_needs & PROF_NEED_CALL) {
        event_with_depth(c, EV_CALL, 32, jit_prof_id(c->p));
        jit_emit_enqueue(c);
    }
    if (c->pathbias != VM_PATH_OFF) {
        load_imm64(c, RAX, c->pathbias);
        INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, pathbias), 8), R(RAX));
        INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, pathreg), 4), I(0));
    }
    jit_window_stamp(c);
    jit_emit_reserve(c);
}
