/* vm_prof.c: profiling on the VM side (vm_prof.h): function ids and names, the sink, and
 * the lifecycle of a profiled run (ring + analyzer pool, or the inline analysis). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_api.h"
#include "trace_api.h"
#include "vm_compile.h"
#include "vm_state.h"
#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_sample.h"
#include "vm_shadow.h"
#include "vm_thread.h"
#include "vm_threadimpl.h"


/* ======================================================================
 * Function ids and names
 * ====================================================================== */

/* Where a function is (ProfSource, for -Xprofile.format=annotate): its file (malloc'd; NULL
 * for a chunk not loaded from a file) and lines. */
typedef struct FnSource {
    char *file;
    int first, last;
    int32_t *lines; /* malloc'd copy of the Proto's lineinfo (ncode lines), only when an
                       analysis needs instructions' lines (PROF_NEED_PC): the Proto may be
                       collected before the report */
    uint32_t ncode;
} FnSource;

/* names[id]: display name of function id (malloc'd); srcs[id]: where it is; ids are dense
 * from 1. */
static struct {
    pthread_mutex_t lock;
    uint32_t next; /* last id given */
    char **names;
    FnSource *srcs;
    size_t cap;
} reg = {PTHREAD_MUTEX_INITIALIZER, 0, NULL, NULL, 0};

static _Noreturn void oom(void) {
    fprintf(stderr, "tandem: profiler: out of memory\n");
    abort();
}

uint32_t vm_prof_newid(Proto *p) {
    /* A shadow cannot name a function: the name would stay in its copy of the process
     * (vm_shadow.c, "Function ids"). */
    if (vm_shadow_child) vm_shadow_end(VM_SHADOW_END_UNNAMED);
    char chunk[VM_IDSIZE];
    if (p->source != NULL)
        vm_chunkid(chunk, sizeof chunk, p->source->data, p->source->len);
    else
        snprintf(chunk, sizeof chunk, "?");
    char buf[VM_IDSIZE + 128];
    if (p->linedefined == 0)
        snprintf(buf, sizeof buf, "main chunk (%s)", chunk);
    else if (p->name != NULL)
        snprintf(buf, sizeof buf, "%.100s (%s:%d)", p->name->data, chunk, (int)p->linedefined);
    else
        snprintf(buf, sizeof buf, "function <%s:%d>", chunk, (int)p->linedefined);
    char *name = strdup(buf);
    if (name == NULL) oom();
    /* A chunk loaded from a file has the source "@path" (lua5.4's convention). */
    char *file = NULL;
    if (p->source != NULL && p->source->len > 1 && p->source->data[0] == '@') {
        file = strdup(p->source->data + 1);
        if (file == NULL) oom();
    }

    int32_t *lines = NULL;
    uint32_t ncode = 0;
    if ((vm_prof_needs & PROF_NEED_PC) && p->lineinfo != NULL && p->ncode > 0) {
        ncode = (uint32_t)p->ncode;
        lines = malloc(ncode * sizeof *lines);
        if (lines == NULL) oom();
        memcpy(lines, p->lineinfo, ncode * sizeof *lines);
    }

    pthread_mutex_lock(&reg.lock);
    uint32_t id = p->id; /* another native thread may have been first */
    if (id == 0) {
        id = ++reg.next;
        if (id >= reg.cap) {
            size_t cap = reg.cap ? reg.cap * 2 : 256;
            char **n = realloc(reg.names, cap * sizeof *n);
            if (n == NULL) oom();
            memset(n + reg.cap, 0, (cap - reg.cap) * sizeof *n);
            reg.names = n;
            FnSource *sr = realloc(reg.srcs, cap * sizeof *sr);
            if (sr == NULL) oom();
            memset(sr + reg.cap, 0, (cap - reg.cap) * sizeof *sr);
            reg.srcs = sr;
            reg.cap = cap;
        }
        reg.names[id] = name;
        reg.srcs[id] = (FnSource){file, (int)p->linedefined, (int)p->lastlinedefined, lines, ncode};
        name = NULL;
        file = NULL;
        lines = NULL;
        __atomic_store_n(&p->id, id, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&reg.lock);
    free(name);
    free(file);
    free(lines);
    return id;
}

const char *vm_prof_funcname(uint32_t id) {
    pthread_mutex_lock(&reg.lock);
    const char *n = id < reg.cap && reg.names[id] ? reg.names[id] : "?";
    pthread_mutex_unlock(&reg.lock);
    return n;
}

static const char *fname_cb(uint32_t id, void *ctx) {
    (void)ctx;
    return vm_prof_funcname(id);
}

/* ProfReportOpts.fsource. Report time: every id was given before (the lock orders it). */
static int fsource_cb(uint32_t id, ProfSource *out, void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&reg.lock);
    int ok = id >= 1 && id <= reg.next;
    if (ok) {
        const FnSource *f = &reg.srcs[id];
        *out = (ProfSource){f->file, f->first, f->last, f->lines, f->ncode};
    }
    pthread_mutex_unlock(&reg.lock);
    return ok ? 0 : -1;
}

