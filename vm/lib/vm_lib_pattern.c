/* vm_lib_pattern.c: Lua 5.4 pattern matching and the functions built on it (string.find,
 * string.match, string.gmatch, string.gsub).
 *
 * The matcher is a backtracking recursive descent over the pattern, as Lua's. Its recursion
 * structure (which pattern items recurse and which loop) is kept the same as lua5.4's on
 * purpose: "pattern too complex" is raised at the same depth, so the same patterns fail.
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
/* Capture lengths with a special meaning. */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)

#define PAT_ESC '%'
/* Characters that make a pattern more than a plain string (find uses a plain search
 * without them). */
#define PAT_SPECIALS "^$*+?.([%-"

typedef struct MatchState {
    State *S;
    const char *src_init;   /* subject start (inside a String kept alive by the caller) */
    const char *src_end;    /* subject end */
    const char *p_end;      /* pattern end; *p_end is the String's '\0' terminator */
    int depth;              /* recursion budget left */
    int level;              /* captures opened or closed so far */
    struct {
        const char *init;
        ptrdiff_t len;      /* length, or CAP_UNFINISHED / CAP_POSITION */
    } capture[PAT_MAXCAPTURES];
} MatchState;

static void match_init(MatchState *ms, State *S, String *src, String *pat) {
    ms->S = S;
    ms->src_init = src->data;
    ms->src_end = src->data + src->len;
    ms->p_end = pat->data + pat->len;
    ms->level = 0;
    ms->depth = PAT_MAXDEPTH;
}

/* Reset before each attempt at a new subject position. */
static void match_reset(MatchState *ms) {
    ms->level = 0;
    ms->depth = PAT_MAXDEPTH;
}

/* ======================================================================
 * Single characters and classes
 * ====================================================================== */

/* Does [c] belong to the class letter [cl] (%a, %D, ...)? Any other [cl] stands for
 * itself. */
static bool class_matches(int c, int cl) {
    bool res;
    switch (cl | 0x20) {   /* lower case; only letters land on a class letter */
    case 'a': res = vm_ch_isalpha(c); break;
    case 'c': res = vm_ch_iscntrl(c); break;
    case 'd': res = vm_ch_isdigit(c); break;
    case 'g': res = vm_ch_isgraph(c); break;
    case 'l': res = vm_ch_islower(c); break;
    case 'p': res = vm_ch_ispunct(c); break;
    case 's': res = vm_ch_isspace(c); break;
    case 'u': res = vm_ch_isupper(c); break;
    case 'w': res = vm_ch_isalnum(c); break;
    case 'x': res = vm_ch_isxdigit(c); break;
    case 'z': res = (c == 0); break;   /* deprecated in the manual, still accepted by lua5.4 */
    default: return cl == c;
    }
    return vm_ch_isupper(cl) ? !res : res;
}

