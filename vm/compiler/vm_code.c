/* vm_code.c: the code generator: emits Tandem instructions for the parser (vm_parse.c),
 * manages registers, constants and jump lists, and folds constant expressions. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vm_code.h"
#include "vm_string.h"

/* ======================================================================
 * Errors, growing arrays
 * ====================================================================== */

void vm_code_error(FuncState *fs, const char *msg) { vm_lex_error(fs->ls, msg, true); }

/* Make room for index [n] in [*arr] of capacity [*cap] elements of [elem] bytes. */
static void *growarr(State *S, void *arr, int *cap, int n, size_t elem, bool leaf) {
    if (n < *cap) return arr;
    int ncap = *cap < 8 ? 16 : *cap * 2;
    if (arr == NULL)
        arr = leaf ? vm_alloc_leaf(S, (size_t)ncap * elem) : vm_alloc(S, (size_t)ncap * elem);
    else
        arr = vm_realloc(S, arr, (size_t)ncap * elem);
    *cap = ncap;
    return arr;
}

/* ======================================================================
 * Emitting instructions
 * ====================================================================== */

int vm_code_emit(FuncState *fs, Instr i) {
    Proto *f = fs->f;
    State *S = fs->ls->S;
    if (fs->pc >= fs->codecap) {
        int cap = fs->codecap;
        f->code = growarr(S, f->code, &cap, fs->pc, sizeof(Instr), true);
        int cap2 = fs->codecap;
        f->lineinfo = growarr(S, f->lineinfo, &cap2, fs->pc, sizeof(int32_t), true);
        fs->codecap = cap;
    }
    f->code[fs->pc] = i;
    f->lineinfo[fs->pc] = fs->ls->lastline;
    return fs->pc++;
}

int vm_code_abc(FuncState *fs, OpCode o, int a, int b, int c, int k) {
    return vm_code_emit(fs, vm_encode_abc(o, (unsigned)a, (unsigned)b, (unsigned)c, (unsigned)k));
}

int vm_code_abx(FuncState *fs, OpCode o, int a, uint32_t bx) {
    return vm_code_emit(fs, vm_encode_abx(o, (unsigned)a, bx));
}

int vm_code_asbx(FuncState *fs, OpCode o, int a, int32_t sbx) {
    return vm_code_emit(fs, vm_encode_asbx(o, (unsigned)a, sbx));
}

void vm_code_fixline(FuncState *fs, int line) {
    if (fs->pc > 0) fs->f->lineinfo[fs->pc - 1] = line;
}

/* The previous instruction, or NULL when it may be a jump target (then it must not be
 * merged with or changed). */
static Instr *previousinstruction(FuncState *fs) {
    if (fs->pc > fs->lasttarget) return &fs->f->code[fs->pc - 1];
    return NULL;
}

void vm_code_nil(FuncState *fs, int from, int n) {
    int l = from + n - 1;
    Instr *prev = previousinstruction(fs);
    if (prev && vm_op(*prev) == OP_LOADNIL) {
        int pfrom = (int)vm_a(*prev);
        int pl = pfrom + (int)vm_b(*prev);
        if ((pfrom <= from && from <= pl + 1) || (from <= pfrom && pfrom <= l + 1)) {
            if (pfrom < from) from = pfrom;
            if (pl > l) l = pl;
            vm_setarg_a(prev, (unsigned)from);
            vm_setarg_b(prev, (unsigned)(l - from));
            return;
        }
    }
    vm_code_abc(fs, OP_LOADNIL, from, n - 1, 0, 0);
}

/* ======================================================================
 * Jumps and patch lists
 * ====================================================================== */

static int getjump(FuncState *fs, int pc) {
    int32_t off = vm_sbx(fs->f->code[pc]);
    return off == NO_JUMP ? NO_JUMP : pc + 1 + off;
}

void vm_code_fixjump(FuncState *fs, int pc, int dest) {
    vm_setarg_bx(&fs->f->code[pc], (uint32_t)(int32_t)(dest - (pc + 1)));
}

void vm_code_concat(FuncState *fs, int *l1, int l2) {
    if (l2 == NO_JUMP) return;
    if (*l1 == NO_JUMP) {
        *l1 = l2;
        return;
    }
    int list = *l1, next;
    while ((next = getjump(fs, list)) != NO_JUMP) list = next;
    vm_code_fixjump(fs, list, l2);
}

int vm_code_jump(FuncState *fs) { return vm_code_abx(fs, OP_JMP, 0, (uint32_t)NO_JUMP); }

void vm_code_ret(FuncState *fs, int first, int nret) {
    OpCode op = nret == 0 ? OP_RETURN0 : nret == 1 ? OP_RETURN1 : OP_RETURN;
    vm_code_abc(fs, op, first, nret + 1, 0, 0);
}

static int condjump(FuncState *fs, OpCode op, int a, int b, int c, int k) {
    vm_code_abc(fs, op, a, b, c, k);
    return vm_code_jump(fs);
}

int vm_code_getlabel(FuncState *fs) {
    fs->lasttarget = fs->pc;
    return fs->pc;
}

static bool istestop(unsigned op) { return op >= OP_EQ && op <= OP_TESTSET; }

/* The instruction that controls the jump at [pc]: the test before it, or the jump. */
static Instr *getjumpcontrol(FuncState *fs, int pc) {
    Instr *pi = &fs->f->code[pc];
    if (pc >= 1 && istestop(vm_op(pi[-1]))) return pi - 1;
    return pi;
}

