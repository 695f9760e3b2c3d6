/* vm_lib_table.c: the table library (insert, remove, concat, sort, unpack, pack, move).
 *
 * As in lua5.4 these functions go through metamethods (__index, __newindex, __len); a
 * table without a metatable takes the raw path. The check is repeated at every access
 * because a comparator or a metamethod may give the table a metatable midway. */
#include <limits.h>
#include <string.h>

#include "vm_lib.h"

/* What checktab requires of a non-table argument's metatable. */
#define TAB_R 1u /* read: __index */
#define TAB_W 2u /* write: __newindex */
#define TAB_L 4u /* length: __len */
#define TAB_RW (TAB_R | TAB_W)

/* {====================================================================
 * Element access
 * ===================================================================== */

static bool is_raw(const Value *t) { return t->tt == VT_TABLE && t->u.t->meta == NULL; }

/* t[i], through __index unless t is a table without metatable. */
static Value tget(State *S, const Value *t, vm_Integer i) {
    if (is_raw(t)) return vm_loadv(vm_table_getint(t->u.t, i));
    Value k = vm_int(i);
    return vm_gettable(S, t, &k);
}

/* t[i] = v, through __newindex unless t is a table without metatable. */
static void tset(State *S, const Value *t, vm_Integer i, Value v) {
    if (is_raw(t)) {
        vm_table_setint(S, t->u.t, i, &v);
        return;
    }
    Value k = vm_int(i);
    vm_settable(S, t, &k, &v);
}

/* Argument [arg] must be a table, or have a metatable with the fields [what] asks for. */
static Value checktab(State *S, int arg, unsigned what) {
    Value t = *vm_at(S, arg);
    if (vm_istable(&t)) return t;
    Table *mt = vm_metatable_of(S, &t);
    if (mt != NULL) {
        bool ok = true;
        if (what & TAB_R) ok = ok && !vm_isnil(vm_table_getstr(mt, S->g->tmname[TM_INDEX]));
        if (what & TAB_W) ok = ok && !vm_isnil(vm_table_getstr(mt, S->g->tmname[TM_NEWINDEX]));
        if (what & TAB_L) ok = ok && !vm_isnil(vm_table_getstr(mt, S->g->tmname[TM_LEN]));
        if (ok) return t;
    }
    vm_type_error(S, arg, "table");
}

/* #t with __len; the result must be an integer (luaL_len). */
static vm_Integer length_of(State *S, const Value *t) {
    if (is_raw(t)) return (vm_Integer)vm_table_len(t->u.t);
    Value n = vm_len(S, t);
    vm_Integer i;
    if (vm_isint(&n)) return n.u.i;
    if (vm_isfloat(&n) && vm_flt2int(n.u.n, &i)) return i;
    vm_error(S, "object length is not an integer");
}

/* checktab, then the length. */
static vm_Integer aux_getn(State *S, int arg, unsigned what, Value *t) {
    *t = checktab(S, arg, what | TAB_L);
    return length_of(S, t);
}

/* }==================================================================== */

/* {====================================================================
 * insert, remove, move
 * ===================================================================== */

static int tab_insert(State *S) {
    Value t;
    vm_Integer e = aux_getn(S, 1, TAB_RW, &t);
    e = (vm_Integer)((vm_Unsigned)e + 1u); /* first empty element */
    vm_Integer pos;
    switch (vm_gettop(S)) {
    case 2:
        pos = e;
        break;
    case 3:
        pos = vm_check_integer(S, 2);
        /* pos must lie in [1, e] */
        if ((vm_Unsigned)pos - 1u >= (vm_Unsigned)e)
            vm_arg_error(S, 2, "position out of bounds");
        for (vm_Integer i = e; i > pos; i--) tset(S, &t, i, tget(S, &t, i - 1));
        break;
    default:
        vm_error(S, "wrong number of arguments to 'insert'");
    }
    tset(S, &t, pos, *vm_at(S, vm_gettop(S)));
    return 0;
}

