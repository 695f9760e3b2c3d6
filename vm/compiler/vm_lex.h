/* vm_lex.h: the lexer of the compiler (private to vm_lex.c, vm_parse.c, vm_code.c and their
 * unit tests). Turns Lua 5.4 source text into tokens, one token of lookahead. */
#ifndef VM_LEX_H
#define VM_LEX_H

#include <setjmp.h>

#include "vm_compile.h"
#include "vm_state.h"

/* Token kinds: single characters are their own code (0..255); the rest follow.
 * ORDER TK: keep lex_tokennames in vm_lex.c in the same order. Reserved words come first,
 * in the order of lex_tokennames, so a name is looked up by position. */
enum {
    TK_FIRST_RESERVED = 257,
    /* reserved words */
    TK_AND = TK_FIRST_RESERVED, TK_BREAK, TK_DO, TK_ELSE, TK_ELSEIF, TK_END, TK_FALSE, TK_FOR,
    TK_FUNCTION, TK_GOTO, TK_IF, TK_IN, TK_LOCAL, TK_NIL, TK_NOT, TK_OR, TK_REPEAT, TK_RETURN,
    TK_THEN, TK_TRUE, TK_UNTIL, TK_WHILE,
    /* other multi-character symbols */
    TK_IDIV, TK_CONCAT, TK_DOTS, TK_EQ, TK_GE, TK_LE, TK_NE, TK_SHL, TK_SHR, TK_DBCOLON,
    /* tokens shown unquoted in messages ("<eof>", "<name>", ...) start here */
    TK_EOS, TK_FLT, TK_INT, TK_NAME, TK_STRING
};
#define LEX_NUM_RESERVED (TK_WHILE - TK_FIRST_RESERVED + 1)

/* Deepest nesting of syntactic constructs (expressions, statements), as LUAI_MAXCCALLS:
 * the parser recurses once per level, so this bounds its C stack use. */
#define LEX_MAXLEVELS 200

typedef struct Token {
    int kind;
    int line;              /* line where the token ends (Lua's linenumber after reading it) */
    int col;               /* 1-based column of its first character */
    union {
        vm_Number n;       /* TK_FLT */
        vm_Integer i;      /* TK_INT */
        String *s;         /* TK_NAME, TK_STRING: GC string, kept alive by this C struct
                              (the Lexer lives on the C stack, which the collector scans) */
    } v;
    const char *text;      /* for messages: TK_NAME/TK_STRING/TK_FLT/TK_INT source-like text */
    size_t textlen;
} Token;

typedef struct Lexer {
    State *S;
    const char *p, *end;   /* current position and end of the source */
    int line;              /* current line */
    const char *linestart; /* first character of the current line, for columns */
    int lastline;          /* line of the last token consumed (for line info of code) */
    Token t;               /* current token */
    Token ahead;           /* lookahead token, valid when has_ahead */
    bool has_ahead;
    int nlevels;           /* current syntactic nesting depth */
    /* token text buffer: a GC leaf block grown as needed */
    char *buf;
    size_t buflen, bufcap;
    int tokcol;            /* column of the token being read */
    CompileError *err;
    jmp_buf *jb;           /* where errors go (vm_compile's setjmp) */
    String *envname;       /* "_ENV" */
    String *source;        /* chunk name */
} Lexer;

/* Start lexing [len] bytes at [src]. */
void vm_lex_init(Lexer *ls, State *S, const char *src, size_t len, CompileError *err, jmp_buf *jb);
/* Skip a UTF-8 byte order mark and a first line starting with '#' (as Lua's file loader
 * does; load() of a string skips nothing). Call right after vm_lex_init. */
void vm_lex_skip_first_line(Lexer *ls);
/* Read the next token into ls->t. */
void vm_lex_next(Lexer *ls);
/* Peek at the token after ls->t (returns its kind). */
int vm_lex_lookahead(Lexer *ls);
/* Text of a token kind as Lua shows it in messages: "'end'", "'='", "<eof>", "<name>". */
const char *vm_lex_token2str(int kind, char *buf, size_t bufsize);
/* Raise a syntax error "msg near <current token>" (or just msg when [near] is false) at the
 * current token's position. Never returns. */
_Noreturn void vm_lex_error(Lexer *ls, const char *msg, bool near);

#endif
