/* vm_value.h: tagged values and the runtime object layouts shared by every part of the VM. */
#ifndef VM_VALUE_H
#define VM_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vm_sanitize.h"

/* ======================================================================
 * Values
 * ======================================================================
 *
 *   +---------------------------+----------+
 *   | payload (8 bytes)         | tag (4)  |  + 4 bytes padding = 16 bytes
 *   +---------------------------+----------+
 *
 * The payload of a collectable value is an untagged pointer to the start of
 * the object, so Boehm's conservative scan sees every reference (NaN boxing
 * would hide them: see ../shared/notes/dependencies.md section 3).
 *
 * Tag order matters: VT_NIL and VT_FALSE are the only false values and are
 * the two smallest tags, so truthiness is one compare (v->tt > VT_FALSE).
 * Grep ORDER VT if you change this enum.
 */
typedef enum {
    VT_NIL = 0,
    VT_FALSE,
    VT_TRUE,
    VT_INT,      /* 64-bit two's complement integer (Lua integer subtype) */
    VT_FLOAT,    /* IEEE double (Lua float subtype) */
    VT_LIGHTUD,  /* raw C pointer, not traced meaning (never a GC object) */
    VT_STR,      /* String * */
    VT_TABLE,    /* Table * */
    VT_LFUNC,    /* LClosure *: a Lua function */
    VT_CFUNC,    /* CClosure *: a C function with optional upvalues */
    VT_USERDATA, /* Userdata * (files, thread handles, ...) */
    VT_THREAD,   /* State *: a coroutine */
    VT_PROTO,    /* Proto *: only inside constant tables of the compiler, never visible to programs */
    VT_NTAGS
} ValueTag;

typedef int64_t vm_Integer;
typedef uint64_t vm_Unsigned;
typedef double vm_Number;

struct String;
struct Table;
struct LClosure;
struct CClosure;
struct Userdata;
struct State;
struct Proto;

/* Aligned to 16 bytes so that a whole Value can be loaded and stored by one aligned SSE
 * access (vm_loadv / vm_storev below): every Value in the heap, on the VM stacks and on
 * the C stack then sits on a 16-byte boundary (GC blocks are 16-byte aligned on x86-64). */
typedef struct __attribute__((aligned(16))) Value {
    union {
        vm_Integer i;
        vm_Number n;
        void *p;
        struct String *s;
        struct Table *t;
        struct LClosure *lf;
        struct CClosure *cf;
        struct Userdata *u;
        struct State *th;
        struct Proto *pr;
    } u;
    uint32_t tt;
} Value;

_Static_assert(sizeof(Value) == 16 && _Alignof(Value) == 16, "Value is one aligned 16-byte unit");

/* --- whole-Value access for memory other threads may write ---------------------------
 * Several language threads (native ones, and green ones on several carriers) may read and
 * write the same table slots and upvalues without a lock. A Value copied as two 8-byte
 * halves could then combine the tag of one store with the payload of another (tag
 * VT_TABLE, payload an integer: a crash). So every access to such a slot moves the whole
 * Value with ONE aligned 16-byte SSE load or store (MOVDQA): on x86-64 processors that
 * support AVX these are atomic (Intel SDM vol. 3A section 9.1.1, "Guaranteed Atomic
 * Operations": 16-byte aligned MOVDQA/MOVAPS... ; AMD APM vol. 2 section 7.3.2, "Access
 * Atomicity"). A reader inspects its private copy, never the shared slot's tag and then
 * its payload.
 *
 * The accesses are volatile dereferences of a 16-byte vector, which GCC emits as exactly
 * one movdqa (load) or movaps (store). Not _mm_load_si128/_mm_store_si128 from
 * <emmintrin.h>: those are ordinary dereferences that GCC narrows when only fields are
 * used (GCC 12 turns _mm_load_si128 followed by a tag test and a use of the payload into
 * "cmpl $7, 8(%rdi)" and "movq (%rdi), %rax": two loads, the very tearing to avoid). The
 * vector type is GCC's own (what __m128i is), so this header does not pull in
 * <emmintrin.h> and its <stdlib.h> everywhere.
 * vm_storev and vm_copyv also keep the stores before them before the store, at compiler
 * level (x86 keeps stores in order): a pointer stored by them publishes a fully
 * initialised object, a release store. Loads need no fence: x86 keeps loads in order and
 * readers reach an object only through the pointer they loaded (a data dependency). */
typedef long long vm_V16 __attribute__((vector_size(16), aligned(16)));

