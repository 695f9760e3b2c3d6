/* jit_tpl_table.c: the templates of table and upvalue accesses and table creation. */
#include "jit_internal.h"

#include "vm_meta.h"
#include "vm_prof.h"
#include "vm_string.h"
#include "vm_table.h"

/* [dst] = upvals[reg]->v, for an access in compiled code: only an upvalue that is closed,
 * open on this thread's own stack, or any while no second language thread has started
 * (vm_upval_direct); one open on another thread's stack is
 * stepped at [pc], so that the interpreter goes through vm_upval_foreign (vm_func.c,
 * "Foreign accesses"). Uses [dst] and rdx. */
static void upval_ptr(Comp *c, int pc, int reg, ZydisRegister dst) {
    Asm *a = &c->a;
    int direct = jit_new_label(a);
    /* The thread flag first (vm_upval_direct): while no second thread has started, an open
     * upvalue and a closed one are both read directly, in 6 instructions. Testing closed
     * first cost an open upvalue 8 (the recursive local functions of fib and tak, and any
     * local of a main chunk that is still running, are open upvalues). */
    INS2(a, MOV, R(RDX), I((int64_t)(uintptr_t)&vm_threads_started_flag));
    INS2(a, MOV, R(dst), M(RCL, (int64_t)offsetof(LClosure, upvals) + 8 * (int64_t)reg, 8));
    INS2(a, CMP, M(RDX, 0, 1), I(0));
    INS2(a, MOV, R(RDX), R(dst));                                        /* the UpVal */
    INS2(a, MOV, R(dst), M(dst, offsetof(UpVal, v), 8));                  /* (movs keep the flags) */
    JMP(a, JZ, direct);
    INS2(a, LEA, R(RDX), M(RDX, offsetof(UpVal, closed), 8));
    INS2(a, CMP, R(dst), R(RDX));
    JMP(a, JZ, direct);
    INS2(a, CMP, R(dst), M(RS, offsetof(State, stack), 8));
    JMP(a, JB, STEP(c, pc));
    INS2(a, MOV, R(RDX), M(RS, offsetof(State, stack_last), 8));
    INS2(a, LEA, R(RDX), M(RDX, (int64_t)VM_EXTRA_STACK * (int64_t)sizeof(Value), 8));
    INS2(a, CMP, R(dst), R(RDX));
    JMP(a, JNB, STEP(c, pc));
    jit_bind(a, direct);
}

/* rdi = the table in R[reg], or ([up]) in upvalue [reg], read whole so that the pointer and
 * the tag come from one 16-byte copy (another thread may be storing it); anything but a table
 * is stepped at [pc]. Uses rax, rdx, xmm0. */
static void table_operand(Comp *c, int pc, int reg, bool up) {
    Asm *a = &c->a;
    if (!up) {
        INS2(a, CMP, TAG(reg), I(VT_TABLE));
        JMP(a, JNZ, STEP(c, pc));
        INS2(a, MOV, R(RDI), VAL(reg));
        return;
    }
    upval_ptr(c, pc, reg, RAX);
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    INS2(a, MOVQ, R(RDI), R(XMM0));
    jit_copy_tag(c, XMM0);
    INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_TABLE));
    JMP(a, JNZ, STEP(c, pc));
}

/* The end of GETTABLE's read, as the interpreter's: the value at [slot] read whole, a hit
 * unless that copy is nil and the table [table] has a metatable (then stepped at [pc]). R[ra]
 * takes the copy (an EV_LOAD of the slot read while profiling): the tag tested is the copy's,
 * not the slot's read again (another thread may store into the slot in between). Without a
 * metatable any value is the result, so the metatable is tested first: arrays pay nothing
 * for the copy's tag. */
static void finish_get(Comp *c, int pc, int ra, ZydisRegister slot, ZydisRegister table) {
    Asm *a = &c->a;
    int store = jit_new_label(a);
    INS2(a, MOVDQA, R(XMM0), M(slot, 0, 16));
    INS2(a, CMP, M(table, offsetof(Table, meta), 8), I(0));
    JMP(a, JZ, store);
    jit_copy_tag(c, XMM0);
    INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_NIL));
    JMP(a, JZ, STEP(c, pc));
    jit_bind(a, store);
    jit_emit_mem(c, EV_LOAD, slot, 0, pc);
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
}

