/* vm_prof.h: the event producer, the one header the interpreter and the JIT share for
 * profiling: function ids and their names, the event streams (emit, reserve), the events of
 * a frame's start and end, Ball-Larus actions (vm_pathprof.h), and the run's lifecycle
 * (vm_prof.c).
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
#include "vm_pathprof.h"
#include "vm_state.h"
#include "vm_value.h"

#define VM_PROF_MAX_ANALYSES 8

/* How far events go (-Xprofile.stage): the overhead breakdown of the CAB paper's Fig. 8. */
typedef enum VmProfStage {
    VM_STAGE_INSTRUMENT, /* produced and written to one word: no buffer */
    VM_STAGE_ENQUEUE,    /* pushed into a ring that never blocks; no analyzer runs */
    VM_STAGE_COMMUNICATE,/* analyzers take the chunks and clear them, but analyse nothing */
    VM_STAGE_FULL,       /* analysed (default) */
} VmProfStage;

enum { VM_PS_EXHAUSTIVE, VM_PS_SAMPLING, VM_PS_SEQUENTIAL, VM_PS_WORD,
       VM_PS_SHADOW, /* a shadow process's stream: events go to its slot (vm_shadow.c) */
       VM_PS_NONE /* no stream yet: where vm_prof_tl points until the thread gets one; its
                     events go nowhere (the profile library: a thread, a carrier in
                     particular, that a green thread reaches in a window before that carrier
                     has flipped into it, reserves room after a call before it sees the window
                     is not its own) */ };

typedef struct VmProfStream {
    CabProducer prod;           /* concurrent: this stream's producer (first: the fast path) */
    int kind;                   /* VM_PS_* */
    uint64_t word;              /* VM_STAGE_INSTRUMENT: the last event */
    uint64_t nword;             /* VM_STAGE_INSTRUMENT / sequential: events produced */
    void *st[VM_PROF_MAX_ANALYSES]; /* analysis states of this stream (sharded: shard 0's) */
    void *sst[CAB_MAX_SHARDS][VM_PROF_MAX_ANALYSES]; /* -Xanalysis.shards: shard j's, j >= 1 */
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
    uint64_t icount;            /* PROF_NEED_COST: bytecode instructions run on this stream's
                                   thread so far (the interpreter's NEXT, the JIT's per-instruction
                                   add at [r14 + offset]); only this thread writes it, and it
                                   travels to the analyses in EV_ICOUNT (vm_prof_emit_icount) */
} VmProfStream;

/* Chosen once before the program starts: true runs vm_execute_instr (vm_interp.c). */
extern bool vm_prof_instrumented;
/* The union of the enabled analyses' needs (PROF_NEED_*), set once before the program
 * starts: the instrumented loop emits only these events. */
extern unsigned vm_prof_needs;
extern _Thread_local VmProfStream *vm_prof_tl;
/* The thread has a stream of its own (vm_prof_tl is not the VM_PS_NONE one). */
bool vm_prof_has_stream(void);

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

/* EV_ICOUNT, the stream's instruction count, when an analysis needs costs: written before
 * every EV_CALL, EV_FRAME, EV_RETURN and EV_THREAD (ev_api.h), so each stretch of
 * instructions is charged to the thread and frames current when it ran. */
static inline void vm_prof_emit_icount(void) {
    if (vm_prof_needs & PROF_NEED_COST) vm_prof_emit(ev_make(EV_ICOUNT, vm_prof_tl->icount));
}

/* Synchronisation order (EV_SYNC, ev_api.h), when an analysis needs it: take the next number
 * inside the operation's own lock (vm_prof_sync_take: 0 when no analysis needs it), emit it
 * after the lock is released (vm_prof_sync_emit may wait for room in the ring, which must not
 * happen with a lock held). The add is sequentially consistent and runs under the lock that
 * orders the operations on that object, so a release's number is below that of every acquire
 * that observes it. */
extern uint64_t vm_prof_sync_seq;
static inline uint64_t vm_prof_sync_take(void) {
    return (vm_prof_needs & PROF_NEED_SYNC) ? __atomic_add_fetch(&vm_prof_sync_seq, 1, __ATOMIC_SEQ_CST) : 0;
}
static inline void vm_prof_sync_emit(uint64_t seq) {
    if (seq != 0) vm_prof_emit(ev_make(EV_SYNC, seq));
}

/* EV_PC (ev_api.h): the heap access that follows is made by instruction [pc] of function
 * [fid] (an id too large for 24 bits travels as 0, unknown, as EV_SITE's caller). */
