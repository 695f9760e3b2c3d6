/* vm_state.h: per-coroutine state (State), call frames (CallInfo) and the state shared by all
 * coroutines (Global). Private to vm/ (and jit/, which generates code against it). */
#ifndef VM_STATE_H
#define VM_STATE_H

#include <setjmp.h>
#include <stdatomic.h>

#include "gc_api.h"

#include "vm_value.h"
#include "vm_sanitize.h"
#include "vm_table.h"

/* Metamethod events. The first VM_TM_FAST ones are cached as "absent" bits in a metatable's
 * h.flags (see vm_fasttm). ORDER TM: keep vm_tmnames in vm_state.c in the same order. */
typedef enum {
    TM_INDEX,
    TM_NEWINDEX,
    TM_LEN,
    TM_EQ,
    TM_CALL,
    TM_CLOSE,
    TM_GC,
    TM_MODE,
    TM_ADD, /* ORDER TM: arithmetic events follow the order of the arithmetic opcodes */
    TM_SUB,
    TM_MUL,
    TM_MOD,
    TM_POW,
    TM_DIV,
    TM_IDIV,
    TM_BAND,
    TM_BOR,
    TM_BXOR,
    TM_SHL,
    TM_SHR,
    TM_UNM,
    TM_BNOT,
    TM_LT,
    TM_LE,
    TM_CONCAT,
    TM_TOSTRING,
    TM_NAME,
    TM_METATABLE,
    TM_PAIRS,
    TM_N
} TMS;
#define VM_TM_FAST 8

/* Call frame. For a Lua function, func[1 .. maxstack] are its registers; for a vararg Lua
 * function the extra arguments sit below func (the call moved the function and its fixed
 * parameters above them) and nextra counts them. */
typedef struct CallInfo {
    Value *func;               /* function slot */
    Value *top;                /* Lua: func + 1 + maxstack; C: highest slot it may use */
    struct CallInfo *prev, *next;
    const Instr *savedpc;      /* Lua: next instruction, saved whenever the frame calls out */
    int32_t nresults;          /* results the caller wants, VM_MULTRET for all */
    int32_t nextra;            /* vararg Lua functions: number of extra arguments */
    int32_t depth;             /* frames below this one in the coroutine chain (base_ci: 0, or
                                  the resumer's depth at a coroutine's first resume); fixed
                                  per record (vm_extend_ci), used by call events */
    uint16_t callstatus;
    uint32_t pathreg;          /* Ball-Larus path register of this frame (vm_pathprof.h) */
    uintptr_t pathbias;        /* its function's action table bias; VM_PATH_OFF (0): none */
    uint32_t samplewin;        /* -Xsample.mode=code: the window in which the instrumented copy
                                  last set this frame's path state (vm/prof/vm_sample.h) */
} CallInfo;

#define VM_MULTRET (-1)

/* callstatus bits */
#define CIST_C 1u      /* a C function */
#define CIST_FRESH 2u  /* Lua frame entered from C: the interpreter returns when it returns */
#define CIST_TAIL 4u   /* reached through a tail call (traceback shows "(...tail calls...)") */
#define CIST_CALLEDLUA 8u /* a C frame that has entered a Lua function already, while
                             profiling (the EV_CALL "from C" flag marks only the first) */
#define CIST_HOOKED 16u /* a debug hook runs for this frame (the function it calls is named
                           "hook '?'", as lua5.4 names it) */
#define CIST_TRAN 32u   /* ... and State.ftransfer/ntransfer describe its values ('r') */
#define CIST_SAMPLEPART 64u /* -Xsample.mode=code: the frame's Ball-Larus path began before its
                               sampling window, so it is not emitted (vm/prof/vm_sample.h) */

/* Protected-call chain: each vm_pcall / coroutine body pushes one on the C stack. */
typedef struct ErrJmp {
    struct ErrJmp *prev;
    jmp_buf b;
    volatile int status;
} ErrJmp;

/* Status codes of protected calls and coroutines. */
/* VM_YIELD is thrown only by the C API, to the trampoline of a module function whose
 * continuation has run after a yield, with the continuation's results (State.ktarget). */
enum { VM_OK = 0, VM_YIELD = 1, VM_ERRRUN = 2, VM_ERRSYNTAX = 3, VM_ERRMEM = 4, VM_ERRERR = 5 };

