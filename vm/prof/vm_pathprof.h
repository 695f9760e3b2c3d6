/* vm_pathprof.h: Ball-Larus path profiling on the VM side (vm_pathprof.c): the control-flow
 * graph of a function's bytecode, its path numbering, the per-instruction actions the
 * instrumented interpreter applies to the path register, the decoding of path numbers back
 * into blocks and source lines (for the report), and the independent oracle that checks
 * the numbering (a debug mode).
 *
 * The interpreter's side (vm_interp_body.h, VM_EXEC_INSTR): each Lua frame has a path
 * register r and the bias of its function's action table, both in its CallInfo (pathreg,
 * pathbias: in a function as large as the loop, locals for them were spilled to the stack
 * anyway, and restoring them on every return cost more than keeping them in the frame
 * record, which the loop holds in a register). On entry r = 0. At a branching instruction
 * at address ipc taking outcome o (0: falls through / test not taken, 1: jumps / test
 * taken) it applies the action word vm_pathprof_act(bias, ipc, o):
 *     reset == VM_PATH_NORESET:  r += inc
 *     otherwise (a back edge, or a cut edge of the fallback): emit EV_PATH(r + inc); r = reset
 * At RETURN, RETURN0, RETURN1 and TAILCALL it emits EV_PATH(r). A frame left by an error
 * (or never resumed: a dead coroutine, os.exit) emits nothing for its unfinished path: a
 * prefix of a path is not a path, and giving it a number of its own would need an edge to
 * EXIT from every instruction that can raise. */
#ifndef VM_PATHPROF_H
#define VM_PATHPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "prof_api.h"
#include "ev_api.h"
#include "vm_opcodes.h"
#include "vm_value.h"

/* An action word: low 32 bits the increment, high 32 bits the restart value or
 * VM_PATH_NORESET. Path numbers stay below VM_PATH_NORESET (a function has at most
 * 0xffffffff paths), so the sentinel is never a restart value. */
#define VM_PATH_NORESET 0xffffffffu
static inline uint32_t vm_pathact_inc(uint64_t a) { return (uint32_t)a; }
static inline uint32_t vm_pathact_reset(uint64_t a) { return (uint32_t)(a >> 32); }

/* The bias of a frame whose function is not path-profiled (its id does not fit EV_PATH's
 * 24 bits, or its graph could not be numbered), and of every frame when paths are not
 * profiled: 0, what a zeroed CallInfo holds, so the interpreter can restore a frame's bias
 * without testing whether paths are on. A real bias is never 0 (vm_pathprof_build sees to
 * it). */
#define VM_PATH_OFF ((uintptr_t)0)

/* The action of outcome [o] (0 or 1) of the branching instruction at [ipc] in a frame with
 * bias [bias] != VM_PATH_OFF: actions are two words per instruction, at
 * bias + 2 * address of the instruction (one add, no index arithmetic on the hot path). */
static inline uint64_t vm_pathprof_act(uintptr_t bias, const Instr *ipc, unsigned o) {
    return ((const uint64_t *)(bias + 2 * (uintptr_t)ipc))[o];
}

/* One function's graph, numbering and actions: malloc'd, built once, kept until the end of
 * the process (the report decodes through it after the Proto may have been collected). */
typedef struct VmPathFunc VmPathFunc;

/* Side table: function id -> VmPathFunc, in pages that never move (lock-free reads). */
#define VM_PATH_PAGE_BITS 12
#define VM_PATH_MAXID (1u << 24) /* EV_PATH's function id field */
extern VmPathFunc **vm_pathprof_pages[VM_PATH_MAXID >> VM_PATH_PAGE_BITS];

/* Bias of function [p] with id [fid] (already assigned, vm_prof_newid): builds the graph
 * the first time (thread-safe: the first builder publishes, others wait on the lock and
 * find it). VM_PATH_OFF when the function is not path-profiled. */
uintptr_t vm_pathprof_build(const Proto *p, uint32_t fid) __attribute__((noinline, cold));

/* A VmPathFunc's first member is its bias. */
static inline uintptr_t vm_pathprof_func_bias(const VmPathFunc *f) { return *(const uintptr_t *)f; }

