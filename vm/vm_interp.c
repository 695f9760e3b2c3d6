/* vm_interp.c: the interpreter: a dispatch loop over 64-bit instructions with computed goto,
 * fast paths inline and slow paths in vm_meta.c, compiled several times from one body
 * (vm_interp_body.h), one copy per row of the variant table below.
 *
 * Frame invariants (shared with vm_call.c and the JIT, jit/README.md):
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
 * back edges = JMP/FORLOOP/TFORLOOP with a negative offset; exits = the RETURN opcodes and
 * TAILCALL; branches = the conditional tests; heap loads and stores = GET and SET opcodes).
 * The instrumented copies emit there, each kind only when an enabled analysis needs it
 * (vm_prof_needs), the frame events of the producer (vm/prof/vm_prof.h): EV_SITE and EV_CALL
 * at startfunc (frames returned into enter at 'returning', after it); EV_PATH at the
 * branches (Ball-Larus actions), returns and tail calls; EV_RETURN at 'ret'; EV_LOAD and
 * EV_STORE at the table and upvalue opcodes. The safepoint poll sits at startfunc and on back
 * edges only, as one load and compare of a global word. */
#include <math.h>

#include "vm_debug.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"
#include "vm_meta.h"
#include "vm_opcodes.h"
#include "vm_prof.h"
#include "vm_sample.h"
#include "vm_thread.h"
#if TANDEM_JIT
#include "jit_api.h"
#endif

/* Integer arithmetic wraps around (two's complement), as Lua's. */
#define IADD(a, b) ((vm_Integer)((vm_Unsigned)(a) + (vm_Unsigned)(b)))
#define ISUB(a, b) ((vm_Integer)((vm_Unsigned)(a) - (vm_Unsigned)(b)))
#define IMUL(a, b) ((vm_Integer)((vm_Unsigned)(a) * (vm_Unsigned)(b)))

static inline double numpow(double a, double b) { return b == 2.0 ? a * a : pow(a, b); }

/* ======================================================================
 * The variant table: one copy of the loop per row, each flag given in every row (the build
 * has -Wundef, and vm_interp_body.h takes the row apart, so a missing flag does not compile).
 *   INSTR   emit the events of the enabled analyses (vm_prof.h);
 *   JIT     hand frames to compiled code at entries, returns and back edges (JITENTER);
 *   STEP    run the one instruction at ci->savedpc and return (vm_jit_step, for compiled code);
 *   ORACLE  also report every instruction, entry and exit to the path oracle (vm_pathprof.h);
 *   HOOK    call the debug hooks of the coroutine (vm_hook.c): run while S->hookmask != 0,
 *           chosen at every entry (vm_execute) and switched to by the other copies when a
 *           call into C sets a hook (HOOKSWITCH in vm_interp_body.h). No JIT: compiled code
 *           has no hooks, so a hooked coroutine is interpreted.
 * Which copy runs is chosen once per run (vm_execute) or per step (vm_jit_step), so the plain
 * loop pays nothing for profiling or the JIT; for hooks it pays one byte test at each entry
 * and after each call into C (HOOKSWITCH). Text size of each copy, hot and cold parts
 * (gcc 12 -O2, x86-64, `nm -S` on vm_interp.c.o of a RelWithDebInfo build, 2026-11-26): the
 * nine come to 256 KB; what instrumentation adds to a copy is a third again (plain 19.9 KB,
 * instrumented 29.3 KB), what hooks add a half (hooked 31.8 KB):
 *   name                    INSTR JIT STEP ORACLE HOOK  text
 *   vm_execute_plain          0    0    0    0     0    19.9 KB
 *   vm_execute_instr          1    0    0    0     0    28.8 KB
 *   vm_execute_jit            0    1    0    0     0    20.4 KB
 *   vm_execute_jit_instr      1    1    0    0     0    29.7 KB
 *   vm_execute_step           0    0    1    0     0    16.0 KB
 *   vm_execute_step_instr     1    0    1    0     0    24.1 KB
 *   vm_execute_oracle         1    0    0    1     0    31.5 KB  (-DTANDEM_PATH_ORACLE=ON only)
 *   vm_execute_hook           0    0    0    0     1    31.8 KB
 *   vm_execute_hook_instr     1    0    0    0     1    42.2 KB
 * The JIT rows exist only with -DTANDEM_JIT=ON (the default). The sampling rows below the
 * table (-Xsample.mode=code) are the plain, JIT and instrumented rows again with
 * VM_EXEC_SAMPLE 1, a flag outside the row.
 * ====================================================================== */

/* The hooked copies, which the others switch to. */
static void execute_hooked(State *S, CallInfo *ci);

