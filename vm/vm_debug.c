/* vm_debug.c: source positions, names of values in error messages (by a backward symbolic
 * scan of the bytecode, as Lua does), typed error messages and tracebacks. */
#include <stdio.h>
#include <stdlib.h>

#include "vm_compile.h"
#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_opcodes.h"

/* Traceback: frames shown at the top and at the bottom of a deep stack. */
#define TB_LEVELS1 10
#define TB_LEVELS2 11

static bool islua(const CallInfo *ci) { return !(ci->callstatus & CIST_C) && ci->func->tt == VT_LFUNC; }

static int currentpc(const CallInfo *ci) {
    const Proto *p = ci->func->u.lf->p;
    int pc = (int)(ci->savedpc - p->code) - 1;
    return pc < 0 ? 0 : pc;
}

int vm_currentline(const CallInfo *ci) {
    if (!islua(ci)) return -1;
    const Proto *p = ci->func->u.lf->p;
    if (p->lineinfo == NULL || p->ncode == 0) return -1;
    int pc = currentpc(ci);
    if (pc >= p->ncode) pc = p->ncode - 1;
    return p->lineinfo[pc];
}

static void chunkid_of(const Proto *p, char *buf, size_t size) {
    if (p->source == NULL)
        snprintf(buf, size, "?");
    else
        vm_chunkid(buf, size, p->source->data, p->source->len);
}

String *vm_add_position(State *S, const CallInfo *ci, String *msg) {
    char id[VM_IDSIZE];
    chunkid_of(ci->func->u.lf->p, id, sizeof id);
    int line = vm_currentline(ci);
    size_t idlen = strlen(id);
    char linebuf[32];
    int ll = snprintf(linebuf, sizeof linebuf, ":%d: ", line);
    String *r = vm_string_alloc(S, idlen + (size_t)ll + msg->len);
    memcpy(r->data, id, idlen);
    memcpy(r->data + idlen, linebuf, (size_t)ll);
    memcpy(r->data + idlen + ll, msg->data, msg->len);
    return r;
}

/* ======================================================================
 * Names of registers (getobjname)
 * ====================================================================== */

/* Name of the [n]-th (1-based) local active at [pc], or NULL. */
static const char *localname(const Proto *p, int n, int pc) {
    for (int i = 0; i < p->nlocvars && p->locvars[i].startpc <= pc; i++) {
        if (pc < p->locvars[i].endpc) {
            n--;
            if (n == 0) return p->locvars[i].name ? p->locvars[i].name->data : NULL;
        }
    }
    return NULL;
}

static const char *upvalname(const Proto *p, int uv) {
    if (uv >= p->nupvals || p->upvals[uv].name == NULL) return "?";
    return p->upvals[uv].name->data;
}

/* Does instruction [op] write register A? */
static bool sets_a(unsigned op) {
    switch (op) {
    case OP_SETUPVAL:
    case OP_SETTABUP:
    case OP_SETTABLE:
    case OP_SETI:
    case OP_SETFIELD:
    case OP_CLOSE:
    case OP_TBC:
    case OP_JMP:
    case OP_EQ:
    case OP_LT:
    case OP_LE:
    case OP_EQK:
    case OP_EQI:
    case OP_LTI:
    case OP_LEI:
    case OP_GTI:
    case OP_GEI:
    case OP_TEST:
    case OP_RETURN:
    case OP_RETURN0:
    case OP_RETURN1:
    case OP_SETLIST:
    case OP_TFORPREP:
    case OP_TFORLOOP:
    case OP_EXTRAARG: return false;
    default: return true;
    }
}