/* A TESTSET controlling the jump at [node] stores into [reg], or becomes a TEST when no
 * value is needed (reg == NO_REG) or it would store into its own source. */
static bool patchtestreg(FuncState *fs, int node, int reg) {
    Instr *i = getjumpcontrol(fs, node);
    if (vm_op(*i) != OP_TESTSET) return false;
    if (reg != NO_REG && reg != (int)vm_b(*i))
        vm_setarg_a(i, (unsigned)reg);
    else
        *i = vm_encode_abc(OP_TEST, vm_b(*i), 0, 0, vm_k(*i));
    return true;
}

static void removevalues(FuncState *fs, int list) {
    for (; list != NO_JUMP; list = getjump(fs, list)) patchtestreg(fs, list, NO_REG);
}

static void patchlistaux(FuncState *fs, int list, int vtarget, int reg, int dtarget) {
    while (list != NO_JUMP) {
        int next = getjump(fs, list);
        if (patchtestreg(fs, list, reg))
            vm_code_fixjump(fs, list, vtarget);
        else
            vm_code_fixjump(fs, list, dtarget);
        list = next;
    }
}

void vm_code_patchlist(FuncState *fs, int list, int target) {
    patchlistaux(fs, list, target, NO_REG, target);
}

void vm_code_patchtohere(FuncState *fs, int list) {
    int hr = vm_code_getlabel(fs);
    vm_code_patchlist(fs, list, hr);
}

/* ======================================================================
 * Registers
 * ====================================================================== */

VarDesc *vm_code_localvar(FuncState *fs, int vidx) { return &fs->dyd->actvar[fs->firstlocal + vidx]; }

int vm_code_reglevel(FuncState *fs, int nvar) {
    while (nvar-- > 0) {
        VarDesc *vd = vm_code_localvar(fs, nvar);
        if (vd->kind != RDKCTC) return vd->ridx + 1;
    }
    return 0;
}

int vm_code_nvarstack(FuncState *fs) { return vm_code_reglevel(fs, fs->nactvar); }

void vm_code_checkstack(FuncState *fs, int n) {
    int newstack = fs->freereg + n;
    if (newstack > fs->f->maxstack) {
        if (newstack > VM_MAXREGS) vm_code_error(fs, "function or expression needs too many registers");
        fs->f->maxstack = (uint16_t)newstack;
    }
}

void vm_code_reserveregs(FuncState *fs, int n) {
    vm_code_checkstack(fs, n);
    fs->freereg += n;
}

static void freereg(FuncState *fs, int reg) {
    if (reg >= vm_code_nvarstack(fs) && fs->freereg > 0) fs->freereg--;
}

static void freeregs(FuncState *fs, int r1, int r2) {
    if (r1 > r2) {
        freereg(fs, r1);
        freereg(fs, r2);
    } else {
        freereg(fs, r2);
        freereg(fs, r1);
    }
}

void vm_code_freeexp(FuncState *fs, ExpDesc *e) {
    if (e->k == VNONRELOC) freereg(fs, e->u.info);
}

static void freeexps(FuncState *fs, ExpDesc *e1, ExpDesc *e2) {
    int r1 = (e1->k == VNONRELOC) ? e1->u.info : -1;
    int r2 = (e2->k == VNONRELOC) ? e2->u.info : -1;
    if (r1 >= 0 && r2 >= 0)
        freeregs(fs, r1, r2);
    else if (r1 >= 0)
        freereg(fs, r1);
    else if (r2 >= 0)
        freereg(fs, r2);
}

/* ======================================================================
 * Constants
 * ====================================================================== */

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t khashof(const Value *v) {
    uint64_t x;
    switch (v->tt) {
    case VT_INT: x = (uint64_t)v->u.i; break;
    case VT_FLOAT: memcpy(&x, &v->u.n, sizeof x); x ^= 0x9e3779b97f4a7c15ULL; break;
    case VT_STR: {
        x = 1469598103934665603ULL ^ v->u.s->len;
        const unsigned char *p = (const unsigned char *)v->u.s->data;
        for (size_t i = 0; i < v->u.s->len; i++) x = (x ^ p[i]) * 1099511628211ULL;
        break;
    }
    default: x = v->tt; break;
    }
    return mix64(x + v->tt);
}

/* Same constant: same type and value; floats by bit pattern (so 0.0 and -0.0 differ, and
 * 1 and 1.0 are different constants). */
static bool keq(const Value *a, const Value *b) {
    if (a->tt != b->tt) return false;
    switch (a->tt) {
    case VT_INT: return a->u.i == b->u.i;
    case VT_FLOAT: return memcmp(&a->u.n, &b->u.n, sizeof(double)) == 0;
    case VT_STR: return vm_string_eq(a->u.s, b->u.s);
    default: return true;
    }
}

static void kinsert(FuncState *fs, int idx) {
    unsigned mask = (unsigned)fs->khashcap - 1;
    unsigned h = (unsigned)khashof(&fs->f->k[idx]) & mask;
    while (fs->khash[h] != 0) h = (h + 1) & mask;
    fs->khash[h] = idx + 1;
}

