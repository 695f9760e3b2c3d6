/* test_table.c: unit tests of vm_table.c: raw get/set for every key type, normalisation,
 * array migration, random operations against a reference, traversal and borders. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_state.h"
#include "vm_string.h"
#include "vm_table.h"

static State *S;

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* xorshift64*: deterministic pseudo-random numbers */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}
static unsigned rndn(unsigned n) { return (unsigned)(rnd() % n); }

static Value strv(const char *s) { return vm_str(vm_string_newc(S, s)); }

static void check_table(const Table *t) {
    const char *msg = vm_table_check(t);
    if (msg != NULL) fail_msg("vm_table_check: %s", msg);
}

/* Protected store: NULL on success, else the error message (static copy). */
typedef struct {
    Table *t;
    Value k, v;
} SetArgs;

static void do_set(State *L, void *ud) {
    SetArgs *a = ud;
    vm_table_set(L, a->t, &a->k, &a->v);
}

static void do_next(State *L, void *ud) {
    SetArgs *a = ud;
    vm_table_next(L, a->t, &a->k, &a->v);
}

static const char *protected_call(void (*f)(State *, void *), SetArgs *a) {
    static char msg[256];
    Value *top = S->top;
    int status = vm_protect(S, f, a);
    if (status == VM_OK) return NULL;
    const Value *e = &S->top[-1];
    snprintf(msg, sizeof msg, "%s", e->tt == VT_STR ? e->u.s->data : "(not a string)");
    S->top = top;
    return msg;
}

/* ======================================================================
 * Key universe for the randomised tests
 * ======================================================================
 * Key ids 0 .. NKEYS-1 map to values of every key type; canon() maps an id to the id of
 * the key it equals (float 5.0 is integer 5). String keys are new String objects on every
 * call, so lookups must compare bytes. */
enum {
    K_INT = 0,        /* ints -100 .. 499 */
    K_STR = 600,      /* "s600" .. */
    K_FLT = 1100,     /* id + 0.5 */
    K_FLTINT = 1200,  /* float (id - 1200): same key as int (id - 1200) */
    K_TRUE = 1300,
    K_FALSE = 1301,
    K_LUD = 1302,     /* light userdata */
    K_TAB = 1332,     /* tables */
    K_BIG = 1362,     /* ints +-2^40 + id */
    NKEYS = 1462
};

static Table *keytabs[NKEYS - K_TAB];

static Value key_of(int id) {
    char buf[32];
    if (id < K_STR) return vm_int(id - 100);
    if (id < K_FLT) {
        snprintf(buf, sizeof buf, "s%d", id);
        return strv(buf);
    }
    if (id < K_FLTINT) return vm_float(id + 0.5);
    if (id < K_TRUE) return vm_float((double)(id - K_FLTINT));
    if (id == K_TRUE) return vm_bool(true);
    if (id == K_FALSE) return vm_bool(false);
    if (id < K_TAB) return vm_lightud((void *)(uintptr_t)(16 * (id + 1)));
    if (id < K_BIG) return vm_table(keytabs[id - K_TAB]);
    vm_Integer big = (vm_Integer)1 << 40;
    return vm_int(id % 2 ? big + id : -big - id);
}

static int canon(int id) {
    if (id >= K_FLTINT && id < K_TRUE) return (id - K_FLTINT) + 100;
    return id;
}

static void make_keytabs(void) {
    for (int i = 0; i < NKEYS - K_TAB; i++)
        if (keytabs[i] == NULL) keytabs[i] = vm_table_new(S, 0, 0);
}

/* Canonical id of a key returned by next(), or -1. */
static int id_of_key(const Value *k) {
    switch (k->tt) {
    case VT_INT:
        if (k->u.i >= -100 && k->u.i < 500) return (int)k->u.i + 100;
        for (int id = K_BIG; id < NKEYS; id++)
            if (key_of(id).u.i == k->u.i) return id;
        return -1;
    case VT_STR: return atoi(k->u.s->data + 1);
    case VT_FLOAT: return (int)(k->u.n - 0.5);
    case VT_TRUE: return K_TRUE;
    case VT_FALSE: return K_FALSE;
    case VT_LIGHTUD: return (int)((uintptr_t)k->u.p / 16) - 1;
    case VT_TABLE:
        for (int i = 0; i < NKEYS - K_TAB; i++)
            if (keytabs[i] == k->u.t) return K_TAB + i;
        return -1;
    default: return -1;
    }
}

/* Check every key of [t] against the reference ref[canon id] (0: absent) and check that a
 * traversal sees exactly the live keys, once each. */
