/* vm_prof_phase.h: profiling a phase of a program, the profile library's side in vm/prof/
 * (the library itself, its Lua surface, is vm/lib/vm_lib_profile.c).
 *
 * Design (vm_prof_phase.c has the rejected alternatives). A program that has not called
 * profile.start runs exactly the code of a run without profiling: nothing here is on any of
 * its paths, and the library's only footprint is its table. The first profile.start turns
 * the run into a sequential profile of the requested analyses (vm_prof.c,
 * vm_prof_phase_begin) and hands the program to sampled instrumentation's machinery
 * (vm_sample.h), driven by the library instead of a countdown (vm_sample_phase): every entry
 * into the interpreter from C goes through the sampling trampoline, and a thread's phase
 * flips only when the library forces it, to a window (instrumented interpreter, open frames
 * replayed as EV_FRAME) at profile.start, to none (uninstrumented code) at profile.stop.
 * Frames already running in the plain copies when profiling starts move over at their next
 * check of the coroutine's hook mask (VM_MASKSWITCH, vm_debug.h), which those copies already
 * make after every call into C: the caller of profile.start moves right after the call.
 *
 * Exactness. Start and stop change the state with every other language thread stopped at
 * a safepoint (vm_safepoint_run): the event streams are dropped while stopped (vm_prof.c,
 * run.paused) and counted while started, so a phase's counts are exactly the events its
 * threads produced between the two calls; each thread's forced flip makes it replay its
 * open frames at its next tick, so its calling contexts are right from its first call in
 * the phase. The analysis is inline (sequential): with the world stopped every stream's
 * states are whole, and a snapshot or write merges them into fresh states without draining
 * anything. Counts accumulate over every start..stop interval until profile.reset. */
#ifndef VM_PROF_PHASE_H
#define VM_PROF_PHASE_H

#include <stdbool.h>
#include <stdio.h>

#include "prof_api.h"
#include "vm_state.h"

/* profile.start: the analyses [an] ([n] of them; n == 0: those of the first start). Returns
 * NULL, or a message: already started, the command line's -Xprofile profiles the run, an
 * analysis the library cannot run, different analyses than the first start's. */
const char *vm_prof_phase_start(State *S, const ProfAnalysis *const *an, int n);

/* profile.stop: NULL, or "not started". */
const char *vm_prof_phase_stop(State *S);

/* Whether profiling is on (between start and stop), and whether any start happened. */
bool vm_prof_phase_on(void);
bool vm_prof_phase_started(void);

/* The report of the counts so far (every stream merged) in [format] to [f]: 0, -1 if
 * writing failed, -2 if the library never started. With every other thread stopped. */
int vm_prof_phase_write(State *S, FILE *f, ProfFormat format);

/* profile.reset: every count back to 0 (stopped or not). False if out of memory. */
bool vm_prof_phase_clear(State *S);

/* The run's analyses (at most VM_PROF_MAX_ANALYSES): their number. */
int vm_prof_phase_list(const ProfAnalysis **an);

#endif
