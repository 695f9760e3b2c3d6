/* vm_thread.c: language threads, safepoints, blocking regions and the thread library.
 *
 * Two threading models behind one library (vm_thread.h):
 *  - native (1:1): each language thread is a registered native thread;
 *  - green (N:M): language threads run on green stacks, multiplexed on carrier threads
 *    (vm_green.c holds the scheduler).
 *
 * Mutator contexts. The unit that the safepoint protocol counts is a context (Ctx): in the
 * native model every language thread; in the green model every carrier (a parked green
 * thread needs no cooperation: its stack is scanned through its GcStack); in both, the
 * process's main native thread whenever it runs VM code outside a language thread. A
 * context is RUNNING or STOPPED; sp.running counts the RUNNING ones.
 *
 * Blocking. Everything that waits (join, mutex, cond, channel, sleep) is written once on
 * park/unpark of a language thread: the native model parks on a per-thread condition
 * variable inside a blocking region; the green model switches to the carrier's scheduler
 * (vm_green.c). Wait lists are intrusive and guarded by the primitive's internal lock,
 * which is held only for a few loads and stores: never across a poll, an allocation or a
 * park. Park may return spuriously (a permit left from an earlier unpark), so every waiter
 * re-checks its condition in a loop and takes itself off the list when it leaves. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_prof.h"
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

void vm_ctx_block(Ctx *c) {
    if (c == NULL) return;
    pthread_mutex_lock(&sp.lock);
    stop_locked(c);
    pthread_mutex_unlock(&sp.lock);
}

void vm_ctx_unblock(Ctx *c) {
    if (c == NULL) return;
    pthread_mutex_lock(&sp.lock);
    resume_locked(c);
    pthread_mutex_unlock(&sp.lock);
}

void vm_blocking_begin(State *S) {
    (void)S;
    vm_ctx_block(vm_ctx_current());
}

void vm_blocking_end(State *S) {
    (void)S;
    vm_ctx_unblock(vm_ctx_current());
}

/* Park the calling context until the pending operation is over. */
static void safepoint_park(Ctx *c) {
    pthread_mutex_lock(&sp.lock);
    if (sp.active) {
        stop_locked(c);
        resume_locked(c);
    }
    pthread_mutex_unlock(&sp.lock);
}

void vm_poll_slow(State *S) {
    Ctx *c = vm_ctx_current();
    if (vm_poll_word & VM_POLL_SAFEPOINT) safepoint_park(c);
    if (c != NULL && c->carrier != NULL) vm_green_maybe_preempt(S, c);
}

/* Bring all other contexts to a stop. The caller's own context (if any) counts as stopped
 * while it waits, so two initiators serialise instead of waiting for each other. */
