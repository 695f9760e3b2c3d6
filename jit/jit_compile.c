/* jit_compile.c: the compile driver: the template table, two passes over a Proto (which
 * instructions have templates, then emit, place and patch), dump, the lock. */
#include "jit_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vm_bytecode.h"
#include "vm_compile.h"
#include "vm_prof.h"
#include "vm_sample.h"
#include "vm_thread.h"

JitOptions jit_opts;
bool jit_prof;
bool jit_events;
bool jit_window;
int jit_prof_kind;
int64_t jit_tls_stream;
bool jit_sample;
int64_t jit_tls_sample;

/* The profile library's first start (vm_sample.h, vm_sample_jit_on): code compiled from now
 * on counts sampling ticks, and the call helpers (jit_frame.c) count entries and look for a
 * window after calls into C, as with -Xsample.mode=code. Code compiled before has no ticks
 * at its back edges: its frames leave at their next call (every call goes through
 * jit_call). Called with the world stopped, so no thread is compiling. */
static void sample_on(void) {
    if (!jit_opts.on || jit_events) return;
    jit_tls_sample = (int64_t)((char *)&vm_sample_tl - (char *)__builtin_thread_pointer());
    jit_sample = true;
}

void jit_configure(const JitOptions *o) {
    vm_sample_jit_on = sample_on;
    jit_opts = *o;
    vm_jit_compiler = jit_compile; /* the interpreter's hook (jit_api.h) */
    vm_jit_enabled = o->on;
    /* Sampled code: compiled code is the uninstrumented version; windows run its instrumented
     * twin (jit_compile_window), unless they are interpreted (-Xsample.windows=interpreted).
     * Shadows too (-Xsample.mode=shadow): the program never opens a window, so it never
     * compiles a twin; each shadow compiles those it meets in its own copy of the process
     * (code memory is MAP_PRIVATE, jit_mcode.c), at most one per function it runs. */
    jit_sample = o->on && vm_prof_instrumented && vm_sample_code;
    jit_prof = jit_events = o->on && vm_prof_instrumented && !jit_sample;
    if (jit_sample) jit_tls_sample = (int64_t)((char *)&vm_sample_tl - (char *)__builtin_thread_pointer());
    vm_jit_window_compiler = jit_compile_window;
    vm_sample_jit_windows = jit_sample && !vm_sample_opts.interpreted;
    if (jit_prof || vm_sample_jit_windows) {
        jit_prof_kind = vm_prof_kind();
        jit_tls_stream = (int64_t)((char *)&vm_prof_tl - (char *)__builtin_thread_pointer());
    }
}

/* ======================================================================
 * The template table
 * ====================================================================== */

/* One row per opcode: [emit] its template (NULL: none, every such instruction is stepped),
 * and [ok], when not NULL, whether the instruction's operands have one (a constant's type, a
 * test followed by its JMP). "Has a template" and the template come from the same row. */
typedef struct Template {
    TplEmit *emit;
    TplOk *ok;
} Template;

/* Every opcode of VM_OPCODES must have a TPL_ line here (a new opcode fails to compile until
 * it has one). */