/* Coroutine life cycle (State.costatus). */
enum { CO_SUSPENDED_NEW, CO_RUNNING, CO_SUSPENDED, CO_NORMAL, CO_DEAD };

struct Global;

/* A coroutine (the main program is the main coroutine). Allocated scanned. */
typedef struct State {
    ObjHeader h;
    uint8_t costatus;          /* CO_* */
    /* Debug hooks (vm_hook.c), per coroutine as lua5.4's. hookmask != 0 makes every
     * interpreter entry of this coroutine run a hooked copy of the loop (vm_interp.c) and
     * keeps compiled code out; hook is the Lua function called (nil for a coroutine that
     * inherited the mask from its creator, as lua5.4's do: the hook never runs there). */
    uint8_t hookmask;          /* VM_MASK* (vm_debug.h) */
    uint8_t inhook;            /* a hook is running: no hook is called (lua5.4's !allowhook) */
    Value *top;                /* first free slot */
    Value *stack;              /* scanned GC block of stacksize Values */
    Value *stack_last;         /* stack + stacksize - VM_EXTRA_STACK */
    int32_t stacksize;
    int32_t nCcalls;           /* nested C calls / interpreter entries, for "C stack overflow" */
    int32_t nny;               /* calls made from C functions in progress: yield is refused
                                  while > 0, as lua5.4 refuses to yield across them */
    CallInfo *ci;              /* current frame */
    CallInfo base_ci;          /* frame of the entry point (C) */
    UpVal *openupval;          /* open upvalues, highest stack level first */
    ptrdiff_t *tbc;            /* stack offsets of to-be-closed variables (scanned GC block) */
    int32_t ntbc, tbccap;
    struct Global *g;
    ErrJmp *errjmp;            /* innermost protected call */
    Value errval;              /* error object being thrown */
    ptrdiff_t errfunc;         /* stack offset (bytes) of xpcall's message handler, 0: none */
    /* coroutine machinery (vm_coro.c) */
    struct State *resumer;     /* coroutine that resumed this one, while running */
    void *cstack;              /* scanned GC block used as this coroutine's C stack (NULL: main) */
    size_t cstacksize;
    void *csp;                 /* saved C stack pointer while suspended */
    void *resumer_sp;          /* saved C stack pointer of the resumer */
    int32_t nxfer;             /* values transferred by the last resume/yield */
    int32_t costatus_err;      /* VM_OK or error status when dead */
    char *cstack_limit;        /* lowest C stack address usable before "C stack overflow" */
    int32_t basehookcount;     /* count hooks: every basehookcount instructions */
    int32_t hookcount;         /* instructions left until the next count event */
    int32_t oldpc;             /* pc of the last traced instruction of the running Lua frame,
                                  for line events (lua5.4's L->oldpc) */
    int32_t ftransfer, ntransfer; /* values a call or return hook transfers (CIST_TRAN) */
    Value hook;                /* the hook function, or nil */
    GcStack *basestack;        /* the stack of the language thread running this state (its
                                  native thread's or its green stack); set by resume */
    struct VmThread *thread;   /* base state of a language thread: the thread; else NULL */
    uint32_t sample_win;       /* -Xsample.mode=code: the window whose instrumented code last
                                  took over this state's frames (vm/prof/vm_sample.h); 0: none */
    /* C API continuations (vm/capi/vm_capi_lock.c): a module function that yielded inside
     * lua_callk/lua_pcallk/lua_yieldk does not go on after the call, as in lua5.4: its
     * continuation runs and its results are thrown (VM_YIELD) to the trampoline below it. */
    uint32_t nyields;          /* yields of this coroutine so far (vm_coro_yield) */
    int32_t kresults;          /* the thrown continuation's results, on top of the stack */
    struct CapiKTarget *ktarget; /* where they go: the innermost trampoline whose module
                                  function may yield (vm/capi); NULL: none. A protected call
                                  puts back the value it began with when it catches an
                                  error, so it never points into a frame an error left */
    /* sanitizer builds only (vm_sanitize.h): this coroutine's C stack, and its resumer's
     * stack (the way back), as the sanitizers know them */
    VmSanStack san, san_back;
    /* Short strings the libraries made recently (vm_string_reuse, vm_string.c): a scanned GC
     * block of VM_STRCACHE_SIZE slots, NULL until first used. Per coroutine, so only the
     * thread running this state touches it. */
    struct String **strcache;
} State;

