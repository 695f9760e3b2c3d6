/* vm_thread.c: language threads: the registry of running threads, park and unpark (what
 * every blocking primitive is written on), running a thread's body, the native model, and
 * the program's start and end. Safepoints are vm_safepoint.c, the green scheduler
 * vm_green.c, the `thread` library vm/lib/vm_lib_thread.c.
 *
 * Two threading models behind one library (vm_thread.h):
 *  - native (1:1): each language thread is a registered native thread;
 *  - green (N:M): language threads run on green stacks, multiplexed on carrier threads
 *    (vm_green.c holds the scheduler).
 *
 * Blocking. Everything that waits (join, mutex, cond, channel, sleep) is written once on
 * park/unpark of a language thread: the native model parks on a per-thread condition
 * variable inside a blocking region; the green model switches to the carrier's scheduler
 * (vm_green.c). Wait lists are intrusive and guarded by the primitive's internal lock,
 * which is held only for a few loads and stores: never across a poll, an allocation or a
 * park. Park may return spuriously (a permit left from an earlier unpark), so every waiter
 * re-checks its condition in a loop and takes itself off the list when it leaves. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "trace_api.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_prof.h"
#include "vm_threadimpl.h"

/* ======================================================================
 * Language threads: registry, park/unpark
 * ====================================================================== */

static VmThreadOptions options = {VM_THREADS_NATIVE, 1, 0.010, 0};
static VmThread all = {.all_next = &all, .all_prev = &all}; /* static: a GC root */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;
static int native_live; /* spawned native language threads not yet ended (atomic) */
static VmThread *main_thread;
static Ctx main_ctx;

void vm_threads_configure(const VmThreadOptions *o) {
    options = *o;
    /* Schedule fuzzing sends every poll to the slow path (vm_safepoint.c); off, the word
     * stays clear and the fast path is what it always was. */
    if (o->sched_fuzz) __atomic_or_fetch(&vm_poll_word, VM_POLL_FUZZ, __ATOMIC_SEQ_CST);
}
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

void vm_thread_forget(VmThread *t) {
    pthread_mutex_lock(&all_lock);
    t->all_prev->all_next = t->all_next;
    t->all_next->all_prev = t->all_prev;
    t->all_next = t->all_prev = NULL;
    pthread_mutex_unlock(&all_lock);
}

/* A native thread's park, a blocking region (pk_lock is taken inside it: vm_safepoint.c,
 * "Blocking regions"). */
static void *native_wait(void *arg) {
    VmThread *t = arg;
    pthread_mutex_lock(&t->pk_lock);
    while (!__atomic_load_n(&t->permit, __ATOMIC_RELAXED)) pthread_cond_wait(&t->pk_cond, &t->pk_lock);
    __atomic_store_n(&t->permit, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->pk_lock);
    return NULL;
}

/* Wait until unparked (or return at once if a permit is pending). May return spuriously. */
void vm_thread_park(State *S, VmThread *t) {
    if (__atomic_exchange_n(&t->permit, 0, __ATOMIC_ACQ_REL)) return;
    if (t->green) {
        vm_green_park(S, t);
        return;
    }
    vm_ctx_blocking(vm_ctx_current(), native_wait, t);
}

void vm_thread_unpark(VmThread *t) {
    if (t->green) {
        vm_green_unpark(t);
        return;
    }
    pthread_mutex_lock(&t->pk_lock);
    /* Atomic although under pk_lock: park's fast path exchanges it without the lock. */
    __atomic_store_n(&t->permit, 1, __ATOMIC_RELEASE);
    pthread_cond_signal(&t->pk_cond);
    pthread_mutex_unlock(&t->pk_lock);
}

/* Wake every thread on [l]. Threads are taken off the list under [lock] in batches and
 * unparked outside it (unpark may take the parker's own lock, never a list's). */
