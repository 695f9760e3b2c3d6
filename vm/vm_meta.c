/* vm_meta.c: slow paths of the interpreter and the value operations of vm_lib.h:
 * arithmetic with coercion and metamethods, comparisons, indexing chains, concatenation,
 * length, tostring, numeric for preparation. */
#include <math.h>
#include <stdio.h>

#include "vm_debug.h"
#include "vm_do.h"
#include "vm_lib.h"
#include "vm_meta.h"

/* Longest __index/__newindex chain followed before giving up (as Lua's MAXTAGLOOP). */
#define VM_MAXTAGLOOP 2000

/* ======================================================================
 * Metamethod calls
 * ====================================================================== */

static const Value *tm_of(State *S, const Value *v, TMS e) {
    Table *mt = vm_metatable_of(S, v);
    if (mt == NULL) return NULL;
    if (e < VM_TM_FAST) return vm_fasttm(S, mt, e);
    return vm_gettm(mt, e, S->g->tmname[e]);
}

/* f(a, b) -> first result. [f] is usually a metatable slot (tm_of), which other threads
 * may change: loaded whole. The operands are registers or private copies. */
static Value call_tm_res(State *S, const Value *f, const Value *a, const Value *b) {
    Value fv = vm_loadv(f), av = *a, bv = *b;
    vm_checkstack_fast(S, 3);
    S->top[0] = fv;
    S->top[1] = av;
    S->top[2] = bv;
    S->top += 3;
    vm_call_value(S, S->top - 3, 1);
    S->top--;
    return *S->top;
}

static void call_tm(State *S, const Value *f, const Value *a, const Value *b, const Value *c) {
    Value fv = vm_loadv(f), av = *a, bv = *b, cv = *c;
    vm_checkstack_fast(S, 4);
    S->top[0] = fv;
    S->top[1] = av;
    S->top[2] = bv;
    S->top[3] = cv;
    S->top += 4;
    vm_call_value(S, S->top - 4, 0);
}

/* Try the binary metamethod [e] of a, then of b. */
static bool trybinTM(State *S, const Value *a, const Value *b, TMS e, Value *res) {
    const Value *tm = tm_of(S, a, e);
    if (tm == NULL) tm = tm_of(S, b, e);
    if (tm == NULL) return false;
    *res = call_tm_res(S, tm, a, b);
    return true;
}

/* ======================================================================
 * Numbers
 * ====================================================================== */

/* Number from a number or a numeric string. */
static bool tonum(const Value *v, Value *out) {
    if (vm_isnumber(v)) {
        *out = *v;
        return true;
    }
    if (v->tt == VT_STR) return vm_str2number(v->u.s->data, v->u.s->len, out);
    return false;
}

/* Integer operand of a bitwise operation: strings are not coerced (lua5.4's string
 * metamethods cover arithmetic only). */
static bool toint_strict(const Value *v, vm_Integer *out) {
    if (v->tt == VT_INT) {
        *out = v->u.i;
        return true;
    }
    return v->tt == VT_FLOAT && vm_flt2int(v->u.n, out);
}

bool vm_lt_num(const Value *a, const Value *b) {
    if (a->tt == VT_INT) {
        vm_Integer i = a->u.i;
        if (b->tt == VT_INT) return i < b->u.i;
        double f = b->u.n;
        if (isnan(f)) return false;
        if (f >= 0x1p63) return true;
        if (f <= -0x1p63) return false;
        return i < (vm_Integer)ceil(f);
    }
    double f = a->u.n;
    if (b->tt == VT_FLOAT) return f < b->u.n;
    vm_Integer i = b->u.i;
    if (isnan(f)) return false;
    if (f >= 0x1p63) return false;
    if (f < -0x1p63) return true;
    return (vm_Integer)floor(f) < i;
}

bool vm_le_num(const Value *a, const Value *b) {
    if (a->tt == VT_INT) {
        vm_Integer i = a->u.i;
        if (b->tt == VT_INT) return i <= b->u.i;
        double f = b->u.n;
        if (isnan(f)) return false;
        if (f >= 0x1p63) return true;
        if (f < -0x1p63) return false;
        return i <= (vm_Integer)floor(f);
    }
    double f = a->u.n;
    if (b->tt == VT_FLOAT) return f <= b->u.n;
    vm_Integer i = b->u.i;
    if (isnan(f)) return false;
    if (f >= 0x1p63) return false;
    if (f <= -0x1p63) return true;
    return (vm_Integer)ceil(f) <= i;
}

