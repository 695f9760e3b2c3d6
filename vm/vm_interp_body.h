/* vm_interp_body.h: the body of the interpreter loop, included by vm_interp.c once per row
 * of its variant table, with VM_EXEC_ROW defined as "name, INSTR, JIT, STEP, ORACLE, HOOK" (what
 * each flag means: the table's comment). The row is taken apart here, and every macro this
 * file defines is undefined at its end, so the next row starts clean.
 * Not a header of its own: no include guard, and it defines a function. */
#ifndef VM_EXEC_ROW
#error "vm_interp_body.h is included by vm_interp.c only, with VM_EXEC_ROW defined"
#endif
#define VM_ROW_APPLY(f, ...) f(__VA_ARGS__)
#define VM_ROW_NAME(name, instr, jit, step, oracle, hook) name
#define VM_ROW_INSTR(name, instr, jit, step, oracle, hook) instr
#define VM_ROW_JIT(name, instr, jit, step, oracle, hook) jit
#define VM_ROW_STEP(name, instr, jit, step, oracle, hook) step
#define VM_ROW_ORACLE(name, instr, jit, step, oracle, hook) oracle
#define VM_ROW_HOOK(name, instr, jit, step, oracle, hook) hook
#define VM_EXEC_NAME VM_ROW_APPLY(VM_ROW_NAME, VM_EXEC_ROW)
#define VM_EXEC_INSTR VM_ROW_APPLY(VM_ROW_INSTR, VM_EXEC_ROW)
#define VM_EXEC_JIT VM_ROW_APPLY(VM_ROW_JIT, VM_EXEC_ROW)
#define VM_EXEC_STEP VM_ROW_APPLY(VM_ROW_STEP, VM_EXEC_ROW)
#define VM_EXEC_ORACLE VM_ROW_APPLY(VM_ROW_ORACLE, VM_EXEC_ROW)
#define VM_EXEC_HOOK VM_ROW_APPLY(VM_ROW_HOOK, VM_EXEC_ROW)
/* The combinations the body is written for. */
#if VM_EXEC_ORACLE && (!VM_EXEC_INSTR || VM_EXEC_JIT || VM_EXEC_STEP)
#error "the oracle copy is instrumented, without the JIT or steps"
#endif
#if VM_EXEC_JIT && VM_EXEC_STEP
#error "a copy either hands frames to the JIT or steps for it"
#endif
#if VM_EXEC_HOOK && (VM_EXEC_JIT || VM_EXEC_STEP || VM_EXEC_ORACLE)
#error "the hooked copies interpret everything themselves, without the oracle"
#endif
/* Sampled instrumentation (vm/prof/vm_sample.h): the sampling rows of vm_interp.c define
 * VM_EXEC_SAMPLE 1 before the include (a flag outside the row, so the other rows stay as
 * they are); for every other row it is 0 here. */
#ifndef VM_EXEC_SAMPLE
#define VM_EXEC_SAMPLE 0
#endif
#if VM_EXEC_SAMPLE && (VM_EXEC_ORACLE || VM_EXEC_HOOK || (VM_EXEC_STEP && !VM_EXEC_INSTR))
#error "the sampling copies are the plain one (with or without the JIT), the instrumented one (with or without the JIT) and its step"
#endif
/* The instrumented sampling step (vm_jit_step_window, for the twins' steps) counts no tick
 * and never switches: its caller counts the tick of a stepped back edge, and compiled code
 * checks the countdown after the step. */
#define VM_EXEC_SAMPLE_SWITCHES (VM_EXEC_SAMPLE && !VM_EXEC_STEP)

