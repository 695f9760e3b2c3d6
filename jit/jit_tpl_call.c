/* jit_tpl_call.c: the templates of calls, returns and for loops (numeric, and generic over
 * pairs). */
#include "jit_internal.h"

#include "vm_do.h"
#include "vm_lib.h"
#include "vm_meta.h"
#include "vm_prof.h"

/* The inline calls test a callee's numparams and is_vararg with one 16-bit compare (x86 is
 * little-endian: numparams is the low byte): equal to the argument count means that many
 * parameters and no varargs. */
_Static_assert(offsetof(Proto, is_vararg) == offsetof(Proto, numparams) + 1 && sizeof(((Proto *)0)->numparams) == 1,
               "numparams and is_vararg: one 16-bit word");

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
 * .callentry); to [slow] when it has none (not compiled yet, or cannot be). A twin calls and
 * returns into twins (Proto.jitwin), so a window's frames all run instrumented. */
static void jit_code_field(Comp *c, ZydisRegister proto, size_t field, int slow) {
    INS2(&c->a, MOV, R(RCX), M(proto, jit_window ? offsetof(Proto, jitwin) : offsetof(Proto, jit), 8));
    INS2(&c->a, TEST, R(RCX), R(RCX));
    JMP(&c->a, JZ, slow);
    INS2(&c->a, MOV, R(RCX), M(RCX, (int64_t)field, 8));
    INS2(&c->a, TEST, R(RCX), R(RCX));
    JMP(&c->a, JZ, slow);
}

/* To [slow] when the frame has an open upvalue (S->openupval, the highest, at or above base):
 * a return or tail call would have to close it (vm_needs_close). Uses rax. */
static void no_open_upvals(Comp *c, int slow) {
    int none = jit_new_label(&c->a);
    INS2(&c->a, MOV, R(RAX), M(RS, offsetof(State, openupval), 8));
    INS2(&c->a, TEST, R(RAX), R(RAX));
    JMP(&c->a, JZ, none);
    INS2(&c->a, CMP, M(RAX, offsetof(UpVal, v), 8), R(RBASE));
    JMP(&c->a, JNB, slow);
    jit_bind(&c->a, none);
}

/* FORPREP */
void tpl_forprep(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* vm_forprep does the checks, errors and the iteration count: call it as the
     * interpreter does (savedpc after this instruction, top = ci->top, base again) */
    jit_emit_protect(c, pc);
    INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)ra, 8));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_forprep);
    INS1(a, CALL, R(RAX));
    jit_reload_base(c);
    INS2(a, TEST, R(ZYDIS_REGISTER_AL), R(ZYDIS_REGISTER_AL));
    JMP(a, JNZ, jit_edge_label(c, pc, 1, L(c, pc + 1 + vm_sbx(i))));
    jit_emit_path_action(c, pc, 0);
}

/* The taken back edge of the loop instruction [i] at [pc] (FORLOOP, TFORLOOP): its path
 * action, the sampling tick, the safepoint poll, the jump. */
static void loop_back(Comp *c, int pc, Instr i) {
    int target = pc + 1 + vm_sbx(i);
    jit_emit_path_action(c, pc, 1);
    jit_sample_tick(c, target);
    jit_poll_then_jump(c, target);
}

/* FORLOOP */
void tpl_forloop(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* integer loops only; R[A+1] counts the iterations left (vm_opcodes.h) */
    int done = pc + 1;
    if (jit_kt(c, pc, ra + 2) != KT_INT) { /* the step tested unless known (jit_types.c) */
        INS2(a, CMP, TAG(ra + 2), I(VT_INT));
        JMP(a, JNZ, STEP(c, pc));
    }
    INS2(a, MOV, R(RAX), VAL(ra + 1));
    INS2(a, TEST, R(RAX), R(RAX));
    JMP(a, JZ, jit_edge_label(c, pc, 0, L(c, done)));
    INS1(a, DEC, R(RAX));
    INS2(a, MOV, VAL(ra + 1), R(RAX));
    INS2(a, MOV, R(RAX), VAL(ra));
    INS2(a, ADD, R(RAX), VAL(ra + 2));
    INS2(a, MOV, VAL(ra), R(RAX));
    INS2(a, MOV, VAL(ra + 3), R(RAX));
    if (jit_kt(c, pc, ra + 3) != KT_INT) INS2(a, MOV, TAG(ra + 3), I(VT_INT)); /* else known */
    loop_back(c, pc, i);
}

