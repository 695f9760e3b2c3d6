/* vm_sample.h: sampled instrumentation (-Xsample.mode=code): the program runs code without
 * any instrumentation between samples, and its instrumented code only inside sampling
 * windows (Arnold and Ryder's counter-based sampling, Hirzel and Chilimbi's bursty tracing;
 * vm_sample.c has the design and its rejected alternatives).
 *
 * Ticks. A tick is a frame's entry or a loop back edge: the points where the interpreter and
 * compiled code poll for safepoints. Each native thread (each stream) counts down the ticks
 * left in its current phase, a window or a gap between windows, in vm_sample_tl.left:
 *   - between windows the cost of a tick is that decrement and a branch (the interpreter's
 *     plain sampling copy, vm_execute_sample / vm_execute_jit_sample; compiled code: `dec
 *     qword fs:[left]; jle stub`), and nothing else of profiling runs;
 *   - when it reaches 0 the running loop copy returns to vm_execute's trampoline
 *     (vm_interp.c, execute_sampled), which flips the phase (vm_sample_flip) and continues the
 *     frame in the other copy: a window runs the instrumented sampling copy, a gap the plain
 *     one (which hands frames to compiled code). With the JIT the instrumented copy is
 *     vm_execute_jit_sample_instr, which hands frames to each function's instrumented twin
 *     (Proto.jitwin: the exhaustive compiled code's events under this header's rules, its
 *     ticks ending the window; vm_sample_jit_windows, jit/README.md); without it, and for
 *     the profile library, vm_execute_sample_instr (interpreted). Either way a
 *     switch goes through the trampoline: a flip at a back edge continues the frame at the
 *     same pc in the other version, a flip at an entry starts it there.
 * A window lasts -Xsample.window ticks, one in each slot of window / rate ticks, at an offset
 * drawn uniformly in every slot (stratified: vm_sample.c, next_gap), so windows start at
 * random phase and cannot alias with a period of the program, and every stretch of the run
 * gets its share of them. At rate 1 there is one window, the
 * whole run, and the profile is the exhaustive one exactly (tests/profile/run_sample_tests.py).
 *
 * What a window knows of the past (vm_sample_join, when a window starts or a thread's state
 * first runs in it):
 *   - calling contexts: the open Lua frames of the running coroutine chain are replayed as
 *     EV_FRAME events, outermost first, so call trees and call graphs attach the window's
 *     calls under the right frames;
 *   - paths: a frame that was running before the window has a partial Ball-Larus path: it
 *     is marked CIST_SAMPLEPART and its path is not emitted; the mark goes at the frame's next
 *     path restart (a back edge), from where its paths are whole. A window that starts at a
 *     back edge restarts the frame's path right there (vm_pathprof_restart). So only paths
 *     that ran wholly instrumented are counted.
 *
 * Estimates: each stream counts the ticks it ran inside and outside windows; the report
 * scales counts by ticks / ticks inside (vm_sample_fraction) and says the profile is an
 * estimate. */
#ifndef VM_SAMPLE_H
#define VM_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vm_prof.h"
#include "vm_state.h"

/* -Xsample.* (cli), set once before the program starts. */
typedef struct VmSampleOptions {
    bool on;            /* -Xsample.mode=code */
    double rate;        /* fraction of ticks inside windows, (0, 1]: the configured rate */
    uint64_t window;    /* ticks per window, >= 1 */
    uint64_t seed;      /* random phase; 0: from the clock */
    bool adaptive;      /* -Xsample.adaptive: lower a stream's rate while its ring fills */
    bool interpreted;   /* -Xsample.windows=interpreted: windows run the instrumented interpreter
                           even where compiled code exists (the design before compiled windows,
                           kept to measure against) */
    uint64_t twin;      /* -Xsample.twin: a function's instrumented twin is compiled at the
                           twin-th time a window meets a frame of it (an entry, a back edge, a
                           return into it); before, its window frames run interpreted. 1: at
                           the first; 0 here: VM_SAMPLE_DEFAULT_TWIN */
} VmSampleOptions;

#define VM_SAMPLE_DEFAULT_WINDOW 256 /* ticks. Shorter windows spread the samples (bench/suite/json.lua
                                        * at 5%: callgraph weighted error 8-12% with 1024, 4-5% with 256) but lose
                                        * more paths at their edges (pathprof: 6% with 256, 7-11% with 64 or less) */
#define VM_SAMPLE_DEFAULT_TWIN 1     /* the meeting at which a twin is compiled (VmSampleOptions.twin):
                                        * the first. Measured without the collector's moving share
                                        * (sample_code_cost.py --no-gc, json callgraph at 5%), 4 and
                                        * 16 cost 0.3 M instructions more than 1 (vm/prof/README.md) */

