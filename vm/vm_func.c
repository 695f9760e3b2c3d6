/* vm_func.c: closures, upvalues and to-be-closed variables. */
#include <pthread.h>
#include <sched.h>

#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"

LClosure *vm_newlclosure(State *S, Proto *p) {
    LClosure *cl = vm_alloc(S, sizeof(LClosure) + (size_t)p->nupvals * sizeof(UpVal *));
    cl->h.type = VT_LFUNC;
    cl->p = p;
    return cl;
}

LClosure *vm_closure(State *S, const LClosure *cl, Proto *np) {
    LClosure *ncl = vm_newlclosure(S, np);
    /* the frame's registers: a stack moves only when it grows, never in a collection, so
     * base stays valid across the allocations here */
    Value *base = S->ci->func + 1;
    for (int j = 0; j < np->nupvals; j++) {
        const UpvalDesc *d = &np->upvals[j];
        ncl->upvals[j] = d->instack ? vm_findupval(S, base + d->idx) : cl->upvals[d->idx];
    }
    return ncl;
}

/* Find or create the open upvalue for stack slot [level]. The open list is sorted by level,
 * highest first, so the search stops at the first lower one. */
UpVal *vm_findupval(State *S, Value *level) {
    UpVal **pp = &S->openupval;
    UpVal *p;
    while ((p = *pp) != NULL && p->v >= level) {
        if (p->v == level) return p;
        pp = &p->next;
    }
    ptrdiff_t lo = vm_savestack(S, level);
    UpVal *uv = vm_alloc(S, sizeof(UpVal));
    level = vm_restorestack(S, lo);
    /* The allocation cannot move the stack, but it may run a collection: the list is
     * unchanged since we hold no lock, so relink from the saved position. */
    uv->h.type = VT_NIL;
    uv->v = level;
    uv->next = *pp;
    *pp = uv;
    return uv;
}

/* ======================================================================
 * Foreign accesses to open upvalues
 * ======================================================================
 * A closure that another thread runs may read or write an upvalue that is still open: its
 * value lives in a slot of the owner's stack. The owner closes the upvalue (copies the value
 * into uv->closed and points uv->v at it) and then reuses the slot for other variables (the
 * next iteration's loop variable), or moves its whole stack (realloc_stack). An accessor
 * that loaded uv->v just before would then read another variable, or write into it (TSan:
 * FORLOOP's store into the slot against another thread's GETUPVAL; tests/README.md,
 * "Sanitizers"). So an access to an upvalue open on another thread's stack (not
 * vm_upval_direct) and the owner's closing agree, as in Dekker's algorithm:
 *   accessor: lock; shared = 1 (seq_cst); if closing (seq_cst): unlock, wait until
 *             uv->v == &uv->closed and access the closed copy; else access *uv->v; unlock.
 *   owner:    closing = 1 (seq_cst); if shared (seq_cst): lock, copy, publish, unlock;
 *             else copy and publish without the lock.
 * In the single total order of the four seq_cst accesses at least one side sees the other's
 * flag: either the owner closes under the lock (after or before the accessor's whole access
 * to the slot, which the copy then carries over or which finds the closed copy), or the
 * accessor sees closing and touches only the closed copy, once it is published (release
 * store; acquire load). realloc_stack moves open upvalues under the lock. One lock for the
 * process: foreign accesses to open upvalues are rare (the window between a thread's spawn
 * and its spawner leaving the captured variable's scope). The owner's own accesses and
 * every access to a closed upvalue take no lock. */
static pthread_mutex_t foreign_lock = PTHREAD_MUTEX_INITIALIZER;

void vm_upval_lock(void) { pthread_mutex_lock(&foreign_lock); }
void vm_upval_unlock(void) { pthread_mutex_unlock(&foreign_lock); }

static const Value *access_whole(Value *p, Value *load, const Value *store) {
    if (load != NULL)
        vm_copyv(load, p);
    else
        vm_copyv(p, store);
    return p;
}

const Value *vm_upval_foreign(UpVal *u, Value *load, const Value *store) {
    pthread_mutex_lock(&foreign_lock);
    __atomic_store_n(&u->shared, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&u->closing, __ATOMIC_SEQ_CST)) {
        pthread_mutex_unlock(&foreign_lock); /* the owner may need it to publish */
        while (__atomic_load_n(&u->v, __ATOMIC_ACQUIRE) != &u->closed) sched_yield();
        return access_whole(&u->closed, load, store);
    }
    const Value *r = access_whole(__atomic_load_n(&u->v, __ATOMIC_ACQUIRE), load, store);
    pthread_mutex_unlock(&foreign_lock);
    return r;
}

