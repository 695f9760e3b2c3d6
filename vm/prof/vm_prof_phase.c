/* vm_prof_phase.c: profiling a phase of a program (vm_prof_phase.h has the design).
 *
 * Rejected designs:
 *   - a check of a "profiling requested" flag in the plain interpreter and compiled code
 *     (at entries or back edges): a cost on every run for a feature most runs never use;
 *     the hook mask the plain copies already test after calls into C and sampled
 *     instrumentation's trampoline cover the same ground for nothing;
 *   - turning the run's mode (instrumented copies, instrumented compiled code) on in place:
 *     compiled code is generated for one mode, and frames running in the plain copy would
 *     go on uninstrumented until they return, so a phase's counts would miss calls;
 *   - concurrent analysis (CAB rings and analyzer threads started at the first start): a
 *     snapshot would have to flush every producer's partial chunk and wait for the
 *     analyzers while the program is stopped, and the analyzer threads would stay for the
 *     rest of the run. Inline analysis keeps a snapshot exact and costs nothing once stopped;
 *     the phase pays the analysis on its own threads (as -Xanalysis=sequential does).
 *   - analyses that need events outside windows (inputsize: instruction counts from the
 *     thread's start, external input and synchronisation order emitted by library code):
 *     refused, their counts would not be a phase's. */
#include "vm_prof_phase.h"

#include "vm_prof.h"
#include "vm_sample.h"
#include "vm_thread.h"

#include "vm_debug.h"

/* What the library can count for a phase: events emitted by the instrumented interpreter
 * inside a window only. */
#define PHASE_NEEDS (PROF_NEED_CALL | PROF_NEED_SITE | PROF_NEED_RETURN | PROF_NEED_PATH | PROF_NEED_MEM | \
                     PROF_NEED_PC)

/* Between start and stop, and whether a start happened (the run is the library's). Both
 * change only inside a world stop (set_op), so two threads calling start (or stop)
 * at once are serialised there: one succeeds, the other gets the error. */
static bool profiling;
static bool started;

/* The first start: the run becomes the library's (vm_prof.c), with the world stopped so
 * that no thread enters the trampoline before the phase flag says how it flips. */
static const char *begin(const ProfAnalysis *const *an, int n) {
    const char *err = vm_prof_phase_begin(an, n);
    if (err != NULL) return err;
    vm_sample_phase = true; /* before vm_sample_code: a trampoline's flip is the library's */
    vm_sample_code = true;
    if (vm_sample_jit_on) vm_sample_jit_on();
    started = true;
    return NULL;
}

typedef struct SetOp {
    bool on;
    const ProfAnalysis *const *an;
    int n;
    const char *err;
} SetOp;

static void set_op(void *arg) {
    SetOp *o = arg;
    if (o->on == profiling) {
        o->err = o->on ? "already started (call profile.stop first)" : "not started";
        return;
    }
    if (o->on && !started) {
        if (o->n == 0) {
            o->err = "the first profile.start names its analyses";
            return;
        }
        if ((o->err = begin(o->an, o->n)) != NULL) return;
    } else if (o->on && o->n > 0) {
        const ProfAnalysis *have[VM_PROF_MAX_ANALYSES];
        int m = vm_prof_phase_analyses(have);
        bool same = m == o->n;
        for (int i = 0; same && i < o->n; i++) same = have[i] == o->an[i];
        if (!same) {
            o->err = "the analyses are fixed by the first profile.start";
            return;
        }
    }
    vm_prof_phase_pause(!o->on);
    vm_sample_phase_set(o->on);
    profiling = o->on;
}

const char *vm_prof_phase_start(State *S, const ProfAnalysis *const *an, int n) {
    if (profiling) return "already started (call profile.stop first)"; /* before stopping the world */
    if (vm_prof_cmdline_active())
        return "this run is already profiled from the command line (-Xprofile): use one or the other";
    if (vm_sample_code && !vm_sample_phase) return "this run samples its code (-Xsample.mode): use one or the other";
    for (int i = 0; i < n; i++)
        if (an[i]->needs & ~PHASE_NEEDS) return "cannot profile a phase with this analysis (it needs events from the program's start)";
    SetOp o = {true, an, n, NULL};
    vm_safepoint_run(S, set_op, &o);
    if (o.err != NULL) return o.err;
    /* The caller's frames (and each C level below them, in turn) move to the trampoline at
     * their next check: right after this call returns (vm_interp.c, execute_switched). */
    S->hookmask |= VM_MASKSWITCH;
    return NULL;
}

const char *vm_prof_phase_stop(State *S) {
    if (!profiling) return "not started";
    SetOp o = {false, NULL, 0, NULL};
    vm_safepoint_run(S, set_op, &o);
    return o.err;
}

bool vm_prof_phase_on(void) { return profiling; }
bool vm_prof_phase_started(void) { return started; }

typedef struct Report {
    FILE *f;
    ProfFormat format;
    int rc;
} Report;

static void report_op(void *arg) {
    Report *r = arg;
    r->rc = vm_prof_phase_report(r->f, r->format);
}

int vm_prof_phase_write(State *S, FILE *f, ProfFormat format) {
    if (!started) return -2;
    Report r = {f, format, 0};
    vm_safepoint_run(S, report_op, &r);
    return r.rc;
}

static void clear_op(void *arg) { *(bool *)arg = vm_prof_phase_reset(); }

bool vm_prof_phase_clear(State *S) {
    if (!started) return true;
    bool ok = true;
    vm_safepoint_run(S, clear_op, &ok);
    return ok;
}

int vm_prof_phase_list(const ProfAnalysis **an) { return started ? vm_prof_phase_analyses(an) : 0; }
