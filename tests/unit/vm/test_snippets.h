/* test_snippets.h: shared helpers of the library unit tests: one VM per test group, Lua
 * snippets run through the embedding API, their status and error message checked. Include
 * after <cmocka.h>, "vm_api.h" and "vm_lib.h". */
#ifndef TEST_SNIPPETS_H
#define TEST_SNIPPETS_H

#include <string.h>

#include "gc_api.h"

static State *S;

static int group_setup(void **state) {
    (void)state;
    gc_init();
    S = vm_state_new();
    return S == NULL;
}

/* Run [code] (chunk name "test"); returns the VM status. */
static int run(const char *code) { return vm_run_buffer(S, code, strlen(code), "=test", 0, NULL, NULL); }

static void assert_runs(const char *code) {
    int st = run(code);
    if (st != VM_OK) print_error("snippet failed: %s\n", vm_last_error(S));
    assert_int_equal(st, VM_OK);
}

static void assert_fails_with(const char *code, const char *msg) {
    assert_int_equal(run(code), VM_ERRRUN);
    assert_string_equal(vm_last_error(S), msg);
}

#endif
