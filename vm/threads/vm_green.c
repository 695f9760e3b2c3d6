/* vm_green.c: green threads (N:M) on carrier threads.
 *
 * A green thread runs on an mmap'ed stack of its own (guard page below). Carriers are
 * registered native threads, each with a run queue; an idle carrier steals from the others
 * and then sleeps. Switching is vm_ctx_switch (vm_coro.c) between the carrier's native
 * stack and the green stack: the carrier's loop switches in, the green thread switches back
 * out with an action (yield, park, exit) that the carrier carries out once it is off the
 * green stack, so a green thread is never made runnable on another carrier while its stack
 * is still in use.
 *
 * Park/unpark without lost wake-ups: park leaves with action PARK; the carrier, off the
 * stack, stores gstate = PARKED and then looks at the permit; unpark stores the permit and
 * then tries to move gstate PARKED -> READY. Both sides use sequentially consistent
 * operations, so at least one of them sees the other's store, and exactly one wins the
 * PARKED -> READY exchange and enqueues the thread.
 *
 * The collector (gc_api.h, dependency notes section 2): a suspended green thread's stack is
 * scanned from its saved sp through its GcStack; while a carrier runs a green thread its
 * recorded stack bottom is the green stack's top and its own native stack is dormant
 * (scanned through the carrier's GcStack). Collections run only when every carrier is
 * stopped (at a poll, or idle in a blocking region), never during a switch: nothing between
 * the stack bookkeeping of a switch and the switch itself may block (see run()).
 *
 * Preemption: a ticker thread wakes every time slice; a carrier that has run the same green
 * thread for a whole slice while others wait gets its preempt flag and vm_poll_word's
 * PREEMPT bit, and yields at its next poll. The ticker also wakes sleepers.
 *
 * The gather (shadow profiling with several carriers, vm/prof/vm_shadow.h): a fork keeps one
 * thread, the carrier that forks, so every other carrier must have switched its green thread
 * out to a run queue before the fork; then the shadow's one carrier finds every green thread
 * switched out cleanly (in a run queue, parked, or sleeping) and steals them all. The world
 * stop alone is not enough: a carrier stopped at a poll holds its green thread mid-run, and
 * that thread would never run in the shadow. vm_green_gather (below) does it. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "trace_api.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_prof.h"
#include "vm_shadow.h"
#include "vm_threadimpl.h"

void vm_ctx_switch(void **save_sp, void *new_sp); /* vm_coro.c */

/* Size of a green stack: interpreter frames and up to VM_MAXCCALLS nested C calls, plus the
 * collector's signal frame (see vm_coro.c); 4 times that under ASan, as there. */
#define GREEN_STACK ((VM_ASAN ? 4 : 1) * 256 * 1024)
#define GREEN_GUARD 4096

enum { ACT_NONE, ACT_YIELD, ACT_PARK, ACT_EXIT };

typedef struct Carrier {
    Ctx ctx;
    int index;
    pthread_mutex_t qlock;
    VmThread *qhead, *qtail;
    atomic_int qlen;
    void *native_sp;            /* saved while a green thread runs */
    GcStack *native;            /* the carrier's own stack */
    VmThread *current;
    int action;                 /* what the green thread that switched out asked for */
    atomic_int preempt;
    atomic_ulong switches;      /* green threads switched in so far */
    unsigned long seen;         /* ticker's copy of switches at the last tick */
    VmSanStack san;             /* sanitizer builds: its own stack (vm_sanitize.h) */
    uint64_t vticks;            /* in a shadow: ticks its threads have run there (shadow_one) */
} Carrier;

static void (*switch_hook)(int carrier, uint64_t thread_id, State *moved);

void vm_threads_set_switch_hook(void (*hook)(int carrier, uint64_t thread_id, State *moved)) { switch_hook = hook; }

static Carrier *carriers;
static int ncarriers;
static atomic_int nready;       /* threads in run queues */
static atomic_uint rr;          /* round robin for enqueues from outside the carriers */
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static atomic_int nidle;
/* The gather: [gathering] is 1 from vm_green_gather's start to vm_green_release (or to its
 * time-out); every other carrier then yields its green thread at its next poll, whatever is
 * queued (vm_green_yield), and waits in gather_wait, where [gathered] counts it. */