/* End of the single-character class starting at [p]: past "%x", past "[...]", or p + 1. */
static const char *class_end(MatchState *ms, const char *p) {
    char c = *p++;
    if (c == PAT_ESC) {
        if (p >= ms->p_end) vm_error(ms->S, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') p++;
        do {   /* the first character is taken as it is, so "[]]" is a set holding ']' */
            if (p >= ms->p_end) vm_error(ms->S, "malformed pattern (missing ']')");
            c = *p++;
            if (c == PAT_ESC && p < ms->p_end) p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* Does [c] belong to the set from [p] ('[') to [ec] (its ']')? */
static bool match_bracket(int c, const char *p, const char *ec) {
    bool neg = false;
    p++;
    if (*p == '^') {
        neg = true;
        p++;
    }
    for (; p < ec; p++) {
        if (*p == PAT_ESC) {
            p++;
            if (class_matches(c, (unsigned char)*p)) return !neg;
        } else if (p[1] == '-' && p + 2 < ec) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return !neg;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return !neg;
        }
    }
    return neg;
}

/* Does the subject character at [s] match the class [p, ep)? False at the subject end. */
static bool single_match(MatchState *ms, const char *s, const char *p, const char *ep) {
    if (s >= ms->src_end) return false;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return true;
    case PAT_ESC: return class_matches(c, (unsigned char)p[1]);
    case '[': return match_bracket(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

/* ======================================================================
 * The matcher
 * ====================================================================== */

static const char *do_match(MatchState *ms, const char *s, const char *p);

/* %bxy at [p] (pointing at x). */
static const char *match_balance(MatchState *ms, const char *s, const char *p) {
    if (p >= ms->p_end - 1) vm_error(ms->S, "malformed pattern (missing arguments to '%%b')");
    if (s >= ms->src_end || *s != *p) return NULL;
    char open = p[0], close = p[1];
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

/* Greedy repetition (* and +): the longest run first, then shorter ones. */
static const char *max_expand(MatchState *ms, const char *s, const char *p, const char *ep) {
    ptrdiff_t i = 0;
    while (single_match(ms, s + i, p, ep)) i++;
    for (; i >= 0; i--) {
        const char *r = do_match(ms, s + i, ep + 1);
        if (r != NULL) return r;
    }
    return NULL;
}

/* Lazy repetition (-): the shortest run first. */
static const char *min_expand(MatchState *ms, const char *s, const char *p, const char *ep) {
    for (;;) {
        const char *r = do_match(ms, s, ep + 1);
        if (r != NULL) return r;
        if (!single_match(ms, s, p, ep)) return NULL;
        s++;
    }
}

static const char *start_capture(MatchState *ms, const char *s, const char *p, ptrdiff_t what) {
    if (ms->level >= PAT_MAXCAPTURES) vm_error(ms->S, "too many captures");
    ms->capture[ms->level].init = s;
    ms->capture[ms->level].len = what;
    ms->level++;
    const char *r = do_match(ms, s, p);
    if (r == NULL) ms->level--;
    return r;
}

static const char *end_capture(MatchState *ms, const char *s, const char *p) {
    int l = ms->level - 1;
    while (l >= 0 && ms->capture[l].len != CAP_UNFINISHED) l--;
    if (l < 0) vm_error(ms->S, "invalid pattern capture");
    ms->capture[l].len = s - ms->capture[l].init;
    const char *r = do_match(ms, s, p);
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

/* %f[set] at [p] (pointing at 'f'): the frontier where the previous character is outside
 * the set and the current one inside ('\0' stands for both ends of the subject). Returns
 * the pattern position after the set, or NULL when there is no frontier at [s]. */
static const char *match_frontier(MatchState *ms, const char *s, const char *p) {
    p++;
    if (*p != '[') vm_error(ms->S, "missing '[' after '%%f' in pattern");
    const char *ep = class_end(ms, p);
    int prev = (s == ms->src_init) ? 0 : (unsigned char)s[-1];
    int cur = (s < ms->src_end) ? (unsigned char)*s : 0;
    if (!match_bracket(prev, p, ep - 1) && match_bracket(cur, p, ep - 1)) return ep;
    return NULL;
}

/* Match pattern [p] against the subject at [s]: end of the match, or NULL. Items without a
 * quantifier loop; captures, quantifiers and '?' recurse (see the file comment). */
static const char *do_match(MatchState *ms, const char *s, const char *p) {
    if (ms->depth-- == 0) vm_error(ms->S, "pattern too complex");
    while (s != NULL && p != ms->p_end) {
        if (*p == '(') {
            if (p + 1 < ms->p_end && p[1] == ')')
                s = start_capture(ms, s, p + 2, CAP_POSITION);
            else
                s = start_capture(ms, s, p + 1, CAP_UNFINISHED);
            break;
        }
        if (*p == ')') {
            s = end_capture(ms, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == ms->p_end) {
            if (s != ms->src_end) s = NULL;
            break;
        }
        if (*p == PAT_ESC && p + 1 < ms->p_end) {
            char k = p[1];
            if (k == 'b') {
                s = match_balance(ms, s, p + 2);
                p += 4;
                continue;
            }
            if (k == 'f') {
                const char *np = match_frontier(ms, s, p + 1);
                if (np == NULL) s = NULL;
                p = np;
                continue;
            }
            if (vm_ch_isdigit((unsigned char)k)) {
                s = match_backref(ms, s, (unsigned char)k);
                p += 2;
                continue;
            }
        }
        /* a single-character class, maybe followed by a quantifier */
        const char *ep = class_end(ms, p);
        if (!single_match(ms, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') {   /* zero repetitions are fine */
                p = ep + 1;
                continue;
            }
            s = NULL;
            break;
        }
        if (*ep == '?') {
            const char *r = do_match(ms, s + 1, ep + 1);
            if (r != NULL) {
                s = r;
                break;
            }
            p = ep + 1;
            continue;
        }
        if (*ep == '+') {
            s = max_expand(ms, s + 1, p, ep);
            break;
        }
        if (*ep == '*') {
            s = max_expand(ms, s, p, ep);
            break;
        }
        if (*ep == '-') {
            s = min_expand(ms, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    ms->depth++;
    return s;
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

static int find_aux(State *S, bool find) {
    String *s = vm_check_string(S, 1);
    String *p = vm_check_string(S, 2);
    vm_Integer ipos = vm_opt_integer(S, 3, 1);
    size_t init;
    if (ipos > 0) init = (size_t)ipos;
    else if (ipos == 0 || ipos < -(vm_Integer)s->len) init = 1;
    else init = s->len + (size_t)ipos + 1;
    if (init > s->len + 1) {   /* starts after the end: nothing can match */
        vm_pushnil(S);
        return 1;
    }
    if (find && (!vm_isfalsy(vm_at(S, 4)) || !has_specials(p))) {
        const char *r = plain_find(s->data + init - 1, s->len - init + 1, p->data, p->len);
        if (r != NULL) {
            vm_pushint(S, r - s->data + 1);
            vm_pushint(S, (vm_Integer)(r - s->data + p->len));
            return 2;
        }
        vm_pushnil(S);
        return 1;
    }
    MatchState ms;
    match_init(&ms, S, s, p);
    const char *pat = p->data;
    bool anchor = (p->len > 0 && *pat == '^');
    if (anchor) pat++;
    const char *s1 = s->data + init - 1;
    do {
        match_reset(&ms);
        const char *e = do_match(&ms, s1, pat);
        if (e != NULL) {
            if (!find) return push_captures(&ms, s1, e);
            vm_pushint(S, s1 - s->data + 1);
            vm_pushint(S, e - s->data);
            return push_captures(&ms, NULL, NULL) + 2;
        }
    } while (s1++ < ms.src_end && !anchor);
    vm_pushnil(S);
    return 1;
}

int vm_str_find(State *S) { return find_aux(S, true); }
int vm_str_match(State *S) { return find_aux(S, false); }

/* ======================================================================
 * gmatch: the iterator is a C closure with upvalues
 *   1 subject (string), 2 pattern (string), 3 next start offset (integer),
 *   4 end offset of the last match (integer, -1 before the first match; an empty match
 *     there is skipped, as Lua 5.4 does).
 * ====================================================================== */

static int gmatch_step(State *S) {
    String *s = vm_upvalue(S, 1)->u.s;
    String *p = vm_upvalue(S, 2)->u.s;
    vm_Integer start = vm_upvalue(S, 3)->u.i;
    vm_Integer last = vm_upvalue(S, 4)->u.i;
    MatchState ms;
    match_init(&ms, S, s, p);
    for (const char *src = s->data + start; src <= ms.src_end; src++) {
        match_reset(&ms);
        const char *e = do_match(&ms, src, p->data);
        if (e != NULL && (last < 0 || e != s->data + last)) {
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
    size_t init;
    vm_Integer ipos = vm_opt_integer(S, 3, 1);
    if (ipos > 0) init = (size_t)ipos;
    else if (ipos == 0 || ipos < -(vm_Integer)s->len) init = 1;
    else init = s->len + (size_t)ipos + 1;
    init -= 1;                        /* to an offset */
    if (init > s->len) init = s->len + 1;   /* after the end: no match at all */
    CClosure *cl = vm_newcfunction(S, gmatch_step, "gmatch_step", 4);
    cl->upvals[0] = vm_str(s);
    cl->upvals[1] = vm_str(p);
    cl->upvals[2] = vm_int((vm_Integer)init);
    cl->upvals[3] = vm_int(-1);
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
 * or a function: its value, or the match itself when that is false or nil. */
static void add_lookup(MatchState *ms, StrBuf *B, const char *s, const char *e, bool is_func) {
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
    if (vm_isfalsy(v)) {
        vm_strbuf_addlstr(B, s, (size_t)(e - s));
    } else if (vm_isstr(v)) {
        vm_strbuf_addlstr(B, v->u.s->data, v->u.s->len);
    } else if (vm_isnumber(v)) {
        char buf[VM_NUMBUF];
        vm_strbuf_addlstr(B, buf, (size_t)vm_number2str(v, buf));
    } else {
        vm_error(S, "invalid replacement value (a %s)", vm_typename(v));
    }
    vm_pop(S, 1);
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
    MatchState ms;
    match_init(&ms, S, src, p);
    StrBuf B;
    vm_strbuf_init(S, &B);
    const char *pat = p->data;
    bool anchor = (p->len > 0 && *pat == '^');
    if (anchor) pat++;
    const char *s = src->data, *lastmatch = NULL;
    vm_Integer n = 0;
    while (n < max_n) {
        match_reset(&ms);
        const char *e = do_match(&ms, s, pat);
        if (e != NULL && e != lastmatch) {
            n++;
            if (templ != NULL)
                add_template(&ms, &B, templ, s, e);
            else
                add_lookup(&ms, &B, s, e, tt != VT_TABLE);
            s = lastmatch = e;
        } else if (s < ms.src_end) {
            vm_strbuf_addchar(&B, *s++);
        } else {
            break;
        }
        if (anchor) break;
    }
    vm_strbuf_addlstr(&B, s, (size_t)(ms.src_end - s));
    vm_strbuf_push(&B);
    vm_pushint(S, n);
    return 2;
}
