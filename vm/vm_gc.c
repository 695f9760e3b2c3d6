/* vm_gc.c: Lua's collector semantics on the heap of gc/: weak tables, ephemerons, __gc
 * finalizers, warnings. gc/ provides weak blocks (traced by a hook, not scanned), a hook
 * that runs when marking is complete, its own marker for marking more in that hook, and a
 * finalization registry; this file says what a weak table's slots mean to them.
 *
 * Weak tables. A table whose metatable has a __mode with 'k' and/or 'v' when setmetatable
 * runs keeps its array and hash parts in weak blocks (vm_table_setweak). trace() marks what
 * such a block keeps alive:
 *   - strings, numbers and booleans are values, never weak (Lua's rule);
 *   - weak values (mode v): collectable non-string values are not marked;
 *   - weak keys (mode k): collectable non-string keys are not marked, and with strong values
 *     (an ephemeron table) a value is marked only once its key is: through the key's own
 *     reachability, never through the table;
 *   - dead nodes (value nil) keep their key for next() but mark nothing: the key may already
 *     have been freed (only its address is ever compared again).
 * When Boehm has finished marking, after_mark() runs lua5.4's atomic phase (lgc.c) on the
 * marks: converge the ephemerons (repeat until a pass marks nothing: a value marked may
 * make keys of other entries reachable), clear weak values that point at unmarked objects,
 * separate the unreachable objects marked for finalization and mark them with all they
 * reference (resurrection), converge again, clear weak keys that point at unmarked objects,
 * and clear weak values again (for tables reached only through resurrected objects). So,
 * as in lua5.4, an object being finalized is removed from weak values before its finalizer
 * runs and from weak keys only by a collection after it ran. Clearing a value turns the node
 * dead (or empties the array slot); clearing a key does the same to its node.
 *
 * Finalizers run later, on a language thread, where calling Lua code is safe: at every call
 * of a C function (precall in vm_call.c; the check is one load), after collectgarbage(),
 * and at the end of the program (vm_gc_close). One at a time in the whole process, in the
 * order the collector queued them (within one collection, most recently marked first). */
#include <stdio.h>
#include <string.h>

#include "vm_api.h"
#include "vm_do.h"
#include "vm_gc.h"
#include "vm_lib.h"
#include "vm_warn.h"

/* Collectable values that weak references can lose: tables, functions, full userdata,
 * coroutines (ORDER VT). Strings are values; everything below VT_STR is not an object. */
static inline bool weakable(uint32_t tt) { return tt >= VT_TABLE && tt <= VT_THREAD; }

static inline uint32_t min32(uint32_t a, size_t b) { return b < a ? (uint32_t)b : a; }

/* The array block [b] of [bytes] bytes (its header says how many slots it has; the
 * allocation bounds that, in case the block is not what its header claims). */
static inline uint32_t arrslots(const TabArr *a, size_t bytes) {
    return min32(a->size, (bytes - sizeof(TabArr)) / sizeof(Value));
}
static inline uint32_t nodecount(const TabNodes *b, size_t bytes) {
    return min32(b->mask + 1, (bytes - sizeof(TabNodes)) / sizeof(Node));
}

/* Is [v] an object the collector has not marked (so a weak reference to it goes)? */
static inline bool dying(const Value *v) { return weakable(v->tt) && !gc_is_marked(v->u.p); }