/* ======================================================================
 * Streams and lifecycle
 * ====================================================================== */

bool vm_prof_instrumented = false;
uint64_t vm_prof_sync_seq; /* the last EV_SYNC number taken (vm_prof_sync_take) */
unsigned vm_prof_needs = 0;


static struct {
    bool active;
    VmProfOptions opt;
    CabAnalyzerPool *pool;
    pthread_mutex_t lock;        /* guards the stream list */
    VmProfStream *streams;       /* every stream, newest first */
    int nstreams;
    bool finished;
    bool phase;                  /* started by the profile library (vm_prof_phase_begin) */
    bool paused;                 /* phase: the library is stopped; events are dropped */
} run = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Streams without a ring point their producer at a MAGIC word, so that the JIT's inline
 * enqueue (which tests the slot for CLEAR, or for MAGIC when sampling) always takes its slow
 * path, vm_prof_emit, for them. discard_stream is where events go once the run is over
 * (finalizers at exit, a thread the shutdown stopped in the middle of a call): counted
 * nowhere. */
static uint64_t no_ring_slot = CAB_MAGIC;
static VmProfStream discard_stream = {.prod = {.cur = &no_ring_slot}, .kind = VM_PS_WORD};
/* A thread's stream until it gets one (VM_PS_NONE, vm_prof.h): nothing is counted. */
static VmProfStream none_stream = {.prod = {.cur = &no_ring_slot}, .kind = VM_PS_NONE};
_Thread_local VmProfStream *vm_prof_tl = &none_stream;

bool vm_prof_has_stream(void) { return vm_prof_tl != &none_stream && vm_prof_tl != NULL; }

void vm_prof_emit_other(VmProfStream *s, uint64_t ev) {
    switch (s->kind) {
    case VM_PS_SAMPLING:
        cab_push_sampling(&s->prod, ev);
        break;
    case VM_PS_SHADOW:
        vm_shadow_put(ev);
        break;
    case VM_PS_NONE:
        break;
    case VM_PS_SEQUENTIAL:
        /* The profile library stopped: what a thread emits before its flip takes it out of
         * its window is not part of any phase. The flag changes only with the world stopped
         * (vm_prof_phase.c), so every thread sees each change before it runs again. */
        if (run.paused) break;
        s->nword++;
        for (int i = 0; i < run.opt.nanalyses; i++) run.opt.analyses[i]->consume(s->st[i], &ev, 1);
        break;
    default: /* VM_PS_WORD: the instrument-only stage */
        __atomic_store_n(&s->word, ev, __ATOMIC_RELAXED);
        s->nword++;
        break;
    }
}

void vm_prof_emit_mem_slow(VmProfStream *s, uint64_t ev) {
    if (s->kind != VM_PS_EXHAUSTIVE) {
        vm_prof_emit_other(s, ev);
        return;
    }
    if (cab_push_would_wait(&s->prod)) s->unsafe_waits++;
    cab_push_slow(&s->prod, ev);
}

void vm_prof_emit_mem_pc(const CallInfo *ci, const Instr *ipc, uint64_t ev) {
    const Proto *p = ci->func->u.lf->p;
    vm_prof_emit_mem(vm_prof_pc_event(p->id, (uint32_t)(ipc - p->code)));
    vm_prof_emit_mem(ev);
}

void vm_prof_lib_pc(const State *S) {
    const CallInfo *ci = S->ci;
    for (;;) {
        while (ci != NULL && (ci->callstatus & CIST_C)) ci = ci->prev;
        if (ci != NULL || S->resumer == NULL) break;
        S = S->resumer;
        ci = S->ci;
    }
    uint32_t fid = 0, pc = 0;
    if (ci != NULL) {
        const Proto *p = ci->func->u.lf->p;
        fid = __atomic_load_n(&p->id, __ATOMIC_ACQUIRE); /* 0 (unknown) if never profiled */
        pc = (uint32_t)((ci->savedpc - p->code) - 1);     /* savedpc is past the call */
    }
    vm_prof_emit(vm_prof_pc_event(fid, pc));
}