/* The two primitives every whole-Value access below is made of.
 *
 * TSan builds (tests/README.md, "Sanitizers"): TSan sees a 16-byte access as two plain
 * 8-byte ones and knows nothing of x86's 16-byte atomicity or of its store order, so it
 * reported every racing pair of whole-Value accesses (threads/table_race.lua: hundreds per
 * run), and every object published through a slot (the object's initialising stores
 * against the reads of a thread that loaded the pointer from the slot). There the same
 * movdqa/movaps is done in inline assembly, which TSan does not see, and announced to TSan
 * as what it is on x86: an atomic access to the payload word, a release store (a no-op
 * atomic OR of 0 on the payload, done before the store, so that a reader that sees the
 * store acquires it) or an acquire load (a second load of the payload, after the access).
 * Only the payload word is announced: a plain read of the tag alone (is the slot nil?),
 * which the design allows, is then not reported, while a plain read or write of the
 * payload (half a Value, the tearing this all avoids) or a plain copy of a whole shared
 * Value still is, as a race against an atomic access. Other builds: the volatile vector
 * accesses described above. */
#if VM_TSAN
static inline vm_V16 vm_load16(const Value *p) {
    vm_V16 x;
    __asm__ volatile("movdqa %1, %0" : "=x"(x) : "m"(*(const vm_V16 *)(const void *)p));
    (void)__atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_ACQUIRE);
    return x;
}

static inline void vm_store16(Value *p, vm_V16 x) {
    (void)__atomic_fetch_or((uint64_t *)(void *)p, 0, __ATOMIC_RELEASE);
    __asm__ volatile("movaps %1, %0" : "=m"(*(vm_V16 *)(void *)p) : "x"(x) : "memory");
}
#else
/* The same whole load kept as a vector, for code that only inspects fields (hash probes
 * look at the tag, then the payload): GCC takes the tag out with movhlps + movq, where
 * from a Value copy it needs three instructions. */
static inline vm_V16 vm_load16(const Value *p) { return *(const volatile vm_V16 *)(const volatile void *)p; }

static inline void vm_store16(Value *p, vm_V16 x) {
    __atomic_signal_fence(__ATOMIC_RELEASE);
    *(volatile vm_V16 *)(volatile void *)p = x;
}
#endif

static inline Value vm_loadv(const Value *p) {
    vm_V16 x = vm_load16(p);
    Value v;
    memcpy(&v, &x, sizeof v);
    return v;
}

static inline void vm_storev(Value *p, Value v) {
    /* built in registers (movq, movq, punpcklqdq): going through memory would stall on
     * store forwarding (two 8-byte stores read back by one 16-byte load) */
    vm_V16 x = {(long long)v.u.i, (long long)v.tt};
    vm_store16(p, x);
}

static inline uint32_t vm_v16_tt(vm_V16 x) { return (uint32_t)x[1]; }
static inline vm_Integer vm_v16_i(vm_V16 x) { return (vm_Integer)x[0]; }
static inline void *vm_v16_p(vm_V16 x) { return (void *)(intptr_t)x[0]; }
/* Store a loaded vector into a private slot (a register): one plain 16-byte store. */
static inline void vm_put16(Value *p, vm_V16 x) { memcpy(p, &x, sizeof x); }

/* *dst = *src, each side one 16-byte access (either may be shared). */
static inline void vm_copyv(Value *dst, const Value *src) { vm_store16(dst, vm_load16(src)); }

#define VM_MAXINTEGER INT64_MAX
#define VM_MININTEGER INT64_MIN

/* --- constructors ------------------------------------------------------ */
static inline Value vm_nil(void) { Value v; v.u.i = 0; v.tt = VT_NIL; return v; }
static inline Value vm_bool(bool b) { Value v; v.u.i = 0; v.tt = b ? VT_TRUE : VT_FALSE; return v; }
static inline Value vm_int(vm_Integer i) { Value v; v.u.i = i; v.tt = VT_INT; return v; }
static inline Value vm_float(vm_Number n) { Value v; v.u.n = n; v.tt = VT_FLOAT; return v; }
static inline Value vm_str(struct String *s) { Value v; v.u.s = s; v.tt = VT_STR; return v; }
static inline Value vm_table(struct Table *t) { Value v; v.u.t = t; v.tt = VT_TABLE; return v; }
static inline Value vm_lfunc(struct LClosure *f) { Value v; v.u.lf = f; v.tt = VT_LFUNC; return v; }
static inline Value vm_cfunc(struct CClosure *f) { Value v; v.u.cf = f; v.tt = VT_CFUNC; return v; }
static inline Value vm_userdata(struct Userdata *u) { Value v; v.u.u = u; v.tt = VT_USERDATA; return v; }
static inline Value vm_thread(struct State *th) { Value v; v.u.th = th; v.tt = VT_THREAD; return v; }
static inline Value vm_lightud(void *p) { Value v; v.u.p = p; v.tt = VT_LIGHTUD; return v; }