static inline uintptr_t vm_pathprof_bias(const Proto *p, uint32_t fid) {
    if (__builtin_expect(fid < VM_PATH_MAXID, 1)) {
        VmPathFunc **page = __atomic_load_n(&vm_pathprof_pages[fid >> VM_PATH_PAGE_BITS], __ATOMIC_ACQUIRE);
        if (page != NULL) {
            VmPathFunc *f = __atomic_load_n(&page[fid & ((1u << VM_PATH_PAGE_BITS) - 1)], __ATOMIC_ACQUIRE);
            if (f != NULL) return vm_pathprof_func_bias(f);
        }
    }
    return vm_pathprof_build(p, fid);
}

/* Sampled instrumentation (vm_sample.h): the path register of a frame whose sampling window
 * starts at [pc] of function [fid] right after a back edge: the restart value every back
 * edge into that block sets (the value of ENTRY's dummy edge to it). VM_PATH_NORESET when
 * no path starts at [pc] (not the first instruction of a back-edge target, the function
 * not numbered). */
uint32_t vm_pathprof_restart(uint32_t fid, int pc);

/* The EV_PATH event of path [path] of function [fid] (< VM_PATH_MAXID). */
static inline uint64_t vm_pathprof_event(uint32_t fid, uint32_t path) {
    return ((uint64_t)EV_PATH << EV_KIND_SHIFT) | fid | ((uint64_t)path << 24);
}

/* ProfReportOpts.decode_path (prof_api.h): path [path] of function [fid] as blocks and
 * lines. Returns 0, or -1 if [fid] has no graph or [path] is not one of its numbers. */
int vm_pathprof_decode(uint32_t fid, uint32_t path, ProfPath *out, void *ctx);

/* Options (-Xpathprof.limit, -Xpathprof.oracle), set by the command line before the program
 * runs. */
typedef struct VmPathprofOptions {
    uint64_t limit;          /* most paths a function may have before edges are cut
                                (2 .. 2^32 - 1); 0: the default, 2^32 - 1 (EV_PATH's field) */
    const char *oracle_file; /* TANDEM_PATH_ORACLE builds: write the oracle's counts here;
                                NULL: no oracle */
} VmPathprofOptions;
void vm_pathprof_configure(const VmPathprofOptions *o);

/* Before the program runs (vm_prof_start), once, after vm_pathprof_configure: [needs] are
 * the enabled analyses' needs; the oracle runs if one was configured and paths are needed.
 * A lowered limit (-Xpathprof.limit) exercises the fallback on small functions (tests). */
void vm_pathprof_start(unsigned needs);

/* At the end (vm_prof_finish, every program thread stopped): write the oracle's file.
 * Returns 0, or -1 if it could not be written. */
int vm_pathprof_finish(void);

/* ======================================================================
 * Oracle (-DTANDEM_PATH_ORACLE=ON builds): counts the paths without Ball-Larus numbering
 * ======================================================================
 * The interpreter runs a third copy of its loop (vm_execute_oracle) that, besides the
 * normal instrumentation, reports every instruction it dispatches (vm_pathoracle_at), the
 * entry of every Lua frame and every exit. The oracle keeps each frame's sequence of basic
 * blocks (a block is entered when its first instruction is dispatched) and cuts it where
 * a path ends: at an exit, and at a transfer from block X to block Y with Y <= X (a back
 * edge: blocks are numbered in code order) or along an edge the fallback cut; the piece is
 * counted by its block sequence, how it started (function entry, or after a back/cut
 * edge) and how it ended. Nothing there uses the path numbers, so its counts checked
 * against the decoded Ball-Larus profile (tests/profile/run_analysis_tests.py) test the
 * numbering, the actions and the decoder together. */
#if TANDEM_PATH_ORACLE
extern bool vm_pathprof_oracle;

struct CallInfo;
void vm_pathoracle_enter(const struct CallInfo *ci, const Proto *p);
void vm_pathoracle_at(const struct CallInfo *ci, const Proto *p, const Instr *ipc);
void vm_pathoracle_exit(const struct CallInfo *ci);
#endif

#endif
