/* vm_capi_lock.c: the module lock. C modules are written for Lua, where one global state
 * runs one thread at a time: lua-cjson keeps one encoding buffer per module, LPeg and
 * others keep statics. Tandem's language threads share one global state and may run in
 * parallel, so module C functions would race (cjson from four native threads: corrupted
 * buffers, then SIGSEGV). A module's C function therefore runs holding this lock, owned by a
 * language thread (recursive), once a second language thread may run
 * (vm_table_threads_have_started): before that, the call is direct.
 *
 * The lock is given up wherever the function lets other code run or waits, and taken back
 * after: around lua_call/lua_pcall (Lua code may wait for another thread that needs the
 * lock: a join, a channel), lua_yield (other coroutines of the thread run), and a module's
 * wait (vm_capi_block.c). Waiting for it goes through vm_iowait: a blocking region under
 * native threads (the waiter counts as stopped, so a collection proceeds), naps on the green
 * scheduler under green threads (so a holder that a metamethod's Lua code left preempted on
 * the same carrier runs and releases it).
 * Not released: around metamethods that API calls run (lua_gettable's __index, ...): a
 * module relies on the lock across those calls (cjson's buffer). Lua code run that way must
 * not wait for another thread that is calling a module function (vm/capi/README.md).
 *
 * Errors: every call through the lock is protected (vm_rawrunprotected), so an error that
 * unwinds out of the function gives its level back before it goes on unwinding; and a
 * lua_call made while holding levels is protected too, so that an error from the Lua code
 * it runs takes them back before it unwinds the function (lua_callk): the lock's levels
 * follow the C frames, whatever the error skips.
 *
 * Continuations: the same protected call (or, with one language thread, the lighter catch
 * point of kcall_direct), made also without the lock for a function that may yield (a coroutine's, not below a non-yieldable call from C), receives what
 * capi_continue throws. Each coroutine runs on a C stack of its own, so a yield inside
 * lua_callk/lua_pcallk/lua_yieldk simply returns into the module function when the
 * coroutine is resumed; lua5.4's function would not go on there but end with its
 * continuation's results, so the API function runs the continuation (status LUA_YIELD, or
 * the error status of a lua_pcallk whose callee failed after yielding) and throws its
 * results (State.ktarget) to the trampoline, which returns them as the function's.
 *
 * Rejected: one lock per module library (modules call each other through Lua, and lua-socket
 * is two libraries sharing state through Lua tables: a single lock cannot deadlock); no lock
 * (what lua5.4's own lua_lock does without a custom build: nothing, because it never runs
 * two threads in one state). Also rejected: no protected call per locked call, the levels
 * given back instead where an error is caught (vm_rawrunprotected noting them at its start).
 * It saves the setjmp (a trivial call with threads: 1.5x lua5.4's instead of 2.1x in a
 * RelWithDebInfo build), but the note goes stale when a coroutine that began a pcall while
 * its resumer held the lock is resumed from elsewhere, and an error that skips a lua_call's
 * relock leaves the catching code without levels it held before: both need bookkeeping at
 * every resume and around every call from C. */
#include <pthread.h>

#include "vm_capi_int.h"
#include "vm_iowait.h"
#include "vm_sanitize.h"
#include "vm_thread.h"

/* The lock word: the owner's language thread id, 0 when free. Taken by a CAS (uncontended:
 * one atomic operation each way); waiters count themselves in nwait and sleep on mfree under
 * mlock. Release stores 0 (A) then reads nwait (B); a waiter increments nwait (C) then tries
 * the CAS (D) before it sleeps, all seq_cst: either B sees C and the releaser signals under
 * mlock (which the waiter holds from C until it sleeps), or D comes after A and succeeds. */
static uint64_t owner;
static int nwait;
static int depth; /* the owner's nesting (touched by the owner only) */
static pthread_mutex_t mlock = PTHREAD_MUTEX_INITIALIZER; /* only for sleeping and waking */
static pthread_cond_t mfree = PTHREAD_COND_INITIALIZER;