/* Last instruction before [lastpc] that certainly set [reg], or -1. */
static int findsetreg(const Proto *p, int lastpc, int reg) {
    int setreg = -1;
    int jmptarget = 0; /* code before this address is conditional */
    for (int pc = 0; pc < lastpc; pc++) {
        Instr i = p->code[pc];
        unsigned op = vm_op(i);
        int a = (int)vm_a(i);
        bool change;
        switch (op) {
        case OP_LOADNIL: change = a <= reg && reg <= a + (int)vm_b(i); break;
        case OP_TFORCALL: change = reg >= a + 2; break;
        case OP_CALL:
        case OP_TAILCALL: change = reg >= a; break;
        case OP_SELF: change = reg == a || reg == a + 1; break;
        case OP_FORPREP:
        case OP_FORLOOP: change = reg >= a && reg <= a + 3; break;
        case OP_VARARG: change = reg >= a; break;
        case OP_JMP: {
            int dest = pc + 1 + vm_sbx(i);
            if (dest <= lastpc && dest > jmptarget) jmptarget = dest;
            change = false;
            break;
        }
        default: change = sets_a(op) && reg == a; break;
        }
        if (change) setreg = pc < jmptarget ? -1 : pc;
    }
    return setreg;
}

static const char *kname(const Proto *p, unsigned idx) {
    if (idx < (unsigned)p->nk && p->k[idx].tt == VT_STR) return p->k[idx].u.s->data;
    return "?";
}

static const char *getobjname(const Proto *p, int lastpc, int reg, const char **name);

/* "global" when the table in register/upvalue t is _ENV, else "field". */
static const char *gxf(const Proto *p, int pc, Instr i, bool isup) {
    int t = (int)vm_b(i);
    const char *name;
    if (isup)
        name = upvalname(p, t);
    else
        getobjname(p, pc, t, &name);
    return (name && strcmp(name, "_ENV") == 0) ? "global" : "field";
}

static const char *getobjname(const Proto *p, int lastpc, int reg, const char **name) {
    *name = localname(p, reg + 1, lastpc);
    if (*name) return "local";
    int pc = findsetreg(p, lastpc, reg);
    if (pc == -1) return NULL;
    Instr i = p->code[pc];
    switch (vm_op(i)) {
    case OP_MOVE: {
        int b = (int)vm_b(i);
        if (b < (int)vm_a(i)) return getobjname(p, pc, b, name);
        break;
    }
    case OP_GETTABUP:
        *name = kname(p, vm_c(i));
        return gxf(p, pc, i, true);
    case OP_GETTABLE: {
        const char *kn = NULL;
        int kr = (int)vm_c(i);
        int kpc = findsetreg(p, pc, kr);
        if (kpc >= 0 && vm_op(p->code[kpc]) == OP_LOADK) kn = kname(p, vm_bx(p->code[kpc]));
        *name = kn ? kn : "?";
        return gxf(p, pc, i, false);
    }
    case OP_GETI: *name = "integer index"; return "field";
    case OP_GETFIELD:
        *name = kname(p, vm_c(i));
        return gxf(p, pc, i, false);
    case OP_GETUPVAL: *name = upvalname(p, (int)vm_b(i)); return "upvalue";
    case OP_LOADK:
        if (vm_bx(i) < (uint32_t)p->nk && p->k[vm_bx(i)].tt == VT_STR) {
            *name = p->k[vm_bx(i)].u.s->data;
            return "constant";
        }
        break;
    case OP_SELF:
        *name = vm_k(i) ? kname(p, vm_c(i)) : "?";
        return "method";
    default: break;
    }
    return NULL;
}

/* " (local 'x')" etc. for a value the current Lua frame holds, or "". */
static void varinfo(State *S, const Value *v, char *buf, size_t size) {
    buf[0] = '\0';
    CallInfo *ci = S->ci;
    if (!islua(ci)) return;
    LClosure *cl = ci->func->u.lf;
    const Proto *p = cl->p;
    const char *kind = NULL, *name = NULL;
    for (int i = 0; i < p->nupvals; i++) {
        if (cl->upvals[i] && cl->upvals[i]->v == v) {
            kind = "upvalue";
            name = upvalname(p, i);
            break;
        }
    }
    Value *base = ci->func + 1;
    if (kind == NULL && v >= base && v < ci->top) kind = getobjname(p, currentpc(ci), (int)(v - base), &name);
    if (kind == NULL && p->nk > 0 && v >= p->k && v < p->k + p->nk && v->tt == VT_STR) {
        kind = "constant";
        name = v->u.s->data;
    }
    if (kind) snprintf(buf, size, " (%s '%.60s')", kind, name ? name : "?");
}

