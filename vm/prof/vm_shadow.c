/* vm_shadow.c: shadow profiling (vm_shadow.h): the scheduler of shadows at the program's
 * ticks, the fork and what the shadow does first, the shadow's event sink, and the parent's
 * shadow thread that reaps, watches and analyses.
 *
 * How a shadow's events reach the parent's analysis. Each live shadow has a slot: a header
 * and an array of event words in memory mapped MAP_SHARED before the program runs, so the
 * parent and every shadow see the same pages. A shadow appends its events to its slot's
 * array (nobody reads them meanwhile), and at its end stores the count, the ticks it ran and
 * why it ended, then `done` (release), then exits 0. The shadow thread, once waitpid has
 * reaped that pid with status 0 and found `done`, feeds the whole array to its analysis
 * states (a ringless stream of vm_prof.c, merged into the report like any other stream).
 *
 *     shadow:  ev[0..n) ... nev, ticks, why  --(A: release store of done)-->  _exit(0)
 *     parent:  waitpid(pid) == pid, exited 0  --(B: acquire load of done, pairs with A)-->
 *              analyse ev[0..nev); slot FREE (release, pairs with the fork's acquire)
 *
 * A shadow that is killed, crashes or exits otherwise never set `done` (or its status says
 * so): its events are dropped whole, never half analysed, and counted.
 *
 * Rejected: the shadow pushing into a CAB ring in shared memory that the parent's analyzer
 * consumes as it goes (the CAB works across processes when its ring is shared). It would
 * analyse a shadow's events while it runs, but a shadow killed by the watchdog would then
 * leave half its events in the profile (a dropped shadow must cost nothing, issue 20), its
 * partial paths and open frames included, and with several live shadows each needs its own
 * ring registered with the analyzer pool while the run goes on. The slot costs the parent
 * one pass over the events after the shadow ends, on the analyzer core.
 * Rejected too: the shadow analysing inline and sending a serialised partial profile through
 * a pipe: every analysis would need a serialisation of its state and a merge of it, when
 * they already merge streams (ProfAnalysis.merge) and consume events; the events are the
 * format every analysis reads.
 *
 * Function ids. Ids and names live in the process that assigns them; a shadow naming a
 * function would name it in its copy only, and the parent would give that id to another
 * function later. So in shadow mode the program names every function of a chunk when the
 * chunk is loaded (vm_shadow_name_protos, with its Ball-Larus numbering when paths are
 * profiled, which the report's decoder needs), and a shadow that meets a function without
 * an id (code it loaded itself) ends there.
 *
 * Compiled windows. With the JIT a shadow's window runs the instrumented twins of compiled
 * code, as sampling windows do (vm_sample.h, vm_sample_jit_windows): the parent compiles no
 * twin (it never opens a window), and each shadow compiles those it meets, at its first
 * meeting of each function (-Xsample.twin), into its own copy of code memory (MAP_PRIVATE,
 * jit_mcode.c; the Proto's jitwin is written in the shadow's copy of the heap). The JIT's lock
 * is free at the fork: it is held only inside a compilation, which has no poll, and the fork
 * runs with every other context at a poll or in a blocking region. Interpreted windows, as
 * before (-Xsample.windows=interpreted, or -Xjit=off), cost a shadow 2-3 times the
 * instructions a tick (richards, callgraph, 1000000 ticks under callgrind: 1153 M against 544
 * M for the shadow's process, the program's 60 M or so before the fork included), so at a
 * given load a shadow covered half as much; a shadow compiling its twins costs about 11 M
 * instructions (jit_encode) there, once per shadow.
 *
 * The scheduler (the paper's load): at each check, every length / 4 ticks on average (drawn
 * at random between half and one and a half of it, so checks do not alias with a period of
 * the program), the number of live shadows is added to a running integral over the program's
 * ticks; when the average so far is below -Xshadow.load, fewer than its ceiling are alive
 * (the slots), and the program has run length / max(load, 1) ticks since the last fork (the
 * spacing rule, vm_shadow_flip), the program forks. Native threads: only while the main thread is the only
 * language thread (fork keeps one thread: the paper's limitation); green threads on one
 * carrier: every green thread lives in the carrier's memory, so the shadow runs them all;
 * several carriers: the forking carrier first gathers the others (vm_green_gather: each
 * switches its green thread out at its next poll and waits), and the shadow's one carrier
 * runs every carrier's threads at an equal pace (vm/threads/vm_green.c, shadow_one). The
 * scheduler's lock is not held across the gather and the fork (the other carriers take it at
 * their checks): sched.forking keeps forks one at a time.
 *
 * Boehm after the fork: the collector is told to leave fork handling to us
 * (GC_set_handle_fork(-1), gc_boehm.c) and the fork is wrapped in gc_fork_prepare / _parent /
 * _child (GC_atfork_*): the allocator lock is taken across the fork so the child's heap is
 * consistent, and the child's collector forgets every thread but its own (parallel marking
 * off). The fork itself runs with the world stopped (fork_op): every other context is then
 * parked at a poll or in a blocking region (the main native thread waiting for the green
 * program), and stays STOPPED for good in the child. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cab_api.h"
#include "gc_api.h"
#include "vm_pathprof.h"
#include "vm_prof.h"
#include "vm_sample.h"
#include "vm_shadow.h"
#include "vm_thread.h"

bool vm_shadow_child = false;
bool vm_shadow_on = false;
static VmShadowOptions opt;

/* ======================================================================
 * Slots (shared memory)
 * ====================================================================== */