static int addk(FuncState *fs, Value v) {
    Proto *f = fs->f;
    State *S = fs->ls->S;
    bool cache = !(v.tt == VT_FLOAT && isnan(v.u.n));
    if (cache && fs->khash) {
        unsigned mask = (unsigned)fs->khashcap - 1;
        unsigned h = (unsigned)khashof(&v) & mask;
        while (fs->khash[h] != 0) {
            int idx = fs->khash[h] - 1;
            if (keq(&f->k[idx], &v)) return idx;
            h = (h + 1) & mask;
        }
    }
    f->k = growarr(S, f->k, &fs->kcap, fs->nk, sizeof(Value), false);
    int idx = fs->nk++;
    f->k[idx] = v;
    if (!cache) return idx;
    if (fs->khash == NULL || (fs->nk * 2 > fs->khashcap)) {
        int ncap = fs->khashcap ? fs->khashcap * 2 : 64;
        fs->khash = vm_alloc_leaf(S, (size_t)ncap * sizeof(int));
        memset(fs->khash, 0, (size_t)ncap * sizeof(int));
        fs->khashcap = ncap;
        for (int i = 0; i < fs->nk; i++) {
            if (!(f->k[i].tt == VT_FLOAT && isnan(f->k[i].u.n))) kinsert(fs, i);
        }
    } else {
        kinsert(fs, idx);
    }
    return idx;
}

int vm_code_stringK(FuncState *fs, String *s) { return addk(fs, vm_str(s)); }
static int intK(FuncState *fs, vm_Integer i) { return addk(fs, vm_int(i)); }
static int numberK(FuncState *fs, vm_Number n) { return addk(fs, vm_float(n)); }

static void codek(FuncState *fs, int reg, int k) { vm_code_abx(fs, OP_LOADK, reg, (uint32_t)k); }

static bool fitsBx(vm_Integer i) { return i >= INT32_MIN && i <= INT32_MAX; }

void vm_code_int(FuncState *fs, int reg, vm_Integer i) {
    if (fitsBx(i))
        vm_code_asbx(fs, OP_LOADI, reg, (int32_t)i);
    else
        codek(fs, reg, intK(fs, i));
}

static void codefloat(FuncState *fs, int reg, vm_Number f) {
    if (f == floor(f) && f >= INT32_MIN && f <= INT32_MAX && !(f == 0 && signbit(f)))
        vm_code_asbx(fs, OP_LOADF, reg, (int32_t)f);
    else
        codek(fs, reg, numberK(fs, f));
}

/* Numeral value of [e] (integer or float literal without jumps). */
static bool tonumeral(const ExpDesc *e, Value *v) {
    if (vm_code_hasjumps(e)) return false;
    switch (e->k) {
    case VKINT: if (v) *v = vm_int(e->u.ival); return true;
    case VKFLT: if (v) *v = vm_float(e->u.nval); return true;
    default: return false;
    }
}

static void const2exp(const Value *v, ExpDesc *e) {
    switch (v->tt) {
    case VT_INT: e->k = VKINT; e->u.ival = v->u.i; break;
    case VT_FLOAT: e->k = VKFLT; e->u.nval = v->u.n; break;
    case VT_FALSE: e->k = VFALSE; break;
    case VT_TRUE: e->k = VTRUE; break;
    case VT_NIL: e->k = VNIL; break;
    case VT_STR: e->k = VKSTR; e->u.strval = v->u.s; break;
    default: e->k = VNIL; break;
    }
}

bool vm_code_exp2const(FuncState *fs, const ExpDesc *e, Value *v) {
    if (vm_code_hasjumps(e)) return false;
    switch (e->k) {
    case VFALSE: *v = vm_bool(false); return true;
    case VTRUE: *v = vm_bool(true); return true;
    case VNIL: *v = vm_nil(); return true;
    case VKSTR: *v = vm_str(e->u.strval); return true;
    case VCONST: *v = fs->dyd->actvar[e->u.info].k; return true;
    default: return tonumeral(e, v);
    }
}

/* ======================================================================
 * Discharging expressions
 * ====================================================================== */

void vm_code_setreturns(FuncState *fs, ExpDesc *e, int nresults) {
    Instr *pc = vm_code_getinstr(fs, e);
    if (e->k == VCALL) {
        vm_setarg_c(pc, (unsigned)(nresults + 1));
    } else { /* VVARARG */
        vm_setarg_c(pc, (unsigned)(nresults + 1));
        vm_setarg_a(pc, (unsigned)fs->freereg);
        vm_code_reserveregs(fs, 1);
    }
}

void vm_code_setoneret(FuncState *fs, ExpDesc *e) {
    if (e->k == VCALL) {
        e->k = VNONRELOC;
        e->u.info = (int)vm_a(*vm_code_getinstr(fs, e));
    } else if (e->k == VVARARG) {
        vm_setarg_c(vm_code_getinstr(fs, e), 2);
        e->k = VRELOC;
    }
}

void vm_code_dischargevars(FuncState *fs, ExpDesc *e) {
    switch (e->k) {
    case VCONST:
        const2exp(&fs->dyd->actvar[e->u.info].k, e);
        break;
    case VLOCAL:
        e->u.info = e->u.var.ridx;
        e->k = VNONRELOC;
        break;
    case VUPVAL:
        e->u.info = vm_code_abc(fs, OP_GETUPVAL, 0, e->u.info, 0, 0);
        e->k = VRELOC;
        break;
    case VINDEXUP:
        e->u.info = vm_code_abc(fs, OP_GETTABUP, 0, e->u.ind.t, e->u.ind.idx, 0);
        e->k = VRELOC;
        break;
    case VINDEXI:
        freereg(fs, e->u.ind.t);
        e->u.info = vm_code_abc(fs, OP_GETI, 0, e->u.ind.t, e->u.ind.idx, 0);
        e->k = VRELOC;
        break;
    case VINDEXSTR:
        freereg(fs, e->u.ind.t);
        e->u.info = vm_code_abc(fs, OP_GETFIELD, 0, e->u.ind.t, e->u.ind.idx, 0);
        e->k = VRELOC;
        break;
    case VINDEXED:
        freeregs(fs, e->u.ind.t, e->u.ind.idx);
        e->u.info = vm_code_abc(fs, OP_GETTABLE, 0, e->u.ind.t, e->u.ind.idx, 0);
        e->k = VRELOC;
        break;
    case VVARARG:
    case VCALL:
        vm_code_setoneret(fs, e);
        break;
    default:
        break;
    }
}