_Noreturn void vm_typeerror(State *S, const Value *v, const char *op) {
    char info[128];
    varinfo(S, v, info, sizeof info);
    vm_runerror(S, "attempt to %s a %s value%s", op, vm_objtypename(S, v), info);
}

_Noreturn void vm_typeerror_of(State *S, const Value *where, const Value *v, const char *op) {
    char info[128];
    info[0] = '\0';
    if (where != NULL) varinfo(S, where, info, sizeof info);
    vm_runerror(S, "attempt to %s a %s value%s", op, vm_objtypename(S, v), info);
}

/* The metamethod an instruction calls when it calls anything but a function (lua5.4's
 * funcnamefromcode): "index" for a GETTABUP, "close" for a RETURN that closes, ...; NULL for
 * the calling instructions themselves. */
static const char *metamethod_of(OpCode op) {
    switch (op) {
    case OP_SELF: case OP_GETTABUP: case OP_GETTABLE: case OP_GETI: case OP_GETFIELD: return "index";
    case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD: return "newindex";
    case OP_ADDI: case OP_ADDK: case OP_ADD: return "add";
    case OP_SUBK: case OP_SUB: return "sub";
    case OP_MULK: case OP_MUL: return "mul";
    case OP_MODK: case OP_MOD: return "mod";
    case OP_POWK: case OP_POW: return "pow";
    case OP_DIVK: case OP_DIV: return "div";
    case OP_IDIVK: case OP_IDIV: return "idiv";
    case OP_BANDK: case OP_BAND: return "band";
    case OP_BORK: case OP_BOR: return "bor";
    case OP_BXORK: case OP_BXOR: return "bxor";
    case OP_SHL: return "shl";
    case OP_SHR: return "shr";
    case OP_UNM: return "unm";
    case OP_BNOT: return "bnot";
    case OP_LEN: return "len";
    case OP_CONCAT: return "concat";
    case OP_EQ: case OP_EQK: case OP_EQI: return "eq";
    case OP_LT: case OP_LTI: case OP_GTI: return "lt";
    case OP_LE: case OP_LEI: case OP_GEI: return "le";
    case OP_CLOSE: case OP_RETURN: case OP_RETURN0: case OP_RETURN1: return "close";
    default: return NULL;
    }
}

/* "attempt to call a nil value (metamethod 'close')" when a Lua instruction that is not a
 * call called it (its metamethod is not callable), else as any type error. */
_Noreturn void vm_callerror(State *S, const Value *v) {
    CallInfo *ci = S->ci;
    const char *mm = islua(ci) ? metamethod_of(vm_op(ci->func->u.lf->p->code[currentpc(ci)])) : NULL;
    if (mm != NULL) vm_runerror(S, "attempt to call a %s value (metamethod '%s')", vm_objtypename(S, v), mm);
    vm_typeerror(S, v, "call");
}

_Noreturn void vm_concaterror(State *S, const Value *a, const Value *b) {
    if (a->tt == VT_STR || vm_isnumber(a)) a = b;
    vm_typeerror(S, a, "concatenate");
}

_Noreturn void vm_opinterror(State *S, const Value *a, const Value *b, const char *msg) {
    if (!vm_isnumber(a)) b = a; /* the first operand is wrong */
    vm_typeerror(S, b, msg);
}

_Noreturn void vm_tointerror(State *S, const Value *a, const Value *b) {
    vm_Integer i;
    if (!vm_tointeger(a, &i)) b = a;
    char info[128];
    varinfo(S, b, info, sizeof info);
    vm_runerror(S, "number%s has no integer representation", info);
}

_Noreturn void vm_ordererror(State *S, const Value *a, const Value *b) {
    const char *t1 = vm_objtypename(S, a), *t2 = vm_objtypename(S, b);
    if (strcmp(t1, t2) == 0) vm_runerror(S, "attempt to compare two %s values", t1);
    vm_runerror(S, "attempt to compare %s with %s", t1, t2);
}

_Noreturn void vm_forerror(State *S, const Value *v, const char *what) {
    vm_runerror(S, "bad 'for' %s (number expected, got %s)",
                strcmp(what, "initial") == 0 ? "initial value" : what, vm_objtypename(S, v));
}

/* ======================================================================
 * Function names and tracebacks
 * ====================================================================== */