#define MAX_SLOTS 16          /* -Xshadow.load's ceiling (cli: at most 16) */
#define EVENTS_PER_TICK 32    /* a slot's room per tick of -Xshadow.length: calls, returns,
                                 sites, paths and, for cachesim, heap accesses; a shadow that
                                 fills it ends early (VM_SHADOW_END_FULL, -Xstats) */
#define MIN_EVENTS (1u << 16)
#define MAX_EVENTS (1u << 25) /* 256 MB of address space per slot, touched only as written */

enum { SLOT_FREE, SLOT_RUNNING };

/* One live shadow. [state], [pid], [seq], [started_ns]: the parent's (the program's thread
 * that forks, then the shadow thread); nev, ticks, why, done: written by the shadow only,
 * read by the parent after waitpid. */
typedef struct ShadowSlot {
    int state;            /* SLOT_*: FREE -> RUNNING by the forking thread (release, after pid),
                             RUNNING -> FREE by the shadow thread (release) */
    pid_t pid;
    uint64_t seq;         /* the shadow's number, from 1 */
    uint64_t started_ns;
    uint64_t nev;         /* events in ev[] */
    uint64_t ticks;       /* ticks the shadow ran instrumented */
    uint64_t injit;       /* of which counted by compiled code (the instrumented twins) */
    uint64_t cpu_ns;      /* the shadow's CPU time, user and system (a forked process starts
                             at 0): what it took of the analyzer core, whatever the load */
    uint64_t sys_ns;      /* of which system time (copy-on-write faults, the exit's teardown) */
    uint64_t minflt;      /* its minor page faults (copy-on-write ones mostly) */
    uint32_t why;         /* VmShadowEnd */
    uint32_t done;        /* A: the shadow's events are whole (release store, then _exit) */
    uint32_t stop;        /* the program is ending: end at the next piece (written by the
                             program's vm_shadow_finish, read by the shadow; 0 at the fork) */
    uint64_t ev[];
} ShadowSlot;

static struct {
    unsigned char *base;  /* the mapping: nslots slots of slot_bytes */
    size_t slot_bytes;
    uint64_t cap;         /* events a slot holds */
    int nslots;
} shm;

static ShadowSlot *slot_at(int i) { return (ShadowSlot *)(shm.base + (size_t)i * shm.slot_bytes); }

/* ======================================================================
 * The scheduler (the program's side)
 * ====================================================================== */

static struct {
    pthread_mutex_t lock; /* checks of several native threads (forks only single-threaded) */
    uint64_t ticks;       /* program ticks seen by checks */
    uint64_t next_ok;     /* no fork before the program's ticks reach this (the spacing rule) */
    double live_ticks;    /* integral of live shadows over them */
    uint64_t rng;
    uint64_t forked, skipped_threads, fork_failed;
    uint64_t not_gathered; /* green threads, several carriers: a carrier did not come in time */
    bool forking;          /* a thread is between its decision to fork and the fork's end */
    uint64_t fork_ns;     /* the program's time in fork_shadow (what a fork costs it) */
    uint64_t fork_cpu_ns; /* the same in the forking thread's CPU time (not the time it waited
                             for a core: the figure that does not depend on the machine's load) */
    uint64_t end_wait_ns; /* the program's wait for its last shadows at its end */
    struct rusage end_ru; /* the thread that ends the run (the program's, under native threads),
                             at its end: its page faults (copy-on-write after forks among them)
                             and system time, which do not depend on the machine's load */
    uint64_t end_runq_ns; /* the same thread's time runnable but waiting for a core (the
                             kernel's schedstat; UINT64_MAX if unreadable): of the wall time
                             its CPU time does not explain, what contention took */
    bool stopping;        /* the run is ending: no more forks */
} sched = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int live;          /* shadows alive (atomic): +1 by the forking thread, -1 by the reaper */

/* The shadow thread sleeps in poll(2) until something is to be done, never on a period: an
 * idle vCPU woken every millisecond costs the program's vCPU on a virtual machine (the two
 * share the host's resources), and most of a run has no live shadow. It wakes when a shadow
 * exits (its pidfd, opened by the forking thread right after the fork: readable once the
 * process has ended, whatever way, so a crash wakes it too), when a new shadow is to be
 * watched or the program ends (wake_fd, an eventfd the forking thread and vm_shadow_finish
 * write), and at the earliest watchdog or end deadline (poll's timeout). */