static void discharge2reg(FuncState *fs, ExpDesc *e, int reg) {
    vm_code_dischargevars(fs, e);
    switch (e->k) {
    case VNIL: vm_code_nil(fs, reg, 1); break;
    case VFALSE: vm_code_abc(fs, OP_LOADFALSE, reg, 0, 0, 0); break;
    case VTRUE: vm_code_abc(fs, OP_LOADTRUE, reg, 0, 0, 0); break;
    case VKSTR: codek(fs, reg, vm_code_stringK(fs, e->u.strval)); break;
    case VK: codek(fs, reg, e->u.info); break;
    case VKFLT: codefloat(fs, reg, e->u.nval); break;
    case VKINT: vm_code_int(fs, reg, e->u.ival); break;
    case VRELOC: vm_setarg_a(vm_code_getinstr(fs, e), (unsigned)reg); break;
    case VNONRELOC:
        if (reg != e->u.info) vm_code_abc(fs, OP_MOVE, reg, e->u.info, 0, 0);
        break;
    default:
        return; /* VJMP, VVOID: nothing to do */
    }
    e->u.info = reg;
    e->k = VNONRELOC;
}

static void discharge2anyreg(FuncState *fs, ExpDesc *e) {
    if (e->k != VNONRELOC) {
        vm_code_reserveregs(fs, 1);
        discharge2reg(fs, e, fs->freereg - 1);
    }
}

static int code_loadbool(FuncState *fs, int a, OpCode op) {
    vm_code_getlabel(fs);
    return vm_code_abc(fs, op, a, 0, 0, 0);
}

/* Some jump in [list] needs a real value (is not a TESTSET that produces it). */
static bool need_value(FuncState *fs, int list) {
    for (; list != NO_JUMP; list = getjump(fs, list)) {
        if (vm_op(*getjumpcontrol(fs, list)) != OP_TESTSET) return true;
    }
    return false;
}

static void exp2reg(FuncState *fs, ExpDesc *e, int reg) {
    discharge2reg(fs, e, reg);
    if (e->k == VJMP) vm_code_concat(fs, &e->t, e->u.info);
    if (vm_code_hasjumps(e)) {
        int p_f = NO_JUMP, p_t = NO_JUMP;
        if (need_value(fs, e->t) || need_value(fs, e->f)) {
            int fj = (e->k == VJMP) ? NO_JUMP : vm_code_jump(fs);
            p_f = code_loadbool(fs, reg, OP_LOADFALSE);
            int skip = vm_code_jump(fs);
            p_t = code_loadbool(fs, reg, OP_LOADTRUE);
            vm_code_fixjump(fs, skip, p_t + 1);
            vm_code_patchtohere(fs, fj);
        }
        int final = vm_code_getlabel(fs);
        patchlistaux(fs, e->f, final, reg, p_f);
        patchlistaux(fs, e->t, final, reg, p_t);
    }
    e->f = e->t = NO_JUMP;
    e->u.info = reg;
    e->k = VNONRELOC;
}

void vm_code_exp2nextreg(FuncState *fs, ExpDesc *e) {
    vm_code_dischargevars(fs, e);
    vm_code_freeexp(fs, e);
    vm_code_reserveregs(fs, 1);
    exp2reg(fs, e, fs->freereg - 1);
}

int vm_code_exp2anyreg(FuncState *fs, ExpDesc *e) {
    vm_code_dischargevars(fs, e);
    if (e->k == VNONRELOC) {
        if (!vm_code_hasjumps(e)) return e->u.info;
        if (e->u.info >= vm_code_nvarstack(fs)) { /* a temporary: put the final result there */
            exp2reg(fs, e, e->u.info);
            return e->u.info;
        }
        /* a local with jumps: needs a fresh register */
    }
    vm_code_exp2nextreg(fs, e);
    return e->u.info;
}

void vm_code_exp2anyregup(FuncState *fs, ExpDesc *e) {
    if (e->k != VUPVAL || vm_code_hasjumps(e)) vm_code_exp2anyreg(fs, e);
}

void vm_code_exp2val(FuncState *fs, ExpDesc *e) {
    if (vm_code_hasjumps(e))
        vm_code_exp2anyreg(fs, e);
    else
        vm_code_dischargevars(fs, e);
}

/* Turn a constant expression into VK when its index fits an operand. */
static bool exp2K(FuncState *fs, ExpDesc *e) {
    if (vm_code_hasjumps(e)) return false;
    int info;
    switch (e->k) {
    case VTRUE: info = addk(fs, vm_bool(true)); break;
    case VFALSE: info = addk(fs, vm_bool(false)); break;
    case VNIL: info = addk(fs, vm_nil()); break;
    case VKINT: info = intK(fs, e->u.ival); break;
    case VKFLT: info = numberK(fs, e->u.nval); break;
    case VKSTR: info = vm_code_stringK(fs, e->u.strval); break;
    case VK: info = e->u.info; break;
    default: return false;
    }
    if (info > MAXARG_C) return false;
    e->k = VK;
    e->u.info = info;
    return true;
}

