/* vm_prof.h: profiling on the VM side: function ids and their names, the event streams the
 * instrumented interpreter writes into, and the run's lifecycle (vm_prof.c).
 *
 * Streams. Every native thread that runs language code while profiling is on (a native
 * language thread, a carrier, the main thread) has one stream, in thread-local storage:
 * concurrent analysis gives it a CAB served by one analyzer thread; sequential analysis
 * gives it analysis states consumed inline. Coroutines run on the native thread that resumes
 * them and share its stream; green threads share their carrier's, and every switch puts an
 * EV_THREAD event in it. Reading the thread-local pointer is one %fs-relative load, reloaded
 * after every call (a green thread may have moved to another carrier during the call). */
#ifndef VM_PROF_H
#define VM_PROF_H

#include <stdbool.h>
#include <stdio.h>

#include "cab_api.h"
#include "prof_api.h"
#include "ev_api.h"
#include "vm_value.h"

#define VM_PROF_MAX_ANALYSES 8

/* How far events go (-Xprofile.stage): the overhead breakdown of the CAB paper's Fig. 8. */
typedef enum VmProfStage {
    VM_STAGE_INSTRUMENT, /* produced and written to one word: no buffer */
    VM_STAGE_ENQUEUE,    /* pushed into a ring that never blocks; no analyzer runs */
    VM_STAGE_COMMUNICATE,/* analyzers take the chunks and clear them, but analyse nothing */
    VM_STAGE_FULL,       /* analysed (default) */
} VmProfStage;

enum { VM_PS_EXHAUSTIVE, VM_PS_SAMPLING, VM_PS_SEQUENTIAL, VM_PS_WORD };

typedef struct VmProfStream {
    CabProducer prod;           /* concurrent: this stream's producer (first: the fast path) */
    int kind;                   /* VM_PS_* */
    uint64_t word;              /* VM_STAGE_INSTRUMENT: the last event */
    uint64_t nword;             /* VM_STAGE_INSTRUMENT / sequential: events produced */
    void *st[VM_PROF_MAX_ANALYSES]; /* analysis states of this stream */
    CabRing *ring;
    CabStats stats;             /* final counters (concurrent, once drained) */
    int analyzer;               /* which analyzer serves it */
    uint64_t thread_id;         /* the native language thread, or 0 for a carrier */
    int carrier;                /* the carrier, or -1 */
    uint64_t unsafe_waits;      /* heap-access events that found the ring full (they must not:
                                   vm_prof_reserve at the safepoint before); -Xstats */
    volatile int waiting;       /* inside a wait on a full ring */
    volatile int done;          /* drained (concurrent) */
    bool closed;
    struct VmProfStream *next;
} VmProfStream;

/* Chosen once before the program starts: true runs vm_execute_instr (vm_interp.c). */
extern bool vm_prof_instrumented;
/* The union of the enabled analyses' needs (PROF_NEED_*), set once before the program
 * starts: the instrumented loop emits only these events. */
extern unsigned vm_prof_needs;
extern _Thread_local VmProfStream *vm_prof_tl;

void vm_prof_emit_other(VmProfStream *s, uint64_t ev) __attribute__((noinline));

/* The kind (VM_PS_*) of every stream of this run: the JIT emits its inline enqueue for it. */
int vm_prof_kind(void);
/* vm_prof_emit out of line: the slow path of the JIT's inline enqueue (a full ring, a wrap,
 * or a stream whose kind has no inline path). */
void vm_prof_emit_slow(uint64_t ev) __attribute__((noinline));
/* vm_prof_emit_mem and vm_prof_reserve out of line, for the JIT's heap-access events. */
void vm_prof_emit_mem_out(uint64_t ev) __attribute__((noinline));
void vm_prof_reserve_out(uint64_t n) __attribute__((noinline));

static inline void vm_prof_emit(uint64_t ev) {
    VmProfStream *s = vm_prof_tl;
    if (__builtin_expect(s->kind == VM_PS_EXHAUSTIVE, 1))
        cab_push(&s->prod, ev);
    else
        vm_prof_emit_other(s, ev);
}