static inline uint64_t vm_prof_pc_event(uint32_t fid, uint32_t pc) {
    return ev_make(EV_PC, (uint64_t)pc | (fid <= EV_DEPTH_MAX ? (uint64_t)fid << 32 : 0));
}

/* Library code written in C (PROF_NEED_LIBMEM) makes its heap accesses for the Lua code
 * that called it: EV_PC names the call instruction of the nearest Lua frame (below C frames,
 * in this coroutine or its resumers, as vm_prof_call_site walks), or function 0 if none. */
void vm_prof_lib_pc(const State *S) __attribute__((noinline));

/* A table slot read by library code (next, ipairs: PROF_NEED_LIBMEM), from a C function of
 * [S], where waiting for room is safe. [slot]: NULL or an absent key's nil is no access. */
static inline void vm_prof_lib_load(const State *S, const Value *slot) {
    if ((vm_prof_needs & PROF_NEED_LIBMEM) && slot != NULL && slot->tt != VT_NIL) {
        if (vm_prof_needs & PROF_NEED_PC) vm_prof_lib_pc(S);
        vm_prof_emit(ev_make(EV_LOAD, (uintptr_t)slot));
    }
}

/* Heap loads and stores (EV_LOAD, EV_STORE, and EV_PC before each when PROF_NEED_PC) are
 * emitted between safepoints, where the
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

/* The interpreter's heap access [ev] by instruction [ipc] of Lua frame [ci], after its EV_PC
 * (PROF_NEED_PC). Out of line: the instrumented loops have dozens of heap-access sites, and
 * inlining both pushes at each made every instrumented run slower (register pressure in
 * the loop), with or without EV_PC. */
void vm_prof_emit_mem_pc(const CallInfo *ci, const Instr *ipc, uint64_t ev) __attribute__((noinline));

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
    CabAnalyzerFaults faults;     /* -Xtest.analyzer_stall, -Xtest.analyzer_die (tests) */
    unsigned shards;              /* -Xanalysis.shards: each stream's analysis split over this
                                     many analyzer threads (0, 1: not sharded; else a power of
                                     two, <= analyzers, every analysis has ProfAnalysis.shard,
                                     exhaustive mode) */
    int argc;                     /* the command line, for -Xprofile.format=html's facts */
    char *const *argv;            /* (not owned: main's, alive to the end) */
} VmProfOptions;

/* Before the program runs, on the main thread: start the analyzers (concurrent), give the
 * calling thread its stream and switch the interpreter to its instrumented loop. Returns
 * false and sets [*err] on failure. */
bool vm_prof_start(const VmProfOptions *o, const char **err);

/* Block SIGINT and SIGTERM in the calling thread (and so in every thread it starts): call
 * it first thing in main when a profile is asked for, so that a signal that comes before
 * vm_prof_start waits for its signal thread (the profile is written, marked partial)
 * instead of killing the process with no profile. vm_prof_start blocks them too. */
void vm_prof_block_signals(void);

/* Starts the thread that takes SIGINT/SIGTERM (vm_prof.c, "Ends"), blocking them first;
 * once, whoever asks (vm_prof_start, vm_trace_start). */
void vm_prof_signal_thread_start(void);

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

/* -Xtrace=FILE (trace/trace_api.h; vm_trace.c): before the program runs, on the main thread
 * and before vm_prof_start: start recording, name the calling thread's track "main", install
 * the observers of collections (gc/) and analyzer phases (cab/), and take SIGINT/SIGTERM on
 * the signal thread, which writes the trace (and the profile) before the process dies of the
 * signal. Returns false and sets [*err] if the file cannot be created. */
bool vm_trace_start(const char *path, const char **err);

/* After the program ends (every other thread stopped for good, the profile written, so the
 * analyzers are gone): write the trace. Idempotent; also run at exit and on SIGINT/SIGTERM.
 * Returns 0 (also when not tracing), or -1 if the file could not be written (said on
 * stderr). */
int vm_trace_finish(void);

/* Shadow profiling (vm_shadow.c). vm_prof_stream_detached: a stream with analysis states
 * and no ring nor producer, merged into the report like the others (the shadow thread's);
 * vm_prof_stream_feed: analyse [n] events in it (one thread at a time); vm_prof_shadow_stream:
 * in a shadow process, the calling thread's events go to the shadow's slot from now on. */
VmProfStream *vm_prof_stream_detached(void);
void vm_prof_stream_feed(VmProfStream *s, const uint64_t *ev, size_t n);
void vm_prof_shadow_stream(void);