#define STEPPED {NULL, NULL}
#define TPL_MOVE {tpl_move, NULL}
#define TPL_LOADK {tpl_loadk, NULL}
#define TPL_LOADI {tpl_loadi, NULL}
#define TPL_LOADF {tpl_loadf, NULL}
#define TPL_LOADNIL {tpl_loadnil, NULL}
#define TPL_LOADFALSE {tpl_loadfalse, NULL}
#define TPL_LOADTRUE {tpl_loadtrue, NULL}
#define TPL_GETUPVAL {tpl_upval, NULL}
#define TPL_SETUPVAL {tpl_upval, NULL}
#define TPL_GETTABUP {tpl_getfield, NULL}
#define TPL_SETTABUP {tpl_setfield, NULL}
#define TPL_GETTABLE {tpl_gettable, NULL}
#define TPL_GETI {tpl_gettable, tpl_geti_ok}
#define TPL_GETFIELD {tpl_getfield, NULL}
#define TPL_SETTABLE {tpl_settable, NULL}
#define TPL_SETI {tpl_settable, tpl_seti_ok}
#define TPL_SETFIELD {tpl_setfield, NULL}
#define TPL_NEWTABLE {tpl_newtable, NULL}
#define TPL_SELF {tpl_self, tpl_self_ok}
#define TPL_ADDI {tpl_addi, NULL}
#define TPL_ADDK {tpl_arith, tpl_arithk_ok}
#define TPL_SUBK {tpl_arith, tpl_arithk_ok}
#define TPL_MULK {tpl_arith, tpl_arithk_ok}
#define TPL_MODK {tpl_mod, tpl_modk_ok}
#define TPL_POWK STEPPED
#define TPL_DIVK {tpl_arith, tpl_arithk_ok}
#define TPL_IDIVK STEPPED
#define TPL_BANDK {tpl_arith, tpl_bitk_ok}
#define TPL_BORK {tpl_arith, tpl_bitk_ok}
#define TPL_BXORK {tpl_arith, tpl_bitk_ok}
#define TPL_ADD {tpl_arith, NULL}
#define TPL_SUB {tpl_arith, NULL}
#define TPL_MUL {tpl_arith, NULL}
#define TPL_MOD {tpl_mod, NULL}
#define TPL_POW STEPPED
#define TPL_DIV {tpl_arith, NULL}
#define TPL_IDIV STEPPED
#define TPL_BAND {tpl_arith, NULL}
#define TPL_BOR {tpl_arith, NULL}
#define TPL_BXOR {tpl_arith, NULL}
#define TPL_SHL STEPPED
#define TPL_SHR STEPPED
#define TPL_UNM {tpl_unm, NULL}
#define TPL_BNOT STEPPED
#define TPL_NOT {tpl_not, NULL}
#define TPL_LEN {tpl_len, NULL}
#define TPL_CONCAT {tpl_concat, NULL}
#define TPL_CLOSE STEPPED
#define TPL_TBC STEPPED
#define TPL_JMP {tpl_jmp, NULL}
#define TPL_EQ {tpl_eq, tpl_cond_ok}
#define TPL_LT {tpl_lt, tpl_cond_ok}
#define TPL_LE {tpl_lt, tpl_cond_ok}
#define TPL_EQK {tpl_eqk, tpl_eqk_ok}
#define TPL_EQI {tpl_eqk, tpl_cond_ok}
#define TPL_LTI {tpl_cmpi, tpl_cond_ok}
#define TPL_LEI {tpl_cmpi, tpl_cond_ok}
#define TPL_GTI {tpl_cmpi, tpl_cond_ok}
#define TPL_GEI {tpl_cmpi, tpl_cond_ok}
#define TPL_TEST {tpl_test, tpl_cond_ok}
#define TPL_TESTSET {tpl_testset, tpl_cond_ok}
#define TPL_CALL {tpl_call, NULL}
#define TPL_TAILCALL {tpl_tailcall, NULL}
#define TPL_RETURN {tpl_return, NULL}
#define TPL_RETURN0 {tpl_return, NULL}
#define TPL_RETURN1 {tpl_return, NULL}
#define TPL_FORPREP {tpl_forprep, NULL}
#define TPL_FORLOOP {tpl_forloop, NULL}
#define TPL_TFORPREP STEPPED
#define TPL_TFORCALL {tpl_tforcall, tpl_tforcall_ok}
#define TPL_TFORLOOP {tpl_tforloop, NULL}
#define TPL_SETLIST STEPPED
#define TPL_CLOSURE {tpl_closure, NULL}
#define TPL_VARARG STEPPED
#define TPL_EXTRAARG STEPPED

static const Template templates[OP__COUNT] = {
#define TPL_ROW(name, fmt, doc) [OP_##name] = TPL_##name,
    VM_OPCODES(TPL_ROW)
#undef TPL_ROW
};

/* ======================================================================
 * Compilation
 * ====================================================================== */

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static JitCode jit_failed; /* at == NULL: interpret this function */

