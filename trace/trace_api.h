/* trace_api.h: the timeline recorder (-Xtrace=FILE): what ran where and when, written at the
 * end as Chrome's trace-event JSON (opened by Perfetto and chrome://tracing).
 *
 * A leaf, like events/: gc/, cab/ and the VM record into it, it includes nothing of the
 * project. Recording points are all on slow paths (a green switch, a safepoint stop, a
 * collection, a producer blocked on a full ring, an analyzer's change between busy and
 * idle), each behind one predictable branch on trace_on(), so a run without -Xtrace pays one
 * load and a not-taken branch there and nothing else.
 *
 * Words. A track is one native thread (a language thread under native threads, a carrier, an
 * analyzer, the main thread); its records are spans: an interval [t0, t1] of the monotonic
 * clock on that thread, of one kind, with up to two integer arguments. A span is recorded
 * once, when it ends, so every record is whole (no begin without its end, whatever the ring
 * overwrote); spans of one track nest or are disjoint, because a thread takes a span's
 * begin time before those of the spans inside it and its end time after theirs.
 *
 * Memory: per track a ring of TRACE_RING_RECORDS records, allocated a chunk at a time as it
 * fills (a thread that records little costs one chunk), malloc'd, outside the GC heap, kept
 * until the process ends (a thread that ended still has its records written); when a ring
 * is full the oldest records are overwritten (a flight recorder: the end of the run is what
 * is kept) and the count of overwritten records is written with the file. */
#ifndef TRACE_API_H
#define TRACE_API_H

#include <stdbool.h>
#include <stdint.h>

/* What a span is. Grep TRACE_KIND in trace.c (names, categories) if you change this. */
typedef enum TraceKind {
    TRACE_RUN = 1,        /* a language thread ran [thread id] (green: on this carrier, from
                             switch-in to switch-out; native: its whole body) */
    TRACE_CARRIER_IDLE,   /* a carrier had no green thread to run */
    TRACE_SAFEPOINT,      /* this thread stopped the world, ran an operation (a collection,
                             the exit), restarted it [ns until every other context stopped] */
    TRACE_STOPPED,        /* parked at a poll while another thread's safepoint operation ran */
    TRACE_GC,             /* a collection [heap bytes in use after it] */
    TRACE_RING_FULL,      /* a producer waited for room in its full CAB, in a blocking
                             region (it counted as stopped meanwhile; the short spin before
                             such a wait is not recorded) [the stream's language thread id,
                             0 for a carrier's stream] */
    TRACE_ANALYZER_BUSY,  /* an analyzer thread analysed chunks [chunks] */
    TRACE_ANALYZER_IDLE,  /* an analyzer thread found nothing to analyse */
    TRACE_KIND_COUNT
} TraceKind;

/* Records per track's ring and per chunk of it (the ring grows a chunk at a time). 8192 records
 * of 32 bytes: 256 KB at most per native thread. */
#define TRACE_CHUNK_RECORDS 128
#define TRACE_RING_CHUNKS 64
#define TRACE_RING_RECORDS (TRACE_CHUNK_RECORDS * TRACE_RING_CHUNKS)

/* True while recording (-Xtrace given, the file not yet written): the one test at every
 * recording point. A relaxed atomic load (a plain mov): the flag is set before any other
 * thread starts and cleared only when the file is written, after every recording thread
 * has stopped for good, so no ordering is needed, only the absence of a data race. */
extern bool trace_flag;
static inline bool trace_on(void) { return __builtin_expect(__atomic_load_n(&trace_flag, __ATOMIC_RELAXED), 0); }

/* Starts recording (before any thread but the caller exists). Returns 0, or -1 if [path]
 * cannot be created ([*err] says why: strerror's text). The file is written by
 * trace_write. */
int trace_start(const char *path, const char **err);

/* The monotonic clock, in nanoseconds (the time base of every span). */
uint64_t trace_now(void);

/* Records a span of [kind] on the calling thread's track, from [t0] to now, with arguments
 * [a] and [b] (their meaning: TraceKind). Cheap, lock-free (the track belongs to its
 * thread); never allocates from the GC heap, never waits (a chunk that cannot be allocated
 * drops the record and counts it). Call only when trace_on(). */
void trace_span(TraceKind kind, uint64_t t0, uint64_t a, uint64_t b);

/* The same, ending at [t1] (a time the caller took: trace_now's clock), for spans that end
 * where the next begins (an analyzer's busy and idle phases share their boundary). */
void trace_span_at(TraceKind kind, uint64_t t0, uint64_t t1, uint64_t a, uint64_t b);

/* Names the calling thread's track ("carrier 0", "analyzer 1", "thread 5"; at most 47
 * bytes kept). Call only when trace_on(). */
void trace_thread_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Stops recording and writes the file given to trace_start (atomically: a temporary file
 * renamed over it). Call once every recording thread has stopped for good (the program's
 * threads parked forever, analyzers joined): a record being written while the file is
 * would be torn. Returns 0, or -1 after printing "tandem: cannot write the trace to PATH:
 * REASON". Idempotent: later calls return the first call's result. */
int trace_write(void);

#endif