/* --- predicates -------------------------------------------------------- */
static inline bool vm_isnil(const Value *v) { return v->tt == VT_NIL; }
static inline bool vm_isfalsy(const Value *v) { return v->tt <= VT_FALSE; }  /* ORDER VT */
static inline bool vm_isbool(const Value *v) { return v->tt == VT_FALSE || v->tt == VT_TRUE; }
static inline bool vm_isint(const Value *v) { return v->tt == VT_INT; }
static inline bool vm_isfloat(const Value *v) { return v->tt == VT_FLOAT; }
static inline bool vm_isnumber(const Value *v) { return v->tt == VT_INT || v->tt == VT_FLOAT; }
static inline bool vm_isstr(const Value *v) { return v->tt == VT_STR; }
static inline bool vm_istable(const Value *v) { return v->tt == VT_TABLE; }
static inline bool vm_isfunction(const Value *v) { return v->tt == VT_LFUNC || v->tt == VT_CFUNC; }
/* Collectable values carry a pointer into the GC heap. */
static inline bool vm_iscollectable(const Value *v) { return v->tt >= VT_STR; }

/* Number as a double, for a value known to be a number. */
static inline vm_Number vm_numval(const Value *v) { return v->tt == VT_INT ? (vm_Number)v->u.i : v->u.n; }

/* ======================================================================
 * Objects
 * ======================================================================
 * Every object starts with ObjHeader so that generic code (tostring's
 * "table: 0x..." formatting, the bytecode writer) can see what it points at.
 * Objects live in the Boehm heap; see gc/gc_api.h for which are scanned. */
typedef struct ObjHeader {
    uint8_t type;   /* a ValueTag: VT_STR, VT_TABLE, ... */
    uint8_t flags;  /* per type (Table: absent-metamethod cache, see vm_table.h) */
    uint16_t extra; /* per type (CClosure: number of upvalues) */
} ObjHeader;

/* --- strings ------------------------------------------------------------
 * Immutable byte strings (may contain '\0'); data[len] is always '\0' so C
 * code can use them as C strings when they have no embedded zero.
 * Strings are NOT interned: equality compares length, hash and bytes (a
 * pointer compare first). Allocated pointer-free (GC atomic).
 * hash is computed lazily: 0 means "not computed yet" (vm_string_hash). */
typedef struct String {
    ObjHeader h;
    uint32_t hash;
    size_t len;
    char data[];
} String;

/* The cached hash (0: not yet). Whichever thread needs it first computes and stores it, so
 * several threads may do so at once: relaxed atomic loads and stores (vm_string_hash), the
 * same moves as plain accesses; every writer stores the same value, and a reader sees 0
 * (and computes it too) or that value. Plain accesses were a data race (TSan). */
static inline uint32_t vm_str_cachedhash(const String *s) { return __atomic_load_n(&s->hash, __ATOMIC_RELAXED); }

/* --- tables -------------------------------------------------------------
 * Array part: arr->v[0 .. arr->size-1] holds keys 1 .. size (nil where absent).
 * Hash part: open addressing, linear probing, power-of-two capacity (node->mask + 1
 * nodes). A removed key stays as a "dead" node (key kept, value nil) so that next() can
 * continue a traversal during which fields are cleared, as Lua requires. Integer keys that
 * fit the array part never live in the hash part; float keys with an integer value are
 * normalised to integers before any lookup.
 * flags (in h.flags): bit e set means "metamethod e is known to be absent" when this table
 * is used as a metatable; any raw store of a new key clears all bits (see vm_table.h).
 *
 * Threads may use one table without a lock (vm_table.c, "Races"): so each part is one GC
 * block that carries its own size, and the Table points at the current blocks. A reader
 * of the array part loads the block pointer once and takes its bound from that block; a
 * lookup in the hash part uses Table.hmask, which never exceeds the mask of a node block
 * loaded after it (the hash part only grows). Neither pointer is ever NULL: an absent part
 * is a shared static empty block. A part may also sit inside the Table's own GC block, right
 * after the Table (small tables sized at creation: vm_table_new, VM_TABINLINE_SHIFT); it is
 * read and replaced as any other block, never given back with gc_free. */