static int pidfds[MAX_SLOTS]; /* the parent's: slot i's pidfd while it is RUNNING, written
                                 before the slot's state (release) by the forking thread, read
                                 and closed by the shadow thread (after its acquire) */
static int wake_fd = -1;

static void wake_shadow_thread(void) {
    uint64_t one = 1;
    while (write(wake_fd, &one, sizeof one) < 0 && errno == EINTR) {}
}

/* The parent's results (the shadow thread writes them; the report reads them after joining
 * it). */
static struct {
    uint64_t finished, killed, failed, covered, events;
    uint64_t injit;       /* of the ticks covered, those the shadows ran in compiled twins */
    uint64_t cpu_ns, sys_ns, minflt; /* the analysed shadows' CPU time, system time, minor faults */
    uint64_t life_ns;     /* summed lifetimes of the analysed shadows (fork to reap) */
    uint64_t cut;         /* killed at the program's end, its grace period over */
    uint64_t ends[VM_SHADOW_END_N];
} res;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(void) {
    uint64_t x = sched.rng; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    sched.rng = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* Ticks to the next check: uniform in [P/2, 3P/2], P = length / 4. */
static int64_t next_check(void) {
    uint64_t p = opt.length / 4 ? opt.length / 4 : 1;
    int64_t n = (int64_t)(p / 2 + rng_next() % (p + 1));
    return n > 0 ? n : 1;
}

void vm_shadow_configure(const VmShadowOptions *o) {
    opt = *o;
    if (opt.length == 0) opt.length = VM_SHADOW_DEFAULT_LENGTH;
    if (!(opt.load > 0.0)) opt.load = VM_SHADOW_DEFAULT_LOAD;
    if (opt.timeout_ms == 0) opt.timeout_ms = VM_SHADOW_DEFAULT_TIMEOUT_MS;
    vm_shadow_on = o->on;
    uint64_t seed = opt.seed ? opt.seed : now_ns();
    uint64_t z = seed + UINT64_C(0x9E3779B97F4A7C15); /* splitmix64 */
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    sched.rng = (z ^ (z >> 31)) | 1;
}

void vm_shadow_name_protos(Proto *p) {
    if (p->id == 0) vm_prof_newid(p);
    if (vm_prof_needs & PROF_NEED_PATH) vm_pathprof_bias(p, p->id);
    for (int i = 0; i < p->np; i++) vm_shadow_name_protos(p->p[i]);
}

/* ======================================================================
 * The shadow (child) side
 * ====================================================================== */

#define MAX_FDS 1024 /* descriptors looked at when a shadow starts */

static struct {
    ShadowSlot *slot;
    uint64_t n, cap;
    /* the descriptors that were not regular files at the fork (pipes, terminals, sockets):
     * what they read is the program's input, whatever the shadow has put in their place */
    bool shared[MAX_FDS];
} child;

void vm_shadow_put(uint64_t ev) {
    if (__builtin_expect(child.n == child.cap, 0)) vm_shadow_end(VM_SHADOW_END_FULL);
    child.slot->ev[child.n++] = ev;
}

_Noreturn void vm_shadow_end(VmShadowEnd why) {
    VmSampleTl *t = &vm_sample_tl;
    ShadowSlot *s = child.slot;
    /* -Xtest.shadow_kill: this one hangs with its events unpublished; the watchdog kills it */
    if (opt.test_kill && s->seq % opt.test_kill == 0)
        for (;;) pause();
    s->nev = child.n;
    s->ticks = t->in + (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
    s->injit = t->injit;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
    s->cpu_ns = s->sys_ns + (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
    s->minflt = (uint64_t)ru.ru_minflt;
    s->why = (uint32_t)why;
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE); /* A, pairs with B (shadow_main) */
    _exit(0);
}

uint64_t vm_shadow_ticks(void) {
    const VmSampleTl *t = &vm_sample_tl;
    return t->in + (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
}

void vm_shadow_check_read(int fd) {
    struct stat sb;
    if (fd < 0 || (fd < MAX_FDS && child.shared[fd]) || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        vm_shadow_end(VM_SHADOW_END_INPUT);
}

/* Give regular file [fd] a private open file description at the same offset: after a fork
 * parent and child share the offset, so a read in the shadow would move the program's. Read
 * only: nothing the shadow does may reach the file. If it cannot be reopened, /dev/null
 * stands in (reads then see the end of the file, writes vanish). */
static void detach_file(int fd, int devnull) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int nfd = open(path, O_RDONLY);
    off_t off = lseek(fd, 0, SEEK_CUR);
    if (nfd >= 0 && off >= 0 && lseek(nfd, off, SEEK_SET) == off) {
        dup2(nfd, fd);
    } else {
        dup2(devnull, fd);
    }
    if (nfd >= 0) close(nfd);
}

/* The shadow's descriptors: stdout and stderr go to /dev/null (print, error messages, the
 * parent's unflushed stdio buffers if the shadow ever flushes them); stdin too unless it is
 * a regular file; every regular file gets a private offset (detach_file). Other descriptors
 * (pipes, sockets, the runtime's own) stay: the io library ends the shadow before reading
 * one and discards writes. */
static void detach_fds(void) {
    struct stat sb;
    for (int fd = 0; fd < 3; fd++) child.shared[fd] = !(fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode));
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0) vm_shadow_end(VM_SHADOW_END_EFFECT); /* cannot isolate: publish nothing new */
    if (!child.shared[0]) detach_file(0, devnull);
    else dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    int fds[MAX_FDS];
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d != NULL) {
        int self = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < MAX_FDS) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > 2 && fd < MAX_FDS && fd != self && fd != devnull)
                fds[n++] = fd;
        }
        closedir(d);
    }
    for (int i = 0; i < n; i++) {
        bool reg = fstat(fds[i], &sb) == 0 && S_ISREG(sb.st_mode);
        child.shared[fds[i]] = !reg;
        if (reg) detach_file(fds[i], devnull);
    }
    close(devnull);
}