static int tab_remove(State *S) {
    Value t;
    vm_Integer size = aux_getn(S, 1, TAB_RW, &t);
    vm_Integer pos = vm_opt_integer(S, 2, size);
    /* a given position must lie in [1, size + 1] (lua5.4 blames argument 1 here) */
    if (pos != size && (vm_Unsigned)pos - 1u > (vm_Unsigned)size)
        vm_arg_error(S, 1, "position out of bounds");
    Value result = tget(S, &t, pos);
    for (; pos < size; pos++) tset(S, &t, pos, tget(S, &t, pos + 1));
    tset(S, &t, pos, vm_nil());
    vm_push(S, result);
    return 1;
}

/* table.move(a1, f, e, t [, a2]) */
static int tab_move(State *S) {
    vm_Integer f = vm_check_integer(S, 2);
    vm_Integer e = vm_check_integer(S, 3);
    vm_Integer t = vm_check_integer(S, 4);
    int tt = (vm_gettop(S) >= 5 && !vm_isnil(vm_at(S, 5))) ? 5 : 1;
    Value src = checktab(S, 1, TAB_R);
    Value dst = checktab(S, tt, TAB_W);
    if (e >= f) {
        if (!(f > 0 || e < VM_MAXINTEGER + f)) vm_arg_error(S, 3, "too many elements to move");
        vm_Integer n = e - f + 1; /* number of elements to move */
        if (t > VM_MAXINTEGER - n + 1) vm_arg_error(S, 4, "destination wrap around");
        if (t > e || t <= f || (tt != 1 && !vm_equal(S, &src, &dst))) {
            for (vm_Integer i = 0; i < n; i++) tset(S, &dst, t + i, tget(S, &src, f + i));
        } else {
            for (vm_Integer i = n - 1; i >= 0; i--) tset(S, &dst, t + i, tget(S, &src, f + i));
        }
    }
    vm_push(S, dst);
    return 1;
}

/* }==================================================================== */

/* {====================================================================
 * concat, pack, unpack
 * ===================================================================== */

typedef struct ByteBuf {
    char *p;
    size_t len, cap;
} ByteBuf;