static void VM_EXEC_NAME(State *S, CallInfo *ci) {
    LClosure *cl;
    const Value *k;
    Value *base;
    const Instr *pc;
    Instr i;

    static const void *const dispatch[OP__COUNT] = {
#define VM_OP_LABEL(name, fmt, doc) &&L_##name,
        VM_OPCODES(VM_OP_LABEL)
#undef VM_OP_LABEL
    };

/* Macros for this function only. */
#define A() vm_a(i)
#define B() vm_b(i)
#define C() vm_c(i)
#define RA() (base + vm_a(i))
#define RB() (base + vm_b(i))
#define RC() (base + vm_c(i))
#define KB() (k + vm_b(i))
#define KC() (k + vm_c(i))
#define RKC() (vm_k(i) ? k + vm_c(i) : base + vm_c(i))
/* COUNT_INSTR: the instruction count of the stream (VmProfStream.icount, EV_ICOUNT) for the
 * cost of activations (PROF_NEED_COST), at every dispatch of the instrumented copies. Not in
 * the step copies: compiled code counts an instruction when it enters the instruction's code,
 * before a guard may fail and step it, so every instruction run counts once whichever of the
 * two ran it (jit_tpl_prof.c jit_emit_count). An instruction skipped over without dispatch
 * (the JMP after a test, SETLIST's extra word) is not counted by either. */
#if VM_EXEC_INSTR && !VM_EXEC_STEP
#define COUNT_INSTR() \
    do { \
        if (vm_prof_needs & PROF_NEED_COST) vm_prof_tl->icount++; \
    } while (0)
#else
#define COUNT_INSTR() ((void)0)
#endif
#if VM_EXEC_STEP
/* The step copy (vm_jit_step) runs one instruction: the next one is not dispatched but
 * left in ci->savedpc for the compiled code that asked. */
#define NEXT() \
    do { \
        ci->savedpc = pc; \
        return; \
    } while (0)
#define ORACLE_AT(ipc) ((void)0)
#elif VM_EXEC_ORACLE
#define NEXT() \
    do { \
        i = *pc++; \
        COUNT_INSTR(); \
        vm_pathoracle_at(ci, cl->p, pc - 1); \
        goto *dispatch[vm_op(i)]; \
    } while (0)
#define ORACLE_AT(ipc) vm_pathoracle_at(ci, cl->p, (ipc))
#elif VM_EXEC_HOOK
/* The hooked copy: count and line events before each instruction (vm_hook_trace, with
 * savedpc after it as lua5.4's luaG_traceexec has it). The hook runs Lua code, which may
 * move the stack and write registers (debug.setlocal): the instruction reads them after. */
#define NEXT() \
    do { \
        i = *pc++; \
        COUNT_INSTR(); \
        if (S->hookmask & (VM_MASKLINE | VM_MASKCOUNT)) { \
            ci->savedpc = pc; \
            vm_hook_trace(S, ci); \
            base = ci->func + 1; \
        } \
        goto *dispatch[vm_op(i)]; \
    } while (0)
#define ORACLE_AT(ipc) ((void)0)
#else
#define NEXT() \
    do { \
        i = *pc++; \
        COUNT_INSTR(); \
        goto *dispatch[vm_op(i)]; \
    } while (0)
#define ORACLE_AT(ipc) ((void)0)
#endif
/* Instrumentation (ev_api.h), in the instrumented loops only, each kind only when an
 * enabled analysis needs it (vm_prof_needs):
 *   MEMEV: a heap load or store at [addr]: the table slot or upvalue read or written on
 *          the fast paths; the table (or the value indexed) on the slow ones (absent keys,
 *          metamethods, inserts), where no single slot stands for the access; after EV_PC
 *          (the instruction dispatched, at pc - 1) when PROF_NEED_PC;
 *   PATHACT: the Ball-Larus action of outcome [o] of the branching instruction just
 *          dispatched (at pc - 1), taken before pc moves;
 *   PATHEXIT: the frame's path ends (returns, tail calls). */
#if VM_EXEC_INSTR
#define MEMEV(kind, addr) \
    do { \
        if (vm_prof_needs & PROF_NEED_MEM) { \
            if (__builtin_expect(vm_prof_needs & PROF_NEED_PC, 0)) \
                vm_prof_emit_mem_pc(ci, pc - 1, ev_make((kind), (uintptr_t)(addr))); \
            else \
                vm_prof_emit_mem(ev_make((kind), (uintptr_t)(addr))); \
        } \
    } while (0)
/* Heap-access events never wait (vm_prof_emit_mem): room for them is reserved where this
 * frame may wait, at its safepoints (entry, back edges) and where it gets control back
 * after code that may have used the room (a return into it, a C call, a metamethod). At
 * most one EV_LOAD/EV_STORE (with its EV_PC) and one EV_PATH (a cut edge) per instruction
 * run, and no instruction runs twice between two of those points: 2 (3 with EV_PC) x ncode
 * is enough (vm_prof_frame_room). */
#define RESERVE_FOR(p) vm_prof_reserve_frame(p)
#if VM_EXEC_SAMPLE /* a path that began before the window is not emitted (vm_sample.h) */
#define PATH_ACT_FN vm_sample_path_act
#define FRAME_EXIT_FN vm_sample_frame_exit_events
#define SAMPLE_OWN() vm_sample_own(ci, cl->p)
#else
#define PATH_ACT_FN vm_prof_path_act
#define FRAME_EXIT_FN vm_prof_frame_exit_events
#define SAMPLE_OWN() ((void)0)
#endif
#define PATHACT(o) \
    do { \
        SAMPLE_OWN(); \
        if (ci->pathbias != VM_PATH_OFF) PATH_ACT_FN(ci, cl->p->id, pc - 1, (o)); \
    } while (0)
#define FRAMEEXIT(ret) \
    do { \
        SAMPLE_OWN(); \
        FRAME_EXIT_FN(ci, cl->p->id, (ret)); \
    } while (0)
#define PATHEXIT() FRAMEEXIT(false)
#else
#define MEMEV(kind, addr) ((void)0)
#define RESERVE_FOR(p) ((void)0)
#define PATHACT(o) ((void)0)
#define PATHEXIT() ((void)0)
#endif
#define SAVEPC() (ci->savedpc = pc)
#define Protect(x) \
    do { \
        ci->savedpc = pc; \
        S->top = ci->top; \
        x; \
        base = ci->func + 1; \
    } while (0)
/* The slow end of every table read: __index chains, non-tables, errors. */
#define FINISHGET(t, key, slot) \
    do { \
        Value v_; \
        MEMEV(EV_LOAD, vm_prof_mem_target(t)); \
        Protect(v_ = vm_finishget(S, t, key, slot)); \
        *RA() = v_; \
        NEXT(); \
    } while (0)
/* Safepoint poll (function entry and loop back edges): one load, one compare and branch;
 * the slow path may park this thread for a collection or switch green threads. */
#define POLL() \
    do { \
        if (VM_POLL_PENDING()) { \
            ci->savedpc = pc; \
            vm_poll_slow(S); \
            SAMPLECHECK(); /* another green thread may have opened or closed a window */ \
        } \
        SAMPLE_TICK_BACK(); \
    } while (0)
/* Sampled instrumentation (vm/prof/vm_sample.h), in the sampling copies only:
 *   SAMPLE_TICK_BACK: a back edge's tick (pc at the loop header, after the back edge's own
 *          path action): count down; at 0 give the frame to the trampoline, which flips the
 *          phase and continues it in the other copy. Between windows this decrement and
 *          branch is all that profiling costs.
 *   SAMPLECHECK: after what may have opened or closed a window on this thread while this copy
 *          waited (a call into C, which may run Lua code in a nested interpreter; a poll,
 *          which may switch green threads; compiled code, which counts ticks itself and
 *          comes back with the countdown at 0): if this copy is no longer the one the
 *          thread's phase wants, or (instrumented) the window is not the one that last took
 *          over this state's frames, switch. [at] stays as compiled code's exit stubs left
 *          it (VM_SAMPLE_AT_ENTRY, _BACK), else VM_SAMPLE_AT_MID. */
#if VM_EXEC_SAMPLE_SWITCHES
#if VM_EXEC_INSTR && VM_EXEC_JIT
/* ... also a tick of the instrumented twin that ended the window (its exit stub gives the
 * frame back with the countdown at 0, as the plain code's does at the end of a gap) */
#define SAMPLE_STALE() (S->sample_win != vm_sample_tl.window || vm_sample_tl.left <= 0)
#elif VM_EXEC_INSTR
#define SAMPLE_STALE() (S->sample_win != vm_sample_tl.window)
#else
#define SAMPLE_STALE() (vm_sample_tl.window != 0 || vm_sample_tl.left <= 0)
#endif
#define SAMPLE_TICK_BACK() \
    do { \
        if (__builtin_expect(--vm_sample_tl.left <= 0, 0)) { \
            vm_sample_tl.at = VM_SAMPLE_AT_BACK; \
            goto sample_switch; \
        } \
    } while (0)
#define SAMPLECHECK() \
    do { \
        if (__builtin_expect(SAMPLE_STALE(), 0)) goto sample_switch; \
    } while (0)
#else
#define SAMPLE_TICK_BACK() ((void)0)
#define SAMPLECHECK() ((void)0)
#endif
/* JIT hand-over (jit/jit_api.h), in the VM_EXEC_JIT copy only (so the plain loop pays nothing
 * while the JIT is off): run the frame's compiled code from pc if it has an entry there,
 * then continue interpreting at the pc it gives back (where it met an instruction without a
 * template or a failed type guard). [compile]: also compile the function if nobody has yet
 * (frame entry and returns into the frame; back edges only look). */
#if VM_EXEC_JIT
/* The instrumented sampling copy hands frames to the functions' instrumented twins, compiling
 * a twin at any hand-over once due (-Xsample.twin hand-overs: jit_compile_window), back edges
 * included: a window reaches a function's loop only after its plain code ran, and a loop that
 * never returns into its frame would otherwise stay interpreted in every window. */
#if VM_EXEC_SAMPLE && VM_EXEC_INSTR
#define JIT_HANDOVER(compile) jit_handover_window(S, ci, cl->p, base, pc)
#else
#define JIT_HANDOVER(compile) jit_handover(S, ci, cl->p, base, pc, (compile))
#endif
/* Compiled code may have called and returned through other frames (jit_api.h): carry on with
 * S->ci, or return to C if the frame entered from C has returned. */
#define JITENTER(compile) \
    do { \
        const Instr *jpc_ = JIT_HANDOVER(compile); \
        ci = S->ci; \
        if (jpc_ == NULL) { /* as at 'ret' */ \
            S->ci = ci->prev; \
            if (VM_EXEC_INSTR && !(ci->prev->callstatus & CIST_C)) RESERVE_FOR(ci->prev->func->u.lf->p); \
            return; \
        } \
        cl = ci->func->u.lf; \
        k = cl->p->k; \
        pc = jpc_; \
        base = ci->func + 1; \
        HOOKSWITCH(); /* compiled code gives a frame back after a C call that set a hook */ \
        SAMPLECHECK(); /* ... or at a tick that ended the gap, or after a C call that opened a window */ \
    } while (0)
#else
#define JITENTER(compile) ((void)0)
#endif
/* Debug hooks. A copy without them hands the rest of its frames to a hooked copy when a hook
 * was set on this coroutine by a call into C that just returned (debug.sethook; a yield
 * after which another coroutine set one): the frame continues at pc there, and this copy
 * returns when that one does, since it runs until the same CIST_FRESH frame returns. Only
 * those points test, once per call into C; a hook set inside a metamethod or by a C
 * function reached through a tail call starts at the next of them, or at the next entry
 * into the interpreter. The hooked copies never switch back: with hooks cleared they only
 * test the mask. HOOKRET: the return event of the frame before its [n] results at [ra]
 * move (ra is re-derived: the hook may move the stack). */
#if VM_EXEC_HOOK
#define HOOKSWITCH() ((void)0)
#define HOOKRET(ra, n) \
    do { \
        if (S->hookmask) { \
            int first_ = (int)((ra) - ci->func); \
            ci->savedpc = pc; \
            S->top = (ra) + (n); \
            vm_hook_return(S, ci, first_, (n)); \
            base = ci->func + 1; \
            (ra) = ci->func + first_; \
        } \
    } while (0)
#elif VM_EXEC_STEP
#define HOOKSWITCH() ((void)0)
#define HOOKRET(ra, n) ((void)0)
#else
#define HOOKSWITCH() \
    do { \
        if (__builtin_expect(S->hookmask != 0, 0)) { \
            ci->savedpc = pc; \
            execute_hooked(S, ci); \
            return; \
        } \
    } while (0)
#define HOOKRET(ra, n) ((void)0)
#endif
/* lua5.4 follows each binary arithmetic instruction with an MMBIN that runs, and is counted
 * by count hooks, when the operands are not numbers (for bitwise operators: not integers);
 * the hooked copies count one instruction more there (vm_hook_mmbin). */
#if VM_EXEC_HOOK
#define INSTACK(p) ((p) >= S->stack && (p) < S->stack_last + VM_EXTRA_STACK)
#define MMBIN_COUNT(tm, pa, pb) \
    do { \
        if ((S->hookmask & VM_MASKCOUNT) && vm_hook_mmbin_due(S, (tm), (pa), (pb))) { \
            /* the hook may move the stack: operands in it are found again */ \
            bool ina_ = INSTACK(pa), inb_ = INSTACK(pb); \
            ptrdiff_t oa_ = vm_savestack(S, (pa)), ob_ = vm_savestack(S, (pb)); \
            ci->savedpc = pc; \
            vm_hook_count(S); \
            base = ci->func + 1; \
            if (ina_) (pa) = vm_restorestack(S, oa_); \
            if (inb_) (pb) = vm_restorestack(S, ob_); \
        } \
    } while (0)
#else
#define MMBIN_COUNT(tm, pa, pb) ((void)0)
#endif
/* Take (or skip) the JMP that follows a conditional test. A taken JMP that goes back to or
 * before the test is a loop back edge (the compiler chains jumps: `while c do if x then ...
 * end end` ends its body with the test's JMP straight to the loop's start), so it polls and
 * reserves as compiled code's back edges do (jit_tpl_branch.c, target_label): a loop
 * closed by such an edge would otherwise never reach a safepoint and hold up every
 * collection. No sampling tick: compiled code has none there either, and the two must
 * count the same ticks (vm_sample.h). The step copies leave it to compiled code, which
 * polls after every step that may jump (jit_compile.c). */
#define CONDJUMP(cond) \
    do { \
        if ((cond) != (int)vm_k(i)) { \
            PATHACT(0); \
            pc++; \
        } else { \
            PATHACT(1); \
            ORACLE_AT(pc); /* the JMP, a block of its own if something else jumps to it */ \
            int off_ = vm_sbx(*pc); \
            pc += off_ + 1; \
            if (!VM_EXEC_STEP && off_ < -1) { \
                if (VM_POLL_PENDING()) { \
                    ci->savedpc = pc; \
                    vm_poll_slow(S); \
                    SAMPLECHECK(); \
                } \
                RESERVE_FOR(cl->p); \
            } \
        } \
    } while (0)

#if VM_EXEC_STEP
    /* One instruction of the frame [ci] at its savedpc: never a call or a return, whose
     * handlers go on to other frames (jit.c only steps the others). */
    cl = ci->func->u.lf;
    k = cl->p->k;
    base = ci->func + 1;
    pc = ci->savedpc;
    i = *pc++;
    goto *dispatch[vm_op(i)];
#endif
#if VM_EXEC_HOOK
    /* Entered by HOOKSWITCH in the middle of the frame (lua5.4 tells the two apart the same
     * way): carry on at its savedpc, its start's events are past. */
    if (ci->savedpc != ci->func->u.lf->p->code) goto returning;
#endif
#if VM_EXEC_SAMPLE_SWITCHES
    /* The trampoline (vm_interp.c, execute_sampled) continues a frame here: at its entry,
     * past the tick that switched (its start events still to come), or inside it. */
    {
        uint8_t enter_ = vm_sample_tl.enter;
        vm_sample_tl.enter = VM_SAMPLE_ENTER_FRESH;
        if (enter_ == VM_SAMPLE_ENTER_START) goto sample_started;
        if (enter_ == VM_SAMPLE_ENTER_MID) goto returning;
    }
#endif
startfunc:
    if (VM_POLL_PENDING()) vm_poll_slow(S);
#if VM_EXEC_SAMPLE_SWITCHES
    /* The entry's tick (the frame's savedpc is its first instruction) */
    if (__builtin_expect(--vm_sample_tl.left <= 0, 0)) {
        vm_sample_tl.at = VM_SAMPLE_AT_ENTRY;
        vm_sample_tl.switching = 1;
        return;
    }
sample_started:
#endif
#if VM_EXEC_INSTR
    /* Function entry: every Lua frame starts here (fresh calls from C, inline Lua-to-Lua
     * calls, tail calls); frames we return into go to 'returning' below. */
    vm_prof_frame_start_events(S, ci);
#if VM_EXEC_SAMPLE
    ci->callstatus &= (uint16_t)~CIST_SAMPLEPART; /* a new path, wholly in the window */
    ci->samplewin = vm_sample_tl.window;
#endif
#if VM_EXEC_ORACLE
    vm_pathoracle_enter(ci, ci->func->u.lf->p);
#endif
#endif
#if VM_EXEC_HOOK
    if (S->hookmask) vm_hook_call(S, ci);
#endif
returning:
    cl = ci->func->u.lf;
    k = cl->p->k;
    base = ci->func + 1;
    pc = ci->savedpc;
    RESERVE_FOR(cl->p);
    JITENTER(true);
    NEXT();

L_MOVE:
    *RA() = *RB();
    NEXT();
L_LOADK:
    *RA() = k[vm_bx(i)];
    NEXT();
L_LOADI:
    *RA() = vm_int(vm_sbx(i));
    NEXT();
L_LOADF:
    *RA() = vm_float((double)vm_sbx(i));
    NEXT();
L_LOADNIL: {
    Value *ra = RA();
    for (int n = (int)B(); n >= 0; n--) (ra++)->tt = VT_NIL;
    NEXT();
}
L_LOADFALSE:
    RA()->tt = VT_FALSE;
    NEXT();
L_LOADTRUE:
    RA()->tt = VT_TRUE;
    NEXT();
/* Upvalues and table slots may be shared with other threads: whole-Value loads and
 * stores (vm_loadv / vm_load16 / vm_copyv, see vm_value.h), and decisions on the private
 * copy. One exception, for speed: whether a slot just loaded whole is nil is read from the
 * slot's tag (one compare with memory instead of taking the tag out of the vector). It only
 * chooses between the fast path (which stores the whole copy) and the metamethod path; no
 * payload is used on its strength, so under a racing store either outcome returns a value
 * the slot held. */
/* An upvalue open on another thread's stack goes through vm_upval_foreign (vm_func.c,
 * "Foreign accesses"); GETTABUP and SETTABUP then work on the copy of its value. */
L_GETUPVAL: {
    UpVal *u = cl->upvals[B()];
    const Value *uv = __atomic_load_n(&u->v, __ATOMIC_ACQUIRE);
    if (vm_upval_direct(S, u, uv))
        vm_copyv(RA(), uv);
    else
        uv = vm_upval_foreign(u, RA(), NULL);
    MEMEV(EV_LOAD, uv);
    NEXT();
}
L_SETUPVAL: {
    UpVal *u = cl->upvals[B()];
    Value *uv = __atomic_load_n(&u->v, __ATOMIC_ACQUIRE);
    const Value *at = uv;
    if (vm_upval_direct(S, u, uv))
        vm_copyv(uv, RA());
    else
        at = vm_upval_foreign(u, NULL, RA());
    MEMEV(EV_STORE, at);
    (void)at; /* unused where MEMEV is empty */
    NEXT();
}
L_GETTABUP: {
    Value tv;
    const Value *uvp = vm_upval_value(S, cl->upvals[B()], &tv);
    const Value *key = KC();
    if (tv.tt == VT_TABLE) {
        const Value *slot = vm_table_getstr_inline(tv.u.t, key->u.s);
        vm_V16 v = vm_load16(slot); /* decided on this copy, not on a second load */
        if (vm_v16_tt(v) != VT_NIL || tv.u.t->meta == NULL) {
            MEMEV(EV_LOAD, slot);
            vm_put16(RA(), v);
            NEXT();
        }
        FINISHGET(uvp, key, &vm_absent);   /* the upvalue itself, for error messages */
    }
    FINISHGET(uvp, key, NULL);
}
L_SETTABUP: {
    Value tv;
    const Value *uvp = vm_upval_value(S, cl->upvals[A()], &tv);
    const Value *key = KB();
    const Value *val = RKC();
    if (tv.tt == VT_TABLE) {
        Value *slot = vm_table_slotstr(tv.u.t, key->u.s);
        if (slot != NULL) {
            MEMEV(EV_STORE, slot);
            vm_copyv(slot, val);
            NEXT();
        }
    }
    MEMEV(EV_STORE, vm_prof_mem_target(uvp));
    Protect(vm_finishset(S, uvp, key, val));
    NEXT();
}
L_GETTABLE: {
    const Value *t = RB();
    const Value *key = RC();
    if (t->tt == VT_TABLE) {
        Table *h = t->u.t;
        const Value *slot;
        const TabArr *ap = vm_table_arr(h);
        if (key->tt == VT_INT && (vm_Unsigned)key->u.i - 1u < ap->size)
            slot = &ap->v[key->u.i - 1];
        else
            slot = vm_table_get(h, key);
        vm_V16 v = vm_load16(slot);
        if (vm_v16_tt(v) != VT_NIL || h->meta == NULL) { /* the copy's tag, not a second load */
            MEMEV(EV_LOAD, slot);
            vm_put16(RA(), v);
            NEXT();
        }
        FINISHGET(t, key, &vm_absent);
    }
    FINISHGET(t, key, NULL);
}
L_GETI: {
    const Value *t = RB();
    vm_Integer n = (vm_Integer)C();
    if (t->tt == VT_TABLE) {
        Table *h = t->u.t;
        const TabArr *ap = vm_table_arr(h);
        const Value *slot = ((vm_Unsigned)n - 1u < ap->size) ? &ap->v[n - 1] : vm_table_getint(h, n);
        vm_V16 v = vm_load16(slot);
        if (vm_v16_tt(v) != VT_NIL || h->meta == NULL) { /* the copy's tag, not a second load */
            MEMEV(EV_LOAD, slot);
            vm_put16(RA(), v);
            NEXT();
        }
    }
    Value key = vm_int(n);
    FINISHGET(t, &key, t->tt == VT_TABLE ? &vm_absent : NULL);
}
L_GETFIELD: {
    const Value *t = RB();
    const Value *key = KC();
    if (t->tt == VT_TABLE) {
        const Value *slot = vm_table_getstr_inline(t->u.t, key->u.s);
        vm_V16 v = vm_load16(slot); /* decided on this copy, not on a second load */
        if (vm_v16_tt(v) != VT_NIL || t->u.t->meta == NULL) {
            MEMEV(EV_LOAD, slot);
            vm_put16(RA(), v);
            NEXT();
        }
        /* __index = class tables, inline (method lookups) */
        const Value *s2 = vm_index_str_inline(S, t->u.t, key->u.s);
        if (s2 != NULL) {
            /* The walk found s2 holding a value; a racing thread may have removed it since
             * (the chain would then go on past that table): a nil now takes the slow path. */
            vm_V16 v2 = vm_load16(s2);
            if (vm_v16_tt(v2) != VT_NIL || s2 == &vm_absent) {
                MEMEV(EV_LOAD, s2 == &vm_absent ? (const void *)t->u.t : (const void *)s2);
                vm_put16(RA(), v2);
                NEXT();
            }
        }
        FINISHGET(t, key, &vm_absent);
    }
    FINISHGET(t, key, NULL);
}
L_SETTABLE: {
    const Value *t = RA();
    const Value *key = RB();
    const Value *val = RKC();
    if (t->tt == VT_TABLE) {
        Table *h = t->u.t;
        TabArr *ap = vm_table_arr(h);
        if (key->tt == VT_INT && (vm_Unsigned)key->u.i - 1u < ap->size &&
            (!vm_isnil(&ap->v[key->u.i - 1]) || h->meta == NULL)) {
            MEMEV(EV_STORE, &ap->v[key->u.i - 1]);
            vm_copyv(&ap->v[key->u.i - 1], val);
            NEXT();
        }
        Value *slot = vm_table_slot(h, key);
        if (slot != NULL) {
            MEMEV(EV_STORE, slot);
            vm_copyv(slot, val);
            NEXT();
        }
        if (h->meta == NULL) {
            MEMEV(EV_STORE, h);
            Protect(vm_table_set(S, h, key, val));
            NEXT();
        }
    }
    MEMEV(EV_STORE, vm_prof_mem_target(t));
    Protect(vm_finishset(S, t, key, val));
    NEXT();
}
L_SETI: {
    const Value *t = RA();
    vm_Integer n = (vm_Integer)B();
    const Value *val = RKC();
    if (t->tt == VT_TABLE) {
        Table *h = t->u.t;
        TabArr *ap = vm_table_arr(h);
        if ((vm_Unsigned)n - 1u < ap->size && (!vm_isnil(&ap->v[n - 1]) || h->meta == NULL)) {
            MEMEV(EV_STORE, &ap->v[n - 1]);
            vm_copyv(&ap->v[n - 1], val);
            NEXT();
        }
        if (h->meta == NULL) {
            MEMEV(EV_STORE, h);
            Protect(vm_table_setint(S, h, n, val));
            NEXT();
        }
    }
    Value key = vm_int(n);
    MEMEV(EV_STORE, vm_prof_mem_target(t));
    Protect(vm_finishset(S, t, &key, val));
    NEXT();
}
L_SETFIELD: {
    const Value *t = RA();
    const Value *key = KB();
    const Value *val = RKC();
    if (t->tt == VT_TABLE) {
        Table *h = t->u.t;
        Value *slot = vm_table_slotstr(h, key->u.s);
        if (slot != NULL) {
            MEMEV(EV_STORE, slot);
            vm_copyv(slot, val);
            NEXT();
        }
        if (vm_newindex_absent(S, h)) { /* a new key and no __newindex: raw insert, one probe */
            MEMEV(EV_STORE, h);
            Protect(vm_table_setstr(S, h, key->u.s, val));
            NEXT();
        }
    }
    MEMEV(EV_STORE, vm_prof_mem_target(t));
    Protect(vm_finishset(S, t, key, val));
    NEXT();
}
L_NEWTABLE: {
    Table *t;
    Protect(t = vm_table_new(S, C(), B()));
    *RA() = vm_table(t);
    NEXT();
}
L_SELF: {
    const Value *t = RB();
    const Value *key = RKC();
    Value tv = *t;
    Value *ra = RA();
    ra[1] = tv;
    if (tv.tt == VT_TABLE && key->tt == VT_STR) {
        const Value *slot = vm_table_getstr_inline(tv.u.t, key->u.s);
        vm_V16 v = vm_load16(slot); /* decided on this copy, not on a second load */
        if (vm_v16_tt(v) != VT_NIL || tv.u.t->meta == NULL) { /* as GETFIELD (and the JIT's SELF) */
            MEMEV(EV_LOAD, slot);
            vm_put16(RA(), v);
            NEXT();
        }
        /* The method usually sits in a class table up the __index chain. */
        const Value *s2 = vm_index_str_inline(S, tv.u.t, key->u.s);
        if (s2 != NULL) {
            vm_V16 v2 = vm_load16(s2); /* as GETFIELD: a value removed since the walk: slow path */
            if (vm_v16_tt(v2) != VT_NIL || s2 == &vm_absent) {
                MEMEV(EV_LOAD, s2 == &vm_absent ? (const void *)tv.u.t : (const void *)s2);
                vm_put16(RA(), v2);
                NEXT();
            }
        }
    } else if (tv.tt == VT_STR && key->tt == VT_STR) {
        /* s:method(): the string library, one __index away */
        vm_V16 v2 = vm_index_string_inline(S, key->u.s); /* one copy, decided on */
        if (vm_v16_tt(v2) != VT_NIL) {
            MEMEV(EV_LOAD, vm_prof_mem_target(RB()));
            vm_put16(RA(), v2);
            NEXT();
        }
    }
    FINISHGET(RB(), key, NULL);
}

/* Arithmetic: fast paths for numbers; everything else goes through vm_arith. */
#define ARITH_SLOW(tm, pa, pb) \
    do { \
        Value r_; \
        MMBIN_COUNT(tm, pa, pb); \
        Protect(r_ = vm_arith(S, tm, pa, pb)); \
        *RA() = r_; \
        NEXT(); \
    } while (0)
#define ARITH_OP(name, tm, iop, fop, getb) \
    L_##name: { \
        const Value *a = RB(); \
        const Value *b = getb; \
        if (a->tt == VT_INT && b->tt == VT_INT) { \
            vm_Integer x = a->u.i, y = b->u.i; \
            *RA() = vm_int(iop); \
            NEXT(); \
        } \
        if (vm_isnumber(a) && vm_isnumber(b)) { \
            double x = vm_numval(a), y = vm_numval(b); \
            *RA() = vm_float(fop); \
            NEXT(); \
        } \
        ARITH_SLOW(tm, a, b); \
    }