/* Analyzer side: the consume function of a stream's CAB. */
static void stream_consume(void *ctx, const uint64_t *ev, size_t n) {
    VmProfStream *s = ctx;
    if (n == 0) { /* sampling: a gap before the next burst (cab_api.h) */
        static const uint64_t gap = (uint64_t)EV_GAP << EV_KIND_SHIFT;
        for (int i = 0; i < run.opt.nanalyses; i++) run.opt.analyses[i]->consume(s->st[i], &gap, 1);
        return;
    }
    if (run.opt.test_delay_us) {
        struct timespec ts = {0, (long)run.opt.test_delay_us * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < run.opt.nanalyses; i++) run.opt.analyses[i]->consume(s->st[i], ev, n);
}

/* Sharded (-Xanalysis.shards): shard [shard]'s states, on that shard's analyzer thread. */
static void stream_consume_shard(void *ctx, unsigned shard, const uint64_t *ev, size_t n) {
    VmProfStream *s = ctx;
    void **st = shard == 0 ? s->st : s->sst[shard];
    if (run.opt.test_delay_us) {
        struct timespec ts = {0, (long)run.opt.test_delay_us * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < run.opt.nanalyses; i++) run.opt.analyses[i]->consume(st[i], ev, n);
}

static void stream_count_only(void *ctx, const uint64_t *ev, size_t n) {
    (void)ctx, (void)ev, (void)n;
    if (run.opt.test_delay_us) {
        struct timespec ts = {0, (long)run.opt.test_delay_us * 1000};
        nanosleep(&ts, NULL);
    }
}

static void stream_done(void *ctx, const CabStats *st) {
    VmProfStream *s = ctx;
    s->stats = *st;
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

/* A producer waiting on a full ring counts as stopped for safepoints: the runtime may
 * collect meanwhile. The wait runs as a blocking region (vm_blocking_call): it touches only
 * the ring and, under -Xcab.full=self/adaptive, the analysis state, never a Value. 'waiting'
 * tells the shutdown that the thread is still inside the ring: it is cleared when the wait
 * is over, before the region's end, where the thread may stay parked for good. */
static void stream_block_begin(void *ctx) {
    VmProfStream *s = ctx;
    __atomic_store_n(&s->waiting, 1, __ATOMIC_RELEASE);
}

typedef struct RingWait {
    VmProfStream *s;
    void (*wait)(void *arg);
    void *arg;
} RingWait;

static void *ring_wait(void *p) {
    RingWait *w = p;
    w->wait(w->arg);
    __atomic_store_n(&w->s->waiting, 0, __ATOMIC_RELEASE);
    return NULL;
}

static void stream_block_wait(void *ctx, void (*wait)(void *arg), void *arg) {
    RingWait w = {ctx, wait, arg};
    uint64_t t0 = trace_on() ? trace_now() : 0; /* -Xtrace: the long wait, as a span */
    vm_blocking_call(NULL, ring_wait, &w);
    if (t0 != 0) trace_span(TRACE_RING_FULL, t0, ((VmProfStream *)ctx)->thread_id, 0);
}

static _Noreturn void fatal(const char *what) {
    fprintf(stderr, "tandem: profiler: %s\n", what);
    abort();
}

static VmProfStream *stream_new(uint64_t thread_id, int carrier) {
    VmProfStream *s = calloc(1, sizeof *s);
    if (s == NULL) fatal("out of memory");
    s->thread_id = thread_id;
    s->carrier = carrier;
    s->analyzer = -1;
    const VmProfOptions *o = &run.opt;
    s->kind = vm_prof_kind(); /* the one the JIT compiled its enqueues for */
    if (s->kind == VM_PS_SEQUENTIAL || s->kind == VM_PS_WORD) {
        s->prod.cur = &no_ring_slot;
    } else {
        CabConfig cfg = o->cab;
        /* the enqueue stage samples too: its ring never blocks, and nobody reads it */
        cfg.mode = s->kind == VM_PS_SAMPLING ? CAB_MODE_SAMPLING : CAB_MODE_EXHAUSTIVE;
        /* -Xsample.mode=code: events only inside windows, a fraction [rate] of the ticks at
         * most (the adaptive rate only lowers it), so the idle analyzer may poll the ring
         * less often (cab_analyzer.c, "Idle sleeps"). The profile library's phases never
         * have rings (vm_prof_phase_begin: sequential). */
        if (vm_sample_code && !vm_sample_phase) cfg.producer_share = vm_sample_opts.rate;
        CabBlockHooks hooks = {.block_begin = stream_block_begin, .block_wait = stream_block_wait, .ctx = s};
        const char *err = NULL;
        s->ring = cab_ring_new(&cfg, &hooks, &s->prod, &err);
        if (s->ring == NULL) fatal(err ? err : "cannot create a ring");
    }
    unsigned shards = s->ring != NULL && o->stage == VM_STAGE_FULL && o->shards > 1 ? o->shards : 1;
    if (o->stage == VM_STAGE_FULL)
        for (int i = 0; i < o->nanalyses; i++) {
            if ((s->st[i] = o->analyses[i]->open()) == NULL) fatal("out of memory");
            if (shards == 1) continue;
            o->analyses[i]->shard(s->st[i], 0, shards);
            for (unsigned j = 1; j < shards; j++) {
                if ((s->sst[j][i] = o->analyses[i]->open()) == NULL) fatal("out of memory");
                o->analyses[i]->shard(s->sst[j][i], j, shards);
            }
        }
    if (s->ring != NULL && o->stage != VM_STAGE_ENQUEUE) {
        CabConsumer c = {.consume = o->stage == VM_STAGE_FULL ? stream_consume : stream_count_only,
                         .done = stream_done, .ctx = s};
        if (shards > 1) {
            c.consume_shard = stream_consume_shard;
            c.nshards = shards;
        }
        s->analyzer = cab_analyzer_register(run.pool, s->ring, &c, -1);
        if (s->analyzer < 0) fatal("cannot shard the analysis over the analyzer threads");
    }
    pthread_mutex_lock(&run.lock);
    s->next = run.streams;
    run.streams = s;
    run.nstreams++;
    pthread_mutex_unlock(&run.lock);
    return s;
}

/* Close a stream's producer side (its thread will not push again). */
static void stream_close(VmProfStream *s) {
    if (s->closed) return;
    s->closed = true;
    if (s->ring == NULL) return;
    if (s->kind == VM_PS_SAMPLING && run.opt.stage == VM_STAGE_ENQUEUE) {
        /* Nobody consumes it: record what was produced and free it. */
        s->stats.produced = cab_producer_count(&s->prod);
        cab_close(&s->prod);
        cab_ring_free(s->ring);
        s->ring = NULL;
        s->done = 1;
        return;
    }
    cab_close(&s->prod);
}

void vm_prof_thread_begin(uint64_t thread_id, int carrier) {
    if (!run.active) return;
    VmProfStream *s = stream_new(thread_id, carrier);
    vm_prof_tl = s;
    vm_sample_thread_begin();
    if (thread_id != 0) {
        vm_prof_emit_icount();
        vm_prof_emit(ev_make(EV_THREAD, thread_id));
    }
}

void vm_prof_thread_end(void) {
    VmProfStream *s = vm_prof_tl;
    vm_sample_thread_end(); /* also a thread without a stream the profile library counted */
    if (s == NULL || s == &discard_stream || s == &none_stream) return;
    vm_prof_tl = &discard_stream;
    pthread_mutex_lock(&run.lock);
    bool finished = run.finished;
    pthread_mutex_unlock(&run.lock);
    if (!finished) stream_close(s);
}

/* Green threads: every switch on a carrier is an event in the carrier's stream. A thread
 * that moved from another carrier gets its open Lua frames replayed (EV_FRAME, outermost
 * first), for the analyses that keep calling contexts. */
static void on_switch(int carrier, uint64_t thread_id, State *moved) {
    (void)carrier;
    VmProfStream *s = vm_prof_tl;
    if (s == NULL || s == &none_stream) return;
    vm_prof_emit_icount();
    vm_prof_sync_emit(vm_prof_sync_take()); /* after the thread's switch-out (vm_green.c) */
    vm_prof_emit(ev_make(EV_THREAD, thread_id));
    if (moved == NULL || !(vm_prof_needs & (PROF_NEED_CALL | PROF_NEED_RETURN))) return;
    uint64_t frames[256];
    int n = 0;
    /* Innermost first: the running coroutine's frames, then its resumer's, ... */
    for (State *st = moved; st != NULL && n < 256; st = st->resumer)
        for (CallInfo *ci = st->ci; ci != NULL && ci != &st->base_ci && n < 256; ci = ci->prev) {
            if (ci->callstatus & CIST_C) continue;
            Proto *p = ci->func->u.lf->p;
            uint32_t id = __atomic_load_n(&p->id, __ATOMIC_ACQUIRE); /* as in vm_prof_frame_start_events */
            if (id == 0) id = vm_prof_newid(p);
            uint32_t depth = ci->depth > (int32_t)EV_DEPTH_MAX ? EV_DEPTH_MAX : (uint32_t)ci->depth;
            uint64_t fromc = (ci->prev->callstatus & CIST_C) ? EV_CALL_FROM_C : 0; /* the context is exactly these frames */
            frames[n++] = ev_make(EV_FRAME, (uint64_t)id | fromc | (uint64_t)depth << 32);
        }
    while (n > 0) vm_prof_emit(frames[--n]);
}

static void finish_atexit(void) {
    vm_threads_shutdown(NULL);
    vm_prof_finish();
}

/* SIGINT/SIGTERM while profiling: the profile is still written, whole and marked partial.
 * The signals are blocked in every thread (the mask is inherited) and taken by this thread
 * with sigwait, so the work happens in a normal thread, not in a signal handler: stop the
 * world for good, write the profile, then die of the same signal's default action. */
static sigset_t stop_signals;
static volatile int partial;

void vm_prof_mark_partial(void) { partial = 1; }

/* The starter waits until the signal thread is inside its blocking region (signal_ready).
 * Until then the thread is registered but active for the collector, and what it does there
 * (its GcStack's allocation, the region's entry) waits for Boehm's allocator lock: a
 * collection made meanwhile by the program's thread would signal it there. The kernel runs
 * the handler inside that wait; ThreadSanitizer does not, and the collector gave up
 * ("Signals delivery fails constantly at GC #1", profile_known under TSan). */
static pthread_mutex_t signal_ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t signal_ready_cv = PTHREAD_COND_INITIALIZER;
static bool signal_ready;

static void *wait_signal(void *arg) {
    int *sig = arg;
    pthread_mutex_lock(&signal_ready_lock);
    signal_ready = true;
    pthread_cond_signal(&signal_ready_cv);
    pthread_mutex_unlock(&signal_ready_lock);
    if (sigwait(&stop_signals, sig) != 0) *sig = 0;
    return NULL;
}

static void *signal_main(void *arg) {
    (void)arg;
    int sig = 0;
    /* Waiting, the thread is inactive for the collector; then it stops the world like any
     * VM thread at exit. */
    gc_do_blocking(wait_signal, &sig);
    if (sig == 0) return NULL;
    partial = 1;
    vm_threads_shutdown(NULL);
    vm_prof_finish();
    vm_trace_finish(); /* after the profile: the analyzers it joins record into the trace */
    fflush(stdout);
    signal(sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
    raise(sig);
    _exit(128 + sig);
}

void vm_prof_block_signals(void) {
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
}

/* The thread is registered with the collector (gc_thread_start): vm_threads_shutdown may
 * find a collection under way and wait for it in a blocking region (gc_do_blocking),
 * which Boehm allows only in threads it knows. Started with a raw pthread_create, it
 * crashed there (SIGSEGV in GC_do_blocking) when SIGINT/SIGTERM came during a collection
 * of a multi-threaded run, and no profile was written. */
void vm_prof_signal_thread_start(void) {
    static bool started; /* by -Xtrace, by the profiler, or both: one thread serves both */
    if (started) return;
    started = true;
    vm_prof_block_signals();
    if (gc_thread_start(signal_main, NULL, 0) != 0) {
        fprintf(stderr, "tandem: profiler: no signal thread\n");
        return;
    }
    pthread_mutex_lock(&signal_ready_lock);
    while (!signal_ready) pthread_cond_wait(&signal_ready_cv, &signal_ready_lock);
    pthread_mutex_unlock(&signal_ready_lock);
}

bool vm_prof_start(const VmProfOptions *o, const char **err) {
    if (o->nanalyses == 0) return true;
    run.opt = *o;
    vm_prof_signal_thread_start(); /* first: every thread created later inherits the blocked mask */
    if (!o->sequential && o->stage >= VM_STAGE_COMMUNICATE && !vm_shadow_on) {
        run.pool = cab_analyzer_start(o->analyzers > 0 ? o->analyzers : 1, o->analyzer_cpus, err);
        if (run.pool == NULL) return false;
        cab_analyzer_set_faults(run.pool, &o->faults);
    }
    run.active = true;
    for (int i = 0; i < o->nanalyses; i++) vm_prof_needs |= o->analyses[i]->needs;
    vm_pathprof_start(vm_prof_needs);
    vm_threads_set_switch_hook(on_switch);
    vm_prof_thread_begin(1, -1);
    vm_prof_instrumented = true;
    atexit(finish_atexit);
    if (vm_shadow_on && (*err = vm_shadow_start()) != NULL) return false;
    return true;
}

/* A stream's final counters; inline and instrument-only streams have no ring to count them. */
static CabStats stream_counts(const VmProfStream *s) {
    CabStats c = s->stats;
    if (s->kind == VM_PS_SEQUENTIAL)
        c.produced = c.consumed = s->nword; /* inline: every event is consumed at once */
    else if (s->kind == VM_PS_WORD)
        c.produced = s->nword;              /* instrument stage: written, never consumed */
    return c;
}

static void stream_name(const VmProfStream *s, char *who, size_t n) {
    if (s->carrier >= 0)
        snprintf(who, n, "carrier %d", s->carrier);
    else
        snprintf(who, n, "thread %llu", (unsigned long long)s->thread_id);
}

/* -Xprofile.format=html: every analysis on one page, with the run's facts. */
static int write_html(FILE *f, void **st, const ProfReportOpts *ro) {
    ProfRunStream *rs = calloc((size_t)run.nstreams + 1, sizeof *rs);
    char (*names)[48] = calloc((size_t)run.nstreams + 1, sizeof *names);
    if (rs == NULL || names == NULL) oom();
    int n = 0;
    bool green = false;
    for (VmProfStream *s = run.streams; s && n < run.nstreams; s = s->next, n++) {
        CabStats c = stream_counts(s);
        stream_name(s, names[n], sizeof names[n]);
        rs[n] = (ProfRunStream){names[n], c.produced, c.consumed, c.dropped};
        green |= s->carrier >= 0;
    }
    for (int i = 0; i < n / 2; i++) { /* the list is newest first: show the oldest first */
        ProfRunStream t = rs[i];
        rs[i] = rs[n - 1 - i];
        rs[n - 1 - i] = t;
    }
    /* As write_report scales: CAB sampling applies to concurrent analysis only. */
    const char *sampling = vm_shadow_on                                                     ? "shadow"
                           : vm_sample_phase                                                ? "phase"
                           : vm_sample_code                                                 ? "code"
                           : run.opt.cab.mode == CAB_MODE_SAMPLING && !run.opt.sequential ? "events"
                                                                                           : "exhaustive";
    ProfRunFacts facts = {(const char *const *)run.opt.argv, run.opt.argc,
                          run.opt.sequential ? "sequential" : "concurrent", green ? "green" : "native", sampling,
                          rs, n};
    int rc = prof_html_report(f, run.opt.analyses, st, run.opt.nanalyses, ro, &facts);
    free(names);
    free(rs);
    return rc;
}

static int write_report(FILE *f, void **st) {
    ProfReportOpts ro = {run.opt.format, 1.0, partial, fname_cb, NULL, vm_pathprof_decode, fsource_cb, NULL, 0};
    /* Sampling analyses a fraction sample_rate of the events (cab_api.h): estimates scale
     * by it. */
    if (run.opt.cab.mode == CAB_MODE_SAMPLING && !run.opt.sequential) ro.sample_rate = run.opt.cab.sample_rate;
    /* Sampled code: the fraction of ticks run inside windows, as measured (vm_sample.h);
     * nothing sampled at all reports zero counts, as estimates. */
    if (vm_sample_code && !vm_sample_phase) {
        double frac = vm_sample_fraction();
        ro.sample_rate = frac > 0.0 ? frac : 1e-300;
        ro.shadow = vm_shadow_on; /* the fraction is the shadows' coverage (vm_shadow.h) */
    }
    /* pprof: one profile for the whole run, each analysis adding its sample types, written
     * once they all have (prof_api.h). */
    if (run.opt.format == PROF_PPROF && (ro.pprof = prof_pprof_new()) == NULL) return -1;
    if (run.opt.format == PROF_HTML) return write_html(f, st, &ro);
    int rc = 0;
    for (int i = 0; i < run.opt.nanalyses && rc == 0; i++) {
        if (i > 0 && run.opt.format == PROF_TEXT) fputc('\n', f);
        rc = run.opt.analyses[i]->report(st[i], f, &ro);
        if (rc == -2) {
            fprintf(stderr, "tandem: %s has no report in this -Xprofile.format\n", run.opt.analyses[i]->name);
            rc = 0;
        }
    }
    if (ro.pprof != NULL) {
        if (rc == 0) rc = prof_pprof_write(ro.pprof, f, &ro);
        prof_pprof_free(ro.pprof);
    }
    return rc ? -1 : 0;
}

/* Write the report to [path] and check every step: a failed write (disk full, /dev/full)
 * is reported once, as "tandem: cannot write the profile to PATH: REASON", and returns -1
 * (the caller turns a successful program's status into 1, cli_main.c's finish).
 * A regular file (or a new one) is written atomically: a temporary file beside it, renamed
 * over it only once it is whole, so a reader sees the old file or the whole new one and a
 * failed write leaves the old file in place. Anything else that exists (a device such as
 * /dev/full or /dev/null, a FIFO, /dev/stdout) is written in place: renaming a temporary
 * file over it would replace the device node itself (which root may do; that was the
 * behaviour before: -Xprofile.out=/dev/full as root turned /dev/full into a regular file). */
static int write_out(const char *path, void **st) {
    struct stat sb;
    bool in_place = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
    char *tmp = NULL;
    if (!in_place) {
        size_t len = strlen(path) + 32;
        if ((tmp = malloc(len)) == NULL) oom();
        snprintf(tmp, len, "%s.tmp%ld", path, (long)getpid());
    }
    int err = 0;
    FILE *f = fopen(in_place ? path : tmp, "w");
    if (f == NULL) {
        err = errno;
    } else {
        errno = 0;
        int rc = write_report(f, st);
        /* A full disk shows at the flush (the report is buffered): keep its errno. */
        if (fflush(f) != 0 || ferror(f)) err = errno ? errno : EIO;
        else if (rc != 0) err = EIO;
        if (fclose(f) != 0 && err == 0) err = errno;
        if (err == 0 && !in_place && rename(tmp, path) != 0) err = errno;
        if (err != 0 && !in_place) unlink(tmp);
    }
    if (err != 0) fprintf(stderr, "tandem: cannot write the profile to %s: %s\n", path, strerror(err));
    free(tmp);
    return err ? -1 : 0;
}

/* Serialises the end: the main thread, exit handlers and the signal thread may all get
 * here; the first does the work, the others wait for it. */
static pthread_mutex_t finish_lock = PTHREAD_MUTEX_INITIALIZER;
static int finish_locked(void);

int vm_prof_finish(void) {
    if (vm_shadow_child) vm_shadow_end(VM_SHADOW_END_EXIT); /* a shadow reached the program's end */
    pthread_mutex_lock(&finish_lock);
    int rc = finish_locked();
    pthread_mutex_unlock(&finish_lock);
    return rc;
}

static int finish_locked(void) {
    if (!run.active) return 0;
    run.active = false;
    pthread_mutex_lock(&run.lock);
    run.finished = true;
    pthread_mutex_unlock(&run.lock);
    vm_prof_tl = &discard_stream;
    if (run.phase) { /* the profile library: reports are written by profile.write only */
        run.paused = true;
        return 0;
    }
    vm_shadow_finish(); /* the last shadows analysed, the shadow thread gone: its states merge below */
    /* Every other thread is stopped for good (vm_threads_shutdown): close their streams.
     * A thread stopped inside a wait on its full ring leaves the wait (the analyzer frees
     * slots) and then parks at the end of its blocking region without pushing: wait for
     * that before closing the ring under it. */
    for (VmProfStream *s = run.streams; s; s = s->next) {
        while (__atomic_load_n(&s->waiting, __ATOMIC_ACQUIRE)) sched_yield();
        stream_close(s);
    }
    if (run.pool != NULL) {
        cab_analyzer_shutdown(run.pool); /* drains every residue, frees the rings */
        run.pool = NULL;
    }
    fflush(stdout);
    vm_pathprof_finish(); /* the path oracle's file (debug), if any; says so if it fails */
    if (run.opt.stage != VM_STAGE_FULL) return 0; /* nothing analysed: no report */
    /* One profile: the streams' states merged into the oldest one's. */
    void *st[VM_PROF_MAX_ANALYSES];
    VmProfStream *first = NULL;
    for (VmProfStream *s = run.streams; s; s = s->next) first = s;
    for (int i = 0; i < run.opt.nanalyses; i++) {
        st[i] = first->st[i];
        for (VmProfStream *s = run.streams; s; s = s->next) {
            for (unsigned j = 1; j < CAB_MAX_SHARDS; j++) /* the shards' disjoint parts */
                if (s->sst[j][i] != NULL) run.opt.analyses[i]->merge(s->st[i], s->sst[j][i]);
            if (s != first) run.opt.analyses[i]->merge(st[i], s->st[i]);
        }
    }
    if (run.opt.out == NULL) return write_report(stderr, st);
    return write_out(run.opt.out, st);
}

void vm_prof_print_stats(FILE *f) {
    if (run.streams == NULL) return;
    vm_sample_print_stats(f);
    vm_shadow_print_stats(f);
    const char *stage[] = {"instrument", "enqueue", "communicate", "full"};
    fprintf(f, "[stats] profile: %s, stage %s, %d stream(s)\n", run.opt.sequential ? "sequential" : "concurrent",
            stage[run.opt.stage], run.nstreams);
    CabStats tot = {0};
    uint64_t unsafe = 0;
    for (VmProfStream *s = run.streams; s; s = s->next) {
        CabStats c = stream_counts(s);
        char who[48];
        stream_name(s, who, sizeof who);
        fprintf(f,
                "[stats] cab %s: produced %llu consumed %llu dropped %llu chunks %llu blocks %llu blocked %.3f ms"
                " analyzer %d idle %.3f ms (%llu sleeps) waits outside safepoints %llu"
                " analysed: by the analyzer %llu chunks %.3f ms, by the program thread %llu chunks %.3f ms\n",
                who, (unsigned long long)c.produced, (unsigned long long)c.consumed, (unsigned long long)c.dropped,
                (unsigned long long)c.chunks, (unsigned long long)c.blocks, (double)c.blocked_ns / 1e6, s->analyzer,
                (double)c.idle_ns / 1e6, (unsigned long long)c.idle_sleeps, (unsigned long long)s->unsafe_waits,
                (unsigned long long)(c.chunks - c.self_chunks), (double)c.busy_ns / 1e6,
                (unsigned long long)c.self_chunks, (double)c.self_ns / 1e6);
        if (c.nshards > 1) {
            fprintf(f, "[stats] cab %s shards:", who);
            for (unsigned j = 0; j < c.nshards; j++)
                fprintf(f, " %u: %llu chunks %.3f ms%s", j, (unsigned long long)c.shard_chunks[j],
                        (double)c.shard_ns[j] / 1e6, j + 1 < c.nshards ? "," : "\n");
        }
        unsafe += s->unsafe_waits;
        tot.produced += c.produced;
        tot.consumed += c.consumed;
        tot.dropped += c.dropped;
        tot.chunks += c.chunks;
        tot.blocks += c.blocks;
        tot.blocked_ns += c.blocked_ns;
        tot.self_chunks += c.self_chunks;
        tot.self_ns += c.self_ns;
        tot.busy_ns += c.busy_ns;
    }
    fprintf(f, "[stats] cab total: produced %llu consumed %llu dropped %llu chunks %llu blocks %llu blocked %.3f ms"
               " waits outside safepoints %llu"
               " analysed: by the analyzer %llu chunks %.3f ms, by the program thread %llu chunks %.3f ms\n",
            (unsigned long long)tot.produced, (unsigned long long)tot.consumed, (unsigned long long)tot.dropped,
            (unsigned long long)tot.chunks, (unsigned long long)tot.blocks, (double)tot.blocked_ns / 1e6,
            (unsigned long long)unsafe, (unsigned long long)(tot.chunks - tot.self_chunks), (double)tot.busy_ns / 1e6,
            (unsigned long long)tot.self_chunks, (double)tot.self_ns / 1e6);
}

int vm_prof_kind(void) {
    const VmProfOptions *o = &run.opt;
    /* Instrumentation only: produced and dropped, sequential or not (no state is opened). */
    if (o->stage == VM_STAGE_INSTRUMENT) return VM_PS_WORD;
    if (vm_shadow_on) return VM_PS_WORD; /* the program emits nothing that is analysed: its shadows do */
    if (o->sequential) return VM_PS_SEQUENTIAL;
    if (o->stage == VM_STAGE_ENQUEUE || o->cab.mode == CAB_MODE_SAMPLING) return VM_PS_SAMPLING;
    return VM_PS_EXHAUSTIVE;
}

/* Shadow profiling (vm_shadow.c). */
VmProfStream *vm_prof_stream_detached(void) {
    VmProfStream *s = stream_new(0, -1);
    s->closed = true; /* nobody produces into it */
    return s;
}

void vm_prof_stream_feed(VmProfStream *s, const uint64_t *ev, size_t n) {
    s->nword += n;
    for (int i = 0; i < run.opt.nanalyses; i++) run.opt.analyses[i]->consume(s->st[i], ev, n);
}

void vm_prof_shadow_stream(void) {
    static VmProfStream shadow = {.prod = {.cur = &no_ring_slot}, .kind = VM_PS_SHADOW};
    VmProfStream *old = vm_prof_tl;
    shadow.icount = old != NULL ? old->icount : 0;
    vm_prof_tl = &shadow;
}

void vm_prof_emit_slow(uint64_t ev) { vm_prof_emit(ev); }
void vm_prof_emit_mem_out(uint64_t ev) { vm_prof_emit_mem(ev); }

void vm_prof_reserve_out(uint64_t n) { vm_prof_reserve((size_t)n); }

/* ======================================================================
 * The profile library's side (vm_prof_phase.c drives it, with the world stopped where it
 * says so). The run is sequential: each stream's states are fed inline by its own thread,
 * so with every other thread stopped at a safepoint they are whole up to that moment, and a
 * snapshot needs no ring to drain.
 * ====================================================================== */

bool vm_prof_phase_active(void) { return run.active && run.phase; }
bool vm_prof_cmdline_active(void) { return run.active && !run.phase; }

const char *vm_prof_phase_begin(const ProfAnalysis *const *an, int n) {
    if (run.active) return run.phase ? NULL : "this run is already profiled by -Xprofile";
    if (run.finished) return "the program is ending";
    memset(&run.opt, 0, sizeof run.opt);
    for (int i = 0; i < n; i++) run.opt.analyses[i] = an[i];
    run.opt.nanalyses = n;
    run.opt.sequential = true;
    run.opt.stage = VM_STAGE_FULL;
    run.opt.format = PROF_JSON;
    run.phase = true;
    run.paused = true;
    for (int i = 0; i < n; i++) vm_prof_needs |= an[i]->needs;
    vm_pathprof_start(vm_prof_needs);
    vm_threads_set_switch_hook(on_switch);
    vm_prof_instrumented = true; /* the hooked copies emit while hooks run */
    run.active = true;           /* threads started from now on get streams */
    return NULL;
}

bool vm_prof_phase_stream(void) {
    if (!run.active || !run.phase) return false;
    Ctx *c = vm_ctx_current();
    int carrier = c != NULL && c->carrier != NULL ? vm_green_carrier_index(c) : -1;
    uint64_t id = carrier >= 0 ? 0 : vm_thread_id(NULL);
    VmProfStream *s = stream_new(id, carrier);
    vm_prof_tl = s;
    if (id != 0) vm_prof_emit(ev_make(EV_THREAD, id));
    return true;
}

void vm_prof_phase_pause(bool paused) { run.paused = paused; }

/* The analyses' states merged into fresh ones (the streams' keep counting), or NULL. */
static bool merge_fresh(void **st) {
    for (int i = 0; i < run.opt.nanalyses; i++) {
        if ((st[i] = run.opt.analyses[i]->open()) == NULL) {
            while (i-- > 0) run.opt.analyses[i]->close(st[i]);
            return false;
        }
        for (VmProfStream *s = run.streams; s; s = s->next)
            if (s->st[i] != NULL) run.opt.analyses[i]->merge(st[i], s->st[i]);
    }
    return true;
}

int vm_prof_phase_report(FILE *f, ProfFormat format) {
    void *st[VM_PROF_MAX_ANALYSES];
    if (!merge_fresh(st)) return -1;
    ProfFormat was = run.opt.format;
    run.opt.format = format;
    int rc = write_report(f, st);
    run.opt.format = was;
    for (int i = 0; i < run.opt.nanalyses; i++) run.opt.analyses[i]->close(st[i]);
    return rc;
}

bool vm_prof_phase_reset(void) {
    for (VmProfStream *s = run.streams; s; s = s->next)
        for (int i = 0; i < run.opt.nanalyses; i++) {
            void *fresh = run.opt.analyses[i]->open();
            if (fresh == NULL) return false;
            run.opt.analyses[i]->close(s->st[i]);
            s->st[i] = fresh;
        }
    return true;
}

int vm_prof_phase_analyses(const ProfAnalysis **an) {
    for (int i = 0; i < run.opt.nanalyses; i++) an[i] = run.opt.analyses[i];
    return run.opt.nanalyses;
}