/* The profile library (vm_prof_phase.h drives these; vm_prof.c's end says how).
 * vm_prof_phase_begin: at the first profile.start, make this a sequential run of [an]
 * (paused: events are dropped until vm_prof_phase_pause(false)); NULL, or why not (the
 * command line's -Xprofile already profiles the run). vm_prof_phase_stream: give the calling
 * native thread its stream (a thread that ran before the first start); false when the
 * library is not profiling. vm_prof_phase_report: every stream's states merged into fresh
 * ones, reported in [format] to [f] (0, or -1); vm_prof_phase_reset: every count back to 0;
 * both with every other thread stopped. vm_prof_phase_analyses: the run's analyses. */
bool vm_prof_phase_active(void);
bool vm_prof_cmdline_active(void);
const char *vm_prof_phase_begin(const ProfAnalysis *const *an, int n);
bool vm_prof_phase_stream(void);
void vm_prof_phase_pause(bool paused);
int vm_prof_phase_report(FILE *f, ProfFormat format);
bool vm_prof_phase_reset(void);
int vm_prof_phase_analyses(const ProfAnalysis **an);

/* -Xstats: the streams' counters (after vm_prof_finish). */
void vm_prof_print_stats(FILE *f);

/* ======================================================================
 * Frame events: what the instrumented interpreter (vm_interp_body.h) and the JIT's call and
 * return helpers (vm_prof_frame_*, vm_prof_frame.c) emit at a Lua frame's start and end, and
 * the room both reserve for heap-access events. Written once here so a profile does not
 * depend on which of the two ran the code.
 * ====================================================================== */

/* Room for the events pushed between two reservation points of a frame (vm_prof_reserve):
 * the points are where it may wait (its entry, loop back edges) and where it gets control
 * back after code that may have used the room (a return into it, a C call, a metamethod).
 * At most one EV_LOAD/EV_STORE (with its EV_PC when PROF_NEED_PC) and one EV_PATH (a cut
 * edge) per instruction run, and no instruction runs twice between two points: 2 events
 * per instruction of the function, 3 with EV_PC. The JIT's inline check computes the same
 * product (jit/README.md). */
#define VM_PROF_ROOM_PER_INSTR 2
#define VM_PROF_ROOM_PER_INSTR_PC 3

static inline size_t vm_prof_room_per_instr(void) {
    return (vm_prof_needs & PROF_NEED_PC) ? VM_PROF_ROOM_PER_INSTR_PC : VM_PROF_ROOM_PER_INSTR;
}

static inline size_t vm_prof_frame_room(const Proto *p) { return vm_prof_room_per_instr() * (size_t)p->ncode; }

/* At a reservation point of a frame of [p]: room for its heap-access events, when an
 * enabled analysis needs them. */
static inline void vm_prof_reserve_frame(const Proto *p) {
    if (vm_prof_needs & PROF_NEED_MEM) vm_prof_reserve(vm_prof_frame_room(p));
}

/* EV_SITE's payload for the frame [ci] being entered (ev_api.h): the calling
 * instruction's index in the Lua caller and the caller's id. A frame not called by Lua code
 * (from C: pcall, a metamethod, a callback) gets pc 0xffffffff and, as its caller, the
 * nearest Lua frame below, in this coroutine or its resumers (what the call graph calls the
 * caller of a call through C), or 0 when there is none. A tail call keeps the site of the
 * call it replaces. */
static inline uint64_t vm_prof_site_caller(const Proto *p) {
    return p->id <= EV_DEPTH_MAX ? (uint64_t)p->id << 32 : 0; /* 24 bits, like a depth */
}

static inline uint64_t vm_prof_call_site(const State *S, const CallInfo *ci) {
    const CallInfo *prev = ci->prev;
    if ((ci->callstatus & CIST_FRESH) || (prev->callstatus & CIST_C)) {
        /* Down through C frames, and from a coroutine's first frame into its resumer (the
         * Lua function that called resume, or whatever wrap's function was called from). */
        for (;;) {
            while (prev != NULL && (prev->callstatus & CIST_C)) prev = prev->prev;
            if (prev != NULL || S->resumer == NULL) break;
            S = S->resumer;
            prev = S->ci;
        }
        return 0xffffffffu | (prev ? vm_prof_site_caller(prev->func->u.lf->p) : 0);
    }
    const Proto *cp = prev->func->u.lf->p;
    return (uint64_t)(uint32_t)((prev->savedpc - cp->code) - 1) | vm_prof_site_caller(cp);
}

/* The address a slow-path heap access stands for: the table indexed, or the value. */
static inline const void *vm_prof_mem_target(const Value *v) {
    return v->tt == VT_TABLE ? (const void *)v->u.t : (const void *)v;
}