/* RK operand: constant index (returns true) or register (false). */
static bool exp2RK(FuncState *fs, ExpDesc *e) {
    if (exp2K(fs, e)) return true;
    vm_code_exp2anyreg(fs, e);
    return false;
}

static void codeABRK(FuncState *fs, OpCode o, int a, int b, ExpDesc *ec) {
    int k = exp2RK(fs, ec);
    vm_code_abc(fs, o, a, b, ec->u.info, k);
}

void vm_code_storevar(FuncState *fs, ExpDesc *var, ExpDesc *ex) {
    switch (var->k) {
    case VLOCAL:
        vm_code_freeexp(fs, ex);
        exp2reg(fs, ex, var->u.var.ridx);
        return;
    case VUPVAL: {
        int e = vm_code_exp2anyreg(fs, ex);
        vm_code_abc(fs, OP_SETUPVAL, e, var->u.info, 0, 0);
        break;
    }
    case VINDEXUP: codeABRK(fs, OP_SETTABUP, var->u.ind.t, var->u.ind.idx, ex); break;
    case VINDEXI: codeABRK(fs, OP_SETI, var->u.ind.t, var->u.ind.idx, ex); break;
    case VINDEXSTR: codeABRK(fs, OP_SETFIELD, var->u.ind.t, var->u.ind.idx, ex); break;
    case VINDEXED: codeABRK(fs, OP_SETTABLE, var->u.ind.t, var->u.ind.idx, ex); break;
    default: break;
    }
    vm_code_freeexp(fs, ex);
}

void vm_code_self(FuncState *fs, ExpDesc *e, ExpDesc *key) {
    vm_code_exp2anyreg(fs, e);
    int ereg = e->u.info;
    vm_code_freeexp(fs, e);
    e->u.info = fs->freereg;
    e->k = VNONRELOC;
    vm_code_reserveregs(fs, 2);
    codeABRK(fs, OP_SELF, e->u.info, ereg, key);
    vm_code_freeexp(fs, key);
}

/* A string constant usable as GETFIELD/GETTABUP key. */
static bool isKstr(FuncState *fs, ExpDesc *e) {
    return e->k == VK && !vm_code_hasjumps(e) && e->u.info <= MAXARG_C && fs->f->k[e->u.info].tt == VT_STR;
}

static bool isCint(const ExpDesc *e) {
    return e->k == VKINT && !vm_code_hasjumps(e) && e->u.ival >= 0 && e->u.ival <= MAXARG_C;
}

static bool isSCint(const ExpDesc *e) {
    return e->k == VKINT && !vm_code_hasjumps(e) && e->u.ival >= MINARG_SC && e->u.ival <= MAXARG_SC;
}

void vm_code_indexed(FuncState *fs, ExpDesc *t, ExpDesc *k) {
    if (k->k == VKSTR) {
        k->u.info = vm_code_stringK(fs, k->u.strval);
        k->k = VK;
    }
    if (t->k == VUPVAL && !isKstr(fs, k)) vm_code_exp2anyreg(fs, t);
    if (t->k == VUPVAL) {
        int up = t->u.info;
        t->u.ind.t = up;
        t->u.ind.idx = k->u.info;
        t->k = VINDEXUP;
    } else {
        int treg = (t->k == VLOCAL) ? t->u.var.ridx : t->u.info;
        t->u.ind.t = treg;
        if (isKstr(fs, k)) {
            t->u.ind.idx = k->u.info;
            t->k = VINDEXSTR;
        } else if (isCint(k)) {
            t->u.ind.idx = (int)k->u.ival;
            t->k = VINDEXI;
        } else {
            t->u.ind.idx = vm_code_exp2anyreg(fs, k);
            t->k = VINDEXED;
        }
    }
}

/* ======================================================================
 * Conditions
 * ====================================================================== */

static void negatecondition(FuncState *fs, ExpDesc *e) {
    Instr *pc = getjumpcontrol(fs, e->u.info);
    vm_setarg_k(pc, vm_k(*pc) ^ 1u);
}

/* Emit a test of [e] that jumps when its truth equals [cond]; returns the jump. */
static int jumponcond(FuncState *fs, ExpDesc *e, int cond) {
    if (e->k == VRELOC && e->u.info == fs->pc - 1) {
        Instr ie = *vm_code_getinstr(fs, e);
        if (vm_op(ie) == OP_NOT) {
            fs->pc--; /* remove the NOT: test its operand with the opposite sense */
            return condjump(fs, OP_TEST, (int)vm_b(ie), 0, 0, !cond);
        }
    }
    discharge2anyreg(fs, e);
    vm_code_freeexp(fs, e);
    return condjump(fs, OP_TESTSET, NO_REG, e->u.info, 0, cond);
}

void vm_code_goiftrue(FuncState *fs, ExpDesc *e) {
    int pc;
    vm_code_dischargevars(fs, e);
    switch (e->k) {
    case VJMP:
        negatecondition(fs, e);
        pc = e->u.info;
        break;
    case VK: case VKFLT: case VKINT: case VKSTR: case VTRUE:
        pc = NO_JUMP; /* always true */
        break;
    default:
        pc = jumponcond(fs, e, 0);
        break;
    }
    vm_code_concat(fs, &e->f, pc);
    vm_code_patchtohere(fs, e->t);
    e->t = NO_JUMP;
}

