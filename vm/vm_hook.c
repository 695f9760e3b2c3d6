/* vm_hook.c: the debug hooks (debug.sethook) as lua5.4 calls them: "call" and "tail call" when
 * a function starts, "return" before its results move, "line" when the interpreter is about
 * to start a new line or jumps back (even to the same line), "count" every basehookcount
 * instructions.
 *
 * Who calls what: the hooked copies of the interpreter loop (vm_interp.c, VM_EXEC_HOOK) call
 * vm_hook_call at every Lua frame start, vm_hook_trace before every instruction and
 * vm_hook_return at every Lua return; precall_c (vm_call.c) calls vm_hook_ccall and
 * vm_hook_return around every C function. A coroutine whose hookmask is 0 never reaches this
 * file: its loops have no trace of hooks, and the only tests are at the entry of the
 * interpreter and after calls into C (where a hook may have been set).
 *
 * Invariants: hooks do not nest within a coroutine (S->inhook; a hook's own calls, lines and
 * counts still move the counters, as in lua5.4); the hooked frame is S->ci while its hook runs
 * and is marked CIST_HOOKED, so the hook function is named "hook '?'"; the hook runs above
 * every register of a Lua frame (top raised to ci->top) and may not yield (as lua5.4's hook
 * functions, called through lua_call from a C hook). An error in a hook unwinds through the
 * hooked frame; the protected call that catches it puts inhook back (vm_pcall_value). */
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"

enum { HOOK_CALL, HOOK_RET, HOOK_LINE, HOOK_COUNT, HOOK_TAILCALL };
static const char *const hooknames[] = {"call", "return", "line", "count", "tail call"};

void vm_sethook(State *L, Value hook, unsigned mask, int count) {
    if (vm_isnil(&hook) || mask == 0) { /* turn hooks off */
        mask = 0;
        hook = vm_nil();
    }
    L->hook = hook;
    L->basehookcount = count;
    L->hookcount = count;
    L->hookmask = (uint8_t)mask;
}

void vm_hook_inherit(State *co, const State *from) {
    co->hookmask = (uint8_t)(from->hookmask & ~VM_MASKSWITCH);
    co->basehookcount = co->hookcount = from->basehookcount;
    co->hook = vm_nil();
}

static bool islua(const CallInfo *ci) { return !(ci->callstatus & CIST_C) && ci->func->tt == VT_LFUNC; }

static int funcline(const Proto *p, int pc) { return p->lineinfo ? p->lineinfo[pc] : -1; }

/* Call the hook function with (event name, line or nil) for the frame S->ci: lua5.4's
 * luaD_hook and the debug library's hookf in one. [ntransfer] != 0: the frame's values
 * [ftransfer .. ftransfer + ntransfer - 1] (slots above ci->func) are what the call or
 * return transfers, for getinfo's 'r'. */
static void dohook(State *S, int event, int line, int ftransfer, int ntransfer) {
    if (S->inhook || vm_isnil(&S->hook)) return;
    CallInfo *ci = S->ci;
    ptrdiff_t top = vm_savestack(S, S->top);
    ptrdiff_t ci_top = vm_savestack(S, ci->top);
    uint16_t mark = CIST_HOOKED;
    if (ntransfer != 0) {
        mark |= CIST_TRAN;
        S->ftransfer = ftransfer;
        S->ntransfer = ntransfer;
    }
    if (islua(ci) && S->top < ci->top) S->top = ci->top; /* above every register */
    vm_checkstack_fast(S, VM_MINSTACK);
    if (ci->top < S->top + VM_MINSTACK) ci->top = S->top + VM_MINSTACK;
    S->inhook = 1;
    ci->callstatus |= mark;
    Value *f = S->top;
    f[0] = S->hook;
    f[1] = vm_str(vm_string_newc(S, hooknames[event]));
    f[2] = line >= 0 ? vm_int(line) : vm_nil();
    S->top = f + 3;
    S->nny++; /* a hook may not yield */
    vm_call_value(S, f, 0);
    S->nny--;
    S->inhook = 0;
    ci->callstatus &= (uint16_t)~mark;
    ci->top = vm_restorestack(S, ci_top);
    S->top = vm_restorestack(S, top);
}

