/* vm_lib_pattern.c: Lua 5.4 pattern matching and the functions built on it (string.find,
 * string.match, string.gmatch, string.gsub).
 *
 * A pattern is first translated into a program: an array of items, one per pattern item
 * lua5.4's matcher dispatches on ('(', ')', '$' at the end, %b, %f, %1-%9, and a
 * single-character class with its quantifier), ending in PI_END. Each single-character class
 * ('.', a literal, %x, [set]) becomes a literal byte, "any byte", or a 256-bit set: a
 * class is a function of the byte alone, so the set computed once gives the same answer as
 * lua5.4's class test on every byte. The matcher is then lua5.4's backtracking recursive
 * descent, run over the items instead of the pattern text.
 *
 * What must stay exactly lua5.4's, and how:
 * - Which items recurse and which loop is lua5.4's (captures, '?' that matched once, and
 *   '*', '+', '-' that matched once recurse; the rest loops), and every recursive call is
 *   counted against PAT_MAXDEPTH as lua5.4's match() is: "pattern too complex" is raised
 *   for the same patterns on the same subjects. Where a fast path skips calls of do_match
 *   that would fail at their first item (see "Skipping attempts"), it first checks the
 *   depth the first such call would have checked.
 * - Errors in the pattern text are raised when the matcher reaches them, never before:
 *   lua5.4 reads the pattern as it matches, so ("abc"):find("x[") is nil and
 *   ("xbc"):find("x[") an error. Translation stops at the first malformed item and emits
 *   PI_ERROR there; reaching it raises lua5.4's message. Nothing after it is reachable,
 *   since items are only ever reached in order.
 * - Errors that depend on the match (capture indexes, too many captures, unfinished
 *   captures) are checked while matching, as lua5.4 does.
 *
 * Skipping attempts: an attempt at a subject position whose first item (after up to
 * PAT_MAXLEAD captures) is a single-character class that must match once, or a frontier,
 * fails at once, with no effect but restoring the depth and capture level it found, when
 * the byte there is not in the class (there is no frontier there). find, match, gmatch and
 * gsub skip such positions with memchr or a set scan; max_expand and min_expand skip the
 * positions where the item after the repetition cannot match.
 *
 * Pointers into subject and pattern: strings are immutable objects that the collector never
 * moves, and the functions here keep the String * in a local (scanned C stack), so char
 * pointers into them stay valid across vm_call of a gsub replacement function. Stack slots
 * (vm_at) are re-fetched after every call. */
#include "vm_lib_pattern.h"

/* Captures per match, as Lua's LUA_MAXCAPTURES. */
#define PAT_MAXCAPTURES 32
/* Recursion budget of one match attempt: Lua's MAXCCALLS (200) for its matcher. */
#define PAT_MAXDEPTH 200
/* Captures an attempt may open before its first character class and still be skipped by the
 * start scan: well below PAT_MAXCAPTURES and PAT_MAXDEPTH, so no skipped attempt could have
 * raised "too many captures" or "pattern too complex". */
#define PAT_MAXLEAD 16
/* Capture lengths with a special meaning. */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)

#define PAT_ESC '%'
/* Characters that make a pattern more than a plain string (find uses a plain search
 * without them). */
#define PAT_SPECIALS "^$*+?.([%-"

/* Items and sets a program holds on the C stack; longer patterns get GC blocks. Items are
 * at most one per pattern byte plus PI_END, sets at most one per two bytes plus one. */
#define PROG_INLINE_ITEMS 48
#define PROG_INLINE_SETS 8

/* ======================================================================
 * Character sets
 * ====================================================================== */

/* A set of bytes: byte c is in the set when bit (c & 63) of w[c >> 6] is. */
typedef struct CharSet {
    uint64_t w[4];
} CharSet;

/* The classes %a ... %z as sets, indexed by the lower-case letter - 'a' (zero for letters
 * that are not classes). ASCII, as vm_ch_* (the C locale). tests/programs/strings/
 * pattern_fastpaths.lua checks every class on every byte against lua5.4. */
static const CharSet class_sets[26] = {
    ['a' - 'a'] = {{0x0000000000000000ull, 0x07fffffe07fffffeull, 0, 0}},
    ['c' - 'a'] = {{0x00000000ffffffffull, 0x8000000000000000ull, 0, 0}},
    ['d' - 'a'] = {{0x03ff000000000000ull, 0x0000000000000000ull, 0, 0}},
    ['g' - 'a'] = {{0xfffffffe00000000ull, 0x7fffffffffffffffull, 0, 0}},
    ['l' - 'a'] = {{0x0000000000000000ull, 0x07fffffe00000000ull, 0, 0}},
    ['p' - 'a'] = {{0xfc00fffe00000000ull, 0x78000001f8000001ull, 0, 0}},
    ['s' - 'a'] = {{0x0000000100003e00ull, 0x0000000000000000ull, 0, 0}},
    ['u' - 'a'] = {{0x0000000000000000ull, 0x0000000007fffffeull, 0, 0}},
    ['w' - 'a'] = {{0x03ff000000000000ull, 0x07fffffe07fffffeull, 0, 0}},
    ['x' - 'a'] = {{0x03ff000000000000ull, 0x0000007e0000007eull, 0, 0}},
    ['z' - 'a'] = {{0x0000000000000001ull, 0x0000000000000000ull, 0, 0}},
};

