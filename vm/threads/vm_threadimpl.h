/* vm_threadimpl.h: what the files of vm/threads/ (vm_safepoint.c, vm_thread.c, the green
 * scheduler vm_green.c) share, and what the `thread` library (vm/lib/vm_lib_thread.c) builds
 * its primitives on: the language thread, wait lists, park/unpark. Nothing else includes it. */
#ifndef VM_THREADIMPL_H
#define VM_THREADIMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gc_api.h"
#include "vm_sanitize.h"
#include "vm_thread.h"

/* Bits of vm_poll_word. */
#define VM_POLL_SAFEPOINT 1u
#define VM_POLL_PREEMPT 2u
#define VM_POLL_FUZZ 4u     /* -Xtest.sched_fuzz: set for the whole run, never cleared */

enum { CTX_GONE, CTX_RUNNING, CTX_STOPPED, CTX_INITIATOR };

struct Carrier;
struct VmThread;

/* A mutator context (see vm_thread.c): a native language thread, a carrier, or the main
 * native thread. */
typedef struct Ctx {
    int state;                  /* CTX_*, under the safepoint lock */
    struct VmThread *thread;    /* native: its language thread */
    struct Carrier *carrier;    /* green: the carrier this context is */
} Ctx;

typedef struct WaitList {
    struct VmThread *head, *tail;
} WaitList;

/* Green thread states (VmThread.gstate). */
enum { G_NEW, G_READY, G_RUNNING, G_PARKED, G_DONE };

/* A language thread. It is the payload of its handle (a scanned userdata), so it lives as
 * long as the handle is reachable, and while it runs it is linked in the all-threads list
 * (a root). */
typedef struct VmThread {
    uint64_t id;
    State *S;                   /* its base state */
    Userdata *handle;
    int nargs;                  /* spawn: arguments after the function */
    bool green;
    int done;                   /* set (release) once status/results are final */
    int status;                 /* VM_OK or the error status */
    Value errval;               /* the error (message + traceback) when status != VM_OK */
    Value *res;                 /* results on S's stack */
    int nres;
    int joining;                /* joins in progress (under ilock) */
    bool joined;
    pthread_mutex_t ilock;      /* guards joiners, joining, joined */
    WaitList joiners;
    /* waiting */
    WaitList *wlist;            /* the list this thread is on, under that list's lock */
    struct VmThread *wnext, *wprev;
    int permit;                 /* a pending unpark */
    pthread_mutex_t pk_lock;    /* native parking */
    pthread_cond_t pk_cond;
    Ctx ctx;                    /* native: its context */
    /* green */
    GcStack gcs;                /* its green stack, for the collector */
    void *gsp;                  /* saved stack pointer while switched out */
    void *run_hi;               /* top of the stack it runs on (green or a coroutine's) */
    State *run_state;           /* the state it was running when it switched out */
    char *stack_lo;             /* mmap'ed green stack (guard page at the bottom) */
    int gstate;                 /* G_* (atomic) */
    struct Carrier *carrier;    /* where it runs or last ran */
    struct Carrier *home;       /* the program's carrier it last ran on (vm_green.c: a shadow
                                   runs each carrier's threads as that carrier would) */
    struct VmThread *rq_next;   /* run queue link */
    struct VmThread *tm_next;   /* sleep list link */
    double wake_at;
    bool sleeping;              /* on the sleep list */
    void (*main_body)(State *S, void *ud); /* green main thread: run this instead */
    void *main_ud;
    struct VmThread *all_next, *all_prev;
    VmSanStack san;             /* sanitizer builds: its green stack (vm_sanitize.h) */
} VmThread;

Ctx *vm_ctx_current(void);
void vm_ctx_set_current(Ctx *c);
VmThread *vm_thread_current(void);
void vm_thread_set_current(VmThread *t);
void vm_ctx_born(Ctx *c);
void vm_ctx_enter(Ctx *c);
void vm_ctx_leave(Ctx *c);
/* Run fn(arg) with [c] STOPPED, as a blocking region for the collector too (vm_safepoint.c,
 * "Blocking regions"); [c] is RUNNING again when it returns. */
void *vm_ctx_blocking(Ctx *c, void *(*fn)(void *arg), void *arg);

/* Wait until unparked (or return at once if a permit is pending). May return spuriously. */
void vm_thread_park(State *S, VmThread *t);
void vm_thread_unpark(VmThread *t);
void vm_thread_body(VmThread *t);

/* A new language thread, the payload of a fresh handle userdata with metatable
 * [handle_meta]; not started. */
VmThread *vm_thread_new(State *S, Table *handle_meta);
/* Link [t] (its State holds the function and arguments) into the registry and start it in
 * the current model; raises "thread.spawn: ..." if it cannot start. */
void vm_thread_start(State *S, VmThread *t);
/* Take [t] off the registry: it ended well, or its failure has been reported by a join. */
void vm_thread_forget(VmThread *t);
/* Make [m] language thread 1 running on [S], the first context; install the collect hook. */
void vm_threads_init_main(State *S, VmThread *m);
VmThread *vm_thread_main(void); /* NULL before vm_threads_init_main */

/* Safepoints (vm_safepoint.c): stop every other context and return with the world stopped
 * ([self] is the caller's context, or NULL); start it again. */
void vm_world_stop(Ctx *self);
void vm_world_start(Ctx *self);
void vm_safepoint_forever(void);      /* at exit: a stopped world never resumes */
void vm_collect_at_safepoint(void);   /* the collect hook (gc_api.h) */

/* ---- wait lists (guarded by their owner's lock) ---------------------------------------- */
/* A waiter queues itself, parks, and on waking re-checks its condition and takes itself off
 * (park may return spuriously). */

static inline void vm_wl_push(WaitList *l, VmThread *t) {
    if (t->wlist == l) return; /* still queued from before a spurious wake */
    t->wlist = l;
    t->wnext = NULL;
    t->wprev = l->tail;
    if (l->tail) l->tail->wnext = t; else l->head = t;
    l->tail = t;
}

static inline void vm_wl_remove(WaitList *l, VmThread *t) {
    if (t->wlist != l) return;
    if (t->wprev) t->wprev->wnext = t->wnext; else l->head = t->wnext;
    if (t->wnext) t->wnext->wprev = t->wprev; else l->tail = t->wprev;
    t->wnext = t->wprev = NULL;
    t->wlist = NULL;
}

static inline VmThread *vm_wl_pop(WaitList *l) {
    VmThread *t = l->head;
    if (t) vm_wl_remove(l, t);
    return t;
}


/* Internal locks of the primitives: held for a handful of instructions by RUNNING threads,
 * so a plain mutex is right (a green thread never switches while holding one). */
#define ILOCK(m) pthread_mutex_lock(m)
#define IUNLOCK(m) pthread_mutex_unlock(m)

/* Wake every thread on [l], whose lock is [lock] (held on entry if [locked]; released on
 * return). */
void vm_wl_wake_all(pthread_mutex_t *lock, WaitList *l, bool locked);


/* vm_green.c */
const char *vm_green_spawn(State *S, VmThread *t);
void vm_green_park(State *S, VmThread *t);
void vm_green_unpark(VmThread *t);
void vm_green_yield(State *S);
void vm_green_sleep_until(State *S, VmThread *t, double deadline);
void vm_green_maybe_preempt(State *S, Ctx *c);
int vm_green_carrier_index(const Ctx *c);
void vm_green_run_main(State *S, VmThread *m, Ctx *main_ctx, void (*body)(State *, void *), void *ud);
void vm_green_stop_timers(void);

#endif
