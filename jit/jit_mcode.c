/* jit_mcode.c: code memory (W^X publishing), disassembly and the perf map. */
#include "jit_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *jit_mem_publish(const void *code, size_t n, size_t *mapped) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (n + page - 1) / page * page;
    if (size == 0) size = page;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    memcpy(m, code, n);
    /* From here on the pages are never writable again: a function's code is immutable
     * once published (other threads may be running it). */
    if (mprotect(m, size, PROT_READ | PROT_EXEC) != 0) {
        munmap(m, size);
        return NULL;
    }
    __builtin___clear_cache((char *)m, (char *)m + n);
    *mapped = size;
    return m;
}

void jit_disasm(FILE *out, const void *code, size_t n, const char *indent) {
    const uint8_t *p = code;
    size_t off = 0;
    while (off < n) {
        ZydisDisassembledInstruction di;
        if (!ZYAN_SUCCESS(ZydisDisassembleIntel(ZYDIS_MACHINE_MODE_LONG_64, (ZyanU64)(uintptr_t)(p + off),
                                                p + off, n - off, &di))) {
            fprintf(out, "%s%p  (undecodable byte %02x)\n", indent, (const void *)(p + off), p[off]);
            off++;
            continue;
        }
        fprintf(out, "%s%p  %s\n", indent, (const void *)(p + off), di.text);
        off += di.info.length;
    }
}

static FILE *perfmap; /* /tmp/perf-PID.map, opened on first use; never closed */

void jit_perfmap_add(const void *code, size_t n, const char *name) {
    if (perfmap == NULL) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
        perfmap = fopen(path, "w");
    }
    if (perfmap != NULL) {
        fprintf(perfmap, "%lx %zx lua:%s\n", (unsigned long)(uintptr_t)code, n, name);
        fflush(perfmap);
    }
}