static void trace(void *blk, size_t bytes, GcMarker *m) {
    TabArr *a = blk;
    if ((a->weak & VM_WEAKMAGIC) == VM_WEAKARR) {
        bool wv = a->weak & VM_WEAKV;
        uint32_t n = arrslots(a, bytes);
        for (uint32_t i = 0; i < n; i++) {
            const Value *v = &a->v[i];
            if (v->tt < VT_STR || (wv && weakable(v->tt))) continue;
            gc_mark_slot(m, &v->u.p);
        }
        return;
    }
    TabNodes *b = blk;
    if ((b->weak & VM_WEAKMAGIC) != VM_WEAKNODES) return; /* a free block: nothing in it */
    uint32_t mode = b->weak & (VM_WEAKK | VM_WEAKV);
    uint32_t n = nodecount(b, bytes);
    for (uint32_t i = 0; i < n; i++) {
        const Node *nd = &b->n[i];
        if (nd->val.tt == VT_NIL) continue; /* empty or dead */
        bool kweak = (mode & VM_WEAKK) && weakable(nd->key.tt);
        if (nd->key.tt >= VT_STR && !kweak) gc_mark_slot(m, &nd->key.u.p);
        if (nd->val.tt < VT_STR || ((mode & VM_WEAKV) && weakable(nd->val.tt))) continue;
        /* ephemeron: the value lives if the key does (after_mark retries keys marked later) */
        if (kweak && !gc_is_marked(nd->key.u.p)) continue;
        gc_mark_slot(m, &nd->val.u.p);
    }
}

/* One pass over an ephemeron block: mark the values whose keys are marked by now. */
static void ephemeron_pass(void *blk, size_t bytes, GcMarker *m, void *arg) {
    (void)arg;
    TabNodes *b = blk;
    if (b->weak == (VM_WEAKNODES | VM_WEAKK)) trace(blk, bytes, m);
}

static void converge(GcMarker *m) {
    uint64_t before;
    do {
        before = gc_marked_count(m);
        gc_weak_each(m, ephemeron_pass, NULL);
    } while (gc_marked_count(m) != before);
}

/* The world is stopped: plain stores, no counts but the block's own. */
static void clear_values(void *blk, size_t bytes, GcMarker *m, void *arg) {
    (void)m, (void)arg;
    TabArr *a = blk;
    if ((a->weak & VM_WEAKMAGIC) == VM_WEAKARR) {
        if (!(a->weak & VM_WEAKV)) return;
        uint32_t n = arrslots(a, bytes);
        for (uint32_t i = 0; i < n; i++)
            if (dying(&a->v[i])) a->v[i] = vm_nil();
        return;
    }
    TabNodes *b = blk;
    if ((b->weak & VM_WEAKMAGIC) != VM_WEAKNODES || !(b->weak & VM_WEAKV)) return;
    uint32_t n = nodecount(b, bytes);
    for (uint32_t i = 0; i < n; i++) {
        Node *nd = &b->n[i];
        if (nd->val.tt != VT_NIL && dying(&nd->val)) {
            nd->val = vm_nil(); /* the node turns dead: its key stays for next() */
            b->live--;
        }
    }
}

static void clear_keys(void *blk, size_t bytes, GcMarker *m, void *arg) {
    (void)m, (void)arg;
    TabNodes *b = blk;
    if ((b->weak & VM_WEAKMAGIC) != VM_WEAKNODES || !(b->weak & VM_WEAKK)) return;
    uint32_t n = nodecount(b, bytes);
    for (uint32_t i = 0; i < n; i++) {
        Node *nd = &b->n[i];
        if (nd->val.tt != VT_NIL && dying(&nd->key)) {
            nd->val = vm_nil();
            b->live--;
        }
    }
}

/* lua5.4's atomic phase (lgc.c, atomic()), on the marks Boehm left. */
static void after_mark(GcMarker *m) {
    converge(m);
    gc_weak_each(m, clear_values, NULL);
    if (gc_fin_separate(m) > 0) converge(m);
    gc_weak_each(m, clear_keys, NULL);
    gc_weak_each(m, clear_values, NULL);
}

void vm_gc_init(void) {
    static const GcHooks h = {trace, after_mark};
    gc_set_hooks(&h);
}

/* ---- metatables ------------------------------------------------------------------------ */

/* lua_close has begun: nothing is marked for finalization any more (lua5.4's GCSTPCLS). */
static bool closing;

static uint32_t mode_of(State *S, Table *mt) {
    if (mt == NULL) return 0;
    Value mode = vm_loadv(vm_table_getstr(mt, S->g->tmname[TM_MODE]));
    if (mode.tt != VT_STR) return 0;
    return (strchr(mode.u.s->data, 'k') ? VM_WEAKK : 0) | (strchr(mode.u.s->data, 'v') ? VM_WEAKV : 0);
}