/* xmm0 = RK(C) of [i], whole. Uses rdx. */
static void load_rkc(Comp *c, Instr i) {
    if (vm_k(i)) {
        load_imm64(c, RDX, (uint64_t)(uintptr_t)&c->p->k[vm_c(i)]);
        INS2(&c->a, MOVDQA, R(XMM0), M(RDX, 0, 16));
    } else {
        INS2(&c->a, MOVDQA, R(XMM0), WHOLE(vm_c(i)));
    }
}

/* GETUPVAL, SETUPVAL */
void tpl_upval(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* upvals[B]->v, then the whole Value in one 16-byte access (another thread may be
     * writing the same upvalue: vm_value.h) */
    upval_ptr(c, pc, (int)vm_b(i), RCX);
    if (vm_op(i) == OP_GETUPVAL) {
        INS2(a, MOVDQA, R(XMM0), M(RCX, 0, 16));
        jit_emit_mem(c, EV_LOAD, RCX, 0, pc);
        INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
    } else {
        jit_emit_mem(c, EV_STORE, RCX, 0, pc);
        INS2(a, MOVDQA, R(XMM0), WHOLE(ra));
        INS2(a, MOVDQA, M(RCX, 0, 16), R(XMM0));
    }
}

/* GETTABLE, GETI */
void tpl_gettable(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* The array part only (vm_interp_body.h's first fast path): a table, an integer key
     * in 1..size; a nil slot is a hit only if the table has no metatable. Everything
     * else (hash part, __index, non-tables) is stepped. The slot is read whole (16 bytes):
     * other threads may be writing it. */
    int rb = (int)vm_b(i);
    bool konst = vm_op(i) == OP_GETI;
    int other = konst ? STEP(c, pc) : jit_new_label(a); /* GETTABLE: any other key */
    table_operand(c, pc, rb, false);
    INS2(a, MOV, R(RAX), R(RDI));                                    /* Table * */
    if (!konst) {
        INS2(a, CMP, TAG(vm_c(i)), I(VT_INT));
        JMP(a, JNZ, other);
    }
    INS2(a, MOV, R(RCX), M(RAX, offsetof(Table, arr), 8));          /* TabArr * */
    INS2(a, MOV, R(ZYDIS_REGISTER_ESI), M(RCX, offsetof(TabArr, size), 4));
    if (konst) {
        INS2(a, CMP, R(RSI), I((int64_t)vm_c(i) - 1));
        JMP(a, JBE, STEP(c, pc));                                     /* size <= key - 1 */
        if (vm_c(i) > 1) INS2(a, ADD, R(RCX), I(16 * ((int64_t)vm_c(i) - 1)));
    } else {
        INS2(a, MOV, R(RDX), VAL(vm_c(i)));
        INS1(a, DEC, R(RDX));
        INS2(a, CMP, R(RDX), R(RSI));
        JMP(a, JNB, other);                                           /* unsigned: key < 1 too */
        INS2(a, SHL, R(RDX), I(4));
        INS2(a, ADD, R(RCX), R(RDX));
    }
    INS2(a, ADD, R(RCX), I(offsetof(TabArr, v)));                   /* the slot */
    if (!konst) {
        /* other keys: vm_table_get (raw, never raises or allocates), as the interpreter;
         * a string key straight to vm_table_getstr (what vm_table_get calls for one) */
        int got = jit_new_label(a), call = jit_new_label(a);
        JMP(a, JMP, got);
        jit_bind(a, other);
        INS1(a, PUSH, R(RAX)); /* keep the table across the call (and rsp 16-byte aligned) */
        INS1(a, PUSH, R(RAX));
        INS2(a, MOV, R(RDI), R(RAX));
        INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)vm_c(i), 8));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_get);
        INS2(a, CMP, TAG(vm_c(i)), I(VT_STR));
        JMP(a, JNZ, call);
        INS2(a, MOV, R(RSI), M(RSI, 0, 8));                             /* the String */
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_getstr);
        jit_bind(a, call);
        INS1(a, CALL, R(RAX));
        INS2(a, MOV, R(RCX), R(RAX));
        INS1(a, POP, R(RAX));
        INS1(a, POP, R(RAX));
        jit_bind(a, got);
    }
    finish_get(c, pc, ra, RCX, RAX);
}

/* GETI: key 0 never is in the array part. */
bool tpl_geti_ok(const Comp *c, int pc) { return vm_c(c->p->code[pc]) >= 1; }

