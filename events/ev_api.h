/* ev_api.h: the event vocabulary shared by the writers (the interpreter and the JIT, through
 * vm/prof/) and the readers (profilers/). A leaf: includes only <stdint.h>, so readers
 * never depend on the runtime (as Go's trace wire format, golang/go
 * src/internal/trace/tracev2/events.go).
 *
 * An event is one 64-bit word: the top 8 bits are its kind, the low 56 bits its payload.
 * Events carry integers and ids, never pointers into the GC heap; names travel separately
 * (function ids are named on the VM side, vm_prof.h).
 *
 * Two words are reserved by the CAB (grep CAB_RESERVED): CLEAR (0) and MAGIC (all ones).
 * Kinds start at 1 (so no event is 0) and stay below 0xff (so no event is all ones). */
#ifndef EV_API_H
#define EV_API_H

#include <stdint.h>

/* Kinds. The comment after each lists the payload's fields, low bits first.
 *
 * Depth: the number of call frames (Lua and C) of the running coroutine chain below and
 * including the frame that the event belongs to; the main chunk runs at depth 1 of its
 * thread (resumed coroutines continue their resumer's count, from where they were first
 * resumed). A call event at depth d ends every frame at depth >= d that the analyzer still
 * has on its shadow stack (frames left by errors, tail calls), so analyzers need no
 * return events to keep calling contexts right. Frames of C functions emit no events: a
 * gap in depth is a C frame. */
typedef enum EvKind {
    EV_NONE = 0, /* never produced: an event word of 0 is the CAB's CLEAR */
    EV_CALL,     /* Lua function entry [function id:31 | from C:1 | depth:24]; from C: the
                    first Lua call made by the C frame below it (at depth - 1), so frames
                    left at depth - 1 by earlier calls have ended too (a Lua function that
                    returned, then a pcall at its depth) */
    EV_THREAD,   /* the following events come from language thread [thread id] (first event
                    of every stream; on every green-thread switch) */
    EV_SITE,     /* the next EV_CALL is made from [pc:32 | caller:24]: the instruction index
                    in the calling Lua function and that function's id; pc 0xffffffff: called
                    from C, and the caller is the nearest Lua frame below, in this coroutine
                    or its resumers (0: none, or its id does not fit: the analyzer's shadow
                    stack decides).
                    The caller travels with the site so that an analysis seeing only some
                    of the events (sampling) still knows who called; only with
                    PROF_NEED_SITE */
    EV_RETURN,   /* the Lua frame at [depth:24] returns; only with PROF_NEED_RETURN */
    EV_PATH,     /* a Ball-Larus path of function [function id:24] ended: [path number:32]
                    at bits 24..55; only with PROF_NEED_PATH */
    EV_LOAD,     /* heap load at [address:48]; only with PROF_NEED_MEM */
    EV_STORE,    /* heap store at [address:48]; only with PROF_NEED_MEM */
    EV_FRAME,    /* [function id:31 | from C:1 | depth:24]: the thread is inside this Lua frame already (not
                    a call). After EV_THREAD when a green thread resumes on another carrier
                    than the one it last ran on, the VM replays the thread's open Lua frames,
                    outermost first, so that analyzers keeping calling contexts per thread
                    can rebuild them in this stream; also at the start of a sampling window
                    (-Xsample.mode=code, vm/prof/vm_sample.h), for the frames that were
                    running before it. */
    EV_GAP,      /* never produced: the analyzer passes it to the analyses when the events
                    that follow are not contiguous with those before (before every sampled
                    burst); pairing state such as a pending EV_SITE must be dropped */
    EV_ICOUNT,   /* [instructions:56]: the stream's count of bytecode instructions run so far
                    (every instruction dispatched by the interpreter or entered in compiled
                    code, counted once); only with PROF_NEED_COST, just before every EV_CALL,
                    EV_RETURN and EV_THREAD (EV_FRAMEs follow an EV_THREAD with no
                    instruction between), so the difference between two of them is the
                    cost of what ran in between, all of it by the thread current before
                    the second */
    EV_INPUT,    /* external input at [address:48]: the io library filled this cell (a write
                    by "the kernel", no thread's) and the running code reads it (it returns
                    the value); only with PROF_NEED_INPUT */
    EV_SYNC,     /* [sequence:56] a synchronisation operation of the thread library (mutex
                    lock and unlock, channel send and receive, a thread's spawn, start, end
                    and join), numbered from 1 by one global counter taken inside the
                    operation's own lock, so that a release always has a smaller number than
                    the acquire that sees it; only with PROF_NEED_SYNC. Numbers are dense:
                    an analysis can merge the streams' segments in their order */
    EV_RATE,     /* [shift:6]: sampled code with an adaptive rate (-Xsample.adaptive,
                    vm/prof/vm_sample.h): the events that follow in this stream were sampled
                    at 1/2^shift of the configured rate, so each stands for 2^shift of them;
                    the analyses weight their counts by it (shift 0 again when the rate is
                    back up); never produced otherwise */
    EV_THREAD_END, /* language thread [thread id] ends (its last event): analyses may free
                    what they keep for it; only with PROF_NEED_SYNC */
    EV_PC,       /* the next event, an EV_LOAD or EV_STORE, is the access of instruction [pc:32]
                    of Lua function [function id:24] (bits 32..55; 0: the id does not fit):
                    the instruction being run, or, for accesses made by library code written
                    in C (PROF_NEED_LIBMEM), the call instruction of the nearest Lua frame.
                    Immediately before every heap-access event, only with PROF_NEED_PC (and
                    PROF_NEED_MEM); the interpreter and the JIT emit the same ones. An analysis
                    seeing a heap access with no EV_PC just before it (a sampled burst began
                    between them) has no instruction for it */
    EV__COUNT
} EvKind;