/* Close open upvalues at or above [level]: copy the value in and point at the copy (see
 * "Foreign accesses" above for threads accessing them meanwhile). The copy is one 16-byte
 * load and store, and uv->v is published after it with a release store, so a thread that
 * sees the new pointer sees the copied value. */
void vm_closeupvals(State *S, Value *level) {
    UpVal *uv;
    while ((uv = S->openupval) != NULL && uv->v >= level) {
        S->openupval = uv->next;
        __atomic_store_n(&uv->closing, 1, __ATOMIC_SEQ_CST);
        bool locked = __atomic_load_n(&uv->shared, __ATOMIC_SEQ_CST) != 0;
        if (locked) pthread_mutex_lock(&foreign_lock);
        vm_copyv(&uv->closed, uv->v);
        __atomic_store_n(&uv->v, &uv->closed, __ATOMIC_RELEASE);
        if (locked) pthread_mutex_unlock(&foreign_lock);
    }
}

void vm_newtbc(State *S, Value *obj) {
    if (vm_isfalsy(obj)) return; /* false and nil need no closing */
    Table *mt = vm_metatable_of(S, obj);
    const Value *tm = mt ? vm_gettm(mt, TM_CLOSE, S->g->tmname[TM_CLOSE]) : NULL;
    if (tm == NULL) {
        int reg = (int)(obj - (S->ci->func + 1));
        const char *name = NULL;
        Proto *p = S->ci->func->u.lf->p;
        int pc = (int)(S->ci->savedpc - p->code) - 1;
        int n = 0;
        for (int i = 0; i < p->nlocvars && p->locvars[i].startpc <= pc; i++) {
            if (pc < p->locvars[i].endpc) {
                if (n == reg) name = p->locvars[i].name ? p->locvars[i].name->data : NULL;
                n++;
            }
        }
        vm_runerror(S, "variable '%s' got a non-closable value", name ? name : "?");
    }
    if (S->ntbc == S->tbccap) {
        int ncap = S->tbccap ? 2 * S->tbccap : 8;
        S->tbc = vm_realloc(S, S->tbc, (size_t)ncap * sizeof(ptrdiff_t));
        S->tbccap = ncap;
    }
    S->tbc[S->ntbc++] = vm_savestack(S, obj);
}

/* Call __close(obj, err) for one to-be-closed variable; [yieldable]: a coroutine may yield
 * inside even though a C function (pcall's error path) makes the call. A metamethod removed
 * after the declaration is called all the same, as lua5.4 does: the call of nil raises
 * "attempt to call a nil value (metamethod 'close')". */
static void calltbc(State *S, ptrdiff_t objoff, const Value *err, bool yieldable) {
    Value *obj = vm_restorestack(S, objoff);
    Table *mt = vm_metatable_of(S, obj);
    const Value *tm = mt ? vm_gettm(mt, TM_CLOSE, S->g->tmname[TM_CLOSE]) : NULL;
    Value e = err ? *err : vm_nil();
    vm_checkstack_fast(S, 3);
    obj = vm_restorestack(S, objoff);
    S->top[0] = tm ? vm_loadv(tm) : vm_nil(); /* a metatable slot: other threads may change it */
    S->top[1] = *obj;
    S->top[2] = e;
    S->top += 3;
    if (yieldable)
        vm_call_yieldable(S, S->top - 3, 0);
    else
        vm_call_value(S, S->top - 3, 0);
}

void vm_close_yieldable(State *S, Value *level, const Value *err, bool yieldable) {
    ptrdiff_t lo = vm_savestack(S, level);
    vm_closeupvals(S, level);
    while (S->ntbc > 0 && S->tbc[S->ntbc - 1] >= lo) {
        ptrdiff_t off = S->tbc[--S->ntbc];
        calltbc(S, off, err, yieldable);
        vm_closeupvals(S, vm_restorestack(S, lo));
    }
}

void vm_close(State *S, Value *level, const Value *err) { vm_close_yieldable(S, level, err, false); }
