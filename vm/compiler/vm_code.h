/* vm_code.h: the code generator's data (expression descriptors, function and block state)
 * and the operations the parser drives. Private to vm_parse.c and vm_code.c (and their unit
 * tests). The design is Lua 5.4's one-pass scheme: an expression is described by an ExpDesc
 * until the parser knows where its value must go, and conditions carry lists of pending
 * jumps ("patch lists") linked through the jump offsets themselves. */
#ifndef VM_CODE_H
#define VM_CODE_H

#include "vm_lex.h"
#include "vm_opcodes.h"

/* End of a patch list (a JMP whose offset is NO_JUMP ends its list). */
#define NO_JUMP (-1)
/* "No register" marker for TESTSET's A while the jump is pending. */
#define NO_REG 0xFFFF
/* Largest B/C operand: registers, constant indices, integer keys (16 bits). */
#define MAXARG_C 0xFFFF
/* Immediate operands sB/sC are int16_t. */
#define MAXARG_SC 32767
#define MINARG_SC (-32768)
/* Locals per function, as Lua's MAXVARS. */
#define MAXVARS 200
/* Items stored per SETLIST while building a table constructor, as LFIELDS_PER_FLUSH. */
#define LFIELDS_PER_FLUSH 50

typedef enum {
    VVOID,     /* empty expression list / no value */
    VNIL, VTRUE, VFALSE,
    VK,        /* constant in K; info = index */
    VKFLT,     /* float literal; nval */
    VKINT,     /* integer literal; ival */
    VKSTR,     /* string literal; strval */
    VNONRELOC, /* value in a fixed register; info = register */
    VLOCAL,    /* local variable; var.ridx = register, var.vidx = index in DynData.actvar */
    VUPVAL,    /* upvalue; info = index */
    VCONST,    /* compile-time <const>; info = absolute index in DynData.actvar */
    VINDEXED,  /* t[k]; ind.t = table register, ind.idx = key register */
    VINDEXUP,  /* upvalue[K]; ind.t = upvalue, ind.idx = K index of a string */
    VINDEXI,   /* t[i]; ind.t = table register, ind.idx = integer 0..MAXARG_C */
    VINDEXSTR, /* t.name; ind.t = table register, ind.idx = K index of a string */
    VJMP,      /* a test/comparison; info = pc of its JMP */
    VRELOC,    /* result can go to any register; info = pc of the instruction */
    VCALL,     /* a call; info = pc of the CALL */
    VVARARG    /* '...'; info = pc of the VARARG */
} ExpKind;

typedef struct ExpDesc {
    ExpKind k;
    union {
        vm_Integer ival;
        vm_Number nval;
        String *strval;
        int info;
        struct { int t; int idx; } ind;
        struct { int ridx; int vidx; } var;
    } u;
    int t; /* patch list "exit when true" */
    int f; /* patch list "exit when false" */
} ExpDesc;

/* Variable kinds (UpvalDesc.kind uses the first three). */
#define VDKREG 0     /* regular */
#define RDKCONST 1   /* <const> */
#define RDKTOCLOSE 2 /* <close> */
#define RDKCTC 3     /* <const> with a compile-time value: no register */

typedef struct VarDesc {
    String *name;
    Value k;       /* RDKCTC: the value */
    uint8_t kind;
    int ridx;      /* register */
    int pidx;      /* index in Proto.locvars */
} VarDesc;

typedef struct LabelDesc {
    String *name;
    int pc;
    int line;
    int nactvar;   /* active locals at that point */
    bool close;    /* goto leaves the scope of a captured/tbc local */
} LabelDesc;

/* Lists shared by all functions of one compilation (scanned GC blocks). */
typedef struct DynData {
    VarDesc *actvar;
    int nactvar, actcap;
    LabelDesc *gt;         /* pending gotos */
    int ngt, gtcap;
    LabelDesc *label;      /* active labels */
    int nlabel, labelcap;
} DynData;

typedef struct BlockCnt {
    struct BlockCnt *previous;
    int firstlabel;
    int firstgoto;
    int nactvar;           /* active locals outside the block */
    bool upval;            /* some local of the block is captured (or <close>) */
    bool isloop;
    bool insidetbc;
} BlockCnt;

typedef struct FuncState {
    Proto *f;              /* being built; its arrays grow as code is emitted */
    struct FuncState *prev;
    Lexer *ls;
    DynData *dyd;
    BlockCnt *bl;
    int pc;                /* next instruction */
    int lasttarget;        /* last pc that is a jump target */
    int nk, np, nups;
    int firstlocal;        /* index in dyd->actvar of this function's first local */
    int firstlabel;
    int ndebugvars;        /* entries in f->locvars */
    int nactvar;           /* active locals (compile-time constants included) */
    int freereg;
    bool needclose;
    int codecap, kcap, pcap, upcap, loccap;
    int *khash;            /* constant dedup: open addressing, K index + 1 or 0 (leaf block) */
    int khashcap;
} FuncState;

/* Unary and binary operators, ORDER OPR: arithmetic operators follow the order of the
 * arithmetic opcodes (ADD .. SHR) and of the K variants. */