static void check_against(Table *t, const vm_Integer *ref) {
    check_table(t);
    uint32_t live = 0;
    for (int id = 0; id < NKEYS; id++) {
        Value k = key_of(id);
        const Value *v = vm_table_get(t, &k);
        vm_Integer want = ref[canon(id)];
        if (want == 0) {
            if (v->tt != VT_NIL) fail_msg("key id %d: expected nil, got tag %u", id, v->tt);
        } else {
            if (v->tt != VT_INT || v->u.i != want) fail_msg("key id %d: expected %lld", id, (long long)want);
        }
        if (id == canon(id) && want != 0) live++;
    }
    static unsigned char seen[NKEYS];
    memset(seen, 0, sizeof seen);
    uint32_t n = 0;
    Value k = vm_nil(), v;
    while (vm_table_next(S, t, &k, &v)) {
        int id = id_of_key(&k);
        assert_true(id >= 0 && id < NKEYS);
        assert_int_equal(id, canon(id));   /* integral floats come back as integers */
        assert_int_equal(seen[id], 0);
        seen[id] = 1;
        assert_int_equal(v.tt, VT_INT);
        assert_int_equal(v.u.i, ref[id]);
        n++;
    }
    assert_int_equal(n, live);
}

/* ======================================================================
 * Basic operations
 * ====================================================================== */

static void test_vm_table_new_is_empty(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    assert_int_equal(t->h.type, VT_TABLE);
    assert_null(t->meta);
    check_table(t);
    Value k = vm_int(1);
    assert_ptr_equal(vm_table_get(t, &k), &vm_absent);
    assert_int_equal(vm_absent.tt, VT_NIL);
    assert_int_equal(vm_table_len(t), 0);
    Table *u = vm_table_new(S, 10, 10);
    assert_true(vm_table_asize(u) >= 10);
    assert_true(vm_table_hcap(u) >= 10);
    check_table(u);
    Value kk = vm_nil(), vv;
    assert_false(vm_table_next(S, u, &kk, &vv));
}

static void test_vm_table_set_every_key_type(void **state) {
    (void)state;
    make_keytabs();
    Table *t = vm_table_new(S, 0, 0);
    Value keys[] = {
        vm_int(1), vm_int(0), vm_int(-7), vm_int(VM_MAXINTEGER), vm_int(VM_MININTEGER),
        vm_float(1.5), vm_float(-1e300), vm_float(1.0 / 0.0), vm_float(-1.0 / 0.0),
        strv("x"), strv(""), vm_str(vm_string_new(S, "a\0b", 3)), vm_bool(true), vm_bool(false),
        vm_lightud((void *)0x1000), vm_table(keytabs[0]), vm_table(t),
    };
    int n = (int)(sizeof keys / sizeof keys[0]);
    for (int i = 0; i < n; i++) {
        Value v = vm_int(100 + i);
        vm_table_set(S, t, &keys[i], &v);
        check_table(t);
    }
    for (int i = 0; i < n; i++) {
        const Value *v = vm_table_get(t, &keys[i]);
        assert_int_equal(v->tt, VT_INT);
        assert_int_equal(v->u.i, 100 + i);
    }
    /* equal keys that are different objects or representations */
    Value x2 = strv("x"), ab2 = vm_str(vm_string_new(S, "a\0b", 3)), a = strv("a");
    assert_int_equal(vm_table_get(t, &x2)->u.i, 100 + 9);
    assert_int_equal(vm_table_get(t, &ab2)->u.i, 100 + 11);
    assert_int_equal(vm_table_get(t, &a)->tt, VT_NIL);   /* "a" is a prefix of "a\0b" */
    assert_int_equal(vm_table_getstr(t, x2.u.s)->u.i, 100 + 9);
    Value other = vm_table(keytabs[1]);
    assert_int_equal(vm_table_get(t, &other)->tt, VT_NIL);
    Value lud2 = vm_lightud((void *)0x1001);
    assert_int_equal(vm_table_get(t, &lud2)->tt, VT_NIL);
    /* removal */
    Value nil = vm_nil();
    for (int i = 0; i < n; i += 2) vm_table_set(S, t, &keys[i], &nil);
    check_table(t);
    for (int i = 0; i < n; i++) {
        const Value *v = vm_table_get(t, &keys[i]);
        if (i % 2 == 0)
            assert_int_equal(v->tt, VT_NIL);
        else
            assert_int_equal(v->u.i, 100 + i);
    }
    /* removed keys come back */
    for (int i = 0; i < n; i += 2) {
        Value v = vm_int(-i);
        vm_table_set(S, t, &keys[i], &v);
    }
    check_table(t);
    for (int i = 0; i < n; i += 2) assert_int_equal(vm_table_get(t, &keys[i])->u.i, -i);
}