#define FLOAT_OP(name, tm, fop, getb) \
    L_##name: { \
        const Value *a = RB(); \
        const Value *b = getb; \
        if (vm_isnumber(a) && vm_isnumber(b)) { \
            double x = vm_numval(a), y = vm_numval(b); \
            *RA() = vm_float(fop); \
            NEXT(); \
        } \
        ARITH_SLOW(tm, a, b); \
    }
/* Integer-only ops whose int/int case may raise (// and % by zero) go to vm_arith. */
#define DIVMOD_OP(name, tm, iop, fop, getb) \
    L_##name: { \
        const Value *a = RB(); \
        const Value *b = getb; \
        if (a->tt == VT_INT && b->tt == VT_INT && b->u.i != 0) { \
            vm_Integer x = a->u.i, y = b->u.i; \
            *RA() = vm_int(iop); \
            NEXT(); \
        } \
        if (a->tt == VT_FLOAT && b->tt == VT_FLOAT) { \
            double x = a->u.n, y = b->u.n; \
            *RA() = vm_float(fop); \
            NEXT(); \
        } \
        ARITH_SLOW(tm, a, b); \
    }
#define BIT_OP(name, tm, iop, getb) \
    L_##name: { \
        const Value *a = RB(); \
        const Value *b = getb; \
        if (a->tt == VT_INT && b->tt == VT_INT) { \
            vm_Integer x = a->u.i, y = b->u.i; \
            *RA() = vm_int(iop); \
            NEXT(); \
        } \
        ARITH_SLOW(tm, a, b); \
    }