void vm_gc_setmetatable(State *S, const Value *o, Table *mt) {
    ObjHeader *h;
    if (o->tt == VT_TABLE) {
        Table *t = o->u.t;
        vm_table_setweak(S, t, mode_of(S, mt)); /* may allocate: before the metatable is set */
        t->meta = mt;
        h = &t->h;
    } else if (o->tt == VT_USERDATA) {
        o->u.u->meta = mt;
        h = &o->u.u->h;
    } else {
        return;
    }
    if (mt == NULL || __atomic_load_n(&closing, __ATOMIC_RELAXED) || (h->extra & VM_TOFINALIZE)) return;
    if (vm_table_getstr(mt, S->g->tmname[TM_GC])->tt == VT_NIL) return;
    h->extra |= VM_TOFINALIZE;
    gc_fin_register(h);
}

/* ---- finalizers ------------------------------------------------------------------------ */

static int fin_running; /* one runner in the process, as lua5.4 runs no finalizer in another */

/* lua5.4's luaE_warnerror(L, "__gc") */
static void warn_error(State *S) { vm_warn_error(S, "__gc", S->top - 1); }

typedef struct FinCall {
    Value f, o;
} FinCall;

/* Above everything live (the caller guarantees S->top is), not yieldable (vm_pcall): a
 * finalizer runs inside whatever call reached it. */
static void f_fincall(State *S, void *ud) {
    FinCall *c = ud;
    if (!vm_isfunction(&c->f)) {
        /* lua5.4 names the metamethod in the call error (its CIST_FIN frame); Tandem's call
         * error names only metamethods that Lua instructions call */
        Table *mt = vm_metatable_of(S, &c->f);
        const Value *call = mt ? vm_gettm(mt, TM_CALL, S->g->tmname[TM_CALL]) : NULL;
        if (call == NULL || vm_isnil(call)) {
            vm_pushfstring(S, "attempt to call a %s value (metamethod '__gc')", vm_objtypename(S, &c->f));
            warn_error(S);
            return;
        }
    }
    vm_push(S, c->f);
    vm_push(S, c->o);
    if (vm_pcall(S, 1, 0) != VM_OK) warn_error(S);
}

void vm_gc_run_finalizers(State *S) {
    if (__atomic_exchange_n(&fin_running, 1, __ATOMIC_ACQUIRE)) return;
    ObjHeader *h;
    while ((h = gc_fin_next()) != NULL) {
        /* no longer marked: a finalizer that sets the metatable again marks it again */
        h->extra &= (uint16_t)~VM_TOFINALIZE;
        Value o;
        Table *mt;
        if (h->type == VT_TABLE) {
            o = vm_table((Table *)h);
            mt = ((Table *)h)->meta;
        } else {
            o = vm_userdata((Userdata *)h);
            mt = ((Userdata *)h)->meta;
        }
        if (mt == NULL) continue;
        Value f = vm_loadv(vm_table_getstr(mt, S->g->tmname[TM_GC]));
        if (f.tt == VT_NIL) continue; /* removed since: nothing to call, as lua5.4 */
        ptrdiff_t to = vm_savestack(S, S->top);
        FinCall c = {f, o};
        vm_protect(S, f_fincall, &c); /* "not enough memory" pushing them: skipped */
        S->top = vm_restorestack(S, to);
    }
    __atomic_store_n(&fin_running, 0, __ATOMIC_RELEASE);
}

void vm_gc_close(State *S) {
    __atomic_store_n(&closing, true, __ATOMIC_RELAXED);
    vm_gc_run_finalizers(S); /* the ones already found unreachable first */
    gc_fin_all();
    vm_gc_run_finalizers(S);
}

__attribute__((noinline)) void vm_scrub_stack(void) {
    volatile uint64_t area[2048]; /* 16 KB: deeper than the call chain of a collection */
    for (size_t i = 0; i < sizeof area / sizeof area[0]; i++) area[i] = 0;
}