static bool cas_take(uint64_t me) {
    uint64_t free_ = 0;
    return __atomic_compare_exchange_n(&owner, &free_, me, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* Take the free lock for language thread *arg: at once ([timeout_ms] 0: 1 if taken, else 0)
 * or waiting until it is free (else). Run by vm_iowait: the waiting part inside a blocking
 * region, where it touches no Values. */
static int try_take(void *arg, int timeout_ms) {
    uint64_t me = *(uint64_t *)arg;
    if (timeout_ms == 0) return cas_take(me);
    pthread_mutex_lock(&mlock);
    __atomic_add_fetch(&nwait, 1, __ATOMIC_SEQ_CST);             /* C */
    while (!cas_take(me)) pthread_cond_wait(&mfree, &mlock);      /* D */
    __atomic_sub_fetch(&nwait, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&mlock);
    return 1;
}

/* Take [n] levels for language thread [me] (whose running state is [S]). */
static void acquire(State *S, uint64_t me, int n) {
    if (__atomic_load_n(&owner, __ATOMIC_RELAXED) == me) {
        depth += n;
        return;
    }
    if (!cas_take(me)) vm_iowait(S, try_take, &me, -1);
    depth = n;
}

static void release(void) {
    depth = 0;
    __atomic_store_n(&owner, 0, __ATOMIC_SEQ_CST);         /* A */
    if (__atomic_load_n(&nwait, __ATOMIC_SEQ_CST) > 0) {   /* B */
        pthread_mutex_lock(&mlock);
        pthread_cond_signal(&mfree);
        pthread_mutex_unlock(&mlock);
    }
}

int capi_unlock_all(State *S) {
    if (__atomic_load_n(&owner, __ATOMIC_RELAXED) != vm_thread_id(S)) return 0;
    int n = depth;
    release();
    return n;
}

void capi_relock(State *S, int n) {
    if (n > 0) acquire(S, vm_thread_id(S), n);
}

/* Where a continuation's results go (State.ktarget): the trampoline of the module function
 * running in [ci]. A protected trampoline (kcall) catches them as a VM_YIELD throw to its
 * ErrJmp [ej]; a direct one (kcall_direct) as a __builtin_longjmp to [jb]. */
struct CapiKTarget {
    CallInfo *ci;
    ErrJmp *ej;  /* NULL: jb */
    void *jb[5]; /* __builtin_setjmp's buffer */
};

typedef struct KCall {
    lua_CFunction f;
    int n;
    struct CapiKTarget *kt;
} KCall;

static void call_body(State *S, void *ud) {
    KCall *c = ud;
    c->kt->ej = S->errjmp; /* this protected call receives a continuation's results */
    S->ktarget = c->kt;
    c->n = c->f(capi_L(S));
}

/* Call [f] protected, so that an error gives the lock up ([locked]) and a continuation's
 * results thrown after a yield (capi_continue, VM_YIELD) come back here as [f]'s own. */
static int kcall(State *S, lua_CFunction f, bool locked) {
    if (locked) acquire(S, vm_thread_id(S), 1);
    struct CapiKTarget kt = {S->ci, NULL, {NULL}};
    KCall c = {f, 0, &kt};
    int status = vm_rawrunprotected(S, call_body, &c); /* puts S->ktarget back */
    if (status == VM_YIELD) {
        c.n = S->kresults;
    } else if (status != VM_OK) {
        /* this call's level only: the levels below are the callers' (a module function
         * whose API call ran a metamethod that pcalls this one). Every lua_call the
         * function made has taken its levels back, even one an error left (lua_callk). */
        if (locked && --depth == 0) release();
        vm_throw(S, status);
    }
    if (locked && --depth == 0) release();
    return c.n;
}

#if !VM_ASAN && !VM_TSAN
/* A function that may yield while a single language thread runs (no lock to give back on
 * an error): called under GCC's lightweight catch point instead of a protected call. Cost:
 * the registers this frame saves and three words, against glibc's setjmp and an ErrJmp
 * (a trivial module function in a coroutine: about 2x lua5.4's call through kcall). An
 * error unwinds past this frame to a protected call, which puts State.ktarget back.
 * Sanitizer builds use kcall: the sanitizers follow longjmp, not __builtin_longjmp. */
static __attribute__((noinline)) int kcall_direct(State *S, lua_CFunction f) {
    struct CapiKTarget kt = {S->ci, NULL, {NULL}};
    State *volatile vs = S; /* read after the jump back */
    struct CapiKTarget *volatile prev = S->ktarget;
    if (__builtin_setjmp(kt.jb)) {
        vs->ktarget = prev;
        return vs->kresults;
    }
    S->ktarget = &kt;
    int n = f(capi_L(S));
    S->ktarget = prev;
    return n;
}
#define KCALL_UNLOCKED(S, f) kcall_direct(S, f)
#else
#define KCALL_UNLOCKED(S, f) kcall(S, f, false)
#endif

/* The CFunction of every closure lua_pushcclosure makes: the module's function is in the
 * hidden slot after the upvalues (CAPI_FN). While a single language thread runs, a function
 * called where it cannot yield (the main coroutine: no C stack of its own; or below a call
 * from C that is not yieldable) is called at once: one load and two tests before the call. */
int capi_trampoline(State *S) {
    CClosure *cl = S->ci->func->u.cf;
    lua_CFunction f = (lua_CFunction)cl->upvals[cl->h.extra].u.p;
    if (__builtin_expect(!vm_table_threads_have_started(), 1)) {
        if (__builtin_expect(S->cstack == NULL || S->nny > 0, 1)) return f(capi_L(S));
        return KCALL_UNLOCKED(S, f);
    }
    return kcall(S, f, true);
}

int capi_kreturn(State *S, int n) {
    /* The target is the trampoline of the function running in S->ci: the module function
     * that called the API function calling this (a yield is possible only there, so that
     * trampoline set a target). */
    struct CapiKTarget *kt = S->ktarget;
    if (kt == NULL || kt->ci != S->ci) return n;
    S->kresults = n;
    if (kt->ej != NULL) vm_throw(S, VM_YIELD); /* kt->ej is S->errjmp: nothing lies between */
#if !VM_ASAN && !VM_TSAN
    __builtin_longjmp(kt->jb, 1);
#endif
    return n;
}

int capi_continue(State *S, lua_KFunction k, int status, lua_KContext ctx) {
    return capi_kreturn(S, k(capi_L(S), status, ctx));
}
