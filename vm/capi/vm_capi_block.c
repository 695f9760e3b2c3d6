/* vm_capi_block.c: C modules' waits do not hold up the runtime.
 *
 * A module's C function runs as a library function does: its thread counts as RUNNING for
 * the safepoint protocol and reaches no poll until it returns. A function that waits in the
 * kernel (LuaSocket's accept, receive, connect and socket.select wait in poll() or select()
 * on non-blocking sockets; socket.sleep in nanosleep()) would then hold up every collection
 * of the other threads and, under green threads, its whole carrier.
 *
 * So the executable exports poll, select and nanosleep (vm_capi_exports.list) and a module
 * loaded through the C API binds to these, ahead of libc's (the executable comes first in
 * the dynamic linker's search order). A call that comes from such a module (its return
 * address lies in a library vm_capi_loadfunc opened) waits through vm_iowait
 * (vm/threads/vm_iowait.h): a blocking region under native threads, a poll-and-sleep loop
 * on the green scheduler under green threads, so the carrier runs other green threads.
 * Every other caller (the runtime itself, libgc, libc) goes straight to libc's function,
 * after a check of its return address against the modules' address ranges.
 *
 * Rejected: wrapping every C function of a module in a blocking region (the function
 * touches the heap through the API between its waits; the region's rule is "no Values");
 * patching LuaSocket's io layer (modules are used unmodified). */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

#include "vm_capi_int.h"
#include "vm_iowait.h"

/* libc's own entry points, which the wrappers below call (glibc exports them under these
 * names too). */
extern int __poll(struct pollfd *fds, nfds_t nfds, int timeout);
extern int __select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv);
extern int __nanosleep(const struct timespec *req, struct timespec *rem);

_Thread_local State *capi_running;

/* Address ranges of the libraries opened for C modules (their loaded segments; at most
 * MAX_MODULES are watched: more still load, their waits then behave as plain libc calls).
 * Appended under the package library's use (any thread), read without a lock by every
 * intercepted call: an entry is written before the count that covers it (release/acquire),
 * and a range check costs a few compares, so the runtime's own nanosleeps (CAB back-off,
 * analyzer idling), which bind to the wrappers too, pay almost nothing. */
#define MAX_MODULES 64
typedef struct ModRange {
    uintptr_t lo, hi;
} ModRange;
static ModRange module_range[MAX_MODULES];
static int nmodules;
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct FindRange {
    uintptr_t base;
    ModRange r;
} FindRange;

static int range_of(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    FindRange *f = arg;
    if ((uintptr_t)info->dlpi_addr != f->base) return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t s = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        if (s < lo) lo = s;
        if (s + ph->p_memsz > hi) hi = s + ph->p_memsz;
    }
    f->r.lo = lo;
    f->r.hi = hi;
    return 1;
}

void capi_block_watch(void *sym) {
    Dl_info info;
    if (sym == NULL || dladdr(sym, &info) == 0) return;
    FindRange f = {(uintptr_t)info.dli_fbase, {0, 0}};
    if (!dl_iterate_phdr(range_of, &f) || f.r.lo >= f.r.hi) return;
    /* a plain mutex, held for a few instructions, never across an allocation or a poll */
    pthread_mutex_lock(&watch_lock);
    int n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    bool known = false;
    for (int i = 0; i < n; i++) known |= module_range[i].lo == f.r.lo;
    if (!known && n < MAX_MODULES) {
        module_range[n] = f.r;
        __atomic_store_n(&nmodules, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&watch_lock);
}

static bool from_module(void *ret) {
    int n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    uintptr_t a = (uintptr_t)ret;
    for (int i = 0; i < n; i++)
        if (a >= module_range[i].lo && a < module_range[i].hi) return true;
    return false;
}

/* A module's wait, without the module lock (vm_capi_lock.c) while it lasts. */
static int unlocked_wait(VmIoTry try, void *arg, int timeout_ms) {
    State *S = capi_running;
    int held = S != NULL ? capi_unlock_all(S) : 0;
    int r = vm_iowait(S, try, arg, timeout_ms);
    int err = errno;
    capi_relock(S, held);
    errno = err;
    return r;
}

/* ---- poll ---------------------------------------------------------------------------- */

typedef struct PollArgs {
    struct pollfd *fds;
    nfds_t nfds;
} PollArgs;

static int try_poll(void *arg, int timeout_ms) {
    PollArgs *a = arg;
    return __poll(a->fds, a->nfds, timeout_ms);
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
    if (!from_module(__builtin_return_address(0))) return __poll(fds, nfds, timeout);
    PollArgs a = {fds, nfds};
    return unlocked_wait(try_poll, &a, timeout);
}

/* ---- select -------------------------------------------------------------------------- */

typedef struct SelectArgs {
    int nfds;
    fd_set *r, *w, *e;
    fd_set r0, w0, e0; /* the caller's sets: each attempt starts from them */
} SelectArgs;

static int try_select(void *arg, int timeout_ms) {
    SelectArgs *a = arg;
    if (a->r) *a->r = a->r0;
    if (a->w) *a->w = a->w0;
    if (a->e) *a->e = a->e0;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    return __select(a->nfds, a->r, a->w, a->e, timeout_ms < 0 ? NULL : &tv);
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv) {
    if (!from_module(__builtin_return_address(0))) return __select(nfds, r, w, e, tv);
    SelectArgs a = {nfds, r, w, e, {{0}}, {{0}}, {{0}}};
    if (r) a.r0 = *r;
    if (w) a.w0 = *w;
    if (e) a.e0 = *e;
    int ms = -1;
    if (tv != NULL) {
        double t = (double)tv->tv_sec * 1000 + (double)tv->tv_usec / 1000;
        ms = t > 1e9 ? 1000000000 : (int)ceil(t);
    }
    return unlocked_wait(try_select, &a, ms);
}

/* ---- nanosleep ----------------------------------------------------------------------- */

typedef struct SleepArgs {
    const struct timespec *req;
    struct timespec *rem;
    bool whole; /* native: the whole sleep in one call */
} SleepArgs;

static int try_sleep(void *arg, int timeout_ms) {
    SleepArgs *a = arg;
    if (timeout_ms == 0) return 0; /* a green thread's poll: nothing becomes ready */
    return __nanosleep(a->req, a->rem) == 0 ? 1 : -1;
}

int nanosleep(const struct timespec *req, struct timespec *rem) {
    if (!from_module(__builtin_return_address(0))) return __nanosleep(req, rem);
    SleepArgs a = {req, rem, true};
    double ms = (double)req->tv_sec * 1000 + (double)req->tv_nsec / 1e6;
    int r = unlocked_wait(try_sleep, &a, ms > 1e9 ? 1000000000 : (int)ceil(ms));
    if (r < 0) return -1; /* EINTR from the native sleep, rem written */
    if (rem) memset(rem, 0, sizeof *rem);
    return 0;
}