L_ADDI: {
    const Value *a = RB();
    int imm = vm_sc(i);
    if (a->tt == VT_INT) {
        *RA() = vm_int(IADD(a->u.i, imm));
        NEXT();
    }
    if (a->tt == VT_FLOAT) {
        *RA() = vm_float(a->u.n + imm);
        NEXT();
    }
    Value b = vm_int(imm);
    const Value *bp = &b;
    ARITH_SLOW(TM_ADD, a, bp);
}
    ARITH_OP(ADDK, TM_ADD, IADD(x, y), x + y, KC())
    /* x - c with the integer constant 0 is x + 0 in lua5.4 (it compiles x - c to ADDI x, -c
     * for small c): -0.0 - 0 is 0.0. For any other c, x - c and x + (-c) are the same. */
    ARITH_OP(SUBK, TM_SUB, ISUB(x, y), b->tt == VT_INT && b->u.i == 0 ? x + 0.0 : x - y, KC())
    ARITH_OP(MULK, TM_MUL, IMUL(x, y), x * y, KC())
    DIVMOD_OP(MODK, TM_MOD, vm_imod(x, y), vm_fmod(x, y), KC())
    FLOAT_OP(POWK, TM_POW, numpow(x, y), KC())
    FLOAT_OP(DIVK, TM_DIV, x / y, KC())
    DIVMOD_OP(IDIVK, TM_IDIV, vm_idiv(x, y), floor(x / y), KC())
    BIT_OP(BANDK, TM_BAND, x & y, KC())
    BIT_OP(BORK, TM_BOR, x | y, KC())
    BIT_OP(BXORK, TM_BXOR, x ^ y, KC())
    ARITH_OP(ADD, TM_ADD, IADD(x, y), x + y, RC())
    ARITH_OP(SUB, TM_SUB, ISUB(x, y), x - y, RC())
    ARITH_OP(MUL, TM_MUL, IMUL(x, y), x * y, RC())
    DIVMOD_OP(MOD, TM_MOD, vm_imod(x, y), vm_fmod(x, y), RC())
    FLOAT_OP(POW, TM_POW, numpow(x, y), RC())
    FLOAT_OP(DIV, TM_DIV, x / y, RC())
    DIVMOD_OP(IDIV, TM_IDIV, vm_idiv(x, y), floor(x / y), RC())
    BIT_OP(BAND, TM_BAND, x & y, RC())
    BIT_OP(BOR, TM_BOR, x | y, RC())
    BIT_OP(BXOR, TM_BXOR, x ^ y, RC())
    BIT_OP(SHL, TM_SHL, vm_shiftl(x, y), RC())
    BIT_OP(SHR, TM_SHR, vm_shiftl(x, (vm_Integer)(0u - (vm_Unsigned)y)), RC())

