/* test_table_race.c: tables under unsynchronised concurrent use. Four native threads (started
 * through gc_thread_start, so the collector knows them) store and load mixed values under
 * overlapping integer, float, boolean and string keys of one shared table, with no lock,
 * for about a second, while the main thread reads the same table and checks every value it
 * sees. The shared table is replaced by a fresh one every 4 ms, so the threads keep
 * growing tables from empty (array part and hash part resizes, migration of integer keys
 * between the parts, rehashes that drop dead nodes) for the whole run.
 *
 * What must hold (vm_table.c, "Races"): no crash, no probe that never ends, every value
 * read is well formed (a valid tag; a string or table payload that points at a string or
 * a well-formed table), and the table keeps the shape that vm_table_check_shape checks.
 * Which values are read is unspecified: nothing here checks them against what was written.
 * Before the fixes this crashed within the second (resize freeing blocks that other threads
 * were reading, sizes and blocks published separately, Values copied as two halves). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_do.h"
#include "vm_state.h"
#include "vm_string.h"
#include "vm_table.h"

#define NTHREADS 4
#define RUN_NS 1000000000ll        /* how long the threads hammer */
#define SWAP_NS 4000000ll          /* a fresh shared table this often */
#define NSTR 96                    /* string keys (and string values) */
#define NINT 384                   /* integer keys 1..NINT: array part sizes up to 512 */
#define NSPARSE 96                 /* integer keys far apart: hash part */
#define NFLT 48                    /* float keys j + 0.5: hash part */

static State *S;
static State *threads[NTHREADS];
static String *strs[NSTR];
static Table *_Atomic shared;       /* the table every thread works on */
#define MAXTABLES 512
static Table *tables[MAXTABLES];    /* every table that was shared, checked at the end */
static int ntables;
static atomic_int stop;
static atomic_int finished;
static atomic_long failures;
static const char *_Atomic first_failure;
static atomic_long ops_done, errors_caught;
static char first_error[96];          /* the first error a protected batch caught */
static atomic_int have_error;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void note_failure(const char *msg) {
    const char *expected = NULL;
    atomic_compare_exchange_strong(&first_failure, &expected, msg);
    atomic_fetch_add(&failures, 1);
}

