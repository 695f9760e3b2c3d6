/* vm_safepoint.c: mutator contexts and safepoints: the protocol that stops every context
 * for an operation (a collection, the exit report) and the poll word compiled code and the
 * interpreter test.
 *
 * Mutator contexts. The unit that the safepoint protocol counts is a context (Ctx): in the
 * native model every language thread; in the green model every carrier (a parked green
 * thread needs no cooperation: its stack is scanned through its GcStack); in both, the
 * process's main native thread whenever it runs VM code outside a language thread. A
 * context is RUNNING or STOPPED; sp.running counts the RUNNING ones. A context inside a
 * blocking region (vm_blocking_call, a producer waiting on a full CAB) counts as STOPPED. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <time.h>

#include "trace_api.h"
#include "vm_do.h"
#include "vm_threadimpl.h"

volatile uint32_t vm_poll_word;

/* ======================================================================
 * Contexts and safepoints
 * ====================================================================== */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t stopped;   /* an initiator waits here for running == 0 */
    pthread_cond_t resumed;   /* stopped contexts wait here for active == false */
    int running;              /* contexts RUNNING */
    bool active;              /* an operation is requested or running */
    bool forever;             /* shutdown: the world never resumes */
} sp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, false};

static _Thread_local Ctx *tl_ctx;
static _Thread_local VmThread *tl_thread;

/* Not inlined: a green thread may migrate between carriers across any call that switches,
 * and a compiler may keep a thread-local address in a register across calls. */
__attribute__((noinline)) Ctx *vm_ctx_current(void) { return tl_ctx; }
__attribute__((noinline)) void vm_ctx_set_current(Ctx *c) { tl_ctx = c; }
__attribute__((noinline)) VmThread *vm_thread_current(void) { return tl_thread; }
__attribute__((noinline)) void vm_thread_set_current(VmThread *t) { tl_thread = t; }

void vm_ctx_enter(Ctx *c) {
    pthread_mutex_lock(&sp.lock);
    c->state = CTX_RUNNING;
    sp.running++;
    pthread_mutex_unlock(&sp.lock);
}

/* Start a context that is RUNNING from birth: called by its creator, who is RUNNING, so no
 * safepoint operation can be in progress (it would be waiting for the creator). */
void vm_ctx_born(Ctx *c) { vm_ctx_enter(c); }

void vm_ctx_leave(Ctx *c) {
    pthread_mutex_lock(&sp.lock);
    c->state = CTX_GONE;
    if (--sp.running == 0 && sp.active) pthread_cond_broadcast(&sp.stopped);
    pthread_mutex_unlock(&sp.lock);
}

/* RUNNING -> STOPPED (lock held). */
static void stop_locked(Ctx *c) {
    c->state = CTX_STOPPED;
    if (--sp.running == 0 && sp.active) pthread_cond_broadcast(&sp.stopped);
}

static void *wait_resumed(void *arg) {
    (void)arg;
    while (sp.active) pthread_cond_wait(&sp.resumed, &sp.lock);
    return NULL;
}

/* STOPPED -> RUNNING once no operation is active (lock held). The wait is a GC blocking
 * region, so a collection neither signals this thread nor needs its registers. */
static void resume_locked(Ctx *c) {
    if (sp.active) gc_do_blocking(wait_resumed, NULL);
    c->state = CTX_RUNNING;
    sp.running++;
}

/* Blocking regions. A context is STOPPED for the safepoint protocol only while the collector
 * counts its thread as blocked too (GC_do_blocking): a collection never signals a thread
 * that the VM already counts as stopped. Were the two states apart, a stopped thread would
 * be suspended by the collector's signal wherever it happened to be, holding a runtime lock
 * (a carrier's idle_lock, a thread's park lock) that another stopped thread then waits for.
 * With the kernel that is harmless: the waiting thread runs the signal handler inside its
 * futex wait. Under ThreadSanitizer it is a hang: TSan defers the handler of a thread blocked
 * in pthread_mutex_lock (or spinning in sched_yield, which it does not intercept) until its
 * next intercepted call, and the collector waits for an answer that never comes (tests/
 * README.md, "Sanitizers"). Inside the region [fn] must not touch Values or allocate; what
 * it keeps on its stack below the region's start is not scanned. */
