/* vm_interp.c: the interpreter: a dispatch loop over 64-bit instructions with computed goto,
 * fast paths inline and slow paths in vm_meta.c.
 *
 * Frame invariants (shared with vm_call.c and, later, the JIT):
 *   - registers of the running Lua frame are base[0 .. maxstack-1], base = ci->func + 1;
 *   - ci->savedpc is written before anything that can raise an error or call out, so error
 *     positions and tracebacks see the current instruction (savedpc - 1);
 *   - before calling out (metamethods, C functions), S->top = ci->top, so what the callee
 *     pushes lands above every register; the stack may move during the call, so base is
 *     re-derived after it (the Protect macro);
 *   - multiple results (CALL/VARARG with C == 0) leave S->top after the last value for the
 *     next instruction (CALL/RETURN/SETLIST with B == 0) to consume.
 *
 * Where instrumentation and safepoints go (so the uninstrumented path pays nothing): every
 * instruction dispatches through the table `dispatch`; instrumentation points are few
 * opcodes (function entry = the first instruction of a frame, reached through startfunc;
 * back edges = JMP/FORLOOP/TFORLOOP with a negative offset; exits = the RETURN opcodes and TAILCALL;
 * branches = the conditional tests; heap loads and stores = GET and SET opcodes). The loop
 * is compiled twice from one body (vm_interp_body.h): vm_execute_plain has no
 * instrumentation at all, vm_execute_instr emits events (vm_events.h) at those points under
 * `#if VM_EXEC_INSTR`; which one runs is chosen once per run (vm_prof_instrumented). Events,
 * each kind only when an enabled analysis needs it (vm_prof_needs): EV_SITE and EV_CALL at
 * startfunc (frames returned into enter at 'returning', after it); EV_PATH at the branches
 * (Ball-Larus actions, vm_pathprof.h), returns and tail calls; EV_RETURN at 'ret'; EV_LOAD
 * and EV_STORE at the table and upvalue opcodes. A third copy, vm_execute_oracle, also
 * feeds the path oracle (debug). The safepoint poll sits at startfunc and on back edges
 * only, as one load and compare of a global word.
 *
 * The JIT (jit/README.md, on by default) is entered from two more copies, vm_execute_jit and
 * its instrumented twin vm_execute_jit_instr (while profiling): the loop plus JITENTER
 * (vm_interp_body.h) where a frame starts or is returned into and on loop back edges; the
 * frame is handed to its function's compiled code, which runs on the same frames, calls and
 * returns between compiled frames, and gives control back only for a frame that cannot run
 * compiled. Compiled code runs the instructions it has no template for through two last
 * copies, vm_execute_step and vm_execute_step_instr (vm_jit_step), whose NEXT() returns after
 * one instruction. */
#include <math.h>

#include "jit_api.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_meta.h"
#include "vm_opcodes.h"
#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_thread.h"

/* Integer arithmetic wraps around (two's complement), as Lua's. */
#define IADD(a, b) ((vm_Integer)((vm_Unsigned)(a) + (vm_Unsigned)(b)))
#define ISUB(a, b) ((vm_Integer)((vm_Unsigned)(a) - (vm_Unsigned)(b)))
#define IMUL(a, b) ((vm_Integer)((vm_Unsigned)(a) * (vm_Unsigned)(b)))

static inline double numpow(double a, double b) { return b == 2.0 ? a * a : pow(a, b); }

/* Instrumentation helpers (the instrumented loops only). */

/* EV_SITE's payload for the frame [ci] being entered (vm_events.h): the calling
 * instruction's index in the Lua caller and the caller's id. A frame not called by Lua code
 * (from C: pcall, a metamethod, a callback) gets pc 0xffffffff and, as its caller, the
 * nearest Lua frame below, in this coroutine or its resumers (what the call graph calls the
 * caller of a call through C), or 0 when there is none. A tail call keeps the site of the
 * call it replaces. */
