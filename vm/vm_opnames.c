/* vm_opnames.c: opcode names and formats, expanded from the one list in vm_opcodes.h. */
#include "vm_opcodes.h"

const char *const vm_opnames[OP__COUNT] = {
#define VM_OP_NAME(name, fmt, doc) #name,
    VM_OPCODES(VM_OP_NAME)
#undef VM_OP_NAME
};

const uint8_t vm_opformats[OP__COUNT] = {
#define VM_OP_FMT(name, fmt, doc) OPF_##fmt,
    VM_OPCODES(VM_OP_FMT)
#undef VM_OP_FMT
};