static void world_stop(Ctx *self) {
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

static void world_start(Ctx *self) {
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
    world_stop(self);
    op(arg);
    world_start(self);
}

static void collect_op(void *arg) {
    (void)arg;
    gc_collect_now();
}

/* The collect hook (gc_api.h): every collection runs with the world at a safepoint. */
static void collect_at_safepoint(void) { vm_safepoint_run(NULL, collect_op, NULL); }

/* ======================================================================
 * Language threads: registry, park/unpark
 * ====================================================================== */

static VmThreadOptions options = {VM_THREADS_NATIVE, 1, 0.010};
static VmThread all = {.all_next = &all, .all_prev = &all}; /* static: a GC root */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;
static VmThread *main_thread;
static Ctx main_ctx;

void vm_threads_configure(const VmThreadOptions *o) { options = *o; }
const VmThreadOptions *vm_threads_options(void) { return &options; }

static void all_link(VmThread *t) {
    pthread_mutex_lock(&all_lock);
    t->id = next_id++;
    t->all_next = all.all_next;
    t->all_prev = &all;
    all.all_next->all_prev = t;
    all.all_next = t;
    pthread_mutex_unlock(&all_lock);
}

static void all_unlink(VmThread *t) {
    pthread_mutex_lock(&all_lock);
    t->all_prev->all_next = t->all_next;
    t->all_next->all_prev = t->all_prev;
    t->all_next = t->all_prev = NULL;
    pthread_mutex_unlock(&all_lock);
}

static void *native_wait(void *arg) {
    VmThread *t = arg;
    while (!t->permit) pthread_cond_wait(&t->pk_cond, &t->pk_lock);
    return NULL;
}

/* Wait until unparked (or return at once if a permit is pending). May return spuriously. */
void vm_thread_park(State *S, VmThread *t) {
    if (__atomic_exchange_n(&t->permit, 0, __ATOMIC_ACQ_REL)) return;
    if (t->green) {
        vm_green_park(S, t);
        return;
    }
    Ctx *c = vm_ctx_current();
    vm_ctx_block(c);
    pthread_mutex_lock(&t->pk_lock);
    gc_do_blocking(native_wait, t);
    t->permit = 0;
    pthread_mutex_unlock(&t->pk_lock);
    vm_ctx_unblock(c);
}

void vm_thread_unpark(VmThread *t) {
    if (t->green) {
        vm_green_unpark(t);
        return;
    }
    pthread_mutex_lock(&t->pk_lock);
    t->permit = 1;
    pthread_cond_signal(&t->pk_cond);
    pthread_mutex_unlock(&t->pk_lock);
}

/* ---- wait lists (guarded by their owner's lock) ---------------------------------------- */

static void wl_push(WaitList *l, VmThread *t) {
    if (t->wlist == l) return; /* still queued from before a spurious wake */
    t->wlist = l;
    t->wnext = NULL;
    t->wprev = l->tail;
    if (l->tail) l->tail->wnext = t; else l->head = t;
    l->tail = t;
}

static void wl_remove(WaitList *l, VmThread *t) {
    if (t->wlist != l) return;
    if (t->wprev) t->wprev->wnext = t->wnext; else l->head = t->wnext;
    if (t->wnext) t->wnext->wprev = t->wprev; else l->tail = t->wprev;
    t->wnext = t->wprev = NULL;
    t->wlist = NULL;
}

static VmThread *wl_pop(WaitList *l) {
    VmThread *t = l->head;
    if (t) wl_remove(l, t);
    return t;
}

/* Wake every thread on [l]. Threads are taken off the list under [lock] in batches and
 * unparked outside it (unpark may take the parker's own lock, never a list's). */
static void wake_all_of(pthread_mutex_t *lock, WaitList *l, bool locked) {
    for (;;) {
        VmThread *batch[64];
        int n = 0;
        if (!locked) pthread_mutex_lock(lock);
        VmThread *w;
        while (n < 64 && (w = wl_pop(l)) != NULL) batch[n++] = w;
        bool more = l->head != NULL;
        pthread_mutex_unlock(lock);
        locked = false;
        for (int i = 0; i < n; i++) vm_thread_unpark(batch[i]);
        if (!more) return;
    }
}

/* Internal locks of the primitives: held for a handful of instructions by RUNNING threads,
 * so a plain mutex is right (a green thread never switches while holding one). */
#define ILOCK(m) pthread_mutex_lock(m)
#define IUNLOCK(m) pthread_mutex_unlock(m)

/* ======================================================================
 * Running a language thread's body
 * ====================================================================== */

/* Message handler: the error message (as a string) plus its traceback, separated by a
 * marker line so join can give back the message alone. */
static int thread_msgh(State *S) {
    Value *e = vm_at(S, 1);
    const char *msg;
    char buf[120];
    if (e->tt == VT_STR) {
        msg = e->u.s->data;
    } else if (vm_isnumber(e)) {
        msg = vm_number_tostring(S, e)->data;
    } else {
        snprintf(buf, sizeof buf, "(error object is a %s value)", vm_typename(e));
        msg = buf;
    }
    vm_push(S, vm_str(vm_traceback(S, msg, 1)));
    return 1;
}

/* Run the function and arguments on the thread's stack (pushed by spawn); record the
 * results (left on the stack) or the error. Then wake the joiners. */
void vm_thread_body(VmThread *t) {
    State *S = t->S;
    int nargs = t->nargs;
    Value *fn = S->top - nargs - 1;
    ptrdiff_t fpos = vm_savestack(S, fn);
    /* handler below the function */
    vm_push(S, vm_nil());
    for (Value *p = S->top - 1; p > fn; p--) p[0] = p[-1];
    *fn = vm_cfunc(vm_newcfunction(S, thread_msgh, "thread_msgh", 0));
    int st = vm_pcall_msgh(S, nargs, VM_MULTRET, fpos);
    if (st == VM_OK) {
        t->res = (Value *)((char *)S->stack + fpos) + 1;
        t->nres = (int)(S->top - t->res);
    } else {
        t->errval = S->top[-1];
        t->nres = 0;
    }
    t->status = st;
    ILOCK(&t->ilock);
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    wake_all_of(&t->ilock, &t->joiners, true);
    /* A failed thread stays on the all-threads list until it is joined, so that a failure
     * nobody joins is reported when the program ends (vm_threads_shutdown). */
    if (st == VM_OK) all_unlink(t);
}

/* Split "msg\nstack traceback:\n..." at the traceback. */
static size_t msg_len(const String *s) {
    const char *tb = strstr(s->data, "\nstack traceback:\n");
    return tb ? (size_t)(tb - s->data) : s->len;
}

/* ======================================================================
 * Native model
 * ====================================================================== */

static void *native_main(void *arg) {
    VmThread *t = arg;
    vm_ctx_set_current(&t->ctx);
    vm_thread_set_current(t);
    t->S->basestack = gc_native_stack();
    vm_prof_thread_begin(t->id, -1);
    vm_thread_body(t);
    vm_prof_thread_end();
    vm_ctx_leave(&t->ctx);
    vm_ctx_set_current(NULL);
    return NULL;
}

/* ======================================================================
 * The library
 * ====================================================================== */

#define HANDLE_NAME "thread.handle"

static Table *handle_meta, *mutex_meta, *cond_meta, *chan_meta;

static VmThread *check_handle(State *S, int arg) {
    Value *v = vm_at(S, arg);
    if (v->tt != VT_USERDATA || v->u.u->meta != handle_meta) vm_type_error(S, arg, HANDLE_NAME);
    return (VmThread *)v->u.u->data;
}

static VmThread *new_thread(State *S) {
    Userdata *u = vm_newuserdata(S, sizeof(VmThread), handle_meta, true);
    VmThread *t = (VmThread *)u->data;
    t->handle = u;
    pthread_mutex_init(&t->ilock, NULL);
    pthread_mutex_init(&t->pk_lock, NULL);
    pthread_cond_init(&t->pk_cond, NULL);
    t->gcs.hi = NULL;
    return t;
}

/* thread.spawn(f, ...) */
static int th_spawn(State *S) {
    vm_check_any(S, 1);
    int n = vm_gettop(S);
    VmThread *t = new_thread(S);
    vm_push(S, vm_userdata(t->handle)); /* keep it reachable while we build it */
    State *T = vm_newstate_thread(S);
    T->costatus = CO_RUNNING;
    T->thread = t;
    t->S = T;
    vm_checkstack(T, n + VM_MINSTACK);
    for (int i = 1; i <= n; i++) *T->top++ = *vm_at(S, i);
    t->nargs = n - 1;
    t->green = options.model == VM_THREADS_GREEN;
    vm_table_threads_started(); /* resizes stop freeing blocks a racing reader may hold */
    gc_use_vm_trigger(); /* collections only at safepoints from now on */
    all_link(t);
    if (t->green) {
        const char *err = vm_green_spawn(S, t);
        if (err) {
            all_unlink(t);
            vm_error(S, "thread.spawn: %s", err);
        }
    } else {
        t->ctx.thread = t;
        vm_ctx_born(&t->ctx);
        int rc = gc_thread_start(native_main, t, 1u << 20);
        if (rc != 0) {
            vm_ctx_leave(&t->ctx);
            all_unlink(t);
            vm_error(S, "thread.spawn: cannot start a native thread: %s", strerror(rc));
        }
    }
    return 1;
}

/* h:join() */
static int th_join(State *S) {
    VmThread *t = check_handle(S, 1);
    VmThread *self = vm_thread_current();
    if (t == self) vm_error(S, "thread %llu cannot join itself", (unsigned long long)t->id);
    ILOCK(&t->ilock);
    t->joining++;
    IUNLOCK(&t->ilock);
    for (;;) {
        ILOCK(&t->ilock);
        if (__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
            wl_remove(&t->joiners, self);
            t->joining--;
            bool first = !t->joined;
            t->joined = true;
            IUNLOCK(&t->ilock);
            if (first && t->status != VM_OK) all_unlink(t);
            break;
        }
        wl_push(&t->joiners, self);
        IUNLOCK(&t->ilock);
        vm_thread_park(S, self);
    }
    if (t->status != VM_OK) {
        Value e = t->errval;
        if (e.tt == VT_STR)
            vm_error(S, "thread %llu failed: %.*s", (unsigned long long)t->id, (int)msg_len(e.u.s), e.u.s->data);
        vm_error(S, "thread %llu failed", (unsigned long long)t->id);
    }
    int n = t->nres;
    vm_checkstack(S, n);
    for (int i = 0; i < n; i++) vm_push(S, t->res[i]);
    return n;
}

static int th_handle_id(State *S) {
    vm_pushint(S, (vm_Integer)check_handle(S, 1)->id);
    return 1;
}

static int th_handle_tostring(State *S) {
    VmThread *t = check_handle(S, 1);
    vm_pushfstring(S, "thread %d", (int)t->id);
    return 1;
}

static int th_id(State *S) {
    VmThread *t = vm_thread_current();
    vm_pushint(S, t ? (vm_Integer)t->id : 1);
    return 1;
}

static int th_yield(State *S) {
    VmThread *t = vm_thread_current();
    if (t && t->green)
        vm_green_yield(S);
    else
        sched_yield();
    return 0;
}

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *native_sleep(void *arg) {
    double d = *(double *)arg;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    return NULL;
}

static int th_sleep(State *S) {
    double d = vm_check_number(S, 1);
    if (!(d >= 0)) vm_arg_error(S, 1, "non-negative number expected");
    if (d > 1e9) d = 1e9;
    VmThread *t = vm_thread_current();
    if (t && t->green) {
        double deadline = now_sec() + d;
        while (now_sec() < deadline) vm_green_sleep_until(S, t, deadline);
        return 0;
    }
    vm_blocking_begin(S);
    gc_do_blocking(native_sleep, &d);
    vm_blocking_end(S);
    return 0;
}

/* ---- mutex ----------------------------------------------------------------------------- */

typedef struct LMutex {
    pthread_mutex_t ilock;
    VmThread *owner;
    WaitList waiters;
} LMutex;

static LMutex *check_mutex(State *S, int arg) {
    Value *v = vm_at(S, arg);
    if (v->tt != VT_USERDATA || v->u.u->meta != mutex_meta) vm_type_error(S, arg, "thread.mutex");
    return (LMutex *)v->u.u->data;
}

static int th_mutex(State *S) {
    Userdata *u = vm_newuserdata(S, sizeof(LMutex), mutex_meta, true);
    pthread_mutex_init(&((LMutex *)u->data)->ilock, NULL);
    vm_push(S, vm_userdata(u));
    return 1;
}

static void mutex_lock(State *S, LMutex *m, VmThread *self) {
    for (;;) {
        ILOCK(&m->ilock);
        if (m->owner == NULL) {
            m->owner = self;
            wl_remove(&m->waiters, self);
            IUNLOCK(&m->ilock);
            return;
        }
        if (m->owner == self) {
            IUNLOCK(&m->ilock);
            vm_error(S, "mutex is already locked by this thread");
        }
        wl_push(&m->waiters, self);
        IUNLOCK(&m->ilock);
        vm_thread_park(S, self);
    }
}

static void mutex_unlock(State *S, LMutex *m, VmThread *self) {
    ILOCK(&m->ilock);
    if (m->owner != self) {
        IUNLOCK(&m->ilock);
        vm_error(S, "mutex is not locked by this thread");
    }
    m->owner = NULL;
    VmThread *w = wl_pop(&m->waiters);
    IUNLOCK(&m->ilock);
    if (w) vm_thread_unpark(w);
}

static int mx_lock(State *S) {
    mutex_lock(S, check_mutex(S, 1), vm_thread_current());
    return 0;
}

static int mx_unlock(State *S) {
    mutex_unlock(S, check_mutex(S, 1), vm_thread_current());
    return 0;
}

static int mx_trylock(State *S) {
    LMutex *m = check_mutex(S, 1);
    VmThread *self = vm_thread_current();
    ILOCK(&m->ilock);
    bool ok = m->owner == NULL;
    if (ok) m->owner = self;
    IUNLOCK(&m->ilock);
    vm_pushbool(S, ok);
    return 1;
}

/* ---- condition variable ---------------------------------------------------------------- */

typedef struct LCond {
    pthread_mutex_t ilock;
    WaitList waiters;
} LCond;

static LCond *check_cond(State *S, int arg) {
    Value *v = vm_at(S, arg);
    if (v->tt != VT_USERDATA || v->u.u->meta != cond_meta) vm_type_error(S, arg, "thread.cond");
    return (LCond *)v->u.u->data;
}

static int th_cond(State *S) {
    Userdata *u = vm_newuserdata(S, sizeof(LCond), cond_meta, true);
    pthread_mutex_init(&((LCond *)u->data)->ilock, NULL);
    vm_push(S, vm_userdata(u));
    return 1;
}

/* c:wait(m): like pthread_cond_wait, may wake spuriously; callers wait in a loop. */
static int cv_wait(State *S) {
    LCond *c = check_cond(S, 1);
    LMutex *m = check_mutex(S, 2);
    VmThread *self = vm_thread_current();
    if (m->owner != self) vm_error(S, "cond:wait: mutex is not locked by this thread");
    ILOCK(&c->ilock);
    wl_push(&c->waiters, self);
    IUNLOCK(&c->ilock);
    mutex_unlock(S, m, self);
    vm_thread_park(S, self);
    ILOCK(&c->ilock);
    wl_remove(&c->waiters, self);
    IUNLOCK(&c->ilock);
    mutex_lock(S, m, self);
    return 0;
}

static int cv_signal(State *S) {
    LCond *c = check_cond(S, 1);
    ILOCK(&c->ilock);
    VmThread *w = wl_pop(&c->waiters);
    IUNLOCK(&c->ilock);
    if (w) vm_thread_unpark(w);
    return 0;
}

static int cv_broadcast(State *S) {
    LCond *c = check_cond(S, 1);
    wake_all_of(&c->ilock, &c->waiters, false);
    return 0;
}

/* ---- channel --------------------------------------------------------------------------- */

typedef struct LChan {
    pthread_mutex_t ilock;
    Value *buf;          /* ring of max(cap, 1) values (scanned GC block) */
    uint32_t cap;        /* 0: unbuffered (a send waits until its value is received) */
    uint32_t head, count;
    uint64_t sent, received;
    bool closed;
    WaitList senders, receivers;
} LChan;

static LChan *check_chan(State *S, int arg) {
    Value *v = vm_at(S, arg);
    if (v->tt != VT_USERDATA || v->u.u->meta != chan_meta) vm_type_error(S, arg, "thread.channel");
    return (LChan *)v->u.u->data;
}

static int th_channel(State *S) {
    vm_Integer cap = vm_opt_integer(S, 1, 0);
    if (cap < 0 || cap > (1 << 24)) vm_arg_error(S, 1, "capacity out of range");
    Userdata *u = vm_newuserdata(S, sizeof(LChan), chan_meta, true);
    vm_push(S, vm_userdata(u));
    LChan *c = (LChan *)u->data;
    pthread_mutex_init(&c->ilock, NULL);
    c->cap = (uint32_t)cap;
    c->buf = vm_alloc(S, sizeof(Value) * (cap ? (size_t)cap : 1));
    return 1;
}

static int ch_send(State *S) {
    LChan *c = check_chan(S, 1);
    vm_check_any(S, 2);
    Value v = *vm_at(S, 2);
    VmThread *self = vm_thread_current();
    uint32_t room = c->cap ? c->cap : 1;
    uint64_t ticket;
    for (;;) {
        ILOCK(&c->ilock);
        if (c->closed) {
            wl_remove(&c->senders, self);
            IUNLOCK(&c->ilock);
            vm_error(S, "send on a closed channel");
        }
        if (c->count < room) {
            c->buf[(c->head + c->count) % room] = v;
            c->count++;
            ticket = ++c->sent;
            wl_remove(&c->senders, self);
            VmThread *r = wl_pop(&c->receivers);
            IUNLOCK(&c->ilock);
            if (r) vm_thread_unpark(r);
            break;
        }
        wl_push(&c->senders, self);
        IUNLOCK(&c->ilock);
        vm_thread_park(S, self);
    }
    if (c->cap == 0) {
        /* Unbuffered: wait until our value has been taken (or the channel closed). */
        for (;;) {
            ILOCK(&c->ilock);
            if (c->received >= ticket || c->closed) {
                wl_remove(&c->senders, self);
                IUNLOCK(&c->ilock);
                break;
            }
            wl_push(&c->senders, self);
            IUNLOCK(&c->ilock);
            vm_thread_park(S, self);
        }
    }
    return 0;
}

static int ch_recv(State *S) {
    LChan *c = check_chan(S, 1);
    VmThread *self = vm_thread_current();
    uint32_t room = c->cap ? c->cap : 1;
    for (;;) {
        ILOCK(&c->ilock);
        if (c->count > 0) {
            Value v = c->buf[c->head];
            c->buf[c->head] = vm_nil();
            c->head = (c->head + 1) % room;
            c->count--;
            c->received++;
            wl_remove(&c->receivers, self);
            /* Senders wait for room or (unbuffered) for their value to be taken. */
            wake_all_of(&c->ilock, &c->senders, true);
            vm_push(S, v);
            return 1;
        }
        if (c->closed) {
            wl_remove(&c->receivers, self);
            IUNLOCK(&c->ilock);
            vm_pushnil(S);
            return 1;
        }
        wl_push(&c->receivers, self);
        IUNLOCK(&c->ilock);
        vm_thread_park(S, self);
    }
}

static int ch_close(State *S) {
    LChan *c = check_chan(S, 1);
    ILOCK(&c->ilock);
    c->closed = true;
    wake_all_of(&c->ilock, &c->senders, true);
    wake_all_of(&c->ilock, &c->receivers, false);
    return 0;
}

static Table *new_meta(State *S, const char *name, const LibReg *methods) {
    Table *mt = vm_table_new(S, 0, 4);
    vm_push(S, vm_table(mt));
    Table *idx = vm_newlib(S, methods);
    vm_setfield(S, mt, "__index", vm_table(idx));
    vm_setfield(S, mt, "__name", vm_str(vm_string_newc(S, name)));
    vm_pop(S, 1);
    return mt;
}

/* Metatables are reachable from the registry-like thread table, but the C pointers here
 * are also in static memory (a root), so they stay valid. */
void vm_open_thread(State *S) {
    static const LibReg lib[] = {{"spawn", th_spawn}, {"id", th_id},       {"yield", th_yield},
                                 {"sleep", th_sleep}, {"mutex", th_mutex}, {"cond", th_cond},
                                 {"channel", th_channel}, {NULL, NULL}};
    static const LibReg hmeth[] = {{"join", th_join}, {"id", th_handle_id}, {NULL, NULL}};
    static const LibReg mmeth[] = {{"lock", mx_lock}, {"unlock", mx_unlock}, {"trylock", mx_trylock}, {NULL, NULL}};
    static const LibReg cmeth[] = {{"wait", cv_wait}, {"signal", cv_signal}, {"broadcast", cv_broadcast}, {NULL, NULL}};
    static const LibReg chmeth[] = {{"send", ch_send}, {"recv", ch_recv}, {"close", ch_close}, {NULL, NULL}};
    handle_meta = new_meta(S, HANDLE_NAME, hmeth);
    vm_setfield(S, handle_meta, "__tostring", vm_cfunc(vm_newcfunction(S, th_handle_tostring, "tostring", 0)));
    mutex_meta = new_meta(S, "thread.mutex", mmeth);
    cond_meta = new_meta(S, "thread.cond", cmeth);
    chan_meta = new_meta(S, "thread.channel", chmeth);
    Table *t = vm_newlib(S, lib);
    vm_setglobal(S, "thread", vm_table(t));

    /* The main thread: language thread 1, the first context. */
    if (main_thread == NULL) {
        VmThread *m = new_thread(S);
        m->S = S;
        m->green = false;
        S->thread = m;
        main_thread = m;
        m->id = next_id++;
        main_ctx.thread = m;
        vm_ctx_enter(&main_ctx);
        vm_ctx_set_current(&main_ctx);
        vm_thread_set_current(m);
        gc_set_collect_hook(collect_at_safepoint);
    }
}

/* ======================================================================
 * Program start and end
 * ====================================================================== */

uint64_t vm_thread_id(State *S) {
    (void)S;
    VmThread *t = vm_thread_current();
    return t ? t->id : 1;
}

void vm_threads_run(State *S, void (*body)(State *S, void *ud), void *ud) {
    if (options.model == VM_THREADS_GREEN && main_thread != NULL && S == main_thread->S) {
        vm_green_run_main(S, main_thread, &main_ctx, body, ud);
        return;
    }
    body(S, ud);
}

static void report_op(void *arg) {
    (void)arg;
    int n = 0;
    for (VmThread *t = all.all_prev; t != &all; t = t->all_prev) { /* oldest first */
        if (t == main_thread) continue;
        if (n++ == 0) fflush(stdout);
        if (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
            fprintf(stderr, "tandem: thread %llu still running at exit\n", (unsigned long long)t->id);
        } else if (t->status != VM_OK && !t->joined) {
            const char *m = t->errval.tt == VT_STR ? t->errval.u.s->data : "(error object is not a string)";
            fprintf(stderr, "tandem: thread %llu failed and was never joined: %s\n", (unsigned long long)t->id, m);
        }
    }
    /* What stops now stays stopped: the process is about to exit. */
    sp.forever = true;
}

void vm_threads_shutdown(State *S) {
    static int done;
    if (main_thread == NULL || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) return;
    vm_green_stop_timers();
    Ctx *self = vm_ctx_current();
    world_stop(self);
    report_op(S);
    world_start(self);
}