static inline bool set_has(const CharSet *cs, unsigned c) {
    return (cs->w[c >> 6] >> (c & 63)) & 1;
}

static inline void set_add(CharSet *cs, unsigned c) {
    cs->w[c >> 6] |= (uint64_t)1 << (c & 63);
}

/* Add the bytes lo..hi (none when lo > hi). */
static void set_add_range(CharSet *cs, unsigned lo, unsigned hi) {
    for (unsigned c = lo; c <= hi; c++) set_add(cs, c);
}

static void set_invert(CharSet *cs) {
    for (int i = 0; i < 4; i++) cs->w[i] = ~cs->w[i];
}

/* The set of the class letter [cl] (%a, %D, ...), or NULL when [cl] is no class letter
 * (then "%[cl]" stands for that byte; lua5.4's match_class). Upper case complements; only
 * letters can be classes. */
static bool class_set(unsigned cl, CharSet *out) {
    if (!vm_ch_isalpha((int)cl)) return false;
    const CharSet *k = &class_sets[(cl | 0x20) - 'a'];
    if ((k->w[0] | k->w[1]) == 0) return false;   /* every class has a byte below 128 */
    bool neg = vm_ch_isupper((int)cl);
    for (int i = 0; i < 4; i++) out->w[i] = neg ? ~k->w[i] : k->w[i];
    return true;
}

/* Add what "%[cl]" stands for to [cs]. */
static void set_add_class(CharSet *cs, unsigned cl) {
    CharSet k;
    if (class_set(cl, &k)) {
        for (int i = 0; i < 4; i++) cs->w[i] |= k.w[i];
    } else {
        set_add(cs, cl);
    }
}

/* ======================================================================
 * Programs
 * ====================================================================== */

typedef enum {
    PI_END,      /* the pattern's end: the attempt succeeds here */
    PI_CHAR,     /* one literal byte [a], with quantifier [rep] */
    PI_ANY,      /* '.', with quantifier [rep] */
    PI_SET,      /* %x or [...]: bytes in sets[set], with quantifier [rep] */
    PI_OPEN,     /* '(' */
    PI_POSCAP,   /* '()' */
    PI_CLOSE,    /* ')' */
    PI_EOS,      /* '$' as the pattern's last byte */
    PI_BALANCE,  /* %b[a][b] */
    PI_FRONTIER, /* %f[...]: the set is sets[set] */
    PI_BACKREF,  /* %1 - %9: [a] is the digit character */
    PI_ERROR     /* malformed pattern here: [a] is a PatError; always the last item */
} PatKind;

/* Malformed patterns, each raised with lua5.4's message when the matcher reaches it. */
typedef enum { PE_ENDS_ESC, PE_NO_BRACKET, PE_BALANCE_ARGS, PE_FRONTIER_BRACKET } PatError;

static const char *const pat_errors[] = {
    [PE_ENDS_ESC] = "malformed pattern (ends with '%')",
    [PE_NO_BRACKET] = "malformed pattern (missing ']')",
    [PE_BALANCE_ARGS] = "malformed pattern (missing arguments to '%b')",
    [PE_FRONTIER_BRACKET] = "missing '[' after '%f' in pattern",
};

typedef struct PatItem {
    uint8_t kind;   /* PatKind */
    uint8_t rep;    /* PI_CHAR/ANY/SET: '*', '+', '-', '?', or 0 for exactly once */
    uint8_t a, b;   /* see PatKind */
    uint32_t set;   /* PI_SET, PI_FRONTIER: index in the program's sets */
} PatItem;

/* A translated pattern. items and sets point at the inline arrays or at GC blocks (pointer
 * free) that the PatProg, living on the scanned C stack, keeps alive; for gmatch, into the
 * iterator's userdata. Never copy a PatProg: its pointers may point into itself. */
typedef struct PatProg {
    const PatItem *items;
    const CharSet *sets;
    int scan;       /* index of the item start positions are scanned for, or -1 */
    PatItem items_in[PROG_INLINE_ITEMS];
    CharSet sets_in[PROG_INLINE_SETS];
} PatProg;

/* Is [it] a single-character class that an attempt must match once to go on (so that an
 * attempt whose first item it is fails at a byte outside it)? */
static inline bool item_needs_char(const PatItem *it) {
    return it->kind >= PI_CHAR && it->kind <= PI_SET && (it->rep == 0 || it->rep == '+');
}

/* End of the single-character class starting at [p] (past "%x", past "[...]", or p + 1),
 * or NULL with *err set when it is malformed (lua5.4's classEnd). */