static inline uint64_t site_caller(const Proto *p) {
    return p->id <= EV_DEPTH_MAX ? (uint64_t)p->id << 32 : 0; /* 24 bits, like a depth */
}

static inline uint64_t call_site(const State *S, const CallInfo *ci) {
    const CallInfo *prev = ci->prev;
    if ((ci->callstatus & CIST_FRESH) || (prev->callstatus & CIST_C)) {
        /* Down through C frames, and from a coroutine's first frame into its resumer (the
         * Lua function that called resume, or whatever wrap's function was called from). */
        for (;;) {
            while (prev != NULL && (prev->callstatus & CIST_C)) prev = prev->prev;
            if (prev != NULL || S->resumer == NULL) break;
            S = S->resumer;
            prev = S->ci;
        }
        return 0xffffffffu | (prev ? site_caller(prev->func->u.lf->p) : 0);
    }
    const Proto *cp = prev->func->u.lf->p;
    return (uint64_t)(uint32_t)((prev->savedpc - cp->code) - 1) | site_caller(cp);
}

/* The address a slow-path heap access stands for: the table indexed, or the value. */
static inline const void *mem_target(const Value *v) {
    return v->tt == VT_TABLE ? (const void *)v->u.t : (const void *)v;
}

/* The frame's depth as events carry it (24 bits, saturated). */
static inline uint64_t ev_depth(const CallInfo *ci) {
    uint32_t d = (uint32_t)ci->depth;
    return d > EV_DEPTH_MAX ? EV_DEPTH_MAX : d;
}

/* EV_CALL's payload for entering Lua frame [ci] of function [id] (vm_events.h). "From C"
 * is set on the first Lua call a C frame makes (a pcall, a sort comparator's first call):
 * that is when frames the analyzers keep at the C frame's depth (a Lua function that
 * returned there earlier) have ended; later calls from the same C frame find it in place.
 * A C frame's callstatus is reset when the record is reused for another call. */
static inline uint64_t call_payload(const CallInfo *ci, uint32_t id) {
    CallInfo *prev = ci->prev;
    uint64_t fromc = 0;
    if ((prev->callstatus & (CIST_C | CIST_CALLEDLUA)) == CIST_C) {
        prev->callstatus |= CIST_CALLEDLUA;
        fromc = EV_CALL_FROM_C;
    }
    return (uint64_t)id | fromc | ev_depth(ci) << 32;
}

/* The events of a Lua frame's start (startfunc in the instrumented loops): its call site,
 * its EV_CALL, and its Ball-Larus path register and action table, each as the enabled
 * analyses need. */
static inline void frame_start_events(State *S, CallInfo *ci) {
    Proto *ep = ci->func->u.lf->p;
    uint32_t id = ep->id;
    if (__builtin_expect(id == 0, 0)) id = vm_prof_newid(ep);
    unsigned needs = vm_prof_needs;
    if (needs & PROF_NEED_SITE) vm_prof_emit(ev_make(EV_SITE, call_site(S, ci)));
    if (needs & PROF_NEED_CALL) vm_prof_emit(ev_make(EV_CALL, call_payload(ci, id)));
    if (needs & PROF_NEED_PATH) {
        ci->pathbias = vm_pathprof_bias(ep, id);
        ci->pathreg = 0;
    }
}

/* Ball-Larus: apply the action of outcome [o] of the branching instruction at [ipc] to the
 * path register of [ci] (vm_pathprof.h); [ci]'s bias is not VM_PATH_OFF. */
static inline void path_act(CallInfo *ci, uint32_t fid, const Instr *ipc, unsigned o) {
    uint64_t a = vm_pathprof_act(ci->pathbias, ipc, o);
    uint32_t reset = vm_pathact_reset(a);
    if (__builtin_expect(reset == VM_PATH_NORESET, 1)) {
        ci->pathreg += vm_pathact_inc(a);
    } else {
        vm_prof_emit(vm_pathprof_event(fid, ci->pathreg + vm_pathact_inc(a)));
        ci->pathreg = reset;
    }
}


