/* vm_parse.c: the parser: Lua 5.4 syntax, scopes (locals, upvalues, blocks, goto/labels)
 * and the driver of the code generator (vm_code.c). One pass, no syntax tree. */
#include <stdio.h>
#include <string.h>

#include "vm_code.h"
#include "vm_compile.h"
#include "vm_string.h"

/* Longest function name recorded in Proto.name ("a.b.c:m"). */
#define FUNCNAME_MAX 200

/* Error paths format messages in local buffers: keep them out of line so that the frames of
 * the recursive parsing functions stay small (the parser may run on a coroutine's C stack). */
#define COLD __attribute__((noinline, cold))

typedef struct Parser {
    Lexer ls;
    FuncState *fs;
    DynData dyd;
    String *source;
} Parser;

/* ======================================================================
 * Errors and token checks
 * ====================================================================== */

static _Noreturn void syntaxerror(Parser *p, const char *msg) { vm_lex_error(&p->ls, msg, true); }
static _Noreturn void semerror(Parser *p, const char *msg) { vm_lex_error(&p->ls, msg, false); }

COLD static _Noreturn void error_expected(Parser *p, int token) {
    char b[40], msg[80];
    snprintf(msg, sizeof msg, "%s expected", vm_lex_token2str(token, b, sizeof b));
    syntaxerror(p, msg);
}

COLD static _Noreturn void errorlimit(Parser *p, FuncState *fs, int limit, const char *what) {
    char msg[160];
    int line = fs->f->linedefined;
    if (line == 0)
        snprintf(msg, sizeof msg, "too many %s (limit is %d) in main function", what, limit);
    else
        snprintf(msg, sizeof msg, "too many %s (limit is %d) in function at line %d", what, limit, line);
    syntaxerror(p, msg);
}

static void checklimit(Parser *p, FuncState *fs, int v, int l, const char *what) {
    if (v > l) errorlimit(p, fs, l, what);
}

static bool testnext(Parser *p, int c) {
    if (p->ls.t.kind == c) {
        vm_lex_next(&p->ls);
        return true;
    }
    return false;
}

static void check(Parser *p, int c) {
    if (p->ls.t.kind != c) error_expected(p, c);
}

static void checknext(Parser *p, int c) {
    check(p, c);
    vm_lex_next(&p->ls);
}

static void check_condition(Parser *p, bool cond, const char *msg) {
    if (!cond) syntaxerror(p, msg);
}

/* Check for [what] closing [who] opened at line [where]. */
COLD static _Noreturn void error_unmatched(Parser *p, int what, int who, int where) {
    char b1[40], b2[40], msg[160];
    snprintf(msg, sizeof msg, "%s expected (to close %s at line %d)",
             vm_lex_token2str(what, b1, sizeof b1), vm_lex_token2str(who, b2, sizeof b2), where);
    syntaxerror(p, msg);
}

static void check_match(Parser *p, int what, int who, int where) {
    if (!testnext(p, what)) {
        if (where == p->ls.t.line)
            error_expected(p, what);
        else
            error_unmatched(p, what, who, where);
    }
}

static String *str_checkname(Parser *p) {
    check(p, TK_NAME);
    String *s = p->ls.t.v.s;
    vm_lex_next(&p->ls);
    return s;
}

static void init_exp(ExpDesc *e, ExpKind k, int info) {
    e->f = e->t = NO_JUMP;
    e->k = k;
    e->u.info = info;
}

static void codestring(ExpDesc *e, String *s) {
    e->f = e->t = NO_JUMP;
    e->k = VKSTR;
    e->u.strval = s;
}

static void codename(Parser *p, ExpDesc *e) { codestring(e, str_checkname(p)); }

/* One more level of syntactic nesting. Besides the count, the C stack itself is checked:
 * on a coroutine's C stack (S->cstack_limit set) the parser stops in the slack left there. */
static void enterlevel(Parser *p) {
    char here;
    State *S = p->ls.S;
    if (++p->ls.nlevels > LEX_MAXLEVELS || (S->cstack_limit != NULL && &here < S->cstack_limit))
        semerror(p, "chunk has too many syntax levels");
}

static void leavelevel(Parser *p) { p->ls.nlevels--; }

static bool eqstr(String *a, String *b) { return vm_string_eq(a, b); }

static bool eqlit(String *a, const char *lit) {
    size_t n = strlen(lit);
    return a->len == n && memcmp(a->data, lit, n) == 0;
}

/* ======================================================================
 * Variables
 * ====================================================================== */

static int registerlocalvar(Parser *p, FuncState *fs, String *name) {
    Proto *f = fs->f;
    if (fs->ndebugvars >= fs->loccap) {
        int ncap = fs->loccap < 8 ? 16 : fs->loccap * 2;
        f->locvars = f->locvars ? vm_realloc(p->ls.S, f->locvars, (size_t)ncap * sizeof(LocVar))
                                : vm_alloc(p->ls.S, (size_t)ncap * sizeof(LocVar));
        fs->loccap = ncap;
    }
    f->locvars[fs->ndebugvars].name = name;
    f->locvars[fs->ndebugvars].startpc = fs->pc;
    f->locvars[fs->ndebugvars].endpc = fs->pc;
    return fs->ndebugvars++;
}

/* Declare a new local (not yet active); returns its index among the function's locals. */
static int new_localvar(Parser *p, String *name) {
    FuncState *fs = p->fs;
    DynData *dyd = &p->dyd;
    checklimit(p, fs, dyd->nactvar + 1 - fs->firstlocal, MAXVARS, "local variables");
    if (dyd->nactvar >= dyd->actcap) {
        int ncap = dyd->actcap < 8 ? 16 : dyd->actcap * 2;
        dyd->actvar = dyd->actvar ? vm_realloc(p->ls.S, dyd->actvar, (size_t)ncap * sizeof(VarDesc))
                                  : vm_alloc(p->ls.S, (size_t)ncap * sizeof(VarDesc));
        dyd->actcap = ncap;
    }
    VarDesc *var = &dyd->actvar[dyd->nactvar++];
    memset(var, 0, sizeof *var);
    var->kind = VDKREG;
    var->name = name;
    return dyd->nactvar - 1 - fs->firstlocal;
}

static int new_localvarliteral(Parser *p, const char *name) {
    return new_localvar(p, vm_string_newc(p->ls.S, name));
}

static LocVar *localdebuginfo(FuncState *fs, int vidx) {
    VarDesc *vd = vm_code_localvar(fs, vidx);
    if (vd->kind == RDKCTC) return NULL;
    return &fs->f->locvars[vd->pidx];
}

static void init_var(FuncState *fs, ExpDesc *e, int vidx) {
    e->f = e->t = NO_JUMP;
    e->k = VLOCAL;
    e->u.var.vidx = vidx;
    e->u.var.ridx = vm_code_localvar(fs, vidx)->ridx;
}

/* Make the last [nvars] declared locals active, in registers from the current level. */
static void adjustlocalvars(Parser *p, int nvars) {
    FuncState *fs = p->fs;
    int reglevel = vm_code_nvarstack(fs);
    for (int i = 0; i < nvars; i++) {
        int vidx = fs->nactvar++;
        VarDesc *var = vm_code_localvar(fs, vidx);
        var->ridx = reglevel++;
        var->pidx = registerlocalvar(p, fs, var->name);
    }
}