static void function_name(const Proto *p, char *buf, size_t n) {
    char src[80];
    if (p->source != NULL)
        vm_chunkid(src, sizeof src, p->source->data, p->source->len);
    else
        snprintf(src, sizeof src, "?");
    if (p->linedefined == 0)
        snprintf(buf, n, "main chunk %s", src);
    else
        snprintf(buf, n, "%s %s:%d", p->name ? p->name->data : "function", src, (int)p->linedefined);
}

static void dump(const Comp *c, const JitCode *jc, const uint8_t *code) {
    const Proto *p = c->p;
    char name[160];
    function_name(p, name, sizeof name);
    fprintf(stderr, "jit: %s%s: %d instructions, %d with a template, %zu bytes of code at %p\n", name,
            jit_window ? " (instrumented twin for sampling windows)" : "", (int)p->ncode, jc->ntemplated,
            jc->codesize, (const void *)code);
    fprintf(stderr, "  enter: save registers, load base/ci/S/closure, jump to the entry\n");
    long ce = c->a.label[c->callentry];
    jit_disasm(stderr, code, (size_t)ce, "      ");
    if (ce < c->a.label[0]) {
        fprintf(stderr, "  call entry: the frame's events (EV_CALL enqueued inline: cursor load, CLEAR test, "
                        "branch, store, advance), path register, room for heap accesses\n");
        jit_disasm(stderr, code + ce, (size_t)(c->a.label[0] - ce), "      ");
    }
    for (int pc = 0; pc < c->n; pc++) {
        vm_bytecode_list_instr(stderr, p, pc);
        jit_dump_known(c, pc);
        long from = c->a.label[pc], to = pc + 1 < c->n ? c->a.label[pc + 1] : (long)c->templates_end;
        if (!c->tmpl[pc]) fprintf(stderr, "      ; step: no template, the interpreter runs it (vm_jit_step)\n");
        jit_disasm(stderr, code + from, (size_t)(to - from), "      ");
    }
    fprintf(stderr, "  out of line: steps where guards fail, back-edge polls, frame switches, epilogue\n");
    jit_disasm(stderr, code + c->templates_end, c->a.len - c->templates_end, "      ");
    fflush(stderr);
}

/* The callee-saved registers the prologue pushed, popped, and return (rax). */
static void emit_restore_return(Asm *a) {
    INS1(a, POP, R(RCL));
    INS1(a, POP, R(RS));
    INS1(a, POP, R(RCI));
    INS1(a, POP, R(RBASE));
    INS1(a, POP, R(RPS));
    INS0(a, RET);
}