static void buf_add(State *S, ByteBuf *b, const char *s, size_t n) {
    if (n == 0) return; /* b->p may still be NULL */
    if (n > b->cap - b->len) {
        size_t ncap = b->cap ? b->cap * 2 : 128;
        while (ncap - b->len < n) ncap *= 2;
        b->p = b->p ? vm_realloc(S, b->p, ncap) : vm_alloc_leaf(S, ncap);
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Append t[i], which must be a string or a number. */
static void add_field(State *S, ByteBuf *b, const Value *t, vm_Integer i) {
    Value v = tget(S, t, i);
    if (vm_isstr(&v)) {
        buf_add(S, b, v.u.s->data, v.u.s->len);
    } else if (vm_isnumber(&v)) {
        char num[VM_NUMBUF];
        int n = vm_number2str(&v, num);
        buf_add(S, b, num, (size_t)n);
    } else {
        vm_error(S, "invalid value (%s) at index %lld in table for 'concat'", vm_typename(&v),
                 (long long)i);
    }
}

static int tab_concat(State *S) {
    Value t = checktab(S, 1, TAB_R);
    String *sep = vm_opt_string(S, 2, NULL);
    vm_Integer i = vm_opt_integer(S, 3, 1);
    vm_Integer last = (vm_gettop(S) >= 4 && !vm_isnil(vm_at(S, 4))) ? vm_check_integer(S, 4)
                                                                     : length_of(S, &t);
    ByteBuf b = {NULL, 0, 0};
    for (; i < last; i++) {
        add_field(S, &b, &t, i);
        if (sep != NULL) buf_add(S, &b, sep->data, sep->len);
    }
    if (i == last) add_field(S, &b, &t, i);
    vm_pushstr(S, b.p ? b.p : "", b.len);
    return 1;
}

static int tab_pack(State *S) {
    int n = vm_gettop(S);
    Table *t = vm_table_new(S, (uint32_t)n, 1);
    for (int i = 1; i <= n; i++) vm_table_setint(S, t, i, vm_at(S, i));
    vm_setfield(S, t, "n", vm_int(n));
    vm_push(S, vm_table(t));
    return 1;
}

static int tab_unpack(State *S) {
    Value t = *vm_at(S, 1);
    vm_Integer i = vm_opt_integer(S, 2, 1);
    vm_Integer e = (vm_gettop(S) >= 3 && !vm_isnil(vm_at(S, 3))) ? vm_check_integer(S, 3)
                                                                  : length_of(S, &t);
    if (i > e) return 0;
    vm_Unsigned n = (vm_Unsigned)e - (vm_Unsigned)i; /* count - 1, without overflow */
    /* as lua_checkstack: the stack may not grow past VM_MAXSTACK slots */
    ptrdiff_t room = VM_MAXSTACK - (S->top - S->stack) - VM_MINSTACK;
    if (n >= (vm_Unsigned)INT_MAX || room <= 0 || n >= (vm_Unsigned)room)
        vm_error(S, "too many results to unpack");
    vm_checkstack(S, (int)n + 1);
    for (; i < e; i++) vm_push(S, tget(S, &t, i));
    vm_push(S, tget(S, &t, e));
    return (int)n + 1;
}

/* }==================================================================== */

/* {====================================================================
 * sort
 * =====================================================================
 * The elements are copied into a scratch array (a scanned GC block), sorted there and
 * written back, so no pointer into the table's own storage is held while a comparator or
 * an __lt metamethod runs (they may modify the table). The sort is a median-of-three
 * quicksort laid out like lua5.4's, so an inconsistent comparator is caught in the same
 * places ("invalid order function for sorting"); past a depth of 2 log2(n) a partition
 * is finished with heapsort, so adversarial inputs stay O(n log n). */

typedef struct SortCtx {
    State *S;
    Value cmp;     /* comparator, or nil for '<' */
    Value *a;      /* scratch array */
} SortCtx;

static bool sort_less(SortCtx *c, const Value *x, const Value *y) {
    if (vm_isnil(&c->cmp)) {
        if (x->tt == VT_INT && y->tt == VT_INT) return x->u.i < y->u.i;
        if (x->tt == VT_FLOAT && y->tt == VT_FLOAT) return x->u.n < y->u.n;
        if (x->tt == VT_STR && y->tt == VT_STR) return vm_string_cmp(x->u.s, y->u.s) < 0;
        return vm_lessthan(c->S, x, y);
    }
    State *S = c->S;
    vm_push(S, c->cmp);
    vm_push(S, *x);
    vm_push(S, *y);
    vm_call(S, 2, 1);
    bool r = !vm_isfalsy(vm_at(S, vm_gettop(S)));
    vm_pop(S, 1);
    return r;
}

static void swap(Value *a, size_t i, size_t j) {
    Value t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static _Noreturn void invalid_order(State *S) {
    vm_error(S, "invalid order function for sorting");
}

static void sift_down(SortCtx *c, Value *a, size_t root, size_t n) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && sort_less(c, &a[child], &a[child + 1])) child++;
        if (!sort_less(c, &a[root], &a[child])) return;
        swap(a, root, child);
        root = child;
    }
}

/* Heapsort of a[lo .. up]. */
static void heap_sort(SortCtx *c, size_t lo, size_t up) {
    Value *a = c->a + lo;
    size_t n = up - lo + 1;
    for (size_t i = n / 2; i-- > 0;) sift_down(c, a, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        swap(a, 0, end);
        sift_down(c, a, 0, end);
    }
}

