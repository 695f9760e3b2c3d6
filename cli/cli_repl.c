/* cli_repl.c: the interactive loop of `tandem -i` (and of `tandem` on a terminal), lua.c's
 * doREPL: prompt (_PROMPT, _PROMPT2 or "> ", ">> "), read a line, compile it as
 * "return <line>;" so that an expression prints its values, else as statements, reading
 * continuation lines while the compiler's complaint ends in "<eof>" (the statement is
 * incomplete), run it, print its results with the global print. Errors are reported
 * without the program's name, as lua5.4 reports them there; a line starting with '=' is
 * "return" (Lua 5.2's form). At end of input a newline ends the last prompt's line.
 *
 * Line editing and history come from GNU readline when the build has it (TANDEM_READLINE,
 * CMakeLists.txt), as in Debian's lua5.4, which also echoes each line read from a
 * non-terminal; without it a prompt and a plain line read, as lua5.4 built without
 * readline (no echo, no editing). A line is read in a blocking region: other language
 * threads (and collections) go on while the loop waits for the user. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#if TANDEM_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#include "cli.h"
#include "vm_api.h"
#include "vm_lib.h"
#include "vm_thread.h"

#define PROMPT "> "
#define PROMPT2 ">> "
/* The end of a syntax error's message when the chunk ended too soon. */
#define EOFMARK "<eof>"

/* The prompt, as a malloc'd copy (the read happens in a blocking region, away from the
 * heap): tostring(_PROMPT) (or _PROMPT2 for a continuation line) when set. */
static char *get_prompt(State *S, bool firstline) {
    Value p = vm_getglobal(S, firstline ? "_PROMPT" : "_PROMPT2");
    const char *s = vm_isnil(&p) ? (firstline ? PROMPT : PROMPT2) : vm_tostring(S, &p)->data;
    char *copy = strdup(s);
    if (copy == NULL) abort();
    return copy;
}

/* One line after the prompt, malloc'd, without its newline; NULL at end of input. Run as a
 * blocking region (other threads may collect while the prompt waits). */
static void *read_line_blocking(void *prompt_arg) {
    const char *prompt = prompt_arg;
#if TANDEM_READLINE
    char *line = readline(prompt);
#else
    fputs(prompt, stdout);
    fflush(stdout);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        line = NULL;
    } else if (n > 0 && line[n - 1] == '\n') {
        line[n - 1] = '\0';
    }
#endif
    return line;
}

static char *read_line(State *S, const char *prompt) {
    return vm_blocking_call(S, read_line_blocking, (void *)prompt);
}

static void save_line(const char *line) {
#if TANDEM_READLINE
    add_history(line);
#else
    (void)line;
#endif
}

/* Prompt, read and push a line (firstline: "=x" becomes "return x"); false at end of
 * input, with what lua5.4 leaves on its stack then pushed instead: its prompt variable's
 * value (nil, or the prompt string when it is set), which the loop reports as the message
 * of a statement left incomplete at the end ("(null)" for nil, as lua5.4 prints it). */
static bool pushline(State *S, bool firstline) {
    char *prompt = get_prompt(S, firstline);
    char *line = read_line(S, prompt);
    if (line == NULL) {
        Value p = vm_getglobal(S, firstline ? "_PROMPT" : "_PROMPT2");
        if (vm_isnil(&p))
            vm_pushnil(S);
        else
            vm_pushcstr(S, prompt);
        free(prompt);
        return false;
    }
    free(prompt);
    if (firstline && line[0] == '=')
        vm_pushfstring(S, "return %s", line + 1);
    else
        vm_pushcstr(S, line);
    free(line);
    return true;
}

/* The line on the top compiled as "return <line>;": on success the function is pushed
 * above the line; on failure the stack is as it was. */
static int addreturn(State *S) {
    const char *line = vm_at(S, vm_gettop(S))->u.s->data;
    String *ret = vm_pushfstring(S, "return %s;", line);
    int st = vm_load(S, ret->data, ret->len, "=stdin", NULL, true);
    if (st == VM_OK) {
        vm_remove(S, vm_gettop(S) - 1); /* the "return" line */
        if (line[0] != '\0') save_line(line);
    } else {
        vm_pop(S, 2);
    }
    return st;
}

/* Did the compilation fail only because the chunk ended too soon? Pops the message if so. */
static bool incomplete(State *S, int status) {
    if (status != VM_ERRSYNTAX) return false;
    const Value *m = vm_at(S, vm_gettop(S));
    size_t mark = strlen(EOFMARK);
    if (!vm_isstr(m) || m->u.s->len < mark || strcmp(m->u.s->data + m->u.s->len - mark, EOFMARK) != 0) return false;
    vm_pop(S, 1);
    return true;
}

/* The line on the top (at [idx]) compiled as statements, with continuation lines read and
 * joined to it while it is incomplete: pushes the function or the message. */
static int multiline(State *S, int idx) {
    for (;;) {
        String *code = vm_at(S, idx)->u.s;
        int st = vm_load(S, code->data, code->len, "=stdin", NULL, true);
        if (!incomplete(S, st) || !pushline(S, false)) {
            /* the message, or what pushline left at the end of input */
            save_line(vm_at(S, idx)->u.s->data);
            return st;
        }
        vm_pushcstr(S, "\n");
        vm_insert(S, vm_gettop(S) - 1); /* line, "\n", next line */
        vm_concat(S, 3);
    }
}

/* Read and compile one statement: the function (or the message) is pushed; -1 at end of
 * input, with nothing pushed. */
static int loadline(State *S) {
    int base = vm_gettop(S);
    if (!pushline(S, true)) {
        vm_settop(S, base);
        return -1;
    }
    int st = addreturn(S);
    if (st != VM_OK) st = multiline(S, base + 1);
    vm_remove(S, base + 1); /* the line */
    return st;
}

/* Print the values above [base] with the global print. */
static void print_results(State *S, int base) {
    int n = vm_gettop(S) - base;
    if (n == 0) return;
    vm_push(S, vm_getglobal(S, "print"));
    vm_insert(S, base + 1);
    if (vm_pcall(S, n, 0) != VM_OK) {
        Value *e = vm_at(S, vm_gettop(S));
        fprintf(stderr, "error calling 'print' (%s)\n", vm_isstr(e) ? e->u.s->data : "(null)");
        fflush(stderr);
    }
}

void cli_repl(State *S) {
#if TANDEM_READLINE
    rl_readline_name = "tandem"; /* for $if sections of ~/.inputrc */
#endif
    int base = vm_gettop(S);
    int st;
    while ((st = loadline(S)) != -1) {
        if (st == VM_OK) {
            if (cli_docall(S, 0, VM_MULTRET, true) == VM_OK) print_results(S, base);
        } else {
            cli_report(S, true);
        }
        vm_settop(S, base);
    }
    fputs("\n", stdout);
    fflush(stdout);
}