static JitCode *compile_locked(Proto *p) {
    Comp c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.n = p->ncode;
    if (c.n <= 0) return &jit_failed;
    JitCode *jc = NULL;
    c.stepused = calloc((size_t)c.n, sizeof *c.stepused);
    c.pollslow = malloc((size_t)c.n * sizeof *c.pollslow);
    c.backedge = malloc((size_t)c.n * sizeof *c.backedge);
    c.samplestub = malloc((size_t)c.n * sizeof *c.samplestub);
    const void **at = calloc((size_t)c.n, sizeof *at);
    bool *tmpl = calloc((size_t)c.n, sizeof *tmpl);
    if (!c.stepused || !c.pollslow || !c.backedge || !c.samplestub || !at || !tmpl) goto fail;
    c.at = at;
    c.tmpl = tmpl;
    for (int pc = 0; pc < c.n; pc++) c.pollslow[pc] = c.backedge[pc] = c.samplestub[pc] = -1;
    Asm *a = &c.a;
    for (int pc = 0; pc < c.n; pc++) jit_new_label(a);           /* labels 0 .. n-1: templates */
    c.step0 = a->nlabel;
    for (int pc = 0; pc < c.n; pc++) jit_new_label(a);           /* n .. 2n-1: steps of failed guards */
    c.epilogue = jit_new_label(a);
    c.sw = jit_new_label(a);
    c.resume = jit_new_label(a);
    c.fresh = jit_new_label(a);
    c.dispatch = jit_new_label(a);
    c.callentry = jit_new_label(a);
    if (a->failed) goto fail;

    if (jit_prof) {
        c.fid = jit_prof_id(p);
        c.pathbias = (vm_prof_needs & PROF_NEED_PATH) ? vm_pathprof_bias(p, c.fid) : VM_PATH_OFF;
    }
    /* Which pcs have a template: their opcode's row has one, for these operands. */
    int ntemplated = 0;
    for (int pc = 0; pc < c.n; pc++) {
        const Template *t = &templates[vm_op(p->code[pc])];
        tmpl[pc] = t->emit != NULL && (t->ok == NULL || t->ok(&c, pc));
        ntemplated += tmpl[pc];
    }
    /* Known types (jit_types.c), and a guarded entry for every pc where some are known. */
    jit_types_analyse(&c);
    if (c.kt != NULL) {
        if ((c.guard = malloc((size_t)c.n * sizeof *c.guard)) == NULL) goto fail;
        for (int pc = 0; pc < c.n; pc++) c.guard[pc] = jit_kt_any(&c, pc) ? jit_new_label(a) : -1;
    }
    /* The inline caches of the field sites (jit_ic.c): data, not code, so that any thread may
     * rewrite them while the code stays read + execute. */
    int nic = 0;
    for (int pc = 0; pc < c.n; pc++) nic += jit_ic_wanted(&c, pc);
    c.icchain = -1;
    c.capic = nic;
    if (nic > 0 && (c.ic = calloc((size_t)nic, sizeof *c.ic)) == NULL) goto fail;

    /* Prologue (enter): rdi = S, rsi = ci, rdx = base, rcx = target. Five pushes after the
     * return address leave rsp 16-byte aligned for calls to C. */
    INS1(a, PUSH, R(RPS));
    INS1(a, PUSH, R(RBASE));
    INS1(a, PUSH, R(RCI));
    INS1(a, PUSH, R(RS));
    INS1(a, PUSH, R(RCL));
    INS2(a, MOV, R(RS), R(RDI));
    INS2(a, MOV, R(RCI), R(RSI));
    INS2(a, MOV, R(RBASE), R(ZYDIS_REGISTER_RDX));
    INS2(a, MOV, R(RAX), M(RSI, offsetof(CallInfo, func), 8));
    INS2(a, MOV, R(RCL), M(RAX, 0, 8)); /* func->u.lf */
    jit_load_stream(&c);
    INS1(a, JMP, R(RCX));

    /* Where compiled calls enter (JitCode.callentry): the sampling tick (-Xsample.mode=code),
     * then while profiling the frame's EV_CALL (in a twin, only if the tick did not end the
     * window, as the interpreter's startfunc), then pc 0. A compiled call is made by a Lua
     * frame, so the event is never "from C". */
    jit_bind(a, c.callentry);
    jit_sample_entry_tick(&c);
    if (jit_prof) jit_emit_frame_start(&c);

    for (int pc = 0; pc < c.n; pc++) {
        jit_bind(a, L(&c, pc));
        if (pc == 0) {
            /* function entry safepoint (jit/README.md: the same poll as the interpreter's) */
            int go = jit_new_label(a);
            load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_word);
            INS2(a, CMP, M(RAX, 0, 4), I(0));
            JMP(a, JZ, go);
            load_imm64(&c, RAX, (uint64_t)(uintptr_t)p->code);
            INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
            INS2(a, MOV, R(RDI), R(RS));
            load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_slow);
            INS1(a, CALL, R(RAX));
            jit_reload_base(&c);
            jit_window_after_poll(&c);
            jit_bind(a, go);
        }
        jit_emit_count(&c); /* after the entry poll: a back edge's poll comes back to L(pc) */
        Instr i = p->code[pc];
        if (tmpl[pc])
            templates[vm_op(i)].emit(&c, a, p, pc, i, (int)vm_a(i));
        else
            jit_emit_step(&c, pc, true);
    }
    /* Out of line: steps of failed guards, back-edge polls, the epilogue. */
    c.templates_end = a->len;
    for (int pc = 0; pc < c.n; pc++) {
        if (!c.stepused[pc]) continue;
        jit_bind(a, c.step0 + pc);
        jit_emit_step(&c, pc, false);
    }
    jit_emit_guards(&c);
    for (int pc = 0; pc < c.n; pc++) {
        if (c.backedge[pc] < 0) continue;
        jit_bind(a, c.backedge[pc]);
        jit_poll_then_jump(&c, pc);
    }
    for (int pc = 0; pc < c.n; pc++) {
        if (c.pollslow[pc] < 0) continue;
        jit_bind(a, c.pollslow[pc]);
        load_imm64(&c, RAX, (uint64_t)(uintptr_t)(p->code + pc));
        INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
        INS2(a, MOV, R(RDI), R(RS));
        load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_slow);
        INS1(a, CALL, R(RAX));
        jit_reload_base(&c);
        jit_window_after_poll(&c);
        JMP(a, JMP, jit_entry(&c, pc)); /* another thread or a finalizer may have run */
    }
    /* After a step that may jump (a test, a generic for, a float loop): poll, since the jump
     * may be a back edge, then go on at the pc in rax through the table of code addresses. */
    {
        int go = jit_new_label(a), slow = jit_new_label(a);
        jit_bind(a, c.dispatch);
        jit_sample_after_step(&c);
        load_imm64(&c, RCX, (uint64_t)(uintptr_t)&vm_poll_word);
        INS2(a, CMP, M(RCX, 0, 4), I(0));
        JMP(a, JNZ, slow);
        jit_bind(a, go);
        load_imm64(&c, RCX, (uint64_t)(uintptr_t)p->code);
        INS2(a, SUB, R(RAX), R(RCX));
        load_imm64(&c, RCX, (uint64_t)(uintptr_t)at);
        INS1(a, JMP, MX(RCX, RAX, 1, 0, 8)); /* at[pc]: Instr and pointers are both 8 bytes */
        jit_bind(a, slow);
        INS2(a, MOV, R(RDI), R(RS));
        load_imm64(&c, RAX, (uint64_t)(uintptr_t)&vm_poll_slow);
        INS1(a, CALL, R(RAX));
        jit_reload_base(&c);
        jit_window_after_poll(&c);
        INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, savedpc), 8));
        JMP(a, JMP, go);
    }
    /* Calls and returns: switch to the frame S->ci (ci, base, closure) and jump to rax. */
    jit_bind(a, c.sw);
    INS2(a, MOV, R(RCI), M(RS, offsetof(State, ci), 8));
    INS2(a, MOV, R(RBASE), M(RCI, offsetof(CallInfo, func), 8));
    INS2(a, MOV, R(RCL), M(RBASE, 0, 8)); /* func->u.lf */
    INS2(a, ADD, R(RBASE), I(16));
    jit_load_stream(&c); /* after a helper in C (jit_call may have run a C function) */
    INS1(a, JMP, R(RAX));
    jit_emit_edge_stubs(&c);
    jit_emit_ic_chain(&c);
    jit_emit_slow_stubs(&c);
    jit_emit_sample_stubs(&c);
    /* The interpreter continues S->ci at its savedpc (the epilogue stores it back, unchanged). */
    jit_bind(a, c.resume);
    INS2(a, MOV, R(RCI), M(RS, offsetof(State, ci), 8));
    INS2(a, MOV, R(RAX), M(RCI, offsetof(CallInfo, savedpc), 8));
    JMP(a, JMP, c.epilogue);
    /* A CIST_FRESH frame returned: give NULL back without touching its savedpc. */
    jit_bind(a, c.fresh);
    INS2(a, XOR, R(EAX), R(EAX));
    emit_restore_return(a);
    jit_bind(a, c.epilogue);
    INS2(a, MOV, M(RCI, offsetof(CallInfo, savedpc), 8), R(RAX));
    emit_restore_return(a);
    jit_patch(a);
    if (a->failed) goto fail;

    size_t mapped;
    uint8_t *mem = jit_mem_publish(a->buf, a->len, &mapped);
    if (mem == NULL) goto fail;
    jc = malloc(sizeof *jc);
    if (jc == NULL) {
        munmap(mem, mapped);
        goto fail;
    }
    /* before jc is published; every entry from outside (the interpreter, a step's dispatch,
     * a return) tests the facts known there */
    for (int pc = 0; pc < c.n; pc++) at[pc] = mem + a->label[jit_entry(&c, pc)];
    jc->enter = (JitEnterFn)(void *)mem;
    jc->at = at;
    jc->callentry = mem + a->label[c.callentry];
    jc->mem = mem;
    jc->memsize = mapped;
    jc->codesize = a->len;
    jc->ntemplated = ntemplated;
    jc->ic = c.ic;
    jc->nic = c.nic;
    c.ic = NULL;
    if (jit_opts.dump) dump(&c, jc, mem);
    if (jit_opts.perfmap) {
        char name[160];
        function_name(p, name, sizeof name);
        jit_perfmap_add(mem, a->len, name);
    }
    at = NULL;