static void test_vm_table_get_float_keys_normalised(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    Value one = vm_int(42);
    Value k = vm_float(3.0);
    vm_table_set(S, t, &k, &one);
    assert_int_equal(vm_table_getint(t, 3)->u.i, 42);
    Value big = vm_float(9007199254740992.0);   /* 2^53 */
    vm_table_set(S, t, &big, &one);
    assert_int_equal(vm_table_getint(t, (vm_Integer)1 << 53)->u.i, 42);
    Value negz = vm_float(-0.0);
    Value two = vm_int(2);
    vm_table_set(S, t, &negz, &two);
    assert_int_equal(vm_table_getint(t, 0)->u.i, 2);
    Value pz = vm_float(0.0);
    assert_int_equal(vm_table_get(t, &pz)->u.i, 2);
    Value p63 = vm_float(9223372036854775808.0);   /* 2^63: not an integer key */
    vm_table_set(S, t, &p63, &two);
    assert_int_equal(vm_table_get(t, &p63)->u.i, 2);
    assert_int_equal(vm_table_getint(t, VM_MININTEGER)->tt, VT_NIL);
    Value m63 = vm_float(-9223372036854775808.0);  /* -2^63 is mininteger */
    vm_table_set(S, t, &m63, &one);
    assert_int_equal(vm_table_getint(t, VM_MININTEGER)->u.i, 42);
    check_table(t);
    /* traversal gives integer keys back */
    int nints = 0, nfloats = 0;
    Value kk = vm_nil(), vv;
    while (vm_table_next(S, t, &kk, &vv)) {
        if (kk.tt == VT_INT) nints++;
        if (kk.tt == VT_FLOAT) nfloats++;
    }
    assert_int_equal(nints, 4);
    assert_int_equal(nfloats, 1);
}

static void test_vm_table_set_nil_and_nan_keys_raise(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    SetArgs a = {t, vm_nil(), vm_int(1)};
    assert_string_equal(protected_call(do_set, &a), "table index is nil");
    a.v = vm_nil();
    assert_string_equal(protected_call(do_set, &a), "table index is nil");
    volatile double z = 0.0;
    a.k = vm_float(z / z);
    a.v = vm_int(1);
    assert_string_equal(protected_call(do_set, &a), "table index is NaN");
    a.v = vm_nil();
    assert_string_equal(protected_call(do_set, &a), "table index is NaN");
    /* lookups of such keys just find nothing */
    assert_int_equal(vm_table_get(t, &a.k)->tt, VT_NIL);
    Value nil = vm_nil();
    assert_int_equal(vm_table_get(t, &nil)->tt, VT_NIL);
    check_table(t);
}

static void test_vm_table_set_nil_on_absent_key_adds_nothing(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    Value nil = vm_nil();
    for (int i = 0; i < 100; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "k%d", i);
        Value k = strv(buf);
        vm_table_set(S, t, &k, &nil);
        vm_table_setint(S, t, i + 1000, &nil);
    }
    assert_int_equal(vm_table_hcap(t), 0);
    assert_int_equal(vm_table_asize(t), 0);
    check_table(t);
}

static void test_vm_table_slot_present_only(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 4, 4);
    Value v = vm_int(5), k = vm_int(2), ks = strv("name"), nil = vm_nil();
    assert_null(vm_table_slot(t, &k));
    assert_null(vm_table_slotstr(t, ks.u.s));
    vm_table_set(S, t, &k, &v);
    vm_table_set(S, t, &ks, &v);
    Value *p = vm_table_slot(t, &k);
    assert_non_null(p);
    *p = vm_int(6);
    assert_int_equal(vm_table_getint(t, 2)->u.i, 6);
    Value *q = vm_table_slotstr(t, strv("name").u.s);
    assert_non_null(q);
    *q = vm_int(7);
    assert_int_equal(vm_table_get(t, &ks)->u.i, 7);
    assert_ptr_equal(vm_table_slot(t, &ks), q);
    vm_table_set(S, t, &ks, &nil);
    assert_null(vm_table_slotstr(t, ks.u.s));   /* dead key: no slot */
    assert_null(vm_table_slot(t, &nil));
}