static void removevars(FuncState *fs, int tolevel) {
    fs->dyd->nactvar -= (fs->nactvar - tolevel);
    while (fs->nactvar > tolevel) {
        LocVar *var = localdebuginfo(fs, --fs->nactvar);
        if (var) var->endpc = fs->pc;
    }
}

static int searchupvalue(FuncState *fs, String *name) {
    UpvalDesc *up = fs->f->upvals;
    for (int i = 0; i < fs->nups; i++) {
        if (eqstr(up[i].name, name)) return i;
    }
    return -1;
}

static UpvalDesc *allocupvalue(Parser *p, FuncState *fs) {
    Proto *f = fs->f;
    checklimit(p, fs, fs->nups + 1, VM_MAXUPVALS, "upvalues");
    if (fs->nups >= fs->upcap) {
        int ncap = fs->upcap < 4 ? 8 : fs->upcap * 2;
        f->upvals = f->upvals ? vm_realloc(p->ls.S, f->upvals, (size_t)ncap * sizeof(UpvalDesc))
                              : vm_alloc(p->ls.S, (size_t)ncap * sizeof(UpvalDesc));
        fs->upcap = ncap;
    }
    return &f->upvals[fs->nups++];
}

static int newupvalue(Parser *p, FuncState *fs, String *name, ExpDesc *v) {
    UpvalDesc *up = allocupvalue(p, fs);
    FuncState *prev = fs->prev;
    if (v->k == VLOCAL) {
        up->instack = 1;
        up->idx = (uint16_t)v->u.var.ridx;
        up->kind = vm_code_localvar(prev, v->u.var.vidx)->kind;
    } else {
        up->instack = 0;
        up->idx = (uint16_t)v->u.info;
        up->kind = prev->f->upvals[v->u.info].kind;
    }
    up->name = name;
    return fs->nups - 1;
}

/* Look [n] up among the active locals of [fs]: VLOCAL, VCONST or -1. */
static int searchvar(FuncState *fs, String *n, ExpDesc *var) {
    for (int i = fs->nactvar - 1; i >= 0; i--) {
        VarDesc *vd = vm_code_localvar(fs, i);
        if (eqstr(n, vd->name)) {
            if (vd->kind == RDKCTC)
                init_exp(var, VCONST, fs->firstlocal + i);
            else
                init_var(fs, var, i);
            return (int)var->k;
        }
    }
    return -1;
}

/* The block where local [level] was declared keeps a captured variable. */
static void markupval(FuncState *fs, int level) {
    BlockCnt *bl = fs->bl;
    while (bl->nactvar > level) bl = bl->previous;
    bl->upval = true;
    fs->needclose = true;
}

static void marktobeclosed(FuncState *fs) {
    BlockCnt *bl = fs->bl;
    bl->upval = true;
    bl->insidetbc = true;
    fs->needclose = true;
}

static void singlevaraux(Parser *p, FuncState *fs, String *n, ExpDesc *var, bool base) {
    if (fs == NULL) {
        init_exp(var, VVOID, 0);
        return;
    }
    int v = searchvar(fs, n, var);
    if (v >= 0) {
        if (v == VLOCAL && !base) markupval(fs, var->u.var.vidx);
        return;
    }
    int idx = searchupvalue(fs, n);
    if (idx < 0) {
        singlevaraux(p, fs->prev, n, var, false);
        if (var->k == VLOCAL || var->k == VUPVAL)
            idx = newupvalue(p, fs, n, var);
        else
            return; /* a global or a compile-time constant */
    }
    init_exp(var, VUPVAL, idx);
}

static void singlevar(Parser *p, ExpDesc *var) {
    String *varname = str_checkname(p);
    FuncState *fs = p->fs;
    singlevaraux(p, fs, varname, var, true);
    if (var->k == VVOID) { /* global: _ENV[varname] */
        ExpDesc key;
        singlevaraux(p, fs, p->ls.envname, var, true);
        vm_code_exp2anyregup(fs, var);
        codestring(&key, varname);
        vm_code_indexed(fs, var, &key);
    }
}

/* Adjust [nexps] values to [nvars] (extra values dropped, missing ones nil). */
static void adjust_assign(Parser *p, int nvars, int nexps, ExpDesc *e) {
    FuncState *fs = p->fs;
    int needed = nvars - nexps;
    if (vm_code_hasmultret(e->k)) {
        int extra = needed + 1;
        if (extra < 0) extra = 0;
        vm_code_setreturns(fs, e, extra);
    } else {
        if (e->k != VVOID) vm_code_exp2nextreg(fs, e);
        if (needed > 0) vm_code_nil(fs, fs->freereg, needed);
    }
    if (needed > 0)
        vm_code_reserveregs(fs, needed);
    else
        fs->freereg += needed;
}

/* ======================================================================
 * Gotos and labels
 * ====================================================================== */

static int newlabelentry(Parser *p, bool isgoto, String *name, int line, int pc) {
    DynData *d = &p->dyd;
    LabelDesc **arr = isgoto ? &d->gt : &d->label;
    int *n = isgoto ? &d->ngt : &d->nlabel;
    int *cap = isgoto ? &d->gtcap : &d->labelcap;
    if (*n >= *cap) {
        int ncap = *cap < 8 ? 16 : *cap * 2;
        *arr = *arr ? vm_realloc(p->ls.S, *arr, (size_t)ncap * sizeof(LabelDesc))
                    : vm_alloc(p->ls.S, (size_t)ncap * sizeof(LabelDesc));
        *cap = ncap;
    }
    LabelDesc *l = &(*arr)[*n];
    l->name = name;
    l->line = line;
    l->nactvar = p->fs->nactvar;
    l->close = false;
    l->pc = pc;
    return (*n)++;
}

static int newgotoentry(Parser *p, String *name, int line, int pc) {
    return newlabelentry(p, true, name, line, pc);
}

COLD static _Noreturn void jumpscopeerror(Parser *p, LabelDesc *gt) {
    const char *varname = vm_code_localvar(p->fs, gt->nactvar)->name->data;
    char msg[256];
    snprintf(msg, sizeof msg, "<goto %.80s> at line %d jumps into the scope of local '%.80s'",
             gt->name->data, gt->line, varname);
    semerror(p, msg);
}

/* Resolve pending goto [g] to [label] and remove it from the list. */
static void solvegoto(Parser *p, int g, LabelDesc *label) {
    DynData *d = &p->dyd;
    LabelDesc *gt = &d->gt[g];
    if (gt->nactvar < label->nactvar) jumpscopeerror(p, gt);
    vm_code_patchlist(p->fs, gt->pc, label->pc);
    for (int i = g; i < d->ngt - 1; i++) d->gt[i] = d->gt[i + 1];
    d->ngt--;
}

static LabelDesc *findlabel(Parser *p, String *name) {
    DynData *d = &p->dyd;
    for (int i = p->fs->firstlabel; i < d->nlabel; i++) {
        if (eqstr(d->label[i].name, name)) return &d->label[i];
    }
    return NULL;
}