/* Heap loads and stores (EV_LOAD, EV_STORE) are emitted between safepoints, where the
 * thread must not wait: the interpreter reserves room for them at the safepoint before
 * (vm_prof_reserve, cab_reserve), so this push finds its slot CLEAR. If it ever does not
 * (a path the reservation missed), it still waits rather than lose the event, and counts
 * the wait in unsafe_waits (-Xstats: "waits outside safepoints"). */
void vm_prof_emit_mem_slow(VmProfStream *s, uint64_t ev) __attribute__((noinline, cold));
static inline void vm_prof_emit_mem(uint64_t ev) {
    VmProfStream *s = vm_prof_tl;
    if (__builtin_expect(s->kind == VM_PS_EXHAUSTIVE, 1)) {
        uint64_t *slot = s->prod.cur;
        if (__builtin_expect(__atomic_load_n(slot, __ATOMIC_ACQUIRE) == CAB_CLEAR, 1)) {
            __atomic_store_n(slot, ev, __ATOMIC_RELEASE);
            s->prod.cur = slot + 1;
            return;
        }
    }
    vm_prof_emit_mem_slow(s, ev);
}

/* At a safepoint: make room for the next [n] events that will be pushed before the next
 * safepoint (waiting here, where the collector may run, if the ring is full). */
static inline void vm_prof_reserve(size_t n) {
    VmProfStream *s = vm_prof_tl;
    if (s->kind == VM_PS_EXHAUSTIVE) cab_reserve(&s->prod, n);
}

/* Give [p] its function id (the next of a global counter, from 1) and record its display
 * name: "name (chunk:line)", "main chunk (chunk)" or "function <chunk:line>". Called by the
 * instrumented interpreter the first time [p] is entered. */
uint32_t vm_prof_newid(Proto *p) __attribute__((noinline, cold));

/* Display name of function [id] (malloc'd, outlives the GC heap); "?" if unknown. */
const char *vm_prof_funcname(uint32_t id);

typedef struct VmProfOptions {
    const ProfAnalysis *analyses[VM_PROF_MAX_ANALYSES]; /* none: no profiling */
    int nanalyses;
    bool sequential;              /* inline analysis instead of CABs + analyzer threads */
    CabConfig cab;                /* ring configuration (concurrent), already checked */
    const char *out;              /* report file (written atomically); NULL: stderr */
    int analyzers;                /* analyzer threads (concurrent), >= 1 */
    const int *analyzer_cpus;     /* NULL: not pinned; else one OS CPU per analyzer */
    VmProfStage stage;
    unsigned test_delay_us;       /* -Xtest.analyzer_delay: sleep per chunk (tests) */
    ProfFormat format;            /* -Xprofile.format */
} VmProfOptions;

/* Before the program runs, on the main thread: start the analyzers (concurrent), give the
 * calling thread its stream and switch the interpreter to its instrumented loop. Returns
 * false and sets [*err] on failure. */
bool vm_prof_start(const VmProfOptions *o, const char **err);

/* A native thread that will run language code starts / ends its stream (no-ops when not
 * profiling). [thread_id]: its language thread (0 for a carrier); [carrier]: the carrier's
 * index or -1. At the end the residue is flushed and analysed. */
void vm_prof_thread_begin(uint64_t thread_id, int carrier);
void vm_prof_thread_end(void);

/* After the program ends, normally or not (every other thread stopped for good): close the
 * rings, wait for the analyzers to drain them, merge and write the report. Idempotent; also
 * run at exit (os.exit). Returns 0, or -1 if the report could not be written. */
int vm_prof_finish(void);

/* The program did not run to its end (an uncaught error): the report, written by
 * vm_prof_finish, says it is partial. */
void vm_prof_mark_partial(void);

/* -Xstats: the streams' counters (after vm_prof_finish). */
void vm_prof_print_stats(FILE *f);

#endif
