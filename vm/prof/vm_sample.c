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
 * Why windows run compiled code (each function's instrumented twin, jit/README.md) rather than
 * the instrumented interpreter, as they first did: a window at the interpreter's speed costs
 * 5% x (interpreter / compiled - 1) of the run at 5%, which alone was about what exhaustive
 * profiling of compiled code costs (callgraph at 5% measured 0.89x the exhaustive overhead,
 * pathprof 1.45x). The twin is compiled lazily, at the first window that meets a frame of the
 * function, so code no window reaches has one version only; its events are the exhaustive
 * compiled code's, which equal the interpreter's by construction (jit/README.md,
 * "Profiling"), so a profile still does not depend on which of them ran a window.
 * -Xsample.windows=interpreted keeps the interpreted windows, to measure against.
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
#include "vm_shadow.h"
#include "vm_thread.h"

/* A countdown that never runs out until a thread begins (vm_sample_thread_begin sets it):
 * compiled code made after the profile library's first start counts ticks on every thread,
 * also on one that has never been through the trampoline (started before that start), and
 * must not leave for the interpreter at each of them. */
_Thread_local VmSampleTl vm_sample_tl = {.left = INT64_MAX / 2};
bool vm_sample_code = false;
VmSampleOptions vm_sample_opts;
bool vm_sample_phase = false;
bool vm_sample_jit_windows = false;
void (*vm_sample_jit_on)(void);
/* The profile library's request: windows open (profile.start) or closed (profile.stop).
 * Written with the world stopped (vm_sample_phase_set), read by each thread at its flips. */
static bool phase_want;

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
    uint64_t in, out, in_w, windows, skipped, cut;
    uint64_t at_level[8];
    uint64_t injit;
    unsigned lowest;     /* the deepest shift a thread ended at */
    uint64_t nthreads;
} tot = {.lock = PTHREAD_MUTEX_INITIALIZER};

void vm_sample_configure(const VmSampleOptions *o) {
    vm_sample_opts = *o;
    if (vm_sample_opts.window == 0) vm_sample_opts.window = VM_SAMPLE_DEFAULT_WINDOW;
    if (vm_sample_opts.twin == 0) vm_sample_opts.twin = VM_SAMPLE_DEFAULT_TWIN;
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

/* Where windows go: stratified at random. The ticks are cut into slots of window / rate
 * ticks, one window per slot, starting at an offset drawn uniformly from 0 .. G (G = window
 * (1 - rate) / rate, the slot less the window) independently in every slot: every tick has
 * the same chance [rate] to be sampled, there is no phase for a program period to alias
 * with, and each stretch of the run gets its share of windows. Rejected: gaps drawn
 * independently (uniform in 0 .. 2G): as unbiased, but the number of windows that land in a
 * phase of the program varies, and for a program made of phases (bench/suite/json.lua:
 * generate, encode, decode, compare) the weighted error at 5% was 3-6 times the stratified
 * one (9-15% against 2-4%, 1024-tick windows).
 * next_gap: the gap to the next window, [rest] ticks being left of the current slot. */
static void set_shift(VmSampleTl *t, unsigned shift);

static int64_t slot_rest(const VmSampleTl *t) {
    return (int64_t)((double)vm_sample_opts.window * (1.0 - t->rate) / t->rate);
}

static int64_t next_gap(VmSampleTl *t, int64_t rest) {
    uint64_t g = (uint64_t)slot_rest(t);
    t->off = (int64_t)(rng_next(t) % (g + 1));
    int64_t n = (rest > 0 ? rest : 0) + t->off;
    return n > 0 ? n : 1;
}

/* Joins [t] to the live threads (under tot.lock). */
static uint64_t register_live(VmSampleTl *t) {
    memset(t, 0, sizeof *t);
    set_shift(t, 0);
    pthread_mutex_lock(&tot.lock);
    uint64_t k = ++tot.nthreads;
    t->next = tot.live;
    tot.live = t;
    t->live = 1;
    pthread_mutex_unlock(&tot.lock);
    return k;
}

/* A thread that ran language code before the first profile.start (the main thread, a
 * carrier, a native thread) reaches the library's flips without vm_sample_thread_begin. */
static void phase_register(VmSampleTl *t) { register_live(t); }

void vm_sample_thread_begin(void) {
    if (!vm_sample_code) return;
    VmSampleTl *t = &vm_sample_tl;
    uint64_t k = register_live(t);
    if (vm_sample_phase) { /* the profile library: its flip opens a window or none */
        t->left = 0;
        return;
    }
    uint64_t seed = vm_sample_opts.seed;
    if (seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)t;
    }
    /* splitmix64 of (seed, thread): nearby seeds give unrelated sequences */
    uint64_t z = seed + k * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    t->rng = (z ^ (z >> 31)) | 1;
    if (t->rate >= 1.0) {
        t->window = ONE_WINDOW;
        t->left = t->phase = FOREVER;
        t->windows = 1;
        return;
    }
    /* Random phase from the first tick on: the first slot starts at the first tick. */
    t->left = t->phase = vm_shadow_on ? vm_shadow_first_check() : next_gap(t, 0);
}