static void test_vm_table_set_new_key_clears_flags(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    Value k = strv("__index"), v = vm_int(1), nil = vm_nil();
    vm_table_set(S, t, &k, &v);
    t->h.flags = 0xff;
    vm_table_set(S, t, &k, &v);   /* existing key: cache stays */
    assert_int_equal(t->h.flags, 0xff);
    vm_table_set(S, t, &k, &nil);
    t->h.flags = 0xff;
    vm_table_set(S, t, &k, &v);   /* dead key coming back is a new key */
    assert_int_equal(t->h.flags, 0);
    t->h.flags = 0xff;
    Value k2 = strv("__newindex");
    vm_table_set(S, t, &k2, &v);
    assert_int_equal(t->h.flags, 0);
}

/* The key filter (TabNodes.keys): every key placed in a block, dead ones included, has its
 * bit, through insertions, dead keys coming back and rehashes (vm_table_check checks it);
 * a key whose bit is clear is absent, and a lookup of it says so. */
static void test_vm_table_key_filter_covers_every_key(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    assert_int_equal(vm_table_nodes(t)->keys, 0);
    Value v = vm_int(1), nil = vm_nil();
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "f%d", i);
        Value k = strv(name);
        vm_table_set(S, t, &k, &v);
        if (i % 3 == 0) vm_table_set(S, t, &k, &nil); /* dead: keeps its bit */
        check_table(t);
    }
    /* a fresh small table: keys whose bits are clear are absent, whatever their node */
    Table *u = vm_table_new(S, 0, 0);
    Value a = strv("alpha");
    vm_table_set(S, u, &a, &v);
    int absent_by_filter = 0;
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "g%d", i);
        String *s = vm_string_newc(S, name);
        const TabNodes *b = vm_table_nodes(u);
        if (!vm_table_maybe_has(b, vm_string_hash(s))) {
            absent_by_filter++;
            assert_ptr_equal(vm_table_getstr(u, s), &vm_absent);
        }
    }
    assert_true(absent_by_filter > 150); /* one key: 1 bit of 64 set */
    assert_true(vm_table_maybe_has(vm_table_nodes(u), vm_string_hash(a.u.s)));
}

/* vm_table_getstr_at's position: hash + the nodes stepped over, only for the String itself;
 * masked, it names the key's node in blocks of any size while the key stays at home. */
static void test_vm_table_getstr_at_positions(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    Value v = vm_int(1);
    String *keys[12];
    char name[32];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "p%d", i);
        keys[i] = vm_string_newc(S, name);
        Value k = vm_str(keys[i]);
        vm_table_set(S, t, &k, &v);
    }
    const TabNodes *b = vm_table_nodes(t);
    for (int i = 0; i < 12; i++) {
        uint32_t pos = 7;
        const Value *slot = vm_table_getstr_at(t, keys[i], &pos);
        const Node *n = &b->n[pos & b->mask];
        assert_ptr_equal(slot, &n->val);
        assert_ptr_equal(n->key.u.s, keys[i]);
        uint32_t d = pos - vm_string_hash(keys[i]);
        assert_true(d <= b->mask);
        /* another String of the same bytes: found, position untouched */
        uint32_t other = 7;
        assert_ptr_equal(vm_table_getstr_at(t, vm_string_newc(S, keys[i]->data), &other), slot);
        assert_int_equal(other, 7);
    }
    uint32_t none = 9;
    assert_ptr_equal(vm_table_getstr_at(t, vm_string_newc(S, "absent"), &none), &vm_absent);
    assert_int_equal(none, 9);
}

/* A lookup that combines an older, smaller t->hmask with the current node block (a resize
 * between its two loads, or one that has published its block and not yet raised t->hmask:
 * vm_table_hpart) still finds every key the block holds: the probe that ends without the key
 * goes again with the block's own mask. Before, it wrapped within the first hmask + 1 nodes
 * and missed keys placed beyond them: a field never removed read as nil. Here every older
 * mask a grown table has had is put back by hand. */