/* Room below a coroutine's cstack_limit that compiled code leaves to the C frames of a call
 * (jit_call's, vm_precall's, precall_c's): closer than this to the limit the interpreter
 * makes the call and raises "C stack overflow" as its vm_call_value decides. */
#define JIT_CSTACK_ROOM 4096

/* TFORCALL over a coroutine.wrap iterator (VM_CF_CORO_WRAP, vm_value.h; the tag is VT_CFUNC):
 * to [call], the C function's call, without trying vm_tfor_fast, which takes only next and
 * ipairs' iterator (the attempt cost a wrap generator's generic for 25 instructions an
 * iteration, 4% of a resume/yield pair). Kept apart from tpl_tforcall's pairs and ipairs
 * paths. Uses rax. */
static void tforcall_wrap(Comp *c, int ra, int call) {
    INS2(&c->a, MOV, R(RAX), VAL(ra));
    INS2(&c->a, TEST, M(RAX, offsetof(CClosure, h.flags), 1), I(VM_CF_CORO_WRAP));
    JMP(&c->a, JNZ, call);
}

/* TFORCALL over pairs() (without __pairs) or ipairs() of a table without a metatable: one step of
 * the iterator without a call (vm_tfor_fast, protected: next may raise). Any other C function
 * (a coroutine.wrap iterator, string.gmatch's) is called through jit_call, as CALL calls
 * it, with the interpreter's vm_call_value around it: the copy of the iterator, function
 * and control variable above the loop's, and one more nested C call (nCcalls; the checks
 * that could raise are left to a step: nCcalls near VM_MAXCCALLS, the C stack near
 * cstack_limit). Through jit_call, the native frames between compiled code and the
 * library function are those of a CALL, the same as where the coroutine yields (vm_coro.c
 * says why that matters). Lua iterators and no room for the call's slots are stepped. A C
 * function entered emits no event, so the events are those of the interpreter's call. */
void tpl_tforcall(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    (void)p;
    int done = jit_new_label(a), cont = jit_new_label(a), nolimit = jit_new_label(a);
    INS2(a, CMP, TAG(ra), I(VT_CFUNC));
    JMP(a, JNZ, STEP(c, pc));
    jit_emit_protect(c, pc);
    int call = jit_new_label(a);
    tforcall_wrap(c, ra, call);
    INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)ra, 8));
    INS2(a, MOV, R(ZYDIS_REGISTER_EDX), I(vm_c(i)));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_tfor_fast);
    INS1(a, CALL, R(RAX));
    INS2(a, TEST, R(ZYDIS_REGISTER_AL), R(ZYDIS_REGISTER_AL));
    JMP(a, JNZ, done);
    /* another C function: the interpreter's guards. Room for 3 slots past the loop's: our
     * compiler reserves them (vm_parse.c), so only a loaded binary chunk whose maxstack
     * leaves them out (vm_verify.c accepts it) gets to the step here; no test reaches it,
     * nor the C stack test (nCcalls reaches VM_MAXCCALLS first in every program tried) */
    jit_bind(a, call);
    INS2(a, LEA, R(RAX), M(RBASE, 16 * ((int64_t)ra + 7), 8));
    INS2(a, CMP, R(RAX), M(RS, offsetof(State, stack_last), 8));
    JMP(a, JNB, STEP(c, pc));
    INS2(a, CMP, M(RS, offsetof(State, nCcalls), 4), I(VM_MAXCCALLS - 1));
    JMP(a, JNL, STEP(c, pc));
    INS2(a, MOV, R(RCX), M(RS, offsetof(State, cstack_limit), 8));
    INS2(a, TEST, R(RCX), R(RCX));
    JMP(a, JZ, nolimit);
    INS2(a, ADD, R(RCX), I(JIT_CSTACK_ROOM));
    INS2(a, CMP, R(ZYDIS_REGISTER_RSP), R(RCX));
    JMP(a, JB, STEP(c, pc));
    jit_bind(a, nolimit);
    for (int k = 0; k < 3; k++) {
        INS2(a, MOVDQA, R(XMM0), WHOLE(ra + k));
        INS2(a, MOVDQA, WHOLE(ra + 4 + k), R(XMM0));
    }
    INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX)); /* ra + 7 */
    INS1(a, INC, M(RS, offsetof(State, nCcalls), 4));
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, MOV, R(RSI), R(RCI));
    INS2(a, LEA, R(RDX), M(RBASE, 16 * ((int64_t)ra + 4), 8));
    INS2(a, MOV, R(ZYDIS_REGISTER_ECX), I(vm_c(i)));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(jit_window ? &jit_call_window : &jit_call));
    INS1(a, CALL, R(RAX));
    /* an error unwinds past this: the protected call that catches it restores nCcalls */
    INS1(a, DEC, M(RS, offsetof(State, nCcalls), 4));
    after_frame_helper(c, cont);
    jit_bind(a, cont);
    jit_reload_base(c);
    jit_bind(a, done);
}