/* Where the running copy asked for a switch (VmSampleTl.at; the trampoline continues the
 * frame accordingly). */
enum {
    VM_SAMPLE_AT_MID = 0,   /* inside the frame, after a call into C or a poll: at its savedpc */
    VM_SAMPLE_AT_ENTRY = 1, /* at the frame's entry tick: its start events not yet emitted */
    VM_SAMPLE_AT_BACK = 2,  /* at a back edge tick: savedpc is the loop header */
};

/* How the trampoline enters a loop copy (VmSampleTl.enter, read and reset by the copy). */
enum {
    VM_SAMPLE_ENTER_FRESH = 0, /* a frame entered from C: at startfunc, tick included */
    VM_SAMPLE_ENTER_START = 1, /* at startfunc past the tick: the frame's start events */
    VM_SAMPLE_ENTER_MID = 2,   /* at the frame's savedpc ('returning') */
};

/* One per native thread. [left] first: compiled code decrements it at fs:[offset of
 * vm_sample_tl] (jit/); [at] is stored by compiled code's exit stubs. Only the owning
 * thread writes any field; the report reads the counters after the thread has stopped. */
typedef struct VmSampleTl {
    int64_t left;         /* ticks left in this phase; <= 0: a flip is due */
    uint8_t at;           /* VM_SAMPLE_AT_*: where the due switch is */
    uint8_t switching;    /* a loop copy returned to the trampoline to switch */
    uint8_t enter;        /* how the trampoline enters the next copy (vm_interp.c) */
    uint8_t live;         /* begun (vm_sample_thread_begin) and not yet folded into totals */
    uint32_t window;      /* the window this thread runs (a global number), 0: between */
    int64_t phase;        /* ticks the current phase was given */
    uint64_t in, out;     /* ticks of finished phases inside / outside windows */
    uint64_t in_w;        /* ticks inside windows, each weighted by 2^shift of its window: the
                             numerator of the fraction the estimates scale by */
    uint64_t windows;     /* windows started */
    uint64_t rng;         /* xorshift64* state */
    int64_t off;          /* the current slot's window offset (vm_sample.c, next_gap) */
    double rate;          /* the stream's current rate: the configured one >> shift */
    /* -Xsample.adaptive: the rate is the configured one / 2^shift; each window's events are
     * weighted by 2^wshift (EV_RATE), so the estimate stays unbiased across rate changes */
    uint8_t shift, wshift, emitted; /* current, the open window's, the last EV_RATE's */

    int64_t wleft;        /* ticks of the open window after the current piece */
    uint64_t hold;        /* no halving before this many ticks (vm_sample.c, slow_down) */
    uint64_t wstart;      /* events produced when the current piece began */
    uint64_t wevents;     /* most events one piece produced so far (the room asked for) */
    uint64_t skipped, cut; /* windows not opened, windows ended early: the ring was filling */
    uint64_t at_level[8]; /* ticks inside windows per shift (the last: that shift or deeper) */
    uint64_t injit;       /* ticks inside windows counted by compiled code (the instrumented
                             twins and their C helpers), for -Xstats: the rest ran interpreted */
    struct VmSampleTl *next; /* every live thread's state, for the report (vm_sample.c) */
} VmSampleTl;

extern _Thread_local VmSampleTl vm_sample_tl;
/* -Xsample.mode=code is on: vm_execute runs the sampling copies (set before the program). */
extern bool vm_sample_code;
extern VmSampleOptions vm_sample_opts;

/* The profile library (vm/lib/vm_lib_profile.c, vm_prof_phase.c) drives the windows instead
 * of the countdown: set (with vm_sample_code) at the first profile.start, never cleared. A
 * thread's countdown is then FOREVER, and its phase flips only when vm_sample_phase_set
 * forces it: to a window while the library profiles, to none while it does not. */
extern bool vm_sample_phase;
/* With every other language thread stopped (vm_safepoint_run): every live thread's (and the
 * caller's) next tick or check flips to a window ([on]) or out of one. */
void vm_sample_phase_set(bool on);
/* Set by jit_configure (the dependency points from jit/ to vm/): from now on compiled code
 * counts ticks as in -Xsample.mode=code, so that a forced flip takes a frame out of it. */
extern void (*vm_sample_jit_on)(void);

/* The instrumented sampling copy's Ball-Larus action and frame end (vm_prof.h's
 * vm_prof_path_act and vm_prof_frame_exit_events, but a frame marked CIST_SAMPLEPART emits
 * no path: its register holds a path that began before the window; the mark goes at the
 * next restart, where a whole path begins). */
