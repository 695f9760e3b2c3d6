/* vm_thread.h: language threads (native 1:1 or green N:M), safepoints and blocking regions
 * (vm_thread.c, vm_green.c, vm_safepoint.c). Private to vm/ (and jit/, cli/).
 *
 * Safepoint protocol. Every language thread is, at any moment, either RUNNING (it may touch
 * the heap and must poll), or STOPPED: parked at a safepoint poll, or inside a blocking
 * region (join, lock, cond, channel, sleep, a native call, a producer waiting on a full
 * CAB). An operation that needs the world stopped (a collection, a profile snapshot,
 * shutdown) raises vm_poll_word, waits until no thread is RUNNING, runs, and lets them go.
 * A thread leaving a blocking region while such an operation runs waits for its end before
 * it touches the heap again.
 *
 * Rules that keep it deadlock-free (see gc/README.md):
 *  - inside a blocking region a thread touches no Values and does not allocate;
 *  - a thread never polls or allocates while holding a runtime lock that a RUNNING thread
 *    could wait for outside a blocking region (runtime locks that may be contended are
 *    taken inside a blocking region: vm_blocking_call with a function that locks);
 *  - a safepoint operation itself takes no runtime lock a stopped thread may hold. */
#ifndef VM_THREAD_H
#define VM_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "vm_state.h"

/* Non-zero when some thread must come to its next poll's slow path: a safepoint operation
 * is pending, or (green threads) a carrier's time slice is over. The poll is one load, one
 * compare and one branch. Written atomically by other threads, so read atomically too
 * (VM_POLL_PENDING): relaxed, a plain mov on x86-64; it only says "go to the slow path",
 * which synchronises under the safepoint lock (a plain read was a data race for TSan). */
extern volatile uint32_t vm_poll_word;
#define VM_POLL_PENDING() __builtin_expect(__atomic_load_n(&vm_poll_word, __ATOMIC_RELAXED) != 0, 0)
void vm_poll_slow(State *S) __attribute__((noinline, cold));
static inline void vm_poll(State *S) {
    if (VM_POLL_PENDING()) vm_poll_slow(S);
}

/* A blocking region: runs fn(arg) with the calling thread STOPPED (for the safepoint protocol
 * and for the collector alike) and returns its result once the thread is RUNNING again.
 * [fn] touches no Values and does not allocate; pointers it keeps only on its own stack are
 * not scanned. */
void *vm_blocking_call(State *S, void *(*fn)(void *arg), void *arg);

/* Bring every other language thread to a stop, run [op(arg)], let them go. Called from a
 * RUNNING thread (or from the main native thread before/after the program). */
void vm_safepoint_run(State *S, void (*op)(void *arg), void *arg);

/* Threading model, chosen before the program starts (-Xthreads, -Xcarriers, -Xgreen.slice). */
typedef enum { VM_THREADS_NATIVE, VM_THREADS_GREEN } VmThreadModel;
typedef struct VmThreadOptions {
    VmThreadModel model;
    int carriers;          /* green: carrier threads (>= 1) */
    double slice;          /* green: time slice in seconds */
    uint64_t sched_fuzz;   /* testing (-Xtest.sched_fuzz): seed of random yields and naps at
                              polls (vm_safepoint.c); 0: off, and polls cost what they did */
} VmThreadOptions;
void vm_threads_configure(const VmThreadOptions *o);
const VmThreadOptions *vm_threads_options(void);

/* Run [body(S, ud)] as language thread 1 (the main thread) under the configured model: in
 * the green model on a green stack on a carrier while the calling native thread waits. */
void vm_threads_run(State *S, void (*body)(State *S, void *ud), void *ud);

/* At the end of the program: report threads still running on stderr and stop them at a
 * safepoint for good (the process is about to exit). */
void vm_threads_shutdown(State *S);

/* Green threads: [hook(carrier, thread_id, moved)] runs on carrier [carrier] (0-based) each
 * time it switches green thread [thread_id] in, just before that thread runs; the profiler
 * emits its thread-switch events from it. [moved]: when the thread last ran on another
 * carrier, the state it was running then (the innermost coroutine of its resume chain),
 * else NULL. NULL hook: none. Set before the program starts. */
void vm_threads_set_switch_hook(void (*hook)(int carrier, uint64_t thread_id, State *moved));

/* -Xtest.sched_fuzz: the yields and naps it has injected so far (for -Xstats). */
void vm_threads_fuzz_counts(uint64_t *yields, uint64_t *naps);

/* Native model: no language thread runs but the main one (spawned ones all ended): a fork
 * would keep every language thread (shadow profiling forks only then, vm/prof/vm_shadow.c).
 * Green model: true (every green thread lives in the carriers' memory). */
bool vm_threads_single(void);

/* Green threads, several carriers: before a fork (shadow profiling), called at a poll on a
 * carrier running a green thread: every other carrier switches its green thread out to a run
 * queue at its next poll and waits (a blocking region, so a world stop finds it STOPPED),
 * so the forked process's one carrier can run every green thread. False if they did not all
 * come within [timeout] seconds (a green thread in a long blocking call): the gather is
 * called off; false too off the carriers (the main native thread). True at once with one
 * carrier, or outside the green model. Then, in the
 * program and in the forked process alike, vm_green_release([shadow]: in the forked one):
 * the program's carriers go on; the forked process's run only in memory. */
bool vm_green_gather(double timeout);
void vm_green_release(bool shadow);

/* Language thread id of the running thread (main: 1). */
uint64_t vm_thread_id(State *S);

/* The thread library (vm/lib/vm_lib_thread.c). */
void vm_open_thread(State *S);

#endif
