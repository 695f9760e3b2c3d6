/* vm_lex.c: the lexer: Lua 5.4 source text to tokens, with Lua's error messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_lex.h"
#include "vm_string.h"

/* ORDER TK: reserved words, then the other multi-character tokens, then the unquoted ones. */
static const char *const lex_tokennames[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    "//", "..", "...", "==", ">=", "<=", "~=", "<<", ">>", "::",
    "<eof>", "<number>", "<integer>", "<name>", "<string>"};

#define EOZ (-1)

/* ======================================================================
 * Characters and buffer
 * ====================================================================== */

static int cur(Lexer *ls) { return ls->p < ls->end ? (unsigned char)*ls->p : EOZ; }
static void advance(Lexer *ls) { if (ls->p < ls->end) ls->p++; }

static bool isalpha_(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool isdigit_(int c) { return c >= '0' && c <= '9'; }
static bool isalnum_(int c) { return isalpha_(c) || isdigit_(c); }
static bool isxdigit_(int c) {
    return isdigit_(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static bool isspace_(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static bool isnewline(int c) { return c == '\n' || c == '\r'; }
static int hexvalue(int c) { return isdigit_(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

static void save(Lexer *ls, int c) {
    if (ls->buflen + 1 > ls->bufcap) {
        size_t ncap = ls->bufcap ? ls->bufcap * 2 : 64;
        ls->buf = ls->buf ? vm_realloc(ls->S, ls->buf, ncap) : vm_alloc_leaf(ls->S, ncap);
        ls->bufcap = ncap;
    }
    ls->buf[ls->buflen++] = (char)c;
}

static void save_next(Lexer *ls) {
    save(ls, cur(ls));
    advance(ls);
}

/* Skip one newline sequence (\n, \r, \r\n or \n\r) and count the line. */
static void newline(Lexer *ls) {
    int old = cur(ls);
    advance(ls);
    if (isnewline(cur(ls)) && cur(ls) != old) advance(ls);
    ls->line++;
    ls->linestart = ls->p;
}

/* ======================================================================
 * Errors
 * ====================================================================== */

const char *vm_lex_token2str(int kind, char *buf, size_t bufsize) {
    if (kind < TK_FIRST_RESERVED) {
        if (kind >= 32 && kind < 127)
            snprintf(buf, bufsize, "'%c'", kind);
        else
            snprintf(buf, bufsize, "'<\\%d>'", kind);
    } else if (kind < TK_EOS) {
        snprintf(buf, bufsize, "'%s'", lex_tokennames[kind - TK_FIRST_RESERVED]);
    } else {
        snprintf(buf, bufsize, "%s", lex_tokennames[kind - TK_FIRST_RESERVED]);
    }
    return buf;
}

static _Noreturn void lex_raise(Lexer *ls, int line, int col, const char *msg, const char *near,
                            size_t nearlen, bool quote) {
    CompileError *e = ls->err;
    e->line = line;
    e->col = col;
    if (near == NULL)
        snprintf(e->msg, sizeof e->msg, "%s", msg);
    else if (quote)
        snprintf(e->msg, sizeof e->msg, "%s near '%.*s'", msg, (int)(nearlen > 200 ? 200 : nearlen), near);
    else
        snprintf(e->msg, sizeof e->msg, "%s near %.*s", msg, (int)nearlen, near);
    longjmp(*ls->jb, 1);
}

/* Error while reading a token: near the text read so far ([kind] TK_STRING etc.), near
 * <eof> (TK_EOS), or with no "near" part (0). */
static _Noreturn void lexerror(Lexer *ls, const char *msg, int kind) {
    int col = ls->tokcol;
    if (kind == 0) lex_raise(ls, ls->line, col, msg, NULL, 0, false);
    if (kind == TK_EOS) lex_raise(ls, ls->line, col, msg, "<eof>", 5, false);
    lex_raise(ls, ls->line, col, msg, ls->buf ? ls->buf : "", ls->buflen, true);
}

void vm_lex_error(Lexer *ls, const char *msg, bool near) {
    Token *t = &ls->t;
    if (!near) lex_raise(ls, t->line, t->col, msg, NULL, 0, false);
    switch (t->kind) {
    case TK_NAME: case TK_STRING: case TK_INT: case TK_FLT:
        lex_raise(ls, t->line, t->col, msg, t->text, t->textlen, true);
    default: {
        char b[32];
        vm_lex_token2str(t->kind, b, sizeof b);
        lex_raise(ls, t->line, t->col, msg, b, strlen(b), false);
    }
    }
}

/* ======================================================================
 * Numerals
 * ====================================================================== */

/* Lua's numeral rules: decimal integers that overflow become floats, hexadecimal integers
 * wrap around, "inf"/"nan" are not numerals. [s] is NUL-terminated, length [len]. */
static bool str2num(const char *s, size_t len, Value *out) {
    const char *p = s;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        vm_Unsigned a = 0;
        size_t i = 2;
        bool any = false;
        for (; i < len && isxdigit_((unsigned char)s[i]); i++) {
            a = a * 16 + (vm_Unsigned)hexvalue((unsigned char)s[i]);
            any = true;
        }
        if (any && i == len) {
            *out = vm_int((vm_Integer)a);
            return true;
        }
    } else {
        vm_Unsigned a = 0;
        size_t i = 0;
        bool ok = len > 0;
        for (; i < len && isdigit_((unsigned char)s[i]); i++) {
            int d = s[i] - '0';
            if (a > (vm_Unsigned)VM_MAXINTEGER / 10 ||
                (a == (vm_Unsigned)VM_MAXINTEGER / 10 && d > (int)(VM_MAXINTEGER % 10))) {
                ok = false; /* overflow: read as a float */
                break;
            }
            a = a * 10 + (vm_Unsigned)d;
        }
        if (ok && i == len) {
            *out = vm_int((vm_Integer)a);
            return true;
        }
    }
    if (strpbrk(s, "nN")) return false; /* reject 'inf' and 'nan' */
    char *endp;
    double d = strtod(s, &endp);
    if (endp == s || (size_t)(endp - s) != len) return false;
    *out = vm_float(d);
    return true;
}

static void read_numeral(Lexer *ls, Token *t) {
    const char *expo = "Ee";
    int first = cur(ls);
    save_next(ls);
    if (first == '0' && (cur(ls) == 'x' || cur(ls) == 'X')) {
        save_next(ls);
        expo = "Pp";
    }
    for (;;) {
        int c = cur(ls);
        if (c != EOZ && (c == expo[0] || c == expo[1])) {
            save_next(ls);
            if (cur(ls) == '+' || cur(ls) == '-') save_next(ls);
        } else if (isxdigit_(c) || c == '.') {
            save_next(ls);
        } else {
            break;
        }
    }
    if (isalnum_(cur(ls))) save_next(ls); /* numeral touching a letter: force an error */
    save(ls, '\0');
    ls->buflen--;
    Value v;
    if (!str2num(ls->buf, ls->buflen, &v)) lexerror(ls, "malformed number", TK_INT);
    if (v.tt == VT_INT) {
        t->kind = TK_INT;
        t->v.i = v.u.i;
    } else {
        t->kind = TK_FLT;
        t->v.n = v.u.n;
    }
}

/* ======================================================================
 * Strings
 * ====================================================================== */

/* After '[': count '='s. Returns count + 2 for a well-formed "[==[", 1 for a lone '[' with
 * no '=', 0 otherwise ("[=" not followed by '['). The characters are saved. */
static size_t skip_sep(Lexer *ls) {
    size_t count = 0;
    int s = cur(ls);
    save_next(ls);
    while (cur(ls) == '=') {
        save_next(ls);
        count++;
    }
    if (cur(ls) == s) return count + 2;
    return count == 0 ? 1 : 0;
}

static void read_long_string(Lexer *ls, Token *t, size_t sep) {
    int startline = ls->line;
    save_next(ls); /* second '[' */
    if (isnewline(cur(ls))) newline(ls); /* the first newline is skipped */
    size_t contentstart = ls->buflen;
    for (;;) {
        int c = cur(ls);
        if (c == EOZ) {
            char msg[96];
            snprintf(msg, sizeof msg, "unfinished long %s (starting at line %d)",
                     t ? "string" : "comment", startline);
            lexerror(ls, msg, TK_EOS);
        } else if (c == ']') {
            size_t before = ls->buflen;
            if (skip_sep(ls) == sep) {
                save_next(ls); /* second ']' */
                if (t) {
                    t->v.s = vm_string_intern(ls->S, ls->buf + contentstart, before - contentstart);
                }
                return;
            }
        } else if (isnewline(c)) {
            save(ls, '\n');
            newline(ls);
            if (!t) ls->buflen = 0; /* comments: keep the buffer small */
        } else {
            if (t) save_next(ls); else advance(ls);
        }
    }
}

/* Escape error: add the current character to the text shown and raise. */
static _Noreturn void escerror(Lexer *ls, const char *msg) {
    if (cur(ls) != EOZ) save_next(ls);
    lexerror(ls, msg, TK_STRING);
}

static int gethexa(Lexer *ls) {
    save_next(ls);
    if (!isxdigit_(cur(ls))) escerror(ls, "hexadecimal digit expected");
    return hexvalue(cur(ls));
}

static int readhexaesc(Lexer *ls) {
    int r = gethexa(ls);
    r = (r << 4) + gethexa(ls);
    ls->buflen -= 2; /* remove the saved 'x' and first digit */
    return r;
}

static unsigned long readutf8esc(Lexer *ls) {
    size_t i = 4; /* chars to remove: '\', 'u', '{', first digit */
    save_next(ls); /* 'u' */
    if (cur(ls) != '{') escerror(ls, "missing '{'");
    unsigned long r = (unsigned long)gethexa(ls);
    for (;;) {
        save_next(ls);
        if (!isxdigit_(cur(ls))) break;
        i++;
        if (r > (0x7FFFFFFFul >> 4)) escerror(ls, "UTF-8 value too large");
        r = (r << 4) + (unsigned long)hexvalue(cur(ls));
    }
    if (cur(ls) != '}') escerror(ls, "missing '}'");
    advance(ls); /* '}' */
    ls->buflen -= i;
    return r;
}

/* UTF-8 encoding of x (up to 0x7FFFFFFF, 6 bytes) as Lua's luaO_utf8esc. */
static void utf8esc(Lexer *ls, unsigned long x) {
    char b[8];
    int n = 1;
    if (x < 0x80) {
        save(ls, (int)x);
        return;
    }
    unsigned mfb = 0x3f;
    do {
        b[8 - (n++)] = (char)(0x80 | (x & 0x3f));
        x >>= 6;
        mfb >>= 1;
    } while (x > mfb);
    b[8 - n] = (char)((~mfb << 1) | x);
    for (int i = 8 - n; i < 8; i++) save(ls, (unsigned char)b[i]);
}

static int readdecesc(Lexer *ls) {
    int r = 0, i;
    for (i = 0; i < 3 && isdigit_(cur(ls)); i++) {
        r = 10 * r + cur(ls) - '0';
        save_next(ls);
    }
    if (r > 255) escerror(ls, "decimal escape too large");
    ls->buflen -= (size_t)i;
    return r;
}

static void read_string(Lexer *ls, Token *t) {
    int del = cur(ls);
    save_next(ls);
    while (cur(ls) != del) {
        int c = cur(ls);
        switch (c) {
        case EOZ:
            lexerror(ls, "unfinished string", TK_EOS);
        case '\n':
        case '\r':
            lexerror(ls, "unfinished string", TK_STRING);
        case '\\': {
            save_next(ls); /* keep '\' for error messages */
            int e = cur(ls);
            switch (e) {
            case 'a': c = '\a'; goto read_save;
            case 'b': c = '\b'; goto read_save;
            case 'f': c = '\f'; goto read_save;
            case 'n': c = '\n'; goto read_save;
            case 'r': c = '\r'; goto read_save;
            case 't': c = '\t'; goto read_save;
            case 'v': c = '\v'; goto read_save;
            case 'x': c = readhexaesc(ls); goto read_save;
            case 'u':
                utf8esc(ls, readutf8esc(ls));
                continue;
            case '\n':
            case '\r':
                newline(ls);
                c = '\n';
                goto only_save;
            case '\\': case '"': case '\'':
                c = e;
                goto read_save;
            case EOZ:
                continue; /* the loop raises "unfinished string" */
            case 'z': {
                ls->buflen--; /* remove '\' */
                advance(ls);
                while (isspace_(cur(ls))) {
                    if (isnewline(cur(ls))) newline(ls); else advance(ls);
                }
                continue;
            }
            default:
                if (!isdigit_(e)) escerror(ls, "invalid escape sequence");
                c = readdecesc(ls);
                goto only_save;
            }
        read_save:
            advance(ls);
        only_save:
            ls->buflen--; /* remove '\' */
            save(ls, c);
            break;
        }
        default:
            save_next(ls);
        }
    }
    save_next(ls); /* closing delimiter */
    t->v.s = vm_string_intern(ls->S, ls->buf + 1, ls->buflen - 2);
    char *text = vm_alloc_leaf(ls->S, ls->buflen + 1);
    memcpy(text, ls->buf, ls->buflen);
    text[ls->buflen] = '\0';
    t->text = text;
    t->textlen = ls->buflen;
}

/* ======================================================================
 * Tokens
 * ====================================================================== */

static int reserved_word(const char *s, size_t len) {
    for (int i = 0; i < LEX_NUM_RESERVED; i++) {
        const char *w = lex_tokennames[i];
        if (strlen(w) == len && memcmp(w, s, len) == 0) return TK_FIRST_RESERVED + i;
    }
    return 0;
}

static void read_token(Lexer *ls, Token *t) {
    ls->buflen = 0;
    t->text = NULL;
    t->textlen = 0;
    for (;;) {
        int c = cur(ls);
        ls->tokcol = (int)(ls->p - ls->linestart) + 1;
        t->col = ls->tokcol;
        switch (c) {
        case '\n':
        case '\r':
            newline(ls);
            continue;
        case ' ': case '\f': case '\t': case '\v':
            advance(ls);
            continue;
        case '-':
            advance(ls);
            if (cur(ls) != '-') { t->kind = '-'; return; }
            advance(ls); /* a comment */
            if (cur(ls) == '[') {
                size_t sep = skip_sep(ls);
                ls->buflen = 0;
                if (sep >= 2) {
                    read_long_string(ls, NULL, sep);
                    ls->buflen = 0;
                    continue;
                }
            }
            while (!isnewline(cur(ls)) && cur(ls) != EOZ) advance(ls);
            continue;
        case '[': {
            size_t sep = skip_sep(ls);
            if (sep >= 2) {
                read_long_string(ls, t, sep);
                t->kind = TK_STRING;
                /* text for messages: the whole long string as read */
                char *text = vm_alloc_leaf(ls->S, ls->buflen + 1);
                memcpy(text, ls->buf, ls->buflen);
                text[ls->buflen] = '\0';
                t->text = text;
                t->textlen = ls->buflen;
                return;
            }
            if (sep == 0) lexerror(ls, "invalid long string delimiter", TK_STRING);
            t->kind = '[';
            return;
        }
        case '=':
            advance(ls);
            if (cur(ls) == '=') { advance(ls); t->kind = TK_EQ; } else t->kind = '=';
            return;
        case '<':
            advance(ls);
            if (cur(ls) == '=') { advance(ls); t->kind = TK_LE; }
            else if (cur(ls) == '<') { advance(ls); t->kind = TK_SHL; }
            else t->kind = '<';
            return;
        case '>':
            advance(ls);
            if (cur(ls) == '=') { advance(ls); t->kind = TK_GE; }
            else if (cur(ls) == '>') { advance(ls); t->kind = TK_SHR; }
            else t->kind = '>';
            return;
        case '/':
            advance(ls);
            if (cur(ls) == '/') { advance(ls); t->kind = TK_IDIV; } else t->kind = '/';
            return;
        case '~':
            advance(ls);
            if (cur(ls) == '=') { advance(ls); t->kind = TK_NE; } else t->kind = '~';
            return;
        case ':':
            advance(ls);
            if (cur(ls) == ':') { advance(ls); t->kind = TK_DBCOLON; } else t->kind = ':';
            return;
        case '"':
        case '\'':
            read_string(ls, t);
            t->kind = TK_STRING;
            return;
        case '.':
            if (ls->p + 1 < ls->end && ls->p[1] == '.') {
                advance(ls);
                advance(ls);
                if (cur(ls) == '.') { advance(ls); t->kind = TK_DOTS; } else t->kind = TK_CONCAT;
                return;
            }
            if (ls->p + 1 < ls->end && isdigit_((unsigned char)ls->p[1])) {
                read_numeral(ls, t);
                goto numtext;
            }
            advance(ls);
            t->kind = '.';
            return;
        case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9':
            read_numeral(ls, t);
        numtext: {
            char *text = vm_alloc_leaf(ls->S, ls->buflen + 1);
            memcpy(text, ls->buf, ls->buflen);
            text[ls->buflen] = '\0';
            t->text = text;
            t->textlen = ls->buflen;
            return;
        }
        case EOZ:
            t->kind = TK_EOS;
            return;
        default:
            if (isalpha_(c)) {
                const char *start = ls->p;
                while (isalnum_(cur(ls))) advance(ls);
                size_t len = (size_t)(ls->p - start);
                int r = reserved_word(start, len);
                if (r) {
                    t->kind = r;
                    return;
                }
                t->kind = TK_NAME;
                t->v.s = vm_string_intern(ls->S, start, len);
                t->text = t->v.s->data;
                t->textlen = len;
                return;
            }
            advance(ls);
            t->kind = c;
            return;
        }
    }
}

void vm_lex_next(Lexer *ls) {
    ls->lastline = ls->t.line;
    if (ls->has_ahead) {
        ls->t = ls->ahead;
        ls->has_ahead = false;
        return;
    }
    read_token(ls, &ls->t);
    ls->t.line = ls->line;
}

int vm_lex_lookahead(Lexer *ls) {
    if (!ls->has_ahead) {
        read_token(ls, &ls->ahead);
        ls->ahead.line = ls->line;
        ls->has_ahead = true;
    }
    return ls->ahead.kind;
}

void vm_lex_init(Lexer *ls, State *S, const char *src, size_t len, CompileError *err, jmp_buf *jb) {
    memset(ls, 0, sizeof *ls);
    ls->S = S;
    ls->p = src;
    ls->end = src + len;
    ls->line = 1;
    ls->lastline = 1;
    ls->linestart = src;
    ls->err = err;
    ls->jb = jb;
    ls->t.kind = TK_EOS;
    ls->t.line = 1;
    ls->t.col = 1;
}

void vm_lex_skip_first_line(Lexer *ls) {
    if (ls->end - ls->p >= 3 && memcmp(ls->p, "\xEF\xBB\xBF", 3) == 0) ls->p += 3;
    if (ls->p < ls->end && *ls->p == '#') { /* keep the newline: line numbers stay right */
        while (ls->p < ls->end && !isnewline((unsigned char)*ls->p)) ls->p++;
    }
    ls->linestart = ls->p;
}