/* A shadow runs its window in pieces of at most this many ticks (tens of microseconds at the
 * instrumented interpreter's pace, less in the compiled twins): between two, at a flip (a
 * tick: its events are whole), it looks at its slot's stop word, so that the program's end
 * waits about one piece for its live shadows, not the rest of their length (at the default
 * length that wait was 10-20 ms a run, more than a percent of a bench/suite program). A piece costs a return to
 * vm_execute's trampoline, as sampled instrumentation's adaptive pieces do. */
#define SHADOW_PIECE 8192

static int64_t piece_of(uint64_t rest) { return rest < SHADOW_PIECE ? (int64_t)rest : SHADOW_PIECE; }

/* In the shadow, at a flip: the piece just run is counted; the window goes on with the next
 * piece, or the shadow ends (its length run, or the program ending). */
static void shadow_piece(void) {
    VmSampleTl *t = &vm_sample_tl;
    t->in += (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
    bool stop = __atomic_load_n(&child.slot->stop, __ATOMIC_RELAXED) != 0; /* a hint: no order needed */
    if (t->in < opt.length && !stop) {
        t->left = t->phase = piece_of(opt.length - t->in);
        return;
    }
    t->left = t->phase = 0; /* vm_shadow_end's count is t->in */
    vm_shadow_end(stop ? VM_SHADOW_END_EXIT : VM_SHADOW_END_LENGTH);
}

/* -Xtest.shadow_idle: no window; live until the program's end (its stop word), asleep (1) or
 * spinning on the core without touching memory (2), then end with no event. The program pays
 * the fork and its copy-on-write faults as for a working shadow of that life (a page the
 * program writes is copied while the shadow holds it, whatever the shadow does), without (1)
 * or with (2) a busy core beside it. What a working shadow costs beyond that is its own
 * work (its memory traffic, its page faults, its twins): not split further yet. */
static _Noreturn void idle_shadow(ShadowSlot *s) {
    for (;;) {
        if (opt.test_idle == 1) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        } else {
            for (volatile int k = 0; k < 1000000; k++) {}
        }
        if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) vm_shadow_end(VM_SHADOW_END_EXIT);
    }
}

/* Just forked, in the shadow: one thread, this one, at a tick. */
static void become_shadow(ShadowSlot *s) {
    vm_shadow_child = true;
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the program gone: no one to hand events to */
    if (getppid() == 1) _exit(1);
    /* Not reniced: at nice 19 on a loaded machine (other work on the analyzer core) shadows
     * starved, lived past the watchdog's limit and were killed, and the program's end cut
     * the rest (tests/profile/run_shadow_tests.py, "kill every 2", at load average 10). */
    child.slot = s;
    child.cap = shm.cap;
    child.n = 0;
    if (opt.cpu >= 0) cab_topology_bind_self(opt.cpu); /* the analyzer core, never the program's */
    detach_fds();
    if (opt.test_idle) idle_shadow(s);
    vm_prof_shadow_stream(); /* this thread's events now go to vm_shadow_put */
    vm_prof_emit_icount();
    vm_prof_emit(ev_make(EV_THREAD, vm_thread_id(NULL)));
    vm_sample_open_shadow(piece_of(opt.length));
}

/* ======================================================================
 * The program's side: checks and forks
 * ====================================================================== */

static int free_slot(void) {
    for (int i = 0; i < shm.nslots; i++)
        if (__atomic_load_n(&slot_at(i)->state, __ATOMIC_ACQUIRE) == SLOT_FREE) return i;
    return -1;
}