/* The loop twice from one body (vm_interp_body.h): plain, and instrumented with the events
 * of the enabled analyses (vm_prof.h). Which one runs is chosen once, before the program
 * starts (vm_prof_instrumented), so the plain loop pays nothing for profiling. */
#define VM_EXEC_NAME vm_execute_plain
#define VM_EXEC_INSTR 0
#define VM_EXEC_ORACLE 0
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_ORACLE

#define VM_EXEC_NAME vm_execute_instr
#define VM_EXEC_INSTR 1
#define VM_EXEC_ORACLE 0
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_ORACLE

/* With -Xjit=on: the plain loop, handing frames to compiled code where it can (JITENTER). */
#define VM_EXEC_NAME vm_execute_jit
#define VM_EXEC_INSTR 0
#define VM_EXEC_JIT 1
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_JIT

/* One instruction for compiled code (vm_jit_step): the plain loop's handlers, returning
 * after the instruction instead of dispatching the next. */
#define VM_EXEC_NAME vm_execute_step
#define VM_EXEC_INSTR 0
#define VM_EXEC_STEP 1
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_STEP

/* The instrumented JIT loop: profiling with the JIT on (jit/README.md). */
#define VM_EXEC_NAME vm_execute_jit_instr
#define VM_EXEC_INSTR 1
#define VM_EXEC_JIT 1
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_JIT

/* One instrumented instruction, for compiled code while profiling. */
#define VM_EXEC_NAME vm_execute_step_instr
#define VM_EXEC_INSTR 1
#define VM_EXEC_STEP 1
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_STEP

void vm_prof_frame_start(State *S, CallInfo *ci) {
    frame_start_events(S, ci);
    vm_prof_frame_back(ci);
}

void vm_prof_frame_exit(CallInfo *ci, bool ret) {
    if (ci->pathbias != VM_PATH_OFF) {
        vm_prof_emit(vm_pathprof_event(ci->func->u.lf->p->id, ci->pathreg));
        ci->pathbias = VM_PATH_OFF;
    }
    if (ret && (vm_prof_needs & PROF_NEED_RETURN)) vm_prof_emit(ev_make(EV_RETURN, ev_depth(ci)));
}

void vm_prof_frame_back(CallInfo *ci) {
    if (vm_prof_needs & PROF_NEED_MEM) vm_prof_reserve(2 * (size_t)ci->func->u.lf->p->ncode);
}

/* Calls, tail calls and returns are never stepped (jit.c), so a step's only events are
 * heap accesses and Ball-Larus actions: without those analyses (and when not profiling at
 * all: vm_prof_needs is 0) the plain step emits the same events as the instrumented one,
 * for less work. */
const Instr *vm_jit_step(State *S, CallInfo *ci) {
    if (vm_prof_needs & (PROF_NEED_MEM | PROF_NEED_PATH))
        vm_execute_step_instr(S, ci);
    else
        vm_execute_step(S, ci);
    return ci->savedpc;
}

/* The path oracle's loop (debug, vm_pathprof.h): instrumented, and it also reports every
 * instruction dispatched, every Lua frame entered and every exit. */
#define VM_EXEC_NAME vm_execute_oracle
#define VM_EXEC_INSTR 1
#define VM_EXEC_ORACLE 1
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_ORACLE

void vm_execute(State *S, CallInfo *ci) {
    if (vm_jit_enabled) {
        if (vm_prof_instrumented)
            vm_execute_jit_instr(S, ci);
        else
            vm_execute_jit(S, ci);
    } else if (__builtin_expect(vm_prof_instrumented, 0)) {
        if (__builtin_expect(vm_pathprof_oracle, 0))
            vm_execute_oracle(S, ci);
        else
            vm_execute_instr(S, ci);
    } else {
        vm_execute_plain(S, ci);
    }
}