typedef enum {
    OPR_ADD, OPR_SUB, OPR_MUL, OPR_MOD, OPR_POW, OPR_DIV, OPR_IDIV,
    OPR_BAND, OPR_BOR, OPR_BXOR, OPR_SHL, OPR_SHR,
    OPR_CONCAT,
    OPR_EQ, OPR_LT, OPR_LE, OPR_NE, OPR_GT, OPR_GE,
    OPR_AND, OPR_OR,
    OPR_NOBINOPR
} BinOpr;

typedef enum { OPR_MINUS, OPR_BNOT, OPR_NOT, OPR_LEN, OPR_NOUNOPR } UnOpr;

/* --- vm_code.c ----------------------------------------------------------- */
_Noreturn void vm_code_error(FuncState *fs, const char *msg);
int vm_code_emit(FuncState *fs, Instr i);
int vm_code_abc(FuncState *fs, OpCode o, int a, int b, int c, int k);
int vm_code_abx(FuncState *fs, OpCode o, int a, uint32_t bx);
int vm_code_asbx(FuncState *fs, OpCode o, int a, int32_t sbx);
void vm_code_fixline(FuncState *fs, int line);
void vm_code_nil(FuncState *fs, int from, int n);
void vm_code_reserveregs(FuncState *fs, int n);
void vm_code_checkstack(FuncState *fs, int n);
void vm_code_int(FuncState *fs, int reg, vm_Integer i);
int vm_code_stringK(FuncState *fs, String *s);
int vm_code_jump(FuncState *fs);
void vm_code_ret(FuncState *fs, int first, int nret);
int vm_code_getlabel(FuncState *fs);
void vm_code_patchlist(FuncState *fs, int list, int target);
void vm_code_patchtohere(FuncState *fs, int list);
void vm_code_concat(FuncState *fs, int *l1, int l2);
void vm_code_fixjump(FuncState *fs, int pc, int dest);
int vm_code_nvarstack(FuncState *fs);
int vm_code_reglevel(FuncState *fs, int nvar);
VarDesc *vm_code_localvar(FuncState *fs, int vidx);

void vm_code_setreturns(FuncState *fs, ExpDesc *e, int nresults);
void vm_code_setoneret(FuncState *fs, ExpDesc *e);
void vm_code_dischargevars(FuncState *fs, ExpDesc *e);
int vm_code_exp2anyreg(FuncState *fs, ExpDesc *e);
void vm_code_exp2anyregup(FuncState *fs, ExpDesc *e);
void vm_code_exp2nextreg(FuncState *fs, ExpDesc *e);
void vm_code_exp2val(FuncState *fs, ExpDesc *e);
bool vm_code_exp2const(FuncState *fs, const ExpDesc *e, Value *v);
void vm_code_self(FuncState *fs, ExpDesc *e, ExpDesc *key);
void vm_code_indexed(FuncState *fs, ExpDesc *t, ExpDesc *k);
void vm_code_goiftrue(FuncState *fs, ExpDesc *e);
void vm_code_goiffalse(FuncState *fs, ExpDesc *e);
void vm_code_storevar(FuncState *fs, ExpDesc *var, ExpDesc *e);
void vm_code_prefix(FuncState *fs, UnOpr op, ExpDesc *e, int line);
void vm_code_infix(FuncState *fs, BinOpr op, ExpDesc *v);
void vm_code_posfix(FuncState *fs, BinOpr op, ExpDesc *e1, ExpDesc *e2, int line);
void vm_code_settablesize(FuncState *fs, int pc, int ra, int asize, int hsize);
void vm_code_setlist(FuncState *fs, int base, int nelems, int tostore);
void vm_code_finish(FuncState *fs);
void vm_code_freeexp(FuncState *fs, ExpDesc *e);

static inline bool vm_code_hasjumps(const ExpDesc *e) { return e->t != e->f; }
static inline bool vm_code_hasmultret(ExpKind k) { return k == VCALL || k == VVARARG; }
static inline Instr *vm_code_getinstr(FuncState *fs, const ExpDesc *e) { return &fs->f->code[e->u.info]; }
static inline void vm_code_setmultret(FuncState *fs, ExpDesc *e) { vm_code_setreturns(fs, e, -1); }

/* Field setters of an encoded instruction. */
static inline void vm_setarg_a(Instr *i, unsigned v) {
    *i = (*i & ~((Instr)0xffff << VM_OP_SHIFT_A)) | ((Instr)(v & 0xffff) << VM_OP_SHIFT_A);
}
static inline void vm_setarg_b(Instr *i, unsigned v) {
    *i = (*i & ~((Instr)0xffff << VM_OP_SHIFT_B)) | ((Instr)(v & 0xffff) << VM_OP_SHIFT_B);
}
static inline void vm_setarg_c(Instr *i, unsigned v) {
    *i = (*i & ~((Instr)0xffff << VM_OP_SHIFT_C)) | ((Instr)(v & 0xffff) << VM_OP_SHIFT_C);
}
static inline void vm_setarg_k(Instr *i, unsigned v) {
    *i = (*i & ~((Instr)0xff << VM_OP_SHIFT_K)) | ((Instr)(v & 1) << VM_OP_SHIFT_K);
}
static inline void vm_setarg_bx(Instr *i, uint32_t v) {
    *i = (*i & ~((Instr)0xffffffffu << VM_OP_SHIFT_B)) | ((Instr)v << VM_OP_SHIFT_B);
}
static inline void vm_setop(Instr *i, unsigned op) { *i = (*i & ~(Instr)0xff) | (Instr)(op & 0xff); }

#endif