/* Resolve the pending gotos of the current block to [lb]; true if any needs a CLOSE. */
static bool solvegotos(Parser *p, LabelDesc *lb) {
    DynData *d = &p->dyd;
    int i = p->fs->bl->firstgoto;
    bool needsclose = false;
    while (i < d->ngt) {
        if (eqstr(d->gt[i].name, lb->name)) {
            needsclose |= d->gt[i].close;
            solvegoto(p, i, lb);
        } else {
            i++;
        }
    }
    return needsclose;
}

/* A label here; [last]: it ends its block, so the block's locals are already dead. */
static bool createlabel(Parser *p, String *name, int line, bool last) {
    FuncState *fs = p->fs;
    int l = newlabelentry(p, false, name, line, vm_code_getlabel(fs));
    if (last) p->dyd.label[l].nactvar = fs->bl->nactvar;
    if (solvegotos(p, &p->dyd.label[l])) {
        vm_code_abc(fs, OP_CLOSE, vm_code_nvarstack(fs), 0, 0, 0);
        return true;
    }
    return false;
}

/* The block ends: its pending gotos now belong to the enclosing block. */
static void movegotosout(FuncState *fs, BlockCnt *bl) {
    DynData *d = fs->dyd;
    for (int i = bl->firstgoto; i < d->ngt; i++) {
        LabelDesc *gt = &d->gt[i];
        if (vm_code_reglevel(fs, gt->nactvar) > vm_code_reglevel(fs, bl->nactvar)) gt->close |= bl->upval;
        gt->nactvar = bl->nactvar;
    }
}

COLD static _Noreturn void undefgoto(Parser *p, LabelDesc *gt) {
    char msg[200];
    if (eqlit(gt->name, "break"))
        snprintf(msg, sizeof msg, "break outside loop at line %d", gt->line);
    else
        snprintf(msg, sizeof msg, "no visible label '%.80s' for <goto> at line %d", gt->name->data, gt->line);
    semerror(p, msg);
}

/* ======================================================================
 * Blocks and functions
 * ====================================================================== */

static void enterblock(Parser *p, FuncState *fs, BlockCnt *bl, bool isloop) {
    bl->isloop = isloop;
    bl->nactvar = fs->nactvar;
    bl->firstlabel = p->dyd.nlabel;
    bl->firstgoto = p->dyd.ngt;
    bl->upval = false;
    bl->insidetbc = (fs->bl != NULL && fs->bl->insidetbc);
    bl->previous = fs->bl;
    fs->bl = bl;
}

static void leaveblock(Parser *p, FuncState *fs) {
    BlockCnt *bl = fs->bl;
    bool hasclose = false;
    int stklevel = vm_code_reglevel(fs, bl->nactvar);
    removevars(fs, bl->nactvar);
    if (bl->isloop) hasclose = createlabel(p, vm_string_newc(p->ls.S, "break"), 0, false);
    if (!hasclose && bl->previous && bl->upval) vm_code_abc(fs, OP_CLOSE, stklevel, 0, 0, 0);
    fs->freereg = stklevel;
    p->dyd.nlabel = bl->firstlabel;
    fs->bl = bl->previous;
    if (bl->previous) {
        movegotosout(fs, bl);
    } else if (bl->firstgoto < p->dyd.ngt) {
        undefgoto(p, &p->dyd.gt[bl->firstgoto]);
    }
}

static Proto *newproto(Parser *p) {
    Proto *f = vm_alloc(p->ls.S, sizeof(Proto));
    f->h.type = VT_PROTO;
    f->source = p->source;
    f->maxstack = 2;
    return f;
}

static Proto *addprototype(Parser *p) {
    FuncState *fs = p->fs;
    Proto *f = fs->f;
    if (fs->np >= fs->pcap) {
        int ncap = fs->pcap < 4 ? 8 : fs->pcap * 2;
        f->p = f->p ? vm_realloc(p->ls.S, f->p, (size_t)ncap * sizeof(Proto *))
                    : vm_alloc(p->ls.S, (size_t)ncap * sizeof(Proto *));
        fs->pcap = ncap;
    }
    Proto *np = newproto(p);
    f->p[fs->np++] = np;
    return np;
}

static void open_func(Parser *p, FuncState *fs, Proto *f, BlockCnt *bl) {
    memset(fs, 0, sizeof *fs);
    fs->f = f;
    fs->prev = p->fs;
    fs->ls = &p->ls;
    fs->dyd = &p->dyd;
    p->fs = fs;
    fs->firstlocal = p->dyd.nactvar;
    fs->firstlabel = p->dyd.nlabel;
    fs->bl = NULL;
    enterblock(p, fs, bl, false);
}

/* Shrink a GC array to its final size (keeps it when empty). */
static void *shrink(State *S, void *arr, int n, size_t elem) {
    if (arr == NULL || n == 0) return NULL;
    return vm_realloc(S, arr, (size_t)n * elem);
}

static void close_func(Parser *p) {
    FuncState *fs = p->fs;
    Proto *f = fs->f;
    State *S = p->ls.S;
    vm_code_ret(fs, vm_code_nvarstack(fs), 0);
    leaveblock(p, fs);
    vm_code_finish(fs);
    f->ncode = fs->pc;
    f->code = shrink(S, f->code, fs->pc, sizeof(Instr));
    f->lineinfo = shrink(S, f->lineinfo, fs->pc, sizeof(int32_t));
    f->nk = fs->nk;
    f->k = shrink(S, f->k, fs->nk, sizeof(Value));
    f->np = fs->np;
    f->p = shrink(S, f->p, fs->np, sizeof(Proto *));
    f->nupvals = fs->nups;
    f->upvals = shrink(S, f->upvals, fs->nups, sizeof(UpvalDesc));
    f->nlocvars = fs->ndebugvars;
    f->locvars = shrink(S, f->locvars, fs->ndebugvars, sizeof(LocVar));
    p->fs = fs->prev;
}

/* ======================================================================
 * Expressions
 * ====================================================================== */

static void expr(Parser *p, ExpDesc *v);
static void statlist(Parser *p);
static void body(Parser *p, ExpDesc *e, bool ismethod, int line, String *name);

static bool block_follow(Parser *p, bool withuntil) {
    switch (p->ls.t.kind) {
    case TK_ELSE: case TK_ELSEIF: case TK_END: case TK_EOS:
        return true;
    case TK_UNTIL:
        return withuntil;
    default:
        return false;
    }
}

static void fieldsel(Parser *p, ExpDesc *v) {
    FuncState *fs = p->fs;
    ExpDesc key;
    vm_code_exp2anyregup(fs, v);
    vm_lex_next(&p->ls); /* '.' or ':' */
    codename(p, &key);
    vm_code_indexed(fs, v, &key);
}

static void yindex(Parser *p, ExpDesc *v) {
    vm_lex_next(&p->ls); /* '[' */
    expr(p, v);
    vm_code_exp2val(p->fs, v);
    checknext(p, ']');
}

/* --- table constructors --- */