/* The fork itself, with every other language context stopped (vm_safepoint_run): parked at
 * a poll or in a blocking region, none between the two, so the shadow's safepoint counts
 * are consistent (a context caught RUNNING at the fork would stay RUNNING in the shadow
 * forever, and its first collection would wait for it: seen under green threads, the main
 * native thread on its way into its wait at start-up), and no green thread is half
 * switched. Both processes then let the world go (vm_world_start): in the shadow the other
 * contexts stay stopped for good, their threads gone.
 *
 * A child inherits the forking thread's CPU mask. With the program pinned, the shadow was
 * queued on the program's core and ran there until its own first steps bound it to the
 * analyzer core (become_shadow), while the program waited for its core: in six richards runs
 * (load average 18) every shadow's first instruction ran on the program's CPU, most of them
 * before the program was back from the fork. So the forking thread's mask is widened by the
 * analyzer core (opt.cpu) for the fork alone, which lets the kernel's fork balancing place
 * the new task on the idler of the two; the program's mask is restored after it, and the
 * shadow moved to opt.cpu at once, in case both cores were busy and it was queued on the
 * program's (it then first ran on the analyzer core in three runs of six at that load; the
 * other three had run before the program got back). */
static void fork_op(void *arg) {
    pid_t *pid = arg;
    cpu_set_t mine, wide;
    bool widened = false;
    if (opt.cpu >= 0 && opt.cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof mine, &mine) == 0 &&
        !CPU_ISSET(opt.cpu, &mine)) {
        wide = mine;
        CPU_SET(opt.cpu, &wide);
        widened = sched_setaffinity(0, sizeof wide, &wide) == 0;
    }
    gc_fork_prepare();
    *pid = fork();
    if (*pid == 0) {
        gc_fork_child();
    } else {
        gc_fork_parent();
        if (widened) {
            (void)sched_setaffinity(0, sizeof mine, &mine);
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(opt.cpu, &one);
            if (*pid > 0) (void)sched_setaffinity(*pid, sizeof one, &one);
        }
    }
}

#define GATHER_TIMEOUT 0.02 /* seconds */

/* Fork shadow [i] (the caller has set sched.forking, and holds no lock: other carriers take
 * sched.lock at their checks, and the gather waits for them to reach a poll): in the child
 * this returns true (its window is open); in the program false. */
static bool fork_shadow(int i) {
    ShadowSlot *s = slot_at(i);
    s->seq = ++sched.forked;
    s->done = 0;
    s->nev = 0;
    s->ticks = 0;
    s->injit = 0;
    s->cpu_ns = s->sys_ns = s->minflt = 0;
    s->stop = 0;
    s->started_ns = now_ns();
    uint64_t c0 = cpu_ns();
    pid_t pid = -1;
    /* Several green carriers: all but this one switch their green threads out first (the
     * shadow's one carrier runs them all); GATHER_TIMEOUT bounds what a carrier stuck in a
     * blocking call can cost the program. */
    if (!vm_green_gather(GATHER_TIMEOUT)) {
        sched.forked--;
        sched.not_gathered++;
        sched.fork_ns += now_ns() - s->started_ns;
        sched.fork_cpu_ns += cpu_ns() - c0;
        return false;
    }
    vm_safepoint_run(NULL, fork_op, &pid);
    vm_green_release(pid == 0);
    if (pid == 0) {
        become_shadow(s);
        return true;
    }
    sched.fork_ns += now_ns() - s->started_ns;
    sched.fork_cpu_ns += cpu_ns() - c0;
    /* No pidfd (descriptors exhausted): the shadow could not be watched but by polling, so it
     * is killed at once and counted as a failed fork (the slot stays free). */
    int pfd = pid > 0 ? pidfd_open(pid, 0) : -1;
    if (pid > 0 && pfd < 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    if (pfd < 0) {
        sched.forked--;
        sched.fork_failed++;
        return false;
    }
    s->pid = pid;
    pidfds[i] = pfd;
    __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->state, SLOT_RUNNING, __ATOMIC_RELEASE); /* pairs with the reaper's acquire */
    wake_shadow_thread(); /* it watches the new pidfd and the new deadline from now on */
    return false;
}

void vm_shadow_flip(void) {
    VmSampleTl *t = &vm_sample_tl;
    if (vm_shadow_child) { /* a piece of its one window is over */
        shadow_piece();
        return;
    }
    uint64_t run = (uint64_t)(t->phase - (t->left > 0 ? t->left : 0));
    t->out += run;
    t->left = t->phase = 0;
    pthread_mutex_lock(&sched.lock);
    int n = __atomic_load_n(&live, __ATOMIC_RELAXED);
    sched.ticks += run;
    sched.live_ticks += (double)run * n;
    bool go = !sched.stopping && !sched.forking && n < shm.nslots && sched.live_ticks < opt.load * (double)sched.ticks &&
              sched.ticks >= sched.next_ok;
    if (go && !vm_threads_single()) {
        sched.skipped_threads++;
        go = false;
    }
    int i = go ? free_slot() : -1;
    if (i >= 0) {
        /* The spacing rule: the next shadow starts at least length / max(load, 1) program
         * ticks later, so at load <= 1 two shadows never run the same ticks of the program
         * (a shadow that outpaces the program, as one on a quieter core does, would
         * otherwise be followed by another over ticks it already ran: a fork for nothing),
         * and at load L > 1 at most L of them do. */
        sched.next_ok = sched.ticks + (uint64_t)((double)opt.length / (opt.load > 1.0 ? opt.load : 1.0));
        sched.forking = true; /* one fork at a time: other carriers' checks do not go meanwhile */
    }
    pthread_mutex_unlock(&sched.lock);
    /* The lock is not held across the fork: with several green carriers the others take it
     * at their checks, and the gather waits for them to reach their next poll. The shadow
     * never takes it (its flips return at the top). */
    if (i >= 0 && fork_shadow(i)) return; /* the shadow: its window is open */
    pthread_mutex_lock(&sched.lock);
    if (i >= 0) sched.forking = false;
    t->left = t->phase = next_check();
    pthread_mutex_unlock(&sched.lock);
}

