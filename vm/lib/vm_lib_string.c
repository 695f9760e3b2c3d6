/* vm_lib_string.c: the string library (basic functions and registration) and the string
 * metatable; patterns live in vm_lib_pattern.c, string.format in vm_lib_strfmt.c, pack and
 * unpack in vm_lib_strpack.c. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "vm_bytecode.h"
#include "vm_lib_pattern.h"
#include "vm_prof.h"

/* Largest string the library builds: Lua's MAX_SIZE, the smaller of size_t and its integer
 * type, so that lengths always fit in a Lua integer. */
#define STR_MAXSIZE ((size_t)INT64_MAX)

/* lstrlib's MAXSIZE: the limits string.rep and string.byte put on a result, smaller than
 * any string can be ("resulting string too large", "string slice too long"), so that the
 * error is lua5.4's and not a failed allocation of gigabytes. */
#define STR_LIBMAXSIZE ((size_t)INT_MAX)

/* Results string.byte may push at once: the Lua stack limit, as luaL_checkstack's. */
#define STR_MAXBYTES (VM_MAXSTACK - 1000)

/* ======================================================================
 * Growable buffer (see StrBuf in vm_lib_pattern.h)
 * ====================================================================== */

void vm_strbuf_init(State *S, StrBuf *B) {
    B->S = S;
    B->b = B->init;
    B->n = 0;
    B->cap = sizeof B->init;
}

char *vm_strbuf_reserve(StrBuf *B, size_t extra) {
    if (B->cap - B->n < extra) {
        if (extra > STR_MAXSIZE - B->n) vm_error(B->S, "resulting string too large");
        size_t need = B->n + extra;
        size_t cap = B->cap * 2;
        if (cap < need) cap = need;
        char *nb = vm_alloc_leaf(B->S, cap);
        memcpy(nb, B->b, B->n);
        B->b = nb;
        B->cap = cap;
    }
    return B->b + B->n;
}

void vm_strbuf_addlstr_grow(StrBuf *B, const char *s, size_t len) {
    memcpy(vm_strbuf_reserve(B, len), s, len);
    B->n += len;
}

String *vm_strbuf_push(StrBuf *B) {
    return vm_pushstr(B->S, B->b, B->n);
}

/* ======================================================================
 * Positions (Lua 5.4 rules)
 * ====================================================================== */