/* Partition a[lo .. up] (at least four elements, pivot at up - 1, a[lo] <= P <= a[up]):
 * returns the pivot's final index. */
static size_t partition(SortCtx *c, size_t lo, size_t up) {
    Value *a = c->a;
    Value P = a[up - 1];
    size_t i = lo, j = up - 1;
    for (;;) {
        while (sort_less(c, &a[++i], &P))
            if (i == up - 1) invalid_order(c->S); /* a[i] < P but a[up - 1] == P */
        while (sort_less(c, &P, &a[--j]))
            if (j < i) invalid_order(c->S); /* j < i but a[j] > P */
        if (j < i) break;
        swap(a, i, j);
    }
    swap(a, up - 1, i);
    return i;
}

static void aux_sort(SortCtx *c, size_t lo, size_t up, int depth) {
    Value *a = c->a;
    while (lo < up) {
        if (sort_less(c, &a[up], &a[lo])) swap(a, lo, up);
        if (up - lo == 1) return;
        size_t p = lo + (up - lo) / 2;
        if (sort_less(c, &a[p], &a[lo])) swap(a, p, lo);
        else if (sort_less(c, &a[up], &a[p])) swap(a, p, up);
        if (up - lo == 2) return;
        if (depth-- == 0) {
            heap_sort(c, lo, up);
            return;
        }
        swap(a, p, up - 1);
        p = partition(c, lo, up);
        /* recurse into the smaller half, loop on the larger */
        if (p - lo < up - p) {
            if (p > lo) aux_sort(c, lo, p - 1, depth);
            lo = p + 1;
        } else {
            aux_sort(c, p + 1, up, depth);
            up = p - 1;
        }
    }
}

static int tab_sort(State *S) {
    Value t;
    vm_Integer n = aux_getn(S, 1, TAB_RW, &t);
    if (n <= 1) return 0;
    if (n >= INT_MAX) vm_arg_error(S, 1, "array too big");
    SortCtx c;
    c.S = S;
    c.cmp = vm_nil();
    if (vm_gettop(S) >= 2 && !vm_isnil(vm_at(S, 2))) {
        vm_check_type(S, 2, VT_LFUNC);
        c.cmp = *vm_at(S, 2);
    }
    c.a = vm_alloc(S, (size_t)n * sizeof(Value));
    for (vm_Integer i = 0; i < n; i++) c.a[i] = tget(S, &t, i + 1);
    int depth = 0;
    for (vm_Integer m = n; m > 1; m >>= 1) depth += 2;
    aux_sort(&c, 0, (size_t)n - 1, depth);
    for (vm_Integer i = 0; i < n; i++) tset(S, &t, i + 1, c.a[i]);
    return 0;
}

/* }==================================================================== */

static const LibReg table_funcs[] = {
    {"table.insert", tab_insert},
    {"table.remove", tab_remove},
    {"table.move", tab_move},
    {"table.concat", tab_concat},
    {"table.pack", tab_pack},
    {"table.unpack", tab_unpack},
    {"table.sort", tab_sort},
    {NULL, NULL},
};

/* Library table whose keys are the names after the dot; the closures keep the qualified
 * name ("table.insert") for error messages, as lua5.4 reports functions of loaded
 * libraries. */
static Table *new_dotted_lib(State *S, const LibReg *funcs) {
    Table *t = vm_table_new(S, 0, 16);
    for (const LibReg *r = funcs; r->name != NULL; r++) {
        const char *dot = strchr(r->name, '.');
        vm_setfield(S, t, dot ? dot + 1 : r->name, vm_cfunc(vm_newcfunction(S, r->f, r->name, 0)));
    }
    return t;
}

void vm_open_table(State *S) {
    Table *t = new_dotted_lib(S, table_funcs);
    vm_setglobal(S, "table", vm_table(t));
    if (S->g->loaded != NULL) vm_setfield(S, S->g->loaded, "table", vm_table(t));
}