/* xorshift64*, one state per thread */
static uint64_t rnd(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* NULL when [v] is well formed. Tables stored as values are filled before they are
 * published and never changed after, so they must pass the strict check. */
static const char *bad_value(Value v) {
    switch (v.tt) {
    case VT_NIL:
    case VT_FALSE:
    case VT_TRUE:
    case VT_INT:
    case VT_FLOAT: return NULL;
    case VT_STR: {
        const String *s = v.u.s;
        if (s == NULL) return "string value with a NULL payload";
        if (s->h.type != VT_STR) return "string value whose payload is not a string";
        if (s->len == 0 || s->len > 16) return "string value with an insane length";
        if (s->data[s->len] != '\0') return "string value without its terminating zero";
        return NULL;
    }
    case VT_TABLE: {
        const Table *t = v.u.t;
        if (t == NULL) return "table value with a NULL payload";
        if (t->h.type != VT_TABLE) return "table value whose payload is not a table";
        const char *m = vm_table_check(t);
        return m != NULL ? m : NULL;
    }
    default: return "value with a tag that no thread stores";
    }
}

static void check_value(Value v) {
    const char *m = bad_value(v);
    if (m != NULL) note_failure(m);
}

/* A random key of every kind, overlapping between threads. */
static Value random_key(uint64_t *rs) {
    uint64_t r = rnd(rs);
    switch (r % 8) {
    case 0:
    case 1:
    case 2: return vm_int((vm_Integer)(r >> 8) % NINT + 1);
    case 3: return vm_int(100000 + 7919 * (vm_Integer)((r >> 8) % NSPARSE));
    case 4: return vm_float((double)((r >> 8) % NFLT) + 0.5);
    case 5: return vm_bool((r >> 8) & 1);
    default: return vm_str(strs[(r >> 8) % NSTR]);
    }
}

static Value random_value(State *L, uint64_t *rs) {
    uint64_t r = rnd(rs);
    switch (r % 8) {
    case 0:
    case 1: return vm_int((vm_Integer)(r >> 3));
    case 2: return vm_float((double)(r >> 11) * 0.125);
    case 3:
    case 4: return vm_str(strs[(r >> 8) % NSTR]);
    case 5: {
        Table *t = vm_table_new(L, 0, 0);   /* filled, then published */
        Value one = vm_int(1), s = vm_str(strs[(r >> 8) % NSTR]);
        vm_table_setint(L, t, 1, &s);
        vm_table_setstr(L, t, strs[(r >> 16) % NSTR], &one);
        return vm_table(t);
    }
    case 6: return vm_bool(r & 256);
    default: return vm_nil();
    }
}

/* One batch of operations; runs protected (next() raises "invalid key to 'next'" when a
 * racing resize dropped the key it resumes from, and that is an allowed outcome). */
typedef struct Batch {
    uint64_t rs;
} Batch;

static void batch(State *L, void *ud) {
    uint64_t *rs = &((Batch *)ud)->rs;
    for (int n = 0; n < 256; n++) {
        Table *t = atomic_load(&shared);
        Value k = random_key(rs);
        uint64_t r = rnd(rs);
        switch (r % 16) {
        case 0:
        case 1:
        case 2:
        case 3:
        case 4:
        case 5: {   /* raw store through every entry point */
            Value v = random_value(L, rs);
            if (k.tt == VT_INT && (r & 16))
                vm_table_setint(L, t, k.u.i, &v);
            else if (k.tt == VT_STR && (r & 16))
                vm_table_setstr(L, t, k.u.s, &v);
            else
                vm_table_set(L, t, &k, &v);
            break;
        }
        case 6: {   /* the interpreter's fast store: through an existing slot */
            Value v = random_value(L, rs);
            Value *slot = vm_table_slot(t, &k);
            if (slot != NULL && v.tt != VT_NIL) vm_copyv(slot, &v);
            break;
        }
        case 7:
        case 8:
        case 9:
        case 10:
        case 11: {  /* loads through every entry point */
            const Value *slot;
            if (k.tt == VT_INT && (r & 16))
                slot = vm_table_getint(t, k.u.i);
            else if (k.tt == VT_STR && (r & 16))
                slot = vm_table_getstr(t, k.u.s);
            else
                slot = vm_table_get(t, &k);
            check_value(vm_loadv(slot));
            break;
        }
        case 12: {  /* appends (t[#t+1] = v): the threads race for the same new keys */
            vm_Unsigned len = vm_table_len(t);
            if (len > 1u << 24) note_failure("length beyond every key stored");
            Value v = vm_int((vm_Integer)len);
            vm_table_setint(L, t, (vm_Integer)len + 1, &v);
            break;
        }
        case 13:
        case 14: {  /* a few steps of a traversal, from the start or from a key */
            Value key = (r & 16) ? k : vm_nil(), val;
            for (int s = 0; s < 8 && vm_table_next(L, t, &key, &val); s++) {
                check_value(key);
                check_value(val);
                if (key.tt == VT_NIL) note_failure("next returned a nil key");
            }
            break;
        }
        default: {
            const char *m = vm_table_check_shape(t);
            if (m != NULL) note_failure(m);
            break;
        }
        }
    }
    atomic_fetch_add(&ops_done, 256);
}

static void *worker(void *arg) {
    State *L = arg;
    Batch b = {0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)L};
    while (!atomic_load(&stop)) {
        if (vm_rawrunprotected(L, batch, &b) != VM_OK) {
            atomic_fetch_add(&errors_caught, 1);
            if (L->errval.tt == VT_STR && atomic_exchange(&have_error, 1) == 0)
                snprintf(first_error, sizeof first_error, "%s", L->errval.u.s->data);
        }
    }
    atomic_fetch_add(&finished, 1);
    return NULL;
}

