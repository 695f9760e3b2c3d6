/* vm_events.h: the event vocabulary shared by the writers (the interpreter, later the JIT and
 * the collector) and the readers (profilers/). A leaf: includes only <stdint.h>, so readers
 * never depend on the runtime (as Go's trace wire format, golang/go
 * src/internal/trace/tracev2/events.go).
 *
 * An event is one 64-bit word: the top 8 bits are its kind, the low 56 bits its payload.
 * Events carry integers and ids, never pointers into the GC heap; names travel separately
 * (function ids are named on the VM side, vm_prof.h).
 *
 * Two words are reserved by the CAB (grep CAB_RESERVED): CLEAR (0) and MAGIC (all ones).
 * Kinds start at 1 (so no event is 0) and stay below 0xff (so no event is all ones). */
#ifndef VM_EVENTS_H
#define VM_EVENTS_H

#include <stdint.h>

/* Kinds. The comment after each lists the payload's arguments in brackets. */
typedef enum EvKind {
    EV_NONE = 0, /* never produced: an event word of 0 is the CAB's CLEAR */
    EV_CALL,     /* function entry [function id] */
    EV_THREAD,   /* the following events come from language thread [thread id] (first event
                    of every stream; on every green-thread switch) */
    EV__COUNT
} EvKind;

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
