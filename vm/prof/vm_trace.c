/* vm_trace.c: -Xtrace=FILE on the runtime's side (vm_prof.h): starting the recorder
 * (trace/trace_api.h), the observers that gc/ and cab/ call (they include nothing of the
 * trace: the hooks keep them free of other modules), and writing the file at the end.
 *
 * The other recording points sit where the spans happen, each behind `if (trace_on())`:
 * vm/threads/vm_green.c (a green thread's run on a carrier, a carrier's idle wait),
 * vm/threads/vm_thread.c (a native language thread's body), vm/threads/vm_safepoint.c
 * (stopping the world, being stopped), vm_prof.c (a producer's long wait on a full ring). */
#include <stdlib.h>

#include "cab_api.h"
#include "gc_api.h"
#include "trace_api.h"
#include "vm_prof.h"
#include "vm_thread.h"

/* Collections are serialised (Boehm's allocation lock), so one start time serves. */
static uint64_t gc_t0;

/* gc_set_collection_observer: runs with the world stopped and Boehm's lock held; records
 * into malloc'd memory only. */
static void on_collection(int end, size_t heap_used) {
    if (!trace_on()) return;
    if (!end) {
        gc_t0 = trace_now();
    } else if (gc_t0 != 0) {
        trace_span(TRACE_GC, gc_t0, heap_used, 0);
        gc_t0 = 0;
    }
}

/* cab_analyzer_set_phase_observer: on the analyzer thread. */
static void on_phase(int analyzer, int busy, uint64_t t0, uint64_t t1, uint64_t chunks) {
    if (!trace_on()) return;
    if (busy < 0) trace_thread_name("analyzer %d", analyzer);
    else trace_span_at(busy ? TRACE_ANALYZER_BUSY : TRACE_ANALYZER_IDLE, t0, t1, chunks, 0);
}

static void trace_atexit(void) {
    /* os.exit or a return from main without finish: stop the program's threads and drain
     * the profile first (both idempotent), so nothing records while the file is written. */
    vm_threads_shutdown(NULL);
    vm_prof_finish();
    vm_trace_finish();
}

bool vm_trace_start(const char *path, const char **err) {
    if (trace_start(path, err) != 0) return false;
    trace_thread_name("main");
    gc_set_collection_observer(on_collection);
    cab_analyzer_set_phase_observer(on_phase);
    vm_prof_signal_thread_start();
    atexit(trace_atexit); /* before vm_prof_start's: handlers run last registered first */
    return true;
}

int vm_trace_finish(void) { return trace_write(); }
