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
 * `#if VM_EXEC_INSTR`; which one runs is chosen once per run (vm_prof_instrumented). So far
 * only function entry is instrumented (EV_CALL at startfunc; frames returned into enter at
 * 'returning', after it). A safepoint poll will sit at startfunc and on back edges only, as
 * one load and compare of a per-thread flag. */
#include <math.h>

#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_meta.h"
#include "vm_opcodes.h"
#include "vm_prof.h"
#include "vm_thread.h"

/* Integer arithmetic wraps around (two's complement), as Lua's. */
#define IADD(a, b) ((vm_Integer)((vm_Unsigned)(a) + (vm_Unsigned)(b)))
#define ISUB(a, b) ((vm_Integer)((vm_Unsigned)(a) - (vm_Unsigned)(b)))
#define IMUL(a, b) ((vm_Integer)((vm_Unsigned)(a) * (vm_Unsigned)(b)))

static inline double numpow(double a, double b) { return b == 2.0 ? a * a : pow(a, b); }


/* The loop twice from one body (vm_interp_body.h): plain, and instrumented with the events
 * of the enabled analyses (vm_prof.h). Which one runs is chosen once, before the program
 * starts (vm_prof_instrumented), so the plain loop pays nothing for profiling. */
#define VM_EXEC_NAME vm_execute_plain
#define VM_EXEC_INSTR 0
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR

#define VM_EXEC_NAME vm_execute_instr
#define VM_EXEC_INSTR 1
#include "vm_interp_body.h"
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR

void vm_execute(State *S, CallInfo *ci) {
    if (__builtin_expect(vm_prof_instrumented, 0))
        vm_execute_instr(S, ci);
    else
        vm_execute_plain(S, ci);
}