void vm_hook_call(State *S, CallInfo *ci) {
    S->oldpc = 0; /* the new frame's first instruction is a new line */
    if (!(S->hookmask & VM_MASKCALL)) return;
    /* the parameters are the values transferred (lua5.4: ftransfer 1, ntransfer numparams) */
    dohook(S, (ci->callstatus & CIST_TAIL) ? HOOK_TAILCALL : HOOK_CALL, -1, 1, ci->func->u.lf->p->numparams);
}

void vm_hook_ccall(State *S, CallInfo *ci, int narg) {
    (void)ci;
    dohook(S, HOOK_CALL, -1, 1, narg);
}

void vm_hook_return(State *S, CallInfo *ci, int first, int nres) {
    if (S->hookmask & VM_MASKRET) dohook(S, HOOK_RET, -1, first, nres);
    /* Back in a Lua caller: its next instruction is a new line only if it is on another
     * line than the call (lua5.4's rethook sets L->oldpc to the calling instruction). */
    const CallInfo *prev = ci->prev;
    if (prev != NULL && islua(prev)) S->oldpc = (int)(prev->savedpc - prev->func->u.lf->p->code) - 1;
}

/* The line event of instruction [npci] of [p]: a new line, or a jump back. A hook function
 * that ran just before (a count event) leaves oldpc at npci when it returns (vm_hook_return),
 * so the line event follows it, as in lua5.4. */
static void traceline(State *S, const Proto *p, int npci) {
    /* oldpc may belong to a function left by an error: then start from 0 */
    int oldpc = S->oldpc >= 0 && S->oldpc < p->ncode ? S->oldpc : 0;
    if (npci <= oldpc || funcline(p, oldpc) != funcline(p, npci)) dohook(S, HOOK_LINE, funcline(p, npci), 0, 0);
    S->oldpc = npci;
}

void vm_hook_trace(State *S, CallInfo *ci) {
    unsigned mask = S->hookmask; /* as it was before the hooks below change it */
    const Proto *p = ci->func->u.lf->p;
    int npci = (int)(ci->savedpc - p->code) - 1; /* the instruction about to run */
    bool counthook = --S->hookcount == 0 && (mask & VM_MASKCOUNT);
    if (counthook)
        S->hookcount = S->basehookcount;
    else if (!(mask & VM_MASKLINE))
        return;
    if (counthook) dohook(S, HOOK_COUNT, -1, 0, 0);
    if (mask & VM_MASKLINE) traceline(S, p, npci);
}

/* The MMBIN lua5.4 runs after a binary operator whose operands are not numbers (integers,
 * for the bitwise ones), which Tandem's bytecode does not have: it counts as an instruction,
 * on the operator's line (so no line event). */
bool vm_hook_mmbin_due(State *S, int tm, const Value *a, const Value *b) {
    if (tm == TM_UNM || tm == TM_BNOT) return false; /* no MMBIN after these */
    bool fast;
    if (tm >= TM_BAND && tm <= TM_SHR) {
        vm_Integer ia, ib;
        fast = vm_isnumber(a) && vm_isnumber(b) && vm_tointeger(a, &ia) && vm_tointeger(b, &ib);
    } else {
        fast = vm_isnumber(a) && vm_isnumber(b);
    }
    if (fast || --S->hookcount != 0) return false;
    S->hookcount = S->basehookcount;
    return true;
}

void vm_hook_count(State *S) {
    unsigned mask = S->hookmask;
    CallInfo *ci = S->ci;
    const Proto *p = ci->func->u.lf->p;
    dohook(S, HOOK_COUNT, -1, 0, 0);
    /* the operator's pc stands for the MMBIN after it, on the same line */
    if (mask & VM_MASKLINE) traceline(S, p, (int)(ci->savedpc - p->code) - 1);
}