void vm_code_goiffalse(FuncState *fs, ExpDesc *e) {
    int pc;
    vm_code_dischargevars(fs, e);
    switch (e->k) {
    case VJMP:
        pc = e->u.info;
        break;
    case VNIL: case VFALSE:
        pc = NO_JUMP; /* always false */
        break;
    default:
        pc = jumponcond(fs, e, 1);
        break;
    }
    vm_code_concat(fs, &e->t, pc);
    vm_code_patchtohere(fs, e->f);
    e->f = NO_JUMP;
}

static void codenot(FuncState *fs, ExpDesc *e) {
    switch (e->k) {
    case VNIL: case VFALSE:
        e->k = VTRUE;
        break;
    case VK: case VKFLT: case VKINT: case VKSTR: case VTRUE:
        e->k = VFALSE;
        break;
    case VJMP:
        negatecondition(fs, e);
        break;
    case VRELOC:
    case VNONRELOC: {
        discharge2anyreg(fs, e);
        vm_code_freeexp(fs, e);
        e->u.info = vm_code_abc(fs, OP_NOT, 0, e->u.info, 0, 0);
        e->k = VRELOC;
        break;
    }
    default:
        break;
    }
    int temp = e->f;
    e->f = e->t;
    e->t = temp;
    removevalues(fs, e->f);
    removevalues(fs, e->t);
}

/* ======================================================================
 * Constant folding
 * ====================================================================== */

#define FOLD_UNM 100
#define FOLD_BNOT 101

static bool num2int_exact(const Value *v, vm_Integer *out) {
    if (v->tt == VT_INT) {
        *out = v->u.i;
        return true;
    }
    double n = v->u.n;
    if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 && floor(n) == n) {
        *out = (vm_Integer)n;
        return true;
    }
    return false;
}

static vm_Integer ishift(vm_Integer x, vm_Integer y) { /* x << y, logical, negative y shifts right */
    if (y <= -64 || y >= 64) return 0;
    if (y < 0) return (vm_Integer)((vm_Unsigned)x >> (unsigned)(-y));
    return (vm_Integer)((vm_Unsigned)x << (unsigned)y);
}

static double fltmod(double a, double b) {
    double m = fmod(a, b);
    if ((m > 0) ? b < 0 : (m < 0 && b > 0)) m += b; /* m and b of different signs */
    return m;
}

/* Fold [op] (an OPR_* arithmetic operator, FOLD_UNM or FOLD_BNOT) over numerals; false when
 * the operation is not safe to fold (conversion error, division by zero). */
static bool foldarith(int op, const Value *a, const Value *b, Value *res) {
    vm_Integer i1, i2;
    switch (op) {
    case OPR_BAND: case OPR_BOR: case OPR_BXOR: case OPR_SHL: case OPR_SHR: case FOLD_BNOT:
        if (!num2int_exact(a, &i1) || !num2int_exact(b, &i2)) return false;
        switch (op) {
        case OPR_BAND: *res = vm_int(i1 & i2); break;
        case OPR_BOR: *res = vm_int(i1 | i2); break;
        case OPR_BXOR: *res = vm_int(i1 ^ i2); break;
        case OPR_SHL: *res = vm_int(ishift(i1, i2)); break;
        case OPR_SHR: *res = vm_int(ishift(i1, (vm_Integer)(0u - (vm_Unsigned)i2))); break;
        default: *res = vm_int(~i1); break;
        }
        return true;
    case OPR_DIV: case OPR_IDIV: case OPR_MOD:
        if (vm_numval(b) == 0) return false;
        break;
    default:
        break;
    }
    if (a->tt == VT_INT && b->tt == VT_INT && op != OPR_DIV && op != OPR_POW) {
        vm_Unsigned x = (vm_Unsigned)a->u.i, y = (vm_Unsigned)b->u.i;
        vm_Integer ia = a->u.i, ib = b->u.i;
        switch (op) {
        case OPR_ADD: *res = vm_int((vm_Integer)(x + y)); return true;
        case OPR_SUB: *res = vm_int((vm_Integer)(x - y)); return true;
        case OPR_MUL: *res = vm_int((vm_Integer)(x * y)); return true;
        case FOLD_UNM: *res = vm_int((vm_Integer)(0u - x)); return true;
        case OPR_MOD: {
            if (ib == -1) { *res = vm_int(0); return true; }
            vm_Integer m = ia % ib;
            if (m != 0 && (m ^ ib) < 0) m += ib;
            *res = vm_int(m);
            return true;
        }
        case OPR_IDIV: {
            if (ib == -1) { *res = vm_int((vm_Integer)(0u - x)); return true; }
            vm_Integer q = ia / ib;
            if ((ia ^ ib) < 0 && ia % ib != 0) q -= 1;
            *res = vm_int(q);
            return true;
        }
        default: return false;
        }
    }
    double n1 = vm_numval(a), n2 = vm_numval(b);
    switch (op) {
    case OPR_ADD: *res = vm_float(n1 + n2); return true;
    case OPR_SUB: *res = vm_float(n1 - n2); return true;
    case OPR_MUL: *res = vm_float(n1 * n2); return true;
    case OPR_DIV: *res = vm_float(n1 / n2); return true;
    case OPR_POW: *res = vm_float(n2 == 2 ? n1 * n1 : pow(n1, n2)); return true;
    case OPR_IDIV: *res = vm_float(floor(n1 / n2)); return true;
    case OPR_MOD: *res = vm_float(fltmod(n1, n2)); return true;
    case FOLD_UNM: *res = vm_float(-n1); return true;
    default: return false;
    }
}

