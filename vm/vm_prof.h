/* vm_prof.h: profiling on the VM side: function ids and their names, the event sink the
 * instrumented interpreter writes into, and the run's lifecycle (vm_prof.c).
 *
 * Sink: concurrent analysis pushes every event into the CAB of the native thread that
 * produces it, whose analyzer thread feeds the analysis; sequential analysis hands each
 * event to the analysis's consume function inline. Coroutines run on the native thread that
 * resumes them, so they share its ring. For now the only producing native thread is the
 * main one, so the sink is a single global; a second native thread will need its own ring
 * in thread-local storage (DESIGN.md "CAB invariants"). */
#ifndef VM_PROF_H
#define VM_PROF_H

#include <stdbool.h>

#include "cab_api.h"
#include "prof_api.h"
#include "vm_events.h"
#include "vm_value.h"

typedef struct VmProfSink {
    CabProducer *prod;                                       /* concurrent; else NULL */
    void (*consume)(void *st, const uint64_t *ev, size_t n); /* sequential */
    void *st;
} VmProfSink;

/* Chosen once before the program starts: true runs vm_execute_instr (vm_interp.c). */
extern bool vm_prof_instrumented;
extern VmProfSink vm_prof_sink;

static inline void vm_prof_emit(uint64_t ev) {
    if (vm_prof_sink.prod != NULL)
        cab_push(vm_prof_sink.prod, ev);
    else
        vm_prof_sink.consume(vm_prof_sink.st, &ev, 1);
}

/* Give [p] its function id (the next of a global counter, from 1) and record its display
 * name: "name (chunk:line)", "main chunk (chunk)" or "function <chunk:line>". Called by the
 * instrumented interpreter the first time [p] is entered. */
uint32_t vm_prof_newid(Proto *p) __attribute__((noinline, cold));

/* Display name of function [id] (malloc'd, outlives the GC heap); "?" if unknown. */
const char *vm_prof_funcname(uint32_t id);

typedef struct VmProfOptions {
    const ProfAnalysis *analysis; /* NULL: no profiling */
    bool sequential;              /* inline analysis instead of CAB + analyzer thread */
    CabConfig cab;                /* ring configuration (concurrent), already checked */
    const char *out;              /* report file (written atomically); NULL: stderr */
    int analyzers;                /* analyzer threads (concurrent), >= 1 */
    const int *analyzer_cpus;     /* NULL: not pinned; else one OS CPU per analyzer */
} VmProfOptions;

/* Before the program runs: create the ring and analyzer pool (concurrent) or the inline
 * state (sequential) and switch the interpreter to its instrumented loop. Returns false and
 * sets [*err] on failure. */
bool vm_prof_start(const VmProfOptions *o, const char **err);

/* After the program ends, normally or not: close the ring, wait for the analyzers to drain
 * it, write the report. Idempotent; also run at exit (os.exit). Returns 0, or -1 if the
 * report could not be written (after saying why on stderr). */
int vm_prof_finish(void);

#endif
