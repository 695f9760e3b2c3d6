/* vm_shadow.h: shadow profiling (-Xsample.mode=shadow; Moseley et al., "Shadow Profiling",
 * CGO 2007): the program runs uninstrumented code only; now and then, at a tick, it forks a
 * shadow, a copy of itself that runs instrumented for -Xshadow.length ticks on the analyzer
 * core, hands its events to the parent's analysis and exits. vm_shadow.c has the design and
 * its rejected alternatives.
 *
 * Parent side. It is sampled instrumentation whose windows never open in the program itself
 * (vm_sample.h): the countdown at ticks is the same (between checks a tick costs a decrement
 * and a branch), and when it runs out vm_sample_flip hands over to vm_shadow_flip, which
 * decides whether to fork (the scheduler: the average number of live shadows so far is below
 * -Xshadow.load, and fewer than its ceiling are alive) and draws the next check. The ticks
 * are safepoint polls: the thread that forks is at one, with no runtime lock held.
 *
 * Child side (vm_shadow_child true, one thread): it opens a window of -Xshadow.length ticks
 * (the trampoline replays the open frames, as a sampling window's start does, and runs the
 * instrumented twins of compiled code, compiled in the shadow as it meets each function, or,
 * with -Xjit=off or -Xsample.windows=interpreted, the instrumented interpreter), run in pieces at whose ends it looks at its slot's stop
 * word (the program's end sets it) and writes its events into its slot, shared memory the
 * parent mapped before the fork. It ends (vm_shadow_end) when the window is over, or earlier
 * at the first thing it may not do: a side effect (os.exit, os.remove, os.rename,
 * os.execute, os.tmpname, io.open for writing, io.popen, an ffi call), a read from a pipe or
 * terminal, the end of the program, a green carrier with nothing to run, a function not named
 * before the fork, or a full slot. Writes by the io library are discarded; reads from regular
 * files proceed on a private copy of the file's offset.
 *
 * The parent's shadow thread (on the analyzer core) reaps the shadows (waitpid on each pid:
 * never another child of the program), feeds a finished shadow's events to the analyses,
 * kills (SIGKILL) one that outlives -Xshadow.timeout and drops what it wrote; -Xstats counts
 * both. The report scales by the coverage: ticks the finished shadows ran / ticks the program
 * ran (vm_shadow_fraction), and says so. */
#ifndef VM_SHADOW_H
#define VM_SHADOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vm_value.h"

/* -Xsample.mode=shadow and -Xshadow.* (cli), set once before the program starts. */
typedef struct VmShadowOptions {
    bool on;
    uint64_t length;      /* ticks a shadow runs instrumented, >= 1 */
    double load;          /* the average number of live shadows wanted, > 0 */
    uint64_t timeout_ms;  /* the watchdog: a shadow still alive after this is killed */
    uint64_t seed;        /* random check phases; 0: from the clock */
    uint64_t test_kill;   /* -Xtest.shadow_kill: every Nth shadow hangs (0: none) */
    int cpu;              /* the analyzer core (shadow thread and shadows), -1: not pinned */
    int test_idle;        /* -Xtest.shadow_idle: 0 off; 1 each shadow sleeps, 2 it spins, until the
                           * program's end, with no window (the fork's cost apart from the
                           * shadow's work: bench/eval/shadow_cpu.py) */
} VmShadowOptions;

/* The defaults keep forks and the shadows' use of the other core rare (bench/eval's shadow
 * experiment; vm/prof/README.md): a fork costs the program 0.3-1 ms of kernel time (page
 * tables) and copy-on-write faults after it, and a live shadow on the other core slows the
 * program by what the two cores share (the whole core when the hypervisor places the two
 * vCPUs on one physical core's two threads). At 200000 ticks and load 1 a bench/suite
 * program forked 10-30 times a run (20-90 forks/s) and a shadow ran all the time; at
 * 1000000 ticks and load 0.25 it forks 1-3 times and a shadow runs a quarter of the time,
 * and longer shadows are more accurate on these short programs, not less (havlak's call
 * graph: weighted error 17% at 200000/1, 6% at 1000000/0.25). With compiled windows a
 * shadow's tick costs less, and 2000000 ticks at load 0.1 is better than 1000000 at 0.25 on
 * every figure a loaded machine measures (bench/eval/shadow_cpu.py, callgraph, 5 programs,
 * 3 rounds: forks 1.2 a run against 2.8, the program's minor faults +460 against +1180 over a
 * run that never forks, shadows live 0.28 of the run against 0.33, coverage 0.67 against
 * 0.69, weighted error 1.7% for both; bench/eval's full shadow grid: pathprof hot-item
 * overlap 99.1% against 95.3%, callgraph weighted error 2.2% against 2.4%). */