bool vm_eq_num(const Value *a, const Value *b) {
    if (a->tt == b->tt) return a->tt == VT_INT ? a->u.i == b->u.i : a->u.n == b->u.n;
    vm_Integer i;
    if (a->tt == VT_INT) return vm_flt2int(b->u.n, &i) && i == a->u.i;
    return vm_flt2int(a->u.n, &i) && i == b->u.i;
}

static bool is_numstr(const Value *v) {
    Value n;
    return tonum(v, &n);
}

static bool isbitop(TMS op) { return (op >= TM_BAND && op <= TM_SHR) || op == TM_BNOT; }

Value vm_arith(State *S, TMS op, const Value *a, const Value *b) {
    if (isbitop(op)) {
        vm_Integer x, y;
        if (toint_strict(a, &x) && toint_strict(b, &y)) {
            switch (op) {
            case TM_BAND: return vm_int(x & y);
            case TM_BOR: return vm_int(x | y);
            case TM_BXOR: return vm_int(x ^ y);
            case TM_SHL: return vm_int(vm_shiftl(x, y));
            case TM_SHR: return vm_int(vm_shiftl(x, (vm_Integer)(0u - (vm_Unsigned)y)));
            default: return vm_int(~x);
            }
        }
    } else {
        Value x, y;
        if (tonum(a, &x) && tonum(b, &y)) {
            if (x.tt == VT_INT && y.tt == VT_INT) {
                vm_Integer i = x.u.i, j = y.u.i;
                switch (op) {
                case TM_ADD: return vm_int((vm_Integer)((vm_Unsigned)i + (vm_Unsigned)j));
                case TM_SUB: return vm_int((vm_Integer)((vm_Unsigned)i - (vm_Unsigned)j));
                case TM_MUL: return vm_int((vm_Integer)((vm_Unsigned)i * (vm_Unsigned)j));
                case TM_UNM: return vm_int((vm_Integer)(0u - (vm_Unsigned)i));
                case TM_MOD:
                    if (j == 0) vm_runerror(S, "attempt to perform 'n%%0'");
                    return vm_int(vm_imod(i, j));
                case TM_IDIV:
                    if (j == 0) vm_runerror(S, "attempt to divide by zero");
                    return vm_int(vm_idiv(i, j));
                default: break; /* / and ^ are float operations */
                }
            }
            double p = vm_numval(&x), q = vm_numval(&y);
            switch (op) {
            case TM_ADD: return vm_float(p + q);
            case TM_SUB: return vm_float(p - q);
            case TM_MUL: return vm_float(p * q);
            case TM_DIV: return vm_float(p / q);
            case TM_POW: return vm_float(q == 2.0 ? p * p : pow(p, q));
            case TM_IDIV: return vm_float(floor(p / q));
            case TM_MOD: return vm_float(vm_fmod(p, q));
            case TM_UNM: return vm_float(-p);
            default: break;
            }
        }
    }
    Value res;
    if (trybinTM(S, a, b, op, &res)) return res;
    if (isbitop(op)) {
        if (vm_isnumber(a) && vm_isnumber(b)) vm_tointerror(S, a, b);
        vm_opinterror(S, a, b, "perform bitwise operation on");
    }
    /* A numeric string is a fine operand of arithmetic: blame the other one. */
    if (a->tt == VT_STR && is_numstr(a)) a = b;
    vm_opinterror(S, a, b, "perform arithmetic on");
}

/* ======================================================================
 * Indexing
 * ====================================================================== */

/* [t] may be an upvalue or a table slot that other threads change: it is loaded whole
 * once (vm_loadv), and so is every slot and metamethod on the way; decisions are made on
 * those copies (a call or an error never sees a value torn between two stores). [t]
 * itself is passed on to error messages only for its address (the variable's name). */
/* (In the loop, [tv] and [tmv] are never address-taken, so they stay in registers: a Value
 * spilled as two halves and read back whole by a struct copy stalls on store forwarding,
 * and that cost was paid at every step of an __index chain.) */

vm_V16 vm_index_string(State *S, String *key) { return vm_index_string_inline(S, key); }