/* The interpreter (and ipairs) report the slot read as a heap event while input-size
 * profiling (PROF_NEED_LIBMEM): then TFORCALL is stepped. */
bool tpl_tforcall_ok(const Comp *c, int pc) {
    (void)c;
    (void)pc;
    return !(jit_prof && (vm_prof_needs & PROF_NEED_LIBMEM));
}

/* TFORLOOP: another iteration while the control variable R[A+4] is not nil, as FORLOOP. */
void tpl_tforloop(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    (void)p;
    INS2(a, CMP, TAG(ra + 4), I(VT_NIL));
    JMP(a, JZ, jit_edge_label(c, pc, 0, L(c, pc + 1)));
    INS2(a, MOVDQA, R(XMM0), WHOLE(ra + 4));
    INS2(a, MOVDQA, WHOLE(ra + 2), R(XMM0));
    loop_back(c, pc, i);
}

/* CONCAT: vm_concat over R[A] .. R[A+B-1] as the interpreter calls it (savedpc; top after the
 * operands; it may call __concat, raise, allocate and move the stack), the result from the
 * top into R[A], top back to ci->top. */
void tpl_concat(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    (void)p;
    int n = (int)vm_b(i);
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(c->p->code + pc + 1));
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    INS2(a, LEA, R(RAX), M(RBASE, 16 * ((int64_t)ra + n), 8));
    INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, MOV, R(ZYDIS_REGISTER_ESI), I(n));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_concat);
    INS1(a, CALL, R(RAX));
    jit_reload_base(c);
    INS2(a, MOV, R(RAX), M(RS, offsetof(State, top), 8));
    INS2(a, MOVDQA, R(XMM0), M(RAX, -16, 16));
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
    INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, top), 8));
    INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
}

/* CLOSURE: vm_closure, protected (it allocates). */
void tpl_closure(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    jit_emit_protect(c, pc);
    INS2(a, MOV, R(RSI), R(RCL));
    load_imm64(c, RDX, (uint64_t)(uintptr_t)p->p[vm_bx(i)]);
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_closure);
    INS1(a, CALL, R(RAX));
    jit_reload_base(c);
    INS2(a, MOV, VAL(ra), R(RAX));
    INS2(a, MOV, TAG(ra), I(VT_LFUNC));
}

/* A call out of CALL at [pc]: S->top after its B - 1 arguments (B = 0: set already), savedpc
 * after it, as the interpreter's L_CALL sets them. */