typedef struct ConsControl {
    ExpDesc v;    /* last list item read */
    ExpDesc *t;   /* the table */
    int nh;       /* record items */
    int na;       /* list items already stored */
    int tostore;  /* list items pending */
    int multret;  /* 1: the last list item is a call or '...' (SETLIST stores all it gives) */
} ConsControl;

static void recfield(Parser *p, ConsControl *cc) {
    FuncState *fs = p->fs;
    int reg = fs->freereg;
    ExpDesc tab, key, val;
    if (p->ls.t.kind == TK_NAME)
        codename(p, &key);
    else
        yindex(p, &key);
    cc->nh++;
    checknext(p, '=');
    tab = *cc->t;
    vm_code_indexed(fs, &tab, &key);
    expr(p, &val);
    vm_code_storevar(fs, &tab, &val);
    fs->freereg = reg;
}

static void closelistfield(FuncState *fs, ConsControl *cc) {
    if (cc->v.k == VVOID) return;
    vm_code_exp2nextreg(fs, &cc->v);
    cc->v.k = VVOID;
    if (cc->tostore == LFIELDS_PER_FLUSH) {
        vm_code_setlist(fs, cc->t->u.info, cc->na, cc->tostore);
        cc->na += cc->tostore;
        cc->tostore = 0;
    }
}

static void lastlistfield(FuncState *fs, ConsControl *cc) {
    if (cc->tostore == 0) return;
    if (vm_code_hasmultret(cc->v.k)) {
        vm_code_setmultret(fs, &cc->v);
        vm_code_setlist(fs, cc->t->u.info, cc->na, -1);
        cc->na--;
        cc->multret = 1;
    } else {
        if (cc->v.k != VVOID) vm_code_exp2nextreg(fs, &cc->v);
        vm_code_setlist(fs, cc->t->u.info, cc->na, cc->tostore);
    }
    cc->na += cc->tostore;
}

static void listfield(Parser *p, ConsControl *cc) {
    expr(p, &cc->v);
    cc->tostore++;
}

static void field(Parser *p, ConsControl *cc) {
    switch (p->ls.t.kind) {
    case TK_NAME:
        if (vm_lex_lookahead(&p->ls) != '=')
            listfield(p, cc);
        else
            recfield(p, cc);
        break;
    case '[':
        recfield(p, cc);
        break;
    default:
        listfield(p, cc);
        break;
    }
}

static void constructor(Parser *p, ExpDesc *t) {
    FuncState *fs = p->fs;
    int line = p->ls.t.line;
    int pc = vm_code_abc(fs, OP_NEWTABLE, 0, 0, 0, 0);
    ConsControl cc;
    cc.na = cc.nh = cc.tostore = cc.multret = 0;
    cc.t = t;
    init_exp(t, VNONRELOC, fs->freereg);
    vm_code_reserveregs(fs, 1);
    init_exp(&cc.v, VVOID, 0);
    checknext(p, '{');
    do {
        if (p->ls.t.kind == '}') break;
        closelistfield(fs, &cc);
        field(p, &cc);
    } while (testnext(p, ',') || testnext(p, ';'));
    check_match(p, '}', '{', line);
    lastlistfield(fs, &cc);
    /* The array hint counts a multiple-value last item as one value (luac counts it as
     * none): `{f(), g()}` then gets its final two slots at NEWTABLE instead of one slot
     * that SETLIST replaces at once (binary_trees builds every tree node so; vm_table_new
     * keeps small parts inside the table's block, where a replaced part stays dead space).
     * A call that returns nothing leaves one slot unused. */
    vm_code_settablesize(fs, pc, t->u.info, cc.na + cc.multret, cc.nh);
}

/* --- functions --- */

static void parlist(Parser *p) {
    FuncState *fs = p->fs;
    Proto *f = fs->f;
    int nparams = 0;
    bool isvararg = false;
    if (p->ls.t.kind != ')') {
        do {
            switch (p->ls.t.kind) {
            case TK_NAME:
                new_localvar(p, str_checkname(p));
                nparams++;
                break;
            case TK_DOTS:
                vm_lex_next(&p->ls);
                isvararg = true;
                break;
            default:
                syntaxerror(p, "<name> or '...' expected");
            }
        } while (!isvararg && testnext(p, ','));
    }
    adjustlocalvars(p, nparams);
    f->numparams = (uint8_t)fs->nactvar;
    if (isvararg) f->is_vararg = 1;
    vm_code_reserveregs(fs, fs->nactvar);
}

static void codeclosure(Parser *p, ExpDesc *v) {
    FuncState *fs = p->fs->prev;
    init_exp(v, VRELOC, vm_code_abx(fs, OP_CLOSURE, 0, (uint32_t)(fs->np - 1)));
    vm_code_exp2nextreg(fs, v);
}

static void body(Parser *p, ExpDesc *e, bool ismethod, int line, String *name) {
    FuncState new_fs;
    BlockCnt bl;
    Proto *f = addprototype(p);
    f->linedefined = line;
    f->name = name;
    open_func(p, &new_fs, f, &bl);
    if (ismethod) {
        new_localvarliteral(p, "self");
        adjustlocalvars(p, 1);
    }
    checknext(p, '(');
    parlist(p);
    checknext(p, ')');
    statlist(p);
    f->lastlinedefined = p->ls.t.line;
    check_match(p, TK_END, TK_FUNCTION, line);
    codeclosure(p, e);
    close_func(p);
}

static int explist(Parser *p, ExpDesc *v) {
    int n = 1;
    expr(p, v);
    while (testnext(p, ',')) {
        vm_code_exp2nextreg(p->fs, v);
        expr(p, v);
        n++;
    }
    return n;
}

static void funcargs(Parser *p, ExpDesc *f, int line) {
    FuncState *fs = p->fs;
    ExpDesc args;
    int base, nparams;
    switch (p->ls.t.kind) {
    case '(':
        vm_lex_next(&p->ls);
        if (p->ls.t.kind == ')') {
            args.k = VVOID;
        } else {
            explist(p, &args);
            if (vm_code_hasmultret(args.k)) vm_code_setmultret(fs, &args);
        }
        check_match(p, ')', '(', line);
        break;
    case '{':
        constructor(p, &args);
        break;
    case TK_STRING:
        codestring(&args, p->ls.t.v.s);
        vm_lex_next(&p->ls);
        break;
    default:
        syntaxerror(p, "function arguments expected");
    }
    base = f->u.info;
    if (vm_code_hasmultret(args.k)) {
        nparams = -1;
    } else {
        if (args.k != VVOID) vm_code_exp2nextreg(fs, &args);
        nparams = fs->freereg - (base + 1);
    }
    init_exp(f, VCALL, vm_code_abc(fs, OP_CALL, base, nparams + 1, 2, 0));
    vm_code_fixline(fs, line);
    fs->freereg = base + 1;
}

static void primaryexp(Parser *p, ExpDesc *v) {
    switch (p->ls.t.kind) {
    case '(': {
        int line = p->ls.t.line;
        vm_lex_next(&p->ls);
        expr(p, v);
        check_match(p, ')', '(', line);
        vm_code_dischargevars(p->fs, v);
        return;
    }
    case TK_NAME:
        singlevar(p, v);
        return;
    default:
        syntaxerror(p, "unexpected symbol");
    }
}