Value vm_finishget(State *S, const Value *t, const Value *k, const Value *slot) {
    Value tv = vm_loadv(t), kv = *k;   /* the key is a register or a constant: private */
    for (int loop = 0; loop < VM_MAXTAGLOOP; loop++) {
        Value tmv;
        if (tv.tt == VT_TABLE) {
            if (slot == NULL)
                slot = kv.tt == VT_STR ? vm_table_getstr_inline(tv.u.t, kv.u.s) : vm_table_get(tv.u.t, &kv);
            Value v = vm_loadv(slot);
            if (v.tt != VT_NIL) return v;
            const Value *tm = vm_fasttm(S, tv.u.t->meta, TM_INDEX);
            if (tm == NULL) return vm_nil();
            tmv = vm_loadv(tm);
        } else {
            Value cur = tv;
            const Value *tm = tm_of(S, &cur, TM_INDEX);
            if (tm == NULL) vm_typeerror_of(S, loop == 0 ? t : NULL, &cur, "index");
            tmv = vm_loadv(tm);
        }
        if (vm_isfunction(&tmv)) {
            Value f = tmv, self = tv;
            return call_tm_res(S, &f, &self, &kv);
        }
        tv = tmv;
        slot = NULL;
    }
    vm_runerror(S, "'__index' chain too long; possible loop");
}

void vm_finishset(State *S, const Value *t, const Value *k, const Value *v) {
    Value tv = vm_loadv(t), kv = *k, vv = *v;   /* key and value: registers or constants */
    for (int loop = 0; loop < VM_MAXTAGLOOP; loop++) {
        Value tmv;
        if (tv.tt == VT_TABLE) {
            Table *h = tv.u.t;
            const Value *slot = vm_table_get(h, &kv);
            const Value *tm;
            if (!vm_isnil(slot) || (tm = vm_fasttm(S, h->meta, TM_NEWINDEX)) == NULL) {
                vm_table_set(S, h, &kv, &vv);
                return;
            }
            tmv = vm_loadv(tm);
        } else {
            Value cur = tv;
            const Value *tm = tm_of(S, &cur, TM_NEWINDEX);
            if (tm == NULL) vm_typeerror_of(S, loop == 0 ? t : NULL, &cur, "index");
            tmv = vm_loadv(tm);
        }
        if (vm_isfunction(&tmv)) {
            Value f = tmv, self = tv;
            call_tm(S, &f, &self, &kv, &vv);
            return;
        }
        tv = tmv;
    }
    vm_runerror(S, "'__newindex' chain too long; possible loop");
}

Value vm_gettable(State *S, const Value *t, const Value *k) {
    Value tv = vm_loadv(t);
    if (tv.tt == VT_TABLE) {
        Value v = vm_loadv(vm_table_get(tv.u.t, k));
        if (v.tt != VT_NIL || tv.u.t->meta == NULL) return v;
        return vm_finishget(S, t, k, &vm_absent);
    }
    return vm_finishget(S, t, k, NULL);
}

void vm_settable(State *S, const Value *t, const Value *k, const Value *v) { vm_finishset(S, t, k, v); }

Value vm_getfield(State *S, const Value *t, const char *k) {
    Value key = vm_str(vm_string_newc(S, k));
    return vm_gettable(S, t, &key);
}

/* ======================================================================
 * Comparison
 * ====================================================================== */

bool vm_rawequal(const Value *a, const Value *b) {
    if (a->tt != b->tt) {
        if (vm_isnumber(a) && vm_isnumber(b)) return vm_eq_num(a, b);
        return false;
    }
    switch (a->tt) {
    case VT_NIL:
    case VT_FALSE:
    case VT_TRUE: return true;
    case VT_INT: return a->u.i == b->u.i;
    case VT_FLOAT: return a->u.n == b->u.n;
    case VT_STR: return vm_string_eq(a->u.s, b->u.s);
    default: return a->u.p == b->u.p;
    }
}

bool vm_equal(State *S, const Value *a, const Value *b) {
    if (a->tt != b->tt || (a->tt != VT_TABLE && a->tt != VT_USERDATA)) return vm_rawequal(a, b);
    if (a->u.p == b->u.p) return true;
    const Value *tm = tm_of(S, a, TM_EQ);
    if (tm == NULL) tm = tm_of(S, b, TM_EQ);
    if (tm == NULL) return false;
    Value r = call_tm_res(S, tm, a, b);
    return !vm_isfalsy(&r);
}

static bool order_tm(State *S, const Value *a, const Value *b, TMS e) {
    Value r;
    if (trybinTM(S, a, b, e, &r)) return !vm_isfalsy(&r);
    /* a <= b as not (b < a) when only __lt exists: lua5.4 is built with LUA_COMPAT_LT_LE. */
    if (e == TM_LE && trybinTM(S, b, a, TM_LT, &r)) return vm_isfalsy(&r);
    vm_ordererror(S, a, b);
}