static void call_top_savedpc(Comp *c, Proto *p, int pc, int ra, int b) {
    if (b != 0) {
        INS2(&c->a, LEA, R(RAX), M(RBASE, 16 * (int64_t)(ra + b), 8));
        INS2(&c->a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
    }
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(p->code + pc + 1));
    INS2(&c->a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
}

/* CALL of coroutine.resume, coroutine.yield or a wrap function (VM_CF_CORO, vm_value.h) from
 * compiled code without profiling: vm_coro_precall called directly, and of jit_call's checks
 * after a C function only those that apply (a debug hook set while the coroutine was
 * suspended: the interpreter goes on after the call, in its hooked copy; the profile
 * library's sampling, below). jit_call's own
 * frame and its other tests were about 50 instructions a call, 15% of a resume/yield
 * pair. Other C functions, and code with events or sampling ticks, go on to [generic]
 * (jit_call); [done] follows the call with base reloaded. */
static void call_coro(Comp *c, Proto *p, int pc, Instr i, int ra, int generic, int done) {
    Asm *a = &c->a;
    int b = (int)vm_b(i), nresults = (int)vm_c(i) - 1;
    INS2(a, CMP, TAG(ra), I(VT_CFUNC));
    JMP(a, JNZ, generic);
    INS2(a, MOV, R(RAX), VAL(ra));
    INS2(a, TEST, M(RAX, offsetof(CClosure, h.flags), 1), I(VM_CF_CORO));
    JMP(a, JZ, generic);
    call_top_savedpc(c, p, pc, ra, b);
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)ra, 8));
    INS2(a, MOV, R(ZYDIS_REGISTER_EDX), I(nresults));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_coro_precall);
    INS1(a, CALL, R(RAX));
    /* back in this frame (S->ci is ci again); the stack may have moved */
    jit_reload_base(c);
    if (nresults >= 0) {
        INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, top), 8));
        INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
    }
    INS2(a, CMP, M(RS, offsetof(State, hookmask), 1), I(0));
    JMP(a, JNZ, c->resume);
    /* The profile library started (jit_sample set since this code was compiled, without
     * ticks): the interpreter goes on after the call, as jit_call gives such a frame back
     * when a window opened (jit_compile.c, sample_on) */
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&jit_sample);
    INS2(a, CMP, M(RAX, 0, 1), I(0));
    JMP(a, JNZ, c->resume);
    JMP(a, JMP, done);
}

/* CALL */
void tpl_call(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* jit_call sets the callee's frame up (or runs a C function) and says where to go:
     * 0: a C function ran, carry on here; 1: the interpreter continues S->ci; else the
     * address of the callee's code, entered with the frame switched to S->ci. No native
     * frame is pushed for a Lua call: compiled frames all run on the one native frame of
     * the hand-over, as interpreted ones run in one C frame of the interpreter. */
    int b = (int)vm_b(i), cont = jit_new_label(a), slow = jit_new_label(a);
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
        /* numparams == nargs and is_vararg == 0 in one compare (tpl_tailcall's too) */
        INS2(a, CMP, M(RSI, offsetof(Proto, numparams), 2), I(nargs));
        JMP(a, JNZ, slow);
        INS2(a, MOVZX, R(EAX), M(RSI, offsetof(Proto, maxstack), 2));
        INS2(a, SHL, R(RAX), I(4));
        INS2(a, LEA, R(RAX), MX(RDX, RAX, 1, 16, 8));                         /* its top */
        INS2(a, LEA, R(RCX), M(RAX, 32 * (int64_t)nargs, 8));                 /* L_CALL's room */
        INS2(a, CMP, R(RCX), M(RS, offsetof(State, stack_last), 8));
        JMP(a, JNB, slow);
        jit_code_field(c, RSI, offsetof(JitCode, callentry), slow);
        jit_window_call_guard(c, slow);
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
            uint32_t id = jit_prof_id(p);
            uint64_t site = (uint64_t)(uint32_t)pc | (id <= EV_DEPTH_MAX ? (uint64_t)id << 32 : 0);
            load_imm64(c, RDX, ev_make(EV_SITE, site));
            jit_emit_enqueue(c);
        }
        INS1(a, JMP, R(RCX));
    }
    jit_bind(a, slow);
    int done = jit_new_label(a);
    if (!jit_prof && !jit_sample) {
        int generic = jit_new_label(a);
        call_coro(c, p, pc, i, ra, generic, done);
        jit_bind(a, generic);
    }
    call_top_savedpc(c, p, pc, ra, b);
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, MOV, R(RSI), R(RCI));
    INS2(a, LEA, R(RDX), M(RBASE, 16 * (int64_t)ra, 8));
    INS2(a, MOV, R(ZYDIS_REGISTER_ECX), I((int64_t)vm_c(i) - 1));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)(jit_window ? &jit_call_window : &jit_call));
    INS1(a, CALL, R(RAX));
    after_frame_helper(c, cont);
    jit_bind(a, cont);
    jit_reload_base(c);
    jit_bind(a, done);
}