int64_t vm_shadow_first_check(void) {
    pthread_mutex_lock(&sched.lock);
    int64_t n = next_check();
    pthread_mutex_unlock(&sched.lock);
    return n / 2 + 1; /* the first shadow early: short programs get one too */
}

/* ======================================================================
 * The shadow thread (the parent's, on the analyzer core)
 * ====================================================================== */

static pthread_t shadow_thread;
static bool shadow_thread_on;
static VmProfStream *shadow_stream; /* the analysis states the shadows' events go to */
static int stop_thread;             /* atomic: vm_shadow_finish asks the thread to end */
static uint64_t end_deadline_ns;    /* written before stop_thread (release), read after (acquire) */

/* At the program's end the live shadows are told to stop (their slot's stop word: each ends
 * at its next piece, SHADOW_PIECE, with its events whole) and get a grace period to do so:
 * END_GRACE_SHORT_NS once some shadow has been analysed (a shadow still running then is
 * starved of its core, and the program's exit does not wait for it: it is cut, its events
 * dropped and counted), else, so that a short program gets a profile at all, four times the
 * mean life of the shadows so far, at least END_GRACE_MIN_NS, at most the watchdog's limit.
 * The grace is what shadows may cost the program's exit (-Xstats: "waiting for the last
 * shadows"). */
#define END_GRACE_SHORT_NS 5000000
#define END_GRACE_MIN_NS 100000000

/* Instruction counts (PROF_NEED_COST): each shadow counts from the program's count at its
 * fork (which the program's uninstrumented code does not advance), so one shadow's counts may
 * start below where the previous one's ended, and the analysis, which reads one stream, would
 * take the difference for a negative cost. Each shadow's EV_ICOUNTs are moved up to continue
 * from the highest count analysed so far (what it ran keeps its differences; the gap between
 * two shadows counts one instruction, like any other stretch the analysis did not see). */
static uint64_t icount_hi;

static void rebase_icounts(uint64_t *ev, uint64_t n) {
    uint64_t off = 0;
    bool first = true;
    for (uint64_t k = 0; k < n; k++) {
        if (ev_kind(ev[k]) != EV_ICOUNT) continue;
        uint64_t v = ev_payload(ev[k]);
        if (first) off = icount_hi + 1 - v, first = false;
        v += off;
        ev[k] = ev_make(EV_ICOUNT, v);
        if (v > icount_hi) icount_hi = v;
    }
}

/* A reaped shadow [s] (slot [i]) with wait status [st]: analyse or drop it, free the slot. */
static void collect(int i, ShadowSlot *s, int st, bool killed) {
    close(pidfds[i]);
    pidfds[i] = -1;
    if (killed) {
        res.killed++;
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && __atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) { /* B */
        uint64_t n = s->nev <= shm.cap ? s->nev : shm.cap;
        if (vm_prof_needs & PROF_NEED_COST) rebase_icounts(s->ev, n);
        vm_prof_stream_feed(shadow_stream, s->ev, (size_t)n);
        __atomic_store_n(&res.finished, res.finished + 1, __ATOMIC_RELAXED); /* read by vm_shadow_finish */
        res.covered += s->ticks;
        res.injit += s->injit;
        res.cpu_ns += s->cpu_ns;
        res.sys_ns += s->sys_ns;
        res.minflt += s->minflt;
        res.events += n;
        __atomic_store_n(&res.life_ns, res.life_ns + (now_ns() - s->started_ns), __ATOMIC_RELAXED);
        res.ends[s->why < VM_SHADOW_END_N ? s->why : VM_SHADOW_END_EFFECT]++;
        /* give the pages back: a long run would otherwise keep every slot's high-water mark */
        size_t used = ((size_t)n * 8) & ~(size_t)4095;
        if (used > (1u << 20)) madvise((void *)s->ev, used, MADV_REMOVE);
    } else {
        res.failed++;
    }
    __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE); /* pairs with free_slot's acquire */
}