/* Extra slots above stack_last for C functions' small pushes without checks. */
#define VM_EXTRA_STACK 5
/* Minimum free slots guaranteed to a C function. */
#define VM_MINSTACK 20
/* Largest Lua stack, in slots: beyond it a call raises "stack overflow" (as LUAI_MAXSTACK). */
#define VM_MAXSTACK 1000000
/* Nested C calls (metamethods, pcall, library callbacks) allowed, as LUAI_MAXCCALLS. */
#define VM_MAXCCALLS 200

typedef struct Global {
    Table *globals;            /* _G; upvalue _ENV of every main chunk */
    Table *loaded;             /* package.loaded */
    Table *string_mt;          /* metatable of strings ({__index = string}) */
    Table *type_mt[VT_NTAGS];  /* debug.setmetatable on a value of another type without a
                                  metatable of its own (nil, booleans, numbers, light
                                  userdata, functions, threads): one per Lua type, stored at
                                  every tag of that type; NULL: none */
    Table *registry;           /* debug.getregistry(): created on first use */
    String *tmname[TM_N];      /* "__index", ... */
    String *memerrmsg;         /* preallocated "not enough memory" */
    Table *intern;             /* canonical names (vm_string_intern) */
    State *mainthread;
    uint8_t warnmode;          /* VM_WARN_OFF/ON/CONT (vm_warn.h), under its lock */
    CFunction fn_next;         /* the base library's next, iterated inline by TFORCALL */
    CFunction fn_ipairs_aux;   /* ipairs' iterator, iterated inline by compiled TFORCALL */
    void *cstack_cache[16];    /* C stacks of dead coroutines, reused by new ones (vm_coro.c) */
    int32_t ncstack_cache;
    atomic_flag cstack_lock;   /* guards the cache: every language thread uses it */
} Global;

/* Fast metamethod lookup in metatable [mt] (may be NULL): NULL when absent. */
const Value *vm_gettm(Table *mt, TMS event, String *ename);
/* h.flags is written by any thread that stores a new key into mt (vm_table.c clears it), so
 * it is read and set with relaxed atomics: a plain access was a data race (TSan). A bit set
 * by a lookup that raced with such a store may hide the new key's metamethod until the next
 * new key: one of the unspecified outcomes of a racing program ("Races" in vm_table.c). */
/* vm_fasttm_at also gives the position of the event's name in mt (vm_table_getstr_at's
 * [*pos]: set only when the name's node is found), for the JIT's inline caches. */
__attribute__((always_inline)) static inline const Value *vm_fasttm_at(State *S, Table *mt, TMS e, uint32_t *pos) {
    if (mt == NULL || (__atomic_load_n(&mt->h.flags, __ATOMIC_RELAXED) & (1u << e))) return NULL;
    const Value *tm = vm_table_getstr_at(mt, S->g->tmname[e], pos);
    if (tm->tt != VT_NIL) return tm;
    __atomic_fetch_or(&mt->h.flags, (uint8_t)(1u << e), __ATOMIC_RELAXED); /* cache the absence until the next new key */
    return NULL;
}
static inline const Value *vm_fasttm(State *S, Table *mt, TMS e) { return vm_fasttm_at(S, mt, e, NULL); }

/* Metatable of any value (strings share g->string_mt). */
Table *vm_metatable_of(State *S, const Value *v);

/* Allocation that raises "not enough memory" instead of returning NULL. */
void *vm_alloc(State *S, size_t n);       /* scanned, zeroed */
void *vm_alloc_leaf(State *S, size_t n);  /* pointer-free, not zeroed */
void *vm_alloc_weak(State *S, size_t n);  /* traced by vm_gc.c, zeroed (gc_alloc_weak) */
void *vm_realloc(State *S, void *p, size_t n);

/* Raise an error with the message formatted printf-style, prefixed with "chunk:line:" of
 * the current frame when it is a Lua function (interpreter errors; luaG_runerror). */
_Noreturn void vm_runerror(State *S, const char *fmt, ...);
/* Throw [S->errval] with [status] to the innermost protected call. */
_Noreturn void vm_throw(State *S, int status);

#endif