/* TAILCALL */
void tpl_tailcall(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* Inline, as most tail calls go (closures composed and partially applied, tak's and
     * ack's recursion): a Lua function without varargs of exactly the arguments given (B
     * of them, or up to S->top when B is 0), compiled already, from a frame without
     * varargs (so the frame's func stays where it is), nothing to close, room on the stack;
     * not while profiling (the frame's exit events are the C helper's). The guards come
     * first and write nothing; then what vm_pretailcall does for a Lua callee: the function
     * and its arguments moved down to ci->func, the registers above them nil (as the
     * interpreter leaves them), the frame's top, savedpc and CIST_TAIL, and a jump to the
     * callee's entry (its poll, its sampling tick). Before this, every tail call went
     * through jit_tailcall and vm_pretailcall in C (about 170 machine instructions a call on
     * tak). Anything else: jit_tailcall, the interpreter's L_TAILCALL. */
    int b = (int)vm_b(i), slow = jit_new_label(a);
    if (!jit_prof && !p->is_vararg) {
        int fill = jit_new_label(a), filled = jit_new_label(a);
        INS2(a, LEA, R(RDX), M(RBASE, 16 * (int64_t)ra, 8));                 /* ra */
        INS2(a, CMP, M(RDX, offsetof(Value, tt), 4), I(VT_LFUNC));
        JMP(a, JNZ, slow);
        INS2(a, MOV, R(R8), M(RDX, 0, 8));                                    /* closure */
        INS2(a, MOV, R(RSI), M(R8, offsetof(LClosure, p), 8));                /* proto */
        if (b != 0) {
            /* numparams == B - 1 and is_vararg == 0 in one compare */
            INS2(a, CMP, M(RSI, offsetof(Proto, numparams), 2), I(b - 1));
            JMP(a, JNZ, slow);
        } else {
            /* r9 = the bytes of the function and its arguments, up to S->top */
            INS2(a, CMP, M(RSI, offsetof(Proto, is_vararg), 1), I(0));
            JMP(a, JNZ, slow);
            INS2(a, MOV, R(R9), M(RS, offsetof(State, top), 8));
            INS2(a, SUB, R(R9), R(RDX));
            INS2(a, MOVZX, R(EAX), M(RSI, offsetof(Proto, numparams), 1));
            INS2(a, SHL, R(EAX), I(4));
            INS2(a, ADD, R(EAX), I(16));
            INS2(a, CMP, R(R9), R(RAX));
            JMP(a, JNZ, slow);
        }
        /* nothing to close: no open upvalue at or above base (the frame has no to-be-closed
         * variable either: those make the compiler end it with RETURN, not TAILCALL) */
        no_open_upvals(c, slow);
        /* rax = the callee's top (base + maxstack: its func is ours); room as
         * vm_pretailcall's vm_checkstack_fast wants it, maxstack + numparams + 2 slots above
         * its arguments */
        INS2(a, MOVZX, R(EAX), M(RSI, offsetof(Proto, maxstack), 2));
        INS2(a, SHL, R(RAX), I(4));
        INS2(a, ADD, R(RAX), R(RBASE));
        INS2(a, MOVZX, R(ZYDIS_REGISTER_ECX), M(RSI, offsetof(Proto, numparams), 1));
        INS2(a, SHL, R(ZYDIS_REGISTER_ECX), I(5));
        INS2(a, LEA, R(RCX), MX(RAX, RCX, 1, 32, 8));
        INS2(a, CMP, R(RCX), M(RS, offsetof(State, stack_last), 8));
        JMP(a, JNB, slow);
        jit_code_field(c, RSI, offsetof(JitCode, callentry), slow);           /* rcx */
        /* the function and its arguments down to ci->func (base - 1): the copy goes
         * forward, to lower addresses, so it never overwrites what it has yet to read */
        if (b != 0) {
            for (int k = 0; k < b; k++) {
                INS2(a, MOVDQA, R(XMM0), M(RDX, 16 * (int64_t)k, 16));
                INS2(a, MOVDQA, M(RBASE, 16 * ((int64_t)k - 1), 16), R(XMM0));
            }
        } else {
            int copy = jit_new_label(a);
            INS2(a, LEA, R(RDI), M(RBASE, -16, 8));
            jit_bind(a, copy);
            INS2(a, MOVDQA, R(XMM0), M(RDX, 0, 16));
            INS2(a, MOVDQA, M(RDI, 0, 16), R(XMM0));
            INS2(a, ADD, R(RDX), I(16));
            INS2(a, ADD, R(RDI), I(16));
            INS2(a, SUB, R(R9), I(16));
            JMP(a, JNZ, copy);
        }
        /* registers above the parameters nil, up to the new top */
        INS2(a, MOVZX, R(ZYDIS_REGISTER_EDX), M(RSI, offsetof(Proto, numparams), 1));
        INS2(a, SHL, R(ZYDIS_REGISTER_EDX), I(4));
        INS2(a, ADD, R(RDX), R(RBASE));
        jit_bind(a, fill);
        INS2(a, CMP, R(RDX), R(RAX));
        JMP(a, JNB, filled);
        INS2(a, MOV, M(RDX, offsetof(Value, tt), 4), I(VT_NIL));
        INS2(a, ADD, R(RDX), I(16));
        JMP(a, JMP, fill);
        jit_bind(a, filled);
        INS2(a, MOV, M(RCI, offsetof(CallInfo, top), 8), R(RAX));
        INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RAX));
        INS2(a, MOV, R(R9), M(RSI, offsetof(Proto, code), 8));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(R9));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, nextra), 4), I(0));
        INS2(a, OR, M(RCI, offsetof(CallInfo, callstatus), 2), I(CIST_TAIL));
        INS2(a, MOV, R(RCL), R(R8));
        INS1(a, JMP, R(RCX));
    }
    jit_bind(a, slow);
    /* jit_tailcall: the interpreter's L_TAILCALL; then as after a return */
    call_frame_helper(c, pc, jit_window ? jit_tailcall_window : jit_tailcall, ra, b);
}