/* The frame's depth as events carry it (24 bits, saturated). */
static inline uint64_t vm_prof_depth(const CallInfo *ci) {
    uint32_t d = (uint32_t)ci->depth;
    return d > EV_DEPTH_MAX ? EV_DEPTH_MAX : d;
}

/* EV_CALL's payload for entering Lua frame [ci] of function [id] (ev_api.h). "From C"
 * is set on the first Lua call a C frame makes (a pcall, a sort comparator's first call):
 * that is when frames the analyzers keep at the C frame's depth (a Lua function that
 * returned there earlier) have ended; later calls from the same C frame find it in place.
 * A C frame's callstatus is reset when the record is reused for another call. */
static inline uint64_t vm_prof_call_payload(const CallInfo *ci, uint32_t id) {
    CallInfo *prev = ci->prev;
    uint64_t fromc = 0;
    if ((prev->callstatus & (CIST_C | CIST_CALLEDLUA)) == CIST_C) {
        prev->callstatus |= CIST_CALLEDLUA;
        fromc = EV_CALL_FROM_C;
    }
    return (uint64_t)id | fromc | vm_prof_depth(ci) << 32;
}

/* The events of a Lua frame's start (startfunc in the instrumented loops, vm_prof_frame_start
 * for the JIT's helpers): its call site,
 * its EV_CALL, and its Ball-Larus path register and action table, each as the enabled
 * analyses need. */
static inline void vm_prof_frame_start_events(State *S, CallInfo *ci) {
    Proto *ep = ci->func->u.lf->p;
    /* Acquire (a plain mov on x86-64): pairs with vm_prof_newid's release store by the
     * thread that named the function first, so this thread's later plain reads of the id
     * (path actions, frame exits, call sites) are ordered after it. */
    uint32_t id = __atomic_load_n(&ep->id, __ATOMIC_ACQUIRE);
    if (__builtin_expect(id == 0, 0)) id = vm_prof_newid(ep);
    unsigned needs = vm_prof_needs;
    if (needs & PROF_NEED_SITE) vm_prof_emit(ev_make(EV_SITE, vm_prof_call_site(S, ci)));
    if (needs & PROF_NEED_COST) vm_prof_emit(ev_make(EV_ICOUNT, vm_prof_tl->icount));
    if (needs & PROF_NEED_CALL) vm_prof_emit(ev_make(EV_CALL, vm_prof_call_payload(ci, id)));
    if (needs & PROF_NEED_PATH) {
        ci->pathbias = vm_pathprof_bias(ep, id);
        ci->pathreg = 0;
    }
}

/* Ball-Larus: apply the action of outcome [o] of the branching instruction at [ipc] to the
 * path register of [ci] (vm_pathprof.h); [ci]'s bias is not VM_PATH_OFF. */
static inline void vm_prof_path_act(CallInfo *ci, uint32_t fid, const Instr *ipc, unsigned o) {
    uint64_t a = vm_pathprof_act(ci->pathbias, ipc, o);
    uint32_t reset = vm_pathact_reset(a);
    if (__builtin_expect(reset == VM_PATH_NORESET, 1)) {
        ci->pathreg += vm_pathact_inc(a);
    } else {
        vm_prof_emit(vm_pathprof_event(fid, ci->pathreg + vm_pathact_inc(a)));
        ci->pathreg = reset;
    }
}

/* The events of the end of Lua frame [ci] of function [fid]: its Ball-Larus path, if it has
 * one, and, for a return ([ret]; a tail call is not), EV_RETURN. [fid] is passed, not read
 * from ci->func: a return may already have moved its results over the function's slot. */
static inline void vm_prof_frame_exit_events(CallInfo *ci, uint32_t fid, bool ret) {
    if (ci->pathbias != VM_PATH_OFF) {
        vm_prof_emit(vm_pathprof_event(fid, ci->pathreg));
        ci->pathbias = VM_PATH_OFF;
    }
    if (ret && (vm_prof_needs & PROF_NEED_RETURN)) {
        vm_prof_emit_icount();
        vm_prof_emit(ev_make(EV_RETURN, vm_prof_depth(ci)));
    }
}

/* The same out of line, for JIT-compiled code's calls and returns made through C helpers:
 * a Lua frame's start (its events, then room for its heap accesses), its end ([ret]: a
 * return, else a tail call), and a frame getting control back (room). vm_prof_frame.c. */
void vm_prof_frame_start(State *S, CallInfo *ci);
void vm_prof_frame_exit(CallInfo *ci, bool ret);
void vm_prof_frame_back(CallInfo *ci);

#endif
