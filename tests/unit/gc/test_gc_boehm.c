/* test_gc_boehm.c: the heap interface (gc_api.h) and the roots the VM relies on: zeroed
 * scanned blocks, pointer-free blocks, realloc, the heap cap, and objects held only by a
 * suspended coroutine's C and Lua stacks surviving collections; the collection observer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_lib.h"

static int group_setup(void **state) {
    (void)state;
    gc_init();
    return 0;
}

static void test_gc_alloc_zeroed(void **state) {
    (void)state;
    unsigned char *p = gc_alloc(1000);
    assert_non_null(p);
    for (int i = 0; i < 1000; i++) assert_int_equal(p[i], 0);
}

static void test_gc_realloc_keeps_contents(void **state) {
    (void)state;
    char *p = gc_alloc_leaf(16);
    assert_non_null(p);
    memcpy(p, "0123456789abcdef", 16);
    char *q = gc_realloc(p, 1 << 16);
    assert_non_null(q);
    assert_memory_equal(q, "0123456789abcdef", 16);
}

/* A chain reachable only from a scanned block survives collections; the count of
 * collections moves. */
static void test_gc_collect_keeps_reachable(void **state) {
    (void)state;
    void **head = gc_alloc(sizeof(void *) * 2);
    void **cur = head;
    for (int i = 0; i < 1000; i++) {
        void **n = gc_alloc(sizeof(void *) * 2);
        n[1] = (void *)(uintptr_t)(i + 1);
        cur[0] = n;
        cur = n;
    }
    uint64_t before = gc_count();
    gc_collect();
    gc_collect();
    assert_true(gc_count() >= before + 2);
    int n = 0;
    for (void **p = head[0]; p != NULL; p = p[0]) assert_int_equal((uintptr_t)p[1], (uintptr_t)++n);
    assert_int_equal(n, 1000);
}

/* The collection observer (-Xtrace): a start and an end per collection, in that order, the
 * end with the bytes in use (at least the chain kept here). */
static int obs_starts, obs_ends, obs_open;
static size_t obs_used;
static void observe(int end, size_t heap_used) {
    if (!end) {
        obs_starts++;
        obs_open = 1;
    } else {
        obs_ends += obs_open; /* an end counts only after its start */
        obs_open = 0;
        obs_used = heap_used;
    }
}

/* The block kept through the collections: a volatile global (a root Boehm scans), since a
 * local that is only stored to at the end may be optimised away (Release, LTO). */
static void *volatile obs_keep;

static void test_gc_collection_observer(void **state) {
    (void)state;
    obs_keep = gc_alloc(1 << 20);
    gc_set_collection_observer(observe);
    uint64_t before = gc_count();
    gc_collect();
    gc_collect();
    gc_set_collection_observer(NULL);
    uint64_t n = gc_count() - before;
    assert_true(n >= 2);
    assert_int_equal(obs_starts, (int)n);
    assert_int_equal(obs_ends, (int)n);
    assert_true(obs_used >= (1 << 20));
    gc_collect(); /* no observer: nothing heard */
    assert_int_equal(obs_starts, (int)n);
    obs_keep = NULL;
}

/* Run a Lua snippet on a fresh VM with collections every [stress] allocations. */
static int run(State *S, const char *code) {
    return vm_run_buffer(S, code, strlen(code), "=test", 0, NULL, NULL);
}

/* Tables held only in locals of suspended coroutines (their Lua stacks, and C frames
 * below a yield inside a metamethod) survive stressed collections. */
static void test_gc_suspended_coroutine_roots(void **state) {
    (void)state;
    State *S = vm_state_new();
    gc_set_stress(7);
    int st = run(S,
                 "local cos = {}\n"
                 "for i = 1, 20 do\n"
                 "  cos[i] = coroutine.wrap(function()\n"
                 "    local t = {}\n"
                 "    for j = 1, 100 do t[j] = {j * i} end\n"
                 "    local mt = setmetatable({}, {__index = function(_, k)\n"
                 "      local inner = {k}\n"
                 "      coroutine.yield()\n"
                 "      return inner[1]\n"
                 "    end})\n"
                 "    coroutine.yield()\n"
                 "    local s = 0\n"
                 "    for j = 1, 100 do s = s + t[j][1] end\n"
                 "    assert(mt.key == 'key')\n"
                 "    return s\n"
                 "  end)\n"
                 "  cos[i]()\n"
                 "end\n"
                 "for _ = 1, 3 do local junk = {} for j = 1, 5000 do junk[j] = {j} end collectgarbage() end\n"
                 "for i = 1, 20 do cos[i]() end\n"
                 "collectgarbage()\n"
                 "for i = 1, 20 do assert(cos[i]() == 5050 * i) end\n");
    gc_set_stress(0);
    if (st != VM_OK) print_error("%s\n", vm_last_error(S));
    assert_int_equal(st, VM_OK);
}

/* While a coroutine runs, the native stack it left is still a root: an object held only
 * by this C frame survives the collections that run on the coroutine's stack. */
static void test_gc_native_stack_scanned_while_coroutine_runs(void **state) {
    (void)state;
    State *S = vm_state_new();
    uint64_t *volatile held = gc_alloc_leaf(256);
    for (int i = 0; i < 32; i++) held[i] = 0x5eed0000u + (uint64_t)i;
    gc_set_stress(3);
    int st = run(S, "local co = coroutine.wrap(function()\n"
                    "  for i = 1, 20000 do local t = {i, tostring(i)} end\n"
                    "  collectgarbage()\n"
                    "end)\n"
                    "co()\n");
    gc_set_stress(0);
    assert_int_equal(st, VM_OK);
    for (int i = 0; i < 32; i++) assert_true(held[i] == 0x5eed0000u + (uint64_t)i);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gc_native_stack_scanned_while_coroutine_runs),
    cmocka_unit_test(test_gc_alloc_zeroed),
    cmocka_unit_test(test_gc_realloc_keeps_contents),
    cmocka_unit_test(test_gc_collect_keeps_reachable),
    cmocka_unit_test(test_gc_collection_observer),
    cmocka_unit_test(test_gc_suspended_coroutine_roots),
};

int main(void) { return cmocka_run_group_tests(tests, group_setup, NULL); }