/* The inline return's switch to the caller, after its guards (tpl_return): the caller (ci->prev)
 * must have compiled code, else to [slow]; the [n] results from R[ra] moved to ci->func, up;
 * the caller made S->ci; S->top its top, or just after the results when it wants them all
 * ([multret]); a jump to the caller's code at its savedpc. */
static void return_inline(Comp *c, int ra, int n, bool multret, int slow) {
    Asm *a = &c->a;
    INS2(a, MOV, R(RDI), M(RCI, offsetof(CallInfo, prev), 8));            /* caller */
    INS2(a, MOV, R(RAX), M(RDI, offsetof(CallInfo, func), 8));
    INS2(a, MOV, R(R8), M(RAX, 0, 8));                                    /* its closure */
    INS2(a, MOV, R(RSI), M(R8, offsetof(LClosure, p), 8));
    jit_code_field(c, RSI, offsetof(JitCode, at), slow);
    INS2(a, MOV, R(RDX), M(RDI, offsetof(CallInfo, savedpc), 8));
    INS2(a, SUB, R(RDX), M(RSI, offsetof(Proto, code), 8));
    INS2(a, MOV, R(RCX), MX(RCX, RDX, 1, 0, 8)); /* at[pc]: Instr and pointers are both 8 bytes */
    if (jit_prof) { /* the events of 'ret' in the instrumented interpreter */
        jit_emit_frame_exit(c);
        INS2(a, MOV, R(RAX), M(RDI, offsetof(CallInfo, func), 8));
    }
    if (n > 0 || multret) INS2(a, MOV, R(RDX), M(RCI, offsetof(CallInfo, func), 8));
    for (int k = 0; k < n; k++) { /* to ci->func up: forward, below what is still to read */
        INS2(a, MOVDQA, R(XMM0), WHOLE(ra + k));
        INS2(a, MOVDQA, M(RDX, 16 * (int64_t)k, 16), R(XMM0));
    }
    INS2(a, MOV, M(RS, offsetof(State, ci), 8), R(RDI));
    if (multret) {
        if (n > 0) INS2(a, ADD, R(RDX), I(16 * (int64_t)n));
    } else {
        INS2(a, MOV, R(RDX), M(RDI, offsetof(CallInfo, top), 8));
    }
    INS2(a, MOV, M(RS, offsetof(State, top), 8), R(RDX));
    INS2(a, MOV, R(RCI), R(RDI));
    INS2(a, LEA, R(RBASE), M(RAX, 16, 8));
    INS2(a, MOV, R(RCL), R(R8));
    if (jit_prof && (vm_prof_needs & PROF_NEED_MEM) && jit_prof_kind == VM_PS_EXHAUSTIVE) {
        /* control back in the caller (rsi: its Proto): vm_prof_frame_room(its Proto)
         * events of 8 bytes, as jit_emit_reserve for a size known only now */
        _Static_assert(VM_PROF_ROOM_PER_INSTR * sizeof(uint64_t) == 1u << 4, "the shift below");
        _Static_assert(VM_PROF_ROOM_PER_INSTR_PC == 3, "the lea below");
        int back = jit_new_label(a);
        INS2(a, MOVSXD, R(RDX), M(RSI, offsetof(Proto, ncode), 4));
        if (vm_prof_needs & PROF_NEED_PC) { /* ncode x VM_PROF_ROOM_PER_INSTR_PC x 8 bytes */
            INS2(a, LEA, R(RDX), MX(RDX, RDX, 2, 0, 8));
            INS2(a, SHL, R(RDX), I(3));
        } else {
            INS2(a, SHL, R(RDX), I(4)); /* ncode x VM_PROF_ROOM_PER_INSTR x 8 bytes */
        }
        jit_reserve_check(c, true, 0, jit_slow_call(c, (void *)&vm_prof_frame_back, SLOW_CI, 0, back));
        jit_bind(a, back);
    }
    INS1(a, JMP, R(RCX));
}