static atomic_int gathering;
static pthread_mutex_t gather_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gather_cv = PTHREAD_COND_INITIALIZER;   /* the carriers' wait for the release */
static pthread_cond_t arrived_cv = PTHREAD_COND_INITIALIZER;  /* the initiator's wait for them */
static int gathered;            /* carriers in gather_wait, under gather_lock */
/* In a shadow forked from several carriers: the one carrier there stands in for all of them.
 * Each program carrier keeps its run queue (a thread re-enqueues on its home's), and the
 * shadow's carrier runs next from the carrier whose threads have run the fewest ticks so far
 * (vticks): the carriers progress at equal rates as they do in parallel in the program, so
 * each thread gets the share of the shadow's ticks it has in the program (a thread alone on
 * a carrier half of them against two, not a third as a single round robin would give). */
static bool shadow_one;

/* ---- stacks ---------------------------------------------------------------------------- */

static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;
static char *stack_cache[64];
static int nstack_cache;

static char *stack_get(void) {
    pthread_mutex_lock(&stack_lock);
    char *p = nstack_cache > 0 ? stack_cache[--nstack_cache] : NULL;
    pthread_mutex_unlock(&stack_lock);
    if (p) return p;
    p = mmap(NULL, GREEN_STACK + GREEN_GUARD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
    if (p == MAP_FAILED) return NULL;
    mprotect(p, GREEN_GUARD, PROT_NONE);
    return p;
}

static void stack_put(char *p) {
    pthread_mutex_lock(&stack_lock);
    if (nstack_cache < 64) {
        stack_cache[nstack_cache++] = p;
        p = NULL;
    }
    pthread_mutex_unlock(&stack_lock);
    if (p) munmap(p, GREEN_STACK + GREEN_GUARD);
}

/* ---- run queues ------------------------------------------------------------------------ */

static void enqueue(VmThread *t) {
    Ctx *c = vm_ctx_current();
    Carrier *k = c && c->carrier ? c->carrier : &carriers[atomic_fetch_add(&rr, 1) % (unsigned)ncarriers];
    if (shadow_one && t->home != NULL) k = t->home;
    pthread_mutex_lock(&k->qlock);
    t->rq_next = NULL;
    if (k->qtail) k->qtail->rq_next = t; else k->qhead = t;
    k->qtail = t;
    atomic_fetch_add(&k->qlen, 1);
    pthread_mutex_unlock(&k->qlock);
    atomic_fetch_add(&nready, 1);
    /* Pairs with the idle carrier's nidle increment and nready check (both seq_cst). */
    if (atomic_load(&nidle) > 0) {
        pthread_mutex_lock(&idle_lock);
        pthread_cond_signal(&idle_cv);
        pthread_mutex_unlock(&idle_lock);
    }
}

static VmThread *pop_from(Carrier *k) {
    if (atomic_load_explicit(&k->qlen, memory_order_relaxed) == 0) return NULL;
    pthread_mutex_lock(&k->qlock);
    VmThread *t = k->qhead;
    if (t) {
        k->qhead = t->rq_next;
        if (!k->qhead) k->qtail = NULL;
        atomic_fetch_sub(&k->qlen, 1);
        atomic_fetch_sub(&nready, 1);
    }
    pthread_mutex_unlock(&k->qlock);
    return t;
}

/* shadow_one: the next thread of the carrier with the fewest vticks among those with a
 * queue; the others are moved up to its count (an empty queue banks no ticks: when it gets a
 * thread again it does not take the carrier for as long as it was empty). */
static VmThread *next_thread_shadow(void) {
    Carrier *best = NULL;
    for (int i = 0; i < ncarriers; i++) {
        Carrier *k = &carriers[i];
        if (atomic_load_explicit(&k->qlen, memory_order_relaxed) > 0 && (best == NULL || k->vticks < best->vticks)) best = k;
    }
    if (best == NULL) return NULL;
    for (int i = 0; i < ncarriers; i++)
        if (carriers[i].vticks < best->vticks) carriers[i].vticks = best->vticks;
    VmThread *t = pop_from(best);
    if (t != NULL) t->home = best;
    return t;
}

static VmThread *next_thread(Carrier *c) {
    if (shadow_one) return next_thread_shadow();
    VmThread *t = pop_from(c);
    for (int i = 1; !t && i < ncarriers; i++) t = pop_from(&carriers[(c->index + i) % ncarriers]);
    return t;
}

/* ---- switching ------------------------------------------------------------------------- */

static void *stack_top(State *S) { return S->cstack ? (char *)S->cstack + S->cstacksize : S->basestack->hi; }

/* Sanitizer builds (vm_sanitize.h): the stack [t] runs on, its green stack or the C stack of
 * the coroutine it was running when it switched out. */
static const VmSanStack *san_stack(VmThread *t) {
    return t->run_state != NULL && t->run_state->cstack != NULL ? &t->run_state->san : &t->san;
}

/* On the green stack of [t], running state [S] (t's base state or a coroutine of it): go back
 * to the carrier, which then does [action]. Returns when t is switched in again, maybe on
 * another carrier. */
static void switch_out(State *S, VmThread *t, int action) {
    /* The thread's last events on this carrier's stream, before it can be run on another:
     * its instruction count (all of it charged to it before it runs elsewhere), then EV_SYNC
     * (the other carrier's switch-in takes a larger number: on_switch, vm_prof.c). */
    vm_prof_emit_icount();
    vm_prof_sync_emit(vm_prof_sync_take());
    Carrier *c = t->carrier;
    t->run_hi = stack_top(S);
    t->run_state = S;
    if (t->gcs.spp == NULL) t->gcs.spp = &t->gsp; /* the green stack itself goes dormant */
    c->action = action;
    gc_set_stack(c->native->hi);
    void *fake = NULL;
    vm_san_switch_start(action == ACT_EXIT ? NULL : &fake, &c->san);
    vm_ctx_switch(&t->gsp, c->native_sp);
    /* Switched in again, by t->carrier: its stack is the way back. */
    vm_san_switch_finish(fake, &t->carrier->san);
}

static void run(Carrier *c, VmThread *t) {
    State *moved = t->carrier != NULL && t->carrier != c ? t->run_state : NULL;
    __atomic_store_n(&c->current, t, __ATOMIC_RELAXED); /* the ticker reads it (TSan) */
    t->carrier = c;
    if (!shadow_one) t->home = c;
    __atomic_store_n(&t->gstate, G_RUNNING, __ATOMIC_SEQ_CST); /* unpark CASes it (TSan) */
    atomic_fetch_add_explicit(&c->switches, 1, memory_order_relaxed);
    /* -Xtrace: t's run on this carrier, from before the switch event (which may wait on a
     * full ring: that wait is inside the run) to the switch back. */
    uint64_t t_in = trace_on() ? trace_now() : 0;
    /* The profiler's switch event comes first, while the collector still sees this carrier on
     * its own stack and t's green stack as dormant: emitting may wait for room in a full CAB,
     * a producer waiting counts as stopped, and a collection may run meanwhile. Called after
     * the stack bookkeeping below, it let Boehm scan from the native sp up to the green
     * stack's top (SIGSEGV in the mark phase) and skip t's stack. */
    if (switch_hook) switch_hook(c->index, t->id, moved);
    vm_thread_set_current(t);
    c->native->spp = &c->native_sp;
    if (t->gcs.spp == &t->gsp) t->gcs.spp = NULL;
    gc_set_stack(t->run_hi);
    c->action = ACT_NONE;
    void *fake = NULL;
    vm_san_switch_start(&fake, san_stack(t));
    vm_ctx_switch(&c->native_sp, t->gsp);
    vm_san_switch_finish(fake, NULL);
    /* Back on the native stack. */
    if (t_in != 0) trace_span(TRACE_RUN, t_in, t->id, 0);
    c->native->spp = NULL;
    __atomic_store_n(&c->current, NULL, __ATOMIC_RELAXED);
    vm_thread_set_current(NULL);
    switch (c->action) {
    case ACT_YIELD:
        __atomic_store_n(&t->gstate, G_READY, __ATOMIC_SEQ_CST);
        enqueue(t);
        break;
    case ACT_PARK:
        __atomic_store_n(&t->gstate, G_PARKED, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&t->permit, __ATOMIC_SEQ_CST)) {
            int exp = G_PARKED;
            if (__atomic_compare_exchange_n(&t->gstate, &exp, G_READY, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
                /* Atomic: another unpark may be storing 1 at the same time (a plain store
                 * here was a data race, found by TSan). */
                __atomic_store_n(&t->permit, 0, __ATOMIC_SEQ_CST);
                enqueue(t);
            }
        }
        break;
    case ACT_EXIT: {
        char *lo = t->stack_lo;
        t->stack_lo = NULL;
        gc_stack_unlink(&t->gcs);
        vm_san_stack_reset(lo + GREEN_GUARD, GREEN_STACK); /* reused: see vm_sanitize.h */
        vm_san_fiber_free(&t->san);
        __atomic_store_n(&t->gstate, G_DONE, __ATOMIC_RELEASE);
        stack_put(lo);
        break;
    }
    default:
        break;
    }
}

static pthread_mutex_t main_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t main_cv = PTHREAD_COND_INITIALIZER;
static int main_done;

/* First code on a green stack. */
static _Noreturn void green_entry(void) {
    Ctx *c = vm_ctx_current();
    VmThread *t = c->carrier->current;
    vm_san_switch_finish(NULL, &c->carrier->san);
    if (t->main_body) {
        t->main_body(t->S, t->main_ud);
        pthread_mutex_lock(&main_lock);
        main_done = 1;
        pthread_cond_broadcast(&main_cv);
        pthread_mutex_unlock(&main_lock);
    } else {
        vm_thread_body(t);
    }
    switch_out(t->S, t, ACT_EXIT);
    __builtin_unreachable();
}

static const char *prepare(VmThread *t) {
    char *lo = stack_get();
    if (lo == NULL) return "cannot allocate a green stack";
    t->stack_lo = lo;
    char *hi = lo + GREEN_GUARD + GREEN_STACK;
    uintptr_t top = (uintptr_t)hi & ~(uintptr_t)15;
    void **sp = (void **)(top - 64);
    memset(sp, 0, 64);
    sp[6] = (void *)green_entry; /* 6 pops, then ret: rsp % 16 == 8 at entry, as after a call */
    t->gsp = sp;
    t->run_hi = hi;
    t->gcs.hi = hi;
    t->gcs.spp = &t->gsp;
    t->run_state = NULL; /* it starts on its green stack */
    t->home = NULL;
    t->san.lo = lo + GREEN_GUARD;
    t->san.size = GREEN_STACK;
    t->san.fiber = vm_san_fiber_new();
    gc_stack_link(&t->gcs);
    t->S->basestack = &t->gcs;
    t->gstate = G_READY;
    return NULL;
}

/* ---- carriers and the ticker ----------------------------------------------------------- */

/* An idle carrier's wait, a blocking region (idle_lock is taken inside it: vm_safepoint.c,
 * "Blocking regions"). */
static void *idle_wait(void *arg) {
    (void)arg;
    pthread_mutex_lock(&idle_lock);
    atomic_fetch_add(&nidle, 1);
    while (atomic_load(&nready) == 0 && !atomic_load(&gathering)) pthread_cond_wait(&idle_cv, &idle_lock);
    atomic_fetch_sub(&nidle, 1);
    pthread_mutex_unlock(&idle_lock);
    return NULL;
}

/* A carrier's part in a gather, a blocking region (so the fork's world stop finds it
 * STOPPED): counted in, it waits for the release. In a shadow it never returns (its thread
 * is not there). */
static void *gather_wait(void *arg) {
    (void)arg;
    pthread_mutex_lock(&gather_lock);
    gathered++;
    pthread_cond_signal(&arrived_cv);
    while (atomic_load(&gathering)) pthread_cond_wait(&gather_cv, &gather_lock);
    gathered--;
    pthread_mutex_unlock(&gather_lock);
    return NULL;
}

static void *carrier_main(void *arg) {
    Carrier *c = arg;
    c->native = gc_native_stack();
    c->san.fiber = vm_san_fiber_self();
    vm_ctx_set_current(&c->ctx);
    vm_prof_thread_begin(0, c->index);
    if (trace_on()) trace_thread_name("carrier %d", c->index);
    for (;;) {
        vm_poll(NULL);
        if (atomic_load(&gathering)) { /* off every green thread's stack: wait out the fork */
            vm_ctx_blocking(&c->ctx, gather_wait, NULL);
            continue;
        }
        VmThread *t = next_thread(c);
        if (t && shadow_one) {
            Carrier *home = t->home;
            uint64_t t0 = vm_shadow_ticks();
            run(c, t);
            home->vticks += vm_shadow_ticks() - t0;
            continue;
        }
        if (t) {
            run(c, t);
            continue;
        }
        /* A shadow (vm/prof/vm_shadow.h) has no ticker to wake its sleepers and no other
         * carrier to send it work: idle, it is over. */
        if (vm_shadow_child) vm_shadow_end(VM_SHADOW_END_IDLE);
        uint64_t t0 = trace_on() ? trace_now() : 0;
        vm_ctx_blocking(&c->ctx, idle_wait, NULL);
        if (t0 != 0) trace_span(TRACE_CARRIER_IDLE, t0, 0, 0);
    }
    return NULL;
}

static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cv;
static VmThread *sleepers;      /* sorted by wake_at */
static bool timers_stopped;

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void preempt_check(void) {
    bool any = false;
    int waiting = atomic_load(&nready);
    for (int i = 0; i < ncarriers; i++) {
        Carrier *c = &carriers[i];
        unsigned long sw = atomic_load_explicit(&c->switches, memory_order_relaxed);
        if (waiting > 0 && __atomic_load_n(&c->current, __ATOMIC_RELAXED) != NULL && sw == c->seen) {
            atomic_store(&c->preempt, 1);
            any = true;
        }
        c->seen = sw;
    }
    if (any) __atomic_or_fetch(&vm_poll_word, VM_POLL_PREEMPT, __ATOMIC_SEQ_CST);
}

/* The ticker touches no Values: it only moves sleeping threads (alive through the
 * all-threads list) to run queues, so it is not registered with the collector. */
static void *ticker_main(void *arg) {
    (void)arg;
    double slice = vm_threads_options()->slice;
    double next_tick = now_sec() + slice;
    pthread_mutex_lock(&timer_lock);
    while (!timers_stopped) {
        double now = now_sec();
        if (now >= next_tick) {
            preempt_check();
            next_tick = now + slice;
        }
        while (sleepers && sleepers->wake_at <= now) {
            VmThread *t = sleepers;
            sleepers = t->tm_next;
            t->sleeping = false;
            vm_thread_unpark(t);
        }
        double until = next_tick;
        if (sleepers && sleepers->wake_at < until) until = sleepers->wake_at;
        struct timespec ts = {(time_t)until, (long)((until - (double)(time_t)until) * 1e9)};
        pthread_cond_timedwait(&timer_cv, &timer_lock, &ts);
    }
    pthread_mutex_unlock(&timer_lock);
    return NULL;
}

static bool started;

static const char *start_carriers(void) {
    if (started) return NULL;
    started = true;
    vm_table_threads_started(); /* resizes stop freeing blocks a racing reader may hold */
    gc_use_vm_trigger(); /* the main thread and the carriers: collections only at safepoints */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&timer_cv, &ca);
    ncarriers = vm_threads_options()->carriers;
    if (ncarriers < 1) ncarriers = 1;
    carriers = calloc((size_t)ncarriers, sizeof *carriers);
    if (carriers == NULL) return "out of memory";
    for (int i = 0; i < ncarriers; i++) {
        Carrier *c = &carriers[i];
        c->index = i;
        c->ctx.carrier = c;
        pthread_mutex_init(&c->qlock, NULL);
    }
    for (int i = 0; i < ncarriers; i++) {
        vm_ctx_born(&carriers[i].ctx);
        int rc = gc_thread_start(carrier_main, &carriers[i], 1u << 20);
        if (rc != 0) {
            vm_ctx_leave(&carriers[i].ctx);
            return "cannot start a carrier thread";
        }
    }
    pthread_t tk;
    if (pthread_create(&tk, NULL, ticker_main, NULL) != 0) return "cannot start the ticker thread";
    pthread_detach(tk);
    return NULL;
}

