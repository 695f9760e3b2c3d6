/* vm_sample.c: sampled instrumentation (vm_sample.h): the countdown's phases, what a window
 * replays when it starts, and the tick counts the estimates are scaled by.
 *
 * Why two copies of the code rather than one instrumented copy that tests a flag before each
 * event: the flag test is paid at every instrumentation point (each branch of the path
 * profiler, each call) between samples too, and it leaves the payload computations, the
 * frame bookkeeping and the enqueue's register pressure in the code; the CAB paper's
 * evaluation showed exactly that cost, which skipping events at the producer or the consumer
 * never removed. Two copies cost nothing between samples but the countdown.
 *
 * Why windows are interpreted (the instrumented sampling copy has no JIT) rather than
 * running instrumented compiled code: it needs one compiled version per function, not two,
 * and a window's events are the interpreter's, which the JIT's equal by construction
 * (jit/README.md, "Profiling"); the price is that a window runs at the interpreter's speed,
 * which at 5% adds about 5% x (interpreter / compiled - 1) of the run. Instrumented compiled
 * windows are the next step (vm/prof/README.md).
 *
 * Why the switch goes through vm_execute's trampoline (the loop copy returns, the
 * trampoline calls the other copy) rather than the copy calling the other one as the hooked
 * copies are switched to: windows open and close thousands of times a second, and nesting
 * a C frame per switch would grow the C stack without bound. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_sample.h"

_Thread_local VmSampleTl vm_sample_tl;
bool vm_sample_code = false;
VmSampleOptions vm_sample_opts;

/* Window numbers are global so that a state stamped in a window of one carrier is never
 * taken for current in another carrier's window (green threads move). Rate 1: one window,
 * number 1, for every thread: nothing is ever replayed or marked partial, so the profile is
 * the exhaustive one. */
static uint32_t next_window = 1;
#define ONE_WINDOW 1u
#define FOREVER (INT64_MAX / 2)

/* Live threads' states (for the report and -Xstats) and the totals of ended ones. */
static struct {
    pthread_mutex_t lock;
    VmSampleTl *live;
    uint64_t in, out, windows;
    uint64_t nthreads;
} tot = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 0};

void vm_sample_configure(const VmSampleOptions *o) {
    vm_sample_opts = *o;
    if (vm_sample_opts.window == 0) vm_sample_opts.window = VM_SAMPLE_DEFAULT_WINDOW;
    if (!(vm_sample_opts.rate > 0.0 && vm_sample_opts.rate <= 1.0)) vm_sample_opts.rate = 0.05;
    vm_sample_code = o->on;
}

static uint64_t rng_next(VmSampleTl *t) {
    uint64_t x = t->rng; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* A gap's length: uniform in 0 .. 2G, G = window (1 - rate) / rate, the mean that makes
 * windows a fraction [rate] of the ticks. */
static int64_t draw_gap(VmSampleTl *t) {
    double g = (double)vm_sample_opts.window * (1.0 - t->rate) / t->rate;
    uint64_t span = (uint64_t)(2.0 * g) + 1;
    int64_t n = (int64_t)(rng_next(t) % span);
    return n > 0 ? n : 1;
}

void vm_sample_thread_begin(void) {
    if (!vm_sample_code) return;
    VmSampleTl *t = &vm_sample_tl;
    memset(t, 0, sizeof *t);
    t->rate = vm_sample_opts.rate;
    pthread_mutex_lock(&tot.lock);
    uint64_t k = ++tot.nthreads;
    t->next = tot.live;
    tot.live = t;
    t->live = 1;
    pthread_mutex_unlock(&tot.lock);
    uint64_t seed = vm_sample_opts.seed;
    if (seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)t;
    }
    t->rng = (seed ^ (k * UINT64_C(0x9E3779B97F4A7C15))) | 1;
    if (t->rate >= 1.0) {
        t->window = ONE_WINDOW;
        t->left = t->phase = FOREVER;
        t->windows = 1;
        return;
    }
    /* Random phase from the first tick on: the first gap is a whole draw. */
    t->left = t->phase = draw_gap(t);
}