static void suffixedexp(Parser *p, ExpDesc *v) {
    FuncState *fs = p->fs;
    int line = p->ls.t.line;
    primaryexp(p, v);
    for (;;) {
        switch (p->ls.t.kind) {
        case '.':
            fieldsel(p, v);
            break;
        case '[': {
            ExpDesc key;
            vm_code_exp2anyregup(fs, v);
            yindex(p, &key);
            vm_code_indexed(fs, v, &key);
            break;
        }
        case ':': {
            ExpDesc key;
            vm_lex_next(&p->ls);
            codename(p, &key);
            vm_code_self(fs, v, &key);
            funcargs(p, v, line);
            break;
        }
        case '(': case TK_STRING: case '{':
            vm_code_exp2nextreg(fs, v);
            funcargs(p, v, line);
            break;
        default:
            return;
        }
    }
}

static void simpleexp(Parser *p, ExpDesc *v) {
    FuncState *fs = p->fs;
    switch (p->ls.t.kind) {
    case TK_FLT:
        init_exp(v, VKFLT, 0);
        v->u.nval = p->ls.t.v.n;
        break;
    case TK_INT:
        init_exp(v, VKINT, 0);
        v->u.ival = p->ls.t.v.i;
        break;
    case TK_STRING:
        codestring(v, p->ls.t.v.s);
        break;
    case TK_NIL:
        init_exp(v, VNIL, 0);
        break;
    case TK_TRUE:
        init_exp(v, VTRUE, 0);
        break;
    case TK_FALSE:
        init_exp(v, VFALSE, 0);
        break;
    case TK_DOTS:
        check_condition(p, fs->f->is_vararg, "cannot use '...' outside a vararg function");
        init_exp(v, VVARARG, vm_code_abc(fs, OP_VARARG, 0, 0, 1, 0));
        break;
    case '{':
        constructor(p, v);
        return;
    case TK_FUNCTION: {
        vm_lex_next(&p->ls);
        body(p, v, false, p->ls.t.line, NULL);
        return;
    }
    default:
        suffixedexp(p, v);
        return;
    }
    vm_lex_next(&p->ls);
}

static UnOpr getunopr(int op) {
    switch (op) {
    case TK_NOT: return OPR_NOT;
    case '-': return OPR_MINUS;
    case '~': return OPR_BNOT;
    case '#': return OPR_LEN;
    default: return OPR_NOUNOPR;
    }
}

static BinOpr getbinopr(int op) {
    switch (op) {
    case '+': return OPR_ADD;
    case '-': return OPR_SUB;
    case '*': return OPR_MUL;
    case '%': return OPR_MOD;
    case '^': return OPR_POW;
    case '/': return OPR_DIV;
    case TK_IDIV: return OPR_IDIV;
    case '&': return OPR_BAND;
    case '|': return OPR_BOR;
    case '~': return OPR_BXOR;
    case TK_SHL: return OPR_SHL;
    case TK_SHR: return OPR_SHR;
    case TK_CONCAT: return OPR_CONCAT;
    case TK_NE: return OPR_NE;
    case TK_EQ: return OPR_EQ;
    case '<': return OPR_LT;
    case TK_LE: return OPR_LE;
    case '>': return OPR_GT;
    case TK_GE: return OPR_GE;
    case TK_AND: return OPR_AND;
    case TK_OR: return OPR_OR;
    default: return OPR_NOBINOPR;
    }
}

/* Left and right priorities of each binary operator, ORDER OPR. */
static const struct { uint8_t left, right; } priority[] = {
    {10, 10}, {10, 10},         /* + - */
    {11, 11}, {11, 11},         /* * % */
    {14, 13},                   /* ^ (right associative) */
    {11, 11}, {11, 11},         /* / // */
    {6, 6}, {4, 4}, {5, 5},     /* & | ~ */
    {7, 7}, {7, 7},             /* << >> */
    {9, 8},                     /* .. (right associative) */
    {3, 3}, {3, 3}, {3, 3},     /* == < <= */
    {3, 3}, {3, 3}, {3, 3},     /* ~= > >= */
    {2, 2}, {1, 1}              /* and or */
};

#define UNARY_PRIORITY 12

/* subexpr -> (simpleexp | unop subexpr) { binop subexpr }, where binop has a priority
 * higher than [limit]. Returns the first operator not handled. */
static BinOpr subexpr(Parser *p, ExpDesc *v, int limit) {
    enterlevel(p);
    UnOpr uop = getunopr(p->ls.t.kind);
    if (uop != OPR_NOUNOPR) {
        int line = p->ls.t.line;
        vm_lex_next(&p->ls);
        subexpr(p, v, UNARY_PRIORITY);
        vm_code_prefix(p->fs, uop, v, line);
    } else {
        simpleexp(p, v);
    }
    BinOpr op = getbinopr(p->ls.t.kind);
    while (op != OPR_NOBINOPR && priority[op].left > limit) {
        ExpDesc v2;
        int line = p->ls.t.line;
        vm_lex_next(&p->ls);
        vm_code_infix(p->fs, op, v);
        BinOpr nextop = subexpr(p, &v2, priority[op].right);
        vm_code_posfix(p->fs, op, v, &v2, line);
        op = nextop;
    }
    leavelevel(p);
    return op;
}

static void expr(Parser *p, ExpDesc *v) { subexpr(p, v, 0); }

/* ======================================================================
 * Statements
 * ====================================================================== */

static void statement(Parser *p);

static void block(Parser *p) {
    FuncState *fs = p->fs;
    BlockCnt bl;
    enterblock(p, fs, &bl, false);
    statlist(p);
    leaveblock(p, fs);
}

static void statlist(Parser *p) {
    while (!block_follow(p, true)) {
        if (p->ls.t.kind == TK_RETURN) {
            statement(p);
            return; /* 'return' must be the last statement */
        }
        statement(p);
    }
}

/* Targets of a multiple assignment, chained from the last to the first. */
typedef struct LHSAssign {
    struct LHSAssign *prev;
    ExpDesc v;
} LHSAssign;

static bool vkisvar(ExpKind k) { return k >= VLOCAL && k <= VINDEXSTR; }
static bool vkisindexed(ExpKind k) { return k >= VINDEXED && k <= VINDEXSTR; }

/* A local (or upvalue) assigned in a multiple assignment that is also the table or key of
 * an earlier target: the earlier target must use a copy made before the assignment. */