L_UNM: {
    const Value *a = RB();
    if (a->tt == VT_INT) {
        *RA() = vm_int(ISUB(0, a->u.i));
        NEXT();
    }
    if (a->tt == VT_FLOAT) {
        *RA() = vm_float(-a->u.n);
        NEXT();
    }
    ARITH_SLOW(TM_UNM, a, a);
}
L_BNOT: {
    const Value *a = RB();
    if (a->tt == VT_INT) {
        *RA() = vm_int(~a->u.i);
        NEXT();
    }
    ARITH_SLOW(TM_BNOT, a, a);
}
L_NOT:
    RA()->tt = vm_isfalsy(RB()) ? VT_TRUE : VT_FALSE;
    NEXT();
L_LEN: {
    const Value *a = RB();
    if (a->tt == VT_STR) {
        *RA() = vm_int((vm_Integer)a->u.s->len);
        NEXT();
    }
    if (a->tt == VT_TABLE && a->u.t->meta == NULL) {
        *RA() = vm_int((vm_Integer)vm_table_len(a->u.t));
        NEXT();
    }
    Value v;
    Protect(v = vm_len(S, a));
    *RA() = v;
    NEXT();
}
L_CONCAT: {
    int n = (int)B();
    ci->savedpc = pc;
    S->top = RA() + n;
    vm_concat(S, n);
    base = ci->func + 1;
    *RA() = S->top[-1];
    S->top = ci->top;
    NEXT();
}
L_CLOSE:
    Protect(vm_close(S, RA(), NULL));
    NEXT();