void vm_wl_wake_all(pthread_mutex_t *lock, WaitList *l, bool locked) {
    for (;;) {
        VmThread *batch[64];
        int n = 0;
        if (!locked) pthread_mutex_lock(lock);
        VmThread *w;
        while (n < 64 && (w = vm_wl_pop(l)) != NULL) batch[n++] = w;
        bool more = l->head != NULL;
        pthread_mutex_unlock(lock);
        locked = false;
        for (int i = 0; i < n; i++) vm_thread_unpark(batch[i]);
        if (!more) return;
    }
}



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
    /* The thread's start, after its spawn's (EV_SYNC: input-sensitive profiling orders the
     * two threads' events by them). */
    vm_prof_sync_emit(vm_prof_sync_take());
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
    uint64_t seq = vm_prof_sync_take(); /* the end, before any join sees it done */
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    vm_wl_wake_all(&t->ilock, &t->joiners, true);
    vm_prof_sync_emit(seq);
    if (seq != 0) vm_prof_emit(ev_make(EV_THREAD_END, t->id)); /* its shadow state can go */
    /* A failed thread stays on the all-threads list until it is joined, so that a failure
     * nobody joins is reported when the program ends (vm_threads_shutdown). */
    if (st == VM_OK) vm_thread_forget(t);
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
    uint64_t t0 = 0;
    if (trace_on()) { /* -Xtrace: the thread's track, and its body as one run */
        trace_thread_name("thread %llu", (unsigned long long)t->id);
        t0 = trace_now();
    }
    vm_thread_body(t);
    if (t0 != 0) trace_span(TRACE_RUN, t0, t->id, 0);
    vm_prof_thread_end();
    vm_ctx_leave(&t->ctx);
    vm_ctx_set_current(NULL);
    __atomic_sub_fetch(&native_live, 1, __ATOMIC_RELEASE);
    return NULL;
}

VmThread *vm_thread_new(State *S, Table *handle_meta) {
    Userdata *u = vm_newuserdata(S, sizeof(VmThread), handle_meta, true);
    VmThread *t = (VmThread *)u->data;
    t->handle = u;
    pthread_mutex_init(&t->ilock, NULL);
    pthread_mutex_init(&t->pk_lock, NULL);
    pthread_cond_init(&t->pk_cond, NULL);
    t->gcs.hi = NULL;
    return t;
}

void vm_thread_start(State *S, VmThread *t) {
    all_link(t);
    if (t->green) {
        const char *err = vm_green_spawn(S, t);
        if (err) {
            vm_thread_forget(t);
            vm_error(S, "thread.spawn: %s", err);
        }
    } else {
        t->ctx.thread = t;
        vm_ctx_born(&t->ctx);
        __atomic_add_fetch(&native_live, 1, __ATOMIC_RELAXED);
        int rc = gc_thread_start(native_main, t, 1u << 20);
        if (rc != 0) {
            __atomic_sub_fetch(&native_live, 1, __ATOMIC_RELAXED);
            vm_ctx_leave(&t->ctx);
            vm_thread_forget(t);
            vm_error(S, "thread.spawn: cannot start a native thread: %s", strerror(rc));
        }
    }
}

void vm_threads_init_main(State *S, VmThread *m) {
    m->S = S;
    m->green = false;
    S->thread = m;
    main_thread = m;
    m->id = next_id++;
    main_ctx.thread = m;
    vm_ctx_enter(&main_ctx);
    vm_ctx_set_current(&main_ctx);
    vm_thread_set_current(m);
    gc_set_collect_hook(vm_collect_at_safepoint);
}

VmThread *vm_thread_main(void) { return main_thread; }

bool vm_threads_single(void) { return __atomic_load_n(&native_live, __ATOMIC_ACQUIRE) == 0; }

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
    vm_safepoint_forever();
}

void vm_threads_shutdown(State *S) {
    static int done;
    if (main_thread == NULL || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) return;
    vm_green_stop_timers();
    Ctx *self = vm_ctx_current();
    vm_world_stop(self);
    report_op(S);
    vm_world_start(self);
}