typedef struct Node {
    Value key;
    Value val;
} Node;

typedef struct TabArr {
    uint32_t size;         /* slots in v[] */
    uint32_t lenhint;      /* last border found by vm_table_len (clamped to size on use);
                              never written in the shared empty block */
    uint32_t weak;         /* blocks of weak tables only (vm_gc.c): VM_WEAKARR | mode; 0 in
                              every other block */
    uint32_t unused;       /* keeps v[] 16-byte aligned */
    Value v[];
} TabArr;

typedef struct TabNodes {
    uint32_t mask;         /* nodes - 1 (0 for the empty block, which has one empty node) */
    uint32_t limit;        /* most keys, dead ones included, before a rehash (0: never insert) */
    uint32_t used;         /* nodes with a key, dead ones included */
    uint32_t live;         /* nodes with a non-nil value */
    uint32_t weak;         /* blocks of weak tables only (vm_gc.c): VM_WEAKNODES | mode; 0 in
                              every other block */
    uint32_t asize;        /* the size of the array block this one was built beside by a
                              resize (0 in the empty block and in a new table's): an integer
                              key below it that the hash part lacks is in that array block,
                              which a racing reader may not see yet (vm_table_getint). With it
                              the header is 32 bytes: Boehm places blocks of a size that is a
                              multiple of 32 bytes on 32-byte boundaries, so no node straddles
                              two cache lines (a 16-byte header made every other one do) */
    uint64_t keys;         /* key filter: bit (hash >> 26) is set for every key ever placed in
                              this block, before the key is stored, and never cleared (dead
                              keys keep theirs). A clear bit proves a key absent in one load
                              (vm_table_maybe_has, vm_table.h); the JIT reads it (jit_ic.c) */
    Node n[];
} TabNodes;

/* Table h.extra: the weak mode (VM_WEAKK, VM_WEAKV: from __mode when the metatable was
 * set) and VM_TOFINALIZE (also on Userdata: registered for __gc with the collector, until
 * its finalizer is taken to run). A weak table's blocks are weak blocks (gc_alloc_weak)
 * whose 'weak' header word is the block's magic (VM_WEAKARR, VM_WEAKNODES, both above any
 * count a block can hold, so the two headers are told apart) or'ed with the mode. */
#define VM_WEAKK 1u
#define VM_WEAKV 2u
#define VM_TOFINALIZE 4u
/* Table h.extra >> VM_TABINLINE_SHIFT: how many 16-byte units of parts the Table's own
 * block holds after the Table (vm_table_new: small tables sized at creation), 0 for none.
 * Set at creation, never changed (the other bits are changed by read-modify-writes). */
#define VM_TABINLINE_SHIFT 4
#define VM_WEAKARR 0xA7A70000u
#define VM_WEAKNODES 0xB0DE0000u
#define VM_WEAKMAGIC 0xFFFF0000u

typedef struct Table {
    ObjHeader h;
    uint32_t hmask;        /* node->mask, published after node: what lookups probe with
                              (vm_table_hpart); the hash part never shrinks */
    TabArr *arr;           /* array part block (vm_table.c; never NULL) */
    TabNodes *node;        /* hash part block (never NULL) */
    struct Table *meta;    /* metatable or NULL */
} Table;

/* --- functions ----------------------------------------------------------
 * Proto: the compiled form of one Lua function, produced by the compiler or
 * the bytecode loader and immutable afterwards. */
typedef uint64_t Instr;   /* see vm_opcodes.h for the layout */

typedef struct UpvalDesc {
    String *name;      /* for error messages; may be NULL (stripped) */
    uint8_t instack;   /* 1: captures the enclosing function's register idx;
                          0: the enclosing function's upvalue idx */
    uint8_t kind;      /* VDKREG (0) regular, RDKCONST (1) <const>, RDKTOCLOSE (2) <close> */
    uint16_t idx;
} UpvalDesc;

typedef struct LocVar {
    String *name;
    int32_t startpc;   /* first pc where the variable is active */
    int32_t endpc;     /* first pc where the variable is dead */
} LocVar;