/* Whether the heap-access events are emitted (the event address then travels in rcx). */
static bool memev(void) { return jit_prof && (vm_prof_needs & PROF_NEED_MEM); }

/* rax = [fn](rdi, rsi), a lookup that neither raises nor allocates, with rdi (the table) kept
 * across the call on the stack (pushed twice: rsp stays 16-byte aligned) and back in rcx. */
static void call_keeping_table(Comp *c, const void *fn) {
    Asm *a = &c->a;
    INS1(a, PUSH, R(RDI));
    INS1(a, PUSH, R(RDI));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)fn);
    INS1(a, CALL, R(RAX));
    INS1(a, POP, R(RCX));
    INS1(a, POP, R(RCX));
}

/* SETTABLE or SETI ([konst]) with rax = the table in R[A] and a key the array part does not
 * take, as the interpreter's L_SETTABLE / L_SETI: SETTABLE stores into the key's live slot
 * (vm_table_slot: neither raises nor allocates) with the slot's event; else, without a
 * metatable, vm_table_set inserts (protected: it may resize, and raises for a nil or NaN
 * key) with the table's event first, as the interpreter emits it before the call that may
 * raise. SETI without a metatable: vm_table_setint, the table's event. With a metatable
 * and no live slot (__newindex may apply): stepped.
 * Without heap-access events a table without a metatable goes straight to the insertion:
 * a store under a key with a live slot is the same raw store there, one probe instead of
 * two (hash_table.lua: string keys in a growing table were stepped, two probes each). */
static void set_other(Comp *c, int pc, Instr i, bool konst) {
    Asm *a = &c->a;
    int insert = jit_new_label(a), done = jit_new_label(a);
    INS2(a, MOV, R(RCX), R(RAX));
    if (konst || !memev()) {
        INS2(a, CMP, M(RAX, offsetof(Table, meta), 8), I(0));
        JMP(a, JZ, insert);
        if (konst) JMP(a, JMP, STEP(c, pc));
    }
    if (!konst) {
        int found = jit_new_label(a);
        INS2(a, MOV, R(RDI), R(RAX));
        INS2(a, LEA, R(RSI), M(RBASE, 16 * (int64_t)vm_b(i), 8));
        call_keeping_table(c, (const void *)&vm_table_slot);
        INS2(a, TEST, R(RAX), R(RAX));
        JMP(a, JNZ, found);
        INS2(a, CMP, M(RCX, offsetof(Table, meta), 8), I(0));
        JMP(a, JNZ, STEP(c, pc));
        JMP(a, JMP, insert);
        jit_bind(a, found);
        INS2(a, MOV, R(RCX), R(RAX)); /* the live slot */
        jit_emit_mem(c, EV_STORE, RCX, 0, pc);
        load_rkc(c, i);
        INS2(a, MOVDQA, M(RCX, 0, 16), R(XMM0));
        JMP(a, JMP, done);
    }
    jit_bind(a, insert); /* rcx = the table, without a metatable */
    jit_emit_mem(c, EV_STORE, RCX, 0, pc);
    INS1(a, PUSH, R(RCX));
    INS1(a, PUSH, R(RCX));
    jit_emit_protect(c, pc); /* rdi = S */
    INS1(a, POP, R(RSI));
    INS1(a, POP, R(RSI));
    if (vm_k(i))
        load_imm64(c, RCX, (uint64_t)(uintptr_t)&c->p->k[vm_c(i)]);
    else
        INS2(a, LEA, R(RCX), M(RBASE, 16 * (int64_t)vm_c(i), 8));
    if (konst) {
        INS2(a, MOV, R(RDX), I((int64_t)vm_b(i)));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_setint);
    } else {
        INS2(a, LEA, R(RDX), M(RBASE, 16 * (int64_t)vm_b(i), 8));
        load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_set);
    }
    INS1(a, CALL, R(RAX));
    jit_reload_base(c);
    jit_bind(a, done);
}