typedef struct Blocked {
    Ctx *c;
    gc_thread_fn fn;
    void *arg;
} Blocked;

static void *blocked_body(void *p) {
    Blocked *b = p;
    pthread_mutex_lock(&sp.lock);
    stop_locked(b->c);
    pthread_mutex_unlock(&sp.lock);
    void *r = b->fn(b->arg);
    pthread_mutex_lock(&sp.lock);
    wait_resumed(NULL); /* already blocked for the collector: wait here, not in a region of its own */
    b->c->state = CTX_RUNNING;
    sp.running++;
    pthread_mutex_unlock(&sp.lock);
    return r;
}

void *vm_ctx_blocking(Ctx *c, gc_thread_fn fn, void *arg) {
    if (c == NULL) return fn(arg); /* no context: nothing to count (never a VM thread) */
    Blocked b = {c, fn, arg};
    return gc_do_blocking(blocked_body, &b);
}

void *vm_blocking_call(State *S, gc_thread_fn fn, void *arg) {
    (void)S;
    return vm_ctx_blocking(vm_ctx_current(), fn, arg);
}

/* Park the calling context until the pending operation is over. */
static void safepoint_park(Ctx *c) {
    uint64_t t0 = trace_on() ? trace_now() : 0; /* -Xtrace: the time parked, as a span */
    pthread_mutex_lock(&sp.lock);
    bool parked = sp.active;
    if (parked) {
        stop_locked(c);
        resume_locked(c);
    }
    pthread_mutex_unlock(&sp.lock);
    if (parked && t0 != 0) trace_span(TRACE_STOPPED, t0, 0, 0);
}

/* ======================================================================
 * Schedule fuzzing (-Xtest.sched_fuzz=SEED, testing only)
 * ====================================================================== */

/* With a seed, VM_POLL_FUZZ stays set, so every poll (interpreter and JIT alike) comes
 * here, and one poll in FUZZ_ODDS steps off the schedule: a green thread yields its carrier
 * (as if its slice were over) or a native thread calls sched_yield, and one step in eight
 * is a nap instead (a napping carrier leaves its queue open to stealing). Naps (1-200 us)
 * are blocking regions, like thread.sleep, so collections go on meanwhile. Each native thread or carrier draws from its own
 * generator, seeded by SEED and its thread id or carrier index, so a seed names one
 * sequence of decisions per thread (the interleaving still depends on the OS). */
#define FUZZ_ODDS 256

static _Thread_local uint64_t fz_rng;
static uint64_t fz_yields, fz_naps;

void vm_threads_fuzz_counts(uint64_t *yields, uint64_t *naps) {
    *yields = __atomic_load_n(&fz_yields, __ATOMIC_RELAXED);
    *naps = __atomic_load_n(&fz_naps, __ATOMIC_RELAXED);
}

static uint64_t fuzz_next(Ctx *c) {
    if (fz_rng == 0) {
        VmThread *t = vm_thread_current();
        uint64_t who = c != NULL && c->carrier != NULL ? 0x100000000ull + (uint64_t)vm_green_carrier_index(c)
                       : t != NULL ? t->id : 0;
        fz_rng = (vm_threads_options()->sched_fuzz * 0x9e3779b97f4a7c15ull) ^ (who * 0xbf58476d1ce4e5b9ull);
        if (fz_rng == 0) fz_rng = 1;
    }
    fz_rng ^= fz_rng >> 12; /* xorshift64* */
    fz_rng ^= fz_rng << 25;
    fz_rng ^= fz_rng >> 27;
    return fz_rng * 0x2545f4914f6cdd1dull;
}