/* The main thread: swap in fresh tables, read and check everything it can see. */
static void observe(State *L, void *ud) {
    uint64_t *rs = ud;
    Table *t = atomic_load(&shared);
    for (int n = 0; n < 64; n++) {
        Value k = random_key(rs);
        check_value(vm_loadv(vm_table_get(t, &k)));
    }
    Value key = vm_nil(), val;
    for (int s = 0; s < 64 && vm_table_next(L, t, &key, &val); s++) {
        check_value(key);
        check_value(val);
    }
    const char *m = vm_table_check_shape(t);
    if (m != NULL) note_failure(m);
}

static void test_table_race_mixed_types_no_lock(void **state) {
    (void)state;
    char buf[32];
    for (int i = 0; i < NSTR; i++) {
        snprintf(buf, sizeof buf, "s%d", i * 37);
        strs[i] = vm_string_newc(S, buf);
        vm_string_hash(strs[i]);
    }
    tables[ntables++] = vm_table_new(S, 0, 0);
    atomic_store(&shared, tables[0]);
    for (int i = 0; i < NTHREADS; i++) threads[i] = vm_newstate_thread(S);
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(gc_thread_start(worker, threads[i], 0), 0);

    uint64_t gcs0 = gc_count();
    uint64_t rs = 12345;
    int64_t start = now_ns(), swapped = start;
    while (now_ns() - start < RUN_NS) {
        if (now_ns() - swapped >= SWAP_NS && ntables < MAXTABLES) {
            tables[ntables] = vm_table_new(S, 0, 0);
            atomic_store(&shared, tables[ntables++]);
            swapped = now_ns();
        }
        if (vm_rawrunprotected(S, observe, &rs) != VM_OK) atomic_fetch_add(&errors_caught, 1);
    }
    atomic_store(&stop, 1);
    int64_t deadline = now_ns() + 5000000000ll;
    while (atomic_load(&finished) < NTHREADS && now_ns() < deadline) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&finished) < NTHREADS) fail_msg("a worker did not finish: a probe that never ends?");

    /* Quiescent now. Every table that was shared must still have its shape, every pair in
     * it must be well formed, and a traversal must end, returning each key once: racing
     * insertions may have left a key twice in a table, and a traversal that returned both
     * copies would go round for ever. */
    long pairs = 0;
    for (int i = 0; i < ntables; i++) {
        Table *t = tables[i];
        const char *m = vm_table_check_shape(t);
        if (m != NULL) fail_msg("vm_table_check_shape after the race: %s", m);
        Value key = vm_nil(), val;
        long n = 0, slots = (long)vm_table_asize(t) + (long)vm_table_hcap(t);
        while (vm_table_next(S, t, &key, &val)) {
            check_value(key);
            check_value(val);
            if (++n > slots) fail_msg("a traversal of table %d did not end (a key returned twice)", i);
        }
        pairs += n;
    }
    Table *t = atomic_load(&shared);
    Value probe = vm_int(1);
    check_value(vm_loadv(vm_table_get(t, &probe)));
    print_message("table race: %ld operations, %d tables, %llu collections, %ld pairs at the end, "
                  "%ld caught errors (first: %s)\n",
                  atomic_load(&ops_done), ntables, (unsigned long long)(gc_count() - gcs0), pairs,
                  atomic_load(&errors_caught), atomic_load(&have_error) ? first_error : "none");
    if (atomic_load(&failures) != 0)
        fail_msg("%ld malformed reads; first: %s", atomic_load(&failures), atomic_load(&first_failure));
    assert_true(atomic_load(&ops_done) > 0);
}

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    /* The worker threads here are plain registered native threads that never poll for
     * safepoints, so collections must not wait for safepoints: without a hook, a thread
     * that triggers one collects at once and Boehm stops the others with signals wherever
     * they are, which the table code must survive as well. */
    gc_set_collect_hook(NULL);
    vm_table_threads_started();   /* as the thread library does before a second thread runs */
    return S == NULL;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_race_mixed_types_no_lock),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
