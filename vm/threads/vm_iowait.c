/* vm_iowait.c: waits made on behalf of C modules (vm_iowait.h), in each thread model. */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "vm_iowait.h"
#include "vm_threadimpl.h"

/* Green threads: the first nap between two polls of a wait, and the longest (doubling in
 * between). A ready socket is noticed within 10 ms of the last nap, at the cost of one
 * poll(0) per nap while the wait lasts: the scheduler's timer has no file descriptors to
 * watch (rejected: a poller thread of our own that wakes the green thread, which would
 * need the scheduler to park on fds; worth doing if C modules' waits become hot). */
#define NAP_FIRST 50e-6
#define NAP_MAX 10e-3

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct IoCall {
    VmIoTry try;
    void *arg;
    int timeout_ms;
    int result;
    int err;
} IoCall;

/* Inside a blocking region: touches no Values. */
static void *run_try(void *p) {
    IoCall *c = p;
    c->result = c->try(c->arg, c->timeout_ms);
    c->err = errno;
    return NULL;
}

static int blocking(Ctx *ctx, VmIoTry try, void *arg, int timeout_ms) {
    IoCall c = {try, arg, timeout_ms, 0, 0};
    vm_ctx_blocking(ctx, run_try, &c);
    errno = c.err;
    return c.result;
}

int vm_iowait(State *S, VmIoTry try, void *arg, int timeout_ms) {
    Ctx *ctx = vm_ctx_current();
    if (ctx == NULL || __atomic_load_n(&ctx->state, __ATOMIC_RELAXED) != CTX_RUNNING) return try(arg, timeout_ms);
    if (ctx->carrier == NULL || timeout_ms == 0) return blocking(ctx, try, arg, timeout_ms);
    VmThread *t = vm_thread_current();
    if (t == NULL || S == NULL || S->basestack != &t->gcs) return blocking(ctx, try, arg, timeout_ms);
    double deadline = timeout_ms < 0 ? INFINITY : now_sec() + timeout_ms / 1000.0;
    double nap = NAP_FIRST;
    for (;;) {
        int r = try(arg, 0);
        if (r != 0) return r;
        double now = now_sec();
        if (now >= deadline) return 0;
        vm_green_sleep_until(S, t, fmin(deadline, now + nap));
        nap = fmin(nap * 2, NAP_MAX);
    }
}
