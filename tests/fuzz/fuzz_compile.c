/* fuzz_compile.c: libFuzzer target for the compiler (vm_compile) with a round-trip
 * property: whatever compiles must verify, be written (vm_bytecode_dump, with and without
 * debug info), load back (vm_bytecode_load) and be written again to the same bytes.
 * Nothing is executed. Built and run by run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_bytecode.h"
#include "vm_compile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static State *S;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    gc_init();
    S = vm_state_new();
    devnull = fopen("/dev/null", "w");
    return 0;
}

static void roundtrip(const Proto *p, bool strip) {
    char why[256];
    size_t len, len2;
    unsigned char *b = vm_bytecode_dump(p, &len, strip);
    if (b == NULL) {
        fprintf(stderr, "dump failed\n");
        abort();
    }
    Proto *q = vm_bytecode_load(S, b, len, why, sizeof why);
    if (q == NULL) {
        fprintf(stderr, "compiled code does not load back: %s\n", why);
        abort();
    }
    unsigned char *b2 = vm_bytecode_dump(q, &len2, strip);
    if (b2 == NULL || len2 != len || memcmp(b, b2, len) != 0) {
        fprintf(stderr, "second dump differs\n");
        abort();
    }
    free(b);
    free(b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = malloc(size ? size : 1); /* exact size: ASan catches reads past the end */
    if (size) memcpy(src, data, size);
    CompileError err;
    Proto *p = vm_compile(S, src, size, "=fuzz", &err);
    if (p != NULL) {
        char why[256];
        if (vm_bytecode_verify(p, why, sizeof why) != NULL) {
            fprintf(stderr, "compiler output rejected by the verifier: %s\n", why);
            abort();
        }
        vm_bytecode_list(devnull, p);
        roundtrip(p, false);
        roundtrip(p, true);
    } else if (err.msg[0] == '\0') {
        fprintf(stderr, "compile failed without a message\n");
        abort();
    }
    free(src);
    return 0;
}