static bool constfolding(int op, ExpDesc *e1, const ExpDesc *e2) {
    Value v1, v2, res;
    if (!tonumeral(e1, &v1) || !tonumeral(e2, &v2)) return false;
    if (!foldarith(op, &v1, &v2, &res)) return false;
    if (res.tt == VT_INT) {
        e1->k = VKINT;
        e1->u.ival = res.u.i;
    } else {
        double n = res.u.n;
        if (isnan(n) || n == 0) return false; /* keep NaN and -0.0 out of constants */
        e1->k = VKFLT;
        e1->u.nval = n;
    }
    return true;
}

/* ======================================================================
 * Operators
 * ====================================================================== */

static void codeunexpval(FuncState *fs, OpCode op, ExpDesc *e, int line) {
    int r = vm_code_exp2anyreg(fs, e);
    vm_code_freeexp(fs, e);
    e->u.info = vm_code_abc(fs, op, 0, r, 0, 0);
    e->k = VRELOC;
    vm_code_fixline(fs, line);
}

void vm_code_prefix(FuncState *fs, UnOpr op, ExpDesc *e, int line) {
    static const ExpDesc zero = {VKINT, {0}, NO_JUMP, NO_JUMP};
    vm_code_dischargevars(fs, e);
    switch (op) {
    case OPR_MINUS:
        if (constfolding(FOLD_UNM, e, &zero)) break;
        codeunexpval(fs, OP_UNM, e, line);
        break;
    case OPR_BNOT:
        if (constfolding(FOLD_BNOT, e, &zero)) break;
        codeunexpval(fs, OP_BNOT, e, line);
        break;
    case OPR_LEN:
        codeunexpval(fs, OP_LEN, e, line);
        break;
    case OPR_NOT:
        codenot(fs, e);
        break;
    default:
        break;
    }
}

void vm_code_infix(FuncState *fs, BinOpr op, ExpDesc *v) {
    vm_code_dischargevars(fs, v);
    switch (op) {
    case OPR_AND:
        vm_code_goiftrue(fs, v);
        break;
    case OPR_OR:
        vm_code_goiffalse(fs, v);
        break;
    case OPR_CONCAT:
        vm_code_exp2nextreg(fs, v);
        break;
    case OPR_ADD: case OPR_SUB: case OPR_MUL: case OPR_DIV: case OPR_IDIV: case OPR_MOD:
    case OPR_POW: case OPR_BAND: case OPR_BOR: case OPR_BXOR: case OPR_SHL: case OPR_SHR:
        if (!tonumeral(v, NULL)) vm_code_exp2anyreg(fs, v);
        break;
    case OPR_EQ: case OPR_NE:
        if (!tonumeral(v, NULL)) exp2RK(fs, v);
        break;
    case OPR_LT: case OPR_LE: case OPR_GT: case OPR_GE:
        if (!isSCint(v)) vm_code_exp2anyreg(fs, v);
        break;
    default:
        break;
    }
}

static void finishbinexpval(FuncState *fs, ExpDesc *e1, ExpDesc *e2, OpCode op, int v2, int line) {
    int v1 = vm_code_exp2anyreg(fs, e1);
    int pc = vm_code_abc(fs, op, 0, v1, v2, 0);
    freeexps(fs, e1, e2);
    e1->u.info = pc;
    e1->k = VRELOC;
    vm_code_fixline(fs, line);
}

static void codebinexpval(FuncState *fs, BinOpr opr, ExpDesc *e1, ExpDesc *e2, int line) {
    int v2 = vm_code_exp2anyreg(fs, e2);
    finishbinexpval(fs, e1, e2, (OpCode)(OP_ADD + opr), v2, line);
}

/* Arithmetic with a numeric constant on the right uses the K form. */
static void codearith(FuncState *fs, BinOpr opr, ExpDesc *e1, ExpDesc *e2, int line) {
    if (tonumeral(e2, NULL) && exp2K(fs, e2))
        finishbinexpval(fs, e1, e2, (OpCode)(OP_ADDK + opr), e2->u.info, line);
    else
        codebinexpval(fs, opr, e1, e2, line);
}

static void codebitwise(FuncState *fs, BinOpr opr, ExpDesc *e1, ExpDesc *e2, int line) {
    if (e2->k == VKINT && exp2K(fs, e2))
        finishbinexpval(fs, e1, e2, (OpCode)(OP_ADDK + opr), e2->u.info, line);
    else
        codebinexpval(fs, opr, e1, e2, line);
}

static void codeconcat(FuncState *fs, ExpDesc *e1, ExpDesc *e2, int line) {
    Instr *ie2 = previousinstruction(fs);
    if (ie2 && vm_op(*ie2) == OP_CONCAT && (int)vm_a(*ie2) == e1->u.info + 1) {
        unsigned n = vm_b(*ie2);
        vm_code_freeexp(fs, e2);
        vm_setarg_a(ie2, (unsigned)e1->u.info);
        vm_setarg_b(ie2, n + 1);
    } else {
        vm_code_abc(fs, OP_CONCAT, e1->u.info, 2, 0, 0);
        vm_code_freeexp(fs, e2);
        vm_code_fixline(fs, line);
    }
}

static void swapexps(ExpDesc *e1, ExpDesc *e2) {
    ExpDesc t = *e1;
    *e1 = *e2;
    *e2 = t;
}