/* ---- the interface to vm_thread.c ------------------------------------------------------ */

const char *vm_green_spawn(State *S, VmThread *t) {
    (void)S;
    const char *err = start_carriers();
    if (err) return err;
    if ((err = prepare(t)) != NULL) return err;
    enqueue(t);
    return NULL;
}

void vm_green_park(State *S, VmThread *t) { switch_out(S, t, ACT_PARK); }

void vm_green_unpark(VmThread *t) {
    __atomic_store_n(&t->permit, 1, __ATOMIC_SEQ_CST);
    int exp = G_PARKED;
    if (__atomic_compare_exchange_n(&t->gstate, &exp, G_READY, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        /* Atomic: the carrier reads it, and other unparks store it, concurrently (TSan). */
        __atomic_store_n(&t->permit, 0, __ATOMIC_SEQ_CST);
        enqueue(t);
    }
}

void vm_green_yield(State *S) {
    VmThread *t = vm_thread_current();
    if (atomic_load(&nready) == 0 && !atomic_load(&gathering)) return; /* nobody else to run */
    switch_out(S, t, ACT_YIELD);
}

void vm_green_maybe_preempt(State *S, Ctx *c) {
    Carrier *k = c->carrier;
    if (!atomic_exchange(&k->preempt, 0)) return;
    __atomic_and_fetch(&vm_poll_word, ~(uint32_t)VM_POLL_PREEMPT, __ATOMIC_SEQ_CST);
    if (S != NULL && k->current != NULL) vm_green_yield(S);
}

int vm_green_carrier_index(const Ctx *c) { return c->carrier->index; }

/* Every carrier but [self] with a green thread current gets the preempt flag, and the poll
 * word its bit (another carrier's vm_green_maybe_preempt clears the bit for all: re-raised
 * at each round of the wait). */
static void gather_poke(const Carrier *self) {
    bool any = false;
    for (int i = 0; i < ncarriers; i++) {
        Carrier *c = &carriers[i];
        if (c == self || __atomic_load_n(&c->current, __ATOMIC_RELAXED) == NULL) continue;
        atomic_store(&c->preempt, 1);
        any = true;
    }
    if (any) __atomic_or_fetch(&vm_poll_word, VM_POLL_PREEMPT, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&idle_lock); /* idle carriers leave their wait for gather_wait */
    pthread_cond_broadcast(&idle_cv);
    pthread_mutex_unlock(&idle_lock);
}

typedef struct GatherWait {
    const Carrier *self;
    double deadline;
    bool ok;
} GatherWait;

/* The initiator's wait for the other carriers, a blocking region (a collection another
 * carrier starts before its poll must not wait for us). On time-out the gather is called
 * off here, under gather_lock, so no carrier stays waiting. */
static void *gather_arrivals(void *arg) {
    GatherWait *g = arg;
    pthread_mutex_lock(&gather_lock);
    while (gathered < ncarriers - 1) {
        double now = now_sec();
        if (now >= g->deadline) {
            atomic_store(&gathering, 0);
            pthread_cond_broadcast(&gather_cv);
            pthread_mutex_unlock(&gather_lock);
            g->ok = false;
            return NULL;
        }
        pthread_mutex_unlock(&gather_lock);
        gather_poke(g->self);
        pthread_mutex_lock(&gather_lock);
        double until = now + 0.001; /* re-poke every millisecond */
        if (until > g->deadline) until = g->deadline;
        struct timespec ts = {(time_t)until, (long)((until - (double)(time_t)until) * 1e9)};
        if (gathered < ncarriers - 1) pthread_cond_timedwait(&arrived_cv, &gather_lock, &ts);
    }
    pthread_mutex_unlock(&gather_lock);
    g->ok = true;
    return NULL;
}

bool vm_green_gather(double timeout) {
    Ctx *self = vm_ctx_current();
    if (!started || ncarriers <= 1) return true; /* nobody to gather */
    if (self == NULL || self->carrier == NULL) return false; /* not on a carrier: the shadow would have none */
    atomic_store(&gathering, 1);
    GatherWait g = {self->carrier, now_sec() + timeout, false};
    vm_ctx_blocking(self, gather_arrivals, &g);
    return g.ok;
}

/* In the forked process, on the carrier that forked (the only thread): it stands in for every
 * carrier of the program (shadow_one). The locks are made anew: whoever held one at the fork
 * (the ticker enqueueing a sleeper it woke) is not here to release it. */
static void adopt_queues(void) {
    pthread_mutex_init(&idle_lock, NULL);
    pthread_mutex_init(&timer_lock, NULL);
    for (int i = 0; i < ncarriers; i++) {
        pthread_mutex_init(&carriers[i].qlock, NULL);
        carriers[i].vticks = 0;
    }
    shadow_one = true;
}

void vm_green_release(bool shadow) {
    if (!started || ncarriers <= 1) return;
    if (shadow) { /* the other carriers' threads are not here: nobody to wake (and gather_cv's
                     waiters were theirs: broadcasting it here could wait for them) */
        atomic_store(&gathering, 0);
        adopt_queues();
        return;
    }
    pthread_mutex_lock(&gather_lock);
    atomic_store(&gathering, 0);
    pthread_cond_broadcast(&gather_cv);
    pthread_mutex_unlock(&gather_lock);
}

void vm_green_sleep_until(State *S, VmThread *t, double deadline) {
    pthread_mutex_lock(&timer_lock);
    if (t->sleeping) {
        /* still listed from before a spurious wake-up: take it off and re-insert */
        VmThread **pp = &sleepers;
        while (*pp != t) pp = &(*pp)->tm_next;
        *pp = t->tm_next;
    }
    t->wake_at = deadline;
    VmThread **pp = &sleepers;
    while (*pp && (*pp)->wake_at <= deadline) pp = &(*pp)->tm_next;
    t->tm_next = *pp;
    *pp = t;
    t->sleeping = true;
    if (sleepers == t) pthread_cond_signal(&timer_cv);
    pthread_mutex_unlock(&timer_lock);
    vm_thread_park(S, t);
}

void vm_green_stop_timers(void) {
    if (!started) return;
    pthread_mutex_lock(&timer_lock);
    timers_stopped = true;
    pthread_cond_signal(&timer_cv);
    pthread_mutex_unlock(&timer_lock);
}

/* The main native thread's wait for the main green thread, a blocking region. */
static void *main_wait(void *arg) {
    VmThread *m = arg;
    pthread_mutex_lock(&main_lock);
    while (!main_done) pthread_cond_wait(&main_cv, &main_lock);
    pthread_mutex_unlock(&main_lock);
    /* The carrier may still be switching off the main green stack: wait for it. */
    while (__atomic_load_n(&m->gstate, __ATOMIC_ACQUIRE) != G_DONE) sched_yield();
    return NULL;
}

void vm_green_run_main(State *S, VmThread *m, Ctx *main_ctx, void (*body)(State *, void *), void *ud) {
    const char *err = start_carriers();
    if (err) {
        fprintf(stderr, "tandem: %s\n", err);
        exit(1);
    }
    GcStack *native = S->basestack;
    m->green = true;
    m->main_body = body;
    m->main_ud = ud;
    m->permit = 0;
    main_done = 0;
    if ((err = prepare(m)) != NULL) {
        fprintf(stderr, "tandem: %s\n", err);
        exit(1);
    }
    enqueue(m);
    /* The main native thread waits, stopped, until the main green thread is done. */
    vm_ctx_blocking(main_ctx, main_wait, m);
    m->green = false;
    m->main_body = NULL;
    S->basestack = native;
    vm_thread_set_current(m);
}