static void reap(bool cut) {
    for (int i = 0; i < shm.nslots; i++) {
        ShadowSlot *s = slot_at(i);
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_RUNNING) continue;
        int st = 0;
        pid_t r = waitpid(s->pid, &st, WNOHANG);
        /* read after the state (a clock read before it may predate the slot's fork) */
        uint64_t now = now_ns();
        if (r == s->pid) {
            collect(i, s, st, false);
        } else if (r < 0 && errno != EINTR) { /* not ours any more (reaped elsewhere) */
            collect(i, s, 0, true);
        } else if (r == 0 && (cut || (now > s->started_ns && now - s->started_ns > opt.timeout_ms * 1000000u))) {
            kill(s->pid, SIGKILL); /* the watchdog: a hung or runaway shadow */
            while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR) {}
            if (cut) res.cut++, res.killed--; /* counted apart (collect counts it killed) */
            collect(i, s, st, true);
        }
    }
}

/* poll's timeout: until the earliest deadline (a live shadow's watchdog, the end's grace),
 * in ms rounded up, -1 (none) when nothing is live and the program is not ending. The pidfds
 * of the live shadows and wake_fd go into [pf]; returns their count in [*n]. */
static int next_wait(struct pollfd *pf, int *n, bool stopping) {
    uint64_t now = now_ns(), until = stopping ? end_deadline_ns : UINT64_MAX;
    int k = 0;
    pf[k++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    for (int i = 0; i < shm.nslots; i++) {
        ShadowSlot *s = slot_at(i);
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_RUNNING) continue;
        pf[k++] = (struct pollfd){.fd = pidfds[i], .events = POLLIN};
        uint64_t d = s->started_ns + opt.timeout_ms * 1000000u;
        if (d < until) until = d;
    }
    *n = k;
    if (until == UINT64_MAX) return -1;
    if (until <= now) return 0;
    uint64_t ms = (until - now + 999999) / 1000000;
    return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static void *shadow_main(void *arg) {
    (void)arg;
    if (opt.cpu >= 0) cab_topology_bind_self(opt.cpu);
    for (;;) {
        bool stopping = __atomic_load_n(&stop_thread, __ATOMIC_ACQUIRE);
        reap(stopping && now_ns() > end_deadline_ns);
        if (stopping && __atomic_load_n(&live, __ATOMIC_RELAXED) == 0) break;
        struct pollfd pf[MAX_SLOTS + 1];
        int n;
        int ms = next_wait(pf, &n, stopping);
        poll(pf, (nfds_t)n, ms); /* EINTR (a collection's signal): just an earlier round */
        uint64_t drained;
        if (pf[0].revents & POLLIN) (void)!read(wake_fd, &drained, sizeof drained);
    }
    return NULL;
}

const char *vm_shadow_start(void) {
    if (!vm_shadow_on) return NULL;
    uint64_t cap = opt.length * EVENTS_PER_TICK + MIN_EVENTS;
    if (cap > MAX_EVENTS) cap = MAX_EVENTS;
    shm.cap = cap;
    shm.slot_bytes = (sizeof(ShadowSlot) + cap * 8 + 4095) & ~(size_t)4095;
    int n = (int)opt.load;
    if ((double)n < opt.load) n++;
    shm.nslots = n < 1 ? 1 : n > MAX_SLOTS ? MAX_SLOTS : n;
    void *m = mmap(NULL, shm.slot_bytes * (size_t)shm.nslots, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return "cannot map the shadows' slots";
    shm.base = m;
    shadow_stream = vm_prof_stream_detached();
    for (int i = 0; i < MAX_SLOTS; i++) pidfds[i] = -1;
    /* Non-blocking: a wake when the counter is already set changes nothing, and the reader
     * drains it whole. Shadows inherit it and never use it. */
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0) return "cannot make the shadow thread's eventfd";
    /* Raw pthread_create (cab/ starts its analyzers the same way): the thread holds no GC
     * pointer and must not be stopped by collections. */
    if (pthread_create(&shadow_thread, NULL, shadow_main, NULL) != 0) return "cannot start the shadow thread";
    shadow_thread_on = true;
    return NULL;
}

/* The calling thread's time waiting on a run queue, in ns (/proc/thread-self/schedstat's
 * second field; kernels without schedstats have no file: UINT64_MAX). */
static uint64_t thread_runq_ns(void) {
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f) return UINT64_MAX;
    unsigned long long run, wait;
    int n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    return n == 2 ? (uint64_t)wait : UINT64_MAX;
}