static void check_conflict(Parser *p, LHSAssign *lh, ExpDesc *v) {
    FuncState *fs = p->fs;
    int extra = fs->freereg;
    bool conflict = false;
    for (; lh; lh = lh->prev) {
        if (!vkisindexed(lh->v.k)) continue;
        if (lh->v.k == VINDEXUP) {
            if (v->k == VUPVAL && lh->v.u.ind.t == v->u.info) {
                conflict = true;
                lh->v.k = VINDEXSTR;
                lh->v.u.ind.t = extra;
            }
        } else {
            if (v->k == VLOCAL && lh->v.u.ind.t == v->u.var.ridx) {
                conflict = true;
                lh->v.u.ind.t = extra;
            }
            if (lh->v.k == VINDEXED && v->k == VLOCAL && lh->v.u.ind.idx == v->u.var.ridx) {
                conflict = true;
                lh->v.u.ind.idx = extra;
            }
        }
    }
    if (conflict) {
        if (v->k == VLOCAL)
            vm_code_abc(fs, OP_MOVE, extra, v->u.var.ridx, 0, 0);
        else
            vm_code_abc(fs, OP_GETUPVAL, extra, v->u.info, 0, 0);
        vm_code_reserveregs(fs, 1);
    }
}

COLD static _Noreturn void error_const(Parser *p, String *varname) {
    char msg[200];
    snprintf(msg, sizeof msg, "attempt to assign to const variable '%.100s'", varname->data);
    semerror(p, msg);
}

static void check_readonly(Parser *p, ExpDesc *e) {
    FuncState *fs = p->fs;
    String *varname = NULL;
    switch (e->k) {
    case VCONST:
        varname = p->dyd.actvar[e->u.info].name;
        break;
    case VLOCAL: {
        VarDesc *vd = vm_code_localvar(fs, e->u.var.vidx);
        if (vd->kind != VDKREG) varname = vd->name;
        break;
    }
    case VUPVAL: {
        UpvalDesc *up = &fs->f->upvals[e->u.info];
        if (up->kind != VDKREG) varname = up->name;
        break;
    }
    default:
        return;
    }
    if (varname) error_const(p, varname);
}

static void restassign(Parser *p, LHSAssign *lh, int nvars) {
    ExpDesc e;
    check_condition(p, vkisvar(lh->v.k), "syntax error");
    check_readonly(p, &lh->v);
    if (testnext(p, ',')) {
        LHSAssign nv;
        nv.prev = lh;
        suffixedexp(p, &nv.v);
        if (!vkisindexed(nv.v.k)) check_conflict(p, lh, &nv.v);
        enterlevel(p);
        restassign(p, &nv, nvars + 1);
        leavelevel(p);
    } else {
        checknext(p, '=');
        int nexps = explist(p, &e);
        if (nexps != nvars) {
            adjust_assign(p, nvars, nexps, &e);
        } else {
            vm_code_setoneret(p->fs, &e);
            vm_code_storevar(p->fs, &lh->v, &e);
            return;
        }
    }
    init_exp(&e, VNONRELOC, p->fs->freereg - 1);
    vm_code_storevar(p->fs, &lh->v, &e);
}

static int cond(Parser *p) {
    ExpDesc v;
    expr(p, &v);
    if (v.k == VNIL) v.k = VFALSE;
    vm_code_goiftrue(p->fs, &v);
    return v.f;
}

static void gotostat(Parser *p) {
    FuncState *fs = p->fs;
    int line = p->ls.t.line;
    String *name = str_checkname(p);
    LabelDesc *lb = findlabel(p, name);
    if (lb == NULL) {
        newgotoentry(p, name, line, vm_code_jump(fs)); /* forward: resolved at the label */
    } else {
        int lblevel = vm_code_reglevel(fs, lb->nactvar);
        if (vm_code_nvarstack(fs) > lblevel) vm_code_abc(fs, OP_CLOSE, lblevel, 0, 0, 0);
        vm_code_patchlist(fs, vm_code_jump(fs), lb->pc);
    }
}

static void breakstat(Parser *p) {
    int line = p->ls.t.line;
    vm_lex_next(&p->ls);
    newgotoentry(p, vm_string_newc(p->ls.S, "break"), line, vm_code_jump(p->fs));
}

COLD static _Noreturn void error_repeated(Parser *p, String *name, int line) {
    char msg[200];
    snprintf(msg, sizeof msg, "label '%.80s' already defined on line %d", name->data, line);
    semerror(p, msg);
}

static void checkrepeated(Parser *p, String *name) {
    LabelDesc *lb = findlabel(p, name);
    if (lb != NULL) error_repeated(p, name, lb->line);
}

static void labelstat(Parser *p, String *name, int line) {
    checknext(p, TK_DBCOLON);
    while (p->ls.t.kind == ';' || p->ls.t.kind == TK_DBCOLON) statement(p); /* skip no-ops */
    checkrepeated(p, name);
    createlabel(p, name, line, block_follow(p, false));
}

static void whilestat(Parser *p, int line) {
    FuncState *fs = p->fs;
    BlockCnt bl;
    vm_lex_next(&p->ls);
    int whileinit = vm_code_getlabel(fs);
    int condexit = cond(p);
    enterblock(p, fs, &bl, true);
    checknext(p, TK_DO);
    block(p);
    vm_code_patchlist(fs, vm_code_jump(fs), whileinit);
    check_match(p, TK_END, TK_WHILE, line);
    leaveblock(p, fs);
    vm_code_patchtohere(fs, condexit);
}

static void repeatstat(Parser *p, int line) {
    FuncState *fs = p->fs;
    int repeat_init = vm_code_getlabel(fs);
    BlockCnt bl1, bl2;
    enterblock(p, fs, &bl1, true);  /* loop block */
    enterblock(p, fs, &bl2, false); /* scope block: 'until' sees the body's locals */
    vm_lex_next(&p->ls);
    statlist(p);
    check_match(p, TK_UNTIL, TK_REPEAT, line);
    int condexit = cond(p);
    leaveblock(p, fs);
    if (bl2.upval) { /* the repetition must close the body's captured locals too */
        int exit = vm_code_jump(fs);
        vm_code_patchtohere(fs, condexit);
        vm_code_abc(fs, OP_CLOSE, vm_code_reglevel(fs, bl2.nactvar), 0, 0, 0);
        condexit = vm_code_jump(fs);
        vm_code_patchtohere(fs, exit);
    }
    vm_code_patchlist(fs, condexit, repeat_init);
    leaveblock(p, fs);
}

static void exp1(Parser *p) {
    ExpDesc e;
    expr(p, &e);
    vm_code_exp2nextreg(p->fs, &e);
}

static void forbody(Parser *p, int base, int line, int nvars, bool isgen) {
    FuncState *fs = p->fs;
    BlockCnt bl;
    checknext(p, TK_DO);
    int prep = isgen ? vm_code_asbx(fs, OP_TFORPREP, base, 0) : vm_code_asbx(fs, OP_FORPREP, base, 0);
    enterblock(p, fs, &bl, false);
    adjustlocalvars(p, nvars);
    vm_code_reserveregs(fs, nvars);
    block(p);
    leaveblock(p, fs);
    int endfor;
    if (isgen) {
        /* TFORPREP jumps to the TFORCALL; TFORLOOP jumps back to the body */
        vm_setarg_bx(&fs->f->code[prep], (uint32_t)(int32_t)(fs->pc - (prep + 1)));
        vm_code_abc(fs, OP_TFORCALL, base, 0, nvars, 0);
        vm_code_fixline(fs, line);
        endfor = vm_code_asbx(fs, OP_TFORLOOP, base, 0);
    } else {
        endfor = vm_code_asbx(fs, OP_FORLOOP, base, 0);
        /* FORPREP skips the loop: to the instruction after FORLOOP */
        vm_setarg_bx(&fs->f->code[prep], (uint32_t)(int32_t)(endfor + 1 - (prep + 1)));
    }
    vm_setarg_bx(&fs->f->code[endfor], (uint32_t)(int32_t)(prep + 1 - (endfor + 1)));
    vm_code_fixline(fs, line);
}

