/* vm_warn.c: warnings (vm_warn.h). The state is Global.warnmode; one process-wide lock
 * orders the pieces of concurrent messages (language threads may warn at the same time)
 * and guards the mode, which a control message of any thread changes. Nothing here
 * allocates or can raise, so a finalizer or an error path can warn. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "vm_warn.h"

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

/* lauxlib's checkcontrol: a control message is a last piece that starts with '@'. */
static bool control(Global *g, const char *msg, bool tocont) {
    if (tocont || msg[0] != '@') return false;
    if (strcmp(msg + 1, "off") == 0)
        g->warnmode = VM_WARN_OFF;
    else if (strcmp(msg + 1, "on") == 0)
        g->warnmode = VM_WARN_ON;
    return true;
}

/* One piece, with warn_lock held. lua5.4 writes each piece with fprintf("%s") and flushes
 * stderr: a piece ends at its first NUL, and the output reaches stderr piece by piece. */
static void piece(Global *g, const char *msg, bool tocont) {
    switch (g->warnmode) {
    case VM_WARN_OFF:
        control(g, msg, tocont);
        return;
    case VM_WARN_ON:
        if (control(g, msg, tocont)) return;
        fputs("Lua warning: ", stderr);
        /* the rest is what a continuation piece does */
        __attribute__((fallthrough));
    default:
        fputs(msg, stderr);
        if (!tocont) fputc('\n', stderr);
        fflush(stderr);
        g->warnmode = tocont ? VM_WARN_CONT : VM_WARN_ON;
        return;
    }
}

void vm_warning(State *S, const char *msg, bool tocont) {
    pthread_mutex_lock(&warn_lock);
    piece(S->g, msg, tocont);
    pthread_mutex_unlock(&warn_lock);
}

void vm_warning_pieces(State *S, const char *const *pieces, int n) {
    pthread_mutex_lock(&warn_lock);
    for (int i = 0; i < n; i++) piece(S->g, pieces[i], i < n - 1);
    pthread_mutex_unlock(&warn_lock);
}

void vm_warn_error(State *S, const char *where, const Value *err) {
    const char *msg = err->tt == VT_STR ? err->u.s->data : "error object is not a string";
    const char *pieces[] = {"error in ", where, " (", msg, ")"};
    vm_warning_pieces(S, pieces, 5);
}