static void fold(VmSampleTl *t) {
    uint64_t run = (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
    if (t->window) t->in += run;
    else t->out += run;
    tot.in += t->in;
    tot.out += t->out;
    tot.windows += t->windows;
    t->in = t->out = 0;
    t->phase = t->left > 0 ? t->left : 0;
}

void vm_sample_thread_end(void) {
    VmSampleTl *t = &vm_sample_tl;
    if (!t->live) return;
    pthread_mutex_lock(&tot.lock);
    fold(t);
    t->live = 0;
    for (VmSampleTl **p = &tot.live; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    pthread_mutex_unlock(&tot.lock);
}

void vm_sample_flip(void) {
    VmSampleTl *t = &vm_sample_tl;
    uint64_t run = (uint64_t)(t->phase - t->left);
    if (t->window) {
        t->in += run;
        t->window = 0;
        t->left = t->phase = draw_gap(t);
    } else {
        t->out += run;
        t->window = __atomic_add_fetch(&next_window, 1, __ATOMIC_RELAXED);
        if (t->window == 0 || t->window == ONE_WINDOW) /* wrapped: 0 means "between windows" */
            t->window = __atomic_add_fetch(&next_window, 2, __ATOMIC_RELAXED);
        t->left = t->phase = (int64_t)vm_sample_opts.window;
        t->windows++;
    }
}

/* Whether [st]'s frames need the window's attention: it was not stamped with it (or
 * [force]), and it has a Lua frame other than [skip] (the frame starting at its entry). */
static bool needs_fix(const State *st, uint32_t w, bool force, const CallInfo *skip) {
    if (!force && st->sample_win == w) return false;
    for (const CallInfo *ci = st->ci; ci != NULL && ci != &st->base_ci; ci = ci->prev)
        if (ci != skip && !(ci->callstatus & CIST_C)) return true;
    return false;
}

/* The frame [ci] of [st] ran before the window: its path is partial (CIST_SAMPLEPART), except
 * a frame standing at a loop header reached by a back edge ([back]), whose path restarts
 * there as the back edge's action would have restarted it. Its bias is set again: a frame
 * started between windows has whatever bias its CallInfo record had before. */
static void mark_path(CallInfo *ci, Proto *p, uint32_t id, bool back) {
    ci->pathbias = vm_pathprof_bias(p, id);
    if (ci->pathbias == VM_PATH_OFF) return;
    if (back) {
        uint32_t r = vm_pathprof_restart(id, (int)(ci->savedpc - p->code));
        if (r != VM_PATH_NORESET) {
            ci->pathreg = r;
            ci->callstatus &= (uint16_t)~CIST_SAMPLEPART;
            return;
        }
    }
    ci->callstatus |= CIST_SAMPLEPART;
}

void vm_sample_join(State *S, int at, bool force) {
    uint32_t w = vm_sample_tl.window;
    const CallInfo *skip = at == VM_SAMPLE_AT_ENTRY ? S->ci : NULL;
    bool any = false;
    for (State *st = S; st != NULL && !any; st = st->resumer) any = needs_fix(st, w, force, skip);
    if (!any) {
        for (State *st = S; st != NULL; st = st->resumer) st->sample_win = w;
        return;
    }
    unsigned needs = vm_prof_needs;
    bool ctx = (needs & (PROF_NEED_CALL | PROF_NEED_RETURN)) != 0;
    bool paths = (needs & PROF_NEED_PATH) != 0;
    uint64_t frames[256];
    int n = 0;
    /* Innermost first, as on_switch (vm_prof.c) collects them; emitted outermost first. */
    for (State *st = S; st != NULL; st = st->resumer) {
        bool fix = force || st->sample_win != w;
        st->sample_win = w;
        for (CallInfo *ci = st->ci; ci != NULL && ci != &st->base_ci; ci = ci->prev) {
            if (ci == skip || (ci->callstatus & CIST_C)) continue;
            Proto *p = ci->func->u.lf->p;
            uint32_t id = p->id ? p->id : vm_prof_newid(p);
            if (fix && paths) mark_path(ci, p, id, at == VM_SAMPLE_AT_BACK && ci == S->ci);
            if (ctx && n < 256) {
                uint32_t depth = ci->depth > (int32_t)EV_DEPTH_MAX ? EV_DEPTH_MAX : (uint32_t)ci->depth;
                uint64_t fromc = (ci->prev->callstatus & CIST_C) ? EV_CALL_FROM_C : 0;
                frames[n++] = ev_make(EV_FRAME, (uint64_t)id | fromc | (uint64_t)depth << 32);
            }
        }
    }
    /* The replay is 'at most 256 frames': deeper stacks keep their outermost 256 (the
     * analyzers attach the window's calls at the right depth under a shorter context). */
    while (n > 0) vm_prof_emit(frames[--n]);
}

/* Ticks inside and outside windows and windows started, over ended threads and live ones
 * (whose current phase counts as far as it ran). */
static void sum_ticks(uint64_t *in, uint64_t *out, uint64_t *windows) {
    pthread_mutex_lock(&tot.lock);
    *in = tot.in, *out = tot.out, *windows = tot.windows;
    for (VmSampleTl *t = tot.live; t; t = t->next) {
        uint64_t run = (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
        *in += t->in + (t->window ? run : 0);
        *out += t->out + (t->window ? 0 : run);
        *windows += t->windows;
    }
    pthread_mutex_unlock(&tot.lock);
}

double vm_sample_fraction(void) {
    if (!vm_sample_code) return 1.0;
    uint64_t in, out, windows;
    sum_ticks(&in, &out, &windows);
    if (in == 0) return 0.0;
    return (double)in / (double)(in + out);
}

void vm_sample_print_stats(FILE *f) {
    if (!vm_sample_code) return;
    uint64_t in, out, windows;
    sum_ticks(&in, &out, &windows);
    fprintf(f, "[stats] sample code: rate %g window %llu ticks: %llu windows, ticks in windows %llu of %llu (fraction %.6f)\n",
            vm_sample_opts.rate, (unsigned long long)vm_sample_opts.window, (unsigned long long)windows,
            (unsigned long long)in, (unsigned long long)(in + out), in + out ? (double)in / (double)(in + out) : 0.0);
}