typedef struct Proto {
    ObjHeader h;
    uint8_t numparams;     /* fixed parameters */
    uint8_t is_vararg;
    uint16_t maxstack;     /* registers needed (<= VM_MAXREGS) */
    uint32_t id;           /* function id in profiles (vm_prof.c); 0 until first profiled call */
    int32_t ncode;
    int32_t nk;
    int32_t np;
    int32_t nupvals;
    int32_t nlocvars;
    int32_t linedefined;   /* 0 for the main chunk */
    int32_t lastlinedefined;
    Instr *code;           /* ncode instructions (atomic block) */
    int32_t *lineinfo;     /* ncode absolute source lines (atomic block); may be NULL */
    Value *k;              /* nk constants: nil/bool/int/float/string only */
    struct Proto **p;      /* np nested prototypes */
    UpvalDesc *upvals;     /* nupvals descriptors */
    LocVar *locvars;       /* nlocvars, in order of declaration; locals are
                              assigned registers in order, so the i-th active
                              local at a pc lives in register i */
    String *source;        /* chunk name: "@file.lua" or "=stdin" or the source string of load() */
    String *name;          /* best-effort function name from the declaration ("fib", "Point:new"), or NULL */
    struct JitCode *jit;   /* compiled code (jit/jit_api.h), NULL until the first call with -Xjit=on;
                              written once, under the JIT's lock, with a release store */
    struct JitCode *jitwin; /* -Xsample.mode=code: the instrumented twin of [jit] that sampling
                              windows run (jit/README.md), NULL until windows have met frames
                              of this function -Xsample.twin times; written once, as [jit] is */
    uint32_t wintries;     /* how many times a window met a frame of this function before its
                              twin existed (jit_compile_window; relaxed, a lost count is harmless) */
} Proto;

/* Upvalue: open while the variable lives on a stack (v points into the
 * stack), closed once its scope ends (v points at 'closed'). Open upvalues
 * of a coroutine form a list sorted by stack level, highest first
 * (State.openupval); v is corrected when a stack is reallocated. */
typedef struct UpVal {
    ObjHeader h;
    Value *v;              /* read and written as one pointer (other threads may read it) */
    struct UpVal *next;    /* next open upvalue (lower level); unused when closed */
    uint8_t shared;        /* another thread has accessed it while open (vm_func.c, "Foreign") */
    uint8_t closing;       /* its owner has begun to close it */
    Value closed;          /* 16-byte aligned, like every Value */
} UpVal;

typedef struct LClosure {
    ObjHeader h;
    struct Proto *p;
    UpVal *upvals[];       /* p->nupvals entries */
} LClosure;

struct State;
/* A C function: arguments are the stack slots above the function
 * (vm_gettop / vm_at in vm_lib.h); it pushes its results and returns how
 * many there are. */
typedef int (*CFunction)(struct State *S);

/* CClosure h.flags: VM_CF_SCRUB: the interpreter clears the C stack below its frame before
 * calling it (vm_scrub_stack, vm_gc.c): collectgarbage, so that the frames of the call do
 * not keep, in slots they never write, addresses that earlier calls left there (Boehm scans
 * them conservatively: a dead object would survive every explicit collection). */
#define VM_CF_SCRUB 1u
/* CClosure h.flags, the coroutine library's switching functions (at most one of them):
 * vm_precall and jit_call call them through vm_coro_precall (vm_coro.c), one C frame for
 * the call, the library function's work and the switch. */
#define VM_CF_CORO_RESUME 2u /* coroutine.resume */
#define VM_CF_CORO_YIELD 4u  /* coroutine.yield */
#define VM_CF_CORO_WRAP 8u   /* a function made by coroutine.wrap (upvalue 1: the coroutine) */
#define VM_CF_CORO (VM_CF_CORO_RESUME | VM_CF_CORO_YIELD | VM_CF_CORO_WRAP)

typedef struct CClosure {
    ObjHeader h;           /* h.extra: number of upvalues; h.flags: VM_CF_SCRUB, VM_CF_CORO_* */
    CFunction f;
    const char *name;      /* static string used in "bad argument #1 to 'name'" */
    Value upvals[];
} CClosure;

/* Full userdata: an opaque block with a metatable. */
typedef struct Userdata {
    ObjHeader h;
    struct Table *meta;
    size_t size;
    void *data;            /* points at payload, or at a separately managed block */
    Value uv;              /* one user value */
    max_align_t payload[];
} Userdata;

/* Limits. */
#define VM_MAXREGS 250          /* registers per function: operand A is 16 bits but
                                   Lua's limit of 200 locals plus temporaries fits in 250 */
#define VM_MAXUPVALS 255        /* upvalues per function, as in Lua */

#endif