static void fold(VmSampleTl *t) {
    uint64_t run = (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
    if (t->window) {
        t->in += run;
        t->in_w += run << t->wshift;
        t->at_level[t->wshift < 8 ? t->wshift : 7] += run;
    } else {
        t->out += run;
    }
    tot.in += t->in;
    tot.in_w += t->in_w;
    tot.out += t->out;
    tot.windows += t->windows;
    tot.skipped += t->skipped;
    tot.cut += t->cut;
    tot.injit += t->injit;
    for (int k = 0; k < 8; k++) tot.at_level[k] += t->at_level[k];
    if (t->shift > tot.lowest) tot.lowest = t->shift;
    t->in = t->out = t->in_w = t->windows = t->skipped = t->cut = t->injit = 0;
    memset(t->at_level, 0, sizeof t->at_level);
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

/* -Xsample.adaptive. A window is run in pieces of ADAPT_PIECE ticks; before each, the ring
 * must have room for twice the most events a piece has produced (at least a chunk's worth,
 * ADAPT_MIN_ROOM): else the window is not opened (or ends early), and the stream's rate is
 * halved (shift + 1, at most ADAPT_MAX_SHIFT); a window that finds room for ADAPT_CALM times
 * that doubles it again. So the producer never waits on its ring, whatever the analyzer's pace: the
 * ring fills only inside a piece, which the room test sized. Each window's events carry the
 * weight 2^shift of its rate (EV_RATE before the window when it changed), and its ticks count
 * 2^shift times in the fraction (in_w): a tick is sampled with probability rate / 2^shift and
 * stands for 2^shift ticks, so the estimate is unbiased across the changes (Horvitz-Thompson).
 * Rejected: lowering the rate without weights (the estimate then leans toward what ran while
 * the analyzer kept up), dropping events at a full ring (half-seen paths and contexts). */
#define ADAPT_PIECE 64
#define ADAPT_MIN_ROOM 4096
#define ADAPT_MAX_SHIFT 12
#define ADAPT_CALM 2

static uint64_t produced(void) {
    VmProfStream *s = vm_prof_tl;
    return s != NULL && s->kind == VM_PS_EXHAUSTIVE && s->ring != NULL ? cab_producer_count(&s->prod) : 0;
}

/* Room in the stream's ring for [times] x what a piece needs. */
static bool ring_has_room(const VmSampleTl *t, unsigned times) {
    VmProfStream *s = vm_prof_tl;
    if (s == NULL || s->kind != VM_PS_EXHAUSTIVE || s->ring == NULL) return true;
    uint64_t need = 2 * t->wevents;
    return cab_has_room(&s->prod, times * (need > ADAPT_MIN_ROOM ? need : ADAPT_MIN_ROOM));
}

static void set_shift(VmSampleTl *t, unsigned shift) {
    t->shift = (uint8_t)shift;
    t->rate = vm_sample_opts.rate / (double)(1u << shift);
}

/* Halve the rate, at most once per half a slot at the current rate: a ring the analyzer has
 * not drained yet is no news, and halving at every piece of a window it cut would take the
 * rate far below what the analyzer can follow; a ring still full a slot later is. */
static void slow_down(VmSampleTl *t) {
    uint64_t now = t->in + t->out; /* ticks so far: vm_sample_flip has counted the last phase */
    if (now < t->hold || t->shift >= ADAPT_MAX_SHIFT) return;
    set_shift(t, t->shift + 1u);
    t->hold = now + (uint64_t)(slot_rest(t) + (int64_t)vm_sample_opts.window) / 2;
}

/* The open window's next piece (adaptive), or its end: false when the window must close. */
static bool next_piece(VmSampleTl *t) {
    uint64_t now = produced();
    if (now - t->wstart > t->wevents) t->wevents = now - t->wstart;
    if (t->wleft <= 0) return false;
    if (!ring_has_room(t, 1)) { /* the analyzer fell behind inside the window */
        t->cut++;
        slow_down(t);
        return false;
    }
    t->left = t->phase = t->wleft < ADAPT_PIECE ? t->wleft : ADAPT_PIECE;
    t->wleft -= t->left;
    t->wstart = now;
    return true;
}

/* A new window number, never 0 ("between windows") nor ONE_WINDOW (rate 1's). */
static uint32_t new_window(void) {
    uint32_t w = __atomic_add_fetch(&next_window, 1, __ATOMIC_RELAXED);
    if (w == 0 || w == ONE_WINDOW) /* wrapped */
        w = __atomic_add_fetch(&next_window, 2, __ATOMIC_RELAXED);
    return w;
}

static void open_window(VmSampleTl *t) {
    bool adaptive = vm_sample_opts.adaptive;
    if (adaptive) {
        if (!ring_has_room(t, 1)) { /* stay between windows, at half the rate */
            t->skipped++;
            int64_t rest = slot_rest(t) - t->off + (int64_t)vm_sample_opts.window;
            slow_down(t);
            t->left = t->phase = next_gap(t, rest);
            return;
        }
        if (t->shift > 0 && ring_has_room(t, ADAPT_CALM)) set_shift(t, t->shift - 1u); /* keeping up */
        if (t->shift != t->emitted) {
            vm_prof_emit(ev_make(EV_RATE, t->shift));
            t->emitted = t->shift;
        }
    }
    t->window = new_window();
    t->wshift = t->shift;
    t->windows++;
    t->left = t->phase = (int64_t)vm_sample_opts.window;
    if (adaptive) {
        t->wleft = t->left;
        t->left = 0; /* next_piece sizes the first piece */
        t->wstart = produced();
        next_piece(t);
    }
}

/* The profile library's flip (vm_sample_phase): only vm_sample_phase_set forces one (a
 * countdown of FOREVER never runs out), and each opens a new window or none, as the library
 * asks. A new number every time: the instrumented copy sees its window is not the one its
 * frames were joined in (SAMPLE_STALE) and replays them, so a phase never continues the
 * previous phase's calling contexts. A thread without a stream (one that existed before the
 * first profile.start: vm_prof_phase.c) never opens one. */
static void phase_register(VmSampleTl *t);

static void phase_flip(VmSampleTl *t) {
    if (!t->live) phase_register(t); /* so that the next vm_sample_phase_set reaches it */
    t->left = t->phase = FOREVER; /* ticks are not counted: the profile is not an estimate */
    t->window = 0;
    if (!__atomic_load_n(&phase_want, __ATOMIC_RELAXED)) return;
    if (!vm_prof_has_stream() && !vm_prof_phase_stream()) return;
    t->window = new_window();
    t->windows++;
}

void vm_sample_phase_set(bool on) {
    phase_want = on;
    vm_sample_tl.left = 0; /* the caller's own flip: at its next tick or check */
    pthread_mutex_lock(&tot.lock);
    for (VmSampleTl *t = tot.live; t; t = t->next) t->left = 0;
    pthread_mutex_unlock(&tot.lock);
}

void vm_sample_flip(void) {
    VmSampleTl *t = &vm_sample_tl;
    if (vm_sample_phase) {
        phase_flip(t);
        return;
    }
    if (vm_shadow_on) { /* no window in the program itself: a check of the shadow scheduler */
        vm_shadow_flip();
        return;
    }
    uint64_t run = (uint64_t)(t->phase - t->left);
    if (t->window) {
        t->in += run;
        t->in_w += run << t->wshift;
        t->at_level[t->wshift < 8 ? t->wshift : 7] += run;
        if (vm_sample_opts.adaptive && next_piece(t)) return; /* the same window goes on */
        t->window = 0;
        /* the slot's rest, and what an early end left of the window */
        int64_t unrun = (t->left > 0 ? t->left : 0) + (vm_sample_opts.adaptive ? t->wleft : 0);
        t->left = t->phase = next_gap(t, slot_rest(t) - t->off + unrun);
    } else {
        t->out += run;
        open_window(t);
    }
}

/* Whether [st]'s frames need replaying: it was not stamped with the window (or [force]), and
 * it has a Lua frame other than [skip] (the frame starting at its entry). Looks at the top
 * frames only: a state's frames are Lua frames but for the C ones between them. */
static bool needs_fix(const State *st, uint32_t w, bool force, const CallInfo *skip) {
    if (!force && st->sample_win == w) return false;
    for (const CallInfo *ci = st->ci; ci != NULL && ci != &st->base_ci; ci = ci->prev)
        if (ci != skip && !(ci->callstatus & CIST_C)) return true;
    return false;
}

void vm_sample_adopt(CallInfo *ci, Proto *p) {
    ci->samplewin = vm_sample_tl.window;
    ci->callstatus |= CIST_SAMPLEPART;
    if (!(vm_prof_needs & PROF_NEED_PATH)) {
        ci->pathbias = VM_PATH_OFF;
        return;
    }
    uint32_t id = p->id ? p->id : vm_prof_newid(p);
    ci->pathbias = vm_pathprof_bias(p, id);
}

/* The frame [ci] of function [p] stands at a loop header reached by a back edge as the window
 * starts: its path restarts there as the back edge's action would have restarted it, so it is
 * whole from here (else it stays partial: vm_sample_adopt). */
static void restart_path(CallInfo *ci, Proto *p) {
    vm_sample_adopt(ci, p);
    if (ci->pathbias == VM_PATH_OFF) return;
    uint32_t r = vm_pathprof_restart(p->id, (int)(ci->savedpc - p->code));
    if (r == VM_PATH_NORESET) return;
    ci->pathreg = r;
    ci->callstatus &= (uint16_t)~CIST_SAMPLEPART;
}

void vm_sample_adopt_ci(CallInfo *ci) { vm_sample_adopt(ci, ci->func->u.lf->p); }

void vm_sample_frame_start(State *S, CallInfo *ci) {
    vm_prof_frame_start(S, ci);
    ci->callstatus &= (uint16_t)~CIST_SAMPLEPART; /* a new path, wholly in the window */
    ci->samplewin = vm_sample_tl.window;
}

/* Called before the results move (jit/), so ci->func is still the function. */
void vm_sample_frame_exit(CallInfo *ci, bool ret) {
    Proto *p = ci->func->u.lf->p;
    vm_sample_own(ci, p);
    vm_sample_frame_exit_events(ci, p->id, ret);
}

/* Replay: at most this many frames, the innermost (a deeper stack's calls in the window are
 * attached under a context that lacks its outermost frames; a bounded cost per window). */
#define REPLAY_MAX 256

void vm_sample_join(State *S, int at, bool force) {
    uint32_t w = vm_sample_tl.window;
    /* The profile library: a carrier's stream dropped its switches while the library was
     * stopped (or did not exist yet): say which green thread runs before its frames. */
    if (vm_sample_phase && vm_prof_tl->carrier >= 0) vm_prof_emit(ev_make(EV_THREAD, vm_thread_id(S)));
    const CallInfo *skip = at == VM_SAMPLE_AT_ENTRY ? S->ci : NULL;
    if (at == VM_SAMPLE_AT_BACK && !(S->ci->callstatus & CIST_C)) restart_path(S->ci, S->ci->func->u.lf->p);
    bool any = false;
    for (State *st = S; st != NULL && !any; st = st->resumer) any = needs_fix(st, w, force, skip);
    for (State *st = S; st != NULL; st = st->resumer) st->sample_win = w;
    if (!any || !(vm_prof_needs & (PROF_NEED_CALL | PROF_NEED_RETURN))) return;
    uint64_t frames[REPLAY_MAX];
    int n = 0;
    /* Innermost first, as on_switch (vm_prof.c) collects them; emitted outermost first. */
    for (State *st = S; st != NULL && n < REPLAY_MAX; st = st->resumer)
        for (CallInfo *ci = st->ci; ci != NULL && ci != &st->base_ci && n < REPLAY_MAX; ci = ci->prev) {
            if (ci == skip || (ci->callstatus & CIST_C)) continue;
            Proto *p = ci->func->u.lf->p;
            uint32_t id = p->id ? p->id : vm_prof_newid(p);
            uint32_t depth = ci->depth > (int32_t)EV_DEPTH_MAX ? EV_DEPTH_MAX : (uint32_t)ci->depth;
            uint64_t fromc = (ci->prev->callstatus & CIST_C) ? EV_CALL_FROM_C : 0;
            frames[n++] = ev_make(EV_FRAME, (uint64_t)id | fromc | (uint64_t)depth << 32);
        }
    while (n > 0) vm_prof_emit(frames[--n]);
}

/* The run's counts so far: ended threads' and live ones' (whose current phase counts as far
 * as it ran). Returned in a VmSampleTl used as a plain record. */
static VmSampleTl sum_ticks(void) {
    VmSampleTl r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&tot.lock);
    r.in = tot.in, r.out = tot.out, r.in_w = tot.in_w, r.windows = tot.windows;
    r.skipped = tot.skipped, r.cut = tot.cut, r.shift = (uint8_t)tot.lowest, r.injit = tot.injit;
    memcpy(r.at_level, tot.at_level, sizeof r.at_level);
    for (VmSampleTl *t = tot.live; t; t = t->next) {
        uint64_t run = (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
        r.in += t->in + (t->window ? run : 0);
        r.in_w += t->in_w + (t->window ? run << t->wshift : 0);
        if (t->window) r.at_level[t->wshift < 8 ? t->wshift : 7] += run;
        r.out += t->out + (t->window ? 0 : run);
        r.windows += t->windows;
        r.skipped += t->skipped;
        r.cut += t->cut;
        r.injit += t->injit;
        for (int k = 0; k < 8; k++) r.at_level[k] += t->at_level[k];
        if (t->shift > r.shift) r.shift = t->shift;
    }
    pthread_mutex_unlock(&tot.lock);
    return r;
}

void vm_sample_open_shadow(int64_t length) {
    VmSampleTl *t = &vm_sample_tl;
    t->window = __atomic_add_fetch(&next_window, 1, __ATOMIC_RELAXED);
    if (t->window == 0 || t->window == ONE_WINDOW) t->window = __atomic_add_fetch(&next_window, 2, __ATOMIC_RELAXED);
    t->in = t->in_w = t->injit = 0; /* injit: the shadow's compiled window ticks (-Xstats) */
    t->wshift = 0;
    t->windows = 1;
    t->left = t->phase = length > 0 ? length : 1;
}

uint64_t vm_sample_ticks(void) {
    VmSampleTl r = sum_ticks();
    return r.in + r.out;
}

double vm_sample_fraction(void) {
    if (!vm_sample_code) return 1.0;
    if (vm_shadow_on) return vm_shadow_fraction();
    VmSampleTl r = sum_ticks();
    if (r.in + r.out == 0) return 0.0;
    return (double)r.in_w / (double)(r.in + r.out);
}

void vm_sample_print_stats(FILE *f) {
    if (!vm_sample_code || vm_shadow_on) return; /* shadows: vm_shadow_print_stats */
    VmSampleTl r = sum_ticks();
    if (vm_sample_phase) { /* ticks are not counted (phase_flip): windows are the phases' */
        fprintf(f, "[stats] profile library: %llu windows (one per thread that ran in each phase)\n",
                (unsigned long long)r.windows);
        return;
    }
    uint64_t all = r.in + r.out;
    fprintf(f, "[stats] sample code: rate %g window %llu ticks: %llu windows, ticks in windows %llu of %llu (fraction %.6f)\n",
            vm_sample_opts.rate, (unsigned long long)vm_sample_opts.window, (unsigned long long)r.windows,
            (unsigned long long)r.in, (unsigned long long)all, all ? (double)r.in_w / (double)all : 0.0);
    /* Where the windows ran: compiled code counts its own window ticks (the twins' ticks and
     * their C helpers', jit/); the rest ran in the instrumented interpreter. */
    fprintf(f, "[stats] sample windows: %s; window ticks in compiled code %llu, interpreted %llu\n",
            vm_sample_jit_windows ? "compiled" : "interpreted", (unsigned long long)r.injit,
            (unsigned long long)(r.in > r.injit ? r.in - r.injit : 0));
    if (!vm_sample_opts.adaptive) return;
    fprintf(f, "[stats] sample adaptive: windows not opened %llu, ended early %llu (ring filling); ticks in windows per rate:",
            (unsigned long long)r.skipped, (unsigned long long)r.cut);
    for (int k = 0; k < 8; k++)
        if (r.at_level[k]) fprintf(f, " %g%s: %llu", vm_sample_opts.rate / (double)(1u << k), k == 7 ? " or less" : "",
                                   (unsigned long long)r.at_level[k]);
    fprintf(f, "; lowest rate at a thread's end or now %g\n", vm_sample_opts.rate / (double)(1u << r.shift));
}