bool vm_lessthan(State *S, const Value *a, const Value *b) {
    if (vm_isnumber(a) && vm_isnumber(b)) return vm_lt_num(a, b);
    if (a->tt == VT_STR && b->tt == VT_STR) return vm_string_cmp(a->u.s, b->u.s) < 0;
    return order_tm(S, a, b, TM_LT);
}

bool vm_lessequal(State *S, const Value *a, const Value *b) {
    if (vm_isnumber(a) && vm_isnumber(b)) return vm_le_num(a, b);
    if (a->tt == VT_STR && b->tt == VT_STR) return vm_string_cmp(a->u.s, b->u.s) <= 0;
    return order_tm(S, a, b, TM_LE);
}

/* ======================================================================
 * Length, concatenation
 * ====================================================================== */

Value vm_len(State *S, const Value *v) {
    if (v->tt == VT_STR) return vm_int((vm_Integer)v->u.s->len);
    const Value *tm = tm_of(S, v, TM_LEN);
    if (tm != NULL) return call_tm_res(S, tm, v, v);
    if (v->tt == VT_TABLE) return vm_int((vm_Integer)vm_table_len(v->u.t));
    vm_typeerror(S, v, "get length of");
}

static bool tostr_coercible(const Value *v) { return v->tt == VT_STR || vm_isnumber(v); }

void vm_concat(State *S, int total) {
    while (total > 1) {
        Value *top = S->top;
        if (!tostr_coercible(top - 2) || !tostr_coercible(top - 1)) {
            Value r;
            if (!trybinTM(S, top - 2, top - 1, TM_CONCAT, &r)) vm_concaterror(S, top - 2, top - 1);
            S->top[-2] = r;
            S->top--;
            total--;
            continue;
        }
        /* Join the longest run of strings/numbers ending at the top in one allocation. */
        size_t len = 0;
        int n = 0;
        for (; n < total && tostr_coercible(top - n - 1); n++) {
            Value *v = top - n - 1;
            if (v->tt != VT_STR) *v = vm_str(vm_number_tostring(S, v));
            if (v->u.s->len >= SIZE_MAX / 2 - len) vm_runerror(S, "string length overflow");
            len += v->u.s->len;
        }
        String *r = vm_string_alloc(S, len);
        char *p = r->data;
        for (int j = n; j >= 1; j--) {
            String *s = top[-j].u.s;
            memcpy(p, s->data, s->len);
            p += s->len;
        }
        top[-n] = vm_str(r);
        S->top -= n - 1;
        total -= n - 1;
    }
}

/* ======================================================================
 * Types and tostring
 * ====================================================================== */

const char *vm_typename(const Value *v) {
    switch (v->tt) {
    case VT_NIL: return "nil";
    case VT_FALSE:
    case VT_TRUE: return "boolean";
    case VT_INT:
    case VT_FLOAT: return "number";
    case VT_STR: return "string";
    case VT_TABLE: return "table";
    case VT_LFUNC:
    case VT_CFUNC: return "function";
    case VT_USERDATA:
    case VT_LIGHTUD: return "userdata";
    case VT_THREAD: return "thread";
    default: return "proto";
    }
}

const char *vm_objtypename(State *S, const Value *v) {
    Table *mt = NULL;
    if (v->tt == VT_TABLE) mt = v->u.t->meta;
    if (v->tt == VT_USERDATA) mt = v->u.u->meta;
    if (mt != NULL) {
        Value name = vm_loadv(vm_table_getstr(mt, S->g->tmname[TM_NAME]));
        if (name.tt == VT_STR) return name.u.s->data;
    }
    return vm_typename(v);
}

Table *vm_getmetatable(State *S, const Value *v) { return vm_metatable_of(S, v); }

Value vm_getmetafield(State *S, const Value *v, const char *event) {
    Table *mt = vm_metatable_of(S, v);
    if (mt == NULL) return vm_nil();
    return vm_loadv(vm_table_getstr(mt, vm_string_newc(S, event)));
}

String *vm_tostring(State *S, const Value *v) {
    const Value *tm = tm_of(S, v, TM_TOSTRING);
    if (tm != NULL) {
        Value r = call_tm_res(S, tm, v, v);
        if (r.tt != VT_STR) {
            if (vm_isnumber(&r)) return vm_number_tostring(S, &r);
            vm_error(S, "'__tostring' must return a string");
        }
        return r.u.s;
    }
    switch (v->tt) {
    case VT_NIL: return vm_string_newc(S, "nil");
    case VT_FALSE: return vm_string_newc(S, "false");
    case VT_TRUE: return vm_string_newc(S, "true");
    case VT_INT:
    case VT_FLOAT: return vm_number_tostring(S, v);
    case VT_STR: return v->u.s;
    default: {
        char buf[128];
        const char *kind = vm_objtypename(S, v);
        snprintf(buf, sizeof buf, "%.80s: %p", kind, v->u.p);
        return vm_string_newc(S, buf);
    }
    }
}