L_TBC:
    Protect(vm_newtbc(S, RA()));
    NEXT();
L_JMP:
    PATHACT(1);
    pc += vm_sbx(i);
    if (vm_sbx(i) < 0) {
        POLL();
        RESERVE_FOR(cl->p);
        JITENTER(false);
    }
    NEXT();

L_EQ: {
    const Value *a = RA(), *b = RB();
    int cond;
    if (a->tt == b->tt && a->tt <= VT_INT)
        cond = a->tt != VT_INT || a->u.i == b->u.i;
    else if (a->tt == VT_FLOAT && b->tt == VT_FLOAT)
        cond = a->u.n == b->u.n;
    else
        Protect(cond = vm_equal(S, a, b));
    CONDJUMP(cond);
    NEXT();
}
L_LT: {
    const Value *a = RA(), *b = RB();
    int cond;
    if (a->tt == VT_INT && b->tt == VT_INT)
        cond = a->u.i < b->u.i;
    else if (a->tt == VT_FLOAT && b->tt == VT_FLOAT)
        cond = a->u.n < b->u.n;
    else
        Protect(cond = vm_lessthan(S, a, b));
    CONDJUMP(cond);
    NEXT();
}
L_LE: {
    const Value *a = RA(), *b = RB();
    int cond;
    if (a->tt == VT_INT && b->tt == VT_INT)
        cond = a->u.i <= b->u.i;
    else if (a->tt == VT_FLOAT && b->tt == VT_FLOAT)
        cond = a->u.n <= b->u.n;
    else
        Protect(cond = vm_lessequal(S, a, b));
    CONDJUMP(cond);
    NEXT();
}
L_EQK: {
    const Value *a = RA(), *b = KB();
    int cond;
    if (a->tt == b->tt && a->tt == VT_INT)
        cond = a->u.i == b->u.i;
    else
        cond = vm_rawequal(a, b);
    CONDJUMP(cond);
    NEXT();
}
L_EQI: {
    const Value *a = RA();
    int imm = vm_sb(i);
    int cond;
    if (a->tt == VT_INT)
        cond = a->u.i == imm;
    else if (a->tt == VT_FLOAT)
        cond = a->u.n == (double)imm;
    else
        cond = 0;
    CONDJUMP(cond);
    NEXT();
}
/* Ordered comparisons with an immediate; non-numbers go through the metamethods with the
 * operands in source order ([swap] for GTI/GEI, whose source is "imm < x"). */