static void test_vm_table_lookup_with_an_older_mask(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    enum { NKEYS = 40 };
    String *keys[NKEYS];
    char name[32];
    for (int i = 0; i < NKEYS; i++) {
        snprintf(name, sizeof name, "m%d", i);
        keys[i] = vm_string_newc(S, name);
        Value k = vm_str(keys[i]), v = vm_int(i);
        vm_table_set(S, t, &k, &v);
        Value ik = vm_int(1000003 * (vm_Integer)(i + 1)), iv = vm_int(-i); /* hash part */
        vm_table_set(S, t, &ik, &iv);
    }
    const TabNodes *b = vm_table_nodes(t);
    uint32_t full = t->hmask;
    assert_int_equal(full, b->mask);
    assert_true(full >= 63);
    String *absent = vm_string_newc(S, "not a key");
    int moved = 0; /* keys a probe with the older mask alone would have missed */
    for (uint32_t m = 0; m < full; m = 2 * m + 1) {
        t->hmask = m;
        for (int i = 0; i < NKEYS; i++) {
            uint32_t pos = 1;
            const Value *slot = vm_table_getstr_at(t, keys[i], &pos);
            assert_int_equal(slot->tt, VT_INT);
            assert_int_equal(slot->u.i, i);
            assert_ptr_equal(b->n[pos & b->mask].key.u.s, keys[i]); /* a position in this block */
            const Value *islot = vm_table_getint(t, 1000003 * (vm_Integer)(i + 1));
            assert_int_equal(islot->tt, VT_INT);
            assert_int_equal(islot->u.i, -i);
            if ((vm_string_hash(keys[i]) & b->mask) > m) moved++;
        }
        assert_ptr_equal(vm_table_getstr(t, absent), &vm_absent);
        assert_ptr_equal(vm_table_getint(t, 7), &vm_absent);
    }
    t->hmask = full;
    assert_true(moved > 0);
    check_table(t);
}

/* A resize that grows the array part over integer keys of the hash part publishes its node
 * block before its array block: a reader between the two stores pairs the old array block with
 * the new node block, and before the fix found a key that was never removed in neither part.
 * vm_table_getint now goes again until the array block the node block names is out, and gives
 * up (absent) when it never comes (a safety net). The window is put back by hand: the old
 * array block (which the resize gave back) is rebuilt, and a thread publishes the new one
 * 20 ms later, as the resizing thread's second store would. */
typedef struct PublishLater {
    Table *t;
    TabArr *a;
} PublishLater;

static void *publish_later(void *p) {
    PublishLater *pl = p;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    __atomic_store_n(&pl->t->arr, pl->a, __ATOMIC_RELEASE);
    return NULL;
}

static void test_vm_table_getint_between_a_resizes_two_stores(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 4, 4);
    for (vm_Integer i = 1; i <= 6; i++) {
        Value k = vm_int(i), v = vm_int(10 * i);
        vm_table_set(S, t, &k, &v);
    }
    assert_int_equal(vm_table_asize(t), 4);   /* 5 and 6 are in the hash part */
    TabArr *old = aligned_alloc(16, sizeof(TabArr) + 4 * sizeof(Value));
    memset(old, 0, sizeof(TabArr));
    old->size = 4;
    memcpy(old->v, vm_table_arr(t)->v, 4 * sizeof(Value));
    vm_table_reserve(S, t, 8, 0);            /* 5 and 6 move into the array part */
    TabArr *grown = vm_table_arr(t);
    assert_int_equal(grown->size, 8);
    assert_int_equal(vm_table_nodes(t)->asize, 8);

    t->arr = old;   /* between the resize's two stores */
    PublishLater pl = {t, grown};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, publish_later, &pl), 0);
    const Value *v = vm_table_getint(t, 5);
    assert_int_equal(v->tt, VT_INT);
    assert_int_equal(v->u.i, 50);
    pthread_join(th, NULL);
    assert_ptr_equal(vm_table_arr(t), grown);

    t->arr = old;   /* a node block whose array block never comes (the net: 100 ms): absent */
    assert_ptr_equal(vm_table_getint(t, 6), &vm_absent);
    assert_ptr_equal(vm_table_getint(t, 9), &vm_absent);      /* beyond asize: at once */
    assert_int_equal(vm_table_getint(t, 3)->u.i, 30);         /* the old block's own keys */
    t->arr = grown;
    free(old);
    check_table(t);
}

/* ======================================================================
 * Array part
 * ====================================================================== */

static void test_vm_table_setint_in_order_ends_in_array(void **state) {
    (void)state;
    enum { N = 100000 };
    Table *t = vm_table_new(S, 0, 0);
    for (vm_Integer i = 1; i <= N; i++) {
        Value v = vm_int(i * 3);
        vm_table_setint(S, t, i, &v);
    }
    check_table(t);
    assert_true(vm_table_asize(t) >= N && vm_table_asize(t) <= 2 * N);
    assert_int_equal(vm_table_hlive(t), 0);
    assert_int_equal(vm_table_len(t), N);
    for (vm_Integer i = 1; i <= N; i++) assert_int_equal(vm_table_getint(t, i)->u.i, i * 3);
}