static void fornum(Parser *p, String *varname, int line) {
    FuncState *fs = p->fs;
    int base = fs->freereg;
    new_localvarliteral(p, "(for state)");
    new_localvarliteral(p, "(for state)");
    new_localvarliteral(p, "(for state)");
    new_localvar(p, varname);
    checknext(p, '=');
    exp1(p);
    checknext(p, ',');
    exp1(p);
    if (testnext(p, ',')) {
        exp1(p);
    } else {
        vm_code_int(fs, fs->freereg, 1);
        vm_code_reserveregs(fs, 1);
    }
    adjustlocalvars(p, 3);
    forbody(p, base, line, 1, false);
}

static void forlist(Parser *p, String *indexname) {
    FuncState *fs = p->fs;
    ExpDesc e;
    int nvars = 5; /* iterator, state, control, closing value, first variable */
    int base = fs->freereg;
    new_localvarliteral(p, "(for state)");
    new_localvarliteral(p, "(for state)");
    new_localvarliteral(p, "(for state)");
    new_localvarliteral(p, "(for state)");
    new_localvar(p, indexname);
    while (testnext(p, ',')) {
        new_localvar(p, str_checkname(p));
        nvars++;
    }
    checknext(p, TK_IN);
    int line = p->ls.t.line;
    adjust_assign(p, 4, explist(p, &e), &e);
    adjustlocalvars(p, 4);
    marktobeclosed(fs);
    vm_code_checkstack(fs, 3); /* TFORCALL copies the iterator and its arguments up */
    forbody(p, base, line, nvars - 4, true);
}

static void forstat(Parser *p, int line) {
    FuncState *fs = p->fs;
    BlockCnt bl;
    enterblock(p, fs, &bl, true);
    vm_lex_next(&p->ls);
    String *varname = str_checkname(p);
    switch (p->ls.t.kind) {
    case '=':
        fornum(p, varname, line);
        break;
    case ',': case TK_IN:
        forlist(p, varname);
        break;
    default:
        syntaxerror(p, "'=' or 'in' expected");
    }
    check_match(p, TK_END, TK_FOR, line);
    leaveblock(p, fs);
}

static void test_then_block(Parser *p, int *escapelist) {
    FuncState *fs = p->fs;
    BlockCnt bl;
    ExpDesc v;
    int jf;
    vm_lex_next(&p->ls); /* IF or ELSEIF */
    expr(p, &v);
    checknext(p, TK_THEN);
    if (p->ls.t.kind == TK_BREAK) { /* 'if x then break': jump out when x is true */
        int line = p->ls.t.line;
        vm_code_goiffalse(fs, &v);
        vm_lex_next(&p->ls);
        enterblock(p, fs, &bl, false);
        newgotoentry(p, vm_string_newc(p->ls.S, "break"), line, v.t);
        while (testnext(p, ';')) {}
        if (block_follow(p, false)) {
            leaveblock(p, fs);
            return;
        }
        jf = vm_code_jump(fs);
    } else {
        vm_code_goiftrue(fs, &v);
        enterblock(p, fs, &bl, false);
        jf = v.f;
    }
    statlist(p);
    leaveblock(p, fs);
    if (p->ls.t.kind == TK_ELSE || p->ls.t.kind == TK_ELSEIF) vm_code_concat(fs, escapelist, vm_code_jump(fs));
    vm_code_patchtohere(fs, jf);
}

static void ifstat(Parser *p, int line) {
    int escapelist = NO_JUMP;
    test_then_block(p, &escapelist);
    while (p->ls.t.kind == TK_ELSEIF) test_then_block(p, &escapelist);
    if (testnext(p, TK_ELSE)) block(p);
    check_match(p, TK_END, TK_IF, line);
    vm_code_patchtohere(p->fs, escapelist);
}

static void localfunc(Parser *p) {
    ExpDesc b;
    FuncState *fs = p->fs;
    int fvar = fs->nactvar;
    String *name = str_checkname(p);
    new_localvar(p, name);
    adjustlocalvars(p, 1);
    body(p, &b, false, p->ls.t.line, name);
    localdebuginfo(fs, fvar)->startpc = fs->pc; /* debug info sees the variable only now */
}

COLD static _Noreturn void error_attribute(Parser *p, String *attr) {
    char msg[160];
    snprintf(msg, sizeof msg, "unknown attribute '%.100s'", attr->data);
    semerror(p, msg);
}

static int getlocalattribute(Parser *p) {
    if (testnext(p, '<')) {
        String *attr = str_checkname(p);
        checknext(p, '>');
        if (eqlit(attr, "const")) return RDKCONST;
        if (eqlit(attr, "close")) return RDKTOCLOSE;
        error_attribute(p, attr);
    }
    return VDKREG;
}

static void checktoclose(Parser *p, int level) {
    if (level != -1) {
        FuncState *fs = p->fs;
        marktobeclosed(fs);
        vm_code_abc(fs, OP_TBC, vm_code_reglevel(fs, level), 0, 0, 0);
    }
}

static void localstat(Parser *p) {
    FuncState *fs = p->fs;
    int toclose = -1;
    int vidx, kind;
    int nvars = 0, nexps;
    ExpDesc e;
    do {
        vidx = new_localvar(p, str_checkname(p));
        kind = getlocalattribute(p);
        vm_code_localvar(fs, vidx)->kind = (uint8_t)kind;
        if (kind == RDKTOCLOSE) {
            if (toclose != -1) semerror(p, "multiple to-be-closed variables in local list");
            toclose = fs->nactvar + nvars;
        }
        nvars++;
    } while (testnext(p, ','));
    if (testnext(p, '=')) {
        nexps = explist(p, &e);
    } else {
        e.k = VVOID;
        e.t = e.f = NO_JUMP;
        nexps = 0;
    }
    VarDesc *var = vm_code_localvar(fs, vidx);
    if (nvars == nexps && var->kind == RDKCONST && vm_code_exp2const(fs, &e, &var->k)) {
        var->kind = RDKCTC; /* a compile-time constant: no register */
        adjustlocalvars(p, nvars - 1);
        fs->nactvar++;
    } else {
        adjust_assign(p, nvars, nexps, &e);
        adjustlocalvars(p, nvars);
    }
    checktoclose(p, toclose);
}

/* Append [sep] and [s] to the function name being built in [buf]. */
static void addname(char *buf, size_t *len, char sep, String *s) {
    size_t n = s->len;
    if (sep && *len < FUNCNAME_MAX) buf[(*len)++] = sep;
    if (*len + n > FUNCNAME_MAX) n = FUNCNAME_MAX - *len;
    memcpy(buf + *len, s->data, n);
    *len += n;
}