#define CMPI_OP(name, op, slowfn, swap) \
    L_##name: { \
        const Value *a = RA(); \
        int imm = vm_sb(i); \
        int cond; \
        if (a->tt == VT_INT) \
            cond = a->u.i op imm; \
        else if (a->tt == VT_FLOAT) \
            cond = a->u.n op(double) imm; \
        else { \
            Value iv = vm_int(imm); \
            if (swap) \
                Protect(cond = slowfn(S, &iv, a)); \
            else \
                Protect(cond = slowfn(S, a, &iv)); \
        } \
        CONDJUMP(cond); \
        NEXT(); \
    }
    CMPI_OP(LTI, <, vm_lessthan, 0)
    CMPI_OP(LEI, <=, vm_lessequal, 0)
    CMPI_OP(GTI, >, vm_lessthan, 1)
    CMPI_OP(GEI, >=, vm_lessequal, 1)
L_TEST:
    CONDJUMP(!vm_isfalsy(RA()));
    NEXT();
L_TESTSET: {
    const Value *b = RB();
    if (vm_isfalsy(b) == (int)vm_k(i)) {
        PATHACT(0);
        pc++;
    } else {
        PATHACT(1);
        ORACLE_AT(pc);
        *RA() = *b;
        pc += vm_sbx(*pc) + 1;
    }
    NEXT();
}

L_CALL: {
    Value *ra = RA();
    int b = (int)B();
    int nresults = (int)C() - 1;
    if (b != 0) S->top = ra + b;
    ci->savedpc = pc;
    if (ra->tt == VT_CFUNC && (ra->u.cf->h.flags & VM_CF_SCRUB)) vm_scrub_stack();
    if (vm_fixed_call_ok(S, ra)) {
        /* Lua-to-Lua call without varargs: the frame is set up here, no C call (fib: 31%
         * of the time was in vm_precall before). */
        ci = vm_fixed_call(S, ci, ra, nresults);
        goto startfunc;
    }
    CallInfo *nci = vm_precall(S, ra, nresults);
    if (nci == NULL) { /* a C function: done */
        base = ci->func + 1;
        if (nresults >= 0) S->top = ci->top;
        RESERVE_FOR(cl->p);
        HOOKSWITCH();
        SAMPLECHECK();
        NEXT();
    }
    ci = nci;
    goto startfunc;
}
L_TAILCALL: {
    Value *ra = RA();
    int b = (int)B();
    if (b != 0)
        S->top = ra + b;
    else
        b = (int)(S->top - ra);
    ci->savedpc = pc;
    PATHEXIT();
#if VM_EXEC_ORACLE
    vm_pathoracle_exit(ci);
#endif
    if (S->openupval != NULL && S->openupval->v >= base) vm_closeupvals(S, base);
    CallInfo *nci = vm_pretailcall(S, ci, ra, b);
    if (nci == NULL) { /* a C function ran: return its results */
        base = ci->func + 1;
        ra = RA();
        int n = (int)(S->top - ra);
        goto do_return_n;
    do_return_n:
        HOOKRET(ra, n);
        vm_move_results(S, ci, cl->p, ra, n);
        goto ret;
    }
    ci = nci;
    goto startfunc;
}
L_RETURN: {
    Value *ra = RA();
    int n = (int)B() - 1;
    if (n < 0) n = (int)(S->top - ra);
    if (vm_needs_close(S, base)) {
        ci->savedpc = pc;
        S->top = ra + n;
        vm_close(S, base, NULL);
        base = ci->func + 1;
        ra = RA();
    }
    HOOKRET(ra, n);
    vm_move_results(S, ci, cl->p, ra, n);
    goto ret;
}
L_RETURN0: {
    if (vm_needs_close(S, base)) {
        ci->savedpc = pc;
        S->top = base;
        vm_close(S, base, NULL);
        base = ci->func + 1;
    }
#if VM_EXEC_HOOK
    {
        Value *ra = RA();
        HOOKRET(ra, 0);
    }
#endif
    Proto *p = cl->p;
    Value *res = ci->func;
    if (p->is_vararg) res -= ci->nextra + p->numparams + 1;
    int wanted = ci->nresults;
    if (wanted < 0) wanted = 0;
    for (int j = 0; j < wanted; j++) res[j].tt = VT_NIL;
    S->top = res + wanted;
    goto ret;
}
L_RETURN1: {
    if (vm_needs_close(S, base)) {
        ci->savedpc = pc;
        S->top = RA() + 1;
        vm_close(S, base, NULL);
        base = ci->func + 1;
    }
#if VM_EXEC_HOOK
    {
        Value *ra = RA();
        HOOKRET(ra, 1);
    }
#endif
    Proto *p = cl->p;
    Value *res = ci->func;
    if (p->is_vararg) res -= ci->nextra + p->numparams + 1;
    int wanted = ci->nresults;
    Value v = *RA();
    if (wanted == VM_MULTRET) wanted = 1;
    if (wanted > 0) {
        res[0] = v;
        for (int j = 1; j < wanted; j++) res[j].tt = VT_NIL;
    }
    S->top = res + wanted;
    goto ret;
}
ret:
#if VM_EXEC_INSTR
#if VM_EXEC_ORACLE
    PATHEXIT(); /* the path ends before the oracle sees the exit, as in TAILCALL */
    vm_pathoracle_exit(ci);
#endif
    FRAMEEXIT(true);
#endif
    if (ci->callstatus & CIST_FRESH) {
        S->ci = ci->prev;
#if VM_EXEC_INSTR
        /* back into C; if that is an instruction of the Lua frame below (a metamethod, a
         * __close), the frame carries on without passing a reservation point */
        if (!(ci->prev->callstatus & CIST_C)) RESERVE_FOR(ci->prev->func->u.lf->p);
#endif
        return;
    }
    {
        int wanted = ci->nresults;
        ci = ci->prev;
        S->ci = ci;
        if (wanted != VM_MULTRET) S->top = ci->top;
    }
    goto returning;