static void test_vm_table_setint_reverse_ends_in_array(void **state) {
    (void)state;
    enum { N = 50000 };
    Table *t = vm_table_new(S, 0, 0);
    for (vm_Integer i = N; i >= 1; i--) {
        Value v = vm_int(i);
        vm_table_setint(S, t, i, &v);
    }
    check_table(t);
    assert_true(vm_table_asize(t) >= N);
    assert_int_equal(vm_table_hlive(t), 0);
    assert_int_equal(vm_table_len(t), N);
    for (vm_Integer i = 1; i <= N; i++) assert_int_equal(vm_table_getint(t, i)->u.i, i);
}

static void test_vm_table_len_append_loop(void **state) {
    (void)state;
    enum { N = 200000 };
    Table *t = vm_table_new(S, 0, 0);
    Value s = strv("n");   /* a hash part beside the sequence */
    Value one = vm_int(1);
    vm_table_set(S, t, &s, &one);
    for (int i = 0; i < N; i++) {
        Value v = vm_int(i);
        vm_table_setint(S, t, (vm_Integer)vm_table_len(t) + 1, &v);
    }
    check_table(t);
    assert_int_equal(vm_table_len(t), N);
    assert_int_equal(vm_table_hlive(t), 1);
    assert_true(vm_table_asize(t) >= N && vm_table_asize(t) <= 2 * N);
    /* pop everything with t[#t] = nil */
    Value nil = vm_nil();
    for (int i = N; i > 0; i--) {
        assert_int_equal(vm_table_len(t), (vm_Unsigned)i);
        vm_table_setint(S, t, i, &nil);
    }
    assert_int_equal(vm_table_len(t), 0);
}

static void test_vm_table_set_float_keys_fill_array(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    for (int i = 1; i <= 1000; i++) {
        Value k = vm_float(i), v = vm_int(i);
        vm_table_set(S, t, &k, &v);
    }
    check_table(t);
    assert_true(vm_table_asize(t) >= 1000);
    assert_int_equal(vm_table_hlive(t), 0);
    assert_int_equal(vm_table_len(t), 1000);
}

static void test_vm_table_reserve_keeps_contents(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 4);
    Value v = vm_int(9);
    for (int i = 1; i <= 3; i++) vm_table_setint(S, t, i * 10, &v);   /* sparse: hash part */
    Value ks = strv("a");
    vm_table_set(S, t, &ks, &v);
    vm_table_reserve(S, t, 40, 100);
    check_table(t);
    assert_true(vm_table_asize(t) >= 40);
    assert_true(vm_table_hcap(t) >= 100);
    for (int i = 1; i <= 3; i++) assert_int_equal(vm_table_getint(t, i * 10)->u.i, 9);
    assert_int_equal(vm_table_get(t, &ks)->u.i, 9);
    assert_int_equal(vm_table_hlive(t), 1);   /* the integer keys moved to the array part */
}

/* ======================================================================
 * Borders
 * ====================================================================== */

static void assert_border(Table *t) {
    vm_Unsigned n = vm_table_len(t);
    if (n > 0) assert_int_not_equal(vm_table_getint(t, (vm_Integer)n)->tt, VT_NIL);
    assert_int_equal(vm_table_getint(t, (vm_Integer)n + 1)->tt, VT_NIL);
}

static void test_vm_table_len_sequences(void **state) {
    (void)state;
    for (int n = 0; n <= 300; n++) {
        Table *a = vm_table_new(S, 0, 0);
        Table *b = vm_table_new(S, (uint32_t)n, 0);
        Table *c = vm_table_new(S, 0, 0);
        Table *d = vm_table_new(S, 2, 512);   /* integer keys beyond the array go to the hash part */
        for (int i = 1; i <= n; i++) {
            Value v = vm_int(i);
            vm_table_setint(S, a, i, &v);
            vm_table_setint(S, b, i, &v);
            vm_table_setint(S, c, n + 1 - i, &v);
            vm_table_setint(S, d, i, &v);
        }
        assert_int_equal(vm_table_len(a), n);
        assert_int_equal(vm_table_len(b), n);
        assert_int_equal(vm_table_len(c), n);
        assert_int_equal(vm_table_len(d), n);
        check_table(d);
    }
    Table *d = vm_table_new(S, 4, 64);
    Value v = vm_int(1);
    for (int i = 1; i <= 40; i++) vm_table_setint(S, d, i, &v);
    assert_int_equal(vm_table_asize(d), 4);   /* the hash part had room: 5..40 live there */
    assert_int_equal(vm_table_len(d), 40);
}