/* SETTABLE, SETI */
void tpl_settable(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* The array part inline: R[A] a table, the key an integer in 1..size, and the slot not
     * nil or no metatable (no __newindex to consult); the value stored whole. Any other key
     * (set_other) through direct calls, as the interpreter's SETTABLE and SETI go. */
    bool konst = vm_op(i) == OP_SETI;
    int other = jit_new_label(a);
    INS2(a, CMP, TAG(ra), I(VT_TABLE));
    JMP(a, JNZ, STEP(c, pc));
    INS2(a, MOV, R(RAX), VAL(ra));
    if (!konst) {
        INS2(a, CMP, TAG(vm_b(i)), I(VT_INT));
        JMP(a, JNZ, other);
    }
    int store = jit_new_label(a);
    INS2(a, MOV, R(RCX), M(RAX, offsetof(Table, arr), 8));
    INS2(a, MOV, R(ZYDIS_REGISTER_ESI), M(RCX, offsetof(TabArr, size), 4));
    if (konst) {
        INS2(a, CMP, R(RSI), I((int64_t)vm_b(i) - 1));
        JMP(a, JBE, other);
        if (vm_b(i) > 1) INS2(a, ADD, R(RCX), I(16 * ((int64_t)vm_b(i) - 1)));
    } else {
        INS2(a, MOV, R(RDX), VAL(vm_b(i)));
        INS1(a, DEC, R(RDX));
        INS2(a, CMP, R(RDX), R(RSI));
        JMP(a, JNB, other);
        INS2(a, SHL, R(RDX), I(4));
        INS2(a, ADD, R(RCX), R(RDX));
    }
    INS2(a, CMP, M(RCX, (int64_t)offsetof(TabArr, v) + 8, 4), I(VT_NIL));
    JMP(a, JNZ, store);
    INS2(a, CMP, M(RAX, offsetof(Table, meta), 8), I(0));
    JMP(a, JNZ, STEP(c, pc));
    jit_bind(a, store);
    jit_emit_mem(c, EV_STORE, RCX, offsetof(TabArr, v), pc);
    load_rkc(c, i);
    INS2(a, MOVDQA, M(RCX, offsetof(TabArr, v), 16), R(XMM0));
    int end = jit_new_label(a);
    JMP(a, JMP, end);
    jit_bind(a, other);
    set_other(c, pc, i, konst);
    jit_bind(a, end);
}

/* SETI: key 0 never is in the array part. */
bool tpl_seti_ok(const Comp *c, int pc) { return vm_b(c->p->code[pc]) >= 1; }

/* R[ra] = (table rdi)[key], [key] a constant string, through the site's inline cache
 * (jit_ic.c): the key's cached node in the table; then, when its value there is nil (a dead
 * key, or an absent one by the key filter) and the table has a metatable, the __index chain
 * of tables by the chain walker; anything the caches cannot answer by jit_ic_get (the
 * interpreter's lookup and walk, which neither raise nor allocate, so no savedpc or top),
 * and what that cannot answer (an __index function, a deeper chain) stepped at [pc]. The
 * events are the interpreter's GETFIELD's: of the slot read, of the table for the chain's nil
 * ([tabup], GETTABUP: of the table for anything from the chain, as its FINISHGET).
 * Every way to R[ra] carries the value in xmm0, loaded whole once by whatever decided
 * between "this is the value" and "look further" (the probe, the walker, jit_ic_get), and
 * stores that copy: another thread may remove the key at any time, and a second load could
 * read the nil of a key that was found holding a method, where the __index chain would have
 * gone on to a class (tests/threads/ic_race.lua). */