#define VM_EXEC_ROW vm_execute_plain, 0, 0, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_ROW vm_execute_instr, 1, 0, 0, 0, 0
#include "vm_interp_body.h"
#if TANDEM_JIT
#define VM_EXEC_ROW vm_execute_jit, 0, 1, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_ROW vm_execute_jit_instr, 1, 1, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_ROW vm_execute_step, 0, 0, 1, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_ROW vm_execute_step_instr, 1, 0, 1, 0, 0
#include "vm_interp_body.h"
#endif
#if TANDEM_PATH_ORACLE
#define VM_EXEC_ROW vm_execute_oracle, 1, 0, 0, 1, 0
#include "vm_interp_body.h"
#endif
#define VM_EXEC_ROW vm_execute_hook, 0, 0, 0, 0, 1
#include "vm_interp_body.h"
/* Sampled instrumentation (-Xsample.mode=code, vm/prof/vm_sample.h): the same rows with
 * VM_EXEC_SAMPLE 1, which count ticks at entries and back edges and give the frame to the
 * trampoline (execute_sampled) when the phase flips:
 *   vm_execute_jit_sample         between windows, hands frames to (uninstrumented) compiled code
 *   vm_execute_sample             between windows, -Xjit=off
 *   vm_execute_jit_sample_instr   inside windows, hands frames to the instrumented twins of
 *                                 compiled code (vm_sample_jit_windows)
 *   vm_execute_step_sample_instr  the twins' steps (vm_jit_step_window)
 *   vm_execute_sample_instr       inside windows: the instrumented interpreter (-Xjit=off,
 *                                 -Xsample.windows=interpreted, the profile library) */
#if TANDEM_JIT
#define VM_EXEC_SAMPLE 1
#define VM_EXEC_ROW vm_execute_jit_sample, 0, 1, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_SAMPLE 1
#define VM_EXEC_ROW vm_execute_jit_sample_instr, 1, 1, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_SAMPLE 1
#define VM_EXEC_ROW vm_execute_step_sample_instr, 1, 0, 1, 0, 0
#include "vm_interp_body.h"
#endif
#define VM_EXEC_SAMPLE 1
#define VM_EXEC_ROW vm_execute_sample, 0, 0, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_SAMPLE 1
#define VM_EXEC_ROW vm_execute_sample_instr, 1, 0, 0, 0, 0
#include "vm_interp_body.h"
#define VM_EXEC_ROW vm_execute_hook_instr, 1, 0, 0, 0, 1
#include "vm_interp_body.h"

static void execute_switched(State *S, CallInfo *ci);

/* Profiles stay whole while hooks run (the instrumented hooked copy); the path oracle does
 * not see hooked frames. A mask of VM_MASKSWITCH alone is no hook but the profile library's
 * request (vm_debug.h): the frames move to the sampling trampoline instead. */
static void execute_hooked(State *S, CallInfo *ci) {
    if (S->hookmask == VM_MASKSWITCH) {
        execute_switched(S, ci);
        return;
    }
    S->hookmask &= (uint8_t)~VM_MASKSWITCH;
    /* vm_prof_tl: the profile library gives a thread that ran before its first start a
     * stream only at its first window (vm_sample.c, phase_flip) */
    if (vm_prof_instrumented && vm_prof_has_stream())
        vm_execute_hook_instr(S, ci);
    else
        vm_execute_hook(S, ci);
}

#if TANDEM_JIT
/* -Xsample.mode=code: compiled code runs only between windows, uninstrumented, so its steps
 * are plain. The back edges of the loops it steps (float FORLOOP, TFORLOOP) are ticks, as
 * in the interpreter's copies: counted here, and compiled code leaves for the interpreter
 * after the step when one ends the gap (jit_sample_after_step). */
static inline const Instr *step_sampled(State *S, CallInfo *ci, bool window) {
    const Instr *ipc = ci->savedpc;
    if (window)
        vm_execute_step_sample_instr(S, ci);
    else
        vm_execute_step(S, ci);
    unsigned op = vm_op(*ipc);
    if ((op == OP_FORLOOP || op == OP_TFORLOOP) && ci->savedpc <= ipc) {
        vm_sample_tl.injit += window;
        if (--vm_sample_tl.left <= 0) vm_sample_tl.at = VM_SAMPLE_AT_BACK;
    }
    return ci->savedpc;
}

bool vm_jit_enabled;
const JitCode *(*vm_jit_compiler)(Proto *p);
const JitCode *(*vm_jit_window_compiler)(Proto *p);

/* The instrumented twins' steps (jit/README.md, "Sampled instrumentation"): the instrumented
 * sampling step, whose path actions leave a partial path unemitted (vm_sample_path_act). */
const Instr *vm_jit_step_window(State *S, CallInfo *ci) { return step_sampled(S, ci, true); }

/* Uninstrumented compiled code stepping an instruction that is no loop (not FORLOOP,
 * TFORLOOP: no sampling tick to count): what vm_jit_step does then, without its tests. */
const Instr *vm_jit_step_plain(State *S, CallInfo *ci) {
    vm_execute_step(S, ci);
    return ci->savedpc;
}