/* Field helpers of EV_CALL and EV_PATH. */
#define EV_CALL_FROM_C (UINT64_C(1) << 31)
static inline uint32_t ev_call_fid(uint64_t ev) { return (uint32_t)ev & 0x7fffffffu; }
static inline uint32_t ev_call_from_c(uint64_t ev) { return (uint32_t)(ev >> 31) & 1u; }
static inline uint32_t ev_call_depth(uint64_t ev) { return (uint32_t)(ev >> 32) & 0xffffffu; }
/* The frames an analyzer keeps at this depth and deeper have ended when EV_CALL [ev]
 * arrives: its own depth, or one less when the frame below it is C (from C). */
static inline uint32_t ev_call_cut(uint64_t ev) { return ev_call_depth(ev) - ev_call_from_c(ev); }
static inline uint32_t ev_path_fid(uint64_t ev) { return (uint32_t)ev & 0xffffffu; }
static inline uint32_t ev_path_number(uint64_t ev) { return (uint32_t)(ev >> 24); }
static inline uint32_t ev_site_pc(uint64_t ev) { return (uint32_t)ev; }
static inline uint32_t ev_site_caller(uint64_t ev) { return (uint32_t)(ev >> 32) & 0xffffffu; }
static inline uint32_t ev_pc_pc(uint64_t ev) { return (uint32_t)ev; }
static inline uint32_t ev_pc_fid(uint64_t ev) { return (uint32_t)(ev >> 32) & 0xffffffu; }
/* EV_RATE: the weight of each following event of the stream. */
static inline uint64_t ev_rate_weight(uint64_t ev) { return UINT64_C(1) << (ev & 63u); }
#define EV_DEPTH_MAX 0xffffffu  /* deeper frames saturate */

/* The payload is 56 bits: kind in the top byte. */
#define EV_KIND_SHIFT 56
#define EV_PAYLOAD_MASK ((UINT64_C(1) << EV_KIND_SHIFT) - 1)

/* Kind 0xff would let an event be MAGIC (all ones). */
_Static_assert(EV__COUNT <= 0xff, "event kinds must stay below 0xff (CAB_RESERVED)");

/* The event of [kind] (1 .. EV__COUNT-1) with [payload] (low 56 bits kept). Never 0 and
 * never all ones. */
static inline uint64_t ev_make(EvKind kind, uint64_t payload) {
    return ((uint64_t)kind << EV_KIND_SHIFT) | (payload & EV_PAYLOAD_MASK);
}

static inline EvKind ev_kind(uint64_t ev) { return (EvKind)(ev >> EV_KIND_SHIFT); }
static inline uint64_t ev_payload(uint64_t ev) { return ev & EV_PAYLOAD_MASK; }

#endif