static void get_str(Comp *c, int pc, int ra, String *key, bool tabup) {
    Asm *a = &c->a;
    JitFieldIC *ic = jit_ic_site(c, key, tabup);
    uint32_t h = ic->pos[0];
    int notkey = jit_new_label(a), chain = jit_new_label(a), slow = jit_new_label(a);
    int slow_key = jit_new_label(a), slow_r9 = jit_new_label(a), hit = jit_new_label(a), got = jit_new_label(a);
    if (c->icchain < 0) c->icchain = jit_new_label(a);
    jit_ic_site_regs(c, ic);
    jit_ic_find(c, RDI, offsetof(JitFieldIC, pos), I((int64_t)(int32_t)h), notkey, hit, true);
    /* a dead key: rax = its slot, xmm0 = the nil read there; without a metatable that nil
     * is the value (and the slot's event, as the interpreter's) */
    INS2(a, CMP, M(RDI, offsetof(Table, meta), 8), I(0));
    JMP(a, JZ, hit);
    JMP(a, JMP, chain);
    jit_bind(a, notkey);
    jit_ic_filter(c, RDI, h, slow_key);
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_absent); /* an absent key's slot */
    INS2(a, CMP, M(RDI, offsetof(Table, meta), 8), I(0));
    JMP(a, JNZ, chain);
    INS2(a, MOVDQA, R(XMM0), M(RAX, 0, 16));
    JMP(a, JMP, hit);
    jit_bind(a, chain);
    INS2(a, MOV, R(R9), R(RDI));
    INS2(a, MOV, R(ZYDIS_REGISTER_R11D), I((int64_t)(int32_t)h));
    jit_jump(a, ZYDIS_MNEMONIC_CALL, c->icchain);
    INS2(a, TEST, R(RAX), R(RAX));
    JMP(a, JZ, slow_r9);
    if (memev()) {
        INS2(a, MOV, R(RCX), R(R9));
        if (!tabup) {
            load_imm64(c, RDX, (uint64_t)(uintptr_t)&vm_absent);
            INS2(a, CMP, R(RAX), R(RDX));
            JMP(a, JZ, got);
            INS2(a, MOV, R(RCX), R(RAX));
        }
    }
    JMP(a, JMP, got);
    jit_bind(a, slow_r9); /* ecx: why the walker missed */
    INS2(a, MOV, R(RDI), R(R9));
    JMP(a, JMP, slow);
    jit_bind(a, slow_key);
    INS2(a, MOV, R(ZYDIS_REGISTER_ECX), I(IC_MISS_KEY));
    jit_bind(a, slow);
    /* xmm0 = jit_ic_get(S, rdi, r10, ecx, &ev), ev in 16 bytes taken below rsp (16-byte
     * aligned in templates, so at the call too); NULL: stepped */
    INS2(a, SUB, R(ZYDIS_REGISTER_RSP), I(16));
    INS2(a, MOV, R(R8), R(ZYDIS_REGISTER_RSP));
    INS2(a, MOV, R(RSI), R(RDI));
    INS2(a, MOV, R(RDI), R(RS));
    INS2(a, MOV, R(RDX), R(R10));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&jit_ic_get);
    INS1(a, CALL, R(RAX));
    INS2(a, MOV, R(RCX), M(ZYDIS_REGISTER_RSP, 0, 8));
    INS2(a, ADD, R(ZYDIS_REGISTER_RSP), I(16));
    INS2(a, TEST, R(RCX), R(RCX));
    JMP(a, JZ, STEP(c, pc));
    JMP(a, JMP, got);
    jit_bind(a, hit);
    if (memev()) INS2(a, MOV, R(RCX), R(RAX));
    jit_bind(a, got); /* xmm0: the value; rcx: the address its event names */
    jit_emit_mem(c, EV_LOAD, RCX, 0, pc);
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
}

/* GETFIELD, GETTABUP */
void tpl_getfield(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* A string key on a table; __index functions, non-tables and errors are stepped. For
     * GETTABUP the upvalue is read whole and the table pointer and tag taken from that one
     * copy. */
    (void)a;
    table_operand(c, pc, (int)vm_b(i), vm_op(i) == OP_GETTABUP);
    get_str(c, pc, ra, p->k[vm_c(i)].u.s, vm_op(i) == OP_GETTABUP);
}

/* SELF with a constant string key (tpl_self_ok): R[A+1] = R[B] whole, then R[A] = R[B][key]
 * as GETFIELD for a table. A step redoes the whole instruction, which the copy does not disturb (R[B]
 * is unchanged unless B = A+1, when it is the same value). */
void tpl_self(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    int rb = (int)vm_b(i), notable = jit_new_label(a), done = jit_new_label(a);
    String *key = p->k[vm_c(i)].u.s;
    INS2(a, MOVDQA, R(XMM0), WHOLE(rb));
    INS2(a, MOVDQA, WHOLE(ra + 1), R(XMM0));
    INS2(a, CMP, TAG(rb), I(VT_TABLE));
    JMP(a, JNZ, notable);
    INS2(a, MOV, R(RDI), VAL(rb));
    get_str(c, pc, ra, key, false);
    JMP(a, JMP, done);
    /* a string: its library through the string metatable (vm_index_string), the event of
     * the register as the interpreter's; anything else is stepped */
    jit_bind(a, notable);
    INS2(a, CMP, TAG(rb), I(VT_STR));
    JMP(a, JNZ, STEP(c, pc));
    INS2(a, MOV, R(RDI), R(RS));
    load_imm64(c, RSI, (uint64_t)(uintptr_t)key);
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_index_string); /* xmm0: the method, one copy */
    INS1(a, CALL, R(RAX));
    jit_copy_tag(c, XMM0);
    INS2(a, CMP, R(ZYDIS_REGISTER_EDX), I(VT_NIL));
    JMP(a, JZ, STEP(c, pc));
    jit_emit_mem(c, EV_LOAD, RBASE, 16 * (int64_t)rb, pc);
    INS2(a, MOVDQA, WHOLE(ra), R(XMM0));
    jit_bind(a, done);
}