/* ======================================================================
 * Numeric for
 * ====================================================================== */

/* Integer limit of a loop with integer init and step; true when the loop must not run. */
static bool forlimit(State *S, vm_Integer init, const Value *lim, vm_Integer *p, vm_Integer step) {
    if (lim->tt == VT_INT) {
        *p = lim->u.i;
    } else {
        Value n;
        if (!tonum(lim, &n)) vm_forerror(S, lim, "limit");
        if (n.tt == VT_INT) {
            *p = n.u.i;
        } else {
            double f = n.u.n;
            if (isnan(f)) return true;
            if (step > 0) {
                f = floor(f);
                if (f >= 0x1p63)
                    *p = VM_MAXINTEGER;
                else if (f < -0x1p63)
                    return true;
                else
                    *p = (vm_Integer)f;
            } else {
                f = ceil(f);
                if (f < -0x1p63)
                    *p = VM_MININTEGER;
                else if (f >= 0x1p63)
                    return true;
                else
                    *p = (vm_Integer)f;
            }
        }
    }
    return step > 0 ? init > *p : init < *p;
}

bool vm_setfield_new(State *S, Table *h, String *key, const Value *val) {
    if (!vm_newindex_absent(S, h)) return false;
    vm_table_setstr(S, h, key, val);
    return true;
}

bool vm_tfor_fast(State *S, Value *ra, int nvars) {
    if (ra[0].tt != VT_CFUNC || ra[1].tt != VT_TABLE || S->stack_last - (ra + 4) <= 3) return false;
    CFunction f = ra[0].u.cf->f;
    if (f == S->g->fn_next) {
        vm_tfor_next_inline(S, ra, nvars);
        return true;
    }
    Table *t = ra[1].u.t;
    if (f != S->g->fn_ipairs_aux || t->meta != NULL || ra[2].tt != VT_INT) return false;
    vm_Integer i = (vm_Integer)((vm_Unsigned)ra[2].u.i + 1u);
    Value v = vm_loadv(vm_table_getint(t, i));
    if (vm_isnil(&v)) {
        ra[4].tt = VT_NIL;
    } else {
        ra[4] = vm_int(i);
        ra[5] = v;
        for (int j = 2; j < nvars; j++) ra[4 + j].tt = VT_NIL;
    }
    return true;
}

bool vm_forprep(State *S, Value *ra) {
    if (ra[0].tt == VT_INT && ra[2].tt == VT_INT) {
        vm_Integer init = ra[0].u.i, step = ra[2].u.i, limit;
        if (step == 0) vm_runerror(S, "'for' step is zero");
        ra[3] = vm_int(init);
        if (forlimit(S, init, &ra[1], &limit, step)) return true;
        vm_Unsigned count;
        if (step > 0) {
            count = (vm_Unsigned)limit - (vm_Unsigned)init;
            if (step != 1) count /= (vm_Unsigned)step;
        } else {
            count = (vm_Unsigned)init - (vm_Unsigned)limit;
            count /= (vm_Unsigned)(-(step + 1)) + 1u;
        }
        ra[1] = vm_int((vm_Integer)count);
        return false;
    }
    Value init, limit, step;
    /* Numeric strings are accepted, as lua5.4 does. */
    if (!tonum(&ra[1], &limit)) vm_forerror(S, &ra[1], "limit");
    if (!tonum(&ra[2], &step)) vm_forerror(S, &ra[2], "step");
    if (!tonum(&ra[0], &init)) vm_forerror(S, &ra[0], "initial");
    double fi = vm_numval(&init), fl = vm_numval(&limit), fs = vm_numval(&step);
    if (fs == 0) vm_runerror(S, "'for' step is zero");
    if (fs > 0 ? fl < fi : fi < fl) return true;
    ra[0] = vm_float(fi);
    ra[1] = vm_float(fl);
    ra[2] = vm_float(fs);
    ra[3] = vm_float(fi);
    return false;
}

bool vm_floatforloop(Value *ra) {
    double step = ra[2].u.n, limit = ra[1].u.n, idx = ra[0].u.n + step;
    if (step > 0 ? idx <= limit : limit <= idx) {
        ra[0].u.n = idx;
        ra[3] = vm_float(idx);
        return true;
    }
    return false;
}