static void test_vm_table_len_with_holes_is_a_border(void **state) {
    (void)state;
    for (int round = 0; round < 200; round++) {
        Table *t = vm_table_new(S, 0, 0);
        int n = 1 + (int)rndn(300);
        Value v = vm_int(1), nil = vm_nil();
        for (int i = 1; i <= n; i++) vm_table_setint(S, t, i, &v);
        int holes = (int)rndn(20);
        for (int h = 0; h < holes; h++) vm_table_setint(S, t, 1 + (vm_Integer)rndn((unsigned)n), &nil);
        assert_border(t);
        vm_table_setint(S, t, 1, &nil);
        assert_border(t);
    }
}

/* ======================================================================
 * Randomised: 100k operations against a reference
 * ====================================================================== */

static void random_phase(Table *t, vm_Integer *ref, int ops, int pct_set, bool mostly_small_ints) {
    for (int i = 0; i < ops; i++) {
        int id;
        if (mostly_small_ints && rndn(2) == 0)
            id = 100 + 1 + (int)rndn(400);   /* ints 1..400 */
        else
            id = (int)rndn(NKEYS);
        Value k = key_of(id);
        if ((int)rndn(100) < pct_set) {
            vm_Integer val = 1 + (vm_Integer)rndn(1000000);
            Value v = vm_int(val);
            vm_table_set(S, t, &k, &v);
            ref[canon(id)] = val;
        } else {
            Value nil = vm_nil();
            vm_table_set(S, t, &k, &nil);
            ref[canon(id)] = 0;
        }
    }
    check_against(t, ref);
}

static void test_vm_table_set_random_against_reference(void **state) {
    (void)state;
    make_keytabs();
    static vm_Integer ref[NKEYS];
    memset(ref, 0, sizeof ref);
    Table *t = vm_table_new(S, 0, 0);
    random_phase(t, ref, 20000, 80, false);   /* grow */
    random_phase(t, ref, 20000, 50, true);    /* churn, integer keys migrate */
    random_phase(t, ref, 20000, 50, false);
    random_phase(t, ref, 20000, 10, false);   /* shrink: mostly removals */
    random_phase(t, ref, 20000, 90, true);    /* grow again */
    /* remove everything that is left */
    for (int id = 0; id < NKEYS; id++) {
        Value k = key_of(id), nil = vm_nil();
        vm_table_set(S, t, &k, &nil);
        ref[canon(id)] = 0;
    }
    check_against(t, ref);
    assert_int_equal(vm_table_hlive(t), 0);
}

static void test_vm_table_set_churn_stays_small(void **state) {
    (void)state;
    /* remove and add keys in turn: dead nodes are reused or dropped, so the hash part
     * stays proportional to the live keys, beside a large array part too */
    Table *t = vm_table_new(S, 1u << 16, 0);
    Value v = vm_int(1), nil = vm_nil();
    for (vm_Integer i = 1; i <= (1 << 16); i++) vm_table_setint(S, t, i, &v);
    char buf[32];
    for (int i = 0; i < 300000; i++) {
        snprintf(buf, sizeof buf, "c%d", i);
        Value k = strv(buf);
        vm_table_set(S, t, &k, &v);
        if (i >= 100) {
            snprintf(buf, sizeof buf, "c%d", i - 100);
            Value old = strv(buf);
            vm_table_set(S, t, &old, &nil);
        }
    }
    check_table(t);
    assert_int_equal(vm_table_hlive(t), 100);
    assert_true(vm_table_hcap(t) <= 512);
    assert_int_equal(vm_table_asize(t), 1u << 16);
    for (int i = 300000 - 100; i < 300000; i++) {
        snprintf(buf, sizeof buf, "c%d", i);
        assert_int_equal(vm_table_getstr(t, vm_string_newc(S, buf))->u.i, 1);
    }
}

/* ======================================================================
 * Traversal
 * ====================================================================== */