L_FORPREP: {
    bool skip;
    Protect(skip = vm_forprep(S, RA()));
    PATHACT(skip);
    if (skip) pc += vm_sbx(i);
    NEXT();
}
L_FORLOOP: {
    Value *ra = RA();
    if (ra[2].tt == VT_INT) { /* integer loop: R[A+1] counts the iterations left */
        vm_Unsigned count = (vm_Unsigned)ra[1].u.i;
        if (count > 0) {
            ra[1].u.i = (vm_Integer)(count - 1);
            ra[0].u.i = IADD(ra[0].u.i, ra[2].u.i);
            ra[3] = vm_int(ra[0].u.i);
            PATHACT(1);
            pc += vm_sbx(i);
            POLL();
            RESERVE_FOR(cl->p);
            JITENTER(false);
            NEXT();
        }
    } else if (vm_floatforloop(ra)) {
        PATHACT(1);
        pc += vm_sbx(i);
        POLL();
        RESERVE_FOR(cl->p);
        JITENTER(false);
        NEXT();
    }
    PATHACT(0);
    NEXT();
}
L_TFORPREP:
    Protect(vm_newtbc(S, RA() + 3));
    PATHACT(1);
    pc += vm_sbx(i);
#if VM_EXEC_HOOK
    /* lua5.4 goes on into the TFORCALL it jumps to, as one instruction (see TFORCALL) */
    i = *pc++;
    goto L_TFORCALL;
#endif
    NEXT();
L_TFORCALL: {
    if (S->stack_last - (RA() + 4) <= 3) { /* the call needs 3 slots past the loop variables */
        ci->savedpc = pc;
        S->top = RA() + 4;
        vm_growstack(S, 3);
        base = ci->func + 1;
    }
    Value *ra = RA();
    if (!VM_EXEC_HOOK && ra[0].tt == VT_CFUNC && ra[0].u.cf->f == S->g->fn_next && ra[1].tt == VT_TABLE) {
        /* pairs() without __pairs: iterate inline, no call (hooks see next called). */
        ci->savedpc = pc;
        vm_tfor_next_inline(S, ra, (int)C());
#if VM_EXEC_INSTR
        /* the slot next read, for inputsize (PROF_NEED_LIBMEM): within this instruction's
         * room (one heap event; TFORLOOP has its own). Compiled code steps TFORCALL then. */
        if ((vm_prof_needs & PROF_NEED_LIBMEM) && !vm_isnil(&ra[4]))
            MEMEV(EV_LOAD, vm_table_get(ra[1].u.t, &ra[4]));
#endif
        NEXT();
    }
    ra[4] = ra[0];
    ra[5] = ra[1];
    ra[6] = ra[2];
    ci->savedpc = pc;
    S->top = ra + 7;
    vm_call_value(S, ra + 4, (int)C());
    base = ci->func + 1;
    S->top = ci->top;
    RESERVE_FOR(cl->p);
    HOOKSWITCH();
    SAMPLECHECK();
#if VM_EXEC_HOOK
    /* lua5.4 runs the TFORLOOP that always follows as part of TFORCALL: one instruction
     * for count and line events */
    i = *pc++;
    goto L_TFORLOOP;
#endif
    NEXT();
}
L_TFORLOOP: {
    Value *ra = RA();
    if (!vm_isnil(&ra[4])) {
        ra[2] = ra[4];
        PATHACT(1);
        pc += vm_sbx(i);
        POLL();
        RESERVE_FOR(cl->p);
        JITENTER(false);
        NEXT();
    }
    PATHACT(0);
    NEXT();
}
L_SETLIST: {
    Value *ra = RA();
    int n = (int)B();
    vm_Unsigned last = C();
    if (vm_k(i)) last = vm_bx(*pc++);
    if (n == 0) n = (int)(S->top - ra) - 1;
    ci->savedpc = pc;
    /* the verifier proves R[A] holds the constructor's table, but debug.setlocal (from a
     * function called for the constructor's last values) can replace it (vm_verify.c) */
    if (__builtin_expect(ra->tt != VT_TABLE, 0)) vm_typeerror(S, ra, "index");
    Table *t = ra->u.t;
    if (last + (vm_Unsigned)n > vm_table_asize(t)) vm_table_reserve(S, t, (uint32_t)(last + (vm_Unsigned)n), 0);
    ra = RA();
    for (int j = 1; j <= n; j++) vm_table_setint(S, t, (vm_Integer)(last + (vm_Unsigned)j), &ra[j]);
    S->top = ci->top;
    NEXT();
}
L_CLOSURE: {
    LClosure *ncl;
    Protect(ncl = vm_closure(S, cl, cl->p->p[vm_bx(i)]));
    *RA() = vm_lfunc(ncl);
    NEXT();
}
L_VARARG: {
    int n = (int)C() - 1;
    int nextra = ci->nextra;
    if (n < 0) {
        n = nextra;
        ci->savedpc = pc;
        S->top = RA();
        vm_checkstack_fast(S, n);
        base = ci->func + 1;
        S->top = RA() + n;
    }
    Value *ra = RA();
    Value *src = ci->func - nextra;
    int j = 0;
    for (; j < n && j < nextra; j++) ra[j] = src[j];
    for (; j < n; j++) ra[j].tt = VT_NIL;
    NEXT();
}
L_EXTRAARG:
    /* Only ever consumed by the instruction before it; the verifier rejects others. */
    NEXT();
#if VM_EXEC_SAMPLE_SWITCHES
sample_switch: /* SAMPLE_TICK_BACK, SAMPLECHECK: the trampoline continues the frame at pc */
    ci->savedpc = pc;
    vm_sample_tl.switching = 1;
    return;
#endif

#undef A
#undef B
#undef C
#undef RA
#undef RB
#undef RC
#undef KB
#undef KC
#undef RKC
#undef NEXT
#undef COUNT_INSTR
#undef SAVEPC
#undef Protect
#undef CONDJUMP
#undef JITENTER
#undef JIT_HANDOVER
#undef HOOKSWITCH
#undef HOOKRET
#undef MMBIN_COUNT
#undef INSTACK
#undef FINISHGET
#undef ORACLE_AT
#undef PATHEXIT
#undef PATHACT
#undef FRAMEEXIT
#undef PATH_ACT_FN
#undef FRAME_EXIT_FN
#undef SAMPLE_OWN
#undef SAMPLE_STALE
#undef SAMPLE_TICK_BACK
#undef SAMPLECHECK
#undef VM_EXEC_SAMPLE_SWITCHES
#undef VM_EXEC_SAMPLE
#undef MEMEV
#undef RESERVE_FOR
#undef VM_EXEC_NAME
#undef VM_EXEC_INSTR
#undef VM_EXEC_JIT
#undef VM_EXEC_STEP
#undef VM_EXEC_ORACLE
#undef VM_EXEC_HOOK
#undef VM_ROW_APPLY
#undef VM_ROW_NAME
#undef VM_ROW_INSTR
#undef VM_ROW_JIT
#undef VM_ROW_STEP
#undef VM_ROW_ORACLE
#undef VM_ROW_HOOK
#undef VM_EXEC_ROW
}