static const char *class_end(const char *p, const char *p_end, PatError *err) {
    char c = *p++;
    if (c == PAT_ESC) {
        if (p >= p_end) {
            *err = PE_ENDS_ESC;
            return NULL;
        }
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') p++;
        do {   /* the first character is taken as it is, so "[]]" is a set holding ']' */
            if (p >= p_end) {
                *err = PE_NO_BRACKET;
                return NULL;
            }
            c = *p++;
            if (c == PAT_ESC && p < p_end) p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* The set of the bracket class from [p] ('[') to [ec] (its ']'): the union of its items,
 * complemented after '^', which is what lua5.4's matchbracketclass decides byte by byte. */
static void bracket_set(CharSet *cs, const char *p, const char *ec) {
    bool neg = false;
    *cs = (CharSet){{0, 0, 0, 0}};
    p++;
    if (*p == '^') {
        neg = true;
        p++;
    }
    for (; p < ec; p++) {
        if (*p == PAT_ESC) {
            p++;
            set_add_class(cs, (unsigned char)*p);
        } else if (p[1] == '-' && p + 2 < ec) {
            set_add_range(cs, (unsigned char)p[0], (unsigned char)p[2]);
            p += 2;
        } else {
            set_add(cs, (unsigned char)*p);
        }
    }
    if (neg) set_invert(cs);
}

/* Translate the single-character class [p, ep) into [it] (and a set when it needs one). */
static void compile_class(PatItem *it, CharSet *sets, int *nsets, const char *p,
                          const char *ep) {
    switch (*p) {
    case '.': it->kind = PI_ANY; return;
    case PAT_ESC:
        if (class_set((unsigned char)p[1], &sets[*nsets])) {
            it->kind = PI_SET;
            it->set = (uint32_t)(*nsets)++;
        } else {   /* "%." and the like: a literal */
            it->kind = PI_CHAR;
            it->a = (uint8_t)p[1];
        }
        return;
    case '[':
        it->kind = PI_SET;
        it->set = (uint32_t)*nsets;
        bracket_set(&sets[(*nsets)++], p, ep - 1);
        return;
    default:
        it->kind = PI_CHAR;
        it->a = (uint8_t)*p;
        return;
    }
}

/* Translate the pattern [p, p_end) (its anchor already skipped; *p_end is the String's
 * '\0') into [items] and [sets], which have room for p_end - p + 1 items and
 * (p_end - p) / 2 + 1 sets. Returns the number of items. Never raises: a malformed item
 * becomes PI_ERROR (see the file comment). The walk is lua5.4's do_match dispatch. */
static int compile(const char *p, const char *p_end, PatItem *items, CharSet *sets) {
    int n = 0, nsets = 0;
    PatError err;
    while (p < p_end) {
        PatItem *it = &items[n++];
        *it = (PatItem){0, 0, 0, 0, 0};
        switch (*p) {
        case '(':
            if (p + 1 < p_end && p[1] == ')') {
                it->kind = PI_POSCAP;
                p += 2;
            } else {
                it->kind = PI_OPEN;
                p++;
            }
            continue;
        case ')':
            it->kind = PI_CLOSE;
            p++;
            continue;
        case '$':
            if (p + 1 == p_end) {
                it->kind = PI_EOS;
                p++;
                continue;
            }
            break;
        case PAT_ESC:
            if (p + 1 >= p_end) break;   /* class_end reports it */
            if (p[1] == 'b') {
                if (p + 2 >= p_end - 1) {
                    err = PE_BALANCE_ARGS;
                    goto malformed;
                }
                it->kind = PI_BALANCE;
                it->a = (uint8_t)p[2];
                it->b = (uint8_t)p[3];
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                p += 2;
                const char *ep = (*p == '[') ? class_end(p, p_end, &err) : NULL;
                if (*p != '[') err = PE_FRONTIER_BRACKET;
                if (ep == NULL) goto malformed;
                it->kind = PI_FRONTIER;
                it->set = (uint32_t)nsets;
                bracket_set(&sets[nsets++], p, ep - 1);
                p = ep;
                continue;
            }
            if (vm_ch_isdigit((unsigned char)p[1])) {
                it->kind = PI_BACKREF;
                it->a = (uint8_t)p[1];
                p += 2;
                continue;
            }
            break;
        default: break;
        }
        /* a single-character class, maybe followed by a quantifier */
        const char *ep = class_end(p, p_end, &err);
        if (ep == NULL) goto malformed;
        compile_class(it, sets, &nsets, p, ep);
        if (*ep == '*' || *ep == '+' || *ep == '-' || *ep == '?') {   /* *p_end is '\0' */
            it->rep = (uint8_t)*ep;
            ep++;
        }
        p = ep;
        continue;
    malformed:
        it->kind = PI_ERROR;
        it->a = (uint8_t)err;
        return n;
    }
    items[n++] = (PatItem){PI_END, 0, 0, 0, 0};
    return n;
}

/* The item start positions can be scanned for (see "Skipping attempts"), or -1: a class
 * that must match once, or a frontier (an attempt fails at once where there is none). */
static int scan_item(const PatItem *items) {
    int i = 0;
    while (i < PAT_MAXLEAD && (items[i].kind == PI_OPEN || items[i].kind == PI_POSCAP)) i++;
    const PatItem *it = &items[i];
    return ((item_needs_char(it) && it->kind != PI_ANY) || it->kind == PI_FRONTIER) ? i : -1;
}

/* Translate [p, p_end) into [prog], on the stack when it fits. */
static void prog_init(State *S, PatProg *prog, const char *p, const char *p_end) {
    size_t len = (size_t)(p_end - p);
    PatItem *items = prog->items_in;
    CharSet *sets = prog->sets_in;
    if (len + 1 > PROG_INLINE_ITEMS) items = vm_alloc_leaf(S, (len + 1) * sizeof(PatItem));
    if (len / 2 + 1 > PROG_INLINE_SETS) sets = vm_alloc_leaf(S, (len / 2 + 1) * sizeof(CharSet));
    compile(p, p_end, items, sets);
    prog->items = items;
    prog->sets = sets;
    prog->scan = scan_item(items);
}

/* ======================================================================
 * The matcher
 * ====================================================================== */

typedef struct MatchState {
    State *S;
    const char *src_init;   /* subject start (inside a String kept alive by the caller) */
    const char *src_end;    /* subject end */
    const CharSet *sets;    /* the program's sets */
    int depth;              /* recursion budget left */
    int level;              /* captures opened or closed so far */
    struct {
        const char *init;
        ptrdiff_t len;      /* length, or CAP_UNFINISHED / CAP_POSITION */
    } capture[PAT_MAXCAPTURES];
} MatchState;

static void match_init(MatchState *ms, State *S, String *src, const PatProg *prog) {
    ms->S = S;
    ms->src_init = src->data;
    ms->src_end = src->data + src->len;
    ms->sets = prog->sets;
    ms->level = 0;
    ms->depth = PAT_MAXDEPTH;
}

/* Reset before each attempt at a new subject position. */
static void match_reset(MatchState *ms) {
    ms->level = 0;
    ms->depth = PAT_MAXDEPTH;
}

/* What the first recursive call would check (see "Skipping attempts"). */
static void check_depth(MatchState *ms) {
    if (ms->depth == 0) vm_error(ms->S, "pattern too complex");
}

/* Does the single-character item [it] (PI_CHAR, ANY or SET) match the byte at [s]? False at
 * the subject end. */
static inline bool single_match(const MatchState *ms, const char *s, const PatItem *it) {
    if (s >= ms->src_end) return false;
    unsigned c = (unsigned char)*s;
    switch (it->kind) {
    case PI_CHAR: return c == it->a;
    case PI_ANY: return true;
    default: return set_has(&ms->sets[it->set], c);
    }
}

/* Length of the longest run of bytes at [s] that the single-character item [it] matches. */
static size_t single_run(const MatchState *ms, const char *s, const PatItem *it) {
    const char *q = s, *end = ms->src_end;
    switch (it->kind) {
    case PI_ANY: return (size_t)(end - s);
    case PI_CHAR: {
        char c = (char)it->a;
        while (q < end && *q == c) q++;
        break;
    }
    default: {
        const CharSet *cs = &ms->sets[it->set];
        while (q < end && set_has(cs, (unsigned char)*q)) q++;
        break;
    }
    }
    return (size_t)(q - s);
}

static const char *do_match(MatchState *ms, const char *s, const PatItem *it);

/* %bxy: [it] holds x and y. */
static const char *match_balance(MatchState *ms, const char *s, const PatItem *it) {
    if (s >= ms->src_end || (unsigned char)*s != it->a) return NULL;
    char open = (char)it->a, close = (char)it->b;
    int depth = 1;
    while (++s < ms->src_end) {
        if (*s == close) {
            if (--depth == 0) return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

/* The item that decides at once whether an attempt at the rest [nx] of a pattern fails:
 * nx itself when it is a class that must match, or such a class after up to PAT_MAXLEAD
 * captures opening or closing (they test nothing in the subject); else NULL. */
static const PatItem *rest_guard(const PatItem *nx) {
    const PatItem *g = nx;
    while (g - nx < PAT_MAXLEAD && (g->kind == PI_OPEN || g->kind == PI_POSCAP || g->kind == PI_CLOSE))
        g++;
    return item_needs_char(g) ? g : NULL;
}

/* Greedy repetition (* and +) of [it] from [s]: the longest run first, then shorter ones.
 * The rest of the pattern starts at it + 1. Attempts at the rest that would fail at once are
 * skipped (see "Skipping attempts"): when the rest is the end or '$', and where the rest's
 * guard (rest_guard) does not match. When the guard comes after captures, the first attempt
 * is made in full: what the captures check (their number, an open one to close, the depth)
 * does not depend on the position, so it raises whatever the skipped attempts would. */
static const char *max_expand(MatchState *ms, const char *s, const PatItem *it) {
    ptrdiff_t i = (ptrdiff_t)single_run(ms, s, it);
    const PatItem *nx = it + 1;
    if (nx->kind == PI_END) {
        check_depth(ms);
        return s + i;
    }
    if (nx->kind == PI_EOS) {
        check_depth(ms);
        return (s + i == ms->src_end) ? s + i : NULL;
    }
    const PatItem *g = rest_guard(nx);
    if (g != NULL) {
        if (g == nx) {
            check_depth(ms);
        } else {
            const char *r = do_match(ms, s + i, nx);
            if (r != NULL) return r;
            i--;
        }
        for (; i >= 0; i--) {
            if (!single_match(ms, s + i, g)) continue;
            const char *r = do_match(ms, s + i, nx);
            if (r != NULL) return r;
        }
        return NULL;
    }
    for (; i >= 0; i--) {
        const char *r = do_match(ms, s + i, nx);
        if (r != NULL) return r;
    }
    return NULL;
}

/* Lazy repetition (-): the shortest run first (skipping as max_expand does). */
static const char *min_expand(MatchState *ms, const char *s, const PatItem *it) {
    const PatItem *nx = it + 1;
    const PatItem *g = rest_guard(nx);
    if (g != NULL && g == nx) check_depth(ms);
    bool first = (g != NULL && g != nx);   /* the first attempt in full (see max_expand) */
    for (;;) {
        if (g == NULL || first || single_match(ms, s, g)) {
            const char *r = do_match(ms, s, nx);
            if (r != NULL) return r;
        }
        first = false;
        if (!single_match(ms, s, it)) return NULL;
        s++;
    }
}

static const char *start_capture(MatchState *ms, const char *s, const PatItem *it,
                                 ptrdiff_t what) {
    if (ms->level >= PAT_MAXCAPTURES) vm_error(ms->S, "too many captures");
    ms->capture[ms->level].init = s;
    ms->capture[ms->level].len = what;
    ms->level++;
    const char *r = do_match(ms, s, it);
    if (r == NULL) ms->level--;
    return r;
}

static const char *end_capture(MatchState *ms, const char *s, const PatItem *it) {
    int l = ms->level - 1;
    while (l >= 0 && ms->capture[l].len != CAP_UNFINISHED) l--;
    if (l < 0) vm_error(ms->S, "invalid pattern capture");
    ms->capture[l].len = s - ms->capture[l].init;
    const char *r = do_match(ms, s, it);
    if (r == NULL) ms->capture[l].len = CAP_UNFINISHED;
    return r;
}

/* Back-reference %1-%9: [digit] is the character after '%'. */
static const char *match_backref(MatchState *ms, const char *s, int digit) {
    int l = digit - '1';
    if (l < 0 || l >= ms->level || ms->capture[l].len == CAP_UNFINISHED)
        vm_error(ms->S, "invalid capture index %%%d", l + 1);
    size_t len = (size_t)ms->capture[l].len;
    if ((size_t)(ms->src_end - s) >= len && memcmp(ms->capture[l].init, s, len) == 0)
        return s + len;
    return NULL;
}

/* %f[set]: the frontier where the previous byte is outside the set and the current one
 * inside ('\0' stands for both ends of the subject, as lua5.4 reads its terminators). */
static bool match_frontier(const MatchState *ms, const char *s, const PatItem *it) {
    const CharSet *cs = &ms->sets[it->set];
    unsigned prev = (s == ms->src_init) ? 0 : (unsigned char)s[-1];
    unsigned cur = (s < ms->src_end) ? (unsigned char)*s : 0;
    return !set_has(cs, prev) && set_has(cs, cur);
}

/* Match the items from [it] against the subject at [s]: end of the match, or NULL. Items
 * without a quantifier loop; captures, quantifiers and '?' recurse (see the file comment). */
static const char *do_match(MatchState *ms, const char *s, const PatItem *it) {
    if (ms->depth-- == 0) vm_error(ms->S, "pattern too complex");
    for (;;) {
        switch ((PatKind)it->kind) {
        case PI_END: goto done;
        case PI_OPEN: s = start_capture(ms, s, it + 1, CAP_UNFINISHED); goto done;
        case PI_POSCAP: s = start_capture(ms, s, it + 1, CAP_POSITION); goto done;
        case PI_CLOSE: s = end_capture(ms, s, it + 1); goto done;
        case PI_EOS:
            if (s != ms->src_end) s = NULL;
            goto done;
        case PI_BALANCE:
            s = match_balance(ms, s, it);
            if (s == NULL) goto done;
            it++;
            continue;
        case PI_FRONTIER:
            if (!match_frontier(ms, s, it)) {
                s = NULL;
                goto done;
            }
            it++;
            continue;
        case PI_BACKREF:
            s = match_backref(ms, s, it->a);
            if (s == NULL) goto done;
            it++;
            continue;
        case PI_ERROR: vm_error(ms->S, "%s", pat_errors[it->a]);
        case PI_CHAR:
        case PI_ANY:
        case PI_SET: break;
        }
        /* a single-character class, maybe followed by a quantifier */
        if (!single_match(ms, s, it)) {
            if (it->rep == '*' || it->rep == '?' || it->rep == '-') {   /* zero are fine */
                it++;
                continue;
            }
            s = NULL;
            goto done;
        }
        switch (it->rep) {
        case '?': {
            const char *r = do_match(ms, s + 1, it + 1);
            if (r != NULL) {
                s = r;
                goto done;
            }
            it++;
            continue;
        }
        case '+': s = max_expand(ms, s + 1, it); goto done;
        case '*': s = max_expand(ms, s, it); goto done;
        case '-': s = min_expand(ms, s, it); goto done;
        default:
            s++;
            it++;
            continue;
        }
    }
done:
    ms->depth++;
    return s;
}

/* First position from [s] on where an attempt can succeed, or NULL when none can (see
 * "Skipping attempts"). Only a frontier can be found at the subject end (when its set
 * holds '\0'). */
static const char *next_start(const MatchState *ms, const PatProg *prog, const char *s) {
    if (prog->scan < 0) return s;
    const PatItem *first = &prog->items[prog->scan];
    const char *end = ms->src_end;
    if (first->kind == PI_CHAR) return memchr(s, first->a, (size_t)(end - s));
    const CharSet *cs = &ms->sets[first->set];
    if (first->kind == PI_FRONTIER) {
        bool prev_in = set_has(cs, s == ms->src_init ? 0 : (unsigned char)s[-1]);
        for (; s < end; s++) {
            bool in = set_has(cs, (unsigned char)*s);
            if (in && !prev_in) return s;
            prev_in = in;
        }
        return (!prev_in && set_has(cs, 0)) ? s : NULL;
    }
    for (; s < end; s++)
        if (set_has(cs, (unsigned char)*s)) return s;
    return NULL;
}

/* ======================================================================
 * Captures to values
 * ====================================================================== */

/* Capture [i] of the match [s, e): its text, or its position (returns CAP_POSITION and sets
 * *pos). With no captures, index 0 is the whole match. */
static ptrdiff_t get_capture(MatchState *ms, int i, const char *s, const char *e,
                             const char **cap, vm_Integer *pos) {
    if (i >= ms->level) {
        if (i != 0) vm_error(ms->S, "invalid capture index %%%d", i + 1);
        *cap = s;
        return e - s;
    }
    ptrdiff_t len = ms->capture[i].len;
    if (len == CAP_UNFINISHED) vm_error(ms->S, "unfinished capture");
    *cap = ms->capture[i].init;
    if (len == CAP_POSITION) *pos = ms->capture[i].init - ms->src_init + 1;
    return len;
}

static void push_capture(MatchState *ms, int i, const char *s, const char *e) {
    const char *cap;
    vm_Integer pos = 0;
    ptrdiff_t len = get_capture(ms, i, s, e, &cap, &pos);
    if (len == CAP_POSITION)
        vm_pushint(ms->S, pos);
    else
        vm_pushstr(ms->S, cap, (size_t)len);
}

/* Push every capture (or the whole match [s, e) when there are none and [s] is not NULL);
 * returns how many were pushed. */
static int push_captures(MatchState *ms, const char *s, const char *e) {
    int n = (ms->level == 0 && s != NULL) ? 1 : ms->level;
    vm_checkstack(ms->S, n);
    for (int i = 0; i < n; i++) push_capture(ms, i, s, e);
    return n;
}

/* ======================================================================
 * find and match
 * ====================================================================== */

static bool has_specials(const String *p) {
    for (size_t i = 0; i < p->len; i++)
        if (p->data[i] != '\0' && strchr(PAT_SPECIALS, p->data[i]) != NULL) return true;
    return false;
}

/* Plain substring search: first occurrence of [needle] in [hay], or NULL. */
static const char *plain_find(const char *hay, size_t lh, const char *needle, size_t ln) {
    if (ln == 0) return hay;
    if (ln > lh) return NULL;
    const char *last = hay + (lh - ln);
    for (const char *p = hay; p <= last; p++) {
        p = memchr(p, needle[0], (size_t)(last - p) + 1);
        if (p == NULL) return NULL;
        if (memcmp(p + 1, needle + 1, ln - 1) == 0) return p;
    }
    return NULL;
}

/* Start offset (0-based) of argument [arg] for a subject of [len] bytes (lua5.4's
 * posrelatI, minus one); len + 1 and beyond mean "after the end". */
static size_t init_offset(State *S, int arg, size_t len) {
    vm_Integer ipos = vm_opt_integer(S, arg, 1);
    if (ipos > 0) return (size_t)ipos - 1;
    if (ipos == 0 || ipos < -(vm_Integer)len) return 0;
    return len + (size_t)ipos;
}

static int find_aux(State *S, bool find) {
    String *s = vm_check_string(S, 1);
    String *p = vm_check_string(S, 2);
    size_t init = init_offset(S, 3, s->len);
    if (init > s->len) {   /* starts after the end: nothing can match */
        vm_pushnil(S);
        return 1;
    }
    /* Without specials a pattern matches only itself: a plain search gives find's answer,
     * and match's is the pattern (the empty pattern matches everywhere, as is) unless it
     * holds a ')', which the matcher rejects ("invalid pattern capture"). */
    bool plain = find ? (!vm_isfalsy(vm_at(S, 4)) || !has_specials(p))
                      : (!has_specials(p) && memchr(p->data, ')', p->len) == NULL);
    if (plain) {
        const char *r = plain_find(s->data + init, s->len - init, p->data, p->len);
        if (r == NULL) {
            vm_pushnil(S);
            return 1;
        }
        if (!find) {
            vm_push(S, vm_str(p));
            return 1;
        }
        vm_pushint(S, r - s->data + 1);
        vm_pushint(S, (vm_Integer)(r - s->data + p->len));
        return 2;
    }
    const char *pat = p->data;
    bool anchor = (*pat == '^');
    if (anchor) pat++;
    PatProg prog;
    prog_init(S, &prog, pat, p->data + p->len);
    MatchState ms;
    match_init(&ms, S, s, &prog);
    const char *s1 = s->data + init;
    for (;;) {
        if (!anchor && (s1 = next_start(&ms, &prog, s1)) == NULL) break;
        match_reset(&ms);
        const char *e = do_match(&ms, s1, prog.items);
        if (e != NULL) {
            if (!find) return push_captures(&ms, s1, e);
            vm_pushint(S, s1 - s->data + 1);
            vm_pushint(S, e - s->data);
            return push_captures(&ms, NULL, NULL) + 2;
        }
        if (anchor || s1 >= ms.src_end) break;
        s1++;
    }
    vm_pushnil(S);
    return 1;
}

int vm_str_find(State *S) { return find_aux(S, true); }
int vm_str_match(State *S) { return find_aux(S, false); }

/* ======================================================================
 * gmatch: the iterator is a C closure with upvalues
 *   1 subject (string), 2 pattern (string), 3 next start offset (integer),
 *   4 end offset of the last match (integer, -1 before the first match; an empty match
 *     there is skipped, as Lua 5.4 does),
 *   5 the translated pattern (userdata, pointer-free: a GmatchProg).
 * The pattern is translated once, when gmatch is called (translation never raises, so
 * errors still come from the first call of the iterator that reaches them).
 * ====================================================================== */

typedef struct GmatchProg {
    int32_t nitems, nsets, scan, unused;
    /* then nitems PatItems and nsets CharSets (aligned: the header is 16 bytes and an
     * item 8) */
} GmatchProg;

static int gmatch_step(State *S) {
    String *s = vm_upvalue(S, 1)->u.s;
    vm_Integer start = vm_upvalue(S, 3)->u.i;
    vm_Integer last = vm_upvalue(S, 4)->u.i;
    Userdata *u = vm_upvalue(S, 5)->u.u;
    const GmatchProg *g = u->data;
    PatProg prog;   /* a view of the userdata: only items, sets and scan are set */
    prog.items = (const PatItem *)(g + 1);
    prog.sets = (const CharSet *)(prog.items + g->nitems);
    prog.scan = g->scan;
    MatchState ms;
    match_init(&ms, S, s, &prog);
    const char *lastmatch = last < 0 ? NULL : s->data + last;
    for (const char *src = s->data + start; src <= ms.src_end; src++) {
        if ((src = next_start(&ms, &prog, src)) == NULL) break;
        match_reset(&ms);
        const char *e = do_match(&ms, src, prog.items);
        if (e != NULL && e != lastmatch) {
            vm_upvalue(S, 3)->u.i = e - s->data;
            vm_upvalue(S, 4)->u.i = e - s->data;
            return push_captures(&ms, src, e);
        }
    }
    vm_upvalue(S, 3)->u.i = (vm_Integer)s->len + 1;   /* exhausted: later calls find nothing */
    return 0;
}

int vm_str_gmatch(State *S) {
    String *s = vm_check_string(S, 1);
    String *p = vm_check_string(S, 2);
    size_t init = init_offset(S, 3, s->len);
    if (init > s->len) init = s->len + 1;   /* after the end: no match at all */
    /* translate on the stack, then keep a copy of exactly what it produced */
    PatProg prog;
    prog_init(S, &prog, p->data, p->data + p->len);
    int32_t nitems = 0, nsets = 0;
    while (prog.items[nitems].kind != PI_END && prog.items[nitems].kind != PI_ERROR) {
        const PatItem *it = &prog.items[nitems];
        if (it->kind == PI_SET || it->kind == PI_FRONTIER) nsets = (int32_t)it->set + 1;
        nitems++;
    }
    nitems++;
    size_t itembytes = (size_t)nitems * sizeof(PatItem);
    Userdata *u = vm_newuserdata(S, sizeof(GmatchProg) + itembytes +
                                         (size_t)nsets * sizeof(CharSet), NULL, false);
    GmatchProg *g = u->data;
    g->nitems = nitems;
    g->nsets = nsets;
    g->scan = prog.scan;
    memcpy(g + 1, prog.items, (size_t)nitems * sizeof(PatItem));
    memcpy((char *)(g + 1) + itembytes, prog.sets, (size_t)nsets * sizeof(CharSet));
    CClosure *cl = vm_newcfunction(S, gmatch_step, "gmatch_step", 5);
    cl->upvals[0] = vm_str(s);
    cl->upvals[1] = vm_str(p);
    cl->upvals[2] = vm_int((vm_Integer)init);
    cl->upvals[3] = vm_int(-1);
    cl->upvals[4] = vm_userdata(u);
    vm_push(S, vm_cfunc(cl));
    return 1;
}

/* ======================================================================
 * gsub
 * ====================================================================== */

/* Append the replacement string [r] for the match [s, e), expanding %0-%9 and %%. */
static void add_template(MatchState *ms, StrBuf *B, String *r, const char *s, const char *e) {
    const char *t = r->data, *tend = r->data + r->len;
    while (t < tend) {
        const char *q = memchr(t, PAT_ESC, (size_t)(tend - t));
        if (q == NULL) {
            vm_strbuf_addlstr(B, t, (size_t)(tend - t));
            return;
        }
        vm_strbuf_addlstr(B, t, (size_t)(q - t));
        q++;   /* *q may be the terminating '\0' of r: then it is an invalid escape */
        if (*q == PAT_ESC && q < tend) {
            vm_strbuf_addchar(B, PAT_ESC);
        } else if (*q == '0' && q < tend) {
            vm_strbuf_addlstr(B, s, (size_t)(e - s));
        } else if (vm_ch_isdigit((unsigned char)*q) && q < tend) {
            const char *cap;
            vm_Integer pos = 0;
            ptrdiff_t len = get_capture(ms, *q - '1', s, e, &cap, &pos);
            if (len == CAP_POSITION) {
                char buf[VM_NUMBUF];
                Value v = vm_int(pos);
                vm_strbuf_addlstr(B, buf, (size_t)vm_number2str(&v, buf));
            } else {
                vm_strbuf_addlstr(B, cap, (size_t)len);
            }
        } else {
            vm_error(ms->S, "invalid use of '%c' in replacement string", PAT_ESC);
        }
        t = q + 1;
    }
}

/* Append the replacement for the match [s, e) when the replacement (argument 3) is a table
 * or a function: its value, or the match itself when that is false or nil. Returns whether
 * the result differs from the subject (lua5.4's add_value: false or nil keep the match). */
static bool add_lookup(MatchState *ms, StrBuf *B, const char *s, const char *e, bool is_func) {
    State *S = ms->S;
    if (is_func) {
        vm_push(S, *vm_at(S, 3));
        int n = push_captures(ms, s, e);
        vm_call(S, n, 1);
    } else {
        push_capture(ms, 0, s, e);
        Value key = *vm_at(S, vm_gettop(S));
        Value tbl = *vm_at(S, 3);
        Value v = vm_gettable(S, &tbl, &key);
        *vm_at(S, vm_gettop(S)) = v;
    }
    Value *v = vm_at(S, vm_gettop(S));
    bool changed = true;
    if (vm_isfalsy(v)) {
        vm_strbuf_addlstr(B, s, (size_t)(e - s));
        changed = false;
    } else if (vm_isstr(v)) {
        vm_strbuf_addlstr(B, v->u.s->data, v->u.s->len);
    } else if (vm_isnumber(v)) {
        char buf[VM_NUMBUF];
        vm_strbuf_addlstr(B, buf, (size_t)vm_number2str(v, buf));
    } else {
        vm_error(S, "invalid replacement value (a %s)", vm_typename(v));
    }
    vm_pop(S, 1);
    return changed;
}

int vm_str_gsub(State *S) {
    String *src = vm_check_string(S, 1);
    String *p = vm_check_string(S, 2);
    int tt = (int)vm_at(S, 3)->tt;
    vm_Integer max_n = vm_opt_integer(S, 4, (vm_Integer)src->len + 1);
    String *templ = NULL;
    if (tt == VT_INT || tt == VT_FLOAT || tt == VT_STR)
        templ = vm_check_string(S, 3);
    else if (tt != VT_TABLE && tt != VT_LFUNC && tt != VT_CFUNC)
        vm_type_error(S, 3, "string/function/table");
    const char *pat = p->data;
    bool anchor = (*pat == '^');
    if (anchor) pat++;
    PatProg prog;
    prog_init(S, &prog, pat, p->data + p->len);
    MatchState ms;
    match_init(&ms, S, src, &prog);
    StrBuf B;
    vm_strbuf_init(S, &B);
    const char *s = src->data, *lastmatch = NULL;
    vm_Integer n = 0;
    bool changed = false;
    /* lua5.4's loop makes one attempt per iteration and copies a byte after a failed one;
     * here the positions whose attempts fail at their first item are copied in one go
     * (next_start). Only successful attempts count against max_n. */
    while (n < max_n) {
        const char *q = anchor ? s : next_start(&ms, &prog, s);
        if (q == NULL) break;
        vm_strbuf_addlstr(&B, s, (size_t)(q - s));
        s = q;
        match_reset(&ms);
        const char *e = do_match(&ms, s, prog.items);
        if (e != NULL && e != lastmatch) {
            n++;
            if (templ != NULL) {
                add_template(&ms, &B, templ, s, e);
                changed = true;
            } else {
                changed = add_lookup(&ms, &B, s, e, tt != VT_TABLE) || changed;
            }
            s = lastmatch = e;
        } else if (s < ms.src_end) {
            vm_strbuf_addchar(&B, *s++);
        } else {
            break;
        }
        if (anchor) break;
    }
    if (changed) {
        vm_strbuf_addlstr(&B, s, (size_t)(ms.src_end - s));
        vm_strbuf_push(&B);
    } else {
        vm_push(S, vm_str(src));   /* nothing changed: the subject itself, as lua5.4 */
    }
    vm_pushint(S, n);
    return 2;
}
