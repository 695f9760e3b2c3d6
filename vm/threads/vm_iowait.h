/* vm_iowait.h: waits made on behalf of C code that does not know about language threads
 * (C modules' poll/select/nanosleep, vm/capi/vm_capi_block.c). */
#ifndef VM_IOWAIT_H
#define VM_IOWAIT_H

#include "vm_state.h"

/* One attempt of a wait: wait at most [timeout_ms] (-1: no limit, 0: just look) and
 * return what the C call returns (> 0 ready, 0 timed out, < 0 error with errno set). */
typedef int (*VmIoTry)(void *arg, int timeout_ms);

/* Run the wait [try(arg, timeout_ms)] so that it holds nobody up:
 *  - not a RUNNING language thread (an analyzer, a Boehm marker, a thread inside a
 *    blocking region already): try() runs as it is;
 *  - a native language thread: try() runs inside a blocking region (a collection or any
 *    safepoint operation proceeds meanwhile);
 *  - a green thread whose running state is [S]: try(arg, 0) is polled, and between polls
 *    the green thread sleeps on the scheduler's timer (50 us doubling to 10 ms), so its
 *    carrier runs the other green threads; the wait ends when try() reports something or
 *    the time is up. Without a usable [S] (NULL, or a state of another language thread) the
 *    wait runs in a blocking region of the carrier, which then stalls.
 * errno after the call is try()'s. */
int vm_iowait(State *S, VmIoTry try, void *arg, int timeout_ms);

#endif