bool tpl_self_ok(const Comp *c, int pc) {
    Instr i = c->p->code[pc];
    return vm_k(i) && c->p->k[vm_c(i)].tt == VT_STR;
}

/* SETFIELD, SETTABUP */
void tpl_setfield(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* A string key already present: its live slot, at the node the site's inline cache
     * (jit_ic.c) remembers, else by jit_ic_slot (vm_table_slotstr through the cache, the
     * interpreter's first fast path; it neither raises nor allocates), takes the value whole.
     * A key without a live slot (a dead key at the cached node, or absent by the key filter):
     * vm_setfield_new, protected, inserts it when the table has no __newindex (the event is
     * of the table, as the interpreter's). __newindex or not a table: stepped. */
    const Value *key = &p->k[vm_b(i)];
    table_operand(c, pc, ra, vm_op(i) == OP_SETTABUP);
    JitFieldIC *ic = jit_ic_site(c, key->u.s, false);
    int notkey = jit_new_label(a), slow = jit_new_label(a), got = jit_new_label(a), end = jit_new_label(a);
    int newkey = jit_new_label(a), newkey_rdi = jit_new_label(a);
    jit_ic_site_regs(c, ic);
    jit_ic_find(c, RDI, offsetof(JitFieldIC, pos), I((int64_t)(int32_t)ic->pos[0]), notkey, got, false);
    JMP(a, JMP, newkey_rdi);
    jit_bind(a, notkey);
    jit_ic_filter(c, RDI, ic->pos[0], slow);
    JMP(a, JMP, newkey_rdi);
    jit_bind(a, slow);
    INS2(a, MOV, R(RSI), R(R10));
    call_keeping_table(c, (const void *)&jit_ic_slot);
    INS2(a, TEST, R(RAX), R(RAX));
    JMP(a, JZ, newkey);
    jit_bind(a, got);
    INS2(a, MOV, R(RCX), R(RAX)); /* the slot */
    jit_emit_mem(c, EV_STORE, RCX, 0, pc);
    load_rkc(c, i);
    INS2(a, MOVDQA, M(RCX, 0, 16), R(XMM0));
    JMP(a, JMP, end);
    /* no live slot: rcx = the table */
    jit_bind(a, newkey_rdi);
    INS2(a, MOV, R(RCX), R(RDI));
    jit_bind(a, newkey);
    INS1(a, PUSH, R(RCX));
    INS1(a, PUSH, R(RCX));
    jit_emit_protect(c, pc); /* rdi = S */
    INS2(a, MOV, R(RSI), R(RCX));
    load_imm64(c, RDX, (uint64_t)(uintptr_t)key->u.s);
    if (vm_k(i))
        load_imm64(c, RCX, (uint64_t)(uintptr_t)&p->k[vm_c(i)]);
    else
        INS2(a, LEA, R(RCX), M(RBASE, 16 * (int64_t)vm_c(i), 8));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_setfield_new);
    INS1(a, CALL, R(RAX));
    INS1(a, POP, R(RCX));
    INS1(a, POP, R(RCX));
    jit_reload_base(c);
    INS2(a, TEST, R(ZYDIS_REGISTER_AL), R(ZYDIS_REGISTER_AL));
    JMP(a, JZ, STEP(c, pc));
    jit_emit_mem(c, EV_STORE, RCX, 0, pc);
    jit_bind(a, end);
}

/* NEWTABLE */
void tpl_newtable(Comp *c, Asm *a, Proto *p, int pc, Instr i, int ra) {
    /* vm_table_new as the interpreter calls it (Protect: it allocates, so it may collect) */
    jit_emit_protect(c, pc);
    INS2(a, MOV, R(ZYDIS_REGISTER_ESI), I(vm_c(i)));
    INS2(a, MOV, R(ZYDIS_REGISTER_EDX), I(vm_b(i)));
    load_imm64(c, RAX, (uint64_t)(uintptr_t)&vm_table_new);
    INS1(a, CALL, R(RAX));
    jit_reload_base(c);
    INS2(a, MOV, VAL(ra), R(RAX));
    INS2(a, MOV, TAG(ra), I(VT_TABLE));
}