/* Look for [f] among the fields of the loaded libraries ("string.rep", "print"). A function
 * reachable under several names (a C module loaded as "socket.core" and again, the same
 * table, as "socket") gets the shortest: lua5.4 takes the first its hash traversal meets,
 * which no other table layout reproduces; the shortest is the module's public name. */
static bool libname(State *S, const Value *f, char *buf, size_t size) {
    Table *loaded = S->g->loaded;
    if (loaded == NULL) return false;
    Value k = vm_nil(), v;
    size_t best = SIZE_MAX;
    /* Traversal without allocation: vm_table_next only raises on a bad key. */
    while (vm_table_next(S, loaded, &k, &v)) {
        if (v.tt != VT_TABLE || k.tt != VT_STR) continue;
        Value k2 = vm_nil(), v2;
        while (vm_table_next(S, v.u.t, &k2, &v2)) {
            if (k2.tt == VT_STR && v2.tt == f->tt && v2.u.p == f->u.p) {
                bool global = strcmp(k.u.s->data, "_G") == 0;
                size_t len = global ? k2.u.s->len : k.u.s->len + 1 + k2.u.s->len;
                if (len >= best) continue;
                best = len;
                if (global)
                    snprintf(buf, size, "function '%s'", k2.u.s->data);
                else
                    snprintf(buf, size, "function '%s.%s'", k.u.s->data, k2.u.s->data);
            }
        }
    }
    return best != SIZE_MAX;
}

/* How [caller] called the frame above it (lua5.4's funcnamefromcall): a hook, the calling
 * instruction's name for the function, or the metamethod a Lua instruction called. */
static const char *funcnamefromcall(const CallInfo *caller, const char **name) {
    if (caller->callstatus & CIST_HOOKED) {
        *name = "?";
        return "hook";
    }
    if (!islua(caller)) return NULL;
    const Proto *p = caller->func->u.lf->p;
    int pc = currentpc(caller);
    Instr i = p->code[pc];
    switch (vm_op(i)) {
    case OP_CALL:
    case OP_TAILCALL: return getobjname(p, pc, (int)vm_a(i), name);
    case OP_TFORCALL: *name = "for iterator"; return "for iterator";
    case OP_EQK:
    case OP_EQI: return NULL; /* they call no metamethod */
    default: break;
    }
    *name = metamethod_of(vm_op(i));
    return *name != NULL ? "metamethod" : NULL;
}

const char *vm_callname(State *S, const CallInfo *ci, const char **name) {
    (void)S;
    if (ci->prev == NULL || (ci->callstatus & CIST_TAIL)) return NULL;
    return funcnamefromcall(ci->prev, name);
}

bool vm_globalfuncname(State *S, const Value *f, char *buf, size_t size) {
    char tmp[160];
    if (!libname(S, f, tmp, sizeof tmp)) return false;
    /* tmp is "function 'x.y'": keep x.y */
    const char *q = strchr(tmp, '\'');
    snprintf(buf, size, "%s", q ? q + 1 : tmp);
    size_t n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\'') buf[n - 1] = '\0';
    return true;
}

void vm_funcdesc(State *S, const CallInfo *ci, char *buf, size_t size) {
    if (islua(ci) && ci->func->u.lf->p->linedefined == 0) {
        snprintf(buf, size, "main chunk");
        return;
    }
    if (libname(S, ci->func, buf, size)) return;
    {
        const char *name = NULL, *kind = vm_callname(S, ci, &name);
        if (kind) {
            if (strcmp(kind, "global") == 0)
                snprintf(buf, size, "function '%s'", name);
            else
                snprintf(buf, size, "%s '%s'", kind, name);
            return;
        }
    }
    if (islua(ci)) {
        char id[VM_IDSIZE];
        const Proto *p = ci->func->u.lf->p;
        chunkid_of(p, id, sizeof id);
        snprintf(buf, size, "function <%s:%d>", id, p->linedefined);
    } else {
        snprintf(buf, size, "?");
    }
}

/* A growable text buffer in malloc memory (holds no GC pointers). */
typedef struct TB {
    char *s;
    size_t n, cap;
} TB;