static void *nap(void *ts) {
    nanosleep(ts, NULL);
    return NULL;
}

static void sched_fuzz(State *S, Ctx *c) {
    uint64_t r = fuzz_next(c);
    if (r % FUZZ_ODDS != 0) return;
    r /= FUZZ_ODDS;
    bool green = c != NULL && c->carrier != NULL;
    if (r % 8 != 0 && (!green || S != NULL)) { /* S == NULL: the carrier's own loop, nothing to yield */
        __atomic_add_fetch(&fz_yields, 1, __ATOMIC_RELAXED);
        if (green) vm_green_yield(S);
        else sched_yield();
    } else {
        __atomic_add_fetch(&fz_naps, 1, __ATOMIC_RELAXED);
        struct timespec ts = {0, 1000 + (long)((r >> 8) % 200000)};
        vm_ctx_blocking(c, nap, &ts);
    }
}

void vm_poll_slow(State *S) {
    Ctx *c = vm_ctx_current();
    uint32_t poll = __atomic_load_n(&vm_poll_word, __ATOMIC_RELAXED);
    if (poll & VM_POLL_SAFEPOINT) safepoint_park(c);
    if (poll & VM_POLL_FUZZ) sched_fuzz(S, c);
    if (c != NULL && c->carrier != NULL) vm_green_maybe_preempt(S, c);
}

/* Bring all other contexts to a stop. The caller's own context (if any) counts as stopped
 * while it waits, so two initiators serialise instead of waiting for each other. */
void vm_world_stop(Ctx *self) {
    pthread_mutex_lock(&sp.lock);
    while (sp.active) {
        /* Another operation first: take part in it as a stopped context. */
        if (self && self->state == CTX_RUNNING) {
            stop_locked(self);
            resume_locked(self);
        } else {
            gc_do_blocking(wait_resumed, NULL);
        }
    }
    sp.active = true;
    __atomic_or_fetch(&vm_poll_word, VM_POLL_SAFEPOINT, __ATOMIC_SEQ_CST);
    bool was_running = self && self->state == CTX_RUNNING;
    if (was_running) {
        self->state = CTX_STOPPED;
        sp.running--;
    }
    while (sp.running > 0) pthread_cond_wait(&sp.stopped, &sp.lock);
    if (was_running) self->state = CTX_INITIATOR;
    pthread_mutex_unlock(&sp.lock);
}

void vm_world_start(Ctx *self) {
    pthread_mutex_lock(&sp.lock);
    if (self && self->state == CTX_INITIATOR) {
        self->state = CTX_RUNNING;
        sp.running++;
    }
    if (!sp.forever) {
        sp.active = false;
        __atomic_and_fetch(&vm_poll_word, ~(uint32_t)VM_POLL_SAFEPOINT, __ATOMIC_SEQ_CST);
        pthread_cond_broadcast(&sp.resumed);
    }
    pthread_mutex_unlock(&sp.lock);
}

void vm_safepoint_run(State *S, void (*op)(void *arg), void *arg) {
    (void)S;
    Ctx *self = vm_ctx_current();
    uint64_t t0 = trace_on() ? trace_now() : 0; /* -Xtrace: the pause, and the time to stop */
    vm_world_stop(self);
    uint64_t stopped = t0 != 0 ? trace_now() : 0;
    op(arg);
    vm_world_start(self);
    if (t0 != 0) trace_span(TRACE_SAFEPOINT, t0, stopped - t0, 0);
}

static void collect_op(void *arg) {
    (void)arg;
    gc_collect_now();
}

/* The collect hook (gc_api.h): every collection runs with the world at a safepoint. */
void vm_collect_at_safepoint(void) { vm_safepoint_run(NULL, collect_op, NULL); }

void vm_safepoint_forever(void) { sp.forever = true; }