/* Start position: negative counts from the end, 0 and anything before the start clip to 1. */
static size_t start_pos(vm_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(vm_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

/* End position: clipped to [0, len]. */
static size_t end_pos(vm_Integer pos, size_t len) {
    if (pos > (vm_Integer)len) return len;
    if (pos >= 0) return (size_t)pos;
    if (pos < -(vm_Integer)len) return 0;
    return len + (size_t)pos + 1;
}

/* ======================================================================
 * Results built in place
 * ======================================================================
 * A result of known length is written either into a new string (long) or into a buffer on
 * the C stack (short), which result_push then hands to vm_pushstr: a short result the
 * coroutine made recently comes back as that same string, without an allocation
 * (vm_string_reuse). */

typedef struct Result {
    String *big;                     /* the new string when long, else NULL */
    char small[VM_STRCACHE_MAXLEN];  /* the bytes when short */
} Result;

/* Where the [len] bytes of the result go. May raise (memory) before anything is written. */
static char *result_init(State *S, Result *r, size_t len) {
    r->big = (len > VM_STRCACHE_MAXLEN) ? vm_string_alloc(S, len) : NULL;
    return r->big != NULL ? r->big->data : r->small;
}

static void result_push(State *S, Result *r, size_t len) {
    if (r->big != NULL)
        vm_push(S, vm_str(r->big));
    else
        vm_pushstr(S, r->small, len);
}

/* ======================================================================
 * Basic functions
 * ====================================================================== */

static int str_len(State *S) {
    vm_pushint(S, (vm_Integer)vm_check_string(S, 1)->len);
    return 1;
}

static int str_sub(State *S) {
    String *s = vm_check_string(S, 1);
    size_t start = start_pos(vm_check_integer(S, 2), s->len);
    size_t end = end_pos(vm_opt_integer(S, 3, -1), s->len);
    if (start > end)
        vm_pushstr(S, "", 0);
    else if (start == 1 && end == s->len)
        vm_push(S, vm_str(s));   /* the whole string: itself (strings are immutable) */
    else
        vm_pushstr(S, s->data + start - 1, end - start + 1);
    return 1;
}

static int str_reverse(State *S) {
    String *s = vm_check_string(S, 1);
    Result res;
    char *r = result_init(S, &res, s->len);
    for (size_t i = 0; i < s->len; i++) r[i] = s->data[s->len - 1 - i];
    result_push(S, &res, s->len);
    return 1;
}

/* Shared by upper and lower: [to_upper] selects the direction (ASCII only, as the C
 * locale). */
static int change_case(State *S, bool to_upper) {
    String *s = vm_check_string(S, 1);
    Result res;
    char *r = result_init(S, &res, s->len);
    for (size_t i = 0; i < s->len; i++) {
        int c = (unsigned char)s->data[i];
        if (to_upper && vm_ch_islower(c)) c -= 'a' - 'A';
        else if (!to_upper && vm_ch_isupper(c)) c += 'a' - 'A';
        r[i] = (char)c;
    }
    result_push(S, &res, s->len);
    return 1;
}

static int str_upper(State *S) { return change_case(S, true); }
static int str_lower(State *S) { return change_case(S, false); }

static int str_rep(State *S) {
    String *s = vm_check_string(S, 1);
    vm_Integer n = vm_check_integer(S, 2);
    String *sep = vm_opt_string(S, 3, NULL);
    size_t l = s->len, lsep = sep ? sep->len : 0;
    if (n <= 0) {
        vm_pushstr(S, "", 0);
        return 1;
    }
    if (l + lsep < l || l + lsep > STR_LIBMAXSIZE / (vm_Unsigned)n)
        vm_error(S, "resulting string too large");
    size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
    Result res;
    char *p = result_init(S, &res, total);
    for (vm_Integer i = 0; i < n; i++) {
        memcpy(p, s->data, l);
        p += l;
        if (lsep > 0 && i + 1 < n) {
            memcpy(p, sep->data, lsep);
            p += lsep;
        }
    }
    result_push(S, &res, total);
    return 1;
}

static int str_byte(State *S) {
    String *s = vm_check_string(S, 1);
    vm_Integer pi = vm_opt_integer(S, 2, 1);
    size_t first = start_pos(pi, s->len);
    size_t last = end_pos(vm_opt_integer(S, 3, pi), s->len);   /* the default is i as given */
    if (first > last) return 0;
    if (last - first >= STR_LIBMAXSIZE) vm_error(S, "string slice too long");
    if (last - first >= (size_t)STR_MAXBYTES) vm_error(S, "stack overflow (string slice too long)");
    int n = (int)(last - first) + 1;
    vm_checkstack(S, n);
    for (int i = 0; i < n; i++) vm_pushint(S, (unsigned char)s->data[first - 1 + (size_t)i]);
    /* Input-sensitive profiling: each byte returned is a cell read (vm_prof.h) */
    if (vm_prof_needs & PROF_NEED_LIBMEM)
        for (int i = 0; i < n; i++) {
            if (vm_prof_needs & PROF_NEED_PC) vm_prof_lib_pc(S);
            vm_prof_emit(ev_make(EV_LOAD, (uintptr_t)&s->data[first - 1 + (size_t)i]));
        }
    return n;
}

static int str_char(State *S) {
    int n = vm_gettop(S);
    Result res;
    char *r = result_init(S, &res, (size_t)n);
    for (int i = 1; i <= n; i++) {
        vm_Unsigned c = (vm_Unsigned)vm_check_integer(S, i);
        if (c > UCHAR_MAX) vm_arg_error(S, i, "value out of range");
        r[i - 1] = (char)c;
    }
    result_push(S, &res, (size_t)n);
    return 1;
}

/* string.dump: the function's prototype in the bytecode format, which load() accepts. */
static int str_dump(State *S) {
    vm_check_type(S, 1, VT_LFUNC);
    bool strip = !vm_isfalsy(vm_at(S, 2));
    Value *f = vm_at(S, 1);
    if (f->tt != VT_LFUNC) vm_error(S, "unable to dump given function");
    size_t len;
    unsigned char *buf = vm_bytecode_dump(f->u.lf->p, &len, strip);
    if (buf == NULL) vm_error(S, "unable to dump given function");
    String *r = vm_string_alloc(S, len);   /* may raise: copy into it before that matters */
    memcpy(r->data, buf, len);
    free(buf);
    vm_push(S, vm_str(r));
    return 1;
}

/* ======================================================================
 * String arithmetic metamethods ("10" + 1): convert both operands with the numeral rules,
 * else defer to the other operand's metamethod, as lua5.4's string metatable does.
 * ====================================================================== */

typedef enum { SA_ADD, SA_SUB, SA_MUL, SA_MOD, SA_POW, SA_DIV, SA_IDIV, SA_UNM } StrArith;

static bool arith_operand(const Value *v, Value *out) {
    if (vm_isnumber(v)) {
        *out = *v;
        return true;
    }
    return vm_isstr(v) && vm_str2number(v->u.s->data, v->u.s->len, out);
}

static Value arith_int(State *S, StrArith op, vm_Integer a, vm_Integer b) {
    vm_Unsigned ua = (vm_Unsigned)a, ub = (vm_Unsigned)b;
    switch (op) {
    case SA_ADD: return vm_int((vm_Integer)(ua + ub));
    case SA_SUB: return vm_int((vm_Integer)(ua - ub));
    case SA_MUL: return vm_int((vm_Integer)(ua * ub));
    case SA_UNM: return vm_int((vm_Integer)(0u - ua));
    case SA_MOD:
        if (b == 0) vm_runerror(S, "attempt to perform 'n%%0'");
        return vm_int(vm_imod(a, b));
    case SA_IDIV:
        if (b == 0) vm_runerror(S, "attempt to divide by zero");
        return vm_int(vm_idiv(a, b));
    default: return vm_nil();   /* pow and div are float operations */
    }
}

static Value arith_float(StrArith op, vm_Number a, vm_Number b) {
    switch (op) {
    case SA_ADD: return vm_float(a + b);
    case SA_SUB: return vm_float(a - b);
    case SA_MUL: return vm_float(a * b);
    case SA_MOD: return vm_float(vm_fmod(a, b));
    case SA_POW: return vm_float(b == 2 ? a * a : pow(a, b));
    case SA_DIV: return vm_float(a / b);
    case SA_IDIV: return vm_float(vm_fidiv(a, b));
    default: return vm_float(-a);
    }
}

static int string_arith(State *S, StrArith op, const char *event) {
    Value a, b;
    if (arith_operand(vm_at(S, 1), &a) && arith_operand(vm_at(S, 2), &b)) {
        bool ints = vm_isint(&a) && vm_isint(&b) && op != SA_POW && op != SA_DIV;
        vm_push(S, ints ? arith_int(S, op, a.u.i, b.u.i)
                        : arith_float(op, vm_numval(&a), vm_numval(&b)));
        return 1;
    }
    vm_settop(S, 2);
    Value mm = vm_nil();
    if (!vm_isstr(vm_at(S, 2))) mm = vm_getmetafield(S, vm_at(S, 2), event);
    if (vm_isnil(&mm))
        vm_error(S, "attempt to %s a '%s' with a '%s'", event + 2, vm_typename(vm_at(S, 1)),
                 vm_typename(vm_at(S, 2)));
    vm_push(S, mm);
    vm_push(S, *vm_at(S, 1));
    vm_push(S, *vm_at(S, 2));
    vm_call(S, 2, 1);
    return 1;
}

static int arith_add(State *S) { return string_arith(S, SA_ADD, "__add"); }
static int arith_sub(State *S) { return string_arith(S, SA_SUB, "__sub"); }
static int arith_mul(State *S) { return string_arith(S, SA_MUL, "__mul"); }
static int arith_mod(State *S) { return string_arith(S, SA_MOD, "__mod"); }
static int arith_pow(State *S) { return string_arith(S, SA_POW, "__pow"); }
static int arith_div(State *S) { return string_arith(S, SA_DIV, "__div"); }
static int arith_idiv(State *S) { return string_arith(S, SA_IDIV, "__idiv"); }
static int arith_unm(State *S) { return string_arith(S, SA_UNM, "__unm"); }

/* ======================================================================
 * Registration
 * ====================================================================== */

static const LibReg string_funcs[] = {
    {"byte", str_byte},     {"char", str_char},       {"dump", str_dump},
    {"find", vm_str_find},  {"format", vm_str_format}, {"gmatch", vm_str_gmatch},
    {"gsub", vm_str_gsub},  {"len", str_len},         {"lower", str_lower},
    {"match", vm_str_match}, {"rep", str_rep},        {"reverse", str_reverse},
    {"sub", str_sub},       {"upper", str_upper},     {"pack", vm_str_pack},
    {"packsize", vm_str_packsize}, {"unpack", vm_str_unpack}, {NULL, NULL},
};

static const LibReg string_meta_funcs[] = {
    {"__add", arith_add}, {"__sub", arith_sub}, {"__mul", arith_mul},
    {"__mod", arith_mod}, {"__pow", arith_pow}, {"__div", arith_div},
    {"__idiv", arith_idiv}, {"__unm", arith_unm}, {NULL, NULL},
};

void vm_open_string(State *S) {
    Table *lib = vm_newlib(S, string_funcs);
    Table *mt = vm_newlib(S, string_meta_funcs);
    vm_setfield(S, mt, "__index", vm_table(lib));
    S->g->string_mt = mt;
    vm_setglobal(S, "string", vm_table(lib));
    if (S->g->loaded != NULL) vm_setfield(S, S->g->loaded, "string", vm_table(lib));
}