static void tb_add(TB *b, const char *s) {
    size_t l = strlen(s);
    if (b->n + l + 1 > b->cap) {
        size_t nc = (b->cap + l + 1) * 2;
        char *ns = realloc(b->s, nc);
        if (ns == NULL) return;
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, l + 1);
    b->n += l;
}

/* A coroutine's base frame is only the C side of its resume; the main thread's (and a
 * language thread's) stands for the C function that runs the program (lua.c's pmain, which
 * lua5.4's tracebacks show as "[C]: in ?"). */
static bool is_coroutine(const State *L) { return L->thread == NULL && L != L->g->mainthread; }

CallInfo *vm_getstack(State *L, vm_Integer level) {
    if (level < 0) return NULL;
    CallInfo *ci = L->ci;
    for (; level > 0 && ci != &L->base_ci; ci = ci->prev) level--;
    if (level != 0 || (ci == &L->base_ci && is_coroutine(L))) return NULL;
    return ci;
}

String *vm_traceback_of(State *S, State *L1, const char *msg, int level) {
    TB b = {NULL, 0, 0};
    tb_add(&b, "");
    if (msg) {
        tb_add(&b, msg);
        tb_add(&b, "\n");
    }
    tb_add(&b, "stack traceback:");
    /* lua5.4's luaL_traceback: the first TB_LEVELS1 levels from [level] and the last
     * TB_LEVELS2 when there are many more */
    int count = is_coroutine(L1) ? 0 : 1;
    for (const CallInfo *c = L1->ci; c != &L1->base_ci; c = c->prev) count++;
    int last = count > 1 ? count - 1 : 0;
    int limit2show = (last - level > TB_LEVELS1 + TB_LEVELS2) ? TB_LEVELS1 : -1;
    const CallInfo *ci;
    while ((ci = vm_getstack(L1, level++)) != NULL) {
        char line[300], desc[160], id[VM_IDSIZE];
        if (limit2show-- == 0) {
            int n = last - level - TB_LEVELS2 + 1; /* levels to skip */
            snprintf(line, sizeof line, "\n\t...\t(skipping %d levels)", n);
            tb_add(&b, line);
            level += n;
            continue;
        }
        vm_funcdesc(L1, ci, desc, sizeof desc);
        if (islua(ci))
            chunkid_of(ci->func->u.lf->p, id, sizeof id);
        else
            snprintf(id, sizeof id, "[C]");
        int cl = vm_currentline(ci);
        if (cl <= 0)
            snprintf(line, sizeof line, "\n\t%s: in %s", id, desc);
        else
            snprintf(line, sizeof line, "\n\t%s:%d: in %s", id, cl, desc);
        tb_add(&b, line);
        if (ci->callstatus & CIST_TAIL) tb_add(&b, "\n\t(...tail calls...)");
    }
    String *r = vm_string_new(S, b.s ? b.s : "", b.n);
    free(b.s);
    return r;
}

String *vm_traceback(State *S, const char *msg, int level) { return vm_traceback_of(S, S, msg, level); }

/* ======================================================================
 * Local variables (debug.getlocal / setlocal)
 * ====================================================================== */

const char *vm_paramname(const Proto *p, vm_Integer n) {
    if (n < 1 || n > p->nlocvars) return NULL;
    return localname(p, (int)n, 0);
}

const char *vm_findlocal(State *L, CallInfo *ci, vm_Integer n, Value **pos) {
    Value *base = ci->func + 1;
    const char *name = NULL;
    if (islua(ci)) {
        const Proto *p = ci->func->u.lf->p;
        if (n < 0) { /* the extra arguments, below ci->func (vm_state.h) */
            if (!p->is_vararg || n < -(vm_Integer)ci->nextra) return NULL;
            *pos = ci->func - ci->nextra - (n + 1);
            return "(vararg)";
        }
        if (n <= p->nlocvars) name = localname(p, (int)n, currentpc(ci));
    }
    if (name == NULL) { /* any other slot of the frame, up to the next frame or the top */
        const Value *limit = (ci == L->ci) ? L->top : ci->next->func;
        if (n <= 0 || limit - base < n) return NULL;
        name = islua(ci) ? "(temporary)" : "(C temporary)";
    }
    *pos = base + (n - 1);
    return name;
}