/* Calls, tail calls and returns are never stepped (jit/), so a step's only events are
 * heap accesses and Ball-Larus actions: without those analyses (and when not profiling at
 * all: vm_prof_needs is 0) the plain step emits the same events as the instrumented one,
 * for less work. */
const Instr *vm_jit_step(State *S, CallInfo *ci) {
    if (__builtin_expect(vm_sample_code, 0)) return step_sampled(S, ci, false);
    if (vm_prof_needs & (PROF_NEED_MEM | PROF_NEED_PATH))
        vm_execute_step_instr(S, ci);
    else
        vm_execute_step(S, ci);
    return ci->savedpc;
}
#endif

/* The sampling trampoline: runs the frame [ci] entered from C (and every frame above it,
 * until it returns) in the copy the thread's phase wants, and whenever a copy gives the
 * frame back (VmSampleTl.switching), flips the phase if its countdown ran out and continues
 * S->ci in the other copy, in a loop: a switch never nests C frames. Before the
 * instrumented copy takes over frames it did not run, vm_sample_join replays them and marks
 * their paths partial: always when coming from the plain copy (which may have started
 * frames inside the window, with stale path state), else when the window is not the one
 * that last took over this state (a coroutine or green thread that waited through a gap). */
/* The sampling copy for a window ([window]) or a gap: with compiled code (its instrumented
 * twins inside windows: vm_sample_jit_windows) or interpreted. */
static void run_sampling_copy(State *S, CallInfo *ci, bool window) {
#if TANDEM_JIT
    if (window ? vm_sample_jit_windows : vm_jit_enabled) {
        (window ? vm_execute_jit_sample_instr : vm_execute_jit_sample)(S, ci);
        return;
    }
#endif
    (window ? vm_execute_sample_instr : vm_execute_sample)(S, ci);
}

static void execute_sampled_at(State *S, CallInfo *ci, uint8_t enter, int at, bool from_plain) {
    VmSampleTl *t = &vm_sample_tl;
    for (;;) {
        /* (the profile library: a thread's first time here registers it, vm_sample.c) */
        if (t->left <= 0 || (vm_sample_phase && !t->live)) vm_sample_flip();
        t->enter = enter;
        bool window = t->window != 0;
        if (window && (from_plain || S->sample_win != t->window)) vm_sample_join(S, at, from_plain);
        run_sampling_copy(S, ci, window);
        from_plain = !window;
        if (!t->switching) return; /* the frame entered from C returned */
        t->switching = 0;
        at = t->at;
        t->at = VM_SAMPLE_AT_MID;
        ci = S->ci;
        enter = at == VM_SAMPLE_AT_ENTRY ? VM_SAMPLE_ENTER_START : VM_SAMPLE_ENTER_MID;
    }
}

static void execute_sampled(State *S, CallInfo *ci) {
    execute_sampled_at(S, ci, VM_SAMPLE_ENTER_FRESH, VM_SAMPLE_AT_ENTRY, false);
}

/* The profile library's switch (vm/prof/vm_prof_phase.h): a copy found VM_MASKSWITCH after a
 * call into C (HOOKSWITCH: ci stands after the call) or vm_execute at a frame's entry
 * (savedpc at its first instruction, as the hooked copy tells the two apart). The frames of
 * this C level run in the trampoline until the frame entered from C returns; the request is
 * then raised again for the level below, whose copy takes it when the C function that
 * called this level returns into it, so every level running when profiling started moves
 * over as it gets control back. A level that is already in the trampoline nests one more
 * trampoline, which changes nothing but a C frame. */
static void execute_switched(State *S, CallInfo *ci) {
    S->hookmask &= (uint8_t)~VM_MASKSWITCH;
    if (ci->savedpc == ci->func->u.lf->p->code)
        execute_sampled(S, ci);
    else
        execute_sampled_at(S, ci, VM_SAMPLE_ENTER_MID, VM_SAMPLE_AT_MID, true);
    if (S->hookmask == 0) S->hookmask = VM_MASKSWITCH;
}

void vm_execute(State *S, CallInfo *ci) {
    if (__builtin_expect(S->hookmask != 0, 0)) {
        execute_hooked(S, ci);
        return;
    }
    if (__builtin_expect(vm_sample_code, 0)) {
        execute_sampled(S, ci);
        return;
    }
#if TANDEM_JIT
    if (vm_jit_enabled) {
        if (vm_prof_instrumented)
            vm_execute_jit_instr(S, ci);
        else
            vm_execute_jit(S, ci);
        return;
    }
#endif
    if (__builtin_expect(vm_prof_instrumented, 0)) {
#if TANDEM_PATH_ORACLE
        if (__builtin_expect(vm_pathprof_oracle, 0)) {
            vm_execute_oracle(S, ci);
            return;
        }
#endif
        vm_execute_instr(S, ci);
        return;
    }
    vm_execute_plain(S, ci);
}