static void test_vm_table_next_clearing_fields(void **state) {
    (void)state;
    make_keytabs();
    for (int round = 0; round < 20; round++) {
        Table *t = vm_table_new(S, 0, 0);
        static unsigned char present[NKEYS], seen[NKEYS], cleared[NKEYS];
        memset(present, 0, sizeof present);
        memset(seen, 0, sizeof seen);
        memset(cleared, 0, sizeof cleared);
        for (int id = 0; id < NKEYS; id++) {
            if (id != canon(id) || rndn(3) == 0) continue;
            Value k = key_of(id), v = vm_int(id);
            vm_table_set(S, t, &k, &v);
            present[id] = 1;
        }
        Value k = vm_nil(), v, nil = vm_nil();
        int step = 0;
        while (vm_table_next(S, t, &k, &v)) {
            int id = (int)v.u.i;
            assert_int_equal(id_of_key(&k), id);
            assert_true(present[id]);
            assert_false(cleared[id]);
            assert_int_equal(seen[id], 0);
            seen[id] = 1;
            if (rndn(2) == 0) vm_table_set(S, t, &k, &nil);   /* clear the current field */
            if (++step % 5 == 0) {                             /* and some other field */
                int other = (int)rndn(NKEYS);
                if (present[other] && !seen[other]) {
                    Value ko = key_of(other);
                    vm_table_set(S, t, &ko, &nil);
                    cleared[other] = 1;
                }
            }
            /* assigning to an existing field is allowed too */
            if (vm_table_get(t, &k)->tt != VT_NIL) {
                Value same = vm_int(id);
                vm_table_set(S, t, &k, &same);
            }
        }
        for (int id = 0; id < NKEYS; id++) {
            if (present[id] && !cleared[id]) assert_int_equal(seen[id], 1);
            if (!present[id] || cleared[id]) assert_int_equal(seen[id], 0);
        }
        check_table(t);
    }
}

static void test_vm_table_next_invalid_key_raises(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    Value v = vm_int(1);
    vm_table_setint(S, t, 1, &v);
    vm_table_setint(S, t, 2, &v);
    SetArgs a = {t, strv("x"), vm_nil()};
    assert_string_equal(protected_call(do_next, &a), "invalid key to 'next'");
    a.k = vm_int(3);
    assert_string_equal(protected_call(do_next, &a), "invalid key to 'next'");
    a.k = vm_float(1.0);   /* the same key as 1: valid */
    assert_null(protected_call(do_next, &a));
    assert_int_equal(a.k.tt, VT_INT);
    assert_int_equal(a.k.u.i, 2);
}

static void test_vm_table_next_array_then_hash(void **state) {
    (void)state;
    Table *t = vm_table_new(S, 0, 0);
    Value v = vm_int(0);
    for (int i = 1; i <= 8; i++) vm_table_setint(S, t, i, &v);
    Value ks = strv("k");
    vm_table_set(S, t, &ks, &v);
    Value k = vm_nil(), val;
    for (int i = 1; i <= 8; i++) {
        assert_true(vm_table_next(S, t, &k, &val));
        assert_int_equal(k.tt, VT_INT);
        assert_int_equal(k.u.i, i);
    }
    assert_true(vm_table_next(S, t, &k, &val));
    assert_int_equal(k.tt, VT_STR);
    assert_false(vm_table_next(S, t, &k, &val));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_table_new_is_empty),
        cmocka_unit_test(test_vm_table_set_every_key_type),
        cmocka_unit_test(test_vm_table_get_float_keys_normalised),
        cmocka_unit_test(test_vm_table_set_nil_and_nan_keys_raise),
        cmocka_unit_test(test_vm_table_set_nil_on_absent_key_adds_nothing),
        cmocka_unit_test(test_vm_table_slot_present_only),
        cmocka_unit_test(test_vm_table_set_new_key_clears_flags),
        cmocka_unit_test(test_vm_table_setint_in_order_ends_in_array),
        cmocka_unit_test(test_vm_table_setint_reverse_ends_in_array),
        cmocka_unit_test(test_vm_table_len_append_loop),
        cmocka_unit_test(test_vm_table_set_float_keys_fill_array),
        cmocka_unit_test(test_vm_table_reserve_keeps_contents),
        cmocka_unit_test(test_vm_table_len_sequences),
        cmocka_unit_test(test_vm_table_len_with_holes_is_a_border),
        cmocka_unit_test(test_vm_table_set_random_against_reference),
        cmocka_unit_test(test_vm_table_set_churn_stays_small),
        cmocka_unit_test(test_vm_table_next_clearing_fields),
        cmocka_unit_test(test_vm_table_next_invalid_key_raises),
        cmocka_unit_test(test_vm_table_next_array_then_hash),
        cmocka_unit_test(test_vm_table_key_filter_covers_every_key),
        cmocka_unit_test(test_vm_table_getstr_at_positions),
        cmocka_unit_test(test_vm_table_lookup_with_an_older_mask),
        cmocka_unit_test(test_vm_table_getint_between_a_resizes_two_stores),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