/* A frame the instrumented copy meets in a window for the first time (ci->samplewin is not
 * the window): it ran before the window, between windows or in an earlier one, so its bias
 * is whatever its CallInfo record held and its path is partial: its function's bias, and
 * CIST_SAMPLEPART. Done lazily, at the frame's first path action or exit in the window, so a
 * window's start costs nothing per frame on the stack (a deep recursion would otherwise
 * pay its depth at every window). */
void vm_sample_adopt(CallInfo *ci, Proto *p) __attribute__((noinline, cold));
static inline void vm_sample_own(CallInfo *ci, Proto *p) {
    if (__builtin_expect(ci->samplewin != vm_sample_tl.window, 0)) vm_sample_adopt(ci, p);
}

static inline void vm_sample_path_act(CallInfo *ci, uint32_t fid, const Instr *ipc, unsigned o) {
    if (__builtin_expect(!(ci->callstatus & CIST_SAMPLEPART), 1)) {
        vm_prof_path_act(ci, fid, ipc, o);
        return;
    }
    uint64_t a = vm_pathprof_act(ci->pathbias, ipc, o); /* the partial path: no event */
    if (vm_pathact_reset(a) == VM_PATH_NORESET) {
        ci->pathreg += vm_pathact_inc(a);
        return;
    }
    ci->callstatus &= (uint16_t)~CIST_SAMPLEPART;
    ci->pathreg = vm_pathact_reset(a);
}

static inline void vm_sample_frame_exit_events(CallInfo *ci, uint32_t fid, bool ret) {
    if (ci->pathbias != VM_PATH_OFF) {
        if (!(ci->callstatus & CIST_SAMPLEPART)) vm_prof_emit(vm_pathprof_event(fid, ci->pathreg));
        ci->pathbias = VM_PATH_OFF;
    }
    if (ret && (vm_prof_needs & PROF_NEED_RETURN)) vm_prof_emit(ev_make(EV_RETURN, vm_prof_depth(ci)));
}

/* Compiled windows (jit/README.md, "Sampled instrumentation"): set by jit_configure when
 * compiled code exists and windows may run it (-Xsample.mode=code or shadow, not the profile
 * library, not -Xsample.windows=interpreted; the program of shadow mode never opens a window,
 * its shadows do). Windows then run the instrumented twin of
 * each function's compiled code (Proto.jitwin, compiled when windows have met frames of it
 * -Xsample.twin times; interpreted until then, which gives the same events) through the
 * interpreter's vm_execute_jit_sample_instr, which hands frames to the twins as
 * vm_execute_jit_instr hands them to exhaustive compiled code. */
extern bool vm_sample_jit_windows;

/* For the twins' call and return helpers in C (jit/jit_frame.c), what the instrumented
 * sampling copy does at a frame's start (its events, the window's stamp: the path is whole,
 * room for heap accesses) and end (adoption, then vm_sample_frame_exit_events: a partial
 * path is not emitted); vm_sample_adopt_ci: vm_sample_adopt of the frame's own function, for
 * the twins' out-of-line adoption stubs (which keep every register). */
void vm_sample_frame_start(State *S, CallInfo *ci);
void vm_sample_frame_exit(CallInfo *ci, bool ret);
void vm_sample_adopt_ci(CallInfo *ci);

/* Before the program (vm_prof_start): the options; false if they are inconsistent. */
void vm_sample_configure(const VmSampleOptions *o);

/* A native thread that runs language code starts / ends (vm_prof_thread_begin/_end): its
 * countdown starts in a gap of random length (or, at rate 1, in the one window); at its
 * end its tick counts join the run's totals. */
void vm_sample_thread_begin(void);
void vm_sample_thread_end(void);

/* The countdown reached 0 (vm_sample_tl.left <= 0): end the window (draw the next gap) or
 * start one (a new global window number, the window's length). */
void vm_sample_flip(void);

/* The instrumented copy is about to run [S] in the current window: replay its chain's open
 * frames and mark their paths partial (the header's comment). [at]: VM_SAMPLE_AT_*, where
 * S->ci stands (its entry: its own start events follow, nothing of it is replayed).
 * [force]: also the states already stamped with this window (coming from the plain copy,
 * which may have started frames in the window without instrumentation). */
void vm_sample_join(State *S, int at, bool force);

/* The fraction of ticks run inside windows over every stream (threads still running
 * included): the report's scale. 1 when sampling is off. */
double vm_sample_fraction(void);

/* Shadow profiling (vm_shadow.c): in a shadow, open its one window of [length] ticks;
 * vm_sample_ticks: every tick counted so far, inside windows or not. */
void vm_sample_open_shadow(int64_t length);
uint64_t vm_sample_ticks(void);

/* -Xstats: ticks, windows, the measured fraction. */
void vm_sample_print_stats(FILE *f);

#endif