static void codeeq(FuncState *fs, BinOpr opr, ExpDesc *e1, ExpDesc *e2) {
    int r1, r2;
    OpCode op;
    if (e1->k != VNONRELOC) swapexps(e1, e2); /* the constant goes second */
    r1 = vm_code_exp2anyreg(fs, e1);
    if (isSCint(e2)) {
        op = OP_EQI;
        r2 = (int)e2->u.ival;
    } else if (exp2RK(fs, e2)) {
        op = OP_EQK;
        r2 = e2->u.info;
    } else {
        op = OP_EQ;
        r2 = vm_code_exp2anyreg(fs, e2);
    }
    freeexps(fs, e1, e2);
    e1->u.info = condjump(fs, op, r1, r2, 0, opr == OPR_EQ);
    e1->k = VJMP;
}

static void codeorder(FuncState *fs, BinOpr opr, ExpDesc *e1, ExpDesc *e2) {
    int r1, r2;
    OpCode op;
    if (isSCint(e2)) {
        r1 = vm_code_exp2anyreg(fs, e1);
        r2 = (int)e2->u.ival;
        op = opr == OPR_LT ? OP_LTI : OP_LEI;
    } else if (isSCint(e1)) { /* c < x is x > c; c <= x is x >= c */
        r1 = vm_code_exp2anyreg(fs, e2);
        r2 = (int)e1->u.ival;
        op = opr == OPR_LT ? OP_GTI : OP_GEI;
    } else {
        r1 = vm_code_exp2anyreg(fs, e1);
        r2 = vm_code_exp2anyreg(fs, e2);
        op = opr == OPR_LT ? OP_LT : OP_LE;
    }
    freeexps(fs, e1, e2);
    e1->u.info = condjump(fs, op, r1, r2, 0, 1);
    e1->k = VJMP;
}

void vm_code_posfix(FuncState *fs, BinOpr opr, ExpDesc *e1, ExpDesc *e2, int line) {
    vm_code_dischargevars(fs, e2);
    if (opr <= OPR_SHR && constfolding((int)opr, e1, e2)) return;
    switch (opr) {
    case OPR_AND:
        vm_code_concat(fs, &e2->f, e1->f);
        *e1 = *e2;
        break;
    case OPR_OR:
        vm_code_concat(fs, &e2->t, e1->t);
        *e1 = *e2;
        break;
    case OPR_CONCAT:
        vm_code_exp2nextreg(fs, e2);
        codeconcat(fs, e1, e2, line);
        break;
    case OPR_ADD:
        if (isSCint(e2))
            finishbinexpval(fs, e1, e2, OP_ADDI, (int)e2->u.ival, line);
        else
            codearith(fs, opr, e1, e2, line);
        break;
    case OPR_SUB: case OPR_MUL: case OPR_DIV: case OPR_IDIV: case OPR_MOD: case OPR_POW:
        /* x - c is SUBK, not ADDI with -c: a __sub metamethod must see the real operands
         * (SUBK computes x - 0 as lua5.4's ADDI does: x + 0, see vm_interp_body.h) */
        codearith(fs, opr, e1, e2, line);
        break;
    case OPR_BAND: case OPR_BOR: case OPR_BXOR:
        codebitwise(fs, opr, e1, e2, line);
        break;
    case OPR_SHL: case OPR_SHR:
        codebinexpval(fs, opr, e1, e2, line);
        break;
    case OPR_EQ: case OPR_NE:
        codeeq(fs, opr, e1, e2);
        break;
    case OPR_GT: case OPR_GE:
        swapexps(e1, e2); /* a > b is b < a; a >= b is b <= a */
        codeorder(fs, opr == OPR_GT ? OPR_LT : OPR_LE, e1, e2);
        break;
    case OPR_LT: case OPR_LE:
        codeorder(fs, opr, e1, e2);
        break;
    default:
        break;
    }
}

/* ======================================================================
 * Tables, finishing a function
 * ====================================================================== */

void vm_code_settablesize(FuncState *fs, int pc, int ra, int asize, int hsize) {
    Instr *inst = &fs->f->code[pc];
    *inst = vm_encode_abc(OP_NEWTABLE, (unsigned)ra, (unsigned)(hsize > MAXARG_C ? MAXARG_C : hsize),
                          (unsigned)(asize > MAXARG_C ? MAXARG_C : asize), 0);
}

void vm_code_setlist(FuncState *fs, int base, int nelems, int tostore) {
    if (tostore < 0) tostore = 0;
    if (nelems <= MAXARG_C) {
        vm_code_abc(fs, OP_SETLIST, base, tostore, nelems, 0);
    } else {
        vm_code_abc(fs, OP_SETLIST, base, tostore, 0, 1);
        vm_code_abx(fs, OP_EXTRAARG, 0, (uint32_t)nelems);
    }
    fs->freereg = base + 1;
}

/* Final target of a chain of jumps (bounded, as a jump may loop on itself). */
static int finaltarget(Instr *code, int i) {
    for (int count = 0; count < 100; count++) {
        Instr pc = code[i];
        if (vm_op(pc) != OP_JMP) break;
        i += vm_sbx(pc) + 1;
    }
    return i;
}

void vm_code_finish(FuncState *fs) {
    Proto *p = fs->f;
    for (int i = 0; i < fs->pc; i++) {
        Instr *pc = &p->code[i];
        switch (vm_op(*pc)) {
        case OP_RETURN0:
        case OP_RETURN1:
            /* the short forms neither close upvalues nor undo a vararg frame */
            if (fs->needclose || p->is_vararg) vm_setop(pc, OP_RETURN);
            break;
        case OP_JMP: {
            int target = finaltarget(p->code, i);
            vm_code_fixjump(fs, i, target);
            break;
        }
        default:
            break;
        }
    }
}