fail:
    free(at);
    free(c.stepused);
    free(c.pollslow);
    free(c.backedge);
    free(c.samplestub);
    free(tmpl);
    free(c.kt);
    free(c.guard);
    if (jc == NULL && jit_opts.dump) {
        char name[160];
        function_name(p, name, sizeof name);
        fprintf(stderr, "jit: %s: not compiled (%s%s%s), interpreted\n", name, c.a.why ? c.a.why : "out of memory",
                c.a.why && c.a.whymn ? ": " : "", c.a.why && c.a.whymn ? ZydisMnemonicGetString((ZydisMnemonic)c.a.whymn) : "");
    }
    free(c.ic);
    free(c.edge);
    free(c.slow);
    free(c.a.buf);
    free(c.a.label);
    free(c.a.fix);
    return jc ? jc : &jit_failed;
}

const JitCode *jit_compile(Proto *p) {
    pthread_mutex_lock(&jit_lock);
    JitCode *jc = p->jit; /* another thread may have compiled it while we waited */
    if (jc == NULL) {
        jc = compile_locked(p);
        __atomic_store_n(&p->jit, jc, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&jit_lock);
    return jc;
}

/* Not yet (jit_compile_window): at == NULL, so the hand-over and the call helpers leave the
 * frame to the instrumented interpreter this time, as for a function that cannot be compiled;
 * never stored in p->jitwin. */
static JitCode jit_later;

/* The instrumented twin (jit_api.h): the same compilation with the events on (jit_prof) and
 * the windows' rules (jit_window). Both flags are compile-time state, read by the templates
 * only while this thread holds the lock; what runs in other threads meanwhile reads neither
 * (their helpers read jit_events and jit_sample, which never change here).
 *
 * A twin is compiled lazily, at the -Xsample.twin-th time a window meets a frame of the
 * function (Proto.wintries counts them: each hand-over of one of its frames, at an entry, a
 * back edge or a return, while it has no twin), so code no window reaches costs nothing but
 * its plain version, and code windows reach seldom runs in the instrumented interpreter
 * rather than paying a compilation it would not earn back (a rent-or-buy rule: a twin is
 * bought once renting has cost about as much). Either way the window's events are the same
 * (vm_sample.h: compiled and interpreted windows give the same profile), so the count only
 * moves cost. It is read and written relaxed, without the lock: threads racing on it may lose
 * counts, which only delays the twin. */
const JitCode *jit_compile_window(Proto *p) {
    uint32_t met = __atomic_load_n(&p->wintries, __ATOMIC_RELAXED);
    if ((uint64_t)met + 1 < vm_sample_opts.twin) {
        __atomic_store_n(&p->wintries, met + 1, __ATOMIC_RELAXED);
        return &jit_later;
    }
    pthread_mutex_lock(&jit_lock);
    JitCode *jc = p->jitwin;
    if (jc == NULL) {
        jit_prof = jit_window = true;
        jc = compile_locked(p);
        jit_prof = jit_window = false;
        __atomic_store_n(&p->jitwin, jc, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&jit_lock);
    return jc;
}