void vm_shadow_finish(void) {
    if (!vm_shadow_on || vm_shadow_child) return;
    getrusage(RUSAGE_THREAD, &sched.end_ru);
    sched.end_runq_ns = thread_runq_ns();
    pthread_mutex_lock(&sched.lock);
    sched.stopping = true;
    pthread_mutex_unlock(&sched.lock);
    if (!shadow_thread_on) return;
    uint64_t t0 = now_ns();
    /* the shadow thread still runs: its two counters are read atomically (relaxed: an estimate) */
    uint64_t fin = __atomic_load_n(&res.finished, __ATOMIC_RELAXED), life = __atomic_load_n(&res.life_ns, __ATOMIC_RELAXED);
    uint64_t grace = fin ? 4 * life / fin : 0;
    if (grace < END_GRACE_MIN_NS) grace = END_GRACE_MIN_NS;
    if (fin > 0) grace = END_GRACE_SHORT_NS;
    if (grace > opt.timeout_ms * 1000000u) grace = opt.timeout_ms * 1000000u;
    end_deadline_ns = t0 + grace;
    /* the live shadows end at their next piece, with their events whole (SHADOW_PIECE) */
    for (int i = 0; i < shm.nslots; i++)
        if (__atomic_load_n(&slot_at(i)->state, __ATOMIC_ACQUIRE) == SLOT_RUNNING)
            __atomic_store_n(&slot_at(i)->stop, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&stop_thread, 1, __ATOMIC_RELEASE);
    wake_shadow_thread();
    pthread_join(shadow_thread, NULL);
    sched.end_wait_ns = now_ns() - t0;
    shadow_thread_on = false;
}

double vm_shadow_fraction(void) {
    uint64_t all = vm_sample_ticks();
    return all ? (double)res.covered / (double)all : 0.0;
}

static const char *const end_names[VM_SHADOW_END_N] = {
    "length", "full", "side effect", "input", "ffi", "program end", "idle", "unnamed function",
};

void vm_shadow_print_stats(FILE *f) {
    if (!vm_shadow_on) return;
    uint64_t all = vm_sample_ticks();
    fprintf(f, "[stats] shadow: length %llu ticks load %g slots %d: forked %llu, analysed %llu (%llu events),"
               " dropped %llu (killed by the watchdog %llu, failed %llu, cut by the program's end %llu), not forked while several native threads %llu,"
               " fork failures %llu, not forked as a carrier did not come to the gather %llu; mean life %.3f ms; the program's time in forks %.3f ms (CPU %.3f ms), waiting for the last"
               " shadows at its end %.3f ms; ticks covered %llu of %llu (coverage %.6f)\n",
            (unsigned long long)opt.length, opt.load, shm.nslots, (unsigned long long)sched.forked,
            (unsigned long long)res.finished, (unsigned long long)res.events,
            (unsigned long long)(res.killed + res.failed + res.cut), (unsigned long long)res.killed,
            (unsigned long long)res.failed, (unsigned long long)res.cut, (unsigned long long)sched.skipped_threads,
            (unsigned long long)sched.fork_failed, (unsigned long long)sched.not_gathered, res.finished ? (double)res.life_ns / 1e6 / (double)res.finished : 0.0,
            (double)sched.fork_ns / 1e6, (double)sched.fork_cpu_ns / 1e6, (double)sched.end_wait_ns / 1e6,
            (unsigned long long)res.covered, (unsigned long long)all,
            all ? (double)res.covered / (double)all : 0.0);
    fprintf(f, "[stats] shadow: the ending thread (the program's under native threads): minor page faults %ld, system time %.3f ms,"
               " user time %.3f ms, context switches %ld voluntary %ld involuntary, waiting for a core ",
            sched.end_ru.ru_minflt, (double)sched.end_ru.ru_stime.tv_sec * 1e3 + (double)sched.end_ru.ru_stime.tv_usec / 1e3,
            (double)sched.end_ru.ru_utime.tv_sec * 1e3 + (double)sched.end_ru.ru_utime.tv_usec / 1e3,
            sched.end_ru.ru_nvcsw, sched.end_ru.ru_nivcsw);
    if (sched.end_runq_ns == UINT64_MAX) fprintf(f, "unknown\n");
    else fprintf(f, "%.3f ms\n", (double)sched.end_runq_ns / 1e6);
    /* Where the shadows' windows ran (vm_sample_print_stats' line for sampled windows) */
    fprintf(f, "[stats] shadow windows: %s; window ticks in compiled code %llu, interpreted %llu;"
               " the analysed shadows' CPU time %.3f ms (%.1f ns a tick covered; system %.3f ms, minor page faults %llu)\n",
            vm_sample_jit_windows ? "compiled" : "interpreted", (unsigned long long)res.injit,
            (unsigned long long)(res.covered > res.injit ? res.covered - res.injit : 0), (double)res.cpu_ns / 1e6,
            res.covered ? (double)res.cpu_ns / (double)res.covered : 0.0, (double)res.sys_ns / 1e6,
            (unsigned long long)res.minflt);
    fprintf(f, "[stats] shadow ends:");
    for (int k = 0; k < VM_SHADOW_END_N; k++)
        fprintf(f, " %s %llu%s", end_names[k], (unsigned long long)res.ends[k], k + 1 < VM_SHADOW_END_N ? "," : "\n");
}