/* RETURN, RETURN0, RETURN1 */
void tpl_return(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* jit_return does the interpreter's return and says where to go: 0: the frame was
     * CIST_FRESH (back to C through the interpreter); 1: the interpreter continues the
     * caller; else the caller's compiled code at its savedpc. */
    int n = vm_op(i) == OP_RETURN0 ? 0 : vm_op(i) == OP_RETURN1 ? 1 : (int)vm_b(i) - 1;
    int slow = jit_new_label(a);
    if (n >= 0 && !p->is_vararg) {
        /* Inline, as most returns go: nothing to close, not entered from C, the caller
         * wants exactly the results given and has compiled code. Guards first; then the
         * results are moved, the caller becomes S->ci and its code goes on at its savedpc.
         * Without profiling, a caller that wants all the results (VM_MULTRET: a call that
         * is the last argument of another, as in tak's tak(tak(..), tak(..), tak(..)), or
         * whose results a return returns) has a second copy of the switch, which sets
         * S->top after the results: on tak, every such return went through jit_return
         * (about 80 machine instructions). RETURN with B = 0 (results up to S->top)
         * always goes through C. */
        int multret = jit_new_label(a);
        no_open_upvals(c, slow);
        INS2(a, CMP, M(RS, offsetof(State, ntbc), 4), I(0));
        JMP(a, JNZ, slow);
        INS2(a, TEST, M(RCI, offsetof(CallInfo, callstatus), 2), I(CIST_FRESH));
        JMP(a, JNZ, slow);
        INS2(a, CMP, M(RCI, offsetof(CallInfo, nresults), 4), I(n));
        JMP(a, JNZ, jit_prof ? slow : multret);
        return_inline(c, ra, n, false, slow);
        if (!jit_prof) {
            jit_bind(a, multret);
            INS2(a, CMP, M(RCI, offsetof(CallInfo, nresults), 4), I(VM_MULTRET));
            JMP(a, JNZ, slow);
            return_inline(c, ra, n, true, slow);
        }
    }
    jit_bind(a, slow);
    call_frame_helper(c, pc, jit_window ? jit_return_window : jit_return, ra, n);
}