#define VM_SHADOW_DEFAULT_LENGTH 2000000 /* ticks: in compiled twins some 150-400 ms of a shadow's
                                          * CPU on bench/suite (shadow_cpu.py: 190-220 ns a tick
                                          * at a load average of 15) */
#define VM_SHADOW_DEFAULT_LOAD 0.1
#define VM_SHADOW_DEFAULT_TIMEOUT_MS 10000

/* Why a shadow ended (its slot says; -Xstats counts them). Grep VM_SHADOW_END if you add one:
 * end_names in vm_shadow.c. */
typedef enum VmShadowEnd {
    VM_SHADOW_END_LENGTH,   /* ran its -Xshadow.length ticks */
    VM_SHADOW_END_FULL,     /* its slot is full */
    VM_SHADOW_END_EFFECT,   /* about to have a side effect (os.*, io.open for writing, ...) */
    VM_SHADOW_END_INPUT,    /* about to read from a pipe or a terminal */
    VM_SHADOW_END_FFI,      /* about to call into C through the ffi */
    VM_SHADOW_END_EXIT,     /* the program ended (or os.exit) */
    VM_SHADOW_END_IDLE,     /* green threads: nothing left to run (sleepers need the ticker) */
    VM_SHADOW_END_UNNAMED,  /* met a function the parent had not named (loaded in the shadow) */
    VM_SHADOW_END_N
} VmShadowEnd;

/* True in a shadow process, false in the program itself: the io, os and ffi libraries test
 * it before anything a shadow may not do (one load and a branch, off the interpreter's
 * paths). */
extern bool vm_shadow_child;
/* -Xsample.mode=shadow is on (set before the program starts). */
extern bool vm_shadow_on;

/* Before vm_prof_start: the options (sampled instrumentation must be configured too: the
 * countdown is vm_sample.c's). */
void vm_shadow_configure(const VmShadowOptions *o);

/* After vm_prof_start, on the main thread: map the slots and start the shadow thread.
 * Returns NULL, or why it could not. */
const char *vm_shadow_start(void);

/* A program chunk was loaded (vm_load): give every function in it its id and, for path
 * profiling, its numbering now, in the program, so a shadow never names a function (its
 * names and graphs would stay in its copy of the process). */
void vm_shadow_name_protos(Proto *p);

/* The thread's countdown ran out (vm_sample_flip, at a tick): in the program, account the
 * ticks, maybe fork, draw the next check; in a shadow, its window is over: end it. */
void vm_shadow_flip(void);

/* The ticks to a thread's first check (vm_sample_thread_begin). */
int64_t vm_shadow_first_check(void);

/* In a shadow: end it here: its events so far are whole (publish them) and the process exits
 * at once (_exit: no exit handler, no stdio flush). */
_Noreturn void vm_shadow_end(VmShadowEnd why);

/* In a shadow: the ticks it has run so far (the green scheduler's share per carrier,
 * vm/threads/vm_green.c). */
uint64_t vm_shadow_ticks(void);

/* In a shadow: reading from [fd] is allowed only if it is a regular file (detached from the
 * parent's offset at the fork); else the shadow ends. */
void vm_shadow_check_read(int fd);

/* The shadow's event sink (vm_prof_emit_other, stream kind VM_PS_SHADOW). */
void vm_shadow_put(uint64_t ev);

/* At the program's end, in the program (vm_prof_finish, before the merge): stop forking,
 * wait for the live shadows (the watchdog still applies), stop the shadow thread. */
void vm_shadow_finish(void);

/* The coverage: ticks run by the shadows whose events were analysed / ticks the program ran
 * (may exceed 1 when shadows overlap, -Xshadow.load > 1). */
double vm_shadow_fraction(void);

/* -Xstats: shadows forked, finished, dropped (killed, failed), why they ended, coverage. */
void vm_shadow_print_stats(FILE *f);

#endif