/* funcname -> NAME {'.' NAME} [':' NAME]; returns true for a method. */
static bool funcname(Parser *p, ExpDesc *v, char *buf, size_t *len) {
    bool ismethod = false;
    if (p->ls.t.kind == TK_NAME) addname(buf, len, 0, p->ls.t.v.s);
    singlevar(p, v);
    while (p->ls.t.kind == '.') {
        if (vm_lex_lookahead(&p->ls) == TK_NAME) addname(buf, len, '.', p->ls.ahead.v.s);
        fieldsel(p, v);
    }
    if (p->ls.t.kind == ':') {
        ismethod = true;
        if (vm_lex_lookahead(&p->ls) == TK_NAME) addname(buf, len, ':', p->ls.ahead.v.s);
        fieldsel(p, v);
    }
    return ismethod;
}

COLD static void funcstat(Parser *p, int line) {
    ExpDesc v, b;
    char buf[FUNCNAME_MAX + 2];
    size_t len = 0;
    vm_lex_next(&p->ls);
    bool ismethod = funcname(p, &v, buf, &len);
    String *name = vm_string_new(p->ls.S, buf, len);
    body(p, &b, ismethod, line, name);
    check_readonly(p, &v);
    vm_code_storevar(p->fs, &v, &b);
    vm_code_fixline(p->fs, line);
}

static void exprstat(Parser *p) {
    FuncState *fs = p->fs;
    LHSAssign v;
    suffixedexp(p, &v.v);
    if (p->ls.t.kind == '=' || p->ls.t.kind == ',') {
        v.prev = NULL;
        restassign(p, &v, 1);
    } else {
        check_condition(p, v.v.k == VCALL, "syntax error");
        vm_setarg_c(vm_code_getinstr(fs, &v.v), 1); /* a call statement keeps no results */
    }
}

static void retstat(Parser *p) {
    FuncState *fs = p->fs;
    ExpDesc e;
    int nret;
    int first = vm_code_nvarstack(fs);
    if (block_follow(p, true) || p->ls.t.kind == ';') {
        nret = 0;
    } else {
        nret = explist(p, &e);
        if (vm_code_hasmultret(e.k)) {
            vm_code_setmultret(fs, &e);
            if (e.k == VCALL && nret == 1 && !fs->bl->insidetbc) { /* tail call */
                vm_setop(vm_code_getinstr(fs, &e), OP_TAILCALL);
            }
            nret = -1;
        } else if (nret == 1) {
            first = vm_code_exp2anyreg(fs, &e);
        } else {
            vm_code_exp2nextreg(fs, &e);
        }
    }
    vm_code_ret(fs, first, nret);
    testnext(p, ';');
}

static void statement(Parser *p) {
    int line = p->ls.t.line;
    enterlevel(p);
    switch (p->ls.t.kind) {
    case ';':
        vm_lex_next(&p->ls);
        break;
    case TK_IF:
        ifstat(p, line);
        break;
    case TK_WHILE:
        whilestat(p, line);
        break;
    case TK_DO:
        vm_lex_next(&p->ls);
        block(p);
        check_match(p, TK_END, TK_DO, line);
        break;
    case TK_FOR:
        forstat(p, line);
        break;
    case TK_REPEAT:
        repeatstat(p, line);
        break;
    case TK_FUNCTION:
        funcstat(p, line);
        break;
    case TK_LOCAL:
        vm_lex_next(&p->ls);
        if (testnext(p, TK_FUNCTION))
            localfunc(p);
        else
            localstat(p);
        break;
    case TK_DBCOLON:
        vm_lex_next(&p->ls);
        labelstat(p, str_checkname(p), line);
        break;
    case TK_RETURN:
        vm_lex_next(&p->ls);
        retstat(p);
        break;
    case TK_BREAK:
        breakstat(p);
        break;
    case TK_GOTO:
        vm_lex_next(&p->ls);
        gotostat(p);
        break;
    default:
        exprstat(p);
        break;
    }
    p->fs->freereg = vm_code_nvarstack(p->fs);
    leavelevel(p);
}

/* ======================================================================
 * Entry points
 * ====================================================================== */

static Proto *mainfunc(Parser *p) {
    FuncState fs;
    BlockCnt bl;
    Proto *f = newproto(p);
    open_func(p, &fs, f, &bl);
    f->is_vararg = 1; /* the main chunk is always vararg */
    UpvalDesc *env = allocupvalue(p, &fs);
    env->instack = 1;
    env->idx = 0;
    env->kind = VDKREG;
    env->name = p->ls.envname;
    vm_lex_next(&p->ls);
    statlist(p);
    check(p, TK_EOS);
    close_func(p);
    return f;
}

Proto *vm_compile(State *S, const char *src, size_t len, const char *source, CompileError *err) {
    jmp_buf jb;
    Parser p;
    memset(err, 0, sizeof *err);
    memset(&p, 0, sizeof p);
    if (setjmp(jb)) return NULL;
    vm_lex_init(&p.ls, S, src, len, err, &jb);
    if (source && (source[0] == '@' || strcmp(source, "=stdin") == 0))
        vm_lex_skip_first_line(&p.ls); /* a file's "#!" line, as Lua's file loader */
    p.source = vm_string_newc(S, source ? source : "?");
    p.ls.envname = vm_string_new(S, "_ENV", 4);
    return mainfunc(&p);
}

void vm_chunkid(char *buf, size_t bufsize, const char *source, size_t srclen) {
    if (bufsize == 0) return;
    if (bufsize < 16) { /* too small for the decorations: plain truncation */
        size_t n = srclen < bufsize - 1 ? srclen : bufsize - 1;
        memcpy(buf, source, n);
        buf[n] = '\0';
        return;
    }
    if (srclen > 0 && source[0] == '=') { /* "=name": literal */
        size_t n = srclen - 1;
        if (n > bufsize - 1) n = bufsize - 1;
        memcpy(buf, source + 1, n);
        buf[n] = '\0';
    } else if (srclen > 0 && source[0] == '@') { /* "@file": the file name, its end kept */
        size_t n = srclen - 1;
        if (n <= bufsize - 1) {
            memcpy(buf, source + 1, n);
            buf[n] = '\0';
        } else {
            size_t keep = bufsize - 1 - 3;
            memcpy(buf, "...", 3);
            memcpy(buf + 3, source + 1 + n - keep, keep);
            buf[3 + keep] = '\0';
        }
    } else { /* source text: [string "first line..."] */
        const char *nl = memchr(source, '\n', srclen);
        size_t avail = bufsize - (9 + 3 + 2) - 1; /* room left by [string " ... "] */
        size_t n = srclen;
        size_t pos = 0;
        memcpy(buf, "[string \"", 9);
        pos = 9;
        if (n < avail && nl == NULL) {
            memcpy(buf + pos, source, n);
            pos += n;
        } else {
            if (nl != NULL) n = (size_t)(nl - source);
            if (n > avail) n = avail;
            memcpy(buf + pos, source, n);
            pos += n;
            memcpy(buf + pos, "...", 3);
            pos += 3;
        }
        memcpy(buf + pos, "\"]", 3);
    }
}
