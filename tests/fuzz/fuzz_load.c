/* fuzz_load.c: libFuzzer target for the bytecode loader and verifier (vm_bytecode_load).
 * Any input must either load (and then verify again, and list, without incident) or be
 * refused with a one-line reason; nothing is executed. Built and run by run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_api.h"
#include "vm_api.h"
#include "vm_bytecode.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Copy into a block of exactly [size] bytes so ASan catches any read past the end. */
    unsigned char *buf = malloc(size ? size : 1);
    if (size) memcpy(buf, data, size);
    char why[256];
    why[0] = '\0';
    Proto *p = vm_bytecode_load(S, buf, size, why, sizeof why);
    if (p == NULL) {
        if (why[0] == '\0' || strchr(why, '\n') != NULL) abort(); /* reason must be one line */
    } else {
        if (vm_bytecode_verify(p, why, sizeof why) != NULL) abort();
        vm_bytecode_list(devnull, p);
        /* What loads can be written, and what is written loads back and is written again
         * to the same bytes. (Not necessarily the input's bytes: a stripped source comes
         * back as "=?", an all-absent list of upvalue names as none.) */
        size_t len, len2;
        unsigned char *b1 = vm_bytecode_dump(p, &len, false);
        if (b1 == NULL) abort();
        Proto *q = vm_bytecode_load(S, b1, len, why, sizeof why);
        if (q == NULL) {
            fprintf(stderr, "written file does not load: %s\n", why);
            abort();
        }
        unsigned char *b2 = vm_bytecode_dump(q, &len2, false);
        if (b2 == NULL || len2 != len || memcmp(b1, b2, len) != 0) abort();
        free(b1);
        free(b2);
    }
    free(buf);
    return 0;
}
