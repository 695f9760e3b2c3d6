/* vm_lib_thread.c: the `thread` library: spawn and join, id, yield, sleep, and the mutex,
 * condition variable and channel, all written on park/unpark of a language thread
 * (vm/threads/vm_threadimpl.h). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "vm_do.h"
#include "vm_lib.h"
#include "vm_prof.h"
#include "vm_threadimpl.h"

#define HANDLE_NAME "thread.handle"

static Table *handle_meta, *mutex_meta, *cond_meta, *chan_meta;

static VmThread *check_handle(State *S, int arg) {
    Value *v = vm_at(S, arg);
    if (v->tt != VT_USERDATA || v->u.u->meta != handle_meta) vm_type_error(S, arg, HANDLE_NAME);
    return (VmThread *)v->u.u->data;
}

/* thread.spawn(f, ...) */
static int th_spawn(State *S) {
    vm_check_any(S, 1);
    int n = vm_gettop(S);
    VmThread *t = vm_thread_new(S, handle_meta);
    vm_push(S, vm_userdata(t->handle)); /* keep it reachable while we build it */
    State *T = vm_newstate_thread(S);
    T->costatus = CO_RUNNING;
    T->thread = t;
    t->S = T;
    vm_checkstack(T, n + VM_MINSTACK);
    for (int i = 1; i <= n; i++) *T->top++ = *vm_at(S, i);
    t->nargs = n - 1;
    t->green = vm_threads_options()->model == VM_THREADS_GREEN;
    vm_table_threads_started(); /* resizes stop freeing blocks a racing reader may hold */
    gc_use_vm_trigger(); /* collections only at safepoints from now on */
    vm_prof_sync_emit(vm_prof_sync_take()); /* before the child's start (vm_thread_body) */
    vm_thread_start(S, t);
    return 1;
}

/* Split "msg\nstack traceback:\n..." at the traceback. */
static size_t msg_len(const String *s) {
    const char *tb = strstr(s->data, "\nstack traceback:\n");
    return tb ? (size_t)(tb - s->data) : s->len;
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
            vm_wl_remove(&t->joiners, self);
            t->joining--;
            bool first = !t->joined;
            t->joined = true;
            uint64_t seq = vm_prof_sync_take(); /* after the thread's end (vm_thread_body) */
            IUNLOCK(&t->ilock);
            vm_prof_sync_emit(seq);
            if (first && t->status != VM_OK) vm_thread_forget(t);
            break;
        }
        vm_wl_push(&t->joiners, self);
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
    vm_blocking_call(S, native_sleep, &d);
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
            vm_wl_remove(&m->waiters, self);
            uint64_t seq = vm_prof_sync_take(); /* after the unlock that freed it */
            IUNLOCK(&m->ilock);
            vm_prof_sync_emit(seq);
            return;
        }
        if (m->owner == self) {
            IUNLOCK(&m->ilock);
            vm_error(S, "mutex is already locked by this thread");
        }
        vm_wl_push(&m->waiters, self);
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
    uint64_t seq = vm_prof_sync_take(); /* before the next lock */
    m->owner = NULL;
    VmThread *w = vm_wl_pop(&m->waiters);
    IUNLOCK(&m->ilock);
    vm_prof_sync_emit(seq);
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
    uint64_t seq = ok ? vm_prof_sync_take() : 0;
    IUNLOCK(&m->ilock);
    vm_prof_sync_emit(seq);
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
    vm_wl_push(&c->waiters, self);
    IUNLOCK(&c->ilock);
    mutex_unlock(S, m, self);
    vm_thread_park(S, self);
    ILOCK(&c->ilock);
    vm_wl_remove(&c->waiters, self);
    IUNLOCK(&c->ilock);
    mutex_lock(S, m, self);
    return 0;
}

static int cv_signal(State *S) {
    LCond *c = check_cond(S, 1);
    ILOCK(&c->ilock);
    VmThread *w = vm_wl_pop(&c->waiters);
    IUNLOCK(&c->ilock);
    if (w) vm_thread_unpark(w);
    return 0;
}

static int cv_broadcast(State *S) {
    LCond *c = check_cond(S, 1);
    vm_wl_wake_all(&c->ilock, &c->waiters, false);
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
            vm_wl_remove(&c->senders, self);
            IUNLOCK(&c->ilock);
            vm_error(S, "send on a closed channel");
        }
        if (c->count < room) {
            c->buf[(c->head + c->count) % room] = v;
            c->count++;
            ticket = ++c->sent;
            vm_wl_remove(&c->senders, self);
            VmThread *r = vm_wl_pop(&c->receivers);
            uint64_t seq = vm_prof_sync_take(); /* before the receive that takes the value */
            IUNLOCK(&c->ilock);
            vm_prof_sync_emit(seq);
            if (r) vm_thread_unpark(r);
            break;
        }
        vm_wl_push(&c->senders, self);
        IUNLOCK(&c->ilock);
        vm_thread_park(S, self);
    }
    if (c->cap == 0) {
        /* Unbuffered: wait until our value has been taken (or the channel closed). */
        for (;;) {
            ILOCK(&c->ilock);
            if (c->received >= ticket || c->closed) {
                vm_wl_remove(&c->senders, self);
                IUNLOCK(&c->ilock);
                break;
            }
            vm_wl_push(&c->senders, self);
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
            vm_wl_remove(&c->receivers, self);
            uint64_t seq = vm_prof_sync_take(); /* after the send that put the value */
            /* Senders wait for room or (unbuffered) for their value to be taken. */
            vm_wl_wake_all(&c->ilock, &c->senders, true);
            vm_prof_sync_emit(seq);
            vm_push(S, v);
            return 1;
        }
        if (c->closed) {
            vm_wl_remove(&c->receivers, self);
            IUNLOCK(&c->ilock);
            vm_pushnil(S);
            return 1;
        }
        vm_wl_push(&c->receivers, self);
        IUNLOCK(&c->ilock);
        vm_thread_park(S, self);
    }
}

static int ch_close(State *S) {
    LChan *c = check_chan(S, 1);
    ILOCK(&c->ilock);
    c->closed = true;
    vm_wl_wake_all(&c->ilock, &c->senders, true);
    vm_wl_wake_all(&c->ilock, &c->receivers, false);
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

    if (vm_thread_main() == NULL) vm_threads_init_main(S, vm_thread_new(S, handle_meta));
}
