/* jit_api.h: the x86-64 template JIT (jit/README.md), what vm/ and the command line use; every
 * other header of jit/ is private to it. A whole Proto is compiled to machine code the first
 * time one of its frames starts, and the interpreter hands frames over to that code at the
 * few points where it checks (function entry, return into a frame, loop back edges).
 * Compiled code runs on the interpreter's frames (same registers, same CallInfo), calls and
 * returns between compiled frames itself, and gives a frame back only when the frame to
 * continue cannot run compiled.
 *
 * Words used throughout jit/:
 * - template: the machine code of one bytecode instruction, specialised to its operands, with
 *   type guards that send anything unusual to a step (jit_compile.c's table says which
 *   opcodes have one);
 * - step: an instruction run by the interpreter (vm_jit_step) from compiled code, because it
 *   has no template or its template's guards failed; compiled code then goes on;
 * - entry: where compiled code of a function is entered: JitCode.at[pc] (the interpreter's
 *   hand-over), JitCode.callentry (compiled calls), through JitCode.enter;
 * - hand-over: the interpreter giving a frame to compiled code (jit_handover) until that code
 *   returns the frame to continue in the interpreter. */
#ifndef JIT_API_H
#define JIT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "vm_state.h"

/* Compiled code of one Proto. Entered only through [enter]: it saves the callee-saved
 * registers, loads the register convention (jit/README.md) and jumps to [target], one of
 * the at[] addresses. It returns when the frame to continue, S->ci, needs the interpreter:
 * with the pc (an address in that frame's code, also stored in its savedpc) at which the
 * interpreter continues, or NULL when the frame entered from C (CIST_FRESH) has returned, its
 * results in place, and the interpreter returns to C as from its own 'ret'. Compiled calls
 * and returns switch frames without returning (jit/README.md), so S->ci need not be the frame
 * that was entered. */
typedef const Instr *(*JitEnterFn)(State *S, CallInfo *ci, Value *base, const void *target);

typedef struct JitCode {
    JitEnterFn enter;
    const void **at;        /* per pc: the code of that instruction (its template, or a step
                               through the interpreter, vm_jit_step), where the interpreter hands
                               a frame over, compiled calls enter a callee and compiled returns
                               continue their caller; NULL when the function could not be
                               compiled */
    const void *callentry;  /* where compiled calls enter a new frame: at[0], after the frame's
                               EV_CALL while profiling (jit/README.md) */
    void *mem;              /* the code (read + execute) */
    size_t memsize;         /* bytes mapped */
    size_t codesize;        /* bytes used */
    int ntemplated;         /* instructions with a template, for -Xdump=jit */
    struct JitFieldIC *ic;  /* the inline caches of its field sites (jit/jit_ic.c): a malloc'd
                               array that the code points into, kept as long as the code */
    int nic;                /* how many */
} JitCode;

/* Runtime switches, set once by the command line before the program runs. */
typedef struct JitOptions {
    bool on;        /* -Xjit=on */
    bool dump;      /* -Xdump=jit: disassembly with bytecode on stderr at each compilation */
    bool perfmap;   /* -Xjit.perfmap: /tmp/perf-PID.map lines for perf report */
} JitOptions;

/* The interpreter's side of the hand-over, defined in vm/vm_interp.c so that vm/ links
 * without jit/ (the dependency points one way: jit/ uses vm/; the command line links both
 * and calls jit_configure, which sets them). vm_jit_enabled: run the JIT copies of the loop
 * (-Xjit=on); vm_jit_compiler: jit_compile. */
extern bool vm_jit_enabled;
extern const struct JitCode *(*vm_jit_compiler)(Proto *p);
/* jit_compile_window, for the instrumented sampling copy's hand-over (jit_handover_window). */
extern const struct JitCode *(*vm_jit_window_compiler)(Proto *p);

void jit_configure(const JitOptions *o);

/* -Xstats: the field sites given an inline cache and their misses by reason (jit/jit_ic.c),
 * one "[stats] jit: ..." line on [out]. Counted without atomics: under threads the counts
 * may lose a few. */
void jit_print_stats(FILE *out);

/* The compiled code of [p], compiling it first if no thread has (under a lock; the result
 * is published with a release store in p->jit). Never NULL: a function that cannot be
 * compiled gets a JitCode with at == NULL and stays interpreted. */
const JitCode *jit_compile(Proto *p);

/* -Xsample.mode=code with compiled windows (vm/prof/vm_sample.h, vm_sample_jit_windows): the
 * instrumented twin of [p]'s code, which sampling windows run (jit/README.md, "Sampled
 * instrumentation"), compiled first if no thread has (p->jitwin, as jit_compile) and windows
 * have met [p] -Xsample.twin times, this one included; before that a JitCode with at == NULL
 * (interpret the frame this time), which is not stored. */
const JitCode *jit_compile_window(Proto *p);

/* Code memory (W^X): [n] bytes of [code] copied into fresh pages mapped read + write, which
 * are then made read + execute before the address is returned; never writable and
 * executable at once. NULL if the kernel refuses. *mapped receives the mapping's size. */
void *jit_mem_publish(const void *code, size_t n, size_t *mapped);

/* Disassemble [n] bytes at [code] (Zydis, Intel syntax) to [out], one instruction a line,
 * each prefixed by [indent]. */
void jit_disasm(FILE *out, const void *code, size_t n, const char *indent);

/* The interpreter's hook (vm_interp_body.h, vm_execute_jit only): if [p] has compiled code,
 * run the frame [ci] in it from [pc] and return what [enter] returns; else return [pc].
 * [compile]: this is the frame's entry or a return into it, where a function not compiled
 * yet is compiled (back edges only look: the function was compiled when its frame was
 * entered, or it could not be). */
static inline const Instr *jit_handover(State *S, CallInfo *ci, Proto *p, Value *base, const Instr *pc,
                                        bool compile) {
    const JitCode *jc = __atomic_load_n((JitCode *const *)&p->jit, __ATOMIC_ACQUIRE);
    if (jc == NULL) {
        if (!compile) return pc;
        jc = vm_jit_compiler(p);
    }
    if (jc->at == NULL) return pc;
    return jc->enter(S, ci, base, jc->at[pc - p->code]);
}

/* The same for the instrumented sampling copy (vm_execute_jit_sample_instr): [p]'s twin,
 * compiled at any hand-over once due (jit_compile_window; each hand-over without a twin
 * counts: a function's meetings with windows may all be back edges of a loop that never
 * returns into its frame). */
static inline const Instr *jit_handover_window(State *S, CallInfo *ci, Proto *p, Value *base, const Instr *pc) {
    const JitCode *jc = __atomic_load_n((JitCode *const *)&p->jitwin, __ATOMIC_ACQUIRE);
    if (jc == NULL) jc = vm_jit_window_compiler(p);
    if (jc->at == NULL) return pc;
    return jc->enter(S, ci, base, jc->at[pc - p->code]);
}

#endif
